#!/usr/bin/env bash
# record_v2write.sh: `record --go-version 1.22|1.23` writes Go's v2 format
# natively (docs/format.md, "Recording v2"), held to Go's readers, to our
# analysis, to a v1 recording of the same threads, and to /proc:
#
#  v2write_demo_1.23, _1.22  the demo (`record -- CMD`) recorded in each
#        format: Go 1.22/1.23's parsers and Go 1.23's viewer pages accept it
#        (gocheck.sh), inspect says valid and names every demo thread
#        (renamed after clone: named at the generation's end).
#  v2write_counts  for each of those two files, the events its record
#        summary says ("recorded N threads, E events") are the events
#        `inspect` counts in it (the summary counted the translator's v1
#        events: 419109 against inspect's 691839 for one file).
#  v2write_agree  the pingpong workload over a futex, strict (one CPU),
#        recorded at the same time by a v1 recorder and a 1.23 one: per
#        thread the two traces' starts and blocks by reason agree (3 + 2%),
#        and the 1.23 trace's starts match /proc's switches (3 + 2%).
#  v2write_server  memcached (4 workers, 127.0.0.1) under a burst of load,
#        recorded by a v1 and a 1.23 recorder at once: both valid, and per
#        worker thread the starts agree (5 + 2%: the recorders attach a few
#        ms apart; the timer-driven helpers are not compared).
#  v2write_sigkill  a 1.23 recording killed with SIGKILL while the demo
#        runs: FILE.partial is left, ends at a whole generation, and Go
#        1.23 reads it to its end (-d=1 exits 0, gocheck.sh passes); FILE is
#        not created.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

CASES="v2write_demo_1.23 v2write_demo_1.22 v2write_counts v2write_agree v2write_server v2write_sigkill"
# shellcheck disable=SC2086
gt_require_bpf $CASES
# shellcheck disable=SC2086
gt_expect $CASES
# the versions are this test's own, whatever GT_GO_VERSION says
CTL=${GT_REAL_GTCTL:-$GTCTL}

# --- the demo, both versions ---------------------------------------------
for v in 1.23 1.22; do
	f=$GT_TMP/demo$v.trace
	if ! timeout 120 "$CTL" record --go-version $v -o "$f" -- "$WL/demo" \
		>"$GT_TMP/demo$v.out" 2>"$GT_TMP/demo$v.rec.err"; then
		fail v2write_demo_$v "record --go-version $v failed: $(tail -3 "$GT_TMP/demo$v.rec.err")"
		continue
	fi
	if ! head -c 16 "$f" | grep -qa "go $v trace"; then
		fail v2write_demo_$v "not a go $v trace: $(head -c 16 "$f" | od -c | head -1)"
		continue
	fi
	gt_valid v2write_demo_$v "$f" &&
		gt_truth v2write_demo_$v names "$f.json" worker-0 worker-1 worker-2 worker-3 \
			spinner-0 spinner-1 spinner-2 ping pong sleeper reader &&
		ok v2write_demo_$v
done
why=""
for v in 1.23 1.22; do
	[ -s "$GT_TMP/demo$v.trace.json" ] || { why="${why:+$why; }no valid $v file"; continue; }
	said=$(sed -n 's/.*recorded [0-9]* threads, \([0-9]*\) events,.*/\1/p' "$GT_TMP/demo$v.rec.err")
	read -r counted < <(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["events"])' \
		"$GT_TMP/demo$v.trace.json")
	[ -n "$said" ] && [ "$said" = "$counted" ] ||
		why="${why:+$why; }go $v: the summary says ${said:-?} events, inspect counts ${counted:-?}"
done
gt_report v2write_counts "$why"

