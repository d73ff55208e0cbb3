#!/usr/bin/env bash
# daemon_ptrace.sh: a non-root session holds only what its owner could
# ptrace (common/ptrace_rule.h), whatever way a process enters it:
#  - --children: a set-user-ID root child that the user's process started
#    before the recording is not in the trace (no TID, no name, no runs),
#    while the user's own child beside it is, whole;
#  - --cgroup: a root process moved into the user's cgroup, and a process
#    with the user's ids but extra capabilities, are not in the trace,
#    while the user's own process in the cgroup is;
#  - -p of the capability-holding process is refused, naming the reason;
#  - Yama's ptrace_scope 1 (where the kernel has Yama): -p of a process
#    that is not the client's descendant is refused, `-- CMD` records.
# A trace is searched by TID (inspect --json) and for the programs' names
# in its bytes (string tables).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

USER_NAME=gt_test_user
LONG=100000 # sleeps of 1 ms: outlives every recording; killed at the end

gt_require_daemon daemon_ptrace
gt_expect daemon_ptrace_children_setuid daemon_ptrace_children_own daemon_ptrace_cgroup_root \
	daemon_ptrace_cgroup_caps daemon_ptrace_cgroup_own daemon_ptrace_caps_pid

gt_need_cgroup2 daemon_ptrace

gt_start_daemon
gt_user_env daemon_ptrace
UID_U=$(id -u "$USER_NAME")
GID_U=$(id -g "$USER_NAME")
BIN=$GT_TMP/bin
# one sleeper per role, named by its program (in its command line: the
# sleeper names its threads wl-sleeper and sleeper)
for n in gtpt_suid gtpt_own gtpt_root gtpt_caps gtpt_mine; do
	cp "$WL/sleeper" "$BIN/$n"
done
chown root:root "$BIN/gtpt_suid" && chmod 4755 "$BIN/gtpt_suid"
if findmnt -no OPTIONS --target "$BIN/gtpt_suid" | grep -qw nosuid; then
	fail daemon_ptrace "$GT_TMP is mounted nosuid: no setuid test possible"
	gt_finish
fi

BASE=$CGMNT/gt_it_ptrace_$$
# Yama's scope 0 for the cases before the Yama one (a distribution may
# default to 1, where -p of a sibling is refused), put back at the end
YAMA=/proc/sys/kernel/yama/ptrace_scope
OLD_SCOPE=
if [ -e "$YAMA" ]; then
	OLD_SCOPE=$(cat "$YAMA")
	echo 0 >"$YAMA" 2>/dev/null ||
		{ fail daemon_ptrace "cannot set $YAMA to 0 (it is $OLD_SCOPE)"; gt_finish; }
fi
cleanup_all() {
	local p
	[ -n "$OLD_SCOPE" ] && echo "$OLD_SCOPE" >"$YAMA"
	if [ -d "$BASE" ]; then
		while read -r p; do echo "$p" >"$CGMNT/cgroup.procs" 2>/dev/null; done <"$BASE/cgroup.procs"
		rmdir "$BASE" 2>/dev/null
	fi
	gt_cleanup
}
trap cleanup_all EXIT

# tids PID: the thread ids of PID, comma-separated
tids() { ls "/proc/$1/task" 2>/dev/null | paste -sd, -; }

# absent TRACE TIDS PROG: why TRACE shows any of TIDS or PROG's name
# (empty: it shows none).  The JSON is gt_valid's.
absent() {
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1] + ".json"))
tids = {int(t) for t in sys.argv[2].split(",") if t}
seen = [g for g in d["goroutines"] if g.get("tid") in tids]
if seen:
    print("goroutines of the forbidden process: %s" % ", ".join(
        "G%d %s tid %d, %d starts" % (g["id"], g["name"], g["tid"], g["starts"]) for g in seen))
elif sys.argv[3].encode() in open(sys.argv[1], "rb").read():
    print("the name %s is in the trace" % sys.argv[3])
EOF
}

# present TRACE TIDS: why TRACE does not hold the threads TIDS, each
# started and sleeping (empty: it does)
present() {
	python3 - "$1.json" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
tids = [int(t) for t in sys.argv[2].split(",") if t]
by = {g.get("tid"): g for g in d["goroutines"]}
missing = [t for t in tids if t not in by]
if missing:
    print("threads %s of the user's own process are not in the trace" % missing)
elif not any(by[t]["blocks"].get("sleep", 0) for t in tids):
    print("the user's own process is in the trace but none of its sleeps")
EOF
}

# wait_threads PID...: until each PID has its sleeper thread (the second
# task: the one that sleeps)
wait_threads() {
	local p i
	for p in "$@"; do
		for i in $(seq 1 600); do
			[ "$(ls "/proc/$p/task" 2>/dev/null | wc -l)" -ge 2 ] && break
			sleep 0.05
		done
	done
}

# --- --children: a set-user-ID child started before the recording ----------------
# (as_user_bg: $! is the process, not a subshell)
as_user_bg sh -c '"$1" '$LONG' 1000 & "$2" '$LONG' 1000 & wait' \
	sh "$BIN/gtpt_suid" "$BIN/gtpt_own" &
SH=$!
gt_pids+=("$SH")
for i in $(seq 1 600); do
	SUIDP=$(pgrep -P "$SH" -f gtpt_suid) && OWNP=$(pgrep -P "$SH" -f gtpt_own) && break
	sleep 0.05
done
if [ -z "${SUIDP:-}" ] || [ -z "${OWNP:-}" ]; then
	fail daemon_ptrace_children_setuid "the user's children did not start"
	fail daemon_ptrace_children_own "the user's children did not start"
