// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of user/lib/policy.c and the entry grammar (docs/policy.md). */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/policy.h"
#include "policy_fixture.h"

#define ERR_SIZE FIXTURE_ERR_SIZE

/* ---- helpers ---- */

/* Names of the entries entry_ok() returns: a few stay valid at once. */
static char entry_names[8][POLICY_NAME_SIZE];
static unsigned int entry_names_next;

static struct policy_entry entry_ok(const char *text, bool model)
{
	char *name = entry_names[entry_names_next++ % 8];
	struct policy_entry e;
	char err[ERR_SIZE] = "";

	if (policy_entry_parse(text, model, &e, name, err, sizeof(err)))
		fail_msg("entry \"%s\" rejected: %s", text, err);
	return e;
}

/* Same entry: every field, and the name by value (where it is stored differs). */
static void assert_entry_equal(const struct policy_entry *a, const struct policy_entry *b)
{
	assert_int_equal(a->kind, b->kind);
	assert_string_equal(a->name, b->name);
	assert_memory_equal(&a->addr, &b->addr, sizeof(a->addr));
	assert_int_equal(a->prefix_len, b->prefix_len);
	assert_int_equal(a->port, b->port);
}

/* Parses text and checks its canonical spelling. */
static void assert_entry(const char *text, bool model, const char *canonical)
{
	struct policy_entry e = entry_ok(text, model), again;
	char buf[POLICY_ENTRY_TEXT_MAX], err[ERR_SIZE], name[POLICY_NAME_SIZE];

	assert_int_equal(policy_entry_format(&e, buf, sizeof(buf)), 0);
	if (strcmp(buf, canonical) != 0)
		fail_msg("\"%s\" formats as \"%s\", expected \"%s\"", text, buf, canonical);
	/* The canonical text parses back to the same entry. */
	assert_int_equal(policy_entry_parse(buf, model, &again, name, err, sizeof(err)), 0);
	assert_entry_equal(&e, &again);
}

/* The entry is rejected; the message quotes it and gives the reason. */
static void assert_entry_rejected(const char *text, bool model, const char *reason)
{
	struct policy_entry e;
	char err[ERR_SIZE] = "", quoted[400];

	memset(&e, 0x5a, sizeof(e));
	assert_int_equal(policy_entry_parse(text, model, &e, entry_names[0], err, sizeof(err)),
			 -EINVAL);
	/* The message quotes the entry: escaped after the first odd character, cut at 64. */
	snprintf(quoted, sizeof(quoted), "\"%.*s", (int)strcspn(text, "\n\t\"\\"), text);
	if (strlen(text) < 64 && text[strcspn(text, "\n\t\"\\")] == '\0')
		strcat(quoted, "\": ");
	quoted[65] = '\0';
	if (strncmp(err, quoted, strlen(quoted)) != 0 || !strstr(err, reason))
		fail_msg("\"%s\": error \"%s\" lacks %s or \"%s\"", text, err, quoted, reason);
	assert_null(strchr(err, '\n'));
	/* *out untouched */
	assert_int_equal(((unsigned char *)&e)[0], 0x5a);
	assert_int_equal(((unsigned char *)&e)[sizeof(e) - 1], 0x5a);
}

static void make_name(char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (i % 64 == 63 && i + 1 < len) ? '.' : 'a';
	buf[len] = '\0';
}

/* ---- entries ---- */

static void test_entry_hostname(void **state)
{
	struct policy_entry e;

	(void)state;
	e = entry_ok("Example.COM.", false);
	assert_int_equal(e.kind, POLICY_ENTRY_HOSTNAME);
	assert_string_equal(e.name, "example.com");
	assert_int_equal(e.port, 0);
	assert_entry("example.com", false, "example.com");
	assert_entry("API.Example.com", false, "api.example.com");
	assert_entry("localhost", false, "localhost");
	assert_entry("xn--bcher-kva.example", false, "xn--bcher-kva.example");
	assert_entry("1.2.3.com", false, "1.2.3.com");
}

static void test_entry_hostname_rejected(void **state)
{
	(void)state;
	assert_entry_rejected("", false, "empty entry");
	assert_entry_rejected(" example.com", false, "invalid character 0x20");
	assert_entry_rejected("exa mple.com", false, "invalid character");
	assert_entry_rejected("under_score.example.com", false, "invalid character '_'");
	assert_entry_rejected("-a.com", false, "hyphen");
	assert_entry_rejected("a-.com", false, "hyphen");
	assert_entry_rejected("a..com", false, "empty label");
	assert_entry_rejected(".a.com", false, "empty label");
	assert_entry_rejected("a.com..", false, "empty label");
	assert_entry_rejected("1.2.3", false, "all digits");
	assert_entry_rejected("1.2.3.256", false, "all digits");
	assert_entry_rejected("01.2.3.4", false, "all digits");
	assert_entry_rejected("example.com/24", false, "not a valid IP address");
	assert_entry_rejected("https://example.com", false, "URL");
	assert_entry_rejected("exa\nmple.com", false, "invalid character 0x0a");
}

static void test_entry_label_and_name_length(void **state)
{
	char name[300], text[310], err[ERR_SIZE];
	struct policy_entry e;

	(void)state;
	memset(name, 'a', 63);
	strcpy(name + 63, ".com");
	assert_entry(name, false, name);
	memset(name, 'a', 64);
	strcpy(name + 64, ".com");
	assert_entry_rejected(name, false, "64 characters long; the limit is 63");

	make_name(name, 253);
	assert_entry(name, false, name);
	snprintf(text, sizeof(text), "%s.", name);
	assert_entry(text, false, name);
	snprintf(text, sizeof(text), "*.%s", name);
	assert_int_equal(policy_entry_parse(text, false, &e, entry_names[0], err, sizeof(err)), 0);
	assert_int_equal(e.kind, POLICY_ENTRY_WILDCARD);
	make_name(name, 254);
	assert_entry_rejected(name, false, "longer than 253");
}

