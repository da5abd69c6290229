/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the processes of a sandbox hold and could do, found from /proc and the
 * kernel: sockets that no address hook judges, capabilities over the network
 * namespace they live in, a way out of the sandbox's cgroup. For verify (and
 * its periodic checks) and for the relock, which must not leave such a socket
 * behind. Each finding names the process.
 */
#ifndef BFBPF_VERIFY_PROCS_H
#define BFBPF_VERIFY_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#define VERIFY_MAX_GROUPS 64
/* How deep below a sandbox the walk of its cgroups goes. */
#define VERIFY_MAX_CGROUP_DEPTH 32

/* A process as /proc/PID/status shows it to the daemon (ids as the initial namespace maps them). */
struct verify_proc {
	pid_t pid;
	char comm[32];
	uint32_t uid[4], gid[4]; /* real, effective, saved, filesystem */
	uint32_t groups[VERIFY_MAX_GROUPS];
	size_t group_count;
	uint64_t cap_prm, cap_eff, cap_bnd;
	bool no_new_privs;
};

struct verify_procs_plan {
	const char *cgroup_path;
	int netns_fd;	    /* the sandbox's network namespace; -1: the daemon's */
	bool lsm_available; /* packet sockets are refused per cgroup by the kernel */
};

/*
 * The checks of a restrictive mode: held_sockets, packet_sockets (without BPF
 * LSM), net_admin and cgroup_escape; appends {"name","ok","detail"} to checks.
 */
void verify_procs_checks(const struct verify_procs_plan *plan, json_t *checks, bool *complete);

/*
 * The processes of the cgroup tree that hold a socket a restrictive mode
 * refuses (or whose sockets cannot be inspected). With kill, each gets
 * SIGKILL and is waited for, until none is left. Names them in names.
 * Returns how many still hold one (0 after a successful kill), or -errno;
 * adds the kills to *killed.
 */
int verify_socket_holders(const char *cgroup_path, bool kill, char *names, size_t size,
			  int *killed);

/* Shared by verify_procs.c and verify_caps.c. */
int verify_proc_read(pid_t pid, struct verify_proc *out);

/* The cgroup.procs files above a sandbox, up to the cgroup2 root. */
#define VERIFY_MAX_ANCESTORS 32
struct verify_ancestors {
	size_t count;
	char paths[VERIFY_MAX_ANCESTORS][512];
	uid_t uid[VERIFY_MAX_ANCESTORS];
	gid_t gid[VERIFY_MAX_ANCESTORS];
	mode_t mode[VERIFY_MAX_ANCESTORS];
};
int verify_ancestors_find(const char *cgroup_path, struct verify_ancestors *out);

/* Does the process hold (or can it take) cap over a network namespace it can use? */
bool verify_caps_over_net(const struct verify_proc *proc, int sandbox_netns_fd, int cap);
/* Can it write a cgroup.procs above its sandbox? Then what says how, and it is true. */
bool verify_caps_escape(const struct verify_proc *proc, const struct verify_ancestors *ancestors,
			char *what, size_t size);

#endif /* BFBPF_VERIFY_PROCS_H */
