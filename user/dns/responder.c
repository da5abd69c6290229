// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "lib/log.h"
#include "resolver.h"
#include "responder_internal.h"

/* A socket bound inside the sandbox's network namespace (the daemon's own when netns_fd < 0). */
int responder_socket(int netns_fd, int family, int type, uint16_t port)
{
	struct sockaddr_storage address = {0};
	socklen_t length;
	int self = -1, fd = -1, err = 0, one = 1;

	if (netns_fd >= 0) {
		self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (self < 0 || setns(netns_fd, CLONE_NEWNET)) {
			err = -errno;
			goto cleanup;
		}
	}
	fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&address;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		length = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&address;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sin6->sin6_addr = in6addr_loopback;
		length = sizeof(*sin6);
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (type == SOCK_STREAM)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&address, length) ||
	    (type == SOCK_STREAM && listen(fd, 16)))
		err = -errno;
cleanup:
	if (self >= 0) {
		if (setns(self, CLONE_NEWNET))
			log_error("cannot return to the daemon's network namespace: %s",
				  strerror(errno));
		close(self);
	}
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}

static uint16_t responder_bound_port(int fd)
{
	struct sockaddr_in sin;
	socklen_t length = sizeof(sin);

	if (getsockname(fd, (struct sockaddr *)&sin, &length))
		return 0;
	return ntohs(sin.sin_port);
}

void responder_watch(struct responder *responder, int fd)
{
	struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};

	epoll_ctl(responder->context->epoll_fd, EPOLL_CTL_ADD, fd, &event);
}

void responder_unwatch_close(struct responder *responder, int *fd)
{
	if (*fd < 0)
		return;
	epoll_ctl(responder->context->epoll_fd, EPOLL_CTL_DEL, *fd, NULL);
	close(*fd);
	*fd = -1;
}

/* One port for UDP and TCP on 127.0.0.1 (and [::1] when the namespace has it). */
static int responder_bind_all(struct responder *responder, int netns_fd, uint16_t want_port)
{
	for (int attempt = 0; attempt < 8; attempt++) {
		uint16_t port = attempt == 0 ? want_port : 0;
		int udp4 = responder_socket(netns_fd, AF_INET, SOCK_DGRAM, port), tcp4;

		if (udp4 < 0)
			continue;
		port = responder_bound_port(udp4);
		tcp4 = responder_socket(netns_fd, AF_INET, SOCK_STREAM, port);
		if (tcp4 < 0) {
			close(udp4);
			continue;
		}
		responder->udp[RESPONDER_V4] = udp4;
		responder->listen[RESPONDER_V4] = tcp4;
		responder->port = port;
		responder->udp[RESPONDER_V6] =
			responder_socket(netns_fd, AF_INET6, SOCK_DGRAM, port);
		responder->listen[RESPONDER_V6] =
			responder_socket(netns_fd, AF_INET6, SOCK_STREAM, port);
		responder->v6 =
			responder->udp[RESPONDER_V6] >= 0 && responder->listen[RESPONDER_V6] >= 0;
		if (!responder->v6) {
			/* No [::1] here: IPv6 queries are redirected to ::ffff:127.0.0.1. */
			if (responder->udp[RESPONDER_V6] >= 0)
				close(responder->udp[RESPONDER_V6]);
			if (responder->listen[RESPONDER_V6] >= 0)
				close(responder->listen[RESPONDER_V6]);
			responder->udp[RESPONDER_V6] = responder->listen[RESPONDER_V6] = -1;
		}
		return 0;
	}
	return -EADDRINUSE;
}

/* A namespace's key: the inode number of its nsfs file (the daemon's own when fd < 0). */
static int responder_key_of(int netns_fd, uint64_t *key)
{
	struct stat st;

	if (netns_fd >= 0 ? fstat(netns_fd, &st) : stat("/proc/self/ns/net", &st))
		return -errno;
	*key = (uint64_t)st.st_ino;
	return 0;
}

int responder_open(struct responder_context *context, void *owner, int netns_fd, uint16_t want_port,
		   struct responder **out)
{
	struct responder *responder = calloc(1, sizeof(*responder));
	int err;

