/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What daemon.c (set-up, loop) and daemon_clients.c (control connections) share. */
#ifndef BFBPF_DAEMON_INTERNAL_H
#define BFBPF_DAEMON_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <sys/types.h>
#include <jansson.h>

#include "ctl.h"
#include "daemon.h"
#include "dns/responder.h"
#include "sandbox/sandbox.h"

#define DAEMON_MAX_CLIENTS 256

/* The process that connected a client: judged at accept and again at each request. */
struct daemon_peer {
	pid_t pid;
	int pidfd;		       /* SO_PEERPIDFD (6.5+); -1 before: then start_time */
	unsigned long long start_time; /* /proc/PID/stat: tells a reused pid apart */
};

struct daemon_client {
	int fd;
	struct daemon_peer peer;
	char *buffer;
	size_t length, capacity;
	time_t last_activity;
	struct ctl_pending pending; /* a reply waiting for names; lines after it wait too */
	bool following;		    /* log --follow: events stream out; input is ignored */
};

struct daemon {
	const struct daemon_options *options;
	struct sandbox_registry registry;
	struct resolver *resolver;
	struct responder_context dns;
	struct events *events;
	int metrics_fd; /* --metrics-listen, or -1 */
	int epoll_fd, listen_fd, signal_fd, timer_fd;
	int sweep_fd; /* every DAEMON_SWEEP_MS: refused SNI flows are destroyed (fail fast) */
	char cgroup_mount[PATH_MAX]; /* where peers' cgroups are looked up; "" until found */
	struct daemon_client clients[DAEMON_MAX_CLIENTS];
};

int daemon_epoll_add(struct daemon *daemon, int fd);

/* A free client slot (fd -1, no peer). */
void daemon_client_reset(struct daemon_client *client);
void daemon_client_close(struct daemon *daemon, struct daemon_client *client);
/* The client on this fd; fd -1: a free slot. NULL if none. */
struct daemon_client *daemon_client_of(struct daemon *daemon, int fd);
/* Sends a reply (taking it); -EPIPE if the peer did not take it whole. */
int daemon_client_send(struct daemon_client *client, json_t *reply);
void daemon_accept(struct daemon *daemon);
/* Serves every complete line in the client's buffer. */
void daemon_client_serve_lines(struct daemon *daemon, struct daemon_client *client);
void daemon_client_read(struct daemon *daemon, struct daemon_client *client);

#endif /* BFBPF_DAEMON_INTERNAL_H */
