# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: guards — a cgroup subtree closed by default, where a registered
# (attached) sandbox gets its own policy instead; the order of registration,
# sockets that change cgroup, a daemon restart, the protected cgroups, and a
# real container under a guarded cgroup parent.

ALL_TESTS+=(guard_closes_new_cgroup guard_registered_child_own_policy guard_attach_detach_loop
	guard_socket_moved_in_denied guard_daemon_restart guard_refuses_protected guard_podman)

# Ports of this file's counting servers: nobody's policy allows NOBODY_PORT on SRV4;
# POLICY_DENIED_PORT on SRV4B is outside the registered sandbox's allowlist.
NOBODY_PORT=7100
POLICY_DENIED_PORT=7200

# guard_count_server NS ADDR PORT FILE: a TCP server that appends one line to FILE per
# connection it accepts (what reached the world), until the case ends.
guard_count_server() {
	local ns=$1 addr=$2 port=$3 file=$4 ready
	ready=$(mktemp -u "$CASEDIR/count-ready.XXXXXX")
	: >"$file"
	nsenter --net="/run/netns/$ns" "$PYTHON" - "$addr" "$port" "$file" "$ready" \
		>>"$CASEDIR/count-server.log" 2>&1 <<'EOF' &
import socket, sys
addr, port, path, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, port))
s.listen(1024)
open(ready, "w").close()
with open(path, "a", buffering=1) as out:
    while True:
        conn, peer = s.accept()
        out.write(f"{peer[0]}\n")
        conn.close()
EOF
	local pid=$!
	defer "kill -KILL $pid; wait $pid"
	wait_for_file "$ready" 30 || fail "counting server on $addr:$port did not start"
}

# guard_reached FILE: how many connections the counting server accepted.
guard_reached() { wc -l <"$1"; }

guard() {
	local cg=$1
	shift
	bf_ok guard --cgroup "$cg" "$@"
}

# guard_up: the world, the daemon, and a guard (no-network) on $CG.
guard_up() {
	world_up
	daemon_up
	guard "$CG"
	defer "bfs unguard --cgroup '$CG'"
}

# guard_events_wait FILE PYEXPR: poll `bfbpf log --json` until PYEXPR holds (e = the events).
guard_events_wait() {
	local file=$1 expr=$2 n=0
	until bfs log --json >"$file" 2>/dev/null && "$PYTHON" - "$file" "$expr" <<'EOF'; do
import json, sys
e = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
sys.exit(0 if eval(sys.argv[2]) else 1)
EOF
		n=$((n + 1))
		[ $n -gt 100 ] && {
			cat "$file"
			return 1
		}
		sleep 0.1
	done
}

test_guard_closes_new_cgroup() {
	guard_up
	local reach=$CASEDIR/reach-nobody
	guard_count_server "$NS_SRV" $SRV4 $NOBODY_PORT "$reach"
	log "a cgroup made after the guard, its process connecting at once"
	mkdir "$CG/C" || fail "cannot create $CG/C"
	expect "$CG/C" \
		"denied tcp $SRV4 $NOBODY_PORT" \
		"denied tcp $SRV6 7000" \
		"denied udp-sendto $SRV4 9999"
	log "and a deeper one"
	mkdir -p "$CG/C/deeper/still" || fail "cannot create $CG/C/deeper/still"
	expect "$CG/C/deeper/still" "denied tcp $SRV4 $NOBODY_PORT"
	[ "$(guard_reached "$reach")" -eq 0 ] || fail "$(guard_reached "$reach") connections reached the world"
	expect_listed "$CG" "s.get('role') == 'guard' and s['guard']['refused'] > 0"
}

test_guard_registered_child_own_policy() {
	guard_up
	local reach=$CASEDIR/reach-nobody
	guard_count_server "$NS_SRV" $SRV4 $NOBODY_PORT "$reach"
	cg_make "$CG/C"
	cg_make "$CG/D"
	attach "$CG/C" --mode allowlist --allow $SRV4:7000
	log "the registered sandbox: its own policy, in place of the guard's"
	expect "$CG/C" \
		"ok tcp $SRV4 7000" \
		"denied tcp $SRV4 $NOBODY_PORT" \
		"denied tcp $SRV4B 7000"
	log "a cgroup below it follows it"
	mkdir "$CG/C/sub" || fail "cannot create $CG/C/sub"
	expect "$CG/C/sub" "ok tcp $SRV4 7000" "denied tcp $SRV4B 7000"
	log "an unregistered sibling stays closed"
	expect "$CG/D" "denied tcp $SRV4 7000" "denied tcp $SRV4 $NOBODY_PORT"
	[ "$(guard_reached "$reach")" -eq 0 ] || fail "$(guard_reached "$reach") connections reached the world"
	log "an event says that it was a guard, for an unregistered cgroup"
	guard_events_wait "$CASEDIR/events.json" \
		"[x for x in e if x.get('unregistered') is True and x.get('cgroup_id') == $(cg_id "$CG") and x.get('port') == $NOBODY_PORT]" ||
		fail "no unregistered-cgroup event from the guard"
	bfs log >"$CASEDIR/log.txt" || fail "bfbpf log failed"
	grep -q "guard: unregistered cgroup" "$CASEDIR/log.txt" || fail "the log line does not say so"
	bfs metrics >"$CASEDIR/metrics.txt" || fail "bfbpf metrics failed"
	grep guard "$CASEDIR/metrics.txt"
	grep -Eq "^bfbpf_guard_refusals_total\{guard=\"[^\"]*\"\} [1-9]" "$CASEDIR/metrics.txt" ||
		fail "the guard's refusal counter did not go up"
	log "verify the guard: programs, digest, and a live probe from an unregistered cgroup"
	expect_status 0 bfs verify --cgroup "$CG"
}

