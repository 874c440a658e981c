/*
 * ulb.h - the NFS Upper-Layer Binding for RPC-over-RDMA (RFC 8267, from
 * draft-ietf-nfsv4-rfc5667bis): the vocabulary of DDP eligibility (which XDR
 * items a chunk may stand for, and the rule a procedure follows), and the
 * per-operation functions NFSv4 COMPOUND decoding uses.
 *
 * Pure definitions and functions; no state and no procedure tables. Which
 * procedure follows which rule is written once, in the operation tables the
 * upper layers register with the RPC layer (struct rpc_proc.ddp, rpc/rpc.h).
 * The RDMA transport asks for it with rpc_ddp_rule() on receipt: how many
 * Read chunks to pull (the others are ignored, RFC 8267 §3) and how many
 * Write chunks replies may fill, paired in order with the DDP items the NFS
 * layer records with rpc_enc_ddp() (RFC 8267 §3, §4.3).
 *
 * NFS procedure code: ulb_nfs4_op_arg()/ulb_nfs4_op_res() say which NFSv4
 * COMPOUND operations take rpc_dec_ddp()/rpc_enc_ddp(); the RPC layer's
 * rpc_dec_ddp() uses ulb_read_chunk_len_ok() to check a Read chunk against
 * the XDR length it stands for (RFC 8166 §3.4.5 roundup). Procedures of
 * programs without DDP-eligible items (MOUNT, NLM, NFSACL, NFSv4 callbacks,
 * RFC 8267 §4.4) carry ULB_RULE_NONE: all their data chunks are ignored.
 */
#ifndef RNFSD_ULB_H
#define RNFSD_ULB_H

#include <stdbool.h>
#include <stdint.h>

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
 * Rules for operation tables, as initializers (in code:
 * (struct ulb_rule)ULB_RULE_NONE). Position-zero Read chunks (Long Calls) and the
 * Reply chunk are not DDP and are always used, whatever the rule.
 *
 * RFC 8267 §3 (NFS versions 2 and 3): a single Read chunk may carry WRITE
 * data or the SYMLINK path; a single Write chunk may receive READ data or the
 * READLINK path; every other procedure ignores the data chunks.
 */
#define ULB_RULE_NONE {0}
#define ULB_RULE_ARG(item) {.read_chunks = 1, .arg_item = (item)}
#define ULB_RULE_RES(item) {.write_chunks = 1, .res_item = (item)}
/*
 * RFC 8267 §4.1 (NFSv4 NULL has no DDP-eligible item), §4.3: a COMPOUND may
 * use several chunks of each kind: Read chunks identify their item by
 * position, Write chunks pair in order with the READ, READLINK (and
 * READ_PLUS) results; the items are decided per operation. As many as an
 * rpc_call carries (RPC_MAX_DDP_IN, RPC_MAX_DDP_OUT).
 */
#define ULB_V4_READ_CHUNKS 4
#define ULB_V4_WRITE_CHUNKS 8
#define ULB_RULE_COMPOUND \
	{.read_chunks = ULB_V4_READ_CHUNKS, .write_chunks = ULB_V4_WRITE_CHUNKS, .per_op = true}

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
