/*
 * nfs4_proc_session.c - the NFSv4.1 session operations on top of the state
 * module (nfs4_clients.c): EXCHANGE_ID (RFC 8881 §18.35), CREATE_SESSION
 * (§18.36), DESTROY_SESSION (§18.37), SEQUENCE (§18.46), DESTROY_CLIENTID
 * (§18.50), RECLAIM_COMPLETE (§18.51), and the end of a COMPOUND that took
 * a slot (its reply goes into the slot's cache).
 *
 * One server-wide struct nfs4_ctab, set up when NFSv4 is registered. The
 * back channel is nfs4_proc_cb.c's and nfs4_cb.c's (CONN_BACK_CHAN; SEQUENCE
 * reports a path that is down); no state protection (SP4_NONE), no persistent sessions; leases are expired
 * every second by a timer on the loop (nfs4_expiry_start()) whose work runs on a worker, as well as on the
 * way by the operations that act for a client (nfs4_session_tick()).
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/random.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/workers.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/cb/nfs4_cb.h"
#include "nfs/v4/ops/nfs4_copy_async.h"
#include "nfs/v4/ops/nfs4_lock_notify.h"
#include "nfs/v4/recovery/nfs4_recovery.h"

/* RFC 8881 §18.35.1: the eia_flags a client may set (undefined ones, and
 * the server's CONFIRMED_R, are NFS4ERR_INVAL, §18.35.3; as knfsd). */
#define EXCHGID4_FLAG_MASK_A 0x40070103u
/* RFC 8881 §18.36.1: csa_flags PERSIST, CONN_BACK_CHAN, CONN_RDMA. */
#define CREATE_SESSION4_FLAG_MASK 0x7u
/* RFC 8881 §18.36.3: a channel that cannot carry the smallest COMPOUND
 * with SEQUENCE is NFS4ERR_TOOSMALL: an RPC call header without credentials
 * (40 bytes), COMPOUND4args with an empty tag (12), SEQUENCE4args (36);
 * a reply header (24), COMPOUND4res (12), SEQUENCE4res (44). */
#define NFS4_MIN_REQUEST (40u + 12u + 36u)
#define NFS4_MIN_RESPONSE (24u + 12u + 44u)

static struct nfs4_ctab nfs4_st;
static struct nfs4_stab nfs4_stb; /* open state, purged with its client records */
static bool nfs4_st_ready;
static _Atomic uint64_t nfs4_last_tick;

/* The open state table's references on the backend's open files. */
static void nfs4_stb_get(void *fs, void *file)
{
	be_file_get(fs, file);
}

static void nfs4_stb_put(void *fs, void *file)
{
	be_file_put(fs, file);
}

/* A lock stateid went: its owner's locks on the file with it. */
static void nfs4_stb_unlock(void *fs, void *file, uint64_t owner)
{
	be_lock_owner_release(fs, file, owner);
}

static bool nfs4_stb_locked(void *fs, void *file, uint64_t owner)
{
	return nfs4_lock_owner_holds(fs, file, owner);
}

static const struct nfs4_stab_file_ops nfs4_stb_ops = { .get = nfs4_stb_get, .put = nfs4_stb_put,
							.unlock = nfs4_stb_unlock, .locked = nfs4_stb_locked };

static uint32_t nfs4_lease = NFS4_LEASE_TIME; /* [nfsv4] lease-time */

void nfs4_session_configure(unsigned lease_s)
{
	nfs4_lease = lease_s ? lease_s : NFS4_LEASE_TIME;
}

static unsigned nfs4_max_clients; /* [nfsv4] max-clients (0: the ceiling) */
static unsigned nfs4_per_host, nfs4_per_principal; /* [nfsv4] max-clients-per-host, -per-principal */
static size_t nfs4_cache_total;                    /* [nfsv4] reply-cache-size (0: the default) */

void nfs4_session_max_clients(unsigned n)
{
	nfs4_max_clients = n;
}

void nfs4_session_limits(unsigned per_host, unsigned per_principal, size_t reply_cache)
{
	nfs4_per_host = per_host;
	nfs4_per_principal = per_principal;
	nfs4_cache_total = reply_cache;
}

/* [nfsv4] max-open-files, max-open-files-per-client, max-lock-owners-per-client (derived) */
static struct {
	unsigned max_files, opens_per_client, locks_per_client;
} nfs4_stab_bounds;

