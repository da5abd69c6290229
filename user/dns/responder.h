/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The DNS responder: one per sandbox, listening (UDP and TCP) on 127.0.0.1
 * and [::1] inside the sandbox's network namespace (or the daemon's), on the
 * port the BPF programs redirect every port-53 query to. An allowed name is
 * resolved (the name table's cache when fresh), its addresses are programmed
 * into the sandbox's policy, and only then is the reply sent, holding just
 * the addresses the maps allow. Other names get REFUSED. Bounded per sandbox:
 * learned names (LRU), queries in flight, queries per second, TCP connections.
 *
 * The responder knows no sandbox: what it needs of one (the policy, learning
 * a name, programming it) it asks through a table of operations that the
 * owner fills in (the sandbox registry; a fake one in the unit test).
 */
#ifndef BFBPF_RESPONDER_H
#define BFBPF_RESPONDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <jansson.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "lib/policy.h"

struct policy;
struct resolver;

/* Documented limits (docs/dns.md). */
#define RESPONDER_MAX_LEARNED 1024 /* names learned through DNS per sandbox (LRU beyond) */
#define RESPONDER_MAX_IN_FLIGHT 64 /* queries waiting for upstream per sandbox */
#define RESPONDER_RATE_PER_SECOND                                                                  \
	200		     /* default queries per second per sandbox (burst: 2 s worth) */
#define RESPONDER_MAX_TCP 16 /* TCP connections per sandbox */
#define RESPONDER_TCP_IDLE_SECONDS 10
#define RESPONDER_QUERY_TIMEOUT_MS 5000

/*
 * What a responder asks of its owner. Every operation gets the context's
 * ops_data (the registry) and the responder's owner (the sandbox).
 */
/*
 * The name verify's DNS check asks (RFC 6761: .invalid never resolves): the
 * responder answers it NXDOMAIN and counts it, whatever the policy, with no
 * refusal event. An answer proves its responder listens where it was asked.
 */
#define RESPONDER_LIVENESS_NAME "liveness.bfbpf.invalid"
#define RESPONDER_MAX_NETNS 64 /* network namespaces a responder listens in, its first included */
#define RESPONDER_RUNTIME_SEARCH 6 /* search domains kept of a runtime's resolv.conf */
#define RESPONDER_MAX_FORWARDS 16  /* runtime_network queries waiting per sandbox */

/*
 * The container runtime's resolver as one network namespace sees it
 * (runtime_network): the first nameserver of its processes' resolv.conf and
 * its search domains (normalised, no trailing dot).
 */
struct responder_runtime {
	struct sockaddr_storage server; /* port 53 */
	socklen_t server_length;
	size_t search_count;
	char search[RESPONDER_RUNTIME_SEARCH][HOSTNAME_MAX_LENGTH + 1];
};

/*
 * Parse a resolv.conf (untrusted: the container writes it): the first
 * nameserver line's address, the last search/domain line's domains. -ENOENT
 * when it names no nameserver.
 */
int responder_resolv_parse(const char *text, size_t length, struct responder_runtime *out);

/* A namespace's directly connected prefixes (its interfaces', but loopback and link-local). */
#define RESPONDER_MAX_SUBNETS 32
struct responder_subnets {
	size_t count;
	struct in6_addr addr[RESPONDER_MAX_SUBNETS]; /* IPv4 as ::ffff:a.b.c.d */
	uint8_t prefix[RESPONDER_MAX_SUBNETS];	     /* in the 128-bit space */
};

/* Inside one of the prefixes (a /32 or /128, the namespace's own address alone, never). */
bool responder_subnets_contain(const struct responder_subnets *subnets,
			       const struct in6_addr *addr);
/* Is the runtime's resolver on the namespace's loopback or inside its prefixes? */
bool responder_runtime_server_ok(const struct responder_runtime *runtime,
				 const struct responder_subnets *subnets);
/* Is a (normalised) name forwarded: a single label, or under one of the search domains? */
bool responder_runtime_eligible(const struct responder_runtime *runtime, const char *name);

struct responder_ops {
	/* The policy queries are decided by; NULL: unknown, every query is refused. */
	const struct policy *(*policy)(void *data, void *owner);
	/* Remember an allowed name (normalised) so that its addresses get programmed. */
	int (*learn)(void *data, void *owner, const char *name);
	/* Has every name of the policy answered once? Answers wait until then. */
	bool (*settled)(void *data, void *owner);
	/* Program what was learned: called before every answer goes out. */
	void (*refresh)(void *data, void *owner);
	/* Does the owner's filter allow this address now? An answer holds only those. */
	bool (*programmed)(void *data, void *owner, const struct in6_addr *addr);
	/* A query was refused (the name as asked): the owner logs it and records an event. */
	void (*refused)(void *data, void *owner, const char *name, unsigned int qtype);
	/* The index-th learned name and its last use, for status; false past the last one. */
	bool (*learned)(void *data, void *owner, size_t index, const char **name,
			time_t *last_used);
	/*
	 * runtime_network: the runtime's resolver answered name with these
	 * addresses (inside the asking netns's connected subnets): allow them.
	 * NULL: nothing is forwarded.
	 */
	int (*allow_runtime)(void *data, void *owner, const char *name,
			     const struct in6_addr *addrs, size_t count);
};

struct responder_context {
	int epoll_fd;
	unsigned int rate_per_second; /* --dns-rate */
	struct resolver *resolver;
	const struct responder_ops *ops;
	void *ops_data; /* the ops' first argument */
};

struct responder;

/*
 * Listen for an owner (a sandbox): in its network namespace when netns_fd >= 0;
 * on want_port if non-zero (re-adoption), else on a free port.
 */
int responder_open(struct responder_context *context, void *owner, int netns_fd, uint16_t want_port,
		   struct responder **out);
void responder_close(struct responder *responder);

uint16_t responder_port(const struct responder *responder);
/* The network namespace (its inode number) the responder was opened in. */
uint64_t responder_netns_key(const struct responder *responder);

/*
 * One more network namespace (key: its inode number) where a process of the
 * owner lives: listen there too, on the same port (127.0.0.1, and [::1] if
 * the first namespace has it). A query on any of them is the owner's. Up to
 * RESPONDER_MAX_NETNS; -EADDRINUSE when the port is taken there.
 */
int responder_netns_listen(struct responder *responder, uint64_t key, int netns_fd);
bool responder_netns_listening(const struct responder *responder, uint64_t key);
/* The index-th namespace listened in beyond the first; false past the last. */
bool responder_netns_at(const struct responder *responder, size_t index, uint64_t *key);
/*
 * The index-th namespace beyond the first, opened (a new descriptor, from its
 * socket: SIOCGSKNS): where the owner's sweep destroys flows too. -ENOENT
 * past the last.
 */
int responder_netns_open(const struct responder *responder, size_t index);
/* No process of the owner uses it any more: its sockets (and runtime) go. */
void responder_netns_forget(struct responder *responder, uint64_t key);
/*
 * The runtime resolver of a namespace (the first one's too), for
 * runtime_network; netns_fd is duplicated (forwarded queries leave from
 * inside it). runtime NULL: none known.
 */
int responder_netns_runtime(struct responder *responder, uint64_t key, int netns_fd,
			    const struct responder_runtime *runtime);
bool responder_netns_has_runtime(const struct responder *responder, uint64_t key);
/* Read what waits on its UDP sockets now (verify's DNS check stands in for the loop). */
void responder_drain(struct responder *responder);
/* Liveness queries answered (RESPONDER_LIVENESS_NAME). */
uint64_t responder_liveness(const struct responder *responder);
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
