# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: the ways out of issue 19 items 6 to 8 (multicast reports, NAT64
# spellings of loopback, source routes), each attack made with real sockets
# and judged by what reached the world's side of the link.

ALL_TESTS+=(multicast_no_network multicast_allowlist nat64_not_loopback srv6_waypoint
	ip_source_route source_route_before_relock escapes_public)

ESCAPES=$IT_DIR/escapes.py
# Hops and groups no policy of these cases allows.
WAYPOINT6=fd00:99::1
WAYPOINT4=198.18.99.1

# sniffer_up: a sniffer on SRV's end of the link, until the case ends.
sniffer_up() {
	SNIFFED=$CASEDIR/sniffed.jsonl
	local ready=$CASEDIR/sniffer-ready
	: >"$SNIFFED"
	in_ns "$NS_SRV" "$PYTHON" "$ESCAPES" sniff eth0 "$SNIFFED" "$ready" 2>>"$CASEDIR/sniffer.log" &
	local pid=$!
	defer "kill -KILL $pid; wait $pid"
	wait_for_file "$ready" 30 || fail "the sniffer did not start"
}

# mcast_route: IPv4 multicast leaves SBX by eth0 (IPv6 has its ff00::/8 route already).
mcast_route() {
	ip -n "$NS_SBX" route add 224.0.0.0/4 dev eth0 || fail "cannot route 224.0.0.0/4 in SBX"
}

