// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Policy entry lists: their order (sorted, unique: the canonical policy),
 * their packing with their names in one allocation, copies, the digest, and
 * which of them are in force.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fnv.h"
#include "hostmatch.h"
#include "policy.h"
#include "policy_internal.h"

/* Half of an address as a number that orders as its bytes do (memcmp order). */
static uint64_t policy_addr_half(const struct in6_addr *addr, int half)
{
	uint64_t value;

	memcpy(&value, &addr->s6_addr[half * 8], sizeof(value));
	return be64toh(value);
}

static inline int policy_entry_cmp(const struct policy_entry *x, const struct policy_entry *y)
{
	uint64_t p, q;
	int r;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	/* An address's name is "": compare what differs (most large policies are addresses). */
	if (x->kind != POLICY_ENTRY_ADDRESS) {
		r = strcmp(x->name, y->name);
		if (r)
			return r;
	}
	/* The sort of a large policy is mostly this: two loads, not a call to memcmp. */
	for (int half = 0; half < 2; half++) {
		p = policy_addr_half(&x->addr, half);
		q = policy_addr_half(&y->addr, half);
		if (p != q)
			return p < q ? -1 : 1;
	}
	r = (int)x->prefix_len - (int)y->prefix_len;
	if (!r)
		r = (int)x->port - (int)y->port;
	return r;
}

bool policy_entries_sorted(const struct policy_entry *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (policy_entry_cmp(&v[i - 1], &v[i]) >= 0)
			return false;
	return true;
}

#define POLICY_SORT_RUN 8

/* Runs of POLICY_SORT_RUN by insertion: short, and cheap on nearly sorted input. */
static void policy_entries_sort_runs(struct policy_entry *v, size_t n)
{
	for (size_t start = 0; start < n; start += POLICY_SORT_RUN) {
		size_t end = start + POLICY_SORT_RUN < n ? start + POLICY_SORT_RUN : n;

		for (size_t i = start + 1; i < end; i++) {
			struct policy_entry e = v[i];
			size_t j = i;

			for (; j > start && policy_entry_cmp(&v[j - 1], &e) > 0; j--)
				v[j] = v[j - 1];
			v[j] = e;
		}
	}
}

/*
 * A bottom-up merge sort with the comparison inlined: qsort's calls through
 * a pointer were a quarter of parsing a 10,000-entry policy. Needs room for
 * n more entries; returns false (nothing sorted) without it.
 */
