/*
 * rdma_privdata.c - RFC 8797 RDMA-CM private data: find and check the
 * client's, build ours, derive the inline thresholds.
 *
 * Pure functions; see rdma_privdata.h.
 */
#include "transport/rdma_privdata.h"

#include <string.h>

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void set_defaults(struct rdma_privdata *out)
{
	/* RFC 8797 §5.1: as if R were clear and both sizes encoded 0. */
	out->present = false;
	out->remote_inv = false;
	out->send_size = rdma_privdata_size_decode(0);
	out->recv_size = rdma_privdata_size_decode(0);
}

bool rdma_privdata_parse(const void *buf, size_t len, struct rdma_privdata *out)
{
	const uint8_t *b = buf;

	set_defaults(out);
	if (!buf || len < RDMA_PD_LEN)
		return false;
	/* RFC 8797 §5.2: any offset; all 8 octets must be inside the buffer. */
	for (size_t off = 0; off <= len - RDMA_PD_LEN; off++) {
		const uint8_t *p = b + off;

		if (get_be32(p) != RDMA_PD_FORMAT_ID)
			continue;
		/* §5.2: check the version; §4: version 1 means exactly these 8 octets. */
		if (p[4] != RDMA_PD_VERSION)
			continue;
		out->present = true;
		out->remote_inv = (p[5] & RDMA_PD_R_BIT) != 0; /* reserved bits ignored (§4) */
		out->send_size = rdma_privdata_size_decode(p[6]);
		out->recv_size = rdma_privdata_size_decode(p[7]);
		return true;
	}
	return false;
}

uint8_t rdma_privdata_size_encode(uint32_t bytes)
{
	if (bytes < 1024)
		bytes = 1024;
	if (bytes > RDMA_PD_SIZE_MAX)
		bytes = RDMA_PD_SIZE_MAX;
	/* Rounded down: never advertise more than the buffer holds. */
	return (uint8_t)(bytes / 1024 - 1);
}

uint32_t rdma_privdata_size_decode(uint8_t v)
{
	return ((uint32_t)v + 1) * 1024;
}

void rdma_privdata_build(uint8_t out[RDMA_PD_LEN], bool remote_inv, uint32_t send_size,
			 uint32_t recv_size)
{
	out[0] = (uint8_t)(RDMA_PD_FORMAT_ID >> 24);
	out[1] = (uint8_t)(RDMA_PD_FORMAT_ID >> 16);
	out[2] = (uint8_t)(RDMA_PD_FORMAT_ID >> 8);
	out[3] = (uint8_t)RDMA_PD_FORMAT_ID;
	out[4] = RDMA_PD_VERSION;
	out[5] = remote_inv ? RDMA_PD_R_BIT : 0; /* §4: reserved bits zero */
	out[6] = rdma_privdata_size_encode(send_size);
	out[7] = rdma_privdata_size_encode(recv_size);
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

void rdma_privdata_thresholds(const struct rdma_privdata *peer, uint32_t rdma_vers,
			      uint32_t our_send, uint32_t our_recv, bool our_inv,
			      struct rdma_inline *out)
{
	uint32_t peer_send, peer_recv;

	if (peer && peer->present) {
		peer_send = peer->send_size;
		peer_recv = peer->recv_size;
	} else if (rdma_vers >= 2) {
		peer_send = peer_recv = RDMA_INLINE_V2_DEFAULT; /* draft §2.3 */
	} else {
		peer_send = peer_recv = RDMA_INLINE_V1_DEFAULT; /* RFC 8797 §5.1 */
	}
	/* RFC 8797 §4.2 */
	out->reply_max = min_u32(our_send, peer_recv);
	out->call_max = min_u32(peer_send, our_recv);
	/* RFC 8797 §4.1: only when both peers set R. */
	out->send_inv = our_inv && peer && peer->present && peer->remote_inv;
}
