// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The registry of sandboxes (and guards) and their ordering rules. long: the
 * one order of attach, update and detach (entries, links, policy,
 * registration, and back) reads best in one file.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/nsfs.h>

#include "lib/background.h"
#include "lib/cgroup.h"
#include "lib/log.h"
#include "events.h"
#include "dns/resolver.h"
#include "dns/responder.h"
#include "sandbox.h"
#include "guard.h"
#include "sandbox_internal.h"
#include "sandbox_netns.h"

static void sandbox_error_set(struct sandbox_error *error, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void sandbox_error_set(struct sandbox_error *error, const char *code, const char *fmt, ...)
{
	va_list args;

	error->code = code;
	va_start(args, fmt);
	vsnprintf(error->message, sizeof(error->message), fmt, args);
	va_end(args);
}

/* Paths are kept at their length, not PATH_MAX: a thousand sandboxes keep two each. */
int sandbox_set_path(char **field, const char *text)
{
	char *copy = strdup(text);

	if (!copy)
		return -ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

void sandbox_value(const struct sandbox *sandbox, const struct policy *policy, uint32_t generation,
		   uint64_t digest, struct bfbpf_sandbox *value)
{
	memset(value, 0, sizeof(*value));
	value->generation = generation;
	value->flags = sandbox_flags(policy) | (sandbox->dns_v6 ? BFBPF_SANDBOX_DNS_V6 : 0) |
		       (sandbox->events ? BFBPF_SANDBOX_EVENTS : 0) |
		       (sandbox->guard ? BFBPF_SANDBOX_GUARD : 0);
	value->digest = digest;
	value->cgroup_id = sandbox->cgroup_id;
	value->dns_port = sandbox->dns_port;
	value->guard_level = sandbox->guard_level;
}

uint32_t sandbox_flags(const struct policy *policy)
{
	uint32_t flags = 0;

	if (policy->mode == POLICY_MODE_PUBLIC)
		flags |= BFBPF_SANDBOX_PUBLIC;
	if (policy->allow_loopback)
		flags |= BFBPF_SANDBOX_ALLOW_LOOPBACK;
	if (policy_sni_enforced(policy))
		flags |= BFBPF_SANDBOX_SNI;
	return flags;
}

void sandbox_digest_format(uint64_t digest, char out[17])
{
	snprintf(out, 17, "%016" PRIx64, digest);
}

int sandbox_registry_init(struct sandbox_registry *registry, struct loader *loader,
			  const char *state_dir)
{
	memset(registry, 0, sizeof(*registry));
	registry->loader = loader;
	registry->state_dir = state_dir;
	if (state_dir && mkdir(state_dir, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

struct sandbox *sandbox_find(struct sandbox_registry *registry, uint64_t cgroup_id)
{
	for (size_t i = 0; i < registry->count; i++)
		if (registry->items[i]->cgroup_id == cgroup_id)
			return registry->items[i];
	return NULL;
}

int sandbox_registry_add(struct sandbox_registry *registry, struct sandbox *sandbox)
{
	struct sandbox **grown = reallocarray(registry->items, registry->count + 1, sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	registry->items = grown;
	registry->items[registry->count++] = sandbox;
	return 0;
}

static void sandbox_registry_remove(struct sandbox_registry *registry, struct sandbox *sandbox)
{
	for (size_t i = 0; i < registry->count; i++) {
		if (registry->items[i] != sandbox)
			continue;
		registry->items[i] = registry->items[--registry->count];
		return;
	}
}

struct sandbox *sandbox_new(void)
{
	struct sandbox *sandbox = calloc(1, sizeof(*sandbox));

	if (!sandbox)
		return NULL;
	for (int hook = 0; hook < LOADER_HOOK_COUNT; hook++)
		sandbox->link_fds[hook] = -1;
	sandbox->netns_fd = -1;
	sandbox->path = strdup("");
	if (!sandbox->path) {
		free(sandbox);
		return NULL;
	}
	return sandbox;
}

void sandbox_free(struct sandbox *sandbox)
{
	if (!sandbox)
		return;
	responder_close(sandbox->responder);
	free(sandbox->learned);
	free(sandbox->runtime);
	loader_links_close(sandbox->link_fds);
	if (sandbox->netns_fd >= 0)
		close(sandbox->netns_fd);
	free(sandbox->last_verify);
	free(sandbox->path);
	free(sandbox->netns_path);
	if (sandbox->policy_known)
		policy_free(&sandbox->policy);
	allowset_free(&sandbox->applied);
	free(sandbox);
}

static bool path_within(const char *inner, const char *outer)
{
	size_t length = strlen(outer);

	return !strncmp(inner, outer, length) && inner[length] == '/';
}

/* The sandbox's network namespace, held open for the probes (and the DNS responder). */
int sandbox_netns_open(struct sandbox *sandbox, const char *netns)
{
	int fd = open(netns, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWNET) {
		close(fd);
		return -EINVAL;
	}
	if (sandbox_set_path(&sandbox->netns_path, netns)) {
		close(fd);
		return -ENOMEM;
	}
	sandbox->netns_fd = fd;
	return 0;
}

/*
 * Replaced generations still queued for deletion take room in the maps:
 * when the maps are full while some are, wait for them and try once more.
 */
static int sandbox_entries_write(struct sandbox_registry *registry, uint32_t generation,
				 const struct allowset *set)
{
	int err = loader_entries_write(registry->loader, generation, set);

	if (err == -E2BIG && background_weight(registry->background)) {
		background_drain(registry->background);
		err = loader_entries_write(registry->loader, generation, set);
	}
	if (err)
		log_error("writing %zu allow entries of generation %u: %s%s", set->count,
			  generation, strerror(-err),
			  err == -E2BIG ? " (the allow maps are full)" : "");
	return err;
}

/* The SNI keys of a policy's names under a generation not yet flipped to. */
static int sandbox_sni_write(struct sandbox_registry *registry, const struct policy *policy,
			     const struct sandbox_learned *learned, size_t learned_count,
			     uint32_t generation, uint64_t *digest)
{
	struct sniset set = {0};
	int err = sandbox_sniset_compute(registry, policy, learned, learned_count, &set);

	if (!err) {
		*digest = sniset_digest(&set);
		err = loader_sni_write(registry->loader, generation, &set);
	}
	if (err)
		log_error("writing the SNI entries of generation %u: %s", generation,
			  strerror(-err));
	sniset_free(&set);
	return err;
}

/*
 * Which cgroup (and network namespace) an attach names, and whether it may be
 * attached: not already, and not nested with another sandbox.
 */
static int sandbox_attach_target(struct sandbox_registry *registry, struct sandbox *sandbox,
				 const char *path, const char *netns, struct sandbox_error *error)
{
	char resolved[PATH_MAX];
	int err;

	if (netns) {
		err = sandbox_netns_open(sandbox, netns);
		if (err) {
			sandbox_error_set(error, "no_netns", "network namespace %s: %s", netns,
					  err == -EINVAL ? "not a network namespace"
							 : strerror(-err));
			return err;
		}
	}
	err = cgroup_resolve(path, resolved, sizeof(resolved));
	if (err) {
		sandbox_error_set(error, "no_cgroup", "cgroup %s: %s", path,
				  err == -EINVAL ? "not a cgroup v2 directory" : strerror(-err));
		return err;
	}
	err = sandbox_set_path(&sandbox->path, resolved);
	if (err) {
		sandbox_error_set(error, "internal", "cgroup %s: %s", resolved, strerror(-err));
		return err;
	}
	err = cgroup_id_of_path(sandbox->path, &sandbox->cgroup_id);
	if (err) {
		sandbox_error_set(error, "no_cgroup", "cgroup %s: %s", sandbox->path,
				  strerror(-err));
		return err;
	}
	if (sandbox_find(registry, sandbox->cgroup_id)) {
		err = -EEXIST;
		sandbox_error_set(error, "already_attached",
				  "cgroup %s is already attached; use update to change its policy",
				  sandbox->path);
		return err;
	}
	for (size_t i = 0; i < registry->count; i++) {
		const char *other = registry->items[i]->path;

		if (!other[0])
			continue; /* adopted without a known path */
		if (!path_within(sandbox->path, other) && !path_within(other, sandbox->path))
			continue;
		/* Below a guard is where sandboxes go: the guard defers to them. */
		if (path_within(sandbox->path, other) && registry->items[i]->guard)
			continue;
		if (path_within(other, sandbox->path) && sandbox->guard)
			continue;
		err = -EEXIST;
		sandbox_error_set(
			error, "nested",
			"cgroup %s is nested with attached sandbox %s; nested sandboxes are "
			"not supported (a descendant is held to its ancestor's policy)",
			sandbox->path, other);
		return err;
	}
	return 0;
}

int sandbox_attach(struct sandbox_registry *registry, const char *path, const char *netns,
		   struct policy *policy, struct sandbox **out, struct sandbox_error *error)
{
	return sandbox_attach_role(registry, path, netns, policy, false, out, error);
}

/* long: the attach order, step by step (entries, links, policy, registration), and its undo. */
int sandbox_attach_role(struct sandbox_registry *registry, const char *path, const char *netns,
			struct policy *policy, bool guard, struct sandbox **out,
			struct sandbox_error *error)
{
	struct sandbox *sandbox = sandbox_new();
	struct bfbpf_sandbox value = {0};
	bool entries_written = false, names_referenced = false;
	int err;

	if (!sandbox)
		return -ENOMEM;
	err = sandbox_attach_target(registry, sandbox, path, netns, error);
	if (!err && guard)
		err = guard_role_set(sandbox, error);
	if (err)
		goto cleanup;
	sandbox->digest = policy_digest(policy);
	if (registry->resolver) {
		err = resolver_policy_ref(registry->resolver, policy);
		if (err)
			goto kernel_error;
		names_referenced = true;
	}
	/* Names answer later (attach's reply waits for them); cached ones count now. */
	err = sandbox_allowset_compute(registry, policy, NULL, 0, &sandbox->applied);
	if (err)
		goto kernel_error;
	/* A guard's too, for its unregistered cgroups: in each of their namespaces
	 * (sandbox_netns.c). */
	err = sandbox_dns_start(registry, sandbox, 0);
	if (err) {
		sandbox_error_set(error, "dns", "starting the DNS responder of %s: %s",
				  sandbox->path, strerror(-err));
		goto undo;
	}
	sandbox->generation = loader_next_generation(registry->loader);
	/*
	 * Entries, then links, then the value: the links bring the cgroup's
	 * storage into being, zeroed, and a zero value denies everything, so
	 * the cgroup is closed from the first link on and opens to its policy
	 * with the one write of the value.
	 */
	err = sandbox_entries_write(registry, sandbox->generation, &sandbox->applied);
	if (err)
		goto kernel_error;
	entries_written = true;
	err = sandbox_sni_write(registry, policy, NULL, 0, sandbox->generation,
				&sandbox->sni_digest);
	if (err)
		goto kernel_error;
	err = loader_links_attach(registry->loader, sandbox->cgroup_id, sandbox->path,
				  sandbox->link_fds);
	if (err)
		goto kernel_error;
	sandbox->events = registry->events_enabled;
	sandbox_value(sandbox, policy, sandbox->generation, sandbox->digest, &value);
	err = loader_sandbox_set(registry->loader, sandbox->cgroup_id, &value);
	if (err)
		goto kernel_error;
	err = sandbox_registry_add(registry, sandbox);
	if (err)
		goto kernel_error;
	/*
	 * Registered last, once its links and policy are in force: from here a
	 * guard above defers to them (any deny wins: never more open than either
	 * policy on the way). Harmless where no guard is above.
	 */
	err = loader_registered_add(registry->loader, sandbox->cgroup_id);
	if (err) {
		sandbox_registry_remove(registry, sandbox);
		goto kernel_error;
	}
	sandbox->since = time(NULL);
	sandbox->state_dirty = true; /* written after the reply (sandbox_registry_collect) */
	log_info("attached %s (cgroup id %" PRIu64 ", %s, generation %u, %zu entries)",
		 sandbox->path, sandbox->cgroup_id, policy_mode_name(policy->mode),
		 sandbox->generation, sandbox->applied.count);
	sandbox->policy = *policy; /* taken, not copied */
	sandbox->policy_known = true;
	memset(policy, 0, sizeof(*policy));
	*out = sandbox;
	return 0;
kernel_error:
	sandbox_error_set(error, "kernel", "attaching %s: %s", sandbox->path, strerror(-err));
undo:
	/* Detaching the links frees the value (cgroup storage); then the entries. */
	loader_links_detach(registry->loader, sandbox->cgroup_id, sandbox->link_fds);
	if (entries_written) {
		loader_entries_delete(registry->loader, sandbox->generation, &sandbox->applied);
		loader_sni_collect(registry->loader, sandbox->generation);
	}
	if (names_referenced)
		resolver_policy_unref(registry->resolver, policy);
cleanup:
	sandbox_free(sandbox);
	return err;
}

/*
 * The new generation's entries first, then the one-write flip, then the old
 * ones go: no connect sees a mix. On failure the old policy stays in force.
 */
static int sandbox_program(struct sandbox_registry *registry, struct sandbox *sandbox,
			   const struct policy *policy, uint64_t digest, struct allowset *next)
{
	struct bfbpf_sandbox value = {0};
	uint32_t generation = loader_next_generation(registry->loader);
	uint64_t sni_digest = 0;
	int err;

	err = sandbox_entries_write(registry, generation, next);
	if (err)
		return err;
	err = sandbox_sni_write(registry, policy, sandbox->learned, sandbox->learned_count,
				generation, &sni_digest);
	if (err) {
		loader_entries_delete(registry->loader, generation, next);
		return err;
	}
	sandbox_value(sandbox, policy, generation, digest, &value);
	err = loader_sandbox_set(registry->loader, sandbox->cgroup_id, &value);
	if (err) {
		loader_entries_delete(registry->loader, generation, next);
		loader_sni_collect(registry->loader, generation);
		return err;
	}
	/* The replaced generation's SNI keys go at once: no sandbox uses it any more. */
	loader_sni_collect(registry->loader, 0);
	sandbox_garbage_add(registry, sandbox->generation, &sandbox->applied);
	sandbox->applied = *next;
	memset(next, 0, sizeof(*next));
	sandbox->generation = generation;
	sandbox->digest = value.digest;
	sandbox->sni_digest = sni_digest;
	return 0;
}

/* Links detached behind our back come back; adopted ones get this binary's programs. */
static void sandbox_links_mend(struct sandbox_registry *registry, struct sandbox *sandbox)
{
	int repaired = 0;

	if (loader_links_repair(registry->loader, sandbox->cgroup_id, sandbox->path,
				sandbox->link_fds, &repaired))
		log_error("%s: could not re-attach its missing links", sandbox->path);
	else if (repaired)
		log_warn("%s: re-attached %d links that were missing or detached", sandbox->path,
			 repaired);
	if (loader_links_refresh(registry->loader, sandbox->link_fds))
		log_warn("%s: could not refresh the programs of its links", sandbox->path);
}

int sandbox_update(struct sandbox_registry *registry, struct sandbox *sandbox,
		   struct policy *policy, struct sandbox_error *error)
{
	double started = log_clock_ms(), computed;
	struct allowset next = {0};
	bool names_referenced = false;
	int err;

	if (registry->resolver) {
		err = resolver_policy_ref(registry->resolver, policy);
		if (err)
			goto kernel_error;
		names_referenced = true;
	}
	/*
	 * Links first: if every link had gone, so had the value (cgroup storage),
	 * and the re-attached links start it afresh, closed, for the write below.
	 */
	sandbox_links_mend(registry, sandbox);
	sandbox_recover_responder(registry, sandbox); /* its port goes into the value below */
	if (!policy->runtime_network)
		sandbox->runtime_count = 0; /* what the runtime's resolver answered goes with it */
	err = sandbox_allowset_compute(registry, policy, sandbox->learned, sandbox->learned_count,
				       &next);
	if (!err)
		err = sandbox_runtime_add(sandbox, policy, &next);
	computed = log_clock_ms();
	if (!err)
		err = sandbox_program(registry, sandbox, policy, policy_digest(policy), &next);
	if (err)
		goto kernel_error;
	log_debug("%s: allow set in %.1f ms, maps written and flipped in %.1f ms", sandbox->path,
		  computed - started, log_clock_ms() - computed);
	if (sandbox->policy_known) {
		if (registry->resolver)
			resolver_policy_unref(registry->resolver, &sandbox->policy);
		policy_free(&sandbox->policy);
	}
	sandbox->policy = *policy; /* taken, not copied */
	memset(policy, 0, sizeof(*policy));
	sandbox->policy_known = true;
	sandbox->names_settled = false; /* the new policy's names */
	sandbox_learned_prune(registry, sandbox);
	free(sandbox->last_verify);
	sandbox->last_verify = NULL;
	sandbox->state_dirty = true; /* written after the reply (sandbox_registry_collect) */
	/* A relock: the flows it cuts fail now, not at the client's timeout. */
	if (sandbox_sweep(registry, sandbox, true))
		log_warn("%s: could not destroy the flows the update cut; they stall until "
			 "their clients time out",
			 sandbox->path);
	log_info("updated %s (%s, generation %u, %zu entries)", sandbox->path,
		 policy_mode_name(sandbox->policy.mode), sandbox->generation,
		 sandbox->applied.count);
	return 0;
kernel_error:
	sandbox_error_set(error, "kernel", "updating %s: %s; the previous policy stays in force",
			  sandbox->path, strerror(-err));
	if (names_referenced)
		resolver_policy_unref(registry->resolver, policy);
	allowset_free(&next);
	return err;
}

int sandbox_refresh(struct sandbox_registry *registry, struct sandbox *sandbox)
{
	struct allowset next = {0};
	uint64_t sni_digest = 0;
	int err;

	if (!sandbox->policy_known)
		return 0;
	sandbox->needs_refresh = false;
	err = sandbox_expected_allowset(registry, sandbox, &next);
	if (!err)
		err = sandbox_sni_digest(registry, sandbox, &sni_digest);
	if (err) {
		allowset_free(&next);
		return err;
	}
	/* A name learned on an address already allowed changes only the SNI keys. */
	if (allowset_equal(&next, &sandbox->applied) && sni_digest == sandbox->sni_digest) {
		allowset_free(&next);
		return 0;
	}
	err = sandbox_program(registry, sandbox, &sandbox->policy, sandbox->digest, &next);
	allowset_free(&next);
	if (err) {
		log_error("%s: programming its names' new addresses: %s; the previous set stays",
			  sandbox->path, strerror(-err));
		return err;
	}
	log_debug("%s: names changed: generation %u, %zu entries", sandbox->path,
		  sandbox->generation, sandbox->applied.count);
	return 0;
}

int sandbox_detach(struct sandbox_registry *registry, struct sandbox *sandbox,
		   struct sandbox_error *error)
{
	int err;

	/*
	 * Unregistered first: a guard above stops deferring to this cgroup while
	 * its own programs still run; unregistered, it cannot be left open.
	 */
	err = loader_registered_delete(registry->loader, sandbox->cgroup_id);
	if (err) {
		sandbox_error_set(error, "kernel", "unregistering %s: %s; it stays attached",
				  sandbox->path, strerror(-err));
		return err;
	}
	/* Links next: once they are gone no program reads the entries below. */
	err = loader_links_detach(registry->loader, sandbox->cgroup_id, sandbox->link_fds);
	if (err) {
		sandbox_error_set(error, "kernel", "detaching %s: %s", sandbox->path,
				  strerror(-err));
		return err;
	}
	/*
	 * The value and the counters went with the links (cgroup storage); no
	 * program reads the entries now: garbage, deleted after the reply.
	 */
	sandbox_garbage_add(registry, sandbox->generation, &sandbox->applied);
	sandbox_state_remove(registry, sandbox->cgroup_id);
	if (registry->resolver && sandbox->policy_known)
		resolver_policy_unref(registry->resolver, &sandbox->policy);
	for (size_t i = 0; registry->resolver && i < sandbox->learned_count; i++)
		names_unref(resolver_names(registry->resolver), sandbox->learned[i].name);
	log_info("detached %s", sandbox->path);
	sandbox_registry_remove(registry, sandbox);
	sandbox_free(sandbox);
	return 0;
}

void sandbox_registry_free(struct sandbox_registry *registry)
{
	sandbox_registry_collect(registry);
	background_stop(registry->background); /* after what collect queued */
	for (size_t i = 0; i < registry->count; i++)
		sandbox_free(registry->items[i]);
	free(registry->items);
	cgroup_parents_free(registry->cgroup_parents);
	memset(registry, 0, sizeof(*registry));
}

json_t *sandbox_to_json(struct sandbox_registry *registry, const struct sandbox *sandbox)
{
	json_t *hooks = json_array(), *object;
	char digest[17];

	for (int hook = 0; hook < LOADER_HOOK_COUNT; hook++)
		if (sandbox->link_fds[hook] >= 0)
			json_array_append_new(hooks, json_string(loader_hook_name(hook)));
	sandbox_digest_format(sandbox->digest, digest);
	object = json_pack("{s:s, s:I, s:I, s:s, s:o, s:I, s:o, s:o}", "cgroup", sandbox->path,
			   "cgroup_id", (json_int_t)sandbox->cgroup_id, "generation",
			   (json_int_t)sandbox->generation, "digest", digest, "policy",
			   sandbox->policy_known ? policy_to_json(&sandbox->policy) : json_null(),
			   "entries", (json_int_t)sandbox->applied.count, "hooks", hooks, "netns",
			   sandbox->netns_path ? json_string(sandbox->netns_path) : json_null());
	if (object)
		json_object_set_new(object, "role",
				    json_string(sandbox->guard ? "guard" : "sandbox"));
	if (object && sandbox->guard)
		json_object_set_new(object, "guard", guard_to_json(registry, sandbox));
	if (object && registry->resolver && sandbox->policy_known)
		json_object_set_new(object, "names", sandbox_names_to_json(registry, sandbox));
	if (object && sandbox->policy_known) /* names bound to TLS: is the rule on? */
		json_object_set_new(
			object, "sni",
			json_string(policy_sni_enforced(&sandbox->policy) ? "enforce" : "off"));
	if (object && sandbox->responder)
		json_object_set_new(object, "dns", responder_status(sandbox->responder));
	if (object && registry->events)
		json_object_set_new(object, "counters", events_counters(registry->events, sandbox));
	if (object && sandbox->last_check_at)
		json_object_set_new(object, "lockdown",
				    json_pack("{s:b, s:I, s:I}", "ok", sandbox->last_check_ok,
					      "checked_at", (json_int_t)sandbox->last_check_at,
					      "age_seconds",
					      (json_int_t)(time(NULL) - sandbox->last_check_at)));
	return object;
}
