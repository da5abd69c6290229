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
#include "loader_internal.h"
#include "lib/log.h"

/* The active LSMs, in order, comma-separated (securityfs). */
#define LOADER_LSM_LIST "/sys/kernel/security/lsm"

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
	[LOADER_HOOK_RECVMSG4] = {"recvmsg4", BPF_CGROUP_UDP4_RECVMSG},
	[LOADER_HOOK_RECVMSG6] = {"recvmsg6", BPF_CGROUP_UDP6_RECVMSG},
	[LOADER_HOOK_GETPEERNAME4] = {"getpeername4", BPF_CGROUP_INET4_GETPEERNAME},
	[LOADER_HOOK_GETPEERNAME6] = {"getpeername6", BPF_CGROUP_INET6_GETPEERNAME},
	[LOADER_HOOK_SETSOCKOPT] = {"setsockopt", BPF_CGROUP_SETSOCKOPT},
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
	case LOADER_HOOK_RECVMSG4:
		return skel->progs.bfbpf_recvmsg4;
	case LOADER_HOOK_RECVMSG6:
		return skel->progs.bfbpf_recvmsg6;
	case LOADER_HOOK_GETPEERNAME4:
		return skel->progs.bfbpf_getpeername4;
	case LOADER_HOOK_GETPEERNAME6:
		return skel->progs.bfbpf_getpeername6;
	case LOADER_HOOK_SETSOCKOPT:
		return skel->progs.bfbpf_setsockopt;
	case LOADER_HOOK_EGRESS:
	default:
		return skel->progs.bfbpf_egress;
	}
}

int loader_mkdir_parents(const char *path)
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

	bpf_object__for_each_map (map, loader->skel->obj) {
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

/*
 * An lsm_cgroup program loads and attaches wherever the kernel has CONFIG_BPF_LSM,
 * but it runs only when "bpf" is in the active LSM list (lsm= or CONFIG_LSM).
 * Attached yet never run, it would make verify trust a refusal of packet sockets
 * that never happens (seen on Debian's 6.1 booted without bpf in lsm=). A list we
 * cannot read counts as inactive: the CAP_NET_RAW checks then apply.
 */
static bool loader_bpf_lsm_active(char *why, size_t why_size)
{
	char list[512];
	size_t length;
	FILE *file = fopen(LOADER_LSM_LIST, "re");

	if (!file) {
		snprintf(why, why_size, "cannot read %s: %s; is securityfs mounted?",
			 LOADER_LSM_LIST, strerror(errno));
		return false;
	}
	length = fread(list, 1, sizeof(list) - 1, file);
	fclose(file);
	list[length] = '\0';
	list[strcspn(list, "\n")] = '\0';
	for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save))
		if (!strcmp(name, "bpf"))
			return true;
	snprintf(why, why_size, "the BPF LSM is not active (%s: %s)", LOADER_LSM_LIST, list);
	return false;
}

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
		err = loader_mkdir_parents(path);
		if (!err)
			err = loader_maps_pin(loader, false);
		if (err)
			return err;
	}
	return bfbpf_bpf__load(loader->skel);
}

/* Load with the LSM program where the BPF LSM runs it, else without it. */
static int loader_load_best(struct loader *loader)
{
	char why[640];
	int err;

	loader->has_lsm = loader_bpf_lsm_active(why, sizeof(why));
	if (!loader->has_lsm) {
		log_info("%s; packet sockets are refused only to sandboxes without CAP_NET_RAW",
			 why);
		return loader_load(loader, false);
	}
	log_set_libbpf_quiet(true);
	err = loader_load(loader, true);
	log_set_libbpf_quiet(false);
	if (err == -EPERM || err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP ||
	    err == -524 /* ENOTSUPP */ || err == -ESRCH) {
		/* No trampolines (or another refusal): packet sockets then depend on CAP_NET_RAW.
		 */
		log_info("the kernel cannot load lsm_cgroup programs (%s); packet sockets are "
			 "refused only to sandboxes without CAP_NET_RAW",
			 strerror(-err));
		bfbpf_bpf__destroy(loader->skel);
		loader->skel = NULL;
		loader->has_lsm = false;
		err = loader_load(loader, false);
	}
	return err;
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
	err = loader_load_best(loader);
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
	/* 0 means "policy not written yet" to the programs: never hand it out. */
	if (!loader->next_generation)
		loader->next_generation = 1;
	return loader->next_generation++;
}

int loader_sandbox_set(struct loader *loader, uint64_t cgroup_id, const struct bfbpf_sandbox *value)
{
	if (bpf_map_update_elem(bpf_map__fd(loader->skel->maps.sandboxes), &cgroup_id, value,
				BPF_ANY))
		return -errno;
	return 0;
}

int loader_stats_read(struct loader *loader, uint64_t cgroup_id, struct bfbpf_stats *sum)
{
	int cpus = libbpf_num_possible_cpus(), err = 0;
	struct bfbpf_stats *values;

	memset(sum, 0, sizeof(*sum));
	if (cpus <= 0)
		return cpus ? cpus : -EINVAL;
	values = calloc((size_t)cpus, sizeof(*values));
	if (!values)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(loader->skel->maps.sandbox_stats), &cgroup_id,
				values)) {
		err = -errno;
		goto cleanup;
	}
	for (int cpu = 0; cpu < cpus; cpu++) {
		for (int hook = 0; hook < BFBPF_HOOK_COUNT; hook++) {
			sum->allowed[hook] += values[cpu].allowed[hook];
			sum->denied[hook] += values[cpu].denied[hook];
		}
		sum->events_sent += values[cpu].events_sent;
		sum->events_limited += values[cpu].events_limited;
		sum->events_lost += values[cpu].events_lost;
		for (int reason = 0; reason < BFBPF_REASON_COUNT; reason++)
			sum->sni_refused[reason] += values[cpu].sni_refused[reason];
		sum->sni_allowed += values[cpu].sni_allowed;
	}
cleanup:
	free(values);
	return err;
}

int loader_events_fd(const struct loader *loader)
{
	return bpf_map__fd(loader->skel->maps.events);
}

int loader_sandbox_get(struct loader *loader, uint64_t cgroup_id, struct bfbpf_sandbox *value)
{
	if (bpf_map_lookup_elem(bpf_map__fd(loader->skel->maps.sandboxes), &cgroup_id, value))
		return -errno;
	return 0;
}

int loader_map_keys(int fd, uint64_t **ids, size_t *count)
{
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

int loader_sandbox_list(struct loader *loader, uint64_t **ids, size_t *count)
{
	return loader_map_keys(bpf_map__fd(loader->skel->maps.sandboxes), ids, count);
}
