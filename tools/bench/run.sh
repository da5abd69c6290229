#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `make bench`: bfbpf against the unfiltered path and an allowlisting proxy.
#
#   tools/bench/run.sh            the full run (about 10 minutes): writes docs/performance.md
#   tools/bench/run.sh --quick    the smoke run (seconds; CI): writes build/bench/quick.md
#
# Builds its own world and removes it on exit, even on failure:
#   namespaces  sbx (the sandbox: client side), srv (the servers), prx (tinyproxy)
#               sbx eth0 198.18.0.1 fd00::1  <-> srv eth0 198.18.0.2 .3 fd00::2 ::3
#               sbx eth1 198.18.1.1          <-> prx eth0 198.18.1.2 (tinyproxy :8888)
#               prx eth1 198.18.2.1          <-> srv eth1 198.18.2.2
#   cgroups     <cgroup2>/bfbpf-bench-PID/{plain,b10,b10k,b10kw,upd,scale/sN}
#   a daemon    build/bfbpf daemon, its socket in a temporary directory, its pins in
#               /sys/fs/bpf/bfbpf-bench-PID
# All traffic stays inside these namespaces. Every loop is bounded in time and count.
#
# Benchmarks (each comparison interleaved: round 1 of every variant, then round 2 ...):
#   1 connect   TCP connect + close per second (bfbench connect), variants
#               a (no filter), b10, b10k, b10kw (bfbpf), c10 (tinyproxy CONNECT)
#   2 bulk      iperf3 TCP and UDP, a / b10 / b10k / b10kw; HTTP download (curl) direct,
#               through bfbpf and through tinyproxy
#   3 update    round trip of an update between two N-entry policies (N = 100 ... 100,000),
#               idle and under a connect loop that counts wrong verdicts
#   4 scale     attach and verify many sandboxes of 100 entries: times, memory
# Exit status: 1 when a step could not run (a broken bench must fail CI); missed goals
# are reported in the output, never an exit status.

set -u
set -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BFBPF=${BFBPF:-$ROOT/build/bfbpf}
OUT=$ROOT/build/bench
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=$(command -v python3); fi
BENCH_PY=$ROOT/tools/bench/bench.py
LOADGEN=$OUT/bfbench

QUICK=0
for arg in "$@"; do
	case $arg in
	--quick) QUICK=1 ;;
	-h | --help)
		sed -n '3,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
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
	RESULTS=$OUT/quick.jsonl REPORT=$OUT/quick.md
else
	CONNECT_ROUNDS=11 CONNECT_SECONDS=2
	BULK_ROUNDS=5 BULK_SECONDS=4
	HTTP_ROUNDS=5 HTTP_MIB=1024
	UPDATE_SIZES=100,1000,10000,100000 UPDATE_ROUNDS=30 UPDATE_CLI_ROUNDS=10
	SCALE_COUNT=1000 IDLE_SECONDS=10
	RESULTS=$OUT/results.jsonl REPORT=$ROOT/docs/performance.md
fi
CONNECT_THREADS=${BENCH_THREADS:-2}
CONNECT_CONCURRENCY=${BENCH_CONCURRENCY:-16}

ID=$$
NS_SBX=bfbench-$ID-sbx
NS_SRV=bfbench-$ID-srv
NS_PRX=bfbench-$ID-prx
BPFFS=/sys/fs/bpf/bfbpf-bench-$ID
TMP=
CGB=
DAEMON_PID=
PIDS=()
FAILED=()
START=$(date +%s)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

say() { echo "bench: $*"; }
warn() { echo "bench: $*" >&2; }
die() {
	warn "$*"
	exit 1
}

