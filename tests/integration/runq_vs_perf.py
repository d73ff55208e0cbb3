#!/usr/bin/env python3
"""runq_vs_perf.py GTCTL TRACE PERF_DATA PID NAME: report's wakeup delay and
run-queue latency of the threads named NAME of process PID, against perf's
reading of the same run (`perf sched record -k mono -a -e
sched:sched_wakeup` around it: perf's times on the trace's clock,
CLOCK_MONOTONIC).  Only the waits that end after a thread's first start in
the trace count: gotraced picks NAME up after its exec, up to tens of ms
later on a loaded machine, and the waits before are not in the file.

 - wakeup delay max (report --json "wakeup_delay") = the largest "sch delay"
   `perf sched timehist` prints for those threads, within 1% (+ 1 us: perf
   prints whole microseconds).
 - run-queue latency histogram (report --json "runqlat_usecs") = runqlat's
   computed from the same perf.data (no bcc here) by runqlat's rules:
   a wakeup, or a switch-out in state R (preempted), to the switch-in;
   slot floor(log2(us)).  runqlat stamps a wakeup at sched_wakeup and
   gotraced's file has sched_waking only (perf sched timehist's ready
   time too), so the wakeup is taken at its first sched_waking after the
   switch-out, and one that raced the switch-out (its sched_waking before
   it: gotraced writes it at that switch-out) at the switch-out.  Each
   tool reads its clock in its own handler of each tracepoint, so one
   wait differs by a fraction of a microsecond between them
   (docs/testing.md): at each slot's edge E the waits below it in ours
   must lie between runqlat's below E - EPS and below E + EPS (EPS = 1 us),
   within 1% of all waits (+ 2); the totals within 1% (+ 2).
Prints both, and how runqlat's own stamp (sched_wakeup) moves each wakeup
(not held: the file has no sched_wakeup time); exit 1 with the difference."""
import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_read  # noqa: E402

EPS = 1000  # ns
SAME = 3000  # ns: perf's switch-in that is the trace's first start

ctl, trace, data, pid, name = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
run = lambda *a: subprocess.run(a, capture_output=True, text=True, check=True).stdout

rep = json.loads(run(ctl, "report", "--json", "--top", "0", "--thread", name, trace))
tids = {t["tid"] for t in rep["threads"] if t["tid"] is not None}
if not tids:
    sys.exit("report shows no thread named %s" % name)
ours_max = max(t["wakeup_delay"]["max_ns"] for t in rep["threads"])
ours = {b["lo_us"]: b["count"] for b in rep["runqlat_usecs"]}

# each thread's first start in the trace (ticks: CLOCK_MONOTONIC ns)
with open(trace, "rb") as fh:
    buf = fh.read()
first, t0 = {}, None
for typ, args, now in trace_read.timed(trace_read.records(buf)):
    t0 = now if t0 is None or now < t0 else t0  # report's times are from here
    if typ in (14, 38, 41) and args[1] in tids:  # GoStart, GoStartLocal, GoStartLabel
        first[args[1]] = min(first.get(args[1], now), now)
worst = max(rep["threads"], key=lambda t: t["wakeup_delay"]["max_ns"])["wakeup_delay"]
worst_end = t0 + worst["worst_at_ns"]
worst_start = worst_end - worst["max_ns"]
if set(first) != tids:
    sys.exit("no start of threads %s in the trace" % sorted(tids - set(first)))

# runqlat from the raw events
ev = re.compile(r"^\s*(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)$")
waking, wakeup, out = {}, {}, {}
# perf may miss events (a CPU's sched_switch stream skipping a switch-in,
# no LOST record): a switch-out of one of the threads whose CPU's last
# switch was to another task.  timehist then measures that run and its
# sch delay from the other task's switch, so those rows are left out
# (their times in us, as timehist prints them)
cpu_next, cpu_last, lost, gaps, wakings = {}, {}, set(), [], []
waits, moved = [], []


def slot(ns):
    us = ns // 1000
    return 0 if us < 2 else 1 << (us.bit_length() - 1)


