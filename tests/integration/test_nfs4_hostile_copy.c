/*
 * test_nfs4_hostile_copy.c - issue 24, defect 12: synchronous NFSv4.2 COPYs
 * must not take every worker thread. Eight connections, each its own 4.2
 * client, send COPY (ca_synchronous) of a 256 MiB file back to back, as fast
 * as the answers come; meanwhile:
 *   (a) some of them are answered NFS4ERR_DELAY (RFC 7862 §15.2: the copies
 *       are over their share of the workers, [nfsv4] copy-workers);
 *   (b) a neighbour (n4_watch) is answered within N4_LIVE_S (nfs4raw.h) throughout, and so
 *       is a fresh client's OPEN, READ and CLOSE of another file, made while
 *       the copies go on;
 *   (c) the daemon's descriptors grow by at most 64 (the connections and
 *       their files) and its memory by at most 64 MiB.
 * On main (before the fix) each COPY held a worker for up to 256 MiB and no
 * COPY was refused: the fresh client's OPEN waited behind the copies.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"

#define ATTACKERS 8
#define SRC_SIZE (256ull << 20)
#define ATTACK_S 4.0

static struct hx_env env;

struct attacker {
	int idx;
	struct n4_client k;
	uint8_t sfh[128], dfh[128];
	uint32_t sfh_len, dfh_len;
	struct n4_sid ssid, dsid;
	pthread_t thread;
	unsigned ok, delay, other;
	int last_other;
};

static atomic_bool stop;

/* PUTFH src, SAVEFH, PUTFH dst, COPY of the whole source, synchronous: its status. */
static int copy_sync(struct attacker *t)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin(&t->k, &a, 4);
	n4_xb_putfh(&a, t->sfh, t->sfh_len);
	xb_u32(&a, N4_SAVEFH);
	n4_xb_putfh(&a, t->dfh, t->dfh_len);
	xb_u32(&a, N4_COPY);
	n4_xb_sid(&a, &t->ssid);
	n4_xb_sid(&a, &t->dsid);
	xb_u64(&a, 0);        /* ca_src_offset */
	xb_u64(&a, 0);        /* ca_dst_offset */
	xb_u64(&a, 0);        /* ca_count: to the source's end */
	xb_u32(&a, 1);        /* ca_consecutive */
	xb_u32(&a, 1);        /* ca_synchronous */
	xb_u32(&a, 0);        /* ca_source_server<> */
	st = n4_call(&t->k, &a, &r);
	raw_reply_free(&r);
	return st;
}

static void *attack(void *arg)
{
	struct attacker *t = arg;

	while (!atomic_load(&stop)) {
		int st = copy_sync(t);

		if (st == N4_OK) {
			t->ok++;
		} else if (st == N4ERR_DELAY) {
			t->delay++;
		} else {
			t->other++;
			t->last_other = st;
			if (st < 0)
				break;
		}
	}
	return NULL;
}

/* Each attacker: its own client, the source open for reading, its own destination for writing. */
static bool attacker_setup(struct attacker *t, int idx)
{
	char id[32], dst[32];
	uint32_t sq = 0;

	memset(t, 0, sizeof(*t));
	t->idx = idx;
	snprintf(id, sizeof(id), "copier-%d", idx);
	snprintf(dst, sizeof(dst), "copy-dst-%d", idx);
	return n4_start(&t->k, env.port, 2, id) == 0 &&
	       n4_open(&t->k, env.export_dir, "copy-src", false, N4_ACCESS_READ, 0, "o-src", &sq, &t->ssid, t->sfh,
		       &t->sfh_len) == 0 &&
	       n4_open(&t->k, env.export_dir, dst, true, N4_ACCESS_WRITE, 0, "o-dst", &sq, &t->dsid, t->dfh,
		       &t->dfh_len) == 0;
}

/* A fresh client's OPEN, READ and CLOSE of "small": the slowest of the three, or -1 if one failed. */
static double fresh_client(void)
{
	struct n4_client k;
	struct n4_sid sid;
	uint8_t fh[128], buf[64];
	uint32_t fh_len, got = 0, sq = 0;
	double t0, slowest = 0, dt;
	int st;

	if (n4_start(&k, env.port, 1, "fresh-client") != 0)
		return -1;
	t0 = hx_now();
	st = n4_open(&k, env.export_dir, "small", false, N4_ACCESS_READ, 0, "fresh", &sq, &sid, fh, &fh_len);
	slowest = hx_now() - t0;
	if (st == 0) {
		t0 = hx_now();
		st = n4_read(&k, fh, fh_len, &sid, 0, sizeof(buf), buf, &got);
		dt = hx_now() - t0;
		slowest = dt > slowest ? dt : slowest;
	}
	if (st == 0) {
		t0 = hx_now();
		st = n4_close(&k, fh, fh_len, &sq, &sid);
		dt = hx_now() - t0;
		slowest = dt > slowest ? dt : slowest;
	}
	n4_client_close(&k);
	return st == 0 && got == 5 ? slowest : -1;
}

