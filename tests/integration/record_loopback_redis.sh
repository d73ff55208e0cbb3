#!/usr/bin/env bash
# record_loopback_redis.sh: who woke whom over 127.0.0.1, a second pair:
# redis-benchmark driving redis-server, both recorded (-n of each: the
# benchmark joins when it execs), with `perf sched record -a` around the
# load.  Each request is received by the NET_RX softirq in the
# benchmark's own context, inside its send: redis's main thread is woken
# by the benchmark, and perf sched timehist -w names it so.
#  - loopback_redis: for >= 99% of the wakeups of redis's main thread the
#    trace names the same thread as perf (the benchmark's, with [loopback]
#    on top of its stack; perf's wakers outside the two processes must be
#    ours G 0 [loopback]); repaired lost wakeups (at most 3%) left out.
#  - runq_vs_perf: the benchmark's thread from its first start in the
#    trace on (perf records on the trace's clock, -k mono): report's
#    wakeup delay max = perf sched timehist's sch delay max within 1%, and
#    its run-queue latency histogram = runqlat's computed from the same
#    perf.data, within 1% of the waits at each slot's edge once each
#    wait may move by the 1 us the two tools' clock readings differ
#    (runq_vs_perf.py and docs/testing.md say how and why).
# No timed assertion: the load is whatever the machine manages.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

gt_expect loopback_redis runq_vs_perf
gt_require_bpf loopback_redis
for t in redis-server redis-benchmark redis-cli perf; do
	if ! command -v "$t" >/dev/null; then
		fail loopback_redis "$t is not installed (tests/deps.sh installs it)"
		gt_finish
	fi
done

. tests/lib/redis.sh
gt_redis_start "$GT_TMP"; up=$?
gt_pids+=("$RPID")
if [ "$up" != 0 ]; then
	fail loopback_redis "redis-server did not start: $(tail -3 "$GT_TMP/redis.log")"
	gt_finish
fi

T=$GT_TMP/lr.trace
if ! gt_record_bg lr -n redis-server -n redis-benchmark --wait -o "$T"; then
	fail loopback_redis "gotracectl record exited at start: $(tail -3 "$GT_TMP/lr.rec.err")"
	gt_finish
fi
# -m 16M a CPU: with perf's default buffer it lost up to 502 switch-ins of
# a run on a busy machine, and timehist's maximum then missed the worst wait
perf sched record -m 16M -k mono -a -q -e sched:sched_wakeup -o "$GT_TMP/perf.data" -- sleep 600 >"$GT_TMP/perf.out" 2>&1 &
PERF=$!
gt_pids+=("$PERF")
for _ in $(seq 1 1200); do
	SLEEP=$(pgrep -P "$PERF" -x sleep) && break
	sleep 0.05
done
if [ -z "$SLEEP" ]; then
	fail loopback_redis "perf sched record did not start: $(tail -3 "$GT_TMP/perf.out")"
	gt_finish
fi
# its own pid is one of the two recorded processes: no `timeout` between
redis-benchmark -p "$RPORT" -q -n 5000 -c 4 -t set,get >"$GT_TMP/bench.out" 2>&1 &
BPID=$!
(sleep 120; kill "$BPID" 2>/dev/null) &
WATCH=$!
wait "$BPID"; brc=$?
kill "$WATCH" 2>/dev/null
# the recording stops before perf has written its file (which took 190 s
# in one loaded run, while the trace went on collecting redis's timer
# wakeups that perf had stopped seeing)
kill "$SLEEP"
gt_stop_record INT
wait "$PERF"
redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
if [ "$brc" != 0 ]; then
	fail loopback_redis "redis-benchmark failed: $(tail -3 "$GT_TMP/bench.out")"
elif ! perf sched timehist -w -i "$GT_TMP/perf.data" >"$GT_TMP/timehist" 2>/dev/null; then
	fail loopback_redis "perf sched timehist failed"
elif gt_valid loopback_redis "$T"; then
	if out=$(python3 tests/integration/wakers.py perf "$T" "$GT_TMP/timehist" "$RPID" 99 "$RPID,$BPID"); then
		ok loopback_redis
		echo "$out" | sed 's/^/# /' | tail -5
	else
		fail loopback_redis "the trace's wakers of redis's main thread differ from perf's"
		echo "$out" | detail
	fi
	# the same recording, the benchmark's thread: report's wakeup delay
	# max = timehist's sch delay max, its run-queue latency histogram =
	# runqlat's, from the same perf.data (which has sched_wakeup too, for
	# the figure of how runqlat's own stamp moves the wakeups)
	if out=$(python3 tests/integration/runq_vs_perf.py "$GTCTL" "$T" "$GT_TMP/perf.data" "$BPID" redis-benchmark 2>&1); then
		ok runq_vs_perf
		echo "$out" | sed 's/^/# /'
	else
		fail runq_vs_perf "report's delays differ from perf sched timehist's or runqlat's"
		echo "$out" | detail
	fi
else
	fail runq_vs_perf "no recording to compare (above)"
fi
gt_finish
