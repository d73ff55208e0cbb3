#!/usr/bin/env bash
# record_wakeups.sh: who woke whom, as the real kernel did it.
#  - wakeups_demo: the demo workload (tests/workloads/demo.c) prints, per
#    thread, how many calls it made that can wake another thread (pipe
#    writes and closes, mutex unlocks, plus its exit).  No goroutine may be
#    credited with more wakeups than that: the spinners, the sleeper and
#    the reader wake no one, whatever interrupts land while they run.  The
#    sleeper's naps end by its timer: each such wakeup is G 0's, with the
#    frame "[timer interrupt]" (or, for a few, none: on a loaded machine
#    the stream now and then lacks a wakeup, which the translator repairs
#    at the switch-in, as G 0's; never a task's).
#  - wakeups_pipe: pingpong over pipes, strict (one CPU, SCHED_FIFO: every
#    round trip is exactly one sleep in read() and one wakeup per thread).
#    Each of pong's pipe-read wakeups names ping, and each of ping's names
#    pong, though both sleep inside read(), a generic syscall: N each, or
#    N-1 when a thread was already asleep in read() as recording began
#    (that wakeup ends its GoWaiting, not a GoBlockRecv).
# wakers.py reads the file itself: the waker of a GoUnblock is the
# goroutine running on its P.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

gt_require_bpf wakeups_demo wakeups_pipe
gt_expect wakeups_demo wakeups_pipe
WAKERS="python3 tests/integration/wakers.py"

# wakers NAME ARGS...: runs a wakers.py check; on mismatch fails NAME with
# its lines (and the whole waker table) as detail.
wakers() {
	local name=$1 out
	shift
	if out=$($WAKERS "$@" 2>&1); then
		[ -n "${GT_VERBOSE:-}" ] && echo "$out"
		return 0
	fi
	fail "$name" "wakeups mismatch ($1)"
	{ echo "$out"; echo "who woke whom:"; $WAKERS table "$2" | head -20; } | detail
	return 1
}

# The demo, recorded from its first instruction as `make demo` does.
T=$GT_TMP/demo.trace
if ! "$GTCTL" record -o "$T" -- "$WL/demo" 2 >"$GT_TMP/demo.out" 2>"$GT_TMP/demo.rec.err"; then
	fail wakeups_demo "gotracectl record -- demo failed: $(tail -3 "$GT_TMP/demo.rec.err")"
elif ! grep -q '^wakes spinner-0 ' "$GT_TMP/demo.out"; then
	fail wakeups_demo "the demo printed no wakes lines: $(tail -3 "$GT_TMP/demo.out")"
elif gt_valid wakeups_demo "$T" &&
	wakers wakeups_demo bounds "$T" "$GT_TMP/demo.out" &&
	wakers wakeups_demo ends "$T" sleeper GoSleep "G0 [timer interrupt]" 10 1000000 5; then
	[ -n "${GT_VERBOSE:-}" ] && $WAKERS table "$T"
	ok wakeups_demo
fi

# pingpong N strict pipe, recorded with -p around its measured loop.
N=2000
if ! gt_start_workload pp "$WL/pingpong" --wait $N strict pipe; then
	fail wakeups_pipe "workload pingpong did not start"
elif ! gt_record_bg pp -p "$WL_PID" -o "$GT_TMP/pp.trace"; then
	fail wakeups_pipe "gotracectl record -p $WL_PID exited at start: $(head -5 "$GT_TMP/pp.rec.err")"
	gt_leave pp; gt_leave pp
else
	gt_go pp
	gt_wait_line pp '^done' 60 || fail wakeups_pipe "workload did not finish its work in 60 s"
	gt_stop_record INT
	gt_leave pp
	wait "$WL_PID"
	if gt_valid wakeups_pipe "$GT_TMP/pp.trace" &&
		wakers wakeups_pipe ends "$GT_TMP/pp.trace" pong GoBlockRecv ping $((N - 1)) $((N + 3)) &&
		wakers wakeups_pipe ends "$GT_TMP/pp.trace" ping GoBlockRecv pong $((N - 1)) $((N + 3)); then
		ok wakeups_pipe
	fi
fi

gt_finish
