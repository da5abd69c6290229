# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: names bound to TLS over IPv6 (issue 20, docs/policy.md "Names bound to
# TLS"), and the relock sweep reaching descendant cgroups (user/sandbox/sandbox_sweep.c).
# The world server has ONE global IPv6 address ($SRV6G, AAAA only) serving
# allowed.test and evil.test over HTTPS (443, a certificate made here) and
# plain HTTP (80); it logs what reached it (sni_server.py: accept, data, tls,
# http lines). A refused flow may be accepted (its SYN is allowed) but must
# never deliver a byte of payload. The policy allows allowed.test.
# Uses global_v6_up, dns_up, dns_set, names_daemon_up, wait_until (test-4),
# sbx_dns (test-6), events_wait (test-7), guard (test-14), sni_expect_pass (test-17: it reads $SNI_LOG).

ALL_TESTS+=(sniv6_real_clients sniv6_plain_http sniv6_quic sniv6_literal_unchecked
	sniv6_relock_subtree sniv6_relock_guard)

# How long a client may take before it counts as stalled (its own timeout; a
# refused flow is destroyed within about half a second, docs/policy.md).
SNIV6_CLIENT_LIMIT=8

# sniv6_world_up: world with the global IPv6 pair, dnsmasq (AAAA records only), the TLS/HTTP
# server on [$SRV6G], daemon.
sniv6_world_up() {
	world_up
	global_v6_up
	dns_up
	dns_set "$SRV6G allowed.test" "$SRV6G evil.test"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=allowed.test -addext "subjectAltName=DNS:allowed.test,DNS:evil.test" \
		-keyout "$CASEDIR/key.pem" -out "$CASEDIR/cert.pem" >"$CASEDIR/openssl.log" 2>&1 ||
		fail "openssl could not make the certificate"
	SNI_LOG=$CASEDIR/sni-server.log
	: >"$SNI_LOG"
	local ready=$CASEDIR/sni-ready
	nsenter --net="/run/netns/$NS_SRV" "$PYTHON" "$IT_DIR/sni_server.py" --bind $SRV6G \
		--tls 443 --http 80 --cert "$CASEDIR/cert.pem" --key "$CASEDIR/key.pem" \
		--log "$SNI_LOG" --ready "$ready" >>"$CASEDIR/sni-server.out" 2>&1 &
	local pid=$!
	defer "kill -KILL $pid; wait $pid"
	wait_for_file "$ready" 30 || {
		cat "$CASEDIR/sni-server.out"
		fail "the TLS server did not start"
	}
	# Any nameserver: every port-53 query goes to the daemon's responder.
	echo "nameserver $SRV6G" >"$CASEDIR/resolv.conf"
	echo "options timeout:2 attempts:1" >>"$CASEDIR/resolv.conf"
	names_daemon_up
}

# sniv6_names_ready: the daemon has allowed.test's address programmed.
sniv6_names_ready() {
	wait_until 10 "[n for s in d['sandboxes'] for n in s['names'] if n['name'] == 'allowed.test' and '$SRV6G' in n['addresses']]"
}

# sniv6_attach [ENTRY...]: allowlist of allowed.test (and ENTRY...), in the world's netns.
sniv6_attach() {
	local args=(--allow allowed.test) e
	for e in "$@"; do args+=(--allow "$e"); done
	attach "$CG" --mode allowlist "${args[@]}" --netns "$(ns_sbx_path)"
	sniv6_names_ready
}

# sniv6_count WORD: how many lines of that kind the server logged (payload: sni_payloads, test-17).
sniv6_count() { grep -c "^$1 " "$SNI_LOG"; }

# sniv6_refused LABEL STALLED CMD...: CMD fails, not with STALLED (the status its own
# timeout gives: a stall, not a refusal), and nothing of it reached the server.
sniv6_refused() {
	local label=$1 stalled=$2 before rc
	shift 2
	before=$(sni_payloads)
	log "refused: $label"
	"$@" >"$CASEDIR/client.out" 2>&1
	rc=$?
	sed 's/^/  client: /' "$CASEDIR/client.out" | tail -3
	[ $rc -ne 0 ] || fail "$label: the client succeeded"
	[ $rc -ne "$stalled" ] || fail "$label: the client stalled until its timeout (status $rc)"
	sleep 0.3
	[ "$(sni_payloads)" -eq "$before" ] || {
		tail -5 "$SNI_LOG"
		fail "$label: payload reached the server"
	}
}

