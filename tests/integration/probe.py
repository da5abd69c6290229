#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""One network operation from inside a sandbox, with an exact verdict.

usage: probe.py MODE ADDR [PORT] [--timeout S]
       probe.py hold ADDR PORT CTRL_DIR [--timeout S]
       probe.py stream ADDR PORT CTRL_DIR [--timeout S]
       probe.py --batch "WANT MODE ADDR [PORT]"... [--timeout S]

MODE:
  tcp          connect, send, expect the echo back
  udp-connect  connect a UDP socket, send, expect the echo back
  udp-sendto   unconnected sendto, expect the echo back
  tfo          TCP Fast Open: sendto(MSG_FASTOPEN) on a blocking socket, expect the echo
  raw          AF_INET raw ICMP socket: send an echo request, expect the reply
  raw6         AF_INET6 raw ICMPv6 socket: same
  packet       AF_PACKET socket creation
  ping         AF_INET ping socket (SOCK_DGRAM/IPPROTO_ICMP): echo request and reply
  ping6        AF_INET6 ping socket: same
  hold         TCP: connect and echo once, create CTRL_DIR/ready, wait for
               CTRL_DIR/go, then echo once more (the verdict is that second echo)
  stream       UDP: a connected socket sends a datagram every 2 ms; after the
               first echo it creates CTRL_DIR/ready, and goes on sending until
               CTRL_DIR/go; the verdict is that of 50 datagrams sent after it
               (an echo of one of them: ok)

--batch runs several probes in one process (a Python start is dear under
emulation) and checks each verdict against WANT: ok (status 0), denied (status
1 with EPERM), notdenied (anything but status 1), blocked (anything but 0).
It prints one line per probe and exits 0 iff every probe got what it wanted.

