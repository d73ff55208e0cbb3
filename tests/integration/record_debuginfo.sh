#!/usr/bin/env bash
# record_debuginfo.sh: a stripped program is named as well as its unstripped
# build from its separate debug information (sym/debug_file.h,
# sym/minidebug.h).  The blockread workload is recorded unstripped (the
# reference), then stripped (`strip --strip-all`, code unmoved) with:
#  - debug_buildid: its `objcopy --only-keep-debug` file at
#    /usr/lib/debug/.build-id/xx/rest.debug (by its build-id, where
#    Debian's -dbgsym packages put them; created for the test, removed
#    after);
#  - debug_buildid_root: the same file only in the program's own mount
#    namespace (a tmpfs over its /usr/lib/debug: a container with the
#    -dbgsym package installed), not in ours;
#  - debug_buildid_other: there, at its build-id's path, another
#    program's debug file: refused (its build-id differs), logged, and
#    nothing named from it;
#  - debug_minidebuginfo: no debug file, but a .gnu_debugdata section (an
#    xz-compressed .symtab of the functions .dynsym lacks, as Fedora
#    builds it, following gdb's manual).
# Equal means: every frame of the stripped program is named, and at every
# file offset both traces hold, with the same function
# (debuginfo_check.py).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

CASES="debug_buildid debug_buildid_root debug_buildid_other debug_minidebuginfo"
# shellcheck disable=SC2086
gt_require_bpf $CASES
# shellcheck disable=SC2086
gt_expect $CASES

D=$GT_TMP/dbg
mkdir -p "$D"
REF=$D/blockread
cp "$WL/blockread" "$REF"
ID=$(readelf -n "$REF" | awk '/Build ID:/{print $3}')
HOSTDBG=/usr/lib/debug/.build-id/${ID:0:2}/${ID:2}.debug
made_dir=
cleanup_debug() {
	rm -f "$HOSTDBG"
	[ -n "$made_dir" ] && rmdir "$made_dir" 2>/dev/null
	return 0 # gt_cleanup takes the script's status from $?
}
trap 'cleanup_debug; gt_cleanup' EXIT

objcopy --only-keep-debug "$REF" "$D/blockread.debug"
cp "$REF" "$D/stripped" && strip --strip-all "$D/stripped"
objcopy --only-keep-debug "$WL/sleeper" "$D/other.debug"
# MiniDebugInfo, as gdb's manual ("MiniDebugInfo") builds it
nm -D "$REF" --format=posix --defined-only | awk '{ print $1 }' | sort >"$D/dynsyms"
nm "$REF" --format=posix --defined-only | awk '$2 ~ /^[Tt]$/ { print $1 }' | sort >"$D/funcsyms"
comm -13 "$D/dynsyms" "$D/funcsyms" >"$D/keep"
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$D/keep" \
	"$D/blockread.debug" "$D/mini" && xz -f "$D/mini" &&
	cp "$D/stripped" "$D/mini_stripped" &&
	objcopy --add-section .gnu_debugdata="$D/mini.xz" "$D/mini_stripped"
if [ -z "$ID" ] || readelf -S "$D/stripped" | grep -q '\.symtab' ||
	! readelf -S "$D/mini_stripped" | grep -q gnu_debugdata; then
	for c in $CASES; do fail "$c" "could not build the stripped programs (build-id '$ID')"; done
	gt_finish
fi

