/*
 * nlm_table.c - NLM lock owners, the files they hold locks on, blocked
 * waiters and share reservations (nlm_table.h). Pure: no I/O, no locking;
 * linear scans over arrays allocated once (the tables are small: one entry
 * per locking process and file, per blocked lock).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nlm/nlm_table.h"

int nlm_table_init(struct nlm_table *t, unsigned owners, unsigned held, unsigned waiters, unsigned shares)
{
	memset(t, 0, sizeof(*t));
	t->owners = calloc(owners, sizeof(*t->owners));
	t->held = calloc(held, sizeof(*t->held));
	t->waiters = calloc(waiters, sizeof(*t->waiters));
	t->shares = calloc(shares, sizeof(*t->shares));
	if (!t->owners || !t->held || !t->waiters || !t->shares) {
		nlm_table_free(t);
		return ENOMEM;
	}
	t->n_owners = owners;
	t->n_held = held;
	t->n_waiters = waiters;
	t->n_shares = shares;
	return 0;
}

void nlm_table_free(struct nlm_table *t)
{
	free(t->owners);
	free(t->held);
	free(t->waiters);
	free(t->shares);
	memset(t, 0, sizeof(*t));
}

/* XNFS §10.2: l_len 0 means "to the end of the file"; ranges that overflow reach the end too. */
static uint64_t range_end(uint64_t o, uint64_t l)
{
	return l == 0 || l > UINT64_MAX - o ? UINT64_MAX : o + l;
}

bool nlm_range_overlap(uint64_t o1, uint64_t l1, uint64_t o2, uint64_t l2)
{
	return o1 < range_end(o2, l2) && o2 < range_end(o1, l1);
}

bool nlm_fh_set(struct nlm_fh *fh, const uint8_t *p, uint32_t len)
{
	if (len == 0 || len > NLM_FH_MAX)
		return false;
	memset(fh, 0, sizeof(*fh));
	fh->len = len;
	memcpy(fh->data, p, len);
	return true;
}

bool nlm_fh_eq(const struct nlm_fh *a, const struct nlm_fh *b)
{
	return a->len == b->len && !memcmp(a->data, b->data, a->len);
}

static bool owner_match(const struct nlm_owner *o, const char *host, uint32_t host_len, int32_t svid,
			const uint8_t *oh, uint32_t oh_len)
{
	return o->used && o->svid == svid && o->host_len == host_len && o->oh_len == oh_len &&
	       !memcmp(o->host, host, host_len) && (oh_len == 0 || !memcmp(o->oh, oh, oh_len));
}

static bool host_is(const struct nlm_owner *o, const char *host, uint32_t host_len)
{
	return o->used && o->host_len == host_len && !memcmp(o->host, host, host_len);
}

int nlm_owner_get(struct nlm_table *t, const char *host, uint32_t host_len, int32_t svid, const uint8_t *oh,
		  uint32_t oh_len, bool create, unsigned *slot)
{
	int free_slot = -1;
	unsigned of_host = 0;

	if (host_len > NLM_HOST_MAX || oh_len > NLM_OH_MAX)
		return ENAMETOOLONG;
	for (unsigned i = 0; i < t->n_owners; i++) {
		if (owner_match(&t->owners[i], host, host_len, svid, oh, oh_len)) {
			*slot = i;
			return 0;
		}
		if (!t->owners[i].used && free_slot < 0)
			free_slot = (int)i;
		of_host += host_is(&t->owners[i], host, host_len);
	}
	if (!create)
		return ENOENT;
	if (free_slot < 0 || (t->max_per_host && of_host >= t->max_per_host))
		return ENOLCK;
	struct nlm_owner *o = &t->owners[free_slot];
	uint32_t gen = o->gen + 1;

	memset(o, 0, sizeof(*o));
	o->used = true;
	o->gen = gen;
	o->svid = svid;
	o->host_len = host_len;
	o->oh_len = oh_len;
	memcpy(o->host, host, host_len);
	if (oh_len)
		memcpy(o->oh, oh, oh_len);
	*slot = (unsigned)free_slot;
	return 0;
}

uint64_t nlm_owner_id(const struct nlm_table *t, unsigned slot)
{
	return 1ull << 63 | (uint64_t)(t->owners[slot].gen & 0x7fffffffu) << 32 | (slot + 1u);
}

