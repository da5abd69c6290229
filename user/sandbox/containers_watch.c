// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Re-created cgroups of recorded containers: seen by inotify on their parent
 * directory, given the record's CURRENT policy with the network namespace of
 * their first process that has left the host's; and the records read back
 * after a daemon restart.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include "events.h"
#include "lib/cgroup.h"
#include "lib/log.h"

static bool containers_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

/*
 * The netns of the cgroup's first process outside the daemon's namespace
 * (runc's first process in a new cgroup is still in the host's; its child
 * joins the container's). Returns 1 with out set, 0 if only host-namespace
 * processes are there, -ENOENT if no process is yet.
 */
static int containers_netns_of(const char *cgroup, char *out, size_t size)
{
	char procs[PATH_MAX];
	bool any = false;
	long long pid;
	FILE *file;
	int found = 0;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
	file = fopen(procs, "re");
	if (!file)
		return -errno;
	while (!found && fscanf(file, "%lld", &pid) == 1) {
		any = true;
		snprintf(out, size, "/proc/%lld/ns/net", pid);
		if (!containers_netns_is_own(out))
			found = 1;
	}
	fclose(file);
	return found ? 1 : any ? 0 : -ENOENT;
}

static void containers_reapply(struct sandbox_registry *registry, struct container_record *record,
			       const char *netns)
{
	struct sandbox_error error = {.code = "internal"};
	struct sandbox *sandbox = NULL;
	char why[PATH_MAX * 2 + 64];
	struct policy policy;

	record->pending_ms = 0;
	if (cgroup_path_is_protected(record->cgroup, why, sizeof(why))) {
		log_error("container %s: not re-applying its policy: %s", record->ref.name, why);
		return;
	}
	if (policy_copy(&record->policy, &policy)) {
		log_error("container %s: out of memory", record->ref.name);
		return;
	}
	if (sandbox_attach(registry, record->cgroup, netns, &policy, &sandbox, &error)) {
		policy_free(&policy);
		log_error("container %s: re-applying its policy to %s: %s: %s", record->ref.name,
			  record->cgroup, error.code, error.message);
		return;
	}
	snprintf(sandbox->container_id, sizeof(sandbox->container_id), "%s", record->ref.id);
	registry->reapplied++;
	events_record_lifecycle(registry->events, "reapplied", sandbox, record->ref.id);
	log_info("container %s: its cgroup %s was re-created; re-applied its current policy (%s, "
		 "netns %s)",
		 record->ref.name, record->cgroup, policy_mode_name(sandbox->policy.mode),
		 netns ? netns : "the daemon's");
}

/* One waiting record: attach when its netns is known, or give up. */
static void containers_try(struct sandbox_registry *registry, struct container_record *record,
			   uint64_t now)
{
	char netns[64];
	int found;

	if (containers_sandbox_at(registry, record->cgroup) || !containers_exists(record->cgroup)) {
		record->pending_ms = 0; /* the hook was first, or the cgroup went again */
		return;
	}
	if (record->host_netns) {
		containers_reapply(registry, record, NULL);
		return;
	}
	found = containers_netns_of(record->cgroup, netns, sizeof(netns));
	if (found == 1) {
		containers_reapply(registry, record, netns);
	} else if (found == 0 && now - record->pending_ms >= CONTAINERS_HOST_NETNS_AFTER_MS) {
		log_warn("container %s: its processes stay in the host's network namespace",
			 record->ref.name);
		containers_reapply(registry, record, NULL);
	} else if (now - record->pending_ms >= CONTAINERS_GIVE_UP_MS) {
		log_error("container %s: no process in its re-created cgroup %s after %d s; its "
			  "policy is re-applied when the container starts again",
			  record->ref.name, record->cgroup, CONTAINERS_GIVE_UP_MS / 1000);
		record->pending_ms = 0;
	}
}

void containers_poll(struct sandbox_registry *registry)
{
	struct containers *containers = registry->containers;
	uint64_t now = log_monotonic_ms();

	for (size_t i = 0; containers && i < containers->count; i++)
		if (containers->items[i]->pending_ms)
			containers_try(registry, containers->items[i], now);
}

