#!/usr/bin/env bash
# daemon_stuck_reads.sh: a program whose binary sits on a file system that
# never answers costs the daemon's event loop nothing (docs/security.md,
# "Files of other users" and "Go programs").  At a process's first sight
# (and each exec) the daemon reads its binary for the Go build info
# (sym/goinfo.c); that read ran on the event loop, so a binary on a FUSE
# mount that stops answering stopped every session.  It runs on a loader
# thread now.  tests/integration/stall_fuse.py serves the sleeper workload
# as MNT/prog, answers the open that execs it, and never a later one.
#  - stuck_read_loop_free: root records the program from the FUSE mount
#    (3 s, the default --heap: RSS, for which the engine's worker no longer
#    opens the binary; it did, and that start, and every start and stop
#    queued behind it, waited); while the daemon's reads of its binary
#    wait, root records its own sleeper (1 s): that recording starts, ends
#    and is valid, `status` answers, and the first recording ends at its
#    duration with a valid trace.  On the old daemon the second never
#    started (the loop waited in open(2) until the file system's server
#    died).  (--heap malloc and allocation samples still open it there.)
#  - stuck_labels_loop_free: a Go program (tests/workloads/go/stucklabels)
#    maps MNT/data, whose reads the server never answers, and gives its
#    goroutine pprof labels whose map's bucket is that mapping's first
#    page (docs/mapping.md, "Goroutines of Go programs"); root records it
#    (3 s).  The daemon reads the map from /proc/PID/mem and that read
#    waits on the page's fault; meanwhile root's other recording starts,
#    ends and is valid, `status` answers, and the first recording ends at
#    its duration, valid, its logs saying "(labels not read in time)".
#    On the old daemon the read ran on the event loop: nothing answered.
#  - stuck_python_loop_free: a new server (the old one ended: its stuck
#    requests fail, the loader threads they held are free) serves Debian's
#    python3.11 as MNT2/python3.11; root records a CPython run from there
#    (3 s).  The daemon's detection of CPython (its maps, then _PyRuntime
#    in the binary, opened through map_files) waits on the file system,
#    on a loader thread; meanwhile root's other recording starts, ends and
#    is valid, `status` answers, and the first recording ends, valid.  On
#    the old daemon the detection ran on the event loop: nothing answered.
# The 30 s bounds only tell a hang from a pass: a daemon that does not
# wait needs a second or two.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

CASES="stuck_read_loop_free stuck_labels_loop_free stuck_python_loop_free"
gt_require_daemon stuck_read_loop_free
# shellcheck disable=SC2086
gt_expect $CASES
MNT=$GT_TMP/mnt
mkdir -p "$MNT"
FUSE_PID=
# the server first: what waits on it (the daemon's threads, the program)
# can end only once it has (its requests then fail)
stuck_cleanup() {
	[ -n "$FUSE_PID" ] && kill "$FUSE_PID" 2>/dev/null && wait "$FUSE_PID" 2>/dev/null
	umount -l "$MNT" 2>/dev/null
	gt_cleanup
}
trap stuck_cleanup EXIT
python3 tests/integration/stall_fuse.py "$MNT" "$WL/sleeper" >"$GT_TMP/fuse.out" 2>&1 &
FUSE_PID=$!
for _ in $(seq 1 100); do
	grep -q '^mounted' "$GT_TMP/fuse.out" && break
	sleep 0.1
done
if ! grep -q '^mounted' "$GT_TMP/fuse.out"; then
	for c in $CASES; do
		fail "$c" "the FUSE server did not mount: $(tail -2 "$GT_TMP/fuse.out")"
	done
	gt_finish
fi
gt_start_daemon

"$MNT/prog" 1000000 1000 </dev/null >/dev/null 2>&1 &
FUSE_PROG=$!
gt_pids+=("$FUSE_PROG")
ROOT_PROG=$GT_TMP/root_sleeper
cp "$WL/sleeper" "$ROOT_PROG"
"$ROOT_PROG" 1000000 1000 </dev/null >/dev/null 2>&1 &
ROOT_PID=$!
gt_pids+=("$ROOT_PID")
sleep 0.2

