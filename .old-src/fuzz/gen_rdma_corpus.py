#!/usr/bin/env python3
# gen_rdma_corpus.py - writes the seed corpora for fuzz_rdma_hdr and
# fuzz_rdma_privdata. Run from fuzz/: python3 gen_rdma_corpus.py
import os
import struct

def u32(*v):
    return b''.join(struct.pack('>I', x & 0xffffffff) for x in v)

def seg(h, ln, off):
    return u32(h, ln) + struct.pack('>Q', off)

def rpc_call(xid, prog, vers, proc, body=b''):
    return u32(xid, 0, 2, prog, vers, proc, 1, 24, 0, 0, 0, 0, 0, 0, 0) + body

def hdr(xid, vers, cred, proc, reads=(), writes=(), reply=None, direction=None):
    b = u32(xid, vers, cred, proc)
    if direction is not None:
        b += u32(direction)
    for pos, h, ln, off in reads:
        b += u32(1, pos) + seg(h, ln, off)
    b += u32(0)
    for chunk in writes:
        b += u32(1, len(chunk)) + b''.join(seg(*s) for s in chunk)
    b += u32(0)
    if reply is None:
        b += u32(0)
    else:
        b += u32(1, len(reply)) + b''.join(seg(*s) for s in reply)
    return b

X = 0x0badcafe
fh = u32(8) + b'\x01' * 8
seeds = {
    'v1_getattr': hdr(X, 1, 128, 0) + rpc_call(X, 100003, 3, 1, fh),
    'v1_write_read_chunk': hdr(X, 1, 128, 0, reads=[(80, 0x11, 4096, 0x7f0000001000),
                                                     (80, 0x11, 904, 0x7f0000002000)])
        + rpc_call(X, 100003, 3, 7, fh + u32(0, 0, 5000, 2, 5000)),
    'v1_read_write_chunk': hdr(X, 1, 128, 0, writes=[[(0x22, 65536, 0x7f0000100000),
                                                        (0x23, 65536, 0x7f0000200000)]])
        + rpc_call(X, 100003, 3, 6, fh + u32(0, 0, 131072)),
    'v1_long_call': hdr(X, 1, 128, 1, reads=[(0, 0x33, 3000, 0x1000)], reply=[(0x34, 8192, 0x2000)]),
    'v1_readdir_reply_chunk': hdr(X, 1, 128, 0, reply=[(0x44, 32768, 0x3000), (0x45, 32768, 0x4000)])
        + rpc_call(X, 100003, 3, 16, fh + u32(0, 0, 0, 0, 65536)),
    'v1_compound': hdr(X, 1, 64, 0, reads=[(64, 0x55, 5, 0x5000), (72, 0x56, 100, 0x6000)],
                        writes=[[(0x57, 4096, 0x7000)], [], [(0x58, 0, 0)]])
        + rpc_call(X, 100003, 4, 1, u32(0, 1, 3, 22, 25, 38)),
    'v1_msgp': hdr(X, 1, 1, 2) + u32(0, 0),
    'v1_done': u32(X, 1, 1, 3) + u32(0, 0, 0),
    'v1_error': u32(X, 1, 1, 4, 2) + u32(0, 0),
    'vers3': u32(X, 3, 1, 0) + u32(0, 0, 0),
    'short': u32(X, 1, 1),
    'bad_discriminator': u32(X, 1, 1, 0, 2, 0, 0) + rpc_call(X, 100003, 3, 0),
    'v2_msg': hdr(X, 2, 32, 0, direction=0, writes=[[(0x66, 4096, 0x8000)]])
        + rpc_call(X, 100003, 3, 6, fh + u32(0, 0, 4096)),
    'v2_nomsg': hdr(X, 2, 32, 1, direction=0, reads=[(0, 0x67, 2048, 0x9000)]),
    'v2_optional': u32(X, 2, 32, 5, 0, 0x1234, 6) + b'abcdef\0\0',
    'v2_error': u32(X, 2, 32, 4, 1, 1, 2),
    'v2_reply_dir': hdr(X, 2, 32, 0, direction=1) + u32(X, 1, 0, 0, 0, 0),
}

os.makedirs('corpus/rdma_hdr', exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join('corpus/rdma_hdr', name), 'wb') as f:
        f.write(data)

pd = u32(0xf6ab0e18) + bytes([1, 1, 3, 3])
pseeds = {
    'linux_client': pd,
    'ib_padded_56': pd + b'\0' * 48,
    'unaligned': b'\x01\x02\x03' + pd + b'\0' * 5,
    'version2_then_v1': u32(0xf6ab0e18) + bytes([2, 1, 3, 3]) + b'\0' + pd,
    'truncated': pd[:7],
    'no_id': b'\x5a' * 56,
    'max_sizes': u32(0xf6ab0e18) + bytes([1, 0xff, 0xff, 0xff]),
}
os.makedirs('corpus/rdma_privdata', exist_ok=True)
for name, data in pseeds.items():
    with open(os.path.join('corpus/rdma_privdata', name), 'wb') as f:
        f.write(data)
