// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bfbpf kernel side: one set of programs attached (with links) to every
 * sandbox cgroup. Each program reads the policy of the cgroup it is attached
 * at (its cgroup storage: the sandbox, also for sockets in descendant
 * cgroups), and looks the destination up in the allow maps of that policy's
 * generation. Anything not found is denied, and so is everything while the
 * daemon has not yet written the policy of a cgroup (generation 0).
 *
 * UAPI headers only (no vmlinux.h): the programs touch nothing but their
 * context structs, so they load unchanged on 6.1 and later kernels.
 */
#include "lib/common.h"
#include "lib/maps.h"
#include "lib/destination.h"
#include "lib/escapes.h"
#include "lib/account.h"
#include "lib/verdict.h"
#include "lib/dns.h"
#include "lib/socket.h"
#include "lib/packet.h"
#include "lib/guard.h"
#include "lib/sni.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

static __always_inline int judge_sock_addr4(struct bpf_sock_addr *ctx, __u8 hook)
{
	const struct bfbpf_sandbox *sandbox = sandbox_current();
	struct bfbpf_stats *stats = sandbox_stats_current();
	struct bfbpf_dns_origin *origin;
	struct destination dst;
	struct denial denial = {.dst = &dst, .protocol = ctx->protocol, .in_task = 1};

	if ((sandbox->flags & BFBPF_SANDBOX_GUARD) && guard_defers_sock(sandbox, ctx->sk))
		return BFBPF_VERDICT_ALLOW; /* a registered sandbox's programs judge it */
	destination_from_ip4(&dst, ctx->user_ip4);
	dst.port = bpf_ntohs((__u16)ctx->user_port);
	if (!dns_redirected(sandbox, dst.port))
		return account(sandbox, stats, hook, policy_verdict(sandbox, stats, &dst), &denial);
	origin = dns_origin_record(ctx, sandbox, AF_INET);
	if (!origin) /* a reply could not be mapped back: fail closed */
		return account(sandbox, stats, hook, BFBPF_VERDICT_DENY, &denial);
	__builtin_memcpy(origin->addr, dst.addr, sizeof(origin->addr));
	ctx->user_ip4 = bpf_htonl(0x7f000001);
	ctx->user_port = bpf_htons(sandbox->dns_port);
	return account(sandbox, stats, hook, BFBPF_VERDICT_ALLOW, &denial);
}

static __always_inline int judge_sock_addr6(struct bpf_sock_addr *ctx, __u8 hook)
{
	const struct bfbpf_sandbox *sandbox = sandbox_current();
	struct bfbpf_stats *stats = sandbox_stats_current();
	struct bfbpf_dns_origin *origin;
	struct destination dst;
	struct denial denial = {.dst = &dst, .protocol = ctx->protocol, .in_task = 1};
	__u32 ip6[4];

	if ((sandbox->flags & BFBPF_SANDBOX_GUARD) && guard_defers_sock(sandbox, ctx->sk))
		return BFBPF_VERDICT_ALLOW;
	/* Read word by word: the verifier allows only 4-byte loads of user_ip6. */
	ip6[0] = ctx->user_ip6[0];
	ip6[1] = ctx->user_ip6[1];
	ip6[2] = ctx->user_ip6[2];
	ip6[3] = ctx->user_ip6[3];
	destination_from_ip6(&dst, ip6);
	dst.port = bpf_ntohs((__u16)ctx->user_port);
	if (!dns_redirected(sandbox, dst.port))
		return account(sandbox, stats, hook, policy_verdict(sandbox, stats, &dst), &denial);
	origin = dns_origin_record(ctx, sandbox, AF_INET6);
	if (!origin)
		return account(sandbox, stats, hook, BFBPF_VERDICT_DENY, &denial);
	__builtin_memcpy(origin->addr, ip6, sizeof(origin->addr));
	/* An IPv4 server (mapped, NAT64), or no [::1] listener: ::ffff:127.0.0.1. */
	if (destination_is_ip4(&dst) || !(sandbox->flags & BFBPF_SANDBOX_DNS_V6)) {
		ctx->user_ip6[0] = 0;
		ctx->user_ip6[1] = 0;
		ctx->user_ip6[2] = bpf_htonl(0x0000ffff);
		ctx->user_ip6[3] = bpf_htonl(0x7f000001);
	} else {
		ctx->user_ip6[0] = 0;
		ctx->user_ip6[1] = 0;
		ctx->user_ip6[2] = 0;
		ctx->user_ip6[3] = bpf_htonl(1);
	}
	ctx->user_port = bpf_htons(sandbox->dns_port);
	return account(sandbox, stats, hook, BFBPF_VERDICT_ALLOW, &denial);
}