# --- two recorders of the same threads ----------------------------------
# rec2 TAG: records $WL_PID with v1 and 1.23 at once; R1/R2 their pids.
rec2() {
	local tag=$1
	if ! GTCTL=$CTL gt_record_bg "${tag}_v1" -p "$WL_PID" -o "$GT_TMP/${tag}_v1.trace"; then
		echo "v1 recorder did not start: $(tail -3 "$GT_TMP/${tag}_v1.rec.err")"
		return 1
	fi
	R1=$REC_PID
	if ! GTCTL=$CTL gt_record_bg "${tag}_v2" --go-version 1.23 -p "$WL_PID" \
		-o "$GT_TMP/${tag}_v2.trace"; then
		echo "1.23 recorder did not start: $(tail -3 "$GT_TMP/${tag}_v2.rec.err")"
		return 1
	fi
	R2=$REC_PID
}

stop2() {
	local rc1 rc2
	REC_PID=$R1 gt_stop_record INT; rc1=$?
	REC_PID=$R2 gt_stop_record INT; rc2=$?
	[ "$rc1" = 0 ] && [ "$rc2" = 0 ]
}

# agree INSPECT1 INSPECT2 TIDS ABS REL [blocks]: per thread, starts (and
# blocks by reason) of two inspect --json outputs within ABS + REL.
agree() {
	python3 - "$@" <<'PY'
import json, sys
a, b, tids, ab, rel = sys.argv[1:6]
kinds = len(sys.argv) > 6
def by_tid(p):
    return {g["tid"]: g for g in json.load(open(p))["goroutines"] if "tid" in g}
x, y = by_tid(a), by_tid(b)
bad = 0
for t in [int(t) for t in tids.split(",") if t]:
    if t not in x or t not in y:
        print(f"  tid {t}: in v1 {t in x}, in v2 {t in y}"); bad = 1; continue
    pairs = [("starts", x[t]["starts"], y[t]["starts"])]
    if kinds:
        pairs += [(k, x[t]["blocks"][k], y[t]["blocks"].get(k, 0)) for k in x[t]["blocks"]]
    for name, u, v in pairs:
        tol = float(ab) + float(rel) * max(u, v)
        flag = "" if abs(u - v) <= tol else "  <-- MISMATCH"
        print(f"  tid {t} ({x[t]['name']}) {name}: v1 {u} v2 {v}{flag}")
        bad |= bool(flag)
sys.exit(bad)
PY
}

N=3000
tag=pp
if ! gt_start_workload $tag "$WL/pingpong" --wait $N strict futex; then
	fail v2write_agree "the pingpong workload did not start"
elif ! gt_wait_parked "$WL_PID"; then
	fail v2write_agree "the workload's threads never all slept"
	gt_leave $tag; gt_leave $tag
else
	$TRUTH snap "$WL_PID" "$GT_TMP/$tag.before"
	if ! rec2 $tag >"$GT_TMP/$tag.why"; then
		fail v2write_agree "$(cat "$GT_TMP/$tag.why")"
		gt_leave $tag; gt_leave $tag
	else
		gt_go $tag
		gt_wait_line $tag '^done' 60 && gt_wait_parked "$WL_PID"
		stop2; rc=$?
		$TRUTH snap "$WL_PID" "$GT_TMP/$tag.after"
		gt_leave $tag
		wait "$WL_PID"
		tids=$(gt_tids $tag)
		if [ $rc != 0 ]; then
			fail v2write_agree "a recorder failed: $(tail -2 "$GT_TMP/${tag}_v1.rec.err" "$GT_TMP/${tag}_v2.rec.err")"
		elif gt_valid v2write_agree "$GT_TMP/${tag}_v1.trace" &&
			gt_valid v2write_agree "$GT_TMP/${tag}_v2.trace"; then
			if ! out=$(agree "$GT_TMP/${tag}_v1.trace.json" "$GT_TMP/${tag}_v2.trace.json" \
				"$tids" 3 0.02 blocks); then
				fail v2write_agree "v1 and 1.23 traces of the same threads disagree"
				echo "$out" | detail
			elif gt_truth v2write_agree switches "$GT_TMP/$tag.before" "$GT_TMP/$tag.after" \
				"$GT_TMP/${tag}_v2.trace.json" "$tids" 3 0.02; then
				ok v2write_agree
			fi
		fi
	fi
