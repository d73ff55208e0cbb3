#!/usr/bin/env bash
# record_redis.sh: a real program nobody here wrote.  Debian's redis-server
# on a random loopback port, recorded with `gotracectl record -p` while
# `redis-benchmark -q -n 20000` loads it.  The file must pass Go's reader and
# viewer and our checker; per thread, the trace's context switches and
# on-CPU time must match /proc; its threads (redis-server, bio_*) must be
# goroutines of those names, and the busy ones groups on the viewer's
# Goroutines page (it lists only goroutines that ran: idle bio_* don't).
#
# Window: the load is a bounded burst inside the recording, and /proc is
# read just before and after it while the server is otherwise idle: we
# attach and wait until the recorder's session has really started (its
# snapshot taken), read /proc, run the benchmark to its end, wait until
# redis has let go of all its clients, read /proc, stop.  So the trace
# covers the /proc window plus two idle edges.  redis runs with --hz 1 so
# that, idle, it wakes once a second: an edge may hold a switch or two.
# Tolerance 5 switches + 2% per thread, on-CPU 5 ms + 10%.
# (`-t set,get` keeps it to two runs of 20000 requests.)
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

CASES="redis_valid redis_switches redis_oncpu redis_names"
gt_require_bpf $CASES
# shellcheck disable=SC2086
gt_expect $CASES
for tool in redis-server redis-benchmark redis-cli; do
	if ! command -v $tool >/dev/null; then
		fail redis_valid "$tool not installed (apt-get install redis-server redis-tools)"
		gt_finish
	fi
done

. tests/lib/redis.sh
gt_redis_start "$GT_TMP"; up=$?
rpid=$RPID port=$RPORT
gt_pids+=("$rpid")
if [ "$up" != 0 ]; then
	fail redis_valid "redis-server did not start: $(tail -3 "$GT_TMP/redis.log")"
	gt_finish
fi
sleep 1.2   # let its background threads start and settle
tids=$(ls "/proc/$rpid/task" | paste -sd,)

# clients N: true when redis serves exactly N clients (redis-cli counts).
clients() {
	[ "$(redis-cli -p "$port" info clients 2>/dev/null | tr -d '\r' |
		sed -n 's/^connected_clients://p')" = "$1" ]
}

t=$GT_TMP/redis.trace
if ! gt_record_bg redis -p "$rpid" -o "$t"; then
	fail redis_valid "record -p $rpid did not start: $(tail -5 "$GT_TMP/redis.rec.err")"
	gt_finish
fi
$TRUTH snap "$rpid" "$GT_TMP/redis.before"
timeout 120 redis-benchmark -p "$port" -q -n 20000 -t set,get >"$GT_TMP/bench.out" 2>&1
brc=$?
# the benchmark's connections close as it exits; redis handles that in its
# own time: the burst ends once it serves only the asking client
for _ in $(seq 1 600); do clients 1 && break; sleep 0.1; done
$TRUTH snap "$rpid" "$GT_TMP/redis.after"
gt_stop_record INT; rc=$?
redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
wait "$rpid" 2>/dev/null

# not_checked WHY: the cases after redis_valid, when there is nothing to check.
not_checked() {
	local c
	for c in redis_switches redis_oncpu redis_names; do fail $c "not checked: $1"; done
}
if [ "$brc" != 0 ]; then
	fail redis_valid "redis-benchmark failed ($brc): $(tail -3 "$GT_TMP/bench.out")"
	not_checked "the benchmark failed"
elif [ "$rc" != 0 ]; then
	fail redis_valid "record exited $rc after SIGINT: $(tail -5 "$GT_TMP/redis.rec.err")"
	not_checked "the recording failed"
elif ! gt_valid redis_valid "$t"; then
	not_checked "no valid trace (see redis_valid)"
else
	ok redis_valid
	drops=$(sed -n 's/.* \([0-9]*\) dropped.*/\1/p' "$GT_TMP/redis.rec.err")
	if [ "${drops:-x}" != 0 ]; then
		fail redis_switches "the recording lost ${drops:-?} kernel events, so counts cannot match: $(grep -m1 recorded "$GT_TMP/redis.rec.err")"
	else gt_truth redis_switches switches "$GT_TMP/redis.before" "$GT_TMP/redis.after" "$t.json" "$tids" 5 0.02 &&
		gt_truth redis_switches kinds "$GT_TMP/redis.before" "$GT_TMP/redis.after" "$t.json" "$tids" 5 0.02 &&
		ok redis_switches
	fi
	if gt_truth redis_oncpu oncpu "$GT_TMP/redis.before" "$GT_TMP/redis.after" "$t.json" "$tids" 5 0.10; then
		ok redis_oncpu
	fi
	names=$(python3 -c 'import json, sys
print(" ".join(sorted({t["comm"] for t in json.load(open(sys.argv[1])).values()})))' "$GT_TMP/redis.after")
	# shellcheck disable=SC2086
	if ! gt_truth redis_names names "$t.json" redis-server bio_close_file $names; then
		:
	elif ! gt_viewer_pages "$t"; then
		fail redis_names "could not fetch the viewer's pages: $(tail -3 "$t.viewer.log")"
	elif gt_truth redis_names groups "$t.goroutines.html" redis-server; then
		ok redis_names
	fi
fi
gt_finish
