/*
 * rdma_privdata.h - RDMA-CM private data for RPC-over-RDMA (RFC 8797), and
 * the inline thresholds a connection uses in each direction.
 *
 * Pure functions over caller-owned bytes.
 *
 *   0        8        16       24       31
 *   +--------+--------+--------+--------+
 *   |      Format Identifier 0xf6ab0e18 |
 *   +--------+--------+--------+--------+
 *   |Version |Rsvd   R|Send Sz |Recv Sz |   sizes: KiB - 1 (RFC 8797 §4.2)
 *   +--------+--------+--------+--------+
 */
#ifndef RNFSD_RDMA_PRIVDATA_H
#define RNFSD_RDMA_PRIVDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RDMA_PD_FORMAT_ID 0xf6ab0e18u
#define RDMA_PD_VERSION 1
#define RDMA_PD_LEN 8
#define RDMA_PD_R_BIT 0x01 /* low bit of the flags octet: remote invalidation */

/* RFC 8166 §3.3.3: the v1 default and minimum inline threshold. */
#define RDMA_INLINE_V1_DEFAULT 1024u
/* draft-cel-nfsv4-rpcrdma-version-two-01 §2.3: the v2 default. */
#define RDMA_INLINE_V2_DEFAULT 4096u
/* RFC 8797 §4.2: the largest size the encoding can express. */
#define RDMA_PD_SIZE_MAX 262144u

struct rdma_privdata {
	bool present;      /* a valid version-1 message was found */
	bool remote_inv;   /* R: the sender can take Send With Invalidate */
	uint32_t send_size; /* bytes the sender sends at most in one Send */
	uint32_t recv_size; /* bytes the sender's receive buffers hold */
};

/*
 * Find the private data message in buf[0..len) (RFC 8797 §5.2): the Format
 * Identifier is searched at every byte offset, since §5.2 says "the offset of
 * the Format Identifier is not restricted to any alignment" (other layers such
 * as MPAv2 may put their own bytes before ours). A candidate is accepted only
 * if all 8 octets are inside the buffer and its Version is 1 (the only format
 * whose layout we know; §5.2 asks receivers to check both); otherwise the
 * search goes on from the next offset. Reserved bits are ignored (§4).
 * Not found: present=false and the RFC 8797 §5.1 defaults (no R, both sizes
 * 1024). Returns out->present.
 */
bool rdma_privdata_parse(const void *buf, size_t len, struct rdma_privdata *out);

/* RFC 8797 §4.2: encoded = bytes / 1024 - 1, within 1024..262144. */
uint8_t rdma_privdata_size_encode(uint32_t bytes);
uint32_t rdma_privdata_size_decode(uint8_t v);

/* Build our 8 octets: version 1, R if remote_inv, our send and receive sizes. */
void rdma_privdata_build(uint8_t out[RDMA_PD_LEN], bool remote_inv, uint32_t send_size,
			 uint32_t recv_size);

struct rdma_inline {
	uint32_t call_max;  /* client-to-server: the largest call a client will Send us */
	uint32_t reply_max; /* server-to-client: the largest reply we may Send */
	bool send_inv;      /* both set R: replies may use Send With Invalidate (RFC 8797 §4.1) */
};

/*
 * The connection's inline thresholds (RFC 8797 §4.2): the server uses the
 * smaller of its own send size and the client's receive size for replies;
 * the client uses the smaller of its send size and our receive size for
 * calls. Without private data the peer's sizes are the version's default:
 * 1024 for v1 (RFC 8797 §5.1, RFC 8166 §3.3.3), 4096 for v2 (draft §2.3, §5.1).
 * our_inv: we set R in our private data.
 */
void rdma_privdata_thresholds(const struct rdma_privdata *peer, uint32_t rdma_vers,
			      uint32_t our_send, uint32_t our_recv, bool our_inv,
			      struct rdma_inline *out);

#endif
