/*
 * test_nfs4_deleg_locks.c - a write delegation's byte-range locks against
 * local processes (issue 26): with "[nfsv4] delegations = yes" on a local
 * export, the holder's LOCKs go on the delegation lease's own open file
 * description (backend/local/local_lock.c, lock_share.c), so the lease is
 * never broken by rnfsd itself:
 *  1. a local thread's open(2) of the holder's file waits (the lease) and
 *     recalls the delegation; the holder pushes its cached locks (a write
 *     lock of one owner, overlapping read locks of two others) and the open
 *     still waits 0.5 s later; after DELEGRETURN the local process's F_SETLK
 *     write locks of the held ranges get EAGAIN, a read lock of the read
 *     ranges and a write lock of a free range are granted; another NFSv4
 *     client's LOCKT of the write range and write LOCK of the read ranges
 *     are DENIED, its read LOCK granted. On main the first LOCK lets the
 *     lease go: the open completes at once (this test fails);
 *  2. an owner's [0, 10) taken under the delegation, DELEGRETURN, then the
 *     same owner's [5, 15) (granted: merged with its own, not a conflict
 *     across two descriptions) and LOCKU [0, 15): a local process then locks
 *     the whole file, and the daemon's descriptors and the shared-description
 *     gauges are back where they were;
 *  3. two owners of the holder conflicting under the delegation: the second
 *     gets NFS4ERR_DENIED (LOCKT too); with two owners holding locks on the
 *     file, FREE_STATEID of either's lock stateid is NFS4ERR_LOCKS_HELD (on
 *     main the first was freed and its locks dropped: fails);
 *  4. a soak: 10 delegations (OPEN, ~300 LOCK/LOCKU pairs by two owners,
 *     DELEGRETURN with a lock held, LOCK/LOCKU after it, CLOSE): descriptors,
 *     lock gauges and RSS back where they started.
 */
#include <pthread.h>
#include <stdatomic.h>
#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SOAK_ROUNDS 10u
#define SOAK_PAIRS 150u /* per owner and round: 2 owners, 3,000 LOCK/LOCKU pairs in all */
#define RSS_SLACK_KB 2048

static struct hx_env env;
static char stats_path[600];

/* F_SETLK of [off, off+len) as type through fd: 0 or errno (EACCES as EAGAIN). */
static int local_lock(int fd, short type, off_t off, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = off, .l_len = len };

	if (fcntl(fd, F_SETLK, &fl) == 0)
		return 0;
	return errno == EACCES ? EAGAIN : errno;
}

/* The local process of case 1: open(2) (held by the lease), then its locks. */
struct local_proc {
	char path[PATH_MAX + 16];
	pthread_t t;
	atomic_int opened;
	double opened_at;
	int open_err, w_held, w_read_held, r_read_held, w_free;
};

static void *local_main(void *arg)
{
	struct local_proc *p = arg;
	int fd = open(p->path, O_RDWR);

	p->open_err = fd < 0 ? errno : 0;
	p->opened_at = n4_now();
	atomic_store(&p->opened, 1);
	if (fd < 0)
		return NULL;
	p->w_held = local_lock(fd, F_WRLCK, 0, 100);        /* owner w's write lock */
	p->w_read_held = local_lock(fd, F_WRLCK, 300, 50); /* only owner r2's read lock */
	p->r_read_held = local_lock(fd, F_RDLCK, 200, 150); /* reads share */
	p->w_free = local_lock(fd, F_WRLCK, 400, 100);
	close(fd);
	return NULL;
}

/* OPEN name for reading and writing: 0 and the delegation's type in *deleg. */
static int open_file(struct n4_client *a, const char *name, struct n4_openres *res, uint8_t *fh, uint32_t *fh_len)
{
	memset(res, 0, sizeof(*res));
	return n4_open_deleg(a, env.export_dir, name, true, N4_ACCESS_BOTH, name, res, fh, fh_len);
}

