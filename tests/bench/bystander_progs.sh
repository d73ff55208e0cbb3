#!/usr/bin/env bash
# bystander_progs.sh BUILD: what gotraced's BPF programs cost a task no
# session traces (a bystander), program by program: their early exit.
# Figures only, no assertions.  kernel.bpf_stats_enabled=1 around the runs
# (restored after): the kernel times every run of every program, which
# itself adds a few tens of ns a run to each figure (the floor).
#
# The bystander is an untraced switch-heavy loop: the pipe ping-pong
# (switches, wakeups, syscalls) and the loopback TCP ping-pong (the same,
# plus loopback sends and receive softirqs).  It runs beside
#  - an idle daemon (no session): which of its programs ran at all;
#  - a default recording of another, idle process (`sleep`);
#  - the same with --flight (the same programs: the same figures);
#  - the same with --syscalls=all.
# For each: every program that ran over the bystander's loop, its runs per
# round trip and ns a run (the lowest of ROUNDS interleaved rounds: others'
# work on a shared machine only adds), and the sum per round trip.  Every
# event in these windows is a bystander's (the recorded process sleeps),
# other processes' on the machine included.
set -u
cd "$(dirname "$0")/../.." || exit 1
build=${1:-build}
GTCTL=$build/gotracectl
PP=$build/workloads/pingpong
TPP=$build/workloads/tcppingpong
N=${BYSTANDER_ROUNDS:-20000}
ROUNDS=${BYSTANDER_REPEAT:-3}
. tests/bench/bpf_progs.sh
tmp=$(mktemp -d /tmp/gt-bystander.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	gt_bpf_stats_restore
	rm -rf "$tmp"
}
trap cleanup EXIT
for f in "$GTCTL" "$build/gotraced" "$PP" "$TPP"; do
	[ -x "$f" ] || { echo "bystander_progs: $f not built (make BUILD=$build tests)"; exit 1; }
done
gt_bpf_stats_on || { echo "bystander_progs: cannot enable kernel.bpf_stats_enabled"; exit 1; }

# measure SETTING PID: the bystander loops once each beside recorder PID;
# appends "kind prog ns runs" (the loop's share) to $tmp/SETTING.
measure() {
	local setting=$1 pid=$2 kind
	for kind in pipe tcp; do
		gt_bpf_progs "$pid" >"$tmp/before"
		if [ "$kind" = pipe ]; then "$PP" "$N" pipe >/dev/null; else "$TPP" "$N" >/dev/null; fi
		gt_bpf_progs "$pid" >"$tmp/after"
		awk -v k="$kind" 'NR == FNR { b[$1] = $2; c[$1] = $3; next }
			{ printf "%s %s %d %d\n", k, $1, $2 - b[$1], $3 - c[$1] }' \
			"$tmp/before" "$tmp/after" >>"$tmp/$setting"
	done
}

for _ in $(seq 1 "$ROUNDS"); do
	rm -f "$tmp/d.sock"
	"$build/gotraced" --socket "$tmp/d.sock" >/dev/null 2>"$tmp/d.err" &
	d=$!
	pids+=("$d")
	for _ in $(seq 1 100); do [ -S "$tmp/d.sock" ] && break; sleep 0.1; done
	gt_bpf_wait_progs "$d"
	measure idle-daemon "$d"
	kill -TERM "$d"; wait "$d"
	for flags in default --flight --syscalls=all; do
		sleep 100000 >/dev/null 2>&1 &
		target=$!
		f=$flags
		[ "$f" = default ] && f=
		# shellcheck disable=SC2086 # f: one word or none
		"$GTCTL" record -q --standalone $f -p "$target" -o "$tmp/r.trace" >/dev/null 2>"$tmp/r.err" &
		r=$!
		pids+=("$r")
		gt_bpf_wait_progs "$r"
		measure "beside-$flags" "$r"
		kill -INT "$r"; wait "$r"
		kill "$target"; wait "$target" 2>/dev/null
	done
	pids=()
done

echo "== bystanders' BPF cost: an untraced ping-pong ($N round trips) beside gotraced; lowest ns a run of $ROUNDS rounds (uptime: $(uptime | sed 's/.*load/load/'))"
for s in idle-daemon beside-default beside---flight beside---syscalls=all; do
	python3 - "$tmp/$s" "$s" "$N" <<'PY'
import sys
path, setting, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
best = {}  # (kind, prog) -> (ns/run, runs)
for line in open(path):
    kind, prog, ns, runs = line.split()
    ns, runs = int(ns), int(runs)
    if runs <= 0:
        continue
    r = ns / runs
    if (kind, prog) not in best or r < best[kind, prog][0]:
        best[kind, prog] = (r, runs)
setting = setting.replace("beside---", "beside --")
for kind in ("pipe", "tcp"):
    progs = sorted((p for k, p in best if k == kind), key=lambda p: -best[kind, p][0] * best[kind, p][1])
    if not progs:
        print(f"{setting} {kind}: no program ran")
        continue
    total = 0
    for p in progs:
        r, runs = best[kind, p]
        total += r * runs / n
        print(f"{setting} {kind}: {p:24s} {runs / n:6.2f} runs/rt {r:7.1f} ns/run")
    print(f"{setting} {kind}: all programs {total:.0f} ns per round trip")
PY
done
