/*
 * nfs4_recovery.c - NFSv4 stable client records and the NFSv4 grace term
 * (see nfs4_recovery.h for the rules, the file format and the locking).
 * The record table is linear over at most max (<= NFS4_REC_MAX) entries: it is
 * searched only at confirmation, destruction, expiry and reclaims.
 *
 * Record life:  (none) --confirm--> cur --forget--> (none)
 *               loaded --> prev --confirm--> prev+cur --term ends--> cur
 *               prev --term ends, never confirmed--> (none)
 *
 * The file is read, replaced and appended to through core/statefile.h: no
 * file-system call is made here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/statefile.h"
#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/recovery/nfs4_recovery.h"
#include "nfs/v4/state/nfs4_clients.h"

_Static_assert(NFS4_REC_MAX == 2 * NFS4_STATE_MAX_CLIENTS, "a record for every client of two boots");

#define REC_HDR 3u /* op, u16 length */

static struct log_limit rec_limit;

void nfs4_rec_init(struct nfs4_recovery *r, struct grace_clock *clock)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->clock = clock;
	statefile_log_init(&r->file);
	r->max = NFS4_REC_MAX;
}

void nfs4_rec_set_max(struct nfs4_recovery *r, unsigned max_clients)
{
	r->max = max_clients == 0 || max_clients > NFS4_REC_MAX / 2 ? NFS4_REC_MAX : 2 * max_clients;
}

void nfs4_rec_release(struct nfs4_recovery *r)
{
	for (unsigned i = 0; i < r->n; i++)
		free(r->recs[i]);
	r->n = 0;
	statefile_log_close(&r->file);
	pthread_mutex_destroy(&r->lock);
}

static int rec_find(const struct nfs4_recovery *r, const uint8_t *id, uint32_t len)
{
	for (unsigned i = 0; i < r->n; i++)
		if (r->recs[i]->len == len && memcmp(r->recs[i]->id, id, len) == 0)
			return (int)i;
	return -1;
}

static struct nfs4_rec *rec_get(struct nfs4_recovery *r, const uint8_t *id, uint32_t len)
{
	int i = rec_find(r, id, len);
	struct nfs4_rec *rec;

	if (i >= 0)
		return r->recs[i];
	if (len == 0 || len > NFS4_REC_ID_MAX || r->n >= r->max)
		return NULL;
	rec = calloc(1, sizeof(*rec) + len);
	if (!rec)
		return NULL;
	rec->len = (uint16_t)len;
	memcpy(rec->id, id, len);
	r->recs[r->n++] = rec;
	return rec;
}

/* Free record i if nothing holds it any more. */
static void rec_drop(struct nfs4_recovery *r, unsigned i)
{
	if (r->recs[i]->prev || r->recs[i]->cur)
		return;
	free(r->recs[i]);
	r->recs[i] = r->recs[--r->n];
	r->recs[r->n] = NULL;
}

/* Clear prev of record i (the term's bookkeeping follows). */
static void rec_unprev(struct nfs4_recovery *r, unsigned i)
{
	struct nfs4_rec *rec = r->recs[i];

	if (!rec->prev)
		return;
	rec->prev = false;
	r->nprev--;
	if (rec->complete)
		r->prev_done--;
}

int nfs4_rec_parse(struct nfs4_recovery *r, const uint8_t *buf, size_t len)
{
	size_t off = sizeof(NFS4_REC_MAGIC) - 1;

	if (len < off || memcmp(buf, NFS4_REC_MAGIC, off) != 0)
		return -1;
	/* Check each record's length against what is left before using it; a
	 * torn or unknown record ends the file (a crash during an append). */
	while (len - off >= REC_HDR) {
		uint8_t op = buf[off];
		uint32_t n = (uint32_t)buf[off + 1] << 8 | buf[off + 2];
		if ((op != 'A' && op != 'D') || n == 0 || n > NFS4_REC_ID_MAX || len - off - REC_HDR < n)
			break;
		const uint8_t *id = buf + off + REC_HDR;
		off += REC_HDR + n;
		if (op == 'A') {
			/* At most half the table for the previous boot: this boot's clients always fit. */
			struct nfs4_rec *rec = r->nprev < r->max / 2 || rec_find(r, id, n) >= 0 ? rec_get(r, id, n) : NULL;
			if (rec && !rec->prev) {
				rec->prev = true;
				r->nprev++;
			}
		} else {
			int i = rec_find(r, id, n);
			if (i >= 0) {
				rec_unprev(r, (unsigned)i);
				rec_drop(r, (unsigned)i);
			}
		}
	}
	return (int)r->nprev;
}

