// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Loader: the registered map. A guard above a cgroup defers to the programs
 * of a registered cgroup between the socket's cgroup and itself
 * (bpf/lib/guard.h). The order of the callers is the safety property: a
 * cgroup is registered only once its links and its policy are in place, and
 * unregistered before its links go.
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bfbpf.skel.h"
#include "loader.h"
#include "loader_internal.h"

int loader_registered_add(struct loader *loader, uint64_t cgroup_id)
{
	uint8_t one = 1;

	if (bpf_map_update_elem(bpf_map__fd(loader->skel->maps.registered), &cgroup_id, &one,
				BPF_ANY))
		return -errno;
	return 0;
}

int loader_registered_delete(struct loader *loader, uint64_t cgroup_id)
{
	if (bpf_map_delete_elem(bpf_map__fd(loader->skel->maps.registered), &cgroup_id) &&
	    errno != ENOENT)
		return -errno;
	return 0;
}

bool loader_registered(struct loader *loader, uint64_t cgroup_id)
{
	uint8_t value;

	return !bpf_map_lookup_elem(bpf_map__fd(loader->skel->maps.registered), &cgroup_id, &value);
}

int loader_registered_list(struct loader *loader, uint64_t **ids, size_t *count)
{
	return loader_map_keys(bpf_map__fd(loader->skel->maps.registered), ids, count);
}
