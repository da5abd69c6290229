# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash
#
# Library of the integration tests (sourced by run.sh and by each case's
# shell). A case is a shell function test_NAME in a test-*.sh file; it runs in
# its own bash process, makes its own network namespaces, cgroups, daemon and
# pins, registers their removal with `defer`, and reports through its exit
# status: 0 pass, 77 skip (reason in $CASEDIR/skip), anything else fail.
#
# The world of a case (world_up):
#   netns SRV  198.18.0.2/24, 198.18.0.3/24, fd00::2/64, fd00::3/64 on eth0
#              server.py on each address: TCP echo on 7000, 8443, 9000 (TCP Fast Open on),
#              UDP echo on 5353, 9999, HTTP on 8080
#   netns SBX  198.18.0.1/24, fd00::1/64 on eth0 (veth to SRV), lo up,
#              ping sockets allowed, TCP Fast Open on; no route anywhere else
# Sandbox processes join their cgroup first, then enter SBX with nsenter.

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BFBPF_ROOT=$(cd "$IT_DIR/../.." && pwd)
BFBPF=${BFBPF:-$BFBPF_ROOT/build/bfbpf}
URING_CONNECT=${URING_CONNECT:-$BFBPF_ROOT/build/tests/uring_connect}
if [ -z "${PYTHON:-}" ]; then
	if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=$(command -v python3); fi
fi
PROBE=$IT_DIR/probe.py
CLI_TIMEOUT=${CLI_TIMEOUT:-60}
export PROBE_TIMEOUT=${PROBE_TIMEOUT:-3}

# Addresses of the test world.
# shellcheck disable=SC2034 # used by the test-*.sh files
{
	SRV4=198.18.0.2
	SRV4B=198.18.0.3
	SBX4=198.18.0.1
	SRV6=fd00::2
	SRV6B=fd00::3
	SBX6=fd00::1
	DENIED4=198.18.99.1
	DENIED6=fd00:99::1
}

# ---------------------------------------------------------------- run setup

# The cgroup2 mount point, from /proc/self/mountinfo (never assumed).
find_cgroup2() {
	awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' \
		/proc/self/mountinfo
}

is_bpffs() {
	awk -v d="$1" '$5 == d { for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "bpf") f = 1; break } } END { exit !f }' \
		/proc/self/mountinfo
}

# ----------------------------------------------------------------- cleanup

DEFERRED=()
# defer CMD...: run CMD (a string, eval'ed) when the case ends, last in first out.
defer() { DEFERRED+=("$*"); }

