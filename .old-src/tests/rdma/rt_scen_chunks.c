/*
 * rt_scen_chunks.c - direct data placement as RFC 8166 §3.4/§3.5 and the
 * NFS binding (RFC 8267 §4: NFSv3 READ and WRITE data are DDP-eligible)
 * describe it: long calls, READ into Write chunks, WRITE from Read chunks
 * (one segment and several), and chunks too small for the reply.
 *
 * Files (made by the guest script): t->file holds rt_pattern_byte(offset);
 * t->wfile is scratch space each scenario writes at its own offset.
 */
#include <stdio.h>
#include <string.h>

#include "tests/rdma/rt.h"

#define CANARY 0xa5
#define GAP 64 /* canary bytes between the pieces of a split chunk */

static void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = rt_pattern_byte((uint64_t)i * 3 + seed);
}

static bool canary_ok(const uint8_t *p, uint32_t len)
{
	while (len--)
		if (*p++ != CANARY)
			return false;
	return true;
}

/* Split len bytes into nsegs pieces with canary gaps; fills chunk, returns the first piece. */
static uint8_t *chunk_alloc(struct rt_conn *c, uint32_t len, uint32_t nsegs, struct rt_chunk *ch)
{
	uint32_t per = (len + nsegs - 1) / nsegs, i, n;
	uint8_t *base = rt_data_alloc(c, (size_t)len + (size_t)nsegs * GAP + GAP), *p = base;

	if (!base)
		return NULL;
	memset(base, CANARY, (size_t)len + (size_t)nsegs * GAP + GAP);
	ch->nsegs = nsegs;
	for (i = 0; i < nsegs; i++) {
		n = len - i * per < per ? len - i * per : per;
		ch->segs[i] = rt_seg_of(c, p, n);
		memset(p, 0, n);
		p += n + GAP;
	}
	return base;
}

/* Gather what the server wrote into a split chunk (n bytes in all) into out; check the gaps. */
static int chunk_gather(const struct rt_chunk *ours, const struct rt_chunk *theirs, uint8_t *out,
			uint32_t n, char *why, size_t wn)
{
	uint32_t i, done = 0, l;

	for (i = 0; i < ours->nsegs; i++) {
		const uint8_t *p = (const uint8_t *)(uintptr_t)ours->segs[i].offset;

		l = i < theirs->nsegs ? theirs->segs[i].length : 0;
		if (l > n - done)
			l = n - done;
		memcpy(out + done, p, l);
		done += l;
		if (!canary_ok(p + ours->segs[i].length, GAP)) {
			snprintf(why, wn, "the server wrote past Write chunk segment %u", i);
			return -1;
		}
	}
	if (done != n) {
		snprintf(why, wn, "%u bytes in the Write chunk got %u", n, done);
		return -1;
	}
	return 0;
}

/*
 * NFSv3 READ of count bytes at off with a Write chunk of nsegs segments
 * (RFC 8267 §4: the READ data goes into it, the XDR length stays inline).
 * The data lands in out. Returns 0, or -1 with why.
 */
