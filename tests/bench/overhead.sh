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
#     ratio and bytes written per event.  gotraced-settled is the default
#     with the loop begun 1 s into the recording (the workload's --wait):
#     the difference from gotraced is what the recorder's own start-up
#     work (symbolizing the new process) costs a loop that runs at once.
#  1b. The same over loopback TCP: two processes (tcppingpong) passing one
#     byte over 127.0.0.1, every wakeup arriving through the receive
#     softirq (a path of its own in gotraced): untraced vs gotraced's
#     default vs `perf sched record`.
#  1c. What gotraced's BPF programs cost per event, on both: one more
#     recording of each with kernel.bpf_stats_enabled=1 (restored after),
#     the programs' run time and run count over the loop alone (the
#     workload's --wait), in ns per run and per round trip, next to what
#     the loop lost per round trip in 1 and 1b.
#  2. Bystanders: the slowdown of untraced programs (switch-heavy,
#     syscall-heavy, CPU-bound) beside an idle daemon and while another
#     process is being recorded (BPF filters them out; target < 1%).
#  3. Throughput: events per second the pipeline sustained, and drops.
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
GTCTL=$build/gotracectl
PP=$build/workloads/pingpong
TPP=$build/workloads/tcppingpong
N=${OVERHEAD_ROUNDS:-50000}
RUNS=${OVERHEAD_RUNS:-5}
# strict = both threads on CPU 0, SCHED_FIFO: full speed on one CPU, and
# far steadier timings than letting two CPUs race (needs root).
MODE=${OVERHEAD_MODE:-strict pipe}
. tests/bench/bpf_progs.sh
tmp=$(mktemp -d /tmp/gt-overhead.XXXXXX)
trap 'gt_bpf_stats_restore; rm -rf "$tmp"' EXIT

for f in "$GTCTL" "$build/gotraced" "$PP" "$TPP" "$build/workloads/sleeper" "$build/workloads/fixedwork"; do
	[ -x "$f" ] || { echo "overhead: $f not built (make BUILD=$build tests)"; exit 1; }
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }
elapsed() { awk '$1 == "elapsed_ns" { print $2 }' "$1"; }

# run_pp KIND: one run of the workload WL (an array: the command) under
# KIND; prints "elapsed_ns bytes events drops" (0 when untraced; drops:
# gotraced's failed ring reservations, perf's lost samples).  gotraced is
# embedded (--standalone), whether or not a daemon runs.
run_pp() {
	local out=$tmp/pp.out err=$tmp/pp.err bytes=0 events=0 drops=0
	rm -f "$tmp/t.trace" "$tmp/p.data"
	case $1 in
	untraced) "${WL[@]}" >"$out" 2>"$err" ;;
	gotraced | gotraced+kstacks | gotraced-all)
		local flags=()
		[ "$1" = gotraced+kstacks ] && flags=(--kernel-stacks)
		[ "$1" = gotraced-all ] && flags=(--syscalls=all)
		"$GTCTL" record -q --standalone "${flags[@]}" -o "$tmp/t.trace" -- "${WL[@]}" >"$out" 2>"$err"
		bytes=$(stat -c %s "$tmp/t.trace" 2>/dev/null || echo 0)
		events=$(sed -n 's/.*recorded [0-9]* threads, \([0-9]*\) events.*/\1/p' "$err")
		drops=$(sed -n 's/.* \([0-9]*\) dropped in .*/\1/p' "$err") ;;
	gotraced-settled)
		# the loop begins 1 s after the recording: what the recorder does
		# as it starts (symbolizing the new process) is not in it
		rm -f "$tmp/go"
		mkfifo "$tmp/go"
		"$GTCTL" record -q --standalone -o "$tmp/t.trace" -- "${WL[0]}" --wait "${WL[@]:1}" \
			<"$tmp/go" >"$out" 2>"$err" &
		local rec=$! i
		exec 7>"$tmp/go"
		for i in $(seq 1 600); do grep -qs '^ready' "$out" && break; sleep 0.05; done
		sleep 1
		printf x >&7
		exec 7>&-
		wait "$rec"
		bytes=$(stat -c %s "$tmp/t.trace" 2>/dev/null || echo 0)
		events=$(sed -n 's/.*recorded [0-9]* threads, \([0-9]*\) events.*/\1/p' "$err")
		drops=$(sed -n 's/.* \([0-9]*\) dropped in .*/\1/p' "$err") ;;
	perf-sched)
		perf sched record -o "$tmp/p.data" -- "${WL[@]}" >"$out" 2>"$err"
		bytes=$(stat -c %s "$tmp/p.data")
		events=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$err")
		drops=$(sed -n 's/.*Lost \([0-9]*\) .*/\1/p' "$err" | head -1) ;;
	perf-record)
		perf record -e 'sched:*' -e 'raw_syscalls:*' -o "$tmp/p.data" -- "${WL[@]}" >"$out" 2>"$err"
		bytes=$(stat -c %s "$tmp/p.data")
		events=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$err")
		drops=$(sed -n 's/.*Lost \([0-9]*\) .*/\1/p' "$err" | head -1) ;;
	esac
	echo "$(elapsed "$out") $bytes ${events:-0} ${drops:-0}"
}

