#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Writes the built ClientHellos and HTTP request heads of tests/fuzz/corpus/hello/.

    tests/fuzz/hello_corpus.py [DIR]     (default: tests/fuzz/corpus/hello)

The captured ones (curl-*, openssl-*, python-*) come from real clients on loopback and
are not rewritten here. Each built file is named for what it is; the cmocka tests
(tests/unit/lib/test_tls_sni.c, test_http_host.c) state the verdict each one must get,
and the kernel-agreement runner (tests/bpf/hello_runner.c) feeds every file to both
builds of the parser. Writes in several parts are the tests' business (they feed prefixes).
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def u8(n):
    return struct.pack("!B", n)


def u16(n):
    return struct.pack("!H", n)


def u24(n):
    return struct.pack("!I", n)[1:]


def ext(kind, data):
    return u16(kind) + u16(len(data)) + data


def sni_ext(*names, types=None):
    entries = b""
    for i, name in enumerate(names):
        kind = 0 if types is None else types[i]
        raw = name.encode() if isinstance(name, str) else name
        entries += u8(kind) + u16(len(raw)) + raw
    return ext(0, u16(len(entries)) + entries)


def common_exts(big=False):
    """supported_versions, groups, signature_algorithms, a key share (X25519MLKEM768-sized when big)."""
    exts = ext(43, u8(4) + u16(0x0304) + u16(0x0303))
    exts += ext(10, u16(6) + u16(0x11EC) + u16(0x001D) + u16(0x0017))
    exts += ext(13, u16(6) + u16(0x0403) + u16(0x0804) + u16(0x0401))
    share = u16(0x001D) + u16(32) + bytes(range(32))
    if big:
        share = u16(0x11EC) + u16(1216) + bytes(i % 251 for i in range(1216)) + share
    exts += ext(51, u16(len(share)) + share)
    return exts


def hello(exts, session_id=bytes(32), suites=None):
    suites = suites or (u16(0x1301) + u16(0x1302) + u16(0x1303) + u16(0xC02F))
    body = u16(0x0303) + bytes(range(32)) + u8(len(session_id)) + session_id
    body += u16(len(suites)) + suites + u8(1) + u8(0)
    if exts is not None:
        body += u16(len(exts)) + exts
    return u8(1) + u24(len(body)) + body


def records(msg, sizes=None, version=0x0301, kind=22):
    """msg in TLS records; sizes: the fragment sizes (the last takes the rest)."""
    out, pos = b"", 0
    for size in (sizes or []) + [len(msg)]:
        frag = msg[pos : pos + size]
        if not frag:
            break
        out += u8(kind) + u16(version) + u16(len(frag)) + frag
        pos += len(frag)
    return out


def padded_to(exts_before, exts_after, total):
    """A padding extension (21) that makes the hello message `total` bytes long."""
    base = len(hello(exts_before + ext(21, b"") + exts_after))
    return exts_before + ext(21, bytes(total - base)) + exts_after


