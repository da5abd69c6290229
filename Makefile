# bfbpf — eBPF cgroup egress filter. `make deps && make && make test`.
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
LDLIBS := -lbpf -lelf -lz -lcares -ljansson -lseccomp

# BPF_PROG() declares a ctx parameter that lsm programs need not read.
# -mcpu=v3: the verdict memo's compare-and-swap (BPF_CMPXCHG, kernel 5.12+).
BPF_CFLAGS := -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 $(WARNINGS) -Wno-unused-parameter -Iinclude -I$(ARCH_INCLUDE)

DEB_PACKAGES := clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libc-ares-dev libjansson-dev libseccomp-dev \
	libcmocka-dev liburing-dev pkg-config gcc make iproute2 dnsmasq-base bind9-dnsutils \
	curl python3 libc-bin util-linux iperf3 tinyproxy qemu-system-x86 busybox-static cpio \
	libclang-rt-14-dev kmod

# user/ is one folder per layer (docs/design.md, "Layers"); every source is found by folder.
USER_LAYERS := cli daemon sandbox dns loader lib
USER_SRCS := $(foreach d,$(USER_LAYERS),$(wildcard user/$(d)/*.c))
USER_HDRS := $(foreach d,$(USER_LAYERS),$(wildcard user/$(d)/*.h))
USER_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(USER_SRCS))
UNIT_SRCS := $(wildcard tests/unit/*/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_OBJS := $(patsubst user/%.c,$(BUILD)/san/user/%.o,$(USER_SRCS))
SAN_BINS := $(patsubst tests/unit/%.c,$(BUILD)/san/tests/%,$(UNIT_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
FUZZ_SECONDS ?= 20

# Keep the sanitizer objects between targets (make would delete them as intermediates).
.SECONDARY:

.PHONY: all deps test unit integration sanitize fuzz demo vmtest bench install clean format

all: $(BUILD)/bfbpf

# Idempotent: installs only what is missing (apt-get update first, as Debian wants).
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "deps: installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $$missing >/dev/null; \
	else echo "deps: all installed"; fi

$(BUILD)/bfbpf.bpf.o: bpf/bfbpf.bpf.c include/bfbpf.h | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bfbpf.skel.h: $(BUILD)/bfbpf.bpf.o
	$(BPFTOOL) gen skeleton $< name bfbpf_bpf > $@

$(BUILD)/user/%.o: user/%.c $(USER_HDRS) include/bfbpf.h
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# Only the loader sees the BPF skeleton.
$(patsubst user/%.c,$(BUILD)/user/%.o,$(wildcard user/loader/*.c)): $(BUILD)/bfbpf.skel.h

$(BUILD)/libbfbpf.a: $(USER_OBJS)
	$(AR) rcs $@ $^

$(BUILD)/bfbpf: $(BUILD)/user/main.o $(BUILD)/libbfbpf.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD):
	@mkdir -p $(BUILD)

# Unit tests (cmocka): one binary per tests/unit/test_*.c, linked with the user objects.
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libbfbpf.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libbfbpf.a -lcmocka $(LDLIBS)

unit: $(UNIT_BINS)
	@rc=0; for t in $(UNIT_BINS); do $$t || rc=1; done; exit $$rc

# The io_uring connect probe of the integration tests.
$(BUILD)/tests/uring_connect: tests/integration/uring_connect.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -luring

integration: $(BUILD)/bfbpf $(BUILD)/tests/uring_connect
	tests/integration/run.sh

test: deps
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

sanitize: $(SAN_BINS)
	@rc=0; for t in $(SAN_BINS); do \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 $$t || rc=1; \
	done; exit $$rc

# libFuzzer targets for the parsers of untrusted input, run FUZZ_SECONDS each on their corpus.
$(BUILD)/fuzz/%: tests/fuzz/%.c $(SAN_OBJS)
	@mkdir -p $(dir $@)
	$(CLANG) $(CFLAGS) $(SAN_FLAGS) -fsanitize=fuzzer -o $@ $< $(SAN_OBJS) $(LDLIBS)

fuzz: $(FUZZ_BINS)
	@rc=0; for f in $(FUZZ_BINS); do n=$$(basename $$f); mkdir -p $(BUILD)/corpus/$$n; \
		$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=0 $(BUILD)/corpus/$$n \
			tests/fuzz/corpus/$${n#fuzz_} >$(BUILD)/fuzz/$$n.log 2>&1 \
			&& echo "fuzz: $$n: ok" || { echo "fuzz: $$n: FAILED"; tail -40 $(BUILD)/fuzz/$$n.log; rc=1; }; \
	done; exit $$rc

demo: deps
	$(MAKE) all
	tools/demo.sh

vmtest: $(BUILD)/bfbpf $(BUILD)/tests/uring_connect
	vmtest/run.sh $(if $(KERNEL),--kernel $(KERNEL))

bench: $(BUILD)/bfbpf
	tools/bench/run.sh $(if $(BENCH_QUICK),--quick)

install: $(BUILD)/bfbpf
	install -D -m 0755 $(BUILD)/bfbpf $(DESTDIR)$(PREFIX)/sbin/bfbpf

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)
