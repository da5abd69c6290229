// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>

#include "lib/cgroup.h"
#include "lib/log.h"
#include "probe.h"
#include "verify.h"
#include "verify_procs.h"

#define VERIFY_MAX_PROGS 64

static void verify_check_add(json_t *checks, bool *complete, const char *name, bool ok,
			     const char *detail)
{
	json_array_append_new(
		checks, json_pack("{s:s, s:b, s:s}", "name", name, "ok", ok, "detail", detail));
	if (!ok)
		*complete = false;
}

static void verify_tag_format(const uint8_t tag[BPF_TAG_SIZE], char out[2 * BPF_TAG_SIZE + 1])
{
	for (int i = 0; i < BPF_TAG_SIZE; i++)
		snprintf(out + 2 * i, 3, "%02x", tag[i]);
}

/* Is a program with our tag attached directly to the cgroup for this hook? */
static void verify_hook(struct sandbox_registry *registry, struct sandbox *sandbox, int cgroup_fd,
			enum loader_hook hook, json_t *checks, bool *complete)
{
	const uint8_t *ours = loader_prog_tag(registry->loader, hook);
	__u32 ids[VERIFY_MAX_PROGS], flags[VERIFY_MAX_PROGS], count = VERIFY_MAX_PROGS;
	struct bpf_prog_query_opts query = {.sz = sizeof(query)};
	char name[64], detail[256], tag[2 * BPF_TAG_SIZE + 1];
	bool found = false;
	uint32_t link_prog_id;

	snprintf(name, sizeof(name), "attached:%s", loader_hook_name(hook));
	verify_tag_format(ours, tag);
	if (cgroup_fd < 0) {
		snprintf(detail, sizeof(detail), "cannot open cgroup %s", sandbox->path);
		verify_check_add(checks, complete, name, false, detail);
		return;
	}
	/* BPF_LSM_CGROUP answers only a query that also takes each program's attach flags. */
	query.prog_ids = ids;
	query.prog_attach_flags = flags;
	query.prog_cnt = count;
	if (bpf_prog_query_opts(cgroup_fd, loader_hook_attach_type(hook), &query)) {
		snprintf(detail, sizeof(detail), "querying the cgroup: %s", strerror(errno));
		verify_check_add(checks, complete, name, false, detail);
		return;
	}
	/* Our link's program when the link is known, else any program with our tag. */
	if (loader_link_prog_id(sandbox->link_fds[hook], &link_prog_id))
		link_prog_id = 0;
	count = query.prog_cnt;
	for (__u32 i = 0; i < count && !found; i++) {
		struct bpf_prog_info info = {0};
		__u32 info_size = sizeof(info);
		int fd;

		if (link_prog_id && ids[i] != link_prog_id)
			continue;
		fd = bpf_prog_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &info_size) &&
		    !memcmp(info.tag, ours, BPF_TAG_SIZE)) {
			found = true;
			snprintf(detail, sizeof(detail), "program id %u (tag %s) attached", ids[i],
				 tag);
		}
		close(fd);
	}
	if (!found)
		snprintf(detail, sizeof(detail),
			 "no bfbpf program (tag %s) attached to the cgroup for %s (%u other)", tag,
			 loader_hook_name(hook), count);
	verify_check_add(checks, complete, name, found, detail);
}

static void verify_policy(struct sandbox_registry *registry, struct sandbox *sandbox,
			  json_t *checks, bool *complete)
{
	struct bfbpf_sandbox value, expected;
	char detail[256], want[17], have[17];
	bool ok;

	if (loader_sandbox_get(registry->loader, sandbox->cgroup_id, &value)) {
		verify_check_add(
			checks, complete, "policy", false,
			"no policy value in the kernel for this cgroup (no link attached?)");
		return;
	}
	sandbox_digest_format(sandbox->digest, want);
	sandbox_digest_format(value.digest, have);
	if (sandbox->policy_known)
		sandbox_value(sandbox, &sandbox->policy, sandbox->generation, sandbox->digest,
			      &expected);
	ok = value.generation == sandbox->generation && value.digest == sandbox->digest &&
	     value.cgroup_id == sandbox->cgroup_id &&
	     (!sandbox->policy_known ||
	      (value.flags == expected.flags && value.dns_port == expected.dns_port));
	if (!sandbox->policy_known) {
		ok = false;
		snprintf(detail, sizeof(detail),
			 "the policy applied is unknown to the daemon (state lost); update it");
	} else if (ok) {
		snprintf(detail, sizeof(detail), "generation %u, digest %s", value.generation,
			 have);
	} else {
		snprintf(detail, sizeof(detail),
			 "maps hold generation %u digest %s flags %#x; expected generation %u "
			 "digest %s",
			 value.generation, have, value.flags, sandbox->generation, want);
	}
	verify_check_add(checks, complete, "policy", ok, detail);
}

