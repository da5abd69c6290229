/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The policy decision shared by every hook: the allow maps of the sandbox's
 * generation, behind a per-CPU verdict memo.
 */
#ifndef BFBPF_LIB_VERDICT_H
#define BFBPF_LIB_VERDICT_H

#include "lib/common.h"
#include "lib/maps.h"
#include "lib/destination.h"
#include "lib/escapes.h"
static __always_inline int allow_maps_contain(__u32 generation, const struct destination *dst,
					      __u32 port)
{
	struct bfbpf_exact_key exact = {.generation = generation, .port = port};
	struct bfbpf_prefix_key prefix = {
		.prefixlen = BFBPF_PREFIX_FIXED_BITS + 128,
		.generation = generation,
		.port = port,
	};

	__builtin_memcpy(exact.addr, dst->addr, sizeof(exact.addr));
	if (bpf_map_lookup_elem(&allow_exact, &exact))
		return 1;
	__builtin_memcpy(prefix.addr, dst->addr, sizeof(prefix.addr));
	return bpf_map_lookup_elem(&allow_prefix, &prefix) != NULL;
}

/* Compiler barrier: the memo's reads and writes stay in program order. */
#define memo_barrier() asm volatile("" ::: "memory")

static __always_inline __u32 memo_sequence(const struct bfbpf_verdict_memo *memo)
{
	return *(const volatile __u32 *)&memo->sequence;
}

/* Does this CPU's memo say that the allow maps of generation allow dst? */
static __always_inline int verdict_memo_holds(const struct bfbpf_verdict_memo *memo,
					      __u32 generation, const struct destination *dst)
{
	__u32 sequence = memo_sequence(memo);
	int holds;

	if (sequence & 1)
		return 0; /* a run that this one preempted or interrupted is writing it */
	memo_barrier();
	holds = memo->generation == generation && memo->port == dst->port &&
		memo->addr[3] == dst->addr[3] && memo->addr[2] == dst->addr[2] &&
		memo->addr[1] == dst->addr[1] && memo->addr[0] == dst->addr[0];
	memo_barrier();
	/* Unchanged: no run wrote it while this one read it. */
	return holds && memo_sequence(memo) == sequence;
}

static __always_inline void verdict_memo_store(struct bfbpf_verdict_memo *memo, __u32 generation,
					       const struct destination *dst)
{
	__u32 sequence = memo_sequence(memo);

	if (sequence & 1)
		return; /* being written by a run this one preempted: leave it to that one */
	/*
	 * Claim it: fails if another run on this CPU wrote or claimed it since
	 * the read above. A plain store of sequence + 1 could go back to a value
	 * a reader saw before, and that reader would take a torn memo as true.
	 */
	if (__sync_val_compare_and_swap(&memo->sequence, sequence, sequence + 1) != sequence)
		return;
	memo_barrier();
	memo->generation = generation;
	memo->addr[0] = dst->addr[0];
	memo->addr[1] = dst->addr[1];
	memo->addr[2] = dst->addr[2];
	memo->addr[3] = dst->addr[3];
	memo->port = dst->port;
	memo_barrier();
	*(volatile __u32 *)&memo->sequence = sequence + 2;
}

/*
 * The allow maps of the sandbox's generation: the entry for any port, then
 * the one for dst's port. A flow's packets after its first find their
 * destination in this CPU's memo, without a lookup.
 */
static __always_inline int policy_allows(const struct bfbpf_sandbox *sandbox,
					 struct bfbpf_stats *stats, const struct destination *dst)
{
	if (verdict_memo_holds(&stats->memo, sandbox->generation, dst))
		return 1;
	if (!allow_maps_contain(sandbox->generation, dst, BFBPF_PORT_ANY) &&
	    !(dst->port && allow_maps_contain(sandbox->generation, dst, dst->port)))
		return 0;
	verdict_memo_store(&stats->memo, sandbox->generation, dst);
	return 1;
}

/* Does the exact map of generation hold dst, for every port or for dst's port? */
static __always_inline int allow_exact_contains(__u32 generation, const struct destination *dst)
{
	struct bfbpf_exact_key exact = {.generation = generation, .port = BFBPF_PORT_ANY};

	__builtin_memcpy(exact.addr, dst->addr, sizeof(exact.addr));
	if (bpf_map_lookup_elem(&allow_exact, &exact))
		return 1;
	exact.port = dst->port;
	return dst->port && bpf_map_lookup_elem(&allow_exact, &exact) != NULL;
}

/* The policy decision, shared by every hook. */
static __always_inline int policy_verdict(const struct bfbpf_sandbox *sandbox,
					  struct bfbpf_stats *stats, const struct destination *dst)
{
	if (!sandbox->generation)
		return BFBPF_VERDICT_DENY; /* attached, policy not yet written: fail closed */
	if (sandbox->flags & BFBPF_SANDBOX_PUBLIC)
		return BFBPF_VERDICT_ALLOW;
	if (dst->nat64) {
		/*
		 * It leaves as IPv6 on the default route, whatever IPv4 it spells: never
		 * loopback nor the responder, and never allowed when that IPv4 is one no
		 * translator may carry (RFC 6052), whatever the policy.
		 */
		if (!ip4_is_global(dst->addr[3]))
			return BFBPF_VERDICT_DENY;
		return policy_allows(sandbox, stats, dst) ? BFBPF_VERDICT_ALLOW
							  : BFBPF_VERDICT_DENY;
	}
	if (destination_is_loopback(dst)) {
		/*
		 * The sandbox's own DNS responder is reachable even without loopback:
		 * exactly 127.0.0.1 or ::1 on its port, not the rest of 127.0.0.0/8,
		 * where another service could listen on the same port number.
		 */
		if (sandbox->dns_port && dst->port == sandbox->dns_port &&
		    destination_is_responder(dst))
			return BFBPF_VERDICT_ALLOW;
		if (sandbox->flags & BFBPF_SANDBOX_ALLOW_LOOPBACK)
			return BFBPF_VERDICT_ALLOW;
		/*
		 * Otherwise only what the policy names exactly (127.0.0.1:4000,
		 * [::1]:4000): the exact map alone, never the prefix trie, so that a
		 * CIDR such as 0.0.0.0/0 never opens a local relay.
		 */
		return allow_exact_contains(sandbox->generation, dst) ? BFBPF_VERDICT_ALLOW
								      : BFBPF_VERDICT_DENY;
	}
	return policy_allows(sandbox, stats, dst) ? BFBPF_VERDICT_ALLOW : BFBPF_VERDICT_DENY;
}

#endif /* BFBPF_LIB_VERDICT_H */
