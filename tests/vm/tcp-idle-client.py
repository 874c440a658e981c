#!/usr/bin/env python3
# tcp-idle-client.py - N idle TCP connections to an NFS server (rdma-verbs.sh's
# rdma-idle check): one NFSv3 NULL call each (RFC 5531 record marking,
# AUTH_NONE), the reply read, then silence for HOLD seconds. Prints
# "# tcp-idle-client: K of N connections open, NULL answered on each".
#   tcp-idle-client.py HOST PORT N HOLD
import socket
import struct
import sys
import time


def null_call(xid):
    # xid, CALL, RPC 2, NFS 100003 v3 proc 0, AUTH_NONE cred and verifier
    body = struct.pack(">10I", xid, 0, 2, 100003, 3, 0, 0, 0, 0, 0)
    return struct.pack(">I", 0x80000000 | len(body)) + body


def main():
    host, port, n, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    conns = []
    for i in range(n):
        try:
            s = socket.create_connection((host, port), timeout=10)
            s.sendall(null_call(i + 1))
            mark = s.recv(4)
            if len(mark) < 4:
                break
            left = struct.unpack(">I", mark)[0] & 0x7FFFFFFF
            while left > 0:
                got = s.recv(left)
                if not got:
                    break
                left -= len(got)
            conns.append(s)
        except OSError:
            break
    print("# tcp-idle-client: %d of %d connections open, NULL answered on each" % (len(conns), n), flush=True)
    time.sleep(hold)
    for s in conns:
        s.close()


main()
