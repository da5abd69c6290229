// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The CLI's shared parts: the number parser, the option parser, the command table. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/cli.h"
#include "cli/cli_options.h"

#define OWN_LEVEL CLI_OPTION_OWN

static const struct cli_option own_options[] = {
	{"level", "N", OWN_LEVEL, 0, "a number from 1 to 9"},
	{0},
};

static int own_handler(struct cli_args *args, int id, const char *value, void *ctx)
{
	long long *level = ctx;

	(void)args;
	assert_int_equal(id, OWN_LEVEL);
	return cli_number_option("--level", value, 1, 9, "a level", level);
}

static const struct cli_command client_command = {
	"fake",
	NULL,
	"A command of the tests.",
	CLI_GROUP_TARGET | CLI_GROUP_POLICY | CLI_GROUP_SOCKET | CLI_GROUP_JSON |
		CLI_GROUP_DNS_SERVER,
	own_options,
};

static const struct cli_command run_like_command = {
	"runlike", NULL, "Takes a command.", CLI_GROUP_POLICY | CLI_GROUP_COMMAND, NULL,
};

/* parse(command, args, level, "--opt", ..., NULL): argv[0] is the command's name. */
static int parse(const struct cli_command *command, struct cli_args *args, long long *level, ...)
{
	static char storage[32][128];
	char *argv[33];
	const char *word;
	va_list list;
	int argc = 0;

	snprintf(storage[0], sizeof(storage[0]), "%s", command->name);
	argv[argc++] = storage[0];
	va_start(list, level);
	while ((word = va_arg(list, const char *)) && argc < 32) {
		snprintf(storage[argc], sizeof(storage[argc]), "%s", word);
		argv[argc] = storage[argc];
		argc++;
	}
	va_end(list);
	argv[argc] = NULL;
	cli_args_init(args);
	return cli_parse(command, argc, argv, args, own_handler, level);
}

static void test_number_parse(void **state)
{
	long long value = -5;

	(void)state;
	assert_int_equal(cli_number_parse("42", 0, 100, &value), 0);
	assert_int_equal(value, 42);
	assert_int_equal(cli_number_parse("0", 0, 100, &value), 0);
	assert_int_equal(value, 0);
	assert_int_equal(cli_number_parse("100", 0, 100, &value), 0);
	assert_int_equal(value, 100);
	assert_int_equal(cli_number_parse("-3", -5, 5, &value), 0);
	assert_int_equal(value, -3);
	value = 7;
	assert_int_equal(cli_number_parse("101", 0, 100, &value), -ERANGE);
	assert_int_equal(cli_number_parse("-1", 0, 100, &value), -ERANGE);
	assert_int_equal(cli_number_parse("99999999999999999999999", 0, LLONG_MAX, &value),
			 -ERANGE);
	assert_int_equal(cli_number_parse("", 0, 100, &value), -EINVAL);
	assert_int_equal(cli_number_parse(NULL, 0, 100, &value), -EINVAL);
	assert_int_equal(cli_number_parse("abc", 0, 100, &value), -EINVAL);
	assert_int_equal(cli_number_parse("5x", 0, 100, &value), -EINVAL);
	assert_int_equal(cli_number_parse("5 ", 0, 100, &value), -EINVAL);
	assert_int_equal(cli_number_parse(" 5", 0, 100, &value), -EINVAL);
	assert_int_equal(cli_number_parse("1e3", 0, 10000, &value), -EINVAL);
	assert_int_equal(cli_number_parse("0x10", 0, 100, &value), -EINVAL);
	/* A refused value leaves the output alone. */
	assert_int_equal(value, 7);
	assert_int_equal(cli_number_option("--x", "zz", 0, 1, "a bit", &value), CLI_EXIT_USAGE);
	assert_int_equal(cli_number_option("--x", "1", 0, 1, "a bit", &value), CLI_EXIT_OK);
	assert_int_equal(value, 1);
}

static void test_parse_shared_options(void **state)
{
	struct cli_args args;
	long long level = 0;

	(void)state;
	assert_int_equal(parse(&client_command, &args, &level, "--pid", "12", "--mode", "allowlist",
			       "--allow", "198.18.0.1", "--allow", "example.com",
			       "--model-endpoint", "10.0.0.1:4000", "--no-loopback", "--socket",
			       "/tmp/s.sock", "--json", "--level", "3", "--dns-server", "127.0.0.1",
			       NULL),
			 CLI_EXIT_OK);
	assert_int_equal(args.target.pid, 12);
	assert_null(args.target.cgroup);
	assert_string_equal(args.policy.mode, "allowlist");
	assert_int_equal(json_array_size(args.policy.allow), 2);
	assert_int_equal(json_array_size(args.policy.model_endpoints), 1);
	assert_true(args.policy.no_loopback);
	assert_false(args.policy.no_model_endpoint);
	assert_string_equal(args.socket, "/tmp/s.sock");
	assert_true(args.json);
	assert_int_equal(level, 3);
	assert_int_equal(args.resolver.server_count, 1);
	assert_string_equal(args.resolver.servers[0], "127.0.0.1");
	cli_args_free(&args);
}

