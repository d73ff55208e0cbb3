#!/usr/bin/env python3
"""debuginfo_check.py REF_FRAMES REF_MAPS FRAMES MAPS BINARY: the frames of a
stripped program are named as those of its unstripped build
(record_debuginfo.sh).

*_FRAMES are `trace_read.py frames` outputs, *_MAPS the programs'
/proc/PID/maps (read while they ran); BINARY is the path the stripped one
was mapped from (the reference's is the one whose name ends like BINARY's
reference, taken as the mapping holding the most frames).  A frame in the
program is found by its file offset (pc - start + offset: stripping moves
no code).  Fails unless every frame of the stripped program is named (no
"name+0xOFF" fallback), at least 8 of them, and every offset both traces
hold has the same function in both.

With --unnamed first, the opposite: every frame of the program is a
"name+0xOFF" fallback (its debug file was refused).
"""
import sys


def mappings(path):
    out = []
    with open(path) as f:
        for line in f:
            p = line.split(None, 5)
            if len(p) == 6 and "x" in p[1]:
                lo, hi = (int(x, 16) for x in p[0].split("-"))
                out.append((lo, hi, int(p[2], 16), p[5].strip()))
    return out


def frames_in(frames, maps, want):
    got = []
    with open(frames) as f:
        for row in f:
            _, pc, func, _, _ = row.rstrip("\n").split("\t")
            pc = int(pc, 16)
            for lo, hi, off, path in maps:
                if lo <= pc < hi and want(path):
                    got.append((pc - lo + off, func))
    return got


def main(ref_frames, ref_maps, frames, maps, binary, unnamed_wanted=False):
    ref_bin = max(
        (m[3] for m in mappings(ref_maps) if m[3].startswith("/") and "/lib" not in m[3]),
        key=lambda p: len(frames_in(ref_frames, mappings(ref_maps), lambda q: q == p)))
    ref = dict(frames_in(ref_frames, mappings(ref_maps), lambda q: q == ref_bin))
    got = frames_in(frames, mappings(maps), lambda q: q == binary)
    base = binary.rsplit("/", 1)[-1]
    unnamed = [f for _, f in got if f.startswith(base + "+0x") or f.startswith("0x")]
    differ = ["%#x: %s, unstripped %s" % (o, f, ref[o]) for o, f in got if o in ref and ref[o] != f]
    both = sum(1 for o, _ in got if o in ref)
    print("%d frames in %s, %d at offsets the unstripped build's trace has, %d unnamed, %d differ"
          % (len(got), base, both, len(unnamed), len(differ)))
    if unnamed_wanted:
        if len(unnamed) != len(got) or not got:
            sys.exit("%d of %d frames named" % (len(got) - len(unnamed), len(got)))
        return
    if len(got) < 8 or both < 5:
        sys.exit("too few frames in the program (%d, %d shared)" % (len(got), both))
    if unnamed:
        sys.exit("unnamed frames: %s" % ", ".join(sorted(set(unnamed))[:8]))
    if differ:
        sys.exit("named otherwise than unstripped: %s" % "; ".join(differ[:8]))


if __name__ == "__main__":
    flag = len(sys.argv) > 1 and sys.argv[1] == "--unnamed"
    args = sys.argv[2:] if flag else sys.argv[1:]
    if len(args) != 5:
        sys.exit(__doc__)
    main(*args, unnamed_wanted=flag)
