/*
 * nfs4_stateid.c - NFSv4 stateids, open and lock owners, opens, locks and
 * share reservations (see nfs4_stateid.h for the layout of stateid4.other, the
 * seqid rules, ownership and bounds). Records are found by hashing: opens by
 * the counter in their other field, files by their key; owners by a short
 * walk of their client's list (bounded by NFS4_STAB_MAX_PER_CLIENT).
 *
 * Every record is on intrusive doubly linked lists (core/list.h): its hash
 * chain, its client's owners, its owner's opens or locks, its file's opens,
 * its open's lock stateids. Freeing a record first frees what hangs off it,
 * then takes it off each of its lists in O(1), in one place per record kind
 * (the "freeing" section).
 */
#include <stdlib.h>
#include <string.h>

#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/state/nfs4_stateid.h"

struct nfs4_stab_client {
	struct list_link link; /* in t->clients */
	uint64_t clientid;
	unsigned nstates;
	unsigned nopens;            /* open stateids (max_opens_client) */
	unsigned nlowners, nlocks;  /* lock owners, lock stateids (together max_locks_client) */
	struct list_link owners;    /* open owners, through their link */
	struct list_link lowners;   /* lock owners, through their link */
	unsigned nrevoked;          /* its entries in t->revoked */
};

/* A 4.0 owner's sequence (RFC 7530 §9.1.7): the last seqid and its reply. */
struct nfs4_seqstate {
	bool valid; /* an operation was done */
	uint32_t seqid;
	struct nfs4_seqid_replay replay;
};

struct nfs4_oowner {
	struct list_link link;    /* in the client's owners */
	struct nfs4_stab_client *cl;
	struct list_link opens;   /* through owner_link */
	bool confirmed;           /* 4.0: OPEN_CONFIRM done (4.1: always) */
	struct nfs4_seqstate seq;
	uint8_t closed[NFS4_OTHER_SIZE]; /* 4.0: the open its last CLOSE freed (a replay names it) */
	uint32_t len;
	uint8_t owner[];
};

/* A lock owner (RFC 8881 §18.10): its backend owner id and lock stateids. */
struct nfs4_lowner {
	struct list_link link;    /* in the client's lowners */
	struct nfs4_stab_client *cl;
	struct list_link locks;   /* lock stateids, through lowner_link */
	uint64_t id;              /* the backend's lock owner (NFS4_STAB_LOCK_ID_BIT | counter) */
	bool v41;                 /* made by a 4.1+ client: goes with its last lock stateid */
	struct nfs4_seqstate seq;
	uint32_t len;
	uint8_t owner[];
};

struct nfs4_sfile {
	struct list_link hash;   /* in t->files[] */
	struct list_link opens;  /* through file_link */
	void *fs, *file;
	unsigned file_modes;
	uint32_t len;
	uint8_t key[NFS4_STAB_FKEY_MAX];
};

/* An open stateid, or a lock stateid (kind LOCK: lowner, parent set; not on the
 * file's or the open owner's lists, but on its parent's and its lock owner's).
 * What only one kind has shares the space: 112 bytes on 64-bit, no more than
 * the singly linked record took (120). */
struct nfs4_open {
	struct list_link hash; /* in t->opens[] */
	union {
		struct { /* OPEN */
			struct list_link owner_link, file_link; /* in its owner's and its file's opens */
			struct list_link locks;                 /* its lock stateids, through lock_link */
		};
		struct { /* LOCK */
			struct list_link lock_link, lowner_link; /* in its parent's locks, its lock owner's */
			struct nfs4_open *parent;
			struct nfs4_lowner *lowner;
		};
	};
	struct nfs4_oowner *owner; /* LOCK: the parent's */
	struct nfs4_sfile *file;   /* LOCK: the parent's */
	struct nfs4_stateid sid;
	uint32_t access, deny;
	enum { NFS4_ST_OPEN, NFS4_ST_LOCK } kind;
	uint8_t access_modes, deny_modes; /* bit n: mode n was held at some time (downgrade) */
};

static const struct nfs4_stab_file_ops *fops_of(const struct nfs4_stab *t)
{
	return t->fops;
}

void nfs4_stab_init(struct nfs4_stab *t, uint32_t boot, const struct nfs4_stab_file_ops *fops)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	list_init(&t->clients);
	for (unsigned i = 0; i < NFS4_STAB_BUCKETS; i++) {
		list_init(&t->opens[i]);
		list_init(&t->files[i]);
	}
	t->boot = boot;
	t->fops = fops;
	t->max_files = NFS4_STAB_MAX_STATES;
	t->max_opens_client = t->max_locks_client = NFS4_STAB_MAX_PER_CLIENT;
}

void nfs4_stab_limits(struct nfs4_stab *t, unsigned max_files, unsigned opens_per_client, unsigned locks_per_client)
{
	pthread_mutex_lock(&t->lock);
	if (max_files)
		t->max_files = max_files;
	if (opens_per_client)
		t->max_opens_client = opens_per_client;
	if (locks_per_client)
		t->max_locks_client = locks_per_client;
	pthread_mutex_unlock(&t->lock);
}

void nfs4_stab_counts(struct nfs4_stab *t, struct nfs4_stab_counts *out)
{
	*out = (struct nfs4_stab_counts){ 0 };
	pthread_mutex_lock(&t->lock);
	out->files = t->nfiles;
	out->revoked = atomic_load(&t->nrevoked);
	list_foreach_entry(c, &t->clients, const struct nfs4_stab_client, link) {
		out->opens += c->nopens;
		out->lock_owners += c->nlowners;
		out->lock_states += c->nlocks;
		out->open_owners += c->nstates - c->nopens - c->nlowners - c->nlocks;
	}
	pthread_mutex_unlock(&t->lock);
}

/* ---- stateid4.other ---- */

static void be32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static uint32_t be32_get(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool all_bytes(const uint8_t *p, uint8_t v)
{
	for (unsigned i = 0; i < NFS4_OTHER_SIZE; i++)
		if (p[i] != v)
			return false;
	return true;
}

enum nfs4_sid_kind nfs4_stateid_kind(const struct nfs4_stateid *sid, uint32_t minor)
{
	/* RFC 8881 §8.2.3: other all zeros or all ones is reserved. */
	if (all_bytes(sid->other, 0)) {
		if (sid->seqid == 0)
			return NFS4_SID_ANON;
		if (sid->seqid == 1 && minor >= 1)
			return NFS4_SID_CURRENT;
		return NFS4_SID_INVALID; /* incl. the invalid stateid {UINT32_MAX, 0} */
	}
	if (all_bytes(sid->other, 0xff))
		return sid->seqid == UINT32_MAX ? NFS4_SID_BYPASS : NFS4_SID_INVALID;
	return NFS4_SID_ORDINARY;
}

uint64_t nfs4_stateid_clientid(const struct nfs4_stateid *sid)
{
	return (uint64_t)be32_get(sid->other) << 32 | be32_get(sid->other + 4);
}

static uint32_t seqid_next(uint32_t s)
{
	return s == UINT32_MAX ? 1 : s + 1; /* RFC 8881 §8.2.2: 0 is never used */
}

/* ---- lookups ---- */

static struct nfs4_stab_client *client_find(struct nfs4_stab *t, uint64_t clientid, bool create)
{
	struct nfs4_stab_client *c;

	list_foreach_entry(known, &t->clients, struct nfs4_stab_client, link)
		if (known->clientid == clientid)
			return known;
	if (!create || !(c = calloc(1, sizeof(*c))))
		return NULL;
	c->clientid = clientid;
	list_init(&c->owners);
	list_init(&c->lowners);
	list_insert(&t->clients, &c->link);
	return c;
}

static struct nfs4_oowner *owner_find(struct nfs4_stab_client *c, const uint8_t *owner, uint32_t len)
{
	if (!c)
		return NULL;
	list_foreach_entry(o, &c->owners, struct nfs4_oowner, link)
		if (o->len == len && memcmp(o->owner, owner, len) == 0)
			return o;
	return NULL;
}

static uint32_t key_hash(const uint8_t *k, uint32_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ k[i]) * 16777619u;
	return h % NFS4_STAB_BUCKETS;
}

