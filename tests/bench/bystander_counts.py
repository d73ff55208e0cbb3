#!/usr/bin/env python3
"""bystander_counts.py: a bystander's cost by counts (cost.sh, issue 34).

  run PID CMD...   runs CMD, a bystander pinned to CPU 0 that prints
                   `roundtrips N` (pingpong N strict), beside the process PID
                   (a recorder, the daemon, perf; 0: none), and prints one
                   line of counts over CMD's run (FIELDS below)
  table PREFIX SETTING...   the lowest of PREFIX.SETTING's lines, field by
                   field, side by side (the machine's other load only
                   adds: other tasks' switches run the programs too, other
                   processes' munmaps and wakeups send CPU 0 IPIs, which
                   moved 10x between rounds in either column)

A bystander's CPU time moves by 5-15% between runs on a shared VM (the
host's load, the other helpers' builds); these counts hardly move, so a
difference between two settings shows in them or is not there:
  - BPF programs' runs and ns per round trip (kernel.bpf_stats_enabled must
    be on: the caller's; all programs PID holds, run by any task: the
    bystander's switches and wakeups, and whatever else ran meanwhile);
  - interrupts on CPU 0, where the bystander runs, per 1 000 round trips:
    the local timer (LOC) and the IPIs (RES reschedule, CAL function call,
    IWI irq_work, TLB shootdown): time a bystander pays for in its own
    CPU time (no IRQ time accounting on the test kernels);
  - the bystander's involuntary context switches per 1 000 round trips
    (something else took its CPU) and its CPU time per round trip;
  - PID's wakeups a second (voluntary context switches of all its threads)
    and its CPU time, in % of one CPU.
A figure that cannot be measured (bpftool missing or failing,
kernel.bpf_stats_enabled off, no LOC or IPI rows in /proc/interrupts: arm64
names them otherwise) is written `nan`, and one line on stderr says which
and why; `run` exits non-zero only when nothing could be measured, and
`table` shows `-` for a figure no run measured.
"""
import math
import json
import os
import subprocess
import sys
import time

FIELDS = ["runs_rt", "bpf_ns_rt", "loc_krt", "ipi_krt", "preempt_krt", "cpu_ns_rt",
          "other_wakeups_s", "other_cpu_pct"]
IPIS = ("RES", "CAL", "IWI", "TLB")


def irqs_cpu0():
    """CPU 0's count of each of LOC and IPIS that /proc/interrupts has."""
    out = {}
    with open("/proc/interrupts") as f:
        next(f)
        for line in f:
            parts = line.split()
            if parts and parts[0].rstrip(":") in ("LOC",) + IPIS and len(parts) > 1:
                try:
                    out[parts[0].rstrip(":")] = int(parts[1])
                except ValueError:
                    pass
    return out


def tasks_counts(pid):
    """(voluntary switches, run ns) summed over PID's threads now."""
    vol = run = 0
    if not pid:
        return 0, 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0, 0
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        vol += int(line.split()[1])
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                run += int(f.read().split()[0])
        except OSError:
            pass  # a thread gone meanwhile
    return vol, run


def prog_ids(pid):
    ids = set()
    if not pid:
        return ids
    d = f"/proc/{pid}/fdinfo"
    try:
        fds = os.listdir(d)
    except OSError:
        return ids
    for fd in fds:
        try:
            with open(f"{d}/{fd}") as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


def bpf_stats_off():
    """Why the kernel counts no program runs, or None."""
    try:
        with open("/proc/sys/kernel/bpf_stats_enabled") as f:
            on = f.read().strip()
    except OSError as e:
        return f"kernel.bpf_stats_enabled unreadable ({e.strerror})"
    return None if on == "1" else f"kernel.bpf_stats_enabled is {on}"


def bpf_totals(ids):
    """(ns, runs) of the programs IDS, summed, or a string: why not."""
    if not ids:
        return 0, 0
    try:
        out = subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True,
                             text=True)
    except OSError as e:
        return f"bpftool: {e.strerror}"
    if out.returncode:
        return f"bpftool exited {out.returncode}: {out.stderr.strip()[-200:]}"
    try:
        progs = json.loads(out.stdout or "[]")
    except ValueError:
        return "bpftool printed no JSON"
    ns = runs = 0
    for p in progs:
        if p.get("id") in ids:
            ns += p.get("run_time_ns", 0)
            runs += p.get("run_cnt", 0)
    return ns, runs


