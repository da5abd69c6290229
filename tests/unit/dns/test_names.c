// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of user/dns/names.c: TTL clamping, refresh scheduling, grace expiry,
 * reference counting, the address cap, NAT64 answers and the range filter.
 * The clock is a plain variable.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "dns/names.h"
#include "lib/allowset.h"
#include "lib/policy.h"

/* An address from text; IPv4 text gives the IPv4-mapped form. */
static struct in6_addr A(const char *text) {
	struct in6_addr addr;
	struct in_addr v4;

	memset(&addr, 0, sizeof(addr));
	if (inet_pton(AF_INET, text, &v4) == 1) {
		addr.s6_addr[10] = 0xff;
		addr.s6_addr[11] = 0xff;
		memcpy(&addr.s6_addr[12], &v4, 4);
		return addr;
	}
	if (inet_pton(AF_INET6, text, &addr) != 1)
		fail_msg("bad address in test: %s", text);
	return addr;
}

static bool
has(const struct names_entry *entry, const char *text)
{
	struct in6_addr addr = A(text);
	size_t i;

	for (i = 0; i < entry->count; i++) {
		if (memcmp(&entry->addresses[i].addr, &addr, sizeof(addr)) == 0)
			return true;
	}
	return false;
}

static bool answer1(const struct names_config *config, struct names_entry *entry, int family,
		    const char *text, uint32_t ttl, uint64_t now)
{
	struct in6_addr addr = A(text);

	return names_round_answer(config, entry, family, &addr, &ttl, 1, now);
}

static struct names_table table;
static struct names_config config;

static int setup(void **state)
{
	(void)state;
	names_config_default(&config);
	return names_table_init(&table, &config);
}

static int teardown(void **state)
{
	(void)state;
	names_table_free(&table);
	return 0;
}

static void test_defaults_and_clamp(void **state)
{
	(void)state;
	assert_int_equal(config.min_ttl, 30);
	assert_int_equal(config.max_ttl, 3600);
	assert_int_equal(config.grace, 300);
	assert_int_equal(config.retry, 10);

	assert_int_equal(names_ttl_clamp(&config, 0), 30);
	assert_int_equal(names_ttl_clamp(&config, 29), 30);
	assert_int_equal(names_ttl_clamp(&config, 30), 30);
	assert_int_equal(names_ttl_clamp(&config, 31), 31);
	assert_int_equal(names_ttl_clamp(&config, 600), 600);
	assert_int_equal(names_ttl_clamp(&config, 3600), 3600);
	assert_int_equal(names_ttl_clamp(&config, 3601), 3600);
	assert_int_equal(names_ttl_clamp(&config, UINT32_MAX), 3600);
}

static void test_new_entry_due_now(void **state)
{
	struct names_entry *e;

	(void)state;
	assert_null(names_find(&table, "example.com"));
	assert_int_equal(names_ref(&table, "example.com", &e), 0);
	assert_ptr_equal(names_find(&table, "example.com"), e);
	assert_string_equal(e->name, "example.com");
	assert_int_equal(e->users, 1);
	assert_int_equal(e->next_refresh, 0);
	assert_false(e->resolved_once);
	assert_true(names_due(e, 0));
	assert_int_equal(names_next_deadline(&table), 0);
}

static void test_success_schedules_min_ttl(void **state)
{
	struct names_entry *e;
	uint64_t now = 1000;

	(void)state;
	assert_int_equal(names_ref(&table, "example.com", &e), 0);
	names_round_begin(e, now);
	assert_int_equal(e->in_flight, 2);
	assert_int_equal(e->last_attempt, now);
	assert_false(names_due(e, now));
	assert_false(names_due(e, now + 100000));
	/* In flight: the refresh is not a deadline. */
	assert_int_equal(names_next_deadline(&table), UINT64_MAX);

	{
		struct in6_addr a[2] = {A("198.18.0.1"), A("198.18.0.2")};
		uint32_t t[2] = {300, 120};

		assert_true(names_round_answer(&config, e, AF_INET, a, t, 2, now));
	}
	names_round_query_done(&config, e, now);
	assert_int_equal(e->in_flight, 1);
	assert_false(e->resolved_once);
	assert_false(names_due(e, now + 100000));

	now += 1;
	assert_true(answer1(&config, e, AF_INET6, "2001:db8::1", 90, now));
	names_round_query_done(&config, e, now);
	assert_int_equal(e->in_flight, 0);
	assert_true(e->resolved_once);
	assert_int_equal(e->last_success, now);
	assert_int_equal(e->last_error, 0);
	assert_int_equal(e->count, 3);
	assert_int_equal(e->next_refresh, now + 90);
	assert_false(names_due(e, now + 89));
	assert_true(names_due(e, now + 90));
	assert_int_equal(names_next_deadline(&table), now + 90);

	/* A TTL below the minimum schedules at min_ttl. */
	names_round_begin(e, now);
	assert_false(answer1(&config, e, AF_INET, "198.18.0.1", 5, now));
	names_round_query_done(&config, e, now);
	names_round_query_done(&config, e, now);
	assert_int_equal(e->next_refresh, now + 30);

	/* A TTL above the maximum schedules at max_ttl. */
	names_round_begin(e, now);
	assert_false(answer1(&config, e, AF_INET, "198.18.0.1", 86400, now));
	names_round_query_done(&config, e, now);
	names_round_query_done(&config, e, now);
	assert_int_equal(e->next_refresh, now + 3600);
	assert_int_equal(e->addresses[0].ttl, 3600);
}

