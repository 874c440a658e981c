/*
 * test_readdir.c - large and changing directories (RFC 1813 §3.3.16-17):
 *  - 10,000 entries (some with 255-byte names) listed with READDIRPLUS and
 *    READDIR over many replies: every name exactly once, attributes and
 *    handles present, cookies resumable; libnfs's nfs_opendir() agrees;
 *  - a directory of 2,000 entries listed repeatedly while another thread
 *    creates and removes other names in it: every listing terminates (no
 *    cookie loop), every unchanged entry is seen, and exactly once;
 *  - READDIRPLUS's handles are LOOKUP's, also from the handle cache
 *    (backend/local/handle_cache.h: a second listing is served from it) and
 *    after every file was removed and made again by a local process, so
 *    that inode numbers come back with new generations: the old handles are
 *    STALE, the listing gives the new ones.
 */
#include "tests/integration/harness.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BIG_N 10000
#define LONG_EVERY 97   /* every 97th name is 255 bytes long */
#define STABLE_N 2000

static struct hx_env env;
static struct rpc_context *nfs;
static struct hx_fh root;

static void big_name(unsigned i, char *out, size_t len)
{
	int n = snprintf(out, len, "e%05u-", i);

	if (i % LONG_EVERY == 0) {
		memset(out + n, 'L', 255 - n);
		out[255] = 0;
	}
}

/* Index from a name made by big_name(), or -1. */
static int big_index(const char *name)
{
	unsigned i;
	char check[256];

	if (sscanf(name, "e%05u-", &i) != 1 || i >= BIG_N)
		return -1;
	big_name(i, check, sizeof(check));
	return strcmp(check, name) ? -1 : (int)i;
}

struct listing {
	unsigned calls, entries, dot, dotdot, unknown, dups, bad_cookie_restarts;
	unsigned no_attr, no_fh;
	bool eof, failed;
	int status;
};

/*
 * List dir with READDIRPLUS (plus) or READDIR; index() maps a name to 0..n-1
 * or -1; seen[] counts. At most max_calls replies (a cookie loop fails it).
 */
static void list_dir(struct hx_fh *dir, bool plus, uint32_t maxcount, unsigned n, unsigned *seen,
		     int (*index)(const char *), unsigned max_calls, struct listing *l)
{
	READDIRPLUS3args pa;
	READDIRPLUS3res pr;
	READDIR3args ra;
	READDIR3res rr;
	entryplus3 *pe, pev;
	entry3 *e, ev;
	const char *name;
	int idx;

	memset(l, 0, sizeof(*l));
	memset(seen, 0, n * sizeof(*seen));
	memset(&pa, 0, sizeof(pa));
	memset(&ra, 0, sizeof(ra));
	pa.dir = hx_fh3(dir);
	ra.dir = hx_fh3(dir);
	pa.dircount = maxcount / 4;
	pa.maxcount = maxcount;
	ra.count = maxcount;
	while (!l->eof && l->calls < max_calls) {
		l->calls++;
		if (plus) {
			if (HX_CALL(nfs, rpc_nfs3_readdirplus_async, &pa, zdr_READDIRPLUS3res, &pr) != 0) {
				l->failed = true;
				l->status = -1;
				return;
			}
			l->status = pr.status;
		} else {
			if (HX_CALL(nfs, rpc_nfs3_readdir_async, &ra, zdr_READDIR3res, &rr) != 0) {
				l->failed = true;
				l->status = -1;
				return;
			}
			l->status = rr.status;
		}
		if (l->status == NFS3ERR_BAD_COOKIE && l->bad_cookie_restarts < 20) {
			/* RFC 1813 §3.3.16: the directory changed; start over. */
			l->bad_cookie_restarts++;
			memset(seen, 0, n * sizeof(*seen));
			memset(&pa.cookieverf, 0, sizeof(pa.cookieverf));
			memset(&ra.cookieverf, 0, sizeof(ra.cookieverf));
			pa.cookie = ra.cookie = 0;
			l->dot = l->dotdot = l->unknown = l->dups = l->entries = 0;
			continue;
		}
		if (l->status != NFS3_OK) {
			l->failed = true;
			return;
		}
		pe = plus ? pr.READDIRPLUS3res_u.resok.reply.entries : NULL;
		e = plus ? NULL : rr.READDIR3res_u.resok.reply.entries;
		while (plus ? pe != NULL : e != NULL) {
			/* libnfs 4.0's decoder packs list entries at 4-byte alignment: load copies. */
			if (plus)
				memcpy(&pev, pe, sizeof(pev));
			else
				memcpy(&ev, e, sizeof(ev));
			name = plus ? pev.name : ev.name;
			l->entries++;
			if (!strcmp(name, ".")) {
				l->dot++;
			} else if (!strcmp(name, "..")) {
				l->dotdot++;
			} else if ((idx = index(name)) < 0) {
				l->unknown++;
			} else {
				if (seen[idx]++)
					l->dups++;
				if (plus && !pev.name_attributes.attributes_follow)
					l->no_attr++;
				if (plus && !pev.name_handle.handle_follows)
					l->no_fh++;
			}
			if (plus) {
				pa.cookie = pev.cookie;
				pe = pev.nextentry;
			} else {
				ra.cookie = ev.cookie;
				e = ev.nextentry;
			}
		}
		if (plus) {
			memcpy(pa.cookieverf, pr.READDIRPLUS3res_u.resok.cookieverf, NFS3_COOKIEVERFSIZE);
			l->eof = pr.READDIRPLUS3res_u.resok.reply.eof;
		} else {
			memcpy(ra.cookieverf, rr.READDIR3res_u.resok.cookieverf, NFS3_COOKIEVERFSIZE);
			l->eof = rr.READDIR3res_u.resok.reply.eof;
		}
	}
}

