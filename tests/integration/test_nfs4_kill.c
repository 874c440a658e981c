/*
 * test_nfs4_kill.c - crash consistency of NFSv4 state (issue 23 item 4):
 * rnfsd is killed with SIGKILL at random points (seeded PRNG, seed printed;
 * HX_SEED=N repeats a run) while four clients (4.0, 4.1, 4.2, 4.0, each on
 * its own connection, interleaved in one loop) OPEN, LOCK, WRITE (FILE_SYNC,
 * or UNSTABLE then COMMIT), LOCKU and CLOSE, ROUNDS times; each time it is
 * restarted with the same state-dir, [nfsv4] grace-time GRACE_S and
 * lease-time 10. Most kills land in the traffic after the grace period; one
 * in KILL_EARLY_1IN lands while the clients reclaim (during grace).
 *
 * Each client keeps its own books: a client is confirmed once it received
 * SETCLIENTID_CONFIRM's (4.0) or CREATE_SESSION's (4.1+) reply (RFC 8881
 * §8.4.3, RFC 7530 §9.6.3.4: the server records it stably before that
 * reply); it holds an open or a lock once it received the OPEN or LOCK reply
 * and until it received the CLOSE or LOCKU reply. What was in flight when the
 * kill came is unknown: the client does not reclaim it (RFC 8881 §8.4.2.1
 * lets a client reclaim only state it knows it held) and nothing is asserted
 * about it. After each restart:
 *  - the daemon starts, and logs no unreadable or unwritable record file;
 *  - when any client had been confirmed, it announces a grace period;
 *  - each confirmed client reclaims all it held (RFC 8881 §8.4.2: a new
 *    session with the same co_ownerid, OPEN CLAIM_PREVIOUS, LOCK reclaim,
 *    RECLAIM_COMPLETE; RFC 7530 §9.6.2: SETCLIENTID/CONFIRM with the same id,
 *    OPEN CLAIM_PREVIOUS + OPEN_CONFIRM, LOCK reclaim): each succeeds;
 *  - a client id the previous boot never confirmed gets NO_GRACE for a
 *    reclaim (RFC 8881 §8.4.2.1, §15.1.9; RFC 7530 §9.6.3.4), and so do a
 *    client that destroyed its client ID before the kill (§18.50) and a 4.1
 *    client after its own RECLAIM_COMPLETE (RFC 8881 §18.51.3). Which
 *    files and ranges a client held is not stored across a restart (rnfsd
 *    records clients, not state, as knfsd does): reclaims are trusted per
 *    client, so "a range it never locked" is not something the server can
 *    know and is not asserted;
 *  - every byte acknowledged as stable before the kill (a FILE_SYNC WRITE
 *    reply, or a COMMIT reply after UNSTABLE writes) is in the file on disk;
 *  - after the grace period the daemon's descriptors stay within FD_SLACK
 *    of the first round's (nothing leaks across restarts).
 * The clients release what they reclaimed before new traffic, and each round
 * uses new owners and files, so rounds are independent.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"

#define ROUNDS 50
#define CLIENTS 4
#define SLOTS 3          /* files a client has open at once */
#define GRACE_S 3        /* [nfsv4] grace-time */
#define LEASE_S 10       /* [nfsv4] lease-time */
#define KILL_EARLY_1IN 6 /* one kill in this many during the reclaims */
#define PENDING_MAX 6    /* UNSTABLE writes before a COMMIT is due */
#define EXT_MAX 8192     /* stable extents remembered until the next restart */
#define FD_SLACK 8
#define LOCK_BASE (1ull << 30) /* locks far from the written bytes */

static struct hx_env env;
static uint64_t rng;
static const uint32_t minors[CLIENTS] = { 0, 1, 2, 0 };

/* A written range and the seed of its bytes. */
struct ext {
	char name[32];
	uint64_t off, seed;
	uint32_t len;
};

enum slot_state { SL_FREE, SL_OPEN, SL_UNKNOWN };

