/*
 * ceph_fs.c - the "ceph" driver: one instance per export of a CephFS
 * directory (the export's path, inside the file system named by rnfsd.conf's
 * [ceph] fs-name), each with its own libcephfs mount rooted there.
 *
 * Bounded start-up and reload: ceph_mount() waits for the monitors, the MDS
 * map and the root's attributes, and only the first of these is bounded by
 * client_mount_timeout. The mount therefore runs on a helper thread that the
 * opener waits for at most mount-timeout seconds; a mount still running then
 * is abandoned (it releases itself if it ever finishes) and the export is
 * reported as not served, as a local export whose root cannot be opened.
 * Operations after the mount are bounded by rados_osd_op_timeout and
 * rados_mon_op_timeout (op-timeout): libcephfs then answers ETIMEDOUT, which
 * NFSv3 answers as NFS3ERR_JUKEBOX (nfs/common/errmap.c). Requests the MDS
 * must journal are not bounded by libcephfs and cannot be cancelled: the
 * gate of ceph_gated.c bounds how many worker threads they can hold.
 *
 * Handles are the inode number and the snapshot id (CEPH_NOSNAP for the
 * live file system): the same in every rnfsd instance over the same file
 * system and across restarts; ceph_ll_lookup_vino finds them again, asking
 * the MDS when the inode is not in this client's cache.
 *
 * Confinement: a directory found by handle is walked up ("..") as the server
 * until the export's root (inside) or the file system's root (outside:
 * ESTALE), unless the export is the whole file system.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "backend/ceph/ceph.h"
#include "core/log.h"

/* Deepest directory the confinement walk follows up to the root. */
#define CEPH_WALK_MAX 256
/* The inode number of a CephFS file system's root (CEPH_INO_ROOT in Ceph's own headers). */
#define CEPH_ROOT_INO 1u
/* Identities cached per worker thread. */
#define CEPH_PERM_SLOTS 8u
/* Seconds past mount-timeout (libcephfs's own client_mount_timeout) before a mount is abandoned:
 * an unreachable monitor then fails inside libcephfs, cleanly. */
#define CEPH_MOUNT_GRACE 2u
/* Seconds the driver's shutdown waits for abandoned mounts and unmounts. */
#define CEPH_HELPERS_WAIT 5

static struct log_limit ceph_fs_limit;

/* ---- errors, types, attributes ---- */

int ceph_err(int r)
{
	if (r >= 0)
		return 0;
	switch (-r) {
	case ESHUTDOWN:  /* evicted (blocklisted) or unmounted: nothing the client can retry */
	case ENOTCONN:
		log_limited(&ceph_fs_limit, LOG_ERR, "ceph: the mount is gone (%s)", strerror(-r));
		return EIO;
	default:
		return -r;
	}
}

int ceph_io_err(struct ceph_fs *cf, int r)
{
	int err = ceph_err(r);

	if (err == ETIMEDOUT || err == EIO)
		atomic_store(&cf->sick, true);
	return err;
}

static struct be_time ceph_time(const struct timespec *ts)
{
	return (struct be_time){ .sec = ts->tv_sec, .nsec = (uint32_t)ts->tv_nsec };
}

void ceph_attr_from_statx(const struct ceph_fs *cf, struct be_attr *a, const struct ceph_statx *stx)
{
	a->valid = BE_AT_BASIC;
	a->type = be_type_of_mode(stx->stx_mode);
	a->mode = stx->stx_mode & 07777u;
	a->nlink = stx->stx_nlink;
	a->uid = stx->stx_uid;
	a->gid = stx->stx_gid;
	a->size = stx->stx_size;
	a->space_used = stx->stx_blocks * 512u;
	a->rdev_major = ceph_rdev_major(stx->stx_rdev);
	a->rdev_minor = ceph_rdev_minor(stx->stx_rdev);
	a->fsid_major = cf->fsid;
	a->fsid_minor = stx->stx_dev; /* the snapshot: each is its own file system to clients */
	a->fileid = stx->stx_ino;
	a->atime = ceph_time(&stx->stx_atime);
	a->mtime = ceph_time(&stx->stx_mtime);
	a->ctime = ceph_time(&stx->stx_ctime);
	if (stx->stx_mask & CEPH_STATX_BTIME) {
		a->btime = ceph_time(&stx->stx_btime);
		a->valid |= BE_AT_BTIME;
	}
	/* Ceph's change attribute when the MDS gave it, else ctime (as knfsd without i_version). */
	a->change = stx->stx_mask & CEPH_STATX_VERSION ? stx->stx_version :
		(uint64_t)stx->stx_ctime.tv_sec * 1000000000u + (uint64_t)stx->stx_ctime.tv_nsec;
}

