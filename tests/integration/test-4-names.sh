# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: names in policies, resolved by the daemon with c-ares against a real
# dnsmasq (on loopback, its own port), followed as they move, dropped after
# the grace period, range-filtered.

ALL_TESTS+=(names_v4_v6 name_moves name_shared_address name_upstream_down name_unresolvable
	name_model_endpoint name_private_address resolve_dry_run)

# A global IPv6 pair inside the world (the fd00:: ones are range-filtered as ULA).
SRV6G=2001:db8::2
SBX6G=2001:db8::1
NAMES_GRACE=3

# dns_up: dnsmasq on 127.0.0.1:$DNS_PORT answering from $CASEDIR/hosts (TTL 1 s), plus
# the options in the array DNS_EXTRA if a case set it (records of other types: --dns-rr).
dns_up() {
	local _
	: >"$CASEDIR/hosts"
	for _ in 1 2 3 4 5; do
		DNS_PORT=$((20000 + RANDOM % 30000))
		dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
			--addn-hosts="$CASEDIR/hosts" --listen-address=127.0.0.1 --port="$DNS_PORT" \
			--bind-interfaces --local-ttl=1 --pid-file= --user=root \
			${DNS_EXTRA[@]+"${DNS_EXTRA[@]}"} >>"$CASEDIR/dnsmasq.log" 2>&1 &
		DNS_PID=$!
		# Ready when it answers (any answer): before that, a SIGHUP would kill it.
		local n=0
		while kill -0 "$DNS_PID" 2>/dev/null &&
			! dig +time=1 +tries=1 @127.0.0.1 -p "$DNS_PORT" ready.test >/dev/null 2>&1; do
			n=$((n + 1))
			[ $n -gt 100 ] && break
			sleep 0.1
		done
		if kill -0 "$DNS_PID" 2>/dev/null && [ $n -le 100 ]; then
			defer "kill -KILL $DNS_PID; wait $DNS_PID"
			return 0
		fi
		kill -KILL "$DNS_PID" 2>/dev/null
	done
	cat "$CASEDIR/dnsmasq.log"
	fail "dnsmasq did not start"
}

# dns_set LINE...: the hosts file's content ("ADDR NAME" lines); dnsmasq re-reads it.
dns_set() {
	printf '%s\n' "$@" >"$CASEDIR/hosts"
	kill -HUP "$DNS_PID"
	sleep 0.2
}

# names_daemon_up: the case's daemon, resolving with the case's dnsmasq.
names_daemon_up() {
	[ -x "$BFBPF" ] || fail "$BFBPF is missing (run make)"
	defer "rm -rf '$PINS'"
	defer "rm -f '$SOCK'"
	bf daemon --socket "$SOCK" --bpffs "$PINS" --log-level debug \
		--dns-server "127.0.0.1:$DNS_PORT" --min-ttl 1 --max-ttl 2 --grace $NAMES_GRACE \
		>>"$CASEDIR/daemon.log" 2>&1 &
	DAEMON_PID=$!
	defer "daemon_stop $DAEMON_PID"
	defer "detach_all"
	daemon_wait
}

# global_v6_up: the 2001:db8:: pair on the veth (server.py binds the fd00:: ones; this one
# gets its own echo server).
global_v6_up() {
	ip -n "$NS_SBX" addr add $SBX6G/64 dev eth0 nodad
	ip -n "$NS_SRV" addr add $SRV6G/64 dev eth0 nodad
	start_server "$NS_SRV" --bind $SRV6G --tcp 7000
}

# wait_until SECONDS PYEXPR: poll status --json until PYEXPR (about d) holds.
wait_until() {
	local limit=$(($1 * 10)) expr=$2 n=0 f=$CASEDIR/wait.json
	while :; do
		bfs status --json >"$f" 2>/dev/null
		json_check "$f" "$expr" >/dev/null 2>&1 && return 0
		n=$((n + 1))
		if [ $n -gt $limit ]; then
			cat "$f"
			fail "status never satisfied: $expr"
		fi
		sleep 0.1
	done
}

# The Python expression: the (only) sandbox's name NAME has exactly ADDRS (a Python list).
name_has() {
	echo "[n for s in d['sandboxes'] for n in (s.get('names') or []) if n['name'] == '$1' and sorted(n['addresses']) == sorted($2)]"
}

test_names_v4_v6() {
	world_up
	global_v6_up
	dns_up
	dns_set "$SRV4 www.test" "$SRV6G www.test"
	names_daemon_up
	attach "$CG" --mode allowlist --allow www.test --json
	expect_listed "$CG" "[n for n in s['names'] if n['name'] == 'www.test' and
		sorted(n['addresses']) == sorted(['$SRV4', '$SRV6G']) and n['resolved']]"
	expect_ok "$CG" tcp $SRV4 7000
	expect_ok "$CG" tcp $SRV6G 7000
	expect_denied "$CG" tcp $SRV4B 7000
	# shellcheck disable=SC2153 # SRV6 is lib.sh's, not a misspelt SRV6G
	expect_denied "$CG" tcp $SRV6 7000
	expect_status 0 bfs verify --cgroup "$CG"
}

test_name_moves() {
	world_up
	dns_up
	dns_set "$SRV4 www.test"
	names_daemon_up
	attach "$CG" --mode allowlist --allow www.test
	expect_ok "$CG" tcp $SRV4 7000
	expect_denied "$CG" tcp $SRV4B 7000
	log "www.test moves to $SRV4B"
	dns_set "$SRV4B www.test"
	wait_until 10 "$(name_has www.test "['$SRV4', '$SRV4B']") or $(name_has www.test "['$SRV4B']")"
	expect_ok "$CG" tcp $SRV4B 7000
	log "the old address goes after the grace period ($NAMES_GRACE s past its TTL)"
	wait_until 15 "$(name_has www.test "['$SRV4B']")"
	expect_denied "$CG" tcp $SRV4 7000
	expect_ok "$CG" tcp $SRV4B 7000
	expect_status 0 bfs verify --cgroup "$CG"
}

