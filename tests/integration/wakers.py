#!/usr/bin/env python3
"""Who woke whom in a Go execution trace: a v1 file (the wire format gotraced
writes by default) read straight from the file, a Go 1.22+ file (`record
--go-version 1.23`) from Go 1.23's own reading of it (`go tool trace -d=1`,
V2Trace): every GoUnblock/GoUnblockLocal, the goroutine
that wrote it (the one running on its P then, 0 for none) and the one it
names, the block it ends, and the first frame of its stack.  Goroutines are
named as gotraced names them: by the one frame of their GoCreate's
new-goroutine stack (the thread's comm).  Each check prints its lines and
exits 1 on a mismatch.

  table TRACE                       waker -> target counts; G 0's wakeups by
                                    the frame of their stack ([timer
                                    interrupt], [softirq], ... or none)
  bounds TRACE WORKLOAD_OUT         every goroutine that woke anyone has a
                                    `wakes NAME MAX` line in WORKLOAD_OUT and
                                    woke at most MAX times (summed by name)
  ends TRACE TARGET BLOCK WAKER MIN MAX [LOST_PCT]
                                    the wakeups of goroutine(s) TARGET that
                                    end a BLOCK (e.g. GoBlockRecv) were all
                                    written by goroutine(s) WAKER, MIN..MAX;
                                    with LOST_PCT, up to that percentage of
                                    them may be G 0's with no stack instead:
                                    how the translator repairs a wakeup the
                                    kernel stream lacked (never a task's)
  perf TRACE TIMEHIST TID MIN_PCT [PIDS]
                                    the wakers of thread TID by thread id,
                                    against `perf sched timehist -w`'s
                                    TIMEHIST of the same load: the share
                                    of wakeups both name the same waker
                                    (sum over wakers of the smaller count,
                                    over the larger total) is >= MIN_PCT.
                                    With PIDS (the recorded processes,
                                    comma-separated), perf's wakers outside
                                    them must be ours "G0 [loopback]"; up to
                                    3% repaired lost wakeups (G 0, no
                                    stack) are left out of the share; ours
                                    naming such a sender ("G0 [loopback from
                                    COMM PID/TID]") count as "G0 [loopback]"
  named TRACE TIMEHIST TIDS COMM MIN_PCT
                                    of perf's wakeups of threads TIDS
                                    (comma-separated) by threads
                                    named COMM (not recorded), >= MIN_PCT are
                                    ours G 0's with the frame "[loopback from
                                    COMM PID/TID]" (PID alone when the
                                    thread is the process's first) naming
                                    the same thread (at least 20 of them)
"""
import collections
import re
import subprocess
import sys

GO123 = "/usr/lib/go-1.23/bin/go"

EV_BATCH, EV_FREQUENCY, EV_STACK = 1, 2, 3
EV_GO_CREATE, EV_GO_START = 13, 14
EV_GO_UNBLOCK, EV_STRING, EV_GO_START_LOCAL = 21, 37, 38
EV_GO_UNBLOCK_LOCAL, EV_GO_START_LABEL, EV_USER_LOG = 39, 41, 48
# events after which no goroutine runs on the P (Go's parser: lastG = 0)
STOPS = {15: "GoEnd", 16: "GoStop", 17: "GoSched", 18: "GoPreempt",
         19: "GoSleep", 20: "GoBlock", 22: "GoBlockSend", 23: "GoBlockRecv",
         24: "GoBlockSelect", 25: "GoBlockSync", 26: "GoBlockCond",
         27: "GoBlockNet", 30: "GoSysBlock", 42: "GoBlockGC"}
BLOCKS = {k: v for k, v in STOPS.items() if k not in (15, 16, 17, 18)}
NO_TIME = (EV_BATCH, EV_FREQUENCY, EV_STACK, EV_STRING)


def varint(buf, pos):
    v = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def events(buf):
    """(type, args) of every record after the 16-byte header."""
    pos = 16
    while pos < len(buf):
        b = buf[pos]
        pos += 1
        typ, narg = b & 0x3f, b >> 6
        if typ == EV_STRING:
            sid, pos = varint(buf, pos)
            n, pos = varint(buf, pos)
            yield typ, [sid, buf[pos:pos + n].decode("utf-8", "replace")]
            pos += n
            continue
        args = []
        if narg < 3:
            for _ in range(narg + 1):
                v, pos = varint(buf, pos)
                args.append(v)
        else:
            n, pos = varint(buf, pos)
            end = pos + n
            while pos < end:
                v, pos = varint(buf, pos)
                args.append(v)
        if typ == EV_USER_LOG:  # a value string follows the arguments
            n, pos = varint(buf, pos)
            pos += n
        yield typ, args