int containers_wait_ms(const struct sandbox_registry *registry)
{
	const struct containers *containers = registry->containers;

	for (size_t i = 0; containers && i < containers->count; i++)
		if (containers->items[i]->pending_ms)
			return CONTAINERS_POLL_MS;
	return -1;
}

static void containers_on_event(struct sandbox_registry *registry,
				const struct inotify_event *event)
{
	struct containers *containers = registry->containers;
	const char *dir = NULL;
	char path[PATH_MAX];

	for (size_t i = 0; i < containers->watch_count; i++) {
		if (containers->watches[i].wd != event->wd)
			continue;
		if (event->mask & IN_IGNORED) { /* the directory went: re-armed by the tick */
			free(containers->watches[i].dir);
			containers->watches[i] = containers->watches[--containers->watch_count];
			return;
		}
		dir = containers->watches[i].dir;
		break;
	}
	if (!dir || !event->len || !(event->mask & IN_ISDIR))
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, event->name);
	for (size_t i = 0; i < containers->count; i++) {
		struct container_record *record = containers->items[i];

		if (strcmp(record->cgroup, path))
			continue;
		if (event->mask & IN_DELETE) {
			record->pending_ms = 0;
			sandbox_registry_reap(registry);
		} else if (event->mask & IN_CREATE) {
			record->pending_ms = log_monotonic_ms() | 1;
			containers_try(registry, record, log_monotonic_ms());
		}
	}
}

