/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What containers.c (records) and containers_watch.c (re-created cgroups) share. */
#ifndef BFBPF_CONTAINERS_INTERNAL_H
#define BFBPF_CONTAINERS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "containers.h"

/* A re-created cgroup's process shows its netns within milliseconds; these bound the wait. */
#define CONTAINERS_POLL_MS 5
#define CONTAINERS_HOST_NETNS_AFTER_MS 300 /* only the host's netns seen: a host-network one */
#define CONTAINERS_GIVE_UP_MS 10000	   /* no process at all: the runtime failed to start it */
/* How often the runtime is asked whether a stopped container still exists. */
#define CONTAINERS_EXISTS_EVERY_MS 10000
#define CONTAINERS_MAX_WATCHES 256

struct container_record {
	struct container_ref ref;
	char *cgroup;	      /* the cgroup path, the same at every start */
	struct policy policy; /* the CURRENT policy */
	bool host_netns;      /* registered in the daemon's own network namespace */
	uint64_t pending_ms;  /* its cgroup was re-created then; 0: nothing waits */
	uint64_t exists_check_ms;
};

struct containers_watch {
	int wd;
	char *dir;
};

struct containers {
	char *dir; /* STATE_DIR/containers */
	int inotify_fd;
	size_t count;
	struct container_record **items;
	size_t watch_count;
	struct containers_watch watches[CONTAINERS_MAX_WATCHES];
};

struct container_record *containers_find(const struct containers *containers, const char *id);
/* The record of this pod key (both non-empty), or NULL. */
struct container_record *containers_find_pod(const struct containers *containers,
					     const char *pod_uid, const char *pod_container);
/* Is the record's cgroup in the same parent directory (the pod's cgroup) as cgroup? */
bool containers_same_pod_cgroup(const struct container_record *record, const char *cgroup);
/*
 * A pod's record whose container cgroup and pod cgroup (its parent) are both
 * gone: the pod was deleted. Records without a pod key are never "pod gone".
 */
bool containers_pod_gone(const struct container_record *record);
void containers_record_free(struct container_record *record);
void containers_file(const struct containers *containers, const char *id, char *out, size_t size);
/* Watch the directory the cgroup is re-created in (one watch per directory). */
void containers_watch(struct containers *containers, const char *cgroup);
int containers_add(struct containers *containers, struct container_record *record);
/* The attached sandbox of this cgroup path (by its current id), or NULL. */
struct sandbox *containers_sandbox_at(struct sandbox_registry *registry, const char *path);
/* Is this netns file (NULL: none) the daemon's own network namespace? */
bool containers_netns_is_own(const char *netns);

#endif /* BFBPF_CONTAINERS_INTERNAL_H */
