/*
 * nlm_svc.c - the execute steps of NLM v4 (RFC 1813 appendix II, X/Open
 * XNFS chapter 10): the backend's byte-range locks decide every conflict
 * (so NLM clients, NFSv4 clients and local processes see each other's
 * locks); the lock table (nlm_table.c) names the owners, remembers which
 * files each holds locks on, the blocked waiters and share reservations.
 *
 * The handle in an NLM call is the client's NFSv3 file handle: it is
 * unwrapped and checked (MAC, export still served, client admitted to it)
 * exactly as for NFSv3 (nfs/common/). Files are opened as the server
 * (knfsd's lockd does not check file permissions for locks either).
 *
 * Blocking locks (XNFS §10.4 NLM_LOCK with block=TRUE): a conflict answers
 * NLM4_BLOCKED and keeps a waiter; the retry thread tries the waiters when
 * an UNLOCK, CANCEL or FREE_ALL through rnfsd may have freed a range, and
 * every second otherwise (a local process or an NFSv4 client may release
 * without rnfsd knowing). A lock so taken is announced by a GRANTED call to
 * the client's lock manager (nlm_cb.c); if the client refuses it or cannot
 * be reached, the lock is given back (knfsd does the same).
 *
 * One mutex serialises the table and the lock calls made for it (they never
 * wait: the backend answers EAGAIN on a conflict).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/grace.h"
#include "nlm/nlm_internal.h"
#include "nlm/nlm_cb.h"
#include "nlm/nlm_nsm.h"
#include "rpc/rpcbind.h"
#include "nlm/nlm_table.h"
#include "nfs/common/nfs_common.h"
#include "core/log.h"

#define NLM_OWNERS 4096u
#define NLM_HELD 8192u
#define NLM_WAITERS 512u
#define NLM_SHARES 1024u
#define NLM_CB_SLOTS 256u
#define NLM_POLL_MS 1000

static pthread_mutex_t nlm_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nlm_cond = PTHREAD_COND_INITIALIZER;
static struct nlm_table nlm_tab;
static bool nlm_running, nlm_stopping, nlm_kicked;
static pthread_t nlm_thread;
static uint64_t nlm_seq;
static char nlm_hostname[256];
static uint32_t nlm_hostname_len;
static struct nlm_counters nlm_cnt;
static struct log_limit nlm_limit;
static unsigned nlm_per_host; /* [rnfsd] nlm-locks-per-host (derived) */

void nlm_configure(unsigned locks_per_host)
{
	nlm_per_host = locks_per_host;
}

/* An NLM call's file: the served table's reference, the export, the backend's open file. */
struct nlm_file {
	struct nfs_exports *tbl;
	const struct nfs_export *e;
	struct be_file *f;
	struct nlm_fh fh;
};

uint32_t nlm_errno_to_stat(int err)
{
	switch (err) {
	case 0:
		return NLM4_GRANTED_ST;
	case EAGAIN:
		return NLM4_DENIED;
	case ENOLCK:
	case ENOMEM:
	case ENAMETOOLONG:
		return NLM4_DENIED_NOLOCKS;
	case EDEADLK:
		return NLM4_DEADLCK;
	case EROFS:
		return NLM4_ROFS;
	case ESTALE:
	case BE_EBADHANDLE:
		return NLM4_STALE_FH;
	case EFBIG:
	case EOVERFLOW:
	case EINVAL:
		return NLM4_FBIG;
	default:
		return NLM4_FAILED;
	}
}

static void nlm_log_peer(const struct rpc_call *c, const struct nlm4_netobj *name, const char *what)
{
	char esc[LOG_ESCAPED_MAX];

	log_limited(&nlm_limit, LOG_NOTICE, "nlm: %s (%s): %s", c ? c->conn->peer_name : "retry",
		    name ? log_escape(esc, sizeof(esc), name->p, name->len) : "", what);
}

static uint32_t nlm_deleg_break(const struct nlm_fh *fh);

/* The file of fh, open for locking (read-write when it can be, so one owner's
 * description serves shared and exclusive locks). c NULL: no admission (retry
 * thread, host release: the lock was admitted when it was asked). recall: the
 * NFSv4 delegations of the file are recalled first (nlm_deleg_break), once the
 * caller is admitted and before rnfsd's own open, whose lease break would
 * recall them as if a local process opened the file (the stats' cause). nlm4_stats. */
