# v2big.sh: what the report memory test (tests/integration/report_v2memory.sh)
# and its bench (tests/bench/bench_report_v2.sh) share, to source: a large Go
# 1.23 runtime trace made at run time (never committed), its generations,
# and a command's peak memory.

# v2big_trace GO DIR OUT MB: builds tests/workloads/go/v2big with GO into
# DIR (once; its build cache there too) and runs it until OUT holds MB MiB.
# Non-zero with the reason on stderr.
v2big_trace() {
	local go=$1 dir=$2 out=$3 mb=$4
	mkdir -p "$dir" || return 1
	if [ ! -x "$dir/v2big" ] || [ tests/workloads/go/v2big/main.go -nt "$dir/v2big" ]; then
		(export GOCACHE=$PWD/$dir/cache GOPATH=$PWD/$dir/gopath GO111MODULE=off GOFLAGS= \
			CGO_ENABLED=0 && "$go" build -o "$dir/v2big" tests/workloads/go/v2big/main.go) \
			>"$dir/build.log" 2>&1 || { echo "go build v2big: $(tail -3 "$dir/build.log")" >&2; return 1; }
	fi
	"$dir/v2big" "$out" "$mb" || { echo "v2big $out $mb failed" >&2; return 1; }
	[ "$(head -c 13 "$out")" = "go 1.23 trace" ] || { echo "v2big wrote no Go 1.23 trace" >&2; return 1; }
}

# v2_gens TRACE: "GENERATIONS LARGEST" (the bytes of its largest
# generation's batches, headers included), from the batch headers.
v2_gens() {
	python3 - "$1" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()

def uv(pos):
    v = shift = 0
    while True:
        b = d[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, pos

gens, pos = {}, 16
while pos < len(d):
    start = pos
    pos += 2 if d[pos] == 49 else 1  # ExperimentalBatch: and its number
    gen, pos = uv(pos)
    for _ in range(2):  # m, time
        _, pos = uv(pos)
    size, pos = uv(pos)
    pos += size
    gens[gen] = gens.get(gen, 0) + pos - start
print(len(gens), max(gens.values()) if gens else 0)
PY
}

# time_rss CMD...: runs CMD (its output to /dev/null) and prints its wall
# time in seconds and its peak resident memory in KiB (ru_maxrss, through
# /usr/bin/time: a child forked by python3 or bash would start its count
# at its parent's size); CMD's exit status.
time_rss() {
	local f rc
	f=$(mktemp) || return 1
	/usr/bin/time -f "%e %M" -o "$f" "$@" >/dev/null
	rc=$?
	tail -1 "$f"
	rm -f "$f"
	return $rc
}

# peak_rss_kb CMD...: time_rss's KiB alone.
peak_rss_kb() {
	local out rc
	out=$(time_rss "$@")
	rc=$?
	echo "${out#* }"
	return $rc
}
