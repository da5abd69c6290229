// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The shared parsers (bpf/lib/tls_sni.h, bpf/lib/http_host.h), verified and
 * run by the kernel on bytes userspace supplies: a `syscall` program run with
 * BPF_PROG_TEST_RUN parses the struct bfbpf_hello in the single entry of
 * `hellos` (a map value, as in the egress programs) and returns the verdict;
 * tests/bpf/hello_runner.c compares it with the userspace build of the same
 * headers. The ctx says which parser. On SNI, the program also hashes the
 * name (bfbpf_name_hash) into `hashes`, and its suffixes
 * (bfbpf_name_suffixes) into the map value.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "lib/tls_sni.h"
#include "lib/http_host.h"
#include "hello_test.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bfbpf_hello);
} hellos SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hashes SEC(".maps");

SEC("syscall")
int hello_test(struct hello_test_args *args)
{
	struct bfbpf_hello *h;
	__u64 *hash;
	__u32 key = 0;
	int verdict;

	h = bpf_map_lookup_elem(&hellos, &key);
	hash = bpf_map_lookup_elem(&hashes, &key);
	if (!h || !hash)
		return -1;
	if (args->parser == HELLO_TEST_NONE)
		return BFBPF_HELLO_MORE;
	if (args->parser == HELLO_TEST_HTTP)
		verdict = bfbpf_http_host_parse(h);
	else
		verdict = bfbpf_hello_parse(h);
	*hash = 0;
	if (verdict == BFBPF_HELLO_SNI) {
		*hash = bfbpf_name_hash(h->name, h->name_len);
		bfbpf_name_suffixes(h);
	}
	return verdict;
}
