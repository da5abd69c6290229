// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of user/lib/hostmatch.c: name normalisation and the name allow rules. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/hostmatch.h"
#include "lib/policy.h"

#define ERR_SIZE 512

/* A name of len characters made of labels of at most label_len characters. */
static void make_name(char *buf, size_t len, size_t label_len)
{
	size_t i, run = 0;

	for (i = 0; i < len; i++) {
		if (run == label_len && i + 1 < len) {
			buf[i] = '.';
			run = 0;
		} else {
			buf[i] = 'a';
			run++;
		}
	}
	buf[len] = '\0';
}

static void assert_normal(const char *in, const char *expected)
{
	char out[HOSTNAME_MAX_LENGTH + 1], err[ERR_SIZE] = "";

	assert_int_equal(hostname_normalize(in, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, expected);
}

static void assert_invalid(const char *in, const char *reason)
{
	char out[HOSTNAME_MAX_LENGTH + 1], err[ERR_SIZE] = "";

	assert_int_equal(hostname_normalize(in, out, sizeof(out), err, sizeof(err)), -EINVAL);
	if (!strstr(err, reason))
		fail_msg("\"%s\": error \"%s\" lacks \"%s\"", in, err, reason);
}

static void test_normalize_accepts(void **state)
{
	(void)state;
	assert_normal("example.com", "example.com");
	assert_normal("Example.COM", "example.com");
	assert_normal("example.com.", "example.com");
	assert_normal("API.Example.Com.", "api.example.com");
	assert_normal("localhost", "localhost");
	assert_normal("a", "a");
	assert_normal("0a.1-2.example", "0a.1-2.example");
	assert_normal("xn--bcher-kva.example", "xn--bcher-kva.example");
	assert_normal("123.example.com", "123.example.com");
	assert_normal("1.2.3.com", "1.2.3.com");
}

static void test_normalize_rejects(void **state)
{
	(void)state;
	assert_invalid("", "empty name");
	assert_invalid(".", "empty name");
	assert_invalid("..", "empty label");
	assert_invalid(".example.com", "empty label");
	assert_invalid("a..example.com", "empty label");
	assert_invalid("example.com..", "empty label");
	assert_invalid("-a.com", "hyphen");
	assert_invalid("a-.com", "hyphen");
	assert_invalid("a.-.com", "hyphen");
	assert_invalid("under_score.com", "invalid character '_'");
	assert_invalid("sp ace.com", "invalid character 0x20");
	assert_invalid("tab\t.com", "invalid character 0x09");
	assert_invalid("caf\xc3\xa9.com", "invalid character 0xc3");
	assert_invalid("*.example.com", "invalid character '*'");
	assert_invalid("example.com:443", "invalid character ':'");
	assert_invalid("1.2.3", "all digits");
	assert_invalid("1.2.3.4", "all digits");
	assert_invalid("1.2.3.256", "all digits");
	assert_invalid("example.123", "all digits");
}

static void test_normalize_label_length(void **state)
{
	char name[80], out[HOSTNAME_MAX_LENGTH + 1], err[ERR_SIZE];

	(void)state;
	make_name(name, 63, 63);
	strcat(name, ".com");
	assert_int_equal(hostname_normalize(name, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, name);

	make_name(name, 64, 64);
	strcat(name, ".com");
	assert_int_equal(hostname_normalize(name, out, sizeof(out), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "64 characters long; the limit is 63"));
}

static void test_normalize_total_length(void **state)
{
	char name[300], out[HOSTNAME_MAX_LENGTH + 1], err[ERR_SIZE];

	(void)state;
	make_name(name, 253, 63);
	assert_int_equal(hostname_normalize(name, out, sizeof(out), err, sizeof(err)), 0);
	assert_int_equal(strlen(out), 253);

	/* The trailing dot is not part of the 253. */
	strcat(name, ".");
	assert_int_equal(hostname_normalize(name, out, sizeof(out), err, sizeof(err)), 0);
	assert_int_equal(strlen(out), 253);

	make_name(name, 254, 63);
	assert_int_equal(hostname_normalize(name, out, sizeof(out), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "longer than 253"));

	make_name(name, 299, 63);
	assert_int_equal(hostname_normalize(name, out, sizeof(out), err, sizeof(err)), -EINVAL);
}

static void test_normalize_small_buffer(void **state)
{
	char out[8], err[ERR_SIZE];

	(void)state;
	assert_int_equal(hostname_normalize("example.com", out, sizeof(out), err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(hostname_normalize("a.b.c", out, sizeof(out), NULL, 0), 0);
	assert_string_equal(out, "a.b.c");
	assert_int_equal(hostname_normalize(NULL, out, sizeof(out), err, sizeof(err)), -EINVAL);
}

static struct policy_entry name_entry(enum policy_entry_kind kind, const char *name)
{
	struct policy_entry e;

	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.name = name; /* the callers' names are literals: they outlive the entry */
	return e;
}

static void test_hostname_entry(void **state)
{
	struct policy_entry e = name_entry(POLICY_ENTRY_HOSTNAME, "example.com");

	(void)state;
	assert_true(hostmatch_entry(&e, "example.com"));
	assert_true(hostmatch_entry(&e, "api.example.com"));
	assert_true(hostmatch_entry(&e, "a.b.c.example.com"));
	assert_false(hostmatch_entry(&e, "notexample.com"));
	assert_false(hostmatch_entry(&e, "xexample.com"));
	assert_false(hostmatch_entry(&e, "example.com.evil.com"));
	assert_false(hostmatch_entry(&e, "example.co"));
	assert_false(hostmatch_entry(&e, "com"));
	assert_false(hostmatch_entry(&e, ""));
	assert_false(hostmatch_entry(&e, ".com"));
	assert_false(hostmatch_entry(NULL, "example.com"));
	assert_false(hostmatch_entry(&e, NULL));
}

static void test_wildcard_entry(void **state)
{
	struct policy_entry e = name_entry(POLICY_ENTRY_WILDCARD, "example.com");
	struct policy_entry tld = name_entry(POLICY_ENTRY_WILDCARD, "com");

	(void)state;
	assert_false(hostmatch_entry(&e, "example.com"));
	assert_true(hostmatch_entry(&e, "api.example.com"));
	assert_true(hostmatch_entry(&e, "a.b.c.example.com"));
	assert_false(hostmatch_entry(&e, "notexample.com"));
	assert_false(hostmatch_entry(&e, "example.com.evil.com"));
	assert_false(hostmatch_entry(&e, "evil.com"));
	assert_true(hostmatch_entry(&tld, "example.com"));
	assert_false(hostmatch_entry(&tld, "com"));
	assert_false(hostmatch_entry(&tld, "example.org"));
}

static void test_address_entry_matches_no_name(void **state)
{
	struct policy_entry e;
	char err[ERR_SIZE], name[POLICY_NAME_SIZE];

	(void)state;
	assert_int_equal(policy_entry_parse("198.18.0.1", false, &e, name, err, sizeof(err)), 0);
	assert_int_equal(e.kind, POLICY_ENTRY_ADDRESS);
	assert_false(hostmatch_entry(&e, "198.18.0.1"));
	assert_false(hostmatch_entry(&e, ""));
}

static void parse_policy(const char *json, struct policy *p)
{
	char err[ERR_SIZE] = "";
	int ret = policy_parse(json, strlen(json), p, err, sizeof(err));

	if (ret)
		fail_msg("policy rejected: %s", err);
}

static void test_policy_match(void **state)
{
	struct policy p;

	(void)state;
	parse_policy("{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"pypi.org\","
		     "\"*.pythonhosted.org\",\"example.com:443\",\"198.18.0.0/24\"]}",
		     &p);
	assert_true(hostmatch_policy(&p, "pypi.org"));
	assert_true(hostmatch_policy(&p, "PyPI.org."));
	assert_true(hostmatch_policy(&p, "files.pypi.org"));
	assert_true(hostmatch_policy(&p, "files.pythonhosted.org"));
	assert_true(hostmatch_policy(&p, "A.B.PythonHosted.Org."));
	assert_false(hostmatch_policy(&p, "pythonhosted.org"));
	assert_false(hostmatch_policy(&p, "notpypi.org"));
	assert_false(hostmatch_policy(&p, "pypi.org.evil.com"));
	/* A port restricts addresses, not the name: the name is allowed. */
	assert_true(hostmatch_policy(&p, "www.example.com"));
	/* Invalid names are never allowed. */
	assert_false(hostmatch_policy(&p, "under_score.pypi.org"));
	assert_false(hostmatch_policy(&p, "a..pypi.org"));
	assert_false(hostmatch_policy(&p, "pypi.org.."));
	assert_false(hostmatch_policy(&p, ""));
	assert_false(hostmatch_policy(&p, NULL));
	assert_false(hostmatch_policy(&p, "198.18.0.1"));
	assert_false(hostmatch_policy(NULL, "pypi.org"));
	policy_free(&p);
}

static void test_policy_model_endpoints_not_names(void **state)
{
	struct policy p;

	(void)state;
	parse_policy("{\"network_mode\":\"no-network\","
		     "\"model_endpoints\":[\"api.provider.example:443\"]}",
		     &p);
	assert_int_equal(p.n_model_endpoints, 1);
	assert_false(hostmatch_policy(&p, "api.provider.example"));
	policy_free(&p);
}

static void test_policy_long_names(void **state)
{
	char name[400];
	struct policy p;

	(void)state;
	parse_policy("{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"*.a\"]}", &p);
	make_name(name, 253, 63);
	name[251] = '.';
	assert_true(hostmatch_policy(&p, name));
	make_name(name, 399, 63);
	assert_false(hostmatch_policy(&p, name));
	policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalize_accepts),
		cmocka_unit_test(test_normalize_rejects),
		cmocka_unit_test(test_normalize_label_length),
		cmocka_unit_test(test_normalize_total_length),
		cmocka_unit_test(test_normalize_small_buffer),
		cmocka_unit_test(test_hostname_entry),
		cmocka_unit_test(test_wildcard_entry),
		cmocka_unit_test(test_address_entry_matches_no_name),
		cmocka_unit_test(test_policy_match),
		cmocka_unit_test(test_policy_model_endpoints_not_names),
		cmocka_unit_test(test_policy_long_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
