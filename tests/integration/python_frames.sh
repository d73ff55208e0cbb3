#!/usr/bin/env bash
# python_frames.sh: Python frames of CPython programs (docs/mapping.md,
# "Python frames").  python_work.py blocks in nested Python functions
# (sleep, a lock, a pipe read, select) and writes the stack its own
# traceback.extract_stack() saw at each block; python_frames_check.py
# wants at least 90% of its main thread's off-CPU time in
# `report --folded=offcpu:REASON` on exactly those stacks, `function
# (file:line)` from the root (every reason but preempt and sched: being
# preempted or waiting for a CPU is the machine's doing, and beside a CPU
# hog it is most of the start-up's time, before any Python frame).
#  - python_frames_311: Debian 12's python3.11 (frame-pointer walks: the
#    Python frames sit above the native frames the walk reached);
#  - python_frames_311_dwarf: the same with --call-graph=dwarf, the Python
#    frames in place of the evaluation loop's native frames;
#  - python_frames_312: a CPython 3.12 (pyenv's, with its libpython
#    loaded after exec) when there is one;
#  - python_frames_unknown: a CPython without a layout here (3.10, pyenv)
#    records as before: a valid trace, native frames only.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

# the other versions are pyenv's, where there are some: a case for each
py312=$(ls /root/.pyenv/versions/3.12*/bin/python3.12 2>/dev/null | head -1)
py310=$(ls /root/.pyenv/versions/3.10*/bin/python3.10 2>/dev/null | head -1)
CASES="python_frames_311 python_frames_311_dwarf"
[ -n "$py312" ] && CASES="$CASES python_frames_312"
[ -n "$py310" ] && CASES="$CASES python_frames_unknown"
# shellcheck disable=SC2086
gt_require_bpf $CASES
# shellcheck disable=SC2086
gt_expect $CASES
[ -z "$py312" ] && echo "skip python_frames_312: no CPython 3.12 under /root/.pyenv"
[ -z "$py310" ] && echo "skip python_frames_unknown: no CPython 3.10 under /root/.pyenv"

WORK=$PWD/tests/integration/python_work.py
CHECK=tests/integration/python_frames_check.py

# run NAME PYTHON [record options...]
run() {
	local name=$1 py=$2 t=$GT_TMP/$1.trace pid out
	shift 2
	if ! "$GTCTL" record "$@" -o "$t" -- "$py" "$WORK" "$GT_TMP/$name.json" \
		>/dev/null 2>"$GT_TMP/$name.err"; then
		fail "$name" "record failed: $(tail -3 "$GT_TMP/$name.err")"
		return
	fi
	gt_valid "$name" "$t" || return
	pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$GT_TMP/$name.json")
	# the thread's own waits: not preemptions nor waits for a CPU (a
	# busy machine's, at any point of the program)
	: >"$GT_TMP/$name.folded"
	for r in sync sleep select net syscall block; do
		"$GTCTL" report --folded=offcpu:$r --thread "$pid" "$t" >>"$GT_TMP/$name.folded" ||
			{ fail "$name" "report --folded=offcpu:$r --thread $pid failed"; return; }
	done
	case " $* " in *" --call-graph=dwarf "*) set -- --interleaved ;; *) set -- ;; esac
	if out=$(python3 "$CHECK" "$GT_TMP/$name.json" "$GT_TMP/$name.folded" "$WORK" "$@" 2>&1); then
		ok "$name"
		echo "# $name: $out"
	else
		fail "$name" "$out"
	fi
}

if [ -x /usr/bin/python3.11 ]; then
	run python_frames_311 /usr/bin/python3.11
	run python_frames_311_dwarf /usr/bin/python3.11 --call-graph=dwarf
else
	fail python_frames_311 "no /usr/bin/python3.11 (Debian 12's python3.11-minimal)"
	fail python_frames_311_dwarf "no /usr/bin/python3.11"
fi

[ -n "$py312" ] && run python_frames_312 "$py312"

# a version without a layout: no Python frame, nothing else lost
if [ -z "$py310" ]; then
	:
elif ! "$GTCTL" record -o "$GT_TMP/unknown.trace" -- "$py310" "$WORK" "$GT_TMP/unknown.json" \
	>/dev/null 2>"$GT_TMP/unknown.err"; then
	fail python_frames_unknown "record failed: $(tail -3 "$GT_TMP/unknown.err")"
elif gt_valid python_frames_unknown "$GT_TMP/unknown.trace"; then
	"$GTCTL" report --folded=offcpu "$GT_TMP/unknown.trace" >"$GT_TMP/unknown.folded"
	if grep -q ' (.*:[0-9]*);\|\[python\]' "$GT_TMP/unknown.folded"; then
		fail python_frames_unknown "Python frames from a version without a layout: $(grep -m1 '\[python\]\| (.*:[0-9]*)' "$GT_TMP/unknown.folded" | cut -c1-200)"
	elif ! grep -q '_Py_read;read ' "$GT_TMP/unknown.folded"; then
		fail python_frames_unknown "no native stack of the pipe read"
	else
		ok python_frames_unknown
	fi
fi

gt_finish
