/*
 * nfs4_deleg_getattr.c - GETATTR of a file another client holds a write
 * delegation of (RFC 8881 §10.4.3, RFC 7530 §10.4.3): the server's size and
 * change may be stale, the holder's cache having modified the file, so the
 * holder is asked with CB_GETATTR (RFC 8881 §20.1, RFC 7530 §16.1) and the
 * GETATTR (NFSv4, or NFSv3 through nfs/common's hook) answers with what its
 * reply means (nfs4_dtab_cb_merge()).
 *
 * The worker that serves the GETATTR waits for the answer, at most
 * GA_WAIT_MS; the call itself is made by the loop thread (nfs4_cb_send()),
 * which never waits. A holder that does not answer in time (or has no
 * callback path) has its delegation recalled and the GETATTR answers
 * NFS4ERR_DELAY, as knfsd's nfsd4_deleg_getattr_conflict() does.
 *
 * Waiters: the pure table nfs/v4/state/nfs4_ga_wait.c (NFS4_GA_WAITERS slots,
 * their states) under ga_mu. A slot stays taken until the callback's done()
 * has run, even when its worker stopped waiting. No slot free: DELAY, as an
 * unanswered call.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "core/loop.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/cb/nfs4_cb.h"
#include "nfs/v4/state/nfs4_deleg.h"
#include "nfs/v4/state/nfs4_ga_wait.h"

#define GA_WAIT_MS 500 /* a worker's longest wait for a holder's answer */
#define GA_MASK0 (1u << FATTR4_CHANGE | 1u << FATTR4_SIZE) /* RFC 8881 §10.4.3: change and size */
/* RFC 9754 §5: an *_ATTRS_DELEG holder is asked its delegated times too. */
#define GA_MASK2 (1u << (FATTR4_TIME_DELEG_ACCESS - 64) | 1u << (FATTR4_TIME_DELEG_MODIFY - 64))

static pthread_once_t ga_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t ga_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ga_cv;
static struct nfs4_ga_tab ga_tab;
static atomic_ullong ga_sent, ga_unanswered;
static long ga_wait_ms = GA_WAIT_MS;

static void ga_init(void)
{
	const char *hook = getenv("RNFSD_TEST_CB_GETATTR_WAIT_MS");
	pthread_condattr_t ca;

	/* Tests only: a soak on a loaded sanitizer build must not read a late answer as a lost one. */
	if (hook && (ga_wait_ms = strtol(hook, NULL, 10)) > 0)
		log_msg(LOG_WARNING, "nfs4: test hook: a CB_GETATTR answer is waited for %ld ms", ga_wait_ms);
	else
		ga_wait_ms = GA_WAIT_MS;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ga_cv, &ca);
	pthread_condattr_destroy(&ca);
}

/* Loop thread: the holder answered (status: its nfsstat4), or the call failed (-1). */
static void ga_done(void *arg, int32_t status)
{
	pthread_mutex_lock(&ga_mu);
	if (nfs4_ga_done(&ga_tab, arg, status))
		pthread_cond_broadcast(&ga_cv);
	pthread_mutex_unlock(&ga_mu);
}

static struct nfs4_ga_wait *ga_take(void)
{
	struct nfs4_ga_wait *w;

	pthread_mutex_lock(&ga_mu);
	w = nfs4_ga_take(&ga_tab);
	pthread_mutex_unlock(&ga_mu);
	return w;
}

/* CB_GETATTR(fh, change | size [| the delegated times: ts]) to holder, waited
 * for: true with *out when it answered NFS4_OK in time. */