SEC("cgroup/recvmsg4")
int bfbpf_recvmsg4(struct bpf_sock_addr *ctx)
{
	dns_unredirect4(ctx);
	return BFBPF_VERDICT_ALLOW;
}

SEC("cgroup/recvmsg6")
int bfbpf_recvmsg6(struct bpf_sock_addr *ctx)
{
	dns_unredirect6(ctx);
	return BFBPF_VERDICT_ALLOW;
}

SEC("cgroup/getpeername4")
int bfbpf_getpeername4(struct bpf_sock_addr *ctx)
{
	dns_unredirect4(ctx);
	return BFBPF_VERDICT_ALLOW;
}

SEC("cgroup/getpeername6")
int bfbpf_getpeername6(struct bpf_sock_addr *ctx)
{
	dns_unredirect6(ctx);
	return BFBPF_VERDICT_ALLOW;
}

SEC("cgroup/connect4")
int bfbpf_connect4(struct bpf_sock_addr *ctx)
{
	return judge_sock_addr4(ctx, BFBPF_HOOK_CONNECT4);
}

SEC("cgroup/connect6")
int bfbpf_connect6(struct bpf_sock_addr *ctx)
{
	return judge_sock_addr6(ctx, BFBPF_HOOK_CONNECT6);
}

SEC("cgroup/sendmsg4")
int bfbpf_sendmsg4(struct bpf_sock_addr *ctx)
{
	return judge_sock_addr4(ctx, BFBPF_HOOK_SENDMSG4);
}

SEC("cgroup/sendmsg6")
int bfbpf_sendmsg6(struct bpf_sock_addr *ctx)
{
	return judge_sock_addr6(ctx, BFBPF_HOOK_SENDMSG6);
}

/* Runs for AF_INET and AF_INET6 sockets only. */
SEC("cgroup/sock_create")
int bfbpf_sock_create(struct bpf_sock *ctx)
{
	const struct bfbpf_sandbox *sandbox = sandbox_current();
	struct denial denial = {
		.protocol = ctx->protocol, .family = ctx->family, .type = ctx->type, .in_task = 1};

	if (sandbox->flags & BFBPF_SANDBOX_GUARD) {
		const struct bfbpf_guard_origin *origin = guard_origin_record(ctx);

		if (!origin) /* no room for the record: the address hooks would deny it anyway */
			return account(sandbox, sandbox_stats_current(), BFBPF_HOOK_SOCK_CREATE,
				       BFBPF_VERDICT_DENY, &denial);
		if (guard_origin_registered(sandbox, origin))
			return BFBPF_VERDICT_ALLOW;
	}
	return account(sandbox, sandbox_stats_current(), BFBPF_HOOK_SOCK_CREATE,
		       socket_verdict(sandbox, ctx->family, ctx->type, ctx->protocol), &denial);
}

/*
 * cgroup/sock_create never sees the other families (packet sockets reach the
 * wire without passing any address hook), so socket creation is also judged
 * at the LSM hook, per cgroup (BPF_LSM_CGROUP, kernel 6.0+; the bpf LSM must
 * be active, which the loader checks: it attaches where the LSM is not, and
 * then never runs).
 */
SEC("lsm_cgroup/socket_create")
int BPF_PROG(bfbpf_socket_create, int family, int type, int protocol, int kern)
{
	const struct bfbpf_sandbox *sandbox;
	struct denial denial = {.protocol = protocol, .family = family, .type = type, .in_task = 1};
	int verdict;

	if (kern)
		return BFBPF_VERDICT_ALLOW; /* the kernel's own sockets, not the sandbox's */
	sandbox = sandbox_current();
	if ((sandbox->flags & BFBPF_SANDBOX_GUARD) && guard_defers_current(sandbox))
		return BFBPF_VERDICT_ALLOW;
	verdict = socket_verdict(sandbox, family, type, protocol);
	/*
	 * This hook runs before cgroup/sock_create. An inet socket it allows is
	 * counted there; one it refuses never gets there, so it is reported here,
	 * under sock_create, the hook that judges inet sockets where there is no LSM.
	 */
	if (family == AF_INET || family == AF_INET6)
		return verdict == BFBPF_VERDICT_ALLOW
			       ? verdict
			       : account(sandbox, sandbox_stats_current(), BFBPF_HOOK_SOCK_CREATE,
					 verdict, &denial);
	return account(sandbox, sandbox_stats_current(), BFBPF_HOOK_SOCKET_LSM, verdict, &denial);
}

