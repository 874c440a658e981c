/*
 * test_rdma_pcl.c - parsed chunk lists, Read/Write planning and the reply
 * decision. Write plans are executed against simulated remote
 * memory to check the bytes land where the segments say.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "transport/rdma_pcl.h"
#include "tests/unit/test_rdma_util.h"

#define XID 0xcafe0001u

static struct rdma_limits lim;
static struct rdma_hdr hdr;
static struct rdma_pcl pcl;

static int setup(void **state)
{
	(void)state;
	rdma_limits_default(&lim, 1u << 20, true);
	return 0;
}

/* RDMA_MSG with the given Read segments and an inline call of msg_words words. */
static enum rdma_status build(struct hb *h, uint32_t proc, const struct rdma_read_seg *r, unsigned n,
			      unsigned msg_words)
{
	hb_init(h);
	hb_fixed(h, XID, 1, 16, proc);
	for (unsigned i = 0; i < n; i++)
		hb_read(h, r[i].position, r[i].seg.handle, r[i].seg.length, r[i].seg.offset);
	hb_u32(h, 0);
	hb_u32(h, 0);
	hb_u32(h, 0);
	if (msg_words >= 10)
		hb_rpc_call(h, XID, 100003, 3, 7);
	for (unsigned i = 10; i < msg_words; i++)
		hb_u32(h, i);
	enum rdma_status st = rdma_hdr_decode(h->buf, hb_len(h), &lim, &hdr, NULL);
	if (st != RDMA_ST_OK)
		return st;
	return rdma_pcl_build(&pcl, &hdr, &lim, NULL);
}

#define RS(pos, h, len, off) { .position = (pos), .seg = { (h), (len), (off) } }

static void test_single_chunk(void **state)
{
	struct hb h;
	(void)state;
	/* NFSv3 WRITE: data at the end of a 64-byte inline message. */
	struct rdma_read_seg r[] = { RS(64, 1, 4096, 0x10000), RS(64, 2, 904, 0x20000) };
	assert_int_equal(build(&h, RDMA_MSG, r, 2, 16), RDMA_ST_OK);
	assert_false(pcl.has_call);
	assert_int_equal(pcl.nreads, 1);
	assert_int_equal(pcl.reads[0].position, 64);
	assert_int_equal(pcl.reads[0].inline_pos, 64);
	assert_int_equal(pcl.reads[0].length, 5000);
	assert_int_equal(pcl.reads[0].nsegs, 2);
	assert_int_equal(pcl.reads[0].dest_off, 0);
	assert_int_equal(pcl.msg_len, 64);
	assert_int_equal(pcl.read_end, 5000);
}

static void test_two_chunks_reduced_positions(void **state)
{
	struct hb h;
	(void)state;
	/* Chunk A: 5 bytes at 40 (rounded up to 8 in the unreduced stream);
	 * chunk B at 48 in the unreduced stream = 40 in the reduced one.
	 * Listed out of order, with A's segments split around B's. */
	struct rdma_read_seg r[] = { RS(40, 1, 3, 0), RS(48, 2, 100, 0), RS(40, 3, 2, 0) };
	assert_int_equal(build(&h, RDMA_MSG, r, 3, 12), RDMA_ST_OK);
	assert_int_equal(pcl.nreads, 2);
	assert_int_equal(pcl.reads[0].position, 40);
	assert_int_equal(pcl.reads[0].length, 5);
	assert_int_equal(pcl.rsegs[pcl.reads[0].first].seg.handle, 1);
	assert_int_equal(pcl.rsegs[pcl.reads[0].first + 1].seg.handle, 3); /* stable */
	assert_int_equal(pcl.reads[1].inline_pos, 40);
	assert_int_equal(pcl.reads[1].dest_off, 8);
	assert_int_equal(pcl.read_end, 8 + 104);
}

