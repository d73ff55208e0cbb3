#!/usr/bin/env bash
# record_servers.sh: real servers from Debian, each in a cgroup of its own
# under the cgroup v2 mount, as its own user, on 127.0.0.1 only, recorded
# while a bounded burst of load runs inside the recording:
#
#   nginx     master + 2 workers (www-data), by -p list and by --cgroup, wrk
#   postgres  its ~8 processes (postgres) by --cgroup, pgbench
#   memcached 4 workers (memcache), by -p, a small Python client
#             (Debian has no memtier_benchmark)
#   gohttp    a Go net/http server built with -ldflags='-s -w' (nobody), wrk
#
# Each trace must pass Go's readers and viewers and our checker
# (SERVER_valid); per thread of the long-lived processes the context
# switches must match /proc's over the burst (SERVER_switches: /proc is read
# once the recording runs and the server is idle, the burst runs to its
# end, the server lets go of its clients, /proc is read again; tolerance
# 5 switches + 2% for the idle edges); threads that share a comm across
# processes are named by their process title on the Goroutines pages of
# Go 1.19 and 1.23 (SERVER_names); every user frame's PC lies in an
# executable mapping of the server's processes, read during the recording
# (SERVER_frames).  A `#` line per server gives events, bytes/event, drops
# and the share of named user frames.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

# GT_SERVERS (default all: nginx postgres memcached gohttp) runs some of
# them only (nginx is nginx and nginx_cg); tests/run.sh's v2 pass runs a
# few (docs/testing.md).
RUN=${GT_SERVERS:-nginx postgres memcached gohttp}
SERVERS=""
for s in $RUN; do
	case $s in
	nginx) SERVERS="$SERVERS nginx nginx_cg" ;;
	postgres | memcached | gohttp) SERVERS="$SERVERS $s" ;;
	*) echo "FAIL record_servers: GT_SERVERS names $s, not one of nginx postgres memcached gohttp"; exit 1 ;;
	esac
done
CASES=""
for s in $SERVERS; do CASES="$CASES ${s}_valid ${s}_switches ${s}_names ${s}_frames"; done
# postgres's workers are backends that live for one client connection:
# there is no /proc reading of them before the burst
CASES=${CASES/ postgres_switches/}
# shellcheck disable=SC2086
gt_require_bpf $CASES
# shellcheck disable=SC2086
gt_expect $CASES

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
CHECK="python3 tests/integration/servers_check.py"
chmod 755 "$GT_TMP"
CG_ROOT=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") break;
	if ($(i + 1) == "cgroup2") { print $5; exit } }' /proc/self/mountinfo)
CGS=()

