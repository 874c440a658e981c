/*
 * nfs4_deleg.c - NFSv4 file delegations (nfs4_deleg.h). Pure: the caller
 * (nfs4_proc_deleg.c) holds the lock, sends the recalls and gives the time.
 * A fixed table: a slot per delegation, chained by file key from buckets[].
 */
#include <string.h>

#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/state/nfs4_deleg.h"

#define GEN_MASK ((~NFS4_STAB_DELEG_BIT) >> NFS4_DELEG_SLOT_BITS)

static uint32_t be32g(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void be32p(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* FNV-1a of a file key. */
static uint32_t key_hash(const uint8_t *k, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ k[i]) * 16777619u;
	return h % NFS4_DELEG_BUCKETS;
}

static bool key_eq(const struct nfs4_dl *d, const uint8_t *k, uint32_t len)
{
	return d->fkey_len == len && memcmp(d->fkey, k, len) == 0;
}

const char *nfs4_dl_cause_name(unsigned cause)
{
	static const char *const names[NFS4_DL_CAUSES] = {
		[NFS4_DL_BY_NFS4] = "nfs4", [NFS4_DL_BY_NFS3] = "nfs3", [NFS4_DL_BY_NLM] = "nlm",
		[NFS4_DL_BY_LOCAL_OPEN] = "local_open", [NFS4_DL_BY_LOCAL_LOCK] = "local_lock",
		[NFS4_DL_BY_CEPH] = "ceph", [NFS4_DL_BY_NOTIFY] = "notify_failed",
	};

	return cause < NFS4_DL_CAUSES ? names[cause] : NULL;
}

const char *nfs4_dl_kind_name(unsigned kind)
{
	static const char *const names[NFS4_DL_KINDS] = {
		[NFS4_DL_KIND_READ] = "read", [NFS4_DL_KIND_WRITE] = "write", [NFS4_DL_KIND_ATTR] = "attribute",
		[NFS4_DL_KIND_DIR] = "directory",
	};

	return kind < NFS4_DL_KINDS ? names[kind] : NULL;
}

/* A record's kind (not FREE): RFC 9754 §5's *_ATTRS_DELEG types are their own. */
static enum nfs4_dl_kind dl_kind(const struct nfs4_dl *d)
{
	return d->dir ? NFS4_DL_KIND_DIR : d->ts ? NFS4_DL_KIND_ATTR : d->write ? NFS4_DL_KIND_WRITE : NFS4_DL_KIND_READ;
}

/* HELD -> RECALLED, counted under cause. */
static void dl_recall(struct nfs4_dtab *t, struct nfs4_dl *d, uint64_t now, enum nfs4_dl_cause cause)
{
	d->state = NFS4_DL_RECALLED;
	d->recalled_at = now;
	d->revoke_at = 0;
	t->nrecalled++;
	t->recalls++;
	t->recalls_by[cause]++;
	t->dir_recalls += d->dir;
	t->dir_recalls_by[cause] += d->dir;
}

void nfs4_dtab_init(struct nfs4_dtab *t, uint32_t boot)
{
	memset(t, 0, sizeof(*t));
	t->boot = boot;
	for (unsigned i = 0; i < NFS4_DELEG_BUCKETS; i++)
		t->buckets[i] = -1;
	for (unsigned i = 0; i < NFS4_DELEG_MAX; i++)
		t->d[i].next = -1;
}

bool nfs4_dtab_is_deleg(const struct nfs4_stateid *sid)
{
	return nfs4_stateid_kind(sid, 1) == NFS4_SID_ORDINARY && (be32g(sid->other + 8) & NFS4_STAB_DELEG_BIT);
}

static void sid_of(const struct nfs4_dtab *t, unsigned slot, struct nfs4_stateid *sid)
{
	const struct nfs4_dl *d = &t->d[slot];

	sid->seqid = 1; /* RFC 8881 §8.2.2: a delegation stateid's seqid does not change */
	be32p(sid->other, t->boot);
	be32p(sid->other + 4, (uint32_t)d->clientid);
	be32p(sid->other + 8, NFS4_STAB_DELEG_BIT | d->gen << NFS4_DELEG_SLOT_BITS | slot);
}

/* The live record sid names, or NULL. */
static struct nfs4_dl *dl_of(const struct nfs4_dtab *t, const struct nfs4_stateid *sid)
{
	uint32_t c = be32g(sid->other + 8);
	const struct nfs4_dl *d = &t->d[c & (NFS4_DELEG_MAX - 1)];

	if (!(c & NFS4_STAB_DELEG_BIT) || be32g(sid->other) != t->boot || d->state == NFS4_DL_FREE ||
	    d->gen != ((c & ~NFS4_STAB_DELEG_BIT) >> NFS4_DELEG_SLOT_BITS) || be32g(sid->other + 4) != (uint32_t)d->clientid)
		return NULL;
	return (struct nfs4_dl *)d;
}

/*
 * The record of a delegation stateid, checked as every operation on one
 * checks it: another boot (STALE_STATEID in 4.0; RFC 8881 §15.1.5.5: just
 * unknown in 4.1), unknown or another client's (BAD_STATEID, clientid 0:
 * any client), a seqid other than 1 (4.1: 0 is "the current one").
 */
static uint32_t dl_lookup(const struct nfs4_dtab *t, const struct nfs4_stateid *sid, uint32_t minor, uint64_t clientid,
			  struct nfs4_dl **out)
{
	if (be32g(sid->other) != t->boot)
		return minor >= 1 ? NFS4ERR_BAD_STATEID : NFS4ERR_STALE_STATEID;
	*out = dl_of(t, sid);
	if (!*out || (clientid && (*out)->clientid != clientid))
		return NFS4ERR_BAD_STATEID;
	if (!(minor >= 1 && sid->seqid == 0) && sid->seqid != 1)
		return sid->seqid == 0 ? NFS4ERR_OLD_STATEID : NFS4ERR_BAD_STATEID;
	return NFS4_OK;
}

static void dl_free(struct nfs4_dtab *t, struct nfs4_dl *d)
{
	int32_t slot = (int32_t)(d - t->d);

	for (int32_t *p = &t->buckets[key_hash(d->fkey, d->fkey_len)]; *p >= 0; p = &t->d[*p].next)
		if (*p == slot) {
			*p = d->next;
			break;
		}
	d->next = -1;
	if (d->state == NFS4_DL_RECALLED)
		t->nrecalled--;
	if (d->state == NFS4_DL_REVOKED)
		t->nrevoked--;
	t->nkind[dl_kind(d)]--;
	d->state = NFS4_DL_FREE;
	d->cb_pending = false;
	d->dir = false;
	t->count--;
}

/* RFC 8881 §10.4.6: a recall not answered by DELEGRETURN within a lease. */
static void dl_revoke(struct nfs4_dtab *t, struct nfs4_dl *d)
{
	d->state = NFS4_DL_REVOKED;
	d->cb_pending = false;
	t->nrecalled--;
	t->nrevoked++;
	t->revoked++;
}

/* What a revoked delegation answers (RFC 8881 §15.1.5.1: ADMIN_REVOKED when an administrator
 * revoked it; §10.4.6: DELEG_REVOKED after an unanswered recall). */
static uint32_t dl_revoked_status(const struct nfs4_dl *d)
{
	return d->admin ? NFS4ERR_ADMIN_REVOKED : NFS4ERR_DELEG_REVOKED;
}

unsigned nfs4_dtab_client_count(const struct nfs4_dtab *t, uint64_t clientid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NFS4_DELEG_MAX && t->count; i++)
		n += t->d[i].state != NFS4_DL_FREE && t->d[i].clientid == clientid;
	return n;
}

