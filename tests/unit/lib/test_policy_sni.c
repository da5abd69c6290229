// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the policy fields of names bound to TLS (issue 20,
 * docs/policy.md "Names bound to TLS"): "sni", "tls_ports", "http_ports",
 * their defaults, their errors (a clear message, *out untouched), and their
 * canonical form and digest (absent when default: earlier digests hold).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/policy.h"

#define ERR_SIZE 512

static int parse(const char *json, struct policy *p, char *err)
{
	return policy_parse(json, strlen(json), p, err, ERR_SIZE);
}

static void parse_ok(const char *json, struct policy *p)
{
	char err[ERR_SIZE] = "";

	if (parse(json, p, err))
		fail_msg("policy %s rejected: %s", json, err);
}

static void assert_rejected(const char *json, const char *message)
{
	struct policy p;
	char err[ERR_SIZE] = "";

	memset(&p, 0x5a, sizeof(p));
	assert_int_equal(parse(json, &p, err), -EINVAL);
	if (!strstr(err, message))
		fail_msg("policy %s: error \"%s\" lacks \"%s\"", json, err, message);
	assert_null(strchr(err, '\n'));
	assert_int_equal(((unsigned char *)&p)[0], 0x5a);
	assert_int_equal(((unsigned char *)&p)[sizeof(p) - 1], 0x5a);
}

static char *canonical(const struct policy *p)
{
	json_t *o = policy_to_json(p);
	char *text;

	assert_non_null(o);
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	assert_non_null(text);
	return text;
}

static void test_sni_defaults(void **state)
{
	struct policy p;
	const uint16_t *ports;
	size_t n;

	(void)state;
	parse_ok("{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"a.test\"]}", &p);
	assert_true(policy_sni_enforced(&p));
	ports = policy_sni_ports(&p, true, &n);
	assert_int_equal(n, 1);
	assert_int_equal(ports[0], 443);
	ports = policy_sni_ports(&p, false, &n);
	assert_int_equal(n, 1);
	assert_int_equal(ports[0], 80);
	policy_free(&p);
	/* A policy built in code (zeroed) gets the same defaults. */
	memset(&p, 0, sizeof(p));
	p.mode = POLICY_MODE_ALLOWLIST;
	assert_true(policy_sni_enforced(&p));
	ports = policy_sni_ports(&p, true, &n);
	assert_int_equal(ports[0], 443);
	/* Public mode judges nothing. */
	parse_ok("{\"network_mode\":\"public\"}", &p);
	assert_false(policy_sni_enforced(&p));
	policy_free(&p);
}

static void test_sni_given(void **state)
{
	struct policy p;
	const uint16_t *ports;
	size_t n;
	char *text;

	(void)state;
	parse_ok("{\"network_mode\":\"allowlist\",\"sni\":\"off\",\"tls_ports\":[8443,443],"
		 "\"http_ports\":[]}",
		 &p);
	assert_false(policy_sni_enforced(&p));
	ports = policy_sni_ports(&p, true, &n);
	assert_int_equal(n, 2);
	assert_int_equal(ports[0], 443); /* sorted */
	assert_int_equal(ports[1], 8443);
	policy_sni_ports(&p, false, &n);
	assert_int_equal(n, 0); /* an empty list is a choice: no HTTP port judged */
	text = canonical(&p);
	assert_string_equal(text, "{\"allow_loopback\":true,\"allow_model_endpoint\":true,"
				  "\"allowed_hosts\":[],\"http_ports\":[],\"model_endpoints\":[],"
				  "\"network_mode\":\"allowlist\",\"sni\":\"off\","
				  "\"tls_ports\":[443,8443]}");
	free(text);
	policy_free(&p);
	parse_ok("{\"network_mode\":\"no-network\",\"sni\":\"enforce\"}", &p);
	assert_true(policy_sni_enforced(&p));
	policy_free(&p);
}

static void test_sni_canonical_and_digest(void **state)
{
	struct policy a, b, c, round;
	char err[ERR_SIZE] = "", *text;

	(void)state;
	parse_ok("{\"network_mode\":\"allowlist\"}", &a);
	parse_ok("{\"network_mode\":\"allowlist\",\"sni\":\"enforce\",\"tls_ports\":[443]}", &b);
	parse_ok("{\"network_mode\":\"allowlist\",\"sni\":\"off\"}", &c);
	/* Defaults are not written: a default policy keeps its earlier canonical form. */
	text = canonical(&a);
	assert_null(strstr(text, "sni"));
	assert_null(strstr(text, "tls_ports"));
	free(text);
	assert_int_equal(policy_digest(&a) == policy_digest(&c), 0);
	/* tls_ports [443] given is written, and round-trips. */
	text = canonical(&b);
	assert_non_null(strstr(text, "\"tls_ports\":[443]"));
	assert_int_equal(parse(text, &round, err), 0);
	assert_int_equal(policy_digest(&round), policy_digest(&b));
	free(text);
	text = canonical(&c);
	policy_free(&round);
	assert_int_equal(parse(text, &round, err), 0);
	assert_true(round.sni_off);
	assert_int_equal(policy_digest(&round), policy_digest(&c));
	free(text);
	policy_free(&round);
	policy_free(&a);
	policy_free(&b);
	policy_free(&c);
}

static void test_sni_rejected(void **state)
{
	(void)state;
	assert_rejected("{\"network_mode\":\"allowlist\",\"sni\":\"on\"}",
			"sni \"on\" is not one of \"enforce\", \"off\"");
	assert_rejected("{\"network_mode\":\"allowlist\",\"sni\":true}", "sni must be a string");
	assert_rejected("{\"network_mode\":\"allowlist\",\"tls_ports\":443}",
			"tls_ports must be an array");
	assert_rejected("{\"network_mode\":\"allowlist\",\"tls_ports\":[0]}",
			"tls_ports[0] must be a port number (1-65535)");
	assert_rejected("{\"network_mode\":\"allowlist\",\"http_ports\":[80,65536]}",
			"http_ports[1] must be a port number");
	assert_rejected("{\"network_mode\":\"allowlist\",\"http_ports\":[\"80\"]}",
			"http_ports[0] must be a port number");
	assert_rejected("{\"network_mode\":\"allowlist\",\"tls_ports\":[443,443]}",
			"tls_ports lists port 443 twice");
	assert_rejected("{\"network_mode\":\"allowlist\",\"tls_ports\":[1,2,3,4,5,6,7,8,9,10,"
			"11,12,13,14,15,16,17]}",
			"tls_ports has 17 ports; the limit is 16");
	assert_rejected("{\"network_mode\":\"allowlist\",\"http_ports\":[443]}",
			"port 443 is in both tls_ports and http_ports");
	assert_rejected("{\"network_mode\":\"allowlist\",\"tls_ports\":[80,443]}",
			"port 80 is in both tls_ports and http_ports");
	assert_rejected("{\"network_mode\":\"public\",\"sni\":\"off\"}",
			"no effect in public mode");
	assert_rejected("{\"network_mode\":\"public\",\"tls_ports\":[443]}",
			"no effect in public mode");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sni_defaults),
		cmocka_unit_test(test_sni_given),
		cmocka_unit_test(test_sni_canonical_and_digest),
		cmocka_unit_test(test_sni_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
