#!/usr/bin/env bash
# record_fidelity.sh: records the workloads with `gotracectl record -p` and
# holds each trace to Go's reader, to our checker, and to ground truth kept
# outside the tracer (/proc and the workloads' own counts).
#
# The recording window: each workload parks every thread (barriers, a read
# on stdin) before and after its measured work.  Once every thread sleeps
# we read /proc, attach the recorder and wait until its session has
# started, send the go byte, wait for `done` and for every thread to sleep
# again, stop the recorder (SIGINT), read /proc again, and only then let
# the workload exit.  So the threads do nothing between a /proc read and
# the recorder's edge, and:
#  - context switches: the trace's GoStart count per thread equals the
#    kernel's Δ(voluntary + nonvoluntary switches); tolerance 3 + 2% per
#    thread, for a switch the kernel may do around the edges (a parked
#    thread settling into its barrier, the go byte's wakeup racing attach).
#  - why: voluntary switches = blocks (sync, sleep, select, net, syscall,
#    block) and nonvoluntary = preempt + sched, per thread, same tolerance.
#  - on-CPU time: trace running_ns vs Δ schedstat field 1; tolerance
#    5 ms + 10%, because the trace measures from sched_switch to
#    sched_switch while the kernel accounts exec time at its own update
#    points, and each switch adds a few microseconds of difference.
#  - ping-pong (strict: one CPU, SCHED_FIFO): each thread is woken N times
#    by the other (unblocks_received in [N, N+3]: the barriers add up to
#    three); it blocks N times, or N-1 if the first message was already
#    there when it first waited (who leaves the start barrier first is up
#    to the scheduler).
#  - sleeps: N nanosleeps -> N sleep blocks; blocking pipe reads -> sync
#    blocks, GoBlockRecv, which the writer's GoUnblock ends (N on an idle machine; fewer when the reader falls behind the
#    feeder, which the exact check above covers); the mutex workload's
#    stacks name its own functions and its threads group by name on the
#    viewer's Goroutines page.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

CASES="fidelity_ppfutex fidelity_ppsocket fidelity_mutex fidelity_sleeper fidelity_blockread fidelity_spin"
gt_require_bpf $CASES
# shellcheck disable=SC2086
gt_expect $CASES

# record_window TAG CMD...: the protocol above; leaves $GT_TMP/TAG.trace,
# TAG.before and TAG.after.  Returns 1 (after a FAIL line) if it broke.
record_window() {
	local tag=$1 rc
	shift
	if ! gt_start_workload "$tag" "$@"; then
		fail "fidelity_$tag" "workload $1 did not start"
		return 1
	fi
	if ! gt_wait_parked "$WL_PID"; then
		fail "fidelity_$tag" "the workload's threads never all slept before the work"
		gt_leave "$tag"; gt_leave "$tag"
		return 1
	fi
	$TRUTH snap "$WL_PID" "$GT_TMP/$tag.before"
	if ! gt_record_bg "$tag" -p "$WL_PID" -o "$GT_TMP/$tag.trace"; then
		fail "fidelity_$tag" "gotracectl record -p $WL_PID did not start: $(tail -5 "$GT_TMP/$tag.rec.err")"
		gt_leave "$tag"; gt_leave "$tag"
		return 1
	fi
	gt_go "$tag"
	if ! gt_wait_line "$tag" '^done' 60; then
		fail "fidelity_$tag" "workload did not finish its work in 60 s"
		return 1
	fi
	if ! gt_wait_parked "$WL_PID"; then
		fail "fidelity_$tag" "the workload's threads never all slept after the work"
		return 1
	fi
	gt_stop_record INT
	rc=$?
	$TRUTH snap "$WL_PID" "$GT_TMP/$tag.after"
	gt_leave "$tag"
	wait "$WL_PID"
	if [ "$rc" != 0 ]; then
		fail "fidelity_$tag" "gotracectl record exited $rc after SIGINT: $(tail -5 "$GT_TMP/$tag.rec.err")"
		return 1
	fi
	gt_valid "fidelity_$tag" "$GT_TMP/$tag.trace" || return 1
	# Lost kernel events make every comparison below meaningless: say so.
	if ! grep -qE 'recorded .* 0 dropped' "$GT_TMP/$tag.rec.err"; then
		fail "fidelity_$tag" "events were dropped: $(grep -m1 recorded "$GT_TMP/$tag.rec.err")"
		return 1
	fi
}

