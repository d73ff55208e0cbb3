#!/usr/bin/env python3
"""Checks that README.md, the programs' --help and the man pages say the
same of every option: its name, its units and its default.

The one list of options is each program's getopt tables (check_docs.py
checks that the man pages and --help name exactly those).  This lint adds:

  names    every `--option` README.md writes is an option of gotracectl
           or gotraced (FOREIGN: other tools' options README quotes);
  units    the value an option takes (its metavar: BYTES, D, N, PATH ...)
           is of one kind in --help, the man page and README
           (`--ring-size BYTES` in one and `--ring-size N` in another
           disagree; a size is never spelled as a count);
  defaults "default X" said of an option in two of the three places is the
           same value once its unit is applied (16 MiB = 16M = 16777216
           bytes; 10s = 10000ms; a bare number takes the option's unit).

--help is read from the C string literals of the files that hold the
usage text (the "%d"/"%s" of a printf'd usage are taken from the macros
or constants they print); a man page per option paragraph (.TP to .TP);
README per line that quotes the option (a table row, a sentence).
Prints `ok options` or one `FAIL options:` line per disagreement.
"""
import os
import re
import sys

# the programs, their files and how their getopt tables are read: check_docs.py's
from check_docs import PROGRAMS, ROOT, read, table_options

# Options of other tools that README quotes (podman, docker, perf, go ...).
FOREIGN = {"privileged", "ulimit", "security-opt", "rm", "cap-add", "perf-basic-prof", "flag",
           "network", "pid", "cgroupns", "volume", "device", "name", "user", "tmpfs",
           "cgroup-parent", "mount"}

# A metavar's kind.  Two places disagree when an option's kinds differ.
KINDS = {
    "BYTES": "size", "SIZE": "size", "B": "size",
    "D": "duration", "DUR": "duration", "DURATION": "duration", "WINDOW": "duration",
    "S": "seconds",
    "N": "count",
    "PATH": "path", "FILE": "path", "DIR": "path",
    "PID": "pids", "PIDS": "pids",
    "V": "version", "HZ": "rate",
}

SIZE_UNITS = {"": 1, "b": 1, "bytes": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20,
              "g": 1 << 30, "gib": 1 << 30}
TIME_UNITS = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}


def constants():
    """#define NAME VALUE of daemon/ (what a printf'd usage text prints)."""
    out = {}
    for dirpath, _, files in os.walk(os.path.join(ROOT, "daemon")):
        for f in files:
            if f.endswith((".c", ".h")):
                src = open(os.path.join(dirpath, f), encoding="utf-8").read()
                for m in re.finditer(r'^#define (\w+)\s+("[^"]*"|[0-9]+)u?\b', src, re.M):
                    out.setdefault(m.group(1), m.group(2).strip('"'))
    return out


def help_lines(src, consts):
    """The usage text of a C file: its string literals joined, "%d" and
    "%s" replaced by the printf arguments after the literal (macros), one
    list item per line."""
    out = []
    # a usage text in an array printed later: printf(usage_text, ARG)
    for name, args in re.findall(r"printf\((\w+), ([A-Z_][A-Z0-9_, ]*)\)", src):
        m = re.search(r"char " + name + r"\[\] =\s*((?:\"(?:[^\"\\\n]|\\.)*\"\s*)+);", src)
        if m:
            src = src.replace(m.group(0), "(" + m.group(1) + ", " + args + ");")
    # a printf'd usage: "...%d..." ..., ARG, ARG);
    for m in re.finditer(r'((?:"(?:[^"\\\n]|\\.)*"\s*)+)((?:,\s*[A-Z_][A-Z0-9_]*\s*)*)[);]', src):
        text = "".join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(1)))
        args = re.findall(r"[A-Z_][A-Z0-9_]*", m.group(2))
        i = 0

        def sub(mm):
            nonlocal i
            if mm.group(0) == "%%":
                return "%"
            v = consts.get(args[i], mm.group(0)) if i < len(args) else mm.group(0)
            i += 1
            return v
        text = re.sub(r"%%|%[-0-9]*(?:d|s|u|zu)", sub, text)
        out.extend(text.replace('\\"', '"').split("\\n"))
    return out


def help_blocks(lines):
    """{option: its text in --help}: from the line that starts with it (after
    an indent, maybe "-x, ") to the next such line."""
    blocks, cur = {}, None
    for ln in lines:
        m = re.match(r" {1,8}(?:-[a-zA-Z], )?--([a-z][a-z0-9-]*)", ln)
        if m:
            cur = m.group(1)
            blocks.setdefault(cur, "")
        elif not ln.startswith(" " * 6) and not ln.startswith("\t"):
            cur = None if not ln.startswith("  ") or re.match(r"\s+-", ln) else cur
        if cur:
            blocks[cur] += " " + ln.strip()
    return blocks


def man_text(s):
    s = re.sub(r"\\f[BIRP]", "", s).replace("\\-", "-").replace("\\(em", "-")
    s = re.sub(r'^\.(?:BI|BR|IR|RB|IB|RI|B|I) ', "", s, flags=re.M)
    return s.replace('"', "")


