# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: the deny log and the counters — events name the process, the hook and
# the host; the kernel's rate limit holds; counters match the attempts;
# log --follow sees events as they happen; metrics in Prometheus text.

ALL_TESTS+=(events_denials events_named_host events_rate_limit events_follow_and_metrics metrics_http)

# events_json FILE [ARGS...]: `bfbpf log --json` (one object per line) into FILE.
events_json() {
	local file=$1
	shift
	bfs log --json "$@" >"$file" 2>"$file.err" || { cat "$file.err"; fail "bfbpf log exited $?"; }
	cat "$file"
}

# events_wait FILE PYEXPR [LOG-ARGS...]: poll `bfbpf log --json` (into FILE) until PYEXPR
# holds (the daemon reads the ring buffer asynchronously; slow under emulation).
events_wait() {
	local file=$1 expr=$2 n=0
	shift 2
	until bfs log --json "$@" >"$file" 2>/dev/null && events_check "$file" "$expr" >/dev/null 2>&1; do
		n=$((n + 1))
		if [ $n -gt 100 ]; then
			cat "$file"
			events_check "$file" "$expr"
			return 1
		fi
		sleep 0.1
	done
	cat "$file"
}

# events_check FILE PYEXPR: PYEXPR holds with e = the list of events in FILE.
events_check() {
	"$PYTHON" - "$1" "$2" <<'EOF'
import json, sys
e = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
if not eval("(" + sys.argv[2].strip() + ")"):
    print(f"events check failed: {sys.argv[2]}")
    sys.exit(1)
EOF
}

test_events_denials() {
	world_up
	dns_up
	names_daemon_up
	attach "$CG" --mode allowlist --allow $SRV4 --allow allowed.test --netns "$(ns_sbx_path)"
	log "a process that tries a TCP connect, a UDP sendto and a raw socket, all denied"
	sbx "$CG" "$PYTHON" - $SRV4B $DENIED6 >"$CASEDIR/attempts.out" 2>&1 <<'EOF'
import os, socket, sys
print(os.getpid(), flush=True)
try:
    socket.create_connection((sys.argv[1], 7000), timeout=2)
except OSError as e:
    print("tcp", e.errno)
u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
try:
    u.sendto(b"x", (sys.argv[2], 9999))
except OSError as e:
    print("udp", e.errno)
try:
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
except OSError as e:
    print("raw", e.errno)
EOF
	cat "$CASEDIR/attempts.out"
	local pid
	pid=$(head -1 "$CASEDIR/attempts.out")
	log "a refused DNS name"
	sbx "$CG" dig +time=2 +tries=1 @$ROGUE denied.test A | grep -q "status: REFUSED" ||
		fail "the name was not refused"
	events_wait "$CASEDIR/events.json" "
		len([x for x in e if x['hook'] == 'connect4' and x['address'] == '$SRV4B' and x['port'] == 7000
			and x['protocol'] == 'tcp' and x['tgid'] == $pid and x['comm'] == 'python3']) == 1
		and len([x for x in e if x['hook'] == 'sendmsg6' and x['address'] == '$DENIED6'
			and x['port'] == 9999 and x['protocol'] == 'udp' and x['tgid'] == $pid]) == 1
		and len([x for x in e if x['hook'] == 'sock_create' and x['family'] == 2 and x['type'] == 3
			and x['tgid'] == $pid]) == 1
		and len([x for x in e if x['hook'] == 'dns' and x['name'] == 'denied.test'
			and x['qtype'] == 1 and x['verdict'] == 'refuse']) == 1
		and all(x['cgroup'] == '$CG' for x in e)" --cgroup "$CG" || fail "the events are not as expected"
	log "the human form"
	bfs log --cgroup "$CG" >"$CASEDIR/log.txt" 2>&1
	cat "$CASEDIR/log.txt"
	grep -q "DENY tcp $SRV4B:7000 pid $pid python3" "$CASEDIR/log.txt" || fail "human log line"
	grep -q "REFUSE dns denied.test" "$CASEDIR/log.txt" || fail "human DNS line"
}

test_events_named_host() {
	world_up
	dns_up
	dns_set "$SRV4 api.test"
	names_daemon_up
	attach "$CG" --mode allowlist --allow api.test:8443 --netns "$(ns_sbx_path)"
	expect_ok "$CG" tcp $SRV4 8443
	expect_denied "$CG" tcp $SRV4 7000
	events_wait "$CASEDIR/events.json" "
		[x for x in e if x['hook'] == 'connect4' and x['port'] == 7000 and x['names'] == ['api.test']]" ||
		fail "the event does not name the host"
	bfs log >"$CASEDIR/log.txt" 2>&1
	grep -q "DENY tcp $SRV4:7000 (api.test) pid" "$CASEDIR/log.txt" || { cat "$CASEDIR/log.txt"; fail "human line"; }
}

