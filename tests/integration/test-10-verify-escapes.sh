# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: the ways out of a sandbox that verify must see, and the relock must
# not leave open (issue 19): sockets that no address hook judges, opened
# before a relock or an attach (packet, XDP, vsock); capabilities over the
# sandbox's network (CAP_NET_ADMIN, CAP_NET_RAW, judged in the user namespace
# that owns it); a cgroup.procs outside the sandbox that a process can write;
# a live vsock transport.

ALL_TESTS+=(packet_socket_relock packet_socket_before_attach xdp_vsock_sockets_held
	verify_cgroup_escape verify_net_admin_holder verify_userns_not_net_admin verify_vsock)

ESCAPE_PORT=5555

# The sandbox's attacker: opens the sockets it is asked for (as root, in the
# public phase), drops to uid 65534 with every capability set emptied (the
# bounding set too), keeps the descriptors, and says ready. Then, for each
# DIR/send.TAG that appears, it writes an IPv4/UDP frame carrying TAG through
# its packet socket to the router's MAC, and records the outcome in DIR/sent.TAG.
# shellcheck disable=SC2016 # Python, not shell
ESCAPE_HOLDER='
import ctypes, os, socket, struct, sys, time
d, kinds, ifname, mac, src, dst, port = sys.argv[1:8]
made = {
    "packet": lambda: socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800)),
    "xdp": lambda: socket.socket(44, socket.SOCK_RAW, 0),  # AF_XDP
    "vsock": lambda: socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM),
}
held = {kind: made[kind]() for kind in kinds.split(",")}
libc = ctypes.CDLL(None, use_errno=True)
for cap in range(64):
    libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP
os.setgroups([])
os.setresgid(65534, 65534, 65534)
os.setresuid(65534, 65534, 65534)  # from uid 0: permitted, effective and ambient are emptied
open(d + "/ready", "w").close()

def checksum(data):
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    total = (total >> 16) + (total & 0xFFFF)
    return ~(total + (total >> 16)) & 0xFFFF

def frame(tag):
    udp = struct.pack("!HHHH", 40000, int(port), 8 + len(tag), 0) + tag
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    return ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:] + udp

done = set()
while True:
    for name in os.listdir(d):
        if not name.startswith("send.") or name in done:
            continue
        done.add(name)
        tag = name[5:]
        try:
            held["packet"].sendto(frame(tag.encode()), (ifname, 0x0800, 0, 0, bytes.fromhex(mac.replace(":", ""))))
            result = "sent"
        except OSError as e:
            result = "error %d" % e.errno
        with open(d + "/sent." + tag, "w") as f:
            f.write(result)
    time.sleep(0.05)
'

# A UDP listener in SRV on $SRV4:$ESCAPE_PORT: every datagram's payload, one per line, in FILE.
ESCAPE_LISTENER='
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
open(sys.argv[4], "w").close()
while True:
    data, peer = s.recvfrom(2048)
    with open(sys.argv[3], "a") as f:
        f.write(data.decode(errors="replace") + "\n")
'

escape_listener_start() {
	HEARD=$CASEDIR/heard
	: >"$HEARD"
	in_ns "$NS_SRV" "$PYTHON" -c "$ESCAPE_LISTENER" $SRV4 $ESCAPE_PORT "$HEARD" "$CASEDIR/listener.ready" \
		>>"$CASEDIR/listener.log" 2>&1 &
	local pid=$!
	defer "kill -KILL $pid; wait $pid"
	wait_for_file "$CASEDIR/listener.ready" 20 || fail "the UDP listener in SRV did not start"
}

# sbx_bg CG CMD...: a sandbox process in the background (CG, then SBX); BGPID is CMD's pid.
sbx_bg() {
	local cg=$1
	shift
	(echo "$BASHPID" >"$cg/cgroup.procs" && exec nsenter --net="/run/netns/$NS_SBX" "$@") &
	BGPID=$!
}

