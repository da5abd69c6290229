/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What loader.c, loader_entries.c and loader_links.c share; not for other modules. */
#ifndef BFBPF_LOADER_INTERNAL_H
#define BFBPF_LOADER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/bpf.h>

#include "loader.h"

struct loader {
	struct bfbpf_bpf *skel;
	char *pin_dir; /* NULL: nothing pinned */
	int prog_fds[LOADER_HOOK_COUNT];
	uint8_t prog_tags[LOADER_HOOK_COUNT][BPF_TAG_SIZE];
	uint32_t next_generation;
	bool has_lsm; /* the kernel runs lsm_cgroup programs */
};

int loader_mkdir_parents(const char *path);
/* The highest generation in any map, so that a restarted daemon never reuses one. */
int loader_scan_generations(struct loader *loader);

/* The keys of a map keyed by cgroup id (u64), in a new array (free it). */
int loader_map_keys(int fd, uint64_t **ids, size_t *count);

#endif /* BFBPF_LOADER_INTERNAL_H */
