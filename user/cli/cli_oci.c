// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bfbpf oci-hook: the OCI createRuntime hook of Podman and CRI-O (and of
 * Docker through docker-runtime). It reads the container's state on stdin,
 * finds the policy it asks for (the annotation io.bfbpf.policy, else
 * BFBPF_POLICY in the container's environment) and registers the container
 * with the daemon before its first instruction. It fails closed: a start
 * that asks for a policy does not happen unless the daemon confirms it.
 * Under CRI-O it also sends the container's pod key (the pod's uid and the
 * container's name in it): Kubernetes restarts a container as a new id, and
 * the daemon finds the pod's record, with its current policy, by that key.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_commands.h"
#include "client.h"
#include "lib/cgroup.h"
#include "lib/container.h"

#define CLI_OCI_STATE_MAX (1 << 20)
#define CLI_OCI_ANNOTATION "io.bfbpf.policy"
#define CLI_OCI_ENV "BFBPF_POLICY="
/* CRI-O's annotations of a pod's container (and of its infra container, "sandbox"). */
#define CLI_OCI_POD_UID "io.kubernetes.pod.uid"
#define CLI_OCI_POD_CONTAINER "io.kubernetes.container.name"
#define CLI_OCI_CONTAINER_TYPE "io.kubernetes.cri-o.ContainerType"

enum {
	CLI_OCI_RUNTIME = CLI_OPTION_OWN,
};

const struct cli_option cli_oci_hook_options[] = {
	{"runtime", "RUNTIME", CLI_OCI_RUNTIME, 0,
	 "the runtime to record: docker, podman or cri-o (default: from the annotations)"},
	{0},
};

struct cli_oci_state {
	json_t *root;
	const char *id;
	long long pid;
	const char *bundle;
	json_t *annotations; /* may be NULL (Docker) */
	json_t *config;	     /* BUNDLE/config.json, read when needed */
	const char *runtime;
	const char *policy; /* the selection: a file (has a '/') or a name; NULL: none */
};

static int cli_oci_option(struct cli_args *args, int id, const char *value, void *ctx)
{
	struct cli_oci_state *state = ctx;

	(void)args;
	if (id != CLI_OCI_RUNTIME)
		return CLI_EXIT_USAGE;
	if (!container_runtime_valid(value))
		return cli_usage_error("--runtime %s: expected docker, podman or cri-o", value);
	state->runtime = value;
	return CLI_EXIT_OK;
}

static const char *cli_oci_annotation(const struct cli_oci_state *state, const char *key)
{
	return json_string_value(json_object_get(state->annotations, key));
}

/* BFBPF_POLICY=... of the container's process (Docker labels never reach the bundle). */
static const char *cli_oci_env_policy(struct cli_oci_state *state)
{
	char path[PATH_MAX];
	json_t *item;
	size_t i;

	snprintf(path, sizeof(path), "%s/config.json", state->bundle);
	state->config = json_load_file(path, 0, NULL);
	json_array_foreach(json_object_get(json_object_get(state->config, "process"), "env"), i,
			   item)
	{
		const char *text = json_string_value(item);

		if (text && !strncmp(text, CLI_OCI_ENV, strlen(CLI_OCI_ENV)) &&
		    text[strlen(CLI_OCI_ENV)])
			return text + strlen(CLI_OCI_ENV);
	}
	return NULL;
}

/* The state on stdin: {"id", "pid", "bundle", "annotations"?}; an exit status. */
static int cli_oci_read_state(struct cli_oci_state *state)
{
	json_error_t error;

	state->root = json_loadf(stdin, JSON_DISABLE_EOF_CHECK, &error);
	if (!state->root || json_unpack(state->root, "{s:s, s:I, s:s}", "id", &state->id, "pid",
					&state->pid, "bundle", &state->bundle)) {
		cli_error("oci-hook: the OCI state on stdin is not {id, pid, bundle, ...}: %s",
			  state->root ? "fields missing" : error.text);
		return CLI_EXIT_FAILED;
	}
	if (!container_id_valid(state->id) || state->pid <= 0 || state->pid > INT_MAX) {
		cli_error("oci-hook: the OCI state names no full container id and running pid");
		return CLI_EXIT_FAILED;
	}
	state->annotations = json_object_get(state->root, "annotations");
	state->policy = cli_oci_annotation(state, CLI_OCI_ANNOTATION);
	if (!state->policy)
		state->policy = cli_oci_env_policy(state);
	/* Podman also writes io.kubernetes.cri-o.* annotations: its manager says which. */
	if (!state->runtime) {
		const char *manager = cli_oci_annotation(state, "io.container.manager");

		state->runtime = (manager && !strcmp(manager, "libpod")) ||
						 !cli_oci_annotation(state, CLI_OCI_CONTAINER_TYPE)
					 ? "podman"
					 : "cri-o";
	}
	return CLI_EXIT_OK;
}

/* The container's name, where its runtime says it. */
static const char *cli_oci_name(const struct cli_oci_state *state)
{
	static const char *const keys[] = {"io.kubernetes.cri-o.ContainerName",
					   "io.kubernetes.container.name",
					   "org.opencontainers.image.title"};
	const char *name;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if ((name = cli_oci_annotation(state, keys[i])) &&
		    strlen(name) < CONTAINER_NAME_MAX)
			return name;
	return "";
}

/*
 * The pod key into the request's "container": both annotations, not of the
 * pod's infra container (its pause process has no policy to keep; it gets the
 * annotation's). An exit status: a key that is there but not valid refuses
 * the start (the restart would come back with the install policy).
 */
static int cli_oci_pod_key(const struct cli_oci_state *state, json_t *container)
{
	const char *uid = cli_oci_annotation(state, CLI_OCI_POD_UID);
	const char *name = cli_oci_annotation(state, CLI_OCI_POD_CONTAINER);
	const char *type = cli_oci_annotation(state, CLI_OCI_CONTAINER_TYPE);

	if (!uid || !name || (type && !strcmp(type, "sandbox")))
		return CLI_EXIT_OK;
	if (!container_pod_key_valid(uid) || !container_pod_key_valid(name)) {
		cli_error("oci-hook: container %.12s: %s or %s is not 1 to 63 letters, digits, "
			  "'.', '_' or '-'; refusing the start",
			  state->id, CLI_OCI_POD_UID, CLI_OCI_POD_CONTAINER);
		return CLI_EXIT_FAILED;
	}
	json_object_set_new(container, "pod_uid", json_string(uid));
	json_object_set_new(container, "pod_container", json_string(name));
	return CLI_EXIT_OK;
}

/* {"op": "attach", "cgroup", "netns", "container", and the policy or its name}. */
static int cli_oci_request(struct cli_oci_state *state, json_t **out)
{
	char cgroup[PATH_MAX], netns[64], err[512];
	json_t *request;
	struct policy policy;
	int status;

	status = cgroup_of_pid((pid_t)state->pid, cgroup, sizeof(cgroup));
	if (status) {
		cli_error("oci-hook: container %.12s: no cgroup v2 for its pid %lld: %s", state->id,
			  state->pid, strerror(-status));
		return CLI_EXIT_FAILED;
	}
	snprintf(netns, sizeof(netns), "/proc/%lld/ns/net", state->pid);
	request = json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:s}}", "op", "attach", "cgroup", cgroup,
			    "netns", netns, "container", "id", state->id, "name",
			    cli_oci_name(state), "runtime", state->runtime);
	if (!request)
		return CLI_EXIT_FAILED;
	if (cli_oci_pod_key(state, json_object_get(request, "container"))) {
		json_decref(request);
		return CLI_EXIT_FAILED;
	}
	if (state->policy && strchr(state->policy, '/')) {
		if (policy_load_file(state->policy, &policy, err, sizeof(err))) {
			cli_error("oci-hook: container %.12s: policy %s does not parse: %s",
				  state->id, state->policy, err);
			json_decref(request);
			return CLI_EXIT_FAILED;
		}
		json_object_set_new(request, "policy", policy_to_json(&policy));
		policy_free(&policy);
	} else if (state->policy) {
		json_object_set_new(request, "policy_name", json_string(state->policy));
	}
	*out = request;
	return CLI_EXIT_OK;
}

