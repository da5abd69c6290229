// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of resolver_policy_unanswered (user/dns/resolver.c), what
 * bfbpf run refuses to start on: a name of the policy that no upstream
 * answered. The name table is filled by hand, as rounds would end; the
 * resolver's one server (127.0.0.1:1) is never asked (no event is handled).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ares.h>
#include <arpa/inet.h>

#include "dns/resolver.h"
#include "lib/policy.h"

struct harness {
	struct resolver *resolver;
	struct policy policy;
};

static int setup(void **state)
{
	struct resolver_options options = {.servers = {"127.0.0.1:1"}, .server_count = 1};
	const char *json = "{\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"a.example\", "
			   "\"*.wild.example\", \"198.51.100.0/24\"], \"model_endpoints\": "
			   "[\"lane.example:443\"]}";
	struct harness *h = calloc(1, sizeof(*h));
	char err[256];

	assert_non_null(h);
	names_config_default(&options.names);
	assert_int_equal(resolver_open(&options, -1, &h->resolver), 0);
	if (policy_parse(json, strlen(json), &h->policy, err, sizeof(err)))
		fail_msg("policy: %s", err);
	assert_int_equal(resolver_policy_ref(h->resolver, &h->policy), 0);
	*state = h;
	return 0;
}

static int teardown(void **state)
{
	struct harness *h = *state;

	policy_free(&h->policy);
	resolver_close(h->resolver);
	free(h);
	return 0;
}

/* A round that ended: count addresses (192.0.2.1...), error the last failure (0: none). */
static void round_end(struct harness *h, const char *name, size_t count, int error)
{
	struct names_entry *entry = names_find(resolver_names(h->resolver), name);

	assert_non_null(entry);
	entry->in_flight = 0;
	entry->resolved_once = true;
	entry->count = count;
	for (size_t i = 0; i < count; i++) {
		memset(&entry->addresses[i].addr, 0, sizeof(entry->addresses[i].addr));
		entry->addresses[i].addr.s6_addr[10] = 0xff;
		entry->addresses[i].addr.s6_addr[11] = 0xff;
		entry->addresses[i].addr.s6_addr[12] = 192;
		entry->addresses[i].addr.s6_addr[15] = (uint8_t)(i + 1);
	}
	entry->last_error = error;
	snprintf(entry->last_error_text, sizeof(entry->last_error_text), "%s",
		 error ? ares_strerror(error) : "");
}

static void test_not_yet_answered(void **state)
{
	struct harness *h = *state;
	const char *why = NULL, *name;

	round_end(h, "a.example", 1, 0);
	name = resolver_policy_unanswered(h->resolver, &h->policy, &why);
	assert_non_null(name);
	assert_string_equal(name, "lane.example"); /* its round is not over */
	assert_string_equal(why, "no answer in time");
}

static void test_all_answered(void **state)
{
	struct harness *h = *state;
	const char *why = NULL;

	round_end(h, "a.example", 2, 0);
	round_end(h, "lane.example", 1, 0);
	/* The wildcard is never resolved at start, the literal needs nothing: neither counts. */
	assert_null(resolver_policy_unanswered(h->resolver, &h->policy, &why));
}

static void test_failure_without_address(void **state)
{
	struct harness *h = *state;
	const char *why = NULL, *name;

	round_end(h, "a.example", 0, ARES_ECONNREFUSED);
	round_end(h, "lane.example", 1, 0);
	name = resolver_policy_unanswered(h->resolver, &h->policy, &why);
	assert_non_null(name);
	assert_string_equal(name, "a.example");
	assert_string_equal(why, ares_strerror(ARES_ECONNREFUSED));
}

static void test_nxdomain_is_an_answer(void **state)
{
	struct harness *h = *state;
	const char *why = NULL;

	round_end(h, "a.example", 0, ARES_ENOTFOUND);
	round_end(h, "lane.example", 1, 0);
	assert_null(resolver_policy_unanswered(h->resolver, &h->policy, &why));
}

static void test_failure_with_an_address(void **state)
{
	struct harness *h = *state;
	const char *why = NULL;

	/* One family answered, the other failed: the name has an address, it answered. */
	round_end(h, "a.example", 1, ARES_ETIMEOUT);
	round_end(h, "lane.example", 1, 0);
	assert_null(resolver_policy_unanswered(h->resolver, &h->policy, &why));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_not_yet_answered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_all_answered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_without_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nxdomain_is_an_answer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_with_an_address, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
