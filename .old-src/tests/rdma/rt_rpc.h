/*
 * rt_rpc.h - the few ONC RPC messages the test requester sends (RFC 5531),
 * with AUTH_NONE or AUTH_SYS, and the NFSv3 / MOUNT v3 / portmapper
 * arguments and results it needs (RFC 1813, RFC 1833). Its own code, not
 * rnfsd's, so the requester checks the server independently.
 *
 * Encoders append to a struct rt_enc. rt_rpc_reply_decode() checks the reply
 * header and leaves a decoder positioned at the procedure's results.
 */
#ifndef RT_RPC_H
#define RT_RPC_H

#include <stdbool.h>
#include <stdint.h>

#include "tests/rdma/rt_xdr.h"

#define RT_NFS_PROG 100003
#define RT_MOUNT_PROG 100005
#define RT_PMAP_PROG 100000

/* RFC 1813 §3.3 procedure numbers used here. */
enum {
	RT_NFS3_NULL = 0,
	RT_NFS3_GETATTR = 1,
	RT_NFS3_LOOKUP = 3,
	RT_NFS3_READ = 6,
	RT_NFS3_WRITE = 7,
	RT_NFS3_READDIRPLUS = 17,
};
enum { RT_NFS3_OK = 0, RT_NFS3_UNSTABLE = 0, RT_NFS3_FILE_SYNC = 2 };
#define RT_NFS3_FHSIZE 64

/* RFC 5531 §9 accept_stat */
enum {
	RT_RPC_SUCCESS = 0,
	RT_RPC_PROG_UNAVAIL = 1,
	RT_RPC_PROG_MISMATCH = 2,
	RT_RPC_PROC_UNAVAIL = 3,
	RT_RPC_GARBAGE_ARGS = 4,
	RT_RPC_SYSTEM_ERR = 5,
};

enum rt_auth { RT_AUTH_NONE = 0, RT_AUTH_SYS = 1 };

struct rt_fh {
	uint32_t len;
	uint8_t data[RT_NFS3_FHSIZE];
};

/* RPC call header (RFC 5531 §9 call_body) with credentials and a null verifier. */
void rt_rpc_call_hdr(struct rt_enc *e, uint32_t xid, uint32_t prog, uint32_t vers,
		     uint32_t proc, enum rt_auth auth);

struct rt_rpc_reply {
	uint32_t xid;
	bool accepted;        /* MSG_ACCEPTED */
	uint32_t stat;        /* accept_stat if accepted, else reject_stat */
	struct rt_dec res;    /* positioned at the results when stat == SUCCESS */
};

/* 0, or -1 with why set when the bytes are not an RPC reply. */
int rt_rpc_reply_decode(const void *buf, size_t len, struct rt_rpc_reply *r, const char **why);

const char *rt_accept_stat_name(uint32_t stat);

/* NFSv3 arguments (RFC 1813 §3.3.x). */
void rt_nfs3_fh(struct rt_enc *e, const struct rt_fh *fh);
void rt_nfs3_lookup_args(struct rt_enc *e, const struct rt_fh *dir, const char *name);
void rt_nfs3_read_args(struct rt_enc *e, const struct rt_fh *fh, uint64_t off, uint32_t count);
/*
 * WRITE3args up to and including the data length word; returns the XDR
 * position (offset from the start of the RPC message) where the data bytes
 * start - the Read chunk position of RFC 8267 §4.2 / RFC 8166 §3.4.5.
 */
size_t rt_nfs3_write_args_hdr(struct rt_enc *e, const struct rt_fh *fh, uint64_t off,
			      uint32_t count, uint32_t stable);
void rt_nfs3_readdirplus_args(struct rt_enc *e, const struct rt_fh *dir, uint32_t dircount,
			      uint32_t maxcount);

/* NFSv3 results; each consumes the result from d and returns the nfsstat3. */
struct rt_fattr {
	uint32_t type, mode;
	uint64_t size, fileid;
};
uint32_t rt_nfs3_getattr_res(struct rt_dec *d, struct rt_fattr *a);
uint32_t rt_nfs3_lookup_res(struct rt_dec *d, struct rt_fh *fh);
/* READ3res up to the data length word; data stays for the caller (inline or chunk). */
uint32_t rt_nfs3_read_res_hdr(struct rt_dec *d, uint32_t *count, bool *eof, uint32_t *data_len);
uint32_t rt_nfs3_write_res(struct rt_dec *d, uint32_t *count, uint32_t *committed);

/* MOUNT v3 MNT (RFC 1813 §5.2.1) and portmapper GETPORT (RFC 1833 §3.2). */
void rt_mnt3_mnt_args(struct rt_enc *e, const char *path);
uint32_t rt_mnt3_mnt_res(struct rt_dec *d, struct rt_fh *fh);
void rt_pmap_getport_args(struct rt_enc *e, uint32_t prog, uint32_t vers, uint32_t prot);

/* The deterministic byte pattern test files hold: byte at file offset off. */
static inline uint8_t rt_pattern_byte(uint64_t off)
{
	return (uint8_t)(off * 7 + (off >> 8) * 13 + (off >> 16));
}

#endif
