# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: real containers (Podman with runc, Docker's dockerd started here): the OCI hook
# confines a container before its first instruction, the daemon's record of its CURRENT
# policy follows it across restarts and daemon restarts, DNS answers inside it, and no
# target may be the cgroup2 root. Every runtime keeps its state under the case's
# directory; images are an empty skeleton with the host's /usr mounted read-only.

ALL_TESTS+=(container_hook_first_connect container_relock_restarts container_hook_daemon_down
	container_daemon_restart container_dns container_root_refused container_docker)

# shellcheck source=tests/integration/ctr-runtime.sh
. "$IT_DIR/ctr-runtime.sh"

CTR_IMAGE=localhost/bfbpf-it:latest
# Addresses the containers try: ALLOWED4 is in every policy, DENIED_WORLD4 only in "install".
CTR_ALLOWED4=198.18.0.2
CTR_DENIED4=198.18.0.3
CTR_PORT=7100

# ------------------------------------------------------------ the world's counter

# count_server ADDR...: a TCP server in SRV on CTR_PORT of each ADDR that writes one line
# (the address) per accepted connection to $CASEDIR/reached: what reached the world.
count_server() {
	: >"$CASEDIR/reached"
	local ready=$CASEDIR/count-ready
	in_ns "$NS_SRV" "$PYTHON" -c '
import os, socket, sys, threading
out, ready, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
def serve(addr):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port)); s.listen(512); return s
socks = [(a, serve(a)) for a in sys.argv[4:]]
open(ready, "w").close()
def loop(addr, s):
    while True:
        c, _ = s.accept()
        with open(out, "a") as f: f.write(addr + "\n")
        c.close()
ts = [threading.Thread(target=loop, args=x, daemon=True) for x in socks]
[t.start() for t in ts]; [t.join() for t in ts]
' "$CASEDIR/reached" "$ready" $CTR_PORT "$@" >>"$CASEDIR/count.log" 2>&1 &
	local pid=$!
	defer "kill -KILL $pid; wait $pid"
	wait_for_file "$ready" 20 || fail "the counting server did not start"
}

reached() { grep -c "^$1\$" "$CASEDIR/reached"; }

# wait_reached ADDR N: until ADDR was reached N times (the allowed address is tried last,
# so once it counts, the denied one was tried before it).
wait_reached() {
	local n=0
	until [ "$(reached "$1")" -ge "$2" ]; do
		n=$((n + 1))
		[ $n -gt 300 ] && fail "$1 was reached $(reached "$1") times, expected $2"
		sleep 0.1
	done
}

# The entrypoint: connect to each ADDR:PORT in order, at once ("loop:ADDR:PORT:S" tries
# for S seconds without pause), then sleep if asked ("sleep").
ctr_entry() {
	cat >"$CASEDIR/entry.py" <<'PY'
import socket, sys, time
for arg in sys.argv[1:]:
    if arg == "sleep":
        time.sleep(1000000)
    if arg == "fail":
        sys.exit(1)
    parts = arg.split(":")
    loop = parts[0] == "loop"
    addr, port = (parts[1], int(parts[2])) if loop else (parts[0], int(parts[1]))
    until = time.monotonic() + (float(parts[3]) if loop else 0)
    tries = ok = 0
    while True:
        tries += 1
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect((addr, port)); ok += 1
        except OSError as e:
            err = e.errno
        s.close()
        if time.monotonic() >= until:
            break
    print(f"{addr}:{port} tries {tries} connected {ok}", flush=True)
PY
}

# expect_refused CMD...: CMD fails (the runtime's status varies with the hook's message:
# Podman says 127 when it reads "No such file"); stdout/stderr in $CASEDIR/last.{out,err}.
expect_refused() {
	"$@" >"$CASEDIR/last.out" 2>"$CASEDIR/last.err"
	local rc=$?
	echo "\$ $* -> $rc"
	sed 's/^/  err: /' "$CASEDIR/last.err"
	[ $rc -ne 0 ] || fail "expected $* to fail"
}

# policy NAME JSON: $CASEDIR/policies/NAME.json (the daemon's --policy-dir).
policy() {
	mkdir -p "$CASEDIR/policies"
	echo "$2" >"$CASEDIR/policies/$1.json"
}