static bool ga_ask(uint64_t holder, const uint8_t *fkey, uint32_t fkey_len, bool ts, struct nfs4_cb_getattr_res *out)
{
	struct nfs4_cb_op op;
	struct timespec until;
	struct nfs4_ga_wait *w;
	bool ok = false;

	if (fkey_len > NFS4_CB_FH_MAX || !(w = ga_take()))
		return false;
	memset(&op, 0, sizeof(op.u.getattr) + offsetof(struct nfs4_cb_op, u));
	op.kind = NFS4_CB_OP_GETATTR;
	op.u.getattr.fh.len = fkey_len;
	memcpy(op.u.getattr.fh.data, fkey, fkey_len);
	op.u.getattr.mask0 = GA_MASK0;
	op.u.getattr.mask2 = ts ? GA_MASK2 : 0;
	op.u.getattr.out = &w->res;
	if (!nfs4_cb_send(holder, &op, ga_done, w)) {
		pthread_mutex_lock(&ga_mu);
		nfs4_ga_put(&ga_tab, w); /* done() will not run */
		pthread_mutex_unlock(&ga_mu);
		return false;
	}
	atomic_fetch_add(&ga_sent, 1);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ga_wait_ms / 1000;
	until.tv_nsec += ga_wait_ms % 1000 * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&ga_mu);
	while (!w->answered && pthread_cond_timedwait(&ga_cv, &ga_mu, &until) == 0)
		;
	nfs4_ga_finish(&ga_tab, w, &ok, out); /* not answered: abandoned, done() frees it */
	pthread_mutex_unlock(&ga_mu);
	return ok;
}

uint32_t nfs4_deleg_getattr(const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid, enum nfs4_dl_cause cause,
			    struct be_attr *attr)
{
	struct nfs4_cb_getattr_res res = { 0 };
	struct nfs4_stateid sid;
	struct timespec now;
	uint64_t holder;

	switch (nfs4_deleg_ga_find(fkey, fkey_len, clientid, &holder, &sid)) {
	case NFS4_DL_GA_NONE:
		return NFS4_OK;
	case NFS4_DL_GA_WAIT:
		return NFS4ERR_DELAY; /* RFC 8881 §10.4.1: being returned */
	case NFS4_DL_GA_ASK:
		break;
	}
	pthread_once(&ga_once, ga_init);
	/* The loop thread makes the call: it must never wait for it. */
	if (loop_is_loop_thread() || !ga_ask(holder, fkey, fkey_len, nfs4_deleg_ga_ts(&sid), &res)) {
		atomic_fetch_add(&ga_unanswered, !loop_is_loop_thread());
		/* RFC 8881 §10.4.3 leaves an unanswered CB_GETATTR to the server: recall, DELAY (as knfsd). */
		return nfs4_deleg_break_by(fkey, fkey_len, clientid, NFS4_DL_ACC_READ, cause) == NFS4_OK ? NFS4_OK
												   : NFS4ERR_DELAY;
	}
	struct nfs4_dl_cbattr cb = { .has_change = res.has_change, .has_size = res.has_size,
				     .has_atime = res.has_atime, .has_mtime = res.has_mtime,
				     .change = res.change, .size = res.size,
				     .atime = { res.atime_sec, res.atime_nsec }, .mtime = { res.mtime_sec, res.mtime_nsec } };
	struct nfs4_dl_attr a = { .change = attr->change, .size = attr->size,
				  .mtime_sec = attr->mtime.sec, .mtime_nsec = attr->mtime.nsec,
				  .atime = { attr->atime.sec, attr->atime.nsec } };

	clock_gettime(CLOCK_REALTIME, &now);
	if (!nfs4_deleg_ga_merge(&sid, &cb, now.tv_sec, (uint32_t)now.tv_nsec, &a))
		return NFS4_OK; /* returned meanwhile: the server's attributes are the file's */
	attr->change = a.change;
	attr->size = a.size;
	if (a.mtime_sec != attr->mtime.sec || a.mtime_nsec != attr->mtime.nsec) {
		/* RFC 8881 §10.4.3: modified now; its ctime goes with its mtime (as knfsd sets both). */
		attr->mtime.sec = attr->ctime.sec = a.mtime_sec;
		attr->mtime.nsec = attr->ctime.nsec = a.mtime_nsec;
	}
	attr->atime.sec = a.atime.sec; /* RFC 9754 §5: the holder's, under an *_ATTRS_DELEG delegation */
	attr->atime.nsec = a.atime.nsec;
	return NFS4_OK;
}

void nfs4_deleg_getattr_stats(uint64_t *sent, uint64_t *unanswered)
{
	*sent = atomic_load(&ga_sent);
	*unanswered = atomic_load(&ga_unanswered);
}

unsigned nfs4_deleg_getattr_waiters(void)
{
	unsigned n;

	pthread_mutex_lock(&ga_mu);
	n = nfs4_ga_count(&ga_tab);
	pthread_mutex_unlock(&ga_mu);
	return n;
}
