// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of user/lib/cgroup.h: the protected-cgroup predicate (the
 * cgroup2 root and the cgroups holding this process, the daemon in the
 * daemon, are never a sandbox's or a guard's target) and the bounded walk.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

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

/*
 * The walk reads only cgroup.procs files and directories: a tree of plain
 * ones stands for a subtree (root 1 2, a: 3, a/b: 4, a/b/c: 5, .d: 6).
 */
static char walk_root[] = "/tmp/bfbpf-walk-XXXXXX";

static void walk_write(const char *dir, const char *procs)
{
	char path[PATH_MAX];
	FILE *file;

	snprintf(path, sizeof(path), "%s%s", walk_root, dir);
	if (dir[0])
		assert_int_equal(mkdir(path, 0700), 0);
	strcat(path, "/cgroup.procs");
	file = fopen(path, "w");
	assert_non_null(file);
	fputs(procs, file);
	fclose(file);
}

static int walk_setup(void **state)
{
	(void)state;
	if (!mkdtemp(walk_root))
		return -1;
	walk_write("", "1\n2\n");
	walk_write("/a", "3\n");
	walk_write("/a/b", "4\n");
	walk_write("/a/b/c", "5\n");
	walk_write("/.d", "6\n");
	return 0;
}

static int walk_teardown(void **state)
{
	char command[PATH_MAX];

	(void)state;
	snprintf(command, sizeof(command), "rm -rf -- '%s'", walk_root);
	return system(command) ? -1 : 0;
}

/* fn: a bit per pid seen. */
static void walk_mark(pid_t pid, void *arg)
{
	*(unsigned int *)arg |= 1u << pid;
}

static void test_walk_bounds(void **state)
{
	unsigned int marks = 0;
	struct cgroup_walk walk = {
		.max_depth = 16, .max_pids = 100, .fn = walk_mark, .arg = &marks};

	(void)state;
	cgroup_walk_procs(&walk, walk_root);
	assert_int_equal(walk.seen, 6);
	assert_int_equal(marks, 0x7e); /* 1..6: every level, a name with a dot too */

	/* Two levels below: a/b/c (5) is not read. */
	marks = 0;
	walk = (struct cgroup_walk){
		.max_depth = 2, .max_pids = 100, .fn = walk_mark, .arg = &marks};
	cgroup_walk_procs(&walk, walk_root);
	assert_int_equal(walk.seen, 5);
	assert_int_equal(marks, 0x5e);

	/* The pid bound stops it, the cgroup's own processes first. */
	marks = 0;
	walk = (struct cgroup_walk){.max_depth = 16, .max_pids = 2, .fn = walk_mark, .arg = &marks};
	cgroup_walk_procs(&walk, walk_root);
	assert_int_equal(walk.seen, 2);
	assert_int_equal(marks, 0x6);

	/* A cgroup removed meanwhile: nothing, no error. */
	marks = 0;
	walk = (struct cgroup_walk){
		.max_depth = 16, .max_pids = 100, .fn = walk_mark, .arg = &marks};
	cgroup_walk_procs(&walk, "/nonexistent/bfbpf-walk");
	assert_int_equal(walk.seen, 0);
	assert_int_equal(marks, 0);
}

/*
 * The parents cache against the real hierarchy: this process's cgroup and its
 * ancestors up to the root. Opening by id needs CAP_DAC_READ_SEARCH: skipped
 * without it (make check runs unprivileged; the integration cases use it).
 */
static void test_parents_walk_to_root(void **state)
{
	char mine[PATH_MAX], mount[PATH_MAX], made[PATH_MAX + 32];
	struct cgroup_parents *cache;
	uint64_t id, parent, want;
	char *slash;
	int err;

	(void)state;
	if (mount_or_skip(mount, sizeof(mount)))
		return;
	/* Two levels of our own when we may make them (root), else this process's cgroup. */
	snprintf(made, sizeof(made), "%s/bfbpf-unit-%d", mount, (int)getpid());
	if (!mkdir(made, 0755)) {
		snprintf(mine, sizeof(mine), "%s/a", made);
		assert_int_equal(mkdir(mine, 0755), 0);
	} else if (cgroup_of_pid(0, mine, sizeof(mine))) {
		return;
	}
	cache = cgroup_parents_new();
	assert_non_null(cache);
	assert_int_equal(cgroup_id_of_path(mine, &id), 0);
	err = cgroup_parent_of(cache, id, &parent);
	if (err == -EPERM) {
		cgroup_parents_free(cache);
		skip();
		return;
	}
	while (strcmp(mine, mount)) {
		assert_int_equal(cgroup_parent_of(cache, id, &parent), 0);
		slash = strrchr(mine, '/');
		*slash = '\0';
		assert_int_equal(cgroup_id_of_path(mine, &want), 0);
		assert_true(parent == want);
		id = parent;
	}
	assert_true(id == cache->root_id);
	assert_int_equal(cgroup_parent_of(cache, id, &parent), 0);
	assert_true(parent == 0);
	/* A second walk is answered from the cache: no more reads. */
	want = cache->misses;
	assert_true(want > 0 || !strcmp(mine, mount));
	if (!access(made, F_OK))
		snprintf(mine, sizeof(mine), "%s/a", made);
	else
		assert_int_equal(cgroup_of_pid(0, mine, sizeof(mine)), 0);
	assert_int_equal(cgroup_id_of_path(mine, &id), 0);
	while (id)
		assert_int_equal(cgroup_parent_of(cache, id, &id), 0);
	assert_true(cache->misses == want);
	/* An id no cgroup has: not found, not cached. */
	assert_int_not_equal(cgroup_parent_of(cache, UINT64_MAX - 1, &parent), 0);
	cgroup_parents_free(cache);
	snprintf(mine, sizeof(mine), "%s/a", made);
	rmdir(mine);
	rmdir(made);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contains),
		cmocka_unit_test_setup_teardown(test_walk_bounds, walk_setup, walk_teardown),
		cmocka_unit_test(test_root_is_protected),
		cmocka_unit_test(test_own_cgroup_and_ancestors_are_protected),
		cmocka_unit_test(test_unrelated_cgroup_is_not_protected),
		cmocka_unit_test(test_parents_walk_to_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
