/*
 * test_nfs4_hostile_fd.c - issue 24 defects 2 and 3: NFSv4 clients that
 * fill the tables holding descriptors. The daemon runs with RLIMIT_NOFILE
 * 256 (inherited from this test) and the derived settings (conf/fd_budget.h:
 * 56 open files, 16 opens and 16 lock owners + states per client at that
 * limit), so a handful of clients does what thousands of opens would do
 * under the unit's LimitNOFILE:
 *
 *  defect 3: three clients (4.1, 4.1, 4.0) OPEN-create files until refused;
 *  defect 2: two clients (4.1, 4.0) LOCK with a new lock owner each time
 *            until refused.
 *
 * Each attack asserts (a) the attacker's refusal is NFS4ERR_DELAY (4.1) or
 * NFS4ERR_RESOURCE (4.0) within SHARE_MAX of its start, and the refused
 * OPEN created no file; (b) a neighbour 4.1 client on its own connection
 * (n4_watch) is answered within N4_LIVE_S throughout, and a fresh client on
 * a new connection afterwards can OPEN, WRITE, READ, LOCK and CLOSE, and
 * NFSv3 MNT works; (c) the daemon keeps at least FD_FREE_MIN descriptors
 * free throughout and its RSS grows by less than RSS_BOUND_KB. Then a soak:
 * 8 clients x 250 OPEN/LOCK/LOCKU/CLOSE cycles (4.0 owners released with
 * RELEASE_LOCKOWNER, as Linux does), after which the stats socket shows no
 * open, lock state, lock owner, open file or lock description left, the
 * daemon's descriptors are back at their count before the attacks and its
 * RSS within the bound. No timing is asserted but the 1 s liveness bound.
 */
#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"
#include "tests/integration/rawrpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define NOFILE 256u
#define FD_FREE_MIN 32    /* descriptors the daemon has free throughout */
#define RSS_BOUND_KB 16384
#define SHARE_MAX 64u     /* refused within this many: one client's share, stated loosely */
#define SOAK_CLIENTS 8u
#define SOAK_ROUNDS 250u
#define FH_CAP 128u

static struct hx_env env;
static char stats_path[600];
static long fds_peak;

/* One client and what it holds. */
struct holder {
	struct n4_client k;
	uint32_t seqid;                  /* 4.0: its open owner's */
	unsigned n;                      /* opens (or locks) held */
	struct n4_sid sid[SHARE_MAX + 1];
	uint8_t fh[SHARE_MAX + 1][FH_CAP];
	uint32_t fh_len[SHARE_MAX + 1];
	struct n4_sid lk[SHARE_MAX + 1]; /* lock attack: one lock stateid per owner */
};
static struct holder atk[5];

static void fd_sample(void)
{
	long n = n4_proc_fds(env.pid);

	if (n > fds_peak)
		fds_peak = n;
}

/* OPEN-create tag_N until refused: its status (0 if never refused within SHARE_MAX). */
static int fill_opens(struct holder *h, const char *tag)
{
	char name[32];
	int st = 0;

	while (h->n < SHARE_MAX && st == 0) {
		snprintf(name, sizeof(name), "%s_%u", tag, h->n);
		st = n4_open(&h->k, env.export_dir, name, true, N4_ACCESS_BOTH, 0, "attacker", &h->seqid,
			     &h->sid[h->n], h->fh[h->n], &h->fh_len[h->n]);
		if (st == 0)
			h->n++;
		fd_sample();
	}
	if (st == N4ERR_RESOURCE)
		h->seqid--; /* RFC 7530 §9.1.7: RESOURCE leaves the owner's seqid (n4_open advanced it) */
	return st;
}

/* LOCK byte base+N of the held file with a new lock owner each time until refused. */
static int fill_lock_owners(struct holder *h, uint64_t base)
{
	char owner[32];
	int st = 0;

	while (h->n < SHARE_MAX && st == 0) {
		snprintf(owner, sizeof(owner), "L%u", h->n);
		st = n4_lock_new(&h->k, h->fh[0], h->fh_len[0], N4_WRITE_LT, base + h->n, 1, &h->sid[0], &h->seqid,
				 owner, &h->lk[h->n]);
		if (st == 0)
			h->n++;
		fd_sample();
	}
	if (st == N4ERR_RESOURCE)
		h->seqid--; /* as fill_opens: the open owner's seqid stays */
	return st;
}

