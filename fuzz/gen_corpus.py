#!/usr/bin/env python3
# gen_corpus.py - writes the seed corpora for fuzz_tcp_record, fuzz_rpc_call
# and fuzz_nfs_args (the exports and rnfsd.conf seeds are text files
# committed as they are). Run from fuzz/: python3 gen_corpus.py
# Seeds are small valid (and a few nearly valid) inputs; what libFuzzer
# found worth keeping is merged in by hand with -merge=1 (README.md).
import os
import struct

def u32(*v):
    return b''.join(struct.pack('>I', x & 0xffffffff) for x in v)

def opaque(b):
    return u32(len(b)) + b + b'\0' * (-len(b) % 4)

def write(d, seeds):
    os.makedirs(d, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(d, name), 'wb') as f:
            f.write(data)

# --- tcp_record: max_record (2 bytes), piece seed (1 byte), stream ---
def frag(last, body):
    return u32((0x80000000 if last else 0) | len(body)) + body

write('corpus/tcp_record', {
    'one_record': b'\x01\x00\x07' + frag(1, b'hello world'),
    'two_fragments': b'\x01\x00\x21' + frag(0, b'abc') + frag(1, b'defgh'),
    'empty_fragments': b'\x00\x10\x00' + frag(0, b'') + frag(1, b'') + frag(1, b'x'),
    'too_big': b'\x00\x08\x05' + frag(0, b'12345') + frag(1, b'67890'),
    'huge_header': b'\x10\x00\x03' + b'\xff\xff\xff\xff' + b'zz',
    'two_records_partial': b'\x04\x00\xaa' + frag(1, bytes(range(100))) + frag(0, b'q' * 50)
        + frag(1, b'r' * 10) + b'\x80\x00',
    'max_zero': b'\x00\x00\x01' + frag(1, b'') + frag(1, b'a'),
    'exact_max': b'\x00\x0a\x42' + frag(0, b'01234') + frag(1, b'56789') + frag(1, b'0' * 10),
})

# --- rpc_call: an RPC call message (RFC 5531 §9) ---
def authsys(stamp, name, uid, gid, gids):
    return u32(stamp) + opaque(name) + u32(uid, gid, len(gids), *gids)

def call(xid, prog, vers, proc, cred=(0, b''), verf=(0, b''), body=b'', rpcvers=2):
    return (u32(xid, 0, rpcvers, prog, vers, proc, cred[0]) + opaque(cred[1])
            + u32(verf[0]) + opaque(verf[1]) + body)

X = 0x12345678
SYS = (1, authsys(0x5f5e100, b'client.example', 1000, 1000, [1000, 27, 100]))
write('corpus/rpc_call', {
    'null_none': call(X, 100003, 3, 0),
    'getattr_sys': call(X, 100003, 3, 1, SYS, body=opaque(b'\x01' * 8)),
    'sys_16_gids': call(X, 100005, 3, 1, (1, authsys(1, b'h', 0, 0, list(range(16))))),
    'sys_17_gids': call(X, 100005, 3, 1, (1, authsys(1, b'h', 0, 0, list(range(17))))),
    'sys_name_255': call(X, 100003, 3, 4, (1, authsys(7, b'n' * 255, 5, 6, [7]))),
    'sys_trailing': call(X, 100003, 3, 4, (1, authsys(7, b'abc', 5, 6, []) + u32(0))),
    'sys_short': call(X, 100003, 3, 4, (1, u32(1) + u32(3) + b'ab')),
    'gss_cred': call(X, 100003, 3, 0, (6, u32(1, 0, 0) + opaque(b'ctx'))),
    'sys_verf': call(X, 100003, 3, 0, SYS, (1, b'\0' * 8)),
    'cred_400': call(X, 100003, 3, 0, (0, b'\0' * 400), (0, b'\0' * 400)),
    'cred_401': call(X, 100003, 3, 0, (0, b'\0' * 401)),
    'rpcvers_3': call(X, 100003, 3, 0, rpcvers=3),
    'reply': u32(X, 1, 0, 0, 0, 0),
    # RFC 9289 §4.1: the AUTH_TLS probe (flavor 7, empty body, AUTH_NONE verifier) and near misses
    'tls_probe': call(X, 100003, 4, 0, (7, b'')),
    'tls_probe_body': call(X, 100003, 3, 0, (7, b'STARTTLS')),
    'tls_probe_verf': call(X, 100003, 3, 0, (7, b''), (1, b'')),
    'tls_getattr': call(X, 100003, 3, 1, (7, b''), body=opaque(b'\x01' * 8)),
    'truncated': call(X, 100003, 3, 0)[:22],
})

