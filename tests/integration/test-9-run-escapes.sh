# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: the ways out of `bfbpf run` that an attacker inside found (issue 19:
# 2(c), 4, 10), each reproduced with real sockets against a sink that records
# what reaches it; and the CLI's --json errors.
#
# RUN_COMPAT=1 runs the same attacks through a bfbpf from before `run --user`
# and `--allow-root` (to show them on it): "root" as it was, "nobody" through
# setpriv inside the command.

ALL_TESTS+=(run_cgroup_escape_root run_cgroup_escape_user run_pidfd_getfd run_socket_families
	run_sigkill_user check_vsock json_client_errors)

SINK_PORT=9400

# sink_up: in SRV, a TCP and UDP listener on $SRV4:$SINK_PORT, outside any
# sandbox, that writes every datagram and connection it gets, with its bytes,
# to $CASEDIR/sink.log. In no-network mode $SRV4 is denied: the sink proves
# what a sandbox got out.
sink_up() {
	cat >"$CASEDIR/sink.py" <<'EOF'
import socket, sys, threading
addr, port, log_path, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
log = open(log_path, "a", buffering=1)
lock = threading.Lock()
def record(kind, peer, data):
    with lock:
        log.write(f"{kind} {peer[0]} {data!r}\n")
def tcp_conn(conn, peer):
    data = b""
    conn.settimeout(5)
    try:
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    record("tcp", peer, data)
    conn.close()
def tcp(listener):
    while True:
        conn, peer = listener.accept()
        threading.Thread(target=tcp_conn, args=(conn, peer), daemon=True).start()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind((addr, port))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind((addr, port))
t.listen(16)
threading.Thread(target=tcp, args=(t,), daemon=True).start()
open(ready, "w").close()
while True:
    data, peer = u.recvfrom(65536)
    record("udp", peer, data)
EOF
	: >"$CASEDIR/sink.log"
	nsenter --net="/run/netns/$NS_SRV" "$PYTHON" "$CASEDIR/sink.py" $SRV4 $SINK_PORT \
		"$CASEDIR/sink.log" "$CASEDIR/sink.ready" >>"$CASEDIR/sink.err" 2>&1 &
	local pid=$!
	defer "kill -KILL $pid; wait $pid"
	wait_for_file "$CASEDIR/sink.ready" 30 || {
		cat "$CASEDIR/sink.err"
		fail "the sink did not start"
	}
}

# sink_expect_nothing MARK: no byte carrying MARK reached the sink. A control
# datagram sent afterwards from SBX, outside any sandbox, over the same veth,
# must arrive: whatever the sandbox sent before it would have arrived first.
sink_expect_nothing() {
	local mark=$1 control=control-$RANDOM$RANDOM n=0
	in_ns "$NS_SBX" "$PYTHON" -c 'import socket, sys
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(sys.argv[1].encode(), (sys.argv[2], int(sys.argv[3])))' \
		"$control" $SRV4 $SINK_PORT || fail "cannot send the control datagram"
	while ! grep -qF "$control" "$CASEDIR/sink.log"; do
		n=$((n + 1))
		[ $n -gt 200 ] && fail "the control datagram did not reach the sink: the sink proves nothing"
		sleep 0.05
	done
	echo "sink.log:"
	sed 's/^/  /' "$CASEDIR/sink.log"
	if grep -qF "$mark" "$CASEDIR/sink.log"; then
		fail "bytes from the sandbox ($mark) reached the denied sink"
	fi
}

# The attacker's sender: send.py udp|tcp ADDR PORT MARK [FD]. Prints "sent" and
# exits 0 if the bytes left, else prints the error and exits 1.
send_script() {
	cat >"$CASEDIR/send.py" <<'EOF'
import socket, sys
kind, addr, port, mark = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].encode()
try:
    if kind == "tcp":
        s = socket.create_connection((addr, port), timeout=5)
        s.sendall(mark)
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(mark, (addr, port))
    s.close()
except OSError as e:
    print(f"{kind} to {addr}:{port}: {e}")
    sys.exit(1)
print(f"{kind} to {addr}:{port}: sent")
EOF
}