static void test_failure_schedules_retry(void **state)
{
	struct names_entry *e;
	uint64_t now = 50;
	char longtext[300];

	(void)state;
	assert_int_equal(names_ref(&table, "down.example", &e), 0);
	names_round_begin(e, now);
	names_round_failure(e, 11, "Timeout while contacting DNS servers", now);
	names_round_query_done(&config, e, now);
	names_round_failure(e, 11, "Timeout while contacting DNS servers", now);
	names_round_query_done(&config, e, now);
	assert_true(e->resolved_once);
	assert_true(e->round_failed);
	assert_int_equal(e->last_error, 11);
	assert_string_equal(e->last_error_text, "Timeout while contacting DNS servers");
	assert_int_equal(e->last_success, 0);
	assert_int_equal(e->next_refresh, now + 10);
	assert_false(names_due(e, now + 9));
	assert_true(names_due(e, now + 10));

	/* A long error text is cut, terminated. */
	memset(longtext, 'x', sizeof(longtext) - 1);
	longtext[sizeof(longtext) - 1] = '\0';
	names_round_failure(e, 4, longtext, now);
	assert_int_equal(strlen(e->last_error_text), sizeof(e->last_error_text) - 1);

	/* One family fails, the other answers: a success, the error is cleared. */
	now = 100;
	names_round_begin(e, now);
	assert_false(e->round_failed);
	names_round_failure(e, 11, "timeout", now);
	names_round_query_done(&config, e, now);
	assert_true(answer1(&config, e, AF_INET, "198.18.0.7", 60, now));
	names_round_query_done(&config, e, now);
	assert_int_equal(e->last_error, 0);
	assert_int_equal(e->last_success, now);
	assert_int_equal(e->next_refresh, now + 60);
}

static void test_empty_answer_schedules_retry(void **state)
{
	struct names_entry *e;
	uint64_t now = 200;

	(void)state;
	assert_int_equal(names_ref(&table, "nodata.example", &e), 0);
	names_round_begin(e, now);
	assert_false(names_round_answer(&config, e, AF_INET, NULL, NULL, 0, now));
	names_round_query_done(&config, e, now);
	assert_false(names_round_answer(&config, e, AF_INET6, NULL, NULL, 0, now));
	names_round_query_done(&config, e, now);
	assert_true(e->resolved_once);
	assert_false(e->round_failed);
	assert_int_equal(e->last_error, 0);
	assert_int_equal(e->last_success, 0);
	assert_int_equal(e->count, 0);
	assert_int_equal(e->next_refresh, now + 10);
	/* An extra done is harmless. */
	names_round_query_done(&config, e, now + 1);
	assert_int_equal(e->in_flight, 0);
	assert_int_equal(e->next_refresh, now + 10);
}

