/*
 * nfs4_clients.c - NFSv4 client records (4.0 and 4.1) and NFSv4.1 sessions (see nfs4_clients.h for
 * the memory bounds, the locking and the slot state diagram). Lookups are
 * linear over at most max_clients records: simple and bounded.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "nfs/v4/compound/nfs4_compound.h"
#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/state/nfs4_clients.h"
#include "nfs/v4/state/nfs4_stateid.h"

/* Unlock, after making the stable records of the clients forgotten meanwhile durable (one
 * gone_flush for all of them: a mass expiry is not one fdatasync per client under the lock). */
static void state_unlock(struct nfs4_ctab *st)
{
	if (st->gone_pending && st->gone_flush)
		st->gone_flush();
	st->gone_pending = false;
	pthread_mutex_unlock(&st->lock);
}

void nfs4_ctab_init(struct nfs4_ctab *st, uint32_t boot, uint64_t seed, uint32_t lease)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_init(&st->lock, NULL);
	st->boot = boot;
	st->next_id = 1;
	st->lease = lease;
	st->rnd = seed | 1;
	st->max_clients = NFS4_STATE_MAX_CLIENTS;
	st->cache_total = NFS4_STATE_CACHE_TOTAL;
}

void nfs4_ctab_set_shares(struct nfs4_ctab *st, unsigned per_host, unsigned per_principal)
{
	st->max_per_host = per_host;
	st->max_per_principal = per_principal;
}

void nfs4_ctab_set_cache_total(struct nfs4_ctab *st, size_t bytes)
{
	st->cache_total = bytes == 0 ? NFS4_STATE_CACHE_TOTAL : bytes < NFS4_STATE_CACHE_MIN ? NFS4_STATE_CACHE_MIN : bytes;
}