/* One file a client opens: its open (and at most one lock) as the client knows them. */
struct slot {
	enum slot_state st;
	bool locked;             /* a lock whose LOCK reply came, no LOCKU reply yet */
	char name[32], owner[32], lowner[32];
	uint8_t fh[128];
	uint32_t fh_len, oseq, lseq, ltype;
	struct n4_sid osid, lsid;
	uint64_t loff, wpos;
	struct ext pending[PENDING_MAX]; /* UNSTABLE, not committed yet */
	unsigned npending;
};

struct kc {
	struct n4_client k;
	char id[32];
	bool confirmed; /* the previous boots recorded it (a confirm reply came) */
	bool alive;     /* its connection answers in this boot */
	struct slot s[SLOTS];
};

static struct kc kcs[CLIENTS];
static struct ext exts[EXT_MAX];
static unsigned nexts, round_no, serial;
static struct { unsigned kills, kills_early, reclaim_opens, reclaim_locks, no_grace, graces; uint64_t bytes; } fig;

/* ---- the killer ---- */

struct killer {
	pthread_t t;
	pid_t pid;
	unsigned delay_ms;
};

static void *killer_run(void *arg)
{
	struct killer *kl = arg;

	usleep(kl->delay_ms * 1000u);
	kill(kl->pid, SIGKILL);
	return NULL;
}

static void killer_start(struct killer *kl, unsigned delay_ms)
{
	kl->pid = env.pid;
	kl->delay_ms = delay_ms;
	if (pthread_create(&kl->t, NULL, killer_run, kl) != 0)
		kill(kl->pid, SIGKILL);
}

/* Join the killer, reap the daemon: it must have died from our SIGKILL. */
static void killer_join(struct killer *kl)
{
	int st = 0;

	pthread_join(kl->t, NULL);
	if (waitpid(kl->pid, &st, 0) == kl->pid)
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "round %u: rnfsd died from the SIGKILL (status %#x)",
		      round_no, st);
	env.pid = 0;
	fig.kills++;
}

/* ---- bookkeeping ---- */

/* An acknowledged-stable extent: checked against the disk after the next restart. */
static void ext_stable(const struct ext *e)
{
	if (nexts < EXT_MAX)
		exts[nexts++] = *e;
}

/* A call got no reply (the kill): the client is gone for this boot. */
static bool dead(struct kc *c, int st)
{
	if (st == -1)
		c->alive = false;
	return st == -1;
}

/* Every stable extent is on disk, byte for byte. */
static void verify_disk(void)
{
	static uint8_t want[16384], got[16384];
	unsigned bad = 0;

	for (unsigned i = 0; i < nexts; i++) {
		const struct ext *e = &exts[i];
		uint64_t s = e->seed;
		int fd = open(hx_xpath(&env, "%s", e->name), O_RDONLY);
		ssize_t n = fd >= 0 ? pread(fd, got, e->len, (off_t)e->off) : -1;

		if (fd >= 0)
			close(fd);
		hx_fill(&s, want, e->len);
		if (n != (ssize_t)e->len || memcmp(want, got, e->len) != 0) {
			if (bad++ < 5)
				CHECK(false, "round %u: %s [%llu, +%u) acknowledged stable before the kill is on disk",
				      round_no, e->name, (unsigned long long)e->off, e->len);
		} else {
			fig.bytes += e->len;
		}
	}
	CHECK_EQ(bad, 0, "round %u: all %u acknowledged-stable writes of the last boot are on disk", round_no, nexts);
	nexts = 0;
}

/* ---- reclaims (in grace) ---- */

/* Reclaim slot s (RFC 8881 §18.16.3 CLAIM_PREVIOUS, §18.10.3 reclaim), then release it (CLOSE and LOCKU
 * are allowed in grace). false when the daemon died. */