static uint32_t nlm_file_open(struct rpc_call *c, const struct nlm_fh *fh, struct nlm_file *nf, bool recall)
{
	const struct export_opts *opts;
	struct be_handle bh;
	struct nfs_fh nfh;
	uint32_t id;
	int err;

	memset(nf, 0, sizeof(*nf));
	nf->fh = *fh;
	nfh.len = fh->len;
	memcpy(nfh.data, fh->data, fh->len);
	if (!nfs_fh_unwrap(&nfh, &id, &bh))
		return NLM4_STALE_FH; /* not one of ours: NLM4 has no BADHANDLE */
	nf->tbl = nfs_exports_get();
	nf->e = nfs_exports_by_id(nf->tbl, id);
	if (!nf->e)
		return NLM4_STALE_FH;
	if (c && nfs_export_admit(nf->e, c, &opts) != 0)
		return NLM4_FAILED; /* not a client of this export (knfsd: nlm_lck_denied_nolocks / failed) */
	if (c)
		rpc_call_acct(c, &nf->e->st->acct); /* the export's calls (nfs/common/export_stats.c) */
	if (recall && nlm_deleg_break(fh) != NLM4_GRANTED_ST)
		return NLM4_DENIED_GRACE_PERIOD;
	err = be_file_open_handle(nf->e->fs, &bh, BE_OPEN_READ | BE_OPEN_WRITE, &nf->f);
	if (err == EACCES || err == EROFS || err == EPERM || err == ETXTBSY)
		err = be_file_open_handle(nf->e->fs, &bh, BE_OPEN_READ, &nf->f);
	if (err == EISDIR || err == EINVAL)
		err = ENOLCK; /* XNFS: locks are on regular files */
	/* A lease in the way (an NFSv4 delegation's, its recall now started, or a
	 * local process's): NLM has no DELAY, the client asks again (as below). */
	if (err == EWOULDBLOCK)
		return NLM4_DENIED_GRACE_PERIOD;
	return nlm_errno_to_stat(err);
}

static void nlm_file_close(struct nlm_file *nf)
{
	if (nf->e) {
		be_file_put(nf->e->fs, nf->f);
		be_end_call(nf->e->fs);
	}
	nfs_exports_put(nf->tbl);
	memset(nf, 0, sizeof(*nf));
}

/* The server's one grace period (core/grace.h): NLM's own term ([rnfsd]
 * grace-period) or NFSv4's (clients of the previous boot reclaiming), so a
 * lock an NFSv4 client may reclaim is not granted to an NLM client first. */
static bool nlm_in_grace(void)
{
	return grace_clock_active(&grace_server, grace_now_ms());
}

static struct be_lock nlm_be_lock(bool exclusive, uint64_t offset, uint64_t length)
{
	return (struct be_lock){ .type = exclusive ? BE_LOCK_WRITE : BE_LOCK_READ, .offset = offset, .length = length };
}

/* After an unlock by owner slot on nf's file (nlm_mu held): once the backend
 * says the owner holds nothing there (the local backend has closed its
 * description), its record of the file goes, and the owner with its last
 * record, so UNLOCK gives back what LOCK took (issue 23: Linux's lockd
 * names a new owner after each last unlock of a process). */
static void nlm_unset_done(const struct nlm_file *nf, unsigned slot)
{
	if (!be_lock_owner_holds(nf->e->fs, nf->f, nlm_owner_id(&nlm_tab, slot)))
		nlm_held_del(&nlm_tab, slot, &nf->fh);
}

/* The owner of alock (nlm_mu held). errno. */
static int nlm_owner(const struct nlm4_lock *l, bool create, unsigned *slot)
{
	return nlm_owner_get(&nlm_tab, (const char *)l->caller_name.p, l->caller_name.len, l->svid, l->oh.p,
			     l->oh.len, create, slot);
}

/*
 * The backend's lock release listener (be_lock_listen): called from any
 * thread, NLM's own under nlm_mu included, so it takes no lock; the retry
 * thread reads the flag before it sleeps. A signal that falls between that
 * read and the sleep is lost, and the waiters are tried at the next poll.
 */
static atomic_bool nlm_release_seen;

static void nlm_locks_released(void)
{
	atomic_store(&nlm_release_seen, true);
	pthread_cond_signal(&nlm_cond);
}

void nlm_kick(void)
{
	pthread_mutex_lock(&nlm_mu);
	nlm_kicked = true;
	pthread_cond_signal(&nlm_cond);
	pthread_mutex_unlock(&nlm_mu);
}

enum rpc_proc_status nlm_null_exec(struct rpc_call *c, void *args, void *res)
{
	(void)c;
	(void)args;
	(void)res;
	return RPC_PROC_OK;
}

static void nlm_res_init(struct nlm4_res *r, const struct nlm4_args *a, uint32_t stat)
{
	r->cookie = a->cookie; /* XNFS §10.2: the cookie is echoed */
	r->stat = stat;
}

/*
 * The start of TEST, LOCK, UNLOCK and CANCEL: the cookie echoed, the grace
 * period (may_reclaim: a LOCK with reclaim set passes it), the handle, the
 * file (recall: TEST's and LOCK's, its delegations recalled first,
 * nlm_file_open). Returns nlm4_stats; *nf is to be closed whatever it says.
 */
static uint32_t nlm_begin(struct rpc_call *c, const struct nlm4_args *a, bool may_reclaim, bool recall,
			  struct nlm4_res *r, struct nlm_fh *fh, struct nlm_file *nf)
{
	memset(nf, 0, sizeof(*nf));
	nlm_res_init(r, a, NLM4_STALE_FH);
	/* XNFS §10.4: during the grace period only reclaims; knfsd also refuses
	 * TEST, UNLOCK and CANCEL then (NLM4_DENIED_GRACE_PERIOD, the client retries) */
	if (nlm_in_grace() && !may_reclaim)
		return NLM4_DENIED_GRACE_PERIOD;
	if (!nlm_fh_set(fh, a->alock.fh.p, a->alock.fh.len))
		return NLM4_STALE_FH; /* longer than an NFSv3 handle: not one of ours */
	return nlm_file_open(c, fh, nf, recall);
}

