// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loader: the allow entries of each generation in the maps (write, delete, read, collect). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bfbpf.skel.h"
#include "loader.h"
#include "loader_internal.h"
#include "log.h"

/* The highest generation in any map, so that a restarted daemon never reuses one. */
int loader_scan_generations(struct loader *loader)
{
	int sandboxes = bpf_map__fd(loader->skel->maps.sandboxes);
	int exact = bpf_map__fd(loader->skel->maps.allow_exact);
	int prefix = bpf_map__fd(loader->skel->maps.allow_prefix);
	struct bfbpf_exact_key exact_key, *exact_prev = NULL;
	struct bfbpf_prefix_key prefix_key, *prefix_prev = NULL;
	uint64_t id, *id_prev = NULL;
	uint32_t highest = 0;

	while (!bpf_map_get_next_key(sandboxes, id_prev, &id)) {
		struct bfbpf_sandbox value;

		if (!bpf_map_lookup_elem(sandboxes, &id, &value) && value.generation > highest)
			highest = value.generation;
		id_prev = &id;
	}
	while (!bpf_map_get_next_key(exact, exact_prev, &exact_key)) {
		if (exact_key.generation > highest)
			highest = exact_key.generation;
		exact_prev = &exact_key;
	}
	while (!bpf_map_get_next_key(prefix, prefix_prev, &prefix_key)) {
		if (prefix_key.generation > highest)
			highest = prefix_key.generation;
		prefix_prev = &prefix_key;
	}
	loader->next_generation = highest + 1;
	return 0;
}

static void loader_exact_key(struct bfbpf_exact_key *key, uint32_t generation,
			     const struct allowset_entry *entry)
{
	memset(key, 0, sizeof(*key));
	key->generation = generation;
	key->port = entry->port;
	memcpy(key->addr, entry->addr, sizeof(key->addr));
}

static void loader_prefix_key(struct bfbpf_prefix_key *key, uint32_t generation,
			      const struct allowset_entry *entry)
{
	memset(key, 0, sizeof(*key));
	key->prefixlen = BFBPF_PREFIX_FIXED_BITS + entry->prefix_len;
	key->generation = generation;
	key->port = entry->port;
	memcpy(key->addr, entry->addr, sizeof(key->addr));
}

/* Exact entries in one batch syscall where the kernel supports it (hash maps, 5.6+). */
static int loader_exact_write_batch(int fd, uint32_t generation, const struct allowset *set,
				    size_t *written)
{
	struct bfbpf_exact_key *keys = NULL;
	struct bfbpf_allow_value *values = NULL;
	size_t count = 0;
	__u32 batch;
	int err = 0;

	*written = 0;
	keys = calloc(set->count ? set->count : 1, sizeof(*keys));
	values = calloc(set->count ? set->count : 1, sizeof(*values));
	if (!keys || !values) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < set->count; i++) {
		if (set->entries[i].prefix_len != 128)
			continue;
		loader_exact_key(&keys[count], generation, &set->entries[i]);
		values[count++].present = 1;
	}
	batch = count;
	if (count && bpf_map_update_batch(fd, keys, values, &batch, NULL))
		err = -errno;
	*written = batch;
cleanup:
	free(keys);
	free(values);
	return err;
}

int loader_entries_write(struct loader *loader, uint32_t generation, const struct allowset *set)
{
	int exact = bpf_map__fd(loader->skel->maps.allow_exact);
	int prefix = bpf_map__fd(loader->skel->maps.allow_prefix);
	struct bfbpf_allow_value value = {.present = 1};
	size_t batched = 0;
	int err;

	err = loader_exact_write_batch(exact, generation, set, &batched);
	if (err && err != -EINVAL && err != -EOPNOTSUPP && err != -524 /* ENOTSUPP */)
		goto cleanup;
	for (size_t i = 0; i < set->count; i++) {
		const struct allowset_entry *entry = &set->entries[i];
		struct bfbpf_exact_key exact_key;
		struct bfbpf_prefix_key prefix_key;

		if (entry->prefix_len == 128) {
			if (!err)
				continue; /* written by the batch */
			loader_exact_key(&exact_key, generation, entry);
			if (bpf_map_update_elem(exact, &exact_key, &value, BPF_ANY))
				goto write_failed;
		} else {
			loader_prefix_key(&prefix_key, generation, entry);
			if (bpf_map_update_elem(prefix, &prefix_key, &value, BPF_ANY))
				goto write_failed;
		}
	}
	return 0;
write_failed:
	err = -errno;
cleanup:
	log_error("writing %zu allow entries of generation %u: %s%s", set->count, generation,
		  strerror(-err), err == -E2BIG ? " (the allow maps are full)" : "");
	loader_entries_delete(loader, generation, set);
	return err;
}

int loader_entries_delete(struct loader *loader, uint32_t generation, const struct allowset *set)
{
	int exact = bpf_map__fd(loader->skel->maps.allow_exact);
	int prefix = bpf_map__fd(loader->skel->maps.allow_prefix);
	int err = 0;

	for (size_t i = 0; i < set->count; i++) {
		const struct allowset_entry *entry = &set->entries[i];
		struct bfbpf_exact_key exact_key;
		struct bfbpf_prefix_key prefix_key;
		int result;

		if (entry->prefix_len == 128) {
			loader_exact_key(&exact_key, generation, entry);
			result = bpf_map_delete_elem(exact, &exact_key);
		} else {
			loader_prefix_key(&prefix_key, generation, entry);
			result = bpf_map_delete_elem(prefix, &prefix_key);
		}
		if (result && errno != ENOENT)
			err = -errno;
	}
	return err;
}

struct loader_snapshot_item {
	uint32_t generation;
	struct allowset_entry entry;
};

