#!/usr/bin/env bash
# record_interpose.sh: `gotracectl record --heap interpose -- CMD` writes the
# live heap that build/libgotraced-heap.so counts inside CMD, exactly:
#
#   interpose_phases    alloc_phases: each phase's HeapAlloc is the first
#                       value plus the usable bytes of the live blocks the
#                       workload prints (malloc_usable_size), in order;
#   interpose_threads   heap_mix threads: frees crossing threads, exited
#                       threads: the heap moves by exactly the bytes left;
#   interpose_fork      heap_mix fork: the session's total is the parent's
#                       plus the forked child's own count;
#   interpose_jemalloc  heap_mix threads built against jemalloc (linked),
#                       and with jemalloc in LD_PRELOAD after ours (set by
#                       a shell that execs it): counted the same;
#   interpose_stacks    --alloc-stacks 4: at least 128 / 4 allocation
#                       samples, whose stacks (taken by the interposer)
#                       name alloc_block and main;
#   interpose_daemon    alloc_phases through gotraced (which reads the heap
#                       records at its 100 ms tick): its last phase exact;
# (alloc_phases holds each phase 1 s here: the recorder reads the record
# every 5 ms, or 100 ms in the daemon, and a busy machine may hold it off
# for longer than the usual 100 ms phase)
#   interpose_go        a Go program keeps RSS (no uprobe, no interposer
#                       value: its HeapAlloc is MiBs of resident memory);
#   interpose_static    so does a static C program (alloc_phases -static:
#                       the loader that would preload us never runs).
# Every trace must pass gt_valid.  Embedded mode (--standalone).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

READ="python3 tests/integration/trace_read.py"
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
CASES="interpose_phases interpose_threads interpose_fork interpose_jemalloc interpose_go
interpose_static interpose_stacks interpose_daemon interpose_python"
gt_require_bpf $CASES
gt_expect $CASES

if [ ! -r "$GT_BUILD/libgotraced-heap.so" ]; then
	fail interpose_phases "$GT_BUILD/libgotraced-heap.so not built (make BUILD=$GT_BUILD all)"
	gt_finish
fi

# heap_values FILE: the trace's HeapAlloc values in time order, one a line.
heap_values() { $READ heap "$1" | cut -f2; }

# in_order NAME VALUES_FILE V1 V2 ...: each Vi appears after V(i-1).
in_order() {
	local name=$1 file=$2
	shift 2
	python3 - "$file" "$@" <<'EOF'
import sys
vals = [int(l) for l in open(sys.argv[1]) if l.strip()]
want, at = [int(v) for v in sys.argv[2:]], 0
for w in want:
    while at < len(vals) and vals[at] != w:
        at += 1
    if at == len(vals):
        print("missing %d (after the earlier ones); values: %s" % (w, vals[:60]))
        sys.exit(1)
sys.exit(0)
EOF
}

# from_small VALUES_FILE EXPR: some small value b (< 64 KiB: start-up, stdio)
# is followed later by the value EXPR computes from b (python, b bound).
from_small() {
	python3 - "$1" "$2" <<'EOF'
import sys
vals = [int(l) for l in open(sys.argv[1]) if l.strip()]
for i, b in enumerate(vals):
    if b < 65536 and eval(sys.argv[2]) in vals[i + 1:]:
        sys.exit(0)
print("no small b followed by %s; values: %s" % (sys.argv[2], vals[:60]))
sys.exit(1)
EOF
}

# rec NAME CMD...: records CMD with --heap interpose into $GT_TMP/NAME.trace
# (stdout in NAME.out, stderr NAME.err); its stdin is the caller's.
# ($REC_OPTS: more options; $REC_ENGINE: how to reach the engine)
rec() {
	local name=$1
	shift
	# shellcheck disable=SC2086
	timeout 60 "$GTCTL" record ${REC_ENGINE:---standalone} --heap interpose ${REC_OPTS:-} \
		-o "$GT_TMP/$name.trace" -- "$@" >"$GT_TMP/$name.out" 2>"$GT_TMP/$name.err"
}

