// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bfbpf run, the child: how the command is confined besides its cgroup's
 * programs (docs/threat-model.md, "bfbpf run"). Each step closes a way out
 * that a command in the cgroup had:
 * - uid 0 or capabilities: it could write the root cgroup.procs and leave,
 *   or open packet sockets. Every capability set is emptied, the bounding and
 *   ambient ones included, and no_new_privs set; the user is the one asked for.
 * - the host's cgroupfs: a cgroup namespace rooted at the sandbox, and in a
 *   private mount namespace every cgroup and cgroup2 mount is read-only.
 * - processes outside: pidfd_getfd() on a same-uid process took its sockets.
 *   A pid namespace with a fresh /proc (every other procfs unmounted) leaves
 *   none to name.
 * - families no address hook judges (AF_VSOCK to the hypervisor, AF_PACKET):
 *   seccomp refuses socket() and socketpair() but for unix, netlink, inet and
 *   inet6, and io_uring (whose IORING_OP_SOCKET seccomp would not see).
 * The child is pid 1 of its namespace and stays there as the command's init.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "lib/cgroup.h"
#include "run_confine.h"

/* -------------------------------------------------------------- identity */

static int run_number(const char *text, unsigned long *out)
{
	char *end;

	if (!*text || text[strspn(text, "0123456789")])
		return -EINVAL;
	errno = 0;
	*out = strtoul(text, &end, 10);
	return errno || *out >= (unsigned long)(uid_t)-1 ? -ERANGE : 0;
}

static int run_group_parse(const char *text, gid_t *gid, char *err, size_t err_size)
{
	struct group *group;
	unsigned long number;

	if (!run_number(text, &number)) {
		*gid = (gid_t)number;
		return 0;
	}
	group = getgrnam(text);
	if (!group) {
		snprintf(err, err_size, "no such group: %s", text);
		return -ENOENT;
	}
	*gid = group->gr_gid;
	return 0;
}

int run_identity_parse(const char *spec, struct run_identity *out, char *err, size_t err_size)
{
	char user[256];
	const char *colon = strchr(spec, ':');
	size_t length = colon ? (size_t)(colon - spec) : strlen(spec);
	struct passwd *entry;
	unsigned long number;

	memset(out, 0, sizeof(*out));
	if (!length || length >= sizeof(user)) {
		snprintf(err, err_size, "expected USER[:GROUP], a name or a number each");
		return -EINVAL;
	}
	memcpy(user, spec, length);
	user[length] = '\0';
	entry = run_number(user, &number) ? getpwnam(user) : getpwuid((uid_t)number);
	if (!entry && run_number(user, &number)) {
		snprintf(err, err_size, "no such user: %s", user);
		return -ENOENT;
	}
	out->uid = entry ? entry->pw_uid : (uid_t)number;
	out->gid = entry ? entry->pw_gid : (gid_t)number;
	if (colon)
		return run_group_parse(colon + 1, &out->gid, err, err_size);
	if (entry) {
		out->group_count = RUN_MAX_GROUPS;
		if (getgrouplist(entry->pw_name, out->gid, out->groups, &out->group_count) < 0) {
			snprintf(err, err_size, "%s is in more than %d groups", user,
				 RUN_MAX_GROUPS);
			return -E2BIG;
		}
	}
	return 0;
}

int run_identity_self(struct run_identity *out)
{
	int count;

	memset(out, 0, sizeof(*out));
	out->uid = getuid();
	out->gid = getgid();
	count = getgroups(RUN_MAX_GROUPS, out->groups);
	if (count < 0)
		return -errno;
	out->group_count = count;
	return 0;
}

/* ------------------------------------------------------------ namespaces */

