// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The HTTP Host parser (bpf/lib/http_host.h), userspace build: the verdict
 * and name of every request head of tests/fuzz/corpus/hello (curl's, and
 * those built by tests/fuzz/hello_corpus.py), heads built here, and the rule
 * that more bytes never change a final verdict.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../../bpf/lib/http_host.h"

#define HELLO_FIXTURE_PARSE bfbpf_http_host_parse
#include "hello_fixture.h"

static const struct expected http_expected[] = {
	{"http-curl-captured", BFBPF_HELLO_SNI, "allowed.test"},
	{"http-get", BFBPF_HELLO_SNI, "allowed.test"},
	{"http-port-case-dot", BFBPF_HELLO_SNI, "allowed.test"},
	{"http-absolute-agrees", BFBPF_HELLO_SNI, "allowed.test"},
	{"http-absolute-only", BFBPF_HELLO_SNI, "evil.test"},
	{"http-connect", BFBPF_HELLO_SNI, "evil.test"},
	{"http-hostname-header", BFBPF_HELLO_SNI, "allowed.test"},
	{"http-10-no-host", BFBPF_HELLO_NO_SNI, NULL},
	{"http-incomplete", BFBPF_HELLO_MORE, NULL},
	{"http-absolute-disagrees", BFBPF_HELLO_BAD, NULL},
	{"http-two-hosts", BFBPF_HELLO_BAD, NULL},
	{"http-unknown-method", BFBPF_HELLO_BAD, NULL},
	{"http-bare-lf", BFBPF_HELLO_BAD, NULL},
	{"http-folded", BFBPF_HELLO_BAD, NULL},
	{"http-space-colon", BFBPF_HELLO_BAD, NULL},
	{"http-userinfo", BFBPF_HELLO_BAD, NULL},
	{"http-ipv6-literal", BFBPF_HELLO_BAD, NULL},
	{"http-http2-preface", BFBPF_HELLO_BAD, NULL},
	{"http-long-header", BFBPF_HELLO_BAD, NULL},
	{"http-tls-bytes", BFBPF_HELLO_BAD, NULL},
	{"curl-allowed.test", BFBPF_HELLO_BAD, NULL},
};

static void test_http_corpus_verdicts(void **state)
{
	(void)state;
	hello_check_verdicts(http_expected, sizeof(http_expected) / sizeof(http_expected[0]));
}

/* A request head given as text: its verdict, and the name on SNI. */
static void expect_head(const char *head, int verdict, const char *name)
{
	size_t len = strlen(head);
	int got;

	memcpy(file_bytes, head, len);
	got = parse_prefix(len);
	if (got != verdict)
		fail_msg("\"%s\": verdict %d, expected %d", head, got, verdict);
	if (name)
		assert_string_equal(hello.name, name);
}

static void test_http_heads(void **state)
{
	(void)state;
	expect_head("HEAD /x HTTP/1.1\r\nHOST:\tWWW.Allowed.Test\t\r\n\r\n", BFBPF_HELLO_SNI,
		    "www.allowed.test");
	expect_head("OPTIONS * HTTP/1.1\r\nHost: allowed.test:8080\r\n\r\n", BFBPF_HELLO_SNI,
		    "allowed.test");
	expect_head("DELETE /a?b=c HTTP/1.1\r\nX-Host: evil.test\r\nHost: a.test\r\n\r\n",
		    BFBPF_HELLO_SNI, "a.test");
	expect_head("GET http://allowed.test HTTP/1.1\r\nHost: allowed.test:80\r\n\r\n",
		    BFBPF_HELLO_SNI, "allowed.test");
	expect_head("GET / HTTP/1.1\r\nHost:\r\n\r\n", BFBPF_HELLO_BAD, NULL);
	expect_head("GET / HTTP/1.1\r\nHost: a..test\r\n\r\n", BFBPF_HELLO_BAD, NULL);
	expect_head("GET / HTTP/1.1\r\nHost: a.test:8x\r\n\r\n", BFBPF_HELLO_BAD, NULL);
	expect_head("GET / HTTP/1.1\r\nHost: a.test b.test\r\n\r\n", BFBPF_HELLO_BAD, NULL);
	expect_head("GET / HTTP/1.1\r\nHost: 1.2.3.4\r\n\r\n", BFBPF_HELLO_SNI, "1.2.3.4");
	expect_head("GET / HTTP/2.0\r\nHost: a.test\r\n\r\n", BFBPF_HELLO_BAD, NULL);
	expect_head("get / HTTP/1.1\r\nHost: a.test\r\n\r\n", BFBPF_HELLO_BAD, NULL);
	expect_head("GET ftp://a.test/ HTTP/1.1\r\n\r\n", BFBPF_HELLO_BAD, NULL);
	expect_head("GET / HTTP/1.1\r\nHost: a.test\r\n\r", BFBPF_HELLO_MORE, NULL);
	expect_head("GET / HTTP/1.1\r\nHost: a.test\r\n\rX", BFBPF_HELLO_BAD, NULL);
}

/* A NUL inside a value (memcpy, not strlen): refused. */
static void test_http_nul_in_value(void **state)
{
	static const char head[] = "GET / HTTP/1.1\r\nX: a\0b\r\nHost: a.test\r\n\r\n";

	(void)state;
	memcpy(file_bytes, head, sizeof(head) - 1);
	assert_int_equal(parse_prefix(sizeof(head) - 1), BFBPF_HELLO_BAD);
}

/* A head in three writes: MORE, MORE, SNI. */
static void test_http_three_writes(void **state)
{
	size_t len = corpus_read("http-get");

	(void)state;
	assert_int_equal(parse_prefix(10), BFBPF_HELLO_MORE);
	assert_int_equal(parse_prefix(30), BFBPF_HELLO_MORE);
	assert_int_equal(parse_prefix(len), BFBPF_HELLO_SNI);
	assert_string_equal(hello.name, "allowed.test");
}

/* A head that does not end within the bound: BAD once the buffer is full. */
static void test_http_bound(void **state)
{
	static const char start[] = "GET / HTTP/1.1\r\nHost: allowed.test\r\nX: ";

	(void)state;
	memset(file_bytes, 'a', sizeof(file_bytes));
	memcpy(file_bytes, start, sizeof(start) - 1);
	assert_int_equal(parse_prefix(BFBPF_HELLO_MAX - 1), BFBPF_HELLO_MORE);
	assert_int_equal(parse_prefix(BFBPF_HELLO_MAX), BFBPF_HELLO_BAD);
}

/* Every prefix of every corpus file: MORE, or the whole file's verdict and name. */
static void test_http_prefixes_agree(void **state)
{
	(void)state;
	hello_check_prefixes(http_expected, sizeof(http_expected) / sizeof(http_expected[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_corpus_verdicts),
		cmocka_unit_test(test_http_heads),
		cmocka_unit_test(test_http_nul_in_value),
		cmocka_unit_test(test_http_three_writes),
		cmocka_unit_test(test_http_bound),
		cmocka_unit_test(test_http_prefixes_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
