// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* SNI sets: the sni_bound and sni_names entries of a policy's names (sniset.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfbpf.h"
#include "fnv.h"
#include "sniset.h"
/* The kernel's own hash, built for userspace: one definition for both sides. */
#include "../../bpf/lib/hello.h"

uint64_t sniset_name_rhash(const char *name)
{
	return bfbpf_name_rhash(name, (__u32)strlen(name));
}

const char *sniset_name_text(const struct sniset *set, const struct sniset_name *name)
{
	return name->text < set->n_texts ? set->texts[name->text] : "";
}

/* A copy of name as the kernel reads names: lower case, one trailing dot dropped. */
static int sniset_push_text(struct sniset *set, const char *name, uint32_t *index)
{
	size_t len = strlen(name);
	char *text;

	if (len && name[len - 1] == '.')
		len--;
	if (len == 0 || len > BFBPF_NAME_MAX)
		return -EINVAL;
	if (set->n_texts == set->cap_texts) {
		size_t cap = set->cap_texts ? set->cap_texts * 2 : 16;
		char **grown = realloc(set->texts, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		set->texts = grown;
		set->cap_texts = cap;
	}
	text = strndup(name, len);
	if (!text)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++)
		if (text[i] >= 'A' && text[i] <= 'Z')
			text[i] = (char)(text[i] - 'A' + 'a');
	*index = (uint32_t)set->n_texts;
	set->texts[set->n_texts++] = text;
	return 0;
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
static int sniset_add_port(struct sniset *set, const struct sniset_name *marker, uint16_t port,
			   uint8_t bound_kind, const struct in6_addr *addrs, size_t n,
			   const struct allowset *literals)
{
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		struct sniset_bound bound = {.port = port, .kind = bound_kind};
		struct sniset_name name = *marker;

		name.port = port;

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
	struct sniset_name marker = {.kinds = kinds};
	int err;

	if (!policy_sni_enforced(policy))
		return 0;
	err = sniset_push_text(set, name, &marker.text);
	if (err)
		return err;
	/* The key hashes the text the value holds: what the kernel hashes and compares. */
	marker.rhash = sniset_name_rhash(set->texts[marker.text]);
	err = sniset_push_name(set, &marker);
	for (int tls = 1; !err && tls >= 0; tls--) {
		size_t count;
		const uint16_t *ports = policy_sni_ports(policy, tls, &count);

		for (size_t i = 0; !err && i < count; i++) {
			if (entry_port && entry_port != ports[i])
				continue;
			err = sniset_add_port(set, &marker, ports[i],
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

/* The map key's order: hash, address, port. */
static int sniset_key_compare(const struct sniset_name *a, const struct sniset_name *b)
{
	int c;

	if (a->rhash != b->rhash)
		return a->rhash < b->rhash ? -1 : 1;
	c = memcmp(a->addr, b->addr, 16);
	return c ? c : (int)a->port - (int)b->port;
}

/* The key's order, then the name's (equal keys of colliding names: deterministic). */
static int sniset_name_compare(const void *pa, const void *pb, void *context)
{
	const struct sniset *set = context;
	const struct sniset_name *a = pa, *b = pb;
	int c = sniset_key_compare(a, b);

	return c ? c : strcmp(sniset_name_text(set, a), sniset_name_text(set, b));
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
		qsort_r(set->names, set->n_names, sizeof(*set->names), sniset_name_compare, set);
	for (size_t i = 0; i < set->n_names; i++) {
		const struct sniset_name *last = kept ? &set->names[kept - 1] : NULL;

		if (!last || sniset_key_compare(last, &set->names[i]))
			set->names[kept++] = set->names[i];
		else if (!sniset_name_compare(last, &set->names[i], set))
			set->names[kept - 1].kinds |= set->names[i].kinds;
		/* else: another name on the same key (a collision): it stays out. */
	}
	set->n_names = kept;
}

/* A 64-bit finalizer (splitmix64's): a sum of mixed records does not cancel out simply. */
static uint64_t sniset_mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Each record's mixed hash, summed: the order of the records does not count. */
uint64_t sniset_digest(const struct sniset *set)
{
	uint64_t digest = set->n_bound * 0x9e3779b97f4a7c15ULL + set->n_names;

	for (size_t i = 0; i < set->n_bound; i++) {
		const struct sniset_bound *b = &set->bound[i];
		uint64_t h = fnv_update(FNV_OFFSET, "b", 1);

		h = fnv_update(h, b->addr, sizeof(b->addr));
		h = fnv_update(h, &b->port, sizeof(b->port));
		digest += sniset_mix(fnv_update(h, &b->kind, sizeof(b->kind)));
	}
	for (size_t i = 0; i < set->n_names; i++) {
		const struct sniset_name *n = &set->names[i];
		const char *text = sniset_name_text(set, n);
		uint64_t h = fnv_update(FNV_OFFSET, "n", 1);

		h = fnv_update(h, &n->rhash, sizeof(n->rhash));
		h = fnv_update(h, n->addr, sizeof(n->addr));
		h = fnv_update(h, &n->port, sizeof(n->port));
		h = fnv_update(h, &n->kinds, sizeof(n->kinds));
		digest += sniset_mix(fnv_update(h, text, strlen(text)));
	}
	return digest;
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
	for (size_t i = 0; i < set->n_texts; i++)
		free(set->texts[i]);
	free(set->texts);
	memset(set, 0, sizeof(*set));
}
