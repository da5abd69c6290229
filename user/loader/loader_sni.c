// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The maps of names bound to TLS (include/bfbpf.h): sni_bound and sni_names,
 * written per generation like the allow maps, before the flip that makes the
 * generation the sandbox's; the keys of generations no sandbox uses go in one
 * walk of both maps (after each flip, and after a restart).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "bfbpf.skel.h"
#include "lib/log.h"
#include "loader_internal.h"

int loader_sni_write(struct loader *loader, uint32_t generation, const struct sniset *set)
{
	int bound = bpf_map__fd(loader->skel->maps.sni_bound);
	int names = bpf_map__fd(loader->skel->maps.sni_names);
	int err = 0;

	for (size_t i = 0; !err && i < set->n_bound; i++) {
		struct bfbpf_sni_bound_key key = {.generation = generation,
						  .port = set->bound[i].port};
		uint8_t kind = set->bound[i].kind;

		memcpy(key.addr, set->bound[i].addr, sizeof(key.addr));
		if (bpf_map_update_elem(bound, &key, &kind, BPF_ANY))
			err = -errno;
	}
	for (size_t i = 0; !err && i < set->n_names; i++) {
		struct bfbpf_sni_name_key key = {.generation = generation,
						 .port = set->names[i].port,
						 .name_rhash = set->names[i].rhash};
		struct bfbpf_sni_name_value value = {.kinds = set->names[i].kinds};
		const char *text = sniset_name_text(set, &set->names[i]);
		size_t len = strlen(text);

		/* The name the kernel confirms a hash hit with (NUL-filled: value is zeroed). */
		if (len == 0 || len >= sizeof(value.name)) {
			err = -EINVAL;
			break;
		}
		value.name_len = (uint32_t)len;
		memcpy(value.name, text, len);
		memcpy(key.addr, set->names[i].addr, sizeof(key.addr));
		if (bpf_map_update_elem(names, &key, &value, BPF_ANY))
			err = -errno;
	}
	if (err)
		loader_sni_collect(loader, generation);
	return err;
}

static bool loader_sni_live(const uint32_t *live, size_t count, uint32_t generation)
{
	for (size_t i = 0; i < count; i++)
		if (live[i] == generation)
			return true;
	return false;
}

/* Deletes the keys (generation first in each) whose generation is not live, or is dead. */
static size_t loader_sni_walk(int fd, size_t key_size, const uint32_t *live, size_t count,
			      uint32_t dead)
{
	uint8_t key[sizeof(struct bfbpf_sni_name_key)], next[sizeof(key)];
	size_t removed = 0;
	bool more = !bpf_map_get_next_key(fd, NULL, key);

	while (more) {
		uint32_t generation;

		/* The next key first, so that the walk goes on past a deleted one. */
		more = !bpf_map_get_next_key(fd, key, next);
		memcpy(&generation, key, sizeof(generation));
		if ((generation == dead || !loader_sni_live(live, count, generation)) &&
		    !bpf_map_delete_elem(fd, key))
			removed++;
		memcpy(key, next, key_size);
	}
	return removed;
}

int loader_sni_collect(struct loader *loader, uint32_t dead)
{
	uint32_t *live = NULL;
	uint64_t *ids = NULL;
	size_t count = 0, removed;
	int err;

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
	removed = loader_sni_walk(bpf_map__fd(loader->skel->maps.sni_bound),
				  sizeof(struct bfbpf_sni_bound_key), live, count, dead);
	removed += loader_sni_walk(bpf_map__fd(loader->skel->maps.sni_names),
				   sizeof(struct bfbpf_sni_name_key), live, count, dead);
	if (removed)
		log_debug("removed %zu SNI entries of replaced generations", removed);
cleanup:
	free(live);
	free(ids);
	return err;
}

int loader_sni_flows_fd(const struct loader *loader)
{
	return bpf_map__fd(loader->skel->maps.sni_flows);
}
