// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bfbpf COMMAND ...: one table of commands (bpftool's style) and the top-level help. */
#include <stdio.h>
#include <string.h>

#include "bfbpf.h"
#include "cli.h"
#include "cli_commands.h"
#include "daemon/daemon.h"
#include "lib/log.h"

#define CLI_SANDBOX_GROUPS (CLI_GROUP_TARGET | CLI_GROUP_SOCKET | CLI_GROUP_JSON)
#define CLI_NAME_WIDTH 14 /* the longest name */

static const struct cli_command cli_commands[] = {
	{"daemon", cli_daemon,
	 "Run the control daemon: it keeps the sandboxes and serves the socket.",
	 CLI_GROUP_SOCKET | CLI_GROUP_DNS_SERVER, cli_daemon_options},
	{"attach", cli_sandbox, "Confine a cgroup with a policy (through the daemon).",
	 CLI_SANDBOX_GROUPS | CLI_GROUP_TARGET_REQUIRED | CLI_GROUP_POLICY, cli_attach_options},
	{"update", cli_sandbox,
	 "Replace the policy of an attached sandbox: an atomic relock that cuts open flows.",
	 CLI_SANDBOX_GROUPS | CLI_GROUP_TARGET_REQUIRED | CLI_GROUP_POLICY, cli_update_options},
	{"detach", cli_sandbox, "Lift the confinement of a cgroup.",
	 CLI_SANDBOX_GROUPS | CLI_GROUP_TARGET_REQUIRED, NULL},
	{"status", cli_sandbox, "List the attached sandboxes, or one.", CLI_SANDBOX_GROUPS, NULL},
	{"verify", cli_sandbox, "Check a sandbox's lockdown; exit 0 only if it is complete.",
	 CLI_SANDBOX_GROUPS | CLI_GROUP_TARGET_REQUIRED, cli_verify_options},
	{"run", cli_run,
	 "Confine one command in a transient cgroup, without a daemon; exit with its status.",
	 CLI_GROUP_POLICY | CLI_GROUP_DNS_SERVER | CLI_GROUP_COMMAND, cli_run_options},
	{"resolve", cli_resolve,
	 "Dry run of a policy's names: what they resolve to and what would be programmed.",
	 CLI_GROUP_POLICY | CLI_GROUP_DNS_SERVER | CLI_GROUP_JSON, NULL},
	{"check", cli_check, "Preflight: can bfbpf run on this host (kernel, cgroup2, privileges)?",
	 CLI_GROUP_JSON, NULL},
	{"log", cli_log, "Print the daemon's events (denials, names learned), or follow them.",
	 CLI_GROUP_TARGET | CLI_GROUP_SOCKET | CLI_GROUP_JSON, cli_log_options},
	{"metrics", cli_metrics, "Print the daemon's counters as Prometheus text.",
	 CLI_GROUP_SOCKET, NULL},
	{"oci-hook", cli_oci_hook,
	 "OCI createRuntime hook (Podman, CRI-O): register the container of the state on stdin.",
	 CLI_GROUP_SOCKET, cli_oci_hook_options},
	{"docker-runtime", cli_docker_runtime,
	 "Docker runtime: add the oci-hook to a created bundle, then run runc with the same "
	 "arguments.",
	 CLI_GROUP_COMMAND, NULL},
	{"guard", cli_guard,
	 "Close a cgroup subtree by default (no-network unless a policy is given); attached "
	 "sandboxes below it keep their own policy.",
	 CLI_SANDBOX_GROUPS | CLI_GROUP_TARGET_REQUIRED | CLI_GROUP_POLICY, NULL},
	{"unguard", cli_guard, "Remove a guard.", CLI_SANDBOX_GROUPS | CLI_GROUP_TARGET_REQUIRED,
	 NULL},
	{"completion", cli_completion,
	 "'bfbpf completion bash': print the bash completion script, generated from this "
	 "table.",
	 0, NULL},
};

#define CLI_COMMAND_COUNT (sizeof(cli_commands) / sizeof(cli_commands[0]))

const struct cli_command *cli_command_at(size_t index)
{
	return index < CLI_COMMAND_COUNT ? &cli_commands[index] : NULL;
}

const struct cli_command *cli_command_find(const char *name)
{
	for (size_t i = 0; i < CLI_COMMAND_COUNT; i++)
		if (!strcmp(cli_commands[i].name, name))
			return &cli_commands[i];
	return NULL;
}

static void cli_print_usage(FILE *out)
{
	fputs("usage:\n", out);
	for (size_t i = 0; i < CLI_COMMAND_COUNT; i++)
		cli_print_synopsis(out, "  ", &cli_commands[i], CLI_NAME_WIDTH);
	fprintf(out,
		"  bfbpf %-*s [COMMAND]   # one command's help, as 'bfbpf COMMAND --help'\n"
		"  bfbpf --version | --help\n\n",
		CLI_NAME_WIDTH, "help");
	cli_print_grammar(out, CLI_GROUP_TARGET | CLI_GROUP_POLICY);
	fputs("\nCommands:\n", out);
	for (size_t i = 0; i < CLI_COMMAND_COUNT; i++)
		fprintf(out, "  %-*s  %s\n", CLI_NAME_WIDTH, cli_commands[i].name,
			cli_commands[i].help);
	fputs("\nExit status: 0 success, 1 the operation failed, 2 bad usage or an invalid "
	      "policy.\n"
	      "The socket defaults to $BFBPF_SOCKET, else " DAEMON_DEFAULT_SOCKET ".\n",
	      out);
}

/* bfbpf help [COMMAND]. */
static int cli_help(int argc, char **argv)
{
	const struct cli_command *command;

	if (argc < 3) {
		cli_print_usage(stdout);
		return CLI_EXIT_OK;
	}
	command = cli_command_find(argv[2]);
	if (!command)
		return cli_usage_error("help: unknown command '%s'", argv[2]);
	cli_print_command_help(stdout, command);
	return CLI_EXIT_OK;
}

int cli_main(int argc, char **argv)
{
	const struct cli_command *command;
	const char *name;
	int status;

	if (argc < 2)
		return cli_usage_error("a command is required");
	name = argv[1];
	log_capture_libbpf();
	if (!strcmp(name, "help"))
		return cli_help(argc, argv);
	if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
		cli_print_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(name, "--version")) {
		printf("bfbpf %s (BPF ABI %d)\n", BFBPF_VERSION, BFBPF_ABI_VERSION);
		return CLI_EXIT_OK;
	}
	command = cli_command_find(name);
	if (!command)
		return cli_usage_error("unknown command '%s'", name);
	status = command->run(command, argc - 1, argv + 1);
	return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
}
