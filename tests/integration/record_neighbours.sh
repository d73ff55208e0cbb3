#!/usr/bin/env bash
# record_neighbours.sh: the recorder reads the maps and opens the binaries
# of the processes it traces, not of whoever switches to them or wakes
# them.  A traced `cat` reads a FIFO that an untraced shell (a copy of bash
# under its own name) writes to a hundred times: every one of cat's wakeups
# names the shell as waker, and the shell runs right before cat on its CPU.
# While recording, gotracectl must hold cat's binary open (its stacks are
# resolved from it) and never the shell's (a neighbour's binary, parsed
# for nothing: on a busy machine, any number of big ones).
#  - neighbours_not_opened: that, from /proc/RECORDER/fd; the trace is
#    valid and shows cat woken at least 50 times.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

gt_require_bpf neighbours_not_opened
gt_expect neighbours_not_opened

fifo=$GT_TMP/fifo
mkfifo "$fifo" "$GT_TMP/go"
cp "$(command -v bash)" "$GT_TMP/neighbour-sh"
cat "$fifo" >/dev/null &
CAT=$!
gt_pids+=("$CAT")
# the writer opens the FIFO (cat's open returns), then waits for "go"
"$GT_TMP/neighbour-sh" -c 'read -r _ <"$2"; for i in $(seq 1 "$1"); do echo x; sleep 0.02; done' \
	sh 100 "$GT_TMP/go" >"$fifo" &
WRITER=$!
gt_pids+=("$WRITER")

why=
opened() { ls -l "/proc/$REC_PID/fd/" 2>/dev/null | grep -c -- "$1"; }
if ! gt_record_bg nb -o "$GT_TMP/nb.trace" -p "$CAT"; then
	why="no recording: $(tail -3 "$GT_TMP/nb.rec.err")"
else
	echo go >"$GT_TMP/go"
	seen_cat=0 seen_sh=0
	while kill -0 "$WRITER" 2>/dev/null; do
		[ "$(opened "$(readlink -f "$(command -v cat)")")" -gt 0 ] && seen_cat=1
		[ "$(opened neighbour-sh)" -gt 0 ] && seen_sh=1
		sleep 0.1
	done
	wait "$WRITER"
	wait "$CAT"
	gt_stop_record INT || why="the recording failed: $(tail -3 "$GT_TMP/nb.rec.err")"
	if [ -z "$why" ] && [ $seen_sh = 1 ]; then
		why="gotracectl opened the untraced writer's binary (neighbour-sh)"
	elif [ -z "$why" ] && [ $seen_cat = 0 ]; then
		why="gotracectl never held cat's binary open: the check above cannot see binaries"
	fi
fi
if [ -n "$why" ]; then
	fail neighbours_not_opened "$why"
elif gt_valid neighbours_not_opened "$GT_TMP/nb.trace"; then
	# a Go 1.22+ file's check lists no counts: its wakeups are read from
	# Go 1.23's reading of it (Waiting->Runnable)
	if gt_v2 "$GT_TMP/nb.trace"; then
		n=$(GOTOOLCHAIN=local "$GT_GO123" tool trace -d=1 "$GT_TMP/nb.trace" 2>/dev/null |
			grep -c 'Resource=Goroutine(.* Waiting->Runnable$')
	else
		n=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["counts"]; print(c.get("GoUnblock",0)+c.get("GoUnblockLocal",0))' "$GT_TMP/nb.trace.json")
	fi
	if [ "${n:-0}" -lt 50 ]; then
		fail neighbours_not_opened "cat was woken $n times (want >= 50 of the writer's 100)"
	else
		ok neighbours_not_opened
	fi
fi
gt_finish
