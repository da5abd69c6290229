#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `make bench`: bfbpf against the unfiltered path and an allowlisting proxy.
#
#   tools/bench/run.sh            the full run (about 17 minutes): writes docs/performance.md
#   tools/bench/run.sh --quick    the smoke run (seconds; CI): writes build/bench/quick.md
#
# Builds its own world and removes it on exit, even on failure:
#   namespaces  sbx (the sandbox: client side), srv (the servers), prx (tinyproxy)
#               sbx eth0 198.18.0.1 fd00::1  <-> srv eth0 198.18.0.2 .3 fd00::2 ::3
#               sbx eth1 198.18.1.1          <-> prx eth0 198.18.1.2 (tinyproxy :8888)
#               prx eth1 198.18.2.1          <-> srv eth1 198.18.2.2
#   cgroups     <cgroup2>/bfbpf-bench-PID/{plain,floor,b10,b10k,b10kw,upd,scale/sN}
#   daemons     a copy of build/bfbpf (taken at the start), its socket in a temporary
#               directory, its pins in /sys/fs/bpf/bfbpf-bench-PID; the benchmarks 5-7
#               start more daemons, pins in /sys/fs/bpf/bfbpf-bench-PID-NAME
#   floor       tools/bench/floor.bpf.c, an egress program that allows everything, on the
#               cgroup floor (pinned in /sys/fs/bpf/bfbpf-bench-PID-floor): the kernel's
#               own cost of any cgroup_skb filter. It and the load generator bfbench.c
#               are built by `make bench-tools` into build/bench/
#   dnsmasq     two: on 127.0.0.1:P of the host (the daemons' --dns-server) and on
#               198.18.0.2:53 in srv (the sandbox's direct path), the same generated names
# All traffic stays inside these namespaces. Every loop is bounded in time and count.
#
# Benchmarks (each comparison interleaved: round 1 of every variant, then round 2 ...;
# rounds 1, 2, 3 ... start at variants 1, 2, 3 ... so that no variant always goes first):
#   1 connect   TCP connect + close per second (bfbench connect), variants
#               a (no filter), f (the floor), b10, b10k, b10kw (bfbpf), c10 (tinyproxy CONNECT)
#   2 bulk      iperf3 TCP and UDP, a / f / b10 / b10k / b10kw; HTTP download (curl) direct,
#               through bfbpf and through tinyproxy
#   3 update    round trip of an update between two N-entry policies (N = 100 ... 100,000),
#               idle and under a connect loop that counts wrong verdicts
#   4 scale     attach and verify many sandboxes of 100 entries: times, memory
#   5 names     attach of a policy naming 1,000 names (a local dnsmasq answers them):
#               wall time, every name resolved, the daemon's CPU during the resolution
#               and while idle between refreshes (verification every 5 s, and every hour)
#   6 dns       the DNS responder answering cached names to a sandbox process, against
#               the same queries to dnsmasq directly (no redirect): latency paced under
#               the responder's rate limit, answers/s in a closed loop, CPU per query
#   7 events    denied connects/s (UDP and TCP) from a sandbox, daemon with events on
#               against one with --no-events
#   8 containers real Podman (runc) and Docker (a dockerd of its own, as test-13 starts
#               it): the time the OCI hook adds to `podman run` and `docker run` (the
#               runtime wrapper) against no hook; the time from an attach/update to the
#               first refused connect inside a container; under a guard, from the mkdir
#               of a container's cgroup to its entrypoint's first (refused) connect
#               (tools/bench/containers.sh, tools/bench/bench_containers.py)
#   9 sweep     connect rate against the number of entries (SWEEP_SIZES), bfbpf and
#               tinyproxy with the same allowlist, beside a and f; tinyproxy's restart
#               time per size (tools/bench/sweep.sh). tools/bench/charts.py then draws
#               connect rate and update time against entries as SVG (gnuplot) from the
#               run's results: into docs/ (the full run) or build/bench/ (--quick)
#  10 sni       names bound to TLS: TCP connect + TLS handshake per second (tls_loop.py,
#               openssl s_server in srv on 198.18.0.2:443) and a TLS download (curl), from
#               a sandbox with the rule on against the unfiltered cgroup and the rule off
# BENCH_STEPS="5 6" runs only those benchmarks (the world is built all the same); its
# report goes to build/bench/steps.md, never to docs/performance.md.
# Exit status: 1 when a step could not run (a broken bench must fail CI); missed goals
# are reported in the output, never an exit status.

set -u
set -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BFBPF_BUILT=${BFBPF:-$ROOT/build/bfbpf}
BFBPF= # a copy of BFBPF_BUILT, taken at the start: the build may change during the run
OUT=$ROOT/build/bench
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=$(command -v python3); fi
BENCH_PY=$ROOT/tools/bench/bench.py
# the helper programs, built by `make bench-tools` (make bench passes their paths)
LOADGEN=${BFBENCH:-$OUT/bfbench}
FLOOR_OBJ=${BENCH_FLOOR:-$OUT/floor.bpf.o}

QUICK=0
for arg in "$@"; do
	case $arg in
	--quick) QUICK=1 ;;
	-h | --help)
		sed -n '3,/^$/{/^#/p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "bench: unknown argument $arg (use --quick or nothing)" >&2
		exit 2
		;;
	esac
done

if [ "$QUICK" = 1 ]; then
	CONNECT_ROUNDS=2 CONNECT_SECONDS=0.3
	BULK_ROUNDS=1 BULK_SECONDS=1
	HTTP_ROUNDS=1 HTTP_MIB=16
	UPDATE_SIZES=100,1000,10000,100000 UPDATE_ROUNDS=4 UPDATE_CLI_ROUNDS=2
	SCALE_COUNT=10 IDLE_SECONDS=1
	NAMES_COUNT=100 NAMES_ROUNDS=1 NAMES_IDLE=1
	DNS_ROUNDS=1 DNS_SECONDS=0.5 DNS_QUERY_NAMES=20
	EVENTS_ROUNDS=2 EVENTS_SECONDS=0.3
	CTR_ROUNDS=2 SNI_ROUNDS=2 SNI_SECONDS=0.5 SNI_MIB=16 SNI_REFUSED=3
	RESULTS=$OUT/quick.jsonl REPORT=$OUT/quick.md