static void test_address_dropped_after_grace(void **state)
{
	struct names_entry *e;
	uint64_t t0 = 1000, now;

	(void)state;
	assert_int_equal(names_ref(&table, "example.com", &e), 0);
	names_round_begin(e, t0);
	assert_true(answer1(&config, e, AF_INET, "198.18.0.1", 60, t0));
	names_round_query_done(&config, e, t0);
	names_round_query_done(&config, e, t0);

	/* Next round: 198.18.0.2 replaces .1 in the answer. */
	now = t0 + 60;
	names_round_begin(e, now);
	assert_true(answer1(&config, e, AF_INET, "198.18.0.2", 60, now));
	names_round_query_done(&config, e, now);
	names_round_query_done(&config, e, now);
	assert_int_equal(e->count, 2);
	assert_int_equal(e->addresses[0].last_seen, t0);
	assert_int_equal(e->addresses[1].last_seen, now);

	/* .1 is kept up to last_seen + ttl + grace inclusive. */
	assert_int_equal(names_next_deadline(&table), now + 60);
	assert_false(names_expire(&table, t0 + 60 + 300));
	assert_true(has(e, "198.18.0.1"));
	assert_true(names_expire(&table, t0 + 60 + 300 + 1));
	assert_false(has(e, "198.18.0.1"));
	assert_true(has(e, "198.18.0.2"));
	assert_int_equal(e->count, 1);
	assert_false(names_expire(&table, t0 + 60 + 300 + 1));
}

static void test_outage_keeps_for_grace_only(void **state)
{
	struct names_entry *e;
	uint64_t t0 = 5000, now;

	(void)state;
	assert_int_equal(names_ref(&table, "example.com", &e), 0);
	names_round_begin(e, t0);
	{
		struct in6_addr a[2] = {A("198.18.1.1"), A("2001:db8::10")};
		uint32_t t[2] = {120, 120};

		assert_true(names_round_answer(&config, e, AF_INET, a, t, 2, t0));
	}
	names_round_query_done(&config, e, t0);
	names_round_query_done(&config, e, t0);
	assert_int_equal(e->next_refresh, t0 + 120);

	/* From now on every round fails; the retry is every 10 s. */
	for (now = t0 + 120; now <= t0 + 120 + 300; now += 10) {
		assert_true(names_due(e, now));
		names_round_begin(e, now);
		names_round_failure(e, 11, "timeout", now);
		names_round_query_done(&config, e, now);
		names_round_failure(e, 11, "timeout", now);
		names_round_query_done(&config, e, now);
		assert_int_equal(e->next_refresh, now + 10);
		assert_false(names_expire(&table, now));
		assert_int_equal(e->count, 2);
	}
	assert_int_equal(e->last_success, t0);
	assert_int_equal(names_next_deadline(&table), t0 + 120 + 300 + 1);
	assert_true(names_expire(&table, t0 + 120 + 300 + 1));
	assert_int_equal(e->count, 0);
	assert_int_equal(e->last_error, 11);
	/* Nothing left to expire: only the retry is a deadline. */
	assert_int_equal(names_next_deadline(&table), e->next_refresh);
}

static void test_shared_address_independent(void **state)
{
	struct names_entry *a, *b;
	uint64_t now = 100;

	(void)state;
	assert_int_equal(names_ref(&table, "a.example", &a), 0);
	assert_int_equal(names_ref(&table, "b.example", &b), 0);
	names_round_begin(a, now);
	names_round_begin(b, now);
	assert_true(answer1(&config, a, AF_INET, "198.18.5.5", 30, now));
	assert_true(answer1(&config, b, AF_INET, "198.18.5.5", 30, now));
	names_round_query_done(&config, a, now);
	names_round_query_done(&config, a, now);
	names_round_query_done(&config, b, now);
	names_round_query_done(&config, b, now);

	/* b sees it again later; a does not. */
	now = 200;
	names_round_begin(b, now);
	assert_false(answer1(&config, b, AF_INET, "198.18.5.5", 30, now));
	names_round_query_done(&config, b, now);
	names_round_query_done(&config, b, now);

	assert_true(names_expire(&table, 100 + 30 + 300 + 1));
	assert_false(has(a, "198.18.5.5"));
	assert_true(has(b, "198.18.5.5"));
	assert_true(names_expire(&table, 200 + 30 + 300 + 1));
	assert_false(has(b, "198.18.5.5"));
}

