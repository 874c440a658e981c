/*
 * lock_share.c - the locks of the owners sharing one open file description
 * (lock_share.h): an unordered array of pieces; a lock or unlock works on a
 * copy (on the stack, no allocation) and is committed only if it fits.
 * Tables are small (LKS_MAX): linear scans and an insertion sort.
 */
#include <errno.h>
#include <string.h>

#include "backend/local/lock_share.h"

/* Room for one split beyond the bound while working on a copy. */
struct lks_work {
	unsigned n;
	struct lks_ent e[LKS_MAX + 2];
};

static bool overlaps(const struct lks_ent *x, uint64_t start, uint64_t end)
{
	return x->start < end && start < x->end;
}

const struct lks_ent *lks_conflict(const struct lks_table *t, uint64_t owner, uint8_t type, uint64_t start,
				   uint64_t end)
{
	for (unsigned i = 0; i < t->n; i++) {
		const struct lks_ent *x = &t->e[i];

		if (x->owner != owner && overlaps(x, start, end) && (type == LKS_WRITE || x->type == LKS_WRITE))
			return x;
	}
	return NULL;
}

bool lks_holds(const struct lks_table *t, uint64_t owner)
{
	for (unsigned i = 0; i < t->n; i++)
		if (t->e[i].owner == owner)
			return true;
	return false;
}

static void w_drop(struct lks_work *w, unsigned i)
{
	w->e[i] = w->e[--w->n];
}

/* Owner's pieces lose [start, end): trimmed, split or dropped. False: past LKS_MAX + 1 pieces. */
static bool w_cut(struct lks_work *w, uint64_t owner, uint64_t start, uint64_t end)
{
	for (unsigned i = 0; i < w->n;) {
		struct lks_ent *x = &w->e[i];

		if (x->owner != owner || !overlaps(x, start, end)) {
			i++;
			continue;
		}
		if (x->start < start && x->end > end) { /* the middle goes: two pieces */
			if (w->n > LKS_MAX)
				return false;
			w->e[w->n] = *x;
			w->e[w->n].start = end;
			w->n++;
			x->end = start;
			i++;
		} else if (x->start < start) {
			x->end = start, i++;
		} else if (x->end > end) {
			x->start = end, i++;
		} else {
			w_drop(w, i); /* the last piece moved here: looked at next */
		}
	}
	return true;
}

static int w_commit(struct lks_table *t, const struct lks_work *w)
{
	if (w->n > LKS_MAX)
		return ENOLCK;
	t->n = w->n;
	memcpy(t->e, w->e, w->n * sizeof(w->e[0]));
	return 0;
}

void lks_copy(struct lks_table *dst, const struct lks_table *src)
{
	dst->n = src->n;
	memcpy(dst->e, src->e, src->n * sizeof(src->e[0]));
}

static void w_load(struct lks_work *w, const struct lks_table *t)
{
	w->n = t->n;
	memcpy(w->e, t->e, t->n * sizeof(t->e[0]));
}

int lks_set(struct lks_table *t, uint64_t owner, uint8_t type, uint64_t start, uint64_t end)
{
	struct lks_work w;
	struct lks_ent nw = { .owner = owner, .start = start, .end = end, .type = type };

	if (start >= end)
		return 0;
	w_load(&w, t);
	if (!w_cut(&w, owner, start, end))
		return ENOLCK;
	/* POSIX: the owner's touching pieces of the same type become one (none overlap any more). */
	for (unsigned i = 0; i < w.n;) {
		struct lks_ent *x = &w.e[i];

		if (x->owner == owner && x->type == type && (x->end == nw.start || x->start == nw.end)) {
			nw.start = x->start < nw.start ? x->start : nw.start;
			nw.end = x->end > nw.end ? x->end : nw.end;
			w_drop(&w, i);
		} else {
			i++;
		}
	}
	w.e[w.n++] = nw;
	return w_commit(t, &w);
}

int lks_unset(struct lks_table *t, uint64_t owner, uint64_t start, uint64_t end)
{
	struct lks_work w;

	if (start >= end)
		return 0;
	w_load(&w, t);
	if (!w_cut(&w, owner, start, end))
		return ENOLCK;
	return w_commit(t, &w);
}

/* The table's starts and ends within [lo, hi], with lo and hi, sorted, each once, into p; their number. */
static unsigned points(const struct lks_table *t, uint64_t lo, uint64_t hi, uint64_t *p)
{
	unsigned n = 0;

	p[n++] = lo;
	p[n++] = hi;
	for (unsigned i = 0; i < t->n; i++) {
		if (t->e[i].start > lo && t->e[i].start < hi)
			p[n++] = t->e[i].start;
		if (t->e[i].end > lo && t->e[i].end < hi)
			p[n++] = t->e[i].end;
	}
	for (unsigned i = 1; i < n; i++) /* insertion sort: n <= 2 * LKS_MAX + 2 */
		for (unsigned j = i; j > 0 && p[j - 1] > p[j]; j--) {
			uint64_t s = p[j];

			p[j] = p[j - 1];
			p[j - 1] = s;
		}
	unsigned u = 0;

	for (unsigned i = 0; i < n; i++)
		if (u == 0 || p[u - 1] != p[i])
			p[u++] = p[i];
	return u;
}

/* The strongest type held on [start, end), a piece between two adjacent points (wholly in or out of each lock). */
static uint8_t type_at(const struct lks_table *t, uint64_t start, uint64_t end)
{
	uint8_t type = LKS_NONE;

	for (unsigned i = 0; i < t->n; i++)
		if (overlaps(&t->e[i], start, end) && t->e[i].type > type)
			type = t->e[i].type;
	return type;
}

/* The pieces of [lo, hi) by the strongest type held, touching ones of one type merged, into out;
 * LKS_NONE pieces too if with_none. Their number. */
static unsigned profile(const struct lks_table *t, uint64_t lo, uint64_t hi, bool with_none, struct lks_ent *out)
{
	uint64_t p[2 * LKS_MAX + 2];
	unsigned np = points(t, lo, hi, p), n = 0;

	for (unsigned i = 0; i + 1 < np; i++) {
		uint8_t type = type_at(t, p[i], p[i + 1]);

		if (type == LKS_NONE && !with_none)
			continue;
		if (n && out[n - 1].end == p[i] && out[n - 1].type == type)
			out[n - 1].end = p[i + 1];
		else
			out[n++] = (struct lks_ent){ .owner = 0, .start = p[i], .end = p[i + 1], .type = type };
	}
	return n;
}

unsigned lks_gaps(const struct lks_table *t, uint64_t start, uint64_t end, struct lk_range *out)
{
	struct lks_ent prof[2 * LKS_MAX + 1];
	unsigned n = 0, np;

	if (start >= end)
		return 0;
	np = profile(t, start, end, true, prof);
	for (unsigned i = 0; i < np; i++)
		if (prof[i].type == LKS_NONE)
			out[n++] = (struct lk_range){ prof[i].start, prof[i].end };
	return n;
}

unsigned lks_union(const struct lks_table *t, struct lks_ent *out)
{
	return profile(t, 0, LK_RANGE_EOF, false, out);
}
