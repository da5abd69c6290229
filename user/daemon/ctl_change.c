// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The control ops that change a sandbox's lifetime: attach (a container's
 * record, by its id or its pod key, wins over the request's policy; refused
 * targets), detach (the record goes too), and the holders of sockets no hook
 * judges around an update.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/cgroup.h"
#include "lib/log.h"
#include "ctl.h"
#include "ctl_internal.h"
#include "sandbox/events.h"
#include "sandbox/verify_procs.h"

/*
 * A socket that no address hook judges (packet, XDP, vsock; raw or ping
 * opened before) outlives a relock: in a restrictive mode, its holders are
 * killed when the request asks (kill_holders), else the request fails naming
 * them (before the flip: the previous policy stays). *killed adds the kills;
 * NULL: go on.
 */
json_t *ctl_holders_settle(struct sandbox *sandbox, const struct policy *policy, bool kill,
			   bool applied, int *killed)
{
	const char *state =
		applied ? "the policy is applied" : "the previous policy stays in force";
	char names[512], message[1024];
	int left, now = 0;

	if (policy->mode == POLICY_MODE_PUBLIC)
		return NULL;
	left = verify_socket_holders(sandbox->path, kill, names, sizeof(names), &now);
	*killed += now;
	if (now)
		log_warn("%s: killed %d processes holding sockets that %s refuses: %s",
			 sandbox->path, now, policy_mode_name(policy->mode), names);
	if (left < 0) {
		snprintf(message, sizeof(message),
			 "cannot inspect the sockets of %s's processes: %s; %s", sandbox->path,
			 strerror(-left), state);
		return ctl_reply_error("kernel", message);
	}
	if (!left)
		return NULL;
	snprintf(message, sizeof(message),
		 "%s: %s; these sockets pass no address hook and outlive a relock to %s; %s; end "
		 "them, or ask for kill_holders (--kill-holders)",
		 sandbox->path, names, policy_mode_name(policy->mode), state);
	return ctl_reply_error("sockets_held", message);
}

/* The cgroup2 root and the cgroups holding PID 1 or the daemon are no sandbox's (exit 2). */
static json_t *ctl_target_refused(const char *given)
{
	char path[PATH_MAX], why[PATH_MAX * 2 + 64], message[sizeof(why) + 96];

	if (cgroup_resolve(given, path, sizeof(path)))
		return NULL; /* sandbox_attach says why */
	if (!cgroup_path_is_protected(path, why, sizeof(why)))
		return NULL; /* a path that cannot be told is refused (fail closed) */
	snprintf(message, sizeof(message),
		 "%s: %s; no sandbox may be the cgroup2 root or hold PID 1 or the daemon", path,
		 why);
	return ctl_reply_error("protected_cgroup", message);
}

/* A policy of the daemon's --policy-dir, by name, as the request's policy. */
static json_t *ctl_policy_by_name(struct sandbox_registry *registry, struct ctl_request *request)
{
	char path[PATH_MAX], err[400], message[PATH_MAX + 600];

	if (!registry->policy_dir)
		return ctl_reply_error("no_policy", "this daemon has no policy directory");
	snprintf(path, sizeof(path), "%s/%s.json", registry->policy_dir, request->policy_name);
	if (access(path, R_OK)) {
		snprintf(message, sizeof(message), "policy %s: no readable file %s: %s",
			 request->policy_name, path, strerror(errno));
		return ctl_reply_error("no_policy", message);
	}
	if (policy_load_file(path, &request->policy, err, sizeof(err))) {
		snprintf(message, sizeof(message), "policy %s (%s): %s", request->policy_name, path,
			 err);
		return ctl_reply_error("invalid_policy", message);
	}
	request->has_policy = true;
	return NULL;
}

/*
 * The policy of an attach. A container's record wins over what the request
 * says: after a relock, a restart (the OCI hook asks again with the install
 * policy of its annotation) must come back relocked, never as installed. A
 * Kubernetes restart is a new id: its pod key finds the record (*by_pod).
 */
