# shellcheck shell=bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Sourced by tests/integration/test-13-containers.sh and tools/bench/containers.sh: the
# Podman and Docker set-up both use, everything under a directory of the caller and
# nothing on the host (runc, cgroupfs, no firewall, no bridge; docs/testing.md). The
# bfbpf hook and runtime wrapper run $BFBPF.

# ctrenv_podman_conf DIR SOCK: Podman's storage (vfs), engine (runc, cgroupfs, events in
# a file) and bfbpf's createRuntime hook (for containers annotated io.bfbpf.policy,
# talking to SOCK) under DIR; exports CONTAINERS_CONF and CONTAINERS_STORAGE_CONF,
# which bfbpf's own `podman container inspect` reads too.
ctrenv_podman_conf() {
	local p=$1 control=$2
	mkdir -p "$p/root" "$p/run" "$p/tmp" "$p/hooks.d" || return 1
	printf '[storage]\ndriver = "vfs"\ngraphroot = "%s"\nrunroot = "%s"\n' "$p/root" "$p/run" \
		>"$p/storage.conf"
	printf '[engine]\ncgroup_manager = "cgroupfs"\nruntime = "runc"\nevents_logger = "file"\nevents_logfile_path = "%s"\nhooks_dir = ["%s"]\ntmp_dir = "%s"\n' \
		"$p/events.log" "$p/hooks.d" "$p/tmp" >"$p/containers.conf"
	export CONTAINERS_STORAGE_CONF=$p/storage.conf CONTAINERS_CONF=$p/containers.conf
	cat >"$p/hooks.d/bfbpf-hook.json" <<EOC
{"version": "1.0.0",
 "hook": {"path": "$BFBPF", "args": ["bfbpf", "oci-hook", "--socket", "$control"]},
 "when": {"annotations": {"^io\\\\.bfbpf\\\\.policy\$": ".*"}},
 "stages": ["createRuntime"]}
EOC
}

# ctrenv_dockerd_start DIR SOCK LOG: dockerd in the background with its data, exec root,
# pid file and socket under DIR (keep DIR short: containerd's socket paths are bounded),
# bfbpf's runtime wrapper (talking to SOCK) as runtime "bfbpf", its output appended to
# LOG; exports DOCKER_HOST and DOCKER_CONFIG and sets CTRENV_DOCKERD to its pid. The
# caller waits for it (`docker version`).
ctrenv_dockerd_start() {
	local dx=$1 control=$2 log=$3
	mkdir -p "$dx/data" "$dx/exec" "$dx/client" || return 1
	# DOCKER_CONFIG is read by podman too (registry auth): it must hold a config.json
	echo "{}" >"$dx/client/config.json"
	printf '#!/bin/sh\nBFBPF_SOCKET=%s exec %s docker-runtime "$@"\n' "$control" "$BFBPF" \
		>"$dx/bfbpf-runc"
	chmod 0755 "$dx/bfbpf-runc"
	printf '{"runtimes": {"bfbpf": {"path": "%s"}}}\n' "$dx/bfbpf-runc" >"$dx/daemon.json"
	export DOCKER_HOST=unix://$dx/docker.sock DOCKER_CONFIG=$dx/client
	dockerd --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false --bridge=none \
		--userland-proxy=false --data-root "$dx/data" --exec-root "$dx/exec" \
		--pidfile "$dx/docker.pid" -H "$DOCKER_HOST" --config-file "$dx/daemon.json" \
		--exec-opt native.cgroupdriver=cgroupfs >>"$log" 2>&1 &
	# shellcheck disable=SC2034 # read by the caller
	CTRENV_DOCKERD=$!
}
