/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The ctx of tests/bpf/hello_test.bpf.c, shared with its runner. */
#ifndef BFBPF_TESTS_HELLO_TEST_H
#define BFBPF_TESTS_HELLO_TEST_H

#define HELLO_TEST_TLS 0
#define HELLO_TEST_HTTP 1
#define HELLO_TEST_NONE 2 /* the baseline of a timing: the lookups, no parse */

struct hello_test_args {
	__u32 parser; /* HELLO_TEST_TLS, HELLO_TEST_HTTP or HELLO_TEST_NONE */
};

/* The name bfbpf_name_matches confirms against a parsed name (a map value, as in a policy's). */
struct hello_test_entry {
	char name[256] __attribute__((aligned(8))); /* BFBPF_NAME_BUF, NUL-filled */
	__u32 len;
};

#define HELLO_TEST_ENTRY "allowed.test"

#endif /* BFBPF_TESTS_HELLO_TEST_H */