/*
 * An NFSv4 client holding a delegation of the file keeps its byte-range
 * locks to itself (RFC 8881 §10.4): the delegation is recalled first
 * (through the hook NFSv4 sets in nfs/common: nfs_deleg_recall()). NLM
 * has no DELAY: NLM4_DENIED_GRACE_PERIOD makes the client ask again (Linux's
 * lockd in 5 s), where knfsd's lockd drops the call for the client to resend.
 */
static uint32_t nlm_deleg_break(const struct nlm_fh *fh)
{
	return nfs_deleg_recall(fh->data, fh->len, NFS_DELEG_LOCK) == NFS_DELEG_CLEAR ? NLM4_GRANTED_ST
										       : NLM4_DENIED_GRACE_PERIOD;
}

/* XNFS §10.5 NLM_TEST: the holder of a conflicting lock, if any. */
static void nlm_do_test(struct rpc_call *c, const struct nlm4_args *a, struct nlm4_res *r)
{
	struct be_lock lk = nlm_be_lock(a->exclusive, a->alock.l_offset, a->alock.l_len);
	struct be_lock_conflict h = { 0 };
	struct nlm_file nf;
	struct nlm_fh fh;
	bool conflict = false;
	unsigned slot;
	uint32_t st;
	int err;

	st = nlm_begin(c, a, false, true, r, &fh, &nf);
	if (st == NLM4_GRANTED_ST) {
		pthread_mutex_lock(&nlm_mu);
		err = nlm_owner(&a->alock, true, &slot);
		if (!err) {
			err = be_lock_test(nf.e->fs, nf.f, nlm_owner_id(&nlm_tab, slot), &lk, &conflict, &h);
			nlm_owner_put(&nlm_tab, slot);
		}
		pthread_mutex_unlock(&nlm_mu);
		st = nlm_errno_to_stat(err);
	}
	nlm_file_close(&nf);
	r->stat = st == NLM4_GRANTED_ST && conflict ? NLM4_DENIED : st;
	if (r->stat == NLM4_DENIED) {
		/* RFC 1813 appendix II nlm4_holder: the kernel does not say which
		 * owner holds it, so svid 0 and an empty oh (knfsd: the same for non-NLM holders) */
		r->holder = (struct nlm4_holder){ .exclusive = h.lock.type == BE_LOCK_WRITE,
						  .l_offset = h.lock.offset, .l_len = h.lock.length };
	}
}

enum rpc_proc_status nlm_test_exec(struct rpc_call *c, void *args, void *res)
{
	nlm_do_test(c, args, res);
	if (((struct nlm4_res *)res)->stat != NLM4_GRANTED_ST)
		c->proc_failed = ((struct nlm4_res *)res)->stat != NLM4_DENIED;
	return RPC_PROC_OK;
}

/* A client reclaimed a lock it held before rnfsd restarted (XNFS §10.4: reclaim). */
static void nlm_reclaimed(const struct rpc_call *c, const struct nlm4_lock *l)
{
	char esc[LOG_ESCAPED_MAX];

	pthread_mutex_lock(&nlm_mu);
	nlm_cnt.reclaims++;
	pthread_mutex_unlock(&nlm_mu);
	log_debug("nlm: %s (%s) reclaimed [%llu, +%llu)", c->conn->peer_name,
		  log_escape(esc, sizeof(esc), l->caller_name.p, l->caller_name.len),
		  (unsigned long long)l->l_offset, (unsigned long long)l->l_len);
}

