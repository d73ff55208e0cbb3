#!/usr/bin/env python3
"""The hog's preemptions of a Go server's threads: `perf sched timehist
--state` (recorded with -k CLOCK_MONOTONIC, the clock of the runtime's
nanotime and of gotraced) against `gotracectl report --json`'s
go_kernel.threads of the merged file, per thread, within a tolerance.

usage: gomerge_timehist.py TIMEHIST D1 REPORT_JSON SERVER_PID HOG_PID TOL_NS

timehist prints a line per switch-out: the task that ran, its run time
and the state it left in; the lines of one CPU follow each other, so the
task switched in at a line's time is the next line's on that CPU (whose
run started then).  A server thread's interval preempted by the hog is
from a switch-out in state R whose next task on that CPU is the hog to
that thread's next switch-in (its next line's time less its run time):
what timehist counts as that line's wait time, and what the merge calls
"preempted by HOG" (from the stop to the thread's next start, credited
to the task the same switch started).  The merge puts an interval on a
goroutine only where the runtime has one running on that M (its thread):
so is the timehist side, by the runtime's state of that M (`go tool trace
-d=1` of the merged file, same clock) at the interval's middle (the
thread is off the CPU throughout, so the runtime writes no event of that
M inside it).  Prints a line per thread; exits 1 with the reasons if one
differs by more than TOL_NS or no thread was preempted by the hog inside
the runtime's trace."""
import bisect
import json
import re
import sys

LINE = re.compile(r"^\s*(\d+\.\d+)\s+\[(\d+)\]\s+(.+?)\[(\d+)(?:/(\d+))?\]\s+"
                  r"([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)\s*$")
IDLE = re.compile(r"^\s*(\d+\.\d+)\s+\[(\d+)\]\s+<idle>\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)")
D1 = re.compile(r"^M=(\d+) .*StateTransition Time=(\d+) Resource=Goroutine\((\d+)\).* (\w+)->(\w+)$")


def timehist(path):
    """Rows (time_ns, cpu, tid, pid, run_ns, state), in file order."""
    rows = []
    with open(path, errors="replace") as f:
        for ln in f:
            m = LINE.match(ln)
            if m:
                tid = int(m.group(4))
                pid = int(m.group(5) or tid)
                rows.append((round(float(m.group(1)) * 1e9), int(m.group(2)), tid, pid,
                             round(float(m.group(8)) * 1e6), m.group(9)))
                continue
            m = IDLE.match(ln)
            if m:
                rows.append((round(float(m.group(1)) * 1e9), int(m.group(2)), 0, 0,
                             round(float(m.group(5)) * 1e6), "I"))
    return rows


def hog_intervals(rows, srv, hog):
    """tid -> [(start, end)] of the server's threads preempted by the hog."""
    nxt = {}   # row index -> the next row's index on its CPU
    last = {}
    for i, r in enumerate(rows):
        if r[1] in last:
            nxt[last[r[1]]] = i
        last[r[1]] = i
    per = {}
    for i, r in enumerate(rows):
        if r[3] == srv:
            per.setdefault(r[2], []).append(i)
    out = {}
    for tid, idx in per.items():
        for a, b in zip(idx, idx[1:]):
            r = rows[a]
            if r[5] != "R" or a not in nxt:
                continue
            n = rows[nxt[a]]
            # the next line's run began at this switch (us rounding: 3 us)
            if n[2] != hog or abs(n[0] - n[4] - r[0]) > 3000:
                continue
            s, e = r[0], rows[b][0] - rows[b][4]
            if e > s:
                out.setdefault(tid, []).append((s, e))
    return out


def running(path):
    """M -> (times, running-after flags) by the runtime's transitions."""
    ms = {}
    cur = {}
    with open(path, errors="replace") as f:
        for ln in f:
            m = D1.match(ln.rstrip())
            if not m:
                continue
            mid, ts, g, fr, to = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)
            st = ms.setdefault(mid, ([], []))
            run = st[1][-1] if st[1] else False
            if to == "Running":
                cur[mid], run = g, True
            elif fr == "Running" and cur.get(mid) == g:
                run = False
            elif to == "Syscall" and fr != "Running":
                cur[mid], run = g, False
            st[0].append(ts)
            st[1].append(run)
    return ms


def main():
    th, d1, rep, srv, hog, tol = sys.argv[1:7]
    srv, hog, tol = int(srv), int(hog), int(tol)
    iv = hog_intervals(timehist(th), srv, hog)
    ms = running(d1)
    with open(rep) as f:
        gk = json.load(f).get("go_kernel", "missing")
    if gk == "missing":
        print("report --json has no go_kernel member")
        sys.exit(1)
    gk = gk or {"threads": []}
    credit = {}
    for t in gk["threads"]:
        credit[t["tid"]] = sum(c["ns"] for c in t["causes"]
                               if c["what"].startswith("preempted by ") and
                               c["what"].endswith("(tid %d)" % hog))
    alltimes = [t for ts, _ in ms.values() for t in ts]
    lo, hi = (min(alltimes), max(alltimes)) if alltimes else (0, 0)
    bad, seen, anyhog = [], 0, 0
    for tid in sorted(set(iv) | set(credit)):
        inside = [(s, e) for s, e in iv.get(tid, []) if lo <= (s + e) // 2 <= hi]
        whole = sum(e - s for s, e in inside)
        want = n = 0
        times, runs = ms.get(tid, ([], []))
        for s, e in iv.get(tid, []):
            mid = (s + e) // 2
            k = bisect.bisect_right(times, mid)
            if 0 < k < len(times) and runs[k - 1]:
                want += e - s
                n += 1
        got = credit.get(tid, 0)
        seen += n
        anyhog += len(inside)
        print("# thread %d: timehist: the hog held it off %.3f ms (%d intervals) in the runtime's "
              "trace, %.3f ms of it (%d) while a goroutine ran; report credits the hog %.3f ms "
              "(diff %+.3f ms)" % (tid, whole / 1e6, len(inside), want / 1e6, n, got / 1e6,
                                  (got - want) / 1e6))
        if abs(got - want) > tol:
            bad.append("thread %d: report %.3f ms, timehist %.3f ms" % (tid, got / 1e6, want / 1e6))
    # none while a goroutine ran is a busy machine's chance (other tasks
    # preempted the goroutines, the hog took the threads in syscalls):
    # both sides then agree on 0; none at all is a test that saw nothing
    if not anyhog:
        bad.append("timehist has no preemption by the hog of the server's threads in the runtime's trace")
    elif not seen:
        print("# the hog preempted the server's threads only while no goroutine ran on them")
    if bad:
        print("; ".join(bad))
        sys.exit(1)


main()
