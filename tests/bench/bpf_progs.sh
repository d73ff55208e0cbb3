# bpf_progs.sh: sourced by the benches that time gotraced's BPF programs
# (bpf_parts.sh, loopback_cost.sh, overhead.sh, unwind_cost.sh,
# python_cost.sh).  With kernel.bpf_stats_enabled=1 the kernel times
# every run of every BPF program (which itself costs a few tens of ns a
# run: enable it only around the runs that read it).

# gt_bpf_stats_on: enables the stats, keeping the old value for
# gt_bpf_stats_restore (call that from the caller's EXIT trap).
gt_bpf_stats_on() {
	GT_BPF_STATS_OLD=${GT_BPF_STATS_OLD:-$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)}
	sysctl -q -w kernel.bpf_stats_enabled=1
}

gt_bpf_stats_restore() {
	[ -n "${GT_BPF_STATS_OLD:-}" ] && sysctl -q -w kernel.bpf_stats_enabled="$GT_BPF_STATS_OLD"
	GT_BPF_STATS_OLD=
}

# gt_bpf_progs PID: "name run_time_ns run_cnt" of each BPF program PID holds
# (the prog_id lines of its descriptors' fdinfo).
gt_bpf_progs() {
	local ids
	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u | tr '\n' ,)
	[ -n "$ids" ] || return 0
	bpftool prog show --json | python3 -c '
import json, sys
ids = {int(x) for x in sys.argv[1].split(",") if x}
for p in json.load(sys.stdin):
    if p.get("id") in ids:
        print(p.get("name", "?"), p.get("run_time_ns", 0), p.get("run_cnt", 0))' "$ids"
}

# gt_bpf_wait_progs PID: waits (up to 60 s) until PID holds BPF programs,
# then half a second more for its attach to settle.
gt_bpf_wait_progs() {
	local i
	for i in $(seq 1 600); do
		grep -qs '^prog_id:' /proc/"$1"/fdinfo/* && break
		sleep 0.1
	done
	sleep 0.5
}

# gt_bpf_loop DIR CMD...: runs CMD, a recorder whose workload prints `ready`,
# waits for a byte on its stdin, runs its loop and prints `done` (the
# workloads' --wait); CMD's stdin is the fifo DIR/go, its stdout DIR/s.out,
# its stderr DIR/s.err.  The figures of CMD's BPF programs (gt_bpf_progs)
# go to DIR/before just before the loop and DIR/after just after it: their
# difference is the loop's alone.  Returns CMD's exit status.
gt_bpf_loop() {
	local dir=$1 rec i rc
	shift
	rm -f "$dir/go"
	mkfifo "$dir/go"
	"$@" <"$dir/go" >"$dir/s.out" 2>"$dir/s.err" &
	rec=$!
	exec 7>"$dir/go"
	for i in $(seq 1 600); do grep -qs '^ready' "$dir/s.out" && break; sleep 0.05; done
	gt_bpf_progs "$rec" >"$dir/before"
	printf x >&7
	for i in $(seq 1 2400); do grep -qs '^done' "$dir/s.out" && break; sleep 0.05; done
	gt_bpf_progs "$rec" >"$dir/after"
	exec 7>&-
	wait "$rec"
	rc=$?
	return $rc
}

# gt_bench_tmp NAME: a fresh $tmp (/tmp/gt-NAME.XXXXXX), an empty $pids for
# the processes the bench starts, and an EXIT trap that kills them, restores
# the BPF stats and removes $tmp.
gt_bench_tmp() {
	tmp=$(mktemp -d "/tmp/gt-$1.XXXXXX")
	pids=()
	trap gt_bench_cleanup EXIT
}

gt_bench_cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	gt_bpf_stats_restore 2>/dev/null
	rm -rf "$tmp"
}

# gt_bpf_block_cost LABEL N SETTLE BUILD 'RECORD OPTIONS' WORKLOAD...: runs
# WORKLOAD (it prints `ready`, waits for a line on stdin, blocks N times,
# prints `done` and waits for another line), records it with
# `gotracectl record --standalone RECORD OPTIONS -p`, waits SETTLE seconds
# after the programs attach, and prints gt_sched_switch's ns per run and per
# block over the N blocks alone (unwind_cost.sh, python_cost.sh).
gt_bpf_block_cost() {
	local label=$1 n=$2 settle=$3 build=$4 opts=$5 rec wl i
	shift 5
	mkfifo "$tmp/go"
	"$@" <"$tmp/go" >"$tmp/wl.out" 2>&1 &
	wl=$!
	pids+=("$wl")
	exec 3>"$tmp/go"
	for i in $(seq 1 100); do grep -q '^ready' "$tmp/wl.out" && break; sleep 0.1; done
	# shellcheck disable=SC2086 # opts: several options, split on purpose
	"$build/gotracectl" record --standalone -q $opts -p "$wl" -o "$tmp/t.trace" \
		>"$tmp/rec.out" 2>"$tmp/rec.err" &
	rec=$!
	gt_bpf_wait_progs "$rec"
	sleep "$settle"
	gt_bpf_progs "$rec" >"$tmp/before"
	echo >&3
	for i in $(seq 1 600); do grep -q '^done' "$tmp/wl.out" && break; sleep 0.1; done
	gt_bpf_progs "$rec" >"$tmp/after"
	kill -INT "$rec"
	wait "$rec" || echo "$label: gotracectl record failed: $(tail -3 "$tmp/rec.err")"
	exec 3>&-
	wait "$wl" 2>/dev/null
	rm -f "$tmp/go"
	python3 - "$tmp/before" "$tmp/after" "$label" "$n" <<'PY'
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
