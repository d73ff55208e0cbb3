#!/usr/bin/env bash
# report_answers.sh: `report` names each figure by the tool whose definition
# it follows, and answers where a wait came from (issue 37).
#  - report_split: the scheduling delay is split into wakeup delay (woken ->
#    running: perf sched timehist's "sch delay") and preemption delay
#    (preempted or yielded -> running); their counts add up to the
#    run-queue latency's (runqlat's), the larger maximum is its maximum,
#    runqlat's histogram counts every one of them, and the text's headers
#    say which tool each follows.
#  - report_waits: a "Longest single waits" table with a stack per row, in
#    the text and the JSON (longest first; the first is the longest
#    off-CPU wait of any thread).
#  - report_stacks_grouped: mutex's 4 workers block in one stack: the top
#    off-CPU stacks show it once, summed, with its thread count (text and
#    JSON), never once per thread.
#  - report_inspect_names: blockread's reader blocks in read(): report files
#    those waits under "syscall", and `inspect --goroutines` shows the same
#    counts under the same names (it said "sync" for them).
#  - report_libc_hint: nofp_sleep's io thread sleeps in nanosleep from code
#    without frame pointers: its stack ends in libc, and the text says that
#    --call-graph=dwarf brings the callers back (JSON: ends_in_libc).
#  - report_go_json: a merged file (gotracectl merge of the fuzzer's seed,
#    a Go server's runtime trace and a recording of it): --json has the
#    text's table of the kernel inside the goroutines, per goroutine and
#    per thread, row for row (report_go_json.py; it had neither).
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

gt_expect report_split report_waits report_stacks_grouped report_libc_hint report_inspect_names report_go_json
gt_require_bpf report_split report_waits report_stacks_grouped report_libc_hint report_inspect_names report_go_json

# report_go_json first: it needs no recording (the merge of a file pair)
python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack("<I", d[:4])[0]
open(sys.argv[2], "wb").write(d[4:4 + n])
open(sys.argv[3], "wb").write(d[4 + n:])' tests/fuzz/seeds/gomerge/server_idle "$GT_TMP/rt.trace" "$GT_TMP/k.trace"
mg=$GT_TMP/merged.trace
if ! out=$("${GT_REAL_GTCTL:-$GTCTL}" merge "$GT_TMP/rt.trace" "$GT_TMP/k.trace" -o "$mg" 2>&1); then
	fail report_go_json "merge of the seed failed: ${out:0:300}"
elif ! "$GTCTL" report "$mg" >"$mg.txt" 2>&1 || ! "$GTCTL" report --json "$mg" >"$mg.json" 2>&1; then
	fail report_go_json "report of the merged file failed: $(tail -2 "$mg.txt" "$mg.json")"
elif out=$(python3 tests/integration/report_go_json.py "$mg.txt" "$mg.json" kernel); then
	ok report_go_json
	echo "# $out"
else
	fail report_go_json "$out"
fi

m=$GT_TMP/mutex.trace
if ! "$GTCTL" record -o "$m" -- "$WL/mutex" >/dev/null 2>"$GT_TMP/mutex.err"; then
	fail report_split "record -- mutex failed: $(tail -3 "$GT_TMP/mutex.err")"
	gt_finish
fi
gt_valid report_split "$m" || gt_finish
"$GTCTL" report "$m" >"$GT_TMP/m.txt" 2>&1 || fail report_split "report failed: $(tail -3 "$GT_TMP/m.txt")"
"$GTCTL" report --json "$m" >"$GT_TMP/m.json" || fail report_split "report --json failed"

if out=$(python3 - "$GT_TMP/m.json" "$GT_TMP/m.txt" <<'PY'
import json, sys
rep, txt = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
errs = []
for h in ('Wakeup delay (woken -> running: perf sched timehist\'s "sch delay"',
          "Preemption delay (preempted or yielded",
          "Run-queue latency (runqlat's: wakeup delay + preemption delay)",
          "Run-queue latency histogram"):
    if h not in txt:
        errs.append("no header %r" % h)
n = p = 0
for t in rep["threads"]:
    s, w, q = t["sched"], t.get("wakeup_delay"), t.get("preempt_delay")
    if w is None or q is None:
        errs.append("thread %s: no wakeup_delay / preempt_delay" % t["name"])
        continue
    if w["count"] + q["count"] != s["count"]:
        errs.append("%s: %d wakeup + %d preemption delays != %d" % (t["name"], w["count"], q["count"], s["count"]))
    if max(w["max_ns"], q["max_ns"]) != s["max_ns"]:
        errs.append("%s: max %d, %d vs run-queue %d" % (t["name"], w["max_ns"], q["max_ns"], s["max_ns"]))
    n += s["count"]
    p += q["count"]
h = sum(b["count"] for b in rep.get("runqlat_usecs", []))
if h != n:
    errs.append("runqlat histogram holds %d, the threads %d delays" % (h, n))
if not p:
    errs.append("no preemption delay at all (mutex's workers are preempted)")
print("%d delays, %d after a preemption" % (n, p))
sys.exit("; ".join(errs) if errs else 0)
PY
); then
	ok report_split
	echo "# $out"
