#!/usr/bin/env bash
# record_readers.sh: "the readers are the spec".  Real recordings of the
# shapes Go 1.22+ converts differently from Go 1.19, each held to every Go
# reader and viewer (gocheck.sh: Go 1.19, 1.21 and 1.23) and to our checker:
#   - a process busy on a CPU when recording starts (running from the
#     start: Go 1.23's viewer used to read its start as unset and panic);
#   - a thread asleep in a syscall through the whole recording (GoWaiting
#     after its GoCreate: a thread blocked in a syscall is a blocked
#     goroutine, so that its waker shows);
#   - a --cpu-profile recording of a threaded workload (CPU samples, whose
#     time deltas Go 1.19 and 1.22+ read differently);
#   - a `record -- CMD` recording with --heap malloc (the launched child is
#     in a syscall at the start; heap counters).
# And Go 1.23's Goroutines page names the threads after their comm.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

CASES="readers_busy_at_start readers_syscall_throughout readers_cpu_profile readers_heap_malloc
readers_heap_malloc_cost readers_names_go123"
gt_require_bpf $CASES
gt_expect $CASES

# A Go 1.22+ file (GT_GO_VERSION) has none of these v1 records: each check
# counts what stands for them in Go 1.23's own reading of it (-d=1), the
# shape the v2 writer gives them (docs/format.md, Recording v2): GoStart
# and GoUnblock are a goroutine's Runnable->Running and Waiting->Runnable,
# GoWaiting its first status (Undetermined->Waiting), CPUSample a StackSample, HeapAlloc the metric
# /memory/classes/heap/objects:bytes.
v2_pattern() {
	case $1 in
	GoStart) echo 'Resource=Goroutine\(.* Runnable->Running$' ;;
	GoUnblock) echo 'Resource=Goroutine\(.* Waiting->Runnable$' ;;
	GoWaiting) echo 'Resource=Goroutine\(.* Undetermined->Waiting$' ;;
	CPUSample) echo ' StackSample Time=' ;;
	HeapAlloc) echo ' Metric .*Name="/memory/classes/heap/objects:bytes"' ;;
	*) echo "v2_pattern: no pattern for $1" >&2; echo '^$NEVER' ;;
	esac
}

# v2_events FILE: Go 1.23's parsed events of FILE.
v2_events() { GOTOOLCHAIN=local "$GT_GO123" tool trace -d=1 "$1" 2>/dev/null; }

# count FILE EVENT: how many EVENT records inspect counts in FILE.
count() {
	if gt_v2 "$1"; then
		v2_events "$1" | grep -cE "$(v2_pattern "$2")"
		return 0
	fi
	"$GTCTL" inspect "$1" | awk -v e="$2" '$1 == e { n = $2 } END { print n + 0 }'
}

# on_cpus FILE EVENT: how many EVENTs (GoStart/GoStartLocal, GoUnblock...)
# the trace has on a CPU's P; the spare P (numbered like the CPU count)
# holds only the 0 ns start that names a thread that never ran, for Go
# 1.23 (docs/mapping.md), and interrupt wakeups.
on_cpus() {
	if gt_v2 "$1"; then
		v2_events "$1" | grep -E "$(v2_pattern "$2")" |
			awk -v procs="$(nproc)" '{ split($2, p, "="); if (p[2] >= 0 && p[2] < procs) n++ }
				END { print n + 0 }'
		return 0
	fi
	go tool trace -d "$1" 2>/dev/null | awk -v e="$2" '
		$2 == "Gomaxprocs" { split($6, a, "="); procs = a[2] }
		$2 == e { split($3, p, "="); if (p[2] < procs) n++ }
		END { print n + 0 }'
}

# go123_groups FILE: the group names of Go 1.23's Goroutines page, one a
# line.
go123_groups() {
	gt_go123_page "$1" || return 1
	grep -o 'href="/goroutine?name=[^"]*"' "$1.go123.html" 2>/dev/null |
		sed -e 's/^href="\/goroutine?name=//' -e 's/"$//'
	return 0
}

# has_groups CASE FILE NAME...: each NAME is a group on Go 1.23's page.
has_groups() {
	local c=$1 f=$2 groups n
	shift 2
	if ! groups=$(go123_groups "$f"); then
		fail "$c" "Go 1.23's viewer did not serve $f: $(tail -3 "$f.go123.log")"
		return 1
	fi
	for n in "$@"; do
		if ! grep -qx -- "$n" <<<"$groups"; then
			fail "$c" "Go 1.23's Goroutines page has no group $n"
			echo "$groups" | head -20 | detail
			return 1
		fi
	done
}

# --- a process busy on a CPU at the start -------------------------------
# Its thread is running when the snapshot is taken: its GoStart is part of
# the snapshot, at the time of the Gomaxprocs that ends it.
python3 -c 'while True: pass' &
BUSY=$!
gt_pids+=("$BUSY")
# Past its start-up (files, imports): on a CPU or waiting for one.
for _ in $(seq 1 200); do
	[ "$(awk '{ print $3 }' "/proc/$BUSY/stat" 2>/dev/null)" = R ] &&
		[ "$(awk '{ print $14 }' "/proc/$BUSY/stat")" -gt 10 ] && break
	sleep 0.05