static void test_ref_counting(void **state)
{
	struct names_entry *e, *e2, *first, *other;
	char name[32];
	int i;

	(void)state;
	assert_int_equal(names_ref(&table, "example.com", &e), 0);
	assert_int_equal(names_ref(&table, "example.com", &e2), 0);
	assert_ptr_equal(e, e2);
	assert_int_equal(e->users, 2);
	assert_int_equal(table.count, 1);
	names_unref(&table, "example.com");
	assert_ptr_equal(names_find(&table, "example.com"), e);
	assert_int_equal(e->users, 1);
	names_unref(&table, "example.com");
	assert_null(names_find(&table, "example.com"));
	assert_int_equal(table.count, 0);
	/* Unknown names: no-op. */
	names_unref(&table, "example.com");
	names_unref(&table, "never.example");
	assert_int_equal(table.count, 0);

	/* Pointers stay valid while the table grows and shrinks. */
	assert_int_equal(names_ref(&table, "first.example", &first), 0);
	first->next_refresh = 42;
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "n%d.example", i);
		assert_int_equal(names_ref(&table, name, NULL), 0);
	}
	assert_int_equal(table.count, 1001);
	assert_ptr_equal(names_find(&table, "first.example"), first);
	assert_string_equal(first->name, "first.example");
	assert_int_equal(first->next_refresh, 42);
	other = names_find(&table, "n999.example");
	assert_non_null(other);
	for (i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "n%d.example", i);
		names_unref(&table, name);
	}
	assert_int_equal(table.count, 501);
	assert_ptr_equal(names_find(&table, "first.example"), first);
	assert_ptr_equal(names_find(&table, "n999.example"), other);
	assert_null(names_find(&table, "n0.example"));

	/* Invalid names. */
	assert_int_equal(names_ref(&table, "", NULL), -EINVAL);
	{
		char big[HOSTNAME_MAX_LENGTH + 2];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		assert_int_equal(names_ref(&table, big, NULL), -EINVAL);
	}
}

static void test_cap_truncates(void **state)
{
	struct in6_addr addrs[NAMES_MAX_ADDRESSES + 6];
	uint32_t ttls[NAMES_MAX_ADDRESSES + 6];
	struct names_entry *e;
	char text[32];
	size_t i;

	(void)state;
	for (i = 0; i < NAMES_MAX_ADDRESSES + 6; i++) {
		snprintf(text, sizeof(text), "198.18.%zu.%zu", i / 256, i % 256);
		addrs[i] = A(text);
		ttls[i] = 60;
	}
	assert_int_equal(names_ref(&table, "many.example", &e), 0);
	names_round_begin(e, 10);
	/* Exactly the cap: not truncated. */
	assert_true(names_round_answer(&config, e, AF_INET, addrs, ttls, NAMES_MAX_ADDRESSES, 10));
	assert_int_equal(e->count, NAMES_MAX_ADDRESSES);
	assert_false(e->truncated);
	/* More: the rest is dropped and reported. */
	assert_false(
		names_round_answer(&config, e, AF_INET, addrs, ttls, NAMES_MAX_ADDRESSES + 6, 10));
	assert_int_equal(e->count, NAMES_MAX_ADDRESSES);
	assert_true(e->truncated);
	assert_false(has(e, "198.18.0.64"));
	names_round_query_done(&config, e, 10);
	names_round_query_done(&config, e, 10);
	assert_int_equal(e->next_refresh, 70);

	/* Once addresses age out, the flag clears. */
	assert_true(names_expire(&table, 10 + 60 + 300 + 1));
	assert_int_equal(e->count, 0);
	assert_false(e->truncated);
}

static void test_nat64_stored_as_mapped(void **state)
{
	struct names_entry *e;

	(void)state;
	assert_int_equal(names_ref(&table, "nat64.example", &e), 0);
	names_round_begin(e, 1);
	assert_true(answer1(&config, e, AF_INET6, "64:ff9b::c612:1", 60, 1));
	assert_int_equal(e->count, 1);
	assert_true(has(e, "198.18.0.1"));
	assert_true(has(e, "::ffff:198.18.0.1"));
	assert_false(has(e, "64:ff9b::c612:1"));
	/* The A answer for the same IPv4 refreshes, does not add. */
	assert_false(answer1(&config, e, AF_INET, "198.18.0.1", 90, 2));
	assert_int_equal(e->count, 1);
	assert_int_equal(e->addresses[0].last_seen, 2);
	assert_int_equal(e->addresses[0].ttl, 90);
	/* An address outside 64:ff9b::/96 stays as it is. */
	assert_true(answer1(&config, e, AF_INET6, "64:ff9b:1::c612:1", 60, 2));
	assert_true(has(e, "64:ff9b:1::c612:1"));
}