else
	gt_pids+=("$SUIDP" "$OWNP")
	wait_threads "$SUIDP" "$OWNP"
	SUID_TIDS=$(tids "$SUIDP") OWN_TIDS=$(tids "$OWNP")
	out=$(as_user "$UCTL" record --daemon --socket "$SOCK" -p "$SH" --children -d 2s \
		-o "$UDIR/children.trace" 2>&1); rc=$?
	if [ $rc != 0 ]; then
		fail daemon_ptrace_children_setuid "rc=$rc: $out"
		fail daemon_ptrace_children_own "rc=$rc: $out"
	elif gt_valid daemon_ptrace_children_setuid "$UDIR/children.trace"; then
		why=$(absent "$UDIR/children.trace" "$SUID_TIDS" gtpt_suid)
		[ -z "$why" ] && ! echo "$out" | grep -q "1 process not recorded" &&
			why="the summary does not say a process was left out: $out"
		gt_report daemon_ptrace_children_setuid "$why"
		gt_report daemon_ptrace_children_own "$(present "$UDIR/children.trace" "$OWN_TIDS")"
	else
		fail daemon_ptrace_children_own "no valid trace"
	fi
fi
kill "$SH" "${SUIDP:-}" "${OWNP:-}" 2>/dev/null

# --- -p of a process with the user's ids and extra capabilities ---------------------
setpriv --reuid="$UID_U" --regid="$GID_U" --clear-groups --inh-caps +sys_nice \
	--ambient-caps +sys_nice -- "$BIN/gtpt_caps" $LONG 1000 &
CAPP=$!
gt_pids+=("$CAPP")
wait_threads "$CAPP"
if ! grep -q '^CapPrm:.*[1-9a-f]' "/proc/$CAPP/status"; then
	fail daemon_ptrace_caps_pid "setpriv gave the process no capability: $(grep ^Cap "/proc/$CAPP/status")"
else
	gt_refused daemon_ptrace_caps_pid "holds capabilities" \
		as_user "$UCTL" record --daemon --socket "$SOCK" -p "$CAPP" -d 1s -o "$UDIR/caps.trace"
fi

# --- --cgroup: root's process and the capability holder in the user's cgroup -------
mkdir "$BASE" && chown "$USER_NAME" "$BASE" "$BASE/cgroup.procs"
"$BIN/gtpt_root" $LONG 1000 &
ROOTP=$!
gt_pids+=("$ROOTP")
as_user_bg "$BIN/gtpt_mine" $LONG 1000 &
MINEP=$!
gt_pids+=("$MINEP")
wait_threads "$ROOTP" "$MINEP"
for p in "$ROOTP" "$CAPP" "$MINEP"; do echo "$p" >"$BASE/cgroup.procs"; done
ROOT_TIDS=$(tids "$ROOTP") CAP_TIDS=$(tids "$CAPP") MINE_TIDS=$(tids "$MINEP")
out=$(as_user "$UCTL" record --daemon --socket "$SOCK" --cgroup "$BASE" -d 2s \
	-o "$UDIR/cgroup.trace" 2>&1); rc=$?
if [ $rc != 0 ]; then
	for c in daemon_ptrace_cgroup_root daemon_ptrace_cgroup_caps daemon_ptrace_cgroup_own; do
		fail $c "rc=$rc: $out"
	done
elif gt_valid daemon_ptrace_cgroup_root "$UDIR/cgroup.trace"; then
	gt_report daemon_ptrace_cgroup_root "$(absent "$UDIR/cgroup.trace" "$ROOT_TIDS" gtpt_root)"
	gt_report daemon_ptrace_cgroup_caps "$(absent "$UDIR/cgroup.trace" "$CAP_TIDS" gtpt_caps)"
	gt_report daemon_ptrace_cgroup_own "$(present "$UDIR/cgroup.trace" "$MINE_TIDS")"
else
	fail daemon_ptrace_cgroup_caps "no valid trace"
	fail daemon_ptrace_cgroup_own "no valid trace"
fi
kill "$ROOTP" "$MINEP" "$CAPP" 2>/dev/null

# --- Yama's ptrace_scope 1, set for the test and put back ---------------------------
if [ ! -e "$YAMA" ]; then
	echo "skip daemon_ptrace_yama: this kernel has no Yama ($YAMA); test_ptrace_rule covers the rule"
else
	gt_expect daemon_ptrace_yama_sibling daemon_ptrace_yama_child
	as_user_bg "$BIN/gtpt_mine" $LONG 1000 &
	SIB=$!
	gt_pids+=("$SIB")
	if ! echo 1 >"$YAMA"; then
		fail daemon_ptrace_yama_sibling "cannot set $YAMA to 1 (it was $OLD_SCOPE)"
		fail daemon_ptrace_yama_child "cannot set $YAMA to 1"
	else
		gt_refused daemon_ptrace_yama_sibling "ptrace_scope is 1" \
			as_user "$UCTL" record --daemon --socket "$SOCK" -p "$SIB" -d 1s \
			-o "$UDIR/yama.trace"
		out=$(as_user "$UCTL" record --daemon --socket "$SOCK" -o "$UDIR/yama_child.trace" \
			-- "$BIN/gtpt_mine" 20 1000 2>&1); rc=$?
		if [ $rc != 0 ]; then
			fail daemon_ptrace_yama_child "rc=$rc: $out"
		elif gt_valid daemon_ptrace_yama_child "$UDIR/yama_child.trace"; then
			n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counts"].get("GoSleep", 0))' \
				"$UDIR/yama_child.trace.json")
			if [ "$n" -ge 20 ]; then ok daemon_ptrace_yama_child
			else fail daemon_ptrace_yama_child "$n of 20 sleeps recorded"; fi
		fi
		echo 0 >"$YAMA"
	fi
	kill "$SIB" 2>/dev/null
fi

gt_finish
