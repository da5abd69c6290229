# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: a sandboxed process that reaches the control socket (issue 19, item 2b),
# a sandbox re-adopted without its state file, and a late detach of a removed
# cgroup. Uses dns_up, dns_set, names_daemon_up (test-4-names.sh), rogue_up,
# sbx_dns, dig_short (test-6-dns.sh) and ctl_send (test-5-control.sh).

ALL_TESTS+=(control_sandboxed_root_refused control_descendant_refused control_peer_joins_sandbox
	readopt_without_state readopt_without_state_empty detach_removed_cgroup)

# no_caps CMD...: CMD as uid 0 with every capability set empty (bounding and ambient too).
no_caps() {
	setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- "$@"
}

# caps_empty CG: a process of CG run through no_caps is uid 0 and holds no capability.
caps_empty() {
	local out
	out=$(sbx "$1" setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- \
		grep -E '^(Uid|Cap(Inh|Prm|Eff|Bnd|Amb)):' /proc/self/status)
	echo "$out"
	grep -Eq '^Uid:\s+0\s' <<<"$out" || fail "the process is not uid 0"
	[ "$(grep -c '^Cap.*:\s*0000000000000000$' <<<"$out")" = 5 ] ||
		fail "the process still holds capabilities"
}

# ctl_script: a raw client of the control socket, run as `$PYTHON FILE SOCKET LINE...` (any uid).
ctl_script() {
	cat >"$CASEDIR/ctl.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(30)
s.connect(sys.argv[1])
for line in sys.argv[2:]:
    try:
        s.sendall(line.encode() + b"\n")
    except BrokenPipeError:
        pass  # refused and closed before the request went out: the reply is still there
    reply = b""
    while not reply.endswith(b"\n"):
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        reply += chunk
    sys.stdout.write(reply.decode())
EOF
	chmod 0644 "$CASEDIR/ctl.py"
}

# expect_forbidden: last.out (a --json reply) is one forbidden error object.
expect_forbidden() {
	json_check "$CASEDIR/last.out" "d['ok'] is False and d['error']['code'] == 'forbidden'
		and 'sandbox' in d['error']['message']" || fail "the daemon did not refuse the sandboxed client"
}

# The CLI's own refusal of a target that holds the caller (before the daemon is asked).
expect_protected_cgroup() {
	json_check "$CASEDIR/last.out" "d['ok'] is False and d['error']['code'] == 'protected_cgroup'" ||
		fail "the CLI did not refuse a target that holds itself"
}

test_control_sandboxed_root_refused() {
	world_up
	daemon_up
	attach "$CG" --mode allowlist --allow $SRV4
	caps_empty "$CG"
	log "uid 0 without capabilities, in the sandbox: update --mode public on its own cgroup"
	log "the CLI refuses a target that holds the caller itself (protected_cgroup, exit 2)"
	expect_status 2 sbx "$CG" setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- \
		"$BFBPF" update --cgroup "$CG" --mode public --socket "$SOCK" --json
	expect_protected_cgroup
	log "a client that skips that check: the daemon refuses it"
	ctl_script
	expect_status 0 sbx "$CG" setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- \
		"$PYTHON" "$CASEDIR/ctl.py" "$SOCK" \
		"{\"op\":\"update\",\"cgroup\":\"$CG\",\"policy\":{\"network_mode\":\"public\"}}"
	expect_forbidden
	log "nor may it detach, or read the status"
	expect_status 2 sbx "$CG" setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- \
		"$BFBPF" detach --cgroup "$CG" --socket "$SOCK" --json
	expect_protected_cgroup
	expect_status 0 sbx "$CG" setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- \
		"$PYTHON" "$CASEDIR/ctl.py" "$SOCK" "{\"op\":\"detach\",\"cgroup\":\"$CG\"}"
	expect_forbidden
	expect_status 1 sbx "$CG" "$BFBPF" status --socket "$SOCK" --json
	expect_forbidden
	log "the policy is unchanged: the denied address stays denied"
	expect "$CG" "ok tcp $SRV4 7000" "denied tcp $SRV4B 7000" "denied udp-sendto $SRV4B 9999"
	expect_listed "$CG" "s['policy']['network_mode'] == 'allowlist'"
	grep -q "refused a client: process [0-9]* is inside sandbox $CG" "$CASEDIR/daemon.log" ||
		fail "the daemon's log does not name the refused process"
}

