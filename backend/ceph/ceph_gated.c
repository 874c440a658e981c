/*
 * ceph_gated.c - the ceph driver's operations table: every operation that
 * may wait inside libcephfs passes the instance's gate (ceph_gate.h) first,
 * so that one export whose cluster stopped answering holds at most
 * max-calls worker threads and, once a call has been inside longer than
 * op-timeout with none returning meanwhile, answers new calls at once (but
 * one probe at a time, until any call returns) with ETIMEDOUT or EAGAIN, which
 * NFSv3 answers as NFS3ERR_JUKEBOX (RFC 1813 §2.6: "the server initiated
 * the request, but was not able to complete it in a timely fashion ... the
 * client should wait and then try the request with a new RPC transaction
 * ID") and NFSv4 as NFS4ERR_DELAY (RFC 8881 §15.1.1.3). A call that finds
 * the gate full waits for a slot while the calls inside are younger than a
 * second (a busy cluster), and is refused at once after that. Releases (obj_put,
 * file_get/put, close, lock_owner_release) cannot fail and pass ungated; their
 * libcephfs calls (close, put, releasedir) are queued to the mount's release
 * thread (ceph_release.c), so they hold no worker either.
 */
#include <errno.h>
#include <time.h>

#include "backend/ceph/ceph.h"
#include "core/log.h"

/* Refusals of a full gate may come by the thousand; the two state changes have their own bucket
 * so that they are never crowded out of the log. */
static struct log_limit ceph_gate_limit, ceph_gate_state_limit;

static uint64_t ceph_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void ceph_gate_log(struct ceph_fs *cf, enum ceph_gate_event ev)
{
	if (ev == CEPH_GATE_BECAME_STUCK)
		log_limited(&ceph_gate_state_limit, LOG_WARNING,
			    "ceph: export %s: the cluster is not answering (a call has waited more than "
			    "op-timeout %u s, and none returned): new calls answer JUKEBOX/DELAY at once until one "
			    "returns", cf->path, cf->stuck_secs);
	else if (ev == CEPH_GATE_ANSWERS_AGAIN)
		log_limited(&ceph_gate_state_limit, LOG_NOTICE, "ceph: export %s: the cluster answers again", cf->path);
}

/* 0 and the call's slot, or the errno a refused call answers with. */
static int ceph_gate_in(struct ceph_fs *cf, unsigned *slot)
{
	enum ceph_gate_event ev;
	enum ceph_gate_verdict v;
	uint64_t wait;

	for (;;) {
		v = ceph_gate_enter(&cf->gate, ceph_now_ns(), slot, &ev);
		ceph_gate_log(cf, ev);
		if (v != CEPH_GATE_FULL || !(wait = ceph_gate_full_wait(&cf->gate, ceph_now_ns())))
			break;
		ceph_gate_sleep(&cf->gate, wait); /* a busy cluster: queue a little, at most a second */
	}
	if (v == CEPH_GATE_FULL)
		log_limited(&ceph_gate_limit, LOG_WARNING,
			    "ceph: export %s: %u calls already inside libcephfs (max-calls): JUKEBOX/DELAY",
			    cf->path, cf->gate.max);
	return v == CEPH_GATE_IN ? 0 : v == CEPH_GATE_FULL ? EAGAIN : ETIMEDOUT;
}

static void ceph_gate_out(struct ceph_fs *cf, unsigned slot)
{
	ceph_gate_log(cf, ceph_gate_leave(&cf->gate, slot, ceph_now_ns()));
}

/* The body of a gated operation: call runs only when the gate admits it. */
#define CEPH_GATED(fs, call)                                    \
	do {                                                    \
		struct ceph_fs *gcf_ = ceph_fs(fs);             \
		unsigned slot_ = 0;                             \
		int err_ = ceph_gate_in(gcf_, &slot_);          \
		if (err_)                                       \
			return err_;                            \
		err_ = (call);                                  \
		ceph_gate_out(gcf_, slot_);                     \
		return err_;                                    \
	} while (0)

