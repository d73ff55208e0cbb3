#!/usr/bin/env bash
# record_flight.sh: `record --flight` (docs/design.md, "Flight recorder").
#   flight_trigger_once   a program that stalls one thread once, at a random
#                         moment, 80 ms in ppoll (its only ppoll): with
#                         --trigger 'syscall:ppoll>40ms' exactly one file,
#                         named after the trigger, valid in every reader,
#                         holding the stall, at least the window before
#                         its end, and the trigger's log event on the
#                         staller; stderr says what fired and where;
#                         `report` on it begins with the trigger (what,
#                         thread, trace time, wall time) and --json gives
#                         the wait that fired it, the stall's length
#   flight_offcpu         the same with 'offcpu>400ms@staller', a 1 s stall
#                         (it sleeps 1 ms at a time otherwise: on a loaded
#                         machine one such sleep was seen off CPU 114 ms,
#                         hence the margin; the ppoll cases are exact)
#   flight_sigusr1        two SIGUSR1 during a busy recording: two valid
#                         files, the recording still going after each; no
#                         file at the end (SIGINT writes none)
#   flight_size_cap       --flight-size 1M over a busy target: what is held
#                         stays under the cap (old segments dropped), the
#                         dump is valid and covers less than the run
#   flight_max_dumps      four stalls, --holdoff 0 --max-dumps 2: two files
#   flight_holdoff        four stalls within 2 s, --holdoff 30s: one file
#   flight_holdoff_says   'offcpu>1us' fires at once on noise; the 80 ms
#                         stall later, inside the 30 s holdoff, is said on
#                         stderr when it fires (longer than the one taken,
#                         no dump) and counted in the end line
#   flight_end_pending    --after 60s outlives the target: the trigger's
#                         file is written at the end, holding the stall
#   flight_name_unseen    a trigger for @NAME that no thread has: the end
#                         line says it never applied (and which); one for a
#                         name the target has says nothing
#   flight_v2_trigger_1.23, _1.22  flight_trigger_once with --go-version
#                         1.23 / 1.22: the one file is a "go 1.2x trace"
#                         (Go 1.22+'s own format), read to its end by Go
#                         1.22's and 1.23's parsers and served by the 1.23
#                         viewer, holding the stall, the window before it
#                         (by Go 1.23's own reading) and the trigger's log
#                         event on the staller
#   flight_v2_sigusr1     a SIGUSR1 dump of a 3 s window of busy pingpong
#                         with --go-version 1.23: one valid v2 file of more
#                         than one generation (each restating every thread),
#                         the recording going on after it
#   flight_idle_memory    an idle flight recorder (a sleeper, 1 MiB rings)
#                         holds each ring in its RSS once, not twice (the
#                         second view libbpf maps for wrapped records
#                         counted the ring again: 16 MiB a CPU by default),
#                         and, outside the sanitizer build, at most 32 MiB
#                         of heap (39 MiB before: libbpf's freed kernel BTF
#                         kept in each loading thread's malloc arena); the
#                         dump of its window is valid
# Every case also holds the directory to the files it expects: no partial,
# temporary or other file is left.  No timing is asserted but what the
# feature promises (the window kept); thresholds are far from the
# workload's 1 ms sleeps, so a CPU hog beside does not fire them.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

CASES=(flight_trigger_once flight_offcpu flight_sigusr1 flight_size_cap flight_max_dumps
       flight_holdoff flight_holdoff_says flight_end_pending flight_name_unseen flight_v2_trigger_1.23
       flight_v2_trigger_1.22 flight_v2_sigusr1 flight_idle_memory)
gt_require_bpf "${CASES[@]}"
gt_expect "${CASES[@]}"
READ="python3 tests/integration/trace_read.py"

# files DIR: the names in DIR, one a line
files() { ls -1 "$1" 2>/dev/null; }

