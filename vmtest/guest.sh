#!/bin/bash
# vmtest stage 2: runs as PID 1 inside the guest, on the host's root filesystem (9p,
# read-only, under a tmpfs overlay), started by vmtest/init. Sets up what the
# integration suite needs (proc, sys, devtmpfs, cgroup2 at /sys/fs/cgroup, bpffs at
# /sys/fs/bpf, fresh /tmp and /run, the guest kernel's modules for modprobe), runs the
# suite with its output on the console and in /vmtest/suite.log (the host's results
# directory), records the exit status, the kernel log and the release, and powers off.
# With VMTEST_MODE=shell it starts an interactive shell instead of the suite.
set -uo pipefail

export PATH="${VMTEST_PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}"
export HOME=/root LANG=C.UTF-8 VMTEST=1
OUT=/vmtest

log() { echo "vmtest-guest: $*"; }

power_off() {
	sync
	# The host's qemu runs with -no-reboot, so either way qemu exits.
	echo o >/proc/sysrq-trigger 2>/dev/null
	sleep 5
	echo b >/proc/sysrq-trigger 2>/dev/null
	sleep 30
}
# PID 1 must never exit (that is a kernel panic): always end with a power off.
trap power_off EXIT

must_mount() { # must_mount TYPE SRC DIR [OPTS]
	mkdir -p "$3"
	mount -t "$1" ${4:+-o "$4"} "$2" "$3" || { log "FATAL: mount -t $1 $2 $3 failed"; exit 1; }
}

