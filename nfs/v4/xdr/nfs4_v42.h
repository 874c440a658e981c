/*
 * nfs4_v42.h - the NFSv4.2 operations (RFC 7862, XDR in RFC 7863) and the
 * extended-attribute operations (RFC 8276): their arguments and results,
 * their XDR (nfs4_xdr_v42.c: pure, bounds-checked, false = BADXDR, strings
 * and values are pointers into the call message) and their execute steps:
 *
 *   nfs4_proc_v42.c    SEEK, ALLOCATE, DEALLOCATE, READ_PLUS
 *   nfs4_proc_copy.c   COPY (synchronous, or asynchronous through nfs4_copy_async.c),
 *                      OFFLOAD_STATUS, OFFLOAD_CANCEL, CLONE
 *   nfs4_proc_xattr.c  GETXATTR, SETXATTR, LISTXATTRS, REMOVEXATTR (user namespace)
 *
 * COPY_NOTIFY, IO_ADVISE and WRITE_SAME have no execute step:
 * NFS4ERR_NOTSUPP (nfs4_op_table.c); LAYOUTERROR and LAYOUTSTATS are pNFS's
 * (nfs4_layout_xdr.h, nfs4_proc_layout.c).
 */
#ifndef RNFSD_NFS4_V42_H
#define RNFSD_NFS4_V42_H

#include "nfs/v4/compound/nfs4_compound.h"
#include "nfs/v4/xdr/nfs4_mod.h"
#include "nfs/v4/state/nfs4_stateid.h"

struct nfs4_obj;
struct be_file;

/* data_content4 (RFC 7862 §15.10.1, §15.11.1). */
enum { NFS4_CONTENT_DATA = 0, NFS4_CONTENT_HOLE = 1 };
/* setxattr_option4 (RFC 8276 §8.4.2.1). */
enum { SETXATTR4_EITHER = 0, SETXATTR4_CREATE = 1, SETXATTR4_REPLACE = 2 };

/* Most netloc4 entries a COPY's ca_source_server<> may name (we serve none: NOTSUPP). */
#define NFS4_COPY_SOURCES_MAX 16u
/* Largest xattr value taken or given (XATTR_SIZE_MAX: what Linux file systems keep). */
#define NFS4_XATTR_SIZE_MAX 65536u
/* Largest user xattr name without its "user." prefix (XATTR_NAME_MAX 255 - 5). */
#define NFS4_XATTR_NAME_MAX 250u
/* READ_PLUS: at most a hole, one data segment and a hole (one DDP item per result). */
#define NFS4_READ_PLUS_SEGS 3u

/* ALLOCATE4args, DEALLOCATE4args (RFC 7862 §15.1.1, §15.4.1); SEEK4args (§15.11.1). */
struct nfs4_range_args {
	struct nfs4_stateid sid;
	uint64_t offset, length; /* SEEK: length unused */
	uint32_t what;           /* SEEK: data_content4 */
};
/* COPY4args (§15.2.1) and CLONE4args (§15.13.1): source = SAVED_FH, destination = CURRENT_FH. */
struct nfs4_copy_args {
	struct nfs4_stateid src_sid, dst_sid;
	uint64_t src_offset, dst_offset, count;
	bool consecutive, synchronous; /* COPY */
	uint32_t nsources;             /* COPY: ca_source_server<> entries (0: intra-server) */
};
/* GETXATTR4args, REMOVEXATTR4args, SETXATTR4args (RFC 8276 §8.4.1-§8.4.4). */
struct nfs4_xattr_args {
	uint32_t option;            /* SETXATTR: setxattr_option4 */
	struct nfs4_name name;      /* xattrkey4, inside the message */
	const uint8_t *value;       /* SETXATTR, inside the message */
	uint32_t value_len;
};
/* LISTXATTRS4args (RFC 8276 §8.4.3.1). */
struct nfs4_listxattrs_args {
	uint64_t cookie;
	uint32_t maxcount;
};

