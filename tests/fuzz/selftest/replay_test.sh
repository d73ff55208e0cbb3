#!/usr/bin/env bash
# replay_test.sh: tests/lib/fuzz_run.sh, the fuzzers' part of `make check`,
# on fuzz_selftest.c (crashes on the input "CRASH" only):
#  - saved inputs that do not crash: the replay passes;
#  - a saved crash file: the run fails before any fuzzing, names the file,
#    and the command it prints reproduces the crash;
#  - a crash found while fuzzing: the run fails, prints a command that
#    reproduces it, and every later run fails on it in the replay.
set -u
cd "$(dirname "$0")/../../.." || exit 1
tmp=$(mktemp -d /tmp/gt-fuzz-selftest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failures=0
ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; failures=$((failures + 1)); }
# the nested runs' own ok/FAIL lines must not count as ours: indent them
detail() { sed 's/^/     also: /'; }

fz=$tmp/fuzz_selftest
if ! out=$(${CLANG:-clang} -g -O1 -fsanitize=fuzzer tests/fuzz/selftest/fuzz_selftest.c -o "$fz" 2>&1); then
	fail fuzz_replay_selftest "cannot build the self-test fuzzer with clang (make deps)"
	echo "$out" | head -5 | detail
	exit 1
fi
mkdir -p "$tmp/seeds" "$tmp/crashes" "$tmp/corpus"
printf hello >"$tmp/seeds/hello"
printf CRAS >"$tmp/seeds/almost"

# run NAME SECONDS: fuzz_run.sh on the self-test fuzzer; output in $tmp/NAME.out
run() {
	tests/lib/fuzz_run.sh "$fz" "$2" "$tmp/corpus" "$tmp/seeds" "$tmp/crashes" >"$tmp/$1.out" 2>&1
}
# reproduces NAME: the command after "reproduce: " in NAME.out crashes
reproduces() {
	local cmd
	cmd=$(sed -n 's/.*reproduce: \([^;]*\).*/\1/p' "$tmp/$1.out" | head -1)
	[ -n "$cmd" ] && ! $cmd >"$tmp/$1.repro" 2>&1 && grep -q 'deadly signal' "$tmp/$1.repro"
}

if run clean 0 && grep -q '^ok fuzz_selftest: replayed 2 ' "$tmp/clean.out"; then
	ok fuzz_replay_clean
else
	fail fuzz_replay_clean "the replay of two harmless seeds did not pass"
	detail <"$tmp/clean.out"
fi

printf CRASH >"$tmp/crashes/saved-crash"
if run saved 30; then
	fail fuzz_replay_saved_crash "a saved crashing input did not fail the run"
	detail <"$tmp/saved.out"
elif ! grep -q "^FAIL fuzz_selftest: $tmp/crashes/saved-crash crashes it; reproduce: " "$tmp/saved.out"; then
	fail fuzz_replay_saved_crash "the FAIL line does not name the saved file"
	detail <"$tmp/saved.out"
elif grep -q 'INITED' "$tmp/saved.out"; then
	fail fuzz_replay_saved_crash "it went on fuzzing after the replay failed"
	detail <"$tmp/saved.out"
elif ! reproduces saved; then
	fail fuzz_replay_saved_crash "the printed command does not reproduce the crash"
	detail <"$tmp/saved.out"
else
	ok fuzz_replay_saved_crash
fi
rm -f "$tmp/crashes/saved-crash"

# A crashing input in the working corpus (which the replay does not read)
# crashes the fuzzing step as a fresh find would, deterministically.
printf CRASH >"$tmp/corpus/found-while-fuzzing"
if run found 30; then
	fail fuzz_replay_new_crash "a crash while fuzzing did not fail the run"
	detail <"$tmp/found.out"
elif ! grep -q '^FAIL fuzz_selftest: new crash; reproduce: ' "$tmp/found.out"; then
	fail fuzz_replay_new_crash "no FAIL line with the command that reproduces it"
	detail <"$tmp/found.out"
elif ! reproduces found; then
	fail fuzz_replay_new_crash "the printed command does not reproduce the crash"
	detail <"$tmp/found.out"
else
	rm -f "$tmp/corpus/found-while-fuzzing"
	if run again 0; then
		fail fuzz_replay_new_crash "the next run passed: the crash found once was forgotten"
		detail <"$tmp/again.out"
	else
		ok fuzz_replay_new_crash
	fi
fi
[ "$failures" -eq 0 ]
