#!/usr/bin/env bash
# initramfs.sh ARCH BUILD KDIR OUT: packs the guest of a kernel-matrix run into
# the initramfs OUT (gzip'd cpio): a static busybox, BUILD's gotracectl and
# demo workload with the shared libraries they need (found through their
# ELF DT_NEEDED entries, so a cross-built arm64 tree works as well as x86),
# the virtio modules of the kernel extracted in KDIR (fetch.sh), and the
# guest's script (guest.sh) as /init.  BUILD `-` packs no gotracectl: for
# a guest that only copies its kernel's BTF out (gtjob=btf).
set -euo pipefail
cd "$(dirname "$0")/../.."
arch=${1:?usage: initramfs.sh ARCH BUILD KDIR OUT} build=${2:?} kdir=${3:?} out=${4:?}

case $arch in
x86)   triplet=x86_64-linux-gnu readelf=readelf busybox=/bin/busybox ;;
arm64) triplet=aarch64-linux-gnu readelf=aarch64-linux-gnu-readelf
       busybox=build/kernels/busybox-arm64/bin/busybox ;;
*) echo "initramfs: unknown ARCH $arch (x86 or arm64)" >&2; exit 1 ;;
esac
bins=("$build/gotracectl" "$build/workloads/demo" "$build/workloads/spin")
[ "$build" = - ] && bins=()
for f in "${bins[@]}" "$busybox"; do
	if [ ! -x "$f" ]; then
		echo "initramfs: $f is missing (build it, or run make deps-kernels)" >&2
		exit 1
	fi
done
command -v "$readelf" >/dev/null || { echo "initramfs: $readelf not found (make deps-kernels)" >&2; exit 1; }

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,gt,lib/modules,proc,sys,dev,tmp,run,out,etc}

# A library by its soname, from the multiarch directories of the target.
find_lib() {
	local d
	for d in /lib/$triplet /usr/lib/$triplet /lib /usr/lib; do
		[ -e "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	echo "initramfs: library $1 ($arch) not found" >&2
	return 1
}

# Copies ELF $1 to $2 inside the root, then every library it needs, at the
# path the dynamic loader searches.
copy_elf() {
	local src=$1 dst=$2 lib interp
	[ -e "$root$dst" ] && return 0
	mkdir -p "$(dirname "$root$dst")"
	cp -L "$src" "$root$dst"
	interp=$($readelf -l "$src" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
	if [ -n "$interp" ] && [ ! -e "$root$interp" ]; then
		mkdir -p "$(dirname "$root$interp")"
		cp -L "$(find_lib "$(basename "$interp")")" "$root$interp"
	fi
	for lib in $($readelf -d "$src" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		copy_elf "$(find_lib "$lib")" "/lib/$triplet/$lib"
	done
}

cp "$busybox" "$root/bin/busybox"
if [ "$build" != - ]; then
	copy_elf "$build/gotracectl" /gt/gotracectl
	copy_elf "$build/workloads/demo" /gt/demo
	copy_elf "$build/workloads/spin" /gt/spin # throttled by a CPU quota
	# the Go workload whose goroutines know their ids (record_goids): a
	# static pure-Go binary for the guest's architecture; the guest
	# records it, run.sh holds its goroutine ids to its own
	goarch=amd64
	[ "$arch" = arm64 ] && goarch=arm64
	go=/usr/lib/go-1.23/bin/go
	[ -x "$go" ] || go=go
	(cd tests/workloads/go/goids && GOTOOLCHAIN=local GOCACHE=$PWD/../../../../build/kernels/gocache \
		GOPATH=$root/gopath GO111MODULE=off GOFLAGS= CGO_ENABLED=0 GOARCH=$goarch \
		"$go" build -o "$root/gt/goids" .)
	rm -rf "$root/gopath"
fi
# The virtio transports and disk, in load order; absent names are built in
# or do not exist on that kernel.  Busybox insmod takes uncompressed files.
for m in virtio virtio_ring virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_mmio virtio_blk; do
	f=$(find "$kdir/modules/" -name "$m.ko" -o -name "$m.ko.xz" | head -1)
	[ -n "$f" ] || continue
	case $f in
	*.xz) xz -dc "$f" > "$root/lib/modules/$m.ko" ;;
	*) cp "$f" "$root/lib/modules/$m.ko" ;;
	esac
	echo "$m" >> "$root/lib/modules/order"
done
cp tests/kernels/guest.sh "$root/init"
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out"
