# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2086 # $out and the unit's ExecStart are split on purpose
# Cases: the Debian package (make deb), installed with apt into a fresh root that does not
# touch the host: in a private mount and network namespace, an overlay whose lower layer is
# the host's / and whose upper layer is a tmpfs, discarded when the case ends. From the
# installed files: man page, completion, hook, unit (systemd-analyze verify), `bfbpf check`,
# `bfbpf run` refusing a connect, and the daemon run under the unit's own hardening
# (NoNewPrivileges, UMask, CapabilityBoundingSet, read from the installed unit) attaching,
# verifying and refusing. Then apt purge, and nothing of the package may be left.

ALL_TESTS+=(package_install)

# The package: BFBPF_DEB, else the one `make deb` put in build/deb/.
pkg_deb_path() {
	local debs=("$IT_DIR"/../../build/deb/bfbpf_*_amd64.deb)
	echo "${BFBPF_DEB:-${debs[-1]}}"
}

# pkg_host_state: what the host has of the package (none of it may change).
pkg_host_state() {
	dpkg-query -W -f='${Status}\n' bfbpf 2>/dev/null || echo "not known to dpkg"
	ls -d /usr/sbin/bfbpf /lib/systemd/system/bfbpf.service /usr/share/man/man8/bfbpf.8.gz \
		/usr/share/containers/oci/hooks.d/bfbpf-hook.json 2>/dev/null
}

# pkg_in_root CMD...: CMD in the fresh root (PKG_ROOT), with a plain PATH.
pkg_in_root() {
	chroot "$PKG_ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1 "$@"
}

# pkg_root_up DIR: the overlay root in DIR/merged, /proc, /sys (cgroup2, bpffs), /dev bound in,
# and its own /run and /tmp. Runs inside the private mount namespace.
pkg_root_up() {
	local dir=$1
	mount -t tmpfs -o mode=0755 pkg-layers "$dir" || fail "tmpfs for the overlay"
	mkdir "$dir/upper" "$dir/work" "$dir/merged"
	mount -t overlay pkg-root -o "lowerdir=/,upperdir=$dir/upper,workdir=$dir/work" "$dir/merged" ||
		fail "overlay of / (upper on tmpfs)"
	PKG_ROOT=$dir/merged
	PKG_UPPER=$dir/upper
	mount -t proc proc "$PKG_ROOT/proc" || fail "proc in the root"
	mount --rbind /sys "$PKG_ROOT/sys" || fail "sys in the root"
	mount --rbind /dev "$PKG_ROOT/dev" || fail "dev in the root"
	# No /run/systemd/system: the package's scripts do not talk to a systemd (there is none).
	mount -t tmpfs -o mode=0755 pkg-run "$PKG_ROOT/run" || fail "run in the root"
	mount -t tmpfs -o mode=1777 pkg-tmp "$PKG_ROOT/tmp" || fail "tmp in the root"
	# In the root only: man-db's trigger (a whole mandb run at install and purge, minutes
	# under vmtest's TCG) skips without this file, as in Debian's build chroots.
	rm -f "$PKG_ROOT/var/lib/man-db/auto-update"
	ip link set lo up || fail "lo up"
}

