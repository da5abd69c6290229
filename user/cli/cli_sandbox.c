// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* attach, update, detach, status and verify: one request to the daemon each. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_commands.h"
#include "client.h"

enum {
	CLI_SANDBOX_NETNS = CLI_OPTION_OWN,
	CLI_SANDBOX_MAX_AGE,
	CLI_SANDBOX_KILL_HOLDERS,
};

#define CLI_SANDBOX_KILL_HOLDERS_OPTION                                                            \
	{                                                                                          \
		"kill-holders", NULL, CLI_SANDBOX_KILL_HOLDERS, 0,                                 \
			"kill the sandbox's processes that hold a socket the mode refuses "        \
			"(packet, XDP, "                                                           \
			"vsock, raw)"                                                              \
	}

const struct cli_option cli_attach_options[] = {
	{"netns", "PATH", CLI_SANDBOX_NETNS, 0,
	 "the sandbox's network namespace (/proc/PID/ns/net, /run/netns/NAME); "
	 "with --pid, that process's"},
	CLI_SANDBOX_KILL_HOLDERS_OPTION,
	{0},
};

const struct cli_option cli_update_options[] = {
	CLI_SANDBOX_KILL_HOLDERS_OPTION,
	{0},
};

const struct cli_option cli_verify_options[] = {
	{"max-age", "SECONDS", CLI_SANDBOX_MAX_AGE, 0,
	 "the daemon's last result will do if it is at most this old"},
	{0},
};

struct cli_sandbox_args {
	const char *netns;
	long long max_age; /* -1 unless given */
	bool kill_holders;
};

static int cli_sandbox_option(struct cli_args *args, int id, const char *value, void *ctx)
{
	struct cli_sandbox_args *own = ctx;
	struct stat st;

	(void)args;
	switch (id) {
	case CLI_SANDBOX_MAX_AGE:
		return cli_number_option("--max-age", value, 0, INT_MAX, "seconds", &own->max_age);
	case CLI_SANDBOX_KILL_HOLDERS:
		own->kill_holders = true;
		return CLI_EXIT_OK;
	case CLI_SANDBOX_NETNS:
		if (stat(value, &st))
			return cli_usage_error("--netns %s: not a network namespace file", value);
		own->netns = value;
		return CLI_EXIT_OK;
	}
	return CLI_EXIT_USAGE;
}

static json_t *cli_sandbox_request(const char *op, const char *cgroup, const struct policy *policy,
				   const struct cli_sandbox_args *own,
				   const struct cli_target *target)
{
	json_t *request = json_pack("{s:s}", "op", op), *container;
	pid_t pid = target->container ? target->info->pid : target->pid;
	char netns[64];

	if (!request)
		return NULL;
	container = cli_container_json(target);
	if (container)
		json_object_set_new(request, "container", container);
	if (cgroup[0])
		json_object_set_new(request, "cgroup", json_string(cgroup));
	if (policy)
		json_object_set_new(request, "policy", policy_to_json(policy));
	if (own->netns) {
		json_object_set_new(request, "netns", json_string(own->netns));
	} else if (pid && !strcmp(op, "attach")) {
		/* --pid and --container imply that process's network namespace. */
		snprintf(netns, sizeof(netns), "/proc/%d/ns/net", (int)pid);
		json_object_set_new(request, "netns", json_string(netns));
	}
	if (own->max_age >= 0)
		json_object_set_new(request, "max_age", json_integer(own->max_age));
	if (own->kill_holders)
		json_object_set_new(request, "kill_holders", json_true());
	return request;
}

static void cli_sandbox_print_status(json_t *reply)
{
	json_t *item;
	size_t i;

	json_array_foreach(json_object_get(reply, "sandboxes"), i, item)
	{
		json_t *policy = json_object_get(item, "policy");
		json_t *container = json_object_get(item, "container");
		json_t *guard = json_object_get(item, "guard");

		if (guard)
			printf("guard ");
		printf("%s  id %lld  %s  generation %lld  entries %lld  digest %s",
		       json_string_value(json_object_get(item, "cgroup")),
		       json_integer_value(json_object_get(item, "cgroup_id")),
		       policy ? json_string_value(json_object_get(policy, "network_mode"))
			      : "policy-unknown",
		       json_integer_value(json_object_get(item, "generation")),
		       json_integer_value(json_object_get(item, "entries")),
		       json_string_value(json_object_get(item, "digest")));
		if (guard)
			printf("  refused %lld  registered below %lld",
			       json_integer_value(json_object_get(guard, "refused")),
			       json_integer_value(json_object_get(guard, "registered_below")));
		printf("\n");
		if (container)
			printf("  container %s %s (%s)\n",
			       json_string_value(json_object_get(container, "runtime")),
			       json_string_value(json_object_get(container, "name")),
			       json_string_value(json_object_get(container, "id")));
	}
	if (!json_array_size(json_object_get(reply, "sandboxes")))
		printf("no sandboxes attached\n");
}

