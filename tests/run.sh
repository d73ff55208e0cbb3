#!/usr/bin/env bash
# run.sh BUILD_DIR: runs every test and ends with one line `N passed, N failed`.
#
#   tests/lint/check_*.py         checks of the source tree (daemon/'s and format/'s layers)
#   BUILD_DIR/tests/test_*        unit tests (run two at a time) and, marked
#                                 `// tier: system`, root-only tests of the real
#                                 kernel (one at a time)
#   tests/integration/*.sh        scripts that record real programs
#   v2.NAME                       the v2 pass: some of those scripts again
#                                 with GT_GO_VERSION=1.23 (Go 1.23 traces;
#                                 V2=0 leaves it out, as does a GT_GO_VERSION
#                                 already set: every script then records v2)
#   build/fuzz/fuzz_*             libFuzzer targets: each replays its saved
#                                 crashes and seeds, then fuzzes FUZZ_SECONDS (20);
#                                 two targets at a time
#
# TIER=unit runs the lint and the unit tests only (make check-unit).
#
# Every test prints `ok NAME` or `FAIL NAME: why` lines; a test that exits
# non-zero without saying FAIL counts as one failure.  Tests that need BPF run
# always; they are skipped only when GOTRACED_SKIP_BPF=1 says so.
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
export GT_BUILD=$build
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fuzz_seconds=${FUZZ_SECONDS:-20}
only=${TESTS:-}   # TESTS=pattern runs only matching tests
tier=${TIER:-all} # TIER=unit: lint and the unit tier only (make check-unit)
jobs=${JOBS:-2}   # how many independent tests run at once

passed=0 failed=0 skipped=0
failures=()
logdir=$build/test-logs
mkdir -p "$logdir"

# A test's log, and its exit status and seconds: BUILD_DIR/test-logs/NAME.log
# and NAME.rc.
exec_one() {
	local name=$1 start=$SECONDS; shift
	"$@" >"$logdir/$name.log" 2>&1 </dev/null
	echo "$? $((SECONDS - start))" >"$logdir/$name.rc"
}

# Prints a finished test's verdict and adds it to the counts.
summarize() {
	local name=$1 log=$logdir/$1.log rc=127 secs=0 ok fail skip
	read -r rc secs <"$logdir/$name.rc"
	printf '== %s\n' "$name"
	ok=$(grep -c '^ok ' "$log")
	fail=$(grep -c '^FAIL ' "$log")
	skip=$(grep -c '^skip ' "$log")
	grep -E '^(FAIL|skip) |^     also:' "$log" | sed 's/^/   /' | head -40
	if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail=1
		echo "   FAIL $name: exited $rc without naming a failed case; last lines:"
		tail -15 "$log" | sed 's/^/      /'
	fi
	passed=$((passed + ok)); failed=$((failed + fail)); skipped=$((skipped + skip))
	[ "$fail" -gt 0 ] && failures+=("$name")
	printf '   %d ok, %d failed, %d skipped (%ds)\n' "$ok" "$fail" "$skip" "$secs"
}

selected() { [ -z "$only" ] || [[ "$1" == *$only* ]]; }

# One test at a time (tests that record measure against ground truth).
run_one() {
	local name=$1; shift
	selected "$name" || return
	rm -f "$logdir/$name.rc"
	exec_one "$name" "$@"
	summarize "$name"
}

# Tests that share nothing (no BPF, no daemon, no recording): run $jobs at
# a time, reported in the order given once all have ended.  Arguments:
# NAME CMD... separated by a lone ';'.
run_parallel() {
	local names=() cmd=() n
	while [ $# -gt 0 ]; do
		n=$1; shift; cmd=()
		while [ $# -gt 0 ] && [ "$1" != ";" ]; do cmd+=("$1"); shift; done
		[ $# -gt 0 ] && shift
		selected "$n" || continue
		names+=("$n")
		rm -f "$logdir/$n.rc"
		while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
		exec_one "$n" "${cmd[@]}" &
	done
	wait
	for n in "${names[@]}"; do summarize "$n"; done
}

# A unit test binary that needs no BPF, root or real program.
unit_tier() { ! grep -q '^// tier: system' "tests/unit/$1.c" 2>/dev/null; }

# Lint and the unit tier, in parallel; then the system tests, one by one.
group=()
for l in tests/lint/check_*.py; do
	group+=("$(basename "$l" .py)" python3 "$l" ";")
done
for t in "$build"/tests/test_*; do
	[ -x "$t" ] || continue
	unit_tier "$(basename "$t")" && group+=("$(basename "$t")" "$t" ";")
done
run_parallel "${group[@]}"
for t in "$build"/tests/test_*; do
	[ -x "$t" ] || continue
	unit_tier "$(basename "$t")" || run_one "$(basename "$t")" "$t"
done
if [ "$tier" != unit ]; then
	for s in tests/integration/*.sh; do
		[ "$(basename "$s")" = lib.sh ] && continue  # helpers, not a test
		[ -f "$s" ] || continue
		run_one "$(basename "$s" .sh)" bash "$s"
	done
	# The v2 pass: recording scripts whose checks cover what the v1 run's
	# own v2 tests do not (fidelity to /proc, wakers, names, short lives,
	# stacks, v1's shapes Go converts, real servers, allocation samples,
	# privileges and ptrace's rule), run again on Go 1.23 files: every
	# record of theirs gets --go-version 1.23 (tests/lib/gtctl_go_version.sh;
	# docs/testing.md): ~6 min.
	if [ "${V2:-1}" != 0 ] && [ -z "${GT_GO_VERSION:-}" ]; then
		for s in record_fidelity record_wakeups record_identity record_shortlived \
			record_callers record_honest record_readers record_report \
			record_interpose daemon_privilege daemon_ptrace; do
			run_one "v2.$s" env GT_GO_VERSION=1.23 bash "tests/integration/$s.sh"
		done
		run_one v2.record_servers env GT_GO_VERSION=1.23 GT_SERVERS="postgres gohttp" \
			bash tests/integration/record_servers.sh
	fi
	# Fuzzers: first the replay machinery itself on a fuzzer made to crash,
	# then each target replays its saved crashes and seeds, then fuzzes;
	# the targets run side by side (each is one process on its own corpus).
	run_one fuzz_replay_selftest bash tests/fuzz/selftest/replay_test.sh
	group=()
	for f in build/fuzz/fuzz_*; do
		[ -x "$f" ] || continue
		name=$(basename "$f")
		corpus=$build/fuzz-corpus/$name
		mkdir -p "$corpus"
		seeds=tests/fuzz/seeds/${name#fuzz_}
		crashes=tests/fuzz/crashes/${name#fuzz_}
		group+=("$name" tests/lib/fuzz_run.sh "$f" "$fuzz_seconds" "$corpus" "$seeds" "$crashes" ";")
	done
	run_parallel "${group[@]}"
fi

echo
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]} (logs in $logdir)"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
