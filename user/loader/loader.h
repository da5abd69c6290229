/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Loader: the BPF objects (one skeleton), their pins under bpffs, the cgroup
 * links of each sandbox, and the writes into the policy maps.
 *
 * Pin layout under the pin directory:
 *   maps/<map name>              the maps, reused by a restarted daemon
 *   links/<cgroup id>/<hook>     one link per hook per sandbox (and per guard)
 */
#ifndef BFBPF_LOADER_H
#define BFBPF_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include <bpf/bpf.h>

#include "bfbpf.h"
#include "lib/allowset.h"
#include "lib/sniset.h"

enum loader_hook {
	LOADER_HOOK_CONNECT4,
	LOADER_HOOK_CONNECT6,
	LOADER_HOOK_SENDMSG4,
	LOADER_HOOK_SENDMSG6,
	LOADER_HOOK_SOCK_CREATE,
	LOADER_HOOK_EGRESS,
	LOADER_HOOK_RECVMSG4, /* DNS replies show the server asked, not the responder */
	LOADER_HOOK_RECVMSG6,
	LOADER_HOOK_GETPEERNAME4,
	LOADER_HOOK_GETPEERNAME6,
	LOADER_HOOK_SETSOCKOPT, /* multicast joins and source routes */
	LOADER_HOOK_SOCKET_LSM, /* lsm_cgroup/socket_create: every address family */
	LOADER_HOOK_COUNT,
};

struct loader;

const char *loader_hook_name(enum loader_hook hook);
enum bpf_attach_type loader_hook_attach_type(enum loader_hook hook);

/* Load the programs and maps; with a pin directory, reuse and pin the maps there. */
int loader_open(const char *pin_dir, struct loader **out);
void loader_close(struct loader *loader);

/* Every hook but LOADER_HOOK_SOCKET_LSM always is; that one needs the BPF LSM. */
bool loader_hook_available(const struct loader *loader, enum loader_hook hook);
int loader_prog_fd(const struct loader *loader, enum loader_hook hook);
/* The 8-byte tag of our program for a hook (same for every load of this binary). */
const uint8_t *loader_prog_tag(const struct loader *loader, enum loader_hook hook);

/* A generation number no sandbox and no allow entry uses yet. */
uint32_t loader_next_generation(struct loader *loader);

/* Write a set's entries under a generation; on failure nothing of it stays. */
int loader_entries_write(struct loader *loader, uint32_t generation, const struct allowset *set);
/* Delete a set's entries of a generation (missing ones are not an error). */
int loader_entries_delete(struct loader *loader, uint32_t generation, const struct allowset *set);
/* Read back what the maps hold for a generation (for verify). */
int loader_entries_read(struct loader *loader, uint32_t generation, struct allowset *out);
/* Every allow entry of every generation, read in one walk of the maps. */
struct loader_snapshot {
	size_t count, capacity;
	struct loader_snapshot_item *items;
};
int loader_snapshot_take(struct loader *loader, struct loader_snapshot *out);
int loader_snapshot_generation(const struct loader_snapshot *snapshot, uint32_t generation,
			       struct allowset *out);
void loader_snapshot_free(struct loader_snapshot *snapshot);
/* Delete every allow entry whose generation no sandbox uses (after a crash). */
int loader_entries_collect_garbage(struct loader *loader);

/*
 * Names bound to TLS (loader_sni.c): a set's sni_bound and sni_names keys
 * under a generation (on failure none of that generation stays); collect
 * deletes the keys of generations no sandbox uses, and of dead (0: none)
 * whatever uses it (a generation that was never flipped to).
 */
int loader_sni_write(struct loader *loader, uint32_t generation, const struct sniset *set);
int loader_sni_collect(struct loader *loader, uint32_t dead);
/* The sk storage map of the judge's flow states (read through sock_diag). */
int loader_sni_flows_fd(const struct loader *loader);

/*
 * A sandbox's value lives in the cgroup storage of its cgroup: it exists
 * (zeroed, which denies everything) from the first link attached to the
 * last one detached; set fails with -ENOENT outside that span. A set swaps
 * the whole value at once.
 */
int loader_sandbox_set(struct loader *loader, uint64_t cgroup_id,
		       const struct bfbpf_sandbox *value);
int loader_sandbox_get(struct loader *loader, uint64_t cgroup_id, struct bfbpf_sandbox *value);
/*
 * The per-CPU counters of a sandbox, summed (for status). The kernel makes
 * them when the links are attached and frees them at detach (cgroup storage).
 */
int loader_stats_read(struct loader *loader, uint64_t cgroup_id, struct bfbpf_stats *sum);
/* The ring buffer of denial events. */
int loader_events_fd(const struct loader *loader);
/* Every cgroup id with a sandbox value, i.e. with our links attached (caller frees *ids). */
int loader_sandbox_list(struct loader *loader, uint64_t **ids, size_t *count);

/*
 * Attach every hook to the cgroup with links (multi-attach: other programs
 * on the cgroup keep running) and pin them. All or nothing: on failure the
 * links made so far are detached and unpinned.
 */
int loader_links_attach(struct loader *loader, uint64_t cgroup_id, const char *cgroup_path,
			int link_fds[LOADER_HOOK_COUNT]);
/* Open the pinned links of a sandbox (after a restart); missing ones are -1. */
int loader_links_open(struct loader *loader, uint64_t cgroup_id, int link_fds[LOADER_HOOK_COUNT]);
/* Point existing links at this loader's programs (an upgrade after a restart). */
int loader_links_refresh(struct loader *loader, int link_fds[LOADER_HOOK_COUNT]);
/* Re-create (and re-pin) links that are missing or were detached behind our back. */
int loader_links_repair(struct loader *loader, uint64_t cgroup_id, const char *cgroup_path,
			int link_fds[LOADER_HOOK_COUNT], int *repaired);
/* The program a link runs. */
int loader_link_prog_id(int link_fd, uint32_t *prog_id);
/* Detach and unpin; closes the fds and sets them to -1. */
int loader_links_detach(struct loader *loader, uint64_t cgroup_id, int link_fds[LOADER_HOOK_COUNT]);
void loader_links_close(int link_fds[LOADER_HOOK_COUNT]);
/* The cgroup ids with a directory of pinned links (caller frees *ids). */
int loader_links_pinned_ids(struct loader *loader, uint64_t **ids, size_t *count);
/* Does the pin directory hold links of this cgroup id? */
bool loader_links_pinned(struct loader *loader, uint64_t cgroup_id);

/*
 * The registered map (loader_guard.c): a guard defers to a registered cgroup
 * below it. Register only after the cgroup's links and policy are in place;
 * unregister before its links go. Deleting a missing id is not an error.
 */
int loader_registered_add(struct loader *loader, uint64_t cgroup_id);
int loader_registered_delete(struct loader *loader, uint64_t cgroup_id);
bool loader_registered(struct loader *loader, uint64_t cgroup_id);
/* Every registered cgroup id (caller frees *ids). */
int loader_registered_list(struct loader *loader, uint64_t **ids, size_t *count);

#endif /* BFBPF_LOADER_H */