void nfs4_session_state_limits(unsigned max_files, unsigned opens_per_client, unsigned locks_per_client)
{
	nfs4_stab_bounds.max_files = max_files;
	nfs4_stab_bounds.opens_per_client = opens_per_client;
	nfs4_stab_bounds.locks_per_client = locks_per_client;
}

uint32_t nfs4_lease_time(void)
{
	return nfs4_lease;
}

/*
 * RFC 8881 §2.10.4-2.10.5: a client treats servers that answer EXCHANGE_ID
 * with the same so_major_id and eir_server_scope as one server sharing
 * state (trunking). Two rnfsd hosts (say in front of one CephFS) share no
 * state, so each names itself by its host name, as knfsd does (nodename).
 */
static char nfs4_server_name[256] = "rnfsd";

static void nfs4_server_name_init(void)
{
	char host[256];

	if (gethostname(host, sizeof(host)) == 0 && host[0]) {
		host[sizeof(host) - 1] = 0;
		snprintf(nfs4_server_name, sizeof(nfs4_server_name), "%s", host);
	}
}

/* A client record went (nfs4_ctab's freed hook, under its lock): what other
 * modules keep for it goes too. */
static void nfs4_client_freed(uint64_t clientid)
{
	nfs4_cb_client_gone(clientid);
	nfs4_deleg_client_gone(clientid);
	nfs4_copy_async_client_gone(clientid); /* RFC 7862 §4.8: copy state goes with the client */
	nfs4_lock_notify_client_gone(clientid);
}

/* RFC 8881 §2.10.8.3: session ids and confirm verifiers from the kernel's
 * CSPRNG (GRND_NONBLOCK: never wait; before the pool is ready, false and
 * nfs4_ctab's own generator, seeded below). */
static bool nfs4_random(void *buf, size_t len)
{
	ssize_t n;

	do
		n = getrandom(buf, len, GRND_NONBLOCK);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len;
}

void nfs4_session_init(void)
{
	uint64_t seed = 0;
	uint32_t boot = (uint32_t)time(NULL);

	nfs4_server_name_init();

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (uint64_t)clock();
	/* One boot value for both: a stateid names its clientid (nfs4_stateid_clientid()). */
	nfs4_ctab_init(&nfs4_st, boot, seed, nfs4_lease);
	nfs4_st.random = nfs4_random;
	if (nfs4_max_clients)
		nfs4_ctab_set_max_clients(&nfs4_st, nfs4_max_clients);
	nfs4_ctab_set_shares(&nfs4_st, nfs4_per_host, nfs4_per_principal);
	nfs4_ctab_set_cache_total(&nfs4_st, nfs4_cache_total);
	nfs4_stab_init(&nfs4_stb, boot, &nfs4_stb_ops);
	nfs4_stab_limits(&nfs4_stb, nfs4_stab_bounds.max_files, nfs4_stab_bounds.opens_per_client,
			 nfs4_stab_bounds.locks_per_client);
	nfs4_ctab_set_stab(&nfs4_st, &nfs4_stb);
	nfs4_st.gone = nfs4_client_gone; /* RFC 8881 §8.4.3: its stable record goes too */
	nfs4_st.gone_flush = nfs4_client_gone_flush; /* durable before the state lock is let go */
	nfs4_st.freed = nfs4_client_freed; /* and its callback path, delegations, copies, lock waiters */
	nfs4_st.stable = nfs4_client_stable; /* RFC 8881 §8.4.3: recorded before it is confirmed */
	nfs4_st.session_freed = nfs4_cb_session_gone; /* a reclaimed idle session's back channel */
	nfs4_deleg_init(boot);
	nfs4_lock_notify_start();
	nfs4_st_ready = true;
}

void nfs4_session_release(void)
{
	if (nfs4_st_ready) {
		nfs4_copy_async_stop(); /* copies stop, their files let go */
		nfs4_lock_notify_stop();
		nfs4_ctab_release(&nfs4_st); /* purges every client's open state */
		nfs4_stab_release(&nfs4_stb);
	}
	nfs4_st_ready = false;
}

struct nfs4_stab *nfs4_session_stab(void)
{
	return &nfs4_stb;
}

struct nfs4_ctab *nfs4_session_state(void)
{
	return &nfs4_st;
}

static uint64_t nfs4_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

/* RFC 8881 §18.35.3, §18.36.3, §18.50.3: EXCHANGE_ID, CREATE_SESSION and
 * DESTROY_CLIENTID without a SEQUENCE before them must be alone in the COMPOUND. */
