// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * DNS messages of the responder (user/dns/dns.h): a sandbox's query parsed, the
 * replies written, TCP framing, and what the policy says about a question.
 * Every byte read here comes from the sandbox: each read is bounds-checked
 * against the message length. The question name is expanded by c-ares
 * (ares_expand_name: compression, loops); the rest of the framing is ours.
 *
 * Replies carry the question uncompressed: a query may (oddly, but legally)
 * compress its question name with a pointer into its header or its OPT
 * record, neither of which a reply copies verbatim, so the name's labels are
 * copied out rather than its bytes. Replies never echo an OPT record (kept
 * simple): the caller sizes a UDP reply by the payload the client advertised
 * (udp_size), which holds whether or not the reply carries an OPT.
 */
#include <errno.h>
#include <string.h>

#include <ares.h>

#include "dns.h"
#include "lib/hostmatch.h"

#define DNS_FLAG_QR 0x80     /* byte 2 */
#define DNS_OPCODE_MASK 0x78 /* byte 2 */
#define DNS_FLAG_TC 0x02     /* byte 2 */
#define DNS_FLAG_RD 0x01     /* byte 2 */
#define DNS_FLAG_RA 0x80     /* byte 3 */
#define DNS_POINTER 0xc0
#define DNS_NAME_WIRE_MAX 255 /* RFC 1035 2.3.4 */
#define DNS_QUESTION_FIXED 4  /* QTYPE, QCLASS */
#define DNS_RR_FIXED 10	      /* TYPE, CLASS, TTL, RDLENGTH */
#define DNS_OPT_MIN_PAYLOAD 512
#define DNS_TTL_MAX 0x7fffffffu /* RFC 2181 8: larger TTLs read as 0 */
#define DNS_QUESTION_POINTER 0xc00c

static uint16_t dns_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void dns_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void dns_put32(uint8_t *p, uint32_t v)
{
	dns_put16(p, (uint16_t)(v >> 16));
	dns_put16(p + 2, (uint16_t)v);
}

/*
 * The name at off, uncompressed (labels followed through pointers) into out.
 * Returns its wire length, or -1 if it is malformed, loops, exceeds size or
 * holds a NUL byte in a label.
 */
static int dns_name_flatten(const uint8_t *msg, size_t length, size_t off, uint8_t *out,
			    size_t size)
{
	size_t n = 0, hops = 0, label;

	for (;;) {
		if (off >= length)
			return -1;
		label = msg[off];
		if ((label & DNS_POINTER) == DNS_POINTER) {
			if (off + 1 >= length || ++hops > length)
				return -1;
			off = (label & ~DNS_POINTER) << 8 | msg[off + 1];
			continue;
		}
		if (label & DNS_POINTER) /* 0x40, 0x80: reserved (RFC 6891 5) */
			return -1;
		if (label + 1 > length - off || label + 1 > size - n)
			return -1;
		/* c-ares would end the expanded name at a NUL: it would not be this name. */
		if (memchr(msg + off + 1, 0, label))
			return -1;
		memcpy(out + n, msg + off, label + 1);
		n += label + 1;
		off += label + 1;
		if (label == 0)
			return (int)n;
	}
}

/* The question's name, as c-ares expands it, lower-cased into out->name. */
static enum dns_parse_result dns_parse_name(const uint8_t *msg, size_t length,
					    struct dns_query *out, size_t *off)
{
	uint8_t flat[DNS_NAME_WIRE_MAX];
	char *name = NULL;
	long enclen = 0;
	size_t n, i;

	if (ares_expand_name(msg + *off, msg, (int)length, &name, &enclen) != ARES_SUCCESS)
		return DNS_PARSE_FORMERR;
	n = strlen(name);
	/* ASCII only: the locale must not decide what a name is. */
	for (i = 0; i <= n && n <= HOSTNAME_MAX_LENGTH; i++)
		out->name[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] | 0x20 : name[i]);
	ares_free_string(name);
	if (n > HOSTNAME_MAX_LENGTH || enclen <= 0 || (size_t)enclen > length - *off)
		return DNS_PARSE_FORMERR;
	/* What a reply copies must be readable too, and hold no NUL c-ares cut at. */
	if (dns_name_flatten(msg, length, *off, flat, sizeof(flat)) < 0)
		return DNS_PARSE_FORMERR;
	*off += (size_t)enclen;
	return DNS_PARSE_OK;
}

