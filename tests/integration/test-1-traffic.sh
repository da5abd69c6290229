# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: what a sandbox process can and cannot send, protocol by protocol.

ALL_TESTS+=(tcp_v4 tcp_v6 tcp_cidr_and_port mapped_v6_tcp udp_v4 udp_v6 udp_mapped
	raw_sockets packet_socket ping_sockets tcp_fast_open loopback_default loopback_denied
	model_lane hermetic no_network io_uring_connect curl)

test_tcp_v4() {
	world_up
	daemon_up
	log "baseline: without bfbpf both servers answer"
	expect "$CG" \
		"ok tcp $SRV4 7000" \
		"ok tcp $SRV4B 7000"
	attach "$CG" --mode allowlist --allow $SRV4
	expect "$CG" \
		"ok tcp $SRV4 7000" \
		"ok tcp $SRV4 9000" \
		"denied tcp $SRV4B 7000" \
		"denied tcp $DENIED4 80"
}

test_tcp_v6() {
	world_up
	daemon_up
	expect "$CG" \
		"ok tcp $SRV6 7000" \
		"ok tcp $SRV6B 7000"
	attach "$CG" --mode allowlist --allow $SRV6
	expect "$CG" \
		"ok tcp $SRV6 7000" \
		"denied tcp $SRV6B 7000" \
		"denied tcp $DENIED6 80"
	log "an IPv6 entry allows no IPv4 address"
	expect "$CG" "denied tcp $SRV4 7000"
}

test_tcp_cidr_and_port() {
	world_up
	daemon_up
	attach "$CG" --mode allowlist --allow 198.18.0.0/30 --allow "[$SRV6]:7000" --allow $SRV4B:9000
	log "198.18.0.0/30 covers both IPv4 servers, every port"
	expect "$CG" \
		"ok tcp $SRV4 7000" \
		"ok tcp $SRV4B 7000" \
		"denied tcp 198.18.0.4 7000"
	log "[fd00::2]:7000 allows that port only"
	expect "$CG" \
		"ok tcp $SRV6 7000" \
		"denied tcp $SRV6 9000" \
		"denied tcp $SRV6B 7000"
}

test_mapped_v6_tcp() {
	world_up
	daemon_up
	log "baseline: an AF_INET6 socket reaches ::ffff:198.18.0.x as IPv4"
	expect "$CG" \
		"ok tcp ::ffff:$SRV4 7000" \
		"ok tcp ::ffff:$SRV4B 7000"
	attach "$CG" --mode allowlist --allow $SRV4
	expect "$CG" \
		"ok tcp ::ffff:$SRV4 7000" \
		"denied tcp ::ffff:$SRV4B 7000"
	log "NAT64 64:ff9b::c612:2 embeds 198.18.0.2, which is not globally reachable: denied"
	log "although 198.18.0.2 is allowed (RFC 6052; test_nat64_not_loopback has a global one)"
	expect "$CG" \
		"denied tcp 64:ff9b::c612:2 7000" \
		"denied tcp 64:ff9b::c612:3 7000" \
		"denied tcp 64:ff9b::c612:6301 7000"
}

test_udp_v4() {
	world_up
	daemon_up
	expect "$CG" \
		"ok udp-connect $SRV4B 9999" \
		"ok udp-sendto $SRV4B 9999"
	attach "$CG" --mode allowlist --allow $SRV4
	expect "$CG" \
		"ok udp-connect $SRV4 9999" \
		"ok udp-sendto $SRV4 9999" \
		"ok udp-sendto $SRV4 5353" \
		"denied udp-connect $SRV4B 9999" \
		"denied udp-sendto $SRV4B 9999" \
		"denied udp-sendto $DENIED4 9999"
}

test_udp_v6() {
	world_up
	daemon_up
	expect "$CG" \
		"ok udp-connect $SRV6B 9999" \
		"ok udp-sendto $SRV6B 9999"
	attach "$CG" --mode allowlist --allow $SRV6
	expect "$CG" \
		"ok udp-connect $SRV6 9999" \
		"ok udp-sendto $SRV6 9999" \
		"denied udp-connect $SRV6B 9999" \
		"denied udp-sendto $SRV6B 9999" \
		"denied udp-sendto $DENIED6 9999"
}