static struct nfs4_sfile *file_find(struct nfs4_stab *t, const uint8_t *key, uint32_t len)
{
	if (len > NFS4_STAB_FKEY_MAX)
		return NULL;
	list_foreach_entry(f, &t->files[key_hash(key, len)], struct nfs4_sfile, hash)
		if (f->len == len && memcmp(f->key, key, len) == 0)
			return f;
	return NULL;
}

static struct nfs4_open *open_find(struct nfs4_stab *t, const uint8_t other[NFS4_OTHER_SIZE])
{
	list_foreach_entry(op, &t->opens[be32_get(other + 8) % NFS4_STAB_BUCKETS], struct nfs4_open, hash)
		if (memcmp(op->sid.other, other, NFS4_OTHER_SIZE) == 0)
			return op;
	return NULL;
}

/* The expired ring's verdict on a stateid of purged client low: EXPIRED, ADMIN_REVOKED, or 0 (not there). */
static uint32_t was_expired(const struct nfs4_stab *t, uint32_t low)
{
	for (unsigned i = 0; i < NFS4_STAB_EXPIRED_RING; i++)
		if (t->expired[i] == low && low != 0)
			/* RFC 7530 §13.1.5.1: revoked by administrative interaction */
			return t->expired_admin[i] ? NFS4ERR_ADMIN_REVOKED : NFS4ERR_EXPIRED;
	return 0;
}

/* ---- revoked stateids (see nfs4_stateid.h) ---- */

static int revoked_find(const struct nfs4_stab *t, uint64_t clientid, const uint8_t other[NFS4_OTHER_SIZE])
{
	if (!atomic_load_explicit(&t->nrevoked, memory_order_relaxed))
		return -1;
	for (unsigned i = 0; i < NFS4_STAB_REVOKED_MAX; i++)
		if (t->revoked[i].clientid == clientid && !memcmp(t->revoked[i].other, other, NFS4_OTHER_SIZE))
			return (int)i;
	return -1;
}

/* Slot i forgets its stateid (freed, overwritten, or its client purged). */
static void revoked_drop(struct nfs4_stab *t, unsigned i)
{
	struct nfs4_stab_client *c;

	if (!t->revoked[i].clientid)
		return;
	c = client_find(t, t->revoked[i].clientid, false);
	if (c && c->nrevoked)
		c->nrevoked--;
	t->revoked[i].clientid = 0;
	atomic_fetch_sub(&t->nrevoked, 1);
}

/* st (an open or a lock stateid about to go by an administrator's act) answers ADMIN_REVOKED. */
static void revoked_add(struct nfs4_stab *t, struct nfs4_stab_client *c, const struct nfs4_open *st)
{
	struct nfs4_stab_revoked *r = &t->revoked[t->revoked_next];

	revoked_drop(t, t->revoked_next); /* the oldest gives way */
	r->clientid = c->clientid;
	memcpy(r->other, st->sid.other, NFS4_OTHER_SIZE);
	c->nrevoked++;
	atomic_fetch_add(&t->nrevoked, 1);
	t->revoked_next = (t->revoked_next + 1) % NFS4_STAB_REVOKED_MAX;
}

/* A client's state goes: so do its revoked entries. */
static void revoked_drop_client(struct nfs4_stab *t, const struct nfs4_stab_client *c)
{
	for (unsigned i = 0; c->nrevoked && i < NFS4_STAB_REVOKED_MAX; i++)
		if (t->revoked[i].clientid == c->clientid)
			revoked_drop(t, i);
}

uint32_t nfs4_stab_gone(struct nfs4_stab *t, uint64_t clientid, const struct nfs4_stateid *sid)
{
	uint32_t v;

	if (nfs4_stateid_kind(sid, 1) != NFS4_SID_ORDINARY || be32_get(sid->other) != t->boot ||
	    be32_get(sid->other + 4) != (uint32_t)clientid)
		return 0;
	pthread_mutex_lock(&t->lock);
	v = was_expired(t, (uint32_t)clientid);
	pthread_mutex_unlock(&t->lock);
	return v;
}

bool nfs4_stab_admin_revoked(struct nfs4_stab *t, uint64_t clientid)
{
	const struct nfs4_stab_client *c;
	bool any;

	if (!atomic_load_explicit(&t->nrevoked, memory_order_relaxed))
		return false;
	pthread_mutex_lock(&t->lock);
	c = client_find(t, clientid, false);
	any = c && c->nrevoked;
	pthread_mutex_unlock(&t->lock);
	return any;
}

/*
 * RFC 8881 §8.2.4 / RFC 7530 §9.1.4: an ordinary stateid of client clientid
 * (the caller's: see nfs4_stateid.h) to its open. Returns NFS4_OK with *out,
 * or STALE_STATEID, EXPIRED, BAD_STATEID, OLD_STATEID (*out is set whenever
 * the open exists and is clientid's).
 */
static uint32_t open_lookup(struct nfs4_stab *t, uint64_t clientid, const struct nfs4_stateid *sid, uint32_t minor,
			    struct nfs4_open **out)
{
	struct nfs4_open *op;

	if (nfs4_stateid_kind(sid, minor) != NFS4_SID_ORDINARY)
		return NFS4ERR_BAD_STATEID;
	/* RFC 8881 §15.1.5.5: STALE_STATEID is moot in 4.1 (SEQUENCE finds a
	 * restarted server first): another boot's stateid is just unknown there. */
	if (be32_get(sid->other) != t->boot)
		return minor >= 1 ? NFS4ERR_BAD_STATEID : NFS4ERR_STALE_STATEID;
	op = open_find(t, sid->other);
	/* RFC 8881 §8.2.2: a stateid is meaningful only to the client it was
	 * issued to; another client's is unknown to the caller (BAD_STATEID, as
	 * knfsd's find_stateid_by_type under cstate->clp), expired or not. */
	if (op && op->owner->cl->clientid != clientid)
		return NFS4ERR_BAD_STATEID;
	if (!op && revoked_find(t, clientid, sid->other) >= 0)
		return NFS4ERR_ADMIN_REVOKED; /* RFC 8881 §15.1.5.1 */
	if (!op) {
		uint32_t gone = be32_get(sid->other + 4) == (uint32_t)clientid ? was_expired(t, (uint32_t)clientid) : 0;

		return gone ? gone : NFS4ERR_BAD_STATEID;
	}
	*out = op; /* found, even when its seqid is wrong (4.0 owners record the error) */
	/* RFC 8881 §8.2.2: seqid 0 is "the current one" in 4.1+. */
	if (!(minor >= 1 && sid->seqid == 0) && sid->seqid != op->sid.seqid)
		return (int32_t)(sid->seqid - op->sid.seqid) < 0 ? NFS4ERR_OLD_STATEID : NFS4ERR_BAD_STATEID;
	return NFS4_OK;
}

