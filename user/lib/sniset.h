/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * SNI sets: what a policy's names put into the kernel's sni_bound and
 * sni_names maps (include/bfbpf.h, docs/policy.md "Names bound to TLS"). An
 * address a name resolved to is name-derived on a judged port unless a
 * literal or CIDR entry of the policy covers it there; a flow to it on that
 * port must then name (SNI, Host) an entry programmed for that address.
 */
#ifndef BFBPF_SNISET_H
#define BFBPF_SNISET_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "allowset.h"
#include "policy.h"

struct sniset_bound {
	uint8_t addr[16]; /* IPv4 as ::ffff:a.b.c.d */
	uint16_t port;
	uint8_t kind; /* BFBPF_SNI_BOUND_TLS or _HTTP */
};

struct sniset_name {
	uint64_t rhash;	  /* bfbpf_name_rhash of the name */
	uint8_t addr[16]; /* zero with port 0: the entry's marker */
	uint16_t port;
	uint8_t kinds; /* BFBPF_SNI_NAME_* */
	uint32_t text; /* the name itself: texts[text] (the map value's, sniset_name_text) */
};

struct sniset {
	size_t n_bound, cap_bound;
	struct sniset_bound *bound;
	size_t n_names, cap_names;
	struct sniset_name *names;
	/* The normalized names (lower case, no trailing dot), one per sniset_add_name. */
	size_t n_texts, cap_texts;
	char **texts;
};

/* The reversed FNV-1a of a name, as the kernel computes it (bpf/lib/hello.h). */
uint64_t sniset_name_rhash(const char *name);
/* The normalized name of a key: what the kernel compares an SNI with after a hash hit. */
const char *sniset_name_text(const struct sniset *set, const struct sniset_name *name);
/*
 * A name entry (or a learned name) allowing entry_port (0: every port) with
 * these addresses: its marker, and for each judged port it allows, each
 * address no literal covers there. kinds: BFBPF_SNI_NAME_*.
 */
int sniset_add_name(struct sniset *set, const struct policy *policy, const char *name,
		    uint8_t kinds, uint16_t entry_port, const struct in6_addr *addrs, size_t n,
		    const struct allowset *literals);
/*
 * Sort, and merge the kinds of equal keys of the same name. Two names whose
 * hashes collide on a key (a map holds one value a key): the first in byte
 * order keeps it, the other is refused there (fail closed).
 */
void sniset_normalize(struct sniset *set);
/*
 * A digest of the keys and values the set writes, whatever the order they were
 * added in: a refresh reprograms the maps when it changes (a learned name on
 * an address already allowed changes the SNI keys, not the allow set).
 */
uint64_t sniset_digest(const struct sniset *set);
/* Is addr:port name-derived in the set (a judged destination)? 0 or its kind. */
uint8_t sniset_bound_kind(const struct sniset *set, const uint8_t addr[16], uint16_t port);
void sniset_free(struct sniset *set);

#endif /* BFBPF_SNISET_H */
