// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The responder's queries: the policy's decision, learning the name, waiting
 * for it to resolve, programming it, and only then the answer.
 */
#include <ares.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/socket.h>

#include "lib/hostmatch.h"
#include "lib/log.h"
#include "resolver.h"
#include "responder_internal.h"

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

void responder_send(struct responder_pending *where, const uint8_t *reply, int length)
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

void responder_reply_rcode(struct responder_pending *where, const struct dns_query *parsed,
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
	uint64_t now = resolver_now();
	size_t count = 0;

	for (size_t i = 0; i < entry->count; i++) {
		if (!responder_op(responder, programmed, &entry->addresses[i].addr))
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
	responder_op(responder, refresh);
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

void responder_query(struct responder *responder, struct responder_pending *where)
{
	const struct policy *policy = responder_op(responder, policy);
	char name[HOSTNAME_MAX_LENGTH + 1], err[128];
	struct dns_query parsed;

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
	if (!strcasecmp(parsed.name, RESPONDER_LIVENESS_NAME) ||
	    !strcasecmp(parsed.name, RESPONDER_LIVENESS_NAME ".")) {
		responder->liveness++;
		responder_reply_rcode(where, &parsed, DNS_RCODE_NXDOMAIN);
		return;
	}
	/* A policy the owner does not know (adopted without its state) allows nothing. */
	switch (policy ? dns_decide(policy, &parsed) : DNS_DECISION_REFUSED) {
	case DNS_DECISION_REFUSED:
		if (policy && policy->runtime_network &&
		    responder_forward(responder, where, &parsed, parsed.name))
			return; /* the runtime's resolver decides, within the subnets */
		responder->refused++;
		responder_op(responder, refused, parsed.name, parsed.qtype);
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
	    responder_op(responder, learn, name)) {
		responder->failed++;
		responder_reply_rcode(where, &parsed, DNS_RCODE_SERVFAIL);
		return;
	}
	if (responder_name_ready(responder, name) && responder_op(responder, settled)) {
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
			responder_op(responder, settled);
		if (!ready && now < pending->deadline_ms)
			continue;
		responder_answer(responder, pending, !ready);
		responder_pending_free(&responder->pending[i]);
	}
	responder_forward_poll(responder);
	for (int i = 0; i < RESPONDER_MAX_TCP; i++)
		if (responder->tcp[i].fd >= 0 &&
		    wall - responder->tcp[i].last_activity > RESPONDER_TCP_IDLE_SECONDS)
			responder_tcp_close(responder, &responder->tcp[i]);
}
