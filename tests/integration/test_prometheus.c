/*
 * test_prometheus.c - the Prometheus page (issue 27 part 1, [stats]
 * prometheus, daemon/prom_server.c) against real clients:
 *  - curl scrapes GET /metrics before and after NFSv3 GETATTRs sent with
 *    libnfs's raw API (and an NFSv4 mount and stat): the GETATTR counter
 *    moved by exactly the calls sent, NFSv4 operations are counted,
 *    the content type is the text format's, each family has one HELP and
 *    one TYPE line, other paths get 404;
 *  - `promtool check metrics` (Debian's prometheus package) accepts the page;
 *  - a real Prometheus server scrapes rnfsd every second (temporary config
 *    and storage) and its HTTP API answers the moved counter;
 *  - per-export counters (rnfsd_export_*_total{export="PATH"}): an NFSv3
 *    WRITE and READ of 4096 bytes on the first export move its bytes and
 *    calls and leave the second's alone; an NFSv4.1 WRITE and READ of 3000
 *    bytes on the second move its counters only; a MNT moves the first's
 *    calls, an NLM TEST over UDP, an NFSv4.2 READ_PLUS and a COPY of 3000
 *    bytes the second's calls, read and written bytes (COPY: the
 *    destination's), and UDP's byte series move; `rnfsctl export remove`
 *    of the second drops its series from the page;
 *  - utilisation: around that NFSv3 I/O the TCP received and sent bytes move
 *    by 4096 at least, the loop's and the workers' busy seconds count up,
 *    busy + idle workers are the 4 threads, the queue depth is there;
 *  - calls by flavor (rnfsd_rpc_calls_by_flavor_total{flavor}): sys moves
 *    with the AUTH_SYS GETATTRs, krb5p stays 0;
 *  - [stats] prometheus-top-clients = 2: an NFSv4.1 client from 127.0.0.2
 *    and the tests' 127.0.0.1 are the two rnfsd_client_*_total series, with
 *    calls and bytes;
 *  - --check-config refuses two addresses.
 * Exits 77 (skip) only when curl, promtool or prometheus is missing. In a
 * build without libmicrohttpd it checks instead that the daemon refuses the
 * setting at start with a clear error.
 */
#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"
#include "rnfsd_build.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs4.h>

#define GETATTR_SERIES "rnfsd_rpc_calls_total{program=\"nfs\",version=\"3\",procedure=\"GETATTR\"}"
#define CALLS 25
#define PROM_WAIT_S 90.0 /* Prometheus's start and first scrapes, on a busy machine */

static struct hx_env env;
static uint16_t prom_port;
static char b_path[PATH_MAX]; /* the second export */

/* Run cmd with /bin/sh: its exit status, or -1. */
static int sh(const char *cmd)
{
	int st = system(cmd);

	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool have(const char *prog)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return sh(cmd) == 0;
}

/* GET url's path into file (headers into file.hdr); the HTTP status, or -1. */
static int scrape(const char *path, const char *file)
{
	char cmd[1024];
	FILE *f;
	int code = -1;

	snprintf(cmd, sizeof(cmd), "curl -sS --max-time 10 -D %s.hdr -o %s -w '%%{http_code}' http://127.0.0.1:%u%s",
		 file, file, prom_port, path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &code) != 1)
		code = -1;
	pclose(f);
	return code;
}