void nfs4_host_key(const struct sockaddr *sa, uint8_t host[16])
{
	memset(host, 0, 16);
	if (sa && sa->sa_family == AF_INET) {
		host[10] = host[11] = 0xff;
		memcpy(host + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa && sa->sa_family == AF_INET6) {
		memcpy(host, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

void nfs4_ctab_set_max_clients(struct nfs4_ctab *st, unsigned n)
{
	st->max_clients = n < 1 ? 1 : n > NFS4_STATE_MAX_CLIENTS ? NFS4_STATE_MAX_CLIENTS : n;
}

static void session_free(struct nfs4_ctab *st, struct nfs4_session *s)
{
	if (s)
		st->cache_bytes -= (size_t)s->nslots * s->fore.maxresponsesize_cached;
	free(s);
}

void nfs4_ctab_set_stab(struct nfs4_ctab *st, struct nfs4_stab *stab)
{
	st->stab = stab;
}

/* The record goes, and with it its open state (its stateids then say what why says: nfs4_stateid.h). */
static void client_free_why(struct nfs4_ctab *st, unsigned i, enum nfs4_purge_why why)
{
	struct nfs4_client *c = st->clients[i];

	if (st->stab)
		nfs4_stab_purge_client(st->stab, c->clientid, why);
	if (st->freed)
		st->freed(c->clientid);
	for (unsigned k = 0; k < NFS4_STATE_MAX_SESSIONS; k++)
		session_free(st, c->sessions[k]);
	free(c);
	st->clients[i] = st->clients[--st->nclients];
	st->clients[st->nclients] = NULL;
}

static void client_free(struct nfs4_ctab *st, unsigned i)
{
	client_free_why(st, i, NFS4_PURGE_GONE);
}

/* A client that goes for good (not replaced by a new incarnation): its stable record too. */
static void client_forget(struct nfs4_ctab *st, unsigned i, enum nfs4_purge_why why)
{
	if (st->gone && st->clients[i]->confirmed) {
		st->gone(st->clients[i]->owner, st->clients[i]->owner_len);
		st->gone_pending = true;
	}
	if (why != NFS4_PURGE_GONE && st->clients[i]->confirmed) {
		st->expired[st->expired_next] = st->clients[i]->clientid;
		st->expired_next = (st->expired_next + 1) % NFS4_STATE_EXPIRED_RING;
	}
	client_free_why(st, i, why);
}

void nfs4_ctab_release(struct nfs4_ctab *st)
{
	while (st->nclients)
		client_free(st, 0);
	pthread_mutex_destroy(&st->lock);
}

/* 4.0 (SETCLIENTID) and 4.1 (EXCHANGE_ID) owners are apart. */
static int client_by_owner(const struct nfs4_ctab *st, const uint8_t *owner, uint32_t len, bool confirmed,
			   bool v40)
{
	for (unsigned i = 0; i < st->nclients; i++) {
		const struct nfs4_client *c = st->clients[i];
		if (c->confirmed == confirmed && c->v40 == v40 && c->owner_len == len && memcmp(c->owner, owner, len) == 0)
			return (int)i;
	}
	return -1;
}

static int client_by_id(const struct nfs4_ctab *st, uint64_t clientid)
{
	for (unsigned i = 0; i < st->nclients; i++)
		if (st->clients[i]->clientid == clientid)
			return (int)i;
	return -1;
}

static struct nfs4_session *session_by_id(const struct nfs4_ctab *st, const uint8_t id[NFS4_SESSIONID_SIZE],
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

/* The records a bound counts: all, those made from the asker's host, or by its principal. */
enum share_kind { SHARE_TABLE, SHARE_HOST, SHARE_PRINCIPAL };

static bool in_share(const struct nfs4_client *c, enum share_kind k, const struct nfs4_who *who)
{
	if (k == SHARE_HOST)
		return memcmp(c->host, who->host, 16) == 0;
	if (k == SHARE_PRINCIPAL)
		return c->principal == who->principal;
	return true;
}

/*
 * A full table (or a host's or principal's full share) makes room: the
 * oldest record of that share that is unconfirmed or whose lease ran out goes
 * (RFC 7530 §9.6.3, RFC 8881 §8.4.3: a client past its lease keeps its state
 * only until another needs the resources; an unconfirmed record holds none).
 * false: every such record is a confirmed client within its lease (or busy),
 * and the caller refuses (RESOURCE / DELAY).
 */
static bool client_evict(struct nfs4_ctab *st, uint64_t now, enum share_kind k, const struct nfs4_who *who)
{
	int victim = -1;

	for (unsigned i = 0; i < st->nclients; i++) {
		const struct nfs4_client *c = st->clients[i];
		bool expired = c->last_renew + st->lease < now && !client_busy(c);
		if ((!c->confirmed || expired) && in_share(c, k, who) &&
		    (victim < 0 || c->last_renew < st->clients[victim]->last_renew))
			victim = (int)i;
	}
	if (victim < 0)
		return false;
	if (st->clients[victim]->confirmed)
		client_forget(st, (unsigned)victim, NFS4_PURGE_EXPIRED);
	else
		client_free(st, (unsigned)victim);
	return true;
}

/* Records of a share, the owner's own left out: a restarted client's new record replaces them
 * (RFC 8881 §18.35.5 case 5, RFC 7530 §16.33.5), so they never keep it out. */
static unsigned share_count(const struct nfs4_ctab *st, enum share_kind k, const struct nfs4_who *who,
			    const uint8_t *owner, uint32_t len)
{
	unsigned n = 0;

	for (unsigned i = 0; i < st->nclients; i++) {
		const struct nfs4_client *c = st->clients[i];
		n += in_share(c, k, who) && !(c->owner_len == len && memcmp(c->owner, owner, len) == 0);
	}
	return n;
}

static const uint8_t host_unknown[16];

/* Room for one more record of who: within its host's and its principal's shares, then the table. */
static bool client_room(struct nfs4_ctab *st, const struct nfs4_who *who, const uint8_t *owner, uint32_t len,
			uint64_t now)
{
	unsigned host_max = st->max_per_host ? st->max_per_host : st->max_clients / 2 ? st->max_clients / 2 : 1;

	if (memcmp(who->host, host_unknown, 16) != 0)
		while (share_count(st, SHARE_HOST, who, owner, len) >= host_max)
			if (!client_evict(st, now, SHARE_HOST, who))
				return false;
	if (st->max_per_principal)
		while (share_count(st, SHARE_PRINCIPAL, who, owner, len) >= st->max_per_principal)
			if (!client_evict(st, now, SHARE_PRINCIPAL, who))
				return false;
	if (st->nclients >= st->max_clients && !client_evict(st, now, SHARE_TABLE, who))
		return false;
	return st->nclients < st->max_clients;
}

/* A new unconfirmed record; NULL when the table or who's share is full (and nothing can go) or memory is short. */
static struct nfs4_client *client_new(struct nfs4_ctab *st, const uint8_t verifier[8], const uint8_t *owner,
				      uint32_t len, const struct nfs4_who *who, uint64_t now)
{
	struct nfs4_client *c;

	if (!client_room(st, who, owner, len, now)) {
		st->refused++;
		return NULL;
	}
	if (!(c = calloc(1, sizeof(*c))))
		return NULL;
	c->clientid = (uint64_t)st->boot << 32 | st->next_id++;
	memcpy(c->verifier, verifier, 8);
	memcpy(c->owner, owner, len);
	c->owner_len = len;
	c->principal = who->principal;
	memcpy(c->host, who->host, 16);
	c->last_renew = now;
	st->clients[st->nclients++] = c;
	return c;
}

/* RFC 8881 §18.35.5, without state protection (SP4_NONE): the cases by the
 * records the owner already has. */
/* Sessions or open state: what makes another principal's EXCHANGE_ID CLID_INUSE (§18.35.5 case 3). */
static bool client_has_state(const struct nfs4_ctab *st, const struct nfs4_client *c)
{
	for (unsigned k = 0; k < NFS4_STATE_MAX_SESSIONS; k++)
		if (c->sessions[k])
			return true;
	return st->stab && nfs4_stab_client_count(st->stab, c->clientid) > 0;
}

static uint32_t exchange_id_locked(struct nfs4_ctab *st, const uint8_t verifier[8], const uint8_t *owner,
				   uint32_t len, uint32_t flags, const struct nfs4_who *who, uint64_t now,
				   struct nfs4_exid_res *res)
{
	uint64_t principal = who->principal;
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
		client_forget(st, (unsigned)conf, NFS4_PURGE_GONE);
		unconf = client_by_owner(st, owner, len, false, false); /* indices moved */
		if (unconf >= 0)
			client_free(st, (unsigned)unconf);
		c = client_new(st, verifier, owner, len, who, now);
		if (!c)
			return NFS4ERR_DELAY; /* RFC 8881 §15.1.1.3: the share frees when a record goes */
	} else if (conf >= 0 && memcmp(st->clients[conf]->verifier, verifier, 8) == 0) {
		c = st->clients[conf]; /* case 2: the same client again */
	} else {
		/* Case 1 (new), 4 (an unconfirmed one is replaced), 5 (the client
		 * restarted: the confirmed one stays until CREATE_SESSION confirms this). */
		if (unconf >= 0)
			client_free(st, (unsigned)unconf);
		c = client_new(st, verifier, owner, len, who, now);
		if (!c)
			return NFS4ERR_DELAY; /* RFC 8881 §15.1.1.3: the share frees when a record goes */
	}
	c->last_renew = now;
	res->clientid = c->clientid;
	res->sequenceid = c->cs_seqid + 1;
	res->flags = EXCHGID4_FLAG_USE_NON_PNFS | (c->confirmed ? EXCHGID4_FLAG_CONFIRMED_R : 0);
	return NFS4_OK;
}

uint32_t nfs4_exchange_id(struct nfs4_ctab *st, const uint8_t verifier[8], const uint8_t *owner,
			  uint32_t owner_len, uint32_t flags, uint64_t principal, uint64_t now, struct nfs4_exid_res *res)
{
	struct nfs4_who who = { .principal = principal };

	return nfs4_exchange_id_who(st, verifier, owner, owner_len, flags, &who, now, res);
}

uint32_t nfs4_exchange_id_who(struct nfs4_ctab *st, const uint8_t verifier[8], const uint8_t *owner,
			      uint32_t owner_len, uint32_t flags, const struct nfs4_who *who, uint64_t now,
			      struct nfs4_exid_res *res)
{
	uint32_t status;

	/* RFC 8881 §18.35.1: co_ownerid is opaque<NFS4_OPAQUE_LIMIT>, and not empty. */
	if (owner_len == 0 || owner_len > NFS4_OWNER_MAX)
		return NFS4ERR_INVAL;
	pthread_mutex_lock(&st->lock);
	status = exchange_id_locked(st, verifier, owner, owner_len, flags, who, now, res);
	state_unlock(st);
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
static uint64_t rnd_next(struct nfs4_ctab *st)
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
static struct nfs4_session *session_new(struct nfs4_ctab *st, struct nfs4_client *c,
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
 * the client's restart; pynfs CID1, as knfsd, whose expire_client() purges them the same way).
 * RFC 8881 §8.4.3: a client is recorded in stable storage before it can hold state; -1 (nothing
 * changed) when its record cannot be written, so no confirmed client is ever unable to reclaim. */
static int client_confirm(struct nfs4_ctab *st, struct nfs4_client *c)
{
	int old;

	if (st->stable && st->stable(c->owner, c->owner_len) != 0)
		return -1;
	old = client_by_owner(st, c->owner, c->owner_len, true, c->v40);
	if (old >= 0)
		client_free_why(st, (unsigned)old, c->v40 ? NFS4_PURGE_EXPIRED : NFS4_PURGE_GONE);
	c->confirmed = true;
	return 0;
}

static size_t client_cache(const struct nfs4_client *c)
{
	size_t n = 0;

	for (unsigned k = 0; k < NFS4_STATE_MAX_SESSIONS; k++)
		if (c->sessions[k])
			n += (size_t)c->sessions[k]->nslots * c->sessions[k]->fore.maxresponsesize_cached;
	return n;
}

/* What every client (and every free entry of the table) is owed of the reply-cache budget: half of it. */
static size_t cache_share(const struct nfs4_ctab *st)
{
	return st->cache_total / 2 / st->max_clients;
}

/*
 * Bytes of reply cache client c may still be granted. Every other record, and
 * every free entry of the table, keeps at least its share set aside, so a
 * client that comes last still finds its own; beyond its share a client
 * borrows from what is left, at most a sixteenth of the budget. (Invariant:
 * the sum over the table of max(held, share) plus the free entries' shares
 * stays within cache_total.)
 */
static size_t cache_room(const struct nfs4_ctab *st, const struct nfs4_client *c)
{
	size_t share = cache_share(st), held = client_cache(c), others, mine;

	others = st->nclients < st->max_clients ? (size_t)(st->max_clients - st->nclients) * share : 0;
	for (unsigned i = 0; i < st->nclients; i++) {
		size_t h = st->clients[i] == c ? 0 : client_cache(st->clients[i]);
		others += st->clients[i] == c ? 0 : h > share ? h : share;
	}
	mine = st->cache_total > others ? st->cache_total - others : 0;
	if (mine > share + st->cache_total / 16)
		mine = share + st->cache_total / 16;
	return mine > held ? mine - held : 0;
}

/* RFC 8881 §2.10.12: a session unused for a lease may be destroyed. Those of clients holding more
 * than their share go first, to give what they borrowed back. How many went. */
static unsigned cache_reclaim(struct nfs4_ctab *st, const struct nfs4_client *asker, uint64_t now)
{
	size_t share = cache_share(st);
	unsigned n = 0;

	for (unsigned i = 0; i < st->nclients; i++) {
		struct nfs4_client *c = st->clients[i];
		for (unsigned k = 0; c != asker && k < NFS4_STATE_MAX_SESSIONS && client_cache(c) > share; k++) {
			struct nfs4_session *s = c->sessions[k];
			bool busy = false;
			for (uint32_t j = 0; s && j < s->nslots; j++)
				busy |= s->slots[j].in_progress;
			if (!s || busy || s->last_used + st->lease >= now)
				continue;
			if (st->session_freed)
				st->session_freed(s->id);
			c->sessions[k] = NULL;
			session_free(st, s);
			n++;
		}
	}
	st->reclaimed += n;
	return n;
}

/* RFC 8881 §18.36.3: "the server MAY decrease" ca_maxrequests and ca_maxresponsesize_cached: a grant
 * beyond what c may still hold has fewer slots, and then (one slot left) a smaller cached reply,
 * down to none (its cachethis replies are then REP_TOO_BIG_TO_CACHE, §2.10.6.4), never a refusal. */
static void cache_grant(struct nfs4_ctab *st, const struct nfs4_client *c, struct nfs4_chan_attrs *fore,
			uint64_t now)
{
	size_t room = cache_room(st, c);

	if ((size_t)fore->maxrequests * fore->maxresponsesize_cached <= room)
		return;
	if (cache_reclaim(st, c, now))
		room = cache_room(st, c);
	if (room / fore->maxresponsesize_cached < fore->maxrequests)
		fore->maxrequests = (uint32_t)(room / fore->maxresponsesize_cached);
	if (fore->maxrequests == 0) {
		fore->maxrequests = 1;
		fore->maxresponsesize_cached = (uint32_t)room;
	}
}

static uint32_t create_session_locked(struct nfs4_ctab *st, struct nfs4_client *c, uint32_t sequence,
				      struct nfs4_chan_attrs *fore, struct nfs4_chan_attrs *back, uint64_t now,
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
	/* RFC 8881 §15.2 lists NFS4ERR_NOSPC for CREATE_SESSION: no room to record the client stably. */
	if (!c->confirmed && client_confirm(st, c) != 0)
		return NFS4ERR_NOSPC;
	chan_negotiate(fore);
	chan_negotiate(back);
	if (fore->maxresponsesize_cached)
		cache_grant(st, c, fore, now);
	s = session_new(st, c, fore, back);
	if (!s)
		return NFS4ERR_DELAY;
	s->last_used = now;
	st->cache_bytes += (size_t)s->nslots * s->fore.maxresponsesize_cached;
	c->sessions[k] = s;
	c->cs_seqid = sequence;
	c->cs_cached = true;
	memcpy(c->cs_session, s->id, NFS4_SESSIONID_SIZE);
	c->cs_fore = *fore, c->cs_back = *back;
	memcpy(sessionid, s->id, NFS4_SESSIONID_SIZE);
	return NFS4_OK;
}

uint32_t nfs4_create_session(struct nfs4_ctab *st, uint64_t clientid, uint32_t sequence,
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
		status = create_session_locked(st, st->clients[i], sequence, fore, back, now, sessionid);
	}
	state_unlock(st);
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
			res->replay_xprtsec = sl->xprtsec;
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

enum nfs4_seq_action nfs4_sequence(struct nfs4_ctab *st, const uint8_t sessionid[NFS4_SESSIONID_SIZE],
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
		s->last_used = now;
		act = slot_check(&s->slots[slotid], sequenceid, replay_buf, replay_cap, res);
		res->highest_slotid = res->target_highest_slotid = s->nslots - 1;
		res->maxresponsesize = s->fore.maxresponsesize;
		res->maxresponsesize_cached = s->fore.maxresponsesize_cached;
		res->clientid = s->client->clientid;
	}
	state_unlock(st);
	return act;
}

void nfs4_slot_done(struct nfs4_ctab *st, const uint8_t sessionid[NFS4_SESSIONID_SIZE], uint32_t slotid,
		    bool cachethis, const uint8_t *reply, uint32_t len, uint32_t xprtsec)
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
		sl->xprtsec = xprtsec;
		if (sl->cached)
			memcpy(sl->reply, reply, len);
	}
	state_unlock(st);
}

/*
 * Client ID and session maintenance by another principal than the one that
 * made the client ID (RFC 8881 §2.10.8.3: what a forged session id or client
 * id would let an attacker do; §15.1.6.4, and §15.2's lists for
 * DESTROY_SESSION and DESTROY_CLIENTID: NFS4ERR_WRONG_CRED). rnfsd offers
 * only SP4_NONE, under which the RFC asks nothing, so this is knfsd's
 * SP4_MACH_CRED rule (nfsd4_mach_creds_match) applied always, with
 * AUTH_SYS's uid and gid, or the RPCSEC_GSS principal's name, as the
 * principal (its same_creds(); nfs4_principal()).
 */
static bool principal_ok(const struct nfs4_client *c, uint64_t principal)
{
	return c->principal == principal;
}

uint32_t nfs4_destroy_session(struct nfs4_ctab *st, const uint8_t sessionid[NFS4_SESSIONID_SIZE],
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
	state_unlock(st);
	return status;
}

uint32_t nfs4_destroy_clientid(struct nfs4_ctab *st, uint64_t clientid, uint64_t principal)
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
			client_forget(st, (unsigned)i, NFS4_PURGE_GONE);
	}
	state_unlock(st);
	return status;
}

uint32_t nfs4_reclaim_complete(struct nfs4_ctab *st, uint64_t clientid)
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
	state_unlock(st);
	return status;
}

