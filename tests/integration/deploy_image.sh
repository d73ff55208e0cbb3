#!/usr/bin/env bash
# deploy_image.sh: gotraced's image (`make image`: deploy/image/build.sh)
# run by podman, and the Kubernetes DaemonSet's pod template
# (deploy/kubernetes/gotraced-daemonset.yaml) run as a Pod by `podman kube
# play` (podman 4.3 plays Pods, not DaemonSets).  Storage is the test's own
# (--root/--runroot, vfs), removed at exit; nothing is pulled: the image,
# a busybox image to record and the pod's infra image are imported here.
#  - img_build: build.sh makes the image from this build;
#  - img_host: from inside the image (--privileged --pid=host, /sys and
#    the cgroup mount), `gotracectl record -p PID` of a host process:
#    valid, the process named;
#  - img_container: from inside the image, --container of another podman
#    container: valid, its program named, its frames named from the
#    container's own files (stripped binary, debug file only in it);
#  - img_caps: the same with the DaemonSet's capabilities instead of
#    --privileged (less CAP_SYS_RESOURCE, which this host's root lacks);
#  - pod_play: the DaemonSet's pod template, played as a Pod (hostPath
#    socket and dump directory moved to the test's, the flight cgroup to
#    a kubelet-like tree of the test's), runs the daemon: its readiness
#    command answers, `gotracectl status` from the host through the
#    hostPath socket lists the always-on recording;
#  - pod_record: `gotracectl record --pod UID` from the host, through the
#    pod's daemon, records the fake pod's process (its cgroup found as
#    kubelet's cgroupfs driver names it): valid and named;
#  - pod_by_name: --pod NAMESPACE/NAME asks crictl (a fake one here,
#    answering as crictl does) for the UID, and records the same pod;
#  - pod_no_crictl: without crictl, NAMESPACE/NAME is refused with a
#    message saying to pass the UID;
#  - pod_dump: `gotracectl dump` of the always-on recording writes a valid
#    trace in the hostPath dump directory on the host.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

CASES="img_build img_host img_container img_caps pod_play pod_record pod_by_name pod_no_crictl pod_dump"
# shellcheck disable=SC2086
gt_require_daemon $CASES
# shellcheck disable=SC2086
gt_expect $CASES

no_img() {
	local c
	for c in $CASES; do fail "$c" "$1"; done
	gt_finish
}

for t in podman runc busybox python3; do
	command -v $t >/dev/null || no_img "$t not installed: podman, runc, busybox-static and python3-yaml are needed (make deps)"
done
python3 -c 'import yaml' 2>/dev/null || no_img "python3-yaml not installed (make deps)"
[ -x "$WL/cpu_hot" ] || no_img "$WL/cpu_hot not built"
gt_need_cgroup2 img_host

# As record_container.sh: the test's own storage; cgroupfs + runc; the
# limits this host's root may set; no network.  CONTAINERS_CONF (the
# test's file) gives `kube play` the same limits and a local infra image.
PM=$(mktemp -d /tmp/gt-podman.XXXXXX)
PODMAN=(podman --root "$PM/root" --runroot "$PM/run" --tmpdir "$PM/tmp" --storage-driver vfs
	--cgroup-manager cgroupfs --runtime runc --events-backend file)
LIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
IMAGE=localhost/gotraced
BOX=localhost/gt-box-$$
CTR=gt-box-$$
K8S=gt_test_k8s_$$      # the fake node's kubelet tree, under the cgroup mount
POD_UID=$(python3 -c 'import uuid; print(uuid.uuid4())')
POD_CG=$CGMNT/$K8S/kubepods/besteffort/pod$POD_UID
POD_ID=
cleanup_podman() {
	local c
	"${PODMAN[@]}" pod rm -f -t 0 -a >/dev/null 2>&1
	"${PODMAN[@]}" rm -f -t 0 -a >/dev/null 2>&1
	# podman 4.3's cgroupfs manager leaves the pod's own (empty) cgroup,
	# libpod_parent/<pod id>, in every hierarchy after pod rm
	if [ -n "$POD_ID" ]; then
		for c in /sys/fs/cgroup/*/libpod_parent/"$POD_ID" "$CGMNT/libpod_parent/$POD_ID"; do
			[ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
		done
	fi
	[ -n "${POD_PID:-}" ] && kill -KILL "$POD_PID" 2>/dev/null && wait "$POD_PID" 2>/dev/null
	# deepest first; a cgroup is removed once its processes are gone
	find "$CGMNT/$K8S" -depth -type d -exec rmdir {} + 2>/dev/null
	rm -rf "$PM"
	return 0
}
trap 'cleanup_podman; gt_cleanup' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$PM/out"

# --- the image ----------------------------------------------------------------------
if out=$(PODMAN="${PODMAN[*]}" deploy/image/build.sh "$GT_BUILD" "$IMAGE" 2>&1); then
	ok img_build
else
	no_img "deploy/image/build.sh failed: $out"
fi
# run_gt WHAT ARGS...: gotracectl ARGS in the image, privileged, as the
# README says; the trace dir is /out
run_gt() {
	"${PODMAN[@]}" run --rm --pull never --network none "${LIMITS[@]}" --privileged --pid=host \
		-v /sys:/sys -v "$CGMNT:$CGMNT" -v "$PM/out:/out" "$IMAGE" gotracectl "$@"
}
# named F COMM: F.json names a thread COMM ("" if so, else why)
named() {
	python3 -c 'import json,sys; n={g.get("name") for g in json.load(open(sys.argv[1]))["goroutines"]}; print("" if sys.argv[2] in n else "%s not named: %s" % (sys.argv[2], sorted(n)[:20]))' "$1" "$2"
}

# --- a host process, from inside the image ------------------------------------------
"$WL/cpu_hot" 100000 >/dev/null 2>&1 &
HOT=$!
gt_pids+=("$HOT")
if ! out=$(run_gt record -p "$HOT" --cpu-profile -o /out/host.trace -d 1s 2>&1); then
	fail img_host "record in the image failed: $(echo "$out" | tail -3)"
elif gt_valid img_host "$PM/out/host.trace"; then
	gt_report img_host "$(named "$PM/out/host.trace.json" cpu_hot)"
fi

# --- another container, from inside the image ----------------------------------------
# busybox and cpu_hot (stripped, at a path the host lacks; its debug file
# only in the container), as record_container.sh builds it
R=$PM/box
mkdir -p "$R/bin" "$R/opt/gt" "$R/tmp"
cp "$(command -v busybox)" "$R/bin/busybox"
for a in sh sleep; do ln -s busybox "$R/bin/$a"; done
BID=$(readelf -n "$WL/cpu_hot" | awk '/Build ID:/ { print $3 }')
mkdir -p "$R/usr/lib/debug/.build-id/${BID:0:2}"
objcopy --only-keep-debug "$WL/cpu_hot" "$R/usr/lib/debug/.build-id/${BID:0:2}/${BID:2}.debug"
cp "$WL/cpu_hot" "$R/opt/gt/gt_ctr_hot" && strip --strip-all "$R/opt/gt/gt_ctr_hot"
for lib in $(ldd "$WL/cpu_hot" | awk '$1 ~ /^\// { print $1 } $3 ~ /^\// { print $3 }' | sort -u); do
	mkdir -p "$R$(dirname "$lib")" && cp -L "$lib" "$R$lib"
done
printf '#!/bin/sh\nexec sleep 2147483647\n' >"$R/pause" && chmod +x "$R/pause"
out=$(tar -C "$R" -c . | "${PODMAN[@]}" import -q --change 'CMD=["/pause"]' - "$BOX" 2>&1) ||
	no_img "podman import of the busybox image failed: $out"
# the program spins until the container ends: any second of it has samples
if ID=$("${PODMAN[@]}" run -d --pull never --network none "${LIMITS[@]}" --name "$CTR" "$BOX" \
	/opt/gt/gt_ctr_hot 100000 2>"$PM/run.err"); then
	if ! out=$(run_gt record --container "${ID:0:12}" --cpu-profile -o /out/ctr.trace -d 1s 2>&1); then
		fail img_container "record --container in the image failed: $(echo "$out" | tail -3)"
	elif gt_valid img_container "$PM/out/ctr.trace"; then
		why=$(named "$PM/out/ctr.trace.json" cpu_hot)
		"$GTCTL" report --folded=cpu "$PM/out/ctr.trace" >"$GT_TMP/ctr.folded" 2>&1
		grep -q cpu_hot_spin "$GT_TMP/ctr.folded" ||
			why="$why${why:+; }no stack names cpu_hot_spin: $(head -c 300 "$GT_TMP/ctr.folded")"
		gt_report img_container "$why"
	fi
	"${PODMAN[@]}" rm -f -t 0 "$CTR" >/dev/null 2>&1
else
	fail img_container "podman run failed: $(tail -3 "$PM/run.err")"
fi

# --- the DaemonSet's capabilities instead of --privileged -----------------------------
CAPS=$(python3 -c 'import yaml,sys; d=yaml.safe_load(open(sys.argv[1])); print(",".join(d["spec"]["template"]["spec"]["containers"][0]["securityContext"]["capabilities"]["add"]))' deploy/kubernetes/gotraced-daemonset.yaml)
# this host's root has no CAP_SYS_RESOURCE to give (runc refuses it)
grep -q '^CapBnd:.*' /proc/self/status && (( (0x$(awk '/^CapBnd/ { print $2 }' /proc/self/status) >> 24) & 1 )) ||
	CAPS=${CAPS/,SYS_RESOURCE/}
if out=$("${PODMAN[@]}" run --rm --pull never --network none "${LIMITS[@]}" --cap-add "$CAPS" \
	--security-opt seccomp=unconfined --pid=host -v /sys:/sys:ro -v "$CGMNT:$CGMNT:ro" \
	-v "$PM/out:/out" "$IMAGE" gotracectl record -p "$HOT" -o /out/caps.trace -d 1s 2>&1); then
	gt_valid img_caps "$PM/out/caps.trace" && ok img_caps
else
	fail img_caps "record with --cap-add $CAPS failed: $(echo "$out" | tail -3)"
fi
kill -KILL "$HOT" 2>/dev/null; wait "$HOT" 2>/dev/null

# --- the DaemonSet's pod template, played as a Pod ------------------------------------
# the fake pod: a process in kubepods/besteffort/pod<UID>/<container id>,
# as kubelet's cgroupfs driver lays it out, under the test's own root
CID=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
mkdir -p "$POD_CG/$CID" "$PM/sync"
"$WL/cpu_hot" 100000 >/dev/null 2>&1 &
POD_PID=$!
echo "$POD_PID" >"$POD_CG/$CID/cgroup.procs" || no_img "cannot move $POD_PID into $POD_CG/$CID"

mkdir -p "$PM/node/run" "$PM/node/flight"
python3 - deploy/kubernetes/gotraced-daemonset.yaml "$PM/pod.yaml" "$PM/node" "$K8S/kubepods" <<'PY'
import sys, yaml
ds = yaml.safe_load(open(sys.argv[1]))
tmpl = ds["spec"]["template"]
spec = tmpl["spec"]
for v in spec["volumes"]:  # the node's directories: the test's
    if v["name"] in ("run", "flight"):
        v["hostPath"]["path"] = "%s/%s" % (sys.argv[3], v["name"])
c = spec["containers"][0]
c["args"] = ["--flight-cgroup=" + sys.argv[4] if a.startswith("--flight-cgroup=") else a
             for a in c["args"]]
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "gotraced", "labels": tmpl["metadata"]["labels"]}, "spec": spec}
yaml.safe_dump(pod, open(sys.argv[2], "w"))
PY
cat >"$PM/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
infra_image = "$BOX"
CONF
NSOCK=$PM/node/run/gotraced.sock
if ! out=$(CONTAINERS_CONF=$PM/containers.conf "${PODMAN[@]}" kube play --network none "$PM/pod.yaml" 2>&1); then
	for c in pod_play pod_record pod_by_name pod_no_crictl pod_dump; do fail $c "podman kube play failed: $out"; done
	gt_finish
fi
POD_ID=$("${PODMAN[@]}" pod inspect -f '{{.Id}}' gotraced 2>/dev/null)
for _ in $(seq 1 300); do
	"${PODMAN[@]}" logs gotraced-gotraced 2>&1 | grep -q 'ready on' && break
	sleep 0.1
done
"${PODMAN[@]}" logs gotraced-gotraced >"$GT_TMP/pod.log" 2>&1
PROBE=$(python3 -c 'import yaml,sys; print(" ".join(yaml.safe_load(open(sys.argv[1]))["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["exec"]["command"]))' deploy/kubernetes/gotraced-daemonset.yaml)
# shellcheck disable=SC2086
if ! out=$("${PODMAN[@]}" exec gotraced-gotraced $PROBE 2>&1); then
	fail pod_play "the readiness command ($PROBE) failed: $out; log: $(tail -3 "$GT_TMP/pod.log")"
elif ! st=$("$GTCTL" status --socket "$NSOCK" 2>&1); then
	fail pod_play "gotracectl status --socket $NSOCK from the host failed: $st"
elif ! echo "$st" | grep -q 'always on'; then
	fail pod_play "status lists no always-on recording: $st; log: $(tail -3 "$GT_TMP/pod.log")"
else
	ok pod_play
fi

if ! out=$("$GTCTL" record --daemon --socket "$NSOCK" --pod "$POD_UID" --cpu-profile -d 1s \
	-o "$GT_TMP/pod.trace" 2>&1); then
	fail pod_record "record --pod $POD_UID through the pod's daemon failed: $(echo "$out" | tail -3)"
elif gt_valid pod_record "$GT_TMP/pod.trace"; then
	gt_report pod_record "$(named "$GT_TMP/pod.trace.json" cpu_hot)"
fi

# crictl as it answers `pods --namespace NS --name RE -q` (sandbox ids,
# here one of another pod whose name the regular expression matches too)
# and `inspectp -o go-template` (the template's "name uid")
mkdir -p "$PM/bin" "$PM/nobin"
cat >"$PM/bin/crictl" <<CRICTL
#!/bin/sh
case "\$*" in
"pods --namespace kube-system --name web -q") echo sandbox1; echo sandbox2 ;;
"inspectp -o go-template --template "*" sandbox1") echo "web-other 0c5f5a0e-2b4c-4d7e-9f3a-000000000000" ;;
"inspectp -o go-template --template "*" sandbox2") echo "web $POD_UID" ;;
*) echo "crictl: unexpected \$*" >&2; exit 1 ;;
esac
CRICTL
chmod +x "$PM/bin/crictl"
if ! out=$(PATH="$PM/bin:$PATH" "$GTCTL" record --daemon --socket "$NSOCK" --pod kube-system/web \
	--cpu-profile -d 1s -o "$GT_TMP/byname.trace" 2>&1); then
	fail pod_by_name "record --pod kube-system/web failed: $(echo "$out" | tail -3)"
elif gt_valid pod_by_name "$GT_TMP/byname.trace"; then
	gt_report pod_by_name "$(named "$GT_TMP/byname.trace.json" cpu_hot)"
fi
gt_refused pod_no_crictl "pass --pod UID" env PATH="$PM/nobin" "$GTCTL" record --daemon \
	--socket "$NSOCK" --pod kube-system/web -d 1s -o "$GT_TMP/none.trace"

FID=$(echo "$st" | awk '/always on/ { print $1; exit }')
if ! out=$("$GTCTL" dump --socket "$NSOCK" "$FID" 2>&1); then
	fail pod_dump "dump $FID failed: $out"
else
	DUMP=$(find "$PM/node/flight" -name 'flight-*.trace' | head -1)
	if [ -z "$DUMP" ]; then
		fail pod_dump "no dump in the hostPath $PM/node/flight: $out"
	elif gt_valid pod_dump "$DUMP"; then
		gt_report pod_dump "$(named "$DUMP.json" cpu_hot)"
	fi
fi
[ "$gt_failures" -gt 0 ] && { echo "# pod log:"; tail -20 "$GT_TMP/pod.log" | detail; }
gt_finish
