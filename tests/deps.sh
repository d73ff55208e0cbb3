#!/usr/bin/env bash
# Installs the Debian 12 packages the build, the tests and the benchmarks need.
# Safe to run again: apt-get skips what is already installed.
set -euo pipefail

pkgs=(
	make gcc clang llvm libclang-rt-14-dev   # build; clang for BPF and libFuzzer
	libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev liblzma-dev pkg-config
	golang-go                                # go tool trace 1.19: the reference reader
	graphviz                                 # the viewers' profile pages run dot
	curl                                     # the viewer pass fetches its pages
	linux-perf                               # perf: baseline in the benchmarks
	procps psmisc util-linux                 # ps, pkill, setpriv, runuser for tests
	binutils python3 passwd                  # addr2line; truth.py; useradd
	time                                     # /usr/bin/time: peak RSS (report_v2memory, benches)
	redis-server redis-tools                 # a real program nobody here wrote
	libjemalloc2 libtcmalloc-minimal4        # allocators --heap interpose must pass through
	nginx-light wrk memcached postgresql-15  # record_servers.sh's servers and loads
	haproxy                                  # record_loopback.sh's proxy in front of nginx
	nodejs                                   # record_jit.sh: a JIT that writes a perf map
	iproute2                                 # ss: a server's open connections
	systemd                                  # systemd-analyze verify of the units
	podman runc busybox-static uidmap        # record_container.sh: a real container, its
	                                         # image built from busybox (nothing pulled);
	                                         # make image (podman import)
	python3-yaml                             # deploy_image.sh reads the DaemonSet
)

# Go 1.21, 1.22 and 1.23 come from Debian's bookworm-backports suite: Go
# 1.22+ converts our format to its new model and has its own viewer
# invariants; 1.22 is the first reader of the Go 1.22+ format ("go 1.22
# trace" files only) and the oldest a v2 file must pass.
backports=(golang-1.21-go golang-1.22-go golang-1.23-go)
backports_list=/etc/apt/sources.list.d/gotraced-backports.sources

missing=()
for p in "${pkgs[@]}" "${backports[@]}"; do
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
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	cat > "$backports_list" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	echo "deps: added bookworm-backports ($backports_list)"
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
