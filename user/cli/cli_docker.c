// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bfbpf docker-runtime RUNC-ARGS...: a runtime for Docker's daemon.json
 * "runtimes" (Debian's docker.io 20.10 has no annotations and no hook
 * configuration). On `create --bundle B` it adds `bfbpf oci-hook --runtime
 * docker` to B/config.json's createRuntime hooks, then it becomes runc with
 * the same arguments. The hook selects the policy from BFBPF_POLICY in the
 * container's environment (docs/runner-integration.md, "Docker").
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_commands.h"

#define CLI_DOCKER_RUNC "runc"

/* The bundle of a `create`, or NULL for every other command. */
static const char *cli_docker_bundle(int argc, char **argv)
{
	bool create = false;
	const char *bundle = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "create"))
			create = true;
		else if ((!strcmp(argv[i], "--bundle") || !strcmp(argv[i], "-b")) && i + 1 < argc)
			bundle = argv[++i];
		else if (!strncmp(argv[i], "--bundle=", 9))
			bundle = argv[i] + 9;
	}
	return create ? (bundle ? bundle : ".") : NULL;
}

static json_t *cli_docker_hook(void)
{
	const char *socket = getenv("BFBPF_SOCKET");
	char self[PATH_MAX];
	ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
	json_t *hook;

	if (length <= 0)
		return NULL;
	self[length] = '\0';
	hook = json_pack("{s:s, s:[s, s, s, s]}", "path", self, "args", "bfbpf", "oci-hook",
			 "--runtime", "docker");
	if (hook && socket && socket[0]) {
		json_array_append_new(json_object_get(hook, "args"), json_string("--socket"));
		json_array_append_new(json_object_get(hook, "args"), json_string(socket));
	}
	return hook;
}

/* Appends the hook to BUNDLE/config.json (atomically: a new file renamed over it). */
static int cli_docker_add_hook(const char *bundle)
{
	char path[PATH_MAX], temporary[PATH_MAX + 16];
	json_t *config, *hooks, *stage, *hook = NULL;
	int err = -EINVAL;

	snprintf(path, sizeof(path), "%s/config.json", bundle);
	snprintf(temporary, sizeof(temporary), "%s.bfbpf.tmp", path);
	config = json_load_file(path, 0, NULL);
	if (!json_is_object(config))
		goto cleanup;
	hooks = json_object_get(config, "hooks");
	if (!hooks) {
		hooks = json_object();
		json_object_set_new(config, "hooks", hooks);
	}
	stage = json_object_get(hooks, "createRuntime");
	if (!stage) {
		stage = json_array();
		json_object_set_new(hooks, "createRuntime", stage);
	}
	hook = cli_docker_hook();
	if (!json_is_object(hooks) || !json_is_array(stage) || !hook)
		goto cleanup;
	err = json_array_append(stage, hook) ? -ENOMEM : 0;
	if (!err && (json_dump_file(config, temporary, JSON_COMPACT) || rename(temporary, path)))
		err = -EIO;
cleanup:
	json_decref(hook);
	json_decref(config);
	return err;
}

int cli_docker_runtime(const struct cli_command *command, int argc, char **argv)
{
	const char *runc = getenv("BFBPF_RUNC");
	const char *bundle;

	if (argc > 1 && !strcmp(argv[1], "--help")) {
		cli_print_command_help(stdout, command);
		return CLI_HELP_SHOWN;
	}
	bundle = cli_docker_bundle(argc, argv);
	/* Fail closed: a container that cannot get the hook does not start. */
	if (bundle && cli_docker_add_hook(bundle)) {
		cli_error("docker-runtime: cannot add the bfbpf hook to %s/config.json", bundle);
		return CLI_EXIT_FAILED;
	}
	if (!runc || !runc[0])
		runc = CLI_DOCKER_RUNC;
	argv[0] = (char *)runc;
	execvp(runc, argv);
	cli_error("docker-runtime: cannot run %s: %s", runc, strerror(errno));
	return CLI_EXIT_FAILED;
}