static void test_bad_positions(void **state)
{
	struct hb h;
	(void)state;
	/* Overlap: B starts inside A (A: 16 bytes at 40, B at 48). */
	struct rdma_read_seg ov[] = { RS(40, 1, 16, 0), RS(48, 2, 8, 0) };
	assert_int_equal(build(&h, RDMA_MSG, ov, 2, 12), RDMA_ST_GARBAGE_ARGS);
	/* Position beyond the 48-byte inline message. */
	struct rdma_read_seg far[] = { RS(52, 1, 16, 0) };
	assert_int_equal(build(&h, RDMA_MSG, far, 1, 12), RDMA_ST_GARBAGE_ARGS);
	struct rdma_read_seg edge[] = { RS(48, 1, 16, 0) };
	assert_int_equal(build(&h, RDMA_MSG, edge, 1, 12), RDMA_ST_OK);
}

static void test_call_chunk(void **state)
{
	struct hb h;
	(void)state;
	/* RDMA_MSG with a position-zero chunk: not a Long Call form. */
	struct rdma_read_seg z[] = { RS(0, 1, 2000, 0) };
	assert_int_equal(build(&h, RDMA_MSG, z, 1, 10), RDMA_ST_ERR_CHUNK);
	/* RDMA_NOMSG with only a data chunk: no call message anywhere. */
	struct rdma_read_seg d[] = { RS(40, 1, 2000, 0) };
	assert_int_equal(build(&h, RDMA_NOMSG, d, 1, 0), RDMA_ST_ERR_CHUNK);
	/* Long Call plus a data chunk inside it. */
	struct rdma_read_seg lc[] = { RS(0, 1, 1000, 0), RS(0, 2, 1000, 0), RS(1996, 3, 4096, 0) };
	assert_int_equal(build(&h, RDMA_NOMSG, lc, 3, 0), RDMA_ST_OK);
	assert_true(pcl.has_call);
	assert_int_equal(pcl.call.length, 2000);
	assert_int_equal(pcl.msg_len, 2000);
	assert_int_equal(pcl.reads[0].inline_pos, 1996);
	assert_int_equal(pcl.reads[0].dest_off, 2000);
	assert_int_equal(pcl.read_end, 2000 + 4096);
	/* ... but not beyond it. */
	struct rdma_read_seg lc2[] = { RS(0, 1, 2000, 0), RS(2004, 3, 4096, 0) };
	assert_int_equal(build(&h, RDMA_NOMSG, lc2, 2, 0), RDMA_ST_GARBAGE_ARGS);
}

static void test_chunk_limits(void **state)
{
	struct hb h;
	struct rdma_read_seg r[20];
	(void)state;
	for (int i = 0; i < 17; i++)
		r[i] = (struct rdma_read_seg)RS(40, 1, 8, 0);
	assert_int_equal(build(&h, RDMA_MSG, r, 16, 12), RDMA_ST_OK);
	assert_int_equal(build(&h, RDMA_MSG, r, 17, 12), RDMA_ST_ERR_CHUNK);
	/* Five distinct positions > 4 chunks. */
	for (int i = 0; i < 5; i++)
		r[i] = (struct rdma_read_seg)RS(8 + 8 * i, 1, 4, 0);
	assert_int_equal(build(&h, RDMA_MSG, r, 4, 12), RDMA_ST_OK);
	assert_int_equal(build(&h, RDMA_MSG, r, 5, 12), RDMA_ST_ERR_CHUNK);
	/* RFC 8267 §3: ignore all but the first. */
	assert_int_equal(build(&h, RDMA_MSG, r, 4, 12), RDMA_ST_OK);
	rdma_pcl_limit_reads(&pcl, 1);
	assert_int_equal(pcl.nreads, 1);
	assert_int_equal(pcl.reads[0].position, 8);
	assert_int_equal(pcl.read_end, 8);
	rdma_pcl_limit_reads(&pcl, 0);
	assert_int_equal(pcl.read_end, 0);
}