static void test_entry_too_long(void **state)
{
	char text[POLICY_MAX_ENTRY_LENGTH + 2], err[ERR_SIZE];
	struct policy_entry e;

	(void)state;
	make_name(text, POLICY_MAX_ENTRY_LENGTH + 1);
	assert_entry_rejected(text, false, "longer than 300 characters");
	/* At the limit the length is fine; the name itself is too long. */
	make_name(text, POLICY_MAX_ENTRY_LENGTH);
	assert_int_equal(policy_entry_parse(text, false, &e, entry_names[0], err, sizeof(err)),
			 -EINVAL);
	assert_null(strstr(err, "300"));
	assert_non_null(strstr(err, "longer than 253"));
	/* The message shows a cut version of a long entry, still on one line. */
	assert_non_null(strstr(err, "...\": "));
}

static void test_entry_wildcard(void **state)
{
	struct policy_entry e;

	(void)state;
	e = entry_ok("*.Example.com.", false);
	assert_int_equal(e.kind, POLICY_ENTRY_WILDCARD);
	assert_string_equal(e.name, "example.com");
	assert_entry("*.example.com", false, "*.example.com");
	assert_entry("*.example.com:443", false, "*.example.com:443");
	assert_entry("*.com", false, "*.com");
}

static void test_entry_wildcard_rejected(void **state)
{
	const char *first_label = "a wildcard is only allowed as the whole first label";

	(void)state;
	assert_entry_rejected("a.*.com", false, first_label);
	assert_entry_rejected("example.*", false, first_label);
	assert_entry_rejected("*foo.com", false, first_label);
	assert_entry_rejected("**.a.com", false, first_label);
	assert_entry_rejected("*.*.a.com", false, first_label);
	assert_entry_rejected("foo*.com", false, first_label);
	assert_entry_rejected("*", false, "\"*\" alone is not an entry");
	assert_entry_rejected("*.", false, "a wildcard needs a domain");
	assert_entry_rejected("*..", false, "a wildcard needs a domain");
	assert_entry_rejected("*.1.2.3.4", false, "all digits");
	assert_entry_rejected("*.a_b.com", false, "invalid character '_'");
}

static void assert_addr(const struct policy_entry *e, const char *v6, unsigned int prefix_len)
{
	struct in6_addr want;

	assert_int_equal(inet_pton(AF_INET6, v6, &want), 1);
	assert_int_equal(e->kind, POLICY_ENTRY_ADDRESS);
	assert_memory_equal(&e->addr, &want, sizeof(want));
	assert_int_equal(e->prefix_len, prefix_len);
	assert_string_equal(e->name, "");
}

static void test_entry_ipv4(void **state)
{
	struct policy_entry e;

	(void)state;
	e = entry_ok("198.18.0.1", false);
	assert_addr(&e, "::ffff:198.18.0.1", 128);
	assert_int_equal(e.port, 0);
	e = entry_ok("198.18.0.0/24", false);
	assert_addr(&e, "::ffff:198.18.0.0", 120);
	e = entry_ok("0.0.0.0/0", false);
	assert_addr(&e, "::ffff:0.0.0.0", 96);
	assert_entry("198.18.0.1", false, "198.18.0.1");
	assert_entry("198.18.0.0/24", false, "198.18.0.0/24");
	assert_entry("198.18.0.1/32", false, "198.18.0.1");
	assert_entry("0.0.0.0/0", false, "0.0.0.0/0");
	/* 0.0.0.0 alone reaches every local listener: refused (test_policy_loopback.c). */
	assert_entry_rejected("0.0.0.0", false, "0.0.0.0 is not a destination");
}

static void test_entry_ipv6(void **state)
{
	struct policy_entry e;

	(void)state;
	e = entry_ok("2001:db8::1", false);
	assert_addr(&e, "2001:db8::1", 128);
	e = entry_ok("2001:DB8::/32", false);
	assert_addr(&e, "2001:db8::", 32);
	e = entry_ok("[2001:db8::1]", false);
	assert_addr(&e, "2001:db8::1", 128);
	assert_int_equal(e.port, 0);
	assert_entry("2001:0db8:0000::1", false, "2001:db8::1");
	assert_entry("[2001:db8::1]", false, "2001:db8::1");
	assert_entry("2001:db8::1/128", false, "2001:db8::1");
	assert_entry("::/0", false, "::/0");
	assert_entry("::1", false, "::1");
	assert_entry_rejected("2001:db8::zz", false, "not a valid IPv6 address");
	assert_entry_rejected("2001:db8::1%eth0", false, "not a valid IPv6 address");
	assert_entry_rejected("::ffff:1.2.3.4:443", false, "[addr]:port");
}

static void test_entry_cidr_host_bits(void **state)
{
	(void)state;
	assert_entry_rejected("198.18.0.1/24", false, "did you mean \"198.18.0.0/24\"?");
	assert_entry_rejected("198.18.0.1/24:443", false, "did you mean \"198.18.0.0/24:443\"?");
	assert_entry_rejected("10.1.2.3/8", false, "did you mean \"10.0.0.0/8\"?");
	assert_entry_rejected("2001:db8::1/32", false, "did you mean \"2001:db8::/32\"?");
	assert_entry_rejected("[2001:db8::1/32]:443", false,
			      "did you mean \"[2001:db8::/32]:443\"?");
	assert_entry_rejected("1.2.3.4/0", false, "did you mean \"0.0.0.0/0\"?");
	assert_entry_rejected("64:ff9b::c612:1/120", false, "did you mean \"198.18.0.0/24\"?");
}

static void test_entry_prefix_range(void **state)
{
	(void)state;
	assert_entry("198.18.0.0/31", false, "198.18.0.0/31");
	assert_entry("2001:db8::/127", false, "2001:db8::/127");
	assert_entry_rejected("198.18.0.0/33", false, "0-32");
	assert_entry_rejected("2001:db8::/129", false, "0-128");
	assert_entry_rejected("198.18.0.0/", false, "prefix length");
	assert_entry_rejected("198.18.0.0/-1", false, "prefix length");
	assert_entry_rejected("198.18.0.0/+8", false, "prefix length");
	assert_entry_rejected("198.18.0.0/08", false, "prefix length");
	assert_entry_rejected("198.18.0.0/8a", false, "prefix length");
	assert_entry_rejected("198.18.0.0/99999999999", false, "prefix length");
	assert_entry_rejected("198.18.0.0/24/24", false, "prefix length");
}

