// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Container records: the policy that follows a container across restarts (containers.h). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "containers.h"
#include "containers_internal.h"
#include "sandbox_internal.h"
#include "events.h"
#include "lib/cgroup.h"
#include "lib/log.h"

struct container_record *containers_find(const struct containers *containers, const char *id)
{
	for (size_t i = 0; containers && i < containers->count; i++)
		if (!strcmp(containers->items[i]->ref.id, id))
			return containers->items[i];
	return NULL;
}

struct container_record *containers_find_pod(const struct containers *containers,
					     const char *pod_uid, const char *pod_container)
{
	if (!pod_uid[0] || !pod_container[0])
		return NULL;
	for (size_t i = 0; containers && i < containers->count; i++)
		if (!strcmp(containers->items[i]->ref.pod_uid, pod_uid) &&
		    !strcmp(containers->items[i]->ref.pod_container, pod_container))
			return containers->items[i];
	return NULL;
}

/* The length of path's parent directory (up to its last '/'); 0 without one. */
static size_t containers_parent_length(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash != path ? (size_t)(slash - path) : 0;
}

bool containers_same_pod_cgroup(const struct container_record *record, const char *cgroup)
{
	size_t length = containers_parent_length(record->cgroup);

	return length && length == containers_parent_length(cgroup) &&
	       !strncmp(record->cgroup, cgroup, length);
}

bool containers_pod_gone(const struct container_record *record)
{
	char parent[PATH_MAX];
	struct stat st;

	if (!record->ref.pod_uid[0] || !stat(record->cgroup, &st))
		return false;
	snprintf(parent, sizeof(parent), "%.*s", (int)containers_parent_length(record->cgroup),
		 record->cgroup);
	return !parent[0] || stat(parent, &st);
}

void containers_record_free(struct container_record *record)
{
	if (!record)
		return;
	free(record->cgroup);
	policy_free(&record->policy);
	free(record);
}

void containers_file(const struct containers *containers, const char *id, char *out, size_t size)
{
	snprintf(out, size, "%s/%s.json", containers->dir, id);
}

/* Atomic (write then rename), as the sandboxes' state files. */
static int containers_write(const struct containers *containers,
			    const struct container_record *record)
{
	char file[PATH_MAX], temporary[PATH_MAX + 8];
	json_t *state;
	int err = 0;

	containers_file(containers, record->ref.id, file, sizeof(file));
	snprintf(temporary, sizeof(temporary), "%s.tmp", file);
	state = json_pack("{s:s, s:s, s:s, s:s, s:o, s:b}", "id", record->ref.id, "name",
			  record->ref.name, "runtime", record->ref.runtime, "cgroup",
			  record->cgroup, "policy", policy_to_json(&record->policy), "host_netns",
			  record->host_netns);
	if (state && record->ref.pod_uid[0] &&
	    (json_object_set_new(state, "pod_uid", json_string(record->ref.pod_uid)) ||
	     json_object_set_new(state, "pod_container", json_string(record->ref.pod_container)))) {
		json_decref(state);
		state = NULL;
	}
	if (!state)
		return -ENOMEM;
	if (json_dump_file(state, temporary, JSON_COMPACT | JSON_SORT_KEYS) ||
	    rename(temporary, file))
		err = errno ? -errno : -EIO;
	json_decref(state);
	if (err)
		log_error("writing container record %s: %s", file, strerror(-err));
	return err;
}

/* Watch the directory the cgroup is re-created in (one watch per directory). */
void containers_watch(struct containers *containers, const char *cgroup)
{
	char dir[PATH_MAX], *slash;
	int wd;

	snprintf(dir, sizeof(dir), "%s", cgroup);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	wd = inotify_add_watch(containers->inotify_fd, dir, IN_CREATE | IN_DELETE | IN_ONLYDIR);
	if (wd < 0) {
		log_warn("cannot watch %s for re-created cgroups: %s", dir, strerror(errno));
		return;
	}
	for (size_t i = 0; i < containers->watch_count; i++)
		if (containers->watches[i].wd == wd)
			return;
	if (containers->watch_count == CONTAINERS_MAX_WATCHES) {
		log_warn("too many cgroup parents to watch; %s is not watched", dir);
		return;
	}
	containers->watches[containers->watch_count].wd = wd;
	containers->watches[containers->watch_count].dir = strdup(dir);
	if (containers->watches[containers->watch_count].dir)
		containers->watch_count++;
}

