/*
 * rdma_hdr.h - the RPC-over-RDMA transport header (RFC 8166 §4; Version Two
 * draft-cel-nfsv4-rpcrdma-version-two-01 §4.2): decoding what a requester
 * sent, and encoding the responder's replies and errors.
 *
 * Pure functions over caller-owned buffers: no
 * allocation, no verbs. The decoder copies the header's segments into a
 * bounded struct rdma_hdr (so nothing points into the receive buffer except
 * `payload`); every wire count is compared with its limit before it is used.
 *
 * Decode, in two passes (STYLE habit 3):
 *   rdma_hdr_decode()  fixed fields, version, procedure, the three chunk lists
 *                      (discriminators 0/1 only, counts <= limits, lengths and
 *                      totals <= limits, positions 4-byte aligned), and where
 *                      the RPC payload starts;
 *   rdma_pcl_build()   (rdma_pcl.h) the chunks against the payload: positions
 *                      within the message, overlaps, the position-zero chunk.
 * Both return enum rdma_status: exactly which answer the call gets.
 */
#ifndef RNFSD_RDMA_HDR_H
#define RNFSD_RDMA_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* RFC 8166 §4.2.2: version one; draft-cel-...-version-two §4.2: version two. */
#define RDMA_VERS_1 1u
#define RDMA_VERS_2 2u

/* RFC 8166 §4.2.4 and draft §4.2 (rpcrdma2_proc). */
enum rdma_proc {
	RDMA_MSG = 0,
	RDMA_NOMSG = 1,
	RDMA_MSGP = 2,      /* RFC 5666 §4.4; RFC 8166 §4.6.1: no longer used */
	RDMA_DONE = 3,      /* RFC 8166 §4.6.2: no longer used */
	RDMA_ERROR = 4,
	RDMA2_OPTIONAL = 5, /* Version Two only (draft §3.1) */
};

/* RFC 8166 §4.1.2 rpcrdma_errcode; draft §4.2 rpcrdma2_errcode (same values). */
enum rdma_errcode {
	RDMA_ERR_VERS = 1,
	RDMA_ERR_CHUNK = 2,           /* v2 calls this RDMA2_ERR_BAD_HEADER */
	RDMA2_ERR_INVALID_OPTION = 3, /* v2 only */
};

/* RFC 5531 §9 msg_type, used by the v2 direction fields (draft §3.2). */
enum { RDMA_DIR_CALL = 0, RDMA_DIR_REPLY = 1 };

/*
 * Compile-time capacity of struct rdma_hdr. The configurable limits below
 * may only be smaller. 64 segments of 24 bytes fill 1.5 KiB of a header,
 * more than any client sends (Linux: at most 16 per header).
 */
#define RDMA_HDR_MAX_SEGS 64
#define RDMA_HDR_MAX_WRITE_CHUNKS 8 /* == RPC_MAX_DDP_OUT */

/* RFC 8166 §4.5: shorter than this, the XID cannot be trusted: drop. */
#define RDMA_HDR_V1_MIN 28u
/* xid, vers, credit, proc. */
#define RDMA_HDR_FIXED 16u
/* Fixed part of an RDMA_ERROR / ERR_VERS reply: 7 words. */
#define RDMA_HDR_ERR_MAX 28u

/* Defaults for struct rdma_limits (see rdma_limits_default()). */
#define RDMA_DEFAULT_SEGS_PER_CHUNK 16
#define RDMA_DEFAULT_SEGS_PER_HDR 32
#define RDMA_DEFAULT_MAX_PAYLOAD (1u << 20)
/* Headroom over the payload for the RPC/NFS headers around it, as the TCP
 * transport's max_record (1 MiB + 64 KiB). */
#define RDMA_CHUNK_SLACK (64u << 10)

