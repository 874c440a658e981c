/*
 * rt_rpcrdma.h - RPC-over-RDMA transport headers as the test requester
 * builds and checks them: Version One (RFC 8166 §4, wire format of RFC 5666)
 * and the Version Two draft (draft-cel-nfsv4-rpcrdma-version-two-01 §4.2),
 * plus the RFC 8797 connection private data.
 *
 * struct rt_hdr is plain data. rt_hdr_encode() writes exactly what the struct
 * says (so malformed headers are built by editing the bytes afterwards);
 * rt_hdr_decode() is strict, because it checks what the server sent.
 */
#ifndef RT_RPCRDMA_H
#define RT_RPCRDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tests/rdma/rt_xdr.h"

/* RFC 8166 §4.2.1: rdma_proc. RDMA_MSGP and RDMA_DONE are no longer used (§4.6). */
enum {
	RT_RDMA_MSG = 0,
	RT_RDMA_NOMSG = 1,
	RT_RDMA_MSGP = 2,
	RT_RDMA_DONE = 3,
	RT_RDMA_ERROR = 4,
	RT_RDMA2_OPTIONAL = 5, /* Version Two draft §4.2 */
};

/* RFC 8166 §4.3 rpc_rdma_errcode; the v2 draft's rpcrdma2_errcode. */
enum {
	RT_ERR_VERS = 1,
	RT_ERR_CHUNK = 2,
	RT_RDMA2_ERR_VERS = 1,
	RT_RDMA2_ERR_BAD_HEADER = 2,
	RT_RDMA2_ERR_INVALID_OPTION = 3,
};

/* RFC 5531 §9 msg_type, used as the v2 direction field. */
enum { RT_DIR_CALL = 0, RT_DIR_REPLY = 1 };

/* RFC 8166 §4.5: a minimal header (RDMA_MSG, three empty lists); below it
 * the XID cannot be trusted. */
#define RT_HDR_MIN 28u

#define RT_MAX_SEGS 16   /* segments per chunk we build or accept in a reply */
#define RT_MAX_CHUNKS 4  /* Write chunks per Write list, Read segments per list */

/* RFC 8166 §4.1.1 plain segment. */
struct rt_seg {
	uint32_t handle;
	uint32_t length;
	uint64_t offset;
};

/* RFC 8166 §4.1.2 read segment (one entry of the Read list). */
struct rt_read_seg {
	uint32_t position;
	struct rt_seg seg;
};

/* RFC 8166 §4.1.3 Write chunk / Reply chunk: a counted array of segments. */
struct rt_chunk {
	uint32_t nsegs;
	struct rt_seg segs[RT_MAX_SEGS];
};

struct rt_hdr {
	uint32_t xid;
	uint32_t vers;
	uint32_t credits;
	uint32_t proc;

	/* RDMA_MSG / RDMA_NOMSG (and v2 RDMA2_MSG / RDMA2_NOMSG) */
	uint32_t direction;  /* v2 only: rdma_direction */
	uint32_t nreads;
	struct rt_read_seg reads[RT_MAX_CHUNKS * RT_MAX_SEGS];
	uint32_t nwrites;
	struct rt_chunk writes[RT_MAX_CHUNKS];
	bool has_reply;
	struct rt_chunk reply;

	/* RDMA_ERROR */
	uint32_t err;
	uint32_t vers_low, vers_high;

	/* v2 RDMA2_OPTIONAL */
	uint32_t optdir, opttype;
	const uint8_t *optinfo;
	uint32_t optinfo_len;

	/* decode output: bytes of transport header (payload starts here) */
	size_t hdr_len;
};

/* Append the header to e exactly as described (v1 or v2 by h->vers). */
void rt_hdr_encode(const struct rt_hdr *h, struct rt_enc *e);

/*
 * Strictly decode a header that a server sent. Returns 0, or -1 with a
 * short reason in why (XDR error, unknown proc, too many segments, ...).
 */
int rt_hdr_decode(const void *buf, size_t len, struct rt_hdr *h, const char **why);

/* Name of an rdma_proc value ("RDMA_MSG", ..., "proc 9"). Not reentrant for unknown values. */
const char *rt_proc_name(uint32_t proc);

/* "RDMA_ERROR/ERR_CHUNK", "RDMA2_ERROR/RDMA2_ERR_INVALID_OPTION", ... Not reentrant for unknown codes. */
const char *rt_err_name(uint32_t vers, uint32_t err);

/* Total bytes a chunk's segments describe. */
uint64_t rt_chunk_bytes(const struct rt_chunk *c);

/* RFC 8797 §4: the 8-byte CM private data. */
#define RT_PRIV_IDENT 0xf6ab0e18u
#define RT_PRIV_VERSION 1
#define RT_PRIV_FLAG_R 0x01 /* §4.1: remote invalidation supported */

struct rt_priv {
	uint32_t ident;
	uint8_t version;
	uint8_t flags;
	uint8_t send_size; /* encoded: (bytes / 1024) - 1 (§4.2) */
	uint8_t recv_size;
};

void rt_priv_encode(const struct rt_priv *p, uint8_t out[8]);
/* Decode the first 8 bytes; false if fewer than 8. No validity checks. */
bool rt_priv_decode(const void *buf, size_t len, struct rt_priv *p);
static inline uint32_t rt_priv_bytes(uint8_t encoded)
{
	return ((uint32_t)encoded + 1) * 1024; /* RFC 8797 §4.2 */
}

#endif
