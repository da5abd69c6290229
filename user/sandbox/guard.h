/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Guards: a cgroup subtree closed by default. A guard is a sandbox with the
 * guard role (the same programs, links and state; BFBPF_SANDBOX_GUARD in its
 * value): below it every cgroup gets the guard's policy, except where a
 * registered sandbox is (every attached sandbox is registered), which gets
 * its own instead (bpf/lib/guard.h).
 */
#ifndef BFBPF_GUARD_H
#define BFBPF_GUARD_H

#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "sandbox.h"

/* Make a sandbox being attached a guard: its level, which must be 1 to 15. */
int guard_role_set(struct sandbox *sandbox, struct sandbox_error *error);
/*
 * Put the cgroup at path under policy as a guard, or replace the policy of
 * the guard already there (the same atomic flip as an update). Refused
 * ("protected_cgroup") for the cgroup2 root and the cgroups holding the
 * daemon or PID 1. Takes the policy on success, as sandbox_attach does.
 */
int guard_set(struct sandbox_registry *registry, const char *path, struct policy *policy,
	      struct sandbox **out, bool *created, struct sandbox_error *error);
/* Remove a guard (and only a guard): unregistered, then its links go. */
int guard_unset(struct sandbox_registry *registry, struct sandbox *guard,
		struct sandbox_error *error);
/*
 * After adoption: the registered map holds exactly the adopted sandboxes and
 * guards whose every link is in place (a stale id is deleted: a guard would
 * defer to a cgroup with no programs of its own).
 */
int guard_registrations_sync(struct sandbox_registry *registry);
/* Sockets, connects, sends and packets a guard refused (all are for unregistered cgroups). */
uint64_t guard_refusals(struct sandbox_registry *registry, const struct sandbox *guard);
/* {"level", "refused", "registered_below"} for status. */
json_t *guard_to_json(struct sandbox_registry *registry, const struct sandbox *guard);
/* Prometheus lines: bfbpf_guards and bfbpf_guard_refusals_total. */
void guard_metrics(struct sandbox_registry *registry, FILE *out);

#endif /* BFBPF_GUARD_H */
