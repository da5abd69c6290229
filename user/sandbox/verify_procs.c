// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "verify_procs.h"

/* How long a killed holder may take to exit, and how often the walk is redone after kills. */
#define VERIFY_KILL_WAIT_MS 2000
#define VERIFY_KILL_ROUNDS 4

/* Up to a few processes named in one check's detail; the count says how many there are. */
struct verify_finding {
	int count;
	size_t used;
	char list[512];
};

static void verify_finding_add(struct verify_finding *finding, const struct verify_proc *proc,
			       const char *what)
{
	int written;

	finding->count++;
	if (finding->used >= sizeof(finding->list) - 1)
		return;
	written = snprintf(finding->list + finding->used, sizeof(finding->list) - finding->used,
			   "%sprocess %d (%s) %s", finding->used ? "; " : "", (int)proc->pid,
			   proc->comm, what);
	if (written > 0)
		finding->used += (size_t)written;
}

typedef int (*verify_proc_fn)(pid_t pid, void *ctx);

/* Every process of the cgroup and its descendants; a descendant removed meanwhile is no error. */
static int verify_procs_walk(const char *cgroup, int depth, verify_proc_fn fn, void *ctx)
{
	char path[PATH_MAX];
	struct dirent *entry;
	int pid, err = 0;
	FILE *procs;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	procs = fopen(path, "re");
	if (!procs)
		return depth ? 0 : -errno;
	while (!err && fscanf(procs, "%d", &pid) == 1)
		err = fn(pid, ctx);
	fclose(procs);
	if (err || depth >= VERIFY_MAX_CGROUP_DEPTH)
		return err;
	dir = opendir(cgroup);
	if (!dir)
		return 0;
	while (!err && (entry = readdir(dir))) {
		if (entry->d_type != DT_DIR || entry->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", cgroup, entry->d_name);
		err = verify_procs_walk(path, depth + 1, fn, ctx);
	}
	closedir(dir);
	return err;
}

static void verify_proc_groups(const char *list, struct verify_proc *out)
{
	char *end;

	while (out->group_count < VERIFY_MAX_GROUPS) {
		unsigned long group = strtoul(list, &end, 10);

		if (end == list)
			break;
		out->groups[out->group_count++] = (uint32_t)group;
		list = end;
	}
}

int verify_proc_read(pid_t pid, struct verify_proc *out)
{
	char path[64], line[1024];
	bool have_ids = false;
	int nnp = 0;
	FILE *file;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	file = fopen(path, "re");
	if (!file)
		return -errno;
	while (fgets(line, sizeof(line), file)) {
		unsigned long long caps;

		if (sscanf(line, "Name:\t%31[^\n]", out->comm) == 1)
			continue;
		if (sscanf(line, "Uid:\t%u\t%u\t%u\t%u", &out->uid[0], &out->uid[1], &out->uid[2],
			   &out->uid[3]) == 4)
			have_ids = true;
		else if (sscanf(line, "Gid:\t%u\t%u\t%u\t%u", &out->gid[0], &out->gid[1],
				&out->gid[2], &out->gid[3]) == 4)
			continue;
		else if (!strncmp(line, "Groups:", 7))
			verify_proc_groups(line + 7, out);
		else if (sscanf(line, "CapPrm:\t%llx", &caps) == 1)
			out->cap_prm = caps;
		else if (sscanf(line, "CapEff:\t%llx", &caps) == 1)
			out->cap_eff = caps;
		else if (sscanf(line, "CapBnd:\t%llx", &caps) == 1)
			out->cap_bnd = caps;
		else if (sscanf(line, "NoNewPrivs:\t%d", &nnp) == 1)
			out->no_new_privs = nnp != 0;
	}
	fclose(file);
	return have_ids ? 0 : -ENOENT; /* a zombie has no ids left to judge */
}

static const char *verify_family_name(int family)
{
	switch (family) {
	case AF_PACKET:
		return "AF_PACKET";
	case AF_XDP:
		return "AF_XDP";
	case AF_VSOCK:
		return "AF_VSOCK";
	case AF_BLUETOOTH:
		return "AF_BLUETOOTH";
	case AF_CAN:
		return "AF_CAN";
	default:
		return NULL;
	}
}

/*
 * Would a restrictive mode refuse to create this socket? The rules of
 * socket_verdict in bpf/bfbpf.bpf.c: a socket that exists although it would
 * be refused was opened before the relock (or the attach), and the ones that
 * pass no address hook (packet, XDP, vsock) still reach the wire.
 */
static bool verify_socket_refused(int family, int type, int protocol, char *out, size_t size)
{
	const char *name = verify_family_name(family);

	if (family == AF_UNIX || family == AF_NETLINK)
		return false;
	if (family == AF_INET || family == AF_INET6) {
		if (type == SOCK_STREAM &&
		    (protocol == 0 || protocol == IPPROTO_TCP || protocol == IPPROTO_MPTCP))
			return false;
		if (type == SOCK_DGRAM &&
		    (protocol == 0 || protocol == IPPROTO_UDP || protocol == IPPROTO_UDPLITE))
			return false;
		snprintf(out, size, "an %s %s socket (protocol %d)",
			 family == AF_INET ? "AF_INET" : "AF_INET6",
			 type == SOCK_RAW					    ? "raw"
			 : (protocol == IPPROTO_ICMP || protocol == IPPROTO_ICMPV6) ? "ping"
										    : "other",
			 protocol);
		return true;
	}
	if (name)
		snprintf(out, size, "an %s socket", name);
	else
		snprintf(out, size, "a socket of family %d", family);
	return true;
}

/*
 * The sockets of a process that a restrictive mode refuses: a copy of each of
 * its socket descriptors (pidfd_getfd) is asked for its family, type and
 * protocol, which finds every family, even those no /proc/net file lists
 * (AF_XDP). Returns how many, the first described in what; -errno if they
 * cannot be inspected.
 */
static int verify_proc_sockets(pid_t pid, int pidfd, char *what, size_t size, int *inspected)
{
	char path[64], link[64], description[96];
	struct dirent *entry;
	int found = 0, err = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((entry = readdir(dir))) {
		int fd, copy, family = -1, type = -1, protocol = -1;
		socklen_t length = sizeof(int);
		ssize_t n;

		if (entry->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(dir), entry->d_name, link, sizeof(link) - 1);
		if (n < 0)
			continue; /* closed meanwhile */
		link[n] = '\0';
		if (strncmp(link, "socket:", 7))
			continue;
		fd = atoi(entry->d_name);
		copy = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
		if (copy < 0) {
			if (errno == EBADF)
				continue;   /* closed meanwhile */
			if (errno != ESRCH) /* ESRCH: it is exiting, and its files with it */
				err = -errno;
			break;
		}
		getsockopt(copy, SOL_SOCKET, SO_DOMAIN, &family, &length);
		length = sizeof(int);
		getsockopt(copy, SOL_SOCKET, SO_TYPE, &type, &length);
		length = sizeof(int);
		getsockopt(copy, SOL_SOCKET, SO_PROTOCOL, &protocol, &length);
		close(copy);
		(*inspected)++;
		if (!verify_socket_refused(family, type, protocol, description,
					   sizeof(description)))
			continue;
		if (!found)
			snprintf(what, size, "holds %s (fd %d)", description, fd);
		found++;
	}
	closedir(dir);
	return found ? found : err;
}

/* One process's refused sockets, into a finding; with kill, it is killed and waited for. */
static int verify_proc_holder(pid_t pid, bool kill, struct verify_finding *finding, int *inspected)
{
	struct verify_proc proc;
	char what[160];
	int pidfd, found;

	if (verify_proc_read(pid, &proc))
		return 0; /* exited, or a zombie: no descriptors left */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		found = errno == ESRCH ? 0 : -errno; /* ESRCH: exited meanwhile */
	else
		found = verify_proc_sockets(pid, pidfd, what, sizeof(what), inspected);
	if (found < 0) /* fail closed: what cannot be seen may be a packet socket */
		snprintf(what, sizeof(what), "has sockets that cannot be inspected (%s)",
			 strerror(-found));
	if (found)
		verify_finding_add(finding, &proc, what);
	if (found && kill && pidfd >= 0 &&
	    !syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0)) {
		struct pollfd exited = {.fd = pidfd, .events = POLLIN};

		/* Readable once it has exited: its descriptors are closed by then. */
		poll(&exited, 1, VERIFY_KILL_WAIT_MS);
	}
	if (pidfd >= 0)
		close(pidfd);
	return 0;
}