/*
 * Every packet leaving a sandbox socket is judged again, so that an update
 * also cuts flows opened under the old policy. Kept cheap: the headers read
 * in place, the policy and counters from cgroup storage, and the allow maps
 * looked up only when the destination is not this CPU's memo (at most four
 * lookups; one for a server in the exact map).
 *
 * A source-routed packet (IPv4 LSRR/SSRR, an IPv6 routing header) is dropped
 * in restrictive modes: its hops past the first are judged nowhere else.
 * The setsockopt program refuses the options that ask for one; this catches
 * every other way in (32-bit setsockopt calls skip that program, ancillary
 * data never meets it). Plain packets pay one compare for it.
 */
/* A judged flow's source, for its event (the daemon destroys the socket by it). */
static __always_inline void egress_source(struct __sk_buff *skb, struct denial *denial)
{
	struct bpf_sock *sk = skb->sk;

	/* verifier: the source address is readable on a full socket only. */
	sk = sk ? bpf_sk_fullsock(sk) : NULL;
	if (!sk)
		return;
		/*
		 * verifier: no arithmetic on a socket pointer; clang would compute
		 * sk + offset once and load from it. The barrier makes each field a
		 * load at its offset from sk itself.
		 */
#define SK_FIELD(field)                                                                            \
	({                                                                                         \
		__u32 value_;                                                                      \
		asm volatile("%0 = *(u32 *)(%1 + %2)"                                              \
			     : "=r"(value_)                                                        \
			     : "r"(sk), "i"(__builtin_offsetof(struct bpf_sock, field)));          \
		value_;                                                                            \
	})
	denial->sport = (__u16)SK_FIELD(src_port);
	if (SK_FIELD(family) == AF_INET) {
		denial->saddr[2] = bpf_htonl(0x0000ffff);
		denial->saddr[3] = SK_FIELD(src_ip4);
		return;
	}
	denial->saddr[0] = SK_FIELD(src_ip6[0]);
	denial->saddr[1] = SK_FIELD(src_ip6[1]);
	denial->saddr[2] = SK_FIELD(src_ip6[2]);
	denial->saddr[3] = SK_FIELD(src_ip6[3]);
#undef SK_FIELD
}

/*
 * Names bound to TLS (lib/sni.h): a packet the address policy allows, to a
 * name-derived destination on a judged port. A held segment (first bytes not
 * complete) is dropped without a denial: TCP resends it, grown.
 */
static __always_inline int egress_sni(struct __sk_buff *skb, const struct bfbpf_sandbox *sandbox,
				      struct bfbpf_stats *stats, const struct destination *dst,
				      struct denial *denial, int extra)
{
	struct bfbpf_sni_flow *flow = NULL;
	int reason = 0, outcome;

	/* IPv6 extension headers are not walked: a judged flow cannot be read, refused. */
	if (extra && denial->protocol == IPPROTO_TCP) {
		struct bfbpf_sni_bound_key key = {.generation = sandbox->generation,
						  .port = dst->port};

		__builtin_memcpy(key.addr, dst->addr, sizeof(key.addr));
		if (bpf_map_lookup_elem(&sni_bound, &key))
			return account(sandbox, stats, BFBPF_HOOK_EGRESS, BFBPF_VERDICT_DENY,
				       denial);
	}
	outcome = sni_judge(skb, sandbox, dst, denial->protocol, stats, &reason, &flow);
	if (outcome == SNI_PASS)
		return account(sandbox, stats, BFBPF_HOOK_EGRESS, BFBPF_VERDICT_ALLOW, denial);
	if (outcome == SNI_HOLD)
		return BFBPF_VERDICT_DENY;
	if (outcome == SNI_DROP) {
		stats->denied[BFBPF_HOOK_EGRESS]++;
		return BFBPF_VERDICT_DENY;
	}
	denial->reason = (__u8)reason;
	denial->flow = flow;
	egress_source(skb, denial);
	return account(sandbox, stats, BFBPF_HOOK_EGRESS, BFBPF_VERDICT_DENY, denial);
}

