# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: the life of a sandbox — descendants, several sandboxes, update,
# detach, status, verify, and a daemon that dies.

ALL_TESTS+=(nested_cgroup two_sandboxes update_cuts_established_flow update_cuts_udp_stream detach status
	verify_locked daemon_kill9_readopt cgroup_removed_while_down attach_fails_cleanly)

test_nested_cgroup() {
	world_up
	daemon_up
	local before=$CG/before after=$CG/after
	mkdir "$before" || fail "cannot create $before"
	attach "$CG" --mode allowlist --allow $SRV4
	mkdir "$after" "$after/deeper" || fail "cannot create $after/deeper"
	local cg
	for cg in "$before" "$after" "$after/deeper"; do
		log "descendant ${cg#"$CG"/}"
		expect "$cg" \
			"ok tcp $SRV4 7000" \
			"denied tcp $SRV4B 7000" \
			"denied tcp $SRV6 7000" \
			"denied udp-sendto $SRV4B 9999" \
			"denied raw $SRV4"
	done
}

test_two_sandboxes() {
	world_up
	daemon_up
	local a=$CG/a b=$CG/b
	cg_make "$a"
	cg_make "$b"
	attach "$a" --mode allowlist --allow $SRV4 --allow $SRV6
	attach "$b" --mode allowlist --allow $SRV4B --allow $SRV6B
	expect "$a" \
		"ok tcp $SRV4 7000" \
		"denied tcp $SRV4B 7000" \
		"ok udp-sendto $SRV6 9999" \
		"denied udp-sendto $SRV6B 9999"
	expect "$b" \
		"ok tcp $SRV4B 7000" \
		"denied tcp $SRV4 7000" \
		"ok udp-sendto $SRV6B 9999" \
		"denied udp-sendto $SRV6 9999"
	log "updating one leaves the other alone"
	update "$a" --mode no-network
	expect "$a" "denied tcp $SRV4 7000"
	expect "$b" \
		"ok tcp $SRV4B 7000" \
		"denied tcp $SRV4 7000"
}

# hold_start CG ADDR PORT DIR [MODE]: a background flow from the sandbox
# (probe.py hold: TCP; probe.py stream: UDP).
hold_start() {
	local cg=$1 addr=$2 port=$3 dir=$4 mode=${5:-hold}
	mkdir -p "$dir"
	sbx "$cg" "$PYTHON" "$PROBE" "$mode" "$addr" "$port" "$dir" >"$dir/out" 2>&1 &
	echo $! >"$dir/pid"
}

hold_finish() {
	local dir=$1 pid rc
	pid=$(cat "$dir/pid")
	wait "$pid"
	rc=$?
	cat "$dir/out"
	return $rc
}

# relock_cuts_flows MODE PORT CUT_STATUS: two flows of probe.py MODE, to $SRV4
# and $SRV4B, are established; a relock to $SRV4B only must end the first
# (its probe exits with a status that CUT_STATUS, a test expression, accepts)
# and leave the second alone.
relock_cuts_flows() {
	local mode=$1 port=$2 cut_status=$3
	local f1=$CASEDIR/$mode-cut f2=$CASEDIR/$mode-kept
	attach "$CG" --mode allowlist --allow $SRV4 --allow $SRV4B
	hold_start "$CG" $SRV4 "$port" "$f1" "$mode"
	hold_start "$CG" $SRV4B "$port" "$f2" "$mode"
	wait_for_file "$f1/ready" 30 || { cat "$f1/out"; fail "$mode flow to $SRV4 not established"; }
	wait_for_file "$f2/ready" 30 || { cat "$f2/out"; fail "$mode flow to $SRV4B not established"; }
	log "both $mode flows established; relock to $SRV4B only"
	update "$CG" --mode allowlist --allow $SRV4B
	touch "$f1/go" "$f2/go"
	hold_finish "$f1"
	# shellcheck disable=SC2086 # CUT_STATUS is an operator and an operand
	test $? $cut_status || fail "the $mode flow to $SRV4 still carries data after the update"
	hold_finish "$f2" || fail "the $mode flow to $SRV4B (still allowed) broke"
}

test_update_cuts_established_flow() {
	world_up
	daemon_up
	# the cut TCP flow's second echo times out: its segments are dropped
	relock_cuts_flows hold 7000 "-ne 0"
	expect "$CG" \
		"denied tcp $SRV4 7000" \
		"ok tcp $SRV4B 7000"
}

