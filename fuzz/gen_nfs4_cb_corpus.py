#!/usr/bin/env python3
"""Seeds of fuzz_nfs4_cb (fuzz_nfs4_cb.c): CB_COMPOUND4res and CB_SEQUENCE4res
replies (answered, errors, another operation, too many results), and universal
addresses. Run in fuzz/: writes corpus/nfs4_cb/."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "nfs4_cb")


def u32(v):
    return struct.pack(">I", v)


def opaque(b):
    return u32(len(b)) + b + b"\0" * (-len(b) % 4)


def seq_ok(seqid=1, slot=0, status=0):
    if status:
        return u32(status)
    return u32(0) + b"\xab" * 16 + u32(seqid) + u32(slot) + u32(0) + u32(0)


def compound(status, results, tag=b""):
    body = u32(status) + opaque(tag) + u32(len(results))
    for op, res in results:
        body += u32(op) + res
    return body


SEEDS = {
    "compound_ok": b"\0" + compound(0, [(11, seq_ok())]),
    "compound_ok_tag": b"\0" + compound(0, [(11, seq_ok(7))], b"tagged"),
    "compound_badsession": b"\0" + compound(10052, [(11, seq_ok(status=10052))]),
    "compound_misordered": b"\0" + compound(10063, [(11, seq_ok(status=10063))]),
    "compound_empty": b"\0" + compound(10021, []),
    "compound_illegal": b"\0" + compound(10044, [(10044, u32(10044))]),
    "compound_wrong_slot": b"\0" + compound(0, [(11, seq_ok(1, 3))]),
    "compound_too_many": b"\0" + u32(0) + opaque(b"") + u32(17),
    "compound_two": b"\0" + compound(0, [(11, seq_ok()), (4, u32(0))]),
    "sequence_ok": b"\1" + seq_ok(2),
    "sequence_err": b"\1" + seq_ok(status=10052),
    "uaddr_tcp": b"\2tcp\0127.0.0.1.3.232",
    "uaddr_tcp6": b"\2tcp6\0::1.0.111",
    "uaddr_tcp6_ll": b"\2tcp6\0fe80::5054:ff:fe12:3456.8.1",
    "uaddr_port0": b"\2tcp\0127.0.0.1.0.0",
    "uaddr_udp": b"\2udp\0127.0.0.1.3.232",
    # byte 0 4: fuzz_op_enc; kind 6 CB_NOTIFY, name length, fh length, type (bit 7: replaced)
    "enc_notify_remove": b"\4\6\0\5\x10\0",
    "enc_notify_add_replaced": b"\4\6\0\3\x10\x81",
    "enc_notify_rename_replaced": b"\4\6\0\xff\x80\x82",
    # NOTIFY4_CHANGE_DIR_ATTRS (byte 5's 0x40): a 20-byte fattr4; one over NFS4_CB_DIR_ATTRS_MAX
    "enc_notify_dir_attrs": b"\4\6\0\x14\x10\x40",
    "enc_notify_dir_attrs_over": b"\4\6\2\0\x10\x40",
}

os.makedirs(OUT, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
