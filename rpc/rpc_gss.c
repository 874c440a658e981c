/*
 * rpc_gss.c - RPCSEC_GSS protocol pieces without the GSS-API (RFC 2203 §5):
 * the credential codec, the control-procedure table, the sequence window and
 * the bounded context table with per-client shares and LRU eviction. The
 * contract and the slot lifecycle are in rpc_gss.h; rpc_gss_krb5.c calls
 * these around gss_accept_sec_context and friends.
 */
#include "rpc/rpc_gss.h"
#include "rpc/rpc_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"

static struct log_limit lim_evict;

/* RFC 2203 §5: the fixed words, then opaque handle<>. */
int rpc_gss_cred_decode(const uint8_t *body, uint32_t len, struct rpc_gss_cred *gc)
{
	struct xdr_dec d;
	const uint8_t *h;

	memset(gc, 0, sizeof(*gc));
	xdr_dec_init(&d, body, len);
	if (!xdr_dec_u32(&d, &gc->vers))
		return RPC_AUTH_BADCRED;
	/* RFC 2203 §5: union switch (version); only RPCSEC_GSS_VERS_1 has a body
	 * we know. Another version is refused by rpc_gss_next(). */
	if (gc->vers != RPC_GSS_VERS_1)
		return RPC_AUTH_OK;
	if (!xdr_dec_u32(&d, &gc->proc) || !xdr_dec_u32(&d, &gc->seq) || !xdr_dec_u32(&d, &gc->svc))
		return RPC_AUTH_BADCRED;
	if (!xdr_dec_opaque(&d, RPC_GSS_HANDLE_MAX, &h, &gc->handle_len))
		return RPC_AUTH_BADCRED;
	if (xdr_dec_remaining(&d) != 0)
		return RPC_AUTH_BADCRED;
	memcpy(gc->handle, h, gc->handle_len);
	return RPC_AUTH_OK;
}

int rpc_gss_decode_auth(struct xdr_dec *d, struct rpc_call *c)
{
	struct rpc_gss_cred gc;
	const uint8_t *body;
	uint32_t flavor, len;

	c->cred = (struct rpc_cred){ .flavor = RPC_AUTH_NONE, .uid = 65534, .gid = 65534 };
	/* RFC 5531 §8.2: opaque_auth is a flavor and opaque body<400>. */
	if (!xdr_dec_u32(d, &flavor) || !xdr_dec_opaque(d, RPC_AUTH_MAX_BYTES, &body, &len))
		return RPC_AUTH_BADCRED;
	/* RFC 2203 §5.3.1: the verifier's MIC covers the header up to here. */
	c->gss.hdr_len = (uint32_t)xdr_dec_pos(d);
	if (!xdr_dec_u32(d, &c->gss.verf_flavor) ||
	    !xdr_dec_opaque(d, RPC_AUTH_MAX_BYTES, &c->gss.verf, &c->gss.verf_len))
		return RPC_AUTH_BADVERF;
	int st = rpc_gss_cred_decode(body, len, &gc);
	if (st != RPC_AUTH_OK)
		return st;
	/* RFC 2203 §5.1, errata 4067: only version 1 (knfsd: AUTH_BADCRED). */
	if (gc.vers != RPC_GSS_VERS_1)
		return RPC_AUTH_BADCRED;
	c->gss.proc = gc.proc;
	c->gss.seq = gc.seq;
	c->gss.svc = gc.svc;
	c->gss.handle = body + 5 * XDR_UNIT; /* after version, proc, seq, service, length */
	c->gss.handle_len = gc.handle_len;
	c->cred.flavor = RPC_AUTH_GSS;
	return RPC_AUTH_OK;
}

void rpc_gss_cred_encode(struct xdr_enc *e, const struct rpc_gss_cred *gc)
{
	xdr_enc_u32(e, gc->vers);
	xdr_enc_u32(e, gc->proc);
	xdr_enc_u32(e, gc->seq);
	xdr_enc_u32(e, gc->svc);
	xdr_enc_opaque(e, gc->handle, gc->handle_len);
}

/* RFC 5531 §9: xid, CALL, rpcvers, prog, vers, proc: then the credential. */
#define CALL_CRED_OFF (6u * XDR_UNIT)