/* The whole of a small file, NUL-terminated (static buffer). */
static const char *slurp(const char *file)
{
	static char buf[1 << 20];
	FILE *f = fopen(file, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

/* The value of the sample line that starts with series, or -1. */
static long long sample(const char *page, const char *series)
{
	size_t n = strlen(series);

	for (const char *l = page; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, series, n) && l[n] == ' ')
			return atoll(l + n + 1);
	return -1;
}

/* Lines of page that start with prefix. */
static unsigned count_lines(const char *page, const char *prefix)
{
	unsigned c = 0;

	for (const char *l = page; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		c += !strncmp(l, prefix, strlen(prefix));
	return c;
}

/* Each "# TYPE" family has exactly one "# HELP" and one "# TYPE" line. */
static bool families_once(const char *page, unsigned *families)
{
	*families = 0;
	for (const char *l = strstr(page, "# TYPE "); l; l = strstr(l + 1, "\n# TYPE ")) {
		char name[160], want[200];

		if (*l == '\n')
			l++;
		if (sscanf(l, "# TYPE %159s", name) != 1)
			return false;
		snprintf(want, sizeof(want), "# TYPE %s ", name);
		if (count_lines(page, want) != 1)
			return false;
		snprintf(want, sizeof(want), "# HELP %s ", name);
		if (count_lines(page, want) != 1)
			return false;
		++*families;
	}
	return *families > 0;
}

static void send_getattrs(unsigned n)
{
	struct rpc_context *rpc;
	struct hx_fh root;
	fattr3 a;
	unsigned ok = 0;

	if (hx_open_export(&env, env.export_dir, -1, -1, &rpc, &root) != 0)
		return;
	for (unsigned i = 0; i < n; i++)
		ok += hx3_getattr(rpc, &root, &a) == NFS3_OK;
	hx_rpc_close(rpc);
	CHECK_EQ(ok, n, "%u NFSv3 GETATTRs answered", n);
}

/* An NFSv4 mount through libnfs and a stat: COMPOUNDs whose operations the page counts. */
static void nfs4_stat(void)
{
	char err[512];
	struct nfs_stat_64 st;
	struct nfs_context *nfs;

	hx_mount_version = NFS_V4;
	nfs = hx_mount(&env, env.export_dir, -1, -1, err, sizeof(err));
	hx_mount_version = NFS_V3;
	if (!CHECK(nfs != NULL, "NFSv4 mount (%s)", nfs ? "ok" : err))
		return;
	CHECK_EQ(nfs_stat64(nfs, "/", &st), 0, "NFSv4 stat of the export root");
	hx_umount(nfs);
}

static void check_scrapes(long long *after_out)
{
	const char *p1 = hx_path(&env, "scrape1.txt"), *p2 = hx_path(&env, "scrape2.txt");
	long long before, after;
	unsigned fams;
	char cmd[1024];

	hx_section("curl scrapes /metrics around %u GETATTRs", CALLS);
	CHECK_EQ(scrape("/metrics", p1), 200, "GET /metrics answers 200");
	before = sample(slurp(p1), GETATTR_SERIES);
	long long sys0 = sample(slurp(p1), "rnfsd_rpc_calls_by_flavor_total{flavor=\"sys\"}");
	CHECK(before >= 0, "the page has %s (%lld)", GETATTR_SERIES, before);
	send_getattrs(CALLS);
	nfs4_stat();
	CHECK_EQ(scrape("/metrics", p2), 200, "GET /metrics again");
	const char *page = slurp(p2);
	after = sample(page, GETATTR_SERIES);
	CHECK_EQ(after - before, CALLS, "the GETATTR counter moved by the calls sent (%lld -> %lld)", before, after);
	CHECK(families_once(page, &fams), "one HELP and one TYPE line per family (%u families)", fams);
	CHECK(strstr(page, "# TYPE rnfsd_rpc_duration_seconds histogram\n") &&
		      strstr(page, "rnfsd_rpc_duration_seconds_bucket{program=\"nfs\",version=\"3\","
				   "procedure=\"GETATTR\",le=\"+Inf\"}"),
	      "GETATTR's latency is a histogram with a +Inf bucket");
	CHECK(sample(page, "rnfsd_connections{transport=\"tcp\"}") >= 0, "connections per transport");
	long long sys1 = sample(page, "rnfsd_rpc_calls_by_flavor_total{flavor=\"sys\"}");
	CHECK(sys0 >= 0 && sys1 - sys0 >= CALLS && sample(page, "rnfsd_rpc_calls_by_flavor_total{flavor=\"krb5p\"}") == 0 &&
		      sample(page, "rnfsd_gss_contexts") == 0,
	      "calls by flavor: sys moved by the AUTH_SYS calls at least (%lld -> %lld), krb5p 0; no GSS context",
	      sys0, sys1);
	CHECK(sample(page, "rnfsd_nfs4_operations_total{operation=\"PUTROOTFH\"}") > 0 &&
		      sample(page, "rnfsd_nfs4_operation_duration_seconds_count{operation=\"PUTROOTFH\"}") > 0,
	      "NFSv4 operations are counted, with latency (PUTROOTFH)");
	CHECK(sample(page, "rnfsd_nfs4_clients") >= 0 && sample(page, "rnfsd_nfs4_opens") >= 0 &&
		      sample(page, "rnfsd_nfs4_delegation_recalls_total") >= 0 &&
		      sample(page, "rnfsd_grace_period_active{protocol=\"nfs4\"}") >= 0 &&
		      sample(page, "rnfsd_nlm_locks") >= 0,
	      "NFSv4 state, grace period and NLM gauges are on the page");
	CHECK(sample(page, "rnfsd_process_open_fds") > 0 && sample(page, "rnfsd_process_resident_memory_bytes") > 0,
	      "the process's descriptors and resident memory");
	CHECK(strstr(slurp(hx_path(&env, "scrape2.txt.hdr")), "text/plain; version=0.0.4") != NULL,
	      "Content-Type is the text format 0.0.4");
	CHECK_EQ(scrape("/nope", hx_path(&env, "nope.txt")), 404, "another path answers 404");

	hx_section("promtool check metrics");
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s > %s 2>&1", p2, hx_path(&env, "promtool.txt"));
	int st = sh(cmd);
	if (!CHECK_EQ(st, 0, "promtool check metrics accepts the page"))
		fprintf(stderr, "%s\n", slurp(hx_path(&env, "promtool.txt")));
	*after_out = after;
}

/* The value of the sample line that starts with series, as a double, or -1. */
static double sample_f(const char *page, const char *series)
{
	size_t n = strlen(series);

	for (const char *l = page; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, series, n) && l[n] == ' ')
			return atof(l + n + 1);
	return -1;
}

/* The utilisation and transport byte samples of a page. */
struct usage {
	double loop_s, workers_s;
	long long rx, tx, busy, idle, queue;
};

static struct usage usage_of(const char *page)
{
	return (struct usage){
		sample_f(page, "rnfsd_loop_busy_seconds_total{loop=\"main\"}"),
		sample_f(page, "rnfsd_worker_busy_seconds_total{pool=\"rpc\"}"),
		sample(page, "rnfsd_transport_received_bytes_total{transport=\"tcp\"}"),
		sample(page, "rnfsd_transport_sent_bytes_total{transport=\"tcp\"}"),
		sample(page, "rnfsd_workers{pool=\"rpc\",state=\"busy\"}"),
		sample(page, "rnfsd_workers{pool=\"rpc\",state=\"idle\"}"),
		sample(page, "rnfsd_worker_queue_depth{pool=\"rpc\"}"),
	};
}

/* Around an NFSv3 WRITE and READ of 4096 bytes (and a CREATE, on workers). */
static void check_usage(const struct usage *a, const struct usage *b)
{
	CHECK(b->rx - a->rx >= 4096, "TCP received bytes moved by the WRITE at least (%lld)", b->rx - a->rx);
	CHECK(b->tx - a->tx >= 4096, "TCP sent bytes moved by the READ at least (%lld)", b->tx - a->tx);
	CHECK(a->loop_s > 0 && b->loop_s >= a->loop_s, "the loop's busy seconds count up (%.3f -> %.3f)", a->loop_s,
	      b->loop_s);
	CHECK(b->workers_s > a->workers_s, "the workers' busy seconds moved (%.6f -> %.6f)", a->workers_s,
	      b->workers_s);
	CHECK(b->busy >= 0 && b->idle >= 0 && b->busy + b->idle == 4, "busy + idle workers = the 4 threads (%lld + %lld)",
	      b->busy, b->idle);
	CHECK(b->queue >= 0, "the queue depth gauge is there (%lld)", b->queue);
}

/* rnfsd_export_<what>_total{export="path"} on page, or -1. */
static long long export_sample(const char *page, const char *what, const char *path)
{
	char series[PATH_MAX + 96];

	snprintf(series, sizeof(series), "rnfsd_export_%s_total{export=\"%s\"}", what, path);
	return sample(page, series);
}

/* Scrape into name: the page. */
static const char *scrape_page(const char *name)
{
	CHECK_EQ(scrape("/metrics", hx_path(&env, name)), 200, "GET /metrics (%s)", name);
	return slurp(hx_path(&env, name));
}

/* The four counters of both exports, in that order: a's calls, errors, read, write, then b's. */
static void export_counters(const char *page, long long v[8])
{
	static const char *const what[] = { "calls", "errors", "read_bytes", "write_bytes" };

	for (unsigned i = 0; i < 4; i++) {
		v[i] = export_sample(page, what[i], env.export_dir);
		v[4 + i] = export_sample(page, what[i], b_path);
	}
}

/* NFSv3 WRITE and READ of 4096 bytes on the first export. */
static void v3_io(void)
{
	static char data[4096];
	struct rpc_context *rpc;
	struct hx_fh root, fh;
	READ3res rr;

	if (hx_open_export(&env, env.export_dir, -1, -1, &rpc, &root) != 0)
		return;
	memset(data, 'a', sizeof(data));
	CHECK_NFS(hx3_create(rpc, &root, "io3", 0644, &fh), NFS3_OK, "CREATE io3");
	CHECK_NFS(hx3_write(rpc, &fh, 0, data, sizeof(data), 2, NULL), NFS3_OK, "WRITE 4096 bytes");
	CHECK_NFS(hx3_read(rpc, &fh, 0, sizeof(data), &rr), NFS3_OK, "READ them");
	hx_rpc_close(rpc);
}

/* NFSv4.1 OPEN, WRITE and READ of 3000 bytes on the second export. */
static void v4_io(void)
{
	static char data[3000];
	struct n4_client k;
	struct n4_sid sid;
	uint8_t fh[128];
	uint32_t fh_len = 0, got = 0;

	memset(data, 'b', sizeof(data));
	if (!CHECK(n4_start(&k, env.port, 1, "prom-export") == 0, "an NFSv4.1 client"))
		return;
	CHECK_EQ(n4_open(&k, b_path, "io4", true, N4_ACCESS_BOTH, 0, "o", NULL, &sid, fh, &fh_len), 0, "OPEN io4");
	CHECK_EQ(n4_write(&k, fh, fh_len, &sid, 0, data, sizeof(data)), 0, "WRITE 3000 bytes");
	CHECK_EQ(n4_read(&k, fh, fh_len, &sid, 0, sizeof(data), NULL, &got), 0, "READ them");
	CHECK_EQ(got, sizeof(data), "3000 bytes read");
	n4_client_close(&k);
}

/* NLM4 TEST of [0, 10) of the file fh over UDP: its nlm4_stats, or -1. */
static int nlm_test_udp(const uint8_t *fh, uint32_t fh_len)
{
	struct raw_conn c;
	int st;

	if (raw_udp_connect(&c, hx_udp_port(&env), false) != 0)
		return -1;
	st = raw_nlm4_lock(&c, 91, 1, fh, fh_len, "prom-test", 1, 0, 10);
	raw_close(&c);
	return st;
}

/* PUTFH fh, then the operations in ops (n of them): the COMPOUND's status. */
static int v42_call(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, struct xb *ops, uint32_t n)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 1 + n, fh, fh_len);
	xb_raw(&a, ops->p, ops->len);
	xb_free(ops);
	st = n4_call(k, &a, &r);
	raw_reply_free(&r);
	return st;
}