static void test_entry_ports(void **state)
{
	struct policy_entry e;

	(void)state;
	e = entry_ok("example.com:443", false);
	assert_int_equal(e.kind, POLICY_ENTRY_HOSTNAME);
	assert_int_equal(e.port, 443);
	e = entry_ok("198.18.0.1:1", false);
	assert_int_equal(e.port, 1);
	e = entry_ok("198.18.0.1:65535", false);
	assert_int_equal(e.port, 65535);
	assert_entry("198.18.0.0/24:443", false, "198.18.0.0/24:443");
	assert_entry("[2001:db8::1]:443", false, "[2001:db8::1]:443");
	assert_entry("[2001:db8::/32]:443", false, "[2001:db8::/32]:443");
	assert_entry("Example.com.:80", false, "example.com:80");
	assert_entry_rejected("example.com:0", false, "port 0 is out of range 1-65535");
	assert_entry_rejected("example.com:65536", false, "port 65536 is out of range");
	assert_entry_rejected("example.com:1000000", false, "out of range");
	assert_entry_rejected("example.com:", false, "the port must be a decimal number");
	assert_entry_rejected("example.com:+1", false, "the port must be a decimal number");
	assert_entry_rejected("example.com:-1", false, "the port must be a decimal number");
	assert_entry_rejected("example.com:0443", false, "without sign or leading zeros");
	assert_entry_rejected("example.com:44a", false, "the port must be a decimal number");
	assert_entry_rejected("example.com: 443", false, "the port must be a decimal number");
	assert_entry_rejected("[2001:db8::1]:0", false, "port 0");
	assert_entry_rejected(":443", false, "empty name");
}

static void test_entry_brackets(void **state)
{
	(void)state;
	assert_entry_rejected("[198.18.0.1]:443", false, "brackets are only for IPv6");
	assert_entry_rejected("[198.18.0.1]", false, "brackets are only for IPv6");
	assert_entry_rejected("[example.com]:443", false, "brackets are only for IPv6");
	assert_entry_rejected("[2001:db8::1", false, "missing \"]\"");
	assert_entry_rejected("[2001:db8::1]443", false, "after \"]\"");
	assert_entry_rejected("[2001:db8::1]:443:1", false, "the port must be");
	assert_entry_rejected("2001:db8::1]:443", false, "not a valid IPv6 address");
	assert_entry_rejected("[]", false, "brackets");
}

static void test_entry_mapped_and_nat64(void **state)
{
	struct policy_entry e, v4;

	(void)state;
	v4 = entry_ok("1.2.3.4", false);
	e = entry_ok("::ffff:1.2.3.4", false);
	assert_memory_equal(&e, &v4, sizeof(e));
	e = entry_ok("64:ff9b::1.2.3.4", false);
	assert_memory_equal(&e, &v4, sizeof(e));
	e = entry_ok("64:ff9b::102:304", false);
	assert_memory_equal(&e, &v4, sizeof(e));
	assert_entry("[::ffff:1.2.3.4]:80", false, "1.2.3.4:80");
	assert_entry("[64:ff9b::1.2.3.4]:80", false, "1.2.3.4:80");
	assert_entry("64:ff9b::c612:0/120", false, "198.18.0.0/24");
	assert_entry("64:ff9b::/96", false, "0.0.0.0/0");
	assert_entry("::ffff:0:0/96", false, "0.0.0.0/0");
	assert_entry("::ffff:198.18.0.0/120", false, "198.18.0.0/24");
	/* Shorter than /96: more than IPv4, kept as written. */
	assert_entry("64:ff9b::/64", false, "64:ff9b::/64");
	e = entry_ok("64:ff9b::/64", false);
	assert_addr(&e, "64:ff9b::", 64);
	e = entry_ok("::/80", false);
	assert_addr(&e, "::", 80);
	assert_entry_rejected("::ffff:0:0/80", false, "did you mean \"::/80\"?");
}

static void test_entry_model_endpoint(void **state)
{
	struct policy_entry e;

	(void)state;
	e = entry_ok("172.17.0.1:4000", true);
	assert_addr(&e, "::ffff:172.17.0.1", 128);
	assert_int_equal(e.port, 4000);
	e = entry_ok("api.provider.example:443", true);
	assert_int_equal(e.kind, POLICY_ENTRY_HOSTNAME);
	assert_string_equal(e.name, "api.provider.example");
	assert_int_equal(e.port, 443);
	e = entry_ok("Model.Example", true);
	assert_string_equal(e.name, "model.example");
	assert_int_equal(e.port, 0);
	assert_entry("[2001:db8::1]:443", true, "[2001:db8::1]:443");
	assert_entry("2001:db8::1", true, "2001:db8::1");
	assert_entry_rejected("*.example.com", true,
			      "a wildcard is not allowed in model_endpoints");
	assert_entry_rejected("*.example.com:443", true, "wildcard");
	assert_entry_rejected("172.17.0.0/16", true, "a CIDR is not allowed in model_endpoints");
	assert_entry_rejected("[2001:db8::/32]:443", true, "CIDR");
	assert_entry_rejected("model.example:0", true, "port 0");
}

