// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The daemon's control connections: accept, read lines, serve them, send replies. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "daemon_internal.h"
#include "lib/log.h"
#include "sandbox/events.h"

void daemon_client_close(struct daemon *daemon, struct daemon_client *client)
{
	events_unfollow(daemon->events, client->fd);
	ctl_pending_clear(&client->pending);
	epoll_ctl(daemon->epoll_fd, EPOLL_CTL_DEL, client->fd, NULL);
	close(client->fd);
	free(client->buffer);
	memset(client, 0, sizeof(*client));
	client->fd = -1;
}

struct daemon_client *daemon_client_of(struct daemon *daemon, int fd)
{
	for (int i = 0; i < DAEMON_MAX_CLIENTS; i++)
		if (daemon->clients[i].fd == fd)
			return &daemon->clients[i];
	return NULL;
}

/*
 * Replies go out at once; a peer that stops reading (no progress for a
 * second while its receive buffer is full) loses the rest and is dropped by
 * the caller. A large reply to a reader that keeps reading goes out whole.
 */
int daemon_client_send(struct daemon_client *client, json_t *reply)
{
	char *text = json_dumps(reply, JSON_COMPACT);
	size_t length, sent = 0;
	uint64_t started_ms = log_monotonic_ms();
	int waited_ms = 0;

	json_decref(reply);
	if (!text)
		return -ENOMEM;
	length = strlen(text);
	text[length++] = '\n'; /* replaces the terminator; length counts it */
	while (sent < length) {
		ssize_t n = send(client->fd, text + sent, length - sent, MSG_NOSIGNAL);

		if (n > 0) {
			sent += (size_t)n;
			waited_ms = 0;
			continue;
		}
		/* And a trickling reader gets 5 s in all: the daemon has others to serve. */
		if (n < 0 && errno == EAGAIN && waited_ms < 1000 &&
		    log_monotonic_ms() - started_ms < 5000) {
			struct pollfd poller = {.fd = client->fd, .events = POLLOUT};

			/* Counted only when the peer made no room at all. */
			if (poll(&poller, 1, 100) == 0)
				waited_ms += 100;
			continue;
		}
		break;
	}
	free(text);
	return sent == length ? 0 : -EPIPE;
}

static bool daemon_peer_allowed(const struct daemon *daemon, int fd)
{
	struct ucred peer;
	socklen_t size = sizeof(peer);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size))
		return false;
	if (peer.uid == 0)
		return true;
	if (daemon->options->socket_group != (gid_t)-1 && peer.gid == daemon->options->socket_group)
		return true;
	log_warn("refused a client with uid %u gid %u pid %d", peer.uid, peer.gid, peer.pid);
	return false;
}

void daemon_accept(struct daemon *daemon)
{
	struct daemon_client *slot;
	int fd = accept4(daemon->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	slot = daemon_client_of(daemon, -1);
	if (!slot || !daemon_peer_allowed(daemon, fd)) {
		struct daemon_client refused = {.fd = fd};

		daemon_client_send(&refused,
				   slot ? ctl_reply_error("forbidden",
							  "only root or the socket group may use "
							  "bfbpf")
					: ctl_reply_error("busy", "too many clients; retry"));
		close(fd);
		return;
	}
	slot->fd = fd;
	slot->last_activity = time(NULL);
	if (daemon_epoll_add(daemon, fd))
		daemon_client_close(daemon, slot);
}

void daemon_client_serve_lines(struct daemon *daemon, struct daemon_client *client)
{
	char *newline;

	while (!client->pending.active && !client->following && client->buffer &&
	       (newline = memchr(client->buffer, '\n', client->length))) {
		size_t line_length = (size_t)(newline - client->buffer);
		json_t *reply = ctl_handle_line(&daemon->registry, client->buffer, line_length,
						&client->pending);

		client->length -= line_length + 1;
		memmove(client->buffer, newline + 1, client->length);
		if (!reply && client->pending.active)
			continue; /* waits for names: daemon_after_events sends it */
		if (daemon_client_send(client, reply)) {
			daemon_client_close(daemon, client);
			return;
		}
		if (client->pending.follow) {
			client->pending.follow = false;
			if (events_follow(daemon->events, client->fd,
					  client->pending.follow_cgroup_id)) {
				daemon_client_send(client,
						   ctl_reply_error("busy", "too many followers"));
				daemon_client_close(daemon, client);
				return;
			}
			client->following = true;
		}
	}
}

void daemon_client_read(struct daemon *daemon, struct daemon_client *client)
{
	char chunk[65536];
	ssize_t n = recv(client->fd, chunk, sizeof(chunk), 0);

	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		daemon_client_close(daemon, client);
		return;
	}
	client->last_activity = time(NULL);
	if (client->length + (size_t)n > CTL_MAX_REQUEST_BYTES + 1) {
		daemon_client_send(client, ctl_reply_error("too_large", CTL_TOO_LARGE_MESSAGE));
		daemon_client_close(daemon, client);
		return;
	}
	/* Grown as lines arrive: most requests are small, a 100,000-entry policy is not. */
	if (client->length + (size_t)n > client->capacity) {
		size_t capacity = client->capacity ? client->capacity : 65536;
		char *grown;

		while (capacity < client->length + (size_t)n)
			capacity *= 2;
		grown = realloc(client->buffer, capacity);
		if (!grown) {
			daemon_client_close(daemon, client);
			return;
		}
		client->buffer = grown;
		client->capacity = capacity;
	}
	memcpy(client->buffer + client->length, chunk, (size_t)n);
	client->length += (size_t)n;
	daemon_client_serve_lines(daemon, client);
}