static bool nfs4_not_only_op(const struct nfs4_ctx *x)
{
	const struct nfs4_svc *s = x->priv;

	return !s->seq_new && x->numops > 1;
}

/* nfs4_grace_check() for a client named by its clientid (its co_ownerid /
 * nfs_client_id4 is what the stable records know). */
uint32_t nfs4_grace_for(enum nfs4_grace_op op, uint64_t clientid, bool is_reclaim)
{
	uint8_t owner[NFS4_OWNER_MAX];
	uint32_t len = 0;

	/* RFC 8881 §18.51.3: "If non-reclaim locking operations are done before
	 * the RECLAIM_COMPLETE, an NFS4ERR_GRACE error will be returned." */
	if (!is_reclaim && (op == NFS4_GRACE_OPEN || op == NFS4_GRACE_LOCK) &&
	    !nfs4_client_may_lock(&nfs4_st, clientid))
		return NFS4ERR_GRACE;
	if (!nfs4_client_owner(&nfs4_st, clientid, owner, &len))
		len = 0;
	return nfs4_grace_check(op, len ? owner : NULL, len, is_reclaim);
}

uint64_t nfs4_session_now(void)
{
	return nfs4_now();
}

void nfs4_session_tick(void)
{
	uint64_t now = nfs4_now(), last = nfs4_last_tick;

	if (now != last && atomic_compare_exchange_strong(&nfs4_last_tick, &last, now)) {
		nfs4_ctab_expire(&nfs4_st, now);
		nfs4_copy_async_tick((uint64_t)nfs4_lease * 1000u);
		nfs4_lock_notify_tick(now, nfs4_lease);
		nfs4_recovery_tick();
	}
}

/* The asker of a new client record: its principal and its host's address. */
void nfs4_who(const struct nfs4_ctx *x, struct nfs4_who *who)
{
	who->principal = nfs4_principal(x);
	nfs4_host_key(x->call && x->call->conn ? (const struct sockaddr *)&x->call->conn->peer : NULL, who->host);
}

/* ---- lease expiry on a timer ---- */

static struct loop_ev *nfs4_expiry_ev;
static struct work nfs4_expiry_work;
static atomic_bool nfs4_expiry_queued; /* the work item is queued or running */

/* Worker: what the lazy path does (the state mutex, then the open-state table's; backend calls). */
static void nfs4_expiry_run(struct work *w)
{
	(void)w;
	nfs4_session_tick();
}

static void nfs4_expiry_done(struct work *w)
{
	(void)w;
	atomic_store(&nfs4_expiry_queued, false);
}

/* Loop thread, every second: RFC 8881 §8.3, RFC 7530 §9.6: a lease not renewed ends after lease_time
 * even when nobody else calls; the expiry itself goes to a worker. */
static void nfs4_expiry_cb(int fd, short what, void *arg)
{
	(void)fd, (void)what, (void)arg;
	if (!atomic_exchange(&nfs4_expiry_queued, true))
		workers_submit(&nfs4_expiry_work);
}

int nfs4_expiry_start(struct loop *loop)
{
	const struct timeval second = { 1, 0 };

	nfs4_expiry_work.run = nfs4_expiry_run;
	nfs4_expiry_work.done = nfs4_expiry_done;
	nfs4_expiry_ev = loop_timer(loop, true, nfs4_expiry_cb, NULL);
	if (!nfs4_expiry_ev || loop_ev_add(nfs4_expiry_ev, &second) != 0) {
		log_err("nfs4: cannot create the lease expiry timer");
		nfs4_expiry_stop();
		return -1;
	}
	return 0;
}

/* Before workers_stop(): a queued expiry still runs and completes there. */
void nfs4_expiry_stop(void)
{
	if (nfs4_expiry_ev)
		loop_ev_free(nfs4_expiry_ev);
	nfs4_expiry_ev = NULL;
}

uint64_t nfs4_principal(const struct nfs4_ctx *x)
{
	if (!x->call)
		return 0;
	if (x->call->cred.flavor != RPC_AUTH_SYS)
		return UINT64_MAX;
	return (uint64_t)x->call->cred.uid << 32 | x->call->cred.gid;
}

