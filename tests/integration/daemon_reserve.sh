#!/usr/bin/env bash
# daemon_reserve.sh: a user's trace, written by gotraced (root), is charged
# to the user: on a small ext4 file system whose free
# space is down to root's reserved blocks (-m 25), a non-root user's
# recording fails with "No space left on device" and leaves no file, instead
# of filling root's reserve; root's own recording there still works (the
# reserve is there, and is root's).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

USER_NAME=gt_test_user

gt_require_daemon daemon_reserve
gt_expect reserve_user_refused reserve_user_no_file reserve_root_writes reserve_exit
command -v mkfs.ext4 >/dev/null || { fail reserve_user_refused "mkfs.ext4 missing (e2fsprogs)"; gt_finish; }
gt_start_daemon

gt_user_env reserve_user_refused

MNT=$GT_TMP/small
mkdir -p "$MNT"
truncate -s 16M "$GT_TMP/small.img"
if ! mkfs.ext4 -q -m 25 "$GT_TMP/small.img" || ! mount -o loop "$GT_TMP/small.img" "$MNT"; then
	fail reserve_user_refused "cannot make and mount a small ext4 file system"
	gt_finish
fi
trap 'umount "$MNT" 2>/dev/null; gt_cleanup' EXIT
mkdir "$MNT/u" && chown "$USER_NAME" "$MNT/u"
# the user fills what is not reserved (big blocks, then the last few)
as_user dd if=/dev/zero of="$MNT/u/fill" bs=64k status=none 2>/dev/null
as_user dd if=/dev/zero of="$MNT/u/fill2" bs=1k status=none 2>/dev/null
sync

as_user_bg "$GT_TMP/bin/sleeper" 100000 1000 >/dev/null &
UT=$!
gt_pids+=("$UT")
gt_refused reserve_user_refused "No space left on device" \
	as_user "$UCTL" record --daemon --socket "$SOCK" -p "$UT" -o "$MNT/u/t.trace" -d 500ms
left=$(ls "$MNT/u" | grep -v '^fill2\?$')
if [ -z "$left" ]; then ok reserve_user_no_file
else fail reserve_user_no_file "left behind: $left"; fi

out=$("$GTCTL" record --daemon --socket "$SOCK" -p "$UT" -o "$MNT/root.trace" -d 300ms 2>&1); rc=$?
if [ $rc = 0 ]; then gt_valid reserve_root_writes "$MNT/root.trace" && ok reserve_root_writes
else fail reserve_root_writes "rc=$rc: $out"; fi

kill -TERM "$DAEMON_PID"
if wait "$DAEMON_PID"; then ok reserve_exit; else fail reserve_exit "gotraced exited $?"; fi
[ "$gt_failures" -gt 0 ] && { echo "# daemon log:"; tail -20 "$GT_TMP/daemon.log" | detail; }
gt_finish
