# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: names bound to TLS (issue 20, docs/policy.md "Names bound to TLS").
# A world server with ONE address ($SRV4) serving allowed.test and evil.test
# (like a CDN edge) over HTTPS (443, a certificate made here) and plain HTTP
# (80); other.test lives on $SRV4B. The policy allows allowed.test. The
# server logs what reached it (sni_server.py): a refused flow may be accepted
# (its SYN is allowed) but must never deliver a byte of payload.
# Uses dns_up, dns_set, names_daemon_up (test-4), sbx_dns (test-6) and events_wait (test-7).

ALL_TESTS+=(sni_real_clients sni_raw_hellos sni_address_elsewhere sni_literal_unchecked sni_off
	sni_relock sni_model_lane sni_parent_cgroup sni_hash_collision sni_subdomains)

SNI_CLIENT=$IT_DIR/sni_client.py

# sni_world_up: world, dnsmasq with the names, the TLS/HTTP server on $SRV4 and $SRV4B, daemon.
sni_world_up() {
	world_up
	dns_up
	dns_set "$SRV4 allowed.test" "$SRV4 evil.test" "$SRV4B other.test"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=allowed.test -addext "subjectAltName=DNS:allowed.test,DNS:evil.test,DNS:other.test" \
		-keyout "$CASEDIR/key.pem" -out "$CASEDIR/cert.pem" >"$CASEDIR/openssl.log" 2>&1 ||
		fail "openssl could not make the certificate"
	SNI_LOG=$CASEDIR/sni-server.log
	: >"$SNI_LOG"
	local ready=$CASEDIR/sni-ready
	nsenter --net="/run/netns/$NS_SRV" "$PYTHON" "$IT_DIR/sni_server.py" --bind $SRV4 --bind $SRV4B \
		--tls 443 --http 80 --cert "$CASEDIR/cert.pem" --key "$CASEDIR/key.pem" --log "$SNI_LOG" \
		--ready "$ready" >>"$CASEDIR/sni-server.out" 2>&1 &
	local pid=$!
	defer "kill -KILL $pid; wait $pid"
	wait_for_file "$ready" 30 || {
		cat "$CASEDIR/sni-server.out"
		fail "the TLS server did not start"
	}
	echo "nameserver $SRV4B" >"$CASEDIR/resolv.conf"
	echo "options timeout:2 attempts:1" >>"$CASEDIR/resolv.conf"
	names_daemon_up
}

# sni_attach [ENTRY...]: allowlist of allowed.test (and ENTRY...), events on, names answered.
sni_attach() {
	local args=(--allow allowed.test) e
	for e in "$@"; do args+=(--allow "$e"); done
	attach "$CG" --mode allowlist "${args[@]}" --netns "$(ns_sbx_path)"
	wait_until 10 "[n for s in d['sandboxes'] for n in s['names'] if n['name'] == 'allowed.test' and n['addresses']]"
}

# sni_payloads: how many connections delivered payload to the server so far.
sni_payloads() { grep -c '^data ' "$SNI_LOG"; }

# sni_expect_pass LABEL CMD...: CMD (a sandbox client) succeeds, and its bytes reached the server.
sni_expect_pass() {
	local label=$1 before
	shift
	before=$(sni_payloads)
	log "pass: $label"
	"$@" >"$CASEDIR/client.out" 2>&1 || {
		cat "$CASEDIR/client.out"
		fail "$label: the client failed"
	}
	[ "$(sni_payloads)" -gt "$before" ] || fail "$label: nothing reached the server"
}

# sni_expect_refused LABEL CMD...: CMD fails, within 10 s (a stall would take 30 s and
# more), and nothing of it reached the server.
sni_expect_refused() {
	local label=$1 before started elapsed
	shift
	before=$(sni_payloads)
	log "refused: $label"
	started=$(date +%s)
	if "$@" >"$CASEDIR/client.out" 2>&1; then
		cat "$CASEDIR/client.out"
		fail "$label: the client succeeded"
	fi
	elapsed=$(($(date +%s) - started))
	sed 's/^/  client: /' "$CASEDIR/client.out" | tail -3
	sleep 0.3
	[ "$(sni_payloads)" -eq "$before" ] || {
		tail -5 "$SNI_LOG"
		fail "$label: payload reached the server"
	}
	[ $elapsed -le 10 ] || fail "$label: the client took $elapsed s to fail (a stall, not a refusal)"
}