int nlm_owner_by_id(const struct nlm_table *t, uint64_t id)
{
	uint32_t low = (uint32_t)id;

	if (!(id >> 63) || low == 0 || low > t->n_owners)
		return -1;
	return t->owners[low - 1].used && nlm_owner_id(t, low - 1) == id ? (int)(low - 1) : -1;
}

void nlm_owner_put(struct nlm_table *t, unsigned slot)
{
	struct nlm_owner *o = &t->owners[slot];

	if (o->used && o->refs == 0)
		o->used = false;
}

bool nlm_owner_of_host(const struct nlm_table *t, unsigned slot, const char *host, uint32_t host_len)
{
	return host_is(&t->owners[slot], host, host_len);
}

void nlm_table_counts(const struct nlm_table *t, unsigned *owners, unsigned *held)
{
	*owners = *held = 0;
	for (unsigned i = 0; i < t->n_owners; i++)
		*owners += t->owners[i].used;
	for (unsigned i = 0; i < t->n_held; i++)
		*held += t->held[i].used;
}

static void owner_unref(struct nlm_table *t, unsigned slot)
{
	if (t->owners[slot].refs)
		t->owners[slot].refs--;
	nlm_owner_put(t, slot);
}

int nlm_held_add(struct nlm_table *t, unsigned owner, const struct nlm_fh *fh)
{
	const struct nlm_owner *o = &t->owners[owner];
	int free_slot = -1;
	unsigned of_host = 0;

	for (unsigned i = 0; i < t->n_held; i++) {
		if (t->held[i].used && t->held[i].owner == owner && nlm_fh_eq(&t->held[i].fh, fh))
			return 0;
		if (!t->held[i].used && free_slot < 0)
			free_slot = (int)i;
		of_host += t->held[i].used && host_is(&t->owners[t->held[i].owner], o->host, o->host_len);
	}
	if (free_slot < 0 || (t->max_per_host && of_host >= t->max_per_host))
		return ENOLCK;
	t->held[free_slot] = (struct nlm_held){ .used = true, .owner = owner, .fh = *fh };
	t->owners[owner].refs++;
	return 0;
}

bool nlm_held_del(struct nlm_table *t, unsigned owner, const struct nlm_fh *fh)
{
	for (unsigned i = 0; i < t->n_held; i++) {
		if (t->held[i].used && t->held[i].owner == owner && nlm_fh_eq(&t->held[i].fh, fh)) {
			t->held[i].used = false;
			owner_unref(t, owner);
			return true;
		}
	}
	return false;
}

int nlm_waiter_add(struct nlm_table *t, const struct nlm_waiter *w, unsigned *idx, bool *is_new)
{
	int free_slot = -1;

	for (unsigned i = 0; i < t->n_waiters; i++) {
		const struct nlm_waiter *x = &t->waiters[i];

		if (x->state != NLM_W_FREE && x->owner == w->owner && nlm_fh_eq(&x->fh, &w->fh) &&
		    x->offset == w->offset && x->length == w->length && x->exclusive == w->exclusive) {
			*idx = i;
			*is_new = false;
			return 0;
		}
		if (x->state == NLM_W_FREE && free_slot < 0)
			free_slot = (int)i;
	}
	if (free_slot < 0)
		return ENOLCK;
	t->waiters[free_slot] = *w;
	t->waiters[free_slot].state = NLM_W_WAITING;
	t->owners[w->owner].refs++;
	*idx = (unsigned)free_slot;
	*is_new = true;
	return 0;
}

int nlm_waiter_find(const struct nlm_table *t, unsigned owner, const struct nlm_fh *fh, uint64_t offset,
		    uint64_t length)
{
	for (unsigned i = 0; i < t->n_waiters; i++) {
		const struct nlm_waiter *x = &t->waiters[i];

		if (x->state != NLM_W_FREE && x->owner == owner && nlm_fh_eq(&x->fh, fh) && x->offset == offset &&
		    x->length == length)
			return (int)i;
	}
	return -1;
}

void nlm_waiter_del(struct nlm_table *t, unsigned idx)
{
	struct nlm_waiter *w = &t->waiters[idx];

	if (w->state == NLM_W_FREE)
		return;
	w->state = NLM_W_FREE;
	owner_unref(t, w->owner);
}

