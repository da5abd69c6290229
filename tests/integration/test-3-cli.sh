# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # the address constants need no quotes
# Cases: the CLI contract — bad input, missing cgroups, `run`, `check`.

ALL_TESTS+=(bad_wildcard bad_cidr_host_bits bad_unknown_key bad_port bad_allow_internet
	attach_missing_cgroup run_exit_status run_cleanup run_sigterm check)

# bad_input NEEDLE POLICY-ARGS...: an invalid policy exits 2 with one stderr line
# naming NEEDLE, on attach (nothing gets attached) and on update (the sandbox
# keeps enforcing its old policy, digest unchanged). Each bad policy would also
# allow 198.18.0.3 if it were half applied.
bad_input() {
	local needle=$1
	shift
	world_up
	daemon_up
	log "attach with the bad policy"
	expect_status 2 bfs attach --cgroup "$CG" "$@"
	expect_one_stderr_line "$needle"
	expect_not_listed "$CG"
	expect "$CG" "ok tcp $SRV4B 7000"
	log "update of an attached sandbox with the bad policy"
	attach "$CG" --mode allowlist --allow $SRV4
	local f=$CASEDIR/before.json g=$CASEDIR/after.json
	status_json "$f" "$CG"
	expect_status 2 bfs update --cgroup "$CG" "$@"
	expect_one_stderr_line "$needle"
	status_json "$g" "$CG"
	# What the update could have changed; not the clocks and counters that move anyway.
	"$PYTHON" -c 'import json,sys
keys = ("cgroup", "cgroup_id", "generation", "digest", "policy", "entries", "hooks")
a, b = ([{k: s.get(k) for k in keys} for s in json.load(open(p))["sandboxes"]] for p in sys.argv[1:])
sys.exit(a != b)' "$f" "$g" ||
		fail "status changed after a rejected update"
	expect "$CG" \
		"ok tcp $SRV4 7000" \
		"denied tcp $SRV4B 7000" \
		"denied tcp $SRV6 7000"
}

policy_file() {
	local f=$CASEDIR/policy.json
	echo "$1" >"$f"
	echo "$f"
}

test_bad_wildcard() {
	bad_input "a.*.com" --mode allowlist --allow $SRV4B --allow "a.*.com"
}

test_bad_cidr_host_bits() {
	bad_input "198.18.0.1/24" --mode allowlist --allow $SRV4B --allow 198.18.0.1/24
}

test_bad_unknown_key() {
	bad_input "alow_loopback" --policy "$(policy_file \
		'{"network_mode": "allowlist", "allowed_hosts": ["198.18.0.3"], "alow_loopback": false}')"
}

test_bad_port() {
	bad_input "198.18.0.3:70000" --mode allowlist --allow 198.18.0.3:70000
}

test_bad_allow_internet() {
	bad_input "allow_internet" --policy "$(policy_file \
		'{"network_mode": "allowlist", "allowed_hosts": ["198.18.0.3"], "allow_internet": true}')"
}

test_attach_missing_cgroup() {
	daemon_up
	local missing=$CG/no-such-cgroup
	expect_status 1 bfs attach --cgroup "$missing" --mode no-network
	grep -q . "$CASEDIR/last.err" || fail "no message on stderr"
	grep -qF "no-such-cgroup" "$CASEDIR/last.err" || fail "the message does not name the cgroup"
	[ ! -e "$missing" ] || fail "attach created $missing"
	log "the daemon is still fine"
	expect_status 0 bfs status --json
}

# bfrun ARGS...: `bfbpf run` in the sandbox netns, the command as root (--allow-root: run
# refuses uid 0 without it; test-9-run-escapes.sh runs commands as --user 65534 too).
bfrun() { timeout -k 5 "$CLI_TIMEOUT" nsenter --net="/run/netns/$NS_SBX" "$BFBPF" run --allow-root "$@"; }

test_run_exit_status() {
	world_up
	expect_status 0 bfrun --mode allowlist --allow $SRV4 -- "$PYTHON" "$PROBE" tcp $SRV4 7000
	grep -q "ok" "$CASEDIR/last.out" || fail "the command's output is missing"
	expect_status 3 bfrun --mode allowlist --allow $SRV4 -- sh -c 'exit 3'
	log "the command inside is confined"
	expect_status 1 bfrun --mode allowlist --allow $SRV4 -- "$PYTHON" "$PROBE" tcp $SRV4B 7000
	grep -q EPERM "$CASEDIR/last.out" || fail "not denied with EPERM"
	expect_status 1 bfrun --mode allowlist --allow $SRV4 -- "$PYTHON" "$PROBE" udp-sendto $SRV6 9999
	expect_status 1 bfrun --mode no-network -- "$PYTHON" "$PROBE" raw $SRV4
	log "a policy file works too"
	expect_status 0 bfrun --policy "$(policy_file '{"network_mode": "allowlist", "allowed_hosts": ["198.18.0.3:7000"]}')" \
		-- "$PYTHON" "$PROBE" tcp $SRV4B 7000
	log "an invalid policy: exit 2 and the command never runs"
	local marker=$CASEDIR/ran
	expect_status 2 bfrun --mode allowlist --allow "a.*.com" -- touch "$marker"
	expect_one_stderr_line "a.*.com"
	[ ! -e "$marker" ] || fail "the command ran despite an invalid policy"
}

