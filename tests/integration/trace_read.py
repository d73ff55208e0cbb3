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

A Go 1.22+ file ("go 1.22 trace", "go 1.23 trace": v2) is read for span and
logs by Go 1.23's own reader (`go tool trace -d=1`, times in ns as the file
has them at frequency 1e9): still not the code that wrote it.

Exits 1 with a message on a file it cannot read.
"""
import ast
import re
import subprocess
import sys

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


def span(recs):
    """Event times: a batch gives its P's time, each event a delta to the
    previous one of its batch (a CPU sample carries its real time)."""
    first, last, at_last, now = None, None, [], 0
    for typ, args in recs:
        if typ == EV_BATCH:
            now = args[1]
            continue
        if typ in (EV_FREQUENCY, EV_STACK, EV_STRING):
            continue
        now += args[0]
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
    out, now = [], 0
    for typ, args in recs:
        if typ == EV_BATCH:
            now = args[1]
            continue
        if typ in (EV_FREQUENCY, EV_STACK, EV_STRING):
            continue
        now += args[0]
        if typ == 33:
            out.append((now, args[1]))
    for ts, v in sorted(out, key=lambda e: e[0]):
        print("%d\t%d" % (ts, v))


def logs(recs):
    """UserLog (event 48: [delta, task, key string id, stack], value) by time."""
    strings, out, now = {0: ""}, [], 0
    for typ, args in recs:
        if typ == EV_STRING:
            strings[args[0]] = args[1].decode("utf-8", "replace")
            continue
        if typ == EV_BATCH:
            now = args[1]
            continue
        if typ in (EV_FREQUENCY, EV_STACK):
            continue
        now += args[0]
        if typ == EV_USER_LOG:
            out.append((now, args[2], args[-1].decode("utf-8", "replace")))
    for ts, key, value in sorted(out, key=lambda e: e[0]):
        print("%d\t%s\t%s" % (ts, strings.get(key, "?"), value))


GO123 = "/usr/lib/go-1.23/bin/go"
V2_EV = re.compile(r"^M=-?\d+ P=-?\d+ G=-?\d+ (\w+) Time=(\d+)(.*)$")
V2_LOG = re.compile(r' Category=("(?:[^"\\]|\\.)*") Message=("(?:[^"\\]|\\.)*")')


def v2_events(path):
    """(time, kind, rest of the line) of every event Go 1.23 reads (Sync,
    the generations' boundaries, left out)."""
    out = subprocess.run([GO123, "tool", "trace", "-d=1", path], capture_output=True,
                         text=True, timeout=600)
    if out.returncode:
        raise ValueError("go 1.23 cannot read it: %s" % out.stderr.strip()[-300:])
    for line in out.stdout.splitlines():
        m = V2_EV.match(line)
        if m and m.group(1) != "Sync":
            yield int(m.group(2)), m.group(1), m.group(3)


def v2_span(path):
    first, last, at_last = None, None, []
    for ts, kind, _ in v2_events(path):
        first = ts if first is None or ts < first else first
        if last is None or ts > last:
            last, at_last = ts, []
        if ts == last:
            at_last.append(kind)
    if first is None:
        raise ValueError("no events")
    print("%d %d %s" % (first, last, ",".join(at_last)))


def v2_logs(path):
    out = []
    for ts, kind, rest in v2_events(path):
        m = V2_LOG.search(rest) if kind == "Log" else None
        if m:
            out.append((ts, ast.literal_eval(m.group(1)), ast.literal_eval(m.group(2))))
    for ts, key, value in sorted(out, key=lambda e: e[0]):
        print("%d\t%s\t%s" % (ts, key, value))


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
        if re.match(rb"go 1\.2[2-9] trace", buf) and argv[1] in ("span", "logs"):
            {"span": v2_span, "logs": v2_logs}[argv[1]](argv[2])
            return 0
        recs = list(records(buf))
        {"frames": frames, "span": span, "heap": heap, "logs": logs}[argv[1]](recs)
    except (ValueError, IndexError) as e:
        sys.stderr.write("%s: %s\n" % (argv[2], e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
