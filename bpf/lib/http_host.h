/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The host of a plain HTTP/1.x request, from a flow's first bytes (struct
 * bfbpf_hello, hello.h: the bound, the verifier workarounds).
 *
 * bfbpf_http_host_parse(h) reads h->buf[0..h->len) from offset 0 on every
 * call, one byte per bpf_loop step through a state machine, and says:
 *  MORE    the request head (up to its blank line) is not complete yet;
 *  SNI     a complete head naming one host: h->name (lowercased, port and
 *          one trailing dot dropped), from the Host header, or from an
 *          absolute-form or authority-form (CONNECT) target; when both are
 *          there they must agree;
 *  NO_SNI  a complete head that names no host (HTTP/1.0 without Host);
 *  BAD     anything else: an unknown method, a version other than HTTP/1.0
 *          or 1.1, a bare LF or a folded line, a control byte, two Host
 *          headers, a host that is not a DNS name (an address literal, a
 *          userinfo part), a target host that disagrees with Host, or a head
 *          that does not end within the first BFBPF_HELLO_MAX bytes.
 * Strict where servers differ (line endings, folding, whitespace before the
 * colon): what one server might read as a second Host is refused.
 * Only the first request head is judged: a later request on the same
 * connection (keep-alive, pipelining, an h2c upgrade) may name another host;
 * closing that is the caller's business, not this parser's.
 */
#ifndef BFBPF_LIB_HTTP_HOST_H
#define BFBPF_LIB_HTTP_HOST_H

#include "hello.h"

enum bfbpf_http_state {
	BFBPF_HTTP_METHOD,
	BFBPF_HTTP_TARGET, /* first byte of the request target */
	BFBPF_HTTP_SCHEME, /* absolute-form: "http" or "https" */
	BFBPF_HTTP_SLASH1, /* "://" */
	BFBPF_HTTP_SLASH2,
	BFBPF_HTTP_TARGET_HOST, /* absolute-form or authority-form host, into alt */
	BFBPF_HTTP_TARGET_PORT,
	BFBPF_HTTP_TARGET_REST, /* path and query: skipped */
	BFBPF_HTTP_VERSION,
	BFBPF_HTTP_LINE_LF,  /* CR seen, at the end of a line */
	BFBPF_HTTP_LINE,     /* the start of a header line */
	BFBPF_HTTP_FIELD,    /* a header name */
	BFBPF_HTTP_HOST_OWS, /* after "Host:" */
	BFBPF_HTTP_HOST,     /* the Host value, into name */
	BFBPF_HTTP_HOST_PORT,
	BFBPF_HTTP_HOST_TAIL, /* whitespace after the Host value */
	BFBPF_HTTP_VALUE,     /* another header's value: skipped */
	BFBPF_HTTP_END_LF,    /* CR of the blank line seen */
};

/* h->flags */
#define BFBPF_HTTP_CONNECT (1U << 0)  /* CONNECT: the target is host:port */
#define BFBPF_HTTP_HAS_HOST (1U << 1) /* a Host header was seen */
#define BFBPF_HTTP_HAS_ALT (1U << 2)  /* the target named a host */

/* The tokens matched, as big-endian words of their bytes. */
#define BFBPF_HTTP_W_GET 0x474554ULL
#define BFBPF_HTTP_W_PUT 0x505554ULL
#define BFBPF_HTTP_W_POST 0x504f5354ULL
#define BFBPF_HTTP_W_HEAD 0x48454144ULL
#define BFBPF_HTTP_W_PATCH 0x5041544348ULL
#define BFBPF_HTTP_W_DELETE 0x44454c455445ULL
#define BFBPF_HTTP_W_OPTIONS 0x4f5054494f4e53ULL
#define BFBPF_HTTP_W_TRACE 0x5452414345ULL
#define BFBPF_HTTP_W_CONNECT 0x434f4e4e454354ULL
#define BFBPF_HTTP_W_HTTP10 0x485454502f312e30ULL
#define BFBPF_HTTP_W_HTTP11 0x485454502f312e31ULL
#define BFBPF_HTTP_W_HOST 0x686f7374ULL	   /* lowercased */
#define BFBPF_HTTP_W_HTTP 0x68747470ULL	   /* lowercased */
#define BFBPF_HTTP_W_HTTPS 0x6874747073ULL /* lowercased */

