/*
 * nfs4_lockwait.c - waiters for blocking NFSv4.1+ locks (see nfs4_lockwait.h): pure.
 */
#include <string.h>

#include "nfs/v4/state/nfs4_lockwait.h"

void nfs4_lockwait_init(struct nfs4_lockwait_tab *t)
{
	memset(t, 0, sizeof(*t));
}

unsigned nfs4_lockwait_count(const struct nfs4_lockwait_tab *t, uint64_t clientid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NFS4_LOCKWAIT_MAX; i++)
		if (t->e[i].used && (!clientid || t->e[i].clientid == clientid))
			n++;
	return n;
}

static bool same(const struct nfs4_lockwait *a, const struct nfs4_lockwait *b)
{
	return a->clientid == b->clientid && a->fh_len == b->fh_len && !memcmp(a->fh, b->fh, a->fh_len) &&
	       a->owner_clientid == b->owner_clientid && a->owner_len == b->owner_len &&
	       !memcmp(a->owner, b->owner, a->owner_len);
}

bool nfs4_lockwait_add(struct nfs4_lockwait_tab *t, const struct nfs4_lockwait *w, uint64_t now)
{
	struct nfs4_lockwait *slot = NULL;

	if (w->fh_len > NFS4_LOCKWAIT_FH_MAX || w->owner_len > NFS4_LOCKWAIT_OWNER_MAX)
		return false;
	for (unsigned i = 0; i < NFS4_LOCKWAIT_MAX; i++) {
		if (t->e[i].used && same(&t->e[i], w)) {
			t->e[i].since = now; /* the client asked again: it still waits */
			return true;
		}
		if (!t->e[i].used && !slot)
			slot = &t->e[i];
	}
	if (!slot || nfs4_lockwait_count(t, w->clientid) >= NFS4_LOCKWAIT_PER_CLIENT)
		return false;
	*slot = *w;
	slot->used = true;
	slot->since = now;
	return true;
}

unsigned nfs4_lockwait_take(struct nfs4_lockwait_tab *t, const uint8_t *fh, uint32_t fh_len, struct nfs4_lockwait *out,
			    unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NFS4_LOCKWAIT_MAX && n < max; i++) {
		struct nfs4_lockwait *w = &t->e[i];

		if (!w->used || (fh && (w->fh_len != fh_len || memcmp(w->fh, fh, fh_len))))
			continue;
		out[n++] = *w;
		w->used = false;
	}
	return n;
}

unsigned nfs4_lockwait_client_gone(struct nfs4_lockwait_tab *t, uint64_t clientid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NFS4_LOCKWAIT_MAX; i++)
		if (t->e[i].used && t->e[i].clientid == clientid) {
			t->e[i].used = false;
			n++;
		}
	return n;
}

unsigned nfs4_lockwait_expire(struct nfs4_lockwait_tab *t, uint64_t now, uint64_t lease)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NFS4_LOCKWAIT_MAX; i++)
		if (t->e[i].used && now - t->e[i].since > lease) {
			t->e[i].used = false;
			n++;
		}
	return n;
}
