#!/usr/bin/env bash
# record_goids.sh: the goroutine a Go thread runs, read by BPF at each
# switch-out of the thread, at each wakeup it makes and at each CPU sample
# of it (docs/mapping.md, "Goroutines of Go programs"), against the ids
# the program's goroutines know of themselves.  The goids workload
# (tests/workloads/go/goids) locks 4 goroutines to their threads on 2
# CPUs, spinning, writing to a pipe a reader thread sleeps on (each write
# wakes it: the worker is the waker) and sleeping for 1.5 s; two of them
# run under pprof.Do with a label; each prints its goid, TID, time window
# and labels.  tests/integration/goids_check.py holds the trace's
# "goroutine N {labels}" logs of each kind (switch-out, wakeup, CPU
# sample; --cpu-profile) on each thread in its window to that goroutine
# (>= 99% of each kind, and at least 10 switch-out logs a worker), and
# `report`'s table of Go goroutines has each worker on its thread, with
# its labels.  On Go 1.22 and 1.23 the program also writes its own
# runtime/trace of the run (GOIDS_TRACE), and goids_runtime.py holds every
# log of every thread of the program to the goroutine that trace has on
# that thread at the log's instant (the same CLOCK_MONOTONIC, the bound
# on their difference measured and printed): >= 99% of each kind's logs
# that trace decides (the undecidable ones, between a goroutine's status
# change and the runtime's stamp of it, printed apart).  Each trace
# gotraced writes passes Go's readers and viewers (gt_valid).
#
#  goids_go119        Go 1.19, pure Go (g at fs-8), a Go 1.19 (v1) trace.
#  goids_go119_cgo    Go 1.19 with cgo (linked by the system linker: g in
#        libc's TLS block at runtime.tlsg).
#  goids_go121, goids_go121_cgo   Go 1.21 (g.labels moved 16 bytes).
#  goids_go122, goids_go122_cgo   Go 1.22, a Go 1.22 (v2) trace.
#  goids_go123        Go 1.23 (goid moved 8 bytes), a Go 1.23 (v2) trace.
#  goids_go123_cgo_stripped  Go 1.23, cgo, -ldflags=-s -w: no symbols, no
#        DWARF: g at fs-8 and the offsets from the tables by the Go
#        version in the build info.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

CASES="goids_go119 goids_go119_cgo goids_go121 goids_go121_cgo goids_go122 goids_go122_cgo
	goids_go123 goids_go123_cgo_stripped"
# shellcheck disable=SC2086
gt_require_bpf $CASES
# shellcheck disable=SC2086
gt_expect $CASES
CTL=${GT_REAL_GTCTL:-$GTCTL} # each case names its trace version
export GOTOOLCHAIN=local

dir=$GT_BUILD/go-goids
mkdir -p "$dir"

# one_case NAME GO CGO LDFLAGS TRACE_VERSION [runtime]: runtime = also
# against the program's own runtime/trace (Go 1.22+)
one_case() {
	local name=$1 go=$2 cgo=$3 ldflags=$4 ver=$5 bin=$dir/$1 trace=$GT_TMP/$1.trace
	local rt=
	[ "${6:-}" = runtime ] && rt=$GT_TMP/$1.runtime.trace
	if [ ! -x "$go" ]; then
		fail "$name" "$go not installed"
		return
	fi
	if ! (export GOCACHE=$PWD/$dir/cache GOPATH=$PWD/$dir/gopath GO111MODULE=off GOFLAGS='' \
		CGO_ENABLED=$cgo && cd tests/workloads/go/goids && \
		"$go" build -ldflags="$ldflags" -o "$OLDPWD/$bin" .) >"$GT_TMP/$name.build" 2>&1; then
		fail "$name" "go build failed: $(tail -3 "$GT_TMP/$name.build")"
		return
	fi
	if ! GOIDS_TRACE=$rt timeout 120 "$CTL" record --cpu-profile --go-version "$ver" -o "$trace" -- "$bin" 4 1500 \
		>"$GT_TMP/$name.out" 2>"$GT_TMP/$name.err"; then
		fail "$name" "record failed: $(tail -3 "$GT_TMP/$name.err")"
		return
	fi
	gt_valid "$name" "$trace" || return
	local out rtout='' goid tid start end labels missing=
	if ! out=$(python3 tests/integration/goids_check.py "$trace" "$GT_TMP/$name.out" 2>&1); then
		fail "$name" "goroutine ids do not match the program's own"
		echo "$out" | detail
		return
	fi
	if [ -n "$rt" ] && ! rtout=$(python3 tests/integration/goids_runtime.py "$trace" "$rt" 2>&1); then
		fail "$name" "goroutine ids do not match the runtime's own trace"
		echo "$rtout" | detail
		return
	fi
	# report's table of Go goroutines has each worker on its thread
	"$GTCTL" report --top 0 "$trace" >"$GT_TMP/$name.report" 2>&1
	while read -r goid tid start end labels; do
		sed -n '/^Go goroutines on their threads/,/^$/p' "$GT_TMP/$name.report" |
			awk -v g="$goid" -v t="$tid" -v l="$labels" \
				'$1 == g && $2 == t && $4 > 0 && $NF == (l == "" ? $NF : l) { f = 1 }
				 END { exit !f }' ||
			missing="$missing $goid/$tid$labels"
	done <"$GT_TMP/$name.out"
	if [ -n "$missing" ]; then
		fail "$name" "report's Go goroutines table lacks goroutine/thread$missing"
		sed -n '/^Go goroutines on their threads/,/^$/p' "$GT_TMP/$name.report" | detail
		return
	fi
	ok "$name"
	echo "$out" | tail -1 | detail
	if [ -n "$rt" ]; then echo "$rtout" | grep -E "^(clocks|undecidable|logs naming)" | detail; fi
}

one_case goids_go119 /usr/bin/go 0 "" 1.19
one_case goids_go119_cgo /usr/bin/go 1 "" 1.19
one_case goids_go121 /usr/lib/go-1.21/bin/go 0 "" 1.19
one_case goids_go121_cgo /usr/lib/go-1.21/bin/go 1 "" 1.19
one_case goids_go122 /usr/lib/go-1.22/bin/go 0 "" 1.22 runtime
one_case goids_go122_cgo /usr/lib/go-1.22/bin/go 1 "" 1.22 runtime
one_case goids_go123 "$GT_GO123" 0 "" 1.23 runtime
one_case goids_go123_cgo_stripped "$GT_GO123" 1 "-s -w" 1.19 runtime
gt_finish
