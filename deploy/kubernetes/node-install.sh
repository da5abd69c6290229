#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The DaemonSet's init container (deploy/kubernetes/bfbpf-daemonset.yaml, which carries
# this file verbatim in its ConfigMap bfbpf-node-install; `make lint` checks that they
# are the same): installs on the node what CRI-O runs there, outside any pod:
#
#   NODE/opt/bfbpf/bin/bfbpf        the image's binary
#   NODE/opt/bfbpf/lib/             the shared libraries it was linked with, and the
#                                   image's dynamic loader: the node needs none of them
#   NODE/opt/bfbpf/bin/bfbpf-hook   runs the binary with that loader and those libraries
#   NODE/usr/share/containers/oci/hooks.d/bfbpf-hook.json
#                                   contrib/oci/bfbpf-hook.json, its path pointed at
#                                   bfbpf-hook (CRI-O and Podman read this directory)
#
# Environment: BFBPF_HOST_ROOT (where the node's root is mounted, default /host),
# BFBPF_BIN (default /usr/local/sbin/bfbpf), BFBPF_HOOK_JSON (default
# /usr/share/bfbpf/bfbpf-hook.json). Every file is written beside its place and renamed
# over it, so that a runtime never reads half of one. Exit 0 done, 1 failed.
set -eu

root=${BFBPF_HOST_ROOT:-/host}
bin=${BFBPF_BIN:-/usr/local/sbin/bfbpf}
hook_json=${BFBPF_HOOK_JSON:-/usr/share/bfbpf/bfbpf-hook.json}
dest=$root/opt/bfbpf
hooks=$root/usr/share/containers/oci/hooks.d

die() {
	echo "bfbpf-node-install: $*" >&2
	exit 1
}

[ -x "$bin" ] || die "$bin is missing"
[ -r "$hook_json" ] || die "$hook_json is missing"
grep -q '"path": "/usr/local/sbin/bfbpf"' "$hook_json" || die "$hook_json does not name /usr/local/sbin/bfbpf"
mkdir -p "$dest/bin" "$dest/lib" "$hooks"

# The libraries and the loader, as ldd resolves them in this image.
libs=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }')
loader=
for lib in $libs; do
	name=$(basename "$lib")
	cp -L "$lib" "$dest/lib/.$name.new"
	mv -f "$dest/lib/.$name.new" "$dest/lib/$name"
	case $name in ld-linux*) loader=$name ;; esac
done
[ -n "$loader" ] || die "ldd names no dynamic loader for $bin"

cp "$bin" "$dest/bin/.bfbpf.new"
mv -f "$dest/bin/.bfbpf.new" "$dest/bin/bfbpf"

# $0 of a script run by execve is its path: the files beside it, wherever the node's
# root was mounted when this was written.
cat >"$dest/bin/.bfbpf-hook.new" <<EOF
#!/bin/sh
here=\$(dirname "\$0")
exec "\$here/../lib/$loader" --library-path "\$here/../lib" "\$here/bfbpf" "\$@"
EOF
chmod 0755 "$dest/bin/.bfbpf-hook.new"
mv -f "$dest/bin/.bfbpf-hook.new" "$dest/bin/bfbpf-hook"

sed -e 's|"path": "/usr/local/sbin/bfbpf"|"path": "/opt/bfbpf/bin/bfbpf-hook"|' \
	-e 's|"args": \["bfbpf", |"args": ["bfbpf-hook", |' "$hook_json" >"$hooks/.bfbpf-hook.json.new"
mv -f "$hooks/.bfbpf-hook.json.new" "$hooks/bfbpf-hook.json"
echo "bfbpf-node-install: $dest/bin/bfbpf-hook and $hooks/bfbpf-hook.json installed"
