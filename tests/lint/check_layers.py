#!/usr/bin/env python3
"""Checks that the folders of daemon/ and format/ include each other only
downwards.

Every `#include "folder/x.h"` (and every include of a header that lives in
another folder of the same tree) is an arrow between folders.  The script
fails on an arrow that the layer table of its tree does not allow, and on any
cycle in the folder graph, printing the file and line of each offending
include.  format/ must also stay free of daemon/, bpf/ and Linux: its quoted
includes name format/'s own folders only, and it includes no Linux-specific
system header.
Prints `ok layers` or one `FAIL layers:` line per violation (the test
harness's convention); exit 0 clean, 1 violations.
Usage: check_layers.py [TREE_ROOT...]  (default: daemon format)
"""
import os
import re
import sys

# Lowest first: a folder may include its own headers and the folders listed
# for it (never one of a higher layer); daemon/'s folders may also include
# format/ and bpf/.
DAEMON = {
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

# format/: util/ lowest, then the wire core, then the Go 1.22+ (v2)
# decoder; the writer, the checker and the analysis use those and never
# each other.
FORMAT = {
    "util": set(),
    "wire": {"util"},
    "v2": {"util", "wire"},
    "writer": {"util", "wire"},
    "check": {"util", "wire", "v2"},
    "analyze": {"util", "wire", "v2"},
    "gomerge": {"util", "wire", "v2"},
}

# System headers format/ may not use: Linux's own, BPF's, and the C
# library's Linux-only interfaces (format/ is portable C11 + POSIX).
LINUX_ONLY = re.compile(
    r"^(linux|asm|asm-generic|bpf|elfutils|gelf|libelf)[/.]"
    r"|^sys/(epoll|prctl|syscall|ptrace|sysinfo|eventfd|signalfd|timerfd"
    r"|inotify|fanotify|personality|klog|sendfile|vfs|statfs)\.h$")

TABLES = {"daemon": DAEMON, "format": FORMAT}

QUOTED = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SYSTEM = re.compile(r'^\s*#\s*include\s+<([^>]+)>')


def sources(root, table):
    """Yields (folder, path) for every file of the table's folders."""
    for folder in sorted(table):
        base = os.path.join(root, folder)
        if not os.path.isdir(base):
            continue  # a reserved layer not created yet
        for name in sorted(os.listdir(base)):
            yield folder, os.path.join(base, name)


def includes(path):
    """Yields (line_no, kind, target): kind '"' or '<'."""
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            m = QUOTED.match(line)
            if m:
                yield no, '"', m.group(1)
                continue
            m = SYSTEM.match(line)
            if m:
                yield no, "<", m.group(1)


def check_tree(root, table, strict):
    """Returns (violations, arrows) of one tree.  strict: the tree may
    include nothing outside itself and no Linux-only system header."""
    owner = {}
    for folder, path in sources(root, table):
        owner.setdefault(os.path.basename(path), folder)
    bad, edges = [], set()
    for folder, path in sources(root, table):
        base = os.path.dirname(path)
        for no, kind, target in includes(path):
            where = f"{path}:{no}"
            if kind == "<":
                if strict and LINUX_ONLY.search(target):
                    bad.append(f"{where}: {root}/ includes <{target}>, a Linux/BPF header")
                continue
            if "/" in target:
                to = target.split("/", 1)[0]
            elif os.path.exists(os.path.join(base, target)):
                to = folder
            else:
                to = owner.get(target)
            if to in table:
                if to != folder:
                    edges.add((folder, to))
                    if to not in table[folder]:
                        bad.append(f"{where}: {folder}/ includes {to}/, "
                                   f"a layer it may not use")
            elif strict:
                bad.append(f'{where}: {root}/ includes "{target}", which is not '
                           f"in {root}/'s folders (it knows no daemon/, no bpf/)")
    unknown = [d for d in sorted(os.listdir(root))
               if os.path.isdir(os.path.join(root, d)) and d not in table]
    for d in unknown:
        bad.append(f"{root}/{d}: folder not in the layer table of {sys.argv[0]}")
    if strict:
        loose = [n for n in sorted(os.listdir(root))
                 if os.path.isfile(os.path.join(root, n)) and n.endswith((".c", ".h"))]
        for n in loose:
            bad.append(f"{root}/{n}: source outside format/'s folders")
    cycle = find_cycle(edges)
    if cycle:
        bad.append(f"include cycle between {root}/'s folders: " + " -> ".join(cycle))
    return bad, edges


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
    roots = sys.argv[1:] or ["daemon", "format"]
    bad, summary = [], []
    for root in roots:
        name = os.path.basename(os.path.normpath(root))
        if name not in TABLES:
            bad.append(f"{root}: no layer table for this tree")
            continue
        b, edges = check_tree(root, TABLES[name], strict=(name == "format"))
        bad += b
        summary.append(f"{len(edges)} arrows between {name}/'s folders")
    for line in bad:
        print("FAIL layers: " + line)
    if not bad:
        print("ok layers: " + ", ".join(summary) + ", all downwards")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