for line in run("perf", "script", "--ns", "-i", data, "-F", "tid,cpu,time,event,trace").splitlines():
    m = ev.match(line)
    if not m:
        continue
    cpu, ts, kind, args = int(m.group(2)), round(float(m.group(3)) * 1e9), m.group(4), m.group(5)
    if kind in ("sched_wakeup", "sched_wakeup_new", "sched_waking"):
        w = re.search(r"pid=(\d+)", args)
        t = int(w.group(1)) if w else None
        if t in tids and kind != "sched_wakeup":
            waking.setdefault(t, ts)  # the first since its switch-out
            wakings.append(ts)
        if t in tids and kind != "sched_waking":
            wakeup[t] = ts  # runqlat overwrites (BPF_ANY)
    elif kind == "sched_switch":
        s = re.search(r"prev_pid=(\d+) .*prev_state=(\S+) ==> .*next_pid=(\d+)", args)
        if not s:
            continue
        prev, state, nxt = int(s.group(1)), s.group(2), int(s.group(3))
        if prev in tids and cpu_next.get(cpu, prev) != prev:
            lost.add(ts // 1000)
            gaps.append((cpu_last[cpu], ts))
        cpu_next[cpu], cpu_last[cpu] = nxt, ts
        if prev in tids:
            raced = prev in waking
            waking.pop(prev, None)
            wakeup.pop(prev, None)
            out[prev] = ts if state in ("R", "R+") or raced else None
        if nxt in tids and ts > first[nxt] + SAME:
            ready = waking.pop(nxt, None) or out.get(nxt)
            if ready is not None:
                waits.append(ts - ready)
                if nxt in wakeup and out.get(nxt) is None:
                    moved.append((ts - ready, ts - wakeup[nxt]))
        if nxt in tids:
            waking.pop(nxt, None)
            wakeup.pop(nxt, None)
            out.pop(nxt, None)

# perf sched timehist: time [cpu] comm[tid/pid] wait sch-delay run (ms)
# (time is the switch-out: the wait ended at time - run)
row = re.compile(r"\s*([\d.]+)\s+\[\d+\]\s+.*\[(\d+)(?:/(\d+))?\]\s+[\d.]+\s+([\d.]+)\s+([\d.]+)\s*$")
th_max = 0
for line in run("perf", "sched", "timehist", "-i", data).splitlines():
    m = row.match(line)
    if not m or int(m.group(2)) not in tids:
        continue
    t = int(m.group(2))
    if round(float(m.group(1)) * 1e9 - float(m.group(5)) * 1e6) <= first[t] + SAME:
        continue
    if round(float(m.group(1)) * 1e6) in lost:
        continue  # timehist's tprev is another task's switch
    th_max = max(th_max, round(float(m.group(4)) * 1e6))

theirs = {}
for d in waits:
    theirs[slot(d)] = theirs.get(slot(d), 0) + 1
n_ours, n_theirs = sum(ours.values()), len(waits)
errs = []
# report's worst may end at a switch-in perf lost (inside that gap):
# timehist has no row for it, so the maxima are not comparable (whether
# perf kept the sched_waking it began at is printed; with hundreds of
# switch-ins lost it may have lost that too)
unseen = ours_max > th_max and any(lo - SAME <= worst_end <= hi + SAME for lo, hi in gaps)
if unseen:
    print("report's worst wakeup delay (%d ns, woken at a sched_waking perf %s) ends at a "
          "switch-in perf lost: the maxima are not compared on this run" %
          (ours_max, "has" if any(abs(w - worst_start) <= SAME for w in wakings) else "lost too"))
elif abs(ours_max - th_max) > th_max * 0.01 + 1000:
    errs.append("wakeup delay max %d ns, timehist's sch delay max %d ns" % (ours_max, th_max))
# a wait whose switch-in perf lost is in ours and in no runqlat figure
# (its slot unknown): ours may exceed runqlat's by that many, never fall
# short by more than the tolerance
tol = n_theirs * 0.01 + 2
if n_ours < n_theirs - tol or n_ours > n_theirs + tol + len(lost):
    errs.append("%d run-queue waits, runqlat %d (%d switch-ins perf lost)" %
                (n_ours, n_theirs, len(lost)))
ca = 0
for lo in sorted(set(ours) | set(theirs)):
    ca += ours.get(lo, 0)
    edge = 2000 * lo if lo else 2000
    below = sum(1 for d in waits if d < edge - EPS)
    upto = sum(1 for d in waits if d < edge + EPS)
    if ca < below - tol or ca > upto + tol + len(lost):
        errs.append("waits below %d us: %d, runqlat %d..%d (its waits within 1 us of the edge)"
                    % (edge // 1000, ca, below, upto))
print("threads %s: wakeup max %d/%d ns (ours/timehist%s); runqlat %d/%d waits: %s" % (
    sorted(tids), ours_max, th_max,
    ", %d runs whose switch-in perf lost left out" % len(lost) if lost else "", n_ours, n_theirs,
    " ".join("%d:%d/%d" % (lo, ours.get(lo, 0), theirs.get(lo, 0))
             for lo in sorted(set(ours) | set(theirs)))))
if moved:
    gap = sorted(a - b for a, b in moved)
    print("runqlat's own stamp (sched_wakeup) would make %d wakeups shorter by p50 %.1f us, "
          "p90 %.1f us; %d of them in another slot" % (
              len(gap), gap[len(gap) // 2] / 1e3, gap[9 * len(gap) // 10] / 1e3,
              sum(1 for a, b in moved if slot(a) != slot(b))))
sys.exit("; ".join(errs) if errs else 0)
