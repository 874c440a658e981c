/*
 * test_nfs4_compound.c - the COMPOUND engine (nfs/v4/compound/nfs4_compound.c) with a
 * test operation table around the real filehandle operations: empty
 * COMPOUNDs and the tag echo, MINOR_VERS_MISMATCH with no results,
 * OP_ILLEGAL for unknown and other-minor-version numbers, stop at the first
 * error, NOTSUPP, BADXDR (arguments and a short argarray), NOFILEHANDLE,
 * the current/saved filehandle (PUTFH, GETFH, SAVEFH, RESTOREFH,
 * BADHANDLE), the NFSv4.1 positional rules (SEQUENCE first,
 * OP_NOT_IN_SESSION, SEQUENCE_POS, 4.0-only operations NOTSUPP), the reply
 * limit (RESOURCE / REP_TOO_BIG at every size, never past the limit; a
 * session's limit counting data sent out of band), too
 * many operations, a header that does not decode and a reply buffer too small;
 * the real table's per-operation flags (session-less, 4.0 only, DRC, put
 * filehandle, inline) and the pre-scan deciding whether a COMPOUND runs on the
 * receiving thread (nfs4_compound_inline_ok over COMPOUND shapes, _peek over
 * encoded arguments) and the op_done hook through which the caller counts
 * operations; RFC 8881 §2.6.3.1.1's WRONGSEC rules for put filehandle
 * operations (nfs4_putfh_checks_sec over its table of cases, and the engine
 * running the sec_check hook when they say so).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfs/v4/nfs4.h"

static struct nfs4_op ops[NFS4_OP_COUNT];
static struct nfs4_arena arena;
static uint8_t msg[8192], reply[65536];
static size_t msg_len, reply_len;

/* ---- test operations ---- */

struct u32_args {
	uint32_t v;
};

static bool dec_u32(struct nfs4_ctx *x, struct xdr_dec *d, void *args)
{
	(void)x;
	return xdr_dec_u32(d, &((struct u32_args *)args)->v);
}

/* ACCESS here: returns the status its argument names. */
static uint32_t exec_status(struct nfs4_ctx *x, void *args, void *res)
{
	(void)x, (void)res;
	return ((struct u32_args *)args)->v;
}

static void enc_marker(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	(void)x, (void)status, (void)res;
	xdr_enc_u32(e, 0xfeedbeefu);
}

/* GETATTR here: a result of as many bytes as its argument says. */
static uint32_t exec_size(struct nfs4_ctx *x, void *args, void *res)
{
	(void)x;
	*(uint32_t *)res = ((struct u32_args *)args)->v;
	return NFS4_OK;
}

static void enc_size(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	uint32_t n = *(const uint32_t *)res;
	uint8_t *p;

	(void)x, (void)status;
	p = xdr_enc_reserve(e, n);
	if (p)
		memset(p, 0x5a, n);
}

static uint32_t exec_ok(struct nfs4_ctx *x, void *args, void *res)
{
	(void)x, (void)args, (void)res;
	return NFS4_OK;
}

static int setup(void **state)
{
	static const uint8_t key[16] = "0123456789abcdef";

	(void)state;
	nfs_fh_key_set(key);
	memcpy(ops, nfs4_ops, sizeof(ops));
	ops[OP_ACCESS] = (struct nfs4_op){ "ACCESS", dec_u32, exec_status, enc_marker, sizeof(struct u32_args), 4, 0 };
	ops[OP_GETATTR] = (struct nfs4_op){ "GETATTR", dec_u32, exec_size, enc_size, sizeof(struct u32_args), 4, 0 };
	ops[OP_SEQUENCE] = (struct nfs4_op){ .name = "SEQUENCE", .execute = exec_ok };
	ops[OP_EXCHANGE_ID] = (struct nfs4_op){ .name = "EXCHANGE_ID", .execute = exec_ok, .flags = NFS4_OPF_NO_SEQ };
	ops[OP_SETCLIENTID] = (struct nfs4_op){ .name = "SETCLIENTID", .execute = exec_ok, .flags = NFS4_OPF_V40 };
	ops[OP_LOOKUP].execute = NULL; /* not built: NOTSUPP */
	return 0;
}

/* ---- building calls, reading replies ---- */

static struct xdr_enc mb;

static void call_begin(const char *tag, uint32_t minor, uint32_t numops)
{
	xdr_enc_init(&mb, msg, sizeof(msg));
	xdr_enc_opaque(&mb, tag, (uint32_t)strlen(tag));
	xdr_enc_u32(&mb, minor);
	xdr_enc_u32(&mb, numops);
}

static void op(uint32_t num)
{
	xdr_enc_u32(&mb, num);
}

static void op_arg(uint32_t num, uint32_t arg)
{
	xdr_enc_u32(&mb, num);
	xdr_enc_u32(&mb, arg);
}

static void op_putfh(const struct nfs_fh *fh)
{
	xdr_enc_u32(&mb, OP_PUTFH);
	xdr_enc_opaque(&mb, fh->data, fh->len);
}

