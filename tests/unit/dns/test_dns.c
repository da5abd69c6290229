// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of user/dns/dns.c: query parsing (untrusted bytes), the replies (read
 * back by c-ares' own parsers), TCP framing and the policy's decision.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ares.h>

#include "dns/dns.h"
#include "lib/policy.h"

#define Q_MAX 1024
#define ERR_SIZE 256
#define TYPE_TXT 16
#define TYPE_SVCB 64
#define TYPE_HTTPS 65
#define TYPE_ANY 255
#define CLASS_CH 3
#define FLAG_RD 0x0100

struct msg {
	uint8_t b[Q_MAX];
	size_t n;
};

static void put8(struct msg *m, uint8_t v)
{
	assert_true(m->n < sizeof(m->b));
	m->b[m->n++] = v;
}

static void put16(struct msg *m, uint16_t v)
{
	put8(m, (uint8_t)(v >> 8));
	put8(m, (uint8_t)v);
}

/* A dotted name as labels ("" is the root). */
static void put_name(struct msg *m, const char *name)
{
	const char *dot;
	size_t len;

	while (*name) {
		dot = strchr(name, '.');
		len = dot ? (size_t)(dot - name) : strlen(name);
		put8(m, (uint8_t)len);
		while (len--)
			put8(m, (uint8_t)*name++);
		if (*name == '.')
			name++;
	}
	put8(m, 0);
}

static void put_header(struct msg *m, uint16_t id, uint16_t flags, uint16_t qd, uint16_t ar)
{
	m->n = 0;
	put16(m, id);
	put16(m, flags);
	put16(m, qd);
	put16(m, 0);
	put16(m, 0);
	put16(m, ar);
}

static void put_opt(struct msg *m, uint16_t payload, uint16_t rdlength)
{
	put8(m, 0);
	put16(m, DNS_TYPE_OPT);
	put16(m, payload);
	put16(m, 0);
	put16(m, 0);
	put16(m, rdlength);
}

/* A query with one question; edns < 0: no OPT record. */
static void make_query(struct msg *m, uint16_t id, const char *name, uint16_t qtype,
		       uint16_t qclass, int edns)
{
	put_header(m, id, FLAG_RD, 1, edns >= 0);
	put_name(m, name);
	put16(m, qtype);
	put16(m, qclass);
	if (edns >= 0)
		put_opt(m, (uint16_t)edns, 0);
}

static enum dns_parse_result parse(const struct msg *m, struct dns_query *q)
{
	return dns_query_parse(m->b, m->n, q);
}

static void assert_parses(const char *name, uint16_t qtype, const char *expected)
{
	struct dns_query q;
	struct msg m;

	make_query(&m, 0x1234, name, qtype, DNS_CLASS_IN, -1);
	assert_int_equal(parse(&m, &q), DNS_PARSE_OK);
	assert_int_equal(q.id, 0x1234);
	assert_true(q.recursion_desired);
	assert_string_equal(q.name, expected);
	assert_int_equal(q.qtype, qtype);
	assert_int_equal(q.qclass, DNS_CLASS_IN);
	assert_int_equal(q.question_end, m.n);
	assert_false(q.edns);
	assert_int_equal(q.udp_size, 512);
}

static void test_parse_types(void **state)
{
	(void)state;
	assert_parses("api.example.com", DNS_TYPE_A, "api.example.com");
	assert_parses("WWW.Example.COM", DNS_TYPE_AAAA, "www.example.com");
	assert_parses("example.com", TYPE_TXT, "example.com");
	assert_parses("example.com", TYPE_HTTPS, "example.com");
	assert_parses("", DNS_TYPE_A, ""); /* the root */
}

