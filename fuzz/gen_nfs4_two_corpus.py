#!/usr/bin/env python3
"""gen_nfs4_two_corpus.py - seeds of fuzz_nfs4_two_clients (see its comment for the format):
two clients opening, reading, writing, locking and closing "f", and each using the other's
stateids ('S','I','D',k words) for READ, WRITE, SETATTR, LOCKU, CLOSE, FREE_STATEID,
TEST_STATEID, OPEN_DOWNGRADE, DELEGRETURN, COPY; each for the four pairs of minor
versions."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "nfs4_two_clients")
u32 = lambda v: struct.pack(">I", v)
u64 = lambda v: struct.pack(">Q", v)


def opaque(b):
    return u32(len(b)) + b + b"\0" * (-len(b) % 4)


SID = lambda k: b"SID" + bytes([k])
CLI = lambda k: b"CLI" + bytes([k])
# flags: bit0 client, bit1 PUTFH root, bit2 PUTFH f, bit3 no SEQUENCE
ROOT, FILE, NOSEQ = 2, 4, 8


def rec(client, flags, ops):
    body = u32(len(ops)) + b"".join(ops)
    return bytes([client | flags]) + struct.pack(">H", len(body)) + body


def open_(k, name=b"f", create=False, access=3, seqid=0):
    how = u32(1) + u32(0) + u32(0) + opaque(b"") if create else u32(0)
    return (u32(18) + u32(seqid) + u32(access) + u32(0) + CLI(k) + opaque(b"owner%d" % k) + how +
            u32(0) + opaque(name))


def read(s):
    return u32(25) + SID(s) + u64(0) + u32(64)


def write(s):
    return u32(38) + SID(s) + u64(0) + u32(2) + opaque(b"xx")


def close(s, seqid=1):
    return u32(4) + u32(seqid) + SID(s)


def lock(k, s, seqid=1):
    return (u32(12) + u32(2) + u32(0) + u64(0) + u64(10) + u32(1) + u32(seqid) + SID(s) + u32(0) +
            CLI(k) + opaque(b"lockowner%d" % k))


def locku(s):
    return u32(14) + u32(2) + u32(1) + SID(s) + u64(0) + u64(10)


def truncate(s):
    return u32(34) + SID(s) + u32(1) + u32(1 << 4) + opaque(u64(0))


def test_sid(*ss):
    return u32(55) + u32(len(ss)) + b"".join(SID(s) for s in ss)


SEEDS = {
    # both 4.1: A opens, B uses A's stateid for everything
    "v41_cross_io": (0, [rec(0, ROOT, [open_(0)]), rec(1, FILE, [read(0)]), rec(1, FILE, [write(0)]),
                         rec(1, FILE, [truncate(0)]), rec(1, FILE, [close(0)]), rec(0, FILE, [read(0)])]),
    "v41_cross_lock": (0, [rec(0, ROOT, [open_(0)]), rec(0, FILE, [lock(0, 0)]), rec(1, FILE, [locku(1)]),
                           rec(1, FILE, [u32(45) + SID(1)]), rec(1, 0, [test_sid(0, 1)]),
                           rec(0, FILE, [locku(1), close(0)])]),
    "v41_both_open": (0, [rec(0, ROOT, [open_(0)]), rec(1, ROOT, [open_(1)]), rec(1, FILE, [read(1), close(1)]),
                          rec(0, FILE, [u32(21) + SID(0) + u32(1) + u32(1) + u32(0)]),
                          rec(1, FILE, [u32(8) + SID(0)]), rec(0, FILE, [close(0)])]),
    "v41_create_many": (0, [rec(0, ROOT, [open_(0, b"n%d" % i, True)]) for i in range(6)] +
                        [rec(1, ROOT, [open_(1, b"n%d" % i, True)]) for i in range(6)] +
                        [rec(1, FILE, [close(i)]) for i in range(4)]),
    "v41_destroy": (0, [rec(0, ROOT, [open_(0)]), rec(1, NOSEQ, [u32(57) + CLI(0)]),
                        rec(1, 0, [u32(44) + b"\0" * 16]), rec(0, FILE, [read(0)])]),
    # both 4.0: seqids, OPEN_CONFIRM, RELEASE_LOCKOWNER, RENEW
    "v40_cross": (1, [rec(0, ROOT, [open_(0)]), rec(0, FILE, [u32(20) + SID(0) + u32(1)]),
                      rec(1, FILE, [read(1)]), rec(1, FILE, [close(1, 2)]), rec(0, FILE, [lock(0, 1, 2)]),
                      rec(1, 0, [u32(39) + CLI(0) + opaque(b"lockowner0")]), rec(1, 0, [u32(30) + CLI(0)])]),
    # 4.0 and 4.1 side by side
    "v40_v41": (2, [rec(0, ROOT, [open_(0)]), rec(1, ROOT, [open_(1)]), rec(1, FILE, [read(0), write(0)]),
                    rec(0, FILE, [read(1), close(1)]), rec(1, FILE, [test_sid(0, 1, 2)])]),
    # 4.2: COPY and OFFLOAD_* with the other's stateids
    "v42_copy": (3, [rec(0, ROOT, [open_(0, b"g", True)]), rec(1, ROOT, [open_(1)]),
                     rec(1, FILE, [u32(32), u32(22) + opaque(b""), u32(60) + SID(0) + SID(1) + u64(0) + u64(0) +
                                   u64(0) + u32(1) + u32(1) + u32(0)]),
                     rec(0, FILE, [u32(67) + SID(1)]), rec(1, FILE, [u32(66) + SID(0)])]),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (minors, recs) in SEEDS.items():
        # each seed for every pair of minor versions (byte 0)
        for m in range(4):
            with open(os.path.join(OUT, "%s_m%d" % (name, m)), "wb") as f:
                f.write(bytes([m]) + b"".join(recs))


if __name__ == "__main__":
    main()
