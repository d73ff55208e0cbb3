#!/usr/bin/env bash
# record_usr1.sh: SIGUSR1 asks a flight recording for a dump, and users send
# it to every gotracectl (`kill -USR1 $(pidof gotracectl)`).  Every other
# recording ignores it and keeps its trace (it used to die of it, exit 138,
# no file):
#   usr1_embedded        record -p (embedded, root), SIGUSR1, then Ctrl-C:
#                        exit 0, a valid trace
#   usr1_daemon          the same through gotraced
#   usr1_command         record -- CMD, SIGUSR1 to gotracectl while CMD runs:
#                        exit 0, a valid trace, and CMD has SIGUSR1's
#                        default action (not inherited ignored)
#   usr1_command_daemon  the same through gotraced
#   usr1_tail_embedded   record --flight -- usr1_tail: five SIGUSR1 dumps,
#                        each asked 6 ms (twice the merge lag) after a
#                        moment the workload prints; each holds a record of
#                        that moment or later (before: 3 of 5 did not, the
#                        records of the last ~13 ms still in the merge or
#                        the rings; the threads idle there in the viewer).
#                        A daemon's --flight dumps by `gotracectl dump`
#                        (--detach), not SIGUSR1; it takes the same path
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

gt_require_daemon usr1
gt_expect usr1_embedded usr1_daemon usr1_command usr1_command_daemon usr1_tail_embedded
gt_start_daemon

# -p: a sleeper that lives through both recordings
"$WL/sleeper" 1000000 1000 >"$GT_TMP/sleeper.out" 2>&1 &
SLEEPER=$!
gt_pids+=("$SLEEPER")

# usr1_pid CASE MODE: record -p the sleeper (MODE --standalone or --daemon
# --socket), SIGUSR1 once it records, then SIGINT.  The two signals are
# pending together at worst: the recording must end by SIGINT alone.
usr1_pid() {
	local name=$1 rc t=$GT_TMP/$1.trace
	shift
	if ! gt_record_bg "$name" "$@" -p "$SLEEPER" -o "$t"; then
		fail "$name" "record did not start: $(tail -5 "$GT_TMP/$name.rec.err")"
		return
	fi
	kill -USR1 "$REC_PID"
	gt_stop_record INT; rc=$?
	if [ "$rc" != 0 ]; then
		fail "$name" "record exited $rc after SIGUSR1 and SIGINT: $(tail -3 "$GT_TMP/$name.rec.err")"
	elif gt_valid "$name" "$t"; then
		ok "$name"
	fi
}
usr1_pid usr1_embedded
usr1_pid usr1_daemon --daemon --socket "$SOCK"

# usr1_cmd CASE MODE: record -- a shell that waits for a file, SIGUSR1 to
# gotracectl while it waits, then the file: the shell prints its ignored
# signals (SigIgn) and ends, and so does the recording.
usr1_cmd() {
	local name=$1 rc ign t=$GT_TMP/$1.trace go=$GT_TMP/$1.go
	shift
	if ! gt_record_bg "$name" "$@" -o "$t" -- sh -c \
		'while [ ! -e "$1" ]; do sleep 0.02; done; grep "^SigIgn:" /proc/self/status' sh "$go"; then
		fail "$name" "record did not start: $(tail -5 "$GT_TMP/$name.rec.err")"
		return
	fi
	kill -USR1 "$REC_PID"
	touch "$go"
	gt_stop_record 0; rc=$? # kill -0: waits for its own end
	ign=$(awk '$1 == "SigIgn:" { print $2 }' "$GT_TMP/$name.rec.out")
	if [ "$rc" != 0 ]; then
		fail "$name" "record exited $rc after SIGUSR1: $(tail -3 "$GT_TMP/$name.rec.err")"
	elif [ -z "$ign" ]; then
		fail "$name" "the command printed no SigIgn line: $(cat "$GT_TMP/$name.rec.out")"
	elif (( 0x$ign & (1 << 9) )); then # bit SIGUSR1 - 1
		fail "$name" "the command was started with SIGUSR1 ignored (SigIgn $ign)"
	elif gt_valid "$name" "$t"; then
		ok "$name"
	fi
}
usr1_cmd usr1_command
usr1_cmd usr1_command_daemon --daemon --socket "$SOCK"

# usr1_tail CASE ARGS...: record --flight -- usr1_tail 5 (it sends the
# SIGUSR1s itself): five dumps, each holding its mark (flight_tail.py)
usr1_tail() {
	local name=$1 d=$GT_TMP/$1 got
	shift
	mkdir -p "$d"
	if ! "$GTCTL" record "$@" -q --flight=1s -o "$d/fl.trace" -- "$WL/usr1_tail" 5 \
		>"$d.out" 2>"$d.err"; then
		fail "$name" "record exited non-zero: $(tail -3 "$d.err")"
		return
	fi
	got=$(ls "$d" | grep -c '\.trace$')
	if [ "$got" != 5 ]; then
		fail "$name" "$got dumps, want 5: $(ls "$d" | tr '\n' ' ')"
		detail <"$d.err"
	elif ! python3 tests/integration/flight_tail.py "$d.out" "$d"/*.trace >"$d.tail" 2>&1; then
		fail "$name" "a dump misses the records of the moment before it was asked"
		detail <"$d.tail"
	else
		ok "$name"
	fi
}
usr1_tail usr1_tail_embedded --standalone

kill "$SLEEPER" 2>/dev/null
gt_finish
