/*
 * rdma_pcl.c - parsed chunk lists: Read chunk grouping and validation, RDMA
 * Read planning, the reply decision, RDMA Write planning.
 *
 * Pure functions; see rdma_pcl.h. All lengths here
 * were bounded by rdma_hdr_decode() (every chunk and the Read list together
 * <= max_chunk_bytes < 4 GiB), and sums are still taken in 64 bits.
 */
#include "transport/rdma_pcl.h"

#include <string.h>

#include "rpc/xdr.h"

const uint8_t rdma_zero_pad[4];

#define ALIGN8(n) (((n) + 7u) & ~(uint64_t)7u)

static enum rdma_status say(struct rdma_decode_info *why, enum rdma_status st, const char *reason)
{
	if (why)
		why->reason = reason;
	return st;
}

uint32_t rdma_pcl_read_buf_size(const struct rdma_limits *lim)
{
	/* Every chunk starts 8-byte aligned: at most 7 bytes lost per chunk. */
	return lim->max_chunk_bytes + 8u * (RPC_MAX_DDP_IN + 1);
}

/* Stable insertion sort by position; n <= RDMA_HDR_MAX_SEGS. */
static void sort_by_position(struct rdma_read_seg *s, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		struct rdma_read_seg x = s[i];
		uint32_t j = i;
		while (j > 0 && s[j - 1].position > x.position) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = x;
	}
}

/* Group the sorted segments into the call chunk and the data chunks. */
static enum rdma_status group_chunks(struct rdma_pcl *pcl, const struct rdma_limits *lim,
				     struct rdma_decode_info *why)
{
	uint32_t max_reads = lim->max_read_chunks < RPC_MAX_DDP_IN ? lim->max_read_chunks : RPC_MAX_DDP_IN;
	uint32_t i = 0;

	while (i < pcl->nrsegs) {
		uint32_t pos = pcl->rsegs[i].position, start = i;
		uint64_t len = 0;

		while (i < pcl->nrsegs && pcl->rsegs[i].position == pos)
			len += pcl->rsegs[i++].seg.length;
		if (i - start > lim->max_segs_per_chunk)
			return say(why, RDMA_ST_ERR_CHUNK, "read chunk: too many segments");

		struct rdma_rchunk *ch;
		if (pos == 0) {
			ch = &pcl->call;
			pcl->has_call = true;
		} else {
			if (pcl->nreads >= max_reads)
				return say(why, RDMA_ST_ERR_CHUNK, "read list: too many chunks");
			ch = &pcl->reads[pcl->nreads++];
		}
		ch->position = pos;
		ch->inline_pos = pos;
		ch->length = (uint32_t)len;
		ch->first = (uint16_t)start;
		ch->nsegs = (uint16_t)(i - start);
		ch->dest_off = 0;
	}
	return RDMA_ST_OK;
}

/*
 * Reduced positions, overlaps and bounds (RFC 8166 §3.4.5: a position counts
 * the preceding Read chunks' rounded-up lengths in the unreduced stream).
 */
static enum rdma_status check_positions(struct rdma_pcl *pcl, struct rdma_decode_info *why)
{
	uint64_t consumed = 0, prev_end = 0;

	for (uint32_t k = 0; k < pcl->nreads; k++) {
		struct rdma_rchunk *ch = &pcl->reads[k];
		uint64_t aligned = XDR_ALIGN((uint64_t)ch->length);

		if (ch->position < prev_end)
			return say(why, RDMA_ST_GARBAGE_ARGS, "read chunks overlap");
		if (ch->position - consumed > pcl->msg_len)
			return say(why, RDMA_ST_GARBAGE_ARGS, "read chunk position beyond the message");
		ch->inline_pos = (uint32_t)(ch->position - consumed);
		prev_end = ch->position + aligned;
		consumed += aligned;
	}
	return RDMA_ST_OK;
}

static void place_chunks(struct rdma_pcl *pcl)
{
	uint64_t off = 0;

	if (pcl->has_call) {
		pcl->call.dest_off = 0;
		off = ALIGN8((uint64_t)pcl->call.length);
	}
	for (uint32_t k = 0; k < pcl->nreads; k++) {
		pcl->reads[k].dest_off = (uint32_t)off;
		off += ALIGN8((uint64_t)pcl->reads[k].length);
	}
	pcl->read_end = (uint32_t)off;
}

