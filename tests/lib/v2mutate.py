#!/usr/bin/env python3
"""v2mutate.py SEED OUTDIR N RNGSEED: writes N mutants of the Go 1.22+ (v2)
trace SEED to OUTDIR/SEEDNAME.K (K = 0..N-1), each the seed with one to
three changes, and prints one line per mutant: its name and what changed.

The file is decoded into batches and events (docs/format.md, "Go 1.22+
native format (v2)"; Go's internal/trace/batch.go), changed, and written
back with each batch's size recomputed, so that most mutants get past the
batch framing to what Go's reader checks next: table ids, frequencies,
sequence numbers, states, generations.  Raw byte changes and truncations
test the framing itself.  Only Python's own random, seeded: the same
arguments write the same files."""
import os
import random
import sys

from v2raw import uv  # the same LEB128 writer (tests/lib)

# Arguments per type (a timed event's first is its time delta), from
# go122/event.go; String and Stack carry data after theirs.
NARGS = [0, 4, 0, 2, 0, 1, 0, 5, 1, 3, 3, 1, 4, 3, 4, 2, 3, 1, 1, 3, 3, 4, 3, 1, 1, 4, 3, 1,
         2, 3, 2, 2, 2, 3, 2, 2, 1, 2, 2, 2, 5, 3, 4, 4, 5, 3, 3, 4, 5]
STRING, STACK, EVBATCH, EXPBATCH = 5, 3, 1, 49


