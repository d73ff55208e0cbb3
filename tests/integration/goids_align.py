"""goids_align.py: what goids_runtime.py needs to say when the runtime's own
trace can decide which goroutine a thread ran at an instant of ours.

Two limits of that trace, both measured per run:

- The clocks.  Both files are stamped with CLOCK_MONOTONIC (Go 1.22+'s
  nanotime(), /64 on amd64 and /16 on arm64; the kernel's ktime), but
  nothing makes them one clock by construction.  Every event of the
  runtime's trace is written by its thread (its M) while that thread runs,
  so it must lie where our trace has that thread on a CPU (from the
  kernel's switches).  Shifting the runtime's clock by d keeps that true
  for d in [lo, hi] only, so max(-lo, hi) bounds how far apart the clocks
  can be (clock_bound; the events outside are counted).  The runtime's records of a
  goroutine's state at a generation's start (X->X, written for a
  goroutine that is not running, on another thread's behalf) are not
  such events, nor are the stamps Go's reader clamped (1 ns apart).

- The stamps.  The runtime stamps a goroutine leaving a thread before it
  changes the goroutine's status (park_m, goschedImpl: "trace the event
  before the transition") and stamps one arriving after (execute: m.curg
  and _Grunning, then GoStart).  Our read follows the status, so between
  the state change and its stamp the two disagree, and the trace says
  nothing of where in that stretch the change was: from a leave's stamp to
  the thread's next event in the runtime's trace, or from the thread's
  previous event to an arrival's stamp.  On a host that stretch is tens of
  instructions; in an emulated guest it holds the stamp's own clock read
  (the vDSO, or a system call reading the HPET), which takes milliseconds
  under TCG.  A log there naming the goroutine on the other side of that
  stamp is undecidable (window) when its thread's stack at the log (the
  switch-out's, the sample's, the waker's, from our trace) shows it was in
  that stretch's code: its innermost Go frame is the status change
  (casgstatus) or the writing of the stamp (traceAcquire, traceLocker.*),
  or execute, goschedImpl (or its callers: an unwinder can miss its
  frame), goexit1 or goexit0 (in_stamp).  Elsewhere (say in park_m after
  the change, where m.curg still names the goroutine until dropg) the log
  is wrong, and counts so.  The summary counts the undecidable ones by the
  runtime function the thread was in.
"""
import bisect
import re

TIME = re.compile(r'^M=(-?\d+) .* Time=(\d+) ')
SAME = re.compile(r'^M=-?\d+ .* StateTransition .* (\w+)->(\w+)$')
OURS = re.compile(r'^M=-?\d+ P=-?\d+ G=-?\d+ StateTransition Time=(\d+) '
                  r'Resource=Goroutine\((\d+)\) .* (\w+)->(\w+)$')
EVENT_G = re.compile(r'^M=-?\d+ P=-?\d+ G=(-?\d+) (\w+) Time=(\d+)')
ON = ("Running", "Syscall")
# frames that are how a stamp or a status change is made, not where
PLUMBING = re.compile(r'^(runtime\.(trace|nanotime|sig|casgstatus|\(\*timeHistogram\)|lock|unlock|'
                      r'procyield|osyield|systemstack|mcall|futex)|__kernel_|clock_gettime|'
                      r'read_hpet|ktime_|posix_|__x64_|do_syscall|entry_|el0|\[)')
CLOCK = re.compile(r'clock_gettime|nanotime|read_hpet|ktime_get')
# the code between a goroutine's status change and the runtime's stamp of
# it, as the innermost Go frame: casgstatus (and what it calls: the
# run-queue latency histogram), the tracer's code up to the stamp's commit
# (not traceRelease: park_m's is after the change, where m.curg still
# names the parked goroutine), execute (m.curg and _Grunning, then
# GoStart), goschedImpl (GoPreempt's return to casgstatus; its callers
# gopreempt_m and gosched_m stand for it when an unwinder from a signal
# frame misses it), goexit1 and goexit0 (GoEnd stamped on the goroutine's
# own stack, its status changed later on g0 by gdestroy, which goexit0
# calls first and after which m.curg is gone)
STAMPING = re.compile(r'^runtime\.(casgstatus|\(\*timeHistogram\)\.record|execute|goschedImpl|'
                      r'go(preempt|sched)_m|goexit[01]|trace(?!Release)[A-Z]\w*(\.\w+)?)$')
# frames above it that are not where the thread's Go code was: a stamp's
# clock read (the vDSO's, the kernel's: a frame without a package,
# nanotime's) and a signal handler run over it (the runtime's preemption
# signal: its handler runs on the thread whatever the code it interrupts)
SKIPPED = re.compile(r'^(runtime\.nanotime\w*|runtime\.vdsoCall\w*|runtime\.sig\w+|'
                     r'runtime\.cgoSigtramp|runtime\.badsignal\w*|[^.]*)$')


