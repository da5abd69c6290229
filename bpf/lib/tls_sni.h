/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The server_name of a TLS ClientHello, from a flow's first bytes
 * (struct bfbpf_hello, hello.h: the bound, the verifier workarounds).
 *
 * bfbpf_hello_parse(h) reads h->buf[0..h->len) from offset 0 on every call
 * (the caller appends and calls again while it answers MORE) and says:
 *  MORE    the ClientHello is not complete yet, and may still be within the bound;
 *  SNI     a well-formed ClientHello with one host_name: h->name, h->name_len;
 *  NO_SNI  a well-formed ClientHello without a host_name;
 *  BAD     anything else: not a handshake record (RFC 8446 5.1: handshake
 *          records are not interleaved with other types), a zero-length or
 *          over-long record, not a ClientHello, a length that disagrees
 *          with its container, a ClientHello that does not end within the
 *          first BFBPF_HELLO_MAX bytes, two server_name extensions, two
 *          host_name entries, or a name that is not a DNS name.
 *
 * What the RFCs allow is parsed: the ClientHello reassembled from as many
 * handshake records as it takes (RFC 8446 5.1), in as many writes as the
 * client made; any size up to the bound (post-quantum key shares make 1.7 KB);
 * server_name anywhere among the extensions, padding among them; odd case
 * (lowercased) and one trailing dot (dropped). Several names: RFC 6066 3
 * forbids two names of the same type, and a server may honour either, so
 * a second host_name is BAD (agreeing or not); entries of other types are
 * skipped. ECH (encrypted_client_hello): the outer ClientHello is what is
 * on the wire, and its server_name is what is judged; nothing special.
 *
 * A final verdict only depends on the bytes up to the ClientHello's end:
 * more bytes never change it (the fuzzer checks this on prefixes).
 */
#ifndef BFBPF_LIB_TLS_SNI_H
#define BFBPF_LIB_TLS_SNI_H

#include "hello.h"

#define BFBPF_TLS_HANDSHAKE 22
#define BFBPF_TLS_CLIENT_HELLO 1
#define BFBPF_TLS_RECORD_MAX 16384 /* 2^14: a plaintext record's largest fragment */
#define BFBPF_TLS_EXT_SERVER_NAME 0
#define BFBPF_TLS_HOST_NAME 0

/* verifier: every hs index masked at the access (hello.h). */
static __always_inline __u32 tls_hs8(const struct bfbpf_hello *h, __u32 off)
{
	return h->hs[off & BFBPF_HELLO_MASK];
}

static __always_inline __u32 tls_hs16(const struct bfbpf_hello *h, __u32 off)
{
	return tls_hs8(h, off) << 8 | tls_hs8(h, off + 1);
}

static __always_inline int tls_bad(struct bfbpf_hello *h)
{
	h->verdict = BFBPF_HELLO_BAD;
	return 1;
}

/* One byte of a record header; 1: stop (BAD). */
static __always_inline int tls_record_header_byte(struct bfbpf_hello *h, __u8 b)
{
	switch (h->rec_hdr) {
	case 0: /* content type */
		if (b != BFBPF_TLS_HANDSHAKE)
			return tls_bad(h);
		break;
	case 1: /* legacy_record_version: 3.x */
		if (b != 3)
			return tls_bad(h);
		break;
	case 2:
		if (b > 4)
			return tls_bad(h);
		break;
	case 3:
		h->rec_left = (__u32)b << 8;
		break;
	default:
		h->rec_left |= b;
		/* RFC 8446 5.1: no zero-length handshake fragments. */
		if (h->rec_left == 0 || h->rec_left > BFBPF_TLS_RECORD_MAX)
			return tls_bad(h);
	}
	h->rec_hdr++;
	return 0;
}

