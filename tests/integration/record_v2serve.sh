#!/usr/bin/env bash
# record_v2serve.sh: `gotracectl inspect` on the traces a real Go net/http
# server writes of itself (runtime/trace, Go 1.22 and Go 1.23: the v2
# format) while wrk loads it from outside (32 connections, 2 threads,
# 127.0.0.1, 4 s).  No BPF needed.
#
#  v2serve_go122, v2serve_go123: Go's own reader of the server's version
#     (tests/lib/gtread.sh: the code of `go tool trace -d=1`) reads the
#     trace, and so does Go 1.23's for the Go 1.22 one; inspect --json says
#     valid, with Go's figures: as many events (Go's, less its Sync
#     events), as many generations, and the span from the first event to
#     the last within 0.1% (or 1 ms) of Go's.  Such traces have Ps stolen
#     from their syscalls at generation boundaries: a ProcStatus restating
#     a P's syscall as abandoned is written by the M about to steal it, and
#     binds that P to no M (Go's order.go), which inspect once took for the
#     stating M's own P ("GoSyscallBegin on P 0 with sequence number 1: the
#     P is at 186").
#  v2serve_abandoned: that shape alone, two generations written by hand
#     (tests/lib/v2raw.py): Go 1.23 reads it, inspect says valid (on every
#     run, where the servers' traces have the shape on most runs only).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

gt_expect v2serve_go122 v2serve_go123 v2serve_abandoned

dir=$GT_BUILD/go-v2serve
mkdir -p "$dir"
[ -x "$GTCTL" ] || { for c in "${gt_cases[@]}"; do fail "$c" "$GTCTL not built"; done; gt_finish; }
command -v wrk >/dev/null || { for c in "${gt_cases[@]}"; do fail "$c" "wrk not installed (make deps)"; done; gt_finish; }

# reader VER: builds Go 1.VER's reader as $dir/gtread1VER; 1 if it cannot.
reader() {
	local go=$GT_GO123
	[ "$1" = 22 ] && go=$GT_GO122
	[ -x "$go" ] && tests/lib/gtread.sh "$go" "$dir/gtread1$1" >"$GT_TMP/gtread$1.log" 2>&1
}
reader 23 && have23=1 || have23=0
reader 22 && have22=1 || have22=0

# figures NAME TRACE READER: inspect --json's verdict and figures against
# the line of Go's reader; prints why not, or nothing.
figures() {
	local n=$1 t=$2 rd=$3
	"$rd" "$t" >"$GT_TMP/$n.go" 2>&1
	"$GTCTL" inspect --json "$t" >"$GT_TMP/$n.json" 2>"$GT_TMP/$n.err"
	python3 - "$GT_TMP/$n.json" "$GT_TMP/$n.go" <<'PY'
import json, re, sys
go = open(sys.argv[2]).read().strip()
m = re.match(r"ok \S+ events=(\d+) gens=(\d+) first_ns=(\d+) last_ns=(\d+)$", go)
if not m:
    print("Go's reader: %s" % go[:300])
    sys.exit()
events, gens, first, last = map(int, m.groups())
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    print("inspect --json printed no JSON")
    sys.exit()
span = last - first
why = []
if not d["valid"]:
    why.append("inspect: invalid: %s" % d["error"])
if d["events"] != events:
    why.append("%d events, Go's reader %d" % (d["events"], events))
if d["generations"] != gens:
    why.append("%d generations, Go's reader %d" % (d["generations"], gens))
if abs(d["duration_ns"] - span) > max(1e6, span / 1000):
    why.append("%.3f s, Go's reader %.3f s" % (d["duration_ns"] / 1e9, span / 1e9))
print("; ".join(why))
PY
}

