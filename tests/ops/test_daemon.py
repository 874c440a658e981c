#!/usr/bin/env python3
"""test_daemon.py RNFSD RNFSCTL SCENARIO

Runs the real rnfsd the way systemd would: NOTIFY_SOCKET names a datagram
socket this script binds (standing in for the service manager), the daemon
runs in the foreground on a private loopback port with its own config,
exports, state directory and stats socket. Scenarios:

  notify  READY=1 arrives only when the TCP port accepts; STATUS= lines with
          exports and connections; RELOADING=1 (with MONOTONIC_USEC=) then
          READY=1 around SIGHUP; STOPPING=1 and exit 0 at SIGTERM.
  reload  SIGHUP with a changed exports file (the count in STATUS= follows),
          with a broken exports file and a broken rnfsd.conf (error logged
          with file:line, old table kept, still serving), then fixed again.
  stats   drives real calls (raw RPC NULL over TCP, a GETATTR with garbage
          arguments, and libnfs's nfs-ls when installed), then checks
          rnfsctl's table and --json for those calls and for the open
          connection.
  nfs4    NFSv4 with the default configuration (no [nfsv4] section: it is
          on by default): no previous clients, no grace; an NFSv4.1
          client (raw EXCHANGE_ID, CREATE_SESSION) is counted (clients,
          sessions, per-operation counters in --json and the table) and
          recorded in state-dir/nfs4-clients; after a restart with
          grace-time = 60 the server is in grace for that one client, and
          its RECLAIM_COMPLETE ends the grace period early.
"""
import json
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

RNFSD, RNFSCTL, SCENARIO = sys.argv[1], sys.argv[2], sys.argv[3]
DEADLINE = 20.0  # seconds for any one expected event


