/*
 * rpc_call.c - one RPC call from received bytes to reply bytes:
 * call header decoding (RFC 5531 §9; rpc_call_decode_header() is pure, and
 * fuzzed alone by fuzz/fuzz_rpc_call.c), authentication (rpc_auth.c), program
 * dispatch, duplicate request cache (rpc_drc.c), the handler on a worker
 * thread, reply headers, and completion back on the loop thread.
 *
 * Call states (the transport owns the struct rpc_call throughout):
 *
 *   rpc_call_receive()  --rejected / replayed / dropped--> send_reply()
 *          |
 *          +--workers_submit()--> rpc_call_run() [worker: decode, execute, encode]
 *          |   (or rpc_call_try_inline(): the same steps on the receiving
 *          |    thread, for what rpc_inline.h allows)
 *                                       |
 *                                 rpc_call_complete() [loop: DRC, stats]
 *                                       |
 *                                 send_reply()
 *
 * Reply buffer layout for accepted replies (RFC 5531 §9):
 *   xid | REPLY | MSG_ACCEPTED | verf flavor AUTH_NONE | verf length 0 |
 *   accept_stat (offset 20) | results (offset 24, encoded by the handler)
 */
#include "rpc/rpc_internal.h"
#include "rpc/rpc_clnt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/workers.h"
#include "rpc/rpc_inline.h"

static struct log_limit lim_bad_header;
static struct log_limit lim_rejected;
static struct log_limit lim_garbage;
static struct log_limit lim_overflow;

/*
 * Deferral (rpc.h: rpc_call_defer, rpc_call_resume). park_state:
 *
 *   NONE --defer [worker, in execute]--> PARKING --done [loop]--> PARKED
 *   PARKING --resume [any]--> RESUMED (done [loop] then submits the encode step)
 *   PARKED  --resume [any]--> RESUMED (resume submits the encode step)
 *   PARKED  --connection closed [loop hook]--> CANCELLED (worker: cancel(),
 *            loop: dropped; also when the connection was closed before defer)
 */
enum rpc_park_state { RPC_PARK_NONE, RPC_PARK_PARKING, RPC_PARK_PARKED, RPC_PARK_RESUMED,
		      RPC_PARK_CANCELLED };

static void rpc_call_complete(struct work *w);
static void rpc_call_park_closed(struct rpc_conn *conn, struct rpc_conn_hook *h);

int rpc_init(unsigned drc_entries)
{
	return rpc_drc_init(drc_entries);
}

void rpc_release(void)
{
	rpc_drc_release();
	rpc_prog_release();
}

static void rpc_call_reset(struct rpc_call *c)
{
	c->xid = c->prog = c->vers = c->proc = 0;
	c->procinfo = NULL;
	c->n_ddp_out = 0;
	c->payload_used = 0;
	c->payload_piped = 0;
	c->drop = false;
	c->from_cache = false;
	c->proc_failed = false;
	c->drc_forget = false;
	c->starttls = false;
	c->drc_entry = NULL;
	c->ddp_in_reduced = 0;
	c->stats = NULL;
	c->acct = NULL;
	c->proc_status = RPC_PROC_OK;
	c->gss = (struct rpc_gss_call){ 0 };
	c->reply_stat_off = RPC_REPLY_STAT_OFF;
	atomic_store_explicit(&c->park_state, RPC_PARK_NONE, memory_order_relaxed);
	c->park_hooked = false;
	c->work.home = c->conn ? c->conn->home : 0; /* completions on the connection's loop */
	clock_gettime(CLOCK_MONOTONIC, &c->t_start);
	xdr_enc_init(&c->res, c->reply_buf, c->reply_cap);
}

