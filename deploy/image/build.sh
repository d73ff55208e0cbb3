#!/usr/bin/env bash
# deploy/image/build.sh BUILD [IMAGE]: the container image of gotraced
# (`make image`), from this checkout's build, with nothing pulled: a rootfs
# of the programs, the heap interposer and the libraries they load (found
# by ldd), imported with `podman import`.  Only BUILD/image/ is written in
# the tree.  $PODMAN overrides the podman command (tests pass their own
# storage); IMAGE defaults to localhost/gotraced.
#
#   /usr/sbin/gotraced  /usr/bin/gotracectl
#   /usr/lib/gotraced/libgotraced-heap.so   (found as ../lib/gotraced/)
#   /run/gotraced  /var/lib/gotraced/flight  /tmp
# The kernel's BTF (/sys/kernel/btf/vmlinux), the cgroup v2 tree and the
# host's processes come from the run: --privileged (or CAP_BPF,
# CAP_PERFMON, CAP_SYS_RESOURCE, CAP_SYS_PTRACE), --pid=host, /sys and
# the cgroup mount (README.md "In a container").
set -eu
BUILD=${1:?usage: build.sh BUILD [IMAGE]}
IMAGE=${2:-localhost/gotraced}
read -r -a PM <<<"${PODMAN:-podman}"

for f in gotraced gotracectl libgotraced-heap.so; do
	[ -e "$BUILD/$f" ] || { echo "image: $BUILD/$f is missing: run make first" >&2; exit 1; }
done
command -v "${PM[0]}" >/dev/null || { echo "image: ${PM[0]} is not installed (make deps)" >&2; exit 1; }

R=$BUILD/image/rootfs
rm -rf "$R" && mkdir -p "$R/usr/sbin" "$R/usr/bin" "$R/usr/lib/gotraced" "$R/etc" \
	"$R/run/gotraced" "$R/var/lib/gotraced/flight" "$R/tmp" "$R/proc" "$R/sys" "$R/dev"
chmod 1777 "$R/tmp"
install -m 0755 "$BUILD/gotraced" "$R/usr/sbin/gotraced"
install -m 0755 "$BUILD/gotracectl" "$R/usr/bin/gotracectl"
install -m 0644 "$BUILD/libgotraced-heap.so" "$R/usr/lib/gotraced/libgotraced-heap.so"
# every library the three load, at the path the loader finds it (and the
# loader itself); cp -L: the files, not the host's symbolic links
# (one file per ldd: given several, it prints each one's path as a header)
libs=$(for f in gotraced gotracectl libgotraced-heap.so; do ldd "$BUILD/$f"; done |
	awk '$1 ~ /^\// { print $1 } $3 ~ /^\// { print $3 }' | sort -u)
for lib in $libs; do
	mkdir -p "$R$(dirname "$lib")" && cp -L "$lib" "$R$lib"
done
# root only: no gotrace group in the image, so the socket is root's
# (0660 root:root); the daemon says so once at start
printf 'root:x:0:0:root:/:/nonexistent\n' >"$R/etc/passwd"
printf 'root:x:0:\n' >"$R/etc/group"

tar --owner=0 --group=0 --numeric-owner -C "$R" -cf "$BUILD/image/rootfs.tar" .
"${PM[@]}" rmi -f "$IMAGE" >/dev/null 2>&1 || true
"${PM[@]}" import --quiet \
	--change 'ENV=PATH=/usr/sbin:/usr/bin' \
	--change 'CMD=["/usr/sbin/gotraced"]' \
	--change 'LABEL=org.opencontainers.image.title=gotraced' \
	--message "gotraced $(git describe --always --dirty 2>/dev/null || echo unknown)" \
	"$BUILD/image/rootfs.tar" "$IMAGE" >/dev/null
echo "image: $IMAGE ($(du -sh "$BUILD/image/rootfs.tar" | cut -f1)): $("${PM[@]}" images --noheading --format '{{.ID}}' "$IMAGE")"
