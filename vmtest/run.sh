#!/bin/bash
# vmtest: run bfbpf's integration suite inside a QEMU guest booting Debian's 6.1 kernel
# (pinned in vmtest/kernel.version) or any other kernel image (--kernel).
#
# The guest's root is the host's own root filesystem, shared read-only over 9p under a
# tmpfs overlay, so every tool of the host (bash, iproute2, dnsmasq, curl, dig, python3,
# bpftool) and the freshly built build/bfbpf are there. A busybox initramfs loads the
# drivers the kernel has as modules (virtio, 9p, overlay, veth), then vmtest/guest.sh
# mounts cgroup2, bpffs and the rest and runs the suite as root.
#
# --bpf-lsm on|off boots with bpf added to or removed from the kernel's lsm= list, and the
# guest proves it (/sys/kernel/security/lsm, bfbpf check): `make vmtest` boots twice, once
# each way, so both the lsm_cgroup path and the path without it run on the same kernel.
#
# Prints the suite's lines as they come, then one summary line
#   vmtest: kernel <release>[ (BPF LSM on|off)]: N passed, M failed[, K skipped]
# and exits 0 only if every test passed; a guest that times out, panics or logs a kernel
# WARNING/BUG fails the run. See docs/testing.md.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)

usage() {
	cat <<EOF
usage: vmtest/run.sh [--kernel BZIMAGE [--modules DIR]] [--bpf-lsm on|off] [--suite PATH]
                     [--shell] [--timeout SECONDS] [-- SUITE-ARGS...]

  --kernel BZIMAGE  boot this kernel image instead of the pinned Debian kernel
                    (vmtest/kernel.version); it needs virtio-pci, 9p and overlayfs,
                    built in or as modules in --modules
  --modules DIR     the image's lib/modules/<release> directory (default: found next to
                    the image, ../lib/modules/<release>, or /lib/modules/<release>)
  --bpf-lsm on|off  boot with bpf added to (on) or removed from (off) the lsm= list
                    (the kernel config's CONFIG_LSM); the guest checks that the BPF
                    LSM is active (on) or absent (off) and the run fails otherwise.
                    Default: \$VMTEST_BPF_LSM, else the kernel's own list, unchecked.
                    Logs then go to \$VMTEST_OUT/bpf-lsm-on|off
  --suite PATH      the test suite to run in the guest (default: tests/integration/run.sh);
                    vmtest/selftest.sh checks the guest environment itself
  --shell           boot to an interactive shell in the guest instead of running the suite
  --timeout SECS    kill the guest after SECS seconds (default: \$VMTEST_TIMEOUT or 1500)

Environment: VMTEST_TIMEOUT, VMTEST_MEM (3G), VMTEST_SMP (2), VMTEST_ACCEL (auto|kvm|tcg),
VMTEST_MODULES (extra modules for the initramfs, default "veth"), VMTEST_OUT (build/vmtest),
VMTEST_CACHE (vmtest/cache), VMTEST_QUIET=1 (do not echo the guest console live),
VMTEST_PASSENV (host variables forwarded to the suite when set; default
"PROBE_TIMEOUT CASE_TIMEOUT KEEP").
Logs: \$VMTEST_OUT/console.log (the guest console), \$VMTEST_OUT/guest/{suite.log,dmesg.txt},
\$VMTEST_OUT/summary (the last lines printed); under \$VMTEST_OUT/bpf-lsm-on|off with --bpf-lsm.
EOF
}

die() {
	echo "vmtest: error: $*" >&2
	exit 2
}

