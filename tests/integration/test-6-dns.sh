# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: the DNS responder. The sandbox's resolv.conf points at a rogue
# resolver (dnsmasq in SRV answering every name with a denied address); every
# query must reach bfbpf's responder instead, which answers allowed names from
# the real upstream (the case's dnsmasq on loopback) and refuses the rest.
# Uses dns_up, dns_set and names_daemon_up of test-4-names.sh.

ALL_TESTS+=(dns_clients_get_bfbpf_answers dns_rules dns_private_answer dns_private_v6_spellings
	dns_moving_address dns_tcp_pipelined dns_garbage dns_no_loopback)

ROGUE=198.18.0.3
ROGUE_ANSWER=198.18.99.99

# rogue_up: the resolver the sandbox was told to use.
rogue_up() {
	in_ns "$NS_SRV" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
		--address=/#/$ROGUE_ANSWER --listen-address=$ROGUE --bind-interfaces --pid-file= \
		--user=root >>"$CASEDIR/rogue.log" 2>&1 &
	local pid=$!
	defer "kill -KILL $pid; wait $pid"
	sleep 0.2
	kill -0 $pid || { cat "$CASEDIR/rogue.log"; fail "the rogue resolver did not start"; }
	echo "nameserver $ROGUE" >"$CASEDIR/resolv.conf"
	echo "options timeout:2 attempts:1" >>"$CASEDIR/resolv.conf"
}