test_events_rate_limit() {
	world_up
	daemon_up
	attach "$CG" --mode no-network
	log "2000 denied connects in a tight loop"
	local took
	took=$(sbx "$CG" "$PYTHON" - $SRV4 <<'EOF'
import errno, socket, sys, time
denied = 0
start = time.monotonic()
for i in range(2000):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect((sys.argv[1], 9999))
    except OSError as e:
        denied += e.errno == errno.EPERM
    s.close()
print(int(time.monotonic() - start) + 1)
sys.exit(0 if denied == 2000 else 1)
EOF
) || fail "the loop"
	log "2000 denied in under $took s"
	bfs status --cgroup "$CG" --json >"$CASEDIR/status.json"
	json_check "$CASEDIR/status.json" "
		(lambda c: c['hooks']['connect4']['denied'] == 2000
			and c['events']['sent'] <= 100 * os.cpu_count() * ($took + 1) + 50
			and c['events']['limited'] >= 2000 - c['events']['sent'] - c['events']['lost'] - 5
			and c['events']['limited'] > 0)(d['sandboxes'][0]['counters'])" ||
		fail "the counters or the rate limit"
	local sent
	sent=$("$PYTHON" -c "import json; print(json.load(open('$CASEDIR/status.json'))['sandboxes'][0]['counters']['events']['sent'])")
	events_wait "$CASEDIR/events.json" "len([x for x in e if x['hook'] == 'connect4']) == $sent" >/dev/null ||
		fail "the log holds a different number of events than the kernel sent"
	log "enforcement is unaffected"
	expect_denied "$CG" tcp $SRV4 7000
}

test_events_follow_and_metrics() {
	world_up
	daemon_up
	attach "$CG" --mode allowlist --allow $SRV4
	bfs log --follow --json >"$CASEDIR/follow.json" 2>&1 &
	local follower=$!
	defer "kill $follower"
	sleep 0.5
	expect_denied "$CG" tcp $SRV4B 7000
	local n=0
	until grep -q "\"address\":\"$SRV4B\"" "$CASEDIR/follow.json"; do
		n=$((n + 1))
		[ $n -gt 50 ] && { cat "$CASEDIR/follow.json"; fail "log --follow did not see the event"; }
		sleep 0.1
	done
	log "counters match the attempts"
	expect_ok "$CG" tcp $SRV4 7000
	bfs metrics >"$CASEDIR/metrics.txt" 2>&1 || fail "bfbpf metrics"
	grep -v '^#' "$CASEDIR/metrics.txt" | grep -v ' 0$'
	grep -q "^bfbpf_verdicts_total{cgroup=\"$CG\",hook=\"connect4\",verdict=\"deny\"} 1$" "$CASEDIR/metrics.txt" ||
		fail "the deny counter"
	grep -q "^bfbpf_verdicts_total{cgroup=\"$CG\",hook=\"connect4\",verdict=\"allow\"} 1$" "$CASEDIR/metrics.txt" ||
		fail "the allow counter"
	grep -q '^# TYPE bfbpf_verdicts_total counter$' "$CASEDIR/metrics.txt" || fail "metric types"
}

test_metrics_http() {
	local port=$((20000 + RANDOM % 30000))
	defer "rm -rf '$PINS'"
	bf daemon --socket "$SOCK" --bpffs "$PINS" --metrics-listen "127.0.0.1:$port" \
		>>"$CASEDIR/daemon.log" 2>&1 &
	DAEMON_PID=$!
	defer "daemon_stop $DAEMON_PID"
	defer "detach_all"
	daemon_wait
	attach "$CG" --mode no-network
	curl -sS --max-time 5 "http://127.0.0.1:$port/metrics" >"$CASEDIR/scrape.txt" || fail "scrape"
	head -5 "$CASEDIR/scrape.txt"
	grep -q "^bfbpf_sandboxes 1$" "$CASEDIR/scrape.txt" || fail "bfbpf_sandboxes"
	grep -q "^bfbpf_lockdown_ok{cgroup=\"$CG\"} 1$" "$CASEDIR/scrape.txt" || fail "lockdown gauge"
	log "a bad --metrics-listen address stops the daemon at start with a clear error"
	expect_status 1 bf daemon --socket "$CASEDIR/other.sock" --bpffs "$PINS-other" --metrics-listen nonsense
	grep -q "metrics-listen nonsense" "$CASEDIR/last.err" || fail "the error does not name the flag"
	rm -rf "$PINS-other"
}
