// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/cgroup.h"
#include "ctl.h"
#include "ctl_internal.h"
#include "sandbox/events.h"
#include "sandbox/guard.h"
#include "lib/log.h"
#include "metrics.h"
#include "dns/resolver.h"
#include "sandbox/verify.h"
#include "sandbox/verify_procs.h"

static const char *const ctl_op_names[] = {
	[CTL_OP_ATTACH] = "attach",   [CTL_OP_UPDATE] = "update", [CTL_OP_DETACH] = "detach",
	[CTL_OP_STATUS] = "status",   [CTL_OP_VERIFY] = "verify", [CTL_OP_LOG] = "log",
	[CTL_OP_METRICS] = "metrics", [CTL_OP_GUARD] = "guard",	  [CTL_OP_UNGUARD] = "unguard",
};

static int ctl_fail(struct sandbox_error *error, const char *code, const char *message)
{
	error->code = code;
	snprintf(error->message, sizeof(error->message), "%s", message);
	return -EINVAL;
}

/*
 * "container": {"id": 64 hex digits, "name": "...", "runtime": "docker"|"podman"|"cri-o",
 * "pod_uid"?, "pod_container"?}: the pod key of a Kubernetes container, both or neither.
 */
static int ctl_container_field(json_t *value, struct container_ref *out,
			       struct sandbox_error *error)
{
	const char *id = NULL, *name = "", *runtime = NULL, *pod_uid = "", *pod_container = "";

	if (json_unpack(value, "{s:s, s?s, s:s, s?s, s?s !}", "id", &id, "name", &name, "runtime",
			&runtime, "pod_uid", &pod_uid, "pod_container", &pod_container) ||
	    !container_id_valid(id) || strlen(name) >= sizeof(out->name) ||
	    !container_runtime_valid(runtime))
		return ctl_fail(error, "bad_request",
				"\"container\" must be {\"id\": 64 lowercase hex digits, \"name\": "
				"a string, \"runtime\": docker, podman or cri-o, and optionally "
				"\"pod_uid\" and \"pod_container\"}");
	if (!container_pod_key_valid(pod_uid) || !container_pod_key_valid(pod_container))
		if (pod_uid[0] || pod_container[0] || json_object_get(value, "pod_uid") ||
		    json_object_get(value, "pod_container"))
			return ctl_fail(error, "bad_request",
					"\"pod_uid\" and \"pod_container\" of \"container\" go "
					"together, each 1 to 63 letters, digits, '.', '_' or '-'");
	snprintf(out->id, sizeof(out->id), "%s", id);
	snprintf(out->name, sizeof(out->name), "%s", name);
	snprintf(out->runtime, sizeof(out->runtime), "%s", runtime);
	snprintf(out->pod_uid, sizeof(out->pod_uid), "%s", pod_uid);
	snprintf(out->pod_container, sizeof(out->pod_container), "%s", pod_container);
	return 0;
}

/* A policy name: what may name a file of the policy directory, and nothing more. */
static bool ctl_policy_name_valid(const char *name)
{
	size_t length =
		strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			     "._-");

	return length && length == strlen(name) && length <= 128 && name[0] != '.';
}

/* The policy of an attach or update: an object, or (attach) a name or a container's record. */
static int ctl_request_policy(struct ctl_request *request, struct sandbox_error *error)
{
	json_t *value = json_object_get(request->root, "policy");

	if (!value) {
		/* A container's attach may rely on its record (the OCI hook after a restart). */
		if (request->op == CTL_OP_ATTACH &&
		    (request->policy_name || request->has_container))
			return 0;
		return ctl_fail(error, "bad_request", "missing field \"policy\"");
	}
	if (request->policy_name)
		return ctl_fail(error, "bad_request",
				"\"policy\" and \"policy_name\" are exclusive");
	if (policy_from_json(value, &request->policy, error->message, sizeof(error->message))) {
		error->code = "invalid_policy";
		return -EINVAL;
	}
	request->has_policy = true;
	return 0;
}