# check_threads TAG: switches and on-CPU time of every workload thread.
check_threads() {
	local tag=$1 tids
	tids=$(gt_tids "$tag")
	gt_truth "fidelity_$tag" switches "$GT_TMP/$tag.before" "$GT_TMP/$tag.after" \
		"$GT_TMP/$tag.trace.json" "$tids" 3 0.02 &&
	gt_truth "fidelity_$tag" kinds "$GT_TMP/$tag.before" "$GT_TMP/$tag.after" \
		"$GT_TMP/$tag.trace.json" "$tids" 3 0.02 &&
	gt_truth "fidelity_$tag" oncpu "$GT_TMP/$tag.before" "$GT_TMP/$tag.after" \
		"$GT_TMP/$tag.trace.json" "$tids" 5 0.10
}

N=5000   # strict ping-pong: ~14 kernel events per round trip on one CPU
# Over a futex word each wakeup is a GoUnblock of a sync block; over a
# socketpair, of a net block.  (Over pipes, of a GoBlockRecv after the
# read's GoSysCall: record_wakeups.sh checks who wakes those.)
for mode in futex socket; do
	kind=sync; [ $mode = socket ] && kind=net
	if record_window pp$mode "$WL/pingpong" --wait $N strict $mode && check_threads pp$mode &&
		gt_truth fidelity_pp$mode unblocks "$GT_TMP/pp$mode.trace.json" ping $N $((N + 3)) &&
		gt_truth fidelity_pp$mode unblocks "$GT_TMP/pp$mode.trace.json" pong $N $((N + 3)) &&
		gt_truth fidelity_pp$mode blocks "$GT_TMP/pp$mode.trace.json" ping $kind $((N - 1)) $((N + 3)) &&
		gt_truth fidelity_pp$mode blocks "$GT_TMP/pp$mode.trace.json" pong $kind $((N - 1)) $((N + 3)); then
		ok fidelity_pp$mode
	fi
done

if record_window mutex "$WL/mutex" --wait 4 5000 && check_threads mutex &&
	gt_truth fidelity_mutex names "$GT_TMP/mutex.trace.json" mutex-0 mutex-1 mutex-2 mutex-3 wl-mutex &&
	gt_truth fidelity_mutex blocks "$GT_TMP/mutex.trace.json" mutex-0 sync 1 1000000; then
	if ! gt_viewer_pages "$GT_TMP/mutex.trace"; then
		fail fidelity_mutex "could not fetch the viewer's pages: $(tail -3 "$GT_TMP/mutex.trace.viewer.log")"
	elif gt_truth fidelity_mutex frames "$GT_TMP/mutex.trace.jsontrace" contend_on_mutex worker &&
		gt_truth fidelity_mutex groups "$GT_TMP/mutex.trace.goroutines.html" mutex-0 mutex-1 mutex-2 mutex-3; then
		ok fidelity_mutex
	fi
fi

S=200
if record_window sleeper "$WL/sleeper" --wait $S 1000 && check_threads sleeper &&
	gt_truth fidelity_sleeper blocks "$GT_TMP/sleeper.trace.json" sleeper sleep $S $((S + 1)); then
	ok fidelity_sleeper
fi

R=100
if record_window blockread "$WL/blockread" --wait $R 2000 && check_threads blockread &&
	gt_truth fidelity_blockread blocks "$GT_TMP/blockread.trace.json" reader sync $((R / 2)) $((R + 2)) &&
	gt_truth fidelity_blockread blocks "$GT_TMP/blockread.trace.json" feeder sleep $R $((R + 1)); then
	ok fidelity_blockread
fi

# Four spinners on two CPUs for 400 ms: the scheduler must preempt them.
if record_window spin "$WL/spin" --wait 4 400 && check_threads spin &&
	gt_truth fidelity_spin blocks "$GT_TMP/spin.trace.json" spin-0 preempt 1 1000000; then
	ok fidelity_spin
fi

gt_finish