def uv_get(d, i):
    v = shift = 0
    while True:
        if i >= len(d) or shift > 63:
            raise ValueError("varint")
        b = d[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


class Ev:
    def __init__(self, typ, args, data=b"", frames=None):
        self.typ, self.args, self.data, self.frames = typ, args, data, frames

    def enc(self):
        out = bytearray([self.typ]) + b"".join(uv(a) for a in self.args)
        if self.typ == STRING:
            out += uv(len(self.data)) + self.data
        elif self.typ == STACK:
            for fr in self.frames:
                out += b"".join(uv(x) for x in fr)
        return bytes(out)


class Batch:
    def __init__(self, exp, hdr, evs, raw):
        self.exp, self.hdr, self.evs, self.raw = exp, hdr, evs, raw

    def enc(self):
        body = self.raw if self.evs is None else b"".join(e.enc() for e in self.evs)
        head = bytes([EXPBATCH, self.exp]) if self.exp is not None else bytes([EVBATCH])
        return head + b"".join(uv(x) for x in self.hdr) + uv(len(body)) + body


def events(body):
    """The events of a batch's bytes, or None if they do not decode."""
    evs, i = [], 0
    try:
        while i < len(body):
            t = body[i]
            i += 1
            if t >= len(NARGS) or t in (EVBATCH, EXPBATCH):
                return None
            args = []
            for _ in range(NARGS[t]):
                v, i = uv_get(body, i)
                args.append(v)
            ev = Ev(t, args)
            if t == STRING:
                n, i = uv_get(body, i)
                ev.data = body[i:i + n]
                i += n
            elif t == STACK:
                ev.frames = []
                for _ in range(args[1]):
                    fr = []
                    for _ in range(4):
                        v, i = uv_get(body, i)
                        fr.append(v)
                    ev.frames.append(fr)
            evs.append(ev)
        return evs if i == len(body) else None
    except ValueError:
        return None


def parse(d):
    batches, i = [], 16
    while i < len(d):
        exp = None
        if d[i] == EXPBATCH:
            exp = d[i + 1]
            i += 2
        else:
            i += 1
        hdr = []
        for _ in range(3):
            v, i = uv_get(d, i)
            hdr.append(v)
        size, i = uv_get(d, i)
        body = bytes(d[i:i + size])
        i += size
        batches.append(Batch(exp, hdr, None if exp is not None else events(body), body))
    return d[:16], batches


def enc(head, batches):
    return head + b"".join(b.enc() for b in batches)


def some_value(rng, old):
    return rng.choice([0, 1, 2, old + 1, max(old - 1, 0), old + 2, rng.randrange(1, 300),
                       rng.randrange(1 << 20), (1 << 64) - 1, old * 2 + 1])


def change(rng, head, batches):
    """One change to the decoded file (in place); its description."""
    ev_batches = [b for b in batches if b.evs]
    ops = ["arg", "arg", "arg", "arg", "drop_event", "dup_event", "swap_events",
           "drop_batch", "batch_field", "frame", "move_event"]
    op = rng.choice(ops)
    if not ev_batches:
        op = "batch_field"
    b = rng.choice(ev_batches) if ev_batches else rng.choice(batches)
    if op == "arg" or (op == "frame" and not any(e.typ == STACK for e in b.evs)):
        cand = [e for e in b.evs if e.args]
        if not cand:
            return "none"
        e = rng.choice(cand)
        k = rng.randrange(len(e.args))
        old = e.args[k]
        e.args[k] = some_value(rng, old)
        return "type %d arg %d: %d -> %d" % (e.typ, k, old, e.args[k])
    if op == "frame":
        e = rng.choice([e for e in b.evs if e.typ == STACK and e.frames] or
                       [e for e in b.evs if e.typ == STACK])
        if not e.frames:
            e.frames.append([1, 1, 1, 1])
            e.args[1] = 1
            return "stack frame added"
        fr = rng.choice(e.frames)
        k = rng.randrange(4)
        old = fr[k]
        fr[k] = some_value(rng, old)
        return "stack %d frame field %d: %d -> %d" % (e.args[0], k, old, fr[k])
    if op == "drop_event":
        k = rng.randrange(len(b.evs))
        e = b.evs.pop(k)
        return "dropped type %d" % e.typ
    if op == "dup_event":
        k = rng.randrange(len(b.evs))
        e = b.evs[k]
        b.evs.insert(k, Ev(e.typ, list(e.args), e.data, [list(f) for f in e.frames or []]))
        return "duplicated type %d" % e.typ
    if op == "swap_events":
        if len(b.evs) < 2:
            return "none"
        k = rng.randrange(len(b.evs) - 1)
        b.evs[k], b.evs[k + 1] = b.evs[k + 1], b.evs[k]
        return "swapped types %d %d" % (b.evs[k].typ, b.evs[k + 1].typ)
    if op == "move_event":
        if len(ev_batches) < 2 or len(b.evs) < 2:
            return "none"
        c = rng.choice(ev_batches)
        e = b.evs.pop(rng.randrange(len(b.evs)))
        c.evs.insert(rng.randrange(len(c.evs) + 1), e)
        return "moved type %d to another batch" % e.typ
    if op == "drop_batch":
        k = rng.randrange(len(batches))
        batches.pop(k)
        return "dropped batch %d" % k
    b = rng.choice(batches)
    k = rng.randrange(3)
    old = b.hdr[k]
    b.hdr[k] = some_value(rng, old)
    return "batch header field %d: %d -> %d" % (k, old, b.hdr[k])


def mutant(rng, data):
    r = rng.random()
    if r < 0.12:
        cut = rng.randrange(16, len(data))
        return data[:cut], "truncated at %d" % cut
    if r < 0.22:
        d = bytearray(data)
        what = []
        for _ in range(rng.randint(1, 3)):
            k = rng.randrange(16, len(d))
            d[k] ^= 1 << rng.randrange(8)
            what.append("bit at %d" % k)
        return bytes(d), "flipped " + ", ".join(what)
    head, batches = parse(data)
    what = [change(rng, head, batches) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    out = enc(head, batches)
    if rng.random() < 0.05:
        cut = rng.randrange(16, len(out))
        out = out[:cut]
        what.append("truncated at %d" % cut)
    return out, "; ".join(what)


def main():
    seed, outdir, n, rs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    data = open(seed, "rb").read()
    rng = random.Random("%s:%d" % (os.path.basename(seed), rs))
    for k in range(n):
        out, what = mutant(rng, data)
        name = "%s.%d" % (os.path.basename(seed), k)
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(out)
        print(name, what)


main()
