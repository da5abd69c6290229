# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash
# Cases: the shared TLS/HTTP parser (issue 20, items 3 and 4). The same
# headers (bpf/lib/tls_sni.h, bpf/lib/http_host.h) are verified and run by
# this kernel (tests/bpf/hello_test.bpf.c, BPF_PROG_TEST_RUN) and built for
# userspace (tests/bpf/hello_runner.c): both must give the same verdict and
# name on every file of the corpus and on ClientHellos that real clients
# (curl, openssl s_client, Python ssl) send here and now, and on their
# prefixes (a flow's writes as they arrive); and on what `make fuzz` found,
# if it ran in this tree (build/corpus/fuzz_hello).

ALL_TESTS+=(parser_kernel_agrees)

HPARSE_OBJ=${HPARSE_OBJ:-$BFBPF_ROOT/build/tests/bpf/hello_test.bpf.o}
HPARSE_RUNNER=${HPARSE_RUNNER:-$BFBPF_ROOT/build/tests/bpf/hello_runner}
HPARSE_CORPUS=$BFBPF_ROOT/tests/fuzz/corpus/hello
HPARSE_FUZZED=${HPARSE_FUZZED:-$BFBPF_ROOT/build/corpus/fuzz_hello}

# A one-connection listener on loopback that writes what its client sent first.
hparse_listener_write() {
	cat >"$CASEDIR/hparse_listen.py" <<'EOF'
import os, socket, sys
out, portfile = sys.argv[1], sys.argv[2]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
s.settimeout(120)  # a client under TCG on a busy host may take a minute to start
c, _ = s.accept()
c.settimeout(60.0)  # the first bytes: a slow client (TCG) may take its time
data = b""
try:
    while len(data) < 8192:
        d = c.recv(8192)
        if not d:
            break
        data += d
        c.settimeout(1.0)  # the rest of the first flight follows at once
except socket.timeout:
    pass
with open(out, "wb") as f:
    f.write(data)
EOF
}

# hparse_capture NAME CLIENT...: runs CLIENT with PORT replaced by the listener's port.
hparse_capture() {
	local name=$1 port pid arg args=()
	shift
	rm -f "$CASEDIR/$name.port"
	"$PYTHON" "$CASEDIR/hparse_listen.py" "$CASEDIR/captured/$name" "$CASEDIR/$name.port" &
	pid=$!
	defer "kill $pid"
	wait_for_file "$CASEDIR/$name.port" || fail "$name: the listener did not start"
	port=$(cat "$CASEDIR/$name.port")
	for arg in "$@"; do args+=("${arg//PORT/$port}"); done
	timeout 90 "${args[@]}" </dev/null >/dev/null 2>&1
	wait "$pid" || fail "$name: the listener failed"
	[ -s "$CASEDIR/captured/$name" ] || fail "$name: the client sent nothing"
	log "captured $name: $(stat -c %s "$CASEDIR/captured/$name") bytes"
}

# hparse_expect FILE PARSER VERDICT [NAME]: the kernel's verdict on all of FILE.
hparse_expect() {
	local file=$1 parser=$2 verdict=$3 name=${4:--} size
	size=$(stat -c %s "$file")
	[ "$size" -gt 4096 ] && size=4096
	grep -qxF "agree $file $parser len=$size kernel=$verdict $name user=$verdict $name" \
		"$CASEDIR/runner.out" || fail "$file ($parser): the kernel did not say $verdict $name"
}

test_parser_kernel_agrees() {
	local c=$CASEDIR/captured py="import ssl, socket
s = socket.create_connection(('127.0.0.1', PORT))
try:
    ssl.create_default_context().wrap_socket(s, server_hostname='Allowed.Test')
except Exception:
    pass"
	{ [ -x "$HPARSE_RUNNER" ] && [ -s "$HPARSE_OBJ" ]; } ||
		fail "no $HPARSE_RUNNER or $HPARSE_OBJ: make build/tests/bpf/hello_runner build/tests/bpf/hello_test.bpf.o"
	mkdir -p "$c"
	hparse_listener_write
	hparse_capture curl curl -sk --max-time 3 --resolve allowed.test:PORT:127.0.0.1 \
		https://allowed.test:PORT/
	hparse_capture openssl openssl s_client -connect 127.0.0.1:PORT -servername evil.test
	hparse_capture openssl-nosni openssl s_client -connect 127.0.0.1:PORT -noservername
	hparse_capture python "$PYTHON" -c "$py"
	hparse_capture curl-http curl -s --max-time 3 -H "Host: Allowed.Test:80" \
		http://127.0.0.1:PORT/x
	"$HPARSE_RUNNER" -v "$HPARSE_OBJ" "$HPARSE_CORPUS"/* "$c"/* >"$CASEDIR/runner.out" 2>&1
	local rc=$?
	# What `make fuzz` found, when it ran in this tree: thousands of odd inputs.
	if [ $rc -eq 0 ] && [ -n "$(ls -A "$HPARSE_FUZZED" 2>/dev/null)" ]; then
		find "$HPARSE_FUZZED" -type f -print0 |
			xargs -0 "$HPARSE_RUNNER" "$HPARSE_OBJ" >"$CASEDIR/fuzzed.out" 2>&1
		rc=$?
		grep -v '^agree' "$CASEDIR/fuzzed.out" | tail -20
	fi
	grep -v '^agree' "$CASEDIR/runner.out"
	grep '^DISAGREE' "$CASEDIR/runner.out" | head -20
	[ $rc -eq 0 ] || fail "the kernel and userspace disagree (runner exit $rc)"
	grep -q '^hello_runner: verifier: processed [0-9]* insns' "$CASEDIR/runner.out" ||
		fail "no verifier statistics"
	# What the verdicts must be, not only that both builds agree.
	hparse_expect "$c/curl" tls SNI allowed.test
	hparse_expect "$c/openssl" tls SNI evil.test
	hparse_expect "$c/openssl-nosni" tls NO_SNI
	hparse_expect "$c/python" tls SNI allowed.test
	hparse_expect "$c/curl-http" http SNI allowed.test
	hparse_expect "$c/curl-http" tls BAD
	hparse_expect "$c/curl" http BAD
	hparse_expect "$HPARSE_CORPUS/built-2k-sni-last" tls SNI allowed.test
	hparse_expect "$HPARSE_CORPUS/built-2k-5records" tls SNI allowed.test
	hparse_expect "$HPARSE_CORPUS/built-ech-outer" tls SNI public.allowed.test
	hparse_expect "$HPARSE_CORPUS/built-truncated" tls MORE
	hparse_expect "$HPARSE_CORPUS/built-too-long" tls BAD
	hparse_expect "$HPARSE_CORPUS/built-two-host-names" tls BAD
	hparse_expect "$HPARSE_CORPUS/http-absolute-disagrees" http BAD
	hparse_expect "$HPARSE_CORPUS/http-two-hosts" http BAD
	return 0
}