/* Configured limits every decoded header is checked against. */
struct rdma_limits {
	uint32_t max_segs_per_chunk; /* Write/Reply chunk segments, and Read segments per position */
	uint32_t max_segs;           /* all segments in one header */
	uint32_t max_read_chunks;    /* distinct non-zero Read positions (<= RPC_MAX_DDP_IN) */
	uint32_t max_write_chunks;   /* Write chunks (<= RDMA_HDR_MAX_WRITE_CHUNKS) */
	uint32_t max_chunk_bytes;    /* one Write or Reply chunk, and all Read chunks together */
	uint32_t vers_low, vers_high; /* versions this responder accepts */
};

/* 16/32 segments, 4 Read / 8 Write chunks, max_payload + RDMA_CHUNK_SLACK,
 * versions 1..(v2_ok ? 2 : 1). v2_ok: receive buffers >= 4096 (draft §2.3). */
void rdma_limits_default(struct rdma_limits *lim, uint32_t max_payload, bool v2_ok);

/* RFC 8166 §4.1.2 xdr_rdma_segment. */
struct rdma_seg {
	uint32_t handle; /* R_key */
	uint32_t length;
	uint64_t offset; /* remote address */
};

/* RFC 8166 §4.1.2 xdr_read_chunk: one Read segment and its XDR position. */
struct rdma_read_seg {
	uint32_t position;
	struct rdma_seg seg;
};

/* A Write chunk or the Reply chunk: a range of wsegs[]. */
struct rdma_wchunk {
	uint16_t first;  /* index in rdma_hdr.wsegs */
	uint16_t nsegs;
	uint32_t length; /* sum of the segment lengths (<= max_chunk_bytes) */
};

struct rdma_hdr {
	/* RFC 8166 §4.2 fixed fields. */
	uint32_t xid;
	uint32_t vers;
	uint32_t credits; /* requested: the client's maximum outstanding calls */
	uint32_t proc;
	uint32_t direction; /* v2 rdma_direction / rdma_optdir; v1: CALL */

	/* RFC 8166 §4.3 chunk lists, in wire order. */
	struct rdma_read_seg reads[RDMA_HDR_MAX_SEGS];
	uint32_t nreads;
	uint64_t read_bytes; /* sum of all Read segment lengths */
	struct rdma_seg wsegs[RDMA_HDR_MAX_SEGS]; /* Write chunks' then Reply chunk's segments */
	uint32_t nwsegs;
	struct rdma_wchunk writes[RDMA_HDR_MAX_WRITE_CHUNKS];
	uint32_t nwrites;
	bool has_reply;
	struct rdma_wchunk reply;

	/* v2 RDMA2_OPTIONAL (draft §3.1). */
	uint32_t opttype;

	/* Where the RPC message starts in the received buffer, and its length. */
	uint32_t hdr_len;
	const uint8_t *payload;
	uint32_t payload_len;
};

/*
 * What a received message gets. Every value names one answer; the
 * transport never improvises its own.
 */
enum rdma_status {
	RDMA_ST_OK,               /* pass the call on */
	RDMA_ST_DROP,             /* discard silently (no reply; credit returned) */
	RDMA_ST_ERR_VERS,         /* RDMA_ERROR / ERR_VERS with limits' version range */
	RDMA_ST_ERR_CHUNK,        /* RDMA_ERROR / ERR_CHUNK (v2: RDMA2_ERR_BAD_HEADER) */
	RDMA_ST_ERR_INVALID_OPTION, /* v2 RDMA2_ERROR / RDMA2_ERR_INVALID_OPTION */
	RDMA_ST_GARBAGE_ARGS,     /* RPC reply GARBAGE_ARGS in an RDMA_MSG */
};

const char *rdma_status_name(enum rdma_status st);

/* Why the decoder said what it said: a short static string for log lines. */
struct rdma_decode_info {
	const char *reason;
};

