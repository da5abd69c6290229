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
#include "lib/log.h"

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

/* The keys of a set's entries for one of the two maps, laid out for batch syscalls. */
struct loader_keys {
	size_t count, key_size;
	void *keys;
	struct bfbpf_allow_value *values;
};

static int loader_keys_build(uint32_t generation, const struct allowset *set, bool exact,
			     struct loader_keys *out)
{
	size_t key_size = exact ? sizeof(struct bfbpf_exact_key) : sizeof(struct bfbpf_prefix_key);

	memset(out, 0, sizeof(*out));
	out->key_size = key_size;
	out->keys = calloc(set->count ? set->count : 1, key_size);
	out->values = calloc(set->count ? set->count : 1, sizeof(*out->values));
	if (!out->keys || !out->values)
		return -ENOMEM;
	for (size_t i = 0; i < set->count; i++) {
		void *key = (char *)out->keys + out->count * key_size;

		if ((set->entries[i].prefix_len == 128) != exact)
			continue;
		if (exact)
			loader_exact_key(key, generation, &set->entries[i]);
		else
			loader_prefix_key(key, generation, &set->entries[i]);
		out->values[out->count++].present = 1;
	}
	return 0;
}

static void loader_keys_free(struct loader_keys *keys)
{
	free(keys->keys);
	free(keys->values);
}

/* Kernels (and map types) without batch support say so with one of these. */
static bool loader_batch_unsupported(int err)
{
	return err == EINVAL || err == EOPNOTSUPP || err == 524 /* ENOTSUPP */;
}

/*
 * One batch syscall where the kernel has it (hash maps since 5.6; an update
 * of 10,000 entries is then a few milliseconds), element by element for the
 * rest or where it has not.
 */
static int loader_keys_update(int fd, const struct loader_keys *keys)
{
	__u32 done = (__u32)keys->count;

	if (!keys->count)
		return 0;
	if (!bpf_map_update_batch(fd, keys->keys, keys->values, &done, NULL))
		return 0;
	if (!loader_batch_unsupported(errno) || done > keys->count)
		return -errno;
	for (size_t i = done; i < keys->count; i++)
		if (bpf_map_update_elem(fd, (char *)keys->keys + i * keys->key_size,
					&keys->values[i], BPF_ANY))
			return -errno;
	return 0;
}

/* Missing keys are not an error: a delete after a failed write may find some absent. */
static int loader_keys_delete(int fd, const struct loader_keys *keys)
{
	__u32 done = (__u32)keys->count;
	int err = 0;

	if (!keys->count)
		return 0;
	if (!bpf_map_delete_batch(fd, keys->keys, &done, NULL))
		return 0;
	/* The batch stops at the first absent key (ENOENT): the rest one by one. */
	if (done > keys->count)
		done = 0;
	for (size_t i = done; i < keys->count; i++)
		if (bpf_map_delete_elem(fd, (char *)keys->keys + i * keys->key_size) &&
		    errno != ENOENT)
			err = -errno;
	return err;
}

static int loader_entries_apply(struct loader *loader, uint32_t generation,
				const struct allowset *set, bool write)
{
	const int fds[2] = {bpf_map__fd(loader->skel->maps.allow_exact),
			    bpf_map__fd(loader->skel->maps.allow_prefix)};
	struct loader_keys keys;
	int err = 0;

	for (int map = 0; map < 2 && !err; map++) {
		err = loader_keys_build(generation, set, map == 0, &keys);
		if (!err)
			err = write ? loader_keys_update(fds[map], &keys)
				    : loader_keys_delete(fds[map], &keys);
		loader_keys_free(&keys);
	}
	return err;
}

/* The caller says what failed: it may retry a write that found the maps full. */
int loader_entries_write(struct loader *loader, uint32_t generation, const struct allowset *set)
{
	int err = loader_entries_apply(loader, generation, set, true);

	if (!err)
		return 0;
	loader_entries_delete(loader, generation, set);
	return err;
}

int loader_entries_delete(struct loader *loader, uint32_t generation, const struct allowset *set)
{
	return loader_entries_apply(loader, generation, set, false);
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

#define LOADER_SNAPSHOT_BATCH 4096

static int loader_snapshot_add_exact(struct loader_snapshot *snapshot,
				     const struct bfbpf_exact_key *key)
{
	struct allowset_entry entry = {.prefix_len = 128, .port = key->port};

	memcpy(entry.addr, key->addr, sizeof(entry.addr));
	return loader_snapshot_add(snapshot, key->generation, &entry);
}

/* Key by key: for kernels without batch lookups. */
static int loader_snapshot_exact_walk(int fd, struct loader_snapshot *snapshot)
{
	struct bfbpf_exact_key key, *prev = NULL;
	int err = 0;

	while (!err && !bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		err = loader_snapshot_add_exact(snapshot, &key);
	}
	return err;
}

/* The exact map in batches of 4096 keys a syscall (it can hold 500,000). */
static int loader_snapshot_exact(int fd, struct loader_snapshot *snapshot)
{
	struct bfbpf_exact_key *keys = calloc(LOADER_SNAPSHOT_BATCH, sizeof(*keys));
	struct bfbpf_allow_value *values = calloc(LOADER_SNAPSHOT_BATCH, sizeof(*values));
	__u64 batch_in = 0, batch_out = 0; /* the hash map's token is a bucket index */
	bool first = true;
	int err = 0;

	if (!keys || !values) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (;;) {
		__u32 count = LOADER_SNAPSHOT_BATCH;
		int result = bpf_map_lookup_batch(fd, first ? NULL : &batch_in, &batch_out, keys,
						  values, &count, NULL);
		int saved = errno;

		if (result && saved != ENOENT) {
			err = first && loader_batch_unsupported(saved)
				      ? loader_snapshot_exact_walk(fd, snapshot)
				      : -saved;
			break;
		}
		for (__u32 i = 0; i < count && !err; i++)
			err = loader_snapshot_add_exact(snapshot, &keys[i]);
		if (result || err)
			break; /* ENOENT: that was the last batch */
		batch_in = batch_out;
		first = false;
	}
cleanup:
	free(keys);
	free(values);
	return err;
}

int loader_snapshot_take(struct loader *loader, struct loader_snapshot *out)
{
	int prefix = bpf_map__fd(loader->skel->maps.allow_prefix);
	struct bfbpf_prefix_key prefix_key, *prefix_prev = NULL;
	struct loader_snapshot snapshot = {0};
	int err;

	/* One walk of each map for every sandbox at once: verify stays O(entries). */
	err = loader_snapshot_exact(bpf_map__fd(loader->skel->maps.allow_exact), &snapshot);
	if (err)
		goto cleanup;
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
	err = loader_sni_collect(loader, 0); /* and the SNI keys of those generations */
cleanup:
	free(live);
	free(ids);
	return err;
}