/* XNFS §10.4 NLM_LOCK (and NM_LOCK, LOCK_MSG): take the lock, or keep a waiter (block). */
static void nlm_do_lock(struct rpc_call *c, const struct nlm4_args *a, bool may_block, struct nlm4_res *r)
{
	struct be_lock lk = nlm_be_lock(a->exclusive, a->alock.l_offset, a->alock.l_len);
	struct nlm_file nf;
	struct nlm_fh fh;
	unsigned slot;
	uint32_t st;
	int err;

	st = nlm_begin(c, a, a->reclaim, !a->reclaim, r, &fh, &nf);
	if (st == NLM4_GRANTED_ST) {
		pthread_mutex_lock(&nlm_mu);
		err = nlm_owner(&a->alock, true, &slot);
		if (!err) {
			uint64_t id = nlm_owner_id(&nlm_tab, slot);
			int w = nlm_waiter_find(&nlm_tab, slot, &fh, a->alock.l_offset, a->alock.l_len);

			err = be_lock_set(nf.e->fs, nf.f, id, &lk);
			if (!err && w >= 0)
				nlm_waiter_del(&nlm_tab, (unsigned)w); /* a repeated blocked LOCK found it free */
			if (!err && nlm_held_add(&nlm_tab, slot, &fh) != 0) {
				(void)be_lock_unset(nf.e->fs, nf.f, id, &lk);
				err = ENOLCK;
			}
			if (err == EAGAIN && a->block && may_block) {
				struct nlm_waiter wt = { .owner = slot, .fh = fh, .exclusive = a->exclusive,
							 .offset = a->alock.l_offset, .length = a->alock.l_len,
							 .seq = ++nlm_seq };
				unsigned idx;
				bool is_new;

				wt.cookie_len = a->cookie.len <= NLM_COOKIE_MAX ? a->cookie.len : 0;
				if (wt.cookie_len)
					memcpy(wt.cookie, a->cookie.p, wt.cookie_len);
				memcpy(&wt.peer, &c->conn->peer, c->conn->peer_len);
				wt.peer_len = c->conn->peer_len;
				err = nlm_waiter_add(&nlm_tab, &wt, &idx, &is_new);
				/* XNFS §10.4: "the server will call back with NLM_GRANTED" */
				st = err ? nlm_errno_to_stat(err) : NLM4_BLOCKED;
			} else {
				st = nlm_errno_to_stat(err);
			}
			nlm_owner_put(&nlm_tab, slot);
		} else {
			st = nlm_errno_to_stat(err);
		}
		pthread_mutex_unlock(&nlm_mu);
	}
	nlm_file_close(&nf);
	r->stat = st;
	if (a->reclaim && st == NLM4_GRANTED_ST)
		nlm_reclaimed(c, &a->alock);
	/* XNFS §10.4: a host holding (or waiting for) locks is monitored; NM_LOCK's are not (§10.9) */
	if (may_block && (st == NLM4_GRANTED_ST || st == NLM4_BLOCKED))
		nlm_nsm_monitor((const char *)a->alock.caller_name.p, a->alock.caller_name.len,
				(const struct sockaddr *)&c->conn->peer, c->conn->peer_len);
	if (st != NLM4_GRANTED_ST && st != NLM4_DENIED && st != NLM4_BLOCKED)
		nlm_log_peer(c, &a->alock.caller_name, "lock refused");
}

enum rpc_proc_status nlm_lock_exec(struct rpc_call *c, void *args, void *res)
{
	nlm_do_lock(c, args, true, res);
	return RPC_PROC_OK;
}

/* NM_LOCK: the same, for a client that runs no status monitor: never blocks (XNFS §10.9). */
enum rpc_proc_status nlm_nm_lock_exec(struct rpc_call *c, void *args, void *res)
{
	nlm_do_lock(c, args, false, res);
	return RPC_PROC_OK;
}

/* XNFS §10.7 NLM_UNLOCK: always granted, held or not. */
static void nlm_do_unlock(struct rpc_call *c, const struct nlm4_args *a, struct nlm4_res *r)
{
	struct be_lock lk = nlm_be_lock(false, a->alock.l_offset, a->alock.l_len);
	struct nlm_file nf;
	struct nlm_fh fh;
	unsigned slot;
	uint32_t st;

	st = nlm_begin(c, a, false, false, r, &fh, &nf);
	if (st == NLM4_GRANTED_ST) {
		pthread_mutex_lock(&nlm_mu);
		if (nlm_owner(&a->alock, false, &slot) == 0) {
			uint64_t id = nlm_owner_id(&nlm_tab, slot);
			int err = be_lock_unset(nf.e->fs, nf.f, id, &lk);

			if (err)
				st = nlm_errno_to_stat(err);
			/* The whole file (Linux: at close): the owner's description can go. */
			if (!err && a->alock.l_offset == 0 && a->alock.l_len == 0) {
				be_lock_owner_release(nf.e->fs, nf.f, id);
				nlm_held_del(&nlm_tab, slot, &fh);
			} else if (!err) {
				nlm_unset_done(&nf, slot);
			}
			nlm_owner_put(&nlm_tab, slot);
		}
		pthread_mutex_unlock(&nlm_mu);
	}
	nlm_file_close(&nf);
	r->stat = st;
	nlm_kick(); /* the range may be free for a waiter */
}

enum rpc_proc_status nlm_unlock_exec(struct rpc_call *c, void *args, void *res)
{
	nlm_do_unlock(c, args, res);
	return RPC_PROC_OK;
}

/* XNFS §10.6 NLM_CANCEL: forget a blocked LOCK; one already taken for it is given back. */
static void nlm_do_cancel(struct rpc_call *c, const struct nlm4_args *a, struct nlm4_res *r)
{
	struct be_lock lk = nlm_be_lock(a->exclusive, a->alock.l_offset, a->alock.l_len);
	struct nlm_file nf;
	struct nlm_fh fh;
	unsigned slot;
	uint32_t st;

	st = nlm_begin(c, a, false, false, r, &fh, &nf);
	if (st == NLM4_GRANTED_ST) {
		int w = -1;

		pthread_mutex_lock(&nlm_mu);
		if (nlm_owner(&a->alock, false, &slot) == 0) {
			w = nlm_waiter_find(&nlm_tab, slot, &fh, a->alock.l_offset, a->alock.l_len);
			if (w >= 0 && nlm_tab.waiters[w].state != NLM_W_WAITING &&
			    be_lock_unset(nf.e->fs, nf.f, nlm_owner_id(&nlm_tab, slot), &lk) == 0)
				nlm_unset_done(&nf, slot);
			if (w >= 0)
				nlm_waiter_del(&nlm_tab, (unsigned)w);
			nlm_owner_put(&nlm_tab, slot);
		}
		pthread_mutex_unlock(&nlm_mu);
		st = w >= 0 ? NLM4_GRANTED_ST : NLM4_DENIED;
	}
	nlm_file_close(&nf);
	r->stat = st;
	nlm_kick();
}