static void rpc_reply_send(struct rpc_call *c)
{
	if (c->gss.ctx)
		rpc_gss_call_end(c);
	if (!c->drop && c->res.overflow) {
		log_limited(&lim_overflow, LOG_WARNING,
			    "rpc: %s: reply buffer of %zu bytes too small, call xid 0x%08x dropped",
			    c->conn->peer_name, c->reply_cap, c->xid);
		c->drop = true;
	}
	c->conn->xprt->ops->send_reply(c);
}

/* A message we cannot answer (RFC 5531 §9 gives no reply without a call header). */
static void rpc_drop_bad(struct rpc_call *c, const char *why)
{
	log_limited(&lim_bad_header, LOG_WARNING, "rpc: %s: %s (%zu bytes), dropped",
		    c->conn->peer_name, why, c->msg_len);
	rpc_stats_count(RPC_STAT_BAD_HEADER);
	c->drop = true;
	rpc_reply_send(c);
}

static void rpc_enc_reply_head(struct rpc_call *c, uint32_t reply_stat)
{
	xdr_enc_init(&c->res, c->reply_buf, rpc_res_cap(c)); /* wrapped: room kept for the token */
	xdr_enc_u32(&c->res, c->xid);
	xdr_enc_u32(&c->res, RPC_MSG_REPLY);
	xdr_enc_u32(&c->res, reply_stat);
}

/* RFC 5531 §9: accepted_reply = verf + accept_stat (+ mismatch_info). */
void rpc_enc_accepted(struct rpc_call *c, uint32_t accept_stat)
{
	rpc_enc_reply_head(c, RPC_MSG_ACCEPTED);
	if (c->gss.reply_verf) {
		rpc_gss_enc_verf(c); /* RFC 2203 §5.2.3.1, §5.3.3.2: a MIC */
	} else if (c->starttls) {
		/* RFC 9289 §4.1: verifier AUTH_NONE whose body is the 8 bytes "STARTTLS". */
		xdr_enc_u32(&c->res, RPC_AUTH_NONE);
		xdr_enc_opaque(&c->res, "STARTTLS", 8);
	} else {
		xdr_enc_u32(&c->res, RPC_AUTH_NONE); /* our verifier: AUTH_NONE, empty */
		xdr_enc_u32(&c->res, 0);
	}
	c->reply_stat_off = (uint32_t)xdr_enc_len(&c->res);
	xdr_enc_u32(&c->res, accept_stat);
}

/* One rate-limited line per rejected call, naming the peer and what it asked for. */
static void rpc_log_rejected(const struct rpc_call *c, const char *why)
{
	log_limited(&lim_rejected, LOG_NOTICE, "rpc: %s: call xid 0x%08x prog %u vers %u proc %u: %s",
		    c->conn->peer_name, c->xid, c->prog, c->vers, c->proc, why);
}

/* RFC 5531 §9: rejected_reply, RPC_MISMATCH with versions or AUTH_ERROR with auth_stat. */
static void rpc_reply_rpc_mismatch(struct rpc_call *c)
{
	rpc_log_rejected(c, "RPC version mismatch");
	rpc_enc_reply_head(c, RPC_MSG_DENIED);
	xdr_enc_u32(&c->res, RPC_RPC_MISMATCH);
	xdr_enc_u32(&c->res, RPC_VERSION); /* low */
	xdr_enc_u32(&c->res, RPC_VERSION); /* high */
	rpc_stats_count(RPC_STAT_RPC_MISMATCH);
	rpc_reply_send(c);
}

static void rpc_reply_auth_error(struct rpc_call *c, int auth_stat)
{
	log_limited(&lim_rejected, LOG_NOTICE,
		    "rpc: %s: call xid 0x%08x prog %u: authentication error %d",
		    c->conn->peer_name, c->xid, c->prog, auth_stat);
	rpc_enc_reply_head(c, RPC_MSG_DENIED);
	xdr_enc_u32(&c->res, RPC_AUTH_ERROR);
	xdr_enc_u32(&c->res, (uint32_t)auth_stat);
	rpc_stats_count(RPC_STAT_AUTH_ERROR);
	rpc_reply_send(c);
}

