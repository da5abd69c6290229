# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash
#
# Benchmark 9, sourced by tools/bench/run.sh: the connect rate against the number of
# policy entries, for bfbpf and for tinyproxy given the same allowlist, beside the
# unfiltered path (a) and the floor (f), all interleaved; and the time a proxy takes
# to put a new N-entry allowlist in force (tinyproxy has no reload of its filter: a
# restart, until the first allowed CONNECT goes through). bfbpf's update time per N is
# benchmark 3's. tools/bench/charts.py draws both against N from the same results.
#
# Uses run.sh's world and helpers: policy, in_ns, in_sandbox, rotated, record, say, warn,
# jget, $CGB, $TMP, $NS_PRX, $LOADGEN, $BFBPF, $PIDS. Its own: cgroups $CGB/swN,
# tinyproxy instances on 198.18.1.2:(8900 + i), one per size.

SWEEP_PORT_BASE=8900
if [ "$QUICK" = 1 ]; then
	SWEEP_SIZES=10,1000,100000 SWEEP_ROUNDS=2 SWEEP_SECONDS=0.3 SWEEP_START_ROUNDS=1
else
	SWEEP_SIZES=10,100,1000,10000,100000 SWEEP_ROUNDS=7 SWEEP_SECONDS=2 SWEEP_START_ROUNDS=3
fi

# sweep_proxy_conf N PORT: a tinyproxy configuration like run.sh's, with the N-entry filter.
sweep_proxy_conf() {
	local n=$1 port=$2
	cat <<EOF
User root
Group root
Port $port
Listen 198.18.1.2
Timeout 30
LogLevel Critical
PidFile "$TMP/tinyproxy-sw$n.pid"
MaxClients 4096
Allow 198.18.1.0/24
ConnectPort 9000
DisableViaHeader Yes
FilterDefaultDeny Yes
FilterExtended On
FilterURLs Off
Filter "$TMP/swc$n.filter"
EOF
}

# sweep_proxy_start N PORT: starts tinyproxy with the N-entry filter; sets SWEEP_PROXY_PID,
# and SWEEP_START_S to the seconds from its start to the first allowed CONNECT it answers.
sweep_proxy_start() {
	local n=$1 port=$2 t0 t1 start=$SECONDS
	sweep_proxy_conf "$n" "$port" >"$TMP/tinyproxy-sw$n.conf"
	t0=$(date +%s.%N)
	in_ns "$NS_PRX" tinyproxy -d -c "$TMP/tinyproxy-sw$n.conf" >>"$TMP/tinyproxy-sw$n.log" 2>&1 &
	SWEEP_PROXY_PID=$!
	until (in_sandbox "$CGB/plain" "$LOADGEN" connect --target 198.18.2.2:9000 \
		--proxy "198.18.1.2:$port" --seconds 0.5 --max 1 --threads 1 --concurrency 1) >/dev/null 2>&1; do
		if [ $((SECONDS - start)) -gt 120 ] || ! kill -0 "$SWEEP_PROXY_PID" 2>/dev/null; then
			warn "sweep: tinyproxy with $n entries did not serve (see $TMP/tinyproxy-sw$n.log)"
			return 1
		fi
		sleep 0.01
	done
	t1=$(date +%s.%N)
	SWEEP_START_S=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
}

sweep_proxy_stop() { # PID: stops it and forgets it (run.sh's cleanup kills what is in PIDS)
	local p kept=()
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	for p in "${PIDS[@]}"; do [ "$p" = "$1" ] || kept+=("$p"); done
	PIDS=("${kept[@]}")
}

bench_sweep() {
	local sizes=${SWEEP_SIZES//,/ } n i round v out target proxy cg pid variants=(a f) pids=()
	i=0
	for n in $sizes; do
		# the same generated entries for both; the proxy reaches the server at 198.18.2.2
		policy "sw$n" "$n" $((300 + n % 83)) 198.18.0.2 fd00::2
		policy "swc$n" "$n" $((300 + n % 83)) 198.18.2.2 fd00::2
		mkdir -p "$CGB/sw$n"
		"$BFBPF" attach --cgroup "$CGB/sw$n" --policy "$TMP/sw$n.json" >/dev/null || return 1
		# the proxy's restart time with this allowlist, then one left running for the rounds
		for round in $(seq "$SWEEP_START_ROUNDS"); do
			sweep_proxy_start "$n" $((SWEEP_PORT_BASE + i)) || return 1
			pid=$SWEEP_PROXY_PID
			PIDS+=("$pid")
			record "{\"bench\":\"sweep-proxy-start\",\"entries\":$n,\"round\":$round,\"seconds\":$SWEEP_START_S}"
			say "   tinyproxy with $n entries: serving after $SWEEP_START_S s"
			if [ "$round" -lt "$SWEEP_START_ROUNDS" ]; then sweep_proxy_stop "$pid"; fi
		done
		pids+=("$pid")
		variants+=("b$n" "c$n")
		i=$((i + 1))
	done
	for round in $(seq "$SWEEP_ROUNDS"); do
		for v in $(rotated "$round" "${variants[@]}"); do
			proxy=() target=198.18.0.2:9000
			case $v in
			a) cg=$CGB/plain ;;
			f) cg=$CGB/floor ;;
			b*) cg=$CGB/sw${v#b} ;;
			c*)
				cg=$CGB/plain target=198.18.2.2:9000
				i=0
				for n in $sizes; do
					[ "c$n" = "$v" ] && proxy=(--proxy "198.18.1.2:$((SWEEP_PORT_BASE + i))")
					i=$((i + 1))
				done
				;;
			esac
			out=$(in_sandbox "$cg" "$LOADGEN" connect --target "$target" "${proxy[@]}" \
				--seconds "$SWEEP_SECONDS" --threads "$CONNECT_THREADS" \
				--concurrency "$CONNECT_CONCURRENCY") || {
				warn "sweep $v round $round failed: $out"
				return 1
			}
			record "{\"bench\":\"sweep\",\"variant\":\"$v\",\"round\":$round,${out#\{}"
			say "   round $round $v: $(jget "$out" 'round(d["rate"])')/s"
		done
	done
	for pid in "${pids[@]}"; do sweep_proxy_stop "$pid"; done
	for n in $sizes; do "$BFBPF" detach --cgroup "$CGB/sw$n" >/dev/null || return 1; done
}