/* One payload byte: appended to the handshake bytes; 1: stop (complete or BAD). */
static __always_inline int tls_record_payload_byte(struct bfbpf_hello *h, __u8 b)
{
	__u32 n = h->hs_len;

	if (n >= BFBPF_HELLO_MAX)
		return tls_bad(h);
	h->hs[n & BFBPF_HELLO_MASK] = b; /* verifier: masked */
	h->hs_len = ++n;
	if (--h->rec_left == 0)
		h->rec_hdr = 0; /* the next record's header follows */
	if (n == 1 && b != BFBPF_TLS_CLIENT_HELLO)
		return tls_bad(h);
	if (n == 4) {
		h->hs_need = 4 + (tls_hs8(h, 1) << 16 | tls_hs16(h, 2));
		/* At least one record header precedes: longer cannot end within the bound. */
		if (h->hs_need > BFBPF_HELLO_MAX - 5)
			return tls_bad(h);
	}
	if (n >= 4 && n == h->hs_need) {
		h->done = 1;
		return 1;
	}
	return 0;
}

/* bpf_loop callback: one byte of buf through the record layer. */
static int tls_record_step(__u32 index, void *ctx)
{
	struct bfbpf_hello *h = BFBPF_LOOP_HELLO(ctx);
	__u32 pos = h->pos;
	__u8 b;

	(void)index;
	if (pos >= h->len)
		return 1;		    /* no more bytes: MORE, unless at the bound */
	b = h->buf[pos & BFBPF_HELLO_MASK]; /* verifier: masked */
	h->pos = pos + 1;
	if (h->rec_hdr < 5)
		return tls_record_header_byte(h, b);
	return tls_record_payload_byte(h, b);
}

/*
 * The fixed fields of the ClientHello in hs[0..hs_need): up to its
 * extensions, whose list is left in h->pos..h->end. A verdict, or GO_ON.
 */
static __always_inline int tls_hello_fields(struct bfbpf_hello *h)
{
	__u32 end = h->hs_need, c = 4 + 2 + 32, n; /* header, legacy_version, random */

	if (c + 1 > end || tls_hs8(h, 4) != 3)
		return BFBPF_HELLO_BAD;
	n = tls_hs8(h, c); /* legacy_session_id */
	if (n > 32)
		return BFBPF_HELLO_BAD;
	c += 1 + n;
	if (c + 2 > end)
		return BFBPF_HELLO_BAD;
	n = tls_hs16(h, c); /* cipher_suites */
	if (n < 2 || (n & 1))
		return BFBPF_HELLO_BAD;
	c += 2 + n;
	if (c + 1 > end)
		return BFBPF_HELLO_BAD;
	n = tls_hs8(h, c); /* legacy_compression_methods */
	if (n < 1)
		return BFBPF_HELLO_BAD;
	c += 1 + n;
	if (c == end)
		return BFBPF_HELLO_NO_SNI; /* no extensions at all (before TLS 1.2: allowed) */
	if (c + 2 > end)
		return BFBPF_HELLO_BAD;
	n = tls_hs16(h, c);
	c += 2;
	if (c + n != end) /* the extensions end where the ClientHello ends */
		return BFBPF_HELLO_BAD;
	h->pos = c;
	h->end = end;
	return BFBPF_HELLO_GO_ON;
}

/* bpf_loop callback: one extension; remembers the server_name extension. */
static int tls_extension_step(__u32 index, void *ctx)
{
	struct bfbpf_hello *h = BFBPF_LOOP_HELLO(ctx);
	__u32 c = h->pos, end = h->end, type, len;

	(void)index;
	if (c == end) {
		h->done = 1;
		return 1;
	}
	if (c + 4 > end)
		return tls_bad(h);
	type = tls_hs16(h, c);
	len = tls_hs16(h, c + 2);
	if (c + 4 + len > end)
		return tls_bad(h);
	if (type == BFBPF_TLS_EXT_SERVER_NAME) {
		if (h->sni_off) /* RFC 8446 4.2: one extension of a type */
			return tls_bad(h);
		h->sni_off = c + 4;
		h->sni_len = len;
	}
	h->pos = c + 4 + len;
	return 0;
}

