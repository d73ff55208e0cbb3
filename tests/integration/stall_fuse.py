#!/usr/bin/env python3
"""stall_fuse.py MOUNTPOINT FILE [NAME]: a FUSE file system (the kernel's protocol
on /dev/fuse, mounted with mount(2): needs root) holding one read-only
file, MOUNTPOINT/prog, with FILE's bytes, that answers the first open of
it and never any later one, as a server that hangs would: a program run
from it starts and runs (its pages are read), and whoever opens it again
(gotraced reading its build info) waits until this process ends (its
requests then fail with ENOTCONN).  With NAME, the file is MOUNTPOINT/NAME
(a CPython must be named python3.X for gotraced to look at it).  Prints
`mounted` once it serves, and
`open N stalled` for each open it leaves unanswered.  MOUNTPOINT/data
(64 KiB) opens at once and never answers a read: a program that maps it
has pages whose faults wait as long (whoever reads them through
/proc/PID/mem: gotraced reading pprof labels placed there); prints
`read N stalled` for each.  SIGTERM: exits, the
mount is then lazily unmounted by the caller (umount -l)."""
import ctypes
import errno
import os
import signal
import struct
import sys

LOOKUP, FORGET, GETATTR, OPEN, READ, RELEASE = 1, 2, 3, 14, 15, 18
FLUSH, INIT, INTERRUPT, BATCH_FORGET = 25, 26, 36, 42
NO_REPLY = (FORGET, INTERRUPT, BATCH_FORGET)
ROOT, PROG, DATA = 1, 2, 3
DATA_SIZE = 65536


def attr(ino, size, mode):
    # struct fuse_attr: ino size blocks atime mtime ctime, 3 nsec, mode
    # nlink uid gid rdev blksize flags
    return struct.pack("<QQQQQQIIIIIIIIII", ino, size, (size + 511) // 512, 0, 0, 0,
                       0, 0, 0, mode, 1, 0, 0, 0, 4096, 0)


def main():
    mnt, src = sys.argv[1], sys.argv[2]
    prog_name = (sys.argv[3] if len(sys.argv) > 3 else "prog").encode()
    data = open(src, "rb").read()
    fd = os.open("/dev/fuse", os.O_RDWR)
    libc = ctypes.CDLL(None, use_errno=True)
    opts = f"fd={fd},rootmode=40000,user_id=0,group_id=0,allow_other".encode()
    if libc.mount(b"stallfs", mnt.encode(), b"fuse", ctypes.c_ulong(6), opts) != 0:  # nosuid,nodev
        sys.exit(f"mount: {os.strerror(ctypes.get_errno())}")
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    opens = reads = 0
    print("mounted", flush=True)

    def reply(unique, err=0, body=b""):
        os.write(fd, struct.pack("<IiQ", 16 + len(body), -err, unique) + body)

    while True:
        try:
            req = os.read(fd, 1 << 20)
        except OSError as e:
            if e.errno in (errno.EINTR, errno.ENOENT, errno.EAGAIN):
                continue
            return  # unmounted
        _, op, unique, node = struct.unpack_from("<IIQQ", req)
        arg = req[40:]
        if op in NO_REPLY:
            continue
        if op == INIT:
            major, minor, readahead, _ = struct.unpack_from("<IIII", arg)
            body = struct.pack("<IIIIHHIIHHI", 7, min(minor, 31), readahead, 0, 16, 12,
                               65536, 1, 0, 0, 0) + b"\0" * 28
            reply(unique, 0, body)
        elif op == LOOKUP:
            name = arg.split(b"\0")[0]
            if node == ROOT and name == prog_name:
                reply(unique, 0, struct.pack("<QQQQII", PROG, 0, 3600, 3600, 0, 0) +
                      attr(PROG, len(data), 0o100755))
            elif node == ROOT and name == b"data":
                reply(unique, 0, struct.pack("<QQQQII", DATA, 0, 3600, 3600, 0, 0) +
                      attr(DATA, DATA_SIZE, 0o100644))
            else:
                reply(unique, errno.ENOENT)
        elif op == GETATTR:
            a = (attr(ROOT, 0, 0o40755) if node == ROOT else attr(DATA, DATA_SIZE, 0o100644)
                 if node == DATA else attr(PROG, len(data), 0o100755))
            reply(unique, 0, struct.pack("<QII", 3600, 0, 0) + a)
        elif op == OPEN and node == PROG:
            opens += 1
            if opens > 1:
                print(f"open {opens} stalled", flush=True)
                continue  # never answered
            reply(unique, 0, struct.pack("<QII", 1, 0, 0))
        elif op == OPEN and node == DATA:
            reply(unique, 0, struct.pack("<QII", 2, 0, 0))
        elif op == READ and node == DATA:
            reads += 1
            print(f"read {reads} stalled", flush=True)  # never answered
        elif op == READ:
            _, off, size = struct.unpack_from("<QQI", arg)
            reply(unique, 0, data[off:off + size])
        elif op in (RELEASE, FLUSH):
            reply(unique)
        else:
            reply(unique, errno.ENOSYS)


if __name__ == "__main__":
    main()
