/*
 * fault.c - the "fault" test backend (see fault.h): every operation of the
 * wrapped instance, with a rule check in front.
 *
 * State per instance: the rules (one per operation), call counters, and the
 * count of calls held; one mutex and one condition variable (held calls wait
 * on it for release; be_fault_wait_held() waits on it for holders). A held
 * or delayed call keeps no lock while it waits, so other calls on the same
 * instance go on: exactly what the no-stall test needs to be able to see.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/fault/fault.h"

#define FAULT_MAX_INSTANCES 16

struct fault_fs {
	struct be_fs pub;
	struct be_fs *inner;
	char path[4096];
	unsigned long seq;         /* order of opening, for be_fault_find */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct be_fault_rule rules[BE_FAULT_NOPS];
	bool active[BE_FAULT_NOPS];
	unsigned countdown[BE_FAULT_NOPS];
	unsigned calls[BE_FAULT_NOPS];
	unsigned held;
	unsigned release_gen;      /* bumped by be_fault_release */
};

static pthread_mutex_t fault_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fault_fs *fault_instances[FAULT_MAX_INSTANCES];
static unsigned long fault_seq;

static struct fault_fs *fault_fs(struct be_fs *fs)
{
	return (struct fault_fs *)fs;
}

static struct be_fs *fault_inner(struct be_fs *fs)
{
	return fault_fs(fs)->inner;
}

/* The rule that fires for this call of op, if any (lock held): copied to *out. */
static bool fault_fire(struct fault_fs *ff, enum be_fault_op op, struct be_fault_rule *out)
{
	enum be_fault_op which = ff->active[op] ? op : BE_FAULT_ANY;

	if (!ff->active[which])
		return false;
	if (ff->countdown[which] > 1) {
		ff->countdown[which]--;
		return false;
	}
	*out = ff->rules[which];
	if (!out->always)
		ff->active[which] = false;
	return true;
}

static void fault_hold(struct fault_fs *ff)
{
	unsigned gen = ff->release_gen;

	ff->held++;
	pthread_cond_broadcast(&ff->cond);
	while (ff->release_gen == gen)
		pthread_cond_wait(&ff->cond, &ff->lock);
	ff->held--;
}

/*
 * Before a call of op: 0 to pass it through (after a delay or a hold), or the
 * error to return instead. *short_bytes: a limit for read/write (SIZE_MAX: none).
 */
static int fault_enter(struct be_fs *fs, enum be_fault_op op, size_t *short_bytes)
{
	struct fault_fs *ff = fault_fs(fs);
	struct be_fault_rule r;
	int err = 0;

	if (short_bytes)
		*short_bytes = SIZE_MAX;
	pthread_mutex_lock(&ff->lock);
	ff->calls[op]++;
	ff->calls[BE_FAULT_ANY]++;
	if (fault_fire(ff, op, &r)) {
		switch (r.kind) {
		case BE_FAULT_ERROR:
			err = r.err ? r.err : EIO;
			break;
		case BE_FAULT_SHORT:
			if (short_bytes)
				*short_bytes = r.short_bytes;
			break;
		case BE_FAULT_HOLD:
			fault_hold(ff);
			break;
		case BE_FAULT_DELAY:
			pthread_mutex_unlock(&ff->lock);
			nanosleep(&(struct timespec){ r.delay_ms / 1000, (long)(r.delay_ms % 1000) * 1000000 }, NULL);
			return 0;
		}
	}
	pthread_mutex_unlock(&ff->lock);
	return err;
}

void be_fault_set(struct be_fs *fs, const struct be_fault_rule *r)
{
	struct fault_fs *ff = fault_fs(fs);

	pthread_mutex_lock(&ff->lock);
	ff->rules[r->op] = *r;
	ff->countdown[r->op] = r->nth ? r->nth : 1;
	ff->active[r->op] = true;
	pthread_mutex_unlock(&ff->lock);
}

void be_fault_release(struct be_fs *fs)
{
	struct fault_fs *ff = fault_fs(fs);

	pthread_mutex_lock(&ff->lock);
	for (unsigned i = 0; i < BE_FAULT_NOPS; i++)
		if (ff->active[i] && ff->rules[i].kind == BE_FAULT_HOLD)
			ff->active[i] = false;
	ff->release_gen++;
	pthread_cond_broadcast(&ff->cond);
	pthread_mutex_unlock(&ff->lock);
}

void be_fault_clear(struct be_fs *fs)
{
	struct fault_fs *ff = fault_fs(fs);

	pthread_mutex_lock(&ff->lock);
	memset(ff->active, 0, sizeof(ff->active));
	pthread_mutex_unlock(&ff->lock);
	be_fault_release(fs);
}

