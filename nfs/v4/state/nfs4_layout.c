/*
 * nfs4_layout.c - the pNFS layout state table (see nfs4_layout.h for the
 * records' life, the seqid rules and the bounds). Each record is on three
 * core/list.h lists: its stateid's hash chain, its (client, file) hash
 * chain and its client's list, so it leaves in O(1); a RECALLED record is
 * on the table's recalled list too. The (client, file) chains hash the
 * file alone, so one chain holds every client's record of a file (the
 * recall's look-up). A client record exists while the client holds a
 * layout, or a lease after one of its layouts was revoked (its flag).
 */
#include "nfs/v4/state/nfs4_layout.h"

#include <stdlib.h>
#include <string.h>

#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/xdr/nfs4_layout_xdr.h"

struct lo_client {
	struct list_link hash;    /* t->clients[] */
	struct list_link layouts; /* its records (struct lo_rec.per_client) */
	uint64_t clientid;
	unsigned n;
	uint64_t revoked_at; /* the last revocation (0: none within a lease): the SEQUENCE flag */
};

struct lo_rec {
	struct list_link by_sid, by_file, per_client;
	struct list_link recall; /* t->recalled while recall_at */
	uint64_t recall_at;      /* RECALLED since (0: HELD) */
	bool resend;             /* the holder answered the recall NFS4ERR_DELAY: send it again */
	uint8_t host[NFS4_LAYOUT_HOST_SIZE]; /* the last LAYOUTGET's address (all zero: unknown) */
	struct lo_client *c;
	uint32_t counter;  /* stateid4.other's third word */
	uint32_t seqid;
	uint32_t iomodes;  /* NFS4_LAYOUT_IO_* */
	uint32_t fsid;
	bool roc;
	uint32_t klen;
	uint8_t key[];
};

static void be32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static uint32_t be32_get(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static unsigned file_bucket(const uint8_t *key, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ key[i]) * 16777619u;
	return h % NFS4_LAYOUT_BUCKETS;
}

void nfs4_ltab_init(struct nfs4_ltab *t, uint32_t boot, unsigned max_total, unsigned max_per_client)
{
	memset(t, 0, sizeof(*t));
	t->boot = boot;
	t->max_total = max_total ? max_total : NFS4_LAYOUT_MAX;
	t->max_per_client = max_per_client ? max_per_client : NFS4_LAYOUT_PER_CLIENT;
	for (unsigned i = 0; i < NFS4_LAYOUT_BUCKETS; i++) {
		list_init(&t->by_sid[i]);
		list_init(&t->by_file[i]);
		list_init(&t->clients[i]);
	}
	list_init(&t->recalled);
}

bool nfs4_ltab_is_layout(const struct nfs4_stateid *sid)
{
	uint32_t c = be32_get(sid->other + 8);

	return nfs4_stateid_kind(sid, 1) == NFS4_SID_ORDINARY && !(c & NFS4_STAB_DELEG_BIT) &&
	       (c & NFS4_STAB_LAYOUT_BIT);
}

static struct lo_client *client_find(const struct nfs4_ltab *t, uint64_t clientid)
{
	list_foreach_entry(c, &t->clients[clientid % NFS4_LAYOUT_BUCKETS], struct lo_client, hash)
		if (c->clientid == clientid)
			return c;
	return NULL;
}

static struct lo_rec *file_find(const struct nfs4_ltab *t, uint64_t clientid, const uint8_t *key, uint32_t len)
{
	list_foreach_entry(r, &t->by_file[file_bucket(key, len)], struct lo_rec, by_file)
		if (r->c->clientid == clientid && r->klen == len && !memcmp(r->key, key, len))
			return r;
	return NULL;
}

/* A client record without layouts goes, unless its revoked flag is up. */
static void client_maybe_free(struct nfs4_ltab *t, struct lo_client *c)
{
	if (c->n || c->revoked_at)
		return;
	list_remove(&c->hash);
	free(c);
	t->nclients--;
}

static void rec_free(struct nfs4_ltab *t, struct lo_rec *r)
{
	struct lo_client *c = r->c;

	if (r->recall_at) {
		list_remove(&r->recall);
		t->recalling--;
		t->resends -= r->resend;
	}
	list_remove(&r->by_sid);
	list_remove(&r->by_file);
	list_remove(&r->per_client);
	free(r);
	t->count--;
	c->n--;
	client_maybe_free(t, c);
}

