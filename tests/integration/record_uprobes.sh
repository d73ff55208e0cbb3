#!/usr/bin/env bash
# record_uprobes.sh: --heap malloc's allocator probes on both kinds of link
# in embedded mode and through the daemon:
#
#   *_auto       the kind the kernel has: uprobe_multi links (one per program
#                and binary) on Linux 6.10+, perf-event links before 6.6
#                (either between); the kernel's fdinfo of the recorder says
#                which, and that they name the target's pid;
#   *_fallback   GOTRACED_NO_UPROBE_MULTI=1: perf-event links only;
#   each:        the trace's HeapAlloc values follow alloc_phases' exact
#                live bytes (grow, free, regrow: probes, not RSS), and the
#                daemon holds no uprobe link once the session stopped;
#   uprobes_stopping_line(_daemon): on a terminal, the live line still
#                says "stopping" while the probes are taken away.
# How long stopping takes is a figure of make bench (bench_uprobe_stop).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

READ="python3 tests/integration/trace_read.py"
CASES="uprobes_auto uprobes_fallback uprobes_daemon_auto uprobes_daemon_fallback
uprobes_stopping_line uprobes_stopping_line_daemon"
gt_require_daemon uprobes
gt_expect $CASES
unset GOTRACED_NO_UPROBE_MULTI # the auto cases take what the kernel has

# The kind of link this kernel must get: multi, perf, or any.
read -r kmaj kmin < <(uname -r | sed -E 's/^([0-9]+)\.([0-9]+).*/\1 \2/')
kver=$((kmaj * 1000 + kmin))
if [ "$kver" -ge 6010 ]; then AUTO=multi; elif [ "$kver" -lt 6006 ]; then AUTO=perf; else AUTO=any; fi