else
	CONNECT_ROUNDS=11 CONNECT_SECONDS=2
	BULK_ROUNDS=7 BULK_SECONDS=3
	HTTP_ROUNDS=5 HTTP_MIB=1024
	UPDATE_SIZES=100,1000,10000,100000 UPDATE_ROUNDS=30 UPDATE_CLI_ROUNDS=10
	SCALE_COUNT=1000 IDLE_SECONDS=10
	NAMES_COUNT=1000 NAMES_ROUNDS=3 NAMES_IDLE=10
	DNS_ROUNDS=5 DNS_SECONDS=5 DNS_QUERY_NAMES=100
	EVENTS_ROUNDS=7 EVENTS_SECONDS=2
	CTR_ROUNDS=11 SNI_ROUNDS=7 SNI_SECONDS=3 SNI_MIB=512 SNI_REFUSED=15
	RESULTS=$OUT/results.jsonl REPORT=$ROOT/docs/performance.md
fi
if [ -n "${BENCH_STEPS:-}" ] && [ "$QUICK" = 0 ]; then
	# a partial run never replaces the published figures
	RESULTS=$OUT/steps.jsonl REPORT=$OUT/steps.md
fi
CONNECT_THREADS=${BENCH_THREADS:-2}
CONNECT_CONCURRENCY=${BENCH_CONCURRENCY:-16}
NAMES_TTL=60     # dnsmasq's --local-ttl: the daemons refresh the names every minute
DNS_RATE=100     # paced queries/s: under the responder's limit (200/s, bursts of 400)
DNS_INFLIGHT=16  # the closed loop's queries in flight

ID=$$
NS_SBX=bfbench-$ID-sbx
NS_SRV=bfbench-$ID-srv
NS_PRX=bfbench-$ID-prx
BPFFS=/sys/fs/bpf/bfbpf-bench-$ID
TMP=
CGB=
DAEMON_PID=
PIDS=()
DNSMASQ_PIDS=()
FAILED=()
START=$(date +%s)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

say() { echo "bench: $*"; }
warn() { echo "bench: $*" >&2; }
die() {
	warn "$*"
	exit 1
}

# benchmark 8 (real containers), its cleanup part of the one below
# shellcheck source=tools/bench/containers.sh
. "$ROOT/tools/bench/containers.sh"

