#!/usr/bin/env python3
"""check_names.py FRAMES MAPS PERFMAP: the trace's frames in JIT code are
named as perf names them (record_jit.sh).

FRAMES is `trace_read.py frames` output, MAPS the process's /proc/PID/maps
(read before it exited), PERFMAP its /tmp/perf-PID.map.  A JIT frame is one
whose pc lies in an anonymous executable mapping; it is named right when
its function is the name of a perf map line covering pc or pc - 1 (frames
other than the first are return addresses, looked up one byte earlier).
Prints the counts; exits 1 unless at least MIN (50) JIT frames were seen
and at least 99% of them are named right, listing some that are not.
"""
import bisect
import sys

MIN_FRAMES = 50


def anon_exec(path):
    ranges = []
    with open(path) as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) < 5 or "x" not in parts[1]:
                continue
            name = parts[5].strip() if len(parts) > 5 else ""
            if name and not name.startswith("[anon"):
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            ranges.append((lo, hi))
    return sorted(ranges)


def perf_lines(path):
    lines = []
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) == 3:
                start, size = int(parts[0], 16), int(parts[1], 16)
                lines.append((start, start + size, parts[2]))
    return sorted(lines)


def main(frames, maps, perfmap):
    ranges, lines = anon_exec(maps), perf_lines(perfmap)
    starts = [l[0] for l in lines]
    longest = max((l[1] - l[0] for l in lines), default=0)
    jit = named = 0
    bad = []
    with open(frames) as f:
        for row in f:
            _, pc, func, _, _ = row.rstrip("\n").split("\t")
            pc = int(pc, 16)
            if not any(lo <= pc < hi for lo, hi in ranges):
                continue
            jit += 1
            names = set()
            for a in (pc, pc - 1):
                i = bisect.bisect_right(starts, a)
                while i > 0 and lines[i - 1][0] > a - longest - 1:
                    i -= 1
                    if lines[i][0] <= a < lines[i][1]:
                        names.add(lines[i][2])
            if func in names:
                named += 1
            elif len(bad) < 10:
                bad.append("%#x %s (perf map: %s)" % (pc, func, " | ".join(sorted(names)) or "none"))
    print("%d frames in JIT code, %d named as the perf map names them" % (jit, named))
    if jit < MIN_FRAMES:
        sys.exit("fewer than %d frames in JIT code" % MIN_FRAMES)
    if named * 100 < jit * 99:
        sys.exit("only %.1f%% named right; e.g.\n  %s" % (100.0 * named / jit, "\n  ".join(bad)))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: check_names.py FRAMES MAPS PERFMAP")
    main(*sys.argv[1:])
