/*
 * nfs4_lock_notify.c - CB_NOTIFY_LOCK at run time (RFC 8881 §20.11, §9.6):
 * the waiter table (nfs4_lockwait.c) under one mutex. LOCK records a waiter
 * when a blocking lock (READW_LT/WRITEW_LT) of a 4.1+ client is denied (its
 * lock owner looked up in the server's open state table LOCK hands in); the
 * backend's lock release listener (be_lock_listen(): an NFSv4 LOCKU, CLOSE
 * or lease expiry releasing an owner, an NLM unlock) takes every waiter out
 * and queues a CB_NOTIFY_LOCK to each (nfs4_cb_send(), never blocking: the
 * listener may run on any thread). The release does not say which file, so
 * every waiter is told (a hint: a client whose lock is still refused is
 * recorded again by its next LOCK). A local process's unlock is not told
 * by the backend: its waiters learn it by their own polling (the Linux
 * client retries at most every 30 s), or when any other release comes.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "backend/backend.h"
#include "core/log.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/cb/nfs4_cb.h"
#include "nfs/v4/ops/nfs4_lock_notify.h"
#include "nfs/v4/state/nfs4_lockwait.h"

#define NOTIFY_BATCH 8u /* waiters taken out at a time (on the stack) */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct nfs4_lockwait_tab tab; /* zero: empty */
static _Atomic uint64_t st_sent;

unsigned nfs4_lock_notify_waiters(void)
{
	unsigned n;

	pthread_mutex_lock(&mu);
	n = nfs4_lockwait_count(&tab, 0);
	pthread_mutex_unlock(&mu);
	return n;
}

uint64_t nfs4_lock_notify_sent(void)
{
	return atomic_load(&st_sent);
}

/* RFC 8881 §20.11.1: the file and the lock owner the client waits with. */
static void notify_one(const struct nfs4_lockwait *w)
{
	static struct nfs4_cb_op zero;
	struct nfs4_cb_op op = zero;
	struct nfs4_cb_notify_lock_args *a = &op.u.notify_lock;

	op.kind = NFS4_CB_OP_NOTIFY_LOCK;
	a->fh.len = w->fh_len;
	memcpy(a->fh.data, w->fh, w->fh_len);
	a->clientid = w->owner_clientid;
	a->owner_len = w->owner_len;
	memcpy(a->owner, w->owner, w->owner_len);
	if (nfs4_cb_send(w->clientid, &op, NULL, NULL))
		atomic_fetch_add(&st_sent, 1);
}

/* The release listener (any thread). */
static void released(void)
{
	struct nfs4_lockwait got[NOTIFY_BATCH];
	unsigned n;

	do {
		pthread_mutex_lock(&mu);
		n = nfs4_lockwait_take(&tab, NULL, 0, got, NOTIFY_BATCH);
		pthread_mutex_unlock(&mu);
		for (unsigned i = 0; i < n; i++)
			notify_one(&got[i]);
	} while (n == NOTIFY_BATCH);
}

void nfs4_lock_notify_start(void)
{
	if (!be_lock_listen(released))
		log_warn("nfs4: no room for a lock release listener: no CB_NOTIFY_LOCK");
}

void nfs4_lock_notify_stop(void)
{
	be_lock_unlisten(released);
	pthread_mutex_lock(&mu);
	nfs4_lockwait_init(&tab);
	pthread_mutex_unlock(&mu);
}

void nfs4_lock_notify_wait(struct nfs4_stab *stab, uint64_t clientid, const struct nfs_fh *fh, uint64_t owner_id,
			   uint64_t now)
{
	static struct nfs4_lockwait zero;
	struct nfs4_lockwait w = zero;

	if (fh->len > NFS4_LOCKWAIT_FH_MAX)
		return;
	w.clientid = clientid;
	w.fh_len = fh->len;
	memcpy(w.fh, fh->data, fh->len);
	if (!nfs4_stab_lock_owner(stab, owner_id, &w.owner_clientid, w.owner, sizeof(w.owner),
				  &w.owner_len))
		return;
	pthread_mutex_lock(&mu);
	(void)nfs4_lockwait_add(&tab, &w, now); /* full: that client polls, as without notification */
	pthread_mutex_unlock(&mu);
}

void nfs4_lock_notify_client_gone(uint64_t clientid)
{
	pthread_mutex_lock(&mu);
	nfs4_lockwait_client_gone(&tab, clientid);
	pthread_mutex_unlock(&mu);
}

void nfs4_lock_notify_tick(uint64_t now, uint64_t lease)
{
	pthread_mutex_lock(&mu);
	nfs4_lockwait_expire(&tab, now, lease);
	pthread_mutex_unlock(&mu);
}
