/*
 * test_nfs4_hostile_tab.c - hostile NFSv4 clients against the shared client
 * and session tables (issue 24, defects 4-7), through the raw client in
 * nfs4raw.c, each attack scaled down through rnfsd.conf:
 *
 *  4. clients from many addresses asking for the largest reply caches: their
 *     grants shrink (RFC 8881 §18.36.3), none is refused, and a newcomer still
 *     gets its whole share;
 *  5. one host making every client record it can: past its share (half of
 *     max-clients) it is answered DELAY (4.1) / RESOURCE (4.0), its own
 *     unconfirmed record going first, while another host still gets in;
 *  6. a client that takes locks and goes silent on an otherwise quiet server:
 *     its lease ends on the daemon's timer, a local process gets the lock and
 *     the daemon's descriptors fall back;
 *  7. clients confirmed while the stable record file cannot grow (a full
 *     tmpfs): CREATE_SESSION NOSPC, SETCLIENTID_CONFIRM RESOURCE; every client
 *     that was confirmed is a previous client after a restart;
 *
 * and a soak: thousands of session create/destroy and client create/expire
 * cycles, after which the gauges, descriptors and memory are back.
 *
 * Each part asserts (a) the attacker's answer, (b) a neighbour (n4_watch)
 * and a fresh client answered within N4_LIVE_S throughout, (c) the daemon's
 * descriptors and resident memory within a stated bound.
 */
#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define N4ERR_NOSPC 28
#define N4ERR_BADSESSION_ 10052
#define LIVE_S N4_LIVE_S /* the one timing bound (nfs4raw.h) */

static struct hx_env env;
static char stats_path[600];
static char extra[700];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A fresh environment and daemon with nfsv4 ("[nfsv4]\n..." lines) appended. */
static int start(const char *nfsv4)
{
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	snprintf(stats_path, sizeof(stats_path), "%s/stats.sock", env.dir);
	snprintf(extra, sizeof(extra), "stats-socket = %s\n", stats_path);
	env.rnfsd_extra = extra;
	if (hx_write_config(&env) != 0 || hx_append_config(&env, "%s", nfsv4) != 0)
		return -1;
	return hx_daemon_start(&env);
}

static void stop(void)
{
	hx_daemon_stop(&env);
	hx_env_release(&env);
}

static double gauge(const char *object, const char *key)
{
	char *doc = n4_stats_json(stats_path);
	double v = (double)n4_stats_num(doc, object, key);

	free(doc);
	return v;
}

/* (b): the neighbour stopped, and a fresh client from src set up within LIVE_S. */
static void check_live(struct n4_watch *w, const char *src, const char *id)
{
	struct n4_client k;
	double t0, slowest = n4_watch_stop(w);
	int st;

	CHECK(slowest <= LIVE_S && w->failed == 0 && w->calls > 0,
	      "(b) the neighbour was answered within %.0f s throughout (%u calls, %u failed, slowest %.3f s)", LIVE_S,
	      w->calls, w->failed, slowest);
	t0 = now_s();
	st = n4_connect_from(&k, env.port, 1, src) == 0 ? n4_setup(&k, id) : -1;
	CHECK(st == 0 && now_s() - t0 <= LIVE_S, "(b) a fresh client from %s is set up within %.0f s (status %d)", src,
	      LIVE_S, st);
	n4_client_close(&k);
}

/* (c): descriptors and resident memory within the stated bounds of where they started (memory: plus
 * the sanitizer's quarantine in an ASan build). */
static void check_resources(long fd0, long rss0, long fd_slack, long rss_slack_kb)
{
	long fds = n4_proc_fds(env.pid), rss = n4_proc_rss_kb(env.pid);

	rss_slack_kb += n4_proc_quarantine_kb(env.pid);
	CHECK(fds >= 0 && fds <= fd0 + fd_slack, "(c) descriptors %ld <= %ld + %ld", fds, fd0, fd_slack);
	CHECK(rss >= 0 && rss <= rss0 + rss_slack_kb, "(c) resident memory %ld KiB <= %ld + %ld KiB", rss, rss0,
	      rss_slack_kb);
}