static void rpc_reply_accept_error(struct rpc_call *c, uint32_t accept_stat, enum rpc_stat_event ev)
{
	rpc_log_rejected(c, accept_stat == RPC_PROG_UNAVAIL ? "program unavailable" : "procedure unavailable");
	rpc_enc_accepted(c, accept_stat);
	rpc_stats_count(ev);
	rpc_reply_send(c);
}

static void rpc_reply_prog_mismatch(struct rpc_call *c, uint32_t low, uint32_t high)
{
	rpc_log_rejected(c, "program version mismatch");
	rpc_enc_accepted(c, RPC_PROG_MISMATCH);
	xdr_enc_u32(&c->res, low);
	xdr_enc_u32(&c->res, high);
	rpc_stats_count(RPC_STAT_PROG_MISMATCH);
	rpc_reply_send(c);
}

/* Replace whatever the handler encoded by a bare accept_stat. Worker thread. */
static void rpc_res_reset_stat(struct rpc_call *c, uint32_t accept_stat)
{
	c->res.p = c->res.base + c->reply_stat_off;
	c->res.overflow = false;
	c->n_ddp_out = 0;
	xdr_enc_u32(&c->res, accept_stat);
}

#ifndef NDEBUG
/* Debug builds: a reply longer than the table's max_reply is a wrong table. */
static void rpc_check_max_reply(const struct rpc_call *c)
{
	const struct rpc_proc *p = c->procinfo;

	/* A GSS verifier and wrapping, or the STARTTLS verifier, add to what the table counts. */
	if (p->max_reply && !c->gss.ctx && !c->starttls && !c->res.overflow && xdr_enc_len(&c->res) > p->max_reply) {
		log_err("rpc: %s (prog %u vers %u): reply of %zu bytes exceeds the table's max_reply %u",
			p->name, c->prog, c->vers, xdr_enc_len(&c->res), p->max_reply);
		abort();
	}
}
#endif

/*
 * Worker thread. The procedure's steps: decode the arguments into zeroed
 * scratch, execute, encode the results. Returns what execute said (or
 * RPC_PROC_GARBAGE when decode failed).
 */
static enum rpc_proc_status rpc_proc_steps(struct rpc_call *c)
{
	const struct rpc_proc *p = c->procinfo;
	void *args = c->args_scratch, *res = c->res_scratch;

	memset(args, 0, p->args_size);
	memset(res, 0, p->res_size);
	if (p->decode && !p->decode(c, args))
		return RPC_PROC_GARBAGE;
	enum rpc_proc_status st = p->execute(c, args, res);
	if (st == RPC_PROC_OK && p->encode)
		p->encode(c, res);
#ifndef NDEBUG
	if (st == RPC_PROC_OK)
		rpc_check_max_reply(c);
#endif
	return st;
}

