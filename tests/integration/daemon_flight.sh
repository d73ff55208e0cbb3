#!/usr/bin/env bash
# daemon_flight.sh: flight recordings in gotraced (`record --flight --detach`,
# docs/design.md "Flight recorder", "In the daemon").
#   flightd_detach           record --detach prints the session's ID and exits 0
#   flightd_status           status lists the session after its client is gone:
#                            detached, its window, its trigger, its directory
#   flightd_trigger_once     `stall` (attached by -p, started after the client
#                            left) stalls once 80 ms in ppoll: exactly one file
#                            in the directory, named flight-ID-TIME-syscall-ppoll,
#                            valid in every reader, holding the stall and one
#                            trigger log naming the staller
#   flightd_dump_file        dump ID -o FILE: a valid file, the session goes on
#   flightd_dump_dir         dump ID: a new valid file in the session's directory
#   flightd_dump_half_closed a DUMP sent on a connection then half-closed
#                            (shutdown SHUT_WR) still gets its DUMPED (the
#                            dump is written while the loop goes on)
#   flightd_name_unseen      a trigger's @NAME that no thread has: status says so
#   flightd_user_cannot_dump another user cannot dump nor stop root's session,
#                            and gets no file
#   flightd_user_dir_refused a user's session into a directory not the user's
#                            is refused
#   flightd_user_own         a user's detached session on its own process: its
#                            dump is created in its directory as the user
#   flightd_user_limit       a user's third detached session is refused (2)
#   flightd_stop             stop ID ends the sessions; status lists none
#   flightd_always_on        gotraced --flight-cgroup CG --flight-dir DIR
#                            --flight-trigger ...: from its start a session
#                            (status: always on) that dumps exactly one file
#                            holding the stall of a process put in CG
#   flightd_always_needs_target  --flight-* options without a unit or cgroup:
#                            gotraced refuses to start (exit 2)
#   flightd_v2_trigger       flightd_trigger_once with --go-version 1.23: the
#                            one file is a "go 1.23 trace" (Go 1.22+'s own
#                            format) that every v2 reader reads to its end,
#                            holding the stall and the trigger's log event
#   flightd_v2_dump_file     dump ID -o FILE of that session: a valid go 1.23
#                            trace, the session going on
#   flightd_status_during_dump  a long dump (3 s of busy pingpong) is written
#                            while the daemon answers: once gotraced's dump
#                            thread is seen (one more thread), a `status` on
#                            another connection gets its answer while that
#                            thread still runs and before the DUMP's client
#                            has its DUMPED, in one of up to 5 dumps (the
#                            old loop answered nothing until the dump was
#                            written); the dump is valid
#   flightd_always_on_v2     gotraced --flight-cgroup ... --flight-go-version
#                            1.22: its one triggered dump is a valid "go 1.22
#                            trace" holding the stall
# No timing is asserted; the trigger's threshold is far from the workload's
# 1 ms sleeps, so a CPU hog beside does not fire it.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

USER_NAME=gt_test_user
READ="python3 tests/integration/trace_read.py"
CASES=(flightd_detach flightd_status flightd_trigger_once flightd_dump_file flightd_dump_dir
       flightd_dump_half_closed
       flightd_name_unseen flightd_user_cannot_dump flightd_user_dir_refused flightd_user_own
       flightd_user_limit flightd_stop flightd_always_on flightd_always_needs_target
       flightd_v2_trigger flightd_v2_dump_file flightd_status_during_dump
       flightd_always_on_v2)
gt_require_daemon daemon_flight
gt_expect "${CASES[@]}"
gt_start_daemon

# wait_log REGEX [SECONDS]: until the daemon's log has a line matching REGEX
wait_log() {
	local end=$((SECONDS + ${2:-60}))
	while [ $SECONDS -lt $end ]; do
		grep -qE "$1" "$GT_TMP/daemon.log" && return 0
		sleep 0.1
	done
	return 1
}

