# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: names under `bfbpf run`, the daemon's name and wildcard cases
# (test-4-names.sh, test-6-dns.sh) with run's own responder. bfbpf run runs
# in SBX (the command shares that netns) and resolves with a dnsmasq on SBX's
# loopback (its queries log in upstream.log). The command reads a
# resolv.conf naming a rogue resolver in SRV that answers every name with a
# denied address and logs what it is asked (rogue.log): every query must reach
# run's responder instead. The command is a script that checks, from inside,
# what the world answered (DNS answers, echoes from SRV's servers), and exits
# with the number of mismatches. Uses dns_set of test-4-names.sh.

ALL_TESTS+=(run_names_v4_v6 run_names_subdomains run_names_wildcard run_names_refused run_names_range_filter
	run_names_ttl_refresh run_names_bad_input)

RNAMES_ROGUE=198.18.0.3
RNAMES_DNS_PORT=5300

# rnames_dns_up: the upstream, dnsmasq on SBX's 127.0.0.1:$RNAMES_DNS_PORT, authoritative
# for .test (a name not in $CASEDIR/hosts is NXDOMAIN), TTL 1 s. Sets DNS_PID for dns_set.
rnames_dns_up() {
	: >"$CASEDIR/hosts"
	: >"$CASEDIR/upstream.log"
	DNS_PORT=$RNAMES_DNS_PORT
	# nsenter execs dnsmasq: $! is dnsmasq itself (in_ns would be a subshell), for SIGHUP.
	nsenter --net="/run/netns/$NS_SBX" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
		--addn-hosts="$CASEDIR/hosts" --listen-address=127.0.0.1 --port=$DNS_PORT \
		--bind-interfaces --local-ttl=1 --local=/test/ --log-queries \
		--log-facility="$CASEDIR/upstream.log" --pid-file= --user=root \
		>>"$CASEDIR/dnsmasq.log" 2>&1 &
	DNS_PID=$!
	defer "kill -KILL $DNS_PID; wait $DNS_PID"
	local n=0
	# Ready when it answers (any answer): before that, a SIGHUP would kill it.
	while ! in_ns "$NS_SBX" dig +time=1 +tries=1 @127.0.0.1 -p $DNS_PORT ready.test >/dev/null 2>&1; do
		n=$((n + 1))
		[ $n -gt 100 ] && { cat "$CASEDIR/dnsmasq.log"; fail "the upstream dnsmasq did not start"; }
		kill -0 "$DNS_PID" 2>/dev/null || { cat "$CASEDIR/dnsmasq.log"; fail "dnsmasq died"; }
		sleep 0.1
	done
}

# rnames_rogue_up: the resolver the command's resolv.conf names, in SRV; it answers every
# name with $DENIED4 and logs each query it gets to rogue.log.
rnames_rogue_up() {
	: >"$CASEDIR/rogue.log"
	in_ns "$NS_SRV" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
		--address=/#/$DENIED4 --listen-address=$RNAMES_ROGUE --bind-interfaces --pid-file= \
		--log-queries --log-facility="$CASEDIR/rogue.log" --user=root \
		>>"$CASEDIR/rogue.err" 2>&1 &
	local pid=$! n=0
	defer "kill -KILL $pid; wait $pid"
	while ! in_ns "$NS_SBX" dig +time=1 +tries=1 @$RNAMES_ROGUE ready.rogue >/dev/null 2>&1; do
		n=$((n + 1))
		[ $n -gt 100 ] && { cat "$CASEDIR/rogue.err"; fail "the rogue resolver did not start"; }
		sleep 0.1
	done
	grep -q 'query.*ready.rogue' "$CASEDIR/rogue.log" || fail "the rogue resolver logs no query"
	: >"$CASEDIR/rogue.log"
	printf 'nameserver %s\noptions timeout:2 attempts:1\n' $RNAMES_ROGUE >"$CASEDIR/resolv.conf"
}

rnames_world_up() {
	world_up
	rnames_dns_up
	rnames_rogue_up
}

# rnames_run RUN-ARGS... -- COMMAND...: bfbpf run in SBX, the command as root, reading the
# case's resolv.conf; names resolved by the case's upstream, TTLs 1 to 2 s, grace 3 s.
rnames_run() {
	# shellcheck disable=SC2016 # $0 and $@ are the inner sh's
	timeout -k 5 "$CLI_TIMEOUT" nsenter --net="/run/netns/$NS_SBX" unshare -m \
		sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$CASEDIR/resolv.conf" \
		"$BFBPF" run --allow-root --dns-server "127.0.0.1:$RNAMES_DNS_PORT" \
		--min-ttl 1 --max-ttl 2 --grace 3 "$@"
}

