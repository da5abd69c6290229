// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * runtime_network: a name the policy does not list, single-label or under
 * the runtime's search domains (a compose service "db", "db.dns.podman"),
 * goes to the resolver the container runtime gave the asking namespace
 * (Docker's 127.0.0.11, Podman's aardvark-dns on the gateway), from inside
 * that namespace. Only the answer's addresses inside the namespace's own
 * connected subnets count: they are allowed, then answered. Anything else is
 * refused. The resolver itself must be on the namespace's loopback or in one
 * of those subnets: a resolv.conf pointing elsewhere forwards nothing.
 */
#include <ares.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "lib/hostmatch.h"
#include "lib/log.h"
#include "responder_internal.h"

#define FORWARD_TIMEOUT_MS 3000
#define FORWARD_MAX_ANSWERS 32
#define FORWARD_TTL_MAX 300

static void forward_mapped(const void *v4, struct in6_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->s6_addr[10] = out->s6_addr[11] = 0xff;
	memcpy(&out->s6_addr[12], v4, 4);
}

static uint8_t forward_prefix_of(const struct sockaddr *mask)
{
	const uint8_t *bytes =
		mask->sa_family == AF_INET
			? (const uint8_t *)&((const struct sockaddr_in *)mask)->sin_addr
			: ((const struct sockaddr_in6 *)mask)->sin6_addr.s6_addr;
	size_t size = mask->sa_family == AF_INET ? 4 : 16;
	uint8_t bits = 0;

	for (size_t i = 0; i < size; i++)
		bits += (uint8_t)__builtin_popcount(bytes[i]);
	return mask->sa_family == AF_INET ? (uint8_t)(96 + bits) : bits;
}

/* Runs inside the namespace: the prefixes of its interfaces but loopback. */
static int forward_subnets_read(void *arg)
{
	struct responder_subnets *subnets = arg;
	struct ifaddrs *list, *item;

	subnets->count = 0;
	if (getifaddrs(&list))
		return -errno;
	for (item = list; item && subnets->count < RESPONDER_MAX_SUBNETS; item = item->ifa_next) {
		struct in6_addr *addr = &subnets->addr[subnets->count];

		if (!item->ifa_addr || !item->ifa_netmask || (item->ifa_flags & IFF_LOOPBACK) ||
		    !(item->ifa_flags & IFF_UP))
			continue;
		if (item->ifa_addr->sa_family == AF_INET)
			forward_mapped(&((struct sockaddr_in *)item->ifa_addr)->sin_addr, addr);
		else if (item->ifa_addr->sa_family == AF_INET6)
			*addr = ((struct sockaddr_in6 *)item->ifa_addr)->sin6_addr;
		else
			continue;
		if (IN6_IS_ADDR_LINKLOCAL(addr))
			continue; /* fe80::/64 is on every link: no service lives there by name */
		subnets->prefix[subnets->count++] = forward_prefix_of(item->ifa_netmask);
	}
	freeifaddrs(list);
	return 0;
}

struct forward_open {
	const struct responder_runtime *runtime;
	struct responder_subnets *subnets;
	int fd;
};