/* ---- 4: the reply-cache budget ---- */

#define CACHE_ATTACKERS 32 /* x 4 sessions x 64 slots x 8 KiB: the whole 64 MiB default */

static void test_reply_cache(void)
{
	static struct n4_client att[CACHE_ATTACKERS];
	unsigned shrunk = 0, refused = 0, made = 0;
	uint64_t granted = 0;
	struct n4_client fresh;
	struct n4_watch w;
	char src[32], id[32];
	long fd0, rss0;

	hx_section("4: 128 sessions asking for the largest reply caches");
	if (start("[nfsv4]\nmax-clients = 64\n") != 0 || !CHECK(n4_watch_start(&w, env.port, "tab4-watch") == 0,
								"the neighbour is set up"))
		return stop();
	fd0 = n4_proc_fds(env.pid), rss0 = n4_proc_rss_kb(env.pid);
	for (unsigned i = 0; i < CACHE_ATTACKERS; i++) {
		uint32_t seq = 0;
		snprintf(src, sizeof(src), "127.0.1.%u", i + 1);
		snprintf(id, sizeof(id), "tab4-att-%u", i);
		if (n4_connect_from(&att[i], env.port, 1, src) != 0 || n4_exchange_id(&att[i], id, &seq) != 0)
			continue;
		att[i].max_reqs = 64, att[i].max_resp_cached = 8192;
		for (unsigned s = 0; s < 4; s++) {
			int st = n4_create_session(&att[i], seq + s);
			made += st == 0;
			refused += st != 0;
			shrunk += st == 0 && (att[i].got_reqs < 64 || att[i].got_cached < 8192);
			granted += st == 0 ? (uint64_t)att[i].got_reqs * att[i].got_cached : 0;
		}
	}
	/* (a) RFC 8881 §18.36.3: the server lowers what the client asks; nothing refused. */
	CHECK(made == 4 * CACHE_ATTACKERS && refused == 0, "(a) every attacker session is created (%u made, %u refused)",
	      made, refused);
	CHECK(shrunk > 0 && granted <= (64u << 20), "(a) %u grants shrunk, %llu bytes granted within the 64 MiB budget",
	      shrunk, (unsigned long long)granted);
	n4_connect_from(&fresh, env.port, 1, "127.0.0.77");
	fresh.max_reqs = 64, fresh.max_resp_cached = 8192;
	CHECK_EQ(n4_setup(&fresh, "tab4-fresh"), 0, "(a) a newcomer asking for a cache is not refused (was DELAY)");
	CHECK(fresh.got_reqs == 64 && fresh.got_cached == 8192, "(a) ... and gets its whole share: %u slots of %u bytes",
	      fresh.got_reqs, fresh.got_cached);
	CHECK(gauge("nfs4_limits", "reply_cache_bytes") <= gauge("nfs4_limits", "reply_cache_limit"),
	      "the reply_cache_bytes gauge is within reply_cache_limit");
	check_live(&w, "127.0.0.78", "tab4-late");
	for (unsigned i = 0; i < CACHE_ATTACKERS; i++)
		n4_client_close(&att[i]);
	n4_client_close(&fresh);
	usleep(200 * 1000);
	check_resources(fd0, rss0, 4, 80 * 1024); /* the budget, 64 MiB, and slack */
	stop();
}

/* ---- 5: client records per host ---- */

#define HOST_SHARE 8 /* max-clients 16 / 2 */

