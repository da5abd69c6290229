/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The command line (docs: "CLI contract"): the dispatcher and its table of commands. */
#ifndef BFBPF_CLI_H
#define BFBPF_CLI_H

#include <stddef.h>

struct cli_command; /* cli_options.h */

/* The one version string; a build may set it with -DBFBPF_VERSION='"x.y.z"'. */
#ifndef BFBPF_VERSION
#define BFBPF_VERSION "0.3.0"
#endif

/* bfbpf COMMAND ...: returns the process's exit status. */
int cli_main(int argc, char **argv);

/*
 * The table, for what is generated from it (completion, man-page checks):
 * the index-th command in help order, NULL past the last. Their options come
 * from cli_command_options().
 */
const struct cli_command *cli_command_at(size_t index);
const struct cli_command *cli_command_find(const char *name);

#endif /* BFBPF_CLI_H */