# serve VER: the server built with Go 1.VER, traced under wrk; its case.
serve() {
	local v=$1 n=v2serve_go1$1 go=$GT_GO123 why= port= pid reqs t=$GT_TMP/serve$1.trace
	[ "$v" = 22 ] && go=$GT_GO122
	if [ ! -x "$go" ]; then
		fail "$n" "Go 1.$v not installed at $go (make deps)"
		return
	fi
	if ! (export GOCACHE=$PWD/$dir/cache$v GOPATH=$PWD/$dir/gopath GO111MODULE=off GOFLAGS= \
		CGO_ENABLED=0 GOTOOLCHAIN=local &&
		"$go" build -o "$dir/v2serve$v" tests/workloads/go/v2serve/main.go) \
		>"$GT_TMP/build$v.log" 2>&1; then
		fail "$n" "go build failed: $(tail -3 "$GT_TMP/build$v.log")"
		return
	fi
	"$dir/v2serve$v" "$t" 4 >"$GT_TMP/serve$v.out" 2>&1 &
	pid=$!
	gt_pids+=("$pid")
	for _ in $(seq 600); do
		port=$(awk '/^port /{print $2}' "$GT_TMP/serve$v.out")
		[ -n "$port" ] || ! kill -0 "$pid" 2>/dev/null && break
		sleep 0.1
	done
	if [ -z "$port" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		fail "$n" "the server never listened: $(tail -3 "$GT_TMP/serve$v.out")"
		return
	fi
	timeout 60 wrk -t2 -c32 -d4s "http://127.0.0.1:$port/" >"$GT_TMP/wrk$v.out" 2>&1 ||
		why="wrk failed: $(tail -2 "$GT_TMP/wrk$v.out");"
	wait "$pid" || why="$why the server failed: $(tail -3 "$GT_TMP/serve$v.out");"
	reqs=$(awk '/^requests /{print $2}' "$GT_TMP/serve$v.out")
	[ "${reqs:-0}" -ge 1000 ] || why="$why ${reqs:-no} requests served;"
	[ "$(head -c 13 "$t")" = "go 1.$v trace" ] || why="$why no Go 1.$v trace;"
	if [ -z "$why" ]; then
		if [ "$v" = 22 ] && [ $have22 = 0 ]; then
			why="Go 1.22's reader not built: $(tail -3 "$GT_TMP/gtread22.log")"
		elif [ $have23 = 0 ]; then
			why="Go 1.23's reader not built: $(tail -3 "$GT_TMP/gtread23.log")"
		else
			why=$(figures "$n" "$t" "$dir/gtread1$v")
			if [ "$v" = 22 ] && ! "$dir/gtread123" "$t" | grep -q '^ok '; then
				why="$why Go 1.23's reader: $("$dir/gtread123" "$t" | cut -c1-300)"
			fi
		fi
	fi
	gt_report "$n" "$why"
	echo "# $n: $reqs requests; Go: $(cut -d' ' -f3- "$GT_TMP/$n.go" 2>/dev/null)"
}

serve 22
serve 23

# A P in a syscall at a generation's start, restated abandoned and stolen
# by M 1, which holds P 1 and enters a syscall on it at P 1's number 1.
cat >"$GT_TMP/abandoned.test" <<'TRACE'
-- expect --
SUCCESS
-- trace --
Trace Go1.22
EventBatch gen=1 m=0 time=1 size=*
ProcStatus dt=1 p=0 pstatus=1
GoStatus dt=1 g=1 m=0 gstatus=2
GoSyscallBegin dt=1 p_seq=1 stack=0
EventBatch gen=1 m=1 time=1 size=*
ProcStatus dt=2 p=1 pstatus=1
GoStatus dt=1 g=2 m=1 gstatus=2
EventBatch gen=1 m=18446744073709551615 time=0 size=*
Frequency freq=15625000
EventBatch gen=1 m=18446744073709551615 time=0 size=*
Stacks
EventBatch gen=1 m=18446744073709551615 time=0 size=*
Strings
EventBatch gen=2 m=1 time=10 size=*
ProcStatus dt=1 p=1 pstatus=1
GoStatus dt=1 g=2 m=1 gstatus=2
ProcStatus dt=1 p=0 pstatus=4
ProcSteal dt=1 p=0 p_seq=1 m=0
GoSyscallBegin dt=1 p_seq=1 stack=0
GoSyscallEnd dt=1
EventBatch gen=2 m=0 time=20 size=*
GoStatus dt=1 g=1 m=0 gstatus=3
GoSyscallEndBlocked dt=1
EventBatch gen=2 m=18446744073709551615 time=0 size=*
Frequency freq=15625000
EventBatch gen=2 m=18446744073709551615 time=0 size=*
Stacks
EventBatch gen=2 m=18446744073709551615 time=0 size=*
Strings
TRACE
why=
if ! python3 tests/lib/v2raw.py "$GT_TMP/abandoned.test" "$GT_TMP/abandoned.trace" >/dev/null; then
	why="not converted"
elif [ $have23 = 0 ]; then
	why="Go 1.23's reader not built: $(tail -3 "$GT_TMP/gtread23.log")"
else
	why=$(figures v2serve_abandoned "$GT_TMP/abandoned.trace" "$dir/gtread123")
fi
gt_report v2serve_abandoned "$why"

gt_finish
