#!/usr/bin/env bash
# overhead.sh BUILD: what recording costs, side by side (figures only, no
# assertions; noisy on a small machine, so each figure is a median of runs).
#
#  1. The traced program: the ping-pong workload at full speed for a fixed
#     number of round trips (it times its own loop), untraced vs recorded by
#     gotraced (default, which like perf sched records no syscall entries
#     but the syscalls that block; with --kernel-stacks; and with
#     --syscalls=all, every entry) vs `perf sched record` vs
#     `perf record -e 'sched:*' -e 'raw_syscalls:*'`: slowdown
#     ratio and bytes written per event.
#  2. Bystanders: the slowdown of untraced programs (switch-heavy,
#     syscall-heavy, CPU-bound) beside an idle daemon and while another
#     process is being recorded (BPF filters them out; target < 1%).
#  3. Throughput: events per second the pipeline sustained, and drops.
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
GTCTL=$build/gotracectl
PP=$build/workloads/pingpong
N=${OVERHEAD_ROUNDS:-50000}
RUNS=${OVERHEAD_RUNS:-5}
# strict = both threads on CPU 0, SCHED_FIFO: full speed on one CPU, and
# far steadier timings than letting two CPUs race (needs root).
MODE=${OVERHEAD_MODE:-strict pipe}
tmp=$(mktemp -d /tmp/gt-overhead.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

for f in "$GTCTL" "$build/gotraced" "$PP" "$build/workloads/sleeper" "$build/workloads/fixedwork"; do
	[ -x "$f" ] || { echo "overhead: $f not built (make BUILD=$build tests)"; exit 1; }
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }
elapsed() { awk '$1 == "elapsed_ns" { print $2 }' "$1"; }

# run_pp KIND: one ping-pong of N round trips under KIND; prints
# "elapsed_ns bytes events drops" (0 when untraced; drops: gotraced's
# failed ring reservations, perf's lost samples).
run_pp() {
	local out=$tmp/pp.out err=$tmp/pp.err bytes=0 events=0 drops=0
	rm -f "$tmp/t.trace" "$tmp/p.data"
	case $1 in
	untraced) "$PP" "$N" $MODE >"$out" 2>"$err" ;;
	gotraced | gotraced+kstacks | gotraced-all)
		local flags=()
		[ "$1" = gotraced+kstacks ] && flags=(--kernel-stacks)
		[ "$1" = gotraced-all ] && flags=(--syscalls=all)
		"$GTCTL" record -q "${flags[@]}" -o "$tmp/t.trace" -- "$PP" "$N" $MODE >"$out" 2>"$err"
		bytes=$(stat -c %s "$tmp/t.trace" 2>/dev/null || echo 0)
		events=$(sed -n 's/.*recorded [0-9]* threads, \([0-9]*\) events.*/\1/p' "$err")
		drops=$(sed -n 's/.* \([0-9]*\) dropped in .*/\1/p' "$err") ;;
	perf-sched)
		perf sched record -o "$tmp/p.data" -- "$PP" "$N" $MODE >"$out" 2>"$err"
		bytes=$(stat -c %s "$tmp/p.data")
		events=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$err")
		drops=$(sed -n 's/.*Lost \([0-9]*\) .*/\1/p' "$err" | head -1) ;;
	perf-record)
		perf record -e 'sched:*' -e 'raw_syscalls:*' -o "$tmp/p.data" -- "$PP" "$N" $MODE >"$out" 2>"$err"
		bytes=$(stat -c %s "$tmp/p.data")
		events=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$err")
		drops=$(sed -n 's/.*Lost \([0-9]*\) .*/\1/p' "$err" | head -1) ;;
	esac
	echo "$(elapsed "$out") $bytes ${events:-0} ${drops:-0}"
}

echo "== overhead on the traced program: ping-pong ($MODE), $N round trips, median of $RUNS"
printf '%-17s %12s %9s %12s %12s %10s %8s\n' tracer "loop ms" slowdown events bytes "B/event" drops
base=0
tracers="untraced gotraced gotraced+kstacks gotraced-all perf-sched perf-record"
# One run of each in turn, RUNS times: the drifts of a noisy machine hit
# every tracer alike instead of whichever ran during them.
for _ in $(seq 1 "$RUNS"); do
	for kind in $tracers; do run_pp $kind >>"$tmp/$kind.runs"; done
done
for kind in $tracers; do
	ns=$(awk '{ print $1 }' "$tmp/$kind.runs" | median)
	read -r _ bytes events drops < <(tail -1 "$tmp/$kind.runs")
	[ $kind = untraced ] && base=$ns
	awk -v k=$kind -v ns="$ns" -v base="$base" -v b="$bytes" -v e="$events" -v d="$drops" 'BEGIN {
		printf "%-17s %12.1f %8.2fx %12d %12d %10s %8d\n", k, ns / 1e6,
			(base > 0 ? ns / base : 0), e, b, (e > 0 ? sprintf("%.1f", b / e) : "-"), d }'
