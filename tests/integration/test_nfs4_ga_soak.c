/*
 * test_nfs4_ga_soak.c - a soak of CB_GETATTR (RFC 8881 §10.4.3, §20.1;
 * nfs/v4/ops/nfs4_deleg_getattr.c and its waiter table state/nfs4_ga_wait.c).
 * Client A holds a write delegation and answers every CB_GETATTR from a
 * thread reading its back channel, reporting size = how many it has answered;
 * client B GETATTRs the file 100 times (warm-up), then 2,000 times more: each
 * GETATTR carries A's latest figure (so each answer reached its own waiting
 * worker) and a change past the one before. Afterwards the daemon's
 * descriptors are as after the warm-up and its RSS within 2 MiB, the stats
 * count every CB_GETATTR sent and none unanswered, and the waiter table
 * (nfs4_bounds.cb_getattr_waiters) is empty. That daemon waits 4.5 s for an
 * answer (test hook RNFSD_TEST_CB_GETATTR_WAIT_MS), so a loaded machine's slow
 * answer is not a lost one. Then, with the default wait, A holds its answer back
 * until the test lets it go: B's GETATTR is DELAY after the worker's 500 ms,
 * the slot stays taken (the gauge says 1) until the answer arrives, then is free.
 *
 * Then the table full: 10 holders (so no holder's callback queue, 8, fills)
 * holding its answers back, and 70 GETATTRs at once from 70 clients (80
 * worker threads): the gauge peaks at exactly 64 (NFS4_GA_WAITERS), every
 * one of the 70 is DELAY, exactly 64 CB_GETATTRs were sent (the 6 without a
 * slot DELAY at once, with none), and once the holders answer the table is
 * empty again. No check reads a clock: a loaded machine only makes it slower.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"

#define WARMUP 100
#define SOAK 2000
#define CHANGE0 1000000u /* the holder's change attribute, past anything the server reports */

static struct hx_env env;

/* A's callback service: reads its connection (also its back channel) until stop. */
struct holder {
	struct n4_client k;
	pthread_t thread;
	_Atomic bool stop;
	_Atomic bool hold;     /* answer a CB_GETATTR only once the test clears this (no clock) */
	_Atomic unsigned answered; /* CB_GETATTRs answered */
};

static void *holder_main(void *arg)
{
	struct holder *h = arg;

	while (!h->stop) {
		struct n4_cb_call cc;
		uint8_t *msg = NULL;
		size_t len = 0;
		enum raw_recv_result rr = raw_recv_record(&h->k.c, &msg, &len, 100);

		if (rr == RAW_RECV_TIMEOUT)
			continue;
		if (rr != RAW_RECV_OK)
			break;
		if (n4_cb_parse(msg, len, &cc)) {
			if (cc.op2 == 3) { /* CB_GETATTR */
				while (h->hold && !h->stop)
					usleep(10000);
				unsigned n = h->answered + 1;

				h->answered = n; /* before the answer: B may look as soon as it is sent */
				n4_cb_answer_getattr(&h->k.c, &cc, CHANGE0 + n, n);
			} else {
				n4_cb_answer(&h->k.c, &cc);
			}
		}
		free(msg);
	}
	return NULL;
}

static long long waiters(void)
{
	char *doc = n4_stats_json(env.stats_socket);
	long long n = doc ? n4_stats_num(doc, "nfs4_bounds", "cb_getattr_waiters") : -1;

	free(doc);
	return n;
}

/* n GETATTRs by b, each answered by the holder with its next figure; how many were right. */
static unsigned soak(struct n4_client *b, struct holder *h, const uint8_t *fh, uint32_t fh_len, unsigned n,
		     uint64_t *last_change)
{
	unsigned right = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t change = 0, size = 0;
		int st = n4_getattr_cs(b, fh, fh_len, &change, &size);

		if (st == 0 && size == h->answered && change > *last_change)
			right++;
		else if (right + 5 > i) /* the first few wrong ones, not thousands */
			hx_note("GETATTR %u: status %d, size %llu (answered %u), change %llu after %llu", i, st,
				(unsigned long long)size, h->answered, (unsigned long long)change,
				(unsigned long long)*last_change);
		if (st == 0)
			*last_change = change;
	}
	return right;
}

/* A, a 4.1 client with a back channel holding a write delegation of file (its handle into fh) and
 * answering CB_GETATTRs from its thread; B, a plain 4.1 client. false: not set up. */
static bool pair_start(struct holder *h, struct n4_client *b, const char *tag, uint8_t *fh, uint32_t *fh_len)
{
	struct n4_openres o;
	char ida[32], idb[32];

	snprintf(ida, sizeof(ida), "ga-%s-a", tag);
	snprintf(idb, sizeof(idb), "ga-%s-b", tag);
	memset(h, 0, sizeof(*h));
	if (!CHECK(n4_start_cb(&h->k, env.port, ida) == 0, "A: a 4.1 client with a back channel") ||
	    !CHECK(n4_start(b, env.port, 1, idb) == 0, "B: a 4.1 client"))
		return false;
	CHECK_EQ(n4_open_deleg(&h->k, env.export_dir, tag, true, N4_ACCESS_BOTH, "a", &o, fh, fh_len), 0,
		 "A: OPEN for writing");
	if (!CHECK_EQ(o.deleg, 2, "A: a write delegation"))
		return false;
	pthread_create(&h->thread, NULL, holder_main, h);
	return true;
}