cleanup() {
	local pid cg
	ctrb_cleanup
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	if [ -n "$DAEMON_PID" ]; then
		kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
	fi
	for pid in "${DNSMASQ_PIDS[@]}"; do
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	ip netns del "$NS_SBX" 2>/dev/null
	ip netns del "$NS_PRX" 2>/dev/null
	ip netns del "$NS_SRV" 2>/dev/null
	[ -d "$BPFFS" ] && rm -rf "$BPFFS"
	for dir in "$BPFFS"-*; do [ -d "$dir" ] && rm -rf "$dir"; done
	if [ -n "$CGB" ] && [ -d "$CGB" ]; then
		# whatever is left in the bench's cgroups is the bench's: kill it, then
		# remove the cgroups, children first
		for cg in $(find "$CGB" -mindepth 1 -type d | sort -r); do
			[ -s "$cg/cgroup.procs" ] && echo 1 >"$cg/cgroup.kill" 2>/dev/null
		done
		for cg in $(find "$CGB" -mindepth 1 -type d | sort -r); do
			for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
		done
		rmdir "$CGB" 2>/dev/null || warn "could not remove $CGB"
	fi
	[ -n "$TMP" ] && rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || die "run me as root (network namespaces, cgroups, BPF)"
[ -x "$BFBPF_BUILT" ] || die "$BFBPF_BUILT is missing: run make first"
[ -x "$LOADGEN" ] || die "$LOADGEN is missing: run make bench-tools"
[ -f "$FLOOR_OBJ" ] || die "$FLOOR_OBJ is missing: run make bench-tools"
for tool in ip nsenter iperf3 tinyproxy curl bpftool dnsmasq "$PY"; do
	command -v "$tool" >/dev/null || die "$tool is missing: run make deps"
done

mkdir -p "$OUT"
: >"$RESULTS"
TMP=$(mktemp -d /tmp/bfbpf-bench.XXXXXX)
BFBPF=$TMP/bfbpf
cp "$BFBPF_BUILT" "$BFBPF" || die "cannot copy $BFBPF_BUILT"

# ---------------------------------------------------------------- world

CG2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
[ -n "$CG2" ] || die "no cgroup2 mount in /proc/self/mountinfo"
CGB=$CG2/bfbpf-bench-$ID
mkdir "$CGB" || die "cannot create $CGB"
for cg in plain floor b10 b10k b10kw upd scale names dns dns-small ev-on ev-off; do mkdir "$CGB/$cg" || die "cannot create $CGB/$cg"; done

[ -d /sys/module/veth ] || modprobe veth 2>/dev/null
mkdir -p /run/netns
for ns in "$NS_SBX" "$NS_SRV" "$NS_PRX"; do
	ip netns add "$ns" || die "cannot create network namespace $ns"
done
# shellcheck disable=SC2015 # die when any of the steps fails
ip -n "$NS_SBX" link add eth0 type veth peer name eth0 netns "$NS_SRV" &&
	ip -n "$NS_SBX" link add eth1 type veth peer name eth0 netns "$NS_PRX" &&
	ip -n "$NS_PRX" link add eth1 type veth peer name eth1 netns "$NS_SRV" ||
	die "cannot create the veth pairs"
ip -n "$NS_SBX" addr add 198.18.0.1/24 dev eth0
ip -n "$NS_SBX" addr add fd00::1/64 dev eth0 nodad
ip -n "$NS_SBX" addr add 198.18.1.1/24 dev eth1
ip -n "$NS_SRV" addr add 198.18.0.2/24 dev eth0
ip -n "$NS_SRV" addr add 198.18.0.3/24 dev eth0
ip -n "$NS_SRV" addr add fd00::2/64 dev eth0 nodad
ip -n "$NS_SRV" addr add fd00::3/64 dev eth0 nodad
ip -n "$NS_SRV" addr add 198.18.2.2/24 dev eth1
ip -n "$NS_PRX" addr add 198.18.1.2/24 dev eth0
ip -n "$NS_PRX" addr add 198.18.2.1/24 dev eth1
for ns in "$NS_SBX" "$NS_SRV" "$NS_PRX"; do
	ip -n "$ns" link set lo up
	for dev in eth0 eth1; do ip -n "$ns" link set "$dev" up 2>/dev/null; done
	# tens of thousands of short connections a second: wide port range, TIME_WAIT reuse
	ip netns exec "$ns" sysctl -q -w net.ipv4.ip_local_port_range="1024 65535" \
		net.ipv4.tcp_tw_reuse=1 net.core.somaxconn=4096 net.ipv4.tcp_max_syn_backlog=4096 ||
		die "cannot set sysctls in $ns"
done

# Both exec: call them in a subshell ($(...), ( ... ) or &) so that $! is the command.
in_ns() { # NS CMD...: run CMD in a network namespace (host mounts, this cgroup)
	local ns=$1
	shift
	exec nsenter --net=/run/netns/"$ns" "$@"
}
in_sandbox() { # CGROUP CMD...: join CGROUP first, then the sandbox's network namespace
	local cg=$1
	shift
	exec bash -c 'echo $BASHPID >"$1/cgroup.procs" && shift && exec nsenter --net=/run/netns/'"$NS_SBX"' "$@"' \
		_ "$cg" "$@"
}
record() { echo "$1" >>"$RESULTS"; }
step() { # NAME FUNCTION: runs a benchmark; a failure is remembered, the run goes on
	local name=$1 t0=$SECONDS
	shift
	if [ -n "${BENCH_STEPS:-}" ] && [[ " $BENCH_STEPS " != *" ${name%%.*} "* ]]; then
		say "== $name: skipped (BENCH_STEPS=$BENCH_STEPS)"
		return 0
	fi
	say "== $name"
	if "$@"; then
		say "   $name: done in $((SECONDS - t0)) s"
	else
		warn "   $name: FAILED"
		FAILED+=("$name")
	fi
}
jget() { "$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2], {}, {"d": d}))' "$1" "$2"; }

# servers
in_ns "$NS_SRV" "$LOADGEN" serve 9000 &
PIDS+=($!)
in_ns "$NS_SRV" "$LOADGEN" httpd 8080 &
PIDS+=($!)
# iperf3's two ends on CPUs of their own (where there are two): unpinned, the
# scheduler's placement of sender, receiver and softirqs moved the UDP figure
# by several percent from round to round, more than the effect measured
IPERF_CLIENT_CPU=() IPERF_SERVER_CPU=()
if [ "$(nproc)" -ge 2 ]; then
	IPERF_CLIENT_CPU=(taskset -c 0) IPERF_SERVER_CPU=(taskset -c 1)
fi
in_ns "$NS_SRV" "${IPERF_SERVER_CPU[@]}" iperf3 --server --port 5201 >"$TMP/iperf3-server.log" 2>&1 &
PIDS+=($!)

# the daemons: --accept-vsock, because on a host with a live vsock transport and no BPF LSM
# verify fails its vsock check otherwise (docs/threat-model.md); the bench measures the rest.
"$BFBPF" daemon --socket "$TMP/s" --bpffs "$BPFFS" --log-level warn --accept-vsock \
	2>"$TMP/daemon.log" &
DAEMON_PID=$!
for _ in $(seq 100); do
	[ -S "$TMP/s" ] && break
	kill -0 "$DAEMON_PID" 2>/dev/null || break
	sleep 0.05
done
[ -S "$TMP/s" ] || die "the daemon did not start: $(tail -3 "$TMP/daemon.log")"
export BFBPF_SOCKET=$TMP/s

# names (benchmarks 5 and 6): NAMES_COUNT names with distinct addresses, answered by
# two dnsmasq with the same hosts file: one on the host's loopback for the daemons
# (--dns-server), one in srv on 198.18.0.2:53 for the sandbox's direct path
"$PY" "$BENCH_PY" names --count "$NAMES_COUNT" --hosts "$TMP/names.hosts" \
	--list "$TMP/names.list" --policy "$TMP/names.json" >/dev/null || die "cannot generate the names"
DNS_PORT=$("$PY" -c '
import socket
for _ in range(50):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 0))
    port = u.getsockname()[1]
    t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        t.bind(("127.0.0.1", port))
    except OSError:
        continue
    print(port)
    break')
[ -n "$DNS_PORT" ] || die "no free port for dnsmasq on 127.0.0.1"
dnsmasq_args=(--keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts
	--addn-hosts="$TMP/names.hosts" --bind-interfaces --local-ttl="$NAMES_TTL"
	--pid-file= --user=root --cache-size=10000)
dnsmasq "${dnsmasq_args[@]}" --listen-address=127.0.0.1 --port="$DNS_PORT" \
	>"$TMP/dnsmasq-host.log" 2>&1 &
DNSMASQ_PIDS+=($!)
in_ns "$NS_SRV" dnsmasq "${dnsmasq_args[@]}" --listen-address=198.18.0.2 --port=53 \
	>"$TMP/dnsmasq-srv.log" 2>&1 &
DNSMASQ_SRV_PID=$!
DNSMASQ_PIDS+=($!)

# more daemons (benchmarks 5-7): NAME gets its socket, pins and state directory
start_daemon() { # NAME ARGS...: sets DPID
	local name=$1
	shift
	"$BFBPF" daemon --socket "$TMP/$name.sock" --bpffs "$BPFFS-$name" \
		--state-dir "$TMP/state-$name" --log-level warn --accept-vsock "$@" \
		2>>"$TMP/daemon-$name.log" &
	DPID=$!
	PIDS+=("$DPID")
	for _ in $(seq 100); do
		[ -S "$TMP/$name.sock" ] && return 0
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.05
	done
	warn "daemon $name did not start: $(tail -3 "$TMP/daemon-$name.log")"
	return 1
}
stop_daemon() { # NAME PID: stops it and removes its pins (detach its sandboxes first)
	kill "$2" 2>/dev/null && wait "$2" 2>/dev/null
	rm -rf "${BPFFS:?}-$1" "$TMP/$1.sock"
}

# policies: the server's addresses plus generated entries (tools/bench/bench.py policy)
policy() { # NAME COUNT SEED FIXED...
	local name=$1 count=$2 seed=$3
	shift 3
	local fixed=()
	for f in "$@"; do fixed+=(--fixed "$f"); done
	"$PY" "$BENCH_PY" policy --count "$count" --seed "$seed" "${fixed[@]}" \
		--out "$TMP/$name.json" --filter "$TMP/$name.filter" >/dev/null ||
		die "cannot generate policy $name"
}
policy b10 10 1 198.18.0.2 fd00::2
policy b10k 10000 2 198.18.0.2 fd00::2
# worst case: the server matches only a CIDR with a port, so every packet costs
# four lookups (exact any-port, prefix any-port, exact port, prefix port)
policy b10kw 10000 3 198.18.0.0/30:9000 198.18.0.0/30:5201 198.18.0.0/30:8080 \
	'[fd00::/126]:9000' '[fd00::/126]:5201' '[fd00::/126]:8080'
policy c10 10 1 198.18.2.2
for v in b10 b10k b10kw; do
	"$BFBPF" attach --cgroup "$CGB/$v" --policy "$TMP/$v.json" >/dev/null ||
		die "cannot attach $v"
	"$BFBPF" verify --cgroup "$CGB/$v" >/dev/null || die "verify of $v failed: not locked down"
done

# the floor: any per-packet cgroup filter costs at least what this one does
# shellcheck disable=SC2015 # die when any of the steps fails
mkdir "$BPFFS-floor" && bpftool prog load "$FLOOR_OBJ" "$BPFFS-floor/prog" type cgroup/skb &&
	bpftool cgroup attach "$CGB/floor" egress pinned "$BPFFS-floor/prog" ||
	die "cannot attach the floor program to $CGB/floor"

# tinyproxy, configured with the same allowlist, tuned (no logging, many clients)
cat >"$TMP/tinyproxy.conf" <<EOF
User root
Group root
Port 8888
Listen 198.18.1.2
Timeout 30
LogLevel Critical
PidFile "$TMP/tinyproxy.pid"
MaxClients 4096
Allow 198.18.1.0/24
ConnectPort 9000
ConnectPort 8080
DisableViaHeader Yes
FilterDefaultDeny Yes
FilterExtended On
FilterURLs Off
Filter "$TMP/c10.filter"
EOF
in_ns "$NS_PRX" tinyproxy -d -c "$TMP/tinyproxy.conf" >"$TMP/tinyproxy.log" 2>&1 &
PIDS+=($!)

# wait for the servers
wait_port() { # NS ADDR PORT
	for _ in $(seq 100); do
		(in_ns "$1" bash -c "exec 3<>/dev/tcp/$2/$3") 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
wait_port "$NS_SRV" 198.18.0.2 9000 || die "the connect server did not start"
wait_port "$NS_SRV" 198.18.0.2 8080 || die "the HTTP server did not start"
wait_port "$NS_SRV" 198.18.0.2 5201 || die "iperf3 did not start"
wait_port "$NS_SBX" 198.18.1.2 8888 || die "tinyproxy did not start: $(tail -3 "$TMP/tinyproxy.log")"
wait_dns() { # NS|- SERVER PORT: dnsmasq answers the first name (-: the host's namespace)
	local run=(in_ns "$1")
	[ "$1" = - ] && run=(exec)
	for _ in $(seq 100); do
		("${run[@]}" "$LOADGEN" dns --server "$2:$3" --names "$TMP/names.list" --max 1 \
			--timeout-ms 200) >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}
wait_dns - 127.0.0.1 "$DNS_PORT" || die "dnsmasq on 127.0.0.1:$DNS_PORT did not start: $(tail -3 "$TMP/dnsmasq-host.log")"
wait_dns "$NS_SBX" 198.18.0.2 53 || die "dnsmasq in srv did not start: $(tail -3 "$TMP/dnsmasq-srv.log")"
say "world ready: namespaces $NS_SBX $NS_SRV $NS_PRX, cgroups under $CGB, daemon pid $DAEMON_PID"

# ---------------------------------------------------------------- 1. connect rate

cg_of() { case $1 in a | c*) echo "$CGB/plain" ;; f) echo "$CGB/floor" ;; *) echo "$CGB/$1" ;; esac; }