sni_curl() { sbx_dns "$CG" curl -sS --max-time 20 --cacert "$CASEDIR/cert.pem" "$@"; }
sni_openssl() {
	# shellcheck disable=SC2016 # $0, $1 and $@ are the inner sh's
	sbx_dns "$CG" sh -c 'a=$0 ca=$1; shift; echo Q | exec timeout 20 openssl s_client -connect "$a" -verify_return_error -CAfile "$ca" "$@"' "$@"
}
sni_raw() { sbx_dns "$CG" env SNI_CLIENT_TIMEOUT=20 "$PYTHON" "$SNI_CLIENT" "$@"; }

test_sni_real_clients() {
	sni_world_up
	sni_attach
	sni_expect_pass "curl https://allowed.test" sni_curl https://allowed.test/
	sni_expect_pass "python ssl" sbx_dns "$CG" "$PYTHON" -c "
import socket, ssl
ctx = ssl.create_default_context(cafile='$CASEDIR/cert.pem')
with socket.create_connection(('allowed.test', 443), timeout=20) as s:
    with ctx.wrap_socket(s, server_hostname='allowed.test') as t:
        t.sendall(b'GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n')
        assert b'200 OK' in t.recv(4096)
"
	sni_expect_pass "openssl s_client allowed.test" sni_openssl $SRV4:443 "$CASEDIR/cert.pem" \
		-servername allowed.test
	sni_expect_pass "curl http://allowed.test" sni_curl http://allowed.test/
	grep -q "^tls 443 .* allowed.test" "$SNI_LOG" || fail "the server saw no handshake for allowed.test"
	sni_expect_refused "curl --resolve evil.test" sni_curl --resolve evil.test:443:$SRV4 https://evil.test/
	sni_expect_refused "openssl s_client -servername evil.test" sni_openssl $SRV4:443 \
		"$CASEDIR/cert.pem" -servername evil.test
	sni_expect_refused "openssl s_client without SNI" sni_openssl $SRV4:443 "$CASEDIR/cert.pem" \
		-noservername
	sni_expect_refused "plain HTTP, Host: evil.test" sni_curl -H "Host: evil.test" http://allowed.test/
	sni_expect_refused "plain HTTP, no Host" sni_curl -H "Host:" --http1.0 http://allowed.test/
	grep -q "evil" "$SNI_LOG" && fail "the server saw evil.test"
	log "events name the reason and the name; counters and metrics count them"
	events_wait "$CASEDIR/events.json" "
		[x for x in e if x.get('reason') == 'sni_not_allowed' and x.get('sni') == 'evil.test'
			and x['port'] == 443 and x['address'] == '$SRV4']
		and [x for x in e if x.get('reason') == 'no_sni' and x['port'] == 443]
		and [x for x in e if x.get('reason') == 'host_not_allowed' and x.get('sni') == 'evil.test'
			and x['port'] == 80]" --cgroup "$CG" || fail "the events do not name the reasons"
	expect_listed "$CG" "s['sni'] == 'enforce' and s['counters']['sni']['allowed'] >= 4
		and s['counters']['sni']['sni_not_allowed'] >= 2 and s['counters']['sni']['no_sni'] >= 1
		and s['counters']['sni']['host_not_allowed'] >= 2"
}

test_sni_raw_hellos() {
	sni_world_up
	sni_attach
	sni_expect_pass "2 KB ClientHello, server_name last" sni_raw big $SRV4 443 allowed.test
	sni_expect_pass "ClientHello in three writes" sni_raw split $SRV4 443 allowed.test
	sni_expect_pass "ClientHello in two TLS records" sni_raw records $SRV4 443 allowed.test
	sni_expect_pass "ECH-shaped, allowed outer SNI" sni_raw ech $SRV4 443 allowed.test
	sni_expect_pass "odd case" sni_raw plain $SRV4 443 AlLoWeD.TeSt
	sni_expect_refused "ECH-shaped, outer SNI evil.test" sni_raw ech $SRV4 443 evil.test
	sni_expect_refused "truncated ClientHello" sni_raw truncated $SRV4 443 allowed.test
	sni_expect_refused "garbled bytes" sni_raw garbled $SRV4 443 allowed.test
	sni_expect_refused "no server_name" sni_raw nosni $SRV4 443
	sni_expect_refused "a subdomain's look-alike" sni_raw plain $SRV4 443 notallowed.test
	log "QUIC-shaped UDP to the name-derived address on 443: refused"
	local out
	out=$(sni_raw quic $SRV4 443)
	echo "$out"
	[ "$out" = refused ] || fail "QUIC-shaped UDP was not refused"
	events_wait "$CASEDIR/events.json" "[x for x in e if x.get('reason') == 'quic_refused'
		and x['protocol'] == 'udp' and x['port'] == 443]" --cgroup "$CG" ||
		fail "no quic_refused event"
	log "UDP elsewhere is not QUIC's: the echo on 9999 is not judged (address-only)"
	update "$CG" --mode allowlist --allow allowed.test --allow $SRV4:9999
	expect_ok "$CG" udp-sendto $SRV4 9999
}

