#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Test peers for the integration tests, in one process.

usage: server.py --ready FILE [--bind ADDR]... [--tcp PORT]... [--udp PORT]...
                 [--http PORT] [--tfo]

Every port listens on each ADDR (default "::", dual stack, so IPv4 and IPv6
clients alike; name each address to have UDP replies leave from the address
the client asked). TCP ports echo what they receive; UDP ports echo each datagram
to its sender; the HTTP port serves the current directory (http.server).
FILE is created once every socket is bound and listening.
"""
import argparse
import os
import socket
import threading


def make_socket(addr, port, stype, tfo=False):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, stype)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind((addr, port))
    if stype == socket.SOCK_STREAM:
        if tfo:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 64)
        s.listen(128)
    return s


def tcp_echo_conn(conn):
    with conn:
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                conn.sendall(data)
        except OSError:
            return


def tcp_echo(listener):
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=tcp_echo_conn, args=(conn,), daemon=True).start()


def udp_echo(s):
    while True:
        data, peer = s.recvfrom(65536)
        try:
            s.sendto(data, peer)
        except OSError:
            pass


def http_server(addr, port):
    import http.server  # only when asked: imports are dear under emulation

    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, fmt, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        address_family = socket.AF_INET6 if ":" in addr else socket.AF_INET

        def server_bind(self):
            if self.address_family == socket.AF_INET6:
                self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            super().server_bind()

    return Server((addr, port), QuietHandler)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ready", required=True)
    p.add_argument("--bind", action="append", default=[])
    p.add_argument("--tcp", type=int, action="append", default=[])
    p.add_argument("--udp", type=int, action="append", default=[])
    p.add_argument("--http", type=int)
    p.add_argument("--tfo", action="store_true")
    a = p.parse_args()

    threads = []
    for addr in a.bind or ["::"]:
        for port in a.tcp:
            s = make_socket(addr, port, socket.SOCK_STREAM, a.tfo)
            threads.append(threading.Thread(target=tcp_echo, args=(s,), daemon=True))
        for port in a.udp:
            s = make_socket(addr, port, socket.SOCK_DGRAM)
            threads.append(threading.Thread(target=udp_echo, args=(s,), daemon=True))
        if a.http:
            httpd = http_server(addr, a.http)
            threads.append(threading.Thread(target=httpd.serve_forever, daemon=True))
    for t in threads:
        t.start()
    with open(a.ready + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(a.ready + ".tmp", a.ready)
    threading.Event().wait()


if __name__ == "__main__":
    main()