static bool reclaim_slot(struct kc *c, struct slot *s, double t0)
{
	struct n4_client *k = &c->k;
	bool late = hx_now() - t0 > GRACE_S - 0.5; /* too close to the end of grace to expect OK */
	int st;

	s->oseq = 1; /* a new open owner to the restarted server */
	st = n4_open_prev(k, s->fh, s->fh_len, N4_ACCESS_BOTH, 0, s->owner, &s->oseq, &s->osid);
	if (dead(c, st))
		return false;
	if (late && st == N4ERR_NO_GRACE)
		hx_note("round %u: %s: OPEN CLAIM_PREVIOUS after the grace period (slow machine)", round_no, c->id);
	else if (CHECK_EQ(st, 0, "round %u: %s (4.%u) reclaims its open of %s", round_no, c->id, k->minor, s->name))
		fig.reclaim_opens++;
	if (st != 0)
		return true;
	if (s->locked) {
		st = n4_lock_reclaim(k, s->fh, s->fh_len, s->ltype, true, s->loff, 4096, &s->osid, &s->oseq,
				     s->lowner, &s->lsid);
		if (dead(c, st))
			return false;
		if (hx_now() - t0 > GRACE_S - 0.5 && st == N4ERR_NO_GRACE)
			hx_note("round %u: %s: LOCK reclaim after the grace period (slow machine)", round_no, c->id);
		else if (CHECK_EQ(st, 0, "round %u: %s reclaims its lock [%llu, +4096) of %s", round_no, c->id,
			     (unsigned long long)s->loff, s->name))
			fig.reclaim_locks++;
		s->lseq = 1;
		if (st == 0 && dead(c, n4_locku_type(k, s->fh, s->fh_len, s->ltype, &s->lsid, &s->lseq, s->loff, 4096)))
			return false;
		s->locked = false;
	}
	if (dead(c, n4_close(k, s->fh, s->fh_len, &s->oseq, &s->osid)))
		return false;
	s->st = SL_FREE;
	return true;
}

/* Set up k's client id: 4.0 SETCLIENTID + CONFIRM; 4.1+ EXCHANGE_ID + CREATE_SESSION, with RECLAIM_COMPLETE
 * unless it is to reclaim. The first failing status, or 0. */
static int client_up(struct n4_client *k, const char *id, bool reclaim)
{
	uint32_t csr_seq = 0;
	int st;

	if (k->minor == 0 || !reclaim)
		return n4_setup(k, id); /* RFC 7530 §9.6.2: the same id after the server's restart */
	st = n4_exchange_id(k, id, &csr_seq);
	return st != 0 ? st : n4_create_session(k, csr_seq);
}

/* A confirmed client comes back: its client again, its reclaims, RECLAIM_COMPLETE (4.1+). */
static void reclaim_client(struct kc *c, double t0)
{
	struct n4_client *k = &c->k;
	struct slot *held = NULL;
	struct n4_sid sid;
	int st = client_up(k, c->id, true);

	if (dead(c, st) || !CHECK_EQ(st, 0, "round %u: %s sets up its client again in grace", round_no, c->id))
		return;
	for (unsigned i = 0; i < SLOTS; i++) {
		if (c->s[i].st == SL_OPEN)
			held = &c->s[i];
		if (c->s[i].st == SL_OPEN && !reclaim_slot(c, &c->s[i], t0))
			return;
	}
	if (k->minor == 0)
		return;
	if (dead(c, st = n4_reclaim_complete(k)) || !CHECK_EQ(st, 0, "round %u: %s RECLAIM_COMPLETE", round_no, c->id))
		return;
	if (!held || hx_now() - t0 > GRACE_S - 0.5)
		return;
	/* RFC 8881 §18.51.3: no reclaim after the client's own RECLAIM_COMPLETE. */
	st = n4_open_prev(k, held->fh, held->fh_len, N4_ACCESS_BOTH, 0, held->owner, NULL, &sid);
	if (!dead(c, st) && CHECK_EQ(st, N4ERR_NO_GRACE, "round %u: %s: CLAIM_PREVIOUS after RECLAIM_COMPLETE: "
				     "NO_GRACE", round_no, c->id))
		fig.no_grace++;
}