static int ctl_request_fields(struct ctl_request *request, struct sandbox_error *error)
{
	bool wants_cgroup = request->op != CTL_OP_STATUS && request->op != CTL_OP_LOG &&
			    request->op != CTL_OP_METRICS;
	bool wants_policy = request->op == CTL_OP_ATTACH || request->op == CTL_OP_UPDATE ||
			    request->op == CTL_OP_GUARD;
	const char *key;
	json_t *value;

	json_object_foreach(request->root, key, value)
	{
		if (!strcmp(key, "op"))
			continue;
		if (!strcmp(key, "cgroup")) {
			if (!json_is_string(value) || !json_string_length(value))
				return ctl_fail(error, "bad_request",
						"\"cgroup\" must be a non-empty string");
			request->cgroup = json_string_value(value);
		} else if (!strcmp(key, "netns") && request->op == CTL_OP_ATTACH) {
			if (!json_is_string(value) || !json_string_length(value))
				return ctl_fail(error, "bad_request",
						"\"netns\" must be a non-empty string");
			request->netns = json_string_value(value);
		} else if (!strcmp(key, "max_age") && request->op == CTL_OP_VERIFY) {
			if (!json_is_integer(value) || json_integer_value(value) < 0)
				return ctl_fail(error, "bad_request",
						"\"max_age\" must be a whole number of seconds");
			request->max_age = json_integer_value(value);
		} else if (!strcmp(key, "since") && request->op == CTL_OP_LOG) {
			if (!json_is_number(value) || json_number_value(value) < 0)
				return ctl_fail(error, "bad_request",
						"\"since\" must be a number of seconds");
			request->since = json_number_value(value);
		} else if (!strcmp(key, "follow") && request->op == CTL_OP_LOG) {
			if (!json_is_boolean(value))
				return ctl_fail(error, "bad_request",
						"\"follow\" must be a boolean");
			request->follow = json_is_true(value);
		} else if (!strcmp(key, "kill_holders") && wants_policy) {
			if (!json_is_boolean(value))
				return ctl_fail(error, "bad_request",
						"\"kill_holders\" must be a boolean");
			request->kill_holders = json_is_true(value);
		} else if (!strcmp(key, "policy") && wants_policy) {
			if (!json_is_object(value))
				return ctl_fail(error, "bad_request",
						"\"policy\" must be an object");
		} else if (!strcmp(key, "policy_name") && request->op == CTL_OP_ATTACH) {
			if (!json_is_string(value) ||
			    !ctl_policy_name_valid(json_string_value(value)))
				return ctl_fail(
					error, "bad_request",
					"\"policy_name\" must be a name of letters, digits, "
					"'.', '_' and '-'");
			request->policy_name = json_string_value(value);
		} else if (!strcmp(key, "container") && request->op != CTL_OP_LOG &&
			   request->op != CTL_OP_METRICS) {
			if (ctl_container_field(value, &request->container, error))
				return -EINVAL;
			request->has_container = true;
		} else {
			char message[160];

			snprintf(message, sizeof(message), "unknown field \"%.64s\" for op %s", key,
				 ctl_op_names[request->op]);
			return ctl_fail(error, "bad_request", message);
		}
	}
	/* A stopped container has no cgroup: its detach only forgets the record. */
	if (wants_cgroup && !request->cgroup &&
	    !(request->op == CTL_OP_DETACH && request->has_container))
		return ctl_fail(error, "bad_request", "missing field \"cgroup\"");
	if (wants_policy)
		return ctl_request_policy(request, error);
	return 0;
}

int ctl_request_parse(const char *line, size_t length, struct ctl_request *request,
		      struct sandbox_error *error)
{
	json_error_t json_error;
	json_t *op;
	size_t i;
	int err;

	memset(request, 0, sizeof(*request));
	request->max_age = -1;
	request->since = -1;
	if (length > CTL_MAX_REQUEST_BYTES)
		return ctl_fail(error, "too_large", CTL_TOO_LARGE_MESSAGE);
	/* JSON_REJECT_DUPLICATES: a repeated key must not smuggle a second value past us. */
	request->root = json_loadb(line, length, JSON_REJECT_DUPLICATES, &json_error);
	if (!request->root) {
		error->code = "bad_json";
		snprintf(error->message, sizeof(error->message), "invalid JSON: %s",
			 json_error.text);
		return -EINVAL;
	}
	err = -EINVAL;
	if (!json_is_object(request->root)) {
		ctl_fail(error, "bad_request", "a request is a JSON object");
		goto cleanup;
	}
	op = json_object_get(request->root, "op");
	if (!json_is_string(op)) {
		ctl_fail(error, "bad_request", "missing string field \"op\"");
		goto cleanup;
	}
	for (i = 0; i < sizeof(ctl_op_names) / sizeof(ctl_op_names[0]); i++)
		if (!strcmp(json_string_value(op), ctl_op_names[i]))
			break;
	if (i == sizeof(ctl_op_names) / sizeof(ctl_op_names[0])) {
		ctl_fail(error, "unknown_op",
			 "unknown op; expected attach, update, detach, status, verify, log, "
			 "metrics, guard or unguard");
		goto cleanup;
	}
	request->op = (enum ctl_op)i;
	err = ctl_request_fields(request, error);
	if (err)
		goto cleanup;
	return 0;
cleanup:
	ctl_request_free(request);
	return err;
}

