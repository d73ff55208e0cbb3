#!/usr/bin/env python3
"""mc_load.py PORT CONNS REQUESTS: a bounded memcached load (Debian has no
memtier_benchmark): CONNS connections on 127.0.0.1:PORT, each doing
REQUESTS set+get pairs of the text protocol, one thread per connection so
that several memcached workers serve at once.  Exits 1 on a wrong answer."""
import socket
import sys
import threading

failed = []


def client(port, n, cid):
    s = socket.create_connection(("127.0.0.1", port))
    f = s.makefile("rb")
    try:
        for i in range(n):
            key = b"k%d_%d" % (cid, i % 64)
            val = b"v%d" % i
            s.sendall(b"set %s 0 0 %d\r\n%s\r\nget %s\r\n" % (key, len(val), val, key))
            if f.readline() != b"STORED\r\n":
                raise RuntimeError("set %s not stored" % key)
            head = f.readline()
            data = f.readline().rstrip(b"\r\n")
            end = f.readline()
            if not head.startswith(b"VALUE ") or data != val or end != b"END\r\n":
                raise RuntimeError("get %s: %r %r %r" % (key, head, data, end))
    except Exception as e:  # noqa: BLE001 (reported below)
        failed.append(str(e))
    finally:
        s.close()


def main():
    port, conns, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    ts = [threading.Thread(target=client, args=(port, n, c)) for c in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if failed:
        print("mc_load: " + failed[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