# A stream's packets after its first are allowed by the CPU's verdict memo,
# without a map lookup: the update's new generation must end that too, while
# the packets keep coming (each send of the cut stream fails with EPERM).
test_update_cuts_udp_stream() {
	world_up
	daemon_up
	relock_cuts_flows stream 9999 "-eq 1"
}

test_detach() {
	world_up
	daemon_up
	attach "$CG" --mode no-network
	expect "$CG" \
		"denied tcp $SRV4 7000" \
		"denied raw $SRV4"
	detach "$CG"
	log "after detach the cgroup is unrestricted"
	expect "$CG" \
		"ok tcp $SRV4 7000" \
		"ok tcp $SRV6B 7000" \
		"ok udp-sendto $SRV4B 9999" \
		"ok raw $SRV4"
	expect_not_listed "$CG"
}

test_status() {
	daemon_up
	local a=$CG/a b=$CG/b f=$CASEDIR/status.json
	cg_make "$a"
	cg_make "$b"
	status_json "$f"
	json_check "$f" "d.get('ok') is True and isinstance(d.get('sandboxes'), list)" ||
		fail "status --json before any attach"
	attach "$a" --mode allowlist --allow $SRV4 --allow "[$SRV6]:443"
	log "attach by a path relative to the cgroup2 mount"
	attach "${b#"$CGROOT"/}" --mode no-network --model-endpoint $SRV4:8443
	status_json "$f"
	json_check "$f" "
		len([s for s in d['sandboxes'] if s['cgroup_id'] in ($(cg_id "$a"), $(cg_id "$b"))]) == 2
		and all(isinstance(s['generation'], int) and len(s['digest']) == 16
			and int(s['digest'], 16) >= 0 and s['hooks'] and s['policy']['network_mode']
			for s in d['sandboxes'])" || fail "status does not list both sandboxes well"
	expect_listed "$a" "s['policy']['network_mode'] == 'allowlist' and
		'198.18.0.2' in str(s['policy']['allowed_hosts']) and 'connect4' in s['hooks']
		and 'connect6' in s['hooks']"
	expect_listed "$b" "s['policy']['network_mode'] == 'no-network'"
	log "status --cgroup shows that sandbox only"
	status_json "$f" "$b"
	json_check "$f" "[s['cgroup_id'] for s in d['sandboxes']] == [$(cg_id "$b")]" ||
		fail "status --cgroup $b"
	log "status --pid"
	sleep 60 &
	local sleeper=$!
	echo $sleeper >"$b/cgroup.procs"
	bfs status --pid $sleeper --json >"$f" 2>&1
	kill $sleeper
	cat "$f"
	json_check "$f" "[s['cgroup_id'] for s in d['sandboxes']] == [$(cg_id "$b")]" ||
		fail "status --pid $sleeper"
	detach "$a"
	expect_not_listed "$a"
	expect_listed "$b"
}

test_verify_locked() {
	world_up
	daemon_up
	local f=$CASEDIR/verify.json
	attach "$CG" --mode allowlist --allow $SRV4 --model-endpoint $SRV4B:8443
	expect_status 0 bfs verify --cgroup "$CG" --json
	cp "$CASEDIR/last.out" "$f"
	json_check "$f" "d['ok'] is True and d['lockdown_complete'] is True and d['checks']
		and all(c['ok'] is True and c['name'] for c in d['checks'])" || fail "verify --json"
	log "human output, same verdict"
	expect_status 0 bfs verify --cgroup "$CG"
	log "a cgroup without bfbpf is not locked down"
	local other=$CGBASE/$CASE-unattached
	cg_make "$other"
	expect_status 1 bfs verify --cgroup "$other" --json
	[ -s "$CASEDIR/last.out" ] && {
		cp "$CASEDIR/last.out" "$f"
		json_check "$f" "d.get('lockdown_complete') is not True" || fail "verify said an open cgroup is locked"
	}
	log "a public sandbox is not locked down either"
	update "$CG" --mode public
	expect_status 1 bfs verify --cgroup "$CG" --json
}

