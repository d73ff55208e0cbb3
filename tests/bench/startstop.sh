#!/usr/bin/env bash
# startstop.sh BUILD: how long a recording takes to start and to stop,
# gotraced embedded and through a daemon next to `perf sched record`
# (figures only, no assertions; noisy on a shared machine, so medians of
# STARTSTOP_RUNS interleaved rounds).
#
# Each recorder launches the `stamps` workload (it prints the wall clock
# first thing in main and last thing before exit, and sleeps 200 ms in
# between): start = from the recorder's launch to the workload's first
# instant, stop = from its last instant to the recorder's exit.  Untraced,
# the same is the floor (fork, exec, exit of the workload alone).
# gotracectl record -v also says where its own time went, by phase: from
# `record` to the trace's first instant (BPF load, attach, perf events,
# /proc snapshot, memory tracking) and from the trace's last instant to the
# file complete; the medians of each phase are printed under the table.
# The daemon runs one session before the rounds: its first loads the
# memory tracking's programs, once for its life.
# STARTSTOP_PRIO=N runs every recorder (and so its command) under
# `chrt -f N`: on a machine other work keeps busy, no ordinary process
# takes their CPU, which gives a quiet machine's figures near enough.
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
GTCTL=$build/gotracectl
ST=$build/workloads/stamps
RUNS=${STARTSTOP_RUNS:-5}
PRIO=()
[ -n "${STARTSTOP_PRIO:-}" ] && PRIO=(chrt -f "$STARTSTOP_PRIO")
tmp=$(mktemp -d /tmp/gt-startstop.XXXXXX)
daemon=
cleanup() {
	[ -n "$daemon" ] && kill -TERM "$daemon" 2>/dev/null && wait "$daemon"
	rm -rf "$tmp"
}
trap cleanup EXIT
for f in "$GTCTL" "$build/gotraced" "$ST"; do
	[ -x "$f" ] || { echo "startstop: $f not built (make BUILD=$build tests)"; exit 1; }
done
command -v perf >/dev/null || { echo "startstop: perf not installed (make deps)"; exit 1; }

"$build/gotraced" --socket "$tmp/d.sock" >/dev/null 2>"$tmp/gotraced.err" &
daemon=$!
for _ in $(seq 1 100); do [ -S "$tmp/d.sock" ] && break; sleep 0.1; done
[ -S "$tmp/d.sock" ] || { echo "startstop: gotraced did not start: $(tail -3 "$tmp/gotraced.err")"; exit 1; }
"$GTCTL" record -q --daemon --socket "$tmp/d.sock" -o "$tmp/warm.trace" -- "$ST" 10 >/dev/null 2>&1

# one KIND: one launch under KIND; appends "start_us stop_us" to KIND.runs
# and gotracectl's -v lines to KIND.start and KIND.stop.
one() {
	local kind=$1 t0 t1 rc
	local out=$tmp/$kind.out err=$tmp/$kind.err
	t0=$EPOCHREALTIME
	case $kind in
	untraced) "${PRIO[@]}" "$ST" 200 >"$out" 2>"$err" ;;
	embedded) "${PRIO[@]}" "$GTCTL" record -q -v --standalone -o "$tmp/t.trace" -- "$ST" 200 >"$out" 2>"$err" ;;
	daemon) "${PRIO[@]}" "$GTCTL" record -q -v --daemon --socket "$tmp/d.sock" -o "$tmp/t.trace" -- "$ST" 200 >"$out" 2>"$err" ;;
	perf-sched) "${PRIO[@]}" perf sched record -o "$tmp/p.data" -- "$ST" 200 >"$out" 2>"$err" ;;
	esac
	rc=$?
	t1=$EPOCHREALTIME
	[ "$rc" = 0 ] || { echo "$kind failed: $(grep -v '^libbpf' "$err" | tail -2)"; return; }
	awk -v t0="${t0/./}" -v t1="${t1/./}" '$1 == "start_us" { s = $2 } $1 == "end_us" { e = $2 }
		END { print s - t0, t1 - e }' "$out" >>"$tmp/$kind.runs"
	grep '^gotracectl: start ' "$err" >>"$tmp/$kind.start"
	grep '^gotracectl: stop ' "$err" >>"$tmp/$kind.stop"
}

kinds="untraced embedded daemon perf-sched"
for _ in $(seq 1 "$RUNS"); do
	for k in $kinds; do one $k; done
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }
echo "== start and stop of a recording of a 200 ms command, median of $RUNS (wall clock: launch to the command's main, its exit to the recorder's)${PRIO:+, under ${PRIO[*]}}"
printf '%-12s %10s %10s\n' recorder "start ms" "stop ms"
for k in $kinds; do
	[ -s "$tmp/$k.runs" ] || { printf '%-12s %10s %10s\n' "$k" - -; continue; }
	awk -v k="$k" -v s="$(awk '{ print $1 }' "$tmp/$k.runs" | median)" \
	    -v e="$(awk '{ print $2 }' "$tmp/$k.runs" | median)" \
	    'BEGIN { printf "%-12s %10.1f %10.1f\n", k, s / 1e3, e / 1e3 }'
done
# the summary's line (run.sh shows lines with a target)
med() { awk -v c="$2" '{ print $c }' "$tmp/$1.runs" | median; }
if [ -s "$tmp/embedded.runs" ] && [ -s "$tmp/daemon.runs" ] && [ -s "$tmp/perf-sched.runs" ]; then
	awk -v es="$(med embedded 1)" -v ee="$(med embedded 2)" -v ds="$(med daemon 1)" \
	    -v de="$(med daemon 2)" -v ps="$(med perf-sched 1)" -v pe="$(med perf-sched 2)" 'BEGIN {
		printf "start+stop ms: embedded %.0f (target <= 300), daemon %.0f (start %.0f, target <= 50), perf sched record %.0f\n",
			(es + ee) / 1e3, (ds + de) / 1e3, ds / 1e3, (ps + pe) / 1e3 }'
fi
echo
echo "== where gotracectl's time went (record -v; each figure the median of its $RUNS runs)"
# medians FILE: the last line of FILE with each number replaced by the
# median of the numbers at its place in every line
medians() {
	python3 - "$1" <<'PY'
import re, sys
lines = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
num = re.compile(r"[0-9]+(?:\.[0-9]+)?")
cols = [[float(x) for x in num.findall(l)] for l in lines]
n = min(len(c) for c in cols)
med = [sorted(c[i] for c in cols)[(len(cols) - 1) // 2] for i in range(n)]
it = iter(med)
print(num.sub(lambda m: f"{next(it, float(m.group())):.1f}", lines[-1]).replace("gotracectl: ", ""))
PY
}
for k in embedded daemon; do
	for what in start stop; do
		[ -s "$tmp/$k.$what" ] && printf '%-9s %s\n' "$k:" "$(medians "$tmp/$k.$what")"
	done
done
exit 0
