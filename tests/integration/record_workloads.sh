#!/usr/bin/env bash
# record_workloads.sh: the workloads the recording tests trace must do what
# they claim, checked against /proc alone (no tracer involved), so that a
# fidelity failure points at the tracer and not at the workload.  Uses the
# same --wait protocol: /proc read while parked, go, done, /proc read.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

gt_expect workload_pingpong_pipe workload_pingpong_socket workload_pingpong_futex \
	workload_sleeper workload_blockread workload_spin workload_mutex
if [ ! -x "$WL/pingpong" ]; then
	fail workloads_built "workloads not built in $WL (make BUILD=$GT_BUILD tests)"
	gt_finish
fi

# window TAG CMD...: before/after /proc snapshots around the measured work,
# each taken once every thread is parked (not after a pause that a busy
# machine may outlast).
window() {
	local tag=$1
	shift
	gt_start_workload "$tag" "$@" || return 1
	gt_wait_parked "$WL_PID" || { echo "threads never parked before the work" >>"$GT_TMP/$tag.err"; return 1; }
	$TRUTH snap "$WL_PID" "$GT_TMP/$tag.before"
	gt_go "$tag"
	gt_wait_line "$tag" '^done' 60 || { echo "no done line in 60 s" >>"$GT_TMP/$tag.err"; return 1; }
	gt_wait_parked "$WL_PID" || { echo "threads never parked after the work" >>"$GT_TMP/$tag.err"; return 1; }
	$TRUTH snap "$WL_PID" "$GT_TMP/$tag.after"
	gt_leave "$tag"
	wait "$WL_PID"
}

# delta TAG NAME FIELD: Δ of a /proc field for the thread named NAME.
delta() {
	python3 - "$GT_TMP/$1.before" "$GT_TMP/$1.after" "$2" "$3" <<'PY'
import json, sys
b, a = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
tid = [t for t, v in a.items() if v["comm"] == sys.argv[3]][0]
print(a[tid][sys.argv[4]] - b[tid][sys.argv[4]])
PY
}

# expect CASE WHAT VALUE LO HI
expect() {
	if [ "$3" -ge "$4" ] && [ "$3" -le "$5" ]; then return 0; fi
	fail "$1" "$2 is $3, want $4..$5"
	return 1
}

N=5000
for mode in pipe socket futex; do
	if window pp$mode "$WL/pingpong" --wait $N strict $mode; then
		expect workload_pingpong_$mode "ping voluntary switches" "$(delta pp$mode ping vol)" $N $((N + 3)) &&
		expect workload_pingpong_$mode "pong voluntary switches" "$(delta pp$mode pong vol)" $N $((N + 3)) &&
		ok workload_pingpong_$mode
	else
		fail workload_pingpong_$mode "did not run: $(cat "$GT_TMP/pp$mode.err")"
	fi
done

S=100
if window sleeper "$WL/sleeper" --wait $S 500; then
	expect workload_sleeper "sleeper voluntary switches" "$(delta sleeper sleeper vol)" $S $((S + 2)) &&
	ok workload_sleeper
else
	fail workload_sleeper "did not run: $(cat "$GT_TMP/sleeper.err")"
fi

R=50
if window blockread "$WL/blockread" --wait $R 1000; then
	expect workload_blockread "reader voluntary switches" "$(delta blockread reader vol)" $((R - 2)) $((R + 2)) &&
	ok workload_blockread
else
	fail workload_blockread "did not run: $(cat "$GT_TMP/blockread.err")"
fi

# More spinners than CPUs: each must be preempted at least once.
ncpu=$(nproc)
if window spin "$WL/spin" --wait $((ncpu * 2)) 300; then
	expect workload_spin "spin-0 nonvoluntary switches" "$(delta spin spin-0 nonvol)" 1 1000000 &&
	expect workload_spin "spin-0 on-CPU ms" $(( $(delta spin spin-0 run_ns) / 1000000 )) 1 300 &&
	ok workload_spin
else
	fail workload_spin "did not run: $(cat "$GT_TMP/spin.err")"
fi

# The workload forces each thread to block on the mutex `forced` times.
if window mutex "$WL/mutex" --wait 4 5000; then
	forced=$(sed -n 's/^forced //p' "$GT_TMP/mutex.out")
	if [ -z "$forced" ]; then
		fail workload_mutex "the workload printed no 'forced N' line"
	else
		expect workload_mutex "mutex-0 voluntary switches" "$(delta mutex mutex-0 vol)" "$forced" 1000000 &&
		ok workload_mutex
	fi
else
	fail workload_mutex "did not run: $(cat "$GT_TMP/mutex.err")"
fi

gt_finish
