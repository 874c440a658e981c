/*
 * nfs4_compound.c - the COMPOUND engine (nfs4_compound.h): decode the header,
 * then for each operation decode its arguments, execute it and encode its
 * result, stopping at the first operation that fails (RFC 7530 §15.2,
 * RFC 8881 §16.2.3). Pure: no sockets, no backend, no allocation; the
 * operations do the rest through the table they are given: what each
 * operation is (its flags: CURFH, session-less, 4.0 only, DRC) is read from
 * that table, and the caller counts operations through its op_done hook.
 *
 * Reply layout (RFC 7531 COMPOUND4res): status, tag, resarray<> of
 * {resop, status, result}. The status and the array count are written as
 * placeholders and patched at the end. While an operation's result is
 * encoded the encoder ends NFS4_REPLY_RESERVE bytes early; a result that
 * does not fit is rolled back and replaced by {resop, RESOURCE or
 * REP_TOO_BIG}, which always fits. The last operation may use the reserve
 * too, so a reply that fits the limit exactly is sent whole.
 */
#include <string.h>
#include <threads.h>
#include <time.h>

#include "nfs/v4/compound/nfs4_compound.h"

/* The last operation number of a minor version: beyond it, ILLEGAL (RFC 8881 §16.2.3). */
static uint32_t nfs4_op_last(uint32_t minor)
{
	return minor == 0 ? NFS4_OP_LAST_V40 : minor == 1 ? NFS4_OP_LAST_V41 : NFS4_OP_LAST_V42;
}

/*
 * Before an operation's arguments are decoded: the status it gets without
 * running (NFS4_OK: go on). *resop is the number its result carries.
 */
static uint32_t nfs4_op_admit(const struct nfs4_ctx *x, uint32_t op, uint32_t *resop)
{
	*resop = op;
	/* RFC 7530 §16.2.3 / RFC 8881 §18.100: unknown numbers (and this minor
	 * version's unused ones) answer ILLEGAL with resop OP_ILLEGAL. */
	if (op < NFS4_OP_FIRST || op > nfs4_op_last(x->minorversion)) {
		*resop = OP_ILLEGAL;
		return NFS4ERR_OP_ILLEGAL;
	}
	if (x->minorversion >= 1) {
		/* RFC 8881 §18.46.3: SEQUENCE only first; otherwise the first must be
		 * SEQUENCE or a session-less operation (NFS4_OPF_NO_SEQ). */
		if (op == OP_SEQUENCE && x->opidx > 0)
			return NFS4ERR_SEQUENCE_POS;
		if (x->opidx == 0 && op != OP_SEQUENCE && !(x->ops[op].flags & NFS4_OPF_NO_SEQ))
			return NFS4ERR_OP_NOT_IN_SESSION;
		/* RFC 8881 §17: 4.0-only operations are NOTSUPP in 4.1 and later. */
		if (x->ops[op].flags & NFS4_OPF_V40)
			return NFS4ERR_NOTSUPP;
	}
	if (!x->ops[op].execute)
		return NFS4ERR_NOTSUPP;
	return NFS4_OK;
}

bool nfs4_putfh_checks_sec(const uint32_t *next, unsigned n)
{
	unsigned i = 0;

	while (i < n && next[i] == OP_SAVEFH) /* §2.6.3.1.1.1: as if SAVEFH were not there */
		i++;
	if (i == n)
		return false; /* §2.6.3.1.1.6: nothing uses it */
	switch (next[i]) {
	case OP_PUTFH: case OP_PUTPUBFH: case OP_PUTROOTFH: case OP_RESTOREFH: /* §2.6.3.1.1.2 */
	case OP_LOOKUP: case OP_LOOKUPP: case OP_OPEN:                        /* §2.6.3.1.1.3-4 */
	case OP_SECINFO: case OP_SECINFO_NO_NAME:                              /* §2.6.3.1.1.5 */
		return false;
	default:
		return next[i] >= NFS4_OP_FIRST && next[i] <= NFS4_OP_LAST_V42; /* §2.6.3.1.1.7 */
	}
}

/* After a put filehandle operation: peek at the numbers of the operations that follow (through
 * SAVEFH, which has no arguments) and check the flavor if they say so (RFC 8881 §2.6.3.1.1). */
static uint32_t nfs4_putfh_sec(struct nfs4_ctx *x, const struct xdr_dec *d)
{
	uint32_t next[NFS4_SEC_PEEK];
	struct xdr_dec p = *d;
	unsigned n = 0;

	while (n < NFS4_SEC_PEEK && x->opidx + 1 + n < x->numops && xdr_dec_u32(&p, &next[n]))
		if (next[n++] != OP_SAVEFH)
			break;
	return nfs4_putfh_checks_sec(next, n) ? x->sec_check(x) : NFS4_OK;
}