enum rpc_proc_status nlm_cancel_exec(struct rpc_call *c, void *args, void *res)
{
	nlm_do_cancel(c, args, res);
	return RPC_PROC_OK;
}

/* GRANTED is the client lock manager's procedure: rnfsd holds no client locks (XNFS §10.8). */
enum rpc_proc_status nlm_granted_exec(struct rpc_call *c, void *args, void *res)
{
	(void)c;
	nlm_res_init(res, args, NLM4_DENIED);
	return RPC_PROC_OK;
}

/* XNFS §10.1: TEST_MSG .. GRANTED_MSG do what their synchronous procedure
 * does, and the result goes back as a call of the matching _RES procedure
 * (proc + 5) to the caller's lock manager; the RPC reply itself is void. */
enum rpc_proc_status nlm_msg_exec(struct rpc_call *c, void *args, void *res)
{
	struct nlm4_res *r = res;
	uint8_t body[NLM_CB_BODY_MAX];
	struct xdr_enc e;

	switch (c->proc) {
	case NLM4_TEST_MSG:
		nlm_do_test(c, args, r);
		break;
	case NLM4_LOCK_MSG:
		nlm_do_lock(c, args, true, r);
		break;
	case NLM4_CANCEL_MSG:
		nlm_do_cancel(c, args, r);
		break;
	case NLM4_UNLOCK_MSG:
		nlm_do_unlock(c, args, r);
		break;
	default:
		nlm_res_init(r, args, NLM4_DENIED);
		break;
	}
	xdr_enc_init(&e, body, sizeof(body));
	if (c->proc == NLM4_TEST_MSG)
		nlm4_enc_testres(&e, r);
	else
		nlm4_enc_res(&e, r);
	if (e.overflow ||
	    nlm_cb_send((const struct sockaddr *)&c->conn->peer, c->conn->peer_len, NLM_PROGRAM, NLM4_VERSION,
			c->proc + 5, body, xdr_enc_len(&e), NULL, 0) != 0)
		nlm_log_peer(c, &((const struct nlm4_args *)args)->alock.caller_name, "cannot send the _RES message");
	return RPC_PROC_OK;
}

enum rpc_proc_status nlm_void_exec(struct rpc_call *c, void *args, void *res)
{
	(void)c;
	(void)args;
	(void)res;
	return RPC_PROC_OK;
}

/* XNFS §10.3 NLM_SHARE / NLM_UNSHARE: DOS share reservations, among NLM clients only. */
static uint32_t nlm_share_check(struct rpc_call *c, const struct nlm4_share_args *a, struct nlm_fh *fh)
{
	struct nlm_file nf;
	uint32_t st;

	if (!nlm_fh_set(fh, a->fh.p, a->fh.len))
		return NLM4_STALE_FH;
	st = nlm_file_open(c, fh, &nf, false);
	nlm_file_close(&nf);
	return st;
}

static enum rpc_proc_status nlm_share_common(struct rpc_call *c, void *args, void *res, bool share)
{
	const struct nlm4_share_args *a = args;
	struct nlm4_res *r = res;
	struct nlm_fh fh;
	unsigned slot;
	int err;

	r->cookie = a->cookie;
	r->sequence = 0;
	if (nlm_in_grace() && !(share && a->reclaim)) {
		r->stat = NLM4_DENIED_GRACE_PERIOD;
		return RPC_PROC_OK;
	}
	r->stat = nlm_share_check(c, a, &fh);
	if (r->stat != NLM4_GRANTED_ST)
		return RPC_PROC_OK;
	pthread_mutex_lock(&nlm_mu);
	/* XNFS §10.3: a share's owner is caller_name and oh (no svid) */
	err = nlm_owner_get(&nlm_tab, (const char *)a->caller_name.p, a->caller_name.len, 0, a->oh.p, a->oh.len,
			    share, &slot);
	if (!err) {
		if (share)
			err = nlm_share_add(&nlm_tab, slot, &fh, a->mode, a->access);
		else
			nlm_share_del(&nlm_tab, slot, &fh);
		nlm_owner_put(&nlm_tab, slot);
	}
	pthread_mutex_unlock(&nlm_mu);
	r->stat = share ? nlm_errno_to_stat(err) : NLM4_GRANTED_ST;
	return RPC_PROC_OK;
}

enum rpc_proc_status nlm_share_exec(struct rpc_call *c, void *args, void *res)
{
	return nlm_share_common(c, args, res, true);
}

enum rpc_proc_status nlm_unshare_exec(struct rpc_call *c, void *args, void *res)
{
	return nlm_share_common(c, args, res, false);
}

/* Host release: give back the backend's locks of one owner on one file (nlm_mu held). */
static void nlm_release_held(const struct nlm_fh *fh, uint64_t owner_id, void *arg)
{
	struct nlm_file nf;

	(void)arg;
	if (nlm_file_open(NULL, fh, &nf, false) == NLM4_GRANTED_ST)
		be_lock_owner_release(nf.e->fs, nf.f, owner_id);
	nlm_file_close(&nf);
}

