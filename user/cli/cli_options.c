// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The one option parser of the CLI, and the help it prints from the same tables. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli_options.h"
#include "daemon/daemon.h"
#include "dns/names.h"

/* Enough for the largest command (the daemon) with room to grow. */
#define CLI_MAX_OPTIONS 48

static const struct cli_option cli_help_option[] = {
	{"help", NULL, CLI_OPTION_HELP, 0, "print this help and exit"},
	{0},
};

static const struct cli_option cli_target_options[] = {
	{"cgroup", "PATH", CLI_OPTION_CGROUP, 0,
	 "the sandbox's cgroup v2 directory (absolute, or relative to the cgroup2 mount)"},
	{"pid", "PID", CLI_OPTION_PID, 0, "the cgroup v2 of this process"},
	{"container", "NAME|ID", CLI_OPTION_CONTAINER, 0,
	 "a running Docker or Podman container: its cgroup and network namespace; the daemon "
	 "keeps its policy across restarts"},
	{"runtime", "RUNTIME", CLI_OPTION_RUNTIME, 0,
	 "docker or podman, for --container (default: the one installed)"},
	{0},
};

static const struct cli_option cli_policy_options[] = {
	{"policy", "FILE.json", CLI_OPTION_POLICY, 0,
	 "the policy as a file (not combined with the flags below)"},
	{"mode", "MODE", CLI_OPTION_MODE, 0, "public, no-network or allowlist"},
	{"allow", "ENTRY", CLI_OPTION_ALLOW, CLI_REPEATABLE,
	 "allowlist: an address, prefix, [address]:port or host name"},
	{"model-endpoint", "HOST:PORT", CLI_OPTION_MODEL_ENDPOINT, CLI_REPEATABLE,
	 "the model lane: allowed in every mode but with --no-model-endpoint"},
	{"no-model-endpoint", NULL, CLI_OPTION_NO_MODEL_ENDPOINT, 0,
	 "close the model lane (a hermetic run)"},
	{"no-loopback", NULL, CLI_OPTION_NO_LOOPBACK, 0,
	 "deny loopback but the addresses the policy names (run's default)"},
	{"allow-loopback", NULL, CLI_OPTION_ALLOW_LOOPBACK, 0,
	 "allow all of loopback (the default, but for run)"},
	{0},
};

static const struct cli_option cli_dns_server_options[] = {
	{"dns-server", "ADDR[:PORT]", CLI_OPTION_DNS_SERVER, CLI_REPEATABLE,
	 "resolve names with this server (default: /etc/resolv.conf); at most 8"},
	{0},
};

static const struct cli_option cli_socket_options[] = {
	{"socket", "PATH", CLI_OPTION_SOCKET, 0,
	 "the control socket (default: $BFBPF_SOCKET, else " DAEMON_DEFAULT_SOCKET ")"},
	{0},
};

static const struct cli_option cli_json_options[] = {
	{"json", NULL, CLI_OPTION_JSON, 0, "print exactly one JSON object on stdout"},
	{0},
};

static const char cli_target_grammar[] =
	"TARGET := --cgroup PATH | --pid PID | --container NAME|ID [--runtime docker|podman]\n";
static const char cli_policy_grammar[] =
	"POLICY := --policy FILE.json | --mode public|no-network|allowlist [--allow ENTRY]...\n"
	"          [--model-endpoint HOST:PORT]... [--no-model-endpoint]\n"
	"          [--no-loopback | --allow-loopback]\n";

void cli_print_grammar(FILE *out, unsigned int groups)
{
	if (groups & CLI_GROUP_TARGET)
		fputs(cli_target_grammar, out);
	if (groups & CLI_GROUP_POLICY)
		fputs(cli_policy_grammar, out);
}

static void cli_visit_list(const struct cli_option *list,
			   void (*visit)(const struct cli_option *option, void *ctx), void *ctx)
{
	for (; list && list->name; list++)
		visit(list, ctx);
}

