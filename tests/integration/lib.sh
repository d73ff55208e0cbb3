# lib.sh: shared helpers of the tests/integration/record_*.sh scripts.
# Source it from the repo root:  . tests/integration/lib.sh
#
#   GT_BUILD (default build) names the build directory: $GTCTL is its
#   gotracectl, $WL its workloads.  Every script prints `ok NAME` /
#   `FAIL NAME: why` / `skip NAME: why` lines and ends with `gt_finish`.
set -u

GT_BUILD=${GT_BUILD:-build}
GTCTL=$GT_BUILD/gotracectl
# GT_GO_VERSION=1.22|1.23 (or any --go-version): every `record` of the
# script writes that format, unless it names a version itself
# (tests/lib/gtctl_go_version.sh; docs/testing.md).
if [ -n "${GT_GO_VERSION:-}" ]; then
	export GT_GO_VERSION GT_REAL_GTCTL
	GT_REAL_GTCTL=$(cd "$GT_BUILD" && pwd)/gotracectl
	GTCTL=$(pwd)/tests/lib/gtctl_go_version.sh
fi
WL=$GT_BUILD/workloads
TRUTH="python3 tests/integration/truth.py"
GT_GO123=${GOCHECK_GO123:-/usr/lib/go-1.23/bin/go}  # Go 1.23, for its viewer
GT_GO122=${GOCHECK_GO122:-/usr/lib/go-1.22/bin/go}  # Go 1.22, the first v2 reader
GT_TMP=$(mktemp -d /tmp/gt-integration.XXXXXX)
gt_failures=0
gt_pids=()          # background processes to end at exit (ours only)

gt_skipping=0       # the script printed skip lines for all its cases
gt_checked=0        # gt_check_cases ran (gt_finish)