# escape_run WHO RUN-OPTION... -- COMMAND...: `bfbpf run` in SBX, the command
# as WHO: root (--allow-root) or nobody (--user 65534).
escape_run() {
	local who=$1
	shift
	local options=() wrap=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		options+=("$1")
		shift
	done
	shift
	if [ "${RUN_COMPAT:-0}" = 1 ]; then
		[ "$who" = nobody ] &&
			wrap=(setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all --bounding-set=-all --)
	elif [ "$who" = root ]; then
		options+=(--allow-root)
	else
		options+=(--user 65534)
	fi
	timeout -k 5 "$CLI_TIMEOUT" nsenter --net="/run/netns/$NS_SBX" "$BFBPF" run "${options[@]}" \
		-- "${wrap[@]}" "$@"
}

# cgroup_escape WHO: the command writes its pid to the root cgroup.procs, then
# connects and sends to a denied address (2(c): as root, it moved out and got
# through). The write must fail, and nothing reach the sink.
cgroup_escape() {
	local who=$1 mark=escape-$RANDOM$RANDOM
	world_up
	sink_up
	send_script
	# shellcheck disable=SC2016 # expanded by the command's shell
	expect_status 1 escape_run "$who" --mode no-network -- sh -c '
		if echo $$ >"$1/cgroup.procs"; then echo "MOVED to the root cgroup"; fi
		grep "^0::" /proc/self/cgroup
		"$2" "$3" tcp "$4" "$5" "$6-tcp" || exit 1
		"$2" "$3" udp "$4" "$5" "$6-udp"' \
		sh "$CGROOT" "$PYTHON" "$CASEDIR/send.py" $SRV4 $SINK_PORT "$mark"
	grep -q "MOVED" "$CASEDIR/last.out" && fail "the command wrote its pid to $CGROOT/cgroup.procs"
	grep -q "cgroup.procs" "$CASEDIR/last.err" || fail "the write to cgroup.procs did not fail"
	grep -q "Operation not permitted" "$CASEDIR/last.out" || fail "the connect was not refused with EPERM"
	sink_expect_nothing "$mark"
}

test_run_cgroup_escape_root() { cgroup_escape root; }
test_run_cgroup_escape_user() { cgroup_escape nobody; }

# 4: a holder outside the sandbox, of the same uid, has a UDP socket connected
# to a denied address; the command takes it with pidfd_getfd() and sends.
test_run_pidfd_getfd() {
	local mark=stolen-$RANDOM$RANDOM holder n=0
	world_up
	sink_up
	# nsenter execs setpriv, which execs python: $! is the holder itself.
	nsenter --net="/run/netns/$NS_SBX" setpriv --reuid 65534 --regid 65534 --clear-groups \
		"$PYTHON" -c 'import signal, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((sys.argv[1], int(sys.argv[2])))
print(s.fileno(), flush=True)
signal.pause()' $SRV4 $SINK_PORT >"$CASEDIR/holder.out" 2>&1 &
	holder=$!
	defer "kill -KILL $holder"
	while ! grep -q '^[0-9]' "$CASEDIR/holder.out"; do
		n=$((n + 1))
		[ $n -gt 200 ] && fail "the holder did not start: $(cat "$CASEDIR/holder.out")"
		sleep 0.05
	done
	local fd
	fd=$(head -1 "$CASEDIR/holder.out")
	echo "holder: pid $holder (uid $(stat -c %u /proc/$holder)), socket fd $fd"
	cat >"$CASEDIR/steal.py" <<'EOF'
import ctypes, os, socket, sys
pid, fd, mark = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode()
libc = ctypes.CDLL(None, use_errno=True)
# run's init (pid 1 here) forked from bfbpf: none of bfbpf's descriptors (maps, sockets).
init = os.pidfd_open(1)
for n in range(256):
    if libc.syscall(438, init, n, 0) >= 0:
        print(f"took fd {n} of pid 1 ({os.readlink(f'/proc/1/fd/{n}')})")
try:
    pidfd = os.pidfd_open(pid)
except OSError as e:
    print(f"pidfd_open({pid}): {e}")
    sys.exit(1)
stolen = libc.syscall(438, pidfd, fd, 0)  # pidfd_getfd
if stolen < 0:
    print(f"pidfd_getfd: {os.strerror(ctypes.get_errno())}")
    sys.exit(1)
try:
    socket.socket(fileno=stolen).send(mark)
except OSError as e:
    print(f"send on the stolen socket: {e}")
    sys.exit(1)
print("sent on the stolen socket")
EOF
	expect_status 1 escape_run nobody --mode no-network -- "$PYTHON" "$CASEDIR/steal.py" \
		"$holder" "$fd" "$mark"
	grep -q "sent on the stolen socket" "$CASEDIR/last.out" && fail "the command sent on a stolen socket"
	grep -q "took fd" "$CASEDIR/last.out" && fail "the command took a descriptor of its init"
	sink_expect_nothing "$mark"
}

