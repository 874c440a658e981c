/*
 * test_nfs4_deleg_read.c - read delegations by default (issue 26 item 2),
 * and why they are safe against local processes while write ones are not,
 * through the real daemon with its default configuration (no
 * "[nfsv4] delegations" line) and nfs4raw.h's client playing a Linux
 * client's recall:
 *  - a 4.1 client with a back channel opens a file for reading: a read
 *    delegation (OPEN_DELEGATE_READ);
 *  - a local process (a thread of this test) opens the file O_RDWR: it waits
 *    in open(2) (rnfsd's read lease) and the holder gets CB_RECALL;
 *  - the holder pushes the read locks it kept to itself under the
 *    delegation (RFC 8881 §10.4, §9.8: LOCK READ_LT from its read open,
 *    before DELEGRETURN, as Linux does): the first is granted and the local
 *    open still waits half a second later (the lock went on a read-only
 *    descriptor, which does not break the read lease), the second is granted
 *    too; the locks are already the kernel's (a local F_OFD_GETLK sees one);
 *  - after DELEGRETURN the local open completes, and its F_OFD_SETLK and
 *    F_SETLK write locks of the holder's ranges are refused (EAGAIN): the
 *    local process never got in before the holder's locks. On a build where
 *    the holder's LOCK lets go of the lease (as it must for a write
 *    delegation) the open completes at the first LOCK and the local
 *    process's write locks come first (measured: granted; this test fails);
 *  - an open for writing gets no write delegation: OPEN_DELEGATE_NONE, and
 *    with OPEN4_SHARE_ACCESS_WANT_WRITE_DELEG OPEN_DELEGATE_NONE_EXT with
 *    WND4_WRITE_DELEG_NOT_SUPP_FTYPE;
 *  - restarted with "[nfsv4] delegations = yes" the same open gets
 *    OPEN_DELEGATE_WRITE (yes keeps what it meant);
 *  - the start-up log says "delegations on (read only)", then "on".
 */
#include <pthread.h>
#include <stdatomic.h>
#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CB_RECALL 4u              /* nfs_cb_opnum4 (RFC 8881 §20) */
#define WANT_WRITE_DELEG 0x0200u  /* OPEN4_SHARE_ACCESS_WANT_WRITE_DELEG (§18.16.1) */
#define WND4_WRITE_DELEG_NOT_SUPP_FTYPE 4u
#define RANGE 100                 /* the holder's locks: [0, 100) and [200, 300) */
#define RANGE2 200

static struct hx_env env;
static atomic_int recalls; /* CB_RECALLs the holder's callback service answered */

/* The holder's callback service: every call answered NFS4_OK, CB_RECALLs counted. */
static void on_cb(struct n4_client *k, const uint8_t *msg, size_t len)
{
	struct n4_cb_call cc;

	if (!n4_cb_parse(msg, len, &cc))
		return;
	if (cc.op2 == CB_RECALL)
		atomic_fetch_add(&recalls, 1);
	(void)n4_cb_answer(&k->c, &cc);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The local process: open(2) O_RDWR (held by the lease), then write locks of the holder's ranges. */
struct local_writer {
	char path[PATH_MAX + 16];
	pthread_t t;
	atomic_int opened; /* 1: open(2) returned */
	double opened_at;
	int open_err, ofd_err, ofd2_err, posix_err; /* 0 or errno */
};

static void *writer_main(void *arg)
{
	struct local_writer *w = arg;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = RANGE };
	int fd = open(w->path, O_RDWR);

	w->open_err = fd < 0 ? errno : 0;
	w->opened_at = now_s();
	atomic_store(&w->opened, 1);
	if (fd < 0)
		return NULL;
	w->ofd_err = fcntl(fd, F_OFD_SETLK, &fl) < 0 ? errno : 0;
	w->posix_err = fcntl(fd, F_SETLK, &fl) < 0 ? errno : 0;
	fl.l_start = RANGE2;
	w->ofd2_err = fcntl(fd, F_OFD_SETLK, &fl) < 0 ? errno : 0;
	close(fd);
	return NULL;
}

/* Until a CB_RECALL was answered (the holder calls SEQUENCE meanwhile): true if one came. */
static bool recall_wait(struct n4_client *k, int before, double limit_s)
{
	double t0 = now_s();

	while (atomic_load(&recalls) == before && now_s() - t0 < limit_s) {
		usleep(50 * 1000);
		(void)n4_sequence(k);
	}
	return atomic_load(&recalls) > before;
}

/* Is [0, RANGE) read-locked by someone else (F_OFD_GETLK on a read-only descriptor: breaks no read lease)? */
static bool range_read_locked(const char *path)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = RANGE };
	int fd = open(path, O_RDONLY | O_NONBLOCK);
	bool locked = fd >= 0 && fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type == F_RDLCK;

	if (fd >= 0)
		close(fd);
	return locked;
}

