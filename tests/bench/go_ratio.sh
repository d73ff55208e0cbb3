# go_ratio.sh: what bench_reader.sh and bench_report.sh share, to source
# with their arguments BUILD [FILE]: build and file (default
# stress_1_19_good from Go's source), timing a command (best of $runs
# runs), Go 1.19's own reader on the file, and the summary of ours against
# it.  Errors name the script.
build=${1:-build}
file=${2:-$(go env GOROOT)/src/internal/trace/testdata/stress_1_19_good}
runs=5

now_ms() { date +%s%N | awk '{printf "%.3f", $1 / 1e6}'; }

# best_ms CMD...: the fastest of $runs runs of CMD, in ms.
best_ms() {
	local best="" t0 t1 d
	for _ in $(seq 1 "$runs"); do
		t0=$(now_ms)
		"$@" >/dev/null 2>&1
		t1=$(now_ms)
		d=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')
		if [ -z "$best" ] || awk -v d="$d" -v b="$best" 'BEGIN{exit !(d < b)}'; then
			best=$d
		fi
	done
	echo "$best"
}

# go_trace_tool FILE: sets gotrace, Go's trace tool itself (no `go`
# launcher), or exits saying why it cannot time FILE.
go_trace_tool() {
	[ -f "$1" ] || { echo "$(basename "$0"): no such trace: $1" >&2; exit 1; }
	gotrace=$(go env GOTOOLDIR)/trace
	[ -x "$gotrace" ] || { echo "$(basename "$0"): Go's trace tool not found at $gotrace" >&2; exit 1; }
}

# go_time FILE: sets events (the lines `go tool trace -d` prints) and
# go_ms (its best time).
go_time() {
	events=$("$gotrace" -d "$1" 2>/dev/null | wc -l)
	go_ms=$(best_ms "$gotrace" -d "$1")
}

# go_summary WHAT FILE OURS_LINE: the file, Go's time, ours (OURS_LINE
# after the label WHAT), and our speed and ratio (target >= 10x).
go_summary() {
	echo "trace:            $2 ($(stat -c %s "$2") bytes, $events events)"
	echo "go tool trace -d: $go_ms ms (best of $runs)"
	echo "$3"
	awk -v g="$go_ms" -v o="$ours_ms" -v n="$events" -v w="$1" 'BEGIN{
		printf "%-18s%.1f M events/s\n", w " speed:", n / o / 1e3
		printf "ratio:            %.1fx faster than go tool trace -d (target >= 10x)\n", g / o }'
}