# 10: families no address hook judges. AF_VSOCK reaches the hypervisor (this
# host has a live transport); AF_PACKET writes frames past every hook; io_uring
# makes sockets without socket(). Each must fail inside `run`, root or not, and
# the families the hooks do judge must still work.
test_run_socket_families() {
	local mark=frame-$RANDOM$RANDOM who mac
	world_up
	sink_up
	mac=$(ip -n "$NS_SRV" -j link show eth0 | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
	cat >"$CASEDIR/families.py" <<'EOF'
import ctypes, errno, os, socket, struct, sys
src, dst, port, mac, mark = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5].encode()
got_out = False
def attempt(what, make):
    global got_out
    try:
        make()
    except OSError as e:
        print(f"{what}: {errno.errorcode.get(e.errno, e.errno)}")
        return
    print(f"{what}: SUCCEEDED")
    got_out = True
def vsock(kind):
    s = socket.socket(socket.AF_VSOCK, kind)
    s.settimeout(2)
    try:
        s.connect((2, 9999))  # the host
    except OSError:
        pass
def checksum(data):
    total = sum(struct.unpack("!10H", data))
    total = (total >> 16) + (total & 0xFFFF)
    return ~(total + (total >> 16)) & 0xFFFF
def packet():
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
    udp = struct.pack("!HHHH", 40000, port, 8 + len(mark), 0) + mark
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    s.sendto(ip + udp, ("eth0", 0x0800, 0, 0, bytes.fromhex(mac.replace(":", ""))))
def io_uring():
    libc = ctypes.CDLL(None, use_errno=True)
    params = ctypes.create_string_buffer(120)
    fd = libc.syscall(425, 4, params)  # io_uring_setup
    if fd < 0:
        raise OSError(ctypes.get_errno(), "io_uring_setup")
    os.close(fd)
attempt("socket(AF_VSOCK, SOCK_STREAM)", lambda: vsock(socket.SOCK_STREAM))
attempt("socket(AF_VSOCK, SOCK_DGRAM)", lambda: vsock(socket.SOCK_DGRAM))
attempt("socket(AF_PACKET) and a frame to the sink", packet)
attempt("socketpair(AF_PACKET)", lambda: socket.socketpair(socket.AF_PACKET))
attempt("io_uring_setup", io_uring)
for family, kind, proto in ((socket.AF_UNIX, socket.SOCK_STREAM, 0), (socket.AF_INET, socket.SOCK_DGRAM, 0),
                            (socket.AF_INET6, socket.SOCK_STREAM, 0), (socket.AF_NETLINK, socket.SOCK_RAW, 0)):
    try:
        socket.socket(family, kind, proto).close()
    except OSError as e:
        print(f"socket({family.name}) failed: {e}")
        sys.exit(2)
print("unix, inet, inet6 and netlink sockets work")
sys.exit(1 if got_out else 0)
EOF
	for who in root nobody; do
		log "as $who"
		expect_status 0 escape_run $who --mode no-network -- "$PYTHON" "$CASEDIR/families.py" \
			$SBX4 $SRV4 $SINK_PORT "$mac" "$mark-$who"
		for what in "socket(AF_VSOCK, SOCK_STREAM): EPERM" "socket(AF_VSOCK, SOCK_DGRAM): EPERM" \
			"socket(AF_PACKET) and a frame to the sink: EPERM" "io_uring_setup: EPERM"; do
			grep -qF "$what" "$CASEDIR/last.out" || fail "expected '$what'"
		done
	done
	sink_expect_nothing "$mark"
}