bool nfs4_client_may_lock(struct nfs4_ctab *st, uint64_t clientid)
{
	bool ok = true;
	int i;

	pthread_mutex_lock(&st->lock);
	i = client_by_id(st, clientid);
	if (i >= 0)
		ok = st->clients[i]->v40 || st->clients[i]->reclaim_complete;
	state_unlock(st);
	return ok;
}

bool nfs4_client_has_sessions(struct nfs4_ctab *st, uint64_t clientid)
{
	bool v41;
	int i;

	pthread_mutex_lock(&st->lock);
	i = client_by_id(st, clientid);
	v41 = i >= 0 && !st->clients[i]->v40;
	state_unlock(st);
	return v41;
}

bool nfs4_client_owner(struct nfs4_ctab *st, uint64_t clientid, uint8_t *owner, uint32_t *len)
{
	int i;

	pthread_mutex_lock(&st->lock);
	i = client_by_id(st, clientid);
	if (i >= 0) {
		*len = st->clients[i]->owner_len;
		memcpy(owner, st->clients[i]->owner, *len);
	}
	state_unlock(st);
	return i >= 0;
}

uint32_t nfs4_session_client(struct nfs4_ctab *st, const uint8_t sessionid[NFS4_SESSIONID_SIZE], uint64_t principal,
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
	state_unlock(st);
	return status;
}