KERNEL_IMG=""
MODDIR=""
SUITE=""
MODE=run
TIMEOUT=${VMTEST_TIMEOUT:-1500}
BPF_LSM=${VMTEST_BPF_LSM:-}
SUITE_ARGS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) [ $# -ge 2 ] || die "--kernel needs a path"; KERNEL_IMG=$2; shift 2 ;;
	--kernel=*) KERNEL_IMG=${1#*=}; shift ;;
	--modules) [ $# -ge 2 ] || die "--modules needs a directory"; MODDIR=$2; shift 2 ;;
	--modules=*) MODDIR=${1#*=}; shift ;;
	--suite) [ $# -ge 2 ] || die "--suite needs a path"; SUITE=$2; shift 2 ;;
	--suite=*) SUITE=${1#*=}; shift ;;
	--bpf-lsm) [ $# -ge 2 ] || die "--bpf-lsm needs on or off"; BPF_LSM=$2; shift 2 ;;
	--bpf-lsm=*) BPF_LSM=${1#*=}; shift ;;
	--timeout) [ $# -ge 2 ] || die "--timeout needs seconds"; TIMEOUT=$2; shift 2 ;;
	--timeout=*) TIMEOUT=${1#*=}; shift ;;
	--shell) MODE=shell; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; SUITE_ARGS=("$@"); break ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done
[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "the timeout must be a positive number of seconds, not '$TIMEOUT'"
case "$BPF_LSM" in
"" | on | off) ;;
*) die "--bpf-lsm (VMTEST_BPF_LSM) must be on or off, not '$BPF_LSM'" ;;
esac

MEM=${VMTEST_MEM:-3G}
SMP=${VMTEST_SMP:-2}
ACCEL=${VMTEST_ACCEL:-auto}
EXTRA_MODULES=${VMTEST_MODULES:-veth}
OUTDIR=${VMTEST_OUT:-$REPO/build/vmtest}
# Each boot keeps its own logs, so that make vmtest's second boot leaves the first's.
[ -n "$BPF_LSM" ] && OUTDIR=$OUTDIR/bpf-lsm-$BPF_LSM
CACHE=${VMTEST_CACHE:-$HERE/cache}
PIN_FILE=$HERE/kernel.version
# The guest's root directory is the host's "/": paths must be absolute and real.
OUTDIR=$(mkdir -p "$OUTDIR" && cd "$OUTDIR" && pwd -P)
CACHE=$(mkdir -p "$CACHE" && cd "$CACHE" && pwd -P)

if [ -z "$SUITE" ]; then
	SUITE=$REPO/tests/integration/run.sh
	if [ "$MODE" = run ]; then
		[ -e "$SUITE" ] || die "no integration suite at $SUITE (use --suite PATH, e.g. --suite vmtest/selftest.sh)"
		[ -x "$REPO/build/bfbpf" ] || die "no $REPO/build/bfbpf: build it first (make), or run make vmtest"
	fi
