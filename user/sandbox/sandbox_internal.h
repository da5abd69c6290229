/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the sandbox*.c files share; not for other modules. */
#ifndef BFBPF_SANDBOX_INTERNAL_H
#define BFBPF_SANDBOX_INTERNAL_H

#include "sandbox.h"

struct sandbox *sandbox_new(void);
void sandbox_free(struct sandbox *sandbox);
int sandbox_registry_add(struct sandbox_registry *registry, struct sandbox *sandbox);
int sandbox_netns_open(struct sandbox *sandbox, const char *netns);
int sandbox_set_path(char **field, const char *text);
/* Its DNS responder (if the registry gives sandboxes one), on want_port if free (0: any). */
int sandbox_dns_start(struct sandbox_registry *registry, struct sandbox *sandbox,
		      uint16_t want_port);
/* Takes over the entries (the set is emptied); deletes them now if it cannot keep them. */
void sandbox_garbage_add(struct sandbox_registry *registry, uint32_t generation,
			 struct allowset *entries);
/* The path of the sandbox's cgroup id, searched under the cgroup2 mount (bounded). */
int sandbox_recover_path(struct sandbox *sandbox);
/*
 * Its network namespace, from a process of its cgroup (or a descendant):
 * -ESRCH if it has none. Clears netns_unknown when it finds one.
 */
int sandbox_recover_netns(struct sandbox *sandbox);
/* Before an update: a responder lost at the adoption comes back, in the netns found now. */
void sandbox_recover_responder(struct sandbox_registry *registry, struct sandbox *sandbox);
void sandbox_state_remove(const struct sandbox_registry *registry, uint64_t cgroup_id);

#endif /* BFBPF_SANDBOX_INTERNAL_H */
