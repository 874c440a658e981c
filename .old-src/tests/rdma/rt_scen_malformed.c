/*
 * rt_scen_malformed.c - transport headers no kernel client sends: bad XDR
 * discriminators, absurd segment counts, truncation at every word, Read
 * chunks at impossible positions or of the wrong length, XID mismatch, and
 * procedures a requester must not use. RFC 8166 §4.5.2: once rdma_vers is
 * recognised, an XDR error in the header gets RDMA_ERROR/ERR_CHUNK; an RPC
 * argument error may get GARBAGE_ARGS instead (RFC 5666 §4.2). Either way
 * the connection must keep working, which every probe checks with a NULL.
 */
#include <stdio.h>
#include <string.h>

#include "tests/rdma/rt.h"

#define ERR_CHUNK_ONLY RT_OUT_ERR_CHUNK
#define ERR_CHUNK_OR_GARBAGE (RT_OUT_ERR_CHUNK | RT_OUT_GARBAGE)
#define ERR_CHUNK_OR_DROP (RT_OUT_ERR_CHUNK | RT_OUT_NONE)

/* Probe one message on a fresh connection and report it. */
static void probe_one(struct rt_ctx *t, const char *name, const uint8_t *msg, size_t len,
		      uint32_t xid, unsigned allowed, const char *rfc)
{
	struct rt_probe p;
	struct rt_conn c;

	if (rt_open(t, &c, NULL, name))
		return;
	rt_probe_send(t, &c, msg, len, xid, true, &p);
	rt_probe_verdict(t, name, &p, allowed, rfc);
	rt_conn_close(&c);
}

/* A well-formed NULL call with one list discriminator patched to 2. */
void rt_scen_bad_disc(struct rt_ctx *t)
{
	static const struct { const char *name; size_t word; } cases[] = {
		{ "bad_disc_read", 4 }, { "bad_disc_write", 5 }, { "bad_disc_reply", 6 },
	};
	uint8_t msg[256];
	uint32_t xid;
	size_t len;
	unsigned i;

	/* RFC 4506 §4.4/§4.19: an optional-data discriminator is a bool, 0 or 1. */
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		len = rt_null_msg(t, 1, msg, sizeof(msg), &xid);
		rt_put32(msg + 4 * cases[i].word, 2);
		probe_one(t, cases[i].name, msg, len, xid, ERR_CHUNK_ONLY,
			  "RFC 8166 §4.5.2, RFC 4506 §4.4");
	}
}

void rt_scen_seg_overflow(struct rt_ctx *t)
{
	uint8_t rpc[128], msg[256];
	uint32_t xid;
	struct rt_enc e;
	size_t rlen;

	/* Write list: one chunk claiming 0xffffffff segments, then the RPC call. */
	xid = rt_xid(t);
	rlen = rt_null_call(rpc, sizeof(rpc), xid);
	rt_enc_init(&e, msg, sizeof(msg));
	rt_enc_u32(&e, xid);
	rt_enc_u32(&e, 1);
	rt_enc_u32(&e, RT_REQ_CREDITS);
	rt_enc_u32(&e, RT_RDMA_MSG);
	rt_enc_u32(&e, 0);          /* no Read list */
	rt_enc_u32(&e, 1);          /* a Write chunk ... */
	rt_enc_u32(&e, 0xffffffff); /* ... of 2^32-1 segments */
	rt_enc_fixed(&e, rpc, rlen);
	probe_one(t, "seg_count_overflow", msg, e.len, xid, ERR_CHUNK_ONLY, "RFC 8166 §4.5.2");

	/* Same in the Reply chunk. */
	xid = rt_xid(t);
	rlen = rt_null_call(rpc, sizeof(rpc), xid);
	rt_enc_init(&e, msg, sizeof(msg));
	rt_enc_u32(&e, xid);
	rt_enc_u32(&e, 1);
	rt_enc_u32(&e, RT_REQ_CREDITS);
	rt_enc_u32(&e, RT_RDMA_MSG);
	rt_enc_u32(&e, 0);
	rt_enc_u32(&e, 0);
	rt_enc_u32(&e, 1);
	rt_enc_u32(&e, 0xffffffff);
	rt_enc_fixed(&e, rpc, rlen);
	probe_one(t, "seg_count_overflow_reply", msg, e.len, xid, ERR_CHUNK_ONLY, "RFC 8166 §4.5.2");
}

