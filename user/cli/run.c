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
#include "cli.h"
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
	const char *maps[] = {"sandboxes",   "allow_exact",   "allow_prefix",
			      "dns_origins", "sandbox_stats", "events"};

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

struct run_args {
	struct cli_policy_args policy;
	struct resolver_options resolver;
	const char *cgroup_parent;
	const char *bpffs;
	char **command;
};

static int run_parse(int argc, char **argv, struct run_args *args)
{
	static const struct option options[] = {
		CLI_POLICY_LONG_OPTIONS,
		{"cgroup-parent", required_argument, NULL, CLI_OPTION_CGROUP_PARENT},
		{"bpffs", required_argument, NULL, CLI_OPTION_BPFFS},
		{"dns-server", required_argument, NULL, CLI_OPTION_DNS_SERVER},
		{"help", no_argument, NULL, CLI_OPTION_HELP},
		{0},
	};
	int opt;

	opterr = 0;
	/* "+": stop at the command, whose own options are not ours. */
	while ((opt = getopt_long(argc, argv, "+", options, NULL)) != -1) {
		if (cli_policy_option(&args->policy, opt, optarg))
			continue;
		if (opt == CLI_OPTION_CGROUP_PARENT) {
			args->cgroup_parent = optarg;
		} else if (opt == CLI_OPTION_BPFFS) {
			args->bpffs = optarg;
		} else if (opt == CLI_OPTION_DNS_SERVER &&
			   args->resolver.server_count < RESOLVER_MAX_SERVERS) {
			args->resolver.servers[args->resolver.server_count++] = optarg;
		} else if (opt == CLI_OPTION_HELP) {
			printf("usage: bfbpf run POLICY [--cgroup-parent DIR] [--bpffs DIR] "
			       "[--dns-server ADDR[:PORT]]... [--] COMMAND [ARG]...\n");
			return -1;
		} else {
			cli_error("%s: unknown option or missing argument (see 'bfbpf --help')",
				  argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		cli_error("run: a command is required: bfbpf run POLICY -- COMMAND [ARG]...");
		return CLI_EXIT_USAGE;
	}
	args->command = argv + optind;
	return CLI_EXIT_OK;
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

int cli_run(int argc, char **argv)
{
	struct run_args args = {.bpffs = RUN_DEFAULT_BPFFS};
	struct resolver *resolver = NULL;
	char parent[PATH_MAX], cgroup[PATH_MAX], pin_dir[PATH_MAX] = "";
	struct sandbox_registry registry = {0};
	struct sandbox *sandbox = NULL;
	struct loader *loader = NULL;
	bool have_policy = false, made_cgroup = false;
	struct policy policy;
	int status, ready[2] = {-1, -1};
	pid_t child, self;

	names_config_default(&args.resolver.names);
	status = run_parse(argc, argv, &args);
	if (status) {
		status = status < 0 ? CLI_EXIT_OK : status;
		goto cleanup;
	}
	status = cli_policy_build(&args.policy, &policy);
	if (status)
		goto cleanup;
	have_policy = true;
	status = CLI_EXIT_FAILED;
	if (args.cgroup_parent ? cgroup_resolve(args.cgroup_parent, parent, sizeof(parent))
			       : cgroup_mount_find(parent, sizeof(parent))) {
		cli_error("cannot find the cgroup v2 parent %s (run 'bfbpf check')",
			  args.cgroup_parent ? args.cgroup_parent : "mount");
		goto cleanup;
	}
	snprintf(cgroup, sizeof(cgroup), "%s/bfbpf-run-%d", parent, (int)getpid());
	snprintf(pin_dir, sizeof(pin_dir), "%s/%d", args.bpffs, (int)getpid());
	if (mkdir(cgroup, 0755)) {
		cli_error("creating cgroup %s: %s", cgroup, strerror(errno));
		goto cleanup;
	}
	made_cgroup = true;
	/* The command's output is the user's: bfbpf itself speaks only of problems. */
	log_set_level(LOG_LEVEL_WARN);
	log_capture_libbpf();
	if (daemon_bpffs_ensure(pin_dir) || loader_open(pin_dir, &loader)) {
		cli_error("cannot load the BPF programs (run 'bfbpf check')");
		goto cleanup;
	}
	sandbox_registry_init(&registry, loader, NULL);
	/* Names are resolved once, before the command starts (no daemon keeps them fresh). */
	if (resolver_open(&args.resolver, -1, &resolver) ||
	    resolver_policy_ref(resolver, &policy)) {
		cli_error("cannot start the resolver");
		goto cleanup;
	}
	if (resolver_wait_settled(resolver, &policy, RESOLVER_SETTLE_TIMEOUT_MS))
		log_warn("some names did not answer within %d ms; they allow nothing",
			 RESOLVER_SETTLE_TIMEOUT_MS);
	registry.resolver = resolver;
	if (run_install_forwarding() || pipe2(ready, O_CLOEXEC))
		goto cleanup;
	self = getpid();
	child = fork();
	if (child < 0) {
		cli_error("fork: %s", strerror(errno));
		goto cleanup;
	}
	if (child == 0) {
		close(ready[1]);
		run_child(cgroup, self, args.command, ready[0], policy.mode != POLICY_MODE_PUBLIC);
	}
	run_child_pid = child;
	close(ready[0]);
	ready[0] = -1;
	status = run_confine(&registry, cgroup, &policy, &sandbox);
	if (status) {
		close(ready[1]); /* the child sees EOF and exits without running anything */
		ready[1] = -1;
		run_wait(child);
		goto cleanup;
	}
	if (write(ready[1], "g", 1) != 1) {
		status = CLI_EXIT_FAILED;
		goto cleanup;
	}
	status = run_wait(child);
cleanup:
	if (ready[0] >= 0)
		close(ready[0]);
	if (ready[1] >= 0)
		close(ready[1]);
	/* Kill leftovers while still confined, then detach: nothing runs unconfined. */
	if (made_cgroup && cgroup_kill_and_remove(cgroup))
		cli_error("cannot remove cgroup %s; it stays confined", cgroup);
	else if (sandbox) {
		struct sandbox_error error;

		sandbox_detach(&registry, sandbox, &error);
	}
	sandbox_registry_free(&registry);
	resolver_close(resolver);
	loader_close(loader);
	if (pin_dir[0])
		run_remove_pins(pin_dir); /* what loading made, even if it failed part-way */
	if (have_policy)
		policy_free(&policy);
	cli_policy_args_free(&args.policy);
	return status;
}