/* The daemon's answer; without a selection, "no record" is not ours to refuse. */
static int cli_oci_verdict(const struct cli_oci_state *state, json_t *reply)
{
	if (json_is_true(json_object_get(reply, "ok")))
		return CLI_EXIT_OK;
	if (!state->policy && !strcmp(cli_reply_code(reply), "no_record"))
		return CLI_EXIT_OK;
	cli_error("oci-hook: container %.12s%s%s: refusing the start: %s: %s", state->id,
		  state->policy ? " with policy " : "", state->policy ? state->policy : "",
		  cli_reply_code(reply),
		  json_string_value(json_object_get(json_object_get(reply, "error"), "message")));
	return CLI_EXIT_FAILED;
}

int cli_oci_hook(const struct cli_command *command, int argc, char **argv)
{
	struct cli_oci_state state = {0};
	json_t *request = NULL, *reply = NULL;
	char err[PATH_MAX + 256];
	struct cli_args args;
	int status;

	cli_args_init(&args);
	status = cli_parse(command, argc, argv, &args, cli_oci_option, &state);
	if (!status)
		status = cli_oci_read_state(&state);
	if (!status)
		status = cli_oci_request(&state, &request);
	if (status)
		goto cleanup;
	if (client_request(client_socket_path(args.socket), request, &reply, err, sizeof(err))) {
		/* Fail closed for a container that asked for a policy; the guard covers the rest.
		 */
		status = state.policy ? CLI_EXIT_FAILED : CLI_EXIT_OK;
		cli_error("oci-hook: container %.12s: the bfbpf daemon is unreachable (%s)%s",
			  state.id, err,
			  state.policy ? "; refusing the start" : "; no policy asked, starting");
		goto cleanup;
	}
	status = cli_oci_verdict(&state, reply);
cleanup:
	json_decref(reply);
	json_decref(request);
	json_decref(state.config);
	json_decref(state.root);
	cli_args_free(&args);
	return status;
}
