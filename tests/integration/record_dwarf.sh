#!/usr/bin/env bash
# record_dwarf.sh: --call-graph=dwarf gives back the callers a frame-pointer
# walk loses in code built without frame pointers.  nofp_sleep's thread
# "io" sleeps R times in nanosleep() called from io_thread(), all of it
# (the workload and Debian's libc) built without frame pointers.  gdb's
# backtrace at that point (taken by hand, and fixed here: gdb is not a
# dependency of the suite):
#   clock_nanosleep <- nanosleep <- io_thread <- start_thread <- clone3
# In Go's own viewer (the /jsontrace of `go tool trace`):
#  - dwarf_block: with --call-graph=dwarf, the io thread's blocks show
#    nanosleep <- io_thread <- start_thread, as gdb does, and no stack
#    goes from nanosleep straight to start_thread;
#  - dwarf_fp_loses: with the default (fp), the same blocks lack
#    io_thread: the frame-pointer walk reads start_thread's frame where
#    io_thread's should be (what dwarf_block guards against);
#  - dwarf_bad_option: --call-graph with a bad mode or size is refused
#    with a message that names the option.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

CASES="dwarf_block dwarf_fp_loses dwarf_bad_option"
# shellcheck disable=SC2086
gt_require_bpf $CASES
# shellcheck disable=SC2086
gt_expect $CASES

R=50

record_ns() {
	local name=$1 tag=$2
	shift 2
	gt_record_workload "$name" "$tag" "$@" -- "$WL/nofp_sleep" --wait $R 2000
}

if record_ns dwarf_block nsd --call-graph=dwarf; then
	j=$GT_TMP/nsd.trace.jsontrace
	gt_truth dwarf_block calls "$j" io $((R / 2)) nanosleep io_thread start_thread &&
		ok dwarf_block
fi

if record_ns dwarf_fp_loses nsf; then
	j=$GT_TMP/nsf.trace.jsontrace
	if $TRUTH calls "$j" io 1 nanosleep io_thread start_thread >/dev/null 2>&1; then
		fail dwarf_fp_loses "the frame-pointer walk found io_thread: the workload is not built without frame pointers any more"
	else
		ok dwarf_fp_loses
	fi
fi

why=
for bad in --call-graph=lbr --call-graph=dwarf,12 --call-graph=dwarf,999999 --call-graph=dwarf,x; do
	if "$GTCTL" record "$bad" -o "$GT_TMP/bad.trace" -- true >"$GT_TMP/bad.out" 2>&1; then
		why="$bad was accepted"
	elif ! grep -q -- "--call-graph" "$GT_TMP/bad.out"; then
		why="$bad: the message does not name the option: $(head -2 "$GT_TMP/bad.out")"
	elif [ -e "$GT_TMP/bad.trace" ]; then
		why="$bad left a trace behind"
	fi
	[ -n "$why" ] && break
done
gt_report dwarf_bad_option "$why"
gt_finish