/* NFSv4.2 READ_PLUS of io4's 3000 bytes (sid, fh) and a synchronous COPY of them to io4c (dsid, dfh). */
static void v42_io(struct n4_client *k, const struct n4_sid *sid, const uint8_t *fh, uint32_t fh_len,
		   const struct n4_sid *dsid, const uint8_t *dfh, uint32_t dfh_len)
{
	struct xb o;

	xb_init(&o);
	xb_u32(&o, N4_READ_PLUS);
	n4_xb_sid(&o, sid);
	xb_u64(&o, 0);
	xb_u32(&o, 3000);
	CHECK_EQ(v42_call(k, fh, fh_len, &o, 1), 0, "READ_PLUS of io4");
	xb_init(&o);
	xb_u32(&o, N4_SAVEFH);
	n4_xb_putfh(&o, dfh, dfh_len);
	xb_u32(&o, N4_COPY);
	n4_xb_sid(&o, sid);
	n4_xb_sid(&o, dsid);
	xb_u64(&o, 0), xb_u64(&o, 0), xb_u64(&o, 3000);
	xb_u32(&o, 1), xb_u32(&o, 1), xb_u32(&o, 0); /* consecutive, synchronous, no source servers */
	CHECK_EQ(v42_call(k, fh, fh_len, &o, 3), 0, "COPY io4 -> io4c, synchronous");
}

