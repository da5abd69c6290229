/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every command shares: the shape of a command, the option groups
 * (targets, policy, socket, --json, --dns-server) and their one parser, the
 * checked number parser, and the one-line error and reply helpers. The
 * commands include this; the dispatcher (cli.c) does too. Nothing here knows
 * of any one command.
 */
#ifndef BFBPF_CLI_OPTIONS_H
#define BFBPF_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <jansson.h>

#include "lib/container.h"
#include "lib/policy.h"
#include "dns/resolver.h"

/* Exit statuses of the contract (docs: "CLI contract"). */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILED 1
#define CLI_EXIT_USAGE 2
/* Returned after --help: nothing more to do; the dispatcher exits 0. */
#define CLI_HELP_SHOWN (-1)

/* Ids of the shared options; a command's own options count from CLI_OPTION_OWN. */
enum cli_option_id {
	CLI_OPTION_HELP = 1000,
	CLI_OPTION_CGROUP,
	CLI_OPTION_PID,
	CLI_OPTION_POLICY,
	CLI_OPTION_MODE,
	CLI_OPTION_ALLOW,
	CLI_OPTION_MODEL_ENDPOINT,
	CLI_OPTION_NO_MODEL_ENDPOINT,
	CLI_OPTION_NO_LOOPBACK,
	CLI_OPTION_ALLOW_LOOPBACK,
	CLI_OPTION_SOCKET,
	CLI_OPTION_JSON,
	CLI_OPTION_DNS_SERVER,
	CLI_OPTION_CONTAINER,
	CLI_OPTION_RUNTIME,
	CLI_OPTION_MIN_TTL,
	CLI_OPTION_MAX_TTL,
	CLI_OPTION_GRACE,
	CLI_OPTION_OWN = 1100,
};

/* One long option (no short forms: scripts read better with long ones). */
struct cli_option {
	const char *name; /* without the dashes */
	const char *arg;  /* the argument's name in help; NULL: a flag */
	int id;
	unsigned int flags; /* CLI_REPEATABLE */
	const char *help;
};

#define CLI_REPEATABLE 1u

/*
 * The rows of a name's TTL bounds and grace, in the option table of each
 * command that resolves names itself (daemon, run); parsed with the shared
 * options, into cli_args.resolver.names.
 */
/* clang-format off: the rows as they stand in a table */
#define CLI_NAMES_OPTIONS                                                                          \
	{"min-ttl", "S", CLI_OPTION_MIN_TTL, 0,                                                    \
	 "a name's TTL is clamped to at least this (0 to 86400, default 30)"},                     \
		{"max-ttl", "S", CLI_OPTION_MAX_TTL, 0,                                            \
		 "... and to at most this (0 to 86400, default 3600)"},                            \
	{                                                                                          \
		"grace", "S", CLI_OPTION_GRACE, 0,                                                 \
			"an address a name stopped returning stays this long past its TTL "        \
			"(default 300)"                                                            \
	}
/* clang-format on */

/* Option groups and operands of a command (struct cli_command.groups). */
enum cli_group {
	CLI_GROUP_TARGET = 1u << 0,	     /* --cgroup PATH | --pid PID | --container NAME */
	CLI_GROUP_TARGET_REQUIRED = 1u << 1, /* ... and one of them is required */
	CLI_GROUP_POLICY = 1u << 2,	     /* --policy FILE | --mode MODE [--allow ENTRY]... */
	CLI_GROUP_SOCKET = 1u << 3,	     /* --socket PATH */
	CLI_GROUP_JSON = 1u << 4,	     /* --json */
	CLI_GROUP_DNS_SERVER = 1u << 5,	     /* --dns-server ADDR[:PORT]... */
	CLI_GROUP_COMMAND = 1u << 6,	     /* [--] COMMAND [ARG]... follows the options */
};

struct cli_command {
	const char *name;
	/* argv[0] is the command's name; returns an exit status or CLI_HELP_SHOWN. */
	int (*run)(const struct cli_command *command, int argc, char **argv);
	const char *help;		  /* one line: what it does */
	unsigned int groups;		  /* enum cli_group */
	const struct cli_option *options; /* its own, ended by {0}; may be NULL */
};

/* Where a command applies: at most one of these. */
struct cli_target {
	const char *cgroup;    /* --cgroup PATH, as given */
	pid_t pid;	       /* --pid PID; 0: not given */
	const char *container; /* --container NAME|ID, as given */
	const char *runtime;   /* --runtime docker|podman; NULL: the one installed */
	/* --container: what the runtime said (id, name, pid), filled by cli_target_resolve. */
	struct container_info *info;
	bool stopped_ok; /* detach: a stopped container resolves to no cgroup ("") */
};

/* The policy options as given; cli_policy_build() makes a policy of them. */
struct cli_policy_args {
	const char *file;
	const char *mode;
	json_t *allow;		 /* array of strings */
	json_t *model_endpoints; /* array of strings */
	bool no_model_endpoint;
	bool no_loopback;
	bool allow_loopback; /* --allow-loopback: all of it, whatever the command's default */
};