size_t rpc_gss_call_cred(struct xdr_enc *e, const struct rpc_gss_cred *gc)
{
	if (xdr_enc_len(e) < CALL_CRED_OFF)
		return 0;
	e->p = e->base + CALL_CRED_OFF; /* over rpc_clnt_call_init's AUTH_NONE credential and verifier */
	xdr_enc_u32(e, RPC_AUTH_RPCSEC_GSS);
	xdr_enc_u32(e, 5 * XDR_UNIT + XDR_ALIGN(gc->handle_len)); /* RFC 2203 §5: rpc_gss_cred_vers_1_t */
	rpc_gss_cred_encode(e, gc);
	return e->overflow ? 0 : xdr_enc_len(e);
}

void rpc_gss_call_set_seq(struct xdr_enc *e, uint32_t seq)
{
	/* flavor, body length, then rpc_gss_cred_vers_1_t: version, gss_proc, seq_num */
	xdr_enc_patch_u32(e, CALL_CRED_OFF + 4 * XDR_UNIT, seq);
}

bool rpc_gss_seq_next(uint32_t *last)
{
	/* RFC 2203 §5.3.3.1: one new seq_num per call (the first is 1), never MAXSEQ or beyond. */
	if (*last >= RPC_GSS_MAXSEQ - 1)
		return false;
	(*last)++;
	return true;
}

void rpc_gss_init_res_encode(struct xdr_enc *e, const struct rpc_gss_init_res *r)
{
	xdr_enc_opaque(e, r->handle, r->handle_len);
	xdr_enc_u32(e, r->major);
	xdr_enc_u32(e, r->minor);
	xdr_enc_u32(e, r->window);
	xdr_enc_opaque(e, r->token, r->token_len);
}

int rpc_gss_init_res_decode(struct xdr_dec *d, uint32_t max_token, struct rpc_gss_init_res *r)
{
	const uint8_t *h;

	memset(r, 0, sizeof(*r));
	/* RFC 2203 §5.2.3.1: opaque handle<>, gss_major, gss_minor, seq_window, opaque gss_token<>. */
	if (!xdr_dec_opaque(d, RPC_GSS_HANDLE_MAX, &h, &r->handle_len) || !xdr_dec_u32(d, &r->major) ||
	    !xdr_dec_u32(d, &r->minor) || !xdr_dec_u32(d, &r->window) ||
	    !xdr_dec_opaque(d, max_token, &r->token, &r->token_len) || xdr_dec_remaining(d) != 0)
		return -1;
	memcpy(r->handle, h, r->handle_len);
	/* RFC 2203 §5.2.3.1: a context being made or made has a handle; a complete one a window. */
	if ((r->major == RPC_GSS_S_COMPLETE || r->major == RPC_GSS_S_CONTINUE_NEEDED) && r->handle_len == 0)
		return -1;
	if (r->major == RPC_GSS_S_COMPLETE && r->window == 0)
		return -1;
	return 0;
}

static enum rpc_gss_action reject(int *auth_stat, int why)
{
	*auth_stat = why;
	return RPC_GSS_ACT_REJECT;
}

/* DATA and DESTROY need an established context and a usable seq_num. */
static enum rpc_gss_action rpc_gss_next_established(const struct rpc_gss_cred *gc,
						    enum rpc_gss_ctx_state st, int *auth_stat)
{
	/* RFC 2203 §5.3.3.3: an unknown handle (or one still being
	 * established) is RPCSEC_GSS_CREDPROBLEM; the client makes a new context. */
	if (st != RPC_GSS_CTX_ESTABLISHED)
		return reject(auth_stat, RPCSEC_GSS_CREDPROBLEM);
	/* RFC 2203 §5.3.3.1: seq_num never reaches MAXSEQ; a context that got
	 * there is spent (knfsd: RPCSEC_GSS_CTXPROBLEM). */
	if (gc->seq >= RPC_GSS_MAXSEQ)
		return reject(auth_stat, RPCSEC_GSS_CTXPROBLEM);
	return gc->proc == RPC_GSS_DATA ? RPC_GSS_ACT_DATA : RPC_GSS_ACT_DESTROY;
}