static int read_via_chunk(struct rt_ctx *t, struct rt_conn *c, const struct rt_fh *fh,
			  uint64_t off, uint32_t count, uint32_t nsegs, uint8_t *out,
			  char *why, size_t n)
{
	uint8_t rpc[256];
	struct rt_xchg x = { .proc = RT_RDMA_MSG, .rpc = rpc, .nwrites = 1 };
	uint32_t got = 0, dlen = 0, st;
	bool eof;
	struct rt_enc e;
	int r;

	if (!chunk_alloc(c, count, nsegs, &x.writes[0])) {
		snprintf(why, n, "no room for a %u-byte chunk", count);
		return -1;
	}
	rt_enc_init(&e, rpc, sizeof(rpc));
	rt_rpc_call_hdr(&e, rt_xid(t), RT_NFS_PROG, 3, RT_NFS3_READ, RT_AUTH_SYS);
	rt_nfs3_read_args(&e, fh, off, count);
	x.rpc_len = e.len;
	r = rt_xchg_run(t, c, &x, why, n);
	if (r == 1)
		snprintf(why, n, "READ answered with RDMA_ERROR err %u", x.h.err);
	if (r)
		goto out;
	r = -1;
	st = rt_nfs3_read_res_hdr(&x.rr.res, &got, &eof, &dlen);
	if (!x.rr.accepted || x.rr.stat || x.rr.res.bad || st) {
		snprintf(why, n, "READ3resok got rpc %s nfs status %u", rt_accept_stat_name(x.rr.stat),
			 st);
	} else if (got != count || dlen != count) {
		snprintf(why, n, "count %u got count %u data length %u", count, got, dlen);
	} else if (rt_dec_left(&x.rr.res)) {
		/* RFC 8166 §3.4.6: the data item (and its XDR pad) is removed from the inline reply. */
		snprintf(why, n, "no inline data after the READ data length got %zu bytes",
			 rt_dec_left(&x.rr.res));
	} else if (x.h.nwrites != 1 || rt_chunk_bytes(&x.h.writes[0]) != count) {
		snprintf(why, n, "the Write chunk echoed with %u bytes got %u chunks, %llu bytes",
			 count, x.h.nwrites,
			 x.h.nwrites ? (unsigned long long)rt_chunk_bytes(&x.h.writes[0]) : 0ull);
	} else {
		r = chunk_gather(&x.writes[0], &x.h.writes[0], out, count, why, n);
	}
out:
	rt_xchg_release(&x);
	return r;
}

/*
 * NFSv3 WRITE (FILE_SYNC) of data with a Read chunk at the data's position
 * (RFC 8267 §4, RFC 8166 §3.4.5), split into nsegs segments, with XID xid
 * (0: a new one) and, if reply_len, a Reply chunk of that size too.
 * 0 or -1 (why).
 */
static int write_via_chunk(struct rt_ctx *t, struct rt_conn *c, const struct rt_fh *fh,
			   uint64_t off, const uint8_t *data, uint32_t count, uint32_t nsegs,
			   uint32_t xid, uint32_t reply_len, char *why, size_t n)
{
	uint8_t rpc[256], *rbuf;
	struct rt_xchg x = { .proc = RT_RDMA_MSG, .rpc = rpc };
	uint32_t per = (count + nsegs - 1) / nsegs, i, l, got = 0, committed = 0, st;
	struct rt_enc e;
	uint8_t *buf;
	size_t pos;
	int r;

	rt_enc_init(&e, rpc, sizeof(rpc));
	rt_rpc_call_hdr(&e, xid ? xid : rt_xid(t), RT_NFS_PROG, 3, RT_NFS3_WRITE, RT_AUTH_SYS);
	pos = rt_nfs3_write_args_hdr(&e, fh, off, count, RT_NFS3_FILE_SYNC);
	x.rpc_len = e.len;
	if (reply_len) {
		rbuf = rt_data_alloc(c, reply_len);
		if (!rbuf) {
			snprintf(why, n, "no room for a Reply chunk");
			return -1;
		}
		x.has_reply = true;
		x.reply.nsegs = 1;
		x.reply.segs[0] = rt_seg_of(c, rbuf, reply_len);
		x.reply_buf = rbuf;
	}
	for (i = 0; i * per < count; i++) {
		l = count - i * per < per ? count - i * per : per;
		buf = rt_data_alloc(c, l);
		if (!buf) {
			snprintf(why, n, "no room for a %u-byte chunk", count);
			return -1;
		}
		memcpy(buf, data + i * per, l);
		/* RFC 8166 §3.4.5: all segments of one Read chunk share its position. */
		x.reads[i] = (struct rt_read_seg){ (uint32_t)pos, rt_seg_of(c, buf, l) };
	}
	x.nreads = i;
	r = rt_xchg_run(t, c, &x, why, n);
	if (r == 1)
		snprintf(why, n, "WRITE answered with RDMA_ERROR err %u", x.h.err);
	if (r)
		goto out;
	r = -1;
	st = rt_nfs3_write_res(&x.rr.res, &got, &committed);
	if (!x.rr.accepted || x.rr.stat || x.rr.res.bad || st)
		snprintf(why, n, "WRITE3resok got rpc %s nfs status %u",
			 rt_accept_stat_name(x.rr.stat), st);
	else if (got != count || committed != RT_NFS3_FILE_SYNC)
		snprintf(why, n, "count %u FILE_SYNC got count %u committed %u", count, got,
			 committed);
	else
		r = 0;
out:
	rt_xchg_release(&x);
	return r;
}

