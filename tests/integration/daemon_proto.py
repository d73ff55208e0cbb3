#!/usr/bin/env python3
"""A raw client of the gotraced protocol (daemon/common/protocol.h) for the
daemon_*.sh integration scripts: sends what gotracectl never would.

  daemon_proto.py abuse SOCK           bad messages -> ERROR replies, daemon keeps serving
  daemon_proto.py record SOCK FILE PID [SECONDS]
                                       opens FILE itself, passes the fd, prints
                                       `session N` and waits for DONE (or a kill)
  daemon_proto.py nofd SOCK PID        RECORD without a descriptor is refused
  daemon_proto.py badfd SOCK PID       read-only file / pipe descriptors are refused
  daemon_proto.py status SOCK          prints `sessions N`
  daemon_proto.py repeat SOCK FILE PID COPIES SECONDS
                                       RECORD naming PID COPIES times, --heap malloc;
                                       prints `session N`, waits for DONE
  daemon_proto.py badrate SOCK PID     a CPU profile rate of 2^32-1 Hz is refused
  daemon_proto.py flood SOCK N SECONDS opens N idle connections, prints
                                       `accepted A refused R: REASON`, holds them
  daemon_proto.py cgroup SOCK FILE PATH
                                       RECORD of cgroup PATH by its name only (no
                                       directory descriptor), FILE's fd passed;
                                       prints the reply (type, code, text) as
                                       one line of Python repr
  daemon_proto.py quiet SOCK HOW SECONDS
                                       a connection that sends nothing (HOW
                                       silent), half a header (half) or one
                                       STATUS then nothing (idle); prints
                                       `closed: TEXT` with the daemon's last
                                       ERROR once it closes, or `open` after
                                       SECONDS

  daemon_proto.py hold SOCK DIR N SECONDS
                                       N RECORDs (one connection each, files in
                                       DIR) of a child `sleep` until stopped;
                                       prints `opened A refused R: REASON`,
                                       holds them SECONDS (or until killed)
  daemon_proto.py label SOCK FILE PID  a RECORD of PID (until stopped) whose
                                       label holds an escape sequence, a
                                       newline and a forged status line;
                                       prints `session N`, waits for DONE
  daemon_proto.py stops SOCK N         N STOPs of a missing session on one
                                       connection; prints `refused R`

Prints `ok NAME` / `FAIL NAME: why` lines; exits 1 if anything failed.
"""
import os
import re
import socket
import struct
import sys
import time

MAGIC, VERSION, HDR = 0x44525447, 1, 16
RECORD, STATUS, STOP, OK, PROGRESS, DONE, ERROR, STATUS_REPLY = 1, 2, 3, 16, 17, 18, 19, 20
MAX_PAYLOAD = 65536
failures = 0


def report(name, good, why=""):
    global failures
    if good:
        print(f"ok {name}", flush=True)
    else:
        failures += 1
        print(f"FAIL {name}: {why}", flush=True)


def msg(mtype, payload=b"", version=VERSION, magic=MAGIC, length=None, reserved=0):
    n = len(payload) if length is None else length
    return struct.pack("<IHHII", magic, version, mtype, n, reserved) + payload


def pstr(s):
    b = s if isinstance(s, bytes) else s.encode()
    return struct.pack("<H", len(b)) + b


# A label as a hand-written client may send it: a window title escape, a
# newline and the start of a forged `status` line, an 8-bit CSI.
HOSTILE_LABEL = b"x\x1b]0;OWNED\x07\n99   root  forged\x9b2J"


HEAP_MALLOC = 2


def numeric_options():
    """The RECORD's numeric options after its flags, in wire order: (name,
    struct code) from the one list, GT_SESSION_NUMBERS in session_opts.h."""
    here = os.path.dirname(os.path.abspath(__file__))
    # beside this file when a test copied both (to run as another user)
    path = os.path.join(here, "session_opts.h")
    if not os.path.exists(path):
        path = os.path.join(here, "../../daemon/common/session_opts.h")
    src = open(path).read()
    block = src[src.index("#define GT_SESSION_NUMBERS(X)"):]
    block = block[:block.index("\n\n")]
    return [(m.group(2), "Q" if m.group(3) == "u64" else "I")
            for m in re.finditer(r"X\(([^,]+),\s*(\w+),\s*(u32|u64),", block)]


