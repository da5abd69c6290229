// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Sandboxes that outlive the daemon: their state files (path, netns, policy,
 * learned names), their re-adoption from the pinned maps after a restart, and
 * forgetting those whose cgroup was removed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/background.h"
#include "lib/cgroup.h"
#include "lib/log.h"
#include "dns/resolver.h"
#include "events.h"
#include "sandbox.h"
#include "guard.h"
#include "sandbox_netns.h"
#include "sandbox_internal.h"

static void sandbox_state_path(const struct sandbox_registry *registry, uint64_t cgroup_id,
			       char *out, size_t size)
{
	snprintf(out, size, "%s/%" PRIu64 ".json", registry->state_dir, cgroup_id);
}

/*
 * How long a state file may lag its sandbox when updates come in a burst: it
 * is then written at most once every this many milliseconds (the latest
 * state), not once an update. A write after a quiet spell is not delayed.
 */
#define SANDBOX_STATE_DELAY_MS 100

/* What a state file holds, copied: the worker writes it while the sandbox lives on. */
struct sandbox_state_job {
	char *file;
	char *cgroup;
	char *netns;
	bool has_policy;
	struct policy policy;
	json_t *learned;
	json_t *runtime; /* runtime_network addresses (sandbox_netns.c) */
};

static void sandbox_state_job_free(void *arg)
{
	struct sandbox_state_job *job = arg;

	free(job->file);
	free(job->cgroup);
	free(job->netns);
	if (job->has_policy)
		policy_free(&job->policy);
	json_decref(job->learned);
	json_decref(job->runtime);
	free(job);
}

/* Atomic (write then rename): a crash leaves the old state or the new, never half. */
static void sandbox_state_job_write(void *arg)
{
	struct sandbox_state_job *job = arg;
	char temporary[PATH_MAX + 8];
	json_t *state;
	int err = 0;

	snprintf(temporary, sizeof(temporary), "%s.tmp", job->file);
	state = json_pack("{s:s, s:s, s:o, s:O, s:O}", "cgroup", job->cgroup, "netns",
			  job->netns ? job->netns : "", "policy", policy_to_json(&job->policy),
			  "learned", job->learned, "runtime", job->runtime);
	if (!state)
		err = -ENOMEM;
	else if (json_dump_file(state, temporary, JSON_COMPACT | JSON_SORT_KEYS) ||
		 rename(temporary, job->file))
		err = errno ? -errno : -EIO;
	json_decref(state);
	if (err)
		log_error("writing state %s: %s", job->file, strerror(-err));
	sandbox_state_job_free(job);
}

static void sandbox_state_job_remove(void *arg)
{
	struct sandbox_state_job *job = arg;

	unlink(job->file);
	sandbox_state_job_free(job);
}

static struct sandbox_state_job *sandbox_state_job_new(const struct sandbox_registry *registry,
						       uint64_t cgroup_id)
{
	struct sandbox_state_job *job = calloc(1, sizeof(*job));

	if (job && asprintf(&job->file, "%s/%" PRIu64 ".json", registry->state_dir, cgroup_id) < 0)
		job->file = NULL;
	if (job && !job->file) {
		free(job);
		return NULL;
	}
	return job;
}

int sandbox_state_write(const struct sandbox_registry *registry, struct sandbox *sandbox)
{
	uint64_t now = (uint64_t)log_clock_ms();
	struct sandbox_state_job *job;
	unsigned int delay = 0;
	int err = -ENOMEM;

	if (!registry->state_dir || !sandbox->policy_known)
		return 0;
	job = sandbox_state_job_new(registry, sandbox->cgroup_id);
	if (!job)
		goto cleanup;
	job->cgroup = strdup(sandbox->path);
	job->netns = sandbox->netns_path ? strdup(sandbox->netns_path) : NULL;
	job->learned = json_array();
	job->runtime = sandbox_runtime_to_json(sandbox);
	if (!job->cgroup || (sandbox->netns_path && !job->netns) || !job->learned || !job->runtime)
		goto cleanup;
	for (size_t i = 0; i < sandbox->learned_count; i++)
		if (json_array_append_new(job->learned, json_string(sandbox->learned[i].name)))
			goto cleanup;
	if (policy_copy(&sandbox->policy, &job->policy))
		goto cleanup;
	job->has_policy = true;
	/* Formatting a large policy costs milliseconds: not the loop's, and not every update's. */
	if (now < sandbox->state_due_ms) /* one is waiting: this one takes its place and time */
		delay = (unsigned int)(sandbox->state_due_ms - now);
	else if (sandbox->state_due_ms && now < sandbox->state_due_ms + SANDBOX_STATE_DELAY_MS)
		delay = (unsigned int)(sandbox->state_due_ms + SANDBOX_STATE_DELAY_MS - now);
	if (now >= sandbox->state_due_ms)
		sandbox->state_due_ms = now + delay;
	background_submit(registry->background, sandbox_state_job_write, sandbox_state_job_free,
			  job, sandbox->cgroup_id, 0, delay);
	return 0;
cleanup:
	if (job)
		sandbox_state_job_free(job);
	log_error("writing the state of %s: %s", sandbox->path, strerror(-err));
	return err;
}