static int compare(const uint8_t *got, const uint8_t *want, uint32_t len, char *why, size_t n)
{
	uint32_t i;

	for (i = 0; i < len; i++) {
		if (got[i] != want[i]) {
			snprintf(why, n, "data read back equal to data written got a mismatch at byte "
				 "%u (%#x, wanted %#x)", i, got[i], want[i]);
			return -1;
		}
	}
	return 0;
}

static bool need_fh(struct rt_ctx *t, const char *name)
{
	if (!t->have_fh)
		rt_fail(t, name, "expected file handles got none: %s", t->fh_why);
	return t->have_fh;
}

/* Report name, then check the connection still answers a NULL. */
static void verdict_alive(struct rt_ctx *t, struct rt_conn *c, const char *name, int r,
			  const char *why, const char *saw)
{
	char w2[200];

	if (r)
		rt_fail(t, name, "expected %s", why);
	else if (rt_null_check(t, c, 1, NULL, w2, sizeof(w2)))
		rt_fail(t, name, "expected a NULL answered afterwards got %s", w2);
	else if (rt_conn_violation(c, w2, sizeof(w2)))
		rt_fail(t, name, "expected %s", w2);
	else
		rt_pass(t, name, "%s", saw);
}

static void long_call_getattr(struct rt_ctx *t)
{
	uint8_t rpc[256];
	struct rt_xchg x = { 0 };
	struct rt_fattr a = { 0 };
	char why[240] = "", saw[120] = "";
	struct rt_conn c;
	struct rt_enc e;
	uint32_t st;
	int r;

	if (!need_fh(t, "long_call_getattr") || rt_open(t, &c, NULL, "long_call_getattr"))
		return;
	rt_enc_init(&e, rpc, sizeof(rpc));
	rt_rpc_call_hdr(&e, rt_xid(t), RT_NFS_PROG, 3, RT_NFS3_GETATTR, RT_AUTH_SYS);
	rt_nfs3_fh(&e, &t->file);
	rt_xchg_long_call(&c, &x, rpc, e.len);
	r = rt_xchg_run(t, &c, &x, why, sizeof(why));
	if (r == 1) {
		snprintf(why, sizeof(why), "GETATTR answered got RDMA_ERROR err %u", x.h.err);
	} else if (r == 0) {
		st = rt_nfs3_getattr_res(&x.rr.res, &a);
		r = -1;
		if (!x.rr.accepted || x.rr.stat || st || x.rr.res.bad)
			snprintf(why, sizeof(why), "GETATTR3resok got rpc %s nfs status %u",
				 rt_accept_stat_name(x.rr.stat), st);
		else if (a.type != 1 || a.size != t->file_size)
			snprintf(why, sizeof(why), "a regular file of %llu bytes got type %u size %llu",
				 (unsigned long long)t->file_size, a.type,
				 (unsigned long long)a.size);
		else
			r = 0;
	}
	snprintf(saw, sizeof(saw), "RDMA_NOMSG + position-zero Read chunk (%zu bytes) -> %s",
		 e.len, x.msg ? rt_proc_name(x.h.proc) : "-");
	rt_xchg_release(&x);
	verdict_alive(t, &c, "long_call_getattr", r, why, saw);
	rt_conn_close(&c);
}

