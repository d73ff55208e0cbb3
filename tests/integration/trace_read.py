#!/usr/bin/env python3
"""trace_read.py: a small reader of Go traces (the v1 wire format gotraced
writes) of its own, so that the tests of what a trace holds do not trust the
code that wrote it.

  trace_read.py frames FILE   every frame of every stack, one line each:
                              STACK_ID<TAB>PC<TAB>FUNC<TAB>FILE<TAB>LINE
  trace_read.py heap FILE     every HeapAlloc, in time order: TIME<TAB>BYTES
  trace_read.py logs FILE     every UserLog, in time order:
                              TIME<TAB>CATEGORY<TAB>MESSAGE
  trace_read.py span FILE     FIRST LAST TYPES: the first and last event
                              times as written (ticks; gotraced writes
                              CLOCK_MONOTONIC nanoseconds) and the types of
                              the events at the last time (comma-separated)

A Go 1.22+ file (`record --go-version 1.23`) is read through Go 1.23's own
reader (`go tool trace -d=1`, its parsed events): the same four answers,
with a stack numbered by its first appearance there, HeapAlloc the metric
/memory/classes/heap/objects:bytes, and among the types at the last time
(the events 1 ns apart that end the file: the v2 writer moves events that
share a time 1 ns apart) GoEnd for a goroutine's Running->NotExist.

Exits 1 with a message on a file it cannot read.
"""
import json
import re
import subprocess
import sys

GO123 = "/usr/lib/go-1.23/bin/go"

EV_BATCH, EV_FREQUENCY, EV_STACK, EV_STRING = 1, 2, 3, 37
EV_USER_LOG, EV_CPU_SAMPLE = 48, 49
NAMES = {4: "Gomaxprocs", 5: "ProcStart", 6: "ProcStop", 13: "GoCreate", 14: "GoStart",
         15: "GoEnd", 17: "GoSched", 18: "GoPreempt", 19: "GoSleep", 20: "GoBlock",
         21: "GoUnblock", 24: "GoBlockSelect", 25: "GoBlockSync", 27: "GoBlockNet",
         28: "GoSysCall", 29: "GoSysExit", 30: "GoSysBlock", 31: "GoWaiting",
         32: "GoInSyscall", 33: "HeapAlloc", 34: "HeapGoal", 38: "GoStartLocal",
         39: "GoUnblockLocal", 48: "UserLog", 49: "CPUSample"}


def uvarint(buf, pos):
    v, shift = 0, 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint at %d" % pos)
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, pos
        shift += 7


def records(buf):
    """Yields (type, args) of every record; a string as (EV_STRING, (id, bytes))."""
    pos = 16
    while pos < len(buf):
        typ, narg = buf[pos] & 0x3F, buf[pos] >> 6
        pos += 1
        if typ == EV_STRING:
            sid, pos = uvarint(buf, pos)
            n, pos = uvarint(buf, pos)
            yield typ, (sid, buf[pos:pos + n])
            pos += n
            continue
        args = []
        if narg == 3:
            n, pos = uvarint(buf, pos)
            end = pos + n
            while pos < end:
                v, pos = uvarint(buf, pos)
                args.append(v)
        else:
            for _ in range(narg + 1):
                v, pos = uvarint(buf, pos)
                args.append(v)
        if typ == EV_USER_LOG:  # its value string follows the arguments
            n, pos = uvarint(buf, pos)
            args.append(buf[pos:pos + n])
            pos += n
        yield typ, args


def frames(recs):
    strings, stacks = {0: ""}, []
    for typ, args in recs:
        if typ == EV_STRING:
            strings[args[0]] = args[1].decode("utf-8", "replace")
        elif typ == EV_STACK:
            stacks.append(args)
    for args in stacks:
        sid, n = args[0], args[1]
        for i in range(n):
            pc, fn, fl, line = args[2 + 4 * i:6 + 4 * i]
            print("%d\t%#x\t%s\t%s\t%d" % (sid, pc, strings.get(fn, "?"), strings.get(fl, "?"), line))


def timed(recs):
    """(type, args, time) of each event: a batch gives its P's time, each
    event a delta to the previous one of its batch (the dictionaries and
    the frequency are no events)."""
    now = 0
    for typ, args in recs:
        if typ == EV_BATCH:
            now = args[1]
            continue
        if typ in (EV_FREQUENCY, EV_STACK, EV_STRING):
            continue
        now += args[0]
        yield typ, args, now


def span(recs):
    """Event times: a batch gives its P's time, each event a delta to the
    previous one of its batch (a CPU sample carries its real time)."""
    first, last, at_last = None, None, []
    for typ, args, now in timed(recs):
        ts = args[1] if typ == EV_CPU_SAMPLE else now
        first = ts if first is None or ts < first else first
        if last is None or ts > last:
            last, at_last = ts, []
        if ts == last:
            at_last.append(NAMES.get(typ, str(typ)))
    if first is None:
        raise ValueError("no events")
    print("%d %d %s" % (first, last, ",".join(at_last)))


