#!/usr/bin/env bash
# record_shortlived.sh: a process that lives a few milliseconds still has
# named stacks.  Its maps are gone before the recorder hears of it (its exec
# event waits in a BPF ring), so /proc/PID/maps cannot name its frames; the
# kernel's perf MMAP2 records, written at each executable mmap, can
# (daemon/capture/mmap_events.c, daemon/engine/mmaps.c).
# The workload `shortlived` blocks 5 times in read() from read_short_pipe()
# and exits, in about 6 ms.  In every goroutine named shortlived, from its
# folded off-CPU stacks (gotracectl report):
#  - shortlived_cmd: `record -- shortlived`: its main thread's blocks show
#    read <- read_short_pipe, and no frame is an address (0x...) or an
#    offset in the program (shortlived+0x...: it has its symbols; libc and
#    the loader may lack some, such as ld.so's _start);
#  - shortlived_sh: `record -- sh -c` running it 3 times in sequence: the
#    same in each of the 3 processes (the children of a traced shell);
#  - shortlived_busy: as shortlived_sh, beside a CPU hog on every CPU (the
#    recorder runs late: the processes are long gone when it reads).
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

CASES="shortlived_cmd shortlived_sh shortlived_busy"
# shellcheck disable=SC2086
gt_require_bpf $CASES
# shellcheck disable=SC2086
gt_expect $CASES

SL=$WL/shortlived
[ -x "$SL" ] || { fail shortlived_cmd "$SL not built"; gt_finish; }

# check_named TRACE PROCESSES: every goroutine of the program shortlived
# has only named frames, and PROCESSES of them block in read <-
# read_short_pipe.  Its goroutines are named shortlived (its comm) or, when
# the recorder read its title while it lived (daemon/engine/titles.c: a
# quick start reads the rings sooner), by that title, its command line
# (.../shortlived, its first word's basename).  Prints what is wrong (nothing when all is well).
check_named() {
	local trace=$1 want=$2 ids id folded readers=0 bad
	if ! ids=$("$GTCTL" report --json "$trace" | python3 -c '
import json, sys
print(" ".join(str(t["id"]) for t in json.load(sys.stdin)["threads"]
               if (t["name"].split() or [""])[0].rsplit("/", 1)[-1] == "shortlived"))'); then
		echo "gotracectl report --json $trace failed"
		return
	fi
	for id in $ids; do
		if ! folded=$("$GTCTL" report --folded=offcpu --thread "$id" "$trace" 2>&1); then
			echo "report --folded=offcpu --thread $id failed: $folded"
			continue
		fi
		# frames are `;`-separated; a raw one is an address, or an offset
		# in the program, whose symbols we have
		bad=$(echo "$folded" | tr ';' '\n' | sed 's/ [0-9]*$//' |
			grep -E '^0x[0-9a-f]+$|^shortlived\+0x' | sort -u | head -5)
		[ -n "$bad" ] && echo "goroutine $id has raw frames: $(echo $bad)"
		echo "$folded" | grep -q ';read_short_pipe;read [0-9]*$' && readers=$((readers + 1))
	done
	[ "$readers" = "$want" ] ||
		echo "$readers goroutines block in read <- read_short_pipe, want $want (goroutines: $ids)"
}

# record NAME TAG CMD...: records CMD (embedded), checks the trace is
# valid; 1 (NAME failed) if not.
record() {
	local name=$1 tag=$2 out
	shift 2
	if ! out=$("$GTCTL" record --standalone -o "$GT_TMP/$tag.trace" -- "$@" 2>&1); then
		fail "$name" "gotracectl record failed: $(echo "$out" | tail -3)"
		return 1
	fi
	gt_valid "$name" "$GT_TMP/$tag.trace"
}

if record shortlived_cmd cmd "$SL"; then
	gt_report shortlived_cmd "$(check_named "$GT_TMP/cmd.trace" 1)"
fi

SH3="$SL; $SL; $SL"
if record shortlived_sh sh sh -c "$SH3"; then
	gt_report shortlived_sh "$(check_named "$GT_TMP/sh.trace" 3)"
fi

# The hogs are subshells of this script, so that $! is the loop itself:
# under `timeout`, a KILL that reached timeout first (gt_cleanup's) left
# its child spinning for good (two were found still running after make
# check, and halved the bench that followed).
hogs=()
for _ in $(seq 1 "$(nproc)"); do
	(while :; do :; done) &
	hogs+=($!)
	gt_pids+=($!)
done
if record shortlived_busy busy sh -c "$SH3"; then
	gt_report shortlived_busy "$(check_named "$GT_TMP/busy.trace" 3)"
fi
kill -KILL "${hogs[@]}" 2>/dev/null
wait "${hogs[@]}" 2>/dev/null
gt_finish
