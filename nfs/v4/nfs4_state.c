/*
 * nfs4_state.c - NFSv4 client records (4.0 and 4.1) and NFSv4.1 sessions (see nfs4_state.h for
 * the memory bounds, the locking and the slot state diagram). Lookups are
 * linear over at most max_clients records: simple and bounded,
 * enough for a foundation; a hash comes with the stateids.
 */
#include <stdlib.h>
#include <string.h>

#include "nfs/v4/nfs4_compound.h"
#include "nfs/v4/nfs4_const.h"
#include "nfs/v4/nfs4_state.h"
#include "nfs/v4/nfs4_stateid.h"

void nfs4_state_init(struct nfs4_state *st, uint32_t boot, uint64_t seed, uint32_t lease)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_init(&st->lock, NULL);
	st->boot = boot;
	st->next_id = 1;
	st->lease = lease;
	st->rnd = seed | 1;
	st->max_clients = NFS4_STATE_MAX_CLIENTS;
}

void nfs4_state_set_max_clients(struct nfs4_state *st, unsigned n)
{
	st->max_clients = n < 1 ? 1 : n > NFS4_STATE_MAX_CLIENTS ? NFS4_STATE_MAX_CLIENTS : n;
}

static void session_free(struct nfs4_state *st, struct nfs4_session *s)
{
	if (s)
		st->cache_bytes -= (size_t)s->nslots * s->fore.maxresponsesize_cached;
	free(s);
}

void nfs4_state_set_stab(struct nfs4_state *st, struct nfs4_stab *stab)
{
	st->stab = stab;
}

/* The record goes, and with it its open state (expired: its stateids say EXPIRED). */
static void client_free_why(struct nfs4_state *st, unsigned i, bool expired)
{
	struct nfs4_client *c = st->clients[i];

	if (st->stab)
		nfs4_stab_purge_client(st->stab, c->clientid, expired);
	if (st->freed)
		st->freed(c->clientid);
	for (unsigned k = 0; k < NFS4_STATE_MAX_SESSIONS; k++)
		session_free(st, c->sessions[k]);
	free(c);
	st->clients[i] = st->clients[--st->nclients];
	st->clients[st->nclients] = NULL;
}

static void client_free(struct nfs4_state *st, unsigned i)
{
	client_free_why(st, i, false);
}

/* A client that goes for good (not replaced by a new incarnation): its stable record too. */
static void client_forget(struct nfs4_state *st, unsigned i, bool expired)
{
	if (st->gone && st->clients[i]->confirmed)
		st->gone(st->clients[i]->owner, st->clients[i]->owner_len);
	if (expired && st->clients[i]->confirmed) {
		st->expired[st->expired_next] = st->clients[i]->clientid;
		st->expired_next = (st->expired_next + 1) % NFS4_STATE_EXPIRED_RING;
	}
	client_free_why(st, i, expired);
}

void nfs4_state_release(struct nfs4_state *st)
{
	while (st->nclients)
		client_free(st, 0);
	pthread_mutex_destroy(&st->lock);
}

/* 4.0 (SETCLIENTID) and 4.1 (EXCHANGE_ID) owners are apart. */
static int client_by_owner(const struct nfs4_state *st, const uint8_t *owner, uint32_t len, bool confirmed,
			   bool v40)
{
	for (unsigned i = 0; i < st->nclients; i++) {
		const struct nfs4_client *c = st->clients[i];
		if (c->confirmed == confirmed && c->v40 == v40 && c->owner_len == len && memcmp(c->owner, owner, len) == 0)
			return (int)i;
	}
	return -1;
}

static int client_by_id(const struct nfs4_state *st, uint64_t clientid)
{
	for (unsigned i = 0; i < st->nclients; i++)
		if (st->clients[i]->clientid == clientid)
			return (int)i;
	return -1;
}