static void pair_stop(struct holder *h, struct n4_client *b)
{
	h->stop = true;
	pthread_join(h->thread, NULL);
	n4_client_close(b);
	n4_client_close(&h->k);
}

/* Run with RNFSD_TEST_CB_GETATTR_WAIT_MS (main()): on a loaded sanitizer build one answer slower than
 * the default 500 ms would recall the delegation, and the rest of the soak would meet DELAY. */
static void test_soak(void)
{
	static struct holder h;
	struct n4_client b;
	uint8_t fh[128];
	uint32_t fh_len = 0;
	uint64_t last = 0;

	hx_section("CB_GETATTR soak: %u GETATTRs of a write-delegated file, each answered by its holder", SOAK);
	if (!pair_start(&h, &b, "soak", fh, &fh_len))
		return;
	CHECK_EQ(soak(&b, &h, fh, fh_len, WARMUP, &last), WARMUP, "warm-up: every GETATTR the holder's figure");
	long fds0 = n4_proc_fds(env.pid), rss0 = n4_proc_rss_kb(env.pid);
	CHECK_EQ(soak(&b, &h, fh, fh_len, SOAK, &last), SOAK,
		 "soak: every GETATTR the holder's latest size, the change moving on");
	long fds1 = n4_proc_fds(env.pid), rss1 = n4_proc_rss_kb(env.pid);
	CHECK(fds1 == fds0, "daemon descriptors as after the warm-up (%ld, %ld)", fds0, fds1);
	/* plus what a sanitizer build keeps (ASan's quarantine, TSan's shadow and history) */
	CHECK(rss1 - rss0 < 2048 + n4_proc_quarantine_kb(env.pid),
	      "daemon RSS within 2 MiB of the warm-up's (%ld KiB, %ld KiB)", rss0, rss1);
	char *doc = n4_stats_json(env.stats_socket);
	CHECK(doc && n4_stats_num(doc, "nfs4", "cb_getattr_sent") == WARMUP + SOAK &&
		      n4_stats_num(doc, "nfs4", "cb_getattr_unanswered") == 0,
	      "stats: %u CB_GETATTR sent, none unanswered", WARMUP + SOAK);
	CHECK(doc && n4_stats_num(doc, "nfs4_bounds", "cb_getattr_waiters") == 0 &&
		      n4_stats_num(doc, "nfs4_bounds", "cb_getattr_waiters_max") == 64,
	      "stats: the waiter table empty (of 64)");
	free(doc);
	CHECK(hx_log_count(&env, "test hook: a CB_GETATTR answer is waited for 4500 ms") == 1, "the daemon logs the hook");
	pair_stop(&h, &b);
}

/* A late answer, with the default wait: the worker gives up, its slot waits for the answer. */
static void test_late(void)
{
	static struct holder h;
	struct n4_client b;
	uint8_t fh[128];
	uint32_t fh_len = 0;
	uint64_t change = 0, size = 0;

	hx_section("CB_GETATTR answered late: DELAY, the slot kept until the answer");
	if (!pair_start(&h, &b, "late", fh, &fh_len))
		return;
	h.hold = true;
	int st = n4_getattr_cs(&b, fh, fh_len, &change, &size);
	CHECK(st == 10008 /* NFS4ERR_DELAY */, "B: DELAY while the holder has not answered (%d)", st);
	CHECK_EQ(waiters(), 1, "the slot stays taken until the answer (gauge 1)");
	h.hold = false;
	long long w = -1;
	for (double end = hx_now() + 30; (w = waiters()) != 0 && hx_now() < end;)
		usleep(50000);
	CHECK_EQ(w, 0, "the late answer frees it (gauge 0)");
	pair_stop(&h, &b);
}

#define HOLDERS 10
#define ASKERS 70
#define WAITERS 64 /* NFS4_GA_WAITERS */

struct asker {
	struct n4_client k;
	pthread_t thread;
	pthread_barrier_t *go;
	const uint8_t *fh;
	uint32_t fh_len;
	int status;
	_Atomic bool done;
};

static void *asker_main(void *arg)
{
	struct asker *q = arg;
	uint64_t change, size;

	pthread_barrier_wait(q->go);
	q->status = n4_getattr_cs(&q->k, q->fh, q->fh_len, &change, &size);
	q->done = true;
	return NULL;
}