# holder_start CG KINDS: the attacker in CG and SBX, holding KINDS (packet,xdp,vsock); sets HOLDER, HDIR.
holder_start() {
	local cg=$1 kinds=$2 mac
	HDIR=$CASEDIR/holder
	mkdir -p "$HDIR"
	chmod 0777 "$HDIR" # the holder writes there as uid 65534
	mac=$(ip -n "$NS_SRV" -br link show eth0 | awk '{print $3}')
	sbx_bg "$cg" "$PYTHON" -c "$ESCAPE_HOLDER" "$HDIR" "$kinds" eth0 "$mac" $SBX4 $SRV4 $ESCAPE_PORT \
		>"$HDIR/out" 2>&1
	HOLDER=$BGPID
	defer "kill -KILL $HOLDER"
	wait_for_file "$HDIR/ready" 20 || {
		cat "$HDIR/out"
		fail "the socket holder did not start"
	}
	log "process $HOLDER holds $kinds as uid 65534 without capabilities"
}

# holder_send TAG: the holder writes a frame carrying TAG; prints what it says of the send.
holder_send() {
	touch "$HDIR/send.$1"
	wait_for_file "$HDIR/sent.$1" 10 || fail "the holder did not try to send $1"
	cat "$HDIR/sent.$1"
}

# heard TAG: did a frame carrying TAG reach $SRV4 (within a second)?
heard() {
	local n=0
	until grep -qx "$1" "$HEARD"; do
		n=$((n + 1))
		[ $n -gt 20 ] && return 1
		sleep 0.05
	done
}

holder_gone() {
	local n=0
	while kill -0 "$HOLDER" 2>/dev/null && [ "$(awk '{print $3}' /proc/$HOLDER/stat 2>/dev/null)" != Z ]; do
		n=$((n + 1))
		[ $n -gt 100 ] && return 1
		sleep 0.05
	done
}

# verify_fails CHECK NEEDLE...: verify exits 1, and CHECK fails with each NEEDLE in its detail.
verify_fails() {
	local check=$1 needle expr
	shift
	expect_status 1 bfs verify --cgroup "$CG" --json
	cp "$CASEDIR/last.out" "$CASEDIR/verify.json"
	expr="[c for c in d['checks'] if c['name'] == '$check' and not c['ok']"
	for needle in "$@"; do
		expr="$expr and '$needle' in c['detail']"
	done
	json_check "$CASEDIR/verify.json" "$expr]" || fail "verify's $check check does not name $*"
}

# proc_start COMM CG CMD...: a sandbox process (CG, SBX) running CMD, until its command is COMM; sets PROC.
proc_start() {
	local comm=$1 cg=$2 n=0
	shift 2
	sbx_bg "$cg" "$@"
	PROC=$BGPID
	defer "kill -KILL $PROC"
	until [ "$(cat /proc/$PROC/comm 2>/dev/null)" = "$comm" ]; do
		n=$((n + 1))
		[ $n -gt 100 ] && fail "process $PROC did not start $comm"
		sleep 0.05
	done
}

# The install-then-lock flow: a packet socket opened in the public phase must
# not survive the relock to no-network.
test_packet_socket_relock() {
	world_up
	escape_listener_start
	daemon_up
	attach "$CG" --mode public
	holder_start "$CG" packet
	[ "$(holder_send public)" = sent ] || fail "the holder could not send in the public phase"
	heard public || fail "the public phase's frame did not arrive: this case could prove nothing"
	log "the relock to no-network is refused while the packet socket lives, naming its holder"
	expect_status 1 bfs update --cgroup "$CG" --mode no-network --json
	json_check "$CASEDIR/last.out" "d['ok'] is False and d['error']['code'] == 'sockets_held'
		and 'process $HOLDER ' in d['error']['message'] and 'AF_PACKET' in d['error']['message']" ||
		fail "update does not refuse naming the holder"
	log "with --kill-holders the relock kills the holder, then nothing gets out"
	expect_status 0 bfs update --cgroup "$CG" --mode no-network --kill-holders --json
	json_check "$CASEDIR/last.out" "d['ok'] is True and d['killed_holders'] >= 1" ||
		fail "update --kill-holders did not report its kill"
	holder_gone || fail "the holder $HOLDER still lives"
	touch "$HDIR/send.locked"
	if heard locked; then fail "a frame got out after the relock"; fi
	expect_status 0 bfs verify --cgroup "$CG"
}

