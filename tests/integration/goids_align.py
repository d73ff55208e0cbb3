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
  stamp is undecidable only when the side and the code agree (window
  gives the sides the log's time allows, in_stamp the side its thread's
  stack at the log allows: the switch-out's, the sample's, the waker's,
  from our trace): naming the arriving goroutine, in execute after its
  status change or in GoStart; naming the leaving one, in the stamp of a
  leave (GoPark, GoStop, GoEnd), in park_m, goschedImpl or goyield_m
  before their status change, in goexit1, goexit0 or gdestroy before
  its.  A log in execute naming the goroutine that left, or in park_m
  naming the one to come, is wrong, and counts so; so is any log
  elsewhere.  The summary counts the undecidable ones per kind and by
  the runtime function the thread was in; goids_runtime.py caps their
  share of each kind.
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
# Which goroutine a correct read can name where the runtime's trace has
# another, by the code the thread is in (Go 1.23's proc.go), each side
# with its own frames.  Arriving (execute: m.curg = gp, casgstatus to
# _Grunning, then traceAcquire and GoStart): the arriving goroutine, from
# the status change in execute's casgstatus (the run-queue latency
# histogram is recorded after the CAS) to GoStart's clock read.  Leaving
# (park_m, goschedImpl, goyield_m: GoPark or GoStop first, then
# casgstatus; goexit1: GoEnd and traceRelease on the goroutine's own
# stack, then mcall, goexit0 and gdestroy's casgstatus to _Gdead): the
# leaving goroutine, from the stamp to the status change; after it our
# read names none (park_m after its casgstatus is not here: no log can
# name the goroutine there).  exitsyscall's GoSysExit then GoStart (a
# lost P) stamp a leave and an arrival with no change of ours between.
# The tracer's own helpers under those stamps (the event writer, the
# stack, the clock) stand for the stamp that called them.
ARRIVE = re.compile(r'^runtime\.(execute|traceLocker\.GoStart)$')
LEAVE = re.compile(r'^runtime\.(park_m|goschedImpl|go(preempt|sched|yield)_m|goexit[01]|gdestroy|'
                   r'traceLocker\.(GoPark|GoStop|GoPreempt|GoSched|GoEnd))$')
# frames that are where only from their caller: casgstatus (and the
# histogram it records), traceAcquire and the CPU profiler's set-up in
# execute, traceRelease in goexit1, GoSysExit in exitsyscall's closure
CALLED = {
    "arrive": (re.compile(r'^runtime\.(casgstatus|\(\*timeHistogram\)\.record|traceAcquire\w*|'
                          r'setThreadCPUProfiler)$'),
               # schedule: execute's frame missed (a callee's prologue)
               re.compile(r'^runtime\.(execute|schedule)$')),
    "leave": (re.compile(r'^runtime\.(casgstatus|\(\*timeHistogram\)\.record|traceRelease|mcall|'
                         r'traceLocker\.GoSysExit)$'),
              re.compile(r'^runtime\.(park_m|goschedImpl|go(preempt|sched|yield)_m|gdestroy|goexit[01]|'
                         r'exitsyscall\.func\d+)$')),
}
HELPER = re.compile(r'^runtime\.(traceWriter\.[\w.]+|traceEventWriter\.\w+|traceLocker\.(eventWriter|stack)|'
                    r'traceStack|traceClockNow|fpTracebackPCs|traceFrames|\(\*traceStackTable\)\.\w+|'
                    r'\(\*traceMap\)\.\w+)$')
# frames above it that are not where the thread's Go code was: a stamp's
# clock read (the vDSO's, the kernel's: a frame without a package, or
# only a compiler's clone suffix, el0_svc_common.constprop.0 under every
# arm64 system call; nanotime's) and a signal handler run over it (the
# runtime's preemption signal: its handler runs on the thread whatever the
# code it interrupts)
SKIPPED = re.compile(r'^(runtime\.nanotime\w*|runtime\.vdsoCall\w*|runtime\.sig\w+|'
                     r'runtime\.cgoSigtramp|runtime\.badsignal\w*|'
                     r'[^.]*(\.(isra|constprop|part|cold|llvm)(\.\d+)?)*)$')
# the handler's entry: every frame inside it (the handler's own Go code,
# findfunc under sighandler) is the handler's
SIGTRAMP = re.compile(r'^runtime\.(sigtramp|cgoSigtramp)$')


