/*
 * nfs4_cb.c - NFSv4 callback paths at run time (nfs4_cb.h).
 *
 * A fixed table of entries, one per client id. Fields above "loop thread
 * only" are shared: the operations (workers) and the loop thread change them
 * under cb_mu. The operations only record what is to be done (a connection
 * to attach, an address to probe, an entry to drop) and trigger cb_async;
 * cb_kick() on the loop thread does it. No call into rpc_clnt or tcp_clnt
 * is made with cb_mu held: they may complete a call (cb_done) at once.
 *
 * A probe: 4.1, CB_NULL then CB_COMPOUND(CB_SEQUENCE) on slot 0 of the back
 * channel (RFC 8881 §20.1, §20.9); 4.0, CB_NULL (RFC 7530 §17.1). Its outcome
 * sets UP or DOWN (nfs4_cb_state.c). RFC 8881 §2.9.2: a request is not
 * retransmitted on the same connection, so a back channel call has one
 * timeout and no resend.
 *
 * A 4.0 client that did SETCLIENTID under RPCSEC_GSS (RFC 7530 §3.3.3) has
 * its path's context made first (struct cb_gss, rpc/rpc_gss_clnt.h): each
 * gss_init_sec_context step on a worker (it may wait for the KDC), each
 * token sent on the loop as a NULL call (RFC 2203 §5.2), then the probe and
 * every callback under it; the context is kept with the entry (one per
 * client) and made again when it expires. A context the client refuses, or
 * a reply whose verifier does not check, is a failed probe or callback: DOWN.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfs/v4/cb/nfs4_cb.h"
#include "nfs/v4/cb/nfs4_cb_xdr.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/workers.h"
#include "rpc/rpc_clnt.h"
#include "rpc/rpc_gss.h"
#include "rpc/rpc_gss_clnt.h"
#include "rpc/rpc_stats.h"
#include "rpc/xprt.h"
#include "transport/tcp_clnt.h"

/* A call header with AUTH_SYS (<= 432 bytes), CB_COMPOUND with CB_SEQUENCE
 * and one operation (the largest: CB_NOTIFY_LOCK, <= 1172 bytes); under
 * RPCSEC_GSS (4.0, no CB_SEQUENCE) the header MIC and krb5p's wrap token add
 * under 200 bytes with the AES enctypes. */
#define CB_MSG_MAX 2048u

/* In flight on an entry: nothing, a probe's CB_NULL or CB_SEQUENCE, or a
 * queued operation (nfs4_cb_send()). */
enum cb_step {
	STEP_IDLE, STEP_NULL, STEP_SEQ, STEP_OP,
	STEP_GSS_WORK, /* 4.0 RPCSEC_GSS: a context creation step on a worker */
	STEP_GSS_INIT, /* 4.0 RPCSEC_GSS: its token in a NULL call (RFC 2203 §5.2.2) */
};

/* A context creation call: the header and a token as large as Windows' default MaxTokenSize (12000;
 * a ticket with a PAC), more than CB_MSG_MAX holds. */
#define CB_GSS_INIT_MAX 16384u

struct cb_ent;
/* A 4.0 path's RPCSEC_GSS context (loop thread; the worker has gc while busy). */
struct cb_gss {
	struct work work;             /* rpc_gss_clnt_step() on a worker */
	struct cb_ent *e;             /* NULL: let go of while busy (gss_step_done frees it) */
	struct rpc_gss_clnt *gc;
	enum rpc_gss_clnt_next next;  /* the step's outcome */
	bool busy;                    /* its step is queued (gss_waitq) or on a worker */
	struct cb_gss *wait_next;     /* gss_waitq linkage */
	struct nfs4_cb_op op;         /* the operation in flight (STEP_OP): sent again under a new context */
	uint8_t msg[CB_GSS_INIT_MAX]; /* the NULL call carrying our token (RFC 2203 §5.2.2) */
};

/* A queued operation and whom to tell. */
struct cb_q {
	struct nfs4_cb_op op;
	void (*done)(void *arg, int32_t status);
	void *arg;
};

struct cb_ent {
	bool used;
	bool dead;             /* to be dropped by the loop thread */
	bool v40;
	uint64_t clientid;
	uint8_t sid[NFS4_SESSIONID_SIZE]; /* 4.1: the session the back channel belongs to */
	uint32_t prog, ident;  /* cb_program; 4.0 callback_ident */
	uint32_t minor;        /* 4.1+: the session's minor version (CB_COMPOUND carries it) */
	struct nfs4_cb_sec sec;
	struct nfs4_cb_chan ch;
	const char *xprt;      /* the bound connection's transport name */
	struct rpc_conn *bind; /* worker -> loop: attach this connection (a reference) */
	bool probe40;          /* worker -> loop: (re)connect to addr and probe */
	bool reprobe;          /* worker -> loop: probe the bound connection again */
	bool unbind;           /* worker -> loop: let go of the connection (session destroyed) */
	struct sockaddr_storage addr; /* 4.0 callback address */
	socklen_t addr_len;
	uint32_t gss_svc;      /* 4.0 under RPCSEC_GSS: its service (enum rpc_gss_svc), else 0 */
	struct nfs4_cb_gss40 *gss_want; /* worker -> loop: the names for the next probe (malloc'ed) */
	/* Operations waiting to be sent, a ring (nfs4_cb_send()). */
	struct cb_q q[NFS4_CB_QUEUE];
	unsigned qhead, qlen;

	/* Loop thread only. */
	bool clnt_ready;       /* clnt initialised (4.1) */
	struct rpc_clnt clnt;
	struct rpc_conn *conn; /* attached connection (clnt holds its reference) */
	struct cb_ent *via;    /* conn is another entry's (one connection, several
				* clients' sessions, as pynfs does): calls go on its clnt */
	struct rpc_conn_hook lost_hook;
	bool hooked;           /* under cb_mu: the connection's loop clears it ([rnfsd] loops) */
	struct tcp_clnt *tc;   /* 4.0 */
	struct cb_gss *gss;    /* 4.0 under RPCSEC_GSS */
	bool gss_renewed;      /* made again after the client lost it; no callback answered since */
	enum cb_step step;
	uint32_t seq_sent;
	unsigned probe_retries; /* CB_SEQUENCE probes answered BADSESSION / DELAY */
	bool probe_again;       /* send the probe's CB_SEQUENCE at the next retry tick */
	/* STEP_OP: the operation out, and whom to tell. */
	uint32_t cur_opnum;
	struct nfs4_cb_getattr_res *cur_ga; /* CB_GETATTR: where its answer goes */
	void (*cur_done)(void *arg, int32_t status);
	void *cur_arg;
	char name[40];
	struct rpc_clnt_call cc;
	uint8_t msg[CB_MSG_MAX];
};

