#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `make demo`: bfbpf holding one sandbox to a policy of names, in a throwaway network world.
#
# Builds two network namespaces joined by a veth pair:
#   server   198.18.0.2 and 198.18.0.3, an HTTP server on port 8080 of each
#   sandbox  198.18.0.1, where the sandboxed commands run (as nobody)
# and a DNS server of its own (dnsmasq on 127.0.0.1, a free port), which says
#   pypi.org, files.pythonhosted.org -> 198.18.0.2     evil.example -> 198.18.0.3
# Then it starts a bfbpf daemon that resolves with that dnsmasq, attaches the
# sandbox's cgroup to the policy
#   {"network_mode": "allowlist", "allowed_hosts": ["pypi.org:8080", "*.pythonhosted.org:8080"]}
# and shows, from inside the sandbox: the names (getent, dig) that bfbpf's DNS
# responder answers and the one it refuses, a connect that is allowed, two that
# the kernel denies, and the deny log (`bfbpf log`) naming the process and what it
# tried. Exits 0 when all of that happened, 1 otherwise. Must run as root. All
# traffic stays inside the namespaces and on loopback (198.18.0.0/15 is a
# benchmarking range; these names never leave this machine).

set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BFBPF=${BFBPF:-$ROOT/build/bfbpf}
if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=$(command -v python3); fi

ALLOWED=198.18.0.2
DENIED=198.18.0.3
ID=$$
NS_SRV=bfbpf-demo-$ID-server
NS_SBX=bfbpf-demo-$ID-sandbox
PINS=/sys/fs/bpf/bfbpf-demo-$ID
CG=
WORK=
DAEMON_PID=
PIDS=()
FAILED=0

if [ -t 1 ]; then
	B=$'\e[1m' G=$'\e[32m' R=$'\e[31m' N=$'\e[0m'
else
	B='' G='' R='' N=''
fi
step() { echo; echo "${B}==> $*${N}"; }
say() { echo "    $*"; }
good() { say "${G}$*${N}"; }
bad() {
	say "${R}unexpected: $*${N}"
	FAILED=1
}
die() {
	echo "${R}demo: $*${N}" >&2
	exit 1
}