# A loop connecting from P/C while P/C is attached and detached, again and
# again: the policy-denied port never receives a connection (the order:
# links, policy, registration; unregistration, links).
test_guard_attach_detach_loop() {
	guard_up
	local denied=$CASEDIR/reach-denied allowed=$CASEDIR/reach-allowed
	guard_count_server "$NS_SRV" $SRV4B $POLICY_DENIED_PORT "$denied"
	guard_count_server "$NS_SRV" $SRV4 $NOBODY_PORT "$allowed"
	cg_make "$CG/C"
	sbx "$CG/C" "$PYTHON" - $SRV4 $NOBODY_PORT $SRV4B $POLICY_DENIED_PORT "$CASEDIR/loop.out" <<'EOF' &
import errno, socket, sys, time
a, ap, d, dp, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
n = {"ok": 0, "eperm": 0, "other": 0}
end = time.time() + 60
while time.time() < end:
    for host, port in ((a, ap), (d, dp)):
        s = socket.socket()
        s.settimeout(0.5)
        try:
            s.connect((host, port))
            n["ok"] += 1
        except PermissionError:
            n["eperm"] += 1
        except OSError:
            n["other"] += 1
        finally:
            s.close()
    with open(out, "w") as f:
        f.write(f"{n}\n")
EOF
	local loop=$!
	defer "kill -KILL $loop"
	local _
	for _ in 1 2 3 4 5; do
		attach "$CG/C" --mode allowlist --allow $SRV4:$NOBODY_PORT >/dev/null
		sleep 0.3
		detach "$CG/C" >/dev/null
		sleep 0.2
	done
	kill -KILL $loop
	cat "$CASEDIR/loop.out"
	log "the policy-denied port: $(guard_reached "$denied") connections; the allowed one: $(guard_reached "$allowed")"
	[ "$(guard_reached "$denied")" -eq 0 ] || fail "the policy-denied port was reached"
	[ "$(guard_reached "$allowed")" -gt 0 ] || fail "the registered policy never applied (the loop never got through)"
	log "detached: closed again"
	local before
	before=$(guard_reached "$allowed")
	expect "$CG/C" "denied tcp $SRV4 $NOBODY_PORT"
	[ "$(guard_reached "$allowed")" -eq "$before" ] || fail "a connection got through after the detach"
}

# Sockets made in an unregistered cgroup, used after the process moved into a
# registered one: the kernel judges them by their own cgroup, so does the guard.
test_guard_socket_moved_in_denied() {
	guard_up
	local reach=$CASEDIR/reach-nobody
	guard_count_server "$NS_SRV" $SRV4 $NOBODY_PORT "$reach"
	cg_make "$CG/C"
	cg_make "$CG/D"
	attach "$CG/C" --mode allowlist --allow $SRV4:$NOBODY_PORT --allow $SRV4:9999
	sbx "$CG/D" "$PYTHON" - "$CG/C/cgroup.procs" $SRV4 $NOBODY_PORT 9999 >"$CASEDIR/moved.out" 2>&1 <<'EOF'
import os, socket, sys
procs, addr, port, uport = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
t.settimeout(3)
with open(procs, "w") as f:
    f.write(str(os.getpid()))
results = []
try:
    t.connect((addr, port))
    results.append("tcp ok")
except OSError as e:
    results.append(f"tcp {e.errno}")
try:
    u.sendto(b"x", (addr, uport))
    results.append("udp ok")
except OSError as e:
    results.append(f"udp {e.errno}")
fresh = socket.socket()
fresh.settimeout(3)
try:
    fresh.connect((addr, port))
    results.append("fresh ok")
except OSError as e:
    results.append(f"fresh {e.errno}")
print(" ".join(results))
EOF
	cat "$CASEDIR/moved.out"
	grep -q "tcp 1 udp 1 fresh ok" "$CASEDIR/moved.out" ||
		fail "expected EPERM (1) for the old sockets and a working new socket"
	[ "$(guard_reached "$reach")" -eq 1 ] || fail "expected only the new socket's connection to arrive"
}