# rotated ROUND V...: the variants, starting at a different one each round. A
# fixed order favours whichever runs first in a round (measured: ~5% on the
# connect rate here); rotating gives every variant every place alike.
rotated() {
	local round=$1
	shift
	local variants=("$@") n=$# k
	for ((k = 0; k < n; k++)); do echo "${variants[$(((k + round - 1) % n))]}"; done
}

bench_connect() {
	local round v out proxy
	# sanity: a denied destination is refused
	if (in_sandbox "$CGB/b10" "$LOADGEN" connect --target 198.18.0.3:9000 --seconds 0.2 \
		--max 10) >/dev/null 2>&1; then
		warn "connect: a denied destination was reached from b10"
		return 1
	fi
	for round in $(seq "$CONNECT_ROUNDS"); do
		for v in $(rotated "$round" a f b10 b10k b10kw c10); do
			proxy=()
			[ "${v:0:1}" = c ] && proxy=(--proxy 198.18.1.2:8888)
			local target=198.18.0.2:9000
			[ "${v:0:1}" = c ] && target=198.18.2.2:9000
			out=$(in_sandbox "$(cg_of "$v")" "$LOADGEN" connect --target "$target" "${proxy[@]}" \
				--seconds "$CONNECT_SECONDS" --threads "$CONNECT_THREADS" \
				--concurrency "$CONNECT_CONCURRENCY") || {
				warn "connect $v round $round failed: $out"
				return 1
			}
			record "{\"bench\":\"connect\",\"variant\":\"$v\",\"round\":$round,${out#\{}"
			say "   round $round $v: $(jget "$out" 'round(d["rate"])')/s"
		done
	done
}

# ---------------------------------------------------------------- 2. bulk