/* (b): a new client on a new connection does a whole open/IO/lock/close; NFSv3 MNT too. */
static void fresh_client(const char *id, const char *name)
{
	struct n4_client k;
	struct n4_sid sid, lk;
	uint8_t fh[FH_CAP], root[64], buf[8];
	uint32_t fh_len, root_len, got = 0;
	struct raw_conn c;

	if (!CHECK(n4_start(&k, env.port, 1, id) == 0, "%s: a fresh 4.1 client is set up on a new connection", id))
		return;
	CHECK_EQ(n4_open(&k, env.export_dir, name, true, N4_ACCESS_BOTH, 0, "fresh", NULL, &sid, fh, &fh_len), 0,
		 "%s: its OPEN-create succeeds", id);
	CHECK_EQ(n4_write(&k, fh, fh_len, &sid, 0, "freshdat", 8), 0, "%s: WRITE", id);
	CHECK(n4_read(&k, fh, fh_len, &sid, 0, 8, buf, &got) == 0 && got == 8, "%s: READ", id);
	CHECK_EQ(n4_lock_new(&k, fh, fh_len, N4_WRITE_LT, 7000, 10, &sid, NULL, "fresh-lo", &lk), 0,
		 "%s: LOCK with a new lock owner (not SERVERFAULT, not DELAY)", id);
	CHECK_EQ(n4_locku(&k, fh, fh_len, &lk, NULL, 7000, 10), 0, "%s: LOCKU", id);
	CHECK_EQ(n4_close(&k, fh, fh_len, NULL, &sid), 0, "%s: CLOSE", id);
	n4_client_close(&k);
	CHECK(raw_connect(&c, env.mount_port) == 0 && raw_mnt(&c, 0x6664, env.export_dir, root, &root_len) == 0,
	      "%s: NFSv3 MNT on a new connection", id);
	raw_close(&c);
}

static void attack_opens(void)
{
	static const char *const tags[] = { "a", "b", "c" };
	char path[64];

	hx_section("defect 3: three clients OPEN-create files until refused");
	for (unsigned i = 0; i < 3; i++) {
		uint32_t minor = i == 2 ? 0 : 1;
		int st;

		if (!CHECK(n4_start(&atk[i].k, env.port, minor, tags[i]) == 0, "attacker %s set up", tags[i]))
			continue;
		atk[i].seqid = 1;
		st = fill_opens(&atk[i], tags[i]);
		CHECK(st == (minor ? N4ERR_DELAY : N4ERR_RESOURCE),
		      "(a) attacker %s (4.%u) refused with %s after %u opens (status %d)", tags[i], minor,
		      minor ? "DELAY" : "RESOURCE", atk[i].n, st);
		snprintf(path, sizeof(path), "%s_%u", tags[i], atk[i].n);
		CHECK(access(hx_xpath(&env, "%s", path), F_OK) != 0, "(a) the refused OPEN created no file (%s)", path);
	}
	fresh_client("fresh-after-opens", "fresh1");
	CHECK(fds_peak > 0 && fds_peak <= (long)NOFILE - FD_FREE_MIN, "(c) descriptors at most %ld of %u (peak %ld)",
	      (long)NOFILE - FD_FREE_MIN, NOFILE, fds_peak);
}

static void attack_lock_owners(void)
{
	hx_section("defect 2: two clients LOCK with a new lock owner each time until refused");
	for (unsigned i = 3; i < 5; i++) {
		uint32_t minor = i == 3 ? 1 : 0;
		int st;

		if (!CHECK(n4_start(&atk[i].k, env.port, minor, i == 3 ? "lock41" : "lock40") == 0, "lock attacker set up"))
			continue;
		atk[i].seqid = 1;
		if (!CHECK_EQ(n4_open(&atk[i].k, env.export_dir, "lockfile", true, N4_ACCESS_BOTH, 0, "attacker",
				      &atk[i].seqid, &atk[i].sid[0], atk[i].fh[0], &atk[i].fh_len[0]), 0,
			      "lock attacker opens the file"))
			continue;
		st = fill_lock_owners(&atk[i], i * 1000);
		CHECK(st == (minor ? N4ERR_DELAY : N4ERR_RESOURCE),
		      "(a) lock attacker (4.%u) refused with %s after %u lock owners (status %d)", minor,
		      minor ? "DELAY" : "RESOURCE", atk[i].n, st);
	}
	fresh_client("fresh-after-locks", "lockfile");
	CHECK(fds_peak <= (long)NOFILE - FD_FREE_MIN, "(c) descriptors at most %ld of %u (peak %ld)",
	      (long)NOFILE - FD_FREE_MIN, NOFILE, fds_peak);
}

