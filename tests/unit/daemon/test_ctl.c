// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Control socket requests: every malformed kind gets its error code, nothing leaks. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/ctl.h"

static void expect_refused(const char *line, const char *code, const char *in_message)
{
	struct sandbox_error error = {0};
	struct ctl_request request;

	assert_int_equal(ctl_request_parse(line, strlen(line), &request, &error), -EINVAL);
	assert_non_null(error.code);
	assert_string_equal(error.code, code);
	if (in_message && !strstr(error.message, in_message))
		fail_msg("message \"%s\" lacks \"%s\"", error.message, in_message);
	assert_null(request.root);
}

static void test_valid_requests(void **state)
{
	struct sandbox_error error = {0};
	struct ctl_request request;
	const char *line;
	const char *attach = "{\"op\":\"attach\",\"cgroup\":\"/sys/fs/cgroup/x\","
			     "\"policy\":{\"network_mode\":\"allowlist\","
			     "\"allowed_hosts\":[\"198.18.0.1\"]}}";

	(void)state;
	assert_int_equal(ctl_request_parse(attach, strlen(attach), &request, &error), 0);
	assert_int_equal(request.op, CTL_OP_ATTACH);
	assert_string_equal(request.cgroup, "/sys/fs/cgroup/x");
	assert_true(request.has_policy);
	assert_int_equal(request.policy.mode, POLICY_MODE_ALLOWLIST);
	ctl_request_free(&request);

	assert_int_equal(ctl_request_parse("{\"op\":\"status\"}", 15, &request, &error), 0);
	assert_int_equal(request.op, CTL_OP_STATUS);
	assert_null(request.cgroup);
	ctl_request_free(&request);

	assert_int_equal(
		ctl_request_parse("{\"op\":\"verify\",\"cgroup\":\"sb\"}", 29, &request, &error),
		0);
	assert_int_equal(request.op, CTL_OP_VERIFY);
	assert_false(request.has_policy);
	assert_int_equal(request.max_age, -1);
	ctl_request_free(&request);

	line = "{\"op\":\"verify\",\"cgroup\":\"sb\",\"max_age\":30}";
	assert_int_equal(ctl_request_parse(line, strlen(line), &request, &error), 0);
	assert_int_equal(request.max_age, 30);
	ctl_request_free(&request);

	line = "{\"op\":\"attach\",\"cgroup\":\"sb\",\"netns\":\"/proc/1/ns/net\","
	       "\"policy\":{\"network_mode\":\"no-network\"}}";
	assert_int_equal(ctl_request_parse(line, strlen(line), &request, &error), 0);
	assert_string_equal(request.netns, "/proc/1/ns/net");
	assert_false(request.kill_holders);
	ctl_request_free(&request);

	line = "{\"op\":\"update\",\"cgroup\":\"sb\",\"kill_holders\":true,"
	       "\"policy\":{\"network_mode\":\"no-network\"}}";
	assert_int_equal(ctl_request_parse(line, strlen(line), &request, &error), 0);
	assert_true(request.kill_holders);
	ctl_request_free(&request);
}

#define CTL_TEST_ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* The container of a request, and the policy a hook may leave to a name or a record. */
static void test_container_requests(void **state)
{
	struct sandbox_error error = {0};
	struct ctl_request request;
	const char *line;

	(void)state;
	line = "{\"op\":\"attach\",\"cgroup\":\"sb\",\"container\":{\"id\":\"" CTL_TEST_ID
	       "\",\"name\":\"web\",\"runtime\":\"podman\"},\"policy_name\":\"install\"}";
	assert_int_equal(ctl_request_parse(line, strlen(line), &request, &error), 0);
	assert_true(request.has_container);
	assert_string_equal(request.container.id, CTL_TEST_ID);
	assert_string_equal(request.container.name, "web");
	assert_string_equal(request.container.runtime, "podman");
	assert_string_equal(request.policy_name, "install");
	assert_false(request.has_policy);
	ctl_request_free(&request);

	/* A hook without a selection: the daemon's record decides. */
	line = "{\"op\":\"attach\",\"cgroup\":\"sb\",\"container\":{\"id\":\"" CTL_TEST_ID
	       "\",\"runtime\":\"docker\"}}";
	assert_int_equal(ctl_request_parse(line, strlen(line), &request, &error), 0);
	assert_true(request.has_container);
	assert_string_equal(request.container.name, "");
	ctl_request_free(&request);

	expect_refused("{\"op\":\"attach\",\"cgroup\":\"sb\",\"container\":{\"id\":\"abc\","
		       "\"runtime\":\"podman\"}}",
		       "bad_request", "container");
	expect_refused("{\"op\":\"attach\",\"cgroup\":\"sb\",\"container\":{\"id\":\"" CTL_TEST_ID
		       "\",\"runtime\":\"lxc\"}}",
		       "bad_request", "container");
	expect_refused("{\"op\":\"attach\",\"cgroup\":\"sb\",\"container\":{\"id\":\"" CTL_TEST_ID
		       "\",\"runtime\":\"podman\",\"extra\":1}}",
		       "bad_request", "container");
	expect_refused("{\"op\":\"attach\",\"cgroup\":\"sb\",\"policy_name\":\"../etc/x\"}",
		       "bad_request", "policy_name");
	expect_refused("{\"op\":\"attach\",\"cgroup\":\"sb\",\"policy_name\":\".hidden\"}",
		       "bad_request", "policy_name");
	expect_refused("{\"op\":\"attach\",\"cgroup\":\"sb\",\"policy_name\":\"a\","
		       "\"policy\":{\"network_mode\":\"public\"}}",
		       "bad_request", "exclusive");
	/* Without a container or a name, attach still needs its policy; update always does. */
	expect_refused("{\"op\":\"attach\",\"cgroup\":\"sb\"}", "bad_request", "policy");
	expect_refused("{\"op\":\"update\",\"cgroup\":\"sb\",\"policy_name\":\"a\"}", "bad_request",
		       "policy_name");
	expect_refused("{\"op\":\"update\",\"cgroup\":\"sb\",\"container\":{\"id\":\"" CTL_TEST_ID
		       "\",\"runtime\":\"podman\"}}",
		       "bad_request", "policy");
}