# v2_stall NAME FILE VERSION OUT: FILE is a valid "go VERSION trace" holding
# the stall that the workload's stdout OUT reports; why= says what is not
v2_stall() {
	local name=$1 f=$2 ver=$3 a b first last
	why=""
	if [ "$(head -c 16 "$f" | tr -d '\0')" != "go $ver trace" ]; then
		why="not a go $ver trace: $(head -c 16 "$f" | od -c | head -1)"
	elif ! gt_valid "$name" "$f"; then
		why="-" # gt_valid said why
	else
		read -r _ _ a b < <(grep '^stall ' "$4")
		read -r first last _ < <($READ span "$f")
		[ -n "$last" ] && [ "$first" -le "$a" ] && [ "$last" -ge "$b" ] ||
			why="the file ($first..$last) does not hold the stall ($a..$b)"
	fi
}

D=$GT_TMP/dumps
gt_start_workload st "$WL/stall" --wait 4000 80 || { fail flightd_detach "stall did not start"; gt_finish; }
ST_PID=$WL_PID
if ID=$("$GTCTL" record --socket "$SOCK" -p "$ST_PID" --flight=2s --detach -o "$D" \
	--trigger 'syscall:ppoll>40ms' --after 300ms 2>"$GT_TMP/detach.err") &&
	[[ "$ID" =~ ^[0-9]+$ ]]; then
	ok flightd_detach
else
	fail flightd_detach "record --detach: '$ID' $(cat "$GT_TMP/detach.err")"
	gt_finish
fi

st=$("$GTCTL" status --socket "$SOCK" 2>&1)
if echo "$st" | grep -qE "^$ID +root .*pid $ST_PID" &&
	echo "$st" | grep -q "flight (detached): window 2.0s.*triggers syscall:ppoll>40ms; dir $D"; then
	ok flightd_status
else
	fail flightd_status "status: $st"
fi

# the stall starts now, its client long gone
gt_go st
gt_wait_line st '^done' 60
why=""
if ! wait_log "session $ID: wrote flight-$ID-" 30; then
	why="no dump logged: $(grep "session $ID" "$GT_TMP/daemon.log" | tail -3)"
else
	sleep 0.5 # a second dump, if one were wrongly taken, would be as quick
	mapfile -t got < <(ls -1 "$D")
	f=$D/${got[0]}
	read -r _ tid a b < <(grep '^stall ' "$GT_TMP/st.out")
	if [ "${#got[@]}" != 1 ]; then
		why="${#got[@]} files, want 1: ${got[*]}"
	elif ! [[ "${got[0]}" =~ ^flight-$ID-[0-9]{8}-[0-9]{6}-syscall-ppoll\.trace$ ]]; then
		why="file name ${got[0]} does not say the session, the time and the trigger"
	elif ! gt_valid flightd_trigger_once "$f"; then
		why="-" # gt_valid said why
	else
		read -r first last _ < <($READ span "$f")
		[ -n "$last" ] && [ "$first" -le "$a" ] && [ "$last" -ge "$b" ] ||
			why="the file ($first..$last) does not hold the stall ($a..$b)"
		log=$($READ logs "$f" | grep -P '\tgotraced.trigger\t')
		[ "$(printf '%s\n' "$log" | grep -c .)" = 1 ] && [[ "$log" == *"thread $tid (staller)"* ]] ||
			why="${why:+$why; }want one trigger log naming thread $tid, got: $log"
	fi
fi
[ "$why" = "-" ] || gt_report flightd_trigger_once "$why"

# --- dumps on request --------------------------------------------------------------
"$WL/sleeper" 100000 1000 >/dev/null &
SL_PID=$!
gt_pids+=("$SL_PID")
ID2=$("$GTCTL" record --socket "$SOCK" -p "$SL_PID" --flight=1s --detach -o "$GT_TMP/d2" \
	--trigger 'offcpu>10s@nosuchthread' 2>/dev/null)
sleep 1.5
if out=$("$GTCTL" dump --socket "$SOCK" -o "$GT_TMP/now.trace" "$ID2" 2>&1); then
	gt_valid flightd_dump_file "$GT_TMP/now.trace" && ok flightd_dump_file