# feed NAME: once NAME.out says `ready` (the recorder runs: the command was
# held until then), the go byte $FEED_WAIT (1) s later (the recorder begins
# reading the record once it has handled the exec, which a busy machine
# delays: the value before the go must be in the trace), EOF (exit)
# $FEED_HOLD (0.4) s after that:
# each state lasts many of the recorder's 5 ms readings.
feed() {
	local i
	for i in $(seq 300); do
		grep -q '^ready' "$GT_TMP/$1.out" 2>/dev/null && break
		sleep 0.1
	done
	sleep "${FEED_WAIT:-1}"
	printf g
	sleep "${FEED_HOLD:-0.4}"
}

# ---- alloc_phases: every phase exactly ----
n=interpose_phases
# --wait: its start is held until the recorder reads the record (the first
# readings come once the trace has begun, which takes the recorder a
# moment after the exec on a busy machine)
# --pause 1000: each phase holds 1 s, many readings even on a busy machine
if ! FEED_HOLD=5 feed $n | rec $n "$WL/alloc_phases" --wait --pause 1000; then
	fail $n "record failed: $(tail -3 "$GT_TMP/$n.err")"
elif gt_valid $n "$GT_TMP/$n.trace"; then
	heap_values "$GT_TMP/$n.trace" >"$GT_TMP/$n.vals"
	mapfile -t usable < <(sed -n 's/^phase .* usable=\([0-9]*\)$/\1/p' "$GT_TMP/$n.out")
	base=$(head -1 "$GT_TMP/$n.vals")
	if [ "${#usable[@]}" != 4 ] || [ -z "$base" ]; then
		fail $n "${#usable[@]} phase lines, first HeapAlloc '${base}'"
	elif [ "$base" -ge 65536 ]; then
		fail $n "the first HeapAlloc is $base bytes: more than start-up and stdio"
	elif why=$(in_order $n "$GT_TMP/$n.vals" $((base + usable[0])) $((base + usable[1])) \
		$((base + usable[2])) $((base + usable[3]))); then
		ok $n
	else
		fail $n "phases (usable ${usable[*]} over $base): $why"
	fi
fi

# ---- allocation samples: stacks taken in the process ----
n=interpose_stacks
if ! feed $n | REC_OPTS="--alloc-stacks 4" rec $n "$WL/alloc_phases" --wait; then
	fail $n "record failed: $(tail -3 "$GT_TMP/$n.err")"
elif gt_valid $n "$GT_TMP/$n.trace"; then
	$READ frames "$GT_TMP/$n.trace" >"$GT_TMP/$n.frames"
	# (a Go 1.22+ file's inspect --json counts no UserLog, which changes
	# no goroutine: its UserLogs are read from Go 1.23's reading of it,
	# trace_read.py logs)
	if gt_v2 "$GT_TMP/$n.trace"; then
		logs=$($READ logs "$GT_TMP/$n.trace" | wc -l)
	else
		logs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counts"].get("UserLog", 0))' \
			"$GT_TMP/$n.trace.json" 2>/dev/null)
	fi
	# the stacks of the samples in alloc_block: their id's frames hold main too
	named=$(awk -F'\t' '$3 == "alloc_block" {s[$1] = 1} $3 == "main" && s[$1] {n++} END {print n + 0}' \
		"$GT_TMP/$n.frames")
	if [ "$named" -lt 1 ]; then
		fail $n "no sample stack names alloc_block then main (UserLog: ${logs:-?})"
	elif [ "${logs:-0}" -lt 32 ]; then
		# 128 blocks (and a few stdio buffers), every 4th of each thread
		fail $n "${logs:-no} allocation samples, want at least 128 / 4"
	else
		ok $n
	fi
fi

