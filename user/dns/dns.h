/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * DNS messages from the sandbox: parsing a query and writing the responder's
 * replies. Everything here reads untrusted input (a sandbox process writes
 * these bytes) and is pure: unit-tested and fuzzed. Names are expanded with
 * c-ares (ares_expand_name); the framing around them is ours and minimal.
 */
#ifndef BFBPF_DNS_H
#define BFBPF_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "lib/policy.h"

#define DNS_HEADER_SIZE 12
#define DNS_MAX_UDP_REPLY 1232 /* EDNS payload we answer within (DNS flag day 2020) */
#define DNS_MAX_MESSAGE 65535  /* a TCP message */

#define DNS_TYPE_A 1
#define DNS_TYPE_AAAA 28
#define DNS_TYPE_OPT 41
#define DNS_CLASS_IN 1

#define DNS_RCODE_NOERROR 0
#define DNS_RCODE_FORMERR 1
#define DNS_RCODE_SERVFAIL 2
#define DNS_RCODE_NXDOMAIN 3
#define DNS_RCODE_NOTIMP 4
#define DNS_RCODE_REFUSED 5

struct dns_query {
	uint16_t id;
	bool recursion_desired;
	char name[HOSTNAME_MAX_LENGTH + 2]; /* as expanded; not yet validated as a host name */
	uint16_t qtype;
	uint16_t qclass;
	size_t question_end; /* offset just past the (first) question */
	bool edns;	     /* an OPT record was present */
	uint16_t udp_size;   /* the client's EDNS payload size, or 512 */
};

enum dns_parse_result {
	DNS_PARSE_OK = 0,
	DNS_PARSE_DROP = -1,	/* not even a header, or a response (QR set): say nothing */
	DNS_PARSE_FORMERR = -2, /* a header we can answer FORMERR to */
	DNS_PARSE_NOTIMP = -3,	/* an opcode other than QUERY */
};

/* Parse a query: exactly one question; an OPT record in the additional section is read. */
enum dns_parse_result dns_query_parse(const uint8_t *message, size_t length, struct dns_query *out);

/*
 * A reply with only a header and the question echoed (REFUSED, NXDOMAIN,
 * SERVFAIL, NOERROR without data; FORMERR/NOTIMP with no question when the
 * query could not be parsed that far). Returns its length, or -ENOSPC.
 * query/query_length: the query as received (its header and question are copied).
 */
int dns_reply_rcode(const uint8_t *query, size_t query_length, const struct dns_query *parsed,
		    int rcode, uint8_t *buf, size_t size);

/*
 * A NOERROR reply answering the question with the given addresses: A records
 * for IPv4 (given as ::ffff:a.b.c.d) when qtype is A, AAAA records for the
 * others when qtype is AAAA; addresses of the other family are skipped. The
 * owner name is a compression pointer to the question. If the records do not
 * fit in max_size (the UDP limit), the reply is truncated (TC set, no answers).
 * Returns its length, -ENOSPC, or -EINVAL for inconsistent arguments.
 */
int dns_reply_addresses(const uint8_t *query, size_t query_length, const struct dns_query *parsed,
			const struct in6_addr *addrs, const uint32_t *ttls, size_t count,
			size_t max_size, uint8_t *buf, size_t size);

/* TCP: messages are framed by a 2-byte big-endian length. */
struct dns_tcp_stream {
	uint8_t buffer[2 + DNS_MAX_MESSAGE];
	size_t length;
};

/* Append received bytes (at most the free space; returns how many were taken). */
size_t dns_tcp_feed(struct dns_tcp_stream *stream, const uint8_t *data, size_t length);
/*
 * The next complete message, copied into out (size >= DNS_MAX_MESSAGE) and
 * removed from the stream: returns its length, 0 if none is complete yet.
 * Partial reads and pipelined messages are both handled. A zero length prefix
 * is consumed and gives -EINVAL (close the connection); a message larger than
 * size is consumed and gives -EMSGSIZE.
 */
int dns_tcp_next(struct dns_tcp_stream *stream, uint8_t *out, size_t size);

/* What the responder does with a query, by the policy alone. */
enum dns_decision {
	DNS_DECISION_ANSWER,  /* an allowed name, A or AAAA: resolve, program, answer */
	DNS_DECISION_NODATA,  /* an allowed name, another type: NOERROR, no records */
	DNS_DECISION_REFUSED, /* any other name, or class other than IN */
};
enum dns_decision dns_decide(const struct policy *policy, const struct dns_query *query);

#endif /* BFBPF_DNS_H */
