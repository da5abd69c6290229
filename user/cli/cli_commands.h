/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The commands' entry points and their own options, for the one table in
 * cli.c. Only the dispatcher and the file of each command include this: the
 * commands share code through cli_options.h, never through the dispatcher.
 */
#ifndef BFBPF_CLI_COMMANDS_H
#define BFBPF_CLI_COMMANDS_H

#include "cli_options.h"

/* cli_daemon.c */
int cli_daemon(const struct cli_command *command, int argc, char **argv);
extern const struct cli_option cli_daemon_options[];

/* cli_sandbox.c: attach, update, detach, status and verify, one request each to the daemon. */
int cli_sandbox(const struct cli_command *command, int argc, char **argv);
extern const struct cli_option cli_attach_options[];
extern const struct cli_option cli_update_options[];
extern const struct cli_option cli_verify_options[];

/* run.c */
int cli_run(const struct cli_command *command, int argc, char **argv);
extern const struct cli_option cli_run_options[];

/* cli_resolve.c */
int cli_resolve(const struct cli_command *command, int argc, char **argv);

/* check.c */
int cli_check(const struct cli_command *command, int argc, char **argv);

/* cli_oci.c: the OCI createRuntime hook. */
int cli_oci_hook(const struct cli_command *command, int argc, char **argv);
extern const struct cli_option cli_oci_hook_options[];

/* cli_docker.c: Docker's runtime wrapper that adds the hook, then runs runc. */
int cli_docker_runtime(const struct cli_command *command, int argc, char **argv);

/* cli_log.c */
int cli_log(const struct cli_command *command, int argc, char **argv);
extern const struct cli_option cli_log_options[];
int cli_metrics(const struct cli_command *command, int argc, char **argv);

/* cli_guard.c: guard and unguard. */
int cli_guard(const struct cli_command *command, int argc, char **argv);

/* cli_completion.c: the bash completion script, from the table (cli.h's cli_command_at). */
int cli_completion(const struct cli_command *command, int argc, char **argv);

#endif /* BFBPF_CLI_COMMANDS_H */
