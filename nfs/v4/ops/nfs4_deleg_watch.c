/*
 * nfs4_deleg_watch.c - the backend's change watches of delegated files
 * (be_watch): a local process that changes a file with a read delegation,
 * or opens one with a write delegation, recalls it as another client's
 * conflicting call would (RFC 8881 §10.4.1: the server recalls when "another
 * client" -- here, anyone not going through rnfsd -- wants a conflicting
 * access). The event comes after the fact (inotify): the local process is
 * not held back, the holder is told at once.
 *
 * A table of up to NFS4_DELEG_MAX watches (wd -> the file's handle bytes),
 * one per delegated file; a watch stays while the file has delegations and
 * goes at its next event after that (or when the table is full and a new
 * one needs its room). Its own mutex; asks the delegations (nfs4_proc_deleg.c)
 * only through the hooks they gave (nfs4_deleg_watch_hooks(): whether a file
 * is still delegated, and its recall), the recall outside the mutex.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "backend/backend.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/state/nfs4_deleg.h"

struct dl_watch {
	const struct be_ops *ops; /* NULL: a free slot; unwatch needs no instance */
	int wd;
	uint32_t fkey_len;
	uint8_t fkey[NFS4_DELEG_FKEY_MAX];
};

static pthread_mutex_t w_mu = PTHREAD_MUTEX_INITIALIZER;
static struct dl_watch w_tab[NFS4_DELEG_MAX];
static unsigned w_used;
static pthread_once_t w_once = PTHREAD_ONCE_INIT;
static const struct nfs4_deleg_watch_hooks *_Atomic w_hooks; /* nfs4_deleg_watch_hooks() */

void nfs4_deleg_watch_hooks(const struct nfs4_deleg_watch_hooks *h)
{
	atomic_store(&w_hooks, h);
}

/* Is the file still delegated (no hooks: nothing is)? */
static bool w_held(const uint8_t *fkey, uint32_t fkey_len)
{
	const struct nfs4_deleg_watch_hooks *h = atomic_load(&w_hooks);

	return h && h->held(fkey, fkey_len);
}

static struct dl_watch *w_find_wd(int wd)
{
	for (unsigned i = 0; i < NFS4_DELEG_MAX && w_used; i++)
		if (w_tab[i].ops && w_tab[i].wd == wd)
			return &w_tab[i];
	return NULL;
}

static void w_drop(struct dl_watch *w)
{
	(void)w->ops->unwatch(w->wd);
	w->ops = NULL;
	w_used--;
}

/* A free slot; when full, one whose file has no delegation any more is freed. w_mu held. */
static struct dl_watch *w_slot(void)
{
	struct dl_watch *spare = NULL;

	for (unsigned i = 0; i < NFS4_DELEG_MAX; i++) {
		if (!w_tab[i].ops)
			return &w_tab[i];
		if (!spare && !w_held(w_tab[i].fkey, w_tab[i].fkey_len))
			spare = &w_tab[i];
	}
	if (spare)
		w_drop(spare);
	return spare;
}

static void w_recall(const uint8_t *fkey, uint32_t fkey_len)
{
	const struct nfs4_deleg_watch_hooks *h = atomic_load(&w_hooks);

	if (h)
		h->changed(fkey, fkey_len);
}

/* The backend's event: the delegations of the file are recalled (from
 * anyone: client 0), or its watch goes if it has none left. */
static void w_changed(int wd, bool gone)
{
	uint8_t fkey[NFS4_DELEG_FKEY_MAX];
	uint32_t len;

	pthread_mutex_lock(&w_mu);
	for (unsigned i = 0; i < NFS4_DELEG_MAX && w_used; i++) {
		struct dl_watch *w = &w_tab[i];

		if (!w->ops || (wd >= 0 && w->wd != wd))
			continue;
		len = w->fkey_len;
		memcpy(fkey, w->fkey, len);
		if (gone) {
			w->ops = NULL; /* the kernel took it away (file removed) */
			w_used--;
		} else if (!w_held(fkey, len)) {
			w_drop(w);
			continue;
		}
		pthread_mutex_unlock(&w_mu);
		w_recall(fkey, len);
		pthread_mutex_lock(&w_mu);
		if (wd >= 0)
			break;
	}
	pthread_mutex_unlock(&w_mu);
}

static void w_listen(void)
{
	be_change_listen(w_changed);
}

int nfs4_deleg_watch(struct be_fs *fs, const struct be_obj *o, const uint8_t *fkey, uint32_t fkey_len, bool write)
{
	unsigned kind = write ? BE_WATCH_OPENS : BE_WATCH_CHANGES;
	struct dl_watch *w;
	int wd, err;

	if (fkey_len > NFS4_DELEG_FKEY_MAX || !fs->ops->unwatch)
		return EOPNOTSUPP;
	pthread_once(&w_once, w_listen);
	err = be_watch(fs, o, kind, &wd);
	if (err)
		return err;
	pthread_mutex_lock(&w_mu);
	w = w_find_wd(wd); /* the file watched already (the same wd): its kind is now this one */
	if (!w && (w = w_slot()) != NULL)
		w_used++;
	if (w) {
		*w = (struct dl_watch){ .ops = fs->ops, .wd = wd, .fkey_len = fkey_len };
		memcpy(w->fkey, fkey, fkey_len);
	} else {
		(void)fs->ops->unwatch(wd);
		err = ENOSPC;
	}
	pthread_mutex_unlock(&w_mu);
	return err;
}
