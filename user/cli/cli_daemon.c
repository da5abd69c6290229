// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bfbpf daemon: its options, then the daemon loop (user/daemon). */
#include <grp.h>
#include <stdio.h>
#include <string.h>

#include "cli_commands.h"
#include "client.h"
#include "daemon/daemon.h"
#include "dns/responder.h"
#include "lib/log.h"

enum {
	CLI_DAEMON_BPFFS = CLI_OPTION_OWN,
	CLI_DAEMON_STATE_DIR,
	CLI_DAEMON_SOCKET_GROUP,
	CLI_DAEMON_LOG_LEVEL,
	CLI_DAEMON_VERIFY_INTERVAL,
	CLI_DAEMON_NO_EVENTS,
	CLI_DAEMON_METRICS_LISTEN,
	CLI_DAEMON_DNS_RATE,
	CLI_DAEMON_ACCEPT_VSOCK,
	CLI_DAEMON_POLICY_DIR,
};

const struct cli_option cli_daemon_options[] = {
	{"bpffs", "DIR", CLI_DAEMON_BPFFS, 0,
	 "where maps and links are pinned (default " DAEMON_DEFAULT_BPFFS ")"},
	{"state-dir", "DIR", CLI_DAEMON_STATE_DIR, 0,
	 "one JSON file per sandbox, for re-adoption (default: state/ beside the socket)"},
	{"socket-group", "GROUP", CLI_DAEMON_SOCKET_GROUP, 0,
	 "a group whose members may also use the socket (default: root only)"},
	CLI_NAMES_OPTIONS,
	{"verify-interval", "SECONDS", CLI_DAEMON_VERIFY_INTERVAL, 0,
	 "seconds between the periodic checks of every sandbox (1 to 3600, default 5)"},
	{"no-events", NULL, CLI_DAEMON_NO_EVENTS, 0, "denials are counted but produce no events"},
	{"metrics-listen", "ADDR:PORT", CLI_DAEMON_METRICS_LISTEN, 0,
	 "answer GET /metrics (Prometheus text) there"},
	{"dns-rate", "QPS", CLI_DAEMON_DNS_RATE, 0,
	 "DNS queries per second per sandbox, bursts of twice that (default 200)"},
	{"accept-vsock", NULL, CLI_DAEMON_ACCEPT_VSOCK, 0,
	 "verify passes a live vsock transport that nothing refuses (no BPF LSM), with a warning"},
	{"policy-dir", "DIR", CLI_DAEMON_POLICY_DIR, 0,
	 "policies by name, DIR/NAME.json, for the OCI hook's io.bfbpf.policy=NAME "
	 "(default " DAEMON_DEFAULT_POLICY_DIR ")"},
	{"log-level", "LEVEL", CLI_DAEMON_LOG_LEVEL, 0,
	 "error, warn, info or debug: what goes to stderr (default info)"},
	{0},
};

static int cli_daemon_option(struct cli_args *args, int id, const char *value, void *ctx)
{
	struct daemon_options *daemon = ctx;
	enum log_level level;
	struct group *group;
	long long number;
	int status;

	(void)args; /* --min-ttl, --max-ttl, --grace: shared options, parsed before */
	switch (id) {
	case CLI_DAEMON_BPFFS:
		if (value[0] != '/')
			return cli_usage_error("--bpffs %s: must be an absolute path", value);
		daemon->bpffs_dir = value;
		return CLI_EXIT_OK;
	case CLI_DAEMON_STATE_DIR:
		daemon->state_dir = value;
		return CLI_EXIT_OK;
	case CLI_DAEMON_SOCKET_GROUP:
		group = getgrnam(value);
		if (!group)
			return cli_usage_error("--socket-group %s: no such group", value);
		daemon->socket_group = group->gr_gid;
		return CLI_EXIT_OK;
	case CLI_DAEMON_LOG_LEVEL:
		if (log_level_from_name(value, &level))
			return cli_usage_error(
				"--log-level %s: expected error, warn, info or debug", value);
		log_set_level(level);
		return CLI_EXIT_OK;
	case CLI_DAEMON_VERIFY_INTERVAL:
		status = cli_number_option("--verify-interval", value, 1, 3600, "seconds", &number);
		daemon->verify_interval_seconds = (int)number;
		return status;
	case CLI_DAEMON_NO_EVENTS:
		daemon->events = false;
		return CLI_EXIT_OK;
	case CLI_DAEMON_POLICY_DIR:
		if (value[0] != '/')
			return cli_usage_error("--policy-dir %s: must be an absolute path", value);
		daemon->policy_dir = value;
		return CLI_EXIT_OK;
	case CLI_DAEMON_METRICS_LISTEN:
		daemon->metrics_listen = value;
		return CLI_EXIT_OK;
	case CLI_DAEMON_ACCEPT_VSOCK:
		daemon->accept_vsock = true;
		return CLI_EXIT_OK;
	case CLI_DAEMON_DNS_RATE:
		status = cli_number_option("--dns-rate", value, 1, 10000000, "queries per second",
					   &number);
		daemon->dns_rate = (unsigned int)number;
		return status;
	}
	return CLI_EXIT_USAGE;
}

int cli_daemon(const struct cli_command *command, int argc, char **argv)
{
	struct daemon_options daemon = {
		.verify_interval_seconds = 5,
		.events = true,
		.dns_rate = RESPONDER_RATE_PER_SECOND,
		.bpffs_dir = DAEMON_DEFAULT_BPFFS,
		.socket_group = (gid_t)-1,
		.client_timeout_seconds = 30,
		.policy_dir = DAEMON_DEFAULT_POLICY_DIR,
	};
	struct cli_args args;
	int status;

	cli_args_init(&args);
	status = cli_parse(command, argc, argv, &args, cli_daemon_option, &daemon);
	if (status)
		goto cleanup;
	status = cli_names_check(&args.resolver.names);
	if (status)
		goto cleanup;
	daemon.socket_path = client_socket_path(args.socket);
	daemon.resolver = args.resolver;
	log_capture_libbpf();
	status = daemon_run(&daemon) ? CLI_EXIT_FAILED : CLI_EXIT_OK;
cleanup:
	cli_args_free(&args);
	return status;
}