test_control_descendant_refused() {
	world_up
	daemon_up
	attach "$CG" --mode no-network
	local child=$CG/agent/tool
	mkdir -p "$child" || fail "cannot create $child"
	log "uid 0 without capabilities, two levels below the sandbox, in its own cgroup namespace"
	ctl_script
	expect_status 0 sbx "$child" unshare --cgroup setpriv --inh-caps=-all --ambient-caps=-all \
		--bounding-set=-all -- "$PYTHON" "$CASEDIR/ctl.py" "$SOCK" \
		"{\"op\":\"update\",\"cgroup\":\"$CG\",\"policy\":{\"network_mode\":\"public\"}}"
	expect_forbidden
	expect_status 2 sbx "$child" "$BFBPF" detach --cgroup "$CG" --socket "$SOCK" --json
	expect_protected_cgroup
	expect_status 1 sbx "$child" "$BFBPF" status --socket "$SOCK" --json
	expect_forbidden
	expect "$child" "denied tcp $SRV4 7000" "denied udp-sendto $SRV6 9999"
	expect_listed "$CG" "s['policy']['network_mode'] == 'no-network'"
	log "a sibling cgroup of the sandbox is no sandbox: it may use the socket"
	cg_make "$CG-sibling"
	(echo "$BASHPID" >"$CG-sibling/cgroup.procs" && exec "$BFBPF" status --socket "$SOCK" --json) \
		>"$CASEDIR/last.out" || fail "a process outside every sandbox was refused"
}

# A client connected from outside moves into the sandbox: its next request is refused.
test_control_peer_joins_sandbox() {
	world_up
	daemon_up
	attach "$CG" --mode allowlist --allow $SRV4
	local out
	out=$("$PYTHON" - "$SOCK" "$CG" <<'EOF'
import json, os, socket, sys
path, cgroup = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.settimeout(30)
s.connect(path)
def ask(request):
    s.sendall(json.dumps(request).encode() + b"\n")
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        reply += chunk
    return reply.decode().strip()
print(ask({"op": "status"}))
with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
    f.write(str(os.getpid()))
policy = {"network_mode": "public"}
print(ask({"op": "update", "cgroup": cgroup, "policy": policy}))
try:
    print("closed" if s.recv(1) == b"" else "still open")
except ConnectionResetError:
    print("closed")
EOF
)
	echo "$out"
	sed -n 1p <<<"$out" >"$CASEDIR/last.out"
	json_check "$CASEDIR/last.out" "d['ok'] is True" || fail "the first request was refused"
	sed -n 2p <<<"$out" >"$CASEDIR/last.out"
	expect_forbidden
	[ "$(sed -n 3p <<<"$out")" = closed ] || fail "the refused client was not disconnected"
	expect "$CG" "ok tcp $SRV4 7000" "denied tcp $SRV4B 7000"
}

