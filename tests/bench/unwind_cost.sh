#!/usr/bin/env bash
# unwind_cost.sh BUILD: what each --call-graph mode costs in the kernel per
# user stack (figures only, no assertions; user space: bench_unwind).
#
# nofp_sleep's io thread blocks N (UNWIND_SLEEPS, 5000) times in
# nanosleep, recorded by -p with --call-graph=fp, then =dwarf (8 KiB).
# With kernel.bpf_stats_enabled=1 the kernel times every run of every BPF
# program; bpftool gives run_time_ns and run_cnt of the recorder's own
# programs.  Printed per mode: gt_sched_switch's ns per run, and its time
# over the N blocks: the cost of one switch-out with its stack (the other
# switches of the machine in that window, untraced, are counted in both
# modes alike).
set -u
cd "$(dirname "$0")/../.."
. tests/bench/bpf_progs.sh
build=${1:-build}
N=${UNWIND_SLEEPS:-5000}
gt_bench_tmp unwind-cost
command -v bpftool >/dev/null || { echo "unwind_cost: bpftool not installed (make deps)"; exit 1; }
gt_bpf_stats_on || { echo "unwind_cost: cannot enable bpf stats"; exit 1; }

# measure MODE: one recording of N blocks
measure() {
	gt_bpf_block_cost "--call-graph=$1" "$N" 0 "$build" "--call-graph=$1" \
		"$build/workloads/nofp_sleep" --wait "$N" 100
}

measure fp
measure dwarf
exit 0
