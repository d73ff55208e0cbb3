#!/usr/bin/env bash
# daemon_soak.sh: sessions that come and go leave the daemon as it was
# ("after sessions end, fds and RSS return to the daemon's
# baseline; 1 000 sequential short sessions on different processes leave
# RSS and fds flat").  SOAK_SESSIONS (200) sessions of 100 ms in a row,
# each on a fresh process (threads, python3, sh forking, one that exits
# mid-session: tests/lib/sessions.sh), every 10th with --heap malloc.
# Afterwards the daemon's descriptors are exactly those it had after the
# warm-up, none of them a file of a traced process, and its RSS is within
# SOAK_RSS_SLACK_KB (8 MB) of the warm-up's (in ASan builds too,
# with its quarantine off and freed memory given back at once).
#
# The bound, from measurement: this daemon ends 0.5 MB above its baseline
# here, and 0.8 MB after 200 and 2 MB after 1 000 sessions in
# tests/bench/daemon_sessions.sh.  Before (the symbolizer kept 65 strings a
# session, the merge queues their 12 MB once walked, malloc 20-30 MB freed)
# it ended 15.6 MB above here, and 27 MB after 200 and 39 MB after 1 000
# sessions in the bench.  8 MB is well clear of both.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh
. tests/lib/sessions.sh

N=${SOAK_SESSIONS:-200}
SLACK_KB=${SOAK_RSS_SLACK_KB:-8192}

gt_require_daemon daemon_soak
gt_expect soak_sessions soak_fds
gt_expect soak_rss
# ASan's allocator keeps what is freed in quarantine and returns it to the
# system late (a daemon grew by 200 MB in 200 sessions for nothing leaked):
# without a quarantine, and releasing at once, its RSS means what it means
# in a plain build (every other ASan check still runs).
if ldd "$GTD" 2>/dev/null | grep -q libasan; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=0:thread_local_quarantine_size_kb=0:allocator_release_to_os_interval_ms=0"
fi
gt_start_daemon

# The memory programs are loaded by the first --heap session and kallsyms
# (8 MB) by the first kernel stack: both stay, so the baseline is taken
# after a session of each.
if ! soak_record 0 --kernel-stacks || ! soak_record 1 --heap malloc; then
	fail soak_sessions "warm-up session failed: $(head -3 "$GT_TMP/soak.rec.err")"
	gt_finish
fi
# A session's teardown may end after its client returned (uprobe links
# closing): the baseline is the fewest descriptors seen over 3 s.
base_fds=1000000
for i in $(seq 1 30); do
	read -r _ _ _ fds < <(soak_mem "$DAEMON_PID")
	[ "$fds" -lt "$base_fds" ] && base_fds=$fds
	sleep 0.1
done
read -r base_rss _ _ _ < <(soak_mem "$DAEMON_PID")
echo "# baseline: $base_fds descriptors, RSS $base_rss kB"

failed=0 first=
for i in $(seq 1 "$N"); do
	args=()
	[ $((i % 10)) = 0 ] && args=(--heap malloc)
	if ! soak_record "$i" "${args[@]}"; then
		failed=$((failed + 1))
		[ -n "$first" ] || first="session $i ($(soak_kind "$i") ${args[*]}): $(head -3 "$GT_TMP/soak.rec.err")"
	fi
done
if [ "$failed" = 0 ]; then ok soak_sessions
else fail soak_sessions "$failed of $N sessions failed; first: $first"; fi

# Descriptors: exactly the baseline, once the liveness check has run (30 s:
# a busy machine), and no file of any process: an idle daemon holds none
# (the baseline itself would hide files kept from the warm-up on).
if ! soak_fds_settle "$DAEMON_PID" "$base_fds" 30; then
	fail soak_fds "$N sessions later the daemon holds $(ls "/proc/$DAEMON_PID/fd" | wc -l) descriptors, was $base_fds"
	ls -l "/proc/$DAEMON_PID/fd" | awk 'NR > 1 { print $NF }' | sed 's/[0-9][0-9]*/N/g' |
		sort | uniq -c | sort -rn | head -8 | detail
elif held=$(soak_held_files "$DAEMON_PID" "$GT_TMP/daemon.log") && [ -n "$held" ]; then
	fail soak_fds "idle after $N sessions, the daemon holds $(echo "$held" | wc -l) files open"
	echo "$held" | head -8 | detail
else
	ok soak_fds
fi
read -r rss anon file _ < <(soak_mem "$DAEMON_PID")
echo "# after $N sessions: RSS $rss kB ($((rss - base_rss)) kB more; anon $anon, file $file)"
if [ $((rss - base_rss)) -le "$SLACK_KB" ]; then
	ok soak_rss
else
	fail soak_rss "RSS $rss kB after $N sessions, $((rss - base_rss)) kB above the baseline $base_rss kB (at most $SLACK_KB)"
fi

gt_finish
