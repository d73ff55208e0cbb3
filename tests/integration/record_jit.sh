#!/usr/bin/env bash
# record_jit.sh: frames in JIT code are named from the JIT's perf map
# (/tmp/perf-PID.map, read as perf reads it: sym/jit.h).  A node server
# (jit/server.js, started with --perf-basic-prof) answers jit/load.js's
# requests on 127.0.0.1 while `gotracectl record --cpu-profile` records it:
#  - jit_named: of the trace's frames in anonymous executable mappings
#    (JIT code), at least 99% (and at least 50 frames) carry the name the
#    perf map gives their address, perf's name (jit/check_names.py);
#  - jit_report: `report --folded=cpu` shows the script's functions
#    (server.js);
#  - jit_container: the same server in its own mount and pid namespaces
#    (a private /tmp, where it is pid 1 and writes /tmp/perf-1.map): still
#    named as its perf map says;
#  - jit_hostile: a node process whose perf map is, in its private /tmp,
#    a FIFO, a link to a FIFO, a 64 GiB sparse file, or garbage: each
#    recording (-d 2s) ends by itself, valid, no FIFO was ever opened, and
#    the refusals are logged;
#  - jit_rewrite: a JIT (workloads/jitmap.c) whose map names half its code
#    while all of it runs, then is truncated and written again naming all
#    of it, new lines first (as `jcmd PID Compiler.perfmap` does): every
#    JIT frame is named as the final map says, those taken before the
#    rewrite too;
#  - jit_at_exit: a JIT that writes its map only as it exits (as a JVM's
#    -XX:+DumpPerfMapAtExit), recorded with `record -- CMD`: every JIT
#    frame named.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

CASES="jit_named jit_report jit_container jit_hostile jit_rewrite jit_at_exit"
# shellcheck disable=SC2086
gt_require_bpf $CASES
# shellcheck disable=SC2086
gt_expect $CASES

NODE=$(command -v node || command -v nodejs)
JIT=tests/integration/jit
REQS=600
if [ -z "$NODE" ]; then
	for c in $CASES; do fail "$c" "node is not installed (tests/deps.sh installs nodejs)"; done
	gt_finish
fi
SERVER=$(realpath $JIT/server.js)
perfmaps=()
trap 'rm -f "${perfmaps[@]}"; gt_cleanup' EXIT

# wait_port TAG: the port the server printed in $GT_TMP/TAG.out (PORT).
wait_port() {
	local _
	for _ in $(seq 1 200); do
		PORT=$(awk '/^port /{print $2}' "$GT_TMP/$1.out" 2>/dev/null)
		[ -n "$PORT" ] && return 0
		sleep 0.05
	done
	return 1
}

# record_node NAME TAG PID: records node PID with --cpu-profile while
# load.js sends REQS requests; keeps PID's maps in TAG.maps, the trace's
# frames in TAG.frames.  Fails NAME and returns 1 on any error.
record_node() {
	local name=$1 tag=$2 pid=$3 rc
	if ! gt_record_bg "$tag" --cpu-profile -p "$pid" -o "$GT_TMP/$tag.trace"; then
		fail "$name" "gotracectl record did not start: $(tail -5 "$GT_TMP/$tag.rec.err")"
		return 1
	fi
	if ! "$NODE" $JIT/load.js "$PORT" $REQS >"$GT_TMP/$tag.load" 2>&1; then
		fail "$name" "the load failed: $(tail -3 "$GT_TMP/$tag.load")"
		gt_stop_record INT
		return 1
	fi
	cp "/proc/$pid/maps" "$GT_TMP/$tag.maps"
	gt_stop_record INT
	rc=$?
	if [ $rc != 0 ]; then
		fail "$name" "gotracectl record exited $rc: $(tail -5 "$GT_TMP/$tag.rec.err")"
		return 1
	fi
	gt_valid "$name" "$GT_TMP/$tag.trace" || return 1
	python3 tests/integration/trace_read.py frames "$GT_TMP/$tag.trace" >"$GT_TMP/$tag.frames"
}

