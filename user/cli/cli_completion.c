// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bfbpf completion bash: the bash completion script, generated from the
 * command table at each call, so that completion and the parser cannot
 * drift apart (make builds build/bfbpf.bash from it; make install installs it).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_commands.h"

/*
 * What an option's value completes to, by the argument's name in the table:
 * files for paths, directories, groups, pids, and the fixed words of the
 * enumerated values; nothing for numbers, addresses and names.
 */
static const char cli_completion_values[] =
	"_bfbpf_values() {\n"
	"\tlocal cur=$1 arg=$2\n"
	"\tcase $arg in\n"
	"\tMODE) mapfile -t COMPREPLY < <(compgen -W 'public no-network allowlist' -- \"$cur\") "
	";;\n"
	"\tRUNTIME) mapfile -t COMPREPLY < <(compgen -W 'docker podman' -- \"$cur\") ;;\n"
	"\tLEVEL) mapfile -t COMPREPLY < <(compgen -W 'error warn info debug' -- \"$cur\") ;;\n"
	"\tGROUP) mapfile -t COMPREPLY < <(compgen -g -- \"$cur\") ;;\n"
	"\tUSER*) mapfile -t COMPREPLY < <(compgen -u -- \"$cur\") ;;\n"
	"\tPID) mapfile -t COMPREPLY < <(cd /proc 2>/dev/null && compgen -G \"$cur*\" | "
	"grep -E '^[0-9]+$') ;;\n"
	"\tDIR) mapfile -t COMPREPLY < <(compgen -d -- \"$cur\") ;;\n"
	"\tPATH | FILE*) mapfile -t COMPREPLY < <(compgen -f -- \"$cur\") ;;\n"
	"\t*) COMPREPLY=() ;;\n"
	"\tesac\n"
	"}\n\n";

/*
 * The words before the cursor: an option's value is skipped; "--" or the
 * first operand starts the command of a command that takes one (run). Then
 * the value of the option before the cursor, the command's words, or its
 * options.
 */
static const char cli_completion_body[] =
	"\tlocal i=2 word start=0 arg\n"
	"\twhile [ \"$i\" -lt \"$COMP_CWORD\" ]; do\n"
	"\t\tword=${COMP_WORDS[i]}\n"
	"\t\tif [ \"$takes_command\" = 1 ] && { [ \"$word\" = -- ] || [ \"${word#-}\" = \"$word\" "
	"]; "
	"}; then\n"
	"\t\t\tstart=$i\n"
	"\t\t\t[ \"$word\" = -- ] && start=$((i + 1))\n"
	"\t\t\tbreak\n"
	"\t\tfi\n"
	"\t\t[ -n \"$(_bfbpf_arg \"$cmd\" \"$word\")\" ] && i=$((i + 1))\n"
	"\t\ti=$((i + 1))\n"
	"\tdone\n"
	"\tif [ \"$start\" -gt 0 ]; then\n"
	"\t\tif [ \"$COMP_CWORD\" -eq \"$start\" ]; then\n"
	"\t\t\tmapfile -t COMPREPLY < <(compgen -c -- \"$cur\")\n"
	"\t\telse\n"
	"\t\t\tmapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
	"\t\tfi\n"
	"\t\treturn 0\n"
	"\tfi\n"
	"\targ=$(_bfbpf_arg \"$cmd\" \"${COMP_WORDS[COMP_CWORD - 1]}\")\n"
	"\tif [ -n \"$arg\" ] && [ \"$COMP_CWORD\" -gt 2 ]; then\n"
	"\t\t_bfbpf_values \"$cur\" \"$arg\"\n"
	"\telif [ -n \"$words\" ] && [ \"${cur#-}\" = \"$cur\" ]; then\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -W \"$words\" -- \"$cur\")\n"
	"\telif [ \"$takes_command\" = 1 ] && [ \"${cur#-}\" = \"$cur\" ]; then\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -c -- \"$cur\")\n"
	"\telse\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -W \"$opts\" -- \"$cur\")\n"
	"\tfi\n"
	"\treturn 0\n"
	"}\n\n"
	"complete -F _bfbpf bfbpf\n";

/* A word in single quotes: the table's strings hold no quote, but stay safe if one does. */
static void cli_completion_quoted(FILE *out, const char *word)
{
	fputc('\'', out);
	for (; *word; word++) {
		if (*word == '\'')
			fputs("'\\''", out);
		else
			fputc(*word, out);
	}
	fputc('\'', out);
}