WHY=
timeout 30 "$GTCTL" record --daemon --socket "$SOCK" -p "$FUSE_PROG" -d 3s \
	-o "$GT_TMP/stuck.trace" >"$GT_TMP/stuck.out" 2>&1 &
STUCK_REC=$!
gt_pids+=("$STUCK_REC")
# the daemon has asked the file system for the binary again (and waits)
for _ in $(seq 1 100); do
	grep -q 'stalled' "$GT_TMP/fuse.out" && break
	sleep 0.1
done
grep -q 'stalled' "$GT_TMP/fuse.out" || WHY="the daemon never opened the program again"
if [ -z "$WHY" ]; then
	timeout 30 python3 tests/integration/start_latency.py "$SOCK" "$GT_TMP/other.trace" \
		"$ROOT_PID" 1 >"$GT_TMP/other.start" 2>&1
	grep -q '^done' "$GT_TMP/other.start" ||
		WHY="another recording did not start and end while the daemon read the stuck binary: $(tail -2 "$GT_TMP/other.start")"
fi
if [ -z "$WHY" ] && ! timeout 30 "$GTCTL" status --socket "$SOCK" >"$GT_TMP/status.out" 2>&1; then
	WHY="status did not answer while the daemon read the stuck binary"
fi
if [ -z "$WHY" ] && ! wait "$STUCK_REC"; then
	WHY="the recording of the program on FUSE failed: $(tail -3 "$GT_TMP/stuck.out")"
fi
echo "  stuck_read_loop_free: $(grep -c stalled "$GT_TMP/fuse.out") opens of the program left unanswered"
[ -z "$WHY" ] && ! gt_valid stuck_read_loop_free "$GT_TMP/other.trace" && WHY="(see above)"
[ -z "$WHY" ] && ! gt_valid stuck_read_loop_free "$GT_TMP/stuck.trace" && WHY="(see above)"
gt_report stuck_read_loop_free "$WHY"

# others_go_on CASE WHAT: root's other recording starts, ends and is valid,
# and `status` answers, while the daemon's read of WHAT waits; sets WHY.
others_go_on() {
	timeout 30 python3 tests/integration/start_latency.py "$SOCK" "$GT_TMP/$1.other.trace" \
		"$ROOT_PID" 1 >"$GT_TMP/$1.other.start" 2>&1
	grep -q '^done' "$GT_TMP/$1.other.start" ||
		WHY="another recording did not start and end while the daemon read $2: $(tail -2 "$GT_TMP/$1.other.start")"
	if [ -z "$WHY" ] && ! timeout 30 "$GTCTL" status --socket "$SOCK" >"$GT_TMP/$1.status" 2>&1; then
		WHY="status did not answer while the daemon read $2"
	fi
	[ -z "$WHY" ] && ! gt_valid "$1" "$GT_TMP/$1.other.trace" && WHY="(see above)"
}

WHY=
GODIR=$GT_BUILD/go-stucklabels
mkdir -p "$GODIR"
if ! (export GOCACHE=$PWD/$GODIR/cache GOPATH=$PWD/$GODIR/gopath GO111MODULE=off GOFLAGS='' \
	GOTOOLCHAIN=local CGO_ENABLED=0 && cd tests/workloads/go/stucklabels && \
	/usr/bin/go build -o "$OLDPWD/$GODIR/stucklabels" .) >"$GT_TMP/labels.build" 2>&1; then
	WHY="go build failed: $(tail -3 "$GT_TMP/labels.build")"
fi
if [ -z "$WHY" ]; then
	"$GODIR/stucklabels" "$MNT/data" 20000 </dev/null >"$GT_TMP/labels.prog" 2>&1 &
	LABELS_PROG=$!
	gt_pids+=("$LABELS_PROG")
	for _ in $(seq 1 100); do
		grep -q '^ready' "$GT_TMP/labels.prog" && break
		sleep 0.1
	done
	grep -q '^ready' "$GT_TMP/labels.prog" || WHY="the Go program did not start: $(tail -2 "$GT_TMP/labels.prog")"
