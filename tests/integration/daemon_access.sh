#!/usr/bin/env bash
# daemon_access.sh: who may do what through gotraced, and what bad input does.
#  - garbage, truncated, oversized and out-of-order messages get ERROR replies
#    and the daemon keeps serving (tests/integration/daemon_proto.py);
#  - a RECORD without a descriptor, or with a read-only or pipe descriptor,
#    is refused: the daemon never opens a path;
#  - a non-root user (created here) cannot trace root's process, can trace its
#    own, cannot stop or see root's session, and cannot get a file written
#    where it could not write itself, nor record with -a or --name.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

PROTO="python3 tests/integration/daemon_proto.py"
USER_NAME=gt_test_user

gt_require_daemon daemon_access
gt_expect daemon_survives_abuse daemon_refusals_logged daemon_user_cannot_trace_root \
	daemon_user_refused_leaves_no_file daemon_user_refusal_logged daemon_user_traces_own \
	daemon_never_opens_client_paths daemon_user_cannot_stop_root \
	daemon_user_sees_own_sessions_only daemon_root_session_after_user \
	daemon_user_cannot_trace_root_cgroup daemon_exit
gt_start_daemon

"$WL/sleeper" 100000 10000 >/dev/null &
ROOT_TARGET=$!
gt_pids+=("$ROOT_TARGET")

# --- protocol abuse -----------------------------------------------------------------
$PROTO abuse "$SOCK" || gt_failures=$((gt_failures + 1))
$PROTO nofd "$SOCK" "$ROOT_TARGET" || gt_failures=$((gt_failures + 1))
$PROTO badfd "$SOCK" "$ROOT_TARGET" || gt_failures=$((gt_failures + 1))
kill -0 "$DAEMON_PID" 2>/dev/null && ok daemon_survives_abuse || fail daemon_survives_abuse "gotraced died"
grep -q "refused: RECORD came without the output file descriptor" "$GT_TMP/daemon.log" &&
	ok daemon_refusals_logged || fail daemon_refusals_logged "no log line for the refusal"

# --- a non-root user ------------------------------------------------------------------
gt_user_env daemon_user
UID_U=$(id -u "$USER_NAME")

gt_refused daemon_user_cannot_trace_root "may not trace process $ROOT_TARGET" \
	as_user "$UCTL" record --daemon --socket "$SOCK" -p "$ROOT_TARGET" -o "$UDIR/root.trace" -d 1s
if [ -e "$UDIR/root.trace" ]; then fail daemon_user_refused_leaves_no_file "$UDIR/root.trace exists"
else ok daemon_user_refused_leaves_no_file; fi
grep -q "uid $UID_U .*refused: uid $UID_U may not trace" "$GT_TMP/daemon.log" &&
	ok daemon_user_refusal_logged || fail daemon_user_refusal_logged "no log line"

# as_user_bg: $! is the process itself, not a subshell
as_user_bg "$GT_TMP/bin/sleeper" 100000 10000 >/dev/null &
USER_TARGET=$!
gt_pids+=("$USER_TARGET")
# until setpriv has dropped to the user and exec'd the sleeper (a fixed
# pause may end before, and then the target is still root's)
for _ in $(seq 1 600); do
	[ "$(readlink "/proc/$USER_TARGET/exe")" = "$GT_TMP/bin/sleeper" ] && break
	sleep 0.1
done
if out=$(as_user "$UCTL" record --daemon --socket "$SOCK" -p "$USER_TARGET" -o "$UDIR/own.trace" -d 2s 2>&1); then
	if [ "$(stat -c %U "$UDIR/own.trace")" != "$USER_NAME" ]; then
		fail daemon_user_traces_own "the trace is owned by $(stat -c %U "$UDIR/own.trace"), not the user"
	elif gt_valid daemon_user_traces_own "$UDIR/own.trace"; then
		ok daemon_user_traces_own
	fi
else
	fail daemon_user_traces_own "record of its own process failed: $out"
fi

# The output is opened by the client: a path the user cannot write stays untouched
# even though the daemon (root) could write there.
FORBIDDEN=/root/gt_daemon_access_$$.trace
out=$(as_user "$UCTL" record --daemon --socket "$SOCK" -p "$USER_TARGET" -o "$FORBIDDEN" -d 1s 2>&1); rc=$?
if [ $rc != 0 ] && [ ! -e "$FORBIDDEN" ] && echo "$out" | grep -q "Permission denied"; then ok daemon_never_opens_client_paths
else fail daemon_never_opens_client_paths "rc=$rc, file exists: $([ -e "$FORBIDDEN" ] && echo yes || echo no): $out"; rm -f "$FORBIDDEN"; fi