void cli_command_options(const struct cli_command *command,
			 void (*visit)(const struct cli_option *option, void *ctx), void *ctx)
{
	if (command->groups & CLI_GROUP_TARGET)
		cli_visit_list(cli_target_options, visit, ctx);
	if (command->groups & CLI_GROUP_POLICY)
		cli_visit_list(cli_policy_options, visit, ctx);
	cli_visit_list(command->options, visit, ctx);
	if (command->groups & CLI_GROUP_DNS_SERVER)
		cli_visit_list(cli_dns_server_options, visit, ctx);
	if (command->groups & CLI_GROUP_SOCKET)
		cli_visit_list(cli_socket_options, visit, ctx);
	if (command->groups & CLI_GROUP_JSON)
		cli_visit_list(cli_json_options, visit, ctx);
	cli_visit_list(cli_help_option, visit, ctx);
}

void cli_group_options(unsigned int group,
		       void (*visit)(const struct cli_option *option, void *ctx), void *ctx)
{
	if (group == CLI_GROUP_TARGET)
		cli_visit_list(cli_target_options, visit, ctx);
	else if (group == CLI_GROUP_POLICY)
		cli_visit_list(cli_policy_options, visit, ctx);
	else if (group == CLI_GROUP_SOCKET)
		cli_visit_list(cli_socket_options, visit, ctx);
	else if (group == CLI_GROUP_JSON)
		cli_visit_list(cli_json_options, visit, ctx);
	else if (group == CLI_GROUP_DNS_SERVER)
		cli_visit_list(cli_dns_server_options, visit, ctx);
}

struct cli_getopt_table {
	struct option options[CLI_MAX_OPTIONS + 1];
	size_t count;
	bool overflow;
};

static void cli_getopt_add(const struct cli_option *option, void *ctx)
{
	struct cli_getopt_table *table = ctx;

	if (table->count == CLI_MAX_OPTIONS) {
		table->overflow = true;
		return;
	}
	table->options[table->count++] = (struct option){
		option->name, option->arg ? required_argument : no_argument, NULL, option->id};
}

void cli_args_init(struct cli_args *args)
{
	memset(args, 0, sizeof(*args));
	args->target.info = &args->container;
	names_config_default(&args->resolver.names);
}

void cli_args_free(struct cli_args *args)
{
	json_decref(args->policy.allow);
	json_decref(args->policy.model_endpoints);
	args->policy.allow = NULL;
	args->policy.model_endpoints = NULL;
}

static int cli_json_list_add(json_t **list, const char *value)
{
	if (!*list)
		*list = json_array();
	if (!*list || json_array_append_new(*list, json_string(value)))
		return cli_fail(CLI_EXIT_FAILED, "internal", "out of memory");
	return CLI_EXIT_OK;
}

/* A shared option: CLI_EXIT_OK or CLI_EXIT_USAGE; CLI_NOT_SHARED if id is none of them. */
#define CLI_NOT_SHARED (-2)

static int cli_shared_option(struct cli_args *args, int id, const char *value)
{
	long long number;
	int status;

	switch (id) {
	case CLI_OPTION_CGROUP:
		args->target.cgroup = value;
		return CLI_EXIT_OK;
	case CLI_OPTION_PID:
		status = cli_number_option("--pid", value, 1, INT_MAX, "a process id", &number);
		if (!status)
			args->target.pid = (pid_t)number;
		return status;
	case CLI_OPTION_CONTAINER:
		args->target.container = value;
		return CLI_EXIT_OK;
	case CLI_OPTION_RUNTIME:
		if (strcmp(value, "docker") && strcmp(value, "podman"))
			return cli_usage_error("--runtime %s: expected docker or podman", value);
		args->target.runtime = value;
		return CLI_EXIT_OK;
	case CLI_OPTION_POLICY:
		args->policy.file = value;
		return CLI_EXIT_OK;
	case CLI_OPTION_MODE:
		args->policy.mode = value;
		return CLI_EXIT_OK;
	case CLI_OPTION_ALLOW:
		return cli_json_list_add(&args->policy.allow, value);
	case CLI_OPTION_MODEL_ENDPOINT:
		return cli_json_list_add(&args->policy.model_endpoints, value);
	case CLI_OPTION_NO_MODEL_ENDPOINT:
		args->policy.no_model_endpoint = true;
		return CLI_EXIT_OK;
	case CLI_OPTION_NO_LOOPBACK:
		args->policy.no_loopback = true;
		return CLI_EXIT_OK;
	case CLI_OPTION_ALLOW_LOOPBACK:
		args->policy.allow_loopback = true;
		return CLI_EXIT_OK;
	case CLI_OPTION_SOCKET:
		args->socket = value;
		return CLI_EXIT_OK;
	case CLI_OPTION_JSON:
		args->json = true;
		return CLI_EXIT_OK;
	case CLI_OPTION_DNS_SERVER:
		if (args->resolver.server_count == RESOLVER_MAX_SERVERS)
			return cli_usage_error("--dns-server %s: at most %d servers", value,
					       RESOLVER_MAX_SERVERS);
		args->resolver.servers[args->resolver.server_count++] = value;
		return CLI_EXIT_OK;
	case CLI_OPTION_MIN_TTL:
		return cli_seconds_option("--min-ttl", value, &args->resolver.names.min_ttl);
	case CLI_OPTION_MAX_TTL:
		return cli_seconds_option("--max-ttl", value, &args->resolver.names.max_ttl);
	case CLI_OPTION_GRACE:
		return cli_seconds_option("--grace", value, &args->resolver.names.grace);
	}
	return CLI_NOT_SHARED;
}