static int g_root(struct be_fs *fs, struct be_obj *out, struct be_attr *attr)
{
	CEPH_GATED(fs, cephbe_root(fs, out, attr));
}

static int g_open_handle(struct be_fs *fs, const struct be_handle *h, struct be_obj *out, struct be_attr *attr)
{
	CEPH_GATED(fs, cephbe_open_handle(fs, h, out, attr));
}

static int g_handle(struct be_fs *fs, const struct be_obj *o, struct be_handle *out)
{
	CEPH_GATED(fs, cephbe_handle(fs, o, out));
}

static int g_obj_dup(struct be_fs *fs, const struct be_obj *o, struct be_obj *out)
{
	CEPH_GATED(fs, cephbe_obj_dup(fs, o, out));
}

static int g_lookup_path(struct be_fs *fs, const char *path, struct be_obj *out, struct be_attr *attr)
{
	CEPH_GATED(fs, cephbe_lookup_path(fs, path, out, attr));
}

static int g_getattr(struct be_fs *fs, const struct be_obj *o, struct be_attr *out)
{
	CEPH_GATED(fs, cephbe_getattr(fs, o, out));
}

static int g_setattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const struct be_sattr *sa,
		     const struct be_time *ctime_guard, struct be_attr *pre, struct be_attr *post)
{
	CEPH_GATED(fs, cephbe_setattr(fs, cr, o, sa, ctime_guard, pre, post));
}

static int g_access(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, uint32_t want,
		    uint32_t *granted)
{
	CEPH_GATED(fs, cephbe_access(fs, cr, o, want, granted));
}

static int g_lookup(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name,
		    struct be_obj *out, struct be_attr *attr)
{
	CEPH_GATED(fs, cephbe_lookup(fs, cr, dir, name, out, attr));
}

static int g_readlink(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, char *buf, size_t cap,
		      size_t *len)
{
	CEPH_GATED(fs, cephbe_readlink(fs, cr, o, buf, cap, len));
}

static int g_create(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name,
		    const struct be_create *how, struct be_obj *out, struct be_attr *attr, bool *existed)
{
	CEPH_GATED(fs, cephbe_create(fs, cr, dir, name, how, out, attr, existed));
}

static int g_link(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const struct be_obj *dir,
		  const char *name)
{
	CEPH_GATED(fs, cephbe_link(fs, cr, o, dir, name));
}

static int g_remove(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name)
{
	CEPH_GATED(fs, cephbe_remove(fs, cr, dir, name));
}

static int g_rmdir(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name)
{
	CEPH_GATED(fs, cephbe_rmdir(fs, cr, dir, name));
}

static int g_rename(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *from_dir, const char *from,
		    const struct be_obj *to_dir, const char *to)
{
	CEPH_GATED(fs, cephbe_rename(fs, cr, from_dir, from, to_dir, to));
}

static int g_readdir(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, uint64_t cookie,
		     uint64_t verf, unsigned flags, be_readdir_fn fn, void *arg, uint64_t *verf_out, bool *eof)
{
	CEPH_GATED(fs, cephbe_readdir(fs, cr, dir, cookie, verf, flags, fn, arg, verf_out, eof));
}

static int g_statfs(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, struct be_statfs *out)
{
	CEPH_GATED(fs, cephbe_statfs(fs, cr, o, out));
}

static int g_commit_meta(struct be_fs *fs, const struct be_obj *o)
{
	CEPH_GATED(fs, cephbe_commit_meta(fs, o));
}

static int g_file_open(struct be_fs *fs, const struct be_obj *o, unsigned flags, struct be_file **out)
{
	CEPH_GATED(fs, cephbe_file_open(fs, o, flags, out));
}

static int g_file_open_handle(struct be_fs *fs, const struct be_handle *h, unsigned flags, struct be_file **out)
{
	CEPH_GATED(fs, cephbe_file_open_handle(fs, h, flags, out));
}