/* A MNT (first export) and an NLM TEST over UDP (second) count one call each on their export and
 * move UDP's bytes; READ_PLUS and COPY the second's read and written bytes (COPY: the destination's). */
static void check_export_more(void)
{
	long long v0[8], v1[8], v2[8], urx, utx;
	struct rpc_context *m;
	struct n4_client k;
	struct n4_sid sid, dsid;
	uint8_t fh[128], dfh[128];
	uint32_t fh_len = 0, dfh_len = 0;
	const char *page;

	if (!CHECK(n4_start(&k, env.port, 2, "prom-v42") == 0, "an NFSv4.2 client"))
		return;
	CHECK_EQ(n4_open(&k, b_path, "io4", false, N4_ACCESS_READ, 0, "o", NULL, &sid, fh, &fh_len), 0, "OPEN io4");
	CHECK_EQ(n4_open(&k, b_path, "io4c", true, N4_ACCESS_BOTH, 0, "o", NULL, &dsid, dfh, &dfh_len), 0,
		 "OPEN io4c");
	page = scrape_page("more0.txt");
	export_counters(page, v0);
	urx = sample(page, "rnfsd_transport_received_bytes_total{transport=\"udp\"}");
	utx = sample(page, "rnfsd_transport_sent_bytes_total{transport=\"udp\"}");
	m = hx_rpc_connect(&env, MOUNT_PROGRAM, MOUNT_V3, -1, -1);
	CHECK(m && hx_mnt(m, env.export_dir, NULL) == MNT3_OK, "MNT of the first export");
	hx_rpc_close(m);
	CHECK_EQ(nlm_test_udp(fh, fh_len), 0, "NLM TEST of io4 over UDP: granted");
	page = scrape_page("more1.txt");
	export_counters(page, v1);
	CHECK_EQ(v1[0] - v0[0], 1, "MOUNT: the first export's calls moved by the MNT");
	CHECK_EQ(v1[4] - v0[4], 1, "NLM: the second export's calls moved by the TEST");
	CHECK(urx >= 0 && utx >= 0, "UDP has byte series (%lld, %lld)", urx, utx);
	CHECK(sample(page, "rnfsd_transport_received_bytes_total{transport=\"udp\"}") > urx &&
		      sample(page, "rnfsd_transport_sent_bytes_total{transport=\"udp\"}") > utx,
	      "and the NLM TEST over UDP moved them");
	v42_io(&k, &sid, fh, fh_len, &dsid, dfh, dfh_len);
	export_counters(scrape_page("more2.txt"), v2);
	CHECK_EQ(v2[6] - v1[6], 3000, "READ_PLUS: the second export's read bytes moved by 3000");
	CHECK_EQ(v2[7] - v1[7], 3000, "COPY: its written bytes by 3000");
	CHECK(v2[2] == v1[2] && v2[3] == v1[3], "the first export's bytes did not move");
	n4_client_close(&k);
}

