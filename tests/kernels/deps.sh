#!/usr/bin/env bash
# deps.sh: `make deps-kernels`, what `make check-kernels` needs on top of
# `make deps` (Debian 12): qemu for both architectures, a static busybox for
# the guests, and the aarch64 cross toolchain with the arm64 -dev packages
# of our libraries (multiarch) for the arm64 build.  The kernels themselves
# are downloaded by fetch.sh, never installed.  Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/../.."

pkgs=(
	qemu-system-x86 qemu-system-arm       # the guests, under TCG
	busybox-static cpio xz-utils          # the initramfs; 6.12's modules are .ko.xz
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross binutils-aarch64-linux-gnu
	libbpf-dev:arm64 libelf-dev:arm64 libdw-dev:arm64 zlib1g-dev:arm64 liblzma-dev:arm64
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps-kernels: missing ${missing[*]}; run as root" >&2
		exit 1
	fi
	echo "deps-kernels: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		dpkg --add-architecture arm64
		echo "deps-kernels: added the arm64 architecture (multiarch)"
	fi
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The arm64 guest's busybox: Debian's arm64 package, unpacked, not installed.
bb=build/kernels/busybox-arm64
if [ ! -x "$bb/bin/busybox" ]; then
	mkdir -p "$bb"
	(cd "$bb" && apt-get -o APT::Sandbox::User=root download busybox-static:arm64 >/dev/null) ||
		{ echo "deps-kernels: downloading busybox-static:arm64 failed" >&2; exit 1; }
	dpkg-deb -x "$bb"/busybox-static_*_arm64.deb "$bb"
	rm -f "$bb"/*.deb
fi
echo "deps-kernels: done"
