// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The man pages against the CLI's own tables, both ways: every command and
 * every option the CLI accepts appears in docs/man/bfbpf.8.scd, in the
 * section of each command that takes it, and every command and option the
 * page documents is accepted. And every key the policy parser knows appears
 * in docs/man/bfbpf-policy.5.scd.
 *
 * The page's convention (stated at its top): under "# COMMANDS", one
 * "## bfbpf NAME" section per command names its options as *--name*, or as
 * _TARGET_ and _POLICY_ for those groups; "--help" is documented once.
 * BFBPF_MAN_DIR names the pages' folder (default docs/man, from the top of
 * the tree, where make check runs).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/cli.h"
#include "cli/cli_options.h"
#include "lib/policy.h"

#define MAN_MAX_NAMES 64
#define MAN_MAX_SECTIONS 32
#define MAN_NAME_SIZE 48

struct man_names {
	char names[MAN_MAX_NAMES][MAN_NAME_SIZE];
	size_t count;
};

struct man_section {
	char command[MAN_NAME_SIZE];
	struct man_names options;
};

struct man_page {
	char *text;
	struct man_section sections[MAN_MAX_SECTIONS];
	size_t section_count;
	struct man_names all_options; /* every *--name* of the page, anywhere */
};

static struct man_page page;

static bool man_has(const struct man_names *set, const char *name)
{
	for (size_t i = 0; i < set->count; i++)
		if (!strcmp(set->names[i], name))
			return true;
	return false;
}

static void man_add(struct man_names *set, const char *name, size_t length)
{
	char word[MAN_NAME_SIZE];

	assert_true(length < sizeof(word));
	memcpy(word, name, length);
	word[length] = '\0';
	if (man_has(set, word))
		return;
	assert_true(set->count < MAN_MAX_NAMES);
	memcpy(set->names[set->count++], word, length + 1);
}

static void man_add_option(const struct cli_option *option, void *ctx)
{
	if (strcmp(option->name, "help"))
		man_add(ctx, option->name, strlen(option->name));
}

static char *man_read(const char *name)
{
	const char *dir = getenv("BFBPF_MAN_DIR");
	char path[512];
	long size;
	char *text;
	FILE *file;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "docs/man", name);
	file = fopen(path, "r");
	if (!file)
		fail_msg("%s: cannot open (run from the top of the tree or set BFBPF_MAN_DIR)",
			 path);
	assert_int_equal(fseek(file, 0, SEEK_END), 0);
	size = ftell(file);
	assert_true(size > 0);
	rewind(file);
	text = calloc(1, (size_t)size + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)size, file), (size_t)size);
	fclose(file);
	return text;
}

/* The options one line mentions: *--name*, and _TARGET_ and _POLICY_ for their groups. */
static void man_line_options(const char *line, size_t length, struct man_names *out)
{
	for (size_t i = 0; i + 3 < length; i++) {
		size_t n = 0;

		if (!strncmp(line + i, "_TARGET_", 8))
			cli_group_options(CLI_GROUP_TARGET, man_add_option, out);
		if (!strncmp(line + i, "_POLICY_", 8))
			cli_group_options(CLI_GROUP_POLICY, man_add_option, out);
		if (strncmp(line + i, "*--", 3))
			continue;
		while (i + 3 + n < length &&
		       strchr("abcdefghijklmnopqrstuvwxyz0123456789-", line[i + 3 + n]) &&
		       line[i + 3 + n])
			n++;
		if (n && i + 3 + n < length && line[i + 3 + n] == '*') {
			man_add(out, line + i + 3, n);
			man_add(&page.all_options, line + i + 3, n);
		}
	}
}

/* Splits the page into its command sections; every line's options count for the page. */
static int man_setup(void **state)
{
	struct man_section *section = NULL;
	bool in_commands = false;
	const char *line;

	(void)state;
	page.text = man_read("bfbpf.8.scd");
	for (line = page.text; *line;) {
		size_t length = strcspn(line, "\n");

		if (!strncmp(line, "# ", 2)) {
			in_commands = !strncmp(line, "# COMMANDS", 10);
			section = NULL;
		} else if (!strncmp(line, "## ", 3)) {
			section = NULL;
			if (in_commands) {
				assert_true(!strncmp(line, "## bfbpf ", 9));
				assert_true(page.section_count < MAN_MAX_SECTIONS);
				section = &page.sections[page.section_count++];
				assert_true(length - 9 < sizeof(section->command));
				memcpy(section->command, line + 9, length - 9);
			}
		}
		man_line_options(line, length,
				 section ? &section->options : &(struct man_names){0});
		line += length + (line[length] == '\n');
	}
	return 0;
}

static int man_teardown(void **state)
{
	(void)state;
	free(page.text);
	return 0;
}

