#!/usr/bin/env bash
# daemon_hostile_files.sh: no file a user controls is opened by the root
# daemon in a way that can block it, follow the user's link or open a
# device (sym/safe_open.h, sym/debug_file.h).  A user's program (a copy of
# the sleeper workload without .debug_info) names in its .gnu_debuglink:
#  - hostile_fifo: `../../..$D/fifo`, a FIFO of the user's (a blocking
#    open() of it froze the whole daemon until someone wrote to it): root
#    records the program with -d 2s while `status` is asked again and
#    again; the recording ends on its own, every `status` answers, and the
#    FIFO was never opened (a non-blocking writer finds no reader);
#  - hostile_symlink: a bare name that is, in the binary's directory, a
#    link to another FIFO (and the same link reached by `../`);
#  - hostile_device: a bare name that is a character device (a copy of
#    /dev/null: inotify shows any open), and the same by `../`;
#  - hostile_sparse: a bare name that is a 3.5 GiB sparse file, and the
#    same by `../`: never opened, never read, and the refusal names the
#    1 GiB cap of a debug-link candidate (it said "larger than 4 GiB");
#  - hostile_root_fifo: where user namespaces work, the program's own
#    path, in its private mount namespace, is a FIFO bind-mounted over the
#    binary: the daemon reaches it through /proc/PID/root, must not open
#    it, and still names the program's frames (from map_files).
# Each case also needs the recording to end by itself, valid.  Timing is
# printed (the longest `status` wait, the daemon's answer times from
# status_latency.py), never asserted: what proves the
# daemon was not blocked is that the FIFOs were never opened and that the
# recordings and `status` all finished.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

CASES="hostile_fifo hostile_symlink hostile_device hostile_sparse hostile_root_fifo"
USER_NAME=gt_test_user
gt_require_daemon hostile_fifo
# shellcheck disable=SC2086
gt_expect $CASES
gt_start_daemon

gt_user_env hostile_fifo
# The user's files, outside /tmp: another program that reads every file
# under /tmp (the machine's other tests) would count as an opener here.
D=$(mktemp -d /var/tmp/gt-hostile.XXXXXX) && chmod 0755 "$D" && chown "$USER_NAME" "$D"
trap 'rm -rf "$D"; gt_cleanup' EXIT
OPENED="python3 tests/integration/opened.py"
UP=../../..  # from /usr/lib/debug to /

# mkbin NAME LINK: $D/NAME, the sleeper without debug info, whose
# .gnu_debuglink names LINK (with a CRC of 0).
mkbin() {
	local bin=$D/$1
	cp "$WL/sleeper" "$bin" && objcopy --strip-debug --remove-section=.gnu_debuglink "$bin" &&
		: >"$GT_TMP/placeholder" && objcopy --add-gnu-debuglink="$GT_TMP/placeholder" "$bin" &&
		python3 -c 'import sys
n = sys.argv[1].encode() + b"\0"
n += b"\0" * (-len(n) % 4)
open(sys.argv[2], "wb").write(n + b"\0\0\0\0")' "$2" "$GT_TMP/link.bytes" &&
		objcopy --update-section .gnu_debuglink="$GT_TMP/link.bytes" "$bin" &&
		chown "$USER_NAME" "$bin" && chmod 0755 "$bin" || return 1
	if readelf -S "$bin" | grep -q '\.debug_info'; then
		echo "$bin still has .debug_info" >&2
		return 1
	fi
}

# watch_opens TAG PATH...: inotify on the paths (WATCH_PID), opens in $GT_TMP/TAG.opens.
watch_opens() {
	local tag=$1 i
	shift
	: >"$GT_TMP/$tag.opens"
	$OPENED watch "$GT_TMP/$tag.opens" "$@" 2>"$GT_TMP/$tag.watch.err" &
	WATCH_PID=$!
	gt_pids+=("$WATCH_PID")
	for i in $(seq 1 100); do
		grep -q watching "$GT_TMP/$tag.opens" && return 0
		sleep 0.05
	done
	return 1
}