static unsigned count_not_once(const unsigned *seen, unsigned n, unsigned *missing)
{
	unsigned i, bad = 0;

	*missing = 0;
	for (i = 0; i < n; i++) {
		if (seen[i] == 0)
			(*missing)++;
		if (seen[i] != 1)
			bad++;
	}
	return bad;
}

static void test_big(void)
{
	static unsigned seen[BIG_N];
	struct listing l;
	struct hx_fh dir;
	struct nfs_context *hl;
	struct nfsdir *d;
	struct nfsdirent *de;
	char name[300], err[512];
	unsigned i, missing, notonce, hl_count = 0, hl_bad = 0;
	double t0;
	int fd;

	hx_section("10,000-entry directory");
	mkdir(hx_xpath(&env, "big"), 0755);
	t0 = hx_now();
	for (i = 0; i < BIG_N; i++) {
		char path[PATH_MAX];

		big_name(i, name, sizeof(name));
		snprintf(path, sizeof(path), "%.3000s/big/%s", env.export_dir, name);
		fd = open(path, O_CREAT | O_WRONLY, 0644);
		if (fd >= 0)
			close(fd);
	}
	hx_note("created %u files locally in %.2f s", BIG_N, hx_now() - t0);
	if (!CHECK_NFS(hx3_lookup(nfs, &root, "big", &dir, NULL), NFS3_OK, "LOOKUP big"))
		return;

	t0 = hx_now();
	list_dir(&dir, true, 32768, BIG_N, seen, big_index, 100000, &l);
	hx_note("READDIRPLUS: %u replies, %u entries, %.2f s", l.calls, l.entries, hx_now() - t0);
	CHECK(!l.failed, "READDIRPLUS listing completes (%s)", hx_nfsstat_name(l.status));
	CHECK(l.eof, "READDIRPLUS reached eof");
	CHECK(l.calls > 10, "it took many replies (%u)", l.calls);
	notonce = count_not_once(seen, BIG_N, &missing);
	CHECK_EQ(notonce, 0, "READDIRPLUS: every one of %u names exactly once (%u missing, %u dups)",
		 BIG_N, missing, l.dups);
	CHECK_EQ(l.unknown, 0, "READDIRPLUS: no unknown names");
	CHECK(l.dot <= 1 && l.dotdot <= 1, "at most one \".\" and one \"..\"");
	CHECK_EQ(l.no_attr, 0, "READDIRPLUS: attributes for every entry");
	CHECK_EQ(l.no_fh, 0, "READDIRPLUS: a handle for every entry");
	CHECK_EQ(l.bad_cookie_restarts, 0, "no BAD_COOKIE on an unchanging directory");

	t0 = hx_now();
	list_dir(&dir, false, 8192, BIG_N, seen, big_index, 100000, &l);
	hx_note("READDIR: %u replies, %u entries, %.2f s", l.calls, l.entries, hx_now() - t0);
	CHECK(!l.failed && l.eof, "READDIR listing completes (%s)", hx_nfsstat_name(l.status));
	notonce = count_not_once(seen, BIG_N, &missing);
	CHECK_EQ(notonce, 0, "READDIR: every name exactly once (%u missing, %u dups)", missing, l.dups);

	hl = hx_mount(&env, env.export_dir, -1, -1, err, sizeof(err));
	if (CHECK(hl != NULL, "libnfs mount (%s)", hl ? "" : err)) {
		if (CHECK(nfs_opendir(hl, "/big", &d) == 0, "nfs_opendir /big (%s)", nfs_get_error(hl))) {
			memset(seen, 0, sizeof(seen));
			while ((de = nfs_readdir(hl, d)) != NULL) {
				int idx = big_index(de->name);

				if (idx >= 0) {
					seen[idx]++;
					hl_count++;
				} else if (strcmp(de->name, ".") && strcmp(de->name, "..")) {
					hl_bad++;
				}
			}
			nfs_closedir(hl, d);
			notonce = count_not_once(seen, BIG_N, &missing);
			CHECK(hl_count == BIG_N && notonce == 0 && hl_bad == 0,
			      "nfs_readdir sees the %u names exactly once (%u, %u missing, %u unknown)", BIG_N,
			      hl_count, missing, hl_bad);
		}
		hx_umount(hl);
	}
}