# valid_all NAME DIR: every file of DIR passes every reader
valid_all() {
	local f
	for f in "$1"/*.trace; do
		[ -e "$f" ] || continue
		gt_valid "$1" "$f" >/dev/null || return 1
	done
}

# stalled NAME DIR RUN_MS STALL_MS COUNT GAP_MS RECORD-FLAGS...: records
# `stall` with the flags into DIR/fl.trace until it exits; 0 if the
# recorder exited 0 (its stderr in DIR.err, the workload's stdout DIR.out).
stalled() {
	local name=$1 dir=$2 run=$3 stall=$4 count=$5 gap=$6
	shift 6
	mkdir -p "$dir"
	if ! "$GTCTL" record --standalone -q "$@" -o "$dir/fl.trace" -- \
		"$WL/stall" "$run" "$stall" "$count" "$gap" >"$dir.out" 2>"$dir.err"; then
		fail "$name" "gotracectl record exited non-zero: $(tail -3 "$dir.err")"
		return 1
	fi
}

# one_stall NAME TRIGGER STALL_MS LABEL [GO_VERSION]: the stall caught in
# exactly one file (of that trace format, if given)
one_stall() {
	local name=$1 trig=$2 stall=$3 label=$4 ver=${5:-} d=$GT_TMP/$1 why="" f tid a b first last log
	stalled "$name" "$d" 6000 "$stall" 1 0 --flight=2s --trigger "$trig" --after 300ms \
		${ver:+--go-version "$ver"} || return
	mapfile -t got < <(files "$d")
	if [ "${#got[@]}" != 1 ]; then
		fail "$name" "${#got[@]} files, want 1: ${got[*]}"
		cat "$d.err" "$d.out" | detail
		return
	fi
	f=$d/${got[0]}
	[[ "${got[0]}" =~ ^fl-[0-9]{8}-[0-9]{6}-$label\.trace$ ]] ||
		why="file name ${got[0]} does not say the time and the trigger ($label)"
	[ -z "$ver" ] || [ "$(head -c 16 "$f" | tr -d '\0')" = "go $ver trace" ] ||
		why="${why:+$why; }not a go $ver trace: $(head -c 16 "$f" | od -c | head -1)"
	read -r _ tid a b < <(grep '^stall ' "$d.out")
	grep -q "trigger $trig fired at .*: thread $tid (staller)" "$d.err" ||
		why="${why:+$why; }stderr does not say the trigger fired on thread $tid: $(head -3 "$d.err")"
	valid_all "$name" "$d" || return
	read -r first last _ < <($READ span "$f")
	[ -n "$last" ] && [ "$first" -le "$a" ] && [ "$last" -ge "$b" ] ||
		why="${why:+$why; }the file ($first..$last) does not hold the stall ($a..$b)"
	[ -n "$last" ] && [ $((last - first)) -ge 2000000000 ] ||
		why="${why:+$why; }the file spans $((last - first)) ns, less than the 2 s window"
	log=$($READ logs "$f" | grep -P '\tgotraced.trigger\t')
	[ "$(printf '%s\n' "$log" | grep -c .)" = 1 ] && [[ "$log" == *"thread $tid (staller)"* ]] ||
		why="${why:+$why; }want one trigger log naming thread $tid, got: $log"
	read -r lts _ <<<"$log"
	[ -n "$lts" ] && [ "$lts" -ge $((a + stall * 500000)) ] && [ "$lts" -le "$last" ] ||
		why="${why:+$why; }the trigger log at $lts is not after the stall began ($a)"
	# report on the dump: the trigger first (what, which thread, trace
	# and wall time), and the wait that fired it, of the stall's length
	"$GTCTL" report "$f" >"$d.rep" 2>&1
	sed -n 2p "$d.rep" | grep -q "^TRIGGER: $trig fired: .*thread $tid (staller).*, at [0-9-]* [0-9:.]* UTC$" ||
		why="${why:+$why; }report does not begin with the trigger: $(head -3 "$d.rep")"
	grep -q "^  at trace time [0-9.]*s (.* before the trace's end), on G" "$d.rep" ||
		why="${why:+$why; }report does not give the trigger's trace time"
	w=$("$GTCTL" report --json "$f" | python3 -c 'import json, sys
t = json.load(sys.stdin)["triggers"]
print(t[0]["wait"]["wait_ns"] if len(t) == 1 and t[0]["wait"] else -1)')
	[ "$w" -ge $((stall * 900000)) ] ||
		why="${why:+$why; }report --json: the trigger's wait is $w ns, the stall ${stall} ms"
	gt_report "$name" "$why"
}

one_stall flight_trigger_once 'syscall:ppoll>40ms' 80 syscall-ppoll
one_stall flight_offcpu 'offcpu>400ms@staller' 1000 offcpu
one_stall flight_v2_trigger_1.23 'syscall:ppoll>40ms' 80 syscall-ppoll 1.23
one_stall flight_v2_trigger_1.22 'syscall:ppoll>40ms' 80 syscall-ppoll 1.22

# stalls NAME COUNT RECORD-FLAGS...: four stalls 500 ms apart, COUNT files
stalls() {
	local name=$1 want=$2 d=$GT_TMP/$1
	shift 2
	stalled "$name" "$d" 6000 80 4 500 --flight=1s --trigger 'syscall:ppoll>40ms' "$@" ||
		return
	mapfile -t got < <(files "$d")
	if [ "${#got[@]}" != "$want" ]; then
		fail "$name" "${#got[@]} files, want $want: ${got[*]} ($(tail -2 "$d.err"))"
		return
	fi
	[ "$(grep -c '^stall ' "$d.out")" = 4 ] || { fail "$name" "the workload did not stall 4 times"; return; }
	valid_all "$name" "$d" && ok "$name"
}

stalls flight_max_dumps 2 --holdoff 0 --max-dumps 2
stalls flight_holdoff 1 --holdoff 30s

# a trigger that fires at once on noise (any wait over 1 us), then the real
# stall inside its holdoff: said when it fires, and in the final count
holdoff_says() {
	local name=flight_holdoff_says d=$GT_TMP/flight_holdoff_says why="" tid
	stalled "$name" "$d" 3000 80 1 0 --flight=1s --trigger 'offcpu>1us' --holdoff 30s ||
		return
	mapfile -t got < <(files "$d")
	[ "${#got[@]}" = 1 ] || why="${#got[@]} files, want 1: ${got[*]}"
	read -r _ tid _ < <(grep '^stall ' "$d.out")
	grep -q "trigger offcpu>1us fired again at .*: thread $tid (staller) of process [0-9]*, \([89][0-9]\|[1-9][0-9][0-9][0-9]*\)\.[0-9] ms\( in [a-z_0-9]*\)\?, longer than the .* ms taken .* s before; inside the holdoff: no dump" "$d.err" ||
		why="${why:+$why; }stderr does not say the 80 ms stall of thread $tid fell inside the holdoff: $(grep 'fired again' "$d.err" | tail -2)"
	grep -q "ignored ([1-9][0-9]* longer than the one taken before them)" "$d.err" ||
		why="${why:+$why; }the end line does not count the longer ones: $(grep 'flight recording ended' "$d.err")"
	gt_report "$name" "$why"
}
holdoff_says

end_pending() {
	local name=flight_end_pending d=$GT_TMP/flight_end_pending why="" a b first last
	stalled "$name" "$d" 4000 80 1 0 --flight=1s --trigger 'syscall:ppoll>40ms' --after 60s ||
		return
	mapfile -t got < <(files "$d")
	if [ "${#got[@]}" != 1 ]; then
		fail "$name" "${#got[@]} files, want 1: ${got[*]}"
		cat "$d.err" | detail
		return
	fi
	valid_all "$name" "$d" || return
	read -r _ _ a b < <(grep '^stall ' "$d.out")
	read -r first last _ < <($READ span "$d/${got[0]}")
	[ -n "$last" ] && [ "$first" -le "$a" ] && [ "$last" -ge "$b" ] ||
		why="the file ($first..$last) does not hold the stall ($a..$b)"
	grep -q 'ended (targets exited)' "$d.err" || why="${why:+$why; }not ended by the target's exit"
	gt_report "$name" "$why"
}
end_pending

name_unseen() {
	local name=flight_name_unseen d=$GT_TMP/flight_name_unseen why=""
	stalled "$name" "$d" 1000 10 1 0 --flight=1s --trigger 'offcpu>10s@nosuchthread' \
		--trigger 'offcpu>10s@staller' || return
	grep -q 'trigger offcpu>10s@nosuchthread never applied: no thread named nosuchthread' \
		"$d.err" || why="the end does not say @nosuchthread never applied: $(tail -2 "$d.err")"
	grep -q 'offcpu>10s@staller never' "$d.err" &&
		why="${why:+$why; }it says @staller never applied, but the staller ran"
	gt_report "$name" "$why"
}
name_unseen

# busy NAME TAG RECORD-FLAGS...: a flight recording of pingpong (-p), busy
busy_start() {
	local name=$1 tag=$2
	shift 2
	mkdir -p "$GT_TMP/$tag"
	if ! gt_start_workload "$tag" "$WL/pingpong" --wait 1000000000; then
		fail "$name" "pingpong did not start"
		return 1
	fi
	if ! gt_record_bg "$tag" "$@" -p "$WL_PID" -o "$GT_TMP/$tag/fl.trace"; then
		fail "$name" "gotracectl record did not start: $(tail -3 "$GT_TMP/$tag.rec.err")"
		return 1
	fi
	gt_go "$tag"
}

# dump_now TAG N: SIGUSR1, then waits until stderr says N files were written
dump_now() {
	local i
	kill -USR1 "$REC_PID"
	for i in $(seq 1 1200); do
		[ "$(grep -c '^gotracectl: wrote ' "$GT_TMP/$1.rec.err")" -ge "$2" ] && return 0
		kill -0 "$REC_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

busy_end() {
	local rc
	gt_stop_record INT
	rc=$?
	kill "$WL_PID" 2>/dev/null
	wait "$WL_PID" 2>/dev/null
	return $rc
}

sigusr1() {
	local name=flight_sigusr1 tag=busy why=""
	busy_start "$name" "$tag" --flight=2s || return
	sleep 1
	dump_now "$tag" 1 || why="no file after the first SIGUSR1"
	kill -0 "$REC_PID" 2>/dev/null || why="${why:+$why; }the recording ended at SIGUSR1"
	sleep 0.5
	[ -z "$why" ] && { dump_now "$tag" 2 || why="no second file after the second SIGUSR1"; }
	busy_end || why="${why:+$why; }gotracectl record exited non-zero at SIGINT: $(tail -2 "$GT_TMP/$tag.rec.err")"
	mapfile -t got < <(files "$GT_TMP/$tag")
	[ "${#got[@]}" = 2 ] || why="${why:+$why; }${#got[@]} files, want 2: ${got[*]}"
	for f in "${got[@]}"; do
		[[ "$f" =~ ^fl-[0-9]{8}-[0-9]{6}(-2)?\.trace$ ]] || why="${why:+$why; }unexpected file $f"
	done
	[ -z "$why" ] && { valid_all "$name" "$GT_TMP/$tag" || return; }
	gt_report "$name" "$why"
}
sigusr1

size_cap() {
	local name=flight_size_cap tag=cap why="" held cap f first last
	busy_start "$name" "$tag" --flight=60s --flight-size 1M || return
	sleep 4
	dump_now "$tag" 1 || why="no file after SIGUSR1"
	busy_end || why="${why:+$why; }gotracectl record exited non-zero: $(tail -2 "$GT_TMP/$tag.rec.err")"
	read -r held cap < <(sed -n 's/.* held \([0-9]*\) bytes (cap \([0-9]*\)).*/\1 \2/p' \
		"$GT_TMP/$tag.rec.err")
	[ -n "$held" ] && [ "$cap" = 1048576 ] && [ "$held" -le "$cap" ] ||
		why="${why:+$why; }held ${held:-?} bytes, cap ${cap:-?}: $(tail -1 "$GT_TMP/$tag.rec.err")"
	grep -q ' [1-9][0-9]* dropped;' "$GT_TMP/$tag.rec.err" ||
		why="${why:+$why; }no segment dropped under a 1M cap: $(tail -1 "$GT_TMP/$tag.rec.err")"
	mapfile -t got < <(files "$GT_TMP/$tag")
	[ "${#got[@]}" = 1 ] || why="${why:+$why; }${#got[@]} files, want 1: ${got[*]}"
	if [ -z "$why" ]; then
		valid_all "$name" "$GT_TMP/$tag" || return
		f=$GT_TMP/$tag/${got[0]}
		read -r first last _ < <($READ span "$f")
		# pingpong ran 4 s before the dump: the cap kept less
		[ $((last - first)) -lt 4000000000 ] ||
			why="the dump spans $((last - first)) ns: the cap did not win"
	fi
	gt_report "$name" "$why"
}
size_cap