static enum nfs4_compound_outcome run_limited(uint32_t minor_max, uint32_t reply_max, size_t cap, uint32_t *status)
{
	struct xdr_dec d;
	struct xdr_enc e;
	enum nfs4_compound_outcome out;

	assert_false(mb.overflow);
	msg_len = xdr_enc_len(&mb);
	arena.ctx.ops = ops;
	arena.ctx.minor_max = minor_max;
	arena.ctx.reply_max = reply_max;
	arena.ctx.call = NULL;
	/* A stale current filehandle from the last call must not leak in. */
	arena.ctx.cur.set = true;
	xdr_dec_init(&d, msg, msg_len);
	xdr_enc_init(&e, reply, cap);
	out = nfs4_compound_run(&arena, &d, &e, status);
	reply_len = xdr_enc_len(&e);
	assert_true(reply_len <= cap);
	return out;
}

static uint32_t run(void)
{
	uint32_t status = 0xdead;

	assert_int_equal(run_limited(NFS4_MINOR_MAX, 0, sizeof(reply), &status), NFS4_COMPOUND_DONE);
	return status;
}

static struct xdr_dec rd;

/* Reads the reply header; returns the result count. */
static uint32_t reply_hdr(uint32_t want_status, const char *want_tag)
{
	uint32_t status = 0, count = 0, taglen = 0;
	const uint8_t *tag = NULL;

	xdr_dec_init(&rd, reply, reply_len);
	assert_true(xdr_dec_u32(&rd, &status));
	assert_int_equal(status, want_status);
	assert_true(xdr_dec_opaque(&rd, 4096, &tag, &taglen));
	assert_int_equal(taglen, strlen(want_tag));
	assert_memory_equal(tag, want_tag, taglen);
	assert_true(xdr_dec_u32(&rd, &count));
	return count;
}

static void reply_res(uint32_t want_op, uint32_t want_status)
{
	uint32_t resop, status;

	assert_true(xdr_dec_u32(&rd, &resop));
	assert_true(xdr_dec_u32(&rd, &status));
	assert_int_equal(resop, want_op);
	assert_int_equal(status, want_status);
}

static void reply_end(void)
{
	assert_int_equal(xdr_dec_remaining(&rd), 0);
}

static void make_fh(struct nfs_fh *fh, uint32_t export_id, uint8_t fill)
{
	struct be_handle bh = { .len = 12 };

	memset(bh.data, fill, bh.len);
	assert_true(nfs_fh_wrap(fh, export_id, &bh, NFS4_FHSIZE));
}

/* ---- tests ---- */

static void test_empty_and_tag(void **state)
{
	(void)state;
	call_begin("", 0, 0);
	assert_int_equal(run(), NFS4_OK);
	assert_int_equal(reply_hdr(NFS4_OK, ""), 0);
	reply_end();
	call_begin("abc", 2, 0); /* tag of 3 bytes: padded */
	assert_int_equal(run(), NFS4_OK);
	assert_int_equal(reply_len, 4 + 8 + 4);
	assert_int_equal(reply_hdr(NFS4_OK, "abc"), 0);
	reply_end();
}

static void test_minor_version(void **state)
{
	(void)state;
	/* RFC 8881 §16.2.3: no results at all, whatever the operations. */
	call_begin("t", 3, 2);
	op_arg(OP_ACCESS, 0);
	op_arg(OP_ACCESS, 0);
	assert_int_equal(run(), NFS4ERR_MINOR_VERS_MISMATCH);
	assert_int_equal(reply_hdr(NFS4ERR_MINOR_VERS_MISMATCH, "t"), 0);
	reply_end();
	call_begin("t", UINT32_MAX, 0);
	assert_int_equal(run(), NFS4ERR_MINOR_VERS_MISMATCH);
	/* A server limited to 4.0 refuses 4.1. */
	call_begin("t", 1, 1);
	op(OP_SEQUENCE);
	assert_int_equal(run_limited(0, 0, sizeof(reply), NULL), NFS4_COMPOUND_DONE);
	assert_int_equal(reply_hdr(NFS4ERR_MINOR_VERS_MISMATCH, "t"), 0);
}

