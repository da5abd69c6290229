#!/bin/bash
# vmtest/selftest.sh: a quick check that a vmtest guest (or any host) has what bfbpf's
# integration suite needs: root, cgroup2, bpffs and the bpf syscall, BTF, network
# namespaces with veth, dnsmasq + dig, python3 + curl, and `bfbpf check` if it is built.
# Prints PASS/FAIL/SKIP lines and `selftest: N passed, M failed, K skipped`, like the
# integration suite. Run it in the guest with: vmtest/run.sh --suite vmtest/selftest.sh
# Test traffic stays in a namespace it creates (198.18.0.0/30); it cleans up after itself.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NS=vmtest-self-$$
HOST_IF=vmt$$h
NS_IF=vmt$$n
HOST_IP=198.18.0.1
NS_IP=198.18.0.2
WORK=$(mktemp -d)
PIN=/sys/fs/bpf/vmtest_selftest_$$
CG_ROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
CG=${CG_ROOT:+$CG_ROOT/vmtest-selftest-$$}
passed=0 failed=0 skipped=0

cleanup() {
	local p
	# Background servers started by the checks (which run in subshells) left their pids here.
	for p in $(cat "$WORK/bg.pids" 2>/dev/null); do kill "$p" 2>/dev/null || true; done
	ip netns del "$NS" 2>/dev/null || true
	ip link del "$HOST_IF" 2>/dev/null || true
	rm -f "$PIN"
	[ -n "$CG" ] && rmdir "$CG" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1 ($2)"; failed=$((failed + 1)); }
skip() { echo "SKIP $1 ($2)"; skipped=$((skipped + 1)); }
# check NAME FUNC: runs FUNC in a subshell with set -e (the first failing command ends
# it); PASS if it succeeds, FAIL with the last line of its output otherwise.
check() {
	local name=$1 rc
	shift
	set +e
	(set -e; "$@") >"$WORK/out" 2>&1
	rc=$?
	set -e
	if [ "$rc" = 0 ]; then pass "$name"; else fail "$name" "$(tail -n1 "$WORK/out")"; return 1; fi
}

t_root() { [ "$(id -u)" = 0 ] || { echo "not root (uid $(id -u))"; return 1; }; }

t_cgroup2() {
	[ -n "$CG" ] || { echo "no cgroup2 mount in /proc/self/mountinfo"; return 1; }
	mkdir "$CG"
	# Move a short-lived process into the new cgroup: what every test sandbox does.
	sh -c "echo \$\$ > '$CG/cgroup.procs' && grep -q '^0::/vmtest-selftest-$$\$' /proc/self/cgroup" ||
		{ echo "cannot join $CG"; return 1; }
}

t_bpffs_map_pin() {
	[ "$(stat -f -c %T /sys/fs/bpf)" = bpf_fs ] || { echo "/sys/fs/bpf is not bpffs"; return 1; }
	bpftool map create "$PIN" type hash key 4 value 4 entries 16 name vmtest_self
	bpftool map update pinned "$PIN" key 1 0 0 0 value 2 0 0 0
	bpftool map lookup pinned "$PIN" key 1 0 0 0 | grep -q '02 00 00 00\|"value": 2' ||
		{ echo "map lookup did not return the stored value"; return 1; }
}

t_btf() { [ -r /sys/kernel/btf/vmlinux ] || { echo "no /sys/kernel/btf/vmlinux"; return 1; }; }

t_netns_veth() {
	ip netns add "$NS"
	ip link add "$HOST_IF" type veth peer name "$NS_IF"
	ip link set "$NS_IF" netns "$NS"
	ip addr add "$HOST_IP/30" dev "$HOST_IF"
	ip link set "$HOST_IF" up
	ip -n "$NS" addr add "$NS_IP/30" dev "$NS_IF"
	ip -n "$NS" link set "$NS_IF" up
	ip -n "$NS" link set lo up
	if command -v ping >/dev/null; then ping -c 1 -W 5 "$NS_IP"; else busybox ping -c 1 -W 5 "$NS_IP"; fi >/dev/null
}

wait_port() { # wait_port PROTO ADDR PORT: until something listens in the namespace
	for _ in $(seq 1 100); do
		ip netns exec "$NS" ss -Hln"$1" "src $2:$3" 2>/dev/null | grep -q . && return 0
		sleep 0.2
	done
	echo "nothing listens on $2:$3/$1"
	return 1
}

t_dnsmasq_dig() {
	echo "$NS_IP selftest.vmtest.example" >"$WORK/hosts"
	ip netns exec "$NS" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
		--addn-hosts="$WORK/hosts" --listen-address="$NS_IP" --bind-interfaces --local-ttl=5 \
		--pid-file="$WORK/dnsmasq.pid" --user=root >"$WORK/dnsmasq.log" 2>&1 &
	echo $! >>"$WORK/bg.pids"
	wait_port u "$NS_IP" 53
	local got
	got=$(dig +short +time=3 +tries=2 @"$NS_IP" selftest.vmtest.example A)
	[ "$got" = "$NS_IP" ] || { echo "dig answered '$got'"; return 1; }
}

t_python_curl() {
	echo vmtest-ok >"$WORK/index.html"
	ip netns exec "$NS" python3 -m http.server --bind "$NS_IP" --directory "$WORK" 8080 \
		>"$WORK/http.log" 2>&1 &
	echo $! >>"$WORK/bg.pids"
	wait_port t "$NS_IP" 8080
	[ "$(curl -sS --max-time 20 "http://$NS_IP:8080/index.html")" = vmtest-ok ]
}

t_bfbpf_check() { "${BFBPF:-$REPO/build/bfbpf}" check; }

check root t_root || true
check cgroup2 t_cgroup2 || true
check bpffs-map-pin t_bpffs_map_pin || true
check btf-vmlinux t_btf || true
if check netns-veth t_netns_veth; then
	check dnsmasq-dig t_dnsmasq_dig || true
	check python-http-curl t_python_curl || true
else
	skip dnsmasq-dig "no namespace with a veth pair"
	skip python-http-curl "no namespace with a veth pair"
fi
if [ -x "$REPO/build/bfbpf" ]; then
	check bfbpf-check t_bfbpf_check || true
else
	skip bfbpf-check "no build/bfbpf: run make"
fi

summary="selftest: $passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary+=", $skipped skipped"
echo "$summary"
[ "$failed" = 0 ]
