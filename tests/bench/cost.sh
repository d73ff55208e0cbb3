#!/usr/bin/env bash
# cost.sh BUILD: the always-on cost of gotraced in one run, beside `perf
# sched record` (issue 34; figures only, no assertions; docs/design.md
# "Cost" holds the figures).  Every table is interleaved: one run of each
# column in turn, COST_RUNS rounds, then the medians, so that the drifts
# of a shared machine hit every column alike.
#
#  1. The traced program: ping-pong over pipes (pingpong) and over
#     loopback TCP (tcppingpong, 2 processes), pinned (`strict`: CPU 0,
#     SCHED_FIFO) and unpinned, COST_ROUNDS round trips timed by the
#     program itself: untraced | perf sched record | gotraced default |
#     gotraced --flight (embedded, the program started by the recorder);
#     the loop's wall time, and the program's CPU time (its cpu_ns: the
#     BPF programs run in its context and count; the machine's other
#     load does not, as it does in the wall time).
#  2. Bystanders: untraced programs, switch-heavy (a pipe ping-pong of
#     two threads pinned to CPU 0), syscall-heavy (getppid loop), CPU-bound
#     (arithmetic): alone | beside an idle daemon (no session) | beside
#     programs that do nothing on sched_switch and sched_waking (the floor
#     of any filter there: bench_floor --hold) | beside a
#     default recording of another process | beside a flight recording of
#     it | beside `perf sched record -p` of it.  Each is one resident
#     process (`fixedwork serve`) that does COST_BLOCKS (3) runs of its
#     work in every column of every round.  The other process (a thread
#     sleeping 500 us, 2000 times a second) runs in every column.  Both
#     the loop's wall time and the process's CPU time over it (user +
#     system: what the tracer's programs add runs in its context) are
#     shown; on a shared machine the wall time is mostly the others' load.
#     Then the switch-heavy one by counts that the machine's load hardly
#     moves (bystander_counts.py): BPF runs and ns per round trip,
#     interrupts and IPIs on its CPU and its preemptions per 1 000 round
#     trips, the recorder's (daemon's, perf's) wakeups a second and CPU.
#  3. The flight recorder on a busy server: nginx (tests/servers) under
#     `wrk -t2 -c32` for COST_SERVER_SECONDS (60), recorded by
#     `record --flight` (default window and cap): the recorder's CPU time
#     (all its threads, from /proc) per million kernel records read, its
#     RSS before the load and every 10 s (before and at the end by part:
#     the rings, the heap, the files it maps), and what the window holds
#     per second of window (its own count of bytes held over their span).
#
# overhead.sh, overhead_all.sh, flight.sh and servers.sh have more
# columns of each (kernel stacks, --syscalls=all, -a, heap, dumps); this
# one is the table of issue 34.  About 5 minutes on the 2-CPU machine.
# COST_PARTS="2" runs only part 2 (any of 1 2 3; default all).
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
GTCTL=$build/gotracectl
PP=$build/workloads/pingpong
TPP=$build/workloads/tcppingpong
FW=$build/workloads/fixedwork
FLOOR=$build/bench/bench_floor
N=${COST_ROUNDS:-50000}
RUNS=${COST_RUNS:-5}
SRV_SECS=${COST_SERVER_SECONDS:-60}
tmp=$(mktemp -d /tmp/gt-cost.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
	local p m
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	m=$(cat "$tmp/nginx.pid" 2>/dev/null) && [ -n "$m" ] && kill "$m" 2>/dev/null
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	gt_bpf_stats_restore 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
. tests/bench/bpf_progs.sh # gt_bpf_stats_on, gt_bpf_stats_restore

for f in "$GTCTL" "$build/gotraced" "$PP" "$TPP" "$FW" "$FLOOR" "$build/workloads/sleeper"; do
	[ -x "$f" ] || { echo "cost: $f not built (make BUILD=$build tests)"; exit 1; }
done
for t in perf nginx wrk curl; do
	command -v $t >/dev/null || { echo "cost: $t not installed (make deps)"; exit 1; }
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }
elapsed() { awk '$1 == "elapsed_ns" { print $2 }' "$1"; }
# pct X BASE: X against BASE, "+1.23%"
pct() { awk -v x="$1" -v b="$2" 'BEGIN { printf "%+.2f%%", (b > 0 ? (x / b - 1) * 100 : 0) }'; }
# recording PID: the recorder's main thread waits in epoll (its loop runs),
# as tests/integration/lib.sh's gt_recording.
recording() {
	local nr
	read -r nr _ <"/proc/$1/syscall" 2>/dev/null || return 1
	[ "$nr" = 232 ] || [ "$nr" = 281 ] || [ "$nr" = 441 ]
}
wait_recording() { # wait_recording PID: 0 once it records, 1 if it died
	local i
	for i in $(seq 1 1200); do
		recording "$1" && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# want PART: whether COST_PARTS (default "1 2 3") asks for that part
want() { [[ " ${COST_PARTS:-1 2 3} " == *" $1 "* ]]; }

echo "== load: $(uptime)"
start_s=$SECONDS

# ---- 1. the traced program ---------------------------------------------------
if want 1; then
	# run_traced COL WL...: one run of WL under COL; appends its loop ns to
	# $tmp/t.WLNAME.COL (WLNAME: $wl).
	run_traced() {
		local col=$1 out=$tmp/t.out err=$tmp/t.err
		shift
		rm -f "$tmp/t.trace" "$tmp/p.data"
		case $col in
		untraced) "$@" >"$out" 2>"$err" ;;
		perf-sched) perf sched record -o "$tmp/p.data" -- "$@" >"$out" 2>"$err" ;;
		default) "$GTCTL" record -q --standalone -o "$tmp/t.trace" -- "$@" >"$out" 2>"$err" ;;
		flight) "$GTCTL" record -q --standalone --flight -o "$tmp/t.trace" -- "$@" >"$out" 2>"$err" ;;
		esac
		local ns cpu
		ns=$(elapsed "$out")
		cpu=$(awk '$1 == "cpu_ns" { print $2 }' "$out")
		[ -n "$ns" ] || { echo "cost: $wl under $col failed: $(tail -2 "$err")"; return; }
		echo "$ns ${cpu:-0}" >>"$tmp/t.$wl.$col"
	}
	cols="untraced perf-sched default flight"
	wls=("pipe-pinned|$PP $N strict pipe" "pipe-unpinned|$PP $N pipe"
		"tcp-pinned|$TPP $N strict" "tcp-unpinned|$TPP $N")
	echo
	echo "== the traced program: ping-pong, $N round trips, median of $RUNS interleaved rounds"
	for _ in $(seq 1 "$RUNS"); do
		for w in "${wls[@]}"; do
			wl=${w%%|*}
			for c in $cols; do run_traced "$c" ${w#*|}; done
		done
	done
	for field in 1 2; do
		what=("" "wall time of the loop" "CPU time of the program (user + system, the BPF programs' time included)")
		echo "${what[$field]}:"
		printf '%-14s %10s %22s %22s %22s\n' workload "untraced" "perf sched record" "gotraced default" "gotraced --flight"
		for w in "${wls[@]}"; do
			wl=${w%%|*}
			base=$(awk -v f=$field '{ print $f }' "$tmp/t.$wl.untraced" 2>/dev/null | median)
			line=$(printf '%-14s %7.1f ms' "$wl" "$(awk -v b="${base:-0}" 'BEGIN { print b / 1e6 }')")
			for c in perf-sched default flight; do
				v=$(awk -v f=$field '{ print $f }' "$tmp/t.$wl.$c" 2>/dev/null | median)
				line+=$(awk -v v="${v:-0}" -v b="${base:-0}" 'BEGIN {
					printf " %9.1f ms %9.2fx  ", v / 1e6, (b > 0 ? v / b : 0) }')
			done
			echo "$line"
		done
	done
	echo "figure: traced ping-pong slowdown (x untraced) above; goal: every gotraced column <= perf sched's"
	# The same rounds paired: a column's CPU time over perf sched's in the
	# same round, whose placement swings (unpinned: 2 s of CPU untraced,
	# 0.3 pinned) hit both alike more than they hit two medians.
	echo "paired by round, CPU time over perf sched's in the same round (median; rounds at or below):"
	for w in "${wls[@]}"; do
		wl=${w%%|*}
		line=$(printf '%-14s' "$wl")
		for c in default flight; do
			# a failed run (said above) leaves a line out: no pairs then
			[ "$(grep -c . "$tmp/t.$wl.perf-sched" 2>/dev/null)" = "$(grep -c . "$tmp/t.$wl.$c" 2>/dev/null)" ] ||
				{ line+="  $c: a run failed, not paired"; continue; }
			pairs=$(paste -d' ' "$tmp/t.$wl.perf-sched" "$tmp/t.$wl.$c" 2>/dev/null |
				awk 'NF == 4 && $2 > 0 { print $4 / $2 }')
			n=$(grep -c . <<<"$pairs")
			low=$(awk '$1 <= 1' <<<"$pairs" | grep -c .)
			line+=$(printf '  %s %.3f (%d of %d)' "$c" "$(median <<<"$pairs")" "$low" "$n")
		done
		echo "$line"
	done
fi

# ---- 2. bystanders -----------------------------------------------------------
if want 2; then
	# Each kind is one resident process (`fixedwork serve`), asked for
	# COST_BLOCKS runs of its work in every setting of every round: a new
	# process a run left the syscall loop's modes in the figures (its first
	# blocks slower, some processes slower throughout: +23% beside an idle
	# daemon that attaches nothing, in a median of 7 fresh processes).
	# "WALL_NS CPU_NS" a run: the loop's own time and the process's CPU time
	# over it (user + system: what the tracer's programs add runs there; the
	# wall time of a bystander on a shared machine is mostly the others' load).
	kinds=("switch-heavy|switch $N" "syscall-heavy|sys 1000000" "cpu-bound|cpu 100000000")
	BLOCKS=${COST_BLOCKS:-3}
	fds=()
	trap '' PIPE
	for k in "${kinds[@]}"; do
		n=${k%%|*}
		mkfifo "$tmp/r.$n.in" "$tmp/r.$n.out"
		"$FW" serve <"$tmp/r.$n.in" >"$tmp/r.$n.out" 2>"$tmp/r.$n.err" &
		pids+=($!)
		exec {fin}>"$tmp/r.$n.in" {fout}<"$tmp/r.$n.out"
		fds+=("$fin $fout")
	done
	one_each() { # one_each SETTING: COST_BLOCKS runs of each kind
		local i b fin fout line
		for i in "${!kinds[@]}"; do
			read -r fin fout <<<"${fds[$i]}"
			for b in $(seq 1 "$BLOCKS"); do
				# (SIGPIPE ignored above: a dead resident fails the echo)
				{ echo "${kinds[$i]#*|}" >&"$fin" && read -r line <&"$fout"; } ||
					{ echo "cost: bystander ${kinds[$i]%%|*} died: $(tail -1 "$tmp/r.${kinds[$i]%%|*}.err")"; return 1; }
				awk '{ print $2, $4 }' <<<"$line" >>"$tmp/b.$1.${kinds[$i]%%|*}"
			done
		done
	}
	one_each warmup >/dev/null # a new process's first runs are slower
	"$build/workloads/sleeper" 100000000 500 >/dev/null 2>&1 &
	neighbour=$!
	pids+=("$neighbour")
	echo
	echo "== bystanders: untraced programs beside gotraced, median of $RUNS interleaved rounds of $BLOCKS runs (goal +1%)"
	settings="alone idle-daemon floor default flight perf-sched"
	# start_setting S: starts what the bystanders run beside in setting S (rec:
	# its pid, empty for alone); 1 if it did not start
	start_setting() {
		rec=
		case $1 in
		idle-daemon)
			rm -f "$tmp/idle.sock"
			"$build/gotraced" --socket "$tmp/idle.sock" >/dev/null 2>"$tmp/idle.err" &
			rec=$!
			for _ in $(seq 1 100); do [ -S "$tmp/idle.sock" ] && break; sleep 0.1; done ;;
		floor) # programs that do nothing on the two tracepoints every switch and wakeup runs
			"$FLOOR" --hold sched_switch sched_waking 2>"$tmp/b.err" &
			rec=$!
			sleep 0.5
			kill -0 "$rec" 2>/dev/null || { echo "cost: the floor did not attach: $(tail -2 "$tmp/b.err")"; return 1; } ;;
		default | flight)
			flags=()
			[ "$1" = flight ] && flags=(--flight)
			"$GTCTL" record -q --standalone "${flags[@]}" -p "$neighbour" -o "$tmp/b.trace" \
				>/dev/null 2>"$tmp/b.err" &
			rec=$!
			wait_recording "$rec" || { echo "cost: the $1 recording did not start: $(tail -2 "$tmp/b.err")"; return 1; } ;;
		perf-sched)
			perf sched record -o "$tmp/b.data" -p "$neighbour" >/dev/null 2>"$tmp/b.err" &
			rec=$!
			sleep 2 ;; # perf has no sign of having attached but its output
		esac
	}
	stop_setting() { # stop_setting S
		[ -n "$rec" ] || return 0
		if [ "$1" = idle-daemon ] || [ "$1" = floor ]; then kill -TERM "$rec"; else kill -INT "$rec"; fi
		wait "$rec"
	}
	for _ in $(seq 1 "$RUNS"); do
		for s in $settings; do
			start_setting "$s" || continue
			one_each "$s"
			stop_setting "$s"
		done
	done
	# The same bystander by counts, which the machine's other load moves far
	# less than its CPU time (COST_COUNT_RUNS interleaved rounds, the lowest): the
	# switch-heavy bystander once beside each setting, with the kernel's BPF
	# statistics on for these runs only (they add ~65 ns to every program run,
	# so they are off for the CPU times above).  bystander_counts.py.
	gt_bpf_stats_on || echo "cost: cannot enable kernel.bpf_stats_enabled: no BPF counts"
	for _ in $(seq 1 "${COST_COUNT_RUNS:-3}"); do
		for s in $settings; do
			start_setting "$s" || continue
			python3 tests/bench/bystander_counts.py run "${rec:-0}" "$PP" "$N" strict pipe >>"$tmp/c.$s"
			stop_setting "$s"
		done
	done
	gt_bpf_stats_restore
	kill "$neighbour"
	wait "$neighbour" 2>/dev/null
	# the residents: their pipes closed, and killed (each later background
	# job, another resident too, holds copies of the fds: EOF may not come)
	for f in "${fds[@]}"; do
		read -r fin fout <<<"$f"
		exec {fin}>&- {fout}<&-
	done
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	# The lowest run too: this VM's host slows a process for spells of a few
	# hundred ms (a getppid loop 49.5 or 65 ms a block, flipping within one
	# process, pinned or not), which only adds; what the tracer adds is in
	# every run, the slow spells' lowest one included.
	lowest() { sort -n | head -1; }
	for table in "1 median wall time of the loop, median" \
		"2 median CPU time of the program (user + system), median" \
		"2 lowest CPU time of the program, the lowest of its runs"; do
		read -r field stat what <<<"$table"
		echo "$what:"
		printf '%-14s %9s %12s %15s %18s %18s %18s\n' bystander "alone ms" "idle daemon" "empty progs" \
			"default of other" "--flight of other" "perf sched -p"
		for k in "${kinds[@]}"; do
			n=${k%%|*}
			a=$(awk -v f="$field" '{ print $f }' "$tmp/b.alone.$n" | $stat)
			line=$(printf '%-14s %9.1f' "$n" "$(awk -v a="$a" 'BEGIN { print a / 1e6 }')")
			w=12
			for s in idle-daemon floor default flight perf-sched; do
				line+=$(printf " %${w}s" "$(pct "$(awk -v f="$field" '{ print $f }' "$tmp/b.$s.$n" | $stat)" "$a")")
				[ "$s" = idle-daemon ] && w=15 || w=18
			done
			echo "$line"
		done
	done
	echo "figure: bystander slowdown beside each above; goal: <= +1% (done when <= +2%); 'empty progs': programs"
	echo "that return at once on sched_switch and sched_waking (bench_floor --hold), the floor of any filter there"
	echo "counts of the switch-heavy bystander, lowest of ${COST_COUNT_RUNS:-3} interleaved rounds (what the programs and"
	echo "the recorder add to it; 'other' is the recorder, the daemon or perf):"
	python3 tests/bench/bystander_counts.py table "$tmp/c." alone idle-daemon floor default flight perf-sched
