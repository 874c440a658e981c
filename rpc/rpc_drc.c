/*
 * rpc_drc.c - the duplicate request cache.
 *
 * Non-idempotent procedures (rpc_proc.cache RPC_CACHE_DRC: NFSv3 CREATE, REMOVE,
 * RENAME, ...) must not run twice when a client retransmits a call whose
 * reply it has not seen (RFC 5531 §5: RPC itself promises no at-most-once
 * execution; §9: "the xid field is only used for clients matching reply
 * messages with call messages or for servers detecting retransmissions").
 * A call is identified by its xid, the peer's address and
 * port, program, version, procedure, and a checksum of its first argument
 * bytes (so a client's xid reuse with different arguments is a new call).
 *
 * Entries (all allocated by rpc_drc_init, none per call) are in one of:
 *
 *     FREE --lookup miss--> IN_PROGRESS --complete, reply cached--> DONE
 *       ^                        |                                    |
 *       +---complete, not cached-+<-----------evicted (LRU)-----------+
 *
 * FREE entries sit on the free list, DONE entries on the LRU list (oldest
 * first), IN_PROGRESS entries only in the hash table: they are never
 * evicted, the running call owns them (c->drc_entry). A retransmission that
 * finds an IN_PROGRESS entry is dropped; one that finds a DONE entry is
 * answered with the cached reply bytes (the RPC reply only; transports add
 * their own framing). Replies larger than RPC_DRC_MAX_REPLY, or carrying
 * out-of-band payload, are not cached (non-idempotent NFSv3 replies are a
 * few hundred bytes). One mutex guards everything.
 *
 * RPCSEC_GSS (RFC 2203 §5.3.3.1): a retransmission carries a new seq_num, so
 * its reply needs a new verifier, and krb5i/krb5p results a new checksum or
 * wrapping. Such entries keep only accept_stat and the results as encoded
 * before wrapping (rpc_drc_gss_results); a hit answers with the
 * retransmission's own header and verifier around them, and the caller
 * wraps them again, as knfsd's cache keeps the results and svcauth_gss signs
 * each reply. The key then names the flavor and service too, and the
 * checksum covers the arguments after unwrapping (the seq_num excluded).
 *
 * RPC-with-TLS (RFC 9289): the key names the connection's transport
 * security (none, TLS, mutual TLS) too. A reply made on a TLS connection
 * is never replayed onto a plain one (same address and port, as a
 * reconnecting client's): that call runs as a new one, so the export's
 * xprtsec= turns it away as it does any call on that connection
 * (NFS3ERR_ACCES, nfs_export_admit()), instead of the cached results going
 * out unprotected. knfsd's cache has no such field; a client does not
 * change its transport security between retransmissions, so nothing it
 * relies on is lost.
 */
#include "rpc/rpc_internal.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

#define RPC_DRC_MAX_REPLY 1024u
#define RPC_DRC_CSUM_BYTES 256u /* argument bytes covered by the checksum */
#define RPC_DRC_MAX_ENTRIES (1u << 20)

enum drc_state { DRC_FREE, DRC_IN_PROGRESS, DRC_DONE };

/* Compared with memcmp: always zero-filled before being set. */
struct drc_key {
	uint32_t xid, prog, vers, proc;
	uint32_t csum;      /* FNV-1a of the first argument bytes */
	uint32_t flavor;    /* the credential's flavor; RPCSEC_GSS: << 8 | its service */
	uint32_t xprtsec;   /* the connection's transport security (enum rpc_xprtsec) */
	uint32_t args_len;
	uint16_t family;
	uint16_t port;
	uint8_t addr[16];
};

struct rpc_drc_entry {
	struct drc_key key;
	uint32_t hash;
	enum drc_state state;
	struct rpc_drc_entry *hnext;        /* hash chain */
	struct rpc_drc_entry *lprev, *lnext; /* LRU list (DONE) or free list (FREE) */
	uint32_t reply_len;
	bool gss;                           /* reply: accept_stat and unwrapped results only */
	uint8_t reply[RPC_DRC_MAX_REPLY];
};

