#!/usr/bin/env python3
# gen_nfs4_corpus.py - writes the seed corpus for fuzz_nfs4_compound: one
# COMPOUND4args per operation decoder and per engine rule, each preceded by
# the target's control byte (reply limit, highest minor version).
# Run from fuzz/: python3 gen_nfs4_corpus.py
import os
import struct

def u32(*v):
    return b''.join(struct.pack('>I', x & 0xffffffff) for x in v)

def u64(v):
    return struct.pack('>Q', v)

def opaque(b):
    return u32(len(b)) + b + b'\0' * ((4 - len(b) % 4) % 4)

def compound(minor, ops, tag=b'seed', numops=None, ctl=0x10):
    body = b''.join(ops)
    return bytes([ctl]) + opaque(tag) + u32(minor, len(ops) if numops is None else numops) + body

OP = dict(CREATE_SESSION=43, DESTROY_SESSION=44, DESTROY_CLIENTID=57, RECLAIM_COMPLETE=58, ACCESS=3, GETATTR=9, GETFH=10, LOOKUP=15, LOOKUPP=16, PUTFH=22, PUTROOTFH=24,
          READDIR=26, READLINK=27, RESTOREFH=31, SAVEFH=32, SECINFO=33, EXCHANGE_ID=42,
          SECINFO_NO_NAME=52, SEQUENCE=53, SETCLIENTID=35, SETCLIENTID_CONFIRM=36, RENEW=30, OPEN=18,
          OPEN_CONFIRM=20, OPEN_DOWNGRADE=21, CLOSE=4, READ=25, WRITE=38, COMMIT=5, TEST_STATEID=55,
          FREE_STATEID=45, LOCK=12, LOCKT=13, LOCKU=14, RELEASE_LOCKOWNER=39, CREATE=6, LINK=11, NVERIFY=17,
          OPENATTR=19, PUTPUBFH=23, REMOVE=28, RENAME=29, SETATTR=34, VERIFY=37,
          GETDEVICEINFO=47, LAYOUTCOMMIT=49, LAYOUTGET=50, LAYOUTRETURN=51, LAYOUTERROR=64, LAYOUTSTATS=65)

def op(name, args=b''):
    return u32(OP[name]) + args

bitmap = u32(2, 0x0010011a, 0x00b0a23a)
seeds = {
    'empty': compound(0, []),
    'minor_mismatch': compound(7, [op('GETFH')]),
    'illegal': compound(0, [u32(2)]),
    'illegal_max': compound(2, [u32(0xffffffff)]),
    'putfh_bad': compound(0, [op('PUTFH', opaque(b'\x02\x0c\0\0' + b'A' * 28)), op('GETFH')]),
    'putfh_toolong': compound(0, [op('PUTFH', opaque(b'B' * 129))]),
    'savefh_restorefh': compound(0, [op('RESTOREFH'), op('SAVEFH')]),
    'lookup': compound(0, [op('LOOKUP', opaque(b'name')), op('SECINFO', opaque(b'x' * 300))]),
    'getattr': compound(0, [op('GETATTR', bitmap), op('GETATTR', u32(9) + u32(0) * 9)]),
    'access': compound(0, [op('ACCESS', u32(0x3f)), op('ACCESS')]),
    'readdir': compound(0, [op('READDIR', u64(0) + b'verifier' + u32(4096, 32768) + bitmap)]),
    'secinfo_nn': compound(1, [op('SECINFO_NO_NAME', u32(0)), op('SECINFO_NO_NAME', u32(2))]),
    'v41_not_in_session': compound(1, [op('ACCESS', u32(1))]),
    'v41_sequence_pos': compound(1, [op('SEQUENCE'), op('SEQUENCE')]),
    'v41_v40_only': compound(1, [op('EXCHANGE_ID'), op('SETCLIENTID')]),
    'short_array': compound(0, [op('ACCESS', u32(1))], numops=5),
    'too_many': compound(0, [], numops=100000),
    'reply_limit': compound(0, [op('GETATTR', bitmap)] * 20, ctl=0x11),
    'big_tag': compound(0, [], tag=b'T' * 1025),
    'pseudo_root': compound(0, [op('PUTROOTFH'), op('GETFH'), op('GETATTR', bitmap), op('ACCESS', u32(0x3f)),
                                op('READDIR', u64(0) + b'\0' * 8 + u32(512, 512) + bitmap),
                                op('SAVEFH'), op('LOOKUPP'), op('RESTOREFH'), op('SECINFO', opaque(b'x')),
                                op('LOOKUP', opaque(b'srv')), op('READLINK')]),
    'exchange_id': compound(1, [op('EXCHANGE_ID', b'verifier' + opaque(b'fuzz-client') + u32(0, 0, 0))]),
    'exchange_id_mach_cred': compound(1, [op('EXCHANGE_ID', b'verifier' + opaque(b'fuzz-client') + u32(0, 1)
                                             + bitmap + bitmap + u32(1) + opaque(b'dom') + opaque(b'name')
                                             + u64(0) + u32(0))]),
    'create_session': compound(1, [op('CREATE_SESSION', u64(0x100000001) + u32(1, 3)
                                      + u32(0, 1 << 20, 1 << 20, 4096, 16, 8, 0) * 2 + u32(0x40000000, 2, 0, 1)
                                      + u32(7) + opaque(b'host') + u32(0, 0, 2, 1, 2))]),
    'destroy': compound(1, [op('DESTROY_SESSION', b'S' * 16)]) + b'',
    'destroy_clientid': compound(1, [op('DESTROY_CLIENTID', u64(5))]),
    'reclaim_complete': compound(1, [op('SEQUENCE', b's' * 16 + u32(1, 0, 0, 1)), op('RECLAIM_COMPLETE', u32(0))]),
    'pseudo_root_v41': compound(1, [op('SEQUENCE'), op('PUTROOTFH'), op('SECINFO_NO_NAME', u32(1)),
                                    op('PUTROOTFH'), op('READDIR', u64(5) + b'\0' * 8 + u32(8, 8) + bitmap),
                                    op('GETFH')]),
}
# The state and I/O operations (nfs4_xdr_state.c): every createhow4 and open_claim4 arm.
sid = u32(1) + b'O' * 12
owner = u64(0x100000001) + opaque(b'open-owner')
mode_attrs = u32(2, 0, 1 << 1) + opaque(u32(0o644))
seeds['setclientid'] = compound(0, [op('SETCLIENTID', b'verifier' + opaque(b'fuzz-client') + u32(0x40000000)
                                       + opaque(b'tcp') + opaque(b'127.0.0.1.3.232') + u32(1)),
                                    op('SETCLIENTID_CONFIRM', u64(0x100000001) + b'confirm!'),
                                    op('RENEW', u64(0x100000001))])