/* The record goes by the client's doing (a return, a CLOSE, NOMATCHING_LAYOUT). */
static void rec_returned(struct nfs4_ltab *t, struct lo_rec *r)
{
	if (r->recall_at)
		t->recall_returned++;
	rec_free(t, r);
}

/*
 * The client's revoked flag drops: it has started over (a LAYOUTGET with its open stateid, errata
 * 3208, or LAYOUTRETURN ALL), so it has seen the flag. The Linux client answers the flag by
 * dropping all its layouts (nfs41_handle_recallable_state_revoked), never by FREE_STATEID on a
 * layout stateid (§18.46.3): a flag kept a whole lease would make it do so at every SEQUENCE.
 */
static void client_flag_clear(struct nfs4_ltab *t, uint64_t clientid)
{
	struct lo_client *c = t->revoked_clients ? client_find(t, clientid) : NULL;

	if (!c || !c->revoked_at)
		return;
	c->revoked_at = 0;
	t->revoked_clients--;
	client_maybe_free(t, c);
}

/* RFC 8881 §12.5.5.1: the server takes the layout back; the client is told (§18.46.3). */
static void rec_revoke(struct nfs4_ltab *t, struct lo_rec *r, uint64_t now)
{
	if (!r->c->revoked_at)
		t->revoked_clients++;
	r->c->revoked_at = now ? now : 1;
	t->revoked++;
	rec_free(t, r);
}

/* A new record of clientid on f (seqid 0: the grant makes it 1), or NULL at a bound or out of memory. */
static struct lo_rec *rec_new(struct nfs4_ltab *t, uint64_t clientid, const struct nfs4_lfile *f)
{
	struct lo_client *c = client_find(t, clientid);
	struct lo_rec *r;

	if (t->count >= t->max_total || (c && c->n >= t->max_per_client))
		return NULL;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		c->clientid = clientid;
		list_init(&c->layouts);
		list_insert(&t->clients[clientid % NFS4_LAYOUT_BUCKETS], &c->hash);
		t->nclients++;
	}
	r = calloc(1, sizeof(*r) + f->len);
	if (!r) {
		client_maybe_free(t, c);
		return NULL;
	}
	r->c = c;
	r->fsid = f->fsid;
	r->klen = f->len;
	memcpy(r->key, f->key, f->len);
	/* A counter of our own: the open table never sets NFS4_STAB_LAYOUT_BIT in its counters. */
	do
		t->counter = (t->counter + 1) & ~(NFS4_STAB_DELEG_BIT | NFS4_STAB_LAYOUT_BIT);
	while (t->counter == 0);
	r->counter = NFS4_STAB_LAYOUT_BIT | t->counter;
	list_insert(&t->by_sid[r->counter % NFS4_LAYOUT_BUCKETS], &r->by_sid);
	list_insert(&t->by_file[file_bucket(f->key, f->len)], &r->by_file);
	list_insert(&c->layouts, &r->per_client);
	c->n++;
	t->count++;
	return r;
}

static void rec_sid(const struct nfs4_ltab *t, const struct lo_rec *r, struct nfs4_stateid *out)
{
	out->seqid = r->seqid;
	be32_put(out->other, t->boot);
	be32_put(out->other + 4, (uint32_t)r->c->clientid);
	be32_put(out->other + 8, r->counter);
}

/* RFC 8881 §12.5.3: the seqid goes up by one at each grant and return; 0 is never used. */
static void rec_bump(struct lo_rec *r)
{
	r->seqid = r->seqid == UINT32_MAX ? 1 : r->seqid + 1;
}

/* The record a presented layout stateid names, if it is clientid's on f; else *status says why not. */
static struct lo_rec *rec_lookup(const struct nfs4_ltab *t, uint64_t clientid, const struct nfs4_lfile *f,
				 const struct nfs4_stateid *in, uint32_t *status)
{
	uint32_t counter = be32_get(in->other + 8);

	*status = NFS4ERR_BAD_STATEID;
	if (!nfs4_ltab_is_layout(in))
		return NULL;
	if (be32_get(in->other) != t->boot) {
		*status = NFS4ERR_STALE_STATEID; /* RFC 8881 §8.2.4: another boot's */
		return NULL;
	}
	list_foreach_entry(r, &t->by_sid[counter % NFS4_LAYOUT_BUCKETS], struct lo_rec, by_sid) {
		if (r->counter != counter)
			continue;
		/* RFC 8881 §8.2.2: only its client's; §12.5.2: only for its file; §12.5.3: not newer */
		if (r->c->clientid != clientid || be32_get(in->other + 4) != (uint32_t)clientid ||
		    r->klen != f->len || memcmp(r->key, f->key, f->len) || (int32_t)(in->seqid - r->seqid) > 0)
			return NULL;
		*status = NFS4_OK;
		return r;
	}
	return NULL;
}

