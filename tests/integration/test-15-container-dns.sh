# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: DNS inside every container, however its sandbox was registered (docs/dns.md
# "Network namespaces"): a parent cgroup attached without --netns whose container has its
# own netns, a guard's unregistered container and a registered one below it; verify's dns
# check (a real query from each netns in use); runtime_network (a compose-style task's
# service names through the runtime's resolver, only inside the netns's own subnets).
# Podman (runc, cgroupfs) as test-13-containers.sh starts it, with its helpers.

ALL_TESTS+=(container_dns_parent_cgroup container_dns_guard container_dns_verify
	container_dns_runtime_network container_dns_runtime_network_off
	container_dns_runtime_network_bad)

# An address outside every test subnet, routed from SBX to SRV: "the outside world".
CDNS_OUTSIDE4=10.99.0.1
# The runtime's resolver: the gateway address of the SBX/SRV subnet.
CDNS_GATEWAY4=198.18.0.254
CDNS_DB_PORT=7200
CDNS_AARDVARK=${CDNS_AARDVARK:-/usr/lib/podman/aardvark-dns}

# cdns_aardvark_up: aardvark-dns as netavark runs it (its config file names the network's
# gateway, then one line per container: id, IPv4, IPv6, names), in SRV, in a mount
# namespace whose resolv.conf names nothing reachable (what it forwards goes nowhere).
cdns_aardvark_up() {
	local dir=$CASEDIR/aardvark id
	mkdir -p "$dir/config"
	{
		echo $CDNS_GATEWAY4
		for id in "a $SRV4 db" "b $SBX4 agent" "c $CDNS_OUTSIDE4 evil"; do
			set -- $id
			printf '%s %s  %s\n' "$(printf "$1%.0s" $(seq 64))" "$2" "$3"
		done
	} >"$dir/config/task"
	echo "nameserver 127.0.0.1" >"$dir/resolv.conf"
	# It forks into the background and writes its pid next to its config.
	# shellcheck disable=SC2016 # expanded by the inner shell
	nsenter --net="/run/netns/$NS_SRV" unshare -m sh -c \
		'mount --bind "$1" /etc/resolv.conf && exec "$2" --config "$3" -p 53 run' _ \
		"$dir/resolv.conf" "$CDNS_AARDVARK" "$dir/config" >>"$CASEDIR/runtime-dns.log" 2>&1 ||
		fail "aardvark-dns did not start"
	wait_for_file "$dir/config/aardvark.pid" 20 || fail "aardvark-dns wrote no pid"
	defer "kill -KILL $(cat "$dir/config/aardvark.pid")"
	log "the runtime's resolver: aardvark-dns $("$CDNS_AARDVARK" --version 2>/dev/null)"
}

cdns_dnsmasq_up() {
	printf '%s\n' "$SRV4 db db.dns.podman" "$CDNS_OUTSIDE4 evil evil.dns.podman" \
		>"$CASEDIR/runtime-hosts"
	in_ns "$NS_SRV" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
		--addn-hosts="$CASEDIR/runtime-hosts" --listen-address=$CDNS_GATEWAY4 --port=53 \
		--bind-interfaces --pid-file= --user=root >>"$CASEDIR/runtime-dns.log" 2>&1 &
	local pid=$!
	defer "kill -KILL $pid; wait $pid"
	log "the runtime's resolver: dnsmasq (no aardvark-dns at $CDNS_AARDVARK)"
}

# cdns_up [DAEMON-ARGS...]: the world, the upstream dnsmasq (allowed.test, denied.test,
# other.test), Podman, and the daemon resolving with that dnsmasq.
cdns_up() {
	world_up
	dns_up
	printf '%s\n' "$CTR_ALLOWED4 allowed.test" "$CTR_DENIED4 denied.test" \
		"$CTR_ALLOWED4 other.test" >"$CASEDIR/hosts"
	kill -HUP "$DNS_PID"
	podman_up
	[ "$DAEMON_ACCEPT_VSOCK" = 1 ] && set -- "$@" --accept-vsock
	ctr_daemon_up --dns-server "127.0.0.1:$DNS_PORT" "$@"
	# Any nameserver: port 53 is redirected to the responder in the container's netns.
	printf 'nameserver %s\noptions timeout:2 attempts:1\n' $CTR_DENIED4 >"$CASEDIR/resolv.conf"
}