void ceph_obj_set(struct be_obj *o, struct Inode *in, const struct ceph_statx *stx)
{
	o->h = (intptr_t)in;
	o->type = be_type_of_mode(stx->stx_mode);
	o->fileid = stx->stx_ino;
}

int ceph_getattr_in(struct ceph_fs *cf, struct Inode *in, struct be_attr *out)
{
	struct ceph_statx stx;
	int r = ceph_ll_getattr(cf->cmount, in, &stx, CEPH_WANT, AT_SYMLINK_NOFOLLOW, cf->server);

	if (r < 0) {
		out->valid = 0;
		return ceph_err(r);
	}
	ceph_attr_from_statx(cf, out, &stx);
	return 0;
}

uint32_t ceph_mode_access(const struct ceph_statx *stx, const struct be_cred *cr, uint32_t want)
{
	uint32_t mode = stx->stx_mode, bits, granted = 0;
	bool dir = S_ISDIR(mode), in_group = stx->stx_gid == cr->gid;

	for (uint32_t i = 0; i < cr->ngroups && i < BE_CRED_MAX_GROUPS && !in_group; i++)
		in_group = cr->groups[i] == stx->stx_gid;
	if (cr->uid == 0) /* root: everything but executing a file nobody may execute */
		bits = 07 & (dir || (mode & 0111) ? 07 : 06);
	else if (cr->uid == stx->stx_uid)
		bits = (mode >> 6) & 07;
	else if (in_group)
		bits = (mode >> 3) & 07;
	else
		bits = mode & 07;
	if (bits & 04)
		granted |= BE_ACCESS_READ;
	if (bits & 02)
		granted |= dir ? BE_ACCESS_MODIFY | BE_ACCESS_EXTEND | BE_ACCESS_DELETE :
			BE_ACCESS_MODIFY | BE_ACCESS_EXTEND;
	if (bits & 01)
		granted |= dir ? BE_ACCESS_LOOKUP : BE_ACCESS_EXECUTE;
	if (stx->stx_dev != CEPH_NOSNAP) /* a snapshot is read-only */
		granted &= ~(BE_ACCESS_MODIFY | BE_ACCESS_EXTEND | BE_ACCESS_DELETE);
	return granted & want;
}

/* ---- the caller's identity ---- */

/* libcephfs keeps the group list's pointer (UserPerm does not copy it): it lives here. */
struct ceph_perm_slot {
	struct be_cred cr;
	gid_t gids[BE_CRED_MAX_GROUPS];
	UserPerm *perm;
};

struct ceph_perm_cache {
	struct ceph_perm_slot slot[CEPH_PERM_SLOTS];
	unsigned next; /* the slot replaced next (round robin) */
};

static __thread struct ceph_perm_cache *ceph_perms;
static pthread_key_t ceph_perm_key;
static pthread_once_t ceph_perm_once = PTHREAD_ONCE_INIT;

static void ceph_perm_cache_free(void *p)
{
	struct ceph_perm_cache *pc = p;

	for (unsigned i = 0; i < CEPH_PERM_SLOTS; i++)
		if (pc->slot[i].perm)
			ceph_userperm_destroy(pc->slot[i].perm);
	free(pc);
}

static void ceph_perm_key_init(void)
{
	(void)pthread_key_create(&ceph_perm_key, ceph_perm_cache_free);
}

static bool ceph_cred_equal(const struct be_cred *a, const struct be_cred *b)
{
	return a->uid == b->uid && a->gid == b->gid && a->ngroups == b->ngroups &&
	       !memcmp(a->groups, b->groups, a->ngroups * sizeof(a->groups[0]));
}

/*
 * One UserPerm per identity a worker thread serves, made once and kept for
 * the thread's life (a handful of slots, round robin): the hot path is a
 * comparison, no allocation.
 */