ctr_policies() {
	policy install "{\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"$CTR_ALLOWED4:$CTR_PORT\", \"$CTR_DENIED4:$CTR_PORT\"]}"
	policy relocked "{\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"$CTR_ALLOWED4:$CTR_PORT\"]}"
}

# ctr_daemon_up [ARGS...]: the case's daemon with the case's policy directory.
ctr_daemon_up() {
	[ -x "$BFBPF" ] || fail "$BFBPF is missing (run make)"
	defer "rm -rf '$PINS'"
	defer "rm -f '$SOCK'"
	ctr_daemon_start "$@"
	defer "detach_all"
	daemon_wait
}

ctr_daemon_start() {
	"$BFBPF" daemon --socket "$SOCK" --bpffs "$PINS" --policy-dir "$CASEDIR/policies" \
		--log-level debug "$@" >>"$CASEDIR/daemon.log" 2>&1 &
	DAEMON_PID=$!
	defer "daemon_stop $DAEMON_PID"
}

# ------------------------------------------------------------------ images

# ctr_skeleton: $CASEDIR/skel.tar, an empty root with the links into /usr.
ctr_skeleton() {
	local d=$CASEDIR/skel
	mkdir -p "$d"/etc "$d"/proc "$d"/dev "$d"/sys "$d"/usr "$d"/tmp "$d"/var "$d"/run "$d"/case "$d"/it
	ln -s usr/bin "$d/bin"
	ln -s usr/sbin "$d/sbin"
	ln -s usr/lib "$d/lib"
	ln -s usr/lib64 "$d/lib64"
	echo 'root:x:0:0:root:/:/bin/sh' >"$d/etc/passwd"
	echo 'root:x:0:' >"$d/etc/group"
	echo 'hosts: files dns' >"$d/etc/nsswitch.conf"
	tar -C "$d" -cf "$CASEDIR/skel.tar" .
}