# record_user TAG PROGRAM...: starts the user's program, records it as root
# through the daemon for 2 s while asking `status` every 50 ms; sets WHY
# to what went wrong (empty: the recording ended by itself within 60 s and
# was valid, and every status answered).  The program is left running
# (UPID) for the caller's checks.
record_user() {
	local tag=$1 i rc t0 t1 worst=0 asked=0 done=0
	shift
	WHY=
	as_user_bg "$@" </dev/null >"$GT_TMP/$tag.out" 2>&1 &
	UPID=$!
	gt_pids+=("$UPID")
	for i in $(seq 1 200); do
		if [ -n "${PID_FILE:-}" ]; then
			[ -s "$PID_FILE" ] && { UPID=$(cat "$PID_FILE"); break; }
		else
			grep -q sleeper "$GT_TMP/$tag.out" && break
		fi
		sleep 0.05
	done
	# the daemon's own answer time (connect, STATUS, reply), printed only
	python3 tests/integration/status_latency.py "$SOCK" 2.5 >"$GT_TMP/$tag.latency" 2>&1 &
	LAT_PID=$!
	gt_pids+=("$LAT_PID")
	"$GTCTL" record --daemon --socket "$SOCK" -p "$UPID" -d 2s -o "$GT_TMP/$tag.trace" \
		>"$GT_TMP/$tag.rec.out" 2>&1 &
	REC_PID=$!
	gt_pids+=("$REC_PID")
	for _ in $(seq 1 600); do
		kill -0 "$REC_PID" 2>/dev/null || { done=1; break; }
		t0=$(date +%s%N)
		if ! timeout 10 "$GTCTL" status --socket "$SOCK" >/dev/null 2>&1; then
			WHY="\`status\` did not answer within 10 s while root recorded the program"
			break
		fi
		t1=$(date +%s%N)
		asked=$((asked + 1))
		[ $(((t1 - t0) / 1000000)) -gt $worst ] && worst=$(((t1 - t0) / 1000000))
		sleep 0.05
	done
	echo "  $tag: $asked \`gotracectl status\` answers while recording, the slowest in $worst ms"
	for _ in $(seq 1 100); do kill -0 "$LAT_PID" 2>/dev/null || break; sleep 0.1; done
	kill "$LAT_PID" 2>/dev/null && wait "$LAT_PID" 2>/dev/null
	echo "  $tag: daemon's status answers, every 50 ms: $(tail -1 "$GT_TMP/$tag.latency")"
	if [ -z "$WHY" ] && [ $done = 0 ]; then
		WHY="the 2 s recording had not ended after 30 s"
	fi
	[ -n "$WHY" ] && return 1
	wait "$REC_PID"
	rc=$?
	if [ $rc != 0 ]; then
		WHY="record exited $rc: $(tail -3 "$GT_TMP/$tag.rec.out")"
		return 1
	fi
	gt_valid "$tag" "$GT_TMP/$tag.trace" || { WHY="(see above)"; return 1; }
}

# unblock FIFO...: lets a daemon stuck in an open of them go on (old builds).
unblock() { local f; for f in "$@"; do $OPENED fifo "$f" >/dev/null 2>&1; done; }

# --- a FIFO by ../ -------------------------------------------------------------
mkfifo "$D/fifo" && chown "$USER_NAME" "$D/fifo"
if ! mkbin fifobin "$UP$D/fifo"; then
	fail hostile_fifo "could not build the program"
else
	record_user hostile_fifo "$D/fifobin" 1000000 1000
	seen=$($OPENED fifo "$D/fifo")
	unblock "$D/fifo"
	if [ "$seen" != never ]; then
		fail hostile_fifo "the daemon opened the user's FIFO (${WHY:-and was not stopped by it})"
	else
		gt_report hostile_fifo "$WHY"
	fi
	kill "$UPID" 2>/dev/null
fi

# --- links, devices, sparse files: by ../ and as a bare name beside the binary --
# hostile_case NAME TARGET: TARGET (in $D) reached by a bare name that is a
# link to it in the program's directory, and by ../ to that link.
mkdir -p "$D/bin" && chown "$USER_NAME" "$D/bin"
mkfifo "$D/fifo2" && chown "$USER_NAME" "$D/fifo2"
ln -s "$D/fifo2" "$D/bin/link.debug"
mknod "$D/dev" c 1 3 && chmod 0666 "$D/dev"
ln "$D/dev" "$D/bin/dev.debug" 2>/dev/null || mknod "$D/bin/dev.debug" c 1 3
truncate -s 3584M "$D/bin/huge.debug" && chown "$USER_NAME" "$D/bin/huge.debug"