/* Worker thread: turn the procedure's status into the reply's (RFC 5531 §9). */
static void rpc_call_finish(struct rpc_call *c, enum rpc_proc_status st)
{
	if (st == RPC_PROC_DEFER &&
	    atomic_load_explicit(&c->park_state, memory_order_acquire) != RPC_PARK_NONE) {
		c->proc_status = st; /* parked: rpc_call_complete() takes it from here */
		return;
	}
	if (st == RPC_PROC_OK && c->res.overflow) {
		log_limited(&lim_overflow, LOG_WARNING,
			    "rpc: %s: %s reply does not fit in %zu bytes, SYSTEM_ERR",
			    c->conn->peer_name, c->procinfo->name, c->reply_cap);
		st = RPC_PROC_SYSERR;
	}
	if (st == RPC_PROC_OK && c->drc_entry && c->gss.ctx)
		rpc_drc_gss_results(c); /* RFC 2203 §5.3.3.1: cached unwrapped, re-signed on a hit */
	if (st == RPC_PROC_OK && c->gss.wrap && !rpc_gss_wrap_reply(c))
		st = RPC_PROC_SYSERR; /* logged there */
	switch (st) {
	case RPC_PROC_OK:
		break;
	case RPC_PROC_GARBAGE:
		/* RFC 5531 §9: GARBAGE_ARGS, "procedure can't decode params". */
		log_limited(&lim_garbage, LOG_NOTICE,
			    "rpc: %s: %s (prog %u vers %u proc %u) xid 0x%08x: undecodable arguments",
			    c->conn->peer_name, c->procinfo->name, c->prog, c->vers, c->proc, c->xid);
		rpc_res_reset_stat(c, RPC_GARBAGE_ARGS);
		rpc_stats_count(RPC_STAT_GARBAGE_ARGS);
		break;
	case RPC_PROC_WORKER: /* declined on a worker, where it must not: a procedure bug */
	case RPC_PROC_DEFER:
		/* Parking a call needs rpc_call_defer() first; without it the
		 * call would be lost: a procedure bug, answered SYSTEM_ERR. */
		log_limited(&lim_garbage, LOG_ERR, "rpc: %s: %s deferred a call it did not park, SYSTEM_ERR",
			    c->conn->peer_name, c->procinfo->name);
		st = RPC_PROC_SYSERR;
		/* fall through */
	case RPC_PROC_SYSERR:
		rpc_res_reset_stat(c, RPC_SYSTEM_ERR);
		rpc_stats_count(RPC_STAT_SYSTEM_ERR);
		break;
	case RPC_PROC_TOOWEAK:
		rpc_enc_reply_head(c, RPC_MSG_DENIED);
		xdr_enc_u32(&c->res, RPC_AUTH_ERROR);
		xdr_enc_u32(&c->res, RPC_AUTH_TOOWEAK);
		c->n_ddp_out = 0;
		rpc_stats_count(RPC_STAT_AUTH_ERROR);
		break;
	case RPC_PROC_DROP:
	default:
		c->drop = true;
		rpc_stats_count(RPC_STAT_HANDLER_DROP);
		break;
	}
	c->proc_status = st;
}

/* Main thread, at shutdown, while a worker may still run c: prog, vers, proc and xid are set before
 * the call is submitted and never change after (workers_stop_within's log). */
static void rpc_call_describe(const struct work *w, char *buf, size_t len)
{
	const struct rpc_call *c = container_of(w, struct rpc_call, work);

	snprintf(buf, len, "program %u version %u procedure %u xid %#x", c->prog, c->vers, c->proc, c->xid);
}

/* Worker thread. */
static void rpc_call_run(struct work *w)
{
	struct rpc_call *c = container_of(w, struct rpc_call, work);
	rpc_call_finish(c, rpc_proc_steps(c));
}

static uint64_t rpc_call_elapsed_ns(const struct rpc_call *c)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t ns = (int64_t)(now.tv_sec - c->t_start.tv_sec) * 1000000000 +
		     (now.tv_nsec - c->t_start.tv_nsec);
	return ns > 0 ? (uint64_t)ns : 0;
}

/* Worker thread: a resumed call's encode step (rpc_call_resume). */
static void rpc_call_resumed_run(struct work *w)
{
	struct rpc_call *c = container_of(w, struct rpc_call, work);
	enum rpc_proc_status st = (enum rpc_proc_status)c->resume_status;

	if (st == RPC_PROC_DEFER)
		st = RPC_PROC_SYSERR; /* parked twice: answered as a procedure bug */
	if (st == RPC_PROC_OK && c->procinfo->encode)
		c->procinfo->encode(c, c->res_scratch);
	atomic_store_explicit(&c->park_state, RPC_PARK_NONE, memory_order_relaxed);
	rpc_call_finish(c, st);
}