unsigned be_fault_calls(struct be_fs *fs, enum be_fault_op op)
{
	struct fault_fs *ff = fault_fs(fs);
	unsigned n;

	pthread_mutex_lock(&ff->lock);
	n = ff->calls[op];
	pthread_mutex_unlock(&ff->lock);
	return n;
}

void be_fault_wait_held(struct be_fs *fs, unsigned n)
{
	struct fault_fs *ff = fault_fs(fs);

	pthread_mutex_lock(&ff->lock);
	while (ff->held < n)
		pthread_cond_wait(&ff->cond, &ff->lock);
	pthread_mutex_unlock(&ff->lock);
}

/* ---- the wrapped operations ---- */

/* An operation that passes through unless a rule fires: the inner call is BE_CALL(inner, op, args...). */
#define FAULT_OP(op, OPID, params, ...)                                   \
	static int fault_##op params                                      \
	{                                                                 \
		int err = fault_enter(fs, OPID, NULL);                    \
		return err ? err : BE_CALL(fault_inner(fs), op, __VA_ARGS__); \
	}

FAULT_OP(root, BE_FAULT_ROOT, (struct be_fs *fs, struct be_obj *out, struct be_attr *attr), out, attr)
FAULT_OP(open_handle, BE_FAULT_OPEN_HANDLE,
	 (struct be_fs *fs, const struct be_handle *h, struct be_obj *out, struct be_attr *attr), h, out, attr)
FAULT_OP(handle, BE_FAULT_HANDLE, (struct be_fs *fs, const struct be_obj *o, struct be_handle *out), o, out)
FAULT_OP(obj_dup, BE_FAULT_OBJ_DUP, (struct be_fs *fs, const struct be_obj *o, struct be_obj *out), o, out)
FAULT_OP(lookup_path, BE_FAULT_LOOKUP_PATH,
	 (struct be_fs *fs, const char *path, struct be_obj *out, struct be_attr *attr), path, out, attr)
FAULT_OP(getattr, BE_FAULT_GETATTR, (struct be_fs *fs, const struct be_obj *o, struct be_attr *out), o, out)
FAULT_OP(setattr, BE_FAULT_SETATTR,
	 (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const struct be_sattr *sa,
	  const struct be_time *guard, struct be_attr *pre, struct be_attr *post),
	 cr, o, sa, guard, pre, post)
FAULT_OP(access, BE_FAULT_ACCESS,
	 (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, uint32_t want, uint32_t *granted),
	 cr, o, want, granted)
FAULT_OP(lookup, BE_FAULT_LOOKUP,
	 (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name, struct be_obj *out,
	  struct be_attr *attr),
	 cr, dir, name, out, attr)
FAULT_OP(readlink, BE_FAULT_READLINK,
	 (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, char *buf, size_t cap, size_t *len),
	 cr, o, buf, cap, len)
FAULT_OP(create, BE_FAULT_CREATE,
	 (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name,
	  const struct be_create *how, struct be_obj *out, struct be_attr *attr, bool *existed),
	 cr, dir, name, how, out, attr, existed)
FAULT_OP(link, BE_FAULT_LINK,
	 (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const struct be_obj *dir,
	  const char *name),
	 cr, o, dir, name)
FAULT_OP(remove, BE_FAULT_REMOVE, (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name),
	 cr, dir, name)
FAULT_OP(rmdir, BE_FAULT_RMDIR, (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name),
	 cr, dir, name)
FAULT_OP(rename, BE_FAULT_RENAME,
	 (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *fdir, const char *from,
	  const struct be_obj *tdir, const char *to),
	 cr, fdir, from, tdir, to)
FAULT_OP(readdir, BE_FAULT_READDIR,
	 (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, uint64_t cookie, uint64_t verf,
	  unsigned flags, be_readdir_fn fn, void *arg, uint64_t *verf_out, bool *eof),
	 cr, dir, cookie, verf, flags, fn, arg, verf_out, eof)
FAULT_OP(statfs, BE_FAULT_STATFS,
	 (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, struct be_statfs *out), cr, o, out)
FAULT_OP(commit_meta, BE_FAULT_COMMIT_META, (struct be_fs *fs, const struct be_obj *o), o)
FAULT_OP(file_open, BE_FAULT_FILE_OPEN,
	 (struct be_fs *fs, const struct be_obj *o, unsigned flags, struct be_file **out), o, flags, out)
FAULT_OP(file_open_handle, BE_FAULT_FILE_OPEN_HANDLE,
	 (struct be_fs *fs, const struct be_handle *h, unsigned flags, struct be_file **out), h, flags, out)
