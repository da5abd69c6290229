// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bfbpf log and bfbpf metrics: the daemon's events and counters, for people and scrapers. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "sandbox/events.h"

/* "90", "90s", "5m", "2h", "1d" into seconds; -1 if not a duration. */
static double cli_duration(const char *text)
{
	char *end;
	double value;

	errno = 0;
	value = strtod(text, &end);
	if (errno || end == text || value < 0)
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
		char *text = json_dumps(event, JSON_COMPACT);

		printf("%s\n", text ? text : "{}");
		free(text);
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
	cli_error("the daemon closed the event stream");
	return CLI_EXIT_FAILED;
}

int cli_log(int argc, char **argv)
{
	static const struct option options[] = {
		{"cgroup", required_argument, NULL, CLI_OPTION_CGROUP},
		{"pid", required_argument, NULL, CLI_OPTION_PID},
		{"socket", required_argument, NULL, CLI_OPTION_SOCKET},
		{"follow", no_argument, NULL, CLI_OPTION_FOLLOW},
		{"since", required_argument, NULL, CLI_OPTION_SINCE},
		{"json", no_argument, NULL, CLI_OPTION_JSON},
		{"help", no_argument, NULL, CLI_OPTION_HELP},
		{0},
	};
	const char *cgroup = NULL, *pid = NULL, *socket_path = NULL;
	bool follow = false, json = false;
	char path[PATH_MAX], err[PATH_MAX + 256], *line = NULL;
	double since = -1;
	json_t *request = NULL, *reply = NULL, *event;
	FILE *stream = NULL;
	size_t capacity = 0, i;
	int opt, fd, status;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case CLI_OPTION_CGROUP:
			cgroup = optarg;
			break;
		case CLI_OPTION_PID:
			pid = optarg;
			break;
		case CLI_OPTION_SOCKET:
			socket_path = optarg;
			break;
		case CLI_OPTION_FOLLOW:
			follow = true;
			break;
		case CLI_OPTION_JSON:
			json = true;
			break;
		case CLI_OPTION_SINCE:
			since = cli_duration(optarg);
			if (since < 0) {
				cli_error("--since %s: expected a duration (90s, 5m, 2h, 1d)",
					  optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case CLI_OPTION_HELP:
			printf("usage: bfbpf log [--cgroup PATH | --pid PID] [--follow] "
			       "[--since DURATION] [--socket PATH] [--json]\n");
			return CLI_EXIT_OK;
		default:
			cli_error("log: bad option %s (see 'bfbpf --help')", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	status = cli_target_path(cgroup, pid, path, sizeof(path), false);
	if (status)
		return status;
	request = json_pack("{s:s, s:b}", "op", "log", "follow", follow);
	if (path[0])
		json_object_set_new(request, "cgroup", json_string(path));
	if (since >= 0)
		json_object_set_new(request, "since", json_real(since));
	fd = client_send(client_socket_path(socket_path), request, err, sizeof(err));
	json_decref(request);
	if (fd < 0) {
		cli_error("%s", err);
		return CLI_EXIT_FAILED;
	}
	stream = fdopen(fd, "r");
	if (!stream || getline(&line, &capacity, stream) <= 0 ||
	    !(reply = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL))) {
		cli_error("the daemon sent no reply");
		status = CLI_EXIT_FAILED;
		goto cleanup;
	}
	status = cli_reply_exit(reply);
	if (status) {
		cli_error("%s: %s", cli_reply_code(reply),
			  json_string_value(
				  json_object_get(json_object_get(reply, "error"), "message")));
		goto cleanup;
	}
	json_array_foreach(json_object_get(reply, "events"), i, event) cli_log_print(event, json);
	if (follow)
		status = cli_log_follow(stream, json);
cleanup:
	free(line);
	json_decref(reply);
	if (stream)
		fclose(stream);
	else
		close(fd);
	return status;
}

int cli_metrics(int argc, char **argv)
{
	static const struct option options[] = {
		{"socket", required_argument, NULL, CLI_OPTION_SOCKET},
		{"help", no_argument, NULL, CLI_OPTION_HELP},
		{0},
	};
	const char *socket_path = NULL;
	json_t *request, *reply = NULL;
	char err[PATH_MAX + 256];
	int opt, status;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == CLI_OPTION_SOCKET) {
			socket_path = optarg;
		} else if (opt == CLI_OPTION_HELP) {
			printf("usage: bfbpf metrics [--socket PATH]\n");
			return CLI_EXIT_OK;
		} else {
			cli_error("metrics: bad option %s (see 'bfbpf --help')", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	request = json_pack("{s:s}", "op", "metrics");
	if (client_request(client_socket_path(socket_path), request, &reply, err, sizeof(err))) {
		json_decref(request);
		cli_error("%s", err);
		return CLI_EXIT_FAILED;
	}
	json_decref(request);
	status = cli_reply_exit(reply);
	if (status)
		cli_error("%s: %s", cli_reply_code(reply),
			  json_string_value(
				  json_object_get(json_object_get(reply, "error"), "message")));
	else
		fputs(json_string_value(json_object_get(reply, "text")), stdout);
	json_decref(reply);
	return status;
}