static void rpc_call_submit_resumed(struct rpc_call *c)
{
	c->work.run = rpc_call_resumed_run;
	c->work.describe = rpc_call_describe;
	c->work.done = rpc_call_complete;
	workers_submit(&c->work);
}

void rpc_call_defer(struct rpc_call *c, void (*cancel)(struct rpc_call *c, void *arg), void *arg)
{
	c->park_cancel = cancel;
	c->park_arg = arg;
	c->park_hook.closed = rpc_call_park_closed;
	c->park_hooked = rpc_conn_hook_add(c->conn, &c->park_hook);
	atomic_store_explicit(&c->park_state, RPC_PARK_PARKING, memory_order_release);
}

bool rpc_call_resume(struct rpc_call *c, enum rpc_proc_status st)
{
	int expect = RPC_PARK_PARKING;

	c->resume_status = st;
	/* Still on its worker, or its completion not yet run: rpc_call_parked() submits. */
	if (atomic_compare_exchange_strong(&c->park_state, &expect, RPC_PARK_RESUMED))
		return true;
	if (expect != RPC_PARK_PARKED ||
	    !atomic_compare_exchange_strong(&c->park_state, &expect, RPC_PARK_RESUMED))
		return false; /* cancelled */
	rpc_call_submit_resumed(c);
	return true;
}

/* Loop thread: a cancelled call leaves without a reply. */
static void rpc_call_cancelled_done(struct work *w)
{
	struct rpc_call *c = container_of(w, struct rpc_call, work);

	c->drop = true;
	if (c->drc_entry)
		rpc_drc_complete(c); /* forgotten: a retransmission on a new connection runs again */
	rpc_stats_count(RPC_STAT_HANDLER_DROP);
	rpc_stats_record(c->stats, true, rpc_call_elapsed_ns(c));
	rpc_reply_send(c);
}

/* Worker thread: tell the owner its parked call is gone. */
static void rpc_call_cancel_run(struct work *w)
{
	struct rpc_call *c = container_of(w, struct rpc_call, work);
	if (c->park_cancel)
		c->park_cancel(c, c->park_arg);
}

/* Loop thread: cancel a PARKED call unless it was resumed first. Through a
 * worker: never re-enters the transport from inside its close path. */
static void rpc_call_cancel(struct rpc_call *c)
{
	int expect = RPC_PARK_PARKED;

	if (!atomic_compare_exchange_strong(&c->park_state, &expect, RPC_PARK_CANCELLED))
		return;
	c->work.run = rpc_call_cancel_run;
	c->work.describe = rpc_call_describe;
	c->work.done = rpc_call_cancelled_done;
	workers_submit(&c->work);
}

/* Loop thread, the close hook of a parked call's connection. */
static void rpc_call_park_closed(struct rpc_conn *conn, struct rpc_conn_hook *h)
{
	(void)conn;
	rpc_call_cancel(container_of(h, struct rpc_call, park_hook));
}

/* Loop thread: execute returned RPC_PROC_DEFER after rpc_call_defer(). */
static void rpc_call_parked(struct rpc_call *c)
{
	int expect = RPC_PARK_PARKING;

	if (atomic_compare_exchange_strong(&c->park_state, &expect, RPC_PARK_PARKED)) {
		/* The connection had closed before the park, or while the call
		 * was still PARKING (its hook then found nothing to cancel). */
		if (!c->park_hooked || rpc_conn_is_closed(c->conn))
			rpc_call_cancel(c);
		return; /* parked: no worker held */
	}
	rpc_call_submit_resumed(c); /* resumed while its worker was finishing */
}