# cdns_run NAME [PODMAN-RUN-ARGS...] -- CMD...: a detached container under the case's
# cgroup, in SBX's netns, with the test's resolv.conf; as nobody without capabilities (as a
# runner runs its agent: verify's process checks pass).
cdns_run() {
	local name=$1 args=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	podman run -d --pull never --name "$name" --cgroup-parent "$CTR_PARENT" \
		--network "ns:/run/netns/$NS_SBX" --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
		-v /usr:/usr:ro -v "$CASEDIR:/case:ro" -v "$CASEDIR/resolv.conf:/etc/resolv.conf:ro" \
		--user 65534:65534 --cap-drop all "${args[@]}" $CTR_IMAGE "$@" >/dev/null ||
		fail "podman run $name failed"
}

# cdns_dig CONTAINER NAME: `dig NAME` inside the container, through its resolv.conf;
# prints the status and the addresses ("NOERROR 198.18.0.2").
cdns_dig() {
	podman exec "$1" /usr/bin/dig +time=2 +tries=1 "$2" A 2>&1 |
		awk '/status:/ { s = $6; sub(",", "", s) } /^[^;].*\tIN\tA\t/ { a = a " " $5 }
			END { print (s ? s : "NOANSWER") a }'
}

# cdns_dig_wait CONTAINER NAME WANT: until dig says WANT (the sweep gives a new netns its
# socket within moments; before that nothing listens there, and dig times out).
cdns_dig_wait() {
	local n=0 got
	until got=$(cdns_dig "$1" "$2") && [ "$got" = "$3" ]; do
		n=$((n + 1))
		[ $n -gt 40 ] && fail "dig $2 in $1: '$got', expected '$3'"
		sleep 0.25
	done
	echo "dig $2 in $1: $got"
}

# cdns_connect CONTAINER NAME PORT: resolve NAME inside the container and connect to it;
# prints "connected ADDR", "refused ERR" or "unresolved ERR".
cdns_connect() {
	podman exec "$1" /usr/bin/python3 -c '
import socket, sys
try:
    addr = socket.getaddrinfo(sys.argv[1], int(sys.argv[2]), socket.AF_INET, socket.SOCK_STREAM)[0][4]
except OSError as e:
    print("unresolved", e); sys.exit(0)
s = socket.socket(); s.settimeout(3)
try:
    s.connect(addr); print("connected", addr[0])
except OSError as e:
    print("refused", e)
' "$2" "$3"
}

# cdns_status_wait PYEXPR: poll `bfbpf status --json` until PYEXPR holds.
cdns_status_wait() {
	local n=0
	until bfs status --json >"$CASEDIR/status.json" 2>/dev/null &&
		json_check "$CASEDIR/status.json" "$1" >/dev/null; do
		n=$((n + 1))
		[ $n -gt 40 ] && { cat "$CASEDIR/status.json"; fail "status never showed: $1"; }
		sleep 0.25
	done
}

test_container_dns_parent_cgroup() {
	cdns_up
	count_server $CTR_ALLOWED4 $CTR_DENIED4
	policy named "{\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"allowed.test:$CTR_PORT\"]}"
	log "the parent cgroup attached without --netns: the daemon's netns is not the container's"
	attach "$CG" --policy "$CASEDIR/policies/named.json"
	cdns_run web -- /bin/sleep 1000
	cdns_dig_wait web allowed.test "NOERROR $CTR_ALLOWED4"
	cdns_status_wait "d['sandboxes'][0]['dns']['namespaces'] == 2"
	[ "$(cdns_dig web denied.test)" = REFUSED ] || fail "denied.test was not refused"
	log "what reached the world: the allowed name by name, nothing of the denied one"
	[ "$(cdns_connect web allowed.test $CTR_PORT)" = "connected $CTR_ALLOWED4" ] ||
		fail "allowed.test did not connect"
	cdns_connect web denied.test $CTR_PORT | grep -q "^unresolved" || fail "denied.test resolved"
	[ "$(reached $CTR_ALLOWED4)" -eq 1 ] || fail "allowed.test: $(reached $CTR_ALLOWED4) connections"
	[ "$(reached $CTR_DENIED4)" -eq 0 ] || fail "denied.test: $(reached $CTR_DENIED4) connections"
	log "the container goes: its netns's sockets close with it"
	podman rm -f -t 0 web >/dev/null
	cdns_status_wait "d['sandboxes'][0]['dns']['namespaces'] == 1"
}

