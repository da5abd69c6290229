// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The TLS ClientHello parser (bpf/lib/tls_sni.h), userspace build: the
 * verdict and name of every ClientHello of tests/fuzz/corpus/hello (captured
 * from curl, openssl s_client and Python ssl, and built by
 * tests/fuzz/hello_corpus.py), writes in several parts, and the rule that
 * more bytes never change a final verdict.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../../bpf/lib/tls_sni.h"

#define HELLO_FIXTURE_PARSE bfbpf_hello_parse
#include "hello_fixture.h"

static const struct expected tls_expected[] = {
	{"curl-allowed.test", BFBPF_HELLO_SNI, "allowed.test"},
	{"python-allowed.test", BFBPF_HELLO_SNI, "allowed.test"},
	{"openssl-allowed.test", BFBPF_HELLO_SNI, "allowed.test"}, /* sent as Allowed.Test */
	{"openssl-nosni", BFBPF_HELLO_NO_SNI, NULL},
	{"built-sni-first", BFBPF_HELLO_SNI, "allowed.test"},
	{"built-2k-sni-last", BFBPF_HELLO_SNI, "allowed.test"},
	{"built-2k-2records", BFBPF_HELLO_SNI, "allowed.test"},
	{"built-2k-5records", BFBPF_HELLO_SNI, "allowed.test"},
	{"built-2records-split-header", BFBPF_HELLO_SNI, "allowed.test"},
	{"built-ech-outer", BFBPF_HELLO_SNI, "public.allowed.test"},
	{"built-uppercase", BFBPF_HELLO_SNI, "allowed.test"},
	{"built-trailing-dot", BFBPF_HELLO_SNI, "allowed.test"},
	{"built-underscore", BFBPF_HELLO_SNI, "_srv.allowed-1.test"},
	{"built-other-name-type", BFBPF_HELLO_SNI, "allowed.test"},
	{"built-only-other-name-type", BFBPF_HELLO_NO_SNI, NULL},
	{"built-no-sni", BFBPF_HELLO_NO_SNI, NULL},
	{"built-no-extensions", BFBPF_HELLO_NO_SNI, NULL},
	{"built-truncated", BFBPF_HELLO_MORE, NULL},
	{"built-garbled-lengths", BFBPF_HELLO_BAD, NULL},
	{"built-two-host-names", BFBPF_HELLO_BAD, NULL},
	{"built-two-sni-extensions", BFBPF_HELLO_BAD, NULL},
	{"built-bad-byte", BFBPF_HELLO_BAD, NULL},
	{"built-nul-byte", BFBPF_HELLO_BAD, NULL},
	{"built-empty-label", BFBPF_HELLO_BAD, NULL},
	{"built-leading-dot", BFBPF_HELLO_BAD, NULL},
	{"built-empty-name", BFBPF_HELLO_BAD, NULL},
	{"built-name-254", BFBPF_HELLO_BAD, NULL},
	{"built-not-handshake", BFBPF_HELLO_BAD, NULL},
	{"built-ccs-between", BFBPF_HELLO_BAD, NULL},
	{"built-server-hello", BFBPF_HELLO_BAD, NULL},
	{"built-too-long", BFBPF_HELLO_BAD, NULL},
	{"built-over-bound-records", BFBPF_HELLO_BAD, NULL},
	{"built-zero-record", BFBPF_HELLO_BAD, NULL},
	{"http-get", BFBPF_HELLO_BAD, NULL},
	{"http-curl-captured", BFBPF_HELLO_BAD, NULL},
};

static void test_tls_corpus_verdicts(void **state)
{
	(void)state;
	hello_check_verdicts(tls_expected, sizeof(tls_expected) / sizeof(tls_expected[0]));
}

/* The longest name a DNS name may be: 253 bytes, every label 63 or less. */
static void test_tls_name_253(void **state)
{
	(void)state;
	assert_int_equal(parse_prefix(corpus_read("built-name-253")), BFBPF_HELLO_SNI);
	assert_int_equal(hello.name_len, BFBPF_NAME_MAX);
	assert_int_equal(strlen(hello.name), BFBPF_NAME_MAX);
	/* The longest name matches itself (the fuzzer found this step missing). */
	memcpy(file_bytes, hello.name, sizeof(hello.name));
	assert_true(bfbpf_name_matches(&hello, (const char *)file_bytes, BFBPF_NAME_MAX));
}