static void test_copies_share_workers(void)
{
	static struct attacker t[ATTACKERS];
	struct n4_watch w;
	unsigned ok = 0, delay = 0, other = 0, started = 0;
	long fds0, rss0, fds1, rss1;
	double fresh, slowest;

	hx_section("8 connections sending synchronous COPYs of 256 MiB: a neighbour and a fresh client still answered");
	fds0 = n4_proc_fds(env.pid);
	rss0 = n4_proc_rss_kb(env.pid);
	if (!CHECK(n4_watch_start(&w, env.port, "neighbour") == 0, "the neighbour is set up"))
		return;
	for (int i = 0; i < ATTACKERS; i++)
		if (CHECK(attacker_setup(&t[i], i), "copier %d set up", i) &&
		    pthread_create(&t[i].thread, NULL, attack, &t[i]) == 0)
			started |= 1u << i;
	usleep((useconds_t)(ATTACK_S / 2 * 1e6));
	fresh = fresh_client();
	usleep((useconds_t)(ATTACK_S / 2 * 1e6));
	fds1 = n4_proc_fds(env.pid);
	rss1 = n4_proc_rss_kb(env.pid);
	atomic_store(&stop, true);
	for (int i = 0; i < ATTACKERS; i++) {
		if (started & (1u << i))
			pthread_join(t[i].thread, NULL);
		ok += t[i].ok, delay += t[i].delay, other += t[i].other;
		if (t[i].other)
			hx_note("copier %d: last unexpected status %d", i, t[i].last_other);
		n4_client_close(&t[i].k);
	}
	slowest = n4_watch_stop(&w);
	hx_note("COPYs: %u NFS4_OK, %u NFS4ERR_DELAY, %u other; neighbour: %u calls, slowest %.3f s; "
		"fresh client's slowest %.3f s; fds %ld -> %ld, RSS %ld -> %ld KiB",
		ok, delay, other, w.calls, slowest, fresh, fds0, fds1, rss0, rss1);
	/* (a) the protocol's answer to copies over their share */
	CHECK(delay > 0, "some COPYs are answered NFS4ERR_DELAY (over the copies' share of the workers)");
	CHECK(ok > 0, "the copies within the share are done (NFS4_OK)");
	CHECK_EQ(other, 0, "no COPY gets any other status");
	/* (b) liveness */
	CHECK(w.failed == 0 && slowest <= N4_LIVE_S, "the neighbour is answered within %.0f s throughout (%u failed)",
	      N4_LIVE_S, w.failed);
	CHECK(fresh >= 0 && fresh <= N4_LIVE_S, "a fresh client's OPEN, READ and CLOSE are each answered within %.0f s",
	      N4_LIVE_S);
	/* (c) resources */
	CHECK(fds0 > 0 && fds1 <= fds0 + 64, "descriptors grow by at most 64 (%ld -> %ld)", fds0, fds1);
	CHECK(rss0 > 0 && rss1 <= rss0 + 64 * 1024, "memory grows by at most 64 MiB (%ld -> %ld KiB)", rss0, rss1);
	CHECK(fresh_client() >= 0, "after the attack a fresh client's OPEN, READ and CLOSE work");
}

/* The source: SRC_SIZE bytes of data (a sparse file would copy too cheaply to matter). */
static bool make_source(const char *path)
{
	static uint8_t buf[1 << 20];
	uint64_t seed = 24;
	FILE *f = fopen(path, "w");
	bool ok = f != NULL;

	for (uint64_t off = 0; ok && off < SRC_SIZE; off += sizeof(buf)) {
		hx_fill(&seed, buf, sizeof(buf));
		ok = fwrite(buf, 1, sizeof(buf), f) == sizeof(buf);
	}
	return f && fclose(f) == 0 && ok;
}

int main(int argc, char **argv)
{
	hx_begin("nfs4_hostile_copy", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	env.threads = 2; /* scaled down: 8 copying connections against 2 workers */
	hx_write_file(hx_xpath(&env, "small"), "hello", 5, 0644);
	if (!CHECK(make_source(hx_xpath(&env, "copy-src")), "a 256 MiB source file (data, no holes)"))
		return hx_end();
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	test_copies_share_workers();
	/* Every COPY's share of the workers given back (about 150 copies and tens of thousands refused). */
	char *doc = n4_stats_json(env.stats_socket);
	CHECK(doc != NULL, "stats document read");
	CHECK_EQ(doc ? n4_stats_num(doc, "nfs4_bounds", "sync_copies") : -1, 0,
		 "stats: no synchronous COPY holds a worker after the attack");
	free(doc);
	CHECK(hx_daemon_alive(&env), "daemon still running at the end");
	hx_daemon_stop(&env);
	for (int i = 0; i < ATTACKERS; i++)
		unlink(hx_xpath(&env, "copy-dst-%d", i));
	return hx_end();
}