/* An ordinary open stateid (not a lock stateid): as open_lookup(). */
static uint32_t open_lookup_open(struct nfs4_stab *t, uint64_t clientid, const struct nfs4_stateid *sid,
				 uint32_t minor, struct nfs4_open **out)
{
	uint32_t status = open_lookup(t, clientid, sid, minor, out);

	if (status != NFS4ERR_BAD_STATEID && status != NFS4ERR_STALE_STATEID && status != NFS4ERR_EXPIRED &&
	    status != NFS4ERR_ADMIN_REVOKED && (*out)->kind != NFS4_ST_OPEN) {
		*out = NULL;
		return NFS4ERR_BAD_STATEID;
	}
	return status;
}

/* ---- freeing ---- */

/* A file record without opens goes, with the table's reference to its open file. */
static void file_drop_unused(struct nfs4_stab *t, struct nfs4_sfile *f)
{
	if (!list_empty(&f->opens))
		return;
	list_remove(&f->hash);
	if (f->file)
		fops_of(t)->put(f->fs, f->file);
	t->nfiles--;
	free(f);
}

/* A lock stateid goes, and the backend releases its owner's locks on the file. */
static void lock_free(struct nfs4_stab *t, struct nfs4_open *lk)
{
	list_remove(&lk->hash);
	list_remove(&lk->lock_link);
	list_remove(&lk->lowner_link);
	if (lk->file->file && fops_of(t)->unlock)
		fops_of(t)->unlock(lk->file->fs, lk->file->file, lk->lowner->id);
	lk->lowner->cl->nlocks--;
	lk->lowner->cl->nstates--;
	t->nstates--;
	free(lk);
}

static void lowner_free(struct nfs4_stab *t, struct nfs4_lowner *lo);

/*
 * A lock stateid goes by CLOSE of its open, FREE_STATEID or a purge (RFC
 * 8881 §8.2.4: never by LOCKU alone); a 4.1+ lock owner left without any
 * goes with it, as knfsd's, so a client naming a new owner per process
 * does not use up its max-lock-owners-per-client (4.0 owners keep their
 * seqid until RELEASE_LOCKOWNER, RFC 7530 §16.37).
 */
static void lock_free_and_owner(struct nfs4_stab *t, struct nfs4_open *lk)
{
	struct nfs4_lowner *lo = lk->lowner;

	lock_free(t, lk);
	if (lo->v41 && list_empty(&lo->locks))
		lowner_free(t, lo);
}

static void open_free(struct nfs4_stab *t, struct nfs4_open *op)
{
	while (!list_empty(&op->locks))
		lock_free_and_owner(t, list_first_entry(&op->locks, struct nfs4_open, lock_link));
	list_remove(&op->hash);
	list_remove(&op->owner_link);
	list_remove(&op->file_link);
	file_drop_unused(t, op->file);
	op->owner->cl->nopens--;
	op->owner->cl->nstates--;
	t->nstates--;
	free(op);
}

static void owner_free(struct nfs4_stab *t, struct nfs4_oowner *o)
{
	while (!list_empty(&o->opens))
		open_free(t, list_first_entry(&o->opens, struct nfs4_open, owner_link));
	list_remove(&o->link);
	o->cl->nstates--;
	t->nstates--;
	free(o);
}

static void lowner_free(struct nfs4_stab *t, struct nfs4_lowner *lo)
{
	while (!list_empty(&lo->locks))
		lock_free(t, list_first_entry(&lo->locks, struct nfs4_open, lowner_link));
	list_remove(&lo->link);
	lo->cl->nlowners--;
	lo->cl->nstates--;
	t->nstates--;
	free(lo);
}

static void client_free(struct nfs4_stab *t, struct nfs4_stab_client *c)
{
	revoked_drop_client(t, c);
	while (!list_empty(&c->owners))
		owner_free(t, list_first_entry(&c->owners, struct nfs4_oowner, link));
	while (!list_empty(&c->lowners))
		lowner_free(t, list_first_entry(&c->lowners, struct nfs4_lowner, link));
	list_remove(&c->link);
	free(c);
}

void nfs4_stab_release(struct nfs4_stab *t)
{
	while (!list_empty(&t->clients))
		client_free(t, list_first_entry(&t->clients, struct nfs4_stab_client, link));
	pthread_mutex_destroy(&t->lock);
}

void nfs4_stab_purge_client(struct nfs4_stab *t, uint64_t clientid, enum nfs4_purge_why why)
{
	struct nfs4_stab_client *c;

	pthread_mutex_lock(&t->lock);
	c = client_find(t, clientid, false);
	if (c)
		client_free(t, c);
	if (why != NFS4_PURGE_GONE && c) { /* a client without state has no stateid to answer EXPIRED for */
		t->expired[t->expired_next] = (uint32_t)clientid;
		t->expired_admin[t->expired_next] = why == NFS4_PURGE_REVOKED;
		t->expired_next = (t->expired_next + 1) % NFS4_STAB_EXPIRED_RING;
	}
	pthread_mutex_unlock(&t->lock);
}

/* Every open of f (and their locks) goes; so does f, with its last open: f is not touched after. */
static unsigned file_purge(struct nfs4_stab *t, struct nfs4_sfile *f)
{
	unsigned n = 0;

	list_foreach_entry(op, &f->opens, struct nfs4_open, file_link) {
		/* RFC 8881 §15.1.5.1: revoked by the administrator, not simply unknown */
		revoked_add(t, op->owner->cl, op);
		list_foreach_entry(lk, &op->locks, struct nfs4_open, lock_link)
			revoked_add(t, op->owner->cl, lk);
		n++;
	}
	for (unsigned i = 0; i < n; i++)
		open_free(t, list_first_entry(&f->opens, struct nfs4_open, file_link));
	return n;
}

unsigned nfs4_stab_purge_files(struct nfs4_stab *t, bool (*match)(const uint8_t *key, uint32_t len, void *arg),
			       void *arg)
{
	unsigned n = 0;
	bool again;

	pthread_mutex_lock(&t->lock);
	for (unsigned b = 0; b < NFS4_STAB_BUCKETS; b++) {
		do { /* a purge frees the record the walk stands on: walk the chain again */
			again = false;
			list_foreach_entry(f, &t->files[b], struct nfs4_sfile, hash) {
				if (match(f->key, f->len, arg)) {
					n += file_purge(t, f);
					again = true;
					break;
				}
			}
		} while (again);
	}
	pthread_mutex_unlock(&t->lock);
	return n;
}

void nfs4_stab_client_state(struct nfs4_stab *t, uint64_t clientid, unsigned *opens, unsigned *locks)
{
	struct nfs4_stab_client *c;

	pthread_mutex_lock(&t->lock);
	c = client_find(t, clientid, false);
	*opens = c ? c->nopens : 0;
	*locks = c ? c->nlocks : 0;
	pthread_mutex_unlock(&t->lock);
}