#define CTL_TEST_POD_UID "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"
#define CTL_TEST_CONTAINER(extra)                                                                  \
	"{\"op\":\"attach\",\"cgroup\":\"sb\",\"policy_name\":\"install\",\"container\":{\"id\":"  \
	"\"" CTL_TEST_ID "\",\"runtime\":\"cri-o\"" extra "}}"

/* A Kubernetes container's pod key: optional, both or neither, each a short name. */
static void test_container_pod_key(void **state)
{
	struct sandbox_error error = {0};
	struct ctl_request request;
	const char *line;

	(void)state;
	line = CTL_TEST_CONTAINER(",\"pod_uid\":\"" CTL_TEST_POD_UID
				  "\",\"pod_container\":\"agent\"");
	assert_int_equal(ctl_request_parse(line, strlen(line), &request, &error), 0);
	assert_string_equal(request.container.pod_uid, CTL_TEST_POD_UID);
	assert_string_equal(request.container.pod_container, "agent");
	ctl_request_free(&request);

	/* Old clients send none: no pod key. */
	line = CTL_TEST_CONTAINER("");
	assert_int_equal(ctl_request_parse(line, strlen(line), &request, &error), 0);
	assert_string_equal(request.container.pod_uid, "");
	assert_string_equal(request.container.pod_container, "");
	ctl_request_free(&request);

	/* Detach of a stopped container by its pod key. */
	line = "{\"op\":\"detach\",\"container\":{\"id\":\"" CTL_TEST_ID
	       "\",\"runtime\":\"cri-o\",\"pod_uid\":\"u\",\"pod_container\":\"c\"}}";
	assert_int_equal(ctl_request_parse(line, strlen(line), &request, &error), 0);
	assert_null(request.cgroup);
	assert_string_equal(request.container.pod_uid, "u");
	ctl_request_free(&request);

	expect_refused(CTL_TEST_CONTAINER(",\"pod_uid\":\"" CTL_TEST_POD_UID "\""), "bad_request",
		       "together");
	expect_refused(CTL_TEST_CONTAINER(",\"pod_container\":\"agent\""), "bad_request",
		       "together");
	expect_refused(CTL_TEST_CONTAINER(",\"pod_uid\":\"\",\"pod_container\":\"\""),
		       "bad_request", "together");
	expect_refused(CTL_TEST_CONTAINER(",\"pod_uid\":\"a/b\",\"pod_container\":\"agent\""),
		       "bad_request", "together");
	expect_refused(CTL_TEST_CONTAINER(",\"pod_uid\":\"u\",\"pod_container\":\"a b\""),
		       "bad_request", "together");
	expect_refused(
		CTL_TEST_CONTAINER(
			",\"pod_uid\":\"u\",\"pod_container\":"
			"\"0123456789012345678901234567890123456789012345678901234567890123\""),
		"bad_request", "together");
	expect_refused(CTL_TEST_CONTAINER(",\"pod_uid\":1,\"pod_container\":\"agent\""),
		       "bad_request", "container");
}

/* guard takes a cgroup and a policy (the CLI sends no-network by default); unguard a cgroup. */
static void test_guard_requests(void **state)
{
	struct sandbox_error error = {0};
	struct ctl_request request;
	const char *line = "{\"op\":\"guard\",\"cgroup\":\"docker\","
			   "\"policy\":{\"network_mode\":\"no-network\"}}";

	(void)state;
	assert_int_equal(ctl_request_parse(line, strlen(line), &request, &error), 0);
	assert_int_equal(request.op, CTL_OP_GUARD);
	assert_string_equal(request.cgroup, "docker");
	assert_true(request.has_policy);
	assert_int_equal(request.policy.mode, POLICY_MODE_NO_NETWORK);
	ctl_request_free(&request);
	line = "{\"op\":\"unguard\",\"cgroup\":\"docker\"}";
	assert_int_equal(ctl_request_parse(line, strlen(line), &request, &error), 0);
	assert_int_equal(request.op, CTL_OP_UNGUARD);
	assert_false(request.has_policy);
	ctl_request_free(&request);
	expect_refused("{\"op\":\"guard\",\"cgroup\":\"docker\"}", "bad_request", "policy");
	expect_refused("{\"op\":\"guard\",\"policy\":{\"network_mode\":\"no-network\"}}",
		       "bad_request", "cgroup");
	expect_refused("{\"op\":\"unguard\",\"cgroup\":\"x\",\"policy\":{}}", "bad_request",
		       "policy");
	expect_refused("{\"op\":\"guard\",\"cgroup\":\"x\",\"netns\":\"/n\",\"policy\":{}}",
		       "bad_request", "netns");
}