def on_cpu(ours, off):
    """{tid: sorted [(from, to)]}: where our trace has each thread on a CPU.
    A thread whose first transition is a leave ran since before the file
    began (its state record, X->X, is not a transition here): its interval
    opens at 0, so that a runtime event before the file's start, which our
    trace cannot place, is never counted off CPU (nor bounds the clocks:
    it only gives lo a bound that its interval's end gives anyway)."""
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


def below_handler(frames):
    """The frames of the code a signal handler interrupted (all of them
    when none ran over it; none when the walk ended inside it)."""
    tramp = [i for i, f in enumerate(frames) if SIGTRAMP.match(f)]
    return frames[tramp[-1] + 1:] if tramp else frames


def where(frames):
    """The runtime function a stack was in (below a signal handler run
    over it), and whether in a clock read."""
    frames = below_handler(frames) or frames
    fn = next((f for f in frames if f.startswith("runtime.") and not PLUMBING.match(f)), None)
    if fn is None:
        fn = next((f for f in frames if not PLUMBING.match(f)), "?")
    return fn, any(CLOCK.search(f) for f in frames)


# how a status change or a stamp waits, not where: casgstatus spins in
# procyield and osyield while another holds the goroutine's _Gscan bit
# (the GC scanning its stack: in an emulated guest for up to 144 ms after
# a GoSched's stamp, the CPU samples landing in the spin; in execute, 21
# yields of one thread in 6 ms on the 6.1 arm64 guest), and a stamp's
# buffer refill waits for the trace's lock (lock2's spin, yield and futex
# sleep, on the system stack)
SPIN = re.compile(r'^runtime\.(procyield|osyield|lock|lockWithRank|lock2|futex|futexsleep|'
                  r'systemstack)$')
# a stamp's own leaves: its clock read, where a walk may end (the arm64
# vDSO and Go's assembly keep no frame record: the stack is that frame)
STAMP_LEAF = re.compile(r'^(runtime\.nanotime\w*|runtime\.vdsoCall\w*|__kernel_clock_gettime|'
                        r'clock_gettime)$')


def in_stamp(frames, sides):
    """The side of sides ('leave', 'arrive') whose stretch the stack's
    innermost Go frame is in, None if neither (see ARRIVE).  A stack that
    is a stamp's helpers or clock read alone (its walk ended there, with
    no frame to tell whose stamp) is in the one side the time allows, if
    only one (the 5.10 arm64 guest: 11 of 12 such logs in one run)."""
    fs = [f for f in below_handler(frames) if not SKIPPED.match(f) and not HELPER.match(f) and not SPIN.match(f)]
    if not fs and len(sides) == 1 and not any(f.startswith("runtime.sig") for f in frames) and \
            any(HELPER.match(f) or STAMP_LEAF.match(f) for f in frames):
        return next(iter(sides))
    inner, caller = (fs + ["", ""])[:2]
    for side, own in (("arrive", ARRIVE), ("leave", LEAVE)):
        if side not in sides:
            continue
        called, by = CALLED[side]
        if own.match(inner) or called.match(inner) and by.match(caller):
            return side
    return None


def window(t, goid, times, gs, own, fuzz):
    """The sides ('leave', 'arrive') of a runtime stamp of goid the log
    at t naming goid lies in: between a stamp of goid leaving the thread
    and the thread's next event, or between the thread's previous event
    and a stamp of goid arriving on it.
    times, gs: the thread's goroutine changes (goroutine or 0 from each
    time); own: the thread's event times, less the state records that
    the tracer writes with a generation's first event (X->X); fuzz: the
    clock bound."""
    sides = set()
    i = bisect.bisect_right(times, t) - 1
    if i >= 0 and (gs[i - 1] if i >= 1 else 0) == goid and gs[i] != goid:
        # no event of the thread after the leave's stamp, before the log
        j = bisect.bisect_right(own, times[i])
        if j >= len(own) or own[j] >= t - fuzz:
            sides.add("leave")
    if i + 1 < len(times) and gs[i + 1] == goid:
        j = bisect.bisect_left(own, times[i + 1]) - 1
        if j < 0 or own[j] <= t + fuzz:
            sides.add("arrive")
    return sides
