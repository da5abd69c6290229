// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the DNS responder's messages (untrusted input: any
 * sandbox process). Besides "no crash, no overflow" it checks what the
 * responder relies on: a reply never exceeds its buffer, echoes the ID, is
 * itself read back by our parser as the same question (QR cleared), and an
 * answer to an allowed A/AAAA question is accepted by c-ares' own parser.
 * The input is also fed as a TCP stream, split at a byte the input chooses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ares.h>

#include "dns/dns.h"
#include "lib/policy.h"

#define FUZZ_N_ADDRS 4

static const char fuzz_policy_text[] =
	"{\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"example.com\", "
	"\"*.wild.org\"], \"model_endpoints\": [\"llm.internal:443\"]}";

static struct policy fuzz_policy;
static struct dns_tcp_stream fuzz_stream;
static uint8_t fuzz_out[DNS_MAX_MESSAGE];
static uint8_t fuzz_reply[DNS_MAX_MESSAGE];

static const struct policy *fuzz_get_policy(void)
{
	static bool loaded;
	char err[256];

	if (!loaded && policy_parse(fuzz_policy_text, strlen(fuzz_policy_text), &fuzz_policy, err,
				    sizeof(err)))
		abort();
	loaded = true;
	return &fuzz_policy;
}

/* The reply read back with QR cleared: the same question, nothing else. */
static void fuzz_reparse(const struct dns_query *q, int n)
{
	struct dns_query again;

	if (dns_query_parse(fuzz_reply, (size_t)n, &again) != DNS_PARSE_DROP)
		abort();
	fuzz_reply[2] &= 0x7f;
	if (dns_query_parse(fuzz_reply, (size_t)n, &again) != DNS_PARSE_OK)
		abort();
	if (strcmp(again.name, q->name) || again.qtype != q->qtype || again.qclass != q->qclass ||
	    again.id != q->id || again.question_end != (size_t)n)
		abort();
}

/* c-ares must read our answer to an allowed host name. */
static void fuzz_ares_check(const struct dns_query *q, int n)
{
	struct ares_addr6ttl v6[FUZZ_N_ADDRS];
	struct ares_addrttl v4[FUZZ_N_ADDRS];
	int count = FUZZ_N_ADDRS, ret;

	if (fuzz_reply[2] & 0x02) /* truncated: no answers */
		return;
	if (q->qtype == DNS_TYPE_A)
		ret = ares_parse_a_reply(fuzz_reply, n, NULL, v4, &count);
	else
		ret = ares_parse_aaaa_reply(fuzz_reply, n, NULL, v6, &count);
	if (ret != ARES_SUCCESS || count != FUZZ_N_ADDRS / 2)
		abort();
}

static void fuzz_replies(const uint8_t *data, size_t size, const struct dns_query *q,
			 enum dns_decision decision)
{
	struct in6_addr addrs[FUZZ_N_ADDRS] = {0};
	uint32_t ttls[FUZZ_N_ADDRS] = {60, 0xffffffffu, 300, 1};
	size_t max_size = q->udp_size < DNS_MAX_UDP_REPLY ? q->udp_size : DNS_MAX_UDP_REPLY;
	uint8_t *small;
	size_t small_size;
	int n;

	for (int i = 0; i < FUZZ_N_ADDRS; i += 2) {
		addrs[i].s6_addr[10] = addrs[i].s6_addr[11] = 0xff; /* ::ffff:198.18.0.i */
		addrs[i].s6_addr[12] = 198;
		addrs[i].s6_addr[13] = 18;
		addrs[i].s6_addr[15] = (uint8_t)i;
		addrs[i + 1].s6_addr[0] = 0x20; /* 2001:db8::i */
		addrs[i + 1].s6_addr[1] = 0x01;
		addrs[i + 1].s6_addr[2] = 0x0d;
		addrs[i + 1].s6_addr[3] = 0xb8;
		addrs[i + 1].s6_addr[15] = (uint8_t)i;
	}
	n = dns_reply_rcode(data, size, q, DNS_RCODE_REFUSED, fuzz_reply, sizeof(fuzz_reply));
	if (n < DNS_HEADER_SIZE || memcmp(fuzz_reply, data, 2))
		abort();
	fuzz_reparse(q, n);
	n = dns_reply_addresses(data, size, q, addrs, ttls, FUZZ_N_ADDRS, max_size, fuzz_reply,
				sizeof(fuzz_reply));
	if (n < DNS_HEADER_SIZE || memcmp(fuzz_reply, data, 2))
		abort();
	if (decision == DNS_DECISION_ANSWER)
		fuzz_ares_check(q, n);
	/* An exact-size heap buffer: the sanitizer sees any write past it. */
	small_size = size ? data[size - 1] : 0;
	small = malloc(small_size ? small_size : 1);
	if (!small)
		return;
	n = dns_reply_addresses(data, size, q, addrs, ttls, FUZZ_N_ADDRS, max_size, small,
				small_size);
	if (n != -ENOSPC && (n < DNS_HEADER_SIZE || (size_t)n > small_size))
		abort();
	n = dns_reply_rcode(data, size, q, DNS_RCODE_REFUSED, small, small_size);
	if (n != -ENOSPC && (n < DNS_HEADER_SIZE || (size_t)n > small_size))
		abort();
	free(small);
}

static void fuzz_query(const uint8_t *data, size_t size)
{
	enum dns_parse_result ret;
	enum dns_decision decision;
	struct dns_query q;
	int n;

	ret = dns_query_parse(data, size, &q);
	if (ret == DNS_PARSE_DROP)
		return;
	if (ret != DNS_PARSE_OK) {
		n = dns_reply_rcode(data, size, NULL, DNS_RCODE_FORMERR, fuzz_reply,
				    sizeof(fuzz_reply));
		if (n != DNS_HEADER_SIZE)
			abort();
		return;
	}
	if (strnlen(q.name, sizeof(q.name)) > HOSTNAME_MAX_LENGTH || q.question_end > size)
		abort();
	decision = dns_decide(fuzz_get_policy(), &q);
	if (decision != DNS_DECISION_ANSWER && decision != DNS_DECISION_NODATA &&
	    decision != DNS_DECISION_REFUSED)
		abort();
	fuzz_replies(data, size, &q, decision);
}

static void fuzz_drain(void)
{
	int n;

	while ((n = dns_tcp_next(&fuzz_stream, fuzz_out, sizeof(fuzz_out))) != 0)
		if (n > 0)
			fuzz_query(fuzz_out, (size_t)n);
		else if (n != -EINVAL)
			abort();
}

static void fuzz_tcp(const uint8_t *data, size_t size)
{
	size_t split = size ? data[0] % (size + 1) : 0, off = 0, took;

	fuzz_stream.length = 0;
	while (off < size) {
		took = dns_tcp_feed(&fuzz_stream, data + off, (off < split ? split : size) - off);
		off += took;
		fuzz_drain();
		if (!took && fuzz_stream.length == sizeof(fuzz_stream.buffer))
			abort(); /* a full buffer always holds a complete message */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_query(data, size);
	fuzz_tcp(data, size);
	return 0;
}
