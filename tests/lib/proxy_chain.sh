# proxy_chain.sh, sourced: gt_proxy_chain DIR starts nginx (one worker) on
# 127.0.0.1 behind haproxy, both on random ports, files in DIR.  Sets
# BPORT FPORT (backend, frontend ports), HAP (haproxy's pid), MASTER and
# WORKER (nginx's), and PROXY_PIDS (what the caller must end).  0 once the
# frontend answers "hello" through to the worker, else 1.  The ports are
# two different ones below the kernel's ephemeral range (32768-60999), so
# no client's connection holds them; a chain that does not answer (a
# server's port taken all the same) is ended and tried again on others,
# three times.
gt_proxy_chain() {
	local dir=$1 attempt
	mkdir -p "$dir" && chmod 755 "$dir"
	for attempt in 1 2 3; do
		BPORT=$(( (RANDOM % 11000) + 10000 )) FPORT=$(( (RANDOM % 11000) + 21000 ))
		proxy_chain_start "$dir" && return 0
		[ "$attempt" = 3 ] || proxy_chain_end
	done
	return 1
}

proxy_chain_start() {
	local dir=$1
	sed -e "s#@DIR@#$dir#g" -e "s#@PORT@#$BPORT#g" -e 's#worker_processes 2#worker_processes 1#' \
		tests/servers/nginx.conf.in >"$dir/nginx.conf"
	sed -e "s#@PORT@#$FPORT#g" -e "s#@BACKEND@#127.0.0.1:$BPORT#g" \
		tests/servers/haproxy.cfg.in >"$dir/haproxy.cfg"
	rm -f "$dir/nginx.pid"
	nginx -c "$dir/nginx.conf" -p "$dir" -e "$dir/error.log" &
	PROXY_PIDS=($!)
	haproxy -db -f "$dir/haproxy.cfg" >"$dir/haproxy.log" 2>&1 &
	HAP=$!
	PROXY_PIDS+=("$HAP")
	for _ in $(seq 1 200); do
		[ "$(curl -s "http://127.0.0.1:$FPORT/")" = hello ] && break
		sleep 0.1
	done
	MASTER=$(cat "$dir/nginx.pid" 2>/dev/null)
	WORKER=$(pgrep -P "${MASTER:-1}" | head -1)
	[ -n "$MASTER" ] && PROXY_PIDS+=("$MASTER")
	[ -n "$WORKER" ] && PROXY_PIDS+=("$WORKER") # a killed master leaves it behind
	[ "$(curl -s "http://127.0.0.1:$FPORT/")" = hello ] && [ -n "$WORKER" ]
}

# ends a chain that did not answer, before the next try
proxy_chain_end() {
	local p
	for p in "${PROXY_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${PROXY_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	PROXY_PIDS=()
}
