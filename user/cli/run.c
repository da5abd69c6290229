// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bfbpf run: confine one command without a daemon. A transient cgroup gets
 * the programs (links pinned, so that even a SIGKILL of bfbpf leaves the
 * command confined), the lockdown is verified, and only then does the child
 * join the cgroup and exec, as an unprivileged user in namespaces of its own
 * (run_confine.c). When the command ends, whatever it left running in the
 * cgroup is killed before the cgroup is detached and removed.
 *
 * Names are the daemon's (the sandbox layer's code, the same rules): every
 * name of the policy has answered before the attach, the sandbox's DNS
 * responder listens in our network namespace (which the command shares)
 * before the command starts, and while it runs, one loop answers its DNS and
 * re-programs the names as their TTLs run out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "lib/cgroup.h"
#include "cli_commands.h"
#include "daemon/daemon.h"
#include "loader/loader.h"
#include "lib/log.h"
#include "dns/resolver.h"
#include "dns/responder.h"
#include "sandbox/sandbox.h"
#include "sandbox/verify.h"
#include "run_confine.h"

#define RUN_DEFAULT_BPFFS "/sys/fs/bpf/bfbpf-run"
/* Without a pidfd (kernels before 5.3), how often the loop looks whether the command ended. */
#define RUN_CHILD_POLL_MS 200

static volatile sig_atomic_t run_child_pid;

/* To the child, which is the command's init: it passes them on (docs: exits with the command). */
static void run_forward_signal(int signal_number)
{
	if (run_child_pid > 0)
		kill(run_child_pid, signal_number);
}

static int run_install_forwarding(void)
{
	struct sigaction action = {.sa_handler = run_forward_signal};
	const int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

	sigemptyset(&action.sa_mask);
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (sigaction(signals[i], &action, NULL))
			return -errno;
	return 0;
}

static int run_wait(pid_t child)
{
	int status;

	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR)
			return CLI_EXIT_FAILED;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/*
 * The pins under run's own directory (its pid's): every map pinned there,
 * whatever the programs define, so that a new map is never left behind.
 */
static int run_remove_pins(const char *pin_dir)
{
	char path[PATH_MAX];
	struct dirent *entry;
	DIR *maps;

	snprintf(path, sizeof(path), "%s/maps", pin_dir);
	maps = opendir(path);
	while (maps && (entry = readdir(maps))) {
		if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
			continue;
		if (unlinkat(dirfd(maps), entry->d_name, 0))
			log_warn("removing %s/%s: %s", path, entry->d_name, strerror(errno));
	}
	if (maps)
		closedir(maps);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/links", pin_dir);
	rmdir(path);
	return rmdir(pin_dir) && errno != ENOENT ? -errno : 0;
}

enum {
	RUN_OPTION_CGROUP_PARENT = CLI_OPTION_OWN,
	RUN_OPTION_BPFFS,
	RUN_OPTION_USER,
	RUN_OPTION_ALLOW_ROOT,
};

const struct cli_option cli_run_options[] = {
	{"user", "USER[:GROUP]", RUN_OPTION_USER, 0,
	 "run the command as this user (a name or a uid; default: the caller)"},
	{"allow-root", NULL, RUN_OPTION_ALLOW_ROOT, 0,
	 "let the command run as uid 0 (without capabilities, but able to write root's files)"},
	{"cgroup-parent", "DIR", RUN_OPTION_CGROUP_PARENT, 0,
	 "make the transient cgroup in this cgroup v2 directory (default: the cgroup2 root)"},
	{"bpffs", "DIR", RUN_OPTION_BPFFS, 0,
	 "pin the programs and maps under this directory (default " RUN_DEFAULT_BPFFS ")"},
	CLI_NAMES_OPTIONS,
	{0},
};

struct run_args {
	const char *cgroup_parent;
	const char *bpffs;
	struct run_identity identity;
	bool user_given;
	bool allow_root;
};

static int run_option(struct cli_args *args, int id, const char *value, void *ctx)
{
	struct run_args *own = ctx;
	char err[128];

	(void)args; /* --min-ttl, --max-ttl, --grace: shared options, parsed before */
	switch (id) {
	case RUN_OPTION_CGROUP_PARENT:
		own->cgroup_parent = value;
		return CLI_EXIT_OK;
	case RUN_OPTION_BPFFS:
		own->bpffs = value;
		return CLI_EXIT_OK;
	case RUN_OPTION_USER:
		if (run_identity_parse(value, &own->identity, err, sizeof(err)))
			return cli_usage_error("--user %s: %s", value, err);
		own->user_given = true;
		return CLI_EXIT_OK;
	case RUN_OPTION_ALLOW_ROOT:
		own->allow_root = true;
		return CLI_EXIT_OK;
	}
	return CLI_EXIT_USAGE;
}

/* The command's user: --user, else the caller; uid 0 only when asked for, and why not. */
static int run_identity_choose(struct run_args *own)
{
	if (!own->user_given && run_identity_self(&own->identity))
		return cli_fail(CLI_EXIT_FAILED, "internal", "cannot read the caller's groups");
	if (own->identity.uid == 0 && !own->allow_root)
		return cli_usage_error(
			"run: refusing to run the command as uid 0: even without capabilities, uid "
			"0 "
			"can write root-owned files that make code run outside the sandbox (cron "
			"jobs, systemd units); pass --user USER, or --allow-root to accept that");
	return CLI_EXIT_OK;
}

