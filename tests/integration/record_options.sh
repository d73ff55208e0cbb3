#!/usr/bin/env bash
# record_options.sh: the options and messages users meet first (issue 37):
# --version, sizes with units, options after FILE, what `report DIR`,
# `--cgroup` as /proc/PID/cgroup prints it, an empty cgroup, a killed idle
# Go 1.22+ recording, the --detach hint, the daemon log's times and the
# message of a user who may not reach a socket say.
#
#   opt_version          gotracectl --version and gotraced --version print one
#                        line, "PROGRAM VERSION", exit 0
#   opt_ring_size_units  --ring-size takes K, M, G as --flight-size does
#                        (record and gotraced; a bad unit is refused)
#   opt_after_file       inspect FILE --goroutines, report FILE --top N
#                        (options after FILE, as gotracectl(1) writes them)
#   opt_report_dir       report DIR says "Is a directory" (not "No such device")
#   opt_cgroup_proc_path --cgroup /NAME, the form /proc/PID/cgroup prints,
#                        is NAME under the cgroup2 mount
#   opt_empty_cgroup     an empty cgroup: exit 0 (as perf record), but a
#                        warning that 0 threads were recorded, and why
#   opt_v2_kill_idle     a Go 1.23 recording of an idle target killed with
#                        SIGKILL leaves nothing (not a 16-byte header no
#                        reader takes); FILE.partial only with a generation
#   opt_detach_socket    --detach's hint names --socket when not the default
#   opt_daemon_log_time  every daemon log line starts with its local time
#   opt_no_daemon_msg    a user who may not reach a socket nothing listens on
#                        is told no daemon runs there (even while another
#                        gotraced runs); one that listens: not allowed
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

CASES="opt_version opt_ring_size_units opt_after_file opt_report_dir opt_cgroup_proc_path
opt_empty_cgroup opt_v2_kill_idle opt_detach_socket opt_daemon_log_time opt_no_daemon_msg"
gt_require_daemon record_options
gt_expect $CASES
USER_NAME=gt_test_user

# --- no BPF: parsing and messages -----------------------------------------
why=""
for p in "$GTCTL" "$GTD"; do
	n=$(basename "$p")
	out=$("$p" --version 2>&1) || why+="$n --version exited $?; "
	echo "$out" | grep -qE "^$n [0-9A-Za-z][^ ]*\$" || why+="$n --version said '$out'; "
done
gt_report opt_version "$why"

why=""
out=$("$GTCTL" record --ring-size 8M -o "$GT_TMP/none.trace" 2>&1)
echo "$out" | grep -q "nothing to record" || why+="record --ring-size 8M: $out; "
out=$("$GTCTL" record --ring-size 8X -o "$GT_TMP/none.trace" 2>&1)
echo "$out" | grep -q "bad --ring-size" || why+="record --ring-size 8X: $out; "
"$GTD" --ring-size 64M --help >/dev/null 2>&1 || why+="gotraced --ring-size 64M refused; "
"$GTD" --ring-size 1Q --help >/dev/null 2>&1 && why+="gotraced --ring-size 1Q taken; "
gt_report opt_ring_size_units "$why"

gt_refused opt_report_dir "Is a directory" "$GTCTL" report "$GT_TMP"

# --- a recording: options after FILE ---------------------------------------
t=$GT_TMP/small.trace
if ! "$GTCTL" record -q -o "$t" -- "$WL/sleeper" 5 2000 >/dev/null 2>"$GT_TMP/small.err"; then
	fail opt_after_file "record -- sleeper failed: $(tail -3 "$GT_TMP/small.err")"
elif gt_valid opt_after_file "$t"; then
	why=""
	out=$("$GTCTL" inspect "$t" --goroutines 2>&1) || why+="inspect FILE --goroutines: $out; "
	echo "$out" | grep -q sleeper || why+="inspect FILE --goroutines lists no sleeper; "
	out=$("$GTCTL" report "$t" --top 2 2>&1) || why+="report FILE --top 2: $(echo "$out" | head -3); "
	gt_report opt_after_file "$why"
fi

