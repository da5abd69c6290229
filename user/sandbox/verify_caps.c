// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Capabilities judged where they count: in the user namespace that owns a
 * network namespace (ns_capable's walk), and against the owner and mode of
 * the cgroup.procs files above a sandbox. Also the host's vsock transports.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <linux/vm_sockets.h>

#include "lib/cgroup.h"
#include "verify.h"
#include "verify_procs.h"

/* How many user namespaces up the walk from a network namespace's owner goes. */
#define VERIFY_MAX_USERNS_DEPTH 64

/* Capabilities that let a process write a file it may not (chown, chmod, setuid to its owner). */
#define VERIFY_ESCAPE_CAPS                                                                         \
	((1ULL << CAP_CHOWN) | (1ULL << CAP_DAC_OVERRIDE) | (1ULL << CAP_FOWNER) |                 \
	 (1ULL << CAP_SETUID) | (1ULL << CAP_SYS_ADMIN))

static bool verify_same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/*
 * Looks an id up in /proc/PID/uid_map or gid_map, whose outside column the
 * daemon (initial namespace) reads as kernel ids. inside >= 0: the kernel id
 * of that inside id (-1: unmapped); inside < 0: 0 if outside_id is mapped.
 */
static long long verify_id_map(pid_t pid, const char *map, long long inside, uint32_t outside_id)
{
	unsigned long long first, lower, count;
	char path[64];
	long long found = -1;
	FILE *file;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, map);
	file = fopen(path, "re");
	if (!file)
		return -1;
	while (found < 0 && fscanf(file, "%llu %llu %llu", &first, &lower, &count) == 3) {
		if (inside >= 0 && (unsigned long long)inside >= first &&
		    (unsigned long long)inside - first < count)
			found = (long long)(lower + ((unsigned long long)inside - first));
		else if (inside < 0 && outside_id >= lower && outside_id - lower < count)
			found = 0;
	}
	fclose(file);
	return found;
}

/* Is one of its real, effective or saved uids its user namespace's root? */
static bool verify_proc_is_root(const struct verify_proc *proc)
{
	long long root = verify_id_map(proc->pid, "uid_map", 0, 0);

	return root >= 0 && (proc->uid[0] == root || proc->uid[1] == root || proc->uid[2] == root);
}

/*
 * The capabilities a process has or can take in its own user namespace: its
 * permitted set, and what an execve gives: root gets its bounding set back,
 * anyone what a binary's file capabilities grant (ping's CAP_NET_RAW), when
 * with_file_caps. No new privileges stops both.
 */
static uint64_t verify_caps_obtainable(const struct verify_proc *proc, bool with_file_caps)
{
	uint64_t caps = proc->cap_prm | proc->cap_eff;

	if (!proc->no_new_privs && (with_file_caps || verify_proc_is_root(proc)))
		caps |= proc->cap_bnd;
	return caps;
}

/*
 * Does the process hold cap over the user namespace owner_fd? The kernel's
 * walk: up from that namespace, the process's own namespace grants what its
 * capabilities hold; on the way, the owner (creator) of a child of its own
 * namespace holds every capability in it. A process in a namespace below the
 * owner, or beside it, holds none there.
 */
static bool verify_caps_over_userns(const struct verify_proc *proc, int owner_fd, uint64_t caps,
				    int cap)
{
	struct stat own, at, up;
	char path[64];
	bool held = false;
	int ns, parent;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)proc->pid);
	if (stat(path, &own))
		return false; /* exited */
	ns = fcntl(owner_fd, F_DUPFD_CLOEXEC, 0);
	for (int depth = 0; ns >= 0 && depth < VERIFY_MAX_USERNS_DEPTH; depth++) {
		uid_t owner;

		if (fstat(ns, &at))
			break;
		if (verify_same_file(&at, &own)) {
			held = caps & (1ULL << cap);
			break;
		}
		parent = ioctl(ns, NS_GET_PARENT);
		if (parent < 0)
			break; /* the top: the process's namespace is no ancestor of the owner */
		if (!fstat(parent, &up) && verify_same_file(&up, &own) &&
		    !ioctl(ns, NS_GET_OWNER_UID, &owner) && owner == proc->uid[1]) {
			held = true;
			close(parent);
			break;
		}
		close(ns);
		ns = parent;
	}
	if (ns >= 0)
		close(ns);
	return held;
}

