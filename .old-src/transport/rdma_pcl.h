/*
 * rdma_pcl.h - parsed chunk lists (after the Linux server's svc_rdma_pcl.c):
 * what the chunks of one call mean, and the plans the verbs code executes.
 *
 * Pure functions over a decoded struct rdma_hdr
 * (rdma_hdr.h); nothing here allocates or touches verbs. The transport:
 *
 *   rdma_hdr_decode() -> rdma_pcl_build()      validate the chunks against the message
 *   rdma_pcl_limit_reads()                     RFC 8267: ignore Read chunks the ULB rules out
 *   rdma_pcl_plan_reads()                      RDMA Read WRs into one pre-registered buffer
 *   ... the call runs ...
 *   rdma_pcl_plan_reply()                      inline / Write chunks + inline / Reply chunk / ERR_CHUNK
 *   rdma_pcl_plan_write()                      RDMA Write WRs for a Write chunk or the Reply chunk
 *
 * Positions: a Read chunk's position is an offset in the *unreduced* XDR
 * stream (RFC 8166 §3.4.5), so it counts the (rounded-up) lengths of the Read
 * chunks before it. The RPC layer decodes the *reduced* stream (the inline
 * bytes), so rdma_pcl_build() gives each chunk its inline_pos too: that is the
 * value the transport puts in rpc_ddp_in.position.
 */
#ifndef RNFSD_RDMA_PCL_H
#define RNFSD_RDMA_PCL_H

#include <stdbool.h>
#include <stdint.h>

#include "rpc/rpc.h"
#include "transport/rdma_hdr.h"

/* A Read chunk: the segments with one position (RFC 8166 §3.4.5). */
struct rdma_rchunk {
	uint32_t position;   /* as sent: offset in the unreduced stream */
	uint32_t inline_pos; /* offset in the reduced stream (the RPC message as received) */
	uint32_t length;     /* sum of its segments */
	uint16_t first;      /* index in rdma_pcl.rsegs */
	uint16_t nsegs;
	uint32_t dest_off;   /* where it lands in the read buffer (8-byte aligned) */
};

struct rdma_pcl {
	/* Read segments sorted (stably) by position; chunks are ranges of it. */
	struct rdma_read_seg rsegs[RDMA_HDR_MAX_SEGS];
	uint32_t nrsegs;
	bool has_call;             /* a position-zero chunk: the whole call (Long Call) */
	struct rdma_rchunk call;
	struct rdma_rchunk reads[RPC_MAX_DDP_IN]; /* non-zero positions, ascending */
	uint32_t nreads;
	uint32_t msg_len;  /* RPC message length: inline payload, or the call chunk */
	uint32_t read_end; /* bytes of the read buffer the planned chunks occupy */
};

/* Size the transport's read buffer needs for any header lim allows. */
uint32_t rdma_pcl_read_buf_size(const struct rdma_limits *lim);

/*
 * Group hdr's Read list into chunks and check them against the message.
 * Returns:
 *   RDMA_ST_ERR_CHUNK    more segments at one position than max_segs_per_chunk,
 *                        more distinct positions than max_read_chunks;
 *                        RDMA_MSG with a position-zero chunk or RDMA_NOMSG
 *                        without one (RFC 8166 §3.5.3: a Long Call is exactly
 *                        RDMA_NOMSG + position-zero chunk);
 *   RDMA_ST_GARBAGE_ARGS chunks that overlap, or a chunk whose reduced
 *                        position lies beyond the RPC message (RFC 8166
 *                        §4.5.2: chunk offsets that do not match the Payload
 *                        stream are a ULP parsing failure);
 *   RDMA_ST_OK.
 */
enum rdma_status rdma_pcl_build(struct rdma_pcl *pcl, const struct rdma_hdr *hdr,
				const struct rdma_limits *lim, struct rdma_decode_info *why);

/*
 * RFC 8267 §3: keep only the first n data Read chunks (by position); the rest
 * are ignored: not read, not handed to the RPC layer.
 */
void rdma_pcl_limit_reads(struct rdma_pcl *pcl, unsigned n);

/* One RDMA Read work request: remote segment piece -> read buffer offset. */
struct rdma_read_wr {
	uint32_t rkey;
	uint64_t raddr;
	uint32_t len;
	uint32_t dest_off;
};

/*
 * Plan the RDMA Reads of the call chunk (want_call) and/or the data chunks
 * (want_data): one WR per segment piece of at most max_wr_bytes (the device's
 * max_msg_sz), each into one contiguous piece of the read buffer (so one SGE
 * per WR whatever the device's max SGE). Zero-length segments need no WR.
 * The transport posts them at most initiator-depth at a time
 * (rdma_read_window()). Returns 0, or -1 if cap WRs are not enough.
 */
int rdma_pcl_plan_reads(const struct rdma_pcl *pcl, bool want_call, bool want_data,
			uint32_t max_wr_bytes, struct rdma_read_wr *wrs, unsigned cap, unsigned *n);

/*
 * How many more RDMA Reads may be posted now: the responder may have at
 * most `depth` Reads outstanding (the initiator depth agreed at accept,
 * which the peer's responder_resources bound). 0 when all are posted.
 */
unsigned rdma_read_window(unsigned posted, unsigned completed, unsigned total, unsigned depth);

