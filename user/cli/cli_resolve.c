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

#include "cli.h"
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

int cli_resolve(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_POLICY_LONG_OPTIONS,
		{"dns-server", required_argument, NULL, CLI_OPTION_DNS_SERVER},
		{"json", no_argument, NULL, CLI_OPTION_JSON},
		{"help", no_argument, NULL, CLI_OPTION_HELP},
		{0},
	};
	struct resolver_options resolver_options = {0};
	struct cli_policy_args policy_args = {0};
	struct sandbox_registry registry = {0};
	struct resolver *resolver = NULL;
	struct allowset set = {0};
	struct sandbox *view = NULL;
	bool json = false, have_policy = false;
	json_t *names = NULL, *out = NULL;
	int opt, status;

	names_config_default(&resolver_options.names);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (cli_policy_option(&policy_args, opt, optarg))
			continue;
		if (opt == CLI_OPTION_JSON) {
			json = true;
		} else if (opt == CLI_OPTION_DNS_SERVER &&
			   resolver_options.server_count < RESOLVER_MAX_SERVERS) {
			resolver_options.servers[resolver_options.server_count++] = optarg;
		} else if (opt == CLI_OPTION_HELP) {
			printf("usage: bfbpf resolve POLICY [--dns-server ADDR[:PORT]]... "
			       "[--json]\n");
			status = CLI_EXIT_OK;
			goto cleanup;
		} else {
			cli_error("resolve: bad option %s (see 'bfbpf --help')", argv[optind - 1]);
			status = CLI_EXIT_USAGE;
			goto cleanup;
		}
	}
	view = calloc(1, sizeof(*view));
	status = view ? cli_policy_build(&policy_args, &view->policy) : CLI_EXIT_FAILED;
	if (status)
		goto cleanup;
	have_policy = true;
	view->policy_known = true;
	status = CLI_EXIT_FAILED;
	if (resolver_open(&resolver_options, -1, &resolver) ||
	    resolver_policy_ref(resolver, &view->policy)) {
		cli_error("cannot start the resolver");
		goto cleanup;
	}
	resolver_wait_settled(resolver, &view->policy, RESOLVER_SETTLE_TIMEOUT_MS);
	registry.resolver = resolver;
	if (sandbox_allowset_compute(&registry, &view->policy, NULL, 0, &set))
		goto cleanup;
	names = sandbox_names_to_json(&registry, view);
	out = json_pack("{s:b, s:O, s:o}", "ok", 1, "names", names, "entries",
			resolve_entries_json(&set));
	if (json) {
		char *text = json_dumps(out, JSON_COMPACT);

		printf("%s\n", text ? text : "{}");
		free(text);
	} else {
		resolve_print_human(names, json_object_get(out, "entries"));
	}
	status = CLI_EXIT_OK;
cleanup:
	json_decref(out);
	json_decref(names);
	allowset_free(&set);
	if (have_policy)
		policy_free(&view->policy);
	free(view);
	resolver_close(resolver);
	cli_policy_args_free(&policy_args);
	return status;
}