pid_t run_confine_fork(void)
{
	int own = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	pid_t child;
	int err;

	if (own < 0)
		return -errno;
	if (unshare(CLONE_NEWPID)) {
		err = -errno;
		close(own);
		return err;
	}
	child = fork();
	if (child == 0) {
		close(own);
		return 0;
	}
	err = child < 0 ? -errno : 0;
	/* Back to our own pid namespace for what we fork later (verify's probe). */
	if (setns(own, CLONE_NEWPID) && !err) {
		err = -errno;
		kill(child, SIGKILL); /* it has not been let go: it never ran anything */
		waitpid(child, NULL, 0);
	}
	close(own);
	return err ? err : child;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void run_unescape(char *text)
{
	char *in = text, *out = text;

	while (*in) {
		if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' &&
		    in[3] >= '0' && in[3] <= '7') {
			*out++ = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
			in += 4;
		} else {
			*out++ = *in++;
		}
	}
	*out = '\0';
}

/* A bind remount read-only keeps the mount's other flags (nosuid, nodev, noexec...). */
static int run_remount_readonly(const char *path)
{
	unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;
	struct statvfs fs;

	if (statvfs(path, &fs))
		return -errno;
	if (fs.f_flag & ST_NOSUID)
		flags |= MS_NOSUID;
	if (fs.f_flag & ST_NODEV)
		flags |= MS_NODEV;
	if (fs.f_flag & ST_NOEXEC)
		flags |= MS_NOEXEC;
	if (fs.f_flag & ST_NOATIME)
		flags |= MS_NOATIME;
	if (fs.f_flag & ST_NODIRATIME)
		flags |= MS_NODIRATIME;
	if (fs.f_flag & ST_RELATIME)
		flags |= MS_RELATIME;
	return mount(NULL, path, NULL, flags, NULL) ? -errno : 0;
}

/* One mountinfo line: cgroupfs goes read-only, a procfs of the host's pids away. */
static int run_mount_line(char *line)
{
	char *separator = strstr(line, " - "), *point = line, *type, *end;

	if (!separator)
		return 0;
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ...: the fifth field. */
	for (int field = 0; field < 4 && point; field++) {
		point = strchr(point, ' ');
		point = point ? point + 1 : NULL;
	}
	if (!point || point > separator)
		return -EINVAL;
	end = strchr(point, ' ');
	if (!end)
		return -EINVAL;
	*end = '\0';
	run_unescape(point);
	type = separator + 3;
	type[strcspn(type, " ")] = '\0';
	if (!strcmp(type, "cgroup") || !strcmp(type, "cgroup2"))
		return run_remount_readonly(point);
	if (!strcmp(type, "proc") && strcmp(point, "/proc"))
		return umount2(point, MNT_DETACH) && errno != EINVAL ? -errno : 0;
	return 0;
}

/* The whole of mountinfo first: it is not read while the mounts change. */
static int run_mounts_adjust(void)
{
	size_t capacity = 0, length = 0;
	char *text = NULL, *line, *next;
	int fd, err = 0;
	ssize_t n;

	fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do {
		if (length + 4096 > capacity) {
			char *grown = realloc(text, capacity + 65536);

			if (!grown) {
				err = -ENOMEM;
				goto cleanup;
			}
			text = grown;
			capacity += 65536;
		}
		n = read(fd, text + length, capacity - length - 1);
		if (n < 0) {
			err = -errno;
			goto cleanup;
		}
		length += (size_t)n;
	} while (n > 0);
	text[length] = '\0';
	for (line = text; *line && !err; line = next) {
		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		if (next[-1] == '\n')
			next[-1] = '\0';
		err = run_mount_line(line);
	}
cleanup:
	free(text);
	close(fd);
	return err;
}

/*
 * After the cgroup is joined: a cgroup namespace rooted there, a mount
 * namespace of our own (nothing propagates back), cgroupfs read-only and a
 * /proc of the new pid namespace only.
 */
static int run_namespaces_enter(void)
{
	int err;

	if (unshare(CLONE_NEWCGROUP | CLONE_NEWNS))
		return -errno;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	err = run_mounts_adjust();
	if (err)
		return err;
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return -errno;
	return 0;
}