test_name_shared_address() {
	world_up
	dns_up
	dns_set "$SRV4 a.test" "$SRV4 b.test"
	names_daemon_up
	attach "$CG" --mode allowlist --allow a.test --allow b.test
	expect_ok "$CG" tcp $SRV4 7000
	log "a.test moves away; b.test still holds $SRV4"
	dns_set "$SRV4B a.test" "$SRV4 b.test"
	wait_until 15 "$(name_has a.test "['$SRV4B']")"
	expect_ok "$CG" tcp $SRV4 7000
	expect_ok "$CG" tcp $SRV4B 7000
	log "b.test drops it too: now it goes"
	dns_set "$SRV4B a.test" "$SRV4B b.test"
	wait_until 15 "$(name_has b.test "['$SRV4B']")"
	expect_denied "$CG" tcp $SRV4 7000
}

test_name_upstream_down() {
	world_up
	dns_up
	dns_set "$SRV4 www.test"
	names_daemon_up
	attach "$CG" --mode allowlist --allow www.test
	expect_ok "$CG" tcp $SRV4 7000
	log "the upstream goes away: the last address stays for the grace period only"
	kill -KILL "$DNS_PID"
	wait "$DNS_PID" 2>/dev/null
	wait_until 5 "[n for s in d['sandboxes'] for n in s['names'] if n['last_error']]"
	wait_until 20 "$(name_has www.test "[]")"
	expect_denied "$CG" tcp $SRV4 7000
	log "the control socket kept answering all along"
	expect_status 0 bfs status --json
}

test_name_unresolvable() {
	world_up
	dns_up
	dns_set "$SRV4 www.test"
	names_daemon_up
	expect_status 0 bfs attach --cgroup "$CG" --mode allowlist --allow nx.test --allow www.test --json
	cp "$CASEDIR/last.out" "$CASEDIR/attach.json"
	json_check "$CASEDIR/attach.json" "d['ok'] and d['unresolved'] == ['nx.test']" ||
		fail "attach does not say which name did not resolve"
	expect_listed "$CG" "[n for n in s['names'] if n['name'] == 'nx.test' and n['addresses'] == []
		and n['last_error'] and n['resolved']]"
	expect_ok "$CG" tcp $SRV4 7000
	expect_denied "$CG" tcp $SRV4B 7000
}

test_name_model_endpoint() {
	world_up
	dns_up
	dns_set "$SRV4 lane.test"
	names_daemon_up
	attach "$CG" --mode no-network --model-endpoint lane.test:7000
	expect_ok "$CG" tcp $SRV4 7000
	expect_denied "$CG" tcp $SRV4 9000
	expect_denied "$CG" tcp $SRV4B 7000
	log "the lane closed (hermetic): nothing"
	update "$CG" --mode no-network --model-endpoint lane.test:7000 --no-model-endpoint
	expect_denied "$CG" tcp $SRV4 7000
}

test_name_private_address() {
	world_up
	dns_up
	dns_set "10.1.2.3 private.test" "$SRV6 ula.test" "$SRV4 www.test" "192.168.7.7 lane.test"
	names_daemon_up
	attach "$CG" --mode allowlist --allow private.test --allow ula.test --allow www.test \
		--model-endpoint lane.test:443
	expect_listed "$CG" "[n for n in s['names'] if n['name'] == 'private.test'
		and n['addresses'] == [] and n['filtered'] == ['10.1.2.3']]"
	expect_listed "$CG" "[n for n in s['names'] if n['name'] == 'ula.test' and n['filtered'] == ['$SRV6']]"
	log "a model endpoint name is exempt from the range filter"
	expect_listed "$CG" "[n for n in s['names'] if n['name'] == 'lane.test' and n['addresses'] == ['192.168.7.7']]"
	expect_denied "$CG" tcp $SRV6 7000
	expect_ok "$CG" tcp $SRV4 7000
	log "a literal entry covering the range lets the name's address in"
	update "$CG" --mode allowlist --allow ula.test --allow fd00::/64
	expect_listed "$CG" "[n for n in s['names'] if n['name'] == 'ula.test' and n['addresses'] == ['$SRV6']]"
	expect_ok "$CG" tcp $SRV6 7000
	expect_status 0 bfs verify --cgroup "$CG"
}

test_resolve_dry_run() {
	dns_up
	dns_set "$SRV4 www.test" "10.9.9.9 www.test"
	expect_status 0 bf resolve --mode allowlist --allow www.test --allow nx.test \
		--dns-server "127.0.0.1:$DNS_PORT" --json
	cp "$CASEDIR/last.out" "$CASEDIR/resolve.json"
	json_check "$CASEDIR/resolve.json" "d['ok'] and d['entries'] == ['$SRV4']
		and [n for n in d['names'] if n['name'] == 'www.test' and n['filtered'] == ['10.9.9.9']]
		and [n for n in d['names'] if n['name'] == 'nx.test' and n['last_error']]" ||
		fail "resolve --json"
	expect_status 0 bf resolve --mode allowlist --allow www.test --dns-server "127.0.0.1:$DNS_PORT"
	grep -q "$SRV4" "$CASEDIR/last.out" || fail "resolve does not print the address"
	log "an invalid policy is a usage error"
	expect_status 2 bf resolve --mode allowlist --allow 'a.*.test'
	expect_one_stderr_line 'a.*.test'
}