# curl's status 28 is its timeout; `timeout` answers 124.
sniv6_curl() {
	sbx_dns "$CG" curl -sS --max-time $SNIV6_CLIENT_LIMIT --cacert "$CASEDIR/cert.pem" "$@"
}
sniv6_openssl() {
	# shellcheck disable=SC2016 # $0, $1, $2 and $@ are the inner sh's
	sbx_dns "$CG" sh -c 'a=$0 ca=$1 limit=$2; shift 2; echo Q | exec timeout "$limit" openssl s_client -connect "$a" -verify_return_error -CAfile "$ca" "$@"' \
		"[$SRV6G]:443" "$CASEDIR/cert.pem" $SNIV6_CLIENT_LIMIT "$@"
}
sniv6_raw() { sbx_dns "$CG" env SNI_CLIENT_TIMEOUT=$SNIV6_CLIENT_LIMIT "$PYTHON" "$IT_DIR/sni_client.py" "$@"; }

test_sniv6_real_clients() {
	sniv6_world_up
	sniv6_attach
	sni_expect_pass "curl https://allowed.test over IPv6" sniv6_curl -6 https://allowed.test/
	sni_expect_pass "python ssl" sbx_dns "$CG" "$PYTHON" -c "
import socket, ssl
ctx = ssl.create_default_context(cafile='$CASEDIR/cert.pem')
with socket.create_connection(('allowed.test', 443), timeout=$SNIV6_CLIENT_LIMIT) as s:
    assert s.family == socket.AF_INET6, s.family
    with ctx.wrap_socket(s, server_hostname='allowed.test') as t:
        t.sendall(b'GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n')
        assert b'200 OK' in t.recv(4096)
"
	sni_expect_pass "openssl s_client allowed.test" sniv6_openssl -servername allowed.test
	grep -q "^tls 443 .* allowed.test" "$SNI_LOG" || fail "the server saw no handshake for allowed.test"
	sniv6_refused "curl --resolve evil.test:443:[$SRV6G]" 28 \
		sniv6_curl --resolve "evil.test:443:[$SRV6G]" https://evil.test/
	sniv6_refused "openssl s_client -servername evil.test" 124 sniv6_openssl -servername evil.test
	sniv6_refused "openssl s_client without SNI" 124 sniv6_openssl -noservername
	grep -q "evil" "$SNI_LOG" && fail "the server saw evil.test"
	events_wait "$CASEDIR/events.json" "
		[x for x in e if x.get('reason') == 'sni_not_allowed' and x.get('sni') == 'evil.test'
			and x['port'] == 443 and x['address'] == '$SRV6G']
		and [x for x in e if x.get('reason') == 'no_sni' and x['address'] == '$SRV6G']" \
		--cgroup "$CG" || fail "the events do not name the reasons and the IPv6 address"
}

test_sniv6_plain_http() {
	sniv6_world_up
	sniv6_attach
	sni_expect_pass "curl http://allowed.test over IPv6" sniv6_curl -6 http://allowed.test/
	grep -q "^http 80 .* allowed.test" "$SNI_LOG" || fail "the server answered no Host: allowed.test"
	sniv6_refused "plain HTTP, Host: evil.test" 28 sniv6_curl -H "Host: evil.test" http://allowed.test/
	sniv6_refused "plain HTTP, no Host" 28 sniv6_curl -H "Host:" --http1.0 http://allowed.test/
	sniv6_refused "plain HTTP to the literal address (Host: [$SRV6G])" 28 sniv6_curl "http://[$SRV6G]/"
	grep -q "evil" "$SNI_LOG" && fail "the server saw evil.test"
	events_wait "$CASEDIR/events.json" "[x for x in e if x.get('reason') == 'host_not_allowed'
		and x.get('sni') == 'evil.test' and x['port'] == 80 and x['address'] == '$SRV6G']" \
		--cgroup "$CG" || fail "no host_not_allowed event for the IPv6 address"
}