/* ---- a directory changing under the listing ---------------------------- */

static atomic_bool churn_stop;
static atomic_uint churn_ops;

static void *churn_thread(void *arg)
{
	const char *dir = arg;
	char path[PATH_MAX];
	unsigned i = 0;
	int fd;

	while (!atomic_load(&churn_stop)) {
		snprintf(path, sizeof(path), "%s/churn-%u", dir, i % 500);
		if (i % 1000 < 500) {
			fd = open(path, O_CREAT | O_WRONLY, 0644);
			if (fd >= 0)
				close(fd);
		} else {
			unlink(path);
		}
		i++;
		atomic_fetch_add(&churn_ops, 1);
	}
	return NULL;
}

static int stable_index(const char *name)
{
	unsigned i;

	if (sscanf(name, "stable-%u", &i) != 1 || i >= STABLE_N)
		return -1;
	return (int)i;
}

static void test_churn(void)
{
	static unsigned seen[STABLE_N];
	char dirpath[PATH_MAX], path[PATH_MAX];
	struct listing l;
	struct hx_fh dir;
	pthread_t th;
	unsigned round, missing, notonce, max_calls = 0, total_missing = 0, total_dups = 0;
	unsigned failed = 0, unterminated = 0, ops_before, ops_during;
	int fd, i;

	hx_section("listing a directory while it changes");
	snprintf(dirpath, sizeof(dirpath), "%.3000s/churn", env.export_dir);
	mkdir(dirpath, 0755);
	for (i = 0; i < STABLE_N; i++) {
		snprintf(path, sizeof(path), "%.3000s/stable-%d", dirpath, i);
		fd = open(path, O_CREAT | O_WRONLY, 0644);
		if (fd >= 0)
			close(fd);
	}
	if (!CHECK_NFS(hx3_lookup(nfs, &root, "churn", &dir, NULL), NFS3_OK, "LOOKUP churn"))
		return;
	atomic_store(&churn_stop, false);
	if (pthread_create(&th, NULL, churn_thread, dirpath) != 0) {
		CHECK(false, "pthread_create");
		return;
	}
	while (atomic_load(&churn_ops) < 100)
		usleep(1000);
	ops_before = atomic_load(&churn_ops);
	/* At least 6 listings, and more while the churn thread (starved on a
	 * loaded machine) has not yet changed the directory 100 times: the
	 * point is listings during change, not a race between the two. */
	for (round = 0; round < 6 || (atomic_load(&churn_ops) - ops_before < 100 && round < 200); round++) {
		/* ~40 entries per reply: about 50 round trips per listing, all during churn. */
		list_dir(&dir, round % 2 == 0, 4096, STABLE_N, seen, stable_index, 5000, &l);
		if (l.failed)
			failed++;
		if (!l.failed && !l.eof)
			unterminated++;
		notonce = count_not_once(seen, STABLE_N, &missing);
		total_missing += missing;
		total_dups += notonce - missing;
		if (l.calls > max_calls)
			max_calls = l.calls;
		hx_note("round %u (%s): %u replies, %u entries, %u stable missing, %u stable not once, "
			"%u BAD_COOKIE restarts, status %s", round, round % 2 == 0 ? "READDIRPLUS" : "READDIR",
			l.calls, l.entries, missing, notonce, l.bad_cookie_restarts, hx_nfsstat_name(l.status));
	}
	ops_during = atomic_load(&churn_ops) - ops_before;
	atomic_store(&churn_stop, true);
	pthread_join(th, NULL);
	CHECK(ops_during >= 100, "the directory really changed during the listings (%u creates/unlinks)",
	      ops_during);
	CHECK_EQ(failed, 0, "no listing failed with an error");
	CHECK_EQ(unterminated, 0, "every listing reached eof within 5000 replies (no cookie loop; max %u)",
		 max_calls);
	CHECK_EQ(total_missing, 0, "every unchanged entry seen in every listing");
	CHECK_EQ(total_dups, 0, "no unchanged entry seen twice in a listing");
	CHECK(hx_daemon_alive(&env), "daemon alive after the churn");
}

