// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Allow sets: building from a policy, normalising, diffing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "lib/allowset.h"

static struct allowset_entry entry_of(const char *address, uint8_t prefix_len, uint16_t port)
{
	struct allowset_entry entry = {.prefix_len = prefix_len, .port = port};
	struct in_addr v4;

	if (inet_pton(AF_INET, address, &v4) == 1) {
		entry.addr[10] = 0xff;
		entry.addr[11] = 0xff;
		memcpy(&entry.addr[12], &v4, 4);
	} else {
		assert_int_equal(inet_pton(AF_INET6, address, entry.addr), 1);
	}
	return entry;
}

static void add(struct allowset *set, const char *address, uint8_t prefix_len, uint16_t port)
{
	struct allowset_entry entry = entry_of(address, prefix_len, port);

	assert_int_equal(allowset_add(set, &entry), 0);
}

static void test_normalize_sorts_and_deduplicates(void **state)
{
	struct allowset set = {0};
	struct allowset_entry probe;

	(void)state;
	add(&set, "198.18.0.2", 128, 0);
	add(&set, "198.18.0.1", 128, 443);
	add(&set, "198.18.0.2", 128, 0);
	add(&set, "198.18.0.1", 128, 80);
	add(&set, "fd00::1", 128, 0);
	allowset_normalize(&set);
	assert_int_equal(set.count, 4);
	for (size_t i = 1; i < set.count; i++)
		assert_true(allowset_entry_compare(&set.entries[i - 1], &set.entries[i]) < 0);
	probe = entry_of("198.18.0.1", 128, 80);
	assert_true(allowset_contains(&set, &probe));
	probe = entry_of("198.18.0.1", 128, 22);
	assert_false(allowset_contains(&set, &probe));
	allowset_free(&set);
	assert_int_equal(set.count, 0);
	assert_null(set.entries);
}

/* A sorted set is left as it is; a sorted one with a duplicate is still deduplicated. */
static void test_normalize_sorted_input(void **state)
{
	struct allowset set = {0};

	(void)state;
	add(&set, "198.18.0.1", 128, 0);
	add(&set, "198.18.0.1", 128, 443);
	add(&set, "198.18.0.2", 128, 0);
	allowset_normalize(&set);
	assert_int_equal(set.count, 3);
	add(&set, "198.18.0.2", 128, 0);
	allowset_normalize(&set);
	assert_int_equal(set.count, 3);
	add(&set, "198.18.0.0", 120, 0); /* out of order at the end */
	allowset_normalize(&set);
	assert_int_equal(set.count, 4);
	for (size_t i = 1; i < set.count; i++)
		assert_true(allowset_entry_compare(&set.entries[i - 1], &set.entries[i]) < 0);
	allowset_free(&set);
}

static void test_copy_and_trim(void **state)
{
	struct allowset set = {0}, copy;

	(void)state;
	assert_int_equal(allowset_copy(&set, &copy), 0);
	assert_int_equal(copy.count, 0);
	assert_null(copy.entries);
	for (int i = 0; i < 17; i++) {
		char address[32];

		snprintf(address, sizeof(address), "198.18.0.%d", i);
		add(&set, address, 128, 0);
	}
	assert_true(set.capacity > set.count);
	assert_int_equal(allowset_copy(&set, &copy), 0);
	assert_int_equal(copy.count, 17);
	assert_int_equal(copy.capacity, 17);
	assert_true(allowset_equal(&set, &copy));
	allowset_trim(&set);
	assert_int_equal(set.capacity, 17);
	assert_true(allowset_equal(&set, &copy));
	add(&set, "198.18.1.1", 128, 0); /* grows again after a trim */
	assert_int_equal(set.count, 18);
	set.count = 0;
	allowset_trim(&set);
	assert_null(set.entries);
	assert_int_equal(set.capacity, 0);
	allowset_free(&copy);
}

static void test_diff(void **state)
{
	struct allowset prev = {0}, next = {0}, added = {0}, removed = {0};
	struct allowset_entry expect;

	(void)state;
	add(&prev, "198.18.0.1", 128, 0);
	add(&prev, "198.18.0.0", 120, 0);
	add(&prev, "fd00::", 112, 443);
	add(&next, "198.18.0.1", 128, 0);
	add(&next, "198.18.1.0", 120, 0);
	add(&next, "fd00::", 112, 8443);
	allowset_normalize(&prev);
	allowset_normalize(&next);
	assert_int_equal(allowset_diff(&prev, &next, &added, &removed), 0);
	assert_int_equal(added.count, 2);
	assert_int_equal(removed.count, 2);
	expect = entry_of("198.18.1.0", 120, 0);
	assert_true(allowset_contains(&added, &expect));
	expect = entry_of("fd00::", 112, 8443);
	assert_true(allowset_contains(&added, &expect));
	expect = entry_of("198.18.0.0", 120, 0);
	assert_true(allowset_contains(&removed, &expect));
	expect = entry_of("198.18.0.1", 128, 0);
	assert_false(allowset_contains(&added, &expect));
	assert_false(allowset_contains(&removed, &expect));
	allowset_free(&prev);
	allowset_free(&next);
	allowset_free(&added);
	allowset_free(&removed);
}