static pthread_mutex_t cb_mu = PTHREAD_MUTEX_INITIALIZER;
static struct loop *cb_loop;
static struct loop_ev *cb_async;
static struct loop_ev *cb_retry_ev; /* one-shot: probes to send again */
static struct cb_ent cb_tab[NFS4_CB_CLIENTS];
static struct log_limit cb_limit;
/*
 * Context creation steps on workers at once (loop thread): a KDC that does
 * not answer holds at most CB_GSS_STEPS_MAX workers (MIT waits seconds per
 * request), the others keep serving; the steps beyond wait in gss_waitq.
 */
#define CB_GSS_STEPS_MAX 2u
static unsigned gss_running;
static _Atomic unsigned gss_allocated; /* struct cb_gss alive (nfs4_cb_gss_contexts) */
static struct cb_gss *gss_waitq, **gss_waitq_tail = &gss_waitq;
static _Atomic uint64_t cb_notify_queued; /* CB_NOTIFYs taken by nfs4_cb_send() (nfs4_cb_notify_sent()) */

/* RFC 8881 §2.9.2: no retransmission on the same connection; one wait. */
static const struct rpc_clnt_params cb_bc_params = { .timeout_ms = 5000, .max_timeout_ms = 5000, .retries = 0 };
/* 4.0: a connection of our own; a lost one is retried once. */
static const struct tcp_clnt_params cb_40_params = {
	.rpc = { .timeout_ms = 3000, .max_timeout_ms = 3000, .retries = 1 },
	.max_record = 4096,
	.send_buf = 4096,
	.connect_timeout_ms = 3000,
	.reconnect_delay_ms = 500,
	.reconnect_max = 1,
};
/* 4.0 under RPCSEC_GSS: cb_40_params with room to queue a context creation call (nfs4_cb_start). */
static struct tcp_clnt_params cb_40_gss_params;

/* cb_mu held. The entry of clientid, or a new one (NULL: the table is full). */
static struct cb_ent *ent_get(uint64_t clientid, bool create)
{
	struct cb_ent *free_e = NULL;

	for (unsigned i = 0; i < NFS4_CB_CLIENTS; i++) {
		struct cb_ent *e = &cb_tab[i];

		if (e->used && !e->dead && e->clientid == clientid)
			return e;
		if (!e->used && !free_e)
			free_e = e;
	}
	if (!create || !free_e)
		return NULL;
	memset(free_e, 0, offsetof(struct cb_ent, clnt_ready));
	free_e->used = true;
	free_e->clientid = clientid;
	free_e->xprt = "-";
	nfs4_cb_chan_init(&free_e->ch);
	return free_e;
}

static void cb_wake(void)
{
	if (cb_async)
		loop_ev_trigger(cb_async);
}

void nfs4_cb_session(uint64_t clientid, const uint8_t sid[NFS4_SESSIONID_SIZE], uint32_t minor, uint32_t prog,
		     const struct nfs4_cb_sec *sec)
{
	pthread_mutex_lock(&cb_mu);
	struct cb_ent *e = ent_get(clientid, true);

	if (e) {
		e->minor = minor;
		e->prog = prog;
		e->sec = *sec;
		if (e->ch.state == NFS4_CB_NONE)
			memcpy(e->sid, sid, NFS4_SESSIONID_SIZE);
	} else {
		log_limited(&cb_limit, LOG_NOTICE, "nfs4: callback table full: client %llx gets no back channel",
			    (unsigned long long)clientid);
	}
	pthread_mutex_unlock(&cb_mu);
}

void nfs4_cb_ctl(uint64_t clientid, uint32_t prog, const struct nfs4_cb_sec *sec)
{
	pthread_mutex_lock(&cb_mu);
	struct cb_ent *e = ent_get(clientid, false);

	if (e) {
		e->prog = prog;
		e->sec = *sec;
		if (e->ch.state != NFS4_CB_NONE) {
			nfs4_cb_chan_bound(&e->ch); /* probed again with the new parameters */
			e->reprobe = true;
		}
	}
	pthread_mutex_unlock(&cb_mu);
	cb_wake();
}

bool nfs4_cb_bind41(uint64_t clientid, const uint8_t sid[NFS4_SESSIONID_SIZE], struct rpc_conn *conn)
{
	bool ok = false;

	if (!conn || !conn->xprt || !conn->xprt->ops->send_call)
		return false; /* UDP, or no transport (tests) */
	pthread_mutex_lock(&cb_mu);
	struct cb_ent *e = cb_async ? ent_get(clientid, false) : NULL;

	if (e && e->sec.usable) {
		if (e->bind)
			rpc_conn_put(e->bind);
		rpc_conn_get(conn);
		e->bind = conn;
		e->xprt = conn->xprt_name;
		memcpy(e->sid, sid, NFS4_SESSIONID_SIZE);
		nfs4_cb_chan_bound(&e->ch);
		ok = true;
	}
	pthread_mutex_unlock(&cb_mu);
	if (ok)
		cb_wake();
	return ok;
}

void nfs4_cb_session_gone(const uint8_t sid[NFS4_SESSIONID_SIZE])
{
	pthread_mutex_lock(&cb_mu);
	for (unsigned i = 0; i < NFS4_CB_CLIENTS; i++) {
		struct cb_ent *e = &cb_tab[i];

		if (e->used && !e->dead && !e->v40 && !memcmp(e->sid, sid, NFS4_SESSIONID_SIZE)) {
			nfs4_cb_chan_unbound(&e->ch);
			e->unbind = true; /* the connection may carry another session's back channel next */
		}
	}
	pthread_mutex_unlock(&cb_mu);
	cb_wake();
}

void nfs4_cb_client_gone(uint64_t clientid)
{
	pthread_mutex_lock(&cb_mu);
	struct cb_ent *e = ent_get(clientid, false);

	if (e)
		e->dead = true;
	pthread_mutex_unlock(&cb_mu);
	if (e)
		cb_wake();
}

