#!/usr/bin/env python3
"""v2_shapes.py CHECK OURS.d2 GO.d2 TID: compares our Go 1.23 recording of
the v2shapes workload (tests/workloads/go/v2shapes) with the runtime's own
Go 1.23 trace of the same run, both as `go tool trace -d=2` prints them
(Go's raw reader: each batch, then its events with their arguments).  TID
is the thread blocked in read(2) of a pipe: in both files an M is a
thread's tid, and in ours a goroutine is a thread too (docs/format.md,
"The runtime's file vs ours").  CHECK is one of:

  kinds       every event kind we wrote is one the runtime's file has, or
              one of ONLY_OURS (each with its reason); and the kinds this
              program makes both write are there.
  syscall     the blocking read: the runtime's shape (GoSyscallBegin on
              M TID, its P stolen by ProcSteal, GoStatus Syscall on M TID at
              the next generation, GoSyscallEndBlocked on M TID) and ours,
              the waker's (docs/mapping.md): GoSyscallBegin, GoSyscallEnd,
              GoBlock "chan receive" on M TID, GoStatus Waiting of TID at
              every later generation, its GoUnblock by the writer; no
              ProcSteal and no GoSyscallEndBlocked in ours.
  generation  in both files every goroutine waiting at a generation's end
              is stated Waiting (GoStatus or GoStatusStack, gstatus 4) in
              the next one; the runtime's file has goroutines blocked by
              "chan receive", "sync" (the mutex) and "sleep" across a
              boundary, ours the reader thread by "chan receive".
Prints what differs and exits 1 if anything does."""
import sys

# Kinds we may write that the runtime's file of this program lacks, and
# why.  Since GoCreateBlocked (a thread first seen by its wakeup, as the
# runtime writes iter.Pull's coroutine) every other kind we write for
# this program is one the runtime writes too.  CPU samples (only with
# --cpu-samples) are a kind the runtime writes for programs that ask for
# them; this one does not.
ONLY_OURS = {
    # a Go program's thread names the goroutine it ran at each switch-out
    # (docs/mapping.md, "Goroutines of Go programs"); the runtime writes a
    # UserLog only for the program's own trace.Log calls
    "UserLog": "the goroutine a Go thread ran when the kernel switched it out",
    # the kernel preempting a thread (another task took its CPU: on 2 busy
    # CPUs, gotracectl's own threads at the program's start among them) is
    # a GoStop "preempted" in ours; the runtime writes GoStop only for its
    # own preemptions, which this short program may never need
    "GoStop": "a kernel preemption of the program's thread by another task",
}

WAITING, SYSCALL, RUNNING = 4, 3, 2
NONE = 2**64 - 1


def parse(path):
    """Batches: (gen, m, [events]); an event is (name, {arg: int}, ts);
    strings: {(gen, id): text}."""
    batches, strings = [], {}
    cur = None
    pending_string = None
    with open(path) as f:
        for line in f:
            if line.startswith("\t"):
                s = line.strip()
                if pending_string is not None and s.startswith("data="):
                    v = s[5:]
                    if len(v) >= 2 and v[0] == '"' and v[-1] == '"':
                        v = v[1:-1]
                    strings[pending_string] = v
                    pending_string = None
                continue
            toks = line.split()
            if not toks:
                continue
            args = {}
            for t in toks[1:]:
                k, _, v = t.partition("=")
                try:
                    args[k] = int(v)
                except ValueError:
                    args[k] = v
            if toks[0] == "EventBatch":
                cur = (args["gen"], args["m"], [])
                batches.append(cur)
                ts = args["time"]
                continue
            if toks[0] == "String":
                pending_string = (cur[0], args["id"])
                continue
            if "dt" in args:
                ts += args["dt"]
            cur[2].append((toks[0], args, ts))
    return batches, strings


class Trace:
    def __init__(self, path):
        self.batches, self.strings = parse(path)
        self.gens = sorted({b[0] for b in self.batches})
        self.kinds = {e[0] for b in self.batches for e in b[2]}
        # each event with its M, generation and (for GoBlock, GoStop,
        # GoSyscall*) the goroutine the M runs, batch order carried per M
        self.events = []
        mg = {}
        for gen, m, evs in sorted(self.batches, key=lambda b: (b[0], b[2][0][2] if b[2] else 0)):
            for name, a, ts in evs:
                g = a.get("g")
                if name == "GoStart":
                    mg[m] = a["g"]
                elif name in ("GoStatus", "GoStatusStack") and a["m"] == m and \
                        a["gstatus"] in (RUNNING, SYSCALL):
                    mg[m] = a["g"]
                elif name in ("GoBlock", "GoStop", "GoDestroy", "GoSyscallBegin",
                              "GoSyscallEnd", "GoSyscallEndBlocked"):
                    g = mg.get(m)
                    if name in ("GoBlock", "GoStop", "GoDestroy", "GoSyscallEndBlocked"):
                        mg[m] = None
                elif name in ("GoSwitch", "GoSwitchDestroy"):
                    mg[m] = a["g"]  # a coroutine's: the M runs g now
                elif name in ("GoCreate", "GoCreateBlocked"):
                    g = a["new_g"]
                self.events.append((ts, gen, m, name, a, g))
        self.events.sort(key=lambda e: (e[1], e[0]))

    def reason(self, gen, a):
        return self.strings.get((gen, a.get("reason_string")), "?")

    def waiting_at_end(self, gen):
        """{g: reason} of the goroutines whose last event in gen left them
        waiting."""
        st, last, tied = {}, {}, set()
        for ts, gn, m, name, a, g in self.events:
            if gn != gen or g is None:
                continue
            # two Ms' events of g at one time (the runtime's clock ticks
            # 64 ns): their order is Go's reader's to find, not ours
            if g in last and last[g][0] == ts and last[g][1] != m:
                tied.add(g)
            elif g in last and last[g][0] != ts:
                tied.discard(g)
            last[g] = (ts, m)
            if name == "GoBlock":
                st[g] = self.reason(gen, a)
            elif name == "GoCreateBlocked":
                st[g] = "created blocked"
            elif name in ("GoStatus", "GoStatusStack"):
                st[g] = "status" if a["gstatus"] == WAITING else None
            else:
                st[g] = None
        return {g: r for g, r in st.items() if r and g not in tied}

    def stated(self, gen, status):
        return {a["g"] for ts, gn, m, name, a, g in self.events
                if gn == gen and name in ("GoStatus", "GoStatusStack") and
                a["gstatus"] == status}