run_deferred() {
	local i
	for ((i = ${#DEFERRED[@]} - 1; i >= 0; i--)); do
		eval "${DEFERRED[i]}" >/dev/null 2>&1 || true
	done
	DEFERRED=()
}

# ------------------------------------------------------------------ outcome

log() { echo "# $*"; }

fail() {
	echo "FAIL: $*"
	exit 1
}

skip() {
	echo "$*" >"$CASEDIR/skip"
	exit 77
}

# ------------------------------------------------------------------- world

ns_sbx_path() { echo "/run/netns/$NS_SBX"; }

# in_ns NS CMD...: run CMD in the named netns (without ip netns exec's /sys remount).
in_ns() {
	local ns=$1
	shift
	nsenter --net="/run/netns/$ns" "$@"
}

# wait_for_file FILE [SECONDS]
wait_for_file() {
	local f=$1 limit=$((${2:-20} * 20)) n=0
	while [ ! -e "$f" ]; do
		n=$((n + 1))
		[ $n -gt $limit ] && return 1
		sleep 0.05
	done
}

# start_server NS ARGS...: server.py in NS, in the background, until the case ends.
start_server() {
	local ns=$1
	shift
	local ready
	ready=$(mktemp -u "$CASEDIR/server-ready.XXXXXX")
	(cd "$CASEDIR/www" && exec nsenter --net="/run/netns/$ns" "$PYTHON" "$IT_DIR/server.py" \
		--ready "$ready" "$@") >>"$CASEDIR/server.log" 2>&1 &
	local pid=$!
	defer "kill -KILL $pid; wait $pid"
	wait_for_file "$ready" 30 || {
		cat "$CASEDIR/server.log"
		fail "server in $ns did not start"
	}
}

# world_up: the two namespaces, their veth pair and the servers of SRV.
world_up() {
	mkdir -p /run/netns "$CASEDIR/www"
	echo "bfbpf integration test page" >"$CASEDIR/www/index.html"
	ip netns add "$NS_SRV" || fail "cannot create netns $NS_SRV"
	defer "ip netns del $NS_SRV"
	ip netns add "$NS_SBX" || fail "cannot create netns $NS_SBX"
	defer "ip netns del $NS_SBX"
	# Whatever still runs in them (a server nsenter forked off) goes before they do.
	defer "ns_kill_all $NS_SRV $NS_SBX"
	ip -n "$NS_SBX" link add eth0 type veth peer name eth0 netns "$NS_SRV" ||
		fail "cannot create the veth pair (is the veth module available?)"
	ip -n "$NS_SBX" addr add $SBX4/24 dev eth0
	ip -n "$NS_SBX" addr add $SBX6/64 dev eth0 nodad
	ip -n "$NS_SRV" addr add $SRV4/24 dev eth0
	ip -n "$NS_SRV" addr add $SRV4B/24 dev eth0
	ip -n "$NS_SRV" addr add $SRV6/64 dev eth0 nodad
	ip -n "$NS_SRV" addr add $SRV6B/64 dev eth0 nodad
	local ns
	for ns in "$NS_SBX" "$NS_SRV"; do
		ip -n "$ns" link set lo up
		ip -n "$ns" link set eth0 up
		in_ns "$ns" sysctl -qw net.ipv4.tcp_fastopen=3 net.ipv4.ping_group_range="0 2147483647" ||
			fail "cannot set sysctls in $ns"
	done
	# Sockets per address, so that UDP replies leave from the address asked.
	start_server "$NS_SRV" --bind $SRV4 --bind $SRV4B --bind $SRV6 --bind $SRV6B \
		--tcp 7000 --tcp 8443 --tcp 9000 --udp 5353 --udp 9999 --http 8080 --tfo
}

# ns_kill_all NS...: kill every process inside these network namespaces.
ns_kill_all() {
	local ns pid
	for ns in "$@"; do
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$pid" 2>/dev/null
		done
	done
}

# loopback_server: echo servers on 127.0.0.1 and ::1 inside SBX (outside any sandbox cgroup).
loopback_server() {
	start_server "$NS_SBX" --bind ::1 --bind 127.0.0.1 --tcp 7000 --udp 9999
}

# ----------------------------------------------------------------- cgroups

# cg_make PATH: a cgroup removed (with whatever still runs in it) when the case ends.
cg_make() {
	mkdir "$1" || fail "cannot create cgroup $1"
	defer "cg_remove '$1'"
}

cg_remove() {
	local cg=$1 d pid
	[ -d "$cg" ] || return 0
	# shellcheck disable=SC2044,SC2013 # the tests' cgroup paths and pids have no blanks
	for d in $(find "$cg" -depth -type d); do
		for pid in $(cat "$d/cgroup.procs" 2>/dev/null); do
			kill -KILL "$pid" 2>/dev/null
		done
	done
	# shellcheck disable=SC2044 # the tests' cgroup paths have no blanks
	for d in $(find "$cg" -depth -type d); do
		local n=0
		while ! rmdir "$d" 2>/dev/null; do
			n=$((n + 1))
			[ $n -gt 100 ] && break
			sleep 0.05
		done
	done
}

cg_id() { stat -c %i "$1"; }

# What `bfbpf run` names as its own (user/cli/run.c): its transient cgroup
# <cgroup2>/bfbpf-run-PID (and anything under it) and its pins in
# /sys/fs/bpf/bfbpf-run/PID/. A snapshot of those only: a cgroup or a pin that another
# program makes meanwhile is not bfbpf's leftover. The shared parent
# /sys/fs/bpf/bfbpf-run/ itself stays, as /sys/fs/bpf does.
RUN_CGROUP_PREFIX=bfbpf-run-
RUN_BPFFS=/sys/fs/bpf/bfbpf-run
run_leftovers_snapshot() {
	{
		find "$CGROOT" -type d -path "*/$RUN_CGROUP_PREFIX*" 2>/dev/null
		find "$RUN_BPFFS" -mindepth 1 2>/dev/null
	} | sort
}

# sbx CG CMD...: run CMD as a sandbox process: in cgroup CG, in netns SBX.
sbx() {
	local cg=$1
	shift
	(echo "$BASHPID" >"$cg/cgroup.procs" && exec nsenter --net="/run/netns/$NS_SBX" "$@")
}

# ------------------------------------------------------------------ probes

# probe CG MODE ADDR [PORT]: print the probe's verdict; returns its status.
probe() {
	local cg=$1
	shift
	sbx "$cg" "$PYTHON" "$PROBE" "$@" 2>&1
}

_expect_probe() {
	local want=$1 cg=$2
	shift 2
	local out rc
	out=$(probe "$cg" "$@")
	rc=$?
	echo "$out"
	case $want in
	ok) [ $rc -eq 0 ] || fail "expected $* to succeed, got status $rc" ;;
	denied)
		[ $rc -eq 1 ] || fail "expected $* to be denied with EPERM, got status $rc"
		grep -q EPERM <<<"$out" || fail "expected EPERM for $*"
		;;
	notdenied) [ $rc -ne 1 ] || fail "expected $* not to be denied (EPERM), it was" ;;
	blocked) [ $rc -ne 0 ] || fail "expected $* to fail (denied or no answer), it succeeded" ;;
	esac
}

