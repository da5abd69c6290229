/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the TLS ClientHello parser (tls_sni.h) and the HTTP request-head
 * parser (http_host.h) share: the state they work in, the checked name they
 * produce, and the name hash. Header-only, built twice from the same text:
 * by clang -target bpf for the kernel, and by gcc/clang for the cmocka tests
 * and the libFuzzer target, so that the fuzzer and the verifier check the
 * same code.
 *
 * The bound. A flow is judged on its first BFBPF_HELLO_MAX bytes (from stream
 * offset 0), whatever the writes or segments that brought them. Within the
 * bound the parsers answer MORE until the bytes judged are complete; a hello
 * or request head that is not complete within the bound is BAD (fail
 * closed). The names are DNS names: at most BFBPF_NAME_MAX bytes after one
 * trailing dot is dropped, only [a-z0-9-_.] after lowercasing, no empty label.
 *
 * Verifier workarounds (each one is marked "verifier:" where it is used):
 *  - All state lives in struct bfbpf_hello, which the BPF caller keeps in a
 *    map value (per-CPU array or socket storage), never on the stack: a spike
 *    on 6.1 with the loop state on the stack loaded, but judged every hello
 *    malformed. bpf_loop() wants its ctx on the stack: that ctx is a
 *    single pointer to the map value (struct bfbpf_loop_ctx).
 *  - Every loop is a bpf_loop() (kernel 5.17+, so on 6.1) whose callback is
 *    verified once, instead of a bounded loop the verifier walks iteration by
 *    iteration (4096 bytes of hello would exceed its complexity limit). The
 *    callbacks return exactly 0 (go on) or 1 (stop): 6.1 checks that range.
 *  - Every index into buf, hs, name and alt is masked with the buffer's size
 *    (a power of two) at the access, whatever the logic already proved: the
 *    verifier does not follow bounds kept in a map value across a callback,
 *    and clang may reload or reorder a compared register; a mask cannot be
 *    lost. The masks never change a result: each access is first checked
 *    against the real length.
 *  - Names are hashed by a bounded loop of 256 steps (bfbpf_name_hash:
 *    ~10k instructions for the verifier, cheap at run time), and their
 *    suffixes by a bpf_loop (bfbpf_name_suffixes), whose results are in the
 *    map value, not on the stack.
 *  - Names are compared and copied as 32 words of 8 bytes (unrolled, no
 *    loop), which is why the name buffers are 256 bytes, 8-aligned and
 *    zero-filled past the name. A name against a suffix of another
 *    (bfbpf_name_matches, after a hash hit) is compared byte by byte in a
 *    bpf_loop, which the callback of sni.h's lookups may nest in its own:
 *    each callback is verified once.
 */
#ifndef BFBPF_LIB_HELLO_H
#define BFBPF_LIB_HELLO_H

#ifdef __bpf__
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#else
#include "userspace.h"
#endif

struct bfbpf_hello;

/*
 * verifier: bpf_loop() takes its callback's ctx on the stack only
 * (ARG_PTR_TO_STACK_OR_NULL), so the ctx is one pointer on the stack, to
 * the state in the map value; the state itself never is on the stack.
 */
struct bfbpf_loop_ctx {
	struct bfbpf_hello *h;
};

#ifdef __bpf__
#define BFBPF_LOOP(n, cb, hello)                                                                   \
	({                                                                                         \
		struct bfbpf_loop_ctx bfbpf_loop_ctx_ = {.h = (hello)};                            \
		bpf_loop((n), (cb), &bfbpf_loop_ctx_, 0);                                          \
	})
#else
#define BFBPF_LOOP(n, cb, hello)                                                                   \
	({                                                                                         \
		struct bfbpf_loop_ctx bfbpf_loop_ctx_ = {.h = (hello)};                            \
		bfbpf_loop_user((n), (cb), &bfbpf_loop_ctx_);                                      \
	})
#endif
/* The state, in a callback of BFBPF_LOOP. */
#define BFBPF_LOOP_HELLO(ctx) (((struct bfbpf_loop_ctx *)(ctx))->h)

/* Unrolled: the name helpers have no loop for the verifier to walk. */
#ifdef __clang__
#define BFBPF_UNROLL _Pragma("unroll")
#else
#define BFBPF_UNROLL _Pragma("GCC unroll 32")
#endif

