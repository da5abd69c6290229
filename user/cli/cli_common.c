// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The values behind the shared options (numbers, policy, target) and the CLI's one-line output. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "lib/cgroup.h"

int cli_number_parse(const char *text, long long min, long long max, long long *out)
{
	char *end;
	long long value;

	/* strtoll skips leading blanks and takes "" as 0: neither is a number here. */
	if (!text || !*text || isspace((unsigned char)text[0]))
		return -EINVAL;
	errno = 0;
	value = strtoll(text, &end, 10);
	if (end == text || *end)
		return -EINVAL;
	if (errno == ERANGE || value < min || value > max)
		return -ERANGE;
	if (errno)
		return -EINVAL;
	*out = value;
	return 0;
}

int cli_number_option(const char *option, const char *text, long long min, long long max,
		      const char *what, long long *out)
{
	if (!cli_number_parse(text, min, max, out))
		return CLI_EXIT_OK;
	return cli_usage_error("%s %s: expected %s (%lld to %lld)", option, text, what, min, max);
}

int cli_policy_build(const struct cli_policy_args *args, struct policy *out)
{
	bool flags = args->mode || args->allow || args->model_endpoints ||
		     args->no_model_endpoint || args->no_loopback;
	char err[512];
	json_t *object;
	int result;

	if (args->file && flags)
		return cli_usage_error("--policy cannot be combined with --mode, --allow or the "
				       "other policy flags");
	if (args->file) {
		if (policy_load_file(args->file, out, err, sizeof(err))) {
			cli_error("invalid policy: %s", err);
			return CLI_EXIT_USAGE;
		}
		return CLI_EXIT_OK;
	}
	if (!args->mode)
		return cli_usage_error("a policy is required: --policy FILE or --mode MODE");
	object = json_pack("{s:s, s:b, s:b}", "network_mode", args->mode, "allow_model_endpoint",
			   !args->no_model_endpoint, "allow_loopback", !args->no_loopback);
	if (!object) {
		cli_error("out of memory");
		return CLI_EXIT_FAILED;
	}
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

/* --cgroup as given is resolved here (for a clear error), --pid into that process's cgroup. */
int cli_target_resolve(const struct cli_target *target, char *out, size_t size, bool required)
{
	int err;

	if (!target->cgroup && !target->pid) {
		if (required)
			return cli_usage_error("a target is required: --cgroup PATH or --pid PID");
		out[0] = '\0';
		return CLI_EXIT_OK;
	}
	if (target->cgroup) {
		err = cgroup_resolve(target->cgroup, out, size);
		if (err) {
			cli_error("cgroup %s: %s", target->cgroup,
				  err == -EINVAL ? "not a cgroup v2 directory" : strerror(-err));
			return CLI_EXIT_FAILED;
		}
		return CLI_EXIT_OK;
	}
	err = cgroup_of_pid(target->pid, out, size);
	if (err) {
		cli_error("process %d: cannot find its cgroup v2: %s", (int)target->pid,
			  strerror(-err));
		return CLI_EXIT_FAILED;
	}
	return CLI_EXIT_OK;
}

void cli_error(const char *fmt, ...)
{
	va_list args;

	fputs("bfbpf: ", stderr);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
}

int cli_usage_error(const char *fmt, ...)
{
	va_list args;

	fputs("bfbpf: ", stderr);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputs(" (see 'bfbpf --help')\n", stderr);
	return CLI_EXIT_USAGE;
}

void cli_print_json(json_t *value)
{
	char *text = json_dumps(value, JSON_COMPACT);

	printf("%s\n", text ? text : "{}");
	free(text);
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
	    !strcmp(code, "bad_json") || !strcmp(code, "unknown_op") ||
	    !strcmp(code, "protected_cgroup"))
		return CLI_EXIT_USAGE;
	return CLI_EXIT_FAILED;
}

void cli_reply_error(json_t *reply)
{
	const char *message =
		json_string_value(json_object_get(json_object_get(reply, "error"), "message"));

	cli_error("%s: %s", cli_reply_code(reply), message ? message : "(no message)");
}