# SIGKILL of bfbpf run: the command dies with it, as another user too (a change
# of user clears the parent-death signal; the init sets it again). The pins stay
# and keep the cgroup confined (docs/operations.md): removed here.
test_run_sigkill_user() {
	local runpid cgroup procs pid n=0
	world_up
	nsenter --net="/run/netns/$NS_SBX" "$BFBPF" run --user 65534 --mode no-network -- \
		sleep 120 >"$CASEDIR/run.out" 2>&1 &
	runpid=$!
	cgroup=$CGROOT/bfbpf-run-$runpid
	defer "rm -rf /sys/fs/bpf/bfbpf-run/$runpid; cg_remove $cgroup"
	while :; do
		procs=$(cat "$cgroup/cgroup.procs" 2>/dev/null)
		for pid in $procs; do
			grep -qs sleep /proc/$pid/cmdline && break 2
		done
		n=$((n + 1))
		[ $n -gt 400 ] && { cat "$CASEDIR/run.out"; fail "the command did not start in $cgroup"; }
		sleep 0.05
	done
	echo "bfbpf run $runpid; its cgroup holds" $procs
	kill -KILL $runpid
	wait $runpid 2>/dev/null
	for pid in $procs; do
		n=0
		while [ -e /proc/$pid ] && ! grep -q '^State:.*Z' /proc/$pid/status 2>/dev/null; do
			n=$((n + 1))
			if [ $n -gt 100 ]; then
				ps -o pid,ppid,user,stat,cmd -p $pid
				fail "process $pid outlived the SIGKILL of bfbpf run"
			fi
			sleep 0.05
		done
	done
	echo "the command and its init died with bfbpf run"
}

# 10: `check` names AF_VSOCK when a transport to a hypervisor or guest exists
# (a socket can be made and /dev/vsock reports a local CID), as a warning.
test_check_vsock() {
	local truth
	truth=$("$PYTHON" -c 'import fcntl, socket, struct
try:
    socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM).close()
    with open("/dev/vsock", "rb") as f:
        buf = bytearray(4)
        fcntl.ioctl(f, 0x7b9, buf)  # IOCTL_VM_SOCKETS_GET_LOCAL_CID
    cid = struct.unpack("I", buf)[0]
    print(cid if cid != 0xFFFFFFFF else "none")
except OSError:
    print("none")')
	echo "vsock transport here: local CID $truth"
	expect_status 0 bf check --json
	if [ "$truth" = none ]; then
		json_check "$CASEDIR/last.out" "[c for c in d['checks'] if c['name'] == 'vsock' and c['ok'] and not c.get('warning')]" ||
			fail "check --json: no quiet vsock item on a host without a transport"
	else
		json_check "$CASEDIR/last.out" "[c for c in d['checks'] if c['name'] == 'vsock' and c['ok'] and c.get('warning') is True and 'AF_VSOCK' in c['detail'] and 'CID $truth' in c['detail']]" ||
			fail "check --json does not warn of the AF_VSOCK transport (CID $truth)"
		expect_status 0 bf check
		grep -q "^warn *vsock .*AF_VSOCK" "$CASEDIR/last.out" || fail "check does not print a vsock warning line"
	fi
}

# expect_json_error CODE: last.out is exactly one JSON error object with CODE,
# and last.err one line.
expect_json_error() {
	local code=$1
	[ "$(wc -l <"$CASEDIR/last.out")" -eq 1 ] || fail "expected exactly one line on stdout"
	json_check "$CASEDIR/last.out" "d.get('ok') is False and d['error']['code'] == '$code' and d['error']['message']" ||
		fail "expected one JSON error object with code $code"
	[ "$(grep -c . "$CASEDIR/last.err")" -eq 1 ] || fail "expected one line on stderr"
}

# "Also broken": --json printed nothing on stdout for the CLI's own failures.
test_json_client_errors() {
	daemon_up
	local gone removed=$CG/removed
	log "a missing cgroup"
	expect_status 1 bfs status --cgroup "$CG/no-such-cgroup" --json
	expect_json_error no_cgroup
	log "a late detach of a removed cgroup"
	mkdir "$removed" && attach "$removed" --mode no-network
	rmdir "$removed" || fail "cannot remove $removed"
	expect_status 1 bfs detach --cgroup "$removed" --json
	expect_json_error no_cgroup
	log "a gone pid"
	sleep 0 &
	gone=$!
	wait $gone
	expect_status 1 bfs attach --pid $gone --mode no-network --json
	expect_json_error no_process
	log "pid 0 (what podman inspect gives for a container that is not running)"
	expect_status 2 bfs attach --pid 0 --mode no-network --json
	expect_json_error bad_request
	log "an unreachable daemon"
	expect_status 1 bf status --json --socket "$CASEDIR/no-daemon.sock"
	expect_json_error unreachable
	expect_status 1 bf log --json --socket "$CASEDIR/no-daemon.sock"
	expect_json_error unreachable
	log "an invalid policy, and bad usage"
	expect_status 2 bfs attach --cgroup "$CG" --mode allowlist --allow "a.*.com" --json
	expect_json_error invalid_policy
	expect_status 2 bfs status --no-such-option --json
	expect_json_error bad_request
	expect_status 2 bf resolve --mode nowhere --json
	expect_json_error invalid_policy
}
