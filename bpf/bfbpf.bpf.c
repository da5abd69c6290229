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

char LICENSE[] SEC("license") = "Dual BSD/GPL";

<<<<<<< HEAD
=======
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

/* A destination, normalised: IPv4 (and mapped/NAT64 IPv6) as ::ffff:a.b.c.d. */
struct destination {
	__u32 addr[4]; /* network byte order words */
	__u32 port;    /* host byte order */
};

static __always_inline void destination_from_ip4(struct destination *dst, __u32 ip4)
{
	dst->addr[0] = 0;
	dst->addr[1] = 0;
	dst->addr[2] = bpf_htonl(0x0000ffff);
	dst->addr[3] = ip4;
}

static __always_inline void destination_from_ip6(struct destination *dst, const __u32 ip6[4])
{
	/* NAT64 well-known prefix 64:ff9b::/96 reaches the IPv4 it embeds. */
	if (ip6[0] == bpf_htonl(0x0064ff9b) && ip6[1] == 0 && ip6[2] == 0) {
		destination_from_ip4(dst, ip6[3]);
		return;
	}
	dst->addr[0] = ip6[0];
	dst->addr[1] = ip6[1];
	dst->addr[2] = ip6[2];
	dst->addr[3] = ip6[3];
}

static __always_inline int destination_is_ip4(const struct destination *dst)
{
	return dst->addr[0] == 0 && dst->addr[1] == 0 && dst->addr[2] == bpf_htonl(0x0000ffff);
}

/*
 * Destinations the kernel delivers to this host itself: 127.0.0.0/8, ::1,
 * and the unspecified addresses (a connect to 0.0.0.0 or :: reaches local
 * listeners), so that --no-loopback closes all of them.
 */
static __always_inline int destination_is_loopback(const struct destination *dst)
{
	if (destination_is_ip4(dst)) {
		__u8 first = bpf_ntohl(dst->addr[3]) >> 24;
		return first == 127 || dst->addr[3] == 0;
	}
	if (dst->addr[0] || dst->addr[1] || dst->addr[2])
		return 0;
	return dst->addr[3] == 0 || dst->addr[3] == bpf_htonl(1);
}

/* 127.0.0.1 (as ::ffff:127.0.0.1) or ::1: where the DNS responder listens. */
static __always_inline int destination_is_responder(const struct destination *dst)
{
	if (destination_is_ip4(dst))
		return dst->addr[3] == bpf_htonl(0x7f000001);
	return !dst->addr[0] && !dst->addr[1] && !dst->addr[2] && dst->addr[3] == bpf_htonl(1);
}

/*
 * The sandbox a program runs for: the storage of the cgroup it is attached
 * at. Never NULL while the program is attached; its generation is 0 until
 * the daemon has written the policy.
 */
static __always_inline const struct bfbpf_sandbox *sandbox_current(void)
{
	return bpf_get_local_storage(&sandboxes, 0);
}

/* This CPU's counters of that sandbox; never NULL while the program is attached. */
static __always_inline struct bfbpf_stats *sandbox_stats_current(void)
{
	return bpf_get_local_storage(&sandbox_stats, 0);
}

/* What a denial event says beyond the sandbox and the hook. */
struct denial {
	const struct destination *dst; /* NULL for socket creation */
	__u8 protocol;
	__u32 family, type;
	int in_task; /* pid and comm are the sender's (not for egress) */
};

#define EVENT_TOKEN_NS (1000000000ULL / BFBPF_EVENTS_PER_SECOND)

/*
 * A token of this CPU's share of the sandbox's event rate, if one is left.
 * A sandbox hammering a denied address lands here on every attempt: the
 * common path is a compare; the division runs only when a refill is due
 * (100 times a second at most).
 */
static __always_inline int event_token(struct bfbpf_stats *stats)
{
	__u64 now, elapsed;

	/*
	 * An empty bucket looks at the clock on one limited event in 16 only: a
	 * refill comes at most 16 attempts late, and a hammering loop is spared
	 * the clock read on almost every attempt.
	 */
	if (!stats->tokens && (stats->events_limited & 15))
		return 0;
	now = bpf_ktime_get_ns();
	elapsed = now - stats->tokens_at_ns;
	if (!stats->tokens && elapsed < EVENT_TOKEN_NS)
		return 0;
	if (elapsed >= EVENT_TOKEN_NS) {
		__u64 earned = elapsed >= BFBPF_EVENTS_PER_SECOND * EVENT_TOKEN_NS
				       ? BFBPF_EVENTS_PER_SECOND
				       : elapsed / EVENT_TOKEN_NS;

		stats->tokens += earned;
		if (stats->tokens > BFBPF_EVENTS_PER_SECOND)
			stats->tokens = BFBPF_EVENTS_PER_SECOND;
		stats->tokens_at_ns = now;
	}
	stats->tokens--;
	return 1;
}

