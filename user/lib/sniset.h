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
};

struct sniset {
	size_t n_bound, cap_bound;
	struct sniset_bound *bound;
	size_t n_names, cap_names;
	struct sniset_name *names;
};

/* The reversed FNV-1a of a name, as the kernel computes it (bpf/lib/hello.h). */
uint64_t sniset_name_rhash(const char *name);
/*
 * A name entry (or a learned name) allowing entry_port (0: every port) with
 * these addresses: its marker, and for each judged port it allows, each
 * address no literal covers there. kinds: BFBPF_SNI_NAME_*.
 */
int sniset_add_name(struct sniset *set, const struct policy *policy, const char *name,
		    uint8_t kinds, uint16_t entry_port, const struct in6_addr *addrs, size_t n,
		    const struct allowset *literals);
/* Sort, and merge the kinds of equal keys. */
void sniset_normalize(struct sniset *set);
/* Is addr:port name-derived in the set (a judged destination)? 0 or its kind. */
uint8_t sniset_bound_kind(const struct sniset *set, const uint8_t addr[16], uint16_t port);
void sniset_free(struct sniset *set);

#endif /* BFBPF_SNISET_H */
