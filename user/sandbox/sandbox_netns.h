/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The network namespaces a sandbox's (or a guard's) processes live in: a
 * parent cgroup attached without --netns holds containers that each have
 * their own, and the BPF programs redirect their port-53 queries to
 * 127.0.0.1 inside it. A sweep finds them (every process of the cgroup's
 * subtree, /proc/PID/ns/net) and gives the sandbox's responder a socket in
 * each, on its port; a namespace no process uses any more loses it. Until its
 * socket is there, nothing listens: queries fail, closed.
 */
#ifndef BFBPF_SANDBOX_NETNS_H
#define BFBPF_SANDBOX_NETNS_H

#include <stdint.h>
#include <sys/types.h>

#include "sandbox.h"

#define SANDBOX_NETNS_SWEEP_MS 250     /* how often the namespaces in use are looked for */
#define SANDBOX_NETNS_MAX_PIDS 4096    /* processes looked at per sandbox and sweep */
#define SANDBOX_RUNTIME_MAX 256	       /* runtime_network addresses allowed per sandbox */
#define SANDBOX_RUNTIME_REREAD_MS 5000 /* a namespace's resolv.conf is read again after */

/* A namespace in use: its inode number and a process in it. */
struct sandbox_netns_seen {
	uint64_t key;
	pid_t pid;
};

/*
 * Look at one sandbox now: listen in the namespaces in use, forget the
 * others, read their runtime's resolver when the policy has runtime_network.
 * seen (may be NULL) receives up to max namespaces in use; returns how many.
 */
size_t sandbox_netns_sweep(struct sandbox_registry *registry, struct sandbox *sandbox,
			   struct sandbox_netns_seen *seen, size_t max);
/* Every sandbox, when a sweep is due; and how long until the next (-1: none). */
void sandbox_netns_tick(struct sandbox_registry *registry);
int sandbox_netns_wait_ms(const struct sandbox_registry *registry);

/* runtime_network: allow these addresses (the responder checked their subnets). */
int sandbox_runtime_allow(struct sandbox *sandbox, const struct in6_addr *addrs, size_t count);
/* The runtime addresses into an allow set (any port), when the policy has runtime_network. */
int sandbox_runtime_add(const struct sandbox *sandbox, const struct policy *policy,
			struct allowset *set);

/* The runtime addresses as text, for the state file; and read back (bad items are skipped). */
json_t *sandbox_runtime_to_json(const struct sandbox *sandbox);
void sandbox_runtime_from_json(struct sandbox *sandbox, const json_t *array);

#endif /* BFBPF_SANDBOX_NETNS_H */
