#!/usr/bin/env bash
# fuzz_run.sh FUZZER SECONDS CORPUS_DIR [SEED_DIR [CRASH_DIR]]: one fuzzer's
# part of `make check`, in two steps:
#
#  1. replay: every file of CRASH_DIR (crashes saved in the tree, see
#     tests/fuzz/crashes/README), of CORPUS_DIR.crashes (crashes earlier
#     runs found here and nobody saved yet) and of SEED_DIR (for the trace
#     reader also the Go runtime's canned traces) runs once.  A crash found
#     once fails every later run until it is fixed, whatever the fuzzing
#     below happens to find.
#  2. fuzzing for SECONDS (0: replay only) from CORPUS_DIR plus the seeds;
#     what it learns stays in CORPUS_DIR, a new crash goes to
#     CORPUS_DIR.crashes/.
#
# Prints `ok NAME` or `FAIL NAME: why` with the command that reproduces
# the crash; exits 1 on a crash.
set -u
fuzzer=$1 seconds=$2 corpus=$3 seeds=${4:-} crashes=${5:-}
name=$(basename "$fuzzer")
found=$corpus.crashes
opts=(-timeout=10 -rss_limit_mb=2048)
# The replay runs whole files, not the fuzzer's 64 KiB inputs: Go's canned
# 370 KB stress traces take 9 s each through the checker under the
# fuzzer's instrumentation on a quiet machine (0.15 s in a release build),
# and went past 10 s at load 10.  A hang still ends the replay, later.
replay_opts=(-timeout=120 -rss_limit_mb=2048)
mkdir -p "$corpus" "$found"

seed_dirs=()
[ -n "$seeds" ] && [ -d "$seeds" ] && seed_dirs+=("$seeds")
if [ "$name" = fuzz_reader ]; then
	seed_dirs+=("$(go env GOROOT)/src/internal/trace/testdata")
fi

# --- 1. replay -----------------------------------------------------------------
# All files in one run (libFuzzer runs the files it is given once each);
# if that crashes, one run per file, so that every crashing file is named
# with the command that reproduces it.
files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(find ${crashes:+"$crashes"} "$found" \
	"${seed_dirs[@]}" -type f ! -name 'README*' -print0 2>/dev/null | sort -z)
replayed=${#files[@]} crashed=0
if [ "$replayed" -gt 0 ] && ! "$fuzzer" "${replay_opts[@]}" "${files[@]}" >/dev/null 2>&1; then
	for f in "${files[@]}"; do
		if ! out=$("$fuzzer" "${replay_opts[@]}" "$f" 2>&1); then
			crashed=$((crashed + 1))
			echo "$out" | grep -E '^(==[0-9]+==)?ERROR|^SUMMARY|runtime error' | head -5
			echo "FAIL $name: $f crashes it; reproduce: $fuzzer $f"
		fi
	done
	if [ "$crashed" = 0 ]; then
		echo "FAIL $name: the replay of all $replayed saved inputs at once crashed, none alone;" \
			"reproduce: $fuzzer ${files[*]}"
		exit 1
	fi
fi
if [ "$crashed" -gt 0 ]; then
	echo "# $crashed of $replayed saved inputs crash $name: fix them before fuzzing further"
	exit 1
fi
echo "# $name: replayed $replayed saved inputs without a crash"
if [ "$seconds" = 0 ]; then
	echo "ok $name: replayed $replayed saved inputs (no fuzzing asked)"
	exit 0
fi

# --- 2. fuzzing ----------------------------------------------------------------
out=$("$fuzzer" "${opts[@]}" -max_total_time="$seconds" -max_len=65536 \
	-artifact_prefix="$found/" "$corpus" "${seed_dirs[@]}" 2>&1)
rc=$?
echo "$out" | tail -20
if [ "$rc" -eq 0 ]; then
	echo "ok $name: replayed $replayed saved inputs, then ${seconds}s without a crash"
	exit 0
fi
unit=$(echo "$out" | sed -n 's/.*Test unit written to \(.*\)$/\1/p' | tail -1)
if [ -n "$unit" ]; then
	echo "FAIL $name: new crash; reproduce: $fuzzer $unit; keep it: cp $unit tests/fuzz/crashes/${name#fuzz_}/NAME"
else
	echo "FAIL $name: exited $rc without saving the input (sanitizer report above)"
fi
exit 1
