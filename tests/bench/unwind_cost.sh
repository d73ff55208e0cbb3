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
tmp=$(mktemp -d /tmp/gt-unwind-cost.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	gt_bpf_stats_restore 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
command -v bpftool >/dev/null || { echo "unwind_cost: bpftool not installed (make deps)"; exit 1; }
gt_bpf_stats_on || { echo "unwind_cost: cannot enable bpf stats"; exit 1; }

# measure MODE: one recording of N blocks
measure() {
	local mode=$1 rec wl i
	mkfifo "$tmp/go"
	"$build/workloads/nofp_sleep" --wait "$N" 100 <"$tmp/go" >"$tmp/wl.out" 2>&1 &
	wl=$!
	pids+=("$wl")
	exec 3>"$tmp/go"
	for i in $(seq 1 100); do grep -q '^ready' "$tmp/wl.out" && break; sleep 0.1; done
	"$build/gotracectl" record --standalone -q --call-graph="$mode" -p "$wl" \
		-o "$tmp/t.trace" >"$tmp/rec.out" 2>"$tmp/rec.err" &
	rec=$!
	gt_bpf_wait_progs "$rec"
	gt_bpf_progs "$rec" >"$tmp/before"
	echo >&3
	for i in $(seq 1 600); do grep -q '^done' "$tmp/wl.out" && break; sleep 0.1; done
	gt_bpf_progs "$rec" >"$tmp/after"
	kill -INT "$rec"
	wait "$rec" || echo "$mode: gotracectl record failed: $(tail -3 "$tmp/rec.err")"
	exec 3>&-
	wait "$wl" 2>/dev/null
	rm -f "$tmp/go"
	python3 - "$tmp/before" "$tmp/after" "$mode" "$N" <<'PY'
import sys
def read(p):
    return {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in open(p) if l.strip()}
b, a = read(sys.argv[1]), read(sys.argv[2])
k = "gt_sched_switch"
if k not in a:
    print(f"{sys.argv[3]}: no {k} of the recorder found")
    sys.exit(0)
t, c = a[k][0] - b.get(k, (0, 0))[0], a[k][1] - b.get(k, (0, 0))[1]
n = int(sys.argv[4])
print(f"--call-graph={sys.argv[3]:5s} {k}: {c} runs, {t / max(c, 1):7.1f} ns/run; "
      f"{t / n:8.1f} ns per block with its stack ({n} blocks)")
PY
}

measure fp
measure dwarf
exit 0