enum rdma_status rdma_pcl_build(struct rdma_pcl *pcl, const struct rdma_hdr *hdr,
				const struct rdma_limits *lim, struct rdma_decode_info *why)
{
	enum rdma_status st;

	pcl->nrsegs = hdr->nreads;
	pcl->has_call = false;
	pcl->nreads = 0;
	pcl->msg_len = 0;
	pcl->read_end = 0;
	memcpy(pcl->rsegs, hdr->reads, hdr->nreads * sizeof(hdr->reads[0]));
	sort_by_position(pcl->rsegs, pcl->nrsegs);

	st = group_chunks(pcl, lim, why);
	if (st != RDMA_ST_OK)
		return st;
	/* RFC 8166 §3.5.3: a Long Call is RDMA_NOMSG with a position-zero Read
	 * chunk holding the whole call; anything else carries the call inline. */
	if (hdr->proc == RDMA_MSG && pcl->has_call)
		return say(why, RDMA_ST_ERR_CHUNK, "RDMA_MSG with a position-zero read chunk");
	if (hdr->proc == RDMA_NOMSG && !pcl->has_call)
		return say(why, RDMA_ST_ERR_CHUNK, "RDMA_NOMSG call without a position-zero read chunk");
	pcl->msg_len = pcl->has_call ? pcl->call.length : hdr->payload_len;

	st = check_positions(pcl, why);
	if (st != RDMA_ST_OK)
		return st;
	place_chunks(pcl);
	return RDMA_ST_OK;
}

void rdma_pcl_limit_reads(struct rdma_pcl *pcl, unsigned n)
{
	if (n >= pcl->nreads)
		return;
	pcl->nreads = n;
	place_chunks(pcl);
}

static int plan_chunk_reads(const struct rdma_pcl *pcl, const struct rdma_rchunk *ch,
			    uint32_t max_wr_bytes, struct rdma_read_wr *wrs, unsigned cap, unsigned *n)
{
	uint32_t dest = ch->dest_off;

	for (uint32_t i = 0; i < ch->nsegs; i++) {
		const struct rdma_seg *s = &pcl->rsegs[ch->first + i].seg;
		uint32_t done = 0;

		while (done < s->length) {
			uint32_t len = s->length - done;
			if (len > max_wr_bytes)
				len = max_wr_bytes;
			if (*n >= cap)
				return -1;
			wrs[*n] = (struct rdma_read_wr){
				.rkey = s->handle,
				.raddr = s->offset + done,
				.len = len,
				.dest_off = dest,
			};
			(*n)++;
			done += len;
			dest += len;
		}
	}
	return 0;
}

int rdma_pcl_plan_reads(const struct rdma_pcl *pcl, bool want_call, bool want_data,
			uint32_t max_wr_bytes, struct rdma_read_wr *wrs, unsigned cap, unsigned *n)
{
	*n = 0;
	if (max_wr_bytes == 0)
		max_wr_bytes = UINT32_MAX;
	if (want_call && pcl->has_call &&
	    plan_chunk_reads(pcl, &pcl->call, max_wr_bytes, wrs, cap, n))
		return -1;
	if (!want_data)
		return 0;
	for (uint32_t k = 0; k < pcl->nreads; k++)
		if (plan_chunk_reads(pcl, &pcl->reads[k], max_wr_bytes, wrs, cap, n))
			return -1;
	return 0;
}

unsigned rdma_read_window(unsigned posted, unsigned completed, unsigned total, unsigned depth)
{
	unsigned inflight = posted - completed;

	if (depth == 0)
		depth = 1;
	if (posted >= total || inflight >= depth)
		return 0;
	unsigned room = depth - inflight;
	return room < total - posted ? room : total - posted;
}

static enum rdma_reply_kind plan_err(struct rdma_reply_plan *p, const char *reason)
{
	p->kind = RDMA_REPLY_ERR_CHUNK;
	p->reason = reason;
	p->nbody = 0;
	p->body_len = 0;
	return p->kind;
}

static void add_piece(struct rdma_reply_plan *p, const uint8_t *addr, size_t len, uint64_t *total)
{
	if (len == 0)
		return;
	p->body[p->nbody++] = (struct rdma_sge){ .addr = addr, .len = (uint32_t)len };
	*total += len;
}