int nlm_waiter_next(const struct nlm_table *t, unsigned from, enum nlm_waiter_state st, const struct nlm_fh *fh)
{
	for (unsigned i = from; i < t->n_waiters; i++)
		if (t->waiters[i].state == st && (!fh || nlm_fh_eq(&t->waiters[i].fh, fh)))
			return (int)i;
	return -1;
}

/* XNFS §10.3: a reservation conflicts when one side's access meets the other's deny mode. */
int nlm_share_add(struct nlm_table *t, unsigned owner, const struct nlm_fh *fh, uint32_t mode, uint32_t access)
{
	int free_slot = -1, mine = -1;

	for (unsigned i = 0; i < t->n_shares; i++) {
		const struct nlm_share *s = &t->shares[i];

		if (!s->used) {
			if (free_slot < 0)
				free_slot = (int)i;
			continue;
		}
		if (!nlm_fh_eq(&s->fh, fh))
			continue;
		if (s->owner == owner) {
			mine = (int)i;
			continue;
		}
		if ((s->mode & access) || (mode & s->access))
			return EAGAIN;
	}
	if (mine >= 0) {
		t->shares[mine].mode = mode;
		t->shares[mine].access = access;
		return 0;
	}
	if (free_slot < 0)
		return ENOLCK;
	t->shares[free_slot] = (struct nlm_share){ .used = true, .owner = owner, .fh = *fh, .mode = mode,
						   .access = access };
	t->owners[owner].refs++;
	return 0;
}

void nlm_share_del(struct nlm_table *t, unsigned owner, const struct nlm_fh *fh)
{
	for (unsigned i = 0; i < t->n_shares; i++) {
		if (t->shares[i].used && t->shares[i].owner == owner && nlm_fh_eq(&t->shares[i].fh, fh)) {
			t->shares[i].used = false;
			owner_unref(t, owner);
		}
	}
}

/* What a release takes: the owner's host, or the file's export (nlm_host_release, nlm_fh_release). */
struct release_sel {
	const char *host;
	uint32_t host_len;
	bool (*match)(const struct nlm_fh *fh, void *arg);
	void *marg;
};

static bool release_sel(const struct nlm_table *t, const struct release_sel *s, unsigned owner,
			const struct nlm_fh *fh)
{
	return s->match ? s->match(fh, s->marg) : nlm_owner_of_host(t, owner, s->host, s->host_len);
}

static unsigned release_where(struct nlm_table *t, const struct release_sel *s,
			      void (*fn)(const struct nlm_fh *fh, uint64_t owner_id, void *arg), void *arg)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->n_waiters; i++)
		if (t->waiters[i].state != NLM_W_FREE && release_sel(t, s, t->waiters[i].owner, &t->waiters[i].fh))
			nlm_waiter_del(t, i);
	for (unsigned i = 0; i < t->n_shares; i++)
		if (t->shares[i].used && release_sel(t, s, t->shares[i].owner, &t->shares[i].fh)) {
			t->shares[i].used = false;
			owner_unref(t, t->shares[i].owner);
		}
	for (unsigned i = 0; i < t->n_held; i++) {
		struct nlm_held *h = &t->held[i];

		if (!h->used || !release_sel(t, s, h->owner, &h->fh))
			continue;
		if (fn)
			fn(&h->fh, nlm_owner_id(t, h->owner), arg);
		h->used = false;
		owner_unref(t, h->owner);
		n++;
	}
	return n;
}

unsigned nlm_host_release(struct nlm_table *t, const char *host, uint32_t host_len,
			  void (*fn)(const struct nlm_fh *fh, uint64_t owner_id, void *arg), void *arg)
{
	const struct release_sel s = { .host = host, .host_len = host_len };

	return release_where(t, &s, fn, arg);
}

unsigned nlm_fh_release(struct nlm_table *t, bool (*match)(const struct nlm_fh *fh, void *arg), void *marg,
			void (*fn)(const struct nlm_fh *fh, uint64_t owner_id, void *arg), void *arg)
{
	const struct release_sel s = { .match = match, .marg = marg };

	return release_where(t, &s, fn, arg);
}
