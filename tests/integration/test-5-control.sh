# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants and key bytes need no quotes
# Cases: verification that finds tampering, the live probes, the control
# socket under hostile and many clients, and the Python runner client.

ALL_TESTS+=(verify_detached_hook verify_map_tampering verify_probes_in_netns verify_net_raw_holder
	socket_non_root_refused socket_group socket_garbage socket_concurrent_clients socket_silent_client
	python_client)

# ctl_send LINE...: raw request lines to the daemon; the reply lines go to stdout.
ctl_send() {
	"$PYTHON" - "$SOCK" "$@" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(30)
s.connect(sys.argv[1])
for line in sys.argv[2:]:
    s.sendall(line.encode() + b"\n")
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        reply += chunk
    sys.stdout.write(reply.decode())
EOF
}

# wait_in_cgroup CG PID: until PID is listed in CG (a subshell joins, then execs).
wait_in_cgroup() {
	local n=0
	until grep -qx "$2" "$1/cgroup.procs" 2>/dev/null; do
		n=$((n + 1))
		[ $n -gt 100 ] && fail "process $2 did not join $1"
		sleep 0.1
	done
}

# link_id HOOK: the id of this case's link for HOOK, from its pin.
link_id() {
	local pin
	pin=$(ls "$PINS"/links/*/"$1") || fail "no pinned link for $1"
	bpftool link show pinned "$pin" | sed -n '1s/^\([0-9]*\):.*/\1/p'
}

test_verify_detached_hook() {
	daemon_up
	attach "$CG" --mode allowlist --allow $SRV4
	expect_status 0 bfs verify --cgroup "$CG"
	log "detach the connect6 link behind the daemon's back"
	bpftool link detach id "$(link_id connect6)" || fail "bpftool link detach"
	expect_status 1 bfs verify --cgroup "$CG" --json
	cp "$CASEDIR/last.out" "$CASEDIR/verify.json"
	json_check "$CASEDIR/verify.json" "d['lockdown_complete'] is False and
		[c for c in d['checks'] if c['name'] == 'attached:connect6' and not c['ok']] and
		all(c['ok'] for c in d['checks'] if c['name'].startswith('attached:') and c['name'] != 'attached:connect6')" ||
		fail "verify does not name the detached hook"
	log "the periodic check notices it too"
	local n=0
	until grep -q "LOCKDOWN BROKEN.*attached:connect6" "$CASEDIR/daemon.log"; do
		n=$((n + 1))
		[ $n -gt 150 ] && fail "the daemon did not log the broken lockdown"
		sleep 0.1
	done
	log "update repairs it"
	update "$CG" --mode allowlist --allow $SRV4
	expect_status 0 bfs verify --cgroup "$CG"
}

test_verify_map_tampering() {
	daemon_up
	attach "$CG" --mode allowlist --allow $SRV4
	expect_status 0 bfs verify --cgroup "$CG"
	local generation
	generation=$(bfs status --cgroup "$CG" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["sandboxes"][0]["generation"])')
	log "add 198.18.99.1 to generation $generation of the exact map behind the daemon's back"
	# struct bfbpf_exact_key: generation (u32), port (u32), addr[16] (IPv4 as ::ffff:a.b.c.d)
	local g
	g=$(printf '%08x' "$generation" | sed 's/\(..\)\(..\)\(..\)\(..\)/0x\4 0x\3 0x\2 0x\1/')
	bpftool map update pinned "$PINS/maps/allow_exact" key $g 0 0 0 0 \
		0 0 0 0 0 0 0 0 0 0 0xff 0xff 198 18 99 1 value 1 || fail "bpftool map update"
	expect_status 1 bfs verify --cgroup "$CG" --json
	cp "$CASEDIR/last.out" "$CASEDIR/verify.json"
	json_check "$CASEDIR/verify.json" "[c for c in d['checks'] if c['name'] == 'maps' and not c['ok']
		and 'not in the policy' in c['detail']]" || fail "verify missed the extra entry"
	log "and a deleted one"
	bpftool map delete pinned "$PINS/maps/allow_exact" key $g 0 0 0 0 \
		0 0 0 0 0 0 0 0 0 0 0xff 0xff 198 18 99 1 || fail "bpftool map delete"
	bpftool map delete pinned "$PINS/maps/allow_exact" key $g 0 0 0 0 \
		0 0 0 0 0 0 0 0 0 0 0xff 0xff 198 18 0 2 || fail "bpftool map delete"
	expect_status 1 bfs verify --cgroup "$CG" --json
	cp "$CASEDIR/last.out" "$CASEDIR/verify.json"
	json_check "$CASEDIR/verify.json" "[c for c in d['checks'] if c['name'] == 'maps' and not c['ok']
		and '1 entries of the policy are missing' in c['detail']]" || fail "verify missed the missing entry"
	update "$CG" --mode allowlist --allow $SRV4
	expect_status 0 bfs verify --cgroup "$CG"
}

