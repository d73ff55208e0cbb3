#!/usr/bin/env bash
# record_v2read.sh: `gotracectl report` and `inspect` on Go 1.22+ (v2)
# traces written by real Go 1.23 programs (runtime/trace), no BPF needed.
#
#  1. v2http (a net/http server on 127.0.0.1 under 4 Go clients) and
#     v2block (goroutines blocking on channels, a mutex, a select, a
#     sync.Cond, sleeps) each write trace.out with runtime/trace.Start/Stop.
#  2. report --json reads them (version 1.23, no anomaly) and its Go 1.23
#     viewer totals equal `go tool trace -pprof=sched|sync|syscall|net` of
#     Go 1.23 on the same file within 2% (profiles_check.py); its
#     scheduling delay per goroutine equals the one computed from
#     `go tool trace -d=1` (v2_sched_check.py).
#     v2http runs with the CPU profiler: report's CPU samples are as many
#     as Go 1.23's StackSample events (-d=1), and --folded=cpu adds up to them.
#  3. v2block's off-CPU stacks name its blocking calls by the v2 block
#     reasons mapped to the legacy ones (chan send -> sync, select, sleep,
#     sync.(*Cond).Wait -> sync).
#  4. inspect: valid (exit 0) with the summary; a cut file and an unknown
#     event type are invalid (exit 1) naming the rule.
#  5. Go's own v2 test traces (src/internal/trace/testdata/tests, text
#     dumps written back to binary by tests/lib/v2raw.py): inspect says
#     valid for every one Go expects to succeed (the one whose timestamps
#     contradict its sequence numbers included); report never fails on a
#     valid one.
#     Two of them with a P's sequence number broken (a ProcSteal at 3
#     where the P is at 1, a GoSyscallBegin at 2 where it is at 0): Go
#     1.23 refuses both, and inspect says invalid naming "P sequence".
#  6. v2block built with Go 1.22 writes a "go 1.22 trace": Go 1.22's own
#     parser reads it, report reads it (version 1.22, no anomaly), its Go
#     1.23 viewer totals equal Go 1.23's -pprof totals, inspect says valid.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

gt_expect v2read_build v2read_http_report v2read_http_profiles v2read_http_delays v2read_cpu_samples \
	v2read_block_report v2read_block_profiles v2read_block_delays v2read_block_stacks \
	v2read_inspect v2read_inspect_invalid v2read_go_testdata v2read_inspect_pseq v2read_go122 \
	v2read_go122_profiles

GO=$GT_GO123
[ -x "$GTCTL" ] || { fail v2read_build "$GTCTL not built"; gt_finish; }
[ -x "$GO" ] || { fail v2read_build "Go 1.23 not installed at $GO"; gt_finish; }
dir=$GT_BUILD/go-v2read
mkdir -p "$dir"
built=1
for p in v2http v2block; do
	if ! (export GOCACHE=$PWD/$dir/cache GOPATH=$PWD/$dir/gopath GO111MODULE=off GOFLAGS= \
		CGO_ENABLED=0 && "$GO" build -o "$dir/$p" "tests/workloads/go/$p/main.go") \
		>"$GT_TMP/build.log" 2>&1; then
		fail v2read_build "go build $p failed: $(tail -3 "$GT_TMP/build.log")"
		built=0
	elif ! "$dir/$p" "$GT_TMP/$p.trace" >"$GT_TMP/$p.out" 2>&1; then
		fail v2read_build "$p failed: $(tail -3 "$GT_TMP/$p.out")"
		built=0
	elif [ "$(head -c 13 "$GT_TMP/$p.trace")" != "go 1.23 trace" ]; then
		fail v2read_build "$p wrote no Go 1.23 trace"
		built=0
	fi
done
if [ $built = 0 ]; then
	for c in v2read_http_report v2read_http_profiles v2read_http_delays v2read_cpu_samples v2read_block_report \
		v2read_block_profiles v2read_block_delays v2read_block_stacks v2read_inspect \
		v2read_inspect_invalid; do
		fail $c "no trace (see v2read_build)"
	done
else
	ok v2read_build
fi

# report_ok NAME TRACE MIN_GOROUTINES [VERSION]: report --json reads it, as
# Go VERSION (1.23 unless told).
report_ok() {
	local n=$1 t=$2 min=$3 ver=${4:-1.23} why
	if ! "$GTCTL" report --json --top=0 "$t" >"$GT_TMP/$n.json" 2>"$GT_TMP/$n.err"; then
		fail "$n" "report failed: $(head -2 "$GT_TMP/$n.err")"
		return
	fi
	why=$(python3 - "$GT_TMP/$n.json" "$min" "$ver" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if d["version"] != sys.argv[3]:
    print("version %s, not %s" % (d["version"], sys.argv[3]))
elif d["anomalies"]:
    print("%d anomalies" % d["anomalies"])
elif len(d["threads"]) < int(sys.argv[2]):
    print("%d goroutines, expected at least %s" % (len(d["threads"]), sys.argv[2]))
elif d["events"] < 1000 or d["viewers"]["go1.19"] is not None:
    print("%d events; go1.19 viewer %s" % (d["events"], d["viewers"]["go1.19"]))
PY
)
	gt_report "$n" "$why"
}