# table TAG TRACERS...: RUNS interleaved rounds of WL under each tracer
# (one run of each in turn: the drifts of a noisy machine hit every tracer
# alike instead of whichever ran during them), then their medians side by
# side; the runs are kept in $tmp/TAG.KIND.runs.
table() {
	local tag=$1 kind ns bytes events drops base=0
	shift
	for _ in $(seq 1 "$RUNS"); do
		for kind in "$@"; do run_pp "$kind" >>"$tmp/$tag.$kind.runs"; done
	done
	printf '%-17s %12s %9s %12s %12s %10s %8s\n' tracer "loop ms" slowdown events bytes "B/event" drops
	for kind in "$@"; do
		ns=$(loop_ns "$tag" "$kind")
		read -r _ bytes events drops < <(tail -1 "$tmp/$tag.$kind.runs")
		[ "$kind" = untraced ] && base=$ns
		awk -v k="$kind" -v ns="$ns" -v base="$base" -v b="$bytes" -v e="$events" -v d="$drops" 'BEGIN {
			printf "%-17s %12.1f %8.2fx %12d %12d %10s %8d\n", k, ns / 1e6,
				(base > 0 ? ns / base : 0), e, b, (e > 0 ? sprintf("%.1f", b / e) : "-"), d }'
	done
}
# loop_ns TAG KIND: the median loop time of KIND in table TAG
loop_ns() { awk '{ print $1 }' "$tmp/$1.$2.runs" | median; }
# compare TAG OURS THEIRS WHAT: our overhead against the matching perf's.
compare() {
	awk -v g="$(loop_ns "$1" "$2")" -v p="$(loop_ns "$1" "$3")" -v u="$(loop_ns "$1" untraced)" \
	    -v o="$2" -v t="$3" -v w="$4" 'BEGIN {
		if (u > 0 && p > u)
			printf "%s %+.0f%% vs %s %+.0f%% (%s; target: at most half): %s\n", o,
				(g / u - 1) * 100, t, (p / u - 1) * 100, w, (g - u <= (p - u) / 2 ? "met" : "missed") }'
}

echo "== overhead on the traced program: ping-pong ($MODE), $N round trips, median of $RUNS"
WL=("$PP" "$N" $MODE)
table pipe untraced gotraced gotraced-settled gotraced+kstacks gotraced-all perf-sched perf-record
compare pipe gotraced-all perf-record "both record every syscall; ours with stacks"
compare pipe gotraced perf-sched "no syscall entries; ours with stacks"
echo "(gotraced events are Go trace events written; perf's are samples, i.e. kernel events;"
echo " gotraced-settled: the loop begins 1 s into the recording, not at once)"

echo
echo "== overhead on the traced program: loopback TCP ping-pong (2 processes, strict), $N round trips, median of $RUNS"
WL=("$TPP" "$N" strict)
table tcp untraced gotraced gotraced-settled perf-sched
compare tcp gotraced perf-sched "wakeups from the loopback softirq; ours with stacks"

echo
echo "== gotraced's BPF programs per event (kernel.bpf_stats_enabled; the loop only, default recording)"
# bpf_cost TAG CMD...: one recording of CMD --wait ...; the programs' run
# time and count between its `ready` and its `done`.  Every run counts,
# the other processes' (filtered out) too: on a busy machine they weigh in.
bpf_cost() {
	local tag=$1
	shift
	gt_bpf_loop "$tmp" "$GTCTL" record -q --standalone -o "$tmp/s.trace" -- "$@" ||
		{ echo "$tag: gotracectl record failed: $(tail -3 "$tmp/s.err")"; return; }
	python3 - "$tmp/before" "$tmp/after" "$tag" "$N" \
		"$(loop_ns "$tag" untraced)" "$(loop_ns "$tag" gotraced)" "$(elapsed "$tmp/s.out")" <<'PY'
import sys
def read(p):
    return {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in open(p) if l.strip()}
b, a = read(sys.argv[1]), read(sys.argv[2])
tag, n, base, traced, loop = sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7] or 0)
d = {k: (a[k][0] - b.get(k, (0, 0))[0], a[k][1] - b.get(k, (0, 0))[1]) for k in a}
print(f"{tag}: {'program':22s} {'runs':>9s} {'runs/rt':>8s} {'ns/run':>8s} {'ns/rt':>8s}")
total = 0
for k, (ns, cnt) in sorted(d.items(), key=lambda kv: -kv[1][0]):
    if cnt <= 0:
        continue
    total += ns
    print(f"{tag}: {k:22s} {cnt:9d} {cnt / n:8.2f} {ns / cnt:8.1f} {ns / n:8.1f}")
print(f"{tag}: all programs: {total / n:.0f} ns per round trip in the kernel "
      f"(this loop {loop / n:.0f} ns/rt with stats on); the timed runs above lost "
      f"{(traced - base) / n:.0f} ns per round trip ({traced / base if base else 0:.2f}x)")
PY
}
gt_bpf_stats_on || echo "cannot enable kernel.bpf_stats_enabled: no per-program figures"
bpf_cost pipe "$PP" --wait "$N" $MODE
bpf_cost tcp "$TPP" --wait "$N" strict
gt_bpf_stats_restore

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