#define BFBPF_HELLO_MAX 4096 /* bytes of first flight judged; power of two (masks) */
#define BFBPF_HELLO_MASK (BFBPF_HELLO_MAX - 1)
#define BFBPF_NAME_MAX 253 /* a DNS name's text, without the trailing dot */
#define BFBPF_NAME_BUF 256 /* name + NUL, rounded to a power of two (masks, words) */
#define BFBPF_NAME_MASK (BFBPF_NAME_BUF - 1)
#define BFBPF_NAME_WORDS (BFBPF_NAME_BUF / 8)
/* The suffixes of a name at its label boundaries, itself included: 253 bytes hold 127 labels. */
#define BFBPF_SUFFIX_MAX 128

enum bfbpf_hello_status {
	BFBPF_HELLO_MORE,   /* not complete yet, within the bound: append and parse again */
	BFBPF_HELLO_SNI,    /* a name was found (TLS server_name, HTTP Host): see name */
	BFBPF_HELLO_NO_SNI, /* complete and well formed, without a name */
	BFBPF_HELLO_BAD,    /* cannot be judged: malformed, not TLS/HTTP, or over the bound */
};

/* Internal: a step goes on (not a verdict). */
#define BFBPF_HELLO_GO_ON (-1)

struct bfbpf_hello {
	__u8 buf[BFBPF_HELLO_MAX]; /* the flow's first bytes, from stream offset 0 */
	__u32 len;		   /* valid bytes in buf (the caller appends) */
	__u32 name_len;		   /* on SNI: strlen(name) */
	/* On SNI: the lowercased name, no trailing dot, NUL-filled to the end. */
	char name[BFBPF_NAME_BUF] __attribute__((aligned(8)));

	/* Parser scratch: reset by each parse, which reads buf from offset 0 again. */
	char alt[BFBPF_NAME_BUF] __attribute__((aligned(8))); /* HTTP: absolute-form host */
	__u32 alt_len;
	__u32 verdict;	/* a step's BAD; MORE while none */
	__u32 done;	/* the step loop reached its end (not its bound) */
	__u32 pos;	/* cursor: into buf (records, HTTP), into hs (hello fields) */
	__u32 end;	/* end of the field list walked, in hs */
	__u32 rec_hdr;	/* TLS: bytes seen of the current record's 5-byte header */
	__u32 rec_left; /* TLS: payload bytes left in the current record */
	__u32 hs_len;	/* TLS: handshake bytes reassembled in hs */
	__u32 hs_need;	/* TLS: 4 + the ClientHello's length, once known */
	__u32 sni_off;	/* TLS: server_name extension data in hs; 0: none */
	__u32 sni_len;
	__u32 host_off; /* TLS: the host_name entry's bytes in hs; 0: none */
	__u32 host_len;
	__u32 state; /* HTTP: where in the request head */
	__u32 count; /* HTTP: bytes in word */
	__u32 flags; /* HTTP: BFBPF_HTTP_* */
	__u64 word;  /* HTTP: the token being matched (method, version, header name) */
	/* bfbpf_name_suffixes: the reversed hash of each suffix of name, shortest first, */
	__u64 suffix_hash[BFBPF_SUFFIX_MAX];
	__u8 suffix_len[BFBPF_SUFFIX_MAX]; /* and its length (1..253) */
	__u32 suffix_count;
	__u64 rhash; /* its running hash */
	/* TLS: the handshake bytes, reassembled from the records of type 22. */
	__u8 hs[BFBPF_HELLO_MAX];
};