void ctl_request_free(struct ctl_request *request)
{
	if (request->has_policy)
		policy_free(&request->policy);
	json_decref(request->root);
	memset(request, 0, sizeof(*request));
}

json_t *ctl_reply_error(const char *code, const char *message)
{
	return json_pack("{s:b, s:{s:s, s:s}}", "ok", 0, "error", "code", code, "message", message);
}

json_t *ctl_reply_ok(json_t *fields)
{
	json_object_set_new(fields, "ok", json_true());
	return fields;
}

/* The attached sandbox a request names; NULL with an error reply otherwise. */
static struct sandbox *ctl_sandbox_of(struct sandbox_registry *registry, const char *given,
				      json_t **reply)
{
	char path[PATH_MAX], message[PATH_MAX + 128];
	struct sandbox *sandbox;
	uint64_t id;
	int err;

	err = cgroup_resolve(given, path, sizeof(path));
	if (!err)
		err = cgroup_id_of_path(path, &id);
	if (err) {
		snprintf(message, sizeof(message), "cgroup %s: %s", given,
			 err == -EINVAL ? "not a cgroup v2 directory" : strerror(-err));
		*reply = ctl_reply_error("no_cgroup", message);
		return NULL;
	}
	sandbox = sandbox_find(registry, id);
	if (!sandbox) {
		snprintf(message, sizeof(message), "cgroup %s is not attached", path);
		*reply = ctl_reply_error("not_attached", message);
		return NULL;
	}
	sandbox_adopt_path(sandbox, path); /* if it was adopted without one */
	return sandbox;
}

/* A sandbox as status shows it, with its container if it confines one. */
static json_t *ctl_sandbox_json(struct sandbox_registry *registry, struct sandbox *sandbox)
{
	json_t *object = sandbox_to_json(registry, sandbox);

	if (object && sandbox->container_id[0])
		json_object_set_new(object, "container", containers_json_of(registry, sandbox));
	return object;
}

static json_t *ctl_status(struct sandbox_registry *registry, const char *cgroup)
{
	json_t *list = json_array(), *reply = NULL;

	if (cgroup) {
		struct sandbox *sandbox = ctl_sandbox_of(registry, cgroup, &reply);

		if (!sandbox) {
			json_decref(list);
			return reply;
		}
		json_array_append_new(list, ctl_sandbox_json(registry, sandbox));
	} else {
		for (size_t i = 0; i < registry->count; i++)
			json_array_append_new(list, ctl_sandbox_json(registry, registry->items[i]));
	}
	return ctl_reply_ok(json_pack("{s:o}", "sandboxes", list));
}

/* A full verification, or the last one if it is at most max_age seconds old. */
static json_t *ctl_verify(struct sandbox_registry *registry, struct sandbox *sandbox,
			  json_int_t max_age)
{
	time_t now = time(NULL);
	json_t *reply;

	if (max_age >= 0 && sandbox->last_verify && now - sandbox->last_verify_at <= max_age &&
	    (reply = json_loads(sandbox->last_verify, 0, NULL))) {
		json_object_set_new(reply, "cached", json_true());
		json_object_set_new(reply, "age_seconds",
				    json_integer(now - sandbox->last_verify_at));
		return ctl_reply_ok(reply);
	}
	reply = verify_sandbox(registry, sandbox, true, NULL);
	if (!reply)
		return NULL;
	free(sandbox->last_verify);
	sandbox->last_verify = json_dumps(reply, JSON_COMPACT);
	sandbox->last_verify_at = now;
	json_object_set_new(reply, "cached", json_false());
	json_object_set_new(reply, "age_seconds", json_integer(0));
	return ctl_reply_ok(reply);
}