v2_sigusr1() {
	local name=flight_v2_sigusr1 tag=busy2 why="" f gens
	busy_start "$name" "$tag" --flight=3s --go-version 1.23 || return
	sleep 4
	dump_now "$tag" 1 || why="no file after SIGUSR1: $(tail -2 "$GT_TMP/$tag.rec.err")"
	sleep 0.5
	kill -0 "$REC_PID" 2>/dev/null || why="${why:+$why; }the recording ended at SIGUSR1"
	busy_end || why="${why:+$why; }gotracectl record exited non-zero at SIGINT: $(tail -2 "$GT_TMP/$tag.rec.err")"
	mapfile -t got < <(files "$GT_TMP/$tag")
	[ "${#got[@]}" = 1 ] || why="${why:+$why; }${#got[@]} files, want 1: ${got[*]}"
	if [ -z "$why" ]; then
		f=$GT_TMP/$tag/${got[0]}
		[ "$(head -c 16 "$f" | tr -d '\0')" = "go 1.23 trace" ] ||
			why="not a go 1.23 trace: $(head -c 16 "$f" | od -c | head -1)"
		gt_valid "$name" "$f" || return
		# Go 1.23's reader: a Sync event opens each generation
		gens=$("$GT_GO123" tool trace -d=1 "$f" 2>/dev/null | grep -c '^M=-1 P=-1 G=-1 Sync ')
		[ "${gens:-0}" -ge 2 ] ||
			why="${why:+$why; }Go 1.23 reads ${gens:-0} generation(s) in a 3 s window, want 2 or more"
	fi
	gt_report "$name" "$why"
}
v2_sigusr1

