#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Integration tests of bfbpf on the running kernel: real cgroup v2, bpffs,
# network namespaces and clients. Must run as root.
#
#   tests/integration/run.sh [-v] [CASE...]
#
# With no CASE, every case of tests/integration/test-*.sh runs. Each prints
# `PASS name`, `FAIL name` (followed by its output) or `SKIP name (reason)`;
# the last line is `integration: N passed, M failed, K skipped`. The exit
# status is 1 if any case failed. -v shows the output of passing cases too.
#
# Environment: BFBPF (the binary, default build/bfbpf), PYTHON,
# CASE_TIMEOUT (seconds per case, default 180), PROBE_TIMEOUT (seconds a probe
# waits for an answer, default 3), KEEP=1 keeps the work directory.

set -u

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$IT_DIR/lib.sh"

VERBOSE=0
WANT=()
for arg in "$@"; do
	case $arg in
	-v | --verbose) VERBOSE=1 ;;
	-h | --help)
		sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) WANT+=("${arg#test_}") ;;
	esac
done

if [ "$(id -u)" -ne 0 ]; then
	echo "integration: must run as root (cgroups, bpffs, network namespaces)" >&2
	exit 2
fi

ALL_TESTS=()
declare -A CASE_FILE # case -> the file that defines it (test-N-name)
for f in "$IT_DIR"/test-*.sh; do
	n=${#ALL_TESTS[@]}
	# shellcheck disable=SC1090
	. "$f"
	for c in "${ALL_TESTS[@]:$n}"; do CASE_FILE[$c]=$(basename "$f" .sh); done
done

if [ ${#WANT[@]} -eq 0 ]; then
	CASES=("${ALL_TESTS[@]}")
else
	CASES=()
	for w in "${WANT[@]}"; do
		if ! declare -F "test_$w" >/dev/null; then
			echo "integration: no such case: $w (cases: ${ALL_TESTS[*]})" >&2
			exit 2
		fi
		CASES+=("$w")
	done
fi

# --- the environment, found rather than assumed
CGROOT=$(find_cgroup2)
if [ -z "$CGROOT" ]; then
	echo "integration: no cgroup2 mount in /proc/self/mountinfo" >&2
	exit 1
fi
MOUNTED_BPFFS=0
if ! is_bpffs /sys/fs/bpf; then
	mkdir -p /sys/fs/bpf
	mount -t bpf bpf /sys/fs/bpf || {
		echo "integration: cannot mount bpffs on /sys/fs/bpf" >&2
		exit 1
	}
	MOUNTED_BPFFS=1
fi
if [ ! -d /sys/module/veth ]; then
	modprobe veth 2>/dev/null || true
fi

RUNID=$(printf '%04x%04x' $$ $((RANDOM)))
WORKDIR=$(mktemp -d "/tmp/bfbpf-it.$RUNID.XXXXXX")
chmod 0755 "$WORKDIR"
CGBASE=$CGROOT/bfbpf-test-$RUNID
PINBASE=/sys/fs/bpf/bfbpf-test-$RUNID
export IT_DIR BFBPF PYTHON CGROOT RUNID WORKDIR CGBASE PINBASE URING_CONNECT

CURRENT_PID=
finish() {
	[ -n "$CURRENT_PID" ] && kill -TERM "$CURRENT_PID" 2>/dev/null && wait "$CURRENT_PID" 2>/dev/null
	rmdir "$CGBASE" 2>/dev/null
	rm -rf "$PINBASE" 2>/dev/null
	[ "${KEEP:-0}" = 1 ] || rm -rf "$WORKDIR"
	if [ $MOUNTED_BPFFS = 1 ] && [ -z "$(ls -A /sys/fs/bpf 2>/dev/null)" ]; then
		umount /sys/fs/bpf 2>/dev/null
	fi
}
trap finish EXIT
trap 'echo "integration: interrupted"; exit 130' INT TERM

mkdir "$CGBASE" || exit 1
mkdir -p "$PINBASE" || exit 1

# The io_uring helper, if it was not built by make (needs gcc and liburing).
if [ ! -x "$URING_CONNECT" ] && command -v gcc >/dev/null 2>&1; then
	mkdir -p "$(dirname "$URING_CONNECT")"
	gcc -O2 -o "$URING_CONNECT" "$IT_DIR/uring_connect.c" -luring 2>/dev/null || true
fi

# Under vmtest's boot with the BPF LSM (VMTEST_BPF_LSM=on, set in the guest), only the cases
# of the files whose outcome the BPF LSM changes run (lsm_cgroup/socket_create refuses packet
# sockets and other families; verify, check and the escapes read whether it is active); the
# boot without it, and the host, run every case. A whole second boot of every case (container
# flows, the package, names) would not fit CI's 90 minutes under TCG. Cases named on the
# command line always run.
VMTEST_LSM_FILES=" test-1-traffic test-2-sandbox test-5-control test-8-escapes test-9-run-escapes test-10-verify-escapes test-11-control-escapes "
vmtest_other_boot() {
	[ "${VMTEST_BPF_LSM:-}" = on ] && [ ${#WANT[@]} -eq 0 ] || return 1
	[[ $VMTEST_LSM_FILES != *" ${CASE_FILE[$1]} "* ]]
}

echo "integration: kernel $(uname -r), cgroup2 at $CGROOT, run $RUNID, bfbpf $BFBPF"
passed=0 failed=0 skipped=0
start=$SECONDS
index=0
for name in "${CASES[@]}"; do
	index=$((index + 1))
	if vmtest_other_boot "$name"; then
		skipped=$((skipped + 1))
		echo "SKIP $name (in vmtest, runs in the boot without the BPF LSM: VMTEST_LSM_FILES)"
		continue
	fi
	log=$WORKDIR/$name.log
	t0=$SECONDS
	# shellcheck disable=SC2016 # expanded by the case's shell
	timeout -k 10 "${CASE_TIMEOUT:-180}" bash -c '. "$IT_DIR/lib.sh"; for f in "$IT_DIR"/test-*.sh; do . "$f"; done; case_main "$1" "$2"' \
		case "$name" "$index" >"$log" 2>&1 &
	CURRENT_PID=$!
	wait "$CURRENT_PID"
	rc=$?
	CURRENT_PID=
	took=$((SECONDS - t0))
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
		echo "PASS $name ($took s)"
		[ $VERBOSE = 1 ] && sed 's/^/    /' "$log"
	elif [ $rc -eq 77 ]; then
		skipped=$((skipped + 1))
		echo "SKIP $name ($(cat "$WORKDIR/$name/skip" 2>/dev/null || echo "no reason given"))"
	else
		failed=$((failed + 1))
		echo "FAIL $name"
		[ $rc -eq 124 ] && echo "    (timed out after ${CASE_TIMEOUT:-180} s)"
		sed 's/^/    /' "$log"
		f=$WORKDIR/$name/daemon.log
		if [ -s "$f" ]; then
			echo "    --- daemon.log (last 25 lines but libbpf's debug)"
			grep -v 'debug: libbpf' "$f" | tail -25 | sed 's/^/    /'
		fi
	fi
done
echo "integration: $passed passed, $failed failed, $skipped skipped"
[ $VERBOSE = 1 ] && echo "integration: $((SECONDS - start)) s"
[ $failed -eq 0 ]
