/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Live probes: a short-lived child placed in the sandbox's cgroup (and its
 * network namespace, when known) before it opens any socket tries what the
 * policy must refuse, and one thing it must allow. No probe sends a packet
 * that the policy allows: a UDP connect sends nothing, and the one sendto
 * goes to a denied address, so it is refused before anything leaves.
 */
#ifndef BFBPF_PROBE_H
#define BFBPF_PROBE_H

#include <stdbool.h>
#include <sys/types.h>
#include <jansson.h>

#include "lib/allowset.h"
#include "lib/policy.h"

struct probe_plan {
	const char *cgroup_path;
	int netns_fd; /* -1: stay in the daemon's namespace */
	const struct policy *policy;
	const struct allowset *allowed; /* what the maps hold for the sandbox */
	bool lsm_available;		/* packet sockets refused per cgroup by the kernel */
};

/*
 * What a probe child does once in the sandbox: joined is 0, or the negative
 * errno of joining the cgroup or namespace (it is not in the sandbox then);
 * it writes its result to write_fd and _exits.
 */
typedef void (*probe_child_fn)(int joined, int write_fd, const void *arg);
/*
 * Fork a child that dies with the daemon, joins the cgroup (before its first
 * socket: its sockets are the sandbox's) and then netns_fd (-1: stay in the
 * daemon's), then calls fn. Returns its pid with *read_fd the read end of
 * its pipe, or -errno (no child).
 */
pid_t probe_spawn(const char *cgroup, int netns_fd, probe_child_fn fn, const void *arg,
		  int *read_fd);
/* Closes read_fd, kills the child and waits for it (what it has not written is not waited for). */
void probe_reap(pid_t child, int read_fd);

/* Runs the probes; appends {"name","ok","detail"} checks. Returns 0 or -errno. */
int probe_run(const struct probe_plan *plan, json_t *checks, bool *complete);

#endif /* BFBPF_PROBE_H */