done
# compare OURS THEIRS WHAT: our overhead against the matching perf's.
compare() {
	awk -v g="$(awk '{ print $1 }' "$tmp/$1.runs" | median)" \
	    -v p="$(awk '{ print $1 }' "$tmp/$2.runs" | median)" -v u="$base" -v o="$1" -v t="$2" -v w="$3" 'BEGIN {
		if (u > 0 && p > u)
			printf "%s %+.0f%% vs %s %+.0f%% (%s; target: at most half): %s\n", o,
				(g / u - 1) * 100, t, (p / u - 1) * 100, w, (g - u <= (p - u) / 2 ? "met" : "missed") }'
}
compare gotraced-all perf-record "both record every syscall; ours with stacks"
compare gotraced perf-sched "no syscall entries; ours with stacks"
if [ -s "$tmp/gotraced.runs" ]; then
	echo "(gotraced events are Go trace events written; perf's are samples, i.e. kernel events)"
fi

echo
echo "== bystanders: untraced programs beside gotraced, median of $RUNS (target < 1%)"
# Three kinds of untraced program: switch-heavy (the ping-pong), syscall-
# heavy (getppid loop), CPU-bound (arithmetic loop).  Each runs alone,
# beside an idle daemon (no session: no program attached), and beside a
# recording of another process (every switch, wakeup and syscall on the
# machine runs the capture's programs, which filter it out), with and
# without syscall entries.  bench_floor shows what a program that does
# nothing costs them: the floor under these figures.
FW=$build/workloads/fixedwork
kinds=("switch-heavy|$PP $N $MODE" "syscall-heavy|$FW sys 300000" "cpu-bound|$FW cpu 100000000")
one_each() { # one_each SETTING: one timed run of each kind, appended to SETTING.KIND
	local k
	for k in "${kinds[@]}"; do ${k#*|} | elapsed /dev/stdin >>"$tmp/$1.${k%%|*}"; done
}
# The recorded process (a thread sleeping 500 us, 2000 times a second)
# runs in every setting, traced only beside a recording: what is measured
# is the tracer, not the neighbour's own work.
"$build/workloads/sleeper" 100000000 500 >/dev/null 2>&1 &
neighbour=$!
# A round of every setting in turn, RUNS times, as above.
for _ in $(seq 1 "$RUNS"); do
	one_each alone
	rm -f "$tmp/idle.sock"
	"$build/gotraced" --socket "$tmp/idle.sock" >/dev/null 2>"$tmp/idle.err" &
	daemon=$!
	for _ in $(seq 1 100); do [ -S "$tmp/idle.sock" ] && break; sleep 0.1; done
	one_each idle
	kill -TERM "$daemon"; wait "$daemon"
	for mode in all blocking; do
		"$GTCTL" record -q --standalone --syscalls=$mode -p "$neighbour" -o "$tmp/busy.trace" \
			>/dev/null 2>"$tmp/busy.err" &
		rec=$!
		sleep 1
		one_each "beside-$mode"
		kill -INT "$rec"; wait "$rec"
	done
done
kill "$neighbour"; wait "$neighbour" 2>/dev/null
printf '%-14s %9s %22s %22s %22s\n' bystander "alone ms" "beside: idle daemon" "--syscalls=all" "a default recording"
for k in "${kinds[@]}"; do
	n=${k%%|*}
	awk -v n="$n" -v a="$(median <"$tmp/alone.$n")" -v i="$(median <"$tmp/idle.$n")" \
	    -v b="$(median <"$tmp/beside-all.$n")" -v q="$(median <"$tmp/beside-blocking.$n")" '
	function cell(x) { return sprintf("%9.1f ms %+7.2f%%", x / 1e6, (a > 0 ? (x / a - 1) * 100 : 0)) }
	BEGIN { printf "%-14s %9.1f %22s %22s %22s\n", n, a / 1e6, cell(i), cell(b), cell(q) }'
done
echo
echo "== pipeline throughput: ping-pong plus 2 spinners, recorded"
"$GTCTL" record -q --syscalls=all -o "$tmp/tp.trace" -- sh -c "\"$PP\" $((N * 4)) & \"$build/workloads/spin\" 2 2000 & wait" \
	>/dev/null 2>"$tmp/tp.err"
sed -n 's/.*recorded [0-9]* threads, \([0-9]*\) events, \([0-9]*\) bytes, \([0-9]*\) dropped in \([0-9.]*\)s.*/\1 \2 \3 \4/p' "$tmp/tp.err" |
	awk '{ printf "%d Go events written in %.2f s = %.0f events/s (%.1f MB/s); %d kernel events dropped (%.0f/s beyond what it kept up with)\n",
		$1, $4, ($4 > 0 ? $1 / $4 : 0), ($4 > 0 ? $2 / $4 / 1e6 : 0), $3, ($4 > 0 ? $3 / $4 : 0) }'
grep -q recorded "$tmp/tp.err" || echo "recording failed: $(tail -3 "$tmp/tp.err")"
