// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the loopback entries of a policy (docs/policy.md "Loopback"):
 * an exact loopback address with a port opens that port without
 * allow_loopback; 0.0.0.0 and :: are never entries; a loopback CIDR is refused
 * without allow_loopback (the kernel opens loopback to exact entries only);
 * bfbpf run's default allow_loopback is false.
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
#include <arpa/inet.h>

#include <cmocka.h>

#include "lib/allowset.h"
#include "lib/policy.h"

#define ERR_SIZE 512

static int parse_with(const char *json, bool allow_loopback, struct policy *p, char *err)
{
	json_error_t jerr;
	json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
	int ret;

	if (!root)
		fail_msg("bad test JSON %s: %s", json, jerr.text);
	ret = policy_from_json_loopback(root, allow_loopback, p, err, ERR_SIZE);
	json_decref(root);
	return ret;
}

static void parse_ok(const char *json, bool allow_loopback, struct policy *p)
{
	char err[ERR_SIZE] = "";

	if (parse_with(json, allow_loopback, p, err))
		fail_msg("policy %s rejected: %s", json, err);
}

static void assert_rejected(const char *json, bool allow_loopback, const char *message)
{
	struct policy p;
	char err[ERR_SIZE] = "";

	assert_int_equal(parse_with(json, allow_loopback, &p, err), -EINVAL);
	if (!strstr(err, message))
		fail_msg("policy %s: error \"%s\" lacks \"%s\"", json, err, message);
	assert_null(strchr(err, '\n'));
}

static void assert_entry_refused(const char *text, bool model, const char *reason)
{
	struct policy_entry e;
	char name[POLICY_NAME_SIZE], err[ERR_SIZE] = "";

	assert_int_equal(policy_entry_parse(text, model, &e, name, err, sizeof(err)), -EINVAL);
	if (!strstr(err, reason))
		fail_msg("entry %s: error \"%s\" lacks \"%s\"", text, err, reason);
}

/* The allow set of a policy holds exactly these (address, prefix, port) entries, in order. */
static void assert_allowset(const struct policy *p, const char *const *addr, const int *prefix,
			    const int *port, size_t n)
{
	struct allowset set = {0};

	assert_int_equal(allowset_from_policy(p, &set), 0);
	assert_int_equal(set.count, n);
	for (size_t i = 0; i < n; i++) {
		struct in6_addr want;

		assert_int_equal(inet_pton(AF_INET6, addr[i], &want), 1);
		assert_memory_equal(set.entries[i].addr, &want, 16);
		assert_int_equal(set.entries[i].prefix_len, prefix[i]);
		assert_int_equal(set.entries[i].port, port[i]);
	}
	allowset_free(&set);
}

static void test_unspecified_refused(void **state)
{
	static const char *const refused[] = {
		"0.0.0.0",	  "0.0.0.0:4000",   "::",     "[::]:4000",
		"::ffff:0.0.0.0", "0.0.0.0/32:443", "::/128", "64:ff9b::",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_entry_refused(refused[i], false, "is not a destination");
		/* The lane takes no CIDR: its own error comes first for "/32". */
		if (!strchr(refused[i], '/'))
			assert_entry_refused(refused[i], true, "is not a destination");
	}
	assert_entry_refused("0.0.0.0:4000", false, "\"127.0.0.1:PORT\"");
}

static void test_loopback_literals_accepted(void **state)
{
	static const char *const addr[] = {"::1", "::ffff:127.0.0.1", "::ffff:127.0.0.2"};
	static const int prefix[] = {128, 128, 128}, port[] = {4000, 4000, 0};
	struct policy p;

	(void)state;
	parse_ok("{\"network_mode\":\"allowlist\",\"allow_loopback\":false,\"allowed_hosts\":"
		 "[\"127.0.0.1:4000\",\"[::1]:4000\",\"::ffff:127.0.0.2\",\"0.0.0.0/0\"]}",
		 true, &p);
	assert_false(p.allow_loopback);
	assert_int_equal(p.n_allowed_hosts, 4);
	policy_free(&p);
	/* In no-network, the lane is in force: its loopback entry is programmed. */
	parse_ok("{\"network_mode\":\"no-network\",\"allow_loopback\":false,\"model_endpoints\":"
		 "[\"127.0.0.1:4000\",\"[::1]:4000\",\"127.0.0.2\"]}",
		 true, &p);
	assert_allowset(&p, addr, prefix, port, 3);
	policy_free(&p);
}

static void test_loopback_cidr(void **state)
{
	struct policy p;

	(void)state;
	assert_rejected("{\"network_mode\":\"allowlist\",\"allow_loopback\":false,"
			"\"allowed_hosts\":[\"198.18.0.1\",\"127.0.0.0/8\"]}",
			true, "allowed_hosts[1] \"127.0.0.0/8\": a CIDR never opens loopback");
	assert_rejected("{\"network_mode\":\"allowlist\",\"allow_loopback\":false,"
			"\"allowed_hosts\":[\"127.0.0.0/24:4000\"]}",
			true, "name each loopback address with its port");
	assert_rejected("{\"network_mode\":\"allowlist\",\"allow_loopback\":false,"
			"\"allowed_hosts\":[\"::/127\"]}",
			true, "a CIDR never opens loopback");
	/* run's default: the same refusal when the key is left out. */
	assert_rejected("{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"127.0.0.0/8\"]}",
			false, "a CIDR never opens loopback");
	/* With allow_loopback, loopback is open anyway: the CIDR is harmless. */
	parse_ok("{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"127.0.0.0/8\"]}", true, &p);
	policy_free(&p);
	/* CIDRs that only contain loopback are not loopback CIDRs. */
	parse_ok("{\"network_mode\":\"allowlist\",\"allow_loopback\":false,\"allowed_hosts\":"
		 "[\"0.0.0.0/0\",\"::/0\",\"::/96\",\"126.0.0.0/7\",\"0.0.0.0/8\"]}",
		 true, &p);
	policy_free(&p);
}

static void test_run_default(void **state)
{
	static const char no_network[] = "{\"network_mode\":\"no-network\"}";
	struct policy p;
	char dir[] = "/tmp/bfbpf-test-loopback-XXXXXX", path[128], err[ERR_SIZE] = "";
	FILE *f;

	(void)state;
	parse_ok("{\"network_mode\":\"no-network\"}", false, &p);
	assert_false(p.allow_loopback);
	policy_free(&p);
	parse_ok("{\"network_mode\":\"no-network\",\"allow_loopback\":true}", false, &p);
	assert_true(p.allow_loopback);
	policy_free(&p);
	parse_ok("{\"network_mode\":\"no-network\"}", true, &p);
	assert_true(p.allow_loopback);
	policy_free(&p);
	/* policy_from_json() keeps the contract's default. */
	assert_int_equal(policy_parse(no_network, strlen(no_network), &p, err, ERR_SIZE), 0);
	assert_true(p.allow_loopback);
	policy_free(&p);

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/policy.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"network_mode\":\"no-network\",\"model_endpoints\":[\"127.0.0.1:4000\"]}", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(policy_load_file_loopback(path, false, &p, err, sizeof(err)), 0);
	assert_false(p.allow_loopback);
	assert_int_equal(p.n_model_endpoints, 1);
	policy_free(&p);
	assert_int_equal(policy_load_file(path, &p, err, sizeof(err)), 0);
	assert_true(p.allow_loopback);
	policy_free(&p);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unspecified_refused),
		cmocka_unit_test(test_loopback_literals_accepted),
		cmocka_unit_test(test_loopback_cidr),
		cmocka_unit_test(test_run_default),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