static void test_host_share(void)
{
	static struct n4_client att[HOST_SHARE + 12];
	unsigned delayed = 0, resource = 0, other = 0;
	struct n4_client u, k;
	struct n4_watch w;
	uint32_t seq = 0;
	char id[32];
	long fd0, rss0;

	hx_section("5: one host making every client record it can (max-clients 16: a host's share is %u)", HOST_SHARE);
	if (start("[nfsv4]\nmax-clients = 16\n") != 0 || !CHECK(n4_watch_start(&w, env.port, "tab5-watch") == 0,
								"the neighbour is set up"))
		return stop();
	fd0 = n4_proc_fds(env.pid), rss0 = n4_proc_rss_kb(env.pid);
	for (unsigned i = 0; i < HOST_SHARE - 1; i++) {
		snprintf(id, sizeof(id), "tab5-att-%u", i);
		CHECK_EQ(n4_connect_from(&att[i], env.port, 1, "127.0.0.9") == 0 ? n4_setup(&att[i], id) : -1, 0,
			 "attacker client %u set up", i);
	}
	CHECK_EQ(n4_connect_from(&u, env.port, 1, "127.0.0.9") == 0 ? n4_exchange_id(&u, "tab5-unconf", &seq) : -1, 0,
		 "an unconfirmed record fills the host's share");
	/* (a) the host's unconfirmed record is the first to go ... */
	CHECK_EQ(n4_connect_from(&att[HOST_SHARE - 1], env.port, 1, "127.0.0.9") == 0 ?
		 n4_setup(&att[HOST_SHARE - 1], "tab5-att-last") : -1, 0,
		 "(a) one more record of the host displaces its unconfirmed one");
	CHECK_EQ(n4_create_session(&u, seq), N4ERR_STALE_CLIENTID, "(a) ... whose CREATE_SESSION is STALE_CLIENTID");
	/* ... then, its share full of clients within their leases, it is refused. */
	for (unsigned i = HOST_SHARE; i < HOST_SHARE + 12; i++) {
		uint32_t s2 = 0;
		snprintf(id, sizeof(id), "tab5-att-%u", i);
		int st = n4_connect_from(&att[i], env.port, i % 2 ? 0 : 1, "127.0.0.9") == 0 ?
			(i % 2 ? n4_setup(&att[i], id) : n4_exchange_id(&att[i], id, &s2)) : -1;
		delayed += i % 2 == 0 && st == N4ERR_DELAY;
		resource += i % 2 == 1 && st == N4ERR_RESOURCE;
		other += st != N4ERR_DELAY && st != N4ERR_RESOURCE;
	}
	CHECK(delayed == 6 && resource == 6 && other == 0,
	      "(a) past its share: EXCHANGE_ID DELAY (%u of 6), SETCLIENTID RESOURCE (%u of 6), nothing else (%u)",
	      delayed, resource, other);
	CHECK(gauge("nfs4_limits", "clients_refused") >= 12, "the clients_refused gauge counts them");
	/* The host keeps trying for 2 s: DELAY every time, the neighbour still answered. */
	{
		unsigned tries = 0, n = 0;
		double t0 = now_s();
		for (; now_s() - t0 < 2; tries++) {
			uint32_t s2 = 0;
			snprintf(id, sizeof(id), "tab5-retry-%u", tries);
			n += n4_exchange_id(&att[HOST_SHARE], id, &s2) == N4ERR_DELAY;
		}
		CHECK(n == tries, "(a) the host retrying for 2 s: DELAY %u of %u times", n, tries);
	}
	/* (b) clients of another host still get in. */
	for (unsigned i = 0; i < 4; i++) {
		snprintf(id, sizeof(id), "tab5-other-%u", i);
		CHECK_EQ(n4_connect_from(&k, env.port, 1, "127.0.0.2") == 0 ? n4_setup(&k, id) : -1, 0,
			 "(b) client %u of another host is set up", i);
		n4_client_close(&k);
	}
	check_live(&w, "127.0.0.3", "tab5-late");
	for (unsigned i = 0; i < HOST_SHARE + 12; i++)
		n4_client_close(&att[i]);
	n4_client_close(&u);
	usleep(200 * 1000);
	check_resources(fd0, rss0, 4, 8 * 1024);
	stop();
}

/* ---- 6: leases expire on a quiet server ---- */

