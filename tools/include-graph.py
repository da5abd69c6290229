#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The include graph of user/, by folder (layer), and the rules it must follow.

    tools/include-graph.py            print the folder graph; check the rules
    tools/include-graph.py --files    print the file graph too
    tools/include-graph.py --dot      print the folder graph for graphviz instead

Rules (docs/design.md, "Layers"); each broken one is named, and the exit status is 1:
  - includes point down only, in the order LAYERS below; user/main.c is the entry and may
    include any folder;
  - no cycle between folders (a loop inside one folder is allowed);
  - every folder of user/ is a declared layer;
  - only user/loader/ includes the BPF skeleton "bfbpf.skel.h" (nor may tests/ include it:
    `make check` builds without it).
Cross-folder includes are written "folder/x.h"; plain "x.h" is the same folder.
"""
import argparse
import os
import re
import sys

LAYERS = ["cli", "daemon", "sandbox", "dns", "loader", "lib"]
ENTRY = "main"  # user/main.c: above every layer
SKELETON = "bfbpf.skel.h"
SKELETON_FOLDERS = {"loader"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def folder_of(rel):
    """user/dns/dns.c -> dns; user/main.c -> main."""
    parts = rel.split("/")
    return parts[1] if len(parts) > 2 else ENTRY


def sources(top):
    for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
        for name in sorted(names):
            if name.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(dirpath, name), ROOT)


def includes(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1)


def rank(folder):
    return -1 if folder == ENTRY else LAYERS.index(folder)


def find_cycles(graph):
    """The strongly connected components of more than one folder (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", action="store_true", help="print the file graph too")
    parser.add_argument("--dot", action="store_true", help="print the folder graph as dot")
    args = parser.parse_args()

    problems = []
    folder_edges = {}  # (from, to) -> [file:line include]
    file_edges = []
    for rel in sources("user"):
        src = folder_of(rel)
        if src != ENTRY and src not in LAYERS:
            problems.append(f"{rel}: folder user/{src}/ is not a declared layer ({' -> '.join(LAYERS)})")
            continue
        for number, name in includes(rel):
            where = f"{rel}:{number}"
            if os.path.basename(name) == SKELETON:
                if src not in SKELETON_FOLDERS:
                    problems.append(f"{where}: includes {name}: only user/loader/ may see the BPF skeleton")
                continue
            # same folder first (plain "x.h"), then from user/ ("folder/x.h")
            for candidate in (os.path.join(os.path.dirname(rel), name), os.path.join("user", name)):
                target = os.path.normpath(candidate)
                if os.path.isfile(os.path.join(ROOT, target)):
                    break
            else:
                continue  # a system header, include/bfbpf.h, or a generated one
            dst = folder_of(target)
            file_edges.append((rel, target))
            if dst == src:
                continue
            folder_edges.setdefault((src, dst), []).append(f"{where}: #include \"{name}\"")
    for rel in sources("tests"):
        for number, name in includes(rel):
            if os.path.basename(name) == SKELETON:
                problems.append(f"{rel}:{number}: includes {name}: tests build without the skeleton")

    graph = {}
    for (src, dst), _ in folder_edges.items():
        graph.setdefault(src, set()).add(dst)
    for (src, dst), wheres in sorted(folder_edges.items()):
        if src != ENTRY and rank(dst) <= rank(src):
            for where in wheres:
                problems.append(f"{where}: upward include {src} -> {dst} (order: {' -> '.join(LAYERS)})")
    for component in find_cycles(graph):
        edges = [f"{s} -> {d}" for (s, d) in sorted(folder_edges)
                 if s in component and d in component]
        problems.append(f"cycle between folders {', '.join(component)}: {'; '.join(edges)}")

    if args.dot:
        print("digraph user {")
        for (src, dst), wheres in sorted(folder_edges.items()):
            print(f'\t"{src}" -> "{dst}" [label="{len(wheres)}"];')
        print("}")
    else:
        print("folders (includes per edge):")
        for src in [ENTRY] + LAYERS:
            outs = [f"{dst} ({len(w)})" for (s, dst), w in sorted(folder_edges.items(), key=lambda e: rank(e[0][1])) if s == src]
            print(f"  {src:8} -> {', '.join(outs) if outs else '(nothing)'}")
        if args.files:
            print("files:")
            for src, dst in file_edges:
                print(f"  {src} -> {dst}")
    for problem in problems:
        print(f"include-graph: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
