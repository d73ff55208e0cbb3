#!/usr/bin/env python3
"""opened.py: did anyone open these files?  For the hostile-file tests.

  watch OUT PATH...  inotify IN_OPEN on each PATH (a FIFO, a device node, a
                     regular file; never a link: the watch follows it): one
                     line "open PATH" in OUT per open, until killed.  An
                     O_PATH descriptor is no open here (Linux generates no
                     event for it), a read or an mmap'd look is.
  fifo PATH          "opened" if some process holds or waits in an open of
                     the FIFO for reading (a writer's non-blocking open then
                     succeeds, and its close lets that reader go on with
                     end-of-file), else "never".
"""
import ctypes
import errno
import os
import struct
import sys

IN_OPEN = 0x20


def watch(out, paths):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(0)
    if fd < 0:
        sys.exit(f"inotify_init1: {os.strerror(ctypes.get_errno())}")
    wds = {}
    for p in paths:
        wd = libc.inotify_add_watch(fd, p.encode(), IN_OPEN)
        if wd < 0:
            sys.exit(f"inotify_add_watch {p}: {os.strerror(ctypes.get_errno())}")
        wds[wd] = p
    with open(out, "a") as f:
        f.write("watching\n")
        f.flush()
        while True:
            buf = os.read(fd, 65536)
            off = 0
            while off + 16 <= len(buf):
                wd, mask, _, n = struct.unpack_from("iIII", buf, off)
                off += 16 + n
                if mask & IN_OPEN:
                    f.write(f"open {wds.get(wd, '?')}\n")
                    f.flush()


def fifo(path):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        if e.errno == errno.ENXIO:
            print("never")
            return
        raise
    os.close(fd)
    print("opened")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "watch":
        watch(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 3 and sys.argv[1] == "fifo":
        fifo(sys.argv[2])
    else:
        sys.exit(__doc__)