/* What the shared options leave; the command's own options go to its handler. */
struct cli_args {
	struct cli_target target;
	struct container_info container; /* where target.info points */
	struct cli_policy_args policy;
	struct resolver_options resolver; /* --dns-server; names at their defaults */
	const char *socket;		  /* NULL: $BFBPF_SOCKET, else the default */
	bool json;
	char **operands; /* CLI_GROUP_COMMAND: the command and its arguments */
	int operand_count;
};

/* A command's own option: returns CLI_EXIT_OK, or CLI_EXIT_USAGE after one line on stderr. */
typedef int (*cli_option_handler)(struct cli_args *args, int id, const char *value, void *ctx);

void cli_args_init(struct cli_args *args);
void cli_args_free(struct cli_args *args);
/*
 * The one option parser: argv[0] is the command's name. Shared options fill
 * args, the command's own go to handler (may be NULL if it has none).
 * Returns CLI_EXIT_OK, CLI_EXIT_USAGE (one line printed) or CLI_HELP_SHOWN.
 */
int cli_parse(const struct cli_command *command, int argc, char **argv, struct cli_args *args,
	      cli_option_handler handler, void *ctx);

/* Every option of a command, shared ones and --help included, in help order. */
void cli_command_options(const struct cli_command *command,
			 void (*visit)(const struct cli_option *option, void *ctx), void *ctx);
/*
 * The options of one group (a single CLI_GROUP_* bit with options: TARGET,
 * POLICY, SOCKET, JSON, DNS_SERVER), for what is generated from the table.
 */
void cli_group_options(unsigned int group,
		       void (*visit)(const struct cli_option *option, void *ctx), void *ctx);
/* PREFIX"bfbpf NAME TARGET POLICY [--netns PATH] ...", wrapped under its first option. */
void cli_print_synopsis(FILE *out, const char *prefix, const struct cli_command *command,
			int name_width);
/* The whole help of one command: synopsis, what it does, every option. */
void cli_print_command_help(FILE *out, const struct cli_command *command);
/* "TARGET := ..." and "POLICY := ..." lines, for the groups given. */
void cli_print_grammar(FILE *out, unsigned int groups);

/*
 * The one checked number parser: base 10, the whole string, within [min, max].
 * Returns 0, -EINVAL (not a number) or -ERANGE (out of [min, max]).
 */
int cli_number_parse(const char *text, long long min, long long max, long long *out);
/* For an option's value: on error prints "--NAME VALUE: expected WHAT (MIN to MAX)", returns 2. */
int cli_number_option(const char *option, const char *text, long long min, long long max,
		      const char *what, long long *out);

/* A name's TTL bounds and grace (--min-ttl, --max-ttl, --grace): at most a day. */
#define CLI_MAX_NAME_SECONDS 86400
/* For those options: 0 to CLI_MAX_NAME_SECONDS, else one line and CLI_EXIT_USAGE. */
int cli_seconds_option(const char *option, const char *text, uint32_t *out);
/* --min-ttl must not exceed --max-ttl: CLI_EXIT_OK or one line and CLI_EXIT_USAGE. */
int cli_names_check(const struct names_config *names);

/* Builds and validates the policy; on error one line (invalid_policy) and CLI_EXIT_USAGE. */
int cli_policy_build(const struct cli_policy_args *args, struct policy *out);
/*
 * The same with allow_loopback's default given (false for bfbpf run), for
 * the flags and for a policy file that leaves the key out.
 */
int cli_policy_build_loopback(const struct cli_policy_args *args, bool allow_loopback,
			      struct policy *out);
/*
 * The cgroup path to send: "" when no target is given and none is required.
 * --container fills target->info (cli_container.c). A target that is the
 * cgroup2 root or holds PID 1 or this process is refused (CLI_EXIT_USAGE).
 * Fails (through cli_fail) with no_cgroup, no_process or bad_request.
 */
int cli_target_resolve(const struct cli_target *target, char *out, size_t size, bool required);

/* cli_container.c: the cgroup of --container (running), into out; an exit status. */
int cli_container_resolve(const struct cli_target *target, char *out, size_t size);
/* The request's "container" object for --container, or NULL without one. */
json_t *cli_container_json(const struct cli_target *target);

/* "bfbpf: ..." on stderr, one line. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * The same, with where to read the usage; returns CLI_EXIT_USAGE. Under
 * --json it also prints the bad_request error object (see cli_fail).
 */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * A failure of the command itself (not a daemon's reply): "bfbpf: MESSAGE" on
 * stderr and, under --json, exactly one {"ok":false,"error":{"code":CODE,
 * "message":MESSAGE}} on stdout, CODE from docs/operations.md. Returns status.
 * Call it once, on the failure that ends the command.
 */
int cli_fail(int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Whether failures print their JSON error object: cli_parse() sets it from
 * --json (before parsing, so that a usage error is one object too).
 */
void cli_json_errors_set(bool on);
/* One JSON object on one line of stdout (--json). */
void cli_print_json(json_t *value);
/* Exit status for a daemon reply (0 ok, 2 for request and policy errors, else 1). */
int cli_reply_exit(json_t *reply);
const char *cli_reply_code(json_t *reply);
/* "bfbpf: CODE: MESSAGE" of a refused request. */
void cli_reply_error(json_t *reply);

#endif /* BFBPF_CLI_OPTIONS_H */
