/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* cgroup v2: finding the mount, naming a cgroup, its id, transient cgroups. */
#ifndef BFBPF_CGROUP_H
#define BFBPF_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The cgroup2 mount point, from /proc/self/mountinfo. Returns 0 or -ENOENT. */
int cgroup_mount_find(char *out, size_t size);

/*
 * Resolve a cgroup given as an absolute path or one relative to the cgroup2
 * mount into a canonical absolute directory path under that mount.
 * -ENOENT if it does not exist, -EINVAL if it is not a cgroup2 directory.
 */
int cgroup_resolve(const char *given, char *out, size_t size);
/* The cgroup v2 directory of a process (from /proc/PID/cgroup). */
int cgroup_of_pid(pid_t pid, char *out, size_t size);
/* The cgroup id (the kernfs node id the BPF helpers report) of a directory. */
int cgroup_id_of_path(const char *path, uint64_t *id);

/* Is outer the cgroup inner, or one of its ancestors? (canonical absolute paths) */
bool cgroup_path_contains(const char *outer, const char *inner);
/*
 * Would confining the cgroup at path (canonical, as cgroup_resolve gives)
 * confine what must stay free: is it the cgroup2 root, or the cgroup, or an
 * ancestor of the cgroup, of this process (the daemon) or of PID 1? Returns
 * 1 with why filled (what it covers), 0 if not, or a negative errno when
 * that cannot be told (which a caller takes as protected: fail closed).
 */
int cgroup_path_is_protected(const char *path, char *why, size_t size);

/*
 * A bounded walk of a cgroup subtree's processes: the caller sets the bounds
 * and fn; seen counts the processes handed to fn (a walk that ends with seen
 * == max_pids may have been cut short). A cost that does not depend on the
 * size of the host.
 */
struct cgroup_walk {
	unsigned int max_depth; /* levels below the cgroup that are read */
	unsigned int max_pids;
	unsigned int seen;
	void (*fn)(pid_t pid, void *arg);
	void *arg;
};
/* fn for every process of the cgroup, then of its descendants (depth first), within the bounds. */
void cgroup_walk_procs(struct cgroup_walk *walk, const char *cgroup);

/*
 * A cgroup by its id (a socket's, as sock_diag reports it), opened below
 * mount_fd (the cgroup2 mount, open) with open_by_handle_at (needs
 * CAP_DAC_READ_SEARCH). -ESTALE: no cgroup has that id any more (removed).
 */
int cgroup_open_by_id(int mount_fd, uint64_t id);

/*
 * A bounded cache of cgroup id -> parent id, to find a socket's nearest
 * registered ancestor at a flat cost. A cgroup v2 directory never moves to
 * another parent (no rename across parents), and ids are not reused, so an
 * entry never goes stale. Up to three quarters of the slots are used; then
 * it starts again, empty (a cost that does not grow with the host).
 */
#define CGROUP_PARENTS_SLOTS 4096
struct cgroup_parents {
	int mount_fd;	  /* the cgroup2 mount, or -1 */
	uint64_t root_id; /* the hierarchy's root: it has no parent */
	uint64_t ids[CGROUP_PARENTS_SLOTS];
	uint64_t parents[CGROUP_PARENTS_SLOTS];
	size_t count;	 /* slots in use */
	uint64_t misses; /* parents read from the kernel (a cache miss each) */
};
/* Allocate a cache (NULL: no memory, or no cgroup2 mount). */
struct cgroup_parents *cgroup_parents_new(void);
void cgroup_parents_free(struct cgroup_parents *cache);
/* The parent of cgroup id (0: id is the root). -ESTALE: the cgroup was removed. */
int cgroup_parent_of(struct cgroup_parents *cache, uint64_t id, uint64_t *parent);

/* Move a process into the cgroup (pid 0: the caller). */
int cgroup_join(const char *path, pid_t pid);
/* Kill every process in the cgroup and remove it (and nothing else). */
int cgroup_kill_and_remove(const char *path);

#endif /* BFBPF_CGROUP_H */