/* The file's delegations: what they say of a new one for a->clientid. */
static enum nfs4_dl_grant file_verdict(const struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len,
				       const struct nfs4_dl_ask *a, uint32_t *why)
{
	bool write = a->access & NFS4_SHARE_ACCESS_WRITE;

	for (int32_t i = t->buckets[key_hash(fkey, fkey_len)]; i >= 0; i = t->d[i].next) {
		const struct nfs4_dl *d = &t->d[i];

		if (!key_eq(d, fkey, fkey_len))
			continue;
		if (d->clientid == a->clientid) {
			/* One delegation per client and file (as knfsd); RFC 8881 §18.16.3:
			 * no upgrade of a read delegation to a write one. */
			*why = write && !d->write ? NFS4_DL_WHY_NOT_SUPP_UPGRADE : NFS4_DL_WHY_CONTENTION;
			return NFS4_DL_GRANT_NONE;
		}
		/* RFC 8881 §10.4: read delegations may be shared; nothing beside a write one. */
		if (d->write || d->state != NFS4_DL_HELD || write) {
			*why = NFS4_DL_WHY_CONTENTION;
			return NFS4_DL_GRANT_NONE;
		}
	}
	return write ? NFS4_DL_GRANT_WRITE : NFS4_DL_GRANT_READ;
}

