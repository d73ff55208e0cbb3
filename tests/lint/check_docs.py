#!/usr/bin/env python3
"""Checks that the man pages and the programs' options say the same.

The one list is each program's getopt table (`struct option ...[] = {...}`
in its C file): every long option there must be in the program's man page
and in its --help text, and every `\\-\\-option` of a man page must be in a
table.  A default that both --help and the man page state for an option
("default N") must be the same.  Every environment variable the daemon/
sources read (getenv, or a GT_..._ENV macro naming one) must be in a man
page (LISTEN_*/NOTIFY_SOCKET: systemd's protocol, said in gotraced(8)).
Prints `ok docs` or one `FAIL docs:` line per disagreement; exit 0 or 1.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# program: (man page, C files with getopt tables and --help text)
PROGRAMS = {
    "gotracectl": ("systemd/gotracectl.1",
                   ["daemon/ctl/record_opts.c", "daemon/ctl/report.c", "daemon/ctl/inspect.c",
                    "daemon/ctl/status.c", "daemon/ctl/stop.c", "daemon/ctl/dump.c",
                    "daemon/common/parse_args.c", "daemon/ctl/gotracectl.c"]),
    "gotraced": ("systemd/gotraced.8", ["daemon/server/gotraced.c"]),
}


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def table_options(src):
    opts = set()
    for table in re.findall(r"struct option \w+\[\] = \{(.*?)\n\s*\};", src, re.S):
        opts.update(re.findall(r'\{\s*"([a-z][a-z0-9-]*)"', table))
    # options a main() compares by hand (gotracectl --version)
    opts.update(re.findall(r'strcmp\(argv\[1\], "--([a-z][a-z0-9-]*)"\)', src))
    return opts


def help_text(src):
    """The C string literals of the file, joined: its usage text."""
    return "".join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', src))


def man_options(man):
    return set(re.findall(r"\\-\\-([a-z][a-z0-9\\-]*[a-z0-9])", man.replace("\\-", "\\-")))


def norm(opt):
    return opt.replace("\\-", "-")


def help_defaults(text):
    """--option ... (default N  ->  {option: N}, from the usage text."""
    out = {}
    for m in re.finditer(r"--([a-z][a-z0-9-]*)[^-]*?\(default ([0-9][0-9.]*)", text):
        out.setdefault(m.group(1), m.group(2))
    return out


def man_defaults(man):
    """An option's paragraph (from its .TP line to the next .TP) saying
    "default N"."""
    out = {}
    for para in man.split(".TP"):
        head = para.strip().split("\n", 1)[0]
        m = re.search(r"\\-\\-([a-z][a-z0-9\\-]*)", head)
        d = re.search(r"default ([0-9][0-9.]*)", para)
        if m and d:
            out.setdefault(norm(m.group(1)), d.group(1))
    return out


def main():
    fails = []
    mans = ""
    for prog, (man_path, srcs) in PROGRAMS.items():
        man = read(man_path)
        mans += man
        in_man = {norm(o) for o in man_options(man)}
        in_tables, helps = set(), ""
        for s in srcs:
            src = read(s)
            in_tables |= table_options(src)
            helps += help_text(src)
        in_tables.discard("help")
        in_man.discard("help")
        for o in sorted(in_tables - in_man):
            fails.append(f"{prog}: --{o} is an option but not in {man_path}")
        for o in sorted(in_man - in_tables):
            fails.append(f"{prog}: {man_path} names --{o}, which is no option")
        for o in sorted(in_tables):
            if f"--{o}" not in helps:
                fails.append(f"{prog}: --{o} is an option but not in its --help text")
        hd, md = help_defaults(helps), man_defaults(man)
        for o in sorted(set(hd) & set(md)):
            if hd[o] != md[o]:
                fails.append(f"{prog}: --{o} defaults to {hd[o]} in --help, {md[o]} in {man_path}")
    envs = set()
    for dirpath, _, files in os.walk(os.path.join(ROOT, "daemon")):
        for f in files:
            if f.endswith((".c", ".h")):
                src = open(os.path.join(dirpath, f), encoding="utf-8").read()
                envs.update(re.findall(r'getenv\("([A-Z_]+)"\)', src))
                envs.update(re.findall(r'#define GT_\w+_ENV "([A-Z_]+)"', src))
    for e in sorted(envs):
        if e.replace("_", "\\_") not in mans and e not in mans:
            fails.append(f"environment variable {e} is read but in no man page")
    for f in fails:
        print(f"FAIL docs: {f}")
    if not fails:
        print("ok docs")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