test_sni_address_elsewhere() {
	sni_world_up
	sni_attach other.test
	wait_until 10 "[n for s in d['sandboxes'] for n in s['names'] if n['name'] == 'other.test' and n['addresses']]"
	sni_expect_pass "other.test on its own address" sni_raw plain $SRV4B 443 other.test
	sni_expect_refused "SNI other.test to allowed.test's address" sni_raw plain $SRV4 443 other.test
	sni_expect_refused "curl --resolve other.test to allowed.test's address" \
		sni_curl --resolve other.test:443:$SRV4 https://other.test/
	events_wait "$CASEDIR/events.json" "[x for x in e if x.get('reason') == 'sni_address_mismatch'
		and x.get('sni') == 'other.test' and x['address'] == '$SRV4']" --cgroup "$CG" ||
		fail "no sni_address_mismatch event"
	expect_status 0 bfs verify --cgroup "$CG"
}

test_sni_literal_unchecked() {
	sni_world_up
	sni_attach "$SRV4:443"
	log "a literal entry covers $SRV4:443: address-only judging there"
	sni_expect_pass "evil.test to a literal address" sni_raw plain $SRV4 443 evil.test
	log "port 80 is still name-derived only"
	sni_expect_refused "plain HTTP, Host: evil.test" sni_curl -H "Host: evil.test" http://allowed.test/
}

test_sni_off() {
	sni_world_up
	cat >"$CASEDIR/policy.json" <<EOF
{"network_mode": "allowlist", "allowed_hosts": ["allowed.test"], "sni": "off"}
EOF
	attach "$CG" --policy "$CASEDIR/policy.json" --netns "$(ns_sbx_path)"
	wait_until 10 "[n for s in d['sandboxes'] for n in s['names'] if n['name'] == 'allowed.test' and n['addresses']]"
	expect_listed "$CG" "s['sni'] == 'off'"
	sni_expect_pass "evil.test with the rule off" sni_raw plain $SRV4 443 evil.test
	sni_expect_pass "curl --resolve evil.test with the rule off" \
		sni_curl --resolve evil.test:443:$SRV4 https://evil.test/
	log "a bad value is refused with a clear error, and the policy in force stays"
	echo '{"network_mode": "allowlist", "allowed_hosts": ["allowed.test"], "sni": "on"}' \
		>"$CASEDIR/bad.json"
	expect_status 2 bfs update --cgroup "$CG" --policy "$CASEDIR/bad.json"
	grep -q 'sni "on" is not one of "enforce", "off"' "$CASEDIR/last.err" || fail "unclear error"
	expect_listed "$CG" "s['sni'] == 'off'"
}

test_sni_relock() {
	sni_world_up
	sni_attach
	sni_relock_cut
}