else
	fail flightd_dump_file "dump -o: $out"
fi
if out=$("$GTCTL" dump --socket "$SOCK" "$ID2" 2>&1) &&
	name=$(echo "$out" | sed -n "s/^session $ID2: wrote \(flight-$ID2-[0-9-]*\.trace\) in its directory .*/\1/p") &&
	[ -n "$name" ]; then
	gt_valid flightd_dump_dir "$GT_TMP/d2/$name" && ok flightd_dump_dir
else
	fail flightd_dump_dir "dump: $out; $(ls "$GT_TMP/d2")"
fi
out=$(python3 - "$SOCK" "$ID2" <<'PY' 2>&1
import socket, struct, sys
sys.path.insert(0, "tests/integration")
from daemon_proto import msg, recv_msg
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(120)
s.connect(sys.argv[1])
s.sendall(msg(4, struct.pack("<I", int(sys.argv[2]))))  # DUMP{id}, to its directory
s.shutdown(socket.SHUT_WR)
print(recv_msg(s)[0])  # DUMPED is 21
PY
)
if [ "$out" = 21 ]; then
	ok flightd_dump_half_closed
else
	fail flightd_dump_half_closed "a half-closed DUMP got: $out"
fi
st=$("$GTCTL" status --socket "$SOCK" 2>&1)
if echo "$st" | grep -q "offcpu>10s@nosuchthread (no thread named nosuchthread seen)"; then
	ok flightd_name_unseen
else
	fail flightd_name_unseen "status: $st"
fi

# --- Go 1.22+'s own format ------------------------------------------------------------
V2=$GT_TMP/v2dumps
gt_start_workload st3 "$WL/stall" --wait 4000 80 || { fail flightd_v2_trigger "stall did not start"; gt_finish; }
ID3=$("$GTCTL" record --socket "$SOCK" -p "$WL_PID" --flight=2s --detach -o "$V2" \
	--go-version 1.23 --trigger 'syscall:ppoll>40ms' --after 300ms 2>"$GT_TMP/v2.err")
# on request, while the stall's tickers run (the session ends with them)
[[ "$ID3" =~ ^[0-9]+$ ]] && gt_go st3
sleep 1
why=""
if ! [[ "$ID3" =~ ^[0-9]+$ ]]; then
	why="no session: $ID3 $(cat "$GT_TMP/v2.err")"
elif ! out=$("$GTCTL" dump --socket "$SOCK" -o "$GT_TMP/v2now.trace" "$ID3" 2>&1); then
	why="dump -o: $out"
elif ! "$GTCTL" status --socket "$SOCK" | grep -q "^$ID3 "; then
	why="the session is gone after the dump" # (the stall runs 4 s: asked at once)
elif [ "$(head -c 16 "$GT_TMP/v2now.trace" | tr -d '\0')" != "go 1.23 trace" ]; then
	why="not a go 1.23 trace: $(head -c 16 "$GT_TMP/v2now.trace" | od -c | head -1)"
elif ! gt_valid flightd_v2_dump_file "$GT_TMP/v2now.trace"; then
	why="-"
fi
[ "$why" = "-" ] || gt_report flightd_v2_dump_file "$why"
why=""
if ! [[ "$ID3" =~ ^[0-9]+$ ]]; then
	why="record --detach --go-version 1.23: '$ID3' $(cat "$GT_TMP/v2.err")"
else
	gt_wait_line st3 '^done' 60
	wait_log "session $ID3: wrote flight-$ID3-" 30 ||
		why="no dump logged: $(grep "session $ID3" "$GT_TMP/daemon.log" | tail -3)"