static void test_parse_refusals(void **state)
{
	struct cli_args args;
	long long level = 0;

	(void)state;
	assert_int_equal(parse(&client_command, &args, &level, "--pid", "abc", NULL),
			 CLI_EXIT_USAGE);
	cli_args_free(&args);
	assert_int_equal(parse(&client_command, &args, &level, "--pid", "0", NULL), CLI_EXIT_USAGE);
	cli_args_free(&args);
	assert_int_equal(
		parse(&client_command, &args, &level, "--cgroup", "/x", "--pid", "1", NULL),
		CLI_EXIT_USAGE);
	cli_args_free(&args);
	assert_int_equal(parse(&client_command, &args, &level, "--nosuch", NULL), CLI_EXIT_USAGE);
	cli_args_free(&args);
	assert_int_equal(parse(&client_command, &args, &level, "--pid", NULL), CLI_EXIT_USAGE);
	cli_args_free(&args);
	assert_int_equal(parse(&client_command, &args, &level, "--json=yes", NULL), CLI_EXIT_USAGE);
	cli_args_free(&args);
	assert_int_equal(parse(&client_command, &args, &level, "-x", NULL), CLI_EXIT_USAGE);
	cli_args_free(&args);
	assert_int_equal(parse(&client_command, &args, &level, "stray", NULL), CLI_EXIT_USAGE);
	cli_args_free(&args);
	assert_int_equal(parse(&client_command, &args, &level, "--level", "10", NULL),
			 CLI_EXIT_USAGE);
	cli_args_free(&args);
	/* A command's table is its own: run's options are no option of this one. */
	assert_int_equal(parse(&client_command, &args, &level, "--cgroup-parent", "/x", NULL),
			 CLI_EXIT_USAGE);
	cli_args_free(&args);
}

static void test_parse_dns_server_limit(void **state)
{
	struct cli_args args;
	long long level = 0;

	(void)state;
	assert_int_equal(parse(&client_command, &args, &level, "--dns-server", "1", "--dns-server",
			       "2", "--dns-server", "3", "--dns-server", "4", "--dns-server", "5",
			       "--dns-server", "6", "--dns-server", "7", "--dns-server", "8",
			       "--dns-server", "9", NULL),
			 CLI_EXIT_USAGE);
	assert_int_equal(args.resolver.server_count, RESOLVER_MAX_SERVERS);
	cli_args_free(&args);
}

static void test_parse_operands(void **state)
{
	struct cli_args args;
	long long level = 0;

	(void)state;
	assert_int_equal(parse(&run_like_command, &args, &level, "--mode", "public", "--", "ls",
			       "--mode", "-l", NULL),
			 CLI_EXIT_OK);
	assert_int_equal(args.operand_count, 3);
	assert_string_equal(args.operands[0], "ls");
	assert_string_equal(args.operands[1], "--mode");
	cli_args_free(&args);
	/* Without "--": the command's own options are still not ours. */
	assert_int_equal(parse(&run_like_command, &args, &level, "--mode", "public", "sh", "-c",
			       "exit 3", NULL),
			 CLI_EXIT_OK);
	assert_int_equal(args.operand_count, 3);
	assert_string_equal(args.operands[1], "-c");
	cli_args_free(&args);
	assert_int_equal(parse(&run_like_command, &args, &level, "--mode", "public", NULL),
			 CLI_EXIT_USAGE);
	cli_args_free(&args);
}

static void test_policy_build(void **state)
{
	struct cli_args args;
	struct policy policy;
	long long level = 0;

	(void)state;
	assert_int_equal(parse(&client_command, &args, &level, "--mode", "allowlist", "--allow",
			       "198.18.0.0/24", "--no-model-endpoint", NULL),
			 CLI_EXIT_OK);
	assert_int_equal(cli_policy_build(&args.policy, &policy), CLI_EXIT_OK);
	assert_int_equal(policy.mode, POLICY_MODE_ALLOWLIST);
	policy_free(&policy);
	cli_args_free(&args);
	/* An invalid entry, no policy at all, a file with flags: each is bad usage. */
	assert_int_equal(parse(&client_command, &args, &level, "--mode", "allowlist", "--allow",
			       "a.*.com", NULL),
			 CLI_EXIT_OK);
	assert_int_equal(cli_policy_build(&args.policy, &policy), CLI_EXIT_USAGE);
	cli_args_free(&args);
	assert_int_equal(parse(&client_command, &args, &level, NULL), CLI_EXIT_OK);
	assert_int_equal(cli_policy_build(&args.policy, &policy), CLI_EXIT_USAGE);
	cli_args_free(&args);
	assert_int_equal(parse(&client_command, &args, &level, "--policy", "/dev/null", "--mode",
			       "public", NULL),
			 CLI_EXIT_OK);
	assert_int_equal(cli_policy_build(&args.policy, &policy), CLI_EXIT_USAGE);
	cli_args_free(&args);
}