fi

# --- a real server --------------------------------------------------------
PORT=$(( (RANDOM % 20000) + 20000 ))
if ! command -v memcached >/dev/null; then
	fail v2write_server "memcached is not installed (make deps)"
else
	memcached -u memcache -l 127.0.0.1 -p "$PORT" -U 0 -t 4 >"$GT_TMP/mc.log" 2>&1 &
	MC=$!
	gt_pids+=("$MC")
	for _ in $(seq 1 100); do
		python3 tests/servers/mc_load.py "$PORT" 1 1 2>/dev/null && break
		sleep 0.1
	done
	WL_PID=$MC
	if ! python3 tests/servers/mc_load.py "$PORT" 1 1; then
		fail v2write_server "memcached did not start: $(tail -3 "$GT_TMP/mc.log")"
	elif ! rec2 mc >"$GT_TMP/mc.why"; then
		fail v2write_server "$(cat "$GT_TMP/mc.why")"
	else
		sleep 0.5
		timeout 60 python3 tests/servers/mc_load.py "$PORT" 4 2000 >"$GT_TMP/mc.load" 2>&1
		sleep 0.5
		stop2; rc=$?
		# the workers, which switch in the burst only (the timer-driven
		# helpers also switch in the recorders' idle edges, a few ms apart)
		tids=$(grep -l mc-worker /proc/$MC/task/*/comm | cut -d/ -f5 | paste -sd,)
		if [ $rc != 0 ]; then
			fail v2write_server "a recorder failed: $(tail -2 "$GT_TMP/mc_v1.rec.err" "$GT_TMP/mc_v2.rec.err")"
		elif gt_valid v2write_server "$GT_TMP/mc_v1.trace" &&
			gt_valid v2write_server "$GT_TMP/mc_v2.trace"; then
			if ! out=$(agree "$GT_TMP/mc_v1.trace.json" "$GT_TMP/mc_v2.trace.json" \
				"$tids" 5 0.02); then
				fail v2write_server "v1 and 1.23 traces of memcached disagree"
				echo "$out" | detail
			else
				ok v2write_server
			fi
		fi
	fi
	kill "$MC" 2>/dev/null
fi

# --- SIGKILL --------------------------------------------------------------
f=$GT_TMP/killed.trace
"$CTL" record --go-version 1.23 -o "$f" -- "$WL/demo" >"$GT_TMP/killed.out" \
	2>"$GT_TMP/killed.rec.err" &
K=$!
gt_pids+=("$K")
# the demo runs 3 s; a generation ends every second: wait for the first
for _ in $(seq 1 600); do
	[ "$(stat -c %s "$f.partial" 2>/dev/null || echo 0)" -gt 4096 ] && break
	sleep 0.05
done
sleep 0.3
kill -KILL "$K"
wait "$K" 2>/dev/null
sleep 3.5 # the demo, left alone, ends
if [ -e "$f" ]; then
	fail v2write_sigkill "$f exists after a SIGKILL"
elif [ ! -s "$f.partial" ]; then
	fail v2write_sigkill "no $f.partial after a SIGKILL (ls: $(ls "$GT_TMP" | head))"
elif ! out=$("$GT_GO123" tool trace -d=1 "$f.partial" 2>&1 >/dev/null); then
	fail v2write_sigkill "Go 1.23 does not read the partial trace to its end"
	echo "$out" | tail -5 | detail
else
	cp "$f.partial" "$GT_TMP/killed_cut.trace"
	echo "# killed: $(stat -c %s "$f.partial") bytes, $("$CTL" inspect "$GT_TMP/killed_cut.trace" | grep generations)"
	gt_valid v2write_sigkill "$GT_TMP/killed_cut.trace" && ok v2write_sigkill
fi

gt_finish