static void test_read_lock_under_lease(struct n4_client *a)
{
	struct local_writer w = { 0 };
	struct n4_openres res;
	struct n4_sid lsid;
	uint8_t fh[128];
	uint32_t fh_len = 0;

	hx_section("default config: a read delegation; the holder's pushed read lock keeps the lease");
	if (!CHECK_EQ(n4_open_deleg(a, env.export_dir, "rfile", true, N4_ACCESS_READ, "o", &res, fh, &fh_len), 0,
		      "OPEN for reading") ||
	    !CHECK_EQ(res.deleg, 1, "OPEN_DELEGATE_READ with no delegations line in rnfsd.conf"))
		return;
	snprintf(w.path, sizeof(w.path), "%s/rfile", env.export_dir);
	int before = atomic_load(&recalls);

	if (!CHECK_EQ(pthread_create(&w.t, NULL, writer_main, &w), 0, "local writer thread"))
		return;
	CHECK(recall_wait(a, before, 5), "the local open for writing recalls the delegation (CB_RECALL)");
	CHECK(!atomic_load(&w.opened), "the local open waits in open(2) (rnfsd's read lease)");
	/* What a Linux client does on the recall: its cached locks first (LOCK), then DELEGRETURN. */
	CHECK_EQ(n4_lock_new(a, fh, fh_len, N4_READ_LT, 0, RANGE, &res.sid, NULL, "cached", &lsid), 0,
		 "the holder's first cached read lock, pushed with LOCK during the recall: granted");
	usleep(500 * 1000);
	CHECK(!atomic_load(&w.opened), "0.5 s after that LOCK the local open still waits (the lease held)");
	/* Were the lease let go at the first LOCK (a write delegation's), the local process could lock
	 * this range before the holder's second LOCK arrived. */
	CHECK_EQ(n4_lock_new(a, fh, fh_len, N4_READ_LT, RANGE2, RANGE, &res.sid, NULL, "cached2", &lsid), 0,
		 "its second cached read lock: granted too");
	CHECK(range_read_locked(w.path), "the holder's read lock is the kernel's before the return");
	double t_return = now_s();

	CHECK_EQ(n4_delegreturn(a, fh, fh_len, &res.dsid), 0, "DELEGRETURN");
	pthread_join(w.t, NULL);
	CHECK(w.open_err == 0 && w.opened_at >= t_return && w.opened_at - t_return < 5,
	      "the local open completes after DELEGRETURN (%s, %.2f s after)", strerror(w.open_err),
	      w.opened_at - t_return);
	CHECK_EQ(w.ofd_err, EAGAIN, "its F_OFD_SETLK write lock of the holder's first range: EAGAIN");
	CHECK_EQ(w.ofd2_err, EAGAIN, "and of the second: EAGAIN");
	CHECK(w.posix_err == EAGAIN || w.posix_err == EACCES, "its F_SETLK write lock too: %s",
	      strerror(w.posix_err));
}

/* OPEN name for writing (access with want bits): its status, the delegation type and why in res. */
static int open_write(struct n4_client *k, const char *name, uint32_t access, struct n4_openres *res)
{
	uint8_t fh[128];
	uint32_t fh_len = 0;
	int st = n4_open_deleg(k, env.export_dir, name, true, access, name, res, fh, &fh_len);

	if (st == 0 && (res->deleg == 2 || res->deleg == 5))
		(void)n4_delegreturn(k, fh, fh_len, &res->dsid);
	return st;
}

static void test_no_write_deleg(struct n4_client *a)
{
	struct n4_openres res = { 0 };

	hx_section("default config: an open for writing gets no write delegation");
	CHECK(open_write(a, "wfile", N4_ACCESS_BOTH, &res) == 0 && res.deleg == 0,
	      "OPEN for writing: OPEN_DELEGATE_NONE (%u)", res.deleg);
	CHECK(open_write(a, "wfile2", N4_ACCESS_BOTH | WANT_WRITE_DELEG, &res) == 0 && res.deleg == 3 &&
		      res.why == WND4_WRITE_DELEG_NOT_SUPP_FTYPE,
	      "with WANT_WRITE_DELEG: OPEN_DELEGATE_NONE_EXT, WND4_WRITE_DELEG_NOT_SUPP_FTYPE (%u, why %u)",
	      res.deleg, res.why);
}

/* Restarted with [nfsv4] delegations = yes (grace-time 0: no grace period to wait): a write delegation. */
static void test_yes_grants_write(void)
{
	struct n4_openres res = { 0 };
	struct n4_client b;

	hx_section("[nfsv4] delegations = yes: the same open gets a write delegation");
	hx_daemon_stop(&env);
	if (!CHECK_EQ(hx_append_config(&env, "[nfsv4]\ndelegations = yes\ngrace-time = 0\n"), 0, "config") ||
	    !CHECK_EQ(hx_daemon_start(&env), 0, "restarted with delegations = yes") ||
	    !CHECK_EQ(n4_start_cb(&b, env.port, "rdeleg-yes"), 0, "a 4.1 client with a back channel"))
		return;
	b.on_cb = on_cb;
	CHECK_EQ(hx_log_count(&env, "(delegations on, directory delegations off;"), 1, "the log says: delegations on");
	CHECK(open_write(&b, "yfile", N4_ACCESS_BOTH, &res) == 0 && res.deleg == 2,
	      "OPEN for writing: OPEN_DELEGATE_WRITE (%u)", res.deleg);
	n4_client_close(&b);
}

int main(int argc, char **argv)
{
	struct n4_client a;

	hx_begin("nfs4_deleg_read", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	if (hx_write_config(&env) != 0 || hx_daemon_start(&env) != 0)
		return hx_end();
	CHECK_EQ(hx_log_count(&env, "(delegations on (read only), directory delegations off;"), 1,
		 "the start-up log says: delegations on (read only)");
	if (CHECK_EQ(n4_start_cb(&a, env.port, "rdeleg-holder"), 0, "a 4.1 client with a back channel")) {
		a.on_cb = on_cb;
		test_read_lock_under_lease(&a);
		test_no_write_deleg(&a);
		n4_client_close(&a);
		test_yes_grants_write();
	}
	hx_daemon_stop(&env);
	hx_env_release(&env);
	return hx_end();
}