# rnames_script BODY: $CASEDIR/cmd.sh, the command: helpers, then BODY; it exits with the
# number of checks that failed.
#   want WHAT EXPECTED ACTUAL   a check
#   addrs NAME [DIG-ARGS...]    the addresses run's responder answers, on one line
#   rcode NAME [DIG-ARGS...]    the rcode of its answer
#   conn MODE ADDR PORT         ok (the echo came back), denied (EPERM) or error
#   until_ SECONDS WHAT EXPECTED CMD...  retry CMD until it prints EXPECTED
rnames_script() {
	cat >"$CASEDIR/cmd.sh" <<'EOF'
fails=0
want() {
	if [ "$2" = "$3" ]; then echo "ok: $1: $3"; else echo "MISMATCH: $1: expected '$2', got '$3'"; fails=$((fails + 1)); fi
}
addrs() { dig +short +time=3 +tries=1 "$@" 2>&1 | sort | tr '\n' ' ' | sed 's/ $//'; }
rcode() { dig +time=3 +tries=1 "$@" 2>&1 | sed -n 's/.*status: \([A-Z]*\).*/\1/p'; }
conn() {
	"$PYTHON" "$PROBE" "$@" >/dev/null 2>&1
	case $? in 0) echo ok ;; 1) echo denied ;; *) echo error ;; esac
}
until_() {
	limit=$(($1 * 2)) what=$2 expected=$3 n=0
	shift 3
	while got=$("$@") && [ "$got" != "$expected" ] && [ $n -lt $limit ]; do
		n=$((n + 1))
		sleep 0.5
	done
	want "$what" "$expected" "$got"
}
EOF
	# shellcheck disable=SC2016 # $fails is the script's
	printf '%s\nexit $fails\n' "$1" >>"$CASEDIR/cmd.sh"
}

# rnames_expect_run STATUS RUN-ARGS...: run cmd.sh under bfbpf run; no MISMATCH in its output.
rnames_expect_run() {
	local want=$1
	shift
	PYTHON=$PYTHON PROBE=$PROBE expect_status "$want" rnames_run "$@" -- sh "$CASEDIR/cmd.sh"
	if grep -q MISMATCH "$CASEDIR/last.out"; then fail "the command saw what it should not"; fi
}

# rnames_rogue_silent: no query of the command reached the rogue resolver.
rnames_rogue_silent() {
	echo "rogue.log:"
	sed 's/^/  /' "$CASEDIR/rogue.log"
	if grep -q 'query\[' "$CASEDIR/rogue.log"; then fail "a query reached the rogue resolver"; fi
}

# A name's IPv4 and global IPv6 addresses, asked over IPv4 and IPv6 (test-4-names.sh's
# names_v4_v6 and its global_v6_up); ULA ones are range-filtered.
test_run_names_v4_v6() {
	rnames_world_up
	global_v6_up
	dns_set "$SRV4 www.test" "$SRV6G www.test" "$SRV6G v6.www.test" "$SRV6 ula.www.test"
	rnames_script "
want 'IPv4 of the policy name' ok \"\$(conn tcp $SRV4 7000)\"
want 'IPv6 of the policy name' ok \"\$(conn tcp $SRV6G 7000)\"
want 'AAAA asked over IPv6' $SRV6G \"\$(addrs v6.www.test AAAA @$SRV6)\"
want 'AAAA over IPv6 and TCP' $SRV6G \"\$(addrs www.test AAAA @$SRV6 +tcp)\"
want 'A asked over IPv6' $SRV4 \"\$(addrs www.test A @$SRV6)\"
want 'a ULA answer is empty' '' \"\$(addrs ula.www.test AAAA)\"
want 'ULA' denied \"\$(conn tcp $SRV6 7000)\"
want 'another IPv4' denied \"\$(conn tcp $SRV4B 7000)\""
	rnames_expect_run 0 --mode allowlist --allow www.test
	rnames_rogue_silent
}

