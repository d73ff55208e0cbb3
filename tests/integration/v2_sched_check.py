#!/usr/bin/env python3
"""v2_sched_check.py GOTRACECTL TRACE: on a Go 1.22+ trace, report --json's
scheduling delay per goroutine (count and total) equals the one computed
from Go 1.23's own reading of the file (`go tool trace -d=1`, its state
transitions): a goroutine is runnable from a transition into Runnable to
its Runnable->Running.  A goroutine stated at trace start (Undetermined->)
is runnable from the trace's first event, as report's translation announces
it (docs/format.md); one stated running has a delay of 0.  Totals within
1% + 2 us (only the order of events sharing a tick may differ).  Counts
must be equal for every goroutine; totals may differ for at most 1% of
the goroutines: where Go's sequence order contradicts the timestamps (at a
generation boundary, or an M held back for a sequence number) Go's reader
moves each late event to the previous event's time + 1 ns
(internal/trace/reader.go), report keeps the event's own time.  Prints a
line per mismatch; exit 1 if the rule is broken."""
import json
import re
import subprocess
import sys
from collections import defaultdict

GO = "/usr/lib/go-1.23/bin/go"
EV = re.compile(r"^M=-?\d+ P=-?\d+ G=-?\d+ (\w+) Time=(\d+)(.*)$")
TR = re.compile(r"Resource=Goroutine\((\d+)\) Reason=\"[^\"]*\" GoID=\d+ (\w+)->(\w+)")


def go_delays(trace):
    out = subprocess.run([GO, "tool", "trace", "-d=1", trace], capture_output=True,
                         text=True, check=True, timeout=600).stdout
    first = None
    since = {}
    count, total = defaultdict(int), defaultdict(int)
    for line in out.splitlines():
        m = EV.match(line)
        if not m:
            continue
        t = int(m.group(2))
        if first is None:
            first = t
        if m.group(1) != "StateTransition":
            continue
        s = TR.search(m.group(3))
        if not s:
            continue
        g, old, new = int(s.group(1)), s.group(2), s.group(3)
        if new == "Runnable" and old != "Runnable":
            since[g] = first if old == "Undetermined" else t
        elif new == "Running" and old == "Undetermined":
            count[g] += 1
        elif new == "Running" and old == "Runnable" and g in since:
            count[g] += 1
            total[g] += t - since.pop(g)
    return count, total


def main():
    ctl, trace = sys.argv[1], sys.argv[2]
    rep = json.loads(subprocess.run([ctl, "report", "--json", "--top=0", trace],
                                    capture_output=True, text=True, check=True).stdout)
    ours = {t["id"]: t["sched"] for t in rep["threads"]}
    count, total = go_delays(trace)
    bad = badcount = 0
    gs = set(count) | set(ours)
    for g in sorted(gs):
        o = ours.get(g, {"count": 0, "total_ns": 0})
        if o["count"] != count[g] or abs(o["total_ns"] - total[g]) > total[g] * 0.01 + 2000:
            bad += 1
            badcount += o["count"] != count[g]
            if bad <= 10:
                print("g%d: report %d delays, %d ns; go -d=1 %d delays, %d ns" %
                      (g, o["count"], o["total_ns"], count[g], total[g]))
    print("%d goroutines compared, %d differ (%d in count)" % (len(gs), bad, badcount))
    sys.exit(1 if badcount or bad > len(gs) * 0.01 else 0)


main()