static void test_entry_format(void **state)
{
	struct policy_entry e;
	char buf[POLICY_ENTRY_TEXT_MAX], name[300];

	(void)state;
	e = entry_ok("[2001:db8::/32]:443", false);
	assert_int_equal(policy_entry_format(&e, buf, 10), -ENOSPC);
	assert_int_equal(policy_entry_format(&e, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "[2001:db8::/32]:443");
	/* The longest entry fits POLICY_ENTRY_TEXT_MAX. */
	make_name(name, 253);
	strcat(name, ":65535");
	memmove(name + 2, name, strlen(name) + 1);
	memcpy(name, "*.", 2);
	e = entry_ok(name, false);
	assert_int_equal(policy_entry_format(&e, buf, sizeof(buf)), 0);
	assert_string_equal(buf, name);
	e = entry_ok("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127", false);
	e.port = 65535;
	assert_int_equal(policy_entry_format(&e, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127]:65535");
	e.kind = 99;
	assert_int_equal(policy_entry_format(&e, buf, sizeof(buf)), -EINVAL);
	e = entry_ok("1.2.3.4", false);
	e.prefix_len = 129;
	assert_int_equal(policy_entry_format(&e, buf, sizeof(buf)), -EINVAL);
}

static void test_entry_error_buffers(void **state)
{
	struct policy_entry e;
	char err[8];

	(void)state;
	memset(err, 'x', sizeof(err));
	assert_int_equal(policy_entry_parse("a.*.com", false, &e, entry_names[0], err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	assert_int_equal(policy_entry_parse("a.*.com", false, &e, entry_names[0], NULL, 0),
			 -EINVAL);
	assert_int_equal(policy_entry_parse(NULL, false, &e, entry_names[0], NULL, 0), -EINVAL);
	/* A name needs somewhere to go. */
	assert_int_equal(policy_entry_parse("example.com", false, &e, NULL, err, sizeof(err)),
			 -EINVAL);
}

static void test_mode_names(void **state)
{
	enum policy_mode m;

	(void)state;
	assert_string_equal(policy_mode_name(POLICY_MODE_PUBLIC), "public");
	assert_string_equal(policy_mode_name(POLICY_MODE_NO_NETWORK), "no-network");
	assert_string_equal(policy_mode_name(POLICY_MODE_ALLOWLIST), "allowlist");
	assert_int_equal(policy_mode_from_name("no-network", &m), 0);
	assert_int_equal(m, POLICY_MODE_NO_NETWORK);
	assert_int_equal(policy_mode_from_name("allowlist", &m), 0);
	assert_int_equal(m, POLICY_MODE_ALLOWLIST);
	assert_int_equal(policy_mode_from_name("Allowlist", &m), -EINVAL);
	assert_int_equal(policy_mode_from_name("", &m), -EINVAL);
	assert_int_equal(policy_mode_from_name(NULL, &m), -EINVAL);
}

/* ---- policies ---- */

static void test_policy_minimal_defaults(void **state)
{
	struct policy p;

	(void)state;
	fixture_parse_ok("{\"network_mode\":\"allowlist\"}", &p);
	assert_int_equal(p.mode, POLICY_MODE_ALLOWLIST);
	assert_true(p.allow_loopback);
	assert_true(p.allow_model_endpoint);
	assert_int_equal(p.n_allowed_hosts, 0);
	assert_null(p.allowed_hosts);
	assert_int_equal(p.n_model_endpoints, 0);
	policy_free(&p);
	fixture_parse_ok(
		"{\"network_mode\":\"no-network\",\"allow_loopback\":false,"
		"\"allow_model_endpoint\":false,\"allowed_hosts\":[],\"model_endpoints\":[]}",
		&p);
	assert_int_equal(p.mode, POLICY_MODE_NO_NETWORK);
	assert_false(p.allow_loopback);
	assert_false(p.allow_model_endpoint);
	policy_free(&p);
	fixture_parse_ok("{\"network_mode\":\"public\",\"allowed_hosts\":[]}", &p);
	assert_int_equal(p.mode, POLICY_MODE_PUBLIC);
	policy_free(&p);
}

static const char design_example[] =
	"{\n"
	"  \"network_mode\": \"allowlist\",\n"
	"  \"allowed_hosts\": [\"pypi.org\", \"*.pythonhosted.org\", \"198.18.0.0/24\","
	" \"[2001:db8::1]:443\"],\n"
	"  \"allow_model_endpoint\": true,\n"
	"  \"model_endpoints\": [\"172.17.0.1:4000\", \"api.provider.example:443\"],\n"
	"  \"allow_loopback\": true\n"
	"}\n";

static void test_policy_design_example(void **state)
{
	struct policy p;
	char *text;

	(void)state;
	fixture_parse_ok(design_example, &p);
	assert_int_equal(p.mode, POLICY_MODE_ALLOWLIST);
	assert_int_equal(p.n_allowed_hosts, 4);
	assert_int_equal(p.n_model_endpoints, 2);
	text = fixture_canonical(&p);
	assert_string_equal(text, "{\"allow_loopback\":true,\"allow_model_endpoint\":true,"
				  "\"allowed_hosts\":[\"*.pythonhosted.org\",\"198.18.0.0/24\","
				  "\"[2001:db8::1]:443\",\"pypi.org\"],\"model_endpoints\":["
				  "\"172.17.0.1:4000\",\"api.provider.example:443\"],"
				  "\"network_mode\":\"allowlist\"}");
	free(text);
	policy_free(&p);
}

static void test_policy_legacy_allow_internet(void **state)
{
	struct policy p;

	(void)state;
	fixture_parse_ok("{\"allow_internet\":true}", &p);
	assert_int_equal(p.mode, POLICY_MODE_PUBLIC);
	policy_free(&p);
	fixture_parse_ok("{\"allow_internet\":false}", &p);
	assert_int_equal(p.mode, POLICY_MODE_NO_NETWORK);
	policy_free(&p);
	fixture_parse_ok("{\"allow_internet\":true,\"network_mode\":\"public\"}", &p);
	assert_int_equal(p.mode, POLICY_MODE_PUBLIC);
	policy_free(&p);
	fixture_parse_ok("{\"allow_internet\":false,\"network_mode\":\"no-network\"}", &p);
	assert_int_equal(p.mode, POLICY_MODE_NO_NETWORK);
	policy_free(&p);
	fixture_assert_rejected("{\"allow_internet\":true,\"network_mode\":\"allowlist\"}",
				"allow_internet true conflicts with network_mode \"allowlist\"");
	fixture_assert_rejected("{\"allow_internet\":false,\"network_mode\":\"allowlist\"}",
				"allow_internet false conflicts with network_mode \"allowlist\"");
	fixture_assert_rejected("{\"allow_internet\":false,\"network_mode\":\"public\"}",
				"allow_internet false conflicts with network_mode \"public\"");
	fixture_assert_rejected("{\"allow_internet\":true,\"network_mode\":\"no-network\"}",
				"conflicts");
	fixture_assert_rejected("{}", "network_mode is required");
	fixture_assert_rejected("{\"allow_loopback\":true}", "network_mode is required");
	fixture_assert_rejected("{\"allow_internet\":\"yes\"}",
				"allow_internet must be true or false");
	fixture_assert_rejected("{\"allow_internet\":null,\"network_mode\":\"public\"}",
				"allow_internet must be true or false");
}

static void test_policy_unknown_keys(void **state)
{
	(void)state;
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"allowed_host\":[]}",
				"unknown key \"allowed_host\"");
	fixture_assert_rejected("{\"networkmode\":\"allowlist\"}", "unknown key \"networkmode\"");
	fixture_assert_rejected("{\"network_mode\":\"public\",\"Allow_loopback\":true}",
				"unknown key \"Allow_loopback\"");
	fixture_assert_rejected("{\"network_mode\":\"public\",\"\":1}", "unknown key \"\"");
}

static void test_policy_wrong_types(void **state)
{
	(void)state;
	fixture_assert_rejected("{\"network_mode\":1}", "network_mode must be a string");
	fixture_assert_rejected("{\"network_mode\":null}", "network_mode must be a string");
	fixture_assert_rejected("{\"network_mode\":\"open\"}",
				"network_mode \"open\" is not one of");
	fixture_assert_rejected("{\"network_mode\":\"Allowlist\"}", "is not one of");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"allowed_hosts\":\"a.com\"}",
				"allowed_hosts must be an array of strings");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"allowed_hosts\":null}",
				"allowed_hosts must be an array");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"a.com\",1]}",
				"allowed_hosts[1] must be a string");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"allowed_hosts\":[[]]}",
				"allowed_hosts[0] must be a string");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"model_endpoints\":{}}",
				"model_endpoints must be an array of strings");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"model_endpoints\":[true]}",
				"model_endpoints[0] must be a string");
	fixture_assert_rejected(
		"{\"network_mode\":\"allowlist\",\"allow_model_endpoint\":\"true\"}",
		"allow_model_endpoint must be true or false");
	fixture_assert_rejected("{\"network_mode\":\"allowlist\",\"allow_loopback\":0}",
				"allow_loopback must be true or false");
}

