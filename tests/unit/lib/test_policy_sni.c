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
#include "policy_fixture.h"

#define ERR_SIZE FIXTURE_ERR_SIZE

static void test_sni_defaults(void **state)
{
	struct policy p;
	const uint16_t *ports;
	size_t n;

	(void)state;
	fixture_parse_ok("{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"a.test\"]}", &p);
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
	fixture_parse_ok("{\"network_mode\":\"public\"}", &p);
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
	fixture_parse_ok("{\"network_mode\":\"allowlist\",\"sni\":\"off\",\"tls_ports\":[8443,443],"
			 "\"http_ports\":[]}",
			 &p);
	assert_false(policy_sni_enforced(&p));
	ports = policy_sni_ports(&p, true, &n);
	assert_int_equal(n, 2);
	assert_int_equal(ports[0], 443); /* sorted */
	assert_int_equal(ports[1], 8443);
	policy_sni_ports(&p, false, &n);
	assert_int_equal(n, 0); /* an empty list is a choice: no HTTP port judged */
	text = fixture_canonical(&p);
	assert_string_equal(text, "{\"allow_loopback\":true,\"allow_model_endpoint\":true,"
				  "\"allowed_hosts\":[],\"http_ports\":[],\"model_endpoints\":[],"
				  "\"network_mode\":\"allowlist\",\"sni\":\"off\","
				  "\"tls_ports\":[443,8443]}");
	free(text);
	policy_free(&p);
	fixture_parse_ok("{\"network_mode\":\"no-network\",\"sni\":\"enforce\"}", &p);
	assert_true(policy_sni_enforced(&p));
	policy_free(&p);
}

static void test_sni_canonical_and_digest(void **state)
{
	struct policy a, b, c, round;
	char err[ERR_SIZE] = "", *text;

	(void)state;
	fixture_parse_ok("{\"network_mode\":\"allowlist\"}", &a);
	fixture_parse_ok("{\"network_mode\":\"allowlist\",\"sni\":\"enforce\",\"tls_ports\":[443]}",
			 &b);
	fixture_parse_ok("{\"network_mode\":\"allowlist\",\"sni\":\"off\"}", &c);
	/* Defaults are not written: a default policy keeps its earlier canonical form. */
	text = fixture_canonical(&a);
	assert_null(strstr(text, "sni"));
	assert_null(strstr(text, "tls_ports"));
	free(text);
	assert_int_equal(policy_digest(&a) == policy_digest(&c), 0);
	/* tls_ports [443] given is written, and round-trips. */
	text = fixture_canonical(&b);
	assert_non_null(strstr(text, "\"tls_ports\":[443]"));
	assert_int_equal(fixture_parse(text, &round, err), 0);
	assert_int_equal(policy_digest(&round), policy_digest(&b));
	free(text);
	text = fixture_canonical(&c);
	policy_free(&round);
	assert_int_equal(fixture_parse(text, &round, err), 0);
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
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"sni\":\"on\"}",
				"sni \"on\" is not one of \"enforce\", \"off\"");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"sni\":true}",
				"sni must be a string");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"tls_ports\":443}",
				"tls_ports must be an array");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"tls_ports\":[0]}",
				"tls_ports[0] must be a port number (1-65535)");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"http_ports\":[80,65536]}",
				"http_ports[1] must be a port number");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"http_ports\":[\"80\"]}",
				"http_ports[0] must be a port number");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"tls_ports\":[443,443]}",
				"tls_ports lists port 443 twice");
	fixture_assert_rejected(
		"{\"network_mode\":\"allowlist\",\"tls_ports\":[1,2,3,4,5,6,7,8,9,10,"
		"11,12,13,14,15,16,17]}",
		"tls_ports has 17 ports; the limit is 16");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"http_ports\":[443]}",
				"port 443 is in both tls_ports and http_ports");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"tls_ports\":[80,443]}",
				"port 80 is in both tls_ports and http_ports");
	fixture_assert_rejected("{\"network_mode\":\"public\",\"sni\":\"off\"}",
				"no effect in public mode");
	fixture_assert_rejected("{\"network_mode\":\"public\",\"tls_ports\":[443]}",
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