/*
 * A header with every list populated (pointing at real, registered memory),
 * sent cut short at each 4-byte boundary. From 28 bytes (a minimal header)
 * on, the XDR error gets ERR_CHUNK (RFC 8166 §4.5.2). Below that RFC 8166
 * §4.5 says the XID cannot be trusted and the message is silently
 * discarded, while §4.5.2 asks for ERR_CHUNK whenever rdma_vers is
 * recognised (from 8 bytes): either answer is accepted there, and shown.
 */
void rt_scen_truncated(struct rt_ctx *t)
{
	uint8_t full[512], *buf = NULL;
	unsigned allowed;
	char log[1600] = "", one[64], exp[96], firstbad[320] = "";
	struct rt_probe p;
	struct rt_conn c;
	struct rt_hdr h;
	unsigned bad = 0;
	uint32_t xid;
	size_t len, cut;
	bool open = false;

	for (cut = 0;; cut += 4) {
		if (!open) {
			if (rt_open(t, &c, NULL, "truncated_header"))
				return;
			open = true;
			buf = rt_data_alloc(&c, 65536);
		}
		xid = rt_xid(t);
		rt_hdr_call(&h, xid, RT_RDMA_MSG);
		h.nreads = 1;
		h.reads[0] = (struct rt_read_seg){ 40, rt_seg_of(&c, buf, 4096) };
		h.nwrites = 1;
		h.writes[0].nsegs = 2;
		h.writes[0].segs[0] = rt_seg_of(&c, buf + 8192, 8192);
		h.writes[0].segs[1] = rt_seg_of(&c, buf + 16384, 8192);
		h.has_reply = true;
		h.reply.nsegs = 1;
		h.reply.segs[0] = rt_seg_of(&c, buf + 32768, 4096);
		len = rt_build(&h, NULL, 0, full, sizeof(full));
		if (cut >= len)
			break;
		rt_probe_send(t, &c, full, cut, xid, cut >= 4, &p);
		allowed = cut < RT_HDR_MIN ? (RT_OUT_NONE | RT_OUT_ERR_CHUNK) : RT_OUT_ERR_CHUNK;
		snprintf(one, sizeof(one), "%s%zu:%s", cut ? ", " : "", cut,
			 p.out == RT_OUT_NONE ? "dropped" : p.out == RT_OUT_ERR_CHUNK ? "ERR_CHUNK" :
			 p.out == RT_OUT_LOST ? "LOST" : "other");
		strncat(log, one, sizeof(log) - strlen(log) - 1);
		if (!(p.out & allowed) || !p.xid_ok || !p.alive) {
			if (!bad++)
				snprintf(firstbad, sizeof(firstbad), "at %zu bytes expected %s and a "
					 "NULL answered got %s%s%s", cut,
					 rt_outcome_names(allowed, exp, sizeof(exp)), p.detail,
					 p.xid_ok ? "" : " with a wrong XID",
					 p.alive ? "" : ", NULL not answered");
		}
		if (rt_conn_dead(&c)) {
			rt_conn_close(&c);
			open = false;
		}
	}
	if (open)
		rt_conn_close(&c);
	rt_info(t, "truncated_header", "bytes:answer %s", log);
	if (bad)
		rt_fail(t, "truncated_header", "%u of %zu cuts wrong; first %s", bad, len / 4,
			firstbad);
	else
		rt_pass(t, "truncated_header", "%zu cuts; ERR_CHUNK from %u bytes on (RFC 8166 §4.5.2)",
			len / 4, RT_HDR_MIN);
}

/*
 * An NFSv3 WRITE of count bytes whose data travels in a Read chunk of
 * chunk_len bytes at data position + pos_delta. Well-formed when
 * pos_delta == 0 and chunk_len == count.
 */
static void write_chunk_probe(struct rt_ctx *t, const char *name, uint32_t count,
			      uint32_t chunk_len, int32_t pos_delta, unsigned allowed, const char *rfc)
{
	uint8_t rpc[512], msg[1024], *data;
	struct rt_probe p;
	struct rt_conn c;
	struct rt_hdr h;
	struct rt_enc e;
	uint32_t xid, i;
	size_t pos;

	if (!t->have_fh) {
		rt_fail(t, name, "expected file handles got none: %s", t->fh_why);
		return;
	}
	if (rt_open(t, &c, NULL, name))
		return;
	data = rt_data_alloc(&c, chunk_len);
	for (i = 0; i < chunk_len; i++)
		data[i] = (uint8_t)i;
	xid = rt_xid(t);
	rt_enc_init(&e, rpc, sizeof(rpc));
	rt_rpc_call_hdr(&e, xid, RT_NFS_PROG, 3, RT_NFS3_WRITE, RT_AUTH_SYS);
	pos = rt_nfs3_write_args_hdr(&e, &t->wfile, 3u << 20, count, RT_NFS3_UNSTABLE);
	rt_hdr_call(&h, xid, RT_RDMA_MSG);
	h.nreads = 1;
	h.reads[0].position = (uint32_t)((int64_t)pos + pos_delta);
	h.reads[0].seg = rt_seg_of(&c, data, chunk_len);
	rt_probe_send(t, &c, msg, rt_build(&h, rpc, e.len, msg, sizeof(msg)), xid, true, &p);
	rt_probe_verdict(t, name, &p, allowed, rfc);
	rt_conn_close(&c);
}

