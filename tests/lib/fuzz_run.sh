#!/usr/bin/env bash
# fuzz_run.sh FUZZER SECONDS CORPUS_DIR [SEED_DIR]: a bounded libFuzzer run.
# Seeds come from SEED_DIR when it exists, and for the trace reader from the
# Go runtime's canned traces.  Prints `ok NAME` when no crash was found.
set -u
fuzzer=$1 seconds=$2 corpus=$3 seeds=${4:-}
name=$(basename "$fuzzer")
dirs=("$corpus")
[ -n "$seeds" ] && [ -d "$seeds" ] && dirs+=("$seeds")
if [ "$name" = fuzz_reader ]; then
	dirs+=("$(go env GOROOT)/src/internal/trace/testdata")
fi
if "$fuzzer" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix="$corpus/" "${dirs[@]}" 2>&1 | tail -20; then
	rc=${PIPESTATUS[0]}
else
	rc=${PIPESTATUS[0]}
fi
if [ "$rc" -eq 0 ]; then
	echo "ok $name: ${seconds}s without a crash"
else
	echo "FAIL $name: crash or sanitizer report (artifacts in $corpus)"
	exit 1
fi