/* Decode and execute operation op (already admitted). */
static uint32_t nfs4_op_run(struct nfs4_arena *a, struct xdr_dec *d, const struct nfs4_op *o)
{
	struct nfs4_ctx *x = &a->ctx;
	uint32_t status;

	memset(a->args, 0, o->args_size);
	memset(a->res, 0, o->res_size);
	/* RFC 8881 §15.1.1 (NFS4ERR_BADXDR): arguments that do not decode. */
	if (o->decode && !o->decode(x, d, a->args))
		return NFS4ERR_BADXDR;
	/* RFC 8881 §15.1.2 (NFS4ERR_NOFILEHANDLE): no current filehandle. */
	if ((o->flags & NFS4_OPF_CURFH) && !x->cur.set)
		return NFS4ERR_NOFILEHANDLE;
	status = o->execute(x, a->args, a->res);
	if (status == NFS4_OK && (o->flags & NFS4_OPF_PUTFH) && x->sec_check)
		status = nfs4_putfh_sec(x, d);
	return status;
}

/* The reply's bytes sent out of band so far (READ data, DDP items of RFC 8267), XDR padding included. */
static size_t nfs4_ddp_bytes(const struct nfs4_ctx *x)
{
	size_t n = 0;

	for (unsigned i = 0; x->call && i < x->call->n_ddp_out; i++)
		n += (size_t)x->call->ddp_out[i].len + XDR_PAD(x->call->ddp_out[i].len);
	return n;
}

/*
 * RFC 8881 §2.10.6.4, §18.46.3: ca_maxresponsesize (ca_maxresponsesize_cached
 * for sa_cachethis) bounds the whole reply, the data the transport sends out
 * of band included, not only what is in the encoder (whose end is already
 * at the limit). released: the result may use the reserve (nothing follows).
 */
static bool nfs4_over_sess_lim(const struct nfs4_ctx *x, const struct xdr_enc *e, size_t more, bool released)
{
	size_t lim = x->sess_lim;

	if (lim == SIZE_MAX)
		return false;
	if (!released)
		lim = lim > NFS4_REPLY_RESERVE ? lim - NFS4_REPLY_RESERVE : 0;
	return xdr_enc_len(e) + nfs4_ddp_bytes(x) + more > lim;
}

static uint32_t nfs4_too_big(const struct nfs4_ctx *x)
{
	return x->too_big ? x->too_big : x->minorversion == 0 ? NFS4ERR_RESOURCE : NFS4ERR_REP_TOO_BIG;
}

uint32_t nfs4_compound_room(const struct nfs4_ctx *x, size_t more)
{
	return nfs4_over_sess_lim(x, x->enc, more, x->opidx + 1 >= x->numops) ? nfs4_too_big(x) : NFS4_OK;
}

/*
 * Encode one result; if it overflows, replace it by {resop, too big}
 * (RFC 7530 §16.2.3: NFS4ERR_RESOURCE; RFC 8881 §2.10.6.4: NFS4ERR_REP_TOO_BIG)
 * and return that status.
 */
static uint32_t nfs4_op_encode(struct nfs4_arena *a, struct xdr_enc *e, const struct nfs4_op *o, uint32_t resop,
			       uint32_t status)
{
	struct nfs4_ctx *x = &a->ctx;
	uint8_t *start = e->p;
	unsigned nddp = x->call ? x->call->n_ddp_out : 0;
	bool last = x->opidx + 1 >= x->numops;

	for (int pass = 0; pass < 2; pass++) {
		xdr_enc_u32(e, resop);
		xdr_enc_u32(e, status);
		if (o && o->encode && (status == NFS4_OK || (o->flags & NFS4_OPF_ENC_ERR)))
			o->encode(x, e, status, a->res);
		if (!e->overflow && nfs4_over_sess_lim(x, e, 0, pass == 1))
			e->overflow = true;
		if (!e->overflow)
			return status;
		/* Roll back, DDP items included. The last operation may use the
		 * reserve (no result follows it); try it once more with it. */
		e->p = start;
		e->overflow = false;
		if (x->call)
			x->call->n_ddp_out = nddp;
		if (pass == 0 && last)
			e->end += NFS4_REPLY_RESERVE;
		else if (pass == 0)
			break;
	}
	if (!last)
		e->end += NFS4_REPLY_RESERVE;
	status = nfs4_too_big(x);
	xdr_enc_u32(e, resop);
	xdr_enc_u32(e, status);
	return status; /* the COMPOUND ends here: the reserve is spent */
}

/*
 * An NFS4_OPF_STREAM operation: {resop, status} first, then execute writes the
 * body after them; a failure drops the body, an overflow the whole result
 * (replaced as in nfs4_op_encode(); execute is not run twice).
 */
