#!/usr/bin/env bash
# record_gomerge.sh: a Go 1.22 and a Go 1.23 net/http server with
# net/http/pprof (tests/servers/gopprof) under wrk, pinned to CPU 0 beside a
# SCHED_FIFO hog (python: 4 ms spinning, 4 ms asleep, 10 s; wrk, 2 connections,
# on CPU 1; the servers' traces kept small, as Go's -d=1 dump of a
# runtime trace is 100 bytes an event): its own runtime trace and a
# kernel recording of it and the hog, merged (`gotracectl merge`), and
# `record --go-trace`, which does both.
#
#  gomerge_go122, gomerge_go123: the runtime's trace fetched with curl
#     while `record -p SERVER,HOG` runs; `merge` writes a file that Go's
#     readers and viewer pages (gocheck.sh, and the User-defined regions
#     page of Go 1.22's viewer for the Go 1.22 file) and inspect accept;
#     Go's reader returns the runtime's events from it exactly as from
#     the runtime's file alone (`go tool
#     trace -d=1` of both, less the added kernel events and the times,
#     which its strictly-increasing rule may move by 1 ns); the merge
#     bounds the clocks' offset to an interval holding 0 within +-10 us
#     (+-1.2 to +-3.6 us seen at a load average of 14 to 20 on 2 CPUs);
#     a kernel log of a block in a syscall that the merge put on the M
#     its goroutine ran on next is on a goroutine that entered a syscall
#     on the thread the log names (such logs were left out before);
#     kernel regions are on goroutines, and the hog (by its tid) is named
#     as the preempter of at least one, its log and report's row with the
#     hog's stack where it left the CPU (in its sleep); `report` prints its table of the
#     kernel's time inside the goroutines, and `report --json` has it row
#     for row (report_go_json.py); for Go 1.23, the kernel recording's own
#     "Go goroutines on their threads" table is in --json too.
#  gomerge_gotrace: record -p SERVER,HOG -d 1 --go-trace URL (Go 1.23):
#     one file, valid, with the hog's preemptions on goroutines, listed on
#     Go 1.23's User-defined regions page.
#  gomerge_timehist: the same recording with `perf sched record -k
#     CLOCK_MONOTONIC` around it: per thread of the server, the time the
#     hog held it off the CPU while the runtime had a goroutine running on
#     it, by `perf sched timehist --state` (gomerge_timehist.py says how),
#     within 1 ms of what `report --json` credits the hog with on that
#     thread (go_kernel.threads; 2 to 10 us apart seen); the figures are
#     printed.  The Go 1.22 server's merge (gomerge_go122) is recorded
#     with perf around it too and held to the same rule here.
#  gomerge_daemon: record -p --go-trace --cpu-profile=1000 through
#     gotraced (not embedded): one valid file, with the hog's preemptions
#     on goroutines, at least one of them with a CPU sample of the hog.
#  gomerge_refused: merge of a kernel file as the runtime's trace, of a
#     FIFO (refused, not waited on), and
#     --go-trace to a port where nothing listens: non-zero, a reason, no
#     output file (record names the kernel's part it keeps beside it).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

gt_expect gomerge_go122 gomerge_go123 gomerge_gotrace gomerge_timehist gomerge_daemon gomerge_refused
gt_require_bpf "${gt_cases[@]}"
for t in wrk perf; do
	command -v "$t" >/dev/null || { for c in "${gt_cases[@]}"; do fail "$c" "$t not installed (make deps)"; done; gt_finish; }
done
. tests/lib/perf_sched.sh
# the merge reads the kernel side in the default (1.19) format: the v2
# pass's wrapper would add --go-version to record
CTL=${GT_REAL_GTCTL:-$GTCTL}
dir=$GT_BUILD/go-gomerge
mkdir -p "$dir"

# build VER: the server built with Go 1.VER at $dir/gopprof1VER.
build() {
	local go=$GT_GO123
	[ "$1" = 22 ] && go=$GT_GO122
	(export GOCACHE=$PWD/$dir/cache$1 GOPATH=$PWD/$dir/gopath GO111MODULE=off GOFLAGS= \
		CGO_ENABLED=0 GOTOOLCHAIN=local &&
		"$go" build -o "$dir/gopprof1$1" tests/servers/gopprof/main.go) >"$GT_TMP/build$1.log" 2>&1
}