void sandbox_state_remove(const struct sandbox_registry *registry, uint64_t cgroup_id)
{
	struct sandbox_state_job *job;

	if (!registry->state_dir)
		return;
	job = sandbox_state_job_new(registry, cgroup_id);
	if (!job) {
		log_error("removing the state of cgroup %" PRIu64 ": out of memory", cgroup_id);
		return;
	}
	/* Queued like the writes (and replacing one still waiting), so it comes after them. */
	background_submit(registry->background, sandbox_state_job_remove, sandbox_state_job_free,
			  job, cgroup_id, 0, 0);
}

/* The state file of an adopted sandbox: its path and policy. */
static int sandbox_state_read(struct sandbox_registry *registry, struct sandbox *sandbox)
{
	char path[PATH_MAX], err_text[256];
	json_error_t json_error;
	json_t *state, *policy, *item;
	const char *cgroup, *netns;
	int err = -EINVAL;
	size_t i;

	if (!registry->state_dir)
		return -ENOENT;
	sandbox_state_path(registry, sandbox->cgroup_id, path, sizeof(path));
	state = json_load_file(path, 0, &json_error);
	if (!state)
		return -ENOENT;
	if (json_unpack(state, "{s:s, s:o}", "cgroup", &cgroup, "policy", &policy))
		goto cleanup;
	err = sandbox_set_path(&sandbox->path, cgroup);
	if (err)
		goto cleanup;
	netns = json_string_value(json_object_get(state, "netns"));
	if (netns && netns[0] && sandbox_netns_open(sandbox, netns)) {
		/* Kept by name: verify reports it gone rather than probing elsewhere. */
		err = sandbox_set_path(&sandbox->netns_path, netns);
		if (err)
			goto cleanup;
		log_warn("sandbox %s: its network namespace %s is gone", cgroup, netns);
	}
	err = policy_from_json(policy, &sandbox->policy, err_text, sizeof(err_text));
	if (err)
		goto cleanup;
	sandbox->policy_known = true;
	json_array_foreach(json_object_get(state, "learned"), i, item)
	{
		bool added;

		/* The maps still hold their addresses: keep them until they are re-resolved. */
		if (registry->resolver && json_is_string(item) &&
		    sandbox_learn(registry, sandbox, json_string_value(item), &added))
			log_warn("%s: cannot keep the learned name %s", cgroup,
				 json_string_value(item));
	}
	/* What the runtime's resolver answered: the maps hold it, and connections use it. */
	sandbox_runtime_from_json(sandbox, json_object_get(state, "runtime"));
cleanup:
	json_decref(state);
	return err;
}

/*
 * The responder comes back on its old port if it can (sandboxes keep using
 * it); without a known policy too, refusing every name until an update gives
 * one. Not where the sandbox's network namespace is gone or not yet known.
 */