UserPerm *ceph_perm(const struct be_cred *cr)
{
	struct ceph_perm_cache *pc = ceph_perms;
	struct ceph_perm_slot *s;
	uint32_t n = cr->ngroups < BE_CRED_MAX_GROUPS ? cr->ngroups : BE_CRED_MAX_GROUPS;

	if (!pc) {
		pthread_once(&ceph_perm_once, ceph_perm_key_init);
		pc = calloc(1, sizeof(*pc));
		if (!pc)
			return NULL;
		ceph_perms = pc;
		(void)pthread_setspecific(ceph_perm_key, pc);
	}
	for (unsigned i = 0; i < CEPH_PERM_SLOTS; i++)
		if (pc->slot[i].perm && ceph_cred_equal(&pc->slot[i].cr, cr))
			return pc->slot[i].perm;
	s = &pc->slot[pc->next];
	pc->next = (pc->next + 1) % CEPH_PERM_SLOTS;
	if (s->perm)
		ceph_userperm_destroy(s->perm);
	s->cr = *cr;
	s->cr.ngroups = n;
	for (uint32_t i = 0; i < n; i++)
		s->gids[i] = cr->groups[i];
	s->perm = ceph_userperm_new(cr->uid, cr->gid, (int)n, n ? s->gids : NULL);
	return s->perm;
}

/* ---- handles and objects ---- */

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

void ceph_handle_encode(uint64_t ino, uint64_t snap, struct be_handle *h)
{
	h->len = CEPH_HANDLE_LEN;
	put_be64(h->data, ino);
	put_be64(h->data + 8, snap);
}

int ceph_handle_decode(const struct be_handle *h, uint64_t *ino, uint64_t *snap)
{
	if (h->len != CEPH_HANDLE_LEN)
		return BE_EBADHANDLE;
	*ino = get_be64(h->data);
	*snap = get_be64(h->data + 8);
	return *ino ? 0 : BE_EBADHANDLE;
}

/* Is the directory in beneath the export's root? As the server, walking "..". */
static bool ceph_confined(struct ceph_fs *cf, struct Inode *in, uint64_t ino)
{
	struct Inode *cur = in, *up;
	struct ceph_statx stx;
	bool inside = false;

	if (cf->root_ino == CEPH_ROOT_INO || ino == cf->root_ino)
		return true;
	for (int depth = 0; depth < CEPH_WALK_MAX; depth++) {
		if (ceph_ll_lookup(cf->cmount, cur, "..", &up, &stx, CEPH_STATX_INO, 0, cf->server) < 0)
			break;
		if (cur != in)
			ceph_rel_put(cf, cur);
		cur = up;
		if (stx.stx_ino == cf->root_ino) {
			inside = true;
			break;
		}
		if (stx.stx_ino == ino || stx.stx_ino == CEPH_ROOT_INO)
			break; /* the file system's root: outside */
		ino = stx.stx_ino;
	}
	if (cur != in)
		ceph_rel_put(cf, cur);
	return inside;
}

int ceph_inode_by_handle(struct ceph_fs *cf, uint64_t ino, uint64_t snap, struct Inode **out,
			 struct ceph_statx *stx)
{
	vinodeno_t vino = { .ino = { .val = ino }, .snapid = { .val = snap } };
	struct Inode *in = NULL;
	int r;

	r = ceph_ll_lookup_vino(cf->cmount, vino, &in);
	if (r < 0)
		return r == -ENOENT || r == -ESTALE || r == -EINVAL ? ESTALE : ceph_err(r);
	r = ceph_ll_getattr(cf->cmount, in, stx, CEPH_WANT, AT_SYMLINK_NOFOLLOW, cf->server);
	if (r == 0 && stx->stx_nlink == 0)
		r = -ESTALE; /* removed, but still in some client's cache */
	if (r == 0 && S_ISDIR(stx->stx_mode) && !ceph_confined(cf, in, ino))
		r = -ESTALE;
	if (r < 0) {
		ceph_rel_put(cf, in);
		return r == -ENOENT ? ESTALE : ceph_err(r);
	}
	*out = in;
	return 0;
}