/* The attackers give everything back, as well-behaved clients would at the end. */
static void attackers_leave(void)
{
	unsigned bad = 0;
	char owner[32];

	for (unsigned i = 0; i < 3; i++)
		for (unsigned j = 0; j < atk[i].n; j++)
			bad += n4_close(&atk[i].k, atk[i].fh[j], atk[i].fh_len[j], &atk[i].seqid, &atk[i].sid[j]) != 0;
	for (unsigned i = 3; i < 5; i++) {
		for (unsigned j = 0; j < atk[i].n; j++) {
			uint32_t lseq = 1; /* each lock owner's next (its LOCK was seqid 0) */

			bad += n4_locku(&atk[i].k, atk[i].fh[0], atk[i].fh_len[0], &atk[i].lk[j], &lseq, i * 1000 + j,
					1) != 0;
		}
		bad += n4_close(&atk[i].k, atk[i].fh[0], atk[i].fh_len[0], &atk[i].seqid, &atk[i].sid[0]) != 0;
		for (unsigned j = 0; i == 4 && j < atk[i].n; j++) {
			snprintf(owner, sizeof(owner), "L%u", j);
			bad += n4_release_lockowner(&atk[i].k, owner) != 0;
		}
	}
	CHECK_EQ(bad, 0, "the attackers close, unlock and release what they held");
	for (unsigned i = 0; i < 5; i++)
		n4_client_close(&atk[i].k);
}

/* One client's cycle: OPEN-create, LOCK (new owner), LOCKU, CLOSE (4.0: RELEASE_LOCKOWNER). */
static unsigned soak_cycle(struct holder *h, unsigned c, unsigned round)
{
	char name[32], owner[32];
	struct n4_sid lk;
	uint32_t lseq = 1;
	unsigned bad = 0;

	snprintf(name, sizeof(name), "s%u_%u", c, round % 4);
	snprintf(owner, sizeof(owner), "sl%u", round);
	if (n4_open(&h->k, env.export_dir, name, true, N4_ACCESS_BOTH, 0, "so", &h->seqid, &h->sid[0], h->fh[0],
		    &h->fh_len[0]) != 0)
		return 1;
	bad += n4_lock_new(&h->k, h->fh[0], h->fh_len[0], N4_WRITE_LT, round, 1, &h->sid[0], &h->seqid, owner, &lk) != 0;
	bad += n4_locku(&h->k, h->fh[0], h->fh_len[0], &lk, &lseq, round, 1) != 0;
	bad += n4_close(&h->k, h->fh[0], h->fh_len[0], &h->seqid, &h->sid[0]) != 0;
	if (h->k.minor == 0)
		bad += n4_release_lockowner(&h->k, owner) != 0;
	return bad;
}

static void soak(void)
{
	static struct holder cl[SOAK_CLIENTS];
	unsigned bad = 0;
	char id[32];

	hx_section("soak: %u clients x %u OPEN/LOCK/LOCKU/CLOSE cycles", SOAK_CLIENTS, SOAK_ROUNDS);
	for (unsigned c = 0; c < SOAK_CLIENTS; c++) {
		snprintf(id, sizeof(id), "soak%u", c);
		cl[c].seqid = 1;
		bad += n4_start(&cl[c].k, env.port, c % 2, id) != 0;
	}
	for (unsigned r = 0; r < SOAK_ROUNDS && bad < 10; r++) {
		for (unsigned c = 0; c < SOAK_CLIENTS; c++)
			bad += soak_cycle(&cl[c], c, r);
		if (r % 50 == 0)
			fd_sample();
	}
	CHECK_EQ(bad, 0, "every soak call succeeds");
	for (unsigned c = 0; c < SOAK_CLIENTS; c++)
		n4_client_close(&cl[c].k);
}