# check_named NAME TAG PERFMAP: TAG's JIT frames are named as PERFMAP says.
check_named() {
	local out
	if out=$(python3 $JIT/check_names.py "$GT_TMP/$2.frames" "$GT_TMP/$2.maps" "$3" 2>&1); then
		echo "  $1: $(head -1 <<<"$out")"
		return 0
	fi
	fail "$1" "$(tail -1 <<<"$out")"
	echo "$out" | detail
	return 1
}

# --- a JIT that rewrites its map, one that writes it at exit ------------------
# jitmap NAME MODE: records `jitmap MODE` from its start to its exit; its
# JIT frames must be named as the map it leaves says.
jitmap() {
	local name=$1 tag=$1 out pid
	if ! out=$("$GTCTL" record --standalone -o "$GT_TMP/$tag.trace" -- \
		"$WL/jitmap" "$2" "$GT_TMP/$tag.maps" 2>&1); then
		fail "$name" "gotracectl record failed: $(tail -3 <<<"$out")"
		return
	fi
	pid=$(awk '/^pid /{print $2}' <<<"$out")
	perfmaps+=("/tmp/perf-$pid.map")
	if [ -z "$pid" ] || [ ! -f "/tmp/perf-$pid.map" ]; then
		fail "$name" "jitmap wrote no perf map: $(tail -3 <<<"$out")"
		return
	fi
	gt_valid "$name" "$GT_TMP/$tag.trace" || return
	python3 tests/integration/trace_read.py frames "$GT_TMP/$tag.trace" >"$GT_TMP/$tag.frames"
	check_named "$name" "$tag" "/tmp/perf-$pid.map" && ok "$name"
}
jitmap jit_rewrite rewrite
jitmap jit_at_exit atexit

# --- a server in our namespaces -----------------------------------------------
# node writes isolate-*.log files where it runs: in $GT_TMP
(cd "$GT_TMP" && exec "$NODE" --perf-basic-prof "$SERVER") >"$GT_TMP/host.out" 2>&1 &
NPID=$!
gt_pids+=("$NPID")
perfmaps+=("/tmp/perf-$NPID.map")
if ! wait_port host; then
	fail jit_named "node did not start: $(tail -3 "$GT_TMP/host.out")"
	fail jit_report "no recording (see jit_named)"
elif record_node jit_named host "$NPID"; then
	cp "/tmp/perf-$NPID.map" "$GT_TMP/host.perfmap"
	check_named jit_named host "$GT_TMP/host.perfmap" && ok jit_named
	"$GTCTL" report --folded=cpu "$GT_TMP/host.trace" >"$GT_TMP/host.folded" 2>&1
	if grep -q 'server\.js' "$GT_TMP/host.folded"; then
		ok jit_report
	else
		fail jit_report "report --folded=cpu never names server.js: $(head -c 300 "$GT_TMP/host.folded")"
	fi
else
	fail jit_report "no recording (see jit_named)"
fi
kill "$NPID" 2>/dev/null