def tls_files():
    files = {}
    files["built-sni-first"] = records(hello(sni_ext("allowed.test") + common_exts()))
    big = padded_to(common_exts(big=True), sni_ext("allowed.test"), 2000)
    files["built-2k-sni-last"] = records(hello(big))
    files["built-2k-2records"] = records(hello(big), sizes=[1000])
    files["built-2k-5records"] = records(hello(big), sizes=[1, 3, 500, 17])
    files["built-2records-split-header"] = records(hello(sni_ext("allowed.test")), sizes=[2])
    files["built-truncated"] = files["built-2k-sni-last"][:1500]
    garbled = bytearray(files["built-sni-first"])
    garbled[9 + 2 + 32 + 1 + 32] ^= 0x40  # the cipher suites' length
    files["built-garbled-lengths"] = bytes(garbled)
    ech = ext(0xFE0D, u8(0) + u16(1) + u16(1) + u8(7) + u16(32) + bytes(32) + u16(144) + bytes(144))
    files["built-ech-outer"] = records(hello(common_exts() + ech + sni_ext("public.allowed.test")))
    files["built-no-sni"] = records(hello(common_exts()))
    files["built-no-extensions"] = records(hello(None))
    files["built-two-host-names"] = records(hello(sni_ext("allowed.test", "evil.test")))
    files["built-two-sni-extensions"] = records(
        hello(sni_ext("allowed.test") + common_exts() + sni_ext("evil.test")))
    files["built-other-name-type"] = records(
        hello(sni_ext(b"\x01\x02", "Allowed.Test", types=[7, 0])))
    files["built-only-other-name-type"] = records(hello(sni_ext(b"x", types=[9])))
    files["built-uppercase"] = records(hello(sni_ext("ALLOWED.Test") + common_exts()))
    files["built-trailing-dot"] = records(hello(sni_ext("allowed.test.") + common_exts()))
    files["built-underscore"] = records(hello(sni_ext("_srv.allowed-1.test")))
    files["built-bad-byte"] = records(hello(sni_ext("evil test")))
    files["built-nul-byte"] = records(hello(sni_ext("allowed.test\0.evil")))
    files["built-empty-label"] = records(hello(sni_ext("allowed..test")))
    files["built-leading-dot"] = records(hello(sni_ext(".allowed.test")))
    files["built-empty-name"] = records(hello(sni_ext("")))
    files["built-name-253"] = records(hello(sni_ext(".".join(["a" * 63] * 3 + ["b" * 61]))))
    files["built-name-254"] = records(hello(sni_ext(".".join(["a" * 63] * 3 + ["b" * 62]))))
    files["built-not-handshake"] = records(hello(sni_ext("allowed.test")), kind=23)
    files["built-ccs-between"] = (records(hello(sni_ext("allowed.test")), sizes=[20])[:25]
                                  + bytes([20, 3, 3, 0, 1, 1])
                                  + records(hello(sni_ext("allowed.test")), sizes=[20])[25:])
    server_hello = bytearray(hello(sni_ext("allowed.test")))
    server_hello[0] = 2
    files["built-server-hello"] = records(bytes(server_hello))
    files["built-too-long"] = records(hello(padded_to(common_exts(), sni_ext("allowed.test"), 4200)),
                                      sizes=[2100])
    # 3.9 KB of hello in 100-byte records: the record headers take it past the bound.
    files["built-over-bound-records"] = records(
        hello(padded_to(common_exts(), sni_ext("allowed.test"), 3950)), sizes=[100] * 39)
    files["built-zero-record"] = u8(22) + u16(0x0301) + u16(0) + files["built-sni-first"]
    return files


def http_files():
    return {
        "http-get": b"GET /simple HTTP/1.1\r\nHost: allowed.test\r\nUser-Agent: t\r\n\r\n",
        "http-port-case-dot": b"GET / HTTP/1.1\r\nhOST:  Allowed.TEST.:8080 \r\nAccept: */*\r\n\r\n",
        "http-absolute-agrees": b"GET http://allowed.test:80/x?y HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
        "http-absolute-disagrees": b"GET http://evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
        "http-absolute-only": b"GET HTTPS://Evil.Test/ HTTP/1.0\r\n\r\n",
        "http-connect": b"CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n",
        "http-10-no-host": b"GET / HTTP/1.0\r\nAccept: */*\r\n\r\n",
        "http-two-hosts": b"GET / HTTP/1.1\r\nHost: allowed.test\r\nHost: evil.test\r\n\r\n",
        "http-incomplete": b"POST /upload HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 5\r\n",
        "http-unknown-method": b"BREW / HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
        "http-bare-lf": b"GET / HTTP/1.1\nHost: evil.test\n\n",
        "http-folded": b"GET / HTTP/1.1\r\nX: a\r\n Host: evil.test\r\n\r\n",
        "http-space-colon": b"GET / HTTP/1.1\r\nHost : evil.test\r\n\r\n",
        "http-userinfo": b"GET http://allowed.test@evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
        "http-ipv6-literal": b"GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
        "http-http2-preface": b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        "http-long-header": b"GET / HTTP/1.1\r\nHost: allowed.test\r\nX: " + b"a" * 4100 + b"\r\n\r\n",
        "http-hostname-header": b"GET / HTTP/1.1\r\nHostname: evil.test\r\nHost: allowed.test\r\n\r\n",
        "http-tls-bytes": records(hello(sni_ext("allowed.test"))),
    }


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus", "hello")
    os.makedirs(out, exist_ok=True)
    files = tls_files()
    files.update(http_files())
    for name, data in sorted(files.items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print("hello_corpus: %d files in %s" % (len(files), out))


if __name__ == "__main__":
    main()