unsigned nfs4_stab_client_count(struct nfs4_stab *t, uint64_t clientid)
{
	struct nfs4_stab_client *c;
	unsigned n;

	pthread_mutex_lock(&t->lock);
	c = client_find(t, clientid, false);
	n = c ? c->nstates : 0;
	pthread_mutex_unlock(&t->lock);
	return n;
}

/* ---- NFSv4.0 seqids ---- */

/* RFC 7530 §9.1.8: the last request again gets the last reply; the next one is new. */
static enum nfs4_seqid_action seq_verdict(const struct nfs4_seqstate *sq, uint32_t seqid, struct nfs4_seqid_replay *rp)
{
	if (!sq->valid)
		return NFS4_SEQID_NEW;
	if (seqid == sq->seqid) {
		/* A reply too long to have been kept (a LOCK4denied with a long owner): run it again. */
		if (sq->replay.len > NFS4_STAB_REPLAY_MAX)
			return NFS4_SEQID_NEW;
		*rp = sq->replay;
		return NFS4_SEQID_REPLAY;
	}
	if (seqid == sq->seqid + 1) /* RFC 7530 §9.1.3: 4.0 owner seqids wrap to 0 */
		return NFS4_SEQID_NEW;
	return NFS4_SEQID_ERROR;
}

static enum nfs4_seqid_action seqid_verdict(struct nfs4_stab *t, struct nfs4_oowner *o, uint32_t seqid,
					    struct nfs4_seqid_replay *rp, uint32_t *status)
{
	enum nfs4_seqid_action a;

	if (!o)
		return NFS4_SEQID_NEW;
	a = seq_verdict(&o->seq, seqid, rp);
	if (a != NFS4_SEQID_ERROR)
		return a;
	/* RFC 7530 §16.18.5: an unconfirmed owner's OPEN starts it over. */
	if (!o->confirmed) {
		owner_free(t, o);
		return NFS4_SEQID_NEW;
	}
	*status = NFS4ERR_BAD_SEQID;
	return NFS4_SEQID_ERROR;
}

enum nfs4_seqid_action nfs4_stab_seqid_check(struct nfs4_stab *t, uint64_t clientid, const uint8_t *owner,
					     uint32_t owner_len, uint32_t seqid, struct nfs4_seqid_replay *rp,
					     uint32_t *status)
{
	enum nfs4_seqid_action a;

	pthread_mutex_lock(&t->lock);
	a = seqid_verdict(t, owner_find(client_find(t, clientid, false), owner, owner_len), seqid, rp, status);
	pthread_mutex_unlock(&t->lock);
	return a;
}

/* The open owner a stateid names: its open's, or (RFC 7530 §9.1.8: a
 * retransmitted CLOSE is answered from the owner's last reply, the open gone;
 * pynfs CLOSE10, CLOSE12, RPLY9) the owner whose last CLOSE freed it. */
static struct nfs4_oowner *sid_owner(struct nfs4_stab *t, const struct nfs4_stateid *sid)
{
	struct nfs4_open *op = open_find(t, sid->other);
	struct nfs4_stab_client *c;

	if (op)
		return op->owner;
	c = client_find(t, nfs4_stateid_clientid(sid), false);
	if (!c)
		return NULL;
	list_foreach_entry(o, &c->owners, struct nfs4_oowner, link)
		if (memcmp(o->closed, sid->other, NFS4_OTHER_SIZE) == 0)
			return o;
	return NULL;
}

enum nfs4_seqid_action nfs4_stab_seqid_check_sid(struct nfs4_stab *t, const struct nfs4_stateid *sid,
						 uint32_t seqid, struct nfs4_seqid_replay *rp, uint32_t *status)
{
	enum nfs4_seqid_action a = NFS4_SEQID_NEW;
	struct nfs4_oowner *o;

	pthread_mutex_lock(&t->lock);
	if (nfs4_stateid_kind(sid, 0) == NFS4_SID_ORDINARY && be32_get(sid->other) == t->boot &&
	    (o = sid_owner(t, sid)) != NULL) {
		/* No restart for an owner named by a stateid: its OPEN_CONFIRM or CLOSE is out of order. */
		if (o->seq.valid && seqid != o->seq.seqid && seqid != o->seq.seqid + 1) {
			*status = NFS4ERR_BAD_SEQID;
			a = NFS4_SEQID_ERROR;
		} else {
			a = seqid_verdict(t, o, seqid, rp, status);
		}
	}
	/* Otherwise the operation itself answers the stateid's error. */
	pthread_mutex_unlock(&t->lock);
	return a;
}

/* RFC 7530 §9.1.7: these errors leave the seqid where it was. */
static bool seqid_advances(uint32_t status)
{
	switch (status) {
	case NFS4ERR_STALE_CLIENTID:
	case NFS4ERR_STALE_STATEID:
	case NFS4ERR_BAD_STATEID:
	case NFS4ERR_BAD_SEQID:
	case NFS4ERR_BADXDR:
	case NFS4ERR_RESOURCE:
	case NFS4ERR_NOFILEHANDLE:
	case NFS4ERR_MOVED:
		return false;
	default:
		return true;
	}
}

/* An owner's seqid and cached reply after an operation (RFC 7530 §9.1.8). */
static void seq_record(struct nfs4_seqstate *sq, uint32_t seqid, uint32_t status, const uint8_t *body, uint32_t len)
{
	if (!seqid_advances(status))
		return;
	sq->valid = true;
	sq->seqid = seqid;
	sq->replay.status = status;
	/* A body too long to keep (only LOCK4denied can be) is marked so: the
	 * retransmission then runs again (seq_verdict) rather than get a cut reply. */
	sq->replay.len = len <= NFS4_STAB_REPLAY_MAX ? len : UINT32_MAX;
	if (len && len <= NFS4_STAB_REPLAY_MAX)
		memcpy(sq->replay.body, body, len);
}

static void owner_record(struct nfs4_oowner *o, uint32_t seqid, uint32_t status, const uint8_t *body,
			 uint32_t len)
{
	if (o)
		seq_record(&o->seq, seqid, status, body, len);
}

void nfs4_stab_seqid_done(struct nfs4_stab *t, uint64_t clientid, const uint8_t *owner, uint32_t owner_len,
			  uint32_t seqid, uint32_t status, const uint8_t *body, uint32_t len)
{
	pthread_mutex_lock(&t->lock);
	owner_record(owner_find(client_find(t, clientid, false), owner, owner_len), seqid, status, body, len);
	pthread_mutex_unlock(&t->lock);
}

/* 4.0: OPEN_CONFIRM's, OPEN_DOWNGRADE's or CLOSE's reply (a stateid4 on success) cached. */
static void owner_record_sid(struct nfs4_oowner *o, struct nfs4_sid_seq sq, uint32_t status,
			     const struct nfs4_stateid *out)
{
	uint8_t body[4 + NFS4_OTHER_SIZE];

	if (sq.minor != 0)
		return;
	if (status != NFS4_OK) {
		owner_record(o, sq.seqid, status, NULL, 0);
		return;
	}
	be32_put(body, out->seqid);
	memcpy(body + 4, out->other, NFS4_OTHER_SIZE);
	owner_record(o, sq.seqid, status, body, sizeof(body));
}

