/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The ctx of tests/bpf/hello_test.bpf.c, shared with its runner. */
#ifndef BFBPF_TESTS_HELLO_TEST_H
#define BFBPF_TESTS_HELLO_TEST_H

#define HELLO_TEST_TLS 0
#define HELLO_TEST_HTTP 1

struct hello_test_args {
	__u32 parser; /* HELLO_TEST_TLS or HELLO_TEST_HTTP */
};

#endif /* BFBPF_TESTS_HELLO_TEST_H */