An address containing ':' is IPv6 (AF_INET6 socket; ::ffff:a.b.c.d is a
mapped IPv4 destination). Exit status: 0 the operation succeeded, 1 it was
denied with EPERM or EACCES (the errno name is printed), 2 timeout or any other
error.
"""
import errno
import os
import signal
import socket
import struct
import sys
import time

EXIT_OK, EXIT_DENIED, EXIT_ERROR = 0, 1, 2
EXIT_EACCES = 4  # in --batch only: denied, but with EACCES rather than EPERM
LAST_ERRNO = None


class Timeout(Exception):
    pass


def verdict(what, code, detail):
    word = {EXIT_OK: "ok", EXIT_DENIED: "denied", EXIT_ERROR: "error"}[code]
    print(f"probe {what}: {word}: {detail}", flush=True)
    sys.exit(code)


def os_error(what, exc):
    global LAST_ERRNO
    LAST_ERRNO = exc.errno
    name = errno.errorcode.get(exc.errno, str(exc.errno)) if exc.errno else type(exc).__name__
    if exc.errno in (errno.EPERM, errno.EACCES):
        verdict(what, EXIT_DENIED, f"{name} ({exc.strerror})")
    verdict(what, EXIT_ERROR, f"{name} ({exc.strerror or exc})")


def family_of(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def sockaddr(addr, port):
    return (addr, port, 0, 0) if ":" in addr else (addr, port)


def token():
    return f"bfbpf-probe-{os.getpid()}-{time.monotonic_ns()}".encode()


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def probe_tcp(addr, port, timeout):
    s = socket.socket(family_of(addr), socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(sockaddr(addr, port))
    msg = token()
    s.sendall(msg)
    got = recv_exact(s, len(msg))
    if got != msg:
        return EXIT_ERROR, f"connected but echo mismatch ({got!r})"
    return EXIT_OK, "connected and echoed"


def probe_udp(addr, port, timeout, connected):
    s = socket.socket(family_of(addr), socket.SOCK_DGRAM)
    s.settimeout(timeout)
    msg = token()
    if connected:
        s.connect(sockaddr(addr, port))
        s.send(msg)
    else:
        s.sendto(msg, sockaddr(addr, port))
    deadline = time.monotonic() + timeout
    while True:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        got = s.recv(65536)
        if got == msg:
            return EXIT_OK, "echo received"


def probe_tfo(addr, port, timeout):
    # A blocking socket (no settimeout): a non-blocking one returns EINPROGRESS
    # from sendto(MSG_FASTOPEN) before the verdict is known. SIGALRM bounds it.
    def on_alarm(signum, frame):
        raise Timeout()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    s = socket.socket(family_of(addr), socket.SOCK_STREAM)
    msg = token()
    sent = s.sendto(msg, socket.MSG_FASTOPEN, sockaddr(addr, port))
    if sent != len(msg):
        s.sendall(msg[sent:])
    got = recv_exact(s, len(msg))
    signal.setitimer(signal.ITIMER_REAL, 0)
    if got != msg:
        return EXIT_ERROR, f"echo mismatch ({got!r})"
    return EXIT_OK, "fast open sendto and echo"


def icmp_checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def probe_icmp(addr, timeout, kind):
    v6 = kind in ("raw6", "ping6")
    fam = socket.AF_INET6 if v6 else socket.AF_INET
    proto = socket.IPPROTO_ICMPV6 if v6 else socket.IPPROTO_ICMP
    stype = socket.SOCK_RAW if kind.startswith("raw") else socket.SOCK_DGRAM
    s = socket.socket(fam, stype, proto)
    s.settimeout(timeout)
    req_type, rep_type = (128, 129) if v6 else (8, 0)
    ident = os.getpid() & 0xFFFF
    payload = token()
    hdr = struct.pack("!BBHHH", req_type, 0, 0, ident, 1)
    csum = 0 if v6 else icmp_checksum(hdr + payload)  # the kernel sums ICMPv6
    pkt = struct.pack("!BBHHH", req_type, 0, csum, ident, 1) + payload
    s.sendto(pkt, sockaddr(addr, 0))
    deadline = time.monotonic() + timeout
    while True:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        data = s.recv(65536)
        if kind == "raw":  # an AF_INET raw socket sees the IP header
            data = data[(data[0] & 0x0F) * 4:]
        if len(data) >= 8 and data[0] == rep_type and data[8:] == payload:
            return EXIT_OK, "echo reply received"


def probe_packet():
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.close()
    return EXIT_OK, "AF_PACKET socket created"


def probe_hold(addr, port, ctrl, timeout):
    s = socket.socket(family_of(addr), socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(sockaddr(addr, port))
    msg = token()
    s.sendall(msg)
    if recv_exact(s, len(msg)) != msg:
        return EXIT_ERROR, "first echo failed"
    open(os.path.join(ctrl, "ready"), "w").close()
    print("probe hold: established, first echo ok", flush=True)
    go = os.path.join(ctrl, "go")
    limit = time.monotonic() + 120
    while not os.path.exists(go):
        if time.monotonic() > limit:
            return EXIT_ERROR, "never told to go on"
        time.sleep(0.02)
    msg = token()
    s.sendall(msg)
    got = recv_exact(s, len(msg))
    if got != msg:
        return EXIT_ERROR, f"second echo failed ({got!r})"
    return EXIT_OK, "second echo on the established flow"


def probe_stream(addr, port, ctrl, timeout):
    s = socket.socket(family_of(addr), socket.SOCK_DGRAM)
    s.settimeout(0.002)
    s.connect(sockaddr(addr, port))
    ready = os.path.join(ctrl, "ready")
    go = os.path.join(ctrl, "go")
    limit = time.monotonic() + 120
    while not os.path.exists(go):
        if time.monotonic() > limit:
            return EXIT_ERROR, "never told to go on"
        s.send(b"before " + token())
        try:
            s.recv(65536)
            if not os.path.exists(ready):
                open(ready, "w").close()
                print("probe stream: first echo ok", flush=True)
        except socket.timeout:
            pass
    # Only an echo of a datagram sent after go counts: earlier ones may still be on the way.
    after = set()
    for _ in range(50):
        msg = b"after " + token()
        after.add(msg)
        s.send(msg)
        try:
            if s.recv(65536) in after:
                return EXIT_OK, "a datagram sent after go came back"
        except socket.timeout:
            pass
    s.settimeout(timeout)
    while True:
        if s.recv(65536) in after:
            return EXIT_OK, "a datagram sent after go came back"


def run_batch(specs, timeout):
    failed = 0
    for spec in specs:
        want, *args = spec.split()
        pid = os.fork()
        if pid == 0:  # one child per probe: fresh signal state, sockets, exit path
            code = EXIT_ERROR
            try:
                single(args, timeout)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else EXIT_ERROR
                if code == EXIT_DENIED and LAST_ERRNO != errno.EPERM:
                    code = EXIT_EACCES
            except BaseException as e:  # noqa: BLE001 - report, never escape the child
                print(f"probe: {e!r}", flush=True)
            finally:
                sys.stdout.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        good = {"ok": code == EXIT_OK, "denied": code == EXIT_DENIED,
                "notdenied": code not in (EXIT_DENIED, EXIT_EACCES),
                "blocked": code != EXIT_OK}.get(want)
        if good is None:
            print(f"probe: unknown expectation {want!r}", flush=True)
            good = False
        if not good:
            failed += 1
            print(f"  ^ expected {want}: MISMATCH", flush=True)
    return EXIT_OK if failed == 0 else EXIT_DENIED


def main(argv):
    timeout = float(os.environ.get("PROBE_TIMEOUT", "3"))
    args = []
    batch = False
    it = iter(argv)
    for a in it:
        if a == "--timeout":
            timeout = float(next(it))
        elif a == "--batch":
            batch = True
        else:
            args.append(a)
    if batch:
        return run_batch(args, timeout)
    return single(args, timeout)


def single(args, timeout):
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(EXIT_ERROR)
    mode, addr = args[0], args[1]
    port = int(args[2]) if len(args) > 2 else 0
    what = f"{mode} {addr}" + (f" port {port}" if len(args) > 2 else "")
    try:
        if mode == "tcp":
            code, detail = probe_tcp(addr, port, timeout)
        elif mode == "udp-connect":
            code, detail = probe_udp(addr, port, timeout, True)
        elif mode == "udp-sendto":
            code, detail = probe_udp(addr, port, timeout, False)
        elif mode == "tfo":
            code, detail = probe_tfo(addr, port, timeout)
        elif mode in ("raw", "raw6", "ping", "ping6"):
            code, detail = probe_icmp(addr, timeout, mode)
        elif mode == "packet":
            code, detail = probe_packet()
        elif mode == "hold":
            code, detail = probe_hold(addr, port, args[3], timeout)
        elif mode == "stream":
            code, detail = probe_stream(addr, port, args[3], timeout)
        else:
            print(f"probe: unknown mode {mode}", file=sys.stderr)
            sys.exit(EXIT_ERROR)
    except (socket.timeout, Timeout):
        verdict(what, EXIT_ERROR, "timeout")
    except OSError as exc:
        os_error(what, exc)
    verdict(what, code, detail)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