static struct nfs4_session *session_by_id(const struct nfs4_state *st, const uint8_t id[NFS4_SESSIONID_SIZE],
					  unsigned *ci, unsigned *si)
{
	for (unsigned i = 0; i < st->nclients; i++)
		for (unsigned k = 0; k < NFS4_STATE_MAX_SESSIONS; k++) {
			struct nfs4_session *s = st->clients[i]->sessions[k];
			if (s && memcmp(s->id, id, NFS4_SESSIONID_SIZE) == 0) {
				*ci = i, *si = k;
				return s;
			}
		}
	return NULL;
}

static bool client_busy(const struct nfs4_client *c);

/*
 * A full table makes room: the oldest record that is unconfirmed or whose
 * lease ran out goes (RFC 7530 §9.6.3, RFC 8881 §8.4.3: a client past its
 * lease keeps its state only until another needs the resources; an
 * unconfirmed record holds none). false: every record is a confirmed client
 * within its lease (or busy), and the caller refuses (RESOURCE / DELAY).
 */
static bool client_evict(struct nfs4_state *st, uint64_t now)
{
	int victim = -1;

	for (unsigned i = 0; i < st->nclients; i++) {
		const struct nfs4_client *c = st->clients[i];
		bool expired = c->last_renew + st->lease < now && !client_busy(c);
		if ((!c->confirmed || expired) &&
		    (victim < 0 || c->last_renew < st->clients[victim]->last_renew))
			victim = (int)i;
	}
	if (victim < 0)
		return false;
	if (st->clients[victim]->confirmed)
		client_forget(st, (unsigned)victim, true);
	else
		client_free(st, (unsigned)victim);
	return true;
}

/* A new unconfirmed record; NULL when the table is full (and nothing can go) or memory is short. */
static struct nfs4_client *client_new(struct nfs4_state *st, const uint8_t verifier[8], const uint8_t *owner,
				      uint32_t len, uint64_t principal, uint64_t now)
{
	struct nfs4_client *c;

	if (st->nclients >= st->max_clients && !client_evict(st, now))
		return NULL;
	if (st->nclients >= st->max_clients || !(c = calloc(1, sizeof(*c))))
		return NULL;
	c->clientid = (uint64_t)st->boot << 32 | st->next_id++;
	memcpy(c->verifier, verifier, 8);
	memcpy(c->owner, owner, len);
	c->owner_len = len;
	c->principal = principal;
	c->last_renew = now;
	st->clients[st->nclients++] = c;
	return c;
}

/* RFC 8881 §18.35.5, without state protection (SP4_NONE): the cases by the
 * records the owner already has. */
/* Sessions or open state: what makes another principal's EXCHANGE_ID CLID_INUSE (§18.35.5 case 3). */
static bool client_has_state(const struct nfs4_state *st, const struct nfs4_client *c)
{
	for (unsigned k = 0; k < NFS4_STATE_MAX_SESSIONS; k++)
		if (c->sessions[k])
			return true;
	return st->stab && nfs4_stab_client_count(st->stab, c->clientid) > 0;
}

static uint32_t exchange_id_locked(struct nfs4_state *st, const uint8_t verifier[8], const uint8_t *owner,
				   uint32_t len, uint32_t flags, uint64_t principal, uint64_t now,
				   struct nfs4_exid_res *res)
{
	int conf = client_by_owner(st, owner, len, true, false), unconf = client_by_owner(st, owner, len, false, false);
	struct nfs4_client *c;

