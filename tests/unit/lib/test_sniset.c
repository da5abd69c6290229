// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of SNI sets (user/lib/sniset.c): which destinations a policy's
 * names make name-derived on which judged ports, the names (and kinds) that
 * may go there, and the hash the kernel computes for the same names.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <cmocka.h>

#include "bfbpf.h"
#include "lib/sniset.h"

static struct in6_addr mapped(const char *ip4)
{
	struct in6_addr a = {0};

	a.s6_addr[10] = a.s6_addr[11] = 0xff;
	assert_int_equal(inet_pton(AF_INET, ip4, &a.s6_addr[12]), 1);
	return a;
}

static void parse(const char *json, struct policy *p)
{
	char err[256] = "";

	if (policy_parse(json, strlen(json), p, err, sizeof(err)))
		fail_msg("%s: %s", json, err);
}

static const struct sniset_name *find_name(const struct sniset *set, const char *name,
					   const struct in6_addr *addr, uint16_t port)
{
	uint64_t h = sniset_name_rhash(name);
	static const uint8_t zero[16];

	for (size_t i = 0; i < set->n_names; i++)
		if (set->names[i].rhash == h && set->names[i].port == port &&
		    !memcmp(set->names[i].addr, addr ? addr->s6_addr : zero, 16))
			return &set->names[i];
	return NULL;
}

/* The reversed FNV-1a of "test": the kernel's bfbpf_name_suffixes meets it first. */
static void test_sniset_rhash(void **state)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *reversed = "tset";

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		h ^= (uint8_t)reversed[i];
		h *= 0x100000001b3ULL;
	}
	assert_true(sniset_name_rhash("test") == h);
	assert_true(sniset_name_rhash("allowed.test") != sniset_name_rhash("evil.test"));
}

static void test_sniset_name_derived(void **state)
{
	struct policy p;
	struct sniset set = {0};
	struct allowset literals = {0};
	struct in6_addr a = mapped("198.18.0.2"), b = mapped("198.18.0.3");
	struct in6_addr both[2] = {a, b};
	const struct sniset_name *n;

	(void)state;
	parse("{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"allowed.test\","
	      "\"198.18.0.3:443\"]}",
	      &p);
	assert_int_equal(allowset_from_policy(&p, &literals), 0);
	assert_int_equal(sniset_add_name(&set, &p, "allowed.test",
					 BFBPF_SNI_NAME_SELF | BFBPF_SNI_NAME_SUBDOMAINS, 0, both,
					 2, &literals),
			 0);
	sniset_normalize(&set);
	/* a: name-derived on 443 (TLS) and 80 (HTTP); b: a literal covers 443, not 80. */
	assert_int_equal(sniset_bound_kind(&set, a.s6_addr, 443), BFBPF_SNI_BOUND_TLS);
	assert_int_equal(sniset_bound_kind(&set, a.s6_addr, 80), BFBPF_SNI_BOUND_HTTP);
	assert_int_equal(sniset_bound_kind(&set, b.s6_addr, 443), 0);
	assert_int_equal(sniset_bound_kind(&set, b.s6_addr, 80), BFBPF_SNI_BOUND_HTTP);
	assert_int_equal(sniset_bound_kind(&set, a.s6_addr, 8443), 0);
	n = find_name(&set, "allowed.test", &a, 443);
	assert_non_null(n);
	assert_int_equal(n->kinds, BFBPF_SNI_NAME_SELF | BFBPF_SNI_NAME_SUBDOMAINS);
	assert_null(find_name(&set, "allowed.test", &b, 443));
	/* The marker: an entry names it, whatever the address. */
	assert_non_null(find_name(&set, "allowed.test", NULL, 0));
	sniset_free(&set);
	allowset_free(&literals);
	policy_free(&p);
}

static void test_sniset_ports_and_kinds(void **state)
{
	struct policy p;
	struct sniset set = {0};
	struct in6_addr a = mapped("198.18.0.2");

	(void)state;
	parse("{\"network_mode\":\"allowlist\",\"tls_ports\":[443,8443],\"http_ports\":[]}", &p);
	/* An entry for port 8443 only: judged there only. */
	assert_int_equal(
		sniset_add_name(&set, &p, "a.test", BFBPF_SNI_NAME_SELF, 8443, &a, 1, NULL), 0);
	/* Two entries for one name: their kinds merge. */
	assert_int_equal(
		sniset_add_name(&set, &p, "a.test", BFBPF_SNI_NAME_SUBDOMAINS, 0, &a, 1, NULL), 0);
	sniset_normalize(&set);
	assert_int_equal(sniset_bound_kind(&set, a.s6_addr, 8443), BFBPF_SNI_BOUND_TLS);
	assert_int_equal(sniset_bound_kind(&set, a.s6_addr, 443), BFBPF_SNI_BOUND_TLS);
	assert_int_equal(sniset_bound_kind(&set, a.s6_addr, 80), 0); /* http_ports [] */
	assert_int_equal(find_name(&set, "a.test", &a, 8443)->kinds,
			 BFBPF_SNI_NAME_SELF | BFBPF_SNI_NAME_SUBDOMAINS);
	assert_int_equal(find_name(&set, "a.test", &a, 443)->kinds, BFBPF_SNI_NAME_SUBDOMAINS);
	sniset_free(&set);
	policy_free(&p);
	/* The rule off: nothing at all. */
	parse("{\"network_mode\":\"allowlist\",\"sni\":\"off\"}", &p);
	assert_int_equal(sniset_add_name(&set, &p, "a.test", BFBPF_SNI_NAME_SELF, 0, &a, 1, NULL),
			 0);
	assert_int_equal(set.n_bound + set.n_names, 0);
	policy_free(&p);
}