static enum dns_parse_result dns_parse_question(const uint8_t *msg, size_t length,
						struct dns_query *out)
{
	size_t off = DNS_HEADER_SIZE;

	if (dns_parse_name(msg, length, out, &off) != DNS_PARSE_OK)
		return DNS_PARSE_FORMERR;
	if (length - off < DNS_QUESTION_FIXED)
		return DNS_PARSE_FORMERR;
	out->qtype = dns_get16(msg + off);
	out->qclass = dns_get16(msg + off + 2);
	out->question_end = off + DNS_QUESTION_FIXED;
	return DNS_PARSE_OK;
}

/* EDNS options: (code, length, data) up to exactly the end of RDATA. */
static bool dns_opt_options_valid(const uint8_t *p, size_t length)
{
	size_t off = 0, len;

	while (off < length) {
		if (length - off < 4)
			return false;
		len = dns_get16(p + off + 2);
		if (len > length - off - 4)
			return false;
		off += 4 + len;
	}
	return true;
}

/* The one additional record: an OPT with root owner, ending the message. */
static enum dns_parse_result dns_parse_opt(const uint8_t *msg, size_t length, size_t off,
					   struct dns_query *out)
{
	uint16_t payload;
	size_t rdlength;

	/* The owner is the root: one zero byte (no pointer, no label). */
	if (length - off < 1 + DNS_RR_FIXED || msg[off] != 0)
		return DNS_PARSE_FORMERR;
	off++;
	if (dns_get16(msg + off) != DNS_TYPE_OPT)
		return DNS_PARSE_FORMERR;
	payload = dns_get16(msg + off + 2);
	rdlength = dns_get16(msg + off + 8);
	off += DNS_RR_FIXED;
	/* Nothing may follow the record (trailing bytes are malformed). */
	if (rdlength != length - off || !dns_opt_options_valid(msg + off, rdlength))
		return DNS_PARSE_FORMERR;
	out->edns = true;
	out->udp_size = payload < DNS_OPT_MIN_PAYLOAD ? DNS_OPT_MIN_PAYLOAD : payload;
	return DNS_PARSE_OK;
}

enum dns_parse_result dns_query_parse(const uint8_t *message, size_t length, struct dns_query *out)
{
	enum dns_parse_result ret;

	if (!message || !out || length < DNS_HEADER_SIZE || length > DNS_MAX_MESSAGE)
		return DNS_PARSE_DROP;
	if (message[2] & DNS_FLAG_QR)
		return DNS_PARSE_DROP;
	memset(out, 0, sizeof(*out));
	out->id = dns_get16(message);
	out->recursion_desired = message[2] & DNS_FLAG_RD;
	out->udp_size = DNS_OPT_MIN_PAYLOAD;
	if (message[2] & DNS_OPCODE_MASK)
		return DNS_PARSE_NOTIMP;
	/* One question; no answer or authority; at most the OPT as additional. */
	if (dns_get16(message + 4) != 1 || dns_get16(message + 6) || dns_get16(message + 8) ||
	    dns_get16(message + 10) > 1)
		return DNS_PARSE_FORMERR;
	ret = dns_parse_question(message, length, out);
	if (ret != DNS_PARSE_OK)
		return ret;
	if (dns_get16(message + 10))
		return dns_parse_opt(message, length, out->question_end, out);
	return out->question_end == length ? DNS_PARSE_OK : DNS_PARSE_FORMERR;
}

