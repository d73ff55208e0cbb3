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
tmp=$(mktemp -d /tmp/gt-python-cost.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	gt_bpf_stats_restore 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
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

# measure LABEL PYTHON DEPTH
measure() {
	local label=$1 py=$2 depth=$3 rec wl i
	[ -x "$py" ] || { echo "$label: no $py"; return; }
	mkfifo "$tmp/go"
	"$py" "$tmp/sleeper.py" "$N" "$depth" <"$tmp/go" >"$tmp/wl.out" 2>&1 &
	wl=$!
	pids+=("$wl")
	exec 3>"$tmp/go"
	for i in $(seq 1 100); do grep -q '^ready' "$tmp/wl.out" && break; sleep 0.1; done
	"$build/gotracectl" record --standalone -q -p "$wl" -o "$tmp/t.trace" \
		>"$tmp/rec.out" 2>"$tmp/rec.err" &
	rec=$!
	gt_bpf_wait_progs "$rec"
	sleep 0.5 # the process found CPython (py_procs) as it was followed
	gt_bpf_progs "$rec" >"$tmp/before"
	echo >&3
	for i in $(seq 1 600); do grep -q '^done' "$tmp/wl.out" && break; sleep 0.1; done
	gt_bpf_progs "$rec" >"$tmp/after"
	kill -INT "$rec"
	wait "$rec" || echo "$label: gotracectl record failed: $(tail -3 "$tmp/rec.err")"
	exec 3>&-
	wait "$wl" 2>/dev/null
	rm -f "$tmp/go"
	python3 - "$tmp/before" "$tmp/after" "$label" "$N" <<'PY'
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
print(f"{sys.argv[3]:32s} {k}: {c} runs, {t / max(c, 1):7.1f} ns/run; "
      f"{t / n:8.1f} ns per block with its stack ({n} blocks)")
PY
}

py310=$(ls /root/.pyenv/versions/3.10*/bin/python3.10 2>/dev/null | head -1)
for d in 10 40; do
	measure "native walk only (3.10), depth $d" "${py310:-none}" "$d"
	measure "+ Python frames (3.11), depth $d" /usr/bin/python3.11 "$d"
done
echo "# load: $(uptime)"
exit 0
