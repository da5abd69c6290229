/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Resolver: c-ares on the daemon's own epoll (its sockets are registered
 * through c-ares' socket-state callback, its timeouts and the name table's
 * deadlines share one timerfd), feeding answers into the name table. No
 * thread, no blocking call: a slow upstream delays nothing else.
 */
#ifndef BFBPF_RESOLVER_H
#define BFBPF_RESOLVER_H

#include <stdbool.h>
#include <stdint.h>

#include "names.h"
#include "lib/policy.h"

#define RESOLVER_MAX_SERVERS 8
/* Documented bound: attach and update wait this long for first answers. */
#define RESOLVER_SETTLE_TIMEOUT_MS 5000
/* Names resolving at once (two queries each); the others wait their turn. */
#define RESOLVER_MAX_ROUNDS 64

struct resolver_options {
	const char *servers[RESOLVER_MAX_SERVERS]; /* "ADDR[:PORT]"; none: resolv.conf */
	int server_count;
	struct names_config names;
	int query_timeout_ms; /* per try; default 2000 */
};

struct resolver;

/* epoll_fd: the loop to register with (-1: the resolver makes its own, for resolve/run). */
int resolver_open(const struct resolver_options *options, int epoll_fd, struct resolver **out);
void resolver_close(struct resolver *resolver);

struct names_table *resolver_names(struct resolver *resolver);
/* The resolver's timerfd, to be watched for EPOLLIN by the caller's loop. */
int resolver_timer_fd(const struct resolver *resolver);
/* Does this fd belong to the resolver? Then it handles the event. */
bool resolver_handle_fd(struct resolver *resolver, int fd, uint32_t events);
/* Start rounds that are due, expire addresses, re-arm the timer. */
void resolver_tick(struct resolver *resolver);
/* Did any name's addresses change since the last call? */
bool resolver_take_changes(struct resolver *resolver);

/* Reference (and start resolving) or release every name a policy names. */
int resolver_policy_ref(struct resolver *resolver, const struct policy *policy);
void resolver_policy_unref(struct resolver *resolver, const struct policy *policy);
/* Has every name of the policy completed at least one round? */
bool resolver_policy_settled(struct resolver *resolver, const struct policy *policy);
/*
 * The first name of the policy that no upstream answered: its first round is
 * not over, or it ended in a failure (timeout, server failure, unreachable)
 * with no address. NXDOMAIN is an answer: such a name is not returned (its
 * subdomains may exist). NULL if every name was answered; else the name,
 * and *why the failure as text.
 */
const char *resolver_policy_unanswered(struct resolver *resolver, const struct policy *policy,
				       const char **why);
/* Run the resolver's own loop until the policy settles or timeout_ms passes (no daemon). */
int resolver_wait_settled(struct resolver *resolver, const struct policy *policy, int timeout_ms);

/* Names of a policy that resolution uses: allowed_hosts names and model endpoint names. */
bool resolver_policy_entry_is_name(const struct policy_entry *entry);

uint64_t resolver_now(void);

#endif /* BFBPF_RESOLVER_H */
