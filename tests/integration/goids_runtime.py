#!/usr/bin/env python3
"""goids_runtime.py TRACE RUNTIME_TRACE: the goroutine ids gotraced read
from a Go 1.22+ program's threads (the UserLogs "goroutine",
"goroutine.wake" and "goroutine.sample": docs/mapping.md "Goroutines of Go
programs") against the program's own runtime/trace of the same run, at
the same instants.  Go 1.22+ stamps its trace with nanotime() (Linux:
CLOCK_MONOTONIC, /64), the clock of gotraced's files (a v1 file's times
from its first event: goids_check.offset), and names each M
by its thread id; both are read by Go 1.23's reader (`go tool trace
-d=1`).

From the runtime's trace, per thread: which goroutine is on it at each
instant (from its transition to Running or Syscall on that M to its
transition out of both).  Each gotraced log of every thread of the
program, inside the runtime trace's span, must name the goroutine the
runtime had on that thread then, except where the runtime's trace does
not know: Go's reader moves events stamped before their generation's
start up to it, 1 ns apart (seen in emulated guests: 100 ms of a
spinning goroutine's run then reads as idle), so a thread's time from
its last event before such a run of clamped stamps to the run is not
compared (counted as "unknown").  The labels after the id are not
compared.

Two more limits of that trace, measured per run (goids_align.py): how far
apart its clock and ours can be (each of its events lies in its thread's
on-CPU time in our trace, all but 1% at most: the shifts of its clock
that keep them there are printed), and the stretch between a goroutine's state change and
the runtime's stamp of it (a leave is stamped before, an arrival after).
A log that names the wrong goroutine inside such a stretch, the one on
the other side of the stamp, is "undecidable": printed with how far it
was from the stamp and where the thread's stack was, and left out of the
share, never dropped silently; but the stretches that hold them (one
stamp's, on one thread) may be at most 0.5% of each kind's logs
(GOIDS_UNDECIDED_MAX_PCT; one is always allowed), so that a wrong read
cannot hide there.  Stretches, not logs: one stretch may hold many (in
an emulated guest a goroutine's status change waited 214 ms in
casgstatus's spin after goschedImpl's stamp, and 105 switch-outs and
samples of its thread fell in it); a wrong read would fall in many.  At least 99% of each kind's decided logs
(GOIDS_RUNTIME_MIN_PCT), and at least MIN_LOGS (10; GOIDS_MIN_LOGS) of
each kind so that the check is not empty.  The kinds: GOIDS_KINDS as
goids_check.py.  Prints the clocks' line, the undecidable logs' line when
there are any and a line per kind; exits 1 on a mismatch."""
import bisect
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from goids_check import offset  # noqa: E402  (a v1 file's times start at 0)
import goids_align as ga  # noqa: E402

GO123 = os.environ.get("GOCHECK_GO123", "/usr/lib/go-1.23/bin/go")
MIN_LOGS = int(os.environ.get("GOIDS_MIN_LOGS", "10"))
MIN_PCT = int(os.environ.get("GOIDS_RUNTIME_MIN_PCT", "99"))
MAX_UNDECIDED_PCT = float(os.environ.get("GOIDS_UNDECIDED_MAX_PCT", "0.5"))
KINDS = os.environ.get("GOIDS_KINDS", "goroutine goroutine.wake goroutine.sample").split()
LOG = re.compile(r'^M=-?\d+ P=-?\d+ G=(\d+) Log Time=(\d+) Task=\d+ '
                 r'Category="(goroutine(?:\.wake|\.sample)?)" Message="goroutine (\d+)[^"]*"$')
TRANS = re.compile(r'^M=(-?\d+) P=-?\d+ G=-?\d+ StateTransition Time=(\d+) '
                   r'Resource=Goroutine\((\d+)\) .* (\w+)->(\w+)$')
ON = ("Running", "Syscall")


def dump(path):
    d = subprocess.run([GO123, "tool", "trace", "-d=1", path], capture_output=True, text=True,
                       timeout=1200)
    if d.returncode != 0:
        raise RuntimeError("go tool trace -d=1 %s: %s" % (path, d.stderr.strip()[-300:]))
    return d.stdout.splitlines()


TIME = re.compile(r'^M=(-?\d+) .* Time=(\d+) ')


def clamped(lines):
    """The stamps Go's reader clamped (runs of events 1 ns apart)."""
    stamps = set(int(m.group(2)) for m in map(TIME.match, lines) if m)
    return set(t for t in stamps if t + 1 in stamps and t + 2 in stamps or
               t - 1 in stamps and t + 1 in stamps or t - 1 in stamps and t - 2 in stamps)


def unknown_spans(lines, moved):
    """{tid: [(from, to)]}: where Go's reader clamped a thread's events
    (moved: the clamped stamps)."""
    last, events = {}, []
    for line in lines:
        m = TIME.match(line)
        if m:
            events.append((int(m.group(2)), int(m.group(1))))
    events.sort()
    spans = {}
    for t, mid in events:
        if t in moved and mid in last and last[mid] < t:
            spans.setdefault(mid, []).append((last[mid], t))
        last[mid] = t
    return spans