# start VER TAG: the server (SRV, PORT), the hog on CPU 0 (HOG) and wrk,
# each for 10 s at most (stop ends them); 1 if the server never answered.
start() {
	local i a log
	# a log per attempt: a slow server's late "ready" must not pass for
	# the next one's, whose port may be taken
	for a in 1 2 3 4 5; do
		PORT=$(( (RANDOM % 20000) + 30000 ))
		log=$GT_TMP/$2.srv$a
		taskset -c 0 "$dir/gopprof1$1" "127.0.0.1:$PORT" >"$log" 2>&1 &
		SRV=$!
		gt_pids+=("$SRV")
		for i in $(seq 1200); do
			grep -q ready "$log" && break
			kill -0 "$SRV" 2>/dev/null || break
			sleep 0.05
		done
		grep -q ready "$log" && kill -0 "$SRV" 2>/dev/null && break
		kill "$SRV" 2>/dev/null
		wait "$SRV" 2>/dev/null
	done
	cp "$log" "$GT_TMP/$2.srv"
	grep -q ready "$log" && kill -0 "$SRV" 2>/dev/null || return 1
	# SCHED_FIFO, 4 ms on and 4 ms asleep, 10 s at most: each wakeup takes
	# CPU 0 from whatever runs there at once, and half of CPU 0 is left
	chrt -f 5 taskset -c 0 /usr/bin/python3 -c '
import time
end = time.monotonic() + 10
while time.monotonic() < end:
    t = time.monotonic() + 0.004
    while time.monotonic() < t:
        pass
    time.sleep(0.004)' &
	HOG=$!
	gt_pids+=("$HOG")
	timeout 20 taskset -c 1 wrk -t1 -c2 -d10s "http://127.0.0.1:$PORT/" >"$GT_TMP/$2.wrk" 2>&1 &
	WRK=$!
	gt_pids+=("$WRK")
}

stop() {
	kill "$SRV" "$HOG" "$WRK" 2>/dev/null
	wait "$SRV" "$HOG" "$WRK" 2>/dev/null
}

# checks NAME MERGED RUNTIME-OR-"" VER: what both merge cases check;
# prints why not, or nothing.
checks() {
	local n=$1 m=$2 rt=$3 v=$4 go=$GT_GO123 hog
	[ "$v" = 22 ] && go=$GT_GO122
	if ! out=$(tests/lib/gocheck.sh "$m" 2>&1); then
		echo "Go rejects the merged file: ${out:0:600}"
		return
	fi
	"$CTL" inspect "$m" >/dev/null 2>&1 || echo "inspect rejects the merged file;"
	"$go" tool trace -d=1 "$m" 2>/dev/null >"$m.d1"
	if [ -n "$rt" ]; then
		"$go" tool trace -d=1 "$rt" 2>/dev/null | sed 's/ Time=[0-9]*//' >"$rt.d1"
		grep -v 'Type="kernel: \|Category="kernel"' "$m.d1" | sed 's/ Time=[0-9]*//' >"$m.rt"
		[ -s "$rt.d1" ] && cmp -s "$m.rt" "$rt.d1" ||
			echo "the runtime's events differ: $(diff "$rt.d1" "$m.rt" | head -4 | cut -c1-200);"
	fi
	grep -q 'RegionBegin.*Type="kernel: ' "$m.d1" || echo "no kernel region;"
	hog=$(grep -c "RegionBegin.*Type=\"kernel: preempted by .*(tid $HOG)\"" "$m.d1")
	[ "$hog" -ge 1 ] || echo "no region names the hog (tid $HOG) as the preempter;"
	# the hog's stack where it left the CPU: in its sleep; or, recorded
	# with --cpu-profile (gomerge_daemon), a sample of it in the interval
	[ "$hog" -ge 1 ] && ! grep -qE "Message=\"preempted by [^\"]*\(tid $HOG\) for [^\"]*; the preempter's stack \((where it left the CPU\): [^\"]*sleep|a CPU sample in this interval\): )" "$m.d1" &&
		echo "no log of the hog's preemptions carries its stack (in its sleep): $(grep -m1 "Message=\"preempted by [^\"]*(tid $HOG)" "$m.d1" | cut -c1-300);"
	"$CTL" report "$m" >"$m.report" 2>&1 || echo "report failed: $(tail -2 "$m.report");"
	grep -q "^The kernel inside the runtime's goroutines" "$m.report" &&
		grep -q "^    preempted by " "$m.report" ||
		echo "report has no table of the kernel's time in goroutines;"
	[ "$hog" -ge 1 ] && ! grep -A1 "^    preempted by .*(tid $HOG)" "$m.report" | grep -qE "^      its stack \((where it left the CPU\): .*sleep|a CPU sample in this interval\))" &&
		echo "report shows no stack of the hog: $(grep -m1 -A1 "(tid $HOG)" "$m.report");"
	"$CTL" report --json "$m" >"$m.json" 2>&1 || echo "report --json failed: $(tail -2 "$m.json");"
	out=$(python3 tests/integration/report_go_json.py "$m.report" "$m.json" kernel) ||
		echo "report --json: $out;"
	# a syscall's log on the M its goroutine ran on next: that goroutine
	# entered a syscall on the thread the log names
	python3 - "$m.d1" <<'PY'