static void sandbox_adopt_responder(struct sandbox_registry *registry, struct sandbox *sandbox,
				    const struct bfbpf_sandbox *value)
{
	struct bfbpf_sandbox fresh = *value;
	uint32_t own = BFBPF_SANDBOX_DNS_V6 | BFBPF_SANDBOX_EVENTS;

	sandbox->events = registry->events_enabled;
	if (!registry->dns)
		return;
	if (sandbox->netns_unknown) {
		log_warn("%s: no process tells its network namespace; its DNS responder starts "
			 "when one does",
			 sandbox->path[0] ? sandbox->path : "(unknown path)");
	} else if (sandbox->netns_path && sandbox->netns_fd < 0) {
		log_warn("%s: its network namespace is gone; no DNS responder", sandbox->path);
	} else if (sandbox_dns_start(registry, sandbox, value->dns_port)) {
		log_error("%s: cannot restart its DNS responder; its DNS queries fail",
			  sandbox->path);
	}
	/* Without the policy, only the responder's fields change: the maps keep deciding. */
	if (sandbox->policy_known) {
		sandbox_value(sandbox, &sandbox->policy, sandbox->generation, sandbox->digest,
			      &fresh);
	} else {
		fresh.dns_port = sandbox->dns_port;
		fresh.flags = (value->flags & ~own) | (sandbox->dns_v6 ? BFBPF_SANDBOX_DNS_V6 : 0) |
			      (sandbox->events ? BFBPF_SANDBOX_EVENTS : 0);
	}
	if ((fresh.dns_port != value->dns_port || fresh.flags != value->flags) &&
	    loader_sandbox_set(registry->loader, sandbox->cgroup_id, &fresh))
		log_error("%s: cannot record its responder's new port", sandbox->path);
}

/*
 * Does the state file's policy match what the maps were programmed with?
 * A daemon before policy_digest()'s binary form wrote the digest of the
 * canonical text: such a sandbox is recognised and its value gets today's
 * digest (one write; its entries stay as they are), so an upgrade keeps
 * every policy known. Returns 0 when it matches (sandbox->digest is then
 * today's digest of the policy).
 */
static int sandbox_adopt_digest(struct sandbox_registry *registry, struct sandbox *sandbox,
				struct bfbpf_sandbox *value)
{
	struct bfbpf_sandbox upgraded = *value;
	uint64_t digest = policy_digest(&sandbox->policy);
	int err;

	if (digest == value->digest)
		return 0;
	if (policy_digest_legacy(&sandbox->policy) != value->digest)
		return -ESTALE;
	upgraded.digest = digest;
	err = loader_sandbox_set(registry->loader, sandbox->cgroup_id, &upgraded);
	if (err)
		return err;
	*value = upgraded;
	log_info("%s: its digest is now in the binary form (policy unchanged)", sandbox->path);
	return 0;
}

static void sandbox_adopt_recover(struct sandbox *sandbox)
{
	int err = sandbox_recover_path(sandbox);

	sandbox->netns_unknown = true;
	if (err) {
		log_warn("sandbox %" PRIu64 ": no cgroup with this id under the cgroup2 mount: %s; "
			 "a request that names it will tell its path",
			 sandbox->cgroup_id, strerror(-err));
		return;
	}
	log_info("sandbox %" PRIu64 " has no state file: its cgroup is %s", sandbox->cgroup_id,
		 sandbox->path);
	err = sandbox_recover_netns(sandbox);
	if (err)
		log_warn("%s: cannot tell its network namespace yet: %s", sandbox->path,
			 err == -ESRCH ? "it has no process" : strerror(-err));
}

static int sandbox_adopt_one(struct sandbox_registry *registry, uint64_t cgroup_id)
{
	struct sandbox *sandbox = sandbox_new();
	struct bfbpf_sandbox value;
	bool known = false;
	int err;

	if (!sandbox)
		return -ENOMEM;
	sandbox->cgroup_id = cgroup_id;
	err = loader_sandbox_get(registry->loader, cgroup_id, &value);
	if (err)
		goto cleanup;
	sandbox->generation = value.generation;
	sandbox->guard = value.flags & BFBPF_SANDBOX_GUARD; /* the role lives in the value */
	sandbox->guard_level = value.guard_level;
	if (loader_links_open(registry->loader, cgroup_id, sandbox->link_fds))
		log_warn("sandbox %" PRIu64 ": some links are not pinned; verify will say which",
			 cgroup_id);
	if (sandbox_state_read(registry, sandbox) == 0)
		known = sandbox_adopt_digest(registry, sandbox, &value) == 0;
	sandbox->digest = value.digest;
	if (!known) {
		if (sandbox->policy_known)
			policy_free(&sandbox->policy);
		sandbox->policy_known = false;
		log_warn("sandbox %" PRIu64 ": its policy state is lost or stale; it keeps "
			 "enforcing what the maps hold until updated",
			 cgroup_id);
	}
	/* No state file: the path from the id, the netns from a process of the cgroup. */
	if (!sandbox->path[0])
		sandbox_adopt_recover(sandbox);
	/* What the maps hold is what update must later remove. */
	err = loader_entries_read(registry->loader, value.generation, &sandbox->applied);
	if (err)
		goto cleanup;
	sandbox->since = time(NULL);
	/* Its names resolve afresh; the maps keep their addresses until they have answered. */
	if (registry->resolver && sandbox->policy_known &&
	    resolver_policy_ref(registry->resolver, &sandbox->policy))
		log_warn("sandbox %" PRIu64 ": cannot track its names", cgroup_id);
	sandbox_adopt_responder(registry, sandbox, &value);
	err = sandbox_registry_add(registry, sandbox);
	if (err)
		goto cleanup;
	log_info("re-adopted %s (cgroup id %" PRIu64 ", generation %u)",
		 sandbox->path[0] ? sandbox->path : "(unknown path)", cgroup_id, value.generation);
	return 0;
cleanup:
	sandbox_free(sandbox);
	return err;
}