def timelines(lines):
    """{tid: ([times], [goid or 0])}: the goroutine on each M from each time on."""
    on = {}      # goid -> the M it is on
    changes = {}  # M -> [(time, goid or 0)]
    span = [None, None]
    for line in lines:
        m = TRANS.match(line)
        if not m:
            continue
        mid, t, g, old, new = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4), \
            m.group(5)
        span[0] = t if span[0] is None else min(span[0], t)
        span[1] = t if span[1] is None else max(span[1], t)
        if new in ON and mid >= 0:
            prev = on.get(g)
            if prev is not None and prev != mid:
                changes.setdefault(prev, []).append((t, 0))
            on[g] = mid
            changes.setdefault(mid, []).append((t, g))
        elif old in ON or new not in ON:
            prev = on.pop(g, None)
            if prev is not None:
                changes.setdefault(prev, []).append((t, 0))
    out = {}
    for mid, ch in changes.items():
        ch.sort(key=lambda x: x[0])  # stable: a leave then an arrive at one time stay in order
        out[mid] = ([t for t, _ in ch], [g for _, g in ch])
    return out, span


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: goids_runtime.py TRACE RUNTIME_TRACE\n")
        return 2
    try:
        ours, theirs = dump(argv[1]), dump(argv[2])
    except RuntimeError as e:
        print(e)
        return 1
    off = offset(argv[1])
    tl, span = timelines(theirs)
    if span[0] is None:
        print("the runtime's trace has no goroutine transition")
        return 1
    moved = clamped(theirs)
    unknown = unknown_spans(theirs, moved)
    own = ga.runtime_events(theirs)
    n, lo, hi, outside = ga.clock_bound(own, ga.on_cpu(ours, off), moved)
    if n == 0 or len(outside) * 100 > n:
        print("the clocks disagree: %d of the runtime's events lie where our trace has their "
              "thread off CPU, %d on it (at most 1%% may not)" % (len(outside), n))
        return 1
    fuzz = max(-lo, hi)
    stack = ga.stacks(ours, off)
    seen = {k: 0 for k in KINDS}
    bad = {k: 0 for k in KINDS}
    skipped, examples, undecided, far, why, stretches = 0, [], {}, [], {}, {}
    for line in ours:
        m = LOG.match(line)
        if not m or m.group(3) not in KINDS:
            continue
        tid, t, kind, goid = int(m.group(1)), int(m.group(2)) + off, m.group(3), int(m.group(4))
        if not span[0] <= t <= span[1]:
            continue
        if any(a < t <= b for a, b in unknown.get(tid, ())):
            skipped += 1
            continue
        times, gs = tl.get(tid, ([], []))
        i = bisect.bisect_right(times, t) - 1
        if (gs[i] if i >= 0 else 0) == goid:
            seen[kind] += 1
            continue
        frames = stack.get((tid, t), [])
        sides = ga.window(t, goid, times, gs, own.get(tid, []), fuzz)
        fn, clock = ga.where(frames)
        side = ga.in_stamp(frames, sides)
        if side:
            undecided[side] = undecided.get(side, 0) + 1
            undecided[kind] = undecided.get(kind, 0) + 1
            stretches.setdefault(kind, set()).add(
                (tid, side, times[i] if side == "leave" else times[i + 1]))
            far.append(t - times[i] if side == "leave" else times[i + 1] - t)
            c = why.setdefault(fn, [0, 0])
            c[0], c[1] = c[0] + 1, c[1] + clock
            continue
        seen[kind] += 1
        bad[kind] += 1
        if len(examples) < 5:
            examples.append("%s at %d on thread %d: goroutine %d, the runtime's %d (in %s%s)" %
                            (kind, t, tid, goid, gs[i] if i >= 0 else 0, fn,
                             ", %s of its stamp" % "/".join(sorted(sides)) if sides else ""))
    for e in examples:
        print(e)
    print("clocks: %d of the runtime's events lie in their thread's on-CPU time for a shift "
          "of its clock in [%d, %d] ns%s" % (n, lo, hi, " (%d outside, by %d to %d ns)" %
                                              (len(outside), min(outside), max(outside))
                                              if outside else ""))
    if far:
        print("undecidable: %d logs between a runtime state change and its stamp on their "
              "thread (%d leaving, %d arriving; %.3f to %.3f ms from the stamp), the "
              "thread in %s" %
              (len(far), undecided.get("leave", 0), undecided.get("arrive", 0),
               min(far) / 1e6, max(far) / 1e6,
               ", ".join("%s %d (%d in a clock read)" % (f, c[0], c[1])
                         for f, c in sorted(why.items(), key=lambda x: -x[1][0]))))
    rc = 0
    summary = []
    for kind in KINDS:
        summary.append("%s %d of %d%s" % (kind, seen[kind] - bad[kind], seen[kind],
                                           " (+%d undecidable)" % undecided[kind]
                                           if undecided.get(kind) else ""))
        if seen[kind] < MIN_LOGS or (seen[kind] - bad[kind]) * 100 < MIN_PCT * seen[kind]:
            rc = 1
        u, k = undecided.get(kind, 0), len(stretches.get(kind, ()))
        # one is always allowed: a kind of 100 logs (the samples) would
        # otherwise fail a host run on a single one
        if k > 1 and k * 100 > MAX_UNDECIDED_PCT * (seen[kind] + u):
            print("%s: %d of %d logs undecidable, in %d stretches: more than %g%% of the logs" %
                  (kind, u, seen[kind] + u, k, MAX_UNDECIDED_PCT))
            rc = 1
    extra = []
    if far:
        extra.append("%d undecidable, in %d stretches" %
                     (len(far), len(set().union(*stretches.values()))))
    if skipped:
        extra.append("%d unknown: clamped by Go's reader" % skipped)
    print("logs naming the goroutine the runtime's own trace has on that thread: " +
          ", ".join(summary) + (" (%s)" % "; ".join(extra) if extra else ""))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
