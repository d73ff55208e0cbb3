#!/usr/bin/env bash
# daemon_flood.sh: no user can lock the others out of gotraced
# (300 idle connections filled the 256 slots and root's `status`
# got "too many clients").  A non-root user (created here) flooding the
# socket gets its own limit of connections, said in the refusal; another
# user and root are still served; a user's concurrent sessions are
# bounded too.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

PROTO="python3 tests/integration/daemon_proto.py"
U1=gt_test_user
U2=gt_test_user2
USER_NAME=$U2 # as_user, UDIR, UCTL: the second user's

gt_require_daemon daemon_flood
gt_expect flood_user_capped flood_root_status flood_other_user_served \
	flood_user_sessions_capped flood_root_records flood_user_sessions_finish
# idle connections are the point here: not closed for sending nothing
gt_start_daemon --request-timeout 600

gt_user_make flood_setup "$U1"
gt_user_env flood_setup
cp tests/integration/daemon_proto.py daemon/common/session_opts.h "$GT_TMP/bin/" &&
	chmod 0644 "$GT_TMP/bin/daemon_proto.py" "$GT_TMP/bin/session_opts.h"

# --- one user opens 300 idle connections -------------------------------------
as_named "$U1" /usr/bin/python3 "$GT_TMP/bin/daemon_proto.py" flood "$SOCK" 300 20 >"$GT_TMP/flood.out" 2>&1 &
FLOOD=$!
gt_pids+=("$FLOOD")
for i in $(seq 1 200); do
	[ -s "$GT_TMP/flood.out" ] && break
	sleep 0.1
done
line=$(head -1 "$GT_TMP/flood.out")
acc=$(echo "$line" | awk '{print $2}')
if [ "$acc" = 32 ] && echo "$line" | grep -q "already has 32 connections"; then
	ok flood_user_capped
else
	fail flood_user_capped "wanted 32 accepted and the limit named: $line"
fi

# root still gets status, and another user is still served
out=$("$GTCTL" status --socket "$SOCK" 2>&1)
if [ $? = 0 ]; then ok flood_root_status; else fail flood_root_status "$out"; fi
out=$(as_user "$UCTL" status --socket "$SOCK" 2>&1)
if [ $? = 0 ]; then ok flood_other_user_served; else fail flood_other_user_served "$out"; fi
kill "$FLOOD" 2>/dev/null
wait "$FLOOD" 2>/dev/null

# --- one user's concurrent sessions are bounded ------------------------------
as_user_bg "$GT_TMP/bin/sleeper" 100000 10000 >/dev/null &
UT=$!
gt_pids+=("$UT")
recs=()
for i in $(seq 1 8); do
	as_user "$UCTL" record --daemon --socket "$SOCK" -p "$UT" \
		-o "$UDIR/s$i.trace" -d 30s >/dev/null 2>"$UDIR/s$i.err" &
	recs+=($!)
	gt_pids+=($!)
done
for i in $(seq 1 100); do
	[ "$($PROTO status "$SOCK")" = "sessions 8" ] && break
	sleep 0.1
done
gt_refused flood_user_sessions_capped "too many sessions for uid $(id -u "$U2"): limit 8" \
	as_user "$UCTL" record --daemon --socket "$SOCK" -p "$UT" -o "$UDIR/s9.trace" -d 1s
# root may still record beside them
out=$("$GTCTL" record --daemon --socket "$SOCK" -p "$UT" -o "$GT_TMP/root.trace" -d 300ms 2>&1)
if [ $? = 0 ]; then gt_valid flood_root_records "$GT_TMP/root.trace" && ok flood_root_records
else fail flood_root_records "$out"; fi
kill -INT "${recs[@]}" 2>/dev/null
for p in "${recs[@]}"; do wait "$p" 2>/dev/null; done
n_ok=0
for i in $(seq 1 8); do [ -s "$UDIR/s$i.trace" ] && n_ok=$((n_ok + 1)); done
if [ "$n_ok" = 8 ]; then ok flood_user_sessions_finish
else fail flood_user_sessions_finish "$n_ok of 8 sessions left a trace: $(cat "$UDIR"/s1.err)"; fi

gt_finish
