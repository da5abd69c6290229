// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* guard and unguard: a cgroup subtree closed by default (one request to the daemon each). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli_commands.h"
#include "client.h"

/* A guard without a policy given closes its subtree: no-network. */
#define CLI_GUARD_DEFAULT_MODE "no-network"

static void cli_guard_print(const char *op, json_t *reply)
{
	if (!strcmp(op, "unguard")) {
		printf("unguarded %s\n", json_string_value(json_object_get(reply, "cgroup")));
		return;
	}
	printf("%s %s (generation %lld, %lld entries, digest %s)\n",
	       json_is_true(json_object_get(reply, "created")) ? "guarding" : "guard updated",
	       json_string_value(json_object_get(reply, "cgroup")),
	       json_integer_value(json_object_get(reply, "generation")),
	       json_integer_value(json_object_get(reply, "entries")),
	       json_string_value(json_object_get(reply, "digest")));
}

static json_t *cli_guard_request(const char *op, const char *cgroup, const struct policy *policy)
{
	json_t *request = json_pack("{s:s, s:s}", "op", op, "cgroup", cgroup);

	if (request && policy)
		json_object_set_new(request, "policy", policy_to_json(policy));
	return request;
}

int cli_guard(const struct cli_command *command, int argc, char **argv)
{
	json_t *request = NULL, *reply = NULL;
	char cgroup[PATH_MAX], err[PATH_MAX + 256];
	bool have_policy = false;
	struct cli_args args;
	struct policy policy;
	int status;

	cli_args_init(&args);
	status = cli_parse(command, argc, argv, &args, NULL, NULL);
	if (status)
		goto cleanup;
	if (command->groups & CLI_GROUP_POLICY) {
		if (!args.policy.file && !args.policy.mode)
			args.policy.mode = CLI_GUARD_DEFAULT_MODE;
		status = cli_policy_build(&args.policy, &policy);
		if (status)
			goto cleanup;
		have_policy = true;
	}
	status = cli_target_resolve(&args.target, cgroup, sizeof(cgroup), true);
	if (status)
		goto cleanup;
	request = cli_guard_request(command->name, cgroup, have_policy ? &policy : NULL);
	if (!request) {
		cli_error("out of memory");
		status = CLI_EXIT_FAILED;
		goto cleanup;
	}
	if (client_request(client_socket_path(args.socket), request, &reply, err, sizeof(err))) {
		cli_error("%s", err);
		status = CLI_EXIT_FAILED;
		goto cleanup;
	}
	status = cli_reply_exit(reply);
	if (args.json)
		cli_print_json(reply);
	else if (!status)
		cli_guard_print(command->name, reply);
	if (status)
		cli_reply_error(reply);
cleanup:
	json_decref(reply);
	json_decref(request);
	if (have_policy)
		policy_free(&policy);
	cli_args_free(&args);
	return status;
}