static void test_parse_with_c_ares_query(void **state)
{
	unsigned char *buf = NULL;
	struct dns_query q;
	int len = 0;

	(void)state;
	assert_int_equal(ares_create_query("Host.Example.org", DNS_CLASS_IN, DNS_TYPE_AAAA, 77, 1,
					   &buf, &len, 0),
			 ARES_SUCCESS);
	assert_int_equal(dns_query_parse(buf, (size_t)len, &q), DNS_PARSE_OK);
	assert_string_equal(q.name, "host.example.org");
	assert_int_equal(q.id, 77);
	assert_int_equal(q.qtype, DNS_TYPE_AAAA);
	ares_free_string(buf);
}

static void test_parse_edns(void **state)
{
	struct dns_query q;
	struct msg m;

	(void)state;
	make_query(&m, 1, "example.com", DNS_TYPE_A, DNS_CLASS_IN, 4096);
	assert_int_equal(parse(&m, &q), DNS_PARSE_OK);
	assert_true(q.edns);
	assert_int_equal(q.udp_size, 4096);
	assert_int_equal(q.question_end, m.n - 11);
	make_query(&m, 1, "example.com", DNS_TYPE_A, DNS_CLASS_IN, 100);
	assert_int_equal(parse(&m, &q), DNS_PARSE_OK);
	assert_int_equal(q.udp_size, 512);
	/* With an option (a cookie: code 10, 8 bytes). */
	make_query(&m, 1, "example.com", DNS_TYPE_A, DNS_CLASS_IN, -1);
	m.b[11] = 1;
	put_opt(&m, 1232, 12);
	put16(&m, 10);
	put16(&m, 8);
	for (int i = 0; i < 8; i++)
		put8(&m, (uint8_t)i);
	assert_int_equal(parse(&m, &q), DNS_PARSE_OK);
	assert_int_equal(q.udp_size, 1232);
	/* The option claims more than RDATA holds. */
	m.b[m.n - 9] = 9;
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
}

static void test_parse_bad_additional(void **state)
{
	struct dns_query q;
	struct msg m;
	size_t end;

	(void)state;
	make_query(&m, 1, "example.com", DNS_TYPE_A, DNS_CLASS_IN, 1232);
	end = m.n;
	m.b[end - 11] = 1; /* owner not the root */
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
	make_query(&m, 1, "example.com", DNS_TYPE_A, DNS_CLASS_IN, 1232);
	m.b[end - 9] = DNS_TYPE_A; /* not an OPT */
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
	make_query(&m, 1, "example.com", DNS_TYPE_A, DNS_CLASS_IN, 1232);
	m.b[end - 1] = 4; /* RDATA past the end */
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
	make_query(&m, 1, "example.com", DNS_TYPE_A, DNS_CLASS_IN, 1232);
	m.n -= 3; /* a cut record */
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
	make_query(&m, 1, "example.com", DNS_TYPE_A, DNS_CLASS_IN, 1232);
	m.b[11] = 2; /* two additional records */
	put_opt(&m, 1232, 0);
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
	make_query(&m, 1, "example.com", DNS_TYPE_A, DNS_CLASS_IN, -1);
	m.b[11] = 1; /* announced, absent */
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
}

static void test_parse_compression(void **state)
{
	struct dns_query q;
	struct msg m;
	uint8_t reply[Q_MAX];
	int n;

	(void)state;
	/* ID 0x0161 reads as the label "a", and flags byte 0 ends the name. */
	put_header(&m, 0x0161, 0x0000, 1, 0);
	put8(&m, 3);
	put8(&m, 'w');
	put8(&m, 'w');
	put8(&m, 'w');
	put16(&m, 0xc000);
	put16(&m, DNS_TYPE_A);
	put16(&m, DNS_CLASS_IN);
	assert_int_equal(parse(&m, &q), DNS_PARSE_OK);
	assert_string_equal(q.name, "www.a");
	assert_int_equal(q.question_end, m.n);
	/* The reply carries the name uncompressed (its header is not the query's). */
	n = dns_reply_rcode(m.b, m.n, &q, DNS_RCODE_REFUSED, reply, sizeof(reply));
	assert_int_equal(n, 12 + 7 + 4);
	assert_memory_equal(reply + 12, "\3www\1a\0", 7);

	/* A pointer into the OPT record's option data. */
	put_header(&m, 2, 0, 1, 1);
	put8(&m, 3);
	put8(&m, 'a');
	put8(&m, 'p');
	put8(&m, 'i');
	put16(&m, 0xc000 | (12 + 6 + 4 + 11 + 4));
	put16(&m, DNS_TYPE_A);
	put16(&m, DNS_CLASS_IN);
	put_opt(&m, 1232, 4 + 13);
	put16(&m, 65001);
	put16(&m, 13);
	put_name(&m, "example.com");
	assert_int_equal(parse(&m, &q), DNS_PARSE_OK);
	assert_string_equal(q.name, "api.example.com");
	n = dns_reply_rcode(m.b, m.n, &q, DNS_RCODE_REFUSED, reply, sizeof(reply));
	assert_int_equal(n, 12 + 17 + 4);
	assert_memory_equal(reply + 12, "\3api\7example\3com\0", 17);
}

