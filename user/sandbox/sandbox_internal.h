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
void sandbox_state_remove(const struct sandbox_registry *registry, uint64_t cgroup_id);

#endif /* BFBPF_SANDBOX_INTERNAL_H */