void nfs4_cb_probe40(uint64_t clientid, const struct nfs4_cb_info *cb, const struct nfs4_cb_gss40 *gss)
{
	struct sockaddr_storage sa;
	socklen_t len = 0;
	bool usable = cb->netid_len && nfs4_cb_uaddr_parse(cb->netid, cb->netid_len, cb->addr, cb->addr_len, &sa, &len);
	struct nfs4_cb_gss40 *want = NULL;

	if (gss && gss->svc && (want = malloc(sizeof(*want))))
		*want = *gss;

	pthread_mutex_lock(&cb_mu);
	struct cb_ent *e = cb_async ? ent_get(clientid, true) : NULL;

	if (e) {
		e->v40 = true;
		e->prog = cb->program;
		e->ident = cb->ident;
		/* RFC 7530 §3.3.3: SETCLIENTID's flavor; AUTH_SYS (as root) for AUTH_SYS and AUTH_NONE. */
		e->sec = (struct nfs4_cb_sec){ .usable = !gss || !gss->svc || want,
					       .cred = { .flavor = gss && gss->svc ? RPC_AUTH_GSS : RPC_AUTH_SYS } };
		e->gss_svc = gss ? gss->svc : 0;
		free(e->gss_want);
		e->gss_want = want;
		want = NULL;
		nfs4_cb_chan_bound(&e->ch);
		if (usable) {
			e->addr = sa;
			e->addr_len = len;
			e->xprt = "tcp";
			e->probe40 = true;
		} else if (cb->netid_len) {
			nfs4_cb_chan_lost(&e->ch); /* a cb_location we cannot call: DOWN */
		} else {
			nfs4_cb_chan_unbound(&e->ch);
		}
	}
	pthread_mutex_unlock(&cb_mu);
	free(want);
	cb_wake();
}

uint32_t nfs4_cb_seq_flags_for(uint64_t clientid)
{
	uint32_t flags = 0;

	pthread_mutex_lock(&cb_mu);
	struct cb_ent *e = ent_get(clientid, false);

	if (e)
		flags = nfs4_cb_seq_flags(e->ch.state);
	pthread_mutex_unlock(&cb_mu);
	return flags;
}

bool nfs4_cb_send(uint64_t clientid, const struct nfs4_cb_op *op, void (*done)(void *arg, int32_t status), void *arg)
{
	bool ok = false;

	pthread_mutex_lock(&cb_mu);
	struct cb_ent *e = cb_async ? ent_get(clientid, false) : NULL;

	/* A path that is up, or being probed (sent once it is up); a DOWN or
	 * absent one takes nothing (RFC 8881 §18.46.3: the client hears of it
	 * through SEQUENCE and binds again). */
	if (e && (e->ch.state == NFS4_CB_UP || e->ch.state == NFS4_CB_PROBING) && e->qlen < NFS4_CB_QUEUE) {
		struct cb_q *q = &e->q[(e->qhead + e->qlen) % NFS4_CB_QUEUE];

		q->op = *op;
		q->done = done;
		q->arg = arg;
		e->qlen++;
		ok = true;
	}
	pthread_mutex_unlock(&cb_mu);
	if (ok && op->kind == NFS4_CB_OP_NOTIFY)
		atomic_fetch_add_explicit(&cb_notify_queued, 1, memory_order_relaxed);
	if (ok)
		cb_wake();
	return ok;
}

uint64_t nfs4_cb_notify_sent(void)
{
	return atomic_load_explicit(&cb_notify_queued, memory_order_relaxed);
}

static void ent_stat(const struct cb_ent *e, struct nfs4_cb_stat *s)
{
	s->clientid = e->clientid;
	s->minor = e->v40 ? 0 : e->minor;
	s->state = e->ch.state;
	s->xprt = e->xprt;
	s->sent = e->ch.sent;
	s->ok = e->ch.ok;
	s->failed = e->ch.failed;
	/* RFC 8881 §18.36.3 (csa_sec_parms, BACKCHANNEL_CTL), RFC 7530 §3.3.3 (4.0: SETCLIENTID's flavor). */
	s->flavor = nfs4_cb_flavor_name(e->sec.usable, e->sec.cred.flavor, e->gss_svc);
}

void nfs4_cb_foreach(void (*fn)(const struct nfs4_cb_stat *s, void *arg), void *arg)
{
	pthread_mutex_lock(&cb_mu);
	for (unsigned i = 0; i < NFS4_CB_CLIENTS; i++) {
		struct nfs4_cb_stat s;

		if (!cb_tab[i].used || cb_tab[i].dead)
			continue;
		ent_stat(&cb_tab[i], &s);
		fn(&s, arg);
	}
	pthread_mutex_unlock(&cb_mu);
}

bool nfs4_cb_stat_of(uint64_t clientid, struct nfs4_cb_stat *out)
{
	pthread_mutex_lock(&cb_mu);
	struct cb_ent *e = ent_get(clientid, false);

	if (e)
		ent_stat(e, out);
	pthread_mutex_unlock(&cb_mu);
	return e != NULL;
}

/* ---- loop thread ---- */

static void cb_done(struct rpc_clnt_call *cc, enum rpc_clnt_status st);

/* The rpc_clnt e's 4.1 calls go on: its own, or the connection owner's. */
static struct rpc_clnt *ent_clnt(struct cb_ent *e)
{
	return e->via ? &e->via->clnt : &e->clnt;
}

/* Does step hold the back channel's slot (a 4.1 CB_SEQUENCE goes with it)? */
static bool step_has_slot(const struct cb_ent *e, enum cb_step step)
{
	return step == STEP_SEQ || (step == STEP_OP && !e->v40);
}

/* The operation that was out (STEP_OP) is over: tell its sender. */
static void op_finish(struct cb_ent *e, int32_t status)
{
	void (*done)(void *arg, int32_t status) = e->cur_done;
	void *arg = e->cur_arg;

	e->cur_done = NULL;
	e->cur_arg = NULL;
	if (done)
		done(arg, status);
}

