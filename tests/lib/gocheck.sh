#!/usr/bin/env bash
# gocheck.sh FILE [FILE...]: holds trace files to Go's own readers, as
# docs/format.md says a producer must.  Per file:
#   - the parsers of Go 1.19 (`go tool trace -d`), 1.21 (same flag), 1.22
#     (`-d=1`: its legacy parser for v1 files, its v2 reader for "go 1.22
#     trace" files; it reads no "go 1.23 trace") and 1.23 (`-d=1`: Go 1.23
#     converts v1 files to its new model first);
#   - the Go 1.19 viewer: its JSON timeline, goroutine and profile pages;
#   - the Go 1.23 viewer, which runs its own generators with their own
#     invariants (gstate.go panics on shapes every parser accepts): /trace,
#     the JSON of its proc and thread views, /goroutines, one goroutine group
#     page and that group's first goroutine timeline, the profiles.
# A Go 1.22+ file ("go 1.22 trace", "go 1.23 trace") goes to the readers
# of its version and later only.
# Each page must answer 200 with the tool still alive and no panic in its
# log.  One viewer process per Go version per file.  Exit 0 when every
# file passes; otherwise prints what Go said and exits 1.
#
# GOCHECK_GO119, GOCHECK_GO121, GOCHECK_GO122, GOCHECK_GO123 name the go
# binaries.
set -u

GO119=${GOCHECK_GO119:-go}
GO121=${GOCHECK_GO121:-/usr/lib/go-1.21/bin/go}
GO122=${GOCHECK_GO122:-/usr/lib/go-1.22/bin/go}
GO123=${GOCHECK_GO123:-/usr/lib/go-1.23/bin/go}
export GOTOOLCHAIN=local

# viewer_start GO FILE LOG: starts `GO tool trace` as a server on a free
# port and waits until it answers (it parses the whole file first, which
# takes as long as it takes on a busy machine: no deadline while the tool
# lives).  Sets VIEWER_PID and VIEWER_PORT; returns 1 if it died.
viewer_start() {
	local go=$1 file=$2 log=$3 attempt
	for attempt in 1 2 3 4 5; do
		VIEWER_PORT=$(( (RANDOM % 20000) + 30000 ))
		BROWSER=true "$go" tool trace -http="127.0.0.1:$VIEWER_PORT" "$file" >"$log" 2>&1 &
		VIEWER_PID=$!
		# Its own line first: another test's viewer may hold the port
		# we picked, and answer our curl while ours fails to bind.
		while kill -0 "$VIEWER_PID" 2>/dev/null; do
			grep -q "Trace viewer is listening on" "$log" &&
				curl -s -o /dev/null "http://127.0.0.1:$VIEWER_PORT/" && return 0
			sleep 0.1
		done
		wait "$VIEWER_PID" 2>/dev/null
		# Someone else took the port between our pick and its bind: retry.
		grep -q "address already in use" "$log" || return 1
	done
	return 1
}

viewer_stop() {
	kill "$VIEWER_PID" 2>/dev/null
	wait "$VIEWER_PID" 2>/dev/null
}

panic_lines() {
	grep -m3 -E 'panic|runtime error|invariant' "$1"
}

# fetch LABEL PAGE LOG [OUT]: one page must answer 200 and the tool live.
fetch() {
	local label=$1 page=$2 log=$3 out=${4:-/dev/null} code
	code=$(curl -s -o "$out" -w '%{http_code}' --max-time 600 \
		"http://127.0.0.1:$VIEWER_PORT$page")
	if ! kill -0 "$VIEWER_PID" 2>/dev/null; then
		echo "$label viewer: go tool trace died on $page: $(panic_lines "$log")"
		return 2
	fi
	# Go 1.23's profiles of a trace without goroutines: its own refusal.
	if [ "$code" = 500 ] && [ "$out" != /dev/null ] &&
		grep -q "failed to find matching goroutines" "$out"; then
		return 0
	fi
	if [ "$code" != 200 ]; then
		echo "$label viewer: $page answered $code $(panic_lines "$log")"
		return 1
	fi
	return 0
}