enum nfs4_dl_grant nfs4_dtab_decide(const struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len,
				    const struct nfs4_dl_ask *a, uint32_t *why)
{
	uint32_t want = a->minor >= 1 ? a->want : 0;
	enum nfs4_dl_grant g;

	*why = NFS4_DL_WHY_CONTENTION;
	/* RFC 8881 §18.16.3: the client's wishes first. */
	if (want == NFS4_DL_WANT_NONE) {
		*why = NFS4_DL_WHY_NOT_WANTED;
		return NFS4_DL_GRANT_NONE;
	}
	if (want == NFS4_DL_WANT_CANCEL) {
		*why = NFS4_DL_WHY_CANCELLED;
		return NFS4_DL_GRANT_NONE;
	}
	/* RFC 8881 §10.2: a delegation needs a callback path to recall it;
	 * §8.4.2: no new state in grace; bounded memory. */
	if (!a->enabled || !a->cb_up || a->grace || fkey_len > NFS4_DELEG_FKEY_MAX || t->count >= NFS4_DELEG_MAX ||
	    nfs4_dtab_client_count(t, a->clientid) >= NFS4_DELEG_PER_CLIENT) {
		*why = NFS4_DL_WHY_RESOURCE;
		return NFS4_DL_GRANT_NONE;
	}
	if (!a->claim_ok)
		return NFS4_DL_GRANT_NONE;
	/* [nfsv4] delegations = read: an open for writing gets none (RFC 8881
	 * §10.4: a write holder's locks stay its own until the recall, §9.8;
	 * rnfsd.conf(5)). §18.16.3: the write delegation is what is not
	 * supported (knfsd before 6.17 said WND4_RESOURCE). */
	if (a->read_only && (a->access & NFS4_SHARE_ACCESS_WRITE)) {
		*why = NFS4_DL_WHY_WRITE_NOT_SUPP;
		return NFS4_DL_GRANT_NONE;
	}
	/* RFC 8881 §10.4: a read delegation while no other client writes; a
	 * write delegation while no other client has the file open at all. */
	if ((a->access & NFS4_SHARE_ACCESS_WRITE) ? a->others_open : a->others_write)
		return NFS4_DL_GRANT_NONE;
	/* A holder takes its byte-range locks locally (RFC 8881 §10.4), unseen
	 * by the locks already on the file: none while there are any. */
	if (a->file_locked) {
		*why = NFS4_DL_WHY_CONTENTION;
		return NFS4_DL_GRANT_NONE;
	}
	g = file_verdict(t, fkey, fkey_len, a, why);
	if (g == NFS4_DL_GRANT_WRITE && want == NFS4_DL_WANT_READ) {
		*why = NFS4_DL_WHY_CONTENTION; /* opened for writing, wants only a read one */
		return NFS4_DL_GRANT_NONE;
	}
	return g;
}

bool nfs4_dtab_grant(struct nfs4_dtab *t, uint64_t clientid, const uint8_t *fkey, uint32_t fkey_len, bool write,
		     struct nfs4_stateid *sid)
{
	unsigned slot;

	if (t->count >= NFS4_DELEG_MAX || fkey_len > NFS4_DELEG_FKEY_MAX)
		return false;
	for (slot = 0; slot < NFS4_DELEG_MAX && t->d[slot].state != NFS4_DL_FREE; slot++)
		;
	struct nfs4_dl *d = &t->d[slot];
	uint32_t h = key_hash(fkey, fkey_len);

	d->state = NFS4_DL_HELD;
	d->write = write;
	d->cb_pending = false;
	d->admin = false;
	d->dir = false;
	d->notify = 0;
	d->dir_attrs[0] = d->dir_attrs[1] = 0;
	d->gen = (d->gen + 1) & GEN_MASK;
	d->clientid = clientid;
	d->recalled_at = 0;
	d->revoke_at = 0;
	d->modified = false;
	d->cb_change = d->cb_size = d->change_out = 0;
	d->mod_sec = 0;
	d->mod_nsec = 0;
	d->ts = false;
	d->fkey_len = fkey_len;
	memcpy(d->fkey, fkey, fkey_len);
	d->next = t->buckets[h];
	t->buckets[h] = (int32_t)slot;
	t->count++;
	t->nkind[dl_kind(d)]++;
	t->granted++;
	sid_of(t, slot, sid);
	return true;
}

bool nfs4_dtab_decide_dir(const struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len,
			  const struct nfs4_dl_ask *a)
{
	struct nfs4_dl_ask rd = *a;
	uint32_t why;

	/* RFC 8881 §18.39: an NFSv4.1 operation; §10.2: a callback path to recall it
	 * by; §8.4.2: no new state in grace; bounded memory. */
	if (a->minor < 1 || !a->enabled || !a->cb_up || a->grace || fkey_len > NFS4_DELEG_FKEY_MAX ||
	    t->count >= NFS4_DELEG_MAX || t->nkind[NFS4_DL_KIND_DIR] >= NFS4_DELEG_DIR_MAX ||
	    nfs4_dtab_client_count(t, a->clientid) >= NFS4_DELEG_PER_CLIENT)
		return false;
	/* RFC 8881 §10.9.1: shared as read delegations are; one per client and
	 * directory; none while another's is being recalled. */
	rd.access = NFS4_SHARE_ACCESS_READ;
	return file_verdict(t, fkey, fkey_len, &rd, &why) == NFS4_DL_GRANT_READ;
}

