#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark 8 (containers) of tools/bench/run.sh: the helpers that run inside the
containers or beside them, and the report's rows (imported by bench.py's render).

  loop --out FILE [--target ADDR:PORT]   in a container: UDP connect() to TARGET in a loop
        (every 100 µs); one line "TIME_NS ERRNO PREVIOUS_NS" per change of the outcome (0
        for success), PREVIOUS_NS the time of the attempt before (the old outcome's last).
        With --network none an unconfined connect fails ENETUNREACH, a refused one EPERM.
  first --out FILE [--target ADDR:PORT]  in a container: "START_NS CONNECT_NS ERRNO" of the
        process's start (the interpreter's first line) and of its first connect().
  watch --dir DIR --out FILE --seconds S beside: "TIME_NS NAME" per directory created in
        DIR (inotify), e.g. a container's cgroup under its parent.
Times are CLOCK_REALTIME (time.time_ns(), bash's $EPOCHREALTIME): the containers share
the host's clock.
"""
import ctypes
import errno as errnos
import os
import socket
import struct
import sys
import time


def _target(args):
    host, _, port = (args.get("--target") or "192.0.2.1:9").rpartition(":")
    return host, int(port)


def _connect(target):
    """0, or the errno of socket() or connect(): a no-network sandbox refuses the
    socket itself (sock_create), a restrictive one the connect."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(target)
        return 0
    except OSError as e:
        return e.errno


def cmd_loop(args):
    target, last, previous = _target(args), None, 0
    with open(args["--out"], "a", buffering=1) as out:
        while True:
            result = _connect(target)
            now = time.time_ns()
            if result != last:
                out.write(f"{now} {result} {previous}\n")
                last = result
            previous = now
            time.sleep(0.0001)


def cmd_first(args):
    start = time.time_ns()
    target = _target(args)
    at = time.time_ns()
    result = _connect(target)
    with open(args["--out"], "w") as out:
        out.write(f"{start} {at} {result}\n")


def cmd_watch(args):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    in_create, in_isdir = 0x100, 0x40000000
    if fd < 0 or libc.inotify_add_watch(fd, args["--dir"].encode(), in_create) < 0:
        sys.exit(f"inotify on {args['--dir']}: {os.strerror(ctypes.get_errno())}")
    os.set_blocking(fd, False)
    end = time.monotonic() + float(args["--seconds"])
    with open(args["--out"], "a", buffering=1) as out:
        while time.monotonic() < end:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                time.sleep(0.0005)
                continue
            now = time.time_ns()
            i = 0
            while i + 16 <= len(data):
                _, mask, _, length = struct.unpack_from("iIII", data, i)
                name = data[i + 16:i + 16 + length].rstrip(b"\0").decode()
                if mask & in_isdir:
                    out.write(f"{now} {name}\n")
                i += 16 + length


# --------------------------------------------------------------------- report

def _med(values):
    v = sorted(values)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2 if v else None


def _rng(values, digits):
    return "{:.{d}f}–{:.{d}f}".format(min(values), max(values), d=digits) if values else ""


RUN_LABELS = {
    ("podman", "a"): "(a) `podman run --rm`, no hook",
    ("podman", "h"): "(h) the same with `--annotation io.bfbpf.policy=NAME`: the hook registers it",
    ("docker", "a"): "(a) `docker run --rm`, runtime runc",
    ("docker", "w"): "(w) `--runtime bfbpf` (the wrapper adds the hook; no policy asked)",
    ("docker", "h"): "(h) `--runtime bfbpf -e BFBPF_POLICY=NAME`: the hook registers it",
}
ENFORCE_LABELS = {
    "cgroup": "`bfbpf attach --cgroup --netns` (no-network)",
    "container": "`bfbpf attach --container NAME` (podman inspect included)",
    "update": "`bfbpf update --cgroup`, public → no-network",
}


def summary_rows(rows, w):
    """The benchmark's rows of the summary table (the table's header is bench.py's)."""
    runs = [r for r in rows if r.get("bench") == "ctr-run"]
    for rt in ("podman", "docker"):
        base = _med([r["seconds"] for r in runs if r["runtime"] == rt and r["variant"] == "a"])
        for v in ("a", "w", "h"):
            vals = [r["seconds"] * 1000 for r in runs if r["runtime"] == rt and r["variant"] == v]
            if not vals:
                continue
            ratio = _med(vals) / 1000 / base if base else None
            w("| 8 | `{} run` wall ms (exit at once) | {} | {:.0f} | {} | {} | |".format(
                rt, RUN_LABELS[(rt, v)], _med(vals), _rng(vals, 0),
                "{:.3f}".format(ratio) if ratio else "—"))
    enf = [r for r in rows if r.get("bench") == "ctr-enforce"]
    for v in ("cgroup", "container", "update"):
        rs = [r for r in enf if r["variant"] == v]
        if not rs:
            continue
        call = [r["call_ms"] for r in rs]
        after = [r["from_return_ms"] for r in rs]
        before = [r["last_open_from_return_ms"] for r in rs]
        w("| 8 | Time to enforce ms: the call; the last unrefused and the first refused connect, "
          "from the call's return | {} | {:.1f}; {:+.2f} / {:+.2f} | {} / {} | | |".format(
              ENFORCE_LABELS[v], _med(call), _med(before), _med(after), _rng(call, 1), _rng(after, 2)))
    guard = [r for r in rows if r.get("bench") == "ctr-guard"]
    for rt in ("podman", "docker"):
        rs = [r for r in guard if r["runtime"] == rt]
        if not rs:
            continue
        d = [r["mkdir_to_connect_ms"] for r in rs]
        open_ = sum(1 for r in rs if r["errno"] != errnos.EPERM)
        w("| 8 | Under a guard: cgroup mkdir → the entrypoint's first connect ms; first connects "
          "not refused | {} | {:.0f}; **{}** of {} | {} | | = 0: {} |".format(
              rt, _med(d), open_, len(rs), _rng(d, 0), "**met**" if open_ == 0 else "**missed**"))


def detail(rows, w):
    """The benchmark's own section, round by round."""
    runs = [r for r in rows if r.get("bench") == "ctr-run"]
    if runs:
        w("## Container start with the hook, round by round\n")
        w("Wall time of `podman run --rm` / `docker run --rm` of a container whose entrypoint "
          "exits at once (`--network none`), ms. The variants of a runtime are interleaved, "
          "each round starting at the next one.\n")
        for rt in ("podman", "docker"):
            by = {}
            for r in runs:
                if r["runtime"] == rt:
                    by.setdefault(r["round"], {})[r["variant"]] = r["seconds"] * 1000
            if not by:
                continue
            vs = [v for v in ("a", "w", "h") if any(v in x for x in by.values())]
            w("| {} round | ".format(rt) + " | ".join(vs) + " |")
            w("| --- |" + " --- |" * len(vs))
            for k in sorted(by):
                w("| {} | ".format(k) + " | ".join(
                    "{:.0f}".format(by[k][v]) if v in by[k] else "" for v in vs) + " |")
            for v in vs[1:]:
                pr = [by[k][v] / by[k]["a"] for k in by if v in by[k] and by[k].get("a")]
                if pr:
                    w("\nPaired per-round ratio {} {}/a: median {:.3f}, min–max {:.3f}–{:.3f}; "
                      "added: median {:.0f} ms.".format(
                          rt, v, _med(pr), min(pr), max(pr),
                          _med([by[k][v] - by[k]["a"] for k in by if v in by[k] and "a" in by[k]])))
            w("")
    enf = [r for r in rows if r.get("bench") == "ctr-enforce"]
    if enf:
        w("## Time to enforce a registration, round by round\n")
        w("A Podman container (`--network none`) connects a UDP socket to 192.0.2.1:9 every "
          "100 µs and notes when the outcome changes (ENETUNREACH unconfined, EPERM refused). "
          "ms from the start of the call; negative \"after return\": refused before the "
          "CLI returned.\n")
        w("| Round | Variant | Call ms | First refused, from the call | Last unrefused, from its return "
          "| First refused, from its return |")
        w("| --- | --- | --- | --- | --- | --- |")
        for r in sorted(enf, key=lambda r: (r["round"], r["variant"])):
            w("| {} | {} | {:.1f} | {:.2f} | {:+.2f} | {:+.2f} |".format(
                r["round"], r["variant"], r["call_ms"], r["from_call_ms"],
                r["last_open_from_return_ms"], r["from_return_ms"]))
        w("")


def main(argv):
    if len(argv) < 2 or argv[1] not in ("loop", "first", "watch"):
        sys.exit(__doc__)
    args = dict(zip(argv[2::2], argv[3::2]))
    {"loop": cmd_loop, "first": cmd_first, "watch": cmd_watch}[argv[1]](args)


if __name__ == "__main__":
    main(sys.argv)