/* Another NFSv4 client meets the holder's locks kept on the shared description after the return. */
static void other_client_meets(const uint8_t *fh, uint32_t fh_len)
{
	struct n4_client b;
	struct n4_sid osid, lsid;
	uint8_t bfh[128];
	uint32_t bfh_len = 0;

	if (!CHECK_EQ(n4_start(&b, env.port, 1, "wdeleg-other"), 0, "another 4.1 client"))
		return;
	CHECK_EQ(n4_open(&b, env.export_dir, "f1", false, N4_ACCESS_BOTH, 0, "b", NULL, &osid, bfh, &bfh_len), 0,
		 "its OPEN of the file");
	CHECK(bfh_len == fh_len && memcmp(bfh, fh, fh_len) == 0, "the same file handle");
	CHECK_EQ(n4_lockt(&b, fh, fh_len, N4_WRITE_LT, 0, 1, "b"), N4ERR_DENIED, "its LOCKT of w's range: DENIED");
	CHECK_EQ(n4_lock_new(&b, fh, fh_len, N4_WRITE_LT, 260, 10, &osid, NULL, "b", &lsid), N4ERR_DENIED,
		 "its write LOCK of the read ranges: DENIED");
	CHECK_EQ(n4_lock_new(&b, fh, fh_len, N4_READ_LT, 260, 10, &osid, NULL, "b2", &lsid), 0,
		 "its read LOCK there: granted");
	CHECK_EQ(n4_locku(&b, fh, fh_len, &lsid, NULL, 260, 10), 0, "LOCKU");
	CHECK_EQ(n4_close(&b, fh, fh_len, NULL, &osid), 0, "CLOSE");
	n4_client_close(&b);
}

static void test_pushed_locks(struct n4_client *a)
{
	struct local_proc p = { 0 };
	struct n4_openres res;
	struct n4_sid lw, lr1, lr2;
	uint8_t fh[128];
	uint32_t fh_len = 0;

	hx_section("1. the holder's pushed locks keep the lease; the local process comes after them");
	if (!CHECK_EQ(open_file(a, "f1", &res, fh, &fh_len), 0, "OPEN for writing") ||
	    !CHECK_EQ(res.deleg, 2, "OPEN_DELEGATE_WRITE"))
		return;
	snprintf(p.path, sizeof(p.path), "%s/f1", env.export_dir);
	unsigned before = a->cb_recalls;

	if (!CHECK_EQ(pthread_create(&p.t, NULL, local_main, &p), 0, "local thread"))
		return;
	CHECK(n4_recall_wait(a, before, 5), "the local open recalls the delegation (CB_RECALL)");
	CHECK(!atomic_load(&p.opened), "the local open waits in open(2) (rnfsd's write lease)");
	CHECK_EQ(n4_lock_new(a, fh, fh_len, N4_WRITE_LT, 0, 100, &res.sid, NULL, "w", &lw), 0,
		 "owner w's cached write lock [0, 100): granted");
	usleep(500 * 1000);
	CHECK(!atomic_load(&p.opened), "0.5 s after that LOCK the local open still waits (the lease held)");
	CHECK_EQ(n4_lock_new(a, fh, fh_len, N4_READ_LT, 200, 100, &res.sid, NULL, "r1", &lr1), 0,
		 "owner r1's read lock [200, 300): granted");
	CHECK_EQ(n4_lock_new(a, fh, fh_len, N4_READ_LT, 250, 100, &res.sid, NULL, "r2", &lr2), 0,
		 "owner r2's overlapping read lock [250, 350): granted");
	CHECK(!atomic_load(&p.opened), "the local open still waits after the three LOCKs");
	double t_return = n4_now();

	CHECK_EQ(n4_delegreturn(a, fh, fh_len, &res.dsid), 0, "DELEGRETURN");
	pthread_join(p.t, NULL);
	CHECK(p.open_err == 0 && p.opened_at >= t_return, "the local open completes after DELEGRETURN (%s)",
	      strerror(p.open_err));
	CHECK_EQ(p.w_held, EAGAIN, "local write lock of owner w's range: EAGAIN");
	CHECK_EQ(p.w_read_held, EAGAIN, "local write lock of r2's read range: EAGAIN");
	CHECK_EQ(p.r_read_held, 0, "local read lock of the read ranges: granted");
	CHECK_EQ(p.w_free, 0, "local write lock of a free range: granted");
	other_client_meets(fh, fh_len);
	CHECK_EQ(n4_locku(a, fh, fh_len, &lw, NULL, 0, 100), 0, "LOCKU w after the return");
	CHECK_EQ(n4_locku(a, fh, fh_len, &lr1, NULL, 200, 100), 0, "LOCKU r1");
	CHECK_EQ(n4_locku(a, fh, fh_len, &lr2, NULL, 250, 100), 0, "LOCKU r2");
	CHECK_EQ(n4_close(a, fh, fh_len, NULL, &res.sid), 0, "CLOSE");
}

/* A gauge of the stats document's resources (-1: missing). */
static long long gauge(const char *key)
{
	char *doc = n4_stats_json(stats_path);
	long long v = doc ? n4_stats_num(doc, "resources", key) : -1;

	free(doc);
	return v;
}