int cephbe_root(struct be_fs *fs, struct be_obj *out, struct be_attr *attr)
{
	struct ceph_fs *cf = ceph_fs(fs);
	struct ceph_statx stx;
	struct Inode *in;
	int r;

	r = ceph_ll_getattr(cf->cmount, cf->root, &stx, CEPH_WANT, AT_SYMLINK_NOFOLLOW, cf->server);
	if (r == 0)
		r = ceph_ll_lookup_root(cf->cmount, &in); /* a new reference */
	if (r < 0)
		return ceph_err(r);
	ceph_obj_set(out, in, &stx);
	if (attr)
		ceph_attr_from_statx(cf, attr, &stx);
	return 0;
}

int cephbe_open_handle(struct be_fs *fs, const struct be_handle *h, struct be_obj *out, struct be_attr *attr)
{
	struct ceph_fs *cf = ceph_fs(fs);
	struct ceph_statx stx;
	struct Inode *in;
	uint64_t ino, snap;
	int err = ceph_handle_decode(h, &ino, &snap);

	if (!err)
		err = ceph_inode_by_handle(cf, ino, snap, &in, &stx);
	if (err)
		return err;
	ceph_obj_set(out, in, &stx);
	if (attr)
		ceph_attr_from_statx(cf, attr, &stx);
	return 0;
}

int cephbe_handle(struct be_fs *fs, const struct be_obj *o, struct be_handle *out)
{
	struct ceph_fs *cf = ceph_fs(fs);
	struct ceph_statx stx;
	int r = ceph_ll_getattr(cf->cmount, ceph_in(o), &stx, CEPH_STATX_INO, AT_STATX_DONT_SYNC, cf->server);

	if (r < 0)
		return ceph_err(r);
	ceph_handle_encode(stx.stx_ino, stx.stx_dev, out); /* stx_dev: the snapshot id */
	return 0;
}

int cephbe_obj_dup(struct be_fs *fs, const struct be_obj *o, struct be_obj *out)
{
	struct ceph_fs *cf = ceph_fs(fs);
	struct ceph_statx stx;
	struct Inode *in;
	int r;

	r = ceph_ll_getattr(cf->cmount, ceph_in(o), &stx, CEPH_STATX_INO, AT_STATX_DONT_SYNC, cf->server);
	if (r < 0)
		return ceph_err(r);
	/* o's reference keeps the inode in the cache: this only counts one more */
	in = ceph_ll_get_inode(cf->cmount, (vinodeno_t){ .ino = { stx.stx_ino }, .snapid = { stx.stx_dev } });
	if (!in)
		return ESTALE;
	*out = *o;
	out->h = (intptr_t)in;
	return 0;
}

void cephbe_obj_put(struct be_fs *fs, struct be_obj *o)
{
	if (be_obj_valid(o))
		ceph_rel_put(ceph_fs(fs), ceph_in(o));
	*o = (struct be_obj)BE_OBJ_INIT;
}

/* MOUNT: a directory below the root by a relative path, as the server, no symlinks. */
int cephbe_lookup_path(struct be_fs *fs, const char *path, struct be_obj *out, struct be_attr *attr)
{
	struct ceph_fs *cf = ceph_fs(fs);
	struct be_obj cur = BE_OBJ_INIT;
	char comp[BE_NAME_MAX + 1];
	int err = cephbe_root(fs, &cur, attr);

	while (!err && *path) {
		const char *slash = strchr(path, '/');
		size_t n = slash ? (size_t)(slash - path) : strlen(path);
		struct ceph_statx stx;
		struct Inode *next;
		int r;

		if (n == 0 || (n == 1 && path[0] == '.')) {
			path += n + (slash != NULL);
			continue;
		}
		if (n > BE_NAME_MAX || (n == 2 && !memcmp(path, "..", 2))) {
			err = EACCES;
			break;
		}
		memcpy(comp, path, n);
		comp[n] = '\0';
		r = ceph_ll_lookup(cf->cmount, ceph_in(&cur), comp, &next, &stx, CEPH_WANT, AT_SYMLINK_NOFOLLOW,
				   cf->server);
		if (r < 0) {
			err = ceph_err(r);
			break;
		}
		cephbe_obj_put(fs, &cur);
		ceph_obj_set(&cur, next, &stx);
		if (!S_ISDIR(stx.stx_mode))
			err = S_ISLNK(stx.stx_mode) ? EACCES : ENOTDIR;
		else if (attr)
			ceph_attr_from_statx(cf, attr, &stx);
		path += n + (slash != NULL);
	}
	if (err)
		cephbe_obj_put(fs, &cur);
	else
		*out = cur;
	return err;
}