# v1_remove: runc makes the container's cgroup in every v1 hierarchy too; remove the
# case's part of them (and the run's base once it is empty).
v1_remove() {
	local rel=${CG#"$CGROOT"} mp d
	# shellcheck disable=SC2013 # mount points of cgroup v1 hierarchies have no blanks
	for mp in $(awk '$9 == "cgroup" { print $5 }' /proc/self/mountinfo); do
		[ -d "$mp$rel" ] || continue
		# shellcheck disable=SC2044 # the tests' cgroup paths have no blanks
		for d in $(find "$mp$rel" -depth -type d); do rmdir "$d" 2>/dev/null; done
		rmdir "$(dirname "$mp$rel")" 2>/dev/null
	done
}

# ------------------------------------------------------------------ podman

# podman_up: Podman with runc and cgroupfs, storage, hooks and temp under the case's
# directory (CONTAINERS_CONF and CONTAINERS_STORAGE_CONF, which bfbpf's own
# `podman container inspect` reads too), the hook of this case, the image.
podman_up() {
	command -v podman >/dev/null || skip "podman is not installed"
	command -v runc >/dev/null || skip "runc is not installed"
	ctrenv_podman_conf "$CASEDIR/podman" "$SOCK" || fail "cannot write podman's configuration"
	defer "v1_remove"
	defer "podman_down"
	ctr_skeleton
	podman import -q "$CASEDIR/skel.tar" $CTR_IMAGE >/dev/null || fail "podman import failed"
	ctr_entry
	ctr_policies
	CTR_PARENT=${CG#"$CGROOT"}
}

podman_down() {
	podman rm -a -f -t 0 >/dev/null 2>&1
	podman rmi -a -f >/dev/null 2>&1
	rm -rf "$CASEDIR/podman"
}

# prun NAME POLICY [PODMAN-RUN-ARGS...] -- ENTRY-ARGS...: a detached container in SBX's
# netns under the case's cgroup, with io.bfbpf.policy=POLICY ("" for none).
prun() {
	local name=$1 pol=$2 args=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	[ -n "$pol" ] && args+=(--annotation "io.bfbpf.policy=$pol")
	podman run --pull never --name "$name" --cgroup-parent "$CTR_PARENT" \
		--network "ns:/run/netns/$NS_SBX" --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
		-v /usr:/usr:ro -v "$CASEDIR:/case:ro" "${args[@]}" $CTR_IMAGE \
		/usr/bin/python3 /case/entry.py "$@"
}

# ------------------------------------------------------------------- cases

test_container_hook_first_connect() {
	world_up
	count_server $CTR_ALLOWED4 $CTR_DENIED4
	podman_up
	ctr_daemon_up
	log "an entrypoint that connects at once, in a loop, to a denied world address"
	prun first relocked --rm -- "loop:$CTR_DENIED4:$CTR_PORT:1" "$CTR_ALLOWED4:$CTR_PORT" \
		>"$CASEDIR/first.out" 2>&1 || { cat "$CASEDIR/first.out"; fail "podman run failed"; }
	cat "$CASEDIR/first.out"
	grep -q "^$CTR_DENIED4:$CTR_PORT tries [1-9]" "$CASEDIR/first.out" || fail "the entrypoint did not try"
	[ "$(reached $CTR_DENIED4)" -eq 0 ] || fail "$(reached $CTR_DENIED4) connections reached the denied address"
	[ "$(reached $CTR_ALLOWED4)" -eq 1 ] || fail "the allowed address was not reached"
}

test_container_relock_restarts() {
	world_up
	count_server $CTR_ALLOWED4 $CTR_DENIED4
	podman_up
	ctr_daemon_up
	log "installed with the install policy: both addresses reach the world"
	prun web install -d -- "$CTR_DENIED4:$CTR_PORT" "$CTR_ALLOWED4:$CTR_PORT" sleep >/dev/null ||
		fail "podman run failed"
	wait_reached $CTR_ALLOWED4 1
	# The server may log the two accepts in either order: wait for the denied one too.
	wait_reached $CTR_DENIED4 1
	status_json "$CASEDIR/hooked.json"
	json_check "$CASEDIR/hooked.json" "[s for s in d['sandboxes'] if s.get('container', {}).get('runtime') == 'podman'
		and s['policy']['allowed_hosts'] == ['$CTR_ALLOWED4:$CTR_PORT', '$CTR_DENIED4:$CTR_PORT']]" ||
		fail "the hook did not register the container with the install policy"
	log "relock by container name"
	bf_ok update --container web --runtime podman --policy "$CASEDIR/policies/relocked.json"
	status_json "$CASEDIR/status.json"
	json_check "$CASEDIR/status.json" "[s for s in d['sandboxes'] if s.get('container', {}).get('name') == 'web'
		and len(s['container']['id']) == 64 and s['container']['runtime'] == 'podman']" ||
		fail "status does not name the container"
	log "restart, stop/start: still relocked"
	podman restart -t 0 web >/dev/null || fail "podman restart failed"
	wait_reached $CTR_ALLOWED4 2
	podman stop -t 0 web >/dev/null || fail "podman stop failed"
	podman start web >/dev/null || fail "podman start failed"
	wait_reached $CTR_ALLOWED4 3
	[ "$(reached $CTR_DENIED4)" -eq 1 ] || fail "a restart came back with the install policy"
	bfs log --json >"$CASEDIR/log.json"
	grep -q '"cgroup_gone"' "$CASEDIR/log.json" || fail "no cgroup_gone event"
	bfs metrics | grep -E '^bfbpf_(cgroups_gone|reapplied)_total' || fail "no counters"
	log "detach forgets the container"
	bf_ok detach --container web --runtime podman
	status_json "$CASEDIR/status2.json"
	json_check "$CASEDIR/status2.json" "not d['sandboxes']" || fail "still listed"
	[ -z "$(ls "$(dirname "$SOCK")/state/containers/")" ] || fail "the record stayed"
}