struct verify_holders {
	bool kill;
	struct verify_finding found;
	int inspected;
};

static int verify_holder_one(pid_t pid, void *data)
{
	struct verify_holders *holders = data;

	return verify_proc_holder(pid, holders->kill, &holders->found, &holders->inspected);
}

int verify_socket_holders(const char *cgroup_path, bool kill, char *names, size_t size, int *killed)
{
	struct verify_holders holders = {0};
	int err;

	names[0] = '\0';
	/*
	 * A holder may have handed its socket on meanwhile: walk again until none
	 * is found; after the last round of kills, what is left is only counted.
	 */
	for (int round = 0;; round++) {
		memset(&holders.found, 0, sizeof(holders.found));
		holders.kill = kill && round < VERIFY_KILL_ROUNDS;
		err = verify_procs_walk(cgroup_path, 0, verify_holder_one, &holders);
		if (err)
			return err;
		if (holders.found.count && round == 0)
			snprintf(names, size, "%s", holders.found.list);
		if (!holders.kill || !holders.found.count)
			return holders.found.count;
		*killed += holders.found.count;
	}
}

/* The findings of one walk of a sandbox's processes. */
struct verify_procs_walk_ctx {
	const struct verify_procs_plan *plan;
	struct verify_ancestors ancestors;
	int ancestors_err;
	int procs, sockets;
	struct verify_finding held, net_raw, net_admin, escape;
};