# ---- heap_mix threads, fork ----
# A reading of the record between the mark and the go is the case's
# precondition, not its verdict: the recorder reads on its own tick, and
# a machine busy enough to miss it (seen at load 10 under ASan: the first
# value already held the work) gets a longer wait, up to 8 s.
mix_run() {
	local n=$1 bin=$2 mode=$3 wait first
	for wait in 1 3 8; do
		rm -f "$GT_TMP/$n.out"
		if ! FEED_WAIT=$wait feed "$n" | rec "$n" "$bin" --wait "$mode"; then
			fail "$n" "record failed: $(tail -3 "$GT_TMP/$n.err")"
			return 1
		fi
		gt_valid "$n" "$GT_TMP/$n.trace" || return 1
		heap_values "$GT_TMP/$n.trace" >"$GT_TMP/$n.vals"
		first=$(head -1 "$GT_TMP/$n.vals")
		[ -n "$first" ] && [ "$first" -lt 65536 ] && return 0
		echo "# $n: no reading before the go ${wait}s after ready (first value ${first:-none})"
	done
	fail "$n" "the recorder never read the heap record between the mark and the go, 8 s apart"
	return 1
}

mix_case() {
	local n=$1 bin=$2 mode=$3 expr out
	mix_run "$n" "$bin" "$mode" || return
	local d c
	d=$(sed -n 's/^mark after delta=\([0-9]*\)$/\1/p' "$GT_TMP/$n.out")
	c=$(sed -n 's/^child [0-9]* delta=\([0-9]*\)$/\1/p' "$GT_TMP/$n.out")
	if [ -z "$d" ]; then
		fail "$n" "no 'mark after' line: $(tail -3 "$GT_TMP/$n.out")"
		return
	fi
	# threads: b + d; fork: the parent (b + d) plus the child (b + c)
	expr="b + $d"
	[ "$mode" = fork ] && expr="2 * b + $d + ${c:-0}"
	if out=$(from_small "$GT_TMP/$n.vals" "$expr"); then
		ok "$n"
	else
		fail "$n" "$out"
	fi
}
mix_case interpose_threads "$WL/heap_mix" threads
mix_case interpose_fork "$WL/heap_mix" fork

# ---- jemalloc: linked, and preloaded ----
n=interpose_jemalloc
if [ ! -r "$JEMALLOC" ]; then
	fail $n "no $JEMALLOC (make deps installs libjemalloc2)"
elif ! cc -std=c11 -D_GNU_SOURCE -O1 -pthread tests/workloads/heap_mix.c "$JEMALLOC" \
	-o "$GT_TMP/heap_mix_je" 2>"$GT_TMP/je.cc"; then
	fail $n "cannot link heap_mix to jemalloc: $(head -3 "$GT_TMP/je.cc")"
elif ! ldd "$GT_TMP/heap_mix_je" | grep -q jemalloc; then
	fail $n "heap_mix_je is not linked to jemalloc"
else
	before=$gt_failures
	mix_case ${n}_linked "$GT_TMP/heap_mix_je" threads >"$GT_TMP/je1"
	# preloaded after ours, by a shell CMD runs first (not in gotracectl's
	# own environment: a sanitizer build refuses a preload before it);
	# the exec keeps ours in front
	printf '#!/bin/sh\nLD_PRELOAD="$LD_PRELOAD:%s" exec "%s" "$@"\n' "$JEMALLOC" \
		"$PWD/$WL/heap_mix" >"$GT_TMP/je_preload.sh"
	chmod +x "$GT_TMP/je_preload.sh"
	mix_case ${n}_preloaded "$GT_TMP/je_preload.sh" threads >"$GT_TMP/je2"
	if [ "$gt_failures" = "$before" ]; then
		ok $n
	else
		fail $n "$(grep -h FAIL "$GT_TMP/je1" "$GT_TMP/je2" | head -4)"
		gt_failures=$((before + 1))
	fi
fi

# ---- Go: RSS, never the interposer ----
n=interpose_go
gobin=$GT_BUILD/workloads/memgo
mkdir -p "$GT_BUILD/go-mem"
if ! (export GOCACHE=$PWD/$GT_BUILD/go-mem/cache GOPATH=$PWD/$GT_BUILD/go-mem/gopath \
	GO111MODULE=off GOFLAGS= CGO_ENABLED=0 && go build -o "$gobin" tests/workloads/go/memgo/main.go) \
	2>"$GT_TMP/go.err"; then
	fail $n "go build failed: $(head -3 "$GT_TMP/go.err")"
