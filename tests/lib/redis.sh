# redis.sh, sourced: gt_redis_start DIR starts Debian's redis-server on a
# random 127.0.0.1 port (a few tries: it refuses a used one), no
# persistence, --hz 1 (idle, it wakes once a second), files in DIR.  Sets
# RPORT and RPID (the caller ends it).  0 once it answers PONG, else 1
# (its log is DIR/redis.log).
gt_redis_start() {
	local dir=$1
	for _ in 1 2 3 4 5; do
		RPORT=$(( (RANDOM % 20000) + 40000 ))
		redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no \
			--hz 1 --dynamic-hz no --daemonize no --dir "$dir" \
			>"$dir/redis.log" 2>&1 &
		RPID=$!
		for _ in $(seq 1 50); do
			[ "$(redis-cli -p "$RPORT" ping 2>/dev/null)" = PONG ] && return 0
			kill -0 "$RPID" 2>/dev/null || break
			sleep 0.1
		done
	done
	[ "$(redis-cli -p "$RPORT" ping 2>/dev/null)" = PONG ]
}