seeds['open_nocreate'] = compound(0, [op('PUTROOTFH'), op('OPEN', u32(1, 3, 0) + owner + u32(0, 0) + opaque(b'f'))])
seeds['open_create'] = compound(0, [op('PUTROOTFH'),
                                    op('OPEN', u32(1, 3, 1) + owner + u32(1, 0) + mode_attrs + u32(0) + opaque(b'a')),
                                    op('OPEN', u32(2, 1, 0) + owner + u32(1, 1) + mode_attrs + u32(0) + opaque(b'b')),
                                    op('OPEN', u32(3, 2, 0) + owner + u32(1, 2) + b'createvf' + u32(0) + opaque(b'c'))])
seeds['open_v41_claims'] = compound(1, [op('SEQUENCE'), op('PUTROOTFH'),
                                        op('OPEN', u32(0, 0x0403, 0) + owner + u32(1, 3) + b'createvf' + mode_attrs
                                           + u32(4)),
                                        op('OPEN', u32(0, 1, 0) + owner + u32(0, 1, 0)),
                                        op('OPEN', u32(0, 1, 0) + owner + u32(0, 2) + sid + opaque(b'd')),
                                        op('OPEN', u32(0, 1, 0) + owner + u32(0, 3) + opaque(b'd')),
                                        op('OPEN', u32(0, 1, 0) + owner + u32(0, 5) + sid),
                                        op('OPEN', u32(0, 1, 0) + owner + u32(0, 6))])
seeds['open_bad_arms'] = compound(0, [op('PUTROOTFH'), op('OPEN', u32(1, 3, 0) + owner + u32(1, 9))])
seeds['open_state_ops'] = compound(0, [op('PUTROOTFH'), op('OPEN_CONFIRM', sid + u32(2)),
                                       op('OPEN_DOWNGRADE', sid + u32(3, 1, 0)), op('CLOSE', u32(4) + sid)])
seeds['io'] = compound(0, [op('PUTROOTFH'), op('READ', sid + u64(0) + u32(4096)),
                           op('WRITE', u32(0) + b'\0' * 12 + u64(0) + u32(2) + opaque(b'data')),
                           op('COMMIT', u64(0) + u32(0))])
seeds['write_toolong'] = compound(0, [op('PUTROOTFH'), op('WRITE', sid + u64(0) + u32(0, 0x7fffffff))])
seeds['test_free_stateid'] = compound(1, [op('SEQUENCE'), op('TEST_STATEID', u32(2) + sid + u32(1) + b'\0' * 12),
                                          op('FREE_STATEID', sid), op('TEST_STATEID', u32(1000))])