# A root session: the user can neither see nor stop it.
"$GTCTL" record --daemon --socket "$SOCK" -p "$ROOT_TARGET" -o "$GT_TMP/rootsess.trace" \
	>"$GT_TMP/rootsess.out" 2>&1 &
REC=$!
gt_pids+=("$REC")
end=$((SECONDS + 60))
while [ $SECONDS -lt $end ]; do
	[ "$($PROTO status "$SOCK")" = "sessions 1" ] && break
	sleep 0.1
done
id=$("$GTCTL" status --socket "$SOCK" | awk 'NR == 2 { print $1 }')
out=$(as_user "$UCTL" stop --socket "$SOCK" "$id" 2>&1); rc=$?
# answered as a session that does not exist: ids cannot be probed for owners
none=$(as_user "$UCTL" stop --socket "$SOCK" 999999 2>&1)
if [ -n "$id" ] && [ $rc = 1 ] && echo "$out" | grep -q "no session $id" &&
	[ "${out//$id/N}" = "${none//999999/N}" ]; then ok daemon_user_cannot_stop_root
else fail daemon_user_cannot_stop_root "id=$id rc=$rc: '$out', a missing id: '$none'"; fi
out=$(as_user "$UCTL" status --socket "$SOCK" 2>&1)
if echo "$out" | grep -q "no recording sessions"; then ok daemon_user_sees_own_sessions_only
else fail daemon_user_sees_own_sessions_only "user status shows: $out"; fi
# the session runs until stopped (no -d racing the checks above)
if ! out=$("$GTCTL" stop --socket "$SOCK" "$id" 2>&1); then
	kill -INT "$REC" 2>/dev/null
	wait "$REC"
	fail daemon_root_session_after_user "root could not stop its session $id: $out"
elif ! wait "$REC"; then
	fail daemon_root_session_after_user "record exited non-zero: $(cat "$GT_TMP/rootsess.out")"
elif gt_valid daemon_root_session_after_user "$GT_TMP/rootsess.trace"; then
	ok daemon_root_session_after_user
fi

# -a and --name select every user's processes: root only.
for sel in "-a" "-n sleeper"; do
	out=$(as_user "$UCTL" record --daemon --socket "$SOCK" $sel -o "$UDIR/sel.trace" -d 1s 2>&1); rc=$?
	if [ $rc != 0 ] && [ ! -s "$UDIR/sel.trace" ] && echo "$out" | grep -q "may not record with"; then
		ok "daemon_user_cannot_record_${sel%% *}"
	else
		fail "daemon_user_cannot_record_${sel%% *}" "rc=$rc: $out"
	fi
done
# root may, through the daemon too: -n sleeper finds the running sleepers
if "$GTCTL" record --daemon --socket "$SOCK" -n sleeper -o "$GT_TMP/byname.trace" -d 1s \
	2>"$GT_TMP/byname.err" && gt_valid daemon_root_records_by_name "$GT_TMP/byname.trace"; then
	if gt_truth daemon_root_records_by_name tids "$GT_TMP/byname.trace.json" "$ROOT_TARGET" "$USER_TARGET"; then
		ok daemon_root_records_by_name
	fi
else
	fail daemon_root_records_by_name "$(tail -3 "$GT_TMP/byname.err")"
fi

# cgroups: a root-owned cgroup is not the user's
CGMNT=$(gt_cgroup2_mount)
if [ -n "$CGMNT" ]; then
	CG=$CGMNT/gt_access_$$
	mkdir "$CG"
	gt_refused daemon_user_cannot_trace_root_cgroup "may not trace cgroup" \
		as_user "$UCTL" record --daemon --socket "$SOCK" --cgroup "$CG" -o "$UDIR/cg.trace" -d 1s
	rmdir "$CG"
else
	fail daemon_user_cannot_trace_root_cgroup "no cgroup2 mount"
fi

kill -TERM "$DAEMON_PID"
if wait "$DAEMON_PID"; then ok daemon_exit; else fail daemon_exit "gotraced exited $?"; fi
[ "$gt_failures" -gt 0 ] && { echo "# daemon log:"; tail -40 "$GT_TMP/daemon.log" | detail; }
gt_finish
