#!/usr/bin/env python3
"""report_check.py GOTRACECTL TRACE...: `gotracectl report --json` against
figures computed here, independently, from Go 1.19's `go tool trace -d`
dump of the same file (every event after Go's own ordering, one per line:
`TS Type p=P g=G off=OFF arg=value...`, TS in ns from the first event).

Per goroutine, these must agree exactly: scheduling delay count, total and
max; off-CPU time by reason; syscall count and total time; who woke it
(GoUnblock's writer) how often and the delay until it ran; and the number
of events.  The rules are the ones format/analyze/gt_analyze.h states; this file applies
them to Go's event list, the C code to its own streaming merge.

Prints `ok report_check NAME` or `FAIL report_check NAME: why` per trace."""
import json
import os
import subprocess
import sys

REASON = {
    "GoBlockSync": "sync", "GoBlockCond": "sync", "GoBlockSend": "sync", "GoBlockRecv": "sync",
    "GoSleep": "sleep", "GoBlockSelect": "select", "GoBlockNet": "net",
    "GoSysBlock": "syscall", "GoPreempt": "preempt", "GoSched": "sched",
    "GoBlock": "block", "GoBlockGC": "block", "GoStop": "block", "GoEnd": None,
}
# gotraced writes a generic syscall that blocks (fsync, read, write, ...) as
# GoSysCall then one of these: for its threads (the report's "tid"), that
# block is a wait in the syscall, counted as "syscall", never "sync".
SYSCALL_WAITS = {"GoBlockSend", "GoBlockRecv", "GoBlockCond"}


class G:
    def __init__(self):
        self.state = "dead"
        self.since = 0
        self.stop = None  # (reason, ts)
        self.sched = [0, 0, 0]  # count, total, max
        self.off = {}
        self.sys = [0, 0]  # count, total
        self.sys_open = self.sys_blocked = self.sys_resumed = self.sys_woke = False
        self.sys_ts = self.sys_end = 0
        self.waker = None  # the GoUnblock writer of the runnable period
        self.wakers = {}   # waker g -> [count, total delay]


def go_events(gotrace, path):
    out = subprocess.run([gotrace, "-d", path], capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) < 5 or not f[0].lstrip("-").isdigit():
            continue
        args = [kv.split("=", 1)[1] for kv in f[5:] if "=" in kv]
        yield int(f[0]), f[1], int(f[2][2:]), int(f[3][2:]), args


WAITS = {"GoStop", "GoSleep", "GoBlock", "GoBlockSend", "GoBlockRecv", "GoBlockSelect",
         "GoBlockSync", "GoBlockCond", "GoBlockNet", "GoSysBlock", "GoBlockGC"}


def sys_close(g, ts):
    g.sys_open = g.sys_blocked = g.sys_resumed = False
    g.sys[0] += 1
    g.sys[1] += max(0, ts - g.sys_ts)


def sys_track(g, typ, ts, mine):
    """A syscall ends at the goroutine's next event, or, when that event is
    a wait, when it is woken (GoSysExit, GoUnblock) or next seen.  One of
    gotraced's threads woken or preempted in it stays in it while it blocks
    again in a SYSCALL_WAITS block (or is preempted), and the call ends at
    the start after its last wakeup, or else at the preemption."""
    if g.sys_open and g.sys_resumed:
        if typ in ("GoStart", "GoStartLabel"):
            if g.sys_woke:
                g.sys_end = ts
        elif typ in SYSCALL_WAITS:
            g.sys_resumed, g.sys_blocked = False, True
        elif typ != "GoPreempt":
            sys_close(g, g.sys_end)
    elif g.sys_open and not g.sys_blocked and typ == "GoPreempt" and mine:
        g.sys_resumed, g.sys_woke, g.sys_end = True, False, ts
    elif g.sys_open and not g.sys_blocked and typ in WAITS:
        g.sys_blocked = True
    elif g.sys_open:
        sys_close(g, ts)


def on_start(g, ts, spare):
    if g.state == "runnable" and not spare:
        d = max(0, ts - g.since)
        g.sched[0] += 1
        g.sched[1] += d
        g.sched[2] = max(g.sched[2], d)
        if g.waker is not None:
            w = g.wakers.setdefault(g.waker, [0, 0])
            w[0] += 1
            w[1] += d
    if g.stop:
        r, t0 = g.stop
        g.off[r] = g.off.get(r, 0) + max(0, ts - t0)
    g.stop = None
    g.state = "running"