static uint8_t target_fh[128]; /* a file every round may name */
static uint32_t target_fh_len;

/* A client id no previous boot confirmed: its reclaim is NO_GRACE (RFC 8881 §8.4.2.1, §15.1.9; RFC 7530
 * §9.6.3.4). A 4.1 one has not sent RECLAIM_COMPLETE: the NO_GRACE is for being unknown. false: daemon gone. */
static bool stranger(double t0)
{
	uint32_t minor = round_no % 2, seq = 1;
	struct n4_client k;
	struct n4_sid sid;
	char id[48];
	int st;

	snprintf(id, sizeof(id), "kill-stranger-%u", round_no);
	st = n4_connect(&k, env.port, minor);
	if (st == 0)
		st = client_up(&k, id, true);
	if (st == 0)
		st = n4_open_prev(&k, target_fh, target_fh_len, N4_ACCESS_READ, 0, "stranger", &seq, &sid);
	n4_client_close(&k);
	if (st == -1)
		return false;
	if (hx_now() - t0 <= GRACE_S - 0.5 &&
	    CHECK_EQ(st, N4ERR_NO_GRACE, "round %u: a 4.%u client the previous boot never confirmed: "
		     "CLAIM_PREVIOUS is NO_GRACE", round_no, minor))
		fig.no_grace++;
	return true;
}

static char quit_id[48]; /* a client that destroyed its client ID in the last boot ("": none) */

/* A 4.1+ client sets up, then destroys its client ID (RFC 8881 §18.50): its record goes. */
static void quitter_leave(void)
{
	struct n4_client k;
	int st;

	snprintf(quit_id, sizeof(quit_id), "kill-quitter-%u", round_no);
	st = n4_start(&k, env.port, 1 + round_no % 2, quit_id);
	if (st == 0)
		st = n4_destroy_client(&k);
	n4_client_close(&k);
	if (!CHECK_EQ(st, 0, "round %u: a client sets up and destroys its client ID", round_no))
		quit_id[0] = 0;
}

/* After the restart its reclaim is NO_GRACE: a destroyed client held nothing (RFC 8881 §8.4.2.1). */
static bool quitter_return(double t0)
{
	struct n4_client k;
	struct n4_sid sid;
	int st;

	/* Used once: its set-up here records it, so it could reclaim after another kill. */
	st = n4_connect(&k, env.port, 1);
	if (st == 0)
		st = client_up(&k, quit_id, true);
	quit_id[0] = 0;
	if (st == 0)
		st = n4_open_prev(&k, target_fh, target_fh_len, N4_ACCESS_READ, 0, "quitter", NULL, &sid);
	n4_client_close(&k);
	if (st == -1)
		return false;
	if (hx_now() - t0 <= GRACE_S - 0.5 &&
	    CHECK_EQ(st, N4ERR_NO_GRACE, "round %u: the client that destroyed its client ID before the kill: "
		     "CLAIM_PREVIOUS is NO_GRACE", round_no))
		fig.no_grace++;
	return true;
}

/* ---- traffic ---- */

static void ext_make(struct ext *e, const struct slot *s, uint32_t len)
{
	snprintf(e->name, sizeof(e->name), "%s", s->name);
	e->off = s->wpos;
	e->len = len;
	e->seed = hx_rand(&rng) | 1;
}