bool nfs4_dtab_grant_dir(struct nfs4_dtab *t, uint64_t clientid, const uint8_t *fkey, uint32_t fkey_len,
			 uint32_t want, uint32_t *granted, struct nfs4_stateid *sid)
{
	struct nfs4_dl_recall out[NFS4_DL_NOTIFY_MAX];
	/* RFC 8881 §18.39.3: the notifications granted may be fewer than asked (none past the bound) */
	uint32_t notify = nfs4_dtab_dir_notified(t, fkey, fkey_len, NFS4_DL_NOTIFY_GRANTABLE, out) < NFS4_DL_NOTIFY_MAX
				  ? want & NFS4_DL_NOTIFY_GRANTABLE
				  : 0;
	struct nfs4_dl *d;

	if (t->nkind[NFS4_DL_KIND_DIR] >= NFS4_DELEG_DIR_MAX || !nfs4_dtab_grant(t, clientid, fkey, fkey_len, false, sid))
		return false;
	d = &t->d[be32g(sid->other + 8) & (NFS4_DELEG_MAX - 1)];
	t->nkind[dl_kind(d)]--;
	d->dir = true;
	t->nkind[NFS4_DL_KIND_DIR]++;
	d->notify = notify;
	*granted = notify;
	t->dir_granted++;
	return true;
}

uint32_t nfs4_dl_dir_want(uint32_t want, const uint32_t asked[2], uint32_t attrs[2])
{
	attrs[0] = asked[0] & NFS4_DL_DIR_ATTRS_TOLD0;
	attrs[1] = asked[1] & NFS4_DL_DIR_ATTRS_TOLD1;
	/* RFC 8881 §18.39.3: a subset of what was asked may be granted; a CHANGE_DIR_ATTRS telling no
	 * attribute would say nothing (knfsd sends none either): not granted, a change recalls */
	if (!(want & NFS4_DL_NOTIFY_DIR_ATTRS) || !(attrs[0] | attrs[1])) {
		attrs[0] = attrs[1] = 0;
		want &= ~NFS4_DL_NOTIFY_DIR_ATTRS;
	}
	return want;
}

void nfs4_dtab_set_dir_attrs(struct nfs4_dtab *t, const struct nfs4_stateid *sid, const uint32_t attrs[2])
{
	struct nfs4_dl *d = dl_of(t, sid);

	if (d && d->dir && (d->notify & NFS4_DL_NOTIFY_DIR_ATTRS)) {
		d->dir_attrs[0] = attrs[0];
		d->dir_attrs[1] = attrs[1];
	}
}

unsigned nfs4_dtab_dir_notified(const struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len, uint32_t need,
				struct nfs4_dl_recall *out)
{
	unsigned n = 0;

	if (t->nkind[NFS4_DL_KIND_DIR] == 0)
		return 0;
	for (int32_t i = t->buckets[key_hash(fkey, fkey_len)]; i >= 0 && n < NFS4_DL_NOTIFY_MAX; i = t->d[i].next) {
		const struct nfs4_dl *d = &t->d[i];

		if (!key_eq(d, fkey, fkey_len) || !d->dir || d->state != NFS4_DL_HELD || !(d->notify & need))
			continue;
		out[n].clientid = d->clientid;
		sid_of(t, (unsigned)i, &out[n].sid);
		out[n].dir_attrs[0] = d->dir_attrs[0];
		out[n].dir_attrs[1] = d->dir_attrs[1];
		out[n].fkey_len = d->fkey_len;
		memcpy(out[n].fkey, d->fkey, d->fkey_len);
		n++;
	}
	return n;
}

static void recall_out(const struct nfs4_dtab *t, struct nfs4_dl *d, struct nfs4_dl_recall *r)
{
	r->clientid = d->clientid;
	sid_of(t, (unsigned)(d - t->d), &r->sid);
	r->fkey_len = d->fkey_len;
	memcpy(r->fkey, d->fkey, d->fkey_len);
	d->cb_pending = false;
}

void nfs4_dtab_ungrant(struct nfs4_dtab *t, const struct nfs4_stateid *sid)
{
	struct nfs4_dl *d = dl_of(t, sid);

	if (d && d->state == NFS4_DL_HELD) {
		t->dir_granted -= d->dir;
		dl_free(t, d);
		t->granted--;
	}
}