/* The tables back where they started (stats socket). */
static void tables_empty(void)
{
	char *doc = n4_stats_json(stats_path);

	if (!CHECK(doc != NULL, "stats socket answers"))
		return;
	CHECK_EQ(n4_stats_num(doc, "nfs4", "opens"), 0, "stats: no open state left");
	CHECK_EQ(n4_stats_num(doc, "nfs4", "locks"), 0, "stats: no lock state left");
	CHECK_EQ(n4_stats_num(doc, "nfs4", "open_files"), 0, "stats: no open file left");
	CHECK_EQ(n4_stats_num(doc, "nfs4", "lock_owners"), 0, "stats: no lock owner left");
	CHECK_EQ(n4_stats_num(doc, "resources", "lock_descriptions"), 0, "stats: no lock description left");
	CHECK_EQ(n4_stats_num(doc, "resources", "fd_limit"), NOFILE, "stats: the descriptor limit is shown");
	free(doc);
}

/* Closed connections leave the daemon a moment later: wait (at most 5 s) for the count to come down. */
static long fds_settled(long want)
{
	long n = n4_proc_fds(env.pid);

	for (int i = 0; i < 50 && n > want; i++) {
		usleep(100 * 1000);
		n = n4_proc_fds(env.pid);
	}
	return n;
}

int main(int argc, char **argv)
{
	static char extra[700];
	struct rlimit rl = { .rlim_cur = NOFILE, .rlim_max = NOFILE };
	struct n4_watch w;
	long fds0, rss0, fds1, rss1, slack_kb;
	double slowest;

	hx_begin("nfs4_hostile_fd", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	snprintf(stats_path, sizeof(stats_path), "%s/stats.sock", env.dir);
	snprintf(extra, sizeof(extra), "stats-socket = %s\n", stats_path);
	env.rnfsd_extra = extra;
	if (!CHECK(hx_write_config(&env) == 0, "config") ||
	    !CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "RLIMIT_NOFILE %u for the daemon", NOFILE) ||
	    hx_daemon_start(&env) != 0)
		return hx_end();
	if (!CHECK(n4_watch_start(&w, env.port, "neighbour") == 0, "the neighbour client is set up"))
		return hx_end();
	fresh_client("warm-up", "warm");
	fds0 = fds_settled(0);
	rss0 = n4_proc_rss_kb(env.pid);
	slack_kb = n4_proc_quarantine_kb(env.pid); /* a sanitizer build's quarantine, shadow and history */
	hx_note("before the attacks: %ld descriptors, RSS %ld KiB", fds0, rss0);

	attack_opens();
	attack_lock_owners();
	rss1 = n4_proc_rss_kb(env.pid);
	CHECK(rss1 > 0 && rss1 <= rss0 + RSS_BOUND_KB + slack_kb, "(c) RSS grew by less than %u KiB under attack (%ld -> %ld)",
	      RSS_BOUND_KB, rss0, rss1);
	attackers_leave();
	soak();
	tables_empty();
	fds1 = fds_settled(fds0);
	rss1 = n4_proc_rss_kb(env.pid);
	hx_note("after the attacks and the soak: %ld descriptors (peak %ld), RSS %ld KiB", fds1, fds_peak, rss1);
	CHECK(fds1 <= fds0, "descriptors back where they were (%ld, then %ld)", fds0, fds1);
	CHECK(rss1 > 0 && rss1 <= rss0 + RSS_BOUND_KB + slack_kb, "RSS within %u KiB of where it was (%ld, then %ld)",
	      RSS_BOUND_KB, rss0, rss1);
	slowest = n4_watch_stop(&w);
	CHECK(w.failed == 0 && slowest <= N4_LIVE_S, "(b) the neighbour was answered throughout: %u calls, %u failed "
	      "(last status %d), slowest %.3f s", w.calls, w.failed, w.last_bad_status, slowest);
	fresh_client("fresh-at-end", "fresh2");
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_daemon_stop(&env);
	return hx_end();
}
