// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bfbpf.skel.h"
#include "loader.h"
#include "log.h"

struct loader {
	struct bfbpf_bpf *skel;
	char *pin_dir; /* NULL: nothing pinned */
	int prog_fds[LOADER_HOOK_COUNT];
	uint8_t prog_tags[LOADER_HOOK_COUNT][BPF_TAG_SIZE];
	uint32_t next_generation;
	bool has_lsm; /* the kernel runs lsm_cgroup programs */
};

static const struct {
	const char *name;
	enum bpf_attach_type type;
} loader_hooks[LOADER_HOOK_COUNT] = {
	[LOADER_HOOK_CONNECT4] = {"connect4", BPF_CGROUP_INET4_CONNECT},
	[LOADER_HOOK_CONNECT6] = {"connect6", BPF_CGROUP_INET6_CONNECT},
	[LOADER_HOOK_SENDMSG4] = {"sendmsg4", BPF_CGROUP_UDP4_SENDMSG},
	[LOADER_HOOK_SENDMSG6] = {"sendmsg6", BPF_CGROUP_UDP6_SENDMSG},
	[LOADER_HOOK_SOCK_CREATE] = {"sock_create", BPF_CGROUP_INET_SOCK_CREATE},
	[LOADER_HOOK_EGRESS] = {"egress", BPF_CGROUP_INET_EGRESS},
	[LOADER_HOOK_SOCKET_LSM] = {"socket_lsm", BPF_LSM_CGROUP},
};

const char *loader_hook_name(enum loader_hook hook)
{
	return loader_hooks[hook].name;
}

enum bpf_attach_type loader_hook_attach_type(enum loader_hook hook)
{
	return loader_hooks[hook].type;
}

static struct bpf_program *loader_program(struct bfbpf_bpf *skel, enum loader_hook hook)
{
	switch (hook) {
	case LOADER_HOOK_CONNECT4:
		return skel->progs.bfbpf_connect4;
	case LOADER_HOOK_CONNECT6:
		return skel->progs.bfbpf_connect6;
	case LOADER_HOOK_SENDMSG4:
		return skel->progs.bfbpf_sendmsg4;
	case LOADER_HOOK_SENDMSG6:
		return skel->progs.bfbpf_sendmsg6;
	case LOADER_HOOK_SOCK_CREATE:
		return skel->progs.bfbpf_sock_create;
	case LOADER_HOOK_SOCKET_LSM:
		return skel->progs.bfbpf_socket_create;
	case LOADER_HOOK_EGRESS:
	default:
		return skel->progs.bfbpf_egress;
	}
}