bench_bulk() {
	local round v proto out flags bps loss
	for round in $(seq "$BULK_ROUNDS"); do
		for proto in tcp udp; do
			for v in $(rotated "$round" a f b10 b10k b10kw); do
				flags=()
				[ "$proto" = udp ] && flags=(--udp --bitrate 0 --length 1400)
				out=$(in_sandbox "$(cg_of "$v")" "${IPERF_CLIENT_CPU[@]}" iperf3 --client 198.18.0.2 --port 5201 \
					--time "$BULK_SECONDS" --json "${flags[@]}" 2>&1) || {
					warn "iperf3 $proto $v failed: $(echo "$out" | grep -m1 error)"
					return 1
				}
				read -r bps loss < <("$PY" -c '
import json, sys
e = json.load(sys.stdin)["end"]
s = e.get("sum_received") if "sum_received" in e else e["sum"]
print(s["bits_per_second"], e.get("sum", {}).get("lost_percent", 0))' <<<"$out") || {
					warn "iperf3 $proto $v: unreadable output"
					return 1
				}
				record "{\"bench\":\"bulk\",\"proto\":\"$proto\",\"variant\":\"$v\",\"round\":$round,\"bps\":$bps,\"lost_percent\":$loss}"
				say "   round $round $proto $v: $(awk -v b="$bps" 'BEGIN { printf "%.2f", b / 1e9 }') Gbit/s"
			done
		done
	done
	local bytes=$((HTTP_MIB * 1048576))
	for round in $(seq "$HTTP_ROUNDS"); do
		for v in $(rotated "$round" a b10k c10); do
			local args=("http://198.18.0.2:8080/bytes/$bytes")
			[ "$v" = c10 ] && args=(--proxytunnel --proxy http://198.18.1.2:8888 "http://198.18.2.2:8080/bytes/$bytes")
			out=$(in_sandbox "$(cg_of "$v")" curl --silent --show-error --fail --max-time 120 \
				--noproxy '' -o /dev/null -w '%{size_download} %{speed_download}' "${args[@]}") || {
				warn "curl $v failed: $out"
				return 1
			}
			read -r size bps <<<"$out"
			[ "$size" = "$bytes" ] || {
				warn "curl $v: got $size bytes of $bytes"
				return 1
			}
			record "{\"bench\":\"http\",\"variant\":\"$v\",\"round\":$round,\"mib\":$HTTP_MIB,\"bps\":$bps}"
			say "   round $round http $v: $(awk -v b="$bps" 'BEGIN { printf "%.0f", b / 1e6 }') MB/s"
		done
	done
}

# ---------------------------------------------------------------- 3. update

bench_update() {
	local n out vpid verdicts updates
	for n in ${UPDATE_SIZES//,/ }; do
		# A and B share only the bench's probes: 198.18.0.2 / fd00::2 allowed by both
		# (any port in A, port 9000 in B), 198.18.0.3 / fd00::3 denied by both
		policy "upd-a-$n" "$n" $((100 + n % 97)) 198.18.0.2 fd00::2
		policy "upd-b-$n" "$n" $((200 + n % 89)) 198.18.0.2:9000 '[fd00::2]:9000'
	done
	"$BFBPF" attach --cgroup "$CGB/upd" --policy "$TMP/upd-a-100.json" >/dev/null || return 1
	out=$("$PY" "$BENCH_PY" update-timing --socket "$TMP/s" --cgroup "$CGB/upd" \
		--sizes "$UPDATE_SIZES" --rounds "$UPDATE_ROUNDS" --cli-rounds "$UPDATE_CLI_ROUNDS" \
		--bfbpf "$BFBPF" --dir "$TMP" --tag idle) || {
		warn "update timing failed: $out"
		return 1
	}
	record "{\"bench\":\"update\",${out#\{}"
	say "   idle: $out"
	# the same under a connect loop that checks every verdict
	in_sandbox "$CGB/upd" "$LOADGEN" verdicts --allow '198.18.0.2:9000,[fd00::2]:9000' \
		--deny '198.18.0.3:9000,[fd00::3]:9000' --seconds 600 >"$TMP/verdicts.json" &
	vpid=$!
	sleep 0.3
	out=$("$PY" "$BENCH_PY" update-timing --socket "$TMP/s" --cgroup "$CGB/upd" \
		--sizes "$UPDATE_SIZES" --rounds "$UPDATE_ROUNDS" --dir "$TMP" \
		--tag "under a connect loop") || {
		kill "$vpid"
		wait "$vpid"
		warn "update timing under load failed: $out"
		return 1
	}
	sleep 0.3
	kill -TERM "$vpid"
	wait "$vpid" || {
		warn "the verdict loop failed: $(cat "$TMP/verdicts.json")"
		return 1
	}
	record "{\"bench\":\"update\",${out#\{}"
	verdicts=$(cat "$TMP/verdicts.json")
	updates=$("$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); print(sum(s.get("socket_ms",{}).get("n",0)+1 for s in d["sizes"].values()))' "$out")
	record "{\"bench\":\"atomic\",\"updates\":$updates,\"verdicts\":$verdicts}"
	say "   under load: $out"
	say "   verdicts during $updates updates: $verdicts"
	"$BFBPF" detach --cgroup "$CGB/upd" >/dev/null || return 1
}

# ---------------------------------------------------------------- 4. scale

bench_scale() {
	local i cgf=$TMP/scale-cgroups out attach verify detach before after c0 c1
	: >"$cgf"
	for i in $(seq 0 $((SCALE_COUNT - 1))); do
		mkdir "$CGB/scale/s$i" || return 1
		echo "$CGB/scale/s$i" >>"$cgf"
	done
	# scale-I.json: 100 entries, seed 1000 + I: every sandbox its own policy
	"$PY" "$BENCH_PY" policy --count 100 --seed 1000 --many "$SCALE_COUNT" --fixed 198.18.0.2 \
		--out "$TMP/scale-%d.json" >/dev/null || return 1
	# the other sandboxes go first, so that the maps hold the scale test alone
	for v in b10 b10k b10kw; do "$BFBPF" detach --cgroup "$CGB/$v" >/dev/null || return 1; done
	before=$("$PY" "$BENCH_PY" memory --bpffs "$BPFFS" --pid "$DAEMON_PID") || return 1
	attach=$("$PY" "$BENCH_PY" attach-many --socket "$TMP/s" --cgroups-file "$cgf" \
		--policy-dir "$TMP") || {
		warn "attach failed: $attach"
		return 1
	}
	say "   attach: $attach"
	verify=$("$PY" "$BENCH_PY" verify-many --socket "$TMP/s" --cgroups-file "$cgf") || {
		warn "verify failed: $verify"
		return 1
	}
	say "   verify: $verify"
	after=$("$PY" "$BENCH_PY" memory --bpffs "$BPFFS" --pid "$DAEMON_PID") || return 1
	say "   memory: $after"
	c0=$(jget "$after" 'd["cpu_seconds"]')
	sleep "$IDLE_SECONDS"
	c1=$("$PY" "$BENCH_PY" memory --bpffs "$BPFFS" --pid "$DAEMON_PID" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["cpu_seconds"])')
	detach=$("$PY" "$BENCH_PY" detach-many --socket "$TMP/s" --cgroups-file "$cgf") || {
		warn "detach failed: $detach"
		return 1
	}
	say "   detach: $detach"
	record "{\"bench\":\"scale\",\"count\":$SCALE_COUNT,\"attach\":$attach,\"verify\":$verify,\"detach\":$detach,\"memory_before\":$before,\"memory_after\":$after,\"idle_seconds\":$IDLE_SECONDS,\"idle_cpu_percent\":$(awk -v a="$c0" -v b="$c1" -v s="$IDLE_SECONDS" 'BEGIN { printf "%.2f", (b - a) * 100 / s }')}"
}

# ---------------------------------------------------------------- 5. names

bench_names() {
	local round v name out pid flags
	for round in $(seq "$NAMES_ROUNDS"); do
		# a fresh daemon each time, so that every attach resolves every name
		for v in verify5 verify3600; do
			flags=()
			[ "$v" = verify3600 ] && flags=(--verify-interval 3600)
			name=names-$round-$v
			start_daemon "$name" --dns-server "127.0.0.1:$DNS_PORT" "${flags[@]}" || return 1
			pid=$DPID
			out=$("$PY" "$BENCH_PY" names-attach --socket "$TMP/$name.sock" --cgroup "$CGB/names" \
				--netns "/run/netns/$NS_SBX" --policy "$TMP/names.json" --pid "$pid" \
				--idle "$NAMES_IDLE") || {
				warn "names $v round $round failed: $out"
				stop_daemon "$name" "$pid"
				return 1
			}
			stop_daemon "$name" "$pid"
			record "{\"bench\":\"names\",\"variant\":\"$v\",\"round\":$round,\"ttl\":$NAMES_TTL,${out#\{}"
			say "   round $round $v: attach $(jget "$out" 'round(d["attach_ms"])') ms," \
				"$(jget "$out" 'd["unresolved"]') unresolved in the reply," \
				"all resolved after $(jget "$out" 'd["settled_s"] and round(d["settled_s"], 1)') s," \
				"CPU $(jget "$out" 'd["attach_cpu"]["cpu_s"]') s, idle $(jget "$out" 'd["idle_cpu"]["cpu_s"]') s" \
				"($(jget "$out" 'round(d["idle_cpu"]["sched_s"] * 1000, 2)') ms) over $NAMES_IDLE s"
		done
	done
}

# ---------------------------------------------------------------- 6. DNS responder

cpu_now() { "$PY" "$BENCH_PY" cpu --pid "$1" | "$PY" -c 'import json,sys; d=json.load(sys.stdin); v=list(d.values())[0]; print(v["sched_s"] if v["sched_s"] is not None else v["cpu_s"])'; }

bench_dns() {
	local round v mode out pid c0 c1 server_pid args
	# The per-sandbox rate limit (200/s by default) is a safety net, not the capacity
	# measured here: raised out of the way for this daemon.
	start_daemon dns --dns-server "127.0.0.1:$DNS_PORT" --verify-interval 3600 --min-ttl 3600 \
		--dns-rate 1000000 || return 1
	pid=$DPID
	out=$("$BFBPF" attach --cgroup "$CGB/dns" --policy "$TMP/names.json" \
		--netns "/run/netns/$NS_SBX" --socket "$TMP/dns.sock" --json) || {
		warn "attach of the DNS sandbox failed: $out"
		return 1
	}
	if [ "$(jget "$out" 'len(d["unresolved"])')" != 0 ]; then
		# (benchmark 5 reports it) the responder needs them all: wait for them
		say "   $(jget "$out" 'len(d["unresolved"])') names unresolved at attach; waiting for them"
		out=$("$PY" "$BENCH_PY" wait-names --socket "$TMP/dns.sock" --cgroup "$CGB/dns") || {
			warn "names still unresolved: $out"
			return 1
		}
		say "   every name resolved after $(jget "$out" 'round(d["seconds"], 1)') s more"
	fi
	head -n "$DNS_QUERY_NAMES" "$TMP/names.list" >"$TMP/dns-query.names"
	# bs: a second sandbox whose policy names only the queried names
	"$PY" -c 'import json,sys; json.dump({"network_mode": "allowlist", "allow_model_endpoint": False, "allowed_hosts": open(sys.argv[1]).read().split()}, open(sys.argv[2], "w"))' \
		"$TMP/dns-query.names" "$TMP/dns-small.json" || return 1
	out=$("$BFBPF" attach --cgroup "$CGB/dns-small" --policy "$TMP/dns-small.json" \
		--netns "/run/netns/$NS_SBX" --socket "$TMP/dns.sock" --json) || {
		warn "attach of the small DNS sandbox failed: $out"
		return 1
	}
	# warm up: each name once, through the responders (they learn them) and directly
	for v in b bs a; do
		out=$(in_sandbox "$(cg_of_dns "$v")" "$LOADGEN" dns --server 198.18.0.2:53 \
			--names "$TMP/dns-query.names" --rate "$DNS_RATE" --max "$DNS_QUERY_NAMES" \
			--seconds 30) || {
			warn "DNS warm-up $v failed: $out"
			return 1
		}
		[ "$(jget "$out" 'd["answered"]')" = "$DNS_QUERY_NAMES" ] || {
			warn "DNS warm-up $v: not every name answered: $out"
			return 1
		}
	done
	sleep 2 # (a full token bucket for the paced rounds, whatever the limit)
	for round in $(seq "$DNS_ROUNDS"); do
		for mode in paced flood; do
			for v in a b bs; do
				server_pid=$DNSMASQ_SRV_PID
				[ "$v" != a ] && server_pid=$pid
				args=(--rate "$DNS_RATE" --outstanding 64)
				[ "$mode" = flood ] && args=(--outstanding "$DNS_INFLIGHT" --timeout-ms 200)
				c0=$(cpu_now "$server_pid")
				out=$(in_sandbox "$(cg_of_dns "$v")" "$LOADGEN" dns --server 198.18.0.2:53 \
					--names "$TMP/dns-query.names" --seconds "$DNS_SECONDS" "${args[@]}") || {
					warn "DNS $mode $v round $round failed: $out"
					return 1
				}
				c1=$(cpu_now "$server_pid")
				record "{\"bench\":\"dns\",\"mode\":\"$mode\",\"variant\":\"$v\",\"round\":$round,\"query_names\":$DNS_QUERY_NAMES,\"inflight\":$DNS_INFLIGHT,\"server_cpu_s\":$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.6f", b - a }'),${out#\{}"
				say "   round $round $mode $v: $(jget "$out" 'round(d["rate"])') answers/s," \
					"p50 $(jget "$out" 'round(d["p50_us"])') µs, p99 $(jget "$out" 'round(d["p99_us"])') µs," \
					"$(jget "$out" 'd["timeouts"]') timeouts"
			done
		done
	done
	out=$("$PY" "$BENCH_PY" sandbox-status --socket "$TMP/dns.sock" --cgroup "$CGB/dns") || return 1
	record "{\"bench\":\"dns-counters\",\"variant\":\"b\",${out#\{}"
	say "   responder counters (b): $out"
	out=$("$PY" "$BENCH_PY" sandbox-status --socket "$TMP/dns.sock" --cgroup "$CGB/dns-small") || return 1
	record "{\"bench\":\"dns-counters\",\"variant\":\"bs\",${out#\{}"
	say "   responder counters (bs): $out"
	"$BFBPF" detach --cgroup "$CGB/dns" --socket "$TMP/dns.sock" >/dev/null || return 1
	"$BFBPF" detach --cgroup "$CGB/dns-small" --socket "$TMP/dns.sock" >/dev/null || return 1
	stop_daemon dns "$pid"
}
cg_of_dns() { case $1 in a) echo "$CGB/plain" ;; b) echo "$CGB/dns" ;; bs) echo "$CGB/dns-small" ;; esac; }