struct nfs4_seek_res {
	bool eof;
	uint64_t offset;
};
struct nfs4_read_plus_seg {
	uint32_t type;      /* NFS4_CONTENT_DATA or NFS4_CONTENT_HOLE */
	uint64_t offset;
	uint64_t length;    /* data: bytes at data */
	const uint8_t *data;
};
struct nfs4_read_plus_res {
	bool eof;
	uint32_t nsegs;
	struct nfs4_read_plus_seg segs[NFS4_READ_PLUS_SEGS];
};
struct nfs4_copy_res {
	uint64_t count;
	uint32_t committed; /* stable_how4 */
	bool async;                 /* RFC 7862 §15.2.3: answered at once, CB_OFFLOAD to follow */
	struct nfs4_stateid cb_sid; /* async: wr_callback_id, the copy stateid */
};
/* OFFLOAD_STATUS4resok (RFC 7862 §15.9.2). */
struct nfs4_offload_status_res {
	uint64_t count;   /* osr_count */
	bool complete;    /* osr_complete<1> present */
	uint32_t status;  /* complete: the copy's status */
};
struct nfs4_getxattr_res {
	const uint8_t *value;
	uint32_t len;
};
struct nfs4_listxattrs_res {
	const char *names;  /* NUL-terminated names, one after the other (the backend's list) */
	uint32_t first;     /* index of the first name returned */
	uint32_t count;     /* names returned */
	uint32_t skip;      /* bytes of names before the first returned */
	uint64_t cookie;    /* lxr_cookie */
	bool eof;
};

/* ---- nfs4_xdr_v42.c ---- */
bool nfs4_dec_alloc(struct xdr_dec *d, struct nfs4_range_args *a);
bool nfs4_dec_seek(struct xdr_dec *d, struct nfs4_range_args *a);
bool nfs4_dec_copy(struct xdr_dec *d, struct nfs4_copy_args *a);
bool nfs4_dec_clone(struct xdr_dec *d, struct nfs4_copy_args *a);
bool nfs4_dec_offload(struct xdr_dec *d, struct nfs4_stateid *sid);
bool nfs4_dec_getxattr(struct xdr_dec *d, struct nfs4_xattr_args *a);
bool nfs4_dec_setxattr(struct xdr_dec *d, struct nfs4_xattr_args *a);
bool nfs4_dec_listxattrs(struct xdr_dec *d, struct nfs4_listxattrs_args *a);
void nfs4_seek_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
void nfs4_read_plus_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
void nfs4_copy_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
void nfs4_offload_status_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
void nfs4_getxattr_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
void nfs4_listxattrs_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
/* Bytes one xattrkey4 of n bytes takes in LISTXATTRS4resok. */
static inline uint32_t nfs4_xattrkey_size(uint32_t n)
{
	return 4u + n + XDR_PAD(n);
}

/* ---- nfs4_proc_v42.c ---- */
/* The file of a data operation: nfs4_io_file(), plus the caller's read (access
 * NFS4_SHARE_ACCESS_READ) or write permission for the stateless stateids. *f
 * holds a reference; both go with nfs4_v42_file_put(), whatever the status. */
uint32_t nfs4_v42_file(struct nfs4_ctx *x, const struct nfs_fh *fh, const struct nfs4_stateid *sid, uint32_t access,
		       struct nfs4_obj *ob, struct be_file **f);
void nfs4_v42_file_put(struct nfs4_obj *ob, struct be_file *f);
/* The open file's size now. */
uint32_t nfs4_v42_size(const struct nfs4_obj *ob, struct be_file *f, uint64_t *size);
uint32_t nfs4_seek_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_allocate_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_deallocate_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_read_plus_exec(struct nfs4_ctx *x, void *args, void *res);

/* ---- nfs4_proc_copy.c ---- */
uint32_t nfs4_copy_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_offload_status_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_offload_cancel_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_clone_exec(struct nfs4_ctx *x, void *args, void *res);

/* ---- nfs4_proc_xattr.c ---- */
uint32_t nfs4_getxattr_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_setxattr_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_listxattrs_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_removexattr_exec(struct nfs4_ctx *x, void *args, void *res);

#endif