test_container_dns_guard() {
	cdns_up
	count_server $CTR_ALLOWED4 $CTR_DENIED4
	policy default "{\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"allowed.test:$CTR_PORT\"]}"
	policy own "{\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"other.test:$CTR_PORT\"]}"
	bf_ok guard --cgroup "$CG" --policy "$CASEDIR/policies/default.json"
	defer "bfs unguard --cgroup '$CG'"
	log "an unregistered container below the guard: the guard's default answers in its netns"
	cdns_run web -- /bin/sleep 1000
	cdns_dig_wait web allowed.test "NOERROR $CTR_ALLOWED4"
	[ "$(cdns_dig web other.test)" = REFUSED ] || fail "the guard answered a name it does not list"
	log "registered with its own policy: its responder answers in the container's netns"
	bf_ok attach --container web --runtime podman --policy "$CASEDIR/policies/own.json"
	cdns_dig_wait web other.test "NOERROR $CTR_ALLOWED4"
	[ "$(cdns_dig web allowed.test)" = REFUSED ] || fail "the guard's name answered after registration"
	[ "$(cdns_connect web other.test $CTR_PORT)" = "connected $CTR_ALLOWED4" ] ||
		fail "other.test did not connect"
	cdns_connect web denied.test $CTR_PORT | grep -q "^unresolved" || fail "denied.test resolved"
	[ "$(reached $CTR_DENIED4)" -eq 0 ] || fail "denied.test: $(reached $CTR_DENIED4) connections"
	expect_status 0 bfs verify --container web --runtime podman
	bf_ok detach --container web --runtime podman
}

# cdns_squat PORT: a process outside the sandbox holds 127.0.0.1:PORT (UDP and TCP) in SBX's
# netns, as anything could before the daemon gets there; prints its pid.
cdns_squat() {
	nsenter --net="/run/netns/$NS_SBX" "$PYTHON" -c '
import socket, sys, time
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", int(sys.argv[1])))
t = socket.socket(); t.bind(("127.0.0.1", int(sys.argv[1]))); t.listen(1)
open(sys.argv[2], "w").close(); time.sleep(1000)
' "$1" "$CASEDIR/squat-ready" >>"$CASEDIR/squat.log" 2>&1 &
	local pid=$!
	defer "kill -KILL $pid 2>/dev/null"
	wait_for_file "$CASEDIR/squat-ready" 20 || fail "the squatter did not start"
	CDNS_SQUAT_PID=$pid
}

test_container_dns_verify() {
	cdns_up
	policy named '{"network_mode": "allowlist", "allowed_hosts": ["allowed.test"]}'
	attach "$CG" --policy "$CASEDIR/policies/named.json"
	expect_status 0 bfs verify --cgroup "$CG" --json
	json_check "$CASEDIR/last.out" "[c for c in d['checks'] if c['name'] == 'dns' and c['ok']]" ||
		fail "no passing dns check"
	local port
	port=$(bfs status --cgroup "$CG" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["sandboxes"][0]["dns"]["port"])')
	[ -n "$port" ] || fail "no responder port in status"
	log "its port is taken in SBX's netns before a process of the sandbox goes there"
	cdns_squat "$port"
	cdns_run web -- /bin/sleep 1000
	verify_fails dns "network namespace" "no answer"
	grep -q "cannot listen on port $port in network namespace" "$CASEDIR/daemon.log" ||
		fail "the daemon did not say why"
	log "the port is free again: the next sweep listens there, and verify passes"
	kill -KILL "$CDNS_SQUAT_PID"
	cdns_status_wait "d['sandboxes'][0]['dns']['namespaces'] == 2"
	expect_status 0 bfs verify --cgroup "$CG" --json
	json_check "$CASEDIR/last.out" "[c for c in d['checks'] if c['name'] == 'dns' and c['ok']
		and '2 network namespaces' in c['detail']]" || fail "the dns check did not ask both netns"
	log "no-network: DNS is not expected, there is no dns check"
	policy closed '{"network_mode": "no-network"}'
	bf_ok update --cgroup "$CG" --policy "$CASEDIR/policies/closed.json"
	bfs verify --cgroup "$CG" --json >"$CASEDIR/closed.json"
	json_check "$CASEDIR/closed.json" "not [c for c in d['checks'] if c['name'] == 'dns']" ||
		fail "a no-network sandbox has a dns check"
}