/* The value names the key's name as the kernel reads names: lower case, no trailing dot. */
static void test_sniset_name_text(void **state)
{
	struct policy p;
	struct sniset set = {0};
	struct in6_addr a = mapped("198.18.0.2");
	const struct sniset_name *n;

	(void)state;
	parse("{\"network_mode\":\"allowlist\"}", &p);
	assert_int_equal(
		sniset_add_name(&set, &p, "Wild.Test.", BFBPF_SNI_NAME_SUBDOMAINS, 0, &a, 1, NULL),
		0);
	assert_int_equal(
		sniset_add_name(&set, &p, "b.wild.test", BFBPF_SNI_NAME_SELF, 0, &a, 1, NULL), 0);
	sniset_normalize(&set);
	n = find_name(&set, "wild.test", &a, 443);
	assert_non_null(n);
	assert_string_equal(sniset_name_text(&set, n), "wild.test");
	assert_string_equal(sniset_name_text(&set, find_name(&set, "wild.test", NULL, 0)),
			    "wild.test");
	assert_string_equal(sniset_name_text(&set, find_name(&set, "b.wild.test", &a, 80)),
			    "b.wild.test");
	assert_int_equal(sniset_add_name(&set, &p, ".", BFBPF_SNI_NAME_SELF, 0, &a, 1, NULL),
			 -EINVAL);
	sniset_free(&set);
	policy_free(&p);
}

/* names added to a fresh set, in this order; its digest. */
static uint64_t digest_of(const struct policy *p, const char *const *names, size_t n,
			  const struct in6_addr *addrs, size_t n_addrs)
{
	struct sniset set = {0};
	uint64_t digest;

	for (size_t i = 0; i < n; i++)
		assert_int_equal(sniset_add_name(&set, p, names[i], BFBPF_SNI_NAME_SELF, 0, addrs,
						 n_addrs, NULL),
				 0);
	sniset_normalize(&set);
	digest = sniset_digest(&set);
	sniset_free(&set);
	return digest;
}

/*
 * The digest a refresh compares: the same keys in any order give the same
 * digest; a key more (a learned name on an address already there), or another
 * address, another.
 */
static void test_sniset_digest(void **state)
{
	static const char *const ab[] = {"a.wild.test", "b.wild.test"};
	static const char *const ba[] = {"b.wild.test", "a.wild.test"};
	struct in6_addr a = mapped("198.18.0.2"), b = mapped("198.18.0.3");
	struct in6_addr both[2] = {a, b}, reversed[2] = {b, a};
	struct policy p;
	struct sniset set = {0};
	uint64_t one, two;

	(void)state;
	parse("{\"network_mode\":\"allowlist\"}", &p);
	assert_true(sniset_digest(&set) == 0); /* empty: what a sandbox starts with */
	one = digest_of(&p, ab, 1, &a, 1);
	two = digest_of(&p, ab, 2, &a, 1);
	assert_true(one != 0);
	assert_true(two != one);
	assert_true(digest_of(&p, ba, 2, &a, 1) == two);
	assert_true(digest_of(&p, ab, 2, both, 2) == digest_of(&p, ba, 2, reversed, 2));
	assert_true(digest_of(&p, ab, 2, both, 2) != two);
	assert_true(digest_of(&p, ab, 1, &b, 1) != one);
	/* Not normalized: the order of the records does not count either. */
	assert_int_equal(sniset_add_name(&set, &p, "a.test", BFBPF_SNI_NAME_SELF, 0, both, 2, NULL),
			 0);
	one = sniset_digest(&set);
	sniset_free(&set);
	assert_int_equal(
		sniset_add_name(&set, &p, "a.test", BFBPF_SNI_NAME_SELF, 0, reversed, 2, NULL), 0);
	assert_true(sniset_digest(&set) == one);
	/* Another kind is another value: another digest. */
	sniset_free(&set);
	assert_int_equal(
		sniset_add_name(&set, &p, "a.test", BFBPF_SNI_NAME_SUBDOMAINS, 0, both, 2, NULL),
		0);
	assert_true(sniset_digest(&set) != one);
	sniset_free(&set);
	policy_free(&p);
}

/*
 * Two names on one key (their hashes collide): the map holds one value, the
 * first name in byte order keeps it, the other stays out (refused there).
 */
static void test_sniset_collision(void **state)
{
	struct policy p;
	struct sniset set = {0};
	struct in6_addr a = mapped("198.18.0.2");

	(void)state;
	parse("{\"network_mode\":\"allowlist\",\"http_ports\":[]}", &p);
	assert_int_equal(sniset_add_name(&set, &p, "z.test", BFBPF_SNI_NAME_SELF, 0, &a, 1, NULL),
			 0);
	assert_int_equal(
		sniset_add_name(&set, &p, "b.test", BFBPF_SNI_NAME_SUBDOMAINS, 0, &a, 1, NULL), 0);
	/* Forged: every key of z.test gets b.test's hash. */
	for (size_t i = 0; i < set.n_names; i++)
		set.names[i].rhash = sniset_name_rhash("b.test");
	sniset_normalize(&set);
	assert_int_equal(set.n_names, 2); /* the marker and 443, once each */
	for (size_t i = 0; i < set.n_names; i++) {
		assert_string_equal(sniset_name_text(&set, &set.names[i]), "b.test");
		assert_int_equal(set.names[i].kinds, BFBPF_SNI_NAME_SUBDOMAINS);
	}
	sniset_free(&set);
	policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sniset_rhash),
		cmocka_unit_test(test_sniset_name_derived),
		cmocka_unit_test(test_sniset_ports_and_kinds),
		cmocka_unit_test(test_sniset_name_text),
		cmocka_unit_test(test_sniset_digest),
		cmocka_unit_test(test_sniset_collision),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