static void check_export_counters(void)
{
	long long v0[8], v1[8], v2[8];
	struct usage u0, u1;
	char out[16384]; /* rnfsctl stats: with HX_LOOPS=4 (the tsan setup) the loops table comes before the exports */

	hx_section("per-export counters, utilisation, bytes per transport");
	export_counters(scrape_page("exp0.txt"), v0);
	u0 = usage_of(slurp(hx_path(&env, "exp0.txt")));
	CHECK(v0[0] >= 0 && v0[4] >= 0, "both exports have series (%lld, %lld calls)", v0[0], v0[4]);
	v3_io();
	export_counters(scrape_page("exp1.txt"), v1);
	u1 = usage_of(slurp(hx_path(&env, "exp1.txt")));
	check_usage(&u0, &u1);
	CHECK_EQ(v1[3] - v0[3], 4096, "NFSv3: the first export's written bytes moved by 4096");
	CHECK_EQ(v1[2] - v0[2], 4096, "and its read bytes by 4096");
	CHECK(v1[0] - v0[0] >= 3, "and its calls by CREATE, WRITE, READ at least (%lld)", v1[0] - v0[0]);
	CHECK(v1[4] == v0[4] && v1[6] == v0[6] && v1[7] == v0[7], "the second export's counters did not move");
	v4_io();
	export_counters(scrape_page("exp2.txt"), v2);
	CHECK_EQ(v2[7] - v1[7], 3000, "NFSv4.1: the second export's written bytes moved by 3000");
	CHECK_EQ(v2[6] - v1[6], 3000, "and its read bytes by 3000");
	CHECK(v2[4] - v1[4] >= 3, "and its calls by the operations on it (%lld)", v2[4] - v1[4]);
	CHECK(v2[2] == v1[2] && v2[3] == v1[3], "the first export's bytes did not move");
	check_export_more();
	export_counters(scrape_page("exp2b.txt"), v2);
	CHECK_EQ(hx_rnfsctl(&env, -1, out, sizeof(out), (const char *const[]){ "stats", NULL }), 0, "rnfsctl stats");
	CHECK(strstr(out, "EXPORT") && strstr(out, b_path), "rnfsctl stats shows the per-export table");
	CHECK_EQ(hx_rnfsctl(&env, -1, out, sizeof(out), (const char *const[]){ "export", "remove", b_path, NULL }), 0,
		 "rnfsctl export remove the second export");
	const char *page = scrape_page("exp3.txt");
	CHECK(export_sample(page, "calls", b_path) == -1 && !strstr(page, b_path), "its series are gone");
	CHECK(export_sample(page, "calls", env.export_dir) == v2[0], "the first export's stay");
}