static void long_call_write(struct rt_ctx *t)
{
	enum { LEN = 6000, OFF = 1u << 20 };
	static uint8_t rpc[LEN + 512], data[LEN], back[LEN];
	struct rt_xchg x = { 0 };
	char why[240] = "", saw[120] = "";
	uint32_t got = 0, committed = 0, st;
	struct rt_conn c;
	struct rt_enc e;
	int r;

	if (!need_fh(t, "long_call_write") || rt_open(t, &c, NULL, "long_call_write"))
		return;
	fill(data, LEN, 0x10c);
	rt_enc_init(&e, rpc, sizeof(rpc));
	rt_rpc_call_hdr(&e, rt_xid(t), RT_NFS_PROG, 3, RT_NFS3_WRITE, RT_AUTH_SYS);
	rt_nfs3_write_args_hdr(&e, &t->wfile, OFF, LEN, RT_NFS3_FILE_SYNC);
	rt_enc_fixed(&e, data, LEN);
	rt_xchg_long_call(&c, &x, rpc, e.len);
	r = rt_xchg_run(t, &c, &x, why, sizeof(why));
	if (r == 1) {
		snprintf(why, sizeof(why), "WRITE answered got RDMA_ERROR err %u", x.h.err);
	} else if (r == 0) {
		st = rt_nfs3_write_res(&x.rr.res, &got, &committed);
		r = -1;
		if (!x.rr.accepted || x.rr.stat || st || x.rr.res.bad || got != LEN)
			snprintf(why, sizeof(why), "WRITE3resok count %u got rpc %s nfs status %u "
				 "count %u", LEN, rt_accept_stat_name(x.rr.stat), st, got);
		else
			r = 0;
	}
	rt_xchg_release(&x);
	if (!r)
		r = read_via_chunk(t, &c, &t->wfile, OFF, LEN, 1, back, why, sizeof(why));
	if (!r)
		r = compare(back, data, LEN, why, sizeof(why));
	snprintf(saw, sizeof(saw), "RDMA_NOMSG WRITE of %u bytes in a %zu-byte long call, read back",
		 LEN, e.len);
	verdict_alive(t, &c, "long_call_write", r, why, saw);
	rt_conn_close(&c);
}

void rt_scen_long_call(struct rt_ctx *t)
{
	long_call_getattr(t);
	long_call_write(t);
}

static void read_chunk_case(struct rt_ctx *t, const char *name, uint32_t count, uint32_t nsegs)
{
	static uint8_t out[1u << 20], want[1u << 20];
	char why[240] = "", saw[120];
	const uint64_t off = 4096;
	struct rt_conn c;
	uint32_t i;
	int r;

	if (!need_fh(t, name) || rt_open(t, &c, NULL, name))
		return;
	r = read_via_chunk(t, &c, &t->file, off, count, nsegs, out, why, sizeof(why));
	for (i = 0; i < count; i++)
		want[i] = rt_pattern_byte(off + i);
	if (!r)
		r = compare(out, want, count, why, sizeof(why));
	snprintf(saw, sizeof(saw), "READ %u bytes into a %u-segment Write chunk", count, nsegs);
	verdict_alive(t, &c, name, r, why, saw);
	rt_conn_close(&c);
}

void rt_scen_read_write_chunk(struct rt_ctx *t)
{
	read_chunk_case(t, "read_write_chunk", 65536, 1);
	read_chunk_case(t, "read_write_chunk_multiseg", 65536 + 1000, 4);
}

static void write_chunk_case(struct rt_ctx *t, const char *name, uint64_t off, uint32_t count,
			     uint32_t nsegs)
{
	static uint8_t data[1u << 20], back[1u << 20];
	char why[240] = "", saw[120];
	struct rt_conn c;
	int r;

	if (!need_fh(t, name) || rt_open(t, &c, NULL, name))
		return;
	fill(data, count, (uint32_t)off + nsegs);
	r = write_via_chunk(t, &c, &t->wfile, off, data, count, nsegs, 0, 0, why, sizeof(why));
	if (!r)
		r = read_via_chunk(t, &c, &t->wfile, off, count, 1, back, why, sizeof(why));
	if (!r)
		r = compare(back, data, count, why, sizeof(why));
	snprintf(saw, sizeof(saw), "WRITE %u bytes from a %u-segment Read chunk, read back", count,
		 nsegs);
	verdict_alive(t, &c, name, r, why, saw);
	rt_conn_close(&c);
}