	if (flags & EXCHGID4_FLAG_UPD_CONFIRMED_REC_A) {
		/* Cases 6-9: an update needs a confirmed record of the same principal and verifier. */
		if (conf < 0)
			return NFS4ERR_NOENT;
		if (st->clients[conf]->principal != principal)
			return NFS4ERR_PERM; /* case 9 */
		if (memcmp(st->clients[conf]->verifier, verifier, 8) != 0)
			return NFS4ERR_NOT_SAME;
		c = st->clients[conf];
	} else if (conf >= 0 && st->clients[conf]->principal != principal) {
		/* Case 3, client collision: another principal's owner. In use while the record has sessions
		 * or state; otherwise it goes now and this one starts afresh (as knfsd). */
		if (client_has_state(st, st->clients[conf]))
			return NFS4ERR_CLID_INUSE;
		client_forget(st, (unsigned)conf, false);
		unconf = client_by_owner(st, owner, len, false, false); /* indices moved */
		if (unconf >= 0)
			client_free(st, (unsigned)unconf);
		c = client_new(st, verifier, owner, len, principal, now);
		if (!c)
			return NFS4ERR_DELAY;
	} else if (conf >= 0 && memcmp(st->clients[conf]->verifier, verifier, 8) == 0) {
		c = st->clients[conf]; /* case 2: the same client again */
	} else {
		/* Case 1 (new), 4 (an unconfirmed one is replaced), 5 (the client
		 * restarted: the confirmed one stays until CREATE_SESSION confirms this). */
		if (unconf >= 0)
			client_free(st, (unsigned)unconf);
		c = client_new(st, verifier, owner, len, principal, now);
		if (!c)
			return NFS4ERR_DELAY;
	}
	c->last_renew = now;
	res->clientid = c->clientid;
	res->sequenceid = c->cs_seqid + 1;
	res->flags = EXCHGID4_FLAG_USE_NON_PNFS | (c->confirmed ? EXCHGID4_FLAG_CONFIRMED_R : 0);
	return NFS4_OK;
}

uint32_t nfs4_exchange_id(struct nfs4_state *st, const uint8_t verifier[8], const uint8_t *owner,
			  uint32_t owner_len, uint32_t flags, uint64_t principal, uint64_t now, struct nfs4_exid_res *res)
{
	uint32_t status;

	/* RFC 8881 §18.35.1: co_ownerid is opaque<NFS4_OPAQUE_LIMIT>, and not empty. */
	if (owner_len == 0 || owner_len > NFS4_OWNER_MAX)
		return NFS4ERR_INVAL;
	pthread_mutex_lock(&st->lock);
	status = exchange_id_locked(st, verifier, owner, owner_len, flags, principal, now, res);
	pthread_mutex_unlock(&st->lock);
	return status;
}

