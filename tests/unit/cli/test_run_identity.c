// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* run --user: USER[:GROUP] into an identity; and the CLI's JSON error object under --json. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include <pwd.h>

#include "cli/cli_options.h"
#include "cli/run_confine.h"

static void test_identity_numbers(void **state)
{
	struct run_identity identity;
	char err[128];

	(void)state;
	/* A uid without a passwd entry: its own number as the group, no other group. */
	assert_int_equal(run_identity_parse("4000123", &identity, err, sizeof(err)), 0);
	assert_int_equal(identity.uid, 4000123);
	assert_int_equal(identity.gid, 4000123);
	assert_int_equal(identity.group_count, 0);
	assert_int_equal(run_identity_parse("4000123:77", &identity, err, sizeof(err)), 0);
	assert_int_equal(identity.uid, 4000123);
	assert_int_equal(identity.gid, 77);
	assert_int_equal(identity.group_count, 0);
	assert_int_equal(run_identity_parse("0", &identity, err, sizeof(err)), 0);
	assert_int_equal(identity.uid, 0);
}

static void test_identity_names(void **state)
{
	struct passwd *root = getpwuid(0);
	struct run_identity identity;
	char err[128];

	(void)state;
	assert_non_null(root);
	assert_int_equal(run_identity_parse(root->pw_name, &identity, err, sizeof(err)), 0);
	assert_int_equal(identity.uid, 0);
	assert_int_equal(identity.gid, root->pw_gid);
	assert_true(identity.group_count >= 1); /* getgrouplist includes the primary group */
	/* With a group: that group only. */
	assert_int_equal(run_identity_parse("0:123", &identity, err, sizeof(err)), 0);
	assert_int_equal(identity.gid, 123);
	assert_int_equal(identity.group_count, 0);
}

static void test_identity_refusals(void **state)
{
	struct run_identity identity;
	char err[128];

	(void)state;
	assert_int_equal(run_identity_parse("no-such-user-bfbpf", &identity, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "no-such-user-bfbpf"));
	assert_int_equal(run_identity_parse("0:no-such-group-bfbpf", &identity, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "no-such-group-bfbpf"));
	assert_int_equal(run_identity_parse("", &identity, err, sizeof(err)), -EINVAL);
	assert_int_equal(run_identity_parse(":0", &identity, err, sizeof(err)), -EINVAL);
	/* (uid_t)-1 means "unchanged" to setresuid: never a user. */
	assert_int_not_equal(run_identity_parse("4294967295", &identity, err, sizeof(err)), 0);
}

/* What cli_fail prints on stdout, with --json on or off. */
static json_t *fail_output(bool json, const char *code)
{
	char path[] = "/tmp/bfbpf-unit-XXXXXX";
	int fd = mkstemp(path), saved;
	json_error_t error;
	json_t *out;

	assert_true(fd >= 0);
	unlink(path);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	assert_int_equal(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
	cli_json_errors_set(json);
	assert_int_equal(cli_fail(CLI_EXIT_FAILED, code, "cgroup %s: gone", "/x"), CLI_EXIT_FAILED);
	assert_int_equal(cli_usage_error("--x: bad"), CLI_EXIT_USAGE);
	cli_json_errors_set(false);
	fflush(stdout);
	assert_int_equal(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
	close(saved);
	lseek(fd, 0, SEEK_SET);
	out = json_loadfd(fd, JSON_DISABLE_EOF_CHECK, &error);
	if (!json) {
		char byte;

		assert_int_equal(read(fd, &byte, 1), 0); /* nothing at all on stdout */
	}
	close(fd);
	return out;
}

static void test_fail_json(void **state)
{
	json_t *out;

	(void)state;
	assert_null(fail_output(false, "no_cgroup"));
	out = fail_output(true, "no_cgroup");
	assert_non_null(out);
	assert_true(json_is_false(json_object_get(out, "ok")));
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(out, "error"), "code")),
		"no_cgroup");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(out, "error"), "message")),
		"cgroup /x: gone");
	json_decref(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_numbers),
		cmocka_unit_test(test_identity_names),
		cmocka_unit_test(test_identity_refusals),
		cmocka_unit_test(test_fail_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