fi
[ -f "$SUITE" ] || [ "$MODE" = shell ] || die "no suite file at $SUITE"
[ -d "$(dirname "$SUITE")" ] && SUITE=$(cd "$(dirname "$SUITE")" && pwd -P)/$(basename "$SUITE")
# The guest mounts fresh filesystems on /tmp, /var/tmp and /run but carries the
# repository across (guest.sh), so a checkout there (a CI clone in /tmp) works;
# a suite elsewhere in those places, or in /dev, /proc or /sys, would vanish.
case "$SUITE" in
"$REPO"/*) ;;
/tmp/* | /var/tmp/* | /run/* | /dev/* | /proc/* | /sys/*)
	die "the guest mounts fresh filesystems on /tmp, /var/tmp, /run, /dev, /proc and /sys, so it cannot see $SUITE: put the suite in the repository" ;;
esac

need() { command -v "$1" >/dev/null 2>&1 || die "'$1' not found: install $2 (make deps installs it)"; }
need qemu-system-x86_64 qemu-system-x86
need cpio cpio
need gzip gzip
need flock util-linux
need timeout coreutils

BUSYBOX=${VMTEST_BUSYBOX:-}
if [ -z "$BUSYBOX" ]; then
	for b in /bin/busybox /usr/bin/busybox "$(command -v busybox || true)"; do
		[ -n "$b" ] && [ -x "$b" ] && BUSYBOX=$b && break
	done
fi
[ -n "$BUSYBOX" ] || die "busybox not found: install busybox-static"
if ldd "$BUSYBOX" >/dev/null 2>&1; then
	die "$BUSYBOX is dynamically linked: the initramfs needs busybox-static (apt-get install busybox-static)"
fi

# One run at a time per output directory (the logs and the results share live there).
exec 9>"$OUTDIR/.lock"
if ! flock -n 9; then
	echo "vmtest: waiting for another vmtest run using $OUTDIR" >&2
	flock 9
fi
rm -f "$OUTDIR/summary"

STAGE=""
QEMU_PID=""
TAIL_PID=""
cleanup() {
	local rc=$?
	[ -n "$QEMU_PID" ] && kill "$QEMU_PID" 2>/dev/null || true
	[ -n "$TAIL_PID" ] && kill "$TAIL_PID" 2>/dev/null || true
	[ -n "$STAGE" ] && rm -rf "$STAGE"
	return $rc
}
trap cleanup EXIT
trap 'echo "vmtest: interrupted" >&2; exit 130' INT TERM

# --- The kernel -------------------------------------------------------------------------

# The release string of a bzImage, from its boot header (no 'file' needed).
bzimage_release() {
	local img=$1 off
	[ "$(dd if="$img" bs=1 skip=$((0x202)) count=4 2>/dev/null)" = HdrS ] || return 1
	off=$(od -An -tu2 -j $((0x20e)) -N2 "$img" | tr -d ' ')
	[ -n "$off" ] && [ "$off" -gt 0 ] || return 1
	dd if="$img" bs=1 skip=$((off + 0x200)) count=256 2>/dev/null | tr '\0' '\n' | head -n1 | awk '{print $1}'
}

BOOTDIR=""
if [ -n "$KERNEL_IMG" ]; then
	[ -f "$KERNEL_IMG" ] || die "no kernel image at $KERNEL_IMG"
	KERNEL_IMG=$(cd "$(dirname "$KERNEL_IMG")" && pwd -P)/$(basename "$KERNEL_IMG")
	RELEASE=$(bzimage_release "$KERNEL_IMG" || true)
	[ -n "$RELEASE" ] || die "$KERNEL_IMG is not an x86 bzImage (no boot header): pass arch/x86/boot/bzImage or /boot/vmlinuz-*"
	if [ -z "$MODDIR" ]; then
		for d in "$(dirname "$KERNEL_IMG")/../lib/modules/$RELEASE" "/lib/modules/$RELEASE"; do
			[ -d "$d" ] && MODDIR=$d && break
		done
	fi
	if [ -n "$MODDIR" ]; then
		[ -d "$MODDIR" ] || die "no modules directory at $MODDIR"
		MODDIR=$(cd "$MODDIR" && pwd -P)
	fi
	[ -f "$(dirname "$KERNEL_IMG")/config-$RELEASE" ] && BOOTDIR=$(dirname "$KERNEL_IMG")
	KERNEL_DESC="$KERNEL_IMG"
else
	[ -f "$PIN_FILE" ] || die "no $PIN_FILE"
	PIN=$(grep -Ev '^[[:space:]]*(#|$)' "$PIN_FILE" | head -n1 | tr -d '[:space:]')
	[[ "$PIN" =~ ^(linux-image-[a-z0-9.+-]+)=([A-Za-z0-9.+~:-]+)$ ]] ||
		die "$PIN_FILE must hold one line PACKAGE=VERSION (e.g. linux-image-6.1.0-57-amd64-unsigned=6.1.192-3), not '$PIN'"
	PKG=${BASH_REMATCH[1]}
	VER=${BASH_REMATCH[2]}
	KDIR=$CACHE/${PKG}_$VER
	if [ ! -f "$KDIR/.complete" ]; then
		need apt-get apt
		need dpkg-deb dpkg
		need depmod kmod
		exec 8>"$CACHE/.lock"
		flock 8
		if [ ! -f "$KDIR/.complete" ]; then
			echo "vmtest: fetching $PKG=$VER into $CACHE" >&2
			deb=$(ls "$CACHE/${PKG}_${VER//:/%3a}"_*.deb 2>/dev/null | head -n1 || true)
			if [ -z "$deb" ]; then
				( cd "$CACHE" && apt-get download -q "$PKG=$VER" >&2 ) 2> >(grep -v 'unsandboxed as root' >&2) ||
					{ echo "vmtest: apt-get download failed; refreshing the package lists once" >&2
					  apt-get update -qq && ( cd "$CACHE" && apt-get download -q "$PKG=$VER" >&2 ) 2> >(grep -v 'unsandboxed as root' >&2); } ||
					die "cannot download $PKG=$VER; if the archive no longer has it, pin a current one in $PIN_FILE (apt-cache policy '$PKG'; docs/testing.md)"
				deb=$(ls "$CACHE/${PKG}_"*.deb | head -n1)
			fi
			rm -rf "$KDIR.tmp"
			mkdir -p "$KDIR.tmp"
			dpkg-deb -x "$deb" "$KDIR.tmp" || die "cannot extract $deb"
			rel=$(ls "$KDIR.tmp/lib/modules" | head -n1)
			[ -n "$rel" ] && [ -f "$KDIR.tmp/boot/vmlinuz-$rel" ] || die "$deb has no boot/vmlinuz-<release> and lib/modules/<release>"
			depmod -b "$KDIR.tmp" "$rel" || die "depmod failed for $rel"
			rm -rf "$KDIR"
			mv "$KDIR.tmp" "$KDIR"
			touch "$KDIR/.complete"
			rm -f "$deb"
		fi
		flock -u 8
	fi
	RELEASE=$(ls "$KDIR/lib/modules" | head -n1)
	KERNEL_IMG=$KDIR/boot/vmlinuz-$RELEASE
	MODDIR=$KDIR/lib/modules/$RELEASE
	BOOTDIR=$KDIR/boot
	KERNEL_DESC="$PKG $VER"
fi

# --- The LSM list ----------------------------------------------------------------------

# --bpf-lsm: the kernel's own default list (CONFIG_LSM), with bpf added at its end or
# taken out, so that the two boots differ in the BPF LSM alone.
LSM_ARG=""
if [ -n "$BPF_LSM" ]; then
	lsm_list=""
	cfg=${BOOTDIR:+$BOOTDIR/config-$RELEASE}
	if [ -n "$cfg" ] && [ -f "$cfg" ]; then
		if [ "$BPF_LSM" = on ] && ! grep -q '^CONFIG_BPF_LSM=y' "$cfg"; then
			die "$cfg has no CONFIG_BPF_LSM=y: this kernel cannot boot with --bpf-lsm on"
		fi
		lsm_list=$(sed -n 's/^CONFIG_LSM="\(.*\)"$/\1/p' "$cfg")
	fi
	if [ -z "$lsm_list" ]; then
		# No config beside the image: upstream's default order. Names the kernel lacks
		# are ignored; the guest checks the outcome either way.
		lsm_list="landlock,lockdown,yama,loadpin,safesetid,integrity,selinux,smack,tomoyo,apparmor"
		echo "vmtest: no CONFIG_LSM for $RELEASE: assuming lsm=$lsm_list" >&2
	fi
	lsm_list=$(tr ',' '\n' <<<"$lsm_list" | grep -vx 'bpf' | paste -sd, -)
	[ "$BPF_LSM" = on ] && lsm_list=${lsm_list:+$lsm_list,}bpf
	LSM_ARG="lsm=$lsm_list"
fi

# --- The initramfs ----------------------------------------------------------------------

STAGE=$(mktemp -d "${TMPDIR:-/tmp}/vmtest.XXXXXX")
mkdir -p "$STAGE/root/bin" "$STAGE/root/modules" "$STAGE/root/dev"
cp "$BUSYBOX" "$STAGE/root/bin/busybox"
cp "$HERE/init" "$STAGE/root/init"
chmod 0755 "$STAGE/root/init" "$STAGE/root/bin/busybox"
mknod -m 0600 "$STAGE/root/dev/console" c 5 1 2>/dev/null || true
: >"$STAGE/root/modules/order"

if [ -n "$MODDIR" ]; then
	need modprobe kmod
	# modprobe -d wants BASE/lib/modules/<release>: give it one, whatever MODDIR's path.
	mkdir -p "$STAGE/base/lib/modules"
	ln -s "$MODDIR" "$STAGE/base/lib/modules/$RELEASE"
	if [ ! -f "$MODDIR/modules.dep" ]; then
		die "$MODDIR has no modules.dep: run depmod for it (depmod -b BASE $RELEASE)"
	fi
	declare -A seen=()
	for m in virtio_pci 9pnet_virtio 9p overlay $EXTRA_MODULES; do
		if ! deps=$(modprobe -d "$STAGE/base" -S "$RELEASE" --show-depends "$m" 2>&1); then
			echo "vmtest: note: module $m not found for $RELEASE (assuming it is built in)" >&2
			continue
		fi
		while read -r kind path _; do
			[ "$kind" = insmod ] || continue
			name=$(basename "$path")
			[ -n "${seen[$name]:-}" ] && continue
			seen[$name]=1
			case "$name" in
			*.ko) cp "$path" "$STAGE/root/modules/$name" ;;
			*.ko.xz) xz -dc "$path" >"$STAGE/root/modules/${name%.xz}"; name=${name%.xz} ;;
			*.ko.zst) zstd -qdc "$path" >"$STAGE/root/modules/${name%.zst}"; name=${name%.zst} ;;
			*.ko.gz) gzip -dc "$path" >"$STAGE/root/modules/${name%.gz}"; name=${name%.gz} ;;
			*) die "unexpected module file $path" ;;
			esac
			echo "$name" >>"$STAGE/root/modules/order"
		done <<<"$deps"
	done
fi

q() { printf '%q' "$1"; }
suite_args=""
for a in ${SUITE_ARGS[@]+"${SUITE_ARGS[@]}"}; do suite_args+="$(q "$a") "; done
SHARE=$OUTDIR/guest
{
	echo "export VMTEST_REPO=$(q "$REPO")"
	echo "export VMTEST_MODE=$(q "$MODE")"
	echo "export VMTEST_SUITE=$(q "$SUITE")"
	echo "export VMTEST_SUITE_ARGS=$(q "$suite_args")"
	echo "export VMTEST_PATH=$(q "$PATH")"
	echo "export VMTEST_MODDIR=$(q "$MODDIR")"
	echo "export VMTEST_BOOTDIR=$(q "$BOOTDIR")"
	echo "export VMTEST_HOST_OUT=$(q "$SHARE")"
	echo "export VMTEST_TERM=$(q "${TERM:-linux}")"
	echo "export VMTEST_BPF_LSM=$(q "$BPF_LSM")"
	# The suite runs the binary as it was when the run began (a snapshot in the results
	# share), not build/bfbpf itself, which the guest sees live through 9p.
	if [ "$MODE" = run ] && [ -z "${BFBPF+set}" ] && [ -x "$REPO/build/bfbpf" ]; then
		echo "export BFBPF=/vmtest/bfbpf"
	fi
	# Settings of the suite, forwarded when set on the host (VMTEST_PASSENV names them).
	for v in ${VMTEST_PASSENV-PROBE_TIMEOUT CASE_TIMEOUT KEEP}; do
		[[ "$v" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "VMTEST_PASSENV: '$v' is not a variable name"
		[ -n "${!v+set}" ] && echo "export $v=$(q "${!v}")"
	done
} >"$STAGE/root/vmtest.env"
INITRD=$STAGE/initramfs.cpio.gz
pack_initramfs() { (cd "$STAGE/root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$INITRD"; }
pack_initramfs

# --- The accelerator --------------------------------------------------------------------

QEMU_BASE=(qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot
	-m "$MEM" -smp "$SMP" -kernel "$KERNEL_IMG" -initrd "$INITRD")
CMDLINE="console=ttyS0 panic=-1 loglevel=5 8250.nr_uarts=1"

kvm_works() {
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
	# /dev/kvm can exist and still fail ("KVM internal error"): boot the initramfs only
	# far enough to print a marker.
	local log=$STAGE/kvm-probe.log
	(timeout -k 2 20 "${QEMU_BASE[@]}" -accel kvm -cpu host -serial "file:$log" \
		-append "$CMDLINE vmtest.probe=1" </dev/null || true) >/dev/null 2>&1
	grep -q 'vmtest-probe-ok' "$log" 2>/dev/null
}
case "$ACCEL" in
auto) if kvm_works; then ACCEL=kvm; else ACCEL=tcg; fi ;;
kvm | tcg) ;;
*) die "VMTEST_ACCEL must be auto, kvm or tcg, not '$ACCEL'" ;;
esac
if [ "$ACCEL" = tcg ] && [ -z "${PROBE_TIMEOUT+set}" ]; then
	# Emulation is slow, and slower still when the host is busy: give the suite's probes
	# more time to get an answer (a denial is an immediate EPERM, so this costs little).
	echo "export PROBE_TIMEOUT=10" >>"$STAGE/root/vmtest.env"
	pack_initramfs
fi
if [ "$ACCEL" = tcg ] && [ -z "${CASE_TIMEOUT+set}" ]; then
	# A whole runner flow with real containers (test-16) takes ~20 s on the host and over
	# 180 s (the suite's default per case) under TCG: give a case 600 s there. A hung case
	# still ends, and the boot's own timeout bounds the whole run.
	echo "export CASE_TIMEOUT=600" >>"$STAGE/root/vmtest.env"
	pack_initramfs
fi
if [ "$ACCEL" = kvm ]; then
	ACCEL_ARGS=(-accel kvm -cpu host)
else
	ACCEL_ARGS=(-accel "tcg,thread=multi" -cpu max)
fi

# --- The run ----------------------------------------------------------------------------

rm -rf "$SHARE"
mkdir -p "$SHARE"
[ -x "$REPO/build/bfbpf" ] && cp "$REPO/build/bfbpf" "$SHARE/bfbpf"
CONSOLE=$OUTDIR/console.log
: >"$CONSOLE"
QEMU=("${QEMU_BASE[@]}" "${ACCEL_ARGS[@]}" -append "$CMDLINE${LSM_ARG:+ $LSM_ARG}"
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$SHARE,mount_tag=vmtestout,security_model=none,multidevs=remap")

BOOT_DESC=""
[ -n "$BPF_LSM" ] && BOOT_DESC=" (BPF LSM $BPF_LSM)"
echo "vmtest: booting $KERNEL_DESC ($RELEASE)$BOOT_DESC under ${ACCEL^^}, $SMP CPUs, $MEM${LSM_ARG:+, $LSM_ARG}; console log: $CONSOLE" >&2

if [ "$MODE" = shell ]; then
	echo "vmtest: Ctrl-a x quits qemu; Ctrl-a c switches to the qemu monitor" >&2
	"${QEMU[@]}" -chardev "stdio,id=con,mux=on,signal=off,logfile=$CONSOLE" \
		-serial chardev:con -mon chardev=con,mode=readline || true
	exit 0
fi

START=$(date +%s)
timeout -k 10 "$TIMEOUT" "${QEMU[@]}" -serial "file:$CONSOLE" </dev/null >"$OUTDIR/qemu.log" 2>&1 &
QEMU_PID=$!
if [ "${VMTEST_QUIET:-0}" != 1 ]; then
	tail -n +1 -f --pid="$QEMU_PID" "$CONSOLE" &
	TAIL_PID=$!
fi
qemu_rc=0
wait "$QEMU_PID" || qemu_rc=$?
QEMU_PID=""
if [ -n "$TAIL_PID" ]; then
	wait "$TAIL_PID" 2>/dev/null || true
	TAIL_PID=""
fi
ELAPSED=$(($(date +%s) - START))

# --- The verdict ------------------------------------------------------------------------

[ -s "$SHARE/release" ] && RELEASE=$(head -n1 "$SHARE/release")
SUITE_LOG=$SHARE/suite.log
passed=0 failed=0 skipped=0
summary=""
if [ -f "$SUITE_LOG" ]; then
	summary=$(grep -E '^[A-Za-z0-9_.-]+: [0-9]+ passed, [0-9]+ failed' "$SUITE_LOG" | tail -n1 || true)
fi
if [ -n "$summary" ]; then
	[[ "$summary" =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)? ]]
	passed=${BASH_REMATCH[1]} failed=${BASH_REMATCH[2]} skipped=${BASH_REMATCH[4]:-0}
elif [ -f "$SUITE_LOG" ]; then
	passed=$(grep -cE '^PASS ' "$SUITE_LOG" || true)
	failed=$(grep -cE '^FAIL ' "$SUITE_LOG" || true)
	skipped=$(grep -cE '^SKIP ' "$SUITE_LOG" || true)
fi

problems=()
if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
	problems+=("timeout: the guest did not finish within ${TIMEOUT}s (VMTEST_TIMEOUT)")
elif [ "$qemu_rc" != 0 ]; then
	problems+=("qemu exited with status $qemu_rc: $(tail -n 3 "$OUTDIR/qemu.log" | tr '\n' ' ')")
fi
KERNEL_BAD='\] (WARNING:|BUG:|Oops|Kernel panic|kernel BUG at|general protection fault|Unable to handle kernel|UBSAN:|KASAN:)'
bad=$(cat "$CONSOLE" "$SHARE/dmesg.txt" 2>/dev/null | tr -d '\r' | grep -aE "$KERNEL_BAD" |
	sed -E 's/^\[ *[0-9.]+\] //' | sort -u | head -n 5 || true)
if [ -n "$bad" ]; then
	while IFS= read -r l; do problems+=("kernel: $l"); done <<<"$bad"
fi
if [ ! -f "$SHARE/suite.rc" ]; then
	if grep -aq 'vmtest-init: FATAL' "$CONSOLE"; then
		problems+=("guest setup: $(grep -a 'vmtest-init: FATAL' "$CONSOLE" | head -n1)")
	elif grep -aq 'vmtest-guest: FATAL' "$CONSOLE"; then
		problems+=("guest setup: $(grep -a 'vmtest-guest: FATAL' "$CONSOLE" | head -n1)")
	elif [ ${#problems[@]} = 0 ]; then
		problems+=("the suite did not finish (no exit status from the guest; see the console log)")
	fi
else
	suite_rc=$(cat "$SHARE/suite.rc")
	[ -n "$summary" ] || problems+=("the suite printed no summary line (exit status $suite_rc)")
	if [ "$suite_rc" != 0 ] && [ "$failed" = 0 ]; then
		problems+=("the suite exited with status $suite_rc but reported no failed test")
	fi
fi

# --bpf-lsm: the guest wrote the active LSMs and bfbpf check's socket_lsm line
# (guest.sh, which already stops on a wrong list): no silent fallback to the other path.
if [ -n "$BPF_LSM" ] && [ -f "$SHARE/suite.rc" ]; then
	lsms=$(cat "$SHARE/lsm" 2>/dev/null || true)
	case ",$lsms," in
	*,bpf,*) [ "$BPF_LSM" = on ] || problems+=("the BPF LSM is active (lsm: $lsms) in a boot without it") ;;
	*) [ "$BPF_LSM" = off ] || problems+=("the BPF LSM is not active (lsm: ${lsms:-unknown})") ;;
	esac
	if [ -f "$SHARE/bfbpf" ]; then
		hook=$(cat "$SHARE/socket_lsm" 2>/dev/null || true)
		if [ "$BPF_LSM" = on ]; then
			[[ "$hook" =~ ^ok\ .*loads\ and\ attaches ]] ||
				problems+=("bfbpf does not attach its lsm_cgroup program with the BPF LSM on: ${hook:-no 'hook socket_lsm' line in bfbpf check}")
		else
			[[ "$hook" =~ ^ok\ .*not\ supported ]] ||
				problems+=("bfbpf check does not report socket_lsm unsupported with the BPF LSM off: ${hook:-no 'hook socket_lsm' line in bfbpf check}")
		fi
	fi
fi

if [ -f "$SUITE_LOG" ]; then
	grep -E '^SKIP ' "$SUITE_LOG" | sed 's/^/vmtest:   /' || true
	grep -E '^FAIL ' "$SUITE_LOG" | sed 's/^/vmtest:   /' || true
fi
for p in ${problems[@]+"${problems[@]}"}; do echo "vmtest:   FAIL vmtest ($p)"; done
failed=$((failed + ${#problems[@]}))

line="vmtest: kernel $RELEASE$BOOT_DESC: $passed passed, $failed failed"
[ "$skipped" -gt 0 ] && line+=", $skipped skipped"
echo "vmtest: guest ran ${ELAPSED}s under ${ACCEL^^}; logs: $CONSOLE, $SHARE/" | tee "$OUTDIR/summary"
echo "$line" | tee -a "$OUTDIR/summary"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
