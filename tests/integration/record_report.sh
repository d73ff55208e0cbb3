#!/usr/bin/env bash
# record_report.sh: `gotracectl report` checked from outside.
#
#  1. On Go's own traces (1.7 to 1.19, from $(go env GOROOT)): report --json
#     equals the figures report_check.py computes from `go tool trace -d`.
#  2. On recordings of pingpong (pipe, socket, futex; go 1.19 and 1.11
#     traces): the same check.  On the strict one (both threads on one CPU,
#     FIFO) also the delays against `perf sched latency`, which recorded the
#     same run: both see the same sched_waking/sched_switch events but count
#     differently.  We count every runnable -> running (GoCreate, GoUnblock,
#     GoSysExit, preemption: 2000 per thread here); perf pairs a wakeup only
#     with a task it saw go to sleep, plus preemptions, and on this kernel
#     pairs few (it reported 1 "switch" for a thread that ran 2000 times;
#     not investigated further).  So: perf's max per thread is at most ours,
#     and the worst delay of the run (a long stall both see) agrees within
#     1% + 20us.
#  3. --folded lines are `thread;...;leaf COUNT` and add up to the JSON's
#     off-CPU time, or its CPU samples (a CPU-bound workload's hot leaf
#     first); a window after the trace's end counts nothing.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