static void verify_entries(struct sandbox_registry *registry,
			   const struct loader_snapshot *snapshot, struct sandbox *sandbox,
			   json_t *checks, bool *complete)
{
	struct allowset held = {0}, expected = {0}, missing = {0}, extra = {0};
	char detail[256];
	bool ok = false;

	if (!sandbox->policy_known) {
		verify_check_add(checks, complete, "maps", false, "policy unknown; cannot compare");
		return;
	}
	if (sandbox_expected_allowset(registry, sandbox, &expected) ||
	    loader_snapshot_generation(snapshot, sandbox->generation, &held) ||
	    allowset_diff(&held, &expected, &missing, &extra)) {
		snprintf(detail, sizeof(detail), "cannot read the allow maps: %s", strerror(errno));
	} else if (missing.count || extra.count) {
		snprintf(detail, sizeof(detail),
			 "%zu entries of the policy are missing from the maps, %zu entries in the "
			 "maps are not in the policy",
			 missing.count, extra.count);
	} else {
		ok = true;
		snprintf(detail, sizeof(detail), "%zu entries, as the policy resolves", held.count);
	}
	verify_check_add(checks, complete, "maps", ok, detail);
	allowset_free(&held);
	allowset_free(&expected);
	allowset_free(&missing);
	allowset_free(&extra);
}

/*
 * What the processes of a restrictive sandbox hold and could do (sockets
 * opened before the relock, capabilities over their network, a way out of
 * the cgroup): checked on every kernel, BPF LSM or not.
 */
static void verify_processes(struct sandbox_registry *registry, struct sandbox *sandbox,
			     json_t *checks, bool *complete)
{
	struct verify_procs_plan plan = {
		.cgroup_path = sandbox->path,
		.netns_fd = sandbox->netns_fd,
		.lsm_available = loader_hook_available(registry->loader, LOADER_HOOK_SOCKET_LSM),
	};

	if (sandbox->policy_known && sandbox->policy.mode == POLICY_MODE_PUBLIC)
		return; /* public holds anything: nothing is restricted */
	verify_procs_checks(&plan, checks, complete);
}

/*
 * AF_VSOCK passes no address hook. Where BPF LSM runs, our lsm_cgroup program
 * refuses it (attached:socket_lsm); elsewhere a live transport is a path out
 * that only the operator can accept (--accept-vsock).
 */
static void verify_vsock(struct sandbox_registry *registry, struct sandbox *sandbox, json_t *checks,
			 bool *complete)
{
	char transport[128], detail[512];
	bool ok = true;

	if (!registry->judges_vsock ||
	    (sandbox->policy_known && sandbox->policy.mode == POLICY_MODE_PUBLIC))
		return;
	if (loader_hook_available(registry->loader, LOADER_HOOK_SOCKET_LSM)) {
		snprintf(detail, sizeof(detail),
			 "BPF LSM refuses AF_VSOCK to the sandbox (lsm_cgroup/socket_create)");
	} else if (!verify_vsock_transport(transport, sizeof(transport))) {
		snprintf(detail, sizeof(detail), "no vsock transport on this host");
	} else if (registry->accept_vsock) {
		snprintf(detail, sizeof(detail),
			 "WARNING: a vsock transport is live (%s) and nothing refuses AF_VSOCK to "
			 "the sandbox (no BPF LSM); accepted by the operator (--accept-vsock)",
			 transport);
	} else {
		ok = false;
		snprintf(detail, sizeof(detail),
			 "a vsock transport is live (%s) and nothing refuses AF_VSOCK to the "
			 "sandbox (no BPF LSM): a path to the hypervisor or the host; refuse it "
			 "with seccomp (bfbpf run does) and start the daemon with --accept-vsock, "
			 "or remove the transport",
			 transport);
	}
	verify_check_add(checks, complete, "vsock", ok, detail);
}

/* Does the cgroup enable controllers for its children (cgroup.subtree_control not empty)? */
static bool verify_has_controllers(const char *path)
{
	char file[PATH_MAX], text[256] = "";
	FILE *stream;

	snprintf(file, sizeof(file), "%s/cgroup.subtree_control", path);
	stream = fopen(file, "re");
	if (!stream)
		return false;
	if (!fgets(text, sizeof(text), stream))
		text[0] = '\0';
	fclose(stream);
	return text[0] && text[0] != '\n';
}