test_container_hook_daemon_down() {
	world_up
	count_server $CTR_ALLOWED4 $CTR_DENIED4
	podman_up
	log "no daemon on $SOCK: the hook refuses the start"
	expect_refused prun down relocked --rm -- "loop:$CTR_DENIED4:$CTR_PORT:1" "$CTR_ALLOWED4:$CTR_PORT"
	grep -q "daemon is unreachable" "$CASEDIR/last.err" || fail "the error does not say why"
	if [ "$(reached $CTR_DENIED4)" -ne 0 ] || [ "$(reached $CTR_ALLOWED4)" -ne 0 ]; then
		fail "the container ran"
	fi
	log "a policy file that does not parse: refused too"
	echo '{"network_mode": "allowlist", "alowed_hosts": []}' >"$CASEDIR/bad.json"
	ctr_daemon_up
	expect_refused prun bad "$CASEDIR/bad.json" --rm -- "$CTR_ALLOWED4:$CTR_PORT"
	grep -q "does not parse" "$CASEDIR/last.err" || fail "the error does not say why"
	[ "$(reached $CTR_ALLOWED4)" -eq 0 ] || fail "the container ran"
}

test_container_daemon_restart() {
	world_up
	count_server $CTR_ALLOWED4 $CTR_DENIED4
	podman_up
	ctr_daemon_up
	prun web install -d -- "$CTR_DENIED4:$CTR_PORT" "$CTR_ALLOWED4:$CTR_PORT" sleep >/dev/null ||
		fail "podman run failed"
	wait_reached $CTR_ALLOWED4 1
	log "relock with the Python client's container helpers"
	"$PYTHON" - "$SOCK" "$CASEDIR/policies/relocked.json" "$IT_DIR/../../clients/python/src" <<'PY' || fail "container_update failed"
import sys
sys.path.insert(0, sys.argv[3])
from bfbpf_client import Client, load_policy
c = Client(sys.argv[1])
reply = c.container_update("web", load_policy(sys.argv[2]), runtime="podman")
assert reply["container"]["name"] == "web", reply
assert c.container_verify("web", runtime="podman")["checks"], "no checks"
PY
	log "the daemon restarts; the container restarts after it"
	daemon_stop "$DAEMON_PID"
	ctr_daemon_start
	daemon_wait
	podman restart -t 0 web >/dev/null || fail "podman restart failed"
	wait_reached $CTR_ALLOWED4 2
	[ "$(reached $CTR_DENIED4)" -eq 1 ] || fail "the restart after a daemon restart was not relocked"
	status_json "$CASEDIR/status.json"
	json_check "$CASEDIR/status.json" "[s for s in d['sandboxes'] if s.get('container', {}).get('name') == 'web']" ||
		fail "status lost the container"
	bf_ok status --container web --runtime podman
	log "a stopped container has no cgroup; its detach forgets the record"
	podman stop -t 0 web >/dev/null || fail "podman stop failed"
	bf_ok detach --container web --runtime podman
	[ -z "$(ls "$(dirname "$SOCK")/state/containers/")" ] || fail "the record stayed"
	podman start web >/dev/null || fail "podman start failed"
	wait_reached $CTR_ALLOWED4 3
	[ "$(reached $CTR_DENIED4)" -eq 2 ] || fail "a forgotten container got a policy"
}

test_container_dns() {
	world_up
	dns_up
	echo "$CTR_ALLOWED4 allowed.test" >"$CASEDIR/hosts"
	echo "$CTR_DENIED4 denied.test" >>"$CASEDIR/hosts"
	kill -HUP "$DNS_PID"
	podman_up
	policy named '{"network_mode": "allowlist", "allowed_hosts": ["allowed.test"]}'
	ctr_daemon_up --dns-server "127.0.0.1:$DNS_PORT"
	# Any nameserver: port 53 is redirected to the sandbox's responder in its netns.
	echo "nameserver $CTR_DENIED4" >"$CASEDIR/resolv.conf"
	echo "options timeout:2 attempts:1" >>"$CASEDIR/resolv.conf"
	podman run --rm --pull never --cgroup-parent "$CTR_PARENT" --network "ns:/run/netns/$NS_SBX" \
		--ulimit nofile=1024:1024 --ulimit nproc=1024:1024 -v /usr:/usr:ro \
		-v "$CASEDIR/resolv.conf:/etc/resolv.conf:ro" --annotation io.bfbpf.policy=named \
		$CTR_IMAGE /bin/sh -c 'getent hosts allowed.test; echo "allowed $?"; getent hosts denied.test; echo "denied $?"' \
		>"$CASEDIR/dns.out" 2>&1
	cat "$CASEDIR/dns.out"
	grep -q "^$CTR_ALLOWED4 .*allowed.test" "$CASEDIR/dns.out" || fail "the allowed name did not answer"
	grep -q "^denied 2" "$CASEDIR/dns.out" || fail "the denied name was not refused"
	grep -q "$CTR_DENIED4" "$CASEDIR/dns.out" && fail "the denied name answered"
	return 0
}