static uint32_t nfs4_op_stream(struct nfs4_arena *a, struct xdr_dec *d, struct xdr_enc *e, const struct nfs4_op *o,
			       uint32_t resop)
{
	struct nfs4_ctx *x = &a->ctx;
	uint8_t *start = e->p;
	unsigned nddp = x->call ? x->call->n_ddp_out : 0;
	bool last = x->opidx + 1 >= x->numops;
	size_t off_status;
	uint32_t status;

	xdr_enc_u32(e, resop);
	off_status = xdr_enc_len(e);
	xdr_enc_u32(e, 0);
	if (last)
		e->end += NFS4_REPLY_RESERVE; /* nothing follows: the body may use the reserve */
	status = e->overflow ? NFS4ERR_SERVERFAULT : nfs4_op_run(a, d, o);
	if (!e->overflow && nfs4_over_sess_lim(x, e, 0, last))
		e->overflow = true;
	if (!e->overflow) {
		if (status != NFS4_OK) {
			e->p = start + 8;
			if (x->call)
				x->call->n_ddp_out = nddp;
		}
		xdr_enc_patch_u32(e, off_status, status);
		return status;
	}
	e->p = start;
	e->overflow = false;
	if (!last)
		e->end += NFS4_REPLY_RESERVE;
	if (x->call)
		x->call->n_ddp_out = nddp;
	status = nfs4_too_big(x);
	xdr_enc_u32(e, resop);
	xdr_enc_u32(e, status);
	return status;
}