static int mkdir_parents(const char *path)
{
	char buffer[PATH_MAX];

	if ((size_t)snprintf(buffer, sizeof(buffer), "%s", path) >= sizeof(buffer))
		return -ENAMETOOLONG;
	for (char *slash = buffer + 1; *slash; slash++) {
		if (*slash != '/')
			continue;
		*slash = '\0';
		if (mkdir(buffer, 0700) && errno != EEXIST)
			return -errno;
		*slash = '/';
	}
	if (mkdir(buffer, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* A pinned map is reused only if it has exactly the shape this binary expects. */
static int loader_map_reuse(struct bpf_map *map, const char *path)
{
	struct bpf_map_info info = {0};
	__u32 info_size = sizeof(info);
	int fd, err;

	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	err = bpf_obj_get_info_by_fd(fd, &info, &info_size);
	if (err) {
		err = -errno;
		goto cleanup;
	}
	if (info.type != bpf_map__type(map) || info.key_size != bpf_map__key_size(map) ||
	    info.value_size != bpf_map__value_size(map) ||
	    info.max_entries != bpf_map__max_entries(map)) {
		log_error("pinned map %s has another layout (from another bfbpf version?); "
			  "detach every sandbox and remove it to start afresh",
			  path);
		err = -EINVAL;
		goto cleanup;
	}
	err = bpf_map__reuse_fd(map, fd);
cleanup:
	close(fd);
	return err;
}

static int loader_maps_pin(struct loader *loader, bool pin)
{
	char path[PATH_MAX];
	struct bpf_map *map;
	int err;

	bpf_object__for_each_map(map, loader->skel->obj)
	{
		if (!strcmp(bpf_map__name(map), ".rodata") || strchr(bpf_map__name(map), '.'))
			continue;
		snprintf(path, sizeof(path), "%s/maps/%s", loader->pin_dir, bpf_map__name(map));
		if (!pin) {
			err = loader_map_reuse(map, path);
		} else {
			if (!access(path, F_OK))
				continue; /* reused */
			err = bpf_map__pin(map, path);
		}
		if (err) {
			log_error("map %s: %s", path, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int loader_scan_generations(struct loader *loader);

/* Open the object and load it, with or without the optional LSM program. */
static int loader_load(struct loader *loader, bool with_lsm)
{
	char path[PATH_MAX];
	int err;

	loader->skel = bfbpf_bpf__open();
	if (!loader->skel) {
		err = -errno;
		log_error("cannot open the BPF object: %s", strerror(-err));
		return err;
	}
	bpf_program__set_autoload(loader->skel->progs.bfbpf_socket_create, with_lsm);
	if (loader->pin_dir) {
		snprintf(path, sizeof(path), "%s/maps", loader->pin_dir);
		err = mkdir_parents(path);
		if (!err)
			err = loader_maps_pin(loader, false);
		if (err)
			return err;
	}
	return bfbpf_bpf__load(loader->skel);
}

int loader_open(const char *pin_dir, struct loader **out)
{
	struct loader *loader = calloc(1, sizeof(*loader));
	int err;

	if (!loader)
		return -ENOMEM;
	if (pin_dir && !(loader->pin_dir = strdup(pin_dir))) {
		err = -ENOMEM;
		goto cleanup;
	}
	loader->has_lsm = true;
	log_set_libbpf_quiet(true);
	err = loader_load(loader, true);
	log_set_libbpf_quiet(false);
	if (err == -EPERM || err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP ||
	    err == -524 /* ENOTSUPP */ || err == -ESRCH) {
		/* No BPF LSM (or no trampolines): packet sockets then depend on CAP_NET_RAW. */
		log_info("the kernel cannot load lsm_cgroup programs (%s); packet sockets are "
			 "refused only to sandboxes without CAP_NET_RAW",
			 strerror(-err));
		bfbpf_bpf__destroy(loader->skel);
		loader->skel = NULL;
		loader->has_lsm = false;
		err = loader_load(loader, false);
	}
	if (err) {
		log_error("the kernel refused the BPF programs: %s (run 'bfbpf check')",
			  strerror(-err));
		goto cleanup;
	}
	if (pin_dir) {
		err = loader_maps_pin(loader, true);
		if (err)
			goto cleanup;
	}
	for (int hook = 0; hook < LOADER_HOOK_COUNT; hook++) {
		struct bpf_prog_info info = {0};
		__u32 info_size = sizeof(info);

		loader->prog_fds[hook] = -1;
		if (!loader_hook_available(loader, hook))
			continue;
		loader->prog_fds[hook] = bpf_program__fd(loader_program(loader->skel, hook));
		if (bpf_obj_get_info_by_fd(loader->prog_fds[hook], &info, &info_size)) {
			err = -errno;
			goto cleanup;
		}
		memcpy(loader->prog_tags[hook], info.tag, BPF_TAG_SIZE);
	}
	err = loader_scan_generations(loader);
	if (err)
		goto cleanup;
	*out = loader;
	return 0;
cleanup:
	loader_close(loader);
	return err;
}

bool loader_hook_available(const struct loader *loader, enum loader_hook hook)
{
	return hook != LOADER_HOOK_SOCKET_LSM || loader->has_lsm;
}

void loader_close(struct loader *loader)
{
	if (!loader)
		return;
	bfbpf_bpf__destroy(loader->skel);
	free(loader->pin_dir);
	free(loader);
}

int loader_prog_fd(const struct loader *loader, enum loader_hook hook)
{
	return loader->prog_fds[hook];
}

const uint8_t *loader_prog_tag(const struct loader *loader, enum loader_hook hook)
{
	return loader->prog_tags[hook];
}

uint32_t loader_next_generation(struct loader *loader)
{
	return loader->next_generation++;
}

/* The highest generation in any map, so that a restarted daemon never reuses one. */
static int loader_scan_generations(struct loader *loader)
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

int loader_sandbox_set(struct loader *loader, uint64_t cgroup_id, const struct bfbpf_sandbox *value)
{
	if (bpf_map_update_elem(bpf_map__fd(loader->skel->maps.sandboxes), &cgroup_id, value,
				BPF_ANY))
		return -errno;
	return 0;
}

int loader_sandbox_get(struct loader *loader, uint64_t cgroup_id, struct bfbpf_sandbox *value)
{
	if (bpf_map_lookup_elem(bpf_map__fd(loader->skel->maps.sandboxes), &cgroup_id, value))
		return -errno;
	return 0;
}

int loader_sandbox_delete(struct loader *loader, uint64_t cgroup_id)
{
	if (bpf_map_delete_elem(bpf_map__fd(loader->skel->maps.sandboxes), &cgroup_id) &&
	    errno != ENOENT)
		return -errno;
	return 0;
}

int loader_sandbox_list(struct loader *loader, uint64_t **ids, size_t *count)
{
	int fd = bpf_map__fd(loader->skel->maps.sandboxes);
	uint64_t id, *prev = NULL, *list = NULL;
	size_t n = 0;

	while (!bpf_map_get_next_key(fd, prev, &id)) {
		uint64_t *grown = reallocarray(list, n + 1, sizeof(*list));

		if (!grown) {
			free(list);
			return -ENOMEM;
		}
		list = grown;
		list[n++] = id;
		prev = &list[n - 1];
	}
	*ids = list;
	*count = n;
	return 0;
}

static void loader_link_path(const struct loader *loader, uint64_t cgroup_id, int hook, char *out,
			     size_t size)
{
	if (hook < 0)
		snprintf(out, size, "%s/links/%llu", loader->pin_dir, (unsigned long long)cgroup_id);
	else
		snprintf(out, size, "%s/links/%llu/%s", loader->pin_dir,
			 (unsigned long long)cgroup_id, loader_hooks[hook].name);
}

bool loader_links_pinned(struct loader *loader, uint64_t cgroup_id)
{
	char path[PATH_MAX];

	if (!loader->pin_dir)
		return false;
	loader_link_path(loader, cgroup_id, -1, path, sizeof(path));
	return !access(path, F_OK);
}

void loader_links_close(int link_fds[LOADER_HOOK_COUNT])
{
	for (int hook = 0; hook < LOADER_HOOK_COUNT; hook++) {
		if (link_fds[hook] >= 0)
			close(link_fds[hook]);
		link_fds[hook] = -1;
	}
}

int loader_links_attach(struct loader *loader, uint64_t cgroup_id, const char *cgroup_path,
			int link_fds[LOADER_HOOK_COUNT])
{
	char path[PATH_MAX];
	int cgroup_fd, hook, err = 0;

	for (hook = 0; hook < LOADER_HOOK_COUNT; hook++)
		link_fds[hook] = -1;
	cgroup_fd = open(cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgroup_fd < 0)
		return -errno;
	if (loader->pin_dir) {
		loader_link_path(loader, cgroup_id, -1, path, sizeof(path));
		err = mkdir_parents(path);
		if (err)
			goto cleanup;
	}
	for (hook = 0; hook < LOADER_HOOK_COUNT; hook++) {
		if (!loader_hook_available(loader, hook))
			continue;
		link_fds[hook] = bpf_link_create(loader->prog_fds[hook], cgroup_fd,
						 loader_hooks[hook].type, NULL);
		if (link_fds[hook] < 0) {
			err = -errno;
			log_error("attaching %s to %s: %s", loader_hooks[hook].name, cgroup_path,
				  strerror(-err));
			goto cleanup;
		}
		if (!loader->pin_dir)
			continue;
		loader_link_path(loader, cgroup_id, hook, path, sizeof(path));
		if (bpf_obj_pin(link_fds[hook], path)) {
			err = -errno;
			log_error("pinning %s: %s", path, strerror(-err));
			goto cleanup;
		}
	}
	close(cgroup_fd);
	return 0;
cleanup:
	loader_links_detach(loader, cgroup_id, link_fds);
	close(cgroup_fd);
	return err;
}

int loader_links_open(struct loader *loader, uint64_t cgroup_id, int link_fds[LOADER_HOOK_COUNT])
{
	char path[PATH_MAX];
	int missing = 0;

	for (int hook = 0; hook < LOADER_HOOK_COUNT; hook++) {
		loader_link_path(loader, cgroup_id, hook, path, sizeof(path));
		link_fds[hook] = loader->pin_dir ? bpf_obj_get(path) : -1;
		if (link_fds[hook] < 0 && loader_hook_available(loader, hook))
			missing++;
	}
	return missing ? -ENOENT : 0;
}

int loader_links_refresh(struct loader *loader, int link_fds[LOADER_HOOK_COUNT])
{
	for (int hook = 0; hook < LOADER_HOOK_COUNT; hook++) {
		struct bpf_link_info info = {0};
		__u32 info_size = sizeof(info);
		struct bpf_prog_info prog = {0};
		__u32 prog_size = sizeof(prog);

		if (!loader_hook_available(loader, hook))
			continue;
		if (link_fds[hook] < 0)
			return -ENOENT;
		if (bpf_obj_get_info_by_fd(link_fds[hook], &info, &info_size) ||
		    bpf_obj_get_info_by_fd(loader->prog_fds[hook], &prog, &prog_size))
			return -errno;
		if (info.prog_id == prog.id)
			continue;
		/* Atomic: the cgroup runs the old program until the new one replaces it. */
		if (bpf_link_update(link_fds[hook], loader->prog_fds[hook], NULL))
			return -errno;
	}
	return 0;
}

/* Is this link still attached to the cgroup (not detached behind our back)? */
static bool loader_link_attached(int link_fd, uint64_t cgroup_id)
{
	struct bpf_link_info info = {0};
	__u32 info_size = sizeof(info);

	if (link_fd < 0 || bpf_obj_get_info_by_fd(link_fd, &info, &info_size))
		return false;
	return info.cgroup.cgroup_id == cgroup_id;
}

int loader_links_repair(struct loader *loader, uint64_t cgroup_id, const char *cgroup_path,
			int link_fds[LOADER_HOOK_COUNT], int *repaired)
{
	char path[PATH_MAX];
	int cgroup_fd, err = 0;

	*repaired = 0;
	cgroup_fd = open(cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgroup_fd < 0)
		return -errno;
	for (int hook = 0; hook < LOADER_HOOK_COUNT; hook++) {
		int fresh;

		if (!loader_hook_available(loader, hook) ||
		    loader_link_attached(link_fds[hook], cgroup_id))
			continue;
		/* The new link first, so the hook is never left without our program. */
		fresh = bpf_link_create(loader->prog_fds[hook], cgroup_fd, loader_hooks[hook].type,
					NULL);
		if (fresh < 0) {
			err = -errno;
			break;
		}
		if (loader->pin_dir) {
			loader_link_path(loader, cgroup_id, hook, path, sizeof(path));
			unlink(path);
			if (bpf_obj_pin(fresh, path)) {
				err = -errno;
				bpf_link_detach(fresh);
				close(fresh);
				break;
			}
		}
		if (link_fds[hook] >= 0) {
			bpf_link_detach(link_fds[hook]);
			close(link_fds[hook]);
		}
		link_fds[hook] = fresh;
		(*repaired)++;
	}
	close(cgroup_fd);
	return err;
}

int loader_link_prog_id(int link_fd, uint32_t *prog_id)
{
	struct bpf_link_info info = {0};
	__u32 info_size = sizeof(info);

	if (link_fd < 0)
		return -EBADF;
	if (bpf_obj_get_info_by_fd(link_fd, &info, &info_size))
		return -errno;
	*prog_id = info.prog_id;
	return 0;
}

int loader_links_detach(struct loader *loader, uint64_t cgroup_id, int link_fds[LOADER_HOOK_COUNT])
{
	char path[PATH_MAX];
	int err = 0;

	for (int hook = 0; hook < LOADER_HOOK_COUNT; hook++) {
		/* BPF_LINK_DETACH cuts the link even while other references (pins) remain. */
		if (link_fds[hook] >= 0 && bpf_link_detach(link_fds[hook]) && errno != ENOLINK)
			err = -errno;
		if (loader->pin_dir) {
			loader_link_path(loader, cgroup_id, hook, path, sizeof(path));
			if (unlink(path) && errno != ENOENT)
				err = -errno;
		}
	}
	loader_links_close(link_fds);
	if (loader->pin_dir) {
		loader_link_path(loader, cgroup_id, -1, path, sizeof(path));
		if (rmdir(path) && errno != ENOENT)
			err = -errno;
	}
	return err;
}