static void test_plan_reads(void **state)
{
	struct hb h;
	struct rdma_read_wr wrs[16];
	unsigned n;
	(void)state;
	struct rdma_read_seg lc[] = { RS(0, 1, 100, 0x1000), RS(0, 2, 0, 0x2000), RS(40, 3, 10000, 0x3000) };
	assert_int_equal(build(&h, RDMA_NOMSG, lc, 3, 0), RDMA_ST_OK);
	assert_int_equal(rdma_pcl_plan_reads(&pcl, true, false, 4096, wrs, 16, &n), 0);
	assert_int_equal(n, 1); /* zero-length segment: no WR */
	assert_int_equal(wrs[0].rkey, 1);
	assert_int_equal(wrs[0].len, 100);
	assert_int_equal(wrs[0].dest_off, 0);
	assert_int_equal(rdma_pcl_plan_reads(&pcl, false, true, 4096, wrs, 16, &n), 0);
	assert_int_equal(n, 3); /* 10000 bytes in 4096-byte WRs */
	assert_int_equal(wrs[0].dest_off, 104);
	assert_int_equal(wrs[1].raddr, 0x3000 + 4096);
	assert_int_equal(wrs[1].dest_off, 104 + 4096);
	assert_int_equal(wrs[2].len, 10000 - 8192);
	assert_int_equal(rdma_pcl_plan_reads(&pcl, true, true, 0, wrs, 16, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rdma_pcl_plan_reads(&pcl, true, true, 4096, wrs, 3, &n), -1);
}

static void test_read_window(void **state)
{
	(void)state;
	assert_int_equal(rdma_read_window(0, 0, 10, 4), 4);
	assert_int_equal(rdma_read_window(4, 1, 10, 4), 1);
	assert_int_equal(rdma_read_window(4, 0, 10, 4), 0);
	assert_int_equal(rdma_read_window(9, 8, 10, 4), 1);
	assert_int_equal(rdma_read_window(10, 8, 10, 4), 0);
	assert_int_equal(rdma_read_window(0, 0, 3, 0), 1); /* depth 0 treated as 1 */
}

/* A call with Write chunks of the given lengths (one segment each, or
 * nsegs_each segments splitting it) and an optional Reply chunk. */
static void build_reply_call(struct hb *h, const uint32_t *wlen, unsigned nw, unsigned nsegs_each,
			     uint32_t reply_len)
{
	hb_init(h);
	hb_fixed(h, XID, 1, 16, RDMA_MSG);
	hb_u32(h, 0);
	for (unsigned i = 0; i < nw; i++) {
		hb_u32(h, 1);
		unsigned ns = wlen[i] ? nsegs_each : 0;
		hb_u32(h, ns);
		for (unsigned s = 0; s < ns; s++) {
			uint32_t part = wlen[i] / ns + (s == ns - 1 ? wlen[i] % ns : 0);
			hb_seg(h, 0x100 * (i + 1) + s, part, 0x100000ull * (i + 1) + 0x10000ull * s);
		}
	}
	hb_u32(h, 0);
	if (reply_len) {
		hb_u32(h, 1);
		hb_u32(h, 2);
		hb_seg(h, 0x900, reply_len / 2, 0x9000000);
		hb_seg(h, 0x901, reply_len - reply_len / 2, 0xa000000);
	} else {
		hb_u32(h, 0);
	}
	hb_rpc_call(h, XID, 100003, 3, 6);
	assert_int_equal(rdma_hdr_decode(h->buf, hb_len(h), &lim, &hdr, NULL), RDMA_ST_OK);
}

static uint8_t res[2048];
static uint8_t data[65536];

static void fill(void)
{
	for (size_t i = 0; i < sizeof(res); i++)
		res[i] = (uint8_t)(i * 7 + 1);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 5);
}

static size_t flatten(const struct rdma_reply_plan *p, uint8_t *out)
{
	size_t n = 0;
	for (unsigned i = 0; i < p->nbody; i++) {
		memcpy(out + n, p->body[i].addr, p->body[i].len);
		n += p->body[i].len;
	}
	return n;
}