static const struct man_section *man_section_of(const char *command)
{
	for (size_t i = 0; i < page.section_count; i++)
		if (!strcmp(page.sections[i].command, command))
			return &page.sections[i];
	return NULL;
}

/* "help" is the dispatcher's own command, outside the table (cli_main). */
static void test_every_command_has_its_section(void **state)
{
	const struct cli_command *command;
	int missing = 0;

	(void)state;
	for (size_t i = 0; (command = cli_command_at(i)); i++) {
		if (!man_section_of(command->name)) {
			print_error("bfbpf.8.scd: no \"## bfbpf %s\" section\n", command->name);
			missing++;
		}
	}
	if (!man_section_of("help")) {
		print_error("bfbpf.8.scd: no \"## bfbpf help\" section\n");
		missing++;
	}
	assert_int_equal(missing, 0);
}

static void test_every_section_is_a_command(void **state)
{
	int unknown = 0;

	(void)state;
	assert_true(page.section_count > 0);
	for (size_t i = 0; i < page.section_count; i++) {
		const char *name = page.sections[i].command;

		if (!cli_command_find(name) && strcmp(name, "help")) {
			print_error("bfbpf.8.scd: \"## bfbpf %s\": the CLI has no such command\n",
				    name);
			unknown++;
		}
	}
	assert_int_equal(unknown, 0);
}

/* Each command's section names exactly the options the command accepts. */
static void test_each_section_has_its_options(void **state)
{
	const struct cli_command *command;
	int wrong = 0;

	(void)state;
	for (size_t i = 0; (command = cli_command_at(i)); i++) {
		const struct man_section *section = man_section_of(command->name);
		struct man_names accepted = {0};

		if (!section)
			continue; /* the test above says so */
		cli_command_options(command, man_add_option, &accepted);
		for (size_t j = 0; j < accepted.count; j++) {
			if (man_has(&section->options, accepted.names[j]))
				continue;
			print_error("bfbpf.8.scd: bfbpf %s accepts --%s, its section does not "
				    "name it\n",
				    command->name, accepted.names[j]);
			wrong++;
		}
		for (size_t j = 0; j < section->options.count; j++) {
			if (man_has(&accepted, section->options.names[j]))
				continue;
			print_error("bfbpf.8.scd: the section of bfbpf %s names --%s, which the "
				    "command does not accept\n",
				    command->name, section->options.names[j]);
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
}

/* Anywhere in the page: an option no command accepts (nor the dispatcher) is an error. */
static void test_every_option_of_the_page_is_accepted(void **state)
{
	const struct cli_command *command;
	struct man_names accepted = {0};
	int unknown = 0;

	(void)state;
	man_add(&accepted, "help", 4);
	man_add(&accepted, "version", 7);
	for (size_t i = 0; (command = cli_command_at(i)); i++)
		cli_command_options(command, man_add_option, &accepted);
	assert_true(page.all_options.count > 0);
	for (size_t i = 0; i < page.all_options.count; i++) {
		if (man_has(&accepted, page.all_options.names[i]))
			continue;
		print_error("bfbpf.8.scd: --%s: no command accepts it\n",
			    page.all_options.names[i]);
		unknown++;
	}
	assert_int_equal(unknown, 0);
}

/*
 * The parser's error for an unknown key lists the keys it knows: each must be
 * documented in bfbpf-policy.5.scd as "*KEY* (" at the start of a line.
 */
static void test_policy_page_has_every_key(void **state)
{
	static const char doc[] = "{\"network_mode\": \"public\", \"no such key\": 1}";
	char err[512], wanted[64], *text, *known, *key, *save = NULL;
	struct policy policy;
	int missing = 0;

	(void)state;
	assert_int_not_equal(policy_parse(doc, strlen(doc), &policy, err, sizeof(err)), 0);
	known = strstr(err, "(known: ");
	assert_non_null(known);
	known += strlen("(known: ");
	known[strcspn(known, ")")] = '\0';
	text = man_read("bfbpf-policy.5.scd");
	for (key = strtok_r(known, ", ", &save); key; key = strtok_r(NULL, ", ", &save)) {
		snprintf(wanted, sizeof(wanted), "\n*%s* (", key);
		if (strstr(text, wanted))
			continue;
		print_error("bfbpf-policy.5.scd: the key %s is not documented\n", key);
		missing++;
	}
	free(text);
	assert_int_equal(missing, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_command_has_its_section),
		cmocka_unit_test(test_every_section_is_a_command),
		cmocka_unit_test(test_each_section_has_its_options),
		cmocka_unit_test(test_every_option_of_the_page_is_accepted),
		cmocka_unit_test(test_policy_page_has_every_key),
	};

	return cmocka_run_group_tests(tests, man_setup, man_teardown);
}
