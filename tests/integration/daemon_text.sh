#!/usr/bin/env bash
# daemon_text.sh: no byte of text a user or a traced process chose reaches
# a terminal or the daemon's log as a control byte (issue 32, items 4 and
# 7; docs/security.md "Text from users").
#  - a process names itself ESC ] 0 ; ... BEL LF 0x9b (a window title,
#    a newline, an 8-bit CSI); root records it (Go 1.19 and Go 1.23
#    files): `report`, `report --folded`, `inspect --goroutines` show
#    the name escaped (\e]0;OWN\a\n\x9bx) and no control byte;
#  - a detached flight recording dumps to a directory named
#    $'x\e]0;OWNED\a\n99 root ...' with a trigger whose @NAME is that
#    comm, and a hand-written client's RECORD carries such a label:
#    root's `status` shows them escaped, with no forged session line;
#  - the trigger fires: the daemon's log says so on one line, escaped;
#  - a user who makes the daemon log 100 refusals gets 50 lines and one
#    saying how many were left out.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

PROTO="python3 tests/integration/daemon_proto.py"
COMM=$'\e]0;OWN\a\n\x9bx'           # 11 bytes: fits a comm (15)
SHOWN='\e]0;OWN\a\n\x9bx'             # as gt_escape shows it
FLOODER=61010                        # a uid without a name

gt_require_daemon daemon_text
gt_expect text_comm_set text_report text_folded text_inspect text_v2 text_status \
	text_status_no_forged_line text_trigger_logged text_log_clean text_log_limited \
	text_traces_valid text_exit
gt_start_daemon

# no control byte but newline, no DEL, no C1, well-formed UTF-8: "" or why not
controls() {
	python3 - "$@" <<'PY'
import sys
for f in sys.argv[1:]:
    b = open(f, "rb").read()
    try:
        t = b.decode("utf-8")
    except UnicodeDecodeError as e:
        print(f"{f}: not UTF-8 at byte {e.start}: {b[max(0, e.start - 20):e.start + 5]!r}")
        continue
    for i, ch in enumerate(t):
        o = ord(ch)
        if (o < 0x20 and ch != "\n") or o == 0x7F or 0x80 <= o <= 0x9F:
            print(f"{f}: U+{o:04X} at {i}: {t[max(0, i - 30):i + 5]!r}")
            break
PY
}

# --- a user floods the log (checked at the end: its window is 10 s) ----------------
chmod 0755 "$GT_TMP" && chmod 0666 "$SOCK"
mkdir -p "$GT_TMP/bin" && chmod 0755 "$GT_TMP/bin"
cp tests/integration/daemon_proto.py daemon/common/session_opts.h "$GT_TMP/bin/" &&
	chmod 0644 "$GT_TMP/bin/daemon_proto.py" "$GT_TMP/bin/session_opts.h"
flood_at=$SECONDS
flood=$(setpriv --reuid=$FLOODER --regid=$FLOODER --clear-groups -- \
	/usr/bin/python3 "$GT_TMP/bin/daemon_proto.py" stops "$SOCK" 100 2>&1)

# --- a process with a hostile name ----------------------------------------------------
python3 - "$COMM" >/dev/null 2>&1 <<'PY' &
import os, sys, time
with open("/proc/self/comm", "wb") as f:
    f.write(os.fsencode(sys.argv[1]))
end = time.time() + 120
while time.time() < end:
    time.sleep(0.02)   # off-CPU stops for the report, offcpu>5ms for the trigger
PY
HPID=$!
gt_pids+=("$HPID")
for _ in $(seq 1 100); do
	[ "$(head -c 11 "/proc/$HPID/comm" 2>/dev/null)" = "$COMM" ] && break
	sleep 0.05
done
if [ "$(head -c 11 "/proc/$HPID/comm")" = "$COMM" ]; then ok text_comm_set
else fail text_comm_set "comm is $(od -c "/proc/$HPID/comm" | head -2)"; fi

# --- root's terminal: report, folded, inspect of v1 and v2 files ------------------------
"$GTCTL" record --daemon --socket "$SOCK" -p "$HPID" -o "$GT_TMP/v1.trace" -d 1s \
	>/dev/null 2>"$GT_TMP/v1.err"
"$GTCTL" record --daemon --socket "$SOCK" -p "$HPID" -o "$GT_TMP/v2.trace" -d 1s \
	--go-version 1.23 >/dev/null 2>"$GT_TMP/v2.err"
# each output must name the thread, escaped, and hold no control byte
extra=
shown() { # NAME FILE [AS]: ok if FILE shows the name escaped (AS), no control byte, no $extra
	local why as=${3:-$SHOWN}
	why=$(controls "$2")
	grep -qF "$as" "$2" || why="${why:+$why; }the name is not shown as $as"
	[ -z "$extra" ] || why="${why:+$why; }$extra"
	gt_report "$1" "$why"
	[ -z "$why" ] || { head -c 600 "$2" | cat -v; echo; } | detail
}
# --thread takes the name as it is shown, too
{ "$GTCTL" report "$GT_TMP/v1.trace" && "$GTCTL" report --thread "$SHOWN" "$GT_TMP/v1.trace"; } \
	>"$GT_TMP/report.out" 2>&1 || extra="report or report --thread '$SHOWN' failed"
