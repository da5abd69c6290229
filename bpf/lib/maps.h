/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The maps, defined once: the programs of bfbpf.bpf.c are their only users.
 */
#ifndef BFBPF_LIB_MAPS_H
#define BFBPF_LIB_MAPS_H

#include "lib/common.h"
/*
 * The policy of each sandbox, in cgroup storage: the kernel makes it (zeroed)
 * when the programs are attached to the sandbox's cgroup and frees it at
 * detach; the daemon writes it by cgroup id, and each write swaps the whole
 * value at once (the atomic flip of an update). A program reaches the storage
 * of the cgroup it is attached at without a lookup: no current-cgroup read,
 * no hash lookup, no walk up the hierarchy, on every hook and every packet.
 */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, __u64); /* cgroup id: one storage shared by every hook of a cgroup */
	__type(value, struct bfbpf_sandbox);
} sandboxes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BFBPF_MAX_EXACT_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct bfbpf_exact_key);
	__type(value, struct bfbpf_allow_value);
} allow_exact SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, BFBPF_MAX_PREFIX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct bfbpf_prefix_key);
	__type(value, struct bfbpf_allow_value);
} allow_prefix SEC(".maps");

/*
 * Per sandbox, per CPU: the counters and the events' token bucket, in cgroup
 * storage. The kernel makes it when the programs are attached to a sandbox's
 * cgroup (zeroed: an empty bucket that refills on first use) and frees it at
 * detach; a program reaches the storage of the cgroup it is attached at (the
 * sandbox, also for a socket in a descendant cgroup) without a map lookup,
 * which was a hash lookup on every packet and every hook.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE);
	__type(key, __u64); /* cgroup id: one storage shared by every hook of a cgroup */
	__type(value, struct bfbpf_stats);
} sandbox_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* Where each redirected DNS socket meant to go (read back by recvmsg and getpeername). */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bfbpf_dns_origin);
} dns_origins SEC(".maps");

/*
 * The cgroups that are registered: every attached sandbox (and guard), by
 * cgroup id, from the moment its links and policy are in place until just
 * before they go. A guard defers to the programs of a registered cgroup on
 * the socket's path up to it (they run anyway: links are multi-attach).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BFBPF_MAX_REGISTERED);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);  /* cgroup id */
	__type(value, __u8); /* 1 */
} registered SEC(".maps");

/*
 * Each socket's cgroup ancestry, written by a guard at its creation (the
 * guard's programs run for every inet socket made below it). BPF_F_CLONE: an
 * accepted socket gets its listener's record, as it gets its cgroup.
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__type(key, int);
	__type(value, struct bfbpf_guard_origin);
} guard_origins SEC(".maps");

/*
 * Names bound to TLS (issue 20): which destinations are name-derived on a
 * judged port (sni_bound), and which names may go there (sni_names), per
 * generation like the allow maps; each judged TCP flow's state (sni_flows).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BFBPF_MAX_EXACT_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct bfbpf_sni_bound_key);
	__type(value, __u8); /* BFBPF_SNI_BOUND_* */
} sni_bound SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BFBPF_MAX_EXACT_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct bfbpf_sni_name_key);
	__type(value, struct bfbpf_sni_name_value);
} sni_names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bfbpf_sni_flow);
} sni_flows SEC(".maps");

#endif /* BFBPF_LIB_MAPS_H */