/* ---- instances ---- */

enum ceph_bounded_op { CEPH_MOUNT, CEPH_UNMOUNT, CEPH_ABORT };
#define CEPH_ABANDONED (-100000) /* ceph_bounded(): gave up waiting; not an errno */
static int ceph_bounded(struct ceph_mount_info *cmount, const char *path, enum ceph_bounded_op op, unsigned secs);

/* ---- releases (ceph_release.h) ---- */

/* The release thread: one item, in the order queued. */
static void ceph_rel_run(void *ctx, const struct ceph_release_item *it)
{
	struct ceph_fs *cf = ctx;

	switch (it->kind) {
	case CEPH_REL_CLOSE:
		ceph_ll_close(cf->cmount, it->ptr);
		break;
	case CEPH_REL_PUT:
		ceph_ll_put(cf->cmount, it->ptr);
		break;
	case CEPH_REL_RELEASEDIR:
		ceph_ll_releasedir(cf->cmount, it->ptr);
		break;
	case CEPH_REL_TEST:
		break;
	}
}

/* Queue a release. A full ring means the thread has been inside one release while
 * CEPH_RELEASE_SLOTS more came: the caller waits as long as the gate lets a call wait for a
 * slot (a busy cluster), then the reference is leaked rather than the worker held (a hung
 * one): libcephfs keeps an inode or an open file it would have dropped, nothing else. */
static void ceph_rel(struct ceph_fs *cf, enum ceph_release_kind kind, void *ptr)
{
	uint64_t leaked;

	if (ceph_release_push(&cf->rel, kind, ptr, CEPH_GATE_PATIENCE_NS))
		return;
	ceph_release_counts(&cf->rel, NULL, &leaked);
	log_limited(&ceph_fs_limit, LOG_WARNING, "ceph: export %s: the release queue is full (a release has "
		    "not returned): a reference is left to libcephfs (%llu so far)", cf->path,
		    (unsigned long long)leaked);
}

void ceph_rel_close(struct ceph_fs *cf, struct Fh *fh)
{
	ceph_rel(cf, CEPH_REL_CLOSE, fh);
}

void ceph_rel_put(struct ceph_fs *cf, struct Inode *in)
{
	ceph_rel(cf, CEPH_REL_PUT, in);
}

void ceph_rel_releasedir(struct ceph_fs *cf, struct ceph_dir_result *dirp)
{
	ceph_rel(cf, CEPH_REL_RELEASEDIR, dirp);
}

/* Run what is queued (the root's reference last) and stop the release thread within mount-timeout.
 * false: a release is still inside libcephfs: the mount and cf stay as they are (the thread uses
 * both; it finishes on its own or the process exits). */
static bool ceph_rel_stop(struct ceph_fs *cf)
{
	unsigned queued;

	if (!cf->rel_started)
		return true;
	if (cf->root)
		ceph_rel_put(cf, cf->root);
	if (ceph_release_stop(&cf->rel, (uint64_t)cf->secs * 1000000000u)) {
		ceph_release_destroy(&cf->rel);
		return true;
	}
	ceph_release_counts(&cf->rel, &queued, NULL);
	log_warn("ceph: export %s: a release has been inside libcephfs for more than mount-timeout %u s: "
		 "the mount is left to it (%u releases not run)", cf->path, cf->secs, queued);
	return false;
}

void ceph_fs_put(struct ceph_fs *cf)
{
	if (atomic_fetch_sub(&cf->refs, 1) != 1)
		return;
	if (!ceph_rel_stop(cf))
		return;
	/* A cluster that stopped answering would hold an unmount for minutes
	 * (dirty data, the MDS session): after a timeout the session is dropped
	 * instead (what was not committed was never promised stable, RFC 1813
	 * §3.3.7), and any unmount gives up after mount-timeout (shutdown and
	 * reload never hang on Ceph); an abandoned one finishes on its own. */
	if (ceph_bounded(cf->cmount, NULL, atomic_load(&cf->sick) ? CEPH_ABORT : CEPH_UNMOUNT, cf->secs) !=
	    CEPH_ABANDONED)
		ceph_release(cf->cmount);
	pthread_mutex_destroy(&cf->fcache_lock);
	ceph_gate_destroy(&cf->gate);
	free(cf);
}