/* WRITE to fresh bytes of s: FILE_SYNC (stable on reply), or UNSTABLE (stable once a COMMIT reply comes). */
static int step_write(struct kc *c, struct slot *s, bool sync)
{
	static uint8_t buf[16384];
	uint32_t committed = 0, len = 512 + (uint32_t)(hx_rand(&rng) % (sizeof(buf) - 512));
	struct ext e;
	uint64_t seed;
	int st;

	ext_make(&e, s, len);
	seed = e.seed;
	hx_fill(&seed, buf, len);
	s->wpos += len;
	st = n4_write_how(&c->k, s->fh, s->fh_len, s->locked && s->ltype == N4_WRITE_LT ? &s->lsid : &s->osid,
			  e.off, buf, len, sync ? N4_FILE_SYNC : N4_UNSTABLE, &committed);
	if (st != 0)
		return st;
	if (committed == N4_FILE_SYNC) /* RFC 8881 §18.32.3: the server may commit more than asked */
		ext_stable(&e);
	else if (s->npending < PENDING_MAX)
		s->pending[s->npending++] = e;
	return st;
}

/* COMMIT (RFC 8881 §18.3.3): its reply makes every UNSTABLE write before it stable. */
static int step_commit(struct kc *c, struct slot *s)
{
	int st = n4_commit(&c->k, s->fh, s->fh_len, 0, 0);

	if (st == 0) {
		for (unsigned i = 0; i < s->npending; i++)
			ext_stable(&s->pending[i]);
		s->npending = 0;
	}
	return st;
}

/* A new file, a new open owner: OPEN (create). */
static int step_open(struct kc *c, struct slot *s, unsigned ci)
{
	int st;

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "r%02u-c%u-%u", round_no, ci, ++serial);
	snprintf(s->owner, sizeof(s->owner), "oo-%u", serial);
	s->oseq = 1;
	s->st = SL_UNKNOWN; /* until the reply */
	st = n4_open(&c->k, env.export_dir, s->name, true, N4_ACCESS_BOTH, 0, s->owner, &s->oseq, &s->osid, s->fh,
		     &s->fh_len);
	s->st = st == 0 ? SL_OPEN : st == -1 ? SL_UNKNOWN : SL_FREE;
	return st;
}

/* LOCK a range far from the data by a new lock owner, or LOCKU it. */
static int step_lock(struct kc *c, struct slot *s)
{
	int st;

	if (s->locked) {
		s->locked = false; /* unknown until the reply: not reclaimed */
		st = n4_locku_type(&c->k, s->fh, s->fh_len, s->ltype, &s->lsid, &s->lseq, s->loff, 4096);
		s->locked = st != 0 && st != -1;
		return st;
	}
	snprintf(s->lowner, sizeof(s->lowner), "lo-%u", ++serial);
	s->ltype = hx_rand(&rng) % 2 ? N4_WRITE_LT : N4_READ_LT;
	s->loff = LOCK_BASE + (hx_rand(&rng) % 64) * 4096;
	st = n4_lock_new(&c->k, s->fh, s->fh_len, s->ltype, s->loff, 4096, &s->osid, &s->oseq, s->lowner, &s->lsid);
	s->locked = st == 0;
	s->lseq = 1;
	return st;
}

/* CLOSE s (LOCKU first: RFC 8881 §18.2.3, no CLOSE with locks held). Its UNSTABLE writes stay unknown. */
static int step_close(struct kc *c, struct slot *s)
{
	int st;

	if (s->locked)
		return step_lock(c, s);
	s->st = SL_UNKNOWN;
	s->npending = 0;
	st = n4_close(&c->k, s->fh, s->fh_len, &s->oseq, &s->osid);
	s->st = st == -1 ? SL_UNKNOWN : st == 0 ? SL_FREE : SL_OPEN;
	return st;
}

/* One call of client ci on one of its files; its status (-1: no reply). */
static int step(struct kc *c, unsigned ci, const char **what)
{
	struct slot *s = &c->s[hx_rand(&rng) % SLOTS];
	unsigned r = (unsigned)(hx_rand(&rng) % 100);

	if (s->st != SL_OPEN)
		return *what = "OPEN", step_open(c, s, ci);
	if (r < 30)
		return *what = "WRITE FILE_SYNC", step_write(c, s, true);
	if (r < 55 && s->npending < PENDING_MAX)
		return *what = "WRITE UNSTABLE", step_write(c, s, false);
	if (r < 70)
		return *what = "COMMIT", step_commit(c, s);
	if (r < 88)
		return *what = "LOCK/LOCKU", step_lock(c, s);
	return *what = "CLOSE", step_close(c, s);
}

