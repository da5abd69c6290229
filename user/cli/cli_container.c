// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --container NAME|ID: the runtime's client says which process the
 * container runs; its cgroup v2 and network namespace are that process's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli_options.h"
#include "lib/cgroup.h"
#include "lib/container.h"

int cli_container_resolve(const struct cli_target *target, char *out, size_t size)
{
	struct container_info *info = target->info;
	char runtime[CONTAINER_RUNTIME_MAX], err_text[512];
	int err;

	err = container_runtime_pick(target->runtime, runtime, sizeof(runtime));
	if (err == -EEXIST)
		return cli_usage_error("--container %s: both docker and podman are installed: "
				       "say which with --runtime",
				       target->container);
	if (err) {
		cli_error("no_runtime: --container %s: neither docker nor podman is on PATH",
			  target->container);
		return CLI_EXIT_FAILED;
	}
	err = container_inspect(runtime, target->container, info, err_text, sizeof(err_text));
	if (err) {
		cli_error("no_container: %s", err_text);
		return CLI_EXIT_FAILED;
	}
	if (!info->pid && target->stopped_ok) {
		out[0] = '\0'; /* the daemon forgets the record of a stopped container */
		return CLI_EXIT_OK;
	}
	if (!info->pid) {
		cli_error("no_container: %s container %s (%.12s) is not running: it has no cgroup "
			  "to confine",
			  runtime, info->name, info->id);
		return CLI_EXIT_FAILED;
	}
	err = cgroup_of_pid(info->pid, out, size);
	if (err) {
		cli_error("no_container: %s container %s: cannot find the cgroup v2 of its process "
			  "%d: %s",
			  runtime, info->name, (int)info->pid, strerror(-err));
		return CLI_EXIT_FAILED;
	}
	return CLI_EXIT_OK;
}

json_t *cli_container_json(const struct cli_target *target)
{
	if (!target->container || !target->info->id[0])
		return NULL;
	return json_pack("{s:s, s:s, s:s}", "id", target->info->id, "name", target->info->name,
			 "runtime", target->info->runtime);
}