shown text_report "$GT_TMP/report.out"
extra=
"$GTCTL" report --folded=offcpu "$GT_TMP/v1.trace" >"$GT_TMP/folded.out" 2>&1
shown text_folded "$GT_TMP/folded.out" "${SHOWN//;/_}" # ';' parts frames there
"$GTCTL" inspect --goroutines "$GT_TMP/v1.trace" >"$GT_TMP/inspect.out" 2>&1
shown text_inspect "$GT_TMP/inspect.out"
{ "$GTCTL" inspect --goroutines "$GT_TMP/v2.trace"; "$GTCTL" report "$GT_TMP/v2.trace"; } \
	>"$GT_TMP/v2.out" 2>&1
shown text_v2 "$GT_TMP/v2.out"

# --- root's status: a hostile dump directory, trigger and label ---------------------------
FDIR=$GT_TMP/$'x\e]0;OWNED\a\n99   root  forged'
mkdir -p "$FDIR"
FID=$("$GTCTL" record --socket "$SOCK" -p "$HPID" --flight=2s --detach -o "$FDIR" \
	--trigger "offcpu>5ms@$COMM" 2>"$GT_TMP/flight.err")
$PROTO label "$SOCK" "$GT_TMP/label.trace" "$HPID" >"$GT_TMP/label.out" 2>&1 &
LBL=$!
gt_pids+=("$LBL")
for _ in $(seq 1 300); do
	grep -q recording "$GT_TMP/label.out" && break
	sleep 0.1
done
# until the trigger fired (the comm sleeps 20 ms at a time)
for _ in $(seq 1 100); do
	grep -q "trigger .* fired" "$GT_TMP/daemon.log" && break
	sleep 0.1
done
"$GTCTL" status --socket "$SOCK" >"$GT_TMP/status.out" 2>&1
why=$(controls "$GT_TMP/status.out")
grep -qF 'x\e]0;OWNED\a\n99   root  forged\x9b2J)' "$GT_TMP/status.out" ||
	why="${why:+$why; }the label is not shown escaped"
grep '^     flight' "$GT_TMP/status.out" | grep -qF 'x\e]0;OWNED\a\n99   root  forged' ||
	why="${why:+$why; }the dump directory is not shown escaped"
grep -qF "@$SHOWN" "$GT_TMP/status.out" || why="${why:+$why; }the trigger is not shown escaped"
[ -n "$FID" ] || why="${why:+$why; }no flight session: $(cat "$GT_TMP/flight.err")"
gt_report text_status "$why"
[ -z "$why" ] && [ -n "$FID" ] || cat -v "$GT_TMP/status.out" | detail
# the header, two sessions, one flight line: no line more (a forged one)
n=$(wc -l <"$GT_TMP/status.out")
gt_report text_status_no_forged_line "$([ "$n" = 4 ] || echo "$n lines, not 4")"
[ -n "$FID" ] && "$GTCTL" stop --socket "$SOCK" "$FID" >/dev/null
"$GTCTL" stop --socket "$SOCK" "$(awk '/OWNED/ && !/flight/ { print $1; exit }' "$GT_TMP/status.out")" \
	>/dev/null 2>&1
wait "$LBL"
dumps=("$FDIR"/*.trace)
if [ -e "${dumps[0]}" ] && gt_valid text_traces_valid "$GT_TMP/v1.trace" &&
	gt_valid text_traces_valid "$GT_TMP/v2.trace" &&
	gt_valid text_traces_valid "$GT_TMP/label.trace" &&
	gt_valid text_traces_valid "${dumps[0]}"; then
	ok text_traces_valid
elif [ ! -e "${dumps[0]}" ]; then
	fail text_traces_valid "no dump in the flight directory"
fi

# --- the daemon's log --------------------------------------------------------------------
line=$(grep -F "trigger offcpu>5ms@$SHOWN fired: thread $HPID ($SHOWN)" "$GT_TMP/daemon.log")
[ -n "$line" ] && ok text_trigger_logged || fail text_trigger_logged "no escaped trigger line"
# the flood's window ends 10 s after its first line; the count follows
while [ $((SECONDS - flood_at)) -le 40 ] &&
	! grep -q "uid $FLOODER: .* left out" "$GT_TMP/daemon.log"; do
	sleep 0.5
done
why=$(controls "$GT_TMP/daemon.log")
gt_report text_log_clean "$why"
n=$(grep -c "(uid $FLOODER pid [0-9]*): refused: no session 999999" "$GT_TMP/daemon.log")
left=$(grep -c "uid $FLOODER: 50 log lines left out in the last" "$GT_TMP/daemon.log")
if [ "$flood" = "refused 100" ] && [ "$n" = 50 ] && [ "$left" = 1 ]; then ok text_log_limited
else fail text_log_limited "$flood; $n refusal lines logged, $left saying what was left out"; fi

kill -TERM "$DAEMON_PID"
if wait "$DAEMON_PID"; then ok text_exit; else fail text_exit "gotraced exited $?"; fi
[ "$gt_failures" -gt 0 ] && { echo "# daemon log:"; tail -20 "$GT_TMP/daemon.log" | cat -v | detail; }
gt_finish