bool nfs4_dtab_file_held(const struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len)
{
	if (t->count == 0)
		return false;
	for (int32_t i = t->buckets[key_hash(fkey, fkey_len)]; i >= 0; i = t->d[i].next)
		if (key_eq(&t->d[i], fkey, fkey_len) &&
		    (t->d[i].state == NFS4_DL_HELD || t->d[i].state == NFS4_DL_RECALLED))
			return true;
	return false;
}

/* RFC 8881 §10.4.6: a recall unanswered for a lease (or past its deadline) is revoked. */
static bool recall_due(const struct nfs4_dl *d, uint64_t now, uint32_t lease)
{
	return now >= d->recalled_at + lease || (d->revoke_at && now >= d->revoke_at);
}

uint32_t nfs4_dtab_break_wait(uint32_t lease, unsigned break_s)
{
	uint32_t wait;

	if (!break_s || break_s >= lease + NFS4_DL_BREAK_MARGIN)
		return 0;
	wait = break_s > NFS4_DL_BREAK_MARGIN + 1 ? break_s - NFS4_DL_BREAK_MARGIN : 1;
	return wait < lease ? wait : 0;
}

void nfs4_dtab_deadline(struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len, uint64_t at)
{
	if (t->count == 0)
		return;
	for (int32_t i = t->buckets[key_hash(fkey, fkey_len)]; i >= 0; i = t->d[i].next) {
		struct nfs4_dl *d = &t->d[i];

		if (key_eq(d, fkey, fkey_len) && d->state == NFS4_DL_RECALLED && (!d->revoke_at || at < d->revoke_at))
			d->revoke_at = at;
	}
}

uint32_t nfs4_dl_notify_of(enum nfs4_dl_access acc)
{
	/* RFC 8881 §18.25.4, §18.26.4: "unless the situation can be resolved by sending a notification" */
	switch (acc) {
	case NFS4_DL_ACC_DIR_ADD:
		return NFS4_DL_NOTIFY_ADD;
	case NFS4_DL_ACC_DIR_REMOVE:
		return NFS4_DL_NOTIFY_REMOVE;
	case NFS4_DL_ACC_DIR_RENAME: /* §18.26.4: within one directory, one NOTIFY4_RENAME_ENTRY */
		return NFS4_DL_NOTIFY_RENAME;
	case NFS4_DL_ACC_DIR_ATTRS: /* §20.4.1: NOTIFY4_CHANGE_DIR_ATTRS, the new values */
		return NFS4_DL_NOTIFY_DIR_ATTRS;
	default:
		return 0;
	}
}

bool nfs4_dtab_conflict(struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid,
			enum nfs4_dl_access acc, enum nfs4_dl_cause cause, uint64_t now, uint32_t lease,
			struct nfs4_dl_recall *out, unsigned max, unsigned *n)
{
	bool wait = false;

	*n = 0;
	if (t->count == 0)
		return false;
	for (int32_t i = t->buckets[key_hash(fkey, fkey_len)]; i >= 0; i = t->d[i].next) {
		struct nfs4_dl *d = &t->d[i];

		/* RFC 8881 §10.4: a client's own delegation does not stand in its way;
		 * a read delegation only in the way of writers. */
		if (!key_eq(d, fkey, fkey_len) || d->clientid == clientid || d->state == NFS4_DL_REVOKED ||
		    (acc == NFS4_DL_ACC_READ && !d->write))
			continue;
		/* RFC 8881 §10.9.2: a holder told of the change keeps its delegation (CB_NOTIFY after) */
		if (d->state == NFS4_DL_HELD && (d->notify & nfs4_dl_notify_of(acc)))
			continue;
		if (d->state == NFS4_DL_RECALLED && recall_due(d, now, lease)) {
			dl_revoke(t, d); /* RFC 8881 §10.4.6: the other client proceeds */
			continue;
		}
		if (d->state == NFS4_DL_HELD) {
			/* RFC 8881 §10.4.1, §20.2: recall it; the operation waits (DELAY). */
			dl_recall(t, d, now, cause < NFS4_DL_CAUSES ? cause : NFS4_DL_BY_NFS4);
			d->cb_pending = true;
		}
		wait = true;
		if (d->cb_pending && *n < max)
			recall_out(t, d, &out[(*n)++]);
	}
	return wait;
}

enum nfs4_dl_ga nfs4_dtab_getattr(const struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len,
				  uint64_t clientid, uint64_t *holder, struct nfs4_stateid *sid)
{
	if (t->count == 0)
		return NFS4_DL_GA_NONE;
	for (int32_t i = t->buckets[key_hash(fkey, fkey_len)]; i >= 0; i = t->d[i].next) {
		const struct nfs4_dl *d = &t->d[i];

		if (!key_eq(d, fkey, fkey_len) || !d->write || (clientid && d->clientid == clientid))
			continue;
		if (d->state == NFS4_DL_RECALLED)
			return NFS4_DL_GA_WAIT; /* RFC 8881 §10.4.1: it is being returned */
		if (d->state == NFS4_DL_HELD) {
			*holder = d->clientid;
			sid_of(t, (unsigned)i, sid);
			return NFS4_DL_GA_ASK;
		}
	}
	return NFS4_DL_GA_NONE;
}

