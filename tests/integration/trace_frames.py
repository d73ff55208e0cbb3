#!/usr/bin/env python3
"""trace_frames.py FILE: prints every frame of every stack of a Go trace
(v1 wire format, as gotraced writes it), one line each:

    STACK_ID<TAB>PC<TAB>FUNC<TAB>FILE<TAB>LINE

A small reader of its own (not gotracectl's) so that a test of what the
stacks contain does not trust the code that wrote them.  Exits 1 with a
message on a file it cannot read.
"""
import sys

EV_STACK, EV_STRING, EV_USER_LOG = 3, 37, 48


def uvarint(buf, pos):
    v, shift = 0, 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint at %d" % pos)
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, pos
        shift += 7


def records(buf):
    """Yields (type, args) of every record; strings as (EV_STRING, (id, bytes))."""
    pos = 16
    while pos < len(buf):
        typ, narg = buf[pos] & 0x3F, buf[pos] >> 6
        pos += 1
        if typ == EV_STRING:
            sid, pos = uvarint(buf, pos)
            n, pos = uvarint(buf, pos)
            yield typ, (sid, buf[pos:pos + n])
            pos += n
            continue
        args = []
        if narg == 3:
            n, pos = uvarint(buf, pos)
            end = pos + n
            while pos < end:
                v, pos = uvarint(buf, pos)
                args.append(v)
        else:
            for _ in range(narg + 1):
                v, pos = uvarint(buf, pos)
                args.append(v)
        if typ == EV_USER_LOG:  # its value string follows the arguments
            n, pos = uvarint(buf, pos)
            pos += n
        yield typ, args


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: trace_frames.py FILE\n")
        return 2
    with open(argv[1], "rb") as f:
        buf = f.read()
    if not buf.startswith(b"go 1."):
        sys.stderr.write("%s: not a Go trace (header %r)\n" % (argv[1], buf[:16]))
        return 1
    strings, stacks = {0: ""}, []
    try:
        for typ, args in records(buf):
            if typ == EV_STRING:
                strings[args[0]] = args[1].decode("utf-8", "replace")
            elif typ == EV_STACK:
                stacks.append(args)
    except ValueError as e:
        sys.stderr.write("%s: %s\n" % (argv[1], e))
        return 1
    for args in stacks:
        sid, n = args[0], args[1]
        for i in range(n):
            pc, fn, fl, line = args[2 + 4 * i:6 + 4 * i]
            print("%d\t%#x\t%s\t%s\t%d" % (sid, pc, strings.get(fn, "?"), strings.get(fl, "?"), line))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