/* ---- an export no longer served (nfs_export_gone_hook) ---- */

static bool nlm_fh_on(const struct nlm_fh *fh, void *arg)
{
	const struct nfs_export *e = arg;
	struct be_handle bh;
	struct nfs_fh nfh;
	uint32_t id;

	nfh.len = fh->len;
	memcpy(nfh.data, fh->data, fh->len);
	return nfs_fh_unwrap(&nfh, &id, &bh) && id == e->id;
}

/* Give back the backend's locks of one owner on one file of the export that went (nlm_mu held):
 * opened in the old table's instance, which the hook's caller keeps referenced. */
static void nlm_release_gone(const struct nlm_fh *fh, uint64_t owner_id, void *arg)
{
	const struct nfs_export *e = arg;
	struct be_file *f = NULL;
	struct be_handle bh;
	struct nfs_fh nfh;
	uint32_t id;

	nfh.len = fh->len;
	memcpy(nfh.data, fh->data, fh->len);
	if (nfs_fh_unwrap(&nfh, &id, &bh) && be_file_open_handle(e->fs, &bh, BE_OPEN_READ, &f) == 0) {
		be_lock_owner_release(e->fs, f, owner_id);
		be_file_put(e->fs, f);
	}
	be_end_call(e->fs);
}

/* Worker: e left the served exports (the clients' handles are STALE from now on, so they could
 * never unlock), or rnfsctl unlock --export: its locks, blocked waiters and shares go. */
static void nlm_export_gone(const struct nfs_export *e)
{
	unsigned n = 0;

	pthread_mutex_lock(&nlm_mu);
	if (nlm_running)
		n = nlm_fh_release(&nlm_tab, nlm_fh_on, (void *)e, nlm_release_gone, (void *)e);
	pthread_mutex_unlock(&nlm_mu);
	if (n)
		log_info("nlm: export %s: %u locked files released", e->cfg->path, n);
	nlm_kick();
}

static unsigned nlm_host_gone(const char *name, uint32_t len)
{
	unsigned n;

	pthread_mutex_lock(&nlm_mu);
	n = nlm_host_release(&nlm_tab, name, len, nlm_release_held, NULL);
	pthread_mutex_unlock(&nlm_mu);
	nlm_nsm_unmonitor(name, len);
	nlm_kick();
	return n;
}

unsigned nlm_host_revoke(const char *caller_name)
{
	return nlm_running ? nlm_host_gone(caller_name, (uint32_t)strlen(caller_name)) : 0;
}

/* XNFS §10.10 NLM_FREE_ALL: the host rebooted, drop everything it held. Only
 * from a privileged port: anyone could otherwise free another host's locks. */
enum rpc_proc_status nlm_free_all_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nlm4_notify_args *a = args;
	char esc[LOG_ESCAPED_MAX];

	(void)res;
	if (!nfs_conn_secure(c->conn)) {
		nlm_log_peer(c, &a->name, "FREE_ALL from an unprivileged port ignored");
		return RPC_PROC_OK;
	}
	log_info("nlm: FREE_ALL for %s: %u files released", log_escape(esc, sizeof(esc), a->name.p, a->name.len),
		 nlm_host_gone((const char *)a->name.p, a->name.len));
	return RPC_PROC_OK;
}

/* A reboot notification from the local statd: priv names the host we
 * monitored (nlm_nsm.c); mon_name is only its address. Not with nlm_mu. */
static void nlm_notified(const struct nsm_status_args *a)
{
	char esc[LOG_ESCAPED_MAX], name[NLM_HOST_MAX + 1];
	uint32_t len;

	if (!nlm_nsm_host_of(a->priv, name, &len)) {
		log_limited(&nlm_limit, LOG_NOTICE, "nlm: reboot notification for %s, not monitored: ignored",
			    log_escape(esc, sizeof(esc), a->mon_name.p, a->mon_name.len));
		return;
	}
	log_info("nlm: %s rebooted (statd state %d): %u files released", log_escape(esc, sizeof(esc), name, len),
		 a->state, nlm_host_gone(name, len));
}

/* XNFS §11 (the my_id procedure statd calls back, over UDP or TCP): only from this host, on a privileged port. */
enum rpc_proc_status nlm_nsm_notify_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nsm_status_args *a = args;
	const struct sockaddr_storage *p = &c->conn->peer;
	bool local = p->ss_family == AF_UNIX ||
		     (p->ss_family == AF_INET &&
		      (ntohl(((const struct sockaddr_in *)p)->sin_addr.s_addr) >> 24) == 127) ||
		     (p->ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)p)->sin6_addr));

	(void)res;
	if (!local || !nfs_conn_secure(c->conn)) {
		nlm_log_peer(c, &a->mon_name, "reboot notification not from the local statd: ignored");
		return RPC_PROC_OK;
	}
	nlm_notified(a);
	return RPC_PROC_OK;
}

