#!/usr/bin/env python3
"""v2_p_order.py TRACE: every event on a P of a Go 1.22+ trace is stamped in
the order Go's reader puts it (docs/format.md, "Recording v2").

Go's reader orders a P's events by its sequence numbers (ProcStart,
GoSyscallBegin and ProcSteal each take the P's next one; ProcStatus at a
generation's start sets it to 0) and an M's events by their place in its
batches; an event whose time is before the one the reader put before it is
moved to that time + 1 ns (internal/trace/reader.go), so `report`, which
keeps the file's times, and Go would disagree.  This reads the raw file
(not Go's reading, which has moved them already): each event an M writes
while it holds P p belongs to p's stretch named by the last sequence number
that M took on p; in every generation and for every P, no event of a later
stretch may be stamped before an event of an earlier one.  Prints each
event out of order (at most 20) and exits 1 if there is one."""
import sys
from collections import defaultdict

# type: number of arguments, the timestamp included (format/v2/gt_v2.h)
NARGS = {9: 3, 10: 3, 11: 1, 12: 4, 13: 3, 14: 4, 15: 2, 16: 3, 17: 1, 18: 1, 19: 3,
         20: 3, 21: 4, 22: 3, 23: 1, 24: 1, 25: 4, 26: 3, 27: 1, 28: 2, 29: 3, 30: 2,
         31: 2, 32: 2, 33: 3, 34: 2, 35: 2, 36: 1, 37: 2, 38: 2, 39: 2, 40: 5, 41: 3,
         42: 4, 43: 4, 44: 5, 45: 3, 46: 3, 47: 4, 48: 5}
NAMES = {10: "ProcStart", 11: "ProcStop", 12: "ProcSteal", 13: "ProcStatus",
         16: "GoStart", 17: "GoDestroy", 19: "GoStop", 20: "GoBlock", 21: "GoUnblock",
         22: "GoSyscallBegin", 23: "GoSyscallEnd", 24: "GoSyscallEndBlocked",
         25: "GoStatus", 14: "GoCreate", 48: "GoStatusStack"}
P_RUNNING, P_SYSCALL = 1, 3
NONE = (1 << 64) - 1


def uv(d, pos):
    v = shift = 0
    while True:
        b = d[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, pos


def batches(d):
    """(gen, m, [(ts, type, args)]) of each event batch, in file order."""
    if not (d[:16] in (b"go 1.22 trace\0\0\0", b"go 1.23 trace\0\0\0")):
        raise SystemExit("not a Go 1.22 or 1.23 trace")
    pos = 16
    while pos < len(d):
        exp = d[pos] == 49
        pos += 2 if exp else 1
        gen, pos = uv(d, pos)
        m, pos = uv(d, pos)
        ts, pos = uv(d, pos)
        size, pos = uv(d, pos)
        end = pos + size
        if exp or size == 0 or d[pos] in (2, 4, 6, 8):  # tables, samples
            pos = end
            continue
        evs = []
        while pos < end:
            t = d[pos]
            pos += 1
            if t not in NARGS:
                raise SystemExit("event type %d at offset %d: not known here" % (t, pos - 1))
            args = []
            for _ in range(NARGS[t]):
                a, pos = uv(d, pos)
                args.append(a)
            ts += args[0]
            evs.append((ts, t, args[1:]))
        yield gen, m, evs


def check(path):
    with open(path, "rb") as f:
        d = f.read()
    # per generation, per M: its events in batch order
    gens = defaultdict(lambda: defaultdict(list))
    for gen, m, evs in batches(d):
        gens[gen][m].extend(evs)
    bad = []
    for gen in sorted(gens):
        # per P: (stretch, ts, M, event)
        onp = defaultdict(list)
        for m, evs in gens[gen].items():
            p = seq = None
            for ts, t, a in evs:
                if t == 13 and a[1] in (P_RUNNING, P_SYSCALL):
                    p, seq = a[0], 0
                elif t == 10:
                    p, seq = a[0], a[1]
                elif t == 22 and p is not None:
                    seq = a[0]
                elif t == 12:
                    onp[a[0]].append((a[1], ts, m, "ProcSteal"))
                    continue
                if p is not None:
                    onp[p].append((seq, ts, m, NAMES.get(t, "type %d" % t)))
                if t == 11:
                    p = seq = None
        for p, evs in onp.items():
            evs.sort(key=lambda e: e[0])  # stable: each M's order kept
            latest = None  # the latest event of the earlier stretches
            i = 0
            while i < len(evs):
                j = i
                while j < len(evs) and evs[j][0] == evs[i][0]:
                    j += 1
                for e in evs[i:j]:
                    if latest and e[1] < latest[1]:
                        bad.append("generation %d, P %d: %s of M %d (P seq %d) at %d, before "
                                   "%s of M %d (P seq %d) at %d" %
                                   (gen, p, e[3], e[2], e[0], e[1], latest[3], latest[2],
                                    latest[0], latest[1]))
                for e in evs[i:j]:
                    if not latest or e[1] > latest[1]:
                        latest = e
                i = j
    for line in bad[:20]:
        print(line)
    if bad:
        print("%s: %d events stamped before an event Go's reader puts before them" %
              (path, len(bad)))
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.exit(check(sys.argv[1]))
