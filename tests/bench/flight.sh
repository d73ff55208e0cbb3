#!/usr/bin/env bash
# flight.sh BUILD: what a flight recording (record --flight) costs and how
# fast it answers (figures only, no assertions; noisy on a small machine):
#  1. trigger-to-file: the stall workload stalls once 80 ms in ppoll;
#     `--trigger 'syscall:ppoll>40ms' --after 200ms`: how long after the
#     trigger plus --after the file is in place (median of FLIGHT_RUNS;
#     goal <= 100 ms), and how long the dump itself took;
#     the same through gotraced (record --flight --detach, the stall
#     attached by -p): the daemon's log says how long after;
#  2. memory: gotracectl's RSS during FLIGHT_SECONDS (default 600) of a
#     busy flight recording (pingpong, default 64 MiB cap), sampled every
#     10 s: it must stay flat, under the cap plus the engine's own;
#  3. the target's slowdown: pingpong (strict pipe, FLIGHT_ROUNDS round
#     trips) untraced, under a recording and under a flight recording;
#  4. dumps under load: a busy flight recording (pingpong, 7 s window,
#     rings of FLIGHT_RING KiB per CPU, default 8192: half the default, so
#     that a stalled reader shows) gets 3 SIGUSR1 3 s apart, or none: how
#     long each dump took and how many events the kernel dropped in each
#     run (the dump is written on its own thread while the rings are read).
# FLIGHT_SECONDS=60 (say) shortens step 2 for a quick run.
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
GTCTL=$build/gotracectl
RUNS=${FLIGHT_RUNS:-3}
SECONDS_BUSY=${FLIGHT_SECONDS:-600}
N=${FLIGHT_ROUNDS:-50000}
tmp=$(mktemp -d /tmp/gt-flight-bench.XXXXXX)
rec_pid=
trap '[ -n "$rec_pid" ] && kill "$rec_pid" 2>/dev/null; rm -rf "$tmp"' EXIT

for f in "$GTCTL" "$build/workloads/stall" "$build/workloads/pingpong"; do
	[ -x "$f" ] || { echo "flight: $f not built (make BUILD=$build tests)"; exit 1; }
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }

# 1. trigger-to-file
lat=() took=()
for i in $(seq 1 "$RUNS"); do
	rm -f "$tmp"/*.trace
	"$GTCTL" record --standalone -q --flight=5s --trigger 'syscall:ppoll>40ms' --after 200ms \
		-o "$tmp/t.trace" -- "$build/workloads/stall" 6000 80 >/dev/null 2>"$tmp/t.err" ||
		{ echo "flight: the trigger run failed: $(tail -2 "$tmp/t.err")"; exit 1; }
	l=$(sed -n 's/.*; \([0-9.]*\) ms after the trigger and --after.*/\1/p' "$tmp/t.err")
	t=$(sed -n 's/^gotracectl: wrote .* bytes in \([0-9.]*\) ms.*/\1/p' "$tmp/t.err")
	[ -n "$l" ] && lat+=("$l") && took+=("$t")
done
echo "trigger-to-file: $(printf '%s\n' "${lat[@]}" | median) ms after --after ends," \
	"median of ${#lat[@]} (goal <= 100 ms); the dump itself $(printf '%s\n' "${took[@]}" | median) ms"

# 1b. trigger-to-file in gotraced (a private daemon on a temporary socket)
sock=$tmp/gd.sock
"$build/gotraced" --socket "$sock" 2>"$tmp/gd.log" &
gd_pid=$!
for _ in $(seq 1 300); do grep -q 'ready on' "$tmp/gd.log" && break; sleep 0.1; done
dlat=()
for i in $(seq 1 "$RUNS"); do
	mkfifo "$tmp/st$i.in"
	"$build/workloads/stall" --wait 6000 80 <"$tmp/st$i.in" >"$tmp/st$i.out" &
	st_pid=$!
	exec 7>"$tmp/st$i.in"
	for _ in $(seq 1 100); do grep -q '^ready' "$tmp/st$i.out" && break; sleep 0.05; done
	id=$("$GTCTL" record --socket "$sock" -p "$st_pid" --flight=5s --detach -o "$tmp/gd$i" \
		--trigger 'syscall:ppoll>40ms' --after 200ms 2>/dev/null)
	printf g >&7
	exec 7>&-
	wait "$st_pid"
	for _ in $(seq 1 100); do grep -q "session $id: wrote" "$tmp/gd.log" && break; sleep 0.1; done
	l=$(sed -n "s/.*session $id: wrote .*; \([0-9.-]*\) ms after the trigger and --after.*/\1/p" "$tmp/gd.log")
	[ -n "$l" ] && dlat+=("$l")