static struct {
	pthread_mutex_t lock;
	struct rpc_drc_entry *entries;
	unsigned n_entries;
	struct rpc_drc_entry **buckets;
	uint32_t bucket_mask;
	struct rpc_drc_entry *free;          /* singly linked through lnext */
	struct rpc_drc_entry *lru_head, *lru_tail; /* head: least recently used */
} drc = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static uint32_t fnv1a(uint32_t h, const void *data, size_t len)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

static void drc_key_make(const struct rpc_call *c, struct drc_key *k)
{
	const struct sockaddr_storage *ss = &c->conn->peer;
	size_t args_len = xdr_dec_remaining(&c->args);
	size_t n = args_len < RPC_DRC_CSUM_BYTES ? args_len : RPC_DRC_CSUM_BYTES;

	memset(k, 0, sizeof(*k));
	k->xid = c->xid;
	k->prog = c->prog;
	k->vers = c->vers;
	k->proc = c->proc;
	k->args_len = (uint32_t)args_len;
	k->csum = fnv1a(2166136261u, c->args.p, n);
	k->flavor = c->gss.ctx ? c->cred.flavor << 8 | c->gss.svc : c->cred.flavor;
	k->xprtsec = c->conn->xprtsec;
	k->family = ss->ss_family;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
		k->port = sin->sin_port;
		memcpy(k->addr, &sin->sin_addr, sizeof(sin->sin_addr));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
		k->port = sin6->sin6_port;
		memcpy(k->addr, &sin6->sin6_addr, sizeof(sin6->sin6_addr));
	}
}

static void lru_unlink(struct rpc_drc_entry *e)
{
	if (e->lprev)
		e->lprev->lnext = e->lnext;
	else
		drc.lru_head = e->lnext;
	if (e->lnext)
		e->lnext->lprev = e->lprev;
	else
		drc.lru_tail = e->lprev;
	e->lprev = e->lnext = NULL;
}

static void lru_append(struct rpc_drc_entry *e)
{
	e->lnext = NULL;
	e->lprev = drc.lru_tail;
	if (drc.lru_tail)
		drc.lru_tail->lnext = e;
	else
		drc.lru_head = e;
	drc.lru_tail = e;
}

static void hash_insert(struct rpc_drc_entry *e)
{
	struct rpc_drc_entry **b = &drc.buckets[e->hash & drc.bucket_mask];
	e->hnext = *b;
	*b = e;
}

static void hash_remove(struct rpc_drc_entry *e)
{
	struct rpc_drc_entry **pp = &drc.buckets[e->hash & drc.bucket_mask];
	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	e->hnext = NULL;
}

static struct rpc_drc_entry *hash_find(const struct drc_key *k, uint32_t hash)
{
	struct rpc_drc_entry *e = drc.buckets[hash & drc.bucket_mask];
	for (; e; e = e->hnext)
		if (e->hash == hash && memcmp(&e->key, k, sizeof(*k)) == 0)
			return e;
	return NULL;
}

static void entry_free(struct rpc_drc_entry *e)
{
	e->state = DRC_FREE;
	e->lprev = NULL;
	e->lnext = drc.free;
	drc.free = e;
}

/* A FREE entry: from the free list, else the least recently used DONE one. */
static struct rpc_drc_entry *entry_get(void)
{
	struct rpc_drc_entry *e = drc.free;
	if (e) {
		drc.free = e->lnext;
		e->lnext = NULL;
		return e;
	}
	e = drc.lru_head;
	if (!e)
		return NULL; /* every entry belongs to a running call */
	lru_unlink(e);
	hash_remove(e);
	e->state = DRC_FREE;
	return e;
}

int rpc_drc_init(unsigned entries)
{
	if (entries == 0)
		return 0; /* cache disabled */
	if (entries > RPC_DRC_MAX_ENTRIES) {
		log_err("rpc: duplicate request cache of %u entries is too large (max %u)",
			entries, RPC_DRC_MAX_ENTRIES);
		return -1;
	}
	uint32_t nb = 1;
	while (nb < entries)
		nb <<= 1;
	drc.entries = calloc(entries, sizeof(*drc.entries));
	drc.buckets = calloc(nb, sizeof(*drc.buckets));
	if (!drc.entries || !drc.buckets) {
		log_err("rpc: out of memory for the duplicate request cache");
		rpc_drc_release();
		return -1;
	}
	drc.n_entries = entries;
	drc.bucket_mask = nb - 1;
	drc.free = NULL;
	drc.lru_head = drc.lru_tail = NULL;
	for (unsigned i = entries; i-- > 0;)
		entry_free(&drc.entries[i]);
	return 0;
}

