// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A sandbox re-adopted without its state file (the daemon was killed between
 * attach's reply and the write, or the file was lost) knows only its cgroup
 * id. Its path is found again from the id, its network namespace from a
 * process of the cgroup, so that it verifies, mends its links and keeps its
 * DNS responder.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/nsfs.h>

#include "lib/cgroup.h"
#include "lib/log.h"
#include "sandbox.h"
#include "sandbox_internal.h"

/* Bounds of the searches: a daemon's start must not depend on the size of the host. */
#define SANDBOX_RECOVER_MAX_DIRS 65536
#define SANDBOX_RECOVER_MAX_DEPTH 64
#define SANDBOX_RECOVER_MAX_PIDS 4096

/*
 * Depth first below path (a buffer of size bytes, extended in place) for
 * the directory whose inode is id. A cgroup's id is its kernfs inode, which
 * readdir reports too: no stat per directory.
 */
static int sandbox_path_search(char *path, size_t size, uint64_t id, int depth,
			       unsigned int *budget)
{
	size_t length = strlen(path);
	struct dirent *entry;
	int err = -ENOENT;
	DIR *dir;

	if (depth > SANDBOX_RECOVER_MAX_DEPTH || !*budget)
		return -ENOENT;
	(*budget)--;
	dir = opendir(path);
	if (!dir)
		return -ENOENT; /* removed meanwhile: not this one */
	while (err == -ENOENT && (entry = readdir(dir))) {
		if (entry->d_type != DT_DIR || !strcmp(entry->d_name, ".") ||
		    !strcmp(entry->d_name, ".."))
			continue;
		if ((size_t)snprintf(path + length, size - length, "/%s", entry->d_name) >=
		    size - length)
			continue;
		if ((uint64_t)entry->d_ino == id)
			err = 0;
		else
			err = sandbox_path_search(path, size, id, depth + 1, budget);
	}
	closedir(dir);
	if (err)
		path[length] = '\0';
	return err;
}

int sandbox_recover_path(struct sandbox *sandbox)
{
	unsigned int budget = SANDBOX_RECOVER_MAX_DIRS;
	char path[PATH_MAX];
	uint64_t found;
	int err;

	err = cgroup_mount_find(path, sizeof(path));
	if (err)
		return err;
	err = cgroup_id_of_path(path, &found);
	if (!err && found != sandbox->cgroup_id)
		err = sandbox_path_search(path, sizeof(path), sandbox->cgroup_id, 0, &budget);
	/* The id as the kernel reports it for that path now (it was a readdir's). */
	if (!err && (cgroup_id_of_path(path, &found) || found != sandbox->cgroup_id))
		err = -ENOENT;
	if (err)
		return err;
	return sandbox_set_path(&sandbox->path, path);
}

void sandbox_adopt_path(struct sandbox *sandbox, const char *path)
{
	if (sandbox->path[0] || sandbox_set_path(&sandbox->path, path))
		return;
	log_info("cgroup id %" PRIu64 " is %s (named by a request)", sandbox->cgroup_id, path);
	sandbox->state_dirty = true;
}

/* Is the namespace of fd owned by the user namespace st names? */
static bool sandbox_ns_owned_by(int fd, const struct stat *user)
{
	int owner = ioctl(fd, NS_GET_USERNS);
	struct stat st;
	bool same;

	if (owner < 0)
		return false;
	same = !fstat(owner, &st) && st.st_dev == user->st_dev && st.st_ino == user->st_ino;
	close(owner);
	return same;
}

