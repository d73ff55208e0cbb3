#!/usr/bin/env python3
"""Checks that daemon/'s folders include each other only downwards.

Every `#include "folder/x.h"` (and every include of a header that lives in
another folder of daemon/) is an arrow between folders.  The script fails on
an arrow that the layer table below does not allow, and on any cycle in the
folder graph, printing the file and line of each offending include.
Prints `ok layers` or one `FAIL layers:` line per violation (the test
harness's convention); exit 0 clean, 1 violations.
"""
import os
import re
import sys

# Lowest first: a folder may include its own headers, format/, bpf/ and the
# folders listed for it (never one of a higher layer).
ALLOWED = {
    "common": set(),
    "sym": {"common"},
    "capture": {"common"},
    "translate": {"common"},
    # the preload library: libc only (it runs inside the traced program)
    "interpose": set(),
    "memtrack": {"common", "sym", "capture", "interpose"},
    "engine": {"common", "sym", "capture", "translate", "memtrack"},
    "server": {"common", "engine"},
    "ctl": {"common", "engine", "interpose"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def arrows(root):
    """Yields (from_folder, to_folder, file, line_no) for daemon/ includes."""
    owner = {}
    for folder in ALLOWED:
        for name in os.listdir(os.path.join(root, folder)):
            owner.setdefault(name, folder)
    for folder in sorted(ALLOWED):
        base = os.path.join(root, folder)
        for name in sorted(os.listdir(base)):
            path = os.path.join(base, name)
            with open(path, encoding="utf-8") as f:
                for no, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    if "/" in target:
                        to = target.split("/", 1)[0]
                    elif os.path.exists(os.path.join(base, target)):
                        to = folder
                    else:
                        to = owner.get(target)
                    if to in ALLOWED and to != folder:
                        yield folder, to, path, no


def find_cycle(edges):
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "daemon"
    unknown = [d for d in os.listdir(root)
               if os.path.isdir(os.path.join(root, d)) and d not in ALLOWED]
    bad, edges = [], set()
    for d in unknown:
        bad.append(f"{root}/{d}: folder not in the layer table of {sys.argv[0]}")
    for a, b, path, no in arrows(root):
        edges.add((a, b))
        if b not in ALLOWED[a]:
            bad.append(f"{path}:{no}: {a}/ includes {b}/, a layer it may not use")
    cycle = find_cycle(edges)
    if cycle:
        bad.append("include cycle between folders: " + " -> ".join(cycle))
    for line in bad:
        print("FAIL layers: " + line)
    if not bad:
        print(f"ok layers: {len(edges)} arrows between daemon/'s folders, all downwards")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