void nfs4_dtab_set_base(struct nfs4_dtab *t, const struct nfs4_stateid *sid, uint64_t change, uint64_t size)
{
	struct nfs4_dl *d = dl_of(t, sid);

	if (d && d->state == NFS4_DL_HELD) {
		d->cb_change = d->change_out = change;
		d->cb_size = size;
	}
}

void nfs4_dtab_set_ts(struct nfs4_dtab *t, const struct nfs4_stateid *sid, const struct nfs4_dl_time *atime,
		      const struct nfs4_dl_time *mtime)
{
	struct nfs4_dl *d = dl_of(t, sid);

	if (d && d->state == NFS4_DL_HELD) {
		t->nkind[dl_kind(d)]--;
		d->ts = true;
		t->nkind[NFS4_DL_KIND_ATTR]++;
		d->orig_atime = *atime;
		d->orig_mtime = *mtime;
	}
}

bool nfs4_dtab_is_ts(const struct nfs4_dtab *t, const struct nfs4_stateid *sid)
{
	const struct nfs4_dl *d = dl_of(t, sid);

	return d && (d->state == NFS4_DL_HELD || d->state == NFS4_DL_RECALLED) && d->ts;
}

static int time_cmp(const struct nfs4_dl_time *a, const struct nfs4_dl_time *b)
{
	if (a->sec != b->sec)
		return a->sec < b->sec ? -1 : 1;
	return a->nsec < b->nsec ? -1 : a->nsec > b->nsec;
}

bool nfs4_dl_time_vet(const struct nfs4_dl_time *orig, const struct nfs4_dl_time *now, struct nfs4_dl_time *t)
{
	if (t->nsec > 999999999u || time_cmp(t, orig) < 0)
		return false;
	if (time_cmp(t, now) > 0)
		*t = *now;
	return true;
}

uint32_t nfs4_dtab_set_times(const struct nfs4_dtab *t, uint64_t clientid, const struct nfs4_stateid *sid,
			     uint32_t minor, const uint8_t *fkey, uint32_t fkey_len, const struct nfs4_dl_time *now,
			     struct nfs4_dl_times *tm)
{
	struct nfs4_dl *d = NULL;
	uint32_t status;

	/* RFC 9754 §5: the delegated times are the holder's alone, set with its delegation's stateid. */
	if (!nfs4_dtab_is_deleg(sid))
		return NFS4ERR_BAD_STATEID;
	status = dl_lookup(t, sid, minor, clientid, &d);
	if (status != NFS4_OK)
		return status;
	if (!key_eq(d, fkey, fkey_len) || !d->ts)
		return NFS4ERR_BAD_STATEID;
	if (d->state == NFS4_DL_REVOKED)
		return NFS4ERR_DELEG_REVOKED;
	if (tm->has_atime)
		tm->has_atime = nfs4_dl_time_vet(&d->orig_atime, now, &tm->atime);
	if (tm->has_mtime)
		tm->has_mtime = nfs4_dl_time_vet(&d->orig_mtime, now, &tm->mtime);
	return NFS4_OK;
}

/* RFC 9754 §5: under an *_ATTRS_DELEG delegation the holder's times are the file's. */
static void cb_merge_times(const struct nfs4_dl *d, const struct nfs4_dl_cbattr *cb, const struct nfs4_dl_time *now,
			   struct nfs4_dl_attr *a)
{
	struct nfs4_dl_time at = cb->atime, mt = cb->mtime;

	if (!d->ts)
		return;
	if (cb->has_atime && nfs4_dl_time_vet(&d->orig_atime, now, &at))
		a->atime = at;
	if (cb->has_mtime && nfs4_dl_time_vet(&d->orig_mtime, now, &mt)) {
		a->mtime_sec = mt.sec;
		a->mtime_nsec = mt.nsec;
	}
}

