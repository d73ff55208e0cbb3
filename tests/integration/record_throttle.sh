#!/usr/bin/env bash
# record_throttle.sh: CFS bandwidth throttling is told apart from preemption
# (bpf/throttle.bpf.h, docs/mapping.md "CFS bandwidth throttling").  A C
# spinner runs in a cgroup of its own (cgroup v1 `cpu` controller, else v2
# with `cpu`), launched by `record -- CMD` so that the recording holds its
# whole life and the cgroup's cpu.stat, read before and after, counts the
# same throttles:
#  - throttle_vs_cpustat: quota 20 ms per 100 ms period.  `report --json`
#    "throttled" names the cgroup once; its count is cpu.stat's nr_throttled
#    delta, or one less (a throttle that spans two period timers is two
#    there, one wait here); its time is throttled_time's delta plus, per
#    wait, at most 20 ms: the wait runs from the switch-out to the next
#    switch-in, the kernel's from the throttle to the unthrottle, and an
#    unthrottle does not preempt what runs on the CPU (the spinner waits up
#    to a tick, 4 ms at HZ=250, behind the other work of a shared machine;
#    seen 0.5 to 2.5 ms a wait with cpu.shares high, as set here), and at
#    least 1 ms less than the kernel's for each throttle not seen as one.
#    The trace passes Go's readers (gt_valid).
#  - throttle_none_unlimited: the same spinner without a quota: nothing is
#    throttled, in cpu.stat and in the report.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

gt_require_bpf throttle_vs_cpustat throttle_none_unlimited
gt_expect throttle_vs_cpustat throttle_none_unlimited

# The cpu controller's hierarchy: v1's `cpu` mount, else v2 with cpu on.
V1=/sys/fs/cgroup/cpu
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -e "$V1/cpu.cfs_quota_us" ]; then
	CG=$V1/gt-throttle-$$ ver=1
elif [ -n "$V2" ] && grep -qw cpu "$V2/cgroup.controllers" 2>/dev/null; then
	grep -qw cpu "$V2/cgroup.subtree_control" || echo +cpu >"$V2/cgroup.subtree_control"
	CG=$V2/gt-throttle-$$ ver=2
else
	for c in throttle_vs_cpustat throttle_none_unlimited; do
		fail $c "no cpu controller: neither $V1/cpu.cfs_quota_us nor cpu in $V2/cgroup.controllers"
	done
	exit 1
fi
# the cgroups go too, whatever the exit (gt_cleanup reads the exit status)
trap 'rc=$?; rmdir "$CG-a" "$CG-b" 2>/dev/null; (exit $rc); gt_cleanup' EXIT

# cpu.stat as "nr_throttled throttled_ns"
cg_stat() {
	awk -v v=$ver '$1 == "nr_throttled" { n = $2 }
		$1 == "throttled_time" { t = $2 } $1 == "throttled_usec" { t = $2 * 1000 }
		END { print n + 0, t + 0 }' "$1/cpu.stat"
}

# run NAME QUOTA_US: the spinner in cgroup $CG-NAME, recorded; writes
# $GT_TMP/NAME.stat ("before" and "after" lines) and NAME.trace.
run() {
	local cg=$CG-$1
	mkdir "$cg" || return 1
	if [ $ver = 1 ]; then
		echo "$2" >"$cg/cpu.cfs_quota_us" && echo 100000 >"$cg/cpu.cfs_period_us" &&
			echo 262144 >"$cg/cpu.shares"
	else
		echo "${2/#-1/max} 100000" >"$cg/cpu.max" && echo 10000 >"$cg/cpu.weight"
	fi || return 1
	cg_stat "$cg" >"$GT_TMP/$1.stat"
	"$GTCTL" record -q -o "$GT_TMP/$1.trace" -- \
		sh -c "echo \$\$ >$cg/cgroup.procs && exec $WL/spin 1 1500" \
		>"$GT_TMP/$1.out" 2>"$GT_TMP/$1.err" || return 1
	cg_stat "$cg" >>"$GT_TMP/$1.stat"
	rmdir "$cg"
}

# verdict NAME: "" or why not, from NAME.stat and the report's "throttled"
verdict() {
	"$GTCTL" report --json "$GT_TMP/$1.trace" >"$GT_TMP/$1.report.json" || {
		echo "gotracectl report failed"; return; }
	python3 - "$1" "$GT_TMP/$1.stat" "$GT_TMP/$1.report.json" <<'EOF'
import json, sys
name, stat, rep = sys.argv[1:]
(b_n, b_t), (a_n, a_t) = [map(int, l.split()) for l in open(stat)]
n, t = a_n - b_n, a_t - b_t
th = json.load(open(rep))["throttled"]
ours_n, ours_t = sum(r["count"] for r in th), sum(r["ns"] for r in th)
print(f"# {name}: cpu.stat {n} throttles, {t / 1e6:.2f} ms; report {ours_n} waits, "
      f"{ours_t / 1e6:.2f} ms ({[r['cgroup'] for r in th]})", file=sys.stderr)
if name == "b":
    if n or ours_n:
        print(f"throttled without a quota: cpu.stat {n}, report {ours_n}")
    sys.exit(0)
if n < 3:
    print(f"the spinner was throttled {n} times (want >= 3: the quota did not bite)")
elif len(th) != 1:
    print(f"want one cgroup named in the report: {[r['cgroup'] for r in th]}")
elif not (n - 1 <= ours_n <= n):
    print(f"report {ours_n} throttled waits, cpu.stat {n} throttles")
elif not (t - (n - ours_n) * 100e6 - 1e6 <= ours_t <= t + ours_n * 20e6):
    print(f"report {ours_t / 1e6:.2f} ms throttled, cpu.stat {t / 1e6:.2f} ms over {n}")
EOF
}

for c in a:20000:throttle_vs_cpustat b:-1:throttle_none_unlimited; do
	IFS=: read -r n q case <<<"$c"
	if ! run "$n" "$q"; then
		fail "$case" "recording the spinner in $CG-$n failed: $(tail -3 "$GT_TMP/$n.err")"
		continue
	fi
	gt_valid "$case" "$GT_TMP/$n.trace" || continue
	why=$(verdict "$n" 2>"$GT_TMP/$n.figures")
	cat "$GT_TMP/$n.figures"
	if [ -z "$why" ] && [ "$n" = a ] &&
	   ! grep -q "gt-throttle-$$-a" "$GT_TMP/$n.report.json"; then
		why="the report does not name cgroup gt-throttle-$$-a"
	fi
	gt_report "$case" "$why"
done
gt_finish