# uprobe_links PID TARGET: "MULTI PERF": PID's uprobe_multi/uretprobe_multi
# links on TARGET, and its perf-event uprobe links, from the kernel's fdinfo.
uprobe_links() {
	local f info m=0 p=0
	for f in /proc/"$1"/fdinfo/*; do
		info=$(cat "$f" 2>/dev/null) || continue
		case $info in
		*"probe_multi"*) [[ $info == *"pid:"$'\t'"$2"$'\n'* ]] && m=$((m + 1)) ;;
		*"link_type:"$'\t'"perf"*"event_type:"$'\t'"uprobe"*) p=$((p + 1)) ;;
		esac
	done
	echo "$m $p"
}

# links_kind NAME HOLDER WANT: waits until HOLDER has probes on WL_PID
# (attached at the session's start, maybe on another thread), then checks
# their kind against WANT (multi, perf or any).
links_kind() {
	local name=$1 holder=$2 want=$3 m=0 p=0 i
	for i in $(seq 1 1200); do # 60 s: a busy machine
		read -r m p < <(uprobe_links "$holder" "$WL_PID")
		[ $((m + p)) -gt 0 ] && break
		kill -0 "$REC_PID" 2>/dev/null || break
		sleep 0.05
	done
	case $want:$m:$p in
	*:0:0) fail "$name" "no uprobe link on pid $WL_PID: $(tail -2 "$GT_TMP/$name.rec.err")" ;;
	multi:*:0 | perf:0:* | any:*:0 | any:0:*) return 0 ;;
	*) fail "$name" "want $want links, the kernel lists $m uprobe_multi and $p perf-event uprobe links" ;;
	esac
	return 1
}

# heap_follows NAME FILE: the HeapAlloc values reach the live bytes of the
# phases grow, free and regrow (alloc_phases' own lines), in order, within
# 256 KiB (the workload's own small allocations): what only the malloc
# probes count; RSS would be off by the program's resident pages.
heap_follows() {
	local out
	if ! out=$($READ heap "$2" 2>&1 | python3 -c '
import re, sys
want = [int(x) for x in re.findall(r"^phase (?:grow|free|regrow) live=(\d+)", open(sys.argv[1]).read(), re.M)]
vals = [int(l.split("\t")[1]) for l in sys.stdin if "\t" in l]
if len(want) != 3:
    sys.exit("alloc_phases printed %d phases, want 3" % len(want))
i = 0
for w in want:
    while i < len(vals) and not (w <= vals[i] <= w + 262144):
        i += 1
    if i == len(vals):
        sys.exit("%d HeapAlloc values never reach %d bytes (phase %d) in order; last %s"
                 % (len(vals), w, want.index(w) + 1, vals[-3:]))
' "$GT_TMP/$1.out" 2>&1); then
		fail "$1" "$out"
		return 1
	fi
}

# one_run NAME WANT [--daemon]: alloc_phases recorded with --heap malloc
# (the environment of the recorder, or of the daemon, chooses the links).
one_run() {
	local name=$1 want=$2 holder m p i rc
	shift 2
	if ! gt_start_workload "$name" "$WL/alloc_phases" --wait; then
		fail "$name" "alloc_phases did not start"
		return
	fi
	if ! gt_record_bg "$name" "$@" --heap malloc -p "$WL_PID" -o "$GT_TMP/$name.trace"; then
		fail "$name" "record did not start: $(tail -3 "$GT_TMP/$name.rec.err")"
		return
	fi
	holder=$REC_PID
	[[ " $* " == *" --daemon "* ]] && holder=$DAEMON_PID
	links_kind "$name" "$holder" "$want" || { gt_stop_record INT; return; }
	gt_go "$name"
	if ! gt_wait_line "$name" '^done' 120; then
		fail "$name" "alloc_phases never printed done"
		gt_stop_record INT
		return
	fi
	gt_stop_record INT
	rc=$?
	if [ "$rc" != 0 ]; then
		fail "$name" "record exited $rc: $(tail -3 "$GT_TMP/$name.rec.err")"
		return
	fi
	if [ "$holder" != "$REC_PID" ]; then
		for i in $(seq 1 600); do # the client may exit before the teardown ends
			read -r m p < <(uprobe_links "$holder" "$WL_PID")
			[ $((m + p)) = 0 ] && break
			sleep 0.05
		done
		if [ $((m + p)) != 0 ]; then
			fail "$name" "the daemon still holds $m uprobe_multi and $p perf links after the stop"
			return
		fi
	fi
	gt_valid "$name" "$GT_TMP/$name.trace" || return
	heap_follows "$name" "$GT_TMP/$name.trace" || return
	ok "$name"
	gt_leave "$name"
}

one_run uprobes_auto "$AUTO"
GOTRACED_NO_UPROBE_MULTI=1 one_run uprobes_fallback perf

gt_start_daemon
one_run uprobes_daemon_auto "$AUTO" --daemon --socket "$SOCK"
kill -TERM "$DAEMON_PID" && wait "$DAEMON_PID" 2>/dev/null
GOTRACED_NO_UPROBE_MULTI=1 gt_start_daemon
one_run uprobes_daemon_fallback perf --daemon --socket "$SOCK"

# --- the live line while stopping (on a terminal: script(1)) -------------
# stopping_line NAME ARGS...: a 2 s recording of a parked alloc_phases.
stopping_line() {
	local name=$1
	shift
	if ! gt_start_workload "$name" "$WL/alloc_phases" --wait; then
		fail "$name" "alloc_phases did not start"
	elif ! script -qec "$GTCTL record $* --heap malloc -p $WL_PID -d 2s -o $GT_TMP/$name.trace" \
		"$GT_TMP/$name.tty" >/dev/null 2>&1 </dev/null; then
		fail "$name" "record on a terminal failed: $(tail -c 300 "$GT_TMP/$name.tty")"
	elif ! grep -q 'stopping' "$GT_TMP/$name.tty"; then
		fail "$name" "no \"stopping\" on the terminal: $(tr '\r' '\n' <"$GT_TMP/$name.tty" | tail -3)"
	elif ! grep -q 'gotracectl: recorded' "$GT_TMP/$name.tty"; then
		fail "$name" "no summary line on the terminal"
	else
		ok "$name"
	fi
}
stopping_line uprobes_stopping_line --standalone
stopping_line uprobes_stopping_line_daemon --daemon --socket "$SOCK" # perf-event links

gt_finish