# ---------------------------------------------------------------- 7. events

bench_events() {
	local round proto v out on_pid off_pid order c0 c1 dpid
	# two daemons alike but for --no-events, each with a sandbox of the same policy
	start_daemon ev --dns-server "127.0.0.1:$DNS_PORT" || return 1
	on_pid=$DPID
	start_daemon noev --dns-server "127.0.0.1:$DNS_PORT" --no-events || return 1
	off_pid=$DPID
	"$BFBPF" attach --cgroup "$CGB/ev-on" --policy "$TMP/b10.json" --socket "$TMP/ev.sock" \
		>/dev/null || return 1
	"$BFBPF" attach --cgroup "$CGB/ev-off" --policy "$TMP/b10.json" --socket "$TMP/noev.sock" \
		>/dev/null || return 1
	"$BFBPF" verify --cgroup "$CGB/ev-on" --socket "$TMP/ev.sock" >/dev/null || return 1
	"$BFBPF" verify --cgroup "$CGB/ev-off" --socket "$TMP/noev.sock" >/dev/null || return 1
	for round in $(seq "$EVENTS_ROUNDS"); do
		# the order alternates from round to round
		order="on off"
		[ $((round % 2)) = 0 ] && order="off on"
		for proto in udp tcp; do
			for v in $order; do
				dpid=$on_pid
				[ "$v" = off ] && dpid=$off_pid
				c0=$(cpu_now "$dpid")
				out=$(in_sandbox "$CGB/ev-$v" "$LOADGEN" deny --target 198.18.0.3:9000 \
					--proto "$proto" --seconds "$EVENTS_SECONDS") || {
					warn "denied connects $proto events $v round $round failed: $out"
					return 1
				}
				c1=$(cpu_now "$dpid")
				record "{\"bench\":\"events\",\"proto\":\"$proto\",\"variant\":\"$v\",\"round\":$round,\"daemon_cpu_s\":$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.6f", b - a }'),${out#\{}"
				say "   round $round $proto events $v: $(jget "$out" 'round(d["rate"])') denied connects/s"
			done
		done
	done
	out=$("$PY" "$BENCH_PY" sandbox-status --socket "$TMP/ev.sock" --cgroup "$CGB/ev-on") || return 1
	record "{\"bench\":\"events-counters\",${out#\{}"
	say "   event counters (events on): $out"
	"$BFBPF" detach --cgroup "$CGB/ev-on" --socket "$TMP/ev.sock" >/dev/null || return 1
	"$BFBPF" detach --cgroup "$CGB/ev-off" --socket "$TMP/noev.sock" >/dev/null || return 1
	stop_daemon ev "$on_pid"
	stop_daemon noev "$off_pid"
}