fi
if [ -z "$WHY" ]; then
	timeout 30 "$GTCTL" record --daemon --socket "$SOCK" -p "$LABELS_PROG" -d 3s \
		-o "$GT_TMP/labels.trace" >"$GT_TMP/labels.out" 2>&1 &
	LABELS_REC=$!
	gt_pids+=("$LABELS_REC")
	# the daemon's read of the labels waits on the mapping's page
	for _ in $(seq 1 100); do
		grep -q '^read .* stalled' "$GT_TMP/fuse.out" && break
		sleep 0.1
	done
	grep -q '^read .* stalled' "$GT_TMP/fuse.out" || WHY="the daemon never read the labels' page"
fi
[ -z "$WHY" ] && others_go_on stuck_labels_loop_free "the labels on FUSE"
if [ -z "$WHY" ] && ! wait "$LABELS_REC"; then
	WHY="the recording of the program with labels on FUSE failed: $(tail -3 "$GT_TMP/labels.out")"
fi
echo "  stuck_labels_loop_free: $(grep -c '^read .* stalled' "$GT_TMP/fuse.out") reads of the labels' page left unanswered"
[ -z "$WHY" ] && ! gt_valid stuck_labels_loop_free "$GT_TMP/labels.trace" && WHY="(see above)"
if [ -z "$WHY" ] && ! grep -aq 'labels not read in time' "$GT_TMP/labels.trace"; then
	WHY="no log of the program says that its labels were not read"
fi
gt_report stuck_labels_loop_free "$WHY"

WHY=
kill "$FUSE_PID" 2>/dev/null && wait "$FUSE_PID" 2>/dev/null
umount -l "$MNT" 2>/dev/null
MNT=$GT_TMP/mnt2
mkdir -p "$MNT"
python3 tests/integration/stall_fuse.py "$MNT" /usr/bin/python3.11 python3.11 >"$GT_TMP/fuse2.out" 2>&1 &
FUSE_PID=$!
for _ in $(seq 1 100); do
	grep -q '^mounted' "$GT_TMP/fuse2.out" && break
	sleep 0.1
done
grep -q '^mounted' "$GT_TMP/fuse2.out" || WHY="the second FUSE server did not mount: $(tail -2 "$GT_TMP/fuse2.out")"
if [ -z "$WHY" ]; then
	"$MNT/python3.11" -c 'import time
for _ in range(2000): time.sleep(0.01)' </dev/null >"$GT_TMP/python.prog" 2>&1 &
	PY_PROG=$!
	gt_pids+=("$PY_PROG")
	sleep 0.3
	timeout 30 "$GTCTL" record --daemon --socket "$SOCK" -p "$PY_PROG" -d 3s \
		-o "$GT_TMP/python.trace" >"$GT_TMP/python.out" 2>&1 &
	PY_REC=$!
	gt_pids+=("$PY_REC")
	for _ in $(seq 1 100); do
		grep -q 'stalled' "$GT_TMP/fuse2.out" && break
		sleep 0.1
	done
	grep -q 'stalled' "$GT_TMP/fuse2.out" || WHY="the daemon never opened python3.11 again"
fi
[ -z "$WHY" ] && others_go_on stuck_python_loop_free "python3.11 on FUSE"
if [ -z "$WHY" ] && ! wait "$PY_REC"; then
	WHY="the recording of the CPython on FUSE failed: $(tail -3 "$GT_TMP/python.out")"
fi
echo "  stuck_python_loop_free: $(grep -c stalled "$GT_TMP/fuse2.out") opens of python3.11 left unanswered"
[ -z "$WHY" ] && ! gt_valid stuck_python_loop_free "$GT_TMP/python.trace" && WHY="(see above)"
gt_report stuck_python_loop_free "$WHY"
gt_finish