/* The /run/netns name of a network namespace (what `ip netns` made), else /proc/PID/ns/net. */
static void sandbox_netns_name(const struct stat *netns, pid_t pid, char *out, size_t size)
{
	DIR *dir = opendir("/run/netns");
	struct dirent *entry;
	struct stat st;

	snprintf(out, size, "/proc/%d/ns/net", (int)pid);
	while (dir && (entry = readdir(dir))) {
		char path[PATH_MAX];

		if (entry->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", entry->d_name);
		if (!stat(path, &st) && st.st_dev == netns->st_dev && st.st_ino == netns->st_ino) {
			snprintf(out, size, "%s", path);
			break;
		}
	}
	if (dir)
		closedir(dir);
}

/* The best process seen so far to take the network namespace from. */
struct sandbox_netns_pick {
	pid_t pid;
	int fd; /* its /proc/PID/ns/net, open */
	bool owned;
	unsigned long long start_time;
	struct stat user; /* the daemon's user namespace */
};

static unsigned long long sandbox_start_time(pid_t pid)
{
	char path[64], text[1024], *end;
	unsigned long long start = ~0ULL;
	FILE *file;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	file = fopen(path, "re");
	if (!file)
		return start;
	if (fgets(text, sizeof(text), file) && (end = strrchr(text, ')')))
		sscanf(end + 1,
		       " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
		       "%*d %llu",
		       &start);
	fclose(file);
	return start;
}

/*
 * Prefer a namespace owned by the daemon's user namespace (one the sandbox
 * made for itself with `unshare -Urn` is not), then the oldest process (the
 * container's first, there at the attach, before anything it started).
 */
static void sandbox_netns_consider(struct sandbox_netns_pick *pick, pid_t pid)
{
	char path[64];
	unsigned long long start;
	bool owned;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	owned = sandbox_ns_owned_by(fd, &pick->user);
	start = sandbox_start_time(pid);
	if (pick->fd >= 0 &&
	    (pick->owned > owned || (pick->owned == owned && pick->start_time <= start))) {
		close(fd);
		return;
	}
	if (pick->fd >= 0)
		close(pick->fd);
	*pick = (struct sandbox_netns_pick){pid, fd, owned, start, pick->user};
}

/* A cgroup_walk's fn: pick is its arg. */
static void sandbox_netns_consider_pid(pid_t pid, void *pick)
{
	sandbox_netns_consider(pick, pid);
}

int sandbox_recover_netns(struct sandbox *sandbox)
{
	struct sandbox_netns_pick pick = {.fd = -1};
	/* Every process of the cgroup and its descendants, up to the bounds. */
	struct cgroup_walk walk = {.max_depth = SANDBOX_RECOVER_MAX_DEPTH,
				   .max_pids = SANDBOX_RECOVER_MAX_PIDS,
				   .fn = sandbox_netns_consider_pid,
				   .arg = &pick};
	char name[PATH_MAX];
	struct stat own, found;
	int err;

	if (!sandbox->path[0])
		return -ENOENT;
	/* A namespace file's inode (and device) tells namespaces apart. */
	if (stat("/proc/self/ns/user", &pick.user) || stat("/proc/self/ns/net", &own))
		return -errno;
	cgroup_walk_procs(&walk, sandbox->path);
	if (pick.fd < 0)
		return -ESRCH; /* no process: nothing tells */
	err = fstat(pick.fd, &found) ? -errno : 0;
	if (err)
		goto cleanup;
	sandbox->netns_unknown = false;
	if (found.st_dev == own.st_dev && found.st_ino == own.st_ino)
		goto cleanup; /* the daemon's own: a sandbox attached without --netns */
	sandbox_netns_name(&found, pick.pid, name, sizeof(name));
	err = sandbox_set_path(&sandbox->netns_path, name);
	if (err)
		goto cleanup;
	sandbox->netns_fd = pick.fd;
	pick.fd = -1;
	log_info("%s: its network namespace is %s (that of process %d)", sandbox->path, name,
		 (int)pick.pid);
cleanup:
	if (pick.fd >= 0)
		close(pick.fd);
	return err;
}

/* The responder's port and family into the sandbox's value; the rest stays as the maps have it. */
static void sandbox_recover_value(struct sandbox_registry *registry, struct sandbox *sandbox)
{
	struct bfbpf_sandbox value;

	if (loader_sandbox_get(registry->loader, sandbox->cgroup_id, &value))
		return; /* detached meanwhile */
	value.dns_port = sandbox->dns_port;
	value.flags = (value.flags & ~BFBPF_SANDBOX_DNS_V6) |
		      (sandbox->dns_v6 ? BFBPF_SANDBOX_DNS_V6 : 0);
	if (loader_sandbox_set(registry->loader, sandbox->cgroup_id, &value))
		log_error("%s: cannot record its responder's port", sandbox->path);
}

void sandbox_recover_responder(struct sandbox_registry *registry, struct sandbox *sandbox)
{
	int err;

	if (!registry->dns || sandbox->responder)
		return;
	if (sandbox->netns_unknown && sandbox_recover_netns(sandbox))
		return; /* still no process: a responder in the daemon's netns would be wrong */
	if (sandbox->netns_path && sandbox->netns_fd < 0)
		return; /* its namespace is gone */
	err = sandbox_dns_start(registry, sandbox, sandbox->dns_port);
	if (err) {
		log_error("%s: cannot start its DNS responder: %s; its DNS queries fail",
			  sandbox->path, strerror(-err));
		return;
	}
	sandbox_recover_value(registry, sandbox);
	log_info("%s: its DNS responder is back (port %u)", sandbox->path, sandbox->dns_port);
}

void sandbox_registry_recover(struct sandbox_registry *registry)
{
	for (size_t i = 0; i < registry->count; i++)
		if (registry->items[i]->netns_unknown)
			sandbox_recover_responder(registry, registry->items[i]);
}
