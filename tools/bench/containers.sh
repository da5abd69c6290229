# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash
# Benchmark 8 of tools/bench/run.sh (sourced by it; uses its TMP, CGB, CG2, ID, PY, BFBPF,
# ROOT, QUICK, record, say, warn, start_daemon, stop_daemon): real containers.
#
#   8a  the time the OCI hook adds to `podman run` (a: no hook, h: annotated) and to
#       `docker run` (a: runc, w: the bfbpf runtime wrapper, h: the wrapper with
#       BFBPF_POLICY), a container that exits at once, variants interleaved;
#   8b  how long a registration takes to be enforced: a container's UDP connect loop
#       notes the first EPERM; `attach --cgroup`, `attach --container`, `update`;
#   8c  under a guard: from the mkdir of the container's cgroup (inotify) to the
#       entrypoint's first connect, which must be refused, Podman and Docker.
#
# Podman keeps its storage under TMP (vfs), dockerd runs as in test-13 (no iptables, no
# bridge, its own roots and socket, stopped by pid); images are an empty skeleton with the
# host's /usr mounted read-only. Containers run under CGB (cgroupfs), with --network none.

# Podman and dockerd set up as the integration tests do (ctrenv_*).
# shellcheck source=tests/integration/ctr-runtime.sh
. "$ROOT/tests/integration/ctr-runtime.sh"

CTRB_DX=
CTRB_DOCKERD=
CTRB_IMAGE=localhost/bfbpf-bench:latest
CTRB_SOCK=
CTRB_WATCH=

ctrb_cleanup() {
	if [ -n "${CONTAINERS_CONF:-}" ] && command -v podman >/dev/null; then
		podman rm -a -f -t 0 >/dev/null 2>&1
		podman rmi -a -f >/dev/null 2>&1
	fi
	[ -n "$CTRB_WATCH" ] && kill "$CTRB_WATCH" 2>/dev/null
	if [ -n "$CTRB_DOCKERD" ]; then
		docker ps -aq 2>/dev/null | xargs -r docker rm -f >/dev/null 2>&1
		kill -TERM "$CTRB_DOCKERD" 2>/dev/null
		for _ in $(seq 200); do kill -0 "$CTRB_DOCKERD" 2>/dev/null || break; sleep 0.05; done
		kill -KILL "$CTRB_DOCKERD" 2>/dev/null
		wait "$CTRB_DOCKERD" 2>/dev/null
		umount -R "$CTRB_DX/data" "$CTRB_DX/exec" 2>/dev/null
		CTRB_DOCKERD=
	fi
	[ -n "$CTRB_DX" ] && rm -rf "$CTRB_DX"
	CTRB_DX=
	# runc also makes each container's cgroup in every v1 hierarchy (hybrid layout)
	local rel=${CGB#"$CG2"} mp
	[ -n "$rel" ] || rel=/nonexistent
	while read -r mp; do
		[ -d "$mp$rel" ] && find "$mp$rel" -depth -type d -exec rmdir {} \; 2>/dev/null
	done < <(awk '$9 == "cgroup" { print $5 }' /proc/self/mountinfo)
	unset CONTAINERS_CONF CONTAINERS_STORAGE_CONF DOCKER_HOST DOCKER_CONFIG
}

ctrb_ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) * 1000 }'; } # T0 T1 (s)

ctrb_podman_up() {
	local d=$TMP/ctr-skel
	mkdir -p "$TMP/ctr-policies" "$TMP/ctr-out"
	ctrenv_podman_conf "$TMP/podman" "$CTRB_SOCK" || return 1
	mkdir -p "$d"/etc "$d"/proc "$d"/dev "$d"/sys "$d"/usr "$d"/tmp "$d"/run "$d"/out "$d"/bench
	ln -sfn usr/bin "$d/bin"
	ln -sfn usr/lib "$d/lib"
	ln -sfn usr/lib64 "$d/lib64"
	echo 'root:x:0:0:root:/:/bin/sh' >"$d/etc/passwd"
	tar -C "$d" -cf "$TMP/ctr-skel.tar" . || return 1
	podman import -q "$TMP/ctr-skel.tar" "$CTRB_IMAGE" >/dev/null
}

ctrb_docker_up() {
	CTRB_DX=$(mktemp -d /tmp/bfbpf-dk.XXXXXX) || return 1 # short: containerd's socket paths
	ctrenv_dockerd_start "$CTRB_DX" "$CTRB_SOCK" "$TMP/dockerd.log" || return 1
	CTRB_DOCKERD=$CTRENV_DOCKERD
	local n=0
	until docker version >/dev/null 2>&1; do
		n=$((n + 1))
		if [ $n -gt 300 ] || ! kill -0 "$CTRB_DOCKERD" 2>/dev/null; then
			warn "dockerd did not start: $(tail -3 "$TMP/dockerd.log")"
			return 1
		fi
		sleep 0.1
	done
	docker import "$TMP/ctr-skel.tar" "$CTRB_IMAGE" >/dev/null
}