uint32_t nfs4_ltab_get(struct nfs4_ltab *t, uint64_t clientid, const struct nfs4_lfile *f,
		       const struct nfs4_stateid *in, uint32_t iomode, bool roc, struct nfs4_stateid *out)
{
	struct lo_rec *r;
	uint32_t st;

	if (f->len > NFS4_LAYOUT_FKEY_MAX) /* longer than any handle: never kept, never looked for */
		return NFS4ERR_LAYOUTTRYLATER;
	/* §18.43.3, §12.5.5.2: no layout of a file while one of it is being recalled */
	if (t->recalling && nfs4_ltab_recalling_file(t, f->key, f->len))
		return NFS4ERR_RECALLCONFLICT;
	if (in) {
		r = rec_lookup(t, clientid, f, in, &st);
		if (!r)
			return st;
	} else {
		/* errata 3208 (RFC 5661): a non-layout stateid says the client holds no layouts of
		 * the file: forget what it held, keep the stateid (its seqid keeps counting) */
		client_flag_clear(t, clientid);
		r = file_find(t, clientid, f->key, f->len);
		if (r)
			r->iomodes = 0;
		else if (!(r = rec_new(t, clientid, f)))
			return NFS4ERR_LAYOUTTRYLATER;
	}
	r->iomodes |= iomode == LAYOUTIOMODE4_RW ? NFS4_LAYOUT_IO_RW : NFS4_LAYOUT_IO_READ;
	r->roc = r->roc || roc;
	if (f->host)
		memcpy(r->host, f->host, NFS4_LAYOUT_HOST_SIZE);
	rec_bump(r);
	rec_sid(t, r, out);
	t->granted++;
	return NFS4_OK;
}

uint32_t nfs4_ltab_return_file(struct nfs4_ltab *t, uint64_t clientid, const struct nfs4_lfile *f,
			       const struct nfs4_stateid *in, uint32_t iomode, bool *has_sid, struct nfs4_stateid *out)
{
	uint32_t st, drop;
	struct lo_rec *r = rec_lookup(t, clientid, f, in, &st);

	*has_sid = false;
	if (!r)
		return st;
	drop = iomode == LAYOUTIOMODE4_READ ? NFS4_LAYOUT_IO_READ :
	       iomode == LAYOUTIOMODE4_RW ? NFS4_LAYOUT_IO_RW : NFS4_LAYOUT_IO_READ | NFS4_LAYOUT_IO_RW;
	r->iomodes &= ~drop;
	t->returned++;
	if (!r->iomodes) {
		/* §18.44.3: no layout left, no stateid (lrs_present false); the stateid is gone */
		rec_returned(t, r);
		return NFS4_OK;
	}
	rec_bump(r);
	rec_sid(t, r, out);
	*has_sid = true;
	return NFS4_OK;
}

/* Free the client's records that match (fsid, or all when !by_fsid); how many went. returned: by
 * the client's doing (a recall it answers). */
static unsigned client_drop(struct nfs4_ltab *t, uint64_t clientid, bool by_fsid, uint32_t fsid, bool returned)
{
	struct lo_client *c = client_find(t, clientid);
	struct list_link *l, *next;
	unsigned n = 0, left;

	if (!c)
		return 0;
	left = c->n;
	/* rec_free() frees c with its last record: count down rather than touch c after */
	for (l = c->layouts.next; left > 0; l = next, left--) {
		struct lo_rec *r = list_entry(l, struct lo_rec, per_client);

		next = l->next;
		if (by_fsid && r->fsid != fsid)
			continue;
		if (returned)
			rec_returned(t, r);
		else
			rec_free(t, r);
		n++;
	}
	return n;
}

unsigned nfs4_ltab_return_fsid(struct nfs4_ltab *t, uint64_t clientid, uint32_t fsid)
{
	unsigned n = client_drop(t, clientid, true, fsid, true);

	t->returned += n;
	return n;
}

unsigned nfs4_ltab_return_all(struct nfs4_ltab *t, uint64_t clientid)
{
	unsigned n = client_drop(t, clientid, false, 0, true);

	client_flag_clear(t, clientid);
	t->returned += n;
	return n;
}