uint32_t nfs4_exchange_id_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_exid_args *a = args;
	uint64_t now = nfs4_now();
	struct nfs4_who who;

	if (nfs4_not_only_op(x))
		return NFS4ERR_NOT_ONLY_OP;
	if (a->flags & ~EXCHGID4_FLAG_MASK_A)
		return NFS4ERR_INVAL;
	nfs4_ctab_expire(&nfs4_st, now);
	nfs4_who(x, &who);
	/* RFC 8881 §15.2: EXCHANGE_ID has no RESOURCE; a full table or a host's or principal's full share
	 * is DELAY (§15.1.1.3, "try the request again later"): room comes back when one of its records is
	 * destroyed or expires, and a client retries (SERVERFAULT would fail its mount for good). */
	return nfs4_exchange_id_who(&nfs4_st, a->verifier, a->owner, a->owner_len, a->flags, &who, now, res);
}

void nfs4_exchange_id_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	(void)x, (void)status;
	nfs4_enc_exchange_id(e, res, nfs4_server_name, nfs4_server_name);
}

uint32_t nfs4_create_session_exec(struct nfs4_ctx *x, void *args, void *res)
{
	struct nfs4_create_session_args *a = args;
	struct nfs4_create_session_res *r = res;
	uint32_t status;
	uint64_t now = nfs4_now();

	if (nfs4_not_only_op(x))
		return NFS4ERR_NOT_ONLY_OP;
	if (a->flags & ~CREATE_SESSION4_FLAG_MASK)
		return NFS4ERR_INVAL;
	/* The back channel's too (CB_COMPOUND with CB_SEQUENCE is no smaller; pynfs CSESS29). */
	if (a->fore.maxrequestsize < NFS4_MIN_REQUEST || a->fore.maxresponsesize < NFS4_MIN_RESPONSE ||
	    a->back.maxrequestsize < NFS4_MIN_REQUEST || a->back.maxresponsesize < NFS4_MIN_RESPONSE)
		return NFS4ERR_TOOSMALL;
	/* RFC 8881 §8.3: a client whose lease ran out before it confirmed is gone (STALE_CLIENTID). */
	nfs4_ctab_expire(&nfs4_st, now);
	r->fore = a->fore;
	r->back = a->back;
	r->sequence = a->sequence;
	/* RFC 8881 §8.4.3: a client is recorded (stable) before it is confirmed (the stable hook). */
	status = nfs4_create_session(&nfs4_st, a->clientid, a->sequence, &r->fore, &r->back, nfs4_principal(x), now,
				     r->sessionid);
	if (status == NFS4_OK)
		r->flags = nfs4_cb_create_session(x, a, r->sessionid);
	return status;
}

void nfs4_create_session_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_create_session_res *r = res;

	(void)x, (void)status;
	/* RFC 8881 §18.36.3: no persistence; CONN_BACK_CHAN if this connection is the back channel. */
	nfs4_enc_create_session(e, r->sessionid, r->sequence, r->flags, &r->fore, &r->back);
}

/* RFC 8881 §18.36.3 (ca_maxrequestsize): the XDR size of the request with its RPC header and
 * credential, without transport framing: the call message plus the data that came in Read chunks
 * (XDR-padded). 0 without an RPC call (unit tests): not checked. */
static size_t nfs4_request_len(const struct nfs4_ctx *x)
{
	size_t len;

	if (!x->call)
		return 0;
	len = x->call->msg_len;
	for (unsigned i = 0; i < x->call->n_ddp_in; i++)
		len += ((size_t)x->call->ddp_in[i].len + 3) & ~(size_t)3;
	return len;
}

uint32_t nfs4_sequence_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_sequence_args *a = args;
	struct nfs4_sequence_res *r = res;
	struct nfs4_svc *s = x->priv;
	struct nfs4_seq_res sr;

	r->args = *a;
	switch (nfs4_sequence(&nfs4_st, a->sessionid, a->sequenceid, a->slotid, x->numops, nfs4_request_len(x),
			      nfs4_now(), s->replay, sizeof(s->replay), &sr)) {
	case NFS4_SEQ_ERROR:
		return sr.status;
	case NFS4_SEQ_REPLAY:
		x->replay = s->replay;
		x->replay_len = sr.replay_len;
		return NFS4_OK;
	case NFS4_SEQ_NEW:
		break;
	}
	s->seq_new = true;
	memcpy(s->seq_sid, a->sessionid, NFS4_SESSIONID_SIZE);
	s->seq_slot = a->slotid;
	s->seq_cachethis = a->cachethis;
	s->clientid = sr.clientid;
	r->highest = sr.highest_slotid;
	r->target = sr.target_highest_slotid;
	/* RFC 8881 §18.46.3: CB_PATH_DOWN(_SESSION) while the client has no working back channel. */
	r->status_flags = nfs4_cb_seq_flags_for(sr.clientid) | nfs4_deleg_seq_flags(sr.clientid);
	/* RFC 8881 §2.10.6.4: the session's reply limits apply to this COMPOUND. */
	if (a->cachethis && sr.maxresponsesize_cached < sr.maxresponsesize)
		nfs4_compound_limit(x, sr.maxresponsesize_cached, NFS4ERR_REP_TOO_BIG_TO_CACHE);
	else
		nfs4_compound_limit(x, sr.maxresponsesize, NFS4ERR_REP_TOO_BIG);
	return NFS4_OK;
}

