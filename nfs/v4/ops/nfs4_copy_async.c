/*
 * nfs4_copy_async.c - asynchronous COPY at run time (RFC 7862 §4.8,
 * §15.2.3): the offload table (nfs4_offload.c) under one mutex, a fixed
 * array of jobs (one per table entry: the two open files and the ranges) and
 * NFS4_COPY_THREADS copy threads, started with the first asynchronous copy,
 * that move the data in NFS4_COPY_CHUNK pieces (copy_file_range through
 * be_copy()), never on an RPC worker. Each piece updates the progress
 * OFFLOAD_STATUS reports and checks the cancel flag OFFLOAD_CANCEL or the
 * client's going sets. When the copy is over (done, failed or cancelled) the
 * files are let go and CB_OFFLOAD (§16.1) tells the client, through
 * nfs4_copy_cb_offload(); its answer frees the entry. A DONE entry whose
 * CB_OFFLOAD never completes goes after a lease (nfs4_copy_async_tick()).
 *
 * The same lock guards the synchronous copies' worker shares
 * (nfs4_copy_sync_get/put(): [nfsv4] copy-workers, copy-workers-per-client).
 *
 * Who owns what: a job owns its files' references from nfs4_copy_async_start()
 * until its thread puts them; the table entry outlives the job until the
 * callback is answered.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/ops/nfs4_copy_async.h"
#include "nfs/v4/state/nfs4_offload.h"
#include "nfs/v4/xdr/nfs4_v42.h"

#define NFS4_COPY_THREADS 2u
#define NFS4_COPY_CHUNK (8ull << 20) /* bytes per be_copy() between progress/cancel checks */

struct copy_job {
	struct nfs4_obj src, dst;
	struct be_file *fs, *fd;
	uint64_t soff, doff, count;
	bool sync_export; /* the destination's export is "sync": commit before CB_OFFLOAD */
	struct nfs_fh dst_fh; /* coa_fh (§16.1.1) */
	struct nfs_exports *tbl; /* a reference: src.exp and dst.exp live in it */
	uint32_t src_id, dst_id; /* their export ids, read under mu after the files are let go */
};