static void test_own_lock_across_return(struct n4_client *a)
{
	struct n4_openres res;
	struct n4_sid l;
	uint8_t fh[128];
	uint32_t fh_len = 0;
	long fds0, fds1;
	char path[PATH_MAX + 16];

	hx_section("2. an owner's lock taken under the delegation, extended after the return");
	if (!CHECK_EQ(open_file(a, "f2", &res, fh, &fh_len), 0, "OPEN for writing") ||
	    !CHECK_EQ(res.deleg, 2, "OPEN_DELEGATE_WRITE"))
		return;
	fds0 = n4_proc_fds(env.pid);
	CHECK_EQ(n4_lock_new(a, fh, fh_len, N4_WRITE_LT, 0, 10, &res.sid, NULL, "o2", &l), 0, "LOCK [0, 10)");
	CHECK_EQ(gauge("lock_shared_descriptions"), 1, "one shared description");
	CHECK_EQ(n4_delegreturn(a, fh, fh_len, &res.dsid), 0, "DELEGRETURN");
	CHECK_EQ(n4_lock_more(a, fh, fh_len, N4_WRITE_LT, 5, 10, &l, NULL), 0,
		 "the same owner's LOCK [5, 15) after the return: granted (its own lock)");
	CHECK_EQ(n4_locku(a, fh, fh_len, &l, NULL, 0, 15), 0, "LOCKU [0, 15)");
	snprintf(path, sizeof(path), "%s/f2", env.export_dir);
	int fd = open(path, O_RDWR | O_NONBLOCK);

	CHECK(fd >= 0, "local open (no lease left): %s", fd < 0 ? strerror(errno) : "ok");
	if (fd >= 0) {
		CHECK_EQ(local_lock(fd, F_WRLCK, 0, 0), 0, "a local write lock of the whole file: granted");
		close(fd);
	}
	fds1 = n4_proc_fds(env.pid);
	CHECK(fds1 == fds0 - 1, "daemon descriptors: %ld after OPEN, %ld now (the lease's gone, no lock's left)",
	      fds0, fds1);
	CHECK_EQ(gauge("lock_shared_descriptions"), 0, "no shared description left");
	CHECK_EQ(gauge("lock_shared_pieces"), 0, "no shared piece left");
	CHECK_EQ(n4_close(a, fh, fh_len, NULL, &res.sid), 0, "CLOSE");
}

static void test_owners_conflict(struct n4_client *a)
{
	struct n4_openres res;
	struct n4_sid l1, l2;
	uint8_t fh[128];
	uint32_t fh_len = 0;

	hx_section("3. two owners of the holder conflict under the delegation");
	if (!CHECK_EQ(open_file(a, "f3", &res, fh, &fh_len), 0, "OPEN for writing") ||
	    !CHECK_EQ(res.deleg, 2, "OPEN_DELEGATE_WRITE"))
		return;
	CHECK_EQ(n4_lock_new(a, fh, fh_len, N4_WRITE_LT, 0, 10, &res.sid, NULL, "c1", &l1), 0, "c1 LOCK [0, 10)");
	CHECK_EQ(n4_lock_new(a, fh, fh_len, N4_WRITE_LT, 5, 1, &res.sid, NULL, "c2", &l2), N4ERR_DENIED,
		 "c2 LOCK [5, 6): NFS4ERR_DENIED");
	CHECK_EQ(n4_lock_new(a, fh, fh_len, N4_READ_LT, 9, 5, &res.sid, NULL, "c3", &l2), N4ERR_DENIED,
		 "c3 read LOCK [9, 14): NFS4ERR_DENIED");
	CHECK_EQ(n4_lockt(a, fh, fh_len, N4_WRITE_LT, 0, 1, "c2"), N4ERR_DENIED, "LOCKT by c2: DENIED");
	CHECK_EQ(n4_lockt(a, fh, fh_len, N4_WRITE_LT, 0, 1, "c1"), 0, "LOCKT by c1 (its own): OK");
	CHECK_EQ(n4_lock_new(a, fh, fh_len, N4_WRITE_LT, 10, 5, &res.sid, NULL, "c4", &l2), 0,
		 "c4 LOCK [10, 15) beside it: granted");
	/* RFC 8881 §18.38.3: a lock stateid whose owner holds locks is not freed (two holders on the file). */
	CHECK_EQ(n4_free_stateid(a, &l1), N4ERR_LOCKS_HELD, "FREE_STATEID of c1's lock stateid: LOCKS_HELD");
	CHECK_EQ(n4_free_stateid(a, &l2), N4ERR_LOCKS_HELD, "FREE_STATEID of c4's: LOCKS_HELD");
	CHECK_EQ(n4_locku(a, fh, fh_len, &l1, NULL, 0, 10), 0, "LOCKU c1");
	CHECK_EQ(n4_locku(a, fh, fh_len, &l2, NULL, 10, 5), 0, "LOCKU c4");
	CHECK_EQ(n4_delegreturn(a, fh, fh_len, &res.dsid), 0, "DELEGRETURN");
	CHECK_EQ(n4_close(a, fh, fh_len, NULL, &res.sid), 0, "CLOSE");
}

