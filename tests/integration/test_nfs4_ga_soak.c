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
 * (nfs4_bounds.cb_getattr_waiters) is empty. Last, A answers one only after
 * 1.5 s: B's GETATTR is DELAY within about the worker's 500 ms, the slot
 * stays taken (the gauge says 1) until the late answer arrives, then is free.
 */
#include <pthread.h>
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
	volatile bool stop;
	volatile int late_ms;   /* wait this long before answering a CB_GETATTR */
	volatile unsigned answered; /* CB_GETATTRs answered */
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
				if (h->late_ms)
					usleep((useconds_t)h->late_ms * 1000);
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

/* B's SEQUENCE, PUTFH, GETATTR(change, size): the status; *change, *size on NFS4_OK. */
static int getattr(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint64_t *change, uint64_t *size)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_GETATTR);
	xb_u32(&a, 1);
	xb_u32(&a, 1u << 3 | 1u << 4);
	st = n4_call(k, &a, &r);
	if (st == 0 && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, N4_GETATTR) == 0) {
		uint32_t words = xd_u32(&r.body);

		xd_skip(&r.body, 4 * (words <= 4 ? words : 0));
		if (xd_u32(&r.body) == 16) {
			*change = xd_u64(&r.body);
			*size = xd_u64(&r.body);
		}
		st = r.body.bad ? -1 : 0;
	}
	raw_reply_free(&r);
	return st;
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
		int st = getattr(b, fh, fh_len, &change, &size);

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

static void test_soak(void)
{
	static struct holder h;
	struct n4_client b;
	struct n4_openres o;
	uint8_t fh[128];
	uint32_t fh_len = 0;
	uint64_t last = 0, change = 0, size = 0;

	hx_section("CB_GETATTR soak: %u GETATTRs of a write-delegated file, each answered by its holder", SOAK);
	if (!CHECK(n4_start_cb(&h.k, env.port, "ga-soak-a") == 0, "A: a 4.1 client with a back channel") ||
	    !CHECK(n4_start(&b, env.port, 1, "ga-soak-b") == 0, "B: a 4.1 client"))
		return;
	CHECK_EQ(n4_open_deleg(&h.k, env.export_dir, "gafile", true, N4_ACCESS_BOTH, "a", &o, fh, &fh_len), 0,
		 "A: OPEN for writing");
	if (!CHECK_EQ(o.deleg, 2, "A: a write delegation"))
		return;
	pthread_create(&h.thread, NULL, holder_main, &h);
	CHECK_EQ(soak(&b, &h, fh, fh_len, WARMUP, &last), WARMUP, "warm-up: every GETATTR the holder's figure");
	long fds0 = n4_proc_fds(env.pid), rss0 = n4_proc_rss_kb(env.pid);
	CHECK_EQ(soak(&b, &h, fh, fh_len, SOAK, &last), SOAK,
		 "soak: every GETATTR the holder's latest size, the change moving on");
	long fds1 = n4_proc_fds(env.pid), rss1 = n4_proc_rss_kb(env.pid);
	CHECK(fds1 == fds0, "daemon descriptors as after the warm-up (%ld, %ld)", fds0, fds1);
	CHECK(rss1 - rss0 < 2048, "daemon RSS within 2 MiB of the warm-up's (%ld KiB, %ld KiB)", rss0, rss1);
	char *doc = n4_stats_json(env.stats_socket);
	CHECK(doc && n4_stats_num(doc, "nfs4", "cb_getattr_sent") == WARMUP + SOAK &&
		      n4_stats_num(doc, "nfs4", "cb_getattr_unanswered") == 0,
	      "stats: %u CB_GETATTR sent, none unanswered", WARMUP + SOAK);
	CHECK(doc && n4_stats_num(doc, "nfs4_bounds", "cb_getattr_waiters") == 0 &&
		      n4_stats_num(doc, "nfs4_bounds", "cb_getattr_waiters_max") == 64,
	      "stats: the waiter table empty (of 64)");
	free(doc);

	/* A late answer: the worker gives up, its slot waits for the answer. */
	h.late_ms = 1500;
	double t0 = hx_now();
	int st = getattr(&b, fh, fh_len, &change, &size);
	double took = hx_now() - t0;
	CHECK(st == 10008 /* NFS4ERR_DELAY */ && took < 1.4, "B: DELAY before the late answer (%d, %.2f s)", st, took);
	CHECK_EQ(waiters(), 1, "the slot stays taken until the answer (gauge 1)");
	long long w = -1;
	for (double end = hx_now() + 5; (w = waiters()) != 0 && hx_now() < end;)
		usleep(50000);
	CHECK_EQ(w, 0, "the late answer frees it (gauge 0)");
	h.stop = true;
	pthread_join(h.thread, NULL);
	n4_client_close(&b);
	n4_client_close(&h.k);
}

int main(int argc, char **argv)
{
	hx_begin("nfs4_ga_soak", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	if (hx_write_config(&env) != 0 || hx_append_config(&env, "[nfsv4]\nenable = yes\ndelegations = yes\n") != 0)
		return hx_end();
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	test_soak();
	hx_daemon_stop(&env);
	hx_env_release(&env);
	return hx_end();
}
