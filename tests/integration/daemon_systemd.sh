#!/usr/bin/env bash
# daemon_systemd.sh: gotraced under systemd.
#  - systemd/gotraced.service and gotraced.socket pass `systemd-analyze verify`
#    (prefix substituted as `make install` does, ExecStart pointed at a binary
#    that exists, man pages reachable through MANPATH);
#  - the service is hardened as promised (capabilities, sandboxing, group);
#  - socket activation: gotraced serves a socket handed over with LISTEN_FDS
#    (systemd-socket-activate), and speaks the notify protocol: READY=1,
#    STATUS=..., STOPPING=1 on $NOTIFY_SOCKET.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

gt_expect systemd_analyze_verify systemd_prefix_placeholder systemd_hardening systemd_socket_unit

# --- unit files ------------------------------------------------------------------
U=$GT_TMP/units
mkdir -p "$U" "$GT_TMP/man/man8" "$GT_TMP/man/man1"
exe=$(readlink -f "$GTD" 2>/dev/null)
[ -x "$exe" ] || exe=/usr/bin/true   # the unit check does not need the daemon built
sed -e "s|@PREFIX@/sbin/gotraced|$exe|" -e "s|@PREFIX@|/usr/local|g" systemd/gotraced.service >"$U/gotraced.service"
cp systemd/gotraced.socket "$U/"
cp systemd/gotraced.8 "$GT_TMP/man/man8/"
cp systemd/gotracectl.1 "$GT_TMP/man/man1/"
if out=$(cd "$U" && MANPATH=$GT_TMP/man: systemd-analyze verify gotraced.service gotraced.socket 2>&1); then
	ok systemd_analyze_verify
else
	fail systemd_analyze_verify "systemd-analyze verify complains"
	echo "$out" | detail
fi
if grep -q '@PREFIX@/sbin/gotraced' systemd/gotraced.service; then ok systemd_prefix_placeholder
else fail systemd_prefix_placeholder "ExecStart does not use @PREFIX@/sbin/gotraced"; fi

want="Type=notify NoNewPrivileges=yes ProtectSystem=strict ProtectHome=read-only PrivateTmp=yes
RestrictAddressFamilies=AF_UNIX RuntimeDirectory=gotraced RuntimeDirectoryMode=0750 Group=gotrace"
missing=""
for w in $want; do grep -qx "$w" systemd/gotraced.service || missing="$missing $w"; done
caps=$(sed -n 's/^CapabilityBoundingSet=//p' systemd/gotraced.service)
for c in CAP_BPF CAP_PERFMON CAP_SYS_PTRACE CAP_DAC_READ_SEARCH CAP_SETUID CAP_SETGID; do
	echo "$caps" | grep -qw "$c" || missing="$missing $c"
done
echo "$caps" | grep -qw CAP_SYS_ADMIN && missing="$missing (CAP_SYS_ADMIN must not be granted)"
# users' traces are charged to them: no quota or reserved-block bypass
echo "$caps" | grep -qw CAP_SYS_RESOURCE && missing="$missing (CAP_SYS_RESOURCE must not be granted)"
[ -z "$missing" ] && ok systemd_hardening || fail systemd_hardening "missing:$missing"
missing=""  # the socket unit's own list, not the service's leftovers
for w in SocketMode=0660 SocketGroup=gotrace ListenStream=/run/gotraced/gotraced.sock; do
	grep -qx "$w" systemd/gotraced.socket || missing="$missing $w"
done
[ -z "$missing" ] && ok systemd_socket_unit || fail systemd_socket_unit "missing:$missing"
exposure=$(cd "$U" && systemd-analyze security --offline=yes gotraced.service 2>/dev/null |
	sed -n 's/.*Overall exposure level for gotraced.service: \([0-9.]*\).*/\1/p')
echo "# systemd-analyze security exposure: ${exposure:-?} (0 best, 10 worst)"

# --- socket activation and the notify protocol (the real daemon) -------------------
if [ "${GOTRACED_SKIP_BPF:-0}" = 1 ]; then
	echo "skip systemd_socket_activation: GOTRACED_SKIP_BPF=1"
	echo "skip systemd_notify: GOTRACED_SKIP_BPF=1"
	gt_finish
fi
gt_expect systemd_socket_activation systemd_notify
[ -x "$GTD" ] || { fail daemon "gotraced not built ($GTD)"; gt_finish; }
[ "$(id -u)" = 0 ] || { fail daemon "needs root to load BPF (or GOTRACED_SKIP_BPF=1)"; gt_finish; }

NOTIFY=$GT_TMP/notify.sock
SOCK=$GT_TMP/activated.sock
python3 - "$NOTIFY" >"$GT_TMP/notify.log" 2>&1 <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(120)
while True:
    m = s.recv(4096).decode()
    print(m.replace("\n", " | "), flush=True)
    if "STOPPING=1" in m:
        break
EOF
LISTENER=$!
gt_pids+=("$LISTENER")
for i in $(seq 1 300); do [ -S "$NOTIFY" ] && break; sleep 0.1; done

systemd-socket-activate -E NOTIFY_SOCKET="$NOTIFY" -l "$SOCK" "$GTD" 2>"$GT_TMP/daemon.log" &
DAEMON_PID=$!
gt_pids+=("$DAEMON_PID")
for i in $(seq 1 300); do [ -S "$SOCK" ] && break; sleep 0.1; done
# the first connection starts the daemon (systemd-socket-activate execs it)
out=$("$GTCTL" status --socket "$SOCK" 2>&1); rc=$?
if [ $rc = 0 ] && echo "$out" | grep -q "no recording sessions" &&
	grep -q "serving the socket passed by systemd" "$GT_TMP/daemon.log"; then
	ok systemd_socket_activation
else
	fail systemd_socket_activation "rc=$rc: $out"
	detail <"$GT_TMP/daemon.log"
fi
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID"; rc=$?
for i in $(seq 1 300); do kill -0 "$LISTENER" 2>/dev/null || break; sleep 0.1; done
if [ $rc = 0 ] && grep -q "READY=1" "$GT_TMP/notify.log" && grep -q "STATUS=" "$GT_TMP/notify.log" &&
	grep -q "STOPPING=1" "$GT_TMP/notify.log"; then
	ok systemd_notify
else
	fail systemd_notify "daemon exit $rc; notifications: $(tr '\n' ' ' <"$GT_TMP/notify.log")"
fi
gt_finish