gt_cleanup() {
	local rc=$? p
	# A script that reported no case (an early exit, a path that forgot to
	# report) would otherwise pass unseen: it fails here, whatever its exit.
	if [ "$gt_skipping" = 0 ] && [ ${#gt_oks[@]} = 0 ] && [ ${#gt_fails[@]} = 0 ]; then
		fail "$(basename "$0" .sh)" "the script ended (exit $rc) without reporting any case"
	fi
	# An exit before gt_finish still owes the cases it promised.
	[ "$gt_skipping" = 0 ] && [ "$gt_checked" = 0 ] && gt_check_cases
	[ "$gt_failures" -gt 0 ] && rc=1
	for p in "${gt_pids[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	for p in "${gt_pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	# Keep the work dir of a failed run for a post-mortem.
	if [ "$gt_failures" -eq 0 ]; then rm -rf "$GT_TMP"; else echo "# files kept in $GT_TMP"; fi
	exit "$rc"
}
trap gt_cleanup EXIT

declare -A gt_oks=() gt_fails=()  # case -> how many ok / FAIL lines it printed
gt_cases=()         # cases the script promised to report (gt_expect)

ok() {
	echo "ok $1"
	gt_oks[$1]=$(( ${gt_oks[$1]:-0} + 1 ))
}
fail() {
	echo "FAIL $1: $2"
	gt_failures=$((gt_failures + 1))
	gt_fails[$1]=$(( ${gt_fails[$1]:-0} + 1 ))
}
# Indents a multi-line explanation under the last FAIL line.
detail() { sed 's/^/     also: /'; }

# gt_report NAME WHY: the one line of case NAME: ok when WHY is empty, else
# FAIL with WHY.  For cases that gather several checks before a verdict.
gt_report() {
	if [ -z "$2" ]; then ok "$1"; else fail "$1" "$2"; fi
}

# gt_expect NAME...: cases this script reports on every path.  gt_finish
# fails each one that printed neither ok nor FAIL (a path that forgot to
# report would otherwise pass unseen), and each that printed ok more than
# once or ok besides a FAIL (the log would read as a pass).  ok and fail
# must then run in the script's own shell, not in $(...) or a pipe.
gt_expect() { gt_cases+=("$@"); }

gt_check_cases() {
	local c o f
	gt_checked=1
	if [ ${#gt_cases[@]} = 0 ]; then
		fail "$(basename "$0" .sh)" "no gt_expect: the script promised no case"
	fi
	for c in "${gt_cases[@]}"; do
		o=${gt_oks[$c]:-0} f=${gt_fails[$c]:-0}
		if [ $((o + f)) = 0 ]; then
			fail "$c" "never reported: a path of the script skipped this case"
		elif [ "$o" -gt 1 ] || { [ "$o" = 1 ] && [ "$f" -gt 0 ]; }; then
			fail "$c" "reported ok $o times and FAIL $f times: one verdict wanted"
		fi
	done
}

gt_finish() {
	gt_check_cases
	[ "$gt_failures" -eq 0 ]
	exit $?
}

# Every script needs root and real BPF; with GOTRACED_SKIP_BPF=1 it only
# prints skip lines for the cases it names.
gt_require_bpf() {
	local c
	if [ "${GOTRACED_SKIP_BPF:-0}" = 1 ]; then
		for c in "$@"; do echo "skip $c: GOTRACED_SKIP_BPF=1"; done
		gt_skipping=1
		exit 0
	fi
	if [ "$(id -u)" != 0 ]; then
		fail "${1:-setup}" "needs root to load BPF programs (or set GOTRACED_SKIP_BPF=1 to skip)"
		exit 1
	fi
	if [ ! -x "$GTCTL" ]; then
		fail "${1:-setup}" "$GTCTL not built (make BUILD=$GT_BUILD all)"
		exit 1
	fi
	if [ ! -x "$WL/pingpong" ]; then
		fail "${1:-setup}" "workloads not built in $WL (make BUILD=$GT_BUILD tests)"
		exit 1
	fi
}

# The daemon tests' gotraced, and its socket.
GTD=$GT_BUILD/gotraced
SOCK=$GT_TMP/gotraced.sock

# gt_require_daemon NAME: gt_require_bpf (with GOTRACED_SKIP_BPF=1 the
# whole script is skipped as NAME), and gotraced built.
gt_require_daemon() {
	if [ "${GOTRACED_SKIP_BPF:-0}" = 1 ]; then
		echo "skip $1: GOTRACED_SKIP_BPF=1"
		gt_skipping=1
		exit 0
	fi
	gt_require_bpf "$1"
	[ -x "$GTD" ] || { fail "$1" "gotraced not built ($GTD)"; gt_finish; }
}

# gt_start_daemon [OPTION...]: runs gotraced on $SOCK (with the options) in
# the background (DAEMON_PID) and waits for its `ready` line; a daemon that
# does not come up ends the script with its log.
gt_start_daemon() {
	local i
	"$GTD" --socket "$SOCK" "$@" 2>"$GT_TMP/daemon.log" &
	DAEMON_PID=$!
	gt_pids+=("$DAEMON_PID")
	for i in $(seq 1 600); do
		grep -q 'ready on' "$GT_TMP/daemon.log" && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.1
	done
	fail daemon_start "gotraced did not become ready"
	detail <"$GT_TMP/daemon.log"
	gt_finish
}

# gt_user_make CASE NAME: the non-root user NAME, made if missing (CASE
# fails and the script ends if it cannot be).
gt_user_make() {
	id "$2" >/dev/null 2>&1 && return 0
	useradd --system --no-create-home --shell /usr/sbin/nologin "$2" ||
		{ fail "$1" "useradd $2 failed"; gt_finish; }
}

# gt_user_env CASE: the non-root user USER_NAME (gt_user_make CASE) who may
# reach gotraced's socket SOCK and GT_TMP: sets UDIR (a directory of the
# user's) and UCTL (a copy of gotracectl the user can run, beside one of
# the sleeper workload, in $GT_TMP/bin).
gt_user_env() {
	gt_user_make "$1" "$USER_NAME"
	# The real socket is 0660 root:gotrace; here the test lets the user in directly.
	chmod 0755 "$GT_TMP"
	chmod 0666 "$SOCK"
	UDIR=$GT_TMP/user
	mkdir -p "$UDIR" && chown "$USER_NAME" "$UDIR"
	mkdir -p "$GT_TMP/bin" && cp "$WL/sleeper" "$GT_TMP/bin/" && chmod 0755 "$GT_TMP/bin"
	UCTL=$GT_TMP/bin/gotracectl
	if [ -n "${GT_GO_VERSION:-}" ]; then
		# $GTCTL is the --go-version wrapper: the user gets it and a copy
		# of the binary it runs (the build tree may be closed to them)
		cp "$GT_REAL_GTCTL" "$GT_TMP/bin/gotracectl.real" && cp "$GTCTL" "$UCTL"
		GT_REAL_GTCTL=$GT_TMP/bin/gotracectl.real
	else
		cp "$GTCTL" "$UCTL"
	fi
}

# as_named NAME CMD...: CMD as user NAME, without groups; as_user CMD...:
# as USER_NAME.  Started in the background (&) a function is a subshell:
# $! is that shell's pid, not CMD's.  Where it must be CMD's, start it as
# `as_user_bg CMD... &`: the subshell execs setpriv, which execs CMD.
gt_user_ids() { GT_USER_IDS=(--reuid="$1" --regid="$1" --clear-groups); } # setpriv's
as_named() { local GT_USER_IDS; gt_user_ids "$1"; shift; setpriv "${GT_USER_IDS[@]}" -- "$@"; }
as_user() { as_named "$USER_NAME" "$@"; }
as_user_bg() {
	if [ "$BASHPID" = "$$" ]; then # not in the background: exec would end the test
		echo "as_user_bg $1: only with & (it execs)" >&2
		return 1
	fi
	gt_user_ids "$USER_NAME"
	exec setpriv "${GT_USER_IDS[@]}" -- "$@"
}

# gt_cgroup2_mount: where cgroup v2 is mounted (nothing: nowhere).
gt_cgroup2_mount() { awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo; }

# gt_need_cgroup2 CASE: CGMNT, where cgroup v2 is mounted (CASE fails and
# the script ends if nowhere).
gt_need_cgroup2() {
	CGMNT=$(gt_cgroup2_mount)
	[ -n "$CGMNT" ] || { fail "$1" "no cgroup v2 filesystem mounted"; gt_finish; }
}

# gt_refused NAME WANT CMD...: CMD fails saying WANT (a grep pattern): ok
# NAME, else fail NAME.  Leaves CMD's output (stdout and stderr) in out and
# its status in rc.
gt_refused() {
	local name=$1 want=$2
	shift 2
	out=$("$@" 2>&1); rc=$?
	if [ $rc != 0 ] && echo "$out" | grep -q "$want"; then
		ok "$name"
	else
		fail "$name" "rc=$rc (wanted a failure saying $want): $out"
	fi
}

# gt_valid NAME FILE: Go's reader and viewer (gocheck.sh) and our checker
# (inspect) both accept FILE; writes FILE.json (inspect --json) for later.
gt_valid() {
	local name=$1 file=$2 out
	if [ ! -s "$file" ]; then
		fail "$name" "no trace file at $file"
		return 1
	fi
	if ! out=$(tests/lib/gocheck.sh "$file" 2>&1); then
		fail "$name" "Go rejects $file"
		echo "$out" | head -20 | detail
		return 1
	fi
	if ! out=$("$GTCTL" inspect "$file" 2>&1); then
		fail "$name" "gotracectl inspect rejects $file"
		echo "$out" | head -20 | detail
		return 1
	fi
	if ! "$GTCTL" inspect --json "$file" >"$file.json" 2>"$file.json.err"; then
		fail "$name" "gotracectl inspect --json failed: $(head -3 "$file.json.err")"
		return 1
	fi
	return 0
}

# gt_truth NAME ARGS...: runs a truth.py check; on mismatch fails NAME with
# the per-thread lines as detail.
gt_truth() {
	local name=$1 out
	shift
	if out=$($TRUTH "$@" 2>&1); then
		[ -n "${GT_VERBOSE:-}" ] && echo "$out"
		return 0
	fi
	fail "$name" "ground truth mismatch ($1)"
	echo "$out" | detail
	return 1
}

# gt_start_workload TAG CMD...: starts a workload with --wait protocol:
# stdin from a fifo we hold open, stdout to $GT_TMP/TAG.out; waits for its
# `ready` line.  Sets WL_PID and WL_FIFO_FD_TAG... (use gt_go / gt_leave).
gt_start_workload() {
	local tag=$1 i
	shift
	mkfifo "$GT_TMP/$tag.in"
	"$@" <"$GT_TMP/$tag.in" >"$GT_TMP/$tag.out" 2>"$GT_TMP/$tag.err" &
	WL_PID=$!
	gt_pids+=("$WL_PID")
	# Holding the write end open (fd chosen by bash) keeps its stdin alive.
	exec {WL_FD}>"$GT_TMP/$tag.in"
	eval "WL_FD_$tag=$WL_FD"
	for i in $(seq 1 1200); do # 60 s: a busy machine may start it slowly
		grep -q '^ready' "$GT_TMP/$tag.out" 2>/dev/null && return 0
		kill -0 "$WL_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "workload $* did not become ready: $(cat "$GT_TMP/$tag.err")" >&2
	return 1
}

gt_send() { local fd; eval "fd=\$WL_FD_$1"; printf g >&"$fd"; }
gt_go() { gt_send "$1"; }
gt_leave() { local fd; eval "fd=\$WL_FD_$1"; printf g >&"$fd"; eval "exec $fd>&-"; }

# gt_wait_line TAG REGEX [SECONDS]: waits for a line in the workload output.
gt_wait_line() {
	local i
	for i in $(seq 1 $(( ${3:-30} * 20 ))); do
		grep -qE "$2" "$GT_TMP/$1.out" && return 0
		sleep 0.05
	done
	return 1
}

# gt_tids TAG [NAME-REGEX]: tids from the workload's `thread TID NAME` lines.
gt_tids() {
	awk -v re="${2:-.}" '$1 == "thread" && $3 ~ re { printf "%s%s", sep, $2; sep = "," }' "$GT_TMP/$1.out"
}

# gt_record_workload NAME TAG [RECORD FLAGS] -- CMD...: records the measured
# work of CMD (a workload speaking the --wait protocol: ready, go, done) with
# -p while it lives, so its maps can be read for the symbols; stops with
# SIGINT.  Leaves a valid $GT_TMP/TAG.trace, its viewer pages fetched
# (.jsontrace), or fails NAME saying why and returns 1.
gt_record_workload() {
	local name=$1 tag=$2 flags=() done=1 rc wl
	shift 2
	while [ "$1" != -- ]; do flags+=("$1"); shift; done
	shift
	wl=$(basename "$1")
	if ! gt_start_workload "$tag" "$@"; then
		fail "$name" "workload $wl did not start: $(head -3 "$GT_TMP/$tag.err")"
		return 1
	fi
	if ! gt_record_bg "$tag" "${flags[@]}" -p "$WL_PID" -o "$GT_TMP/$tag.trace"; then
		fail "$name" "gotracectl record did not start: $(tail -5 "$GT_TMP/$tag.rec.err")"
		return 1
	fi
	gt_go "$tag"
	gt_wait_line "$tag" '^done' 60 || done=0
	gt_stop_record INT
	rc=$?
	gt_leave "$tag"
	wait "$WL_PID"
	if [ $done = 0 ]; then
		fail "$name" "workload $wl did not finish its work in 60 s"
		return 1
	fi
	if [ $rc != 0 ]; then
		fail "$name" "gotracectl record exited $rc after SIGINT: $(tail -5 "$GT_TMP/$tag.rec.err")"
		return 1
	fi
	gt_valid "$name" "$GT_TMP/$tag.trace" || return 1
	if ! gt_viewer_pages "$GT_TMP/$tag.trace"; then
		fail "$name" "could not fetch the viewer's pages: $(tail -3 "$GT_TMP/$tag.trace.viewer.log")"
		return 1
	fi
}

# gt_recording PID: true once `gotracectl record` (PID) has started its
# session, i.e. its main thread sleeps in the event loop's epoll_wait: in
# embedded mode nothing before the loop waits in epoll, and the session
# attaches the tracepoints and takes its /proc snapshot before the loop.
# The numbers are epoll_wait, epoll_pwait and epoll_pwait2 (x86_64; arm64
# has only the last two).
gt_recording() {
	local nr _
	read -r nr _ <"/proc/$1/syscall" 2>/dev/null || return 1
	case "$(uname -m):$nr" in
	x86_64:232 | x86_64:281 | *:441 | aarch64:22) return 0 ;;
	esac
	return 1
}

# gt_record_daemon_started PID: the daemon on $SOCK lists PID's session
# (its label is "client pid PID" unless the client set one).
gt_record_daemon_started() {
	"$GTCTL" status --socket "$SOCK" 2>/dev/null | grep -q "(client pid $1)"
}

# gt_record_bg TAG ARGS...: starts `gotracectl record ARGS` in the
# background (REC_PID), stderr in $GT_TMP/TAG.rec.err, and waits until its
# session has started, however long loading the BPF programs takes on a
# busy machine (up to 120 s): embedded (--standalone is added unless ARGS
# say --daemon), started when its event loop waits (gt_recording); with
# --daemon, when the daemon on $SOCK lists the session.  Returns 1, with
# the reason at the end of TAG.rec.err, if it exited or never started.
gt_record_bg() {
	local tag=$1 i mode=--standalone started=gt_recording
	shift
	if [[ " $* " == *" --daemon "* ]]; then
		mode=--daemon
		started=gt_record_daemon_started
	fi
	# GT_RECORD_CTL: another gotracectl (the v2 pass's real one, for a
	# file that must stay in the default format)
	"${GT_RECORD_CTL:-$GTCTL}" record "$mode" "$@" 2>"$GT_TMP/$tag.rec.err" >"$GT_TMP/$tag.rec.out" &
	REC_PID=$!
	gt_pids+=("$REC_PID")
	for i in $(seq 1 2400); do
		kill -0 "$REC_PID" 2>/dev/null || return 1
		"$started" "$REC_PID" && return 0
		sleep 0.05
	done
	echo "gt_record_bg: not recording after 120 s (main thread in: $(cat "/proc/$REC_PID/syscall" 2>&1))" \
		>>"$GT_TMP/$tag.rec.err"
	return 1
}

# gt_wait_parked PID [SECONDS]: waits until every thread of PID sleeps
# (state S: parked in a barrier or a read), so that a /proc reading taken
# now stays true until the test lets it go on; a fixed pause assumes the
# scheduler ran them in time.  Returns 1 after SECONDS (30).
gt_wait_parked() {
	local i f st busy
	for i in $(seq 1 $(( ${2:-30} * 50 ))); do
		busy=0
		for f in /proc/"$1"/task/*/stat; do
			st=$(sed 's/.*) //' "$f" 2>/dev/null) || continue
			[ "${st%% *}" = S ] || { busy=1; break; }
		done
		[ -d "/proc/$1" ] || return 1
		[ $busy = 0 ] && return 0
		sleep 0.02
	done
	return 1
}

# gt_stop_record SIGNAL: ends the background recording and returns its
# exit status (124 if it did not end within 120 s: finishing a big trace
# under the sanitizers on a busy machine takes a while).
gt_stop_record() {
	local i
	kill "-${1:-INT}" "$REC_PID" 2>/dev/null
	for i in $(seq 1 1200); do
		kill -0 "$REC_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$REC_PID" 2>/dev/null; then
		kill -KILL "$REC_PID"
		wait "$REC_PID" 2>/dev/null
		return 124
	fi
	wait "$REC_PID"
}

# gt_serve_trace GO FILE LOG POLLS: serves FILE with GO's `go tool trace`
# on a random local port (another when one is taken; output in LOG) and
# waits until it answers: at most POLLS tenths of a second, or while it
# lives if POLLS is 0.  0 once it answered, else 1; either way gt_port and
# gt_server (its pid, for the caller to kill) are set.
gt_serve_trace() {
	local go=$1 file=$2 log=$3 polls=$4 i
	for _ in 1 2 3 4 5; do
		gt_port=$(( (RANDOM % 20000) + 30000 ))
		BROWSER=true GOTOOLCHAIN=local "$go" tool trace -http="127.0.0.1:$gt_port" "$file" \
			>"$log" 2>&1 &
		gt_server=$!
		for ((i = 0; polls == 0 || i < polls; i++)); do
			curl -s -o /dev/null "http://127.0.0.1:$gt_port/" && return 0
			kill -0 "$gt_server" 2>/dev/null || break
			sleep 0.1
		done
		wait "$gt_server" 2>/dev/null
		grep -q 'address already in use' "$log" || return 1
	done
	return 1
}

# gt_v2 FILE: 0 if FILE is a Go 1.22+ trace (GT_GO_VERSION's recordings),
# which Go 1.21 and older cannot read: a check that reads the file through
# their `go tool trace -d` reads it through Go 1.23's (`-d=1`) instead.
gt_v2() { head -c 16 "$1" | grep -qa "go 1.2[2-9] trace"; }

# gt_viewer_pages FILE: serves FILE with `go tool trace` and saves
# /jsontrace and /goroutines to FILE.jsontrace and FILE.goroutines.html.
gt_viewer_pages() {
	local file=$1 rc=1 go=go
	# a Go 1.22+ file (GT_GO_VERSION): Go 1.19 cannot read it, Go 1.23 can
	gt_v2 "$file" && go=$GT_GO123
	if gt_serve_trace "$go" "$file" "$file.viewer.log" 600; then
		rc=0
		curl -s --max-time 120 -o "$file.jsontrace" "http://127.0.0.1:$gt_port/jsontrace" || rc=1
		curl -s --max-time 120 -o "$file.goroutines.html" "http://127.0.0.1:$gt_port/goroutines" || rc=1
	fi
	kill "$gt_server" 2>/dev/null
	wait "$gt_server" 2>/dev/null
	return $rc
}

# gt_go123_page FILE: serves FILE with Go 1.23's `go tool trace` and saves
# its Goroutines page to FILE.go123.html (log: FILE.go123.log).  The viewer
# parses the whole file before it answers: no deadline while it lives.
# 0 once it answered, else 1.
gt_go123_page() {
	local file=$1 up=1
	if gt_serve_trace "$GT_GO123" "$file" "$file.go123.log" 0; then
		up=0
		curl -s --max-time 600 -o "$file.go123.html" "http://127.0.0.1:$gt_port/goroutines"
	fi
	kill "$gt_server" 2>/dev/null
	wait "$gt_server" 2>/dev/null
	return $up
}