/* The reply's header from the query's: ID, opcode and RD kept. */
static void dns_reply_header(uint8_t *buf, uint16_t qdcount, uint16_t ancount, int rcode,
			     bool truncated)
{
	buf[2] = DNS_FLAG_QR | (buf[2] & (DNS_OPCODE_MASK | DNS_FLAG_RD)) |
		 (truncated ? DNS_FLAG_TC : 0);
	buf[3] = DNS_FLAG_RA | (uint8_t)(rcode & 0x0f);
	dns_put16(buf + 4, qdcount);
	dns_put16(buf + 6, ancount);
	dns_put16(buf + 8, 0);
	dns_put16(buf + 10, 0);
}

/* The query's header and question (name uncompressed) into buf; returns the length. */
static int dns_reply_question(const uint8_t *query, size_t query_length,
			      const struct dns_query *parsed, uint8_t *buf, size_t size)
{
	uint8_t name[DNS_NAME_WIRE_MAX];
	int n;

	if (parsed->question_end > query_length)
		return -EINVAL;
	n = dns_name_flatten(query, query_length, DNS_HEADER_SIZE, name, sizeof(name));
	if (n < 0)
		return -EINVAL;
	if (size < DNS_HEADER_SIZE + (size_t)n + DNS_QUESTION_FIXED)
		return -ENOSPC;
	memcpy(buf, query, DNS_HEADER_SIZE);
	memcpy(buf + DNS_HEADER_SIZE, name, (size_t)n);
	dns_put16(buf + DNS_HEADER_SIZE + n, parsed->qtype);
	dns_put16(buf + DNS_HEADER_SIZE + n + 2, parsed->qclass);
	return DNS_HEADER_SIZE + n + DNS_QUESTION_FIXED;
}

int dns_reply_rcode(const uint8_t *query, size_t query_length, const struct dns_query *parsed,
		    int rcode, uint8_t *buf, size_t size)
{
	int n = DNS_HEADER_SIZE;

	if (!query || !buf || query_length < DNS_HEADER_SIZE || rcode < 0 || rcode > 15)
		return -EINVAL;
	if (parsed) {
		n = dns_reply_question(query, query_length, parsed, buf, size);
		if (n < 0)
			return n;
	} else {
		if (size < DNS_HEADER_SIZE)
			return -ENOSPC;
		memcpy(buf, query, DNS_HEADER_SIZE);
	}
	dns_reply_header(buf, parsed ? 1 : 0, 0, rcode, false);
	return n;
}

/* Is this address answered for qtype? Mapped addresses are IPv4: A only. */
static bool dns_address_wanted(uint16_t qtype, const struct in6_addr *addr)
{
	bool v4 = IN6_IS_ADDR_V4MAPPED(addr);

	return qtype == DNS_TYPE_A ? v4 : qtype == DNS_TYPE_AAAA && !v4;
}

static size_t dns_answer_write(uint8_t *p, uint16_t qtype, const struct in6_addr *addr,
			       uint32_t ttl)
{
	uint16_t rdlength = qtype == DNS_TYPE_A ? 4 : 16;

	dns_put16(p, DNS_QUESTION_POINTER);
	dns_put16(p + 2, qtype);
	dns_put16(p + 4, DNS_CLASS_IN);
	dns_put32(p + 6, ttl > DNS_TTL_MAX ? DNS_TTL_MAX : ttl);
	dns_put16(p + 10, rdlength);
	memcpy(p + 2 + DNS_RR_FIXED, addr->s6_addr + (16 - rdlength), rdlength);
	return 2 + DNS_RR_FIXED + rdlength;
}