void ctl_pending_clear(struct ctl_pending *pending)
{
	json_decref(pending->reply);
	memset(pending, 0, sizeof(*pending));
}

/* Completes an attach/update reply: the generation now in force and the names without addresses. */
static json_t *ctl_reply_finish(struct sandbox_registry *registry, struct sandbox *sandbox,
				json_t *reply, bool waited)
{
	char digest[17];

	/* Names that answered while the reply waited are programmed before it goes. */
	if (waited)
		sandbox_refresh(registry, sandbox);
	sandbox_digest_format(sandbox->digest, digest);
	json_object_set_new(reply, "generation", json_integer(sandbox->generation));
	json_object_set_new(reply, "digest", json_string(digest));
	json_object_set_new(reply, "entries", json_integer((json_int_t)sandbox->applied.count));
	json_object_set_new(reply, "unresolved",
			    registry->resolver && sandbox->policy_known
				    ? sandbox_names_unresolved(registry, sandbox)
				    : json_array());
	return reply;
}

json_t *ctl_pending_poll(struct sandbox_registry *registry, struct ctl_pending *pending)
{
	struct sandbox *sandbox;
	json_t *reply;

	if (!pending->active)
		return NULL;
	sandbox = sandbox_find(registry, pending->cgroup_id);
	if (!sandbox) {
		ctl_pending_clear(pending);
		return ctl_reply_error("not_attached", "the sandbox was detached meanwhile");
	}
	if (!sandbox_names_settled(registry, sandbox) && log_monotonic_ms() < pending->deadline_ms)
		return NULL;
	reply = ctl_reply_finish(registry, sandbox, pending->reply, true);
	pending->reply = NULL;
	ctl_pending_clear(pending);
	return reply;
}

static json_t *ctl_log(struct sandbox_registry *registry, const struct ctl_request *request,
		       struct ctl_pending *pending)
{
	struct sandbox *sandbox = NULL;
	json_t *reply = NULL;

	if (!registry->events)
		return ctl_reply_error("no_events", "this daemon keeps no events");
	if (request->cgroup && !(sandbox = ctl_sandbox_of(registry, request->cgroup, &reply)))
		return reply;
	if (request->follow) {
		pending->follow = true;
		pending->follow_cgroup_id = sandbox ? sandbox->cgroup_id : 0;
	}
	return ctl_reply_ok(
		json_pack("{s:o}", "events",
			  events_history(registry->events, sandbox ? sandbox->cgroup_id : 0,
					 request->since)));
}

static json_t *ctl_metrics(struct sandbox_registry *registry)
{
	char *text;
	json_t *reply;

	if (!registry->events)
		return ctl_reply_error("no_events", "this daemon keeps no counters");
	text = metrics_text(registry);
	if (!text)
		return NULL;
	reply = ctl_reply_ok(json_pack("{s:s}", "text", text));
	free(text);
	return reply;
}

/* guard: set one, or replace its policy; the reply says which. */
static json_t *ctl_guard(struct sandbox_registry *registry, struct ctl_request *request)
{
	struct sandbox_error error = {.code = "internal"};
	struct sandbox *guard = NULL;
	bool created;
	char digest[17];

	if (guard_set(registry, request->cgroup, &request->policy, &guard, &created, &error))
		return ctl_reply_error(error.code, error.message);
	sandbox_digest_format(guard->digest, digest);
	return ctl_reply_ok(json_pack("{s:s, s:I, s:b, s:I, s:s, s:I}", "cgroup", guard->path,
				      "cgroup_id", (json_int_t)guard->cgroup_id, "created", created,
				      "generation", (json_int_t)guard->generation, "digest", digest,
				      "entries", (json_int_t)guard->applied.count));
}

static json_t *ctl_unguard(struct sandbox_registry *registry, struct sandbox *guard)
{
	struct sandbox_error error = {.code = "internal"};
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s", guard->path);
	if (guard_unset(registry, guard, &error))
		return ctl_reply_error(error.code, error.message);
	return ctl_reply_ok(json_pack("{s:s}", "cgroup", path));
}

static json_t *ctl_execute(struct sandbox_registry *registry, struct ctl_request *request,
			   struct ctl_pending *pending)
{
	struct sandbox_error error = {.code = "internal"};
	struct sandbox *sandbox = NULL;
	bool recorded = false;
	json_t *reply = NULL;
	int killed = 0;

