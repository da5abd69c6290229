// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the protected-cgroup predicate (user/lib/cgroup.h): the
 * cgroup2 root and the cgroups holding this process (the daemon, in the
 * daemon) are never a sandbox's or a guard's target.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/cgroup.h"

static void test_contains(void **state)
{
	(void)state;
	assert_true(cgroup_path_contains("/sys/fs/cgroup", "/sys/fs/cgroup"));
	assert_true(cgroup_path_contains("/sys/fs/cgroup", "/sys/fs/cgroup/a/b"));
	assert_true(cgroup_path_contains("/sys/fs/cgroup/", "/sys/fs/cgroup/a"));
	assert_true(cgroup_path_contains("/sys/fs/cgroup/a", "/sys/fs/cgroup/a/b"));
	assert_false(cgroup_path_contains("/sys/fs/cgroup/a", "/sys/fs/cgroup/ab"));
	assert_false(cgroup_path_contains("/sys/fs/cgroup/a/b", "/sys/fs/cgroup/a"));
	assert_false(cgroup_path_contains("/sys/fs/cgroup/b", "/sys/fs/cgroup/a/b"));
}

/* Needs a cgroup2 mount; skipped (not passed) without one. */
static int mount_or_skip(char *mount, size_t size)
{
	if (cgroup_mount_find(mount, size)) {
		skip();
		return -1;
	}
	return 0;
}

static void test_root_is_protected(void **state)
{
	char mount[PATH_MAX], why[256] = "";

	(void)state;
	if (mount_or_skip(mount, sizeof(mount)))
		return;
	assert_int_equal(cgroup_path_is_protected(mount, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "root"));
}

static void test_own_cgroup_and_ancestors_are_protected(void **state)
{
	char mount[PATH_MAX], mine[PATH_MAX], why[PATH_MAX + 64] = "";
	char *slash;

	(void)state;
	if (mount_or_skip(mount, sizeof(mount)))
		return;
	assert_int_equal(cgroup_of_pid(getpid(), mine, sizeof(mine)), 0);
	assert_int_equal(cgroup_path_is_protected(mine, why, sizeof(why)), 1);
	/* Every ancestor down to the mount holds it too. */
	while ((slash = strrchr(mine, '/')) && strlen(mine) > strlen(mount)) {
		*slash = '\0';
		assert_int_equal(cgroup_path_is_protected(mine, why, sizeof(why)), 1);
	}
}

static void test_unrelated_cgroup_is_not_protected(void **state)
{
	char mount[PATH_MAX], mine[PATH_MAX], other[PATH_MAX + 64], why[PATH_MAX + 64] = "";

	(void)state;
	if (mount_or_skip(mount, sizeof(mount)))
		return;
	assert_int_equal(cgroup_of_pid(getpid(), mine, sizeof(mine)), 0);
	/* A sibling name no process here is in (string work only: it need not exist). */
	snprintf(other, sizeof(other), "%s/bfbpf-unit-not-a-holder/child", mine);
	assert_int_equal(cgroup_path_is_protected(other, why, sizeof(why)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contains),
		cmocka_unit_test(test_root_is_protected),
		cmocka_unit_test(test_own_cgroup_and_ancestors_are_protected),
		cmocka_unit_test(test_unrelated_cgroup_is_not_protected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
