/*
 * ulb.c - RFC 8267 DDP-eligibility tables for NFS versions 2, 3 and 4.
 *
 * See ulb.h.
 */
#include "ulb/ulb.h"

#include <stddef.h>

struct ulb_entry {
	uint32_t proc;
	uint8_t arg_item;
	uint8_t res_item;
};

/*
 * RFC 8267 §3 (NFS versions 2 and 3): a single Read chunk may carry WRITE
 * data or the SYMLINK path; a single Write chunk may receive READ data or the
 * READLINK path. Every other procedure ignores the chunks.
 */
static const struct ulb_entry nfs2_ddp[] = {
	{ 5, ULB_NONE, ULB_READLINK_PATH },  /* NFSPROC_READLINK (RFC 1094 §2.2.6) */
	{ 6, ULB_NONE, ULB_READ_DATA },      /* NFSPROC_READ */
	{ 8, ULB_WRITE_DATA, ULB_NONE },     /* NFSPROC_WRITE */
	{ 13, ULB_SYMLINK_PATH, ULB_NONE },  /* NFSPROC_SYMLINK */
};

static const struct ulb_entry nfs3_ddp[] = {
	{ 5, ULB_NONE, ULB_READLINK_PATH },  /* NFSPROC3_READLINK (RFC 1813 §3.3.5) */
	{ 6, ULB_NONE, ULB_READ_DATA },      /* NFSPROC3_READ */
	{ 7, ULB_WRITE_DATA, ULB_NONE },     /* NFSPROC3_WRITE */
	{ 10, ULB_SYMLINK_PATH, ULB_NONE },  /* NFSPROC3_SYMLINK */
};

#define NFS4PROC_COMPOUND 1u
/* How many chunks a COMPOUND may use: what rpc_call can carry. */
#define ULB_V4_READ_CHUNKS 4  /* RPC_MAX_DDP_IN */
#define ULB_V4_WRITE_CHUNKS 8 /* RPC_MAX_DDP_OUT */

static void lookup_table(const struct ulb_entry *t, size_t n, uint32_t proc, struct ulb_rule *out)
{
	for (size_t i = 0; i < n; i++) {
		if (t[i].proc != proc)
			continue;
		out->arg_item = t[i].arg_item;
		out->res_item = t[i].res_item;
		/* RFC 8267 §3: only the first Read chunk / first Write chunk. */
		out->read_chunks = t[i].arg_item != ULB_NONE;
		out->write_chunks = t[i].res_item != ULB_NONE;
		return;
	}
}

void ulb_lookup(uint32_t prog, uint32_t vers, uint32_t proc, struct ulb_rule *out)
{
	*out = (struct ulb_rule){ 0 };
	if (prog != ULB_NFS_PROGRAM)
		return; /* MOUNT, NLM, NFSACL, callbacks: nothing is DDP-eligible */
	switch (vers) {
	case 2:
		lookup_table(nfs2_ddp, sizeof(nfs2_ddp) / sizeof(nfs2_ddp[0]), proc, out);
		break;
	case 3:
		lookup_table(nfs3_ddp, sizeof(nfs3_ddp) / sizeof(nfs3_ddp[0]), proc, out);
		break;
	case 4:
		/* RFC 8267 §4.1: NULL has no DDP-eligible item. §4.3: a
		 * COMPOUND may use several chunks of each kind: Read chunks
		 * identify their item by position, Write chunks pair in order
		 * with the READ, READLINK (and READ_PLUS) results. */
		if (proc == NFS4PROC_COMPOUND) {
			out->read_chunks = ULB_V4_READ_CHUNKS;
			out->write_chunks = ULB_V4_WRITE_CHUNKS;
			out->per_op = true;
		}
		break;
	default:
		break;
	}
}

enum ulb_item ulb_nfs4_op_arg(uint32_t op, uint32_t createtype)
{
	/* RFC 8267 §4.1: WRITE data and CREATE(NF4LNK) linkdata, nothing else. */
	if (op == ULB_NFS4_OP_WRITE)
		return ULB_WRITE_DATA;
	if (op == ULB_NFS4_OP_CREATE && createtype == ULB_NF4LNK)
		return ULB_SYMLINK_PATH;
	return ULB_NONE;
}

enum ulb_item ulb_nfs4_op_res(uint32_t op)
{
	/* RFC 8267 §4.1 and §4.3. */
	switch (op) {
	case ULB_NFS4_OP_READ:
		return ULB_READ_DATA;
	case ULB_NFS4_OP_READLINK:
		return ULB_READLINK_PATH;
	case ULB_NFS4_OP_READ_PLUS:
		return ULB_READ_PLUS_DATA;
	default:
		return ULB_NONE;
	}
}

bool ulb_read_chunk_len_ok(uint32_t chunk_len, uint32_t xdr_len)
{
	if (chunk_len == xdr_len)
		return true;
	/* With the roundup (at most 3 bytes more, to a multiple of 4). */
	return (xdr_len & 3u) && chunk_len > xdr_len && chunk_len - xdr_len == 4u - (xdr_len & 3u);
}