# sni_relock_cut: an established, allowed flow to allowed.test, then a relock that drops
# it: the client sees an error within 15 s (the sweep destroys it), not a stall.
sni_relock_cut() {
	log "an established, allowed flow; then a relock that drops allowed.test"
	rm -f "$CASEDIR/relock.out"
	sbx_dns "$CG" "$PYTHON" -c "
import socket, ssl, sys, time
ctx = ssl.create_default_context(cafile='$CASEDIR/cert.pem')
s = socket.create_connection(('allowed.test', 443), timeout=60)
t = ctx.wrap_socket(s, server_hostname='allowed.test')
open('$CASEDIR/relock.ready', 'w').close()
time.sleep(2)
start = time.time()
try:
    for _ in range(100):
        t.sendall(b'GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n')
        t.recv(4096)
        time.sleep(0.1)
    print('no error', flush=True)
except OSError as e:
    print('error after %.1f s: %s' % (time.time() - start, e), flush=True)
" >"$CASEDIR/relock.out" 2>&1 &
	local pid=$!
	wait_for_file "$CASEDIR/relock.ready" 20 || fail "the flow did not open"
	update "$CG" --mode allowlist --allow other.test
	local n=0
	while kill -0 $pid 2>/dev/null && [ $n -lt 150 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	kill -KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
	cat "$CASEDIR/relock.out"
	grep -q "^error after" "$CASEDIR/relock.out" || fail "the relocked client saw no error within 15 s"
}

# The parent-cgroup recipe (attach without --netns): the sandbox's processes live in
# another namespace than the daemon's. There too, a refused flow and a flow a relock cuts
# fail fast (the sweep dumps every namespace its processes use), and names answer.
test_sni_parent_cgroup() {
	sni_world_up
	attach "$CG" --mode allowlist --allow allowed.test
	wait_until 10 "[n for s in d['sandboxes'] for n in s['names'] if n['name'] == 'allowed.test' and n['addresses']]"
	log "a process in the sandbox's namespace: the responder follows it there"
	sbx_dns "$CG" sleep 1000 &
	local holder=$!
	defer "kill -KILL $holder; wait $holder"
	wait_until 10 "d['sandboxes'][0]['dns']['namespaces'] == 2"
	sni_expect_pass "curl https://allowed.test" sni_curl https://allowed.test/
	sni_expect_refused "curl --resolve evil.test" sni_curl --resolve evil.test:443:$SRV4 https://evil.test/
	sni_expect_refused "openssl s_client -servername evil.test" sni_openssl $SRV4:443 \
		"$CASEDIR/cert.pem" -servername evil.test
	sni_relock_cut
}

test_sni_model_lane() {
	sni_world_up
	log "a lane given as a name is judged like an allowed host (itself only)"
	attach "$CG" --mode no-network --model-endpoint allowed.test:443 --netns "$(ns_sbx_path)"
	wait_until 10 "[n for s in d['sandboxes'] for n in s['names'] if n['name'] == 'allowed.test' and n['addresses']]"
	sni_expect_pass "the lane's own name" sni_raw plain $SRV4 443 allowed.test
	sni_expect_refused "another name to the lane's address" sni_raw plain $SRV4 443 evil.test
	sni_expect_refused "a subdomain of the lane's name" sni_raw plain $SRV4 443 www.allowed.test
	log "a lane given as an address is not checked"
	update "$CG" --mode no-network --model-endpoint $SRV4:443
	sni_expect_pass "any name to a lane address" sni_raw plain $SRV4 443 evil.test
}

# sni_generation: the generation in force for $CG.
sni_generation() {
	bfs status --cgroup "$CG" --json |
		"$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["sandboxes"][0]["generation"])'
}

# sni_forge NAME ENTRY PORT...: writes, behind the daemon's back, sni_names keys of NAME's hash
# (its marker, and $SRV4 on each PORT) in the generation in force, whose value names ENTRY
# (kinds: itself and its subdomains): what a lookup finds when NAME's FNV-1a collides with
# ENTRY's. A real collision takes a search, not a test's seconds; an attacker has the time.
# An older layout (ABI 8: kinds only) gets the same forgery, cut to its value size.
sni_forge() {
	local name=$1 entry=$2 generation port size map=$PINS/maps/sni_names
	shift 2
	generation=$(sni_generation)
	size=$(bpftool map show pinned "$map" -j |
		"$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["bytes_value"])')
	for port in 0 "$@"; do
		# shellcheck disable=SC2046 # the key and value bytes are words
		bpftool map update pinned "$map" $("$PYTHON" -c '
import socket, struct, sys
name, entry, generation, port, addr, size = sys.argv[1:]
h = 0xcbf29ce484222325
for c in reversed(name.encode()):  # bfbpf_name_rhash: FNV-1a 64 from the last byte
    h = ((h ^ c) * 0x100000001b3) & (2**64 - 1)
a = bytes(16) if port == "0" else bytes(10) + b"\xff\xff" + socket.inet_aton(addr)
key = struct.pack("<IIQ", int(generation), int(port), h) + a
value = struct.pack("<B3xI", 3, len(entry)) + entry.encode().ljust(256, b"\0")
print("key hex", key.hex(" "), "value hex", value[: int(size)].hex(" "))
' "$name" "$entry" "$generation" "$port" $SRV4 "$size") || fail "bpftool map update"
	done
}

# A name whose hash collides with an allowed entry's (forged in the map) is still refused:
# the kernel compares the name with the entry's own after the hash hit.
test_sni_hash_collision() {
	sni_world_up
	sni_attach
	sni_expect_pass "allowed.test" sni_raw plain $SRV4 443 allowed.test
	local generation
	generation=$(sni_generation)
	log "forged: evil.test's hash finds allowed.test's entry on $SRV4 (443, 80, its marker)"
	sni_forge evil.test allowed.test 443 80
	sni_expect_refused "curl --resolve evil.test" sni_curl --resolve evil.test:443:$SRV4 https://evil.test/
	sni_expect_refused "openssl s_client -servername evil.test" sni_openssl $SRV4:443 \
		"$CASEDIR/cert.pem" -servername evil.test
	sni_expect_refused "ClientHello evil.test" sni_raw plain $SRV4 443 evil.test
	sni_expect_refused "a subdomain: the hash of its suffix evil.test" sni_raw plain $SRV4 443 x.evil.test
	sni_expect_refused "plain HTTP, Host: evil.test" sni_curl -H "Host: evil.test" http://allowed.test/
	sni_expect_pass "curl https://allowed.test, still" sni_curl https://allowed.test/
	sni_expect_pass "plain HTTP allowed.test, still" sni_curl http://allowed.test/
	grep -q "evil" "$SNI_LOG" && fail "the server saw evil.test"
	[ "$(sni_generation)" = "$generation" ] ||
		fail "the daemon reprogrammed the sandbox: the forged keys were not in force throughout"
	log "refused as names no entry allows (the forged marker names no one either)"
	events_wait "$CASEDIR/events.json" "
		[x for x in e if x.get('reason') == 'sni_not_allowed' and x.get('sni') == 'evil.test']
		and [x for x in e if x.get('reason') == 'sni_not_allowed' and x.get('sni') == 'x.evil.test']
		and [x for x in e if x.get('reason') == 'host_not_allowed' and x.get('sni') == 'evil.test']
		and not [x for x in e if x.get('reason') == 'sni_address_mismatch']" --cgroup "$CG" ||
		fail "the events do not say sni_not_allowed"
}

# A wildcard's names on $SRV4B (no other entry's): each learned through DNS passes, also one
# learned later on the address another one already brought (a CDN's: the allow set stays,
# only the SNI keys change); the apex (docs/policy.md: a wildcard allows strict subdomains
# only) and a look-alike do not.
test_sni_subdomains() {
	sni_world_up
	dns_set "$SRV4 allowed.test" "$SRV4B a.wild.test" "$SRV4B b.wild.test" "$SRV4B wild.test" \
		"$SRV4B xwild.test"
	sni_attach '*.wild.test'
	[ "$(dig_short "$CG" a.wild.test)" = $SRV4B ] || fail "a.wild.test did not resolve"
	sni_expect_pass "a.wild.test" sni_raw plain $SRV4B 443 a.wild.test
	sni_expect_refused "b.wild.test, not asked yet" sni_raw plain $SRV4B 443 b.wild.test
	log "b.wild.test learned later, on the address a.wild.test brought ($SRV4B)"
	[ "$(dig_short "$CG" b.wild.test)" = $SRV4B ] || fail "b.wild.test did not resolve"
	sni_expect_pass "b.wild.test" sni_raw plain $SRV4B 443 b.wild.test
	sni_expect_pass "a.wild.test, still" sni_raw plain $SRV4B 443 a.wild.test
	[ "$(dig_status "$CG" wild.test)" = REFUSED ] || fail "the apex of a wildcard resolved"
	sni_expect_refused "wild.test, the wildcard's apex" sni_raw plain $SRV4B 443 wild.test
	sni_expect_refused "xwild.test, a look-alike" sni_raw plain $SRV4B 443 xwild.test
	sni_expect_refused "x.a.wild.test, never asked" sni_raw plain $SRV4B 443 x.a.wild.test
}