#define HC_N 300

/* rnfsctl stats' "handle cache: N of M; H hits, X misses": hits, or -1. */
static long handle_cache_hits(void)
{
	static char out[65536];
	const char *p;
	unsigned long n, max, hits, misses;

	if (hx_rnfsctl(&env, -1, out, sizeof(out), (const char *const[]){ "stats", NULL }) != 0 ||
	    !(p = strstr(out, "handle cache: ")) ||
	    sscanf(p, "handle cache: %lu of %lu; %lu hits, %lu misses", &n, &max, &hits, &misses) != 4)
		return -1;
	return (long)hits;
}

/* One READDIRPLUS listing of dir: each hc-N entry's handle and fileid into fh[N], ino[N]; entries seen. */
static unsigned list_handles(struct hx_fh *dir, struct hx_fh *fh, uint64_t *ino)
{
	READDIRPLUS3args a = { .dir = hx_fh3(dir), .dircount = 8192, .maxcount = 32768 };
	READDIRPLUS3res r;
	entryplus3 *pe, pev;
	unsigned seen = 0, i, calls = 0;
	bool eof = false;

	while (!eof && calls++ < 200) {
		if (HX_CALL(nfs, rpc_nfs3_readdirplus_async, &a, zdr_READDIRPLUS3res, &r) != 0 || r.status != NFS3_OK)
			return seen;
		for (pe = r.READDIRPLUS3res_u.resok.reply.entries; pe; pe = pev.nextentry) {
			memcpy(&pev, pe, sizeof(pev)); /* libnfs packs entries at 4-byte alignment */
			a.cookie = pev.cookie;
			if (sscanf(pev.name, "hc-%u", &i) != 1 || i >= HC_N || !pev.name_handle.handle_follows)
				continue;
			fh[i].len = pev.name_handle.post_op_fh3_u.handle.data.data_len;
			memcpy(fh[i].data, pev.name_handle.post_op_fh3_u.handle.data.data_val, fh[i].len);
			ino[i] = pev.fileid;
			seen++;
		}
		memcpy(a.cookieverf, r.READDIRPLUS3res_u.resok.cookieverf, NFS3_COOKIEVERFSIZE);
		eof = r.READDIRPLUS3res_u.resok.reply.eof;
	}
	return seen;
}