def check_kinds(ours, go, tid, out):
    extra = ours.kinds - go.kinds - set(ONLY_OURS)
    if extra:
        out.append("kinds we write that the runtime's file lacks (and ONLY_OURS does not "
                   "explain): %s; the runtime's: %s" % (sorted(extra), sorted(go.kinds)))
    for k in ("GoSyscallBegin", "GoSyscallEnd", "GoBlock", "GoUnblock", "GoStatus", "GoCreate",
              "ProcStatus", "ProcStart", "ProcStop"):
        for name, t in (("ours", ours), ("the runtime's", go)):
            if k not in t.kinds:
                out.append("%s has no %s" % (name, k))


def on_m(t, m, names):
    return [e for e in t.events if e[2] == m and e[3] in names]


def check_syscall(ours, go, tid, out):
    last = go.gens[-1]
    begins = on_m(go, tid, ("GoSyscallBegin",))
    if not begins or begins[0][1] != go.gens[0]:
        out.append("runtime: no GoSyscallBegin on M %d in the first generation" % tid)
    gr = begins[-1][5] if begins else None
    steals = [e for e in go.events if e[3] == "ProcSteal" and e[4].get("m") == tid]
    if not steals:
        out.append("runtime: no ProcSteal of M %d's P" % tid)
    for gen in go.gens[1:]:
        if not any(e[3] in ("GoStatus", "GoStatusStack") and e[4]["g"] == gr and
                   e[4]["gstatus"] == SYSCALL and e[4]["m"] == tid and e[1] == gen
                   for e in go.events):
            out.append("runtime: goroutine %s not stated in a syscall on M %d at "
                       "generation %d" % (gr, tid, gen))
    if not any(e[1] == last for e in on_m(go, tid, ("GoSyscallEndBlocked",))):
        out.append("runtime: no GoSyscallEndBlocked on M %d in the last generation" % tid)

    # ours: the waker's shape on the thread's own M; the goroutine's log
    # (a UserLog after the GoSysCall of a call that blocks, just before
    # its GoBlock) names what ran, it changes no state
    evs = [e for e in ours.events if e[2] == tid and e[3] != "UserLog"]
    shape = None
    for i in range(len(evs) - 2):
        if [e[3] for e in evs[i:i + 3]] == ["GoSyscallBegin", "GoSyscallEnd", "GoBlock"]:
            shape = evs[i + 2]
    if shape is None:
        out.append("ours: no GoSyscallBegin, GoSyscallEnd, GoBlock on M %d" % tid)
    elif ours.reason(shape[1], shape[4]) != "chan receive" or shape[5] != tid:
        out.append("ours: the read's GoBlock of %s says %r, not 'chan receive' of %d" %
                   (shape[5], ours.reason(shape[1], shape[4]), tid))
    elif shape[1] != ours.gens[0]:
        out.append("ours: the read blocks in generation %d, not the first" % shape[1])
    for gen in ours.gens[1:]:
        if tid not in ours.stated(gen, WAITING):
            out.append("ours: thread %d not stated Waiting at generation %d" % (tid, gen))
    if not any(e[3] == "GoUnblock" and e[4]["g"] == tid and e[1] == ours.gens[-1]
               for e in ours.events):
        out.append("ours: no GoUnblock of %d (by the writer) in the last generation" % tid)
    for k in ("ProcSteal", "GoSyscallEndBlocked"):
        if k in ours.kinds:
            out.append("ours has %s: we keep the waker (docs/mapping.md)" % k)
    if len(ours.gens) < 2 or len(go.gens) < 2:
        out.append("one generation only (ours %d, the runtime's %d): the read did not "
                   "cross a boundary" % (len(ours.gens), len(go.gens)))


def check_generation(ours, go, tid, out):
    for name, t in (("ours", ours), ("runtime", go)):
        for gen, nxt in zip(t.gens, t.gens[1:]):
            w = t.waiting_at_end(gen)
            missing = sorted(g for g in w if g not in t.stated(nxt, WAITING))
            if missing:
                out.append("%s: goroutines waiting at the end of generation %d not stated "
                           "Waiting in %d: %s" % (name, gen, nxt, missing[:10]))
    w = set(go.waiting_at_end(go.gens[0]).values())
    for r in ("chan receive", "sync", "sleep"):
        if r not in w:
            out.append("runtime: no goroutine blocked by %r across the first boundary "
                       "(%s)" % (r, sorted(w)))
    if ours.waiting_at_end(ours.gens[0]).get(tid) != "chan receive":
        out.append("ours: thread %d not blocked by 'chan receive' at the first boundary" % tid)


def main():
    check, ours, go, tid = sys.argv[1], Trace(sys.argv[2]), Trace(sys.argv[3]), int(sys.argv[4])
    out = []
    {"kinds": check_kinds, "syscall": check_syscall,
     "generation": check_generation}[check](ours, go, tid, out)
    for line in out:
        print(line)
    sys.exit(1 if out else 0)


main()