/* bpf_loop callback: one ServerName entry; remembers the host_name. */
static int tls_server_name_step(__u32 index, void *ctx)
{
	struct bfbpf_hello *h = BFBPF_LOOP_HELLO(ctx);
	__u32 c = h->pos, end = h->end, type, len;

	(void)index;
	if (c == end) {
		h->done = 1;
		return 1;
	}
	if (c + 3 > end)
		return tls_bad(h);
	type = tls_hs8(h, c);
	len = tls_hs16(h, c + 1);
	if (c + 3 + len > end)
		return tls_bad(h);
	if (type == BFBPF_TLS_HOST_NAME) {
		if (h->host_off) /* RFC 6066 3: one name per type */
			return tls_bad(h);
		h->host_off = c + 3;
		h->host_len = len;
	}
	h->pos = c + 3 + len;
	return 0;
}

/* bpf_loop callback: one byte of the host_name into h->name. */
static int tls_name_step(__u32 index, void *ctx)
{
	struct bfbpf_hello *h = BFBPF_LOOP_HELLO(ctx);

	if (index >= h->host_len) {
		h->done = 1;
		return 1;
	}
	if (bfbpf_name_push(h->name, &h->name_len, tls_hs8(h, h->host_off + index)))
		return tls_bad(h);
	return 0;
}

/* Runs one step loop over the list h->pos..h->end; 0: it reached its end. */
static __always_inline int tls_walk(struct bfbpf_hello *h, int (*step)(__u32, void *), __u32 max)
{
	h->done = 0;
	BFBPF_LOOP(max, step, h);
	return h->verdict == BFBPF_HELLO_BAD || !h->done ? -1 : 0;
}

/* The server_name extension's list, then its host_name. */
static __always_inline int tls_server_name(struct bfbpf_hello *h)
{
	__u32 off = h->sni_off, len = h->sni_len;

	/* An empty extension is a server's; a client's names at least one entry. */
	if (len < 2 + 3 || tls_hs16(h, off) != len - 2)
		return BFBPF_HELLO_BAD;
	h->pos = off + 2;
	h->end = off + len;
	if (tls_walk(h, tls_server_name_step, BFBPF_HELLO_MAX / 3 + 1))
		return BFBPF_HELLO_BAD;
	if (!h->host_off)
		return BFBPF_HELLO_NO_SNI; /* names of other types only */
	if (h->host_len == 0 || h->host_len > BFBPF_NAME_MAX + 1)
		return BFBPF_HELLO_BAD;
	if (tls_walk(h, tls_name_step, BFBPF_NAME_MAX + 2))
		return BFBPF_HELLO_BAD;
	if (bfbpf_name_finish(h->name, &h->name_len))
		return BFBPF_HELLO_BAD;
	return BFBPF_HELLO_SNI;
}

static __always_inline void tls_reset(struct bfbpf_hello *h)
{
	h->verdict = BFBPF_HELLO_MORE;
	h->done = 0;
	h->pos = 0;
	h->end = 0;
	h->rec_hdr = 0;
	h->rec_left = 0;
	h->hs_len = 0;
	h->hs_need = 0;
	h->sni_off = 0;
	h->sni_len = 0;
	h->host_off = 0;
	h->host_len = 0;
	h->name_len = 0;
	h->alt_len = 0;
	bfbpf_name_clear(h->name);
}

/* The verdict on h->buf[0..h->len): enum bfbpf_hello_status. */
static __always_inline int bfbpf_hello_parse(struct bfbpf_hello *h)
{
	int verdict;

	tls_reset(h);
	if (h->len > BFBPF_HELLO_MAX)
		return BFBPF_HELLO_BAD;
	BFBPF_LOOP(BFBPF_HELLO_MAX, tls_record_step, h);
	if (h->verdict == BFBPF_HELLO_BAD)
		return BFBPF_HELLO_BAD;
	if (!h->done) /* out of bytes: the bound says whether more may come */
		return h->len >= BFBPF_HELLO_MAX ? BFBPF_HELLO_BAD : BFBPF_HELLO_MORE;
	verdict = tls_hello_fields(h);
	if (verdict != BFBPF_HELLO_GO_ON)
		return verdict;
	/* Each extension takes at least 4 bytes: the bound on their number. */
	if (tls_walk(h, tls_extension_step, BFBPF_HELLO_MAX / 4 + 1))
		return BFBPF_HELLO_BAD;
	if (!h->sni_off)
		return BFBPF_HELLO_NO_SNI;
	return tls_server_name(h);
}

#endif /* BFBPF_LIB_TLS_SNI_H */
