#!/usr/bin/env python3
"""profiles_check.py GOTRACECTL TRACE: the Go viewers' profile totals
(`go tool trace -pprof=TYPE` of Go 1.19 and Go 1.23) equal what `report`
says each viewer shows (report --json's "viewers"), within 2% (and 20 us:
Go 1.23 moves events that share a timestamp 1 ns apart).  A Go 1.22+ (v2)
file is compared with Go 1.23 only (Go 1.19 cannot read it).  Prints one
line per profile; exits 1 on a mismatch, naming it."""
import gzip
import json
import subprocess
import sys
import tempfile

GOS = {"go1.19": "/usr/lib/go-1.19/bin/go", "go1.23": "/usr/lib/go-1.23/bin/go"}
# report's name -> go tool trace's -pprof name
TYPES = {"sched": "sched", "sync": "sync", "syscall": "syscall", "net": "net"}


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field number, wire type, value) of one protobuf message."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("protobuf wire type %d" % wt)
        yield f, wt, v


def delay_total(profile):
    """The sum of the samples' delay values (the second sample type,
    nanoseconds), and the sum of their counts."""
    if profile[:2] == b"\x1f\x8b":
        profile = gzip.decompress(profile)
    ns = n = 0
    for f, wt, v in fields(profile):
        if f != 2:  # Profile.sample
            continue
        vals = []
        for sf, swt, sv in fields(v):
            if sf != 2:  # Sample.value
                continue
            if swt == 2:  # packed
                j = 0
                while j < len(sv):
                    x, j = varint(sv, j)
                    vals.append(x)
            else:
                vals.append(sv)
        n += vals[0]
        ns += vals[1]
    return ns, n


def pprof(go, kind, trace):
    with tempfile.TemporaryFile() as out:
        r = subprocess.run([go, "tool", "trace", "-pprof=" + kind, trace], stdout=out,
                           stderr=subprocess.PIPE, text=False, timeout=300)
        if r.returncode != 0:
            sys.exit("%s tool trace -pprof=%s failed: %s" % (go, kind, r.stderr.decode()[-300:]))
        out.seek(0)
        return delay_total(out.read())


def main():
    ctl, trace = sys.argv[1], sys.argv[2]
    rep = json.loads(subprocess.run([ctl, "report", "--json", trace], capture_output=True,
                                    text=True, check=True).stdout)
    bad = []
    with open(trace, "rb") as f:
        v2 = f.read(16) in (b"go 1.22 trace\0\0\0", b"go 1.23 trace\0\0\0")
    for rd, go in GOS.items():
        if v2 and rd != "go1.23":
            continue
        for ours, kind in TYPES.items():
            want = rep["viewers"][rd][ours]
            got_ns, got_n = pprof(go, kind, trace)
            line = "%s -pprof=%-7s %14d ns in %6d, report %14d ns in %6d" % (
                rd, kind, got_ns, got_n, want["ns"], want["n"])
            print(line)
            if abs(got_ns - want["ns"]) > got_ns * 0.02 + 20000:
                bad.append(line)
    if bad:
        sys.exit("the viewers' totals differ from report's:\n  " + "\n  ".join(bad))


main()
