#!/usr/bin/env bash
# daemon_partial.sh: no recording is lost with its client in daemon mode.
#  - a client killed with SIGKILL mid-recording: gotraced finishes the trace
#    (footer included) in FILE.partial, which the client created; the file
#    is valid, FILE is not there, and the daemon's log names FILE.partial;
#  - a normal run leaves FILE and no FILE.partial behind, and so does one
#    interrupted by SIGINT (the client half-closes and waits for DONE);
#  - an existing FILE.partial is never overwritten: the run is refused;
#  - FILE.partial removed and replaced by a symbolic link while recording
#    (the link in place before the end): the client never reports success
#    while the trace is lost, it keeps the trace under a name it gives and
#    fails, and neither FILE nor the link's target becomes the link's;
#  - a client whose daemon dies says the recording is lost.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

gt_require_daemon daemon_partial
gt_expect daemon_partial_sigkill daemon_partial_normal daemon_partial_interrupted \
	daemon_partial_no_clobber daemon_partial_daemon_gone daemon_partial_symlink_swapped
gt_start_daemon

"$WL/sleeper" 1000000 1000 >/dev/null &
TARGET=$!
gt_pids+=("$TARGET")

# rec_bg FILE: a daemon-mode recording of TARGET in the background (REC_PID),
# started here and not by gt_record_bg, once the daemon says it started
rec_bg() {
	local n0 i
	n0=$(grep -c "session .* started" "$GT_TMP/daemon.log")
	"$GTCTL" record --daemon --socket "$SOCK" -p "$TARGET" -o "$1" >"$1.out" 2>&1 &
	REC_PID=$!
	gt_pids+=("$REC_PID")
	for i in $(seq 1 200); do
		[ "$(grep -c "session .* started" "$GT_TMP/daemon.log")" -gt "$n0" ] && return 0
		kill -0 "$REC_PID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# --- SIGKILL the client -----------------------------------------------------------------
F=$GT_TMP/killed.trace
if ! rec_bg "$F"; then
	fail daemon_partial_sigkill "the recording did not start: $(cat "$F.out")"
else
	sleep 1
	kill -KILL "$REC_PID"
	wait "$REC_PID" 2>/dev/null
	for i in $(seq 1 200); do
		grep -q "session .* ended" "$GT_TMP/daemon.log" && break
		sleep 0.05
	done
	if [ ! -e "$F.partial" ]; then
		fail daemon_partial_sigkill "no $F.partial: $(ls "$GT_TMP")"
	elif [ -e "$F" ]; then
		fail daemon_partial_sigkill "$F appeared though its client never finished"
	elif ! grep -q "client is gone; the finished trace stays in $F.partial" "$GT_TMP/daemon.log"; then
		fail daemon_partial_sigkill "the daemon's log does not name $F.partial"
		tail -5 "$GT_TMP/daemon.log" | detail
	elif gt_valid daemon_partial_sigkill "$F.partial"; then
		ok daemon_partial_sigkill
	fi
fi

# finished_as NAME FILE RC OUTPUT: a client that exited RC finished its
# trace as FILE, valid, with no FILE.partial left behind.
finished_as() {
	if [ "$3" != 0 ]; then
		fail "$1" "rc=$3: $4"
	elif [ -e "$2.partial" ]; then
		fail "$1" "$2.partial left behind"
	elif gt_valid "$1" "$2"; then
		ok "$1"
	fi
}

# --- a normal run -------------------------------------------------------------------------
F2=$GT_TMP/normal.trace
out=$("$GTCTL" record --daemon --socket "$SOCK" -p "$TARGET" -o "$F2" -d 1s 2>&1); rc=$?
finished_as daemon_partial_normal "$F2" $rc "$out"

# --- Ctrl-C: the client half-closes and still gets its DONE ---------------------------
# (the daemon finishes the file in the background: the connection must stay
# open until then, or the client says the recording is lost)
F4=$GT_TMP/interrupted.trace
if ! rec_bg "$F4"; then
	fail daemon_partial_interrupted "the recording did not start: $(cat "$F4.out")"
else
	sleep 1
	kill -INT "$REC_PID"
	wait "$REC_PID"; rc=$?
	finished_as daemon_partial_interrupted "$F4" $rc "after SIGINT: $(cat "$F4.out")"
fi

# --- an existing FILE.partial is not clobbered ------------------------------------------
echo "keep me" >"$GT_TMP/exists.trace.partial"
out=$("$GTCTL" record --daemon --socket "$SOCK" -p "$TARGET" -o "$GT_TMP/exists.trace" -d 1s 2>&1); rc=$?
if [ $rc != 0 ] && [ "$(cat "$GT_TMP/exists.trace.partial")" = "keep me" ] &&
	[ ! -e "$GT_TMP/exists.trace" ] && echo "$out" | grep -q "exists.trace.partial exists"; then
	ok daemon_partial_no_clobber
else
	fail daemon_partial_no_clobber "rc=$rc: $out"
fi

# --- FILE.partial swapped for a symbolic link while recording -----------------------
F5=$GT_TMP/swapped.trace
if ! rec_bg "$F5"; then
	fail daemon_partial_symlink_swapped "the recording did not start: $(cat "$F5.out")"
else
	sleep 0.5
	rm -f "$F5.partial" && ln -s "$GT_TMP/elsewhere" "$F5.partial"
	kill -INT "$REC_PID"
	wait "$REC_PID"; rc=$?
	out=$(cat "$F5.out")
	kept=$(echo "$out" | sed -n 's/.*the trace is kept as \([^ ]*\).*/\1/p' | tail -1)
	if [ $rc = 0 ] && { [ -L "$F5" ] || [ ! -f "$F5" ]; }; then
		fail daemon_partial_symlink_swapped "exit 0, yet $F5 is $(stat -c %F "$F5" 2>&1): the trace is lost"
	elif [ -e "$GT_TMP/elsewhere" ]; then
		fail daemon_partial_symlink_swapped "the link's target was written"
	elif [ $rc = 0 ]; then
		gt_valid daemon_partial_symlink_swapped "$F5" && ok daemon_partial_symlink_swapped
	elif [ -z "$kept" ]; then
		fail daemon_partial_symlink_swapped "rc=$rc and no kept trace named: $out"
	elif [ -L "$F5" ]; then
		fail daemon_partial_symlink_swapped "the link was moved to $F5: $out"
	else
		gt_valid daemon_partial_symlink_swapped "$kept" && ok daemon_partial_symlink_swapped
	fi
fi

# --- the daemon dies under its client ---------------------------------------------------
F3=$GT_TMP/orphan.trace
if ! rec_bg "$F3"; then
	fail daemon_partial_daemon_gone "the recording did not start: $(cat "$F3.out")"
else
	sleep 0.5
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	wait "$REC_PID"; rc=$?
	out=$(cat "$F3.out")
	if [ $rc != 0 ] && echo "$out" | grep -q "the recording is lost" && [ ! -e "$F3" ] &&
		[ ! -e "$F3.partial" ]; then
		ok daemon_partial_daemon_gone
	else
		fail daemon_partial_daemon_gone "rc=$rc, files: $(ls "$GT_TMP" | grep orphan | tr '\n' ' '): $out"
	fi
fi

gt_finish