test_udp_mapped() {
	world_up
	daemon_up
	expect "$CG" \
		"ok udp-connect ::ffff:$SRV4B 9999" \
		"ok udp-sendto ::ffff:$SRV4B 9999"
	attach "$CG" --mode allowlist --allow $SRV4
	expect "$CG" \
		"ok udp-connect ::ffff:$SRV4 9999" \
		"ok udp-sendto ::ffff:$SRV4 9999" \
		"denied udp-connect ::ffff:$SRV4B 9999" \
		"denied udp-sendto ::ffff:$SRV4B 9999"
	log "NAT64 forms of the benchmarking range (198.18.0.0/15): denied, even when allowed"
	expect "$CG" \
		"denied udp-connect 64:ff9b::c612:2 9999" \
		"denied udp-sendto 64:ff9b::c612:2 9999" \
		"denied udp-connect 64:ff9b::c612:3 9999" \
		"denied udp-sendto 64:ff9b::c612:3 9999"
}

test_raw_sockets() {
	world_up
	daemon_up
	log "baseline: raw ICMP echo (v4, v6) works without bfbpf"
	expect "$CG" \
		"ok raw $SRV4" \
		"ok raw6 $SRV6"
	attach "$CG" --mode allowlist --allow $SRV4 --allow $SRV6
	log "refused in a restrictive mode even toward an allowed address"
	expect "$CG" \
		"denied raw $SRV4" \
		"denied raw6 $SRV6" \
		"denied raw $SRV4B"
}

# lsm_supported: does this kernel run bfbpf's lsm_cgroup program (packet sockets per cgroup)?
lsm_supported() {
	bf check --json >"$CASEDIR/check.json" 2>/dev/null
	json_check "$CASEDIR/check.json" "[c for c in d['checks'] if c['name'] == 'hook socket_lsm'
		and 'not supported' not in c['detail']]" >/dev/null
}

test_packet_socket() {
	world_up
	daemon_up
	log "baseline: a sandbox process (root, CAP_NET_RAW) opens an AF_PACKET socket"
	expect "$CG" "ok packet any"
	attach "$CG" --mode allowlist --allow $SRV4
	if lsm_supported; then
		log "BPF LSM: refused per cgroup, even to root"
		expect "$CG" "denied packet any"
		update "$CG" --mode no-network
		expect "$CG" "denied packet any"
		return 0
	fi
	log "no BPF LSM here: refused to a sandbox without CAP_NET_RAW (docs/threat-model.md)"
	local out
	out=$(sbx "$CG" setpriv --bounding-set -net_raw --inh-caps -net_raw "$PYTHON" "$PROBE" packet any 2>&1)
	echo "$out"
	grep -q EPERM <<<"$out" || fail "a sandbox without CAP_NET_RAW opened a packet socket"
	# That verify fails while a process of the sandbox holds CAP_NET_RAW: verify_net_raw_holder.
}

test_ping_sockets() {
	world_up
	daemon_up
	log "baseline: ping sockets work without bfbpf (ping_group_range is open in the sandbox netns)"
	expect "$CG" \
		"ok ping $SRV4" \
		"ok ping6 $SRV6"
	attach "$CG" --mode allowlist --allow $SRV4 --allow $SRV6
	expect "$CG" \
		"denied ping $SRV4" \
		"denied ping6 $SRV6" \
		"denied ping $SRV4B" \
		"denied ping6 $SRV6B"
}

test_tcp_fast_open() {
	world_up
	daemon_up
	expect "$CG" "ok tfo $SRV4B 7000"
	attach "$CG" --mode allowlist --allow $SRV4 --allow $SRV6
	expect "$CG" \
		"ok tfo $SRV4 7000" \
		"ok tfo $SRV6 7000" \
		"denied tfo $SRV4B 7000" \
		"denied tfo $SRV6B 7000" \
		"denied tfo ::ffff:$SRV4B 7000"
}

test_loopback_default() {
	world_up
	loopback_server
	daemon_up
	attach "$CG" --mode allowlist --allow $SRV4
	log "loopback is allowed unless --no-loopback"
	expect "$CG" \
		"ok tcp 127.0.0.1 7000" \
		"ok tcp ::1 7000" \
		"ok udp-sendto 127.0.0.1 9999" \
		"ok udp-connect ::1 9999" \
		"denied tcp $SRV4B 7000"
}

