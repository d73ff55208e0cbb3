#!/usr/bin/env bash
# record_throttle.sh: CFS bandwidth throttling is told apart from preemption
# (bpf/throttle.bpf.h, docs/mapping.md "CFS bandwidth throttling").  A C
# spinner runs in a cgroup of its own (cgroup v1 `cpu` controller, else v2
# with `cpu`), launched by `record -- CMD` so that the recording holds its
# whole life and the cgroup's cpu.stat, read before and after, counts the
# same throttles:
#  - throttle_vs_cpustat: quota 20 ms per 100 ms period, cpu.shares high
#    (a wait after an unthrottle stays short); `report --json`'s
#    "throttled" held to cpu.stat (throttle_check.py says how), and the
#    trace passes Go's readers (gt_valid).
#  - throttle_none_unlimited: the same spinner without a quota: nothing is
#    throttled, in cpu.stat and in the report.
#  - throttle_gomerge: a Go 1.23 net/http server (tests/servers/gopprof,
#    record_gomerge's build) at 30 ms per 100 ms under wrk, recorded
#    (record -p) while its runtime trace is fetched, and the two merged
#    (as record_gomerge's gomerge_go123): the merged file passes Go's
#    readers, Go's reader returns the runtime's events from it as from the
#    runtime's trace alone (the goroutines keep the runtime's states; the
#    lines compared sorted, Go's reader may swap two 1 ns apart), and
#    it has regions "kernel:
#    throttled by the CPU quota of cgroup .../gt-throttle-PID-go" (not
#    credited to the CPU's next task), as many as report's go_kernel
#    counts under that cause, or such logs inside the runtime's syscalls.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

gt_expect throttle_vs_cpustat throttle_none_unlimited throttle_gomerge
gt_require_bpf "${gt_cases[@]}"
# the merge reads the kernel side in the default (1.19) format: the v2
# pass's wrapper would add --go-version to record
CTL=${GT_REAL_GTCTL:-$GTCTL}

# The cpu controller's hierarchy: v1's `cpu` mount, else v2 with cpu on.
V1=/sys/fs/cgroup/cpu
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -e "$V1/cpu.cfs_quota_us" ]; then
	CG=$V1/gt-throttle-$$ ver=1
elif [ -n "$V2" ] && grep -qw cpu "$V2/cgroup.controllers" 2>/dev/null; then
	grep -qw cpu "$V2/cgroup.subtree_control" || echo +cpu >"$V2/cgroup.subtree_control"
	CG=$V2/gt-throttle-$$ ver=2
else
	for c in "${gt_cases[@]}"; do
		fail $c "no cpu controller: neither $V1/cpu.cfs_quota_us nor cpu in $V2/cgroup.controllers"
	done
	exit 1
fi
# the cgroups go too, whatever the exit (gt_cleanup reads the exit status)
trap 'rc=$?; kill $SRV $WRK 2>/dev/null; wait $SRV $WRK 2>/dev/null
	rmdir "$CG-a" "$CG-b" "$CG-go" 2>/dev/null; (exit $rc); gt_cleanup' EXIT
SRV= WRK=

# quota CGROUP QUOTA_US: the cgroup made with that quota a 100 ms period
# (-1: none), and a weight that lets it run at once when unthrottled.
quota() {
	mkdir "$1" || return 1
	if [ $ver = 1 ]; then
		echo "$2" >"$1/cpu.cfs_quota_us" && echo 100000 >"$1/cpu.cfs_period_us" &&
			echo 262144 >"$1/cpu.shares"
	else
		echo "${2/#-1/max} 100000" >"$1/cpu.max" && echo 10000 >"$1/cpu.weight"
	fi
}

# run NAME QUOTA_US: the spinner in cgroup $CG-NAME, recorded; writes
# $GT_TMP/NAME.before and NAME.after (its cpu.stat) and NAME.trace.
run() {
	local cg=$CG-$1
	quota "$cg" "$2" || return 1
	cat "$cg/cpu.stat" >"$GT_TMP/$1.before"
	"$GTCTL" record -q -o "$GT_TMP/$1.trace" -- \
		sh -c "echo \$\$ >$cg/cgroup.procs && exec $WL/spin 0 1500" \
		>"$GT_TMP/$1.out" 2>"$GT_TMP/$1.err" || return 1
	cat "$cg/cpu.stat" >"$GT_TMP/$1.after"
	rmdir "$cg"
}

# verdict NAME CGROUP|--none: "" or why not (throttle_check.py)
verdict() {
	"$GTCTL" report --json "$GT_TMP/$1.trace" >"$GT_TMP/$1.report.json" || {
		echo "gotracectl report failed"; return; }
	python3 tests/integration/throttle_check.py "$GT_TMP/$1.before" "$GT_TMP/$1.after" \
		"$GT_TMP/$1.report.json" "$2"
}

for c in a:20000:throttle_vs_cpustat:gt-throttle-$$-a b:-1:throttle_none_unlimited:--none; do
	IFS=: read -r n q case cg <<<"$c"
	if ! run "$n" "$q"; then
		fail "$case" "recording the spinner in $CG-$n failed: $(tail -3 "$GT_TMP/$n.err")"
		continue
	fi
	gt_valid "$case" "$GT_TMP/$n.trace" || continue
	why=$(verdict "$n" "$cg" 2>"$GT_TMP/$n.figures")
	sed "s/^/# $case: /" "$GT_TMP/$n.figures"
	gt_report "$case" "$why"
done

