// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the policy parser (untrusted input: task files, the
 * control socket). Besides "no crash, no leak" it checks the invariants the
 * daemon relies on: an error is one NUL-terminated line, and the canonical
 * JSON of an accepted policy parses back to the same policy (same digest).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/policy.h"

#define FUZZ_ERR_SIZE 256

static void fuzz_check_err(const char *err)
{
	if (strnlen(err, FUZZ_ERR_SIZE) == FUZZ_ERR_SIZE || strchr(err, '\n') || !err[0])
		abort();
}

static void fuzz_round_trip(const struct policy *policy)
{
	char err[FUZZ_ERR_SIZE] = "";
	struct policy again;
	json_t *canonical = policy_to_json(policy);
	char *text;

	if (!canonical)
		abort();
	text = json_dumps(canonical, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(canonical);
	if (!text)
		abort();
	if (policy_parse(text, strlen(text), &again, err, sizeof(err)) != 0)
		abort();
	if (policy_digest(&again) != policy_digest(policy))
		abort();
	policy_free(&again);
	free(text);
}

/* The input as one entry: its canonical text must parse to the same entry. */
static void fuzz_entry(const uint8_t *data, size_t size, bool model_endpoint)
{
	char text[POLICY_MAX_ENTRY_LENGTH + 2], buf[POLICY_ENTRY_TEXT_MAX];
	char err[FUZZ_ERR_SIZE] = "", name[POLICY_NAME_SIZE], name_again[POLICY_NAME_SIZE];
	struct policy_entry e, again;

	if (size >= sizeof(text))
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	if (policy_entry_parse(text, model_endpoint, &e, name, err, sizeof(err)) != 0) {
		fuzz_check_err(err);
		return;
	}
	if (policy_entry_format(&e, buf, sizeof(buf)) != 0)
		abort();
	if (policy_entry_parse(buf, model_endpoint, &again, name_again, err, sizeof(err)) != 0 ||
	    e.kind != again.kind || strcmp(e.name, again.name) != 0 || e.port != again.port ||
	    e.prefix_len != again.prefix_len || memcmp(&e.addr, &again.addr, sizeof(e.addr)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[FUZZ_ERR_SIZE] = "";
	struct policy policy;

	if (policy_parse((const char *)data, size, &policy, err, sizeof(err)) == 0) {
		fuzz_round_trip(&policy);
		policy_free(&policy);
	} else {
		fuzz_check_err(err);
	}
	fuzz_entry(data, size, false);
	fuzz_entry(data, size, true);
	return 0;
}