test_verify_probes_in_netns() {
	world_up
	daemon_up
	attach "$CG" --mode allowlist --allow $SRV4 --netns "$(ns_sbx_path)"
	expect_status 0 bfs verify --cgroup "$CG" --json
	cp "$CASEDIR/last.out" "$CASEDIR/verify.json"
	json_check "$CASEDIR/verify.json" "d['lockdown_complete'] and
		{c['name'] for c in d['checks']} >= {'probe:udp4_connect_denied', 'probe:udp6_connect_denied',
			'probe:udp_mapped_connect_denied', 'probe:udp_sendto_denied', 'probe:raw4_socket',
			'probe:raw6_socket', 'probe:ping_socket', 'probe:packet_socket', 'probe:udp_connect_allowed'}
		and [c for c in d['checks'] if c['name'] == 'probe:udp_connect_allowed' and '$SRV4' in c['detail']]" ||
		fail "verify's probes"
	expect_listed "$CG" "s['netns'] == '$(ns_sbx_path)'"
	log "verify --max-age answers from the last result"
	expect_status 0 bfs verify --cgroup "$CG" --max-age 300 --json
	cp "$CASEDIR/last.out" "$CASEDIR/verify.json"
	json_check "$CASEDIR/verify.json" "d['cached'] is True" || fail "verify --max-age did not use the cache"
	log "a missing network namespace is a usage error at attach"
	expect_status 2 bfs attach --cgroup "$CG/x" --mode no-network --netns /nonexistent
	expect_one_stderr_line "/nonexistent"
}

test_verify_net_raw_holder() {
	daemon_up
	local f=$CASEDIR/verify.json
	attach "$CG" --mode no-network
	if lsm_supported; then
		log "BPF LSM here: packet sockets are refused per cgroup"
		expect_status 0 bfs verify --cgroup "$CG"
		return 0
	fi
	log "no BPF LSM: a process holding CAP_NET_RAW in the sandbox breaks the lockdown"
	(echo "$BASHPID" >"$CG/cgroup.procs" && exec sleep 60) &
	local holder=$!
	defer "kill -KILL $holder"
	wait_in_cgroup "$CG" $holder
	expect_status 1 bfs verify --cgroup "$CG" --json
	cp "$CASEDIR/last.out" "$f"
	json_check "$f" "[c for c in d['checks'] if c['name'] == 'packet_sockets' and not c['ok'] and '$holder' in c['detail']]" ||
		fail "verify does not name the process holding CAP_NET_RAW"
	kill -KILL $holder
	wait $holder 2>/dev/null
	log "without CAP_NET_RAW it is locked down"
	# uid 65534 with no capability: uid 0, or CAP_NET_ADMIN, fail checks of their own (test-10).
	(echo "$BASHPID" >"$CG/cgroup.procs" && exec setpriv --reuid 65534 --regid 65534 --clear-groups \
		--bounding-set -all --inh-caps -all sleep 60) &
	holder=$!
	defer "kill -KILL $holder"
	wait_in_cgroup "$CG" $holder
	# and it has exec'ed (dropped the capability): its command is sleep now
	local n=0
	until [ "$(cat /proc/$holder/comm 2>/dev/null)" = sleep ]; do
		n=$((n + 1))
		[ $n -gt 100 ] && fail "the holder did not start"
		sleep 0.1
	done
	expect_status 0 bfs verify --cgroup "$CG"
}

test_socket_non_root_refused() {
	daemon_up
	local mode
	mode=$(stat -c %a "$SOCK")
	[ "$mode" = 600 ] || fail "the socket is mode $mode, not 600"
	log "made world-writable, it still refuses a non-root peer"
	chmod 0666 "$SOCK"
	chmod 0755 "$CASEDIR"
	local out
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$PYTHON" - "$SOCK" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
try:
    s.sendall(b'{"op":"status"}\n')
except BrokenPipeError:
    pass  # refused and closed before the request went out: the reply is still there
print(s.recv(65536).decode().strip())
try:
    print("closed" if s.recv(1) == b"" else "still open")
except ConnectionResetError:
    print("closed")
EOF
)
	echo "$out"
	grep -q '"code":"forbidden"' <<<"$out" || fail "a non-root peer was not refused"
	grep -q '^closed$' <<<"$out" || fail "the refused peer was not disconnected"
	expect_status 0 bfs status --json
}