int dns_reply_addresses(const uint8_t *query, size_t query_length, const struct dns_query *parsed,
			const struct in6_addr *addrs, const uint32_t *ttls, size_t count,
			size_t max_size, uint8_t *buf, size_t size)
{
	size_t i, answers = 0, record, total, limit;
	bool truncated;
	int n;

	if (!query || !parsed || !buf || query_length < DNS_HEADER_SIZE ||
	    (count && (!addrs || !ttls)))
		return -EINVAL;
	n = dns_reply_question(query, query_length, parsed, buf, size);
	if (n < 0)
		return n;
	for (i = 0; i < count; i++)
		answers += dns_address_wanted(parsed->qtype, &addrs[i]);
	record = 2 + DNS_RR_FIXED + (parsed->qtype == DNS_TYPE_A ? 4 : 16);
	limit = max_size < DNS_MAX_MESSAGE ? max_size : DNS_MAX_MESSAGE;
	/* answers <= count, and the division keeps the product from overflowing. */
	truncated = answers > (DNS_MAX_MESSAGE - (size_t)n) / record ||
		    (size_t)n + answers * record > limit;
	if (truncated)
		answers = 0;
	total = (size_t)n + answers * record;
	if (total > size)
		return -ENOSPC;
	dns_reply_header(buf, 1, (uint16_t)answers, DNS_RCODE_NOERROR, truncated);
	for (i = 0; i < count && answers; i++)
		if (dns_address_wanted(parsed->qtype, &addrs[i]))
			n += (int)dns_answer_write(buf + n, parsed->qtype, &addrs[i], ttls[i]);
	return n;
}

size_t dns_tcp_feed(struct dns_tcp_stream *stream, const uint8_t *data, size_t length)
{
	size_t room;

	if (!stream || !data || stream->length >= sizeof(stream->buffer))
		return 0;
	room = sizeof(stream->buffer) - stream->length;
	if (length > room)
		length = room;
	memcpy(stream->buffer + stream->length, data, length);
	stream->length += length;
	return length;
}

static void dns_tcp_consume(struct dns_tcp_stream *stream, size_t n)
{
	memmove(stream->buffer, stream->buffer + n, stream->length - n);
	stream->length -= n;
}

/*
 * A zero length prefix is no message: it is consumed and -EINVAL returned
 * (the caller closes the connection). A message larger than size is
 * consumed too, and -EMSGSIZE returned.
 */
int dns_tcp_next(struct dns_tcp_stream *stream, uint8_t *out, size_t size)
{
	size_t length;

	if (!stream || !out || stream->length > sizeof(stream->buffer))
		return -EINVAL;
	if (stream->length < 2)
		return 0;
	length = dns_get16(stream->buffer);
	if (length == 0) {
		dns_tcp_consume(stream, 2);
		return -EINVAL;
	}
	if (stream->length - 2 < length)
		return 0;
	if (length > size) {
		dns_tcp_consume(stream, 2 + length);
		return -EMSGSIZE;
	}
	memcpy(out, stream->buffer + 2, length);
	dns_tcp_consume(stream, 2 + length);
	return (int)length;
}

/* Public mode answers every name; otherwise an entry in force must allow it. */
static bool dns_name_allowed(const struct policy *policy, const char *name)
{
	return policy->mode == POLICY_MODE_PUBLIC || policy_allows_name(policy, name);
}

/*
 * Only A and AAAA are answered with data: they are what the filter programs.
 * Other types of an allowed name get NOERROR without records: HTTPS and SVCB
 * carry address hints the filter has not programmed (a client using them
 * would be blocked), and TXT, MX, ANY and the rest are not needed to connect
 * and would turn the responder into a channel out of the sandbox. A class
 * other than IN, or a name that is no RFC 1123 host name (the root, "_srv",
 * escaped bytes), is refused in every mode: the responder resolves host names.
 */
enum dns_decision dns_decide(const struct policy *policy, const struct dns_query *query)
{
	char name[HOSTNAME_MAX_LENGTH + 1];

	if (!policy || !query || query->qclass != DNS_CLASS_IN)
		return DNS_DECISION_REFUSED;
	if (hostname_normalize(query->name, name, sizeof(name), NULL, 0))
		return DNS_DECISION_REFUSED;
	if (!dns_name_allowed(policy, name))
		return DNS_DECISION_REFUSED;
	if (query->qtype == DNS_TYPE_A || query->qtype == DNS_TYPE_AAAA)
		return DNS_DECISION_ANSWER;
	return DNS_DECISION_NODATA;
}
