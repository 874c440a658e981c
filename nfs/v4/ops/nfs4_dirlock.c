/*
 * nfs4_dirlock.c - rnfsd's changes to one directory, one at a time, so that
 * each change's change_info4 can be atomic (RFC 8881 §3.3.6).
 *
 * A client whose cached change attribute of a directory equals a reply's
 * "before", with atomic set, takes "after" as the directory's new value and
 * keeps its cached names and access rights; without atomic the Linux client
 * drops them, and its next unlink in that directory costs an ACCESS and a
 * LOOKUP more (3 round trips where knfsd's clients need 1). knfsd holds the
 * directory's lock across the change and its attribute reads; a userspace
 * server cannot hold the kernel's, so this table holds rnfsd's: every
 * change through rnfsd (CREATE, OPEN with create, REMOVE, RENAME, LINK)
 * takes its directory's stripe, reads "before", changes, reads "after".
 * Another rnfsd client's change can then never fall between the two.
 *
 * What it cannot exclude: a local process changing the directory within
 * those microseconds (the client would miss that change until the
 * directory changes again; NFSv3's wcc data trusts the same window), and
 * other servers of a cluster file system, for which no reply says atomic
 * (be_fs.one_server). Stripes are hashed by fileid: two directories may
 * share one (a little serialisation, never a wrong answer). RENAME takes
 * both of its directories' stripes, the lower first.
 */
#include "nfs/v4/xdr/nfs4_mod.h"

#include <pthread.h>

#define NFS4_DIRLOCK_STRIPES 256u

static pthread_mutex_t dirlock_stripe[NFS4_DIRLOCK_STRIPES] = {
	[0 ... NFS4_DIRLOCK_STRIPES - 1] = PTHREAD_MUTEX_INITIALIZER,
};

unsigned nfs4_dirlock_stripe(uint64_t fileid)
{
	return (unsigned)((fileid * 0x9e3779b97f4a7c15ull) >> 56) % NFS4_DIRLOCK_STRIPES;
}

void nfs4_dirlock_take(struct nfs4_dirlock *h, uint64_t dir, const uint64_t *dir2)
{
	unsigned a = nfs4_dirlock_stripe(dir), b = dir2 ? nfs4_dirlock_stripe(*dir2) : a;

	h->first = a < b ? a : b;
	h->second = a == b ? -1 : (int)(a < b ? b : a);
	pthread_mutex_lock(&dirlock_stripe[h->first]);
	if (h->second >= 0)
		pthread_mutex_lock(&dirlock_stripe[h->second]);
	h->held = true;
}

void nfs4_dirlock_drop(struct nfs4_dirlock *h)
{
	if (!h->held)
		return;
	if (h->second >= 0)
		pthread_mutex_unlock(&dirlock_stripe[h->second]);
	pthread_mutex_unlock(&dirlock_stripe[h->first]);
	h->held = false;
}
