# proxy_chain.sh, sourced: gt_proxy_chain DIR starts nginx (one worker) on
# 127.0.0.1 behind haproxy, both on random ports, files in DIR.  Sets
# BPORT FPORT (backend, frontend ports), HAP (haproxy's pid), MASTER and
# WORKER (nginx's), and PROXY_PIDS (what the caller must end).  0 once the
# frontend answers "hello" through to the worker, else 1.
gt_proxy_chain() {
	local dir=$1
	mkdir -p "$dir" && chmod 755 "$dir"
	BPORT=$(( (RANDOM % 20000) + 20000 )) FPORT=$(( (RANDOM % 20000) + 20001 ))
	sed -e "s#@DIR@#$dir#g" -e "s#@PORT@#$BPORT#g" -e 's#worker_processes 2#worker_processes 1#' \
		tests/servers/nginx.conf.in >"$dir/nginx.conf"
	sed -e "s#@PORT@#$FPORT#g" -e "s#@BACKEND@#127.0.0.1:$BPORT#g" \
		tests/servers/haproxy.cfg.in >"$dir/haproxy.cfg"
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