bool containers_handle_fd(struct sandbox_registry *registry, int fd)
{
	struct containers *containers = registry->containers;
	char buffer[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t length;

	if (!containers || fd != containers->inotify_fd)
		return false;
	while ((length = read(fd, buffer, sizeof(buffer))) > 0) {
		for (char *at = buffer; at < buffer + length;) {
			const struct inotify_event *event = (const struct inotify_event *)at;

			containers_on_event(registry, event);
			at += sizeof(*event) + event->len;
		}
	}
	return true;
}

/*
 * Periodic: re-arm watches, catch a start whose event was lost, and forget
 * a container whose cgroup is gone once its runtime says the id is too (a
 * pod's container: once its pod's cgroup is gone).
 */
void containers_tick(struct sandbox_registry *registry)
{
	struct containers *containers = registry->containers;
	uint64_t now = log_monotonic_ms();

	for (size_t i = containers ? containers->count : 0; i-- > 0;) {
		struct container_record *record = containers->items[i];
		int exists;

		/* A pod's record outlives its container ids; its pod's cgroup decides. */
		if (containers_pod_gone(record)) {
			log_info("container %s: its pod %s is gone (its cgroup with it)",
				 record->ref.pod_container, record->ref.pod_uid);
			containers_forget(registry, record->ref.id);
			continue;
		}
		containers_watch(containers, record->cgroup);
		if (record->pending_ms)
			continue;
		if (containers_exists(record->cgroup)) {
			if (!containers_sandbox_at(registry, record->cgroup))
				record->pending_ms = now | 1;
			continue;
		}
		if (record->ref.pod_uid[0] || now < record->exists_check_ms)
			continue;
		record->exists_check_ms = now + CONTAINERS_EXISTS_EVERY_MS;
		exists = container_exists(record->ref.runtime, record->ref.id);
		if (exists == 0) {
			log_info("container %s: %s says it no longer exists", record->ref.name,
				 record->ref.runtime);
			containers_forget(registry, record->ref.id);
		}
	}
	containers_poll(registry);
}

static int containers_load_one(struct sandbox_registry *registry, const char *file)
{
	const char *id, *name, *runtime, *cgroup, *pod_uid = "", *pod_container = "";
	struct container_record *record = NULL;
	json_t *state, *policy, *host_netns;
	struct sandbox *sandbox;
	char err_text[256];
	int err = -EINVAL;

	state = json_load_file(file, 0, NULL);
	if (!state)
		return -EINVAL;
	/* pod_uid and pod_container are optional: records written before them have none. */
	if (json_unpack(state, "{s:s, s:s, s:s, s:s, s:o, s:o, s?s, s?s}", "id", &id, "name", &name,
			"runtime", &runtime, "cgroup", &cgroup, "policy", &policy, "host_netns",
			&host_netns, "pod_uid", &pod_uid, "pod_container", &pod_container) ||
	    !container_id_valid(id) || strlen(name) >= CONTAINER_NAME_MAX ||
	    !container_runtime_valid(runtime) ||
	    (pod_uid[0] || pod_container[0]) !=
		    (container_pod_key_valid(pod_uid) && container_pod_key_valid(pod_container)))
		goto cleanup;
	err = -ENOMEM;
	record = calloc(1, sizeof(*record));
	if (!record || !(record->cgroup = strdup(cgroup)))
		goto cleanup;
	snprintf(record->ref.id, sizeof(record->ref.id), "%s", id);
	snprintf(record->ref.name, sizeof(record->ref.name), "%s", name);
	snprintf(record->ref.runtime, sizeof(record->ref.runtime), "%s", runtime);
	snprintf(record->ref.pod_uid, sizeof(record->ref.pod_uid), "%s", pod_uid);
	snprintf(record->ref.pod_container, sizeof(record->ref.pod_container), "%s", pod_container);
	record->host_netns = json_is_true(host_netns);
	err = policy_from_json(policy, &record->policy, err_text, sizeof(err_text));
	if (err) {
		free(record->cgroup);
		free(record);
		record = NULL;
		goto cleanup;
	}
	err = containers_add(registry->containers, record);
	if (err)
		goto cleanup;
	sandbox = containers_sandbox_at(registry, record->cgroup);
	if (sandbox)
		snprintf(sandbox->container_id, sizeof(sandbox->container_id), "%s", id);
	else if (containers_exists(record->cgroup)) /* started again while no daemon ran */
		record->pending_ms = log_monotonic_ms() | 1;
	record = NULL;
cleanup:
	containers_record_free(record);
	json_decref(state);
	return err;
}

static void containers_load(struct sandbox_registry *registry)
{
	struct containers *containers = registry->containers;
	char file[PATH_MAX];
	struct dirent *entry;
	DIR *dir = opendir(containers->dir);

	if (!dir)
		return;
	while ((entry = readdir(dir))) {
		size_t length = strlen(entry->d_name);

		if (length != CONTAINER_ID_LENGTH + 5 ||
		    strcmp(entry->d_name + length - 5, ".json"))
			continue;
		snprintf(file, sizeof(file), "%s/%s", containers->dir, entry->d_name);
		if (containers_load_one(registry, file))
			log_warn("container record %s is unreadable; ignored", file);
	}
	closedir(dir);
	log_info("%zu container records", containers->count);
}

int containers_open(struct sandbox_registry *registry, const char *state_dir)
{
	struct containers *containers = calloc(1, sizeof(*containers));
	int err = -ENOMEM;

	if (!containers)
		return -ENOMEM;
	containers->inotify_fd = -1;
	if (asprintf(&containers->dir, "%s/containers", state_dir) < 0) {
		containers->dir = NULL;
		goto cleanup;
	}
	err = mkdir(containers->dir, 0700) && errno != EEXIST ? -errno : 0;
	if (err)
		goto cleanup;
	containers->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (containers->inotify_fd < 0) {
		err = -errno;
		goto cleanup;
	}
	registry->containers = containers;
	containers_load(registry);
	return 0;
cleanup:
	if (containers->inotify_fd >= 0)
		close(containers->inotify_fd);
	free(containers->dir);
	free(containers);
	return err;
}

int containers_fd(const struct sandbox_registry *registry)
{
	return registry->containers ? registry->containers->inotify_fd : -1;
}

void containers_close(struct sandbox_registry *registry)
{
	struct containers *containers = registry->containers;

	if (!containers)
		return;
	for (size_t i = 0; i < containers->count; i++)
		containers_record_free(containers->items[i]);
	for (size_t i = 0; i < containers->watch_count; i++)
		free(containers->watches[i].dir);
	free(containers->items);
	if (containers->inotify_fd >= 0)
		close(containers->inotify_fd);
	free(containers->dir);
	free(containers);
	registry->containers = NULL;
}