def fail(msg):
    print("FAIL: " + msg, flush=True)
    raise SystemExit(1)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Daemon:
    """One rnfsd with everything under a scratch directory."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="rnfsd-ops-")
        self.port = free_port()
        self.export = os.path.join(self.dir, "export")
        self.export2 = os.path.join(self.dir, "export2")
        os.makedirs(self.export)
        os.makedirs(self.export2)
        with open(os.path.join(self.export, "hello.txt"), "w") as f:
            f.write("hello\n")
        self.conf = os.path.join(self.dir, "rnfsd.conf")
        self.exports = os.path.join(self.dir, "exports")
        self.sock = os.path.join(self.dir, "rnfsd.sock")
        self.write_conf()
        self.write_exports([self.export])
        self.notify_path = os.path.join(self.dir, "notify")
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(self.notify_path)
        self.log_path = os.path.join(self.dir, "rnfsd.log")
        self.proc = None
        self.messages = []

    def write_conf(self, extra=""):
        with open(self.conf, "w") as f:
            f.write(
                "[rnfsd]\n"
                f"exports = {self.exports}\n"
                f"state-dir = {self.dir}/state\n"
                f"stats-socket = {self.sock}\n"
                "rpcbind = no\n"
                "threads = 2\n"
                f"{extra}"
                "[tcp]\n"
                f"listen = 127.0.0.1:{self.port}\n"
                "[rdma]\n"
                "enable = no\n"
            )

    def write_exports(self, paths, broken=False):
        with open(self.exports, "w") as f:
            f.write("# test exports\n")
            for p in paths:
                f.write(f"{p} *(rw,insecure,no_root_squash)\n")
            if broken:
                f.write(f"{self.dir} *(rw,no_such_option)\n")

    def start(self):
        os.makedirs(os.path.join(self.dir, "state"), mode=0o700, exist_ok=True)
        env = dict(os.environ, NOTIFY_SOCKET=self.notify_path)
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([RNFSD, "-f", "-c", self.conf], env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT)

    def log_text(self):
        with open(self.log_path) as f:
            return f.read()

    def recv(self, timeout=DEADLINE):
        """Next notification (a dict of its assignments), or None at timeout."""
        r, _, _ = select.select([self.notify], [], [], timeout)
        if not r:
            return None
        data = self.notify.recv(4096).decode()
        msg = dict(line.split("=", 1) for line in data.split("\n") if "=" in line)
        self.messages.append(msg)
        print("notify:", data.replace("\n", " | "), flush=True)
        return msg

    def wait_for(self, key, value=None, timeout=DEADLINE):
        """Receive until a message has key (=value); returns it and those before."""
        seen = []
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                fail(f"rnfsd exited ({self.proc.returncode}) waiting for {key}:\n{self.log_text()}")
            msg = self.recv(max(0.0, end - time.monotonic()))
            if msg is None:
                break
            seen.append(msg)
            if key in msg and (value is None or msg[key] == value):
                return msg, seen
        fail(f"no {key}{'=' + value if value else ''} within {timeout}s; got {seen}\n{self.log_text()}")

    def port_accepts(self):
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", self.port))
            return True
        except OSError:
            return False
        finally:
            s.close()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(DEADLINE)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                fail("rnfsd did not exit within %ss of SIGTERM" % DEADLINE)
            if self.proc.returncode != 0:
                fail(f"rnfsd exited with {self.proc.returncode} after SIGTERM:\n{self.log_text()}")

    def cleanup(self):
        try:
            self.stop()
        finally:
            self.notify.close()
            shutil.rmtree(self.dir, ignore_errors=True)


# ---- raw ONC RPC over TCP (RFC 5531 §9, record marking §11) ----

def rpc_call(sock, xid, prog, vers, proc, args=b""):
    body = struct.pack(">IIIIII", xid, 0, 2, prog, vers, proc)
    body += struct.pack(">IIII", 0, 0, 0, 0)  # AUTH_NONE credential and verifier
    body += args
    sock.sendall(struct.pack(">I", 0x80000000 | len(body)) + body)
    return rpc_reply(sock, xid)


def rpc_reply(sock, xid):
    """Returns (reply_stat, accept_stat or reject_stat)."""
    data = b""
    last = False
    while not last:
        hdr = recv_exact(sock, 4)
        (mark,) = struct.unpack(">I", hdr)
        last = bool(mark & 0x80000000)
        data += recv_exact(sock, mark & 0x7FFFFFFF)
    rxid, mtype, stat = struct.unpack(">III", data[:12])
    if rxid != xid or mtype != 1:
        fail(f"bad reply header xid={rxid} type={mtype}")
    if stat == 0:  # MSG_ACCEPTED: verifier, then accept_stat
        vlen = struct.unpack(">I", data[16:20])[0]
        off = 20 + ((vlen + 3) & ~3)
        return 0, struct.unpack(">I", data[off:off + 4])[0]
    return 1, struct.unpack(">I", data[12:16])[0]


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            fail("connection closed by rnfsd")
        buf += chunk
    return buf


NFS_PROG, MOUNT_PROG = 100003, 100005


def rnfsctl(d, *args):
    r = subprocess.run([RNFSCTL, "-s", d.sock, *args], capture_output=True, text=True, timeout=DEADLINE)
    if r.returncode != 0:
        fail(f"rnfsctl {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r.stdout


# ---- scenarios ----

def scenario_notify(d):
    d.start()
    ready, before = d.wait_for("READY", "1")
    # READY=1 means every listener is up: the port must accept right now.
    if not d.port_accepts():
        fail("READY=1 sent but the TCP port does not accept connections")
    statuses = [m["STATUS"] for m in before if "STATUS" in m]
    if not statuses:
        msg, _ = d.wait_for("STATUS")
        statuses.append(msg["STATUS"])
    if not re.search(r"\b1 export\b", statuses[-1]) or "connection" not in statuses[-1]:
        fail(f"STATUS does not show exports and connections: {statuses[-1]!r}")

    # A held connection shows up in the periodic STATUS= refresh.
    s = socket.create_connection(("127.0.0.1", d.port))
    rpc_call(s, 1, NFS_PROG, 3, 0)
    end = time.monotonic() + DEADLINE
    while True:
        msg, _ = d.wait_for("STATUS", timeout=max(0.1, end - time.monotonic()))
        if "1 connection " in msg["STATUS"]:
            break

    t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
    d.proc.send_signal(signal.SIGHUP)
    reloading, _ = d.wait_for("RELOADING", "1")
    t1 = time.clock_gettime(time.CLOCK_MONOTONIC)
    usec = int(reloading.get("MONOTONIC_USEC", "-1"))
    if not (t0 * 1e6 - 1e6 <= usec <= t1 * 1e6 + 1e6):
        fail(f"MONOTONIC_USEC={usec} not between {t0 * 1e6:.0f} and {t1 * 1e6:.0f}")
    d.wait_for("READY", "1")
    if rpc_call(s, 2, NFS_PROG, 3, 0) != (0, 0):
        fail("NULL call failed after reload")
    s.close()

    d.proc.send_signal(signal.SIGTERM)
    d.wait_for("STOPPING", "1")
    rc = d.proc.wait(DEADLINE)
    if rc != 0:
        fail(f"exit status {rc} after SIGTERM")
    if os.path.exists(d.sock):
        fail("stats socket left behind after SIGTERM")


def reload_and_wait(d):
    d.proc.send_signal(signal.SIGHUP)
    d.wait_for("RELOADING", "1")
    ready, _ = d.wait_for("READY", "1")
    status = ready.get("STATUS")
    if status is None:
        status = d.wait_for("STATUS")[0]["STATUS"]
    return status


def still_serving(d):
    s = socket.create_connection(("127.0.0.1", d.port), timeout=DEADLINE)
    try:
        if rpc_call(s, 7, NFS_PROG, 3, 0) != (0, 0):
            fail("NULL call failed")
    finally:
        s.close()


def scenario_reload(d):
    d.start()
    d.wait_for("READY", "1")

    d.write_exports([d.export, d.export2])
    status = reload_and_wait(d)
    if "2 exports" not in status:
        fail(f"after adding an export, STATUS is {status!r}")

    d.write_exports([d.export, d.export2], broken=True)
    status = reload_and_wait(d)
    time.sleep(0.2)
    log = d.log_text()
    if not re.search(re.escape(d.exports) + r":\d+", log):
        fail("a broken exports file was not reported with file:line:\n" + log)
    if "2 exports" not in status:
        fail(f"after a broken reload the old table must stay: STATUS is {status!r}")
    still_serving(d)

    d.write_exports([d.export, d.export2])
    d.write_conf(extra="no-such-key = 1\n")
    status = reload_and_wait(d)
    time.sleep(0.2)
    if not re.search(re.escape(d.conf) + r":\d+", d.log_text()):
        fail("a broken rnfsd.conf was not reported with file:line:\n" + d.log_text())
    still_serving(d)

    d.write_conf()
    d.write_exports([d.export])
    status = reload_and_wait(d)
    if "1 export," not in status:
        fail(f"after removing an export, STATUS is {status!r}")
    still_serving(d)
    d.stop()
    if d.proc.returncode != 0:
        fail(f"exit status {d.proc.returncode}")


def scenario_stats(d):
    d.start()
    d.wait_for("READY", "1")
    mode = os.stat(d.sock).st_mode & 0o7777
    if mode != 0o600:
        fail(f"stats socket mode {mode:o}, want 600")

    s = socket.create_connection(("127.0.0.1", d.port))
    local = "%s:%d" % s.getsockname()
    for xid in range(10, 15):
        if rpc_call(s, xid, NFS_PROG, 3, 0) != (0, 0):
            fail("NFS NULL failed")
    if rpc_call(s, 20, MOUNT_PROG, 3, 0) != (0, 0):
        fail("MOUNT NULL failed")
    # GETATTR (proc 1) whose file handle length runs past the message: GARBAGE_ARGS.
    if rpc_call(s, 21, NFS_PROG, 3, 1, struct.pack(">I", 64)) != (0, 4):
        fail("truncated GETATTR was not answered with GARBAGE_ARGS")
    nfs_ls_calls = 0
    if shutil.which("nfs-ls"):
        url = f"nfs://127.0.0.1{d.export}?nfsport={d.port}&mountport={d.port}&version=3"
        r = subprocess.run(["nfs-ls", url], capture_output=True, text=True, timeout=DEADLINE)
        print("nfs-ls:", r.returncode, r.stdout.strip(), r.stderr.strip(), flush=True)
        if r.returncode != 0 or "hello.txt" not in r.stdout:
            fail(f"nfs-ls of the export failed: {r.stdout} {r.stderr}")
        nfs_ls_calls = 1
    else:
        print("nfs-ls not installed: MOUNT/READDIR through libnfs not driven", flush=True)

    doc = json.loads(rnfsctl(d, "--json"))
    procs = {(p["program"], p["version"], p["procedure"]): p for p in doc["procedures"]}
    null = next((p for k, p in procs.items() if k[0] == "nfs" and k[2] == "NULL"), None)
    if not null or null["calls"] < 5:
        fail(f"nfs NULL calls not counted: {null}")
    getattr_ = next((p for k, p in procs.items() if k[0] == "nfs" and k[2] == "GETATTR"), None)
    if not getattr_ or getattr_["calls"] < 1 or getattr_["errors"] < 1:
        fail(f"GETATTR with garbage arguments not counted as an error: {getattr_}")
    if null["latency_mean_us"] <= 0:
        fail(f"no latency for NULL: {null}")
    if nfs_ls_calls:
        mnt = next((p for k, p in procs.items() if k[0] in ("mount", "mountd") and k[2] == "MNT"), None)
        if not mnt or mnt["calls"] < 1:
            fail(f"MNT from nfs-ls not counted: {mnt}")
    conns = [c for c in doc["connections"] if c["peer"] == local]
    if len(conns) != 1 or conns[0]["transport"] != "tcp" or conns[0]["calls"] < 7:
        fail(f"our connection {local} not listed with its calls: {doc['connections']}")
    if conns[0]["garbage_args"] != 1:
        fail(f"garbage_args for our connection is {conns[0]['garbage_args']}, want 1")
    if doc["exports"] != 1:
        fail(f"exports {doc['exports']}, want 1")
    # issue 24 defect 3: descriptors in use against RLIMIT_NOFILE, and the tables holding them
    res = doc.get("resources", {})
    if not (0 < res.get("fds", 0) < res.get("fd_limit", 0)) or "lock_descriptions_max" not in res:
        fail(f"resources object missing or wrong: {res}")

    table = rnfsctl(d)
    print(table, flush=True)
    if not re.search(r"^descriptors: \d+ in use of \d+ ", table, re.M):
        fail("no descriptors line in the table")
    if not re.search(r"^nfs\s+3\s+NULL\s+\d+\s+0\s", table, re.M):
        fail("no NULL line in the table")
    if not re.search(r"^nfs\s+3\s+GETATTR\s+\d+\s+[1-9]", table, re.M):
        fail("no GETATTR line with errors in the table")
    if not re.search(r"^" + re.escape(local) + r"\s+tcp\s", table, re.M):
        fail(f"no line for connection {local} in the table")
    s.close()
    d.stop()


# ---- NFSv4.1 by hand (RFC 8881 §18.35, §18.36, §18.46, §18.51) ----

def xdr_opaque(b):
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


def compound41(s, xid, ops):
    """COMPOUND (tag "ops", minor version 1) of (opnum, args) pairs -> (status, results bytes)."""
    args = xdr_opaque(b"ops") + struct.pack(">II", 1, len(ops))
    for num, a in ops:
        args += struct.pack(">I", num) + a
    body = struct.pack(">IIIIII", xid, 0, 2, NFS_PROG, 4, 1) + struct.pack(">IIII", 0, 0, 0, 0) + args
    s.sendall(struct.pack(">I", 0x80000000 | len(body)) + body)
    data = b""
    last = False
    while not last:
        (mark,) = struct.unpack(">I", recv_exact(s, 4))
        last = bool(mark & 0x80000000)
        data += recv_exact(s, mark & 0x7FFFFFFF)
    # xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier (flavor, length 0), SUCCESS; COMPOUND4res
    status, taglen = struct.unpack(">II", data[24:32])
    off = 32 + ((taglen + 3) & ~3) + 4  # and the result count
    return status, data[off:]


OWNER = b"rnfsd-ops-test-client"


def nfs4_session(s, xid):
    """EXCHANGE_ID + CREATE_SESSION for OWNER; returns the session id."""
    exid = b"verifier"
    exid += xdr_opaque(OWNER) + struct.pack(">III", 0, 0, 0)  # flags, SP4_NONE, no impl id
    st, res = compound41(s, xid, [(42, exid)])
    if st != 0:
        fail(f"EXCHANGE_ID: status {st}")
    clientid, seq = struct.unpack(">QI", res[8:20])
    chan = struct.pack(">IIIIIII", 0, 65536, 65536, 4096, 16, 8, 0)
    cs = struct.pack(">QII", clientid, seq, 0) + chan + chan + struct.pack(">III", 0x40000000, 1, 0)
    st, res = compound41(s, xid + 1, [(43, cs)])
    if st != 0:
        fail(f"CREATE_SESSION: status {st}")
    return res[8:24]


def nfs4_json(d):
    doc = json.loads(rnfsctl(d, "--json"))
    if "nfs4" not in doc:
        fail(f"no nfs4 object in the stats document: {doc}")
    return doc


def scenario_nfs4(d):
    d.write_conf()  # no [nfsv4] section: NFSv4 is served by default
    d.start()
    d.wait_for("READY", "1")
    doc = nfs4_json(d)
    if doc["nfs4"]["grace_left_s"] != 0 or doc["nfs4"]["recorded_clients"] != 0:
        fail(f"a first start has no previous clients, so no grace: {doc['nfs4']}")
    s = socket.create_connection(("127.0.0.1", d.port))
    nfs4_session(s, 100)
    doc = nfs4_json(d)
    n = doc["nfs4"]
    if n["clients"] != 1 or n["sessions"] != 1 or n["recorded_clients"] != 1:
        fail(f"client, session, record not counted: {n}")
    ops = {o["procedure"]: o for o in doc["nfs4_operations"]}
    if ops.get("EXCHANGE_ID", {}).get("calls") != 1 or ops.get("CREATE_SESSION", {}).get("calls") != 1:
        fail(f"per-operation counters: {doc['nfs4_operations']}")
    table = rnfsctl(d)
    print(table, flush=True)
    if "nfsv4: 1 clients, 1 sessions" not in table or not re.search(r"^nfs\s+4\s+CREATE_SESSION\s+1\s+0\s", table, re.M):
        fail("no NFSv4 lines in the table")
    s.close()
    d.stop()
    with open(os.path.join(d.dir, "state", "nfs4-clients"), "rb") as f:
        rec = f.read()
    if not rec.startswith(b"RN4CLI01") or OWNER not in rec:
        fail(f"client not recorded: {rec!r}")

    # Restart: the previous boot's client may reclaim; RECLAIM_COMPLETE ends the grace period early.
    d.write_conf("[nfsv4]\ngrace-time = 60\n")
    d.start()
    d.wait_for("READY", "1")
    n = nfs4_json(d)["nfs4"]
    if not 50 < n["grace_left_s"] <= 60 or n["recorded_clients"] != 1:
        fail(f"no grace period for the recorded client: {n}")
    if "grace period of 60 s for 1 client(s)" not in d.log_text():
        fail("grace period not logged")
    s = socket.create_connection(("127.0.0.1", d.port))
    sid = nfs4_session(s, 200)
    seq = sid + struct.pack(">IIII", 1, 0, 0, 0)  # sequenceid 1, slot 0, highest 0, no cache
    st, _ = compound41(s, 300, [(53, seq), (58, struct.pack(">I", 0))])
    if st != 0:
        fail(f"SEQUENCE + RECLAIM_COMPLETE: status {st}")
    n = nfs4_json(d)["nfs4"]
    if n["grace_left_s"] != 0:
        fail(f"RECLAIM_COMPLETE of the only previous client did not end the grace period: {n}")
    if "every client of the previous boot sent RECLAIM_COMPLETE" not in d.log_text():
        fail("the early end is not logged")
    s.close()
    d.stop()


def main():
    d = Daemon()
    try:
        {"notify": scenario_notify, "reload": scenario_reload, "stats": scenario_stats,
         "nfs4": scenario_nfs4}[SCENARIO](d)
    finally:
        if d.proc is not None:
            print("---- rnfsd log ----\n" + d.log_text(), flush=True)
        d.cleanup()
    print(f"{SCENARIO}: ok")


if __name__ == "__main__":
    main()
