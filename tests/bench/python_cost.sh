#!/usr/bin/env bash
# python_cost.sh BUILD: what walking the Python frames costs in the kernel
# per stack (figures only, no assertions; docs/mapping.md, "Python frames").
# A CPython thread blocks N (PYTHON_SLEEPS, 3000) times in time.sleep at
# Python depth D (10, then 40), recorded by -p with --call-graph=fp: under
# Debian's python3.11 (native walk + Python frames) and, beside it, under
# a CPython without a layout here (pyenv's 3.10: the native walk alone).
# Printed per run: gt_sched_switch's ns per run and per block (bpftool's
# run_time_ns with kernel.bpf_stats_enabled=1, as unwind_cost.sh).
set -u
cd "$(dirname "$0")/../.."
. tests/bench/bpf_progs.sh
build=${1:-build}
N=${PYTHON_SLEEPS:-3000}
gt_bench_tmp python-cost
command -v bpftool >/dev/null || { echo "python_cost: bpftool not installed (make deps)"; exit 1; }
gt_bpf_stats_on || { echo "python_cost: cannot enable bpf stats"; exit 1; }
cat >"$tmp/sleeper.py" <<'PY'
import sys, time
n, depth = int(sys.argv[1]), int(sys.argv[2])
def down(d):
    if d:
        return down(d - 1)
    print("ready", flush=True)
    sys.stdin.readline()
    for _ in range(n):
        time.sleep(0.0001)
    print("done", flush=True)
    sys.stdin.readline()  # until the recorder read its figures
down(depth)
PY

# measure LABEL PYTHON DEPTH (after the programs attach, half a second for
# the process to be found as CPython: py_procs)
measure() {
	[ -x "$2" ] || { echo "$1: no $2"; return; }
	gt_bpf_block_cost "$1" "$N" 0.5 "$build" "" "$2" "$tmp/sleeper.py" "$N" "$3"
}

py310=$(ls /root/.pyenv/versions/3.10*/bin/python3.10 2>/dev/null | head -1)
for d in 10 40; do
	measure "native walk only (3.10), depth $d" "${py310:-none}" "$d"
	measure "+ Python frames (3.11), depth $d" /usr/bin/python3.11 "$d"
done
echo "# load: $(uptime)"
exit 0