static void test_parse_pointer_loop(void **state)
{
	struct dns_query q;
	struct msg m;

	(void)state;
	put_header(&m, 1, 0, 1, 0);
	put16(&m, 0xc00c); /* itself */
	put16(&m, DNS_TYPE_A);
	put16(&m, DNS_CLASS_IN);
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
	put_header(&m, 1, 0, 1, 0);
	put8(&m, 1);
	put8(&m, 'a');
	put16(&m, 0xc00c); /* back to the start of the name */
	put16(&m, DNS_TYPE_A);
	put16(&m, DNS_CLASS_IN);
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
	m.b[14] = 0xc0;
	m.b[15] = 0xff; /* past the end */
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
	m.b[14] = 0x80; /* a reserved label type */
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
}

static void test_parse_header(void **state)
{
	struct dns_query q;
	struct msg m;

	(void)state;
	make_query(&m, 1, "example.com", DNS_TYPE_A, DNS_CLASS_IN, -1);
	assert_int_equal(dns_query_parse(m.b, 11, &q), DNS_PARSE_DROP);
	assert_int_equal(dns_query_parse(m.b, 0, &q), DNS_PARSE_DROP);
	assert_int_equal(dns_query_parse(NULL, 0, &q), DNS_PARSE_DROP);
	m.b[2] |= 0x80; /* a response */
	assert_int_equal(parse(&m, &q), DNS_PARSE_DROP);
	m.b[2] = 2 << 3; /* opcode 2: STATUS */
	assert_int_equal(parse(&m, &q), DNS_PARSE_NOTIMP);
	m.b[2] = 0;
	m.b[5] = 0;
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
	m.b[5] = 2;
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
	m.b[5] = 1;
	m.b[7] = 1; /* an answer */
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
	m.b[7] = 0;
	m.b[9] = 1; /* an authority record */
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
	m.b[9] = 0;
	assert_int_equal(parse(&m, &q), DNS_PARSE_OK);
	assert_false(q.recursion_desired); /* flags 0 */
}

static void test_parse_truncated_and_trailing(void **state)
{
	struct dns_query q;
	struct msg m;
	size_t len;

	(void)state;
	make_query(&m, 1, "api.example.com", DNS_TYPE_A, DNS_CLASS_IN, -1);
	for (len = 12; len < m.n; len++)
		assert_int_equal(dns_query_parse(m.b, len, &q), DNS_PARSE_FORMERR);
	make_query(&m, 1, "api.example.com", DNS_TYPE_A, DNS_CLASS_IN, 1232);
	for (len = 12; len < m.n; len++)
		assert_int_equal(dns_query_parse(m.b, len, &q), DNS_PARSE_FORMERR);
	put8(&m, 0);
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
	make_query(&m, 1, "api.example.com", DNS_TYPE_A, DNS_CLASS_IN, -1);
	put16(&m, 0xdead);
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
}

