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
	int fd;		    /* -1: free slot */
	uint64_t netns_key; /* the namespace it was accepted in */
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
	int tcp_fd;	    /* or on this TCP connection, or -1 */
	uint64_t netns_key; /* the namespace the query came from */
	uint64_t deadline_ms;
};

/* The sockets in one more network namespace. */
struct responder_listener {
	uint64_t key;
	int udp[2], listen[2];
};

/* A namespace's runtime resolver (runtime_network). */
struct responder_runtime_entry {
	uint64_t key;
	int netns_fd;
	struct responder_runtime runtime;
};

/* A query forwarded to a runtime resolver, waiting for its answer. */
struct responder_forward {
	int fd; /* -1: free */
	uint16_t id;
	uint64_t deadline_ms;
	struct responder_pending *pending; /* the client's query and where to answer */
	void *subnets;			   /* the namespace's, when it was sent */
};

struct responder {
	struct responder_context *context;
	void *owner; /* the ops' second argument (the sandbox) */
	uint16_t port;
	bool v6;
	int udp[2], listen[2];
	uint64_t netns_key; /* the first namespace's */
	size_t listener_count;
	struct responder_listener listeners[RESPONDER_MAX_NETNS - 1];
	size_t runtime_count;
	struct responder_runtime_entry *runtimes; /* RESPONDER_MAX_NETNS at most */
	struct responder_forward forwards[RESPONDER_MAX_FORWARDS];
	struct responder_tcp tcp[RESPONDER_MAX_TCP];
	/* Allocated while a query waits: an idle sandbox's responder stays small. */
	struct responder_pending *pending[RESPONDER_MAX_IN_FLIGHT];
	double tokens;
	uint64_t tokens_at_ms;
	uint64_t answered, nodata, refused, failed, formerr, dropped_rate, dropped_busy;
	uint64_t liveness, forwarded, forward_refused;
};

/* Calls an operation of the owner's table (struct responder_ops). */
#define responder_op(responder, op, ...)                                                           \
	((responder)->context->ops->op((responder)->context->ops_data, (responder)->owner,         \
				       ##__VA_ARGS__))

/* A socket bound to 127.0.0.1 or [::1] on port inside a namespace (the daemon's when < 0). */
int responder_socket(int netns_fd, int family, int type, uint16_t port);
void responder_watch(struct responder *responder, int fd);
void responder_unwatch_close(struct responder *responder, int *fd);
void responder_udp_read(struct responder *responder, int fd, uint64_t netns_key);
void responder_tcp_accept(struct responder *responder, int listen_fd, uint64_t netns_key);
/* Runs fn in the namespace (the daemon's own thread comes back after). */
int responder_in_netns(int netns_fd, int (*fn)(void *arg), void *arg);

void responder_send(struct responder_pending *where, const uint8_t *reply, int length);
void responder_reply_rcode(struct responder_pending *where, const struct dns_query *parsed,
			   int rcode);
/* Does the query go to the runtime resolver? Then it is taken (answered later). */
bool responder_forward(struct responder *responder, struct responder_pending *where,
		       const struct dns_query *parsed, const char *name);
bool responder_forward_handle_fd(struct responder *responder, int fd);
void responder_forward_poll(struct responder *responder);
void responder_forward_close(struct responder *responder);
/* A TCP connection closed: its forwarded queries have nowhere to answer. */
void responder_forward_drop_tcp(struct responder *responder, int tcp_fd);
/* Listeners and runtimes beyond the first namespace: closed with the responder. */
void responder_netns_close_all(struct responder *responder);
bool responder_netns_handle_fd(struct responder *responder, int fd);

/* One query from the sandbox; where says how to reply (its query fields point at the message). */
void responder_query(struct responder *responder, struct responder_pending *where);
void responder_pending_free(struct responder_pending **pending);
void responder_tcp_close(struct responder *responder, struct responder_tcp *tcp);

#endif /* BFBPF_RESPONDER_INTERNAL_H */