static void test_diff_empty_sides(void **state)
{
	struct allowset empty = {0}, full = {0}, added = {0}, removed = {0};

	(void)state;
	add(&full, "198.18.0.1", 128, 0);
	add(&full, "198.18.0.2", 128, 0);
	allowset_normalize(&full);
	assert_int_equal(allowset_diff(&empty, &full, &added, &removed), 0);
	assert_int_equal(added.count, 2);
	assert_int_equal(removed.count, 0);
	allowset_free(&added);
	allowset_free(&removed);
	assert_int_equal(allowset_diff(&full, &empty, &added, &removed), 0);
	assert_int_equal(added.count, 0);
	assert_int_equal(removed.count, 2);
	allowset_free(&added);
	allowset_free(&removed);
	allowset_free(&full);
}

static struct allowset set_of_policy(const char *json)
{
	struct allowset set = {0};
	struct policy policy;
	char err[256];

	assert_int_equal(policy_parse(json, strlen(json), &policy, err, sizeof(err)), 0);
	assert_int_equal(allowset_from_policy(&policy, &set), 0);
	policy_free(&policy);
	return set;
}

static void test_from_policy_allowlist(void **state)
{
	struct allowset set = set_of_policy(
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"198.18.0.0/24\","
		"\"[fd00::1]:443\",\"pypi.org\",\"198.18.0.7:80\"],"
		"\"model_endpoints\":[\"198.18.9.9:4000\",\"api.example.com:443\"]}");
	struct allowset_entry expect;

	(void)state;
	/* The name contributes nothing here; the model endpoint's address does. */
	assert_int_equal(set.count, 4);
	expect = entry_of("198.18.0.0", 120, 0);
	assert_true(allowset_contains(&set, &expect));
	expect = entry_of("fd00::1", 128, 443);
	assert_true(allowset_contains(&set, &expect));
	expect = entry_of("198.18.0.7", 128, 80);
	assert_true(allowset_contains(&set, &expect));
	expect = entry_of("198.18.9.9", 128, 4000);
	assert_true(allowset_contains(&set, &expect));
	allowset_free(&set);
}

static void test_from_policy_lane_closed_and_modes(void **state)
{
	struct allowset set;

	(void)state;
	set = set_of_policy("{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"198.18.0.1\"],"
			    "\"allow_model_endpoint\":false,"
			    "\"model_endpoints\":[\"198.18.9.9:4000\"]}");
	assert_int_equal(set.count, 1);
	allowset_free(&set);
	set = set_of_policy("{\"network_mode\":\"no-network\","
			    "\"model_endpoints\":[\"198.18.9.9:4000\"]}");
	assert_int_equal(set.count, 1);
	assert_int_equal(set.entries[0].port, 4000);
	allowset_free(&set);
	set = set_of_policy("{\"network_mode\":\"public\"}");
	assert_int_equal(set.count, 0);
	allowset_free(&set);
}

static void test_has_address(void **state)
{
	struct allowset set = {0};
	struct allowset_entry probe;

	(void)state;
	add(&set, "198.18.0.0", 120, 0);
	add(&set, "198.18.0.7", 128, 443);
	add(&set, "198.18.0.8", 128, 0);
	add(&set, "fd00::1", 128, 53);
	allowset_normalize(&set);
	probe = entry_of("198.18.0.7", 128, 0);
	assert_true(allowset_has_address(&set, probe.addr)); /* port-specific counts */
	probe = entry_of("198.18.0.8", 128, 0);
	assert_true(allowset_has_address(&set, probe.addr));
	probe = entry_of("fd00::1", 128, 0);
	assert_true(allowset_has_address(&set, probe.addr));
	probe = entry_of("198.18.0.9", 128, 0);
	assert_false(allowset_has_address(&set, probe.addr)); /* inside a prefix: not exact */
	probe = entry_of("198.18.0.0", 128, 0);
	assert_false(allowset_has_address(&set, probe.addr));
	allowset_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalize_sorts_and_deduplicates),
		cmocka_unit_test(test_normalize_sorted_input),
		cmocka_unit_test(test_copy_and_trim),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_diff_empty_sides),
		cmocka_unit_test(test_from_policy_allowlist),
		cmocka_unit_test(test_from_policy_lane_closed_and_modes),
		cmocka_unit_test(test_has_address),
	};

	return cmocka_run_group_tests_name("allowset", tests, NULL, NULL);
}