static int loader_snapshot_add(struct loader_snapshot *snapshot, uint32_t generation,
			       const struct allowset_entry *entry)
{
	if (snapshot->count == snapshot->capacity) {
		size_t capacity = snapshot->capacity ? snapshot->capacity * 2 : 256;
		struct loader_snapshot_item *grown =
			reallocarray(snapshot->items, capacity, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		snapshot->items = grown;
		snapshot->capacity = capacity;
	}
	snapshot->items[snapshot->count].generation = generation;
	snapshot->items[snapshot->count].entry = *entry;
	snapshot->count++;
	return 0;
}

static int loader_snapshot_compare(const void *a, const void *b)
{
	const struct loader_snapshot_item *x = a, *y = b;

	if (x->generation != y->generation)
		return x->generation < y->generation ? -1 : 1;
	return allowset_entry_compare(&x->entry, &y->entry);
}

int loader_snapshot_take(struct loader *loader, struct loader_snapshot *out)
{
	int exact = bpf_map__fd(loader->skel->maps.allow_exact);
	int prefix = bpf_map__fd(loader->skel->maps.allow_prefix);
	struct bfbpf_exact_key exact_key, *exact_prev = NULL;
	struct bfbpf_prefix_key prefix_key, *prefix_prev = NULL;
	struct loader_snapshot snapshot = {0};
	int err = 0;

	/* One walk of each map for every sandbox at once: verify stays O(entries). */
	while (!bpf_map_get_next_key(exact, exact_prev, &exact_key)) {
		struct allowset_entry entry = {.prefix_len = 128, .port = exact_key.port};

		exact_prev = &exact_key;
		memcpy(entry.addr, exact_key.addr, sizeof(entry.addr));
		err = loader_snapshot_add(&snapshot, exact_key.generation, &entry);
		if (err)
			goto cleanup;
	}
	while (!bpf_map_get_next_key(prefix, prefix_prev, &prefix_key)) {
		struct allowset_entry entry = {
			.prefix_len = prefix_key.prefixlen - BFBPF_PREFIX_FIXED_BITS,
			.port = prefix_key.port,
		};

		prefix_prev = &prefix_key;
		memcpy(entry.addr, prefix_key.addr, sizeof(entry.addr));
		err = loader_snapshot_add(&snapshot, prefix_key.generation, &entry);
		if (err)
			goto cleanup;
	}
	if (snapshot.count)
		qsort(snapshot.items, snapshot.count, sizeof(snapshot.items[0]),
		      loader_snapshot_compare);
	*out = snapshot;
	return 0;
cleanup:
	loader_snapshot_free(&snapshot);
	return err;
}

int loader_snapshot_generation(const struct loader_snapshot *snapshot, uint32_t generation,
			       struct allowset *out)
{
	struct allowset set = {0};
	size_t low = 0, high = snapshot->count;
	int err;

	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (snapshot->items[middle].generation < generation)
			low = middle + 1;
		else
			high = middle;
	}
	for (size_t i = low; i < snapshot->count && snapshot->items[i].generation == generation;
	     i++) {
		err = allowset_add(&set, &snapshot->items[i].entry);
		if (err) {
			allowset_free(&set);
			return err;
		}
	}
	*out = set; /* sorted and unique already: map keys are unique */
	return 0;
}

void loader_snapshot_free(struct loader_snapshot *snapshot)
{
	free(snapshot->items);
	memset(snapshot, 0, sizeof(*snapshot));
}

int loader_entries_read(struct loader *loader, uint32_t generation, struct allowset *out)
{
	struct loader_snapshot snapshot;
	int err = loader_snapshot_take(loader, &snapshot);

	if (err)
		return err;
	err = loader_snapshot_generation(&snapshot, generation, out);
	loader_snapshot_free(&snapshot);
	return err;
}

static bool loader_generation_live(const uint32_t *live, size_t count, uint32_t generation)
{
	for (size_t i = 0; i < count; i++)
		if (live[i] == generation)
			return true;
	return false;
}

int loader_entries_collect_garbage(struct loader *loader)
{
	int exact = bpf_map__fd(loader->skel->maps.allow_exact);
	int prefix = bpf_map__fd(loader->skel->maps.allow_prefix);
	struct bfbpf_exact_key exact_key, exact_next;
	struct bfbpf_prefix_key prefix_key, prefix_next;
	uint32_t *live = NULL;
	uint64_t *ids = NULL;
	size_t count = 0, removed = 0;
	int err;
	bool more;

	err = loader_sandbox_list(loader, &ids, &count);
	if (err)
		return err;
	live = calloc(count ? count : 1, sizeof(*live));
	if (!live) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < count; i++) {
		struct bfbpf_sandbox value = {0};

		loader_sandbox_get(loader, ids[i], &value);
		live[i] = value.generation;
	}
	/* Fetch the next key before deleting the current one, so the walk goes on. */
	more = !bpf_map_get_next_key(exact, NULL, &exact_key);
	while (more) {
		more = !bpf_map_get_next_key(exact, &exact_key, &exact_next);
		if (!loader_generation_live(live, count, exact_key.generation) &&
		    !bpf_map_delete_elem(exact, &exact_key))
			removed++;
		exact_key = exact_next;
	}
	more = !bpf_map_get_next_key(prefix, NULL, &prefix_key);
	while (more) {
		more = !bpf_map_get_next_key(prefix, &prefix_key, &prefix_next);
		if (!loader_generation_live(live, count, prefix_key.generation) &&
		    !bpf_map_delete_elem(prefix, &prefix_key))
			removed++;
		prefix_key = prefix_next;
	}
	if (removed)
		log_info("removed %zu allow entries that no sandbox uses", removed);
cleanup:
	free(live);
	free(ids);
	return err;
}