/* A local process's write lock on [0, 100) of path: true if it was granted (then released). */
static bool local_lock(const char *path)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 100 };
	int fd = open(path, O_RDWR);
	bool got;

	if (fd < 0)
		return false;
	got = fcntl(fd, F_SETLK, &fl) == 0;
	close(fd); /* releases it */
	return got;
}

/* k opens name (created) and write-locks [0, 100). */
static int open_and_lock(struct n4_client *k, const char *name)
{
	uint8_t fh[128];
	uint32_t fh_len = 0, seqid = 0;
	struct n4_sid open, lock;
	int st = n4_open(k, env.export_dir, name, true, N4_ACCESS_BOTH, 0, "tab6-oo", &seqid, &open, fh, &fh_len);

	return st ? st : n4_lock_new(k, fh, fh_len, N4_WRITE_LT, 0, 100, &open, &seqid, "tab6-lo", &lock);
}

static int renew40(struct n4_client *k)
{
	struct raw_reply r;
	struct xb a;
	int st;

	xb_init(&a);
	n4_hdr(&a, 0, 1);
	xb_u32(&a, N4_RENEW);
	xb_u64(&a, k->cid);
	st = n4_call(k, &a, &r);
	raw_reply_free(&r);
	return st;
}

static void test_lease_timer(void)
{
	struct n4_client k41, k40;
	struct n4_watch w;
	double t0, waited = -1;
	long fd0, rss0;

	hx_section("6: a client holding locks goes silent on an otherwise quiet server (lease-time 10)");
	if (start("[nfsv4]\nlease-time = 10\n") != 0 || !CHECK(n4_watch_start(&w, env.port, "tab6-watch") == 0,
							       "the neighbour is set up"))
		return stop();
	if (!CHECK(n4_start(&k41, env.port, 1, "tab6-41") == 0 && n4_start(&k40, env.port, 0, "tab6-40") == 0,
		   "a 4.1 and a 4.0 client are set up"))
		return stop();
	fd0 = n4_proc_fds(env.pid), rss0 = n4_proc_rss_kb(env.pid);
	CHECK_EQ(open_and_lock(&k41, "lease41"), 0, "the 4.1 client opens and write-locks [0, 100) of lease41");
	CHECK_EQ(open_and_lock(&k40, "lease40"), 0, "the 4.0 client opens and write-locks [0, 100) of lease40");
	CHECK(!local_lock(hx_xpath(&env, "lease41")) && !local_lock(hx_xpath(&env, "lease40")),
	      "a local process's fcntl lock conflicts while the leases last");
	/* Silence: only the neighbour's SEQUENCE + GETATTR, which expire nothing themselves. */
	t0 = now_s();
	while (now_s() - t0 < 25) {
		if (local_lock(hx_xpath(&env, "lease41")) && local_lock(hx_xpath(&env, "lease40"))) {
			waited = now_s() - t0;
			break;
		}
		usleep(500 * 1000);
	}
	CHECK(waited >= 0, "a local process gets both locks within about two leases (after %.1f s)", waited);
	/* (a) the silent clients are told their state is gone. */
	CHECK_EQ(n4_sequence(&k41), N4ERR_BADSESSION_, "(a) the 4.1 client's SEQUENCE is BADSESSION");
	CHECK_EQ(renew40(&k40), N4ERR_EXPIRED, "(a) the 4.0 client's RENEW is EXPIRED");
	check_live(&w, "127.0.0.3", "tab6-late");
	check_resources(fd0, rss0, 0, 8 * 1024); /* the files the clients held are closed again */
	n4_client_close(&k41);
	n4_client_close(&k40);
	stop();
}

/* ---- 7: no confirmation without a stable record ---- */

#define LONG_ID 1000 /* bytes of each attacker's co_ownerid: ~1 KiB per record */

