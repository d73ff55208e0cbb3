#!/usr/bin/env bash
# daemon_record.sh: the real gotraced on a temporary socket records real
# processes for real gotracectl clients: record, status, stop, two sessions
# at once, a client killed mid-session, and SIGTERM to the daemon with a
# session open.  Every file must pass Go's reader/viewer and our checker.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

PROTO="python3 tests/integration/daemon_proto.py"

gt_require_daemon daemon_record
gt_expect daemon_status_no_daemon daemon_stop_no_daemon daemon_record daemon_record_logged \
	daemon_status_lists daemon_stop daemon_stop_twice_refused daemon_two_sessions \
	daemon_client_killed daemon_sigterm

# a long-lived target: one thread doing 10 ms sleeps
start_target() {
	"$WL/sleeper" 100000 10000 >/dev/null &
	TARGET_PID=$!
	gt_pids+=("$TARGET_PID")
}

# wait_sessions N: until `status` lists N sessions (60 s).
wait_sessions() {
	local end=$((SECONDS + 60))
	while [ $SECONDS -lt $end ]; do
		[ "$($PROTO status "$SOCK" 2>/dev/null)" = "sessions $1" ] && return 0
		sleep 0.1
	done
	return 1
}

gt_start_daemon
start_target

# --- no daemon: status and stop say so --------------------------------------
out=$("$GTCTL" status --socket "$GT_TMP/none.sock" 2>&1); rc=$?
if [ $rc = 1 ] && echo "$out" | grep -q "no gotraced daemon"; then ok daemon_status_no_daemon
else fail daemon_status_no_daemon "rc=$rc: $out"; fi
out=$("$GTCTL" stop --socket "$GT_TMP/none.sock" 3 2>&1); rc=$?
if [ $rc = 1 ] && echo "$out" | grep -q "no gotraced daemon"; then ok daemon_stop_no_daemon
else fail daemon_stop_no_daemon "rc=$rc: $out"; fi

# --- one recording through the daemon ----------------------------------------
F=$GT_TMP/one.trace
if out=$("$GTCTL" record --daemon --socket "$SOCK" -p "$TARGET_PID" -o "$F" -d 2s 2>&1); then
	gt_valid daemon_record "$F" && ok daemon_record
else
	fail daemon_record "gotracectl record exited non-zero: $out"
fi
if grep -q "session [0-9]* started for uid 0" "$GT_TMP/daemon.log"; then ok daemon_record_logged
else fail daemon_record_logged "no 'session started' line in the daemon log"; fi

# --- status lists a running session; stop ends it cleanly ---------------------
F=$GT_TMP/stopped.trace
"$GTCTL" record --daemon --socket "$SOCK" -p "$TARGET_PID" -o "$F" -d 60s \
	>"$GT_TMP/stopped.out" 2>&1 &
REC=$!
gt_pids+=("$REC")
if wait_sessions 1; then
	st=$("$GTCTL" status --socket "$SOCK" 2>&1)
	id=$(echo "$st" | awk 'NR == 2 { print $1 }')
	if echo "$st" | grep -q "root .* pid $TARGET_PID"; then ok daemon_status_lists
	else fail daemon_status_lists "status output: $st"; fi
	stopped=1
	out=$("$GTCTL" stop --socket "$SOCK" "$id" 2>&1) || stopped=0
	for i in $(seq 1 300); do kill -0 "$REC" 2>/dev/null || break; sleep 0.1; done
	if [ $stopped = 0 ]; then
		kill -INT "$REC" 2>/dev/null; wait "$REC"
		fail daemon_stop "stop $id: $out"
	elif kill -0 "$REC" 2>/dev/null; then
		fail daemon_stop "gotracectl record still running 30 s after stop"
	elif wait "$REC"; then
		gt_valid daemon_stop "$F" && ok daemon_stop
	else
		fail daemon_stop "record exited non-zero after stop: $(cat "$GT_TMP/stopped.out")"
	fi
	out=$("$GTCTL" stop --socket "$SOCK" "$id" 2>&1)
	if [ $? = 1 ] && echo "$out" | grep -q "no session"; then ok daemon_stop_twice_refused
	else fail daemon_stop_twice_refused "second stop: $out"; fi
