#!/usr/bin/env python3
"""goids_check.py TRACE WORKLOAD_OUTPUT: the goroutine ids gotraced read
from a Go program's threads (UserLogs "goroutine" at switch-outs,
"goroutine.wake" at the wakeups a thread makes, "goroutine.sample" at CPU
samples; docs/mapping.md "Goroutines of Go programs") against the ids the
program's goroutines know of themselves (tests/workloads/go/goids: lines
"GOID TID START END [LABELS]", each goroutine locked to thread TID from
START to END, CLOCK_MONOTONIC ns, LABELS its pprof labels as "{k=v}").

Every log of those kinds on thread TID inside [START, END] must say
"goroutine GOID", followed by " LABELS" when the worker has labels (the
locked thread runs no other goroutine; the runtime's own g0 and gsignal
have id 0 and write no log): at least 99% of each kind, at least MIN_LOGS
switch-out logs per worker (10; GOIDS_MIN_LOGS), and at least MIN_LOGS of
each other kind over all workers, so that no check is empty.  The kinds
checked: GOIDS_KINDS (all three by default; a recording without
--cpu-profile has no samples).  GOIDS_LABELS_OPTIONAL=1 (the kernel
matrix: an emulated guest's recorder may read the labels after the
program is gone, or later than the 50 ms the capture holds the records
for a read: under TCG a loader thread's start and read can take that
long, and the logs then say "(labels not read in time)") also takes a
labelled worker's log without its labels, or saying they came too late,
and counts those.  The trace is read by Go
1.23's own reader (`go tool trace -d=1`: the log's goroutine G is the
thread's TID); a v1 file's times there are relative to its first event,
which trace_read.py's span gives.  Prints one line per worker; exits 1 on
a mismatch."""
import os
import re
import subprocess
import sys

GO123 = os.environ.get("GOCHECK_GO123", "/usr/lib/go-1.23/bin/go")
# logs a worker needs for the check to mean something; the kernel matrix
# asks for fewer (GOIDS_MIN_LOGS): an emulated guest preempts its spinners
# less often (one worker of 3 on 5.10 arm64 had 6 in 1.5 s)
MIN_LOGS = int(os.environ.get("GOIDS_MIN_LOGS", "10"))
LABELS_OPTIONAL = os.environ.get("GOIDS_LABELS_OPTIONAL") == "1"
# what a log says when its labels' read outlived the hold (daemon/translate/goid.c)
LATE = " (labels not read in time)"
KINDS = os.environ.get("GOIDS_KINDS", "goroutine goroutine.wake goroutine.sample").split()
LOG = re.compile(r'^M=-?\d+ P=-?\d+ G=(\d+) Log Time=(\d+) Task=\d+ '
                 r'Category="(goroutine(?:\.wake|\.sample)?)" Message="(goroutine \d+.*)"$')


def offset(path):
    with open(path, "rb") as f:
        head = f.read(16)
    if head.startswith(b"go 1.22 trace") or head.startswith(b"go 1.23 trace"):
        return 0
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, os.path.join(here, "trace_read.py"), "span", path],
                         capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: goids_check.py TRACE WORKLOAD_OUTPUT\n")
        return 2
    trace, wl = argv[1], argv[2]
    workers = []
    with open(wl) as f:
        for line in f:
            parts = line.split(None, 4)
            goid, tid, start, end = (int(x) for x in parts[:4])
            want = "goroutine %d" % goid + (" " + parts[4].strip() if len(parts) > 4 else "")
            workers.append((goid, tid, start, end, want, "goroutine %d" % goid))
    if not workers:
        print("the workload printed no worker")
        return 1
    d = subprocess.run([GO123, "tool", "trace", "-d=1", trace], capture_output=True, text=True,
                       timeout=1200)
    if d.returncode != 0:
        print("go tool trace -d=1: " + d.stderr.strip()[-300:])
        return 1
    off = offset(trace)
    logs = {}
    for line in d.stdout.splitlines():
        m = LOG.match(line)
        if m and m.group(3) in KINDS:
            logs.setdefault(int(m.group(1)), []).append((int(m.group(2)) + off, m.group(3),
                                                         m.group(4)))
    rc = 0
    seen_all = {k: 0 for k in KINDS}
    bad_all = {k: 0 for k in KINDS}
    unlabelled = 0
    for goid, tid, start, end, want, bare in workers:
        counts = []
        for kind in KINDS:
            seen = [msg for t, k, msg in logs.get(tid, []) if k == kind and start <= t <= end]
            if LABELS_OPTIONAL and want != bare:
                late = (bare, bare + LATE)
                unlabelled += sum(1 for msg in seen if msg in late)
                seen = [want if msg in late else msg for msg in seen]
            wrong = [msg for msg in seen if msg != want]
            counts.append("%s %d (%d wrong%s)" % (kind, len(seen), len(wrong),
                                                  " " + repr(sorted(set(wrong))[:3]) if wrong else ""))
            if kind == "goroutine" and len(seen) < MIN_LOGS:
                rc = 1
            seen_all[kind] += len(seen)
            bad_all[kind] += len(wrong)
        print("%s on thread %d: %s" % (want, tid, ", ".join(counts)))
    summary = []
    for kind in KINDS:
        total, bad = seen_all[kind], bad_all[kind]
        summary.append("%s %d of %d" % (kind, total - bad, total))
        if total < MIN_LOGS or (total - bad) * 100 < 99 * total:
            rc = 1
    print("logs naming the thread's goroutine: " + ", ".join(summary) +
          (" (%d of a labelled worker without its labels, or with them late)" % unlabelled if LABELS_OPTIONAL else ""))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