NUMBERS = numeric_options()


def options(**values):
    """The flags-less numeric part of a RECORD: every option 0 unless given."""
    return b"".join(struct.pack("<" + code, values.get(name, 0)) for name, code in NUMBERS)


def record_payload(pids=(), cgroup="", duration_ns=0, label="daemon_proto", flags=0,
                   heap=0, cpu_hz=0, names=()):
    p = struct.pack("<I", flags) + options(duration_ns=duration_ns, heap=heap,
                                           cpu_profile_hz=cpu_hz)
    p += struct.pack("<I", len(pids))
    p += b"".join(struct.pack("<i", x) for x in pids)
    p += pstr(cgroup) + pstr(label) + struct.pack("<I", len(names))
    return p + b"".join(pstr(n) for n in names)


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(20)
    s.connect(path)
    return s


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("daemon closed the connection")
        buf += chunk
    return buf


def recv_msg(s):
    magic, version, mtype, length, reserved = struct.unpack("<IHHII", recv_exact(s, HDR))
    if magic != MAGIC or version != VERSION or length > MAX_PAYLOAD:
        raise ValueError(f"bad header from daemon {magic:#x} v{version} len {length}")
    return mtype, recv_exact(s, length)


def error_text(payload):
    code, n = struct.unpack_from("<IH", payload)
    return code, payload[6:6 + n].decode(errors="replace")


def expect_error(name, path, data, want=None, fds=None):
    """Sends data on a fresh connection; the reply must be ERROR."""
    try:
        s = connect(path)
        if fds:
            socket.send_fds(s, [data], fds)
        else:
            s.sendall(data)
        mtype, payload = recv_msg(s)
        s.close()
    except Exception as e:  # noqa: BLE001 - any failure is the test's verdict
        report(name, False, f"no error reply: {e}")
        return
    if mtype != ERROR:
        report(name, False, f"reply type {mtype}, wanted ERROR")
        return
    code, text = error_text(payload)
    report(name, want is None or want in text, f"error '{text}' lacks '{want}'")


def status_count(path):
    s = connect(path)
    s.sendall(msg(STATUS))
    mtype, payload = recv_msg(s)
    s.close()
    if mtype != STATUS_REPLY:
        raise ValueError(f"STATUS answered with type {mtype}")
    return struct.unpack_from("<I", payload)[0]


def abuse(path):
    pid = os.getpid()
    expect_error("proto_bad_magic", path, msg(STATUS, magic=0x12345678), "magic")
    expect_error("proto_bad_version", path, msg(STATUS, version=99), "version")
    expect_error("proto_unknown_type", path, msg(77), "type")
    expect_error("proto_reserved", path, msg(STATUS, reserved=5), "reserved")
    expect_error("proto_oversized", path, msg(STATUS, length=MAX_PAYLOAD + 1), "limit")
    expect_error("proto_garbage", path, os.urandom(64) + b"GET / HTTP/1.0\r\n\r\n")
    expect_error("proto_truncated_payload", path,
                 msg(RECORD, record_payload([pid])[:10]), "cut short")
    expect_error("proto_lying_pid_count", path,
                 msg(RECORD, struct.pack("<I", 0) + options() + struct.pack("<I", 100000)), "limit")
    expect_error("proto_trailing_bytes", path, msg(STOP, struct.pack("<IB", 1, 0)), "unexpected")
    expect_error("proto_reply_as_request", path, msg(OK, struct.pack("<I", 1)), "reply")
    expect_error("proto_stop_unknown", path, msg(STOP, struct.pack("<I", 999999)), "no session")
    expect_error("proto_both_targets", path,
                 msg(RECORD, record_payload([pid], cgroup="/sys/fs/cgroup")), "several")
    # a header then silence, then close: the daemon must not wait forever
    s = connect(path)
    s.sendall(msg(STATUS, length=100)[:HDR] + b"xx")
    s.close()
    # many connections opened and dropped at once
    socks = [connect(path) for _ in range(50)]
    for s in socks:
        s.close()
    slow_reader(path)
    try:
        n = status_count(path)
        report("proto_daemon_still_serves", n >= 0)
    except Exception as e:  # noqa: BLE001
        report("proto_daemon_still_serves", False, str(e))


