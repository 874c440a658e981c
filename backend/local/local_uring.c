/*
 * local_uring.c - the thin io_uring shell of the local backend: one ring per
 * owning thread and its personality cache (pers_cache.h), so a caller's
 * system call runs with the caller's credentials on a thread whose own
 * credentials never change (the event-loop thread: ib_uverbs refuses a thread
 * whose credentials changed, identity.c). The kernel still decides every
 * permission, with the registered credential (docs/architecture.md,
 * "Caller identity").
 *
 * A personality is registered by a short-lived helper thread that applies
 * the caller's identity exactly as a worker does (identity.c: setgroups,
 * setfsgid, setfsuid, CAP_SYS_RESOURCE off for non-root) and calls
 * IORING_REGISTER_PERSONALITY: the kernel keeps that thread's credential
 * under the returned id. The ring's owner never applies an identity.
 *
 * Each call submits one SQE naming the personality and waits for it
 * (io_uring_submit_and_wait). No allocation per call; a miss in the cache
 * costs one thread creation.
 *
 * The event-loop thread's ring (local_ring_here) is made before serving
 * (be_local_loop_prepare, on the thread that will run the loop) or at its
 * first use, when [rnfsd] uring-calls is on (be_local_settings()->
 * uring_personalities); used by that thread only, released at the driver's
 * shutdown.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "backend/local/local.h"
#include "core/log.h"
#include "core/loop.h"

static struct local_ring loop_ring;       /* the event-loop thread's (one loop) */
static signed char loop_ring_state;       /* 0 not made yet, 1 ready, -1 refused (logged once) */
static _Atomic unsigned loop_ring_count;  /* its personalities, for the gauge (any thread) */

static int local_ring_warm(struct local_ring *r);

/* Make the event-loop ring (state 0 -> 1, or -1 logged once). */
static void loop_ring_make(unsigned bound)
{
	int rc = local_ring_init(&loop_ring, 8, bound);

	if (!rc)
		rc = local_ring_warm(&loop_ring);
	loop_ring_state = rc ? -1 : 1;
	if (rc) {
		local_ring_release(&loop_ring);
		log_warn("local: no io_uring (%s): callers' calls stay on the workers", strerror(-rc));
	}
}

struct local_ring *local_ring_here(void)
{
	unsigned bound = be_local_settings()->uring_personalities;

	if (!bound || loop_ring_state < 0 || !loop_is_loop_thread())
		return NULL;
	if (loop_ring_state == 0)
		loop_ring_make(bound);
	return loop_ring_state > 0 ? &loop_ring : NULL;
}

int be_local_loop_prepare(void)
{
	unsigned bound = be_local_settings()->uring_personalities;

	if (bound && loop_ring_state == 0)
		loop_ring_make(bound);
	return loop_ring_state < 0 ? -ENOSYS : 0;
}

void local_ring_here_release(void)
{
	if (loop_ring_state > 0)
		local_ring_release(&loop_ring);
	loop_ring_state = 0;
	atomic_store_explicit(&loop_ring_count, 0, memory_order_relaxed);
}

unsigned be_local_uring_personalities(unsigned *limit)
{
	if (limit)
		*limit = be_local_settings()->uring_personalities;
	return atomic_load_explicit(&loop_ring_count, memory_order_relaxed);
}

#if HAVE_LIBURING
#include <liburing.h>

struct reg_job {
	struct io_uring *ring;
	const struct be_cred *cr;
	int id;                    /* the personality, or a negative errno */
};

static void *reg_main(void *arg)
{
	struct reg_job *j = arg;

	/* This thread is not the loop thread: identity.c applies cr here. */
	if (local_id_caller(j->cr) != 0)
		j->id = -EPERM;
	else
		j->id = io_uring_register_personality(j->ring);
	local_end_call(NULL);
	return NULL;
}

/* pers_cache_ops.reg: register cr from a helper thread. */
static int ring_reg(void *arg, const struct be_cred *cr)
{
	struct local_ring *r = arg;
	struct reg_job j = { .ring = &r->ring, .cr = cr, .id = -EAGAIN };
	pthread_t t;
	int rc = pthread_create(&t, NULL, reg_main, &j);

	if (rc != 0)
		return -rc;
	pthread_join(t, NULL);
	return j.id;
}

static void ring_unreg(void *arg, int id)
{
	struct local_ring *r = arg;

	io_uring_unregister_personality(&r->ring, id);
}

int local_ring_init(struct local_ring *r, unsigned entries, unsigned personalities)
{
	const struct pers_cache_ops ops = { .reg = ring_reg, .unreg = ring_unreg, .arg = r };
	int rc;

	memset(r, 0, sizeof(*r));
	rc = io_uring_queue_init(entries, &r->ring, 0);
	if (rc < 0)
		return rc;
	rc = pers_cache_init(&r->pers, personalities, &ops);
	if (rc < 0) {
		io_uring_queue_exit(&r->ring);
		return rc;
	}
	r->ready = true;
	return 0;
}

void local_ring_release(struct local_ring *r)
{
	if (!r->ready)
		return;
	pers_cache_release(&r->pers);
	io_uring_queue_exit(&r->ring);
	r->ready = false;
}

