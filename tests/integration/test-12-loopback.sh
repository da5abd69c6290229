# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: loopback relays (issue 19, item 5). A service on the sandbox's
# loopback that forwards (an HTTP proxy, ssh -L, docker-proxy) carries the
# sandbox's bytes to any address. Here it is a TCP relay on 127.0.0.1:3128 in
# SBX, outside the sandbox's cgroup, forwarding to a recorder in SRV that
# writes down every byte it receives: the world. Loopback opens only where the
# policy names it (127.0.0.1:4000, a local model proxy), and `bfbpf run`
# opens none by default. Uses dns_up, dns_set, names_daemon_up (test-4) and
# dns_world_up, dig_short, dig_status (test-6).

ALL_TESTS+=(loopback_relay_run_default loopback_relay_no_network loopback_relay_allowlist)

RELAY_PORT=3128
LANE_PORT=4000
RECORD_PORT=7100

# The relay and the recorder: one small program, two roles.
loopback_tools_write() {
	cat >"$CASEDIR/relay.py" <<'EOF'
import socket, sys, threading, os

def ready(path):
    with open(path + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(path + ".tmp", path)

def listener(addr, port):
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(16)
    return s

def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

def record(conn, path):
    while True:
        data = conn.recv(65536)
        if not data:
            break
        with open(path, "ab") as f:
            f.write(data)
        conn.sendall(data)
    conn.close()

def main():
    role, addr, port, rdy = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    s = listener(addr, port)
    ready(rdy)
    while True:
        conn, _ = s.accept()
        if role == "recorder":
            threading.Thread(target=record, args=(conn, sys.argv[5]), daemon=True).start()
            continue
        out = socket.create_connection((sys.argv[5], int(sys.argv[6])))
        threading.Thread(target=pipe, args=(conn, out), daemon=True).start()
        threading.Thread(target=pipe, args=(out, conn), daemon=True).start()

main()
EOF
}

# loopback_tool NS ROLE ADDR PORT ARGS...: relay.py in NS, until the case ends.
loopback_tool() {
	local ns=$1 ready
	shift
	ready=$(mktemp -u "$CASEDIR/tool-ready.XXXXXX")
	in_ns "$ns" "$PYTHON" "$CASEDIR/relay.py" "$1" "$2" "$3" "$ready" "${@:4}" \
		>>"$CASEDIR/relay.log" 2>&1 &
	local pid=$!
	defer "kill -KILL $pid; wait $pid"
	wait_for_file "$ready" 30 || {
		cat "$CASEDIR/relay.log"
		fail "relay.py $1 in $ns did not start"
	}
}

# relay_up: the recorder ($SRV4:$RECORD_PORT), the relay to it on
# 127.0.0.1:$RELAY_PORT in SBX, and a local model proxy (an echo server) on
# 127.0.0.1 and ::1 port $LANE_PORT in SBX. Checks that the relay carries
# bytes to the world for a process outside the sandbox: else a denial below
# would prove nothing.
relay_up() {
	RECORD=$CASEDIR/world.record
	loopback_tools_write
	loopback_tool "$NS_SRV" recorder $SRV4 $RECORD_PORT "$RECORD"
	loopback_tool "$NS_SBX" relay 127.0.0.1 $RELAY_PORT $SRV4 $RECORD_PORT
	start_server "$NS_SBX" --bind 127.0.0.1 --bind ::1 --tcp $LANE_PORT
	in_ns "$NS_SBX" "$PYTHON" "$PROBE" tcp 127.0.0.1 $RELAY_PORT ||
		fail "the relay does not reach the world even outside the sandbox"
	[ -s "$RECORD" ] || fail "the recorder did not record the relayed bytes"
	rm -f "$RECORD"
}

# nothing_reached_world: the recorder got no byte since relay_up.
nothing_reached_world() {
	if [ -s "$RECORD" ]; then
		echo "the world received: $(head -c 200 "$RECORD")"
		fail "bytes reached the world through the loopback relay"
	fi
	log "nothing reached the world"
}

# run_sbx ARGS...: `bfbpf run ARGS` in SBX, the command as root (run refuses uid 0 without --allow-root).
run_sbx() { timeout -k 5 "$CLI_TIMEOUT" nsenter --net="/run/netns/$NS_SBX" "$BFBPF" run --allow-root "$@"; }

# bfbpf run opens no loopback unless the policy names it.
test_loopback_relay_run_default() {
	world_up
	relay_up
	log "run's default: the relay on 127.0.0.1:$RELAY_PORT is refused"
	expect_status 1 run_sbx --mode no-network -- "$PYTHON" "$PROBE" tcp 127.0.0.1 $RELAY_PORT
	grep -q EPERM "$CASEDIR/last.out" || fail "the relay was not refused with EPERM"
	expect_status 1 run_sbx --policy "$(policy_file '{"network_mode": "allowlist", "allowed_hosts": ["198.18.0.3"]}')" \
		-- "$PYTHON" "$PROBE" tcp 0.0.0.0 $RELAY_PORT
	grep -q EPERM "$CASEDIR/last.out" || fail "0.0.0.0 was not refused with EPERM"
	nothing_reached_world
	log "a named loopback port opens, only it"
	expect_status 0 run_sbx --mode no-network --model-endpoint 127.0.0.1:$LANE_PORT \
		-- "$PYTHON" "$PROBE" --batch "ok tcp 127.0.0.1 $LANE_PORT" \
		"denied tcp 127.0.0.1 $RELAY_PORT" "denied tcp ::1 $LANE_PORT"
	expect_status 0 run_sbx --mode allowlist --allow "[::1]:$LANE_PORT" \
		-- "$PYTHON" "$PROBE" --batch "ok tcp ::1 $LANE_PORT" \
		"denied tcp 127.0.0.1 $LANE_PORT" "denied tcp ::ffff:127.0.0.1 $RELAY_PORT"
	nothing_reached_world
	log "0.0.0.0/0 and ::/0 open the world, not the relay (and run's verify passes)"
	expect_status 0 run_sbx --mode allowlist --allow 0.0.0.0/0 --allow ::/0 \
		-- "$PYTHON" "$PROBE" --batch "ok tcp $SRV4 7000" "ok tcp $SRV6 7000" \
		"denied tcp 127.0.0.1 $RELAY_PORT" "denied tcp 0.0.0.0 $RELAY_PORT"
	nothing_reached_world
	log "--no-loopback with a lane on loopback: the same"
	expect_status 0 run_sbx --mode no-network --no-loopback --model-endpoint 127.0.0.1:$LANE_PORT \
		-- "$PYTHON" "$PROBE" --batch "ok tcp 127.0.0.1 $LANE_PORT" "denied tcp 127.0.0.1 $RELAY_PORT"
	nothing_reached_world
	log "all of loopback only when asked: --allow-loopback, or allow_loopback in a policy file"
	expect_status 0 run_sbx --mode no-network --allow-loopback \
		-- "$PYTHON" "$PROBE" tcp 127.0.0.1 $LANE_PORT
	expect_status 0 run_sbx --policy "$(policy_file '{"network_mode": "no-network", "allow_loopback": true}')" \
		-- "$PYTHON" "$PROBE" tcp 127.0.0.1 $LANE_PORT
	expect_status 2 run_sbx --mode no-network --allow-loopback --no-loopback -- true
	expect_one_stderr_line "--allow-loopback"
}

# An attached no-network sandbox with --no-loopback and its model proxy on
# loopback: the proxy's port opens, the relay's does not, DNS still answers.
test_loopback_relay_no_network() {
	dns_world_up
	# A lane name that a blocking resolver answers with 0.0.0.0: never programmed.
	dns_set "0.0.0.0 blocked.test"
	relay_up
	attach "$CG" --mode no-network --no-loopback --model-endpoint 127.0.0.1:$LANE_PORT \
		--model-endpoint "[::1]:$LANE_PORT" --model-endpoint blocked.test:$RELAY_PORT \
		--netns "$(ns_sbx_path)"
	local f=$CASEDIR/status.json
	status_json "$f" "$CG"
	json_check "$f" "[n for n in d['sandboxes'][0]['names'] if n['name'] == 'blocked.test' and n['filtered'] == ['0.0.0.0'] and not n['addresses']]" ||
		fail "the lane name's 0.0.0.0 answer is not shown as filtered"
	expect "$CG" \
		"denied tcp 127.0.0.1 $RELAY_PORT" \
		"denied tcp ::ffff:127.0.0.1 $RELAY_PORT" \
		"denied tcp 0.0.0.0 $RELAY_PORT" \
		"denied tcp 127.0.0.2 $RELAY_PORT" \
		"denied tcp 127.0.0.1 7000" \
		"ok tcp 127.0.0.1 $LANE_PORT" \
		"ok tcp ::ffff:127.0.0.1 $LANE_PORT" \
		"ok tcp ::1 $LANE_PORT" \
		"denied tcp 0.0.0.0 $LANE_PORT" \
		"denied tcp 127.0.0.2 $LANE_PORT" \
		"denied udp-sendto 127.0.0.1 $RELAY_PORT"
	nothing_reached_world
	log "the DNS responder still answers (no-network: it refuses every name)"
	[ "$(dig_status "$CG" www.test A)" = REFUSED ] || fail "the responder did not answer"
	log "an update to all of loopback opens the relay, as the policy says"
	update "$CG" --mode no-network --model-endpoint 127.0.0.1:$LANE_PORT
	expect "$CG" "ok tcp 127.0.0.1 $RELAY_PORT"
	[ -s "$RECORD" ] || fail "the relay did not carry the bytes with allow_loopback"
}

# allowlist: the loopback ports named, not the relay, even beside 0.0.0.0/0
# and ::/0 (a CIDR never opens loopback) and a name that resolves to loopback.
test_loopback_relay_allowlist() {
	dns_world_up
	dns_set "$SRV4 www.test" "127.0.0.1 relay.www.test"
	relay_up
	attach "$CG" --mode allowlist --no-loopback --allow www.test --allow 0.0.0.0/0 --allow ::/0 \
		--allow 127.0.0.1:$LANE_PORT --allow "[::1]:$LANE_PORT" --netns "$(ns_sbx_path)"
	[ "$(dig_short "$CG" www.test A)" = "$SRV4" ] || fail "DNS without loopback"
	dig_short "$CG" relay.www.test A
	expect "$CG" \
		"ok tcp 127.0.0.1 $LANE_PORT" \
		"ok tcp ::1 $LANE_PORT" \
		"denied tcp 127.0.0.1 $RELAY_PORT" \
		"denied tcp 0.0.0.0 $RELAY_PORT" \
		"denied tcp ::ffff:127.0.0.1 $RELAY_PORT" \
		"denied tcp 0.0.0.0 $LANE_PORT" \
		"ok tcp $SRV4 7000"
	nothing_reached_world
	log "0.0.0.0 and loopback CIDRs are refused as entries"
	expect_status 2 bfs attach --cgroup "$CG" --mode allowlist --allow 0.0.0.0:$RELAY_PORT
	expect_one_stderr_line "0.0.0.0 is not a destination"
	expect_status 2 bfs update --cgroup "$CG" --mode allowlist --no-loopback --allow 127.0.0.0/8
	expect_one_stderr_line "a CIDR never opens loopback"
	expect "$CG" "denied tcp 127.0.0.1 $RELAY_PORT"
	nothing_reached_world
}