static void test_next_deadline(void **state)
{
	struct names_entry *a, *b;

	(void)state;
	assert_int_equal(names_next_deadline(&table), UINT64_MAX);
	assert_int_equal(names_ref(&table, "a.example", &a), 0);
	assert_int_equal(names_ref(&table, "b.example", &b), 0);
	assert_int_equal(names_next_deadline(&table), 0);

	names_round_begin(a, 100);
	assert_true(answer1(&config, a, AF_INET, "198.18.0.1", 1000, 100));
	names_round_query_done(&config, a, 100);
	names_round_query_done(&config, a, 100);
	/* b still due now. */
	assert_int_equal(names_next_deadline(&table), 0);

	names_round_begin(b, 100);
	/* b in flight: a's refresh at 1100 is first. */
	assert_int_equal(names_next_deadline(&table), 1100);
	names_round_failure(b, 1, "refused", 105);
	names_round_query_done(&config, b, 105);
	names_round_query_done(&config, b, 105);
	assert_int_equal(names_next_deadline(&table), 115);

	/* An expiry before any refresh: an address with a short TTL, seen long ago. */
	a->next_refresh = 5000;
	b->next_refresh = 5000;
	a->addresses[0].last_seen = 0;
	a->addresses[0].ttl = 30;
	assert_int_equal(names_next_deadline(&table), 0 + 30 + 300 + 1);
	assert_false(names_expire(&table, 331 - 1));
	assert_true(names_expire(&table, 331));
	assert_int_equal(names_next_deadline(&table), 5000);
}

static void assert_filtered(const char *text)
{
	struct in6_addr addr = A(text);

	if (!names_address_is_filtered(&addr))
		fail_msg("%s should be filtered", text);
}

static void assert_open(const char *text)
{
	struct in6_addr addr = A(text);

	if (names_address_is_filtered(&addr))
		fail_msg("%s should not be filtered", text);
}

/* first and last of each IPv4 range, in IPv4-mapped and NAT64 form */
static const char *const private4[][2] = {
	{"0.0.0.0", "0.255.255.255"},	    {"10.0.0.0", "10.255.255.255"},
	{"100.64.0.0", "100.127.255.255"},  {"127.0.0.0", "127.255.255.255"},
	{"169.254.0.0", "169.254.255.255"}, {"172.16.0.0", "172.31.255.255"},
	{"192.168.0.0", "192.168.255.255"}, {"224.0.0.0", "239.255.255.255"},
	{"240.0.0.0", "255.255.255.255"},
};

static const char *const public4[] = {
	"1.0.0.0",     "9.255.255.255",	  "11.0.0.0",	"100.63.255.255",
	"100.128.0.0", "126.255.255.255", "128.0.0.0",	"169.253.255.255",
	"169.255.0.0", "172.15.255.255",  "172.32.0.0", "192.167.255.255",
	"192.169.0.0", "223.255.255.255", "198.18.0.1", "198.19.255.255",
	"8.8.8.8",
};

static void nat64_form(const char *v4text, char *out, size_t size)
{
	struct in_addr v4;
	const uint8_t *b = (const uint8_t *)&v4;

	assert_int_equal(inet_pton(AF_INET, v4text, &v4), 1);
	snprintf(out, size, "64:ff9b::%x:%x", b[0] << 8 | b[1], b[2] << 8 | b[3]);
}

static void test_filter_ipv4(void **state)
{
	char text[64];
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(private4) / sizeof(private4[0]); i++) {
		for (j = 0; j < 2; j++) {
			assert_filtered(private4[i][j]);
			snprintf(text, sizeof(text), "::ffff:%s", private4[i][j]);
			assert_filtered(text);
			nat64_form(private4[i][j], text, sizeof(text));
			assert_filtered(text);
		}
	}
	for (i = 0; i < sizeof(public4) / sizeof(public4[0]); i++) {
		assert_open(public4[i]);
		nat64_form(public4[i], text, sizeof(text));
		assert_open(text);
	}
	assert_filtered("64:ff9b::10.1.2.3");
	assert_filtered("64:ff9b::192.168.1.1");
	assert_open("64:ff9b::198.18.0.1");
}

