// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "bfbpf.h"
#include "lib/cgroup.h"
#include "cli.h"
#include "client.h"
#include "daemon/daemon.h"
#include "lib/log.h"
#include "dns/responder.h"

static const char cli_usage_text[] =
	"usage:\n"
	"  bfbpf daemon  [--socket PATH] [--bpffs DIR] [--state-dir DIR] [--socket-group GROUP]\n"
	"                [--dns-server ADDR[:PORT]]... [--log-level error|warn|info|debug]\n"
	"                [--verify-interval SECONDS] [--min-ttl S] [--max-ttl S] [--grace S]\n"
	"                [--no-events] [--metrics-listen ADDR:PORT] [--dns-rate QPS]\n"
	"  bfbpf attach  TARGET POLICY [--netns PATH] [--socket PATH] [--json]\n"
	"  bfbpf update  TARGET POLICY [--socket PATH] [--json]\n"
	"  bfbpf detach  TARGET [--socket PATH] [--json]\n"
	"  bfbpf status  [TARGET] [--socket PATH] [--json]\n"
	"  bfbpf verify  TARGET [--max-age SECONDS] [--socket PATH] [--json]\n"
	"  bfbpf run     POLICY [--cgroup-parent DIR] [--bpffs DIR] [--] COMMAND [ARG]...\n"
	"  bfbpf resolve POLICY [--dns-server ADDR[:PORT]]... [--json]   # dry run of names\n"
	"  bfbpf check   [--json]\n"
	"  bfbpf log     [TARGET] [--follow] [--since DURATION] [--socket PATH] [--json]\n"
	"  bfbpf metrics [--socket PATH]\n"
	"  bfbpf --version | --help\n"
	"\n"
	"TARGET := --cgroup PATH | --pid PID\n"
	"POLICY := --policy FILE.json | --mode public|no-network|allowlist [--allow ENTRY]...\n"
	"          [--model-endpoint HOST:PORT]... [--no-model-endpoint] [--no-loopback]\n"
	"\n"
	"Exit status: 0 success, 1 the operation failed, 2 bad usage or an invalid policy.\n"
	"The socket defaults to $BFBPF_SOCKET, else " DAEMON_DEFAULT_SOCKET ".\n";

void cli_error(const char *fmt, ...)
{
	va_list args;

	fputs("bfbpf: ", stderr);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
}

/* Returned by option parsers after --help: nothing more to do, exit 0. */
#define CLI_HELP_SHOWN (-1)

static int cli_usage_error(const char *fmt, const char *detail)
{
	fputs("bfbpf: ", stderr);
	fprintf(stderr, fmt, detail);
	fputs(" (see 'bfbpf --help')\n", stderr);
	return CLI_EXIT_USAGE;
}

bool cli_policy_option(struct cli_policy_args *args, int opt, const char *value)
{
	json_t **list;

	switch (opt) {
	case CLI_OPTION_POLICY:
		args->file = value;
		return true;
	case CLI_OPTION_MODE:
		args->mode = value;
		return true;
	case CLI_OPTION_NO_MODEL_ENDPOINT:
		args->no_model_endpoint = true;
		return true;
	case CLI_OPTION_NO_LOOPBACK:
		args->no_loopback = true;
		return true;
	case CLI_OPTION_ALLOW:
		list = &args->allow;
		break;
	case CLI_OPTION_MODEL_ENDPOINT:
		list = &args->model_endpoints;
		break;
	default:
		return false;
	}
	if (!*list)
		*list = json_array();
	json_array_append_new(*list, json_string(value));
	return true;
}

void cli_policy_args_free(struct cli_policy_args *args)
{
	json_decref(args->allow);
	json_decref(args->model_endpoints);
	memset(args, 0, sizeof(*args));
}

