#!/usr/bin/env bash
# fetch.sh NAME: downloads the Debian kernel package of matrix entry NAME
# (see matrix.sh) and extracts it into build/kernels/NAME/ (vmlinuz, modules).
# apt runs with a private state under build/kernels/apt: the host's sources
# and package lists stay untouched, and these kernels are never installed.
# Prints the extracted directory; fails with what could not be fetched.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/kernels/matrix.sh

name=${1:?usage: fetch.sh NAME}
gt_kernel_entry "$name" || exit 1
top=build/kernels
dir=$top/$name
if [ -f "$dir/.done" ]; then
	echo "$dir"
	exit 0
fi

apt_root=$(pwd)/$top/apt
mkdir -p "$apt_root/lists/partial" "$apt_root/cache/archives/partial" "$apt_root/etc"
cat > "$apt_root/etc/sources.list" <<SRC
deb [arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb [arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-backports main
deb [arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bullseye main
deb [arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bullseye-security main
SRC
apt_opts=(-o "Dir::Etc::SourceList=$apt_root/etc/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$apt_root/lists" -o "Dir::Cache=$apt_root/cache"
	-o "Dir::State::status=/dev/null" -o APT::Architectures::=amd64 -o APT::Architectures::=arm64
	-o Debug::NoLocking=1 -o APT::Sandbox::User=root -q)

# One update per day is plenty: kernels are republished rarely.
if [ -z "$(find "$apt_root/lists" -name '*_Packages' -mtime -1 2>/dev/null | head -1)" ]; then
	if ! apt-get "${apt_opts[@]}" update >"$top/apt-update.log" 2>&1; then
		echo "fetch: apt-get update of the kernel suites failed (network? deb.debian.org):" >&2
		tail -5 "$top/apt-update.log" >&2
		exit 1
	fi
fi

# The meta package of the suite names the current kernel image.
img=$(apt-cache "${apt_opts[@]}" -t "$GT_K_SUITE" depends "$GT_K_META:$GT_K_ARCH" 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\).*/\1/p' | sed 's/:.*//' | head -1)
if [ -z "$img" ]; then
	echo "fetch: $name: no linux-image package behind $GT_K_META in $GT_K_SUITE ($GT_K_ARCH)" >&2
	exit 1
fi
ver=$(apt-cache "${apt_opts[@]}" madison "$img:$GT_K_ARCH" | awk -F'|' -v s="$GT_K_SUITE/" \
	'index($3, s) { gsub(/ /, "", $2); print $2; exit }')
if [ -z "$ver" ]; then
	ver=$(apt-cache "${apt_opts[@]}" madison "$img:$GT_K_ARCH" | awk -F'|' '{ gsub(/ /, "", $2); print $2; exit }')
fi
rm -rf "$dir" && mkdir -p "$dir/deb"
if ! (cd "$dir/deb" && apt-get "${apt_opts[@]}" download "$img:$GT_K_ARCH=$ver") >"$dir/download.log" 2>&1; then
	echo "fetch: $name: downloading $img $ver ($GT_K_ARCH) failed:" >&2
	tail -5 "$dir/download.log" >&2
	exit 1
fi
dpkg-deb -x "$dir"/deb/*.deb "$dir/root"
vmlinuz=$(ls "$dir"/root/boot/vmlinuz-* 2>/dev/null | head -1)
if [ -z "$vmlinuz" ]; then
	echo "fetch: $name: $img has no /boot/vmlinuz-*" >&2
	exit 1
fi
ln -sf "root/boot/$(basename "$vmlinuz")" "$dir/vmlinuz"
ln -sfn "root/lib/modules/$(ls "$dir/root/lib/modules" | head -1)" "$dir/modules"
echo "$img $ver" > "$dir/package"
rm -rf "$dir/deb"
touch "$dir/.done"
echo "$dir"
