#!/usr/bin/env bash
# bench_report.sh BUILD [FILE]: `gotracectl report` against Go 1.19's own
# reader on the same file (default stress_1_19_good from Go's source): best
# of several runs each, and the ratio (target: report >= 10x faster than
# `go tool trace -d`, i.e. as fast as inspect).  Both are whole processes,
# output to /dev/null; the report is timed with --json (all tables, every
# thread) and its peak memory (max RSS) printed next to the file size.
set -u
. "$(dirname "$0")/go_ratio.sh" # build, file and runs from "$@"; the timing

go_trace_tool "$file"
[ -x "$build/gotracectl" ] || { echo "bench_report.sh: build $build/gotracectl first" >&2; exit 1; }
"$build/gotracectl" report --json "$file" >/dev/null || { echo "bench_report.sh: report fails on $file" >&2; exit 1; }
go_time "$file"
ours_ms=$(best_ms "$build/gotracectl" report --json "$file")
rss_kb=$( { /usr/bin/time -f %M "$build/gotracectl" report --json "$file" >/dev/null; } 2>&1 | tail -1)

go_summary report "$file" \
	"gotracectl report: $ours_ms ms (--json, process, best of $runs), max RSS ${rss_kb} KiB"