bool nfs4_client_cb40(struct nfs4_ctab *st, uint64_t clientid, struct nfs4_cb_info *cb)
{
	int i;
	bool ok;

	pthread_mutex_lock(&st->lock);
	i = client_by_id(st, clientid);
	ok = i >= 0 && st->clients[i]->v40 && st->clients[i]->confirmed;
	if (ok)
		*cb = st->clients[i]->cb;
	state_unlock(st);
	return ok;
}

void nfs4_ctab_counts(struct nfs4_ctab *st, unsigned *clients, unsigned *sessions)
{
	pthread_mutex_lock(&st->lock);
	*clients = st->nclients;
	*sessions = 0;
	for (unsigned i = 0; i < st->nclients; i++)
		for (unsigned k = 0; k < NFS4_STATE_MAX_SESSIONS; k++)
			*sessions += st->clients[i]->sessions[k] != NULL;
	state_unlock(st);
}

unsigned nfs4_ctab_brief(struct nfs4_ctab *st, struct nfs4_client_brief *out, unsigned max)
{
	unsigned n = 0;

	pthread_mutex_lock(&st->lock);
	for (unsigned i = 0; i < st->nclients && n < max; i++, n++) {
		const struct nfs4_client *c = st->clients[i];

		out[n] = (struct nfs4_client_brief){ .clientid = c->clientid, .v40 = c->v40,
						     .confirmed = c->confirmed, .last_renew = c->last_renew };
		memcpy(out[n].host, c->host, sizeof(out[n].host));
		for (unsigned k = 0; k < NFS4_STATE_MAX_SESSIONS; k++)
			out[n].sessions += c->sessions[k] != NULL;
	}
	state_unlock(st);
	return n;
}