void cephbe_close(struct be_fs *fs)
{
	struct ceph_fs *cf = ceph_fs(fs);

	cephbe_fcache_flush(cf);
	ceph_fs_put(cf);
}

/* A mount or unmount in progress on its helper thread; whoever finishes last (caller or helper) frees it. */
struct ceph_mounting {
	pthread_mutex_t lock;
	pthread_cond_t done_cv;
	enum ceph_bounded_op op;
	bool done, abandoned;
	int rc;
	struct ceph_mount_info *cmount;
	char path[PATH_MAX];
};

static void ceph_mounting_free(struct ceph_mounting *m)
{
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->done_cv);
	free(m);
}

/* Helpers still running (abandoned included): the driver's shutdown waits for them a while, since
 * a libcephfs thread still running while the process exits aborts it (its globals are gone). */
static pthread_mutex_t ceph_helpers_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ceph_helpers_cv = PTHREAD_COND_INITIALIZER;
static unsigned ceph_helpers;

static void ceph_helper_done(void)
{
	pthread_mutex_lock(&ceph_helpers_lock);
	ceph_helpers--;
	pthread_cond_broadcast(&ceph_helpers_cv);
	pthread_mutex_unlock(&ceph_helpers_lock);
}

/* The driver's shutdown: wait up to CEPH_HELPERS_WAIT seconds for helpers still at work. */
static void ceph_driver_shutdown(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CEPH_HELPERS_WAIT;
	pthread_mutex_lock(&ceph_helpers_lock);
	while (ceph_helpers > 0 && pthread_cond_timedwait(&ceph_helpers_cv, &ceph_helpers_lock, &until) == 0)
		;
	pthread_mutex_unlock(&ceph_helpers_lock);
}

static void *ceph_mount_thread(void *arg)
{
	struct ceph_mounting *m = arg;
	int rc = m->op == CEPH_MOUNT ? ceph_mount(m->cmount, m->path) :
		m->op == CEPH_UNMOUNT ? ceph_unmount(m->cmount) : ceph_abort_conn(m->cmount);
	bool abandoned;

	pthread_mutex_lock(&m->lock);
	m->rc = rc;
	m->done = true;
	abandoned = m->abandoned;
	pthread_cond_signal(&m->done_cv);
	pthread_mutex_unlock(&m->lock);
	if (abandoned) { /* the caller gave up long ago: undo quietly */
		if (rc == 0 && m->op == CEPH_MOUNT)
			ceph_unmount(m->cmount);
		ceph_release(m->cmount);
		ceph_mounting_free(m);
	}
	ceph_helper_done();
	return NULL;
}

/* ceph_mount(cmount, path) / ceph_unmount / ceph_abort_conn for at most secs seconds: 0, a
 * negative errno, or CEPH_ABANDONED (the helper then owns cmount and releases it when done). */
static int ceph_bounded(struct ceph_mount_info *cmount, const char *path, enum ceph_bounded_op op, unsigned secs)
{
	struct ceph_mounting *m = calloc(1, sizeof(*m));
	struct timespec until;
	pthread_t t;
	int rc;

	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->done_cv, &ca);
	pthread_condattr_destroy(&ca);
	m->cmount = cmount;
	m->op = op;
	snprintf(m->path, sizeof(m->path), "%s", path ? path : "");
	pthread_mutex_lock(&ceph_helpers_lock);
	ceph_helpers++;
	pthread_mutex_unlock(&ceph_helpers_lock);
	if (pthread_create(&t, NULL, ceph_mount_thread, m) != 0) {
		ceph_helper_done();
		ceph_mounting_free(m);
		return -EAGAIN;
	}
	pthread_detach(t);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += secs + (op == CEPH_MOUNT ? CEPH_MOUNT_GRACE : 0);
	pthread_mutex_lock(&m->lock);
	while (!m->done && pthread_cond_timedwait(&m->done_cv, &m->lock, &until) == 0)
		;
	if (!m->done) {
		m->abandoned = true; /* the helper releases cmount and m */
		pthread_mutex_unlock(&m->lock);
		return CEPH_ABANDONED;
	}
	rc = m->rc;
	pthread_mutex_unlock(&m->lock);
	ceph_mounting_free(m);
	return rc;
}