done
kill -TERM "$gd_pid"
wait "$gd_pid"
echo "trigger-to-file through gotraced: $(printf '%s\n' "${dlat[@]}" | median) ms after --after ends," \
	"median of ${#dlat[@]} (goal <= 100 ms)"

# 2. memory over a busy flight recording
rss() { awk '$1 == "VmRSS:" { print int($2 / 1024) }' "/proc/$1/status" 2>/dev/null; }
"$GTCTL" record --standalone -q --flight -o "$tmp/m.trace" -- \
	"$build/workloads/pingpong" 1000000000000 >/dev/null 2>"$tmp/m.err" &
rec_pid=$!
sleep 10
samples=()
for ((s = 0; s < SECONDS_BUSY; s += 10)); do
	samples+=("$(rss "$rec_pid")")
	sleep 10
done
kill -INT "$rec_pid"
wait "$rec_pid"
rec_pid=
first=${samples[0]} last=${samples[-1]}
max=$(printf '%s\n' "${samples[@]}" | sort -n | tail -1)
echo "rss of a busy flight recording over ${SECONDS_BUSY}s: ${first} MiB after 10 s," \
	"${last} MiB at the end, ${max} MiB at most (cap 64 MiB; flat is the goal)"
echo "rss samples every 10 s (MiB): ${samples[*]}"
tail -1 "$tmp/m.err"

# 3. slowdown
elapsed() { awk '$1 == "elapsed_ns" { print $2 }' "$1"; }
for kind in none record flight; do
	v=()
	for i in $(seq 1 "$RUNS"); do
		case $kind in
		none) "$build/workloads/pingpong" "$N" strict pipe >"$tmp/p.out" ;;
		record) "$GTCTL" record --standalone -q -o "$tmp/p.trace" -- \
			"$build/workloads/pingpong" "$N" strict pipe >"$tmp/p.out" 2>/dev/null ;;
		flight) "$GTCTL" record --standalone -q --flight -o "$tmp/p.trace" -- \
			"$build/workloads/pingpong" "$N" strict pipe >"$tmp/p.out" 2>/dev/null ;;
		esac
		v+=("$(elapsed "$tmp/p.out")")
	done
	eval "t_$kind=$(printf '%s\n' "${v[@]}" | median)"
done
awk -v n="$t_none" -v r="$t_record" -v f="$t_flight" -v rounds="$N" 'BEGIN {
	printf "pingpong %d round trips: untraced %.1f ms, recorded %.1f ms (x%.2f), flight %.1f ms (x%.2f)\n",
		rounds, n / 1e6, r / 1e6, r / n, f / 1e6, f / n }'

# 4. dumps under load
RING=${FLIGHT_RING:-8192}
for kind in none usr1; do
	rm -f "$tmp"/d-*.trace
	"$GTCTL" record --standalone -q --ring-size "$RING" --flight=7s -o "$tmp/d.trace" -- \
		"$build/workloads/pingpong" 1000000000000 >/dev/null 2>"$tmp/d.err" &
	rec_pid=$!
	sleep 9
	for i in 1 2 3; do
		[ "$kind" = usr1 ] && kill -USR1 "$rec_pid"
		sleep 3
	done
	kill -INT "$rec_pid"
	wait "$rec_pid"
	rec_pid=
	took=$(sed -n 's/^gotracectl: wrote .* (\([0-9]*\) bytes in \([0-9.]*\) ms.*/\2 ms (\1 bytes)/p' "$tmp/d.err" |
	       paste -sd, -)
	lost=$(sed -n 's/.*; \([0-9]*\) events lost by the kernel$/\1/p' "$tmp/d.err")
	echo "busy flight recording, 18 s, rings ${RING} KiB, dumps: ${kind}: ${took:-none};" \
		"${lost:-?} events lost by the kernel"
done
