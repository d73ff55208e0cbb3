#!/usr/bin/env bash
# record_container.sh: `record --container` on a real podman container
# (rootful, cgroupfs manager, runc: what this machine's podman makes, at
# libpod_parent/libpod-<id> with no .scope), recorded through gotraced.
# The image is built here (busybox-static, our cpu_hot and jit_spin
# workloads with their libraries, imported with `podman import`: nothing is
# pulled), in a storage of the test's own (--root/--runroot), removed at
# exit.
#  - ctr_prefix: --container <12 hex> (what `podman ps` prints) finds the
#    container; the trace is valid;
#  - ctr_named: the program run in the container (`podman exec`) is named
#    by its comm, and the container's pid 1 appears under its host pid;
#  - ctr_symbols: its frames are named from the container's own files: the
#    binary is stripped, at a path the host does not have, and its debug
#    file is only in the container's /usr/lib/debug/.build-id (both read
#    through /proc/PID/root);
#  - ctr_perfmap: code named only by a perf map the program wrote in the
#    container's /tmp under its pid in the container's pid namespace is
#    named;
#  - ctr_full_id: the full 64-hex id finds it too;
#  - ctr_name: so does its name (podman run --name), found by its conmon;
#  - ctr_unit_suffix: a unit given with its suffix (nginx.service) is
#    looked for as itself, and a miss says so (not "nginx.service.service");
#  - ctr_rootless: a rootless podman container (user gt_podman, made with a
#    subordinate id range if missing) has no cgroup on this hybrid host:
#    --container finds it by its conmon, and records its processes (another
#    user namespace: uids and /proc/PID/root differ) named and symbolized.
# Other layouts (podman's systemd manager, docker, containerd, CRI-O) are
# the unit test test_cgroup_resolve's fake trees: docs/design.md
# "Containers" says why they do not run here.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

CASES="ctr_prefix ctr_named ctr_symbols ctr_perfmap ctr_full_id ctr_name ctr_unit_suffix ctr_rootless"
# shellcheck disable=SC2086
gt_require_daemon $CASES
# shellcheck disable=SC2086
gt_expect $CASES

# no_ctr WHY: every case fails with WHY; the script ends.
no_ctr() {
	local c
	for c in $CASES; do fail "$c" "$1"; done
	gt_finish
}

for t in podman runc busybox; do
	command -v $t >/dev/null || no_ctr "$t not installed: podman, runc and busybox-static are needed (make deps)"
done
for w in cpu_hot jit_spin; do
	[ -x "$WL/$w" ] || no_ctr "$WL/$w not built"
done

# Podman's state is the test's own: nothing in /var/lib/containers, /etc or
# /run/libpod changes. vfs: the image is a few MB and works on any /tmp.
# cgroupfs + runc: no systemd runs here, and crun refuses the hybrid
# cgroup v1/v2 mounts. The limits are set because podman's defaults
# (nofile 1048576, nproc) exceed what this host's root may set without
# CAP_SYS_RESOURCE; --network none needs no netavark.
PM=$(mktemp -d /tmp/gt-podman.XXXXXX)
PODMAN=(podman --root "$PM/root" --runroot "$PM/run" --tmpdir "$PM/tmp" --storage-driver vfs
	--cgroup-manager cgroupfs --runtime runc --events-backend file)
IMAGE=localhost/gt-test-$$
CTR=gt-test-$$
RL_USER=gt_podman
cleanup_podman() {
	"${PODMAN[@]}" rm -f -t 0 "$CTR" >/dev/null 2>&1
	"${PODMAN[@]}" rmi -f "$IMAGE" >/dev/null 2>&1
	if [ -d "$PM/user" ]; then
		as_rootless rm -f -t 0 "$CTR" >/dev/null 2>&1
		# rootless podman leaves a pause process holding its namespaces
		[ -s "$PM/user/xdg/libpod/tmp/pause.pid" ] &&
			kill -KILL "$(cat "$PM/user/xdg/libpod/tmp/pause.pid")" 2>/dev/null
	fi
	rm -rf "$PM"
	return 0 # gt_cleanup takes the script's status from $?
}
trap 'cleanup_podman; gt_cleanup' EXIT
trap 'exit 130' INT # a killed run removes its containers too (the EXIT trap)
trap 'exit 143' TERM

