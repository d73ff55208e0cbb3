#!/usr/bin/env bash
# record_honest.sh: no silent empty answers, no false warnings.
#
#  - report: a --thread no thread has, a --since past the trace's end and
#    --folded=cpu on a recording without samples each exit 1 and say why
#    (the span, the thread names, --cpu-profile), never empty tables;
#    --thread still takes a name and a tid.
#  - record -n NAME with no process of that name exits 1 naming it and
#    leaves no file; with --wait it records (the ones that exec it later).
#  - record -p PARENT,CHILD1,CHILD2 does not warn that PARENT's children are
#    left out (they are listed); -p PARENT alone still does (record_select).
#  - record -a does not record the recorder itself, nor, in daemon mode,
#    the gotracectl that asked and waits on the socket.
#  - a wrong --cgroup (missing, relative or absolute, a file of the cgroup
#    mount, a directory that is no cgroup v2), in daemon and embedded mode,
#    gives exactly one error line, exit 1, and leaves an existing -o FILE
#    as it was.
#  - a user who may not reach the socket, with no daemon running, is told
#    that no daemon runs and how to start one, not to join a group.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

CASES="honest_thread_none honest_thread_tid honest_window_past_end honest_folded_cpu_none
honest_name_none honest_name_wait honest_listed_children honest_all_not_self
honest_no_daemon_user honest_all_not_client_daemon honest_cgroup_one_error"
# shellcheck disable=SC2086
gt_require_bpf $CASES
# shellcheck disable=SC2086
gt_expect $CASES

# --- report on a 1 s recording of one sleeping thread ------------------------
t=$GT_TMP/sleep.trace
if ! "$GTCTL" record -q -d 1s -o "$t" -- "$WL/sleeper" 20 100000 2>"$GT_TMP/sleep.err"; then
	for c in honest_thread_none honest_thread_tid honest_window_past_end honest_folded_cpu_none; do
		fail $c "record failed: $(tail -3 "$GT_TMP/sleep.err")"
	done
else
	gt_valid honest_thread_none "$t"
	out=$("$GTCTL" report --thread 99999999 "$t" 2>&1 >"$GT_TMP/th.out"); rc=$?
	if [ $rc = 1 ] && [ ! -s "$GT_TMP/th.out" ] && echo "$out" | grep -q "no thread .*'99999999'.*sleeper (tid"; then
		ok honest_thread_none
	else
		fail honest_thread_none "rc=$rc, stdout $(wc -c <"$GT_TMP/th.out") bytes: $out"
	fi
	tid=$("$GTCTL" report --json "$t" | python3 -c 'import json,sys; print([x["tid"] for x in json.load(sys.stdin)["threads"] if x["tid"]][0])')
	if "$GTCTL" report --thread "$tid" "$t" >"$GT_TMP/tid.out" 2>&1 && grep -q sleeper "$GT_TMP/tid.out"; then
		ok honest_thread_tid
	else
		fail honest_thread_tid "--thread $tid: $(head -5 "$GT_TMP/tid.out")"
	fi
	out=$("$GTCTL" report --since 10s "$t" 2>&1 >"$GT_TMP/win.out"); rc=$?
	if [ $rc = 1 ] && [ ! -s "$GT_TMP/win.out" ] && echo "$out" | grep -q "after the end of .*spans 0s to 1\.0"; then
		ok honest_window_past_end
	else
		fail honest_window_past_end "rc=$rc, stdout $(wc -c <"$GT_TMP/win.out") bytes: $out"
	fi
	out=$("$GTCTL" report --folded=cpu "$t" 2>&1 >"$GT_TMP/fold.out"); rc=$?
	if [ $rc = 1 ] && echo "$out" | grep -q "no CPU samples (record with --cpu-profile)"; then
		ok honest_folded_cpu_none
	else
		fail honest_folded_cpu_none "rc=$rc: $out"
	fi
fi

# --- record -n with no such process, and with --wait -------------------------
out=$("$GTCTL" record -n gt-no-such-prog -d 1s -o "$GT_TMP/none.trace" 2>&1); rc=$?
if [ $rc = 1 ] && [ ! -e "$GT_TMP/none.trace" ] && echo "$out" | grep -q "no process is named gt-no-such-prog.*--wait"; then
	ok honest_name_none
else
	fail honest_name_none "rc=$rc, file $(ls "$GT_TMP/none.trace" 2>&1): $out"
fi
if "$GTCTL" record -q -n gt-no-such-prog --wait -d 0.5 -o "$GT_TMP/wait.trace" 2>"$GT_TMP/wait.err"; then
	gt_valid honest_name_wait "$GT_TMP/wait.trace" && ok honest_name_wait
else
	fail honest_name_wait "--wait refused: $(cat "$GT_TMP/wait.err")"
fi

# --- -p PARENT,CHILD,CHILD: the children are not "left out" -------------------
bash -c 'sleep 1000 & sleep 1000 & wait' >/dev/null 2>&1 & gt_pids+=("$!"); parent=$!
for i in $(seq 1 100); do
	[ "$(pgrep -P "$parent" | wc -l)" -ge 2 ] && break
	sleep 0.05