/* What follows the options: run's command, or nothing. */
static int cli_parse_operands(const struct cli_command *command, int argc, char **argv,
			      struct cli_args *args)
{
	if (command->groups & CLI_GROUP_COMMAND) {
		if (optind >= argc)
			return cli_usage_error("%s: a command is required: bfbpf %s ... [--] "
					       "COMMAND [ARG]...",
					       command->name, command->name);
		args->operands = argv + optind;
		args->operand_count = argc - optind;
	} else if (optind < argc) {
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	}
	if (args->target.cgroup && args->target.pid)
		return cli_usage_error("--cgroup and --pid are exclusive");
	if (args->target.container && (args->target.cgroup || args->target.pid))
		return cli_usage_error("--container is exclusive with --cgroup and --pid");
	if (args->target.runtime && !args->target.container)
		return cli_usage_error("--runtime goes with --container");
	return CLI_EXIT_OK;
}

/* "--json" among the options (before any "--"), whatever the parse will make of the rest. */
static bool cli_argv_has_json(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			return true;
	return false;
}

int cli_parse(const struct cli_command *command, int argc, char **argv, struct cli_args *args,
	      cli_option_handler handler, void *ctx)
{
	/* "+": stop at run's command, whose options are not ours; ":": tell a missing value. */
	const char *short_options = command->groups & CLI_GROUP_COMMAND ? "+:" : ":";
	struct cli_getopt_table table = {0};
	int opt, status;

	/* Known before parsing: a usage error under --json is one JSON object too. */
	cli_json_errors_set((command->groups & CLI_GROUP_JSON) && cli_argv_has_json(argc, argv));
	cli_command_options(command, cli_getopt_add, &table);
	if (table.overflow)
		return cli_fail(CLI_EXIT_FAILED, "internal",
				"%s: more than %d options (raise CLI_MAX_OPTIONS)", command->name,
				CLI_MAX_OPTIONS);
	opterr = 0;
	optind = 0; /* GNU: start afresh (argv[0] is the command's name) */
	while ((opt = getopt_long(argc, argv, short_options, table.options, NULL)) != -1) {
		if (opt == CLI_OPTION_HELP) {
			cli_print_command_help(stdout, command);
			return CLI_HELP_SHOWN;
		}
		if (opt == ':')
			return cli_usage_error("%s: missing value", argv[optind - 1]);
		/* optopt holds the id of a known option given a value it does not take (--json=x).
		 */
		if (opt == '?' && optopt >= CLI_OPTION_HELP)
			return cli_usage_error("%s: takes no value", argv[optind - 1]);
		if (opt == '?')
			return cli_usage_error("%s: unknown option for %s", argv[optind - 1],
					       command->name);
		status = cli_shared_option(args, opt, optarg);
		if (status == CLI_NOT_SHARED)
			status = handler ? handler(args, opt, optarg, ctx) : CLI_EXIT_USAGE;
		if (status)
			return status;
	}
	cli_json_errors_set(args->json); /* as parsed: "--socket --json" is a path */
	return cli_parse_operands(command, argc, argv, args);
}

/* Help text, wrapped: words go on the line until it would pass CLI_HELP_WIDTH. */
#define CLI_HELP_WIDTH 96
#define CLI_HELP_OPTION_COLUMN 30

