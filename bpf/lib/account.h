/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The sandbox a program runs for, its counters, and the denial events.
 */
#ifndef BFBPF_LIB_ACCOUNT_H
#define BFBPF_LIB_ACCOUNT_H

#include "lib/common.h"
#include "lib/maps.h"
#include "lib/destination.h"
#include "lib/hello.h"
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
	int in_task;			   /* pid and comm are the sender's (not for egress) */
	__u8 reason;			   /* enum bfbpf_reason: a judged flow's refusal */
	const struct bfbpf_sni_flow *flow; /* its state: the name judged */
	__u32 saddr[4];			   /* its socket's source address (IPv4 mapped) */
	__u16 sport;			   /* and port, host order */
};

/* A judged flow's name and socket, into its event. */
static __always_inline void event_flow(struct bfbpf_event *event, const struct denial *denial)
{
	event->reason = denial->reason;
	if (denial->flow && denial->flow->name_len && denial->flow->name_len <= 253) {
		event->name_len = denial->flow->name_len;
		bfbpf_name_copy(event->name, denial->flow->name);
	}
	__builtin_memcpy(event->saddr, denial->saddr, sizeof(event->saddr));
	event->sport = denial->sport;
}

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
		if (denial->dst->nat64) { /* as the sandbox spelled it, not the IPv4 it carries */
			__u32 *words = (__u32 *)event->addr;

			words[0] = bpf_htonl(NAT64_WORD0);
			words[2] = 0;
		}
		event->port = denial->dst->port;
	}
	event->hook = hook;
	event->protocol = denial->protocol;
	event->family = denial->family;
	event->type = denial->type;
	/* A guard denies only what no registration below it covers. */
	if (sandbox->flags & BFBPF_SANDBOX_GUARD)
		event->flags = BFBPF_EVENT_UNREGISTERED;
	if (denial->reason)
		event_flow(event, denial);
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

#endif /* BFBPF_LIB_ACCOUNT_H */