# A bare name allows its subdomains: one asked through DNS is learned and connects; an
# address no answer gave stays closed.
test_run_names_subdomains() {
	rnames_world_up
	dns_set "$SRV4 www.test" "$SRV4B sub.www.test"
	rnames_script "
want 'sub.www.test before it was asked' denied \"\$(conn tcp $SRV4B 7000)\"
want 'www.test (the policy name)' ok \"\$(conn tcp $SRV4 7000)\"
want 'dig sub.www.test' $SRV4B \"\$(addrs sub.www.test)\"
want 'dig +tcp sub.www.test' $SRV4B \"\$(addrs sub.www.test +tcp)\"
want 'dig @rogue sub.www.test' $SRV4B \"\$(addrs sub.www.test @$RNAMES_ROGUE)\"
want 'the subdomain learned' ok \"\$(conn tcp $SRV4B 7000)\"
want 'python by name' $SRV4B \"\$(\"\$PYTHON\" -c 'import socket; print(socket.gethostbyname(\"sub.www.test\"))')\"
want 'curl by name' '200 $SRV4B' \"\$(curl -sS --max-time 10 -o /dev/null -w '%{http_code} %{remote_ip}' http://sub.www.test:8080/)\"
want 'an address no answer gave' denied \"\$(conn tcp $DENIED4 7000)\""
	rnames_expect_run 0 --mode allowlist --allow www.test
	rnames_rogue_silent
	grep -q 'query\[A\] sub.www.test' "$CASEDIR/upstream.log" ||
		fail "the upstream was never asked for sub.www.test"
}

# *.wild.test: any depth of subdomain, never the apex.
test_run_names_wildcard() {
	rnames_world_up
	dns_set "$SRV4 api.wild.test" "$SRV4 wild.test" "$SRV4B a.b.c.wild.test"
	rnames_script "
want 'nothing before a query' denied \"\$(conn tcp $SRV4 7000)\"
want 'the apex is refused' REFUSED \"\$(rcode wild.test)\"
want 'the apex programmed nothing' denied \"\$(conn tcp $SRV4 7000)\"
want 'a deep subdomain' $SRV4B \"\$(addrs a.b.c.wild.test)\"
want 'a subdomain' $SRV4 \"\$(addrs api.wild.test)\"
want 'a deep subdomain connects' ok \"\$(conn tcp $SRV4B 7000)\"
want 'a subdomain connects' ok \"\$(conn tcp $SRV4 7000)\"
want 'TXT of an allowed name' NOERROR \"\$(rcode api.wild.test TXT)\"
want 'TXT carries no data' '' \"\$(addrs api.wild.test TXT)\""
	rnames_expect_run 0 --mode allowlist --allow '*.wild.test'
	rnames_rogue_silent
	if grep -q 'query\[[A-Z]*\] wild.test' "$CASEDIR/upstream.log"; then
		fail "the apex of the wildcard was asked upstream"
	fi
}

# A name outside the policy is refused by the responder: neither the rogue resolver nor
# the upstream hears of it, and its address stays closed.
test_run_names_refused() {
	rnames_world_up
	dns_set "$SRV4 www.test" "$SRV4B evil.test"
	rnames_script "
want 'a denied name' REFUSED \"\$(rcode evil.test)\"
want 'a denied name over TCP' REFUSED \"\$(rcode evil.test +tcp)\"
want 'a denied name @rogue' REFUSED \"\$(rcode evil.test @$RNAMES_ROGUE)\"
want 'TXT under a denied domain' REFUSED \"\$(rcode x.evil.test TXT)\"
want 'getent of a denied name' 2 \"\$(getent ahostsv4 evil.test >/dev/null; echo \$?)\"
want 'its address' denied \"\$(conn tcp $SRV4B 7000)\"
want 'the upstream straight' denied \"\$(conn udp-sendto 127.0.0.1 $RNAMES_DNS_PORT)\"
want 'DNS over TLS' denied \"\$(conn tcp $SRV4B 853)\"
want 'the allowed name' $SRV4 \"\$(addrs www.test)\"
want 'the allowed name connects' ok \"\$(conn tcp $SRV4 7000)\""
	rnames_expect_run 0 --mode allowlist --allow www.test
	rnames_rogue_silent
	echo "upstream.log:"
	sed 's/^/  /' "$CASEDIR/upstream.log"
	if grep -q 'evil.test' "$CASEDIR/upstream.log"; then fail "the upstream was asked for a denied name"; fi
}

# The range filter: private addresses a name answers are neither programmed nor handed to
# the command, unless a literal entry covers them. corp.test itself does not exist: a
# warning names it, and its subdomains work.
test_run_names_range_filter() {
	rnames_world_up
	dns_set "10.7.7.7 inside.corp.test" "$SRV4 ok.corp.test" "10.1.2.3 private.test" \
		"192.168.7.7 lit.test"
	rnames_script "
want 'a private answer is empty' '' \"\$(addrs inside.corp.test)\"
want '... and NOERROR' NOERROR \"\$(rcode inside.corp.test)\"
want 'its address is closed' denied \"\$(conn tcp 10.7.7.7 7000)\"
want 'a policy name with a private address' denied \"\$(conn tcp 10.1.2.3 7000)\"
want 'dig of it' '' \"\$(addrs private.test)\"
want 'a literal entry covers this one' 192.168.7.7 \"\$(addrs lit.test)\"
want 'the public name of the same zone' $SRV4 \"\$(addrs ok.corp.test)\"
want 'it connects' ok \"\$(conn tcp $SRV4 7000)\""
	rnames_expect_run 0 --mode allowlist --allow corp.test --allow private.test --allow lit.test \
		--allow 192.168.7.0/24
	grep -q 'corp.test' "$CASEDIR/last.err" || fail "no warning names corp.test (NXDOMAIN)"
	rnames_rogue_silent
}

