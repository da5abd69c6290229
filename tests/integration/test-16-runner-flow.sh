# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: a sandbox runner's whole flow on a real Podman (runc) or Docker container, driven through
# the Python client's container_* helpers (docs/runner-integration.md): create it with the
# install policy (the OCI hook under a guard, or the guard then a registration), install
# from a package host, relock, verify, run the agent, restart and stop/start it (still
# relocked), switch the model lane, go hermetic; and checkpoint/restore where CRIU works.
# Every step asserts what reached the world: connection counts at the SRV servers.
# Uses test-13's Podman and Docker set-ups (podman_up, docker_up, ctr_daemon_up, policy).

ALL_TESTS+=(runner_flow_hook runner_flow_guard_attach runner_flow_docker runner_flow_checkpoint)

# The Python client package (its parent directory goes on sys.path).
RFLOW_CLIENT=$BFBPF_ROOT/clients/python/src/bfbpf_client

# The world's hosts, on SRV, each an HTTP server on RFLOW_PORT that counts connections.
# rflow_hosts NET: the hosts in NET.0/24 (Podman's containers are in SBX, on SRV's eth0;
# Docker's in test-13's holder, on SRV's eth1).
rflow_hosts() {
	RFLOW_PKG=$1.10     # the package host: allowed by the install policy only
	RFLOW_TASK=$1.11    # the agent's task API: allowed by the relocked policy
	RFLOW_MODEL_A=$1.12 # the first model lane
	RFLOW_MODEL_B=$1.13 # the model lane after the switch
	RFLOW_DENIED=$1.14  # in no policy
	RFLOW_HOSTS="$RFLOW_DENIED $RFLOW_PKG $RFLOW_MODEL_A $RFLOW_MODEL_B $RFLOW_TASK"
}
rflow_hosts 198.18.0
RFLOW_PORT=7300
RFLOW_RT=podman # the runtime of the case: podman or docker

