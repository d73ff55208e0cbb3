#!/usr/bin/env bash
# record_programs.sh: which BPF programs an embedded recording loads.
#  - embedded_no_sys_enter: `gotracectl record` (embedded) without
#    --syscalls=all holds no gt_sys_enter program (its verification was a
#    seventh of the start: docs/design.md, "Cost"), and still holds
#    gt_sched_switch; the trace passes every reader.
#  - embedded_sys_enter_asked: with --syscalls=all it holds gt_sys_enter,
#    and the trace passes every reader.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

gt_expect embedded_no_sys_enter embedded_sys_enter_asked
gt_require_bpf embedded_no_sys_enter embedded_sys_enter_asked

# progs PID: the names of the BPF programs PID holds, one a line
progs() {
	local ids
	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u | tr '\n' ,)
	bpftool prog show --json | python3 -c '
import json, sys
ids = {int(x) for x in sys.argv[1].split(",") if x}
for p in json.load(sys.stdin):
    if p.get("id") in ids:
        print(p.get("name", "?"))' "$ids"
}

# one CASE WANT FLAGS...: records a sleep under FLAGS; CASE passes when
# gt_sys_enter is held (WANT=1) or not (WANT=0) and the trace is valid.
one() {
	local name=$1 want=$2 have child kids
	shift 2
	if ! gt_record_bg "$name" "$@" -o "$GT_TMP/$name.trace" -- sleep 600; then
		fail "$name" "gotracectl record did not start: $(tail -3 "$GT_TMP/$name.rec.err")"
		return
	fi
	progs "$REC_PID" >"$GT_TMP/$name.progs"
	kids=$(pgrep -P "$REC_PID")
	gt_stop_record INT >/dev/null 2>&1
	for child in $kids; do kill "$child" 2>/dev/null; done
	have=$(grep -c '^gt_sys_enter$' "$GT_TMP/$name.progs")
	if ! grep -q '^gt_sched_switch$' "$GT_TMP/$name.progs"; then
		fail "$name" "no gt_sched_switch among the recorder's programs: $(tr '\n' ' ' <"$GT_TMP/$name.progs")"
	elif [ "$have" != "$want" ]; then
		fail "$name" "gt_sys_enter held $have times, expected $want: $(tr '\n' ' ' <"$GT_TMP/$name.progs")"
	elif gt_valid "$name" "$GT_TMP/$name.trace"; then
		ok "$name"
	fi
}

one embedded_no_sys_enter 0
one embedded_sys_enter_asked 1 --syscalls=all
gt_finish