/* Loop thread, after rpc_call_run(). */
static void rpc_call_complete(struct work *w)
{
	struct rpc_call *c = container_of(w, struct rpc_call, work);

	if (c->proc_status == RPC_PROC_DEFER) {
		rpc_call_parked(c);
		return;
	}
	/* A resumed call: its close hook must go before the context is reused.
	 * Not found: the hook ran already (same thread) and found it resumed. */
	if (c->park_hooked) {
		rpc_conn_hook_remove(c->conn, &c->park_hook);
		c->park_hooked = false;
	}
	if (c->drc_entry)
		rpc_drc_complete(c);
	bool failed = c->proc_status != RPC_PROC_OK || c->proc_failed;

	rpc_stats_record(c->stats, failed, rpc_call_elapsed_ns(c));
	if (c->acct) {
		atomic_fetch_add_explicit(&c->acct->calls, 1, memory_order_relaxed);
		if (failed)
			atomic_fetch_add_explicit(&c->acct->errors, 1, memory_order_relaxed);
		rpc_acct_put(c->acct);
		c->acct = NULL;
	}
	rpc_reply_send(c);
}

void rpc_call_acct(struct rpc_call *c, struct rpc_acct *a)
{
	atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed);
	rpc_acct_put(c->acct);
	c->acct = a;
}

void rpc_acct_put(struct rpc_acct *a)
{
	if (a && atomic_fetch_sub_explicit(&a->refs, 1, memory_order_acq_rel) == 1)
		free(a);
}

static uint64_t rpc_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Receiving thread: run the call here when rpc_inline.c says so (the same
 * steps as a worker's, then the completion a worker's would get). */
static bool rpc_call_try_inline(struct rpc_call *c)
{
	enum rpc_run run = (enum rpc_run)c->procinfo->run;
	uint64_t t0 = 0;

	if (c->procinfo->run_of) {
		t0 = rpc_now_ns();
		run = rpc_inline_open(RPC_RUN_INLINE_META, t0) ? (enum rpc_run)c->procinfo->run_of(c) : RPC_RUN_WORKER;
	}
	if (run == RPC_RUN_WORKER)
		return false;
	if (!t0)
		t0 = rpc_now_ns();
	if (!rpc_inline_pick(run, t0))
		return false;
	uint64_t nvcsw0 = rpc_inline_nvcsw(); /* did it sleep, or was it preempted (rpc_inline.h)? */
	/* What decode and execute may take before declining, given back if it does. */
	struct xdr_dec args = c->args;
	size_t payload_used = c->payload_used, ddp_in_reduced = c->ddp_in_reduced;
	uint8_t *res_end = c->res.end;
	enum rpc_proc_status st = rpc_proc_steps(c);

	if (st == RPC_PROC_WORKER) {
		c->args = args;
		c->payload_used = payload_used;
		c->ddp_in_reduced = ddp_in_reduced;
		c->res.end = res_end;
		c->proc_failed = false;
		rpc_inline_declined();
		return false;
	}
	rpc_call_finish(c, st);
	uint64_t t1 = rpc_now_ns();
	rpc_inline_took(run, t1 - t0, t1, nvcsw0);
	rpc_call_complete(&c->work);
	return true;
}

/* A GSS control or data call that did not verify: GARBAGE_ARGS. Any thread. */
static void rpc_call_gss_garbage(struct rpc_call *c)
{
	rpc_enc_accepted(c, RPC_GARBAGE_ARGS);
	rpc_stats_count(RPC_STAT_GARBAGE_ARGS);
}

/* Worker thread: one step of context creation (RFC 2203 §5.2.2), which may read the keytab
 * and the replay cache from disk and ask the name service. */
static void rpc_call_gss_establish_run(struct work *w)
{
	struct rpc_call *c = container_of(w, struct rpc_call, work);

	if (rpc_gss_establish(c) == RPC_GSS_V_GARBAGE)
		rpc_call_gss_garbage(c);
}

/* Loop thread, after rpc_call_gss_establish_run(). */
static void rpc_call_gss_establish_done(struct work *w)
{
	rpc_reply_send(container_of(w, struct rpc_call, work));
}

/* An RPCSEC_GSS call before dispatch (rpc_gss_krb5.c): true to dispatch it,
 * false when it was answered, dropped or handed to a worker here. */
