#!/usr/bin/env python3
"""flight_tail.py MARKS DUMP...: whether each flight dump holds the records
of the moment its dump was asked after (tests/workloads/usr1_tail.c).

MARKS holds `mark T` lines (CLOCK_MONOTONIC ns, the traces' clock).  For
each dump (a v1 file), its end E is its last event time; the end's own
events (every P stopped, every thread's state) lie within 1 us of E.  The
dump's mark is the latest T before E - 1 us; its latest real event
(before E - 1 us) must be at T or later: the workload slept after T, so
some record of it is older than the dump by twice the merge lag.  Prints
one line per dump (the tail: E - latest real event, in ms); exits 1 when a
dump misses its mark (or none is given)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_read as tr  # noqa: E402

END_RUN_NS = 1000


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: flight_tail.py MARKS DUMP...\n")
        return 2
    with open(argv[1]) as f:
        marks = sorted(int(w[1]) for w in (l.split() for l in f) if len(w) == 2 and w[0] == "mark")
    bad = 0
    for path in argv[2:]:
        with open(path, "rb") as f:
            buf = f.read()
        ts = sorted(now for _, _, now in tr.timed(list(tr.records(buf))))
        end = ts[-1]
        real = [t for t in ts if t < end - END_RUN_NS]
        mine = [m for m in marks if m < end - END_RUN_NS]
        if not real or not mine:
            print("%s: no mark before its end (%d), or no event" % (path, end))
            bad += 1
            continue
        last, mark = real[-1], mine[-1]
        ok = last >= mark
        bad += not ok
        print("%s: tail %.3f ms, asked %.3f ms after its mark%s" % (
            os.path.basename(path), (end - last) / 1e6, (end - mark) / 1e6,
            "" if ok else ": nothing from the mark on (the last %.3f ms before it)" % ((mark - last) / 1e6)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
