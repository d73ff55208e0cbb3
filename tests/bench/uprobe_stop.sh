#!/usr/bin/env bash
# uprobe_stop.sh BUILD: how long `gotracectl record --heap malloc` takes to
# end once asked (SIGINT -> exit: the probes' teardown, finishing the
# trace, closing), on a process busy in malloc/free, in embedded mode and
# through the daemon, with uprobe_multi links (where the kernel has them)
# and with the perf-event links of older kernels (GOTRACED_NO_UPROBE_MULTI=1
# for the recorder or the daemon).  Median of RUNS (3); target <= 1 s.
# Figures only, nothing asserted.  Needs root.
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
GTCTL=$build/gotracectl
GTD=$build/gotraced
WLB=$build/workloads/malloc_loop
RUNS=${UPROBE_STOP_RUNS:-3}
tmp=$(mktemp -d /tmp/gt-uprobe-stop.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

for f in "$GTCTL" "$GTD" "$WLB"; do
	[ -x "$f" ] || { echo "uprobe_stop: $f not built (make BUILD=$build tests)"; exit 1; }
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "-") }'; }
# the shell's own clock: no process started between SIGINT and the reading
now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }

"$WLB" 1000000000000 >/dev/null &
TARGET=$!
pids+=("$TARGET")

# start_daemon ENV...: gotraced on $tmp/d.sock (DPID), with ENV.
start_daemon() {
	local i
	env "$@" "$GTD" --socket "$tmp/d.sock" 2>"$tmp/d.log" &
	DPID=$!
	pids+=("$DPID")
	for i in $(seq 1 600); do
		grep -q 'ready on' "$tmp/d.log" && return 0
		sleep 0.1
	done
	echo "uprobe_stop: gotraced did not start: $(tail -2 "$tmp/d.log")"
	return 1
}

# probes_in PID: uprobe links PID holds (either kind).
probes_in() {
	grep -l -E 'probe_multi|event_type:.uprobe' /proc/"$1"/fdinfo/* 2>/dev/null | wc -l
}

# stop_ms MODE ENV...: one recording; prints the ms from SIGINT to exit,
# or nothing if it failed.
stop_ms() {
	local mode=$1 holder rec i t0 t1 args=(--standalone)
	shift
	[ "$mode" = daemon ] && args=(--daemon --socket "$tmp/d.sock")
	env "$@" "$GTCTL" record "${args[@]}" -q --heap malloc -p "$TARGET" -o "$tmp/t.trace" \
		2>"$tmp/rec.err" &
	rec=$!
	holder=$rec
	[ "$mode" = daemon ] && holder=$DPID
	for i in $(seq 1 1200); do # until its probes are attached
		[ "$(probes_in "$holder")" -gt 0 ] && break
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.05
	done
	sleep 1
	t0=$(now_ms)
	kill -INT "$rec" 2>/dev/null
	wait "$rec" || { echo "uprobe_stop: record failed: $(tail -2 "$tmp/rec.err")" >&2; return; }
	t1=$(now_ms)
	echo $((t1 - t0))
}

# row MODE LABEL ENV...: the median over RUNS.
row() {
	local mode=$1 label=$2 r v=()
	shift 2
	for r in $(seq 1 "$RUNS"); do
		v+=("$(stop_ms "$mode" "$@")")
	done
	printf '%-10s %-18s stop %6s ms  (runs: %s; target <= 1000 ms)\n' "$mode" "$label" \
		"$(printf '%s\n' "${v[@]}" | grep . | median)" "${v[*]}"
}

echo "gotracectl record --heap malloc -p PID (busy in malloc/free), SIGINT -> exit:"
row embedded uprobe_multi GOTRACED_NO_UPROBE_MULTI=0
row embedded perf-event-links GOTRACED_NO_UPROBE_MULTI=1
start_daemon GOTRACED_NO_UPROBE_MULTI=0 && row daemon uprobe_multi
kill -TERM "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null
start_daemon GOTRACED_NO_UPROBE_MULTI=1 && row daemon perf-event-links
kill -TERM "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null
echo "(uprobe_multi rows use perf-event links too on a kernel without them: Linux < 6.6)"
exit 0
