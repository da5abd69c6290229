// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* SNI sets: the sni_bound and sni_names entries of a policy's names (sniset.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfbpf.h"
#include "sniset.h"
/* The kernel's own hash, built for userspace: one definition for both sides. */
#include "../../bpf/lib/hello.h"

uint64_t sniset_name_rhash(const char *name)
{
	return bfbpf_name_rhash(name, (__u32)strlen(name));
}

static int sniset_push_bound(struct sniset *set, const struct sniset_bound *bound)
{
	if (set->n_bound == set->cap_bound) {
		size_t cap = set->cap_bound ? set->cap_bound * 2 : 16;
		struct sniset_bound *grown = realloc(set->bound, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		set->bound = grown;
		set->cap_bound = cap;
	}
	set->bound[set->n_bound++] = *bound;
	return 0;
}

static int sniset_push_name(struct sniset *set, const struct sniset_name *name)
{
	if (set->n_names == set->cap_names) {
		size_t cap = set->cap_names ? set->cap_names * 2 : 16;
		struct sniset_name *grown = realloc(set->names, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		set->names = grown;
		set->cap_names = cap;
	}
	set->names[set->n_names++] = *name;
	return 0;
}

/* One judged port: the entry's addresses that are name-derived there. */
static int sniset_add_port(struct sniset *set, uint64_t rhash, uint8_t kinds, uint16_t port,
			   uint8_t bound_kind, const struct in6_addr *addrs, size_t n,
			   const struct allowset *literals)
{
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		struct sniset_bound bound = {.port = port, .kind = bound_kind};
		struct sniset_name name = {.rhash = rhash, .port = port, .kinds = kinds};

		/* A literal or CIDR entry allows it by itself: address-only judging. */
		if (literals && allowset_covers(literals, addrs[i].s6_addr, port))
			continue;
		memcpy(bound.addr, addrs[i].s6_addr, 16);
		memcpy(name.addr, addrs[i].s6_addr, 16);
		err = sniset_push_bound(set, &bound);
		if (!err)
			err = sniset_push_name(set, &name);
	}
	return err;
}

int sniset_add_name(struct sniset *set, const struct policy *policy, const char *name,
		    uint8_t kinds, uint16_t entry_port, const struct in6_addr *addrs, size_t n,
		    const struct allowset *literals)
{
	struct sniset_name marker = {.rhash = sniset_name_rhash(name), .kinds = kinds};
	int err;

	if (!policy_sni_enforced(policy))
		return 0;
	err = sniset_push_name(set, &marker);
	for (int tls = 1; !err && tls >= 0; tls--) {
		size_t count;
		const uint16_t *ports = policy_sni_ports(policy, tls, &count);

		for (size_t i = 0; !err && i < count; i++) {
			if (entry_port && entry_port != ports[i])
				continue;
			err = sniset_add_port(set, marker.rhash, kinds, ports[i],
					      tls ? BFBPF_SNI_BOUND_TLS : BFBPF_SNI_BOUND_HTTP,
					      addrs, n, literals);
		}
	}
	return err;
}

static int sniset_bound_compare(const void *pa, const void *pb)
{
	const struct sniset_bound *a = pa, *b = pb;
	int c = memcmp(a->addr, b->addr, 16);

	return c ? c : (int)a->port - (int)b->port;
}

static int sniset_name_compare(const void *pa, const void *pb)
{
	const struct sniset_name *a = pa, *b = pb;
	int c;

	if (a->rhash != b->rhash)
		return a->rhash < b->rhash ? -1 : 1;
	c = memcmp(a->addr, b->addr, 16);
	return c ? c : (int)a->port - (int)b->port;
}

void sniset_normalize(struct sniset *set)
{
	size_t kept = 0;

	if (set->n_bound)
		qsort(set->bound, set->n_bound, sizeof(*set->bound), sniset_bound_compare);
	for (size_t i = 0; i < set->n_bound; i++)
		if (!kept || sniset_bound_compare(&set->bound[kept - 1], &set->bound[i]))
			set->bound[kept++] = set->bound[i];
	set->n_bound = kept;
	kept = 0;
	if (set->n_names)
		qsort(set->names, set->n_names, sizeof(*set->names), sniset_name_compare);
	for (size_t i = 0; i < set->n_names; i++) {
		if (kept && !sniset_name_compare(&set->names[kept - 1], &set->names[i]))
			set->names[kept - 1].kinds |= set->names[i].kinds;
		else
			set->names[kept++] = set->names[i];
	}
	set->n_names = kept;
}

uint8_t sniset_bound_kind(const struct sniset *set, const uint8_t addr[16], uint16_t port)
{
	for (size_t i = 0; i < set->n_bound; i++)
		if (set->bound[i].port == port && !memcmp(set->bound[i].addr, addr, 16))
			return set->bound[i].kind;
	return 0;
}

void sniset_free(struct sniset *set)
{
	if (!set)
		return;
	free(set->bound);
	free(set->names);
	memset(set, 0, sizeof(*set));
}
