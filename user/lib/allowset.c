// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "allowset.h"

int allowset_add(struct allowset *set, const struct allowset_entry *entry)
{
	if (set->count == set->capacity) {
		size_t capacity = set->capacity ? set->capacity * 2 : 16;
		struct allowset_entry *grown = reallocarray(set->entries, capacity, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		set->entries = grown;
		set->capacity = capacity;
	}
	set->entries[set->count++] = *entry;
	return 0;
}

int allowset_copy(const struct allowset *from, struct allowset *out)
{
	struct allowset copy = {0};

	if (from->count) {
		copy.entries = malloc(from->count * sizeof(*copy.entries));
		if (!copy.entries)
			return -ENOMEM;
		memcpy(copy.entries, from->entries, from->count * sizeof(*copy.entries));
		copy.count = copy.capacity = from->count;
	}
	*out = copy;
	return 0;
}

void allowset_trim(struct allowset *set)
{
	struct allowset_entry *trimmed;

	if (set->capacity == set->count)
		return;
	if (!set->count) {
		allowset_free(set);
		return;
	}
	trimmed = realloc(set->entries, set->count * sizeof(*trimmed));
	if (!trimmed)
		return; /* the larger block still holds every entry */
	set->entries = trimmed;
	set->capacity = set->count;
}

int allowset_entry_compare(const struct allowset_entry *a, const struct allowset_entry *b)
{
	int order = memcmp(a->addr, b->addr, sizeof(a->addr));

	if (order)
		return order;
	if (a->prefix_len != b->prefix_len)
		return a->prefix_len < b->prefix_len ? -1 : 1;
	if (a->port != b->port)
		return a->port < b->port ? -1 : 1;
	return 0;
}

static int allowset_compare_void(const void *a, const void *b)
{
	return allowset_entry_compare(a, b);
}

/* Sorted and unique already? Sets made from a policy are: its addresses come sorted. */
static bool allowset_normal(const struct allowset *set)
{
	for (size_t i = 1; i < set->count; i++)
		if (allowset_entry_compare(&set->entries[i - 1], &set->entries[i]) >= 0)
			return false;
	return true;
}

void allowset_normalize(struct allowset *set)
{
	size_t kept = 0;

	if (!set->count || allowset_normal(set))
		return;
	qsort(set->entries, set->count, sizeof(set->entries[0]), allowset_compare_void);
	for (size_t i = 1; i < set->count; i++) {
		if (allowset_entry_compare(&set->entries[kept], &set->entries[i]))
			set->entries[++kept] = set->entries[i];
	}
	set->count = kept + 1;
}

bool allowset_contains(const struct allowset *set, const struct allowset_entry *entry)
{
	return set->count && bsearch(entry, set->entries, set->count, sizeof(set->entries[0]),
				     allowset_compare_void) != NULL;
}

static int allowset_add_policy_entries(struct allowset *set, const struct policy_entry *entries,
				       size_t count)
{
	for (size_t i = 0; i < count; i++) {
		struct allowset_entry entry = {0};
		int err;

		if (entries[i].kind != POLICY_ENTRY_ADDRESS)
			continue;
		memcpy(entry.addr, &entries[i].addr, sizeof(entry.addr));
		entry.prefix_len = entries[i].prefix_len;
		entry.port = entries[i].port;
		err = allowset_add(set, &entry);
		if (err)
			return err;
	}
	return 0;
}

int allowset_from_policy(const struct policy *policy, struct allowset *out)
{
	struct allowset set = {0};
	int err = 0;

	for (int list = 0; list < POLICY_LIST_COUNT; list++) {
		size_t count;
		const struct policy_entry *entries = policy_in_force(policy, list, &count);

		err = allowset_add_policy_entries(&set, entries, count);
		if (err)
			goto cleanup;
	}
	allowset_normalize(&set);
	*out = set;
	return 0;
cleanup:
	allowset_free(&set);
	return err;
}

int allowset_diff(const struct allowset *prev, const struct allowset *next, struct allowset *added,
		  struct allowset *removed)
{
	struct allowset plus = {0}, minus = {0};
	size_t i = 0, j = 0;
	int err = 0;

	/* Both sets are sorted: one merge pass. */
	while (i < prev->count || j < next->count) {
		int order = i == prev->count ? 1
			    : j == next->count
				    ? -1
				    : allowset_entry_compare(&prev->entries[i], &next->entries[j]);

		if (order < 0)
			err = allowset_add(&minus, &prev->entries[i++]);
		else if (order > 0)
			err = allowset_add(&plus, &next->entries[j++]);
		else
			i++, j++;
		if (err)
			goto cleanup;
	}
	*added = plus;
	*removed = minus;
	return 0;
cleanup:
	allowset_free(&plus);
	allowset_free(&minus);
	return err;
}

void allowset_free(struct allowset *set)
{
	free(set->entries);
	memset(set, 0, sizeof(*set));
}

static bool allowset_prefix_match(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes))
		return false;
	if (!rest)
		return true;
	return ((a[bytes] ^ b[bytes]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

bool allowset_covers(const struct allowset *set, const uint8_t addr[16], uint16_t port)
{
	for (size_t i = 0; i < set->count; i++) {
		const struct allowset_entry *entry = &set->entries[i];

		if ((entry->port == 0 || entry->port == port) &&
		    allowset_prefix_match(entry->addr, addr, entry->prefix_len))
			return true;
	}
	return false;
}

bool allowset_equal(const struct allowset *a, const struct allowset *b)
{
	return a->count == b->count &&
	       (!a->count || !memcmp(a->entries, b->entries, a->count * sizeof(a->entries[0])));
}

bool allowset_has_address(const struct allowset *set, const uint8_t addr[16])
{
	struct allowset_entry probe = {.prefix_len = 128, .port = 0};
	size_t low = 0, high = set->count;

	memcpy(probe.addr, addr, sizeof(probe.addr));
	/* The first entry not below (addr, /128, port 0): any port of it sorts from there. */
	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (allowset_entry_compare(&set->entries[middle], &probe) < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return low < set->count && set->entries[low].prefix_len == 128 &&
	       !memcmp(set->entries[low].addr, addr, sizeof(probe.addr));
}