static void test_illegal(void **state)
{
	/* [minor, opnum]: outside the minor version's numbers. */
	static const uint32_t cases[][2] = {
		{ 0, 0 }, { 0, 1 }, { 0, 2 }, { 0, 40 }, { 0, 58 }, { 1, 59 }, { 1, 71 }, { 1, 72 }, { 2, 76 },
		{ 2, OP_ILLEGAL }, { 2, UINT32_MAX }, { 1, 2 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		call_begin("x", cases[i][0], 2);
		op(cases[i][1]);
		op_arg(OP_ACCESS, 0);
		assert_int_equal(run(), NFS4ERR_OP_ILLEGAL);
		assert_int_equal(reply_hdr(NFS4ERR_OP_ILLEGAL, "x"), 1);
		reply_res(OP_ILLEGAL, NFS4ERR_OP_ILLEGAL);
		reply_end();
	}
	/* 4.2 numbers in 4.2 are known (not built: NOTSUPP). */
	call_begin("", 2, 2);
	op(OP_SEQUENCE);
	op(OP_WRITE_SAME);
	assert_int_equal(run(), NFS4ERR_NOTSUPP);
}

static void test_stop_at_first_error(void **state)
{
	(void)state;
	call_begin("s", 0, 3);
	op_arg(OP_ACCESS, NFS4_OK);
	op_arg(OP_ACCESS, NFS4ERR_IO);
	op_arg(OP_ACCESS, NFS4_OK);
	assert_int_equal(run(), NFS4ERR_IO);
	assert_int_equal(reply_hdr(NFS4ERR_IO, "s"), 2);
	reply_res(OP_ACCESS, NFS4_OK);
	uint32_t marker;
	assert_true(xdr_dec_u32(&rd, &marker));
	assert_int_equal(marker, 0xfeedbeefu);
	reply_res(OP_ACCESS, NFS4ERR_IO); /* no result body after an error */
	reply_end();
	/* NOTSUPP stops too. */
	call_begin("", 0, 3);
	op_arg(OP_ACCESS, NFS4_OK);
	op(OP_LOOKUP);
	op_arg(OP_ACCESS, NFS4_OK);
	assert_int_equal(run(), NFS4ERR_NOTSUPP);
	assert_int_equal(reply_hdr(NFS4ERR_NOTSUPP, ""), 2);
}

static void test_badxdr(void **state)
{
	(void)state;
	/* The argument is missing. */
	call_begin("", 0, 1);
	op(OP_ACCESS);
	assert_int_equal(run(), NFS4ERR_BADXDR);
	assert_int_equal(reply_hdr(NFS4ERR_BADXDR, ""), 1);
	reply_res(OP_ACCESS, NFS4ERR_BADXDR);
	reply_end();
	/* The array holds fewer operations than its count. */
	call_begin("", 0, 3);
	op_arg(OP_ACCESS, NFS4_OK);
	assert_int_equal(run(), NFS4ERR_BADXDR);
	assert_int_equal(reply_hdr(NFS4ERR_BADXDR, ""), 2);
	reply_res(OP_ACCESS, NFS4_OK);
	xdr_dec_inline(&rd, 4);
	reply_res(OP_ILLEGAL, NFS4ERR_BADXDR);
	reply_end();
	/* PUTFH with a handle longer than NFS4_FHSIZE. */
	static const uint8_t big[NFS4_FHSIZE + 4];
	call_begin("", 0, 1);
	xdr_enc_u32(&mb, OP_PUTFH);
	xdr_enc_opaque(&mb, big, sizeof(big));
	assert_int_equal(run(), NFS4ERR_BADXDR);
}

static void test_filehandles(void **state)
{
	struct nfs_fh a, b, bad;
	const uint8_t *p;
	uint32_t len;

	(void)state;
	make_fh(&a, 7, 0x11);
	make_fh(&b, 9, 0x22);
	/* No current filehandle yet (the last call's does not count). */
	call_begin("", 0, 1);
	op(OP_GETFH);
	assert_int_equal(run(), NFS4ERR_NOFILEHANDLE);
	call_begin("", 0, 1);
	op(OP_SAVEFH);
	assert_int_equal(run(), NFS4ERR_NOFILEHANDLE);
	call_begin("", 0, 1);
	op(OP_RESTOREFH);
	assert_int_equal(run(), NFS4ERR_RESTOREFH);
	/* PUTFH a, SAVEFH, PUTFH b, GETFH (b), RESTOREFH, GETFH (a). */
	call_begin("fh", 0, 6);
	op_putfh(&a);
	op(OP_SAVEFH);
	op_putfh(&b);
	op(OP_GETFH);
	op(OP_RESTOREFH);
	op(OP_GETFH);
	assert_int_equal(run(), NFS4_OK);
	assert_int_equal(reply_hdr(NFS4_OK, "fh"), 6);
	reply_res(OP_PUTFH, NFS4_OK);
	reply_res(OP_SAVEFH, NFS4_OK);
	reply_res(OP_PUTFH, NFS4_OK);
	reply_res(OP_GETFH, NFS4_OK);
	assert_true(xdr_dec_opaque(&rd, NFS4_FHSIZE, &p, &len));
	assert_int_equal(len, b.len);
	assert_memory_equal(p, b.data, len);
	reply_res(OP_RESTOREFH, NFS4_OK);
	reply_res(OP_GETFH, NFS4_OK);
	assert_true(xdr_dec_opaque(&rd, NFS4_FHSIZE, &p, &len));
	assert_int_equal(len, a.len);
	assert_memory_equal(p, a.data, len);
	reply_end();
	/* A changed byte (MAC), and an empty handle: BADHANDLE, current unchanged. */
	bad = a;
	bad.data[bad.len - 1] ^= 1;
	call_begin("", 0, 2);
	op_putfh(&bad);
	op(OP_GETFH);
	assert_int_equal(run(), NFS4ERR_BADHANDLE);
	assert_int_equal(reply_hdr(NFS4ERR_BADHANDLE, ""), 1);
	bad.len = 0;
	call_begin("", 0, 1);
	op_putfh(&bad);
	assert_int_equal(run(), NFS4ERR_BADHANDLE);
}

static void test_v41_rules(void **state)
{
	(void)state;
	/* RFC 8881 §18.46.3: the first operation must be SEQUENCE ... */
	call_begin("", 1, 1);
	op_arg(OP_ACCESS, NFS4_OK);
	assert_int_equal(run(), NFS4ERR_OP_NOT_IN_SESSION);
	assert_int_equal(reply_hdr(NFS4ERR_OP_NOT_IN_SESSION, ""), 1);
	reply_res(OP_ACCESS, NFS4ERR_OP_NOT_IN_SESSION);
	/* ... or a session-less one. */
	call_begin("", 1, 1);
	op(OP_EXCHANGE_ID);
	assert_int_equal(run(), NFS4_OK);
	/* SEQUENCE only first. */
	call_begin("", 2, 3);
	op(OP_SEQUENCE);
	op_arg(OP_ACCESS, NFS4_OK);
	op(OP_SEQUENCE);
	assert_int_equal(run(), NFS4ERR_SEQUENCE_POS);
	assert_int_equal(reply_hdr(NFS4ERR_SEQUENCE_POS, ""), 3);
	/* 4.0-only operations are NOTSUPP in 4.1 (and run in 4.0). */
	call_begin("", 1, 2);
	op(OP_SEQUENCE);
	op(OP_SETCLIENTID);
	assert_int_equal(run(), NFS4ERR_NOTSUPP);
	call_begin("", 0, 1);
	op(OP_SETCLIENTID);
	assert_int_equal(run(), NFS4_OK);
	/* 4.0 has no positional rule. */
	call_begin("", 0, 1);
	op_arg(OP_ACCESS, NFS4_OK);
	assert_int_equal(run(), NFS4_OK);
}

/* Reply limit: a result of n bytes under a limit of lim bytes, every n. */
static void test_reply_limit(void **state)
{
	const uint32_t lim = 256;

	(void)state;
	for (uint32_t minor = 0; minor <= 1; minor++) {
		uint32_t too_big = minor ? NFS4ERR_REP_TOO_BIG : NFS4ERR_RESOURCE;
		for (uint32_t n = 0; n <= lim; n += 4) {
			uint32_t status;
			call_begin("lim", minor, minor ? 3 : 2);
			if (minor)
				op(OP_SEQUENCE);
			op_arg(OP_GETATTR, n);
			op_arg(OP_ACCESS, NFS4_OK);
			assert_int_equal(run_limited(2, lim, sizeof(reply), &status), NFS4_COMPOUND_DONE);
			assert_true(reply_len <= lim);
			/* header 16, SEQUENCE 8, GETATTR 8 + n, ACCESS 12 */
			size_t need = 16 + (minor ? 8 : 0) + 8 + n + 12;
			assert_int_equal(status, need <= lim ? NFS4_OK : too_big);
			if (status == too_big && 16 + (minor ? 8u : 0u) + 8 + n > lim - NFS4_REPLY_RESERVE) {
				uint32_t count = reply_hdr(too_big, "lim");
				assert_int_equal(count, minor ? 2 : 1);
				if (minor)
					reply_res(OP_SEQUENCE, NFS4_OK);
				reply_res(OP_GETATTR, too_big);
				reply_end();
			}
		}
	}
	/* The buffer, not reply_max, is the limit when it is smaller. */
	call_begin("", 0, 1);
	op_arg(OP_GETATTR, 4096);
	uint32_t status;
	assert_int_equal(run_limited(2, 0, 512, &status), NFS4_COMPOUND_DONE);
	assert_int_equal(status, NFS4ERR_RESOURCE);
}

/* SEQUENCE lowering the limit (RFC 8881 §2.10.6.4): here to 100 bytes, as for a
 * cached reply (REP_TOO_BIG_TO_CACHE). */
static uint32_t exec_limit(struct nfs4_ctx *x, void *args, void *res)
{
	(void)args, (void)res;
	nfs4_compound_limit(x, 100, NFS4ERR_REP_TOO_BIG_TO_CACHE);
	return NFS4_OK;
}

static void test_session_limit(void **state)
{
	struct nfs4_op saved = ops[OP_SEQUENCE];

	(void)state;
	ops[OP_SEQUENCE].execute = exec_limit;
	for (uint32_t n = 0; n <= 120; n += 4) {
		uint32_t status;
		call_begin("", 1, 2);
		op(OP_SEQUENCE);
		op_arg(OP_GETATTR, n);
		assert_int_equal(run_limited(2, 0, sizeof(reply), &status), NFS4_COMPOUND_DONE);
		assert_true(reply_len <= 100);
		/* header 12, SEQUENCE 8, GETATTR 8 + n */
		assert_int_equal(status, 28 + n <= 100 ? NFS4_OK : NFS4ERR_REP_TOO_BIG_TO_CACHE);
	}
	ops[OP_SEQUENCE] = saved;
}

/* READ here: n bytes of data sent out of band (as rpc_enc_ddp() records them);
 * with room_first, execute asks nfs4_compound_room() first, as READ does. */
static struct rpc_call ddp_call;
static bool room_first;
static uint8_t ddp_data[256];

static uint32_t exec_ddp(struct nfs4_ctx *x, void *args, void *res)
{
	uint32_t n = ((struct u32_args *)args)->v;

	*(uint32_t *)res = n;
	return room_first ? nfs4_compound_room(x, 16u + n + XDR_PAD(n)) : NFS4_OK;
}

static void enc_ddp(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	uint32_t n = *(const uint32_t *)res;

	(void)status;
	xdr_enc_u32(e, 1); /* eof */
	xdr_enc_u32(e, n);
	x->call->ddp_out[x->call->n_ddp_out++] =
		(struct rpc_ddp_out){ .offset = xdr_enc_len(e), .len = n, .data = ddp_data };
}

static uint32_t exec_limit_100(struct nfs4_ctx *x, void *args, void *res)
{
	(void)args, (void)res;
	nfs4_compound_limit(x, 100, NFS4ERR_REP_TOO_BIG);
	return NFS4_OK;
}

/* RFC 8881 §2.10.6.4: data sent outside the reply buffer counts against the
 * session's limit too (issue 24 defect 8), whether READ asks first or the
 * engine finds it after encoding; the DDP items of a refused result go. */
static void test_session_limit_ddp(void **state)
{
	struct nfs4_op saved = ops[OP_SEQUENCE], saved_read = ops[OP_READ];

	(void)state;
	ops[OP_SEQUENCE].execute = exec_limit_100;
	ops[OP_READ] = (struct nfs4_op){ "READ", dec_u32, exec_ddp, enc_ddp, sizeof(struct u32_args), 4, 0 };
	for (int pass = 0; pass < 2; pass++) {
		room_first = pass == 1;
		for (uint32_t n = 0; n <= 120; n++) {
			uint32_t status;
			call_begin("", 1, 2);
			op(OP_SEQUENCE);
			op_arg(OP_READ, n);
			ddp_call.n_ddp_out = 0;
			arena.ctx.call = &ddp_call;
			xdr_dec_init(&rd, msg, xdr_enc_len(&mb));
			struct xdr_enc e;
			xdr_enc_init(&e, reply, sizeof(reply));
			arena.ctx.ops = ops, arena.ctx.minor_max = 2, arena.ctx.reply_max = 0;
			assert_int_equal(nfs4_compound_run(&arena, &rd, &e, &status), NFS4_COMPOUND_DONE);
			arena.ctx.call = NULL;
			/* header 12, SEQUENCE 8, READ 8 + eof 4 + length 4 + n + padding */
			size_t need = 12 + 8 + 16 + n + XDR_PAD(n);
			assert_int_equal(status, need <= 100 ? NFS4_OK : NFS4ERR_REP_TOO_BIG);
			assert_int_equal(ddp_call.n_ddp_out, need <= 100 ? 1 : 0);
			assert_true(xdr_enc_len(&e) + (need <= 100 ? n + XDR_PAD(n) : 0) <= 100);
		}
	}
	room_first = false;
	ops[OP_SEQUENCE] = saved;
	ops[OP_READ] = saved_read;
}

static void test_too_many_ops_and_garbage(void **state)
{
	uint32_t status;

	(void)state;
	call_begin("", 0, NFS4_MAX_OPS + 1);
	assert_int_equal(run(), NFS4ERR_RESOURCE);
	assert_int_equal(reply_hdr(NFS4ERR_RESOURCE, ""), 0);
	call_begin("", 1, UINT32_MAX);
	assert_int_equal(run(), NFS4ERR_TOO_MANY_OPS);
	/* NFS4_MAX_OPS operations are fine. */
	call_begin("", 0, NFS4_MAX_OPS);
	for (unsigned i = 0; i < NFS4_MAX_OPS; i++)
		op_arg(OP_ACCESS, NFS4_OK);
	assert_int_equal(run(), NFS4_OK);
	assert_int_equal(reply_hdr(NFS4_OK, ""), NFS4_MAX_OPS);
	/* A header that does not decode: GARBAGE_ARGS, nothing written. */
	xdr_enc_init(&mb, msg, sizeof(msg));
	xdr_enc_u32(&mb, 8);
	xdr_enc_u32(&mb, 0);
	assert_int_equal(run_limited(2, 0, sizeof(reply), &status), NFS4_COMPOUND_GARBAGE);
	assert_int_equal(reply_len, 0);
	/* No room for the header itself. */
	call_begin("a long tag", 0, 0);
	assert_int_equal(run_limited(2, 0, 12, &status), NFS4_COMPOUND_NOROOM);
	assert_int_equal(run_limited(2, 4, sizeof(reply), &status), NFS4_COMPOUND_NOROOM);
}

/* The real table's flags are the RFC's lists (nfs4_op_table.c): RFC 8881 §18.46.3 (session-less),
 * §17 (4.0 only), RFC 7530 §3.1.1, §9.1.7 (kept in the DRC). */
static void test_table_flags(void **state)
{
	static const uint32_t no_seq[] = { OP_EXCHANGE_ID, OP_CREATE_SESSION, OP_DESTROY_SESSION,
					   OP_BIND_CONN_TO_SESSION, OP_DESTROY_CLIENTID };
	static const uint32_t v40[] = { OP_OPEN_CONFIRM, OP_RENEW, OP_SETCLIENTID, OP_SETCLIENTID_CONFIRM,
					OP_RELEASE_LOCKOWNER };
	static const uint32_t drc[] = { OP_CREATE, OP_LINK, OP_REMOVE, OP_RENAME, OP_SETATTR, OP_WRITE };
	static const uint32_t putfh[] = { OP_PUTFH, OP_PUTPUBFH, OP_PUTROOTFH, OP_RESTOREFH };
	static const uint32_t inl[] = { OP_SEQUENCE, OP_PUTFH, OP_PUTPUBFH, OP_PUTROOTFH, OP_GETFH,
					OP_SAVEFH, OP_RESTOREFH, OP_GETATTR, OP_LOOKUP };
	const struct {
		uint8_t flag;
		const uint32_t *ops;
		unsigned n;
	} sets[] = { { NFS4_OPF_NO_SEQ, no_seq, 5 }, { NFS4_OPF_V40, v40, 5 }, { NFS4_OPF_DRC, drc, 6 },
		     { NFS4_OPF_PUTFH, putfh, 4 }, { NFS4_OPF_INLINE, inl, 9 } };

	(void)state;
	for (unsigned k = 0; k < 5; k++) {
		for (uint32_t op = 0; op < NFS4_OP_COUNT; op++) {
			bool want = false;

			for (unsigned i = 0; i < sets[k].n; i++)
				want |= sets[k].ops[i] == op;
			assert_int_equal(!!(nfs4_ops[op].flags & sets[k].flag), want);
		}
	}
}

/* nfs4_compound_inline_ok over the real table: a COMPOUND runs on the receiving thread only when
 * every one of its operations may, decided before SEQUENCE takes its slot (RFC 8881 §2.10.6.1). */
static void test_inline_shapes(void **state)
{
	static const struct {
		const char *what;
		uint32_t ops[6];
		unsigned n;
		uint32_t numops; /* the header's count */
		bool inline_ok;
	} cases[] = {
		{ "stat", { OP_SEQUENCE, OP_PUTFH, OP_GETATTR }, 3, 3, true },
		{ "lookup", { OP_SEQUENCE, OP_PUTFH, OP_LOOKUP, OP_GETFH, OP_GETATTR }, 5, 5, true },
		{ "mount", { OP_SEQUENCE, OP_PUTROOTFH, OP_GETFH, OP_GETATTR }, 4, 4, true },
		{ "lookup, no attributes", { OP_SEQUENCE, OP_PUTFH, OP_LOOKUP, OP_GETFH }, 4, 4, true },
		{ "savefh", { OP_SEQUENCE, OP_PUTFH, OP_SAVEFH, OP_LOOKUP, OP_RESTOREFH, OP_GETATTR }, 6, 6, true },
		{ "4.0 stat", { OP_PUTFH, OP_GETATTR }, 2, 2, true },
		{ "read", { OP_SEQUENCE, OP_PUTFH, OP_READ }, 3, 3, false },
		{ "access", { OP_SEQUENCE, OP_PUTFH, OP_ACCESS, OP_GETATTR }, 4, 4, false },
		{ "write last", { OP_SEQUENCE, OP_PUTFH, OP_GETATTR, OP_WRITE }, 4, 4, false },
		{ "open", { OP_SEQUENCE, OP_PUTFH, OP_OPEN, OP_GETFH, OP_GETATTR }, 5, 5, false },
		{ "session-less", { OP_EXCHANGE_ID }, 1, 1, false },
		{ "illegal", { OP_SEQUENCE, OP_PUTFH, 9999 }, 3, 3, false },
		{ "below first", { OP_SEQUENCE, 2 }, 2, 2, false },
		{ "unseen tail", { OP_SEQUENCE, OP_PUTFH, OP_GETATTR }, 3, 4, false },
		{ "empty", { 0 }, 0, 0, false },
		{ "too many", { OP_SEQUENCE }, 1, NFS4_MAX_OPS + 1, false },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool got = nfs4_compound_inline_ok(nfs4_ops, cases[i].ops, cases[i].n, cases[i].numops, false);
		bool has_getattr = false;

		if (got != cases[i].inline_ok)
			fail_msg("%s: %d, expected %d", cases[i].what, got, cases[i].inline_ok);
		for (unsigned k = 0; k < cases[i].n; k++)
			has_getattr |= cases[i].ops[k] == OP_GETATTR;
		/* RFC 8881 §10.4.3: with a delegation out, a GETATTR may need CB_GETATTR: a worker's */
		got = nfs4_compound_inline_ok(nfs4_ops, cases[i].ops, cases[i].n, cases[i].numops, true);
		if (got != (cases[i].inline_ok && !has_getattr))
			fail_msg("%s with delegations out: %d", cases[i].what, got);
	}
}

/* nfs4_compound_inline_peek walks the encoded arguments with the real decoders: through PUTFH's
 * handle and LOOKUP's name, stopping at READ; a short array or bad arguments go to a worker. */
static void test_inline_peek(void **state)
{
	struct nfs_fh fh;
	struct xdr_dec d;

	(void)state;
	make_fh(&fh, 1, 0x5a);
	call_begin("t", 1, 4);
	op(OP_SEQUENCE);
	for (unsigned i = 0; i < 4; i++) /* sessionid (16), sequenceid, slotid, highest slotid */
		xdr_enc_u32(&mb, i);
	for (unsigned i = 0; i < 3; i++)
		xdr_enc_u32(&mb, i);
	xdr_enc_u32(&mb, 0); /* cachethis */
	op_putfh(&fh);
	op(OP_LOOKUP);
	xdr_enc_opaque(&mb, "data", 4);
	op(OP_GETFH);
	xdr_dec_init(&d, msg, xdr_enc_len(&mb));
	assert_true(nfs4_compound_inline_peek(&arena, nfs4_ops, &d, false));
	xdr_dec_init(&d, msg, xdr_enc_len(&mb) - 4); /* GETFH missing: the array is short */
	assert_false(nfs4_compound_inline_peek(&arena, nfs4_ops, &d, false));

	call_begin("t", 1, 3);
	op_putfh(&fh);
	op_arg(OP_READ, 0);
	op(OP_GETATTR);
	xdr_dec_init(&d, msg, xdr_enc_len(&mb));
	assert_false(nfs4_compound_inline_peek(&arena, nfs4_ops, &d, false));

	call_begin("t", 1, 2);
	op(OP_PUTFH);
	xdr_enc_u32(&mb, 100000); /* a handle longer than NFS4_FHSIZE: BADXDR, a worker's answer */
	op(OP_GETATTR);
	xdr_dec_init(&d, msg, xdr_enc_len(&mb));
	assert_false(nfs4_compound_inline_peek(&arena, nfs4_ops, &d, false));
}

static uint32_t done_ops[4], done_status[4], done_n;

static void count_op(const struct nfs4_ctx *x, uint32_t op, uint32_t status, uint64_t ns)
{
	(void)x, (void)ns;
	if (done_n < 4) {
		done_ops[done_n] = op;
		done_status[done_n] = status;
	}
	done_n++;
}

/* The engine tells its caller of every operation it ran (the stats count through it), ILLEGAL too. */
static void test_op_done_hook(void **state)
{
	(void)state;
	done_n = 0;
	arena.ctx.op_done = count_op;
	call_begin("", 0, 3);
	op_arg(OP_ACCESS, NFS4_OK);
	op(OP_SEQUENCE);
	op_arg(OP_ACCESS, NFS4_OK);
	assert_int_equal(run(), NFS4ERR_OP_ILLEGAL); /* SEQUENCE is not a 4.0 operation */
	assert_int_equal(done_n, 2);
	assert_int_equal(done_ops[0], OP_ACCESS);
	assert_int_equal(done_status[0], NFS4_OK);
	assert_int_equal(done_ops[1], OP_SEQUENCE);
	assert_int_equal(done_status[1], NFS4ERR_OP_ILLEGAL);
	arena.ctx.op_done = NULL;
	call_begin("", 0, 1);
	op_arg(OP_ACCESS, NFS4_OK);
	assert_int_equal(run(), NFS4_OK);
	assert_int_equal(done_n, 2);
}

/* RFC 8881 §2.6.3.1.1: does a put filehandle operation check its flavor, given what follows? */
static void test_putfh_sec_rules(void **state)
{
	static const struct {
		uint32_t next[NFS4_SEC_PEEK];
		unsigned n;
		bool check;
		const char *why;
	} cases[] = {
		{ { 0 }, 0, false, "§2.6.3.1.1.6: nothing follows" },
		{ { OP_GETATTR }, 1, true, "§2.6.3.1.1.7: anything else" },
		{ { OP_READ }, 1, true, "§2.6.3.1.1.7" },
		{ { OP_GETFH }, 1, true, "§2.6.3.1.1.7" },
		{ { OP_LOOKUP }, 1, false, "§2.6.3.1.1.3: LOOKUP checks its result" },
		{ { OP_OPEN }, 1, false, "§2.6.3.1.1.3: OPEN checks what it opens" },
		{ { OP_LOOKUPP }, 1, false, "§2.6.3.1.1.4" },
		{ { OP_SECINFO }, 1, false, "§2.6.3.1.1.5" },
		{ { OP_SECINFO_NO_NAME }, 1, false, "§2.6.3.1.1.5" },
		{ { OP_PUTFH }, 1, false, "§2.6.3.1.1.2: the last put filehandle operation decides" },
		{ { OP_PUTROOTFH }, 1, false, "§2.6.3.1.1.2" },
		{ { OP_PUTPUBFH }, 1, false, "§2.6.3.1.1.2" },
		{ { OP_RESTOREFH }, 1, false, "§2.6.3.1.1.2" },
		{ { OP_SAVEFH }, 1, false, "§2.6.3.1.1.1: SAVEFH, then nothing" },
		{ { OP_SAVEFH, OP_GETATTR }, 2, true, "§2.6.3.1.1.1: as if SAVEFH were not there" },
		{ { OP_SAVEFH, OP_SAVEFH, OP_LOOKUP }, 3, false, "§2.6.3.1.1.1 + .3" },
		{ { OP_SAVEFH, OP_PUTFH }, 2, false, "§2.6.3.1.1.1 + .2" },
		{ { OP_SAVEFH, OP_SECINFO_NO_NAME }, 2, false, "§2.6.3.1.1.1 + .5" },
		{ { 2 }, 1, false, "no operation: ILLEGAL follows" },
		{ { 9999 }, 1, false, "no operation: ILLEGAL follows" },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (nfs4_putfh_checks_sec(cases[i].next, cases[i].n) != cases[i].check)
			fail_msg("case %u (%s): want %s", i, cases[i].why, cases[i].check ? "a check" : "none");
	}
}

static unsigned sec_checks;

static uint32_t sec_wrong(struct nfs4_ctx *x)
{
	(void)x;
	sec_checks++;
	return NFS4ERR_WRONGSEC;
}

/* The engine runs sec_check after a put filehandle operation only when what follows needs it. */
static void test_putfh_sec_hook(void **state)
{
	struct nfs_fh fh;

	(void)state;
	make_fh(&fh, 7, 1);
	arena.ctx.sec_check = sec_wrong;
	sec_checks = 0;
	call_begin("", 0, 3); /* PUTFH, SAVEFH, GETFH: PUTFH checks (SAVEFH looked through) */
	op_putfh(&fh);
	op(OP_SAVEFH);
	op(OP_GETFH);
	assert_int_equal(run(), NFS4ERR_WRONGSEC);
	reply_hdr(NFS4ERR_WRONGSEC, "");
	reply_res(OP_PUTFH, NFS4ERR_WRONGSEC);
	reply_end();
	assert_int_equal(sec_checks, 1);
	call_begin("", 0, 2); /* PUTFH alone then PUTFH, GETFH: only the second checks */
	op_putfh(&fh);
	op_putfh(&fh);
	assert_int_equal(run(), NFS4_OK);
	assert_int_equal(sec_checks, 1);
	call_begin("", 0, 3);
	op_putfh(&fh);
	op_putfh(&fh);
	op(OP_GETFH);
	assert_int_equal(run(), NFS4ERR_WRONGSEC);
	reply_hdr(NFS4ERR_WRONGSEC, "");
	reply_res(OP_PUTFH, NFS4_OK);
	reply_res(OP_PUTFH, NFS4ERR_WRONGSEC);
	reply_end();
	assert_int_equal(sec_checks, 2);
	call_begin("", 0, 2); /* PUTFH, LOOKUP: no check (§2.6.3.1.1.3) */
	op_putfh(&fh);
	op(OP_LOOKUP); /* not built in this table: NOTSUPP, after PUTFH's OK */
	assert_int_equal(run(), NFS4ERR_NOTSUPP);
	assert_int_equal(sec_checks, 2);
	arena.ctx.sec_check = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_and_tag),
		cmocka_unit_test(test_minor_version),
		cmocka_unit_test(test_illegal),
		cmocka_unit_test(test_stop_at_first_error),
		cmocka_unit_test(test_badxdr),
		cmocka_unit_test(test_filehandles),
		cmocka_unit_test(test_v41_rules),
		cmocka_unit_test(test_reply_limit),
		cmocka_unit_test(test_session_limit_ddp),
		cmocka_unit_test(test_too_many_ops_and_garbage),
		cmocka_unit_test(test_session_limit),
		cmocka_unit_test(test_table_flags),
		cmocka_unit_test(test_inline_shapes),
		cmocka_unit_test(test_inline_peek),
		cmocka_unit_test(test_op_done_hook),
		cmocka_unit_test(test_putfh_sec_rules),
		cmocka_unit_test(test_putfh_sec_hook),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
