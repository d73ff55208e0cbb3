#!/usr/bin/env bash
# record_identity.sh: threads that share a name are told apart everywhere.
#
# A python3 pool of 6 threads (all comm "python3", as the main thread) is
# recorded; each goroutine's id is its thread's TID, so that:
#  - report --json: every python3 thread's id is its tid, all distinct;
#  - report: --thread TID selects it and its G column is the TID;
#  - Go 1.19's Goroutines page keeps one python3 group, whose page links
#    every thread by its TID (goid=TID);
#  - Go 1.23's Goroutines page keeps one python3 group, whose page links
#    every thread by its TID;
#  - report --json carries the off-CPU stacks (frames, tid), and --top N
#    governs the stacks per reason (5 sleep stacks of the 6 sleepers).
#  - threads that never run during a recording (a shell in wait, its two
#    sleeping children, a process of 4 threads in pause) are named on Go
#    1.23's Goroutines page too, none "(Inactive, no stack trace sampled)",
#    and report counts no start for the 0 ns run that names them;
#  - Go 1.23's M (thread view rows, -d=1's M=) is one per CPU, 10^9 + the
#    P, never the TID of whichever thread started that CPU's P; in a Go
#    1.22+ file (GT_GO_VERSION) M is the thread itself: a goroutine's
#    events are on its own TID's M.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

CASES="identity_json identity_report identity_go119 identity_go123 report_json_stacks report_top_stacks
identity_idle_go123 identity_idle_report identity_m_per_cpu"
# shellcheck disable=SC2086
gt_require_bpf $CASES
# shellcheck disable=SC2086
gt_expect $CASES

t=$GT_TMP/pool.trace
if ! "$GTCTL" record -q -d 2s -o "$t" -- /usr/bin/python3 -c '
import threading, time
def work():
    for _ in range(100):
        time.sleep(0.005)
pool = [threading.Thread(target=work) for _ in range(6)]
for th in pool: th.start()
for th in pool: th.join()' 2>"$GT_TMP/pool.err"; then
	for c in $CASES; do fail $c "record failed: $(tail -3 "$GT_TMP/pool.err")"; done
	gt_finish
fi
gt_valid identity_json "$t" || gt_finish