# ---------------------------------------------------------------- 8. names bound to TLS

# sni_up: its own dnsmasq (sni-bench.test -> 198.18.0.2), daemon, TLS server and sandboxes
sni_up() {
	local port
	mkdir -p "$TMP/sni-www" "$CGB/sni-on" "$CGB/sni-off" || return 1
	echo "198.18.0.2 sni-bench.test" >"$TMP/sni.hosts"
	port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
		--addn-hosts="$TMP/sni.hosts" --bind-interfaces --listen-address=127.0.0.1 --port="$port" \
		--local-ttl=600 --pid-file= --user=root >"$TMP/dnsmasq-sni.log" 2>&1 &
	DNSMASQ_PIDS+=($!)
	wait_dns - 127.0.0.1 "$port" || true
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=sni-bench.test -keyout "$TMP/sni-key.pem" -out "$TMP/sni-cert.pem" \
		>/dev/null 2>&1 || return 1
	head -c $((SNI_MIB * 1048576)) /dev/zero >"$TMP/sni-www/big"
	(cd "$TMP/sni-www" && in_ns "$NS_SRV" openssl s_server -quiet -accept 198.18.0.2:443 -WWW \
		-cert "$TMP/sni-cert.pem" -key "$TMP/sni-key.pem" -naccept 1000000000) \
		>"$TMP/sni-server.log" 2>&1 &
	PIDS+=($!)
	start_daemon sni --dns-server "127.0.0.1:$port" || return 1
	SNI_PID=$DPID
	echo '{"network_mode":"allowlist","allowed_hosts":["sni-bench.test"]}' >"$TMP/sni-on.json"
	echo '{"network_mode":"allowlist","allowed_hosts":["sni-bench.test"],"sni":"off"}' \
		>"$TMP/sni-off.json"
	"$BFBPF" attach --cgroup "$CGB/sni-on" --policy "$TMP/sni-on.json" --socket "$TMP/sni.sock" \
		>/dev/null || return 1
	"$BFBPF" attach --cgroup "$CGB/sni-off" --policy "$TMP/sni-off.json" \
		--socket "$TMP/sni.sock" >/dev/null || return 1
	sleep 1 # the name's first answer
}