bool nfs4_dtab_cb_merge(struct nfs4_dtab *t, const struct nfs4_stateid *sid, const struct nfs4_dl_cbattr *cb,
			int64_t now_sec, uint32_t now_nsec, struct nfs4_dl_attr *a)
{
	struct nfs4_dl *d = dl_of(t, sid);
	const struct nfs4_dl_time now = { now_sec, now_nsec };

	if (!d || d->state != NFS4_DL_HELD || !d->write)
		return false;
	/* RFC 8881 §10.4.3: a change or size other than the holder's last means
	 * it modified the file (since the grant, or since it last said so). */
	if ((cb->has_change && cb->change != d->cb_change) || (cb->has_size && cb->size != d->cb_size)) {
		if (cb->has_change)
			d->cb_change = cb->change;
		if (cb->has_size)
			d->cb_size = cb->size;
		d->change_out = (d->change_out > a->change ? d->change_out : a->change) + 1;
		d->modified = true;
		d->mod_sec = now_sec;
		d->mod_nsec = now_nsec;
	}
	if (!d->modified) {
		cb_merge_times(d, cb, &now, a);
		return true;
	}
	/* Never below what was reported, nor below the server's own (the holder's WRITEs move it). */
	if (a->change > d->change_out)
		d->change_out = a->change;
	a->change = d->change_out;
	a->size = d->cb_size;
	if (d->mod_sec > a->mtime_sec || (d->mod_sec == a->mtime_sec && d->mod_nsec > a->mtime_nsec)) {
		a->mtime_sec = d->mod_sec;
		a->mtime_nsec = d->mod_nsec;
	}
	cb_merge_times(d, cb, &now, a);
	return true;
}

uint32_t nfs4_dtab_counter_of(const struct nfs4_stateid *sid)
{
	return be32g(sid->other + 8);
}

bool nfs4_dtab_sid_of_counter(const struct nfs4_dtab *t, uint32_t counter, struct nfs4_stateid *sid)
{
	unsigned slot = counter & (NFS4_DELEG_MAX - 1);
	const struct nfs4_dl *d = &t->d[slot];

	if (!(counter & NFS4_STAB_DELEG_BIT) || d->state == NFS4_DL_FREE ||
	    d->gen != ((counter & ~NFS4_STAB_DELEG_BIT) >> NFS4_DELEG_SLOT_BITS))
		return false;
	sid_of(t, slot, sid);
	return true;
}

bool nfs4_dtab_recall_now(struct nfs4_dtab *t, const struct nfs4_stateid *sid, uint64_t now,
			  struct nfs4_dl_recall *r)
{
	struct nfs4_dl *d = dl_of(t, sid);

	if (!d || d->state != NFS4_DL_HELD)
		return false;
	/* RFC 8881 §10.9.2: a change the holder cannot be told of recalls its delegation */
	dl_recall(t, d, now, NFS4_DL_BY_NOTIFY);
	recall_out(t, d, r);
	return true;
}

void nfs4_dtab_recall_unsent(struct nfs4_dtab *t, const struct nfs4_stateid *sid)
{
	struct nfs4_dl *d = dl_of(t, sid);

	if (d && d->state == NFS4_DL_RECALLED)
		d->cb_pending = true;
}

unsigned nfs4_dtab_expire(struct nfs4_dtab *t, uint64_t now, uint32_t lease)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NFS4_DELEG_MAX && t->nrecalled; i++)
		if (t->d[i].state == NFS4_DL_RECALLED && recall_due(&t->d[i], now, lease)) {
			dl_revoke(t, &t->d[i]);
			n++;
		}
	return n;
}

uint32_t nfs4_dtab_return(struct nfs4_dtab *t, uint64_t clientid, uint32_t minor, const struct nfs4_stateid *sid,
			  const uint8_t *fkey, uint32_t fkey_len)
{
	struct nfs4_dl *d = NULL;
	uint32_t status = dl_lookup(t, sid, minor, clientid, &d);

	if (status != NFS4_OK)
		return status;
	/* RFC 8881 §18.6.3: the current filehandle is the delegated file. */
	if (fkey && !key_eq(d, fkey, fkey_len))
		return NFS4ERR_BAD_STATEID;
	/* RFC 8881 §18.6.3, §10.4.6: a revoked one is freed by FREE_STATEID. */
	if (d->state == NFS4_DL_REVOKED)
		return dl_revoked_status(d);
	dl_free(t, d);
	t->returned++;
	return NFS4_OK;
}

uint32_t nfs4_dtab_test(const struct nfs4_dtab *t, uint64_t clientid, const struct nfs4_stateid *sid)
{
	struct nfs4_dl *d = NULL;
	uint32_t status = dl_lookup(t, sid, 1, clientid, &d);

	if (status != NFS4_OK)
		return status;
	return d->state == NFS4_DL_REVOKED ? dl_revoked_status(d) : NFS4_OK; /* RFC 8881 §18.48.3 */
}

