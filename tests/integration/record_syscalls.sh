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
#    says what COUNT counts, next to the table.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

gt_expect report_fsync report_counts_told
gt_require_bpf report_fsync report_counts_told

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
print(sum(s["count"] for s in t[0]["syscalls"] if s["name"] == "fsync") if t else -1)' "$GT_TMP/fs.json")
	"$GTCTL" report "$T" >"$GT_TMP/fs.txt" 2>&1
	if [ "$n" = 40 ] || grep -q "a call that blocks N times counts N" "$GT_TMP/fs.txt"; then
		ok report_counts_told
	else
		fail report_counts_told "report counts $n fsync calls (the program made 40) and does not say why"
	fi
fi
gt_finish