/* Every queued operation fails (-1): the path is down or gone. */
static void ent_flush(struct cb_ent *e)
{
	struct {
		void (*done)(void *arg, int32_t status);
		void *arg;
	} f[NFS4_CB_QUEUE];
	unsigned n = 0;

	pthread_mutex_lock(&cb_mu);
	for (; e->qlen > 0; e->qlen--, e->qhead = (e->qhead + 1) % NFS4_CB_QUEUE, n++) {
		f[n].done = e->q[e->qhead].done;
		f[n].arg = e->q[e->qhead].arg;
	}
	e->qhead = 0;
	pthread_mutex_unlock(&cb_mu);
	for (unsigned i = 0; i < n; i++)
		if (f[i].done)
			f[i].done(f[i].arg, -1);
}

/* The step that was in flight ended without an answer worth reading. */
static void ent_fail(struct cb_ent *e, enum cb_step step, const char *why)
{
	pthread_mutex_lock(&cb_mu);
	if (step_has_slot(e, step))
		(void)nfs4_cb_slot_release(&e->ch, e->seq_sent, false, 0, 0, 0);
	nfs4_cb_chan_done(&e->ch, false);
	pthread_mutex_unlock(&cb_mu);
	log_limited(&cb_limit, LOG_NOTICE, "nfs4: %s: callback %s failed: %s", e->name,
		    step == STEP_NULL ? "CB_NULL" : "CB_COMPOUND", why);
	if (step == STEP_OP)
		op_finish(e, -1);
}

/* The operation in flight (e->cur_*, op) back at the head of the queue, to go again. false: the
 * queue is full (it is not taken back). */
static bool q_push_front(struct cb_ent *e, const struct nfs4_cb_op *op)
{
	pthread_mutex_lock(&cb_mu);
	bool room = e->qlen < NFS4_CB_QUEUE;

	if (room) {
		e->qhead = (e->qhead + NFS4_CB_QUEUE - 1) % NFS4_CB_QUEUE;
		e->q[e->qhead] = (struct cb_q){ .op = *op, .done = e->cur_done, .arg = e->cur_arg };
		e->qlen++;
		e->cur_done = NULL;
		e->cur_arg = NULL;
		e->cur_ga = NULL;
	}
	pthread_mutex_unlock(&cb_mu);
	return room;
}

/* cb_mu held. Take the oldest queued operation into e->cur_* and *op. */
static bool q_pop(struct cb_ent *e, struct nfs4_cb_op *op)
{
	if (e->qlen == 0)
		return false;
	struct cb_q *q = &e->q[e->qhead];

	*op = q->op;
	e->cur_opnum = nfs4_cb_opnum(op->kind);
	e->cur_ga = op->kind == NFS4_CB_OP_GETATTR ? op->u.getattr.out : NULL;
	e->cur_done = q->done;
	e->cur_arg = q->arg;
	e->qhead = (e->qhead + 1) % NFS4_CB_QUEUE;
	e->qlen--;
	return true;
}

/* cb_mu held. What ent_call needs of e; false: nothing to send (the slot is
 * out, or no operation is queued). */
static bool call_prep(struct cb_ent *e, enum cb_step step, struct nfs4_cb_seq_args *sa, struct nfs4_cb_op *op)
{
	memcpy(sa->sessionid, e->sid, NFS4_SESSIONID_SIZE);
	if (step_has_slot(e, step) && !nfs4_cb_slot_take(&e->ch, &sa->seqid))
		return false; /* a CB_SEQUENCE is out already: its outcome decides */
	if (step == STEP_OP && !q_pop(e, op)) {
		if (step_has_slot(e, step))
			(void)nfs4_cb_slot_release(&e->ch, sa->seqid, false, 0, 0, 0);
		return false;
	}
	nfs4_cb_chan_sent(&e->ch);
	return true;
}

/* ---- 4.0 under RPCSEC_GSS (RFC 7530 §3.3.3; RFC 2203 §5.2 context creation) ---- */

static void ent_call(struct cb_ent *e, enum cb_step step);
static void ent_next(struct cb_ent *e);

static void gss_free(struct cb_gss *g)
{
	rpc_gss_clnt_free(g->gc);
	free(g);
	atomic_fetch_sub(&gss_allocated, 1);
}

unsigned nfs4_cb_gss_contexts(void)
{
	return atomic_load(&gss_allocated);
}

/* Let go of e's context; one whose step is on a worker is freed when it comes back. */
static void gss_drop(struct cb_ent *e)
{
	struct cb_gss *g = e->gss;

	e->gss = NULL;
	if (!g)
		return;
	if (g->busy) {
		g->e = NULL;
		return;
	}
	gss_free(g);
}

/* Worker: may wait for the KDC. */
static void gss_step_run(struct work *w)
{
	struct cb_gss *g = container_of(w, struct cb_gss, work);

	g->next = rpc_gss_clnt_step(g->gc);
}

static void gss_next(struct cb_ent *e, enum rpc_gss_clnt_next next);

/* Loop thread: start waiting steps while fewer than CB_GSS_STEPS_MAX run; free those let go of. */
static void gss_pump(void)
{
	struct cb_gss *g;

	while (gss_running < CB_GSS_STEPS_MAX && (g = gss_waitq)) {
		if (!(gss_waitq = g->wait_next))
			gss_waitq_tail = &gss_waitq;
		if (!g->e) {
			gss_free(g);
			continue;
		}
		gss_running++;
		workers_submit(&g->work);
	}
}

/* Loop thread: the step came back. */
static void gss_step_done(struct work *w)
{
	struct cb_gss *g = container_of(w, struct cb_gss, work);
	struct cb_ent *e = g->e;

	gss_running--;
	gss_pump();
	g->busy = false;
	if (!e) {
		gss_free(g);
		return;
	}
	if (e->step != STEP_GSS_WORK)
		return; /* the path was released meanwhile */
	e->step = STEP_IDLE;
	gss_next(e, g->next);
	ent_next(e);
}

static void gss_submit(struct cb_ent *e)
{
	struct cb_gss *g = e->gss;

	g->busy = true;
	g->work = (struct work){ .run = gss_step_run, .done = gss_step_done, .home = 0 };
	e->step = STEP_GSS_WORK;
	g->wait_next = NULL;
	*gss_waitq_tail = g;
	gss_waitq_tail = &g->wait_next;
	gss_pump();
}

