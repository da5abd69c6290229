// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Does the kernel agree with userspace on the shared parsers?
 *
 *   hello_runner [-v] OBJECT FILE...
 *   hello_runner -t N OBJECT FILE...
 *
 * Loads OBJECT (tests/bpf/hello_test.bpf.o: the same headers, verified by
 * the running kernel), prints the verifier's "processed N insns" line, then
 * feeds every FILE, and several prefixes of it (the writes of a flow as it
 * grows: MORE before complete), to both parsers (TLS and HTTP) in the kernel
 * (BPF_PROG_TEST_RUN) and in this process, and compares the verdicts, the
 * names, the names' hashes and suffix hashes, and whether "allowed.test"
 * matches the name (bfbpf_name_matches). Exit status: 0 all agree, 1 a disagreement,
 * 2 could not run. With -t N, it times instead: N runs of each parser on
 * each whole FILE, interleaved with N runs of the same program that stops
 * before parsing (the baseline: the syscall, the test run, the lookups), and
 * prints both means and their difference, the parse's cost in the kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../bpf/lib/tls_sni.h"
#include "../../bpf/lib/http_host.h"
#include "hello_test.h"

struct runner {
	int prog_fd;
	int map_fd;
	int hash_fd;
	int verbose;
	unsigned runs, disagreements;
	unsigned verdicts[4]; /* the kernel's, by enum bfbpf_hello_status */
};

static const char *const runner_verdict_names[] = {"MORE", "SNI", "NO_SNI", "BAD"};

static const char *runner_verdict_name(int verdict)
{
	return verdict >= 0 && verdict < 4 ? runner_verdict_names[verdict] : "?";
}

/* The kernel's verdict on buf[0..len) with one parser; name into out, its hash into hash. */
static int runner_kernel(struct runner *r, __u32 parser, const __u8 *buf, __u32 len,
			 struct bfbpf_hello *out, __u64 *hash, __u64 *match)
{
	static struct bfbpf_hello in;
	struct hello_test_args args = {.parser = parser};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args, .ctx_size_in = sizeof(args));
	__u32 key = 0, one = 1;
	int err;

	memset(&in, 0, sizeof(in));
	memcpy(in.buf, buf, len);
	in.len = len;
	err = bpf_map_update_elem(r->map_fd, &key, &in, BPF_ANY);
	if (!err)
		err = bpf_prog_test_run_opts(r->prog_fd, &opts);
	if (!err)
		err = bpf_map_lookup_elem(r->map_fd, &key, out);
	if (!err)
		err = bpf_map_lookup_elem(r->hash_fd, &key, hash);
	if (!err)
		err = bpf_map_lookup_elem(r->hash_fd, &one, match);
	if (err)
		return -errno;
	return (int)opts.retval;
}

static int runner_user(__u32 parser, const __u8 *buf, __u32 len, struct bfbpf_hello *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->buf, buf, len);
	out->len = len;
	return parser == HELLO_TEST_HTTP ? bfbpf_http_host_parse(out) : bfbpf_hello_parse(out);
}

static struct hello_test_entry runner_entry = {.name = HELLO_TEST_ENTRY,
					       .len = sizeof(HELLO_TEST_ENTRY) - 1};

/* The kernel's suffix hashes (and lengths) are those of userspace's name, suffix by suffix. */
static int runner_suffixes_agree(const struct bfbpf_hello *kernel, struct bfbpf_hello *user)
{
	__u32 i, count = 0;

	bfbpf_name_suffixes(user);
	if (kernel->suffix_count != user->suffix_count)
		return 0;
	for (i = 0; i < user->name_len; i++)
		if (i == 0 || user->name[i - 1] == '.')
			count++;
	if (count != user->suffix_count)
		return 0;
	for (i = 0; i < user->name_len; i++) {
		if (i && user->name[i - 1] != '.')
			continue;
		/* Shortest first: the suffix at i is number (count - 1) counting from the end. */
		if (kernel->suffix_hash[--count] !=
			    bfbpf_name_rhash(user->name + i, user->name_len - i) ||
		    kernel->suffix_len[count] != user->name_len - i)
			return 0;
	}
	return 1;
}