class Trace:
    def __init__(self, path):
        with open(path, "rb") as f:
            buf = f.read()
        strings, stacks, created, lines = {}, {}, {}, {}
        self.unblocks = []   # (ts, waker g, target g, stack id)
        self.blocks = collections.defaultdict(list)  # g -> [(ts, name)]
        last_g, now = {}, {}
        p = 0
        for typ, a in events(buf):
            if typ == EV_STRING:
                strings[a[0]] = a[1]
                continue
            if typ == EV_STACK:
                stacks[a[0]] = a[3] if len(a) >= 6 else 0  # first frame's func
                lines[a[0]] = a[5] if len(a) >= 6 else 0   # ... and its line
                continue
            if typ == EV_BATCH:
                p, now[a[0]] = a[0], a[1]
                continue
            if typ in NO_TIME:
                continue
            now[p] = now.get(p, 0) + a[0]
            ts, g = now[p], last_g.get(p, 0)
            if typ in (EV_GO_START, EV_GO_START_LOCAL, EV_GO_START_LABEL):
                last_g[p] = a[1]
            elif typ in STOPS:
                if typ in BLOCKS:
                    self.blocks[g].append((ts, BLOCKS[typ]))
                last_g[p] = 0
            elif typ == EV_GO_CREATE:
                created[a[1]] = a[2]
            elif typ in (EV_GO_UNBLOCK, EV_GO_UNBLOCK_LOCAL):
                self.unblocks.append((ts, g, a[1], a[-1]))
        self.frame = {sid: strings.get(fid, "") for sid, fid in stacks.items()}
        self.name = {g: self.frame.get(sid, "") or f"G{g}" for g, sid in created.items()}
        # the identity frame's line is the thread id (file "[thread]")
        self.tid = {g: lines.get(sid, 0) for g, sid in created.items()}

    def waker(self, g, stack):
        if g:
            return self.name.get(g, f"G{g}")
        return "G0 " + (self.frame.get(stack) or "(no stack)")

    def ended(self):
        """(ts, waker g, target g, stack, block it ends) of every unblock."""
        out = []
        by_target = collections.defaultdict(list)
        for u in self.unblocks:
            by_target[u[2]].append(u)
        for g, us in by_target.items():
            merged = sorted([(ts, 0, name) for ts, name in self.blocks[g]] +
                            [(u[0], 1, u) for u in us], key=lambda e: (e[0], e[1]))
            last = "(before the trace)"
            for _, kind, x in merged:
                if kind == 0:
                    last = x
                else:
                    out.append(x + (last,))
        return out


# Go 1.23's reasons for v1's blocks, as its converter gives them
# (internal/trace/oldtrace.go; daemon/translate/output_v2.c, block_reason)
V2_BLOCKS = {"chan send": "GoBlockSend", "chan receive": "GoBlockRecv",
             "select": "GoBlockSelect", "sync": "GoBlockSync",
             "sync.(*Cond).Wait": "GoBlockCond", "network": "GoBlockNet",
             "sleep": "GoSleep", "unspecified": "GoBlock",
             "GC mark assist wait for work": "GoBlockGC"}
V2_EVENT = re.compile(r"^M=-?\d+ P=-?\d+ G=(-?\d+) StateTransition Time=(\d+) "
                      r"Resource=Goroutine\((\d+)\) Reason=\"([^\"]*)\" GoID=\d+ (\w+)->(\w+)")
V2_FRAME = re.compile(r"^\t(.*) @ 0x[0-9a-f]+$")
V2_LINE = re.compile(r"^\t\t(.*):(\d+)$")