/* Every client's calls until the kill: each must be answered NFS4_OK until the daemon is gone. */
static void traffic(void)
{
	double deadline = hx_now() + 30;
	unsigned calls = 0, bad = 0, alive = CLIENTS;
	const char *what = "";

	while (alive > 0 && hx_now() < deadline) {
		alive = 0;
		for (unsigned i = 0; i < CLIENTS; i++) {
			struct kc *c = &kcs[i];
			int st;

			if (!c->alive)
				continue;
			st = step(c, i, &what);
			calls++;
			if (!dead(c, st) && st != 0 && bad++ < 3)
				CHECK(false, "round %u: %s: %s answered %d", round_no, c->id, what, st);
			alive += c->alive;
		}
	}
	CHECK(alive == 0 && bad == 0, "round %u: %u calls before the kill answered NFS4_OK (%u not)", round_no, calls,
	      bad);
}

/* ---- a boot ---- */

/* The daemon (re)started: its log says the record file was read and written, and grace when due. */
static void check_start(unsigned graces_before, bool any_confirmed)
{
	unsigned graces = hx_log_count(&env, "nfs4: grace period of");

	CHECK(hx_log_count(&env, "not a client record file") == 0 && hx_log_count(&env, "corrupt") == 0 &&
	      hx_log_count(&env, "nfs4: cannot write") == 0 && hx_log_count(&env, "starting without") == 0,
	      "round %u: the client-record file is readable and writable (no such log line)", round_no);
	if (any_confirmed)
		CHECK(graces == graces_before + 1, "round %u: a grace period is announced (clients were confirmed)",
		      round_no);
	fig.graces += graces > graces_before;
}

/* Every client comes back: the confirmed ones reclaim, the others set up afresh. */
static void clients_up(double t0)
{
	for (unsigned i = 0; i < CLIENTS; i++) {
		struct kc *c = &kcs[i];
		int st;

		c->alive = n4_connect(&c->k, env.port, minors[i]) == 0;
		if (!c->alive)
			continue;
		if (c->confirmed) {
			reclaim_client(c, t0);
			continue;
		}
		for (unsigned j = 0; j < SLOTS; j++)
			c->s[j].st = SL_FREE; /* never confirmed: it held nothing */
		st = client_up(&c->k, c->id, false);
		if (!dead(c, st) && CHECK_EQ(st, 0, "round %u: %s sets up its client", round_no, c->id))
			c->confirmed = true;
	}
}

/* Wait (polling LOCKT, RFC 8881 §8.4.2: GRACE until the period ends) for the end of grace; false: gone. */
static bool grace_wait(void)
{
	struct kc *c = &kcs[1];
	double deadline = hx_now() + 30;
	int st;

	while (c->alive && hx_now() < deadline) {
		st = n4_lockt(&c->k, target_fh, target_fh_len, N4_WRITE_LT, 0, 1, "probe");
		if (dead(c, st))
			return false;
		if (st != N4ERR_GRACE)
			return CHECK_EQ(st, 0, "round %u: LOCKT after the grace period", round_no);
		usleep(100 * 1000);
	}
	return false;
}

/* The first boot: a file every stranger can name. */
static void make_target(void)
{
	struct n4_client k;
	struct n4_sid sid;
	uint32_t seq = 1;

	if (CHECK(n4_start(&k, env.port, 1, "kill-target") == 0, "set up the target's client"))
		CHECK_EQ(n4_open(&k, env.export_dir, "target", true, N4_ACCESS_READ, 0, "t", &seq, &sid, target_fh,
				 &target_fh_len), 0, "OPEN (create) target");
	n4_close(&k, target_fh, target_fh_len, &seq, &sid);
	n4_client_close(&k);
}