static void test_filter_ipv6(void **state)
{
	(void)state;
	assert_filtered("::");
	assert_filtered("::1");
	/* ::/96 whole: IPv4-compatible addresses are deprecated and carry any IPv4. */
	assert_filtered("::2");
	assert_filtered("::169.254.169.254");
	assert_filtered("::8.8.8.8");
	assert_filtered("::ffff:ffff");
	assert_open("::1:0:0");
	assert_open("::fffe:0:0");
	assert_filtered("fc00::");
	assert_filtered("fd00::1");
	assert_filtered("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	assert_open("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	assert_open("fe00::");
	assert_filtered("fe80::");
	assert_filtered("fe80::1");
	assert_filtered("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	assert_open("fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	/* Site-local: deprecated, but a network may still route it inside. */
	assert_filtered("fec0::");
	assert_filtered("fec0::1");
	assert_filtered("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	/* Discard-only, /64 exactly. */
	assert_filtered("100::");
	assert_filtered("100::1");
	assert_filtered("100::ffff:ffff:ffff:ffff");
	assert_open("100:0:0:1::");
	assert_open("ff::1");
	assert_filtered("ff00::");
	assert_filtered("ff02::1");
	assert_filtered("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	assert_open("2001:db8::1");
	assert_open("2606:4700::1111");
}

/* 64:ff9b:1::/48, 2002::/16 and 2001::/32: judged by the IPv4 they carry. */
static void test_filter_embedded_ipv4(void **state)
{
	(void)state;
	/* Local-use NAT64: the last 32 bits, whatever /96 of the /48 carries them. */
	assert_filtered("64:ff9b:1::a9fe:a9fe");
	assert_filtered("64:ff9b:1::a00:1");
	assert_filtered("64:ff9b:1:ffff:ffff:ffff:7f00:1");
	assert_open("64:ff9b:1::c612:1");
	assert_open("64:ff9b:1:1234:5678:9abc:808:808");
	assert_open("64:ff9b:2::a9fe:a9fe"); /* not local-use NAT64: a global address */
	/* 6to4: bits 16..47, whatever the site's subnet and host bits. */
	assert_filtered("2002:a9fe:a9fe::1");
	assert_filtered("2002:a00:1::");
	assert_filtered("2002:c0a8:101:ffff:ffff:ffff:ffff:ffff");
	assert_filtered("2002:7f00:1::1");
	assert_open("2002:c612:1::1");
	assert_open("2002:808:808:a9fe::a9fe:a9fe");
	/* Teredo: the server (bits 32..63) and the client (last 32 bits, inverted). */
	assert_filtered(
		"2001:0:a9fe:a9fe::1"); /* server 169.254.169.254 (client 255.255.255.254) */
	assert_filtered("2001:0:a00:1::3dff:fefe");	/* server 10.0.0.1, client 194.0.1.1 */
	assert_filtered("2001:0:c612:1:0:0:5601:5601"); /* client 169.254.169.254 */
	assert_filtered("2001:0:c612:1::f5ff:fefe");	/* client 10.0.1.1 */
	assert_open("2001:0:c612:1::3dff:fefe");	/* server 198.18.0.1, client 194.0.1.1 */
	assert_open("2001:1::a9fe:a9fe");		/* 2001:1::/32 is not Teredo */
	assert_open("2001:db8:a9fe:a9fe::1");		/* the tests' global IPv6 */
}

/* A literal entry of the policy names what it allows: the address as learned. */
static void assert_dropped(const char *policy_text, const char *addr_text, uint16_t port,
			   bool dropped)
{
	struct in6_addr addr = A(addr_text);
	struct policy policy;
	struct allowset literals = {0};
	char err[256] = "";

	if (policy_parse(policy_text, strlen(policy_text), &policy, err, sizeof(err)))
		fail_msg("%s: %s", policy_text, err);
	assert_int_equal(allowset_from_policy(&policy, &literals), 0);
	if (names_address_is_dropped(&addr, &literals, port) != dropped)
		fail_msg("%s (port %u) under %s: expected %s", addr_text, port, policy_text,
			 dropped ? "dropped" : "kept");
	allowset_free(&literals);
	policy_free(&policy);
}

#define HOSTS(list) "{\"network_mode\": \"allowlist\", \"allowed_hosts\": [" list "]}"

static void test_filter_literal_allows(void **state)
{
	static const char *const spellings[] = {
		"64:ff9b:1::a9fe:a9fe", "2002:a9fe:a9fe::1", "2001:0:a9fe:a9fe::1",
		"::169.254.169.254",	"fec0::1",	     "100::1",
	};
	char policy[256];

	(void)state;
	for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
		const char *a = spellings[i];

		assert_dropped(HOSTS("\"*.tun.test\""), a, 0, true);
		assert_dropped(HOSTS("\"*.tun.test\""), a, 443, true);
		snprintf(policy, sizeof(policy), HOSTS("\"*.tun.test\", \"%s\""), a);
		assert_dropped(policy, a, 0, false);
		assert_dropped(policy, a, 443, false);
		snprintf(policy, sizeof(policy), HOSTS("\"*.tun.test\", \"[%s]:443\""), a);
		assert_dropped(policy, a, 443, false);
		assert_dropped(policy, a, 80, true);
	}
	/* CIDRs covering them. */
	assert_dropped(HOSTS("\"64:ff9b:1::/48\""), "64:ff9b:1::a9fe:a9fe", 0, false);
	assert_dropped(HOSTS("\"2002:a9fe::/32\""), "2002:a9fe:a9fe::1", 0, false);
	assert_dropped(HOSTS("\"2001::/32\""), "2001:0:a9fe:a9fe::1", 0, false);
	assert_dropped(HOSTS("\"::/96\""), "::169.254.169.254", 0, false);
	assert_dropped(HOSTS("\"fec0::/10\""), "fec0::1", 0, false);
	assert_dropped(HOSTS("\"100::/64\""), "100::1", 0, false);
	/* A CIDR beside the address does not cover it. */
	assert_dropped(HOSTS("\"2002:a9fe:a9ff::/48\""), "2002:a9fe:a9fe::1", 0, true);
	/*
	 * The IPv4 literal allows 169.254.169.254 itself, not a tunnel address
	 * that carries it: the kernel judges that destination as IPv6.
	 */
	assert_dropped(HOSTS("\"169.254.169.254\""), "2002:a9fe:a9fe::1", 0, true);
	assert_dropped(HOSTS("\"169.254.169.254\""), "::ffff:169.254.169.254", 0, false);
	/* Unfiltered addresses are never dropped, with or without literals. */
	assert_dropped(HOSTS("\"*.tun.test\""), "2001:db8::2", 0, false);
	assert_dropped(HOSTS("\"*.tun.test\""), "2002:c612:1::1", 0, false);
}

/*
 * Loopback opens to exact literals only (the kernel looks it up in the exact
 * map alone): a CIDR that covers 127.0.0.1 lets no name's answer in.
 */
static void test_filter_loopback_exact_only(void **state)
{
	(void)state;
	assert_dropped(HOSTS("\"0.0.0.0/0\""), "::ffff:127.0.0.1", 0, true);
	assert_dropped(HOSTS("\"0.0.0.0/0\""), "::ffff:127.0.0.1", 4000, true);
	assert_dropped(HOSTS("\"127.0.0.0/8\""), "::ffff:127.0.0.1", 4000, true);
	assert_dropped(HOSTS("\"::/0\""), "::1", 4000, true);
	assert_dropped(HOSTS("\"::/0\""), "::", 4000, true);
	assert_dropped(HOSTS("\"0.0.0.0/0\""), "::ffff:0.0.0.0", 4000, true);
	assert_dropped(HOSTS("\"127.0.0.1:4000\""), "::ffff:127.0.0.1", 4000, false);
	assert_dropped(HOSTS("\"127.0.0.1:4000\""), "::ffff:127.0.0.1", 5000, true);
	assert_dropped(HOSTS("\"127.0.0.1:4000\""), "::ffff:127.0.0.1", 0, true);
	assert_dropped(HOSTS("\"127.0.0.1\""), "::ffff:127.0.0.1", 5000, false);
	assert_dropped(HOSTS("\"127.0.0.1\""), "::ffff:127.0.0.2", 5000, true);
	assert_dropped(HOSTS("\"[::1]:4000\""), "::1", 4000, false);
	/* Other filtered ranges keep their CIDR exception. */
	assert_dropped(HOSTS("\"0.0.0.0/0\""), "::ffff:10.0.0.1", 4000, false);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_defaults_and_clamp),
		T(test_new_entry_due_now),
		T(test_success_schedules_min_ttl),
		T(test_failure_schedules_retry),
		T(test_empty_answer_schedules_retry),
		T(test_address_dropped_after_grace),
		T(test_outage_keeps_for_grace_only),
		T(test_shared_address_independent),
		T(test_ref_counting),
		T(test_cap_truncates),
		T(test_nat64_stored_as_mapped),
		T(test_next_deadline),
		T(test_filter_ipv4),
		T(test_filter_ipv6),
		T(test_filter_embedded_ipv4),
		T(test_filter_loopback_exact_only),
		T(test_filter_literal_allows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