/* Begin making e's context: from want's names, or (NULL) the current context's again. false: none. */
static bool gss_begin(struct cb_ent *e, const struct nfs4_cb_gss40 *want)
{
	struct rpc_gss_clnt *gc = NULL;

	if (want && want->target[0] && want->initiator[0])
		gc = rpc_gss_clnt_new(want->initiator, want->target, want->svc);
	else if (!want && e->gss)
		gc = rpc_gss_clnt_again(e->gss->gc);
	struct cb_gss *g = gc ? calloc(1, sizeof(*g)) : NULL;

	gss_drop(e);
	if (!g) {
		rpc_gss_clnt_free(gc);
		return false;
	}
	atomic_fetch_add(&gss_allocated, 1);
	g->e = e;
	g->gc = gc;
	e->gss = g;
	gss_submit(e);
	return true;
}

/* An UP path's context expired: probed again under a new one (RFC 2203 §5.3.3.1: after MAXSEQ too). */
static void gss_renew(struct cb_ent *e)
{
	pthread_mutex_lock(&cb_mu);
	nfs4_cb_chan_bound(&e->ch);
	pthread_mutex_unlock(&cb_mu);
	if (!gss_begin(e, NULL))
		ent_fail(e, STEP_NULL, "RPCSEC_GSS context expired and not made again");
}

/* The context's token goes to the client in a NULL call (RFC 2203 §5.2.2). */
static void gss_call_init(struct cb_ent *e)
{
	pthread_mutex_lock(&cb_mu);
	uint32_t prog = e->prog;
	pthread_mutex_unlock(&cb_mu);

	rpc_gss_clnt_init_call(e->gss->gc, &e->cc, e->gss->msg, sizeof(e->gss->msg), prog, NFS4_CB_VERS40);
	e->cc.done = cb_done;
	e->cc.arg = e;
	e->step = STEP_GSS_INIT;
	if ((e->cc.args.overflow || !e->tc || tcp_clnt_call(e->tc, &e->cc) != 0) && e->step == STEP_GSS_INIT) {
		e->step = STEP_IDLE;
		ent_fail(e, STEP_NULL, e->cc.args.overflow ? "RPCSEC_GSS token too large" : "RPCSEC_GSS token not sent");
	}
}

/* What context creation does next; failing, the probe fails: DOWN, one log line. */
static void gss_next(struct cb_ent *e, enum rpc_gss_clnt_next next)
{
	char why[200];

	switch (next) {
	case RPC_GSS_CLNT_SEND:
		gss_call_init(e);
		return;
	case RPC_GSS_CLNT_STEP:
		gss_submit(e);
		return;
	case RPC_GSS_CLNT_DONE:
		ent_call(e, STEP_NULL); /* RFC 7530 §3.3.3: the probe under the new context */
		return;
	case RPC_GSS_CLNT_FAIL:
	default:
		snprintf(why, sizeof(why), "RPCSEC_GSS context to the client: %s", rpc_gss_clnt_error(e->gss->gc));
		ent_fail(e, STEP_NULL, why);
		return;
	}
}

/*
 * RFC 2203 §5.3.3.3: a call denied with RPCSEC_GSS_CREDPROBLEM or
 * CTXPROBLEM: the client no longer holds our context (its context cache
 * expired or was flushed). A new one is made and the path probed again,
 * once until a callback is answered again; the call in flight fails. true:
 * done so (one log line).
 */
static bool gss_lost(struct cb_ent *e, enum cb_step step, const struct rpc_clnt_call *cc)
{
	uint32_t as = cc->reply.auth_stat;

	if (cc->reply.reject_stat != RPC_AUTH_ERROR || (as != RPCSEC_GSS_CREDPROBLEM && as != RPCSEC_GSS_CTXPROBLEM) ||
	    e->gss_renewed)
		return false;
	e->gss_renewed = true;
	log_limited(&cb_limit, LOG_NOTICE, "nfs4: %s: the client lost our RPCSEC_GSS context (auth_stat %u): "
		    "making a new one", e->name, as);
	/* The operation goes first once the path is up again (it waits while the path is probed). */
	if (step == STEP_OP && !q_push_front(e, &e->gss->op))
		op_finish(e, -1);
	gss_renew(e);
	return true;
}

/* A reply to a call under the context: RFC 2203 §5.3.3.2 its verifier, §5.3.2 its results unwrapped.
 * One that does not check is a bad reply: the call failed, the path goes DOWN (its one log line). */
static enum rpc_clnt_status gss_reply(struct cb_ent *e, struct rpc_clnt_call *cc, enum rpc_clnt_status st)
{
	return st == RPC_CLNT_OK && !rpc_gss_clnt_open(e->gss->gc, cc) ? RPC_CLNT_BAD_REPLY : st;
}

/* Send CB_NULL, CB_COMPOUND(CB_SEQUENCE) or a queued operation (4.1:
 * CB_COMPOUND(CB_SEQUENCE, op); 4.0: CB_COMPOUND(op)) on e's path. */