testdata=$(go env GOROOT)/src/internal/trace/testdata
go_traces=$(ls "$testdata"/*_1_{7,9,10,11,19}_good 2>/dev/null)
if [ -z "$go_traces" ]; then
	fail report_go_traces "no Go testdata traces under $testdata"
else
	# shellcheck disable=SC2086
	python3 tests/integration/report_check.py "$GTCTL" $go_traces || gt_failures=$((gt_failures + 1))
fi

gt_require_bpf report_pingpong report_pingpong_socket report_pingpong_futex report_perf report_folded report_folded_cpu report_window report_thread
t=$GT_TMP/pp.trace
if ! command -v perf >/dev/null; then
	fail report_perf "perf is not installed (make deps)"
	gt_finish
fi
if ! timeout 120 perf sched record -q -o "$GT_TMP/perf.data" -- \
	"$GTCTL" record -o "$t" -- "$WL/pingpong" 2000 strict pipe >"$GT_TMP/pp.out" 2>"$GT_TMP/pp.err"; then
	fail report_pingpong "perf sched record + gotracectl record failed: $(tail -3 "$GT_TMP/pp.err")"
	gt_finish
fi
gt_valid report_pingpong "$t" || gt_finish
if python3 tests/integration/report_check.py "$GTCTL" "$t" >"$GT_TMP/check.out"; then
	ok report_pingpong
else
	fail report_pingpong "report --json disagrees with go tool trace -d"
	detail <"$GT_TMP/check.out"
fi

# the other ways pingpong blocks (socket: net; futex: sync), and the 1.11 format
for v in "socket 1.11" "futex 1.19"; do
	set -- $v
	f=$GT_TMP/pp_$1.trace
	if ! "$GTCTL" record --go-version "$2" -o "$f" -- "$WL/pingpong" 500 "$1" >/dev/null 2>"$GT_TMP/pp_$1.err"; then
		fail "report_pingpong_$1" "record failed: $(tail -3 "$GT_TMP/pp_$1.err")"
	elif python3 tests/integration/report_check.py "$GTCTL" "$f" >"$GT_TMP/check_$1.out"; then
		ok "report_pingpong_$1"
	else
		fail "report_pingpong_$1" "report --json disagrees with go tool trace -d (go $2 trace)"
		detail <"$GT_TMP/check_$1.out"
	fi
done

"$GTCTL" report --json "$t" >"$GT_TMP/rep.json" || fail report_json "report --json failed"
perf sched latency --pids -i "$GT_TMP/perf.data" 2>/dev/null >"$GT_TMP/perf.lat"
pid=$(awk '$1 == "pid" { print $2 }' "$GT_TMP/pp.out")
if out=$(python3 - "$GT_TMP/rep.json" "$GT_TMP/perf.lat" "$pid" 2>&1 <<'PY'
import json, re, sys
rep = json.load(open(sys.argv[1]))
ours = {t["tid"]: t["sched"] for t in rep["threads"] if t["tid"] is not None}
perf = {}
for line in open(sys.argv[2]):
    m = re.match(r"\s*(\S+):(\d+)\s*\|.*max:\s*([\d.]+) ms", line)
    if m and int(m.group(2)) in ours:
        perf[int(m.group(2))] = float(m.group(3)) * 1e6
if len(perf) < 3:
    sys.exit("perf sched latency lists %d of the workload's threads (want 3): %s" % (len(perf), sorted(perf)))
tol = lambda v: v * 0.01 + 20000
for tid, pmax in perf.items():
    if pmax > ours[tid]["max_ns"] + tol(pmax):
        sys.exit("tid %d: perf max delay %.0f ns above ours %d" % (tid, pmax, ours[tid]["max_ns"]))
pw, ow = max(perf.values()), max(ours[t]["max_ns"] for t in perf)
if abs(pw - ow) > tol(pw):
    sys.exit("worst delay: perf %.0f ns, ours %d ns (tolerance 1%% + 20us)" % (pw, ow))
print("worst delay: perf %.0f ns, ours %d ns" % (pw, ow))
PY
); then
	ok "report_perf ($out)"
else
	fail report_perf "$out"
fi

# folded off-CPU stacks: root = thread name, and they sum to the JSON total
"$GTCTL" report --folded=offcpu "$t" >"$GT_TMP/off.folded" || fail report_folded "--folded=offcpu failed"
if out=$(python3 - "$GT_TMP/rep.json" "$GT_TMP/off.folded" 2>&1 <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
names = {t["name"] for t in rep["threads"]}
total_us = sum(sum(t["offcpu_ns"].values()) for t in rep["threads"]) / 1000
lines = open(sys.argv[2]).read().splitlines()
if not lines:
    sys.exit("no folded lines")
s = 0
for l in lines:
    stack, _, n = l.rpartition(" ")
    if not n.isdigit() or stack.split(";")[0] not in names:
        sys.exit("bad folded line: %r" % l)
    s += int(n)
# each line is rounded to a microsecond
if abs(s - total_us) > len(lines):
    sys.exit("folded total %d us, JSON off-CPU total %.0f us" % (s, total_us))
# ping blocks in read(): its off-CPU stacks are there, below its name (the
# frames' names depend on symbolization, which is not what this checks)
if not any(l.startswith("ping;") and l.count(";") >= 2 for l in lines):
    sys.exit("no ping stack of 2 frames or more in the folded lines")
PY
); then
	ok report_folded
else
	fail report_folded "$out"
fi

# folded CPU samples: a thread spinning in cpu_hot_spin is mostly that leaf,
# and the lines add up to the samples the JSON counts
c=$GT_TMP/cpu.trace
if "$GTCTL" record --cpu-profile=499 -o "$c" -- "$WL/cpu_hot" >/dev/null 2>"$GT_TMP/cpu.err"; then
	"$GTCTL" report --folded=cpu "$c" >"$GT_TMP/cpu.folded"
	samples=$("$GTCTL" report --json "$c" | python3 -c 'import json,sys; print(json.load(sys.stdin)["cpu_samples"])')
	if out=$(awk -v want="$samples" '{ n = $NF; sum += n; if ($0 ~ /^cpu_hot;.*cpu_hot_spin /) hot += n }
		END { if (sum != want) { printf "folded lines sum to %d samples, JSON says %d", sum, want; exit 1 }
		      if (hot * 2 < sum) { printf "only %d of %d samples end in cpu_hot_spin", hot, sum; exit 1 }
		      printf "%d of %d samples in cpu_hot_spin", hot, sum }' "$GT_TMP/cpu.folded"); then
		ok "report_folded_cpu ($out)"
	else
		fail report_folded_cpu "$out"
	fi
else
	fail report_folded_cpu "record --cpu-profile cpu_hot failed: $(tail -3 "$GT_TMP/cpu.err")"
fi

# a window after the end holds nothing; --thread keeps only that thread
n=$("$GTCTL" report --json --since 1h "$t" | python3 -c 'import json,sys; print(sum(t["sched"]["count"] for t in json.load(sys.stdin)["threads"]))')
[ "$n" = 0 ] && ok report_window || fail report_window "--since 1h still counts $n delays"
n=$("$GTCTL" report --json --thread ping "$t" | python3 -c 'import json,sys; print(",".join(t["name"] for t in json.load(sys.stdin)["threads"]))')
[ "$n" = ping ] && ok report_thread || fail report_thread "--thread ping shows '$n'"
gt_finish