static bool policy_entries_sort(struct policy_entry *v, size_t n)
{
	struct policy_entry *from = v, *to = malloc(n * sizeof(*v)), *spare = to, *swap;

	if (!to)
		return false;
	policy_entries_sort_runs(v, n);
	for (size_t width = POLICY_SORT_RUN; width < n; width *= 2) {
		for (size_t left = 0; left < n; left += 2 * width) {
			size_t middle = left + width < n ? left + width : n;
			size_t right = middle + width < n ? middle + width : n;
			size_t i = left, j = middle, k = left;

			while (i < middle && j < right)
				to[k++] = policy_entry_cmp(&from[j], &from[i]) < 0 ? from[j++]
										   : from[i++];
			while (i < middle)
				to[k++] = from[i++];
			while (j < right)
				to[k++] = from[j++];
		}
		swap = from;
		from = to;
		to = swap;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	free(spare);
	return true;
}

static int policy_entry_cmp_void(const void *a, const void *b)
{
	return policy_entry_cmp(a, b);
}

/* Sorts and drops entries equal after normalisation; returns the new count. */
size_t policy_entries_dedup(struct policy_entry *v, size_t n)
{
	size_t kept = 0;

	if (n == 0)
		return 0;
	/* Lists written by programs often come sorted already: then there is nothing to do. */
	if (policy_entries_sorted(v, n))
		return n;
	if (!policy_entries_sort(v, n))
		qsort(v, n, sizeof(*v), policy_entry_cmp_void); /* slower, needs no memory */
	for (size_t i = 1; i < n; i++)
		if (policy_entry_cmp(&v[kept], &v[i]) != 0)
			v[++kept] = v[i];
	return kept + 1;
}

/*
 * The kept entries and their names in one allocation, names after the
 * entries: a policy is two allocations whatever its size, and an entry
 * costs 32 bytes plus its name, if it has one.
 */
struct policy_entry *policy_entries_pack(const struct policy_entry *v, size_t n)
{
	struct policy_entry *packed;
	size_t names = 0;
	char *next;

	for (size_t i = 0; i < n; i++)
		if (v[i].name[0])
			names += strlen(v[i].name) + 1;
	packed = malloc(n * sizeof(*packed) + names);
	if (!packed)
		return NULL;
	memcpy(packed, v, n * sizeof(*packed));
	next = (char *)(packed + n);
	for (size_t i = 0; i < n; i++) {
		size_t size;

		if (!v[i].name[0])
			continue;
		size = strlen(v[i].name) + 1;
		memcpy(next, v[i].name, size);
		packed[i].name = next;
		next += size;
	}
	return packed;
}

int policy_copy(const struct policy *policy, struct policy *out)
{
	struct policy copy = *policy;

	/* Packed afresh: the copy's names are its own, wherever the original's were. */
	copy.allowed_hosts = NULL;
	copy.model_endpoints = NULL;
	if (policy->n_allowed_hosts && !(copy.allowed_hosts = policy_entries_pack(
						 policy->allowed_hosts, policy->n_allowed_hosts)))
		return -ENOMEM;
	if (policy->n_model_endpoints &&
	    !(copy.model_endpoints =
		      policy_entries_pack(policy->model_endpoints, policy->n_model_endpoints))) {
		free(copy.allowed_hosts);
		return -ENOMEM;
	}
	*out = copy;
	return 0;
}

bool policy_list_in_force(const struct policy *policy, enum policy_list list)
{
	switch (list) {
	case POLICY_LIST_HOSTS:
		return policy->mode == POLICY_MODE_ALLOWLIST;
	case POLICY_LIST_LANE:
		/* The lane is the runner's: open in both restrictive modes unless closed. */
		return policy->mode != POLICY_MODE_PUBLIC && policy->allow_model_endpoint;
	default:
		return false;
	}
}

const struct policy_entry *policy_in_force(const struct policy *policy, enum policy_list list,
					   size_t *count)
{
	*count = 0;
	if (!policy_list_in_force(policy, list))
		return NULL;
	if (list == POLICY_LIST_HOSTS) {
		*count = policy->n_allowed_hosts;
		return policy->allowed_hosts;
	}
	*count = policy->n_model_endpoints;
	return policy->model_endpoints;
}

bool policy_entry_allows_name(enum policy_list list, const struct policy_entry *entry,
			      const char *name)
{
	if (list == POLICY_LIST_LANE)
		return entry->kind == POLICY_ENTRY_HOSTNAME && strcmp(entry->name, name) == 0;
	return hostmatch_entry(entry, name);
}

bool policy_allows_name(const struct policy *policy, const char *name)
{
	char normal[POLICY_NAME_SIZE];

	/* As hostmatch_policy(): an invalid name is never allowed, whoever wrote it. */
	if (hostname_normalize(name, normal, sizeof(normal), NULL, 0))
		return false;
	for (int list = 0; list < POLICY_LIST_COUNT; list++) {
		size_t count;
		const struct policy_entry *entries = policy_in_force(policy, list, &count);

		for (size_t i = 0; i < count; i++)
			if (policy_entry_allows_name(list, &entries[i], normal))
				return true;
	}
	return false;
}

/* One list in policy order: its length, then per entry kind, prefix, port, address, name. */
static uint64_t policy_digest_entries(uint64_t h, const struct policy_entry *v, size_t n)
{
	unsigned char head[8] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16),
				 (unsigned char)(n >> 8), (unsigned char)n};

	h = fnv_update(h, head, 4);
	for (size_t i = 0; i < n; i++) {
		head[0] = (unsigned char)v[i].kind;
		head[1] = v[i].prefix_len;
		head[2] = (unsigned char)(v[i].port >> 8);
		head[3] = (unsigned char)v[i].port;
		h = fnv_update(h, head, 4);
		h = fnv_update(h, &v[i].addr, sizeof(v[i].addr));
		h = fnv_update(h, v[i].name, strlen(v[i].name) + 1);
	}
	return h;
}

/* A policy built in code may be unsorted: digest the canonical (sorted, unique) copy. */
static int policy_digest_list(uint64_t *h, const struct policy_entry *v, size_t n)
{
	struct policy_entry *sorted;

	if (policy_entries_sorted(v, n)) {
		*h = policy_digest_entries(*h, v, n);
		return 0;
	}
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, v, n * sizeof(*sorted));
	*h = policy_digest_entries(*h, sorted, policy_entries_dedup(sorted, n));
	free(sorted);
	return 0;
}

uint64_t policy_digest(const struct policy *policy)
{
	static const char tag[] = "bfbpf policy 2";
	unsigned char head[4];
	uint64_t h = FNV_OFFSET;

	if (!policy)
		return 0;
	head[0] = (unsigned char)policy->mode;
	head[1] = policy->allow_loopback;
	head[2] = policy->allow_model_endpoint;
	head[3] = policy->runtime_network;
	h = fnv_update(h, tag, sizeof(tag));
	/* Without runtime_network, the digest of every earlier policy is unchanged. */
	h = fnv_update(h, head, policy->runtime_network ? sizeof(head) : sizeof(head) - 1);
	if (policy_digest_list(&h, policy->allowed_hosts, policy->n_allowed_hosts) ||
	    policy_digest_list(&h, policy->model_endpoints, policy->n_model_endpoints))
		return 0; /* out of memory: matches nothing a sandbox holds */
	return policy_sni_digest(policy, h);
}

uint64_t policy_digest_legacy(const struct policy *policy)
{
	json_t *canonical = policy_to_json(policy);
	char *text = canonical ? json_dumps(canonical, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	uint64_t h = text ? fnv_update(FNV_OFFSET, text, strlen(text)) : 0;

	free(text);
	json_decref(canonical);
	return h;
}