uint32_t nfs4_dtab_free(struct nfs4_dtab *t, uint64_t clientid, const struct nfs4_stateid *sid)
{
	struct nfs4_dl *d = NULL;
	uint32_t status = dl_lookup(t, sid, 1, clientid, &d);

	if (status != NFS4_OK)
		return status;
	/* RFC 8881 §18.38.3: a delegation still held goes by DELEGRETURN. */
	if (d->state != NFS4_DL_REVOKED)
		return NFS4ERR_LOCKS_HELD;
	dl_free(t, d);
	return NFS4_OK;
}

uint32_t nfs4_dtab_check_io(const struct nfs4_dtab *t, uint64_t clientid, const struct nfs4_stateid *sid,
			    uint32_t minor, const uint8_t *fkey, uint32_t fkey_len, uint32_t access)
{
	struct nfs4_dl *d = NULL;
	/* RFC 8881 §8.2.2: only its client may use a delegation stateid. */
	uint32_t status = dl_lookup(t, sid, minor, clientid, &d);

	if (status != NFS4_OK)
		return status;
	if (!key_eq(d, fkey, fkey_len))
		return NFS4ERR_BAD_STATEID;
	if (d->state == NFS4_DL_REVOKED)
		return dl_revoked_status(d);
	/* RFC 8881 §9.1.3: a read delegation's stateid does not allow WRITE. */
	return (access & NFS4_SHARE_ACCESS_WRITE) && !d->write ? NFS4ERR_OPENMODE : NFS4_OK;
}

uint32_t nfs4_dtab_check_claim(const struct nfs4_dtab *t, uint64_t clientid, const struct nfs4_stateid *sid,
			       const uint8_t *fkey, uint32_t fkey_len)
{
	struct nfs4_dl *d = NULL;
	uint32_t status = dl_lookup(t, sid, 1, clientid, &d);

	if (status != NFS4_OK)
		return status;
	return key_eq(d, fkey, fkey_len) && d->state != NFS4_DL_REVOKED ? NFS4_OK : NFS4ERR_BAD_STATEID;
}

uint32_t nfs4_dtab_client_revoked(const struct nfs4_dtab *t, uint64_t clientid)
{
	uint32_t flags = 0;

	for (unsigned i = 0; i < NFS4_DELEG_MAX && t->nrevoked; i++)
		if (t->d[i].state == NFS4_DL_REVOKED && t->d[i].clientid == clientid)
			/* RFC 8881 §18.46.3: which of the two revocations the client has to free */
			flags |= t->d[i].admin ? SEQ4_STATUS_ADMIN_STATE_REVOKED : SEQ4_STATUS_RECALLABLE_STATE_REVOKED;
	return flags;
}

unsigned nfs4_dtab_revoke_files(struct nfs4_dtab *t, bool (*match)(const uint8_t *key, uint32_t len, void *arg),
				void *arg)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NFS4_DELEG_MAX && t->count; i++) {
		struct nfs4_dl *d = &t->d[i];

		if ((d->state != NFS4_DL_HELD && d->state != NFS4_DL_RECALLED) || !match(d->fkey, d->fkey_len, arg))
			continue;
		if (d->state == NFS4_DL_HELD) { /* revoked without a recall: nothing to recall it to */
			d->state = NFS4_DL_RECALLED;
			t->nrecalled++;
		}
		dl_revoke(t, d);
		d->admin = true; /* RFC 8881 §15.1.5.1: revoked by an administrator, not by a recall */
		t->revoked_admin++;
		n++;
	}
	return n;
}

void nfs4_dtab_purge_client(struct nfs4_dtab *t, uint64_t clientid)
{
	for (unsigned i = 0; i < NFS4_DELEG_MAX && t->count; i++)
		if (t->d[i].state != NFS4_DL_FREE && t->d[i].clientid == clientid)
			dl_free(t, &t->d[i]);
}

unsigned nfs4_dtab_holders(const struct nfs4_dtab *t, uint64_t *ids, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NFS4_DELEG_MAX && t->count && n < max; i++) {
		const struct nfs4_dl *d = &t->d[i];
		bool seen = false;

		if (d->state != NFS4_DL_HELD)
			continue;
		for (unsigned j = 0; j < n && !seen; j++)
			seen = ids[j] == d->clientid;
		if (!seen)
			ids[n++] = d->clientid;
	}
	return n;
}

void nfs4_dtab_counts(const struct nfs4_dtab *t, struct nfs4_dl_counts *out)
{
	for (unsigned k = 0; k < NFS4_DL_KINDS; k++)
		out->kind[k] = t->nkind[k];
	for (unsigned c = 0; c < NFS4_DL_CAUSES; c++) {
		out->recalls_by[c] = t->recalls_by[c];
		out->dir_recalls_by[c] = t->dir_recalls_by[c];
	}
	out->revoked_unanswered = t->revoked - t->revoked_admin;
	out->revoked_admin = t->revoked_admin;
}
