/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * bfbpf run, the child's side: what the command is given besides the cgroup.
 * Its own pid, cgroup and mount namespaces (a fresh /proc, cgroupfs
 * read-only), no capability in any set, the user asked for, no new
 * privileges, and a seccomp filter on socket families. Only run.c includes
 * this.
 */
#ifndef BFBPF_RUN_CONFINE_H
#define BFBPF_RUN_CONFINE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RUN_MAX_GROUPS 64

/* Who the command runs as, resolved before the fork (the child uses no NSS). */
struct run_identity {
	uid_t uid;
	gid_t gid;
	gid_t groups[RUN_MAX_GROUPS]; /* supplementary groups */
	int group_count;
};

struct run_confine {
	const char *cgroup; /* the transient cgroup, locked down before the go byte */
	struct run_identity identity;
	int ready_fd; /* read end: one byte once the lockdown is verified, else EOF */
};

/*
 * USER[:GROUP], each a name or a number. Without GROUP: the user's primary
 * group and supplementary groups if it has a passwd entry, else gid = uid and
 * no supplementary group; with GROUP: that group only. 0, or -ENOENT with err
 * filled.
 */
int run_identity_parse(const char *spec, struct run_identity *out, char *err, size_t err_size);
/* The caller's real uid, gid and supplementary groups. */
int run_identity_self(struct run_identity *out);

/*
 * fork(), the child in a new pid namespace (its pid 1); the caller's later
 * children (verify's probe) stay in the caller's. Returns as fork() does,
 * or -errno.
 */
pid_t run_confine_fork(void);

/*
 * In the child: wait for the go byte, join the cgroup, enter the namespaces,
 * drop every privilege, install the seccomp filter, then run the command as
 * pid 2 and stay as its init (signals forwarded, orphans reaped). Exits with
 * the command's status (128 + signal if one killed it); 127 if bfbpf gave up
 * before the go byte, 126 if the command could not be confined or run.
 */
void run_confine_child(const struct run_confine *config, char **command) __attribute__((noreturn));

#endif /* BFBPF_RUN_CONFINE_H */