# rflow_world DEV: the five hosts on SRV's DEV, their counting HTTP servers, the case's
# policies (after world_up and the runtime's set-up).
rflow_world() {
	local a
	for a in $RFLOW_HOSTS; do
		ip -n "$NS_SRV" addr add $a/24 dev "$1" || fail "cannot add $a"
	done
	: >"$CASEDIR/rflow-reached"
	cat >"$CASEDIR/rflow-server.py" <<'PY'
import http.server, socketserver, sys, threading
out, ready, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
lock = threading.Lock()
class Counting(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    def get_request(self):
        conn, peer = super().get_request()
        with lock, open(out, "a") as f:
            f.write(self.server_address[0] + "\n")
        return conn, peer
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = f"{self.server.server_address[0]} {self.path}\n".encode()
        if self.path == "/pkg.tar":
            body = b"package-bytes " * 4096
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
servers = [Counting((a, port), Handler) for a in sys.argv[4:]]
open(ready, "w").close()
threads = [threading.Thread(target=s.serve_forever) for s in servers]
[t.start() for t in threads]
[t.join() for t in threads]
PY
	in_ns "$NS_SRV" "$PYTHON" "$CASEDIR/rflow-server.py" "$CASEDIR/rflow-reached" \
		"$CASEDIR/rflow-ready" $RFLOW_PORT $RFLOW_HOSTS >>"$CASEDIR/rflow-server.log" 2>&1 &
	local pid=$!
	defer "kill -KILL $pid; wait $pid"
	wait_for_file "$CASEDIR/rflow-ready" 20 || fail "the counting servers did not start"
	# The container's probe: an HTTP GET of each ADDR (2 s timeout); one line per try
	# ("TAG ADDR ok" / "TAG ADDR errno N"), then "TAG pass-done N"; --every S repeats.
	cat >"$CASEDIR/rflow-probe.py" <<'PY'
import sys, time, urllib.request
args, every, tag, port, n = sys.argv[1:], None, "probe", 7300, 0
while args and args[0].startswith("--"):
    opt, val, args = args[0], args[1], args[2:]
    if opt == "--every": every = float(val)
    if opt == "--tag": tag = val
    if opt == "--port": port = int(val)
while True:
    n += 1
    for addr in args:
        try:
            with urllib.request.urlopen(f"http://{addr}:{port}/agent", timeout=2) as r:
                r.read()
            print(f"{tag} {addr} ok", flush=True)
        except OSError as e:
            err = getattr(e, "reason", e)
            print(f"{tag} {addr} errno {getattr(err, 'errno', None)}", flush=True)
    print(f"{tag} pass-done {n}", flush=True)
    if every is None:
        break
    time.sleep(every)
if tag == "entry":
    time.sleep(1000000)
PY
	cat >"$CASEDIR/rflow-client.py" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
from bfbpf_client import BfbpfError, Client, load_policy
sock, runtime, op, name = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
client = Client(sock)
try:
    if op in ("attach", "update"):
        reply = getattr(client, "container_" + op)(name, load_policy(sys.argv[6]), runtime=runtime)
        assert reply["container"]["name"] == name and len(reply["container"]["id"]) == 64, reply
    elif op == "verify":
        reply = client.container_verify(name, runtime=runtime, require_complete=True)
        assert reply["lockdown_complete"] is True and reply["checks"], reply
    else:
        raise SystemExit(f"unknown op {op}")
except BfbpfError as e:
    print(f"{op} {name}: {e.code}: {e.message}")
    sys.exit(1)
print(json.dumps(reply))
PY
	policy rflow-install "{\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"$RFLOW_PKG:$RFLOW_PORT\"], \"model_endpoints\": [\"$RFLOW_MODEL_A:$RFLOW_PORT\"]}"
	policy rflow-agent "{\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"$RFLOW_TASK:$RFLOW_PORT\"], \"model_endpoints\": [\"$RFLOW_MODEL_A:$RFLOW_PORT\"]}"
	policy rflow-agent-b "{\"network_mode\": \"allowlist\", \"allowed_hosts\": [\"$RFLOW_TASK:$RFLOW_PORT\"], \"model_endpoints\": [\"$RFLOW_MODEL_B:$RFLOW_PORT\"]}"
	policy rflow-hermetic '{"network_mode": "no-network", "allow_model_endpoint": false}'
}

# rflow_client OP NAME [POLICY-NAME]: the Python client's container_OP on NAME.
rflow_client() {
	local pol=()
	[ $# -gt 2 ] && pol=("$CASEDIR/policies/$3.json")
	log "client: container_$1 $2 ${3:-}"
	"$PYTHON" "$CASEDIR/rflow-client.py" "$RFLOW_CLIENT" "$SOCK" $RFLOW_RT "$1" "$2" "${pol[@]}" \
		>"$CASEDIR/client.out" 2>&1 || {
		cat "$CASEDIR/client.out"
		fail "container_$1 $2 failed"
	}
}

# rflow_counts: "DENIED PKG MODEL_A MODEL_B TASK" connection counts, in that order.
rflow_counts() {
	local a out=
	for a in $RFLOW_HOSTS; do out="$out $(grep -c "^$a\$" "$CASEDIR/rflow-reached")"; done
	echo "${out# }"
}

# rflow_expect "D P MA MB T" WHAT: the world's counts are exactly these.
rflow_expect() {
	local got
	got=$(rflow_counts)
	log "reached (denied pkg model-a model-b task): $got, expected $1 ($2)"
	[ "$got" = "$1" ] || fail "$2: the world saw '$got' connections, expected '$1'"
}

# rflow_run NAME [RUN-ARGS...]: a detached container under the case's cgroup (guarded),
# in SBX's netns (Podman) or the holder's (Docker), in its own cgroup namespace, NET_RAW
# dropped; its entrypoint probes every host once at each start.
rflow_run() {
	local name=$1 net=(--network "ns:/run/netns/$NS_SBX" --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
	shift
	[ $RFLOW_RT = docker ] && net=(--network container:holder)
	$RFLOW_RT run -d --pull never --name "$name" --cgroup-parent "$CTR_PARENT" "${net[@]}" \
		--cgroupns private --cap-drop NET_RAW -v /usr:/usr:ro -v "$CASEDIR:/case:ro" "$@" \
		$CTR_IMAGE /usr/bin/python3 /case/rflow-probe.py --tag entry --port $RFLOW_PORT \
		$RFLOW_HOSTS >/dev/null || fail "$RFLOW_RT run $name failed"
}

# rflow_entry_passes NAME N: until the entrypoint finished N passes in all (one per
# start: Podman keeps a container's log across its starts).
rflow_entry_passes() {
	local n=0
	until [ "$($RFLOW_RT logs "$1" 2>/dev/null | grep -c '^entry pass-done')" -ge "$2" ]; do
		n=$((n + 1))
		[ $n -gt 300 ] && {
			$RFLOW_RT logs "$1"
			fail "the entrypoint of $1 did not finish pass $2"
		}
		sleep 0.1
	done
}

# rflow_agent NAME: the agent's round, by exec (it joins the container's cgroup).
rflow_agent() {
	$RFLOW_RT exec "$1" /usr/bin/python3 /case/rflow-probe.py --tag agent --port $RFLOW_PORT \
		$RFLOW_HOSTS >"$CASEDIR/agent.out" 2>&1
	cat "$CASEDIR/agent.out"
	grep -q "^agent pass-done 1" "$CASEDIR/agent.out" || fail "the agent did not run in $1"
}

# rflow_up [docker]: world, Podman (test-13's, with this case's hook) or Docker (test-13's
# dockerd, with bfbpf's runtime wrapper), the hosts, the daemon, a guard on the containers'
# parent.
rflow_up() {
	world_up
	if [ "${1:-podman}" = docker ]; then
		RFLOW_RT=docker
		rflow_hosts 198.18.2
		docker_up
		rflow_world eth1
	else
		podman_up
		rflow_world eth0
	fi
	ctr_daemon_up --accept-vsock
	bf_ok guard --cgroup "$CG"
	defer "bfs unguard --cgroup '$CG'"
}

# rflow_entry_ok NAME PASS ADDR: 1 if the entrypoint's PASS-th pass (its PASS-th start)
# reached ADDR, else 0.
rflow_entry_ok() {
	$RFLOW_RT logs "$1" 2>/dev/null | awk -v pass="$2" -v addr="$3" '
		/^entry pass-done/ { n++; next }
		n == pass - 1 && $1 == "entry" && $2 == addr && $3 == "ok" { ok = 1 }
		END { print ok + 0 }'
}

# rflow_start_check NAME PASS STRICT: after a (re)start, the entrypoint's first connects:
# every host outside the relocked policy refused. STRICT (the hook registered it before
# its first instruction): the task API and the model lane reached at once. Without a hook
# the daemon re-applies the record when it sees the new cgroup, a few milliseconds late,
# and the guard holds the container closed until then: those two may be refused, never
# the others open. Sets RF_MA and RF_T (the expected counts) from what the entry reached.
rflow_start_check() {
	local name=$1 pass=$2 strict=$3 ma t
	rflow_entry_passes "$name" "$pass"
	ma=$(rflow_entry_ok "$name" "$pass" $RFLOW_MODEL_A)
	t=$(rflow_entry_ok "$name" "$pass" $RFLOW_TASK)
	if [ "$strict" = 1 ] && [ "$ma$t" != 11 ]; then
		$RFLOW_RT logs "$name"
		fail "start $pass: the hook's registration was not in force at the first instruction"
	fi
	RF_MA=$((RF_MA + ma)) RF_T=$((RF_T + t))
	rflow_expect "0 2 $RF_MA 0 $RF_T" "start $pass of $name"
}

# After the install: relock, verify, the agent, restarts, the lane switch, hermetic.
# The counts before it: "0 2 1 0 0" (install fetched twice, the model lane once).
# STRICT: see rflow_start_check.
rflow_after_install() {
	local name=$1 strict=$2
	rflow_client update "$name" rflow-agent
	rflow_client verify "$name"
	log "the agent: the task API and the model lane; the package host is closed now"
	rflow_agent "$name"
	rflow_expect "0 2 2 0 1" "the agent after the relock"
	RF_MA=2 RF_T=1
	log "$RFLOW_RT restart, then stop/start: the entrypoint's first connects are relocked"
	$RFLOW_RT restart -t 0 "$name" >/dev/null || fail "restart failed"
	rflow_start_check "$name" 2 "$strict"
	$RFLOW_RT stop -t 0 "$name" >/dev/null || fail "stop failed"
	$RFLOW_RT start "$name" >/dev/null || fail "start failed"
	rflow_start_check "$name" 3 "$strict"
	rflow_client verify "$name"
	rflow_agent "$name"
	RF_MA=$((RF_MA + 1)) RF_T=$((RF_T + 1))
	rflow_expect "0 2 $RF_MA 0 $RF_T" "the agent after the restarts"
	log "switch the model lane: the old one closes, the new one opens"
	rflow_client update "$name" rflow-agent-b
	rflow_agent "$name"
	RF_T=$((RF_T + 1))
	rflow_expect "0 2 $RF_MA 1 $RF_T" "after the lane switch"
	log "hermetic: nothing reaches anything, and a restart keeps it so"
	rflow_client update "$name" rflow-hermetic
	rflow_client verify "$name"
	rflow_agent "$name"
	rflow_expect "0 2 $RF_MA 1 $RF_T" "hermetic"
	$RFLOW_RT restart -t 0 "$name" >/dev/null || fail "restart failed"
	rflow_entry_passes "$name" 4
	rflow_agent "$name"
	rflow_expect "0 2 $RF_MA 1 $RF_T" "hermetic after a restart"
	status_json "$CASEDIR/status.json"
	json_check "$CASEDIR/status.json" "[s for s in d['sandboxes'] if s.get('container', {}).get('name') == '$name'
		and s['policy']['network_mode'] == 'no-network']" || fail "status does not show the hermetic container"
}

# rflow_install NAME: the install step, a real fetch with curl from the package host.
rflow_install() {
	log "install: curl fetches a package from the package host"
	$RFLOW_RT exec "$1" /usr/bin/curl -fsS --max-time 5 -o /tmp/pkg.tar \
		"http://$RFLOW_PKG:$RFLOW_PORT/pkg.tar" || fail "the install could not fetch"
	[ "$($RFLOW_RT exec "$1" /usr/bin/wc -c /tmp/pkg.tar | cut -d' ' -f1)" -eq 57344 ] ||
		fail "the package is not complete"
}

test_runner_flow_hook() {
	rflow_up
	log "create with the install policy (the hook, io.bfbpf.policy=rflow-install), under a guard"
	rflow_run web --annotation io.bfbpf.policy=rflow-install
	rflow_entry_passes web 1
	podman logs web
	rflow_expect "0 1 1 0 0" "the first start under the install policy"
	rflow_install web
	rflow_expect "0 2 1 0 0" "the install"
	rflow_after_install web 1
}

# Without a hook: the guard keeps the container closed from its first instruction until
# the runner registers it (container_attach): a window that is closed, not open.
test_runner_flow_guard_attach() {
	rflow_up
	log "create without a hook: the guard holds the entrypoint's first connects"
	rflow_run web
	rflow_entry_passes web 1
	podman logs web
	grep -q "^entry $RFLOW_MODEL_A errno 1\$" <(podman logs web) || fail "the guard did not refuse the entrypoint"
	rflow_expect "0 0 0 0 0" "before the registration"
	rflow_client attach web rflow-install
	rflow_agent web
	rflow_expect "0 1 1 0 0" "the agent's round under the install policy"
	rflow_install web
	rflow_expect "0 2 1 0 0" "the install"
	rflow_after_install web 0
}

# Docker: the runtime wrapper adds the hook to the bundle; BFBPF_POLICY selects the policy.
test_runner_flow_docker() {
	rflow_up docker
	log "create with the install policy (--runtime bfbpf -e BFBPF_POLICY=rflow-install), under a guard"
	rflow_run web --runtime bfbpf -e BFBPF_POLICY=rflow-install
	rflow_entry_passes web 1
	docker logs web
	rflow_expect "0 1 1 0 0" "the first start under the install policy"
	rflow_install web
	rflow_expect "0 2 1 0 0" "the install"
	rflow_after_install web 1
}

# Checkpoint/restore (CRIU): the restored process runs on in a new cgroup, relocked.
test_runner_flow_checkpoint() {
	command -v criu >/dev/null || skip "criu is not installed"
	criu check >"$CASEDIR/criu-check.txt" 2>&1 ||
		skip "criu check fails on this kernel: $(grep -m1 Error "$CASEDIR/criu-check.txt")"
	rflow_up
	log "a container whose entrypoint probes every 0.3 s, installed, relocked"
	# CRIU dumps every mount of the container: /usr without its submounts (bind, not
	# rbind), and only the probe of the case's directory (which holds Podman's storage).
	podman run -d --pull never --name web --cgroup-parent "$CTR_PARENT" \
		--network "ns:/run/netns/$NS_SBX" --cgroupns private --cap-drop NET_RAW --ulimit nofile=1024:1024 \
		--ulimit nproc=1024:1024 -v /usr:/usr:ro,bind -v "$CASEDIR/rflow-probe.py:/probe.py:ro" \
		--annotation io.bfbpf.policy=rflow-install $CTR_IMAGE /usr/bin/python3 /probe.py \
		--tag loop --every 0.3 --port $RFLOW_PORT $RFLOW_DENIED $RFLOW_PKG $RFLOW_MODEL_A \
		>/dev/null || fail "podman run failed"
	rflow_entry_passes_loop web 1
	rflow_client update web rflow-agent
	local before after
	before=$(rflow_counts)
	log "checkpoint, restore"
	podman container checkpoint web >"$CASEDIR/ckpt.out" 2>&1 || {
		cat "$CASEDIR/ckpt.out"
		find "$CASEDIR/podman/root" -name dump.log -exec grep -h -B3 -A3 Error {} + | tail -30
		fail "podman container checkpoint failed"
	}
	podman container restore web >"$CASEDIR/restore.out" 2>&1 || {
		cat "$CASEDIR/restore.out"
		fail "podman container restore failed"
	}
	local n
	n=$(podman logs web | grep -c '^loop pass-done')
	rflow_entry_passes_loop web $((n + 3))
	after=$(rflow_counts)
	log "before the checkpoint: $before; after the restore: $after"
	# shellcheck disable=SC2206 # the counts are five numbers
	local b=($before) c=($after)
	[ "${c[0]}" -eq 0 ] || fail "the denied host was reached"
	[ "${c[1]}" -eq "${b[1]}" ] || fail "the restored container reached the package host: not relocked"
	[ "${c[2]}" -gt "${b[2]}" ] || fail "the restored container did not reach the model lane"
}

rflow_entry_passes_loop() {
	local n=0
	until [ "$(podman logs "$1" 2>/dev/null | grep -c '^loop pass-done')" -ge "$2" ]; do
		n=$((n + 1))
		[ $n -gt 300 ] && fail "the loop of $1 did not reach pass $2"
		sleep 0.1
	done
}