def slow_reader(path):
    """A client that asks and never reads: the daemon must drop it once its
    unsent replies pass their bound, and keep serving everyone else."""
    s = connect(path)
    s.settimeout(5)
    burst = msg(STATUS) * 4096
    dropped = False
    start = time.monotonic()
    while time.monotonic() - start < 20:
        try:
            s.sendall(burst)
        except (BrokenPipeError, ConnectionResetError):
            dropped = True
            break
        except socket.timeout:
            # the daemon stopped reading us; it must still answer others
            break
    try:
        other = status_count(path)
        served = other >= 0
    except Exception:  # noqa: BLE001
        served = False
    if not dropped:
        # drain what is queued: the connection must end (dropped), not hang
        try:
            s.settimeout(10)
            while s.recv(1 << 20):
                pass
            dropped = True
        except (ConnectionResetError, socket.timeout):
            dropped = not isinstance(sys.exc_info()[1], socket.timeout)
    s.close()
    report("proto_slow_reader_dropped", dropped and served,
           f"dropped={dropped} others served={served}")


def nofd(path, pid):
    expect_error("proto_record_without_fd", path, msg(RECORD, record_payload([pid])),
                 "descriptor")


def badfd(path, pid):
    ro = os.open("/etc/hostname", os.O_RDONLY)
    expect_error("proto_readonly_fd_refused", path, msg(RECORD, record_payload([pid])),
                 "not open for writing", fds=[ro])
    os.close(ro)
    r, w = os.pipe()
    expect_error("proto_pipe_fd_refused", path, msg(RECORD, record_payload([pid])),
                 "regular file", fds=[w])
    os.close(r)
    os.close(w)


def flood(path, n, seconds):
    held, refused, reason = [], 0, ""
    for _ in range(n):
        try:
            s = connect(path)
        except OSError as e:
            refused += 1
            reason = str(e)
            continue
        s.settimeout(0.2)
        try:
            mtype, payload = recv_msg(s)   # a refused connection is told why at once
            refused += 1
            reason = error_text(payload)[1] if mtype == ERROR else f"type {mtype}"
            s.close()
        except (socket.timeout, TimeoutError):
            held.append(s)
        except (OSError, EOFError, ValueError) as e:
            refused += 1
            reason = str(e)
    print(f"accepted {len(held)} refused {refused}: {reason}", flush=True)
    time.sleep(seconds)
    for s in held:
        s.close()
    return 0


def cgroup_by_name(path, out, cgroup):
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    s = connect(path)
    socket.send_fds(s, [msg(RECORD, record_payload(cgroup=cgroup, duration_ns=10**8))], [fd])
    os.close(fd)
    try:
        mtype, payload = recv_msg(s)
    except Exception as e:  # noqa: BLE001 - the reply (or its absence) is the output
        print(repr(("no reply", str(e))), flush=True)
        return 0
    s.close()
    if mtype == ERROR:
        print(repr(("ERROR",) + error_text(payload)), flush=True)
    else:
        print(repr((mtype, payload.hex())), flush=True)
    return 0


