/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The DNS responder: one per sandbox, listening (UDP and TCP) on 127.0.0.1
 * and [::1] inside the sandbox's network namespace (or the daemon's), on the
 * port the BPF programs redirect every port-53 query to. An allowed name is
 * resolved (the name table's cache when fresh), its addresses are programmed
 * into the sandbox's policy, and only then is the reply sent, holding just
 * the addresses the maps allow. Other names get REFUSED. Bounded per sandbox:
 * learned names (LRU), queries in flight, queries per second, TCP connections.
 */
#ifndef BFBPF_RESPONDER_H
#define BFBPF_RESPONDER_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

struct sandbox;
struct sandbox_registry;
struct resolver;

/* Documented limits (docs/dns.md). */
#define RESPONDER_MAX_LEARNED 1024 /* names learned through DNS per sandbox (LRU beyond) */
#define RESPONDER_MAX_IN_FLIGHT 64 /* queries waiting for upstream per sandbox */
#define RESPONDER_RATE_PER_SECOND                                                                  \
	200		     /* default queries per second per sandbox (burst: 2 s worth) */
#define RESPONDER_MAX_TCP 16 /* TCP connections per sandbox */
#define RESPONDER_TCP_IDLE_SECONDS 10
#define RESPONDER_QUERY_TIMEOUT_MS 5000

struct responder_context {
	int epoll_fd;
	unsigned int rate_per_second; /* --dns-rate */
	struct sandbox_registry *registry;
	struct resolver *resolver;
};

struct responder;

/*
 * Listen for a sandbox: in its network namespace when netns_fd >= 0; on
 * want_port if non-zero (re-adoption), else on a free port.
 */
int responder_open(struct responder_context *context, struct sandbox *sandbox, int netns_fd,
		   uint16_t want_port, struct responder **out);
void responder_close(struct responder *responder);

uint16_t responder_port(const struct responder *responder);
bool responder_has_v6(const struct responder *responder);

/* Does this fd belong to the responder? Then it handles the event. */
bool responder_handle_fd(struct responder *responder, int fd, uint32_t events);
/* Answer the queries whose names have answered (or timed out); close idle TCP. */
void responder_poll(struct responder *responder);

/* Are queries waiting (the caller's loop should wake up to time them out)? */
bool responder_has_pending(const struct responder *responder);

/* Counters and what was learned, for status. */
json_t *responder_status(const struct responder *responder);
/* The query counters alone (status's "queries"; metrics read them too). */
json_t *responder_counters(const struct responder *responder);

#endif /* BFBPF_RESPONDER_H */
