#!/bin/busybox sh
# guest.sh: /init of a kernel-matrix guest (initramfs.sh packs it).  Loads
# the virtio modules, records the demo workload with gotracectl three times
# (the default options, every optional probe, then --call-graph=dwarf), and writes everything it
# made (traces, logs, exit codes, dmesg) as a tar file onto the raw disk
# /dev/vda, which the host unpacks.  Kernel command line words reach us as
# environment variables: gtjob=btf copies the kernel's BTF out instead;
# gtverbose=1 adds libbpf's verifier log (--verbose) to every recording.
/bin/busybox --install -s /bin
export PATH=/bin:/gt
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null

say() { echo "gt-guest: $(cut -d' ' -f1 /proc/uptime)s $*" > /dev/console; }

finish() {
	dmesg > /out/dmesg
	say "writing results"
	tar -cf /dev/vda -C /out . || say "writing /dev/vda failed"
	sync
	poweroff -f
}

for m in $(cat /lib/modules/order); do
	insmod /lib/modules/$m.ko 2>/dev/null
done
for i in $(seq 1 100); do
	[ -b /dev/vda ] && break
	sleep 0.1
done
if [ ! -b /dev/vda ]; then
	say "no /dev/vda: the virtio disk did not appear"
	poweroff -f
fi
uname -r > /out/uname
uname -m > /out/machine
say "booted $(uname -r) $(uname -m)"

if [ "${gtjob:-record}" = btf ]; then
	cp /sys/kernel/btf/vmlinux /out/vmlinux.btf
	finish
fi

verbose=
[ "${gtverbose:-0}" = 1 ] && verbose=--verbose
# hang_state PID: what the recorder PID and every process is doing (a recording that does not
# end): each thread's name, state, wait channel, system call with its user
# pc and sp (/proc/PID/task/TID/syscall), and kernel stack; plus gotracectl's
# maps, so the host can name the pc (addr2line on the same binary).
hang_state() {
	echo "== processes: $(ls /proc | grep '^[0-9]' | sort -n | tr '\n' ' ')"
	echo "== recorder: $1, gotracectl: $(pidof gotracectl)"
	for t in /proc/$1/task/* /proc/[0-9]*/task/[0-9]*; do
		[ -r $t/stat ] || continue
		echo "== ${t#/proc/} $(cat $t/comm 2>/dev/null)" \
			"state=$(cut -d' ' -f3 $t/stat 2>/dev/null)" \
			"wchan=$(cat $t/wchan 2>/dev/null)"
		echo "   syscall: $(cat $t/syscall 2>/dev/null)"
		sed 's/^/   k: /' $t/stack 2>/dev/null
	done
	for p in $(pidof gotracectl); do
		echo "== maps of gotracectl $p"
		grep ' r-xp ' /proc/$p/maps
	done
}

# record NAME OPTIONS...: one recording of the demo.  A recording normally
# ends in 10-20 s under emulation; one still running after gtwatch seconds
# (default 240) has hung: its state goes to NAME.hang and the console, it is
# killed, and the run goes on (the host fails it with that state) instead of
# waiting for boot.sh's timeout.
record() {
	name=$1
	shift
	say "recording $name"
	gotracectl record -q $verbose -o /out/$name.trace "$@" -- /gt/demo 3 \
		> /out/$name.log 2>&1 &
	pid=$!
	waited=0
	while kill -0 $pid 2>/dev/null && [ $waited -lt ${gtwatch:-240} ]; do
		sleep 1
		waited=$((waited + 1))
	done
	if kill -0 $pid 2>/dev/null; then
		say "$name still running after $waited s: its state follows"
		hang_state $pid > /out/$name.hang 2>&1
		cat /out/$name.hang > /dev/console
		kill -9 $pid $(pidof gotracectl) $(pidof demo) 2>/dev/null
	fi
	wait $pid
	echo $? > /out/$name.rc
	say "recorded $name: exit $(cat /out/$name.rc)"
}
record default
record full --heap malloc --cpu-profile --syscalls all --kernel-stacks
record dwarf --call-graph=dwarf
# A Go program's goroutine ids (bpf/goid.bpf.h): 4 goroutines locked to
# their threads on 2 CPUs, for 3 s, print their own ids and write the
# run's runtime/trace; run.sh compares (switch-outs, wakeups, samples).
say "recording goids"
GOIDS_TRACE=/out/goids.runtime.trace GOIDS_LINGER_MS=3000 gotracectl record -q $verbose --cpu-profile \
	-o /out/goids.trace -- /gt/goids 4 3000 > /out/goids.out 2> /out/goids.log
echo $? > /out/goids.rc
say "recorded goids: exit $(cat /out/goids.rc)"
# CFS bandwidth throttling (bpf/throttle.bpf.h: throttle_count before Linux
# 6.18, p->throttled since): a spinner at 20 ms per 100 ms in a cgroup of
# its own, whose cpu.stat before and after run.sh holds the trace to.
say "recording throttle"
cg=/sys/fs/cgroup/gt-throttle
echo +cpu > /sys/fs/cgroup/cgroup.subtree_control
# the highest weight, as record_throttle's cpu.shares: unthrottled, the
# spinner runs at once, and the recorder (under emulation, much of a vCPU)
# rarely preempts it, which would hide a throttle inside a preemption
mkdir $cg && echo "20000 100000" > $cg/cpu.max && echo 10000 > $cg/cpu.weight
cat $cg/cpu.stat > /out/throttle.before
gotracectl record -q $verbose -o /out/throttle.trace -- \
	sh -c "echo \$\$ > $cg/cgroup.procs && exec /gt/spin 0 1500" > /out/throttle.log 2>&1
echo $? > /out/throttle.rc
cat $cg/cpu.stat > /out/throttle.after
say "recorded throttle: exit $(cat /out/throttle.rc)"
finish