static json_t *ctl_attach_policy(struct sandbox_registry *registry, struct ctl_request *request,
				 bool *recorded, bool *by_pod)
{
	char path[PATH_MAX], message[PATH_MAX + 256];
	struct policy policy;
	int err = -ENOENT;

	if (request->has_container && !cgroup_resolve(request->cgroup, path, sizeof(path)))
		err = containers_policy_of(registry, &request->container, path, &policy, by_pod);
	if (err == -EXDEV) {
		snprintf(message, sizeof(message),
			 "pod %s container %s is recorded in another pod cgroup than %s's parent",
			 request->container.pod_uid, request->container.pod_container, path);
		return ctl_reply_error("pod_mismatch", message);
	}
	if (!err) {
		if (request->has_policy)
			policy_free(&request->policy);
		request->policy = policy;
		request->has_policy = true;
		*recorded = true;
		return NULL;
	}
	if (request->has_policy)
		return NULL;
	if (request->policy_name)
		return ctl_policy_by_name(registry, request);
	return ctl_reply_error("no_record", "no policy given, and the daemon holds no record of "
					    "this container");
}

static struct sandbox *ctl_attached_at(struct sandbox_registry *registry, const char *given)
{
	char path[PATH_MAX];
	uint64_t id;

	if (cgroup_resolve(given, path, sizeof(path)) || cgroup_id_of_path(path, &id))
		return NULL;
	return sandbox_find(registry, id);
}

json_t *ctl_attach(struct sandbox_registry *registry, struct ctl_request *request,
		   struct sandbox **out, bool *recorded)
{
	struct sandbox_error error = {.code = "internal"};
	struct sandbox *existing;
	bool by_pod = false;
	json_t *reply;

	reply = ctl_target_refused(request->cgroup);
	if (!reply)
		reply = ctl_attach_policy(registry, request, recorded, &by_pod);
	if (reply)
		return reply;
	existing = ctl_attached_at(registry, request->cgroup);
	if (existing && request->has_container &&
	    !strcmp(existing->container_id, request->container.id)) {
		/* The record was re-applied when the cgroup appeared, before the hook asked. */
		*out = existing;
		return NULL;
	}
	if (sandbox_attach(registry, request->cgroup, request->netns, &request->policy, out,
			   &error))
		return ctl_reply_error(error.code, error.message);
	if (request->has_container && containers_remember(registry, *out, &request->container))
		log_error("%s: cannot record container %s: its policy will not follow a restart",
			  (*out)->path, request->container.id);
	if (by_pod) { /* the pod's record, not the annotation: a re-apply, as for Podman's */
		registry->reapplied++;
		events_record_lifecycle(registry->events, "reapplied", *out, request->container.id);
		log_info("container %s of pod %s: restarted as %.12s; applied its current policy "
			 "(%s), not the one asked",
			 request->container.pod_container, request->container.pod_uid,
			 request->container.id, policy_mode_name((*out)->policy.mode));
	}
	return NULL;
}

json_t *ctl_detach(struct sandbox_registry *registry, struct ctl_request *request,
		   struct sandbox *sandbox)
{
	struct sandbox_error error = {.code = "internal"};
	char path[PATH_MAX], container[CONTAINER_ID_LENGTH + 1];

	snprintf(path, sizeof(path), "%s", sandbox->path);
	snprintf(container, sizeof(container), "%s", sandbox->container_id);
	if (sandbox_detach(registry, sandbox, &error))
		return ctl_reply_error(error.code, error.message);
	/* Detach is the runner's word that the container is done: its record goes too. */
	if (container[0])
		containers_forget(registry, container);
	if (request->has_container)
		containers_forget_ref(registry, &request->container);
	return ctl_reply_ok(json_pack("{s:s}", "cgroup", path));
}