static int verify_procs_one(pid_t pid, void *data)
{
	struct verify_procs_walk_ctx *ctx = data;
	struct verify_proc proc;
	char what[PATH_MAX + 160];

	verify_proc_holder(pid, false, &ctx->held, &ctx->sockets);
	if (verify_proc_read(pid, &proc))
		return 0; /* exited */
	ctx->procs++;
	if (!ctx->plan->lsm_available &&
	    verify_caps_over_net(&proc, ctx->plan->netns_fd, CAP_NET_RAW))
		verify_finding_add(&ctx->net_raw, &proc,
				   "holds CAP_NET_RAW over its network namespace");
	if (verify_caps_over_net(&proc, ctx->plan->netns_fd, CAP_NET_ADMIN))
		verify_finding_add(&ctx->net_admin, &proc,
				   "holds CAP_NET_ADMIN over its network namespace");
	if (!ctx->ancestors_err && verify_caps_escape(&proc, &ctx->ancestors, what, sizeof(what)))
		verify_finding_add(&ctx->escape, &proc, what);
	return 0;
}

static void verify_procs_report(json_t *checks, bool *complete, const char *name,
				const struct verify_finding *finding, const char *why,
				const char *clean)
{
	char detail[1024];

	if (finding->count)
		snprintf(detail, sizeof(detail), "%d process%s: %s; %s", finding->count,
			 finding->count == 1 ? "" : "es", finding->list, why);
	else
		snprintf(detail, sizeof(detail), "%s", clean);
	json_array_append_new(checks, json_pack("{s:s, s:b, s:s}", "name", name, "ok",
						!finding->count, "detail", detail));
	if (finding->count)
		*complete = false;
}

static void verify_procs_failed(const struct verify_procs_plan *plan, json_t *checks,
				bool *complete, int err)
{
	static const char *const names[] = {"held_sockets", "packet_sockets", "net_admin",
					    "cgroup_escape"};
	char detail[PATH_MAX + 96];

	snprintf(detail, sizeof(detail), "cannot list the processes of %s: %s", plan->cgroup_path,
		 strerror(-err));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (i == 1 && plan->lsm_available)
			continue;
		json_array_append_new(checks, json_pack("{s:s, s:b, s:s}", "name", names[i], "ok",
							0, "detail", detail));
	}
	*complete = false;
}

void verify_procs_checks(const struct verify_procs_plan *plan, json_t *checks, bool *complete)
{
	struct verify_procs_walk_ctx *ctx = calloc(1, sizeof(*ctx));
	char clean[256];
	int err;

	if (!ctx) {
		verify_procs_failed(plan, checks, complete, -ENOMEM);
		return;
	}
	ctx->plan = plan;
	ctx->ancestors_err = verify_ancestors_find(plan->cgroup_path, &ctx->ancestors);
	err = verify_procs_walk(plan->cgroup_path, 0, verify_procs_one, ctx);
	if (err) {
		verify_procs_failed(plan, checks, complete, err);
		free(ctx);
		return;
	}
	snprintf(clean, sizeof(clean),
		 "no process of the sandbox holds a socket that this mode refuses (%d processes, "
		 "%d sockets)",
		 ctx->procs, ctx->sockets);
	verify_procs_report(checks, complete, "held_sockets", &ctx->held,
			    "opened before the relock or the attach, it is not refused now; kill "
			    "its holder (update --kill-holders)",
			    clean);
	if (!plan->lsm_available)
		verify_procs_report(
			checks, complete, "packet_sockets", &ctx->net_raw,
			"this kernel cannot refuse packet sockets per cgroup (no BPF LSM); drop "
			"CAP_NET_RAW from the sandbox",
			"no process of the sandbox holds CAP_NET_RAW over its network namespace "
			"(this kernel has no BPF LSM to refuse packet sockets per cgroup)");
	verify_procs_report(
		checks, complete, "net_admin", &ctx->net_admin,
		"it can forward or rewrite packets past the egress hook (tun, nftables); "
		"drop CAP_NET_ADMIN from the sandbox",
		"no process of the sandbox holds CAP_NET_ADMIN over its network namespace");
	if (ctx->ancestors_err) {
		snprintf(clean, sizeof(clean), "cannot read the cgroups above %.160s: %s",
			 plan->cgroup_path, strerror(-ctx->ancestors_err));
		json_array_append_new(checks, json_pack("{s:s, s:b, s:s}", "name", "cgroup_escape",
							"ok", 0, "detail", clean));
		*complete = false;
	} else {
		verify_procs_report(
			checks, complete, "cgroup_escape", &ctx->escape,
			"run it as a user that owns no cgroup file, without "
			"capabilities, or in its own cgroup namespace with a read-only "
			"cgroupfs",
			"no process of the sandbox can write a cgroup.procs outside it");
	}
	free(ctx);
}