/* A name of len characters in labels of at most 63. */
static void long_name(char *buf, size_t len)
{
	size_t i, run = 0;

	for (i = 0; i < len; i++) {
		if (run == 63 && i + 1 < len) {
			buf[i] = '.';
			run = 0;
		} else {
			buf[i] = 'a';
			run++;
		}
	}
	buf[len] = '\0';
}

static void test_parse_name_length(void **state)
{
	char name[300];
	struct dns_query q;
	struct msg m;

	(void)state;
	long_name(name, 253);
	make_query(&m, 1, name, DNS_TYPE_A, DNS_CLASS_IN, -1);
	assert_int_equal(parse(&m, &q), DNS_PARSE_OK);
	assert_string_equal(q.name, name);
	long_name(name, 254);
	make_query(&m, 1, name, DNS_TYPE_A, DNS_CLASS_IN, -1);
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
	long_name(name, 290);
	make_query(&m, 1, name, DNS_TYPE_A, DNS_CLASS_IN, -1);
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
}

static void test_parse_odd_bytes(void **state)
{
	struct dns_query q;
	struct msg m;

	(void)state;
	/* A dot and a NUL inside labels: c-ares escapes them; never a host name. */
	make_query(&m, 1, "a.b.com", DNS_TYPE_A, DNS_CLASS_IN, -1);
	m.b[13] = '.';
	assert_int_equal(parse(&m, &q), DNS_PARSE_OK);
	assert_string_equal(q.name, "\\..b.com");
	m.b[13] = 1;
	assert_int_equal(parse(&m, &q), DNS_PARSE_OK);
	assert_string_equal(q.name, "\\001.b.com");
	/* c-ares does not escape a NUL: it would cut the name ("a\0" + ".com" as "a"). */
	m.b[13] = 0;
	assert_int_equal(parse(&m, &q), DNS_PARSE_FORMERR);
}

static void test_reply_rcode(void **state)
{
	uint8_t buf[Q_MAX];
	struct dns_query q;
	struct msg m;
	int n;

	(void)state;
	make_query(&m, 0xbeef, "denied.example", DNS_TYPE_A, DNS_CLASS_IN, 1232);
	assert_int_equal(parse(&m, &q), DNS_PARSE_OK);
	n = dns_reply_rcode(m.b, m.n, &q, DNS_RCODE_REFUSED, buf, sizeof(buf));
	assert_int_equal(n, q.question_end);
	assert_int_equal(buf[0], 0xbe);
	assert_int_equal(buf[1], 0xef);
	assert_int_equal(buf[2], 0x81); /* QR, RD */
	assert_int_equal(buf[3], 0x80 | DNS_RCODE_REFUSED);
	assert_memory_equal(buf + 4, "\0\1\0\0\0\0\0\0", 8);
	assert_memory_equal(buf + 12, m.b + 12, q.question_end - 12);
	/* Without a question. */
	n = dns_reply_rcode(m.b, m.n, NULL, DNS_RCODE_FORMERR, buf, sizeof(buf));
	assert_int_equal(n, 12);
	assert_int_equal(buf[3], 0x80 | DNS_RCODE_FORMERR);
	assert_memory_equal(buf + 4, "\0\0\0\0\0\0\0\0", 8);
	/* NOTIMP keeps the opcode. */
	m.b[2] = 2 << 3;
	n = dns_reply_rcode(m.b, m.n, NULL, DNS_RCODE_NOTIMP, buf, sizeof(buf));
	assert_int_equal(n, 12);
	assert_int_equal(buf[2], 0x80 | 2 << 3);
	m.b[2] = 1;
	/* Too small. */
	assert_int_equal(dns_reply_rcode(m.b, m.n, &q, 5, buf, q.question_end - 1), -ENOSPC);
	assert_int_equal(dns_reply_rcode(m.b, m.n, NULL, 1, buf, 11), -ENOSPC);
	assert_int_equal(dns_reply_rcode(m.b, 11, NULL, 1, buf, sizeof(buf)), -EINVAL);
}