import re, sys
into, n = set(), 0
for ln in open(sys.argv[1], errors="replace"):
    m = re.match(r"M=(\d+) .* GoID=(\d+) (Running|Undetermined)->Syscall$", ln.rstrip())
    if m:
        into.add((m.group(1), m.group(2)))
        continue
    m = re.match(r'M=\d+ P=\d+ G=(\d+) Log .*in its runtime syscall on thread (\d+), before it ran here', ln)
    if m:
        n += 1
        if (m.group(2), m.group(1)) not in into:
            print("a syscall's log on G%s names thread %s, where it entered no syscall;" % m.groups())
            break
print("# syscall logs on the M the goroutine ran on next: %d" % n, file=sys.stderr)
PY
	python3 - "$GT_TMP/$n.merge.err" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"bound the offset to \[(-?\d+), (-?\d+)\] ns \(residual error \+-(\d+) ns\), (\d+) contradict", t)
if not m:
    print("no clock line: %s;" % t[:300])
    sys.exit()
lo, hi, res, bad = map(int, m.groups())
if not lo <= 0 <= hi or res > 10000:
    print("clock offset bounds [%d, %d] ns (want 0 within, +-10 us at most);" % (lo, hi))
PY
	echo "# $n: hog preemptions on goroutines: $hog; $(grep -o 'bound the offset.*contradict it' "$GT_TMP/$n.merge.err")" >&2
}

# regions_page NAME FILE GO LABEL: GO's viewer lists the kernel's regions
# on its User-defined regions page; prints why not, or nothing.
regions_page() {
	if gt_serve_trace "$3" "$2" "$GT_TMP/$1.viewer" 600; then
		curl -s --max-time 120 "http://127.0.0.1:$gt_port/userregions" >"$GT_TMP/$1.regions.html"
		grep -q "kernel: preempted by" "$GT_TMP/$1.regions.html" ||
			echo "Go $4's /userregions does not list the kernel's regions"
	else
		echo "Go $4's go tool trace did not serve: $(tail -3 "$GT_TMP/$1.viewer")"
	fi
	kill "$gt_server" 2>/dev/null
	wait "$gt_server" 2>/dev/null
}

