#!/usr/bin/env bash
# Installs the Debian 12 packages the build, the tests and the benchmarks need.
# Safe to run again: apt-get skips what is already installed.
set -euo pipefail

pkgs=(
	make gcc clang llvm libclang-rt-14-dev   # build; clang for BPF and libFuzzer
	libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev pkg-config
	golang-go                                # go tool trace: the reference reader
	curl                                     # the viewer pass fetches its pages
	linux-perf                               # perf: baseline in the benchmarks
	procps psmisc util-linux                 # ps, pkill, setpriv, runuser for tests
	binutils python3 passwd                  # addr2line; truth.py; useradd
	redis-server redis-tools                 # a real program nobody here wrote
	systemd                                  # systemd-analyze verify of the units
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#pkgs[@]} packages present"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing ${missing[*]}; run as root (apt-get install needs it)" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