static void ent_call(struct cb_ent *e, enum cb_step step)
{
	struct nfs4_cb_seq_args sa = { .slotid = 0, .highest_slotid = 0 };
	struct nfs4_cb_op op;
	uint32_t prog, ident, minor;
	struct rpc_cred cred;
	int rc;

	pthread_mutex_lock(&cb_mu);
	minor = e->v40 ? 0 : e->minor;
	prog = e->prog;
	ident = e->v40 ? e->ident : 0;
	cred = e->sec.cred;
	uint32_t gss_svc = e->gss_svc;
	bool go = call_prep(e, step, &sa, &op);
	pthread_mutex_unlock(&cb_mu);
	if (!go)
		return;
	if (step == STEP_OP && e->gss)
		e->gss->op = op; /* kept while it is out (gss_lost) */
	e->seq_sent = sa.seqid;
	uint32_t vers = e->v40 ? NFS4_CB_VERS40 : NFS4_CB_VERS41;
	uint32_t proc = step == STEP_NULL ? NFS4_CB_PROC_NULL : NFS4_CB_PROC_COMPOUND;
	int prep = 0;
	/* RFC 7530 §3.3.3: a 4.0 client of RPCSEC_GSS is called under its path's context, never AUTH_SYS. */
	if (cred.flavor == RPC_AUTH_GSS)
		prep = e->gss ? rpc_gss_clnt_call_init(e->gss->gc, &e->cc, e->msg, sizeof(e->msg), prog, vers, proc) : -1;
	else
		rpc_clnt_call_init(&e->cc, e->msg, sizeof(e->msg), prog, vers, proc,
				   cred.flavor == RPC_AUTH_SYS ? &cred : NULL);
	/* RFC 8881 §20.2: CB_COMPOUND opens with CB_SEQUENCE and carries the
	 * session's minor version (a 4.2 client finds its session by it, as Linux does). */
	if (step == STEP_SEQ)
		nfs4_cb_enc_compound(&e->cc.args, minor, ident, &sa);
	else if (step == STEP_OP)
		nfs4_cb_enc_compound_op(&e->cc.args, minor, ident, e->v40 ? NULL : &sa, &op);
	e->cc.done = cb_done;
	e->cc.arg = e;
	e->step = step;
	rc = prep || e->cc.args.overflow ? -1 : e->v40 ? tcp_clnt_call(e->tc, &e->cc) : rpc_clnt_start(ent_clnt(e), &e->cc);
	if (rc == 0)
		rpc_stats_count_callback(cred.flavor, gss_svc);
	if (rc != 0 && e->step == step) {
		e->step = STEP_IDLE;
		ent_fail(e, step, prep ? "no usable RPCSEC_GSS context" : e->cc.args.overflow ? "too large" : "not sent");
	}
}

/* Loop thread, nothing in flight: send the next queued operation when the
 * path is up; fail them all when it is down or gone; wait while probing. */
static void ent_next(struct cb_ent *e)
{
	while (e->step == STEP_IDLE) {
		pthread_mutex_lock(&cb_mu);
		enum nfs4_cb_state st = e->ch.state;
		bool have = e->qlen > 0, path = e->conn || e->tc;

		pthread_mutex_unlock(&cb_mu);
		if (!have)
			return;
		if (st == NFS4_CB_PROBING)
			return;
		if (st != NFS4_CB_UP || !path) {
			ent_flush(e);
			return;
		}
		if (e->gss && !rpc_gss_clnt_usable(e->gss->gc)) {
			gss_renew(e); /* expired or out of sequence numbers: probed again under a new one */
			continue;
		}
		ent_call(e, STEP_OP); /* an encoding failure finishes it at once: next */
	}
}

#define CB_PROBE_RETRIES 5u
#define CB_PROBE_RETRY_MS 200

/* CB_COMPOUND's reply: CB_SEQUENCE answered for our session, slot and seqid.
 * A client that does not know the session yet (it answered BADSESSION or
 * DELAY: the probe overtook its handling of CREATE_SESSION's reply, as
 * pynfs's does) is probed again a little later, a few times (*retry). */
static bool seq_reply_ok(struct cb_ent *e, struct rpc_clnt_call *cc, enum rpc_clnt_status st, bool *retry)
{
	struct nfs4_cb_compound_res r = { 0 };
	bool dec = st == RPC_CLNT_OK && nfs4_cb_dec_compound(&cc->res, &r) == NFS4_CB_DEC_OK && r.has_seq;
	bool ok;

	pthread_mutex_lock(&cb_mu);
	ok = nfs4_cb_slot_release(&e->ch, e->seq_sent, dec, dec ? r.seq.status : 0, dec ? r.seq.seqid : 0,
				  dec ? r.seq.slotid : 0);
	/* RFC 8881 §20.9.3: the reply names the session the call was made for. */
	ok = ok && r.status == 0 && !memcmp(r.seq.sessionid, e->sid, NFS4_SESSIONID_SIZE);
	*retry = !ok && dec && (r.seq.status == 10052 /* BADSESSION */ || r.seq.status == 10008 /* DELAY */) &&
		 e->probe_retries < CB_PROBE_RETRIES && e->ch.state == NFS4_CB_PROBING;
	if (*retry)
		e->probe_retries++;
	else
		nfs4_cb_chan_done(&e->ch, ok);
	pthread_mutex_unlock(&cb_mu);
	if (!ok && dec && !*retry)
		log_limited(&cb_limit, LOG_NOTICE, "nfs4: %s: CB_SEQUENCE answered status %u/%u, seqid %u (sent %u), slot %u",
			    e->name, r.status, r.seq.status, r.seq.seqid, e->seq_sent, r.seq.slotid);
	return ok;
}

/*
 * A queued operation's reply: its status goes to the sender when the client
 * got to it (4.1: after a CB_SEQUENCE answered for our session, slot and
 * seqid); otherwise -1 and the path is DOWN. An operation that fails (its
 * own status) says nothing about the path.
 */
static void op_reply(struct cb_ent *e, struct rpc_clnt_call *cc, enum rpc_clnt_status st)
{
	struct nfs4_cb_compound_res r = { 0 };
	bool dec = st == RPC_CLNT_OK && nfs4_cb_dec_compound_op(&cc->res, !e->v40, e->cur_opnum, &r) == NFS4_CB_DEC_OK;
	bool ok = dec;

	pthread_mutex_lock(&cb_mu);
	if (!e->v40) {
		ok = nfs4_cb_slot_release(&e->ch, e->seq_sent, dec && r.has_seq, r.seq.status, r.seq.seqid,
					  r.seq.slotid);
		ok = ok && !memcmp(r.seq.sessionid, e->sid, NFS4_SESSIONID_SIZE); /* RFC 8881 §20.9.3 */
	}
	ok = ok && r.has_op;
	nfs4_cb_chan_done(&e->ch, ok);
	if (ok)
		e->gss_renewed = false; /* a context the client drops again may be made again */
	pthread_mutex_unlock(&cb_mu);
	if (!ok)
		log_limited(&cb_limit, LOG_NOTICE, "nfs4: %s: callback operation %u not answered (%s)", e->name,
			    e->cur_opnum, rpc_clnt_status_name(st));
	if (ok && r.op_status == 0 && e->cur_ga)
		*e->cur_ga = r.ga; /* RFC 8881 §20.1.2: before its sender hears of it */
	e->cur_ga = NULL;
	op_finish(e, ok ? (int32_t)r.op_status : -1);
}