def man_blocks(man):
    """{option: its .TP paragraph} (the first paragraph that heads with it)."""
    out = {}
    for para in man.split(".TP"):
        lines = para.strip().split("\n")
        # the tag, and the tags .TQ adds to it (options that share a text)
        heads = [lines[0]] + [lines[i + 1] for i, ln in enumerate(lines[:-1]) if ln == ".TQ"]
        text = man_text("\n".join(ln for ln in lines if ln != ".TQ"))
        for head in heads:
            h = man_text(head)
            for m in re.finditer(r"--([a-z][a-z0-9-]*[a-z0-9])", h):
                out.setdefault(m.group(1), h + " " + text)
    return out


def readme_blocks(readme, options):
    """{option: README's lines quoting it in backticks}."""
    out = {}
    for ln in readme.splitlines():
        for m in re.finditer(r"`(?:[^`]*\s)?--([a-z][a-z0-9-]*)", ln):
            o = m.group(1)
            if o in options:
                out.setdefault(o, []).append(ln)
    return out


def metavar(text, opt):
    """The metavar written right after --opt (`--opt N`, `--opt=N`,
    `--opt[=N]`), or None."""
    m = re.search(r"--" + re.escape(opt) + r"(?: *\[ *= *| *= *| +)([A-Z][A-Z]*)\b", text)
    return m.group(1) if m else None


def kind(mv):
    return KINDS.get(mv, mv) if mv else None


def value(opt, text, kb):
    """The default said in text, normalized by the option's unit, or None.
    kb: a bare number is KiB (--ring-kb)."""
    m = re.search(r"\(default:? ([0-9][0-9.]*) ?([A-Za-zµ]*)", text) or \
        re.search(r"\bdefault:? ([0-9][0-9.]*) ?([A-Za-zµ]*)", text)
    if not m:
        # "1.19 (default)", "blocking (the default)": a word said default
        w = re.search(r"([a-z0-9][a-z0-9.]*)\s+\((?:the )?default[),]", text)
        return (w.group(1), "") if w else None
    num, unit = m.group(1), m.group(2)
    if unit in ("Hz", "bytes") or (not unit and not kb):
        return (num.rstrip("."), unit)
    u = unit.lower()
    if u in SIZE_UNITS:
        return (str(int(float(num) * SIZE_UNITS[u])), "bytes")
    if unit in TIME_UNITS:
        return (str(float(num) * TIME_UNITS[unit]), "ns")
    if not unit and kb:
        return (str(int(float(num)) << 10), "bytes")
    return (num.rstrip("."), unit)


def main():
    fails = []
    consts = constants()
    readme = read("README.md")
    everything = set()
    per_prog = {}
    for prog, (man_path, srcs) in PROGRAMS.items():
        tables, lines = set(), []
        for s in srcs:
            src = read(s)
            tables |= table_options(src)
            lines += help_lines(src, consts)
        tables.discard("help")
        everything |= tables
        per_prog[prog] = (man_path, tables, help_blocks(lines), man_blocks(read(man_path)))

    # names: what README quotes must exist
    for m in sorted(set(re.findall(r"`[^`]*?--([a-z][a-z0-9-]*)", readme))):
        if m not in everything and m not in FOREIGN and m != "help":
            fails.append(f"README.md names --{m}, which is an option of neither "
                         f"gotracectl nor gotraced")
    rd = readme_blocks(readme, everything)

    for prog, (man_path, tables, hb, mb) in per_prog.items():
        for o in sorted(tables):
            kb = o.endswith("-kb")
            texts = {"--help": hb.get(o), man_path: mb.get(o)}
            if prog == "gotracectl" or o not in per_prog["gotracectl"][1]:
                texts["README.md"] = " ".join(rd.get(o, [])) or None
            # units: the metavar's kind
            kinds = {w: kind(metavar(t, o)) for w, t in texts.items() if t}
            seen = {k for k in kinds.values() if k}
            if len(seen) > 1:
                said = ", ".join(f"{metavar(texts[w], o)} in {w}" for w in kinds if kinds[w])
                fails.append(f"{prog}: --{o} takes different units: {said}")
            # a size takes K, M and G wherever it is described (one parser:
            # gt_args_size); a default spelled "16 MiB" for an option that
            # took bytes only was a disagreement of units
            if seen == {"size"}:
                for w, t in texts.items():
                    if t and metavar(t, o) and not re.search(r"\bK,\s+M,?\s+(?:or\s+|and\s+)?G\b", t):
                        fails.append(f"{prog}: --{o} is a size but {w} does not say it "
                                     f"takes K, M or G")
            # defaults
            vals = {w: value(o, t, kb) for w, t in texts.items() if t}
            vals = {w: v for w, v in vals.items() if v}
            if len(set(vals.values())) > 1:
                said = ", ".join(f"{' '.join(v)} in {w}" for w, v in vals.items())
                fails.append(f"{prog}: --{o} has different defaults: {said}")
    for f in fails:
        print(f"FAIL options: {f}")
    if not fails:
        print("ok options")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