static __always_inline int http_bad(struct bfbpf_hello *h)
{
	h->verdict = BFBPF_HELLO_BAD;
	return 1;
}

static __always_inline int http_go(struct bfbpf_hello *h, __u32 state)
{
	h->state = state;
	h->word = 0;
	h->count = 0;
	return 0;
}

/* Adds a byte to the token word; -1: longer than 8 bytes. */
static __always_inline int http_word_add(struct bfbpf_hello *h, __u8 c)
{
	if (h->count >= 8)
		return -1;
	h->word = h->word << 8 | c;
	h->count++;
	return 0;
}

static __always_inline int http_lower(__u8 c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* RFC 9110 5.6.2 tchar. */
static __always_inline int http_tchar(__u8 c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '!' || c == '#' || c == '$' || c == '%' || c == '&' || c == '\'' || c == '*' ||
	       c == '+' || c == '-' || c == '.' || c == '^' || c == '_' || c == '`' || c == '|' ||
	       c == '~';
}

static __always_inline int http_known_method(__u64 w)
{
	return w == BFBPF_HTTP_W_GET || w == BFBPF_HTTP_W_PUT || w == BFBPF_HTTP_W_POST ||
	       w == BFBPF_HTTP_W_HEAD || w == BFBPF_HTTP_W_PATCH || w == BFBPF_HTTP_W_DELETE ||
	       w == BFBPF_HTTP_W_OPTIONS || w == BFBPF_HTTP_W_TRACE || w == BFBPF_HTTP_W_CONNECT;
}

static __always_inline int http_method_byte(struct bfbpf_hello *h, __u8 c)
{
	if (c == ' ') {
		if (!http_known_method(h->word))
			return http_bad(h);
		if (h->word == BFBPF_HTTP_W_CONNECT)
			h->flags |= BFBPF_HTTP_CONNECT;
		return http_go(h, BFBPF_HTTP_TARGET);
	}
	if (c < 'A' || c > 'Z' || http_word_add(h, c))
		return http_bad(h);
	return 0;
}

/* The first byte of the target: origin-form, asterisk, absolute or authority. */
static __always_inline int http_target_byte(struct bfbpf_hello *h, __u8 c)
{
	if (h->flags & BFBPF_HTTP_CONNECT) {
		h->flags |= BFBPF_HTTP_HAS_ALT;
		h->state = BFBPF_HTTP_TARGET_HOST;
		return bfbpf_name_push(h->alt, &h->alt_len, c) ? http_bad(h) : 0;
	}
	if (c == '/' || c == '*')
		return http_go(h, BFBPF_HTTP_TARGET_REST);
	h->state = BFBPF_HTTP_SCHEME;
	return http_word_add(h, http_lower(c)) ? http_bad(h) : 0;
}

/* Where the target's host (absolute-form, authority-form) ends. */
static __always_inline int http_target_host_byte(struct bfbpf_hello *h, __u8 c)
{
	__u32 next;

	if (c == ' ')
		next = BFBPF_HTTP_VERSION;
	else if (c == ':')
		next = BFBPF_HTTP_TARGET_PORT;
	else if (c == '/' || c == '?' || c == '#')
		next = BFBPF_HTTP_TARGET_REST;
	else /* userinfo ('@'), an IPv6 literal ('['), or any other byte: push refuses */
		return bfbpf_name_push(h->alt, &h->alt_len, c) ? http_bad(h) : 0;
	if (bfbpf_name_finish(h->alt, &h->alt_len))
		return http_bad(h);
	return http_go(h, next);
}

static __always_inline int http_request_line_byte(struct bfbpf_hello *h, __u8 c)
{
	switch (h->state) {
	case BFBPF_HTTP_METHOD:
		return http_method_byte(h, c);
	case BFBPF_HTTP_TARGET:
		return http_target_byte(h, c);
	case BFBPF_HTTP_SCHEME:
		if (c != ':')
			return http_word_add(h, http_lower(c)) ? http_bad(h) : 0;
		if (h->word != BFBPF_HTTP_W_HTTP && h->word != BFBPF_HTTP_W_HTTPS)
			return http_bad(h);
		return http_go(h, BFBPF_HTTP_SLASH1);
	case BFBPF_HTTP_SLASH1:
	case BFBPF_HTTP_SLASH2:
		if (c != '/')
			return http_bad(h);
		h->flags |= BFBPF_HTTP_HAS_ALT;
		return http_go(h, h->state == BFBPF_HTTP_SLASH1 ? BFBPF_HTTP_SLASH2
								: BFBPF_HTTP_TARGET_HOST);
	case BFBPF_HTTP_TARGET_HOST:
		return http_target_host_byte(h, c);
	case BFBPF_HTTP_TARGET_PORT:
		if (c == ' ')
			return http_go(h, BFBPF_HTTP_VERSION);
		if (c == '/' || c == '?' || c == '#')
			return http_go(h, BFBPF_HTTP_TARGET_REST);
		return c >= '0' && c <= '9' ? 0 : http_bad(h);
	case BFBPF_HTTP_TARGET_REST:
		if (c == ' ')
			return http_go(h, BFBPF_HTTP_VERSION);
		return c < 0x21 || c == 0x7f ? http_bad(h) : 0;
	default: /* BFBPF_HTTP_VERSION */
		if (c != '\r')
			return http_word_add(h, c) ? http_bad(h) : 0;
		if (h->word != BFBPF_HTTP_W_HTTP10 && h->word != BFBPF_HTTP_W_HTTP11)
			return http_bad(h);
		return http_go(h, BFBPF_HTTP_LINE_LF);
	}
}

/* A header name: matched against "host" (the first 8 bytes, lowercased). */
static __always_inline int http_field_byte(struct bfbpf_hello *h, __u8 c)
{
	if (c == ':') {
		if (h->count != 4 || h->word != BFBPF_HTTP_W_HOST)
			return http_go(h, BFBPF_HTTP_VALUE);
		if (h->flags & BFBPF_HTTP_HAS_HOST) /* a second Host: which one counts? */
			return http_bad(h);
		h->flags |= BFBPF_HTTP_HAS_HOST;
		return http_go(h, BFBPF_HTTP_HOST_OWS);
	}
	if (!http_tchar(c)) /* whitespace before the colon included (RFC 9112 5.1) */
		return http_bad(h);
	if (h->count < 8)
		h->word = h->word << 8 | http_lower(c);
	h->count++;
	return 0;
}

/* The end of the Host value: its name is complete. */
static __always_inline int http_host_end(struct bfbpf_hello *h, __u8 c, __u32 next)
{
	if (bfbpf_name_finish(h->name, &h->name_len))
		return http_bad(h);
	return http_go(h, c == '\r' ? BFBPF_HTTP_LINE_LF : next);
}

static __always_inline int http_host_byte(struct bfbpf_hello *h, __u8 c)
{
	switch (h->state) {
	case BFBPF_HTTP_HOST_OWS:
		if (c == ' ' || c == '\t')
			return 0;
		if (c == '\r') /* an empty Host */
			return http_bad(h);
		h->state = BFBPF_HTTP_HOST;
		return bfbpf_name_push(h->name, &h->name_len, c) ? http_bad(h) : 0;
	case BFBPF_HTTP_HOST:
		if (c == ':')
			return http_host_end(h, c, BFBPF_HTTP_HOST_PORT);
		if (c == ' ' || c == '\t' || c == '\r')
			return http_host_end(h, c, BFBPF_HTTP_HOST_TAIL);
		return bfbpf_name_push(h->name, &h->name_len, c) ? http_bad(h) : 0;
	case BFBPF_HTTP_HOST_PORT:
		if (c == ' ' || c == '\t')
			return http_go(h, BFBPF_HTTP_HOST_TAIL);
		if (c == '\r')
			return http_go(h, BFBPF_HTTP_LINE_LF);
		return c >= '0' && c <= '9' ? 0 : http_bad(h);
	default: /* BFBPF_HTTP_HOST_TAIL */
		if (c == '\r')
			return http_go(h, BFBPF_HTTP_LINE_LF);
		return c == ' ' || c == '\t' ? 0 : http_bad(h);
	}
}

static __always_inline int http_header_byte(struct bfbpf_hello *h, __u8 c)
{
	switch (h->state) {
	case BFBPF_HTTP_LINE_LF:
		return c == '\n' ? http_go(h, BFBPF_HTTP_LINE) : http_bad(h);
	case BFBPF_HTTP_LINE:
		if (c == '\r')
			return http_go(h, BFBPF_HTTP_END_LF);
		/* A folded line (obs-fold) or anything but a name: refused. */
		h->state = BFBPF_HTTP_FIELD;
		return http_field_byte(h, c);
	case BFBPF_HTTP_FIELD:
		return http_field_byte(h, c);
	case BFBPF_HTTP_VALUE:
		if (c == '\r')
			return http_go(h, BFBPF_HTTP_LINE_LF);
		/* RFC 9110 5.5: no NUL, CR or LF in a value; HTAB allowed. */
		return (c < 0x20 && c != '\t') || c == 0x7f ? http_bad(h) : 0;
	case BFBPF_HTTP_END_LF:
		if (c != '\n')
			return http_bad(h);
		h->done = 1;
		return 1;
	default:
		return http_host_byte(h, c);
	}
}

/* bpf_loop callback: one byte of buf through the state machine. */
static int http_step(__u32 index, void *ctx)
{
	struct bfbpf_hello *h = BFBPF_LOOP_HELLO(ctx);
	__u32 pos = h->pos;
	__u8 c;

	(void)index;
	if (pos >= h->len)
		return 1;
	c = h->buf[pos & BFBPF_HELLO_MASK]; /* verifier: masked */
	h->pos = pos + 1;
	if (h->state < BFBPF_HTTP_LINE_LF)
		return http_request_line_byte(h, c);
	return http_header_byte(h, c);
}

static __always_inline void http_reset(struct bfbpf_hello *h)
{
	h->verdict = BFBPF_HELLO_MORE;
	h->done = 0;
	h->pos = 0;
	h->state = BFBPF_HTTP_METHOD;
	h->word = 0;
	h->count = 0;
	h->flags = 0;
	h->name_len = 0;
	h->alt_len = 0;
	bfbpf_name_clear(h->name);
	bfbpf_name_clear(h->alt);
}

/* The verdict on h->buf[0..h->len): enum bfbpf_hello_status. */
static __always_inline int bfbpf_http_host_parse(struct bfbpf_hello *h)
{
	http_reset(h);
	if (h->len > BFBPF_HELLO_MAX)
		return BFBPF_HELLO_BAD;
	BFBPF_LOOP(BFBPF_HELLO_MAX, http_step, h);
	if (h->verdict == BFBPF_HELLO_BAD)
		return BFBPF_HELLO_BAD;
	if (!h->done)
		return h->len >= BFBPF_HELLO_MAX ? BFBPF_HELLO_BAD : BFBPF_HELLO_MORE;
	if (!(h->flags & BFBPF_HTTP_HAS_ALT))
		return h->flags & BFBPF_HTTP_HAS_HOST ? BFBPF_HELLO_SNI : BFBPF_HELLO_NO_SNI;
	/* The target names a host: RFC 9112 3.2.2 has servers use it, not Host. */
	if (!(h->flags & BFBPF_HTTP_HAS_HOST)) {
		bfbpf_name_copy(h->name, h->alt);
		h->name_len = h->alt_len;
		return BFBPF_HELLO_SNI;
	}
	return bfbpf_name_equal(h->name, h->alt) ? BFBPF_HELLO_SNI : BFBPF_HELLO_BAD;
}

#endif /* BFBPF_LIB_HTTP_HOST_H */
