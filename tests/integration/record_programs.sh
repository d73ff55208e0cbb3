#!/usr/bin/env bash
# record_programs.sh: which BPF programs an embedded recording loads.
#  - embedded_no_sys_enter: `gotracectl record` (embedded) without
#    --syscalls=all holds no gt_sys_enter program (its verification was a
#    seventh of the start: docs/design.md, "Cost"), and still holds
#    gt_sched_switch; the trace passes every reader.
#  - embedded_sys_enter_asked: with --syscalls=all it holds gt_sys_enter,
#    and the trace passes every reader.
#  - bystander_exit_no_helper: what every task of the machine runs while a
#    session records (docs/design.md, "Cost"): gt_netif_receive_skb and
#    gt_softirq_exit (every packet) call no helper at all, and
#    gt_sched_switch and gt_sched_waking call none before the filter's
#    tgids lookup (the kernel's translated code, bpftool prog dump); and
#    nothing runs at sched_wakeup (a program there ran at every wakeup of
#    the machine for the rare waking that raced its target's block: the
#    target's own switch-out settles it now, bpf/racing.bpf.h).
#  - flight_same_programs: `record --flight` holds the same programs as a
#    default recording, so an untraced task pays the same early exits
#    beside either (what differed between the two in the bench was noise:
#    docs/design.md, "Cost").
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

gt_expect embedded_no_sys_enter embedded_sys_enter_asked bystander_exit_no_helper flight_same_programs
gt_require_bpf embedded_no_sys_enter embedded_sys_enter_asked bystander_exit_no_helper \
	flight_same_programs

# progs PID: the names of the BPF programs PID holds, one a line (IDS=1:
# "id name")
progs() {
	local ids
	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u | tr '\n' ,)
	bpftool prog show --json | python3 -c '
import json, sys
ids = {int(x) for x in sys.argv[1].split(",") if x}
for p in json.load(sys.stdin):
    if p.get("id") in ids:
        print(*([p["id"]] if sys.argv[2] == "1" else []), p.get("name", "?"))' "$ids" "${IDS:-0}"
}

# one CASE WANT FLAGS...: records a sleep under FLAGS; CASE passes when
# gt_sys_enter is held (WANT=1) or not (WANT=0) and the trace is valid.
one() {
	local name=$1 want=$2 have child kids id
	shift 2
	if ! gt_record_bg "$name" "$@" -o "$GT_TMP/$name.trace" -- sleep 600; then
		fail "$name" "gotracectl record did not start: $(tail -3 "$GT_TMP/$name.rec.err")"
		return
	fi
	progs "$REC_PID" >"$GT_TMP/$name.progs"
	IDS=1 progs "$REC_PID" >"$GT_TMP/$name.ids"
	for id in $(awk '{ print $1 }' "$GT_TMP/$name.ids"); do
		bpftool prog dump xlated id "$id" >"$GT_TMP/$name.$id.xlated" 2>&1
	done
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

# calls PROG: the helpers the default recording's PROG calls, in order
calls() {
	local id
	id=$(awk -v p="$1" '$2 == p { print $1 }' "$GT_TMP/embedded_no_sys_enter.ids")
	[ -n "$id" ] || { echo "no $1 loaded"; return; }
	sed -n 's/.*) call \([A-Za-z_0-9]*\).*/\1/p' "$GT_TMP/embedded_no_sys_enter.$id.xlated"
}
why=""
for p in gt_netif_receive_skb gt_softirq_exit; do
	c=$(calls "$p" | tr '\n' ' ')
	[ -z "$c" ] || why="$why $p calls: $c;"
done
for p in gt_sched_switch gt_sched_waking; do
	c=$(calls "$p" | head -1)
	[[ "$c" == *map_lookup_elem ]] || why="$why $p calls $c before its filter's lookup;"
done
grep -q '^gt_sched_wakeup$' "$GT_TMP/embedded_no_sys_enter.progs" &&
	why="$why a program runs at every sched_wakeup (gt_sched_wakeup);"
if [ -n "$why" ]; then
	fail bystander_exit_no_helper "$why"
else
	ok bystander_exit_no_helper
fi

if ! gt_record_bg flight_same_programs --flight -o "$GT_TMP/flight.trace" -- sleep 600; then
	fail flight_same_programs "gotracectl record --flight did not start: $(tail -3 "$GT_TMP/flight_same_programs.rec.err")"
else
	progs "$REC_PID" | sort >"$GT_TMP/flight.progs"
	kids=$(pgrep -P "$REC_PID")
	gt_stop_record INT >/dev/null 2>&1
	for child in $kids; do kill "$child" 2>/dev/null; done
	sort "$GT_TMP/embedded_no_sys_enter.progs" >"$GT_TMP/default.progs"
	if cmp -s "$GT_TMP/default.progs" "$GT_TMP/flight.progs" && [ -s "$GT_TMP/flight.progs" ]; then
		ok flight_same_programs
	else
		fail flight_same_programs "default: $(tr '\n' ' ' <"$GT_TMP/default.progs"); --flight: $(tr '\n' ' ' <"$GT_TMP/flight.progs")"
	fi
fi
gt_finish