static __always_inline void event_emit(const struct bfbpf_sandbox *sandbox,
				       struct bfbpf_stats *stats, __u8 hook,
				       const struct denial *denial)
{
	struct bfbpf_event *event;

	if (!(sandbox->flags & BFBPF_SANDBOX_EVENTS))
		return;
	if (!event_token(stats)) {
		stats->events_limited++;
		return;
	}
	event = bpf_ringbuf_reserve(&events, sizeof(*event), 0);
	if (!event) {
		stats->events_lost++;
		return;
	}
	__builtin_memset(event, 0, sizeof(*event));
	event->time_ns = bpf_ktime_get_ns();
	event->cgroup_id = sandbox->cgroup_id;
	if (denial->in_task) {
		__u64 pid_tgid = bpf_get_current_pid_tgid();

		event->pid = (__u32)pid_tgid;
		event->tgid = pid_tgid >> 32;
		bpf_get_current_comm(event->comm, sizeof(event->comm));
	}
	if (denial->dst) {
		__builtin_memcpy(event->addr, denial->dst->addr, sizeof(event->addr));
		event->port = denial->dst->port;
	}
	event->hook = hook;
	event->protocol = denial->protocol;
	event->family = denial->family;
	event->type = denial->type;
	bpf_ringbuf_submit(event, 0);
	stats->events_sent++;
}

/* Counts the verdict (per CPU, no atomics needed) and reports a denial. */
static __always_inline int account(const struct bfbpf_sandbox *sandbox, struct bfbpf_stats *stats,
				   __u8 hook, int verdict, const struct denial *denial)
{
	if (hook >= BFBPF_HOOK_COUNT)
		return verdict;
	if (verdict == BFBPF_VERDICT_ALLOW) {
		stats->allowed[hook]++;
		return verdict;
	}
	stats->denied[hook]++;
	event_emit(sandbox, stats, hook, denial);
	return verdict;
}

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

/* Should this connect or send go to the sandbox's DNS responder instead? */
static __always_inline int dns_redirected(const struct bfbpf_sandbox *sandbox, __u32 port)
{
	return sandbox->generation && sandbox->dns_port &&
	       !(sandbox->flags & BFBPF_SANDBOX_PUBLIC) && port == BFBPF_DNS_PORT;
}

/* Remembers the original destination for recvmsg and getpeername; NULL: deny. */
static __always_inline struct bfbpf_dns_origin *
dns_origin_record(struct bpf_sock_addr *ctx, const struct bfbpf_sandbox *sandbox, __u32 family)
{
	struct bfbpf_dns_origin *origin;
	struct bpf_sock *sk = ctx->sk;

	if (!sk)
		return NULL;
	origin = bpf_sk_storage_get(&dns_origins, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!origin)
		return NULL;
	origin->port = (__u16)ctx->user_port;
	origin->responder_port = sandbox->dns_port;
	origin->family = family;
	return origin;
}

>>>>>>> loopports
static __always_inline int judge_sock_addr4(struct bpf_sock_addr *ctx, __u8 hook)
{
	const struct bfbpf_sandbox *sandbox = sandbox_current();
	struct bfbpf_stats *stats = sandbox_stats_current();
	struct bfbpf_dns_origin *origin;
	struct destination dst;
	struct denial denial = {.dst = &dst, .protocol = ctx->protocol, .in_task = 1};

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
SEC("cgroup_skb/egress")
int bfbpf_egress(struct __sk_buff *skb)
{
	const struct bfbpf_sandbox *sandbox = sandbox_current();
	struct bfbpf_stats *stats;
	struct destination dst = {};
	struct denial denial = {.dst = &dst}; /* softirq, maybe: no pid, no comm */
	int extra = 0;

	if (sandbox->generation && (sandbox->flags & BFBPF_SANDBOX_PUBLIC))
		return BFBPF_VERDICT_ALLOW;
	stats = sandbox_stats_current();
	if (packet_destination(skb, &dst, &denial.protocol, &extra) ||
	    (extra && packet_source_routed(skb)))
		return account(sandbox, stats, BFBPF_HOOK_EGRESS, BFBPF_VERDICT_DENY, &denial);
	return account(sandbox, stats, BFBPF_HOOK_EGRESS, policy_verdict(sandbox, stats, &dst),
		       &denial);
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
	verdict = sockopt_verdict(ctx, sandbox, ask, &group, &source, &denial);
	return account(sandbox, sandbox_stats_current(), BFBPF_HOOK_SETSOCKOPT, verdict, &denial);
}