void nfs4_ctab_gauges(struct nfs4_ctab *st, struct nfs4_ctab_gauges *g)
{
	pthread_mutex_lock(&st->lock);
	g->cache_bytes = st->cache_bytes;
	g->cache_total = st->cache_total;
	g->refused = st->refused;
	g->reclaimed = st->reclaimed;
	state_unlock(st);
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

unsigned nfs4_ctab_expire(struct nfs4_ctab *st, uint64_t now)
{
	unsigned n = 0, batch;

	/* In batches, the lock let go between them: other clients' calls are not held up for the
	 * whole of a mass expiry (each client's state is purged, its files closed, its locks released). */
	do {
		batch = 0;
		pthread_mutex_lock(&st->lock);
		for (unsigned i = 0; i < st->nclients && batch < NFS4_STATE_EXPIRE_BATCH;) {
			const struct nfs4_client *c = st->clients[i];
			/* RFC 8881 §8.3: a lease not renewed within lease_time ends; a
			 * client with a request running is not expired under it. */
			if (c->last_renew + st->lease < now && !client_busy(c)) {
				client_forget(st, i, NFS4_PURGE_EXPIRED);
				batch++;
			} else {
				i++;
			}
		}
		state_unlock(st);
		n += batch;
		if (batch == NFS4_STATE_EXPIRE_BATCH)
			sched_yield();
	} while (batch == NFS4_STATE_EXPIRE_BATCH);
	return n;
}

unsigned nfs4_ctab_revoke(struct nfs4_ctab *st, uint64_t clientid, const uint8_t host[16], unsigned *busy)
{
	unsigned n = 0;

	*busy = 0;
	pthread_mutex_lock(&st->lock);
	for (unsigned i = 0; i < st->nclients;) {
		const struct nfs4_client *c = st->clients[i];
		bool match = clientid ? c->clientid == clientid : host && !memcmp(c->host, host, sizeof(c->host));

		if (!match || client_busy(c)) {
			*busy += match;
			i++;
			continue;
		}
		/* As if its lease had ended (RFC 8881 §8.3; knfsd's clients/N/ctl "expire"): its state
		 * goes, its stable record goes (no reclaim after a restart); its stateids say
		 * ADMIN_REVOKED (RFC 7530 §13.1.5.1: revoked by administrative interaction). */
		client_forget(st, i, NFS4_PURGE_REVOKED);
		n++;
	}
	state_unlock(st);
	return n;
}

/* ---- NFSv4.0 client ids (RFC 7530 §9.1.1, §16.33, §16.34) ---- */

static void confirm_new(struct nfs4_ctab *st, uint8_t confirm[8])
{
	uint64_t r = rnd_next(st);

	memcpy(confirm, &r, 8);
}

static uint32_t setclientid_locked(struct nfs4_ctab *st, const uint8_t verifier[8], const uint8_t *id,
				   uint32_t len, const struct nfs4_cb_info *cb, const struct nfs4_who *who, uint64_t now,
				   uint64_t *clientid, uint8_t confirm[8], struct nfs4_cb_info *inuse)
{
	uint64_t principal = who->principal;
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
	if (conf >= 0 && memcmp(st->clients[conf]->verifier, verifier, 8) == 0 &&
	    st->clients[conf]->principal == principal) {
		/* The same incarnation: a callback update, confirmed later with this clientid. Only by the
		 * record's principal (RFC 7530 §16.34.5 would refuse another's confirmation of it): another
		 * principal's SETCLIENTID of a record without state, same verifier or not, is a new client
		 * below, which replaces the record once confirmed (libnfs names two contexts of one process
		 * made in the same second alike, verifier included). */
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
	c = client_new(st, verifier, id, len, who, now);
	if (!c)
		return NFS4ERR_RESOURCE; /* RFC 7530 §13.2: SETCLIENTID's answer to exhausted resources */
	c->v40 = true;
	c->cb = *cb;
	confirm_new(st, c->confirm);
	memcpy(confirm, c->confirm, 8);
	*clientid = c->clientid;
	return NFS4_OK;
}

uint32_t nfs4_setclientid(struct nfs4_ctab *st, const uint8_t verifier[8], const uint8_t *id, uint32_t id_len,
			  const struct nfs4_cb_info *cb, uint64_t principal, uint64_t now, uint64_t *clientid,
			  uint8_t confirm[8], struct nfs4_cb_info *inuse)
{
	struct nfs4_who who = { .principal = principal };

	return nfs4_setclientid_who(st, verifier, id, id_len, cb, &who, now, clientid, confirm, inuse);
}

uint32_t nfs4_setclientid_who(struct nfs4_ctab *st, const uint8_t verifier[8], const uint8_t *id,
			      uint32_t id_len, const struct nfs4_cb_info *cb, const struct nfs4_who *who,
			      uint64_t now, uint64_t *clientid, uint8_t confirm[8], struct nfs4_cb_info *inuse)
{
	uint32_t status;

	/* RFC 7530 §16.33.1: nfs_client_id4.id is opaque<NFS4_OPAQUE_LIMIT>. */
	if (id_len == 0 || id_len > NFS4_OWNER_MAX)
		return NFS4ERR_INVAL;
	pthread_mutex_lock(&st->lock);
	status = setclientid_locked(st, verifier, id, id_len, cb, who, now, clientid, confirm, inuse);
	state_unlock(st);
	return status;
}

/* RFC 7530 §16.33.5, again at the confirmation (as knfsd): the id's confirmed record of another
 * principal than c's has taken state since c's SETCLIENTID, so the id is still in use. */
static bool confirm_collides(const struct nfs4_ctab *st, const struct nfs4_client *c)
{
	int old = client_by_owner(st, c->owner, c->owner_len, true, true);

	return old >= 0 && st->clients[old]->principal != c->principal && client_has_state(st, st->clients[old]);
}

static uint32_t setclientid_confirm_locked(struct nfs4_ctab *st, struct nfs4_client *c,
					   const uint8_t confirm[8], uint64_t principal, uint64_t now)
{
	/* RFC 7530 §16.34.5: the SETCLIENTID_CONFIRM must come from the principal of the record it
	 * names (the unconfirmed record, or the confirmed one a callback update or a retransmission
	 * names); from another, NFS4ERR_CLID_INUSE and no action, whatever the verifier (as knfsd's
	 * same_creds() check, which comes first). */
	if (c->principal != principal)
		return NFS4ERR_CLID_INUSE;
	if (c->confirmed && c->upd_pending && memcmp(c->upd_confirm, confirm, 8) == 0) {
		/* RFC 7530 §16.34.5: the callback update takes effect. */
		c->cb = c->upd_cb;
		memcpy(c->confirm, c->upd_confirm, 8);
		c->upd_pending = false;
	} else if (memcmp(c->confirm, confirm, 8) != 0) {
		return NFS4ERR_STALE_CLIENTID; /* no record with this clientid and verifier */
	} else if (!c->confirmed && confirm_collides(st, c)) {
		return NFS4ERR_CLID_INUSE;
	} else if (!c->confirmed && client_confirm(st, c) != 0) {
		/* RFC 7530 §13.2: SETCLIENTID_CONFIRM's NFS4ERR_RESOURCE; no stable record, no confirmation
		 * (RFC 7530 §9.6.3.4). Else the old incarnation (a rebooted client) went with its state. */
		return NFS4ERR_RESOURCE;
	}
	/* else: a retransmission of the confirmation, answered the same. */
	c->last_renew = now;
	return NFS4_OK;
}

uint32_t nfs4_setclientid_confirm(struct nfs4_ctab *st, uint64_t clientid, const uint8_t confirm[8],
				  uint64_t now)
{
	return nfs4_setclientid_confirm_by(st, clientid, confirm, 0, now);
}

uint32_t nfs4_setclientid_confirm_by(struct nfs4_ctab *st, uint64_t clientid, const uint8_t confirm[8],
				     uint64_t principal, uint64_t now)
{
	uint32_t status = NFS4ERR_STALE_CLIENTID;
	int i;

	pthread_mutex_lock(&st->lock);
	i = client_by_id(st, clientid);
	if (i >= 0 && st->clients[i]->v40)
		status = setclientid_confirm_locked(st, st->clients[i], confirm, principal, now);
	state_unlock(st);
	return status;
}

uint32_t nfs4_renew(struct nfs4_ctab *st, uint64_t clientid, uint64_t now)
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
	state_unlock(st);
	return status;
}
