#!/usr/bin/env bash
# daemon_privilege.sh: a non-root session follows a process only while its
# owner could ptrace it (bpf/common.bpf.h, leave_if_privileged):
#  - `-- SETUID-PROGRAM` (a root-owned 4755 copy of the sleeper workload,
#    and /usr/bin/passwd -S): nothing after the exec is in the trace, the
#    process's goroutines end, the summary says it left; gotracectl still
#    exits 0 (the trace is valid, and says what it holds);
#  - its own process that makes itself undumpable while recorded leaves
#    the recording at that instant (none of its later sleeps is written);
#  - a root process that setuid()s to the user is not recordable by -p;
#  - a root session of the same setuid command sees everything;
#  - a member of the user's --cgroup that execs the setuid program leaves
#    as a `--` command does (its goroutine ends there, the summary says
#    so), and a root process of the cgroup that execs is not counted as
#    one that left (it never was in the recording).
#  - loopback senders not recorded: a UDP receiver of the user's, recorded
#    by the user, is woken by a sender of the user's (named in G 0's frame,
#    "[loopback from python3 PID]") and one of root's (only "[loopback]":
#    its pid is nowhere in the trace).  daemon_privilege_loopback.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

USER_NAME=gt_test_user
N=300

gt_require_daemon daemon_privilege
gt_expect daemon_privilege_setuid_exec daemon_privilege_root_unchanged daemon_privilege_passwd \
	daemon_privilege_undumpable daemon_privilege_setuid_call daemon_privilege_cgroup_setuid \
	daemon_privilege_loopback
gt_need_cgroup2 daemon_privilege_cgroup_setuid
gt_start_daemon

gt_user_env daemon_privilege
UID_U=$(id -u "$USER_NAME")
GID_U=$(id -g "$USER_NAME")
cp "$WL/credchange" "$GT_TMP/bin/"
# the setuid-root program: root-owned, mode 4755, on a file system that honours it
SUID=$GT_TMP/bin/suidsleep
cp "$WL/sleeper" "$SUID" && chown root:root "$SUID" && chmod 4755 "$SUID"
if findmnt -no OPTIONS --target "$SUID" | grep -qw nosuid; then
	fail daemon_privilege "$GT_TMP is mounted nosuid: no setuid test possible"
	gt_finish
fi

# count FILE.json EVENT: how many EVENT events the trace holds
count() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counts"].get(sys.argv[2], 0))' "$1" "$2"; }

# --- a non-root user records a setuid-root program ---------------------------------
out=$(as_user "$UCTL" record --daemon --socket "$SOCK" -o "$UDIR/suid.trace" -- "$SUID" $N 1000 2>&1); rc=$?
if [ $rc != 0 ]; then
	fail daemon_privilege_setuid_exec "rc=$rc: $out"
elif gt_valid daemon_privilege_setuid_exec "$UDIR/suid.trace"; then
	sleeps=$(count "$UDIR/suid.trace.json" GoSleep)
	if [ "$sleeps" != 0 ]; then
		fail daemon_privilege_setuid_exec "the trace holds $sleeps of the setuid program's $N sleeps"
	elif ! echo "$out" | grep -q "1 process left the recording: it gained privileges"; then
		fail daemon_privilege_setuid_exec "the summary does not say why: $out"
	elif grep -q suidsleep "$UDIR/suid.trace"; then
		fail daemon_privilege_setuid_exec "the program's name (after its exec) is in the trace"
	else
		ok daemon_privilege_setuid_exec
	fi
fi

# root sees the same program whole
out=$("$GTCTL" record --daemon --socket "$SOCK" -o "$GT_TMP/root.trace" -- "$SUID" $N 1000 2>&1); rc=$?
if [ $rc != 0 ]; then
	fail daemon_privilege_root_unchanged "rc=$rc: $out"
elif gt_valid daemon_privilege_root_unchanged "$GT_TMP/root.trace"; then
	sleeps=$(count "$GT_TMP/root.trace.json" GoSleep)
	# A sleep whose timer fires while the thread is preempted before it
	# blocks never blocks (seen once on a loaded machine: 299 of 300);
	# the privilege rule would drop all of them at the exec, not one.
	if [ "$sleeps" -lt $((N * 9 / 10)) ] || echo "$out" | grep -q "left the recording"; then
		fail daemon_privilege_root_unchanged "$sleeps sleeps of $N: $out"
	else
		ok daemon_privilege_root_unchanged
	fi
fi

# passwd -S, the real thing (its own exit status does not matter here)
out=$(as_user "$UCTL" record --daemon --socket "$SOCK" -o "$UDIR/passwd.trace" -- /usr/bin/passwd -S "$USER_NAME" 2>&1); rc=$?
if [ $rc != 0 ]; then
	fail daemon_privilege_passwd "rc=$rc: $out"
