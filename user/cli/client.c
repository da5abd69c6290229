// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "client.h"
#include "daemon/ctl.h"
#include "daemon/daemon.h"

const char *client_socket_path(const char *given)
{
	const char *environment = getenv("BFBPF_SOCKET");

	if (given)
		return given;
	return environment && *environment ? environment : DAEMON_DEFAULT_SOCKET;
}

static int client_connect(const char *path, char *err, size_t err_size)
{
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(address.sun_path)) {
		snprintf(err, err_size, "socket path %s is too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(address.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int saved = errno;

		snprintf(err, err_size, "cannot reach the bfbpf daemon at %s: socket: %s", path,
			 strerror(saved));
		return -saved;
	}
	if (connect(fd, (struct sockaddr *)&address, sizeof(address))) {
		int saved = errno;

		snprintf(err, err_size,
			 "cannot reach the bfbpf daemon at %s: %s (start it with 'bfbpf daemon', "
			 "or pass --socket)",
			 path, strerror(saved));
		close(fd);
		return -saved;
	}
	return fd;
}

int client_read_line(int fd, char **line, int timeout_ms, char *err, size_t err_size)
{
	size_t length = 0, capacity = 4096;
	char *buffer = malloc(capacity);

	if (!buffer) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	for (;;) {
		struct pollfd poller = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&poller, 1, timeout_ms) <= 0) {
			snprintf(err, err_size, "the daemon did not answer within %d s",
				 timeout_ms / 1000);
			free(buffer);
			return -ETIMEDOUT;
		}
		if (length + 4096 > capacity) {
			char *grown = realloc(buffer, capacity * 2);

			if (!grown) {
				free(buffer);
				snprintf(err, err_size, "out of memory");
				return -ENOMEM;
			}
			buffer = grown;
			capacity *= 2;
		}
		n = recv(fd, buffer + length, capacity - length - 1, 0);
		if (n <= 0) {
			snprintf(err, err_size, "the daemon closed the connection without a reply");
			free(buffer);
			return -ECONNRESET;
		}
		length += (size_t)n;
		buffer[length] = '\0';
		if (memchr(buffer, '\n', length))
			break;
	}
	*line = buffer;
	return 0;
}

int client_send(const char *socket_path, json_t *request, char *err, size_t err_size)
{
	char *text;
	size_t length, sent = 0;
	int fd;

	fd = client_connect(socket_path, err, err_size);
	if (fd < 0)
		return fd;
	text = json_dumps(request, JSON_COMPACT);
	if (!text) {
		close(fd);
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	length = strlen(text);
	text[length++] = '\n';
	while (sent < length) {
		ssize_t n = send(fd, text + sent, length - sent, MSG_NOSIGNAL);

		if (n <= 0) {
			int saved = errno;

			/* The daemon refused mid-request (too large): its reply is still there. */
			if (saved == EPIPE || saved == ECONNRESET)
				break;
			snprintf(err, err_size, "sending to the daemon: %s", strerror(saved));
			free(text);
			close(fd);
			return -saved;
		}
		sent += (size_t)n;
	}
	free(text);
	return fd;
}

const char *client_error_code(int err)
{
	switch (err) {
	case -ETIMEDOUT:
		return "timeout";
	case -EPROTO:
		return "bad_reply";
	case -ENOMEM:
		return "internal";
	}
	return "unreachable";
}

int client_request(const char *socket_path, json_t *request, json_t **reply, char *err,
		   size_t err_size)
{
	json_error_t json_error;
	char *line = NULL;
	int fd, result;

	fd = client_send(socket_path, request, err, err_size);
	if (fd < 0)
		return fd;
	result = client_read_line(fd, &line, CLIENT_TIMEOUT_SECONDS * 1000, err, err_size);
	if (result)
		goto cleanup;
	*reply = json_loads(line, JSON_DISABLE_EOF_CHECK, &json_error);
	if (!*reply || !json_is_object(*reply)) {
		snprintf(err, err_size, "the daemon sent an invalid reply: %s",
			 *reply ? "not a JSON object" : json_error.text);
		json_decref(*reply);
		*reply = NULL; /* the caller frees what it gets */
		result = -EPROTO;
	}
cleanup:
	free(line);
	close(fd);
	return result;
}