/* A 4.1 client from src with a LONG_ID-byte owner: its CREATE_SESSION's status (*seq its sequence). */
static int long_client(struct n4_client *k, const char *src, unsigned i, uint32_t *seq)
{
	char id[LONG_ID + 1];
	int st;

	memset(id, 'r', LONG_ID);
	snprintf(id, 16, "tab7-%08u", i);
	id[13] = 'r';
	id[LONG_ID] = '\0';
	if (n4_connect_from(k, env.port, 1, src) != 0 || (st = n4_exchange_id(k, id, seq)) != 0)
		return -1;
	return n4_create_session(k, *seq);
}

/* Attackers until the record file cannot grow: how many were confirmed; *nospc those refused. */
static unsigned fill_records(unsigned *nospc, unsigned *other)
{
	static struct n4_client att[120];
	unsigned ok = 0;
	char src[32];

	*nospc = *other = 0;
	for (unsigned i = 0; i < 120 && *nospc < 4; i++) {
		uint32_t seq = 0;
		snprintf(src, sizeof(src), "127.0.2.%u", i + 1);
		int st = long_client(&att[i], src, i, &seq);
		ok += st == 0;
		*nospc += st == N4ERR_NOSPC;
		*other += st != 0 && st != N4ERR_NOSPC;
	}
	for (unsigned i = 0; i < 120; i++)
		n4_client_close(&att[i]);
	return ok;
}

/* 4.0 clients from src until one's SETCLIENTID_CONFIRM fails: its status (or 0: none did). */
static int confirm40_until_refused(unsigned *confirmed)
{
	struct n4_client k;
	char id[32];
	int st = 0;

	*confirmed = 0;
	for (unsigned i = 0; i < 40 && st == 0; i++) {
		snprintf(id, sizeof(id), "tab7-40-%u", i);
		st = n4_connect_from(&k, env.port, 0, "127.0.3.1") == 0 ? n4_setup(&k, id) : -1;
		*confirmed += st == 0;
		n4_client_close(&k);
	}
	return st;
}

/* A refused client retrying CREATE_SESSION for 2 s: NOSPC every time (and no rewrite of the record
 * file each time, nfs4_recovery.c), while the neighbour goes on being answered. */
static void hammer_nospc(void)
{
	struct n4_client k;
	unsigned tries = 0, nospc = 0;
	uint32_t seq = 0;
	double t0 = now_s();

	nospc += long_client(&k, "127.0.2.250", 250, &seq) == N4ERR_NOSPC;
	for (tries = 1; now_s() - t0 < 2; tries++)
		nospc += n4_create_session(&k, seq) == N4ERR_NOSPC;
	CHECK(nospc == tries, "(a) a refused client retrying for 2 s: NOSPC %u of %u times", nospc, tries);
	n4_client_close(&k);
}