class V2Trace(Trace):
    """The same tables from a Go 1.22+ file, as Go 1.23 reads it: a wakeup
    is a goroutine's Waiting->Runnable (its waker the event's G, its stack
    the event's Stack), a block its Running->Waiting (the v1 block its
    reason stands for), a goroutine's name and tid the identity frame
    (file "[thread]", line = tid) at the root of its own transitions'
    stacks, the last one seen (v1 names a thread by its last name too)."""

    def __init__(self, path):
        out = subprocess.run([GO123, "tool", "trace", "-d=1", path], capture_output=True,
                             text=True, check=True, timeout=1200).stdout
        self.unblocks, self.blocks = [], collections.defaultdict(list)
        self.frame, self.name, self.tid = {}, {}, {}
        sids = {}
        stack = []    # the event's Stack (a wakeup's: the waker's)
        ev = None     # (waker g, target g, ts, is a wakeup)
        frames = []   # the frames of the stack being read: [func, file, line]
        own = []      # the target's own: its TransitionStack, or the Stack
                      # of an event it writes itself

        def done():
            if ev is None:
                return
            g, t, ts, wake = ev
            if own and own[-1][1] == "[thread]":
                self.name[t], self.tid[t] = own[-1][0], own[-1][2]
            if wake:
                first = stack[0][0] if stack else ""
                sid = sids.setdefault(first, len(sids) + 1)
                self.frame[sid] = first
                self.unblocks.append((ts, g, t, sid))

        for line in out.splitlines():
            m = V2_EVENT.match(line)
            if m or line.startswith("M="):
                done()
                ev, frames, own, stack = None, [], [], []
            if m:
                g, ts, t, reason, old, new = m.groups()
                g, t = max(int(g), 0), int(t)
                ev = (g, t, int(ts), old == "Waiting" and new == "Runnable")
                if old == "Running" and new == "Waiting":
                    self.blocks[t].append((int(ts), V2_BLOCKS.get(reason, reason)))
                continue
            if line in ("Stack=", "TransitionStack=") and ev:
                frames = []
                if line == "Stack=":
                    stack = frames
                if line == "TransitionStack=" or ev[0] == ev[1]:
                    own = frames
                continue
            f = V2_FRAME.match(line)
            if f:
                frames.append([f.group(1), "", 0])
                continue
            f = V2_LINE.match(line)
            if f and frames:
                frames[-1][1], frames[-1][2] = f.group(1), int(f.group(2))
        done()
        for t in set(self.name) | {u[2] for u in self.unblocks}:
            self.name.setdefault(t, f"G{t}")


def load(path):
    """Trace or V2Trace, by the file's header."""
    with open(path, "rb") as f:
        head = f.read(16)
    m = re.match(rb"go 1\.(\d+) trace", head)
    return V2Trace(path) if m and int(m.group(1)) >= 22 else Trace(path)


def table(tr):
    counts = collections.Counter((tr.waker(w, s), tr.name.get(t, f"G{t}"))
                                 for _, w, t, s in tr.unblocks)
    for (w, t), n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {w} -> {t}: {n}")
    return 0


def bounds(tr, workload_out):
    limit = {}
    with open(workload_out) as f:
        for line in f:
            w = line.split()
            if len(w) == 3 and w[0] == "wakes":
                limit[w[1]] = limit.get(w[1], 0) + int(w[2])
    woke = collections.Counter(tr.name.get(w, f"G{w}") for _, w, _, _ in tr.unblocks if w)
    rc = 0
    for name, n in sorted(woke.items()):
        good = name in limit and n <= limit[name]
        want = f"at most {limit[name]}" if name in limit else "no bound: the workload says it wakes no one"
        print(f"  {name} woke {n} ({want}){'' if good else '  <-- MISMATCH'}")
        rc |= 0 if good else 1
    return rc


def ends(tr, target, block, waker, lo, hi, lost_pct):
    hits = [e for e in tr.ended() if tr.name.get(e[2]) == target and e[4] == block]
    by = collections.Counter(tr.waker(e[1], e[3]) for e in hits)
    mine = by.pop(waker, 0)
    lost = by.pop("G0 (no stack)", 0) if lost_pct > 0 else 0
    good = lo <= mine <= hi and not by and lost * 100 <= lost_pct * len(hits)
    print(f"  wakeups of {target} ending {block}: {mine} by {waker} (want {lo}..{hi}),"
          f" repaired lost wakeups: {lost} (at most {lost_pct}%),"
          f" by others: {dict(by) or 'none'}{'' if good else '  <-- MISMATCH'}")
    return 0 if good else 1


PERF_WAKE = re.compile(r"\s(\S+)\[(\d+)(?:/(\d+))?\]\s+awakened: \S+\[(\d+)(?:/\d+)?\]")
UNTRACED = "G0 [loopback]"