static uint32_t clamp(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* RFC 8881 §18.36.3: the server may lower what the client asks for. */
static void chan_negotiate(struct nfs4_chan_attrs *a)
{
	a->headerpadsize = 0;
	/* Never raised: the client asked for at most this (pynfs CSESS26, SEQ6); too small for SEQUENCE at
	 * all is NFS4ERR_TOOSMALL before (nfs4_proc_session.c). */
	a->maxrequestsize = clamp(a->maxrequestsize, 0, NFS4_STATE_MAX_MSG);
	a->maxresponsesize = clamp(a->maxresponsesize, 0, NFS4_STATE_MAX_MSG);
	a->maxresponsesize_cached = clamp(a->maxresponsesize_cached, 0, NFS4_STATE_MAX_CACHED);
	a->maxoperations = clamp(a->maxoperations, 1, NFS4_MAX_OPS);
	a->maxrequests = clamp(a->maxrequests, 1, NFS4_STATE_MAX_SLOTS);
}

/* The server's unguessable values (session ids, 4.0 confirm verifiers): the
 * caller's CSPRNG (st->random: getrandom(2) in the daemon), else (unit tests)
 * a seeded xorshift, deterministic. */
static uint64_t rnd_next(struct nfs4_state *st)
{
	uint64_t r;

	if (st->random && st->random(&r, sizeof(r)))
		return r;
	st->rnd ^= st->rnd << 13;
	st->rnd ^= st->rnd >> 7;
	st->rnd ^= st->rnd << 17;
	return st->rnd;
}

/* A session with its slot table and reply cache in one allocation. */
static struct nfs4_session *session_new(struct nfs4_state *st, struct nfs4_client *c,
					const struct nfs4_chan_attrs *fore, const struct nfs4_chan_attrs *back)
{
	uint32_t n = fore->maxrequests, cached = fore->maxresponsesize_cached;
	size_t size = sizeof(struct nfs4_session) + n * sizeof(struct nfs4_slot) + (size_t)n * cached;
	struct nfs4_session *s = calloc(1, size);
	uint64_t r = rnd_next(st);

	if (!s)
		return NULL;
	s->slots = (struct nfs4_slot *)(s + 1);
	for (uint32_t i = 0; i < n; i++)
		s->slots[i].reply = (uint8_t *)(s->slots + n) + (size_t)i * cached;
	s->nslots = n;
	s->client = c;
	s->fore = *fore;
	s->back = *back;
	for (unsigned k = 0; k < 8; k++) {
		s->id[k] = (uint8_t)(c->clientid >> (56 - 8 * k));
		s->id[8 + k] = (uint8_t)(r >> (8 * k));
	}
	return s;
}

/* CREATE_SESSION confirms an unconfirmed record: the owner's old confirmed one goes (§18.35.5 case 5).
 * 4.0: the old incarnation's stateids then answer NFS4ERR_EXPIRED (RFC 7530 §9.6.2: its lease ended with
 * the client's restart; pynfs CID1, as knfsd, whose expire_client() purges them the same way). */
static void client_confirm(struct nfs4_state *st, struct nfs4_client *c)
{
	int old = client_by_owner(st, c->owner, c->owner_len, true, c->v40);

	if (old >= 0)
		client_free_why(st, (unsigned)old, c->v40);
	c->confirmed = true;
}

static uint32_t create_session_locked(struct nfs4_state *st, struct nfs4_client *c, uint32_t sequence,
				      struct nfs4_chan_attrs *fore, struct nfs4_chan_attrs *back,
				      uint8_t sessionid[NFS4_SESSIONID_SIZE])
{
	struct nfs4_session *s;
	unsigned k;

	/* RFC 8881 §18.36.4: csa_sequence against the client's one-slot cache. */
	if (sequence == c->cs_seqid && c->cs_cached) {
		memcpy(sessionid, c->cs_session, NFS4_SESSIONID_SIZE);
		*fore = c->cs_fore, *back = c->cs_back;
		return NFS4_OK;
	}
	if (sequence != c->cs_seqid + 1)
		return NFS4ERR_SEQ_MISORDERED;
	for (k = 0; k < NFS4_STATE_MAX_SESSIONS && c->sessions[k]; k++)
		;
	if (k == NFS4_STATE_MAX_SESSIONS)
		return NFS4ERR_DELAY; /* bounded per client */
	chan_negotiate(fore);
	chan_negotiate(back);
	/* The server-wide bound on reply caches: fewer slots near it, none left: DELAY. */
	if (fore->maxresponsesize_cached) {
		size_t room = (NFS4_STATE_CACHE_TOTAL - st->cache_bytes) / fore->maxresponsesize_cached;
		if (room == 0)
			return NFS4ERR_DELAY;
		if (fore->maxrequests > room)
			fore->maxrequests = (uint32_t)room;
	}
	s = session_new(st, c, fore, back);
	if (!s)
		return NFS4ERR_DELAY;
	st->cache_bytes += (size_t)s->nslots * s->fore.maxresponsesize_cached;
	c->sessions[k] = s;
	if (!c->confirmed)
		client_confirm(st, c);
	c->cs_seqid = sequence;
	c->cs_cached = true;
	memcpy(c->cs_session, s->id, NFS4_SESSIONID_SIZE);
	c->cs_fore = *fore, c->cs_back = *back;
	memcpy(sessionid, s->id, NFS4_SESSIONID_SIZE);
	return NFS4_OK;
}

uint32_t nfs4_create_session(struct nfs4_state *st, uint64_t clientid, uint32_t sequence,
			     struct nfs4_chan_attrs *fore, struct nfs4_chan_attrs *back, uint64_t principal, uint64_t now,
			     uint8_t sessionid[NFS4_SESSIONID_SIZE])
{
	uint32_t status = NFS4ERR_STALE_CLIENTID;
	int i;

	pthread_mutex_lock(&st->lock);
	i = client_by_id(st, clientid);
	/* RFC 8881 §18.36.4: the principal confirming a record must be the one that made it. */
	if (i >= 0 && !st->clients[i]->confirmed && st->clients[i]->principal != principal) {
		status = NFS4ERR_CLID_INUSE;
	} else if (i >= 0) {
		st->clients[i]->last_renew = now;
		status = create_session_locked(st, st->clients[i], sequence, fore, back, sessionid);
	}
	pthread_mutex_unlock(&st->lock);
	return status;
}

/* RFC 8881 §2.10.6.1, §18.46.3: the slot's verdict on sequenceid. */
static enum nfs4_seq_action slot_check(struct nfs4_slot *sl, uint32_t sequenceid, uint8_t *buf, uint32_t cap,
				       struct nfs4_seq_res *res)
{
	if (sequenceid == sl->seqid) {
		if (sl->in_progress)
			res->status = NFS4ERR_DELAY; /* the retry of a request still running */
		else if (!sl->cached || sl->len > cap)
			res->status = NFS4ERR_RETRY_UNCACHED_REP;
		else {
			memcpy(buf, sl->reply, sl->len);
			res->replay_len = sl->len;
			return NFS4_SEQ_REPLAY;
		}
		return NFS4_SEQ_ERROR;
	}
	if (sequenceid != sl->seqid + 1 || sl->in_progress) {
		res->status = NFS4ERR_SEQ_MISORDERED;
		return NFS4_SEQ_ERROR;
	}
	sl->seqid = sequenceid;
	sl->in_progress = true;
	sl->cached = false;
	sl->len = 0;
	return NFS4_SEQ_NEW;
}

enum nfs4_seq_action nfs4_sequence(struct nfs4_state *st, const uint8_t sessionid[NFS4_SESSIONID_SIZE],
				   uint32_t sequenceid, uint32_t slotid, uint32_t numops, size_t reqlen, uint64_t now,
				   uint8_t *replay_buf, uint32_t replay_cap, struct nfs4_seq_res *res)
{
	enum nfs4_seq_action act = NFS4_SEQ_ERROR;
	struct nfs4_session *s;
	unsigned ci, si;

	memset(res, 0, sizeof(*res));
	pthread_mutex_lock(&st->lock);
	s = session_by_id(st, sessionid, &ci, &si);
	if (!s) {
		res->status = NFS4ERR_BADSESSION;
	} else if (slotid >= s->nslots) {
		res->status = NFS4ERR_BADSLOT;
	} else if (numops > s->fore.maxoperations) {
		res->status = NFS4ERR_TOO_MANY_OPS; /* RFC 8881 §2.10.6.4 */
	} else if (reqlen > s->fore.maxrequestsize) {
		res->status = NFS4ERR_REQ_TOO_BIG; /* RFC 8881 §2.10.6.4, §18.36.3 ca_maxrequestsize */
	} else {
		s->client->last_renew = now; /* RFC 8881 §8.3: SEQUENCE renews the lease */
		act = slot_check(&s->slots[slotid], sequenceid, replay_buf, replay_cap, res);
		res->highest_slotid = res->target_highest_slotid = s->nslots - 1;
		res->maxresponsesize = s->fore.maxresponsesize;
		res->maxresponsesize_cached = s->fore.maxresponsesize_cached;
		res->clientid = s->client->clientid;
	}
	pthread_mutex_unlock(&st->lock);
	return act;
}

void nfs4_slot_done(struct nfs4_state *st, const uint8_t sessionid[NFS4_SESSIONID_SIZE], uint32_t slotid,
		    bool cachethis, const uint8_t *reply, uint32_t len)
{
	struct nfs4_session *s;
	unsigned ci, si;

	pthread_mutex_lock(&st->lock);
	s = session_by_id(st, sessionid, &ci, &si);
	if (s && slotid < s->nslots && s->slots[slotid].in_progress) {
		struct nfs4_slot *sl = &s->slots[slotid];
		sl->in_progress = false;
		sl->cached = cachethis && len <= s->fore.maxresponsesize_cached;
		sl->len = sl->cached ? len : 0;
		if (sl->cached)
			memcpy(sl->reply, reply, len);
	}
	pthread_mutex_unlock(&st->lock);
}

/*
 * Client ID and session maintenance by another principal than the one that
 * made the client ID (RFC 8881 §2.10.8.3: what a forged session id or client
 * id would let an attacker do; §15.1.6.4, and §15.2's lists for
 * DESTROY_SESSION and DESTROY_CLIENTID: NFS4ERR_WRONG_CRED). rnfsd offers
 * only SP4_NONE, under which the RFC asks nothing, so this is knfsd's
 * SP4_MACH_CRED rule (nfsd4_mach_creds_match) applied always, with
 * AUTH_SYS's uid and gid as the principal (its same_creds()).
 */
static bool principal_ok(const struct nfs4_client *c, uint64_t principal)
{
	return c->principal == principal;
}

uint32_t nfs4_destroy_session(struct nfs4_state *st, const uint8_t sessionid[NFS4_SESSIONID_SIZE],
			      uint64_t principal)
{
	struct nfs4_session *s;
	unsigned ci, si;
	uint32_t status = NFS4ERR_BADSESSION; /* RFC 8881 §18.37.3 */

	pthread_mutex_lock(&st->lock);
	s = session_by_id(st, sessionid, &ci, &si);
	if (s && !principal_ok(st->clients[ci], principal)) {
		status = NFS4ERR_WRONG_CRED;
	} else if (s) {
		st->clients[ci]->sessions[si] = NULL;
		session_free(st, s);
		status = NFS4_OK;
	}
	pthread_mutex_unlock(&st->lock);
	return status;
}

uint32_t nfs4_destroy_clientid(struct nfs4_state *st, uint64_t clientid, uint64_t principal)
{
	uint32_t status = NFS4ERR_STALE_CLIENTID;
	int i;

	pthread_mutex_lock(&st->lock);
	i = client_by_id(st, clientid);
	if (i >= 0 && !principal_ok(st->clients[i], principal)) {
		status = NFS4ERR_WRONG_CRED;
	} else if (i >= 0) {
		status = NFS4_OK;
		/* RFC 8881 §18.50.3: not while it has sessions. */
		for (unsigned k = 0; k < NFS4_STATE_MAX_SESSIONS; k++)
			if (st->clients[i]->sessions[k])
				status = NFS4ERR_CLIENTID_BUSY;
		if (status == NFS4_OK)
			client_forget(st, (unsigned)i, false);
	}
	pthread_mutex_unlock(&st->lock);
	return status;
}

uint32_t nfs4_reclaim_complete(struct nfs4_state *st, uint64_t clientid)
{
	uint32_t status = NFS4ERR_STALE_CLIENTID;
	int i;

	pthread_mutex_lock(&st->lock);
	i = client_by_id(st, clientid);
	if (i >= 0) {
		/* RFC 8881 §18.51.3: once per client (the whole-server form). */
		status = st->clients[i]->reclaim_complete ? NFS4ERR_COMPLETE_ALREADY : NFS4_OK;
		st->clients[i]->reclaim_complete = true;
	}
	pthread_mutex_unlock(&st->lock);
	return status;
}

bool nfs4_client_may_lock(struct nfs4_state *st, uint64_t clientid)
{
	bool ok = true;
	int i;

	pthread_mutex_lock(&st->lock);
	i = client_by_id(st, clientid);
	if (i >= 0)
		ok = st->clients[i]->v40 || st->clients[i]->reclaim_complete;
	pthread_mutex_unlock(&st->lock);
	return ok;
}

bool nfs4_client_owner(struct nfs4_state *st, uint64_t clientid, uint8_t *owner, uint32_t *len)
{
	int i;

	pthread_mutex_lock(&st->lock);
	i = client_by_id(st, clientid);
	if (i >= 0) {
		*len = st->clients[i]->owner_len;
		memcpy(owner, st->clients[i]->owner, *len);
	}
	pthread_mutex_unlock(&st->lock);
	return i >= 0;
}

uint32_t nfs4_session_client(struct nfs4_state *st, const uint8_t sessionid[NFS4_SESSIONID_SIZE], uint64_t principal,
			     uint64_t *clientid)
{
	struct nfs4_session *s;
	unsigned ci, si;
	uint32_t status = NFS4ERR_BADSESSION;

	pthread_mutex_lock(&st->lock);
	s = session_by_id(st, sessionid, &ci, &si);
	if (s) {
		*clientid = s->client->clientid;
		status = principal_ok(s->client, principal) ? NFS4_OK : NFS4ERR_WRONG_CRED;
	}
	pthread_mutex_unlock(&st->lock);
	return status;
}

bool nfs4_client_cb40(struct nfs4_state *st, uint64_t clientid, struct nfs4_cb_info *cb)
{
	int i;
	bool ok;

	pthread_mutex_lock(&st->lock);
	i = client_by_id(st, clientid);
	ok = i >= 0 && st->clients[i]->v40 && st->clients[i]->confirmed;
	if (ok)
		*cb = st->clients[i]->cb;
	pthread_mutex_unlock(&st->lock);
	return ok;
}

void nfs4_state_counts(struct nfs4_state *st, unsigned *clients, unsigned *sessions)
{
	pthread_mutex_lock(&st->lock);
	*clients = st->nclients;
	*sessions = 0;
	for (unsigned i = 0; i < st->nclients; i++)
		for (unsigned k = 0; k < NFS4_STATE_MAX_SESSIONS; k++)
			*sessions += st->clients[i]->sessions[k] != NULL;
	pthread_mutex_unlock(&st->lock);
}

static bool client_busy(const struct nfs4_client *c)
{
	for (unsigned k = 0; k < NFS4_STATE_MAX_SESSIONS; k++) {
		const struct nfs4_session *s = c->sessions[k];
		for (uint32_t i = 0; s && i < s->nslots; i++)
			if (s->slots[i].in_progress)
				return true;
	}
	return false;
}

unsigned nfs4_state_expire(struct nfs4_state *st, uint64_t now)
{
	unsigned n = 0;

	pthread_mutex_lock(&st->lock);
	for (unsigned i = 0; i < st->nclients;) {
		const struct nfs4_client *c = st->clients[i];
		/* RFC 8881 §8.3: a lease not renewed within lease_time ends; a
		 * client with a request running is not expired under it. */
		if (c->last_renew + st->lease < now && !client_busy(c)) {
			client_forget(st, i, true);
			n++;
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&st->lock);
	return n;
}

/* ---- NFSv4.0 client ids (RFC 7530 §9.1.1, §16.33, §16.34) ---- */

static void confirm_new(struct nfs4_state *st, uint8_t confirm[8])
{
	uint64_t r = rnd_next(st);

	memcpy(confirm, &r, 8);
}

static uint32_t setclientid_locked(struct nfs4_state *st, const uint8_t verifier[8], const uint8_t *id,
				   uint32_t len, const struct nfs4_cb_info *cb, uint64_t principal, uint64_t now,
				   uint64_t *clientid, uint8_t confirm[8], struct nfs4_cb_info *inuse)
{
	int conf = client_by_owner(st, id, len, true, true), unconf = client_by_owner(st, id, len, false, true);
	struct nfs4_client *c;

	/* RFC 7530 §16.33.5: another principal's id whose confirmed record holds state: the id is in
	 * use (NFS4ERR_CLID_INUSE, as knfsd; pynfs CID2a), the reply naming the record's callback
	 * address (§16.33.2 client_using). */
	if (conf >= 0 && st->clients[conf]->principal != principal && client_has_state(st, st->clients[conf])) {
		if (inuse)
			*inuse = st->clients[conf]->cb;
		return NFS4ERR_CLID_INUSE;
	}
	/* RFC 7530 §16.33.5: any unconfirmed record of this id is replaced. */
	if (unconf >= 0)
		client_free(st, (unsigned)unconf);
	conf = client_by_owner(st, id, len, true, true); /* indices moved */
	if (conf >= 0 && memcmp(st->clients[conf]->verifier, verifier, 8) == 0) {
		/* The same incarnation: a callback update, confirmed later with this clientid. */
		c = st->clients[conf];
		c->upd_pending = true;
		c->upd_cb = *cb;
		confirm_new(st, c->upd_confirm);
		memcpy(confirm, c->upd_confirm, 8);
		*clientid = c->clientid;
		return NFS4_OK;
	}
	/* A new client, or a rebooted one (another verifier): a new clientid; the
	 * confirmed record and its state stay until SETCLIENTID_CONFIRM. */
	c = client_new(st, verifier, id, len, principal, now);
	if (!c)
		return NFS4ERR_RESOURCE;
	c->v40 = true;
	c->cb = *cb;
	confirm_new(st, c->confirm);
	memcpy(confirm, c->confirm, 8);
	*clientid = c->clientid;
	return NFS4_OK;
}

uint32_t nfs4_setclientid(struct nfs4_state *st, const uint8_t verifier[8], const uint8_t *id, uint32_t id_len,
			  const struct nfs4_cb_info *cb, uint64_t principal, uint64_t now, uint64_t *clientid,
			  uint8_t confirm[8], struct nfs4_cb_info *inuse)
{
	uint32_t status;

	/* RFC 7530 §16.33.1: nfs_client_id4.id is opaque<NFS4_OPAQUE_LIMIT>. */
	if (id_len == 0 || id_len > NFS4_OWNER_MAX)
		return NFS4ERR_INVAL;
	pthread_mutex_lock(&st->lock);
	status = setclientid_locked(st, verifier, id, id_len, cb, principal, now, clientid, confirm, inuse);
	pthread_mutex_unlock(&st->lock);
	return status;
}

static uint32_t setclientid_confirm_locked(struct nfs4_state *st, struct nfs4_client *c,
					   const uint8_t confirm[8], uint64_t now)
{
	if (c->confirmed && c->upd_pending && memcmp(c->upd_confirm, confirm, 8) == 0) {
		/* RFC 7530 §16.34.5: the callback update takes effect. */
		c->cb = c->upd_cb;
		memcpy(c->confirm, c->upd_confirm, 8);
		c->upd_pending = false;
	} else if (memcmp(c->confirm, confirm, 8) != 0) {
		return NFS4ERR_STALE_CLIENTID; /* no record with this clientid and verifier */
	} else if (!c->confirmed) {
		/* The old incarnation (a rebooted client) goes with its state. */
		client_confirm(st, c);
	}
	/* else: a retransmission of the confirmation, answered the same. */
	c->last_renew = now;
	return NFS4_OK;
}

uint32_t nfs4_setclientid_confirm(struct nfs4_state *st, uint64_t clientid, const uint8_t confirm[8],
				  uint64_t now)
{
	uint32_t status = NFS4ERR_STALE_CLIENTID;
	int i;

	pthread_mutex_lock(&st->lock);
	i = client_by_id(st, clientid);
	if (i >= 0 && st->clients[i]->v40)
		status = setclientid_confirm_locked(st, st->clients[i], confirm, now);
	pthread_mutex_unlock(&st->lock);
	return status;
}

uint32_t nfs4_renew(struct nfs4_state *st, uint64_t clientid, uint64_t now)
{
	uint32_t status = NFS4ERR_STALE_CLIENTID;
	int i;

	pthread_mutex_lock(&st->lock);
	i = client_by_id(st, clientid);
	/* RFC 7530 §16.29.4: an unknown or unconfirmed clientid is STALE_CLIENTID. */
	if (i >= 0 && st->clients[i]->confirmed) {
		st->clients[i]->last_renew = now;
		status = NFS4_OK;
	}
	/* RFC 7530 §16.29.5, §13.1.5.3: a client whose lease ran out and whose state went is told
	 * NFS4ERR_EXPIRED (pynfs RENEW3), not taken for a client of another boot. */
	for (unsigned k = 0; i < 0 && k < NFS4_STATE_EXPIRED_RING; k++)
		if (st->expired[k] == clientid && clientid != 0)
			status = NFS4ERR_EXPIRED;
	pthread_mutex_unlock(&st->lock);
	return status;
}