else
	fail daemon_status_lists "the session never showed up in status"
	fail daemon_stop "no session to stop (see daemon_status_lists)"
	fail daemon_stop_twice_refused "no session to stop (see daemon_status_lists)"
	kill -INT "$REC" 2>/dev/null; wait "$REC"
fi

# --- two sessions at once -------------------------------------------------------
# Both until stopped (Ctrl-C to each client once both are seen): durations
# would assume both start within them.
"$WL/sleeper" 100000 5000 >/dev/null &
T2=$!
gt_pids+=("$T2")
"$GTCTL" record --daemon --socket "$SOCK" -p "$TARGET_PID" -o "$GT_TMP/a.trace" \
	>"$GT_TMP/a.out" 2>&1 &
RA=$!
"$GTCTL" record --daemon --socket "$SOCK" -p "$T2" -o "$GT_TMP/b.trace" \
	>"$GT_TMP/b.out" 2>&1 &
RB=$!
gt_pids+=("$RA" "$RB")
wait_sessions 2 && seen2=1 || seen2=0
kill -INT "$RA" "$RB" 2>/dev/null
wait "$RA"; ra=$?
wait "$RB"; rb=$?
if [ $seen2 = 0 ]; then fail daemon_two_sessions "status never showed 2 sessions"
elif [ $ra != 0 ] || [ $rb != 0 ]; then
	fail daemon_two_sessions "record exits $ra/$rb: $(cat "$GT_TMP/a.out" "$GT_TMP/b.out")"
elif gt_valid daemon_two_sessions "$GT_TMP/a.trace" && gt_valid daemon_two_sessions "$GT_TMP/b.trace"; then
	ok daemon_two_sessions
fi

# --- a client killed mid-session: the daemon still finishes the file -------------
F=$GT_TMP/killed.trace
$PROTO record "$SOCK" "$F" "$TARGET_PID" 60 >"$GT_TMP/killed.out" 2>&1 &
PC=$!
gt_pids+=("$PC")
for i in $(seq 1 600); do grep -q '^session' "$GT_TMP/killed.out" && break; sleep 0.1; done
sleep 1
kill -KILL "$PC"
wait "$PC" 2>/dev/null
if ! grep -q '^session' "$GT_TMP/killed.out"; then
	fail daemon_client_killed "raw client got no session: $(cat "$GT_TMP/killed.out")"
elif ! wait_sessions 0; then
	fail daemon_client_killed "the session outlived its client"
elif gt_valid daemon_client_killed "$F"; then
	if grep -q "ended (client disconnected)" "$GT_TMP/daemon.log"; then ok daemon_client_killed
	else fail daemon_client_killed "daemon log does not say the client disconnected"; fi
fi

# --- SIGTERM with a session open: file finished, daemon exits 0 ------------------
F=$GT_TMP/sigterm.trace
"$GTCTL" record --daemon --socket "$SOCK" -p "$TARGET_PID" -o "$F" -d 60s \
	>"$GT_TMP/sigterm.out" 2>&1 &
REC=$!
gt_pids+=("$REC")
if wait_sessions 1; then
	sleep 1
	kill -TERM "$DAEMON_PID"
	for i in $(seq 1 300); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$DAEMON_PID" 2>/dev/null; then
		fail daemon_sigterm "gotraced still running 30 s after SIGTERM"
	else
		wait "$DAEMON_PID"; drc=$?
		wait "$REC"; rrc=$?
		if [ $drc != 0 ]; then fail daemon_sigterm "gotraced exited $drc"; detail <"$GT_TMP/daemon.log"
		elif [ $rrc != 0 ]; then fail daemon_sigterm "record exited $rrc: $(cat "$GT_TMP/sigterm.out")"
		elif [ -e "$SOCK" ]; then fail daemon_sigterm "socket $SOCK left behind"
		elif gt_valid daemon_sigterm "$F"; then ok daemon_sigterm
		fi
	fi
else
	fail daemon_sigterm "the session never showed up in status"
fi

[ "$gt_failures" -gt 0 ] && { echo "# daemon log:"; tail -40 "$GT_TMP/daemon.log" | detail; }
gt_finish