done
busy=$GT_TMP/busy.trace
if "$GTCTL" record -p "$BUSY" -o "$busy" -d 1s >/dev/null 2>"$GT_TMP/busy.err"; then
	if gt_v2 "$busy"; then
		# stated runnable at the snapshot and started on its own M there
		# (docs/format.md): its first start within 1 us of the first
		# event (the snapshot's events are 1 ns apart)
		at_start=$(v2_events "$busy" | awk '/^M=/ && $4 != "Sync" {
				split($5, t, "="); if (first == "") first = t[2] }
			/Resource=Goroutine\(.* Runnable->Running$/ { split($5, t, "=");
				print (t[2] - first < 1000) ? "yes" : "no"; exit }')
	else
		at_start=$(go tool trace -d "$busy" 2>/dev/null |
			awk '$2 == "Gomaxprocs" { m = $1 } $2 == "GoStart" && s == "" { s = $1 }
			     END { print (m != "" && s == m) ? "yes" : "no" }')
	fi
	if [ "$at_start" != yes ]; then
		fail readers_busy_at_start "the busy thread is not running at the start (no GoStart in the snapshot)"
	elif gt_valid readers_busy_at_start "$busy"; then
		ok readers_busy_at_start
	fi
else
	fail readers_busy_at_start "record -p exited $?: $(tail -3 "$GT_TMP/busy.err")"
fi
kill "$BUSY" 2>/dev/null

# --- a thread in a syscall through the whole recording --------------------
# cat reading a fifo nobody writes: in read() at the snapshot and after.
mkfifo "$GT_TMP/idle.fifo"
cat "$GT_TMP/idle.fifo" >/dev/null &
CAT=$!
gt_pids+=("$CAT")
exec {IDLE_FD}>"$GT_TMP/idle.fifo"
for _ in $(seq 1 100); do
	grep -q '^State:.*S' "/proc/$CAT/status" 2>/dev/null && break
	sleep 0.05
done
idle=$GT_TMP/idle.trace
if "$GTCTL" record -p "$CAT" -o "$idle" -d 1s >/dev/null 2>"$GT_TMP/idle.err"; then
	if [ "$(count "$idle" GoWaiting)" -lt 1 ]; then
		fail readers_syscall_throughout "no GoWaiting: cat was not seen blocked in read()"
	elif [ "$(on_cpus "$idle" GoUnblock)" -ne 0 ] || [ "$(on_cpus "$idle" GoStart)" -ne 0 ]; then
		fail readers_syscall_throughout "cat ran while nothing was written to its fifo"
	elif gt_valid readers_syscall_throughout "$idle"; then
		ok readers_syscall_throughout
	fi
else
	fail readers_syscall_throughout "record -p exited $?: $(tail -3 "$GT_TMP/idle.err")"
fi
exec {IDLE_FD}>&-

# --- CPU samples of a threaded workload -----------------------------------
cpu=$GT_TMP/cpu.trace
if "$GTCTL" record --cpu-profile=499 -o "$cpu" -- "$WL/demo" 1 >"$GT_TMP/cpu.out" 2>"$GT_TMP/cpu.err"; then
	n=$(count "$cpu" CPUSample)
	if [ "$n" -lt 10 ]; then
		fail readers_cpu_profile "only $n CPU samples in a second of three spinners"
	elif gt_valid readers_cpu_profile "$cpu"; then
		ok readers_cpu_profile
	fi
else
	fail readers_cpu_profile "record --cpu-profile exited $?: $(tail -3 "$GT_TMP/cpu.err")"
fi

# --- record -- CMD with the malloc heap -----------------------------------
heap=$GT_TMP/heap.trace
if "$GTCTL" record --heap malloc -o "$heap" -- "$WL/threads" 8 >"$GT_TMP/heap.out" 2>"$GT_TMP/heap.err"; then
	if [ "$(count "$heap" HeapAlloc)" -lt 1 ]; then
		fail readers_heap_malloc "no HeapAlloc with --heap malloc"
	elif gt_valid readers_heap_malloc "$heap"; then
		ok readers_heap_malloc
	fi
else
	fail readers_heap_malloc "record --heap malloc exited $?: $(tail -3 "$GT_TMP/heap.err")"
fi

# --heap malloc says at the start what a probed call costs here, measured:
# a positive figure; the default (rss) says nothing of the kind.
cost=$(sed -n 's/.*twice, \([0-9.]*\) us a call on this machine (measured).*/\1/p' "$GT_TMP/heap.err")
if [ -z "$cost" ]; then
	fail readers_heap_malloc_cost "no measured cost line: $(head -3 "$GT_TMP/heap.err")"
elif ! awk -v c="$cost" 'BEGIN { exit !(c > 0) }'; then
	fail readers_heap_malloc_cost "a probed call costs $cost us?"
elif others=$(cd "$GT_TMP" && grep -l "a call on this machine" busy.err idle.err cpu.err); then
	fail readers_heap_malloc_cost "recorded without --heap malloc, yet printed the cost: $others"
else
	ok readers_heap_malloc_cost
fi

# --- Go 1.23 names goroutines after the thread, not a frame ---------------
# Go 1.22+ forgets the creation stack of threads that existed at the start
# and takes the root frame of their next stack: the busy thread must still
# be python3, the launched command and its children their own names.
if [ -s "$busy" ] && [ -s "$heap" ] &&
	has_groups readers_names_go123 "$busy" python3 &&
	has_groups readers_names_go123 "$heap" wl-threads child-0 child-7; then
	ok readers_names_go123
elif [ ! -s "$busy" ] || [ ! -s "$heap" ]; then
	fail readers_names_go123 "no trace to look at (see the cases above)"
fi

gt_finish
