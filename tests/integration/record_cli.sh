#!/usr/bin/env bash
# record_cli.sh: the ways of starting and ending `gotracectl record`, and
# its refusals.  Every file it leaves must pass Go's reader and viewer
# (gocheck.sh) and our checker (inspect); every refusal must say why, exit
# non-zero and leave no file (nor a stray temporary) behind.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

CASES="cli_command cli_command_threads cli_fork_exec cli_fork_exec_self cli_duration
cli_multi_pid cli_exit_mid cli_all_exited cli_sigint cli_sigterm
cli_bad_pid cli_kernel_thread cli_unwritable cli_unknown_flag cli_bad_duration cli_not_root
cli_verbose_timing"
gt_require_bpf $CASES
gt_expect $CASES

# has_tids CASE FILE.json TID...: the trace has goroutines for these threads.
has_tids() { gt_truth "$1" tids "$2" "${@:3}"; }

# --- record -- CMD ------------------------------------------------------
# The command's threads, each ONE goroutine named by its last comm: the
# forked recorder child that execs the command is not a "gotracectl"
# goroutine, nor is the exec'd name ("sleeper" binary -> wl-sleeper) a
# second one.
t=$GT_TMP/cmd.trace
if "$GTCTL" record -o "$t" -- "$WL/sleeper" 20 1000 >"$GT_TMP/cmd.out" 2>"$GT_TMP/cmd.err"; then
	if gt_valid cli_command "$t" &&
		has_tids cli_command "$t.json" $(awk '$1 == "thread" { print $2 }' "$GT_TMP/cmd.out") &&
		gt_truth cli_command threads "$t.json" "$GT_TMP/cmd.out" &&
		gt_truth cli_command absent "$t.json" gotracectl &&
		gt_truth cli_command blocks "$t.json" sleeper sleep 20 21; then
		if grep -qE '^gotracectl: recorded [0-9]+ threads, [0-9]+ events, [0-9]+ bytes, [0-9]+ dropped' "$GT_TMP/cmd.err"; then
			ok cli_command
		else
			fail cli_command "no summary line on stderr: $(tail -2 "$GT_TMP/cmd.err")"
		fi
	fi
else
	fail cli_command "record -- sleeper exited $?: $(tail -5 "$GT_TMP/cmd.err")"
fi

# Threads created and joined while recording, each renaming itself right
# after pthread_create: each exactly ONE goroutine, of its new name, for
# our checker and on Go's Goroutines page; no "gotracectl" goroutine.
t=$GT_TMP/threads.trace
if "$GTCTL" record -o "$t" -- "$WL/threads" 8 >"$GT_TMP/threads.out" 2>"$GT_TMP/threads.err"; then
	gt_valid cli_command_threads "$t" &&
		has_tids cli_command_threads "$t.json" $(awk '$1 == "thread" { print $2 }' "$GT_TMP/threads.out") &&
		gt_truth cli_command_threads names "$t.json" wl-threads child-0 child-7 &&
		gt_truth cli_command_threads threads "$t.json" "$GT_TMP/threads.out" &&
		gt_truth cli_command_threads absent "$t.json" gotracectl threads &&
		{ gt_viewer_pages "$t" || { fail cli_command_threads "go tool trace pages failed"; false; }; } &&
		gt_truth cli_command_threads group_sizes "$t.goroutines.html" wl-threads=1 \
			child-0=1 child-3=1 child-7=1 gotracectl=0 threads=0 &&
		ok cli_command_threads
else
	fail cli_command_threads "record -- threads exited $?: $(tail -5 "$GT_TMP/threads.err")"
fi

# fork + exec of /bin/true, then of itself: the children appear, each as
# one goroutine named after its exec (true) or its rename after exec
# (fe-child).
for mode in "" self; do
	name=cli_fork_exec${mode:+_$mode}
	t=$GT_TMP/fe$mode.trace
	if "$GTCTL" record -o "$t" -- "$WL/forkexec" 3 $mode >"$GT_TMP/fe$mode.out" 2>"$GT_TMP/fe$mode.err"; then
		cname=true
		[ "$mode" = self ] && cname=fe-child
		awk -v n="$cname" '$1 == "child" { print "thread", $2, n }' "$GT_TMP/fe$mode.out" >"$GT_TMP/fe$mode.children"
		gt_valid "$name" "$t" &&
			has_tids "$name" "$t.json" $(awk '$1 == "child" || $1 == "thread" { print $2 }' "$GT_TMP/fe$mode.out") &&
			gt_truth "$name" threads "$t.json" "$GT_TMP/fe$mode.children" &&
			gt_truth "$name" absent "$t.json" gotracectl &&
			ok "$name"
	else
		fail "$name" "record -- forkexec exited $?: $(tail -5 "$GT_TMP/fe$mode.err")"
	fi
done