# Names are refreshed by TTL while the command runs: the policy's name and a name learned
# through DNS move; the new address opens, the old one closes after the grace period.
test_run_names_ttl_refresh() {
	rnames_world_up
	dns_set "$SRV4 www.test" "$SRV4 img.cdn.test"
	rnames_script "
want 'www.test' ok \"\$(conn tcp $SRV4 7000)\"
want 'img.cdn.test learned' $SRV4 \"\$(addrs img.cdn.test)\"
want 'the other address' denied \"\$(conn tcp $SRV4B 7000)\"
touch '$CASEDIR/phase1'
n=0
while [ ! -e '$CASEDIR/moved' ] && [ \$n -lt 200 ]; do sleep 0.1; n=\$((n + 1)); done
until_ 15 'the new address answered' $SRV4B addrs img.cdn.test
until_ 15 'the new address opens' ok conn tcp $SRV4B 7000
until_ 20 'the old address closes' denied conn tcp $SRV4 7000
want 'the new one stays' ok \"\$(conn tcp $SRV4B 7000)\""
	PYTHON=$PYTHON PROBE=$PROBE rnames_run --mode allowlist --allow www.test --allow '*.cdn.test' \
		-- sh "$CASEDIR/cmd.sh" >"$CASEDIR/run.out" 2>"$CASEDIR/run.err" &
	local pid=$! rc
	defer "kill -TERM $pid 2>/dev/null"
	wait_for_file "$CASEDIR/phase1" 30 || { cat "$CASEDIR/run.out" "$CASEDIR/run.err"; fail "the command did not start"; }
	log "www.test and img.cdn.test move to $SRV4B (SIGHUP to the upstream)"
	dns_set "$SRV4B www.test" "$SRV4B img.cdn.test"
	touch "$CASEDIR/moved"
	wait $pid
	rc=$?
	sed 's/^/  out: /' "$CASEDIR/run.out"
	sed 's/^/  err: /' "$CASEDIR/run.err"
	[ $rc -eq 0 ] || fail "the command's checks failed (status $rc)"
	grep -q MISMATCH "$CASEDIR/run.out" && fail "the command saw what it should not"
	grep -c 'query\[A\] www.test' "$CASEDIR/upstream.log" | awk '{ exit !($1 >= 2) }' ||
		fail "www.test was not resolved again while the command ran"
	rnames_rogue_silent
}

# Bad input: a name no upstream answers, or a bad policy or option: a clear error, the
# command never runs, nothing is left behind.
test_run_names_bad_input() {
	local marker=$CASEDIR/ran before after
	world_up
	printf 'nameserver %s\n' $RNAMES_ROGUE >"$CASEDIR/resolv.conf"
	before=$(run_leftovers_snapshot)
	log "the upstream does not answer (nothing listens on its port)"
	RNAMES_DNS_PORT=5399 expect_status 1 rnames_run --mode allowlist --allow www.test -- touch "$marker"
	expect_one_stderr_line 'www.test'
	grep -q 'cannot resolve' "$CASEDIR/last.err" || fail "the error does not say the name did not resolve"
	[ ! -e "$marker" ] || fail "the command ran although its names did not resolve"
	log "an invalid policy"
	expect_status 2 rnames_run --mode allowlist --allow 'a.*.test' -- touch "$marker"
	expect_one_stderr_line 'a.*.test'
	expect_status 2 rnames_run --policy "$(policy_file '{"network_mode": "open", "allowed_hosts": ["www.test"]}')" \
		-- touch "$marker"
	log "bad TTL options"
	expect_status 2 rnames_run --mode allowlist --allow www.test --min-ttl 5 --max-ttl 2 -- touch "$marker"
	expect_one_stderr_line '--min-ttl'
	expect_status 2 rnames_run --mode allowlist --allow www.test --grace soon -- touch "$marker"
	expect_one_stderr_line '--grace soon'
	[ ! -e "$marker" ] || fail "the command ran despite bad input"
	after=$(run_leftovers_snapshot)
	[ "$before" = "$after" ] || fail "bfbpf run left cgroups or pins behind: $(diff <(echo "$before") <(echo "$after"))"
}