elif ! feed $n | rec $n "$gobin" --wait; then
	fail $n "record failed: $(tail -3 "$GT_TMP/$n.err")"
elif gt_valid $n "$GT_TMP/$n.trace"; then
	max=$(heap_values "$GT_TMP/$n.trace" | sort -n | tail -1)
	if [ -z "$max" ] || [ "$max" -lt $((4 * 1024 * 1024)) ]; then
		fail $n "HeapAlloc peaks at '${max}' bytes: not the Go program's RSS"
	else
		ok $n
	fi
fi

# ---- a static program: RSS ----
n=interpose_static
if ! cc -std=c11 -D_GNU_SOURCE -O1 -static -pthread tests/workloads/alloc_phases.c \
	-o "$GT_TMP/alloc_phases_static" 2>"$GT_TMP/static.cc"; then
	fail $n "cannot link statically (libc6-dev has libc.a): $(head -1 "$GT_TMP/static.cc")"
elif ! rec $n "$GT_TMP/alloc_phases_static"; then
	fail $n "record failed: $(tail -3 "$GT_TMP/$n.err")"
elif gt_valid $n "$GT_TMP/$n.trace"; then
	max=$(heap_values "$GT_TMP/$n.trace" | sort -n | tail -1)
	# RSS of 96 MiB of touched blocks (the interposer would say nothing)
	if [ -z "$max" ] || [ "$max" -lt $((90 * 1024 * 1024)) ]; then
		fail $n "HeapAlloc peaks at '${max}' bytes: not the static program's RSS"
	else
		ok $n
	fi
fi

# ---- through the daemon ----
n=interpose_daemon
if [ ! -x "$GT_BUILD/gotraced" ]; then
	fail $n "$GT_BUILD/gotraced not built"
else
	gt_start_daemon
	# each phase held 1 s: many of the daemon's 100 ms ticks
	if ! FEED_HOLD=5 feed $n | REC_ENGINE="--daemon --socket $SOCK" \
		rec $n "$WL/alloc_phases" --wait --pause 1000; then
		fail $n "record failed: $(tail -3 "$GT_TMP/$n.err")"
	elif gt_valid $n "$GT_TMP/$n.trace"; then
		heap_values "$GT_TMP/$n.trace" >"$GT_TMP/$n.vals"
		last=$(sed -n 's/^phase regrow .* usable=\([0-9]*\)$/\1/p' "$GT_TMP/$n.out")
		if [ -z "$last" ]; then
			fail $n "no regrow phase line: $(tail -2 "$GT_TMP/$n.out")"
		elif out=$(from_small "$GT_TMP/$n.vals" "b + $last"); then
			ok $n
		else
			fail $n "$out"
		fi
	fi
fi

# python3 (non-PIE) takes malloc's address: its canonical address is a PLT
# stub of python3's own, which a check by address took for "the program
# brings its own malloc" (0 HeapAlloc).  It holds 5 x 10 MiB bytearrays.
if rec python /usr/bin/python3 -c 'import time
x = []
for i in range(5):
    x.append(bytearray(10 << 20)); time.sleep(0.2)
time.sleep(0.3)' </dev/null; then
	heap_values "$GT_TMP/python.trace" >"$GT_TMP/python.vals"
	max=$(sort -n "$GT_TMP/python.vals" | tail -1)
	if [ "${max:-0}" -ge $((50 << 20)) ]; then
		ok interpose_python
	else
		fail interpose_python "largest HeapAlloc ${max:-none} (of $(wc -l <"$GT_TMP/python.vals") values), want >= 50 MiB"
	fi
else
	fail interpose_python "record failed: $(tail -3 "$GT_TMP/python.err")"
fi

gt_finish