else
	fail report_split "$out"
fi

if out=$(python3 - "$GT_TMP/m.json" "$GT_TMP/m.txt" <<'PY'
import json, sys
rep, txt = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
w = rep.get("longest_waits")
if not w:
    sys.exit("no longest_waits in the JSON")
if [x["wait_ns"] for x in w] != sorted((x["wait_ns"] for x in w), reverse=True):
    sys.exit("longest_waits not longest first")
if not w[0]["frames"]:
    sys.exit("the longest wait has no stack")
if any(x["stop_ns"] + x["wait_ns"] != x["start_ns"] for x in w):
    sys.exit("a wait's stop + wait != start")
# the longest: at least any thread's whole off-CPU time of one stop can be
sec = txt.split("Longest single waits", 1)
if len(sec) != 2:
    sys.exit("no 'Longest single waits' table in the text")
body = sec[1].split("\n\n", 1)[0]
if w[0]["frames"][0]["func"] and w[0]["frames"][0]["func"] not in body:
    sys.exit("the text's table does not show the longest wait's stack (%s)" % w[0]["frames"][0]["func"])
print("longest %.1f ms (%s, %s)" % (w[0]["wait_ns"] / 1e6, w[0]["reason"], w[0]["name"]))
PY
); then
	ok report_waits
	echo "# $out"
else
	fail report_waits "$out"
fi

if out=$(python3 - "$GT_TMP/m.json" "$GT_TMP/m.txt" <<'PY'
import json, sys
rep, txt = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
seen, multi = set(), 0
for s in rep["offcpu_stacks"]:
    key = (s["reason"], tuple((f["func"], f["file"], f["line"]) for f in s["frames"]))
    if key in seen:
        sys.exit("one %s stack shown twice (once per thread): %s" % (s["reason"], key[1][:2]))
    seen.add(key)
    multi = max(multi, s.get("threads", 0))
if multi < 2:
    sys.exit("no off-CPU stack of more than one thread (mutex's 4 workers share one)")
if " stops of %d threads" % multi not in txt:
    sys.exit("the text does not say the thread count %d" % multi)
print("a stack of %d threads" % multi)
PY
); then
	ok report_stacks_grouped
	echo "# $out"
else
	fail report_stacks_grouped "$out"
fi

n=$GT_TMP/nofp.trace
if ! "$GTCTL" record -o "$n" -- "$WL/nofp_sleep" 20 2000 >/dev/null 2>"$GT_TMP/nofp.err"; then
	fail report_libc_hint "record -- nofp_sleep failed: $(tail -3 "$GT_TMP/nofp.err")"
elif gt_valid report_libc_hint "$n"; then
	"$GTCTL" report "$n" >"$GT_TMP/n.txt" 2>&1
	j=$("$GTCTL" report --json "$n" | python3 -c 'import json, sys
print(any(s.get("ends_in_libc") for s in json.load(sys.stdin)["offcpu_stacks"] if s["reason"] == "sleep"))')
	if ! grep -q "record --call-graph=dwarf brings them back" "$GT_TMP/n.txt"; then
		fail report_libc_hint "no --call-graph=dwarf hint under a stack that ends in nanosleep"
	elif [ "$j" != True ]; then
		fail report_libc_hint "the JSON's sleep stack is not ends_in_libc ($j)"
	else
		ok report_libc_hint
	fi
fi
b=$GT_TMP/blockread.trace
if ! "$GTCTL" record -o "$b" -- "$WL/blockread" >/dev/null 2>"$GT_TMP/br.err"; then
	fail report_inspect_names "record -- blockread failed: $(tail -3 "$GT_TMP/br.err")"
elif gt_valid report_inspect_names "$b"; then
	"$GTCTL" inspect --goroutines "$b" >"$GT_TMP/br.ins" 2>&1
	"$GTCTL" report --json "$b" >"$GT_TMP/br.json"
	if out=$(python3 - "$GT_TMP/br.ins" "$GT_TMP/br.json" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
head = next((l.split() for l in lines if l.startswith("id ")), None)
if not head:
    sys.exit("no goroutine table in inspect --goroutines")
rows = {l.split()[1]: dict(zip(head, l.split())) for l in lines
        if l.split() and l.split()[0].isdigit() and len(l.split()) >= len(head)}
rep = {t["name"]: t["offcpu_count"] for t in json.load(open(sys.argv[2]))["threads"]}
if "reader" not in rows or "reader" not in rep:
    sys.exit("no reader thread (inspect %s, report %s)" % (sorted(rows), sorted(rep)))
if not rep["reader"]["syscall"]:
    sys.exit("report files none of reader's waits under syscall: %s" % rep["reader"])
bad = [(r, rows["reader"].get(r), n) for r, n in rep["reader"].items() if str(n) != rows["reader"].get(r)]
if bad:
    sys.exit("reader: inspect --goroutines vs report, by reason: %s" % bad)
print("reader: %s" % {k: v for k, v in rep["reader"].items() if v})
PY
	); then
		ok report_inspect_names
		echo "# $out"
	else
		fail report_inspect_names "$out"
	fi
fi
gt_finish
