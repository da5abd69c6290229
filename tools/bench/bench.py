#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Helpers of `make bench` (tools/bench/run.sh): policies, control-socket
timing, memory figures. Every subcommand prints JSON on stdout and exits
non-zero when it could not do its job (a missed goal is not a failure).

  bench.py policy --count N --seed S [--fixed ENTRY]... --out FILE [--filter FILE]
  bench.py update-timing --socket S --cgroup CG --sizes 100,1000 --rounds R --dir D --tag T
  bench.py attach-many --socket S --cgroups-file F --policy-dir D
  bench.py verify-many --socket S --cgroups-file F
  bench.py detach-many --socket S --cgroups-file F
  bench.py memory --bpffs DIR --pid PID
  bench.py names --count N --hosts FILE --list FILE --policy FILE
  bench.py cpu --pid PID...
  bench.py names-attach --socket S --cgroup CG [--netns NS] --policy FILE --pid PID --idle S [--settle S]
  bench.py wait-names --socket S --cgroup CG [--timeout S]
  bench.py sandbox-status --socket S --cgroup CG
  bench.py render --results FILE --out FILE --machine FILE --command CMD [--quick]
"""
import argparse
import ipaddress
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import time

import bench_containers  # benchmark 8: its rows of the report (beside this file)


# ---------------------------------------------------------------- policies

def generated_entries(count, seed):
    """count distinct entries, a mix like a real allowlist at scale:
    50% exact IPv4, 20% exact IPv6 (hash map), 10% IPv4 CIDRs, 20% IPv6
    CIDRs (LPM trie); one exact IPv4 in ten carries a port. All of them in
    198.19.0.0/16, 198.18.128.0/17, fd00:b::/32 and fd00:c::/32: never the
    bench's own addresses (198.18.0-2.x, fd00::x)."""
    rng = random.Random(seed)
    n4 = count * 50 // 100
    n6 = count * 20 // 100
    c4 = count * 10 // 100
    c6 = count - n4 - n6 - c4
    out = []
    for i, v in enumerate(rng.sample(range(65536), n4)):
        e = "198.19.%d.%d" % (v >> 8, v & 255)
        out.append(e + ":443" if i % 10 == 9 else e)
    for v in rng.sample(range(1 << 32), n6):
        out.append("fd00:b:%x:%x::%x" % (seed & 0xffff, v >> 16, v & 0xffff))
    # /31 .. /24 blocks in 198.18.128.0/17, aligned, distinct
    seen = set()
    for v in rng.sample(range(16384), 16384):
        if len(seen) == c4:
            break
        plen = 31 - (v % 8) if c4 <= 1024 else 31
        base = 0xC6128000 + v * 2
        net = str(ipaddress.ip_network("%s/%d" % (ipaddress.ip_address(base), plen),
                                       strict=False))
        if net not in seen:
            seen.add(net)
            out.append(net)
    for v in rng.sample(range(1 << 32), c6):
        out.append("fd00:c:%x:%x::/64" % (v >> 16, v & 0xffff))
    return list(dict.fromkeys(out))[:count]


def tinyproxy_regex(entry):
    """The tinyproxy Filter line (extended regex on the CONNECT host) that
    allows what a bfbpf entry allows, as closely as a host regex can."""
    host = entry.rsplit(":", 1)[0] if entry.count(":") == 1 else entry
    if host.startswith("["):
        host = host[1:].split("]")[0]
    if "/" not in host:
        return "^" + re.escape(host) + "$"
    net = ipaddress.ip_network(host)
    if net.version == 4:
        octets = str(net.network_address).split(".")
        whole = net.prefixlen // 8
        return "^" + r"\.".join(octets[:whole]) + r"\." + (
            "[0-9.]+$" if whole < 4 else "$")
    groups = net.network_address.exploded.split(":")[: net.prefixlen // 16]
    return "^" + ":".join(g.lstrip("0") or "0" for g in groups) + ":"


def cmd_policy(args):
    if args.many:
        base, out = args.seed, args.out
        for i in range(args.many):
            args.many, args.seed, args.out = 0, base + i, out % i
            cmd_policy(args)
        return
    fixed = args.fixed or []
    entries = fixed + generated_entries(max(0, args.count - len(fixed)), args.seed)
    policy = {"network_mode": "allowlist", "allowed_hosts": entries,
              "allow_model_endpoint": False}
    with open(args.out, "w") as f:
        json.dump(policy, f)
    if args.filter:
        with open(args.filter, "w") as f:
            for e in entries:
                f.write(tinyproxy_regex(e) + "\n")
    print(json.dumps({"entries": len(entries), "bytes": os.path.getsize(args.out)}))


# ---------------------------------------------------------------- control socket

class Ctl:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buf = b""

    def call_raw(self, line):
        """line: bytes ending in newline. Returns (reply dict, seconds)."""
        t0 = time.perf_counter()
        try:
            self.sock.sendall(line)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the daemon refused early (e.g. too_large): its reply may be waiting
        while b"\n" not in self.buf:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("the daemon closed the connection")
            self.buf += chunk
        dt = time.perf_counter() - t0
        reply, self.buf = self.buf.split(b"\n", 1)
        return json.loads(reply), dt

    def call(self, request):
        return self.call_raw(json.dumps(request).encode() + b"\n")


def request_line(op, cgroup, policy=None):
    req = {"op": op, "cgroup": cgroup}
    if policy is not None:
        req["policy"] = policy
    return json.dumps(req, separators=(",", ":")).encode() + b"\n"


def pct(values, q):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q / 100 * (len(s) - 1)))))]


def summary_ms(seconds):
    ms = [s * 1000 for s in seconds]
    if not ms:
        return {"n": 0}
    return {"n": len(ms), "p50": statistics.median(ms), "p99": pct(ms, 99),
            "min": min(ms), "max": max(ms)}


