/*
 * nfs4_deleg_watch.c - the backend's change watches of delegated files
 * (be_watch): a local process that changes a file with a read delegation,
 * or opens one with a write delegation, recalls it as another client's
 * conflicting call would (RFC 8881 §10.4.1: the server recalls when "another
 * client" -- here, anyone not going through rnfsd -- wants a conflicting
 * access). The event comes after the fact (inotify): the local process is
 * not held back, the holder is told at once.
 *
 * Where the backend has leases (be_lease_set: the local one), each watched
 * file also holds one, read or write as its delegations are: a local
 * process's conflicting open or truncate then waits in the kernel, rnfsd is
 * told at once (w_broken) and recalls; the lease goes when the file has no
 * delegation held or being recalled (nfs4_deleg_watch_sweep(), after a
 * return, a revocation, a purge), which lets the local process proceed. A
 * delegation whose lease cannot be had is not granted (RFC 8881 §10.4: the
 * server need not grant one): EAGAIN when rnfsd's or anyone's descriptors
 * of the file forbid it. rename(2), unlink(2) and link(2) do not break an
 * fcntl lease (only knfsd's own delegations): those stay after the fact.
 *
 * A delegated directory (RFC 8881 §10.9) has a watch of its entries and
 * attributes (BE_WATCH_DIR) and no lease; its events (an entry's, its own
 * attributes') go to the hooks' dir_event, which notifies or recalls its
 * directory delegations, after the fact; the rest recall.
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
	int lid;          /* the file's lease (be_lease_set), -1: none */
	bool lease_write; /* ... a write lease */
	bool dir;         /* a directory's (BE_WATCH_DIR): its attribute events go to dir_event too */
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

/* w_mu held: the lease goes (the local process waiting on it proceeds). */
static void w_unlease(struct dl_watch *w)
{
	if (w->lid >= 0 && w->ops->lease_unset)
		(void)w->ops->lease_unset(w->lid);
	w->lid = -1;
}