/*
 * Decode the transport header of a received message of len bytes.
 * On RDMA_ST_OK hdr is complete and hdr->payload/payload_len locate the
 * RPC message (RDMA_MSG; empty for RDMA_NOMSG). On an error status, hdr->xid,
 * vers and credits are set as far as they were received (the error reply
 * needs them). why->reason (if why) says what was wrong.
 *
 * Returns:
 *   RDMA_ST_DROP       fewer than 28 bytes, any version (RFC 8166 §4.5:
 *                      the XID cannot be trusted), RDMA_DONE (§4.6.2), RDMA_ERROR from
 *                      a requester (§4.5), a v2 message in the REPLY direction
 *                      or an RPC reply (a reverse-direction reply, RFC 8167:
 *                      rdma_backchannel.c takes the v1 ones it waits for), a v2
 *                      RDMA2_OPTIONAL in the REPLY direction;
 *   RDMA_ST_ERR_VERS   rdma_vers outside [vers_low, vers_high] (§4.5.1);
 *   RDMA_ST_ERR_CHUNK  unknown procedure or RDMA_MSGP (§4.6.1), a list
 *                      discriminator other than 0/1, more segments or chunks
 *                      than the limits, a chunk longer than max_chunk_bytes,
 *                      an unaligned Read position, a header that overruns the
 *                      message, RDMA_MSG without a payload, an rdma_xid that
 *                      differs from the RPC message's XID, RDMA_NOMSG without
 *                      any chunk (§4.5.2), a v2 direction that is not 0/1 or
 *                      disagrees with the RPC message;
 *   RDMA_ST_ERR_INVALID_OPTION  RDMA2_OPTIONAL of any type (none is known here);
 *   RDMA_ST_OK.
 */
enum rdma_status rdma_hdr_decode(const void *buf, size_t len, const struct rdma_limits *lim,
				 struct rdma_hdr *hdr, struct rdma_decode_info *why);

/*
 * Check the RPC message a header carries (RDMA_MSG: called by
 * rdma_hdr_decode(); RDMA_NOMSG: by the transport once the position-zero Read
 * chunk has arrived). RFC 8166 §4.5.2: an rdma_xid that differs from the RPC
 * XID is an XDR error (ERR_CHUNK); draft §4.2.2: a v2 direction must equal the
 * RPC msg_type. An RPC reply (a reverse-direction reply, RFC 8167) is
 * RDMA_ST_DROP here: the transport (rdma_backchannel.c) takes the ones it
 * is waiting for before dropping.
 * Returns RDMA_ST_OK, RDMA_ST_DROP or RDMA_ST_ERR_CHUNK.
 */
enum rdma_status rdma_hdr_check_rpc(const struct rdma_hdr *hdr, const uint8_t *msg, size_t len,
				    struct rdma_decode_info *why);

/* Size of the transport header rdma_hdr_encode_reply() writes. */
size_t rdma_hdr_reply_len(const struct rdma_hdr *call, bool nomsg);

/*
 * Encode a reply's transport header for call (in the call's version, draft
 * §5.3): RDMA_MSG (nomsg false) or RDMA_NOMSG (nomsg true, the reply went in
 * the Reply chunk, reply_used bytes). The Write list is echoed with the bytes
 * actually written in each chunk (write_used[i] for chunk i, spread over its
 * segments in order; unused segments get length 0); the Read list is empty.
 * Returns the header length, or 0 if cap is too small.
 */
size_t rdma_hdr_encode_reply(void *out, size_t cap, const struct rdma_hdr *call, uint32_t credits,
			     const uint32_t *write_used, bool nomsg, uint32_t reply_used);

/*
 * Encode an error reply (RFC 8166 §4.5 / draft §4.2.3): rdma_xid and rdma_vers
 * from the failing message, RDMA_ERROR, and for st = RDMA_ST_ERR_VERS the
 * range [lim->vers_low, lim->vers_high]. st must be one of the three ERR
 * statuses. Returns the length (<= RDMA_HDR_ERR_MAX), or 0 if cap is too small.
 */
size_t rdma_hdr_encode_error(void *out, size_t cap, const struct rdma_hdr *call, uint32_t credits,
			     enum rdma_status st, const struct rdma_limits *lim);

/*
 * Encode RDMA_MSG carrying an RPC reply with accept_stat GARBAGE_ARGS
 * (RFC 8166 §4.5.2; RFC 5531 §9) for call. Returns the length, or 0.
 */
size_t rdma_hdr_encode_garbage_args(void *out, size_t cap, const struct rdma_hdr *call, uint32_t credits);

#endif