void rt_scen_write_read_chunk(struct rt_ctx *t)
{
	write_chunk_case(t, "write_read_chunk", 0, 65536, 1);
	write_chunk_case(t, "write_read_chunk_multiseg", 256 * 1024, 65536 + 1002, 4);
}

/*
 * A retransmission, as the Linux client makes after a reconnect: the same
 * WRITE (same XID) on a new connection, now with other Read chunk memory
 * and a Reply chunk. Whether the server executes it again or answers from
 * its duplicate request cache, the answer must be framed for the new call
 * (INTEROP.md: a cache that keeps transport headers crashes clients): only
 * our new chunks echoed, a sane header, WRITE3resok.
 */
static void drc_retransmit(struct rt_ctx *t)
{
	enum { LEN = 4096, OFF = 5u << 20 };
	static uint8_t data[LEN], back[LEN];
	char why[240] = "";
	struct rt_conn c;
	uint32_t xid = rt_xid(t);
	int r;

	if (!need_fh(t, "drc_retransmit") || rt_open(t, &c, NULL, "drc_retransmit"))
		return;
	fill(data, LEN, 0xd1c);
	r = write_via_chunk(t, &c, &t->wfile, OFF, data, LEN, 1, xid, 0, why, sizeof(why));
	rt_conn_close(&c);
	if (r) {
		rt_fail(t, "drc_retransmit", "expected the first WRITE answered: %s", why);
		return;
	}
	if (rt_open(t, &c, NULL, "drc_retransmit"))
		return;
	rt_data_alloc(&c, 12345); /* other addresses than on the first connection */
	r = write_via_chunk(t, &c, &t->wfile, OFF, data, LEN, 2, xid, 4096, why, sizeof(why));
	if (!r)
		r = read_via_chunk(t, &c, &t->wfile, OFF, LEN, 1, back, why, sizeof(why));
	if (!r)
		r = compare(back, data, LEN, why, sizeof(why));
	verdict_alive(t, &c, "drc_retransmit", r, why,
		      "same-XID WRITE on a new connection answered with fresh framing");
	rt_conn_close(&c);
}

void rt_scen_drc(struct rt_ctx *t)
{
	drc_retransmit(t);
}

/*
 * READ of 64 KiB into a 4 KiB Write chunk. RFC 8166 §4.5.2-3 / RFC 8267:
 * the reply does not fit what the requester offered: ERR_CHUNK. A READ
 * shortened to what fits is also safe for a client (RFC 1813 §3.3.6 allows
 * short reads) and is accepted, but must say exactly what it placed.
 */
static void undersized_write_chunk(struct rt_ctx *t)
{
	uint8_t rpc[256], *buf;
	struct rt_xchg x = { .proc = RT_RDMA_MSG, .rpc = rpc, .nwrites = 1 };
	char why[240] = "", saw[120] = "";
	uint32_t got = 0, dlen = 0, st, i;
	struct rt_conn c;
	struct rt_enc e;
	bool eof;
	int r;

	if (!need_fh(t, "undersized_write_chunk") ||
	    rt_open(t, &c, NULL, "undersized_write_chunk"))
		return;
	buf = rt_data_alloc(&c, 8192);
	memset(buf, CANARY, 8192);
	x.writes[0].nsegs = 1;
	x.writes[0].segs[0] = rt_seg_of(&c, buf, 4096);
	rt_enc_init(&e, rpc, sizeof(rpc));
	rt_rpc_call_hdr(&e, rt_xid(t), RT_NFS_PROG, 3, RT_NFS3_READ, RT_AUTH_SYS);
	rt_nfs3_read_args(&e, &t->file, 0, 65536);
	x.rpc_len = e.len;
	r = rt_xchg_run(t, &c, &x, why, sizeof(why));
	if (r == 1) {
		r = x.h.err == RT_ERR_CHUNK ? 0 : -1;
		snprintf(why, sizeof(why), "ERR_CHUNK got RDMA_ERROR err %u", x.h.err);
		snprintf(saw, sizeof(saw), "RDMA_ERROR/ERR_CHUNK");
	} else if (r == 0) {
		r = -1;
		st = rt_nfs3_read_res_hdr(&x.rr.res, &got, &eof, &dlen);
		if (!x.rr.accepted || x.rr.stat || st || x.rr.res.bad)
			snprintf(why, sizeof(why), "ERR_CHUNK or a short READ got rpc %s nfs status %u",
				 rt_accept_stat_name(x.rr.stat), st);
		else if (got > 4096 || dlen != got || x.h.nwrites != 1 ||
			 rt_chunk_bytes(&x.h.writes[0]) != got)
			snprintf(why, sizeof(why), "ERR_CHUNK or a READ of at most 4096 bytes got "
				 "count %u, data length %u, %u Write chunks", got, dlen, x.h.nwrites);
		else
			r = 0;
		for (i = 0; !r && i < got; i++)
			if (buf[i] != rt_pattern_byte(i)) {
				snprintf(why, sizeof(why), "file data in the chunk got a mismatch at %u", i);
				r = -1;
			}
		snprintf(saw, sizeof(saw), "READ shortened to %u bytes (no ERR_CHUNK)", got);
	}
	if (!r && !canary_ok(buf + 4096, 4096)) {
		snprintf(why, sizeof(why), "nothing written past the 4096-byte Write chunk got bytes "
			 "overwritten");
		r = -1;
	}
	rt_xchg_release(&x);
	verdict_alive(t, &c, "undersized_write_chunk", r, why, saw);
	rt_conn_close(&c);
}

