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

/* Runs the probes; appends {"name","ok","detail"} checks. Returns 0 or -errno. */
int probe_run(const struct probe_plan *plan, json_t *checks, bool *complete);

#endif /* BFBPF_PROBE_H */