/* ---- the file ---- */

static void rec_encode(uint8_t *out, uint8_t op, const struct nfs4_rec *rec)
{
	out[0] = op;
	out[1] = (uint8_t)(rec->len >> 8);
	out[2] = (uint8_t)rec->len;
	memcpy(out + REC_HDR, rec->id, rec->len);
}

/* Write every live record to a new version of the file (temporary file, fsync, rename, fsync of the
 * directory: statefile_commit()), reopen it for appending. On failure nothing more is persisted
 * (logged). */
static void rec_rewrite_locked(struct nfs4_recovery *r)
{
	struct statefile_new w;
	uint8_t buf[REC_HDR + NFS4_REC_ID_MAX];
	size_t bytes = sizeof(NFS4_REC_MAGIC) - 1;
	int err;

	if (!r->path[0])
		return;
	err = statefile_begin(&w, r->path) < 0 || statefile_put(&w, NFS4_REC_MAGIC, bytes) < 0;
	for (unsigned i = 0; !err && i < r->n; i++) {
		rec_encode(buf, 'A', r->recs[i]);
		err = statefile_put(&w, buf, REC_HDR + r->recs[i]->len) < 0;
		bytes += REC_HDR + r->recs[i]->len;
	}
	err = err || statefile_commit(&w) < 0;
	statefile_log_close(&r->file);
	if (err || statefile_log_open(&r->file, r->path) < 0) {
		log_limited(&rec_limit, LOG_ERR, "nfs4: cannot write %s (%s): no client is confirmed until it "
			    "can be written", r->path, strerror(errno));
		statefile_abort(&w);
		statefile_log_close(&r->file);
		return;
	}
	r->file_bytes = bytes;
}

/* Append one record and make it stable before the caller answers. A file that failed before is
 * rewritten first (it may work again: space freed), at most once a second: a client refused meanwhile
 * costs no rewrite. 0: stable (or nothing is persisted at all: no path, the pure tests), -1: not
 * written. */
static int rec_append_locked(struct nfs4_recovery *r, uint8_t op, const struct nfs4_rec *rec)
{
	uint8_t buf[REC_HDR + NFS4_REC_ID_MAX];

	if (!statefile_log_is_open(&r->file) && r->path[0] && op == 'A' && r->now_ms >= r->retry_ms) {
		r->retry_ms = r->now_ms + 1000;
		rec_rewrite_locked(r); /* the live records, this one with them */
	}
	if (!statefile_log_is_open(&r->file))
		return r->path[0] ? -1 : 0; /* a 'D' not written: the next rewrite leaves the record out */
	rec_encode(buf, op, rec);
	if (statefile_log_append(&r->file, buf, REC_HDR + rec->len) < 0 ||
	    (op == 'A' && statefile_log_sync(&r->file) < 0)) {
		log_limited(&rec_limit, LOG_ERR, "nfs4: %s: %s; rewriting it", r->path, strerror(errno));
		rec_rewrite_locked(r);
		return statefile_log_is_open(&r->file) ? 0 : -1;
	}
	r->file_bytes += REC_HDR + rec->len;
	r->unsynced |= op == 'D';
	if (r->file_bytes > NFS4_REC_FILE_MAX)
		rec_rewrite_locked(r);
	return 0;
}

/* ---- the grace term ---- */

/* RFC 8881 §8.4.2: the term is over: previous clients that did not come back lose their records. */
static void rec_finish_locked(struct nfs4_recovery *r, const char *why)
{
	unsigned dropped = 0;

	if (r->finished)
		return;
	r->finished = true;
	grace_clock_release(r->clock, GRACE_NFS4);
	for (unsigned i = r->n; i-- > 0;) {
		dropped += !r->recs[i]->cur && r->recs[i]->prev;
		rec_unprev(r, i);
		rec_drop(r, i);
	}
	if (r->term_started)
		log_info("nfs4: grace period over (%s); %u client(s) of the previous boot did not reclaim", why,
			 dropped);
	rec_rewrite_locked(r);
}

static void rec_tick_locked(struct nfs4_recovery *r, uint64_t now_ms)
{
	r->now_ms = now_ms;
	if (!r->finished && !grace_clock_held(r->clock, GRACE_NFS4, now_ms))
		rec_finish_locked(r, "grace-time elapsed");
}

/* RFC 8881 §8.4.2: ended early once every previous client sent RECLAIM_COMPLETE. */
static void rec_check_done_locked(struct nfs4_recovery *r)
{
	if (!r->finished && r->prev_done == r->nprev)
		rec_finish_locked(r, "every client of the previous boot sent RECLAIM_COMPLETE");
}

