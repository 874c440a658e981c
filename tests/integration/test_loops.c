/*
 * test_loops.c - the daemon with [rnfsd] loops = 4 (several event loops):
 *  - 8 NFSv4.1 clients (nfs4raw) and 4 NFSv3 clients (libnfs) connected at
 *    once: the stats document's "loops" section has 4 loops, each holding
 *    at least 2 TCP connections (accepted round-robin), and rnfsctl stats
 *    prints them;
 *  - the 8 NFSv4.1 clients, each from its own thread, OPEN (create), WRITE,
 *    READ back, CLOSE their own files for several rounds while the NFSv3
 *    clients create, write, read back and remove theirs: every status OK and
 *    every byte read as written;
 *  - 4 NFSv4.1 clients whose connection is their back channel (so at least
 *    three sit on loops other than loop 0, where callbacks are made): each
 *    is probed (CB_NULL, CB_SEQUENCE) and answers, and SEQUENCE then
 *    reports no CB_PATH_DOWN;
 *  - SIGTERM drains every loop: exit 0.
 * HX_LOOPS=N (harness.c) runs the other integration tests with loops = N.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"

#define LOOPS 4
#define V4_CLIENTS 8
#define V3_CLIENTS 4
#define ROUNDS 6
#define CHUNK (32 * 1024)

static struct hx_env env;

/* rnfsctl --json stats: the tcp_connections of each loop in "loops"; how many loops, or -1. */
static int loop_conns(unsigned *conns, unsigned max)
{
	static const char *const args[] = { "--json", "stats", NULL };
	static char out[1 << 18];
	int n = 0;

	if (hx_rnfsctl(&env, -1, out, sizeof(out), args) != 0)
		return -1;
	const char *p = strstr(out, "\"loops\"");
	if (!p)
		return -1;
	const char *end = strchr(p, ']');
	while ((p = strstr(p, "\"tcp_connections\": ")) && (!end || p < end) && (unsigned)n < max) {
		p += strlen("\"tcp_connections\": ");
		conns[n++] = (unsigned)strtoul(p, NULL, 10);
	}
	return n;
}

struct v4_worker {
	struct n4_client k;
	unsigned idx;
	unsigned ok_rounds; /* rounds where every step succeeded and the data matched */
	char why[128];      /* the first failure */
	pthread_t t;
};

/* One round: OPEN(create) own file, WRITE a pattern, READ it back, CLOSE. */
static bool v4_round(struct v4_worker *w, unsigned r, uint8_t *data, uint8_t *back)
{
	char name[32];
	struct n4_sid sid;
	uint8_t fh[128];
	uint32_t fh_len = sizeof(fh), seqid = 0, got = 0;
	uint64_t seed = 1 + w->idx * 1000 + r;

	snprintf(name, sizeof(name), "v4-%u-%u", w->idx, r);
	hx_fill(&seed, data, CHUNK);
	int st = n4_open(&w->k, env.export_dir, name, true, N4_ACCESS_BOTH, 0, "own", &seqid, &sid, fh, &fh_len);
	if (st == 0)
		st = n4_write(&w->k, fh, fh_len, &sid, 0, data, CHUNK);
	if (st == 0)
		st = n4_read(&w->k, fh, fh_len, &sid, 0, CHUNK, back, &got);
	if (st == 0 && (got != CHUNK || memcmp(back, data, CHUNK) != 0))
		st = -2;
	int cst = n4_close(&w->k, fh, fh_len, &seqid, &sid);
	if ((st || cst) && !w->why[0])
		snprintf(w->why, sizeof(w->why), "%s round %u: status %d, close %d", name, r, st, cst);
	return st == 0 && cst == 0;
}

static void *v4_main(void *arg)
{
	struct v4_worker *w = arg;
	uint8_t *data = malloc(CHUNK), *back = malloc(CHUNK);

	for (unsigned r = 0; data && back && r < ROUNDS; r++)
		w->ok_rounds += v4_round(w, r, data, back);
	free(data);
	free(back);
	return NULL;
}

/* NFSv3 clients, driven in turn from this thread while the NFSv4 threads run: ok rounds. */
static unsigned v3_rounds(struct rpc_context **rpc, struct hx_fh *root)
{
	static uint8_t data[CHUNK];
	unsigned ok = 0;

	for (unsigned r = 0; r < ROUNDS; r++)
		for (unsigned c = 0; c < V3_CLIENTS; c++) {
			char name[32];
			struct hx_fh fh;
			READ3res rr;
			uint64_t seed = 7 + c * 100 + r;

			snprintf(name, sizeof(name), "v3-%u-%u", c, r);
			hx_fill(&seed, data, sizeof(data));
			if (hx3_create(rpc[c], &root[c], name, 0644, &fh) != NFS3_OK ||
			    hx3_write(rpc[c], &fh, 0, data, CHUNK, FILE_SYNC, NULL) != NFS3_OK ||
			    hx3_read(rpc[c], &fh, 0, CHUNK, &rr) != NFS3_OK)
				continue;
			bool same = rr.READ3res_u.resok.data.data_len == CHUNK &&
				    memcmp(rr.READ3res_u.resok.data.data_val, data, CHUNK) == 0;
			ok += same && hx3_remove(rpc[c], &root[c], name) == NFS3_OK;
		}
	return ok;
}