static __always_inline int egress_verdict(struct __sk_buff *skb)
{
	const struct bfbpf_sandbox *sandbox = sandbox_current();
	struct bfbpf_stats *stats;
	struct destination dst = {};
	struct denial denial = {.dst = &dst}; /* softirq, maybe: no pid, no comm */
	int extra = 0;

	if (sandbox->generation && (sandbox->flags & BFBPF_SANDBOX_PUBLIC))
		return BFBPF_VERDICT_ALLOW;
	if ((sandbox->flags & BFBPF_SANDBOX_GUARD) && guard_defers_skb(sandbox, skb))
		return BFBPF_VERDICT_ALLOW;
	stats = sandbox_stats_current();
	if (packet_destination(skb, &dst, &denial.protocol, &extra) ||
	    (extra && packet_source_routed(skb)))
		return account(sandbox, stats, BFBPF_HOOK_EGRESS, BFBPF_VERDICT_DENY, &denial);
	if (policy_verdict(sandbox, stats, &dst) != BFBPF_VERDICT_ALLOW)
		return account(sandbox, stats, BFBPF_HOOK_EGRESS, BFBPF_VERDICT_DENY, &denial);
	if (!(sandbox->flags & BFBPF_SANDBOX_SNI) || destination_is_loopback(&dst))
		return account(sandbox, stats, BFBPF_HOOK_EGRESS, BFBPF_VERDICT_ALLOW, &denial);
	return egress_sni(skb, sandbox, stats, &dst, &denial, extra);
}

SEC("cgroup_skb/egress")
int bfbpf_egress(struct __sk_buff *skb)
{
	/*
	 * verifier: clang keeps the verdict of the judged path in a stack slot
	 * the verifier reads back as any 32-bit value; egress must return 0..3.
	 * The mask changes nothing (verdicts are 0 or 1).
	 */
	return egress_verdict(skb) & 1;
}

/*
 * Refuses nothing. An option value larger than a page reaches the program
 * cut to a page, and the kernel takes a length of 0 as "use the caller's
 * value as it is" (6.1 answers EFAULT to any other length there).
 */
static __always_inline int sockopt_pass(struct bpf_sockopt *ctx)
{
	if (ctx->optlen > SOCKOPT_SEEN_MAX)
		ctx->optlen = 0;
	return BFBPF_VERDICT_ALLOW;
}

/* The verdict on an option sockopt_decode judged (restrictive modes only). */
static __always_inline int sockopt_verdict(struct bpf_sockopt *ctx,
					   const struct bfbpf_sandbox *sandbox, int ask,
					   const struct destination *group,
					   const struct destination *source, struct denial *denial)
{
	if (!sandbox->generation)
		return BFBPF_VERDICT_DENY; /* attached, policy not yet written: fail closed */
	/* The kernel would read a value larger than a page again, after this program. */
	if (ctx->optlen > SOCKOPT_SEEN_MAX)
		return BFBPF_VERDICT_DENY;
	/*
	 * A group (or source) the policy names on every port carries no data of
	 * the sandbox's: it could send there anyway. Loopback does not count
	 * here: only entries of the allow maps do.
	 */
	if (ask == SOCKOPT_GROUP || ask == SOCKOPT_GROUP_SOURCE) {
		if (!allow_maps_contain(sandbox->generation, group, BFBPF_PORT_ANY))
			return BFBPF_VERDICT_DENY;
		if (ask == SOCKOPT_GROUP)
			return BFBPF_VERDICT_ALLOW;
		denial->dst = source;
		return allow_maps_contain(sandbox->generation, source, BFBPF_PORT_ANY)
			       ? BFBPF_VERDICT_ALLOW
			       : BFBPF_VERDICT_DENY;
	}
	return BFBPF_VERDICT_DENY; /* source routes, source lists, unreadable values */
}

/*
 * Socket options that make the kernel send what no hook judges: multicast
 * joins (IGMP/MLD reports, sent by no socket, carry the group and source
 * addresses to the link) and source routes (hops past the first). Refused
 * with EPERM in restrictive modes unless the policy allows the group (and
 * source). Public mode and every other option pass unchanged. 32-bit
 * (compat) setsockopt calls never reach this program (the kernel skips it
 * for them): see docs/threat-model.md.
 */
SEC("cgroup/setsockopt")
int bfbpf_setsockopt(struct bpf_sockopt *ctx)
{
	const struct bfbpf_sandbox *sandbox = sandbox_current();
	struct destination group = {}, source = {};
	struct denial denial = {
		.dst = &group, .family = ctx->level, .type = ctx->optname, .in_task = 1};
	int ask, verdict;

	if (sandbox->generation && (sandbox->flags & BFBPF_SANDBOX_PUBLIC))
		return sockopt_pass(ctx);
	ask = sockopt_decode(ctx, &group, &source);
	if (ask == SOCKOPT_FREE)
		return sockopt_pass(ctx);
	/* After the decode: options no mode judges never need the socket's record. */
	if ((sandbox->flags & BFBPF_SANDBOX_GUARD) && guard_defers_sock(sandbox, ctx->sk))
		return sockopt_pass(ctx);
	verdict = sockopt_verdict(ctx, sandbox, ask, &group, &source, &denial);
	return account(sandbox, sandbox_stats_current(), BFBPF_HOOK_SETSOCKOPT, verdict, &denial);
}