unsigned nfs4_rec_start(struct nfs4_recovery *r, uint64_t now_ms, unsigned grace_s)
{
	unsigned held = 0;

	pthread_mutex_lock(&r->lock);
	/* No previous clients: nothing to reclaim, no NFSv4 grace at all. */
	r->term_started = r->nprev > 0 && grace_s > 0;
	if (r->term_started) {
		grace_clock_hold(r->clock, GRACE_NFS4, now_ms, grace_s);
		held = grace_s;
		rec_rewrite_locked(r);
	} else {
		rec_finish_locked(r, "nothing to reclaim");
	}
	pthread_mutex_unlock(&r->lock);
	return held;
}

int nfs4_rec_confirm(struct nfs4_recovery *r, const uint8_t *id, uint32_t len, uint64_t now_ms)
{
	struct nfs4_rec *rec;
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	rec_tick_locked(r, now_ms);
	rec = rec_get(r, id, len);
	if (!rec) {
		ret = -1;
	} else if (!rec->cur) {
		rec->cur = true;
		/* RFC 8881 §8.4.3: stable before the client can hold state; not stable, not confirmed. */
		if (!rec->prev && rec_append_locked(r, 'A', rec) != 0) {
			rec->cur = false;
			rec_drop(r, (unsigned)rec_find(r, id, len));
			ret = -1;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return ret;
}

void nfs4_rec_forget(struct nfs4_recovery *r, const uint8_t *id, uint32_t len, uint64_t now_ms)
{
	int i;

	pthread_mutex_lock(&r->lock);
	rec_tick_locked(r, now_ms);
	i = rec_find(r, id, len);
	if (i >= 0) {
		(void)rec_append_locked(r, 'D', r->recs[i]); /* not written: the rewrite at the next change drops it */
		rec_unprev(r, (unsigned)i);
		r->recs[i]->cur = false;
		rec_drop(r, (unsigned)i);
		rec_check_done_locked(r);
	}
	pthread_mutex_unlock(&r->lock);
}

void nfs4_rec_sync(struct nfs4_recovery *r)
{
	pthread_mutex_lock(&r->lock);
	if (r->unsynced && statefile_log_is_open(&r->file) && statefile_log_sync(&r->file) < 0) {
		log_limited(&rec_limit, LOG_ERR, "nfs4: %s: %s; rewriting it", r->path, strerror(errno));
		rec_rewrite_locked(r);
	}
	r->unsynced = false;
	pthread_mutex_unlock(&r->lock);
}

void nfs4_rec_reclaim_complete(struct nfs4_recovery *r, const uint8_t *id, uint32_t len, uint64_t now_ms)
{
	int i;

	pthread_mutex_lock(&r->lock);
	rec_tick_locked(r, now_ms);
	i = rec_find(r, id, len);
	if (i >= 0 && !r->recs[i]->complete) {
		r->recs[i]->complete = true;
		if (r->recs[i]->prev)
			r->prev_done++;
		rec_check_done_locked(r);
	}
	pthread_mutex_unlock(&r->lock);
}

uint32_t nfs4_rec_grace_check(struct nfs4_recovery *r, enum nfs4_grace_op op, const uint8_t *id, uint32_t len,
			      bool is_reclaim, uint64_t now_ms)
{
	uint32_t status = NFS4_OK;
	int i;

	/* Only OPEN and LOCK have a reclaiming form (RFC 8881 §18.16.3 CLAIM_PREVIOUS, §18.10.3 reclaim). */
	if (op != NFS4_GRACE_OPEN && op != NFS4_GRACE_LOCK)
		is_reclaim = false;
	pthread_mutex_lock(&r->lock);
	rec_tick_locked(r, now_ms);
	if (is_reclaim) {
		/* RFC 8881 §8.4.2.1: a reclaim outside the grace period, by a
		 * client the previous boot did not record, or after its own
		 * RECLAIM_COMPLETE (§18.51.3) is NFS4ERR_NO_GRACE. */
		i = rec_find(r, id, len);
		if (r->finished || i < 0 || !r->recs[i]->prev || r->recs[i]->complete)
			status = NFS4ERR_NO_GRACE;
	} else if (grace_clock_active(r->clock, now_ms)) {
		/* RFC 8881 §8.4.2, RFC 7530 §9.6.2: no new conflicting state in grace. */
		status = NFS4ERR_GRACE;
	}
	r->counts[status == NFS4_OK ? 0 : status == NFS4ERR_GRACE ? 1 : 2] += is_reclaim || status != NFS4_OK;
	pthread_mutex_unlock(&r->lock);
	return status;
}

bool nfs4_rec_in_grace(struct nfs4_recovery *r, uint64_t now_ms)
{
	bool in;

	pthread_mutex_lock(&r->lock);
	rec_tick_locked(r, now_ms);
	in = !r->finished;
	pthread_mutex_unlock(&r->lock);
	return in;
}

/* ---- the daemon's instance ---- */

static struct nfs4_recovery rec_server;
static bool rec_server_ready;
static unsigned rec_max_clients; /* [nfsv4] max-clients */

void nfs4_recovery_max_clients(unsigned n)
{
	rec_max_clients = n;
}

/* Read the previous boot's file into r (missing: nothing). Bounded by twice the rewrite threshold. */
static void rec_load(struct nfs4_recovery *r)
{
	size_t len;
	uint8_t *buf = statefile_load(r->path, 2 * (size_t)NFS4_REC_FILE_MAX, &len);

	if (!buf) {
		if (errno != ENOENT)
			log_err("nfs4: %s: %s; starting without the previous boot's clients", r->path,
				strerror(errno));
		return;
	}
	if (nfs4_rec_parse(r, buf, len) < 0)
		log_err("nfs4: %s is not a client record file; starting without the previous boot's clients",
			r->path);
	free(buf);
}

unsigned nfs4_recovery_start(const char *state_dir, unsigned grace_s)
{
	struct nfs4_recovery *r = &rec_server;
	unsigned held;

	nfs4_rec_init(r, &grace_server);
	nfs4_rec_set_max(r, rec_max_clients);
	rec_server_ready = true;
	if (statefile_mkdir(state_dir) < 0)
		log_err("nfs4: %s: %s", state_dir, strerror(errno));
	snprintf(r->path, sizeof(r->path), "%s/%s", state_dir, NFS4_REC_FILE);
	rec_load(r);
	held = nfs4_rec_start(r, grace_now_ms(), grace_s);
	if (held)
		log_info("nfs4: grace period of %u s for %u client(s) of the previous boot: only reclaims until "
			 "they all sent RECLAIM_COMPLETE or it ends", held, r->nprev);
	else
		log_info("nfs4: no client of a previous boot recorded: no NFSv4 grace period");
	return held;
}

void nfs4_recovery_stop(void)
{
	if (rec_server_ready)
		nfs4_rec_release(&rec_server);
	rec_server_ready = false;
}

/* RFC 8881 §8.4.2: once the grace period is over, the previous boot's clients
 * that did not reclaim lose their records. The term is otherwise ended by an
 * NFSv4 call; with none (an NFSv3-only site) their records stayed in the file
 * and the next start held a grace period for them again, NLM's new locks
 * included (core/grace.h; issue 23). */
void nfs4_recovery_tick(void)
{
	if (rec_server_ready)
		(void)nfs4_rec_in_grace(&rec_server, grace_now_ms());
}

struct nfs4_recovery *nfs4_recovery_server(void)
{
	return rec_server_ready ? &rec_server : NULL;
}

uint32_t nfs4_grace_check(enum nfs4_grace_op op, const uint8_t *owner, uint32_t owner_len, bool is_reclaim)
{
	if (!rec_server_ready) /* tests without the daemon's instance */
		return is_reclaim ? NFS4ERR_NO_GRACE : NFS4_OK;
	return nfs4_rec_grace_check(&rec_server, op, owner, owner_len, is_reclaim, grace_now_ms());
}

int nfs4_client_stable(const uint8_t *owner, uint32_t owner_len)
{
	if (!rec_server_ready || nfs4_rec_confirm(&rec_server, owner, owner_len, grace_now_ms()) == 0)
		return 0;
	log_limited(&rec_limit, LOG_WARNING, "nfs4: a client cannot be recorded for restart recovery (%u records, "
		    "at most %u, or %s not writable): it is not confirmed", rec_server.n, rec_server.max, rec_server.path);
	return -1;
}

void nfs4_client_gone(const uint8_t *owner, uint32_t owner_len)
{
	if (rec_server_ready)
		nfs4_rec_forget(&rec_server, owner, owner_len, grace_now_ms());
}

void nfs4_client_gone_flush(void)
{
	if (rec_server_ready)
		nfs4_rec_sync(&rec_server);
}

void nfs4_client_reclaimed(const uint8_t *owner, uint32_t owner_len)
{
	if (rec_server_ready)
		nfs4_rec_reclaim_complete(&rec_server, owner, owner_len, grace_now_ms());
}