# as_rootless ARGS...: podman ARGS as RL_USER, in its storage under $PM/user
as_rootless() {
	setpriv --reuid="$RL_USER" --regid="$(id -g "$RL_USER")" --init-groups -- \
		env HOME="$PM/user" XDG_RUNTIME_DIR="$PM/user/xdg" \
		podman --root "$PM/user/root" --runroot "$PM/user/xdg/run" --storage-driver vfs \
		--cgroup-manager cgroupfs --runtime runc --events-backend file "$@"
}

# The rootfs: busybox for sh and sleep; cpu_hot, stripped, as
# /opt/gt/gt_ctr_hot (a path the host lacks) with its debug file where a
# -dbgsym package puts it, in the container only; jit_spin as
# /opt/gt/gt_jit; the libraries they link, at their paths.
R=$PM/rootfs
mkdir -p "$R/bin" "$R/opt/gt" "$R/tmp"
cp "$(command -v busybox)" "$R/bin/busybox"
for a in sh sleep; do ln -s busybox "$R/bin/$a"; done
BID=$(readelf -n "$WL/cpu_hot" | awk '/Build ID:/ { print $3 }')
[ -n "$BID" ] || no_ctr "$WL/cpu_hot has no build-id"
mkdir -p "$R/usr/lib/debug/.build-id/${BID:0:2}"
objcopy --only-keep-debug "$WL/cpu_hot" "$R/usr/lib/debug/.build-id/${BID:0:2}/${BID:2}.debug"
cp "$WL/cpu_hot" "$R/opt/gt/gt_ctr_hot" && strip --strip-all "$R/opt/gt/gt_ctr_hot"
cp "$WL/jit_spin" "$R/opt/gt/gt_jit"
for lib in $(ldd "$WL/cpu_hot" "$WL/jit_spin" | awk '$1 ~ /^\// { print $1 } $3 ~ /^\// { print $3 }' | sort -u); do
	mkdir -p "$R$(dirname "$lib")" && cp -L "$lib" "$R$lib"
done
if ! out=$(tar -C "$R" -c . | "${PODMAN[@]}" import - "$IMAGE" 2>&1); then
	no_ctr "podman import failed: $out"
fi
# pid 1 wakes every 0.2 s: it has events of its own in any recording
if ! ID=$("${PODMAN[@]}" run -d --pull never --network none --ulimit nofile=1024:1024 \
	--ulimit nproc=1024:1024 --name "$CTR" "$IMAGE" \
	/bin/sh -c 'while :; do sleep 0.2; done' 2>"$PM/run.err"); then
	no_ctr "podman run failed: $(tail -3 "$PM/run.err")"
fi
HOSTPID=$("${PODMAN[@]}" inspect -f '{{.State.Pid}}' "$CTR")
CG=$(awk -F: '$1 == 0 { print $3 }' "/proc/$HOSTPID/cgroup")
echo "# container ${ID:0:12}: host pid $HOSTPID, cgroup $CG"

gt_need_cgroup2 ctr_prefix
gt_start_daemon

# --- by the 12-hex prefix; the program runs in it while recorded -----------------
F=$GT_TMP/ctr.trace
if ! gt_record_bg ctr --daemon --socket "$SOCK" --cpu-profile --container "${ID:0:12}" -o "$F"; then
	no_ctr "record --container ${ID:0:12} did not start: $(tail -3 "$GT_TMP/ctr.rec.err")"