# check_script NAME SCRIPT TRACE: a comparison script's verdict.
check_script() {
	if python3 "$2" "$GTCTL" "$3" >"$GT_TMP/$1.out" 2>&1; then
		ok "$1"
	else
		fail "$1" "$(tail -4 "$GT_TMP/$1.out" | tr '\n' ' ')"
	fi
}

if [ $built = 1 ]; then
	report_ok v2read_http_report "$GT_TMP/v2http.trace" 1000
	check_script v2read_http_profiles tests/integration/profiles_check.py "$GT_TMP/v2http.trace"
	check_script v2read_http_delays tests/integration/v2_sched_check.py "$GT_TMP/v2http.trace"
	ours=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cpu_samples"])' \
		"$GT_TMP/v2read_http_report.json" 2>/dev/null)
	theirs=$("$GO" tool trace -d=1 "$GT_TMP/v2http.trace" 2>/dev/null | grep -c '^M=.* StackSample ')
	folded=$("$GTCTL" report --folded=cpu "$GT_TMP/v2http.trace" 2>/dev/null | awk '{s+=$NF} END {print s+0}')
	if [ -z "$ours" ] || [ "$ours" = 0 ] || [ "$ours" != "$theirs" ] || [ "$folded" != "$ours" ]; then
		fail v2read_cpu_samples "report ${ours:-?} samples, folded $folded, go -d=1 $theirs"
	else
		ok v2read_cpu_samples
	fi
	report_ok v2read_block_report "$GT_TMP/v2block.trace" 8
	check_script v2read_block_profiles tests/integration/profiles_check.py "$GT_TMP/v2block.trace"
	check_script v2read_block_delays tests/integration/v2_sched_check.py "$GT_TMP/v2block.trace"

	# the blocking calls, under the legacy reasons the analysis knows
	"$GTCTL" report --top=0 "$GT_TMP/v2block.trace" >"$GT_TMP/block.txt" 2>&1
	why=
	for want in "sync:.*runtime.chansend1" "select:.*runtime.selectgo" "sleep:.*time.Sleep" \
		"sync:.*sync.(\*Cond).Wait"; do
		awk '/^Top off-CPU stacks/{on=1} on' "$GT_TMP/block.txt" |
			awk -v sec="${want%%:*}" '/^  [a-z]+:$/{cur=$1} cur==sec":"' |
			grep -q -- "${want#*:}" || why="$why no ${want%%:*} stack with ${want#*:};"
	done
	gt_report v2read_block_stacks "$why"

	why=
	for p in v2http v2block; do
		"$GTCTL" inspect "$GT_TMP/$p.trace" >"$GT_TMP/$p.insp" 2>&1
		rc=$?
		[ $rc = 0 ] || why="$why $p: exit $rc ($(tail -1 "$GT_TMP/$p.insp"));"
		grep -q "^version: *go 1.23 trace" "$GT_TMP/$p.insp" || why="$why $p: no version line;"
		grep -q "^goroutines: *[1-9]" "$GT_TMP/$p.insp" || why="$why $p: no goroutines;"
		grep -q "^events: *[1-9]" "$GT_TMP/$p.insp" || why="$why $p: no events;"
	done
	gt_report v2read_inspect "$why"

	why=
	head -c 20000 "$GT_TMP/v2http.trace" >"$GT_TMP/cut.trace"
	"$GTCTL" inspect "$GT_TMP/cut.trace" >"$GT_TMP/cut.insp" 2>&1
	rc=$?
	[ $rc = 1 ] || why="$why cut file: exit $rc;"
	grep -q "invalid: .*(rule: batch size)" "$GT_TMP/cut.insp" || why="$why cut file: $(tail -1 "$GT_TMP/cut.insp");"
	# the first event of the first batch made an unknown type (byte 250)
	python3 - "$GT_TMP/v2block.trace" "$GT_TMP/badtype.trace" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = 17  # past the header and the EventBatch byte: four varints
for _ in range(4):
    while b[i] & 0x80:
        i += 1
    i += 1
b[i] = 250
open(sys.argv[2], "wb").write(b)
PY
	"$GTCTL" inspect "$GT_TMP/badtype.trace" >"$GT_TMP/bad.insp" 2>&1
	rc=$?
	[ $rc = 1 ] || why="$why unknown type: exit $rc;"
	grep -q "invalid: .*unknown type 250 (rule: known event types)" "$GT_TMP/bad.insp" ||
		why="$why unknown type: $(tail -1 "$GT_TMP/bad.insp");"
	gt_report v2read_inspect_invalid "$why"