static void set_v4(struct in6_addr *a, const char *text)
{
	char mapped[64] = "::ffff:";

	strcat(mapped, text);
	assert_int_equal(inet_pton(AF_INET6, mapped, a), 1);
}

static void set_v6(struct in6_addr *a, const char *text)
{
	assert_int_equal(inet_pton(AF_INET6, text, a), 1);
}

/* Three addresses: two IPv4 (mapped), one IPv6. */
static void three_addresses(struct in6_addr *a, uint32_t *ttl)
{
	set_v4(&a[0], "198.18.0.1");
	set_v6(&a[1], "2001:db8::1");
	set_v4(&a[2], "198.18.0.2");
	ttl[0] = 300;
	ttl[1] = 60;
	ttl[2] = 120;
}

static int reply_for(struct msg *m, uint16_t qtype, uint8_t *buf, size_t max_size)
{
	struct in6_addr a[3];
	struct dns_query q;
	uint32_t ttl[3];

	three_addresses(a, ttl);
	make_query(m, 42, "API.example.com", qtype, DNS_CLASS_IN, 1232);
	assert_int_equal(parse(m, &q), DNS_PARSE_OK);
	return dns_reply_addresses(m->b, m->n, &q, a, ttl, 3, max_size, buf, Q_MAX);
}

static void test_reply_a(void **state)
{
	struct ares_addrttl at[8];
	struct hostent *host = NULL;
	uint8_t buf[Q_MAX];
	char text[INET_ADDRSTRLEN];
	struct msg m;
	int n, count = 8;

	(void)state;
	n = reply_for(&m, DNS_TYPE_A, buf, 512);
	assert_int_equal(n, (int)(m.n - 11 + 2 * 16));
	assert_int_equal(buf[7], 2); /* ANCOUNT */
	assert_int_equal(ares_parse_a_reply(buf, n, &host, at, &count), ARES_SUCCESS);
	assert_int_equal(count, 2);
	assert_string_equal(inet_ntop(AF_INET, &at[0].ipaddr, text, sizeof(text)), "198.18.0.1");
	assert_int_equal(at[0].ttl, 300);
	assert_string_equal(inet_ntop(AF_INET, &at[1].ipaddr, text, sizeof(text)), "198.18.0.2");
	assert_int_equal(at[1].ttl, 120);
	assert_string_equal(host->h_name, "API.example.com"); /* the case as asked */
	ares_free_hostent(host);
}

static void test_reply_aaaa(void **state)
{
	struct ares_addr6ttl at[8];
	uint8_t buf[Q_MAX];
	char text[INET6_ADDRSTRLEN];
	struct msg m;
	int n, count = 8;

	(void)state;
	n = reply_for(&m, DNS_TYPE_AAAA, buf, 512);
	assert_int_equal(n, (int)(m.n - 11 + 28));
	assert_int_equal(ares_parse_aaaa_reply(buf, n, NULL, at, &count), ARES_SUCCESS);
	assert_int_equal(count, 1);
	assert_string_equal(inet_ntop(AF_INET6, &at[0].ip6addr, text, sizeof(text)), "2001:db8::1");
	assert_int_equal(at[0].ttl, 60);
}

static void test_reply_nodata(void **state)
{
	struct ares_addrttl at[8];
	uint8_t buf[Q_MAX];
	struct in6_addr v6;
	struct dns_query q;
	uint32_t ttl = 5;
	struct msg m;
	int n, count = 8;

	(void)state;
	/* TXT: no records at all; NOERROR. */
	n = reply_for(&m, TYPE_TXT, buf, 512);
	assert_int_equal(n, (int)(m.n - 11));
	assert_int_equal(buf[3], 0x80);
	assert_int_equal(buf[7], 0);
	/* A with only IPv6 addresses: no A records. */
	set_v6(&v6, "2001:db8::2");
	make_query(&m, 1, "example.com", DNS_TYPE_A, DNS_CLASS_IN, -1);
	assert_int_equal(parse(&m, &q), DNS_PARSE_OK);
	n = dns_reply_addresses(m.b, m.n, &q, &v6, &ttl, 1, 512, buf, sizeof(buf));
	assert_int_equal(n, (int)m.n);
	assert_int_equal(ares_parse_a_reply(buf, n, NULL, at, &count), ARES_ENODATA);
}