# record NAME TAG CMD...: records CMD (blockread's --wait protocol) while it
# runs, keeping its maps in TAG.maps and the frames in TAG.frames.
record() {
	local name=$1 tag=$2 rc
	shift 2
	if ! gt_start_workload "$tag" "$@"; then
		fail "$name" "the program did not start: $(head -3 "$GT_TMP/$tag.err")"
		return 1
	fi
	if ! gt_record_bg "$tag" -p "$WL_PID" -o "$GT_TMP/$tag.trace"; then
		fail "$name" "gotracectl record did not start: $(tail -5 "$GT_TMP/$tag.rec.err")"
		return 1
	fi
	gt_go "$tag"
	gt_wait_line "$tag" '^done' 60 || { fail "$name" "the program did not finish"; return 1; }
	cp "/proc/$WL_PID/maps" "$GT_TMP/$tag.maps"
	gt_stop_record INT
	rc=$?
	gt_leave "$tag"
	wait "$WL_PID"
	[ $rc = 0 ] || { fail "$name" "record exited $rc: $(tail -3 "$GT_TMP/$tag.rec.err")"; return 1; }
	gt_valid "$name" "$GT_TMP/$tag.trace" || return 1
	python3 tests/integration/trace_read.py frames "$GT_TMP/$tag.trace" >"$GT_TMP/$tag.frames"
}

# same NAME TAG BINARY [--unnamed]: TAG's frames in BINARY are named as the
# reference's (or, with --unnamed, not at all).
same() {
	local out
	if out=$(python3 tests/integration/debuginfo_check.py ${4:-} "$GT_TMP/ref.frames" "$GT_TMP/ref.maps" \
		"$GT_TMP/$2.frames" "$GT_TMP/$2.maps" "$3" 2>&1); then
		echo "  $1: $(head -1 <<<"$out")"
		return 0
	fi
	fail "$1" "$(tail -1 <<<"$out")"
	echo "$out" | detail
	return 1
}

# "${IN_NS[@]}" DEBUGFILE CMD...: CMD in its own mount namespace whose
# /usr/lib/debug holds only DEBUGFILE, at the reference's build-id path
# (unshare and sh exec: the pid is CMD's).
# shellcheck disable=SC2016
IN_NS=(unshare -m sh -c 'mount -t tmpfs gt-dbg /usr/lib/debug && mkdir -p "${2%/*}" &&
	cp "$1" "$2" && shift 2 && exec "$@"' sh)

R=(--wait 100 1000)
if ! record debug_buildid ref "$REF" "${R[@]}"; then
	for c in $CASES; do fail "$c" "no reference recording"; done
	gt_finish
fi

# --- in our /usr/lib/debug --------------------------------------------------------
if [ -e "$HOSTDBG" ]; then
	fail debug_buildid "$HOSTDBG exists already: not ours to replace"
else
	[ -d "${HOSTDBG%/*}" ] || { mkdir -p "${HOSTDBG%/*}" && made_dir=${HOSTDBG%/*}; }
	cp "$D/blockread.debug" "$HOSTDBG"
	record debug_buildid host "$D/stripped" "${R[@]}" &&
		same debug_buildid host "$D/stripped" && ok debug_buildid
	cleanup_debug
fi

# --- in the program's own root only -------------------------------------------------
record debug_buildid_root root "${IN_NS[@]}" "$D/blockread.debug" "$HOSTDBG" "$D/stripped" "${R[@]}" &&
	same debug_buildid_root root "$D/stripped" && ok debug_buildid_root

# --- another file at its build-id's path ----------------------------------------------
if record debug_buildid_other other "${IN_NS[@]}" "$D/other.debug" "$HOSTDBG" "$D/stripped" "${R[@]}"; then
	if ! grep -q "symbols: not reading $HOSTDBG: its build-id is not the binary's" \
		"$GT_TMP/other.rec.err"; then
		fail debug_buildid_other "no refusal logged: $(grep symbols: "$GT_TMP/other.rec.err" | head -3)"
	else
		same debug_buildid_other other "$D/stripped" --unnamed && ok debug_buildid_other
	fi
fi

# --- MiniDebugInfo -----------------------------------------------------------------------
record debug_minidebuginfo mini "$D/mini_stripped" "${R[@]}" &&
	same debug_minidebuginfo mini "$D/mini_stripped" && ok debug_minidebuginfo
gt_finish
