#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The attacks of issue 19 items 6 and 8, with real sockets, and a sniffer
that says what reached the world.

usage: escapes.py sniff IFACE OUT READY      (until killed)
       escapes.py seen OUT KIND ADDR...       exit 0 iff a record of KIND names every ADDR
       escapes.py wait OUT KIND ADDR... [--timeout S]   seen, polled until S (default 10)
       escapes.py attack "WANT OP ARGS..."... one child per attack; exit 0 iff each got WANT
       escapes.py hold "OP ARGS..."...        joins (must succeed), then sleeps until killed

sniff: an AF_PACKET socket on IFACE appends one JSON line to OUT per frame of
interest: {"kind": "igmp"|"mld", "groups": [...], "sources": [...]} for
IGMP/MLD membership reports, {"kind": "lsrr", "addrs": [...]} for IPv4
packets with a loose/strict source route, {"kind": "rthdr", "addrs": [...]}
for IPv6 packets with a routing header (the addresses it carries and the
packet's destination).

WANT: ok (the option was set and, for a send, the datagram went), denied
(EPERM at setsockopt, or at the send for the compat and ancillary ways).
An attack the machine cannot make (no 32-bit syscalls) prints "unavailable"
and counts as its WANT: the egress check that it would exercise is then
tested where the machine can.

OP:
  ip-join GROUP                 IP_ADD_MEMBERSHIP on an AF_INET socket
  ip-join-on6 GROUP             IP_ADD_MEMBERSHIP (SOL_IP) on an AF_INET6 socket
  ip-source GROUP SOURCE        IP_ADD_SOURCE_MEMBERSHIP
  mcast-join GROUP              MCAST_JOIN_GROUP (level by the group's family)
  mcast-source GROUP SOURCE     MCAST_JOIN_SOURCE_GROUP
  ipv6-join GROUP               IPV6_ADD_MEMBERSHIP
  ipv6-anycast ADDR             IPV6_JOIN_ANYCAST (CAP_NET_ADMIN): MLD for its solicited-node group
  srh FIRST WAYPOINT FINAL PORT      IPV6_RTHDR (SRv6, type 4), then sendto FINAL
  srh-compat FIRST WAYPOINT FINAL PORT   the same setsockopt as a 32-bit syscall
  lsrr FIRST WAYPOINT FINAL PORT     IP_OPTIONS with LSRR, then sendto FINAL
  lsrr-cmsg FIRST WAYPOINT FINAL PORT  LSRR as IP_RETOPTS ancillary data of one sendmsg
  lsrr-compat FIRST WAYPOINT FINAL PORT  IP_OPTIONS as a 32-bit syscall
  srh-relock, lsrr-relock FIRST WAYPOINT FINAL PORT CTRL
                                the option set at once, then CTRL/ready, and the
                                send only once CTRL/go exists (after a relock)
"""
import ctypes
import errno
import json
import mmap
import os
import socket
import struct
import sys
import time

IP_OPTIONS, IP_RETOPTS = 4, 7
IP_ADD_MEMBERSHIP, IP_ADD_SOURCE_MEMBERSHIP = 35, 39
IPV6_ADD_MEMBERSHIP, IPV6_JOIN_ANYCAST, IPV6_RTHDR = 20, 27, 57
MCAST_JOIN_GROUP, MCAST_JOIN_SOURCE_GROUP = 42, 46
SOL_IP, SOL_IPV6 = 0, 41
ETH_P_ALL = 0x0003
TOKEN = b"bfbpf-escape"

OK, DENIED, ERROR = 0, 1, 2


class Unavailable(Exception):
    pass


def is6(addr):
    return ":" in addr


def ip_bytes(addr):
    return socket.inet_pton(socket.AF_INET6 if is6(addr) else socket.AF_INET, addr)


def sockaddr_storage(addr):
    """struct sockaddr_storage (128 bytes) holding sockaddr_in or sockaddr_in6."""
    if is6(addr):
        raw = struct.pack("=H", socket.AF_INET6) + b"\0" * 6 + ip_bytes(addr)
    else:
        raw = struct.pack("=H", socket.AF_INET) + b"\0" * 2 + ip_bytes(addr)
    return raw.ljust(128, b"\0")


def group_req(group, source=None):
    """struct group_req / group_source_req (x86-64: the sockaddrs at 8 and 136)."""
    raw = struct.pack("=I", 0) + b"\0" * 4 + sockaddr_storage(group)
    if source is not None:
        raw += sockaddr_storage(source)
    return raw


def srh(first, waypoint):
    """An SRv6 header (type 4) for the path first -> waypoint -> the destination.

    segments[0] is the final destination (the kernel writes the connect or
    sendto address there); the packet leaves for segments[segments_left]."""
    segments = [b"\0" * 16, ip_bytes(waypoint), ip_bytes(first)]
    hdrlen = 2 * len(segments)
    return struct.pack("=BBBBBBH", 0, hdrlen, 4, len(segments) - 1, len(segments) - 1, 0, 0) + \
        b"".join(segments)


def lsrr(first, waypoint):
    """IPv4 options: NOP, LSRR with the hops first and waypoint (then the destination)."""
    route = ip_bytes(first) + ip_bytes(waypoint)
    raw = bytes([1, 0x83, 3 + len(route), 4]) + route
    return raw.ljust((len(raw) + 3) // 4 * 4, b"\0")


# ------------------------------------------------------------------ 32-bit syscalls

MAP_32BIT = 0x40
I386_SETSOCKOPT = 366
I386_GETPID = 20


class Compat:
    """int 0x80 from this 64-bit process: the kernel runs it as a 32-bit syscall."""

    def __init__(self):
        self.mem = mmap.mmap(-1, 8192, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_32BIT,
                             prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        self.base = ctypes.addressof(ctypes.c_char.from_buffer(self.mem))
        if self.base >= 1 << 32:
            raise Unavailable("no memory below 4 GiB")

    def call(self, number, *args):
        regs = list(args) + [0] * (5 - len(args))
        code = b"\x53"  # push rbx
        for opcode, value in zip((0xbb, 0xb9, 0xba, 0xbe, 0xbf), regs):  # ebx ecx edx esi edi
            code += bytes([opcode]) + struct.pack("<I", value & 0xffffffff)
        code += b"\xb8" + struct.pack("<I", number) + b"\xcd\x80\x5b\xc3"  # eax; int 0x80; pop rbx; ret
        self.mem.seek(0)
        self.mem.write(code)
        return ctypes.CFUNCTYPE(ctypes.c_int)(self.base)()

    def setsockopt(self, fd, level, name, value):
        self.mem.seek(4096)
        self.mem.write(value)
        return self.call(I386_SETSOCKOPT, fd, level, name, self.base + 4096, len(value))


def compat_available():
    """Does this kernel run 32-bit syscalls? (A fault kills a child, not us.)"""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(0 if Compat().call(I386_GETPID) == os.getpid() else 1)
        except BaseException:  # noqa: BLE001
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


# ------------------------------------------------------------------ attacks

def setopt(sock, level, name, value):
    sock.setsockopt(level, name, value)


def attack(op, args):
    """Returns a detail string; raises OSError (the verdict) or Unavailable."""
    if op == "ip-join":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        setopt(s, SOL_IP, IP_ADD_MEMBERSHIP, ip_bytes(args[0]) + b"\0" * 4)
        return s, "joined"
    if op == "ip-join-on6":
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        setopt(s, SOL_IP, IP_ADD_MEMBERSHIP, ip_bytes(args[0]) + b"\0" * 4)
        return s, "joined"
    if op == "ip-source":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        setopt(s, SOL_IP, IP_ADD_SOURCE_MEMBERSHIP,
               ip_bytes(args[0]) + b"\0" * 4 + ip_bytes(args[1]))
        return s, "joined"
    if op in ("mcast-join", "mcast-source"):
        six = is6(args[0])
        s = socket.socket(socket.AF_INET6 if six else socket.AF_INET, socket.SOCK_DGRAM)
        level = SOL_IPV6 if six else SOL_IP
        if op == "mcast-join":
            setopt(s, level, MCAST_JOIN_GROUP, group_req(args[0]))
        else:
            setopt(s, level, MCAST_JOIN_SOURCE_GROUP, group_req(args[0], args[1]))
        return s, "joined"
    if op in ("ipv6-join", "ipv6-anycast"):
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        name = IPV6_ADD_MEMBERSHIP if op == "ipv6-join" else IPV6_JOIN_ANYCAST
        setopt(s, SOL_IPV6, name, ip_bytes(args[0]) + struct.pack("=I", 0))
        return s, "joined"
    if op.startswith("srh") or op.startswith("lsrr"):
        first, waypoint, final, port = args[0], args[1], args[2], int(args[3])
        six = op.startswith("srh")
        s = socket.socket(socket.AF_INET6 if six else socket.AF_INET, socket.SOCK_DGRAM)
        level, name = (SOL_IPV6, IPV6_RTHDR) if six else (SOL_IP, IP_OPTIONS)
        value = srh(first, waypoint) if six else lsrr(first, waypoint)
        dest = (final, port, 0, 0) if six else (final, port)
        if op.endswith("-compat"):
            if not compat_available():
                raise Unavailable("this kernel runs no 32-bit syscalls")
            rc = Compat().setsockopt(s.fileno(), level, name, value)
            if rc < 0:
                raise OSError(-rc, os.strerror(-rc))
        if op in ("srh", "lsrr", "srh-relock", "lsrr-relock"):
            setopt(s, level, name, value)
        if op.endswith("-relock"):
            open(os.path.join(args[4], "ready"), "w").close()
            deadline = time.monotonic() + 60
            while not os.path.exists(os.path.join(args[4], "go")):
                if time.monotonic() > deadline:
                    raise TimeoutError("no go")
                time.sleep(0.05)
        if op == "lsrr-cmsg":
            s.sendmsg([TOKEN], [(SOL_IP, IP_RETOPTS, value)], 0, dest)
        else:
            s.sendto(TOKEN, dest)
        return s, "set and sent"
    raise ValueError(f"unknown attack {op!r}")


def run_attacks(specs):
    failed = 0
    for spec in specs:
        want, op, *args = spec.split()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            code, detail = ERROR, ""
            try:
                _, detail = attack(op, args)
                code = OK
            except Unavailable as e:
                code, detail = {"ok": OK, "denied": DENIED}[want], f"unavailable: {e}"
            except OSError as e:
                name = errno.errorcode.get(e.errno, str(e.errno))
                code = DENIED if e.errno == errno.EPERM else ERROR
                detail = f"{name} ({e.strerror})"
            except BaseException as e:  # noqa: BLE001 - report, never escape the child
                detail = repr(e)
            os.write(w, detail.encode())
            os._exit(code)
        os.close(w)
        detail = os.read(r, 4096).decode()
        os.close(r)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        good = {"ok": code == OK, "denied": code == DENIED}.get(want, False)
        print(f"attack {op} {' '.join(args)}: {detail}" + ("" if good else f"  ^ expected {want}: MISMATCH"),
              flush=True)
        failed += not good
    return 0 if failed == 0 else 1


def hold(specs):
    """Joins as asked (each must succeed) and keeps the sockets until killed."""
    kept = []
    for spec in specs:
        op, *args = spec.split()
        kept.append(attack(op, args)[0])
    print("joined", flush=True)
    while True:
        time.sleep(3600)


# ------------------------------------------------------------------ the world's side

def ip6_text(raw):
    return socket.inet_ntop(socket.AF_INET6, raw)


def ip4_text(raw):
    return socket.inet_ntop(socket.AF_INET, raw)


def parse_igmp(payload):
    groups, sources = [], []
    kind = payload[0] if payload else 0
    if kind in (0x12, 0x16) and len(payload) >= 8:  # v1/v2 report
        groups.append(ip4_text(payload[4:8]))
    elif kind == 0x22 and len(payload) >= 8:  # v3 report
        count = struct.unpack("!H", payload[6:8])[0]
        at = 8
        for _ in range(count):
            if at + 8 > len(payload):
                break
            aux, nsrc = payload[at + 1], struct.unpack("!H", payload[at + 2:at + 4])[0]
            groups.append(ip4_text(payload[at + 4:at + 8]))
            for i in range(nsrc):
                sources.append(ip4_text(payload[at + 8 + 4 * i:at + 12 + 4 * i]))
            at += 8 + 4 * nsrc + 4 * aux
    return groups, sources


def parse_mld(icmp):
    groups, sources = [], []
    if icmp[0] == 131 and len(icmp) >= 24:  # MLDv1 report
        groups.append(ip6_text(icmp[8:24]))
    elif icmp[0] == 143 and len(icmp) >= 8:  # MLDv2 report
        count = struct.unpack("!H", icmp[6:8])[0]
        at = 8
        for _ in range(count):
            if at + 20 > len(icmp):
                break
            aux, nsrc = icmp[at + 1], struct.unpack("!H", icmp[at + 2:at + 4])[0]
            groups.append(ip6_text(icmp[at + 4:at + 20]))
            for i in range(nsrc):
                sources.append(ip6_text(icmp[at + 20 + 16 * i:at + 36 + 16 * i]))
            at += 20 + 16 * nsrc + 4 * aux
    return groups, sources


def parse_ip4(pkt):
    ihl = (pkt[0] & 0x0f) * 4
    proto, dst = pkt[9], ip4_text(pkt[16:20])
    if proto == 2:
        groups, sources = parse_igmp(pkt[ihl:])
        if groups:
            return {"kind": "igmp", "groups": groups, "sources": sources}
    at, addrs = 20, []
    while at < ihl:
        kind = pkt[at]
        if kind == 0:
            break
        if kind == 1:
            at += 1
            continue
        size = pkt[at + 1] if at + 1 < ihl else 0
        if kind & 0x1f in (3, 9):
            addrs += [ip4_text(pkt[i:i + 4]) for i in range(at + 3, at + size - 3, 4)]
        if size < 2:
            break
        at += size
    if addrs:
        return {"kind": "lsrr", "addrs": addrs + [dst]}
    return None


def parse_ip6(pkt):
    nexthdr, at, addrs, routed = pkt[6], 40, [ip6_text(pkt[24:40])], False
    for _ in range(8):
        if nexthdr == 58:  # ICMPv6
            groups, sources = parse_mld(pkt[at:])
            if groups:
                return {"kind": "mld", "groups": groups, "sources": sources}
            break
        if nexthdr not in (0, 43, 60) or at + 8 > len(pkt):
            break
        size = (pkt[at + 1] + 1) * 8
        if nexthdr == 43:
            routed = True
            addrs += [ip6_text(pkt[i:i + 16]) for i in range(at + 8, min(at + size, len(pkt)) - 15, 16)]
        nexthdr, at = pkt[at], at + size
    if routed:
        return {"kind": "rthdr", "addrs": addrs}
    return None


def sniff(iface, out, ready):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    with open(ready, "w"):
        pass
    with open(out, "a") as f:
        while True:
            frame, meta = s.recvfrom(65536)
            if meta[2] == socket.PACKET_OUTGOING or len(frame) < 34:
                continue
            ethertype, pkt = struct.unpack("!H", frame[12:14])[0], frame[14:]
            record = None
            try:
                if ethertype == 0x0800:
                    record = parse_ip4(pkt)
                elif ethertype == 0x86dd and len(pkt) >= 40:
                    record = parse_ip6(pkt)
            except (IndexError, struct.error, ValueError):
                record = {"kind": "unparsed", "frame": frame.hex()}
            if record:
                f.write(json.dumps(record) + "\n")
                f.flush()


def seen(out, kind, addrs):
    want = {socket.inet_ntop(socket.AF_INET6 if is6(a) else socket.AF_INET, ip_bytes(a))
            for a in addrs}
    try:
        lines = open(out).read().splitlines()
    except FileNotFoundError:
        return False
    for line in lines:
        record = json.loads(line)
        if record["kind"] != kind:
            continue
        named = set(record.get("groups", [])) | set(record.get("sources", [])) | \
            set(record.get("addrs", []))
        if want <= named:
            return True
    return False


def main(argv):
    if len(argv) >= 4 and argv[0] == "sniff":
        sniff(argv[1], argv[2], argv[3])
        return 0
    if len(argv) >= 4 and argv[0] in ("seen", "wait"):
        timeout = 10.0
        if "--timeout" in argv:
            i = argv.index("--timeout")
            timeout = float(argv[i + 1])
            argv = argv[:i] + argv[i + 2:]
        deadline = time.monotonic() + (timeout if argv[0] == "wait" else 0)
        while True:
            if seen(argv[1], argv[2], argv[3:]):
                return 0
            if time.monotonic() >= deadline:
                return 1
            time.sleep(0.05)
    if len(argv) >= 2 and argv[0] == "attack":
        return run_attacks(argv[1:])
    if len(argv) >= 2 and argv[0] == "hold":
        return hold(argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