void rt_scen_read_pos(struct rt_ctx *t)
{
	/* RFC 8166 §3.4.5: a position is an XDR offset, so a multiple of 4,
	 * and lies within the RPC message it reassembles into. */
	write_chunk_probe(t, "read_pos_unaligned", 4096, 4096, 2, ERR_CHUNK_OR_GARBAGE,
			  "RFC 8166 §3.4.5/§4.5.2");
	write_chunk_probe(t, "read_pos_beyond", 4096, 4096, 4096, ERR_CHUNK_OR_GARBAGE,
			  "RFC 8166 §3.4.5/§4.5.2");
}

void rt_scen_read_len(struct rt_ctx *t)
{
	/* The chunk stands for the 8192 data bytes WRITE3args announces but
	 * brings only 4096: the arguments cannot be decoded. */
	write_chunk_probe(t, "read_len_mismatch", 8192, 4096, 0, ERR_CHUNK_OR_GARBAGE,
			  "RFC 8166 §3.4.5/§4.5.2, RFC 5531 GARBAGE_ARGS");
}

void rt_scen_bad_msg(struct rt_ctx *t)
{
	uint8_t msg[256];
	uint32_t xid, rxid;
	struct rt_hdr h;
	size_t len;

	/* RFC 8166 §4.5.2 names both as XDR errors answered with ERR_CHUNK. */
	xid = rt_xid(t);
	rt_hdr_call(&h, xid, RT_RDMA_NOMSG);
	len = rt_build(&h, NULL, 0, msg, sizeof(msg));
	probe_one(t, "nomsg_no_chunks", msg, len, xid, ERR_CHUNK_ONLY, "RFC 8166 §4.5.2");

	len = rt_null_msg(t, 1, msg, sizeof(msg), &xid);
	rxid = xid ^ 0x00a5a500;
	rt_put32(msg, rxid);
	probe_one(t, "xid_mismatch", msg, len, rxid, ERR_CHUNK_ONLY, "RFC 8166 §4.5.2");
}

void rt_scen_procs(struct rt_ctx *t)
{
	uint8_t msg[256];
	uint32_t xid;
	struct rt_hdr h;
	size_t len;

	/* An rdma_proc value no version defines. */
	len = rt_null_msg(t, 1, msg, sizeof(msg), &xid);
	rt_put32(msg + 12, 9);
	probe_one(t, "unknown_proc", msg, len, xid, ERR_CHUNK_ONLY, "RFC 8166 §4.5.2");

	/* Deprecated and responder-only procedures: dropped or ERR_CHUNK (RDMA_DONE,
	 * 16 bytes, and RDMA_ERROR, 20, are also shorter than a minimal header:
	 * RFC 8166 §4.5 allows silent discard). */
	xid = rt_xid(t);
	rt_hdr_call(&h, xid, RT_RDMA_MSGP);
	len = rt_build(&h, NULL, 0, msg, sizeof(msg));
	probe_one(t, "rdma_msgp", msg, len, xid, ERR_CHUNK_OR_DROP, "RFC 8166 §4.6.1");

	xid = rt_xid(t);
	rt_hdr_call(&h, xid, RT_RDMA_DONE);
	len = rt_build(&h, NULL, 0, msg, sizeof(msg));
	probe_one(t, "rdma_done", msg, len, xid, ERR_CHUNK_OR_DROP, "RFC 8166 §4.5, §4.6.2");

	xid = rt_xid(t);
	rt_hdr_call(&h, xid, RT_RDMA_ERROR);
	h.err = RT_ERR_CHUNK;
	len = rt_build(&h, NULL, 0, msg, sizeof(msg));
	probe_one(t, "client_rdma_error", msg, len, xid, ERR_CHUNK_OR_DROP,
		  "RFC 8166 §4.5: RDMA_ERROR goes responder to requester");
}
