#!/usr/bin/env bash
# gen-arm64.sh: regenerates vmlinux/arm64/vmlinux.h, the kernel types the
# BPF programs are compiled against for arm64 (CO-RE relocates them to the
# running kernel, so any BTF-enabled arm64 kernel will do).  The recipe:
# boot Debian's arm64 kernel from bookworm-backports (6.12: the newest
# Debian 12 has, as the code is written against new layouts with flavors
# for the old ones) under qemu-system-aarch64
# with a guest that copies /sys/kernel/btf/vmlinux out (tests/kernels/,
# gtjob=btf), then `bpftool btf dump ... format c`.  Needs `make deps-kernels`.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/kernels/run/btf-arm64
tests/kernels/boot.sh deb12bp-6.12-arm64 - "$out" gtjob=btf
if [ ! -s "$out/vmlinux.btf" ]; then
	echo "gen-arm64: the guest wrote no BTF (see $out/console.log)" >&2
	exit 1
fi
BPFTOOL=${BPFTOOL:-$(command -v bpftool || echo /usr/sbin/bpftool)}
mkdir -p vmlinux/arm64
"$BPFTOOL" btf dump file "$out/vmlinux.btf" format c > vmlinux/arm64/vmlinux.h.tmp
mv vmlinux/arm64/vmlinux.h.tmp vmlinux/arm64/vmlinux.h
echo "gen-arm64: vmlinux/arm64/vmlinux.h from $(cat "$out/uname") ($(wc -l < vmlinux/arm64/vmlinux.h) lines)"