static void test_stable_records(void)
{
	unsigned ok, nospc, other, ok40;
	char ballast[PATH_MAX + 16], needle[96];
	struct n4_watch w;
	long fd0, rss0;
	int st40;

	hx_section("7: clients confirmed while the stable record file cannot grow (state-dir on a 64 KiB tmpfs)");
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	if (!CHECK(mount("tab7", env.state_dir, "tmpfs", 0, "size=64k,mode=0700") == 0, "a 64 KiB tmpfs on state-dir (%s)",
		   strerror(errno)))
		return hx_env_release(&env);
	snprintf(ballast, sizeof(ballast), "%s/ballast", env.state_dir);
	{
		static char zero[32 * 1024];
		hx_write_file(ballast, zero, sizeof(zero), 0600);
	}
	snprintf(stats_path, sizeof(stats_path), "%s/stats.sock", env.dir);
	snprintf(extra, sizeof(extra), "stats-socket = %s\n", stats_path);
	env.rnfsd_extra = extra;
	if (hx_write_config(&env) != 0 || hx_append_config(&env, "[nfsv4]\nmax-clients = 128\n") != 0 ||
	    hx_daemon_start(&env) != 0 || !CHECK(n4_watch_start(&w, env.port, "tab7-watch") == 0, "the neighbour is set up"))
		goto out;
	fd0 = n4_proc_fds(env.pid), rss0 = n4_proc_rss_kb(env.pid);
	ok = fill_records(&nospc, &other);
	/* (a) RFC 8881 §8.4.3, §15.2: not recorded, not confirmed (was: confirmed, a warning logged). */
	CHECK(ok > 0 && nospc == 4 && other == 0, "(a) %u clients confirmed, then CREATE_SESSION NOSPC (%u, others %u)", ok,
	      nospc, other);
	st40 = confirm40_until_refused(&ok40);
	CHECK_EQ(st40, N4ERR_RESOURCE, "(a) a 4.0 client's SETCLIENTID_CONFIRM is RESOURCE (after %u confirmed)", ok40);
	hammer_nospc();
	/* Room again (the ballast goes): a client a second later is recorded and confirmed. */
	unlink(ballast);
	sleep(1);
	check_live(&w, "127.0.0.3", "tab7-late");
	check_resources(fd0, rss0, 4, 8 * 1024);
	/* Every confirmed client is a previous client of the next start: the attackers, the 4.0 ones, the
	 * neighbour and the late client. */
	hx_daemon_stop(&env);
	if (hx_daemon_start(&env) == 0) {
		snprintf(needle, sizeof(needle), "for %u client(s) of the previous boot", ok + ok40 + 2);
		CHECK_EQ(hx_log_count(&env, needle), 1, "after a restart: \"%s\"", needle);
	}
out:
	hx_daemon_stop(&env);
	umount2(env.state_dir, MNT_DETACH);
	hx_env_release(&env);
}

/* ---- soak ---- */

#define SOAK_SESSIONS 3000 /* session create/destroy cycles */
#define SOAK_CLIENTS 2000  /* clients left to expire, per round (three rounds) */
#define SOAK_LEASE 10      /* the soak's lease-time, seconds (below, the same in its rnfsd.conf) */

/* n clients from 4 hosts (a share each: max-clients / 4), each with a one-slot cached session. */
static unsigned soak_clients(unsigned round, unsigned n)
{
	struct n4_client k[4];
	unsigned ok = 0;
	char src[32], id[48];

	for (unsigned h = 0; h < 4; h++) {
		snprintf(src, sizeof(src), "127.0.4.%u", h + 1);
		n4_connect_from(&k[h], env.port, 1, src);
		k[h].max_reqs = 1, k[h].max_resp_cached = 512;
	}
	for (unsigned i = 0; i < n; i++) {
		uint32_t seq = 0;
		snprintf(id, sizeof(id), "tabS-%u-%u", round, i);
		ok += n4_exchange_id(&k[i % 4], id, &seq) == 0 && n4_create_session(&k[i % 4], seq) == 0;
	}
	for (unsigned h = 0; h < 4; h++)
		n4_client_close(&k[h]);
	return ok;
}

/* A round of SOAK_CLIENTS clients made and left to expire. The gauge is checked to count them all only
 * when they were made within one lease (on a busy host the first may expire before the last is made);
 * then the round waits, up to a lease and a half past the last one, for the timer to expire them all
 * (no fixed sleep: a slow timer is waited for, a timer that never expires them fails the check).
 * Returns how many of the round's clients were held at once (counted when the last was made). */
static double soak_round(unsigned round, double c0)
{
	double t0 = hx_now(), made, clients;

	CHECK_EQ(soak_clients(round, SOAK_CLIENTS), SOAK_CLIENTS, "round %u: %u clients with sessions made", round,
		 SOAK_CLIENTS);
	made = hx_now();
	clients = gauge("nfs4", "clients");
	if (hx_now() - t0 < SOAK_LEASE - 1)
		CHECK(clients >= c0 + SOAK_CLIENTS, "round %u: the clients gauge counts them", round);
	else
		hx_note("round %u: made in %.1f s, more than a lease: %.0f still counted", round, made - t0, clients - c0);
	while (gauge("nfs4", "clients") > c0 && hx_now() - made < SOAK_LEASE * 2.5)
		usleep(250 * 1000);
	CHECK(gauge("nfs4", "clients") <= c0, "round %u: all expired by the lease timer (%.1f s after the last)", round,
	      hx_now() - made);
	return clients - c0;
}