/* ---- OPEN ---- */

/* RFC 8881 §9.7, RFC 7530 §9.9: share reservations. A deny refuses the access
 * of every OPEN, the denying owner's own upgrade included (RFC 7530 §16.16.5:
 * "an OPEN ... of a file that is denied ... NFS4ERR_SHARE_DENIED"; pynfs
 * OPEN21, OPEN25; as knfsd's fi_share_deny); a new deny is checked against
 * the access of other owners' opens (the owner's own open is upgraded). */
static bool share_conflict(const struct nfs4_sfile *f, const struct nfs4_oowner *self, uint32_t access,
			   uint32_t deny)
{
	if (!f)
		return false;
	list_foreach_entry(op, &f->opens, const struct nfs4_open, file_link)
		if ((op->deny & access) || (op->owner != self && (op->access & deny)))
			return true;
	return false;
}

static uint32_t bound_status(uint32_t minor)
{
	return minor == 0 ? NFS4ERR_RESOURCE : NFS4ERR_DELAY;
}

static bool room_for(const struct nfs4_stab *t, const struct nfs4_stab_client *c, unsigned n)
{
	return t->nstates + n <= NFS4_STAB_MAX_STATES && c->nstates + n <= NFS4_STAB_MAX_PER_CLIENT;
}

/* A new open of client c (new_file: of a file no one has open): within the descriptor bounds? */
static bool room_for_open(const struct nfs4_stab *t, const struct nfs4_stab_client *c, bool new_file)
{
	return c->nopens < t->max_opens_client && (!new_file || t->nfiles < t->max_files);
}

uint32_t nfs4_stab_open_room(struct nfs4_stab *t, uint64_t clientid, uint32_t minor)
{
	struct nfs4_stab_client *c;
	bool room;

	pthread_mutex_lock(&t->lock);
	c = client_find(t, clientid, false);
	room = c ? room_for(t, c, 2) && room_for_open(t, c, true)
		 : t->nstates + 2 <= NFS4_STAB_MAX_STATES && t->nfiles < t->max_files;
	pthread_mutex_unlock(&t->lock);
	/* RFC 7530 §13.1.1.4 (4.0) NFS4ERR_RESOURCE; RFC 8881 §15.1.1.3 NFS4ERR_DELAY in 4.1+ */
	return room ? NFS4_OK : bound_status(minor);
}

static struct nfs4_oowner *owner_new(struct nfs4_stab *t, struct nfs4_stab_client *c, const struct nfs4_open_req *rq)
{
	struct nfs4_oowner *o = calloc(1, sizeof(*o) + rq->owner_len);

	if (!o)
		return NULL;
	o->cl = c;
	o->confirmed = rq->minor >= 1; /* RFC 8881 §18.16.3: no OPEN_CONFIRM in 4.1 */
	o->len = rq->owner_len;
	memcpy(o->owner, rq->owner, rq->owner_len);
	list_init(&o->opens);
	list_insert(&c->owners, &o->link);
	c->nstates++;
	t->nstates++;
	return o;
}

static struct nfs4_sfile *file_new(struct nfs4_stab *t, const struct nfs4_open_req *rq)
{
	struct nfs4_sfile *f = calloc(1, sizeof(*f));
	uint32_t h = key_hash(rq->fkey, rq->fkey_len);

	if (!f)
		return NULL;
	f->len = rq->fkey_len;
	memcpy(f->key, rq->fkey, rq->fkey_len);
	list_init(&f->opens);
	list_insert(&t->files[h], &f->hash);
	t->nfiles++;
	return f;
}

/* A new open or lock stateid: a fresh stateid4.other of client cl, on its hash chain. */
static struct nfs4_open *stateid_new(struct nfs4_stab *t, const struct nfs4_stab_client *cl)
{
	struct nfs4_open *op = calloc(1, sizeof(*op));

	if (!op)
		return NULL;
	be32_put(op->sid.other, t->boot);
	be32_put(op->sid.other + 4, (uint32_t)cl->clientid);
	/* The counter's top bits are the delegation and layout tables' (nfs4_deleg.h, nfs4_layout.h). */
	do
		t->counter = (t->counter + 1) & ~(NFS4_STAB_DELEG_BIT | NFS4_STAB_LAYOUT_BIT);
	while (t->counter == 0);
	be32_put(op->sid.other + 8, t->counter);
	list_insert(&t->opens[t->counter % NFS4_STAB_BUCKETS], &op->hash);
	return op;
}

static struct nfs4_open *open_new(struct nfs4_stab *t, struct nfs4_oowner *o, struct nfs4_sfile *f)
{
	struct nfs4_open *op = stateid_new(t, o->cl);

	if (!op)
		return NULL;
	op->owner = o, op->file = f;
	op->sid.seqid = 0; /* the caller's upgrade makes it 1 */
	list_init(&op->locks);
	list_insert(&o->opens, &op->owner_link);
	list_insert(&f->opens, &op->file_link);
	o->cl->nopens++;
	o->cl->nstates++;
	t->nstates++;
	return op;
}

/* The file keeps the caller's open file if it has none, or one open for fewer modes. */
static bool file_take(struct nfs4_stab *t, struct nfs4_sfile *f, const struct nfs4_open_req *rq)
{
	if (!rq->file || (f->file && (f->file_modes | rq->file_modes) == f->file_modes))
		return false;
	if (f->file)
		fops_of(t)->put(f->fs, f->file);
	f->fs = rq->fs, f->file = rq->file, f->file_modes = rq->file_modes;
	return true;
}

/* o's open of f, if it has one (RFC 8881 §9.7: one per owner and file). */
static struct nfs4_open *open_of(struct nfs4_sfile *f, const struct nfs4_oowner *o)
{
	if (!f || !o)
		return NULL;
	list_foreach_entry(op, &f->opens, struct nfs4_open, file_link)
		if (op->owner == o)
			return op;
	return NULL;
}

static uint32_t open_locked(struct nfs4_stab *t, const struct nfs4_open_req *rq, struct nfs4_open_res *res)
{
	struct nfs4_stab_client *c = client_find(t, rq->clientid, true);
	struct nfs4_oowner *o = owner_find(c, rq->owner, rq->owner_len);
	struct nfs4_sfile *f = file_find(t, rq->fkey, rq->fkey_len);
	struct nfs4_open *op = NULL;

	if (!c)
		return bound_status(rq->minor);
	if (share_conflict(f, o, rq->access, rq->deny))
		return NFS4ERR_SHARE_DENIED; /* RFC 8881 §9.7 */
	op = open_of(f, o);
	res->new_open = !op;
	if (!op && (!room_for(t, c, o ? 1 : 2) || !room_for_open(t, c, !f)))
		return bound_status(rq->minor); /* RFC 8881 §15.1.1.3: DELAY (4.0: RESOURCE), this client only */
	if (!o && !(o = owner_new(t, c, rq)))
		return bound_status(rq->minor);
	if (!f && !(f = file_new(t, rq)))
		return bound_status(rq->minor);
	if (!op && !(op = open_new(t, o, f))) {
		file_drop_unused(t, f);
		return bound_status(rq->minor);
	}
	/* RFC 8881 §9.7: a second OPEN of the same owner and file upgrades its stateid. */
	op->access |= rq->access;
	op->deny |= rq->deny;
	op->access_modes |= (uint8_t)(1u << rq->access);
	op->deny_modes |= (uint8_t)(1u << rq->deny);
	op->sid.seqid = seqid_next(op->sid.seqid);
	res->sid = op->sid;
	res->confirm = !o->confirmed;
	res->file_taken = file_take(t, f, rq);
	return NFS4_OK;
}