# check_case NAME BARE REASON PATH...: two programs, one naming BARE beside
# it, one naming it by ../; the PATHs must never be opened, and the daemon
# logs that it refused BARE for REASON (it looked, and said why not).
check_case() {
	local name=$1 bare=$2 reason=$3 why=
	shift 3
	if ! mkbin "bin/$name.bare" "$bare" || ! mkbin "bin/$name.up" "$UP$D/bin/$bare"; then
		fail "$name" "could not build the programs"
		return
	fi
	watch_opens "$name" "$@" || { fail "$name" "inotify: $(cat "$GT_TMP/$name.watch.err")"; return; }
	for v in bare up; do
		record_user "$name.$v" "$D/bin/$name.$v" 1000000 1000 || why=${why:-$v: $WHY}
		kill "$UPID" 2>/dev/null
		[ "$name" = hostile_symlink ] && [ "$($OPENED fifo "$D/fifo2")" != never ] &&
			why=${why:-"$v: the daemon opened the FIFO the link points to"}
		unblock "$D/fifo2"
	done
	sleep 0.2
	kill "$WATCH_PID" 2>/dev/null
	if [ -s "$GT_TMP/$name.opens" ] && grep -q '^open' "$GT_TMP/$name.opens"; then
		why=${why:-"opened: $(grep '^open' "$GT_TMP/$name.opens" | sort -u | tr '\n' ' ')"}
	fi
	grep -q "symbols: not reading $D/bin/$bare: $reason" "$GT_TMP/daemon.log" ||
		why=${why:-"the daemon's log does not say it refused $bare ($reason)"}
	gt_report "$name" "$why"
}
check_case hostile_symlink link.debug "a symbolic link" "$D/fifo2"
check_case hostile_device dev.debug "not a regular file" "$D/dev" "$D/bin/dev.debug"
check_case hostile_sparse huge.debug "larger than 1 GiB" "$D/bin/huge.debug"
grep -E 'symbols: not reading' "$GT_TMP/daemon.log" | sort | uniq -c | head -20 | sed 's/^/  daemon: /'

# --- a FIFO over the binary, in the user's own mount namespace -----------------
if ! as_user unshare -Urm true 2>/dev/null; then
	fail hostile_root_fifo "no user namespaces here (unshare -Urm as $USER_NAME failed)"
else
	mkdir -p "$D/ns" && chown "$USER_NAME" "$D/ns"
	cp "$WL/sleeper" "$D/ns/prog" && chown "$USER_NAME" "$D/ns/prog"
	mkfifo "$D/ns/fifo" && chown "$USER_NAME" "$D/ns/fifo"
	# the program starts, then its path is covered by the FIFO (in its
	# namespace only); its pid (as the host sees it) goes to ns/pid
	PID_FILE=$D/ns/pid
	# shellcheck disable=SC2016
	record_user hostile_root_fifo unshare -Urm sh -c '
		"$1/prog" 1000000 1000 & p=$!
		mount --bind "$1/fifo" "$1/prog" || exit 1
		echo $p >"$1/pid.tmp" && mv "$1/pid.tmp" "$1/pid"; wait' sh "$D/ns"
	PID_FILE=
	seen=$($OPENED fifo "$D/ns/fifo")
	unblock "$D/ns/fifo"
	kill "$UPID" 2>/dev/null
	if [ "$seen" != never ]; then
		fail hostile_root_fifo "the daemon opened the FIFO over the program (${WHY:-and was not stopped by it})"
	elif [ -n "$WHY" ]; then
		fail hostile_root_fifo "$WHY"
	elif ! grep -aq workloads/sleeper.c "$GT_TMP/hostile_root_fifo.trace"; then
		fail hostile_root_fifo "the program's frames are not named (no file:line in sleeper.c)"
	else
		ok hostile_root_fifo
	fi
fi
gt_finish
