#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tests/unit/test_install.sh [MAKE]: `make install` and `make uninstall` with a PREFIX and a
# DESTDIR, as any user: every file where docs/operations.md says, the paths inside the hook,
# the runc wrapper and the unit rewritten to the prefix's binary, and nothing left after the
# uninstall. Run by `make check` (the tree already built).
set -u

MAKE=${1:-make}
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
failures=0
inst_fail() {
	echo "test_install: FAIL: $*"
	failures=$((failures + 1))
}

$MAKE -s install DESTDIR="$dest" PREFIX=/opt/bf >"$dest.log" 2>&1 || {
	cat "$dest.log"
	rm -f "$dest.log"
	echo "test_install: FAIL: make install"
	exit 1
}
rm -f "$dest.log"
want="/opt/bf/lib/systemd/system/bfbpf.service
/opt/bf/sbin/bfbpf
/opt/bf/sbin/bfbpf-runc
/opt/bf/share/bash-completion/completions/bfbpf
/opt/bf/share/man/man5/bfbpf-policy.5
/opt/bf/share/man/man8/bfbpf.8
/usr/share/containers/oci/hooks.d/bfbpf-hook.json"
got=$(cd "$dest" && find . -type f ! -path './opt/bf/share/doc/*' | sed 's/^\.//' | sort)
[ "$got" = "$want" ] || inst_fail "installed files: [$got], want [$want]"
[ -f "$dest/opt/bf/share/doc/bfbpf/operations.md" ] || inst_fail "no docs in share/doc/bfbpf"
grep -q '"path": "/opt/bf/sbin/bfbpf"' "$dest/usr/share/containers/oci/hooks.d/bfbpf-hook.json" ||
	inst_fail "the hook does not name /opt/bf/sbin/bfbpf"
grep -qx 'exec /opt/bf/sbin/bfbpf docker-runtime "$@"' "$dest/opt/bf/sbin/bfbpf-runc" ||
	inst_fail "bfbpf-runc does not run /opt/bf/sbin/bfbpf"
grep -qx 'ExecStart=/opt/bf/sbin/bfbpf daemon' "$dest/opt/bf/lib/systemd/system/bfbpf.service" ||
	inst_fail "the unit does not run /opt/bf/sbin/bfbpf"
"$dest/opt/bf/sbin/bfbpf" --version >/dev/null || inst_fail "the installed binary does not run"
head -c 300 "$dest/opt/bf/share/man/man8/bfbpf.8" | grep -q '^\.TH "bfbpf" "8"' ||
	inst_fail "bfbpf.8 is not a man page"

$MAKE -s uninstall DESTDIR="$dest" PREFIX=/opt/bf || inst_fail "make uninstall"
left=$(cd "$dest" && find . ! -type d)
[ -z "$left" ] || inst_fail "left after uninstall: $left"

echo "test_install: $failures failed"
[ "$failures" = 0 ]
