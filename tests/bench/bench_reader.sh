#!/usr/bin/env bash
# bench_reader.sh BUILD: our trace checker against Go 1.19's own reader on
# the same file (stress_1_19_good from Go's source), side by side: best of
# several runs each, and the ratio (target: ours >= 10x faster).
# Go is timed as `$(go env GOTOOLDIR)/trace -d FILE` (the tool itself, no
# `go` launcher), output to /dev/null.  Ours is bench_reader (in-process,
# best of 20) when built, else `gotracectl inspect`.
set -u
. "$(dirname "$0")/go_ratio.sh" # build, file and runs from "$@"; the timing

go_trace_tool "$file"
"$gotrace" -d "$file" >/dev/null 2>&1 || { echo "bench_reader.sh: Go rejects $file" >&2; exit 1; }
go_time "$file"

if [ -x "$build/bench/bench_reader" ]; then
	line=$("$build/bench/bench_reader" "$file" 20) || { echo "bench_reader failed" >&2; exit 1; }
	ours_ms=$(echo "$line" | sed -n 's/.*, \([0-9.]*\) ms,.*/\1/p')
	how="bench_reader (in-process, best of 20)"
elif [ -x "$build/gotracectl" ]; then
	ours_ms=$(best_ms "$build/gotracectl" inspect --go-rules "$file")
	how="gotracectl inspect --go-rules (process, best of $runs)"
else
	echo "bench_reader.sh: build $build/bench/bench_reader or $build/gotracectl first" >&2
	exit 1
fi
[ -n "$ours_ms" ] || { echo "bench_reader.sh: could not read our time" >&2; exit 1; }

go_summary checker "$file" "gotraced checker: $ours_ms ms via $how"
