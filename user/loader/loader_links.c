// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loader: the cgroup links of each sandbox (attach, pin, re-open, repair, detach). */
#include <dirent.h>
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

static void loader_link_path(const struct loader *loader, uint64_t cgroup_id, int hook, char *out,
			     size_t size)
{
	if (hook < 0)
		snprintf(out, size, "%s/links/%llu", loader->pin_dir,
			 (unsigned long long)cgroup_id);
	else
		snprintf(out, size, "%s/links/%llu/%s", loader->pin_dir,
			 (unsigned long long)cgroup_id, loader_hook_name(hook));
}

bool loader_links_pinned(struct loader *loader, uint64_t cgroup_id)
{
	char path[PATH_MAX];

	if (!loader->pin_dir)
		return false;
	loader_link_path(loader, cgroup_id, -1, path, sizeof(path));
	return !access(path, F_OK);
}

int loader_links_pinned_ids(struct loader *loader, uint64_t **ids, size_t *count)
{
	char path[PATH_MAX];
	struct dirent *entry;
	uint64_t *list = NULL;
	size_t n = 0;
	DIR *dir;
	int err = 0;

	*ids = NULL;
	*count = 0;
	if (!loader->pin_dir)
		return 0;
	snprintf(path, sizeof(path), "%s/links", loader->pin_dir);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((entry = readdir(dir))) {
		unsigned long long id;
		char *end;
		uint64_t *grown;

		if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
			continue;
		errno = 0;
		id = strtoull(entry->d_name, &end, 10);
		if (*end || errno)
			continue; /* not ours */
		grown = reallocarray(list, n + 1, sizeof(*list));
		if (!grown) {
			err = -ENOMEM;
			goto cleanup;
		}
		list = grown;
		list[n++] = id;
	}
	*ids = list;
	*count = n;
	list = NULL;
cleanup:
	free(list);
	closedir(dir);
	return err;
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
		err = loader_mkdir_parents(path);
		if (err)
			goto cleanup;
	}
	for (hook = 0; hook < LOADER_HOOK_COUNT; hook++) {
		if (!loader_hook_available(loader, hook))
			continue;
		link_fds[hook] = bpf_link_create(loader->prog_fds[hook], cgroup_fd,
						 loader_hook_attach_type(hook), NULL);
		if (link_fds[hook] < 0) {
			err = -errno;
			log_error("attaching %s to %s: %s", loader_hook_name(hook), cgroup_path,
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
		fresh = bpf_link_create(loader->prog_fds[hook], cgroup_fd,
					loader_hook_attach_type(hook), NULL);
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