test_container_root_refused() {
	ctr_policies
	ctr_daemon_up
	log "a process in the cgroup2 root: --pid resolves to the mount itself"
	sleep 60 &
	local pid=$!
	defer "kill -KILL $pid"
	echo $pid >"$CGROOT/cgroup.procs" || fail "cannot move a process to the root"
	expect_status 2 bfs attach --pid $pid --mode no-network
	expect_one_stderr_line "cgroup2 root"
	expect_status 2 bfs attach --cgroup "$CGROOT" --mode no-network
	expect_one_stderr_line "cgroup2 root"
	log "the daemon refuses it too (a client that skips the check)"
	ctl_send "{\"op\":\"attach\",\"cgroup\":\"$CGROOT\",\"policy\":{\"network_mode\":\"no-network\"}}" \
		>"$CASEDIR/raw.json"
	json_check "$CASEDIR/raw.json" "d['error']['code'] == 'protected_cgroup'" || fail "the daemon took the root"
	log "nor an ancestor of PID 1's cgroup"
	local one
	one=$(sed -n 's/^0:://p' /proc/1/cgroup)
	if [ "$one" != / ]; then
		expect_status 2 bfs attach --cgroup "$CGROOT$one" --mode no-network
		expect_one_stderr_line "PID 1"
	fi
	expect_status 0 bfs status --json
	json_check "$CASEDIR/last.out" "not d['sandboxes']" || fail "something was attached"
}

# ------------------------------------------------------------------ docker