fi
if [ -z "$why" ]; then
	sleep 0.5
	mapfile -t got < <(ls -1 "$V2")
	if [ "${#got[@]}" != 1 ]; then
		why="${#got[@]} files, want 1: ${got[*]}"
	else
		v2_stall flightd_v2_trigger "$V2/${got[0]}" 1.23 "$GT_TMP/st3.out"
		read -r _ tid _ < <(grep '^stall ' "$GT_TMP/st3.out")
		if [ "$why" != "-" ]; then
			log=$($READ logs "$V2/${got[0]}" | grep -P '\tgotraced.trigger\t')
			[ "$(printf '%s\n' "$log" | grep -c .)" = 1 ] &&
				[[ "$log" == *"thread $tid (staller)"* ]] ||
				why="${why:+$why; }want one trigger log naming thread $tid, got: $log"
		fi
	fi
fi
[ "$why" = "-" ] || gt_report flightd_v2_trigger "$why"

# --- another user ---------------------------------------------------------------------
gt_user_env flightd_user_cannot_dump

o1=$(as_user "$UCTL" dump --socket "$SOCK" -o "$UDIR/root.trace" "$ID2" 2>&1); r1=$?
o2=$(as_user "$UCTL" dump --socket "$SOCK" "$ID2" 2>&1); r2=$?
o3=$(as_user "$UCTL" stop --socket "$SOCK" "$ID2" 2>&1); r3=$?
# another user's id is answered as a missing one (status hides it too)
if [ $r1 != 0 ] && [ $r2 != 0 ] && [ $r3 != 0 ] && [[ "$o1" == *"no session $ID2 "* ]] &&
	[[ "$o2" == *"no session $ID2 "* ]] && [[ "$o3" == *"no session $ID2 "* ]] &&
	[ ! -e "$UDIR/root.trace" ] && "$GTCTL" status --socket "$SOCK" | grep -q "^$ID2 "; then
	ok flightd_user_cannot_dump
else
	fail flightd_user_cannot_dump "dump -o: rc=$r1 $o1; dump: rc=$r2 $o2; stop: rc=$r3 $o3"
fi

setpriv --reuid="$USER_NAME" --regid="$USER_NAME" --clear-groups -- "$GT_TMP/bin/sleeper" 100000 1000 >/dev/null &
U_PID=$!
gt_pids+=("$U_PID")
for _ in $(seq 1 600); do
	[ "$(readlink "/proc/$U_PID/exe")" = "$GT_TMP/bin/sleeper" ] && break
	sleep 0.1
done
mkdir -p "$GT_TMP/rootdir" && chmod 0777 "$GT_TMP/rootdir"
out=$(as_user "$UCTL" record --socket "$SOCK" -p "$U_PID" --flight=1s --detach -o "$GT_TMP/rootdir" 2>&1); rc=$?
if [ $rc != 0 ] && [[ "$out" == *"belongs to uid 0"* ]] && [ -z "$(ls "$GT_TMP/rootdir")" ]; then
	ok flightd_user_dir_refused
else
	fail flightd_user_dir_refused "rc=$rc: $out"
fi

UID3=$(as_user "$UCTL" record --socket "$SOCK" -p "$U_PID" --flight=1s --detach -o "$UDIR/fl" 2>"$GT_TMP/u.err")
sleep 1
why=""
if ! [[ "$UID3" =~ ^[0-9]+$ ]]; then
	why="the user's record --detach failed: $(cat "$GT_TMP/u.err")"
elif ! out=$(as_user "$UCTL" dump --socket "$SOCK" "$UID3" 2>&1); then
	why="the user's dump failed: $out"
else
	name=$(ls -1 "$UDIR/fl")
	if [ "$(stat -c %U "$UDIR/fl/$name" 2>/dev/null)" != "$USER_NAME" ]; then
		why="the dump $name is owned by $(stat -c %U "$UDIR/fl/$name" 2>&1), not the user"
	elif ! gt_valid flightd_user_own "$UDIR/fl/$name"; then
		why="-" # gt_valid said why
	fi
fi
[ "$why" = "-" ] || gt_report flightd_user_own "$why"

