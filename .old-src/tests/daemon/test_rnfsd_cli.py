#!/usr/bin/env python3
"""test_rnfsd_cli.py RNFSD

The rnfsd binary as an administrator uses it: command line and exit codes,
--check-config, the foreground daemon on a private port (serves, exits 0 on
SIGTERM, SIGINT too), the daemonized one (the parent returns 0 once serving,
1 when start-up fails), and the graceful stop answering a call in flight.
Runs without root: every path is under a scratch directory.
"""
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

RNFSD = sys.argv[1]
T = 20.0
NCALLS = 200000  # more than the daemon answers in the time before the signal
failures = 0


def check(cond, what):
    global failures
    print(("PASS: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures += 1


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def run(*args, **kw):
    return subprocess.run([RNFSD, *args], capture_output=True, text=True, timeout=T, **kw)


def rpc_null(port, xid, prog=100003, vers=3, timeout=T):
    """NULL call over a fresh connection: (reply_stat, accept_stat)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        body = struct.pack(">10I", xid, 0, 2, prog, vers, 0, 0, 0, 0, 0)
        s.sendall(struct.pack(">I", 0x80000000 | len(body)) + body)
        hdr = recv_exact(s, 4)
        data = recv_exact(s, struct.unpack(">I", hdr)[0] & 0x7FFFFFFF)
        w = struct.unpack(">%dI" % (len(data) // 4), data)
        return (w[2], w[5]) if w[0] == xid and w[1] == 1 else None
    finally:
        s.close()


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise OSError("closed")
        b += c
    return b


def send_until_error(s, data):
    try:
        s.sendall(data)
    except OSError:
        pass


def wait_port(port, proc=None):
    end = time.monotonic() + T
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def pid_listening(port):
    """pid of the process with a listening socket on port (from /proc)."""
    inodes = set()
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            for line in open(path).read().splitlines()[1:]:
                f = line.split()
                if f[3] == "0A" and int(f[1].split(":")[1], 16) == port:
                    inodes.add(f[9])
        except OSError:
            pass
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return int(pid)
        except OSError:
            continue
    return None


def gone(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return "zombie" in f.read()
    except OSError:
        return True


def main():
    d = tempfile.mkdtemp(prefix="rnfsd-cli-")
    try:
        scenarios(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(f"{'ok' if failures == 0 else str(failures) + ' failed'}")
    sys.exit(1 if failures else 0)


def scenarios(d):
    export = os.path.join(d, "export")
    os.makedirs(export)
    os.makedirs(os.path.join(d, "state"), mode=0o700)
    port = free_port()
    conf = os.path.join(d, "rnfsd.conf")
    exports = os.path.join(d, "exports")

    def write_conf(extra=""):
        with open(conf, "w") as f:
            f.write(f"[rnfsd]\nexports = {exports}\nstate-dir = {d}/state\n"
                    f"stats-socket = {d}/rnfsd.sock\nrpcbind = no\nthreads = 2\n{extra}"
                    f"[tcp]\nlisten = 127.0.0.1:{port}\n[rdma]\nenable = no\n")
    write_conf()
    with open(exports, "w") as f:
        f.write(f"{export} *(rw,insecure)\n")

    # -- command line --
    r = run("--version")
    check(r.returncode == 0 and r.stdout.startswith("rnfsd "), "--version prints the version, exit 0")
    r = run("--help")
    check(r.returncode == 0 and "usage" in r.stdout, "--help prints usage, exit 0")
    for bad in (["--no-such-option"], ["-p", "65536"], ["-p", "x"], ["--listen", "not an address"],
                ["-e", exports, "--export", export], ["extra-argument"]):
        r = run(*bad)
        check(r.returncode == 2, f"bad command line {bad}: exit 2 (got {r.returncode})")

    # -- --check-config --
    r = run("--check-config", "-c", conf)
    check(r.returncode == 0, f"--check-config on valid files: exit 0 ({r.stdout.strip()})")
    bad_exports = os.path.join(d, "bad-exports")
    with open(bad_exports, "w") as f:
        f.write(f"# comment\n{export} *(rw,no_such_option)\n")
    r = run("--check-config", "-c", conf, "-e", bad_exports)
    check(r.returncode == 1 and f"{bad_exports}:2" in r.stderr,
          f"--check-config on a bad exports file: exit 1 naming file:line ({r.stderr.strip()})")
    bad_conf = os.path.join(d, "bad.conf")
    with open(bad_conf, "w") as f:
        f.write("[rnfsd]\nthreads = lots\n")
    r = run("--check-config", "-c", bad_conf)
    check(r.returncode == 1 and f"{bad_conf}:2" in r.stderr,
          f"--check-config on a bad rnfsd.conf: exit 1 naming file:line ({r.stderr.strip()})")
    r = run("--check-config", "-c", os.path.join(d, "missing.conf"))
    check(r.returncode == 1, "--check-config with a missing -c file: exit 1")
    r = run("--check-config", "--export", os.path.join(d, "missing-dir"))
    check(r.returncode == 1, "--check-config with a missing --export directory: exit 1")

    # -- foreground, --export and -p as in the README: serves, exits 0 on SIGTERM --
    p2 = free_port()
    proc = subprocess.Popen([RNFSD, "-f", "--export", export, "-p", str(p2), "-c", conf],
                            stderr=subprocess.PIPE, text=True)
    check(wait_port(p2, proc), "-f --export DIR -p PORT listens on PORT")
    check(rpc_null(p2, 1) == (0, 0), "NFS NULL answered")
    check(rpc_null(p2, 2, prog=100005) == (0, 0), "MOUNT NULL answered on the same port")
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(T)
    log = proc.stderr.read()
    check(rc == 0, f"exit 0 after SIGTERM (got {rc})")
    check("stopped" in log, "logs its stop")

    # SIGINT in the middle of a stream of pipelined calls whose replies we do
    # not read yet: the daemon stops reading calls, answers those it has (each
    # reply a whole record), closes the connection, and exits 0.
    proc = subprocess.Popen([RNFSD, "-f", "-c", conf], stderr=subprocess.PIPE, text=True)
    check(wait_port(port, proc), "-f -c FILE listens on the configured address")
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # so the daemon's writes block
    s.settimeout(T)
    s.connect(("127.0.0.1", port))
    calls = b"".join(struct.pack(">I", 0x80000000 | 40) + struct.pack(">10I", x, 0, 2, 100003, 3, 0, 0, 0, 0, 0)
                     for x in range(1, NCALLS + 1))
    sender = threading.Thread(target=lambda: send_until_error(s, calls))
    sender.start()
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    replies, clean_eof, xid_ok, seen = 0, False, True, set()
    try:
        while True:
            hdr = s.recv(4, socket.MSG_WAITALL)
            if not hdr:
                clean_eof = True
                break
            n = struct.unpack(">I", hdr)[0] & 0x7FFFFFFF
            data = recv_exact(s, n)
            xid = struct.unpack(">I", data[:4])[0]
            xid_ok &= n == 24 and 1 <= xid <= NCALLS and xid not in seen
            seen.add(xid)
            replies += 1
    except OSError:
        pass
    sender.join()
    s.close()
    rc = proc.wait(T)
    check(20 <= replies < NCALLS and xid_ok,
          f"after SIGINT the queued replies are flushed whole, no more calls read ({replies} replies)")
    check(clean_eof, "then the daemon closed the connection")
    check(rc == 0, f"exit 0 after SIGINT (got {rc})")

    # SIGHUP with a broken exports file: logged with file:line, still serving.
    proc = subprocess.Popen([RNFSD, "-f", "-c", conf], stderr=subprocess.PIPE, text=True)
    check(wait_port(port, proc), "restarted")
    shutil.copy(bad_exports, exports)
    proc.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    check(rpc_null(port, 3) == (0, 0), "still serving after a SIGHUP with a broken exports file")
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(T)
    log = proc.stderr.read()
    check(rc == 0 and f"{exports}:2" in log, "the broken exports file was logged with file:line")
    with open(exports, "w") as f:
        f.write(f"{export} *(rw,insecure)\n")

    # -- daemonized: the parent returns once the daemon serves --
    r = subprocess.run([RNFSD, "-c", conf], capture_output=True, text=True, timeout=T)
    check(r.returncode == 0, f"without -f the parent exits 0 once serving (got {r.returncode})")
    check(rpc_null(port, 4) == (0, 0), "the daemon serves")
    pid = pid_listening(port)
    check(pid is not None and pid != os.getpid(), "the daemon is a separate process")
    if pid:
        with open(f"/proc/{pid}/stat") as f:
            st = f.read().rsplit(")", 1)[1].split()
        check(int(st[3]) == pid, "the daemon leads its own session (setsid)")
        # Start-up failure is reported by the parent: the port is taken.
        r = subprocess.run([RNFSD, "-c", conf], capture_output=True, text=True, timeout=T)
        check(r.returncode == 1, f"a daemon that cannot start makes the parent exit 1 (got {r.returncode})")
        os.kill(pid, signal.SIGTERM)
        end = time.monotonic() + T
        while time.monotonic() < end and not gone(pid):
            time.sleep(0.05)
        check(gone(pid), "the daemon stops on SIGTERM")


if __name__ == "__main__":
    main()