static void verify_probes(struct sandbox_registry *registry, struct sandbox *sandbox,
			  json_t *checks, bool *complete)
{
	struct probe_plan plan = {
		.cgroup_path = sandbox->path,
		.netns_fd = sandbox->netns_fd,
		.policy = sandbox->policy_known ? &sandbox->policy : NULL,
		.allowed = &sandbox->applied,
		.lsm_available = loader_hook_available(registry->loader, LOADER_HOOK_SOCKET_LSM),
	};
	char detail[PATH_MAX + 64], child[PATH_MAX];

	if (sandbox->netns_path && sandbox->netns_fd < 0) {
		snprintf(detail, sizeof(detail), "network namespace %s is gone",
			 sandbox->netns_path);
		verify_check_add(checks, complete, "probes", false, detail);
		return;
	}
	/*
	 * A guard is probed from a new cgroup below it: unregistered, as a new
	 * container's is. So is a sandbox that enables controllers for its
	 * children (a parent cgroup under which a runtime made containers): such
	 * a cgroup may hold no process itself (cgroup v2's no-internal-process
	 * rule), and its programs judge the new cgroup below it as its own.
	 */
	child[0] = '\0';
	if (sandbox->guard || verify_has_controllers(sandbox->path)) {
		snprintf(child, sizeof(child), "%s/bfbpf-verify-%d", sandbox->path, (int)getpid());
		if (mkdir(child, 0700) && errno != EEXIST) {
			snprintf(detail, sizeof(detail), "cannot make a cgroup below the guard: %s",
				 strerror(errno));
			verify_check_add(checks, complete, "probes", false, detail);
			return;
		}
		plan.cgroup_path = child;
	}
	if (probe_run(&plan, checks, complete)) {
		snprintf(detail, sizeof(detail), "cannot start the probe process: %s",
			 strerror(errno));
		verify_check_add(checks, complete, "probes", false, detail);
	}
	verify_dns(registry, sandbox, plan.cgroup_path, checks, complete);
	if (child[0] && cgroup_kill_and_remove(child))
		log_warn("%s: cannot remove the probes' cgroup %s", sandbox->path, child);
}

json_t *verify_sandbox(struct sandbox_registry *registry, struct sandbox *sandbox, bool with_probes,
		       const struct loader_snapshot *snapshot)
{
	struct loader_snapshot own = {0};
	json_t *checks = json_array();
	bool complete = true;
	int cgroup_fd = open(sandbox->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	for (int hook = 0; hook < LOADER_HOOK_COUNT; hook++)
		if (loader_hook_available(registry->loader, hook))
			verify_hook(registry, sandbox, cgroup_fd, hook, checks, &complete);
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	verify_processes(registry, sandbox, checks, &complete);
	verify_policy(registry, sandbox, checks, &complete);
	/* A public sandbox enforces its policy, but it is not locked down (the periodic
	 * checks, which look for breakage, leave this out: public is no breakage). */
	if (with_probes && sandbox->policy_known && sandbox->policy.mode == POLICY_MODE_PUBLIC)
		verify_check_add(checks, &complete, "restrictive", false,
				 "network_mode is public: nothing is restricted");
	/* Deletes of replaced generations finish first: a walk of a map mid-delete may repeat keys.
	 */
	if (!snapshot)
		sandbox_registry_quiesce(registry);
	if (!snapshot && loader_snapshot_take(registry->loader, &own))
		verify_check_add(checks, &complete, "maps", false, "cannot read the allow maps");
	else
		verify_entries(registry, snapshot ? snapshot : &own, sandbox, checks, &complete);
	loader_snapshot_free(&own);
	/* A property of the host, told at start, not a breakage to log on every tick. */
	if (with_probes)
		verify_vsock(registry, sandbox, checks, &complete);
	if (with_probes)
		verify_probes(registry, sandbox, checks, &complete);
	return json_pack("{s:b, s:o}", "lockdown_complete", complete, "checks", checks);
}

/* The names of the failed checks, for a log line. */
static void verify_failed_names(json_t *verdict, char *out, size_t size)
{
	json_t *check;
	size_t i, used = 0;

	out[0] = '\0';
	json_array_foreach(json_object_get(verdict, "checks"), i, check)
	{
		if (json_is_true(json_object_get(check, "ok")) || used >= size)
			continue;
		used += snprintf(out + used, size - used, "%s%s", used ? ", " : "",
				 json_string_value(json_object_get(check, "name")));
	}
}

int verify_registry_periodic(struct sandbox_registry *registry)
{
	struct loader_snapshot snapshot;
	time_t now = time(NULL);
	int broken = 0;

	sandbox_registry_quiesce(registry);
	if (loader_snapshot_take(registry->loader, &snapshot)) {
		log_error("periodic verification: cannot read the allow maps");
		return -EIO;
	}
	for (size_t i = 0; i < registry->count; i++) {
		struct sandbox *sandbox = registry->items[i];
		json_t *verdict = verify_sandbox(registry, sandbox, false, &snapshot);
		bool ok = json_is_true(json_object_get(verdict, "lockdown_complete"));
		char failed[512];

		if (!ok) {
			broken++;
			verify_failed_names(verdict, failed, sizeof(failed));
			/* Loud on every tick while broken: this is a sandbox that may be open. */
			log_error("LOCKDOWN BROKEN: %s: failed checks: %s", sandbox->path, failed);
			/* A cached full verdict must not outlive a failure seen since. */
			free(sandbox->last_verify);
			sandbox->last_verify = NULL;
		} else if (sandbox->last_check_at && !sandbox->last_check_ok) {
			log_info("lockdown of %s is complete again", sandbox->path);
		}
		sandbox->last_check_ok = ok;
		sandbox->last_check_at = now;
		json_decref(verdict);
	}
	loader_snapshot_free(&snapshot);
	return broken;
}