cleanup() {
	local pid
	if [ -n "$DAEMON_PID" ]; then
		[ -n "$CG" ] && "$BFBPF" detach --cgroup "$CG" --socket "$WORK/bfbpf.sock" >/dev/null 2>&1
		kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
	fi
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	if [ -n "$CG" ] && [ -d "$CG" ]; then
		while read -r pid; do kill -KILL "$pid" 2>/dev/null; done <"$CG/cgroup.procs"
		rmdir "$CG" 2>/dev/null || { sleep 0.2; rmdir "$CG" 2>/dev/null; }
	fi
	rm -rf "$PINS"
	ip netns del "$NS_SBX" 2>/dev/null
	ip netns del "$NS_SRV" 2>/dev/null
	[ -n "$WORK" ] && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || die "run me as root (network namespaces, cgroups, BPF)"
[ -x "$BFBPF" ] || die "$BFBPF is missing: run make first"
for tool in ip nsenter unshare setpriv curl dig getent dnsmasq "$PYTHON"; do
	command -v "$tool" >/dev/null || die "$tool is missing: run make deps"
done

step "Preflight: bfbpf check"
"$BFBPF" check | sed 's/^/    /'
[ "${PIPESTATUS[0]}" -eq 0 ] || die "bfbpf check failed: this machine cannot run bfbpf"

step "Building a private network world"
WORK=$(mktemp -d /tmp/bfbpf-demo.XXXXXX)
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
for addr in $ALLOWED $DENIED; do
	mkdir -p "$WORK/www-$addr"
	echo "hello from $addr" >"$WORK/www-$addr/index.html"
	(cd "$WORK/www-$addr" && exec nsenter --net="/run/netns/$NS_SRV" "$PYTHON" -m http.server \
		--bind "$addr" 8080) >"$WORK/http-$addr.log" 2>&1 &
	PIDS+=($!)
done
say "namespace $NS_SRV: HTTP servers on $ALLOWED:8080 and $DENIED:8080"
say "namespace $NS_SBX: 198.18.0.1, the sandbox's side of a veth pair"

# demo_dns_up: dnsmasq on 127.0.0.1 (a free port), the world's only DNS server.
demo_dns_up() {
	printf '%s\n' "$ALLOWED pypi.org" "$ALLOWED files.pythonhosted.org" "$DENIED evil.example" >"$WORK/hosts"
	local try n
	for try in 1 2 3 4 5; do
		DNS_PORT=$((20000 + RANDOM % 30000))
		dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
			--addn-hosts="$WORK/hosts" --listen-address=127.0.0.1 --port="$DNS_PORT" \
			--bind-interfaces --pid-file= --user=root >"$WORK/dnsmasq.log" 2>&1 &
		DNS_PID=$!
		n=0
		while kill -0 "$DNS_PID" 2>/dev/null && [ $n -lt 50 ] &&
			! dig +time=1 +tries=1 @127.0.0.1 -p "$DNS_PORT" pypi.org >/dev/null 2>&1; do
			n=$((n + 1))
			sleep 0.1
		done
		if kill -0 "$DNS_PID" 2>/dev/null && [ $n -lt 50 ]; then
			PIDS+=("$DNS_PID")
			return 0
		fi
		kill -KILL "$DNS_PID" 2>/dev/null
		wait "$DNS_PID" 2>/dev/null
		[ "$try" = 5 ] || sleep 0.1
	done
	cat "$WORK/dnsmasq.log" >&2
	die "dnsmasq did not start"
}
demo_dns_up
say "dnsmasq on 127.0.0.1:$DNS_PORT:"
sed "s/^/      /" "$WORK/hosts"

step "Starting the bfbpf daemon (its upstream DNS server: that dnsmasq)"
SOCK=$WORK/bfbpf.sock
"$BFBPF" daemon --socket "$SOCK" --bpffs "$PINS" --state-dir "$WORK/state" \
	--dns-server "127.0.0.1:$DNS_PORT" >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
n=0
until "$BFBPF" status --socket "$SOCK" >/dev/null 2>&1; do
	kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$WORK/daemon.log" >&2; die "the daemon exited"; }
	n=$((n + 1))
	[ $n -gt 300 ] && die "the daemon did not answer within 15 s"
	sleep 0.05
done
say "\$ bfbpf daemon --socket $SOCK --dns-server 127.0.0.1:$DNS_PORT ..."

step "Confining the sandbox's cgroup to a policy of names"
MNT=$(awk '{for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i+1) == "cgroup2" && $4 == "/") { print $5; exit } break }}' /proc/self/mountinfo)
[ -n "$MNT" ] || die "no cgroup2 mount"
CG=$MNT/bfbpf-demo-$ID
mkdir "$CG" || die "cannot create $CG"
cat >"$WORK/policy.json" <<'EOF'
{"network_mode": "allowlist", "allowed_hosts": ["pypi.org:8080", "*.pythonhosted.org:8080"]}
EOF
sed 's/^/      /' "$WORK/policy.json"
say "\$ bfbpf attach --cgroup $CG --netns /run/netns/$NS_SBX --policy policy.json"
"$BFBPF" attach --cgroup "$CG" --netns "/run/netns/$NS_SBX" --policy "$WORK/policy.json" \
	--socket "$SOCK" | sed 's/^/      /'
[ "${PIPESTATUS[0]}" -eq 0 ] || die "attach failed"
say "pypi.org (and its subdomains) and every subdomain of pythonhosted.org, port 8080 only."
say "The sandbox's resolv.conf names $DENIED as its DNS server; bfbpf's responder in its"
say "namespace answers every query instead: allowed names get their addresses, which"
say "are programmed into the kernel before the answer leaves; other names are refused."
echo "nameserver $DENIED" >"$WORK/resolv.conf"
echo "options timeout:2 attempts:1" >>"$WORK/resolv.conf"

# in_sandbox CMD...: CMD in the sandbox's cgroup and namespace, as nobody, with its resolv.conf.
in_sandbox() {
	# shellcheck disable=SC2016 # $0 and $@ are the inner sh's
	(echo "$BASHPID" >"$CG/cgroup.procs" && exec nsenter --net="/run/netns/$NS_SBX" unshare -m \
		sh -c 'mount --bind "$0" /etc/resolv.conf && exec setpriv --reuid=65534 --regid=65534 \
			--clear-groups env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY \
			-u ALL_PROXY -u all_proxy "$@"' "$WORK/resolv.conf" "$@")
}

step "Names, from inside the sandbox"
out=$(in_sandbox getent hosts pypi.org)
say "\$ getent hosts pypi.org                     -> ${out:-(nothing)}"
if [[ $out == "$ALLOWED "*pypi.org* ]]; then
	good "an allowed name resolves"
else
	bad "pypi.org did not resolve"
fi
out=$(in_sandbox dig +short +time=3 +tries=1 files.pythonhosted.org)
say "\$ dig +short files.pythonhosted.org          -> ${out:-(nothing)}"
if [ "$out" = "$ALLOWED" ]; then
	good "a subdomain that *.pythonhosted.org allows resolves"
else
	bad "the wildcard did not resolve"
fi
out=$(in_sandbox dig +time=3 +tries=1 evil.example | sed -n 's/.*status: \([A-Z]*\).*/\1/p')
say "\$ dig evil.example                           -> status: ${out:-(no answer)}"
if [ "$out" = REFUSED ]; then
	good "a name the policy does not allow is refused by the responder"
else
	bad "evil.example was not refused"
fi
in_sandbox getent hosts evil.example >/dev/null
rc=$?
say "\$ getent hosts evil.example                  -> exit $rc (not found)"
[ $rc -eq 2 ] || bad "getent found evil.example"

step "Connects, from inside the sandbox"
# sandbox_curl URL: curl in the sandbox; prints "HTTP code" and keeps its error lines.
sandbox_curl() {
	in_sandbox curl --noproxy '*' -sS --max-time 10 -o /dev/null -w 'HTTP %{http_code}' "$1" 2>"$WORK/curl.err"
}
out=$(sandbox_curl http://files.pythonhosted.org:8080/)
rc=$?
say "\$ curl http://files.pythonhosted.org:8080/   -> $out (exit $rc)"
if [ $rc -eq 0 ] && [ "$out" = "HTTP 200" ]; then
	good "allowed: the name's address, on the policy's port"
else
	bad "the allowed server was not reached: $(cat "$WORK/curl.err")"
fi
out=$(sandbox_curl http://$DENIED:8080/)
rc=$?
say "\$ curl http://$DENIED:8080/   (evil.example's address, tried directly) -> exit $rc"
say "      $(head -n1 "$WORK/curl.err")"
# curl's exit status 7 is "couldn't connect": connect() failed with EPERM, in the kernel.
if [ $rc -eq 7 ]; then
	good "denied: no name of the policy led to $DENIED; no packet left the sandbox"
else
	bad "the denied server answered, or curl failed otherwise"
fi
out=$(sandbox_curl http://pypi.org:9000/)
rc=$?
say "\$ curl http://pypi.org:9000/                  -> exit $rc"
say "      $(head -n1 "$WORK/curl.err")"
if [ $rc -eq 7 ]; then
	good "denied: pypi.org is allowed on port 8080 only"
else
	bad "pypi.org:9000 was not denied"
fi

step "The deny log: bfbpf log --cgroup $CG"
# Events reach the daemon through a ring buffer: wait until it has all three.
n=0
while :; do
	"$BFBPF" log --cgroup "$CG" --socket "$SOCK" >"$WORK/log" 2>&1
	if grep -q "REFUSE dns evil.example" "$WORK/log" && grep -q "DENY tcp $DENIED:8080 .*curl" "$WORK/log" &&
		grep -q "DENY tcp $ALLOWED:9000 (.*pypi.org.*) .*curl" "$WORK/log"; then
		break
	fi
	n=$((n + 1))
	[ $n -gt 50 ] && break
	sleep 0.1
done
sed 's/^/    /' "$WORK/log"
grep -q "REFUSE dns evil.example" "$WORK/log" || bad "no REFUSE line for evil.example"
grep -q "DENY tcp $DENIED:8080 pid [0-9]* curl " "$WORK/log" || bad "no DENY line naming curl and $DENIED:8080"
grep -q "DENY tcp $ALLOWED:9000 (.*pypi.org.*) pid [0-9]* curl " "$WORK/log" ||
	bad "no DENY line naming curl and pypi.org"
[ $FAILED = 0 ] && good "each denial names the process (pid, command) and what it tried: the address, the name"

step "Cleaning up"
say "detaching the sandbox, stopping the daemon and dnsmasq, removing the namespaces"
echo
if [ $FAILED = 0 ]; then
	echo "${G}${B}demo: OK — names allowed and refused, one connect allowed, two denied and logged${N}"
	exit 0
fi
echo "${R}${B}demo: FAILED${N}"
echo "--- daemon.log (last 20 lines)"
tail -n 20 "$WORK/daemon.log"
exit 1