cleanup() {
	local pid cg
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	if [ -n "$DAEMON_PID" ]; then
		kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
	fi
	ip netns del "$NS_SBX" 2>/dev/null
	ip netns del "$NS_PRX" 2>/dev/null
	ip netns del "$NS_SRV" 2>/dev/null
	[ -d "$BPFFS" ] && rm -rf "$BPFFS"
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
[ -x "$BFBPF" ] || die "$BFBPF is missing: run make first"
for tool in ip nsenter iperf3 tinyproxy curl bpftool gcc "$PY"; do
	command -v "$tool" >/dev/null || die "$tool is missing: run make deps"
done

mkdir -p "$OUT"
gcc -O2 -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -pthread \
	-o "$LOADGEN" "$ROOT/tools/bench/bfbench.c" || die "cannot build the load generator"
: >"$RESULTS"
TMP=$(mktemp -d /tmp/bfbpf-bench.XXXXXX)

# ---------------------------------------------------------------- world

CG2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
[ -n "$CG2" ] || die "no cgroup2 mount in /proc/self/mountinfo"
CGB=$CG2/bfbpf-bench-$ID
mkdir "$CGB" || die "cannot create $CGB"
for cg in plain b10 b10k b10kw upd scale; do mkdir "$CGB/$cg" || die "cannot create $CGB/$cg"; done

[ -d /sys/module/veth ] || modprobe veth 2>/dev/null
mkdir -p /run/netns
for ns in "$NS_SBX" "$NS_SRV" "$NS_PRX"; do
	ip netns add "$ns" || die "cannot create network namespace $ns"
done
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
in_ns "$NS_SRV" iperf3 --server --port 5201 >"$TMP/iperf3-server.log" 2>&1 &
PIDS+=($!)

# the daemon
"$BFBPF" daemon --socket "$TMP/s" --bpffs "$BPFFS" --log-level warn 2>"$TMP/daemon.log" &
DAEMON_PID=$!
for _ in $(seq 100); do
	[ -S "$TMP/s" ] && break
	kill -0 "$DAEMON_PID" 2>/dev/null || break
	sleep 0.05
done
[ -S "$TMP/s" ] || die "the daemon did not start: $(tail -3 "$TMP/daemon.log")"
export BFBPF_SOCKET=$TMP/s

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
say "world ready: namespaces $NS_SBX $NS_SRV $NS_PRX, cgroups under $CGB, daemon pid $DAEMON_PID"

# ---------------------------------------------------------------- 1. connect rate

cg_of() { case $1 in a | c*) echo "$CGB/plain" ;; *) echo "$CGB/$1" ;; esac; }

bench_connect() {
	local round v out proxy
	# sanity: a denied destination is refused
	if (in_sandbox "$CGB/b10" "$LOADGEN" connect --target 198.18.0.3:9000 --seconds 0.2 \
		--max 10) >/dev/null 2>&1; then
		warn "connect: a denied destination was reached from b10"
		return 1
	fi
	for round in $(seq "$CONNECT_ROUNDS"); do
		for v in a b10 b10k b10kw c10; do
			proxy=()
			[ "${v:0:1}" = c ] && proxy=(--proxy 198.18.1.2:8888)
			local target=198.18.0.2:9000
			[ "${v:0:1}" = c ] && target=198.18.2.2:9000
			out=$(in_sandbox "$(cg_of $v)" "$LOADGEN" connect --target $target "${proxy[@]}" \
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
			for v in a b10 b10k b10kw; do
				flags=()
				[ $proto = udp ] && flags=(--udp --bitrate 0 --length 1400)
				out=$(in_sandbox "$(cg_of $v)" iperf3 --client 198.18.0.2 --port 5201 \
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
		for v in a b10k c10; do
			local args=(http://198.18.0.2:8080/bytes/$bytes)
			[ $v = c10 ] && args=(--proxytunnel --proxy http://198.18.1.2:8888 http://198.18.2.2:8080/bytes/$bytes)
			out=$(in_sandbox "$(cg_of $v)" curl --silent --show-error --fail --max-time 120 \
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

step "1. connect rate" bench_connect
step "2. bulk throughput" bench_bulk
step "3. policy update" bench_update
step "4. scale" bench_scale

kill -0 "$DAEMON_PID" 2>/dev/null || {
	warn "the daemon died during the bench: $(tail -5 "$TMP/daemon.log")"
	FAILED+=("daemon")
}

# ---------------------------------------------------------------- report

MACHINE=$OUT/machine.json
[ "$QUICK" = 1 ] && MACHINE=$OUT/quick-machine.json
"$PY" - "$MACHINE" "$BFBPF" $(($(date +%s) - START)) "$LOAD_START" <<'EOF'
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
     "duration": "%s s" % sys.argv[3],
     "load_average": "%s at the start, %s at the end (1, 5, 15 min)" % (
         sys.argv[4], " ".join(open("/proc/loadavg").read().split()[:3]))}
json.dump(m, open(sys.argv[1], "w"))
EOF
cmd="make bench"
[ "$QUICK" = 1 ] && cmd="make bench BENCH_QUICK=1"
"$PY" "$BENCH_PY" render --results "$RESULTS" --out "$REPORT" --machine "$MACHINE" \
	--command "$cmd" $([ "$QUICK" = 1 ] && echo --quick) || FAILED+=("report")
say "report: $REPORT (raw results: $RESULTS)"
sed -n '/^## Goals/,/^## Connect rate, round/p' "$REPORT" | sed '$d'

if [ ${#FAILED[@]} -gt 0 ]; then
	warn "FAILED steps: ${FAILED[*]}"
	exit 1
fi
say "all steps ran (missed goals, if any, are listed above: they do not fail the run)"
exit 0