unsigned nfs4_ltab_purge_client(struct nfs4_ltab *t, uint64_t clientid)
{
	unsigned n = client_drop(t, clientid, false, 0, false);

	t->purged += n;
	client_flag_clear(t, clientid); /* its revoked flag goes with it */
	return n;
}

unsigned nfs4_ltab_close(struct nfs4_ltab *t, uint64_t clientid, const uint8_t *key, uint32_t len)
{
	struct lo_rec *r = file_find(t, clientid, key, len);

	if (!r || !r->roc)
		return 0;
	rec_returned(t, r);
	t->closed++;
	return 1;
}

uint32_t nfs4_ltab_check(const struct nfs4_ltab *t, uint64_t clientid, const struct nfs4_lfile *f,
			 const struct nfs4_stateid *in, uint32_t *iomodes)
{
	uint32_t st;
	const struct lo_rec *r = rec_lookup(t, clientid, f, in, &st);

	*iomodes = r ? r->iomodes : 0;
	return st;
}

unsigned nfs4_ltab_client_count(const struct nfs4_ltab *t, uint64_t clientid)
{
	const struct lo_client *c = client_find(t, clientid);

	return c ? c->n : 0;
}

void nfs4_ltab_release(struct nfs4_ltab *t)
{
	for (unsigned i = 0; i < NFS4_LAYOUT_BUCKETS; i++)
		while (!list_empty(&t->by_sid[i]))
			rec_free(t, list_entry(list_first(&t->by_sid[i]), struct lo_rec, by_sid));
	for (unsigned i = 0; i < NFS4_LAYOUT_BUCKETS; i++) {
		while (!list_empty(&t->clients[i])) { /* clients kept for their revoked flag */
			struct lo_client *c = list_entry(list_first(&t->clients[i]), struct lo_client, hash);

			c->revoked_at = 0;
			client_maybe_free(t, c);
		}
	}
	t->revoked_clients = 0;
}

/* ---- recalls (RFC 8881 §12.5.5) ---- */

/* The recall of r to send. */
static void rec_recall_out(const struct nfs4_ltab *t, const struct lo_rec *r, struct nfs4_lrecall *out)
{
	out->clientid = r->c->clientid;
	rec_sid(t, r, &out->sid);
	out->fsid = r->fsid;
	out->klen = r->klen;
	memcpy(out->key, r->key, r->klen);
}

static void rec_recall(struct nfs4_ltab *t, struct lo_rec *r, uint64_t now, struct nfs4_lrecall *out)
{
	r->recall_at = now ? now : 1;
	list_insert_tail(&t->recalled, &r->recall);
	t->recalling++;
	t->recalls++;
	rec_bump(r); /* §12.5.3: CB_LAYOUTRECALL carries the next seqid */
	rec_recall_out(t, r, out);
}

unsigned nfs4_ltab_recall_file(struct nfs4_ltab *t, const uint8_t *key, uint32_t len, uint64_t except,
			       const uint8_t *host, uint64_t now, struct nfs4_lrecall *out, unsigned max)
{
	unsigned n = 0;

	if (len > NFS4_LAYOUT_FKEY_MAX)
		return 0;
	list_foreach_entry(r, &t->by_file[file_bucket(key, len)], struct lo_rec, by_file) {
		if (n == max)
			break;
		if (r->recall_at || r->c->clientid == except || r->klen != len || memcmp(r->key, key, len))
			continue;
		if (host && !memcmp(r->host, host, NFS4_LAYOUT_HOST_SIZE))
			continue; /* the holder's own I/O through its data server */
		rec_recall(t, r, now, &out[n++]);
	}
	return n;
}

bool nfs4_ltab_recalling_file(const struct nfs4_ltab *t, const uint8_t *key, uint32_t len)
{
	if (len > NFS4_LAYOUT_FKEY_MAX)
		return false;
	list_foreach_entry(r, &t->by_file[file_bucket(key, len)], struct lo_rec, by_file)
		if (r->recall_at && r->klen == len && !memcmp(r->key, key, len))
			return true;
	return false;
}

/* The RECALLED record of clientid a recall's stateid names, or NULL. */
static struct lo_rec *rec_recalled(const struct nfs4_ltab *t, uint64_t clientid, const struct nfs4_stateid *sid)
{
	uint32_t counter = be32_get(sid->other + 8);

	list_foreach_entry(r, &t->by_sid[counter % NFS4_LAYOUT_BUCKETS], struct lo_rec, by_sid)
		if (r->counter == counter && r->c->clientid == clientid && r->recall_at)
			return r;
	return NULL;
}