test_cgroup_removed_while_down() {
	world_up
	daemon_up
	local gone=$CG-gone id # a sibling: nested sandboxes are refused
	cg_make "$gone"
	id=$(cg_id "$gone")
	attach "$CG" --mode allowlist --allow $SRV4
	attach "$gone" --mode allowlist --allow $SRV4
	[ -d "$PINS/links/$id" ] || fail "no pinned links for $gone"
	log "kill -9 the daemon, then remove one sandbox's cgroup"
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	cg_remove "$gone"
	[ -d "$gone" ] && fail "cannot remove $gone"
	log "a new daemon re-adopts the live sandbox and drops the removed one's pins"
	daemon_start
	daemon_wait
	expect_listed "$CG" "s['policy']['network_mode'] == 'allowlist'"
	status_json "$CASEDIR/status.json" >/dev/null
	json_check "$CASEDIR/status.json" "len(d['sandboxes']) == 1" ||
		fail "the removed cgroup is still listed"
	[ -e "$PINS/links/$id" ] && fail "the removed cgroup's links are still pinned"
	expect "$CG" "ok tcp $SRV4 7000" "denied tcp $SRV4B 7000"
}

test_daemon_kill9_readopt() {
	world_up
	daemon_up
	attach "$CG" --mode allowlist --allow $SRV4
	expect "$CG" "denied tcp $SRV4B 7000"
	log "kill -9 the daemon"
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	! kill -0 "$DAEMON_PID" 2>/dev/null || fail "the daemon survived kill -9"
	log "the CLI says the daemon is unreachable (exit 1)"
	expect_status 1 bfs status --json
	log "enforcement stays in place"
	expect "$CG" \
		"ok tcp $SRV4 7000" \
		"denied tcp $SRV4B 7000" \
		"denied udp-sendto $SRV6 9999" \
		"denied raw $SRV4"
	log "a new daemon (same socket and bpffs) re-adopts the sandbox"
	daemon_start
	daemon_wait
	expect_listed "$CG" "s['policy']['network_mode'] == 'allowlist' and '198.18.0.2' in str(s['policy']['allowed_hosts'])"
	expect "$CG" "denied tcp $SRV4B 7000"
	update "$CG" --mode allowlist --allow $SRV4B
	expect "$CG" \
		"ok tcp $SRV4B 7000" \
		"denied tcp $SRV4 7000"
	expect_listed "$CG" "'198.18.0.3' in str(s['policy']['allowed_hosts'])"
	detach "$CG"
	expect "$CG" \
		"ok tcp $SRV4 7000" \
		"ok tcp $SRV4B 7000"
	expect_not_listed "$CG"
}

# An attach that the kernel refuses part-way (the allow maps are full) leaves
# nothing behind: no links, no pins, no map entries, no listing, no restriction.
test_attach_fails_cleanly() {
	world_up
	daemon_up
	local big=$CASEDIR/big.json n=0 cg
	"$PYTHON" -c 'import json, sys
hosts = ["10.%d.%d.%d" % (i >> 16, (i >> 8) & 255, i & 255) for i in range(99999)]
json.dump({"network_mode": "allowlist", "allowed_hosts": hosts + ["198.18.0.2"]}, open(sys.argv[1], "w"))' "$big"
	log "fill the exact map (524,288 entries) with 100,000-entry sandboxes until an attach fails"
	while :; do
		n=$((n + 1))
		cg=$CG/s$n
		mkdir "$cg"
		bfs attach --cgroup "$cg" --policy "$big" >"$CASEDIR/attach.out" 2>&1 || break
		[ $n -ge 8 ] && fail "eight 100,000-entry sandboxes fit in the maps: the test needs a smaller map"
	done
	cat "$CASEDIR/attach.out"
	grep -q "kernel" "$CASEDIR/attach.out" || fail "the failure does not say the kernel refused"
	log "attach $n failed: nothing of it remains"
	expect_not_listed "$cg"
	[ ! -e "$PINS/links/$(cg_id "$cg")" ] || fail "links of the failed attach are pinned"
	expect_ok "$cg" tcp $SRV4B 7000
	bfs status --json >"$CASEDIR/status.json"
	json_check "$CASEDIR/status.json" "len(d['sandboxes']) == $((n - 1))" || fail "status"
	log "the others are intact and verify"
	expect_status 0 bfs verify --cgroup "$CG/s1"
	expect_denied "$CG/s1" tcp $SRV4B 7000
	expect_ok "$CG/s1" tcp $SRV4 7000
}
