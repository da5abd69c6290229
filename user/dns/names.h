/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The name table: every host name some sandbox's policy names, with the
 * addresses it resolved to, when each was last seen, and when the name is
 * next due for resolution. Pure logic over an injected clock (seconds), so
 * that refresh scheduling, TTL clamping and grace expiry are unit-tested
 * without a network; user/dns/resolver.c feeds it real answers from c-ares.
 *
 * Lifetimes: a name is resolved (A and AAAA) when added, then again when the
 * smallest TTL of its last answers, clamped to [min_ttl, max_ttl], runs out;
 * after a failure (or an empty answer), again after retry seconds. An address
 * is kept while answers return it; once they stop (or resolution fails), it is
 * kept until last_seen + its clamped TTL + grace, then dropped.
 */
#ifndef BFBPF_NAMES_H
#define BFBPF_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "lib/allowset.h"
#include "lib/policy.h"

/* Documented limit: addresses kept per name; the rest of an answer is dropped (reported). */
#define NAMES_MAX_ADDRESSES 64

struct names_config {
	uint32_t min_ttl; /* seconds; default 30 */
	uint32_t max_ttl; /* seconds; default 3600 */
	uint32_t grace;	  /* seconds; default 300 */
	uint32_t retry;	  /* seconds between attempts after a failure; default 10 */
};

struct names_address {
	struct in6_addr addr; /* IPv4 as ::ffff:a.b.c.d */
	uint64_t last_seen;   /* time of the last answer that held it */
	uint32_t ttl;	      /* clamped TTL of that answer */
};

struct names_entry {
	char name[HOSTNAME_MAX_LENGTH + 1]; /* normalised */
	unsigned int users;		    /* policies naming it */
	size_t count;
	struct names_address addresses[NAMES_MAX_ADDRESSES];
	bool truncated;		/* the last answer held more than NAMES_MAX_ADDRESSES */
	bool resolved_once;	/* one round (A and AAAA) has completed, well or not */
	unsigned int in_flight; /* queries outstanding (0..2) */
	uint64_t next_refresh;	/* 0: due now */
	uint64_t last_attempt;	/* start of the last round; 0: never */
	uint64_t last_success;	/* end of the last round with an answer; 0: never */
	int last_error;		/* 0, or the resolver's code for the last failure */
	char last_error_text[96];
	/* Bookkeeping of the round in progress: */
	uint32_t round_min_ttl; /* smallest clamped TTL seen this round; 0: none */
	bool round_failed;	/* a query of this round failed */
};

struct names_table {
	struct names_config config;
	size_t count, capacity;
	struct names_entry **entries;
};

void names_config_default(struct names_config *config);
/* Clamp a TTL from an answer into [min_ttl, max_ttl]. */
uint32_t names_ttl_clamp(const struct names_config *config, uint32_t ttl);

int names_table_init(struct names_table *table, const struct names_config *config);
void names_table_free(struct names_table *table);

struct names_entry *names_find(struct names_table *table, const char *name);
/* Take a reference on a name, adding it (due now) if new. */
int names_ref(struct names_table *table, const char *name, struct names_entry **out);
/* Drop a reference; the entry is freed when no policy names it any more. */
void names_unref(struct names_table *table, const char *name);

/* A round starts: two queries (A and AAAA) go out now. */
void names_round_begin(struct names_entry *entry, uint64_t now);
/*
 * One family's answer of the round: addrs/ttls of that family only (IPv4 as
 * mapped); addresses of that family the answer lacks keep their last_seen.
 * Returns true if the set of addresses changed (one was added).
 */
bool names_round_answer(const struct names_config *config, struct names_entry *entry, int family,
			const struct in6_addr *addrs, const uint32_t *ttls, size_t count,
			uint64_t now);
/* One family's query failed (error code and text from the resolver). */
void names_round_failure(struct names_entry *entry, int error, const char *text, uint64_t now);
/* A query of the round is done (after answer or failure); the last one schedules the next. */
void names_round_query_done(const struct names_config *config, struct names_entry *entry,
			    uint64_t now);

/* Drop addresses past last_seen + ttl + grace; returns true if any entry changed. */
bool names_expire(struct names_table *table, uint64_t now);
/* The earliest time something is due (a refresh or an expiry); UINT64_MAX if none. */
uint64_t names_next_deadline(const struct names_table *table);
/* Is the entry due for a new round now? (not in flight and next_refresh <= now) */
bool names_due(const struct names_entry *entry, uint64_t now);

/*
 * The range filter (docs/policy.md): addresses a name must not open unless a
 * literal entry of the policy covers them (loopback, private, link-local,
 * CGNAT, multicast, reserved, ULA, site-local, discard-only, IPv4-compatible;
 * and IPv4-mapped, NAT64, local-use NAT64, 6to4 and Teredo addresses by the
 * IPv4 they carry).
 */
bool names_address_is_filtered(const struct in6_addr *addr);
/* What the kernel side judges as loopback: 127.0.0.0/8, ::1, 0.0.0.0 and :: (IPv4 mapped). */
bool names_address_is_loopback(const struct in6_addr *addr);
/*
 * The range filter with its exception: is this address, learned for a name
 * entry of this port, filtered and covered by no literal entry (for every
 * port, or this port)? A loopback address (127.0.0.0/8, ::1, 0.0.0.0, ::)
 * is covered by an exact literal only, never by a CIDR. literals:
 * allowset_from_policy() of the policy (normalised).
 */
bool names_address_is_dropped(const struct in6_addr *addr, const struct allowset *literals,
			      uint16_t port);

#endif /* BFBPF_NAMES_H */