fi

# ---- 3. the flight recorder on a busy server ---------------------------------
if want 3; then
	echo
	echo "== the flight recorder on a busy server: nginx under wrk -t2 -c32, ${SRV_SECS} s"
	port=$(((RANDOM % 20000) + 20000))
	sed -e "s#@DIR@#$tmp#g" -e "s#@PORT@#$port#g" tests/servers/nginx.conf.in >"$tmp/nginx.conf"
	nginx -c "$tmp/nginx.conf" -p "$tmp" -e "$tmp/error.log" &
	pids+=($!)
	for _ in $(seq 1 100); do
		[ "$(curl -s "http://127.0.0.1:$port/")" = hello ] && [ -s "$tmp/nginx.pid" ] && break
		sleep 0.1
	done
	master=$(cat "$tmp/nginx.pid" 2>/dev/null)
	workers=$(pgrep -P "${master:-1}" -d,)
	[ -n "$workers" ] || { echo "cost: nginx did not start: $(tail -3 "$tmp/error.log")"; exit 1; }
	# cpu_ticks PID: user + system clock ticks of every thread of PID so far
	cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
	rss_kib() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status" 2>/dev/null; }
	# rss_parts PID: its RSS in MiB as "rings R, heap H, files F": the BPF
	# maps it mapped (the rings: kernel memory, counted once), its anonymous
	# memory (malloc), the rest (binaries, debug files it reads)
	rss_parts() {
		awk '/^[0-9a-f]+-[0-9a-f]+ / { bpf = ($6 == "anon_inode:bpf-map") }
		     bpf && $1 == "Rss:" { rings += $2 }
		     $1 == "Anonymous:" { anon += $2 }
		     $1 == "Rss:" { all += $2 }
		     END { printf "rings %.1f, heap %.1f, files %.1f", rings / 1024, anon / 1024,
		           (all - rings - anon) / 1024 }' "/proc/$1/smaps" 2>/dev/null
	}
	"$GTCTL" record --standalone -q --flight -p "$master,$workers" -o "$tmp/f.trace" 2>"$tmp/f.err" &
	rec=$!
	pids+=("$rec")
	wait_recording "$rec" || { echo "cost: the flight recording did not start: $(tail -2 "$tmp/f.err")"; exit 1; }
	sleep 1
	rss0=$(rss_kib "$rec") parts0=$(rss_parts "$rec")
	wrk -t2 -c32 -d"${SRV_SECS}s" "http://127.0.0.1:$port/" >"$tmp/wrk.out" 2>&1 &
	load=$!
	c0=$(cpu_ticks "$rec") t0=$(date +%s.%N)
	samples=()
	for ((s = 10; s <= SRV_SECS; s += 10)); do
		sleep 10
		samples+=("$(($(rss_kib "$rec") / 1024))")
	done
	wait "$load"
	c1=$(cpu_ticks "$rec") t1=$(date +%s.%N)
	rss1=$(rss_kib "$rec") parts1=$(rss_parts "$rec")
	kill -INT "$rec"
	wait "$rec"
	hz=$(getconf CLK_TCK)
	# "held B bytes (cap C) in S segments (R records of K read) over T s"
	read -r held records readall span < <(sed -n \
		's/.*held \([0-9]*\) bytes .* segments (\([0-9]*\) records of \([0-9]*\) read) over \([0-9.]*\)s.*/\1 \2 \3 \4/p' "$tmp/f.err")
	rps=$(awk '/^Requests\/sec/ { print $2 }' "$tmp/wrk.out")
	awk -v c0="$c0" -v c1="$c1" -v hz="$hz" -v t0="$t0" -v t1="$t1" -v k="${readall:-0}" \
	    -v rps="${rps:-0}" -v secs="$SRV_SECS" 'BEGIN {
		cpu = (c1 - c0) / hz; wall = t1 - t0
		printf "nginx %.0f req/s recorded; the recorder used %.2f s CPU in %.1f s (%.1f%% of a CPU)\n", rps, cpu, wall,
			100 * cpu / wall
		printf "figure: flight recorder CPU %.2f s per million kernel records (%d read in all, ~%.0f/s)\n",
			(k > 0 ? cpu / (k / 1e6) : 0), k, k / wall }'
	awk -v h="${held:-0}" -v r="${records:-0}" -v sp="${span:-0}" -v r0="$rss0" -v r1="$rss1" 'BEGIN {
		printf "figure: flight recorder memory %.2f MiB per second of window held (%d records, %.1f MiB over %.2f s);",
			(sp > 0 ? h / sp / 1048576 : 0), r, h / 1048576, sp
		printf " RSS %.1f MiB idle, %.1f MiB at the end (+%.1f)\n", r0 / 1024, r1 / 1024, (r1 - r0) / 1024 }'
	echo "rss every 10 s under load (MiB): ${samples[*]}"
	echo "rss idle: $parts0 MiB; at the end: $parts1 MiB (before issue 34's cut: 96-107 MiB idle," \
		"107-127 under load; rings 64, heap 39 idle on 2 CPUs)"
	grep 'flight recording ended' "$tmp/f.err" || tail -2 "$tmp/f.err"
fi
echo
echo "== load: $(uptime); cost.sh took $((SECONDS - start_s)) s"