/* READDIRPLUS of a big directory with a 64-byte Reply chunk: ERR_CHUNK (RFC 8166 §4.5.3). */
static void undersized_reply_chunk(struct rt_ctx *t)
{
	uint8_t rpc[256], *buf;
	struct rt_xchg x = { .proc = RT_RDMA_MSG, .rpc = rpc, .has_reply = true };
	char why[240] = "", saw[120] = "";
	struct rt_conn c;
	struct rt_enc e;
	uint32_t st;
	int r;

	if (!need_fh(t, "undersized_reply_chunk") ||
	    rt_open(t, &c, NULL, "undersized_reply_chunk"))
		return;
	buf = rt_data_alloc(&c, 4096);
	memset(buf, CANARY, 4096);
	x.reply.nsegs = 1;
	x.reply.segs[0] = rt_seg_of(&c, buf, 64);
	x.reply_buf = buf;
	rt_enc_init(&e, rpc, sizeof(rpc));
	rt_rpc_call_hdr(&e, rt_xid(t), RT_NFS_PROG, 3, RT_NFS3_READDIRPLUS, RT_AUTH_SYS);
	rt_nfs3_readdirplus_args(&e, &t->dir, 8192, 32768);
	x.rpc_len = e.len;
	r = rt_xchg_run(t, &c, &x, why, sizeof(why));
	if (r == 1) {
		r = x.h.err == RT_ERR_CHUNK ? 0 : -1;
		snprintf(why, sizeof(why), "ERR_CHUNK got RDMA_ERROR err %u", x.h.err);
		snprintf(saw, sizeof(saw), "RDMA_ERROR/ERR_CHUNK");
	} else if (r == 0) {
		/* A reply that fits is legal only if it is complete and well-formed. */
		st = rt_dec_u32(&x.rr.res);
		r = x.rr.accepted && !x.rr.stat && !x.rr.res.bad ? 0 : -1;
		snprintf(why, sizeof(why), "ERR_CHUNK or a fitting reply got rpc %s",
			 rt_accept_stat_name(x.rr.stat));
		snprintf(saw, sizeof(saw), "READDIRPLUS reply of %zu bytes via %s, nfs status %u",
			 x.body_len, rt_proc_name(x.h.proc), st);
	}
	if (!r && !canary_ok(buf + 64, 4096 - 64)) {
		snprintf(why, sizeof(why), "nothing written past the 64-byte Reply chunk got bytes "
			 "overwritten");
		r = -1;
	}
	rt_xchg_release(&x);
	verdict_alive(t, &c, "undersized_reply_chunk", r, why, saw);
	rt_conn_close(&c);
}

void rt_scen_undersized(struct rt_ctx *t)
{
	undersized_write_chunk(t);
	undersized_reply_chunk(t);
}