	switch (request->op) {
	case CTL_OP_STATUS:
		return ctl_status(registry, request->cgroup);
	case CTL_OP_LOG:
		return ctl_log(registry, request, pending);
	case CTL_OP_METRICS:
		return ctl_metrics(registry);
	case CTL_OP_GUARD:
		return ctl_guard(registry, request);
	case CTL_OP_UNGUARD:
		sandbox = ctl_sandbox_of(registry, request->cgroup, &reply);
		if (!sandbox)
			return reply;
		return ctl_unguard(registry, sandbox);
	case CTL_OP_ATTACH:
		reply = ctl_attach(registry, request, &sandbox, &recorded);
		if (reply)
			return reply;
		/* Attached first (a refusal would leave it open); what was opened before goes. */
		if (request->kill_holders &&
		    (reply = ctl_holders_settle(sandbox, &sandbox->policy, true, true, &killed)))
			return reply;
		break;
	default:
		if (!request->cgroup) { /* detach of a stopped container (ctl_request_fields) */
			containers_forget_ref(registry, &request->container);
			return ctl_reply_ok(json_pack("{s:s}", "forgotten", request->container.id));
		}
		sandbox = ctl_sandbox_of(registry, request->cgroup, &reply);
		if (!sandbox)
			return reply;
		if (request->op == CTL_OP_VERIFY)
			return ctl_verify(registry, sandbox, request->max_age);
		if (request->op == CTL_OP_DETACH && sandbox->guard)
			return ctl_reply_error("is_guard", "that cgroup is a guard: use unguard");
		if (request->op == CTL_OP_DETACH)
			return ctl_detach(registry, request, sandbox);
		reply = ctl_holders_settle(sandbox, &request->policy, request->kill_holders, false,
					   &killed);
		if (reply)
			return reply;
		if (sandbox_update(registry, sandbox, &request->policy, &error))
			return ctl_reply_error(error.code, error.message);
		/* The container's record follows: its next start gets this policy. */
		if (containers_remember(registry, sandbox,
					request->has_container ? &request->container : NULL))
			log_error("%s: cannot record its container's new policy", sandbox->path);
		/* One opened between the walk and the flip: killed, or named. */
		reply = ctl_holders_settle(sandbox, &sandbox->policy, request->kill_holders, true,
					   &killed);
		if (reply)
			return reply;
		break;
	}
	reply = ctl_reply_ok(json_pack("{s:s, s:I}", "cgroup", sandbox->path, "cgroup_id",
				       (json_int_t)sandbox->cgroup_id));
	if (reply && request->kill_holders)
		json_object_set_new(reply, "killed_holders", json_integer(killed));
	if (sandbox->container_id[0]) {
		json_object_set_new(reply, "container", containers_json_of(registry, sandbox));
		json_object_set_new(reply, "recorded_policy", json_boolean(recorded));
	}
	if (!sandbox_names_settled(registry, sandbox)) {
		pending->active = true;
		pending->cgroup_id = sandbox->cgroup_id;
		pending->reply = reply;
		pending->deadline_ms = log_monotonic_ms() + RESOLVER_SETTLE_TIMEOUT_MS;
		return NULL;
	}
	return ctl_reply_finish(registry, sandbox, reply, false);
}

json_t *ctl_handle_line(struct sandbox_registry *registry, const char *line, size_t length,
			struct ctl_pending *pending)
{
	struct sandbox_error error = {.code = "internal"};
	double started = log_clock_ms(), parsed;
	struct ctl_request request;
	json_t *reply;

	if (ctl_request_parse(line, length, &request, &error)) {
		log_debug("refused request: %s: %s", error.code, error.message);
		return ctl_reply_error(error.code, error.message);
	}
	parsed = log_clock_ms();
	reply = ctl_execute(registry, &request, pending);
	if (request.has_policy && log_enabled(LOG_LEVEL_DEBUG))
		log_debug("%s of %s (%zu bytes): parsed in %.1f ms, done in %.1f ms",
			  ctl_op_names[request.op], request.cgroup, length, parsed - started,
			  log_clock_ms() - parsed);
	ctl_request_free(&request);
	if (!reply && pending->active)
		return NULL;
	return reply ? reply : ctl_reply_error("internal", "out of memory");
}