enum rpc_gss_action rpc_gss_next(const struct rpc_gss_cred *gc, enum rpc_gss_ctx_state st,
				 bool null_proc, int *auth_stat)
{
	*auth_stat = RPC_AUTH_OK;
	/* RFC 2203 §5.1 and errata 4067: a version we do not speak is refused
	 * (knfsd answers AUTH_BADCRED). */
	if (gc->vers != RPC_GSS_VERS_1)
		return reject(auth_stat, RPC_AUTH_BADCRED);
	switch (gc->proc) {
	case RPC_GSS_INIT:
		/* RFC 2203 §5.2.2: creation calls the NULL procedure with no handle. */
		if (!null_proc || gc->handle_len != 0)
			return reject(auth_stat, RPC_AUTH_BADCRED);
		return RPC_GSS_ACT_INIT;
	case RPC_GSS_CONTINUE_INIT:
		/* RFC 2203 §5.2.2: the handle of the context being established. */
		if (!null_proc)
			return reject(auth_stat, RPC_AUTH_BADCRED);
		if (st != RPC_GSS_CTX_ESTABLISHING)
			return reject(auth_stat, RPCSEC_GSS_CREDPROBLEM);
		return RPC_GSS_ACT_CONTINUE;
	case RPC_GSS_DATA:
		/* RFC 2203 §5.3.3.3: a service outside rpc_gss_service_t is a bad credential. */
		if (gc->svc < RPC_GSS_SVC_NONE || gc->svc > RPC_GSS_SVC_PRIVACY)
			return reject(auth_stat, RPC_AUTH_BADCRED);
		return rpc_gss_next_established(gc, st, auth_stat);
	case RPC_GSS_DESTROY:
		/* RFC 2203 §5.4: destruction calls the NULL procedure. */
		if (!null_proc)
			return reject(auth_stat, RPC_AUTH_BADCRED);
		return rpc_gss_next_established(gc, st, auth_stat);
	default:
		return reject(auth_stat, RPC_AUTH_BADCRED);
	}
}

static void seqwin_set(struct rpc_gss_seqwin *w, uint32_t seq)
{
	uint32_t b = seq % RPC_GSS_WINDOW;
	w->bits[b / 64] |= (uint64_t)1 << (b % 64);
}

static bool seqwin_test(const struct rpc_gss_seqwin *w, uint32_t seq)
{
	uint32_t b = seq % RPC_GSS_WINDOW;
	return (w->bits[b / 64] >> (b % 64)) & 1;
}

static void seqwin_clear(struct rpc_gss_seqwin *w, uint32_t seq)
{
	uint32_t b = seq % RPC_GSS_WINDOW;
	w->bits[b / 64] &= ~((uint64_t)1 << (b % 64));
}

/*
 * RFC 2203 §5.3.3.1: a seq_num above the window's top moves the window;
 * one inside it is accepted once; one below it, or seen before, is
 * silently discarded (the caller sends no reply).
 */
enum rpc_gss_seq_result rpc_gss_seq_check(struct rpc_gss_seqwin *w, uint32_t seq)
{
	if (!w->started || seq > w->max) {
		if (!w->started || seq - w->max >= RPC_GSS_WINDOW) {
			memset(w->bits, 0, sizeof(w->bits));
		} else {
			for (uint32_t s = w->max + 1; s != seq; s++)
				seqwin_clear(w, s);
			seqwin_clear(w, seq);
		}
		w->started = true;
		w->max = seq;
		seqwin_set(w, seq);
		return RPC_GSS_SEQ_OK;
	}
	if (w->max - seq >= RPC_GSS_WINDOW)
		return RPC_GSS_SEQ_OLD;
	if (seqwin_test(w, seq))
		return RPC_GSS_SEQ_REPLAY;
	seqwin_set(w, seq);
	return RPC_GSS_SEQ_OK;
}

int rpc_gss_table_init(struct rpc_gss_table *t, uint32_t cap, uint32_t per_client,
		       void (*release)(void *mech))
{
	memset(t, 0, sizeof(*t));
	if (cap == 0 || per_client == 0)
		return -1;
	t->ctx = calloc(cap, sizeof(*t->ctx));
	if (!t->ctx)
		return -1;
	pthread_mutex_init(&t->lock, NULL);
	t->cap = cap;
	t->per_client = per_client;
	t->release = release;
	return 0;
}

