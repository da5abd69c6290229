/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the policy unit tests share (test_policy*.c): parse a policy text,
 * require it accepted or rejected with a message (and *out untouched, one
 * line), and its canonical JSON. One copy, so that every policy test judges
 * an error the same way.
 */
#ifndef BFBPF_TEST_POLICY_FIXTURE_H
#define BFBPF_TEST_POLICY_FIXTURE_H

#include <errno.h>
#include <string.h>

#include "lib/policy.h"

#define FIXTURE_ERR_SIZE 1024

static inline int fixture_parse(const char *json, struct policy *p, char *err)
{
	return policy_parse(json, strlen(json), p, err, FIXTURE_ERR_SIZE);
}

static inline void fixture_parse_ok(const char *json, struct policy *p)
{
	char err[FIXTURE_ERR_SIZE] = "";

	if (fixture_parse(json, p, err))
		fail_msg("policy %s rejected: %s", json, err);
}

/* Rejected with -EINVAL, a one-line message holding `message`, *p untouched. */
static inline void fixture_assert_rejected(const char *json, const char *message)
{
	struct policy p;
	char err[FIXTURE_ERR_SIZE] = "";

	memset(&p, 0x5a, sizeof(p));
	assert_int_equal(fixture_parse(json, &p, err), -EINVAL);
	if (!strstr(err, message))
		fail_msg("policy %s: error \"%s\" lacks \"%s\"", json, err, message);
	assert_null(strchr(err, '\n'));
	assert_int_equal(((unsigned char *)&p)[0], 0x5a);
	assert_int_equal(((unsigned char *)&p)[sizeof(p) - 1], 0x5a);
}

/* policy_to_json, compact with sorted keys; the caller frees it. */
static inline char *fixture_canonical(const struct policy *p)
{
	json_t *o = policy_to_json(p);
	char *text;

	assert_non_null(o);
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	assert_non_null(text);
	return text;
}

#endif /* BFBPF_TEST_POLICY_FIXTURE_H */