/* A 2 KB hello (server_name last) written in three parts: MORE, MORE, SNI. */
static void test_tls_three_writes(void **state)
{
	size_t len = corpus_read("built-2k-sni-last");

	(void)state;
	assert_true(len > 1800);
	assert_int_equal(parse_prefix(700), BFBPF_HELLO_MORE);
	assert_int_equal(parse_prefix(1400), BFBPF_HELLO_MORE);
	assert_int_equal(parse_prefix(len), BFBPF_HELLO_SNI);
	assert_string_equal(hello.name, "allowed.test");
}

/* Bytes after a complete hello (early data, a second record) change nothing. */
static void test_tls_bytes_after(void **state)
{
	size_t len = corpus_read("curl-allowed.test");

	(void)state;
	memcpy(file_bytes + len, "\x17\x03\x03\x00\x05hello", 10);
	assert_int_equal(parse_prefix(len + 10), BFBPF_HELLO_SNI);
	assert_string_equal(hello.name, "allowed.test");
}

/* Every prefix of every corpus file: MORE, or the whole file's verdict and name. */
static void test_tls_prefixes_agree(void **state)
{
	(void)state;
	hello_check_prefixes(tls_expected, sizeof(tls_expected) / sizeof(tls_expected[0]));
}

/* Nothing but a full buffer, or an impossible length, is final without a hello. */
static void test_tls_bound(void **state)
{
	(void)state;
	memset(file_bytes, 0, sizeof(file_bytes));
	assert_int_equal(parse_prefix(0), BFBPF_HELLO_MORE);
	memset(&hello, 0, sizeof(hello));
	hello.len = BFBPF_HELLO_MAX + 1;
	assert_int_equal(bfbpf_hello_parse(&hello), BFBPF_HELLO_BAD);
	/* A record header that promises more than a record may hold. */
	memcpy(file_bytes, "\x16\x03\x01\x40\x01\x01", 6);
	assert_int_equal(parse_prefix(6), BFBPF_HELLO_BAD);
}

/* FNV-1a 64 over the lowercased bytes: what userspace puts in the maps. */
static void test_name_hash(void **state)
{
	(void)state;
	assert_true(bfbpf_name_hash("allowed.test", 12) == 0xdabdabf508eb1763ULL);
	assert_true(bfbpf_name_hash("ALLOWED.Test", 12) == 0xdabdabf508eb1763ULL);
	assert_true(bfbpf_name_hash("", 0) == 0xcbf29ce484222325ULL);
	assert_true(bfbpf_name_hash("allowed.test", 7) != bfbpf_name_hash("allowed.test", 12));
}

/* The reversed hash of every suffix at a label boundary, shortest first, as the kernel finds them.
 */
static void test_name_suffixes(void **state)
{
	(void)state;
	/* Reversed: the hash of the bytes from last to first. */
	assert_true(bfbpf_name_rhash("Wild.Test", 9) == bfbpf_name_hash("tset.dliw", 9));
	memset(&hello, 0, sizeof(hello));
	strcpy(hello.name, "a.wild.test");
	hello.name_len = 11;
	bfbpf_name_suffixes(&hello);
	assert_int_equal(hello.suffix_count, 3);
	assert_true(hello.suffix_hash[0] == bfbpf_name_rhash("test", 4));
	assert_true(hello.suffix_hash[1] == bfbpf_name_rhash("wild.test", 9));
	assert_true(hello.suffix_hash[2] == bfbpf_name_rhash("a.wild.test", 11));
	/* The longest name of one-byte labels: 127 suffixes, all kept. */
	memset(&hello, 0, sizeof(hello));
	for (int i = 0; i < 127; i++)
		memcpy(hello.name + 2 * i, i == 126 ? "z" : "z.", i == 126 ? 1 : 2);
	hello.name_len = 253;
	bfbpf_name_suffixes(&hello);
	assert_int_equal(hello.suffix_count, 127);
	assert_true(hello.suffix_hash[126] == bfbpf_name_rhash(hello.name, 253));
	assert_true(hello.suffix_hash[0] == bfbpf_name_rhash("z", 1));
}