# sbx_dns CG CMD...: a sandbox process that reads the case's resolv.conf.
sbx_dns() {
	local cg=$1
	shift
	# shellcheck disable=SC2016 # $0 and $@ are the inner sh's
	(echo "$BASHPID" >"$cg/cgroup.procs" && exec nsenter --net="/run/netns/$NS_SBX" unshare -m \
		sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$CASEDIR/resolv.conf" "$@")
}

dns_world_up() {
	world_up
	dns_up
	rogue_up
	names_daemon_up
}

# dig_status CG NAME [TYPE] [DIG-ARGS...]: the rcode bfbpf's answer carries.
dig_status() {
	local cg=$1 name=$2 type=${3:-A}
	shift 3 2>/dev/null || shift $#
	sbx_dns "$cg" dig +time=3 +tries=1 "$@" "$name" "$type" 2>&1 | sed -n 's/.*status: \([A-Z]*\).*/\1/p'
}

# dig_short CG NAME [TYPE] [DIG-ARGS...]
dig_short() {
	local cg=$1 name=$2 type=${3:-A}
	shift 3 2>/dev/null || shift $#
	sbx_dns "$cg" dig +short +time=3 +tries=1 "$@" "$name" "$type" 2>&1
}

test_dns_clients_get_bfbpf_answers() {
	dns_world_up
	dns_set "$SRV4 www.test"
	attach "$CG" --mode allowlist --allow www.test --netns "$(ns_sbx_path)"
	local out
	log "getent"
	out=$(sbx_dns "$CG" getent ahostsv4 www.test)
	echo "$out"
	grep -q "^$SRV4 " <<<"$out" || fail "getent did not get bfbpf's answer"
	log "dig over UDP, over TCP, and @rogue explicitly"
	[ "$(dig_short "$CG" www.test A)" = "$SRV4" ] || fail "dig (UDP)"
	[ "$(dig_short "$CG" www.test A +tcp)" = "$SRV4" ] || fail "dig +tcp"
	[ "$(dig_short "$CG" www.test A @$ROGUE)" = "$SRV4" ] || fail "dig @$ROGUE"
	[ "$(dig_short "$CG" www.test A @$ROGUE +tcp)" = "$SRV4" ] || fail "dig @$ROGUE +tcp"
	log "python"
	out=$(sbx_dns "$CG" "$PYTHON" -c 'import socket; print(socket.gethostbyname("www.test"))')
	echo "$out"
	[ "$out" = "$SRV4" ] || fail "python did not get bfbpf's answer"
	log "curl by name"
	out=$(sbx_dns "$CG" curl -sS --max-time 10 -o /dev/null -w '%{http_code} %{remote_ip}' http://www.test:8080/)
	echo "$out"
	[ "$out" = "200 $SRV4" ] || fail "curl by name"
	log "the rogue resolver never saw a query"
	expect_listed "$CG" "s['dns']['queries']['answered'] >= 6"
	expect_status 0 bfs verify --cgroup "$CG"
}

test_dns_rules() {
	# The upstream holds HTTPS and SVCB records (with an ECH configuration) for www.test.
	# shellcheck disable=SC2034,SC2054 # read by dns_up; dnsmasq's own commas
	DNS_EXTRA=(--dns-rr=www.test,65,000100000100030268320005000401020304
		--dns-rr=www.test,64,0001000005000401020304)
	dns_world_up
	dns_set "$SRV4 api.wild.test" "$SRV4 a.b.c.wild.test" "$SRV4 wild.test" "$SRV4 www.test" \
		"$SRV4 sub.www.test" "$SRV4B evil.test"
	attach "$CG" --mode allowlist --allow '*.wild.test' --allow www.test --netns "$(ns_sbx_path)"
	[ "$(dig_short "$CG" a.b.c.wild.test)" = "$SRV4" ] || fail "a deep subdomain of a wildcard"
	[ "$(dig_short "$CG" api.wild.test)" = "$SRV4" ] || fail "a subdomain of a wildcard"
	[ "$(dig_status "$CG" wild.test)" = REFUSED ] || fail "the apex of a wildcard was not refused"
	[ "$(dig_short "$CG" sub.www.test)" = "$SRV4" ] || fail "a bare name's subdomain"
	[ "$(dig_status "$CG" evil.test)" = REFUSED ] || fail "a denied name was not refused"
	[ "$(dig_status "$CG" x.evil.test TXT)" = REFUSED ] || fail "TXT under a denied domain"
	[ "$(dig_status "$CG" www.test TXT)" = NOERROR ] || fail "TXT of an allowed name: NOERROR"
	[ -z "$(dig_short "$CG" www.test TXT)" ] || fail "TXT of an allowed name carries no data"
	log "HTTPS and SVCB (ECH configurations, address hints): NODATA, though upstream has them"
	[ -n "$(dig +short +time=3 +tries=1 @127.0.0.1 -p "$DNS_PORT" www.test HTTPS)" ] ||
		fail "the upstream has no HTTPS record: the check below would prove nothing"
	[ "$(dig_status "$CG" www.test HTTPS)" = NOERROR ] || fail "HTTPS of an allowed name: NOERROR"
	[ -z "$(dig_short "$CG" www.test HTTPS)" ] || fail "HTTPS records are not passed on"
	[ "$(dig_status "$CG" www.test SVCB)" = NOERROR ] || fail "SVCB of an allowed name: NOERROR"
	[ -z "$(dig_short "$CG" www.test SVCB)" ] || fail "SVCB records are not passed on"
	[ "$(dig_status "$CG" evil.test HTTPS)" = REFUSED ] || fail "HTTPS of a denied name: REFUSED"
	log "a name learned through DNS connects; one never asked does not"
	expect_ok "$CG" tcp $SRV4 7000
	expect_denied "$CG" tcp $SRV4B 7000
	expect_listed "$CG" "s['dns']['queries']['refused'] >= 2 and
		{l['name'] for l in s['dns']['learned']} >= {'a.b.c.wild.test', 'api.wild.test', 'sub.www.test'}
		and [l for l in s['dns']['learned'] if l['name'] == 'api.wild.test'
			and [a for a in l['addresses'] if a['address'] == '$SRV4' and a['expires'] > 0]]"
	log "DNS over TLS is denied unless allowed"
	expect_denied "$CG" tcp $SRV4B 853
}

test_dns_private_answer() {
	dns_world_up
	dns_set "10.7.7.7 inside.corp.test" "$SRV4 ok.corp.test"
	attach "$CG" --mode allowlist --allow corp.test --netns "$(ns_sbx_path)"
	[ -z "$(dig_short "$CG" inside.corp.test)" ] || fail "a private address was handed to the sandbox"
	[ "$(dig_status "$CG" inside.corp.test)" = NOERROR ] || fail "expected an empty NOERROR answer"
	[ "$(dig_short "$CG" ok.corp.test)" = "$SRV4" ] || fail "the public name of the same domain"
	log "only the public address is programmed; the private one is refused by the kernel"
	expect_listed "$CG" "s['entries'] == 1"
	expect "$CG" "denied tcp 10.7.7.7 7000" "ok tcp $SRV4 7000"
	expect_status 0 bfs verify --cgroup "$CG"
}

# IPv6 spellings of private and reserved addresses (issue 19): 169.254.169.254
# inside local-use NAT64, 6to4 and Teredo, IPv4-compatible, site-local and
# discard-only. An allowed wildcard zone answers them; none is programmed or
# handed to the sandbox. A global address of the same zone is.
test_dns_private_v6_spellings() {
	local -A hidden=([nat64]=64:ff9b:1::a9fe:a9fe [sixtofour]=2002:a9fe:a9fe::1
		[teredo]=2001:0:a9fe:a9fe::1 [compat]=::169.254.169.254 [site]=fec0::1 [discard]=100::1)
	local name lines=() probes=() leaked=()
	dns_world_up
	global_v6_up
	for name in "${!hidden[@]}"; do
		lines+=("${hidden[$name]} $name.tun.test")
		probes+=("denied tcp ${hidden[$name]} 7000")
	done
	dns_set "${lines[@]}" "$SRV6G www.tun.test"
	attach "$CG" --mode allowlist --allow '*.tun.test' --netns "$(ns_sbx_path)"
	for name in "${!hidden[@]}"; do
		[ -z "$(dig_short "$CG" "$name.tun.test" AAAA)" ] || leaked+=("${hidden[$name]}")
	done
	[ ${#leaked[@]} -eq 0 ] || fail "handed to the sandbox: ${leaked[*]}"
	[ "$(dig_short "$CG" www.tun.test AAAA)" = "$SRV6G" ] || fail "the zone's global address"
	log "none of them is programmed: the global address is the only entry"
	expect_listed "$CG" "s['entries'] == 1 and {a['address'] for l in s['dns']['learned']
		for a in l['addresses']} == set('${hidden[*]} $SRV6G'.split())"
	expect "$CG" "${probes[@]}" "ok tcp $SRV6G 7000"
	expect_status 0 bfs verify --cgroup "$CG"
	log "a literal entry naming one lets it in"
	update "$CG" --mode allowlist --allow '*.tun.test' --allow 2002:a9fe:a9fe::/48
	[ "$(dig_short "$CG" sixtofour.tun.test AAAA)" = 2002:a9fe:a9fe::1 ] ||
		fail "the 6to4 address under a literal entry"
	[ -z "$(dig_short "$CG" teredo.tun.test AAAA)" ] || fail "the Teredo address without one"
}

test_dns_moving_address() {
	dns_world_up
	dns_set "$SRV4 cdn.test"
	attach "$CG" --mode allowlist --allow cdn.test --netns "$(ns_sbx_path)"
	[ "$(dig_short "$CG" cdn.test)" = "$SRV4" ] || fail "first answer"
	expect_ok "$CG" tcp $SRV4 7000
	log "the CDN rotates: the next answer (after the 1 s TTL) is programmed before it is given"
	dns_set "$SRV4B cdn.test"
	sleep 2.2
	local out n=0
	while :; do
		out=$(dig_short "$CG" cdn.test)
		echo "answer: $out"
		grep -q "$SRV4B" <<<"$out" && break
		n=$((n + 1))
		[ $n -gt 10 ] && fail "the responder never returned the new address"
		sleep 0.5
	done
	expect_ok "$CG" tcp $SRV4B 7000
}

test_dns_tcp_pipelined() {
	dns_world_up
	dns_set "$SRV4 one.test" "$SRV4B two.test"
	attach "$CG" --mode allowlist --allow one.test --allow two.test --netns "$(ns_sbx_path)"
	sbx "$CG" "$PYTHON" - $ROGUE <<'EOF' || fail "pipelined TCP queries"
import socket, struct, sys
def query(qid, name):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\x00" + struct.pack(">HH", 1, 1)
s = socket.create_connection((sys.argv[1], 53), timeout=10)
wire = b"".join(struct.pack(">H", len(m)) + m for m in (query(1, "one.test"), query(2, "two.test"), query(3, "evil.test")))
# sent in awkward pieces: a split length prefix, then the rest
s.sendall(wire[:1]); s.sendall(wire[1:7]); s.sendall(wire[7:])
seen = {}
buf = b""
while len(seen) < 3:
    chunk = s.recv(4096)
    if not chunk:
        break
    buf += chunk
    while len(buf) >= 2 and len(buf) >= 2 + struct.unpack(">H", buf[:2])[0]:
        n = struct.unpack(">H", buf[:2])[0]
        msg, buf = buf[2:2 + n], buf[2 + n:]
        qid, flags, qd, an = struct.unpack(">HHHH", msg[:8])
        seen[qid] = (flags & 0xf, an)
print(seen)
sys.exit(0 if seen == {1: (0, 1), 2: (0, 1), 3: (5, 0)} else 1)
EOF
	log "getpeername shows the server asked, not the responder"
	sbx "$CG" "$PYTHON" -c "import socket; s = socket.create_connection(('$ROGUE', 53), timeout=5); print(s.getpeername()); assert s.getpeername()[0] == '$ROGUE'" ||
		fail "getpeername"
}

test_dns_garbage() {
	dns_world_up
	attach "$CG" --mode allowlist --allow www.test --netns "$(ns_sbx_path)"
	sbx "$CG" "$PYTHON" - $ROGUE <<'EOF' || fail "garbage queries"
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.connect((sys.argv[1], 53))
def ask(payload):
    s.send(payload)
    try:
        return s.recv(4096)
    except socket.timeout:
        return None
# too short for a header: no answer
assert ask(b"\x12\x34\x01") is None
# a header claiming two questions: FORMERR
r = ask(struct.pack(">HHHHHH", 7, 0x0100, 2, 0, 0, 0))
assert r is not None and r[:2] == b"\x00\x07" and r[3] & 0xf == 1, r
# a compression loop in the name: FORMERR
r = ask(struct.pack(">HHHHHH", 8, 0x0100, 1, 0, 0, 0) + b"\xc0\x0c" + struct.pack(">HH", 1, 1))
assert r is not None and r[3] & 0xf == 1, r
# a response (QR set) is never answered
assert ask(struct.pack(">HHHHHH", 9, 0x8100, 1, 0, 0, 0)) is None
print("garbage handled")
EOF
	expect_status 0 bfs status --json
	expect_listed "$CG" "s['dns']['queries']['formerr'] >= 2"
}

# With --no-loopback the responder stays reachable, but only the responder:
# its port on any other loopback address is as closed as the rest of loopback.
test_dns_no_loopback() {
	dns_world_up
	dns_set "$SRV4 www.test"
	attach "$CG" --mode allowlist --allow www.test --no-loopback --netns "$(ns_sbx_path)"
	[ "$(dig_short "$CG" www.test A)" = "$SRV4" ] || fail "DNS without loopback"
	local port
	port=$(bfs status --cgroup "$CG" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["sandboxes"][0]["dns"]["port"])')
	log "the responder's port $port elsewhere on loopback is denied"
	expect_denied "$CG" udp-connect 127.0.0.2 "$port"
	expect_denied "$CG" udp-connect 127.0.0.1 $((port == 65535 ? port - 1 : port + 1))
}
