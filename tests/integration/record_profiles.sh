#!/usr/bin/env bash
# record_profiles.sh: one set of numbers.  The profiles a user opens in the
# Go viewers (`go tool trace -pprof=TYPE`: sched, sync, syscall, net; Go
# 1.19 and Go 1.23) total what `report` says each of them shows (its
# "Go viewers' profiles" section and --json "viewers"), within 2%: each
# reader's own definition, reproduced (docs/mapping.md#profiles), on
#  - profiles_demo:  the demo (sleeps, a pipe, spinners, timers);
#  - profiles_mutex: four threads fighting over one mutex (Go 1.23's
#    scheduler profile there is three times Go 1.19's: it runs on to the
#    next stop, the running time included);
#  - profiles_net:   pingpong over a socket pair (GoBlockNet: the io page);
#  - profiles_fsync: fsyncloop (syscalls that block, and the disk).
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

cases="profiles_demo profiles_mutex profiles_net profiles_fsync"
gt_expect $cases
gt_require_bpf $cases

check() { # NAME -- COMMAND...
	local name=$1 t=$GT_TMP/$1.trace out
	shift 2
	if ! "$GTCTL" record -o "$t" -- "$@" >"$GT_TMP/$name.out" 2>"$GT_TMP/$name.err"; then
		fail "$name" "record failed: $(tail -3 "$GT_TMP/$name.err")"
	elif ! gt_valid "$name" "$t"; then
		:
	elif out=$(python3 tests/integration/profiles_check.py "$GTCTL" "$t" 2>&1); then
		ok "$name"
		echo "$out" | sed 's/^/# /'
	else
		fail "$name" "the Go viewers' profiles and report disagree"
		echo "$out" | detail
	fi
}

check profiles_demo -- "$WL/demo" 1
check profiles_mutex -- "$WL/mutex" 4 2000
check profiles_net -- "$WL/pingpong" 500 socket
check profiles_fsync -- "$WL/fsyncloop" 20
gt_finish