static void test_reply_inline(void **state)
{
	struct hb h;
	struct rdma_reply_plan p;
	uint8_t flat[4096];
	(void)state;
	fill();
	build_reply_call(&h, NULL, 0, 1, 0);
	/* GETATTR-like: 120 bytes, no DDP. */
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 0, res, 120, NULL, 0, 1024, &p), RDMA_REPLY_INLINE);
	assert_int_equal(p.body_len, 120);
	assert_int_equal(p.hdr_len, 28);
	assert_int_equal(flatten(&p, flat), 120);
	assert_memory_equal(flat, res, 120);
	/* Exactly at the threshold, and one word over without a Reply chunk. */
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 0, res, 1024 - 28, NULL, 0, 1024, &p), RDMA_REPLY_INLINE);
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 0, res, 1024 - 24, NULL, 0, 1024, &p), RDMA_REPLY_ERR_CHUNK);
	assert_non_null(p.reason);

	/* READ of 10 bytes with no Write chunk: data and padding inline. */
	struct rpc_ddp_out d = { .offset = 100, .len = 10, .data = data };
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 1, res, 108, &d, 1, 1024, &p), RDMA_REPLY_INLINE);
	assert_int_equal(p.item_chunk[0], -1);
	assert_int_equal(p.body_len, 120);
	flatten(&p, flat);
	assert_memory_equal(flat, res, 100);
	assert_memory_equal(flat + 100, data, 10);
	assert_memory_equal(flat + 110, "\0\0", 2);
	assert_memory_equal(flat + 112, res + 100, 8);
}

static void test_reply_write_chunk(void **state)
{
	struct hb h;
	struct rdma_reply_plan p;
	uint8_t flat[4096];
	(void)state;
	fill();
	/* NFSv3 READ of 5001 bytes into a 8192-byte Write chunk. */
	uint32_t wl[] = { 8192 };
	build_reply_call(&h, wl, 1, 1, 0);
	struct rpc_ddp_out d = { .offset = 96, .len = 5001, .data = data };
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 1, res, 100, &d, 1, 1024, &p), RDMA_REPLY_INLINE);
	assert_int_equal(p.item_chunk[0], 0);
	assert_int_equal(p.write_used[0], 5001);
	/* The data and its padding leave the stream (RFC 8166 §3.4.6). */
	assert_int_equal(p.body_len, 100);
	flatten(&p, flat);
	assert_memory_equal(flat, res, 100);
	assert_int_equal(p.hdr_len, rdma_hdr_reply_len(&hdr, false));

	/* The ULB says this procedure has no DDP result: the chunk is ignored. */
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 0, res, 100, &d, 1, 8192, &p), RDMA_REPLY_INLINE);
	assert_int_equal(p.item_chunk[0], -1);
	assert_int_equal(p.write_used[0], 0);
	assert_int_equal(p.body_len, 100 + 5004);
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 0, res, 100, &d, 1, 1024, &p), RDMA_REPLY_ERR_CHUNK);

	/* An item larger than its Write chunk (RFC 8267 §3). */
	d.len = 8193;
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 1, res, 100, &d, 1, 1024, &p), RDMA_REPLY_ERR_CHUNK);

	/* RFC 8267 §4.3: a Write chunk with no segments means inline. */
	uint32_t wz[] = { 0 };
	build_reply_call(&h, wz, 1, 1, 0);
	d.len = 12;
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 1, res, 100, &d, 1, 1024, &p), RDMA_REPLY_INLINE);
	assert_int_equal(p.item_chunk[0], -1);
	assert_int_equal(p.body_len, 112);

	/* COMPOUND with two READs and one Write chunk: the second goes inline
	 * (RFC 8267 §4.3). */
	uint32_t w1[] = { 4096 };
	build_reply_call(&h, w1, 1, 1, 0);
	struct rpc_ddp_out two[] = {
		{ .offset = 40, .len = 4000, .data = data },
		{ .offset = 80, .len = 6, .data = data + 4000 },
	};
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 8, res, 120, two, 2, 1024, &p), RDMA_REPLY_INLINE);
	assert_int_equal(p.item_chunk[0], 0);
	assert_int_equal(p.item_chunk[1], -1);
	assert_int_equal(p.body_len, 120 + 8);
	flatten(&p, flat);
	assert_memory_equal(flat + 80, data + 4000, 6);
	assert_memory_equal(flat + 88, res + 80, 40);

	/* Offsets out of order: refused. */
	two[1].offset = 20;
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 8, res, 120, two, 2, 1024, &p), RDMA_REPLY_ERR_CHUNK);
	two[1].offset = 121;
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 8, res, 120, two, 2, 1024, &p), RDMA_REPLY_ERR_CHUNK);
}

