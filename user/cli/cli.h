/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The command line (DESIGN.md "CLI contract"). */
#ifndef BFBPF_CLI_H
#define BFBPF_CLI_H

#include <stdbool.h>
#include <getopt.h>
#include <jansson.h>

#include "lib/policy.h"

#define BFBPF_VERSION "0.1.0"

/* Exit statuses of the contract. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILED 1
#define CLI_EXIT_USAGE 2

/* getopt_long values of the policy options shared by attach, update and run. */
enum cli_option {
	CLI_OPTION_POLICY = 1000,
	CLI_OPTION_MODE,
	CLI_OPTION_ALLOW,
	CLI_OPTION_MODEL_ENDPOINT,
	CLI_OPTION_NO_MODEL_ENDPOINT,
	CLI_OPTION_NO_LOOPBACK,
	CLI_OPTION_CGROUP,
	CLI_OPTION_PID,
	CLI_OPTION_SOCKET,
	CLI_OPTION_JSON,
	CLI_OPTION_NETNS,
	CLI_OPTION_BPFFS,
	CLI_OPTION_STATE_DIR,
	CLI_OPTION_LOG_LEVEL,
	CLI_OPTION_DNS_SERVER,
	CLI_OPTION_SOCKET_GROUP,
	CLI_OPTION_CGROUP_PARENT,
	CLI_OPTION_MAX_AGE,
	CLI_OPTION_VERIFY_INTERVAL,
	CLI_OPTION_MIN_TTL,
	CLI_OPTION_MAX_TTL,
	CLI_OPTION_GRACE,
	CLI_OPTION_NO_EVENTS,
	CLI_OPTION_METRICS_LISTEN,
	CLI_OPTION_DNS_RATE,
	CLI_OPTION_FOLLOW,
	CLI_OPTION_SINCE,
	CLI_OPTION_HELP,
};

#define CLI_POLICY_LONG_OPTIONS                                                                    \
	{"policy", required_argument, NULL, CLI_OPTION_POLICY},                                    \
		{"mode", required_argument, NULL, CLI_OPTION_MODE},                                \
		{"allow", required_argument, NULL, CLI_OPTION_ALLOW},                              \
		{"model-endpoint", required_argument, NULL, CLI_OPTION_MODEL_ENDPOINT},            \
		{"no-model-endpoint", no_argument, NULL, CLI_OPTION_NO_MODEL_ENDPOINT},            \
	{                                                                                          \
		"no-loopback", no_argument, NULL, CLI_OPTION_NO_LOOPBACK                           \
	}

struct cli_policy_args {
	const char *file;
	const char *mode;
	json_t *allow;		 /* array of strings */
	json_t *model_endpoints; /* array of strings */
	bool no_model_endpoint;
	bool no_loopback;
};

/* Consumes a policy option; returns true if opt was one. */
bool cli_policy_option(struct cli_policy_args *args, int opt, const char *value);
/* Builds and validates the policy; prints one line and returns CLI_EXIT_USAGE on error. */
int cli_policy_build(struct cli_policy_args *args, struct policy *out);
void cli_policy_args_free(struct cli_policy_args *args);

void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Resolve --cgroup/--pid into the cgroup path to send ("" when neither and not required). */
int cli_target_path(const char *cgroup, const char *pid, char *out, size_t size, bool required);
/* Exit status for a daemon reply (0 ok, 2 for request and policy errors, else 1). */
int cli_reply_exit(json_t *reply);
const char *cli_reply_code(json_t *reply);

int cli_main(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_resolve(int argc, char **argv);
int cli_log(int argc, char **argv);
int cli_metrics(int argc, char **argv);

#endif /* BFBPF_CLI_H */
