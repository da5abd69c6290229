// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target of the shared TLS and HTTP parsers (bpf/lib/tls_sni.h,
 * bpf/lib/http_host.h), corpus tests/fuzz/corpus/hello. Each input goes
 * through both parsers, and the invariants the kernel relies on are checked:
 * a verdict is one of the four; a name is a lowercase DNS name within the
 * bound, NUL-filled to the end of its buffer (bfbpf_name_equal compares
 * whole buffers) with one suffix hash per label; a parse again gives the same; a prefix gives MORE
 * or the same final verdict and name; bytes appended after a final verdict change nothing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../bpf/lib/tls_sni.h"
#include "../../bpf/lib/http_host.h"

static struct bfbpf_hello fuzz_hello, fuzz_again;

static int fuzz_parse(struct bfbpf_hello *h, int http, const uint8_t *data, size_t size)
{
	if (size > BFBPF_HELLO_MAX)
		size = BFBPF_HELLO_MAX;
	memset(h, 0, sizeof(*h));
	memcpy(h->buf, data, size);
	h->len = (__u32)size;
	return http ? bfbpf_http_host_parse(h) : bfbpf_hello_parse(h);
}

static void fuzz_check_name(const struct bfbpf_hello *h)
{
	__u32 i;

	if (h->name_len == 0 || h->name_len > BFBPF_NAME_MAX || strlen(h->name) != h->name_len)
		abort();
	if (h->name[0] == '.' || h->name[h->name_len - 1] == '.' || strstr(h->name, ".."))
		abort();
	for (i = 0; i < h->name_len; i++)
		if (!bfbpf_name_char((__u8)h->name[i]))
			abort();
	for (i = h->name_len; i < BFBPF_NAME_BUF; i++)
		if (h->name[i])
			abort();
}

/* One suffix hash per label, the whole name's last; bfbpf_name_matches on every suffix. */
static void fuzz_check_suffixes(struct bfbpf_hello *h)
{
	__u32 i, labels = 1;

	for (i = 0; i < h->name_len; i++)
		labels += h->name[i] == '.';
	bfbpf_name_suffixes(h);
	if (h->suffix_count != labels ||
	    h->suffix_hash[labels - 1] != bfbpf_name_rhash(h->name, h->name_len))
		abort();
	/* Each suffix confirms its own hash hit (bfbpf_name_suffix_is), not its neighbour's. */
	for (i = 0; i < labels; i++) {
		static char entry[BFBPF_NAME_BUF];
		__u32 n = h->suffix_len[i];

		if (n == 0 || n > h->name_len || (i && n <= h->suffix_len[i - 1]))
			abort();
		memset(entry, 0, sizeof(entry));
		memcpy(entry, h->name + h->name_len - n, n);
		if (h->suffix_hash[i] != bfbpf_name_rhash(entry, n) ||
		    !bfbpf_name_suffix_is(h, i, entry, n) ||
		    (i + 1 < labels && bfbpf_name_suffix_is(h, i + 1, entry, n)))
			abort();
	}
	/* Each suffix at a label boundary matches the name; the name minus its first byte does not.
	 */
	for (i = 0; i < h->name_len; i++) {
		static char entry[BFBPF_NAME_BUF];
		int boundary = i == 0 || h->name[i - 1] == '.';

		memset(entry, 0, sizeof(entry));
		memcpy(entry, h->name + i, h->name_len - i);
		if (bfbpf_name_matches(h, entry, h->name_len - i) != boundary)
			abort();
	}
}

/* A final verdict of fewer bytes must be the verdict of all of them. */
static void fuzz_check_same(int verdict, const struct bfbpf_hello *h, int whole,
			    const struct bfbpf_hello *all)
{
	if (verdict == BFBPF_HELLO_MORE)
		return;
	if (verdict != whole)
		abort();
	if (verdict == BFBPF_HELLO_SNI && strcmp(h->name, all->name))
		abort();
}

static void fuzz_one(int http, const uint8_t *data, size_t size)
{
	static uint8_t longer[2 * BFBPF_HELLO_MAX];
	int whole, verdict;
	size_t cut;

	whole = fuzz_parse(&fuzz_hello, http, data, size);
	if (whole < BFBPF_HELLO_MORE || whole > BFBPF_HELLO_BAD)
		abort();
	if (whole == BFBPF_HELLO_SNI) {
		fuzz_check_name(&fuzz_hello);
		fuzz_check_suffixes(&fuzz_hello);
	}
	/* The same bytes again: the scratch of a parse never leaks into the next. */
	if (fuzz_parse(&fuzz_again, http, data, size) != whole)
		abort();
	fuzz_check_same(whole, &fuzz_again, whole, &fuzz_hello);
	/* Prefixes: the flow's writes as they arrive. */
	for (cut = size / 3; cut < size; cut += (size - cut + 1) / 2) {
		verdict = fuzz_parse(&fuzz_again, http, data, cut);
		fuzz_check_same(verdict, &fuzz_again, whole, &fuzz_hello);
	}
	/* More bytes after a final verdict: the same verdict. */
	if (whole != BFBPF_HELLO_MORE && size < BFBPF_HELLO_MAX) {
		memcpy(longer, data, size);
		memcpy(longer + size, data, size);
		verdict = fuzz_parse(&fuzz_again, http, longer, 2 * size);
		fuzz_check_same(whole, &fuzz_hello, verdict, &fuzz_again);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_one(0, data, size);
	fuzz_one(1, data, size);
	return 0;
}