# expect_ok CG MODE ADDR [PORT]: the operation succeeds (connected and echoed, ...).
expect_ok() { _expect_probe ok "$@"; }
# expect_denied CG MODE ADDR [PORT]: refused with EPERM.
expect_denied() { _expect_probe denied "$@"; }
# expect_not_denied CG MODE ADDR [PORT]: anything but EPERM/EACCES (no route is fine).
expect_not_denied() { _expect_probe notdenied "$@"; }

# expect CG "WANT MODE ADDR [PORT]"...: several probes in one Python process
# (cheaper under emulation). WANT: ok, denied (EPERM), notdenied, blocked.
expect() {
	local cg=$1
	shift
	local out rc
	out=$(sbx "$cg" "$PYTHON" "$PROBE" --batch "$@" 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 0 ] || fail "a probe did not get the expected verdict (see MISMATCH above)"
}

# ------------------------------------------------------------------- bfbpf

# A daemon accepts a live vsock transport (--accept-vsock), but in the case that tests it.
DAEMON_ACCEPT_VSOCK=${DAEMON_ACCEPT_VSOCK:-1}

# bf ARGS...: the CLI, bounded in time; stdout, stderr as they are.
# `bf daemon ... &` execs the daemon itself, unbounded, so that $! is its pid.
bf() {
	if [ "${1:-}" = daemon ]; then
		[ "$DAEMON_ACCEPT_VSOCK" = 1 ] && set -- "$@" --accept-vsock
		if [ "$BASHPID" != "$$" ]; then exec "$BFBPF" "$@"; fi
		"$BFBPF" "$@"
		return
	fi
	timeout -k 5 "$CLI_TIMEOUT" "$BFBPF" "$@"
}

# bfs ARGS...: the CLI talking to this case's daemon.
bfs() { bf "$@" --socket "$SOCK"; }

# bf_ok ARGS...: a daemon command that must succeed.
bf_ok() {
	local out rc
	out=$(bfs "$@" 2>&1)
	rc=$?
	[ -n "$out" ] && echo "$out"
	[ $rc -eq 0 ] || fail "bfbpf $* exited $rc"
}

attach() {
	local cg=$1
	shift
	bf_ok attach --cgroup "$cg" "$@"
}

update() {
	local cg=$1
	shift
	bf_ok update --cgroup "$cg" "$@"
}

detach() { bf_ok detach --cgroup "$1"; }

daemon_start() {
	local accept=()
	[ "$DAEMON_ACCEPT_VSOCK" = 1 ] && accept=(--accept-vsock)
	# Started directly (not through a function or timeout): $! is the daemon itself.
	"$BFBPF" daemon --socket "$SOCK" --bpffs "$PINS" --log-level debug "${accept[@]}" >>"$CASEDIR/daemon.log" 2>&1 &
	DAEMON_PID=$!
	defer "daemon_stop $DAEMON_PID"
}

daemon_wait() {
	local n=0
	while :; do
		if [ -S "$SOCK" ] && bf status --socket "$SOCK" --json >/dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
			fail "bfbpf daemon exited during start (see daemon.log)"
		fi
		n=$((n + 1))
		if [ $n -gt 600 ]; then
			fail "bfbpf daemon not ready after 30 s (see daemon.log)"
		fi
		sleep 0.05
	done
}

daemon_stop() {
	local pid=$1 n=0
	kill -TERM "$pid" 2>/dev/null || return 0
	while kill -0 "$pid" 2>/dev/null; do
		n=$((n + 1))
		if [ $n -gt 100 ]; then
			kill -KILL "$pid" 2>/dev/null
			break
		fi
		sleep 0.05
	done
	wait "$pid" 2>/dev/null
}