# first_link HTML PREFIX: the first href starting with PREFIX, preferring
# one with a non-empty value (HTML-unescaped).
first_link() {
	local links
	links=$(grep -o "href=\"$2[^\"]*\"" "$1" | sed -e 's/^href="//' -e 's/"$//' -e 's/&amp;/\&/g')
	{ grep -v "=$" <<<"$links"; echo "$links"; } | grep -m1 .
}

# viewer_pass LABEL GO FILE PAGE...: pages may name @goroutines-link
# (a group page found on /goroutines) and @goroutine-trace (the JSON of
# the first goroutine found on that group page).
viewer_pass() {
	local label=$1 go=$2 file=$3 log html page link rc=0 r
	shift 3
	log=$(mktemp)
	html=$(mktemp)
	if ! viewer_start "$go" "$file" "$log"; then
		echo "$label viewer: go tool trace exited before serving: $(tail -3 "$log")"
		rm -f "$log" "$html"
		return 1
	fi
	for page in "$@"; do
		case $page in
		@goroutines-link)
			fetch "$label" /goroutines "$log" "$html" || { rc=1; break; }
			link=$(first_link "$html" "/goroutine?")
			[ -n "$link" ] || continue # a trace without goroutines
			page=$link
			;;
		@goroutine-trace)
			# The group page links each goroutine's timeline: /trace?goid=N.
			link=$(grep -o 'goid=[0-9]*' "$html" | head -1)
			[ -n "$link" ] || continue
			page="/jsontrace?$link"
			;;
		esac
		fetch "$label" "$page" "$log" "$html"
		r=$?
		[ $r = 0 ] || rc=1
		[ $r = 2 ] && break
	done
	if [ $rc = 0 ] && panic_lines "$log" >/dev/null; then
		echo "$label viewer: $(panic_lines "$log")"
		rc=1
	fi
	viewer_stop
	rm -f "$log" "$html"
	return $rc
}

# parse LABEL GO FLAG FILE: the parser alone (output discarded: 1.23
# prints every event).
parse() {
	local out
	if ! out=$("$2" tool trace "$3" "$4" 2>&1 >/dev/null); then
		echo "$1 go tool trace $3 $4: ${out:0:2000}"
		return 1
	fi
}

# The minor version in the header ("go 1.19 trace"), 0 if unreadable.
minor_version() {
	local h
	h=$(head -c 16 "$1" | tr -d '\0')
	case $h in
	"go 1."*" trace") h=${h#go 1.}; echo "${h% trace}" ;;
	*) echo 0 ;;
	esac
}

check_file() {
	local f=$1 minor
	minor=$(minor_version "$f")
	# Go 1.19 and 1.21 read no Go 1.22+ file ("go 1.22 trace" and later).
	if [ "$minor" -lt 22 ]; then
		parse go1.19 "$GO119" -d "$f" || return 1
		parse go1.21 "$GO121" -d "$f" || return 1
		viewer_pass go1.19 "$GO119" "$f" \
			/jsontrace /goroutines @goroutines-link \
			'/syscall?raw=1' '/sched?raw=1' '/block?raw=1' '/io?raw=1' || return 1
	fi
	# Go 1.22 reads v1 files with its legacy parser, "go 1.22 trace" with
	# its v2 reader, and no later version.
	if [ "$minor" -le 22 ]; then
		parse go1.22 "$GO122" -d=1 "$f" || return 1
	fi
	# Go 1.22+ reads no file older than 1.11 (Go's own 1.5-1.10 traces).
	[ "$minor" -ge 11 ] || return 0
	parse go1.23 "$GO123" -d=1 "$f" || return 1
	viewer_pass go1.23 "$GO123" "$f" \
		/trace /jsontrace '/jsontrace?view=thread' /goroutines \
		@goroutines-link @goroutine-trace \
		'/block?raw=1' '/syscall?raw=1' '/sched?raw=1' '/io?raw=1' || return 1
}

rc=0
for f in "$@"; do
	check_file "$f" || rc=1
done
exit $rc