seeds['locks'] = compound(0, [op('PUTROOTFH'),
                              op('LOCK', u32(2, 0) + u64(0) + u64(100) + u32(1, 3) + sid + u32(0) + owner),
                              op('LOCK', u32(1, 0) + u64(5) + u64(0xffffffffffffffff) + u32(0) + sid + u32(1)),
                              op('LOCKT', u32(4) + u64(0) + u64(1) + owner),
                              op('LOCKU', u32(2, 2) + sid + u64(0) + u64(100)),
                              op('RELEASE_LOCKOWNER', owner)])
seeds['lock_bad_type'] = compound(1, [op('SEQUENCE'), op('PUTROOTFH'), op('LOCKT', u32(9) + u64(0) + u64(1) + owner),
                                      op('LOCK', u32(1, 1) + u64(0) + u64(0) + u32(2))])
# The fattr4 a client sets, alone after the control byte (fuzz_nfs4_compound
# also decodes its input with nfs4_sattr_dec): every settable attribute; a
# read-only one; an owner name; a bad settime4.
sattr_vals = (u64(4096) + u32(0o644) + opaque(b'1000') + opaque(b'root@localdomain')
              + u32(1) + u64(1700000000) + u32(5) + u32(0))
seeds['sattr_all'] = b'\x10' + u32(2, 1 << 4, (1 << 1) | (1 << 4) | (1 << 5) | (1 << 16) | (1 << 22)) + opaque(sattr_vals)
seeds['sattr_readonly'] = b'\x10' + u32(1, 1 << 3) + opaque(u64(1))
seeds['sattr_badtime'] = b'\x10' + u32(2, 0, 1 << 16) + opaque(u32(7))
seeds['sattr_owner_name'] = b'\x10' + u32(2, 0, 1 << 4) + opaque(opaque(b'nobody@localdomain'))
# The namespace-changing operations (nfs4_proc_mod.c) on the pseudo root
# (ROFS there), with their argument shapes: every createtype4 arm,
# createattrs, stateid + fattr4, VERIFY's raw fattr4.
mode_attr = u32(2, 0, 1 << 1) + opaque(u32(0o755))
seeds['create_types'] = compound(0, [op('PUTROOTFH'), op('CREATE', u32(2) + opaque(b'd') + mode_attr),
                                     op('CREATE', u32(5) + opaque(b'target') + opaque(b'l') + mode_attr),
                                     op('CREATE', u32(4, 1, 3) + opaque(b'c') + mode_attr),
                                     op('CREATE', u32(7) + opaque(b'f') + u32(0) + opaque(b''))])
seeds['create_badattr'] = compound(0, [op('PUTPUBFH'), op('CREATE', u32(2) + opaque(b'd') + u32(1, 1 << 12) + opaque(b''))])
seeds['setattr'] = compound(0, [op('PUTROOTFH'), op('SETATTR', u32(0) + b'\0' * 12 + u32(2, 1 << 4, 1 << 1)
                                                   + opaque(u64(5) + u32(0o600)))])
seeds['setattr_short'] = compound(0, [op('PUTROOTFH'), op('SETATTR', u32(0) + b'\0' * 12 + u32(1, 1 << 4) + opaque(u32(1)))])
seeds['verify'] = compound(0, [op('PUTROOTFH'), op('VERIFY', u32(1, 1 << 1) + opaque(u32(2))),
                               op('NVERIFY', u32(1, 1 << 1) + opaque(u32(2))), op('OPENATTR', u32(0))])
seeds['rename_link_remove'] = compound(0, [op('PUTROOTFH'), op('SAVEFH'), op('RENAME', opaque(b'a') + opaque(b'b')),
                                           op('LINK', opaque(b'c')), op('REMOVE', opaque(b'd'))])
# SETATTR failing as the only result still carries attrsset (found by libFuzzer).
seeds['setattr_error_body'] = compound(0, [op('SETATTR', u32(0x20000) + u32(0x40, 0, 0) + u32(0))])
# NFSv4.2 (RFC 7862) and xattrs (RFC 8276): one seed per decoder (each op fails on the pseudo root,
# which stops the COMPOUND), and hostile arguments.
OP.update(ALLOCATE=59, COPY=60, COPY_NOTIFY=61, DEALLOCATE=62, OFFLOAD_CANCEL=66, OFFLOAD_STATUS=67,
          READ_PLUS=68, SEEK=69, CLONE=71, GETXATTR=72, SETXATTR=73, LISTXATTRS=74, REMOVEXATTR=75)
