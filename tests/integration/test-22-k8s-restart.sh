# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: a Kubernetes container restart (a NEW container id in the same pod, same container
# name) comes back with the pod's CURRENT policy, the relocked one, never the install policy
# of its annotation: the record is keyed by (pod uid, container name) too. Simulated with real
# Podman (runc) and CRI-O's pod annotations (io.kubernetes.pod.uid,
# io.kubernetes.container.name), as the kubelet's restart does it: remove the container, create
# a new one with the same pod annotations. The pod's cgroup is a directory of the case's; its
# removal (the pod is deleted) forgets the record.
# Uses test-13's Podman set-up (podman_up, ctr_daemon_up, count_server, wait_reached).

ALL_TESTS+=(k8s_restart_relocked k8s_restart_daemon_restart)

K8S_POD_UID=6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b

# k8s_run NAME [PODMAN-RUN-ARGS...] -- ENTRY-ARGS...: a detached container of the pod (the
# pod's cgroup below the case's; the pod's annotations, container name "agent"), with
# io.bfbpf.policy=install; prints its id.
k8s_run() {
	local name=$1 args=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	podman run -d --pull never --name "$name" --cgroup-parent "$K8S_POD_CG" \
		--network "ns:/run/netns/$NS_SBX" --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
		-v /usr:/usr:ro -v "$CASEDIR:/case:ro" --annotation io.bfbpf.policy=install \
		--annotation "io.kubernetes.pod.uid=$K8S_POD_UID" \
		--annotation io.kubernetes.container.name=agent "${args[@]}" $CTR_IMAGE \
		/usr/bin/python3 /case/entry.py "$@"
}

# k8s_up: the world, its counter, Podman, the daemon; the pod's cgroup path.
k8s_up() {
	world_up
	count_server $CTR_ALLOWED4 $CTR_DENIED4
	podman_up
	K8S_POD_CG=$CTR_PARENT/pod$K8S_POD_UID
	ctr_daemon_up
}

# k8s_first: the pod's first container with the install policy, then relocked.
k8s_first() {
	log "the pod's first container: the install policy lets both addresses through"
	K8S_OLD=$(k8s_run agent-0 -- "$CTR_DENIED4:$CTR_PORT" "$CTR_ALLOWED4:$CTR_PORT" sleep) ||
		fail "podman run failed"
	wait_reached $CTR_ALLOWED4 1
	[ "$(reached $CTR_DENIED4)" -eq 1 ] || fail "the install policy did not allow $CTR_DENIED4"
	log "relock (its cgroup, as on a node)"
	bf_ok update --cgroup "$CGROOT$K8S_POD_CG/libpod-$K8S_OLD" \
		--policy "$CASEDIR/policies/relocked.json"
	[ -f "$(dirname "$SOCK")/state/containers/$K8S_OLD.json" ] || fail "no record of $K8S_OLD"
}

# k8s_restarted: the kubelet's restart: a new container, same pod annotations, an entrypoint
# that connects to the denied address at once and in a loop: nothing reaches it.
k8s_restarted() {
	log "the restart: a new container id in the same pod, connecting at once"
	K8S_NEW=$(k8s_run agent-1 -- "loop:$CTR_DENIED4:$CTR_PORT:1" "$CTR_ALLOWED4:$CTR_PORT" sleep) ||
		fail "podman run failed"
	[ "$K8S_NEW" != "$K8S_OLD" ] || fail "the same id again"
	wait_reached $CTR_ALLOWED4 2
	sleep 0.3 # a late accept of the denied address would be written by now
	[ "$(reached $CTR_DENIED4)" -eq 1 ] ||
		fail "$(($(reached $CTR_DENIED4) - 1)) connections of the restarted container reached the denied address"
	local state
	state=$(dirname "$SOCK")/state/containers
	ls "$state"
	[ -f "$state/$K8S_NEW.json" ] || fail "the record was not moved to the new id"
	[ ! -e "$state/$K8S_OLD.json" ] || fail "the old id's record stayed"
	json_check "$state/$K8S_NEW.json" "d['pod_uid'] == '$K8S_POD_UID' and d['pod_container'] == 'agent'
		and d['policy']['allowed_hosts'] == ['$CTR_ALLOWED4:$CTR_PORT']" || fail "the record is wrong"
	bfs log --json >"$CASEDIR/log.json"
	grep '"verdict":"reapplied"' "$CASEDIR/log.json" | grep -q "\"container\":\"$K8S_NEW\"" ||
		fail "no reapplied event for the new container"
	bfs log | grep "REAPPLIED .*container $K8S_NEW" || fail "bfbpf log shows no REAPPLIED line"
	bfs metrics >"$CASEDIR/metrics.txt"
	grep -x 'bfbpf_reapplied_total 1' "$CASEDIR/metrics.txt" || fail "the re-apply was not counted"
}

# k8s_pod_cg_remove: the pod's cgroup, as the kubelet removes it once its containers are gone
# (runc may leave an emptied child behind for a moment, as under vmtest's guest).
k8s_pod_cg_remove() {
	local pod=$CGROOT$K8S_POD_CG n=0 d
	until rmdir "$pod" 2>/dev/null; do
		n=$((n + 1))
		if [ $n -gt 100 ]; then
			find "$pod" -name cgroup.procs -exec grep -H . {} +
			fail "cannot remove the pod's cgroup: $(ls "$pod")"
		fi
		# shellcheck disable=SC2044 # the tests' cgroup paths have no blanks
		for d in $(find "$pod" -mindepth 1 -depth -type d); do rmdir "$d" 2>/dev/null; done
		sleep 0.1
	done
}

# k8s_pod_deleted: the pod goes (its containers, then its cgroup): the record goes with it.
k8s_pod_deleted() {
	log "the pod is deleted: its cgroup goes, and the record with it"
	podman rm -f -t 0 agent-1 >/dev/null || fail "podman rm failed"
	k8s_pod_cg_remove
	local n=0 state
	state=$(dirname "$SOCK")/state/containers
	while [ -n "$(ls "$state")" ]; do
		n=$((n + 1))
		[ $n -gt 150 ] && fail "the record of a deleted pod stayed: $(ls "$state")"
		sleep 0.1
	done
}

test_k8s_restart_relocked() {
	k8s_up
	k8s_first
	log "the container exits and is removed (the kubelet keeps the pod)"
	podman rm -f -t 0 agent-0 >/dev/null || fail "podman rm failed"
	k8s_restarted
	k8s_pod_deleted
}

test_k8s_restart_daemon_restart() {
	k8s_up
	k8s_first
	log "the daemon stops; the container is removed meanwhile; the daemon starts again"
	daemon_stop "$DAEMON_PID"
	podman rm -f -t 0 agent-0 >/dev/null || fail "podman rm failed"
	ctr_daemon_start
	daemon_wait
	k8s_restarted
	log "detach forgets the pod's record"
	bf_ok detach --container agent-1 --runtime podman
	[ -z "$(ls "$(dirname "$SOCK")/state/containers/")" ] || fail "the record stayed"
	podman rm -f -t 0 agent-1 >/dev/null
	k8s_pod_cg_remove
}