def cmd_update_timing(args):
    """Alternates updates A(N) -> B(N) -> A(N) for each size; times each
    round trip on the socket (one line in, one out), the request line built
    beforehand. Also times `bfbpf update` (the CLI, process start included)."""
    out = {"tag": args.tag, "sizes": {}}
    failed = False
    for size in [int(s) for s in args.sizes.split(",")]:
        pa = os.path.join(args.dir, "upd-a-%d.json" % size)
        pb = os.path.join(args.dir, "upd-b-%d.json" % size)
        lines = []
        for p in (pa, pb):
            with open(p) as f:
                lines.append(request_line("update", args.cgroup, json.load(f)))
        res = {"request_bytes": len(lines[0])}
        ctl = Ctl(args.socket)
        try:
            reply, _ = ctl.call_raw(lines[0])  # warm up: the sandbox now has A(N)
        except (ConnectionError, OSError) as e:
            reply = {"ok": False, "error": {"code": "connection", "message": str(e)}}
        if not reply.get("ok"):
            res["error"] = reply.get("error")
            if args.bfbpf and args.cli_rounds:
                rc = subprocess.run([args.bfbpf, "update", "--cgroup", args.cgroup,
                                     "--policy", pa, "--socket", args.socket],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                if rc.returncode:
                    res["cli_error"] = rc.stderr.decode().strip()
            out["sizes"][str(size)] = res
            continue
        times = []
        for r in range(args.rounds):
            reply, dt = ctl.call_raw(lines[(r + 1) % 2])
            if not reply.get("ok"):
                res["error"] = reply.get("error")
                failed = True
                break
            times.append(dt)
        res["socket_ms"] = summary_ms(times)
        res["entries"] = reply.get("entries")
        # the CLI, process start and file parsing included
        if args.bfbpf and args.cli_rounds:
            cli = []
            for r in range(args.cli_rounds):
                p = pb if r % 2 == 0 else pa
                t0 = time.perf_counter()
                rc = subprocess.run([args.bfbpf, "update", "--cgroup", args.cgroup,
                                     "--policy", p, "--socket", args.socket],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                dt = time.perf_counter() - t0
                if rc.returncode:
                    res["cli_error"] = rc.stderr.decode().strip()
                    break
                cli.append(dt)
            res["cli_ms"] = summary_ms(cli)
            # leave the sandbox on A(N) for the next size
            ctl.call_raw(lines[0])
        out["sizes"][str(size)] = res
    print(json.dumps(out))
    return 1 if failed else 0


def read_cgroups(path):
    with open(path) as f:
        return [l.strip() for l in f if l.strip()]


def cmd_attach_many(args):
    ctl = Ctl(args.socket)
    times, errors = [], []
    t_all = time.perf_counter()
    for i, cg in enumerate(read_cgroups(args.cgroups_file)):
        with open(os.path.join(args.policy_dir, "scale-%d.json" % i)) as f:
            line = request_line("attach", cg, json.load(f))
        reply, dt = ctl.call_raw(line)
        if not reply.get("ok"):
            errors.append(reply.get("error"))
            continue
        times.append(dt)
    total = time.perf_counter() - t_all
    print(json.dumps({"attach_ms": summary_ms(times), "errors": len(errors),
                      "first_error": errors[0] if errors else None, "total_s": total}))
    return 1 if errors else 0


def cmd_verify_many(args):
    ctl = Ctl(args.socket)
    times, failed, errors = [], [], []
    for cg in read_cgroups(args.cgroups_file):
        reply, dt = ctl.call_raw(request_line("verify", cg))
        if not reply.get("ok"):
            errors.append(reply.get("error"))
            continue
        times.append(dt)
        if not reply.get("lockdown_complete"):
            failed.append([c for c in reply.get("checks", []) if not c.get("ok")][:2])
    print(json.dumps({"verify_ms": summary_ms(times), "errors": len(errors),
                      "not_locked": len(failed), "first_failure": failed[0] if failed else
                      (errors[0] if errors else None)}))
    return 1 if errors or failed else 0


def cmd_detach_many(args):
    ctl = Ctl(args.socket)
    times, errors = [], []
    for cg in read_cgroups(args.cgroups_file):
        reply, dt = ctl.call_raw(request_line("detach", cg))
        if not reply.get("ok"):
            errors.append(reply.get("error"))
            continue
        times.append(dt)
    print(json.dumps({"detach_ms": summary_ms(times), "errors": len(errors),
                      "first_error": errors[0] if errors else None}))
    return 1 if errors else 0


def cmd_memory(args):
    maps = {}
    mapdir = os.path.join(args.bpffs, "maps")
    for name in sorted(os.listdir(mapdir)):
        info = json.loads(subprocess.run(
            ["bpftool", "-j", "map", "show", "pinned", os.path.join(mapdir, name)],
            check=True, capture_output=True).stdout)
        maps[name] = {"bytes_memlock": int(info.get("bytes_memlock", 0)),
                      "max_entries": info.get("max_entries"), "type": info.get("type")}
    status = {}
    with open("/proc/%d/status" % args.pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                status[k] = int(v.split()[0]) * 1024
    with open("/proc/%d/stat" % args.pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu_ticks = int(fields[11]) + int(fields[12])
    print(json.dumps({"maps": maps, "maps_bytes": sum(m["bytes_memlock"] for m in maps.values()),
                      "rss_bytes": status.get("VmRSS"), "hwm_bytes": status.get("VmHWM"),
                      "cpu_seconds": cpu_ticks / os.sysconf("SC_CLK_TCK")}))


# ---------------------------------------------------------------- names and DNS

def cmd_names(args):
    """COUNT names n0001.bench.test ... with distinct addresses in
    198.18.64.0/22 (never the bench's own 198.18.0-2.x): a hosts file for
    dnsmasq, the list of names, and an allowlist policy naming them all."""
    names, lines = [], []
    for i in range(1, args.count + 1):
        name = "n%04d.bench.test" % i
        addr = ipaddress.ip_address("198.18.64.0") + i
        names.append(name)
        lines.append("%s %s\n" % (addr, name))
    with open(args.hosts, "w") as f:
        f.writelines(lines)
    with open(args.list, "w") as f:
        f.write("\n".join(names) + "\n")
    with open(args.policy, "w") as f:
        json.dump({"network_mode": "allowlist", "allowed_hosts": names,
                   "allow_model_endpoint": False}, f)
    print(json.dumps({"names": len(names)}))


def cpu_of(pid):
    """CPU seconds of a process: utime + stime (/proc/PID/stat, clock ticks,
    exited threads included) and the sum of its threads' schedstat run time
    (nanoseconds: what a 10 ms tick cannot show)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    sched = 0
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                sched += int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        sched = None
    return {"cpu_s": ticks, "sched_s": sched / 1e9 if sched is not None else None}


def cpu_delta(a, b):
    return {k: (b[k] - a[k]) if a[k] is not None and b[k] is not None else None for k in a}


def cmd_cpu(args):
    print(json.dumps({str(p): cpu_of(p) for p in args.pid}))


def cmd_names_attach(args):
    """Attach one sandbox whose policy names COUNT names; time the reply (it
    comes after the first resolution of every name, or 5 s), check that every
    name has addresses, take the daemon's CPU time during the attach and
    during an idle window, detach."""
    with open(args.policy) as f:
        policy = json.load(f)
    expect = len(policy["allowed_hosts"])
    ctl = Ctl(args.socket)
    req = {"op": "attach", "cgroup": args.cgroup, "policy": policy}
    if args.netns:
        req["netns"] = args.netns
    line = json.dumps(req, separators=(",", ":")).encode() + b"\n"
    c0 = cpu_of(args.pid)
    t0 = time.time()
    reply, dt = ctl.call_raw(line)
    c1 = cpu_of(args.pid)
    if not reply.get("ok"):
        print(json.dumps({"error": reply.get("error")}))
        return 1
    out = {"names": expect, "attach_ms": dt * 1000, "entries": reply.get("entries"),
           "unresolved": len(reply.get("unresolved", [])),
           "unresolved_first": (reply.get("unresolved") or [None])[0],
           "attach_cpu": cpu_delta(c0, c1)}
    def names_status():
        status, _ = ctl.call({"op": "status", "cgroup": args.cgroup})
        sb = (status.get("sandboxes") or [{}])[0]
        return sb, sb.get("names") or []

    sb, names = names_status()
    out["status_names"] = len(names)
    out["status_with_addresses"] = sum(1 for n in names if n.get("addresses"))
    out["status_entries"] = sb.get("entries")
    out["first_error"] = next((n.get("last_error") for n in names if n.get("last_error")), None)
    # not all there: how long until they are (every 0.5 s, for at most --settle s)
    t_end = t0 + args.settle
    while (out["status_with_addresses"] < expect or sb.get("entries", 0) < expect) and \
            time.time() < t_end:
        time.sleep(0.5)
        sb, names = names_status()
        out["status_with_addresses"] = sum(1 for n in names if n.get("addresses"))
        out["status_entries"] = sb.get("entries")
    out["settled_s"] = time.time() - t0 if out["status_with_addresses"] == expect else None
    out["settle_cpu"] = cpu_delta(c0, cpu_of(args.pid))
    # seconds from a name's resolution to its next refresh: the idle window
    # below must fit in it
    gaps = [n["next_refresh"] - n["last_attempt"] for n in names
            if n.get("next_refresh") and n.get("last_attempt")]
    out["refresh_after_s"] = min(gaps) if gaps else None
    # idle: nothing asked of the daemon until the next refresh
    c2 = cpu_of(args.pid)
    t2 = time.time()
    time.sleep(args.idle)
    c3 = cpu_of(args.pid)
    out["idle_seconds"] = time.time() - t2
    out["idle_ends_at_s"] = time.time() - t0
    out["idle_cpu"] = cpu_delta(c2, c3)
    reply, _ = ctl.call({"op": "detach", "cgroup": args.cgroup})
    out["detached"] = bool(reply.get("ok"))
    print(json.dumps(out))
    # names that do not resolve in time are a missed goal, not a broken bench
    return 0 if out["detached"] else 1


def cmd_wait_names(args):
    """Wait until every name of a sandbox's policy has addresses and the maps
    hold them (its entries), for at most --timeout seconds."""
    ctl = Ctl(args.socket)
    t0 = time.time()
    while True:
        status, _ = ctl.call({"op": "status", "cgroup": args.cgroup})
        sb = (status.get("sandboxes") or [{}])[0]
        names = sb.get("names") or []
        have = sum(1 for n in names if n.get("addresses"))
        if (have == len(names) and sb.get("entries", 0) >= len(names)) or \
                time.time() - t0 > args.timeout:
            break
        time.sleep(0.5)
    print(json.dumps({"seconds": time.time() - t0, "names": len(names),
                      "with_addresses": have, "entries": sb.get("entries")}))
    return 0 if have == len(names) else 1


def cmd_sandbox_status(args):
    """One sandbox's status object, compact: the DNS and event counters."""
    ctl = Ctl(args.socket)
    status, _ = ctl.call({"op": "status", "cgroup": args.cgroup})
    sb = (status.get("sandboxes") or [{}])[0]
    print(json.dumps({"dns": (sb.get("dns") or {}).get("queries"),
                      "events": ((sb.get("counters") or {}).get("events"))}))
    return 0 if status.get("ok") else 1


# ---------------------------------------------------------------- rendering

def load_results(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    return rows


def med(values):
    return statistics.median(values) if values else None


def fmt(v, digits=0, unit=""):
    if v is None:
        return "—"
    if digits == 0:
        return "{:,.0f}{}".format(v, unit)
    return "{:,.{d}f}{}".format(v, unit, d=digits)


def spread(values, digits=0, scale=1.0):
    if not values:
        return "—"
    return "{}–{}".format(fmt(min(values) * scale, digits), fmt(max(values) * scale, digits))


FLOOR_LABEL = "(f) floor: a cgroup_skb program that allows all"


def floor_ratios(w, rounds, variants, prefix):
    """bfbpf against the floor (f), round by round: its own share of the cost."""
    for v in variants:
        pr = paired_ratios(rounds, "f", v)
        if pr:
            w("\nPaired per-round ratio {}{}/f (bfbpf's own cost, beyond the kernel's for any "
              "cgroup_skb program): median {:.3f}, min–max {:.3f}–{:.3f}.".format(
                  prefix, v, med(pr), min(pr), max(pr)))


def paired_ratios(rounds, base, variant):
    """Per-round ratio variant/base: the rounds are interleaved, so a round
    pairs measurements taken seconds apart."""
    out = []
    for r in rounds.values():
        if base in r and variant in r and r[base]:
            out.append(r[variant] / r[base])
    return out


def goal_text(ok):
    return "**met**" if ok else "**missed**"


def render_sni(w, rows, goals):
    """Benchmark 10: names bound to TLS, the rule on against the unfiltered cgroup (a)
    and against the rule off (address-only judging): handshakes/s and a TLS download."""
    sni = [r for r in rows if r.get("bench") == "sni"]
    labels = {"a": "unfiltered (baseline)", "off": "bfbpf, `\"sni\": \"off\"`",
              "on": "bfbpf, `\"sni\": \"enforce\"`"}
    for what, key, label, scale, unit, target in (
            ("handshake", "rate", "TCP connect + TLS handshake per second (one Python client)",
             1.0, "/s", 0.97),
            ("bulk", "bytes_per_s", "TLS download (curl), Mbit/s", 8e-6, "", 0.97)):
        rs = [r for r in sni if r["what"] == what]
        if not rs:
            continue
        rounds = {}
        for r in rs:
            rounds.setdefault(r["round"], {})[r["variant"]] = r[key]
        base = med([r[key] for r in rs if r["variant"] == "a"])
        for v in ("a", "off", "on"):
            vals = [r[key] * scale for r in rs if r["variant"] == v]
            if not vals:
                continue
            m = med(vals)
            ratio = m / (base * scale) if base else None
            goal = ""
            if v == "on" and ratio is not None:
                ok = ratio >= target
                goal = "≥ {}: {}".format(target, goal_text(ok))
                goals.append(("{} with the SNI rule on (vs unfiltered)".format(
                    "Connect + TLS handshake rate" if what == "handshake" else "TLS download"),
                    "≥ {}".format(target), "{:.3f}".format(ratio), ok))
            w("| 10 | {} | {} | {} | {} | {} | {} |".format(
                label, labels[v], fmt(m, 0 if what == "handshake" else 1), spread(vals),
                "{:.3f}".format(ratio) if ratio else "—", goal))
        pr = paired_ratios(rounds, "a", "on")
        if pr:
            w("| 10 | {}: paired per-round ratio on/a | | median {:.3f} | {:.3f}–{:.3f} | | |".format(
                what, med(pr), min(pr), max(pr)))


def render_sni_refused(w, rows, goals):
    """Benchmark 10, last: how long a refused flow waits before its client sees the
    error (issue 20: within a second, not a TCP timeout)."""
    rs = [r for r in rows if r.get("bench") == "sni" and r.get("what") == "refused"]
    if not rs:
        return
    waits = [x for r in rs for x in r["waits_ms"]]
    stalled = sum(r["timeouts"] for r in rs) + sum(r["handshakes"] for r in rs)
    ok = not stalled and max(waits) < 1000
    goals.append(("A refused TLS flow: connect to the client's error (worst of {})".format(
        len(waits)), "< 1000 ms", "{:.0f} ms".format(max(waits)), ok))
    w("| 10 | refused flow (`evil.test`): connect to the client's error, ms | "
      "bfbpf, `\"sni\": \"enforce\"` | {} | {} | | < 1000 ms (worst; {} stalled): {} |".format(
          fmt(med(waits), 0), spread(waits), stalled, goal_text(ok)))


def render(args):
    rows = load_results(args.results)
    with open(args.machine) as f:
        machine = json.load(f)
    goals = []
    L = []
    w = L.append
    w("# Performance\n")
    if args.quick:
        w("> Smoke run (`make bench BENCH_QUICK=1`): tiny counts, the figures mean "
          "nothing. The published figures are in `docs/performance.md`.\n")
    w("Measured by `make bench` (`tools/bench/run.sh`) on this project's machine, in "
      "network namespaces and cgroups it makes. The figures vary from run to run "
      "on a shared machine: what the bench publishes is **ratios** of medians of "
      "interleaved rounds, with the raw medians and the min–max spread beside them. "
      "Compare ratios across runs, not absolute figures.\n")
    w("## Machine and run\n")
    w("| | |")
    w("| --- | --- |")
    for k in ("date", "host_kernel", "cpu", "cpus", "memory", "os", "bfbpf", "tinyproxy",
              "iperf3", "curl", "dnsmasq", "duration", "load_average"):
        if k in machine:
            w("| {} | {} |".format(k.replace("_", " "), machine[k]))
    w("")
    w("Reproduce (as root, on an idle machine): `{}`\n".format(args.command))
    try:
        load = max(float(x) for x in machine.get("load_average", "0").split(" at ")[0].split())
    except ValueError:
        load = 0
    if load > 0.75 * (machine.get("cpus") or 1):
        w("> **This run shared the machine with other work** (load average {} on {} CPUs "
          "when it started). The connect-rate and bulk ratios of such a run are dominated "
          "by noise (see the spread and the per-round ratios): read them as a smoke test, "
          "and rerun `make bench` on an idle machine before drawing conclusions from them. "
          "The update, verdict, attach and memory figures depend far less on the load.\n"
          .format(machine["load_average"].split(" at ")[0], machine.get("cpus")))

    # ---- connect rate
    conn = [r for r in rows if r.get("bench") == "connect"]
    labels = {
        "a": "(a) no filter",
        "f": FLOOR_LABEL,
        "b10": "(b) bfbpf, 10 entries (server: exact address, hash map)",
        "b10k": "(b) bfbpf, 10,000 entries (server: exact address, hash map)",
        "b10kw": "(b) bfbpf, 10,000 entries (server: CIDR with a port, 4 lookups)",
        "c10": "(c) tinyproxy CONNECT, 10-entry filter",
        "c10k": "(c) tinyproxy CONNECT, 10,000-entry filter",
    }
    w("## Summary\n")
    w("| # | Figure | Variant | Median | Min–max | Ratio to (a) | Goal |")
    w("| --- | --- | --- | --- | --- | --- | --- |")
    by_round = {}
    for r in conn:
        by_round.setdefault(r["round"], {})[r["variant"]] = r["rate"]
    base = med([r["rate"] for r in conn if r["variant"] == "a"])
    for v in ("a", "f", "b10", "b10k", "b10kw", "c10", "c10k"):
        vals = [r["rate"] for r in conn if r["variant"] == v]
        if not vals:
            continue
        m = med(vals)
        ratio = m / base if base else None
        goal = ""
        if v.startswith("b") and ratio is not None:
            ok = ratio >= 0.97
            goal = "≥ 0.97: " + goal_text(ok)
            goals.append(("Connect rate " + labels[v], "≥ 0.97", "{:.3f}".format(ratio), ok))
        w("| 1 | TCP connect + close /s | {} | {} | {} | {} | {} |".format(
            labels[v], fmt(m), spread(vals), "{:.3f}".format(ratio) if ratio else "—", goal))
    b_best = med([r["rate"] for r in conn if r["variant"] == "b10k"])
    c_med = med([r["rate"] for r in conn if r["variant"] == "c10"])

    # ---- bulk
    bulk = [r for r in rows if r.get("bench") == "bulk"]
    blabels = {"a": "(a) no filter", "f": FLOOR_LABEL, "b10": "(b) bfbpf, 10 entries",
               "b10k": "(b) bfbpf, 10,000 entries",
               "b10kw": "(b) bfbpf, 10,000 entries, CIDR + port (4 lookups/packet)"}
    for proto in ("tcp", "udp"):
        rs = [r for r in bulk if r["proto"] == proto]
        base = med([r["bps"] for r in rs if r["variant"] == "a"])
        for v in ("a", "f", "b10", "b10k", "b10kw"):
            vals = [r["bps"] for r in rs if r["variant"] == v]
            if not vals:
                continue
            m = med(vals)
            ratio = m / base if base else None
            goal = ""
            if v.startswith("b") and ratio is not None:
                ok = ratio >= 0.99
                goal = "≥ 0.99: " + goal_text(ok)
                goals.append(("iperf3 {} {}".format(proto.upper(), blabels[v]), "≥ 0.99",
                              "{:.3f}".format(ratio), ok))
            extra = ""
            if proto == "udp":
                loss = med([r.get("lost_percent", 0) for r in rs if r["variant"] == v])
                extra = " (loss {:.1f}%)".format(loss) if loss is not None else ""
            w("| 2 | iperf3 {} Gbit/s{} | {} | {} | {} | {} | {} |".format(
                proto.upper(), extra, blabels[v], fmt(m / 1e9, 2),
                spread(vals, 2, 1e-9), "{:.3f}".format(ratio) if ratio else "—", goal))
    http = [r for r in rows if r.get("bench") == "http"]
    hlabels = {"a": "(a) direct, no filter", "b10k": "(b) direct, bfbpf 10,000 entries",
               "c10": "(c) through tinyproxy (CONNECT), 10-entry filter"}
    base = med([r["bps"] for r in http if r["variant"] == "a"])
    for v in ("a", "b10k", "c10"):
        vals = [r["bps"] for r in http if r["variant"] == v]
        if not vals:
            continue
        m = med(vals)
        w("| 2 | HTTP download MB/s (curl, {} MiB) | {} | {} | {} | {} | |".format(
            http[0]["mib"], hlabels[v], fmt(m / 1e6), spread(vals, 0, 1e-6),
            "{:.3f}".format(m / base) if base else "—"))

    # ---- update
    upd = [r for r in rows if r.get("bench") == "update"]
    for r in upd:
        for size, s in sorted(r["sizes"].items(), key=lambda kv: int(kv[0])):
            label = "{:,} → {:,} entries, {}".format(int(size), int(size), r["tag"])
            if "error" in s and "socket_ms" not in s:
                e = s["error"] or {}
                w("| 3 | Policy update ms (socket round trip) | {} | refused: `{}` ({:,} byte request) | | | |".format(
                    label, e.get("code"), s.get("request_bytes", 0)))
                if int(size) == 10000:
                    goals.append(("Update 10k entries " + r["tag"], "≤ 20 ms", "refused", False))
                continue
            sm = s["socket_ms"]
            goal = ""
            if int(size) == 10000:
                ok = sm["p50"] <= 20
                goal = "≤ 20 ms: " + goal_text(ok)
                goals.append(("Update 10k entries, " + r["tag"] + " (p50)", "≤ 20 ms",
                              "{:.1f} ms".format(sm["p50"]), ok))
            w("| 3 | Policy update ms (socket round trip) | {} | {} (p99 {}) | {}–{} | | {} |".format(
                label, fmt(sm["p50"], 1), fmt(sm["p99"], 1), fmt(sm["min"], 1),
                fmt(sm["max"], 1), goal))
            if s.get("cli_ms", {}).get("n"):
                cm = s["cli_ms"]
                w("| 3 | Policy update ms (`bfbpf update`, process start included) | {} | {} | {}–{} | | |".format(
                    label, fmt(cm["p50"], 1), fmt(cm["min"], 1), fmt(cm["max"], 1)))
            elif s.get("cli_error"):
                w("| 3 | Policy update (`bfbpf update`) | {} | failed: {} | | | |".format(
                    label, s["cli_error"].replace("|", "/")))
    atom = [r for r in rows if r.get("bench") == "atomic"]
    for r in atom:
        v = r["verdicts"]
        ok = v["wrong_verdicts"] == 0 and v["denied_other_error"] == 0
        goals.append(("Wrong verdicts under concurrent updates", "0",
                      "{} (+{} slow allowed connects)".format(v["wrong_verdicts"],
                                                             v["allowed_slow"]), ok))
        w("| 3 | Wrong verdicts during {} updates | {:,} connects ({:,} allowed, {:,} denied) | "
          "**{}** wrong; {} allowed connects > 200 ms (max {:.0f} ms) | | | = 0: {} |".format(
              r["updates"], v["allowed_ok"] + v["allowed_refused"] + v["denied_eperm"] +
              v["denied_connected"] + v["denied_other_error"], v["allowed_ok"] +
              v["allowed_refused"], v["denied_eperm"] + v["denied_connected"] +
              v["denied_other_error"], v["wrong_verdicts"], v["allowed_slow"],
              v["allowed_max_ms"], goal_text(ok)))

    # ---- scale
    sc = [r for r in rows if r.get("bench") == "scale"]
    for r in sc:
        a = r["attach"]["attach_ms"]
        ok = a.get("p50") is not None and a["p50"] <= 10
        goals.append(("Attach p50 ({} sandboxes)".format(r["count"]), "≤ 10 ms",
                      "{:.2f} ms".format(a["p50"]) if a.get("p50") is not None else "—", ok))
        w("| 4 | Attach ms, {:,} sandboxes × 100 entries | p50 / p99 | {} / {} | {}–{} | | ≤ 10 ms: {} |".format(
            r["count"], fmt(a.get("p50"), 2), fmt(a.get("p99"), 2), fmt(a.get("min"), 2),
            fmt(a.get("max"), 2), goal_text(ok)))
        vm = r["verify"]["verify_ms"]
        w("| 4 | Verify ms, {:,} sandboxes | p50 / p99; {} not locked | {} / {} | {}–{} | | |".format(
            r["count"], r["verify"]["not_locked"], fmt(vm.get("p50"), 2), fmt(vm.get("p99"), 2),
            fmt(vm.get("min"), 2), fmt(vm.get("max"), 2)))
        mem_after = r["memory_after"]
        total = mem_after["maps_bytes"] + mem_after["rss_bytes"]
        ok = total <= 64 * 1024 * 1024
        goals.append(("Total memory, {} sandboxes".format(r["count"]), "≤ 64 MiB",
                      "{:.1f} MiB".format(total / 1048576), ok))
        w("| 4 | Memory, {:,} sandboxes | BPF maps {:.1f} MiB + daemon RSS {:.1f} MiB (peak {:.1f}) | **{:.1f} MiB** | | | ≤ 64 MiB: {} |".format(
            r["count"], mem_after["maps_bytes"] / 1048576, mem_after["rss_bytes"] / 1048576,
            mem_after["hwm_bytes"] / 1048576, total / 1048576, goal_text(ok)))
        if "idle_cpu_percent" in r:
            w("| 4 | Daemon CPU, idle with {:,} sandboxes | over {} s | {:.1f}% of a core | | | |".format(
                r["count"], r["idle_seconds"], r["idle_cpu_percent"]))
        d = r["detach"]["detach_ms"]
        w("| 4 | Detach ms, {:,} sandboxes | p50 / p99 | {} / {} | {}–{} | | |".format(
            r["count"], fmt(d.get("p50"), 2), fmt(d.get("p99"), 2), fmt(d.get("min"), 2),
            fmt(d.get("max"), 2)))
    # ---- names
    nm = [r for r in rows if r.get("bench") == "names"]
    if nm:
        n = nm[0]["names"]
        att = [r["attach_ms"] for r in nm]
        unres = [r["unresolved"] for r in nm]
        ok = max(att) <= 2000 and max(unres) == 0
        goals.append(("Attach with {:,} names: reply ≤ 2 s with every name resolved (worst round)".format(n),
                      "≤ 2 s, 0 unresolved", "{:.0f} ms, {} unresolved".format(max(att), max(unres)), ok))
        w("| 5 | Attach ms, policy of {:,} names (the reply waits for the first resolution of every name, at most 5 s) | "
          "all rounds, a fresh daemon each | {} | {} | | ≤ 2 s: {} |".format(
              n, fmt(med(att), 0), spread(att, 0), goal_text(max(att) <= 2000)))
        w("| 5 | The attach's reply: names in `unresolved`; entries programmed | all rounds | "
          "{} unresolved; {} entries | {}–{} unresolved; {}–{} entries | | 0 unresolved: {} |".format(
              fmt(med(unres)), fmt(med([r["entries"] or 0 for r in nm])), min(unres), max(unres),
              min(r["entries"] or 0 for r in nm), max(r["entries"] or 0 for r in nm),
              goal_text(max(unres) == 0)))
        settled = [r["settled_s"] for r in nm if r.get("settled_s") is not None]
        w("| 5 | Seconds from the attach until `status` shows all {:,} names with addresses and the maps hold them | "
          "all rounds | {} | {} | | {} |".format(
              n, fmt(med(settled), 1) if settled else "never",
              spread(settled, 1), "" if len(settled) == len(nm) else
              "{} rounds never within {} s".format(len(nm) - len(settled), 40)))
        cpu = [r["attach_cpu"]["cpu_s"] for r in nm]
        sch = [r["attach_cpu"]["sched_s"] for r in nm if r["attach_cpu"].get("sched_s") is not None]
        w("| 5 | Daemon CPU s during the attach ({:,} names, A and AAAA) | utime+stime (threads' run time) | "
          "{} ({}) | {} | | |".format(n, fmt(med(cpu), 2), fmt(med(sch), 3), spread(cpu, 2)))
        if any(r["unresolved"] for r in nm):
            scpu = [r["settle_cpu"]["cpu_s"] for r in nm]
            w("| 5 | Daemon CPU s from the attach until every name resolved (retries, and `status` every 0.5 s) | "
              "utime+stime | {} | {} | | |".format(fmt(med(scpu), 2), spread(scpu, 2)))
        idle = {}
        for v, label in (("verify3600", "`--verify-interval 3600` (no periodic verification)"),
                         ("verify5", "default `--verify-interval 5`")):
            rs = [r for r in nm if r["variant"] == v]
            if not rs:
                continue
            secs = med([r["idle_seconds"] for r in rs])
            ticks = [r["idle_cpu"]["cpu_s"] for r in rs]
            run = [r["idle_cpu"]["sched_s"] for r in rs if r["idle_cpu"].get("sched_s") is not None]
            idle[v] = (med(run), secs)
            goal = ""
            if v == "verify3600":
                # a 10 ms clock tick is what utime+stime can show
                ok = max(ticks) < 0.01
                goal = "none measurable: " + goal_text(ok)
                goals.append(("Daemon CPU between refreshes, {:,} names, {:.0f} s idle".format(n, secs),
                              "none measurable (< 0.01 s)", "{:.2f} s ({:.2f} ms run time)".format(
                                  max(ticks), med(run) * 1000 if run else float("nan")), ok))
            w("| 5 | Daemon CPU s, idle {:.0f} s between refreshes (names' TTL {} s), once every name resolved | {} | "
              "{:.2f} ({:.2f} ms run time) | {}–{} | | {} |".format(
                  secs, nm[0].get("ttl", "?"), label, med(ticks),
                  med(run) * 1000 if run else float("nan"), fmt(min(ticks), 2), fmt(max(ticks), 2), goal))
        if "verify5" in idle and "verify3600" in idle and idle["verify5"][0] is not None:
            ticks_n = max(1, int(idle["verify5"][1] // 5))
            w("| 5 | Periodic verification of one sandbox ({:,} names) | CPU per tick (5 s) | "
              "{:.2f} ms | | | |".format(n, (idle["verify5"][0] - idle["verify3600"][0]) * 1000 / ticks_n))

    # ---- DNS responder
    dn = [r for r in rows if r.get("bench") == "dns"]
    if dn:
        dlabels = {"a": "(a) dnsmasq, direct (no redirect)",
                   "b": "(b) bfbpf responder, policy of {:,} names".format(nm[0]["names"] if nm else 0),
                   "bs": "(b) bfbpf responder, policy of the {} queried names only".format(
                       dn[0].get("query_names"))}
        paced = [r for r in dn if r["mode"] == "paced"]
        rate = paced[0]["sent"] / paced[0]["seconds"] if paced else 0
        pr = {}
        for r in paced:
            pr.setdefault(r["round"], {})[r["variant"]] = r
        for v in ("a", "b", "bs"):
            rs = [r for r in paced if r["variant"] == v]
            if not rs:
                continue
            p50 = [r["p50_us"] for r in rs]
            p99 = [r["p99_us"] for r in rs]
            added, goal = "", ""
            if v != "a":
                d50 = [x[v]["p50_us"] - x["a"]["p50_us"] for x in pr.values() if v in x and "a" in x]
                d99 = [x[v]["p99_us"] - x["a"]["p99_us"] for x in pr.values() if v in x and "a" in x]
                added = "{:+,.0f} / {:+,.0f} µs".format(med(d50), med(d99))
                ok = med(d99) <= 1000
                goal = "p99 added ≤ 1 ms: " + goal_text(ok)
                goals.append(("DNS responder added latency p99, " + dlabels[v][4:], "≤ 1 ms",
                              "{:.2f} ms".format(med(d99) / 1000), ok))
            lost = sum(r["timeouts"] + r["bad"] for r in rs)
            w("| 6 | DNS latency µs p50 / p99, paced {:.0f} queries/s (under the rate limit){} | {} | {} / {} | p99 {} | {} | {} |".format(
                rate, "; {} unanswered".format(lost) if lost else "", dlabels[v], fmt(med(p50)),
                fmt(med(p99)), spread(p99), added or "—", goal))
        flood = [r for r in dn if r["mode"] == "flood"]
        base = med([r["rate"] for r in flood if r["variant"] == "a"])
        for v in ("a", "b", "bs"):
            rs = [r for r in flood if r["variant"] == v]
            if not rs:
                continue
            m = med([r["rate"] for r in rs])
            ratio = m / base if base else None
            goal = ""
            if v != "a" and ratio is not None:
                ok = ratio >= 0.8
                goal = "≥ 0.8: {} ({})".format(goal_text(ok), "capped by the rate limit: "
                                                 "the timeouts are its drops"
                                                 if med([r["timeouts"] for r in rs]) else
                                                 "no drops: the responder's own speed")
                goals.append(("DNS answers/s, " + dlabels[v][4:] + ", vs dnsmasq", "≥ 0.8",
                              "{:.3f} ({})".format(ratio, "rate-limited"
                                                   if med([r["timeouts"] for r in rs]) else
                                                   "not rate-limited"), ok))
            w("| 6 | DNS answers/s, closed loop, {} in flight, {} s; timeouts (200 ms) | {} | {} ({} timeouts) | {} | {} | {} |".format(
                rs[0].get("inflight", 16), fmt(rs[0]["seconds"], 1), dlabels[v], fmt(m),
                fmt(med([r["timeouts"] for r in rs])), spread([r["rate"] for r in rs]),
                "{:.3f}".format(ratio) if ratio else "—", goal))
        # CPU per answered query: the server's (dnsmasq's or the daemon's) CPU over the round
        cpq = {}
        for v in ("a", "b", "bs"):
            for mode in ("paced", "flood"):
                rs = [r for r in dn if r["variant"] == v and r["mode"] == mode and r["answered"]]
                if rs:
                    cpq[(v, mode)] = med([r["server_cpu_s"] * 1e6 / r["answered"] for r in rs])
        for v in ("a", "b", "bs"):
            if (v, "paced") not in cpq:
                continue
            est = ""
            if v != "a" and cpq.get((v, "paced")):
                est = "capacity ≈ {} /s on one core (1 / CPU per query)".format(
                    fmt(1e6 / cpq[(v, "paced")]))
            elif v == "a":
                est = "closed loop: {} µs".format(fmt(cpq.get(("a", "flood")), 1))
            w("| 6 | Server CPU µs per answered query, paced (dnsmasq's; the daemon's) | {} | {} | | | {} |".format(
                dlabels[v], fmt(cpq[(v, "paced")], 1), est))
        for r in [r for r in rows if r.get("bench") == "dns-counters"]:
            q = r.get("dns") or {}
            w("| 6 | Responder counters after the bench | {} | {:,} answered, {:,} dropped by the rate limit, {:,} refused, {:,} failed | | | |".format(
                dlabels.get(r.get("variant"), r.get("variant")), q.get("answered", 0),
                q.get("dropped_rate", 0), q.get("refused", 0), q.get("failed", 0)))

    # ---- events
    ev = [r for r in rows if r.get("bench") == "events"]
    ev_rounds = {}
    for proto, plabel in (("udp", "UDP connect() again and again on one socket"),
                          ("tcp", "TCP socket() + connect() + close()")):
        rs = [r for r in ev if r["proto"] == proto]
        if not rs:
            continue
        rounds = {}
        for r in rs:
            rounds.setdefault(r["round"], {})[r["variant"]] = r["rate"]
        ev_rounds[proto] = rounds
        base = med([r["rate"] for r in rs if r["variant"] == "off"])
        for v, label in (("off", "daemon with `--no-events` (baseline)"), ("on", "events on")):
            vals = [r["rate"] for r in rs if r["variant"] == v]
            if not vals:
                continue
            m = med(vals)
            ratio = m / base if base else None
            goal = ""
            if v == "on" and ratio is not None:
                ok = ratio >= 0.95
                goal = "≥ 0.95: " + goal_text(ok)
                goals.append(("Denied connects/s with events, {} (vs --no-events)".format(
                    proto.upper()), "≥ 0.95", "{:.3f}".format(ratio), ok))
            w("| 7 | Denied connects/s ({}; every one EPERM) | {} | {} | {} | {} | {} |".format(
                plabel, label, fmt(m), spread(vals), "{:.3f}".format(ratio) if ratio else "—", goal))
    for r in [r for r in rows if r.get("bench") == "events-counters"]:
        e = r.get("events") or {}
        cpu = [x["daemon_cpu_s"] / x["seconds"] * 100 for x in ev if x["variant"] == "on"]
        w("| 7 | Events of the events-on sandbox over the bench | sent / rate-limited / lost; daemon CPU while hammered | {:,} / {:,} / {:,}; {:.1f}% of a core | | | |".format(
            e.get("sent", 0), e.get("limited", 0), e.get("lost", 0), med(cpu) if cpu else 0))
    bench_containers.summary_rows(rows, w)
    render_sni(w, rows, goals)
    render_sni_refused(w, rows, goals)
    w("")

    w("## Goals\n")
    w("| Goal | Target | This run | |")
    w("| --- | --- | --- | --- |")
    for name, target, got, ok in goals:
        w("| {} | {} | {} | {} |".format(name, target, got, goal_text(ok)))
    if b_best and c_med:
        w("| bfbpf's lead over the proxy (connect rate, b 10k / c) | ≈ the unfiltered lead "
          "| {:.2f}× (unfiltered: {:.2f}×) | |".format(
              b_best / c_med, med([r["rate"] for r in conn if r["variant"] == "a"]) / c_med))
    w("")

    # ---- per-round detail (connect)
    if by_round:
        w("## Connect rate, round by round\n")
        vs = [v for v in ("a", "f", "b10", "b10k", "b10kw", "c10", "c10k")
              if any(v in r for r in by_round.values())]
        w("| Round | " + " | ".join(vs) + " |")
        w("| --- |" + " --- |" * len(vs))
        for k in sorted(by_round):
            w("| {} | ".format(k) + " | ".join(fmt(by_round[k].get(v)) for v in vs) + " |")
        for v in vs[1:]:
            pr = paired_ratios(by_round, "a", v)
            if pr:
                w("\nPaired per-round ratio {}/a: median {:.3f}, min–max {:.3f}–{:.3f}.".format(
                    v, med(pr), min(pr), max(pr)), )
        floor_ratios(w, by_round, [v for v in vs if v.startswith("b")], "")
        w("")

    # ---- per-round detail (bulk)
    bulk_rounds = {}
    for r in bulk:
        bulk_rounds.setdefault(r["proto"], {}).setdefault(r["round"], {})[r["variant"]] = r["bps"]
    if bulk_rounds:
        w("## iperf3, round by round\n")
        w("Gbit/s; each round starts at the next variant.\n")
        vs = [v for v in ("a", "f", "b10", "b10k", "b10kw")
              if any(v in r for p in bulk_rounds.values() for r in p.values())]
        protos = [p for p in ("tcp", "udp") if p in bulk_rounds]
        w("| Round | " + " | ".join("{} {}".format(p.upper(), v) for p in protos for v in vs) + " |")
        w("| --- |" + " --- |" * (len(vs) * len(protos)))
        for k in sorted(bulk_rounds[protos[0]]):
            w("| {} | ".format(k) + " | ".join(
                fmt((bulk_rounds[p].get(k, {}).get(v) or 0) / 1e9, 2) for p in protos for v in vs)
              + " |")
        for p in protos:
            for v in vs[1:]:
                pr = paired_ratios(bulk_rounds[p], "a", v)
                if pr:
                    w("\nPaired per-round ratio {} {}/a: median {:.3f}, min–max {:.3f}–{:.3f}."
                      .format(p.upper(), v, med(pr), min(pr), max(pr)))
            floor_ratios(w, bulk_rounds[p], [v for v in vs if v.startswith("b")], p.upper() + " ")
        w("")

    if ev_rounds:
        w("## Denied connects, round by round\n")
        w("Events on / events off (`--no-events`), connects per second; the order of the two "
          "alternates from round to round.\n")
        protos = [p for p in ("udp", "tcp") if p in ev_rounds]
        w("| Round | " + " | ".join("{} on | {} off".format(p.upper(), p.upper()) for p in protos) + " |")
        w("| --- |" + " --- | --- |" * len(protos))
        for k in sorted(ev_rounds[protos[0]]):
            w("| {} | ".format(k) + " | ".join("{} | {}".format(
                fmt(ev_rounds[p].get(k, {}).get("on")), fmt(ev_rounds[p].get(k, {}).get("off")))
                for p in protos) + " |")
        for p in protos:
            pr = paired_ratios(ev_rounds[p], "off", "on")
            if pr:
                w("\nPaired per-round ratio {} on/off: median {:.3f}, min–max {:.3f}–{:.3f}.".format(
                    p.upper(), med(pr), min(pr), max(pr)))
        w("")

    bench_containers.detail(rows, w)
    # benchmark 9 and the charts (tools/bench/charts.py, beside this file)
    import charts
    L.extend(charts.sweep_markdown(rows))

    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "performance.md.in")) as f:
        prose = f.read()
    text = "\n".join(L) + "\n" + prose
    with open(args.out, "w") as f:
        f.write(text)
    print(json.dumps({"written": args.out, "goals_met": sum(1 for g in goals if g[3]),
                      "goals_missed": [g[0] for g in goals if not g[3]]}))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("policy")
    s.add_argument("--count", type=int, required=True)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--fixed", action="append")
    s.add_argument("--out", required=True)
    s.add_argument("--filter")
    s.add_argument("--many", type=int, default=0,
                   help="write MANY policies, seeds SEED.., --out a %%d pattern")
    s = sub.add_parser("update-timing")
    s.add_argument("--socket", required=True)
    s.add_argument("--cgroup", required=True)
    s.add_argument("--sizes", required=True)
    s.add_argument("--rounds", type=int, default=10)
    s.add_argument("--cli-rounds", type=int, default=0)
    s.add_argument("--bfbpf")
    s.add_argument("--dir", required=True)
    s.add_argument("--tag", default="")
    for name in ("attach-many", "verify-many", "detach-many"):
        s = sub.add_parser(name)
        s.add_argument("--socket", required=True)
        s.add_argument("--cgroups-file", required=True)
        s.add_argument("--policy-dir")
    s = sub.add_parser("memory")
    s.add_argument("--bpffs", required=True)
    s.add_argument("--pid", type=int, required=True)
    s = sub.add_parser("names")
    s.add_argument("--count", type=int, required=True)
    s.add_argument("--hosts", required=True)
    s.add_argument("--list", required=True)
    s.add_argument("--policy", required=True)
    s = sub.add_parser("cpu")
    s.add_argument("--pid", type=int, action="append", required=True)
    s = sub.add_parser("names-attach")
    s.add_argument("--socket", required=True)
    s.add_argument("--cgroup", required=True)
    s.add_argument("--netns")
    s.add_argument("--policy", required=True)
    s.add_argument("--pid", type=int, required=True)
    s.add_argument("--idle", type=float, default=10)
    s.add_argument("--settle", type=float, default=40)
    s = sub.add_parser("wait-names")
    s.add_argument("--socket", required=True)
    s.add_argument("--cgroup", required=True)
    s.add_argument("--timeout", type=float, default=40)
    s = sub.add_parser("sandbox-status")
    s.add_argument("--socket", required=True)
    s.add_argument("--cgroup", required=True)
    s = sub.add_parser("render")
    s.add_argument("--results", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--machine", required=True)
    s.add_argument("--command", required=True)
    s.add_argument("--quick", action="store_true")
    args = p.parse_args()
    fn = {"policy": cmd_policy, "update-timing": cmd_update_timing,
          "attach-many": cmd_attach_many, "verify-many": cmd_verify_many,
          "detach-many": cmd_detach_many, "memory": cmd_memory, "names": cmd_names,
          "cpu": cmd_cpu, "names-attach": cmd_names_attach,
          "sandbox-status": cmd_sandbox_status, "wait-names": cmd_wait_names, "render": render}[args.cmd]
    sys.exit(fn(args) or 0)


if __name__ == "__main__":
    main()