uint32_t nfs4_stab_open(struct nfs4_stab *t, const struct nfs4_open_req *rq, struct nfs4_open_res *res)
{
	uint32_t status;

	memset(res, 0, sizeof(*res));
	if (rq->access == 0 || rq->access > NFS4_SHARE_ACCESS_BOTH || rq->deny > NFS4_SHARE_DENY_BOTH ||
	    rq->owner_len > NFS4_STAB_OWNER_MAX || rq->fkey_len == 0 || rq->fkey_len > NFS4_STAB_FKEY_MAX)
		return NFS4ERR_INVAL; /* RFC 8881 §18.16.3 */
	pthread_mutex_lock(&t->lock);
	status = open_locked(t, rq, res);
	pthread_mutex_unlock(&t->lock);
	return status;
}

/* ---- I/O ---- */

uint32_t nfs4_stab_check_io(struct nfs4_stab *t, uint64_t clientid, const struct nfs4_stateid *sid, uint32_t minor,
			    const uint8_t *fkey, uint32_t fkey_len, uint32_t access, struct nfs4_sid_io *io)
{
	struct nfs4_open *op;
	uint32_t status;

	pthread_mutex_lock(&t->lock);
	status = open_lookup(t, clientid, sid, minor, &op);
	if (status != NFS4_OK)
		goto out;
	if (op->kind == NFS4_ST_LOCK)
		op = op->parent; /* RFC 8881 §8.2.1: a lock stateid stands for its open too */
	/* RFC 7530 §9.1.4: a stateid for another file, or of an owner not yet confirmed. */
	if (op->file->len != fkey_len || memcmp(op->file->key, fkey, fkey_len) != 0 || !op->owner->confirmed) {
		status = NFS4ERR_BAD_STATEID;
		goto out;
	}
	/* RFC 8881 §9.1.2: WRITE needs write access; READ is allowed either way (as knfsd). */
	if ((access & NFS4_SHARE_ACCESS_WRITE) && !(op->access & NFS4_SHARE_ACCESS_WRITE)) {
		status = NFS4ERR_OPENMODE;
		goto out;
	}
	io->clientid = op->owner->cl->clientid;
	io->access = op->access, io->deny = op->deny;
	io->fs = op->file->fs, io->file = op->file->file;
	if (io->file)
		fops_of(t)->get(io->fs, io->file);
out:
	pthread_mutex_unlock(&t->lock);
	return status;
}

uint32_t nfs4_stab_check_anon(struct nfs4_stab *t, const uint8_t *fkey, uint32_t fkey_len, uint32_t access)
{
	bool conflict;

	pthread_mutex_lock(&t->lock);
	conflict = share_conflict(file_find(t, fkey, fkey_len), NULL, access, 0);
	pthread_mutex_unlock(&t->lock);
	/* RFC 7530 §9.1.4.3, §9.9: I/O with a special stateid against a deny is
	 * NFS4ERR_LOCKED (as knfsd's nfs4_share_conflict; pynfs OPEN23, OPEN27, WRT9). */
	return conflict ? NFS4ERR_LOCKED : NFS4_OK;
}

void nfs4_stab_file_others(struct nfs4_stab *t, const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid,
			   bool *open, bool *write)
{
	*open = *write = false;
	pthread_mutex_lock(&t->lock);
	struct nfs4_sfile *f = file_find(t, fkey, fkey_len);

	if (f)
		list_foreach_entry(op, &f->opens, const struct nfs4_open, file_link) {
			if (op->owner->cl->clientid == clientid)
				continue;
			*open = true;
			if (op->access & NFS4_SHARE_ACCESS_WRITE)
				*write = true;
		}
	pthread_mutex_unlock(&t->lock);
}

bool nfs4_stab_client_file_open(struct nfs4_stab *t, const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid)
{
	bool open = false;

	pthread_mutex_lock(&t->lock);
	struct nfs4_sfile *f = file_find(t, fkey, fkey_len);

	if (f)
		list_foreach_entry(op, &f->opens, const struct nfs4_open, file_link)
			if (op->owner->cl->clientid == clientid)
				open = true;
	pthread_mutex_unlock(&t->lock);
	return open;
}

/* ---- OPEN_CONFIRM, OPEN_DOWNGRADE, CLOSE ---- */

uint32_t nfs4_stab_confirm(struct nfs4_stab *t, const struct nfs4_stateid *sid, struct nfs4_sid_seq sq,
			   struct nfs4_stateid *out)
{
	struct nfs4_open *op = NULL;
	uint32_t status;

	pthread_mutex_lock(&t->lock);
	status = open_lookup_open(t, sq.clientid, sid, sq.minor, &op);
	if (status == NFS4_OK && op->owner->confirmed)
		status = NFS4ERR_BAD_STATEID; /* RFC 7530 §16.20.5: only for an unconfirmed owner */
	if (status == NFS4_OK) {
		op->owner->confirmed = true;
		op->sid.seqid = seqid_next(op->sid.seqid);
		*out = op->sid;
	}
	if (op)
		owner_record_sid(op->owner, sq, status, out);
	pthread_mutex_unlock(&t->lock);
	return status;
}

uint32_t nfs4_stab_downgrade(struct nfs4_stab *t, const struct nfs4_stateid *sid, struct nfs4_sid_seq sq,
			     uint32_t access, uint32_t deny, struct nfs4_stateid *out)
{
	struct nfs4_open *op = NULL;
	uint32_t status;

	pthread_mutex_lock(&t->lock);
	status = open_lookup_open(t, sq.clientid, sid, sq.minor, &op);
	if (status == NFS4_OK && !op->owner->confirmed)
		status = NFS4ERR_BAD_STATEID;
	/* RFC 8881 §18.18.3: subsets of what is held, each a mode once opened with. */
	if (status == NFS4_OK &&
	    (access == 0 || access > NFS4_SHARE_ACCESS_BOTH || deny > NFS4_SHARE_DENY_BOTH ||
	     (access & ~op->access) || (deny & ~op->deny) || !(op->access_modes & (1u << access)) ||
	     !(op->deny_modes & (1u << deny))))
		status = NFS4ERR_INVAL;
	if (status == NFS4_OK) {
		op->access = access, op->deny = deny;
		op->access_modes = (uint8_t)(1u << access);
		op->deny_modes = (uint8_t)(1u << deny);
		op->sid.seqid = seqid_next(op->sid.seqid);
		*out = op->sid;
	}
	if (op)
		owner_record_sid(op->owner, sq, status, out);
	pthread_mutex_unlock(&t->lock);
	return status;
}

uint32_t nfs4_stab_close(struct nfs4_stab *t, const struct nfs4_stateid *sid, struct nfs4_sid_seq sq,
			 struct nfs4_stateid *out)
{
	struct nfs4_open *op = NULL;
	uint32_t status;