# attack_as WHO "WANT OP ARGS"...: the attacks from inside the sandbox, as
# nobody (uid 65534, no capability) or root (every capability: the source
# route options need CAP_NET_RAW).
attack_as() {
	local who=$1
	shift
	local out rc
	if [ "$who" = nobody ]; then
		out=$(sbx "$CG" setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$PYTHON" "$ESCAPES" attack "$@" 2>&1)
	else
		out=$(sbx "$CG" "$PYTHON" "$ESCAPES" attack "$@" 2>&1)
	fi
	rc=$?
	echo "$out"
	[ $rc -eq 0 ] || fail "an attack did not get the expected verdict (see MISMATCH above)"
}

# unconfined "WANT OP ARGS"...: the same from SBX's netns, outside any sandbox.
unconfined() {
	in_ns "$NS_SBX" "$PYTHON" "$ESCAPES" attack "$@" || fail "an unconfined control failed"
}

# expect_seen KIND ADDR...: the world saw a KIND record naming every ADDR (waits for it).
expect_seen() {
	"$PYTHON" "$ESCAPES" wait "$SNIFFED" "$@" --timeout 15 ||
		fail "the world never saw $* (sniffed: $(cat "$SNIFFED"))"
	log "the world saw $*"
}

# expect_not_seen KIND ADDR: no KIND record so far names ADDR. Only after a
# control that left later was seen: the link keeps the order.
expect_not_seen() {
	if "$PYTHON" "$ESCAPES" seen "$SNIFFED" "$@"; then
		fail "the world saw $* (sniffed: $(cat "$SNIFFED"))"
	fi
	log "the world did not see $*"
}

# control_joins GROUP4 GROUP6: an unconfined process of SBX joins both
# groups and waits until the world saw their reports. Reports leave in the
# order of the joins, so any report of an earlier join would be there too.
control_joins() {
	local out=$CASEDIR/control-joins.out
	in_ns "$NS_SBX" "$PYTHON" "$ESCAPES" hold "ip-join $1" "ipv6-join $2" >"$out" 2>&1 &
	local pid=$!
	defer "kill -KILL $pid; wait $pid"
	expect_seen igmp "$1"
	expect_seen mld "$2"
}

test_multicast_no_network() {
	world_up
	mcast_route
	daemon_up
	sniffer_up
	attach "$CG" --mode no-network
	log "uid 65534 joins groups whose bits would carry data: refused, whatever the level"
	attack_as nobody \
		"denied ip-join 239.1.2.3" \
		"denied ip-join-on6 239.1.2.4" \
		"denied ip-source 232.1.2.5 $SRV4" \
		"denied mcast-join 239.1.2.6" \
		"denied mcast-join ff0e::1:2:3:4" \
		"denied mcast-source ff3e::5 $SRV6" \
		"denied ipv6-join ff0e::6:7:8"
	log "an anycast address joins its solicited-node group: refused too (root, CAP_NET_ADMIN)"
	attack_as root "denied ipv6-anycast fd00::dead:beef"
	control_joins 239.255.0.99 ff0e::99
	local group
	for group in 239.1.2.3 239.1.2.4 232.1.2.5 239.1.2.6; do
		expect_not_seen igmp $group
	done
	for group in ff0e::1:2:3:4 ff3e::5 ff0e::6:7:8 ff02::1:ffad:beef; do
		expect_not_seen mld $group
	done
}

test_multicast_allowlist() {
	world_up
	mcast_route
	daemon_up
	sniffer_up
	attach "$CG" --mode allowlist --allow 239.1.1.1 --allow ff0e::1:1 --allow $SRV4 --allow $SRV6
	log "a group the policy allows can be joined (with an allowed source too); others cannot"
	attack_as nobody \
		"ok ip-join 239.1.1.1" \
		"ok ipv6-join ff0e::1:1" \
		"ok mcast-join ff0e::1:1" \
		"ok ip-source 239.1.1.1 $SRV4" \
		"denied ip-join 239.1.2.3" \
		"denied ipv6-join ff0e::6:7:8" \
		"denied ip-source 239.1.1.1 $WAYPOINT4" \
		"denied mcast-source ff0e::1:1 $WAYPOINT6"
	expect_seen igmp 239.1.1.1
	expect_seen mld ff0e::1:1
	control_joins 239.255.0.99 ff0e::99
	expect_not_seen igmp 239.1.2.3
	expect_not_seen igmp $WAYPOINT4
	expect_not_seen mld ff0e::6:7:8
	expect_not_seen mld $WAYPOINT6
}

# nat64_world: SRV answers on NAT64 addresses, and SBX routes 64:ff9b::/96 to it.
nat64_world() {
	local addr
	for addr in 64:ff9b::7f00:1 64:ff9b:: 64:ff9b::7f12:3456 64:ff9b::c612:2 64:ff9b::808:808 \
		64:ff9b::808:404; do
		ip -n "$NS_SRV" addr add $addr/128 dev eth0 nodad || fail "cannot add $addr to SRV"
	done
	ip -n "$NS_SBX" route add 64:ff9b::/96 via $SRV6 || fail "cannot route 64:ff9b::/96 in SBX"
	start_server "$NS_SRV" --bind 64:ff9b::7f00:1 --bind 64:ff9b:: --bind 64:ff9b::7f12:3456 \
		--bind 64:ff9b::c612:2 --bind 64:ff9b::808:808 --bind 64:ff9b::808:404 \
		--tcp 7000 --udp 9999
}

test_nat64_not_loopback() {
	world_up
	loopback_server
	nat64_world
	daemon_up
	log "baseline: 64:ff9b::7f00:1 is not this host: it leaves on the IPv6 route"
	expect "$CG" \
		"ok tcp 64:ff9b::7f00:1 7000" \
		"ok tcp 127.0.0.1 7000"
	attach "$CG" --mode no-network
	log "loopback is allowed (the default), NAT64 spellings of it are not"
	expect "$CG" \
		"ok tcp 127.0.0.1 7000" \
		"ok tcp ::ffff:127.0.0.1 7000" \
		"denied tcp 64:ff9b::7f00:1 7000" \
		"denied tcp 64:ff9b:: 7000" \
		"denied tcp 64:ff9b::7f12:3456 7000" \
		"denied udp-connect 64:ff9b::7f00:1 9999" \
		"denied udp-sendto 64:ff9b::7f12:3456 9999"
	update "$CG" --mode allowlist --allow $SRV4 --allow 8.8.8.8
	log "a non-global IPv4 behind 64:ff9b:: is denied even when the policy allows it;"
	log "a global one is judged as the IPv4 address it carries"
	expect "$CG" \
		"ok tcp $SRV4 7000" \
		"denied tcp 64:ff9b::c612:2 7000" \
		"ok tcp 64:ff9b::808:808 7000" \
		"denied tcp 64:ff9b::808:404 7000" \
		"denied tcp 64:ff9b::7f00:1 7000"
}

test_srv6_waypoint() {
	world_up
	daemon_up
	sniffer_up
	attach "$CG" --mode allowlist --allow $SRV6
	log "an SRv6 header through a denied waypoint ($SRV6 -> $WAYPOINT6 -> $SRV6): refused"
	log "(the 32-bit setsockopt skips the cgroup hook: egress drops the packet)"
	attack_as nobody \
		"denied srh $SRV6 $WAYPOINT6 $SRV6 9999" \
		"denied srh-compat $SRV6 $WAYPOINT6 $SRV6 9999"
	unconfined "ok srh $SRV6 fd00:99::77 $SRV6 9999"
	expect_seen rthdr fd00:99::77
	expect_not_seen rthdr $WAYPOINT6
}

test_ip_source_route() {
	world_up
	daemon_up
	sniffer_up
	attach "$CG" --mode allowlist --allow $SRV4
	log "LSRR through a denied hop ($SRV4 -> $WAYPOINT4 -> $SRV4), as root (CAP_NET_RAW):"
	log "refused as an option, dropped at egress as ancillary data or a 32-bit setsockopt"
	attack_as root \
		"denied lsrr $SRV4 $WAYPOINT4 $SRV4 9999" \
		"denied lsrr-cmsg $SRV4 $WAYPOINT4 $SRV4 9999" \
		"denied lsrr-compat $SRV4 $WAYPOINT4 $SRV4 9999"
	unconfined "ok lsrr $SRV4 198.18.99.77 $SRV4 9999"
	expect_seen lsrr 198.18.99.77
	expect_not_seen lsrr $WAYPOINT4
}

# attack_bg NAME WHO "WANT OP ARGS": attack_as in the background; attack_bg_wait NAME checks it.
attack_bg() {
	local name=$1
	shift
	(attack_as "$@" >"$CASEDIR/$name.out" 2>&1) &
	local pid=$!
	defer "kill -KILL $pid"
	eval "ATTACK_PID_$name=$pid"
}

attack_bg_wait() {
	local pid
	eval "pid=\$ATTACK_PID_$1"
	wait "$pid"
	local rc=$?
	cat "$CASEDIR/$1.out"
	[ $rc -eq 0 ] || fail "attack $1 did not get the expected verdict"
}

test_source_route_before_relock() {
	world_up
	daemon_up
	sniffer_up
	attach "$CG" --mode public
	log "install-then-lock: the source routes are set while public, sent after the relock"
	# Outside the case's directory, which uid 65534 cannot enter.
	local ctrl
	ctrl=$(mktemp -d /tmp/bfbpf-escapes.XXXXXX) || fail "cannot make a control directory"
	defer "rm -rf '$ctrl'"
	mkdir -m 0777 "$ctrl/6" "$ctrl/4" && chmod 0755 "$ctrl"
	attack_bg srh6 nobody "denied srh-relock $SRV6 $WAYPOINT6 $SRV6 9999 $ctrl/6"
	attack_bg lsrr4 root "denied lsrr-relock $SRV4 $WAYPOINT4 $SRV4 9999 $ctrl/4"
	wait_for_file "$ctrl/6/ready" 30 || fail "the SRv6 attacker did not get ready"
	wait_for_file "$ctrl/4/ready" 30 || fail "the LSRR attacker did not get ready"
	update "$CG" --mode allowlist --allow $SRV6 --allow $SRV4
	touch "$ctrl/6/go" "$ctrl/4/go"
	log "egress drops both packets (EPERM to the sender)"
	attack_bg_wait srh6
	attack_bg_wait lsrr4
	unconfined "ok srh $SRV6 fd00:99::77 $SRV6 9999" "ok lsrr $SRV4 198.18.99.77 $SRV4 9999"
	expect_seen rthdr fd00:99::77
	expect_seen lsrr 198.18.99.77
	expect_not_seen rthdr $WAYPOINT6
	expect_not_seen lsrr $WAYPOINT4
}

test_escapes_public() {
	world_up
	mcast_route
	daemon_up
	sniffer_up
	attach "$CG" --mode public
	log "public mode judges no option: everything is set and leaves as asked"
	attack_as nobody \
		"ok ip-join 239.1.2.3" \
		"ok ipv6-join ff0e::6:7:8" \
		"ok mcast-source ff3e::5 $SRV6" \
		"ok srh $SRV6 $WAYPOINT6 $SRV6 9999"
	attack_as root \
		"ok ipv6-anycast fd00::dead:beef" \
		"ok lsrr $SRV4 $WAYPOINT4 $SRV4 9999" \
		"ok lsrr-cmsg $SRV4 198.18.99.2 $SRV4 9999"
	expect_seen igmp 239.1.2.3
	expect_seen mld ff0e::6:7:8
	expect_seen mld ff3e::5 $SRV6
	expect_seen mld ff02::1:ffad:beef
	expect_seen rthdr $WAYPOINT6
	expect_seen lsrr $WAYPOINT4
	expect_seen lsrr 198.18.99.2
}
