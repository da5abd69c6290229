#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ClientHellos built by hand, sent over raw TCP (test-17-sni.sh).

  sni_client.py SHAPE ADDR PORT [NAME]

SHAPE: plain (one record, one write), big (~2 KB, server_name last), split
(three writes, 0.3 s apart), records (the handshake fragmented across two TLS
records), truncated (the first half, then nothing), garbled (bytes that are
not TLS), ech (an encrypted_client_hello extension beside the outer
server_name), nosni (no server_name), quic (a QUIC-shaped Initial over UDP).
Prints one word and exits: answered (0: the server sent something back),
refused (1: an error from the kernel or a reset), silent (2: nothing within
the timeout).
"""
import os
import socket
import struct
import sys
import time

TIMEOUT = float(os.environ.get("SNI_CLIENT_TIMEOUT", "4"))


def ext(kind, body):
    return struct.pack("!HH", kind, len(body)) + body


def server_name(name):
    host = name.encode()
    entry = b"\x00" + struct.pack("!H", len(host)) + host
    return ext(0, struct.pack("!H", len(entry)) + entry)


def client_hello(name, pad=0, ech=False):
    """A TLS 1.2-compatible ClientHello (ECDHE-ECDSA) a Python server answers."""
    exts = [
        ext(10, struct.pack("!H", 4) + b"\x00\x1d\x00\x17"),  # supported_groups
        ext(11, b"\x01\x00"),  # ec_point_formats
        ext(13, struct.pack("!H", 4) + b"\x04\x03\x08\x04"),  # signature_algorithms
        ext(23, b""),  # extended_master_secret
    ]
    if pad:
        exts.append(ext(21, b"\x00" * pad))  # padding: makes it large
    if ech:
        exts.append(ext(0xFE0D, b"\x00" + os.urandom(200)))  # ECH outer, payload opaque
    if name:
        exts.append(server_name(name))  # last, as a randomising browser may put it
    body = b"\x03\x03" + os.urandom(32) + b"\x00"
    suites = b"\xc0\x2b\xc0\x2f\x00\x9c"
    body += struct.pack("!H", len(suites)) + suites + b"\x01\x00"
    all_exts = b"".join(exts)
    body += struct.pack("!H", len(all_exts)) + all_exts
    return b"\x01" + struct.pack("!I", len(body))[1:] + body


def record(payload):
    return b"\x16\x03\x01" + struct.pack("!H", len(payload)) + payload


def outcome(sock):
    sock.settimeout(TIMEOUT)
    try:
        data = sock.recv(1)
    except socket.timeout:
        return "silent", 2
    except OSError:
        return "refused", 1
    return ("answered", 0) if data else ("refused", 1)


def send_tcp(addr, port, pieces, pause=0.0):
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(TIMEOUT)
    try:
        s.connect((addr, port))
        for i, piece in enumerate(pieces):
            if i and pause:
                time.sleep(pause)
            s.sendall(piece)
    except socket.timeout:
        return "silent", 2
    except OSError:
        return "refused", 1
    return outcome(s)


def main():
    shape, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    name = sys.argv[4] if len(sys.argv) > 4 else ""
    hello = client_hello(name)
    if shape == "quic":
        family = socket.AF_INET6 if ":" in addr else socket.AF_INET
        u = socket.socket(family, socket.SOCK_DGRAM)
        # A long-header Initial (first byte 0xc0 | ..., version 1), padded to 1200 bytes.
        packet = b"\xc3\x00\x00\x00\x01\x08" + os.urandom(8) + b"\x00" + os.urandom(1180)
        try:
            u.sendto(packet, (addr, port))
        except OSError:
            print("refused")
            return 1
        print("sent")
        return 0
    if shape == "plain" or shape == "nosni":
        pieces = [record(hello)]
    elif shape == "big":
        pieces = [record(client_hello(name, pad=1800))]
    elif shape == "split":
        data = record(client_hello(name, pad=600))
        third = len(data) // 3
        pieces = [data[:third], data[third:2 * third], data[2 * third:]]
    elif shape == "records":
        half = len(hello) // 2
        pieces = [record(hello[:half]) + record(hello[half:])]
    elif shape == "truncated":
        pieces = [record(hello)[: len(hello) // 2]]
    elif shape == "garbled":
        pieces = [b"\x16\x03\x01\x00\x40" + b"\x02" + os.urandom(63)]
    elif shape == "ech":
        pieces = [record(client_hello(name, ech=True))]
    else:
        print("unknown shape", shape, file=sys.stderr)
        return 64
    word, rc = send_tcp(addr, port, pieces, pause=0.3 if shape == "split" else 0.0)
    print(word)
    return rc


if __name__ == "__main__":
    sys.exit(main())