void nfs4_ltab_recall_nomatch(struct nfs4_ltab *t, uint64_t clientid, const struct nfs4_stateid *sid)
{
	struct lo_rec *r = rec_recalled(t, clientid, sid);

	if (r)
		rec_returned(t, r);
}

void nfs4_ltab_recall_delay(struct nfs4_ltab *t, uint64_t clientid, const struct nfs4_stateid *sid)
{
	struct lo_rec *r = rec_recalled(t, clientid, sid);

	if (r && !r->resend) {
		r->resend = true;
		t->resends++;
	}
}

unsigned nfs4_ltab_resend(struct nfs4_ltab *t, struct nfs4_lrecall *out, unsigned max)
{
	unsigned n = 0;

	if (!t->resends)
		return 0;
	list_foreach_entry(r, &t->recalled, struct lo_rec, recall) {
		if (n == max)
			break;
		if (!r->resend)
			continue;
		r->resend = false;
		t->resends--;
		rec_recall_out(t, r, &out[n++]); /* the same stateid: its seqid is the one the holder waits for */
	}
	return n;
}

unsigned nfs4_ltab_expire(struct nfs4_ltab *t, uint64_t now, uint32_t lease)
{
	unsigned n = 0;

	while (!list_empty(&t->recalled)) {
		struct lo_rec *r = list_first_entry(&t->recalled, struct lo_rec, recall);

		if (r->recall_at + lease > now)
			break;
		rec_revoke(t, r, now);
		n++;
	}
	for (unsigned i = 0; t->revoked_clients && i < NFS4_LAYOUT_BUCKETS; i++) {
		list_foreach_entry_safe(c, next, &t->clients[i], struct lo_client, hash) {
			if (!c->revoked_at || c->revoked_at + lease > now)
				continue;
			c->revoked_at = 0;
			t->revoked_clients--;
			client_maybe_free(t, c);
		}
	}
	return n;
}

unsigned nfs4_ltab_revoke_fsid(struct nfs4_ltab *t, uint32_t fsid, uint64_t now, uint64_t *clients, unsigned max,
			       unsigned *nclients)
{
	unsigned n = 0;

	*nclients = 0;
	for (unsigned i = 0; i < NFS4_LAYOUT_BUCKETS; i++) {
		list_foreach_entry_safe(r, next, &t->by_sid[i], struct lo_rec, by_sid) {
			unsigned k;

			if (r->fsid != fsid)
				continue;
			for (k = 0; k < *nclients && clients[k] != r->c->clientid; k++)
				;
			if (k == *nclients && k < max)
				clients[(*nclients)++] = r->c->clientid;
			rec_revoke(t, r, now);
			n++;
		}
	}
	return n;
}

unsigned nfs4_ltab_list(const struct nfs4_ltab *t, struct nfs4_lo_info *out, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NFS4_LAYOUT_BUCKETS; i++) {
		list_foreach_entry(c, &t->clients[i], struct lo_client, hash) {
			list_foreach_entry(r, &c->layouts, struct lo_rec, per_client) {
				if (n == max)
					return n;
				out[n] = (struct nfs4_lo_info){ .clientid = c->clientid, .fsid = r->fsid,
								.iomodes = r->iomodes, .seqid = r->seqid,
								.recall_at = r->recall_at, .klen = r->klen };
				memcpy(out[n++].key, r->key, r->klen);
			}
		}
	}
	return n;
}

bool nfs4_ltab_client_revoked(const struct nfs4_ltab *t, uint64_t clientid)
{
	const struct lo_client *c = t->revoked_clients ? client_find(t, clientid) : NULL;

	return c && c->revoked_at;
}

uint32_t nfs4_devlist_page(unsigned ndev, uint64_t cookie, bool verf_ok, uint32_t max, unsigned *first,
			   unsigned *count, bool *eof)
{
	*first = *count = 0;
	*eof = false;
	/* gdla_maxdevices 0 would answer no device and never reach the end: the argument is invalid */
	if (max == 0)
		return NFS4ERR_INVAL;
	/* a list gone since the cookie (another boot's); a cookie this list never gave */
	if (cookie && !verf_ok)
		return NFS4ERR_NOT_SAME;
	if (cookie > ndev)
		return NFS4ERR_BAD_COOKIE;
	*first = (unsigned)cookie;
	*count = ndev - *first < max ? ndev - *first : max;
	*eof = *first + *count == ndev;
	return NFS4_OK;
}