/* One run: 0 agree, 1 disagree, negative errno: the kernel could not run it. */
static int runner_compare(struct runner *r, const char *file, __u32 parser, const __u8 *buf,
			  __u32 len)
{
	static struct bfbpf_hello kernel, user;
	__u64 hash = 0, match = 0;
	int kv, uv, same;

	kv = runner_kernel(r, parser, buf, len, &kernel, &hash, &match);
	if (kv < 0)
		return kv;
	uv = runner_user(parser, buf, len, &user);
	same = kv == uv &&
	       (kv != BFBPF_HELLO_SNI ||
		(kernel.name_len == user.name_len && !strcmp(kernel.name, user.name) &&
		 hash == bfbpf_name_hash(user.name, user.name_len) &&
		 runner_suffixes_agree(&kernel, &user) &&
		 match == (__u64)bfbpf_name_matches(&user, runner_entry.name, runner_entry.len)));
	r->runs++;
	if (kv >= 0 && kv < 4)
		r->verdicts[kv]++;
	if (!same || r->verbose)
		printf("%s %s %s len=%u kernel=%s %s user=%s %s\n", same ? "agree" : "DISAGREE",
		       file, parser == HELLO_TEST_HTTP ? "http" : "tls", len,
		       runner_verdict_name(kv), kv == BFBPF_HELLO_SNI ? kernel.name : "-",
		       runner_verdict_name(uv), uv == BFBPF_HELLO_SNI ? user.name : "-");
	if (!same)
		r->disagreements++;
	return !same;
}

/* A file and its prefixes, through both parsers. */
static int runner_file(struct runner *r, const char *file)
{
	static __u8 buf[BFBPF_HELLO_MAX];
	__u32 len, cuts[8], i;
	int parser, err = 0;
	FILE *f = fopen(file, "rb");

	if (!f) {
		fprintf(stderr, "hello_runner: error: %s: %s\n", file, strerror(errno));
		return -errno;
	}
	len = (__u32)fread(buf, 1, sizeof(buf), f); /* the bound: the first 4096 bytes */
	fclose(f);
	cuts[0] = 0, cuts[1] = 1, cuts[2] = 5, cuts[3] = 9, cuts[4] = len / 3;
	cuts[5] = len / 2, cuts[6] = len ? len - 1 : 0, cuts[7] = len;
	for (parser = HELLO_TEST_TLS; parser <= HELLO_TEST_HTTP && err >= 0; parser++)
		for (i = 0; i < 8 && err >= 0; i++)
			if (cuts[i] <= len)
				err = runner_compare(r, file, (__u32)parser, buf, cuts[i]);
	return err < 0 ? err : 0;
}

static int runner_run_timed(struct runner *r, __u32 parser, __u64 *ns)
{
	struct hello_test_args args = {.parser = parser};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args, .ctx_size_in = sizeof(args));
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (bpf_prog_test_run_opts(r->prog_fd, &opts))
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ns += (__u64)((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec));
	return 0;
}

