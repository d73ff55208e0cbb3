#!/usr/bin/env bash
# bpf_parts.sh BUILD: what each part of the hot BPF programs costs, in ns
# per run (figures only, no assertions).  The bench's own build of the
# embedded recorder (BUILD/bench/parts/gotracectl: the installed one has no
# such knob) loads its programs with parts left out
# (GOTRACED_BENCH_PARTS_OFF, GT_PARTS_OFF_* in bpf/gotraced.h; the verifier
# removes the code of a part left out); each
# variant records the same loop with kernel.bpf_stats_enabled=1 (restored
# after), and a part's cost is the program's ns per run with everything
# minus its ns per run without that part.  One variant is no part left
# out but the user stack walk done as before it copied windows, one
# probe-read per frame (GT_PARTS_UWALK_PER_FRAME): what the windows save.  Every variant records twice and
# keeps the lower figure (other processes on a shared machine only add).
#
# Workloads: the pipe ping-pong (switches, wakeups, blocking syscalls of
# the default recording), the loopback TCP ping-pong (wakeups from the
# receive softirq), and the pipe ping-pong again with --syscalls=all (gt_sys_enter).
set -u
cd "$(dirname "$0")/../.." || exit 1
build=${1:-build}
GTCTL=$build/bench/parts/gotracectl
PP=$build/workloads/pingpong
TPP=$build/workloads/tcppingpong
N=${PARTS_ROUNDS:-50000}
. tests/bench/bpf_progs.sh
tmp=$(mktemp -d /tmp/gt-parts.XXXXXX)
trap 'gt_bpf_stats_restore; rm -rf "$tmp"' EXIT
for f in "$GTCTL" "$PP" "$TPP"; do
	[ -x "$f" ] || { echo "bpf_parts: $f not built (make BUILD=$build tests)"; exit 1; }
done
gt_bpf_stats_on || { echo "bpf_parts: cannot enable kernel.bpf_stats_enabled"; exit 1; }

# cost OFF FLAGS -- CMD...: one recording of CMD (which waits on stdin
# before its loop) with parts OFF left out; prints "prog ns runs" of the
# programs over the loop alone.
cost() {
	local off=$1 flags=$2
	shift 3
	# shellcheck disable=SC2086 # flags: words
	gt_bpf_loop "$tmp" env GOTRACED_BENCH_PARTS_OFF="$off" \
		"$GTCTL" record -q --standalone $flags -o "$tmp/s.trace" -- "$@"
	awk 'NR == FNR { b[$1] = $2; c[$1] = $3; next }
	     $3 > c[$1] { printf "%s %d %d\n", $1, $2 - b[$1], $3 - c[$1] }' "$tmp/before" "$tmp/after"
}

# table TAG FLAGS PROGS -- CMD...: the programs PROGS (a regex) under each
# variant, ns per run, the lower of two recordings.
table() {
	local tag=$1 flags=$2 progs=$3 v off name
	shift 4
	local variants=("all|0" "-ustack walk|0x01" "-late entry|0x02" "-stack top copy|0x04"
		"-wakeup bookkeeping|0x08" "-switch comms|0x10" "-main record|0x20" "filter only|0x40"
		"walk a frame per read|0x100")
	echo "$tag: ns per run of each program, everything vs a part left out (lower of 2 runs)"
	for v in "${variants[@]}"; do
		name=${v%%|*} off=${v##*|}
		for _ in 1 2; do cost "$off" "$flags" -- "$@" >>"$tmp/$tag.$off"; done
		awk -v name="$name" -v re="$progs" -v tag="$tag" '$1 ~ re {
			r = $2 / $3; if (!($1 in m) || r < m[$1]) m[$1] = r }
			END { line = sprintf("%s: %-22s", tag, name)
			      for (p in m) line = line sprintf(" %s %6.1f", p, m[p]); print line }' "$tmp/$tag.$off"
	done
	# the parts: all minus each variant, per program
	awk -v tag="$tag" -v re="$progs" 'FNR == 1 { f++ } $1 ~ re { r = $2 / $3
		if (!((f, $1) in m) || r < m[f, $1]) m[f, $1] = r; progs[$1] = 1 }
		END { split("ustack-walk late-entry stack-top wakeup-books switch-comms main-record", parts, " ")
		      for (p in progs) { line = sprintf("%s: part ns/run %-14s", tag, p)
			for (i = 1; i <= 6; i++) if ((i + 1, p) in m) line = line sprintf(" %s %.0f", parts[i], m[1, p] - m[i + 1, p])
			if ((8, p) in m) line = line sprintf(" | filter+entry %.0f, after the filter %.0f", m[8, p], m[1, p] - m[8, p])
			if ((9, p) in m) line = line sprintf(" | the walk a window at a time saves %.0f", m[9, p] - m[1, p])
			print line } }' \
		"$tmp/$tag.0" "$tmp/$tag.0x01" "$tmp/$tag.0x02" "$tmp/$tag.0x04" "$tmp/$tag.0x08" \
		"$tmp/$tag.0x10" "$tmp/$tag.0x20" "$tmp/$tag.0x40" "$tmp/$tag.0x100"
}

echo "== per-part cost of the hot BPF programs, $N round trips (kernel.bpf_stats_enabled)"
table pipe "" 'gt_sched_(switch|waking|wakeup)$' -- "$PP" --wait "$N" strict pipe
echo
table tcp "" 'gt_sched_(switch|waking|wakeup)$' -- "$TPP" --wait "$N" strict
echo
table sys --syscalls=all 'gt_sys_enter|gt_sched_switch$' -- "$PP" --wait "$N" strict pipe
