// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bfbpf log and bfbpf metrics: the daemon's events and counters, for people and scrapers. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_commands.h"
#include "client.h"
#include "sandbox/events.h"

/* "90", "90s", "5m", "2h", "1d" into seconds; -1 if not a duration. */
static double cli_duration(const char *text)
{
	char *end;
	double value;

	/* Decimal digits and a fraction ("1.5h"): no blanks, signs, exponents, hex, inf or nan. */
	errno = 0;
	value = strtod(text, &end);
	if (errno || end == text || end != text + strspn(text, "0123456789."))
		return -1;
	if (!*end || !strcmp(end, "s"))
		return value;
	if (!strcmp(end, "m"))
		return value * 60;
	if (!strcmp(end, "h"))
		return value * 3600;
	if (!strcmp(end, "d"))
		return value * 86400;
	return -1;
}

static void cli_log_print(json_t *event, bool json)
{
	char line[1024];

	if (json) {
		cli_print_json(event);
	} else {
		events_format_line(event, line, sizeof(line));
		printf("%s\n", line);
	}
	fflush(stdout);
}

/* After the first reply, every line is one event, until the daemon or the user ends it. */
static int cli_log_follow(FILE *stream, bool json)
{
	char *line = NULL;
	size_t capacity = 0;

	while (getline(&line, &capacity, stream) > 0) {
		json_t *event = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL);

		if (event)
			cli_log_print(event, json);
		json_decref(event);
	}
	free(line);
	return cli_fail(CLI_EXIT_FAILED, "unreachable", "the daemon closed the event stream");
}

enum {
	CLI_LOG_FOLLOW = CLI_OPTION_OWN,
	CLI_LOG_SINCE,
};

const struct cli_option cli_log_options[] = {
	{"follow", NULL, CLI_LOG_FOLLOW, 0, "then print events as they happen, until interrupted"},
	{"since", "DURATION", CLI_LOG_SINCE, 0, "only events this recent (90s, 5m, 2h, 1d)"},
	{0},
};

struct cli_log_args {
	bool follow;
	double since; /* seconds; -1: all the daemon keeps */
};

static int cli_log_option(struct cli_args *args, int id, const char *value, void *ctx)
{
	struct cli_log_args *own = ctx;

	(void)args;
	switch (id) {
	case CLI_LOG_FOLLOW:
		own->follow = true;
		return CLI_EXIT_OK;
	case CLI_LOG_SINCE:
		own->since = cli_duration(value);
		if (own->since < 0)
			return cli_usage_error("--since %s: expected a duration (90s, 5m, 2h, 1d)",
					       value);
		return CLI_EXIT_OK;
	}
	return CLI_EXIT_USAGE;
}

/* The first reply line: the events so far. Then, with --follow, one event a line. */
static int cli_log_read(FILE *stream, bool follow, bool json)
{
	json_t *reply = NULL, *event;
	size_t capacity = 0, i;
	char *line = NULL;
	int status;

	if (getline(&line, &capacity, stream) <= 0) {
		status = cli_fail(CLI_EXIT_FAILED, "unreachable",
				  "the daemon closed the connection without a reply");
		goto cleanup;
	}
	reply = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL);
	if (!json_is_object(reply)) {
		status = cli_fail(CLI_EXIT_FAILED, "bad_reply",
				  "the daemon sent an invalid reply: not a JSON object");
		goto cleanup;
	}
	status = cli_reply_exit(reply);
	if (status) {
		if (json)
			cli_print_json(
				reply); /* the daemon's error object, as the other commands */
		cli_reply_error(reply);
		goto cleanup;
	}
	json_array_foreach(json_object_get(reply, "events"), i, event) cli_log_print(event, json);
	if (follow)
		status = cli_log_follow(stream, json);
cleanup:
	free(line);
	json_decref(reply);
	return status;
}

int cli_log(const struct cli_command *command, int argc, char **argv)
{
	struct cli_log_args own = {.since = -1};
	char path[PATH_MAX], err[PATH_MAX + 256];
	json_t *request = NULL;
	FILE *stream = NULL;
	struct cli_args args;
	int fd = -1, status;

	cli_args_init(&args);
	status = cli_parse(command, argc, argv, &args, cli_log_option, &own);
	if (status)
		goto cleanup;
	status = cli_target_resolve(&args.target, path, sizeof(path), false);
	if (status)
		goto cleanup;
	request = json_pack("{s:s, s:b}", "op", "log", "follow", own.follow);
	if (path[0])
		json_object_set_new(request, "cgroup", json_string(path));
	if (own.since >= 0)
		json_object_set_new(request, "since", json_real(own.since));
	fd = request ? client_send(client_socket_path(args.socket), request, err, sizeof(err))
		     : -ENOMEM;
	if (fd < 0) {
		status = cli_fail(CLI_EXIT_FAILED, client_error_code(fd), "%s",
				  request ? err : "out of memory");
		goto cleanup;
	}
	stream = fdopen(fd, "r");
	if (!stream) {
		status = cli_fail(CLI_EXIT_FAILED, "internal", "fdopen: %s", strerror(errno));
		goto cleanup;
	}
	fd = -1; /* the stream owns it */
	status = cli_log_read(stream, own.follow, args.json);
cleanup:
	if (stream)
		fclose(stream);
	if (fd >= 0)
		close(fd);
	json_decref(request);
	cli_args_free(&args);
	return status;
}

int cli_metrics(const struct cli_command *command, int argc, char **argv)
{
	json_t *request = NULL, *reply = NULL;
	char err[PATH_MAX + 256];
	struct cli_args args;
	const char *text;
	int status;

	cli_args_init(&args);
	status = cli_parse(command, argc, argv, &args, NULL, NULL);
	if (status)
		goto cleanup;
	request = json_pack("{s:s}", "op", "metrics");
	if (client_request(client_socket_path(args.socket), request, &reply, err, sizeof(err))) {
		cli_error("%s", err);
		status = CLI_EXIT_FAILED;
		goto cleanup;
	}
	status = cli_reply_exit(reply);
	text = json_string_value(json_object_get(reply, "text"));
	if (status)
		cli_reply_error(reply);
	else
		fputs(text ? text : "", stdout);
cleanup:
	json_decref(reply);
	json_decref(request);
	cli_args_free(&args);
	return status;
}
