# bfbpf — eBPF cgroup egress filter. `make deps && make && make test`; `make help` lists targets.
PREFIX ?= /usr/local
# V=1 shows the full compiler command lines.
Q := $(if $(V),,@)
BUILD ?= build
CC := gcc
CLANG ?= clang
BPFTOOL ?= bpftool
ARCH_INCLUDE := /usr/include/$(shell $(CC) -dumpmachine)

WARNINGS := -Wall -Wextra -Werror
# snprintf truncation is deliberate where paths are bounded; real overflows are checked in code.
USER_WARNINGS := $(WARNINGS) -Wno-format-truncation -Wno-unknown-warning-option
CFLAGS ?= -O2 -g
CFLAGS += $(USER_WARNINGS) -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser -I$(BUILD)
# One section per function: the unit tests link with --gc-sections, so that code they never
# reach may call the loader without pulling it (and the BPF skeleton) in. See `check`.
USER_CFLAGS := -ffunction-sections -fdata-sections
LDLIBS := -lbpf -lelf -lz -lcares -ljansson -lseccomp

# BPF_PROG() declares a ctx parameter that lsm programs need not read.
# -mcpu=v3: the verdict memo's compare-and-swap (BPF_CMPXCHG, kernel 5.12+).
BPF_CFLAGS := -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 $(WARNINGS) -Wno-unused-parameter -Iinclude -Ibpf -I$(ARCH_INCLUDE)

DEB_PACKAGES := clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libc-ares-dev libjansson-dev libseccomp-dev \
	libcmocka-dev liburing-dev pkg-config gcc make iproute2 dnsmasq-base bind9-dnsutils \
	curl python3 libc-bin util-linux iperf3 tinyproxy qemu-system-x86 busybox-static cpio \
	libclang-rt-14-dev kmod clang-format shellcheck \
	podman docker.io runc \
	python3-pytest python3-pip python3-setuptools python3-wheel python3-venv python3-jsonschema gnuplot-nox

