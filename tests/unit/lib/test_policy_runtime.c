// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the runtime_network policy field (docs/policy.md
 * "runtime_network"): a boolean, false unless given, only in allowlist mode,
 * shown by policy_to_json when true, and part of the digest (an update that
 * only turns it on is a change).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/policy.h"
#include "policy_fixture.h"

#define ERR_SIZE FIXTURE_ERR_SIZE

static void test_runtime_default_false(void **state)
{
	struct policy p;
	char err[ERR_SIZE];
	json_t *o;

	(void)state;
	assert_int_equal(fixture_parse("{\"network_mode\":\"allowlist\"}", &p, err), 0);
	assert_false(p.runtime_network);
	o = policy_to_json(&p);
	assert_null(json_object_get(o, "runtime_network"));
	json_decref(o);
	policy_free(&p);
}

static void test_runtime_true(void **state)
{
	struct policy p, off;
	char err[ERR_SIZE];
	json_t *o;

	(void)state;
	assert_int_equal(
		fixture_parse("{\"network_mode\":\"allowlist\",\"runtime_network\":true}", &p, err),
		0);
	assert_true(p.runtime_network);
	o = policy_to_json(&p);
	assert_true(json_is_true(json_object_get(o, "runtime_network")));
	json_decref(o);
	assert_int_equal(fixture_parse("{\"network_mode\":\"allowlist\",\"runtime_network\":false}",
				       &off, err),
			 0);
	assert_false(off.runtime_network);
	assert_int_not_equal(policy_digest(&p), policy_digest(&off));
	policy_free(&p);
	policy_free(&off);
}

static void test_runtime_rejected(void **state)
{
	static const char *const bad[][2] = {
		{"{\"network_mode\":\"allowlist\",\"runtime_network\":\"yes\"}",
		 "runtime_network must be true or false"},
		{"{\"network_mode\":\"allowlist\",\"runtime_network\":1}",
		 "runtime_network must be true or false"},
		{"{\"network_mode\":\"allowlist\",\"runtime_network\":null}",
		 "runtime_network must be true or false"},
		{"{\"network_mode\":\"no-network\",\"runtime_network\":true}",
		 "runtime_network has no effect in no-network mode"},
		{"{\"network_mode\":\"public\",\"runtime_network\":true}",
		 "runtime_network has no effect in public mode"},
		{"{\"network_mode\":\"allowlist\",\"runtime_networks\":true}", "unknown key"},
	};
	struct policy p;
	char err[ERR_SIZE];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_not_equal(fixture_parse(bad[i][0], &p, err), 0);
		if (!strstr(err, bad[i][1]))
			fail_msg("%s: error \"%s\" lacks \"%s\"", bad[i][0], err, bad[i][1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runtime_default_false),
		cmocka_unit_test(test_runtime_true),
		cmocka_unit_test(test_runtime_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