/* ------------------------------------------------------------ privileges */

/* Nothing left in any set: checked, not assumed. */
static int run_capabilities_verify(void)
{
	struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &header, data))
		return -errno;
	for (int i = 0; i < 2; i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			return -EPERM;
	for (int cap = 0; cap < 64; cap++) {
		int bounded = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (bounded < 0)
			break; /* past the last capability */
		if (bounded || prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) > 0)
			return -EPERM;
	}
	return 0;
}

/*
 * The bounding set and securebits first (they need CAP_SETPCAP), then the
 * user (CAP_SETUID, CAP_SETGID), then the remaining sets: a uid-0 command
 * keeps none, and no exec (setuid, file capabilities) regains any.
 */
static int run_privileges_drop(const struct run_identity *identity)
{
	struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {0};

	for (int cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL)
			return -errno;
	if (prctl(PR_SET_SECUREBITS,
		  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
			  SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		  0, 0, 0))
		return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0))
		return -errno;
	if (setgroups((size_t)identity->group_count, identity->groups) ||
	    setresgid(identity->gid, identity->gid, identity->gid) ||
	    setresuid(identity->uid, identity->uid, identity->uid))
		return -errno;
	if (syscall(SYS_capset, &header, data))
		return -errno;
	/* Not dumpable (as a change of user already made it): no ptrace or pidfd_getfd of it. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return -errno;
	return run_capabilities_verify();
}

/* SCMP_A0 with every field named (clang's -Wmissing-field-initializers). */
static struct scmp_arg_cmp run_seccomp_arg0(enum scmp_compare op, int value)
{
	return (struct scmp_arg_cmp){
		.arg = 0, .op = op, .datum_a = (scmp_datum_t)value, .datum_b = 0};
}

/*
 * socket() and socketpair() for the families the address hooks judge (inet,
 * inet6) and the local ones (unix, netlink); every other family is refused
 * with EPERM, as the BPF hooks refuse, whatever the kernel's LSMs: AF_PACKET
 * (17) and every later family by one comparison, the few below it one by one.
 * Installed on every kernel, BPF LSM or not: the command sees the same
 * sandbox everywhere. io_uring goes too: its IORING_OP_SOCKET makes sockets
 * without the socket() syscall. Other architectures' syscalls (i386, x32)
 * kill the process (libseccomp's default for a foreign architecture).
 */
static int run_seccomp_install(void)
{
	const int syscalls[] = {SCMP_SYS(socket), SCMP_SYS(socketpair)};
	scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
	int err = 0;

	if (!filter)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]) && !err; i++) {
		for (int family = AF_UNSPEC; family < AF_PACKET && !err; family++) {
			if (family == AF_UNIX || family == AF_INET || family == AF_INET6 ||
			    family == AF_NETLINK)
				continue;
			err = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), syscalls[i], 1,
					       run_seccomp_arg0(SCMP_CMP_EQ, family));
		}
		if (!err)
			err = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), syscalls[i], 1,
					       run_seccomp_arg0(SCMP_CMP_GE, AF_PACKET));
	}
	if (!err)
		err = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(io_uring_setup), 0);
	if (!err)
		err = seccomp_load(filter);
	seccomp_release(filter);
	return err;
}

/* ----------------------------------------------------------------- init */

static const int run_forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static volatile sig_atomic_t run_init_command;
static volatile sig_atomic_t run_init_pending;

/* bfbpf forwards its signals to us (pid 1 gets only those it handles): on to the command. */
static void run_init_forward(int signal_number)
{
	if (run_init_command > 0)
		kill(run_init_command, signal_number);
	else
		run_init_pending = signal_number; /* before the command exists: sent once it does */
}

static void run_init_signals(void (*handler)(int))
{
	struct sigaction action = {.sa_handler = handler, .sa_flags = SA_RESTART};

	sigemptyset(&action.sa_mask);
	for (size_t i = 0; i < sizeof(run_forwarded) / sizeof(run_forwarded[0]); i++)
		sigaction(run_forwarded[i], &action, NULL);
}

