// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bfbpf run: confine one command without a daemon. A transient cgroup gets
 * the programs (links pinned, so that even a SIGKILL of bfbpf leaves the
 * command confined), the lockdown is verified, and only then does the child
 * join the cgroup and exec. When the command ends, whatever it left running
 * in the cgroup is killed before the cgroup is detached and removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "lib/cgroup.h"
#include "cli_commands.h"
#include "daemon/daemon.h"
#include "loader/loader.h"
#include "lib/log.h"
#include "dns/resolver.h"
#include "sandbox/sandbox.h"
#include "sandbox/verify.h"

#define RUN_DEFAULT_BPFFS "/sys/fs/bpf/bfbpf-run"

static volatile sig_atomic_t run_child_pid;

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

/*
 * Packet sockets pass no address hook; where the kernel cannot refuse them
 * per cgroup (no BPF LSM), a command without CAP_NET_RAW cannot open them.
 * Dropped from every set, the bounding set included, so no exec regains it.
 */
static int run_drop_net_raw(void)
{
	struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];

	if (prctl(PR_CAPBSET_DROP, CAP_NET_RAW, 0, 0, 0) && errno != EINVAL)
		return -errno;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_NET_RAW, 0, 0);
	if (syscall(SYS_capget, &header, data))
		return -errno;
	data[0].effective &= ~(1u << CAP_NET_RAW);
	data[0].permitted &= ~(1u << CAP_NET_RAW);
	data[0].inheritable &= ~(1u << CAP_NET_RAW);
	if (syscall(SYS_capset, &header, data))
		return -errno;
	return 0;
}

/* In the child: join the confined cgroup, then become the command. */
static void run_child(const char *cgroup, pid_t parent, char **command, int ready_fd,
		      bool restrictive)
{
	char go;
	int err;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127); /* bfbpf died before we could be confined */
	if (read(ready_fd, &go, 1) != 1)
		_exit(127); /* bfbpf gave up: never run unconfined */
	close(ready_fd);
	err = restrictive ? run_drop_net_raw() : 0;
	if (err) {
		fprintf(stderr, "bfbpf: dropping CAP_NET_RAW: %s\n", strerror(-err));
		_exit(126);
	}
	err = cgroup_join(cgroup, 0);
	if (err) {
		fprintf(stderr, "bfbpf: joining %s: %s\n", cgroup, strerror(-err));
		_exit(126);
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	execvp(command[0], command);
	fprintf(stderr, "bfbpf: cannot run %s: %s\n", command[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
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

static int run_remove_pins(const char *pin_dir)
{
	char path[PATH_MAX];
	const char *maps[] = {"sandboxes",     "allow_exact", "allow_prefix", "dns_origins",
			      "sandbox_stats", "events",      "registered",   "guard_origins"};

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		snprintf(path, sizeof(path), "%s/maps/%s", pin_dir, maps[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/maps", pin_dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/links", pin_dir);
	rmdir(path);
	return rmdir(pin_dir) && errno != ENOENT ? -errno : 0;
}

enum {
	RUN_OPTION_CGROUP_PARENT = CLI_OPTION_OWN,
	RUN_OPTION_BPFFS,
};

const struct cli_option cli_run_options[] = {
	{"cgroup-parent", "DIR", RUN_OPTION_CGROUP_PARENT, 0,
	 "make the transient cgroup in this cgroup v2 directory (default: the cgroup2 root)"},
	{"bpffs", "DIR", RUN_OPTION_BPFFS, 0,
	 "pin the programs and maps under this directory (default " RUN_DEFAULT_BPFFS ")"},
	{0},
};

struct run_args {
	const char *cgroup_parent;
	const char *bpffs;
};

static int run_option(struct cli_args *args, int id, const char *value, void *ctx)
{
	struct run_args *own = ctx;

	(void)args;
	switch (id) {
	case RUN_OPTION_CGROUP_PARENT:
		own->cgroup_parent = value;
		return CLI_EXIT_OK;
	case RUN_OPTION_BPFFS:
		own->bpffs = value;
		return CLI_EXIT_OK;
	}
	return CLI_EXIT_USAGE;
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
	return complete ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

struct run_state {
	char cgroup[PATH_MAX];
	char pin_dir[PATH_MAX]; /* "": nothing pinned yet */
	bool made_cgroup;
	struct loader *loader;
	struct resolver *resolver;
	struct sandbox_registry registry;
	struct sandbox *sandbox;
};

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
	/* Names are resolved once, before the command starts (no daemon keeps them fresh). */
	if (resolver_open(resolver_options, -1, &state->resolver) ||
	    resolver_policy_ref(state->resolver, policy)) {
		cli_error("cannot start the resolver");
		return CLI_EXIT_FAILED;
	}
	if (resolver_wait_settled(state->resolver, policy, RESOLVER_SETTLE_TIMEOUT_MS))
		log_warn("some names did not answer within %d ms; they allow nothing",
			 RESOLVER_SETTLE_TIMEOUT_MS);
	state->registry.resolver = state->resolver;
	return CLI_EXIT_OK;
}

/* Fork the command, which waits on a pipe until the lockdown is verified; its exit status. */
static int run_command(struct run_state *state, char **command, struct policy *policy)
{
	int status, ready[2];
	pid_t child, self;

	if (run_install_forwarding() || pipe2(ready, O_CLOEXEC))
		return CLI_EXIT_FAILED;
	self = getpid();
	child = fork();
	if (child < 0) {
		cli_error("fork: %s", strerror(errno));
		close(ready[0]);
		close(ready[1]);
		return CLI_EXIT_FAILED;
	}
	if (child == 0) {
		close(ready[1]);
		run_child(state->cgroup, self, command, ready[0],
			  policy->mode != POLICY_MODE_PUBLIC);
	}
	run_child_pid = child;
	close(ready[0]);
	status = run_confine(&state->registry, state->cgroup, policy, &state->sandbox);
	if (!status && write(ready[1], "g", 1) != 1)
		status = CLI_EXIT_FAILED;
	/* After a failure the child sees EOF and exits without running anything. */
	close(ready[1]);
	if (status) {
		run_wait(child);
		return status;
	}
	return run_wait(child);
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
	loader_close(state->loader);
	if (state->pin_dir[0])
		run_remove_pins(state->pin_dir); /* what loading made, even if it failed part-way */
}

int cli_run(const struct cli_command *command, int argc, char **argv)
{
	struct run_args own = {.bpffs = RUN_DEFAULT_BPFFS};
	struct run_state state = {0};
	bool have_policy = false;
	struct cli_args args;
	struct policy policy;
	int status;

	cli_args_init(&args);
	status = cli_parse(command, argc, argv, &args, run_option, &own);
	if (status)
		goto cleanup;
	status = cli_policy_build(&args.policy, &policy);
	if (status)
		goto cleanup;
	have_policy = true;
	status = run_prepare(&state, &own, &args.resolver, &policy);
	if (!status)
		status = run_command(&state, args.operands, &policy);
cleanup:
	run_teardown(&state);
	if (have_policy)
		policy_free(&policy);
	cli_args_free(&args);
	return status;
}