must_mount proc proc /proc
must_mount sysfs sysfs /sys
mountpoint -q /dev || must_mount devtmpfs devtmpfs /dev
must_mount devpts devpts /dev/pts "newinstance,ptmxmode=0666,mode=0620"
must_mount tmpfs tmpfs /dev/shm "mode=1777"
# A repository under /tmp, /var/tmp or /run (a CI clone) is carried across the fresh
# tmpfs mounts below: bound aside first, moved back after.
carry_repo=
case "$VMTEST_REPO" in
/tmp/* | /var/tmp/* | /run/*)
	mkdir -p /mnt/vmtest-repo && mount --bind "$VMTEST_REPO" /mnt/vmtest-repo && carry_repo=1 ;;
esac
must_mount tmpfs tmpfs /tmp "mode=1777"
must_mount tmpfs tmpfs /var/tmp "mode=1777"
must_mount tmpfs tmpfs /run "mode=0755"
if [ -n "$carry_repo" ]; then
	mkdir -p "$VMTEST_REPO" && mount --move /mnt/vmtest-repo "$VMTEST_REPO" ||
		{ log "FATAL: cannot carry $VMTEST_REPO into the guest"; exit 1; }
fi
mkdir -p /run/lock /run/netns
must_mount cgroup2 cgroup2 /sys/fs/cgroup "nsdelegate"
must_mount bpf bpffs /sys/fs/bpf "mode=0700"
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
[ -e /dev/ptmx ] || ln -s pts/ptmx /dev/ptmx
ln -sfn /proc/self/fd /dev/fd

REL=$(uname -r)
# The guest kernel's modules (the package's lib/modules/<release>, from the host's cache)
# and its config, where bfbpf check and modprobe look for them.
if [ -n "${VMTEST_MODDIR:-}" ] && [ -d "$VMTEST_MODDIR" ]; then
	mkdir -p "/lib/modules/$REL"
	mount --bind "$VMTEST_MODDIR" "/lib/modules/$REL" || log "cannot bind $VMTEST_MODDIR at /lib/modules/$REL"
fi
if [ -n "${VMTEST_BOOTDIR:-}" ] && [ -d "$VMTEST_BOOTDIR" ]; then
	mkdir -p /boot
	cp "$VMTEST_BOOTDIR"/config-"$REL" "$VMTEST_BOOTDIR"/System.map-"$REL" /boot/ 2>/dev/null
fi

hostname vmtest 2>/dev/null || echo vmtest >/proc/sys/kernel/hostname
ip link set lo up 2>/dev/null || log "cannot bring lo up"
# The guest has no network but its namespaces; no host resolver either.
: >/etc/resolv.conf 2>/dev/null
# An oops ends the run at once (panic=-1 and qemu -no-reboot turn it into an exit) rather
# than leaving a half-dead kernel to time out.
sysctl -qw kernel.panic_on_oops=1 2>/dev/null

# Modules the tests need but the kernel does not load by itself (the rest, e.g. veth,
# load on demand through /sbin/modprobe and /lib/modules/<release>).
for m in ${VMTEST_PRELOAD:-}; do
	modprobe -q "$m" 2>/dev/null || log "modprobe $m failed (continuing)"
done

echo "$REL" >"$OUT/release"

# --bpf-lsm on|off (run.sh): the boot exists to test one path of bfbpf, so a kernel that
# did not take the lsm= list ends the run here, not in a suite that quietly takes the other
# path. The list and bfbpf's own view of it go to the host, which judges them again.
lsms=$(cat /sys/kernel/security/lsm 2>/dev/null)
echo "$lsms" >"$OUT/lsm"
if [ -n "${VMTEST_BPF_LSM:-}" ]; then
	log "active LSMs: ${lsms:-none (no /sys/kernel/security/lsm)}"
	case ",$lsms," in
	*,bpf,*) [ "$VMTEST_BPF_LSM" = on ] || { log "FATAL: the BPF LSM is active, but this boot is without it (lsm: $lsms)"; exit 1; } ;;
	*) [ "$VMTEST_BPF_LSM" = off ] || { log "FATAL: the BPF LSM is not active (lsm: ${lsms:-none}); is CONFIG_BPF_LSM set?"; exit 1; } ;;
	esac
	if [ "${VMTEST_MODE:-run}" = run ] && [ -x "$OUT/bfbpf" ]; then
		"$OUT/bfbpf" check >"$OUT/check.txt" 2>&1
		grep -E '^[A-Za-z]+ +hook socket_lsm ' "$OUT/check.txt" >"$OUT/socket_lsm"
		log "bfbpf check: $(cat "$OUT/socket_lsm" 2>/dev/null || echo "no 'hook socket_lsm' line")"
	fi
fi
log "kernel $REL, $(nproc) CPUs, $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) MiB"

cd "$VMTEST_REPO" || { log "FATAL: no $VMTEST_REPO in the guest"; exit 1; }

if [ "${VMTEST_MODE:-run}" = shell ]; then
	cat <<EOF
vmtest-guest: interactive shell on kernel $REL; the host's root is read-only under a
vmtest-guest: tmpfs overlay (writes vanish on exit); $OUT is the host's $VMTEST_HOST_OUT.
vmtest-guest: run the suite:  $VMTEST_SUITE
vmtest-guest: leave:          exit (or Ctrl-a x)
EOF
	export TERM=${VMTEST_TERM:-linux} PS1='vmtest:\w# '
	# setsid -c makes the console the shell's controlling terminal (job control, Ctrl-C).
	setsid -c bash --norc -i </dev/console >/dev/console 2>&1
	exit 0
fi

suite_args=()
eval "suite_args=(${VMTEST_SUITE_ARGS:-})"
log "running: $VMTEST_SUITE ${suite_args[*]}"
start=$(date +%s)
if [ -x "$VMTEST_SUITE" ]; then
	"$VMTEST_SUITE" "${suite_args[@]}" </dev/null 2>&1 | tee "$OUT/suite.log"
else
	bash "$VMTEST_SUITE" "${suite_args[@]}" </dev/null 2>&1 | tee "$OUT/suite.log"
fi
rc=${PIPESTATUS[0]}
log "suite exited with status $rc after $(($(date +%s) - start)) s"
dmesg >"$OUT/dmesg.txt" 2>&1
echo "$rc" >"$OUT/suite.rc"
exit 0
