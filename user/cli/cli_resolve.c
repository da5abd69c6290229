// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bfbpf resolve: a dry run for task authors. Resolves a policy's names as
 * the daemon would (same resolver, same range filter) and prints what would
 * be programmed, without attaching anything.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_commands.h"
#include "lib/log.h"
#include "dns/resolver.h"
#include "sandbox/sandbox.h"

static json_t *resolve_entries_json(const struct allowset *set)
{
	json_t *list = json_array();
	char text[POLICY_ENTRY_TEXT_MAX];

	for (size_t i = 0; i < set->count; i++) {
		struct policy_entry entry = {.kind = POLICY_ENTRY_ADDRESS,
					     .prefix_len = set->entries[i].prefix_len,
					     .port = set->entries[i].port};

		memcpy(&entry.addr, set->entries[i].addr, 16);
		if (!policy_entry_format(&entry, text, sizeof(text)))
			json_array_append_new(list, json_string(text));
	}
	return list;
}

static void resolve_print_human(json_t *names, json_t *entries)
{
	json_t *name, *value;
	size_t i, j;

	json_array_foreach(names, i, name)
	{
		printf("%s (%s)%s%s\n", json_string_value(json_object_get(name, "name")),
		       json_string_value(json_object_get(name, "role")),
		       json_is_string(json_object_get(name, "last_error")) ? ": " : "",
		       json_is_string(json_object_get(name, "last_error"))
			       ? json_string_value(json_object_get(name, "last_error"))
			       : "");
		json_array_foreach(json_object_get(name, "addresses"), j, value)
			printf("  %s\n", json_string_value(value));
		json_array_foreach(json_object_get(name, "filtered"), j, value)
			printf("  %s  (not programmed: a private or reserved range)\n",
			       json_string_value(value));
	}
	printf("programmed entries (%zu):\n", json_array_size(entries));
	json_array_foreach(entries, i, value) printf("  %s\n", json_string_value(value));
}

int cli_resolve(const struct cli_command *command, int argc, char **argv)
{
	struct sandbox_registry registry = {0};
	struct resolver *resolver = NULL;
	json_t *names = NULL, *out = NULL;
	struct allowset set = {0};
	struct sandbox *view = NULL;
	bool have_policy = false;
	struct cli_args args;
	int status;

	cli_args_init(&args);
	status = cli_parse(command, argc, argv, &args, NULL, NULL);
	if (status)
		goto cleanup;
	view = calloc(1, sizeof(*view));
	status = view ? cli_policy_build(&args.policy, &view->policy)
		      : cli_fail(CLI_EXIT_FAILED, "internal", "out of memory");
	if (status)
		goto cleanup;
	have_policy = true;
	view->policy_known = true;
	if (resolver_open(&args.resolver, -1, &resolver) ||
	    resolver_policy_ref(resolver, &view->policy)) {
		status = cli_fail(CLI_EXIT_FAILED, "internal", "cannot start the resolver");
		goto cleanup;
	}
	resolver_wait_settled(resolver, &view->policy, RESOLVER_SETTLE_TIMEOUT_MS);
	registry.resolver = resolver;
	if (sandbox_allowset_compute(&registry, &view->policy, NULL, 0, &set)) {
		status = cli_fail(CLI_EXIT_FAILED, "internal", "cannot compute the allow entries");
		goto cleanup;
	}
	names = sandbox_names_to_json(&registry, view);
	out = json_pack("{s:b, s:O, s:o}", "ok", 1, "names", names, "entries",
			resolve_entries_json(&set));
	if (args.json)
		cli_print_json(out);
	else
		resolve_print_human(names, json_object_get(out, "entries"));
	status = CLI_EXIT_OK;
cleanup:
	json_decref(out);
	json_decref(names);
	allowset_free(&set);
	if (have_policy)
		policy_free(&view->policy);
	free(view);
	resolver_close(resolver);
	cli_args_free(&args);
	return status;
}
