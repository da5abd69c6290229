/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The CLI's side of the control socket. */
#ifndef BFBPF_CLIENT_H
#define BFBPF_CLIENT_H

#include <stddef.h>
#include <jansson.h>

#define CLIENT_TIMEOUT_SECONDS 120

/* --socket, else $BFBPF_SOCKET, else the default path. */
const char *client_socket_path(const char *given);
/* Connect and send one request line; returns the connected fd (replies follow on it). */
int client_send(const char *socket_path, json_t *request, char *err, size_t err_size);
/* Read up to a newline (the buffer may hold more than one line). */
int client_read_line(int fd, char **line, int timeout_ms, char *err, size_t err_size);
/*
 * The error code (docs/operations.md) of a failed client_send/client_request:
 * timeout, bad_reply, internal, else unreachable (no daemon, or it hung up).
 */
const char *client_error_code(int err);
/* Send one request, wait for its reply line. -errno with err filled on failure. */
int client_request(const char *socket_path, json_t *request, json_t **reply, char *err,
		   size_t err_size);

#endif /* BFBPF_CLIENT_H */
