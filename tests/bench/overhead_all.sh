#!/usr/bin/env bash
# overhead_all.sh BUILD: what `record -a` costs a switch-heavy program,
# next to `perf sched record -a` (figures only, no assertions; a median of
# runs).  The ping-pong workload (both threads on CPU 0, SCHED_FIFO) runs a
# fixed number of round trips while the whole machine is recorded: by
# gotracectl -a (by default, which like perf sched records no syscall
# entries, and with --syscalls=all, every entry), and by perf sched
# record -a.  Each recorder is
# started before the program and stopped after it, so the figure is the
# program's own loop under a machine-wide recording.
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
GTCTL=$build/gotracectl
PP=$build/workloads/pingpong
N=${OVERHEAD_ROUNDS:-50000}
RUNS=${OVERHEAD_RUNS:-3}
MODE=${OVERHEAD_MODE:-strict pipe}
tmp=$(mktemp -d /tmp/gt-overhead-all.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

for f in "$GTCTL" "$PP"; do
	[ -x "$f" ] || { echo "overhead_all: $f not built (make BUILD=$build tests)"; exit 1; }
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }
elapsed() { awk '$1 == "elapsed_ns" { print $2 }' "$1"; }

# run KIND: one ping-pong under a machine-wide recording of KIND; appends
# "loop_ns bytes" to KIND.runs.
run() {
	local kind=$1 rec= out=$tmp/pp.out bytes=0 i
	rm -f "$tmp/t.trace" "$tmp/p.data"
	case $kind in
	untraced) ;;
	gotraced-a) "$GTCTL" record -q --standalone -a -o "$tmp/t.trace" 2>"$tmp/rec.err" & rec=$! ;;
	gotraced-a-all)
		"$GTCTL" record -q --standalone -a --syscalls=all -o "$tmp/t.trace" 2>"$tmp/rec.err" & rec=$! ;;
	perf-sched-a) perf sched record -a -o "$tmp/p.data" >/dev/null 2>"$tmp/rec.err" & rec=$! ;;
	esac
	[ -n "$rec" ] && sleep 2 # attached and past its /proc snapshot
	"$PP" "$N" $MODE >"$out" 2>/dev/null
	if [ -n "$rec" ]; then
		kill -INT "$rec" 2>/dev/null
		wait "$rec"
		for i in $(seq 1 50); do [ -s "$tmp/t.trace" ] || [ -s "$tmp/p.data" ] && break; sleep 0.1; done
		bytes=$(stat -c %s "$tmp/t.trace" "$tmp/p.data" 2>/dev/null | head -1)
	fi
	echo "$(elapsed "$out") ${bytes:-0}" >>"$tmp/$kind.runs"
}

echo "== record -a on a switch-heavy program: ping-pong ($MODE), $N round trips, median of $RUNS"
echo "   ($(ls /proc | grep -c '^[0-9]') processes on this machine)"
kinds="untraced gotraced-a gotraced-a-all perf-sched-a"
for _ in $(seq 1 "$RUNS"); do
	for k in $kinds; do run $k; done
done
printf '%-20s %12s %9s %14s\n' recorder "loop ms" slowdown "file bytes"
base=0
for k in $kinds; do
	ns=$(awk '{ print $1 }' "$tmp/$k.runs" | median)
	b=$(awk '{ print $2 }' "$tmp/$k.runs" | median)
	[ $k = untraced ] && base=$ns
	awk -v k=$k -v ns="$ns" -v base="$base" -v b="$b" 'BEGIN {
		printf "%-20s %12.1f %8.2fx %14d\n", k, ns / 1e6, (base > 0 ? ns / base : 0), b }'
done