# ctrb_run RUNTIME VARIANT PARENT [ARGS-BEFORE-IMAGE...] -- CMD...: one container in the
# foreground, --rm, --network none, under PARENT (relative to the cgroup2 mount).
ctrb_run() {
	local rt=$1 v=$2 parent=$3 args=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	case $rt/$v in
	podman/h) args+=(--annotation io.bfbpf.policy=bench) ;;
	docker/a) args+=(--runtime runc) ;;
	docker/w) args+=(--runtime bfbpf) ;;
	docker/h) args+=(--runtime bfbpf -e BFBPF_POLICY=bench) ;;
	esac
	[ "$rt" = podman ] && args+=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
	"$rt" run --rm --pull never --network none --cgroup-parent "$parent" -v /usr:/usr:ro \
		-v "$TMP/ctr-out:/out" -v "$ROOT/tools/bench:/bench:ro" "${args[@]}" "$CTRB_IMAGE" "$@"
}

# 8a: each variant's first run is a warm-up, and proves that the hook applies the policy.
ctrb_bench_runs() {
	local rel=${CGB#"$CG2"}/ctr rt v round t0 t1 out variants=()
	for rt in podman docker; do
		variants=(a h)
		[ "$rt" = docker ] && variants=(a w h)
		for v in "${variants[@]}"; do
			out=$(ctrb_run "$rt" "$v" "$rel" -- /usr/bin/python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.connect(("192.0.2.1", 9)); print("open")
except OSError as e:
    print("errno", e.errno)' 2>&1)
			case $v/$out in
			h/"errno 1" | [aw]/"errno 101") ;;
			*)
				warn "$rt $v: the warm-up said '$out' (expected EPERM with the hook's policy, ENETUNREACH without)"
				return 1
				;;
			esac
		done
		for round in $(seq "$CTR_ROUNDS"); do
			for v in $(rotated "$round" "${variants[@]}"); do
				t0=$EPOCHREALTIME
				ctrb_run "$rt" "$v" "$rel" -- /usr/bin/true >/dev/null 2>"$TMP/ctr-run.err" || {
					warn "$rt run ($v) failed: $(tail -2 "$TMP/ctr-run.err")"
					return 1
				}
				t1=$EPOCHREALTIME
				record "{\"bench\":\"ctr-run\",\"runtime\":\"$rt\",\"variant\":\"$v\",\"round\":$round,\"seconds\":$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')}"
				say "   round $round $rt run $v: $(ctrb_ms "$t0" "$t1") ms"
			done
		done
	done
}

# ctrb_wait_outcome FILE ERRNO AFTER: "TIME PREVIOUS" (s, realtime) of the first line of
# FILE with ERRNO later than AFTER (s): the first attempt with that outcome, and the
# attempt before it. Waits up to 10 s.
ctrb_wait_outcome() {
	local file=$1 want=$2 after=$3 t
	for _ in $(seq 1000); do
		t=$(awk -v e="$want" -v a="$after" '$2 == e && $1 / 1e9 > a { printf "%.9f %.9f\n", $1 / 1e9, $3 / 1e9; exit }' "$file")
		[ -n "$t" ] && {
			echo "$t"
			return 0
		}
		sleep 0.01
	done
	return 1
}

# 8b
ctrb_bench_enforce() {
	local rel=${CGB#"$CG2"}/ctr log=$TMP/ctr-out/enf.log pid cg round v t0 t1 te tp cli
	: >"$log"
	podman run -d --name enf --pull never --network none --cgroup-parent "$rel" -v /usr:/usr:ro \
		-v "$TMP/ctr-out:/out" -v "$ROOT/tools/bench:/bench:ro" --ulimit nofile=1024:1024 \
		--ulimit nproc=1024:1024 "$CTRB_IMAGE" /usr/bin/python3 /bench/bench_containers.py loop \
		--out /out/enf.log >/dev/null || return 1
	ctrb_wait_outcome "$log" 101 0 >/dev/null || {
		warn "the loop container did not start"
		return 1
	}
	pid=$(podman inspect -f '{{.State.Pid}}' enf)
	cg=$CG2$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
	cli=(--socket "$CTRB_SOCK")
	for round in $(seq "$CTR_ROUNDS"); do
		for v in $(rotated "$round" cgroup container update); do
			if [ "$v" = update ]; then
				"$BFBPF" attach --cgroup "$cg" --netns "/proc/$pid/ns/net" --mode public "${cli[@]}" >/dev/null || return 1
				sleep 0.05
			fi
			t0=$EPOCHREALTIME
			case $v in
			cgroup) "$BFBPF" attach --cgroup "$cg" --netns "/proc/$pid/ns/net" --mode no-network "${cli[@]}" ;;
			container) "$BFBPF" attach --container enf --runtime podman --mode no-network "${cli[@]}" ;;
			update) "$BFBPF" update --cgroup "$cg" --mode no-network "${cli[@]}" ;;
			esac >/dev/null || return 1
			t1=$EPOCHREALTIME
			read -r te tp < <(ctrb_wait_outcome "$log" 1 "$t0")
			[ -n "$te" ] || {
				warn "$v: no refused connect within 10 s"
				return 1
			}
			record "{\"bench\":\"ctr-enforce\",\"variant\":\"$v\",\"round\":$round,\"call_ms\":$(ctrb_ms "$t0" "$t1"),\"from_call_ms\":$(ctrb_ms "$t0" "$te"),\"from_return_ms\":$(ctrb_ms "$t1" "$te"),\"last_open_from_return_ms\":$(ctrb_ms "$t1" "$tp")}"
			say "   round $round $v: call $(ctrb_ms "$t0" "$t1") ms; from its return, last unrefused $(ctrb_ms "$t1" "$tp") ms, first refused $(ctrb_ms "$t1" "$te") ms"
			t0=$EPOCHREALTIME
			"$BFBPF" detach --cgroup "$cg" "${cli[@]}" >/dev/null || return 1
			ctrb_wait_outcome "$log" 101 "$t0" >/dev/null || return 1
		done
	done
	podman rm -f -t 0 enf >/dev/null
}