static int cephbe_conf(struct ceph_mount_info *cm, const char *key, const char *value)
{
	int r = ceph_conf_set(cm, key, value);

	if (r < 0)
		log_err("ceph: setting %s = %s: %s", key, value, strerror(-r));
	return r;
}

/* The mount handle with the [ceph] settings applied (not mounted yet). Negative errno. */
static int cephbe_configure(const struct be_ceph_settings *s, struct ceph_mount_info **out)
{
	char num[16];
	int r = ceph_create(out, s->id[0] ? s->id : NULL);

	if (r < 0)
		return r;
	r = ceph_conf_read_file(*out, s->conf[0] ? s->conf : NULL);
	if (r < 0)
		log_err("ceph: reading %s: %s", s->conf[0] ? s->conf : "the default ceph.conf", strerror(-r));
	if (!r && s->keyring[0])
		r = cephbe_conf(*out, "keyring", s->keyring);
	snprintf(num, sizeof(num), "%u", s->mount_timeout ? s->mount_timeout : 30);
	if (!r)
		r = cephbe_conf(*out, "client_mount_timeout", num);
	if (!r && s->op_timeout) {
		snprintf(num, sizeof(num), "%u", s->op_timeout);
		r = cephbe_conf(*out, "rados_osd_op_timeout", num);
		if (!r)
			r = cephbe_conf(*out, "rados_mon_op_timeout", num);
	}
	if (!r && s->fs_name[0])
		r = ceph_select_filesystem(*out, s->fs_name);
	if (r < 0) {
		ceph_release(*out);
		*out = NULL;
	}
	return r;
}

static int cephbe_open(const struct be_fs_config *cfg, struct be_fs **out)
{
	const struct be_ceph_settings *s = be_ceph_settings();
	unsigned secs = s->mount_timeout ? s->mount_timeout : 30;
	struct ceph_fs *cf = calloc(1, sizeof(*cf));
	int r;

	if (!cf)
		return ENOMEM;
	snprintf(cf->path, sizeof(cf->path), "%s", cfg->path);
	r = cephbe_configure(s, &cf->cmount);
	if (r == 0) {
		r = ceph_bounded(cf->cmount, cfg->path, CEPH_MOUNT, secs);
		if (r == CEPH_ABANDONED) {
			cf->cmount = NULL; /* still owned by the abandoned helper */
			r = -ETIMEDOUT;
		}
	}
	if (r < 0) {
		log_err("ceph: export %s: cannot mount %s%s within %u s: %s", cfg->path,
			s->fs_name[0] ? "file system " : "CephFS", s->fs_name, secs, strerror(-r));
		if (cf->cmount)
			ceph_release(cf->cmount);
		free(cf);
		return -r;
	}
	atomic_init(&cf->refs, 1);
	pthread_mutex_init(&cf->fcache_lock, NULL);
	cf->export_id = cfg->export_id;
	cf->secs = secs;
	r = -ceph_release_start(&cf->rel, 0, ceph_rel_run, cf);
	cf->rel_started = r == 0;
	/* max-calls (0: derived from the worker threads by nfs/nfs_service.c), op-timeout: ceph_gated.c */
	cf->stuck_secs = s->op_timeout;
	ceph_gate_init(&cf->gate, s->max_calls, s->op_timeout);
	cf->server = ceph_mount_perms(cf->cmount);
	cf->fsid = (uint64_t)ceph_get_fs_cid(cf->cmount) + 1u; /* never 0 */
	if (r == 0)
		r = ceph_ll_lookup_root(cf->cmount, &cf->root);
	if (r == 0) {
		struct ceph_statx stx;

		r = ceph_ll_getattr(cf->cmount, cf->root, &stx, CEPH_STATX_INO, 0, cf->server);
		cf->root_ino = stx.stx_ino;
	}
	cf->pub.ops = &ceph_ops;
	cf->pub.driver = "ceph";
	cf->pub.handle_max = CEPH_HANDLE_LEN;
	if (r < 0) {
		log_err("ceph: export %s: the root: %s", cfg->path, strerror(-r));
		ceph_fs_put(cf);
		return -r;
	}
	*out = &cf->pub;
	return 0;
}


const struct be_driver ceph_driver = {
	.name = "ceph",
	.shutdown = ceph_driver_shutdown,
	.open = cephbe_open,
};
