#!/usr/bin/env bash
# daemon_cgroup_oracle.sh: gotraced is no oracle for paths a user cannot see.
# It never looks a user's --cgroup path up with its
# own rights: gotracectl opens the directory itself and passes it; a
# hand-written client (daemon_proto.py) that names a path instead gets one
# answer, byte for byte, whether the path is missing, a directory that is
# not a cgroup, or a symbolic link to a secret name, all under a 0700
# directory of root's, and that answer names nothing of what is there.
#  - a user's own (delegated) cgroup is still recorded, by descriptor;
#  - root's cgroup is refused by descriptor too.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

PROTO="python3 tests/integration/daemon_proto.py"
USER_NAME=gt_test_user

gt_require_daemon daemon_cgroup_oracle
gt_expect cgroup_oracle_same_answer cgroup_oracle_no_secret cgroup_oracle_refused \
	cgroup_fd_own_recorded cgroup_fd_root_refused cgroup_oracle_exit
gt_need_cgroup2 cgroup_oracle_same_answer
gt_start_daemon

gt_user_env cgroup_oracle_same_answer
cp tests/integration/daemon_proto.py daemon/common/session_opts.h "$GT_TMP/bin/" &&
	chmod 0644 "$GT_TMP/bin/daemon_proto.py" "$GT_TMP/bin/session_opts.h"

# root's 0700 directory: a plain directory, a link to a secret name, nothing
SECRET=SECRETNAME$$
VAULT=$GT_TMP/vault
mkdir -p "$VAULT/notcg" "$VAULT/$SECRET"
ln -s "$VAULT/$SECRET" "$VAULT/link"
ln -s "$CGMNT" "$VAULT/cglink"
chmod 0700 "$VAULT"

answers=()
for p in "$VAULT/missing" "$VAULT/notcg" "$VAULT/link" "$VAULT/cglink" "$CGMNT"; do
	answers+=("$(as_user /usr/bin/python3 "$GT_TMP/bin/daemon_proto.py" cgroup "$SOCK" \
		"$UDIR/o.trace" "$p" 2>&1)")
done
printf '%s\n' "${answers[@]}" >"$GT_TMP/answers"
if [ "$(sort -u "$GT_TMP/answers" | wc -l)" = 1 ]; then
	ok cgroup_oracle_same_answer
else
	fail cgroup_oracle_same_answer "the answers differ by path"
	detail <"$GT_TMP/answers"
fi
if grep -q -e "$SECRET" -e notcg -e missing "$GT_TMP/answers"; then
	fail cgroup_oracle_no_secret "an answer names what is in $VAULT: $(grep -e "$SECRET" -e notcg "$GT_TMP/answers" | head -1)"
else
	ok cgroup_oracle_no_secret
fi
if grep -q "'ERROR'" "$GT_TMP/answers" && ! grep -q "session" "$GT_TMP/answers"; then
	ok cgroup_oracle_refused
else
	fail cgroup_oracle_refused "not refused: ${answers[0]}"
fi

# --- by descriptor: the user's own cgroup, and root's ------------------------------
CG=$CGMNT/gt_it_oracle_$$
mkdir "$CG" && chown "$USER_NAME" "$CG" "$CG/cgroup.procs"
trap 'rmdir "$CG" 2>/dev/null; gt_cleanup' EXIT
out=$(as_user "$UCTL" record --daemon --socket "$SOCK" --cgroup "$CG" \
	-o "$UDIR/own.trace" -d 300ms 2>&1); rc=$?
if [ $rc = 0 ]; then gt_valid cgroup_fd_own_recorded "$UDIR/own.trace" && ok cgroup_fd_own_recorded
else fail cgroup_fd_own_recorded "rc=$rc: $out"; fi
gt_refused cgroup_fd_root_refused "may not trace cgroup" \
	as_user "$UCTL" record --daemon --socket "$SOCK" --cgroup "$CGMNT" -o "$UDIR/root.trace" -d 300ms

kill -TERM "$DAEMON_PID"
if wait "$DAEMON_PID"; then ok cgroup_oracle_exit; else fail cgroup_oracle_exit "gotraced exited $?"; fi
[ "$gt_failures" -gt 0 ] && { echo "# daemon log:"; tail -20 "$GT_TMP/daemon.log" | detail; }
gt_finish