/* Files hc-0..HC_N-1 made (again) by a local process. */
static void hc_make(const char *dirpath)
{
	char path[PATH_MAX];

	for (unsigned i = 0; i < HC_N; i++) {
		int fd;

		snprintf(path, sizeof(path), "%.3000s/hc-%u", dirpath, i);
		unlink(path);
		if ((fd = open(path, O_CREAT | O_WRONLY, 0644)) >= 0)
			close(fd);
	}
}

/* How many entries' listed handle is not LOOKUP's. */
static unsigned hc_mismatches(struct hx_fh *dir, const struct hx_fh *fh)
{
	unsigned bad = 0;
	char name[32];
	struct hx_fh l;

	for (unsigned i = 0; i < HC_N; i++) {
		snprintf(name, sizeof(name), "hc-%u", i);
		if (hx3_lookup(nfs, dir, name, &l, NULL) != NFS3_OK || l.len != fh[i].len ||
		    memcmp(l.data, fh[i].data, l.len))
			bad++;
	}
	return bad;
}

static void test_handles(void)
{
	static struct hx_fh fh[HC_N], old[HC_N];
	static uint64_t ino[HC_N], old_ino[HC_N];
	char dirpath[PATH_MAX];
	unsigned reused = 0, stale = 0;
	struct hx_fh dir;
	long hits0, hits1;
	fattr3 attr;

	hx_section("READDIRPLUS handles, cached and after inode reuse");
	snprintf(dirpath, sizeof(dirpath), "%.3000s/hc", env.export_dir);
	mkdir(dirpath, 0755);
	hc_make(dirpath);
	if (!CHECK_NFS(hx3_lookup(nfs, &root, "hc", &dir, NULL), NFS3_OK, "LOOKUP hc"))
		return;
	CHECK_EQ(list_handles(&dir, fh, ino), HC_N, "first listing: every entry with a handle");
	hits0 = handle_cache_hits();
	CHECK_EQ(list_handles(&dir, fh, ino), HC_N, "second listing: every entry with a handle");
	hits1 = handle_cache_hits();
	hx_note("handle cache hits %ld -> %ld (the export's file system %s birth times)", hits0, hits1,
		hits1 > hits0 ? "gives" : "may not give");
	if (!hx_ceph_conf()) /* the local backend's cache (a ceph export: no local driver, no line) */
		CHECK(hits0 >= 0 && hits1 >= hits0, "rnfsctl stats shows the handle cache");
	CHECK_EQ(hc_mismatches(&dir, fh), 0, "every listed handle is LOOKUP's");
	memcpy(old, fh, sizeof(old));
	memcpy(old_ino, ino, sizeof(old_ino));
	hc_make(dirpath); /* every file removed and made again: inode numbers come back */
	CHECK_EQ(list_handles(&dir, fh, ino), HC_N, "listing after the files were made again");
	CHECK_EQ(hc_mismatches(&dir, fh), 0, "every listed handle is LOOKUP's new one");
	for (unsigned i = 0; i < HC_N; i++) {
		for (unsigned j = 0; j < HC_N; j++)
			if (ino[i] == old_ino[j]) {
				reused++;
				break;
			}
		stale += hx3_getattr(nfs, &old[i], &attr) == NFS3ERR_STALE;
	}
	hx_note("%u of %u inode numbers came back (new generations)", reused, HC_N);
	CHECK_EQ(stale, HC_N, "every old handle is STALE");
}

int main(int argc, char **argv)
{
	hx_begin("readdir", argc, argv);
	hx_env_init(&env);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	if (hx_open_export(&env, env.export_dir, -1, -1, &nfs, &root) != 0)
		return hx_end();
	test_big();
	test_churn();
	test_handles();
	hx_rpc_close(nfs);
	hx_daemon_stop(&env);
	return hx_end();
}