# --socket-group: the daemon itself gives the group the socket (0660, its
# gid), before it listens; a peer of that gid is served, any other refused.
test_socket_group() {
	[ -x "$BFBPF" ] || fail "$BFBPF is missing (run make)"
	defer "rm -rf '$PINS'"
	defer "rm -f '$SOCK'"
	"$BFBPF" daemon --socket "$SOCK" --bpffs "$PINS" --socket-group nogroup \
		--accept-vsock >>"$CASEDIR/daemon.log" 2>&1 &
	DAEMON_PID=$!
	defer "daemon_stop $DAEMON_PID"
	daemon_wait
	local got
	got=$(stat -c '%a %g' "$SOCK")
	[ "$got" = "660 65534" ] || fail "the socket is '$got', not '660 65534' (mode, gid)"
	chmod 0755 "$CASEDIR"
	log "a peer whose gid is the socket group is served"
	expect_status 0 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$BFBPF" status --socket "$SOCK" --json
	log "a peer of another gid is refused, though it may open the file"
	chmod 0666 "$SOCK"
	local out
	out=$(setpriv --reuid=65534 --regid=65533 --clear-groups "$BFBPF" status --socket "$SOCK" \
		--json 2>&1) && fail "a peer outside the socket group was served: $out"
	grep -q '"forbidden"' <<<"$out" || fail "not refused as forbidden: $out"
}

test_socket_garbage() {
	daemon_up
	local out
	out=$(ctl_send 'not json' '[1,2]' '{}' '{"op":5}' '{"op":"explode"}' '{"op":"detach"}' \
		'{"op":"detach","cgroup":7}' '{"op":"attach","cgroup":"x"}' \
		'{"op":"attach","cgroup":"x","policy":{"network_mode":"allowlist","allowed_hosts":["a.*.com"]}}' \
		'{"op":"status","extra":1}' '{"op":"verify","cgroup":"x","max_age":"soon"}' \
		'{"op":"status","op":"status"}' '{"op":"detach","cgroup":"/nonexistent"}')
	echo "$out"
	local codes
	codes=$(grep -o '"code":"[a-z_]*"' <<<"$out" | cut -d'"' -f4 | tr '\n' ' ')
	[ "$codes" = "bad_json bad_request bad_request bad_request unknown_op bad_request bad_request bad_request invalid_policy bad_request bad_request bad_json no_cgroup " ] ||
		fail "unexpected error codes: $codes"
	log "a line over the limit (16 MiB and 64 KiB)"
	out=$("$PYTHON" - "$SOCK" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(30)
s.connect(sys.argv[1])
try:
    s.sendall(b'{"op":"status","pad":"' + b"x" * (17 << 20) + b'"}\n')
except OSError:
    pass
print(s.recv(65536).decode().strip())
EOF
)
	echo "$out"
	grep -q '"code":"too_large"' <<<"$out" || fail "an oversized request was not refused"
	log "the daemon is still serving"
	expect_status 0 bfs status --json
	kill -0 "$DAEMON_PID" || fail "the daemon died"
}

test_socket_concurrent_clients() {
	daemon_up
	attach "$CG" --mode no-network
	"$PYTHON" - "$SOCK" "$CG" <<'EOF' || fail "concurrent clients"
import json, socket, sys, threading
path, cgroup = sys.argv[1], sys.argv[2]
results = []
def client(i):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(60)
    s.connect(path)
    op = {"op": "status"} if i % 2 else {"op": "verify", "cgroup": cgroup}
    s.sendall(json.dumps(op).encode() + b"\n")
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        reply += chunk
    results.append(json.loads(reply).get("ok"))
threads = [threading.Thread(target=client, args=(i,)) for i in range(64)]
for t in threads: t.start()
for t in threads: t.join()
print(f"{results.count(True)} of {len(threads)} answered ok")
sys.exit(0 if results.count(True) == 64 else 1)
EOF
}

test_socket_silent_client() {
	daemon_up
	log "a client that sends half a line and waits does not hold up others"
	"$PYTHON" - "$SOCK" <<'EOF' || fail "a silent client blocked another"
import socket, sys, time
path = sys.argv[1]
silent = socket.socket(socket.AF_UNIX)
silent.connect(path)
silent.sendall(b'{"op":"sta')
reader = socket.socket(socket.AF_UNIX)
reader.connect(path)
reader.sendall(b'{"op":"status"}\n' * 50)  # and then never reads: replies pile up
start = time.monotonic()
other = socket.socket(socket.AF_UNIX)
other.settimeout(10)
other.connect(path)
other.sendall(b'{"op":"status"}\n')
reply = other.recv(65536)
took = time.monotonic() - start
print(f"answered in {took:.3f} s: {reply[:60]!r}")
sys.exit(0 if b'"ok":true' in reply else 1)
EOF
}

# The package clients/python with its pytest suite: its own daemon, cgroups and venv
# (pip install from the checkout); pytest's summary goes to the case's log.
test_python_client() {
	BFBPF="$BFBPF" "$PYTHON" -m pytest -q -p no:cacheprovider \
		--basetemp="$CASEDIR/pytest" "$IT_DIR/../../clients/python/tests" ||
		fail "clients/python tests (pytest)"
}