static void w_drop(struct dl_watch *w)
{
	w_unlease(w);
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

static void w_recall(const uint8_t *fkey, uint32_t fkey_len, bool lease)
{
	const struct nfs4_deleg_watch_hooks *h = atomic_load(&w_hooks);

	if (h)
		(lease && h->broken ? h->broken : h->changed)(fkey, fkey_len);
}

/* A directory's entry added, removed or renamed, or its attributes changed: told to the directory
 * delegations (their holders notified or recalled); anything else (a file's attributes too) recalls. */
static void w_tell(const uint8_t *fkey, uint32_t fkey_len, bool dir, const struct be_change *c)
{
	const struct nfs4_deleg_watch_hooks *h = atomic_load(&w_hooks);
	bool entry = c->kind != BE_CHANGE_OTHER && c->kind != BE_CHANGE_ATTRS && c->name;

	if (h && h->dir_event && (entry || (dir && c->kind == BE_CHANGE_ATTRS)))
		h->dir_event(fkey, fkey_len, c);
	else
		w_recall(fkey, fkey_len, false);
}

/* The backend's event: the delegations of the file are recalled (from
 * anyone: client 0) or, a directory's entry changed, its holders told; or
 * its watch goes if it has none left. */
static void w_changed(const struct be_change *c)
{
	int wd = c->wd;
	bool gone = c->gone;

	uint8_t fkey[NFS4_DELEG_FKEY_MAX];
	uint32_t len;
	bool dir;

	pthread_mutex_lock(&w_mu);
	for (unsigned i = 0; i < NFS4_DELEG_MAX && w_used; i++) {
		struct dl_watch *w = &w_tab[i];

		if (!w->ops || (wd >= 0 && w->wd != wd))
			continue;
		len = w->fkey_len;
		memcpy(fkey, w->fkey, len);
		dir = w->dir;
		if (gone) {
			w_unlease(w);
			w->ops = NULL; /* the kernel took it away (file removed) */
			w_used--;
		} else if (!w_held(fkey, len)) {
			w_drop(w);
			continue;
		}
		pthread_mutex_unlock(&w_mu);
		w_tell(fkey, len, dir, c);
		pthread_mutex_lock(&w_mu);
		if (wd >= 0)
			break;
	}
	pthread_mutex_unlock(&w_mu);
}

/* The backend's lease break: a local process waits to open or truncate the
 * file; its delegations are recalled (from anyone: client 0). */
static void w_broken(int lid)
{
	uint8_t fkey[NFS4_DELEG_FKEY_MAX];
	uint32_t len = 0;

	pthread_mutex_lock(&w_mu);
	for (unsigned i = 0; i < NFS4_DELEG_MAX && w_used && !len; i++) {
		if (w_tab[i].ops && w_tab[i].lid == lid) {
			len = w_tab[i].fkey_len;
			memcpy(fkey, w_tab[i].fkey, len);
		}
	}
	pthread_mutex_unlock(&w_mu);
	if (len)
		w_recall(fkey, len, true);
}

static void w_listen(void)
{
	be_change_listen(w_changed);
	be_lease_listen(w_broken);
}

void nfs4_deleg_watch_sweep(void)
{
	pthread_mutex_lock(&w_mu);
	for (unsigned i = 0; i < NFS4_DELEG_MAX && w_used; i++)
		if (w_tab[i].ops && w_tab[i].lid >= 0 && !w_held(w_tab[i].fkey, w_tab[i].fkey_len))
			w_unlease(&w_tab[i]);
	pthread_mutex_unlock(&w_mu);
}

unsigned nfs4_deleg_watch_leases(void)
{
	unsigned n = 0;

	pthread_mutex_lock(&w_mu);
	for (unsigned i = 0; i < NFS4_DELEG_MAX && w_used; i++)
		n += w_tab[i].ops && w_tab[i].lid >= 0;
	pthread_mutex_unlock(&w_mu);
	return n;
}

/* w_mu held: the file's lease for a delegation of this kind (a write lease
 * serves a read one too); one of the other kind is released first (the file
 * has no delegation it served: a write delegation is granted alone). */
static int w_lease(struct be_fs *fs, struct dl_watch *w, struct be_file *f, bool write)
{
	int err;

	if (!fs->ops->lease_set)
		return 0; /* the watch alone (no lease in this backend) */
	if (w->lid >= 0 && (w->lease_write || !write))
		return 0;
	w_unlease(w);
	if (!f)
		return EAGAIN;
	err = be_lease_set(fs, f, write, &w->lid);
	if (err)
		w->lid = -1;
	w->lease_write = write;
	return err;
}

/* Watch o (kind) for the delegations of fkey; with lease, lease it through f too (w_lease). */
static int w_add(struct be_fs *fs, const struct be_obj *o, unsigned kind, const uint8_t *fkey, uint32_t fkey_len,
		 struct be_file *f, bool lease, bool write)
{
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
	if (!w && (w = w_slot()) != NULL) {
		w_used++;
		w->lid = -1;
	}
	if (w) {
		int lid = w->lid;
		bool lease_write = w->lease_write;

		*w = (struct dl_watch){ .ops = fs->ops, .wd = wd, .lid = lid, .lease_write = lease_write,
					.dir = (kind & BE_WATCH_DIR) != 0, .fkey_len = fkey_len };
		memcpy(w->fkey, fkey, fkey_len);
		err = lease ? w_lease(fs, w, f, write) : 0;
	} else {
		(void)fs->ops->unwatch(wd);
		err = ENOSPC;
	}
	pthread_mutex_unlock(&w_mu);
	return err;
}

int nfs4_deleg_watch(struct be_fs *fs, const struct be_obj *o, struct be_file *f, const uint8_t *fkey,
		     uint32_t fkey_len, bool write)
{
	return w_add(fs, o, write ? BE_WATCH_OPENS : BE_WATCH_CHANGES, fkey, fkey_len, f, true, write);
}

/* RFC 8881 §10.9: a directory delegation is recalled when a local process changes the
 * directory's entries or attributes, told after the fact (Linux has no leases on directories:
 * F_SETLEASE wants a regular file), so the change is not held back. */
int nfs4_deleg_watch_dir(struct be_fs *fs, const struct be_obj *o, const uint8_t *fkey, uint32_t fkey_len)
{
	return w_add(fs, o, BE_WATCH_DIR, fkey, fkey_len, NULL, false, false);
}