static void test_reply_chunk(void **state)
{
	struct hb h;
	struct rdma_reply_plan p;
	(void)state;
	fill();
	/* READDIR reply of 2000 bytes, 1024-byte threshold, 4096-byte Reply chunk. */
	build_reply_call(&h, NULL, 0, 1, 4096);
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 0, res, 2000, NULL, 0, 1024, &p), RDMA_REPLY_NOMSG);
	assert_int_equal(p.reply_used, 2000);
	assert_int_equal(p.hdr_len, rdma_hdr_reply_len(&hdr, true));
	/* Fits inline after all: inline wins even with a Reply chunk. */
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 0, res, 500, NULL, 0, 1024, &p), RDMA_REPLY_INLINE);
	/* Reply chunk too small: ERR_CHUNK (RFC 8166 §4.5.3). */
	build_reply_call(&h, NULL, 0, 1, 1500);
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 0, res, 2000, NULL, 0, 1024, &p), RDMA_REPLY_ERR_CHUNK);
}

/* Simulated remote memory: rkey 0x100.. -> regions at their raddr. */
static uint8_t remote[16][65536];

static uint8_t *remote_at(uint32_t rkey, uint64_t raddr, const struct rdma_hdr *call, uint32_t len)
{
	for (uint32_t i = 0; i < call->nwsegs; i++) {
		const struct rdma_seg *s = &call->wsegs[i];
		if (s->handle == rkey && raddr >= s->offset && raddr + len <= s->offset + s->length)
			return remote[i] + (raddr - s->offset);
	}
	fail_msg("write outside any segment: rkey %x raddr %llx len %u", rkey, (unsigned long long)raddr, len);
	return NULL;
}

static void execute(const struct rdma_write_plan *wp, const struct rdma_hdr *call)
{
	for (unsigned w = 0; w < wp->nwrs; w++) {
		const struct rdma_write_wr *wr = &wp->wrs[w];
		uint32_t off = 0;
		uint8_t *dst = remote_at(wr->rkey, wr->raddr, call, wr->len);
		for (unsigned s = 0; s < wr->nsge; s++) {
			const struct rdma_sge *g = &wp->sges[wr->first_sge + s];
			memcpy(dst + off, g->addr, g->len);
			off += g->len;
		}
		assert_int_equal(off, wr->len);
	}
}

static void test_plan_write(void **state)
{
	struct hb h;
	static struct rdma_write_plan wp;
	(void)state;
	fill();
	memset(remote, 0, sizeof(remote));
	/* A 10000-byte Write chunk in 4 segments (2500 each); write 9000 bytes
	 * from three source pieces, max 2 SGEs per WR. */
	uint32_t wl[] = { 10000 };
	build_reply_call(&h, wl, 1, 4, 0);
	struct rdma_sge src[] = { { data, 1000 }, { data + 1000, 0 }, { data + 1000, 3000 }, { data + 4000, 5000 } };
	wp.nwrs = wp.nsges = 0;
	assert_int_equal(rdma_pcl_plan_write(&hdr, &hdr.writes[0], src, 4, 2, &wp), 0);
	for (unsigned w = 0; w < wp.nwrs; w++) {
		assert_true(wp.wrs[w].nsge <= 2);
		assert_true(wp.wrs[w].nsge >= 1);
	}
	execute(&wp, &hdr);
	/* Segments in order: 2500 + 2500 + 2500 + 1500. */
	assert_memory_equal(remote[0], data, 2500);
	assert_memory_equal(remote[1], data + 2500, 2500);
	assert_memory_equal(remote[2], data + 5000, 2500);
	assert_memory_equal(remote[3], data + 7500, 1500);
	assert_int_equal(remote[3][1500], 0);

	/* One SGE per WR: more WRs, same bytes. */
	memset(remote, 0, sizeof(remote));
	wp.nwrs = wp.nsges = 0;
	assert_int_equal(rdma_pcl_plan_write(&hdr, &hdr.writes[0], src, 4, 1, &wp), 0);
	for (unsigned w = 0; w < wp.nwrs; w++)
		assert_int_equal(wp.wrs[w].nsge, 1);
	execute(&wp, &hdr);
	assert_memory_equal(remote[2], data + 5000, 2500);

	/* Does not fit. */
	struct rdma_sge big = { data, 10001 };
	assert_int_equal(rdma_pcl_plan_write(&hdr, &hdr.writes[0], &big, 1, 4, &wp), -1);
	/* Plan arrays full. */
	wp.nwrs = RDMA_WRITE_PLAN_MAX_WRS;
	assert_int_equal(rdma_pcl_plan_write(&hdr, &hdr.writes[0], src, 4, 4, &wp), -2);
}

