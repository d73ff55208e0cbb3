#!/usr/bin/env bash
# record_v2shapes.sh: a `record --go-version 1.23` file against the Go
# runtime's own Go 1.23 trace of the same run (docs/format.md, "The
# runtime's file vs ours").  The v2shapes workload (tests/workloads/go,
# built with Go 1.23) writes its runtime/trace file while gotraced records
# it: goroutines waiting on a channel, a mutex, a sleep and a read(2) of a
# blocking pipe on a locked thread, for 2.5 s (past two of the runtime's
# 1 s generations, and two of ours), and a coroutine (iter.Pull).  Both
# files are read raw by Go 1.23 (`go tool trace -d=2`) and compared by
# tests/integration/v2_shapes.py:
#
#  v2shapes_record      the recording passes Go's readers and viewer pages
#        (gocheck.sh) and inspect; the runtime wrote a go 1.23 trace.
#  v2shapes_kinds       every event kind we write is one the runtime's
#        file has (or one v2_shapes.py's ONLY_OURS lists with its reason).
#  v2shapes_syscall     the thread blocked in read(2): the runtime's shape
#        (GoSyscallBegin, ProcSteal, GoStatus Syscall at the next
#        generation, GoSyscallEndBlocked) and ours, the waker's
#        (GoSyscallBegin, GoSyscallEnd, GoBlock "chan receive", GoStatus
#        Waiting at every later generation, GoUnblock by the writer).
#  v2shapes_generation  in both files every goroutine waiting at a
#        generation's end is stated Waiting in the next; the runtime's has
#        the channel, mutex and sleep goroutines so, ours the reader thread.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

CASES="v2shapes_record v2shapes_kinds v2shapes_syscall v2shapes_generation"
# shellcheck disable=SC2086
gt_require_bpf $CASES
# shellcheck disable=SC2086
gt_expect $CASES
CTL=${GT_REAL_GTCTL:-$GTCTL} # the version is this test's own
GO=$GT_GO123
export GOTOOLCHAIN=local

no_compare() {
	local c
	for c in v2shapes_kinds v2shapes_syscall v2shapes_generation; do
		fail $c "nothing to compare (see v2shapes_record)"
	done
	gt_finish
}

dir=$GT_BUILD/go-v2shapes
mkdir -p "$dir"
if [ ! -x "$GO" ]; then
	fail v2shapes_record "Go 1.23 not installed at $GO"
	no_compare
fi
if ! (export GOCACHE=$PWD/$dir/cache GOPATH=$PWD/$dir/gopath GO111MODULE=off GOFLAGS='' \
	CGO_ENABLED=0 && "$GO" build -o "$dir/v2shapes" tests/workloads/go/v2shapes/main.go) \
	>"$GT_TMP/build.log" 2>&1; then
	fail v2shapes_record "go build v2shapes failed: $(tail -3 "$GT_TMP/build.log")"
	no_compare
fi

ours=$GT_TMP/ours.trace
theirs=$GT_TMP/runtime.trace
if ! timeout 120 "$CTL" record --go-version 1.23 -o "$ours" -- "$dir/v2shapes" "$theirs" \
	>"$GT_TMP/v2shapes.out" 2>"$GT_TMP/rec.err"; then
	fail v2shapes_record "record failed: $(tail -3 "$GT_TMP/rec.err")"
	no_compare
fi
tid=$(awk '$1 == "reader_tid" { print $2 }' "$GT_TMP/v2shapes.out")
if [ -z "$tid" ] || ! grep -qx 'done' "$GT_TMP/v2shapes.out"; then
	fail v2shapes_record "v2shapes did not finish: $(tail -3 "$GT_TMP/v2shapes.out")"
	no_compare
fi
if [ "$(head -c 13 "$theirs")" != "go 1.23 trace" ] || [ "$(head -c 13 "$ours")" != "go 1.23 trace" ]; then
	fail v2shapes_record "not two go 1.23 traces: $(head -c 13 "$theirs"), $(head -c 13 "$ours")"
	no_compare
fi
gt_valid v2shapes_record "$ours" && ok v2shapes_record
for f in ours runtime; do
	if ! "$GO" tool trace -d=2 "$GT_TMP/$f.trace" >"$GT_TMP/$f.d2" 2>"$GT_TMP/$f.d2.err"; then
		fail v2shapes_record "go tool trace -d=2 $f.trace: $(tail -3 "$GT_TMP/$f.d2.err")"
		no_compare
	fi
done

for c in kinds syscall generation; do
	if out=$(python3 tests/integration/v2_shapes.py $c "$GT_TMP/ours.d2" "$GT_TMP/runtime.d2" \
		"$tid" 2>&1); then
		ok v2shapes_$c
	else
		fail v2shapes_$c "ours and the runtime's file differ (reader thread $tid)"
		echo "$out" | head -20 | detail
	fi
done
gt_finish
