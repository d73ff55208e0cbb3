#!/usr/bin/env python3
"""Ground-truth helpers for the recording tests: what /proc says a process's
threads did, held against what `gotracectl inspect --json` says the trace
shows.  Each subcommand prints one line per check and exits 1 on a mismatch
(the line says which thread, which figure, expected vs got, and tolerance).

  snap PID OUT.json                 per-thread counters from /proc now
  switches BEFORE AFTER INSPECT TIDS ABS REL
                                    Δ(voluntary+nonvoluntary ctxt switches)
                                    per tid vs goroutine starts in the trace
  kinds BEFORE AFTER INSPECT TIDS ABS REL
                                    Δ voluntary switches vs blocks (sync,
                                    sleep, select, net, syscall, block) and
                                    Δ nonvoluntary vs preempt + sched
  oncpu BEFORE AFTER INSPECT TIDS ABS_MS REL
                                    Δ schedstat on-CPU ns vs running_ns
  unblocks INSPECT NAME MIN MAX     unblocks_received of goroutine(s) NAME
  blocks INSPECT NAME KIND MIN MAX  blocks[KIND] of goroutine(s) NAME
  names INSPECT NAME...             goroutines with these names exist
  tids INSPECT TID...               goroutines with these tids exist
  field INSPECT KEY                 prints a top-level field (e.g. valid)
  frames JSONTRACE FUNC...          viewer stack frames name these functions
  noframes JSONTRACE FUNC...        viewer stack frames name none of these
  calls JSONTRACE EVENT MIN F0 F1 F2
                                    at least MIN viewer events named EVENT
                                    (or slices of goroutines named EVENT)
                                    have F0, F1, F2 in a row in their stack
                                    (innermost first: F0 called by F1, by
                                    F2), and no event's stack goes from F0
                                    straight to F2 (F1 lost)
  wakes TRACE MIN F0 F1 F2          as calls ... unblock, for a Go 1.22+
                                    TRACE, from Go 1.23's own reading of it
                                    (-d=1): its wakeups (Waiting->Runnable)
                                    with their waker's stack.  Go 1.23's
                                    viewer draws no wakeup from P 0 (its
                                    proc view takes resource 0 for none:
                                    cmd/trace/gstate.go, unblock), so the
                                    JSON of a run on CPU 0 has none to count
  groups GOROUTINES_HTML NAME...    the Goroutines page lists these names
  group_sizes GOROUTINES_HTML NAME=N...
                                    the Goroutines page's group NAME has
                                    exactly N goroutines (N=0: no such group)
  threads INSPECT WORKLOAD_OUT      each `thread TID NAME` line of a workload
                                    is exactly one goroutine, named NAME
                                    (one goroutine per thread lifetime, named
                                    by its last comm, whatever renames)
  absent INSPECT NAME...            no goroutine has any of these names
"""
import json
import os
import re
import subprocess
import sys