/* Over the user namespace that owns this network namespace; fail closed if it cannot be told. */
static bool verify_caps_over_netns(const struct verify_proc *proc, int netns_fd, uint64_t caps,
				   int cap)
{
	int owner = ioctl(netns_fd, NS_GET_USERNS);
	bool held;

	if (owner < 0)
		return true;
	held = verify_caps_over_userns(proc, owner, caps, cap);
	close(owner);
	return held;
}

bool verify_caps_over_net(const struct verify_proc *proc, int sandbox_netns_fd, int cap)
{
	/* CAP_NET_RAW from a file capability is enough for a packet socket. */
	uint64_t caps = verify_caps_obtainable(proc, cap == CAP_NET_RAW);
	char path[64];
	bool held;
	int own;

	/* Its own network namespace, where its devices and sockets are. */
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)proc->pid);
	own = open(path, O_RDONLY | O_CLOEXEC);
	if (own < 0)
		return false; /* exited */
	held = verify_caps_over_netns(proc, own, caps, cap);
	close(own);
	if (held)
		return true;
	/* And the sandbox's, should the process be elsewhere. */
	if (sandbox_netns_fd >= 0)
		return verify_caps_over_netns(proc, sandbox_netns_fd, caps, cap);
	own = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (own < 0)
		return true;
	held = verify_caps_over_netns(proc, own, caps, cap);
	close(own);
	return held;
}

int verify_ancestors_find(const char *cgroup_path, struct verify_ancestors *out)
{
	char root[PATH_MAX], path[PATH_MAX], *slash;
	size_t root_length;
	int err;

	out->count = 0;
	err = cgroup_mount_find(root, sizeof(root));
	if (err)
		return err;
	root_length = strlen(root);
	snprintf(path, sizeof(path), "%s", cgroup_path);
	if (strncmp(path, root, root_length) || strlen(path) <= root_length)
		return -EINVAL; /* not below the cgroup2 mount: nothing to compare with */
	while ((slash = strrchr(path, '/')) && (size_t)(slash - path) >= root_length) {
		struct stat st;
		size_t i = out->count;

		*slash = '\0';
		if (i == VERIFY_MAX_ANCESTORS)
			return -E2BIG;
		if ((size_t)snprintf(out->paths[i], sizeof(out->paths[i]), "%s/cgroup.procs",
				     path) >= sizeof(out->paths[i]))
			return -ENAMETOOLONG;
		if (stat(out->paths[i], &st))
			return -errno;
		out->uid[i] = st.st_uid;
		out->gid[i] = st.st_gid;
		out->mode[i] = st.st_mode;
		out->count++;
	}
	return 0;
}

/* Do its ids (any of which it may switch its filesystem ids to) give it write access? */
static bool verify_dac_writable(const struct verify_proc *proc, uid_t uid, gid_t gid, mode_t mode)
{
	bool other_uid = false, in_group = false;

	for (int i = 0; i < 4; i++) {
		if (proc->uid[i] == uid && (mode & S_IWUSR))
			return true;
		other_uid |= proc->uid[i] != uid;
		in_group |= proc->gid[i] == gid;
	}
	for (size_t i = 0; i < proc->group_count; i++)
		in_group |= proc->groups[i] == gid;
	if (!other_uid)
		return false;
	return in_group ? (mode & S_IWGRP) != 0 : (mode & S_IWOTH) != 0;
}

