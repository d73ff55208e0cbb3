# A CPython program that blocks in nested Python functions (sleep, a lock,
# a pipe read, select), noting at each block the stack its own traceback
# module sees: python_frames.sh compares the recorded Python frames with it.
# Each blocking call sits on the line that notes the stack, so the frame's
# line is the one traceback.extract_stack() gives there.
import json
import os
import select
import sys
import threading
import time
import traceback

points = {}


def note(key):
    points[key] = [[f.name, f.filename, f.lineno] for f in traceback.extract_stack()[:-1]]


def later(secs, fn):
    t = threading.Timer(secs, fn)
    note("start%d" % len(points)), t.start()
    return t


class Store:
    def __init__(self):
        self.lock = threading.Lock()

    def held(self, depth):
        if depth:
            return self.held(depth - 1)
        self.lock.acquire()
        later(0.3, self.lock.release)
        return self.take()

    def take(self):
        ok = lambda: (note("lock"), self.lock.acquire())  # noqa: E731
        ok()
        self.lock.release()


def pause(depth):
    if depth:
        return pause(depth - 1)
    note("sleep"), time.sleep(0.3)


def read_one():
    r, w = os.pipe()
    later(0.3, lambda: os.write(w, b"x"))
    note("read"), os.read(r, 1)
    later(0.3, lambda: os.write(w, b"y"))
    note("select"), select.select([r], [], [], 5)
    os.close(r)
    os.close(w)


def main(out):
    store = Store()
    for _ in range(2):
        pause(3)
        store.held(2)
        read_one()
    with open(out, "w") as f:
        json.dump({"pid": os.getpid(), "points": points}, f)


main(sys.argv[1])
