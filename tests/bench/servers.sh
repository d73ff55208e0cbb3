#!/usr/bin/env bash
# servers.sh BUILD: what recording costs a production server (figures only,
# no assertions).  nginx (master + 2 workers, tests/servers/nginx.conf.in)
# on a loopback port under `wrk -t2 -c32`, in interleaved rounds so that a
# busy machine's drift hits every mode alike:
#
#   untraced | gotraced default | --heap=off | --heap=rss | --heap=malloc |
#   --syscalls=all | `perf sched record` | an empty program on sys_enter
#
# (the default records what perf sched records: switches, wakeups and the
# syscalls that block, with stacks; --syscalls=all records every syscall
# entry with its stack, which perf sched does not; "sys-enter-floor" is a
# BPF program that does nothing, attached to sys_enter: what any recording
# of every syscall costs before it does anything)
#
# each recorder attached to the running nginx (-p master,workers) before the
# load starts.  Printed: the median req/s of each mode and its cost against
# untraced.  Then the drop point: the default recording while two CPU hogs
# keep both cores busy, the load doubled step by step (wrk -c 1, 2, 4, ...):
# trace events/s at each step and the first step with drops.
#
# SERVERS_RUNS (3) rounds of SERVERS_SECONDS (3) each.
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
GTCTL=$build/gotracectl
RUNS=${SERVERS_RUNS:-3}
SECS=${SERVERS_SECONDS:-3}
MODES="untraced default heap-off heap-rss heap-malloc syscalls-all perf-sched sys-enter-floor"
tmp=$(mktemp -d /tmp/gt-bench-servers.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	# (nginx removes its pid file as it exits: it may be gone by now)
	local m
	m=$(cat "$tmp/nginx.pid" 2>/dev/null) && [ -n "$m" ] && kill "$m" 2>/dev/null
	sleep 0.5
	rm -rf "$tmp"
}
trap cleanup EXIT

for t in nginx wrk perf; do
	command -v $t >/dev/null || { echo "servers: $t not installed (tests/deps.sh)"; exit 1; }
done
[ -x "$GTCTL" ] || { echo "servers: $GTCTL not built"; exit 1; }
[ -x "$build/bench/bench_floor" ] || { echo "servers: $build/bench/bench_floor not built (make bench)"; exit 1; }

port=$(( (RANDOM % 20000) + 20000 ))
sed -e "s#@DIR@#$tmp#g" -e "s#@PORT@#$port#g" tests/servers/nginx.conf.in >"$tmp/nginx.conf"
nginx -c "$tmp/nginx.conf" -p "$tmp" -e "$tmp/error.log" &
pids+=($!)
for _ in $(seq 1 100); do
	[ "$(curl -s "http://127.0.0.1:$port/")" = hello ] && [ -s "$tmp/nginx.pid" ] && break
	sleep 0.1
done
master=$(cat "$tmp/nginx.pid" 2>/dev/null)
workers=$(pgrep -P "${master:-1}" -d,)
[ -n "$workers" ] || { echo "servers: nginx did not start: $(tail -3 "$tmp/error.log")"; exit 1; }
targets=$master,$workers

# recording PID: the recorder's main thread waits in epoll (its event
# loop: the session runs), as tests/integration/lib.sh's gt_recording.
recording() {
	local nr
	read -r nr _ <"/proc/$1/syscall" 2>/dev/null || return 1
	[ "$nr" = 232 ] || [ "$nr" = 281 ] || [ "$nr" = 441 ]
}

# start MODE: starts MODE's recorder on nginx (REC), waits until it records.
start() {
	local flags=()
	REC=
	case $1 in
	untraced) return 0 ;;
	sys-enter-floor)
		"$build/bench/bench_floor" --hold sys_enter 2>"$tmp/rec.err" &
		REC=$!
		sleep 0.5
		kill -0 "$REC" 2>/dev/null
		return ;;
	perf-sched)
		perf sched record -o "$tmp/perf.data" -p "$targets" >"$tmp/rec.err" 2>&1 &
		REC=$!
		sleep 2 # perf has no sign of having attached but its output
		return 0 ;;
	heap-off) flags=(--heap=off) ;;
	heap-rss) flags=(--heap=rss) ;;
	heap-malloc) flags=(--heap=malloc) ;;
	syscalls-all) flags=(--syscalls=all) ;;
	esac
	"$GTCTL" record -q "${flags[@]}" -p "$targets" -o "$tmp/t.trace" 2>"$tmp/rec.err" &
	REC=$!
	for _ in $(seq 1 1200); do
		recording "$REC" && return 0
		kill -0 "$REC" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

stop() {
	[ -n "$REC" ] || return 0
	kill -INT "$REC" 2>/dev/null
	wait "$REC" 2>/dev/null
}

# load CONNS: one wrk run (two threads from 2 connections); prints its req/s.
load() {
	local t=2
	[ "$1" -lt 2 ] && t=1
	wrk -t$t -c"$1" -d"${SECS}s" "http://127.0.0.1:$port/" 2>&1 |
		awk '/^Requests\/sec/ { print $2 }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }

declare -A got=()
for r in $(seq 1 "$RUNS"); do
	for m in $MODES; do
		if ! start "$m"; then
			echo "round $r $m: the recorder did not start: $(tail -2 "$tmp/rec.err")"
			continue
		fi
		rps=$(load 32)
		stop
		echo "round $r $m: ${rps:-?} req/s"
		got[$m]="${got[$m]:-} ${rps:-0}"
	done
done

echo
echo "nginx under wrk -t2 -c32, median of $RUNS interleaved rounds of ${SECS}s:"
base=$(echo "${got[untraced]:-0}" | tr ' ' '\n' | grep . | median)
for m in $MODES; do
	med=$(echo "${got[$m]:-0}" | tr ' ' '\n' | grep . | median)
	awk -v m="$m" -v v="$med" -v b="$base" 'BEGIN {
		printf "  %-16s %10.0f req/s  %6.1f%% of untraced\n", m, v, (b > 0 ? 100 * v / b : 0) }'
done

# --- where drops begin with both cores busy ------------------------------
echo
echo "drop point: default recording, two CPU hogs, wrk -c N for ${SECS}s:"
for _ in 1 2; do
	timeout 600 sh -c 'while :; do :; done' &
	pids+=($!)
done
first=
for c in 1 2 4 8 16 32; do
	start default || { echo "  c=$c: the recorder did not start"; continue; }
	rps=$(load "$c")
	stop
	line=$(grep recorded "$tmp/rec.err")
	ev=$(sed -n 's/.* \([0-9]*\) events.*/\1/p' <<<"$line")
	dr=$(sed -n 's/.* \([0-9]*\) dropped.*/\1/p' <<<"$line")
	span=$(sed -n 's/.* in \([0-9.]*\)s .*/\1/p' <<<"$line")
	rate=$(awk -v e="${ev:-0}" -v s="${span:-0}" 'BEGIN { printf "%.0f", (s > 0 ? e / s : 0) }')
	echo "  c=$c: ${rps:-?} req/s, ${ev:-?} trace events (~$rate/s), ${dr:-?} kernel events dropped"
	[ -z "$first" ] && [ "${dr:-0}" -gt 0 ] && first="c=$c at ~$rate events/s"
done
echo "drops begin: ${first:-not reached (none dropped up to c=32)}"