# ring_rss PID: the largest RSS (KiB) of a BPF map PID has mapped (a ring)
ring_rss() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { bpf = ($6 == "anon_inode:bpf-map") }
	     bpf && $1 == "Rss:" && $2 > max { max = $2 } END { print max + 0 }' "/proc/$1/smaps"
}

idle_memory() {
	local name=flight_idle_memory tag=idle why="" rss anon
	mkdir -p "$GT_TMP/$tag"
	if ! gt_start_workload "$tag" "$WL/sleeper" --wait 100000 10000; then
		fail "$name" "sleeper did not start"
		return
	fi
	if ! gt_record_bg "$tag" --flight=2s --ring-size 1M -p "$WL_PID" -o "$GT_TMP/$tag/fl.trace"; then
		fail "$name" "gotracectl record did not start: $(tail -3 "$GT_TMP/$tag.rec.err")"
		return
	fi
	gt_go "$tag"
	sleep 1
	rss=$(ring_rss "$REC_PID")
	# a 1 MiB ring and its producer page: 1028 KiB; mapped twice, 2052
	[ "$rss" -ge 1024 ] && [ "$rss" -le 1036 ] ||
		why="a 1 MiB ring takes $rss KiB of the recorder's RSS, want 1028"
	anon=$(awk '$1 == "RssAnon:" { print $2 }' "/proc/$REC_PID/status")
	if ! grep -q libasan "/proc/$REC_PID/maps" && [ "${anon:-0}" -gt $((32 << 10)) ]; then
		why="${why:+$why; }an idle recorder holds $((anon >> 10)) MiB of heap, want <= 32"
	fi
	dump_now "$tag" 1 || why="${why:+$why; }no file after SIGUSR1"
	busy_end || why="${why:+$why; }gotracectl record exited non-zero: $(tail -2 "$GT_TMP/$tag.rec.err")"
	[ -z "$why" ] && { valid_all "$name" "$GT_TMP/$tag" || return; }
	gt_report "$name" "$why"
}
idle_memory

gt_finish