static void test_policy_bad_json(void **state)
{
	(void)state;
	fixture_assert_rejected("", "invalid JSON");
	fixture_assert_rejected("{", "invalid JSON (line 1");
	fixture_assert_rejected("[]", "must be a JSON object");
	fixture_assert_rejected("\"allowlist\"", "invalid JSON");
	fixture_assert_rejected("{\"network_mode\":\"public\"} x", "invalid JSON");
	fixture_assert_rejected("{\"network_mode\":\"public\",\"network_mode\":\"public\"}",
				"duplicate");
	fixture_assert_rejected(
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"a\\u0000b\"]}",
		"invalid JSON");
}

static void test_policy_nul_in_entry(void **state)
{
	json_t *o = json_pack("{s:s, s:[o]}", "network_mode", "allowlist", "allowed_hosts",
			      json_stringn("a.com\0.evil", 11));
	struct policy p;
	char err[ERR_SIZE] = "";

	(void)state;
	assert_non_null(o);
	assert_int_equal(policy_from_json(o, &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "allowed_hosts[0] contains a NUL character");
	json_decref(o);
	assert_int_equal(policy_from_json(NULL, &p, err, sizeof(err)), -EINVAL);
}

static void test_policy_hosts_outside_allowlist(void **state)
{
	(void)state;
	fixture_assert_rejected("{\"network_mode\":\"no-network\",\"allowed_hosts\":[\"a.com\"]}",
				"allowed_hosts has no effect in no-network mode");
	fixture_assert_rejected("{\"allow_internet\":false,\"allowed_hosts\":[\"a.com\"]}",
				"allowed_hosts has no effect in no-network mode");
	fixture_assert_rejected("{\"network_mode\":\"public\",\"allowed_hosts\":[\"a.com\"]}",
				"allowed_hosts has no effect in public mode");
}

static void test_policy_model_endpoints_any_mode(void **state)
{
	struct policy p;

	(void)state;
	fixture_parse_ok(
		"{\"network_mode\":\"no-network\",\"model_endpoints\":[\"172.17.0.1:4000\"]}", &p);
	assert_int_equal(p.n_model_endpoints, 1);
	policy_free(&p);
	fixture_parse_ok("{\"network_mode\":\"public\",\"allow_model_endpoint\":false,"
			 "\"model_endpoints\":[\"model.example\"]}",
			 &p);
	assert_int_equal(p.n_model_endpoints, 1);
	assert_false(p.allow_model_endpoint);
	policy_free(&p);
}

static void test_policy_error_names_entry(void **state)
{
	(void)state;
	fixture_assert_rejected(
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"a.com\",\"b.com\","
		"\"c.com\",\"a.*.com\"]}",
		"allowed_hosts[3] \"a.*.com\": a wildcard is only allowed as the whole first "
		"label (\"*.example.com\")");
	fixture_assert_rejected(
		"{\"network_mode\":\"allowlist\",\"model_endpoints\":[\"*.m.com\"]}",
		"model_endpoints[0] \"*.m.com\": a wildcard is not allowed");
	fixture_assert_rejected(
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"198.18.0.1/24\"]}",
		"allowed_hosts[0] \"198.18.0.1/24\": host bits are set");
}

static json_t *hosts_policy(size_t n, const char *key)
{
	json_t *o = json_pack("{s:s}", "network_mode", "allowlist");
	json_t *a = json_array();
	char name[64];
	size_t i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "h%zu.example.com", i);
		json_array_append_new(a, json_string(name));
	}
	json_object_set_new(o, key, a);
	return o;
}

static json_t *addresses_policy(size_t n)
{
	json_t *o = json_pack("{s:s}", "network_mode", "allowlist");
	json_t *a = json_array();
	char address[32];

	for (size_t i = 0; i < n; i++) {
		snprintf(address, sizeof(address), "10.%zu.%zu.%zu", i >> 16, (i >> 8) & 255,
			 i & 255);
		json_array_append_new(a, json_string(address));
	}
	json_object_set_new(o, "allowed_hosts", a);
	return o;
}

