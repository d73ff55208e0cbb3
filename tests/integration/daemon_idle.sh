#!/usr/bin/env bash
# daemon_idle.sh: an idle gotraced must cost the machine nothing.  Its BPF
# programs stay loaded (load errors show at start) but none is attached
# while no session records: no BPF link in the daemon, and its sched_switch
# program never runs.  A session attaches them, before it takes its
# snapshot; the last session to end detaches them; overlapping sessions
# keep them until the second one ends; the syscall-entry program only while
# a session wants entries.  A failed attach fails only that session, leaves
# no link, and the next session works.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

gt_require_daemon daemon_idle
gt_expect daemon_idle_at_start daemon_idle_loaded daemon_idle_no_runs daemon_idle_one_attached \
	daemon_idle_one_trace daemon_idle_after_one daemon_idle_overlap_attached daemon_idle_overlap \
	daemon_idle_after_overlap daemon_idle_syscalls daemon_idle_after_syscalls \
	daemon_idle_attach_fails daemon_idle_exit
command -v bpftool >/dev/null || { fail daemon_idle "bpftool not installed (make deps)"; gt_finish; }

# daemon_links: the programs behind the daemon's BPF links (one name a
# line), from its own descriptors: other tracers on the machine (tests
# running in parallel) do not count.  Perf events (CPU samples) too.
daemon_links() {
	local f ids=""
	for f in /proc/"$DAEMON_PID"/fd/*; do
		case $(readlink "$f" 2>/dev/null) in
		*bpf?link*)
			ids="$ids $(awk '$1 == "prog_id:" { print $2 }' "/proc/$DAEMON_PID/fdinfo/${f##*/}" 2>/dev/null)" ;;
		*perf_event*) echo perf_event ;;
		esac
	done
	[ -n "$ids" ] || return 0
	# one bpftool call: each one walks every process for its pids column
	bpftool prog show 2>/dev/null | awk -v ids="$ids" '
		BEGIN { n = split(ids, v, " "); for (i = 1; i <= n; i++) want[v[i]] = 1 }
		/^[0-9]+: / { id = $1; sub(":", "", id)
			if (id in want) { for (i = 1; i < NF; i++) if ($i == "name") print $(i + 1); delete want[id] } }
		END { for (id in want) print "prog" id }'
}

