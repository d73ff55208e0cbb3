#!/usr/bin/env bash
# loopback_cost.sh BUILD [BUILD_BEFORE]: what naming loopback wakers costs
# in the kernel, per wakeup (figures only, no assertions).
#
# haproxy (2 threads) in front of nginx (1 worker) on 127.0.0.1, loaded by
# wrk for LOOPBACK_SECONDS (3), recorded by -p of both.  With
# kernel.bpf_stats_enabled=1 the kernel times every run of every BPF
# program; bpftool gives run_time_ns and run_cnt of the recorder's own
# programs (those its pid holds).  Printed per build: ns per run of each
# program that fires per wakeup or per packet, and the sum of all of them
# over the sched_waking runs: the cost per wakeup, and the part of it that
# attributing wakers (loopback senders, racing wakings) adds.  With BUILD_BEFORE
# (e.g. a build of the commit before), the same for it, side by side.
set -u
cd "$(dirname "$0")/../.."
. tests/bench/bpf_progs.sh
SECS=${LOOPBACK_SECONDS:-3}
gt_bench_tmp lo-cost
for t in haproxy nginx wrk bpftool; do
	command -v "$t" >/dev/null || { echo "loopback_cost: $t not installed (make deps)"; exit 1; }
done

. tests/lib/proxy_chain.sh
gt_proxy_chain "$tmp/lo"; up=$?
pids+=("${PROXY_PIDS[@]}")
[ "$up" = 0 ] || { echo "loopback_cost: haproxy -> nginx did not start"; exit 1; }
gt_bpf_stats_on || { echo "loopback_cost: cannot enable bpf stats"; exit 1; }

# measure BUILD: one recording of the load; prints its figures
measure() {
	local ctl=$1/gotracectl rec i
	"$ctl" record --standalone -q -p "$MASTER,$WORKER,$HAP" -o "$tmp/t.trace" \
		>"$tmp/rec.out" 2>"$tmp/rec.err" &
	rec=$!
	gt_bpf_wait_progs "$rec"
	gt_bpf_progs "$rec" >"$tmp/before"
	wrk -t1 -c4 -d"${SECS}s" "http://127.0.0.1:$FPORT/" >"$tmp/wrk.out" 2>&1
	gt_bpf_progs "$rec" >"$tmp/after"
	kill -INT "$rec"
	wait "$rec" || { echo "$1: gotracectl record failed: $(tail -3 "$tmp/rec.err")"; return; }
	[ -s "$tmp/after" ] || { echo "$1: no BPF program of the recorder found"; return; }
	python3 - "$tmp/before" "$tmp/after" "$1" "$(awk '/Requests\/sec/ { print $2 }' "$tmp/wrk.out")" <<'PY'
import sys
def read(p):
    return {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in open(p) if l.strip()}
b, a = read(sys.argv[1]), read(sys.argv[2])
d = {k: (a[k][0] - b.get(k, (0, 0))[0], a[k][1] - b.get(k, (0, 0))[1]) for k in a}
waking = d.get("gt_sched_waking", (0, 0))
wake_progs = ["gt_sched_waking", "gt_sched_wakeup", "gt_netif_rx", "gt_netif_receive_skb", "gt_netif_receiv", "gt_softirq_exit"]
print(f"{sys.argv[3]}: wrk {sys.argv[4]} req/s")
for k in wake_progs:
    if k in d and d[k][1]:
        print(f"  {k:20s} {d[k][1]:9d} runs  {d[k][0] / d[k][1]:7.1f} ns/run")
total = sum(d[k][0] for k in wake_progs if k in d)
if waking[1]:
    print(f"  per wakeup: {total / waking[1]:.1f} ns (all of the above over {waking[1]} "
          f"sched_waking runs)")
    # what naming wakers costs on top of the wakeup record itself: the
    # loopback programs (and, in a build before issue 34 took it away, sched_wakeup)
    extra = total - waking[0]
    print(f"  waker attribution: {extra / waking[1]:.1f} ns per wakeup on top of "
          f"sched_waking's {waking[0] / waking[1]:.1f} ns")
PY
}

measure "${1:-build}"
[ -n "${2:-}" ] && measure "$2"
exit 0
