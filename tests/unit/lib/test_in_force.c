// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of "which entries of a policy are in force" (user/lib/policy.h):
 * the rule, pinned for every mode and allow_model_endpoint, and what follows
 * from it (the allow set, which names are allowed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/allowset.h"
#include "lib/policy.h"

#define ERR_SIZE 256

/* Both lists hold a literal address and a name; the hosts also a wildcard. */
static const char *const hosts_text[] = {"198.18.0.1", "www.test", "*.wild.test"};
static const char *const lane_text[] = {"198.18.0.2", "lane.test:443"};
#define N_HOSTS (sizeof(hosts_text) / sizeof(hosts_text[0]))
#define N_LANE (sizeof(lane_text) / sizeof(lane_text[0]))

static struct policy_entry hosts[N_HOSTS], lane[N_LANE];
static char names[N_HOSTS + N_LANE][POLICY_NAME_SIZE];

static void entries_parse(void)
{
	char err[ERR_SIZE] = "";

	for (size_t i = 0; i < N_HOSTS; i++)
		if (policy_entry_parse(hosts_text[i], false, &hosts[i], names[i], err, sizeof(err)))
			fail_msg("%s: %s", hosts_text[i], err);
	for (size_t i = 0; i < N_LANE; i++)
		if (policy_entry_parse(lane_text[i], true, &lane[i], names[N_HOSTS + i], err,
				       sizeof(err)))
			fail_msg("%s: %s", lane_text[i], err);
}

/*
 * Built by hand, not parsed: the parser refuses allowed_hosts outside
 * allowlist mode, and the rule must hold even for a policy that has them.
 */
static struct policy policy_make(enum policy_mode mode, bool lane_open)
{
	struct policy p = {
		.mode = mode,
		.allow_loopback = true,
		.allow_model_endpoint = lane_open,
		.n_allowed_hosts = N_HOSTS,
		.allowed_hosts = hosts,
		.n_model_endpoints = N_LANE,
		.model_endpoints = lane,
	};

	return p;
}

/* The rule, written out once more as a table: what this test pins. */
static const struct {
	enum policy_mode mode;
	bool lane_open;
	bool hosts_in_force;
	bool lane_in_force;
} rule[] = {
	{POLICY_MODE_PUBLIC, false, false, false},     {POLICY_MODE_PUBLIC, true, false, false},
	{POLICY_MODE_NO_NETWORK, false, false, false}, {POLICY_MODE_NO_NETWORK, true, false, true},
	{POLICY_MODE_ALLOWLIST, false, true, false},   {POLICY_MODE_ALLOWLIST, true, true, true},
};
#define N_RULE (sizeof(rule) / sizeof(rule[0]))

static void test_lists_in_force(void **state)
{
	(void)state;
	entries_parse();
	for (size_t r = 0; r < N_RULE; r++) {
		struct policy p = policy_make(rule[r].mode, rule[r].lane_open);
		const struct policy_entry *got;
		size_t count = 99;

		print_message("mode %s, allow_model_endpoint %d\n", policy_mode_name(rule[r].mode),
			      rule[r].lane_open);
		assert_int_equal(policy_list_in_force(&p, POLICY_LIST_HOSTS),
				 rule[r].hosts_in_force);
		assert_int_equal(policy_list_in_force(&p, POLICY_LIST_LANE), rule[r].lane_in_force);
		assert_false(policy_list_in_force(&p, POLICY_LIST_COUNT));

		got = policy_in_force(&p, POLICY_LIST_HOSTS, &count);
		assert_ptr_equal(got, rule[r].hosts_in_force ? hosts : NULL);
		assert_int_equal(count, rule[r].hosts_in_force ? N_HOSTS : 0);
		count = 99;
		got = policy_in_force(&p, POLICY_LIST_LANE, &count);
		assert_ptr_equal(got, rule[r].lane_in_force ? lane : NULL);
		assert_int_equal(count, rule[r].lane_in_force ? N_LANE : 0);
	}
}

/* The allow set holds exactly the literal addresses of the lists in force. */
static void test_allowset_follows(void **state)
{
	(void)state;
	entries_parse();
	for (size_t r = 0; r < N_RULE; r++) {
		struct policy p = policy_make(rule[r].mode, rule[r].lane_open);
		struct allowset set = {0};

		assert_int_equal(allowset_from_policy(&p, &set), 0);
		assert_int_equal(set.count, rule[r].hosts_in_force + rule[r].lane_in_force);
		assert_int_equal(allowset_covers(&set, hosts[0].addr.s6_addr, 80),
				 rule[r].hosts_in_force);
		assert_int_equal(allowset_covers(&set, lane[0].addr.s6_addr, 80),
				 rule[r].lane_in_force);
		allowset_free(&set);
	}
}

/* Names: a host name with its subdomains, a wildcard's subdomains, a lane name alone. */
static void test_names_follow(void **state)
{
	(void)state;
	entries_parse();
	for (size_t r = 0; r < N_RULE; r++) {
		struct policy p = policy_make(rule[r].mode, rule[r].lane_open);
		bool h = rule[r].hosts_in_force, l = rule[r].lane_in_force;

		assert_int_equal(policy_allows_name(&p, "www.test"), h);
		assert_int_equal(policy_allows_name(&p, "a.www.test"), h);
		assert_int_equal(policy_allows_name(&p, "WWW.Test."), h);
		assert_int_equal(policy_allows_name(&p, "a.wild.test"), h);
		assert_false(policy_allows_name(&p, "wild.test"));
		assert_int_equal(policy_allows_name(&p, "lane.test"), l);
		assert_false(policy_allows_name(&p, "a.lane.test"));
		assert_false(policy_allows_name(&p, "other.test"));
		assert_false(policy_allows_name(&p, "bad_name.www.test"));
	}
}

/* Per entry: what each list's kind of entry allows, whatever the mode. */
static void test_entry_allows_name(void **state)
{
	(void)state;
	entries_parse();
	assert_true(policy_entry_allows_name(POLICY_LIST_HOSTS, &hosts[1], "www.test"));
	assert_true(policy_entry_allows_name(POLICY_LIST_HOSTS, &hosts[1], "x.www.test"));
	assert_false(policy_entry_allows_name(POLICY_LIST_HOSTS, &hosts[0], "www.test"));
	assert_true(policy_entry_allows_name(POLICY_LIST_HOSTS, &hosts[2], "x.wild.test"));
	assert_false(policy_entry_allows_name(POLICY_LIST_HOSTS, &hosts[2], "wild.test"));
	assert_true(policy_entry_allows_name(POLICY_LIST_LANE, &lane[1], "lane.test"));
	assert_false(policy_entry_allows_name(POLICY_LIST_LANE, &lane[1], "x.lane.test"));
	assert_false(policy_entry_allows_name(POLICY_LIST_LANE, &lane[0], "lane.test"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists_in_force),
		cmocka_unit_test(test_allowset_follows),
		cmocka_unit_test(test_names_follow),
		cmocka_unit_test(test_entry_allows_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
