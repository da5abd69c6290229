/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What responder.c (sockets, lifetime, status) and responder_query.c share. */
#ifndef BFBPF_RESPONDER_INTERNAL_H
#define BFBPF_RESPONDER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/socket.h>

#include "dns.h"
#include "responder.h"

#define RESPONDER_V4 0
#define RESPONDER_V6 1

struct responder_tcp {
	int fd; /* -1: free slot */
	time_t last_activity;
	struct dns_tcp_stream *stream;
};

struct responder_pending {
	bool used;
	uint8_t *query;
	size_t length;
	struct dns_query parsed;
	char name[HOSTNAME_MAX_LENGTH + 1]; /* normalised */
	int udp_fd;			    /* reply on this UDP socket, or -1 */
	struct sockaddr_storage peer;
	socklen_t peer_length;
	int tcp_fd; /* or on this TCP connection, or -1 */
	uint64_t deadline_ms;
};

struct responder {
	struct responder_context *context;
	void *owner; /* the ops' second argument (the sandbox) */
	uint16_t port;
	bool v6;
	int udp[2], listen[2];
	struct responder_tcp tcp[RESPONDER_MAX_TCP];
	/* Allocated while a query waits: an idle sandbox's responder stays small. */
	struct responder_pending *pending[RESPONDER_MAX_IN_FLIGHT];
	double tokens;
	uint64_t tokens_at_ms;
	uint64_t answered, nodata, refused, failed, formerr, dropped_rate, dropped_busy;
};

/* Calls an operation of the owner's table (struct responder_ops). */
#define responder_op(responder, op, ...)                                                           \
	((responder)->context->ops->op((responder)->context->ops_data, (responder)->owner,         \
				       ##__VA_ARGS__))

/* One query from the sandbox; where says how to reply (its query fields point at the message). */
void responder_query(struct responder *responder, struct responder_pending *where);
void responder_pending_free(struct responder_pending **pending);
void responder_tcp_close(struct responder *responder, struct responder_tcp *tcp);

#endif /* BFBPF_RESPONDER_INTERNAL_H */
