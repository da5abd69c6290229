#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Files over 600 lines and functions over 80 lines, in the C sources.

    tools/lengths.py [--all] [PATH...]   (default: user/ bpf/ include/)

A long file or function is allowed when a comment says why it is long: a comment containing
"long:" (e.g. "/* long: one switch over every opcode, clearer whole */"). For a file, the
comment is in its first 30 lines; for a function, directly above it or inside it. Every
other long one is named and the exit status is 1. --all also lists the justified ones.

Functions are found the way the code is formatted (.clang-format, Linux braces): a line
"{" alone in column 0 opens a function, the next "}" in column 0 closes it. Approximate,
on purpose: it needs no compiler.
"""
import argparse
import os
import re
import sys

MAX_FILE = 600
MAX_FUNCTION = 80
FILE_HEAD = 30
DEFAULT_PATHS = ["user", "bpf", "include"]
# "long:" inside a comment: after /* or //, or on a comment's continuation line.
MARK = re.compile(r"(/\*|//|^\s*\*).*\blong:", re.IGNORECASE)
NAME = re.compile(r"([A-Za-z_]\w*)\s*\(")
WRAPPERS = {"SEC", "__attribute__", "__always_inline", "BPF_PROG", "BPF_KPROBE"}

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def c_files(paths):
    for path in paths:
        full = os.path.join(ROOT, path)
        if os.path.isfile(full):
            yield path
            continue
        for dirpath, _, names in os.walk(full):
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, name), ROOT)


def function_name(signature):
    """The declared name: the first call-like identifier that is not a wrapper macro;
    for BPF_PROG(name, ...) the macro's first argument."""
    for m in NAME.finditer(signature):
        word = m.group(1)
        if word in ("BPF_PROG", "BPF_KPROBE"):
            inner = re.match(r"\s*(\w+)", signature[m.end():])
            return inner.group(1) if inner else word
        if word not in WRAPPERS:
            return word
    return "?"


def functions(lines):
    """(name, first line of the signature, line of '{', line of '}'), 0-based."""
    i = 0
    while i < len(lines):
        if lines[i].rstrip("\n") != "{":
            i += 1
            continue
        open_line = i
        start = i
        while start > 0:
            prev = lines[start - 1].strip()
            if not prev or prev.endswith((";", "}", "*/")) or prev.startswith(("#", "//")):
                break
            start -= 1
        close = i + 1
        while close < len(lines) and not lines[close].startswith("}"):
            close += 1
        yield function_name(" ".join(lines[start:open_line])), start, open_line, close
        i = close + 1


def comment_above(lines, start):
    """The comment block that ends on the line before START."""
    end = start
    if end > 0 and lines[end - 1].strip().endswith("*/"):
        begin = end - 1
        while begin > 0 and "/*" not in lines[begin]:
            begin -= 1
        return lines[begin:end]
    begin = end
    while begin > 0 and lines[begin - 1].lstrip().startswith("//"):
        begin -= 1
    return lines[begin:end]


def marked(lines):
    return any(MARK.search(line) for line in lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="list the justified ones too")
    parser.add_argument("paths", nargs="*", default=DEFAULT_PATHS)
    args = parser.parse_args()

    bad = 0
    for rel in c_files(args.paths):
        with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        if len(lines) > MAX_FILE:
            ok = marked(lines[:FILE_HEAD])
            bad += not ok
            if not ok or args.all:
                print(f"{rel}: {len(lines)} lines (over {MAX_FILE})"
                      + (", said why" if ok else ", and no 'long:' comment says why"))
        for name, start, open_line, close in functions(lines):
            length = close - open_line + 1
            if length <= MAX_FUNCTION:
                continue
            ok = marked(comment_above(lines, start)) or marked(lines[open_line:close + 1])
            bad += not ok
            if not ok or args.all:
                print(f"{rel}:{start + 1}: {name}() {length} lines (over {MAX_FUNCTION})"
                      + (", said why" if ok else ", and no 'long:' comment says why"))
    if bad:
        print(f"lengths: {bad} too long without a reason; split them, or say why in a "
              "'long:' comment", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