# --- record -p with -d: ends by itself on time ----------------------------
gt_start_workload dur "$WL/sleeper" --wait 100000 1000
t=$GT_TMP/dur.trace
gt_go dur
# (ending on time, not after it: the span of the trace, record_window.sh;
# the wall time also counts detaching the probes, seconds on a busy machine)
if "$GTCTL" record -p "$WL_PID" -d 1500ms -o "$t" 2>"$GT_TMP/dur.rec.err"; then
	if ! grep -q ' in 1\.50s (duration' "$GT_TMP/dur.rec.err"; then
		fail cli_duration "did not end by its 1.5 s duration: $(tail -1 "$GT_TMP/dur.rec.err")"
	elif gt_valid cli_duration "$t" && gt_truth cli_duration blocks "$t.json" sleeper sleep 100 3000; then
		ok cli_duration
	fi
else
	fail cli_duration "record -p -d 1500ms exited $?: $(tail -5 "$GT_TMP/dur.rec.err")"
fi
kill "$WL_PID"; wait "$WL_PID" 2>/dev/null

# --- several pids, one of which exits mid-recording --------------------------
gt_start_workload m1 "$WL/blockread" --wait 200 2000; p1=$WL_PID
gt_start_workload m2 "$WL/exitmid" --wait 300 2; p2=$WL_PID
t=$GT_TMP/multi.trace
if gt_record_bg multi -p "$p1,$p2" -o "$t"; then
	gt_go m1; gt_go m2
	gt_wait_line m1 '^done' 30
	wait "$p2"
	gt_stop_record INT; rc=$?
	gt_leave m1; wait "$p1"
	if [ "$rc" != 0 ]; then
		fail cli_multi_pid "record -p $p1,$p2 exited $rc: $(tail -5 "$GT_TMP/multi.rec.err")"
	elif gt_valid cli_multi_pid "$t"; then
		has_tids cli_multi_pid "$t.json" $(awk '$1 == "thread" { print $2 }' "$GT_TMP/m1.out") &&
			ok cli_multi_pid
		has_tids cli_exit_mid "$t.json" $(awk '$1 == "thread" { print $2 }' "$GT_TMP/m2.out") &&
			gt_truth cli_exit_mid names "$t.json" exit-0 exit-1 reader feeder &&
			ok cli_exit_mid
	fi
else
	fail cli_multi_pid "record -p $p1,$p2 exited at start: $(tail -5 "$GT_TMP/multi.rec.err")"
fi

# --- the only target exits: the recording ends by itself -------------------
gt_start_workload alone "$WL/exitmid" --wait 400 3
t=$GT_TMP/alone.trace
if gt_record_bg alone -p "$WL_PID" -o "$t"; then
	gt_go alone
	for _ in $(seq 1 100); do kill -0 "$REC_PID" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$REC_PID" 2>/dev/null; then
		fail cli_all_exited "still recording 10 s after its only target exited"
		gt_stop_record INT
	elif ! wait "$REC_PID"; then
		fail cli_all_exited "record exited non-zero: $(tail -5 "$GT_TMP/alone.rec.err")"
	else
		gt_valid cli_all_exited "$t" &&
			has_tids cli_all_exited "$t.json" $(awk '$1 == "thread" { print $2 }' "$GT_TMP/alone.out") &&
			ok cli_all_exited
	fi
else
	fail cli_all_exited "record exited at start: $(tail -5 "$GT_TMP/alone.rec.err")"
fi

# --- Ctrl-C and SIGTERM leave a valid file ---------------------------------
for sig in INT TERM; do
	name=cli_sig${sig,,}
	[ $sig = INT ] && name=cli_sigint
	gt_start_workload "sig$sig" "$WL/spin" --wait 3 60000
	t=$GT_TMP/sig$sig.trace
	if gt_record_bg "sig$sig" -p "$WL_PID" -o "$t"; then
		gt_go "sig$sig"
		sleep 1
		gt_stop_record $sig; rc=$?
		kill "$WL_PID"; wait "$WL_PID" 2>/dev/null
		if [ "$rc" != 0 ]; then
			fail "$name" "record exited $rc on SIG$sig: $(tail -5 "$GT_TMP/sig$sig.rec.err")"
		else
			gt_valid "$name" "$t" && gt_truth "$name" names "$t.json" spin-0 spin-1 spin-2 && ok "$name"
		fi
	else
		fail "$name" "record exited at start: $(tail -5 "$GT_TMP/sig$sig.rec.err")"
	fi
done