# docker_up: Debian's dockerd with its own roots and socket, no host networking set-up
# (NOTES.md), bfbpf's runtime wrapper registered as "bfbpf", the image; a holder
# container with a veth to SRV (198.18.2.1 <-> 198.18.2.2/.3): Docker cannot join a
# netns by path, the case's containers join the holder's.
docker_up() {
	command -v dockerd >/dev/null || skip "dockerd is not installed"
	command -v runc >/dev/null || skip "runc is not installed"
	DX=$(mktemp -d /tmp/bfbpf-dk.XXXXXX) # short: containerd's socket paths are bounded
	defer "rm -rf '$DX'"
	ctrenv_dockerd_start "$DX" "$SOCK" "$CASEDIR/dockerd.log" || fail "cannot start dockerd"
	DOCKERD_PID=$CTRENV_DOCKERD
	defer "v1_remove"
	defer "docker_down $DOCKERD_PID"
	local n=0
	until docker version >/dev/null 2>&1; do
		n=$((n + 1))
		[ $n -gt 300 ] && { tail "$CASEDIR/dockerd.log"; fail "dockerd did not start"; }
		kill -0 $DOCKERD_PID 2>/dev/null || { tail "$CASEDIR/dockerd.log"; fail "dockerd exited"; }
		sleep 0.1
	done
	ctr_skeleton
	docker import "$CASEDIR/skel.tar" $CTR_IMAGE >/dev/null || fail "docker import failed"
	ctr_entry
	CTR_PARENT=${CG#"$CGROOT"}
	docker run -d --name holder --network none --cgroup-parent "$CTR_PARENT" \
		-v /usr:/usr:ro $CTR_IMAGE /usr/bin/sleep 1000000 >/dev/null || fail "no holder"
	local pid
	pid=$(docker inspect -f '{{.State.Pid}}' holder)
	ip link add bfdk0 type veth peer name eth1 netns "$NS_SRV" || fail "no veth"
	ip link set bfdk0 netns "$pid"
	nsenter -t "$pid" -n sh -c 'ip link set lo up && ip addr add 198.18.2.1/24 dev bfdk0 && ip link set bfdk0 up' ||
		fail "cannot set up the holder's veth"
	ip -n "$NS_SRV" addr add 198.18.2.2/24 dev eth1
	ip -n "$NS_SRV" addr add 198.18.2.3/24 dev eth1
	ip -n "$NS_SRV" link set eth1 up
}

docker_down() {
	docker ps -aq | xargs -r docker rm -f >/dev/null 2>&1
	kill -TERM "$1" 2>/dev/null
	local n=0
	while kill -0 "$1" 2>/dev/null; do
		n=$((n + 1))
		[ $n -gt 200 ] && kill -KILL "$1"
		sleep 0.05
	done
	wait "$1" 2>/dev/null
	umount -R "$DX/data" "$DX/exec" 2>/dev/null
}

# drun NAME POLICY [DOCKER-RUN-ARGS...] -- ENTRY-ARGS...: with the bfbpf runtime and
# BFBPF_POLICY=POLICY, in the holder's netns, under the case's cgroup.
drun() {
	local name=$1 pol=$2 args=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	docker run --name "$name" --runtime bfbpf -e "BFBPF_POLICY=$pol" \
		--cgroup-parent "$CTR_PARENT" --network container:holder -v /usr:/usr:ro \
		-v "$CASEDIR:/case:ro" "${args[@]}" $CTR_IMAGE /usr/bin/python3 /case/entry.py "$@"
}

test_container_docker() {
	world_up
	CTR_ALLOWED4=198.18.2.2
	CTR_DENIED4=198.18.2.3
	ctr_policies
	docker_up
	count_server $CTR_ALLOWED4 $CTR_DENIED4
	ctr_daemon_up
	log "an entrypoint that connects at once: nothing reaches the denied address"
	drun first relocked --rm -- "loop:$CTR_DENIED4:$CTR_PORT:1" "$CTR_ALLOWED4:$CTR_PORT" \
		>"$CASEDIR/first.out" 2>&1 || { cat "$CASEDIR/first.out"; fail "docker run failed"; }
	cat "$CASEDIR/first.out"
	[ "$(reached $CTR_DENIED4)" -eq 0 ] || fail "$(reached $CTR_DENIED4) connections reached the denied address"
	[ "$(reached $CTR_ALLOWED4)" -eq 1 ] || fail "the allowed address was not reached"
	log "install, relock, then restart, stop/start and a restart policy: still relocked"
	drun web install -d -- "$CTR_DENIED4:$CTR_PORT" "$CTR_ALLOWED4:$CTR_PORT" sleep >/dev/null ||
		fail "docker run failed"
	wait_reached $CTR_ALLOWED4 2
	# The server may log the two accepts in either order: wait for the denied one too.
	wait_reached $CTR_DENIED4 1
	bf_ok update --container web --runtime docker --policy "$CASEDIR/policies/relocked.json"
	docker restart -t 0 web >/dev/null || fail "docker restart failed"
	wait_reached $CTR_ALLOWED4 3
	docker stop -t 0 web >/dev/null || fail "docker stop failed"
	docker start web >/dev/null || fail "docker start failed"
	wait_reached $CTR_ALLOWED4 4
	docker update --restart on-failure:3 web >/dev/null || fail "docker update failed"
	kill -KILL "$(docker inspect -f '{{.State.Pid}}' web)"
	wait_reached $CTR_ALLOWED4 5
	[ "$(reached $CTR_DENIED4)" -eq 1 ] || fail "a restart came back with the install policy"
	status_json "$CASEDIR/status.json"
	json_check "$CASEDIR/status.json" "[s for s in d['sandboxes'] if s.get('container', {}).get('runtime') == 'docker']" ||
		fail "status does not name the container"
	log "the daemon is down: a container that asks for a policy does not start"
	daemon_stop "$DAEMON_PID"
	expect_refused drun down relocked --rm -- "$CTR_ALLOWED4:$CTR_PORT"
	grep -q "daemon is unreachable" "$CASEDIR/last.err" || fail "the error does not say why"
	[ "$(reached $CTR_ALLOWED4)" -eq 5 ] || fail "the container ran"
}
