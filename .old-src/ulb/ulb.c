/*
 * ulb.c - RFC 8267 DDP eligibility of NFSv4 operations, and the Read chunk
 * length check. See ulb.h.
 */
#include "ulb/ulb.h"

#include <stddef.h>

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
