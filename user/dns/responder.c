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
#include <ares.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "dns.h"
#include "sandbox/events.h"
#include "lib/hostmatch.h"
#include "lib/log.h"
#include "resolver.h"
#include "responder.h"
#include "sandbox/sandbox.h"

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
	struct sandbox *sandbox;
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

/* A socket bound inside the sandbox's network namespace (the daemon's own when netns_fd < 0). */
static int responder_socket(int netns_fd, int family, int type, uint16_t port)
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

static void responder_watch(struct responder *responder, int fd)
{
	struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};

	epoll_ctl(responder->context->epoll_fd, EPOLL_CTL_ADD, fd, &event);
}

static void responder_unwatch_close(struct responder *responder, int *fd)
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

int responder_open(struct responder_context *context, struct sandbox *sandbox, int netns_fd,
		   uint16_t want_port, struct responder **out)
{
	struct responder *responder = calloc(1, sizeof(*responder));
	int err;

	if (!responder)
		return -ENOMEM;
	responder->context = context;
	responder->sandbox = sandbox;
	responder->udp[0] = responder->udp[1] = responder->listen[0] = responder->listen[1] = -1;
	for (int i = 0; i < RESPONDER_MAX_TCP; i++)
		responder->tcp[i].fd = -1;
	responder->tokens = 2.0 * context->rate_per_second;
	responder->tokens_at_ms = log_monotonic_ms();
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

static void responder_pending_free(struct responder_pending **pending)
{
	if (!*pending)
		return;
	free((*pending)->query);
	free(*pending);
	*pending = NULL;
}

static void responder_tcp_close(struct responder *responder, struct responder_tcp *tcp)
{
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

/* Token bucket: a sandbox that floods its resolver slows only itself. */
static bool responder_take_token(struct responder *responder)
{
	uint64_t now = log_monotonic_ms();

	responder->tokens += (double)(now - responder->tokens_at_ms) *
			     responder->context->rate_per_second / 1000.0;
	if (responder->tokens > 2.0 * responder->context->rate_per_second)
		responder->tokens = 2.0 * responder->context->rate_per_second;
	responder->tokens_at_ms = now;
	if (responder->tokens < 1.0)
		return false;
	responder->tokens -= 1.0;
	return true;
}

static void responder_send(struct responder_pending *where, const uint8_t *reply, int length)
{
	if (length <= 0)
		return;
	if (where->udp_fd >= 0) {
		sendto(where->udp_fd, reply, (size_t)length, MSG_DONTWAIT,
		       (struct sockaddr *)&where->peer, where->peer_length);
		return;
	}
	if (where->tcp_fd >= 0) {
		uint8_t prefix[2] = {(uint8_t)(length >> 8), (uint8_t)length};
		struct iovec parts[2] = {{prefix, 2}, {(void *)reply, (size_t)length}};
		struct msghdr message = {.msg_iov = parts, .msg_iovlen = 2};

		/* A client that does not read loses its reply, not the daemon's time. */
		sendmsg(where->tcp_fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
}

static void responder_reply_rcode(struct responder_pending *where, const struct dns_query *parsed,
				  int rcode)
{
	uint8_t reply[DNS_MAX_UDP_REPLY];

	responder_send(
		where, reply,
		dns_reply_rcode(where->query, where->length, parsed, rcode, reply, sizeof(reply)));
}

/* The name's addresses that the sandbox's maps now hold: all the reply may say. */
static size_t responder_programmed(struct responder *responder, const struct names_entry *entry,
				   struct in6_addr *addrs, uint32_t *ttls)
{
	const struct allowset *applied = &responder->sandbox->applied;
	uint64_t now = resolver_now();
	size_t count = 0;

	for (size_t i = 0; i < entry->count; i++) {
		if (!allowset_has_address(applied, entry->addresses[i].addr.s6_addr))
			continue;
		addrs[count] = entry->addresses[i].addr;
		/* Never longer than the filter will hold it without a refresh. */
		ttls[count] = entry->next_refresh > now ? (uint32_t)(entry->next_refresh - now) : 1;
		if (ttls[count] > entry->addresses[i].ttl)
			ttls[count] = entry->addresses[i].ttl ? entry->addresses[i].ttl : 1;
		count++;
	}
	return count;
}

static void responder_answer(struct responder *responder, struct responder_pending *pending,
			     bool timed_out)
{
	static uint8_t reply[DNS_MAX_MESSAGE];
	struct in6_addr addrs[NAMES_MAX_ADDRESSES];
	uint32_t ttls[NAMES_MAX_ADDRESSES];
	struct names_entry *entry =
		names_find(resolver_names(responder->context->resolver), pending->name);
	size_t count, max_size;
	int length;

	/*
	 * Program first, answer second: a newly learned name is programmed now; a
	 * known name's new addresses were programmed when they arrived; and the
	 * answer holds only what the maps hold (responder_programmed).
	 */
	if (responder->sandbox->needs_refresh)
		sandbox_refresh(responder->context->registry, responder->sandbox);
	if (!entry || timed_out || (!entry->count && entry->last_error)) {
		responder->failed++;
		responder_reply_rcode(pending, &pending->parsed,
				      entry && entry->last_error == ARES_ENOTFOUND
					      ? DNS_RCODE_NXDOMAIN
					      : DNS_RCODE_SERVFAIL);
		return;
	}
	count = responder_programmed(responder, entry, addrs, ttls);
	max_size = pending->tcp_fd >= 0	  ? DNS_MAX_MESSAGE
		   : pending->parsed.edns ? (pending->parsed.udp_size < DNS_MAX_UDP_REPLY
						     ? pending->parsed.udp_size
						     : DNS_MAX_UDP_REPLY)
					  : 512;
	length = dns_reply_addresses(pending->query, pending->length, &pending->parsed, addrs, ttls,
				     count, max_size, reply, sizeof(reply));
	responder->answered++;
	responder_send(pending, reply, length);
}

static bool responder_name_ready(struct responder *responder, const char *name)
{
	struct names_entry *entry = names_find(resolver_names(responder->context->resolver), name);

	return !entry ||
	       (entry->resolved_once && !entry->in_flight && !names_due(entry, resolver_now()));
}

static void responder_wait(struct responder *responder, const struct responder_pending *where,
			   const struct dns_query *parsed, const char *name)
{
	struct responder_pending *slot = NULL;
	int index = -1;

	for (int i = 0; i < RESPONDER_MAX_IN_FLIGHT && index < 0; i++)
		if (!responder->pending[i])
			index = i;
	if (index >= 0 && (slot = calloc(1, sizeof(*slot))) &&
	    !(slot->query = malloc(where->length))) {
		free(slot);
		slot = NULL;
	}
	if (!slot) {
		responder->dropped_busy++;
		responder_reply_rcode((struct responder_pending *)where, parsed,
				      DNS_RCODE_SERVFAIL);
		return;
	}
	memcpy(slot->query, where->query, where->length);
	slot->length = where->length;
	slot->parsed = *parsed;
	snprintf(slot->name, sizeof(slot->name), "%s", name);
	slot->udp_fd = where->udp_fd;
	slot->peer = where->peer;
	slot->peer_length = where->peer_length;
	slot->tcp_fd = where->tcp_fd;
	slot->deadline_ms = log_monotonic_ms() + RESPONDER_QUERY_TIMEOUT_MS;
	slot->used = true;
	responder->pending[index] = slot;
	resolver_tick(responder->context->resolver); /* starts the round if the name is due */
}

/* One query from the sandbox; where says how to reply (its query fields point at message). */
static void responder_query(struct responder *responder, struct responder_pending *where)
{
	struct sandbox *sandbox = responder->sandbox;
	char name[HOSTNAME_MAX_LENGTH + 1], err[128];
	struct dns_query parsed;
	bool added;

	if (!responder_take_token(responder)) {
		responder->dropped_rate++;
		return;
	}
	switch (dns_query_parse(where->query, where->length, &parsed)) {
	case DNS_PARSE_OK:
		break;
	case DNS_PARSE_FORMERR:
		responder->formerr++;
		responder_reply_rcode(where, NULL, DNS_RCODE_FORMERR);
		return;
	case DNS_PARSE_NOTIMP:
		responder->formerr++;
		responder_reply_rcode(where, NULL, DNS_RCODE_NOTIMP);
		return;
	default:
		return; /* not a query: never forwarded, never answered */
	}
	switch (sandbox->policy_known ? dns_decide(&sandbox->policy, &parsed)
				      : DNS_DECISION_REFUSED) {
	case DNS_DECISION_REFUSED:
		responder->refused++;
		log_debug("%s: refused %s (type %u)", sandbox->path, parsed.name, parsed.qtype);
		events_record_dns_refusal(responder->context->registry->events, sandbox,
					  parsed.name, parsed.qtype);
		responder_reply_rcode(where, &parsed, DNS_RCODE_REFUSED);
		return;
	case DNS_DECISION_NODATA:
		responder->nodata++;
		responder_reply_rcode(where, &parsed, DNS_RCODE_NOERROR);
		return;
	case DNS_DECISION_ANSWER:
		break;
	}
	if (hostname_normalize(parsed.name, name, sizeof(name), err, sizeof(err)) ||
	    sandbox_learn(responder->context->registry, sandbox, name, &added)) {
		responder->failed++;
		responder_reply_rcode(where, &parsed, DNS_RCODE_SERVFAIL);
		return;
	}
	if (added)
		sandbox->state_dirty = true;
	if (responder_name_ready(responder, name) &&
	    sandbox_names_settled(responder->context->registry, sandbox)) {
		where->parsed = parsed;
		snprintf(where->name, sizeof(where->name), "%s", name);
		responder_answer(responder, where, false);
		return;
	}
	responder_wait(responder, where, &parsed, name);
}

void responder_poll(struct responder *responder)
{
	uint64_t now = log_monotonic_ms();
	time_t wall = time(NULL);

	for (int i = 0; i < RESPONDER_MAX_IN_FLIGHT; i++) {
		struct responder_pending *pending = responder->pending[i];
		bool ready;

		if (!pending)
			continue;
		ready = responder_name_ready(responder, pending->name) &&
			sandbox_names_settled(responder->context->registry, responder->sandbox);
		if (!ready && now < pending->deadline_ms)
			continue;
		responder_answer(responder, pending, !ready);
		responder_pending_free(&responder->pending[i]);
	}
	for (int i = 0; i < RESPONDER_MAX_TCP; i++)
		if (responder->tcp[i].fd >= 0 &&
		    wall - responder->tcp[i].last_activity > RESPONDER_TCP_IDLE_SECONDS)
			responder_tcp_close(responder, &responder->tcp[i]);
}

static void responder_udp_read(struct responder *responder, int fd)
{
	static uint8_t message[DNS_MAX_MESSAGE];

	/* A bounded batch per wake-up: other sandboxes get their turn. */
	for (int n = 0; n < 64; n++) {
		struct responder_pending where = {
			.udp_fd = fd, .tcp_fd = -1, .peer_length = sizeof(where.peer)};
		ssize_t length = recvfrom(fd, message, sizeof(message), MSG_DONTWAIT,
					  (struct sockaddr *)&where.peer, &where.peer_length);

		if (length < 0)
			return;
		where.query = message;
		where.length = (size_t)length;
		responder_query(responder, &where);
	}
}

static void responder_tcp_accept(struct responder *responder, int listen_fd)
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
		struct responder_pending where = {.udp_fd = -1, .tcp_fd = tcp->fd};

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
			responder_udp_read(responder, fd);
			return true;
		}
		if (fd >= 0 && fd == responder->listen[i]) {
			responder_tcp_accept(responder, fd);
			return true;
		}
	}
	for (int i = 0; i < RESPONDER_MAX_TCP; i++) {
		if (responder->tcp[i].fd >= 0 && responder->tcp[i].fd == fd) {
			responder_tcp_read(responder, &responder->tcp[i]);
			return true;
		}
	}
	return false;
}

/* A learned name with what the table knows of it: its addresses and when each expires. */
static json_t *responder_learned_json(const struct responder *responder,
				      const struct sandbox_learned *learned)
{
	struct names_entry *entry =
		names_find(resolver_names(responder->context->resolver), learned->name);
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
	return json_pack("{s:s, s:I, s:o, s:I}", "name", learned->name, "last_used",
			 (json_int_t)learned->last_used, "addresses", addresses, "next_refresh",
			 (json_int_t)(entry ? entry->next_refresh : 0));
}

json_t *responder_status(const struct responder *responder)
{
	const struct sandbox *sandbox = responder->sandbox;
	json_t *learned = json_array();

	for (size_t i = 0; i < sandbox->learned_count; i++)
		json_array_append_new(learned,
				      responder_learned_json(responder, &sandbox->learned[i]));
	return json_pack("{s:i, s:b, s:o, s:o}", "port", responder->port, "ipv6", responder->v6,
			 "learned", learned, "queries", responder_counters(responder));
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