# The daemon's loaded gt_sched_switch program (bpftool id), found by its
# descriptor.
switch_prog_id() {
	local f id
	for f in /proc/"$DAEMON_PID"/fdinfo/*; do
		id=$(awk '$1 == "prog_id:" { print $2 }' "$f" 2>/dev/null)
		[ -n "$id" ] || continue
		grep -q '^prog_type' "$f" || continue
		bpftool prog show id "$id" 2>/dev/null | grep -q 'name gt_sched_switch ' && { echo "$id"; return; }
	done
}

# run_cnt of a program (needs kernel.bpf_stats_enabled=1); bpftool prints
# none while it is 0.  Empty if the program is gone.
run_cnt() {
	bpftool prog show id "$1" 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) if ($i == "run_cnt") n = $(i + 1) }
			NR == 1 { seen = 1 } END { if (seen) print n + 0 }'
}

# expect_idle NAME: the daemon soon holds no link (a session's end is
# handled by its poll loop, a moment after the client returns; on a busy
# machine that moment may be long: up to 30 s).
expect_idle() {
	local i l
	kill -0 "$DAEMON_PID" 2>/dev/null || { fail "$1" "gotraced is gone"; return 1; }
	for i in $(seq 1 300); do
		l=$(daemon_links)
		[ -z "$l" ] && { ok "$1"; return 0; }
		sleep 0.1
	done
	fail "$1" "an idle daemon still has BPF links 30 s after its last session: $(echo $l)"
	return 1
}

# expect_attached NAME [PROG]: the daemon's links include the scheduler's
# (and PROG's).
expect_attached() {
	local l p
	l=$(daemon_links)
	for p in gt_sched_switch gt_sched_waking ${2:-}; do
		echo "$l" | grep -qx "$p" && continue
		fail "$1" "no $p among the links while recording: $(echo $l)"
		return 1
	done
	ok "$1"
}

# wait_sessions N: until `status` lists N sessions (60 s).
wait_sessions() {
	local end=$((SECONDS + 60))
	while [ $SECONDS -lt $end ]; do
		[ "$(python3 tests/integration/daemon_proto.py status "$SOCK" 2>/dev/null)" = "sessions $1" ] &&
			return 0
		sleep 0.1
	done
	return 1
}

# record TAG ARGS...: a daemon recording in the background (pid in REC),
# until stopped: the cases below end each session themselves (finish), in
# the order they check, instead of racing durations against a busy machine.
record() {
	local tag=$1
	shift
	"$GTCTL" record --daemon --socket "$SOCK" -o "$GT_TMP/$tag.trace" "$@" \
		>"$GT_TMP/$tag.out" 2>&1 &
	REC=$!
	gt_pids+=("$REC")
}

# finish PID: Ctrl-C to a recording client (it asks the daemon to finish
# the session); returns its exit status.
finish() {
	kill -INT "$1" 2>/dev/null
	wait "$1"
}

gt_start_daemon
"$WL/sleeper" 100000 10000 >/dev/null &
TARGET=$!
gt_pids+=("$TARGET")

# --- idle from the start: nothing attached, sched_switch never runs ----------
expect_idle daemon_idle_at_start
id=$(switch_prog_id)
if [ -z "$id" ]; then
	fail daemon_idle_loaded "the daemon holds no gt_sched_switch program: not loaded at start?"
	fail daemon_idle_no_runs "no gt_sched_switch program to watch (see daemon_idle_loaded)"
else
	ok daemon_idle_loaded
	old_stats=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
	before=$(run_cnt "$id")
	"$WL/pingpong" 2000 strict pipe >/dev/null 2>&1 # 4000 context switches at least
	after=$(run_cnt "$id")
	if [ -z "$before" ] || [ -z "$after" ]; then
		fail daemon_idle_no_runs "bpftool does not show program $id"
	elif [ "$after" != "$before" ]; then
		fail daemon_idle_no_runs "the idle daemon's gt_sched_switch ran $((after - before)) times"
	else
		ok daemon_idle_no_runs
	fi
	sysctl -qw kernel.bpf_stats_enabled="$old_stats"
fi

# --- one session: attached while it records, detached after ---------------------
record one -p "$TARGET" --heap=rss
ONE=$REC
if wait_sessions 1; then
	expect_attached daemon_idle_one_attached gt_rss_stat
else
	fail daemon_idle_one_attached "the session never showed up: $(cat "$GT_TMP/one.out")"
fi
if ! finish "$ONE"; then
	fail daemon_idle_one_trace "record failed: $(cat "$GT_TMP/one.out")"
elif gt_valid daemon_idle_one_trace "$GT_TMP/one.trace"; then
	ok daemon_idle_one_trace
fi
expect_idle daemon_idle_after_one

# --- two overlapping sessions: attached until the second ends ---------------------
why=""
record first -p "$TARGET"
FIRST=$REC
wait_sessions 1 || why="the first session never showed up: $(cat "$GT_TMP/first.out")"
record second -p "$TARGET"
SECOND=$REC
[ -z "$why" ] && ! wait_sessions 2 && why="status never showed 2 sessions"
finish "$FIRST" || why=${why:-"first record failed: $(cat "$GT_TMP/first.out")"}
if wait_sessions 1 && kill -0 "$SECOND" 2>/dev/null; then
	expect_attached daemon_idle_overlap_attached
else
	fail daemon_idle_overlap_attached "the second session did not outlive the first"
fi
finish "$SECOND" || why=${why:-"second record failed: $(cat "$GT_TMP/second.out")"}
if [ -n "$why" ]; then
	fail daemon_idle_overlap "$why"
elif gt_valid daemon_idle_overlap "$GT_TMP/first.trace" &&
	gt_valid daemon_idle_overlap "$GT_TMP/second.trace"; then
	ok daemon_idle_overlap
fi
expect_idle daemon_idle_after_overlap

# --- syscall entries: the sys_enter program only while a session wants them ------
# (it runs at every syscall of the machine: only --syscalls=all wants it, the
# default, blocking, does without)
has_link() { daemon_links | grep -qx "$1"; }
vol_switches() { awk '$1 == "voluntary_ctxt_switches:" { print $2 }' "/proc/$1/status"; }
syscalls_in() { "$GTCTL" inspect "$1" | awk '$1 == "GoSysCall" { n = $2 } END { print n + 0 }'; }
why=""
record quiet -p "$TARGET"
QUIET=$REC
if ! wait_sessions 1; then
	why="the default session never showed up: $(cat "$GT_TMP/quiet.out")"
elif has_link gt_sys_enter || ! has_link gt_sched_switch; then
	why="with a default (blocking) session only, links are: $(daemon_links | tr '\n' ' ')"
else
	record full -p "$TARGET" --syscalls=all
	FULL=$REC
	if ! wait_sessions 2; then
		why="status never showed 2 sessions"
	elif ! has_link gt_sys_enter; then
		why="a --syscalls=all session started, but no gt_sys_enter link"
	else
		# 60 of the sleeper's nanosleeps inside the recording (each one
		# voluntary switch), however slowly a busy machine runs them
		v0=$(vol_switches "$TARGET")
		for _ in $(seq 1 600); do
			[ $(($(vol_switches "$TARGET") - v0)) -ge 60 ] && break
			sleep 0.1
		done
	fi
	if ! finish "$FULL"; then
		why=${why:-"--syscalls=all record failed: $(cat "$GT_TMP/full.out")"}
	elif [ -z "$why" ]; then
		wait_sessions 1
		for _ in $(seq 1 300); do has_link gt_sys_enter || break; sleep 0.1; done
		has_link gt_sys_enter && why="gt_sys_enter still attached 30 s after the --syscalls=all session ended"
	fi
fi
finish "$QUIET" || why=${why:-"the default record failed: $(cat "$GT_TMP/quiet.out")"}
if [ -n "$why" ]; then
	fail daemon_idle_syscalls "$why"
elif gt_valid daemon_idle_syscalls "$GT_TMP/quiet.trace" &&
	gt_valid daemon_idle_syscalls "$GT_TMP/full.trace"; then
	# the sleeper's syscalls are nanosleeps: entries with
	# --syscalls=all; none by default (a sleep is GoSleep, no syscall)
	q=$(syscalls_in "$GT_TMP/quiet.trace") f=$(syscalls_in "$GT_TMP/full.trace")
	if [ "$q" != 0 ] || [ "$f" -lt 50 ]; then
		fail daemon_idle_syscalls "GoSysCall: $q by default (want 0), $f with --syscalls=all (want >= 50)"
	else
		ok daemon_idle_syscalls
	fi
fi
expect_idle daemon_idle_after_syscalls

# --- a failed attach fails that session only, and leaves no link -------------------
# A descriptor limit on the daemon (prlimit) with 1, 2, ... numbers free:
# the session start runs out of descriptors at each step in turn (the
# client's file, /proc, then each link of the attach, then the snapshot)
# until one finally fits.  Every failure must leave the daemon idle.
# free_below L: descriptor numbers under L the daemon does not use.
free_below() {
	local c=0 k
	for ((k = 0; k < $1; k++)); do [ -e "/proc/$DAEMON_PID/fd/$k" ] || c=$((c + 1)); done
	echo "$c"
}
if ! command -v prlimit >/dev/null; then
	fail daemon_idle_attach_fails "prlimit not installed (util-linux)"
else
	hard=$(prlimit --pid "$DAEMON_PID" --nofile -o HARD --noheadings)
	attach_failed=0 recorded=0 leaks=""
	for free in $(seq 1 40); do
		L=3
		while [ "$(free_below $L)" -lt "$free" ]; do L=$((L + 1)); done
		prlimit --pid "$DAEMON_PID" --nofile="$L:$hard"
		out=$(timeout 120 "$GTCTL" record --daemon --socket "$SOCK" -p "$TARGET" -d 1s \
			--heap=off -o "$GT_TMP/limited.trace" 2>&1)
		rc=$?
		prlimit --pid "$DAEMON_PID" --nofile="$hard:$hard"
		[ $rc = 0 ] && { recorded=1; break; }
		echo "$out" | grep -q "cannot start the session: attaching the tracepoints: gt_" &&
			attach_failed=$((attach_failed + 1))
		kill -0 "$DAEMON_PID" 2>/dev/null || { leaks="$leaks [gotraced died]"; break; }
		l=$(daemon_links)
		[ -n "$l" ] && leaks="$leaks [$free free: $(echo $l)]"
	done
	if [ $attach_failed = 0 ]; then
		fail daemon_idle_attach_fails "no session start failed in the attach (last: $out)"
	elif [ -n "$leaks" ]; then
		fail daemon_idle_attach_fails "links left after failed starts:$leaks"
	elif [ $recorded = 0 ]; then
		fail daemon_idle_attach_fails "the daemon never recorded again: $out"
	elif gt_valid daemon_idle_attach_fails "$GT_TMP/limited.trace"; then
		ok daemon_idle_attach_fails
	fi
	expect_idle daemon_idle_after_failures
fi

kill -TERM "$DAEMON_PID"
if wait "$DAEMON_PID"; then ok daemon_idle_exit
else fail daemon_idle_exit "gotraced exited $? after SIGTERM"; fi
[ "$gt_failures" -gt 0 ] && { echo "# daemon log:"; tail -20 "$GT_TMP/daemon.log" | detail; }
gt_finish