int cli_policy_build(struct cli_policy_args *args, struct policy *out)
{
	bool flags = args->mode || args->allow || args->model_endpoints ||
		     args->no_model_endpoint || args->no_loopback;
	char err[512];
	json_t *object;
	int result;

	if (args->file && flags)
		return cli_usage_error("%s", "--policy cannot be combined with --mode, --allow or "
					     "the other policy flags");
	if (args->file) {
		if (policy_load_file(args->file, out, err, sizeof(err))) {
			cli_error("invalid policy: %s", err);
			return CLI_EXIT_USAGE;
		}
		return CLI_EXIT_OK;
	}
	if (!args->mode)
		return cli_usage_error("%s", "a policy is required: --policy FILE or --mode MODE");
	object = json_pack("{s:s, s:b, s:b}", "network_mode", args->mode, "allow_model_endpoint",
			   !args->no_model_endpoint, "allow_loopback", !args->no_loopback);
	if (args->allow)
		json_object_set(object, "allowed_hosts", args->allow);
	if (args->model_endpoints)
		json_object_set(object, "model_endpoints", args->model_endpoints);
	result = policy_from_json(object, out, err, sizeof(err));
	json_decref(object);
	if (result) {
		cli_error("invalid policy: %s", err);
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

struct cli_client_args {
	struct cli_policy_args policy;
	const char *cgroup;
	const char *pid;
	const char *socket;
	const char *netns;
	long max_age; /* verify: -1 unless given */
	bool json;
};

static int cli_client_parse(int argc, char **argv, struct cli_client_args *args, bool policy)
{
	static const struct option options[] = {
		CLI_POLICY_LONG_OPTIONS,
		{"cgroup", required_argument, NULL, CLI_OPTION_CGROUP},
		{"pid", required_argument, NULL, CLI_OPTION_PID},
		{"socket", required_argument, NULL, CLI_OPTION_SOCKET},
		{"netns", required_argument, NULL, CLI_OPTION_NETNS},
		{"json", no_argument, NULL, CLI_OPTION_JSON},
		{"max-age", required_argument, NULL, CLI_OPTION_MAX_AGE},
		{"help", no_argument, NULL, CLI_OPTION_HELP},
		{0},
	};
	char *end;
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (policy && cli_policy_option(&args->policy, opt, optarg))
			continue;
		switch (opt) {
		case CLI_OPTION_MAX_AGE:
			errno = 0;
			args->max_age = strtol(optarg, &end, 10);
			if (errno || *end || args->max_age < 0)
				return cli_usage_error("--max-age %s: expected seconds", optarg);
			break;
		case CLI_OPTION_CGROUP:
			args->cgroup = optarg;
			break;
		case CLI_OPTION_PID:
			args->pid = optarg;
			break;
		case CLI_OPTION_SOCKET:
			args->socket = optarg;
			break;
		case CLI_OPTION_NETNS:
			args->netns = optarg;
			break;
		case CLI_OPTION_JSON:
			args->json = true;
			break;
		case CLI_OPTION_HELP:
			fputs(cli_usage_text, stdout);
			return CLI_HELP_SHOWN;
		default:
			return cli_usage_error("%s: unknown option or missing argument",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (args->cgroup && args->pid)
		return cli_usage_error("%s", "--cgroup and --pid are exclusive");
	return CLI_EXIT_OK;
}

/* The cgroup path to send: --cgroup as given (resolved here for a clear error), or --pid's. */
static int cli_target(const struct cli_client_args *args, char *out, size_t size, bool required)
{
	return cli_target_path(args->cgroup, args->pid, out, size, required);
}

int cli_target_path(const char *cgroup, const char *pid_text, char *out, size_t size, bool required)
{
	char *end;
	long pid;
	int err;

	if (!cgroup && !pid_text) {
		if (required)
			return cli_usage_error("%s",
					       "a target is required: --cgroup PATH or --pid PID");
		out[0] = '\0';
		return CLI_EXIT_OK;
	}
	if (cgroup) {
		err = cgroup_resolve(cgroup, out, size);
		if (err) {
			cli_error("cgroup %s: %s", cgroup,
				  err == -EINVAL ? "not a cgroup v2 directory" : strerror(-err));
			return CLI_EXIT_FAILED;
		}
		return CLI_EXIT_OK;
	}
	errno = 0;
	pid = strtol(pid_text, &end, 10);
	if (errno || *end || pid <= 0 || pid > INT_MAX)
		return cli_usage_error("--pid %s: not a process id", pid_text);
	err = cgroup_of_pid((pid_t)pid, out, size);
	if (err) {
		cli_error("process %ld: cannot find its cgroup v2: %s", pid, strerror(-err));
		return CLI_EXIT_FAILED;
	}
	return CLI_EXIT_OK;
}

const char *cli_reply_code(json_t *reply)
{
	const char *code =
		json_string_value(json_object_get(json_object_get(reply, "error"), "code"));
	return code ? code : "internal";
}

int cli_reply_exit(json_t *reply)
{
	const char *code;

	if (json_is_true(json_object_get(reply, "ok")))
		return CLI_EXIT_OK;
	code = cli_reply_code(reply);
	if (!strcmp(code, "invalid_policy") || !strcmp(code, "bad_request") ||
	    !strcmp(code, "bad_json") || !strcmp(code, "unknown_op"))
		return CLI_EXIT_USAGE;
	return CLI_EXIT_FAILED;
}

static void cli_print_human(const char *op, json_t *reply)
{
	json_t *item;
	size_t i;

	if (!strcmp(op, "status")) {
		json_array_foreach(json_object_get(reply, "sandboxes"), i, item)
		{
			json_t *policy = json_object_get(item, "policy");

			printf("%s  id %lld  %s  generation %lld  entries %lld  digest %s\n",
			       json_string_value(json_object_get(item, "cgroup")),
			       json_integer_value(json_object_get(item, "cgroup_id")),
			       policy ? json_string_value(json_object_get(policy, "network_mode"))
				      : "policy-unknown",
			       json_integer_value(json_object_get(item, "generation")),
			       json_integer_value(json_object_get(item, "entries")),
			       json_string_value(json_object_get(item, "digest")));
		}
		if (!json_array_size(json_object_get(reply, "sandboxes")))
			printf("no sandboxes attached\n");
		return;
	}
	if (!strcmp(op, "verify")) {
		json_array_foreach(json_object_get(reply, "checks"), i, item)
			printf("%-4s %-32s %s\n",
			       json_is_true(json_object_get(item, "ok")) ? "ok" : "FAIL",
			       json_string_value(json_object_get(item, "name")),
			       json_string_value(json_object_get(item, "detail")));
		printf("lockdown %s\n", json_is_true(json_object_get(reply, "lockdown_complete"))
						? "complete"
						: "INCOMPLETE");
		return;
	}
	if (!strcmp(op, "detach")) {
		printf("detached %s\n", json_string_value(json_object_get(reply, "cgroup")));
		return;
	}
	printf("%s %s (generation %lld, %lld entries, digest %s)\n",
	       !strcmp(op, "attach") ? "attached" : "updated",
	       json_string_value(json_object_get(reply, "cgroup")),
	       json_integer_value(json_object_get(reply, "generation")),
	       json_integer_value(json_object_get(reply, "entries")),
	       json_string_value(json_object_get(reply, "digest")));
}

static int cli_client_command(const char *op, int argc, char **argv)
{
	bool wants_policy = !strcmp(op, "attach") || !strcmp(op, "update");
	bool wants_target = strcmp(op, "status") != 0;
	struct cli_client_args args = {.max_age = -1};
	struct policy policy;
	bool have_policy = false;
	json_t *request = NULL, *reply = NULL;
	char cgroup[PATH_MAX], err[PATH_MAX + 256];
	struct stat st;
	int status;

	status = cli_client_parse(argc, argv, &args, wants_policy);
	if (status == CLI_HELP_SHOWN) {
		status = CLI_EXIT_OK;
		goto cleanup;
	}
	if (status)
		goto cleanup;
	if (args.max_age >= 0 && strcmp(op, "verify")) {
		status = cli_usage_error("%s", "--max-age goes with verify");
		goto cleanup;
	}
	if (args.netns && (strcmp(op, "attach") || stat(args.netns, &st))) {
		status = cli_usage_error("--netns %s: not a network namespace file (attach only)",
					 args.netns);
		goto cleanup;
	}
	if (wants_policy) {
		status = cli_policy_build(&args.policy, &policy);
		if (status)
			goto cleanup;
		have_policy = true;
	}
	status = cli_target(&args, cgroup, sizeof(cgroup), wants_target);
	if (status)
		goto cleanup;
	request = json_pack("{s:s}", "op", op);
	if (cgroup[0])
		json_object_set_new(request, "cgroup", json_string(cgroup));
	if (have_policy)
		json_object_set_new(request, "policy", policy_to_json(&policy));
	if (args.netns)
		json_object_set_new(request, "netns", json_string(args.netns));
	else if (args.pid && !strcmp(op, "attach")) {
		/* --pid implies that process's network namespace. */
		char netns[64];

		snprintf(netns, sizeof(netns), "/proc/%s/ns/net", args.pid);
		json_object_set_new(request, "netns", json_string(netns));
	}
	if (args.max_age >= 0)
		json_object_set_new(request, "max_age", json_integer(args.max_age));
	if (client_request(client_socket_path(args.socket), request, &reply, err, sizeof(err))) {
		cli_error("%s", err);
		status = CLI_EXIT_FAILED;
		goto cleanup;
	}
	status = cli_reply_exit(reply);
	if (!status && !strcmp(op, "verify") &&
	    !json_is_true(json_object_get(reply, "lockdown_complete")))
		status = CLI_EXIT_FAILED;
	if (args.json) {
		char *text = json_dumps(reply, JSON_COMPACT);

		printf("%s\n", text ? text : "{}");
		free(text);
	} else if (json_is_true(json_object_get(reply, "ok"))) {
		cli_print_human(op, reply);
	}
	if (!json_is_true(json_object_get(reply, "ok")))
		cli_error("%s: %s", cli_reply_code(reply),
			  json_string_value(
				  json_object_get(json_object_get(reply, "error"), "message")));
	else if (status)
		cli_error("lockdown of %s is not complete: see the failed checks above", cgroup);
cleanup:
	json_decref(reply);
	json_decref(request);
	if (have_policy)
		policy_free(&policy);
	cli_policy_args_free(&args.policy);
	return status;
}

static int cli_seconds(const char *text, uint32_t *out)
{
	char *end;
	long value;

	errno = 0;
	value = strtol(text, &end, 10);
	if (errno || *end || end == text || value < 0 || value > 86400)
		return -EINVAL;
	*out = (uint32_t)value;
	return 0;
}

static int cli_daemon(int argc, char **argv)
{
	static const struct option options[] = {
		{"socket", required_argument, NULL, CLI_OPTION_SOCKET},
		{"bpffs", required_argument, NULL, CLI_OPTION_BPFFS},
		{"state-dir", required_argument, NULL, CLI_OPTION_STATE_DIR},
		{"socket-group", required_argument, NULL, CLI_OPTION_SOCKET_GROUP},
		{"dns-server", required_argument, NULL, CLI_OPTION_DNS_SERVER},
		{"log-level", required_argument, NULL, CLI_OPTION_LOG_LEVEL},
		{"verify-interval", required_argument, NULL, CLI_OPTION_VERIFY_INTERVAL},
		{"min-ttl", required_argument, NULL, CLI_OPTION_MIN_TTL},
		{"max-ttl", required_argument, NULL, CLI_OPTION_MAX_TTL},
		{"grace", required_argument, NULL, CLI_OPTION_GRACE},
		{"no-events", no_argument, NULL, CLI_OPTION_NO_EVENTS},
		{"metrics-listen", required_argument, NULL, CLI_OPTION_METRICS_LISTEN},
		{"dns-rate", required_argument, NULL, CLI_OPTION_DNS_RATE},
		{"help", no_argument, NULL, CLI_OPTION_HELP},
		{0},
	};
	struct daemon_options daemon = {
		.verify_interval_seconds = 5,
		.events = true,
		.dns_rate = RESPONDER_RATE_PER_SECOND,
		.socket_path = client_socket_path(NULL),
		.bpffs_dir = DAEMON_DEFAULT_BPFFS,
		.socket_group = (gid_t)-1,
		.client_timeout_seconds = 30,
	};
	enum log_level level;
	struct group *group;
	int opt, err;

	names_config_default(&daemon.resolver.names);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case CLI_OPTION_SOCKET:
			daemon.socket_path = optarg;
			break;
		case CLI_OPTION_BPFFS:
			daemon.bpffs_dir = optarg;
			break;
		case CLI_OPTION_STATE_DIR:
			daemon.state_dir = optarg;
			break;
		case CLI_OPTION_SOCKET_GROUP:
			group = getgrnam(optarg);
			if (!group)
				return cli_usage_error("--socket-group %s: no such group", optarg);
			daemon.socket_group = group->gr_gid;
			break;
		case CLI_OPTION_DNS_SERVER:
			if (daemon.resolver.server_count == RESOLVER_MAX_SERVERS)
				return cli_usage_error("--dns-server %s: at most 8 servers",
						       optarg);
			daemon.resolver.servers[daemon.resolver.server_count++] = optarg;
			break;
		case CLI_OPTION_MIN_TTL:
		case CLI_OPTION_MAX_TTL:
		case CLI_OPTION_GRACE:
			err = cli_seconds(
				optarg, opt == CLI_OPTION_MIN_TTL   ? &daemon.resolver.names.min_ttl
					: opt == CLI_OPTION_MAX_TTL ? &daemon.resolver.names.max_ttl
								    : &daemon.resolver.names.grace);
			if (err)
				return cli_usage_error("%s: expected seconds (0 to 86400)", optarg);
			break;
		case CLI_OPTION_NO_EVENTS:
			daemon.events = false;
			break;
		case CLI_OPTION_METRICS_LISTEN:
			daemon.metrics_listen = optarg;
			break;
		case CLI_OPTION_DNS_RATE: {
			char *end;
			unsigned long rate;

			errno = 0;
			rate = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || rate < 1 || rate > 10000000)
				return cli_usage_error(
					"--dns-rate %s: expected queries per second (1 "
					"to 10000000)",
					optarg);
			daemon.dns_rate = (unsigned int)rate;
			break;
		}
		case CLI_OPTION_VERIFY_INTERVAL:
			daemon.verify_interval_seconds = atoi(optarg);
			if (daemon.verify_interval_seconds < 1 ||
			    daemon.verify_interval_seconds > 3600)
				return cli_usage_error("--verify-interval %s: expected 1 to 3600 "
						       "seconds",
						       optarg);
			break;
		case CLI_OPTION_LOG_LEVEL:
			if (log_level_from_name(optarg, &level))
				return cli_usage_error("--log-level %s: expected error, warn, info "
						       "or debug",
						       optarg);
			log_set_level(level);
			break;
		case CLI_OPTION_HELP:
			fputs(cli_usage_text, stdout);
			return CLI_EXIT_OK;
		default:
			return cli_usage_error("%s: unknown option or missing argument",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (daemon.bpffs_dir[0] != '/')
		return cli_usage_error("--bpffs %s: must be an absolute path", daemon.bpffs_dir);
	if (daemon.resolver.names.min_ttl > daemon.resolver.names.max_ttl)
		return cli_usage_error("%s", "--min-ttl is larger than --max-ttl");
	log_capture_libbpf();
	return daemon_run(&daemon) ? CLI_EXIT_FAILED : CLI_EXIT_OK;
}

int cli_main(int argc, char **argv)
{
	const char *command;

	if (argc < 2)
		return cli_usage_error("%s", "a command is required");
	command = argv[1];
	log_capture_libbpf();
	if (!strcmp(command, "--help") || !strcmp(command, "-h") || !strcmp(command, "help")) {
		fputs(cli_usage_text, stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(command, "--version")) {
		printf("bfbpf %s (BPF ABI %d)\n", BFBPF_VERSION, BFBPF_ABI_VERSION);
		return CLI_EXIT_OK;
	}
	if (!strcmp(command, "daemon"))
		return cli_daemon(argc - 1, argv + 1);
	if (!strcmp(command, "run"))
		return cli_run(argc - 1, argv + 1);
	if (!strcmp(command, "check"))
		return cli_check(argc - 1, argv + 1);
	if (!strcmp(command, "resolve"))
		return cli_resolve(argc - 1, argv + 1);
	if (!strcmp(command, "log"))
		return cli_log(argc - 1, argv + 1);
	if (!strcmp(command, "metrics"))
		return cli_metrics(argc - 1, argv + 1);
	if (!strcmp(command, "attach") || !strcmp(command, "update") ||
	    !strcmp(command, "detach") || !strcmp(command, "status") || !strcmp(command, "verify"))
		return cli_client_command(command, argc - 1, argv + 1);
	return cli_usage_error("unknown command '%s'", command);
}