# gomerge_case: throttle_gomerge's verdict, "" or why not, on stdout; run
# in the script's own shell (not in $(...)), so that SRV and WRK are known
# to stop_server and the exit trap.
gomerge_case() {
	local dir=$GT_BUILD/go-gomerge m=$GT_TMP/go.trace k=$GT_TMP/k.trace rt=$GT_TMP/rt.trace
	local go=$GT_GO123 i rec
	command -v wrk >/dev/null || { echo "wrk not installed (make deps)"; return; }
	mkdir -p "$dir"
	# record_gomerge's build, and its cache
	(export GOCACHE=$PWD/$dir/cache23 GOPATH=$PWD/$dir/gopath GO111MODULE=off GOFLAGS= \
		CGO_ENABLED=0 GOTOOLCHAIN=local &&
		"$go" build -o "$dir/gopprof123" tests/servers/gopprof/main.go) >"$GT_TMP/build.log" 2>&1 ||
		{ echo "the Go 1.23 server did not build: $(tail -3 "$GT_TMP/build.log")"; return; }
	quota "$CG-go" 30000 || { echo "cannot make cgroup $CG-go"; return; }
	PORT=$(( (RANDOM % 20000) + 30000 ))
	sh -c "echo \$\$ >$CG-go/cgroup.procs && exec $dir/gopprof123 127.0.0.1:$PORT" \
		>"$GT_TMP/srv.log" 2>&1 &
	SRV=$!
	gt_pids+=("$SRV")
	for i in $(seq 200); do grep -q ready "$GT_TMP/srv.log" && break; sleep 0.05; done
	grep -q ready "$GT_TMP/srv.log" || { echo "the server never answered: $(tail -3 "$GT_TMP/srv.log")"; return; }
	timeout 20 wrk -t1 -c4 -d8s "http://127.0.0.1:$PORT/" >"$GT_TMP/wrk.log" 2>&1 &
	WRK=$!
	gt_pids+=("$WRK")
	sleep 0.5
	GT_RECORD_CTL=$CTL gt_record_bg k -q -p "$SRV" -d 2 -o "$k" ||
		{ echo "record did not start: $(tail -3 "$GT_TMP/k.rec.err")"; return; }
	rec=$REC_PID
	curl -s --max-time 30 -o "$rt" "http://127.0.0.1:$PORT/debug/pprof/trace?seconds=1" ||
		{ echo "curl of the runtime's trace failed"; return; }
	wait "$rec" || { echo "record failed: $(tail -3 "$GT_TMP/k.rec.err")"; return; }
	stop_server
	"$CTL" merge "$rt" "$k" -o "$m" 2>"$GT_TMP/go.err" ||
		{ echo "merge failed: $(tail -3 "$GT_TMP/go.err")"; return; }
	grep 'gotracectl merge: [0-9]* intervals' "$GT_TMP/go.err" | sed 's/^/# /' >&2
	if ! out=$(tests/lib/gocheck.sh "$m" 2>&1); then
		echo "Go rejects the merged file: ${out:0:600}"
		return
	fi
	"$go" tool trace -d=1 "$m" 2>/dev/null >"$m.d1"
	# sorted: Go's reader moves an event 1 ns later when another has its
	# time, so an added event may swap two of different Ms 1 ns apart
	# (docs/mapping.md; one run in three here)
	"$go" tool trace -d=1 "$rt" 2>/dev/null | sed 's/ Time=[0-9]*//' | sort >"$rt.d1"
	grep -v 'Type="kernel: \|Category="kernel"' "$m.d1" | sed 's/ Time=[0-9]*//' | sort >"$m.rt"
	[ -s "$rt.d1" ] && cmp -s "$m.rt" "$rt.d1" ||
		{ echo "the runtime's events differ: $(diff "$rt.d1" "$m.rt" | head -4 | cut -c1-200)"; return; }
	# regions, and logs of throttles inside the runtime's syscalls (on 6.18
	# a task is throttled on its way back to user space: often a
	# syscall's return; one run in four had no region, only logs)
	grep -c "RegionBegin.*Type=\"kernel: throttled by the CPU quota of cgroup [^\"]*/gt-throttle-$$-go\"" \
		"$m.d1" >"$m.n"
	grep -c "Category=\"kernel\" Message=\"throttled by the CPU quota of cgroup [^\"]*/gt-throttle-$$-go .*in [a-z]* runtime" \
		"$m.d1" >"$m.logs"
	[ "$(cat "$m.n")" -gt 0 ] || [ "$(cat "$m.logs")" -gt 0 ] ||
		{ echo "no region or log of throttling by cgroup gt-throttle-$$-go"; return; }
	"$CTL" report --json "$m" | python3 -c '
import json, sys
gk = json.load(sys.stdin)["go_kernel"]
causes = [c for t in gk["threads"] for c in t["causes"] if c["what"].startswith("throttled by the CPU quota of cgroup ")]
n, ns = sum(c["count"] for c in causes), sum(c["ns"] for c in causes)
print(f"# go: {n} throttled intervals, {ns / 1e6:.2f} ms in go_kernel ({sys.argv[1]} regions, "
      f"{sys.argv[2]} logs inside runtime syscalls)", file=sys.stderr)
if n != int(sys.argv[1]) or any(c["culprit_stack"] for c in causes):
    print(f"go_kernel has {n} throttling causes for {sys.argv[1]} regions, or one with a culprit")' \
		"$(cat "$m.n")" "$(cat "$m.logs")"
}

stop_server() {
	[ -n "$SRV$WRK" ] && kill $SRV $WRK 2>/dev/null && wait $SRV $WRK 2>/dev/null
	SRV= WRK=
	[ -d "$CG-go" ] && rmdir "$CG-go"
}

gomerge_case >"$GT_TMP/go.why" 2>"$GT_TMP/go.figures"
stop_server
cat "$GT_TMP/go.figures"
gt_report throttle_gomerge "$(cat "$GT_TMP/go.why")"
gt_finish