merge_case() {
	local v=$1 n=gomerge_go1$1 why= out= k=$GT_TMP/k$1.trace rt=$GT_TMP/rt$1.trace m=$GT_TMP/m$1.trace i
	if ! build "$v"; then
		fail "$n" "go build failed: $(tail -3 "$GT_TMP/build$v.log")"
		[ "$v" = 22 ] && TH122="the Go 1.22 server did not build;"
		return
	fi
	# Go 1.22's recording is held to perf sched timehist too (gotrace_case
	# holds Go 1.23's): perf started first, as there
	local up=1
	if [ "$v" = 22 ]; then
		PERF_K=(-k CLOCK_MONOTONIC --no-bpf-event -C 0)
		gt_perf_sched_start "$GT_TMP/$n.perf"; up=$?
		gt_pids+=("$PERF")
		[ "$up" = 0 ] || TH122="perf sched record did not start: $(tail -3 "$GT_TMP/$n.perf.out");"
	fi
	if ! start "$v" "$n"; then
		fail "$n" "the server never answered: $(tail -3 "$GT_TMP/$n.srv")"
		[ "$v" = 22 ] && TH122="$TH122 the Go 1.22 server never answered;"
		[ "$up" = 0 ] && gt_perf_sched_stop
		return
	fi
	"$CTL" record --standalone -q -p "$SRV,$HOG" -d 2 -o "$k" 2>"$GT_TMP/$n.rec.err" &
	local rec=$!
	gt_pids+=("$rec")
	for i in $(seq 2400); do
		gt_recording "$rec" && break
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.05
	done
	curl -s --max-time 30 -o "$rt" "http://127.0.0.1:$PORT/debug/pprof/trace?seconds=1" ||
		why="curl failed;"
	wait "$rec" || why="$why record failed: $(tail -2 "$GT_TMP/$n.rec.err");"
	[ "$up" = 0 ] && gt_perf_sched_stop
	stop
	if [ -z "$why" ]; then
		if "$CTL" merge "$rt" "$k" -o "$m" 2>"$GT_TMP/$n.merge.err"; then
			why=$(checks "$n" "$m" "$rt" "$v")
			# Go 1.22's viewer too (gocheck.sh runs Go 1.23's on it)
			[ -z "$why" ] && [ "$v" = 22 ] && why=$(regions_page "$n" "$m" "$GT_GO122" 1.22)
			# (SRV and HOG are this case's until the next start)
			[ "$v" = 22 ] && [ -z "$TH122" ] && TH122=$(timehist "$n" "$m")
			# the kernel recording's own goroutine table, in --json
			if [ "$v" = 23 ]; then
				"$CTL" report "$k" >"$k.txt" 2>&1
				"$CTL" report --json "$k" >"$k.json" 2>&1
				out=$(python3 tests/integration/report_go_json.py "$k.txt" "$k.json" goroutines) ||
					why="$why the kernel recording's report --json: $out;"
			fi
		else
			why="merge failed: $(head -3 "$GT_TMP/$n.merge.err")"
		fi
	fi
	[ "$v" = 22 ] && [ -n "$why" ] && [ -z "$TH122" ] && TH122="no merged Go 1.22 file (see $n);"
	gt_report "$n" "$why"
}

# timehist NAME MERGED: the hog's preemptions of the server's threads by
# perf sched timehist ($GT_TMP/NAME.perf) against report --json (after
# checks on MERGED); prints why not, or nothing.
timehist() {
	local th=$GT_TMP/$1.timehist out
	python3 tests/integration/perf_noksym.py "$GT_TMP/$1.perf" >"$th.ksym" 2>&1 ||
		{ echo "perf_noksym.py: $(tail -2 "$th.ksym")"; return; }
	perf sched timehist --state -i "$GT_TMP/$1.perf" >"$th" 2>"$th.err" ||
		{ echo "perf sched timehist failed: $(tail -2 "$th.err")"; return; }
	# checks() wrote MERGED.d1 (Go 1.23's -d=1) and MERGED.json
	[ -s "$2.d1" ] && [ -s "$2.json" ] || { echo "no -d=1 or report --json of the merged file"; return; }
	out=$(python3 tests/integration/gomerge_timehist.py "$th" "$2.d1" "$2.json" "$SRV" "$HOG" 1000000)
	grep '^#' <<<"$out" >&2
	grep -v '^#' <<<"$out"
}

gotrace_case() {
	local n=gomerge_gotrace why= m=$GT_TMP/g.trace th= up
	# perf's clock is the kernel's sched_clock unless told: -k as gotraced's;
	# CPU 0 only, where the server and the hog are pinned (fewer lost
	# events on a busy machine); BPF programs' ksymbol records, which
	# timehist fails on, rewritten (perf_noksym.py).  Started first: its
	# start on a busy machine must not eat the hog's seconds
	PERF_K=(-k CLOCK_MONOTONIC --no-bpf-event -C 0)
	gt_perf_sched_start "$GT_TMP/$n.perf"; up=$?
	gt_pids+=("$PERF")
	[ "$up" = 0 ] || th="perf sched record did not start: $(tail -3 "$GT_TMP/$n.perf.out");"
	if ! start 23 "$n"; then
		fail "$n" "the server never answered: $(tail -3 "$GT_TMP/$n.srv")"
		fail gomerge_timehist "the server never answered"
		[ "$up" = 0 ] && gt_perf_sched_stop
		return
	fi
	if "$CTL" record --standalone -q -p "$SRV,$HOG" -d 1 -o "$m" \
		--go-trace "http://127.0.0.1:$PORT/debug/pprof/trace" 2>"$GT_TMP/$n.merge.err"; then
		why=$(checks "$n" "$m" "" 23)
		ls "$m".kernel-* >/dev/null 2>&1 && why="$why the kernel's part was left beside it;"
	else
		why="record --go-trace failed: $(tail -3 "$GT_TMP/$n.merge.err")"
	fi
	[ "$up" = 0 ] && gt_perf_sched_stop
	stop
	[ -z "$th" ] && [ -s "$m" ] && th=$(timehist "$n" "$m")
	[ -s "$m" ] || th="$th no merged file (see gomerge_gotrace);"
	[ -n "$TH122" ] && th="$th Go 1.22 (merge): $TH122"
	gt_report gomerge_timehist "$th"
	[ -z "$why" ] && why=$(regions_page "$n" "$m" "$GT_GO123" 1.23)
	gt_report "$n" "$why"
}