struct cli_line {
	FILE *out;
	int column, indent;
};

static void cli_line_word(struct cli_line *line, const char *word, int length)
{
	if (line->column + 1 + length > CLI_HELP_WIDTH && line->column > line->indent) {
		fprintf(line->out, "\n%*s", line->indent, "");
		line->column = line->indent;
	} else {
		fputc(' ', line->out);
		line->column++;
	}
	fprintf(line->out, "%.*s", length, word);
	line->column += length;
}

static void cli_line_words(struct cli_line *line, const char *text)
{
	while (*text) {
		size_t length = strcspn(text, " ");

		if (length)
			cli_line_word(line, text, (int)length);
		text += length;
		text += strspn(text, " ");
	}
}

/* "--name ARG", "..." after a repeatable one. */
static void cli_option_text(const struct cli_option *option, char *out, size_t size)
{
	snprintf(out, size, "--%s%s%s%s", option->name, option->arg ? " " : "",
		 option->arg ? option->arg : "", option->flags & CLI_REPEATABLE ? "..." : "");
}

static void cli_synopsis_option(const struct cli_option *option, void *ctx)
{
	char text[128], word[132];

	cli_option_text(option, text, sizeof(text));
	/* "[--allow ENTRY]...": the brackets hold the option, the dots follow them. */
	if (option->flags & CLI_REPEATABLE)
		snprintf(word, sizeof(word), "[%.*s]...", (int)strlen(text) - 3, text);
	else
		snprintf(word, sizeof(word), "[%s]", text);
	cli_line_word(ctx, word, (int)strlen(word)); /* one option is never split */
}

void cli_print_synopsis(FILE *out, const char *prefix, const struct cli_command *command,
			int name_width)
{
	struct cli_line line = {.out = out};
	unsigned int groups = command->groups;

	line.column = fprintf(out, "%sbfbpf %-*s", prefix, name_width, command->name);
	line.indent = line.column + 1;
	if (groups & CLI_GROUP_TARGET)
		cli_line_words(&line, groups & CLI_GROUP_TARGET_REQUIRED ? "TARGET" : "[TARGET]");
	if (groups & CLI_GROUP_POLICY)
		cli_line_words(&line, "POLICY");
	/* The groups but TARGET and POLICY are spelt out; --help goes without saying. */
	cli_visit_list(command->options, cli_synopsis_option, &line);
	if (groups & CLI_GROUP_DNS_SERVER)
		cli_visit_list(cli_dns_server_options, cli_synopsis_option, &line);
	if (groups & CLI_GROUP_SOCKET)
		cli_visit_list(cli_socket_options, cli_synopsis_option, &line);
	if (groups & CLI_GROUP_JSON)
		cli_visit_list(cli_json_options, cli_synopsis_option, &line);
	if (groups & CLI_GROUP_COMMAND)
		cli_line_words(&line, "[--] COMMAND [ARG]...");
	fputc('\n', out);
}

static void cli_help_option_line(const struct cli_option *option, void *ctx)
{
	struct cli_line line = {.out = ctx, .indent = CLI_HELP_OPTION_COLUMN};
	char text[128];

	cli_option_text(option, text, sizeof(text));
	line.column = fprintf(line.out, "  %s", text);
	if (line.column >= CLI_HELP_OPTION_COLUMN) {
		fputc('\n', line.out);
		line.column = 0;
	}
	fprintf(line.out, "%*s", CLI_HELP_OPTION_COLUMN - 1 - line.column, "");
	line.column = CLI_HELP_OPTION_COLUMN - 1;
	cli_line_words(&line, option->help);
	fputc('\n', line.out);
}

void cli_print_command_help(FILE *out, const struct cli_command *command)
{
	cli_print_synopsis(out, "usage: ", command, 0);
	fprintf(out, "\n%s\n\n", command->help);
	if (command->groups & (CLI_GROUP_TARGET | CLI_GROUP_POLICY)) {
		cli_print_grammar(out, command->groups);
		fputc('\n', out);
	}
	fputs("Options:\n", out);
	cli_command_options(command, cli_help_option_line, out);
	fputs("\nExit status: 0 success, 1 the operation failed, 2 bad usage or an invalid "
	      "policy.\n",
	      out);
}