# sniv6_udp_sink PORT FILE: a UDP receiver on [$SRV6G]:PORT counting datagrams into FILE.
sniv6_udp_sink() {
	local port=$1 file=$2 ready=$CASEDIR/udp-ready-$1
	: >"$file"
	nsenter --net="/run/netns/$NS_SRV" "$PYTHON" - "$SRV6G" "$port" "$file" "$ready" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
open(sys.argv[4], "w").close()
with open(sys.argv[3], "a", buffering=1) as out:
    while True:
        data, peer = s.recvfrom(65536)
        out.write(f"{peer[0]} {len(data)}\n")
EOF
	local pid=$!
	defer "kill -KILL $pid; wait $pid"
	wait_for_file "$ready" 30 || fail "the UDP receiver on port $port did not start"
}

test_sniv6_quic() {
	sniv6_world_up
	sniv6_attach
	sniv6_udp_sink 443 "$CASEDIR/udp443"
	sniv6_udp_sink 4433 "$CASEDIR/udp4433"
	log "QUIC-shaped UDP to the name-derived IPv6 address on 443: refused"
	local out
	out=$(sniv6_raw quic $SRV6G 443)
	echo "$out"
	[ "$out" = refused ] || fail "QUIC-shaped UDP was not refused"
	log "the same datagram on a port outside tls_ports is judged by address only: it arrives"
	out=$(sniv6_raw quic $SRV6G 4433)
	echo "$out"
	[ "$out" = sent ] || fail "UDP to port 4433 was refused"
	local n=0
	while [ ! -s "$CASEDIR/udp4433" ] && [ $n -lt 50 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	[ -s "$CASEDIR/udp4433" ] || fail "the datagram to port 4433 never arrived (the receiver is blind)"
	[ -s "$CASEDIR/udp443" ] && fail "a datagram reached port 443: $(cat "$CASEDIR/udp443")"
	events_wait "$CASEDIR/events.json" "[x for x in e if x.get('reason') == 'quic_refused'
		and x['protocol'] == 'udp' and x['port'] == 443 and x['address'] == '$SRV6G']" \
		--cgroup "$CG" || fail "no quic_refused event for the IPv6 address"
}

test_sniv6_literal_unchecked() {
	sniv6_world_up
	sniv6_attach "[$SRV6G]:443"
	log "a literal entry covers [$SRV6G]:443: address-only judging there"
	sni_expect_pass "evil.test to a literal IPv6 address" sniv6_raw plain $SRV6G 443 evil.test
	sni_expect_pass "curl --resolve evil.test to it" \
		sniv6_curl --resolve "evil.test:443:[$SRV6G]" https://evil.test/
	log "port 80 is still name-derived only"
	sniv6_refused "plain HTTP, Host: evil.test" 28 sniv6_curl -H "Host: evil.test" http://allowed.test/
}

# sniv6_hold TAG CG: in cgroup CG, an established TLS flow to allowed.test over IPv6
# ($CASEDIR/hold-TAG.ready once it is), then, once $CASEDIR/hold.go exists, one request
# on it. Its output goes to $CASEDIR/hold-TAG.out: "answered" (exit 0), "error: ..."
# (exit 1) or "stalled" (exit 2: its own timeout). Its pid is left in SNIV6_HOLD_PID.
sniv6_hold() {
	local tag=$1 cg=$2
	rm -f "$CASEDIR/hold-$tag.ready" "$CASEDIR/hold.go"
	sbx_dns "$cg" "$PYTHON" -c "
import os, socket, ssl, sys, time
ctx = ssl.create_default_context(cafile='$CASEDIR/cert.pem')
s = socket.create_connection(('allowed.test', 443), timeout=30)
assert s.family == socket.AF_INET6, s.family
t = ctx.wrap_socket(s, server_hostname='allowed.test')
open('$CASEDIR/hold-$tag.ready', 'w').close()
while not os.path.exists('$CASEDIR/hold.go'):
    time.sleep(0.05)
t.settimeout($SNIV6_CLIENT_LIMIT)
try:
    t.sendall(b'GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n')
    data = t.recv(4096)
except socket.timeout:
    print('stalled', flush=True)
    sys.exit(2)
except OSError as e:
    print('error:', e, flush=True)
    sys.exit(1)
print('answered' if data else 'error: closed', flush=True)
sys.exit(0 if data else 1)
" >"$CASEDIR/hold-$tag.out" 2>&1 &
	SNIV6_HOLD_PID=$!
	defer "kill -KILL $SNIV6_HOLD_PID"
	wait_for_file "$CASEDIR/hold-$tag.ready" 20 || {
		cat "$CASEDIR/hold-$tag.out"
		fail "the flow of $tag did not open"
	}
}

