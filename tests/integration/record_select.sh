#!/usr/bin/env bash
# record_select.sh: what perf users select.  -a records a process started
# before and one started after the start; -n NAME catches an existing
# process and a later one of that name and no other; -p PID --children
# records the existing worker tree, and -p PID alone warns about it; -d
# with a bare number is seconds; -a at a real machine's thread counts
# (300 processes of 8 threads) still gives a file every reader accepts.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

CASES="sel_all sel_kthreads sel_name sel_children sel_warning sel_duration sel_scale"
gt_require_bpf $CASES
gt_expect $CASES

# has_pid JSON PID...: a goroutine of each thread id (= pid: one thread).
has_pid() { local name=$1 json=$2; shift 2; gt_truth "$name" tids "$json" "$@"; }
# no_pid JSON PID: no goroutine of that thread id.
no_pid() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));
sys.exit(any(g.get("tid") == int(sys.argv[2]) for g in d.get("goroutines", [])))' "$1" "$2"
}
spawn() { "$@" >/dev/null 2>&1 & gt_pids+=("$!"); LAST=$!; }

# --- -a: before and after ----------------------------------------------
spawn sleep 1000; before=$LAST
t=$GT_TMP/all.trace
if gt_record_bg all -a -o "$t"; then
	spawn sleep 1000; after=$LAST
	sleep 0.5
	gt_stop_record INT
	if gt_valid sel_all "$t" && has_pid sel_all "$t.json" "$before" "$after"; then
		ok sel_all
	fi
else
	fail sel_all "record -a did not start: $(tail -3 "$GT_TMP/all.rec.err")"
fi

# --- -a: kernel threads only when asked ----------------------------------
# ksoftirqd/0 exists on every kernel and runs when CPU 0 serves softirqs;
# its snapshot makes it a goroutine even if it never runs meanwhile.
kt=$GT_TMP/kthreads.trace
if "$GTCTL" record -a --kernel-threads -d 1 -o "$kt" 2>"$GT_TMP/kt.err" &&
	gt_valid sel_kthreads "$kt" &&
	gt_truth sel_kthreads absent "$GT_TMP/all.trace.json" ksoftirqd/0; then
	if $TRUTH absent "$kt.json" ksoftirqd/0 >/dev/null; then
		fail sel_kthreads "no goroutine ksoftirqd/0 with --kernel-threads"
	else
		ok sel_kthreads
	fi
else
	[ -s "$kt" ] || fail sel_kthreads "record -a --kernel-threads failed: $(tail -3 "$GT_TMP/kt.err")"
fi

# --- -n NAME: existing and later, not others ----------------------------
cp /bin/sleep "$GT_TMP/gtselname"
spawn "$GT_TMP/gtselname" 1000; named1=$LAST
spawn sleep 1000; other1=$LAST
t=$GT_TMP/name.trace
if gt_record_bg name -n gtselname -o "$t"; then
	spawn "$GT_TMP/gtselname" 1000; named2=$LAST
	spawn sleep 1000; other2=$LAST
	sleep 0.5
	gt_stop_record INT
	if gt_valid sel_name "$t" && has_pid sel_name "$t.json" "$named1" "$named2"; then
		if no_pid "$t.json" "$other1" && no_pid "$t.json" "$other2"; then
			ok sel_name
		else
			fail sel_name "a process not named gtselname ($other1 or $other2) is in the trace"
		fi
	fi
else
	fail sel_name "record -n did not start: $(tail -3 "$GT_TMP/name.rec.err")"
fi

# --- -p PID --children, and the warning without it ----------------------
bash -c 'sleep 1000 & sleep 1000 & wait' & gt_pids+=("$!"); parent=$!
for i in $(seq 1 100); do
	[ "$(pgrep -P "$parent" | wc -l)" -ge 2 ] && break
	sleep 0.05
done
kids=$(pgrep -P "$parent" | tr '\n' ' ')
t=$GT_TMP/children.trace
if "$GTCTL" record -p "$parent" --children -d 1 -o "$t" 2>"$GT_TMP/children.err"; then
	if gt_valid sel_children "$t" && has_pid sel_children "$t.json" "$parent" $kids; then
		if grep -q 'warning' "$GT_TMP/children.err"; then
			fail sel_children "a warning although --children was given: $(grep warning "$GT_TMP/children.err")"
		else
			ok sel_children
		fi
	fi
else
	fail sel_children "record --children failed: $(tail -3 "$GT_TMP/children.err")"
fi
t=$GT_TMP/warn.trace
"$GTCTL" record -p "$parent" -d 0.5 -o "$t" 2>"$GT_TMP/warn.err"
"$GTCTL" record -p "$before" -d 0.5 -o "$GT_TMP/nowarn.trace" 2>"$GT_TMP/nowarn.err"
if ! grep -q "pid $parent has 2 child processes .*--children" "$GT_TMP/warn.err"; then
	fail sel_warning "no warning about 2 child processes: $(cat "$GT_TMP/warn.err")"
elif grep -q warning "$GT_TMP/nowarn.err"; then
	fail sel_warning "a warning for a process without children: $(cat "$GT_TMP/nowarn.err")"
else
	ok sel_warning
fi

# --- -d 1: seconds; -d 1x: refused with the units named -----------------
t=$GT_TMP/dur.trace
if ! "$GTCTL" record -p "$before" -d 1 -o "$t" 2>"$GT_TMP/dur.err"; then
	fail sel_duration "-d 1 refused: $(tail -2 "$GT_TMP/dur.err")"
elif ! grep -q '(duration' "$GT_TMP/dur.err"; then
	fail sel_duration "-d 1 did not end by duration: $(tail -2 "$GT_TMP/dur.err")"
elif "$GTCTL" record -p "$before" -d 1x -o "$GT_TMP/durx.trace" 2>"$GT_TMP/durx.err"; then
	fail sel_duration "-d 1x accepted"
elif ! grep -q 'ms, s, m or h' "$GT_TMP/durx.err" || [ -e "$GT_TMP/durx.trace" ]; then
	fail sel_duration "-d 1x: units not named, or a file left: $(cat "$GT_TMP/durx.err")"
else
	ok sel_duration
fi

# --- -a at a machine's scale: 300 processes x 8 threads, 2 s ------------
for i in $(seq 1 300); do
	"$WL/idle_threads" 8 >/dev/null 2>&1 & gt_pids+=("$!")
done
for i in $(seq 1 200); do
	[ "$(pgrep -cx idle_threads)" -ge 300 ] && break
	sleep 0.1
done
sleep 1 # every thread created
t=$GT_TMP/scale.trace
if "$GTCTL" record -a -d 2 -o "$t" 2>"$GT_TMP/scale.err"; then
	n=$(sed -n 's/.*recorded \([0-9]*\) threads.*/\1/p' "$GT_TMP/scale.err")
	if [ "${n:-0}" -lt 2400 ]; then
		fail sel_scale "recorded ${n:-no} threads, want at least 2400: $(tail -2 "$GT_TMP/scale.err")"
	elif gt_valid sel_scale "$t"; then
		ok sel_scale
	fi
else
	fail sel_scale "record -a failed: $(tail -3 "$GT_TMP/scale.err")"
fi

gt_finish
