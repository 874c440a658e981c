/*
 * nfs4_ga_wait.c - the CB_GETATTR waiter table (RFC 8881 §10.4.3): fixed
 * slots taken by a worker that asks a write-delegation holder, freed by
 * whichever of the worker (answered, or never sent) and the callback's
 * done() (abandoned) comes last. Pure: the caller holds its lock. The
 * states and bounds are in nfs4_ga_wait.h.
 */
#include <string.h>

#include "nfs/v4/state/nfs4_ga_wait.h"

static void ga_free(struct nfs4_ga_tab *t, struct nfs4_ga_wait *w)
{
	w->used = false;
	t->used--;
}

struct nfs4_ga_wait *nfs4_ga_take(struct nfs4_ga_tab *t)
{
	for (unsigned i = 0; i < NFS4_GA_WAITERS; i++) {
		struct nfs4_ga_wait *w = &t->w[i];

		if (!w->used) {
			memset(w, 0, sizeof(*w));
			w->used = true;
			t->used++;
			return w;
		}
	}
	return NULL;
}

void nfs4_ga_put(struct nfs4_ga_tab *t, struct nfs4_ga_wait *w)
{
	ga_free(t, w);
}

bool nfs4_ga_done(struct nfs4_ga_tab *t, struct nfs4_ga_wait *w, int32_t status)
{
	if (w->abandoned) {
		ga_free(t, w);
		return false;
	}
	w->status = status;
	w->answered = true;
	return true;
}

bool nfs4_ga_finish(struct nfs4_ga_tab *t, struct nfs4_ga_wait *w, bool *ok, struct nfs4_cb_getattr_res *out)
{
	if (!w->answered) {
		w->abandoned = true;
		return false;
	}
	*ok = w->status == 0;
	*out = w->res;
	ga_free(t, w);
	return true;
}

unsigned nfs4_ga_count(const struct nfs4_ga_tab *t)
{
	return t->used;
}