# The state file is lost (the daemon was killed between attach's reply and
# its write): the re-adopted sandbox finds its path, netns and responder again.
test_readopt_without_state() {
	world_up
	dns_up
	rogue_up
	names_daemon_up
	dns_set "$SRV4 www.test" "$SRV4B other.test"
	attach "$CG" --mode allowlist --allow www.test --netns "$(ns_sbx_path)"
	[ "$(dig_short "$CG" www.test)" = "$SRV4" ] || fail "DNS before the restart"
	log "a process of the sandbox keeps running (the agent: uid 65534, no capabilities)"
	sbx "$CG" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		--bounding-set=-all -- sleep 300 &
	local agent=$! id
	defer "kill -KILL $agent"
	id=$(cg_id "$CG")
	local state=$CASEDIR/state/$id.json n=0
	until [ -s "$state" ]; do
		n=$((n + 1))
		[ $n -gt 100 ] && fail "no state file $state"
		sleep 0.1
	done
	log "kill -9 the daemon, remove the state file, start a new daemon"
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	rm -f "$state"
	names_daemon_up
	expect_listed "$CG" "s['cgroup'] == '$CG' and s['netns'] == '$(ns_sbx_path)' and
		s['policy'] is None and s.get('dns') is not None"
	expect "$CG" "ok tcp $SRV4 7000" "denied tcp $SRV4B 7000"
	log "the runner gives the policy again: DNS, update and verify work"
	update "$CG" --mode allowlist --allow www.test
	[ "$(dig_short "$CG" www.test)" = "$SRV4" ] || fail "DNS after the re-adoption"
	[ "$(dig_status "$CG" other.test)" = REFUSED ] || fail "a denied name after the re-adoption"
	expect_status 0 bfs verify --cgroup "$CG" --json
	expect "$CG" "ok tcp $SRV4 7000" "denied tcp $SRV4B 7000"
	log "the state file records the path again"
	n=0
	until [ -s "$state" ]; do
		n=$((n + 1))
		[ $n -gt 100 ] && fail "the state file was not written again"
		sleep 0.1
	done
	json_check "$state" "d['cgroup'] == '$CG' and d['netns'] == '$(ns_sbx_path)'" ||
		fail "the state file lacks the path or the netns"
}

# The same right after attach's reply (the usual window): the cgroup has no process yet.
test_readopt_without_state_empty() {
	world_up
	dns_up
	rogue_up
	names_daemon_up
	dns_set "$SRV4 www.test"
	attach "$CG" --mode allowlist --allow www.test --netns "$(ns_sbx_path)"
	local id state n=0
	id=$(cg_id "$CG")
	state=$CASEDIR/state/$id.json
	until [ -s "$state" ]; do
		n=$((n + 1))
		[ $n -gt 100 ] && fail "no state file $state"
		sleep 0.1
	done
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	rm -f "$state"
	names_daemon_up
	log "no process tells the netns yet: no responder in the daemon's namespace"
	expect_listed "$CG" "s['cgroup'] == '$CG' and s['netns'] is None and s.get('dns') is None"
	update "$CG" --mode allowlist --allow www.test
	log "the agent starts: its netns is found, the responder starts there"
	sbx "$CG" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		--bounding-set=-all -- sleep 300 &
	defer "kill -KILL $!"
	n=0
	until status_json "$CASEDIR/wait.json" "$CG" >/dev/null &&
		json_check "$CASEDIR/wait.json" "d['sandboxes'][0]['netns'] == '$(ns_sbx_path)'
			and d['sandboxes'][0].get('dns') is not None" >/dev/null; do
		n=$((n + 1))
		[ $n -gt 300 ] && fail "the netns and responder were not found"
		sleep 0.1
	done
	[ "$(dig_short "$CG" www.test)" = "$SRV4" ] || fail "DNS after the re-adoption"
	expect_status 0 bfs verify --cgroup "$CG"
	expect "$CG" "ok tcp $SRV4 7000" "denied tcp $SRV4B 7000"
}

test_detach_removed_cgroup() {
	daemon_up
	local gone=$CG-gone
	cg_make "$gone"
	attach "$gone" --mode no-network
	rmdir "$gone" || fail "cannot remove $gone"
	log "detach of the removed cgroup: no_cgroup, from the daemon and from the CLI (--json)"
	local out
	out=$(ctl_send "{\"op\":\"detach\",\"cgroup\":\"$gone\"}")
	echo "$out"
	echo "$out" >"$CASEDIR/last.out"
	json_check "$CASEDIR/last.out" "d['ok'] is False and d['error']['code'] == 'no_cgroup'" ||
		fail "the daemon's reply to a detach of a removed cgroup"
	expect_status 1 bfs detach --cgroup "$gone" --json
	json_check "$CASEDIR/last.out" "d['ok'] is False and d['error']['code'] == 'no_cgroup'" ||
		fail "detach --json of a removed cgroup"
}