/* The first i holders set up, each with a write delegation of its own file into fh[i]. */
static unsigned holders_start(struct holder *h, uint8_t (*fh)[128], uint32_t *fh_len)
{
	unsigned i;

	for (i = 0; i < HOLDERS; i++) {
		struct n4_openres o;
		char id[32], name[32];

		snprintf(id, sizeof(id), "ga-full-h%u", i);
		snprintf(name, sizeof(name), "full%u", i);
		if (n4_start_cb(&h[i].k, env.port, id) != 0 ||
		    n4_open_deleg(&h[i].k, env.export_dir, name, true, N4_ACCESS_BOTH, "h", &o, fh[i], &fh_len[i]) != 0 ||
		    o.deleg != 2)
			break;
		h[i].hold = true;
		pthread_create(&h[i].thread, NULL, holder_main, &h[i]);
	}
	return i;
}

static void test_full(void)
{
	static struct holder h[HOLDERS];
	static struct asker q[ASKERS];
	static uint8_t fh[HOLDERS][128];
	static uint32_t fh_len[HOLDERS];
	pthread_barrier_t go;
	unsigned nh, nq = 0, delay = 0;
	long long peak = 0, w, sent0 = -1, sent1 = -2;
	char *doc;

	hx_section("CB_GETATTR waiters full: %u GETATTRs at once on %u write-delegated files whose holders hold their answers", ASKERS,
		   HOLDERS);
	nh = holders_start(h, fh, fh_len);
	if (!CHECK_EQ(nh, HOLDERS, "holders with a write delegation each"))
		goto out;
	for (nq = 0; nq < ASKERS; nq++) {
		char id[32];

		snprintf(id, sizeof(id), "ga-full-q%u", nq);
		if (n4_start(&q[nq].k, env.port, 1, id) != 0)
			break;
	}
	if (!CHECK_EQ(nq, ASKERS, "asking clients set up"))
		goto out;
	doc = n4_stats_json(env.stats_socket);
	sent0 = doc ? n4_stats_num(doc, "nfs4", "cb_getattr_sent") : -1;
	free(doc);
	pthread_barrier_init(&go, NULL, ASKERS);
	for (unsigned i = 0; i < ASKERS; i++) {
		q[i].go = &go, q[i].fh = fh[i % HOLDERS], q[i].fh_len = fh_len[i % HOLDERS];
		pthread_create(&q[i].thread, NULL, asker_main, &q[i]);
	}
	/* No bound on how long a loaded machine takes: the gauge is sampled until every asker has its answer. */
	for (unsigned joined = 0; joined < ASKERS; usleep(50000)) {
		if ((w = waiters()) > peak)
			peak = w;
		for (joined = 0; joined < ASKERS && q[joined].done; joined++)
			;
	}
	for (unsigned i = 0; i < ASKERS; i++) {
		pthread_join(q[i].thread, NULL);
		delay += q[i].status == 10008;
	}
	pthread_barrier_destroy(&go);
	doc = n4_stats_json(env.stats_socket);
	sent1 = doc ? n4_stats_num(doc, "nfs4", "cb_getattr_sent") : -2;
	free(doc);
	CHECK_EQ(peak, WAITERS, "the waiter table full at its bound (gauge peak)");
	CHECK_EQ(delay, ASKERS, "every GETATTR DELAY (the holders answer only when let go)");
	/* Those without a slot send no CB_GETATTR (they DELAY at once, nfs4_deleg_getattr.c): a count, not a clock. */
	CHECK_EQ(sent1 - sent0, WAITERS, "a CB_GETATTR sent for each of the 64 slots, none for the others");
	for (unsigned i = 0; i < HOLDERS; i++)
		h[i].hold = false; /* the calls still queued are answered now */
	for (double end = hx_now() + 60; (w = waiters()) != 0 && hx_now() < end;)
		usleep(100000);
	CHECK_EQ(w, 0, "every slot free once the holders answered (gauge 0)");
out:
	for (unsigned i = 0; i < nh; i++) {
		h[i].stop = true;
		pthread_join(h[i].thread, NULL);
		n4_client_close(&h[i].k);
	}
	for (unsigned i = 0; i < nq; i++)
		n4_client_close(&q[i].k);
}

/* A daemon of its own (a fresh state directory, so no grace period), the CB_GETATTR wait as given. */
static int start(const char *wait_ms)
{
	int rc;

	hx_env_init(&env);
	hx_require_own_daemon(&env);
	env.threads = 80; /* test_full: 70 GETATTRs waiting on workers at once */
	if (hx_write_config(&env) != 0 || hx_append_config(&env, "[nfsv4]\nenable = yes\ndelegations = yes\n") != 0)
		return -1;
	if (wait_ms)
		setenv("RNFSD_TEST_CB_GETATTR_WAIT_MS", wait_ms, 1);
	rc = hx_daemon_start(&env);
	unsetenv("RNFSD_TEST_CB_GETATTR_WAIT_MS");
	return rc;
}

static void stop(void)
{
	hx_daemon_stop(&env);
	hx_env_release(&env);
}

int main(int argc, char **argv)
{
	hx_begin("nfs4_ga_soak", argc, argv);
	/* 4.5 s: below the back channel's 5 s call timeout, so an answer is still an answer */
	if (start("4500") == 0)
		test_soak();
	stop();
	if (start(NULL) == 0) {
		test_late();
		test_full();
	}
	stop();
	return hx_end();
}
