// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "cgroup.h"

int cgroup_mount_find(char *out, size_t size)
{
	FILE *mountinfo = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t capacity = 0;
	int err = -ENOENT;

	if (!mountinfo)
		return -errno;
	while (getline(&line, &capacity, mountinfo) > 0) {
		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPER" */
		char root[PATH_MAX], mountpoint[PATH_MAX], fstype[64];
		const char *separator = strstr(line, " - ");

		if (!separator || sscanf(separator, " - %63s", fstype) != 1 ||
		    strcmp(fstype, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, mountpoint) != 2)
			continue;
		if (strcmp(root, "/"))
			continue; /* a bind mount of a subtree: not the whole hierarchy */
		if ((size_t)snprintf(out, size, "%s", mountpoint) >= size) {
			err = -ENAMETOOLONG;
			break;
		}
		err = 0;
		break;
	}
	free(line);
	fclose(mountinfo);
	return err;
}

int cgroup_resolve(const char *given, char *out, size_t size)
{
	char mount[PATH_MAX], joined[PATH_MAX], real[PATH_MAX];
	struct statfs fs;
	size_t mount_length;
	int err;

	err = cgroup_mount_find(mount, sizeof(mount));
	if (err)
		return err;
	if (given[0] == '/')
		err = snprintf(joined, sizeof(joined), "%s", given);
	else
		err = snprintf(joined, sizeof(joined), "%s/%s", mount, given);
	if (err < 0 || (size_t)err >= sizeof(joined))
		return -ENAMETOOLONG;
	if (!realpath(joined, real))
		return -errno;
	if (statfs(real, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC)
		return -EINVAL;
	mount_length = strlen(mount);
	if (strncmp(real, mount, mount_length) ||
	    (real[mount_length] != '/' && real[mount_length] != '\0'))
		return -EINVAL;
	if ((size_t)snprintf(out, size, "%s", real) >= size)
		return -ENAMETOOLONG;
	return 0;
}

int cgroup_of_pid(pid_t pid, char *out, size_t size)
{
	char path[64], *line = NULL, mount[PATH_MAX];
	size_t capacity = 0;
	FILE *file;
	int err = -ENOENT;

	err = cgroup_mount_find(mount, sizeof(mount));
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	file = fopen(path, "re");
	if (!file)
		return errno == ENOENT ? -ESRCH : -errno;
	err = -ENOENT;
	while (getline(&line, &capacity, file) > 0) {
		/* The cgroup v2 line is "0::/path". */
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		if ((size_t)snprintf(out, size, "%s%s", mount,
				     strcmp(line + 3, "/") ? line + 3 : "") >= size)
			err = -ENAMETOOLONG;
		else
			err = 0;
		break;
	}
	free(line);
	fclose(file);
	return err;
}

int cgroup_id_of_path(const char *path, uint64_t *id)
{
	struct stat st;

	/* On cgroup2 the inode number is the kernfs node id, which is the cgroup id. */
	if (stat(path, &st))
		return -errno;
	*id = (uint64_t)st.st_ino;
	return 0;
}

bool cgroup_path_contains(const char *outer, const char *inner)
{
	size_t length = strlen(outer);

	while (length > 1 && outer[length - 1] == '/')
		length--; /* "/sys/fs/cgroup/" contains what "/sys/fs/cgroup" does */
	return !strncmp(inner, outer, length) && (inner[length] == '/' || inner[length] == '\0');
}

int cgroup_path_is_protected(const char *path, char *why, size_t size)
{
	static const struct {
		pid_t pid;
		const char *who;
	} keep[] = {{0, "this daemon"}, {1, "PID 1"}};
	char mount[PATH_MAX], cgroup[PATH_MAX];
	int err;

	err = cgroup_mount_find(mount, sizeof(mount));
	if (err)
		goto unknown;
	if (cgroup_path_contains(path, mount)) {
		snprintf(why, size, "it is the cgroup2 root (every process of the host)");
		return 1;
	}
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		err = cgroup_of_pid(keep[i].pid ? keep[i].pid : getpid(), cgroup, sizeof(cgroup));
		if (err)
			goto unknown;
		if (!cgroup_path_contains(path, cgroup))
			continue;
		snprintf(why, size, "it holds the cgroup of %s (%s)", keep[i].who, cgroup);
		return 1;
	}
	return 0;
unknown:
	snprintf(why, size, "cannot tell what it holds: %s", strerror(-err));
	return err;
}

static int cgroup_write_file(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX];
	ssize_t written;
	int fd, err = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	written = write(fd, text, strlen(text));
	if (written < 0)
		err = -errno;
	close(fd);
	return err;
}

static void cgroup_walk_below(struct cgroup_walk *walk, const char *cgroup, unsigned int depth)
{
	char path[PATH_MAX];
	struct dirent *entry;
	FILE *procs;
	DIR *dir;
	int pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	procs = fopen(path, "re");
	while (procs && walk->seen < walk->max_pids && fscanf(procs, "%d", &pid) == 1) {
		walk->seen++;
		walk->fn((pid_t)pid, walk->arg);
	}
	if (procs)
		fclose(procs);
	if (depth >= walk->max_depth || !(dir = opendir(cgroup)))
		return; /* removed meanwhile: nothing below */
	while (walk->seen < walk->max_pids && (entry = readdir(dir))) {
		if (entry->d_type != DT_DIR || !strcmp(entry->d_name, ".") ||
		    !strcmp(entry->d_name, ".."))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", cgroup, entry->d_name) <
		    sizeof(path))
			cgroup_walk_below(walk, path, depth + 1);
	}
	closedir(dir);
}