static void test_spread_and_workload(void)
{
	struct v4_worker w[V4_CLIENTS];
	struct rpc_context *rpc[V3_CLIENTS] = { 0 };
	struct hx_fh root[V3_CLIENTS];
	unsigned conns[LOOPS + 1] = { 0 };
	char id[32];
	bool up = true;

	hx_section("%u NFSv4.1 and %u NFSv3 clients over %u loops", V4_CLIENTS, V3_CLIENTS, LOOPS);
	memset(w, 0, sizeof(w));
	for (unsigned i = 0; i < V4_CLIENTS; i++) {
		w[i].idx = i;
		snprintf(id, sizeof(id), "loops-%u", i);
		up &= n4_start(&w[i].k, env.port, 1, id) == 0;
	}
	for (unsigned c = 0; c < V3_CLIENTS; c++)
		up &= hx_open_export(&env, env.export_dir, 0, 0, &rpc[c], &root[c]) == 0;
	if (!CHECK(up, "every client connected and set up"))
		goto out;
	int n = loop_conns(conns, LOOPS + 1);
	CHECK_EQ(n, LOOPS, "the stats document lists %u loops", LOOPS);
	for (int i = 0; i < n; i++)
		CHECK(conns[i] >= 2, "loop %d holds %u TCP connections (>= 2)", i, conns[i]);
	static const char *const text[] = { "stats", NULL };
	static char out[1 << 16];
	CHECK(hx_rnfsctl(&env, -1, out, sizeof(out), text) == 0 && strstr(out, "event loops: 0: ") &&
	      strstr(out, "; 3: "), "rnfsctl stats shows the 4 loops' connections");

	for (unsigned i = 0; i < V4_CLIENTS; i++)
		pthread_create(&w[i].t, NULL, v4_main, &w[i]);
	unsigned v3_ok = v3_rounds(rpc, root);
	for (unsigned i = 0; i < V4_CLIENTS; i++) {
		pthread_join(w[i].t, NULL);
		CHECK_EQ(w[i].ok_rounds, ROUNDS, "NFSv4.1 client %u: every round written and read back%s%s", i,
			 w[i].why[0] ? ": " : "", w[i].why);
	}
	CHECK_EQ(v3_ok, ROUNDS * V3_CLIENTS, "NFSv3: every file created, written, read back and removed");
out:
	for (unsigned i = 0; i < V4_CLIENTS; i++)
		n4_client_close(&w[i].k);
	for (unsigned c = 0; c < V3_CLIENTS; c++)
		if (rpc[c])
			hx_rpc_close(rpc[c]);
}

/* RFC 8881 §2.10.3.1: the back channel on the fore connection, whatever loop owns it. */
static void test_back_channels(void)
{
	struct n4_client k[LOOPS];
	char id[32];

	hx_section("back channels on connections of every loop");
	memset(k, 0, sizeof(k));
	for (unsigned i = 0; i < LOOPS; i++) {
		snprintf(id, sizeof(id), "loops-cb-%u", i);
		if (!CHECK_EQ(n4_start_cb(&k[i], env.port, id), 0, "client %u: probed on its back channel, answered", i))
			continue;
		CHECK(n4_sequence(&k[i]) == 0 && !(k[i].seq_flags & 0x1u /* RFC 8881 §18.46.3: SEQ4_STATUS_CB_PATH_DOWN */),
		      "client %u: SEQUENCE without CB_PATH_DOWN (flags 0x%x)", i, k[i].seq_flags);
	}
	for (unsigned i = 0; i < LOOPS; i++)
		n4_client_close(&k[i]);
}

int main(int argc, char **argv)
{
	hx_begin("loops", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	env.rnfsd_extra = "loops = 4\n";
	if (hx_write_config(&env) != 0 || hx_daemon_start(&env) != 0)
		return hx_end();
	test_spread_and_workload();
	test_back_channels();
	CHECK(hx_daemon_alive(&env), "daemon still running at the end");
	CHECK_EQ(hx_daemon_stop(&env), 0, "SIGTERM drains every loop: exit 0");
	return hx_end();
}
