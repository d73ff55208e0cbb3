#!/usr/bin/env bash
# report_v2memory.sh: `gotracectl report` reads a Go 1.22+ (v2) file in
# memory bounded by its largest generation, not by its length (issue 33;
# docs/format.md, "Go 1.22+ native format (v2)"), no BPF needed.
#
#  1. tests/workloads/go/v2big (goroutines busy with channels, a mutex,
#     syscalls, sleeps; built with Go 1.23) writes a runtime trace of
#     24 MiB (a few generations, one a second) and one of 1 MiB.
#  2. report --json reads both; its peak RSS (the child's ru_maxrss) on
#     the large one exceeds that on the small one (the binary, the
#     sanitizers' runtime, the small file) by less than the large file's
#     largest generation + 24 MiB (goroutines, stacks, histograms,
#     allocator slack).  Reading the file one generation at a time and
#     letting each go costs one generation's bytes; holding the file, or
#     a decoded copy of a generation's events (72 bytes an event), costs
#     ten times that: 354 MB for a 37 MB trace before the fix.
# An RSS bound in the suite (docs/testing.md): the margin is wide (a fixed
# reading takes about half of it) and on a busy machine a process uses no
# more memory, only more time.  20-35 s (half of it report under ASan).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh
. tests/lib/v2big.sh

gt_expect v2mem_trace v2mem_report

GO=$GT_GO123
[ -x "$GTCTL" ] || { fail v2mem_trace "$GTCTL not built"; gt_finish; }
[ -x "$GO" ] || { fail v2mem_trace "Go 1.23 not installed at $GO"; gt_finish; }
big=$GT_TMP/big.trace small=$GT_TMP/small.trace
if ! v2big_trace "$GO" "$GT_BUILD/go-v2big" "$big" 24 2>"$GT_TMP/trace.err" ||
	! v2big_trace "$GO" "$GT_BUILD/go-v2big" "$small" 1 2>>"$GT_TMP/trace.err"; then
	fail v2mem_trace "$(tail -3 "$GT_TMP/trace.err")"
	fail v2mem_report "no trace (see v2mem_trace)"
	gt_finish
fi
read -r gens largest < <(v2_gens "$big")
size=$(stat -c %s "$big")
ok v2mem_trace
echo "# $big: $size bytes, $gens generations, the largest $largest bytes"

why=
small_kb=$(peak_rss_kb "$GTCTL" report --json "$small") || why="report on $small failed;"
big_kb=$(peak_rss_kb "$GTCTL" report --json "$big") || why="$why report on $big failed;"
if [ -z "$why" ]; then
	limit_kb=$((largest / 1024 + 24 * 1024))
	echo "# report --json peak RSS: $big_kb KiB, $small_kb KiB on 1 MiB; limit $small_kb + $limit_kb KiB"
	[ $((big_kb - small_kb)) -lt "$limit_kb" ] ||
		why="report's peak RSS on a $size-byte trace is $big_kb KiB, $((big_kb - small_kb)) above its $small_kb on a small one: more than the largest generation ($largest bytes) + 24 MiB"
fi
gt_report v2mem_report "$why"
gt_finish
