/*
 * fuzz_rdma_hdr.c - libFuzzer target: RPC-over-RDMA header decode, chunk list
 * validation, Read planning, the reply decision, Write planning and reply
 * encoding, on arbitrary bytes. Built as a libFuzzer target
 * with -Dfuzz=true (clang), and in every build as a replay test over
 * fuzz/corpus/rdma_hdr (fuzz_replay.c).
 *
 * Besides "no crash, no sanitizer report", it checks invariants with
 * abort(): plans stay inside the chunks and the read buffer, encoders agree
 * with their length functions.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/rdma_hdr.h"
#include "transport/rdma_pcl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) abort(); } while (0)

static struct rdma_hdr hdr;
static struct rdma_pcl pcl;
static struct rdma_reply_plan plan;
static struct rdma_write_plan wplan;
static struct rdma_read_wr rwrs[4 * RDMA_HDR_MAX_SEGS];
static uint8_t out[4096];
static uint8_t res[8192];
static uint8_t payload[65536];

static void check_reads(const struct rdma_limits *lim)
{
	unsigned n;

	CHECK(pcl.read_end <= rdma_pcl_read_buf_size(lim));
	for (uint32_t k = 0; k < pcl.nreads; k++)
		CHECK(pcl.reads[k].inline_pos <= pcl.msg_len);
	if (rdma_pcl_plan_reads(&pcl, true, true, 4096, rwrs, sizeof(rwrs) / sizeof(rwrs[0]), &n) == 0)
		for (unsigned i = 0; i < n; i++)
			CHECK((uint64_t)rwrs[i].dest_off + rwrs[i].len <= pcl.read_end);
	rdma_pcl_limit_reads(&pcl, 1);
	CHECK(pcl.nreads <= 1);
}

/* Use the message's own bytes to invent a reply with DDP items. */
static void check_reply(const uint8_t *data, size_t size)
{
	struct rpc_ddp_out ddp[RPC_MAX_DDP_OUT];
	unsigned nddp = size > 0 ? data[0] % (RPC_MAX_DDP_OUT + 1) : 0;
	size_t res_len = size > 1 ? (size_t)data[1] * 16 : 100;
	uint32_t threshold = size > 2 ? 1024u + (data[2] & 3u) * 1024u : 1024;
	size_t off = 0;

	for (unsigned i = 0; i < nddp; i++) {
		uint8_t b = data[(3 + i) % size];
		off += (b & 0x0f) * 8;
		if (off > res_len)
			off = res_len;
		ddp[i].offset = off;
		ddp[i].len = (uint32_t)(b >> 4) * 1111u;
		ddp[i].data = payload;
	}
	enum rdma_reply_kind kind = rdma_pcl_plan_reply(&hdr, data[size - 1] % 9, res, res_len, ddp,
							nddp, threshold, &plan);
	if (kind == RDMA_REPLY_ERR_CHUNK) {
		CHECK(rdma_hdr_encode_error(out, sizeof(out), &hdr, 1, RDMA_ST_ERR_CHUNK, NULL) == 20);
		return;
	}
	uint64_t sum = 0;
	for (unsigned i = 0; i < plan.nbody; i++)
		sum += plan.body[i].len;
	CHECK(sum == plan.body_len);
	if (kind == RDMA_REPLY_INLINE)
		CHECK(plan.hdr_len + plan.body_len <= threshold);
	else
		CHECK(plan.body_len <= hdr.reply.length);

	/* Write plans for every used Write chunk and the Reply chunk. */
	wplan.nwrs = wplan.nsges = 0;
	for (unsigned i = 0; i < nddp; i++) {
		if (plan.item_chunk[i] < 0)
			continue;
		const struct rdma_wchunk *ch = &hdr.writes[plan.item_chunk[i]];
		struct rdma_sge src = { ddp[i].data, ddp[i].len };
		unsigned before = wplan.nwrs;
		int r = rdma_pcl_plan_write(&hdr, ch, &src, 1, 1 + (data[0] & 3), &wplan);
		CHECK(r == 0 || r == -2);
		uint64_t w = 0;
		for (unsigned k = before; k < wplan.nwrs && r == 0; k++)
			w += wplan.wrs[k].len;
		CHECK(r != 0 || w == ddp[i].len);
	}
	if (kind == RDMA_REPLY_NOMSG) {
		int r = rdma_pcl_plan_write(&hdr, &hdr.reply, plan.body, plan.nbody, 2, &wplan);
		CHECK(r == 0 || r == -2);
	}
	size_t n = rdma_hdr_encode_reply(out, sizeof(out), &hdr, 7, plan.write_used,
					 kind == RDMA_REPLY_NOMSG, plan.reply_used);
	CHECK(n == 0 || n == rdma_hdr_reply_len(&hdr, kind == RDMA_REPLY_NOMSG));
	CHECK(n == 0 || n == plan.hdr_len);
}

static void one(const uint8_t *data, size_t size, const struct rdma_limits *lim)
{
	struct rdma_decode_info why = { 0 };
	enum rdma_status st = rdma_hdr_decode(data, size, lim, &hdr, &why);

	switch (st) {
	case RDMA_ST_OK:
		CHECK(hdr.hdr_len + hdr.payload_len <= size);
		break;
	case RDMA_ST_DROP:
		CHECK(why.reason != NULL);
		return;
	case RDMA_ST_ERR_VERS:
	case RDMA_ST_ERR_CHUNK:
	case RDMA_ST_ERR_INVALID_OPTION:
		CHECK(why.reason != NULL);
		CHECK(rdma_hdr_encode_error(out, sizeof(out), &hdr, 1, st, lim) >= 20);
		return;
	case RDMA_ST_GARBAGE_ARGS:
		abort(); /* the header decoder never says this */
	}
	st = rdma_pcl_build(&pcl, &hdr, lim, &why);
	if (st == RDMA_ST_GARBAGE_ARGS) {
		CHECK(rdma_hdr_encode_garbage_args(out, sizeof(out), &hdr, 1) > 0);
		return;
	}
	if (st != RDMA_ST_OK)
		return;
	check_reads(lim);
	check_reply(data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdma_limits lim;

	rdma_limits_default(&lim, 1u << 20, true);
	one(data, size, &lim);
	/* Tight limits: small payload, few segments, v1 only. */
	rdma_limits_default(&lim, 8192, false);
	lim.max_segs = 8;
	lim.max_segs_per_chunk = 4;
	lim.max_read_chunks = 2;
	lim.max_write_chunks = 2;
	one(data, size, &lim);
	return 0;
}