def v42(*ops):
    return compound(2, [op('SEQUENCE'), op('PUTROOTFH')] + list(ops))
two = sid + sid + u64(0) + u64(4096) + u64(8192)
netlocs = u32(3) + u32(1) + opaque(b'srv') + u32(2) + opaque(b'nfs://srv/') + u32(3) + opaque(b'tcp') + opaque(b'10.0.0.1.8.1')
seeds['v42_seek'] = v42(op('SEEK', sid + u64(0) + u32(1)))
seeds['v42_seek_union'] = v42(op('SEEK', sid + u64(0) + u32(9)))
seeds['v42_allocate'] = v42(op('ALLOCATE', sid + u64(0) + u64(1 << 20)))
seeds['v42_deallocate'] = v42(op('DEALLOCATE', sid + u64(1 << 62) + u64(1 << 63)))
seeds['v42_read_plus'] = v42(op('READ_PLUS', sid + u64(0) + u32(65536)))
seeds['v42_copy'] = v42(op('SAVEFH'), op('COPY', two + u32(1, 1, 0)))
seeds['v42_copy_async'] = v42(op('SAVEFH'), op('COPY', two + u32(0, 0, 0)))
seeds['v42_copy_inter'] = v42(op('SAVEFH'), op('COPY', two + u32(0, 0) + netlocs))
seeds['v42_copy_bad_netloc'] = v42(op('COPY', two + u32(1, 1, 1, 4) + opaque(b'x')))
seeds['v42_copy_too_many'] = v42(op('COPY', two + u32(1, 1, 17) + (u32(1) + opaque(b's')) * 17))
seeds['v42_copy_notify'] = v42(op('COPY_NOTIFY', sid + u32(1, 1) + opaque(b'srv')))
seeds['v42_clone'] = v42(op('SAVEFH'), op('CLONE', two))
seeds['v42_offload'] = v42(op('OFFLOAD_STATUS', sid))
seeds['v42_offload_cancel'] = v42(op('OFFLOAD_CANCEL', sid))
seeds['v42_getxattr'] = v42(op('GETXATTR', opaque(b'color')))
seeds['v42_setxattr'] = v42(op('SETXATTR', u32(1) + opaque(b'color') + opaque(b'blue')))
seeds['v42_setxattr_bad_option'] = v42(op('SETXATTR', u32(3) + opaque(b'k') + opaque(b'v')))
seeds['v42_setxattr_huge'] = v42(op('SETXATTR', u32(0) + opaque(b'k') + u32(0xffffffff)))
seeds['v42_listxattrs'] = v42(op('LISTXATTRS', u64(0) + u32(4096)))
seeds['v42_removexattr'] = v42(op('REMOVEXATTR', opaque(b'color')))
seeds['v42_no_fh'] = compound(2, [op('SEQUENCE'), op('SEEK', sid + u64(0) + u32(0))])
seeds['v42_getattr'] = v42(op('GETATTR', u32(3, 1, 0, (1 << 13) | (1 << 15) | (1 << 18))),
                           op('ACCESS', u32(0x1ff)))
# pNFS (nfs4_layout_xdr.c through the engine): without data servers NOTSUPP, else the operations' checks.
devid = b'rnfd' + b'\0' * 8 + u32(1)
seeds['pnfs_getdeviceinfo'] = compound(1, [op('SEQUENCE'), op('GETDEVICEINFO', devid + u32(4, 4096, 1, 6))])
seeds['pnfs_layoutget'] = v42(op('LAYOUTGET', u32(0, 4, 2) + u64(0) + u64(2**64 - 1) + u64(0) + sid + u32(4096)))
seeds['pnfs_layoutreturn'] = v42(op('LAYOUTRETURN', u32(0, 4, 3, 1) + u64(0) + u64(2**64 - 1) + sid +
                                    opaque(u32(1) + u64(0) + u64(1) + sid + u32(1) + devid + u32(6, 38) + u32(0))),
                                 op('LAYOUTRETURN', u32(0, 4, 3, 3)))
seeds['pnfs_layoutcommit'] = v42(op('LAYOUTCOMMIT', u64(0) + u64(1) + u32(0) + sid + u32(1) + u64(0) + u32(0, 4)
                                    + opaque(b'')))
seeds['pnfs_layouterror_stats'] = v42(op('LAYOUTERROR', u64(0) + u64(1) + sid + u32(1) + devid + u32(6, 25)),
                                      op('LAYOUTSTATS', u64(0) + u64(1) + sid + u64(1) * 4 + devid + u32(4)
                                         + opaque(b'')))
os.makedirs('corpus/nfs4_compound', exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join('corpus/nfs4_compound', name), 'wb') as f:
        f.write(data)