sni_cg() { case $1 in a) echo "$CGB/plain" ;; *) echo "$CGB/sni-$1" ;; esac; }

bench_sni() {
	local round v out speed
	sni_up || return 1
	for round in $(seq "$SNI_ROUNDS"); do
		for v in $(rotated "$round" a on off); do
			out=$(in_sandbox "$(sni_cg "$v")" "$PY" "$ROOT/tools/bench/tls_loop.py" --addr 198.18.0.2 \
				--name sni-bench.test --seconds "$SNI_SECONDS") || return 1
			[ "$(jget "$out" 'd["handshakes"]')" -gt 0 ] || {
				warn "sni: no handshake from $v: $out"
				return 1
			}
			record "{\"bench\":\"sni\",\"what\":\"handshake\",\"variant\":\"$v\",\"round\":$round,${out#\{}"
			say "   round $round handshakes $v: $(jget "$out" 'round(d["rate"])')/s"
		done
		for v in $(rotated "$round" a on off); do
			speed=$(in_sandbox "$(sni_cg "$v")" curl -sk --max-time 120 -o /dev/null \
				--resolve sni-bench.test:443:198.18.0.2 -w '%{speed_download}' \
				https://sni-bench.test/big) || return 1
			record "{\"bench\":\"sni\",\"what\":\"bulk\",\"variant\":\"$v\",\"round\":$round,\"bytes_per_s\":$speed}"
			say "   round $round TLS download $v: $(awk -v b="$speed" 'BEGIN { printf "%.0f", b * 8 / 1e6 }') Mbit/s"
		done
	done
	# sanity, last (s_server serves one connection at a time): with the rule on, another name to the same address is refused
	out=$(in_sandbox "$CGB/sni-on" timeout 10 "$PY" "$ROOT/tools/bench/tls_loop.py" --addr 198.18.0.2 \
		--name evil.test --seconds 0.5)
	[ "$(jget "$out" 'd["handshakes"]')" = 0 ] || {
		warn "sni: evil.test passed the rule: $out"
		return 1
	}
	# a refused flow fails fast: the wait from connect to the error the client sees
	out=$(in_sandbox "$CGB/sni-on" "$PY" "$ROOT/tools/bench/tls_loop.py" --addr 198.18.0.2 \
		--name evil.test --refused "$SNI_REFUSED") || return 1
	[ "$(jget "$out" 'd["handshakes"]')" = 0 ] || {
		warn "sni: a refused name got a handshake: $out"
		return 1
	}
	record "{\"bench\":\"sni\",\"what\":\"refused\",\"variant\":\"on\",${out#\{}"
	say "   refused flows: connect to error $(jget "$out" 'sorted(d["waits_ms"])[len(d["waits_ms"]) // 2]') ms (median of $SNI_REFUSED), $(jget "$out" 'd["timeouts"]') timeouts"
	"$BFBPF" detach --cgroup "$CGB/sni-on" --socket "$TMP/sni.sock" >/dev/null
	"$BFBPF" detach --cgroup "$CGB/sni-off" --socket "$TMP/sni.sock" >/dev/null
	stop_daemon sni "$SNI_PID"
}

step "1. connect rate" bench_connect
step "2. bulk throughput" bench_bulk
step "3. policy update" bench_update
step "4. scale" bench_scale
step "5. names" bench_names
step "6. DNS responder" bench_dns
step "7. events" bench_events
step "8. containers" bench_containers
# shellcheck disable=SC1091 # linted on its own
. "$ROOT/tools/bench/sweep.sh"
step "9. sweep" bench_sweep
step "10. names bound to TLS" bench_sni

kill -0 "$DAEMON_PID" 2>/dev/null || {
	warn "the daemon died during the bench: $(tail -5 "$TMP/daemon.log")"
	FAILED+=("daemon")
}

# ---------------------------------------------------------------- report

MACHINE=$OUT/machine.json
[ "$QUICK" = 1 ] && MACHINE=$OUT/quick-machine.json
"$PY" - "$MACHINE" "$BFBPF_BUILT" $(($(date +%s) - START)) "$LOAD_START" <<'EOF'
import json, os, platform, subprocess, sys, datetime
def run(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
    except Exception:
        return ""
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mem = next((int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal")), 0)
osname = next((l.split("=", 1)[1].strip().strip('"') for l in open("/etc/os-release") if l.startswith("PRETTY_NAME")), "?")
root = os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[2])))
rev = run("git", "-C", root, "describe", "--always", "--dirty")
m = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
     "host_kernel": platform.release(), "cpu": cpu, "cpus": os.cpu_count(),
     "memory": "%.0f GiB" % (mem / 1048576), "os": osname,
     "bfbpf": rev or "?", "tinyproxy": run("tinyproxy", "-v"),
     "iperf3": (run("iperf3", "--version").splitlines() or ["?"])[0],
     "curl": (run("curl", "--version").splitlines() or ["?"])[0].split(" (")[0],
     "dnsmasq": (run("dnsmasq", "--version").splitlines() or ["?"])[0].split("  ")[0],
     "duration": "%s s" % sys.argv[3],
     "load_average": "%s at the start, %s at the end (1, 5, 15 min)" % (
         sys.argv[4], " ".join(open("/proc/loadavg").read().split()[:3]))}
json.dump(m, open(sys.argv[1], "w"))
EOF
cmd="make bench" quick=()
[ "$QUICK" = 1 ] && cmd="make bench BENCH_QUICK=1" quick=(--quick)
"$PY" "$BENCH_PY" render --results "$RESULTS" --out "$REPORT" --machine "$MACHINE" \
	--command "$cmd" "${quick[@]}" || FAILED+=("report")
# the charts: beside the report (docs/ for the full run), from this run's results
"$PY" "$ROOT/tools/bench/charts.py" --results "$RESULTS" --out-dir "$(dirname "$REPORT")" \
	"${quick[@]}" || FAILED+=("charts")
say "report: $REPORT (raw results: $RESULTS)"
sed -n '/^## Goals/,/^## Connect rate, round/p' "$REPORT" | sed '$d'

if [ ${#FAILED[@]} -gt 0 ]; then
	warn "FAILED steps: ${FAILED[*]}"
	exit 1
fi
say "all steps ran (missed goals, if any, are listed above: they do not fail the run)"
exit 0
