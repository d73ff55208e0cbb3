#!/usr/bin/env bash
# record_output.sh: -o names a regular file or a new name, nothing else
# (root's `-o /dev/null` turned the device into a
# regular file).  In embedded and daemon mode alike, a device (mknod under
# our temp dir, never the system's /dev), a FIFO, a socket, a directory and
# a symlink get a clear error and are left exactly as they were; a regular
# file is replaced by the finished trace and kept as FILE.old; a path that turns into a FIFO
# while recording is left alone and the trace is kept beside it.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

gt_require_daemon record_output
for m in standalone daemon; do
	gt_expect output_refuses_{null,full,fifo,sock,dir,symlink}_$m output_replaces_regular_$m \
		output_path_replaced_$m
done
gt_start_daemon

"$WL/sleeper" 100000 10000 >/dev/null &
TARGET=$!
gt_pids+=("$TARGET")

# snapshot PATH: type, mode, device numbers, link target — what must not change
snapshot() { stat -c '%F %a %t:%T %s' "$1" 2>&1; readlink "$1" 2>/dev/null; }

make_nodes() {
	local d=$1
	mkdir -p "$d"
	mknod "$d/null" c 1 3
	mknod "$d/full" c 1 7
	mkfifo "$d/fifo"
	mkdir "$d/dir"
	ln -s "$d/target" "$d/symlink"
	python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$d/sock"
}

# refused MODE NODE WORD: recording to NODE fails, names WORD, NODE unchanged
refused() {
	local mode=$1 node=$2 word=$3 name before after out rc
	name="output_refuses_${node##*/}_$mode"
	before=$(snapshot "$node")
	out=$(timeout 30 "$GTCTL" record "--$mode" --socket "$SOCK" -p "$TARGET" -o "$node" -d 300ms 2>&1)
	rc=$?
	after=$(snapshot "$node")
	if [ "$rc" = 0 ]; then
		fail "$name" "exit 0: $out"
	elif ! echo "$out" | grep -q "$word"; then
		fail "$name" "rc=$rc, message does not say '$word': $out"
	elif [ "$before" != "$after" ]; then
		fail "$name" "the node changed: '$before' -> '$after'"
	elif [ -e "${node%/*}/target" ]; then
		fail "$name" "the symlink's target was created"
	else
		ok "$name"
	fi
}

for mode in standalone daemon; do
	d=$GT_TMP/nodes-$mode
	make_nodes "$d"
	refused "$mode" "$d/null" "a device"
	refused "$mode" "$d/full" "a device"
	refused "$mode" "$d/fifo" "a FIFO"
	refused "$mode" "$d/sock" "a socket"
	refused "$mode" "$d/dir" "a directory"
	refused "$mode" "$d/symlink" "a symbolic link"

	# a regular file is replaced by the trace
	echo "old contents" >"$d/regular"
	out=$(timeout 30 "$GTCTL" record "--$mode" --socket "$SOCK" -p "$TARGET" -o "$d/regular" -d 300ms 2>&1)
	rc=$?
	if [ "$rc" = 0 ] && ! grep -q "old contents" "$d/regular"; then
		gt_valid "output_replaces_regular_$mode" "$d/regular" && ok "output_replaces_regular_$mode"
	else
		fail "output_replaces_regular_$mode" "rc=$rc: $out"
	fi
	# ... and the file it replaced is kept as FILE.old, as perf keeps
	# perf.data.old; a second recording keeps the first trace there
	if [ "$(cat "$d/regular.old" 2>&1)" != "old contents" ]; then
		fail "output_keeps_old_$mode" "the replaced file is not FILE.old: $(ls "$d" | tr '\n' ' ')"
	else
		cp "$d/regular" "$GT_TMP/first-$mode.trace"
		out=$(timeout 30 "$GTCTL" record "--$mode" --socket "$SOCK" -p "$TARGET" -o "$d/regular" -d 300ms 2>&1)
		if cmp -s "$d/regular.old" "$GT_TMP/first-$mode.trace"; then
			ok "output_keeps_old_$mode"
		else
			fail "output_keeps_old_$mode" "the first trace is not FILE.old after a second recording: $out"
		fi
	fi

	# the path becomes a FIFO while recording: left alone, trace kept beside it
	if [ "$mode" = standalone ]; then
		gt_record_bg "race-$mode" -p "$TARGET" -o "$d/race" -d 60s
	else
		"$GTCTL" record --daemon --socket "$SOCK" -p "$TARGET" -o "$d/race" -d 60s \
			2>"$GT_TMP/race-$mode.rec.err" >/dev/null &
		REC_PID=$!
		gt_pids+=("$REC_PID")
		for i in $(seq 1 600); do
			[ "$(python3 tests/integration/daemon_proto.py status "$SOCK")" = "sessions 1" ] && break
			sleep 0.1
		done
	fi
	mkfifo "$d/race"
	gt_stop_record INT
	rc=$?
	err=$(cat "$GT_TMP/race-$mode.rec.err")
	kept=$(echo "$err" | sed -n 's/.*the trace is kept as \([^ ]*\).*/\1/p' | tail -1)
	if [ "$rc" = 0 ]; then
		fail "output_path_replaced_$mode" "exit 0 although the path became a FIFO: $err"
	elif [ "$(stat -c %F "$d/race")" != fifo ]; then
		fail "output_path_replaced_$mode" "the FIFO was replaced"
	elif [ -z "$kept" ] || [ ! -s "$kept" ]; then
		fail "output_path_replaced_$mode" "no kept trace named: $err"
	else
		gt_valid "output_path_replaced_$mode" "$kept" && ok "output_path_replaced_$mode"
	fi
done

gt_finish