/* loopback: the command's default (run's is false), --no-loopback, --allow-loopback. */
static void assert_loopback(bool run_default, bool want, const char *flag)
{
	struct cli_args args;
	struct policy policy;
	long long level = 0;

	assert_int_equal(parse(&client_command, &args, &level, "--mode", "no-network",
			       "--model-endpoint", "127.0.0.1:4000", flag, NULL),
			 CLI_EXIT_OK);
	assert_int_equal(cli_policy_build_loopback(&args.policy, run_default, &policy),
			 CLI_EXIT_OK);
	assert_int_equal(policy.allow_loopback, want);
	assert_int_equal(policy.n_model_endpoints, 1);
	policy_free(&policy);
	cli_args_free(&args);
}

static void test_policy_build_loopback(void **state)
{
	struct cli_args args;
	struct policy policy;
	long long level = 0;

	(void)state;
	assert_loopback(true, true, NULL);
	assert_loopback(false, false, NULL);
	assert_loopback(true, false, "--no-loopback");
	assert_loopback(false, false, "--no-loopback");
	assert_loopback(true, true, "--allow-loopback");
	assert_loopback(false, true, "--allow-loopback");
	assert_int_equal(parse(&client_command, &args, &level, "--mode", "no-network",
			       "--no-loopback", "--allow-loopback", NULL),
			 CLI_EXIT_OK);
	assert_int_equal(cli_policy_build_loopback(&args.policy, false, &policy), CLI_EXIT_USAGE);
	cli_args_free(&args);
	/* Without allow_loopback, a loopback CIDR allows nothing: refused. */
	assert_int_equal(parse(&client_command, &args, &level, "--mode", "allowlist", "--allow",
			       "127.0.0.0/8", NULL),
			 CLI_EXIT_OK);
	assert_int_equal(cli_policy_build_loopback(&args.policy, false, &policy), CLI_EXIT_USAGE);
	assert_int_equal(cli_policy_build_loopback(&args.policy, true, &policy), CLI_EXIT_OK);
	policy_free(&policy);
	cli_args_free(&args);
}

static void test_target_resolve(void **state)
{
	struct cli_target none = {0};
	char path[PATH_MAX] = "stale";

	(void)state;
	assert_int_equal(cli_target_resolve(&none, path, sizeof(path), false), CLI_EXIT_OK);
	assert_string_equal(path, "");
	assert_int_equal(cli_target_resolve(&none, path, sizeof(path), true), CLI_EXIT_USAGE);
}

struct option_names {
	const char *names[64];
	size_t count;
};

static void collect(const struct cli_option *option, void *ctx)
{
	struct option_names *seen = ctx;

	assert_non_null(option->help);
	assert_true(option->help[0] != '\0');
	for (size_t i = 0; i < seen->count; i++)
		assert_string_not_equal(seen->names[i], option->name);
	assert_true(seen->count < 64);
	seen->names[seen->count++] = option->name;
}

/* Every command: found by name, its options unique and documented, its --help printable. */
static void test_command_table(void **state)
{
	const struct cli_command *command;
	int saved_stdout;
	size_t i;

	(void)state;
	/* The help texts go to stdout: out of the test's report. */
	fflush(stdout);
	saved_stdout = dup(STDOUT_FILENO);
	assert_true(saved_stdout >= 0);
	assert_non_null(freopen("/dev/null", "w", stdout));
	for (i = 0; (command = cli_command_at(i)); i++) {
		struct option_names seen = {0};
		struct cli_args args;
		char name[32], help[] = "--help";
		char *argv[] = {name, help, NULL};

		assert_ptr_equal(cli_command_find(command->name), command);
		assert_non_null(command->run);
		assert_true(command->help[0] != '\0');
		cli_command_options(command, collect, &seen);
		assert_string_equal(seen.names[seen.count - 1], "help");
		snprintf(name, sizeof(name), "%s", command->name);
		cli_args_init(&args);
		assert_int_equal(cli_parse(command, 2, argv, &args, NULL, NULL), CLI_HELP_SHOWN);
		cli_args_free(&args);
	}
	fflush(stdout);
	assert_int_equal(dup2(saved_stdout, STDOUT_FILENO), STDOUT_FILENO);
	close(saved_stdout);
	assert_true(i >= 11);
	assert_null(cli_command_find("nosuch"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_number_parse),
		cmocka_unit_test(test_parse_shared_options),
		cmocka_unit_test(test_parse_refusals),
		cmocka_unit_test(test_parse_dns_server_limit),
		cmocka_unit_test(test_parse_operands),
		cmocka_unit_test(test_policy_build),
		cmocka_unit_test(test_policy_build_loopback),
		cmocka_unit_test(test_target_resolve),
		cmocka_unit_test(test_command_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