/* A name, or a suffix of it at a label boundary, confirmed byte by byte. */
static void test_name_matches(void **state)
{
	static char entry[BFBPF_NAME_BUF];
	static const struct {
		const char *entry;
		int matches;
	} cases[] = {
		{"a.wild.test", 1}, {"wild.test", 1},	  {"test", 1}, {"ild.test", 0},
		{"b.wild.test", 0}, {"x.a.wild.test", 0}, {"", 0},     {"a.wild.tes", 0},
		{"wild.tesT", 0},   {".wild.test", 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&hello, 0, sizeof(hello));
		strcpy(hello.name, "a.wild.test");
		hello.name_len = 11;
		memset(entry, 0, sizeof(entry));
		strcpy(entry, cases[i].entry);
		if (bfbpf_name_matches(&hello, entry, (__u32)strlen(entry)) != cases[i].matches)
			fail_msg("\"%s\" of a.wild.test: expected %d", entry, cases[i].matches);
	}
}

/* name's suffix of entry's length (-1: none at a label boundary). */
static int suffix_at(const char *name, const char *entry)
{
	__u32 want = (__u32)strlen(entry);

	memset(&hello, 0, sizeof(hello));
	strcpy(hello.name, name);
	hello.name_len = (__u32)strlen(name);
	bfbpf_name_suffixes(&hello);
	for (__u32 at = 0; at < hello.suffix_count; at++)
		if (hello.suffix_len[at] == want)
			return (int)at;
	return -1;
}

/* Does entry confirm a hash hit for suffix at of name (bfbpf_name_suffix_is)? */
static int suffix_is(const char *name, __u32 at, const char *entry)
{
	static char buf[BFBPF_NAME_BUF];

	memset(&hello, 0, sizeof(hello));
	strcpy(hello.name, name);
	hello.name_len = (__u32)strlen(name);
	bfbpf_name_suffixes(&hello);
	memset(buf, 0, sizeof(buf));
	strcpy(buf, entry);
	return bfbpf_name_suffix_is(&hello, at, buf, (__u32)strlen(entry));
}

/*
 * What confirms a hash hit in the kernel: the entry is exactly the suffix
 * hashed. Equal; a byte differs; the length differs; a suffix only on a label
 * boundary (evilallowed.test is no subdomain of allowed.test).
 */
static void test_name_suffix_is(void **state)
{
	(void)state;
	/* The whole name (the last suffix), equal: confirmed. */
	assert_int_equal(suffix_at("allowed.test", "allowed.test"), 1);
	assert_true(suffix_is("allowed.test", 1, "allowed.test"));
	/* A colliding entry of another name, as long or not: refused. */
	assert_false(suffix_is("evil.test", 1, "allowed.test"));
	assert_false(suffix_is("allowex.test", 1, "allowed.test"));
	assert_false(suffix_is("allowed.test", 1, "allowed.tesu"));
	assert_false(suffix_is("allowed.test", 1, "allowed.tes"));
	assert_false(suffix_is("allowed.test", 1, "xallowed.test"));
	/* Suffixes of a.wild.test: "test", "wild.test", "a.wild.test". */
	assert_int_equal(suffix_at("a.wild.test", "wild.test"), 1);
	assert_true(suffix_is("a.wild.test", 1, "wild.test"));
	assert_true(suffix_is("a.wild.test", 0, "test"));
	assert_true(suffix_is("a.wild.test", 2, "a.wild.test"));
	/* Another suffix of the name, but not the one hashed at that index: refused. */
	assert_false(suffix_is("a.wild.test", 0, "wild.test"));
	assert_false(suffix_is("a.wild.test", 2, "wild.test"));
	assert_false(suffix_is("a.wild.test", 1, "a.wild.test"));
	/* Past the suffixes: refused. */
	assert_false(suffix_is("a.wild.test", 3, "a.wild.test"));
	/* evilallowed.test has no suffix allowed.test at a label boundary. */
	assert_int_equal(suffix_at("evilallowed.test", "allowed.test"), -1);
	for (__u32 at = 0; at < 3; at++)
		assert_false(suffix_is("evilallowed.test", at, "allowed.test"));
	assert_true(suffix_is("x.allowed.test", 1, "allowed.test"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tls_corpus_verdicts), cmocka_unit_test(test_tls_name_253),
		cmocka_unit_test(test_tls_three_writes),    cmocka_unit_test(test_tls_bytes_after),
		cmocka_unit_test(test_tls_prefixes_agree),  cmocka_unit_test(test_tls_bound),
		cmocka_unit_test(test_name_hash),	    cmocka_unit_test(test_name_suffixes),
		cmocka_unit_test(test_name_matches),	    cmocka_unit_test(test_name_suffix_is),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
