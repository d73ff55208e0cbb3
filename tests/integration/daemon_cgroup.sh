#!/usr/bin/env bash
# daemon_cgroup.sh: recording a cgroup v2 directory through gotraced.
#  - processes started inside the cgroup after the recording began are in the
#    trace (by their thread names), processes outside are not;
#  - --container with a fake `docker-<64 hex>.scope` directory resolves (by a
#    unique prefix) and records what runs inside it.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

gt_require_daemon daemon_cgroup
gt_expect daemon_cgroup daemon_cgroup_inside daemon_cgroup_outside daemon_container \
	daemon_container_unknown daemon_exit

gt_need_cgroup2 daemon_cgroup

gt_start_daemon

BASE=$CGMNT/gt_it_cg_$$
HEX=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
SCOPE=$BASE/docker-$HEX.scope
mkdir -p "$BASE/inside" "$SCOPE"
cleanup_cgroups() {
	local d p
	for d in "$BASE/inside" "$SCOPE"; do
		# anything still in there goes back to the root cgroup first
		while read -r p; do echo "$p" >"$CGMNT/cgroup.procs" 2>/dev/null; done <"$d/cgroup.procs"
		rmdir "$d" 2>/dev/null
	done
	rmdir "$BASE" 2>/dev/null
}
trap 'cleanup_cgroups; gt_cleanup' EXIT

# Programs with distinctive names (a thread's name is its comm).
cp /bin/sleep "$GT_TMP/gt_in_cg"
cp /bin/sleep "$GT_TMP/gt_out_cg"
cp /bin/sleep "$GT_TMP/gt_in_ctr"

# run_in CGROUP_DIR PROG: a shell that joins the cgroup, then runs PROG 20 times.
run_in() {
	sh -c 'echo $$ > "$1/cgroup.procs" && for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "$2" 0.05; done' \
		sh "$1" "$2" &
	RUN_PID=$!
	gt_pids+=("$RUN_PID")
}
run_outside() {
	sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "$1" 0.05; done' sh "$1" &
	RUN_PID=$!
	gt_pids+=("$RUN_PID")
}

# Each recording runs until the programs it must see have ended, then is
# stopped (Ctrl-C to the client): a duration would assume they ran in time.
# wait_started DIR: until the daemon logs the session of cgroup DIR (60 s).
wait_started() {
	local end=$((SECONDS + 60))
	while [ $SECONDS -lt $end ]; do
		grep -q "started .*cgroup $1" "$GT_TMP/daemon.log" && return 0
		sleep 0.1
	done
	return 1
}

# names NAME FILE: goroutine names of the trace, one a line (inspect --json)
names() {
	python3 -c 'import json,sys; [print(g.get("name","")) for g in json.load(open(sys.argv[1])).get("goroutines",[])]' "$1.json"
}

# --- --cgroup: later processes inside are recorded, outside ones are not ----------
F=$GT_TMP/cgroup.trace
"$GTCTL" record --daemon --socket "$SOCK" --cgroup "${BASE#"$CGMNT"/}/inside" -o "$F" \
	>"$GT_TMP/cgroup.out" 2>&1 &
REC=$!
gt_pids+=("$REC")
wait_started "$BASE/inside"
run_in "$BASE/inside" "$GT_TMP/gt_in_cg"
IN=$RUN_PID
run_outside "$GT_TMP/gt_out_cg"
wait "$IN" "$RUN_PID"
kill -INT "$REC" 2>/dev/null
if ! wait "$REC"; then
	fail daemon_cgroup "record --cgroup failed: $(cat "$GT_TMP/cgroup.out")"
	fail daemon_cgroup_inside "no trace to look in (daemon_cgroup failed)"
	fail daemon_cgroup_outside "no trace to look in (daemon_cgroup failed)"
elif ! gt_valid daemon_cgroup "$F"; then
	fail daemon_cgroup_inside "no valid trace to look in (daemon_cgroup failed)"
	fail daemon_cgroup_outside "no valid trace to look in (daemon_cgroup failed)"
else
	ok daemon_cgroup
	n=$(names "$F")
	if ! echo "$n" | grep -qx gt_in_cg; then
		fail daemon_cgroup_inside "gt_in_cg (started inside after the start) missing; names: $(echo "$n" | sort -u | tr '\n' ' ')"
	else
		ok daemon_cgroup_inside
	fi
	if echo "$n" | grep -qx gt_out_cg; then
		fail daemon_cgroup_outside "gt_out_cg (outside the cgroup) is in the trace"
	else
		ok daemon_cgroup_outside
	fi
fi

# --- --container by a unique prefix of a fake docker scope -------------------------
F=$GT_TMP/container.trace
"$GTCTL" record --daemon --socket "$SOCK" --container "${HEX:0:12}" -o "$F" \
	>"$GT_TMP/container.out" 2>&1 &
REC=$!
gt_pids+=("$REC")
wait_started "$SCOPE"
run_in "$SCOPE" "$GT_TMP/gt_in_ctr"
wait "$RUN_PID"
kill -INT "$REC" 2>/dev/null
if ! wait "$REC"; then
	fail daemon_container "record --container ${HEX:0:12} failed: $(cat "$GT_TMP/container.out")"
elif ! grep -q "started .*cgroup $SCOPE" "$GT_TMP/daemon.log"; then
	fail daemon_container "the daemon did not record $SCOPE"
elif gt_valid daemon_container "$F"; then
	if names "$F" | grep -qx gt_in_ctr; then ok daemon_container
	else fail daemon_container "gt_in_ctr (inside the container) missing from the trace"; fi
fi

gt_refused daemon_container_unknown "no container" "$GTCTL" record --daemon --socket "$SOCK" \
	--container "ffffffffffffffffffffffff0000" -o "$GT_TMP/none.trace" -d 1s

kill -TERM "$DAEMON_PID"
if wait "$DAEMON_PID"; then ok daemon_exit; else fail daemon_exit "gotraced exited $?"; fi
[ "$gt_failures" -gt 0 ] && { echo "# daemon log:"; tail -30 "$GT_TMP/daemon.log" | detail; }
gt_finish