	pthread_mutex_lock(&t->lock);
	status = open_lookup_open(t, sq.clientid, sid, sq.minor, &op);
	if (status == NFS4_OK) {
		*out = op->sid;
		out->seqid = seqid_next(out->seqid);
	}
	if (op)
		owner_record_sid(op->owner, sq, status, out);
	if (status == NFS4_OK) {
		memcpy(op->owner->closed, op->sid.other, NFS4_OTHER_SIZE);
		open_free(t, op); /* the owner stays (4.0: its seqid and replay are still needed) */
	}
	pthread_mutex_unlock(&t->lock);
	return status;
}

/* ---- TEST_STATEID, FREE_STATEID ---- */

uint32_t nfs4_stab_test(struct nfs4_stab *t, uint64_t clientid, const struct nfs4_stateid *sid)
{
	struct nfs4_open *op;
	uint32_t status;

	pthread_mutex_lock(&t->lock);
	/* RFC 8881 §18.48.3: another client's stateid is not this one's to test (open_lookup). */
	status = open_lookup(t, clientid, sid, 1, &op);
	pthread_mutex_unlock(&t->lock);
	return status;
}

uint32_t nfs4_stab_free(struct nfs4_stab *t, uint64_t clientid, const struct nfs4_stateid *sid)
{
	struct nfs4_open *op;
	uint32_t status;

	pthread_mutex_lock(&t->lock);
	status = open_lookup(t, clientid, sid, 1, &op);
	/* RFC 8881 §18.38.3: an open stateid is freed by CLOSE; a lock stateid here
	 * (the caller made sure its owner holds no lock on the file any more); a revoked one
	 * (§8.2.4, §18.46.3) is forgotten, which ends SEQ4_STATUS_ADMIN_STATE_REVOKED with the last. */
	if (status == NFS4ERR_ADMIN_REVOKED) {
		revoked_drop(t, (unsigned)revoked_find(t, clientid, sid->other));
		status = NFS4_OK;
	} else if (status == NFS4_OK && op->kind == NFS4_ST_OPEN)
		status = NFS4ERR_LOCKS_HELD;
	else if (status == NFS4_OK)
		lock_free_and_owner(t, op);
	pthread_mutex_unlock(&t->lock);
	return status;
}

/* ---- lock owners and lock stateids ---- */

static struct nfs4_lowner *lowner_find(struct nfs4_stab_client *c, const uint8_t *owner, uint32_t len)
{
	if (!c)
		return NULL;
	list_foreach_entry(lo, &c->lowners, struct nfs4_lowner, link)
		if (lo->len == len && memcmp(lo->owner, owner, len) == 0)
			return lo;
	return NULL;
}

static struct nfs4_lowner *lowner_new(struct nfs4_stab *t, struct nfs4_stab_client *c, const uint8_t *owner,
				      uint32_t len, uint32_t minor)
{
	struct nfs4_lowner *lo = calloc(1, sizeof(*lo) + len);

	if (!lo)
		return NULL;
	lo->cl = c;
	lo->v41 = minor >= 1;
	lo->id = NFS4_STAB_LOCK_ID_BIT | ++t->lock_ids;
	lo->len = len;
	memcpy(lo->owner, owner, len);
	list_init(&lo->locks);
	list_insert(&c->lowners, &lo->link);
	c->nlowners++;
	c->nstates++;
	t->nstates++;
	return lo;
}

/* A lock stateid of lo for the file of open op (RFC 8881 §8.2.1: one per lock owner and file). */
static struct nfs4_open *lock_new(struct nfs4_stab *t, struct nfs4_lowner *lo, struct nfs4_open *op)
{
	struct nfs4_open *lk = stateid_new(t, lo->cl);

	if (!lk)
		return NULL;
	lk->kind = NFS4_ST_LOCK;
	lk->owner = op->owner, lk->file = op->file, lk->parent = op, lk->lowner = lo;
	lk->sid.seqid = 0; /* the first LOCK makes it 1 */
	list_insert(&op->locks, &lk->lock_link);
	list_insert(&lo->locks, &lk->lowner_link);
	lo->cl->nlocks++;
	lo->cl->nstates++;
	t->nstates++;
	return lk;
}

static void lock_ref_fill(struct nfs4_stab *t, const struct nfs4_open *lk, struct nfs4_lock_ref *ref)
{
	ref->clientid = lk->lowner->cl->clientid;
	ref->owner_id = lk->lowner->id;
	ref->sid = lk->sid;
	ref->fs = lk->file->fs, ref->file = lk->file->file;
	if (ref->file)
		fops_of(t)->get(ref->fs, ref->file);
}

static bool same_file(const struct nfs4_open *op, const uint8_t *fkey, uint32_t fkey_len)
{
	return op->file->len == fkey_len && memcmp(op->file->key, fkey, fkey_len) == 0;
}

/* RFC 7530 §9.1.4.1: lo's lock stateid for open op, if it has one (a new owner has none). */
static struct nfs4_open *lock_of(struct nfs4_open *op, const struct nfs4_lowner *lo)
{
	if (!lo)
		return NULL;
	list_foreach_entry(lk, &op->locks, struct nfs4_open, lock_link)
		if (lk->lowner == lo)
			return lk;
	return NULL;
}

static uint32_t lock_new_locked(struct nfs4_stab *t, const struct nfs4_lock_req *rq, struct nfs4_lock_ref *ref)
{
	struct nfs4_stab_client *c;
	struct nfs4_lowner *lo;
	struct nfs4_open *op, *lk;
	/* RFC 8881 §18.10.3: the open is this client's (open_lookup), for this file, and confirmed. */
	uint32_t status = open_lookup_open(t, rq->clientid, &rq->sid, rq->minor, &op);

	if (status != NFS4_OK)
		return status;
	c = op->owner->cl;
	if (!same_file(op, rq->fkey, rq->fkey_len) || !op->owner->confirmed)
		return NFS4ERR_BAD_STATEID;
	lo = lowner_find(c, rq->owner, rq->owner_len);
	lk = lock_of(op, lo);
	/* A new lock stateid (and owner): within the client's share of lock descriptions too. */
	if (!lk && (!room_for(t, c, lo ? 1 : 2) || c->nlowners + c->nlocks + (lo ? 1 : 2) > t->max_locks_client))
		return bound_status(rq->minor);
	if (!lo && !(lo = lowner_new(t, c, rq->owner, rq->owner_len, rq->minor)))
		return bound_status(rq->minor);
	if (!lk && !(lk = lock_new(t, lo, op)))
		return bound_status(rq->minor);
	lock_ref_fill(t, lk, ref);
	return NFS4_OK;
}

uint32_t nfs4_stab_lock_new(struct nfs4_stab *t, const struct nfs4_lock_req *rq, struct nfs4_lock_ref *ref)
{
	uint32_t status;

	memset(ref, 0, sizeof(*ref));
	if (rq->owner_len > NFS4_STAB_OWNER_MAX)
		return NFS4ERR_INVAL;
	pthread_mutex_lock(&t->lock);
	status = lock_new_locked(t, rq, ref);
	pthread_mutex_unlock(&t->lock);
	return status;
}