/* Loop thread: the client answered (or not) the GRANTED call for waiter seq. */
static void nlm_granted_done(uint64_t seq, bool ok, struct xdr_dec *res)
{
	struct nlm4_res r = { 0 };
	/* RFC 1813 appendix II: GRANTED answers nlm4_res */
	int stat = ok && nlm4_dec_res(res, &r) ? (int)r.stat : -1;

	pthread_mutex_lock(&nlm_mu);
	for (unsigned i = 0; i < nlm_tab.n_waiters; i++) {
		struct nlm_waiter *w = &nlm_tab.waiters[i];

		if (w->state != NLM_W_GRANTING || w->seq != seq)
			continue;
		if (stat == NLM4_GRANTED_ST) {
			nlm_cnt.granted_callbacks++;
			nlm_waiter_del(&nlm_tab, i);
		} else {
			/* Refused (the process is gone) or unreachable: give the lock back; a
			 * client still waiting asks again (Linux: every 30 s) */
			nlm_cnt.failed_callbacks++;
			w->state = NLM_W_REVOKE;
			nlm_kicked = true;
			pthread_cond_signal(&nlm_cond);
		}
		break;
	}
	pthread_mutex_unlock(&nlm_mu);
	log_limited(&nlm_limit, LOG_INFO, "nlm: GRANTED callback %s (%d)",
		    stat == NLM4_GRANTED_ST ? "accepted" : "failed", stat);
}

/* nlm_mu held: the lock of waiter w was taken; tell the client (XNFS §10.8 NLM_GRANTED). */
static void nlm_send_granted(struct nlm_waiter *w)
{
	const struct nlm_owner *o = &nlm_tab.owners[w->owner];
	struct nlm4_args a = {
		.cookie = { w->cookie, w->cookie_len },
		.exclusive = w->exclusive,
		.alock = { .caller_name = { (const uint8_t *)nlm_hostname, nlm_hostname_len },
			   .fh = { w->fh.data, w->fh.len }, .oh = { o->oh, o->oh_len }, .svid = o->svid,
			   .l_offset = w->offset, .l_len = w->length },
	};
	uint8_t body[NLM_CB_BODY_MAX];
	struct xdr_enc e;

	xdr_enc_init(&e, body, sizeof(body));
	nlm4_enc_testargs(&e, &a);
	w->state = NLM_W_GRANTING;
	if (e.overflow || nlm_cb_send((const struct sockaddr *)&w->peer, w->peer_len, NLM_PROGRAM, NLM4_VERSION,
				      NLM4_GRANTED, body, xdr_enc_len(&e), nlm_granted_done, w->seq) != 0) {
		nlm_cnt.failed_callbacks++;
		w->state = NLM_W_REVOKE;
		nlm_kicked = true;
	}
}

/* nlm_mu held (dropped while the file opens): try waiter i again, or give its lock back. */
static void nlm_retry_one(unsigned i)
{
	struct nlm_waiter *w = &nlm_tab.waiters[i];
	enum nlm_waiter_state st = w->state;
	uint64_t seq = w->seq;
	struct nlm_fh fh = w->fh;
	struct nlm_file nf;
	uint32_t ost;

	pthread_mutex_unlock(&nlm_mu);
	ost = nlm_file_open(NULL, &fh, &nf, false);
	pthread_mutex_lock(&nlm_mu);
	if (w->state != st || w->seq != seq) {
		/* cancelled, or granted by a repeated LOCK, meanwhile */
	} else if (ost != NLM4_GRANTED_ST) {
		nlm_waiter_del(&nlm_tab, i); /* the file is gone: the client's next LOCK says so */
	} else {
		uint64_t id = nlm_owner_id(&nlm_tab, w->owner);
		struct be_lock lk = nlm_be_lock(w->exclusive, w->offset, w->length);

		if (st == NLM_W_REVOKE) {
			unsigned owner = w->owner;

			if (be_lock_unset(nf.e->fs, nf.f, id, &lk) == 0)
				nlm_unset_done(&nf, owner);
			nlm_waiter_del(&nlm_tab, i);
		} else if (nlm_deleg_break(&fh) != NLM4_GRANTED_ST) {
			/* a delegation in the way: recalled; tried again at the next poll */
		} else if (be_lock_set(nf.e->fs, nf.f, id, &lk) == 0) {
			if (nlm_held_add(&nlm_tab, w->owner, &fh) == 0) {
				nlm_send_granted(w);
			} else {
				(void)be_lock_unset(nf.e->fs, nf.f, id, &lk);
			}
		}
	}
	pthread_mutex_unlock(&nlm_mu);
	nlm_file_close(&nf);
	pthread_mutex_lock(&nlm_mu);
}

static void *nlm_retry_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&nlm_mu);
	while (!nlm_stopping) {
		if (atomic_exchange(&nlm_release_seen, false))
			nlm_kicked = true;
		if (!nlm_kicked) {
			struct timespec until;

			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += NLM_POLL_MS / 1000;
			pthread_cond_timedwait(&nlm_cond, &nlm_mu, &until);
		}
		nlm_kicked = false;
		for (unsigned i = 0; !nlm_stopping && i < nlm_tab.n_waiters; i++) {
			enum nlm_waiter_state st = nlm_tab.waiters[i].state;

			if (st == NLM_W_WAITING || st == NLM_W_REVOKE)
				nlm_retry_one(i);
		}
	}
	pthread_mutex_unlock(&nlm_mu);
	return NULL;
}

