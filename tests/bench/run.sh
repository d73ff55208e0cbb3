#!/usr/bin/env bash
# run.sh BUILD_DIR: runs the benchmarks, one step after another, then prints
# a side-by-side summary: each step's status, time, and its figure lines
# (lines with a rate or a target, e.g. "events/s ... (target >= 30 M/s)").
#
# Benchmarks print figures and assert nothing; a step fails only if its
# command exits non-zero.  BENCH_STEPS="cost" (BENCH_STEPS=cost make bench)
# runs only the steps named.  Full output: BUILD_DIR/bench-logs/NAME.log.
# To add a benchmark: a tests/bench/bench_*.c binary is picked up by
# itself; anything else goes in the list of steps at the bottom.
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
logdir=$build/bench-logs
mkdir -p "$logdir"
names=() results=() failed=0

# step NAME CMD ARGS...: runs one benchmark, shows its output, records it;
# with BENCH_STEPS set (names, e.g. "cost bystander_progs"), only those.
step() {
	local name=$1 log=$logdir/$1.log start=$SECONDS rc
	shift
	[ -z "${BENCH_STEPS:-}" ] || [[ " $BENCH_STEPS " == *" $name "* ]] || return 0
	printf '== %s\n' "$name"
	"$@" >"$log" 2>&1 </dev/null
	rc=$?
	sed 's/^/   /' "$log"
	names+=("$name")
	if [ "$rc" -eq 0 ]; then
		results+=("ok $((SECONDS - start))s")
	else
		results+=("FAILED (exit $rc) $((SECONDS - start))s")
		failed=$((failed + 1))
	fi
}

# ---- steps -------------------------------------------------------------------
# Binaries that need arguments get their own step below; the rest run bare.
with_args=" bench_reader "
for b in "$build"/bench/*; do
	[ -x "$b" ] && [ -f "$b" ] || continue
	[[ "$with_args" == *" $(basename "$b") "* ]] && continue
	step "$(basename "$b")" "$b"
done
# The checker next to Go 1.19's own reader on stress_1_19_good.
step bench_reader tests/bench/bench_reader.sh "$build"
# gotracectl report next to go tool trace -d on the same file.
step bench_report tests/bench/bench_report.sh "$build"
# report on a 100 MiB Go 1.23 runtime trace next to go tool trace -d=1:
# time and peak RSS (issue 33: report under 100 MiB).
step bench_report_v2 tests/bench/bench_report_v2.sh "$build"
# Append further steps here, e.g.:  step overhead_redis tests/bench/overhead.sh "$build"
step overhead tests/bench/overhead.sh "$build"
# Issue 34's table in one run: traced ping-pongs (pipe, loopback TCP,
# pinned or not) untraced | perf sched | default | --flight; bystanders
# beside an idle daemon, a recording and a flight recording of another
# process; the flight recorder's CPU and memory on a busy nginx (~5 min).
step cost tests/bench/cost.sh "$build"
# What each part of the hot BPF programs costs (variants with parts left out).
step bpf_parts tests/bench/bpf_parts.sh "$build"
step bystander_progs tests/bench/bystander_progs.sh "$build" # each program's early exit for untraced tasks
# How long a recording takes to start and stop, embedded and through the
# daemon, next to perf sched record; gotracectl record -v's phases.
step startstop tests/bench/startstop.sh "$build"
# record -a next to perf sched record -a on a switch-heavy program.
step overhead_all tests/bench/overhead_all.sh "$build"
# What naming loopback wakers costs per wakeup (BPF run time, haproxy -> nginx);
# LOOPBACK_BEFORE=DIR adds a build of an older commit beside it.
step loopback_cost tests/bench/loopback_cost.sh "$build" ${LOOPBACK_BEFORE:-}
# --call-graph=fp vs dwarf: the kernel side per stack (bench_unwind: user space).
step unwind_cost tests/bench/unwind_cost.sh "$build"
step python_cost tests/bench/python_cost.sh "$build" # Python frames per stack, beside the native walk
# nginx's req/s untraced and under each recorder; where drops begin.
step servers tests/bench/servers.sh "$build"
# Sessions of one gotraced beside each other: a busy one's drops alone and
# beside 8 that start and stop every second, spans, status latency, SIGTERM.
step isolation env GT_BUILD="$build" ISOLATION_BENCH=1 tests/integration/daemon_isolation.sh
# Stopping a --heap malloc recording (SIGINT -> exit), embedded and daemon,
# uprobe_multi vs perf-event links (bench_uprobe_stop: the probes alone).
step uprobe_stop tests/bench/uprobe_stop.sh "$build"
# record --flight: trigger-to-file latency, RSS over 10 min busy, slowdown.
step flight tests/bench/flight.sh "$build"
# 1 000 sequential sessions on fresh processes: the daemon's RSS and fds.
step daemon_sessions tests/bench/daemon_sessions.sh "$build"

# ---- summary -----------------------------------------------------------------
echo
echo "== summary"
for i in "${!names[@]}"; do
	printf '%-28s %s\n' "${names[$i]}" "${results[$i]}"
	grep -E 'target|/s|B/event|^figure' "$logdir/${names[$i]}.log" | sed 's/^ */      /' | head -12
done
[ "$failed" -eq 0 ]