FAULT_OP(file_getattr, BE_FAULT_FILE_GETATTR, (struct be_fs *fs, struct be_file *f, struct be_attr *out), f, out)
FAULT_OP(commit, BE_FAULT_COMMIT,
	 (struct be_fs *fs, struct be_file *f, uint64_t off, uint64_t count, struct be_attr *pre, struct be_attr *post),
	 f, off, count, pre, post)
FAULT_OP(allocate, BE_FAULT_ALLOCATE,
	 (struct be_fs *fs, const struct be_cred *cr, struct be_file *f, uint64_t off, uint64_t len, bool dealloc),
	 cr, f, off, len, dealloc)
FAULT_OP(seek, BE_FAULT_SEEK,
	 (struct be_fs *fs, struct be_file *f, uint64_t off, enum be_seek_what what, uint64_t *result),
	 f, off, what, result)
FAULT_OP(copy, BE_FAULT_COPY,
	 (struct be_fs *fs, const struct be_cred *cr, struct be_file *src, uint64_t soff, struct be_file *dst,
	  uint64_t doff, uint64_t count, uint64_t *copied),
	 cr, src, soff, dst, doff, count, copied)
FAULT_OP(clone, BE_FAULT_CLONE,
	 (struct be_fs *fs, const struct be_cred *cr, struct be_file *src, uint64_t soff, struct be_file *dst,
	  uint64_t doff, uint64_t count),
	 cr, src, soff, dst, doff, count)
FAULT_OP(lock_test, BE_FAULT_LOCK_TEST,
	 (struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk, bool *conflict,
	  struct be_lock_conflict *holder),
	 f, owner, lk, conflict, holder)
FAULT_OP(lock_set, BE_FAULT_LOCK_SET, (struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk),
	 f, owner, lk)
FAULT_OP(lock_unset, BE_FAULT_LOCK_UNSET,
	 (struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk), f, owner, lk)
FAULT_OP(getxattr, BE_FAULT_GETXATTR,
	 (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name, void *buf, size_t cap,
	  size_t *len),
	 cr, o, name, buf, cap, len)
FAULT_OP(setxattr, BE_FAULT_SETXATTR,
	 (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name, const void *value,
	  size_t len, enum be_xattr_how how),
	 cr, o, name, value, len, how)
FAULT_OP(listxattr, BE_FAULT_LISTXATTR,
	 (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, char *buf, size_t cap, size_t *len),
	 cr, o, buf, cap, len)
FAULT_OP(removexattr, BE_FAULT_REMOVEXATTR,
	 (struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name), cr, o, name)

/* iov cut to at most limit bytes, into out (at most 16); returns the count. */
static unsigned fault_iov_cut(const struct iovec *iov, unsigned n, size_t limit, struct iovec out[16])
{
	unsigned k = 0;

	for (unsigned i = 0; i < n && k < 16 && limit > 0; i++) {
		out[k] = iov[i];
		if (out[k].iov_len > limit)
			out[k].iov_len = limit;
		limit -= out[k].iov_len;
		k++;
	}
	return k;
}

static int fault_read(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags, uint64_t off,
		      const struct iovec *iov, unsigned iovcnt, size_t *done, bool *eof, struct be_attr *post)
{
	struct iovec cut[16];
	size_t limit;
	int err = fault_enter(fs, BE_FAULT_READ, &limit);

	if (err)
		return err;
	if (limit != SIZE_MAX) {
		/* a short read that is not at the end of the file: *eof from the inner call stays false */
		iovcnt = fault_iov_cut(iov, iovcnt, limit, cut);
		iov = cut;
	}
	return be_read(fault_inner(fs), cr, f, flags, off, iov, iovcnt, done, eof, post);
}

static int fault_write(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags, uint64_t off,
		       const struct iovec *iov, unsigned iovcnt, size_t *done, struct be_attr *pre,
		       struct be_attr *post)
{
	struct iovec cut[16];
	size_t limit;
	int err = fault_enter(fs, BE_FAULT_WRITE, &limit);

	if (err)
		return err;
	if (limit != SIZE_MAX) {
		iovcnt = fault_iov_cut(iov, iovcnt, limit, cut);
		iov = cut;
	}
	return be_write(fault_inner(fs), cr, f, flags, off, iov, iovcnt, done, pre, post);
}

static void fault_end_call(struct be_fs *fs)
{
	be_end_call(fault_inner(fs));
}

static void fault_obj_put(struct be_fs *fs, struct be_obj *o)
{
	be_obj_put(fault_inner(fs), o);
}

