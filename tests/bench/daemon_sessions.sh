#!/usr/bin/env bash
# daemon_sessions.sh BUILD: what a long-lived gotraced keeps after many
# sessions ("1 000 sequential short sessions on different
# processes leave RSS and fds flat").  Figures only, no assertions; the
# count check is tests/integration/daemon_soak.sh.
#
# For each variant, a private gotraced; its baseline (VmRSS, RssAnon,
# RssFile, open fds) after warm-up sessions (the first kernel stack loads
# kallsyms, 8 MB kept for good, so the first warm-up has --kernel-stacks;
# the first --heap session loads the memory programs), then SOAK_SESSIONS
# (1000) sequential sessions of 100 ms, each on a freshly started process
# (a C program of 4 threads, python3, sh forking /bin/sleep, a C program
# that exits mid-session: tests/lib/sessions.sh), with the daemon's figures
# every 100 sessions, once its descriptors settle back to the baseline
# (at most 10 s: a growth shows as a count above it), and sessions/s.
#   plain  every session as recorded by default
#   heap   every 10th session with --heap malloc (uprobes in the target,
#          the allocator symbols read from its libc)
# SOAK_VARIANTS=plain runs the first only; SOAK_REPORT_EVERY (100) sets how
# often the figures are printed.
set -u
cd "$(dirname "$0")/../.." || exit 1
export GT_BUILD=${1:-build}
. tests/integration/lib.sh
. tests/lib/sessions.sh

N=${SOAK_SESSIONS:-1000}
EVERY=${SOAK_REPORT_EVERY:-100}

for f in "$GTCTL" "$GTD" "$WL/exitmid"; do
	[ -x "$f" ] || { echo "daemon_sessions: $f not built (make BUILD=$GT_BUILD tests)"; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "daemon_sessions: needs root (BPF)"; exit 1; }

# figures LABEL: one line of the daemon's figures and their change from
# the baseline.
figures() {
	local rss anon file fds
	soak_fds_settle "$DAEMON_PID" "$base_fds" 10
	read -r rss anon file fds < <(soak_mem "$DAEMON_PID")
	printf '%-10s RSS %6d kB (%+6d)  anon %6d kB (%+6d)  file %6d kB (%+6d)  fds %4d (%+d)\n' \
		"$1" "$rss" $((rss - base_rss)) "$anon" $((anon - base_anon)) \
		"$file" $((file - base_file)) "$fds" $((fds - base_fds))
}

# variant NAME HEAP_EVERY: a private daemon through N sessions, every
# HEAP_EVERY-th with --heap malloc (0: none).
variant() {
	local name=$1 every=$2 i args failed=0 t0 spent=0 first_err=
	SOCK=$GT_TMP/$name.sock
	gt_start_daemon
	soak_record 0 --kernel-stacks ||
		{ echo "$name: warm-up failed: $(cat "$GT_TMP/soak.rec.err")"; return 1; }
	if [ "$every" -gt 0 ]; then
		soak_record 0 --heap malloc ||
			{ echo "$name: warm-up failed: $(cat "$GT_TMP/soak.rec.err")"; return 1; }
	fi
	sleep 2 # the warm-up's teardown
	read -r base_rss base_anon base_file base_fds < <(soak_mem "$DAEMON_PID")
	echo "== $name: $N sessions$([ "$every" -gt 0 ] && echo ", every ${every}th with --heap malloc")"
	figures baseline
	for i in $(seq 1 "$N"); do
		args=()
		[ "$every" -gt 0 ] && [ $((i % every)) = 0 ] && args=(--heap malloc)
		t0=$(date +%s%N)
		if ! soak_record "$i" "${args[@]}"; then
			failed=$((failed + 1))
			[ -n "$first_err" ] || first_err="session $i ($(soak_kind "$i") ${args[*]}): $(head -3 "$GT_TMP/soak.rec.err")"
		fi
		spent=$((spent + $(date +%s%N) - t0))
		[ $((i % EVERY)) = 0 ] || [ "$i" = "$N" ] && figures "$i"
	done
	read -r rss _ _ fds < <(soak_mem "$DAEMON_PID")
	# the summary line (run.sh shows lines with a rate)
	awk -v name="$name" -v n="$N" -v ns="$spent" -v drss=$((rss - base_rss)) -v dfds=$((fds - base_fds)) 'BEGIN {
		printf "%s: %d sessions, %.2f sessions/s (%.0f ms each, 100 ms recorded): RSS %+d kB, fds %+d\n",
			name, n, n / (ns / 1e9), ns / 1e6 / n, drss, dfds }'
	echo "$name: $failed of $N sessions failed${first_err:+; first: $first_err}"
	kill "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
}

variant plain 0
[ "${SOAK_VARIANTS:-plain heap}" = plain ] || variant heap 10