test_run_cleanup() {
	world_up
	local before after
	before=$(run_leftovers_snapshot)
	expect_status 0 bfrun --mode allowlist --allow $SRV4 -- "$PYTHON" "$PROBE" tcp $SRV4 7000
	expect_status 5 bfrun --mode no-network -- sh -c 'exit 5'
	after=$(run_leftovers_snapshot)
	if [ "$before" != "$after" ]; then
		diff <(echo "$before") <(echo "$after")
		fail "bfbpf run left cgroups or pins behind"
	fi
}

test_run_sigterm() {
	world_up
	local before after pidfile=$CASEDIR/child.pid child runpid n launcher cgroup procs pid
	before=$(run_leftovers_snapshot)
	# Not through bfrun: $! must be bfbpf itself (nsenter execs it), not a subshell.
	nsenter --net="/run/netns/$NS_SBX" "$BFBPF" run --allow-root --mode allowlist --allow $SRV4 -- \
		sh -c "echo \$\$ > $pidfile; exec sleep 120" >"$CASEDIR/run.out" 2>&1 &
	launcher=$!
	defer "kill -KILL $launcher"
	wait_for_file "$pidfile" 30 || { cat "$CASEDIR/run.out"; fail "the child did not start"; }
	# The command has its own pid namespace: the pid it wrote is that namespace's. Find
	# the processes from here: bfbpf run's own pid (nsenter may fork, so $! or its child)
	# names its transient cgroup, which holds the command and its init.
	for runpid in $launcher $(pgrep -P $launcher); do
		cgroup=$CGROOT/bfbpf-run-$runpid
		[ -d "$cgroup" ] && break
	done
	[ -d "$cgroup" ] || fail "no bfbpf-run cgroup for bfbpf run $launcher"
	procs=$(cat "$cgroup/cgroup.procs")
	child=
	for pid in $procs; do
		grep -q sleep /proc/"$pid"/cmdline 2>/dev/null && child=$pid
	done
	[ -n "$child" ] || fail "the command is not in $cgroup (it holds: $procs)"
	echo "bfbpf run $runpid, child $child (pid $(cat "$pidfile") in its namespace): $(grep '^0::' /proc/"$child"/cgroup)"
	grep -q "^0::.*/bfbpf-run-$runpid\$" /proc/"$child"/cgroup || fail "the child is not in a bfbpf-run cgroup"
	[ "$(grep '^0::' /proc/"$child"/cgroup)" != "$(grep '^0::' /proc/self/cgroup)" ] ||
		fail "the child runs in the caller's cgroup"
	log "SIGTERM to bfbpf run"
	kill -TERM $runpid
	n=0
	while kill -0 $runpid 2>/dev/null; do
		n=$((n + 1))
		[ $n -gt 200 ] && fail "bfbpf run still alive 10 s after SIGTERM"
		sleep 0.05
	done
	wait $launcher 2>/dev/null
	echo "bfbpf run exited"
	cat "$CASEDIR/run.out"
	# The command and its init alike.
	for child in $procs; do
		n=0
		while [ -e /proc/"$child" ] && ! grep -q '^State:.*Z' /proc/"$child"/status 2>/dev/null; do
			n=$((n + 1))
			if [ $n -gt 100 ]; then
				ps -o pid,ppid,pgid,stat,cmd -p "$child"
				cat /proc/"$child"/cgroup
				kill -KILL "$child"
				fail "the child $child outlived bfbpf run"
			fi
			sleep 0.05
		done
	done
	after=$(run_leftovers_snapshot)
	if [ "$before" != "$after" ]; then
		diff <(echo "$before") <(echo "$after")
		fail "bfbpf run left cgroups or pins behind after SIGTERM"
	fi
}

test_check() {
	[ -x "$BFBPF" ] || fail "$BFBPF is missing"
	expect_status 0 bf check
	expect_status 0 bf check --json
	json_check "$CASEDIR/last.out" "isinstance(d, dict)" || fail "check --json is not one JSON object"
}