/* Lock held, refs 0: give the mechanism context back and free the slot. */
static void slot_free(struct rpc_gss_table *t, struct rpc_gss_ctx *x)
{
	if (x->mech && t->release)
		t->release(x->mech);
	uint32_t gen = x->gen + 1;
	memset(x, 0, sizeof(*x));
	x->gen = gen; /* handles of the old context now name nothing */
	t->live--;
}

void rpc_gss_table_release(struct rpc_gss_table *t)
{
	if (!t->ctx)
		return;
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->ctx[i].state != RPC_GSS_CTX_FREE)
			slot_free(t, &t->ctx[i]);
	free(t->ctx);
	pthread_mutex_destroy(&t->lock);
	memset(t, 0, sizeof(*t));
}

/* Lock held: no lookup finds x any more; freed now or at its last put. */
static void slot_kill(struct rpc_gss_table *t, struct rpc_gss_ctx *x)
{
	x->state = RPC_GSS_CTX_DEAD;
	if (x->refs == 0)
		slot_free(t, x);
}

/* Lock held: the least recently used live context (of client only, if mine),
 * and counts the client's live contexts and the free slots. */
static struct rpc_gss_ctx *slot_scan(struct rpc_gss_table *t, uint64_t client, bool mine,
				     uint32_t *n_client, struct rpc_gss_ctx **free_slot)
{
	struct rpc_gss_ctx *lru = NULL;

	*n_client = 0;
	*free_slot = NULL;
	for (uint32_t i = 0; i < t->cap; i++) {
		struct rpc_gss_ctx *x = &t->ctx[i];
		if (x->state == RPC_GSS_CTX_FREE) {
			if (!*free_slot)
				*free_slot = x;
			continue;
		}
		if (x->state == RPC_GSS_CTX_DEAD)
			continue;
		if (x->client == client)
			(*n_client)++;
		if ((!mine || x->client == client) && (!lru || x->last_used < lru->last_used))
			lru = x;
	}
	return lru;
}

static void slot_evict(struct rpc_gss_table *t, struct rpc_gss_ctx *x, const char *peer, const char *why)
{
	t->evictions++;
	log_limited(&lim_evict, LOG_NOTICE, "rpc: %s: RPCSEC_GSS context evicted (%s)", peer, why);
	slot_kill(t, x);
}

/* Lock held: a free slot for client after at most two evictions (its share, the table). */
static struct rpc_gss_ctx *slot_find(struct rpc_gss_table *t, uint64_t client, const char *peer)
{
	uint32_t n;
	struct rpc_gss_ctx *free_slot;
	struct rpc_gss_ctx *lru = slot_scan(t, client, true, &n, &free_slot);

	if (n >= t->per_client && lru)
		slot_evict(t, lru, peer, "per-client limit");
	lru = slot_scan(t, client, false, &n, &free_slot);
	if (!free_slot && lru) {
		slot_evict(t, lru, peer, "context table full");
		slot_scan(t, client, false, &n, &free_slot);
	}
	return free_slot;
}

static void handle_put(uint8_t handle[RPC_GSS_HANDLE_LEN], uint32_t idx, uint32_t gen)
{
	for (int i = 0; i < 4; i++) {
		handle[i] = (uint8_t)(idx >> (24 - 8 * i));
		handle[4 + i] = (uint8_t)(gen >> (24 - 8 * i));
	}
}