struct cli_completion_ctx {
	FILE *out;
	const char *command;
};

static void cli_completion_option(const struct cli_option *option, void *ctx)
{
	fprintf(((struct cli_completion_ctx *)ctx)->out, " --%s", option->name);
}

/* One case of _bfbpf_arg: the argument's name of an option that takes one. */
static void cli_completion_arg(const struct cli_option *option, void *ctx)
{
	struct cli_completion_ctx *c = ctx;

	if (!option->arg)
		return;
	fprintf(c->out, "\t'%s --%s') echo ", c->command, option->name);
	cli_completion_quoted(c->out, option->arg);
	fputs(" ;;\n", c->out);
}

/* _bfbpf_arg COMMAND WORD: the argument's name if WORD is an option of COMMAND with a value. */
static void cli_completion_args(FILE *out)
{
	const struct cli_command *command;
	struct cli_completion_ctx ctx = {.out = out};

	fputs("_bfbpf_arg() {\n\tcase \"$1 $2\" in\n", out);
	for (size_t i = 0; (command = cli_command_at(i)); i++) {
		ctx.command = command->name;
		cli_command_options(command, cli_completion_arg, &ctx);
	}
	fputs("\tesac\n}\n\n", out);
}

/* The case of each command: its options, its operands' words, whether a command follows. */
static void cli_completion_commands(FILE *out)
{
	const struct cli_command *command;
	struct cli_completion_ctx ctx = {.out = out};

	fputs("\tcase $cmd in\n", out);
	for (size_t i = 0; (command = cli_command_at(i)); i++) {
		fprintf(out, "\t%s)\n\t\topts='", command->name);
		cli_command_options(command, cli_completion_option, &ctx);
		fputs("'\n", out);
		if (command->run == cli_completion)
			fputs("\t\twords=bash\n", out);
		if (command->groups & CLI_GROUP_COMMAND)
			fputs("\t\ttakes_command=1\n", out);
		fputs("\t\t;;\n", out);
	}
	fputs("\thelp)\n\t\t[ \"$COMP_CWORD\" -eq 2 ] && mapfile -t COMPREPLY < <(compgen -W "
	      "\"$commands\" -- \"$cur\")\n\t\treturn 0\n\t\t;;\n",
	      out);
	fputs("\t*) return 0 ;;\n\tesac\n", out);
}

static void cli_completion_bash(FILE *out)
{
	const struct cli_command *command;

	fprintf(out,
		"# bash completion for bfbpf(8), generated by 'bfbpf completion bash' from the "
		"command table\n# of bfbpf %s: regenerate it rather than edit it.\n"
		"# shellcheck shell=bash\n\n",
		BFBPF_VERSION);
	fputs(cli_completion_values, out);
	cli_completion_args(out);
	fputs("_bfbpf() {\n\tlocal cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}\n"
	      "\tlocal opts='' words='' takes_command=0 commands='",
	      out);
	for (size_t i = 0; (command = cli_command_at(i)); i++)
		fprintf(out, "%s ", command->name);
	fputs("help'\n\tCOMPREPLY=()\n\tif [ \"$COMP_CWORD\" -le 1 ]; then\n"
	      "\t\tmapfile -t COMPREPLY < <(compgen -W \"$commands --help --version\" -- "
	      "\"$cur\")\n\t\treturn 0\n\tfi\n",
	      out);
	cli_completion_commands(out);
	fputs(cli_completion_body, out);
}

/* bfbpf completion bash: the one operand is the shell; the parser sees the rest (--help). */
int cli_completion(const struct cli_command *command, int argc, char **argv)
{
	struct cli_args args;
	int status;

	if (argc == 2 && !strcmp(argv[1], "bash")) {
		cli_completion_bash(stdout);
		return fflush(stdout)
			       ? cli_fail(CLI_EXIT_FAILED, "internal", "stdout: write failed")
			       : CLI_EXIT_OK;
	}
	cli_args_init(&args);
	status = cli_parse(command, argc, argv, &args, NULL, NULL);
	if (!status)
		status = cli_usage_error("completion: expected one shell: bfbpf completion bash");
	cli_args_free(&args);
	return status;
}