static bool rpc_call_gss(struct rpc_call *c)
{
	int auth_stat = RPC_AUTH_OK;

	switch (rpc_gss_accept(c, &auth_stat)) {
	case RPC_GSS_V_DISPATCH:
		return true;
	case RPC_GSS_V_ESTABLISH:
		c->work.run = rpc_call_gss_establish_run;
		c->work.describe = rpc_call_describe;
		c->work.done = rpc_call_gss_establish_done;
		workers_submit(&c->work);
		return false;
	case RPC_GSS_V_REPLY:
		break;
	case RPC_GSS_V_DROP:
		c->drop = true; /* RFC 2203 §5.3.3.1: silently discarded */
		rpc_stats_count(RPC_STAT_HANDLER_DROP);
		break;
	case RPC_GSS_V_DENIED:
		rpc_reply_auth_error(c, auth_stat);
		return false;
	case RPC_GSS_V_GARBAGE:
		rpc_call_gss_garbage(c);
		break;
	}
	rpc_reply_send(c);
	return false;
}

/* An AUTH_TLS probe on c's connection (RFC 9289 §4.1). */
static enum rpc_tls_probe rpc_call_tls_probe(const struct rpc_call *c)
{
	return rpc_tls_probe_decide(c->proc, c->conn->tls_offer && !c->conn->tls_starting);
}

/* After the credential: program, version, procedure (RFC 5531 §9 accept_stat). */
static void rpc_call_dispatch(struct rpc_call *c)
{
	struct rpc_prog_lookup lk;

	rpc_prog_find(c->prog, c->vers, &lk);
	if (!lk.prog) {
		rpc_reply_accept_error(c, RPC_PROG_UNAVAIL, RPC_STAT_PROG_UNAVAIL);
		return;
	}
	if (!lk.version) {
		rpc_reply_prog_mismatch(c, lk.low, lk.high);
		return;
	}
	if (c->proc >= lk.version->nprocs || !lk.version->procs[c->proc].execute) {
		rpc_reply_accept_error(c, RPC_PROC_UNAVAIL, RPC_STAT_PROC_UNAVAIL);
		return;
	}
	c->procinfo = &lk.version->procs[c->proc];
	c->stats = lk.stats ? &lk.stats[c->proc] : NULL;
	if (c->cred.flavor == RPC_AUTH_TLS && rpc_call_tls_probe(c) == RPC_TLS_PROBE_STARTTLS) {
		/* RFC 9289 §4.1: answered STARTTLS; the transport reads nothing more
		 * until this reply is written, then handshakes. */
		c->starttls = true;
		c->conn->tls_starting = true;
	}
	rpc_enc_accepted(c, RPC_SUCCESS);

	/* RPCSEC_GSS calls too: a retransmission carries a new seq_num (RFC 2203
	 * §5.3.3.1), so a hit gets this call's verifier and its results are
	 * wrapped again here, on the loop thread (at most RPC_DRC_MAX_REPLY bytes). */
	if (c->procinfo->cache == RPC_CACHE_DRC && (!c->procinfo->cache_wanted || c->procinfo->cache_wanted(c))) {
		switch (rpc_drc_lookup(c)) {
		case RPC_DRC_IN_PROGRESS:
			/* The original is still running; its reply answers both. */
			rpc_stats_count(RPC_STAT_DRC_IN_PROGRESS);
			c->drop = true;
			rpc_reply_send(c);
			return;
		case RPC_DRC_REPLAY:
			rpc_stats_count(RPC_STAT_DRC_HIT);
			if (c->gss.wrap && !rpc_gss_wrap_reply(c))
				rpc_res_reset_stat(c, RPC_SYSTEM_ERR); /* logged there */
			c->from_cache = true;
			rpc_reply_send(c);
			return;
		case RPC_DRC_NEW:
			break;
		}
	}
	if (rpc_call_try_inline(c))
		return;
	c->work.run = rpc_call_run;
	c->work.describe = rpc_call_describe;
	c->work.done = rpc_call_complete;
	workers_submit(&c->work);
}

