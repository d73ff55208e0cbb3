#!/usr/bin/env bash
# gtread.sh GO OUT: builds OUT, tests/lib/gtread/main.go over a copy of the
# reader of Go 1.22+ traces in GO's own source tree (internal/trace of Go
# 1.23, internal/trace/v2 of Go 1.22: the code `go tool trace -d=1` runs),
# its import paths moved to gtr/trace so that a program outside Go's tree
# may build it.  Nothing is fetched; the copy is OUT-gopath.  Exit 0 when
# built.
set -eu
go=$1
mkdir -p "$(dirname "$2")"
out=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")  # GOPATH must be absolute
root=$("$go" env GOROOT)
# Go 1.22 keeps its v2 reader in internal/trace/v2, Go 1.23 in
# internal/trace (with oldtrace, its reader of older files)
pkg=internal/trace/v2
[ -d "$root/src/$pkg" ] || pkg=internal/trace
work=$out-gopath
rm -rf "$work"
dst=$work/src/gtr/trace
for d in . event event/go122 version internal/oldtrace; do
	[ -d "$root/src/$pkg/$d" ] || continue
	mkdir -p "$dst/$d"
	for f in "$root/src/$pkg/$d"/*.go; do
		case $f in *_test.go) continue ;; esac
		sed "s|\"$pkg|\"gtr/trace|" "$f" >"$dst/$d/$(basename "$f")"
	done
done
mkdir -p "$work/src/gtr/cmd/gtread"
cp "$(dirname "$0")/gtread/main.go" "$work/src/gtr/cmd/gtread/"
cd "$work/src/gtr/cmd/gtread"
GOPATH=$work GO111MODULE=off GOFLAGS= CGO_ENABLED=0 GOTOOLCHAIN=local \
	GOCACHE=${GOCACHE:-$out-cache} "$go" build -o "$out" .
