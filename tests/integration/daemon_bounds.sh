#!/usr/bin/env bash
# daemon_bounds.sh: what one request may cost the daemon is bounded.
# A RECORD naming one PID 1024 times attached
# its malloc probes 1024 times (19 124 descriptors, then a daemon stuck for
# minutes tearing them down); a session asking for probes in more processes
# than the daemon allows is refused with the limit named; a CPU profile rate
# the CLI would refuse is refused by the daemon too.  After each, the
# daemon's descriptors return to where they were.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

PROTO="python3 tests/integration/daemon_proto.py"

gt_require_daemon daemon_bounds
gt_expect bounds_repeated_pid bounds_probed_processes bounds_cli_cpu_rate \
	bounds_sequential_sessions bounds_daemon_serves
gt_start_daemon

fds() { ls "/proc/$DAEMON_PID/fd" | wc -l; }

# fds_settle MAX: waits until the daemon holds at most MAX descriptors
# (60 s: closing ~75 uprobe links takes seconds on a busy machine).
fds_settle() {
	local i
	for i in $(seq 1 600); do
		[ "$(fds)" -le "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

"$WL/malloc_loop" 1000000000 >"$GT_TMP/alloc.out" 2>&1 &
ALLOC=$!
gt_pids+=("$ALLOC")
sleep 0.3
# The memory programs are loaded by the first session that needs them and
# stay loaded: count from after one such session.
"$GTCTL" record --daemon --socket "$SOCK" --heap malloc -p "$ALLOC" -o "$GT_TMP/warm.trace" \
	-d 300ms 2>"$GT_TMP/warm.err" || { fail bounds_setup "$(cat "$GT_TMP/warm.err")"; gt_finish; }
sleep 0.5
base=$(fds)
kill -0 "$ALLOC" 2>/dev/null || { fail bounds_setup "malloc_loop died: $(cat "$GT_TMP/warm.err")"; gt_finish; }

# --- one PID named 1024 times: probed once (one process: ~75 links) ---------
$PROTO repeat "$SOCK" "$GT_TMP/repeat.trace" "$ALLOC" 1024 3 >"$GT_TMP/repeat.out" 2>&1 &
rp=$!
gt_pids+=("$rp")
peak=0
for i in $(seq 1 25); do
	n=$(fds); [ "$n" -gt "$peak" ] && peak=$n
	sleep 0.1
done
if ! timeout 30 tail --pid="$rp" -f /dev/null; then
	fail bounds_repeated_pid "the recording did not end"
elif ! grep -q '^session' "$GT_TMP/repeat.out"; then
	fail bounds_repeated_pid "refused: $(cat "$GT_TMP/repeat.out")"
elif [ "$peak" -gt $((base + 150)) ]; then
	fail bounds_repeated_pid "the daemon held $peak descriptors (from $base): probes attached per copy"
elif ! fds_settle $((base + 2)); then
	fail bounds_repeated_pid "descriptors did not come back: $(fds), was $base"
else
	gt_valid bounds_repeated_pid "$GT_TMP/repeat.trace" &&
		ok bounds_repeated_pid
fi

# --- probes in more processes than a session may have -----------------------
procs=()
for i in $(seq 1 70); do
	sleep 600 &
	procs+=($!)
	gt_pids+=($!)
done
list=$(IFS=,; echo "${procs[*]}")
out=$("$GTCTL" record --daemon --socket "$SOCK" --heap malloc -p "$list" \
	-o "$GT_TMP/many.trace" -d 2s 2>&1)
rc=$?
if [ "$rc" = 0 ]; then
	fail bounds_probed_processes "70 processes with malloc probes were accepted: $out"
elif ! echo "$out" | grep -q "limited to 64 processes"; then
	fail bounds_probed_processes "rc=$rc but the limit is not named: $out"
elif [ -e "$GT_TMP/many.trace" ]; then
	fail bounds_probed_processes "a refused recording left a file"
elif ! fds_settle $((base + 2)); then
	fail bounds_probed_processes "descriptors did not come back: $(fds), was $base"
else
	ok bounds_probed_processes
fi
kill "${procs[@]}" 2>/dev/null

# --- a CPU profile rate the CLI refuses is refused by the daemon ------------
$PROTO badrate "$SOCK" "$ALLOC" || gt_failures=$((gt_failures + 1))
out=$("$GTCTL" record --daemon --socket "$SOCK" --cpu-profile=4294967295 -p "$ALLOC" \
	-o "$GT_TMP/rate.trace" -d 1s 2>&1)
if [ $? = 2 ] && echo "$out" | grep -q "cpu-profile"; then ok bounds_cli_cpu_rate
else fail bounds_cli_cpu_rate "$out"; fi

# --- growth: sessions on processes that come and go leave nothing behind ---
# (fds 32 -> 222 -> 502 after a load test)
for i in $(seq 1 20); do
	"$WL/sleeper" 100000 2000 >/dev/null &
	sp=$!
	gt_pids+=("$sp")
	"$GTCTL" record --daemon --socket "$SOCK" -p "$sp" -o "$GT_TMP/seq.trace" -d 200ms \
		2>>"$GT_TMP/seq.err" || echo "session $i failed" >>"$GT_TMP/seq.fail"
	kill "$sp"
done
if [ -s "$GT_TMP/seq.fail" ]; then
	fail bounds_sequential_sessions "$(cat "$GT_TMP/seq.fail" | head -3): $(tail -3 "$GT_TMP/seq.err")"
elif ! fds_settle $((base + 2)); then
	fail bounds_sequential_sessions "20 sessions later the daemon holds $(fds) descriptors, was $base"
	ls -l "/proc/$DAEMON_PID/fd" | awk '{print $NF}' | sort | uniq -c | sort -rn | head -5 | detail
else
	ok bounds_sequential_sessions
fi

# the daemon still serves
if [ "$($PROTO status "$SOCK")" = "sessions 0" ]; then ok bounds_daemon_serves
else fail bounds_daemon_serves "status after the bounds cases: $($PROTO status "$SOCK" 2>&1)"; fi

gt_finish