done
kids=$(pgrep -P "$parent" | paste -sd,)
for k in ${kids//,/ }; do gt_pids+=("$k"); done
if "$GTCTL" record -q -p "$parent,$kids" -d 0.5 -o "$GT_TMP/listed.trace" 2>"$GT_TMP/listed.err"; then
	if grep -q warning "$GT_TMP/listed.err"; then
		fail honest_listed_children "warned though $kids are listed: $(grep warning "$GT_TMP/listed.err")"
	else
		ok honest_listed_children
	fi
else
	fail honest_listed_children "record failed: $(tail -3 "$GT_TMP/listed.err")"
fi

# --- -a leaves the recorder out ---------------------------------------------
"$GTCTL" record -q -a -d 0.5 -o "$GT_TMP/all.trace" 2>"$GT_TMP/all.err" & rec=$!
gt_pids+=("$rec")
if wait "$rec" && gt_valid honest_all_not_self "$GT_TMP/all.trace"; then
	if python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));
sys.exit(any(g.get("tid") == int(sys.argv[2]) for g in d.get("goroutines", [])))' "$GT_TMP/all.trace.json" "$rec"; then
		ok honest_all_not_self
	else
		fail honest_all_not_self "the recorder (pid $rec) is in its own -a trace"
	fi
else
	[ -s "$GT_TMP/all.trace" ] || fail honest_all_not_self "record -a failed: $(tail -3 "$GT_TMP/all.err")"
fi

# --- daemon mode: -a leaves out the waiting client too ------------------------
gt_start_daemon
"$GTCTL" record -q --socket "$SOCK" -a -d 0.5 -o "$GT_TMP/alld.trace" 2>"$GT_TMP/alld.err" & rec=$!
gt_pids+=("$rec")
if wait "$rec" && gt_valid honest_all_not_client_daemon "$GT_TMP/alld.trace"; then
	why=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
gs = d.get("goroutines", [])
if not gs: print("no goroutine at all")
elif any(g.get("tid") == int(sys.argv[2]) for g in gs): print("the client (pid %s) is in its own -a trace" % sys.argv[2])
elif any(g.get("tid") == int(sys.argv[3]) for g in gs): print("gotraced (pid %s) is in the trace" % sys.argv[3])' \
		"$GT_TMP/alld.trace.json" "$rec" "$DAEMON_PID")
	gt_report honest_all_not_client_daemon "$why"
else
	[ -s "$GT_TMP/alld.trace" ] || fail honest_all_not_client_daemon "record -a failed: $(tail -3 "$GT_TMP/alld.err")"
fi

# --- a wrong cgroup: one error, in both modes, for each kind of mistake -------
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
printf 'keep me' >"$GT_TMP/cg.trace"
why=""
for mode in "--socket $SOCK" --standalone; do
	for cg in gt-no-such-cgroup/x "$cg2/gt-no-such-cgroup" "$cg2/cgroup.procs" /etc; do
		# shellcheck disable=SC2086
		out=$("$GTCTL" record $mode --cgroup "$cg" -d 0.5 -o "$GT_TMP/cg.trace" 2>&1 >/dev/null); rc=$?
		n=$(printf '%s\n' "$out" | grep -c .)
		if [ "$rc" != 1 ] || [ "$n" != 1 ] || ! grep -q "$cg\|${cg##*/}" <<<"$out"; then
			why="$why [${mode%% *} --cgroup $cg: rc=$rc, $n lines: $(echo $out)]"
		fi
		[ "$(cat "$GT_TMP/cg.trace")" = "keep me" ] || why="$why [${mode%% *} --cgroup $cg changed -o FILE]"
	done
done
ls "$GT_TMP"/cg.trace?* >/dev/null 2>&1 && why="$why [files left: $(ls "$GT_TMP"/cg.trace?*)]"
gt_report honest_cgroup_one_error "$why"

# --- a user, no daemon, a socket out of reach ------------------------------------
# (the installed /run/gotraced is 0750 root:gotrace: connect says EACCES
# whether or not a daemon listens)
mkdir -p "$GT_TMP/bin" "$GT_TMP/closed" && chmod 0700 "$GT_TMP/closed"
# the binary itself (with GT_GO_VERSION $GTCTL is a wrapper script, which
# the copy would leave behind: its --go-version is given here instead)
cp "${GT_REAL_GTCTL:-$GTCTL}" "$GT_TMP/bin/gotracectl" && chmod 0755 "$GT_TMP" "$GT_TMP/bin"
# In a PID namespace of its own with its own /proc: no gotraced runs there,
# whatever runs on this machine.
out=$(cd / && unshare --pid --fork --mount-proc setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
	"$GT_TMP/bin/gotracectl" record ${GT_GO_VERSION:+--go-version "$GT_GO_VERSION"} --socket "$GT_TMP/closed/gotraced.sock" -p 1 -d 1s \
	-o /dev/shm/gt-honest-$$.trace 2>&1); rc=$?
rm -f /dev/shm/gt-honest-$$.trace
if [ $rc = 1 ] && echo "$out" | grep -q "no gotraced daemon is running.*start it.*--standalone" &&
	! echo "$out" | grep -q "group gotrace"; then
	ok honest_no_daemon_user
else
	fail honest_no_daemon_user "rc=$rc: $out"
fi
gt_finish
