#!/usr/bin/env python3
"""start_latency.py SOCK FILE PID SECONDS: records PID through gotraced
for SECONDS into FILE (opened here, its descriptor passed, as gotracectl
does) and prints

  start_ms M

when the daemon's OK comes (the time from the connect to the OK: the
session has started), then `done` at its DONE.  Exits 1 if refused.  For
daemon_hostile_loads.sh: a root session's start is a control time that no
other user's files may stretch."""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_proto import (DONE, ERROR, OK, RECORD, connect, error_text,  # noqa: E402
                          msg, record_payload, recv_msg)


def main():
    path, out, pid, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    payload = record_payload([pid], duration_ns=int(seconds * 1e9), label="start_latency")
    t0 = time.monotonic()
    s = connect(path)
    s.settimeout(None)
    socket.send_fds(s, [msg(RECORD, payload)], [fd])
    os.close(fd)
    mtype, payload = recv_msg(s)
    ms = (time.monotonic() - t0) * 1000
    if mtype != OK:
        text = error_text(payload)[1] if mtype == ERROR else f"type {mtype}"
        print(f"refused: {text}", flush=True)
        return 1
    print(f"start_ms {ms:.1f}", flush=True)
    while recv_msg(s)[0] != DONE:
        pass
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