# --- cgroups ------------------------------------------------------------------
gt_need_cgroup2 opt_cgroup_proc_path
cg=gt-opt-$$
mkdir "$CGMNT/$cg" || { fail opt_cgroup_proc_path "cannot make $CGMNT/$cg"; gt_finish; }
t=$GT_TMP/empty.trace
# "/NAME": what /proc/PID/cgroup prints for a process in CGMNT/NAME
"$GTCTL" record -q --standalone --cgroup "/$cg" -d 0.3 -o "$t" >/dev/null 2>"$GT_TMP/empty.err"
rc=$?
if [ $rc != 0 ]; then
	fail opt_cgroup_proc_path "record --cgroup /$cg exited $rc: $(tail -2 "$GT_TMP/empty.err")"
	# the empty cgroup by its full path, then
	"$GTCTL" record -q --standalone --cgroup "$CGMNT/$cg" -d 0.3 -o "$t" >/dev/null \
		2>"$GT_TMP/empty.err"
	rc=$?
elif gt_valid opt_cgroup_proc_path "$t"; then
	ok opt_cgroup_proc_path
fi
rmdir "$CGMNT/$cg"
if [ $rc != 0 ]; then
	fail opt_empty_cgroup "record --cgroup $CGMNT/$cg exited $rc: $(tail -2 "$GT_TMP/empty.err")"
elif ! grep -q "warning: 0 threads recorded: .*empty cgroup" "$GT_TMP/empty.err"; then
	fail opt_empty_cgroup "no warning of 0 threads: $(cat "$GT_TMP/empty.err")"
elif [ -s "$t.json" ] || gt_valid opt_empty_cgroup "$t"; then
	ok opt_empty_cgroup
fi

# --- a killed idle Go 1.23 recording -----------------------------------------
sleep 60 &
idle=$!
gt_pids+=("$idle")
t=$GT_TMP/idle.trace
"$GTCTL" record -q --standalone --go-version 1.23 -p "$idle" -o "$t" 2>"$GT_TMP/idle.err" &
k=$!
gt_pids+=("$k")
sleep 2 # loaded or not: a kill at any point must leave nothing unreadable
kill -KILL "$k"
wait "$k" 2>/dev/null
if [ -e "$t" ]; then
	fail opt_v2_kill_idle "$t exists after a SIGKILL"
elif [ -e "$t.partial" ] && ! "$GT_GO123" tool trace -d=1 "$t.partial" >/dev/null 2>&1; then
	fail opt_v2_kill_idle "$t.partial ($(stat -c %s "$t.partial") bytes) left, which Go 1.23 does not read"
else
	ok opt_v2_kill_idle
fi

# --- the daemon -----------------------------------------------------------------
gt_start_daemon
if grep -vqE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}[-+][0-9]{4} gotraced: ' \
	"$GT_TMP/daemon.log"; then
	fail opt_daemon_log_time "a log line without its time: $(grep -vE '^[0-9]{4}-' "$GT_TMP/daemon.log" | head -2)"
else
	ok opt_daemon_log_time
fi

out=$("$GTCTL" record -p "$idle" --flight --trigger 'offcpu>10s' --detach -o "$GT_TMP/dumps" \
	--socket "$SOCK" 2>&1)
id=$(echo "$out" | tail -1)
if ! echo "$out" | grep -qF "\`gotracectl dump --socket $SOCK $id\`"; then
	fail opt_detach_socket "the hint names no --socket: $out"
elif ! echo "$out" | grep -qF "\`gotracectl stop --socket $SOCK $id\`"; then
	fail opt_detach_socket "the stop hint names no --socket: $out"
else
	ok opt_detach_socket
fi
[ -n "$id" ] && "$GTCTL" stop --socket "$SOCK" "$id" >/dev/null 2>&1

# A user may reach neither socket (each in a directory of root's, 0700):
# nothing listens on the first while gotraced runs (ours, on the second).
gt_user_make opt_no_daemon_msg "$USER_NAME"
chmod 0755 "$GT_TMP"
mkdir -p "$GT_TMP/bin" && cp "$GTCTL" "$GT_TMP/bin/" && chmod 0755 "$GT_TMP/bin"
mkdir -m 0700 "$GT_TMP/closed"
why=""
out=$(as_user "$GT_TMP/bin/gotracectl" status --socket "$GT_TMP/closed/gotraced.sock" 2>&1)
echo "$out" | grep -q "no gotraced daemon is running" || why+="no daemon: '$out'; "
chmod 0600 "$SOCK"
out=$(as_user "$GT_TMP/bin/gotracectl" status --socket "$SOCK" 2>&1)
echo "$out" | grep -q "not allowed to use" || why+="daemon listening: '$out'; "
gt_report opt_no_daemon_msg "$why"

gt_finish