fi
# runs to its end inside the container (300 ms of its CPU time), then the
# recording stops: no timing assumed
for prog in gt_ctr_hot gt_jit; do
	"${PODMAN[@]}" exec "$CTR" "/opt/gt/$prog" 300 >>"$GT_TMP/exec.out" 2>&1 ||
		echo "# podman exec $prog: $(tail -2 "$GT_TMP/exec.out")"
done
gt_stop_record INT
rc=$?
if [ $rc != 0 ]; then
	no_ctr "record --container ${ID:0:12} exited $rc: $(tail -3 "$GT_TMP/ctr.rec.err")"
fi
if ! grep -q "started .*cgroup $CGMNT$CG" "$GT_TMP/daemon.log"; then
	fail ctr_prefix "the daemon did not record $CGMNT$CG: $(grep started "$GT_TMP/daemon.log" | tail -1)"
elif gt_valid ctr_prefix "$F"; then
	ok ctr_prefix
fi

# --- names and host pids ---------------------------------------------------------
if [ -s "$F.json" ]; then
	why=$(python3 - "$F.json" "$HOSTPID" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
names = {g.get("name", "") for g in j.get("goroutines", [])}
tids = {str(g.get("tid", g.get("id", ""))) for g in j.get("goroutines", [])}
why = []
if "cpu_hot" not in names:
    why.append("cpu_hot (run in the container, comm it sets) not named; names: %s" % sorted(names)[:20])
if sys.argv[2] not in tids:
    why.append("the container's pid 1 (host pid %s) is not in the trace" % sys.argv[2])
print("; ".join(why))
PY
)
	gt_report ctr_named "$why"
	"$GTCTL" report --folded=cpu "$F" >"$GT_TMP/ctr.folded" 2>&1
	if grep -q 'cpu_hot_spin' "$GT_TMP/ctr.folded"; then
		ok ctr_symbols
	else
		fail ctr_symbols "no stack names cpu_hot_spin: $(grep cpu_hot "$GT_TMP/ctr.folded" | head -3)"
	fi
	if grep -q 'gt_jit_spin' "$GT_TMP/ctr.folded"; then
		ok ctr_perfmap
	else
		fail ctr_perfmap "no stack names gt_jit_spin ($(grep '^map' "$GT_TMP/exec.out")): $(grep jit "$GT_TMP/ctr.folded" | head -3)"
	fi
else
	fail ctr_named "no valid trace (see ctr_prefix)"
	fail ctr_symbols "no valid trace (see ctr_prefix)"
	fail ctr_perfmap "no valid trace (see ctr_prefix)"
fi

# --- by the full id, by the name ----------------------------------------------------
# record_as CASE TAG WHAT SESSIONS: record --container WHAT, stopped once
# started; the daemon's log then has SESSIONS sessions of the container's
# cgroup.
record_as() {
	if gt_record_bg "$2" --daemon --socket "$SOCK" --container "$3" -o "$GT_TMP/$2.trace"; then
		gt_stop_record INT
		rc=$?
		if [ $rc != 0 ]; then
			fail "$1" "record --container $3 exited $rc: $(tail -3 "$GT_TMP/$2.rec.err")"
		elif [ "$(grep -c "started .*cgroup $CGMNT$CG" "$GT_TMP/daemon.log")" != "$4" ]; then
			fail "$1" "the daemon did not record $CGMNT$CG: $(grep started "$GT_TMP/daemon.log" | tail -1)"
		elif gt_valid "$1" "$GT_TMP/$2.trace"; then
			ok "$1"
		fi
	else
		fail "$1" "record --container $3 did not start: $(tail -3 "$GT_TMP/$2.rec.err")"
	fi
}
record_as ctr_full_id full "$ID" 2
record_as ctr_name name "$CTR" 3

# --- a unit named with its suffix ----------------------------------------------------
gt_refused ctr_unit_suffix "unit gt-no-such-$$.service)" "$GTCTL" record --daemon --socket "$SOCK" \
	--container "gt-no-such-$$.service" -o "$GT_TMP/none.trace" -d 1s