daemon_case() {
	local n=gomerge_daemon why= m=$GT_TMP/d.trace
	gt_start_daemon
	if ! start 23 "$n"; then
		fail "$n" "the server never answered: $(tail -3 "$GT_TMP/$n.srv")"
		return
	fi
	# with CPU samples (1 ms apart: the hog spins 4 ms at a time), so the
	# hog's stack in a preemption's log is a sample of it in the interval
	if "$CTL" record --daemon --socket "$SOCK" -q -p "$SRV,$HOG" -d 1 -o "$m" \
		--cpu-profile=1000 \
		--go-trace "http://127.0.0.1:$PORT/debug/pprof/trace" 2>"$GT_TMP/$n.merge.err"; then
		why=$(checks "$n" "$m" "" 23)
		grep -q "Message=\"preempted by [^\"]*(tid $HOG) for [^\"]*; the preempter's stack (a CPU sample in this interval)" "$m.d1" ||
			why="$why no preemption by the hog carries a CPU sample of it, though it was sampled every 1 ms;"
		ls "$m".kernel-* >/dev/null 2>&1 && why="$why the kernel's part was left beside it;"
	else
		why="record --daemon --go-trace failed: $(tail -3 "$GT_TMP/$n.merge.err")"
	fi
	stop
	kill "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	gt_report "$n" "$why"
}

refused_case() {
	local n=gomerge_refused why= out port k
	port=$(( (RANDOM % 20000) + 30000 ))
	sleep 30 &
	gt_pids+=("$!")
	out=$("$CTL" record --standalone -q -p "$!" -d 300ms -o "$GT_TMP/bad2.trace" \
		--go-trace "http://127.0.0.1:$port/debug/pprof/trace" 2>&1) &&
		why="--go-trace to a closed port succeeded;"
	echo "$out" | grep -q "cannot connect" && echo "$out" | grep -q "recording is kept at .*bad2.trace.kernel-" ||
		why="$why record said: ${out:0:300};"
	[ -e "$GT_TMP/bad2.trace" ] && why="$why record left $GT_TMP/bad2.trace;"
	# that kernel recording, given as the runtime's trace
	k=$(ls "$GT_TMP"/bad2.trace.kernel-* 2>/dev/null | head -1)
	if [ -z "$k" ]; then
		why="$why no kernel recording kept;"
	else
		out=$("$CTL" merge "$k" "$k" -o "$GT_TMP/bad.trace" 2>&1) &&
			why="$why merge of a kernel file as the runtime's trace succeeded;"
		echo "$out" | grep -q "the runtime's trace" || why="$why merge said: ${out:0:200};"
		[ -e "$GT_TMP/bad.trace" ] && why="$why merge left $GT_TMP/bad.trace;"
		# a FIFO as an input: refused at once (the open blocked forever;
		# timeout only ends the old hang)
		mkfifo "$GT_TMP/fifo"
		out=$(timeout 30 "$CTL" merge "$GT_TMP/fifo" "$k" -o "$GT_TMP/bad.trace" 2>&1) &&
			why="$why merge of a FIFO succeeded;"
		echo "$out" | grep -q "fifo: not a regular file" || why="$why merge of a FIFO said: ${out:0:200};"
	fi
	gt_report "$n" "$why"
}

t0=$SECONDS
TH122=
merge_case 22
merge_case 23
echo "# merge cases: $((SECONDS - t0)) s" >&2
gotrace_case
echo "# + gotrace and timehist: $((SECONDS - t0)) s" >&2
daemon_case
echo "# + daemon: $((SECONDS - t0)) s" >&2
refused_case
gt_finish
