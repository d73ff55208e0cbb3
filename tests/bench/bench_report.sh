#!/usr/bin/env bash
# bench_report.sh BUILD [FILE]: `gotracectl report` against Go 1.19's own
# reader on the same file (default stress_1_19_good from Go's source): best
# of several runs each, and the ratio (target: report >= 10x faster than
# `go tool trace -d`, i.e. as fast as inspect).  Both are whole processes,
# output to /dev/null; the report is timed with --json (all tables, every
# thread) and its peak memory (max RSS) printed next to the file size.
set -u
build=${1:-build}
file=${2:-$(go env GOROOT)/src/internal/trace/testdata/stress_1_19_good}
runs=5

now_ms() { date +%s%N | awk '{printf "%.3f", $1 / 1e6}'; }

# best_ms CMD...: the fastest of $runs runs of CMD, in ms.
best_ms() {
	local best="" t0 t1 d
	for _ in $(seq 1 $runs); do
		t0=$(now_ms)
		"$@" >/dev/null 2>&1
		t1=$(now_ms)
		d=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')
		if [ -z "$best" ] || awk -v d="$d" -v b="$best" 'BEGIN{exit !(d < b)}'; then
			best=$d
		fi
	done
	echo "$best"
}

[ -f "$file" ] || { echo "bench_report.sh: no such trace: $file" >&2; exit 1; }
[ -x "$build/gotracectl" ] || { echo "bench_report.sh: build $build/gotracectl first" >&2; exit 1; }
gotrace=$(go env GOTOOLDIR)/trace
[ -x "$gotrace" ] || { echo "bench_report.sh: Go's trace tool not found at $gotrace" >&2; exit 1; }
"$build/gotracectl" report --json "$file" >/dev/null || { echo "bench_report.sh: report fails on $file" >&2; exit 1; }
events=$("$gotrace" -d "$file" 2>/dev/null | wc -l)
go_ms=$(best_ms "$gotrace" -d "$file")
ours_ms=$(best_ms "$build/gotracectl" report --json "$file")
rss_kb=$( { /usr/bin/time -f %M "$build/gotracectl" report --json "$file" >/dev/null; } 2>&1 | tail -1)

echo "trace:            $file ($(stat -c %s "$file") bytes, $events events)"
echo "go tool trace -d: $go_ms ms (best of $runs)"
echo "gotracectl report: $ours_ms ms (--json, process, best of $runs), max RSS ${rss_kb} KiB"
awk -v g="$go_ms" -v o="$ours_ms" -v n="$events" 'BEGIN{
	printf "report speed:     %.1f M events/s\n", n / o / 1e3
	printf "ratio:            %.1fx faster than go tool trace -d (target >= 10x)\n", g / o }'