static void test_reply_truncated(void **state)
{
	struct in6_addr a[100];
	uint32_t ttl[100];
	uint8_t buf[4096];
	struct dns_query q;
	struct msg m;
	size_t full;
	int n;

	(void)state;
	for (int i = 0; i < 100; i++) {
		set_v6(&a[i], "2001:db8::1");
		a[i].s6_addr[15] = (uint8_t)i;
		ttl[i] = 30;
	}
	make_query(&m, 9, "example.com", DNS_TYPE_AAAA, DNS_CLASS_IN, -1);
	assert_int_equal(parse(&m, &q), DNS_PARSE_OK);
	full = m.n + 100 * 28;
	n = dns_reply_addresses(m.b, m.n, &q, a, ttl, 100, DNS_MAX_UDP_REPLY, buf, sizeof(buf));
	assert_int_equal(n, (int)m.n);
	assert_int_equal(buf[2] & 0x02, 0x02); /* TC */
	assert_int_equal(buf[7], 0);
	n = dns_reply_addresses(m.b, m.n, &q, a, ttl, 100, full, buf, sizeof(buf));
	assert_int_equal(n, (int)full);
	assert_int_equal(buf[2] & 0x02, 0);
	assert_int_equal(buf[7], 100);
	n = dns_reply_addresses(m.b, m.n, &q, a, ttl, 100, full - 1, buf, sizeof(buf));
	assert_int_equal(n, (int)m.n);
	/* Never past size. */
	assert_int_equal(dns_reply_addresses(m.b, m.n, &q, a, ttl, 100, full, buf, full - 1),
			 -ENOSPC);
	assert_int_equal(dns_reply_addresses(m.b, m.n, &q, a, ttl, 100, 512, buf, m.n - 1),
			 -ENOSPC);
}

static struct dns_tcp_stream stream;
static uint8_t out[DNS_MAX_MESSAGE];

/* Two queries framed for TCP into buf; returns the length. */
static size_t two_framed(uint8_t *buf, struct msg *a, struct msg *b)
{
	make_query(a, 1, "one.example", DNS_TYPE_A, DNS_CLASS_IN, -1);
	make_query(b, 2, "two.example", DNS_TYPE_AAAA, DNS_CLASS_IN, 1232);
	buf[0] = 0;
	buf[1] = (uint8_t)a->n;
	memcpy(buf + 2, a->b, a->n);
	buf[2 + a->n] = 0;
	buf[3 + a->n] = (uint8_t)b->n;
	memcpy(buf + 4 + a->n, b->b, b->n);
	return 4 + a->n + b->n;
}

static void test_tcp_byte_by_byte(void **state)
{
	uint8_t buf[Q_MAX];
	struct msg a, b;
	size_t len, i, got = 0;
	int n;

	(void)state;
	memset(&stream, 0, sizeof(stream));
	len = two_framed(buf, &a, &b);
	for (i = 0; i < len; i++) {
		assert_int_equal(dns_tcp_feed(&stream, buf + i, 1), 1);
		n = dns_tcp_next(&stream, out, sizeof(out));
		if (i == 1 + a.n || i == len - 1) {
			struct msg *want = got ? &b : &a;

			assert_int_equal(n, want->n);
			assert_memory_equal(out, want->b, want->n);
			got++;
		} else {
			assert_int_equal(n, 0);
		}
	}
	assert_int_equal(got, 2);
	assert_int_equal(stream.length, 0);
}