/* [stats] prometheus-top-clients = 2: a client from 127.0.0.2 joins 127.0.0.1 on the page. */
static void check_top_clients(void)
{
	struct n4_client k;
	const char *page;
	unsigned seqs = 0;

	hx_section("prometheus-top-clients = 2");
	if (!CHECK(n4_connect_from(&k, env.port, 1, "127.0.0.2") == 0 && n4_setup(&k, "prom-top") == 0,
		   "an NFSv4.1 client from 127.0.0.2"))
		return;
	for (unsigned i = 0; i < 5; i++)
		seqs += n4_sequence(&k) == 0;
	CHECK_EQ(seqs, 5, "5 SEQUENCEs answered");
	page = scrape_page("top.txt");
	CHECK(sample(page, "rnfsd_client_calls_total{client=\"127.0.0.2\"}") >= 8,
	      "its calls are on the page (%lld: set-up and 5 SEQUENCEs)",
	      sample(page, "rnfsd_client_calls_total{client=\"127.0.0.2\"}"));
	CHECK(sample(page, "rnfsd_client_calls_total{client=\"127.0.0.1\"}") >
		      sample(page, "rnfsd_client_calls_total{client=\"127.0.0.2\"}"),
	      "and 127.0.0.1's, the busiest (%lld)", sample(page, "rnfsd_client_calls_total{client=\"127.0.0.1\"}"));
	CHECK(sample(page, "rnfsd_client_received_bytes_total{client=\"127.0.0.2\"}") > 0 &&
		      sample(page, "rnfsd_client_sent_bytes_total{client=\"127.0.0.2\"}") > 0,
	      "with its bytes received and sent");
	CHECK_EQ(count_lines(page, "rnfsd_client_calls_total{"), 2, "two client series, no more");
	n4_client_close(&k);
}

