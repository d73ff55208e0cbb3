#!/usr/bin/env bash
# record_kstacks.sh: why a thread blocked, as the real kernel reports it.
# The syscall a thread sleeps in is read from its saved registers at the
# switch itself, and the kernel stack is taken only where no syscall
# explains the block (or everywhere with --kernel-stacks):
#  - page faults: a thread touching pages that another thread fills in
#    through userfaultfd (tests/workloads/uffault.c) sleeps in each fault,
#    outside any syscall, until the filler's ioctl wakes it: GoBlock,
#    exactly as many times as the kernel counts the thread's voluntary
#    switches over the touches (getrusage), none counted as a syscall,
#    with the kernel's fault path and the workload's own function in the
#    stacks.  (A file dropped from the page cache was tried first: on this
#    VM its faults slept 3 to 255 times in 256, as the host's cache
#    answered before the thread could sleep or not.)
#  - a blocking pipe read is a block in read() (GoBlockRecv, a sync block
#    to inspect, after its GoSysCall) whose stack (glibc's read, and its
#    caller: record_callers.sh) has no kernel frames by default, and the
#    kernel's read path (vfs_read) with --kernel-stacks.
# Each workload is recorded with -p while it lives (the --wait protocol),
# so its maps can be read for the symbols.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

gt_require_bpf kstacks_pagefault kstacks_default kstacks_all
gt_expect kstacks_pagefault kstacks_default kstacks_all

if gt_record_workload kstacks_pagefault pf -- "$WL/uffault" --wait 256; then
	f=$GT_TMP/pf.trace
	sleeps=$(sed -n 's/^faults [0-9]* sleeps \([0-9]*\) .*/\1/p' "$GT_TMP/pf.out")
	if [ -z "$sleeps" ] || [ "$sleeps" -lt 128 ]; then
		fail kstacks_pagefault "the faulter slept ${sleeps:-no} times in 256 filled faults: $(tail -3 "$GT_TMP/pf.out")"
	elif gt_truth kstacks_pagefault blocks "$f.json" faulter block "$sleeps" $((sleeps + 2)) &&
		gt_truth kstacks_pagefault blocks "$f.json" faulter syscall 0 0 &&
		gt_truth kstacks_pagefault frames "$f.jsontrace" touch_pages handle_mm_fault; then
		ok kstacks_pagefault
		echo "# 256 faults, $sleeps sleeps"
	fi
fi

# blockread: the reader blocks 100 times in read() on a pipe.
for mode in default all; do
	flag=()
	[ $mode = all ] && flag=(--kernel-stacks)
	gt_record_workload kstacks_$mode br_$mode "${flag[@]}" -- "$WL/blockread" --wait 100 1000 || continue
	f=$GT_TMP/br_$mode.trace
	gt_truth kstacks_$mode blocks "$f.json" reader sync 50 102 || continue
	if [ $mode = all ]; then
		gt_truth kstacks_$mode frames "$f.jsontrace" read vfs_read || continue
	else
		gt_truth kstacks_$mode frames "$f.jsontrace" read || continue
		gt_truth kstacks_$mode noframes "$f.jsontrace" vfs_read || continue
	fi
	ok kstacks_$mode
done
gt_finish