static void test_tcp_pipelined(void **state)
{
	uint8_t buf[Q_MAX], z[Q_MAX];
	struct msg a, b;
	size_t len;

	(void)state;
	memset(&stream, 0, sizeof(stream));
	len = two_framed(buf, &a, &b);
	assert_int_equal(dns_tcp_feed(&stream, buf, len), len);
	assert_int_equal(dns_tcp_next(&stream, out, sizeof(out)), a.n);
	assert_memory_equal(out, a.b, a.n);
	assert_int_equal(dns_tcp_next(&stream, out, sizeof(out)), b.n);
	assert_memory_equal(out, b.b, b.n);
	assert_int_equal(dns_tcp_next(&stream, out, sizeof(out)), 0);
	/* A zero length prefix is an error, consumed. */
	z[0] = z[1] = 0;
	memcpy(z + 2, buf, 2 + a.n);
	assert_int_equal(dns_tcp_feed(&stream, z, 2 + 2 + a.n), 4 + a.n);
	assert_int_equal(dns_tcp_next(&stream, out, sizeof(out)), -EINVAL);
	assert_int_equal(dns_tcp_next(&stream, out, sizeof(out)), a.n);
	/* Too large for out: consumed, -EMSGSIZE. */
	assert_int_equal(dns_tcp_feed(&stream, buf, 2 + a.n), 2 + a.n);
	assert_int_equal(dns_tcp_next(&stream, out, a.n - 1), -EMSGSIZE);
	assert_int_equal(stream.length, 0);
}

static void test_tcp_full(void **state)
{
	static uint8_t big[2 + DNS_MAX_MESSAGE + 10];

	(void)state;
	memset(&stream, 0, sizeof(stream));
	memset(big, 'x', sizeof(big));
	big[0] = big[1] = 0xff;
	assert_int_equal(dns_tcp_feed(&stream, big, sizeof(big)), 2 + DNS_MAX_MESSAGE);
	assert_int_equal(dns_tcp_feed(&stream, big, 1), 0);
	assert_int_equal(dns_tcp_next(&stream, out, sizeof(out)), DNS_MAX_MESSAGE);
	assert_int_equal(dns_tcp_feed(&stream, big, 1), 1);
	assert_int_equal(dns_tcp_next(&stream, out, sizeof(out)), 0);
}

static void load_policy(struct policy *p, const char *json)
{
	char err[ERR_SIZE] = "";

	if (policy_parse(json, strlen(json), p, err, sizeof(err)))
		fail_msg("policy: %s", err);
}

static enum dns_decision decide(const struct policy *p, const char *name, uint16_t qtype,
				uint16_t qclass)
{
	struct dns_query q;
	struct msg m;

	make_query(&m, 1, name, qtype, qclass, -1);
	assert_int_equal(parse(&m, &q), DNS_PARSE_OK);
	return dns_decide(p, &q);
}

#define ANSWER DNS_DECISION_ANSWER
#define NODATA DNS_DECISION_NODATA
#define REFUSED DNS_DECISION_REFUSED
#define A DNS_TYPE_A
#define AAAA DNS_TYPE_AAAA
#define IN DNS_CLASS_IN