static void fault_file_get(struct be_fs *fs, struct be_file *f)
{
	be_file_get(fault_inner(fs), f);
}

static void fault_file_put(struct be_fs *fs, struct be_file *f)
{
	be_file_put(fault_inner(fs), f);
}

static void fault_lock_owner_release(struct be_fs *fs, struct be_file *f, uint64_t owner)
{
	be_lock_owner_release(fault_inner(fs), f, owner);
}

static void fault_close(struct be_fs *fs)
{
	struct fault_fs *ff = fault_fs(fs);

	pthread_mutex_lock(&fault_reg_lock);
	for (unsigned i = 0; i < FAULT_MAX_INSTANCES; i++)
		if (fault_instances[i] == ff)
			fault_instances[i] = NULL;
	pthread_mutex_unlock(&fault_reg_lock);
	be_fault_clear(fs);
	be_fs_close(ff->inner);
	pthread_mutex_destroy(&ff->lock);
	pthread_cond_destroy(&ff->cond);
	free(ff);
}

static const struct be_ops fault_ops = {
	.close = fault_close,
	.end_call = fault_end_call,
	.root = fault_root,
	.open_handle = fault_open_handle,
	.handle = fault_handle,
	.obj_dup = fault_obj_dup,
	.obj_put = fault_obj_put,
	.lookup_path = fault_lookup_path,
	.getattr = fault_getattr,
	.setattr = fault_setattr,
	.access = fault_access,
	.lookup = fault_lookup,
	.readlink = fault_readlink,
	.create = fault_create,
	.link = fault_link,
	.remove = fault_remove,
	.rmdir = fault_rmdir,
	.rename = fault_rename,
	.readdir = fault_readdir,
	.statfs = fault_statfs,
	.commit_meta = fault_commit_meta,
	.file_open = fault_file_open,
	.file_open_handle = fault_file_open_handle,
	.file_get = fault_file_get,
	.file_put = fault_file_put,
	.file_getattr = fault_file_getattr,
	.read = fault_read,
	.write = fault_write,
	.commit = fault_commit,
	.allocate = fault_allocate,
	.seek = fault_seek,
	.copy = fault_copy,
	.clone = fault_clone,
	.lock_test = fault_lock_test,
	.lock_set = fault_lock_set,
	.lock_unset = fault_lock_unset,
	.lock_owner_release = fault_lock_owner_release,
	.getxattr = fault_getxattr,
	.setxattr = fault_setxattr,
	.listxattr = fault_listxattr,
	.removexattr = fault_removexattr,
};

struct be_fs *be_fault_wrap(struct be_fs *inner)
{
	struct fault_fs *ff = calloc(1, sizeof(*ff));

	if (!ff)
		return NULL;
	ff->pub = (struct be_fs){ .ops = &fault_ops, .driver = "fault", .handle_max = inner->handle_max };
	ff->inner = inner;
	pthread_mutex_init(&ff->lock, NULL);
	pthread_cond_init(&ff->cond, NULL);
	return &ff->pub;
}

static int fault_driver_open(const struct be_fs_config *cfg, struct be_fs **out)
{
	struct be_fs *inner, *fs;
	int err = be_fs_open("local", cfg, &inner);

	if (err)
		return err;
	fs = be_fault_wrap(inner);
	if (!fs) {
		be_fs_close(inner);
		return ENOMEM;
	}
	snprintf(fault_fs(fs)->path, sizeof(fault_fs(fs)->path), "%s", cfg->path);
	pthread_mutex_lock(&fault_reg_lock);
	for (unsigned i = 0; i < FAULT_MAX_INSTANCES; i++) {
		if (!fault_instances[i]) {
			fault_fs(fs)->seq = ++fault_seq;
			fault_instances[i] = fault_fs(fs);
			break;
		}
	}
	pthread_mutex_unlock(&fault_reg_lock);
	*out = fs;
	return 0;
}

static const struct be_driver fault_driver = { .name = "fault", .open = fault_driver_open };

int be_fault_register(void)
{
	return be_driver_find("fault") ? 0 : be_driver_register(&fault_driver);
}

struct be_fs *be_fault_find(const char *path)
{
	struct fault_fs *found = NULL;

	pthread_mutex_lock(&fault_reg_lock);
	for (unsigned i = 0; i < FAULT_MAX_INSTANCES; i++)
		if (fault_instances[i] && !strcmp(fault_instances[i]->path, path) &&
		    (!found || fault_instances[i]->seq > found->seq))
			found = fault_instances[i];
	pthread_mutex_unlock(&fault_reg_lock);
	return found ? &found->pub : NULL;
}
