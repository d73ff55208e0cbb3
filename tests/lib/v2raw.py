#!/usr/bin/env python3
"""v2raw.py IN.test OUT.trace: writes the binary Go 1.22+ trace of the text
dump in a Go test file (src/internal/trace/testdata/tests/*.test, the
"-- trace --" section, internal/trace/raw's text format), as Go's
raw.Writer would: a type byte, varint arguments, a String's length and
bytes, a Stack's frames.  Prints the test's "-- expect --" line.  A batch written
`size=*` gets the size of what follows it up to the next batch."""
import ast
import re
import sys

NAMES = ["None", "EventBatch", "Stacks", "Stack", "Strings", "String", "CPUSamples",
         "CPUSample", "Frequency", "ProcsChange", "ProcStart", "ProcStop", "ProcSteal",
         "ProcStatus", "GoCreate", "GoCreateSyscall", "GoStart", "GoDestroy",
         "GoDestroySyscall", "GoStop", "GoBlock", "GoUnblock", "GoSyscallBegin",
         "GoSyscallEnd", "GoSyscallEndBlocked", "GoStatus", "STWBegin", "STWEnd", "GCActive",
         "GCBegin", "GCEnd", "GCSweepActive", "GCSweepBegin", "GCSweepEnd",
         "GCMarkAssistActive", "GCMarkAssistBegin", "GCMarkAssistEnd", "HeapAlloc", "HeapGoal",
         "GoLabel", "UserTaskBegin", "UserTaskEnd", "UserRegionBegin", "UserRegionEnd",
         "UserLog", "GoSwitch", "GoSwitchDestroy", "GoCreateBlocked", "GoStatusStack"]
TYPE = {n: i for i, n in enumerate(NAMES)}


def uv(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def convert(text):
    sections = re.split(r"^-- (\w+) --$", text, flags=re.M)
    parts = dict(zip(sections[1::2], sections[2::2]))
    lines = parts["trace"].strip().splitlines()
    m = re.match(r"Trace Go1\.(\d+)", lines[0])
    out = bytearray(b"go 1.%s trace\0\0\0" % m.group(1).encode())
    open_batch = None  # where the size of a batch written size=* goes

    def close_batch():
        if open_batch is not None:
            out[open_batch:open_batch] = uv(len(out) - open_batch)

    for line in lines[1:]:
        s = line.strip()
        if not s:
            continue
        if s.startswith("data="):
            data = ast.literal_eval(s[5:]).encode("latin-1", "backslashreplace")
            out += uv(len(data)) + data
            continue
        toks = s.split()
        if toks[0].startswith("pc="):
            for t in toks:
                out += uv(int(t.split("=", 1)[1]))
            continue
        if toks[0] == "EventBatch":
            close_batch()
            open_batch = None
        out.append(TYPE[toks[0]])
        for t in toks[1:]:
            if t == "size=*":
                open_batch = len(out)
                continue
            out += uv(int(t.split("=", 1)[1]))
    close_batch()
    return bytes(out), parts.get("expect", "").strip()


def main():
    with open(sys.argv[1]) as f:
        data, expect = convert(f.read())
    with open(sys.argv[2], "wb") as f:
        f.write(data)
    print(expect)


if __name__ == "__main__":
    main()