# --- nfs_args: program (bit 0: 0 NFS, 1 MOUNT; bit 1: the harness makes the
# handle's MAC valid), procedure, Read chunk position in
# words + 1 (0: none), its length / 4, then the arguments (RFC 1813 §3.3) ---
def nfs(proc, body, chunk_pos=0, chunk_words=0, remac=False):
    return bytes([2 if remac else 0, proc, chunk_pos, chunk_words]) + body

def mnt(proc, body):
    return bytes([1, proc, 0, 0]) + body

FH = opaque(bytes(range(32)))
def dirop(name):
    return FH + opaque(name)
def sattr(mode=None, uid=None, gid=None, size=None, atime=0, mtime=0):
    b = b''
    for v in (mode, uid, gid):
        b += u32(0) if v is None else u32(1, v)
    b += u32(0) if size is None else u32(1) + struct.pack('>Q', size)
    for how in (atime, mtime):
        b += u32(how) + (u32(1700000000, 999999999) if how == 2 else b'')
    return b
Q = lambda v: struct.pack('>Q', v)

write('corpus/nfs_args', {
    'getattr': nfs(1, FH),
    'getattr_fh65': nfs(1, opaque(b'\x01' * 65)),
    # Handle envelopes (nfs/common/fh.c): version 2 and 1, MAC filled in by the harness.
    'getattr_envelope': nfs(1, opaque(bytes([2, 12, 0, 0]) + u32(0x2a) + bytes(range(12)) + b'\0' * 8),
                            remac=True),
    'access_envelope_v1': nfs(4, opaque(bytes([1, 8, 0, 0]) + u32(7) + bytes(range(12)) + b'\0' * 8)
                              + u32(1), remac=True),
    'setattr_all': nfs(2, FH + sattr(0o644, 1, 2, 4096, 1, 2) + u32(1, 5, 6)),
    'setattr_bad_nsec': nfs(2, FH + sattr(atime=2)[:-4] + u32(1000000000, 0) + u32(0)),
    'lookup': nfs(3, dirop(b'file.txt')),
    'access': nfs(4, FH + u32(0x3f)),
    'readlink': nfs(5, FH),
    'read': nfs(6, FH + Q(8192) + u32(65536)),
    'write_inline': nfs(7, FH + Q(0) + u32(5, 2, 5) + b'hello\0\0\0'),
    'write_chunk': nfs(7, FH + Q(0) + u32(8, 0, 8), chunk_pos=(4 + len(FH) + 20) // 4 + 1, chunk_words=2),
    'write_bad_stable': nfs(7, FH + Q(0) + u32(1, 3, 1) + b'x\0\0\0'),
    'create_unchecked': nfs(8, dirop(b'new') + u32(0) + sattr(0o600)),
    'create_exclusive': nfs(8, dirop(b'new') + u32(2) + b'verifier'),
    'create_bad_mode': nfs(8, dirop(b'new') + u32(3)),
    'mkdir': nfs(9, dirop(b'dir') + sattr(0o755, mtime=1)),
    'symlink': nfs(10, dirop(b'ln') + sattr() + opaque(b'../target')),
    'symlink_chunk': nfs(10, dirop(b'ln') + sattr() + u32(6), chunk_pos=(len(dirop(b'ln')) + 24) // 4 + 1,
                         chunk_words=2),
    'mknod_chr': nfs(11, dirop(b'dev') + u32(3) + sattr(0o600) + u32(1, 3)),
    'mknod_fifo': nfs(11, dirop(b'fifo') + u32(7) + sattr()),
    'mknod_reg': nfs(11, dirop(b'reg') + u32(1)),
    'remove': nfs(12, dirop(b'old')),
    'rmdir': nfs(13, dirop(b'olddir')),
    'rename': nfs(14, dirop(b'a') + dirop(b'b')),
    'link': nfs(15, FH + dirop(b'hard')),
    'readdir': nfs(16, FH + Q(0) + b'\0' * 8 + u32(4096)),
    'readdirplus': nfs(17, FH + Q(3) + b'cookieve' + u32(1024, 32768)),
    'fsstat': nfs(18, FH),
    'commit': nfs(21, FH + Q(0) + u32(0)),
    'mnt': mnt(1, opaque(b'/export/home')),
    'mnt_nul': mnt(1, opaque(b'/exp\0rt')),
    'mnt_1025': mnt(1, opaque(b'/' * 1025)),
    'umnt': mnt(3, opaque(b'/export')),
})

# --- exports: exports(5) text (example and default are copies of conf/) ---
write('corpus/exports', {
    'one_line': b'/srv/a 192.0.2.0/24(rw,no_root_squash) *.example.com(ro) host1\n',
    'defaults_quoted': b'/srv/b -ro,sec=sys 2001:db8::/32 "*"(rw,all_squash,anonuid=1000,anongid=1000)\n',
    'escape_continuation': b'"/srv/with space"\t*(fsid=root)\n/srv/x\\040y \\\n  10.0.0.1(rw)\n',
    'all_options': b'/e *(rw,ro,root_squash,no_root_squash,all_squash,no_all_squash,anonuid=1,anongid=2,'
        b'secure,insecure,sec=none:sys,fsid=12345678-1234-1234-1234-123456789abc,fs=local,sync,async,'
        b'subtree_check,no_subtree_check,wdelay,no_wdelay,hide,nohide,crossmnt)\n',
    'netmask_wildcards': b'/w 10.0.0.0/255.0.0.0 node[0-9]?.lab *(ro) nxhost\n',
    'dup_path': b'/a *\n/a/ 10.1.2.3\n',
    'dot_dot': b'/a/../b *\n',
    'same_fsid': b'/a *(fsid=1)\n/b *(fsid=1)\n',
    'bad_option': b'# comment\n\n/a *(bogus)\n',
    'no_client': b'/only/path\n/ *(fs=x)\n',
})

# --- config: rnfsd.conf text (example is a copy of conf/rnfsd.conf.example) ---
write('corpus/config', {
    'all_keys': b'[rnfsd]\nthreads = 4\nexports = /etc/e\nstate-dir = "/var/lib/x y"\n'
        b'stats-socket = /run/s.sock\nrpcbind = off\ndrc-entries = 1\nmax-connections = 65536\n'
        b'[tcp]\nlisten = 127.0.0.1:2049, [::1]:2050 optional, 10.0.0.1\nmax-record = 64M\n'
        b'[RDMA]\nEnable = yes\nlisten = [fe80::1]\ncredits = 1024\ninline = 1k\nmax-payload = 16M\n'
        b'send-invalidate = false ; comment\n',
    'duplicate_key': b'[rnfsd]\nthreads = 2\nthreads = 3\n',
    'out_of_range': b'[rdma]\ninline = 65537\n',
    'before_section': b'threads = 1\n',
    'unknown': b'[nfsd]\nfoo = bar\n',
    'listen_nine': b'[tcp]\nlisten = ' + b', '.join(b'10.0.0.%d' % i for i in range(9)) + b'\n',
    'quotes_comments': b'; c\n[rnfsd]\nexports = "/a # b"  # trailing\n[rnfsd]\nrpcbind = 1\n',
})