static bool sandbox_id_listed(const uint64_t *ids, size_t count, uint64_t id)
{
	for (size_t i = 0; i < count; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/*
 * Pinned links with no sandbox value: their cgroup was removed while no
 * daemon ran (the kernel then detaches its programs and frees its storage).
 * Unpin them and forget the state, as the reaper does for a live daemon.
 */
static int sandbox_forget_removed(struct sandbox_registry *registry, const uint64_t *live,
				  size_t live_count)
{
	uint64_t *pinned = NULL;
	size_t count = 0;
	int err;

	err = loader_links_pinned_ids(registry->loader, &pinned, &count);
	if (err)
		return err;
	for (size_t i = 0; i < count; i++) {
		int link_fds[LOADER_HOOK_COUNT];

		if (sandbox_id_listed(live, live_count, pinned[i]))
			continue;
		log_warn("cgroup id %" PRIu64 " has pinned links but no policy in the kernel: "
			 "its cgroup was removed (or every link detached) while no daemon ran; "
			 "removing its pins and state (attach it again if it still exists)",
			 pinned[i]);
		loader_links_open(registry->loader, pinned[i], link_fds);
		if (loader_links_detach(registry->loader, pinned[i], link_fds))
			log_warn("cgroup id %" PRIu64 ": could not remove all its pins", pinned[i]);
		sandbox_state_remove(registry, pinned[i]);
	}
	free(pinned);
	return 0;
}

int sandbox_registry_adopt(struct sandbox_registry *registry)
{
	uint64_t *ids = NULL;
	size_t count = 0;
	int err;

	err = loader_sandbox_list(registry->loader, &ids, &count);
	if (err)
		return err;
	for (size_t i = 0; i < count; i++) {
		err = sandbox_adopt_one(registry, ids[i]);
		if (err) {
			log_error("cannot re-adopt sandbox %" PRIu64 ": %s", ids[i],
				  strerror(-err));
			goto cleanup;
		}
	}
	err = sandbox_forget_removed(registry, ids, count);
	if (!err)
		err = loader_entries_collect_garbage(registry->loader);
	if (!err)
		err = guard_registrations_sync(registry);
	sandbox_registry_reap(registry);
cleanup:
	free(ids);
	return err;
}

static bool sandbox_cgroup_gone(const struct sandbox *sandbox)
{
	uint64_t id;

	if (!sandbox->path[0])
		return false; /* unknown path: keep it, an operator can detach it */
	return cgroup_id_of_path(sandbox->path, &id) == -ENOENT ||
	       (cgroup_id_of_path(sandbox->path, &id) == 0 && id != sandbox->cgroup_id);
}

int sandbox_registry_reap(struct sandbox_registry *registry)
{
	struct sandbox_error error;
	int reaped = 0;

	for (size_t i = registry->count; i-- > 0;) {
		struct sandbox *sandbox = registry->items[i];

		if (!sandbox_cgroup_gone(sandbox))
			continue;
		log_info("cgroup %s was removed; forgetting its sandbox%s", sandbox->path,
			 sandbox->container_id[0] ? " (its container's record stays)" : "");
		registry->cgroups_gone++;
		events_record_lifecycle(registry->events, "cgroup_gone", sandbox,
					sandbox->container_id);
		if (!sandbox_detach(registry, sandbox, &error))
			reaped++;
	}
	return reaped;
}