def perf(tr, timehist, tid, min_pct, pids):
    """Wakers of thread tid, ours against perf sched timehist -w's."""
    theirs = collections.Counter()
    with open(timehist, errors="replace") as f:
        for line in f:
            m = PERF_WAKE.search(line)
            if not m or int(m.group(4)) != tid:
                continue
            pid = int(m.group(3) or m.group(2))
            if pids is not None and pid not in pids:
                theirs[UNTRACED] += 1  # a sender the recording does not name
            else:
                theirs[f"{m.group(1)}[{m.group(2)}]"] += 1
    ours = collections.Counter()
    for _, w, t, s in tr.unblocks:
        if tr.tid.get(t) == tid:
            k = (f"{tr.name.get(w, '?').split(':')[0]}[{tr.tid.get(w)}]" if w
                 else tr.waker(0, s))
            ours[UNTRACED if k.startswith("G0 [loopback from ") else k] += 1
    by_tid = lambda c: collections.Counter({re.sub(r".*\[", "[", k): v for k, v in c.items()})
    o, p = by_tid(ours), by_tid(theirs)
    # as in `ends`: up to 3% may be wakeups the kernel stream lacked, which
    # the translator repairs at the switch-in as G 0's with no stack
    # (never a task's); they name no waker, right or wrong
    lost = o.pop("G0 (no stack)", 0)
    same = sum(min(n, p[k]) for k, n in o.items())
    total = max(sum(o.values()) + lost, sum(p.values()))
    good = total > 0 and lost * 100 <= 3 * total and same * 100 >= min_pct * (total - lost)
    print(f"  wakeups of thread {tid}: ours {sum(o.values())}, perf's {sum(p.values())},"
          f" same waker {same} ({100.0 * same / max(total - lost, 1):.2f}%, want >= {min_pct}%),"
          f" repaired lost wakeups left out: {lost}"
          f"{'' if good else '  <-- MISMATCH'}")
    for k in sorted(set(ours) | set(theirs)):
        print(f"    {k}: ours {ours.get(k, 0)}, perf {theirs.get(k, 0)}")
    return 0 if good else 1


SENDER = re.compile(r"^G0 \[loopback from (\S+) (\d+)(?:/(\d+))?\]$")


def named(tr, timehist, tids, comm, min_pct):
    """perf's wakeups of tids by (unrecorded) threads named comm, against
    ours that name the sender in G 0's frame, by the sender's thread id."""
    theirs = collections.Counter()
    with open(timehist, errors="replace") as f:
        for line in f:
            m = PERF_WAKE.search(line)
            if m and int(m.group(4)) in tids and m.group(1) == comm:
                theirs[int(m.group(2))] += 1
    ours = collections.Counter()
    for _, w, t, s in tr.unblocks:
        m = SENDER.match(tr.waker(0, s)) if not w and tr.tid.get(t) in tids else None
        if m and m.group(1) == comm:
            ours[int(m.group(3) or m.group(2))] += 1
    total = sum(theirs.values())
    same = sum(min(n, ours[k]) for k, n in theirs.items())
    good = total >= 20 and same * 100 >= min_pct * total
    print(f"  wakeups of threads {sorted(tids)} by {comm}: perf's {total}, ours naming it"
          f" {sum(ours.values())}, the same thread {same}"
          f" ({100.0 * same / max(total, 1):.2f}%, want >= {min_pct}% of at least 20)"
          f"{'' if good else '  <-- MISMATCH'}")
    for k in sorted(set(ours) | set(theirs)):
        print(f"    {comm}[{k}]: ours {ours.get(k, 0)}, perf {theirs.get(k, 0)}")
    return 0 if good else 1


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    cmd, tr = argv[1], load(argv[2])
    if cmd == "table":
        return table(tr)
    if cmd == "bounds":
        return bounds(tr, argv[3])
    if cmd == "ends":
        return ends(tr, argv[3], argv[4], argv[5], int(argv[6]), int(argv[7]),
                    float(argv[8]) if len(argv) > 8 else 0)
    if cmd == "named":
        return named(tr, argv[3], {int(x) for x in argv[4].split(",")}, argv[5],
                     float(argv[6]))
    if cmd == "perf":
        pids = {int(x) for x in argv[6].split(",")} if len(argv) > 6 else None
        return perf(tr, argv[3], int(argv[4]), float(argv[5]), pids)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