def on_cpu(ours, off):
    """{tid: sorted [(from, to)]}: where our trace has each thread on a CPU."""
    since, out = {}, {}
    for line in ours:
        m = OURS.match(line)
        if not m:
            continue
        t, tid, old, new = int(m.group(1)) + off, int(m.group(2)), m.group(3), m.group(4)
        if new in ON and old not in ON:
            since[tid] = t
        elif old in ON and new not in ON:
            out.setdefault(tid, []).append((since.pop(tid, 0), t))
    for tid, t in since.items():
        out.setdefault(tid, []).append((t, 1 << 62))
    for iv in out.values():
        iv.sort()
    return out


def runtime_events(theirs):
    """{M: sorted [time]} of the events each M wrote while running: not
    the state records the tracer writes with a generation's first event
    (X->X), some of them for a goroutine on another thread."""
    own = {}
    for line in theirs:
        m = TIME.match(line)
        s = SAME.match(line)
        if m and not (s and s.group(1) == s.group(2)):
            own.setdefault(int(m.group(1)), []).append(int(m.group(2)))
    for ts in own.values():
        ts.sort()
    return own


def clock_bound(own, cpu, moved):
    """(events, lo, hi, outside): the shifts of the runtime's clock that
    keep each of its events in its thread's on-CPU time, and how far off
    that time each event is that none keeps there (by the intervals around
    its unshifted stamp); moved: the stamps Go's reader clamped, not the
    runtime's."""
    lo, hi, n, outside = -(1 << 62), 1 << 62, 0, []
    for mid, ts in own.items():
        iv = cpu.get(mid)
        if not iv:
            continue
        starts = [a for a, _ in iv]
        for t in ts:
            if t in moved:
                continue
            i = bisect.bisect_right(starts, t) - 1
            if i < 0 or t > iv[i][1]:
                gaps = ([t - iv[i][1]] if i >= 0 else []) + \
                    ([iv[i + 1][0] - t] if i + 1 < len(iv) else [])
                outside.append(min(gaps))
                continue
            n += 1
            lo, hi = max(lo, t - iv[i][1]), min(hi, t - iv[i][0])
    return n, lo, hi, outside


def stacks(ours, off):
    """{(tid, time): [frame]}: each log's thread's stack, from the next
    event of that thread (the switch-out's TransitionStack, the sample's
    or the wakeup's Stack: the event the log precedes)."""
    out, pending, cur, blocks, header = {}, {}, None, {}, None
    for line in ours + ["M="]:
        if line.endswith("Stack=") and not line.startswith("M="):
            header = line.strip()
            blocks[header] = []
        elif line.startswith("\t") and not line.startswith("\t\t"):
            if header is not None:
                blocks[header].append(line.strip().split(" @ ")[0])
        elif line.startswith("M="):
            frames = blocks.get("TransitionStack=") or blocks.get("Stack=")
            for key in pending.pop(cur, []) if cur is not None else ():
                if frames:
                    out[key] = frames
            cur, blocks, header = None, {}, None
            m = EVENT_G.match(line)
            if m and m.group(2) == "Log":
                pending.setdefault(int(m.group(1)), []).append((int(m.group(1)),
                                                                int(m.group(3)) + off))
            elif m and int(m.group(1)) in pending:
                cur = int(m.group(1))
    return out


def where(frames):
    """The runtime function a stack was in, and whether in a clock read."""
    fn = next((f for f in frames if f.startswith("runtime.") and not PLUMBING.match(f)), None)
    if fn is None:
        fn = next((f for f in frames if not PLUMBING.match(f)), "?")
    return fn, any(CLOCK.search(f) for f in frames)


def in_stamp(frames):
    """Whether a stack is in the runtime's status change or stamp."""
    inner = next((f for f in frames if not SKIPPED.match(f)), "")
    return bool(STAMPING.match(inner))


def window(t, goid, times, gs, own, fuzz):
    """'leave'/'arrive' when the log at t naming goid lies between a
    runtime stamp of goid leaving or arriving on the thread and the
    thread's neighbouring event on the other side, None otherwise.
    times, gs: the thread's goroutine changes (goroutine or 0 from each
    time); own: the thread's event times, less the state records that
    the tracer writes with a generation's first event (X->X); fuzz: the
    clock bound."""
    i = bisect.bisect_right(times, t) - 1
    if i >= 0 and (gs[i - 1] if i >= 1 else 0) == goid and gs[i] != goid:
        # no event of the thread after the leave's stamp, before the log
        j = bisect.bisect_right(own, times[i])
        if j >= len(own) or own[j] >= t - fuzz:
            return "leave"
    if i + 1 < len(times) and gs[i + 1] == goid:
        j = bisect.bisect_left(own, times[i + 1]) - 1
        if j < 0 or own[j] <= t + fuzz:
            return "arrive"
    return None