# cdns_resolver_up: the runtime's resolver at the subnet's gateway address in SRV: Podman's
# own aardvark-dns run by hand (dnsmasq where it is missing), answering the compose task's
# containers: db (and db.dns.podman) -> SRV4, evil -> an outside address routed from SBX;
# the db service (HTTP) on SRV4; a counter at the outside address.
cdns_resolver_up() {
	ip -n "$NS_SRV" addr add $CDNS_GATEWAY4/24 dev eth0
	ip -n "$NS_SRV" addr add $CDNS_OUTSIDE4/32 dev eth0
	ip -n "$NS_SBX" route add $CDNS_OUTSIDE4/32 via $SRV4
	if [ -x "$CDNS_AARDVARK" ]; then
		cdns_aardvark_up
	else
		cdns_dnsmasq_up
	fi
	local n=0
	until in_ns "$NS_SBX" dig +time=1 +tries=1 @$CDNS_GATEWAY4 db | grep -q "$SRV4"; do
		n=$((n + 1))
		[ $n -gt 50 ] && fail "the runtime's resolver did not start"
		sleep 0.1
	done
	printf 'nameserver %s\nsearch dns.podman\noptions timeout:2 attempts:1\n' $CDNS_GATEWAY4 \
		>"$CASEDIR/resolv.conf"
	count_server $CDNS_OUTSIDE4
	podman run -d --pull never --name db --cgroup-parent "$CTR_PARENT" \
		--network "ns:/run/netns/$NS_SRV" --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
		-v /usr:/usr:ro $CTR_IMAGE /usr/bin/python3 -m http.server $CDNS_DB_PORT \
		--bind $SRV4 >/dev/null || fail "podman run db failed"
	n=0
	until in_ns "$NS_SRV" curl -sf "http://$SRV4:$CDNS_DB_PORT/" >/dev/null; do
		n=$((n + 1))
		[ $n -gt 50 ] && fail "the db service did not start"
		sleep 0.2
	done
}

# cdns_http CONTAINER NAME: fetch http://NAME:DB_PORT/ inside the container: "200" or the error.
cdns_http() {
	podman exec "$1" /usr/bin/python3 -c '
import sys, urllib.request
try:
    print(urllib.request.urlopen(f"http://{sys.argv[1]}:{sys.argv[2]}/", timeout=3).status)
except Exception as e:
    print("failed", e)
' "$2" $CDNS_DB_PORT
}

# cdns_runtime_up: the world, the runtime's resolver and db, the policies, and the agent
# registered by the hook with runtime_network true, reaching db by name.
cdns_runtime_up() {
	cdns_up
	cdns_resolver_up
	# Nothing listed: db's address (SRV4) is reachable only through the runtime's network.
	policy rt '{"network_mode": "allowlist", "allowed_hosts": [], "runtime_network": true}'
	policy nort '{"network_mode": "allowlist", "allowed_hosts": []}'
	log "the agent, registered by the hook with runtime_network true, reaches db by name"
	cdns_run agent --annotation io.bfbpf.policy=rt -- /bin/sleep 1000
	cdns_dig_wait agent db "NOERROR $SRV4"
	[ "$(cdns_http agent db)" = 200 ] || fail "the agent did not reach db by name"
}