void nlm_rpcbind_register_udp(uint16_t port, unsigned netids)
{
	if (nlm_running)
		(void)rpc_rpcbind_register_udp(NLM_PROGRAM, NLM4_VERSION, "nlockmgr", port, netids); /* logged */
}

/* The host entry of owner slot o in out[0..*n), added if room. NULL: no room. */
static struct nlm_host_info *nlm_host_of(struct nlm_host_info *out, unsigned *n, unsigned max, unsigned o)
{
	const struct nlm_owner *ow = &nlm_tab.owners[o];

	for (unsigned i = 0; i < *n; i++)
		if (strlen(out[i].host) == ow->host_len && !memcmp(out[i].host, ow->host, ow->host_len))
			return &out[i];
	if (*n == max)
		return NULL;
	out[*n] = (struct nlm_host_info){ 0 };
	snprintf(out[*n].host, sizeof(out[*n].host), "%.*s", (int)ow->host_len, ow->host);
	return &out[(*n)++];
}

unsigned nlm_hosts(struct nlm_host_info *out, unsigned max)
{
	struct nlm_host_info *h;
	unsigned n = 0;

	pthread_mutex_lock(&nlm_mu);
	for (unsigned i = 0; nlm_running && i < nlm_tab.n_owners; i++)
		if (nlm_tab.owners[i].used && (h = nlm_host_of(out, &n, max, i)) != NULL)
			h->owners++;
	for (unsigned i = 0; nlm_running && i < nlm_tab.n_held; i++)
		if (nlm_tab.held[i].used && (h = nlm_host_of(out, &n, max, nlm_tab.held[i].owner)) != NULL)
			h->held++;
	pthread_mutex_unlock(&nlm_mu);
	return n;
}

void nlm_counters(struct nlm_counters *out)
{
	pthread_mutex_lock(&nlm_mu);
	*out = nlm_cnt;
	out->waiters = 0;
	for (unsigned i = 0; i < nlm_tab.n_waiters; i++)
		out->waiters += nlm_tab.waiters[i].state != NLM_W_FREE;
	if (nlm_running)
		nlm_table_counts(&nlm_tab, &out->owners, &out->held);
	out->per_host = nlm_tab.max_per_host;
	pthread_mutex_unlock(&nlm_mu);
}

int nlm_start(struct loop *loop, unsigned grace_s)
{
	if (nlm_table_init(&nlm_tab, NLM_OWNERS, NLM_HELD, NLM_WAITERS, NLM_SHARES) != 0) {
		log_err("nlm: no memory for the lock table");
		return -1;
	}
	nlm_tab.max_per_host = nlm_per_host;
	static bool gone_hooked;
	if (!gone_hooked && nfs_export_gone_hook(nlm_export_gone) == 0)
		gone_hooked = true;
	if (gethostname(nlm_hostname, sizeof(nlm_hostname) - 1) != 0)
		snprintf(nlm_hostname, sizeof(nlm_hostname), "rnfsd");
	nlm_hostname_len = (uint32_t)strlen(nlm_hostname);
	{
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		nlm_nsm_init((uint32_t)now.tv_sec ^ (uint32_t)now.tv_nsec ^ (uint32_t)getpid());
	}
	grace_clock_hold(&grace_server, GRACE_NLM, grace_now_ms(), grace_s);
	if (nlm_cb_init(loop, NLM_CB_SLOTS) != 0) {
		nlm_table_free(&nlm_tab);
		return -1;
	}
	nlm_stopping = false;
	if (pthread_create(&nlm_thread, NULL, nlm_retry_main, NULL) != 0) {
		log_err("nlm: cannot start the retry thread");
		nlm_cb_shutdown();
		nlm_table_free(&nlm_tab);
		return -1;
	}
	nlm_running = true;
	be_lock_listen(nlm_locks_released); /* NFSv4 unlocks free ranges NLM waiters may want */
	if (grace_s)
		log_info("nlm: grace period of %u s: only reclaims until it ends", grace_s);
	return 0;
}

void nlm_stop(void)
{
	if (!nlm_running)
		return;
	be_lock_unlisten(nlm_locks_released);
	pthread_mutex_lock(&nlm_mu);
	nlm_stopping = true;
	pthread_cond_signal(&nlm_cond);
	pthread_mutex_unlock(&nlm_mu);
	pthread_join(nlm_thread, NULL);
	nlm_cb_shutdown();
	pthread_mutex_lock(&nlm_mu);
	for (unsigned i = 0; i < nlm_tab.n_held; i++)
		if (nlm_tab.held[i].used)
			nlm_release_held(&nlm_tab.held[i].fh, nlm_owner_id(&nlm_tab, nlm_tab.held[i].owner), NULL);
	nlm_table_free(&nlm_tab);
	pthread_mutex_unlock(&nlm_mu);
	nlm_nsm_reset(); /* statd keeps monitoring them: sm-notify tells them to reclaim after a reboot */
	nlm_running = false;
}