# --- a server in its own mount and pid namespaces -------------------------------
# (its script is copied into its private /tmp: the tree may be under ours)
# shellcheck disable=SC2016
(cd "$GT_TMP" && exec unshare -m -p -f --mount-proc sh -c \
	'js=$(cat "$1") && mount -t tmpfs gt-jit /tmp && printf "%s\n" "$js" >/tmp/server.js &&
	 exec "$0" --perf-basic-prof /tmp/server.js' "$NODE" "$SERVER") \
>"$GT_TMP/ns.out" 2>&1 &
UPID=$!
gt_pids+=("$UPID")
if ! wait_port ns; then
	fail jit_container "node did not start in its namespaces: $(tail -3 "$GT_TMP/ns.out")"
else
	NPID=$(pgrep -P "$UPID" | head -1)
	gt_pids+=("$NPID")
	inner=$(awk '/^NSpid:/{print $NF}' "/proc/$NPID/status")
	if [ -e "/tmp/perf-$NPID.map" ]; then
		fail jit_container "the perf map is in our /tmp: the namespaces did not work"
	elif record_node jit_container ns "$NPID"; then
		cp "/proc/$NPID/root/tmp/perf-$inner.map" "$GT_TMP/ns.perfmap"
		check_named jit_container ns "$GT_TMP/ns.perfmap" && ok jit_container
	fi
	kill -KILL "$NPID" 2>/dev/null # pid 1 of its namespace ignores SIGTERM
fi

# --- hostile perf maps, in a private /tmp ----------------------------------------
# hostile KIND: node (no --perf-basic-prof: it writes no map) whose
# /tmp/perf-PID.map, in its own /tmp, is made by `sh` before it becomes
# node (same pid); recorded -d 2s under load.  Sets WHY on failure.
hostile() {
	local kind=$1 tag=hostile_$1 rc f
	# shellcheck disable=SC2016
	(cd "$GT_TMP" && exec unshare -m sh -c 'js=$(cat "$1") && mount -t tmpfs gt-jit /tmp || exit 1
		printf "%s\n" "$js" >/tmp/server.js || exit 1
		m=/tmp/perf-$$.map
		case $2 in
		fifo) mkfifo $m ;;
		symlink) mkfifo /tmp/fifo && ln -s /tmp/fifo $m ;;
		sparse) truncate -s 64G $m ;;
		garbage) { printf "zz 10 x\n0x 1 \n1 0 zero\nffffffffffffffff 10 wraps\n\t\n"
			head -c 200000 /dev/urandom; printf "%02000d\n" 7; } >$m ;;
		esac
		exec "$0" /tmp/server.js' "$NODE" "$SERVER" "$kind") >"$GT_TMP/$tag.out" 2>&1 &
	NPID=$!
	gt_pids+=("$NPID")
	wait_port "$tag" || { WHY="$kind: node did not start: $(tail -3 "$GT_TMP/$tag.out")"; return 1; }
	"$NODE" $JIT/load.js "$PORT" 100000 >/dev/null 2>&1 &
	LPID=$!
	gt_pids+=("$LPID")
	timeout 120 "$GTCTL" record --standalone --cpu-profile -d 2s -p "$NPID" \
		-o "$GT_TMP/$tag.trace" >"$GT_TMP/$tag.rec.out" 2>&1
	rc=$?
	case $kind in
	fifo | symlink)
		f=/proc/$NPID/root/tmp/fifo
		[ "$kind" = fifo ] && f=/proc/$NPID/root/tmp/perf-$NPID.map
		[ "$(python3 tests/integration/opened.py fifo "$f")" = never ] ||
			WHY=${WHY:-"$kind: the recorder opened the FIFO"}
		python3 tests/integration/opened.py fifo "$f" >/dev/null 2>&1 ;;
	esac
	kill "$LPID" "$NPID" 2>/dev/null
	[ $rc = 0 ] || { WHY=${WHY:-"$kind: record exited $rc: $(tail -3 "$GT_TMP/$tag.rec.out")"}; return 1; }
	grep -q "symbols: not reading" "$GT_TMP/$tag.rec.out" || [ "$kind" = garbage ] ||
		WHY=${WHY:-"$kind: the recorder did not log its refusal"}
	gt_valid jit_hostile "$GT_TMP/$tag.trace" || WHY=${WHY:-"$kind: trace not valid"}
	[ -z "$WHY" ]
}
WHY=
for kind in fifo symlink sparse garbage; do
	hostile $kind
	echo "  jit_hostile $kind: $(grep -h 'symbols: not reading' "$GT_TMP/hostile_$kind.rec.out" | head -1)"
done
gt_report jit_hostile "$WHY"
gt_finish
