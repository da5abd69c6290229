/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The guard role: the same programs, attached to a subtree's top cgroup with
 * BFBPF_SANDBOX_GUARD in their value, defer (allow) when the socket's cgroup
 * or one of its ancestors below the guard is registered, and apply the
 * guard's own (default) policy otherwise. Links are always multi-attach, so
 * a registered sandbox's own programs run for the socket too and any deny
 * wins: deferring never opens more than the sandbox's policy.
 *
 * The kernel runs the programs of the SOCKET's cgroup, so the guard judges
 * by that cgroup, never by the current task's (a process may make a socket
 * in an unregistered cgroup and use it after moving into a registered one).
 * Which helpers read which cgroup where, on 6.1 (docs/design.md "Guard"):
 * the address hooks and setsockopt can read neither the socket's cgroup nor
 * its ancestors (bpf_sk_*cgroup_id are not allowed there; 6.1 does not even
 * know them for those program types), so cgroup/sock_create records the
 * ancestry in socket storage when the socket is made, while current's cgroup
 * is the socket's, and they read the record. Egress reads the packet's
 * socket's ancestors directly (bpf_skb_ancestor_cgroup_id; current is not
 * the sender there). lsm_cgroup/socket_create has no socket yet and the
 * kernel runs it for the current task's cgroup: it reads current's.
 */
#ifndef BFBPF_LIB_GUARD_H
#define BFBPF_LIB_GUARD_H

#include "lib/common.h"
#include "lib/maps.h"

/*
 * Is a cgroup of the recorded ancestry, below the guard, registered? The
 * loop counts from 1 with a constant bound and skips the guard's own levels,
 * rather than starting at guard_level + 1: with a constant start the
 * verifier sees every index of ancestors[] in range without a bounds check
 * of a value read from a map.
 */
static __always_inline int guard_origin_registered(const struct bfbpf_sandbox *guard,
						   const struct bfbpf_guard_origin *origin)
{
	for (__u32 level = 1; level <= BFBPF_GUARD_MAX_LEVEL; level++) {
		__u64 id;

		if (level <= guard->guard_level)
			continue;
		id = origin->ancestors[level];
		if (!id)
			return 0; /* past the socket's own cgroup */
		if (bpf_map_lookup_elem(&registered, &id))
			return 1;
	}
	return 0;
}

/*
 * Does the guard defer for this socket? A socket without a record was made
 * before any guard above it was attached: strict, it gets the guard's
 * default (falling back to the current task would reopen the hole above).
 */
static __always_inline int guard_defers_sock(const struct bfbpf_sandbox *guard, struct bpf_sock *sk)
{
	const struct bfbpf_guard_origin *origin;

	if (!sk)
		return 0;
	origin = bpf_sk_storage_get(&guard_origins, sk, 0, 0);
	return origin && guard_origin_registered(guard, origin);
}

/*
 * At socket creation: the socket's record, written once (the first guard
 * above writes it, nested ones find it); NULL if there was no room, which
 * the caller takes as a denial.
 */
static __always_inline const struct bfbpf_guard_origin *guard_origin_record(struct bpf_sock *sk)
{
	struct bfbpf_guard_origin *origin;

	origin = bpf_sk_storage_get(&guard_origins, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!origin || origin->ancestors[0])
		return origin; /* the root's id is never 0: already recorded */
	for (__u32 level = 0; level <= BFBPF_GUARD_MAX_LEVEL; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);

		origin->ancestors[level] = id;
		if (!id)
			break; /* deeper than the task's cgroup: the rest stays 0 */
	}
	return origin;
}

/* Egress: the packet's socket's ancestors, read directly (exact, no record needed). */
static __always_inline int guard_defers_skb(const struct bfbpf_sandbox *guard,
					    struct __sk_buff *skb)
{
	for (__u32 level = 1; level <= BFBPF_GUARD_MAX_LEVEL; level++) {
		__u64 id;

		if (level <= guard->guard_level)
			continue;
		id = bpf_skb_ancestor_cgroup_id(skb, level);
		if (!id)
			return 0;
		if (bpf_map_lookup_elem(&registered, &id))
			return 1;
	}
	return 0;
}

/* lsm_cgroup/socket_create: the kernel runs it for the current task's cgroup; so does this. */
static __always_inline int guard_defers_current(const struct bfbpf_sandbox *guard)
{
	for (__u32 level = 1; level <= BFBPF_GUARD_MAX_LEVEL; level++) {
		__u64 id;

		if (level <= guard->guard_level)
			continue;
		id = bpf_get_current_ancestor_cgroup_id(level);
		if (!id)
			return 0;
		if (bpf_map_lookup_elem(&registered, &id))
			return 1;
	}
	return 0;
}

#endif /* BFBPF_LIB_GUARD_H */
