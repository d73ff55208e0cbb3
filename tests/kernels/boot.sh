#!/usr/bin/env bash
# boot.sh NAME BUILD OUTDIR [KERNEL-ARGS...]: boots kernel NAME of the matrix
# (fetched by fetch.sh) under qemu's software emulation with an initramfs
# of BUILD's gotracectl (initramfs.sh), and unpacks what the guest wrote
# (guest.sh) into OUTDIR, with the serial console in OUTDIR/console.log.
# Fails, saying why, when the kernel cannot be fetched, the guest does not
# finish within GT_BOOT_TIMEOUT seconds (default 900), or writes nothing.
# GT_QEMU_SMP sets the number of guest CPUs (default 2).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/kernels/matrix.sh
name=${1:?usage: boot.sh NAME BUILD OUTDIR [KERNEL-ARGS...]} build=${2:?} out=${3:?}
shift 3
gt_kernel_entry "$name"
kdir=$(tests/kernels/fetch.sh "$name")
rm -rf "$out" && mkdir -p "$out"
arch=x86
[ "$GT_K_ARCH" = arm64 ] && arch=arm64
tests/kernels/initramfs.sh "$arch" "$build" "$kdir" "$out/initramfs.cpio.gz"
truncate -s 256M "$out/disk.img"

# -accel tcg: KVM is not available (or hangs) inside the VMs CI runs in.
# x86 runs its vCPUs on one host thread (thread=single): with one thread
# per vCPU, a CPU could run a stale translation of code the kernel was
# patching with int3 (text_poke_bp, as a BPF program attaches to a
# tracepoint), and 6.12 died on "Oops: int3" in handle_softirqs.
# ignore_loglevel: the whole kernel log reaches the console, so a verifier
# complaint, a soft lockup or an RCU stall is in console.log; a soft lockup
# panics the guest (softlockup_panic) to end the run now, not at the timeout.
args="panic=-1 softlockup_panic=1 ignore_loglevel $*"
case $arch in
x86)
	qemu=(qemu-system-x86_64 -accel tcg,thread=single -cpu max -smp "${GT_QEMU_SMP:-2}" -m 1024
	      -drive "file=$out/disk.img,format=raw,if=virtio")
	console=ttyS0 ;;
arm64)
	qemu=(qemu-system-aarch64 -M virt -cpu cortex-a57 -smp "${GT_QEMU_SMP:-2}" -m 1024
	      -drive "if=none,file=$out/disk.img,format=raw,id=d0" -device virtio-blk-device,drive=d0)
	console=ttyAMA0 ;;
esac
command -v "${qemu[0]}" >/dev/null || { echo "boot: ${qemu[0]} not found (make deps-kernels)" >&2; exit 1; }
start=$(date +%s)
rc=0
timeout "${GT_BOOT_TIMEOUT:-900}" "${qemu[@]}" -nographic -no-reboot -monitor none \
	-serial "file:$out/console.log" -kernel "$kdir/vmlinuz" -initrd "$out/initramfs.cpio.gz" \
	-append "console=$console $args" </dev/null >"$out/qemu.log" 2>&1 || rc=$?
echo $(( $(date +%s) - start )) > "$out/seconds"
if [ $rc -eq 124 ]; then
	echo "boot: $name did not finish in ${GT_BOOT_TIMEOUT:-900} s; console tail:" >&2
	tail -20 "$out/console.log" >&2
	exit 1
elif [ $rc -ne 0 ]; then
	echo "boot: qemu failed for $name (exit $rc): $(tail -3 "$out/qemu.log")" >&2
	exit 1
fi
if ! tar -xf "$out/disk.img" -C "$out" 2>/dev/null || [ ! -s "$out/uname" ]; then
	echo "boot: $name wrote no results to its disk; console tail:" >&2
	tail -20 "$out/console.log" >&2
	exit 1
fi
rm -f "$out/disk.img" "$out/initramfs.cpio.gz"