static void job_put_files(struct copy_job *j)
{
	nfs4_v42_file_put(&j->src, j->fs);
	nfs4_v42_file_put(&j->dst, j->fd);
	nfs_exports_put(j->tbl);
	j->tbl = NULL;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct nfs4_offload_tab tab;
static struct copy_job jobs[NFS4_OFFLOAD_MAX];
static int queue[NFS4_OFFLOAD_MAX]; /* ring of entries waiting for a thread */
static unsigned q_head, q_len;
static pthread_t threads[NFS4_COPY_THREADS];
static unsigned nthreads;
static bool ready, stopping;
static _Atomic uint64_t st_started, st_done, st_cancelled, st_cb_sent;
static struct nfs4_copy_share share; /* under mu; set up by nfs4_copy_configure() or the first COPY */
static bool share_set;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* mu held. */
static void share_setup(unsigned workers, unsigned per_client)
{
	nfs4_copy_share_init(&share, workers, per_client);
	share_set = true;
}

void nfs4_copy_configure(unsigned workers, unsigned per_client)
{
	pthread_mutex_lock(&mu);
	share_setup(workers, per_client);
	pthread_mutex_unlock(&mu);
}

bool nfs4_copy_sync_get(uint64_t clientid)
{
	bool ok;

	pthread_mutex_lock(&mu);
	if (!share_set)
		share_setup(NFS4_COPY_WORKERS_DEFAULT, NFS4_COPY_WORKERS_PER_CLIENT_DEFAULT);
	ok = nfs4_copy_share_get(&share, clientid);
	pthread_mutex_unlock(&mu);
	return ok;
}

void nfs4_copy_sync_put(uint64_t clientid)
{
	pthread_mutex_lock(&mu);
	nfs4_copy_share_put(&share, clientid);
	pthread_mutex_unlock(&mu);
}

void nfs4_copy_async_stats(struct nfs4_copy_async_stat *out)
{
	out->started = atomic_load(&st_started);
	out->done = atomic_load(&st_done);
	out->cancelled = atomic_load(&st_cancelled);
	out->cb_offload_sent = atomic_load(&st_cb_sent);
	pthread_mutex_lock(&mu);
	out->offloads = ready ? nfs4_offload_count(&tab, 0) : 0;
	out->sync_copies = share.n;
	out->sync_max = share_set ? share.max : NFS4_COPY_WORKERS_DEFAULT;
	out->sync_refused = share.refused;
	pthread_mutex_unlock(&mu);
}

/* The copy itself, with mu not held: bytes copied in *done, the status. */
static uint32_t job_copy(int i, struct copy_job *j, uint64_t *done)
{
	*done = 0;
	while (*done < j->count) {
		uint64_t n = 0, want = j->count - *done;
		bool cancelled;
		int err;

		pthread_mutex_lock(&mu);
		cancelled = tab.e[i].cancelled || stopping;
		pthread_mutex_unlock(&mu);
		if (cancelled)
			break;
		if (want > NFS4_COPY_CHUNK)
			want = NFS4_COPY_CHUNK;
		err = be_copy(j->dst.exp->fs, &j->dst.cred, j->fs, j->soff + *done, j->fd, j->doff + *done, want, &n);
		if (err) /* §15.2.3: what was copied before an error is reported as a short copy */
			return *done ? NFS4_OK : nfs_errno_to_nfsstat4(err);
		if (n == 0)
			break; /* the source ended */
		*done += n;
		nfs_export_count_io(j->dst.exp, 0, n); /* the destination export's bytes written */
		pthread_mutex_lock(&mu);
		nfs4_offload_progress(&tab, i, *done);
		pthread_mutex_unlock(&mu);
	}
	return NFS4_OK;
}

/* The callback's argument: the entry and its stateid's counter (the entry
 * may have gone with its client and been taken again meanwhile). */
static void *cb_arg(int i)
{
	const uint8_t *c = tab.e[i].sid.other + 8;

	return (void *)(uintptr_t)((uint64_t)((uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3])
				   << 8 | (unsigned)i);
}

/* CB_OFFLOAD's answer (any thread): the entry goes. */
static void cb_done(void *arg, int32_t status)
{
	int i = (int)((uintptr_t)arg & 0xff);

	(void)status; /* RFC 7862 §16.1.3: nothing to redo whatever the client answers */
	pthread_mutex_lock(&mu);
	if (i < (int)NFS4_OFFLOAD_MAX && cb_arg(i) == arg)
		nfs4_offload_release(&tab, i);
	pthread_mutex_unlock(&mu);
}

/* Run job i to its end, then CB_OFFLOAD (§16.1: the result of the copy). */
static void job_run(int i)
{
	struct copy_job *j = &jobs[i];
	struct nfs4_copy_cb cb = { .status = NFS4_OK };
	uint64_t done = 0;
	uint32_t status = job_copy(i, j, &done);
	bool tell, cancelled;
	void *arg;

	cb.committed = UNSTABLE4;
	if (status == NFS4_OK && done && j->sync_export) {
		/* As the synchronous COPY: on a "sync" export the data is stable before the result. */
		status = nfs_errno_to_nfsstat4(be_commit(j->dst.exp->fs, j->fd, j->doff, done, NULL, NULL));
		if (status == NFS4_OK)
			cb.committed = FILE_SYNC4;
	}
	cb.fh = j->dst_fh;
	job_put_files(j);
	cb.status = status;
	cb.count = done;
	pthread_mutex_lock(&mu);
	cb.clientid = tab.e[i].clientid;
	cb.sid = tab.e[i].sid;
	tell = !tab.e[i].orphaned;
	cancelled = tab.e[i].cancelled;
	arg = cb_arg(i);
	nfs4_offload_complete(&tab, i, status, cb.committed, now_ms());
	pthread_mutex_unlock(&mu);
	atomic_fetch_add(cancelled ? &st_cancelled : &st_done, 1);
	/* Counted before it is queued: the client may have it (and read the
	 * stats) before nfs4_copy_cb_offload() returns. */
	if (tell) {
		atomic_fetch_add(&st_cb_sent, 1);
		if (!nfs4_copy_cb_offload(&cb, cb_done, arg))
			atomic_fetch_sub(&st_cb_sent, 1);
	}
}

static void *copy_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		int i;

		while (!q_len && !stopping)
			pthread_cond_wait(&cv, &mu);
		if (!q_len)
			break; /* stopping, nothing queued */
		i = queue[q_head];
		q_head = (q_head + 1) % NFS4_OFFLOAD_MAX;
		q_len--;
		pthread_mutex_unlock(&mu);
		job_run(i);
		pthread_mutex_lock(&mu);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* mu held: the threads, started with the first copy. */
static bool threads_start(void)
{
	if (!ready) {
		nfs4_offload_init(&tab, (uint32_t)time(NULL));
		ready = true;
	}
	while (nthreads < NFS4_COPY_THREADS && !stopping) {
		if (pthread_create(&threads[nthreads], NULL, copy_thread, NULL) != 0) {
			log_warn("nfs4: cannot start a copy thread");
			break;
		}
		nthreads++;
	}
	return nthreads > 0;
}

uint32_t nfs4_copy_async_start(const struct nfs4_copy_async_req *rq, struct nfs4_stateid *sid)
{
	int i = -1;

	pthread_mutex_lock(&mu);
	if (threads_start() && !stopping)
		i = nfs4_offload_create(&tab, rq->clientid, rq->count);
	if (i >= 0) {
		struct copy_job *j = &jobs[i];

		j->src = *rq->src, j->dst = *rq->dst, j->fs = rq->fs, j->fd = rq->fd;
		j->soff = rq->soff, j->doff = rq->doff, j->count = rq->count;
		j->sync_export = rq->sync_export;
		j->dst_fh = *rq->dst_fh;
		j->src_id = rq->src->exp ? rq->src->exp->id : 0;
		j->dst_id = rq->dst->exp ? rq->dst->exp->id : 0;
		j->tbl = rq->tbl;
		if (j->tbl)
			atomic_fetch_add(&j->tbl->refs, 1);
		*sid = tab.e[i].sid;
		queue[(q_head + q_len) % NFS4_OFFLOAD_MAX] = i;
		q_len++;
		pthread_cond_signal(&cv);
	}
	pthread_mutex_unlock(&mu);
	if (i < 0)
		return NFS4ERR_DELAY; /* the caller copies synchronously instead */
	atomic_fetch_add(&st_started, 1);
	return NFS4_OK;
}

uint32_t nfs4_copy_async_status(uint64_t clientid, const struct nfs4_stateid *sid, uint64_t *count, bool *complete,
				uint32_t *status)
{
	int i;

	pthread_mutex_lock(&mu);
	i = ready ? nfs4_offload_find(&tab, clientid, sid) : -1;
	if (i >= 0) {
		*count = tab.e[i].done;
		*complete = tab.e[i].state == NFS4_OFFLOAD_DONE;
		*status = tab.e[i].status;
	}
	pthread_mutex_unlock(&mu);
	return i >= 0 ? NFS4_OK : NFS4ERR_BAD_STATEID;
}

uint32_t nfs4_copy_async_cancel(uint64_t clientid, const struct nfs4_stateid *sid)
{
	int i;

	pthread_mutex_lock(&mu);
	i = ready ? nfs4_offload_find(&tab, clientid, sid) : -1;
	if (i >= 0 && !nfs4_offload_cancel(&tab, i))
		nfs4_offload_release(&tab, i); /* already over: its result is no longer wanted */
	pthread_mutex_unlock(&mu);
	return i >= 0 ? NFS4_OK : NFS4ERR_BAD_STATEID;
}

void nfs4_copy_async_client_gone(uint64_t clientid)
{
	pthread_mutex_lock(&mu);
	if (ready)
		nfs4_offload_client_gone(&tab, clientid);
	pthread_mutex_unlock(&mu);
}

unsigned nfs4_copy_async_export_gone(uint32_t export_id)
{
	unsigned n = 0;

	pthread_mutex_lock(&mu);
	for (unsigned i = 0; ready && i < NFS4_OFFLOAD_MAX; i++)
		if (tab.e[i].state == NFS4_OFFLOAD_RUNNING && (jobs[i].src_id == export_id || jobs[i].dst_id == export_id))
			n += nfs4_offload_cancel(&tab, (int)i);
	pthread_mutex_unlock(&mu);
	return n;
}

void nfs4_copy_async_tick(uint64_t lease_ms)
{
	pthread_mutex_lock(&mu);
	if (ready)
		nfs4_offload_reap(&tab, now_ms(), lease_ms);
	pthread_mutex_unlock(&mu);
}

void nfs4_copy_async_stop(void)
{
	unsigned n;

	pthread_mutex_lock(&mu);
	stopping = true; /* running copies stop at their next chunk */
	pthread_cond_broadcast(&cv);
	n = nthreads;
	pthread_mutex_unlock(&mu);
	for (unsigned k = 0; k < n; k++)
		pthread_join(threads[k], NULL);
	pthread_mutex_lock(&mu);
	nthreads = 0;
	/* Queued jobs no thread took: their files go. */
	for (; q_len; q_len--, q_head = (q_head + 1) % NFS4_OFFLOAD_MAX) {
		job_put_files(&jobs[queue[q_head]]);
	}
	ready = false;
	stopping = false;
	pthread_mutex_unlock(&mu);
}