def read_task(pid, tid):
    base = f"/proc/{pid}/task/{tid}"
    t = {"tid": int(tid)}
    with open(base + "/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k == "Name":
                t["comm"] = v.strip()
            elif k == "voluntary_ctxt_switches":
                t["vol"] = int(v)
            elif k == "nonvoluntary_ctxt_switches":
                t["nonvol"] = int(v)
    with open(base + "/schedstat") as f:
        run, wait, slices = f.read().split()[:3]
    t["run_ns"], t["wait_ns"], t["slices"] = int(run), int(wait), int(slices)
    return t


def steal_ms():
    """Steal time of all CPUs so far, in ms (/proc/stat's eighth column, in
    USER_HZ ticks).  The kernel's on-CPU time (schedstat, from rq's
    clock_task) leaves out the time the hypervisor ran someone else while
    the thread was current (CONFIG_PARAVIRT_TIME_ACCOUNTING); the trace
    measures from switch to switch, as perf sched timehist does, and counts
    it.  On a busy host that is milliseconds per window."""
    hz = os.sysconf("SC_CLK_TCK")
    with open("/proc/stat") as f:
        for line in f:
            part = line.split()
            if part[0] == "cpu":
                return int(part[8]) * 1000.0 / hz if len(part) > 8 else 0.0
    return 0.0


def snap(pid, out):
    tasks, stolen = {}, steal_ms()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            tasks[tid] = read_task(pid, tid)
            tasks[tid]["steal_ms"] = stolen  # the machine's, at this snapshot
        except (FileNotFoundError, ProcessLookupError):
            pass  # the thread exited while we looked
    with open(out, "w") as f:
        json.dump(tasks, f)
    return 0


def load(path):
    with open(path) as f:
        return json.load(f)


def by_tid(inspect):
    """Goroutines of the trace grouped by thread id (a tid reused within the
    recording gets several goroutines: they are summed)."""
    out = {}
    for g in inspect.get("goroutines", []):
        out.setdefault(int(g.get("tid", -1)), []).append(g)
    return out


def within(expected, got, abs_tol, rel_tol):
    return abs(got - expected) <= abs_tol + rel_tol * expected


def compare(before, after, inspect, tids, abs_tol, rel_tol, what):
    b, a, gs = load(before), load(after), by_tid(load(inspect))
    rc = 0
    for tid in tids.split(","):
        if tid not in b or tid not in a:
            print(f"  tid {tid}: missing from the /proc snapshots")
            rc = 1
            continue
        if what == "kinds":
            gl = gs.get(int(tid), [])
            blocked = sum(sum(v for k, v in g.get("blocks", {}).items()
                              if k not in ("preempt", "sched")) for g in gl)
            preempted = sum(g.get("blocks", {}).get("preempt", 0) +
                            g.get("blocks", {}).get("sched", 0) for g in gl)
            vol = a[tid]["vol"] - b[tid]["vol"]
            nonvol = a[tid]["nonvol"] - b[tid]["nonvol"]
            good = int(tid) in gs and within(vol, blocked, abs_tol, rel_tol) and \
                within(nonvol, preempted, abs_tol, rel_tol)
            print(f"  tid {tid} ({a[tid].get('comm', '?')}): voluntary /proc {vol} trace blocks {blocked};"
                  f" nonvoluntary /proc {nonvol} trace preempt+sched {preempted}"
                  f" (tolerance {abs_tol:g} + {rel_tol:.0%}){'' if good else '  <-- MISMATCH'}")
            rc |= 0 if good else 1
            continue
        if what == "switches":
            expected = (a[tid]["vol"] + a[tid]["nonvol"]) - (b[tid]["vol"] + b[tid]["nonvol"])
            got = sum(g.get("starts", 0) for g in gs.get(int(tid), []))
            unit = ""
        else:
            expected = (a[tid]["run_ns"] - b[tid]["run_ns"]) / 1e6
            got = sum(g.get("running_ns", 0) for g in gs.get(int(tid), [])) / 1e6
            unit = "ms"
        good = int(tid) in gs and within(expected, got, abs_tol, rel_tol)
        steal = ""
        if what == "oncpu" and not good and got > expected:
            # Steal during the window, plus one tick per CPU for the
            # counter's rounding, may be in the trace's time and not in
            # /proc's; never more than that.
            stolen = a[tid].get("steal_ms", 0) - b[tid].get("steal_ms", 0)
            if stolen > 0:
                stolen += 1000.0 / os.sysconf("SC_CLK_TCK") * os.cpu_count()
                good = got - stolen - expected <= abs_tol + rel_tol * expected
                steal = f"; host steal in the window up to {stolen:.4g}ms"
        print(f"  tid {tid} ({a[tid].get('comm', '?')}): {what} /proc {expected:.6g}{unit}"
              f" trace {got:.6g}{unit} (tolerance {abs_tol:g}{unit} + {rel_tol:.0%}{steal})"
              f"{'' if good else '  <-- MISMATCH'}")
        if not good:
            rc = 1
    return rc


def named(inspect, name):
    return [g for g in load(inspect).get("goroutines", []) if g.get("name") == name]


def stack_of(frames, fid):
    """The function names of a viewer stack, innermost first."""
    out = []
    while fid is not None and str(fid) in frames and len(out) < 200:
        f = frames[str(fid)]
        out.append(str(f.get("name", "")).rsplit(":", 1)[0])
        fid = f.get("parent")
    return out


def in_a_row(stack, want):
    return any(stack[i:i + len(want)] == want for i in range(len(stack)))


def calls(jsontrace, event, least, want):
    d = load(jsontrace)
    frames = d.get("stackFrames", {})
    hits, lost, names = 0, [], {}
    for e in d.get("traceEvents", []):
        name = str(e.get("name"))
        # a goroutine's slice is named "G<id> <name>"; Go 1.23's viewer
        # (a Go 1.22+ file) adds the reason to a wakeup: "unblock (chan receive)"
        ours = (name == event or re.fullmatch(r"G\d+ " + re.escape(event), name) or
                re.fullmatch(re.escape(event) + r" \(.*\)", name))
        for key in ("sf", "esf"):
            if key not in e:
                continue
            st = stack_of(frames, e[key])
            if ours and in_a_row(st, want):
                hits += 1
            if in_a_row(st, [want[0], want[2]]):
                lost.append(name)
            if want[0] in st:
                names[name] = names.get(name, 0) + 1
    print(f"  {event} events with {' <- '.join(want)}: {hits} (want >= {least}); "
          f"events with {want[0]} in their stack: {names}")
    if lost:
        print(f"  {len(lost)} events lose {want[1]} between {want[0]} and {want[2]}: "
              f"{sorted(set(str(n) for n in lost))}")
    return 0 if hits >= least and not lost else 1


def wakes(trace, least, want):
    out = subprocess.run(["/usr/lib/go-1.23/bin/go", "tool", "trace", "-d=1", trace],
                         capture_output=True, text=True, check=True, timeout=1200).stdout
    hits, lost, seen, st, wake = 0, 0, 0, None, False

    def done():
        nonlocal hits, lost, seen
        if wake and st:
            hits += in_a_row(st, want)
            lost += in_a_row(st, [want[0], want[2]])
            seen += want[0] in st

    for line in out.splitlines():
        if line.startswith("M="):
            done()
            wake, st = line.endswith(" Waiting->Runnable"), None
        elif line == "Stack=":
            st = []
        elif st is not None and line.startswith("\t") and not line.startswith("\t\t"):
            st.append(line.strip().rsplit(" @ ", 1)[0])
    done()
    print(f"  wakeups with {' <- '.join(want)} in their waker's stack: {hits} (want >= {least}); "
          f"with {want[0]}: {seen}; losing {want[1]}: {lost}")
    return 0 if hits >= least and not lost else 1


def in_range(label, value, lo, hi):
    good = lo <= value <= hi
    print(f"  {label}: {value} (want {lo}..{hi}){'' if good else '  <-- MISMATCH'}")
    return 0 if good else 1


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "snap":
        return snap(args[0], args[1])
    if cmd in ("switches", "oncpu", "kinds"):
        return compare(args[0], args[1], args[2], args[3], float(args[4]), float(args[5]), cmd)
    if cmd == "unblocks":
        gs = named(args[0], args[1])
        if not gs:
            print(f"  no goroutine named {args[1]}")
            return 1
        return in_range(f"{args[1]} unblocks_received",
                        sum(g.get("unblocks_received", 0) for g in gs), int(args[2]), int(args[3]))
    if cmd == "blocks":
        gs = named(args[0], args[1])
        if not gs:
            print(f"  no goroutine named {args[1]}")
            return 1
        return in_range(f"{args[1]} blocks[{args[2]}]",
                        sum(g.get("blocks", {}).get(args[2], 0) for g in gs), int(args[3]), int(args[4]))
    if cmd == "names":
        have = {g.get("name") for g in load(args[0]).get("goroutines", [])}
        missing = [n for n in args[1:] if n not in have]
        if missing:
            print(f"  goroutine names missing: {missing}; trace has: {sorted(str(h) for h in have)[:40]}")
        return 1 if missing else 0
    if cmd == "tids":
        have = set(by_tid(load(args[0])))
        missing = [t for t in args[1:] if int(t) not in have]
        if missing:
            print(f"  tids missing from the trace: {missing}")
        return 1 if missing else 0
    if cmd == "field":
        print(load(args[0]).get(args[1]))
        return 0
    if cmd in ("frames", "noframes"):
        frames = load(args[0]).get("stackFrames", {})
        fns = {str(f.get("name", "")).rsplit(":", 1)[0] for f in frames.values()}
        if cmd == "noframes":
            there = [fn for fn in args[1:] if fn in fns]
            if there:
                print(f"  functions that should not be in the viewer's stacks: {there}")
            return 1 if there else 0
        missing = [fn for fn in args[1:] if fn not in fns]
        if missing:
            print(f"  functions missing from the viewer's stacks: {missing}; "
                  f"{len(fns)} functions seen, e.g. {sorted(fns)[:15]}")
        return 1 if missing else 0
    if cmd == "calls":
        return calls(args[0], args[1], int(args[2]), args[3:6])
    if cmd == "wakes":
        return wakes(args[0], int(args[1]), args[2:5])
    if cmd == "groups":
        with open(args[0]) as f:
            page = f.read()
        # Go 1.19's page links groups by id, Go 1.23's (a v2 file) by name
        shown = set(re.findall(r'<a href="/goroutine\?(?:id=\d+|name=[^"]*)">([^<]*)</a>', page))
        missing = [n for n in args[1:] if n not in shown]
        if missing:
            print(f"  Goroutines page lacks groups {missing}; it shows {sorted(shown)[:40]}")
        return 1 if missing else 0
    if cmd == "group_sizes":
        with open(args[0]) as f:
            page = f.read()
        sizes = {}
        for name, n in re.findall(r'<a href="/goroutine\?id=\d+">([^<]*)</a> N=(\d+)', page):
            sizes[name] = sizes.get(name, 0) + int(n)
        for name, n in re.findall(r'<a href="/goroutine\?name=[^"]*">([^<]*)</a>(?:\s*</\w+>)*\s*<td>(\d+)',
                                  page):  # Go 1.23's
            sizes[name] = sizes.get(name, 0) + int(n)
        rc = 0
        for want in args[1:]:
            name, n = want.rsplit("=", 1)
            got = sizes.get(name, 0)
            if got != int(n):
                print(f"  Goroutines page: group {name} has {got} goroutines, want {n}")
                rc = 1
        if rc:
            print(f"  groups shown: {sorted(sizes.items())[:40]}")
        return rc
    if cmd == "threads":
        gs = by_tid(load(args[0]))
        rc = 0
        with open(args[1]) as f:
            lines = [l.split() for l in f if l.startswith("thread ")]
        if not lines:
            print(f"  no `thread TID NAME` line in {args[1]}")
            return 1
        for _, tid, name in (l[:3] for l in lines if len(l) >= 3):
            got = gs.get(int(tid), [])
            names = [g.get("name") for g in got]
            good = len(got) == 1 and names[0] == name
            print(f"  thread {tid}: goroutines {names} (want exactly [{name!r}])"
                  f"{'' if good else '  <-- MISMATCH'}")
            rc |= 0 if good else 1
        return rc
    if cmd == "absent":
        present = sorted({g.get("name") for g in load(args[0]).get("goroutines", [])
                          if g.get("name") in args[1:]})
        if present:
            print(f"  goroutines named {present} should not exist")
        return 1 if present else 0
    print(f"truth.py: unknown command {cmd}")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