test_container_dns_runtime_network() {
	cdns_runtime_up
	log "without runtime_network, db's address is closed"
	expect_refused podman run --rm --pull never --network "ns:/run/netns/$NS_SBX" \
		--cgroup-parent "$CTR_PARENT" --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
		-v /usr:/usr:ro --annotation io.bfbpf.policy=nort $CTR_IMAGE \
		/usr/bin/curl -sf --max-time 3 "http://$SRV4:$CDNS_DB_PORT/"
	[ "$(cdns_dig agent db.dns.podman)" = "NOERROR $SRV4" ] || fail "the search domain's name did not answer"
	log "names whose answers lie outside the netns's subnets: refused"
	[ "$(cdns_dig agent evil)" = REFUSED ] || fail "evil (outside the subnet) was not refused"
	[ "$(cdns_dig agent evil.dns.podman)" = REFUSED ] || fail "evil.dns.podman was not refused"
	log "a dotted name outside the search domains is not forwarded at all"
	[ "$(cdns_dig agent evil.test)" = REFUSED ] || fail "evil.test was not refused"
	cdns_connect agent evil $CTR_PORT | grep -q "^unresolved" || fail "evil resolved"
	log "the outside address is not allowed either (nothing learned it)"
	cdns_connect agent $CDNS_OUTSIDE4 $CTR_PORT | grep -q "^refused" || fail "the outside host was reached"
	[ "$(reached $CDNS_OUTSIDE4)" -eq 0 ] || fail "the outside host got $(reached $CDNS_OUTSIDE4) connections"
	status_json "$CASEDIR/rt.json"
	json_check "$CASEDIR/rt.json" "[s for s in d['sandboxes'] if s['policy'].get('runtime_network')
		and s['dns']['more']['forwarded'] >= 4 and s['dns']['more']['forward_refused'] >= 1]" ||
		fail "status does not count the forwarded queries"
	expect_status 0 bfs verify --container agent --runtime podman
}

test_container_dns_runtime_network_off() {
	cdns_runtime_up
	log "the daemon restarts: what the runtime's resolver answered stays allowed"
	daemon_stop "$DAEMON_PID"
	ctr_daemon_start --dns-server "127.0.0.1:$DNS_PORT" --accept-vsock
	daemon_wait
	[ "$(cdns_http agent $SRV4)" = 200 ] || fail "db's address was lost in the restart"
	expect_status 0 bfs verify --container agent --runtime podman
	log "runtime_network false: db is refused and no longer reachable"
	bf_ok update --container agent --runtime podman --policy "$CASEDIR/policies/nort.json"
	[ "$(cdns_dig agent db)" = REFUSED ] || fail "db answered without runtime_network"
	cdns_http agent $SRV4 | grep -q "^failed" || fail "db's address stayed allowed"
	[ "$(reached $CDNS_OUTSIDE4)" -eq 0 ] || fail "the outside host got $(reached $CDNS_OUTSIDE4) connections"
}

test_container_dns_runtime_network_bad() {
	world_up
	ctr_daemon_up
	policy good '{"network_mode": "allowlist", "allowed_hosts": ["198.18.0.2:7000"]}'
	attach "$CG" --policy "$CASEDIR/policies/good.json"
	local bad
	for bad in '"yes"' 1 null; do
		echo "{\"network_mode\": \"allowlist\", \"runtime_network\": $bad}" >"$CASEDIR/bad.json"
		expect_status 2 bfs update --cgroup "$CG" --policy "$CASEDIR/bad.json"
		grep -q "runtime_network must be true or false" "$CASEDIR/last.err" ||
			fail "the error does not say what is wrong"
	done
	echo '{"network_mode": "no-network", "runtime_network": true}' >"$CASEDIR/bad.json"
	expect_status 2 bfs update --cgroup "$CG" --policy "$CASEDIR/bad.json"
	grep -q "runtime_network has no effect in no-network mode" "$CASEDIR/last.err" ||
		fail "the error does not say what is wrong"
	log "nothing lost: the policy in force is the one before"
	status_json "$CASEDIR/status.json" "$CG"
	json_check "$CASEDIR/status.json" "d['sandboxes'][0]['policy']['allowed_hosts'] == ['198.18.0.2:7000']
		and 'runtime_network' not in d['sandboxes'][0]['policy']" || fail "the policy changed"
	expect_ok "$CG" tcp $SRV4 7000
}
