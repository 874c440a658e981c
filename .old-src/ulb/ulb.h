/*
 * ulb.h - the NFS Upper-Layer Binding for RPC-over-RDMA (RFC 8267, from
 * draft-ietf-nfsv4-rfc5667bis) as data: which argument of which procedure may
 * arrive in a Read chunk, which result may leave in a Write chunk, and how
 * many chunks the server honours.
 *
 * Tables and pure functions; no state.
 *
 * Who uses it:
 *  - the RDMA transport, on receipt: ulb_lookup() says how many Read chunks
 *    to pull (the others are ignored, RFC 8267 §3) and how many Write chunks
 *    replies may fill, paired in order with the DDP items the NFS layer
 *    records with rpc_enc_ddp() (RFC 8267 §3, §4.3);
 *  - NFS procedure code: ulb_nfs4_op_arg()/ulb_nfs4_op_res() say which
 *    NFSv4 COMPOUND operations take rpc_dec_ddp()/rpc_enc_ddp(), and
 *    ulb_read_chunk_len_ok() checks a Read chunk against the XDR length it
 *    stands for (RFC 8166 §3.4.5 roundup).
 * Programs and versions not listed (MOUNT, NLM, NFSACL, NFSv4 callbacks,
 * RFC 8267 §4.4) have no DDP-eligible items: all their chunks are ignored.
 */
#ifndef RNFSD_ULB_H
#define RNFSD_ULB_H

#include <stdbool.h>
#include <stdint.h>

#define ULB_NFS_PROGRAM 100003u

/* The XDR item a chunk stands for. */
enum ulb_item {
	ULB_NONE = 0,
	ULB_WRITE_DATA,     /* WRITE opaque data (v2, v3, v4 WRITE) */
	ULB_SYMLINK_PATH,   /* SYMLINK path (v2, v3), v4 CREATE(NF4LNK) linkdata */
	ULB_READ_DATA,      /* READ opaque data (v2, v3, v4 READ) */
	ULB_READLINK_PATH,  /* READLINK path (v2, v3, v4 READLINK) */
	ULB_READ_PLUS_DATA, /* v4.2 READ_PLUS NFS4_CONTENT_DATA */
};

struct ulb_rule {
	uint8_t read_chunks;  /* data Read chunks (non-zero position) the server uses */
	uint8_t write_chunks; /* Write chunks the server fills, in order */
	uint8_t arg_item;     /* enum ulb_item (v2/v3); ULB_NONE for COMPOUND */
	uint8_t res_item;     /* enum ulb_item (v2/v3); ULB_NONE for COMPOUND */
	bool per_op;          /* NFSv4 COMPOUND: items decided per operation */
};

/*
 * The rule for one call. Unknown program/version/procedure: all zero
 * (ignore every data Read chunk and every Write chunk). Position-zero Read
 * chunks (Long Calls) and the Reply chunk are not DDP and are always used.
 */
void ulb_lookup(uint32_t prog, uint32_t vers, uint32_t proc, struct ulb_rule *out);

/* NFSv4 operation numbers that matter here (RFC 7530 §16, RFC 7862 §15). */
enum {
	ULB_NFS4_OP_CREATE = 6,
	ULB_NFS4_OP_READ = 25,
	ULB_NFS4_OP_READLINK = 27,
	ULB_NFS4_OP_WRITE = 38,
	ULB_NFS4_OP_READ_PLUS = 68,
};
#define ULB_NF4LNK 5 /* nfs_ftype4 */

/* RFC 8267 §4.1: the argument of operation op that may come in a Read chunk
 * (createtype: CREATE's objtype, ignored for other ops). */
enum ulb_item ulb_nfs4_op_arg(uint32_t op, uint32_t createtype);
/* RFC 8267 §4.1: the result of op that may go in a Write chunk. */
enum ulb_item ulb_nfs4_op_res(uint32_t op);

/*
 * Does a Read chunk of chunk_len bytes carry an opaque item whose XDR length
 * word says xdr_len? RFC 8166 §3.4.5: the requester may or may not include
 * the XDR roundup in the chunk, so chunk_len is xdr_len or xdr_len rounded up
 * to 4. Anything else is a mismatch between chunk and payload stream:
 * RFC 8267 §3 lets the server answer GARBAGE_ARGS (what rpc_dec_ddp() gives).
 */
bool ulb_read_chunk_len_ok(uint32_t chunk_len, uint32_t xdr_len);

#endif