def heap(recs):
    """HeapAlloc values (event 33: [delta, bytes]) sorted by time."""
    out = []
    for typ, args, now in timed(recs):
        if typ == 33:
            out.append((now, args[1]))
    for ts, v in sorted(out, key=lambda e: e[0]):
        print("%d\t%d" % (ts, v))


def logs(recs):
    """UserLog (event 48: [delta, task, key string id, stack], value) by time."""
    strings, out = {0: ""}, []
    for typ, args in recs:
        if typ == EV_STRING:
            strings[args[0]] = args[1].decode("utf-8", "replace")
    for typ, args, now in timed(recs):
        if typ == EV_USER_LOG:
            out.append((now, args[2], args[-1].decode("utf-8", "replace")))
    for ts, key, value in sorted(out, key=lambda e: e[0]):
        print("%d\t%s\t%s" % (ts, strings.get(key, "?"), value))


V2_EVENT = re.compile(r"^M=-?\d+ P=-?\d+ G=-?\d+ (\w+) Time=(\d+)(.*)$")
V2_FRAME = re.compile(r"^\t(.*) @ (0x[0-9a-f]+)$")
V2_LINE = re.compile(r"^\t\t(.*):(\d+)$")
V2_HEAP = '"/memory/classes/heap/objects:bytes"'


def go_string(q):
    """A Go %q string's value (json reads the escapes Go writes for text)."""
    try:
        return json.loads(q)
    except ValueError:
        return q.strip('"')


def v2(cmd, path):
    """cmd's answer for a Go 1.22+ file, from Go 1.23's parsed events."""
    out = subprocess.run([GO123, "tool", "trace", "-d=1", path], capture_output=True,
                         text=True, timeout=1200)
    if out.returncode != 0:
        raise ValueError("go tool trace -d=1: " + out.stderr.strip()[-300:])
    stacks, cur, rows = {}, None, []
    first, last, at = None, None, {}
    for line in out.stdout.splitlines() + ["M=0 P=0 G=0 Sync Time=0"]:
        m = V2_EVENT.match(line)
        if cur and (m or line in ("Stack=", "TransitionStack=")):
            stacks.setdefault(tuple(tuple(x) for x in cur), len(stacks) + 1)
        if m:
            kind, ts, rest = m.group(1), int(m.group(2)), m.group(3)
            cur = None
            if kind == "Sync":  # generation boundaries: Go's, not the recording's
                continue
            name = kind
            if kind == "StateTransition" and "Goroutine(" in rest and rest.endswith("Running->NotExist"):
                name = "GoEnd"
            first = ts if first is None or ts < first else first
            last = ts if last is None or ts > last else last
            if cmd == "span":
                at.setdefault(ts, []).append(name)
            if kind == "Metric" and cmd == "heap" and (" Name=" + V2_HEAP) in rest:
                v = re.search(r"Value=Uint64\((\d+)\)", rest)
                if v:
                    rows.append((ts, v.group(1)))
            elif kind == "Log" and cmd == "logs":
                lm = re.match(r' Task=\d+ Category=("(?:[^"\\]|\\.)*") Message=(".*")$', rest)
                if lm:
                    rows.append((ts, go_string(lm.group(1)) + "\t" + go_string(lm.group(2))))
            continue
        if line in ("Stack=", "TransitionStack="):
            cur = []
            continue
        f = V2_FRAME.match(line)
        if f and cur is not None:
            cur.append([f.group(2), f.group(1), "", 0])
            continue
        f = V2_LINE.match(line)
        if f and cur:
            cur[-1][2], cur[-1][3] = f.group(1), int(f.group(2))
    if cmd == "frames":
        for key, sid in stacks.items():
            for pc, fn, fl, ln in key:
                print("%d\t%s\t%s\t%s\t%d" % (sid, pc, fn, fl, ln))
    elif cmd == "span":
        if first is None:
            raise ValueError("no events")
        # events that share a time in the translator are written 1 ns
        # apart (docs/format.md, "Distinct times"): the last time is the
        # run of events each 1 ns after the one before that ends the file
        t, types = last, []
        while t in at:
            types = at[t] + types
            t -= 1
        print("%d %d %s" % (first, last, ",".join(types)))
    else:
        for ts, v in sorted(rows, key=lambda e: e[0]):
            print("%d\t%s" % (ts, v))


def main(argv):
    if len(argv) != 3 or argv[1] not in ("frames", "span", "heap", "logs"):
        sys.stderr.write("usage: trace_read.py frames|span|heap|logs FILE\n")
        return 2
    with open(argv[2], "rb") as f:
        buf = f.read()
    if not buf.startswith(b"go 1."):
        sys.stderr.write("%s: not a Go trace (header %r)\n" % (argv[2], buf[:16]))
        return 1
    try:
        m = re.match(rb"go 1\.(\d+) trace", buf[:16])
        if m and int(m.group(1)) >= 22:
            v2(argv[1], argv[2])
            return 0
        recs = list(records(buf))
        {"frames": frames, "span": span, "heap": heap, "logs": logs}[argv[1]](recs)
    except (ValueError, IndexError) as e:
        sys.stderr.write("%s: %s\n" % (argv[2], e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