static void run_init_exec(char **command)
{
	run_init_signals(SIG_DFL);
	execvp(command[0], command);
	fprintf(stderr, "bfbpf: cannot run %s: %s\n", command[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* Pid 1: the command is pid 2; orphans are reaped; the command's status is ours. */
static int run_init(char **command)
{
	sigset_t forwarded, old;
	int status;
	pid_t pid;

	sigemptyset(&forwarded);
	for (size_t i = 0; i < sizeof(run_forwarded) / sizeof(run_forwarded[0]); i++)
		sigaddset(&forwarded, run_forwarded[i]);
	sigprocmask(SIG_BLOCK, &forwarded, &old);
	pid = fork();
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		run_init_exec(command);
	}
	if (pid < 0) {
		fprintf(stderr, "bfbpf: fork: %s\n", strerror(errno));
		return 126;
	}
	run_init_command = pid;
	if (run_init_pending)
		kill(pid, run_init_pending);
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (;;) {
		pid_t reaped = waitpid(-1, &status, 0);

		if (reaped == pid)
			break;
		if (reaped < 0 && errno != EINTR)
			return 126;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * bfbpf's own descriptors (its maps, links, resolver sockets: all close on
 * exec) are no business of the init, which never execs: closed now, so that
 * nothing in the sandbox can take them from it. What the caller handed down
 * without close-on-exec stays, for the command.
 */
static int run_close_own_fds(int keep)
{
	DIR *fds = opendir("/proc/self/fd");
	struct dirent *entry;

	if (!fds)
		return -errno;
	while ((entry = readdir(fds))) {
		int fd = atoi(entry->d_name);
		int flags;

		if (entry->d_name[0] == '.' || fd == dirfd(fds) || fd == keep)
			continue;
		flags = fcntl(fd, F_GETFD);
		if (flags >= 0 && (flags & FD_CLOEXEC))
			close(fd);
	}
	closedir(fds);
	return 0;
}

/*
 * A change of user clears the parent-death signal: set it again, then make
 * sure bfbpf did not die before it was. bfbpf holds the pipe's write end
 * until the command is done, so a hang-up means it is gone (getppid() cannot
 * tell: the parent is outside our pid namespace).
 */
static int run_parent_watch(int ready_fd)
{
	struct pollfd poller = {.fd = ready_fd, .events = POLLIN};

	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		return -errno;
	if (poll(&poller, 1, 0) < 0)
		return -errno;
	close(ready_fd);
	return poller.revents & (POLLHUP | POLLERR) ? -ESRCH : 0;
}

/* ---------------------------------------------------------------- child */

static void run_child_fail(const char *what, int err)
{
	fprintf(stderr, "bfbpf: %s: %s; not running the command\n", what, strerror(-err));
	_exit(126);
}

void run_confine_child(const struct run_confine *config, char **command)
{
	char go;
	int err;

	run_init_signals(run_init_forward);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* EOF: bfbpf gave up or died (also before PDEATHSIG was set): never run unconfined. */
	if (read(config->ready_fd, &go, 1) != 1)
		_exit(127);
	err = run_close_own_fds(config->ready_fd);
	if (err)
		run_child_fail("closing bfbpf's descriptors", err);
	err = cgroup_join(config->cgroup, 0);
	if (err)
		run_child_fail("joining the sandbox's cgroup", err);
	err = run_namespaces_enter();
	if (err)
		run_child_fail("making the cgroup, mount and pid namespaces", err);
	err = run_privileges_drop(&config->identity);
	if (err)
		run_child_fail("dropping privileges", err);
	err = run_parent_watch(config->ready_fd);
	if (err)
		_exit(127); /* bfbpf died: its teardown no longer follows the command */
	err = run_seccomp_install();
	if (err)
		run_child_fail("installing the seccomp filter", err);
	_exit(run_init(command));
}