echo "$out" | grep -q '\.service\.service' && fail ctr_unit_suffix "looked for .service.service: $out"

# --- rootless: no cgroup, found by its conmon -------------------------------------
# RL_USER needs a subordinate id range for its user namespace (a system
# user, as the other tests' users; the range is added once and kept).
rootless() {
	local rid f=$GT_TMP/rl.trace why out
	id "$RL_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$RL_USER" ||
		{ RL_WHY="useradd $RL_USER failed"; return; }
	if ! grep -q "^$RL_USER:" /etc/subuid || ! grep -q "^$RL_USER:" /etc/subgid; then
		usermod --add-subuids 1879048192-1879113727 --add-subgids 1879048192-1879113727 "$RL_USER" ||
			{ RL_WHY="usermod --add-subuids failed"; return; }
	fi
	mkdir -p "$PM/user/xdg" "$PM/user/sync" && chmod 0711 "$PM" &&
		chown -R "$RL_USER" "$PM/user" && chmod 0700 "$PM/user/xdg"
	out=$(tar -C "$R" -c . | as_rootless import - "$IMAGE" 2>&1) || { RL_WHY="rootless podman import: $out"; return; }
	# the program runs once /sync/go exists (made once the recording runs)
	# shellcheck disable=SC2016
	rid=$(as_rootless run -d --pull never --network none --ulimit nofile=1024:1024 \
		--ulimit nproc=1024:1024 -v "$PM/user/sync:/sync" --name "$CTR" "$IMAGE" /bin/sh -c \
		'while [ ! -e /sync/go ]; do sleep 0.1; done; /opt/gt/gt_ctr_hot 300; : >/sync/done; while :; do sleep 1; done' \
		2>"$PM/rl.err") || { RL_WHY="rootless podman run: $(tail -2 "$PM/rl.err")"; return; }
	echo "# rootless container ${rid:0:12}: $(as_rootless top "$CTR" pid hpid user huser 2>&1 | sed -n 2p)" >&2
	gt_record_bg rl --daemon --socket "$SOCK" --cpu-profile --container "${rid:0:12}" -o "$f" ||
		{ RL_WHY="record --container ${rid:0:12} did not start: $(tail -2 "$GT_TMP/rl.rec.err")"; return; }
	: >"$PM/user/sync/go"
	for _ in $(seq 1 600); do [ -e "$PM/user/sync/done" ] && break; sleep 0.1; done
	gt_stop_record INT || { RL_WHY="record exited $?: $(tail -2 "$GT_TMP/rl.rec.err")"; return; }
	[ -e "$PM/user/sync/done" ] || { RL_WHY="the program in the container did not end in 60 s"; return; }
	grep -q "no cgroup of its own" "$GT_TMP/rl.rec.err" ||
		{ RL_WHY="record did not say the container has no cgroup: $(head -2 "$GT_TMP/rl.rec.err")"; return; }
	gt_valid ctr_rootless "$f" || { RL_WHY=reported; return; }
	why=$(python3 -c 'import json,sys; n={g.get("name") for g in json.load(open(sys.argv[1]))["goroutines"]}; print("" if "cpu_hot" in n else "cpu_hot not named: %s" % sorted(n))' "$f.json")
	[ -n "$why" ] && { RL_WHY="$why"; return; }
	"$GTCTL" report --folded=cpu "$f" >"$GT_TMP/rl.folded" 2>&1
	grep -q cpu_hot_spin "$GT_TMP/rl.folded" ||
		RL_WHY="no stack names cpu_hot_spin: $(head -c 300 "$GT_TMP/rl.folded")"
}
RL_WHY=
rootless
case "$RL_WHY" in
"") ok ctr_rootless ;;
reported) ;; # gt_valid failed it
*) fail ctr_rootless "$RL_WHY" ;;
esac

kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID"
[ "$gt_failures" -gt 0 ] && { echo "# daemon log:"; tail -30 "$GT_TMP/daemon.log" | detail; }
gt_finish