static __always_inline int bfbpf_name_char(__u8 c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

/*
 * Appends one byte of a name, lowercased; -1: not a name byte, an empty
 * label (leading dot, two dots), or too long. One trailing dot is accepted
 * here (BFBPF_NAME_MAX + 1 bytes) and dropped by bfbpf_name_finish.
 */
static __always_inline int bfbpf_name_push(char *dst, __u32 *dst_len, __u8 c)
{
	__u32 n = *dst_len;

	if (c >= 'A' && c <= 'Z')
		c += 'a' - 'A';
	if (!bfbpf_name_char(c) || n > BFBPF_NAME_MAX)
		return -1;
	/* verifier: masked, although n <= BFBPF_NAME_MAX was just checked. */
	if (c == '.' && (n == 0 || dst[(n - 1) & BFBPF_NAME_MASK] == '.'))
		return -1;
	dst[n & BFBPF_NAME_MASK] = (char)c;
	*dst_len = n + 1;
	return 0;
}

/* Drops one trailing dot and ends the name; -1: empty or too long. */
static __always_inline int bfbpf_name_finish(char *dst, __u32 *dst_len)
{
	__u32 n = *dst_len;

	if (n && dst[(n - 1) & BFBPF_NAME_MASK] == '.')
		n--;
	if (n == 0 || n > BFBPF_NAME_MAX)
		return -1;
	dst[n & BFBPF_NAME_MASK] = 0;
	*dst_len = n;
	return 0;
}

static __always_inline void bfbpf_name_clear(char *dst)
{
	__u64 *w = (__u64 *)dst;

	BFBPF_UNROLL
	for (int i = 0; i < BFBPF_NAME_WORDS; i++)
		w[i] = 0;
}

/* Two names as left by the parser (NUL-filled buffers): equal? No loop. */
static __always_inline int bfbpf_name_equal(const char *a, const char *b)
{
	const __u64 *wa = (const __u64 *)a, *wb = (const __u64 *)b;
	__u64 diff = 0;

	BFBPF_UNROLL
	for (int i = 0; i < BFBPF_NAME_WORDS; i++)
		diff |= wa[i] ^ wb[i];
	return diff == 0;
}

static __always_inline void bfbpf_name_copy(char *dst, const char *src)
{
	__u64 *wd = (__u64 *)dst;
	const __u64 *ws = (const __u64 *)src;

	BFBPF_UNROLL
	for (int i = 0; i < BFBPF_NAME_WORDS; i++)
		wd[i] = ws[i];
}

#define BFBPF_FNV_OFFSET 0xcbf29ce484222325ULL
#define BFBPF_FNV_PRIME 0x100000001b3ULL

/*
 * FNV-1a 64 over the lowercased bytes of name[0..len): the key userspace
 * computes for the maps it fills, and the kernel for the name it parsed.
 * Not collision-resistant against a chosen name: a map found by this hash
 * must hold the full name and the caller compares it (bfbpf_name_suffix_is,
 * bfbpf_name_equal).
 * verifier: a bounded loop of at most BFBPF_NAME_BUF steps (cheap to walk),
 * the index masked.
 */
static __always_inline __u64 bfbpf_name_hash(const char *name, __u32 len)
{
	__u64 hash = BFBPF_FNV_OFFSET;

	for (__u32 i = 0; i < BFBPF_NAME_BUF; i++) {
		__u8 c;

		if (i >= len)
			break;
		c = (__u8)name[i & BFBPF_NAME_MASK];
		if (c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		hash ^= c;
		hash *= BFBPF_FNV_PRIME;
	}
	return hash;
}

/*
 * FNV-1a 64 over the lowercased bytes of name[0..len) taken from the last to
 * the first: the key of a name whose suffixes the kernel looks up (a
 * wildcard, a parent domain), because one pass from the end of a name meets
 * the hash of every suffix on the way (bfbpf_name_suffixes). Userspace uses
 * this function; the kernel uses bfbpf_name_suffixes.
 */
static __always_inline __u64 bfbpf_name_rhash(const char *name, __u32 len)
{
	__u64 hash = BFBPF_FNV_OFFSET;

	for (__u32 i = 0; i < BFBPF_NAME_BUF; i++) {
		__u8 c;

		if (i >= len)
			break;
		c = (__u8)name[(len - 1 - i) & BFBPF_NAME_MASK];
		if (c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		hash ^= c;
		hash *= BFBPF_FNV_PRIME;
	}
	return hash;
}

/* bpf_loop callback: one byte of the name, from its end. */
static int bfbpf_name_suffix_step(__u32 index, void *ctx)
{
	struct bfbpf_hello *h = BFBPF_LOOP_HELLO(ctx);
	__u32 len = h->name_len, pos;

	if (index >= len || len > BFBPF_NAME_MAX)
		return 1;
	pos = len - 1 - index;
	/* The parser's names are lowercase already. verifier: masked. */
	h->rhash = (h->rhash ^ (__u8)h->name[pos & BFBPF_NAME_MASK]) * BFBPF_FNV_PRIME;
	if (pos == 0 || h->name[(pos - 1) & BFBPF_NAME_MASK] == '.') {
		if (h->suffix_count >= BFBPF_SUFFIX_MAX)
			return 1;
		h->suffix_hash[h->suffix_count & (BFBPF_SUFFIX_MAX - 1)] = h->rhash;
		h->suffix_len[h->suffix_count & (BFBPF_SUFFIX_MAX - 1)] = (__u8)(index + 1);
		h->suffix_count++;
	}
	return 0;
}

/*
 * After SNI: h->suffix_hash[0..suffix_count) holds bfbpf_name_rhash of every
 * suffix of h->name that starts a label, shortest first, the whole name last
 * ("test", "wild.test", "a.wild.test"), and h->suffix_len the length of each.
 * One bpf_loop over the name's bytes.
 */
static __always_inline void bfbpf_name_suffixes(struct bfbpf_hello *h)
{
	h->suffix_count = 0;
	h->rhash = BFBPF_FNV_OFFSET;
	BFBPF_LOOP(BFBPF_NAME_MAX, bfbpf_name_suffix_step, h);
}

/* bpf_loop callback: one byte of the candidate in h->alt against the end of h->name. */
static int bfbpf_name_match_step(__u32 index, void *ctx)
{
	struct bfbpf_hello *h = BFBPF_LOOP_HELLO(ctx);
	__u32 len = h->alt_len;

	if (index >= len) {
		h->done = 1;
		return 1;
	}
	/* verifier: masked; bfbpf_name_matches checked len <= name_len. */
	if (h->name[(h->name_len - len + index) & BFBPF_NAME_MASK] !=
	    h->alt[index & BFBPF_NAME_MASK])
		return 1;
	return 0;
}

/*
 * Is entry (a lowercase name of entry_len bytes, in a buffer of
 * BFBPF_NAME_BUF bytes: a map value's) h->name itself, or a suffix of it at
 * a label boundary ("wild.test" of "a.wild.test", not of "awild.test")?
 * Byte by byte: what confirms a lookup by hash, which a chosen name can
 * collide with (FNV is no defence against an attacker). Uses h->alt and
 * h->done, free once a parse has its verdict.
 */
static __always_inline int bfbpf_name_matches(struct bfbpf_hello *h, const char *entry,
					      __u32 entry_len)
{
	__u32 n = h->name_len;

	if (entry_len == 0 || entry_len > BFBPF_NAME_MAX || n > BFBPF_NAME_MAX || entry_len > n)
		return 0;
	if (entry_len < n && h->name[(n - entry_len - 1) & BFBPF_NAME_MASK] != '.')
		return 0;
	bfbpf_name_copy(h->alt, entry);
	h->alt_len = entry_len;
	h->done = 0;
	/* One step more than the longest entry: the step past its end says done. */
	BFBPF_LOOP(BFBPF_NAME_MAX + 1, bfbpf_name_match_step, h);
	return h->done == 1;
}

/*
 * Is entry (entry_len bytes, in a NUL-filled buffer of BFBPF_NAME_BUF bytes: a
 * map value's) exactly the suffix of h->name whose hash is
 * h->suffix_hash[at] (bfbpf_name_suffixes)? Of that suffix's length, and equal
 * byte for byte: what turns a hit of a lookup by that hash into an allowance.
 * A longer or shorter entry whose hash collides is no match, even when it is
 * another suffix of the name (it may allow the name itself but not its
 * subdomains, or the reverse). Uses h->alt and h->done, as bfbpf_name_matches.
 */
static __always_inline int bfbpf_name_suffix_is(struct bfbpf_hello *h, __u32 at, const char *entry,
						__u32 entry_len)
{
	__u32 count = h->suffix_count;

	if (at >= count || count > BFBPF_SUFFIX_MAX)
		return 0;
	/* verifier: masked, although at < count <= BFBPF_SUFFIX_MAX was just checked. */
	if (entry_len != h->suffix_len[at & (BFBPF_SUFFIX_MAX - 1)])
		return 0;
	return bfbpf_name_matches(h, entry, entry_len);
}

#endif /* BFBPF_LIB_HELLO_H */