# daemon_up: this case's daemon (own socket, own bpffs directory), ready.
# On cleanup every cgroup of the case is detached before the daemon stops,
# and the pins are removed after.
daemon_up() {
	[ -x "$BFBPF" ] || fail "$BFBPF is missing (run make)"
	defer "rm -rf '$PINS'"
	defer "rm -f '$SOCK'"
	daemon_start
	defer "detach_all"
	daemon_wait
}

detach_all() {
	local d
	[ -d "$CG" ] || return 0
	# shellcheck disable=SC2044 # the tests' cgroup paths have no blanks
	for d in $(find "$CG" -type d); do
		bfs detach --cgroup "$d" >/dev/null 2>&1
	done
}

# json_check FILE PYEXPR: PYEXPR (with d = the parsed JSON, os imported) must be true.
json_check() {
	local file=$1 expr=$2
	"$PYTHON" - "$file" "$expr" <<'EOF'
import json, os, sys
text = open(sys.argv[1]).read()
try:
    d = json.loads(text)
except ValueError as e:
    print(f"not one JSON object: {e}: {text!r}")
    sys.exit(1)
if not eval("(" + sys.argv[2].strip() + ")"):
    print(f"JSON check failed: {sys.argv[2]}\n{json.dumps(d, indent=1)}")
    sys.exit(1)
EOF
}

# status_json FILE [CG]: `bfbpf status --json` into FILE.
status_json() {
	local file=$1
	shift
	if [ $# -gt 0 ]; then
		bfs status --cgroup "$1" --json >"$file" 2>"$file.err"
	else
		bfs status --json >"$file" 2>"$file.err"
	fi
	local rc=$?
	cat "$file" "$file.err"
	echo
	[ $rc -eq 0 ] || fail "bfbpf status exited $rc"
}

# The Python expression "sandbox s is cgroup CG" (by id, and path absolute or mount-relative).
sb_is() {
	local cg=$1
	echo "(s.get('cgroup_id') == $(cg_id "$cg") and s.get('cgroup') in ('$cg', '${cg#"$CGROOT"}', '${cg#"$CGROOT"/}'))"
}

# expect_listed CG [PYEXPR about s]: status lists CG (and PYEXPR holds for its entry).
expect_listed() {
	local cg=$1 extra=${2:-True}
	local f=$CASEDIR/status.$RANDOM.json
	status_json "$f"
	json_check "$f" "d.get('ok') is True and [s for s in d['sandboxes'] if $(sb_is "$cg") and ($extra)]" ||
		fail "status does not list $cg as expected"
}

expect_not_listed() {
	local cg=$1
	local f=$CASEDIR/status.$RANDOM.json
	status_json "$f"
	json_check "$f" "d.get('ok') is True and not [s for s in d['sandboxes'] if s.get('cgroup_id') == $(cg_id "$cg")]" ||
		fail "status still lists $cg"
}

# expect_status RC CMD...: run CMD, require exit status RC; stdout/stderr in $CASEDIR/last.{out,err}.
expect_status() {
	local want=$1
	shift
	"$@" >"$CASEDIR/last.out" 2>"$CASEDIR/last.err"
	local rc=$?
	echo "\$ $* -> $rc"
	sed 's/^/  out: /' "$CASEDIR/last.out"
	sed 's/^/  err: /' "$CASEDIR/last.err"
	[ "$rc" -eq "$want" ] || fail "expected exit status $want from: $*"
}

# expect_one_stderr_line NEEDLE: last.err is exactly one line and names NEEDLE.
expect_one_stderr_line() {
	local lines
	lines=$(grep -c . "$CASEDIR/last.err")
	[ "$lines" -eq 1 ] || fail "expected exactly one line on stderr, got $lines"
	grep -qF -- "$1" "$CASEDIR/last.err" || fail "stderr does not name '$1'"
}

# ---------------------------------------------------------------- one case

# case_main NAME INDEX: the body of a case's process (see run.sh).
case_main() {
	local name=$1 index=$2
	# shellcheck disable=SC2034 # for the cases
	CASE=$name
	CASEDIR=$WORKDIR/$name
	mkdir -p "$CASEDIR"
	NS_SRV=bfbpf-$RUNID-$index-srv
	NS_SBX=bfbpf-$RUNID-$index-sbx
	CG=$CGBASE/$name
	SOCK=$CASEDIR/bfbpf.sock
	PINS=$PINBASE/$name
	trap 'run_deferred' EXIT
	trap 'echo "interrupted"; exit 130' INT TERM
	cg_make "$CG"
	"test_$name"
}
