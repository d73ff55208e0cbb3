#!/usr/bin/env bash
# gocheck.sh FILE [FILE...]: holds trace files to Go's own reader, as DESIGN.md
# says a producer must: `go tool trace -d` parses and checks the file, then the
# viewer pass starts `go tool trace` as a server and fetches the pages that
# crash on files the parser alone accepts.  Exit 0 when every file passes;
# otherwise prints what Go said and exits 1.
set -u

viewer_pass() {
	local file=$1 port log pid page code rc=0
	log=$(mktemp)
	for attempt in 1 2 3 4 5; do
		port=$(( (RANDOM % 20000) + 30000 ))
		BROWSER=true go tool trace -http="127.0.0.1:$port" "$file" >"$log" 2>&1 &
		pid=$!
		# It parses the whole file before it listens; wait for the socket.
		for _ in $(seq 1 600); do
			curl -s -o /dev/null "http://127.0.0.1:$port/" && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && break
		grep -q "address already in use" "$log" || break
	done
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "viewer: go tool trace exited before serving: $(tail -3 "$log")"
		rm -f "$log"
		return 1
	fi
	for page in /jsontrace /goroutines '/syscall?raw=1' '/sched?raw=1' '/block?raw=1' '/io?raw=1'; do
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 120 "http://127.0.0.1:$port$page")
		if [ "$code" != 200 ]; then
			echo "viewer: $page answered $code"
			rc=1
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "viewer: go tool trace died on $page: $(grep -m3 -E 'panic|runtime error' "$log")"
			rm -f "$log"
			return 1
		fi
	done
	if grep -qE 'panic|runtime error' "$log"; then
		echo "viewer: $(grep -m3 -E 'panic|runtime error' "$log")"
		rc=1
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rm -f "$log"
	return $rc
}

rc=0
for f in "$@"; do
	if ! out=$(go tool trace -d "$f" 2>&1 >/dev/null); then
		echo "go tool trace -d $f: ${out:0:2000}"
		rc=1
		continue
	fi
	viewer_pass "$f" || rc=1
done
exit $rc
