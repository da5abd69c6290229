// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the container records' pod keys (containers.h): a Kubernetes
 * restart is a new container id in the same pod; the record of its pod key,
 * in the same pod cgroup, gives it its CURRENT policy and moves to the new id,
 * across a daemon restart too; a record of another pod cgroup is never taken;
 * a pod's record goes once its pod cgroup does. Temporary directories stand
 * for the cgroups: nothing here touches the kernel's.
 */
#include <errno.h>
#include <limits.h>
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

#include "sandbox/containers.h"
#include "sandbox/containers_internal.h"

#define ID_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define ID_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define ID_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define ID_D "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define POD_UID "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"

struct fixture {
	char root[64];
	char state[128];
	char pod1[128], pod2[128];
	struct sandbox_registry registry;
	struct sandbox *items[2];
	struct sandbox a, b;
};

static void fixture_path(char *out, size_t size, const char *pod, const char *leaf)
{
	snprintf(out, size, "%s/%s", pod, leaf);
}

static void fixture_policy(struct policy *out, const char *json)
{
	char err[256];
	json_t *object = json_loads(json, 0, NULL);

	assert_non_null(object);
	assert_int_equal(policy_from_json(object, out, err, sizeof(err)), 0);
	json_decref(object);
}

static struct container_ref fixture_ref(const char *id, const char *pod_uid, const char *name)
{
	struct container_ref ref = {0};

	snprintf(ref.id, sizeof(ref.id), "%s", id);
	snprintf(ref.runtime, sizeof(ref.runtime), "cri-o");
	snprintf(ref.name, sizeof(ref.name), "%s", name);
	snprintf(ref.pod_uid, sizeof(ref.pod_uid), "%s", pod_uid);
	snprintf(ref.pod_container, sizeof(ref.pod_container), "%s", pod_uid[0] ? name : "");
	return ref;
}