static uint32_t word_get(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

struct rpc_gss_ctx *rpc_gss_ctx_new(struct rpc_gss_table *t, uint64_t client, const char *peer,
				    uint8_t handle[RPC_GSS_HANDLE_LEN])
{
	pthread_mutex_lock(&t->lock);
	struct rpc_gss_ctx *x = slot_find(t, client, peer);
	if (x) {
		x->state = RPC_GSS_CTX_ESTABLISHING;
		x->refs = 1;
		x->client = client;
		x->last_used = ++t->clock;
		t->live++;
		handle_put(handle, (uint32_t)(x - t->ctx), x->gen);
	}
	pthread_mutex_unlock(&t->lock);
	return x;
}

struct rpc_gss_ctx *rpc_gss_ctx_get(struct rpc_gss_table *t, const uint8_t *handle, uint32_t len,
				    enum rpc_gss_ctx_state *st)
{
	struct rpc_gss_ctx *x = NULL;

	*st = RPC_GSS_CTX_FREE;
	if (len != RPC_GSS_HANDLE_LEN)
		return NULL;
	uint32_t idx = word_get(handle), gen = word_get(handle + 4);
	pthread_mutex_lock(&t->lock);
	if (idx < t->cap && t->ctx[idx].gen == gen &&
	    (t->ctx[idx].state == RPC_GSS_CTX_ESTABLISHING || t->ctx[idx].state == RPC_GSS_CTX_ESTABLISHED)) {
		x = &t->ctx[idx];
		x->refs++;
		x->last_used = ++t->clock;
		*st = (enum rpc_gss_ctx_state)x->state;
	}
	pthread_mutex_unlock(&t->lock);
	return x;
}

void rpc_gss_ctx_put(struct rpc_gss_table *t, struct rpc_gss_ctx *x)
{
	pthread_mutex_lock(&t->lock);
	if (--x->refs == 0 && x->state == RPC_GSS_CTX_DEAD)
		slot_free(t, x);
	pthread_mutex_unlock(&t->lock);
}

void rpc_gss_ctx_established(struct rpc_gss_table *t, struct rpc_gss_ctx *x)
{
	pthread_mutex_lock(&t->lock);
	if (x->state == RPC_GSS_CTX_ESTABLISHING)
		x->state = RPC_GSS_CTX_ESTABLISHED;
	pthread_mutex_unlock(&t->lock);
}

void rpc_gss_ctx_kill(struct rpc_gss_table *t, struct rpc_gss_ctx *x)
{
	pthread_mutex_lock(&t->lock);
	if (x->state != RPC_GSS_CTX_DEAD)
		x->state = RPC_GSS_CTX_DEAD; /* freed at the caller's put */
	pthread_mutex_unlock(&t->lock);
}

enum rpc_gss_seq_result rpc_gss_ctx_seq(struct rpc_gss_table *t, struct rpc_gss_ctx *x, uint32_t seq)
{
	pthread_mutex_lock(&t->lock);
	enum rpc_gss_seq_result r = rpc_gss_seq_check(&x->win, seq);
	pthread_mutex_unlock(&t->lock);
	return r;
}

static int princ_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rpc_gss_princ_count *)a)->princ, ((const struct rpc_gss_princ_count *)b)->princ);
}

size_t rpc_gss_table_principals(struct rpc_gss_table *t, struct rpc_gss_princ_count **out)
{
	size_t n = 0, m = 0;

	*out = NULL;
	pthread_mutex_lock(&t->lock);
	struct rpc_gss_princ_count *v = t->live ? malloc(t->live * sizeof(*v)) : NULL;
	for (uint32_t i = 0; v && i < t->cap && n < t->live; i++) {
		const struct rpc_gss_ctx *x = &t->ctx[i];
		if (x->state == RPC_GSS_CTX_ESTABLISHED && x->cred_ok) {
			memcpy(v[n].princ, x->princ, sizeof(v[n].princ));
			v[n++].contexts = 1;
		}
	}
	pthread_mutex_unlock(&t->lock);
	if (n == 0) {
		free(v);
		return 0;
	}
	qsort(v, n, sizeof(*v), princ_cmp);
	for (size_t i = 1; i < n; i++) {
		if (!strcmp(v[i].princ, v[m].princ))
			v[m].contexts++;
		else
			v[++m] = v[i];
	}
	*out = v;
	return m + 1;
}

enum rpc_gss_princ rpc_gss_principal(const char *name, size_t len, const char *default_realm,
				     char *local, size_t local_cap)
{
	const char *at = memchr(name, '@', len);

	if (local_cap)
		local[0] = '\0';
	if (!at || !default_realm || memchr(name, '\0', len))
		return RPC_GSS_PRINC_FOREIGN;
	size_t nlen = (size_t)(at - name), rlen = len - nlen - 1;
	if (nlen == 0 || rlen != strlen(default_realm) || memcmp(at + 1, default_realm, rlen) != 0)
		return RPC_GSS_PRINC_FOREIGN;
	/* A second component ("nfs/client.example") names a machine, not a user. */
	if (memchr(name, '/', nlen))
		return RPC_GSS_PRINC_HOST;
	if (nlen >= local_cap)
		return RPC_GSS_PRINC_FOREIGN;
	memcpy(local, name, nlen);
	local[nlen] = '\0';
	return RPC_GSS_PRINC_USER;
}