static void test_decide_allowlist(void **state)
{
	struct policy p;

	(void)state;
	load_policy(&p, "{\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"example.com\", "
			"\"*.wild.org\", \"198.18.0.0/15\"], \"model_endpoints\": "
			"[\"llm.internal:443\", \"10.0.0.1:8080\"]}");
	assert_int_equal(decide(&p, "example.com", A, IN), ANSWER);
	assert_int_equal(decide(&p, "Example.COM.", AAAA, IN), ANSWER);
	assert_int_equal(decide(&p, "api.example.com", AAAA, IN), ANSWER);
	assert_int_equal(decide(&p, "a.b.c.wild.org", A, IN), ANSWER);
	assert_int_equal(decide(&p, "wild.org", A, IN), REFUSED);
	assert_int_equal(decide(&p, "evil.com", A, IN), REFUSED);
	assert_int_equal(decide(&p, "notexample.com", A, IN), REFUSED);
	assert_int_equal(decide(&p, "example.com.evil.com", A, IN), REFUSED);
	assert_int_equal(decide(&p, "example.com", TYPE_TXT, IN), NODATA);
	assert_int_equal(decide(&p, "example.com", TYPE_HTTPS, IN), NODATA);
	assert_int_equal(decide(&p, "x.wild.org", TYPE_SVCB, IN), NODATA);
	assert_int_equal(decide(&p, "example.com", TYPE_ANY, IN), NODATA);
	assert_int_equal(decide(&p, "evil.com", TYPE_TXT, IN), REFUSED);
	assert_int_equal(decide(&p, "example.com", A, CLASS_CH), REFUSED);
	assert_int_equal(decide(&p, "llm.internal", A, IN), ANSWER);
	assert_int_equal(decide(&p, "x.llm.internal", A, IN), REFUSED);
	assert_int_equal(decide(&p, "_dmarc.example.com", TYPE_TXT, IN), REFUSED);
	assert_int_equal(decide(&p, "a_b.example.com", A, IN), REFUSED);
	assert_int_equal(decide(&p, "", A, IN), REFUSED);
	assert_int_equal(decide(&p, "1.0.18.198", A, IN), REFUSED);
	p.allow_model_endpoint = false;
	assert_int_equal(decide(&p, "llm.internal", A, IN), REFUSED);
	assert_int_equal(decide(&p, "example.com", A, IN), ANSWER);
	policy_free(&p);
}

static void test_decide_no_network(void **state)
{
	struct policy p;

	(void)state;
	load_policy(&p, "{\"network_mode\": \"no-network\", \"model_endpoints\": "
			"[\"LLM.internal\"]}");
	assert_int_equal(decide(&p, "llm.internal", AAAA, IN), ANSWER);
	assert_int_equal(decide(&p, "llm.internal", TYPE_TXT, IN), NODATA);
	assert_int_equal(decide(&p, "a.llm.internal", A, IN), REFUSED);
	assert_int_equal(decide(&p, "example.com", A, IN), REFUSED);
	policy_free(&p);
	load_policy(&p, "{\"network_mode\": \"no-network\", \"allow_model_endpoint\": false, "
			"\"model_endpoints\": [\"llm.internal\"]}");
	assert_int_equal(decide(&p, "llm.internal", A, IN), REFUSED);
	policy_free(&p);
}

static void test_decide_public(void **state)
{
	struct policy p;

	(void)state;
	load_policy(&p, "{\"network_mode\": \"public\"}");
	assert_int_equal(decide(&p, "anything.example", A, IN), ANSWER);
	assert_int_equal(decide(&p, "x.y.z", AAAA, IN), ANSWER);
	assert_int_equal(decide(&p, "example.com", TYPE_TXT, IN), NODATA);
	assert_int_equal(decide(&p, "example.com", A, CLASS_CH), REFUSED);
	assert_int_equal(decide(&p, "bad_name.example", A, IN), REFUSED);
	assert_int_equal(dns_decide(NULL, NULL), REFUSED);
	policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_types),
		cmocka_unit_test(test_parse_with_c_ares_query),
		cmocka_unit_test(test_parse_edns),
		cmocka_unit_test(test_parse_bad_additional),
		cmocka_unit_test(test_parse_compression),
		cmocka_unit_test(test_parse_pointer_loop),
		cmocka_unit_test(test_parse_header),
		cmocka_unit_test(test_parse_truncated_and_trailing),
		cmocka_unit_test(test_parse_name_length),
		cmocka_unit_test(test_parse_odd_bytes),
		cmocka_unit_test(test_reply_rcode),
		cmocka_unit_test(test_reply_a),
		cmocka_unit_test(test_reply_aaaa),
		cmocka_unit_test(test_reply_nodata),
		cmocka_unit_test(test_reply_truncated),
		cmocka_unit_test(test_tcp_byte_by_byte),
		cmocka_unit_test(test_tcp_pipelined),
		cmocka_unit_test(test_tcp_full),
		cmocka_unit_test(test_decide_allowlist),
		cmocka_unit_test(test_decide_no_network),
		cmocka_unit_test(test_decide_public),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
