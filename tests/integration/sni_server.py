#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The world server of test-17-sni.sh: one address, several names, like a CDN edge.

HTTPS on --tls ports (one certificate for every name) and plain HTTP on --http
ports. Every connection is logged to --log, one line per event, so that the test
counts what reached the server:
  accept PORT PEER           a TCP connection was accepted (the handshake is allowed)
  data PORT PEER N           the first N bytes of payload arrived (before any TLS)
  tls PORT PEER SNI          a TLS handshake completed, with that SNI ("-": none)
  http PORT PEER HOST        a request was answered
A refused flow must leave an accept line at most: never data, tls or http.
"""
import argparse
import os
import socket
import ssl
import sys
import threading

LOCK = threading.Lock()


def log(path, *words):
    with LOCK, open(path, "a") as f:
        f.write(" ".join(str(w) for w in words) + "\n")


def answer_http(conn, port, peer, args):
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        chunk = conn.recv(4096)
        if not chunk:
            return
        data += chunk
    host = "-"
    for line in data.split(b"\r\n")[1:]:
        if line.lower().startswith(b"host:"):
            host = line[5:].strip().decode("latin-1")
    body = f"sni-server {host}\n".encode()
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                 % (len(body), body))
    log(args.log, "http", port, peer, host)


def serve(conn, port, tls, ctx, args):
    peer = "%s:%d" % conn.getpeername()[:2]
    log(args.log, "accept", port, peer)
    conn.settimeout(30)
    try:
        first = conn.recv(65536, socket.MSG_PEEK)
        if not first:
            return
        log(args.log, "data", port, peer, len(first))
        if tls:
            conn = ctx.wrap_socket(conn, server_side=True)
            log(args.log, "tls", port, peer, getattr(conn, "bfbpf_sni", None) or "-")
        answer_http(conn, port, peer, args)
    except (OSError, ssl.SSLError) as e:
        log(args.log, "error", port, peer, type(e).__name__)
    finally:
        try:
            conn.close()
        except OSError:
            pass


def listen(addr, port, tls, ctx, args):
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(128)

    def loop():
        while True:
            conn, _ = s.accept()
            threading.Thread(target=serve, args=(conn, port, tls, ctx, args), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bind", action="append", required=True)
    p.add_argument("--tls", type=int, action="append", default=[])
    p.add_argument("--http", type=int, action="append", default=[])
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--ready", required=True)
    args = p.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    # Per connection: the SNI the handshake carried, on the connection's own socket.
    ctx.sni_callback = lambda sock, name, _ctx: setattr(sock, "bfbpf_sni", name)
    for addr in args.bind:
        for port in args.tls:
            listen(addr, port, True, ctx, args)
        for port in args.http:
            listen(addr, port, False, ctx, args)
    open(args.ready, "w").close()
    threading.Event().wait()


if __name__ == "__main__":
    sys.exit(main())