def analyze(events, ours):
    gs = {}
    n = 0

    def get(gid):
        return gs.setdefault(gid, G())
    procs = 0
    for ts, typ, p, gid, args in events:
        n += 1
        if typ == "Gomaxprocs":
            procs = int(args[0])
        if typ in ("GoCreate", "GoUnblock"):
            t = get(int(args[0]))
            t.state, t.since = "runnable", ts
            t.waker = gid if typ == "GoUnblock" else None
            if typ == "GoUnblock" and t.sys_blocked:
                if int(args[0]) in ours:
                    t.sys_blocked, t.sys_resumed, t.sys_woke, t.sys_end = False, True, True, ts
                else:
                    sys_close(t, ts)
        if gid == 0 or typ == "CPUSample":
            continue
        g = get(gid)
        sys_track(g, typ, ts, gid in ours)
        if typ in ("GoStart", "GoStartLabel"):
            # gotraced's 0 ns start on its spare P (P >= Gomaxprocs, not a
            # CPU), so that Go 1.22+ names a thread that never ran: no delay
            on_start(g, ts, procs and p >= procs and gid in ours)
        elif typ in REASON:
            r = REASON[typ]
            if typ in SYSCALL_WAITS and g.sys_blocked and gid in ours:
                r = "syscall"
            g.stop = (r, ts) if r else None
            g.state = "dead" if r is None else "waiting"
            if r in ("preempt", "sched"):
                g.state, g.since, g.waker = "runnable", ts, None
        elif typ == "GoSysCall":
            g.sys_open, g.sys_ts = True, ts
        elif typ == "GoSysExit":
            g.state, g.since, g.waker = "runnable", ts, None
        elif typ in ("GoWaiting", "GoInSyscall"):
            g.state = "waiting"
    for g in gs.values():
        if g.sys_open and g.sys_resumed:
            sys_close(g, g.sys_end)
    return gs, n


def compare(gs, n, rep):
    errs = []
    if rep["events"] - rep.get("futile_wakeups", 0) != n:
        errs.append("events: report %d, go tool trace -d %d" % (rep["events"], n))
    threads = {t["id"]: t for t in rep["threads"]}
    for gid, g in sorted(gs.items()):
        t = threads.get(gid)
        busy = g.sched[0] or g.sys[0] or any(g.off.values())
        if t is None:
            if busy:
                errs.append("G%d missing from the report" % gid)
            continue
        mine = (t["sched"]["count"], t["sched"]["total_ns"], t["sched"]["max_ns"])
        if mine != tuple(g.sched):
            errs.append("G%d sched count/total/max: report %s, -d %s" % (gid, mine, tuple(g.sched)))
        for r, v in t["offcpu_ns"].items():
            if v != g.off.get(r, 0):
                errs.append("G%d off-CPU %s: report %d, -d %d" % (gid, r, v, g.off.get(r, 0)))
        wk = {w["g"]: [w["count"], w["delay_total_ns"]] for w in t["wakers"]}
        if wk != g.wakers:
            errs.append("G%d wakers {g: [count, delay]}: report %s, -d %s" % (gid, wk, g.wakers))
        sc = (sum(s.get("calls", s.get("blocks", 0)) for s in t["syscalls"]), sum(s["total_ns"] for s in t["syscalls"]))
        if sc != tuple(g.sys):
            errs.append("G%d syscalls count/total: report %s, -d %s" % (gid, sc, tuple(g.sys)))
    return errs


def main():
    ctl, traces = sys.argv[1], sys.argv[2:]
    gotrace = os.path.join(subprocess.run(["go", "env", "GOTOOLDIR"], capture_output=True,
                                          text=True, check=True).stdout.strip(), "trace")
    failed = 0
    for path in traces:
        name = os.path.basename(path)
        rep = json.loads(subprocess.run([ctl, "report", "--json", path], capture_output=True,
                                        text=True, check=True).stdout)
        ours = {t["id"] for t in rep["threads"] if (t.get("tid") or -1) >= 0}
        gs, n = analyze(go_events(gotrace, path), ours)
        errs = compare(gs, n, rep)
        checked = sum(1 for g in gs.values() if g.sched[0])
        if not checked:
            errs.append("no scheduling delay at all: nothing was compared")
        if errs:
            failed += 1
            print("FAIL report_check %s: %s" % (name, errs[0]))
            for e in errs[1:6]:
                print("     also: %s" % e)
        else:
            print("ok report_check %s (%d goroutines, %d events)" % (name, len(gs), n))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