# 8c
ctrb_bench_guard() {
	local parent=$CGB/ctr-guard rel mk round rt name start at err
	rel=${parent#"$CG2"}
	mkdir -p "$parent" || return 1
	"$BFBPF" guard --cgroup "$parent" --socket "$CTRB_SOCK" >/dev/null || return 1
	"$PY" "$ROOT/tools/bench/bench_containers.py" watch --dir "$parent" --out "$TMP/ctr-mkdir.log" \
		--seconds 900 &
	CTRB_WATCH=$!
	sleep 0.2
	for round in $(seq "$CTR_ROUNDS"); do
		for rt in $(rotated "$round" podman docker); do
			rm -f "$TMP/ctr-cid" "$TMP/ctr-out/first.log"
			ctrb_run "$rt" a "$rel" --cidfile "$TMP/ctr-cid" -- /usr/bin/python3 \
				/bench/bench_containers.py first --out /out/first.log >/dev/null 2>&1 || {
				warn "$rt run under the guard failed"
				return 1
			}
			name=$(cat "$TMP/ctr-cid")
			[ "$rt" = podman ] && name=libpod-$name
			mk=$(awk -v n="$name" '$2 == n { print $1; exit }' "$TMP/ctr-mkdir.log")
			read -r start at err <"$TMP/ctr-out/first.log"
			if [ -z "$mk" ] || [ -z "$err" ]; then
				warn "$rt: no mkdir seen for $name, or no first connect"
				return 1
			fi
			record "{\"bench\":\"ctr-guard\",\"runtime\":\"$rt\",\"round\":$round,\"mkdir_to_start_ms\":$(((start - mk) / 1000))e-3,\"mkdir_to_connect_ms\":$(((at - mk) / 1000))e-3,\"errno\":$err}"
			say "   round $round $rt: mkdir → first connect $(((at - mk) / 1000000)) ms, errno $err"
		done
	done
	kill "$CTRB_WATCH" 2>/dev/null
	wait "$CTRB_WATCH" 2>/dev/null
	CTRB_WATCH=
	"$BFBPF" unguard --cgroup "$parent" --socket "$CTRB_SOCK" >/dev/null
}

bench_containers() {
	local tool dpid rc=0
	for tool in podman runc dockerd docker; do
		command -v "$tool" >/dev/null || {
			warn "$tool is missing: run make deps"
			return 1
		}
	done
	mkdir -p "$CGB/ctr" || return 1
	echo '{"network_mode": "allowlist", "allowed_hosts": ["198.18.0.2:9000"]}' >"$TMP/ctr-policies.json"
	CTRB_SOCK=$TMP/ctr.sock
	ctrb_podman_up || rc=1
	cp "$TMP/ctr-policies.json" "$TMP/ctr-policies/bench.json"
	[ $rc = 0 ] && { ctrb_docker_up || rc=1; }
	# the daemon after the exports: its container tracking asks the same podman and dockerd
	[ $rc = 0 ] && { start_daemon ctr --policy-dir "$TMP/ctr-policies" || rc=1; }
	dpid=${DPID:-}
	[ $rc = 0 ] && { ctrb_bench_runs || rc=1; }
	[ $rc = 0 ] && { ctrb_bench_enforce || rc=1; }
	[ $rc = 0 ] && { ctrb_bench_guard || rc=1; }
	ctrb_cleanup
	[ -n "$dpid" ] && stop_daemon ctr "$dpid"
	return $rc
}