/* Names that answered with no address to program (NXDOMAIN, or filtered): said, not fatal. */
static void run_names_warn(struct sandbox_registry *registry, const struct sandbox *sandbox)
{
	json_t *unresolved = sandbox_names_unresolved(registry, sandbox);
	char *text = json_array_size(unresolved) ? json_dumps(unresolved, JSON_COMPACT) : NULL;

	if (text)
		log_warn("names with no address to allow (only their subdomains may resolve): %s",
			 text);
	free(text);
	json_decref(unresolved);
}

/* Attach and verify; only a complete lockdown lets the command start. */
static int run_confine(struct sandbox_registry *registry, const char *cgroup, struct policy *policy,
		       struct sandbox **sandbox)
{
	struct sandbox_error error = {0};
	json_t *verdict;
	bool complete;

	if (sandbox_attach(registry, cgroup, NULL, policy, sandbox, &error)) {
		cli_error("%s", error.message);
		return CLI_EXIT_FAILED;
	}
	verdict = verify_sandbox(registry, *sandbox, true, NULL);
	complete = json_is_true(json_object_get(verdict, "lockdown_complete"));
	if (!complete) {
		char *text = json_dumps(verdict, JSON_COMPACT);

		cli_error("lockdown of %s is not complete, not running the command: %s", cgroup,
			  text ? text : "");
		free(text);
	}
	json_decref(verdict);
	if (complete)
		run_names_warn(registry, *sandbox);
	return complete ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

struct run_state {
	char cgroup[PATH_MAX];
	char pin_dir[PATH_MAX]; /* "": nothing pinned yet */
	bool made_cgroup;
	struct loader *loader;
	int epoll_fd; /* the resolver's, the responder's and the command's pidfd */
	struct resolver *resolver;
	struct responder_context dns;
	struct sandbox_registry registry;
	struct sandbox *sandbox;
};

static int run_epoll_add(int epoll_fd, int fd)
{
	struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};

	return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) ? -errno : 0;
}

/*
 * The resolver on our loop; every name of the policy answered (an upstream
 * that does not answer is an error: nothing runs); the responder's context,
 * so that the attach starts one for the sandbox.
 */
static int run_names_prepare(struct run_state *state,
			     const struct resolver_options *resolver_options,
			     const struct policy *policy)
{
	const char *name, *why;

	state->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (state->epoll_fd < 0 ||
	    resolver_open(resolver_options, state->epoll_fd, &state->resolver) ||
	    run_epoll_add(state->epoll_fd, resolver_timer_fd(state->resolver)) ||
	    resolver_policy_ref(state->resolver, policy)) {
		cli_error("cannot start the resolver");
		return CLI_EXIT_FAILED;
	}
	resolver_wait_settled(state->resolver, policy, RESOLVER_SETTLE_TIMEOUT_MS);
	name = resolver_policy_unanswered(state->resolver, policy, &why);
	if (name) {
		cli_error("cannot resolve %s (%s), not running the command: check --dns-server "
			  "(default: /etc/resolv.conf's servers)",
			  name, why);
		return CLI_EXIT_FAILED;
	}
	state->registry.resolver = state->resolver;
	state->dns.epoll_fd = state->epoll_fd;
	state->dns.rate_per_second = RESPONDER_RATE_PER_SECOND;
	state->dns.resolver = state->resolver;
	sandbox_registry_set_dns(&state->registry, &state->dns);
	return CLI_EXIT_OK;
}

/* The transient cgroup, the programs pinned in a directory of their own, the names resolved. */
static int run_prepare(struct run_state *state, const struct run_args *own,
		       const struct resolver_options *resolver_options, struct policy *policy)
{
	char parent[PATH_MAX];

	if (own->cgroup_parent ? cgroup_resolve(own->cgroup_parent, parent, sizeof(parent))
			       : cgroup_mount_find(parent, sizeof(parent))) {
		cli_error("cannot find the cgroup v2 parent %s (run 'bfbpf check')",
			  own->cgroup_parent ? own->cgroup_parent : "mount");
		return CLI_EXIT_FAILED;
	}
	snprintf(state->cgroup, sizeof(state->cgroup), "%s/bfbpf-run-%d", parent, (int)getpid());
	snprintf(state->pin_dir, sizeof(state->pin_dir), "%s/%d", own->bpffs, (int)getpid());
	if (mkdir(state->cgroup, 0755)) {
		cli_error("creating cgroup %s: %s", state->cgroup, strerror(errno));
		return CLI_EXIT_FAILED;
	}
	state->made_cgroup = true;
	/* The command's output is the user's: bfbpf itself speaks only of problems. */
	log_set_level(LOG_LEVEL_WARN);
	log_capture_libbpf();
	if (daemon_bpffs_ensure(state->pin_dir) || loader_open(state->pin_dir, &state->loader)) {
		cli_error("cannot load the BPF programs (run 'bfbpf check')");
		return CLI_EXIT_FAILED;
	}
	sandbox_registry_init(&state->registry, state->loader, NULL);
	return run_names_prepare(state, resolver_options, policy);
}