	if (!responder)
		return -ENOMEM;
	responder->context = context;
	responder->owner = owner;
	responder->udp[0] = responder->udp[1] = responder->listen[0] = responder->listen[1] = -1;
	for (int i = 0; i < RESPONDER_MAX_FORWARDS; i++)
		responder->forwards[i].fd = -1;
	for (int i = 0; i < RESPONDER_MAX_TCP; i++)
		responder->tcp[i].fd = -1;
	responder->tokens = 2.0 * context->rate_per_second;
	responder->tokens_at_ms = log_monotonic_ms();
	err = responder_key_of(netns_fd, &responder->netns_key);
	if (!err)
		err = responder_bind_all(responder, netns_fd, want_port);
	if (err) {
		free(responder);
		return err;
	}
	for (int i = 0; i < 2; i++) {
		if (responder->udp[i] >= 0)
			responder_watch(responder, responder->udp[i]);
		if (responder->listen[i] >= 0)
			responder_watch(responder, responder->listen[i]);
	}
	*out = responder;
	return 0;
}

void responder_pending_free(struct responder_pending **pending)
{
	if (!*pending)
		return;
	free((*pending)->query);
	free(*pending);
	*pending = NULL;
}

void responder_tcp_close(struct responder *responder, struct responder_tcp *tcp)
{
	responder_forward_drop_tcp(responder, tcp->fd);
	for (int i = 0; i < RESPONDER_MAX_IN_FLIGHT; i++)
		if (responder->pending[i] && responder->pending[i]->tcp_fd == tcp->fd)
			responder_pending_free(&responder->pending[i]);
	responder_unwatch_close(responder, &tcp->fd);
	free(tcp->stream);
	tcp->stream = NULL;
}

void responder_close(struct responder *responder)
{
	if (!responder)
		return;
	responder_forward_close(responder);
	responder_netns_close_all(responder);
	for (int i = 0; i < RESPONDER_MAX_TCP; i++)
		if (responder->tcp[i].fd >= 0)
			responder_tcp_close(responder, &responder->tcp[i]);
	for (int i = 0; i < RESPONDER_MAX_IN_FLIGHT; i++)
		responder_pending_free(&responder->pending[i]);
	for (int i = 0; i < 2; i++) {
		responder_unwatch_close(responder, &responder->udp[i]);
		responder_unwatch_close(responder, &responder->listen[i]);
	}
	free(responder);
}

uint16_t responder_port(const struct responder *responder)
{
	return responder->port;
}

bool responder_has_v6(const struct responder *responder)
{
	return responder->v6;
}

void responder_udp_read(struct responder *responder, int fd, uint64_t netns_key)
{
	static uint8_t message[DNS_MAX_MESSAGE];

	/* A bounded batch per wake-up: other sandboxes get their turn. */
	for (int n = 0; n < 64; n++) {
		struct responder_pending where = {.udp_fd = fd,
						  .tcp_fd = -1,
						  .peer_length = sizeof(where.peer),
						  .netns_key = netns_key};
		ssize_t length = recvfrom(fd, message, sizeof(message), MSG_DONTWAIT,
					  (struct sockaddr *)&where.peer, &where.peer_length);

		if (length < 0)
			return;
		where.query = message;
		where.length = (size_t)length;
		responder_query(responder, &where);
	}
}

void responder_tcp_accept(struct responder *responder, int listen_fd, uint64_t netns_key)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	for (int i = 0; i < RESPONDER_MAX_TCP; i++) {
		struct responder_tcp *tcp = &responder->tcp[i];

		if (tcp->fd >= 0)
			continue;
		tcp->stream = calloc(1, sizeof(*tcp->stream));
		if (!tcp->stream)
			break;
		tcp->fd = fd;
		tcp->netns_key = netns_key;
		tcp->last_activity = time(NULL);
		responder_watch(responder, fd);
		return;
	}
	responder->dropped_busy++;
	close(fd);
}

