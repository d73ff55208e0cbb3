# perf_sched.sh, sourced: `perf sched record -a` around a load, machine-wide.
# gt_perf_sched_start FILE: starts it writing FILE (its output in
# FILE.out) with `sleep 600` as its workload, and returns once perf is
# recording (it enables its events before it lets its child exec: the
# sleep running means perf records).  Sets PERF (perf's pid, which the
# caller adds to gt_pids) and PERF_SLEEP; 1 if it did not start.
# PERF_K, an array, adds options to perf record (-k CLOCK_MONOTONIC).
# gt_perf_sched_stop: ends the sleep and waits for perf to write FILE.
gt_perf_sched_start() {
	perf sched record "${PERF_K[@]}" -a -q -o "$1" -- sleep 600 >"$1.out" 2>&1 &
	PERF=$! PERF_SLEEP=
	for _ in $(seq 1 1200); do
		PERF_SLEEP=$(pgrep -P "$PERF" -x sleep) && return 0
		sleep 0.05
	done
	return 1
}

gt_perf_sched_stop() {
	kill "$PERF_SLEEP"
	wait "$PERF"
}
