/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Containers whose policy follows them: a record per container id holds the
 * container's CURRENT policy (the last attach or update), its cgroup path and
 * identity, in STATE_DIR/containers/ID.json. Runtimes re-create a container's
 * cgroup at the same path on every start (a new cgroup id): an inotify watch
 * on the parent directory sees the new cgroup, and the record's policy is
 * attached to it as soon as a process of the container shows its network
 * namespace. The record goes with detach, or once the runtime says the id is
 * gone (docs/runner-integration.md, "The policy follows the container").
 */
#ifndef BFBPF_CONTAINERS_H
#define BFBPF_CONTAINERS_H

#include <stdbool.h>
#include <jansson.h>

#include "lib/container.h"
#include "lib/policy.h"
#include "sandbox.h"

/* How a container is named in requests, status and records. */
struct container_ref {
	char id[CONTAINER_ID_LENGTH + 1];
	char name[CONTAINER_NAME_MAX];
	char runtime[CONTAINER_RUNTIME_MAX];
};

/* Reads the records (after the sandboxes were adopted); registry->containers is set. */
int containers_open(struct sandbox_registry *registry, const char *state_dir);
void containers_close(struct sandbox_registry *registry);
/* The inotify descriptor, for the daemon's epoll; -1 without records machinery. */
int containers_fd(const struct sandbox_registry *registry);
/* Handles fd if it is the inotify descriptor; returns whether it was. */
bool containers_handle_fd(struct sandbox_registry *registry, int fd);
/* Re-applies the policies of re-created cgroups whose process showed up. */
void containers_poll(struct sandbox_registry *registry);
/* Milliseconds until containers_poll has something to try; -1: nothing waits. */
int containers_wait_ms(const struct sandbox_registry *registry);
/* Periodic: re-arm lost watches, forget the containers the runtime no longer knows. */
void containers_tick(struct sandbox_registry *registry);

/* The recorded policy of a container id, copied into out: 0, or -ENOENT. */
int containers_policy_of(struct sandbox_registry *registry, const char *id, struct policy *out);
/*
 * Record the sandbox's current policy for its container (ref: the container
 * it now confines; NULL: the one it already does). No-op for other sandboxes.
 */
int containers_remember(struct sandbox_registry *registry, struct sandbox *sandbox,
			const struct container_ref *ref);
/* Forget a container's record (detach). */
void containers_forget(struct sandbox_registry *registry, const char *id);
/* {"id", "name", "runtime"} of the sandbox's container, or NULL. */
json_t *containers_json_of(struct sandbox_registry *registry, const struct sandbox *sandbox);

#endif /* BFBPF_CONTAINERS_H */