static void responder_tcp_read(struct responder *responder, struct responder_tcp *tcp)
{
	static uint8_t chunk[16384], message[DNS_MAX_MESSAGE];
	ssize_t got = recv(tcp->fd, chunk, sizeof(chunk), MSG_DONTWAIT);
	int length;

	if (got < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (got <= 0 || dns_tcp_feed(tcp->stream, chunk, (size_t)got) < (size_t)got) {
		responder_tcp_close(responder, tcp);
		return;
	}
	tcp->last_activity = time(NULL);
	/* Pipelined queries are answered each in turn, out of order as DNS over TCP allows. */
	while ((length = dns_tcp_next(tcp->stream, message, sizeof(message))) > 0) {
		struct responder_pending where = {
			.udp_fd = -1, .tcp_fd = tcp->fd, .netns_key = tcp->netns_key};

		where.query = message;
		where.length = (size_t)length;
		responder_query(responder, &where);
	}
	if (length < 0)
		responder_tcp_close(responder, tcp);
}

bool responder_handle_fd(struct responder *responder, int fd, uint32_t events)
{
	(void)events;
	for (int i = 0; i < 2; i++) {
		if (fd >= 0 && fd == responder->udp[i]) {
			responder_udp_read(responder, fd, responder->netns_key);
			return true;
		}
		if (fd >= 0 && fd == responder->listen[i]) {
			responder_tcp_accept(responder, fd, responder->netns_key);
			return true;
		}
	}
	for (int i = 0; i < RESPONDER_MAX_TCP; i++) {
		if (responder->tcp[i].fd >= 0 && responder->tcp[i].fd == fd) {
			responder_tcp_read(responder, &responder->tcp[i]);
			return true;
		}
	}
	return responder_netns_handle_fd(responder, fd) ||
	       responder_forward_handle_fd(responder, fd);
}

/* A learned name with what the table knows of it: its addresses and when each expires. */
static json_t *responder_learned_json(const struct responder *responder, const char *name,
				      time_t last_used)
{
	struct names_entry *entry = names_find(resolver_names(responder->context->resolver), name);
	const struct names_config *config = &resolver_names(responder->context->resolver)->config;
	json_t *addresses = json_array();
	char text[INET6_ADDRSTRLEN];

	for (size_t i = 0; entry && i < entry->count; i++) {
		const struct names_address *address = &entry->addresses[i];

		if (IN6_IS_ADDR_V4MAPPED(&address->addr))
			inet_ntop(AF_INET, &address->addr.s6_addr[12], text, sizeof(text));
		else
			inet_ntop(AF_INET6, &address->addr, text, sizeof(text));
		/* Kept until last seen + TTL + grace unless an answer sees it again. */
		json_array_append_new(
			addresses,
			json_pack("{s:s, s:I}", "address", text, "expires",
				  (json_int_t)(address->last_seen + address->ttl + config->grace)));
	}
	return json_pack("{s:s, s:I, s:o, s:I}", "name", name, "last_used", (json_int_t)last_used,
			 "addresses", addresses, "next_refresh",
			 (json_int_t)(entry ? entry->next_refresh : 0));
}

json_t *responder_status(const struct responder *responder)
{
	const struct responder_context *context = responder->context;
	json_t *learned = json_array();
	const char *name;
	time_t last_used;

	for (size_t i = 0;
	     context->ops->learned(context->ops_data, responder->owner, i, &name, &last_used); i++)
		json_array_append_new(learned, responder_learned_json(responder, name, last_used));
	return json_pack(
		"{s:i, s:b, s:o, s:o, s:I, s:{s:I, s:I, s:I}}", "port", responder->port, "ipv6",
		responder->v6, "learned", learned, "queries", responder_counters(responder),
		"namespaces", (json_int_t)(1 + responder->listener_count), "more", "liveness",
		(json_int_t)responder->liveness, "forwarded", (json_int_t)responder->forwarded,
		"forward_refused", (json_int_t)responder->forward_refused);
}

json_t *responder_counters(const struct responder *responder)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "answered",
			 (json_int_t)responder->answered, "nodata", (json_int_t)responder->nodata,
			 "refused", (json_int_t)responder->refused, "failed",
			 (json_int_t)responder->failed, "formerr", (json_int_t)responder->formerr,
			 "dropped_rate", (json_int_t)responder->dropped_rate, "dropped_busy",
			 (json_int_t)responder->dropped_busy);
}

bool responder_has_pending(const struct responder *responder)
{
	for (int i = 0; i < RESPONDER_MAX_IN_FLIGHT; i++)
		if (responder->pending[i])
			return true;
	return false;
}