/* Resident memory a client held at once may leave touched for good: its entry of the preallocated
 * callback table (14 KiB) and its session's reply cache: 16-17 KiB measured (2,000 clients at
 * once), rounded up. */
#define SOAK_CLIENT_KB 20

static void test_soak(void)
{
	double c0, s0, b0;
	struct n4_client k;
	struct n4_watch w;
	unsigned cycles = 0;
	char id[32];
	long fd0, rss0, rss1;
	double held0, held, held2;

	hx_section("soak: %u session create/destroy cycles, 3 x %u clients created and expired", SOAK_SESSIONS,
		   SOAK_CLIENTS);
	if (start("[nfsv4]\nlease-time = 10\n") != 0 ||
	    !CHECK(n4_watch_start(&w, env.port, "tabS-watch") == 0, "the neighbour is set up"))
		return stop();
	fd0 = n4_proc_fds(env.pid), rss0 = n4_proc_rss_kb(env.pid);
	c0 = gauge("nfs4", "clients"), s0 = gauge("nfs4", "sessions"), b0 = gauge("nfs4_limits", "reply_cache_bytes");
	/* A first round touches the preallocated tables' pages (the callback table's entries, 14 KiB
	 * each): the memory they settle at is the baseline for what follows. */
	held0 = soak_round(0, c0);
	rss1 = n4_proc_rss_kb(env.pid);
	hx_note("resident memory %ld KiB at start, %ld KiB after the first round", rss0, rss1);
	n4_connect(&k, env.port, 1);
	k.max_reqs = 64, k.max_resp_cached = 8192;
	for (unsigned i = 0; i < SOAK_SESSIONS; i++) {
		uint32_t seq = 0;
		snprintf(id, sizeof(id), "tabS-cycle-%u", i);
		cycles += n4_exchange_id(&k, id, &seq) == 0 && n4_create_session(&k, seq) == 0 && n4_destroy_client(&k) == 0;
	}
	n4_client_close(&k);
	CHECK_EQ(cycles, SOAK_SESSIONS, "every session create/destroy cycle succeeded");
	held = soak_round(1, c0);
	held2 = soak_round(2, c0);
	held = held2 > held ? held2 : held;
	CHECK(gauge("nfs4", "clients") == c0 && gauge("nfs4", "sessions") == s0, "the client and session gauges are back");
	CHECK(gauge("nfs4_limits", "reply_cache_bytes") == b0, "the reply_cache_bytes gauge is back (%.0f)", b0);
	check_live(&w, "127.0.0.3", "tabS-late");
	/* The baseline is the first round's: a busy host makes that round slower, so fewer of its clients
	 * coexist (the first expire before the last is made) and fewer table pages are touched than a later,
	 * faster round touches. Memory those extra clients held at once is allowed for; a leak grows with
	 * the 7,000 clients and 3,000 sessions made after the baseline, not with that difference. */
	if (held > held0)
		hx_note("later rounds held %.0f clients at once, the first %.0f: %.0f KiB more allowed", held, held0,
			(held - held0) * SOAK_CLIENT_KB);
	check_resources(fd0, rss1, 2, 4 * 1024 + (held > held0 ? (long)(held - held0) * SOAK_CLIENT_KB : 0));
	CHECK(n4_proc_rss_kb(env.pid) <= rss0 + 56 * 1024 + n4_proc_quarantine_kb(env.pid),
	      "(c) and within the callback table (56 MiB) of the start");
	stop();
}

int main(int argc, char **argv)
{
	hx_begin("nfs4_hostile_tab", argc, argv);
	hx_require_root(); /* tmpfs for part 7; loopback source addresses */
	test_reply_cache();
	test_host_share();
	test_lease_timer();
	test_stable_records();
	test_soak();
	return hx_end();
}
