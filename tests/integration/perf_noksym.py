#!/usr/bin/env python3
"""perf_noksym.py FILE: rewrites, in place, the KSYMBOL (17) and BPF_EVENT
(18) records of a perf.data file as STAT (76) records, which `perf sched
timehist` ignores.  perf 6.1's timehist stops at the ksymbol record of a BPF
program loaded while it recorded ("failed to process type: 17 [Bad
address]"), which other gotraced sessions on a shared machine do, and
`perf record --no-bpf-event` still records them (its side-band event keeps
ksymbol).  The scheduler's tracepoints, all timehist reads, are untouched.
Prints how many it rewrote."""
import struct
import sys

with open(sys.argv[1], "r+b") as f:
    head = f.read(104)
    if head[:8] != b"PERFILE2":
        sys.exit("%s: not a perf.data file" % sys.argv[1])
    off, size = struct.unpack_from("<QQ", head, 40)  # the data section
    pos, n = off, 0
    while pos + 8 <= off + size:
        f.seek(pos)
        typ, _misc, rsize = struct.unpack("<IHH", f.read(8))
        if rsize < 8:
            sys.exit("%s: a record of %d bytes at %#x" % (sys.argv[1], rsize, pos))
        if typ in (17, 18):
            f.seek(pos)
            f.write(struct.pack("<I", 76))
            n += 1
        pos += rsize
print(n)
