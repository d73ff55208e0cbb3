#!/usr/bin/env bash
# demo.sh BUILD: the README's main job, end to end (`make demo`): records the
# demo workload (threads fighting over a mutex, a ping-pong, a sleeper, a
# slow pipe reader, CPU spinners) with `gotracectl record -- CMD`, checks the
# file with `gotracectl inspect`, and says how to open it in `go tool trace`.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
out=${DEMO_TRACE:-demo.trace}

for f in "$build/gotracectl" "$build/workloads/demo"; do
	if [ ! -x "$f" ]; then
		echo "demo: $f is not built; run: make BUILD=$build all $build/workloads/demo" >&2
		exit 1
	fi
done
if [ "$(id -u)" != 0 ] && ! [ -S /run/gotraced/gotraced.sock ]; then
	echo "demo: recording needs root (sudo make demo) or a running gotraced daemon" >&2
	exit 1
fi

echo "\$ $build/gotracectl record -o $out -- $build/workloads/demo 3"
"$build/gotracectl" record -o "$out" -- "$build/workloads/demo" 3 >/dev/null
echo
echo "\$ $build/gotracectl inspect $out"
"$build/gotracectl" inspect "$out"
echo
echo "\$ $build/gotracectl inspect --goroutines $out"
# Only the per-thread table: the summary above already has the rest.
"$build/gotracectl" inspect --goroutines "$out" | sed -n '/^id /,$p' | head -40
cat <<MSG

Open it in the Go trace viewer (Go 1.19 or later):

    go tool trace $out

then "View trace" shows every thread as a goroutine on the CPU (P) it ran
on; "Goroutine analysis" groups the threads by name (worker-N, ping, pong,
sleeper, reader, spinner-N); the blocking, syscall and scheduler-latency
profiles show where they waited, with stacks.
MSG