# A running container attached with its sockets already open (attach --pid).
test_packet_socket_before_attach() {
	world_up
	escape_listener_start
	daemon_up
	holder_start "$CG" packet
	[ "$(holder_send before)" = sent ] || fail "the holder could not send before the attach"
	heard before || fail "the frame sent before the attach did not arrive: this case could prove nothing"
	attach "$CG" --mode no-network
	log "verify fails while the packet socket lives, naming its holder"
	verify_fails held_sockets "process $HOLDER " AF_PACKET
	expect_status 0 bfs update --cgroup "$CG" --mode no-network --kill-holders
	holder_gone || fail "the holder $HOLDER still lives"
	touch "$HDIR/send.locked"
	if heard locked; then fail "a frame got out after the relock"; fi
	expect_status 0 bfs verify --cgroup "$CG"
}

# family_available NAME NUMBER TYPE: can root open a socket of this family here?
family_available() {
	"$PYTHON" -c "import socket; socket.socket($2, $3)" 2>/dev/null || {
		log "no $1 sockets on this kernel"
		return 1
	}
}

# AF_XDP (no socket diagnostics on every kernel) and AF_VSOCK: found all the same.
test_xdp_vsock_sockets_held() {
	local first=() kinds
	family_available AF_XDP 44 socket.SOCK_RAW && first+=(xdp:AF_XDP)
	family_available AF_VSOCK socket.AF_VSOCK socket.SOCK_STREAM && first+=(vsock:AF_VSOCK)
	[ ${#first[@]} -gt 0 ] || skip "neither AF_XDP nor AF_VSOCK sockets on this kernel"
	kinds=$(printf '%s\n' "${first[@]%%:*}" | paste -sd,)
	world_up
	daemon_up
	attach "$CG" --mode public
	holder_start "$CG" "$kinds"
	expect_status 1 bfs update --cgroup "$CG" --mode allowlist --allow $SRV4 --json
	json_check "$CASEDIR/last.out" "d['error']['code'] == 'sockets_held'
		and 'process $HOLDER ' in d['error']['message'] and '${first[0]#*:}' in d['error']['message']" ||
		fail "update does not refuse naming the ${first[0]#*:} holder"
	log "the same sockets opened before an attach fail verify"
	kill -KILL $HOLDER
	wait $HOLDER 2>/dev/null
	rm -rf "$HDIR"
	detach "$CG"
	# the last one first: each is named in its turn
	kinds=$(printf '%s\n' "${first[@]%%:*}" | tac | paste -sd,)
	holder_start "$CG" "$kinds"
	attach "$CG" --mode no-network
	verify_fails held_sockets "process $HOLDER " "${first[-1]#*:}"
	expect_status 0 bfs update --cgroup "$CG" --mode no-network --kill-holders
	holder_gone || fail "the holder $HOLDER still lives"
	expect_status 0 bfs verify --cgroup "$CG"
}

# uid 0 without capabilities can write the root cgroup.procs (0644 root) and leave.
test_verify_cgroup_escape() {
	world_up
	daemon_up
	attach "$CG" --mode no-network
	proc_start sleep "$CG" setpriv --bounding-set -all --inh-caps -all sleep 60
	log "uid 0 with every capability set empty, in the host's cgroup namespace"
	verify_fails cgroup_escape "process $PROC " "/cgroup.procs" "it can move itself out"
	log "the check is no false alarm: such a process does leave"
	local out
	out=$(sbx "$CG" setpriv --bounding-set -all --inh-caps -all sh -c "echo \$\$ >$CGROOT/cgroup.procs && cat /proc/self/cgroup")
	echo "$out"
	grep -qx '0::/' <<<"$out" || fail "a capless uid 0 could not leave: the check would be a false alarm"
	kill -KILL $PROC
	wait $PROC 2>/dev/null
	log "in its own cgroup namespace with cgroupfs read-only, it cannot"
	proc_start sleep "$CG" unshare --cgroup --mount sh -c "mount -o remount,bind,ro $CGROOT &&
		exec setpriv --bounding-set -all --inh-caps -all sh -c 'echo \$\$ >$CGROOT/cgroup.procs; exec sleep 60'"
	grep -qx "$PROC" "$CG/cgroup.procs" || fail "the confined process left its cgroup"
	expect_status 0 bfs verify --cgroup "$CG"
}

# A process holding only CAP_NET_ADMIN (docker run --cap-drop ALL --cap-add NET_ADMIN).
test_verify_net_admin_holder() {
	world_up
	daemon_up
	attach "$CG" --mode no-network
	proc_start sleep "$CG" setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps -all,+net_admin \
		--ambient-caps -all,+net_admin --bounding-set -all,+net_admin sleep 60
	grep -q '^CapEff:.*0000000000001000$' /proc/$PROC/status || fail "the process does not hold CAP_NET_ADMIN"
	verify_fails net_admin "process $PROC " CAP_NET_ADMIN
	kill -KILL $PROC
	wait $PROC 2>/dev/null
	log "without it, verify passes"
	proc_start sleep "$CG" setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps -all \
		--bounding-set -all sleep 60
	expect_status 0 bfs verify --cgroup "$CG"
}

# unshare -Ur gives a full bounding set, in a user namespace that owns nothing of the sandbox's network.
test_verify_userns_not_net_admin() {
	world_up
	daemon_up
	attach "$CG" --mode no-network
	proc_start sleep "$CG" setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps -all --bounding-set -all \
		unshare -Ur sleep 60
	grep -q '^CapEff:.*1ffffffffff$' /proc/$PROC/status || fail "unshare -Ur did not give capabilities"
	log "its capabilities count in its own user namespace only: verify passes"
	expect_status 0 bfs verify --cgroup "$CG"
	log "and indeed such a process opens no packet socket"
	local out
	out=$(sbx "$CG" setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps -all --bounding-set -all \
		unshare -Ur "$PYTHON" "$PROBE" packet any 2>&1)
	echo "$out"
	grep -q EPERM <<<"$out" || fail "a process of a child user namespace opened a packet socket"
}

vsock_cid() {
	"$PYTHON" -c '
import fcntl, os, socket, struct
try:
    fd = os.open("/dev/vsock", os.O_RDONLY)
    cid = struct.unpack("I", fcntl.ioctl(fd, 0x7b9, b"\0" * 4))[0]
except OSError:
    cid = socket.VMADDR_CID_ANY
print(cid if cid != socket.VMADDR_CID_ANY else "")'
}

# A live vsock transport and no BPF LSM: the operator must accept it (--accept-vsock).
test_verify_vsock() {
	world_up
	DAEMON_ACCEPT_VSOCK=0 daemon_up
	attach "$CG" --mode no-network
	local cid
	cid=$(vsock_cid)
	if lsm_supported; then
		log "BPF LSM here: AF_VSOCK is refused per cgroup"
		sbx "$CG" "$PYTHON" -c 'import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)' 2>&1 |
			grep -q 'Operation not permitted' || fail "AF_VSOCK was not refused"
		expect_status 0 bfs verify --cgroup "$CG"
		return 0
	fi
	if [ -z "$cid" ]; then
		log "no vsock transport here: the check passes"
		expect_status 0 bfs verify --cgroup "$CG" --json
		json_check "$CASEDIR/last.out" "[c for c in d['checks'] if c['name'] == 'vsock' and c['ok']]" ||
			fail "no vsock check"
		return 0
	fi
	log "a live vsock transport (local CID $cid): a sandbox process opens AF_VSOCK"
	sbx "$CG" "$PYTHON" -c 'import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)' ||
		fail "AF_VSOCK could not be opened: this case could prove nothing"
	grep -q 'vsock transport live' "$CASEDIR/daemon.log" || fail "the daemon's log does not name the vsock transport"
	verify_fails vsock "local CID $cid" "--accept-vsock"
	log "the operator accepts it: verify passes, with a warning"
	daemon_stop $DAEMON_PID
	DAEMON_ACCEPT_VSOCK=1 daemon_start
	daemon_wait
	expect_status 0 bfs verify --cgroup "$CG" --json
	json_check "$CASEDIR/last.out" "[c for c in d['checks'] if c['name'] == 'vsock' and c['ok']
		and 'WARNING' in c['detail']]" || fail "the accepted vsock check carries no warning"
}
