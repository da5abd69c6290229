#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `make demo`: bfbpf confining one command, in a throwaway network world.
#
# Builds two network namespaces joined by a veth pair:
#   server   198.18.0.2 and 198.18.0.3, an HTTP server on port 8080 of each
#   sandbox  198.18.0.1, where the confined command runs
# then runs curl to both servers under
#   bfbpf run --user nobody --mode allowlist --allow 198.18.0.2 -- curl ...
# The first gets 200, the second is refused in the kernel (EPERM). Exits 0
# when that is what happened, 1 otherwise. Must run as root. All traffic
# stays inside the namespaces it makes (198.18.0.0/15 is a benchmarking range).

set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BFBPF=${BFBPF:-$ROOT/build/bfbpf}
if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=$(command -v python3); fi

ALLOWED=198.18.0.2
DENIED=198.18.0.3
ID=$$
NS_SRV=bfbpf-demo-$ID-server
NS_SBX=bfbpf-demo-$ID-sandbox
WORK=
PIDS=()

if [ -t 1 ]; then
	B=$'\e[1m' G=$'\e[32m' R=$'\e[31m' N=$'\e[0m'
else
	B='' G='' R='' N=''
fi
step() { echo; echo "${B}==> $*${N}"; }
say() { echo "    $*"; }
die() {
	echo "${R}demo: $*${N}" >&2
	exit 1
}

cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	ip netns del "$NS_SBX" 2>/dev/null
	ip netns del "$NS_SRV" 2>/dev/null
	[ -n "$WORK" ] && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || die "run me as root (network namespaces, cgroups, BPF)"
[ -x "$BFBPF" ] || die "$BFBPF is missing: run make first"
for tool in ip nsenter curl "$PYTHON"; do
	command -v "$tool" >/dev/null || die "$tool is missing: run make deps"
done

step "Preflight: bfbpf check"
"$BFBPF" check | sed 's/^/    /'
[ "${PIPESTATUS[0]}" -eq 0 ] || die "bfbpf check failed: this machine cannot run bfbpf"

step "Building a private network world"
[ -d /sys/module/veth ] || modprobe veth 2>/dev/null
mkdir -p /run/netns
ip netns add "$NS_SRV" || die "cannot create network namespace $NS_SRV"
ip netns add "$NS_SBX" || die "cannot create network namespace $NS_SBX"
ip -n "$NS_SBX" link add eth0 type veth peer name eth0 netns "$NS_SRV" || die "cannot create a veth pair"
ip -n "$NS_SBX" addr add 198.18.0.1/24 dev eth0
ip -n "$NS_SRV" addr add $ALLOWED/24 dev eth0
ip -n "$NS_SRV" addr add $DENIED/24 dev eth0
for ns in "$NS_SBX" "$NS_SRV"; do
	ip -n "$ns" link set lo up
	ip -n "$ns" link set eth0 up
done
say "namespace $NS_SRV: $ALLOWED and $DENIED"
say "namespace $NS_SBX: 198.18.0.1 (the sandbox), joined to it by a veth pair"

WORK=$(mktemp -d /tmp/bfbpf-demo.XXXXXX)
for addr in $ALLOWED $DENIED; do
	mkdir -p "$WORK/$addr"
	echo "hello from $addr" >"$WORK/$addr/index.html"
	(cd "$WORK/$addr" && exec nsenter --net="/run/netns/$NS_SRV" "$PYTHON" -m http.server \
		--bind "$addr" 8080) >"$WORK/http-$addr.log" 2>&1 &
	PIDS+=($!)
done
for addr in $ALLOWED $DENIED; do
	n=0
	until nsenter --net="/run/netns/$NS_SRV" curl -s -o /dev/null --noproxy '*' --max-time 1 \
		"http://$addr:8080/"; do
		n=$((n + 1))
		[ $n -gt 100 ] && die "the HTTP server on $addr did not start"
		sleep 0.1
	done
	say "HTTP server listening on http://$addr:8080/"
done

sandbox_curl() {
	nsenter --net="/run/netns/$NS_SBX" env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY \
		-u ALL_PROXY -u all_proxy "$@" curl --noproxy '*' -sS -v --max-time 10 \
		-o /dev/null -w 'HTTP %{http_code}\n' "$URL" 2>"$WORK/curl.err"
}

# The lines of curl's verbose log that say why a connection failed.
curl_why() { grep -E '^(curl:|\* .*(fail|refused|denied|not permitted))' "$WORK/curl.err" | sed 's/^/      /'; }

step "Without bfbpf, the sandbox reaches both servers"
ok=1
for addr in $ALLOWED $DENIED; do
	URL=http://$addr:8080/
	out=$(sandbox_curl)
	say "curl $URL -> $out"
	[ "$out" = "HTTP 200" ] || { ok=0; curl_why; }
done
[ $ok = 1 ] || die "the world does not work without bfbpf; nothing to demonstrate"

step "With bfbpf: only $ALLOWED is allowed"
say "\$ bfbpf run --user nobody --mode allowlist --allow $ALLOWED -- curl ..."
say "(bfbpf makes a cgroup, attaches its BPF programs with this policy, checks the"
say " lockdown, then runs curl inside that cgroup; the kernel judges every connect)"

URL=http://$ALLOWED:8080/
out=$(sandbox_curl "$BFBPF" run --user nobody --mode allowlist --allow $ALLOWED --)
rc=$?
say "curl $URL -> $out (exit $rc)"
[ $rc -eq 0 ] || curl_why
if [ $rc -eq 0 ] && [ "$out" = "HTTP 200" ]; then
	say "${G}allowed: $ALLOWED is on the allowlist${N}"
	allowed_ok=1
else
	say "${R}unexpected: the allowed server was not reached${N}"
	allowed_ok=0
fi

URL=http://$DENIED:8080/
out=$(sandbox_curl "$BFBPF" run --user nobody --mode allowlist --allow $ALLOWED --)
rc=$?
say "curl $URL -> $out (exit $rc)"
curl_why
# curl's exit status 7 is "couldn't connect"; bfbpf run passes it through.
if [ $rc -eq 7 ] && [ "$out" != "HTTP 200" ]; then
	if grep -q "Operation not permitted" "$WORK/curl.err"; then
		say "${G}denied: connect() to $DENIED failed with EPERM in the kernel; no packet left the sandbox${N}"
	else
		say "${G}denied: curl could not connect to $DENIED${N}"
	fi
	denied_ok=1
else
	say "${R}unexpected: the denied server answered, or bfbpf itself failed${N}"
	denied_ok=0
fi

step "Cleaning up"
say "bfbpf run removed its cgroup and programs when curl exited; removing the namespaces"
if [ $allowed_ok = 1 ] && [ $denied_ok = 1 ]; then
	echo
	echo "${G}${B}demo: OK — one destination allowed, the other denied${N}"
	exit 0
fi
echo
echo "${R}${B}demo: FAILED${N}"
exit 1