void rpc_drc_release(void)
{
	free(drc.entries);
	free(drc.buckets);
	drc.entries = NULL;
	drc.buckets = NULL;
	drc.n_entries = 0;
	drc.free = drc.lru_head = drc.lru_tail = NULL;
}

enum rpc_drc_result rpc_drc_lookup(struct rpc_call *c)
{
	struct drc_key k;
	enum rpc_drc_result r = RPC_DRC_NEW;

	c->drc_entry = NULL;
	if (!drc.n_entries)
		return RPC_DRC_NEW;
	drc_key_make(c, &k);
	uint32_t hash = fnv1a(2166136261u, &k, sizeof(k));

	pthread_mutex_lock(&drc.lock);
	struct rpc_drc_entry *e = hash_find(&k, hash);
	if (e && e->state == DRC_IN_PROGRESS) {
		r = RPC_DRC_IN_PROGRESS;
	} else if (e && e->gss) {
		/* This call's header and verifier stay; the results follow (wrapped by the caller). */
		c->res.p = c->res.base + c->reply_stat_off;
		xdr_enc_fixed(&c->res, e->reply, e->reply_len);
		lru_unlink(e);
		lru_append(e);
		r = RPC_DRC_REPLAY;
	} else if (e) {
		/* Answer from the cache; c->res already holds a header: start over. */
		xdr_enc_init(&c->res, c->reply_buf, c->reply_cap);
		xdr_enc_fixed(&c->res, e->reply, e->reply_len);
		lru_unlink(e);
		lru_append(e);
		r = RPC_DRC_REPLAY;
	} else {
		e = entry_get();
		if (e) {
			e->key = k;
			e->hash = hash;
			e->state = DRC_IN_PROGRESS;
			e->reply_len = 0;
			e->gss = c->gss.ctx != NULL;
			hash_insert(e);
			c->drc_entry = e;
		}
	}
	pthread_mutex_unlock(&drc.lock);

	if (r == RPC_DRC_NEW && !c->drc_entry)
		rpc_stats_count(RPC_STAT_DRC_UNCACHED);
	return r;
}

void rpc_drc_gss_results(struct rpc_call *c)
{
	struct rpc_drc_entry *e = c->drc_entry;
	const uint8_t *from = c->res.base + c->reply_stat_off;
	size_t len = (size_t)(c->res.p - from);

	/* IN_PROGRESS: the entry is this call's alone, no one reads its bytes yet. */
	if (!e || !e->gss || c->res.overflow || c->n_ddp_out || len > RPC_DRC_MAX_REPLY)
		return;
	memcpy(e->reply, from, len);
	e->reply_len = (uint32_t)len;
}

void rpc_drc_complete(struct rpc_call *c)
{
	struct rpc_drc_entry *e = c->drc_entry;
	size_t len = xdr_enc_len(&c->res);
	bool keep = !c->drop && !c->drc_forget && !c->res.overflow && c->n_ddp_out == 0 && len <= RPC_DRC_MAX_REPLY;

	if (!e)
		return;
	if (e->gss) /* only what rpc_drc_gss_results kept: results that were encoded and wrapped */
		keep = keep && e->reply_len > 0 && c->proc_status == RPC_PROC_OK;
	c->drc_entry = NULL;
	pthread_mutex_lock(&drc.lock);
	if (keep) {
		if (!e->gss)
			memcpy(e->reply, c->reply_buf, len);
		e->reply_len = e->gss ? e->reply_len : (uint32_t)len;
		e->state = DRC_DONE;
		lru_append(e);
	} else {
		/* Forget it: a retransmission runs the procedure again. */
		hash_remove(e);
		entry_free(e);
	}
	pthread_mutex_unlock(&drc.lock);
	if (!keep && !c->drop && !c->drc_forget)
		rpc_stats_count(RPC_STAT_DRC_UNCACHED);
}