# --- refusals ----------------------------------------------------------------
# refuse CASE WANT_RC MSG_REGEX ARGS...: record ARGS exits WANT_RC ("nz" =
# any non-zero), says something matching MSG_REGEX on stderr, and the
# output directory stays empty.
refuse() {
	local name=$1 want=$2 re=$3 rc dir=$GT_TMP/refuse-$1
	shift 3
	mkdir -p "$dir"
	timeout 20 "$GTCTL" record "$@" >"$dir.out" 2>"$dir.err"
	rc=$?
	if [ "$rc" = 0 ] || [ "$rc" = 124 ] || { [ "$want" != nz ] && [ "$rc" != "$want" ]; }; then
		fail "$name" "exit status $rc, want ${want/nz/non-zero}; stderr: $(head -3 "$dir.err")"
	elif ! grep -qiE "$re" "$dir.err"; then
		fail "$name" "message does not say why (want /$re/): $(head -3 "$dir.err")"
	elif [ -n "$(ls -A "$dir")" ]; then
		fail "$name" "left files behind: $(ls -A "$dir")"
	else
		ok "$name"
	fi
}

nopid=$(( $(cat /proc/sys/kernel/pid_max) - 1 ))
while [ -e "/proc/$nopid" ]; do nopid=$((nopid - 1)); done
refuse cli_bad_pid 1 "no such process|does not exist|not found|$nopid" \
	-p "$nopid" -d 1s -o "$GT_TMP/refuse-cli_bad_pid/x.trace"
refuse cli_kernel_thread 1 "kernel thread" \
	-p 2 -d 1s -o "$GT_TMP/refuse-cli_kernel_thread/x.trace"
refuse cli_unwritable nz "no such file|not writable|cannot|permission|read-only" \
	-p $$ -d 1s -o "$GT_TMP/refuse-cli_unwritable/missing-dir/x.trace"
refuse cli_unknown_flag 2 "unknown|unrecognized|invalid option|bogus" \
	--bogus -p $$ -o "$GT_TMP/refuse-cli_unknown_flag/x.trace"
refuse cli_bad_duration 2 "duration|5parsecs" \
	-d 5parsecs -p $$ -o "$GT_TMP/refuse-cli_bad_duration/x.trace"

# Not root: nobody (65534) may not load BPF, nor trace our shell.
dir=$GT_TMP/refuse-cli_not_root
mkdir -p "$dir" && chown 65534 "$dir" && chmod 755 "$GT_TMP"
if [ -n "$(command -v setpriv)" ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$(realpath "$GTCTL")" record --standalone -p $$ -d 1s -o "$dir/x.trace" >"$dir.out" 2>"$dir.err"
	rc=$?
	if [ "$rc" = 0 ]; then
		fail cli_not_root "recorded as uid 65534"
	elif ! grep -qiE "root|permission|privilege|not permitted|CAP_" "$dir.err"; then
		fail cli_not_root "message does not say why: $(head -3 "$dir.err")"
	elif [ -n "$(ls -A "$dir")" ]; then
		fail cli_not_root "left files behind: $(ls -A "$dir")"
	else
		ok cli_not_root
	fi
else
	fail cli_not_root "setpriv (util-linux) not installed"
fi

# --- record -v: where starting and stopping went ------------------------
# Two lines, each a total and its phases in ms; the phases run one after
# another inside the total, so (to the print's rounding) they never sum
# to more than it.  No figure is held to a speed.
t=$GT_TMP/verbose.trace
if "$GTCTL" record --standalone -v -o "$t" -- "$WL/sleeper" 5 1000 >"$GT_TMP/verbose.out" 2>"$GT_TMP/verbose.err"; then
	why=$(python3 - "$GT_TMP/verbose.err" <<'PY'
import re, sys
lines = open(sys.argv[1], errors="replace").read().splitlines()
for what, must in (("start", ("BPF load", "CO-RE relocation and verifier", "attach",
                              "targets (/proc)", "memory tracking")),
                   ("stop", ("noticing the end", "flush", "detach", "BPF unload",
                             "file synced and renamed"))):
    got = [l for l in lines if l.startswith(f"gotracectl: {what} ")]
    if len(got) != 1:
        print(f"{len(got)} '{what}' lines"); sys.exit()
    total = float(got[0].split()[2])
    body = got[0].split(": ", 2)[2]
    body = re.sub(r"\([^)]*[0-9][^)]*\)", "", body)  # the load's parts, inside it
    parts = {m.group(1).strip(): float(m.group(2))
             for m in re.finditer(r"([a-zA-Z/() -]+?) ([0-9]+\.[0-9])", body)}
    for m in must:
        if m not in parts and m not in got[0]:
            print(f"{what}: no '{m}' in: {got[0]}"); sys.exit()
    s = sum(parts.values())
    if s > total + 0.1 * len(parts) + 0.1:
        print(f"{what}: phases sum to {s:.1f} ms, more than the {total:.1f} ms total: {got[0]}")
        sys.exit()
PY
)
	if [ -n "$why" ]; then
		fail cli_verbose_timing "$why"
	elif gt_valid cli_verbose_timing "$t"; then
		ok cli_verbose_timing
	fi
else
	fail cli_verbose_timing "record -v exited $?: $(grep -v '^libbpf' "$GT_TMP/verbose.err" | tail -3)"
fi

gt_finish
