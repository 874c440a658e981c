/*
 * nfs4_offload.c - the asynchronous COPY table and the synchronous copies'
 * worker shares (see nfs4_offload.h): pure, the caller holds their lock.
 */
#include <string.h>

#include "nfs/v4/state/nfs4_offload.h"

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

void nfs4_offload_init(struct nfs4_offload_tab *t, uint32_t boot)
{
	memset(t, 0, sizeof(*t));
	t->boot = boot;
}

unsigned nfs4_offload_count(const struct nfs4_offload_tab *t, uint64_t clientid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NFS4_OFFLOAD_MAX; i++)
		if (t->e[i].state != NFS4_OFFLOAD_FREE && (!clientid || t->e[i].clientid == clientid))
			n++;
	return n;
}

int nfs4_offload_create(struct nfs4_offload_tab *t, uint64_t clientid, uint64_t total)
{
	struct nfs4_offload *o = NULL;

	if (nfs4_offload_count(t, clientid) >= NFS4_OFFLOAD_PER_CLIENT)
		return -1;
	for (unsigned i = 0; i < NFS4_OFFLOAD_MAX && !o; i++)
		if (t->e[i].state == NFS4_OFFLOAD_FREE)
			o = &t->e[i];
	if (!o)
		return -1;
	memset(o, 0, sizeof(*o));
	o->state = NFS4_OFFLOAD_RUNNING;
	o->clientid = clientid;
	o->total = total;
	/* RFC 7862 §4.8: the copy stateid is the server's, unique within the boot (RFC 8881 §8.2). */
	o->sid.seqid = 1;
	put32(o->sid.other, t->boot);
	put32(o->sid.other + 4, (uint32_t)clientid);
	t->counter = (t->counter + 1) & 0x7fffffffu;
	put32(o->sid.other + 8, 0x80000000u | t->counter);
	return (int)(o - t->e);
}

/* RFC 7862 §15.8.3, §15.9.3: a stateid that names no copy (another client's,
 * cancelled, unknown) is NFS4ERR_BAD_STATEID at the caller. The seqid is not
 * compared: the copy stateid never changes (seqid 1). */
int nfs4_offload_find(const struct nfs4_offload_tab *t, uint64_t clientid, const struct nfs4_stateid *sid)
{
	for (unsigned i = 0; i < NFS4_OFFLOAD_MAX; i++) {
		const struct nfs4_offload *o = &t->e[i];

		if (o->state != NFS4_OFFLOAD_FREE && !o->cancelled && o->clientid == clientid &&
		    memcmp(o->sid.other, sid->other, NFS4_OTHER_SIZE) == 0)
			return (int)i;
	}
	return -1;
}

void nfs4_offload_progress(struct nfs4_offload_tab *t, int i, uint64_t done)
{
	if (t->e[i].state == NFS4_OFFLOAD_RUNNING)
		t->e[i].done = done;
}

bool nfs4_offload_cancel(struct nfs4_offload_tab *t, int i)
{
	struct nfs4_offload *o = &t->e[i];

	if (o->state != NFS4_OFFLOAD_RUNNING || o->cancelled)
		return false;
	o->cancelled = true;
	return true;
}

void nfs4_offload_complete(struct nfs4_offload_tab *t, int i, uint32_t status, uint32_t committed, uint64_t now)
{
	struct nfs4_offload *o = &t->e[i];

	if (o->state != NFS4_OFFLOAD_RUNNING)
		return;
	o->state = NFS4_OFFLOAD_DONE;
	o->status = status;
	o->committed = committed;
	o->done_at = now;
	if (o->orphaned) /* the client went while it ran: nobody to tell */
		o->state = NFS4_OFFLOAD_FREE;
}

void nfs4_offload_release(struct nfs4_offload_tab *t, int i)
{
	if (t->e[i].state == NFS4_OFFLOAD_DONE)
		t->e[i].state = NFS4_OFFLOAD_FREE;
}

unsigned nfs4_offload_client_gone(struct nfs4_offload_tab *t, uint64_t clientid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NFS4_OFFLOAD_MAX; i++) {
		struct nfs4_offload *o = &t->e[i];

		if (o->state == NFS4_OFFLOAD_FREE || o->clientid != clientid)
			continue;
		n++;
		if (o->state == NFS4_OFFLOAD_DONE) {
			o->state = NFS4_OFFLOAD_FREE;
		} else {
			o->cancelled = true;
			o->orphaned = true;
		}
	}
	return n;
}

unsigned nfs4_offload_reap(struct nfs4_offload_tab *t, uint64_t now, uint64_t lease_ms)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NFS4_OFFLOAD_MAX; i++) {
		struct nfs4_offload *o = &t->e[i];

		if (o->state == NFS4_OFFLOAD_DONE && now - o->done_at > lease_ms) {
			o->state = NFS4_OFFLOAD_FREE;
			n++;
		}
	}
	return n;
}

static unsigned clamp(unsigned v, unsigned lo, unsigned hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void nfs4_copy_share_init(struct nfs4_copy_share *s, unsigned max, unsigned per_client)
{
	memset(s, 0, sizeof(*s));
	s->max = clamp(max, 1, NFS4_COPY_SHARE_MAX);
	s->per_client = clamp(per_client, 1, s->max);
}

bool nfs4_copy_share_get(struct nfs4_copy_share *s, uint64_t clientid)
{
	unsigned mine = 0;

	for (unsigned i = 0; i < s->n; i++)
		mine += s->holder[i] == clientid;
	if (s->n >= s->max || mine >= s->per_client) {
		s->refused++;
		return false;
	}
	s->holder[s->n++] = clientid;
	return true;
}

void nfs4_copy_share_put(struct nfs4_copy_share *s, uint64_t clientid)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->holder[i] == clientid) {
			s->holder[i] = s->holder[--s->n];
			return;
		}
}