void nfs4_sequence_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_sequence_res *r = res;

	(void)x, (void)status;
	nfs4_enc_sequence(e, &r->args, r->highest, r->target, r->status_flags);
}

/*
 * A reply with data moved out of band (READ's, READLINK's in a Write chunk)
 * put together in buf (cap bytes) as it goes on the wire: its length, or 0
 * when it cannot be (data in the payload pipe, or too long: the engine's
 * session limit has already answered REP_TOO_BIG_TO_CACHE for those).
 */
static size_t reply_with_ddp(const struct nfs4_ctx *x, const struct xdr_enc *e, uint8_t *buf, size_t cap)
{
	const struct rpc_call *c = x->call;
	size_t pos = x->res_start, n = 0, end = xdr_enc_len(e);

	for (unsigned i = 0; i < c->n_ddp_out; i++) {
		const struct rpc_ddp_out *o = &c->ddp_out[i];
		size_t inl = o->offset - pos, pad = XDR_PAD(o->len);

		if (o->piped || o->offset < pos || o->offset > end || n + inl + o->len + pad > cap)
			return 0;
		memcpy(buf + n, e->base + pos, inl);
		memcpy(buf + n + inl, o->data, o->len);
		memset(buf + n + inl + o->len, 0, pad);
		n += inl + o->len + pad;
		pos = o->offset;
	}
	if (n + (end - pos) > cap)
		return 0;
	memcpy(buf + n, e->base + pos, end - pos);
	return n + (end - pos);
}

/* After the COMPOUND: the slot it took keeps its reply (RFC 8881 §2.10.6.1),
 * data sent out of band included (s->replay serves as the scratch: a replay
 * has already been answered by now). */
void nfs4_sequence_done(struct nfs4_ctx *x, const struct xdr_enc *e)
{
	struct nfs4_svc *s = x->priv;
	const uint8_t *reply = e->base + x->res_start;
	size_t len = xdr_enc_len(e) - x->res_start;
	bool keep;

	if (!s->seq_new)
		return;
	keep = s->seq_cachethis;
	if (keep && x->call && x->call->n_ddp_out) {
		len = reply_with_ddp(x, e, s->replay, sizeof(s->replay));
		reply = s->replay;
		keep = len != 0;
	}
	nfs4_slot_done(&nfs4_st, s->seq_sid, s->seq_slot, keep, reply, (uint32_t)len);
	s->seq_new = false;
}

uint32_t nfs4_destroy_session_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_sessionid_args *a = args;

	uint32_t status;

	(void)res;
	status = nfs4_destroy_session(&nfs4_st, a->sessionid, nfs4_principal(x));
	if (status == NFS4_OK)
		nfs4_cb_session_gone(a->sessionid); /* its back channel goes with it */
	return status;
}

uint32_t nfs4_destroy_clientid_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_clientid_args *a = args;

	(void)res;
	if (nfs4_not_only_op(x))
		return NFS4ERR_NOT_ONLY_OP;
	return nfs4_destroy_clientid(&nfs4_st, a->clientid, nfs4_principal(x));
}

/* RFC 8881 §18.51.3: for the client of the COMPOUND's session (SEQUENCE came first). */
uint32_t nfs4_reclaim_complete_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_reclaim_complete_args *a = args;
	struct nfs4_svc *s = x->priv;
	uint32_t status, owner_len;

	(void)res;
	if (!s->seq_new)
		return NFS4ERR_OP_NOT_IN_SESSION;
	/* rca_one_fs: per file system reclaim is over as soon as asked (no state to reclaim yet). */
	if (a->one_fs)
		return NFS4_OK;
	status = nfs4_reclaim_complete(&nfs4_st, s->clientid);
	/* RFC 8881 §8.4.2: the grace period ends early once every previous client is done. */
	if (status == NFS4_OK && nfs4_client_owner(&nfs4_st, s->clientid, s->owner, &owner_len))
		nfs4_client_reclaimed(s->owner, owner_len);
	return status;
}