elif gt_valid daemon_privilege_passwd "$UDIR/passwd.trace"; then
	sys=$(count "$UDIR/passwd.trace.json" GoSysCall)
	# the child between fork and exec makes a few dozen syscalls; passwd, hundreds
	if [ "$sys" -gt 100 ] || ! echo "$out" | grep -q "left the recording"; then
		fail daemon_privilege_passwd "$sys syscalls recorded: $out"
	else
		ok daemon_privilege_passwd
	fi
fi

# --- its own process becomes undumpable while recorded ----------------------------
gt_start_workload undump as_user_bg \
	"$GT_TMP/bin/credchange" --wait undumpable $N 1000 || { fail daemon_privilege_undumpable "no workload"; gt_finish; }
UPID=$(awk '$1 == "pid" { print $2 }' "$GT_TMP/undump.out")
as_user "$UCTL" record --daemon --socket "$SOCK" -p "$UPID" -o "$UDIR/undump.trace" >"$GT_TMP/undump.rec.out" 2>&1 &
REC_PID=$!
gt_pids+=("$REC_PID")
for i in $(seq 1 200); do
	grep -q "session .* started for uid $UID_U .*process $UPID" "$GT_TMP/daemon.log" && break
	sleep 0.05
done
sleep 0.3
gt_go undump
gt_wait_line undump '^done' 60 || fail daemon_privilege_undumpable "the workload did not finish"
gt_leave undump
wait "$REC_PID"; rc=$?
out=$(cat "$GT_TMP/undump.rec.out")
if [ $rc != 0 ]; then
	fail daemon_privilege_undumpable "rc=$rc: $out"
elif gt_valid daemon_privilege_undumpable "$UDIR/undump.trace"; then
	sleeps=$(count "$UDIR/undump.trace.json" GoSleep)
	# its goroutine ends there (GoEnd), it is not left blocked
	ended=$(python3 -c 'import json,sys; print(all(g["ended"] for g in json.load(open(sys.argv[1]))["goroutines"] if g["tid"] == int(sys.argv[2])))' "$UDIR/undump.trace.json" "$UPID")
	if [ "$sleeps" != 0 ] || ! echo "$out" | grep -q "1 process left the recording"; then
		fail daemon_privilege_undumpable "$sleeps sleeps after PR_SET_DUMPABLE 0 recorded: $out"
	elif [ "$ended" != True ]; then
		fail daemon_privilege_undumpable "the process's goroutine did not end"
	else
		ok daemon_privilege_undumpable
	fi
fi

# --- a root process that becomes the user -------------------------------------------
gt_start_workload drop "$GT_TMP/bin/credchange" --wait "$UID_U:$GID_U" 100000 1000 ||
	{ fail daemon_privilege_setuid_call "no workload"; gt_finish; }
DPID=$(awk '$1 == "pid" { print $2 }' "$GT_TMP/drop.out")
gt_go drop
gt_wait_line drop '^changed' 30 || fail daemon_privilege_setuid_call "the workload did not change"
gt_refused daemon_privilege_setuid_call "not dumpable" \
	as_user "$UCTL" record --daemon --socket "$SOCK" -p "$DPID" -o "$UDIR/drop.trace" -d 1s
kill "$DPID" 2>/dev/null

# --- a member of the user's cgroup execs the setuid program --------------------------
# The user's shell and a root shell in the user's cgroup, each waiting for
# its go: then the user's execs the setuid sleeper, root's a plain one.
CG=$CGMNT/gt_priv_$$
cleanup_cgroup() {
	local p
	while read -r p; do echo "$p" >"$CGMNT/cgroup.procs" 2>/dev/null; done <"$CG/cgroup.procs"
	rmdir "$CG" 2>/dev/null
}
trap 'cleanup_cgroup; gt_cleanup' EXIT
mkdir "$CG" && chown "$USER_NAME" "$CG" "$CG/cgroup.procs"
WAIT_EXEC='echo ready; head -c 1 >/dev/null; exec "$@"'
gt_start_workload cgsuid as_user_bg sh -c "$WAIT_EXEC" sh "$SUID" $N 1000 ||
	{ fail daemon_privilege_cgroup_setuid "no workload"; gt_finish; }
SPID=$WL_PID
gt_start_workload cgroot sh -c "$WAIT_EXEC" sh "$WL/sleeper" 10 1000 ||
	{ fail daemon_privilege_cgroup_setuid "no root workload"; gt_finish; }
RPID=$WL_PID
echo "$SPID" >"$CG/cgroup.procs" && echo "$RPID" >"$CG/cgroup.procs"
as_user_bg "$UCTL" record --daemon --socket "$SOCK" --cgroup "$CG" -o "$UDIR/cgsuid.trace" \
	>"$GT_TMP/cgsuid.rec.out" 2>&1 &
