#!/usr/bin/env python3
"""gen_nfs4_layout_corpus.py - seeds for fuzz_nfs4_layout (run in fuzz/).

Byte 0 picks the decoder (fuzz_nfs4_layout.c): 0 GETDEVICEINFO4args,
1 LAYOUTGET4args, 2 LAYOUTRETURN4args, 3 LAYOUTCOMMIT4args, 4 LAYOUTERROR4args,
5 LAYOUTSTATS4args, 6 ff_layout4, 7 ff_device_addr4, 8 LAYOUTGET4resok,
9 GETDEVICEINFO4resok, 10 GETDEVICELIST4args, 11 GETDEVICELIST4resok.
XDR as RFC 8881 §18.40-18.44, RFC 7862 §15.6-15.7,
RFC 8435 §4.1, §5.1, §9.
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus', 'nfs4_layout')


def u32(v): return struct.pack('>I', v)
def u64(v): return struct.pack('>Q', v)
def opaque(b): return u32(len(b)) + b + b'\0' * ((4 - len(b) % 4) % 4)
def sid(seq=1): return u32(seq) + bytes(range(1, 13))
def devid(n=1): return bytes(15) + bytes([n])
def time(): return u64(0) + u32(0)
def latency(): return u64(1) + u64(4096) + u64(1) + u64(4096) + u64(0) + time() + time()
def netaddr(netid=b'tcp', uaddr=b'127.0.0.1.8.1'): return opaque(netid) + opaque(uaddr)
def layoutupdate(): return netaddr() + opaque(b'\1' * 36) + latency() + latency() + time() + u32(0)
def deverr(n=1, st=6, op=38): return devid(n) + u32(st) + u32(op)
def ioerr(nerr=1): return u64(0) + u64(4096) + sid() + u32(nerr) + b''.join(deverr(i + 1) for i in range(nerr))
def iostats(): return u64(0) + u64(4096) + sid() + u64(1) + u64(4096) + u64(2) + u64(8192) + devid() + layoutupdate()


def ff_layout(fh=b'\7' * 40):
    ds = devid() + u32(1) + sid(0) + u32(1) + opaque(fh) + opaque(b'0') + opaque(b'0')
    return u64(0) + u32(1) + u32(1) + ds + u32(1) + u32(0)


def ff_devaddr(netid=b'tcp', uaddr=b'127.0.0.1.8.1'):
    return u32(1) + netaddr(netid, uaddr) + u32(1) + u32(3) + u32(0) + u32(1 << 20) + u32(1 << 20) + u32(1)


SEEDS = {
    'gdi': (0, devid() + u32(4) + u32(4096) + u32(1) + u32(6)),
    'gdi_nobitmap': (0, devid() + u32(4) + u32(0) + u32(0)),
    'lget_rw': (1, u32(0) + u32(4) + u32(2) + u64(0) + u64(2**64 - 1) + u64(0) + sid() + u32(4096)),
    'lret_file_body': (2, u32(0) + u32(4) + u32(3) + u32(1) + u64(0) + u64(2**64 - 1) + sid()
                       + opaque(u32(1) + ioerr(2) + u32(1) + iostats())),
    'lret_file_empty': (2, u32(0) + u32(4) + u32(1) + u32(1) + u64(0) + u64(4096) + sid() + opaque(b'')),
    'lret_all': (2, u32(1) + u32(4) + u32(3) + u32(3)),
    'lret_fsid': (2, u32(0) + u32(4) + u32(3) + u32(2)),
    'lcommit': (3, u64(0) + u64(8192) + u32(0) + sid() + u32(1) + u64(8191) + u32(1) + time()
                + u32(4) + opaque(b'')),
    'lcommit_plain': (3, u64(0) + u64(0) + u32(0) + sid() + u32(0) + u32(0) + u32(4) + opaque(b'')),
    'lerror': (4, ioerr(3)),
    'lstats': (5, u64(0) + u64(4096) + sid() + u64(1) + u64(4096) + u64(1) + u64(4096) + devid()
               + u32(4) + opaque(layoutupdate())),
    'ff_layout': (6, ff_layout()),
    'ff_layout_two_mirrors': (6, u64(0) + u32(2) + ff_layout()[12:-8] * 1 + u32(1) + ff_layout()[16:-8]
                              + u32(0) + u32(0)),
    'ff_devaddr': (7, ff_devaddr()),
    'ff_devaddr_rdma6': (7, ff_devaddr(b'rdma6', b'2001:db8::1.78.81')),
    'lget_res': (8, u32(1) + sid(2) + u32(1) + u64(0) + u64(2**64 - 1) + u32(2) + u32(4) + opaque(ff_layout())),
    'gdi_res': (9, u32(4) + opaque(ff_devaddr()) + u32(0)),
    'gdl': (10, u32(4) + u32(8) + u64(1) + b'rnfd\0\0\0\1'),
    'gdl_res': (11, u64(2) + b'rnfd\0\0\0\1' + u32(2) + devid(1) + devid(2) + u32(1)),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (sel, body) in SEEDS.items():
        with open(os.path.join(OUT, name), 'wb') as f:
            f.write(bytes([sel]) + body)


if __name__ == '__main__':
    main()