/* An SQE of r's for cr, whose personality ring_call() sets after the prep
 * (liburing's prep clears it), or NULL: not run here (*err -EWOULDBLOCK: no
 * ring, the identity not registered, logged once). One call at a time. */
static struct io_uring_sqe *ring_sqe(struct local_ring *r, const struct be_cred *cr, int *err)
{
	static struct log_limit lim;
	struct io_uring_sqe *sqe = NULL;

	*err = -EWOULDBLOCK;
	if (!r->ready)
		return NULL;
	r->cur_id = pers_cache_get(&r->pers, cr);
	if (r == &loop_ring)
		atomic_store_explicit(&loop_ring_count, pers_cache_count(&r->pers), memory_order_relaxed);
	if (r->cur_id >= 0)
		sqe = io_uring_get_sqe(&r->ring);
	else
		log_limited(&lim, LOG_WARNING, "local: io_uring personality of uid %u: %s (a worker runs the call)",
			    cr->uid, strerror(-r->cur_id));
	return sqe;
}

/* Submit the prepared sqe (personality id, -1: none) and wait: cqe->res (a negative errno on failure). */
static int ring_submit_wait(struct local_ring *r, struct io_uring_sqe *sqe, int id)
{
	struct io_uring_cqe *cqe;
	int res;

	if (id >= 0)
		sqe->personality = (uint16_t)id;
	res = io_uring_submit_and_wait(&r->ring, 1);
	if (res < 0)
		return res;
	if (io_uring_peek_cqe(&r->ring, &cqe) != 0)
		return -EIO;
	res = cqe->res;
	io_uring_cqe_seen(&r->ring, cqe);
	return res;
}

/* Submit the prepared sqe as its caller (ring_sqe) and wait. */
static int ring_call(struct local_ring *r, struct io_uring_sqe *sqe)
{
	return ring_submit_wait(r, sqe, r->cur_id);
}

/* Start the kernel's io-wq worker of this thread now (a NOP forced async), so the first call that
 * the kernel runs there does not pay for its creation. 0 or a negative errno. */
static int local_ring_warm(struct local_ring *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
	return ring_submit_wait(r, sqe, -1);
}

int local_ring_openat(struct local_ring *r, const struct be_cred *cr, int dfd, const char *name, int flags,
		      mode_t mode)
{
	int err;
	struct io_uring_sqe *sqe = ring_sqe(r, cr, &err);

	if (!sqe)
		return err;
	io_uring_prep_openat(sqe, dfd, name, flags, mode);
	return ring_call(r, sqe);
}

int local_ring_mkdirat(struct local_ring *r, const struct be_cred *cr, int dfd, const char *name, mode_t mode)
{
	int err;
	struct io_uring_sqe *sqe = ring_sqe(r, cr, &err);

	if (!sqe)
		return err;
	io_uring_prep_mkdirat(sqe, dfd, name, mode);
	return ring_call(r, sqe);
}

int local_ring_unlinkat(struct local_ring *r, const struct be_cred *cr, int dfd, const char *name, int flags)
{
	int err;
	struct io_uring_sqe *sqe = ring_sqe(r, cr, &err);

	if (!sqe)
		return err;
	io_uring_prep_unlinkat(sqe, dfd, name, flags);
	return ring_call(r, sqe);
}

int local_ring_renameat(struct local_ring *r, const struct be_cred *cr, int from_dfd, const char *from, int to_dfd,
			const char *to)
{
	int err;
	struct io_uring_sqe *sqe = ring_sqe(r, cr, &err);

	if (!sqe)
		return err;
	io_uring_prep_renameat(sqe, from_dfd, from, to_dfd, to, 0);
	return ring_call(r, sqe);
}

int local_ring_pwritev(struct local_ring *r, const struct be_cred *cr, int fd, const struct iovec *iov,
		       unsigned iovcnt, uint64_t offset, int rw_flags)
{
	int err;
	struct io_uring_sqe *sqe = ring_sqe(r, cr, &err);

	if (!sqe)
		return err;
	io_uring_prep_writev2(sqe, fd, iov, iovcnt, offset, rw_flags);
	return ring_call(r, sqe);
}

int local_ring_fsync(struct local_ring *r, const struct be_cred *cr, int fd, bool datasync)
{
	int err;
	struct io_uring_sqe *sqe = ring_sqe(r, cr, &err);

	if (!sqe)
		return err;
	io_uring_prep_fsync(sqe, fd, datasync ? IORING_FSYNC_DATASYNC : 0);
	return ring_call(r, sqe);
}

#else /* !HAVE_LIBURING: no ring, and the worker path stays */

int local_ring_init(struct local_ring *r, unsigned entries, unsigned personalities)
{
	(void)entries;
	(void)personalities;
	memset(r, 0, sizeof(*r));
	return -ENOSYS;
}

void local_ring_release(struct local_ring *r)
{
	(void)r;
}

static int local_ring_warm(struct local_ring *r)
{
	(void)r;
	return -ENOSYS;
}

#endif