REC_PID=$! # gotracectl itself (as_user_bg execs), for the SIGINT
gt_pids+=("$REC_PID")
for i in $(seq 1 1200); do
	grep -q "session .* started for uid $UID_U .*cgroup .*gt_priv_$$" "$GT_TMP/daemon.log" && break
	sleep 0.05
done
gt_go cgroot
gt_go cgsuid
wait "$SPID" "$RPID"
kill -INT "$REC_PID"
wait "$REC_PID"; rc=$?
out=$(cat "$GT_TMP/cgsuid.rec.out")
if [ $rc != 0 ]; then
	fail daemon_privilege_cgroup_setuid "rc=$rc: $out"
elif gt_valid daemon_privilege_cgroup_setuid "$UDIR/cgsuid.trace"; then
	sleeps=$(count "$UDIR/cgsuid.trace.json" GoSleep)
	# the shell's goroutine (tid SPID) ends at the exec; it is not left
	# running to the end of the trace
	ended=$(python3 -c 'import json,sys; g=[g["ended"] for g in json.load(open(sys.argv[1]))["goroutines"] if g["tid"] == int(sys.argv[2])]; print(len(g) > 0 and all(g))' \
		"$UDIR/cgsuid.trace.json" "$SPID")
	if [ "$sleeps" != 0 ]; then
		fail daemon_privilege_cgroup_setuid "the trace holds $sleeps of the setuid program's $N sleeps"
	elif [ "$ended" != True ]; then
		fail daemon_privilege_cgroup_setuid "the member's goroutine (tid $SPID) did not end at its exec: $out"
	elif ! echo "$out" | grep -q "1 process left the recording"; then
		fail daemon_privilege_cgroup_setuid "the summary does not say that 1 process left: $out"
	else
		ok daemon_privilege_cgroup_setuid
	fi
fi

# --- loopback senders the user may and may not see ------------------------------------
cat >"$GT_TMP/bin/udp_recv.py" <<'EOF2'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print("port", s.getsockname()[1], flush=True)
while True:
    s.recv(64)
EOF2
# udp_send.py PORT STOPFILE: a datagram every 2 ms until STOPFILE exists (60 s at most)
cat >"$GT_TMP/bin/udp_send.py" <<'EOF2'
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.time() + 60
while not os.path.exists(sys.argv[2]) and time.time() < end:
    s.sendto(b"x", ("127.0.0.1", int(sys.argv[1])))
    time.sleep(0.002)
EOF2
as_user_bg /usr/bin/python3 "$GT_TMP/bin/udp_recv.py" >"$GT_TMP/udp.out" 2>&1 &
RPID=$!
gt_pids+=("$RPID")
for _ in $(seq 1 100); do
	PORT=$(awk '/^port /{print $2}' "$GT_TMP/udp.out")
	[ -n "$PORT" ] && break
	sleep 0.1
done
STOP=$GT_TMP/udp.stop
as_user_bg /usr/bin/python3 "$GT_TMP/bin/udp_send.py" "$PORT" "$STOP" &
USEND=$!
/usr/bin/python3 "$GT_TMP/bin/udp_send.py" "$PORT" "$STOP" &
RSEND=$!
gt_pids+=("$USEND" "$RSEND")
out=$(as_user "$UCTL" record --daemon --socket "$SOCK" -p "$RPID" -d 2s -o "$UDIR/lo.trace" 2>&1)
rc=$?
touch "$STOP"
wait "$USEND" "$RSEND"
kill "$RPID" 2>/dev/null
if [ -z "$PORT" ] || [ $rc != 0 ]; then
	fail daemon_privilege_loopback "no recording (port '$PORT', rc=$rc): $out"
elif gt_valid daemon_privilege_loopback "$UDIR/lo.trace"; then
	python3 tests/integration/trace_read.py frames "$UDIR/lo.trace" >"$GT_TMP/lo.frames"
	mine=$(grep -c "	\[loopback from python3 $USEND\]	" "$GT_TMP/lo.frames")
	anon=$(grep -c "	\[loopback\]	" "$GT_TMP/lo.frames")
	roots=$(grep -c "loopback from.* $RSEND[]/]" "$GT_TMP/lo.frames")
	if [ "$mine" -ge 1 ] && [ "$anon" -ge 1 ] && [ "$roots" = 0 ]; then
		ok daemon_privilege_loopback
	else
		fail daemon_privilege_loopback "the user's sender named in $mine stacks (want 1), root's in $roots (want 0), [loopback] in $anon (want 1)"
		grep loopback "$GT_TMP/lo.frames" | sort | uniq -c | head | detail
	fi
fi

gt_finish