void cgroup_walk_procs(struct cgroup_walk *walk, const char *cgroup)
{
	cgroup_walk_below(walk, cgroup, 0);
}

int cgroup_open_by_id(int mount_fd, uint64_t id)
{
	/* A kernfs file handle is the node id (FILEID_KERNFS, 8 bytes). */
	union {
		struct file_handle handle;
		char space[sizeof(struct file_handle) + sizeof(uint64_t)];
	} h = {.handle = {.handle_bytes = sizeof(uint64_t), .handle_type = 0xfe}};
	int fd;

	memcpy(h.handle.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(mount_fd, &h.handle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

struct cgroup_parents *cgroup_parents_new(void)
{
	struct cgroup_parents *cache = calloc(1, sizeof(*cache));
	char mount[PATH_MAX];
	struct stat st;

	if (!cache)
		return NULL;
	cache->mount_fd = -1;
	if (!cgroup_mount_find(mount, sizeof(mount)))
		cache->mount_fd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cache->mount_fd < 0 || fstat(cache->mount_fd, &st)) {
		cgroup_parents_free(cache);
		return NULL;
	}
	cache->root_id = (uint64_t)st.st_ino;
	return cache;
}

void cgroup_parents_free(struct cgroup_parents *cache)
{
	if (!cache)
		return;
	if (cache->mount_fd >= 0)
		close(cache->mount_fd);
	free(cache);
}

/* splitmix64's finalizer: cgroup ids come in strides (kernfs numbers files too). */
static size_t cgroup_parents_slot(uint64_t id)
{
	id ^= id >> 30;
	id *= 0xbf58476d1ce4e5b9ULL;
	id ^= id >> 27;
	id *= 0x94d049bb133111ebULL;
	id ^= id >> 31;
	return (size_t)(id % CGROUP_PARENTS_SLOTS);
}

/* Open addressing (linear probing; id 0 marks a free slot): the slot of id, or a free one. */
static size_t cgroup_parents_find(const struct cgroup_parents *cache, uint64_t id)
{
	size_t slot = cgroup_parents_slot(id);

	while (cache->ids[slot] && cache->ids[slot] != id)
		slot = (slot + 1) % CGROUP_PARENTS_SLOTS;
	return slot;
}

static void cgroup_parents_put(struct cgroup_parents *cache, uint64_t id, uint64_t parent)
{
	size_t slot;

	/* Full (three quarters: probes stay short): start again, empty. */
	if (cache->count >= CGROUP_PARENTS_SLOTS / 4 * 3) {
		memset(cache->ids, 0, sizeof(cache->ids));
		cache->count = 0;
	}
	slot = cgroup_parents_find(cache, id);
	if (!cache->ids[slot])
		cache->count++;
	cache->ids[slot] = id;
	cache->parents[slot] = parent;
}

int cgroup_parent_of(struct cgroup_parents *cache, uint64_t id, uint64_t *parent)
{
	size_t slot = cgroup_parents_find(cache, id);
	struct stat st;
	int fd, up, err = 0;

	if (!id || id == cache->root_id) {
		*parent = 0;
		return 0;
	}
	if (cache->ids[slot] == id) {
		*parent = cache->parents[slot];
		return 0;
	}
	cache->misses++;
	fd = cgroup_open_by_id(cache->mount_fd, id);
	if (fd < 0)
		return fd;
	up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (up < 0 || fstat(up, &st))
		err = -errno;
	if (!err) {
		*parent = (uint64_t)st.st_ino;
		cgroup_parents_put(cache, id, *parent);
	}
	if (up >= 0)
		close(up);
	close(fd);
	return err;
}

int cgroup_join(const char *path, pid_t pid)
{
	char text[32];

	snprintf(text, sizeof(text), "%d", pid ? (int)pid : (int)getpid());
	return cgroup_write_file(path, "cgroup.procs", text);
}

static int cgroup_kill_each(const char *path)
{
	char procs[PATH_MAX];
	FILE *file;
	int pid, found = 0;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	file = fopen(procs, "re");
	if (!file)
		return -errno;
	while (fscanf(file, "%d", &pid) == 1) {
		kill(pid, SIGKILL);
		found++;
	}
	fclose(file);
	return found;
}

int cgroup_kill_and_remove(const char *path)
{
	struct timespec pause = {0, 10 * 1000 * 1000};

	/* cgroup.kill (5.14+) kills atomically, including processes forking right now. */
	if (cgroup_write_file(path, "cgroup.kill", "1"))
		cgroup_kill_each(path);
	for (int attempt = 0; attempt < 500; attempt++) {
		if (!rmdir(path) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		cgroup_kill_each(path);
		nanosleep(&pause, NULL);
	}
	return -EBUSY;
}
