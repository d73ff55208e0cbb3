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
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

CASES="identity_json identity_report identity_go119 identity_go123 report_json_stacks report_top_stacks"
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
n=$("$GTCTL" report --top 5 "$t" | sed -n '/^Top off-CPU stacks/,/^$/p' | sed -n '/^  sleep:/,/^  [a-z]*:/p' | grep -c ' stops of G')
[ "$n" = 5 ] && ok report_top_stacks || fail report_top_stacks "--top 5 shows $n sleep stacks, want 5"

# missing_goids PAGE: the python3 tids the page does not link as goid=TID
missing_goids() {
	local tid miss=""
	for tid in $tids; do
		grep -q "goid=$tid\b" "$1" || miss="$miss $tid"
	done
	echo "$miss"
}

# Go 1.19: one python3 group (by start PC), its page lists every thread
if gt_serve_trace go "$t" "$GT_TMP/v119.log" 600; then
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
gt_finish