static void test_policy_limits(void **state)
{
	json_t *o;
	struct policy p;
	char err[ERR_SIZE] = "";

	(void)state;
	o = hosts_policy(POLICY_MAX_MODEL_ENDPOINTS, "model_endpoints");
	assert_int_equal(policy_from_json(o, &p, err, sizeof(err)), 0);
	assert_int_equal(p.n_model_endpoints, POLICY_MAX_MODEL_ENDPOINTS);
	policy_free(&p);
	json_decref(o);

	o = hosts_policy(POLICY_MAX_MODEL_ENDPOINTS + 1, "model_endpoints");
	assert_int_equal(policy_from_json(o, &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "model_endpoints has 65 entries; the limit is 64");
	json_decref(o);

	o = addresses_policy(POLICY_MAX_ALLOWED_HOSTS);
	assert_int_equal(policy_from_json(o, &p, err, sizeof(err)), 0);
	assert_int_equal(p.n_allowed_hosts, POLICY_MAX_ALLOWED_HOSTS);
	policy_free(&p);
	json_decref(o);

	/* Names are resolved for as long as the policy lives: fewer of them. */
	o = hosts_policy(POLICY_MAX_NAMES, "allowed_hosts");
	assert_int_equal(policy_from_json(o, &p, err, sizeof(err)), 0);
	policy_free(&p);
	json_decref(o);
	o = hosts_policy(POLICY_MAX_NAMES + 1, "allowed_hosts");
	assert_int_equal(policy_from_json(o, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "more than 4096 host names"));
	json_decref(o);

	o = addresses_policy(POLICY_MAX_ALLOWED_HOSTS + 1);
	assert_int_equal(policy_from_json(o, &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "allowed_hosts has 100001 entries; the limit is 100000");
	json_decref(o);
}

static void test_policy_json_size_limit(void **state)
{
	size_t n = POLICY_MAX_JSON_BYTES + 1;
	char *big = malloc(n), err[ERR_SIZE];
	struct policy p;

	(void)state;
	assert_non_null(big);
	memset(big, ' ', n);
	memcpy(big, "{\"network_mode\":\"public\"}", 25);
	assert_int_equal(policy_parse(big, n, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "the limit is 16777216"));
	assert_int_equal(policy_parse(big, n - 1, &p, err, sizeof(err)), 0);
	policy_free(&p);
	free(big);
}

static void test_policy_dedup(void **state)
{
	struct policy p;
	char *text;

	(void)state;
	fixture_parse_ok(
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"Example.com\","
		"\"example.com.\",\"example.com\",\"198.18.0.1\",\"::ffff:198.18.0.1\","
		"\"198.18.0.1/32\",\"64:ff9b::c612:1\",\"*.example.com\",\"example.com:443\"],"
		"\"model_endpoints\":[\"m.example:1\",\"M.example:1\"]}",
		&p);
	assert_int_equal(p.n_allowed_hosts, 4);
	assert_int_equal(p.n_model_endpoints, 1);
	text = fixture_canonical(&p);
	assert_string_equal(text, "{\"allow_loopback\":true,\"allow_model_endpoint\":true,"
				  "\"allowed_hosts\":[\"*.example.com\",\"198.18.0.1\","
				  "\"example.com\",\"example.com:443\"],\"model_endpoints\":["
				  "\"m.example:1\"],\"network_mode\":\"allowlist\"}");
	free(text);
	policy_free(&p);
}

static void test_policy_canonical_equality(void **state)
{
	struct policy a, b, c, again;
	char *ta, *tb, *tc, err[ERR_SIZE];

	(void)state;
	fixture_parse_ok("{\"network_mode\":\"no-network\"}", &a);
	fixture_parse_ok("{\"allow_loopback\":true,\"allow_internet\":false,\"model_endpoints\":[],"
			 "\"allow_model_endpoint\":true}",
			 &b);
	ta = fixture_canonical(&a);
	tb = fixture_canonical(&b);
	assert_string_equal(ta, tb);
	assert_string_equal(ta, "{\"allow_loopback\":true,\"allow_model_endpoint\":true,"
				"\"allowed_hosts\":[],\"model_endpoints\":[],"
				"\"network_mode\":\"no-network\"}");
	assert_true(policy_digest(&a) == policy_digest(&b));
	free(ta);
	free(tb);
	policy_free(&a);
	policy_free(&b);

	fixture_parse_ok(design_example, &a);
	fixture_parse_ok(
		"{\"model_endpoints\":[\"API.provider.example.:443\",\"172.17.0.1:4000\"],"
		"\"allowed_hosts\":[\"[2001:0db8::0001]:443\",\"198.18.0.0/24\",\"PyPI.org\","
		"\"*.pythonhosted.org.\",\"pypi.org\"],\"network_mode\":\"allowlist\"}",
		&b);
	fixture_parse_ok("{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"pypi.org\"]}", &c);
	ta = fixture_canonical(&a);
	tb = fixture_canonical(&b);
	tc = fixture_canonical(&c);
	assert_string_equal(ta, tb);
	assert_string_not_equal(ta, tc);
	assert_true(policy_digest(&a) == policy_digest(&b));
	assert_true(policy_digest(&a) != policy_digest(&c));
	assert_true(policy_digest(&a) != 0);
	/* The canonical text is itself a valid policy with the same digest. */
	assert_int_equal(policy_parse(ta, strlen(ta), &again, err, sizeof(err)), 0);
	assert_true(policy_digest(&again) == policy_digest(&a));
	policy_free(&again);
	free(ta);
	free(tb);
	free(tc);
	policy_free(&a);
	policy_free(&b);
	policy_free(&c);
}

static uint64_t fnv(uint64_t h, const void *data, size_t size)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < size; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The binary form of docs/policy.md, written out by hand. */
static void test_policy_digest_fnv(void **state)
{
	static const char tag[] = "bfbpf policy 2";
	const unsigned char head[3] = {POLICY_MODE_ALLOWLIST, 1, 0};
	const unsigned char one[4] = {0, 0, 0, 1}, none[4] = {0};
	unsigned char entry[4] = {POLICY_ENTRY_ADDRESS, 120, 0x01, 0xbb};
	const unsigned char addr[16] = {[10] = 0xff, [11] = 0xff, [12] = 198, [13] = 18};
	uint64_t h = 0xcbf29ce484222325ULL;
	struct policy p;

	(void)state;
	h = fnv(h, tag, sizeof(tag));
	h = fnv(h, head, sizeof(head));
	h = fnv(h, one, 4);
	h = fnv(h, entry, 4);
	h = fnv(h, addr, 16);
	h = fnv(h, "", 1);
	h = fnv(h, none, 4);
	fixture_parse_ok(
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"198.18.0.0/24:443\"],"
		"\"allow_model_endpoint\":false}",
		&p);
	assert_true(policy_digest(&p) == h);
	policy_free(&p);

	/* A name: kind, no prefix, no port, no address, the name and its NUL. */
	h = 0xcbf29ce484222325ULL;
	h = fnv(h, tag, sizeof(tag));
	h = fnv(h, head, sizeof(head));
	h = fnv(h, one, 4);
	memset(entry, 0, sizeof(entry));
	entry[0] = POLICY_ENTRY_WILDCARD;
	h = fnv(h, entry, 4);
	h = fnv(h, (unsigned char[16]){0}, 16);
	h = fnv(h, "example.com", 12);
	h = fnv(h, none, 4);
	fixture_parse_ok("{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"*.Example.COM.\"],"
			 "\"allow_model_endpoint\":false}",
			 &p);
	assert_true(policy_digest(&p) == h);
	policy_free(&p);
	assert_null(policy_to_json(NULL));
	assert_true(policy_digest(NULL) == 0);
}

/* What daemons before the binary form programmed: FNV-1a of the canonical text. */
static void test_policy_digest_legacy(void **state)
{
	struct policy p;
	const char *text = "{\"allow_loopback\":true,\"allow_model_endpoint\":true,"
			   "\"allowed_hosts\":[],\"model_endpoints\":[],"
			   "\"network_mode\":\"public\"}";

	(void)state;
	fixture_parse_ok("{\"network_mode\":\"public\"}", &p);
	assert_true(policy_digest_legacy(&p) == fnv(0xcbf29ce484222325ULL, text, strlen(text)));
	assert_true(policy_digest_legacy(&p) != policy_digest(&p));
	policy_free(&p);
	assert_true(policy_digest_legacy(NULL) == 0);
}

/* Every field of an entry, and each list and flag, counts. */
static void test_policy_digest_fields(void **state)
{
	static const char *const variants[] = {
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"198.18.0.0/24\"]}",
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"198.18.0.0/24:443\"]}",
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"198.18.0.0/23\"]}",
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"198.18.1.0/24\"]}",
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"a.example\"]}",
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"*.a.example\"]}",
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"b.example\"]}",
		"{\"network_mode\":\"allowlist\",\"model_endpoints\":[\"a.example\"]}",
		"{\"network_mode\":\"allowlist\"}",
		"{\"network_mode\":\"allowlist\",\"allow_loopback\":false}",
		"{\"network_mode\":\"allowlist\",\"allow_model_endpoint\":false}",
		"{\"network_mode\":\"no-network\"}",
	};
	size_t n = sizeof(variants) / sizeof(variants[0]);
	uint64_t digests[sizeof(variants) / sizeof(variants[0])];
	struct policy p;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		fixture_parse_ok(variants[i], &p);
		digests[i] = policy_digest(&p);
		policy_free(&p);
		for (size_t j = 0; j < i; j++)
			if (digests[i] == digests[j])
				fail_msg("%s and %s have the same digest", variants[i],
					 variants[j]);
	}
}

static void test_policy_to_json_unsorted_struct(void **state)
{
	struct policy_entry v[3];
	struct policy p = {.mode = POLICY_MODE_ALLOWLIST, .allowed_hosts = v, .n_allowed_hosts = 3},
		      parsed;
	char *text;

	(void)state;
	/* A policy built in code, unsorted and with a duplicate, still has one spelling. */
	v[0] = entry_ok("z.example", false);
	v[1] = entry_ok("a.example", false);
	v[2] = entry_ok("z.example", false);
	text = fixture_canonical(&p);
	assert_non_null(strstr(text, "\"allowed_hosts\":[\"a.example\",\"z.example\"]"));
	assert_non_null(strstr(text, "\"allow_loopback\":false"));
	/* And one digest: that of the parsed (sorted, unique) policy. */
	fixture_parse_ok(
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"a.example\",\"z.example\"],"
		"\"allow_loopback\":false,\"allow_model_endpoint\":false}",
		&parsed);
	assert_true(policy_digest(&p) == policy_digest(&parsed));
	policy_free(&parsed);
	free(text);
}

/* Entries are 32 bytes; names live after them, in the same allocation, and outlive the JSON. */
static void test_policy_entries_packed(void **state)
{
	struct policy p;
	const char *end;

	(void)state;
	assert_int_equal(sizeof(struct policy_entry), 32);
	fixture_parse_ok(
		"{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"z.example\",\"198.18.0.1\","
		"\"*.b.example:443\",\"Z.example.\",\"a.example\",\"198.18.0.1\",\"fd00::/8\"],"
		"\"model_endpoints\":[\"m.example:4000\",\"172.17.0.1:4000\"]}",
		&p);
	assert_int_equal(p.n_allowed_hosts, 5);
	/* Policy order: addresses, then names, then wildcards. */
	assert_int_equal(p.allowed_hosts[0].kind, POLICY_ENTRY_ADDRESS);
	assert_string_equal(p.allowed_hosts[0].name, "");
	assert_int_equal(p.allowed_hosts[1].kind, POLICY_ENTRY_ADDRESS);
	assert_string_equal(p.allowed_hosts[2].name, "a.example");
	assert_string_equal(p.allowed_hosts[3].name, "z.example");
	assert_int_equal(p.allowed_hosts[4].kind, POLICY_ENTRY_WILDCARD);
	assert_string_equal(p.allowed_hosts[4].name, "b.example");
	assert_int_equal(p.allowed_hosts[4].port, 443);
	end = (const char *)(p.allowed_hosts + p.n_allowed_hosts);
	for (size_t i = 2; i < p.n_allowed_hosts; i++)
		assert_true(p.allowed_hosts[i].name >= end &&
			    p.allowed_hosts[i].name < end + 3 * POLICY_NAME_SIZE);
	assert_int_equal(p.n_model_endpoints, 2);
	assert_string_equal(p.model_endpoints[1].name, "m.example");
	assert_int_equal(p.model_endpoints[1].port, 4000);
	assert_true(p.model_endpoints[1].name ==
		    (const char *)(p.model_endpoints + p.n_model_endpoints));
	policy_free(&p);
}

/* n random entries (addresses, CIDRs with ports, names), duplicates included, as a policy. */
static char *random_policy(unsigned int seed, size_t n, bool reversed)
{
	size_t size = 64 + n * 48, used;
	char *text = malloc(size);

	assert_non_null(text);
	used = (size_t)snprintf(text, size, "{\"network_mode\":\"allowlist\",\"allowed_hosts\":[");
	for (size_t k = 0; k < n; k++) {
		size_t i = reversed ? n - 1 - k : k;
		unsigned int r = (unsigned int)(i * 2654435761u + seed) % (n / 2 + 1);

		if (r % 5 == 0)
			used += (size_t)snprintf(text + used, size - used, "\"h%u.example\",", r);
		else if (r % 5 == 1)
			used += (size_t)snprintf(text + used, size - used, "\"[fd00::%x]:%u\",", r,
						 1 + r % 3);
		else
			used += (size_t)snprintf(text + used, size - used, "\"198.%u.%u.0/24\",",
						 18 + r / 256 % 2, r % 256);
	}
	if (n)
		used--;
	snprintf(text + used, size - used, "]}");
	return text;
}

/* The merge sort of the parser: any size (around its runs of 8), any order, one result. */
static void test_policy_sort_sizes(void **state)
{
	static const size_t sizes[] = {0, 1, 2, 7, 8, 9, 15, 16, 17, 100, 1000, 4099};

	(void)state;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		char *forward = random_policy(7, sizes[s], false);
		char *backward = random_policy(7, sizes[s], true);
		struct policy a, b;

		fixture_parse_ok(forward, &a);
		fixture_parse_ok(backward, &b);
		assert_int_equal(a.n_allowed_hosts, b.n_allowed_hosts);
		assert_true(sizes[s] < 4 || a.n_allowed_hosts < sizes[s]); /* duplicates went */
		for (size_t i = 0; i < a.n_allowed_hosts; i++) {
			char x[POLICY_ENTRY_TEXT_MAX], y[POLICY_ENTRY_TEXT_MAX];

			assert_entry_equal(&a.allowed_hosts[i], &b.allowed_hosts[i]);
			if (i == 0)
				continue;
			/* Strictly increasing: kind first, then name, address, prefix, port. */
			assert_true(a.allowed_hosts[i - 1].kind <= a.allowed_hosts[i].kind);
			assert_int_equal(policy_entry_format(&a.allowed_hosts[i - 1], x, sizeof(x)),
					 0);
			assert_int_equal(policy_entry_format(&a.allowed_hosts[i], y, sizeof(y)), 0);
			assert_string_not_equal(x, y);
		}
		assert_true(policy_digest(&a) == policy_digest(&b));
		policy_free(&a);
		policy_free(&b);
		free(forward);
		free(backward);
	}
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void test_policy_load_file(void **state)
{
	char dir[] = "/tmp/bfbpf-test-policy-XXXXXX", path[128], missing[128], err[ERR_SIZE];
	struct policy p;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/policy.json", dir);
	snprintf(missing, sizeof(missing), "%s/missing.json", dir);
	write_file(path, design_example);
	assert_int_equal(policy_load_file(path, &p, err, sizeof(err)), 0);
	assert_int_equal(p.n_allowed_hosts, 4);
	policy_free(&p);

	write_file(path, "{\"network_mode\":\"allowlist\",\"allowed_hosts\":[\"*\"]}");
	assert_int_equal(policy_load_file(path, &p, err, sizeof(err)), -EINVAL);
	assert_int_equal(strncmp(err, path, strlen(path)), 0);
	assert_non_null(strstr(err, ": allowed_hosts[0] \"*\": "));

	assert_int_equal(policy_load_file(missing, &p, err, sizeof(err)), -ENOENT);
	assert_int_equal(strncmp(err, missing, strlen(missing)), 0);
	assert_non_null(strstr(err, "No such file"));
	assert_int_equal(policy_load_file(dir, &p, err, sizeof(err)), -EISDIR);

	assert_int_equal(truncate(path, POLICY_MAX_JSON_BYTES + 1), 0);
	assert_int_equal(policy_load_file(path, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "larger than 16777216 bytes"));

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_policy_free_twice(void **state)
{
	struct policy p;

	(void)state;
	fixture_parse_ok(design_example, &p);
	policy_free(&p);
	assert_null(p.allowed_hosts);
	assert_int_equal(p.n_allowed_hosts, 0);
	policy_free(&p);
	policy_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry_hostname),
		cmocka_unit_test(test_entry_hostname_rejected),
		cmocka_unit_test(test_entry_label_and_name_length),
		cmocka_unit_test(test_entry_too_long),
		cmocka_unit_test(test_entry_wildcard),
		cmocka_unit_test(test_entry_wildcard_rejected),
		cmocka_unit_test(test_entry_ipv4),
		cmocka_unit_test(test_entry_ipv6),
		cmocka_unit_test(test_entry_cidr_host_bits),
		cmocka_unit_test(test_entry_prefix_range),
		cmocka_unit_test(test_entry_ports),
		cmocka_unit_test(test_entry_brackets),
		cmocka_unit_test(test_entry_mapped_and_nat64),
		cmocka_unit_test(test_entry_model_endpoint),
		cmocka_unit_test(test_entry_format),
		cmocka_unit_test(test_entry_error_buffers),
		cmocka_unit_test(test_mode_names),
		cmocka_unit_test(test_policy_minimal_defaults),
		cmocka_unit_test(test_policy_design_example),
		cmocka_unit_test(test_policy_legacy_allow_internet),
		cmocka_unit_test(test_policy_unknown_keys),
		cmocka_unit_test(test_policy_wrong_types),
		cmocka_unit_test(test_policy_bad_json),
		cmocka_unit_test(test_policy_nul_in_entry),
		cmocka_unit_test(test_policy_hosts_outside_allowlist),
		cmocka_unit_test(test_policy_model_endpoints_any_mode),
		cmocka_unit_test(test_policy_error_names_entry),
		cmocka_unit_test(test_policy_limits),
		cmocka_unit_test(test_policy_json_size_limit),
		cmocka_unit_test(test_policy_dedup),
		cmocka_unit_test(test_policy_canonical_equality),
		cmocka_unit_test(test_policy_digest_fnv),
		cmocka_unit_test(test_policy_entries_packed),
		cmocka_unit_test(test_policy_sort_sizes),
		cmocka_unit_test(test_policy_digest_legacy),
		cmocka_unit_test(test_policy_digest_fields),
		cmocka_unit_test(test_policy_to_json_unsorted_struct),
		cmocka_unit_test(test_policy_load_file),
		cmocka_unit_test(test_policy_free_twice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
