#!/usr/bin/env python3
"""status_latency.py SOCK SECONDS [INTERVAL]: asks gotraced for `status`
every INTERVAL seconds (default 0.05) for SECONDS, each on a fresh
connection, and prints one line:

  status_latency n N median_ms M p90_ms P max_ms X

The time of one ask is connect + STATUS + whole reply.  For the isolation
test and bench (tests/integration/daemon_isolation.sh): the loop must keep
answering while sessions start and stop."""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_proto import HDR, MAGIC, STATUS, STATUS_REPLY, VERSION, recv_exact  # noqa: E402


def ask(path):
    t0 = time.monotonic()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(path)
    s.sendall(struct.pack("<IHHII", MAGIC, VERSION, STATUS, 0, 0))
    magic, _, mtype, length, _ = struct.unpack("<IHHII", recv_exact(s, HDR))
    recv_exact(s, length)
    s.close()
    if magic != MAGIC or mtype != STATUS_REPLY:
        raise ValueError(f"STATUS answered with type {mtype}")
    return time.monotonic() - t0


def main():
    path, seconds = sys.argv[1], float(sys.argv[2])
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 0.05
    end = time.monotonic() + seconds
    lat = []
    while time.monotonic() < end:
        lat.append(ask(path))
        time.sleep(interval)
    lat.sort()
    ms = [x * 1000 for x in lat]
    print(f"status_latency n {len(ms)} median_ms {ms[len(ms) // 2]:.1f} "
          f"p90_ms {ms[int(len(ms) * 0.9)]:.1f} max_ms {ms[-1]:.1f}", flush=True)


if __name__ == "__main__":
    main()