/* One piece of local memory to send or write. */
struct rdma_sge {
	const uint8_t *addr;
	uint32_t len;
};

/* XDR padding source for pieces of the reduced reply (4 zero bytes). */
extern const uint8_t rdma_zero_pad[4];

#define RDMA_REPLY_MAX_PIECES (3 * RPC_MAX_DDP_OUT + 1)

enum rdma_reply_kind {
	RDMA_REPLY_INLINE,    /* RDMA_MSG: header + reduced reply in one Send */
	RDMA_REPLY_NOMSG,     /* RDMA_NOMSG: reduced reply written into the Reply chunk */
	RDMA_REPLY_ERR_CHUNK, /* RDMA_ERROR / ERR_CHUNK */
};

struct rdma_reply_plan {
	enum rdma_reply_kind kind;
	int8_t item_chunk[RPC_MAX_DDP_OUT];              /* Write chunk for ddp_out[i], or -1: inline */
	uint32_t write_used[RDMA_HDR_MAX_WRITE_CHUNKS]; /* bytes written per Write chunk */
	struct rdma_sge body[RDMA_REPLY_MAX_PIECES];   /* the reduced RPC reply, in order */
	unsigned nbody;
	uint32_t body_len;
	uint32_t hdr_len;    /* transport header for this reply */
	uint32_t reply_used; /* NOMSG: bytes written into the Reply chunk */
	const char *reason;  /* ERR_CHUNK: why */
};

/*
 * Decide how the reply travels (RFC 8166 §3.5, RFC 8267 §3/§4.3):
 *  - the i-th DDP item (ddp_out[i]) pairs with the i-th Write chunk, for the
 *    first ulb_write_chunks chunks (the rest are ignored, RFC 8267 §3); a
 *    chunk with no segments or no bytes means "inline" (RFC 8267 §4.3); an
 *    item longer than its chunk cannot be returned (ERR_CHUNK, RFC 8267 §3);
 *  - items moved to Write chunks leave the reply stream with their XDR
 *    padding; the others are inlined with it;
 *  - the reduced reply goes inline if header + reply <= reply_inline_max,
 *    else in the Reply chunk if there is one and it is large enough, else
 *    ERR_CHUNK (RFC 8166 §4.5.3).
 * res/res_len: the reply as encoded (rpc_call.res); ddp: rpc_call.ddp_out,
 * whose offsets are positions in res (non-decreasing, <= res_len; a broken
 * list is answered with ERR_CHUNK too, with a reason saying so).
 * Returns plan->kind.
 */
enum rdma_reply_kind rdma_pcl_plan_reply(const struct rdma_hdr *call, unsigned ulb_write_chunks,
					 const uint8_t *res, size_t res_len,
					 const struct rpc_ddp_out *ddp, unsigned nddp,
					 uint32_t reply_inline_max, struct rdma_reply_plan *plan);

/* One RDMA Write work request: SGEs sges[first .. first+nsge) to one remote piece. */
struct rdma_write_wr {
	uint32_t rkey;
	uint64_t raddr;
	uint32_t len;
	uint16_t first_sge;
	uint16_t nsge;
};

#define RDMA_WRITE_PLAN_MAX_WRS 128
#define RDMA_WRITE_PLAN_MAX_SGES 256

struct rdma_write_plan {
	struct rdma_write_wr wrs[RDMA_WRITE_PLAN_MAX_WRS];
	unsigned nwrs;
	struct rdma_sge sges[RDMA_WRITE_PLAN_MAX_SGES];
	unsigned nsges;
};

/*
 * Plan RDMA Writes of the gather list src[0..nsrc) into chunk ch of call:
 * segments filled in order; a WR never crosses a segment and has at most
 * max_sge SGEs. Appends to plan (so a reply's Write chunks and Reply chunk
 * can share one plan). Returns 0, -1 if the data does not fit the chunk, -2
 * if the plan's arrays are full.
 */
int rdma_pcl_plan_write(const struct rdma_hdr *call, const struct rdma_wchunk *ch,
			const struct rdma_sge *src, unsigned nsrc, unsigned max_sge,
			struct rdma_write_plan *plan);

/*
 * RFC 8797 §4.1: Send With Invalidate invalidates one STag "associated only
 * with" this XID; §3.2: a requester that sets R says its STags are safe to
 * invalidate remotely. The R_key chosen is the first one the call carries
 * (Read list, then Write chunks, then Reply chunk), skipping segments of
 * fewer than RDMA_INV_MIN_SEG bytes: such a segment only carries XDR
 * padding, and the Linux client points it at a write-pad MR shared by all
 * its calls (rpc_rdma.c, re_write_pad_mr), which must stay valid.
 * knfsd (svc_rdma_get_inv_rkey) is stricter: it invalidates only when every
 * segment carries the same R_key. The Linux 6.1 client registers a 1 MiB
 * chunk as several MRs (8 segments, 8 R_keys, seen in the VM), so that rule
 * never fires for large I/O; the client's reply handler (frwr_reminv)
 * accepts any one of the call's MRs and invalidates the rest itself.
 * Returns true and sets *rkey, or false (no segment to invalidate).
 */
#define RDMA_INV_MIN_SEG 4u
bool rdma_pcl_inv_rkey(const struct rdma_hdr *call, uint32_t *rkey);

#endif
