/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the tests of the two hello parsers (test_tls_sni.c, test_http_host.c)
 * share: the corpus of tests/fuzz/corpus/hello, a parse of a prefix of a
 * file's bytes, and the two checks over a table of expected verdicts (every
 * file's verdict and name; every prefix agrees with the whole). Include it
 * after cmocka.h and the parser's header, with HELLO_FIXTURE_PARSE defined
 * as the parser (int fn(struct bfbpf_hello *)).
 */
#ifndef BFBPF_TEST_HELLO_FIXTURE_H
#define BFBPF_TEST_HELLO_FIXTURE_H

#include <stdio.h>
#include <string.h>

#ifndef HELLO_FIXTURE_PARSE
#error "define HELLO_FIXTURE_PARSE (the parser under test) before including hello_fixture.h"
#endif

#define CORPUS "tests/fuzz/corpus/hello/"

static struct bfbpf_hello hello;
static __u8 file_bytes[2 * BFBPF_HELLO_MAX];

/* The file's bytes into file_bytes; its size. */
static size_t corpus_read(const char *name)
{
	char path[256];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), CORPUS "%s", name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s (run the tests from the repository's top)", path);
	n = fread(file_bytes, 1, sizeof(file_bytes), f);
	fclose(f);
	return n;
}

/* The verdict on the first len bytes of file_bytes (at most the bound). */
static int parse_prefix(size_t len)
{
	memset(&hello, 0, sizeof(hello));
	if (len > BFBPF_HELLO_MAX)
		len = BFBPF_HELLO_MAX;
	memcpy(hello.buf, file_bytes, len);
	hello.len = (__u32)len;
	return HELLO_FIXTURE_PARSE(&hello);
}

struct expected {
	const char *file;
	int verdict;
	const char *name;
};

/* Every file's verdict, and its name on SNI. */
static void hello_check_verdicts(const struct expected *table, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		const struct expected *e = &table[i];
		int verdict = parse_prefix(corpus_read(e->file));

		if (verdict != e->verdict)
			fail_msg("%s: verdict %d, expected %d", e->file, verdict, e->verdict);
		if (e->name) {
			assert_string_equal(hello.name, e->name);
			assert_int_equal(hello.name_len, strlen(e->name));
		}
	}
}

/* Every prefix of every file: MORE, or the whole file's verdict and name. */
static void hello_check_prefixes(const struct expected *table, size_t count)
{
	static char name[BFBPF_NAME_BUF];
	size_t n, len;
	int whole;

	for (size_t i = 0; i < count; i++) {
		len = corpus_read(table[i].file);
		whole = parse_prefix(len);
		memcpy(name, hello.name, sizeof(name));
		for (n = 0; n < len && n <= BFBPF_HELLO_MAX; n++) {
			int verdict = parse_prefix(n);

			if (verdict == BFBPF_HELLO_MORE)
				continue;
			if (verdict != whole ||
			    (verdict == BFBPF_HELLO_SNI && strcmp(name, hello.name)))
				fail_msg("%s: %zu bytes say %d, all say %d", table[i].file, n,
					 verdict, whole);
		}
	}
}

#endif /* BFBPF_TEST_HELLO_FIXTURE_H */