# user/ is one folder per layer (docs/design.md, "Layers"); every source is found by folder.
USER_LAYERS := cli daemon sandbox dns loader lib
USER_SRCS := $(foreach d,$(USER_LAYERS),$(wildcard user/$(d)/*.c))
USER_HDRS := $(foreach d,$(USER_LAYERS),$(wildcard user/$(d)/*.h))
USER_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(USER_SRCS))
# Everything but the loader: what the unit tests link, built without the BPF skeleton.
CORE_OBJS := $(filter-out $(BUILD)/user/loader/%,$(USER_OBJS))
UNIT_SRCS := $(wildcard tests/unit/*/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_OBJS := $(patsubst user/%.c,$(BUILD)/san/user/%.o,$(USER_SRCS))
SAN_BINS := $(patsubst tests/unit/%.c,$(BUILD)/san/tests/%,$(UNIT_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
FUZZ_SECONDS ?= 20

PYTHON3 ?= /usr/bin/python3
BENCH_TOOLS := $(BUILD)/bench/bfbench $(BUILD)/bench/floor.bpf.o

# Keep the sanitizer objects between targets (make would delete them as intermediates).
.SECONDARY:
# A command that fails leaves no half-written target (a truncated skeleton header, say).
.DELETE_ON_ERROR:

.PHONY: all deps check test pytest unit integration sanitize fuzz demo vmtest bench bench-tools \
	lint install clean format help

# `make help` prints the targets that have a "## " comment.
all: $(BUILD)/bfbpf ## build build/bfbpf (the default)

help: ## list the targets
	@awk -F':.*## ' '/^[a-z][a-z-]*:.*## / { printf "  %-12s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

# Idempotent: installs only what is missing (apt-get update first, as Debian wants).
deps: ## install the Debian packages that are missing (root)
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "deps: installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $$missing >/dev/null; \
	else echo "deps: all installed"; fi

$(BUILD)/bfbpf.bpf.o: bpf/bfbpf.bpf.c $(wildcard bpf/lib/*.h) include/bfbpf.h | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bfbpf.skel.h: $(BUILD)/bfbpf.bpf.o
	$(BPFTOOL) gen skeleton $< name bfbpf_bpf > $@

$(BUILD)/user/%.o: user/%.c $(USER_HDRS) include/bfbpf.h
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(USER_CFLAGS) -c $< -o $@

# Only the loader sees the BPF skeleton.
$(patsubst user/%.c,$(BUILD)/user/%.o,$(wildcard user/loader/*.c)): $(BUILD)/bfbpf.skel.h

$(BUILD)/libbfbpf.a: $(USER_OBJS)
	$(AR) rcs $@ $^

$(BUILD)/libbfbpf-core.a: $(CORE_OBJS)
	$(AR) rcs $@ $^

$(BUILD)/bfbpf: $(BUILD)/user/main.o $(BUILD)/libbfbpf.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD):
	@mkdir -p $(BUILD)

# Unit tests (cmocka): one binary per tests/unit/*/test_*.c, linked with every user object but
# the loader's. --gc-sections drops the functions a test never reaches, so a test may use
# ctl.c's parser although ctl.c's handlers reach the loader. A test that does reach the
# loader fails to link ("undefined reference to loader_..."): unit tests stay without BPF.
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libbfbpf-core.a $(USER_HDRS) include/bfbpf.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libbfbpf-core.a -Wl,--gc-sections -lcmocka $(LDLIBS)

# The CLI's tests are the exception: its command table names every command, the loader's
# users included, so they link the whole library. Compiling the BPF object and generating
# its skeleton need no privileges (clang -target bpf, bpftool gen skeleton); nothing is loaded.
$(BUILD)/tests/cli/%: tests/unit/cli/%.c $(BUILD)/libbfbpf.a $(USER_HDRS) include/bfbpf.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libbfbpf.a -lcmocka $(LDLIBS)

# As an ordinary user: no root, no installs, nothing loaded into the kernel. Only the CLI's
# test needs the BPF object compiled (above). The policy schema's agreement test runs the
# built CLI's `bfbpf resolve` (a dry run that parses as attach does; no root).
check: $(UNIT_BINS) $(BUILD)/bfbpf ## build and run the unit tests and the policy schema's agreement (no root, no BPF)
	@rc=0; for t in $(UNIT_BINS); do $$t || rc=1; done; \
	BFBPF=$(abspath $(BUILD)/bfbpf) $(PYTHON3) -m pytest -q -p no:cacheprovider tests/schema || rc=1; \
	exit $$rc

unit: check ## the same as check

# The io_uring connect probe of the integration tests.
$(BUILD)/tests/uring_connect: tests/integration/uring_connect.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -luring

integration: $(BUILD)/bfbpf $(BUILD)/tests/uring_connect ## the integration suite (root; cgroups, netns)
	tests/integration/run.sh

# The Python client's pytest suite (clients/python/tests). As root it runs its own daemon;
# not as root only the tests that need none run. `make test` runs it as the integration
# case test_python_client.
pytest: $(BUILD)/bfbpf ## the Python client's tests (pytest; root for those with a daemon)
	BFBPF=$(abspath $(BUILD)/bfbpf) $(PYTHON3) -m pytest -p no:cacheprovider clients/python/tests

test: deps ## deps, build, unit and integration tests (root)
	$(MAKE) all
	$(MAKE) unit
	$(MAKE) integration

# The unit tests again under AddressSanitizer and UndefinedBehaviorSanitizer.
$(BUILD)/san/user/%.o: user/%.c $(USER_HDRS) include/bfbpf.h
	@mkdir -p $(dir $@)
	@echo "  CC-SAN  $<"
	$(Q)$(CLANG) $(CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(patsubst user/%.c,$(BUILD)/san/user/%.o,$(wildcard user/loader/*.c)): $(BUILD)/bfbpf.skel.h

$(BUILD)/san/tests/%: tests/unit/%.c $(SAN_OBJS)
	@mkdir -p $(dir $@)
	$(CLANG) $(CFLAGS) $(SAN_FLAGS) -o $@ $< $(SAN_OBJS) -lcmocka $(LDLIBS)

sanitize: $(SAN_BINS) ## the unit tests under ASan and UBSan
	@rc=0; for t in $(SAN_BINS); do \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 $$t || rc=1; \
	done; exit $$rc

# libFuzzer targets for the parsers of untrusted input, run FUZZ_SECONDS each on their corpus.
$(BUILD)/fuzz/%: tests/fuzz/%.c $(SAN_OBJS)
	@mkdir -p $(dir $@)
	$(CLANG) $(CFLAGS) $(SAN_FLAGS) -fsanitize=fuzzer -o $@ $< $(SAN_OBJS) $(LDLIBS)

fuzz: $(FUZZ_BINS) ## each libFuzzer target for FUZZ_SECONDS (default 20)
	@rc=0; for f in $(FUZZ_BINS); do n=$$(basename $$f); mkdir -p $(BUILD)/corpus/$$n; \
		$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=0 $(BUILD)/corpus/$$n \
			tests/fuzz/corpus/$${n#fuzz_} >$(BUILD)/fuzz/$$n.log 2>&1 \
			&& echo "fuzz: $$n: ok" || { echo "fuzz: $$n: FAILED"; tail -40 $(BUILD)/fuzz/$$n.log; rc=1; }; \
	done; exit $$rc

demo: deps ## deps, build, and a short demonstration (root)
	$(MAKE) all
	tools/demo.sh

# Two boots of the same kernel, without and with the BPF LSM (lsm_cgroup programs), one at
# a time; each prints its own summary, both are repeated at the end; fails if either fails.
VMTEST_BOOTS ?= off on
vmtest: $(BUILD)/bfbpf $(BUILD)/tests/uring_connect ## the integration suite in QEMU, BPF LSM off and on (slow)
	@out=$${VMTEST_OUT:-$(BUILD)/vmtest}; rc=0; \
	for lsm in $(VMTEST_BOOTS); do rm -f "$$out/bpf-lsm-$$lsm/summary"; done; \
	for lsm in $(VMTEST_BOOTS); do \
		vmtest/run.sh --bpf-lsm $$lsm $(if $(KERNEL),--kernel $(KERNEL)) || rc=1; \
	done; \
	echo "vmtest: all boots:"; \
	for lsm in $(VMTEST_BOOTS); do \
		cat "$$out/bpf-lsm-$$lsm/summary" 2>/dev/null || \
			echo "vmtest: BPF LSM $$lsm: FAIL (the run ended before its summary)"; \
	done; \
	exit $$rc

# The bench's helper programs: the load generator and the "floor" cgroup_skb program.
$(BUILD)/bench/bfbench: tools/bench/bfbench.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -pthread -o $@ $<

$(BUILD)/bench/floor.bpf.o: tools/bench/floor.bpf.c
	@mkdir -p $(dir $@)
	$(CLANG) -O2 -g -target bpf -Wall -Werror -I$(ARCH_INCLUDE) -c $< -o $@

bench-tools: $(BENCH_TOOLS) ## build the bench's helper programs into build/bench/

bench: $(BUILD)/bfbpf $(BENCH_TOOLS) ## the benchmarks (root; BENCH_QUICK=1 for the smoke run)
	BFBPF=$(abspath $(BUILD)/bfbpf) BFBENCH=$(abspath $(BUILD)/bench/bfbench) \
		BENCH_FLOOR=$(abspath $(BUILD)/bench/floor.bpf.o) \
		tools/bench/run.sh $(if $(BENCH_QUICK),--quick)

# clang-format, shellcheck, the include graph of user/ and the length report; every check
# runs even when an earlier one fails, and lint fails if any did.
SHELL_SCRIPTS = $(shell git ls-files | while read -r f; do case $$f in (*.sh) echo "$$f" ;; \
	(*) head -n1 "$$f" 2>/dev/null | grep -qE '^\#!.*((/|env +)(ba)?sh|busybox +sh)( |$$)' && echo "$$f" ;; esac; done)

lint: ## clang-format check, shellcheck, include graph, length report
	@rc=0; \
	echo "lint: clang-format"; \
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h') || rc=1; \
	echo "lint: shellcheck"; \
	shellcheck $(SHELL_SCRIPTS) || rc=1; \
	echo "lint: include graph"; \
	$(PYTHON3) tools/include-graph.py || rc=1; \
	echo "lint: lengths"; \
	$(PYTHON3) tools/lengths.py || rc=1; \
	echo "lint: integration helpers (one shell: a name defined twice, the last file wins)"; \
	dup=$$(cat tests/integration/lib.sh tests/integration/test-*.sh | \
		sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)() *{.*/\1/p' | sort | uniq -d); \
	if [ -n "$$dup" ]; then echo "defined in more than one file: $$dup"; rc=1; fi; \
	if [ $$rc = 0 ]; then echo "lint: ok"; else echo "lint: FAILED"; fi; exit $$rc

install: $(BUILD)/bfbpf ## install bfbpf into PREFIX/sbin (PREFIX=/usr/local)
	install -D -m 0755 $(BUILD)/bfbpf $(DESTDIR)$(PREFIX)/sbin/bfbpf
	install -d $(DESTDIR)/usr/share/containers/oci/hooks.d
	sed 's|/usr/local/sbin/|$(PREFIX)/sbin/|' contrib/oci/bfbpf-hook.json >$(DESTDIR)/usr/share/containers/oci/hooks.d/bfbpf-hook.json
	sed 's|/usr/local/sbin/|$(PREFIX)/sbin/|' contrib/docker/bfbpf-runc >$(DESTDIR)$(PREFIX)/sbin/bfbpf-runc && chmod 0755 $(DESTDIR)$(PREFIX)/sbin/bfbpf-runc

format: ## clang-format every tracked .c and .h in place
	clang-format -i $$(git ls-files '*.c' '*.h')

clean: ## remove build/
	rm -rf $(BUILD)
