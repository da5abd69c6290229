/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Allow sets: the (address/prefix, port) entries a policy puts into the
 * kernel's allow maps, kept sorted and unique so that two sets can be diffed.
 */
#ifndef BFBPF_ALLOWSET_H
#define BFBPF_ALLOWSET_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"

struct allowset_entry {
	uint8_t addr[16];   /* IPv4 as ::ffff:a.b.c.d; host bits clear */
	uint8_t prefix_len; /* 0..128; 128 goes to the exact hash map */
	uint16_t port;	    /* 0: every port */
};

struct allowset {
	size_t count;
	size_t capacity;
	struct allowset_entry *entries;
};

int allowset_add(struct allowset *set, const struct allowset_entry *entry);
/* A copy with room for exactly its entries. */
int allowset_copy(const struct allowset *from, struct allowset *out);
/* Give back the room beyond count (a set kept for long, as each sandbox's applied set is). */
void allowset_trim(struct allowset *set);
/* Sort and drop duplicates; call after adding, before lookups and diffs. */
void allowset_normalize(struct allowset *set);
bool allowset_contains(const struct allowset *set, const struct allowset_entry *entry);
/*
 * The address entries a policy programs by itself: its literal entries in
 * force (policy_in_force()).
 * Names contribute nothing here (they are resolved elsewhere).
 */
int allowset_from_policy(const struct policy *policy, struct allowset *out);
/* Entries of next not in prev (added) and of prev not in next (removed). */
int allowset_diff(const struct allowset *prev, const struct allowset *next, struct allowset *added,
		  struct allowset *removed);
/* Is address:port inside an entry (of any port, or of this port)? Port 0 asks "any port". */
bool allowset_covers(const struct allowset *set, const uint8_t addr[16], uint16_t port);
/* Does a normalised set hold this exact address (/128), for any port? */
bool allowset_has_address(const struct allowset *set, const uint8_t addr[16]);
/* Same entries (both normalised)? */
bool allowset_equal(const struct allowset *a, const struct allowset *b);
int allowset_entry_compare(const struct allowset_entry *a, const struct allowset_entry *b);
void allowset_free(struct allowset *set);

#endif /* BFBPF_ALLOWSET_H */
