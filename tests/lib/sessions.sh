# sessions.sh: many short daemon sessions in a row, each on a fresh
# process, and what the daemon holds between them ("1 000
# sequential short sessions on different processes leave RSS and fds
# flat").  Shared by tests/bench/daemon_sessions.sh (figures) and
# tests/integration/daemon_soak.sh (a count check).
#
# Source it after tests/integration/lib.sh and gt_start_daemon: it uses
# $GTCTL, $WL, $SOCK, $GT_TMP and $DAEMON_PID.

# soak_mem PID: "RSS_KB ANON_KB FILE_KB FDS" of PID (VmRSS, RssAnon,
# RssFile of /proc/PID/status; entries of /proc/PID/fd).
soak_mem() {
	local fds
	fds=$(ls "/proc/$1/fd" | wc -l)
	awk -v fds="$fds" '$1 == "VmRSS:" { r = $2 } $1 == "RssAnon:" { a = $2 }
		$1 == "RssFile:" { f = $2 } END { print r, a, f, fds }' "/proc/$1/status"
}

# soak_fds_settle PID MAX [SECONDS]: waits until PID holds at most MAX
# descriptors (a session's teardown may end after its client got its
# answer); 1 if it still holds more after SECONDS (10).
soak_fds_settle() {
	local i
	for i in $(seq 1 $(( ${3:-10} * 20 ))); do
		[ "$(ls "/proc/$1/fd" | wc -l)" -le "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

# soak_held_files PID LOG: the files (not devices, pipes, sockets or BPF
# objects) PID holds open beyond its stdin, stdout, stderr and LOG, one a
# line: those of traced processes (binaries, debug files) it kept.
soak_held_files() {
	local f t
	for f in /proc/"$1"/fd/*; do
		[ "${f##*/}" -gt 2 ] || continue
		t=$(readlink "$f") || continue
		case $t in
		/dev/* | "$2") ;;
		/*) echo "$t" ;;
		esac
	done
}

soak_procs=()       # the processes of the session under way, ended at exit
soak_end_procs() {
	local p
	for p in "${soak_procs[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for p in "${soak_procs[@]}"; do wait "$p" 2>/dev/null; done
	soak_procs=()
}
trap 'soak_end_procs; gt_cleanup' EXIT

# soak_kind I: which process session I records, in rotation (shifted by
# one every 10 sessions, so that every 10th session, the --heap one,
# meets every kind too):
#   threads  a C program of 4 threads napping in 1 ms sleeps
#   python   python3 napping in 1 ms sleeps
#   shell    sh starting /bin/sleep every 20 ms (forks, execs, exits)
#   exits    a C program of 3 threads that exits in the middle of the
#            session (which then ends on "targets exited")
soak_kind() {
	local k=(threads python shell exits)
	echo "${k[$(( ($1 + $1 / 10) % 4 ))]}"
}

# soak_record I ARGS...: one session on a fresh process of soak_kind I;
# ARGS go to gotracectl record (e.g. --heap malloc).  Returns record's
# status; its stderr goes to $GT_TMP/soak.rec.err.
soak_record() {
	local i=$1 kind rc pid rec n
	shift
	kind=$(soak_kind "$i")
	case $kind in
	threads) "$WL/exitmid" 600000 3 >/dev/null 2>&1 & ;;
	python) python3 -c 'import time
while True: time.sleep(0.001)' >/dev/null 2>&1 & ;;
	shell) sh -c 'while :; do /bin/sleep 0.02; done' >/dev/null 2>&1 & ;;
	exits) soak_record_exits "$@"; return ;;
	esac
	pid=$!
	soak_procs=("$pid")
	"$GTCTL" record --daemon --socket "$SOCK" -q "$@" -p "$pid" -d 100ms \
		-o "$GT_TMP/soak.trace" 2>"$GT_TMP/soak.rec.err" </dev/null
	rc=$?
	soak_end_procs
	return $rc
}

# The "exits" kind: the workload parks until the session has started (the
# daemon lists it), then is let go and exits 30 ms later; -d 5s is only a
# bound: the session ends when its target is gone.
soak_record_exits() {
	local pid rec rc n
	rm -f "$GT_TMP/soak.go" "$GT_TMP/soak.out"
	mkfifo "$GT_TMP/soak.go"
	"$WL/exitmid" --wait 30 2 <"$GT_TMP/soak.go" >"$GT_TMP/soak.out" 2>&1 &
	pid=$!
	soak_procs=("$pid")
	exec {soak_go}>"$GT_TMP/soak.go"
	for n in $(seq 1 1200); do
		grep -q '^ready' "$GT_TMP/soak.out" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	"$GTCTL" record --daemon --socket "$SOCK" -q "$@" -p "$pid" -d 5s \
		-o "$GT_TMP/soak.trace" 2>"$GT_TMP/soak.rec.err" </dev/null &
	rec=$!
	soak_procs+=("$rec")
	for n in $(seq 1 1200); do
		gt_record_daemon_started "$rec" && break
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.01
	done
	printf g >&"$soak_go"
	exec {soak_go}>&-
	wait "$rec"
	rc=$?
	soak_procs=("$pid")
	soak_end_procs
	if [ "$rc" = 0 ] && ! grep -q '^exiting' "$GT_TMP/soak.out"; then
		echo "the exits workload did not exit by itself: $(cat "$GT_TMP/soak.out")" \
			>>"$GT_TMP/soak.rec.err"
		rc=1
	fi
	return $rc
}
