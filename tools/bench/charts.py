#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The bench's charts: connect rate and update time against the number of policy entries.

    charts.py --results RESULTS.jsonl --out-dir DIR [--quick]

Reads the results of one run of tools/bench/run.sh (benchmark 9, "sweep", and
benchmark 3, "update") and draws, with gnuplot (Debian's gnuplot-nox), two SVG
files into DIR:

- bench-connect-vs-entries.svg: TCP connects/s of bfbpf and of tinyproxy given
  the same N-entry allowlist, beside the unfiltered path (a) and the floor (f),
  medians of interleaved rounds with their min-max;
- bench-update-vs-entries.svg: the time bfbpf takes to replace an N-entry
  policy (a control-socket round trip, idle and under a connect loop) and the
  time tinyproxy takes to serve with a new N-entry filter (a restart: it
  cannot reload one).

sweep_markdown() is the report's section for them (tools/bench/bench.py render).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

CONNECT_SVG = "bench-connect-vs-entries.svg"
UPDATE_SVG = "bench-update-vs-entries.svg"


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    return rows


def _stats(values):
    return (statistics.median(values), min(values), max(values)) if values else None


def sweep_series(rows):
    """{variant: (median, min, max)} of benchmark 9's connect rates, and the sizes."""
    rates = {}
    for r in rows:
        if r.get("bench") == "sweep" and isinstance(r.get("rate"), (int, float)):
            rates.setdefault(r["variant"], []).append(r["rate"])
    sizes = sorted({int(v[1:]) for v in rates if v[0] in "bc" and v[1:].isdigit()})
    return {v: _stats(vals) for v, vals in rates.items()}, sizes


def update_series(rows):
    """{tag: {entries: (p50, min, max)}} of benchmark 3, and the proxy's restart times."""
    out = {}
    for r in rows:
        if r.get("bench") != "update":
            continue
        for size, res in (r.get("sizes") or {}).items():
            ms = res.get("socket_ms") or {}
            if ms.get("n"):
                out.setdefault(r.get("tag") or "idle", {})[int(size)] = (ms["p50"], ms["min"], ms["max"])
    starts = {}
    for r in rows:
        if r.get("bench") == "sweep-proxy-start":
            starts.setdefault(int(r["entries"]), []).append(r["seconds"] * 1000)
    return out, {n: _stats(v) for n, v in starts.items()}


def _block(name, points):
    """A gnuplot datablock of 'x median min max' lines."""
    lines = [f"${name} << EOD"] + [f"{x} {m:.6g} {lo:.6g} {hi:.6g}" for x, (m, lo, hi) in sorted(points.items())]
    return "\n".join(lines + ["EOD"])


def _header(out, title, quick):
    if quick:
        title += "\\n(smoke run, BENCH_QUICK=1: tiny counts, the figures mean little)"
    return [
        f"set terminal svg size 860,500 dynamic enhanced font 'sans,12' background rgb 'white'",
        f"set output '{out}'",
        f"set title \"{title}\" noenhanced",
        "set logscale x 10",
        "set grid",
        "set key below vertical maxrows 2 noenhanced",
        "set xlabel 'policy entries'",
        "set format x '10^{%L}'",
    ]


def connect_script(rows, out, quick):
    series, sizes = sweep_series(rows)
    if not sizes:
        return None
    lo_x, hi_x = sizes[0] / 2, sizes[-1] * 2
    script = _header(out, "TCP connect + close per second against policy size", quick)
    script += [f"set xrange [{lo_x}:{hi_x}]", "set ylabel 'connects/s (thousands)'", "set yrange [0:*]"]
    plots = []
    for key, title, style in (
        ("a", "(a) no filter", "lc rgb '#555555' dt 2 lw 2"),
        ("f", "(f) the floor: an empty cgroup filter", "lc rgb '#2a9d8f' dt 4 lw 2"),
    ):
        if series.get(key):
            script.append(_block(key, {lo_x: series[key], hi_x: series[key]}))
            plots.append(f"${key} using 1:($2/1000) with lines {style} title '{title}'")
    for prefix, title, color in (("b", "(b) bfbpf", "#e76f51"), ("c", "(c) tinyproxy, same allowlist", "#264653")):
        points = {n: series[f"{prefix}{n}"] for n in sizes if series.get(f"{prefix}{n}")}
        if points:
            script.append(_block(prefix, points))
            plots.append(f"${prefix} using 1:($2/1000) with linespoints lc rgb '{color}' lw 2 pt 7 title '{title}'")
            plots.append(f"${prefix} using 1:($2/1000):($3/1000):($4/1000) with yerrorbars lc rgb '{color}' pt 0 notitle")
    script.append("plot " + ", \\\n     ".join(plots))
    return "\n".join(script) + "\n"


def update_script(rows, out, quick):
    updates, starts = update_series(rows)
    if not updates and not starts:
        return None
    script = _header(out, "Time to put a new N-entry policy in force", quick)
    xs = sorted({n for points in updates.values() for n in points} | set(starts))
    script += [f"set xrange [{xs[0] / 2}:{xs[-1] * 2}]", "set logscale y 10", "set ylabel 'milliseconds'",
               "set format y '%g'"]
    plots = []
    styles = (("#e76f51", 7), ("#f4a261", 5))
    for i, (tag, points) in enumerate(sorted(updates.items())):
        color, pt = styles[i % len(styles)]
        name = f"u{i}"
        script.append(_block(name, points))
        title = f"(b) bfbpf update, {tag}"
        plots.append(f"${name} using 1:2 with linespoints lc rgb '{color}' lw 2 pt {pt} title '{title}'")
        plots.append(f"${name} using 1:2:3:4 with yerrorbars lc rgb '{color}' pt 0 notitle")
    if starts:
        script.append(_block("p", starts))
        plots.append("$p using 1:2 with linespoints lc rgb '#264653' lw 2 pt 9 "
                     "title '(c) tinyproxy: restart until the new filter serves'")
        plots.append("$p using 1:2:3:4 with yerrorbars lc rgb '#264653' pt 0 notitle")
    script.append("plot " + ", \\\n     ".join(plots))
    return "\n".join(script) + "\n"


def draw(script, out_dir, name):
    path = os.path.join(out_dir, name + ".gp")
    with open(path, "w") as f:
        f.write(script)
    done = subprocess.run(["gnuplot", path], capture_output=True, text=True, timeout=60)
    os.unlink(path)
    if done.returncode != 0:
        raise RuntimeError(f"gnuplot failed on {name}: {done.stderr.strip()}")


def sweep_markdown(rows):
    """The report's section: the charts and the figures they are drawn from."""
    series, sizes = sweep_series(rows)
    updates, starts = update_series(rows)
    if not sizes and not updates:
        return []
    L = ["## Against policy size (charts)\n"]
    L.append("Drawn by `tools/bench/charts.py` (gnuplot) from the results of this run: benchmark 9 "
             "(the connect rate of bfbpf and of tinyproxy given the same N-entry allowlist, "
             "interleaved with (a) and (f)) and benchmark 3 (bfbpf's update round trip). "
             "Medians, bars from min to max. (a) and (f) have no policy: they are drawn flat. "
             "The floor has no policy to update, so the second chart has no (f).\n")
    L.append(f"![connect rate against policy entries]({CONNECT_SVG})\n")
    L.append(f"![update time against policy entries]({UPDATE_SVG})\n")
    a = series.get("a")
    if sizes and a:
        L.append("| Entries | bfbpf connects/s | bfbpf / (a) | tinyproxy connects/s | tinyproxy / (a) "
                 "| tinyproxy serving after a restart |")
        L.append("| --- | --- | --- | --- | --- | --- |")
        for n in sizes:
            b, c, s = series.get(f"b{n}"), series.get(f"c{n}"), starts.get(n)
            L.append("| {:,} | {} | {} | {} | {} | {} |".format(
                n, f"{b[0]:,.0f}" if b else "—", f"{b[0] / a[0]:.3f}" if b else "—",
                f"{c[0]:,.0f}" if c else "—", f"{c[0] / a[0]:.3f}" if c else "—",
                f"{s[0]:,.0f} ms" if s else "—"))
        f = series.get("f")
        L.append("\n(a) no filter: {:,.0f}/s; (f) the floor: {}.\n".format(
            a[0], f"{f[0]:,.0f}/s ({f[0] / a[0]:.3f} of (a))" if f else "not measured"))
    return L


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    rows = load(args.results)
    drawn = []
    for name, make in ((CONNECT_SVG, connect_script), (UPDATE_SVG, update_script)):
        out = os.path.join(args.out_dir, name)
        script = make(rows, out, args.quick)
        if script is None:
            print(f"charts: no results for {name} in {args.results}", file=sys.stderr)
            continue
        draw(script, args.out_dir, name)
        drawn.append(out)
    print(json.dumps({"charts": drawn}))
    return 0 if len(drawn) == 2 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
