#!/usr/bin/env bash
# record_syscalls.sh: time blocked inside a syscall is labelled by it.
#  - report_fsync: fsyncloop (tests/workloads/fsyncloop.c: write 256 KiB,
#    fsync, pread, nap; it counts its own calls) recorded from its exec.
#    gotraced writes a generic syscall that blocks as GoSysCall + GoBlock*
#    (so that its waker shows); `report` counts that wait under `syscall`,
#    by the syscall's name: its syncer thread has fsync in the syscall
#    table with time blocked, `syscall` off-CPU time at least that, and
#    nothing under `sync` (it takes no lock: the old report put all of its
#    fsync time there).
#  - report_counts_told: where report's fsync COUNT differs from the
#    program's own count of calls (a call that blocks several times is
#    several GoSysCalls: the file has no syscall exits), the text report
#    says what it counts, next to the table, and names the column (text)
#    and the key (JSON) BLOCKS / "blocks", not calls.
#  - report_calls_perf: with --syscalls=all, the column is CALLS ("calls") (a call that
#    blocks again stays one call): fsyncloop recorded under `perf trace
#    -s`; the syncer thread's fsync, clock_nanosleep, write and pread64
#    counts in `report --json` equal perf's for that thread (within 2%, at
#    least 1), fsync's equals the program's own count (40) and pread64's
#    is at least its 40 (its wrapper is named pread, the call pread64;
#    the loader preads too), and an fsync
#    lasts at least the time it was blocked.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

gt_expect report_fsync report_counts_told report_calls_perf
gt_require_bpf report_fsync report_counts_told report_calls_perf

T=$GT_TMP/fsync.trace
if ! "$GTCTL" record -o "$T" -- "$WL/fsyncloop" 40 >"$GT_TMP/fs.out" 2>"$GT_TMP/fs.err"; then
	fail report_fsync "gotracectl record -- fsyncloop failed: $(tail -3 "$GT_TMP/fs.err")"
elif gt_valid report_fsync "$T"; then
	"$GTCTL" report --json "$T" >"$GT_TMP/fs.json" 2>"$GT_TMP/fs.rep.err" ||
		fail report_fsync "report --json failed: $(tail -3 "$GT_TMP/fs.rep.err")"
	if out=$(python3 - "$GT_TMP/fs.json" "$GT_TMP/fs.out" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
calls = {l.split()[1]: int(l.split()[2]) for l in open(sys.argv[2]) if l.startswith("calls ")}
t = [t for t in rep["threads"] if t["name"] == "syncer"]
if len(t) != 1:
    sys.exit("%d syncer threads in the report" % len(t))
t = t[0]
sysc = {s["name"]: s for s in t["syscalls"]}
off = t["offcpu_ns"]
errs = []
if calls.get("fsync") != 40:
    errs.append("the workload says %s fsync calls, not 40" % calls.get("fsync"))
if "fsync" not in sysc or sysc["fsync"]["blocked_ns"] <= 0:
    errs.append("no blocked fsync in the syscall table: %s" % sorted(sysc))
elif off["syscall"] < sysc["fsync"]["blocked_ns"]:
    errs.append("off-CPU syscall %d ns < fsync's blocked %d ns" % (off["syscall"], sysc["fsync"]["blocked_ns"]))
if off["sync"]:
    errs.append("%d ns under sync: the thread takes no lock" % off["sync"])
print("syncer off-CPU %s; fsync %s" % (off, sysc.get("fsync")))
sys.exit("; ".join(errs) if errs else 0)
PY
	); then
		ok report_fsync
	else
		fail report_fsync "report labels fsync's wait wrongly"
		echo "$out" | detail
	fi
fi

# report_counts_told
if [ ! -s "$GT_TMP/fs.json" ]; then
	fail report_counts_told "no report of the fsync trace"