# Every process of our cgroups ends with the script, and the cgroups go.
servers_cleanup() {
	local cg
	for cg in "${CGS[@]}"; do
		[ -e "$cg/cgroup.kill" ] && echo 1 >"$cg/cgroup.kill" 2>/dev/null
		xargs -r kill -KILL <"$cg/cgroup.procs" 2>/dev/null
	done
	for cg in "${CGS[@]}"; do
		for _ in $(seq 1 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
	done
}
trap 'servers_cleanup; gt_cleanup' EXIT

# not_checked SERVER WHY: every case of SERVER fails with WHY.
not_checked() {
	local c
	for c in valid switches names frames; do
		[ "$1_$c" = postgres_switches ] || fail "$1_$c" "$2"
	done
}

# cg_new NAME: a fresh cgroup for one server (its path in CG).
cg_new() {
	CG=$CG_ROOT/gt-servers-$$-$1
	mkdir -p "$CG" && CGS+=("$CG")
}

# in_cg USER CMD...: CMD as USER inside $CG (the process joins it before
# exec, so every child it makes is there too), in the background (PID).
in_cg() {
	local user=$1
	shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" \
		setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups "$@" &
	PID=$!
	disown "$PID" # servers_cleanup ends it with its cgroup
}

cg_pids() { sort -n "$CG/cgroup.procs"; }

free_port() { echo $(( (RANDOM % 20000) + 20000 + $1 )); }

# idle_port PORT: waits until no connection to PORT is open (the burst's
# clients are gone and the server has closed its side).
idle_port() {
	for _ in $(seq 1 300); do
		[ -z "$(ss -Htn state established "( sport = :$1 )" 2>/dev/null)" ] && return 0
		sleep 0.1
	done
	return 1
}

# measure TAG PIDS TARGET... ; burst commands come from the function
# `burst` (set by the caller): records TARGET (-p ... | --cgroup ...),
# reads /proc of PIDS before and after the burst and their maps between.
measure() {
	local tag=$1 pids=$2 p
	shift 2
	T=$GT_TMP/$tag.trace
	if ! gt_record_bg "$tag" "$@" -o "$T"; then
		not_checked "$tag" "record did not start: $(tail -3 "$GT_TMP/$tag.rec.err")"
		return 1
	fi
	for p in $pids; do $TRUTH snap "$p" "$GT_TMP/$tag.before.$p"; done
	burst >"$GT_TMP/$tag.burst.out" 2>&1
	BRC=$?
	idle_port "$PORT"
	for p in $pids; do $TRUTH snap "$p" "$GT_TMP/$tag.after.$p"; done
	for p in $(cg_pids); do cat "/proc/$p/maps" >"$GT_TMP/$tag.maps.$p" 2>/dev/null; done
	gt_stop_record INT
	RRC=$?
	if [ "$BRC" != 0 ]; then
		not_checked "$tag" "the load failed ($BRC): $(tail -3 "$GT_TMP/$tag.burst.out")"
		return 1
	fi
	if [ "$RRC" != 0 ]; then
		not_checked "$tag" "record exited $RRC: $(tail -3 "$GT_TMP/$tag.rec.err")"
		return 1
	fi
	return 0
}

# check TAG PIDS NAME...: the four cases of one recording; NAMEs must be
# goroutine names in the trace and groups on both Goroutines pages.
check() {
	local tag=$1 pids=$2 p tids drops out why=""
	shift 2
	if ! gt_valid "${tag}_valid" "$T"; then
		for p in switches names frames; do
			[ "${tag}_$p" = postgres_switches ] ||
				fail "${tag}_$p" "no valid trace (see ${tag}_valid)"
		done
		return
	fi
	ok "${tag}_valid"
	drops=$(sed -n 's/.* \([0-9]*\) dropped.*/\1/p' "$GT_TMP/$tag.rec.err")
	if [ "$tag" = postgres ]; then
		:
	elif [ "${drops:-x}" != 0 ]; then
		fail "${tag}_switches" "the recording lost ${drops:-?} kernel events: counts cannot match"
	else
		local nbusy=0
		for p in $pids; do
			tids=$($CHECK busy "$GT_TMP/$tag.before.$p" "$GT_TMP/$tag.after.$p" 200)
			[ -z "$tids" ] && continue
			nbusy=$((nbusy + 1))
			gt_truth "${tag}_switches" switches "$GT_TMP/$tag.before.$p" \
				"$GT_TMP/$tag.after.$p" "$T.json" "$tids" 5 0.02 || { why=x; break; }
		done
		if [ -z "$why" ] && [ $nbusy = 0 ]; then
			fail "${tag}_switches" "no thread of $pids switched 200 times in the burst"
		elif [ -z "$why" ]; then
			ok "${tag}_switches"
		fi
	fi
	if ! out=$($CHECK names "$T.json" "$@"); then
		fail "${tag}_names" "$out"
	elif ! gt_viewer_pages "$T"; then
		fail "${tag}_names" "Go 1.19's viewer did not serve $T: $(tail -3 "$T.viewer.log")"
	elif ! gt_truth "${tag}_names" groups "$T.goroutines.html" "$@"; then
		:
	elif ! gt_go123_page "$T"; then
		fail "${tag}_names" "Go 1.23's viewer did not serve $T: $(tail -3 "$T.go123.log")"
	elif ! out=$($CHECK go123 "$T.go123.html" "$@"); then
		fail "${tag}_names" "$out"
	else
		ok "${tag}_names"
	fi
	out=$($CHECK frames "$T" "$GT_TMP/$tag".maps.*)
	if [ $? = 0 ]; then ok "${tag}_frames"; else fail "${tag}_frames" "$out"; fi
	echo "# $tag: $($CHECK stats "$T.json" "$GT_TMP/$tag.rec.err")  frames: ${out%%$'\n'*}"
}

need() {
	local tag=$1 t
	shift
	for t in "$@"; do
		if ! command -v "$t" >/dev/null && [ ! -x "$t" ]; then
			not_checked "$tag" "$t not installed (tests/deps.sh installs it)"
			return 1
		fi
	done
}

if [ -z "$CG_ROOT" ]; then
	for s in $SERVERS; do not_checked "$s" "no cgroup v2 mount in /proc/self/mountinfo"; done
	gt_finish
fi

# --- nginx ----------------------------------------------------------------
run_nginx() {
	local dir=$GT_TMP/nginx master workers
	need nginx nginx wrk || { not_checked nginx_cg "nginx or wrk not installed"; return; }
	PORT=$(free_port 0)
	mkdir -p "$dir" && chmod 755 "$dir"
	sed -e "s#@DIR@#$dir#g" -e "s#@PORT@#$PORT#g" tests/servers/nginx.conf.in >"$dir/nginx.conf"
	cg_new nginx
	in_cg root nginx -c "$dir/nginx.conf" -p "$dir" -e "$dir/error.log"
	for _ in $(seq 1 100); do
		[ "$(curl -s "http://127.0.0.1:$PORT/")" = hello ] &&
			[ "$(cg_pids | wc -l)" -ge 4 ] && break
		sleep 0.1
	done
	master=$(cat "$dir/nginx.pid" 2>/dev/null)
	workers=$(pgrep -P "${master:-1}" -d,)
	if [ -z "$master" ] || [ -z "$workers" ]; then
		not_checked nginx "nginx did not start: $(tail -3 "$dir/error.log")"
		not_checked nginx_cg "nginx did not start"
		return
	fi
	burst() { timeout 60 wrk -t1 -c4 -d1s "http://127.0.0.1:$PORT/"; }
	measure nginx "$master ${workers//,/ }" -p "$master,$workers" &&
		check nginx "$master ${workers//,/ }" "nginx: worker process"
	measure nginx_cg "$master ${workers//,/ }" --cgroup "$CG" &&
		check nginx_cg "$master ${workers//,/ }" "nginx: worker process"
}

# --- PostgreSQL -----------------------------------------------------------
run_postgres() {
	local dir=$GT_TMP/pg pids
	need postgres "$PG_BIN/initdb" "$PG_BIN/postgres" pgbench || return
	PORT=$(free_port 1)
	mkdir -p "$dir" && chown postgres: "$dir" && chmod 700 "$dir"
	if ! setpriv --reuid=postgres --regid=postgres --init-groups \
		"$PG_BIN/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 \
		>"$GT_TMP/initdb.log" 2>&1; then
		not_checked postgres "initdb failed: $(tail -3 "$GT_TMP/initdb.log")"
		return
	fi
	cg_new postgres
	in_cg postgres "$PG_BIN/postgres" -D "$dir/data" -p "$PORT" -k "$dir" \
		-c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=16MB \
		>"$GT_TMP/postgres.log" 2>&1
	for _ in $(seq 1 300); do
		"$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" && break
		sleep 0.1
	done
	if ! pgbench -i -s 1 -q -h 127.0.0.1 -p "$PORT" -U postgres postgres \
		>"$GT_TMP/pgbench-init.log" 2>&1; then
		not_checked postgres "postgres or pgbench -i failed: $(tail -3 "$GT_TMP/postgres.log" "$GT_TMP/pgbench-init.log")"
		return
	fi
	sleep 1
	pids=$(cg_pids | paste -sd' ')
	burst() { timeout 120 pgbench -n -c 2 -t 200 -h 127.0.0.1 -p "$PORT" -U postgres postgres; }
	measure postgres "$pids" --cgroup "$CG" &&
		check postgres "$pids" "postgres: walwriter" "postgres: background writer"
}

# --- memcached ------------------------------------------------------------
run_memcached() {
	need memcached memcached || return
	PORT=$(free_port 2)
	cg_new memcached
	in_cg root memcached -u memcache -l 127.0.0.1 -p "$PORT" -U 0 -t 4 \
		>"$GT_TMP/memcached.log" 2>&1
	for _ in $(seq 1 100); do
		python3 tests/servers/mc_load.py "$PORT" 1 1 2>/dev/null && break
		sleep 0.1
	done
	local pid
	pid=$(cg_pids | tail -1)
	if [ -z "$pid" ] || ! python3 tests/servers/mc_load.py "$PORT" 1 1; then
		not_checked memcached "memcached did not start: $(tail -3 "$GT_TMP/memcached.log")"
		return
	fi
	sleep 0.5
	burst() { timeout 60 python3 tests/servers/mc_load.py "$PORT" 4 2000; }
	measure memcached "$pid" -p "$pid" && check memcached "$pid" memcached
}

# --- a Go net/http server, stripped ---------------------------------------
run_gohttp() {
	local dir=$GT_TMP/gohttp pid
	need gohttp go wrk || return
	mkdir -p "$dir" && chmod 755 "$dir"
	if ! (cd tests/servers/gohttp && GOCACHE=$GT_TMP/gocache GO111MODULE=off GOFLAGS= \
		go build -ldflags='-s -w' -o "$dir/gohttp" main.go) >"$GT_TMP/gobuild.log" 2>&1; then
		not_checked gohttp "go build failed: $(tail -3 "$GT_TMP/gobuild.log")"
		return
	fi
	PORT=$(free_port 3)
	cg_new gohttp
	in_cg nobody "$dir/gohttp" "127.0.0.1:$PORT" >"$GT_TMP/gohttp.log" 2>&1
	for _ in $(seq 1 100); do
		[ "$(curl -s "http://127.0.0.1:$PORT/")" = hello ] && break
		sleep 0.1
	done
	pid=$(cg_pids | tail -1)
	if [ "$(curl -s "http://127.0.0.1:$PORT/")" != hello ]; then
		not_checked gohttp "gohttp did not start: $(tail -3 "$GT_TMP/gohttp.log")"
		return
	fi
	sleep 0.5
	burst() { timeout 60 wrk -t1 -c4 -d1s "http://127.0.0.1:$PORT/"; }
	measure gohttp "$pid" -p "$pid" && check gohttp "$pid" gohttp
}

for s in $RUN; do "run_$s"; done
gt_finish
