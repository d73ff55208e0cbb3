#!/usr/bin/env bash
# bench_report_v2.sh BUILD [MB]: `gotracectl report` on a large Go 1.23
# runtime trace (MB MiB, default 100, made at run time by
# tests/workloads/go/v2big and kept in BUILD/bench-v2big/ for the next run)
# next to Go 1.23's own reader, `go tool trace -d=1`, on the same file: the
# wall time and peak RSS of each (one run; outputs to /dev/null).  Issue
# 33's target: report under 100 MB of RSS on a 100 MB trace (memory
# bounded by the largest generation, docs/format.md).  Go's -d=1 prints
# every event: 15 min for 117 MiB on the 2 shared cores at load 8 (report:
# under 1); REPORT_V2_GO=0 leaves it out.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/v2big.sh
build=${1:-build}
mb=${2:-100}
go=${GOCHECK_GO123:-/usr/lib/go-1.23/bin/go}
dir=$build/bench-v2big
file=$dir/v2big-$mb.trace

[ -x "$build/gotracectl" ] || { echo "bench_report_v2.sh: build $build/gotracectl first" >&2; exit 1; }
[ -x "$go" ] || { echo "bench_report_v2.sh: Go 1.23 not installed at $go" >&2; exit 1; }
gotrace=$("$go" env GOTOOLDIR)/trace
[ -x "$gotrace" ] || { echo "bench_report_v2.sh: Go 1.23's trace tool not at $gotrace" >&2; exit 1; }
if [ ! -s "$file" ] || [ tests/workloads/go/v2big/main.go -nt "$file" ]; then
	v2big_trace "$go" "$dir" "$file.tmp" "$mb" && mv "$file.tmp" "$file" || exit 1
fi
read -r gens largest < <(v2_gens "$file")
size=$(stat -c %s "$file")
echo "trace: $file: $size bytes, $gens generations, the largest $largest bytes"

read -r ours_s ours_kb < <(time_rss "$build/gotracectl" report --json "$file") ||
	{ echo "bench_report_v2.sh: report fails on $file" >&2; exit 1; }
awk -v os="$ours_s" -v ok="$ours_kb" -v mb="$((size >> 20))" 'BEGIN{
	printf "figure: report --json on a %d MiB v2 trace: %.1f s, peak RSS %.1f MiB (target < 100 MiB)\n", mb, os, ok / 1024 }'
[ "${REPORT_V2_GO:-1}" = 0 ] && exit 0
read -r go_s go_kb < <(time_rss "$gotrace" -d=1 "$file") ||
	{ echo "bench_report_v2.sh: go tool trace -d=1 fails on $file" >&2; exit 1; }
awk -v gs="$go_s" -v gk="$go_kb" 'BEGIN{
	printf "figure: go tool trace -d=1 (Go 1.23) on it: %.1f s, peak RSS %.1f MiB\n", gs, gk / 1024 }'
