#!/usr/bin/env bash
# run.sh BUILD_DIR: runs every test and ends with one line `N passed, N failed`.
#
#   tests/lint/check_*.py         checks of the source tree (daemon/'s and format/'s layers)
#   BUILD_DIR/tests/test_*        unit and root-only integration test binaries
#   tests/integration/*.sh        scripts that record real programs
#   build/fuzz/fuzz_*             libFuzzer targets: each replays its saved
#                                 crashes and seeds, then fuzzes FUZZ_SECONDS (20)
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

passed=0 failed=0 skipped=0
failures=()
logdir=$build/test-logs
mkdir -p "$logdir"

run_one() {
	local name=$1; shift
	local log=$logdir/$name.log start=$SECONDS rc ok fail skip
	[ -n "$only" ] && [[ "$name" != *$only* ]] && return
	printf '== %s\n' "$name"
	"$@" >"$log" 2>&1 </dev/null
	rc=$?
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
	printf '   %d ok, %d failed, %d skipped (%ds)\n' "$ok" "$fail" "$skip" $((SECONDS - start))
}

for l in tests/lint/check_*.py; do
	run_one "$(basename "$l" .py)" python3 "$l"
done
for t in "$build"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
for s in tests/integration/*.sh; do
	[ "$(basename "$s")" = lib.sh ] && continue  # helpers, not a test
	[ -f "$s" ] || continue
	run_one "$(basename "$s" .sh)" bash "$s"
done
# Fuzzers: first the replay machinery itself on a fuzzer made to crash,
# then each target replays its saved crashes and seeds, then fuzzes.
run_one fuzz_replay_selftest bash tests/fuzz/selftest/replay_test.sh
for f in build/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	name=$(basename "$f")
	corpus=$build/fuzz-corpus/$name
	mkdir -p "$corpus"
	seeds=tests/fuzz/seeds/${name#fuzz_}
	crashes=tests/fuzz/crashes/${name#fuzz_}
	run_one "$name" tests/lib/fuzz_run.sh "$f" "$fuzz_seconds" "$corpus" "$seeds" "$crashes"
done

echo
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]} (logs in $logdir)"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