as_user "$UCTL" record --socket "$SOCK" -p "$U_PID" --flight=1s --detach -o "$UDIR/fl2" >/dev/null 2>&1
out=$(as_user "$UCTL" record --socket "$SOCK" -p "$U_PID" --flight=1s --detach -o "$UDIR/fl3" 2>&1); rc=$?
if [ $rc != 0 ] && [[ "$out" == *"too many detached sessions for uid"* ]]; then
	ok flightd_user_limit
else
	fail flightd_user_limit "a third detached session: rc=$rc: $out"
fi

# --- stop ---------------------------------------------------------------------------
why=""
for id in $("$GTCTL" status --socket "$SOCK" | awk 'NR > 1 && $1 ~ /^[0-9]+$/ { print $1 }'); do
	out=$("$GTCTL" stop --socket "$SOCK" "$id" 2>&1) || why="${why:+$why; }stop $id: $out"
done
st=$("$GTCTL" status --socket "$SOCK" 2>&1)
[ "$st" = "no recording sessions" ] || why="${why:+$why; }after stop: $st"
wait_log "session $ID2 ended \(stopped by uid 0\)" 10 || why="${why:+$why; }no end logged for $ID2"
gt_report flightd_stop "$why"

kill -0 "$DAEMON_PID" 2>/dev/null || fail flightd_stop "gotraced died"

# --- the loop answers while a dump is written -------------------------------------------
# threads: gotraced's threads (a dump is written on one of its own)
threads() { ls /proc/"$DAEMON_PID"/task | grep -c .; }
status_during_dump() {
	local name=flightd_status_during_dump why="" id dpid i try seen st base during=0
	gt_start_workload pp "$WL/pingpong" --wait 1000000000 || { fail $name "pingpong did not start"; return; }
	gt_pids+=("$WL_PID")
	id=$("$GTCTL" record --socket "$SOCK" -p "$WL_PID" --flight=60s --flight-size 256M --detach \
		-o "$GT_TMP/ppdir" 2>"$GT_TMP/pp.err")
	[[ "$id" =~ ^[0-9]+$ ]] || { fail $name "record --detach: '$id' $(cat "$GT_TMP/pp.err")"; return; }
	gt_go pp
	sleep 3
	# A status slower than the dump (the loop also reads a busy target's
	# rings) proves nothing either way: up to 5 dumps, one must overlap
	# (never possible when the loop waits for the dump: its thread is
	# joined before DUMPED is queued, and the status answered after)
	for try in 1 2 3 4 5; do
		base=$(threads)
		"$GTCTL" dump --socket "$SOCK" -o "$GT_TMP/long.trace" "$id" >"$GT_TMP/long.out" 2>&1 &
		dpid=$!
		seen=0
		for i in $(seq 1 3000); do
			[ "$(threads)" -gt "$base" ] && { seen=1; break; }
			kill -0 "$dpid" 2>/dev/null || break
			sleep 0.01
		done
		if [ $seen = 1 ] && st=$(timeout 60 "$GTCTL" status --socket "$SOCK" 2>&1) &&
			[ "$(threads)" -gt "$base" ] && kill -0 "$dpid" 2>/dev/null; then
			during=1
			echo "$st" | grep -qE "^$id +root" ||
				why="status during the dump does not list session $id: $st"
		fi
		wait "$dpid" || { why="${why:+$why; }dump -o failed: $(cat "$GT_TMP/long.out")"; break; }
		[ $during = 1 ] && break
	done
	[ $during = 1 ] || [ -n "$why" ] ||
		why="in 5 dumps, status was answered only once the dump was written (its thread gone, its DUMPED sent)"
	"$GTCTL" stop --socket "$SOCK" "$id" >/dev/null 2>&1
	kill "$WL_PID" 2>/dev/null
	if [ -z "$why" ]; then
		gt_valid $name "$GT_TMP/long.trace" || return
	fi
	gt_report $name "$why"
}
status_during_dump

# --- always on, from the daemon's options ---------------------------------------------
out=$("$GTD" --socket "$GT_TMP/x.sock" --flight-window 2s 2>&1); rc=$?
if [ $rc = 2 ] && [[ "$out" == *"go with --flight-unit or --flight-cgroup"* ]]; then
	ok flightd_always_needs_target
