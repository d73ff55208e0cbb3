#!/usr/bin/env bash
# record_callers.sh: the caller of a libc syscall wrapper is in the stacks.
# Debian's libc has no frame pointers: at the syscall instruction inside
# read() the frame-pointer register still holds read's caller's frame, so
# the kernel's walk goes from read straight to read's caller's caller.  The
# recorder gives the lost frame back from the stack top (or link register)
# BPF copies at syscall entry, where libc's CFI says the return address is
# (daemon/engine/caller.h).  blockread's reader calls read_blocking(),
# which read()s a pipe 100 times (multi-threaded: glibc's cancellable path,
# whose frame is 40 bytes deep); its feeder write()s from feed_slowly().
# In Go's own viewer (the /jsontrace of `go tool trace`):
#  - callers_syscall: the reader's syscall events show read <- read_blocking
#    <- reader, and no stack anywhere goes from read straight to reader;
#  - callers_block: so do the reader's blocks in read (the switch-out's
#    stack takes the caller of the syscall it sleeps in);
#  - callers_waker: who woke the reader: write <- feed_slowly <- feeder;
#  - callers_kstacks: with --kernel-stacks the syscall's stack is the
#    switch's, kernel frames first, and still has read <- read_blocking.
#  - callers_all: with --syscalls=all (the stack top taken at every entry,
#    not only where a syscall blocks, wakes or forks), the same three.
# A Go 1.22+ recording (GT_GO_VERSION): the wakeups are read from Go
# 1.23's own reading of the file (truth.py wakes), as its viewer draws none
# from P 0 (a run on CPU 0 would show no waker at all).
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

# woken_by NAME TAG: the reader's wakeups in TAG's recording name
# write <- feed_slowly <- feeder.
woken_by() {
	if gt_v2 "$GT_TMP/$2.trace"; then
		gt_truth "$1" wakes "$GT_TMP/$2.trace" $((R / 2)) write feed_slowly feeder
	else
		gt_truth "$1" calls "$GT_TMP/$2.trace.jsontrace" unblock $((R / 2)) write feed_slowly feeder
	fi
}

CASES="callers_syscall callers_block callers_waker callers_kstacks callers_all"
# shellcheck disable=SC2086
gt_require_bpf $CASES
# shellcheck disable=SC2086
gt_expect $CASES

R=100

# record_br NAME TAG [RECORD FLAGS]: records blockread's R reads.
record_br() {
	local name=$1 tag=$2
	shift 2
	gt_record_workload "$name" "$tag" "$@" -- "$WL/blockread" --wait $R 1000
}

# Half the reads at least: on a busy machine the feeder may find the
# reader not yet asleep and the read not block (the events still carry the
# stacks; the count only guards against a stack seen once by chance).
if record_br callers_syscall br; then
	j=$GT_TMP/br.trace.jsontrace
	gt_truth callers_syscall calls "$j" syscall $((R / 2)) read read_blocking reader &&
		ok callers_syscall
	gt_truth callers_block calls "$j" reader $((R / 2)) read read_blocking reader &&
		ok callers_block
	woken_by callers_waker br && ok callers_waker
else
	fail callers_block "no recording (see callers_syscall)"
	fail callers_waker "no recording (see callers_syscall)"
fi

if record_br callers_kstacks brk --kernel-stacks; then
	j=$GT_TMP/brk.trace.jsontrace
	gt_truth callers_kstacks frames "$j" vfs_read &&
		gt_truth callers_kstacks calls "$j" syscall $((R / 2)) read read_blocking reader &&
		ok callers_kstacks
fi
if record_br callers_all bra --syscalls=all; then
	j=$GT_TMP/bra.trace.jsontrace
	gt_truth callers_all calls "$j" syscall $((R / 2)) read read_blocking reader &&
		gt_truth callers_all calls "$j" reader $((R / 2)) read read_blocking reader &&
		woken_by callers_all bra &&
		ok callers_all
fi
gt_finish