# sniv6_hold_result TAG PID: wait for a held client; print its output; return its status.
sniv6_hold_result() {
	local rc
	wait "$2"
	rc=$?
	sed "s/^/  $1: /" "$CASEDIR/hold-$1.out"
	return $rc
}

# sniv6_expect_cut TAG PID: the held client saw an error (not a stall, not an answer).
sniv6_expect_cut() {
	local rc
	sniv6_hold_result "$1" "$2"
	rc=$?
	[ $rc -ne 2 ] || fail "$1: the relocked client stalled until its timeout: its flow was not destroyed"
	[ $rc -eq 1 ] || fail "$1: the relocked client was answered (status $rc)"
}

test_sniv6_relock_subtree() {
	sniv6_world_up
	sniv6_attach
	mkdir -p "$CG/ctr/app" || fail "cannot create $CG/ctr/app"
	log "a client two cgroups below the sandbox holds an established TLS flow over IPv6"
	sniv6_hold app "$CG/ctr/app"
	local pid=$SNIV6_HOLD_PID
	log "relock to no-network: the flow is destroyed, the client errs at once"
	update "$CG" --mode no-network
	touch "$CASEDIR/hold.go"
	sniv6_expect_cut app $pid
	sleep 0.3
	[ "$(sniv6_count http)" -eq 0 ] || fail "a request reached the server after the relock"
}

# sniv6_guard_netns CG: a process of CG sleeps in the world's namespace until the guard's
# responder listens there (a new namespace's DNS fails, closed, until the daemon's sweep).
sniv6_guard_netns() {
	sbx "$1" sleep 600 &
	defer "kill -KILL $!"
	local n=0
	until grep -q "$CG: its DNS responder listens in network namespace" "$CASEDIR/daemon.log"; do
		n=$((n + 1))
		[ $n -gt 100 ] && fail "the guard's responder never listened in the world's namespace"
		sleep 0.1
	done
}

test_sniv6_relock_guard() {
	sniv6_world_up
	log "a guard (no --netns: the daemon's namespace) allows allowed.test below it"
	guard "$CG" --mode allowlist --allow allowed.test
	defer "bfs unguard --cgroup '$CG'"
	sniv6_names_ready
	mkdir -p "$CG/ctr/app" "$CG/reg" || fail "cannot create the cgroups below the guard"
	sniv6_guard_netns "$CG/ctr/app"
	log "an unregistered cgroup's client (under the guard's policy), in the world's namespace"
	sniv6_hold guarded "$CG/ctr/app"
	local guarded=$SNIV6_HOLD_PID
	log "a registered sandbox below the guard, with its own policy, holds a flow too"
	attach "$CG/reg" --mode allowlist --allow allowed.test --netns "$(ns_sbx_path)"
	sniv6_hold registered "$CG/reg"
	local registered=$SNIV6_HOLD_PID
	log "the guard relocks to no-network (hermetic: no lane)"
	echo '{"network_mode": "no-network", "allow_model_endpoint": false}' >"$CASEDIR/hermetic.json"
	guard "$CG" --policy "$CASEDIR/hermetic.json"
	touch "$CASEDIR/hold.go"
	sniv6_expect_cut guarded $guarded
	log "the registered sandbox's flow is its own policy's: not cut by the guard's relock"
	sniv6_hold_result registered $registered || fail "the registered child's flow was cut"
	sleep 0.3
	[ "$(sniv6_count http)" -eq 1 ] || fail "expected exactly the registered child's request at the server"
}
