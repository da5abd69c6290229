// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Guards: set, replace, remove, and the registered map kept true to the registry. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cgroup.h"
#include "lib/log.h"
#include "guard.h"
#include "sandbox_internal.h"

static int guard_error(struct sandbox_error *error, const char *code, int err, const char *fmt,
		       const char *path, const char *detail)
{
	error->code = code;
	snprintf(error->message, sizeof(error->message), fmt, path, detail);
	return err;
}

int guard_role_set(struct sandbox *sandbox, struct sandbox_error *error)
{
	char mount[PATH_MAX];
	unsigned int level = 0;
	int err;

	err = cgroup_mount_find(mount, sizeof(mount));
	if (err)
		return guard_error(error, "no_cgroup", err, "%s: no cgroup2 mount (%s)",
				   sandbox->path, strerror(-err));
	/* The depth below the mount: the programs look for registrations below it. */
	for (const char *rest = sandbox->path + strlen(mount); *rest; rest++)
		if (*rest == '/' && rest[1] && rest[1] != '/')
			level++;
	if (!level || level >= BFBPF_GUARD_MAX_LEVEL) {
		error->code = "bad_target";
		snprintf(error->message, sizeof(error->message),
			 "cgroup %s is at level %u; a guard goes at levels 1 to %d", sandbox->path,
			 level, BFBPF_GUARD_MAX_LEVEL - 1);
		return -EINVAL;
	}
	sandbox->guard = true;
	sandbox->guard_level = (uint16_t)level;
	return 0;
}

int guard_set(struct sandbox_registry *registry, const char *path, struct policy *policy,
	      struct sandbox **out, bool *created, struct sandbox_error *error)
{
	char resolved[PATH_MAX], why[PATH_MAX + 64];
	struct sandbox *guard;
	uint64_t id;
	int err;

	*created = false;
	err = cgroup_resolve(path, resolved, sizeof(resolved));
	if (!err)
		err = cgroup_id_of_path(resolved, &id);
	if (err)
		return guard_error(error, "no_cgroup", err, "cgroup %s: %s", path,
				   err == -EINVAL ? "not a cgroup v2 directory" : strerror(-err));
	err = cgroup_path_is_protected(resolved, why, sizeof(why));
	if (err < 0)
		return guard_error(error, "protected_cgroup", err,
				   "cgroup %s: cannot tell whether it holds the daemon (%s)",
				   resolved, strerror(-err));
	if (err)
		return guard_error(error, "protected_cgroup", -EPERM, "refusing to guard %s: %s",
				   resolved, why);
	guard = sandbox_find(registry, id);
	if (guard && !guard->guard)
		return guard_error(error, "already_attached", -EEXIST,
				   "cgroup %s is an attached sandbox, not a guard%s", resolved,
				   "; detach it first");
	if (guard) {
		err = sandbox_update(registry, guard, policy, error);
		if (!err)
			*out = guard;
		return err;
	}
	err = sandbox_attach_role(registry, resolved, NULL, policy, true, out, error);
	if (!err) {
		*created = true;
		log_info("guarding %s (level %u): unregistered cgroups below get its policy",
			 resolved, (*out)->guard_level);
	}
	return err;
}

int guard_unset(struct sandbox_registry *registry, struct sandbox *guard,
		struct sandbox_error *error)
{
	if (!guard->guard)
		return guard_error(error, "not_a_guard", -EINVAL,
				   "cgroup %s is a sandbox, not a guard%s", guard->path,
				   "; use detach");
	return sandbox_detach(registry, guard, error);
}

static bool guard_links_complete(struct sandbox_registry *registry, const struct sandbox *sandbox)
{
	for (int hook = 0; hook < LOADER_HOOK_COUNT; hook++)
		if (loader_hook_available(registry->loader, hook) && sandbox->link_fds[hook] < 0)
			return false;
	return true;
}

int guard_registrations_sync(struct sandbox_registry *registry)
{
	uint64_t *ids = NULL;
	size_t count = 0;
	int err;

	err = loader_registered_list(registry->loader, &ids, &count);
	if (err)
		return err;
	for (size_t i = 0; i < count; i++) {
		struct sandbox *sandbox = sandbox_find(registry, ids[i]);

		if (sandbox && guard_links_complete(registry, sandbox))
			continue;
		log_warn("cgroup id %" PRIu64 " was registered without %s; unregistering it",
			 ids[i], sandbox ? "all its links" : "a sandbox");
		err = loader_registered_delete(registry->loader, ids[i]);
		if (err)
			goto cleanup;
	}
	/* A daemon stopped between a sandbox's policy and its registration: complete it. */
	for (size_t i = 0; i < registry->count; i++) {
		struct sandbox *sandbox = registry->items[i];

		if (!guard_links_complete(registry, sandbox) ||
		    loader_registered(registry->loader, sandbox->cgroup_id))
			continue;
		err = loader_registered_add(registry->loader, sandbox->cgroup_id);
		if (err)
			goto cleanup;
		log_info("%s: registered again", sandbox->path);
	}
cleanup:
	free(ids);
	return err;
}

uint64_t guard_refusals(struct sandbox_registry *registry, const struct sandbox *guard)
{
	struct bfbpf_stats sum;
	uint64_t total = 0;

	if (loader_stats_read(registry->loader, guard->cgroup_id, &sum))
		return 0;
	for (int hook = 0; hook < BFBPF_HOOK_COUNT; hook++)
		total += sum.denied[hook];
	return total;
}

static bool guard_path_within(const char *inner, const char *outer)
{
	size_t length = strlen(outer);

	return !strncmp(inner, outer, length) && inner[length] == '/';
}

json_t *guard_to_json(struct sandbox_registry *registry, const struct sandbox *guard)
{
	json_int_t below = 0;

	for (size_t i = 0; i < registry->count; i++)
		if (guard->path[0] && guard_path_within(registry->items[i]->path, guard->path))
			below++;
	return json_pack("{s:i, s:I, s:I}", "level", guard->guard_level, "refused",
			 (json_int_t)guard_refusals(registry, guard), "registered_below", below);
}

void guard_metrics(struct sandbox_registry *registry, FILE *out)
{
	size_t guards = 0;

	for (size_t i = 0; i < registry->count; i++)
		guards += registry->items[i]->guard;
	fprintf(out,
		"# HELP bfbpf_guards Guards set (subtrees closed by default).\n"
		"# TYPE bfbpf_guards gauge\nbfbpf_guards %zu\n",
		guards);
	fprintf(out, "# HELP bfbpf_guard_refusals_total Sockets, connects, sends, options and "
		     "packets a guard refused: their cgroup below it has no registration.\n"
		     "# TYPE bfbpf_guard_refusals_total counter\n");
	for (size_t i = 0; i < registry->count; i++) {
		const struct sandbox *guard = registry->items[i];
		char label[2 * PATH_MAX];
		size_t used = 0;

		if (!guard->guard)
			continue;
		for (const char *c = guard->path; *c && used + 3 < sizeof(label); c++) {
			if (*c == '\\' || *c == '"')
				label[used++] = '\\';
			label[used++] = *c == '\n' ? ' ' : *c;
		}
		label[used] = '\0';
		fprintf(out, "bfbpf_guard_refusals_total{guard=\"%s\"} %" PRIu64 "\n", label,
			guard_refusals(registry, guard));
	}
}
