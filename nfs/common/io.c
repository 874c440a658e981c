/*
 * io.c - what the READ and WRITE of every NFS version share (NFSv3's
 * nfs3_proc_io.c, NFSv4's nfs4_proc_io.c and READ_PLUS, COPY's write
 * verifier): room in the reply for bulk data (the call's payload area, or
 * the unused end of the reply buffer, both owned by the call), and the
 * server's write verifier, set once at start and read by any worker.
 */
#include <string.h>
#include <time.h>
#include <sys/random.h>

#include "nfs/common/nfs_common.h"
#include "rpc/rpc_gss.h"

uint8_t nfs_write_verf[NFS_WRITE_VERF_SIZE];

/* RFC 1813 §3.3.7 (RFC 8881 §18.32.3 the same): the write verifier must
 * change when the server restarts (so clients resend UNSTABLE data that may
 * have been lost): start time in the first half, random bits in the second. */
void nfs_write_verf_init(void)
{
	uint32_t t = (uint32_t)time(NULL), r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (uint32_t)clock();
	memcpy(nfs_write_verf, &t, 4);
	memcpy(nfs_write_verf + 4, &r, 4);
}

void *nfs_bulk_buf(struct rpc_call *c, uint32_t want, uint32_t *got)
{
	const size_t header_room = 512; /* status, attributes, counts (either version): well under this */
	size_t avail, room;

	if (c->gss.wrap) {
		/* RFC 2203 §5.3.2.2, §5.3.2.3: wrapped results are one contiguous body
		 * in the reply buffer (rpc_enc_ddp() copies the data there): no more
		 * than fits beside the other results and the checksum or wrap token.
		 * A READ may return fewer bytes than asked (RFC 1813 §3.3.6, RFC 8881
		 * §18.22.3); the client reads the rest with another call. */
		room = (size_t)(c->res.end - c->res.p);
		room = room > header_room + RPC_GSS_REPLY_SLACK ? (room - header_room - RPC_GSS_REPLY_SLACK) & ~(size_t)3 : 0;
		if (want > room)
			want = (uint32_t)room;
	}
	void *p = want ? rpc_payload_buf(c, want) : NULL;

	if (p || want == 0) {
		*got = want;
		return p;
	}
	avail = c->payload_cap > c->payload_used ? c->payload_cap - c->payload_used : 0;
	/* Wrapped results copy the data into the reply buffer anyway: its tail,
	 * read into directly, holds more than a small payload area would. */
	if (!c->gss.wrap && avail >= 4096 && (p = rpc_payload_buf(c, avail & ~(size_t)3)) != NULL) {
		*got = (uint32_t)(avail & ~(size_t)3);
		return p;
	}
	/* No payload area: the tail of the reply buffer, which the encoder then stops short of. */
	room = (size_t)(c->res.end - c->res.p);
	if (room <= header_room) {
		*got = 0;
		return NULL;
	}
	room = (room - header_room) & ~(size_t)3;
	*got = want < room ? want : (uint32_t)room;
	c->res.end -= XDR_ALIGN(*got);
	return c->res.end;
}
