// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The bench's variant (f): a cgroup_skb egress program that allows every
 * packet. On a cgroup of its own it measures what the kernel charges for
 * running any per-packet cgroup filter at all, so that the report can tell
 * that share of bfbpf's cost from bfbpf's own.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("cgroup_skb/egress")
int bench_floor(struct __sk_buff *skb)
{
	return 1; /* the kernel reads 1 as "pass" */
}