/*
 * A process in its own cgroup namespace that sees cgroupfs read-only only,
 * and cannot remount it (no CAP_SYS_ADMIN in the daemon's user namespace),
 * writes no cgroup.procs whatever its ids.
 */
static bool verify_cgroupfs_confined(const struct verify_proc *proc)
{
	struct stat mine, theirs;
	char path[64], line[4096];
	bool confined = true;
	FILE *file;

	snprintf(path, sizeof(path), "/proc/%d/ns/cgroup", (int)proc->pid);
	if (stat("/proc/self/ns/cgroup", &mine) || stat(path, &theirs) ||
	    verify_same_file(&mine, &theirs))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)proc->pid);
	if (stat("/proc/self/ns/user", &mine) || stat(path, &theirs))
		return false;
	if (verify_same_file(&mine, &theirs) &&
	    (verify_caps_obtainable(proc, false) & (1ULL << CAP_SYS_ADMIN)))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)proc->pid);
	file = fopen(path, "re");
	if (!file)
		return false;
	while (confined && fgets(line, sizeof(line), file)) {
		char options[256], fstype[64], source[256], super[256];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(dash, " - %63s %255s %255s", fstype, source, super) != 3 ||
		    strcmp(fstype, "cgroup2"))
			continue;
		/* The sixth field: the mount's own options. */
		if (sscanf(line, "%*s %*s %*s %*s %*s %255s", options) != 1)
			confined = false;
		else
			confined = !strcmp(options, "ro") || !strncmp(options, "ro,", 3) ||
				   !strcmp(super, "ro") || !strncmp(super, "ro,", 3);
	}
	fclose(file);
	return confined;
}

bool verify_caps_escape(const struct verify_proc *proc, const struct verify_ancestors *ancestors,
			char *what, size_t size)
{
	uint64_t caps = verify_caps_obtainable(proc, false) & VERIFY_ESCAPE_CAPS;

	for (size_t i = 0; i < ancestors->count; i++) {
		const char *how = NULL;

		if (verify_dac_writable(proc, ancestors->uid[i], ancestors->gid[i],
					ancestors->mode[i]))
			how = "by its user or group ids";
		else if (caps && verify_id_map(proc->pid, "uid_map", -1, ancestors->uid[i]) == 0 &&
			 verify_id_map(proc->pid, "gid_map", -1, ancestors->gid[i]) == 0)
			how = "with its capabilities";
		if (!how)
			continue;
		if (verify_cgroupfs_confined(proc))
			return false;
		snprintf(what, size,
			 "can write %s (owner %u, mode %04o) %s: it can move itself out of the "
			 "sandbox",
			 ancestors->paths[i], (unsigned int)ancestors->uid[i],
			 (unsigned int)(ancestors->mode[i] & 07777), how);
		return true;
	}
	return false;
}

bool verify_vsock_transport(char *out, size_t size)
{
	/* Transports that a module provides; one built in shows through /dev/vsock alone. */
	static const char *const modules[] = {"vmw_vsock_virtio_transport",
					      "vmw_vsock_vmci_transport", "hv_sock", "vhost_vsock",
					      "vsock_loopback"};
	unsigned int cid = VMADDR_CID_ANY;
	char path[96];
	int fd;

	fd = open("/dev/vsock", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (ioctl(fd, IOCTL_VM_SOCKETS_GET_LOCAL_CID, &cid))
			cid = VMADDR_CID_ANY;
		close(fd);
	}
	for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++) {
		snprintf(path, sizeof(path), "/sys/module/%s", modules[i]);
		if (access(path, F_OK))
			continue;
		if (cid != VMADDR_CID_ANY)
			snprintf(out, size, "%s, local CID %u", modules[i], cid);
		else
			snprintf(out, size, "%s", modules[i]);
		return true;
	}
	if (cid == VMADDR_CID_ANY)
		return false;
	snprintf(out, size, "local CID %u", cid);
	return true;
}