enum rpc_hdr_status rpc_call_decode_header(struct rpc_call *c, const char **why, int *auth_stat)
{
	struct xdr_dec d;
	uint32_t msg_type, rpcvers;

	xdr_dec_init(&d, c->msg, c->msg_len);
	/* RFC 5531 §9: struct rpc_msg { xid; union switch (msg_type) { CALL: call_body } } */
	if (!xdr_dec_u32(&d, &c->xid) || !xdr_dec_u32(&d, &msg_type)) {
		*why = "message too short for an RPC header";
		return RPC_HDR_DROP;
	}
	if (msg_type == RPC_MSG_REPLY) {
		*why = "reply message received";
		return RPC_HDR_REPLY;
	}
	if (msg_type != RPC_MSG_CALL) {
		*why = "bad message type";
		return RPC_HDR_DROP;
	}
	if (!xdr_dec_u32(&d, &rpcvers)) {
		*why = "truncated call header";
		return RPC_HDR_DROP;
	}
	/* RFC 5531 §9: rpcvers must be 2, else MSG_DENIED RPC_MISMATCH with the versions we speak. */
	if (rpcvers != RPC_VERSION)
		return RPC_HDR_RPC_MISMATCH;
	if (!xdr_dec_u32(&d, &c->prog) || !xdr_dec_u32(&d, &c->vers) ||
	    !xdr_dec_u32(&d, &c->proc)) {
		*why = "truncated call header";
		return RPC_HDR_DROP;
	}
	uint32_t flavor;
	struct xdr_dec peek = d;
	if (xdr_dec_u32(&peek, &flavor) && flavor == RPC_AUTH_GSS && rpc_gss_enabled())
		*auth_stat = rpc_gss_decode_auth(&d, c);
	else
		*auth_stat = rpc_auth_decode(&d, &c->cred);
	if (*auth_stat != RPC_AUTH_OK)
		return RPC_HDR_AUTH_ERROR;
	/* Arguments follow; positions stay relative to the message start (RFC 8166 §3.4.5). */
	c->args = d;
	return RPC_HDR_OK;
}

void rpc_call_receive(struct rpc_call *c)
{
	const char *why = NULL;
	int auth_stat = RPC_AUTH_OK;

	rpc_call_reset(c);
	switch (rpc_call_decode_header(c, &why, &auth_stat)) {
	case RPC_HDR_REPLY:
		/* RFC 5531 §9: a REPLY on a connection that also carries the calls
		 * we make (an NFSv4.1 backchannel) answers one of them: match it by
		 * XID. Elsewhere it is no call of ours: dropped. */
		if (!rpc_clnt_conn_reply(c->conn, c->msg, c->msg_len)) {
			rpc_drop_bad(c, why);
			return;
		}
		c->drop = true;
		rpc_reply_send(c);
		return;
	case RPC_HDR_DROP:
		rpc_drop_bad(c, why);
		return;
	case RPC_HDR_RPC_MISMATCH:
		rpc_reply_rpc_mismatch(c);
		return;
	case RPC_HDR_AUTH_ERROR:
		rpc_reply_auth_error(c, auth_stat);
		return;
	case RPC_HDR_OK:
		break;
	}
	if (c->cred.flavor == RPC_AUTH_GSS && !rpc_call_gss(c))
		return;
	if (c->cred.flavor == RPC_AUTH_TLS && rpc_call_tls_probe(c) == RPC_TLS_PROBE_BADCRED) {
		rpc_reply_auth_error(c, RPC_AUTH_BADCRED);
		return;
	}
	rpc_stats_count_flavor(c);
	rpc_call_dispatch(c);
}