static long fd_first = -1, fd_max;

/* One boot; kill at its end unless last. false: the daemon did not start. */
static bool boot(bool last)
{
	unsigned graces_before = hx_log_count(&env, "nfs4: grace period of");
	bool any_confirmed = false, early = round_no > 0 && !last && hx_rand(&rng) % KILL_EARLY_1IN == 0;
	bool early_or_armed;
	struct killer kl;
	double t0;

	for (unsigned i = 0; i < CLIENTS; i++)
		any_confirmed |= kcs[i].confirmed;
	if (hx_daemon_start(&env) != 0)
		return false;
	t0 = hx_now();
	check_start(graces_before, any_confirmed);
	verify_disk();
	if (round_no == 0)
		make_target();
	if (early)
		killer_start(&kl, (unsigned)(hx_rand(&rng) % 150));
	early_or_armed = early;
	clients_up(t0);
	if (any_confirmed && (!stranger(t0) || (quit_id[0] && !quitter_return(t0))))
		goto killed;
	if (!grace_wait())
		goto killed;
	long fds = n4_proc_fds(env.pid);
	if (fd_first < 0)
		fd_first = fds;
	fd_max = fds > fd_max ? fds : fd_max;
	if (fds > fd_first + FD_SLACK)
		CHECK(false, "round %u: the daemon's descriptors after grace: %ld, at most %ld", round_no, fds,
		      fd_first + FD_SLACK);
	if (last) {
		for (unsigned i = 0; i < CLIENTS; i++)
			n4_client_close(&kcs[i].k);
		return true;
	}
	if (!early) {
		quitter_leave();
		killer_start(&kl, 5 + (unsigned)(hx_rand(&rng) % 400));
	}
	early_or_armed = true;
killed:
	if (!early_or_armed)
		killer_start(&kl, 0); /* a check failed before the traffic: end this boot now */
	traffic();
	killer_join(&kl);
	fig.kills_early += early;
	for (unsigned i = 0; i < CLIENTS; i++)
		n4_client_close(&kcs[i].k);
	return true;
}

int main(int argc, char **argv)
{
	const char *seed_env = getenv("HX_SEED");
	uint64_t seed;

	hx_begin("nfs4_kill", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL) ^ (uint64_t)getpid() << 16;
	printf("# seed %llu (HX_SEED=%llu repeats this run)\n", (unsigned long long)seed, (unsigned long long)seed);
	rng = seed | 1;
	if (!CHECK(hx_append_config(&env, "[nfsv4]\ngrace-time = %d\nlease-time = %d\n", GRACE_S, LEASE_S) == 0,
		   "config"))
		return hx_end();
	for (unsigned i = 0; i < CLIENTS; i++)
		snprintf(kcs[i].id, sizeof(kcs[i].id), "kill-client-%u", i);
	hx_section("%d SIGKILLs amid OPEN/LOCK/WRITE/COMMIT/CLOSE of clients 4.0, 4.1, 4.2, 4.0; restart, reclaim, "
		   "verify", ROUNDS);
	for (round_no = 0; round_no <= ROUNDS; round_no++)
		if (!boot(round_no == ROUNDS))
			break;
	CHECK(fd_max <= fd_first + FD_SLACK, "the daemon's descriptors after grace stayed within %ld (first %ld, "
	      "most %ld)", fd_first + FD_SLACK, fd_first, fd_max);
	hx_note("kills %u (%u during the reclaims), grace periods %u, opens reclaimed %u, locks reclaimed %u, "
		"NO_GRACE answers %u, stable bytes verified %llu", fig.kills, fig.kills_early, fig.graces,
		fig.reclaim_opens, fig.reclaim_locks, fig.no_grace, (unsigned long long)fig.bytes);
	CHECK_EQ(fig.kills, ROUNDS, "%d kills", ROUNDS);
	hx_daemon_stop(&env);
	return hx_end();
}