def quiet(path, how, seconds):
    s = connect(path)
    if how == "half":
        s.sendall(msg(STATUS)[:HDR // 2])
    elif how == "idle":
        s.sendall(msg(STATUS))
        mtype, _ = recv_msg(s)
        if mtype != STATUS_REPLY:
            print(f"STATUS answered with type {mtype}", flush=True)
            return 1
    s.settimeout(float(seconds))
    last = ""
    try:
        while True:
            mtype, payload = recv_msg(s)
            if mtype == ERROR:
                last = error_text(payload)[1]
    except (socket.timeout, TimeoutError):
        print("open", flush=True)
        return 0
    except (OSError, ConnectionError):
        pass
    print(f"closed: {last}", flush=True)
    return 0


def badrate(path, pid):
    expect_error("proto_cpu_rate_refused", path,
                 msg(RECORD, record_payload([pid], cpu_hz=0xffffffff)), "CPU profile rate")


def record(path, out, pid, seconds, copies=1, heap=0):
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    s = connect(path)
    s.settimeout(None)
    payload = record_payload([pid] * copies, duration_ns=int(seconds * 1e9), heap=heap)
    socket.send_fds(s, [msg(RECORD, payload)], [fd])
    os.close(fd)
    mtype, payload = recv_msg(s)
    if mtype != OK:
        code, text = error_text(payload) if mtype == ERROR else (0, f"type {mtype}")
        print(f"refused: {text}", flush=True)
        return 1
    print(f"session {struct.unpack('<I', payload)[0]}", flush=True)
    while True:
        mtype, payload = recv_msg(s)
        if mtype == DONE:
            print("done", flush=True)
            return 0


def start_record(path, out, pid, label="daemon_proto"):
    """A connection whose RECORD of pid (until stopped) was answered: (socket,
    None) on OK, (None, reason) on a refusal."""
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    s = connect(path)
    s.settimeout(60)
    socket.send_fds(s, [msg(RECORD, record_payload([pid], label=label))], [fd])
    os.close(fd)
    mtype, payload = recv_msg(s)
    if mtype == OK:
        return s, None
    s.close()
    return None, error_text(payload)[1] if mtype == ERROR else f"type {mtype}"


def hold(path, out_dir, n, seconds):
    import signal
    import subprocess
    # killed (TERM), the child goes too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    child = subprocess.Popen(["sleep", str(int(seconds) + 60)])
    held, refused, reason = [], 0, ""
    try:
        for i in range(n):
            s, why = start_record(path, os.path.join(out_dir, f"hold-{os.getuid()}-{i}.trace"),
                                  child.pid)
            if s:
                held.append(s)
            else:
                refused += 1
                reason = why
        print(f"opened {len(held)} refused {refused}: {reason}", flush=True)
        time.sleep(seconds)
    finally:
        for s in held:
            s.close()
        child.kill()
    return 0


def hostile_label(path, out, pid):
    s, why = start_record(path, out, pid, label=HOSTILE_LABEL)
    if not s:
        print(f"refused: {why}", flush=True)
        return 1
    s.settimeout(None)
    print("recording", flush=True)
    while recv_msg(s)[0] != DONE:
        pass
    print("done", flush=True)
    return 0


def stops(path, n):
    s = connect(path)
    refused = 0
    for _ in range(n):
        s.sendall(msg(STOP, struct.pack("<I", 999999)))
        refused += recv_msg(s)[0] == ERROR
    s.close()
    print(f"refused {refused}", flush=True)
    return 0


def main():
    cmd = sys.argv[1]
    if cmd in ("abuse", "nofd", "badfd"):
        # an exception between two reports would end the script without a
        # FAIL line naming what broke: name it
        try:
            return checks(cmd)
        except Exception as e:  # noqa: BLE001 - any failure is the test's verdict
            report(f"proto_{cmd}", False, f"daemon_proto.py {cmd} stopped: {e!r}")
            return 1
    return tools(cmd)


def checks(cmd):
    path = sys.argv[2]
    if cmd == "abuse":
        abuse(path)
    elif cmd == "nofd":
        nofd(path, int(sys.argv[3]))
    else:
        badfd(path, int(sys.argv[3]))
    return 1 if failures else 0


def tools(cmd):
    path = sys.argv[2]
    if cmd == "record":
        secs = float(sys.argv[5]) if len(sys.argv) > 5 else 0
        return record(path, sys.argv[3], int(sys.argv[4]), secs)
    elif cmd == "repeat":
        return record(path, sys.argv[3], int(sys.argv[4]), float(sys.argv[6]),
                      copies=int(sys.argv[5]), heap=HEAP_MALLOC)
    elif cmd == "flood":
        return flood(path, int(sys.argv[3]), float(sys.argv[4]))
    elif cmd == "badrate":
        badrate(path, int(sys.argv[3]))
    elif cmd == "cgroup":
        return cgroup_by_name(path, sys.argv[3], sys.argv[4])
    elif cmd == "quiet":
        return quiet(path, sys.argv[3], sys.argv[4])
    elif cmd == "hold":
        return hold(path, sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
    elif cmd == "label":
        return hostile_label(path, sys.argv[3], int(sys.argv[4]))
    elif cmd == "stops":
        return stops(path, int(sys.argv[3]))
    elif cmd == "status":
        print(f"sessions {status_count(path)}")
    else:
        print(__doc__)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