/* The kernel's parse of a whole file, timed against the baseline, interleaved. */
static int runner_time(struct runner *r, const char *file, unsigned count)
{
	static struct bfbpf_hello in;
	__u64 parse_ns, base_ns;
	__u32 key = 0, parser;
	FILE *f = fopen(file, "rb");
	int err = 0;

	if (!f)
		return -errno;
	memset(&in, 0, sizeof(in));
	in.len = (__u32)fread(in.buf, 1, sizeof(in.buf), f);
	fclose(f);
	/* A parse changes only its scratch: the same value serves every run. */
	if (bpf_map_update_elem(r->map_fd, &key, &in, BPF_ANY))
		return -errno;
	for (parser = HELLO_TEST_TLS; parser <= HELLO_TEST_HTTP && !err; parser++) {
		parse_ns = base_ns = 0;
		for (unsigned i = 0; i < count && !err; i++) {
			err = runner_run_timed(r, HELLO_TEST_NONE, &base_ns);
			if (!err)
				err = runner_run_timed(r, parser, &parse_ns);
		}
		if (!err)
			printf("time %s %s len=%u: parse %.0f ns, baseline %.0f ns, cost %.0f ns\n",
			       file, parser == HELLO_TEST_HTTP ? "http" : "tls", in.len,
			       (double)parse_ns / count, (double)base_ns / count,
			       ((double)parse_ns - (double)base_ns) / count);
	}
	return err;
}

/* Loads the object; prints the verifier's statistics line. */
static int runner_load(struct runner *r, const char *path, struct bpf_object **objp)
{
	static char log[64 * 1024];
	struct bpf_program *prog;
	struct bpf_object *obj;
	int err, entry_fd;
	__u32 key = 0;
	char *line;

	obj = bpf_object__open_file(path, NULL);
	if (!obj)
		return -errno;
	*objp = obj;
	prog = bpf_object__find_program_by_name(obj, "hello_test");
	if (!prog)
		return -ENOENT;
	/* Level 4 (BPF_LOG_STATS): the statistics only, not the whole walk. */
	bpf_program__set_log_buf(prog, log, sizeof(log));
	bpf_program__set_log_level(prog, 4);
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "hello_runner: error: loading %s: %s\n%s\n", path, strerror(-err),
			log);
		return err;
	}
	line = strstr(log, "processed ");
	if (line)
		printf("hello_runner: verifier: %.*s\n", (int)strcspn(line, "\n"), line);
	r->prog_fd = bpf_program__fd(prog);
	r->map_fd = bpf_object__find_map_fd_by_name(obj, "hellos");
	r->hash_fd = bpf_object__find_map_fd_by_name(obj, "hashes");
	entry_fd = bpf_object__find_map_fd_by_name(obj, "entries");
	if (r->map_fd < 0 || r->hash_fd < 0 || entry_fd < 0)
		return -ENOENT;
	return bpf_map_update_elem(entry_fd, &key, &runner_entry, BPF_ANY) ? -errno : 0;
}

int main(int argc, char **argv)
{
	struct runner r = {.prog_fd = -1, .map_fd = -1};
	struct bpf_object *obj = NULL;
	int i = 1, err;

	unsigned timed = 0;

	if (argc > 1 && !strcmp(argv[1], "-v"))
		r.verbose = 1, i++;
	else if (argc > 2 && !strcmp(argv[1], "-t"))
		timed = (unsigned)strtoul(argv[2], NULL, 10), i += 2;
	if (argc - i < 2 || (i > 2 && !timed)) {
		fprintf(stderr, "usage: hello_runner [-v] OBJECT FILE...\n"
				"       hello_runner -t N OBJECT FILE...\n");
		return 2;
	}
	err = runner_load(&r, argv[i], &obj);
	for (i++; !err && i < argc; i++)
		err = timed ? runner_time(&r, argv[i], timed) : runner_file(&r, argv[i]);
	if (timed && !err) {
		bpf_object__close(obj);
		return 0;
	}
	bpf_object__close(obj);
	if (err) {
		fprintf(stderr, "hello_runner: error: %s\n", strerror(-err));
		return 2;
	}
	printf("hello_runner: %d files, %u runs, %u disagreements; kernel verdicts: MORE %u, "
	       "SNI %u, NO_SNI %u, BAD %u\n",
	       argc - 2 - r.verbose, r.runs, r.disagreements, r.verdicts[0], r.verdicts[1],
	       r.verdicts[2], r.verdicts[3]);
	return r.disagreements ? 1 : 0;
}