int containers_add(struct containers *containers, struct container_record *record)
{
	struct container_record **grown =
		realloc(containers->items, (containers->count + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	containers->items = grown;
	containers->items[containers->count++] = record;
	containers_watch(containers, record->cgroup);
	return 0;
}

struct sandbox *containers_sandbox_at(struct sandbox_registry *registry, const char *path)
{
	uint64_t id;

	if (cgroup_id_of_path(path, &id))
		return NULL;
	return sandbox_find(registry, id);
}

/* Is this netns file the daemon's own network namespace? */
bool containers_netns_is_own(const char *netns)
{
	struct stat own, other;

	if (!netns)
		return true;
	return !stat("/proc/self/ns/net", &own) && !stat(netns, &other) &&
	       own.st_ino == other.st_ino && own.st_dev == other.st_dev;
}

/* A new record of the sandbox's container (ref), with copy as its policy (taken). */
static struct container_record *containers_record_new(struct containers *containers,
						      const struct sandbox *sandbox,
						      const struct container_ref *ref,
						      struct policy *copy)
{
	struct container_record *record = calloc(1, sizeof(*record));

	if (!record || !(record->cgroup = strdup(sandbox->path))) {
		free(record);
		policy_free(copy);
		return NULL;
	}
	record->ref = *ref;
	record->policy = *copy;
	if (containers_add(containers, record)) {
		containers_record_free(record);
		return NULL;
	}
	return record;
}

/*
 * A new id of a pod's container (Kubernetes restarted it) takes over the
 * record of its pod key; old receives the old id, whose file goes once the
 * new one is written. A sandbox that still names the old id (an old cgroup
 * not yet removed) no longer has a record.
 */
static void containers_take_over(struct sandbox_registry *registry, struct container_record *record,
				 const char *id, char *old, size_t old_size)
{
	snprintf(old, old_size, "%s", record->ref.id);
	for (size_t i = 0; i < registry->count; i++)
		if (!strcmp(registry->items[i]->container_id, record->ref.id))
			registry->items[i]->container_id[0] = '\0';
	log_info("container %s: pod %s restarted it as %s (was %s); its record follows",
		 record->ref.pod_container, record->ref.pod_uid, id, record->ref.id);
	snprintf(record->ref.id, sizeof(record->ref.id), "%s", id);
}

/* The record ref names (its id, else its pod key in the same pod cgroup), or NULL. */
static struct container_record *containers_record_of(struct sandbox_registry *registry,
						     const struct container_ref *ref,
						     const char *cgroup)
{
	struct container_record *record = containers_find(registry->containers, ref->id);

	if (record || !ref->pod_uid[0])
		return record;
	record = containers_find_pod(registry->containers, ref->pod_uid, ref->pod_container);
	return record && containers_same_pod_cgroup(record, cgroup) ? record : NULL;
}

int containers_remember(struct sandbox_registry *registry, struct sandbox *sandbox,
			const struct container_ref *ref)
{
	struct containers *containers = registry->containers;
	char old[CONTAINER_ID_LENGTH + 1] = "", file[PATH_MAX];
	struct container_record *record;
	struct container_ref own;
	struct policy copy;
	int err;

	if (!containers || !sandbox->policy_known || (!ref && !sandbox->container_id[0]))
		return 0;
	record = ref ? containers_record_of(registry, ref, sandbox->path)
		     : containers_find(containers, sandbox->container_id);
	if (!record && !ref)
		return 0; /* its record went to a newer id of its pod (containers_take_over) */
	err = policy_copy(&sandbox->policy, &copy);
	if (err)
		return err;
	if (!record) {
		own = *ref;
		/* One record per pod key: another pod cgroup's claim of it is not recorded. */
		if (containers_find_pod(containers, own.pod_uid, own.pod_container))
			own.pod_uid[0] = own.pod_container[0] = '\0';
		record = containers_record_new(containers, sandbox, &own, &copy);
		if (!record)
			return -ENOMEM;
	} else {
		if (ref && strcmp(record->ref.id, ref->id))
			containers_take_over(registry, record, ref->id, old, sizeof(old));
		policy_free(&record->policy);
		record->policy = copy;
		/* A hook knows no name for Podman and Docker: keep the one a command gave. */
		if (ref && ref->name[0])
			snprintf(record->ref.name, sizeof(record->ref.name), "%s", ref->name);
		if (ref)
			snprintf(record->ref.runtime, sizeof(record->ref.runtime), "%s",
				 ref->runtime);
		if (strcmp(record->cgroup, sandbox->path) &&
		    !sandbox_set_path(&record->cgroup, sandbox->path))
			containers_watch(containers, record->cgroup);
	}
	record->host_netns = containers_netns_is_own(sandbox->netns_path);
	record->pending_ms = 0;
	snprintf(sandbox->container_id, sizeof(sandbox->container_id), "%s", record->ref.id);
	err = containers_write(containers, record);
	/* The old id's file goes only once the new one holds the record (a crash keeps one). */
	if (!err && old[0]) {
		containers_file(containers, old, file, sizeof(file));
		unlink(file);
	}
	return err;
}

void containers_forget(struct sandbox_registry *registry, const char *id)
{
	struct containers *containers = registry->containers;
	char file[PATH_MAX];

	for (size_t i = 0; containers && i < containers->count; i++) {
		if (strcmp(containers->items[i]->ref.id, id))
			continue;
		containers_file(containers, id, file, sizeof(file));
		unlink(file);
		log_info("forgot container %s (%s)", containers->items[i]->ref.name, id);
		containers_record_free(containers->items[i]);
		containers->items[i] = containers->items[--containers->count];
		return;
	}
}

void containers_forget_ref(struct sandbox_registry *registry, const struct container_ref *ref)
{
	struct container_record *record;

	containers_forget(registry, ref->id);
	record = containers_find_pod(registry->containers, ref->pod_uid, ref->pod_container);
	if (record)
		containers_forget(registry, record->ref.id);
}

int containers_policy_of(struct sandbox_registry *registry, const struct container_ref *ref,
			 const char *cgroup, struct policy *out, bool *by_pod)
{
	struct container_record *record = containers_find(registry->containers, ref->id);

	*by_pod = false;
	if (!record && ref->pod_uid[0]) {
		record =
			containers_find_pod(registry->containers, ref->pod_uid, ref->pod_container);
		if (record && !containers_same_pod_cgroup(record, cgroup))
			return -EXDEV;
		*by_pod = record != NULL;
	}
	return record ? policy_copy(&record->policy, out) : -ENOENT;
}

json_t *containers_json_of(struct sandbox_registry *registry, const struct sandbox *sandbox)
{
	struct container_record *record;
	json_t *object;

	if (!sandbox->container_id[0])
		return NULL;
	record = containers_find(registry->containers, sandbox->container_id);
	if (!record)
		return json_pack("{s:s}", "id", sandbox->container_id);
	object = json_pack("{s:s, s:s, s:s}", "id", record->ref.id, "name", record->ref.name,
			   "runtime", record->ref.runtime);
	if (object && record->ref.pod_uid[0]) {
		json_object_set_new(object, "pod_uid", json_string(record->ref.pod_uid));
		json_object_set_new(object, "pod_container",
				    json_string(record->ref.pod_container));
	}
	return object;
}
