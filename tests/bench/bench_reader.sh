#!/usr/bin/env bash
# bench_reader.sh BUILD: our trace checker against Go 1.19's own reader on
# the same file (stress_1_19_good from Go's source), side by side: best of
# several runs each, and the ratio (target: ours >= 10x faster).
# Go is timed as `$(go env GOTOOLDIR)/trace -d FILE` (the tool itself, no
# `go` launcher), output to /dev/null.  Ours is bench_reader (in-process,
# best of 20) when built, else `gotracectl inspect`.
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

[ -f "$file" ] || { echo "bench_reader.sh: no such trace: $file" >&2; exit 1; }
gotrace=$(go env GOTOOLDIR)/trace
[ -x "$gotrace" ] || { echo "bench_reader.sh: Go's trace tool not found at $gotrace" >&2; exit 1; }
"$gotrace" -d "$file" >/dev/null 2>&1 || { echo "bench_reader.sh: Go rejects $file" >&2; exit 1; }
events=$("$gotrace" -d "$file" 2>/dev/null | wc -l)
go_ms=$(best_ms "$gotrace" -d "$file")

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

echo "trace:            $file ($(stat -c %s "$file") bytes, $events events)"
echo "go tool trace -d: $go_ms ms (best of $runs)"
echo "gotraced checker: $ours_ms ms via $how"
awk -v g="$go_ms" -v o="$ours_ms" -v n="$events" 'BEGIN{
	printf "checker speed:    %.1f M events/s\n", n / o / 1e3
	printf "ratio:            %.1fx faster than go tool trace -d (target >= 10x)\n", g / o }'
