// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The values behind the shared options (numbers, policy, target) and the CLI's one-line output. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
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

int cli_seconds_option(const char *option, const char *text, uint32_t *out)
{
	long long seconds;
	int status = cli_number_option(option, text, 0, CLI_MAX_NAME_SECONDS, "seconds", &seconds);

	if (!status)
		*out = (uint32_t)seconds;
	return status;
}

int cli_names_check(const struct names_config *names)
{
	if (names->min_ttl > names->max_ttl)
		return cli_usage_error("--min-ttl is larger than --max-ttl");
	return CLI_EXIT_OK;
}

int cli_policy_build(const struct cli_policy_args *args, struct policy *out)
{
	return cli_policy_build_loopback(args, true, out);
}

int cli_policy_build_loopback(const struct cli_policy_args *args, bool allow_loopback,
			      struct policy *out)
{
	bool flags = args->mode || args->allow || args->model_endpoints ||
		     args->no_model_endpoint || args->no_loopback || args->allow_loopback;
	char err[512];
	json_t *object;
	int result;

	if (args->file && flags)
		return cli_usage_error("--policy cannot be combined with --mode, --allow or the "
				       "other policy flags");
	if (args->no_loopback && args->allow_loopback)
		return cli_usage_error("--no-loopback and --allow-loopback contradict each other");
	if (args->file) {
		if (policy_load_file_loopback(args->file, allow_loopback, out, err, sizeof(err)))
			return cli_fail(CLI_EXIT_USAGE, "invalid_policy", "invalid policy: %s",
					err);
		return CLI_EXIT_OK;
	}
	if (!args->mode)
		return cli_usage_error("a policy is required: --policy FILE or --mode MODE");
	object = json_pack("{s:s, s:b, s:b}", "network_mode", args->mode, "allow_model_endpoint",
			   !args->no_model_endpoint, "allow_loopback",
			   args->allow_loopback || (allow_loopback && !args->no_loopback));
	if (!object)
		return cli_fail(CLI_EXIT_FAILED, "internal", "out of memory");
	if (args->allow)
		json_object_set(object, "allowed_hosts", args->allow);
	if (args->model_endpoints)
		json_object_set(object, "model_endpoints", args->model_endpoints);
	result = policy_from_json(object, out, err, sizeof(err));
	json_decref(object);
	if (result)
		return cli_fail(CLI_EXIT_USAGE, "invalid_policy", "invalid policy: %s", err);
	return CLI_EXIT_OK;
}

/* Early and clear: the daemon refuses these too (docs: "Targets the daemon refuses"). */
static int cli_target_allowed(const char *path)
{
	char why[PATH_MAX * 2 + 64];

	if (cgroup_path_is_protected(path, why, sizeof(why)))
		return cli_fail(CLI_EXIT_USAGE, "protected_cgroup",
				"protected_cgroup: %s: %s; no sandbox or guard may be the cgroup2 "
				"root or hold PID 1 or bfbpf",
				path, why);
	return CLI_EXIT_OK;
}

/* --cgroup as given is resolved here (for a clear error), --pid into that process's cgroup. */
static int cli_target_path(const struct cli_target *target, char *out, size_t size)
{
	int err;

	if (target->container)
		return cli_container_resolve(target, out, size);
	if (target->cgroup) {
		err = cgroup_resolve(target->cgroup, out, size);
		if (err)
			return cli_fail(
				CLI_EXIT_FAILED, "no_cgroup", "cgroup %s: %s", target->cgroup,
				err == -EINVAL ? "not a cgroup v2 directory" : strerror(-err));
		return CLI_EXIT_OK;
	}
	err = cgroup_of_pid(target->pid, out, size);
	/* cgroup_of_pid: -ESRCH when /proc/PID is gone; otherwise the process has no cgroup v2. */
	if (err == -ESRCH)
		return cli_fail(CLI_EXIT_FAILED, "no_process", "process %d does not exist",
				(int)target->pid);
	if (err)
		return cli_fail(CLI_EXIT_FAILED, "no_cgroup",
				"process %d: cannot find its cgroup v2: %s", (int)target->pid,
				strerror(-err));
	return CLI_EXIT_OK;
}

int cli_target_resolve(const struct cli_target *target, char *out, size_t size, bool required)
{
	int status;

	if (!target->cgroup && !target->pid && !target->container) {
		if (required)
			return cli_usage_error("a target is required: --cgroup PATH, --pid PID or "
					       "--container NAME");
		out[0] = '\0';
		return CLI_EXIT_OK;
	}
	status = cli_target_path(target, out, size);
	if (status || !out[0])
		return status;
	return cli_target_allowed(out);
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

/* Under --json, failures print their error object on stdout too (set by cli_parse). */
static bool cli_json_errors;

void cli_json_errors_set(bool on)
{
	cli_json_errors = on;
}

/* The stderr line, and under --json the one error object: both say the same MESSAGE. */
static void cli_vfail(const char *code, const char *suffix, const char *fmt, va_list args)
{
	char message[2048];
	json_t *object;

	vsnprintf(message, sizeof(message), fmt, args);
	fprintf(stderr, "bfbpf: %s%s\n", message, suffix);
	if (!cli_json_errors)
		return;
	object = json_pack("{s:b, s:{s:s, s:s}}", "ok", 0, "error", "code", code, "message",
			   message);
	if (object) {
		cli_print_json(object);
	} else {
		/* Still one object on stdout, even without memory for the message. */
		printf("{\"ok\":false,\"error\":{\"code\":\"%s\",\"message\":\"\"}}\n", code);
	}
	fflush(stdout);
	json_decref(object);
}

int cli_usage_error(const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	cli_vfail("bad_request", " (see 'bfbpf --help')", fmt, args);
	va_end(args);
	return CLI_EXIT_USAGE;
}

int cli_fail(int status, const char *code, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	cli_vfail(code, "", fmt, args);
	va_end(args);
	return status;
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