static int forward_open_in_netns(void *arg)
{
	struct forward_open *open = arg;
	int err = forward_subnets_read(open->subnets);

	if (err)
		return err;
	if (!responder_runtime_server_ok(open->runtime, open->subnets))
		return -EACCES;
	open->fd = socket(open->runtime->server.ss_family,
			  SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (open->fd < 0)
		return -errno;
	if (connect(open->fd, (const struct sockaddr *)&open->runtime->server,
		    open->runtime->server_length)) {
		err = -errno;
		close(open->fd);
		open->fd = -1;
	}
	return err;
}

static const struct responder_runtime_entry *forward_runtime(struct responder *responder,
							     uint64_t key)
{
	for (size_t i = 0; i < responder->runtime_count; i++)
		if (responder->runtimes[i].key == key)
			return &responder->runtimes[i];
	return NULL;
}

static void forward_free(struct responder *responder, struct responder_forward *forward)
{
	responder_unwatch_close(responder, &forward->fd);
	responder_pending_free(&forward->pending);
	free(forward->subnets);
	forward->subnets = NULL;
}

/* The client's query, kept until the runtime's answer (or its timeout). */
static struct responder_pending *forward_keep(const struct responder_pending *where,
					      const struct dns_query *parsed)
{
	struct responder_pending *kept = calloc(1, sizeof(*kept));

	if (!kept || !(kept->query = malloc(where->length))) {
		free(kept);
		return NULL;
	}
	memcpy(kept->query, where->query, where->length);
	kept->length = where->length;
	kept->parsed = *parsed;
	kept->udp_fd = where->udp_fd;
	kept->peer = where->peer;
	kept->peer_length = where->peer_length;
	kept->tcp_fd = where->tcp_fd;
	kept->netns_key = where->netns_key;
	kept->used = true;
	return kept;
}

/*
 * A fresh query for the name and type (c-ares builds it, with our id and no
 * EDNS): none of the sandbox's own bytes (options, extra records) reach the
 * runtime's resolver.
 */
static int forward_send(struct responder_forward *slot, const char *name, uint16_t qtype)
{
	unsigned char *query = NULL;
	int length = 0, err = 0;

	if (ares_create_query(name, DNS_CLASS_IN, qtype, slot->id, 1, &query, &length, 0) !=
	    ARES_SUCCESS)
		return -ENOMEM;
	if (send(slot->fd, query, (size_t)length, MSG_DONTWAIT) < 0)
		err = -errno;
	ares_free_string(query);
	return err;
}

/* long: the checks in order (type, runtime, name, slot), the socket, the send. */
bool responder_forward(struct responder *responder, struct responder_pending *where,
		       const struct dns_query *parsed, const char *asked)
{
	const struct responder_runtime_entry *entry = forward_runtime(responder, where->netns_key);
	struct forward_open open = {.fd = -1};
	struct responder_forward *slot = NULL;
	char name[HOSTNAME_MAX_LENGTH + 1], err_text[64];
	int err;

	if (!responder->context->ops->allow_runtime || !entry || parsed->qclass != DNS_CLASS_IN ||
	    (parsed->qtype != DNS_TYPE_A && parsed->qtype != DNS_TYPE_AAAA) ||
	    hostname_normalize(asked, name, sizeof(name), err_text, sizeof(err_text)) ||
	    !responder_runtime_eligible(&entry->runtime, name))
		return false;
	for (int i = 0; i < RESPONDER_MAX_FORWARDS && !slot; i++)
		if (responder->forwards[i].fd < 0)
			slot = &responder->forwards[i];
	if (!slot) {
		responder->dropped_busy++;
		responder_reply_rcode(where, parsed, DNS_RCODE_SERVFAIL);
		return true;
	}
	open.runtime = &entry->runtime;
	open.subnets = calloc(1, sizeof(*open.subnets));
	slot->pending = open.subnets ? forward_keep(where, parsed) : NULL;
	err = slot->pending ? responder_in_netns(entry->netns_fd, forward_open_in_netns, &open)
			    : -ENOMEM;
	if (err) {
		free(open.subnets);
		responder_pending_free(&slot->pending);
		if (err == -EACCES)
			log_warn(
				"runtime_network: the resolver of namespace %llu is neither on its "
				"loopback nor in its subnets; nothing is forwarded",
				(unsigned long long)where->netns_key);
		return false; /* refused as any unlisted name */
	}
	slot->fd = open.fd;
	slot->subnets = open.subnets;
	if (getrandom(&slot->id, sizeof(slot->id), 0) != sizeof(slot->id))
		slot->id = (uint16_t)log_monotonic_ms();
	if (forward_send(slot, name, parsed->qtype)) {
		forward_free(responder, slot);
		responder->failed++;
		responder_reply_rcode(where, parsed, DNS_RCODE_SERVFAIL);
		return true;
	}
	slot->deadline_ms = log_monotonic_ms() + FORWARD_TIMEOUT_MS;
	responder_watch(responder, slot->fd);
	responder->forwarded++;
	return true;
}

/* The addresses of the runtime's answer, those inside the subnets only. */
static size_t forward_addresses(const uint8_t *reply, int length, uint16_t qtype,
				const struct responder_subnets *subnets, struct in6_addr *out,
				size_t *total)
{
	size_t count = 0;

	*total = 0;
	if (qtype == DNS_TYPE_A) {
		struct ares_addrttl found[FORWARD_MAX_ANSWERS];
		int n = FORWARD_MAX_ANSWERS;

		if (ares_parse_a_reply(reply, length, NULL, found, &n) != ARES_SUCCESS)
			return 0;
		*total = (size_t)n;
		for (int i = 0; i < n; i++) {
			forward_mapped(&found[i].ipaddr, &out[count]);
			if (responder_subnets_contain(subnets, &out[count]))
				count++;
		}
	} else {
		struct ares_addr6ttl found[FORWARD_MAX_ANSWERS];
		int n = FORWARD_MAX_ANSWERS;

		if (ares_parse_aaaa_reply(reply, length, NULL, found, &n) != ARES_SUCCESS)
			return 0;
		*total = (size_t)n;
		for (int i = 0; i < n; i++) {
			memcpy(&out[count], &found[i].ip6addr, 16);
			if (!IN6_IS_ADDR_V4MAPPED(&out[count]) &&
			    responder_subnets_contain(subnets, &out[count]))
				count++;
		}
	}
	return count;
}

static void forward_answer(struct responder *responder, struct responder_forward *forward,
			   const uint8_t *reply, int length)
{
	static uint8_t message[DNS_MAX_MESSAGE];
	struct responder_pending *pending = forward->pending;
	struct in6_addr found[FORWARD_MAX_ANSWERS], allowed[FORWARD_MAX_ANSWERS];
	uint32_t ttls[FORWARD_MAX_ANSWERS];
	char name[HOSTNAME_MAX_LENGTH + 1], err_text[64];
	size_t count = 0, kept = 0, total = 0, max_size;
	int rcode = reply[3] & 0x0f;

	if (!hostname_normalize(pending->parsed.name, name, sizeof(name), err_text,
				sizeof(err_text)))
		count = forward_addresses(reply, length, pending->parsed.qtype, forward->subnets,
					  found, &total);
	if (!total && (rcode == DNS_RCODE_NOERROR || rcode == DNS_RCODE_NXDOMAIN)) {
		/* No address of this type (or no such name): nothing to allow, nothing to hide. */
		responder->nodata += rcode == DNS_RCODE_NOERROR;
		responder->failed += rcode == DNS_RCODE_NXDOMAIN;
		responder_reply_rcode(pending, &pending->parsed, rcode);
		return;
	}
	if (count && responder_op(responder, allow_runtime, name, found, count))
		count = 0;
	if (count)
		responder_op(responder, refresh);
	for (size_t i = 0; i < count; i++) {
		if (!responder_op(responder, programmed, &found[i]))
			continue;
		allowed[kept] = found[i];
		ttls[kept++] = FORWARD_TTL_MAX;
	}
	if (!kept) {
		/* Not the runtime's own network (or nothing at all): as any unlisted name. */
		responder->refused++;
		responder->forward_refused++;
		responder_op(responder, refused, pending->parsed.name, pending->parsed.qtype);
		responder_reply_rcode(pending, &pending->parsed, DNS_RCODE_REFUSED);
		return;
	}
	max_size = pending->tcp_fd >= 0	  ? DNS_MAX_MESSAGE
		   : pending->parsed.edns ? (pending->parsed.udp_size < DNS_MAX_UDP_REPLY
						     ? pending->parsed.udp_size
						     : DNS_MAX_UDP_REPLY)
					  : 512;
	responder->answered++;
	responder_send(pending, message,
		       dns_reply_addresses(pending->query, pending->length, &pending->parsed,
					   allowed, ttls, kept, max_size, message,
					   sizeof(message)));
}

bool responder_forward_handle_fd(struct responder *responder, int fd)
{
	static uint8_t reply[DNS_MAX_MESSAGE];

	for (int i = 0; i < RESPONDER_MAX_FORWARDS; i++) {
		struct responder_forward *forward = &responder->forwards[i];
		ssize_t length;

		if (fd < 0 || forward->fd != fd)
			continue;
		length = recv(fd, reply, sizeof(reply), MSG_DONTWAIT);
		if (length < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		/* Ours: the id we sent, a response (QR). Anything else is ignored. */
		if (length >= DNS_HEADER_SIZE && reply[0] == (uint8_t)(forward->id >> 8) &&
		    reply[1] == (uint8_t)forward->id && (reply[2] & 0x80))
			forward_answer(responder, forward, reply, (int)length);
		else if (length >= 0)
			return true; /* not the answer: wait for it (or the timeout) */
		else
			responder_reply_rcode(forward->pending, &forward->pending->parsed,
					      DNS_RCODE_SERVFAIL);
		forward_free(responder, forward);
		return true;
	}
	return false;
}

void responder_forward_poll(struct responder *responder)
{
	uint64_t now = log_monotonic_ms();

	for (int i = 0; i < RESPONDER_MAX_FORWARDS; i++) {
		struct responder_forward *forward = &responder->forwards[i];

		if (forward->fd < 0 || now < forward->deadline_ms)
			continue;
		responder->failed++;
		responder_reply_rcode(forward->pending, &forward->pending->parsed,
				      DNS_RCODE_SERVFAIL);
		forward_free(responder, forward);
	}
}

void responder_forward_drop_tcp(struct responder *responder, int tcp_fd)
{
	for (int i = 0; i < RESPONDER_MAX_FORWARDS; i++)
		if (responder->forwards[i].fd >= 0 &&
		    responder->forwards[i].pending->tcp_fd == tcp_fd)
			forward_free(responder, &responder->forwards[i]);
}

void responder_forward_close(struct responder *responder)
{
	for (int i = 0; i < RESPONDER_MAX_FORWARDS; i++)
		if (responder->forwards[i].fd >= 0)
			forward_free(responder, &responder->forwards[i]);
}