test_guard_daemon_restart() {
	world_up
	daemon_up
	guard "$CG"
	cg_make "$CG/C"
	attach "$CG/C" --mode allowlist --allow $SRV4
	log "the daemon stops and starts again"
	daemon_stop "$DAEMON_PID"
	daemon_start
	daemon_wait
	defer "bfs unguard --cgroup '$CG'"
	expect_listed "$CG" "s.get('role') == 'guard'"
	expect_listed "$CG/C" "s.get('role') == 'sandbox'"
	mkdir "$CG/E" || fail "cannot create $CG/E"
	expect "$CG/E" "denied tcp $SRV4 7000"
	expect "$CG/C" "ok tcp $SRV4 7000" "denied tcp $SRV4B 7000"
	log "a guard's policy is replaced in place (allowlist default), then unguard opens the subtree"
	guard "$CG" --mode allowlist --allow $SRV4B
	expect "$CG/E" "ok tcp $SRV4B 7000" "denied tcp $SRV4 7000"
	expect_status 1 bfs detach --cgroup "$CG"
	expect_one_stderr_line "unguard"
	bf_ok unguard --cgroup "$CG"
	expect "$CG/E" "ok tcp $SRV4 7000" "ok tcp $SRV4B 7000"
	expect_not_listed "$CG"
}

test_guard_refuses_protected() {
	world_up
	[ -x "$BFBPF" ] || fail "$BFBPF is missing (run make)"
	defer "rm -rf '$PINS'"
	defer "rm -f '$SOCK'"
	log "a daemon that runs in $CG/daemon/inner"
	mkdir -p "$CG/daemon/inner" || fail "cannot create $CG/daemon/inner"
	(echo "$BASHPID" >"$CG/daemon/inner/cgroup.procs" &&
		exec "$BFBPF" daemon --socket "$SOCK" --bpffs "$PINS") >>"$CASEDIR/daemon.log" 2>&1 &
	DAEMON_PID=$!
	defer "daemon_stop $DAEMON_PID"
	daemon_wait
	local target
	for target in "$CGROOT" "$CG" "$CG/daemon" "$CG/daemon/inner"; do
		expect_status 2 bfs guard --cgroup "$target"
		expect_one_stderr_line "protected_cgroup"
	done
	mkdir "$CG/free" || fail "cannot create $CG/free"
	bf_ok guard --cgroup "$CG/free"
	bf_ok unguard --cgroup "$CG/free"
	expect_not_listed "$CG"
}

# podman_case ...: podman with this case's own storage ($PODDIR: podman wants a short
# runroot), runc and cgroupfs.
podman_case() {
	podman --root "$PODDIR/root" --runroot "$PODDIR/run" \
		--cgroup-manager cgroupfs --runtime runc --events-backend none "$@"
}

# v1_cgroups_remove REL: runc also makes the container's cgroup (and its parents) in
# every cgroup v1 hierarchy; remove this case's part of them (REL: the path below the mount).
v1_cgroups_remove() {
	local rel=$1 mnt
	while read -r mnt; do
		[ -d "$mnt$rel" ] || continue
		find "$mnt$rel" -depth -type d -exec rmdir {} \; 2>/dev/null
		rmdir "$(dirname "$mnt$rel")" 2>/dev/null # the run's base, once empty
	done < <(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup") print $5; break } }' /proc/self/mountinfo)
}

test_guard_podman() {
	command -v podman >/dev/null || skip "podman is not installed"
	command -v runc >/dev/null || skip "runc is not installed"
	world_up
	daemon_up
	local parent=$CG/pods reach=$CASEDIR/reach-nobody
	guard_count_server "$NS_SRV" $SRV4 $NOBODY_PORT "$reach"
	cg_make "$parent"
	guard "$parent"
	defer "bfs unguard --cgroup '$parent'"
	PODDIR=$(mktemp -d /tmp/bfbpf-pod.XXXXXX) || fail "cannot make a podman directory"
	defer "v1_cgroups_remove '${CG#"$CGROOT"}'"
	mkdir -p "$CASEDIR/image"
	defer "podman_case rm -af -t 0; podman_case rmi -af; rm -rf '$PODDIR'"
	tar -C "$CASEDIR/image" -cf - . | podman_case import - bfbpf-guard-test:latest >/dev/null ||
		fail "podman import failed"
	log "an unregistered container whose entrypoint connects at once"
	podman_case run --rm --pull never --network "ns:/run/netns/$NS_SBX" \
		--cgroup-parent "${parent#"$CGROOT"}" --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
		-v /usr:/usr:ro -v /lib:/lib:ro -v /lib64:/lib64:ro -v /bin:/bin:ro \
		bfbpf-guard-test:latest /usr/bin/python3 -c "
import socket
for i in range(20):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(('$SRV4', $NOBODY_PORT))
        print('connected')
    except OSError as e:
        print('errno', e.errno)
    s.close()
" >"$CASEDIR/container.out" 2>"$CASEDIR/container.err"
	cat "$CASEDIR/container.out" "$CASEDIR/container.err"
	grep -q "errno 1" "$CASEDIR/container.out" || fail "the container did not run or was not refused"
	grep -q connected "$CASEDIR/container.out" && fail "the container connected"
	[ "$(guard_reached "$reach")" -eq 0 ] || fail "$(guard_reached "$reach") connections reached the world"
}