static void test_bad_json(void **state)
{
	(void)state;
	expect_refused("", "bad_json", NULL);
	expect_refused("{", "bad_json", NULL);
	expect_refused("{\"op\":\"status\"} trailing", "bad_json", NULL);
	expect_refused("{\"op\":\"status\",\"op\":\"attach\"}", "bad_json", NULL);
}

static void test_bad_shapes(void **state)
{
	(void)state;
	expect_refused("[]", "bad_request", "JSON object");
	expect_refused("42", "bad_json", NULL); /* jansson takes only arrays and objects */
	expect_refused("{}", "bad_request", "op");
	expect_refused("{\"op\":7}", "bad_request", "op");
	expect_refused("{\"op\":\"explode\"}", "unknown_op", NULL);
	expect_refused("{\"op\":\"detach\"}", "bad_request", "cgroup");
	expect_refused("{\"op\":\"detach\",\"cgroup\":\"\"}", "bad_request", "cgroup");
	expect_refused("{\"op\":\"detach\",\"cgroup\":5}", "bad_request", "cgroup");
	expect_refused("{\"op\":\"attach\",\"cgroup\":\"x\"}", "bad_request", "policy");
	expect_refused("{\"op\":\"attach\",\"cgroup\":\"x\",\"policy\":[]}", "bad_request",
		       "policy");
	expect_refused("{\"op\":\"detach\",\"cgroup\":\"x\",\"policy\":{}}", "bad_request",
		       "policy");
	expect_refused("{\"op\":\"status\",\"verbose\":true}", "bad_request", "verbose");
	expect_refused("{\"op\":\"verify\",\"cgroup\":\"x\",\"max_age\":-1}", "bad_request",
		       "max_age");
	expect_refused("{\"op\":\"verify\",\"cgroup\":\"x\",\"max_age\":\"5\"}", "bad_request",
		       "max_age");
	expect_refused("{\"op\":\"detach\",\"cgroup\":\"x\",\"max_age\":5}", "bad_request",
		       "max_age");
	expect_refused("{\"op\":\"update\",\"cgroup\":\"x\",\"netns\":\"/n\",\"policy\":{}}",
		       "bad_request", "netns");
	expect_refused("{\"op\":\"attach\",\"cgroup\":\"x\",\"netns\":3,\"policy\":{}}",
		       "bad_request", "netns");
	expect_refused("{\"op\":\"update\",\"cgroup\":\"x\",\"kill_holders\":1,\"policy\":{}}",
		       "bad_request", "kill_holders");
	expect_refused("{\"op\":\"verify\",\"cgroup\":\"x\",\"kill_holders\":true}", "bad_request",
		       "kill_holders");
}

static void test_invalid_policy(void **state)
{
	(void)state;
	expect_refused("{\"op\":\"attach\",\"cgroup\":\"x\",\"policy\":{\"network_mode\":"
		       "\"allowlist\",\"allowed_hosts\":[\"a.*.com\"]}}",
		       "invalid_policy", "a.*.com");
	expect_refused("{\"op\":\"update\",\"cgroup\":\"x\",\"policy\":{\"network_mode\":"
		       "\"allowlist\",\"allowed_hostz\":[]}}",
		       "invalid_policy", "allowed_hostz");
}

static void test_too_large(void **state)
{
	size_t length = CTL_MAX_REQUEST_BYTES + 1;
	char *line = malloc(length + 1);

	(void)state;
	assert_non_null(line);
	memset(line, ' ', length);
	line[length] = '\0';
	expect_refused(line, "too_large", NULL);
	free(line);
}

static void test_reply_error_shape(void **state)
{
	json_t *reply = ctl_reply_error("not_attached", "cgroup x is not attached");

	(void)state;
	assert_true(json_is_false(json_object_get(reply, "ok")));
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(reply, "error"), "code")),
		"not_attached");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(reply, "error"), "message")),
		"cgroup x is not attached");
	json_decref(reply);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_requests),	  cmocka_unit_test(test_container_requests),
		cmocka_unit_test(test_container_pod_key), cmocka_unit_test(test_bad_json),
		cmocka_unit_test(test_bad_shapes),	  cmocka_unit_test(test_invalid_policy),
		cmocka_unit_test(test_too_large),	  cmocka_unit_test(test_reply_error_shape),
		cmocka_unit_test(test_guard_requests),
	};

	return cmocka_run_group_tests_name("ctl", tests, NULL, NULL);
}