/* A probe step's reply (CB_NULL, then CB_SEQUENCE on 4.1). */
static void probe_reply(struct cb_ent *e, enum cb_step step, struct rpc_clnt_call *cc, enum rpc_clnt_status st)
{
	if (step == STEP_SEQ) {
		bool retry = false;

		if (!seq_reply_ok(e, cc, st, &retry) && !retry)
			log_limited(&cb_limit, LOG_NOTICE, "nfs4: %s: CB_SEQUENCE not answered as expected (%s)",
				    e->name, rpc_clnt_status_name(st));
		if (retry && cb_retry_ev) {
			struct timeval tv = { 0, CB_PROBE_RETRY_MS * 1000 };

			e->probe_again = true;
			loop_ev_add(cb_retry_ev, &tv);
		}
		return;
	}
	if (st != RPC_CLNT_OK) {
		ent_fail(e, step, rpc_clnt_status_name(st));
		return;
	}
	if (e->v40) {
		pthread_mutex_lock(&cb_mu);
		nfs4_cb_chan_done(&e->ch, true);
		pthread_mutex_unlock(&cb_mu);
		return;
	}
	pthread_mutex_lock(&cb_mu);
	nfs4_cb_chan_answered(&e->ch);
	pthread_mutex_unlock(&cb_mu);
	ent_call(e, STEP_SEQ); /* RFC 8881 §20.9: the back channel's sequencing works too */
}

static void cb_done(struct rpc_clnt_call *cc, enum rpc_clnt_status st)
{
	struct cb_ent *e = cc->arg;
	enum cb_step step = e->step;

	if (step == STEP_IDLE)
		return; /* the path was given up while the call was out */
	e->step = STEP_IDLE;
	if (step == STEP_GSS_INIT) {
		gss_next(e, rpc_gss_clnt_init_reply(e->gss->gc, cc, st));
		ent_next(e);
		return;
	}
	if (e->gss)
		st = gss_reply(e, cc, st);
	if (st == RPC_CLNT_DENIED && e->gss && gss_lost(e, step, cc)) {
		ent_next(e);
		return;
	}
	if (step == STEP_OP)
		op_reply(e, cc, st);
	else
		probe_reply(e, step, cc, st);
	ent_next(e); /* the path's state is known now: the queue moves on or fails */
}

/* Close hook of the attached connection: the path is down until bound again. */
static void cb_conn_lost(struct rpc_conn *conn, struct rpc_conn_hook *h)
{
	struct cb_ent *e = container_of(h, struct cb_ent, lost_hook);

	(void)conn;
	pthread_mutex_lock(&cb_mu);
	e->hooked = false;
	nfs4_cb_chan_lost(&e->ch);
	for (unsigned i = 0; i < NFS4_CB_CLIENTS; i++)
		if (cb_tab[i].used && cb_tab[i].via == e)
			nfs4_cb_chan_lost(&cb_tab[i].ch); /* their back channel too */
	pthread_mutex_unlock(&cb_mu);
	cb_wake(); /* queued operations fail (ent_next) */
}

/* Stop what e has in flight and let go of its connection. */
static void ent_release_path(struct cb_ent *e)
{
	enum cb_step step = e->step;

	e->step = STEP_IDLE;
	if (!e->v40 && e->conn && step != STEP_IDLE) {
		rpc_clnt_cancel(ent_clnt(e), &e->cc);
		pthread_mutex_lock(&cb_mu);
		if (step_has_slot(e, step))
			(void)nfs4_cb_slot_release(&e->ch, e->seq_sent, false, 0, 0, 0);
		pthread_mutex_unlock(&cb_mu);
	}
	if (e->conn && e->via) {
		e->via = NULL; /* the owner keeps the connection */
		e->conn = NULL;
	} else if (e->conn) {
		/* Entries borrowing the connection lose it with us. */
		for (unsigned i = 0; i < NFS4_CB_CLIENTS; i++)
			if (cb_tab[i].used && cb_tab[i].via == e) {
				ent_release_path(&cb_tab[i]);
				pthread_mutex_lock(&cb_mu);
				nfs4_cb_chan_lost(&cb_tab[i].ch);
				pthread_mutex_unlock(&cb_mu);
			}
		/* hooked under cb_mu: the close hook may run on the connection's own loop now. */
		pthread_mutex_lock(&cb_mu);
		bool hooked = e->hooked;
		e->hooked = false;
		pthread_mutex_unlock(&cb_mu);
		if (hooked)
			(void)rpc_conn_hook_remove(e->conn, &e->lost_hook);
		rpc_clnt_detach(&e->clnt);
		e->conn = NULL;
	}
	if (e->tc) {
		struct tcp_clnt *t = e->tc;

		e->tc = NULL;
		tcp_clnt_free(t); /* a pending call completes: step is IDLE, ignored */
	}
	if (step == STEP_OP)
		op_finish(e, -1); /* given up with its path */
}

/* The entry whose rpc_clnt is attached to conn, other than e (NULL: none). */
static struct cb_ent *conn_owner(const struct cb_ent *e, const struct rpc_conn *conn)
{
	for (unsigned i = 0; i < NFS4_CB_CLIENTS; i++) {
		struct cb_ent *o = &cb_tab[i];

		if (o != e && o->used && o->conn == conn && !o->via && conn->clnt == &o->clnt)
			return o;
	}
	return NULL;
}

/* 4.1: attach conn (the reference taken by nfs4_cb_bind41 is ours) and probe. */
static void ent_attach(struct cb_ent *e, struct rpc_conn *conn)
{
	ent_release_path(e);
	e->probe_retries = 0;
	e->probe_again = false;
	if (!e->clnt_ready) {
		if (rpc_clnt_init(&e->clnt, cb_loop, &cb_bc_params, NULL, e->name) != 0) {
			rpc_conn_put(conn);
			ent_fail(e, STEP_NULL, "no timer");
			return;
		}
		e->clnt_ready = true;
	}
	/* One call at a time: the back channel's slot 0 (nfs4_cb_state.h). */
	e->clnt.window = 1;
	struct cb_ent *owner = conn_owner(e, conn);

	if (owner) {
		/* RFC 8881 §2.10.3.1: one connection may carry the back channels of
		 * several sessions; its calls share the owner's rpc_clnt (replies
		 * come back by XID), one at a time. */
		e->via = owner;
		e->conn = conn;
		rpc_conn_put(conn); /* the owner's clnt holds one */
		ent_call(e, STEP_NULL);
		return;
	}
	if (rpc_clnt_attach(&e->clnt, conn) != 0) {
		rpc_conn_put(conn);
		ent_fail(e, STEP_NULL, "connection closed or busy");
		return;
	}
	e->conn = conn;
	rpc_conn_put(conn); /* rpc_clnt_attach took its own */
	e->lost_hook.closed = cb_conn_lost;
	pthread_mutex_lock(&cb_mu); /* the hook may fire at once on the connection's loop: it takes cb_mu */
	e->hooked = rpc_conn_hook_add(conn, &e->lost_hook);
	pthread_mutex_unlock(&cb_mu);
	ent_call(e, STEP_NULL);
}