test_loopback_denied() {
	world_up
	loopback_server
	daemon_up
	expect "$CG" "ok tcp 127.0.0.1 7000"
	attach "$CG" --mode allowlist --allow $SRV4 --no-loopback
	expect "$CG" \
		"denied tcp 127.0.0.1 7000" \
		"denied tcp ::1 7000" \
		"denied udp-sendto 127.0.0.1 9999" \
		"denied udp-connect ::1 9999" \
		"ok tcp $SRV4 7000"
}

test_model_lane() {
	world_up
	daemon_up
	attach "$CG" --mode allowlist --allow $SRV4B:7000 --model-endpoint $SRV4:8443 \
		--model-endpoint "[$SRV6]:8443"
	log "the model endpoint's port is open, its other ports are not"
	expect "$CG" \
		"ok tcp $SRV4 8443" \
		"denied tcp $SRV4 9000" \
		"ok tcp $SRV6 8443" \
		"denied tcp $SRV6 9000" \
		"ok tcp $SRV4B 7000" \
		"denied tcp $SRV4B 8443"
}

test_hermetic() {
	world_up
	daemon_up
	attach "$CG" --mode no-network --model-endpoint $SRV4:8443 --no-model-endpoint
	log "--no-model-endpoint closes the model lane"
	expect "$CG" \
		"denied tcp $SRV4 8443" \
		"denied tcp $SRV4 9000" \
		"denied udp-sendto $SRV4 9999"
}

test_no_network() {
	world_up
	loopback_server
	daemon_up
	attach "$CG" --mode no-network --model-endpoint $SRV4:8443
	expect "$CG" \
		"denied tcp $SRV4 7000" \
		"denied tcp $SRV6 7000" \
		"denied tcp ::ffff:$SRV4 7000" \
		"denied udp-connect $SRV4 9999" \
		"denied udp-sendto $SRV6 9999" \
		"denied raw $SRV4" \
		"denied ping $SRV4"
	log "loopback and the model lane stay open"
	expect "$CG" \
		"ok tcp 127.0.0.1 7000" \
		"ok tcp $SRV4 8443"
}

uring() {
	local cg=$1
	shift
	local out rc
	out=$(sbx "$cg" "$URING_CONNECT" "$@" 2>&1)
	rc=$?
	echo "$out"
	return $rc
}

test_io_uring_connect() {
	[ -x "$URING_CONNECT" ] || skip "$URING_CONNECT not built (gcc, liburing-dev)"
	world_up
	daemon_up
	uring "$CG" $SRV4B 7000
	case $? in
	0) ;;
	3) skip "io_uring unavailable on this kernel" ;;
	*) fail "baseline io_uring connect to $SRV4B failed" ;;
	esac
	attach "$CG" --mode allowlist --allow $SRV4 --allow $SRV6
	uring "$CG" $SRV4 7000 || fail "io_uring connect to allowed $SRV4 failed"
	uring "$CG" $SRV6 7000 || fail "io_uring connect to allowed $SRV6 failed"
	uring "$CG" $SRV4B 7000
	[ $? -eq 1 ] || fail "io_uring connect to $SRV4B was not denied with EPERM"
	uring "$CG" $SRV6B 7000
	[ $? -eq 1 ] || fail "io_uring connect to $SRV6B was not denied with EPERM"
}

sbx_curl() {
	local cg=$1
	shift
	sbx "$cg" env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u all_proxy \
		curl --noproxy '*' -sS -o /dev/null -w '%{http_code}\n' --max-time 10 "$@" 2>&1
}

test_curl() {
	command -v curl >/dev/null || skip "no curl"
	world_up
	daemon_up
	local out rc
	out=$(sbx_curl "$CG" http://$SRV4B:8080/)
	echo "baseline curl http://$SRV4B:8080/: $out"
	[ "$out" = 200 ] || fail "baseline curl failed"
	attach "$CG" --mode allowlist --allow $SRV4
	out=$(sbx_curl "$CG" http://$SRV4:8080/)
	echo "curl http://$SRV4:8080/: $out"
	[ "$out" = 200 ] || fail "curl to allowed $SRV4 did not get 200"
	out=$(sbx_curl "$CG" "http://[$SRV6]:8080/")
	echo "curl http://[$SRV6]:8080/: $out"
	case $out in 200) fail "curl to $SRV6 (not allowed) got through" ;; esac
	out=$(sbx_curl "$CG" http://$SRV4B:8080/)
	rc=$?
	echo "curl http://$SRV4B:8080/: status $rc: $out"
	[ $rc -eq 7 ] || fail "curl to denied $SRV4B: expected exit 7 (couldn't connect), got $rc"
}