else
	fail flightd_always_needs_target "rc=$rc: $out"
fi

kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
CGMNT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
CG=$CGMNT/gt_it_flight_$$
mkdir -p "$CG"
cleanup_cg() {
	local p
	while read -r p; do echo "$p" >"$CGMNT/cgroup.procs" 2>/dev/null; done <"$CG/cgroup.procs"
	rmdir "$CG" 2>/dev/null
}
trap 'cleanup_cg; gt_cleanup' EXIT
A=$GT_TMP/always
gt_start_daemon --flight-cgroup "$CG" --flight-dir "$A" --flight-window 2s \
	--flight-trigger 'syscall:ppoll>40ms' --flight-after 300ms
gt_start_workload st2 "$WL/stall" --wait 3000 80 ||
	{ fail flightd_always_on "stall did not start"; gt_finish; }
echo "$WL_PID" >"$CG/cgroup.procs"
why=""
wait_log "session [0-9]+ started for uid 0" 60 || why="the always-on session did not start"
st=$("$GTCTL" status --socket "$SOCK" 2>&1)
echo "$st" | grep -q "cgroup $CG (always on: --flight-cgroup $CG)" &&
	echo "$st" | grep -q "flight (detached): window 2.0s.*syscall:ppoll>40ms; dir $A" ||
	why="status: $st"
gt_go st2
gt_wait_line st2 '^done' 60
if [ -z "$why" ] && ! wait_log "session [0-9]+: wrote flight-[0-9]+-[0-9-]+-syscall-ppoll.trace" 30; then
	why="no dump logged: $(tail -3 "$GT_TMP/daemon.log")"
fi
if [ -z "$why" ]; then
	sleep 0.5
	mapfile -t got < <(ls -1 "$A")
	read -r _ _ a b < <(grep '^stall ' "$GT_TMP/st2.out")
	if [ "${#got[@]}" != 1 ]; then
		why="${#got[@]} files, want 1: ${got[*]}"
	elif ! gt_valid flightd_always_on "$A/${got[0]}"; then
		why="-"
	else
		read -r first last _ < <($READ span "$A/${got[0]}")
		[ -n "$last" ] && [ "$first" -le "$a" ] && [ "$last" -ge "$b" ] ||
			why="the file ($first..$last) does not hold the stall ($a..$b)"
	fi
fi
[ "$why" = "-" ] || gt_report flightd_always_on "$why"

# --- always on, in Go 1.22's own format -----------------------------------------------
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
A2=$GT_TMP/always2
gt_start_daemon --flight-cgroup "$CG" --flight-dir "$A2" --flight-window 2s \
	--flight-trigger 'syscall:ppoll>40ms' --flight-after 300ms --flight-go-version 1.22
gt_start_workload st4 "$WL/stall" --wait 3000 80 ||
	{ fail flightd_always_on_v2 "stall did not start"; gt_finish; }
echo "$WL_PID" >"$CG/cgroup.procs"
why=""
wait_log "session [0-9]+ started for uid 0" 60 || why="the always-on session did not start"
gt_go st4
gt_wait_line st4 '^done' 60
if [ -z "$why" ] && ! wait_log "session [0-9]+: wrote flight-[0-9]+-[0-9-]+-syscall-ppoll.trace" 30; then
	why="no dump logged: $(tail -3 "$GT_TMP/daemon.log")"
fi
if [ -z "$why" ]; then
	sleep 0.5
	mapfile -t got < <(ls -1 "$A2")
	if [ "${#got[@]}" != 1 ]; then
		why="${#got[@]} files, want 1: ${got[*]}"
	else
		v2_stall flightd_always_on_v2 "$A2/${got[0]}" 1.22 "$GT_TMP/st4.out"
	fi
fi
[ "$why" = "-" ] || gt_report flightd_always_on_v2 "$why"
gt_finish