static void cli_sandbox_print_verify(json_t *reply)
{
	json_t *item;
	size_t i;

	json_array_foreach(json_object_get(reply, "checks"), i, item)
		printf("%-4s %-32s %s\n", json_is_true(json_object_get(item, "ok")) ? "ok" : "FAIL",
		       json_string_value(json_object_get(item, "name")),
		       json_string_value(json_object_get(item, "detail")));
	printf("lockdown %s\n", json_is_true(json_object_get(reply, "lockdown_complete"))
					? "complete"
					: "INCOMPLETE");
}

static void cli_sandbox_print_human(const char *op, json_t *reply)
{
	if (!strcmp(op, "status")) {
		cli_sandbox_print_status(reply);
	} else if (!strcmp(op, "verify")) {
		cli_sandbox_print_verify(reply);
	} else if (!strcmp(op, "detach") && json_object_get(reply, "forgotten")) {
		printf("forgot container %s\n",
		       json_string_value(json_object_get(reply, "forgotten")));
	} else if (!strcmp(op, "detach")) {
		printf("detached %s\n", json_string_value(json_object_get(reply, "cgroup")));
	} else {
		printf("%s %s (generation %lld, %lld entries, digest %s)\n",
		       !strcmp(op, "attach") ? "attached" : "updated",
		       json_string_value(json_object_get(reply, "cgroup")),
		       json_integer_value(json_object_get(reply, "generation")),
		       json_integer_value(json_object_get(reply, "entries")),
		       json_string_value(json_object_get(reply, "digest")));
	}
}

/* Prints the reply; its exit status (verify: 0 only if the lockdown is complete). */
static int cli_sandbox_report(const char *op, json_t *reply, const char *cgroup, bool json)
{
	bool ok = json_is_true(json_object_get(reply, "ok"));
	int status = cli_reply_exit(reply);

	if (!status && !strcmp(op, "verify") &&
	    !json_is_true(json_object_get(reply, "lockdown_complete")))
		status = CLI_EXIT_FAILED;
	if (json)
		cli_print_json(reply);
	else if (ok)
		cli_sandbox_print_human(op, reply);
	if (!ok)
		cli_reply_error(reply);
	else if (status)
		cli_error("lockdown of %s is not complete: see the failed checks above", cgroup);
	return status;
}

int cli_sandbox(const struct cli_command *command, int argc, char **argv)
{
	struct cli_sandbox_args own = {.max_age = -1};
	json_t *request = NULL, *reply = NULL;
	char cgroup[PATH_MAX], err[PATH_MAX + 256];
	bool have_policy = false;
	struct cli_args args;
	struct policy policy;
	int status, result;

	cli_args_init(&args);
	status = cli_parse(command, argc, argv, &args, cli_sandbox_option, &own);
	if (status)
		goto cleanup;
	if (command->groups & CLI_GROUP_POLICY) {
		status = cli_policy_build(&args.policy, &policy);
		if (status)
			goto cleanup;
		have_policy = true;
	}
	args.target.stopped_ok = !strcmp(command->name, "detach");
	status = cli_target_resolve(&args.target, cgroup, sizeof(cgroup),
				    command->groups & CLI_GROUP_TARGET_REQUIRED);
	if (status)
		goto cleanup;
	request = cli_sandbox_request(command->name, cgroup, have_policy ? &policy : NULL, &own,
				      &args.target);
	if (!request) {
		status = cli_fail(CLI_EXIT_FAILED, "internal", "out of memory");
		goto cleanup;
	}
	result = client_request(client_socket_path(args.socket), request, &reply, err, sizeof(err));
	if (result) {
		status = cli_fail(CLI_EXIT_FAILED, client_error_code(result), "%s", err);
		goto cleanup;
	}
	status = cli_sandbox_report(command->name, reply, cgroup, args.json);
cleanup:
	json_decref(reply);
	json_decref(request);
	if (have_policy)
		policy_free(&policy);
	cli_args_free(&args);
	return status;
}