static void test_reply_chunk_write_roundtrip(void **state)
{
	struct hb h;
	struct rdma_reply_plan p;
	static struct rdma_write_plan wp;
	(void)state;
	fill();
	memset(remote, 0, sizeof(remote));
	/* Long READLINK-like reply: 1500 bytes of res + a 30-byte inline DDP item. */
	build_reply_call(&h, NULL, 0, 1, 4096);
	struct rpc_ddp_out d = { .offset = 1000, .len = 30, .data = data };
	assert_int_equal(rdma_pcl_plan_reply(&hdr, 0, res, 1500, &d, 1, 1024, &p), RDMA_REPLY_NOMSG);
	assert_int_equal(p.body_len, 1532);
	wp.nwrs = wp.nsges = 0;
	assert_int_equal(rdma_pcl_plan_write(&hdr, &hdr.reply, p.body, p.nbody, 16, &wp), 0);
	execute(&wp, &hdr);
	/* Reply chunk: two segments of 2048; segment 0 is wsegs[0]. */
	uint8_t got[4096];
	memcpy(got, remote[0], 2048);
	memcpy(got + 2048, remote[1], 2048);
	assert_memory_equal(got, res, 1000);
	assert_memory_equal(got + 1000, data, 30);
	assert_memory_equal(got + 1030, "\0\0", 2);
	assert_memory_equal(got + 1032, res + 1000, 500);
}

static void test_inv_rkey(void **state)
{
	struct hb h;
	uint32_t k = 0;
	(void)state;
	uint32_t wl[] = { 100 };
	build_reply_call(&h, wl, 1, 1, 0);
	assert_true(rdma_pcl_inv_rkey(&hdr, &k));
	assert_int_equal(k, 0x100);
	/* RFC 8797 §4.1: one R_key of this XID, even if the segments carry
	 * several (the Linux 6.1 client: one MR per chunk piece). */
	build_reply_call(&h, wl, 1, 2, 0);
	assert_true(rdma_pcl_inv_rkey(&hdr, &k));
	assert_int_equal(k, 0x100);
	uint32_t big[] = { 1u << 20 };
	build_reply_call(&h, big, 1, 8, 0);
	assert_true(rdma_pcl_inv_rkey(&hdr, &k));
	assert_int_equal(k, 0x100);
	/* Only a Reply chunk. */
	build_reply_call(&h, NULL, 0, 1, 4000);
	assert_true(rdma_pcl_inv_rkey(&hdr, &k));
	assert_int_equal(k, 0x900);
	/* No chunks: nothing to invalidate. */
	build_reply_call(&h, NULL, 0, 1, 0);
	assert_false(rdma_pcl_inv_rkey(&hdr, &k));
	/* A pad-only segment (the Linux client's shared write-pad MR) is
	 * never chosen: 3 bytes in 2 segments -> 1 and 2 bytes. */
	uint32_t pad[] = { 3 };
	build_reply_call(&h, pad, 1, 2, 0);
	assert_false(rdma_pcl_inv_rkey(&hdr, &k));
	build_reply_call(&h, pad, 1, 2, 4000);
	assert_true(rdma_pcl_inv_rkey(&hdr, &k));
	assert_int_equal(k, 0x900);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_chunk),
		cmocka_unit_test(test_two_chunks_reduced_positions),
		cmocka_unit_test(test_bad_positions),
		cmocka_unit_test(test_call_chunk),
		cmocka_unit_test(test_chunk_limits),
		cmocka_unit_test(test_plan_reads),
		cmocka_unit_test(test_read_window),
		cmocka_unit_test(test_reply_inline),
		cmocka_unit_test(test_reply_write_chunk),
		cmocka_unit_test(test_reply_chunk),
		cmocka_unit_test(test_plan_write),
		cmocka_unit_test(test_reply_chunk_write_roundtrip),
		cmocka_unit_test(test_inv_rkey),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