else
	n=$(python3 -c 'import json, sys
t = [t for t in json.load(open(sys.argv[1]))["threads"] if t["name"] == "syncer"]
print(sum(s.get("calls", s.get("blocks", 0)) for s in t[0]["syscalls"] if s["name"] == "fsync") if t else -1)' "$GT_TMP/fs.json")
	"$GTCTL" report "$T" >"$GT_TMP/fs.txt" 2>&1
	# by default the table counts blocks, and says so by its column's
	# name, in the text (BLOCKS, not CALLS) and in the JSON ("blocks")
	kind=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(d.get("syscalls_count"), "count" in str([s for t in d["threads"] for s in t["syscalls"]]))' "$GT_TMP/fs.json")
	if [ "$kind" != "blocks False" ]; then
		fail report_counts_told "report --json of a --syscalls=blocking recording: syscalls_count, any \"count\" key = $kind (want blocks False)"
	elif ! grep -q "SYSCALL  *BLOCKS" "$GT_TMP/fs.txt" || grep -q "SYSCALL  *CALLS" "$GT_TMP/fs.txt"; then
		fail report_counts_told "the text's syscall table of a --syscalls=blocking recording is not headed BLOCKS"
	elif [ "$n" = 40 ] || grep -q "a call that blocks N times counts N" "$GT_TMP/fs.txt"; then
		ok report_counts_told
	else
		fail report_counts_told "report counts $n fsync blocks (the program made 40 calls) and does not say why"
	fi
fi

# report_calls_perf
A=$GT_TMP/all.trace
if ! command -v perf >/dev/null; then
	fail report_calls_perf "perf is not installed (make deps)"
elif ! perf trace -s -o "$GT_TMP/perf.trace.txt" -- "$GTCTL" record --syscalls=all -o "$A" -- \
	"$WL/fsyncloop" 40 >"$GT_TMP/all.out" 2>"$GT_TMP/all.err"; then
	fail report_calls_perf "perf trace -s -- gotracectl record --syscalls=all failed: $(tail -3 "$GT_TMP/all.err")"
elif gt_valid report_calls_perf "$A"; then
	if out=$(python3 - "$GTCTL" "$A" "$GT_TMP/perf.trace.txt" "$GT_TMP/all.out" <<'PY'
import json, re, subprocess, sys
ctl, trace, ptxt, wout = sys.argv[1:5]
rep = json.loads(subprocess.run([ctl, "report", "--json", trace], capture_output=True, text=True,
                                check=True).stdout)
t = [t for t in rep["threads"] if t["name"] == "syncer"]
if len(t) != 1:
    sys.exit("%d syncer threads in the report" % len(t))
ours = {s["name"]: s for s in t[0]["syscalls"]}
# perf trace -s: " syncer (TID), N events ..." then a table of
# "   name   calls  errors  total  min  avg  max  stddev" rows
perf, inside = {}, False
for line in open(ptxt):
    if re.match(r"\s*\S+ \(\d+\), \d+ events", line):
        inside = line.split()[0] == "syncer"
    elif inside:
        m = re.match(r"\s+([a-z_0-9]+)\s+(\d+)\s+\d+\s+[\d.]+", line)
        if m:
            perf[m.group(1)] = int(m.group(2))
if not perf:
    sys.exit("perf trace -s shows no syncer thread")
calls = {l.split()[1]: int(l.split()[2]) for l in open(wout) if l.startswith("calls ")}
errs, notes = [], []
# pread64: glibc's wrapper is named pread, the kernel's call pread64
for name in ("fsync", "clock_nanosleep", "write", "pread64"):
    got, want = ours.get(name, {}).get("calls", 0), perf.get(name, 0)
    notes.append("%s %d/%d" % (name, got, want))
    if abs(got - want) > max(1, want * 0.02):
        errs.append("%s: report counts %d calls, perf trace -s %d" % (name, got, want))
if ours.get("fsync", {}).get("calls") != calls.get("fsync"):
    errs.append("fsync: report counts %s, the program made %s" % (ours.get("fsync", {}).get("calls"), calls.get("fsync")))
# (the dynamic loader's own preads at start come on top of the program's)
if ours.get("pread64", {}).get("calls", 0) < calls.get("read", 1):
    errs.append("pread64: report counts %s, the program made %s" % (ours.get("pread64", {}).get("calls"), calls.get("read")))
f = ours.get("fsync")
if f and f["total_ns"] < f["blocked_ns"] * 0.98:
    errs.append("fsync lasted %d ns in all but was blocked %d ns" % (f["total_ns"], f["blocked_ns"]))
print("ours/perf: " + ", ".join(notes))
sys.exit("; ".join(errs) if errs else 0)
PY
	); then
		ok report_calls_perf
		echo "# $out"
	else
		fail report_calls_perf "report's syscall counts are not perf trace's calls"
		echo "$out" | detail
	fi
fi
gt_finish
