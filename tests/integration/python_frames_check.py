#!/usr/bin/env python3
"""python_frames_check.py POINTS.json FOLDED WORK.py [--interleaved]

FOLDED is `report --folded=offcpu --thread PID` of python_work.py's main
thread (WORK.py); POINTS.json what its traceback module saw at each block.
A line carries its full Python call chain (`function (file:line)`, root
first) when its Python frames
  - equal one of those stacks (the script's blocks), or
  - extend a "start" one with frames of threading.py only (Thread.start
    waits for the new thread), or
  - are the interpreter's start-up imports: frames of the library's files
    only, under the script's `<module>` at one of its import lines or
    under none.  A module's own code run once may be "[python]" there:
    freed before gotraced read it (docs/mapping.md, "Python frames").
Passes when at least 90% of the thread's off-CPU microseconds carry it,
and every block point (sleep, lock, read, select) has some.  --interleaved (--call-graph=dwarf): no
evaluation-loop frame is left in a block's line, and at least half of the
blocks' time has native frames both outside and inside the Python ones.
"""
import json
import re
import sys

PY = re.compile(r"^(.*) \((.*):(\d+)\)$")


def library(f):
    return f[1].startswith("<frozen ") or "/lib/python3" in f[1]


def main():
    points = json.load(open(sys.argv[1]))["points"]
    lines = open(sys.argv[2]).read().splitlines()
    work = sys.argv[3]
    interleaved = "--interleaved" in sys.argv[4:]
    imports = {i + 1 for i, l in enumerate(open(work)) if l.startswith("import ")}
    want = {tuple(tuple(f) for f in v): k for k, v in points.items()}
    total = good = blocks = both_sides = 0
    seen = set()
    bad = []
    for line in lines:
        stack, count = line.rsplit(" ", 1)
        frames = stack.split(";")[1:]  # [0] is the thread's name
        count = int(count)
        total += count
        idx = [i for i, f in enumerate(frames) if PY.match(f) or f == "[python]"]
        py = [PY.match(frames[i]) for i in idx]
        py = [(m.group(1), m.group(2), int(m.group(3))) if m else ("[python]", "", 0) for m in py]
        key = want.get(tuple(py))
        ok = False
        if key:
            seen.add(key)
            ok = not interleaved or "_PyEval_EvalFrameDefault" not in frames
            blocks += count
            if idx[0] > 0 and idx[-1] < len(frames) - 1:
                both_sides += count
        elif any(k.startswith("start") and tuple(py[:len(s)]) == s and
                 all(f[1].endswith("/threading.py") for f in py[len(s):])
                 for s, k in want.items()):
            ok = True
        elif py:
            rest = py[1:] if py[0][1] == work and py[0][0] == "<module>" and py[0][2] in imports else py
            ok = len(rest) > 0 and all(library(f) or f[0] == "[python]" for f in rest)
        if ok:
            good += count
        else:
            bad.append((count, line))
    if not total:
        sys.exit("no off-CPU time on the main thread")
    share = good / total
    print("%.1f%% of %d us carry their full Python stack, %.1f%% at the script's blocks" %
          (100 * share, total, 100 * blocks / total))
    missing = {k for k in points if not k.startswith("start")} - seen
    if interleaved and blocks and both_sides < blocks / 2:
        print("only %d of %d us of the blocks have native frames around the Python ones" %
              (both_sides, blocks))
        share = 0
    if share < 0.9 or missing:
        if missing:
            print("no time at " + ", ".join(sorted(missing)))
        for count, line in sorted(bad, reverse=True)[:5]:
            print("  not matching: " + line[:400])
        for k, v in points.items():
            print("  wanted %s: %s" % (k, ";".join("%s (%s:%d)" % tuple(f) for f in v)[:400]))
        sys.exit(1)


main()