enum rdma_reply_kind rdma_pcl_plan_reply(const struct rdma_hdr *call, unsigned ulb_write_chunks,
					 const uint8_t *res, size_t res_len,
					 const struct rpc_ddp_out *ddp, unsigned nddp,
					 uint32_t reply_inline_max, struct rdma_reply_plan *p)
{
	unsigned usable = call->nwrites < ulb_write_chunks ? call->nwrites : ulb_write_chunks;
	uint64_t total = 0;
	size_t prev = 0;

	memset(p->write_used, 0, sizeof(p->write_used));
	p->nbody = 0;
	p->reply_used = 0;
	p->reason = NULL;
	p->hdr_len = RDMA_HDR_ERR_MAX;
	if (nddp > RPC_MAX_DDP_OUT || res_len > UINT32_MAX)
		return plan_err(p, "internal: reply too large or too many DDP items");

	for (unsigned i = 0; i < nddp; i++) {
		const struct rpc_ddp_out *it = &ddp[i];
		const struct rdma_wchunk *ch = &call->writes[i];

		if (it->offset < prev || it->offset > res_len)
			return plan_err(p, "internal: DDP item offsets out of order");
		p->item_chunk[i] = -1;
		/* RFC 8267 §4.3: a Write chunk with no segments or no bytes
		 * asks for the result inline; otherwise the item MUST use it. */
		if (i < usable && ch->nsegs && ch->length) {
			if (it->len > ch->length)
				return plan_err(p, "DDP item larger than its Write chunk");
			p->item_chunk[i] = (int8_t)i;
			p->write_used[i] = it->len;
		}
		add_piece(p, res + prev, it->offset - prev, &total);
		if (p->item_chunk[i] < 0) {
			add_piece(p, it->data, it->len, &total);
			add_piece(p, rdma_zero_pad, XDR_PAD(it->len), &total);
		}
		prev = it->offset;
	}
	add_piece(p, res + prev, res_len - prev, &total);
	if (total > UINT32_MAX)
		return plan_err(p, "internal: reply too large");
	p->body_len = (uint32_t)total;

	/* RFC 8166 §3.5: inline if it fits the peer's receive buffer. */
	p->hdr_len = (uint32_t)rdma_hdr_reply_len(call, false);
	if ((uint64_t)p->hdr_len + p->body_len <= reply_inline_max) {
		p->kind = RDMA_REPLY_INLINE;
		return p->kind;
	}
	/* RFC 8166 §3.5.3: a Long Reply goes in the Reply chunk. */
	if (!call->has_reply)
		return plan_err(p, "reply exceeds the inline threshold and no Reply chunk");
	p->hdr_len = (uint32_t)rdma_hdr_reply_len(call, true);
	if (p->body_len > call->reply.length || p->hdr_len > reply_inline_max)
		return plan_err(p, "reply larger than the Reply chunk"); /* RFC 8166 §4.5.3 */
	p->reply_used = p->body_len;
	p->kind = RDMA_REPLY_NOMSG;
	return p->kind;
}

int rdma_pcl_plan_write(const struct rdma_hdr *call, const struct rdma_wchunk *ch,
			const struct rdma_sge *src, unsigned nsrc, unsigned max_sge,
			struct rdma_write_plan *plan)
{
	uint64_t remaining = 0;
	unsigned si = 0;
	uint32_t soff = 0;

	for (unsigned i = 0; i < nsrc; i++)
		remaining += src[i].len;
	if (remaining > ch->length)
		return -1;
	if (max_sge == 0)
		max_sge = 1;

	for (uint32_t k = 0; k < ch->nsegs && remaining; k++) {
		const struct rdma_seg *s = &call->wsegs[ch->first + k];
		uint32_t segoff = 0;

		while (segoff < s->length && remaining) {
			if (plan->nwrs >= RDMA_WRITE_PLAN_MAX_WRS)
				return -2;
			struct rdma_write_wr *wr = &plan->wrs[plan->nwrs++];
			*wr = (struct rdma_write_wr){
				.rkey = s->handle,
				.raddr = s->offset + segoff,
				.first_sge = (uint16_t)plan->nsges,
			};
			while (wr->nsge < max_sge && segoff < s->length && remaining) {
				while (soff >= src[si].len) {
					si++;
					soff = 0;
				}
				uint32_t take = src[si].len - soff;
				if (take > s->length - segoff)
					take = s->length - segoff;
				if (plan->nsges >= RDMA_WRITE_PLAN_MAX_SGES)
					return -2;
				plan->sges[plan->nsges++] = (struct rdma_sge){ src[si].addr + soff, take };
				wr->nsge++;
				wr->len += take;
				segoff += take;
				soff += take;
				remaining -= take;
			}
		}
	}
	return 0;
}

bool rdma_pcl_inv_rkey(const struct rdma_hdr *call, uint32_t *rkey)
{
	/* RFC 8797 §3.2, §4.1: see rdma_pcl.h. Read list, then Write list and
	 * Reply chunk (wsegs), in the order the requester sent them. */
	for (uint32_t i = 0; i < call->nreads; i++) {
		if (call->reads[i].seg.length >= RDMA_INV_MIN_SEG) {
			*rkey = call->reads[i].seg.handle;
			return true;
		}
	}
	for (uint32_t i = 0; i < call->nwsegs; i++) {
		if (call->wsegs[i].length >= RDMA_INV_MIN_SEG) {
			*rkey = call->wsegs[i].handle;
			return true;
		}
	}
	return false;
}