# pkg_check_files: what the package installed, read as its users would.
pkg_check_files() {
	local out
	[ "$(pkg_in_root sh -c 'command -v bfbpf')" = /usr/sbin/bfbpf ] || fail "bfbpf not on PATH"
	pkg_in_root bfbpf --version || fail "bfbpf --version"
	# man finds the pages (-w); -l renders them without writing man-db's cat cache in
	# /var/cache/man, which is man's (its cron job cleans it), not the package's.
	out=$(pkg_in_root man -w bfbpf)
	[ "$out" = /usr/share/man/man8/bfbpf.8.gz ] || fail "man -w bfbpf: [$out]"
	out=$(pkg_in_root man -l -P cat "$out" 2>&1) || fail "man bfbpf: $out"
	grep -q 'bfbpf attach' <<<"$out" || fail "man bfbpf lacks its commands"
	out=$(pkg_in_root man -w 5 bfbpf-policy) || fail "man -w 5 bfbpf-policy"
	pkg_in_root man -l -P cat "$out" | grep -q runtime_network || fail "man 5 bfbpf-policy"
	# shellcheck disable=SC2016 # expanded by the root's bash
	out=$(pkg_in_root bash -c '. /usr/share/bash-completion/completions/bfbpf
		COMP_WORDS=(bfbpf attach --net); COMP_CWORD=2; _bfbpf; echo "${COMPREPLY[*]}"') ||
		fail "the completion does not load"
	[ "$out" = --netns ] || fail "completion of 'bfbpf attach --net': [$out]"
	pkg_in_root bfbpf completion bash | cmp - "$PKG_ROOT/usr/share/bash-completion/completions/bfbpf" ||
		fail "the installed completion is not what the installed binary generates"
	pkg_in_root /usr/bin/python3 -c 'import json, sys
h = json.load(open("/usr/share/containers/oci/hooks.d/bfbpf-hook.json"))
sys.exit(h["hook"]["path"] != "/usr/sbin/bfbpf")' || fail "the hook file does not name /usr/sbin/bfbpf"
	grep -q 'exec /usr/sbin/bfbpf docker-runtime' "$PKG_ROOT/usr/sbin/bfbpf-runc" ||
		fail "bfbpf-runc does not run /usr/sbin/bfbpf"
	[ -L "$PKG_ROOT/etc/systemd/system/multi-user.target.wants/bfbpf.service" ] ||
		fail "bfbpf.service was not enabled"
	# It exits 0 on warnings (NOTES.md): its output must be empty. --man=no: its own check
	# of Documentation=man:... formats the pages into man-db's cat cache; man -w above
	# finds both pages the unit names.
	grep -qx 'Documentation=man:bfbpf(8) man:bfbpf-policy(5)' \
		"$PKG_ROOT/lib/systemd/system/bfbpf.service" || fail "the unit's Documentation="
	out=$(pkg_in_root systemd-analyze verify --man=no /lib/systemd/system/bfbpf.service 2>&1) ||
		fail "systemd-analyze verify: $out"
	[ -z "$out" ] || fail "systemd-analyze verify warns: $out"
}

# pkg_listen PORT...: TCP listeners on 127.0.0.1 that log each connection to $PKG_TMP/PORT.
pkg_listen() {
	local port
	for port in "$@"; do
		: >"$PKG_TMP/$port"
		/usr/bin/python3 -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
open(sys.argv[2] + ".ready", "w").close()
while True:
    c, _ = s.accept(); open(sys.argv[2], "a").write("x\n"); c.close()' "$port" "$PKG_TMP/$port" &
		defer "kill $!"
		wait_for_file "$PKG_TMP/$port.ready" 10 || fail "listener on $port"
	done
}

# The client both confinements run: one connect per port, "PORT ok" or "PORT errno-name".
PKG_CLIENT='import errno, socket, sys
for port in sys.argv[1:]:
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", int(port))); print(port, "ok")
    except OSError as e:
        print(port, errno.errorcode[e.errno])'

# pkg_expect_counts ALLOWED DENIED: one connection reached ALLOWED's listener, none DENIED's.
pkg_expect_counts() {
	local a d
	sleep 0.2
	a=$(wc -l <"$PKG_TMP/$1")
	d=$(wc -l <"$PKG_TMP/$2")
	if [ "$a" != 1 ] || [ "$d" != 0 ]; then
		fail "connections: $1 got $a (want 1), $2 got $d (want 0)"
	fi
	: >"$PKG_TMP/$1"
}

# pkg_run_confines: bfbpf run from the package: the allowed port answers, the other is refused.
pkg_run_confines() {
	local out
	out=$(pkg_in_root bfbpf run --user nobody --cgroup-parent "$CG" --bpffs "$PINS/run" \
		--mode allowlist --allow 127.0.0.1:7301 -- /usr/bin/python3 -c "$PKG_CLIENT" 7301 7302)
	out=${out//$'\n'/ }
	log "bfbpf run: $out"
	[ "$out" = "7301 ok 7302 EPERM" ] || fail "bfbpf run: [$out], want 7301 ok, 7302 EPERM"
	pkg_expect_counts 7301 7302
}

# pkg_caps PID: the effective capabilities of PID, "cap_a,cap_b,...".
pkg_caps() {
	capsh --decode="$(sed -n 's/^CapEff:[[:space:]]*//p' "/proc/$1/status")" | sed 's/^.*=//'
}

# pkg_unit_value KEY: KEY's value in the installed unit.
pkg_unit_value() {
	sed -n "s/^$1=//p" "$PKG_ROOT/lib/systemd/system/bfbpf.service"
}

# pkg_daemon_hardened: the unit's ExecStart under its NoNewPrivileges, UMask and
# CapabilityBoundingSet (through setpriv, as systemd applies them), with this case's
# socket and pins; then attach, verify and a refused connect from the cgroup.
pkg_daemon_hardened() {
	local exec caps umask nnp bounding="-all" cap cg=$CG/pkg sock=/run/bfbpf/bfbpf.sock pid out
	exec=$(pkg_unit_value ExecStart)
	caps=$(pkg_unit_value CapabilityBoundingSet)
	umask=$(pkg_unit_value UMask)
	nnp=$(pkg_unit_value NoNewPrivileges)
	if [ "$exec" != "/usr/sbin/bfbpf daemon" ] || [ -z "$caps" ] || [ "$umask" != 0077 ] ||
		[ "$nnp" != yes ]; then
		fail "the unit's settings: [$exec] [$caps] [$umask] [$nnp]"
	fi
	caps=${caps,,}
	for cap in $caps; do bounding+=",+${cap#cap_}"; done
	# RuntimeDirectory=bfbpf, mode 0755.
	mkdir -m 0755 "$PKG_ROOT/run/bfbpf" || fail "the runtime directory"
	(umask "$umask" && exec chroot "$PKG_ROOT" setpriv --no-new-privs --bounding-set="$bounding" \
		$exec --bpffs "$PINS" --accept-vsock --log-level debug) >>"$CASEDIR/daemon.log" 2>&1 &
	pid=$!
	defer "daemon_stop $pid"
	SOCK=$PKG_ROOT$sock
	# shellcheck disable=SC2034 # daemon_wait's
	DAEMON_PID=$pid
	daemon_wait
	grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$pid/status" || fail "the daemon has no no_new_privs"
	# What the unit keeps and this shell has (this machine's root lacks cap_sys_resource).
	out=$(pkg_caps "$pid")
	log "the daemon's capabilities: $out"
	for cap in $caps; do
		[[ ,$(pkg_caps $$), != *,$cap,* ]] || [[ ,$out, == *,$cap,* ]] || fail "the daemon lacks $cap"
	done
	[[ ,$(pkg_caps $$), == *,cap_sys_module,* ]] || fail "this shell has no cap_sys_module"
	[[ ,$out, != *,cap_sys_module,* ]] || fail "the bounding set was not applied (cap_sys_module)"
	[ "$(stat -c %a "$SOCK")" = 600 ] || fail "socket mode $(stat -c %a "$SOCK")"
	mkdir "$cg" || fail "cgroup $cg"
	pkg_in_root bfbpf attach --socket "$sock" --cgroup "$cg" --netns /proc/$$/ns/net \
		--mode allowlist --no-loopback --allow 127.0.0.1:7301 || fail "attach through the daemon"
	pkg_in_root bfbpf verify --socket "$sock" --cgroup "$cg" || fail "verify under the unit's hardening"
	out=$( (echo "$BASHPID" >"$cg/cgroup.procs" && exec /usr/bin/python3 -c "$PKG_CLIENT" 7301 7302))
	out=${out//$'\n'/ }
	log "attached: $out"
	[ "$out" = "7301 ok 7302 EPERM" ] || fail "attached cgroup: [$out], want 7301 ok, 7302 EPERM"
	pkg_expect_counts 7301 7302
	pkg_in_root bfbpf detach --socket "$sock" --cgroup "$cg" || fail "detach"
	daemon_stop "$pid"
}

# pkg_purge_clean: apt purge, then nothing of the package in the root's changes (the upper
# layer), its files gone, and its runtime directory gone.
pkg_purge_clean() {
	local files f left
	files=$(pkg_in_root dpkg-query -L bfbpf) || fail "dpkg -L bfbpf"
	pkg_in_root apt-get purge -y -q bfbpf >"$CASEDIR/purge.log" 2>&1 || fail "apt purge (purge.log)"
	# shellcheck disable=SC2016 # dpkg's format
	pkg_in_root dpkg-query -W -f='${Status}' bfbpf 2>/dev/null | grep -q 'install ok' &&
		fail "bfbpf still installed after purge"
	# A directory the host has too (/usr/share/man/man8) is shared, not the package's.
	for f in $files; do
		[ -e "$PKG_ROOT$f" ] || continue
		[ -d "$PKG_ROOT$f" ] && [ -d "$f" ] && continue
		fail "left after purge: $f"
	done
	[ -e "$PKG_ROOT/run/bfbpf" ] && fail "left after purge: /run/bfbpf"
	left=$(cd "$PKG_UPPER" && find . -iname '*bfbpf*')
	[ -z "$left" ] || fail "left after purge: $left"
	log "purged: $(echo "$files" | wc -l) paths of the package gone, nothing named bfbpf left (at ${SECONDS}s)"
}

# pkg_inside DEB DIR: the whole case inside the private mount and network namespace.
pkg_inside() {
	local deb=$1 dir=$2 out
	pkg_root_up "$dir"
	PKG_TMP=$PKG_ROOT/tmp
	cp "$deb" "$PKG_TMP/" || fail "copy the package"
	out=$(cd "$PKG_UPPER" && find . -iname '*bfbpf*')
	[ -z "$out" ] || fail "the fresh root has bfbpf already: $out"
	pkg_in_root apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")" \
		>"$CASEDIR/install.log" 2>&1 || fail "apt install (install.log: $(tail -5 "$CASEDIR/install.log"))"
	log "installed $(basename "$deb") with apt into the overlay root (at ${SECONDS}s)"
	pkg_check_files
	pkg_in_root bfbpf check || fail "bfbpf check"
	pkg_listen 7301 7302
	# The control: unconfined, both ports answer.
	out=$(/usr/bin/python3 -c "$PKG_CLIENT" 7301 7302)
	out=${out//$'\n'/ }
	[ "$out" = "7301 ok 7302 ok" ] || fail "unconfined: [$out]"
	: >"$PKG_TMP/7301" && : >"$PKG_TMP/7302"
	pkg_run_confines
	log "bfbpf run done (at ${SECONDS}s)"
	pkg_daemon_hardened
	log "the daemon done (at ${SECONDS}s)"
	pkg_purge_clean
}

test_package_install() {
	local deb before after
	deb=$(pkg_deb_path)
	[ -f "$deb" ] || skip "no package: make deb (or set BFBPF_DEB)"
	command -v apt-get >/dev/null || skip "no apt-get"
	before=$(pkg_host_state)
	mkdir "$CASEDIR/root"
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount --net --propagation private bash -c '
		. "$IT_DIR/lib.sh"; . "$IT_DIR/test-19-package.sh"
		CASEDIR=$1 CG=$2 PINS=$3
		trap run_deferred EXIT
		pkg_inside "$4" "$5"' pkg "$CASEDIR" "$CG" "$PINS" "$deb" "$CASEDIR/root" ||
		fail "inside the fresh root (above)"
	after=$(pkg_host_state)
	[ "$before" = "$after" ] || fail "the host changed: before [$before], after [$after]"
	[ -e /usr/sbin/bfbpf ] && [[ $before != */usr/sbin/bfbpf* ]] && fail "the host got /usr/sbin/bfbpf"
	log "the host: unchanged (${after//$'\n'/, })"
}