/* Has the child ended (not reaped: run_wait does)? */
static bool run_child_ended(pid_t child)
{
	siginfo_t info = {0};

	return waitid(P_PID, (id_t)child, &info, WEXITED | WNOHANG | WNOWAIT) || info.si_pid;
}

/*
 * While the command runs: its DNS queries, the resolver's answers and
 * timers, the names re-programmed (sandbox_serve.c, as in the daemon), until
 * the child ends.
 */
static void run_serve(struct run_state *state, pid_t child)
{
	int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	struct epoll_event events[32];
	bool ended = false;

	if (pidfd >= 0 && run_epoll_add(state->epoll_fd, pidfd)) {
		close(pidfd);
		pidfd = -1;
	}
	while (!ended) {
		int wait_ms = sandbox_registry_dns_wait_ms(&state->registry), count;

		if (pidfd < 0 && (wait_ms < 0 || wait_ms > RUN_CHILD_POLL_MS))
			wait_ms = RUN_CHILD_POLL_MS;
		count = epoll_wait(state->epoll_fd, events, 32, wait_ms);
		if (count < 0 && errno != EINTR)
			break; /* the caller still waits for the child */
		for (int i = 0; i < count; i++) {
			int fd = events[i].data.fd;

			if (fd == pidfd)
				ended = true;
			else if (!resolver_handle_fd(state->resolver, fd, events[i].events))
				sandbox_registry_dns_handle(&state->registry, fd, events[i].events);
		}
		sandbox_registry_names_serve(&state->registry);
		sandbox_registry_collect(&state->registry);
		if (pidfd < 0)
			ended = run_child_ended(child);
	}
	if (pidfd >= 0)
		close(pidfd);
}

/* Fork the command, which waits on a pipe until the lockdown is verified; its exit status. */
static int run_command(struct run_state *state, char **command, struct policy *policy,
		       const struct run_identity *identity)
{
	struct run_confine confine = {.cgroup = state->cgroup, .identity = *identity};
	int status, ready[2];
	pid_t child;

	if (run_install_forwarding() || pipe2(ready, O_CLOEXEC))
		return CLI_EXIT_FAILED;
	child = run_confine_fork();
	if (child < 0) {
		cli_error("starting the command in a new pid namespace: %s", strerror(-child));
		close(ready[0]);
		close(ready[1]);
		return CLI_EXIT_FAILED;
	}
	if (child == 0) {
		close(ready[1]);
		confine.ready_fd = ready[0];
		run_confine_child(&confine, command);
	}
	run_child_pid = child;
	close(ready[0]);
	status = run_confine(&state->registry, state->cgroup, policy, &state->sandbox);
	if (!status && write(ready[1], "g", 1) != 1)
		status = CLI_EXIT_FAILED;
	if (status) {
		/* The child sees EOF and exits without running anything. */
		close(ready[1]);
		run_wait(child);
		return status;
	}
	/* Held open until the command ends: the child takes a hang-up for our death. */
	run_serve(state, child);
	status = run_wait(child);
	close(ready[1]);
	return status;
}

static void run_teardown(struct run_state *state)
{
	struct sandbox_error error;

	/* Kill leftovers while still confined, then detach: nothing runs unconfined. */
	if (state->made_cgroup && cgroup_kill_and_remove(state->cgroup))
		cli_error("cannot remove cgroup %s; it stays confined", state->cgroup);
	else if (state->sandbox)
		sandbox_detach(&state->registry, state->sandbox, &error);
	sandbox_registry_free(&state->registry);
	resolver_close(state->resolver);
	if (state->epoll_fd >= 0)
		close(state->epoll_fd);
	loader_close(state->loader);
	if (state->pin_dir[0])
		run_remove_pins(state->pin_dir); /* what loading made, even if it failed part-way */
}

int cli_run(const struct cli_command *command, int argc, char **argv)
{
	struct run_args own = {.bpffs = RUN_DEFAULT_BPFFS};
	struct run_state state = {.epoll_fd = -1};
	bool have_policy = false;
	struct cli_args args;
	struct policy policy;
	int status;

	cli_args_init(&args);
	status = cli_parse(command, argc, argv, &args, run_option, &own);
	if (!status)
		status = cli_names_check(&args.resolver.names);
	if (status)
		goto cleanup;
	status = run_identity_choose(&own);
	if (status)
		goto cleanup;
	/* A local relay carries bytes anywhere: run opens only the loopback a policy names. */
	status = cli_policy_build_loopback(&args.policy, false, &policy);
	if (status)
		goto cleanup;
	have_policy = true;
	status = run_prepare(&state, &own, &args.resolver, &policy);
	if (!status)
		status = run_command(&state, args.operands, &policy, &own.identity);
cleanup:
	run_teardown(&state);
	if (have_policy)
		policy_free(&policy);
	cli_args_free(&args);
	return status;
}
