#!/usr/bin/env python3
"""servers_check.py: checks of record_servers.sh on a trace of a real server.

  frames TRACE MAPS...   every user frame's PC lies in an executable mapping
                         of one of the server's processes (MAPS: copies of
                         /proc/PID/maps read during the recording); prints
                         "user N named P% outside K" and exits 1 when K > 0
                         (the first few listed).  Kernel frames (PC in the
                         upper half) and the synthetic ones ([thread],
                         [interrupt], [gotraced]) are not user frames.
  names INSPECT NAME...  each NAME is a goroutine name in the trace
  go123 HTML NAME...     each NAME is a group on Go 1.23's Goroutines page
                         (HTML: the page, saved)
  stats INSPECT RECERR   one line: events, bytes/event, drops
  busy BEFORE AFTER MIN  the worker threads: tids (comma-separated) that
                         switched at least MIN times between two truth.py
                         snapshots (timer-driven helpers such as postgres's
                         walwriter or memcached's mc-lrumaint also switch in
                         the recording's idle edges; workers only in the burst)
"""
import json
import os
import re
import subprocess
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
SYNTHETIC = {"[thread]", "[interrupt]", "[gotraced]"}
UNNAMED = re.compile(r"(^\?|^\[unknown\]|\+0x[0-9a-f]+$)")


def exec_ranges(paths):
    ranges = []
    for p in paths:
        with open(p) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and "x" in parts[1]:
                    lo, hi = parts[0].split("-")
                    ranges.append((int(lo, 16), int(hi, 16)))
    return ranges


def frames(trace, maps):
    out = subprocess.run([sys.executable, os.path.join(HERE, "trace_read.py"), "frames", trace],
                         capture_output=True, text=True, check=True).stdout
    ranges = exec_ranges(maps)
    user = named = 0
    bad = []
    seen = set()
    for line in out.splitlines():
        _, pc, func, file, _ = (line.split("\t") + [""] * 5)[:5]
        pc = int(pc, 0)
        if file in SYNTHETIC or pc >= 1 << 47 or (pc, func) in seen:
            continue
        seen.add((pc, func))
        user += 1
        if not UNNAMED.search(func):
            named += 1
        if not any(lo <= pc < hi for lo, hi in ranges):
            bad.append("%#x %s" % (pc, func))
    pct = 100.0 * named / user if user else 0.0
    print("user %d named %.1f%% outside %d" % (user, pct, len(bad)))
    for b in bad[:5]:
        print("  outside every executable mapping: " + b)
    return 1 if bad or not user else 0


def names(inspect, wanted):
    have = {g["name"] for g in json.load(open(inspect))["goroutines"]}
    missing = [n for n in wanted if n not in have]
    for n in missing:
        print("no goroutine named %r; names: %s" % (n, ", ".join(sorted(have))[:400]))
    return 1 if missing else 0


def go123(html, wanted):
    page = open(html, errors="replace").read()
    have = {urllib.parse.unquote_plus(m)
            for m in re.findall(r'href="/goroutine\?name=([^"]*)"', page)}
    missing = [n for n in wanted if n not in have]
    for n in missing:
        print("Go 1.23's Goroutines page has no group %r; groups: %s"
              % (n, ", ".join(sorted(have))[:400]))
    return 1 if missing else 0


def stats(inspect, recerr):
    d = json.load(open(inspect))
    drops = "?"
    for line in open(recerr, errors="replace"):
        m = re.search(r"(\d+) dropped", line)
        if m:
            drops = m.group(1)
    ev = d.get("events", 0)
    print("events %d  bytes/event %.1f  drops %s  goroutines %d"
          % (ev, d.get("bytes", 0) / ev if ev else 0, drops, d.get("goroutine_count", 0)))
    return 0


def busy(before, after, least):
    b, a = json.load(open(before)), json.load(open(after))
    tids = [t for t in b if t in a and
            (a[t]["vol"] + a[t]["nonvol"]) - (b[t]["vol"] + b[t]["nonvol"]) >= least]
    print(",".join(tids))
    return 0


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "frames":
        return frames(args[0], args[1:])
    if cmd == "names":
        return names(args[0], args[1:])
    if cmd == "go123":
        return go123(args[0], args[1:])
    if cmd == "busy":
        return busy(args[0], args[1], int(args[2]))
    if cmd == "stats":
        return stats(args[0], args[1])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