def irq_figures(i0, i1, n):
    """(LOC per 1k round trips, IPIs per 1k, what is missing): nan when
    /proc/interrupts has no such row (arm64: IPI0..IPI6, arch_timer)."""
    missing = [k for k in ("LOC",) + IPIS if k not in i0 or k not in i1]
    loc = 1000 * (i1["LOC"] - i0["LOC"]) / n if "LOC" not in missing else math.nan
    ipis = [k for k in IPIS if k not in missing]
    ipi = 1000 * sum(i1[k] - i0[k] for k in ipis) / n if ipis else math.nan
    return loc, ipi, missing


def run(pid, cmd):
    ids = prog_ids(pid)
    off = bpf_stats_off() if ids else None
    b0, i0, t0 = bpf_totals(ids), irqs_cpu0(), tasks_counts(pid)
    w0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE)
    out = p.stdout.read().decode()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - w0
    b1, i1, t1 = bpf_totals(ids), irqs_cpu0(), tasks_counts(pid)
    n = [int(l.split()[1]) for l in out.splitlines() if l.startswith("roundtrips ")]
    if status or not n or not n[0]:
        print(f"bystander_counts: {cmd[0]} failed", file=sys.stderr)
        return 1
    n = n[0]
    unmeasured = []
    bad = next((b for b in (b0, b1) if isinstance(b, str)), None) or off
    if bad:
        bpf = [math.nan, math.nan]
        unmeasured.append(f"BPF runs and ns ({bad})")
    else:
        bpf = [(b1[1] - b0[1]) / n, (b1[0] - b0[0]) / n]
    loc, ipi, missing = irq_figures(i0, i1, n)
    if missing:
        what = (["timer"] if math.isnan(loc) else []) + \
            (["IPIs"] if math.isnan(ipi) else
             [f"IPIs counted without {','.join(k for k in missing if k != 'LOC')}"]
             if any(k != "LOC" for k in missing) else [])
        unmeasured.append(f"CPU 0 {'; '.join(what)} (no {','.join(missing)} row in "
                          "/proc/interrupts)")
    vals = bpf + [loc, ipi, 1000 * ru.ru_nivcsw / n, 1e9 * (ru.ru_utime + ru.ru_stime) / n,
                  (t1[0] - t0[0]) / wall, 100 * (t1[1] - t0[1]) / 1e9 / wall]
    if unmeasured:
        print("bystander_counts: not measured: " + "; ".join(unmeasured), file=sys.stderr)
    print(" ".join(f"{v:.3f}" for v in vals))
    return 1 if all(math.isnan(v) for v in vals) else 0


def table(prefix, settings):
    heads = ["BPF runs/rt", "BPF ns/rt", "CPU0 timer/1k", "CPU0 IPIs/1k", "preempted/1k",
             "CPU ns/rt", "other wakeups/s", "other CPU %"]
    print(f"{'setting':14s}" + "".join(f"{h:>16s}" for h in heads))
    best = {}
    for s in settings:
        try:
            rows = [list(map(float, l.split())) for l in open(prefix + s) if l.strip()]
        except OSError:
            rows = []
        if not rows:
            print(f"{s:14s} (no run)")
            continue
        # a figure not measured (nan) in a run is not its lowest
        low = [min((r[i] for r in rows if not math.isnan(r[i])), default=math.nan)
               for i in range(len(FIELDS))]
        best[s] = low
        print(f"{s:14s}" + "".join(f"{'-':>16s}" if math.isnan(v) else f"{v:16.2f}"
                                   for v in low))
    # one line for make bench's summary: default | flight, side by side
    d, f = best.get("default"), best.get("flight")
    if d and f:
        print(f"figure: switch-heavy bystander beside default | --flight: {d[0]:.2f} | {f[0]:.2f} BPF runs "
              f"and {d[1]:.0f} | {f[1]:.0f} ns per round trip, {d[3]:.2f} | {f[3]:.2f} IPIs on its CPU "
              f"per 1k; recorder {d[6]:.0f} | {f[6]:.0f} wakeups/s, {d[7]:.2f} | {f[7]:.2f}% CPU")
    return 0


def main(argv):
    if len(argv) > 3 and argv[1] == "run":
        return run(int(argv[2]), argv[3:])
    if len(argv) > 3 and argv[1] == "table":
        return table(argv[2], argv[3:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