/* 4.0: a new connection to the client's callback address, then (RPCSEC_GSS: a
 * new context under want, which is ours to free) CB_NULL. */
static void ent_probe40(struct cb_ent *e, const struct sockaddr_storage *sa, socklen_t len,
			struct nfs4_cb_gss40 *want)
{
	ent_release_path(e);
	gss_drop(e);
	e->gss_renewed = false;
	e->tc = tcp_clnt_new(cb_loop, (const struct sockaddr *)sa, len, want ? &cb_40_gss_params : &cb_40_params);
	if (!e->tc)
		ent_fail(e, STEP_NULL, "no connection");
	else if (want && !gss_begin(e, want))
		ent_fail(e, STEP_NULL, "no RPCSEC_GSS initiator (the keytab, or the client's principal, unknown)");
	else if (!want)
		ent_call(e, STEP_NULL); /* no RPCSEC_GSS (or no memory for it: fails, never AUTH_SYS) */
	free(want);
}

/* Loop thread: drop an entry whose client went. */
static void ent_drop(struct cb_ent *e)
{
	ent_release_path(e);
	ent_flush(e);
	if (e->clnt_ready)
		rpc_clnt_destroy(&e->clnt);
	gss_drop(e);
	pthread_mutex_lock(&cb_mu);
	if (e->bind)
		rpc_conn_put(e->bind);
	free(e->gss_want);
	memset(e, 0, offsetof(struct cb_ent, step));
	pthread_mutex_unlock(&cb_mu);
	e->clnt_ready = false;
	e->conn = NULL;
	e->tc = NULL;
}

/* Loop thread: one entry's pending work. */
static void ent_work(struct cb_ent *e)
{
	struct sockaddr_storage sa;
	socklen_t len;

	pthread_mutex_lock(&cb_mu);
	bool dead = e->dead, p40 = e->probe40, again = e->reprobe && e->step == STEP_IDLE, unbind = e->unbind;
	struct rpc_conn *conn = e->bind;
	struct nfs4_cb_gss40 *want = p40 ? e->gss_want : NULL;

	if (p40)
		e->gss_want = NULL;
	e->bind = NULL;
	e->probe40 = false;
	e->reprobe = false;
	e->unbind = false;
	sa = e->addr;
	len = e->addr_len;
	snprintf(e->name, sizeof(e->name), "client %llx", (unsigned long long)e->clientid);
	pthread_mutex_unlock(&cb_mu);
	if (dead) {
		if (conn)
			rpc_conn_put(conn);
		free(want);
		ent_drop(e);
	} else if (conn) {
		free(want);
		ent_attach(e, conn);
	} else if (p40) {
		ent_probe40(e, &sa, len, want);
	} else if (again && (e->conn || e->tc)) {
		ent_call(e, STEP_NULL);
	} else if (unbind) {
		ent_release_path(e);
	}
	if (!dead)
		ent_next(e);
}

/* The retry tick: probes answered "not yet" go again. */
static void cb_retry(int fd, short what, void *arg)
{
	(void)fd, (void)what, (void)arg;
	for (unsigned i = 0; i < NFS4_CB_CLIENTS; i++) {
		struct cb_ent *e = &cb_tab[i];

		if (e->used && e->probe_again && e->step == STEP_IDLE) {
			e->probe_again = false;
			if (e->conn)
				ent_call(e, STEP_SEQ);
		}
	}
}

static void cb_kick(int fd, short what, void *arg)
{
	(void)fd, (void)what, (void)arg;
	for (unsigned i = 0; i < NFS4_CB_CLIENTS; i++) {
		pthread_mutex_lock(&cb_mu);
		struct cb_ent *e = &cb_tab[i];
		bool work = e->used && (e->dead || e->bind || e->probe40 || e->reprobe || e->unbind || e->qlen);

		pthread_mutex_unlock(&cb_mu);
		if (work)
			ent_work(e);
	}
}

int nfs4_cb_start(struct loop *loop)
{
	cb_loop = loop;
	cb_40_gss_params = cb_40_params;
	cb_40_gss_params.send_buf = CB_GSS_INIT_MAX + 64;
	struct loop_ev *ev = loop_async(loop, cb_kick, NULL);

	if (!ev) {
		log_err("nfs4: cannot create the callback event");
		return -1;
	}
	cb_retry_ev = loop_timer(loop, false, cb_retry, NULL);
	if (!cb_retry_ev) {
		loop_ev_free(ev);
		log_err("nfs4: cannot create the callback retry timer");
		return -1;
	}
	pthread_mutex_lock(&cb_mu);
	cb_async = ev;
	pthread_mutex_unlock(&cb_mu);
	return 0;
}

void nfs4_cb_stop(void)
{
	pthread_mutex_lock(&cb_mu);
	struct loop_ev *ev = cb_async;

	cb_async = NULL;
	for (unsigned i = 0; i < NFS4_CB_CLIENTS; i++)
		cb_tab[i].dead = cb_tab[i].used;
	pthread_mutex_unlock(&cb_mu);
	for (unsigned i = 0; i < NFS4_CB_CLIENTS; i++)
		if (cb_tab[i].used)
			ent_drop(&cb_tab[i]);
	for (struct cb_gss *g = gss_waitq, *n; g; g = n) { /* steps that never started: let go of above */
		n = g->wait_next;
		gss_free(g);
	}
	gss_waitq = NULL;
	gss_waitq_tail = &gss_waitq;
	if (ev)
		loop_ev_free(ev);
	if (cb_retry_ev)
		loop_ev_free(cb_retry_ev);
	cb_retry_ev = NULL;
}