/* Start prometheus scraping rnfsd every second; its pid, or -1. */
static pid_t prometheus_start(uint16_t web_port)
{
	const char *yml = hx_path(&env, "prometheus.yml");
	char cfg[128], data[PATH_MAX + 32], web[64];
	FILE *f = fopen(yml, "w");
	pid_t pid;

	if (!f)
		return -1;
	fprintf(f, "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
		   "scrape_configs:\n  - job_name: rnfsd\n    static_configs:\n      - targets: ['127.0.0.1:%u']\n",
		prom_port);
	fclose(f);
	snprintf(cfg, sizeof(cfg), "--config.file=%s", yml);
	snprintf(data, sizeof(data), "--storage.tsdb.path=%s", hx_path(&env, "prometheus-data"));
	snprintf(web, sizeof(web), "--web.listen-address=127.0.0.1:%u", web_port);
	pid = fork();
	if (pid == 0) {
		FILE *log = freopen(hx_path(&env, "prometheus.log"), "w", stdout);

		(void)log;
		dup2(STDOUT_FILENO, STDERR_FILENO);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execlp("prometheus", "prometheus", cfg, data, web, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* The value of the API's answer for query (the first sample), or -1. */
static long long prometheus_query(uint16_t web_port, const char *query)
{
	char cmd[1024];
	const char *out = hx_path(&env, "query.json"), *v;

	snprintf(cmd, sizeof(cmd), "curl -sS --max-time 5 -G -o %s --data-urlencode 'query=%s' "
		 "http://127.0.0.1:%u/api/v1/query 2>/dev/null", out, query, web_port);
	if (sh(cmd) != 0)
		return -1;
	v = strstr(slurp(out), "\"value\":[");
	v = v ? strstr(v, ",\"") : NULL;
	return v ? atoll(v + 2) : -1;
}

static void check_prometheus(long long want)
{
	uint16_t web_port = hx_free_port();
	pid_t pid;
	long long got = -1;
	double t0 = hx_now();

	hx_section("a real Prometheus server scrapes rnfsd every second");
	pid = prometheus_start(web_port);
	if (!CHECK(pid > 0, "prometheus started"))
		return;
	/* Bounded polling: the server starts, scrapes, and the sample becomes queryable. */
	while (hx_now() - t0 < PROM_WAIT_S && got < want) {
		usleep(500 * 1000);
		got = prometheus_query(web_port, "rnfsd_rpc_calls_total{version=\"3\",procedure=\"GETATTR\"}");
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			pid = -1;
			break;
		}
	}
	if (!CHECK(got >= want, "Prometheus's /api/v1/query answers the GETATTR counter (%lld, want %lld, %.1f s)",
		   got, want, hx_now() - t0))
		fprintf(stderr, "%s\n", slurp(hx_path(&env, "prometheus.log")));
	got = prometheus_query(web_port, "up{job=\"rnfsd\"}");
	CHECK_EQ(got, 1, "Prometheus's up{job=\"rnfsd\"} is 1 (the page parsed)");
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

/* --check-config refuses more than one address. */
static void check_two_addresses(void)
{
	static char extra[128];
	char cmd[PATH_MAX * 5];

	hx_section("[stats] prometheus takes one address");
	snprintf(extra, sizeof(extra), "[stats]\nprometheus = 127.0.0.1:%u, 127.0.0.1:%u\n", prom_port, prom_port + 1);
	env.rnfsd_extra = extra;
	hx_write_config(&env);
	snprintf(cmd, sizeof(cmd), "%s --check-config -c %s -e %s > %s 2>&1", env.exe, env.conf_path,
		 env.exports_path, hx_path(&env, "check.txt"));
	CHECK_EQ(sh(cmd), 1, "rnfsd --check-config exits 1");
	CHECK(strstr(slurp(hx_path(&env, "check.txt")), "prometheus takes one") != NULL, "and says why");
}

/* A build without libmicrohttpd: start-up refuses [stats] prometheus and says why. */
static int check_not_built(void)
{
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	env.rnfsd_extra = "[stats]\nprometheus = 127.0.0.1:9587\n";
	hx_write_config(&env);
	CHECK_EQ(hx_daemon_run_to_exit(&env, 10), 1, "rnfsd refuses to start with [stats] prometheus");
	CHECK(hx_log_count(&env, "built without libmicrohttpd") == 1, "and says it was built without libmicrohttpd");
	hx_env_release(&env);
	return hx_end();
}

int main(int argc, char **argv)
{
	static char extra[256];
	long long after = -1;

	hx_begin("prometheus", argc, argv);
	if (!HAVE_MICROHTTPD)
		return check_not_built();
	if (!have("curl") || !have("promtool") || !have("prometheus"))
		hx_skip("curl, promtool or prometheus missing (Debian: apt-get install curl prometheus)");
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	prom_port = hx_free_port();
	snprintf(extra, sizeof(extra), "[stats]\nprometheus = 127.0.0.1:%u\nprometheus-top-clients = 2\n", prom_port);
	env.rnfsd_extra = extra;
	snprintf(b_path, sizeof(b_path), "%s", hx_path(&env, "exportB"));
	mkdir(b_path, 0755);
	if (!CHECK(hx_write_config(&env) == 0, "rnfsd.conf with [stats] prometheus") ||
	    hx_write_exports(&env, "%s 127.0.0.1(rw,no_root_squash,insecure)\n%s 127.0.0.1(rw,no_root_squash,insecure)\n",
			     env.export_dir, b_path) != 0 ||
	    hx_daemon_start(&env) != 0)
		return hx_end();
	check_scrapes(&after);
	/* The line is logged once the page serves, which may be after the NFS port answers: waited for. */
	for (int i = 0; i < 100 && hx_log_count(&env, "Prometheus metrics on") == 0; i++)
		usleep(100 * 1000);
	CHECK(hx_log_count(&env, "Prometheus metrics on") == 1, "the daemon says where the page is");
	if (after > 0)
		check_prometheus(after);
	if (getenv("RNFSCTL"))
		check_export_counters();
	check_top_clients();
	hx_daemon_stop(&env);
	check_two_addresses();
	hx_env_release(&env);
	return hx_end();
}