static int g_file_getattr(struct be_fs *fs, struct be_file *f, struct be_attr *out)
{
	CEPH_GATED(fs, cephbe_file_getattr(fs, f, out));
}

static int g_read(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags, uint64_t offset,
		  const struct iovec *iov, unsigned iovcnt, size_t *done, bool *eof, struct be_attr *post)
{
	*done = 0;
	CEPH_GATED(fs, cephbe_read(fs, cr, f, flags, offset, iov, iovcnt, done, eof, post));
}

static int g_write(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags, uint64_t offset,
		   const struct iovec *iov, unsigned iovcnt, size_t *done, struct be_attr *pre, struct be_attr *post)
{
	*done = 0;
	CEPH_GATED(fs, cephbe_write(fs, cr, f, flags, offset, iov, iovcnt, done, pre, post));
}

static int g_commit(struct be_fs *fs, struct be_file *f, uint64_t offset, uint64_t count, struct be_attr *pre,
		    struct be_attr *post)
{
	CEPH_GATED(fs, cephbe_commit(fs, f, offset, count, pre, post));
}

static int g_allocate(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, uint64_t offset,
		      uint64_t length, bool deallocate)
{
	CEPH_GATED(fs, cephbe_allocate(fs, cr, f, offset, length, deallocate));
}

static int g_seek(struct be_fs *fs, struct be_file *f, uint64_t offset, enum be_seek_what what, uint64_t *result)
{
	CEPH_GATED(fs, cephbe_seek(fs, f, offset, what, result));
}

static int g_lock_test(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk,
		       bool *conflict, struct be_lock_conflict *holder)
{
	CEPH_GATED(fs, cephbe_lock_test(fs, f, owner, lk, conflict, holder));
}

static int g_lock_set(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk)
{
	CEPH_GATED(fs, cephbe_lock_set(fs, f, owner, lk));
}

static int g_lock_unset(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk)
{
	CEPH_GATED(fs, cephbe_lock_unset(fs, f, owner, lk));
}

static int g_getxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name,
		      void *buf, size_t cap, size_t *len)
{
	CEPH_GATED(fs, cephbe_getxattr(fs, cr, o, name, buf, cap, len));
}

static int g_setxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name,
		      const void *value, size_t len, enum be_xattr_how how)
{
	CEPH_GATED(fs, cephbe_setxattr(fs, cr, o, name, value, len, how));
}

static int g_listxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, char *buf, size_t cap,
		       size_t *len)
{
	CEPH_GATED(fs, cephbe_listxattr(fs, cr, o, buf, cap, len));
}

static int g_removexattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name)
{
	CEPH_GATED(fs, cephbe_removexattr(fs, cr, o, name));
}

const struct be_ops ceph_ops = {
	.close = cephbe_close,
	.root = g_root,
	.open_handle = g_open_handle,
	.handle = g_handle,
	.obj_dup = g_obj_dup,
	.obj_put = cephbe_obj_put,
	.lookup_path = g_lookup_path,
	.getattr = g_getattr,
	.setattr = g_setattr,
	.access = g_access,
	.lookup = g_lookup,
	.readlink = g_readlink,
	.create = g_create,
	.link = g_link,
	.remove = g_remove,
	.rmdir = g_rmdir,
	.rename = g_rename,
	.readdir = g_readdir,
	.statfs = g_statfs,
	.commit_meta = g_commit_meta,
	.file_open = g_file_open,
	.file_open_handle = g_file_open_handle,
	.file_get = cephbe_file_get,
	.file_put = cephbe_file_put,
	.file_getattr = g_file_getattr,
	.read = g_read,
	.write = g_write,
	.commit = g_commit,
	.allocate = g_allocate,
	.seek = g_seek,
	.lock_test = g_lock_test,
	.lock_set = g_lock_set,
	.lock_unset = g_lock_unset,
	.lock_owner_release = cephbe_lock_owner_release,
	.getxattr = g_getxattr,
	.setxattr = g_setxattr,
	.listxattr = g_listxattr,
	.removexattr = g_removexattr,
};
