#!/usr/bin/env bash
# record_loopback.sh: who woke whom over 127.0.0.1, against perf.
# haproxy (2 threads) in front of nginx (1 worker), both on loopback ports,
# loaded by wrk, recorded by -p of both; `perf sched record -a` runs inside
# that recording, around the whole load.  A packet sent to 127.0.0.1 is
# received by the NET_RX softirq in the sender's own context, inside its
# send; the receiver's wakeup is the sender's, and perf sched timehist -w
# names it so.
#  - loopback_backend: nginx's worker is woken by haproxy's threads: for
#    >= 99% of its wakeups the trace names the same haproxy thread as perf
#    (a frame [loopback] on top of its stack; today all are G 0 [softirq]).
#    Repaired lost wakeups (G 0, no stack, at most 3%) are left out.
#  - loopback_frontend: haproxy's threads, woken by nginx's replies (the
#    sender named) and by wrk's requests (wrk is not recorded: G 0 with one
#    frame [loopback], never a recorded thread): >= 99% agree with perf,
#    perf's wakers outside the recorded processes counted as G 0 [loopback]
#    (or G 0 naming that sender: below).
#  - loopback_sender: haproxy's wakeups by wrk's requests (wrk not
#    recorded, but root's session may see it) are G 0's with one frame
#    naming the sender as perf does, "[loopback from wrk PID/TID]": >= 95%
#    of perf's wakeups of haproxy's threads by wrk name the same wrk thread
#    (a packet received in wrk's softirq that another sender sent earlier
#    stays [loopback]: perf names whoever is current).
# No timed assertion: the load is whatever the machine manages.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

gt_expect loopback_backend loopback_frontend loopback_sender
gt_require_bpf loopback_backend loopback_frontend loopback_sender
WAKERS="python3 tests/integration/wakers.py"

both() {
	fail loopback_backend "$1"
	fail loopback_frontend "$1"
	fail loopback_sender "$1"
	gt_finish
}
for t in haproxy nginx wrk perf; do
	command -v "$t" >/dev/null || both "$t is not installed (tests/deps.sh installs it)"
done

DIR=$GT_TMP/lo
. tests/lib/proxy_chain.sh
gt_proxy_chain "$DIR"; up=$?
gt_pids+=("${PROXY_PIDS[@]}")
[ "$up" = 0 ] ||
	both "haproxy -> nginx did not answer: $(tail -3 "$DIR/error.log" "$DIR/haproxy.log")"

T=$GT_TMP/lo.trace
gt_record_bg lo -p "$MASTER,$WORKER,$HAP" -o "$T" ||
	both "gotracectl record exited at start: $(tail -3 "$GT_TMP/lo.rec.err")"
. tests/lib/perf_sched.sh
gt_perf_sched_start "$GT_TMP/perf.data"; up=$?
gt_pids+=("$PERF")
[ "$up" = 0 ] || both "perf sched record did not start: $(tail -3 "$GT_TMP/perf.data.out")"
timeout 60 wrk -t1 -c4 -d2s "http://127.0.0.1:$FPORT/" >"$GT_TMP/wrk.out" 2>&1
gt_perf_sched_stop
gt_stop_record INT
perf sched timehist -w -i "$GT_TMP/perf.data" >"$GT_TMP/timehist" 2>/dev/null ||
	both "perf sched timehist failed"

if ! gt_valid loopback_backend "$T"; then
	fail loopback_frontend "no valid trace"
	fail loopback_sender "no valid trace"
	gt_finish
fi
if out=$($WAKERS perf "$T" "$GT_TMP/timehist" "$WORKER" 99 "$MASTER,$WORKER,$HAP"); then
	ok loopback_backend
else
	fail loopback_backend "the trace's wakers of nginx's worker differ from perf's"
	echo "$out" | detail
fi
bad=
for tid in $(ls "/proc/$HAP/task"); do
	out=$($WAKERS perf "$T" "$GT_TMP/timehist" "$tid" 99 "$MASTER,$WORKER,$HAP") || bad+="$out"$'\n'
done
if [ -z "$bad" ]; then
	ok loopback_frontend
else
	fail loopback_frontend "the trace's wakers of haproxy's threads differ from perf's"
	echo "$bad" | detail
fi
tids=$(ls "/proc/$HAP/task" | paste -sd,)
if out=$($WAKERS named "$T" "$GT_TMP/timehist" "$tids" wrk 95); then
	ok loopback_sender
	echo "$out" | head -1
else
	fail loopback_sender "haproxy's wakeups by wrk do not name it as perf does"
	echo "$out" | detail
fi
gt_finish