uint32_t nfs4_stab_lock_find(struct nfs4_stab *t, uint64_t clientid, const struct nfs4_stateid *sid, uint32_t minor,
			     const uint8_t *fkey, uint32_t fkey_len, struct nfs4_lock_ref *ref)
{
	struct nfs4_open *lk;
	uint32_t status;

	memset(ref, 0, sizeof(*ref));
	pthread_mutex_lock(&t->lock);
	status = open_lookup(t, clientid, sid, minor, &lk);
	if (status == NFS4_OK && (lk->kind != NFS4_ST_LOCK || !same_file(lk, fkey, fkey_len)))
		status = NFS4ERR_BAD_STATEID;
	if (status == NFS4_OK)
		lock_ref_fill(t, lk, ref);
	pthread_mutex_unlock(&t->lock);
	return status;
}

uint32_t nfs4_stab_lock_find_any(struct nfs4_stab *t, uint64_t clientid, const struct nfs4_stateid *sid,
				 struct nfs4_lock_ref *ref)
{
	struct nfs4_open *lk;
	uint32_t status;

	memset(ref, 0, sizeof(*ref));
	pthread_mutex_lock(&t->lock);
	status = open_lookup(t, clientid, sid, 1, &lk);
	if (status == NFS4_OK && lk->kind != NFS4_ST_LOCK)
		status = NFS4ERR_BAD_STATEID;
	if (status == NFS4_OK)
		lock_ref_fill(t, lk, ref);
	pthread_mutex_unlock(&t->lock);
	return status;
}

uint32_t nfs4_stab_lock_bump(struct nfs4_stab *t, const struct nfs4_stateid *sid, struct nfs4_stateid *out)
{
	struct nfs4_open *lk;
	uint32_t status = NFS4ERR_BAD_STATEID;

	pthread_mutex_lock(&t->lock);
	lk = open_find(t, sid->other);
	if (lk && lk->kind == NFS4_ST_LOCK) {
		lk->sid.seqid = seqid_next(lk->sid.seqid); /* RFC 8881 §8.2.2 */
		*out = lk->sid;
		status = NFS4_OK;
	}
	pthread_mutex_unlock(&t->lock);
	return status;
}

/* The lock owners of f's lock stateids, up to max. */
static unsigned file_lock_owners(const struct nfs4_sfile *f, uint64_t *ids, unsigned max)
{
	unsigned n = 0;

	list_foreach_entry(op, &f->opens, const struct nfs4_open, file_link)
		list_foreach_entry(lk, &op->locks, const struct nfs4_open, lock_link) {
			if (n == max)
				return n;
			ids[n++] = lk->lowner->id;
		}
	return n;
}

unsigned nfs4_stab_file_lock_owners(struct nfs4_stab *t, const uint8_t *fkey, uint32_t fkey_len, uint64_t *ids,
				    unsigned max)
{
	struct nfs4_sfile *f;
	unsigned n = 0;

	pthread_mutex_lock(&t->lock);
	f = file_find(t, fkey, fkey_len);
	if (f)
		n = file_lock_owners(f, ids, max);
	pthread_mutex_unlock(&t->lock);
	return n;
}

uint64_t nfs4_stab_lock_owner_id(struct nfs4_stab *t, uint64_t clientid, const uint8_t *owner, uint32_t len)
{
	struct nfs4_lowner *lo;
	uint64_t id;

	pthread_mutex_lock(&t->lock);
	lo = lowner_find(client_find(t, clientid, false), owner, len);
	id = lo ? lo->id : 0;
	pthread_mutex_unlock(&t->lock);
	return id;
}

static const struct nfs4_lowner *lowner_by_id(const struct nfs4_stab *t, uint64_t id)
{
	list_foreach_entry(c, &t->clients, const struct nfs4_stab_client, link)
		list_foreach_entry(lo, &c->lowners, const struct nfs4_lowner, link)
			if (lo->id == id)
				return lo;
	return NULL;
}

bool nfs4_stab_lock_owner(struct nfs4_stab *t, uint64_t id, uint64_t *clientid, uint8_t *buf, uint32_t cap,
			  uint32_t *len)
{
	const struct nfs4_lowner *lo;

	pthread_mutex_lock(&t->lock);
	lo = lowner_by_id(t, id);
	if (lo) {
		*clientid = lo->cl->clientid;
		*len = lo->len <= cap ? lo->len : cap;
		memcpy(buf, lo->owner, *len);
	}
	pthread_mutex_unlock(&t->lock);
	return lo != NULL;
}

uint32_t nfs4_stab_release_lockowner(struct nfs4_stab *t, uint64_t clientid, const uint8_t *owner, uint32_t len)
{
	struct nfs4_lowner *lo;

	uint32_t status = NFS4_OK;

	pthread_mutex_lock(&t->lock);
	lo = lowner_find(client_find(t, clientid, false), owner, len);
	/* RFC 7530 §16.37.4: an owner still holding locks is NFS4ERR_LOCKS_HELD (pynfs RLOWN3, as knfsd). */
	if (lo && fops_of(t)->locked)
		list_foreach_entry(lk, &lo->locks, const struct nfs4_open, lowner_link)
			if (lk->file->file && fops_of(t)->locked(lk->file->fs, lk->file->file, lo->id))
				status = NFS4ERR_LOCKS_HELD;
	if (lo && status == NFS4_OK)
		lowner_free(t, lo);
	pthread_mutex_unlock(&t->lock);
	return status;
}

/* ---- NFSv4.0 lock-owner seqids (RFC 7530 §9.1.7, §16.10.5) ---- */

enum nfs4_seqid_action nfs4_stab_lock_seqid_check(struct nfs4_stab *t, const struct nfs4_stateid *lock_sid,
						  uint32_t seqid, struct nfs4_seqid_replay *rp, uint32_t *status)
{
	enum nfs4_seqid_action a = NFS4_SEQID_NEW;
	struct nfs4_open *lk;

	pthread_mutex_lock(&t->lock);
	if (nfs4_stateid_kind(lock_sid, 0) == NFS4_SID_ORDINARY && (lk = open_find(t, lock_sid->other)) != NULL &&
	    lk->kind == NFS4_ST_LOCK) {
		a = seq_verdict(&lk->lowner->seq, seqid, rp);
		if (a == NFS4_SEQID_ERROR)
			*status = NFS4ERR_BAD_SEQID;
	}
	pthread_mutex_unlock(&t->lock);
	return a;
}

void nfs4_stab_lock_seqid_done(struct nfs4_stab *t, uint64_t clientid, const uint8_t *owner, uint32_t owner_len,
			       uint32_t seqid, uint32_t status, const uint8_t *body, uint32_t len)
{
	struct nfs4_lowner *lo;

	pthread_mutex_lock(&t->lock);
	lo = lowner_find(client_find(t, clientid, false), owner, owner_len);
	if (lo)
		seq_record(&lo->seq, seqid, status, body, len);
	pthread_mutex_unlock(&t->lock);
}

void nfs4_stab_seqid_done_sid(struct nfs4_stab *t, const struct nfs4_stateid *sid, uint32_t seqid, uint32_t status,
			      const uint8_t *body, uint32_t len)
{
	struct nfs4_open *op;

	pthread_mutex_lock(&t->lock);
	op = nfs4_stateid_kind(sid, 0) == NFS4_SID_ORDINARY ? open_find(t, sid->other) : NULL;
	if (op)
		seq_record(op->kind == NFS4_ST_LOCK ? &op->lowner->seq : &op->owner->seq, seqid, status, body, len);
	pthread_mutex_unlock(&t->lock);
}