static bool fixture_file(const struct fixture *f, const char *id)
{
	char file[PATH_MAX];
	struct stat st;

	snprintf(file, sizeof(file), "%s/containers/%s.json", f->state, id);
	return !stat(file, &st);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->root, sizeof(f->root), "/tmp/bfbpf-test-containers.XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->state, sizeof(f->state), "%s/state", f->root);
	snprintf(f->pod1, sizeof(f->pod1), "%s/pod1", f->root);
	snprintf(f->pod2, sizeof(f->pod2), "%s/pod2", f->root);
	assert_int_equal(mkdir(f->state, 0700), 0);
	assert_int_equal(mkdir(f->pod1, 0700), 0);
	assert_int_equal(mkdir(f->pod2, 0700), 0);
	assert_int_equal(containers_open(&f->registry, f->state), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char command[128];

	containers_close(&f->registry);
	policy_free(&f->a.policy);
	policy_free(&f->b.policy);
	free(f->a.path);
	free(f->b.path);
	snprintf(command, sizeof(command), "rm -rf '%s'", f->root);
	assert_int_equal(system(command), 0);
	free(f);
	return 0;
}

/* A sandbox of the fixture at POD/LEAF with this policy, in the registry. */
static void fixture_sandbox(struct fixture *f, struct sandbox *sandbox, const char *pod,
			    const char *leaf, const char *policy)
{
	char path[PATH_MAX];

	fixture_path(path, sizeof(path), pod, leaf);
	sandbox->path = strdup(path);
	assert_non_null(sandbox->path);
	sandbox->policy_known = true;
	fixture_policy(&sandbox->policy, policy);
	f->items[f->registry.count++] = sandbox;
	f->registry.items = f->items;
}

#define INSTALL "{\"network_mode\": \"public\"}"
#define RELOCKED "{\"network_mode\": \"no-network\"}"

/* The pod's first container, relocked: its record holds the relocked policy and the pod key. */
static void fixture_relocked(struct fixture *f)
{
	struct container_ref ref = fixture_ref(ID_A, POD_UID, "agent");

	fixture_sandbox(f, &f->a, f->pod1, "crio-a", INSTALL);
	assert_int_equal(containers_remember(&f->registry, &f->a, &ref), 0);
	policy_free(&f->a.policy);
	fixture_policy(&f->a.policy, RELOCKED);
	assert_int_equal(containers_remember(&f->registry, &f->a, NULL), 0);
	assert_true(fixture_file(f, ID_A));
	assert_string_equal(f->a.container_id, ID_A);
}

static void test_policy_by_pod_key(void **state)
{
	struct fixture *f = *state;
	struct container_ref ref;
	char cgroup[PATH_MAX];
	struct policy policy;
	bool by_pod;

	fixture_relocked(f);
	/* Its own id: by id. */
	ref = fixture_ref(ID_A, POD_UID, "agent");
	fixture_path(cgroup, sizeof(cgroup), f->pod1, "crio-a");
	assert_int_equal(containers_policy_of(&f->registry, &ref, cgroup, &policy, &by_pod), 0);
	assert_false(by_pod);
	policy_free(&policy);
	/* A new id in the same pod cgroup: the record's current policy, by the pod key. */
	ref = fixture_ref(ID_B, POD_UID, "agent");
	fixture_path(cgroup, sizeof(cgroup), f->pod1, "crio-b");
	assert_int_equal(containers_policy_of(&f->registry, &ref, cgroup, &policy, &by_pod), 0);
	assert_true(by_pod);
	assert_int_equal(policy.mode, POLICY_MODE_NO_NETWORK);
	policy_free(&policy);
	/* The same pod key from another pod cgroup: refused, never taken. */
	fixture_path(cgroup, sizeof(cgroup), f->pod2, "crio-b");
	assert_int_equal(containers_policy_of(&f->registry, &ref, cgroup, &policy, &by_pod),
			 -EXDEV);
	/* Another container of the pod, or no pod key: no record. */
	ref = fixture_ref(ID_B, POD_UID, "sidecar");
	fixture_path(cgroup, sizeof(cgroup), f->pod1, "crio-b");
	assert_int_equal(containers_policy_of(&f->registry, &ref, cgroup, &policy, &by_pod),
			 -ENOENT);
	ref = fixture_ref(ID_B, "", "agent");
	assert_int_equal(containers_policy_of(&f->registry, &ref, cgroup, &policy, &by_pod),
			 -ENOENT);
}

static void test_take_over(void **state)
{
	struct fixture *f = *state;
	struct container_ref ref = fixture_ref(ID_B, POD_UID, "agent");
	struct container_record *record;
	json_t *object;

	fixture_relocked(f);
	fixture_sandbox(f, &f->b, f->pod1, "crio-b", RELOCKED);
	assert_int_equal(containers_remember(&f->registry, &f->b, &ref), 0);
	/* One record, now of the new id; the file moved; the old sandbox lost its record. */
	assert_int_equal(f->registry.containers->count, 1);
	assert_false(fixture_file(f, ID_A));
	assert_true(fixture_file(f, ID_B));
	assert_string_equal(f->b.container_id, ID_B);
	assert_string_equal(f->a.container_id, "");
	record = containers_find_pod(f->registry.containers, POD_UID, "agent");
	assert_non_null(record);
	assert_string_equal(record->ref.id, ID_B);
	assert_string_equal(record->cgroup, f->b.path);
	object = containers_json_of(&f->registry, &f->b);
	assert_string_equal(json_string_value(json_object_get(object, "pod_uid")), POD_UID);
	assert_string_equal(json_string_value(json_object_get(object, "pod_container")), "agent");
	json_decref(object);
	/* An update of the old sandbox (no record now) records nothing, and does not crash. */
	assert_int_equal(containers_remember(&f->registry, &f->a, NULL), 0);
	assert_int_equal(f->registry.containers->count, 1);
}

/* Another pod cgroup's claim of the pod key gets a record of its id only. */
static void test_other_pod_cgroup(void **state)
{
	struct fixture *f = *state;
	struct container_ref ref = fixture_ref(ID_C, POD_UID, "agent");
	struct container_record *record;

	fixture_relocked(f);
	fixture_sandbox(f, &f->b, f->pod2, "crio-c", INSTALL);
	assert_int_equal(containers_remember(&f->registry, &f->b, &ref), 0);
	assert_int_equal(f->registry.containers->count, 2);
	assert_true(fixture_file(f, ID_A));
	record = containers_find(f->registry.containers, ID_C);
	assert_non_null(record);
	assert_string_equal(record->ref.pod_uid, "");
	assert_string_equal(containers_find_pod(f->registry.containers, POD_UID, "agent")->ref.id,
			    ID_A);
}

/* A daemon restart reads the pod keys back; a record written before them still loads. */
static void test_reload(void **state)
{
	struct fixture *f = *state;
	struct container_ref ref = fixture_ref(ID_B, POD_UID, "agent");
	struct container_record *record;
	char file[PATH_MAX], cgroup[PATH_MAX];
	struct policy policy;
	bool by_pod;
	FILE *out;

	fixture_relocked(f);
	snprintf(file, sizeof(file), "%s/containers/%s.json", f->state, ID_D);
	out = fopen(file, "w");
	assert_non_null(out);
	fprintf(out,
		"{\"cgroup\":\"%s/crio-d\",\"host_netns\":true,\"id\":\"%s\",\"name\":\"old\","
		"\"policy\":{\"network_mode\":\"no-network\"},\"runtime\":\"podman\"}",
		f->pod2, ID_D);
	fclose(out);
	containers_close(&f->registry);
	assert_int_equal(containers_open(&f->registry, f->state), 0);
	assert_int_equal(f->registry.containers->count, 2);
	record = containers_find(f->registry.containers, ID_D);
	assert_non_null(record);
	assert_string_equal(record->ref.pod_uid, "");
	fixture_path(cgroup, sizeof(cgroup), f->pod1, "crio-b");
	assert_int_equal(containers_policy_of(&f->registry, &ref, cgroup, &policy, &by_pod), 0);
	assert_true(by_pod);
	assert_int_equal(policy.mode, POLICY_MODE_NO_NETWORK);
	policy_free(&policy);
}

/* A pod's record goes with its pod cgroup, or with a detach by its pod key. */
static void test_pod_gone(void **state)
{
	struct fixture *f = *state;
	struct container_ref ref = fixture_ref(ID_B, POD_UID, "agent");
	struct container_record *record;

	fixture_relocked(f);
	record = containers_find(f->registry.containers, ID_A);
	assert_false(containers_pod_gone(record)); /* its container's cgroup is gone, not the pod */
	assert_int_equal(rmdir(f->pod1), 0);
	assert_true(containers_pod_gone(record));
	ref.pod_uid[0] = '\0';
	containers_forget_ref(&f->registry, &ref); /* neither its id nor its pod key */
	assert_int_equal(f->registry.containers->count, 1);
	ref = fixture_ref(ID_B, POD_UID, "agent");
	containers_forget_ref(&f->registry, &ref);
	assert_int_equal(f->registry.containers->count, 0);
	assert_false(fixture_file(f, ID_A));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_policy_by_pod_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_take_over, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_pod_cgroup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pod_gone, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