/* The op_done hook's clock (0 without a hook: nothing is timed). */
static uint64_t nfs4_op_clock(const struct nfs4_ctx *x)
{
	struct timespec ts;

	if (!x->op_done)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* NFSv4.0 operations a retransmission must not run again and no seqid
 * protects (NFS4_OPF_DRC, RFC 7530 §3.1.1, §9.1.7): the RPC layer's DRC keeps
 * the COMPOUND's reply (nfs4_op_table.c). */
static bool nfs4_op_drc(const struct nfs4_ctx *x, uint32_t op)
{
	return x->call && x->minorversion == 0 && op < NFS4_OP_COUNT && (x->ops[op].flags & NFS4_OPF_DRC);
}

/* The operations, one at a time, until one fails. Returns the last status; *nres results. */
static uint32_t nfs4_ops_run(struct nfs4_arena *a, struct xdr_dec *d, struct xdr_enc *e, uint32_t *nres)
{
	struct nfs4_ctx *x = &a->ctx;
	uint32_t status = NFS4_OK;

	for (x->opidx = 0; x->opidx < x->numops; x->opidx++) {
		uint32_t op = OP_ILLEGAL, resop;
		const struct nfs4_op *o = NULL;
		uint64_t t0 = nfs4_op_clock(x);

		if (!xdr_dec_u32(d, &op)) {
			/* The array is shorter than its count: BADXDR on a result that
			 * names no operation (RFC 8881 §15.1.1). */
			resop = OP_ILLEGAL;
			status = NFS4ERR_BADXDR;
		} else {
			status = nfs4_op_admit(x, op, &resop);
			if (nfs4_op_drc(x, op))
				x->call->drc_forget = false;
			if (status == NFS4_OK) {
				o = &x->ops[op];
				if (!(o->flags & NFS4_OPF_STREAM))
					status = nfs4_op_run(a, d, o);
			}
		}
		if (o && (o->flags & NFS4_OPF_STREAM))
			status = nfs4_op_stream(a, d, e, o, resop);
		else
			status = nfs4_op_encode(a, e, o, resop, status);
		if (x->op_done)
			x->op_done(x, op, status, nfs4_op_clock(x) - t0);
		(*nres)++;
		if (status != NFS4_OK || x->replay)
			break;
	}
	return status;
}

/* Limit e to the reply size the COMPOUND may use, less the reserve. false: no room at all. */
static bool nfs4_reply_limit(const struct nfs4_ctx *x, struct xdr_enc *e)
{
	size_t room = (size_t)(e->end - e->p);

	if (x->reply_max && x->reply_max < room)
		room = x->reply_max;
	if (room < NFS4_REPLY_RESERVE)
		return false;
	e->end = e->p + room - NFS4_REPLY_RESERVE;
	return true;
}

static void nfs4_ctx_reset(struct nfs4_ctx *x, const struct nfs4_compound_hdr *h)
{
	x->minorversion = h->minorversion;
	x->numops = h->numops;
	x->opidx = 0;
	x->cur.set = false;
	x->saved.set = false;
	x->replay = NULL;
	x->replay_len = 0;
	x->too_big = 0;
	x->sess_lim = SIZE_MAX;
}

void nfs4_compound_limit(struct nfs4_ctx *x, uint32_t max, uint32_t too_big)
{
	struct xdr_enc *e = x->enc;
	size_t lim = x->res_start + (max > NFS4_REPLY_RESERVE ? max - NFS4_REPLY_RESERVE : 0);

	x->too_big = too_big;
	x->sess_lim = x->res_start + max;
	if (lim < (size_t)(e->end - e->base))
		e->end = lim > xdr_enc_len(e) ? e->base + lim : e->p;
}


enum nfs4_compound_outcome nfs4_compound_run(struct nfs4_arena *a, struct xdr_dec *d, struct xdr_enc *e,
					     uint32_t *status_out)
{
	struct nfs4_ctx *x = &a->ctx;
	struct nfs4_compound_hdr h;
	uint32_t status = NFS4_OK, nres = 0;
	size_t off_status, off_count;
	uint8_t *real_end = e->end;

	if (!nfs4_dec_compound_hdr(d, &h))
		return NFS4_COMPOUND_GARBAGE;
	nfs4_ctx_reset(x, &h);
	if (x->call)
		x->call->drc_forget = true; /* until a non-idempotent 4.0 operation runs (nfs4_op_drc) */
	x->enc = e;
	if (!nfs4_reply_limit(x, e))
		return NFS4_COMPOUND_NOROOM;
	off_status = xdr_enc_len(e);
	x->res_start = off_status;
	xdr_enc_u32(e, 0);
	xdr_enc_opaque(e, h.tag, h.taglen); /* RFC 8881 §16.2.3: the tag is echoed */
	off_count = xdr_enc_len(e);
	xdr_enc_u32(e, 0);
	if (e->overflow) {
		e->end = real_end;
		return NFS4_COMPOUND_NOROOM;
	}
	if (h.minorversion > x->minor_max) {
		/* RFC 8881 §16.2.3, RFC 7530 §16.2.3: empty resarray. */
		status = NFS4ERR_MINOR_VERS_MISMATCH;
	} else if (h.numops > NFS4_MAX_OPS) {
		status = h.minorversion == 0 ? NFS4ERR_RESOURCE : NFS4ERR_TOO_MANY_OPS;
	} else {
		status = nfs4_ops_run(a, d, e, &nres);
	}
	e->end = real_end;
	if (x->replay) {
		/* RFC 8881 §2.10.6.1.2: the cached reply, as it was sent. */
		e->p = e->base + off_status;
		xdr_enc_fixed(e, x->replay, x->replay_len);
		uint32_t w = 0;
		if (x->replay_len >= 4)
			memcpy(&w, x->replay, 4);
		if (status_out)
			*status_out = be32toh(w);
		return NFS4_COMPOUND_DONE;
	}
	xdr_enc_patch_u32(e, off_status, status);
	xdr_enc_patch_u32(e, off_count, nres);
	if (status_out)
		*status_out = status;
	return NFS4_COMPOUND_DONE;
}

bool nfs4_compound_inline_ok(const struct nfs4_op *ops, const uint32_t *nums, unsigned n, uint32_t numops,
			     bool delegs_out)
{
	if (n == 0 || n != numops || n > NFS4_MAX_OPS)
		return false;
	for (unsigned i = 0; i < n; i++) {
		if (nums[i] < NFS4_OP_FIRST || nums[i] >= NFS4_OP_COUNT || !(ops[nums[i]].flags & NFS4_OPF_INLINE))
			return false;
		if (delegs_out && nums[i] == OP_GETATTR)
			return false; /* RFC 8881 §10.4.3: CB_GETATTR to a write delegation's holder */
	}
	return true;
}

bool nfs4_compound_inline_peek(struct nfs4_arena *a, const struct nfs4_op *ops, const struct xdr_dec *args,
			       bool delegs_out)
{
	uint32_t nums[NFS4_MAX_OPS];
	struct nfs4_compound_hdr h;
	struct xdr_dec d = *args;
	unsigned n = 0;

	if (!nfs4_dec_compound_hdr(&d, &h) || h.numops == 0 || h.numops > NFS4_MAX_OPS)
		return false;
	while (n < h.numops && xdr_dec_u32(&d, &nums[n])) {
		uint32_t op = nums[n++];

		if (!nfs4_compound_inline_ok(ops, &op, 1, 1, delegs_out))
			return false;
		const struct nfs4_op *o = &ops[op];

		memset(a->args, 0, o->args_size);
		if (o->decode && !o->decode(&a->ctx, &d, a->args))
			return false; /* BADXDR: a worker answers it */
	}
	return nfs4_compound_inline_ok(ops, nums, n, h.numops, delegs_out);
}

struct nfs4_arena *nfs4_arena_get(void)
{
	static thread_local struct nfs4_arena arena;

	return &arena;
}
