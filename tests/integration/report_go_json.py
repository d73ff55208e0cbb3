#!/usr/bin/env python3
"""report --json against the text of the same file for Go's two tables:
the merged kernel table ("The kernel inside the runtime's goroutines":
go_kernel.goroutines and go_kernel.threads, with their causes) and the
goroutines of a kernel recording of a Go program ("Go goroutines on their
threads": goroutines).  Every row the text shows is in the JSON with the
same figures (the text rounds to us and keeps the top rows), and a
cause's culprit stack ("its stack") as culprit_stack.

usage: report_go_json.py TEXT JSON WANT  (WANT: kernel or goroutines)
Prints what it compared; exits 1 with the differences."""
import json
import re
import sys

G = re.compile(r"^  G(\d+)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+%$")
M = re.compile(r"^  M(\d+)$")
ROW = re.compile(r"^    (\S.+?)\s+(\d+)\s+([\d.]+)$")


def kernel(txt, rep, errs):
    gk = rep.get("go_kernel")
    if not gk:
        errs.append("no go_kernel in the JSON")
        return 0
    gs = {g["goid"]: g for g in gk["goroutines"]}
    ms = {t["tid"]: t for t in gk["threads"]}
    start = txt.index("The kernel inside the runtime's goroutines")
    cur, row, n = None, None, 0
    for ln in txt[start:].splitlines()[1:]:
        m = G.match(ln)
        if m:
            g = gs.get(int(m.group(1)))
            cur = g
            if not g:
                errs.append("goroutine %s: not in the JSON" % m.group(1))
            elif ("%.3f" % (g["running_ns"] / 1e6), "%.3f" % (g["kernel_ns"] / 1e6)) != m.group(2, 3):
                errs.append("goroutine %s: text %s, JSON %d %d ns" % (m.group(1), m.group(2, 3),
                                                                  g["running_ns"], g["kernel_ns"]))
            n += 1
            continue
        m = M.match(ln)
        if m:
            cur = ms.get(int(m.group(1)))
            if not cur:
                errs.append("thread %s: not in the JSON" % m.group(1))
            n += 1
            continue
        if ln.startswith("      its stack ") and row is not None:
            if row.get("culprit_stack") != ln[len("      its stack "):]:
                errs.append("row %s: stack %r, JSON %r" % (row["what"], ln, row.get("culprit_stack")))
            continue
        m = ROW.match(ln)
        row = None
        if m and cur and m.group(1) != "cause and culprit":
            rows = {(c["what"], str(c["count"]), "%.3f" % (c["ns"] / 1e6)): c for c in cur["causes"]}
            row = rows.get(m.group(1, 2, 3))
            if row is None:
                errs.append("row %s: not in the JSON's %s" % (m.group(1, 2, 3), sorted(rows)[:3]))
    if not ms:
        errs.append("go_kernel.threads is empty")
    return n


def goroutines(txt, rep, errs):
    js = {(g["goid"], g["thread"]): g for g in rep.get("goroutines", [])}
    lines = txt[txt.index("Go goroutines on their threads"):].splitlines()[2:]
    n = 0
    for ln in lines:
        if not ln.startswith("  ") or not ln[2:12].strip().isdigit():
            break
        goid, g, stops = int(ln[2:12]), int(ln[13:21]), int(ln[47:55])
        j = js.get((goid, g))
        if not j or j["stops"] != stops:
            errs.append("goroutine %d on %d (%d stops): JSON %s" % (goid, g, stops, j))
        n += 1
    return n


def main():
    txt, want = open(sys.argv[1]).read(), sys.argv[3]
    try:
        rep = json.load(open(sys.argv[2]))
    except ValueError as e:
        print("report --json is not JSON: %s" % e)
        sys.exit(1)
    errs = []
    if want == "kernel":
        n = kernel(txt, rep, errs) if "The kernel inside the runtime's" in txt else 0
    else:
        n = goroutines(txt, rep, errs) if "Go goroutines on their threads" in txt else 0
    if not n and not errs:
        errs.append("the text has no %s table" % want)
    if errs:
        print("; ".join(errs[:5]))
        sys.exit(1)
    print("%d %s rows of the text in the JSON" % (n, want))


main()