fi

# Go's own v2 test traces
why=
tests=$(ls /usr/lib/go-1.23/src/internal/trace/testdata/tests/*.test 2>/dev/null)
[ -n "$tests" ] || why="no Go test traces under /usr/lib/go-1.23/src/internal/trace/testdata/tests"
for t in $tests; do
	b=$(basename "$t" .test)
	expect=$(python3 tests/lib/v2raw.py "$t" "$GT_TMP/$b.trace") || { why="$why $b: not converted;"; continue; }
	[ "$expect" = SUCCESS ] || continue
	"$GTCTL" inspect "$GT_TMP/$b.trace" >"$GT_TMP/$b.insp" 2>&1 ||
		why="$why $b: $(tail -1 "$GT_TMP/$b.insp");"
	"$GTCTL" report --json "$GT_TMP/$b.trace" >/dev/null 2>"$GT_TMP/$b.err" ||
		why="$why $b: report: $(head -1 "$GT_TMP/$b.err");"
done
gt_report v2read_go_testdata "$why"

# P sequence numbers broken in Go's own steal test
why=
t=/usr/lib/go-1.23/src/internal/trace/testdata/tests/go122-syscall-steal-proc-simple.test
for bad in "s/ProcSteal dt=1 p=0 p_seq=2/ProcSteal dt=1 p=0 p_seq=3/" \
	"s/GoSyscallBegin dt=1 p_seq=1/GoSyscallBegin dt=1 p_seq=2/"; do
	sed "$bad" "$t" >"$GT_TMP/pseq.test"
	if cmp -s "$t" "$GT_TMP/pseq.test"; then
		why="$why '$bad' changed nothing in $t;"
		continue
	fi
	python3 tests/lib/v2raw.py "$GT_TMP/pseq.test" "$GT_TMP/pseq.trace" >/dev/null ||
		{ why="$why '$bad': not converted;"; continue; }
	"$GO" tool trace -d=1 "$GT_TMP/pseq.trace" >/dev/null 2>&1 && why="$why '$bad': Go 1.23 reads it;"
	"$GTCTL" inspect "$GT_TMP/pseq.trace" >"$GT_TMP/pseq.insp" 2>&1
	rc=$?
	[ $rc = 1 ] || why="$why '$bad': inspect exit $rc;"
	grep -q "invalid: .*(rule: P sequence)" "$GT_TMP/pseq.insp" ||
		why="$why '$bad': $(tail -1 "$GT_TMP/pseq.insp");"
done
gt_report v2read_inspect_pseq "$why"

# A Go 1.22 program's trace ("go 1.22 trace")
why=
if [ ! -x "$GT_GO122" ]; then
	why="Go 1.22 not installed at $GT_GO122 (make deps)"
elif ! (export GOCACHE=$PWD/$dir/cache122 GOPATH=$PWD/$dir/gopath GO111MODULE=off GOFLAGS= \
	CGO_ENABLED=0 && "$GT_GO122" build -o "$dir/v2block122" tests/workloads/go/v2block/main.go) \
	>"$GT_TMP/build122.log" 2>&1; then
	why="go1.22 build v2block failed: $(tail -3 "$GT_TMP/build122.log")"
elif ! "$dir/v2block122" "$GT_TMP/v2block122.trace" >"$GT_TMP/v2block122.out" 2>&1; then
	why="v2block (Go 1.22) failed: $(tail -3 "$GT_TMP/v2block122.out")"
elif [ "$(head -c 13 "$GT_TMP/v2block122.trace")" != "go 1.22 trace" ]; then
	why="v2block (Go 1.22) wrote no Go 1.22 trace"
fi
if [ -n "$why" ]; then
	fail v2read_go122 "$why"
	fail v2read_go122_profiles "no trace (see v2read_go122)"
else
	if ! out=$("$GT_GO122" tool trace -d=1 "$GT_TMP/v2block122.trace" 2>&1 >/dev/null); then
		fail v2read_go122 "Go 1.22's own parser: ${out:0:300}"
	elif ! "$GTCTL" inspect "$GT_TMP/v2block122.trace" >"$GT_TMP/v2block122.insp" 2>&1 ||
		! grep -q "^version: *go 1.22 trace" "$GT_TMP/v2block122.insp"; then
		fail v2read_go122 "inspect: $(tail -1 "$GT_TMP/v2block122.insp")"
	else
		report_ok v2read_go122 "$GT_TMP/v2block122.trace" 8 1.22
	fi
	check_script v2read_go122_profiles tests/integration/profiles_check.py "$GT_TMP/v2block122.trace"
fi

gt_finish