/* One round of the soak: 0, or the number of failed calls. */
static unsigned soak_round(struct n4_client *a, unsigned r)
{
	struct n4_openres res;
	struct n4_sid l[2];
	uint8_t fh[128];
	uint32_t fh_len = 0;
	char own[2][16];
	unsigned bad = 0;

	if (open_file(a, "soak", &res, fh, &fh_len) != 0 || res.deleg != 2)
		return 1;
	for (unsigned o = 0; o < 2; o++) {
		snprintf(own[o], sizeof(own[o]), "s%u.%u", r, o);
		bad += n4_lock_new(a, fh, fh_len, N4_WRITE_LT, 1000 * o, 1, &res.sid, NULL, own[o], &l[o]) != 0;
	}
	for (unsigned i = 0; i < SOAK_PAIRS && !bad; i++)
		for (unsigned o = 0; o < 2; o++) {
			uint64_t off = 1000 * o + 10 + i % 97 * 7;
			uint32_t type = i % 3 ? N4_WRITE_LT : N4_READ_LT;

			bad += n4_lock_more(a, fh, fh_len, type, off, 5 + i % 11, &l[o], NULL) != 0;
			bad += n4_locku(a, fh, fh_len, &l[o], NULL, off + 2, 2) != 0; /* the middle: a split */
			bad += n4_locku(a, fh, fh_len, &l[o], NULL, off, 16) != 0;
		}
	bad += n4_delegreturn(a, fh, fh_len, &res.dsid) != 0; /* both owners still hold a byte */
	bad += n4_lock_more(a, fh, fh_len, N4_WRITE_LT, 0, 2, &l[0], NULL) != 0;
	for (unsigned o = 0; o < 2; o++)
		bad += n4_locku(a, fh, fh_len, &l[o], NULL, 0, UINT64_MAX) != 0;
	bad += n4_close(a, fh, fh_len, NULL, &res.sid) != 0;
	return bad;
}

static void test_soak(struct n4_client *a)
{
	long fds0, fds1, rss0, rss1;
	unsigned bad = 0;
	double t0;

	hx_section("4. soak: %u delegations, LOCK/LOCKU under each, returned with locks held", SOAK_ROUNDS);
	bad += soak_round(a, 99); /* warm-up: the file, the caches */
	fds0 = n4_proc_fds(env.pid);
	rss0 = n4_proc_rss_kb(env.pid);
	t0 = n4_now();
	for (unsigned r = 0; r < SOAK_ROUNDS && !bad; r++)
		bad += soak_round(a, r);
	CHECK_EQ(bad, 0, "every soak call succeeds");
	fds1 = n4_proc_fds(env.pid);
	rss1 = n4_proc_rss_kb(env.pid);
	hx_note("%u rounds in %.1f s; descriptors %ld -> %ld, RSS %ld -> %ld KiB", SOAK_ROUNDS, n4_now() - t0, fds0,
		fds1, rss0, rss1);
	CHECK_EQ(fds1, fds0, "daemon descriptors back where they were");
	CHECK(rss1 > 0 && rss1 <= rss0 + RSS_SLACK_KB, "RSS within %d KiB (%ld -> %ld)", RSS_SLACK_KB, rss0, rss1);
	CHECK_EQ(gauge("lock_descriptions"), 0, "no lock description left");
	CHECK_EQ(gauge("lock_shared_descriptions"), 0, "no shared description left");
	CHECK_EQ(gauge("lock_shared_pieces"), 0, "no shared piece left");
}

int main(int argc, char **argv)
{
	static char extra[700];
	struct n4_client a;

	hx_begin("nfs4_deleg_locks", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	snprintf(stats_path, sizeof(stats_path), "%s/stats.sock", env.dir);
	snprintf(extra, sizeof(extra), "stats-socket = %s\n", stats_path);
	env.rnfsd_extra = extra;
	if (hx_write_config(&env) != 0 || hx_append_config(&env, "[nfsv4]\ndelegations = yes\ngrace-time = 0\n") != 0 ||
	    hx_daemon_start(&env) != 0)
		return hx_end();
	if (CHECK_EQ(n4_start_cb(&a, env.port, "wdeleg-locks"), 0, "a 4.1 client with a back channel")) {
		a.on_cb = n4_cb_count_recalls;
		test_pushed_locks(&a);
		test_own_lock_across_return(&a);
		test_owners_conflict(&a);
		test_soak(&a);
		n4_client_close(&a);
	}
	hx_daemon_stop(&env);
	hx_env_release(&env);
	return hx_end();
}
