#!/usr/bin/env python3
"""goids_check.py TRACE WORKLOAD_OUTPUT: the goroutine ids gotraced read
from a Go program's threads (UserLog "goroutine", docs/mapping.md
"Goroutines of Go programs") against the ids the program's goroutines
know of themselves (tests/workloads/go/goids: lines "GOID TID START END",
each goroutine locked to thread TID from START to END, CLOCK_MONOTONIC ns).

Every "goroutine N" log on thread TID inside [START, END] must be N = GOID
(the locked thread runs no other goroutine; the runtime's own g0 and
gsignal have id 0 and write no log): at least 99% of them, and at least
MIN_LOGS per worker (10; GOIDS_MIN_LOGS) so the check is not empty.  The trace is read by Go
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
LOG = re.compile(r'^M=-?\d+ P=-?\d+ G=(\d+) Log Time=(\d+) Task=\d+ Category="goroutine" '
                 r'Message="goroutine (\d+)"$')


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
            goid, tid, start, end = (int(x) for x in line.split())
            workers.append((goid, tid, start, end))
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
        if m:
            logs.setdefault(int(m.group(1)), []).append((int(m.group(2)) + off, int(m.group(3))))
    bad, total, rc = 0, 0, 0
    for goid, tid, start, end in workers:
        seen = [g for t, g in logs.get(tid, []) if start <= t <= end]
        wrong = [g for g in seen if g != goid]
        print("goroutine %d on thread %d: %d logs, %d name another goroutine %s" %
              (goid, tid, len(seen), len(wrong), sorted(set(wrong))[:5]))
        if len(seen) < MIN_LOGS:
            rc = 1
        bad, total = bad + len(wrong), total + len(seen)
    print("%d of %d logs name the thread's goroutine" % (total - bad, total))
    if total == 0 or (total - bad) * 100 < 99 * total:
        rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