"$GTCTL" report --json "$t" >"$GT_TMP/pool.json"
tids=$(python3 -c 'import json,sys; print(" ".join(str(x["tid"]) for x in json.load(open(sys.argv[1]))["threads"] if x["name"] == "python3"))' "$GT_TMP/pool.json")
why=$(python3 -c 'import json,sys
ts = [x for x in json.load(open(sys.argv[1]))["threads"] if x["name"] == "python3"]
bad = [(x["id"], x["tid"]) for x in ts if x["id"] != x["tid"]]
if len(ts) < 7: print("%d python3 threads, want 7" % len(ts))
elif len({x["tid"] for x in ts}) != len(ts): print("tids not distinct")
elif bad: print("goroutine ids are not tids: %s" % bad)' "$GT_TMP/pool.json")
gt_report identity_json "$why"

tid=${tids##* }
if "$GTCTL" report --thread "$tid" "$t" >"$GT_TMP/one.out" 2>&1 &&
	grep -Eq "^  $tid +python3 " "$GT_TMP/one.out"; then
	ok identity_report
else
	fail identity_report "--thread $tid: $(head -6 "$GT_TMP/one.out")"
fi

why=$(python3 -c 'import json,sys
s = json.load(open(sys.argv[1])).get("offcpu_stacks")
if not s: print("no offcpu_stacks")
elif not any(x["reason"] == "sleep" and x["tid"] and any(f["func"] for f in x["frames"]) for x in s):
    print("no sleep stack with a tid and named frames: %s" % s[:2])' "$GT_TMP/pool.json")
gt_report report_json_stacks "$why"
# one row per stack, however many threads stopped there: --top 5 shows 5
# sleep stacks, or all of them if fewer
n=$("$GTCTL" report --top 5 "$t" | sed -n '/^Top off-CPU stacks/,/^$/p' | sed -n '/^  sleep:/,/^  [a-z]*:/p' | grep -c ' stops of ')
all=$("$GTCTL" report --json --top 0 "$t" | python3 -c 'import json, sys
print(sum(s["reason"] == "sleep" for s in json.load(sys.stdin)["offcpu_stacks"]))')
want=$((all < 5 ? all : 5))
[ "$n" = "$want" ] && [ "$want" -gt 0 ] && ok report_top_stacks ||
	fail report_top_stacks "--top 5 shows $n sleep stacks, want $want (of $all)"

# missing_goids PAGE: the python3 tids the page does not link as goid=TID
missing_goids() {
	local tid miss=""
	for tid in $tids; do
		grep -q "goid=$tid\b" "$1" || miss="$miss $tid"
	done
	echo "$miss"
}

# Go 1.19: one python3 group (by start PC), its page lists every thread.
# A Go 1.22+ file (GT_GO_VERSION) is read by no Go before 1.22: there the
# oldest Go that reads its version serves it (1.22 for a 1.22 file; a 1.23
# file only by 1.23, as identity_go123), its page checked the same way.
old_go=go
if gt_v2 "$t"; then
	old_go=$GT_GO123
	head -c 16 "$t" | grep -qa "go 1.22 trace" && old_go=$GT_GO122
	echo "# identity_go119: a $(head -c 13 "$t") file: Go 1.19 reads none, $old_go serves it"
fi
if [ "$old_go" != go ] && gt_serve_trace "$old_go" "$t" "$GT_TMP/v119.log" 0; then
	curl -s --max-time 600 -o "$GT_TMP/g119.html" "http://127.0.0.1:$gt_port/goroutines"
	groups=$(grep -c 'goroutine?name=python3"' "$GT_TMP/g119.html")
	curl -s --max-time 600 -o "$GT_TMP/g119p.html" "http://127.0.0.1:$gt_port/goroutine?name=python3"
	kill "$gt_server" 2>/dev/null; wait "$gt_server" 2>/dev/null
	miss=$(missing_goids "$GT_TMP/g119p.html")
	if [ "$groups" != 1 ]; then
		fail identity_go119 "$groups python3 groups on $old_go's /goroutines, want 1"
	else
		gt_report identity_go119 "${miss:+the python3 group page lacks goid=TID for$miss}"
	fi
elif [ "$old_go" != go ]; then
	fail identity_go119 "$old_go tool trace did not serve: $(tail -3 "$GT_TMP/v119.log")"
elif gt_serve_trace go "$t" "$GT_TMP/v119.log" 600; then
	curl -s --max-time 120 -o "$GT_TMP/g119.html" "http://127.0.0.1:$gt_port/goroutines"
	groups=$(grep -c '>python3<' "$GT_TMP/g119.html")
	link=$(grep -o '/goroutine?id=[0-9]*">python3<' "$GT_TMP/g119.html" | head -1 | cut -d'"' -f1)
	curl -s --max-time 120 -o "$GT_TMP/g119p.html" "http://127.0.0.1:$gt_port$link"
	kill "$gt_server" 2>/dev/null; wait "$gt_server" 2>/dev/null
	miss=$(missing_goids "$GT_TMP/g119p.html")
	if [ "$groups" != 1 ]; then
		fail identity_go119 "$groups python3 groups on /goroutines, want 1"
	else
		gt_report identity_go119 "${miss:+the python3 group page lacks goid=TID for$miss}"
	fi
else
	fail identity_go119 "go tool trace did not serve: $(tail -3 "$GT_TMP/v119.log")"
fi

# Go 1.23: one python3 group (by name), its page lists every thread
if gt_serve_trace "$GT_GO123" "$t" "$GT_TMP/v123.log" 0; then
	curl -s --max-time 600 -o "$GT_TMP/g123.html" "http://127.0.0.1:$gt_port/goroutines"
	groups=$(grep -c 'goroutine?name=python3"' "$GT_TMP/g123.html")
	curl -s --max-time 600 -o "$GT_TMP/g123p.html" "http://127.0.0.1:$gt_port/goroutine?name=python3"
	kill "$gt_server" 2>/dev/null; wait "$gt_server" 2>/dev/null
	miss=$(missing_goids "$GT_TMP/g123p.html")
	if [ "$groups" != 1 ]; then
		fail identity_go123 "$groups python3 groups on /goroutines, want 1"
	else
		gt_report identity_go123 "${miss:+the python3 group page lacks goid=TID for$miss}"
	fi
else
	fail identity_go123 "Go 1.23's go tool trace did not serve: $(tail -3 "$GT_TMP/v123.log")"
fi

# --- threads idle for the whole recording, in three processes ----------------
bash -c 'sleep 1000 & sleep 1000 & wait' >/dev/null 2>&1 & sh_pid=$!
gt_pids+=("$sh_pid")
"$WL/idle_threads" 4 >"$GT_TMP/idle.out" 2>&1 </dev/null & idle_pid=$!
gt_pids+=("$idle_pid")
for _ in $(seq 1 100); do
	[ "$(pgrep -P "$sh_pid" | wc -l)" -ge 2 ] && grep -q ready "$GT_TMP/idle.out" && break
	sleep 0.05
done
kids=$(pgrep -P "$sh_pid" | paste -sd,)
for k in ${kids//,/ }; do gt_pids+=("$k"); done
it=$GT_TMP/idle.trace
if ! "$GTCTL" record -q -p "$sh_pid,$kids,$idle_pid" -d 1s -o "$it" 2>"$GT_TMP/idle.err"; then
	for c in identity_idle_go123 identity_idle_report; do fail $c "record failed: $(tail -3 "$GT_TMP/idle.err")"; done
elif gt_valid identity_idle_go123 "$it"; then
	if gt_serve_trace "$GT_GO123" "$it" "$GT_TMP/vidle.log" 0; then
		curl -s --max-time 600 -o "$GT_TMP/idle123.html" "http://127.0.0.1:$gt_port/goroutines"
		kill "$gt_server" 2>/dev/null; wait "$gt_server" 2>/dev/null
		why=$(python3 -c 'import re,sys; h=open(sys.argv[1]).read()
groups = dict(re.findall(r"goroutine\?name=[^\x22]*\x22>([^<]*)</a></code></td>\s*<td>(\d+)</td>", h))
if not groups: print("no group on /goroutines")
elif "(Inactive, no stack trace sampled)" in groups: print("%s threads Inactive: %s" % (groups["(Inactive, no stack trace sampled)"], groups))
elif groups.get("idle_threads") != "4": print("want 4 idle_threads, groups: %s" % groups)
elif not any(k.startswith("sleep") for k in groups) or not any(k.startswith("bash") for k in groups): print("no sleep or bash group: %s" % groups)' "$GT_TMP/idle123.html")
		gt_report identity_idle_go123 "$why"
	else
		fail identity_idle_go123 "Go 1.23's go tool trace did not serve: $(tail -3 "$GT_TMP/vidle.log")"
	fi
	why=$("$GTCTL" report --json "$it" | python3 -c 'import json,sys
busy = [(t["tid"], t["name"], t["sched"]["count"]) for t in json.load(sys.stdin)["threads"] if t["sched"]["count"]]
if busy: print("threads that never ran have scheduling delays (tid, name, count): %s" % busy)')
	gt_report identity_idle_report "$why"
else
	fail identity_idle_report "no valid trace of the idle processes"
fi

# --- Go 1.23's M: 10^9 + the P, on both recordings -------------------------------
# A Go 1.22+ file (GT_GO_VERSION) is written with M = the thread instead
# (docs/format.md, Recording v2): there every event of a goroutine on a
# real M (below 10^9; G 0's work is on the pseudo-M 10^9 + the P) is on
# its own thread's M, the goroutine's id being its TID (or, for a reused
# TID, an id from 2^32).
why=""
for f in "$t" "$it"; do
	[ -s "$f" ] || continue
	rule='m != -1 && m != 1000000000 + p'
	gt_v2 "$f" && rule='m != -1 && m < 1000000000 && g != -1 && g != m && g < 4294967296'
	bad=$(GOTOOLCHAIN=local "$GT_GO123" tool trace -d=1 "$f" 2>&1 |
		awk '/^M=-?[0-9]+ P=-?[0-9]+ G=-?[0-9]+ / { m = substr($1, 3) + 0; p = substr($2, 3) + 0;
			g = substr($3, 3) + 0; if ('"$rule"') { print; exit } }')
	[ -n "$bad" ] && why="$why ${f##*/}: $bad"
done
gt_report identity_m_per_cpu "$why"
gt_finish
