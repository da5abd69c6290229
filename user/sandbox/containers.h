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
 *
 * Kubernetes restarts a container as a NEW container id in the same pod: a
 * record that carries a pod key (the pod's uid and the container's name in it,
 * from CRI-O's annotations through the OCI hook) is found by that key too, and
 * the new id takes it over, with its CURRENT policy (docs/kubernetes.md,
 * "Restarts"). Such a record goes with detach, or once its pod's cgroup (the
 * parent of the container's) is gone.
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
	/* Kubernetes: the pod's uid and the container's name in its pod; "" for none. */
	char pod_uid[CONTAINER_POD_KEY_MAX];
	char pod_container[CONTAINER_POD_KEY_MAX];
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

/*
 * The recorded policy of a container, copied into out: its id's record, else
 * (ref has a pod key) the record of the same pod key, if that record's cgroup
 * is in the same pod cgroup (the parent of cgroup, the resolved path of the
 * container's); *by_pod says which. 0; -ENOENT: none; -EXDEV: the pod key's
 * record is of another pod cgroup (a forged or mistaken pod uid).
 */
int containers_policy_of(struct sandbox_registry *registry, const struct container_ref *ref,
			 const char *cgroup, struct policy *out, bool *by_pod);
/*
 * Record the sandbox's current policy for its container (ref: the container
 * it now confines; NULL: the one it already does). No-op for other sandboxes.
 * A new id with a pod key takes over its pod key's record (the file is
 * renamed to the new id).
 */
int containers_remember(struct sandbox_registry *registry, struct sandbox *sandbox,
			const struct container_ref *ref);
/* Forget a container's record (detach). */
void containers_forget(struct sandbox_registry *registry, const char *id);
/* Forget the records of ref's id and of its pod key, if it has one (detach). */
void containers_forget_ref(struct sandbox_registry *registry, const struct container_ref *ref);
/* {"id", "name", "runtime", "pod_uid"?, "pod_container"?} of the sandbox's container, or NULL. */
json_t *containers_json_of(struct sandbox_registry *registry, const struct sandbox *sandbox);

#endif /* BFBPF_CONTAINERS_H */
