/*
 * test_ops_stats.c - core/stats.c, core/json.c and daemon/stats_server.c: the latency histogram,
 * the connection registry, the JSON writer, the JSON document with the sections higher layers add
 * (NFSv4's, nfs/v4/compound/nfs4_stats.c; RPC-over-RDMA's, transport/rdma_stats.c; the daemon's
 * "resources"), the same sections' Prometheus writers (test_prom_sections: no client address on the
 * page, RDMA counters kept across a closed connection), a pNFS data server's counters (test_pnfs_ds), and the real UNIX socket served from a real loop (read back raw and through the
 * real rnfsctl binary, whose path comes in $RNFSCTL).
 *
 * The procedure table and NFSv4's numbers here are test input given through stats_sources and
 * nfs4_stats_sources, the same hooks main uses to connect the live counters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/loop.h"
#include "daemon/stats_server.h"
#include "nfs/common/nfs_common.h"
#include "nfs/v4/compound/nfs4_stats.h"
#include "transport/rdma_stats.h"

/* ---- histogram ---- */

static void test_hist_buckets(void **state)
{
	(void)state;
	uint64_t prev = 0;
	for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
		uint64_t lo = stats_hist_bucket_lower(i);
		if (i)
			assert_true(lo > prev);
		assert_int_equal(stats_hist_bucket(lo), i);
		if (i + 1 < STATS_HIST_BUCKETS)
			assert_int_equal(stats_hist_bucket(stats_hist_bucket_lower(i + 1) - 1), i);
		/* Bucket width is at most a quarter of its lower bound (beyond the linear start). */
		if (i >= 4 && i + 1 < STATS_HIST_BUCKETS)
			assert_true(stats_hist_bucket_lower(i + 1) - lo <= lo / 4);
		prev = lo;
	}
	assert_int_equal(stats_hist_bucket(UINT64_MAX), STATS_HIST_BUCKETS - 1);
	assert_int_equal(stats_hist_bucket(0), 0);
}

static void test_hist_quantile(void **state)
{
	(void)state;
	static struct stats_hist h;

	assert_int_equal(stats_hist_quantile(&h, 0.99), 0);
	for (int i = 0; i < 99; i++)
		stats_hist_record(&h, 10000); /* 10 us */
	stats_hist_record(&h, 5000000);       /* 5 ms */
	uint64_t p99 = stats_hist_quantile(&h, 0.99);
	assert_true(p99 >= 10000 && p99 < 12500);
	uint64_t p100 = stats_hist_quantile(&h, 1.0);
	assert_true(p100 >= 5000000 && p100 < 6250000);

	/* One more slow call: now more than 1% are slow, so p99 is slow. */
	stats_hist_record(&h, 5000000);
	p99 = stats_hist_quantile(&h, 0.99);
	assert_true(p99 >= 5000000);
}

/* ---- registry ---- */

static void test_registry(void **state)
{
	(void)state;
	struct stats_conn a = {0}, b = {0}, c = {0};
	unsigned total, tcp, rdma;

	stats_conn_register(&a, "tcp", "192.0.2.1:700", NULL);
	stats_conn_register(&b, "rdma", "192.0.2.2:33000", NULL);
	stats_conn_register(&c, "tcp", "[2001:db8::1]:800", NULL);
	stats_conn_counts(&total, &tcp, &rdma);
	assert_int_equal(total, 3);
	assert_int_equal(tcp, 2);
	assert_int_equal(rdma, 1);
	stats_conn_unregister(&b);
	stats_conn_unregister(&b); /* no-op */
	stats_conn_counts(&total, &tcp, &rdma);
	assert_int_equal(total, 2);
	assert_int_equal(rdma, 0);
	stats_conn_unregister(&a);
	stats_conn_unregister(&c);
	stats_conn_counts(&total, NULL, NULL);
	assert_int_equal(total, 0);
}

/* ---- the document ---- */

static struct stats_hist getattr_hist;

static void fake_procs(stats_proc_cb cb, void *arg)
{
	const struct stats_proc procs[] = {
		{"nfs", 3, "NULL", 0, 0, 0, NULL},
		{"nfs", 3, "GETATTR", 100, 2, 100 * 20000, &getattr_hist},
		{"mount", 3, "MNT", 1, 1, 30000, NULL},
	};
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		cb(&procs[i], arg);
}

static unsigned fake_exports(void)
{
	return 2;
}

/* The JSON document, or with render_fn stats_render_prom the Prometheus page. */
static char *render_with(int (*render_fn)(FILE *f))
{
	char *doc = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&doc, &len);
	assert_non_null(f);
	assert_int_equal(render_fn(f), 0);
	fclose(f);
	return doc;
}

static char *render(void)
{
	return render_with(stats_render_json);
}

static void fill_conns(struct stats_conn *t, struct rdma_stats_conn *r)
{
	memset(t, 0, sizeof(*t));
	memset(r, 0, sizeof(*r));
	stats_conn_register(t, "tcp", "127.0.0.1:812", NULL);
	stats_add(&t->calls, 42);
	stats_add(&t->garbage_args, 1);
	stats_add(&t->rx_bytes, 1000);
	stats_add(&t->tx_bytes, 2000);
	rdma_stats_conn_register(r, "192.0.2.9:\"odd\\name");
	stats_set(&r->rdma_version, 1);
	stats_set(&r->credits, 128);
	stats_set(&r->inline_recv, 4096);
	stats_set(&r->inline_send, 4096);
	stats_add(&r->base.calls, 7);
	stats_add(&r->rdma_reads, 3);
	stats_add(&r->rdma_read_bytes, 3 << 20);
	stats_add(&r->rdma_writes, 5);
	stats_add(&r->rdma_write_bytes, 5 << 20);
	stats_add(&r->send_inv, 4);
	stats_add(&r->err_chunk, 1);
	stats_add(&r->err_vers, 2);
}

static void fake_inline(uint64_t *calls, uint64_t *paused)
{
	*calls = 77;
	*paused = 2;
}

static void test_json(void **state)
{
	(void)state;
	struct stats_conn t;
	struct rdma_stats_conn r;
	const struct stats_sources src = {.exports_count = fake_exports, .procs_foreach = fake_procs,
					  .inline_counts = fake_inline};

	memset(&getattr_hist, 0, sizeof(getattr_hist));
	for (int i = 0; i < 100; i++)
		stats_hist_record(&getattr_hist, 20000);
	stats_set_sources(&src);
	fill_conns(&t, &r);

	char *doc = render();
	assert_non_null(strstr(doc, "\"exports\": 2,"));
	assert_non_null(strstr(doc, "\"procedure\": \"MNT\", \"calls\": 1, \"errors\": 1, "
				    "\"latency_mean_us\": 30.0, \"latency_p99_us\": null}"));
	assert_non_null(strstr(doc, "{\"program\": \"nfs\", \"version\": 3, \"procedure\": \"GETATTR\", "
				    "\"calls\": 100, \"errors\": 2, \"latency_mean_us\": 20.0, \"latency_p99_us\": "));
	assert_non_null(strstr(doc, "\"totals\": {\"calls\": 101, \"errors\": 3, \"connections\": 2, \"tcp\": 1, \"rdma\": 1, "
				    "\"inline_calls\": 77, \"inline_paused\": 2}"));
	assert_non_null(strstr(doc, "\"peer\": \"127.0.0.1:812\", \"transport\": \"tcp\""));
	assert_non_null(strstr(doc, "\"calls\": 42, \"garbage_args\": 1, \"rx_bytes\": 1000, \"tx_bytes\": 2000}"));
	/* The odd peer name is escaped, not pasted. */
	assert_non_null(strstr(doc, "\"peer\": \"192.0.2.9:\\\"odd\\\\name\""));
	assert_non_null(strstr(doc, "\"rdma_version\": 1, \"credits\": 128, \"inline_recv\": 4096, \"inline_send\": 4096"));
	assert_non_null(strstr(doc, "\"rdma_reads\": 3, \"rdma_read_bytes\": 3145728, \"rdma_writes\": 5, "
				    "\"rdma_write_bytes\": 5242880, \"send_invalidate\": 4"));
	assert_non_null(strstr(doc, "\"err_chunk\": 1, \"err_vers\": 2"));
	free(doc);

	char line[256];
	stats_status_line(line, sizeof(line));
	assert_string_equal(line, "2 exports, 2 connections (1 tcp, 1 rdma), 101 calls");

	stats_conn_unregister(&t);
	stats_conn_unregister(&r.base);
	const struct stats_sources none = {0};
	stats_set_sources(&none);
	doc = render();
	assert_non_null(strstr(doc, "\"procedures\": [],"));
	/* A closed connection's bytes stay in its transport's totals (counters never go back). */
	uint64_t rx, tx;
	stats_transport_bytes("tcp", &rx, &tx);
	assert_true(rx >= 1000 && tx >= 2000);
	assert_non_null(strstr(doc, "\"transport_bytes\": {\"tcp\": {\"received\": "));
	assert_non_null(strstr(doc, "\"usage\": {\"loop_busy_s\": "));
	assert_non_null(strstr(doc, "\"connections\": []"));
	free(doc);
}

/* ---- the writer and the section table ---- */

static void fake_section(struct json_out *j, const char *name, void *arg)
{
	json_arr_open(j, name);
	json_obj_open(j, NULL);
	json_str(j, "s", arg);
	json_i64(j, "neg", -3);
	json_fixed(j, "f", 2.25, 1);
	json_null(j, "n");
	json_arr_open(j, "inner");
	json_arr_close(j);
	json_obj_close(j);
	json_u64(j, NULL, 7);
	json_arr_close(j);
}

static void test_json_writer(void **state)
{
	(void)state;
	char *doc = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&doc, &len);
	struct json_out j;

	assert_non_null(f);
	json_begin(&j, f);
	json_u64(&j, "a", 1);
	json_obj_open(&j, "o");
	json_str(&j, "k", "q\"b\\c\n");
	json_obj_close(&j);
	json_arr_open(&j, "empty");
	json_arr_close(&j);
	fake_section(&j, "list", "x");
	json_obj_open(&j, "left_open"); /* json_end closes what is left */
	assert_int_equal(json_end(&j), 0);
	fclose(f);
	assert_string_equal(doc, "{\n  \"a\": 1,\n  \"o\": {\"k\": \"q\\\"b\\\\c\\u000a\"},\n  \"empty\": [],\n"
				 "  \"list\": [\n    {\"s\": \"x\", \"neg\": -3, \"f\": 2.2, \"n\": null, \"inner\": []},\n    7\n  ],\n"
				 "  \"left_open\": {}\n}\n");
	free(doc);
}

static void test_sections(void **state)
{
	(void)state;
	const struct stats_sources none = {0};
	unsigned added = 0;

	stats_set_sources(&none);
	stats_sections_clear();
	assert_int_equal(stats_section_add(STATS_PLACE_TRANSPORT, "late", fake_section, "t"), 0);
	assert_int_equal(stats_section_add(STATS_PLACE_STATE, "early", fake_section, "s"), 0);
	char *doc = render();
	const char *early = strstr(doc, "\"early\": [\n    {\"s\": \"s\"");
	const char *late = strstr(doc, "\"late\": [\n    {\"s\": \"t\"");
	assert_true(early && late);
	assert_true(strstr(doc, "\"procedures\": []") < early && early < strstr(doc, "\"totals\""));
	assert_true(strstr(doc, "\"totals\"") < late && late < strstr(doc, "\"connections\": []"));
	free(doc);
	while (stats_section_add(STATS_PLACE_STATE, "more", fake_section, "m") == 0)
		added++;
	assert_int_equal(added, STATS_SECTIONS_MAX - 2); /* then full: -1, nothing overwritten */
	stats_sections_clear();
	doc = render();
	assert_null(strstr(doc, "early"));
	free(doc);
}

/* NFSv4: per-operation entries beside the procedures (not in the totals) and the state object. */
static void fake_nfs4_ops(stats_proc_cb cb, void *arg)
{
	const struct stats_proc p = {"nfs", 4, "SECINFO_NO_NAME", 5, 1, 5 * 4000, NULL};
	cb(&p, arg);
}

static void fake_nfs4_state(struct nfs4_stats_snap *n)
{
	*n = (struct nfs4_stats_snap){ .clients = 3, .sessions = 2, .opens = 7, .locks = 1, .recalls = 5, .returned = 4,
				  .revoked = 1, .recorded_clients = 4,
				  .grace_left_ms = 12500, .reclaims = 6, .grace_refused = 8, .no_grace = 9,
				  .open_files = 10, .open_owners = 11, .lock_owners = 12, .open_files_max = 13,
				  .opens_per_client_max = 14, .lock_owners_per_client_max = 15,
				  .reply_cache_bytes = 4096, .reply_cache_limit = 1 << 20, .clients_refused = 2,
				  .sessions_reclaimed = 1, .recorded_clients_max = 32,
				  .dl = { .kind = { 2, 1, 1, 3 }, .recalls_by = { 3, 1, 1 }, .dir_recalls_by = { 1 },
					  .revoked_unanswered = 1 },
				  .cb_notify_sent = 4 };
}

static void fake_resources(struct stats_resources *r)
{
	*r = (struct stats_resources){ .fds = 20, .fd_limit = 1024, .fd_reserve = 512, .lock_descriptions = 3,
				       .lock_descriptions_max = 224, .lock_shared_descriptions = 1,
				       .lock_shared_pieces = 4, .uring_personalities = 9,
				       .uring_personalities_max = 256, .handle_cache = 40, .handle_cache_max = 32768,
				       .handle_cache_hits = 400, .handle_cache_misses = 41, .nlm_owners = 2, .nlm_held = 1,
				       .nlm_per_host_max = 56, .gss_contexts = 5, .gss_contexts_max = 4096,
				       .gss_evictions = 7 };
}

static const struct stats_sources nfs4_src = {.exports_count = fake_exports, .procs_foreach = fake_procs};
static void fake_nfs4_cbs(nfs4_stats_cb_fn cb, void *arg)
{
	const struct nfs4_stats_cb c = {0x1234abcdull, 1, "up", "tcp", 9, 8, 1, "sys"};
	cb(&c, arg);
}

static void fake_nfs4_dss(nfs4_stats_ds_fn cb, void *arg)
{
	struct nfs4_stats_ds d = { .addr = "192.0.2.11", .port = 2049, .transport = "tcp", .layouts = 9, .errors = 2,
				   .unavailable = true };

	cb(&d, arg);
}

static const struct nfs4_stats_sources nfs4_fake = {.ops_foreach = fake_nfs4_ops, .state = fake_nfs4_state,
						    .cb_foreach = fake_nfs4_cbs, .ds_foreach = fake_nfs4_dss};

/* What main does with NFSv4 served: the sources, NFSv4's sections, the daemon's, RDMA's. */
static void serve_nfs4(void)
{
	stats_set_sources(&nfs4_src);
	stats_sections_clear();
	assert_int_equal(nfs4_stats_sections_add(&nfs4_fake), 0);
	assert_int_equal(stats_server_resources_add(fake_resources), 0);
	assert_int_equal(rdma_stats_sections_add(), 0);
}

static void serve_none(void)
{
	const struct stats_sources none = {0};

	stats_set_sources(&none);
	stats_sections_clear();
}

/* The sections' Prometheus writers: NFSv4's, the daemon's resources, RDMA's (whose counters outlive a
 * closed connection). */
static void test_prom_sections(void **state)
{
	struct stats_conn t;
	struct rdma_stats_conn r;
	char *page;

	(void)state;
	serve_nfs4();
	fill_conns(&t, &r);
	page = render_with(stats_render_prom);
	assert_non_null(strstr(page, "rnfsd_nfs4_operations_total{operation=\"SECINFO_NO_NAME\"} 5\n"));
	assert_non_null(strstr(page, "rnfsd_nfs4_operation_errors_total{operation=\"SECINFO_NO_NAME\"} 1\n"));
	assert_non_null(strstr(page, "# TYPE rnfsd_nfs4_clients gauge\nrnfsd_nfs4_clients 3\n"));
	assert_non_null(strstr(page, "rnfsd_nfs4_sessions 2\n"));
	assert_non_null(strstr(page, "rnfsd_nfs4_opens 7\n"));
	/* issue 26 item 7: delegations by kind, recalls by cause (every label, 0s too), revocations by reason */
	assert_non_null(strstr(page, "# TYPE rnfsd_nfs4_delegations gauge\nrnfsd_nfs4_delegations{kind=\"read\"} 2\n"
				     "rnfsd_nfs4_delegations{kind=\"write\"} 1\nrnfsd_nfs4_delegations{kind=\"attribute\"} 1\n"
				     "rnfsd_nfs4_delegations{kind=\"directory\"} 3\n#"));
	assert_non_null(strstr(page, "# TYPE rnfsd_nfs4_delegation_recalls_total counter\n"
				     "rnfsd_nfs4_delegation_recalls_total{cause=\"nfs4\"} 3\n"
				     "rnfsd_nfs4_delegation_recalls_total{cause=\"nfs3\"} 1\n"
				     "rnfsd_nfs4_delegation_recalls_total{cause=\"nlm\"} 1\n"
				     "rnfsd_nfs4_delegation_recalls_total{cause=\"local_open\"} 0\n"
				     "rnfsd_nfs4_delegation_recalls_total{cause=\"local_lock\"} 0\n"
				     "rnfsd_nfs4_delegation_recalls_total{cause=\"ceph\"} 0\n"
				     "rnfsd_nfs4_delegation_recalls_total{cause=\"notify_failed\"} 0\n#"));
	assert_non_null(strstr(page, "# TYPE rnfsd_nfs4_delegation_revocations_total counter\n"
				     "rnfsd_nfs4_delegation_revocations_total{reason=\"unanswered\"} 1\n"
				     "rnfsd_nfs4_delegation_revocations_total{reason=\"admin\"} 0\n"));
	assert_non_null(strstr(page, "# TYPE rnfsd_nfs4_dir_delegations gauge\nrnfsd_nfs4_dir_delegations 0\n"));
	assert_non_null(strstr(page, "# TYPE rnfsd_nfs4_dir_delegation_recalls_total counter\n"
				     "rnfsd_nfs4_dir_delegation_recalls_total{cause=\"nfs4\"} 1\n"));
	assert_non_null(strstr(page, "# TYPE rnfsd_nfs4_cb_notify_total counter\nrnfsd_nfs4_cb_notify_total 4\n"));
	assert_null(strstr(page, "rnfsd_nfs4_delegations 0\n")); /* no unlabelled sample beside the kinds */
	assert_non_null(strstr(page, "# TYPE rnfsd_nfs4_cb_notify_pending gauge\nrnfsd_nfs4_cb_notify_pending 0\n"));
	/* pNFS layout recalls (issue 28) */
	assert_non_null(strstr(page, "# TYPE rnfsd_nfs4_pnfs_layout_recalling gauge\n"));
	assert_non_null(strstr(page, "# TYPE rnfsd_nfs4_pnfs_layout_recalls_total counter\n"));
	assert_non_null(strstr(page, "# TYPE rnfsd_nfs4_pnfs_layout_recalls_returned_total counter\n"));
	assert_non_null(strstr(page, "# TYPE rnfsd_nfs4_pnfs_layouts_revoked_total counter\n"));
	/* per data server: layouts, the errors clients reported, out of new layouts */
	assert_non_null(strstr(page, "rnfsd_nfs4_pnfs_ds_layouts_total{data_server=\"192.0.2.11:2049\"} 9\n"));
	assert_non_null(strstr(page, "rnfsd_nfs4_pnfs_ds_errors_total{data_server=\"192.0.2.11:2049\"} 2\n"));
	assert_non_null(strstr(page, "rnfsd_nfs4_pnfs_ds_unavailable{data_server=\"192.0.2.11:2049\"} 1\n"));
	assert_non_null(strstr(page, "rnfsd_process_open_fds 20\n"));
	assert_non_null(strstr(page, "rnfsd_nlm_locks 1\n"));
	assert_non_null(strstr(page, "rnfsd_handle_cache_entries 40\n"));
	assert_non_null(strstr(page, "rnfsd_handle_cache_hits_total 400\n"));
	assert_non_null(strstr(page, "# TYPE rnfsd_handle_cache_misses_total counter\n"));
	assert_non_null(strstr(page, "rnfsd_gss_contexts 5\n"));
	assert_non_null(strstr(page, "rnfsd_gss_evictions_total 7\n"));
	assert_non_null(strstr(page, "rnfsd_connections{transport=\"rdma\"} 1\n"));
	assert_non_null(strstr(page, "rnfsd_rdma_credits_granted 128\n"));
	assert_non_null(strstr(page, "rnfsd_rdma_read_bytes_total 3145728\n"));
	assert_non_null(strstr(page, "rnfsd_rdma_errors_total{error=\"ERR_CHUNK\"} 1\n"));
	assert_non_null(strstr(page, "rnfsd_rdma_errors_total{error=\"ERR_VERS\"} 2\n"));
	/* No client address on the page (the peer names are in the JSON only). */
	assert_null(strstr(page, "192.0.2.9"));
	assert_null(strstr(page, "127.0.0.1:812"));
	free(page);

	/* Closed: the credits go, the counters stay; a new connection adds to them. */
	rdma_stats_conn_unregister(&r);
	page = render_with(stats_render_prom);
	assert_non_null(strstr(page, "rnfsd_rdma_credits_granted 0\n"));
	assert_non_null(strstr(page, "rnfsd_rdma_errors_total{error=\"ERR_CHUNK\"} 1\n"));
	free(page);
	rdma_stats_conn_register(&r, "192.0.2.10:1");
	stats_add(&r.err_chunk, 1);
	page = render_with(stats_render_prom);
	assert_non_null(strstr(page, "rnfsd_rdma_errors_total{error=\"ERR_CHUNK\"} 2\n"));
	assert_non_null(strstr(page, "rnfsd_rdma_read_bytes_total 3145728\n"));
	free(page);
	rdma_stats_conn_unregister(&r);
	stats_conn_unregister(&t);
	serve_none();
}

/* A pNFS data server's counters (nfs/common/pnfs_ds.c): NFSv3 READ/WRITE/COMMIT on an export with
 * pnfs= count, on a plain one not; in the JSON section "pnfs_ds" and as rnfsd_pnfs_ds_* series. */
static void test_pnfs_ds(void **state)
{
	struct export pcfg = { .pnfs = EXPORT_PNFS_FLEXFILES }, plain_cfg = { .pnfs = EXPORT_PNFS_NONE };
	struct nfs_export pe = { .cfg = &pcfg }, plain = { .cfg = &plain_cfg };
	struct nfs_pnfs_ds_stats s, was;
	char *doc;

	(void)state;
	stats_sections_clear();
	assert_int_equal(nfs_pnfs_ds_section_add(), 0);
	nfs_pnfs_ds_stats(&was);
	nfs_pnfs_ds_count(&pe, NFS_DS_READ, false, 4096);
	nfs_pnfs_ds_count(&pe, NFS_DS_WRITE, false, 100);
	nfs_pnfs_ds_count(&pe, NFS_DS_WRITE, true, 0);
	nfs_pnfs_ds_count(&pe, NFS_DS_COMMIT, false, 0);
	nfs_pnfs_ds_count(&plain, NFS_DS_READ, false, 7);
	nfs_pnfs_ds_count(NULL, NFS_DS_READ, false, 7);
	nfs_pnfs_ds_stats(&s);
	assert_int_equal(s.calls[NFS_DS_READ] - was.calls[NFS_DS_READ], 1);
	assert_int_equal(s.calls[NFS_DS_WRITE] - was.calls[NFS_DS_WRITE], 2);
	assert_int_equal(s.calls[NFS_DS_COMMIT] - was.calls[NFS_DS_COMMIT], 1);
	assert_int_equal(s.errors - was.errors, 1);
	assert_int_equal(s.read_bytes - was.read_bytes, 4096);
	assert_int_equal(s.write_bytes - was.write_bytes, 100);
	doc = render();
	assert_non_null(strstr(doc, "\"pnfs_ds\": {\"reads\": 1, \"writes\": 2, \"commits\": 1, \"errors\": 1, "
				    "\"read_bytes\": 4096, \"write_bytes\": 100}"));
	free(doc);
	doc = render_with(stats_render_prom);
	assert_non_null(strstr(doc, "# TYPE rnfsd_pnfs_ds_calls_total counter\n"
				    "rnfsd_pnfs_ds_calls_total{op=\"read\"} 1\n"
				    "rnfsd_pnfs_ds_calls_total{op=\"write\"} 2\n"
				    "rnfsd_pnfs_ds_calls_total{op=\"commit\"} 1\n"));
	assert_non_null(strstr(doc, "rnfsd_pnfs_ds_errors_total 1\n"));
	assert_non_null(strstr(doc, "rnfsd_pnfs_ds_read_bytes_total 4096\n"));
	assert_non_null(strstr(doc, "rnfsd_pnfs_ds_write_bytes_total 100\n"));
	free(doc);
	serve_none();
}

/* [stats] prometheus-top-clients: off, no family; on, the n busiest addresses (open connections
 * summed per address with what closed ones left), busiest first, the others left out. */
static void test_top_clients(void **state)
{
	struct stats_conn c[4];
	static const char *const peers[] = { "192.0.2.1:700", "192.0.2.2:701", "192.0.2.1:702", "[2001:db8::3]:703" };
	static const uint64_t calls[] = { 10, 25, 20, 5 };
	char addr[48], *page;

	(void)state;
	stats_peer_addr("[2001:db8::3]:703", addr, sizeof(addr));
	assert_string_equal(addr, "2001:db8::3");
	memset(c, 0, sizeof(c));
	for (unsigned i = 0; i < 4; i++) {
		stats_conn_register(&c[i], "tcp", peers[i], NULL);
		stats_add(&c[i].calls, calls[i]);
		stats_add(&c[i].rx_bytes, 100 * calls[i]);
	}
	page = render_with(stats_render_prom);
	assert_null(strstr(page, "rnfsd_client_")); /* off by default */
	free(page);
	stats_set_top_clients(2);
	stats_conn_unregister(&c[2]); /* closed: its 20 calls stay with 192.0.2.1 */
	page = render_with(stats_render_prom);
	assert_non_null(strstr(page, "# TYPE rnfsd_client_calls_total counter\n"
				     "rnfsd_client_calls_total{client=\"192.0.2.1\"} 30\n"
				     "rnfsd_client_calls_total{client=\"192.0.2.2\"} 25\n#"));
	assert_non_null(strstr(page, "rnfsd_client_received_bytes_total{client=\"192.0.2.1\"} 3000\n"));
	assert_null(strstr(page, "2001:db8::3"));
	free(page);
	stats_set_top_clients(1000); /* clamped to STATS_TOP_CLIENTS_MAX */
	page = render_with(stats_render_prom);
	assert_non_null(strstr(page, "rnfsd_client_calls_total{client=\"2001:db8::3\"} 5\n"));
	free(page);
	for (unsigned i = 0; i < 4; i++)
		stats_conn_unregister(&c[i]);
	stats_set_top_clients(0);
}

/* The rank lines of rnfsd_client_calls_total: busiest first, exactly STATS_TOP_CLIENTS_MAX of them. */
static void assert_top(const char *page, char addrs[][48], const uint64_t *calls)
{
	const char *at = page, *p = page;
	unsigned lines = 0;
	char line[128];

	for (unsigned r = 0; r < STATS_TOP_CLIENTS_MAX; r++) {
		snprintf(line, sizeof(line), "rnfsd_client_calls_total{client=\"%.47s\"} %llu\n", addrs[r],
			 (unsigned long long)calls[r]);
		const char *hit = strstr(page, line);

		assert_non_null(hit);
		assert_true(hit >= at); /* in rank order */
		at = hit;
	}
	while ((p = strstr(p, "rnfsd_client_calls_total{")))
		lines++, p++;
	assert_int_equal(lines, STATS_TOP_CLIENTS_MAX);
}

/* Soak of the busiest-clients table: 5,000 distinct closed addresses, then 2,001 connections open at
 * once from 1,000 addresses, then 20,000 short connections. The closed table stays at its bound
 * (STATS_CLIENTS_KEPT, the busiest kept), the page names the right STATS_TOP_CLIENTS_MAX busiest
 * in order, closing connections moves no counter back, the registry ends as it began (ASan: no leak,
 * no overrun). An address whose connections each make fewer calls than the least busy kept one
 * never enters a full table (the documented bound's price). */
static void test_top_clients_soak(void **state)
{
	enum { CLOSED = 5000, OPEN_ADDRS = 1000 };
	static char addr_of[CLOSED][48], top_addr[STATS_TOP_CLIENTS_MAX][48];
	uint64_t top_calls[STATS_TOP_CLIENTS_MAX];
	struct stats_conn one, *open = calloc(2 * OPEN_ADDRS + 1, sizeof(*open));
	unsigned conns0, conns;
	char peer[64], *page, *page2;

	(void)state;
	assert_non_null(open);
	stats_conn_counts(&conns0, NULL, NULL);
	stats_set_top_clients(STATS_TOP_CLIENTS_MAX);
	memset(&one, 0, sizeof(one));
	for (unsigned i = 0; i < CLOSED; i++) { /* calls 1000 + a permutation of 0..4999 */
		uint64_t calls = 1000 + (uint64_t)i * 7919 % CLOSED;

		snprintf(peer, sizeof(peer), "10.%u.%u.%u:%u", i >> 16 & 255, i >> 8 & 255, i & 255, 700 + i % 300);
		stats_peer_addr(peer, addr_of[calls - 1000], sizeof(addr_of[0]));
		stats_conn_register(&one, "tcp", peer, NULL);
		stats_add(&one.calls, calls);
		stats_add(&one.rx_bytes, calls);
		stats_conn_unregister(&one);
		assert_true(stats_clients_kept() <= STATS_CLIENTS_KEPT);
	}
	assert_int_equal(stats_clients_kept(), STATS_CLIENTS_KEPT);
	for (unsigned r = 0; r < STATS_TOP_CLIENTS_MAX; r++)
		snprintf(top_addr[r], sizeof(top_addr[r]), "%s", addr_of[CLOSED - 1 - r]), top_calls[r] = 5999 - r;
	page = render_with(stats_render_prom);
	assert_top(page, top_addr, top_calls);
	free(page);

	/* Open at once: two connections per address (summed), one more on the busiest closed address. */
	for (unsigned j = 0; j < 2 * OPEN_ADDRS; j++) {
		snprintf(peer, sizeof(peer), "[2001:db8::%x]:%u", j / 2, 800 + j % 2);
		stats_conn_register(&open[j], "tcp", peer, NULL);
		stats_add(&open[j].calls, 3100 + j / 2);
	}
	snprintf(peer, sizeof(peer), "%s:9", addr_of[CLOSED - 1]);
	stats_conn_register(&open[2 * OPEN_ADDRS], "tcp", peer, NULL);
	stats_add(&open[2 * OPEN_ADDRS].calls, 10000);
	stats_conn_counts(&conns, NULL, NULL);
	assert_int_equal(conns, conns0 + 2 * OPEN_ADDRS + 1);
	snprintf(top_addr[0], sizeof(top_addr[0]), "%s", addr_of[CLOSED - 1]), top_calls[0] = 15999;
	for (unsigned r = 1; r < STATS_TOP_CLIENTS_MAX; r++) {
		unsigned j = OPEN_ADDRS - r;

		snprintf(top_addr[r], sizeof(top_addr[r]), "2001:db8::%x", j), top_calls[r] = 2 * (3100 + j);
	}
	page = render_with(stats_render_prom);
	assert_top(page, top_addr, top_calls);
	for (unsigned j = 0; j <= 2 * OPEN_ADDRS; j += 2) /* the first of each address's two, then the others */
		stats_conn_unregister(&open[j]);
	for (unsigned j = 1; j < 2 * OPEN_ADDRS; j += 2)
		stats_conn_unregister(&open[j]);
	assert_int_equal(stats_clients_kept(), STATS_CLIENTS_KEPT);
	page2 = render_with(stats_render_prom); /* closed: the same counters, none back */
	assert_top(page2, top_addr, top_calls);
	free(page);
	free(page2);

	/* 10,000 short connections of a kept address add up; 10,000 of a new one with 1 call each never
	 * beat the least busy kept entry, so that address stays out. */
	for (unsigned k = 0; k < 20000; k++) {
		snprintf(peer, sizeof(peer), k % 2 ? "[2001:db8::%x]:1" : "198.51.100.7:1", OPEN_ADDRS - 1);
		stats_conn_register(&one, "tcp", peer, NULL);
		stats_add(&one.calls, 1);
		stats_conn_unregister(&one);
	}
	assert_int_equal(stats_clients_kept(), STATS_CLIENTS_KEPT);
	page = render_with(stats_render_prom);
	assert_non_null(strstr(page, "rnfsd_client_calls_total{client=\"2001:db8::3e7\"} 18198\n"));
	assert_null(strstr(page, "198.51.100.7"));
	free(page);
	stats_conn_counts(&conns, NULL, NULL);
	assert_int_equal(conns, conns0);
	stats_set_top_clients(0);
	free(open);
}

static void test_json_nfs4(void **state)
{
	(void)state;
	serve_nfs4();
	char *doc = render();
	assert_non_null(strstr(doc, "\"nfs4_operations\": [\n    {\"program\": \"nfs\", \"version\": 4, "
				    "\"procedure\": \"SECINFO_NO_NAME\", \"calls\": 5, \"errors\": 1, "
				    "\"latency_mean_us\": 4.0, \"latency_p99_us\": null}\n  ],"));
	assert_non_null(strstr(doc, "\"nfs4\": {\"clients\": 3, \"sessions\": 2, \"opens\": 7, \"locks\": 1, "
				    "\"delegations\": 0, \"recalls\": 5, \"delegreturns\": 4, \"revoked\": 1, "
				    "\"recorded_clients\": 4, \"grace_left_s\": 12.5, "
				    "\"reclaims\": 6, \"grace_refused\": 8, \"no_grace\": 9, "
				    "\"open_files\": 10, \"open_owners\": 11, \"lock_owners\": 12, \"open_files_max\": 13, "
				    "\"opens_per_client_max\": 14, \"lock_owners_per_client_max\": 15, \"deleg_leases\": 0, "
				    "\"deleg_lease_refused\": 0, \"cb_getattr_sent\": 0, \"cb_getattr_unanswered\": 0, "
				    "\"dir_delegations\": 0, \"dir_delegations_granted\": 0, \"dir_delegation_recalls\": 0, "
				    "\"cb_notify_pending\": 0},"));
	/* issue 24 defect 3: descriptors against the limit, and the tables holding them */
	assert_non_null(strstr(doc, "\"resources\": {\"fds\": 20, \"fd_limit\": 1024, \"fd_reserve\": 512, "
				    "\"lock_descriptions\": 3, \"lock_descriptions_max\": 224, \"lock_shared_descriptions\": 1, "
				    "\"lock_shared_pieces\": 4, \"uring_personalities\": 9, "
				    "\"uring_personalities_max\": 256, \"handle_cache\": 40, \"handle_cache_max\": 32768, "
				    "\"handle_cache_hits\": 400, \"handle_cache_misses\": 41, \"nlm_owners\": 2, "
				    "\"nlm_held\": 1, \"nlm_per_host_max\": 56, \"gss_contexts\": 5, "
				    "\"gss_contexts_max\": 4096, \"gss_evictions\": 7},"));
	assert_non_null(strstr(doc, "\"nfs4_limits\": {\"reply_cache_bytes\": 4096, \"reply_cache_limit\": 1048576, "
				    "\"clients_refused\": 2, \"sessions_reclaimed\": 1, \"recorded_clients_max\": 32},"));
	/* issue 26 item 7: by kind, recalls by cause (of directories too), revocations, CB_NOTIFY */
	assert_non_null(strstr(doc, "\"nfs4_delegations\": {\"read\": 2, \"write\": 1, \"attribute\": 1, "
				    "\"directory\": 3, \"recalls_nfs4\": 3, \"recalls_nfs3\": 1, \"recalls_nlm\": 1, "
				    "\"recalls_local_open\": 0, \"recalls_local_lock\": 0, \"recalls_ceph\": 0, "
				    "\"recalls_notify_failed\": 0, \"dir_recalls_nfs4\": 1, \"dir_recalls_nfs3\": 0, "
				    "\"dir_recalls_nlm\": 0, \"dir_recalls_local_open\": 0, \"dir_recalls_local_lock\": 0, "
				    "\"dir_recalls_ceph\": 0, \"dir_recalls_notify_failed\": 0, \"revoked_unanswered\": 1, "
				    "\"revoked_admin\": 0, \"cb_notify_sent\": 4},"));
	assert_non_null(strstr(doc, "\"totals\": {\"calls\": 101, \"errors\": 3,"));
	/* The sections' places: state ones between the procedures and the totals, RDMA's memory after. */
	const char *procs = strstr(doc, "\"procedures\": ["), *ops = strstr(doc, "\"nfs4_operations\": [");
	const char *res = strstr(doc, "\"resources\": {"), *tot = strstr(doc, "\"totals\": {");
	const char *mem = strstr(doc, "\"rdma_memory\": {\"pool_max\": 0,"), *conns = strstr(doc, "\"connections\": [");
	assert_true(procs && ops && res && tot && mem && conns);
	assert_true(procs < ops && ops < res && res < tot && tot < mem && mem < conns);
	assert_non_null(strstr(doc, "\"nfs4_async\": {\"copies_started\": 0, \"copies_done\": 0, \"copies_cancelled\": 0, "
				    "\"cb_offload_sent\": 0, \"cb_notify_lock_sent\": 0},\n  \"nfs4_bounds\": {\"offloads\": 0, "
				    "\"offloads_max\": 0, \"sync_copies\": 0, \"sync_copies_max\": 0, \"sync_copies_refused\": 0, "
				    "\"lock_waiters\": 0, \"lock_waiters_max\": 0, \"cb_getattr_waiters\": 0, \"cb_getattr_waiters_max\": 0, "
				    "\"delegations_max\": 0, \"callback_paths\": 0, "
				    "\"callback_paths_max\": 0, \"callback_gss_contexts\": 0, \"revoked_stateids\": 0, \"revoked_stateids_max\": 0, "
				    "\"layouts\": 0, \"layouts_max\": 0, \"layout_errors\": 0, \"layout_recalling\": 0, "
				    "\"layout_recalls\": 0, \"layout_recalls_returned\": 0, \"layouts_revoked\": 0},\n"
				    "  \"nfs4_limits\": {"));
	assert_non_null(strstr(doc, "\"nfs4_callbacks\": [\n    {\"clientid\": \"000000001234abcd\", \"minor\": 1, "
				    "\"state\": \"up\", \"transport\": \"tcp\", \"sent\": 9, \"ok\": 8, \"failed\": 1, "
				    "\"flavor\": \"sys\"}\n  ],\n"
				    "  \"pnfs_data_servers\": [\n    {\"address\": \"192.0.2.11\", \"port\": 2049, "
				    "\"transport\": \"tcp\", \"layouts\": 9, \"errors\": 2, \"unavailable\": 1}\n  ],\n"
				    "  \"resources\": {"));
	free(doc);

	/* A source a caller leaves NULL: its section is left out. */
	const struct nfs4_stats_sources state_only = {.state = fake_nfs4_state};
	stats_sections_clear();
	assert_int_equal(nfs4_stats_sections_add(&state_only), 0);
	doc = render();
	assert_null(strstr(doc, "nfs4_operations"));
	assert_null(strstr(doc, "nfs4_callbacks"));
	assert_non_null(strstr(doc, "\"nfs4\": {\"clients\": 3,"));
	free(doc);
	serve_none();
	doc = render();
	assert_null(strstr(doc, "nfs4")); /* NFSv4 not served: no NFSv4 keys */
	free(doc);
}

/* ---- the socket, served by a real loop on its own thread ---- */

struct served {
	struct loop *loop;
	pthread_t thread;
	char path[108];
};

static void *loop_thread(void *arg)
{
	loop_run(((struct served *)arg)->loop);
	return NULL;
}

/* The server is set up on the loop thread's loop before the thread runs. */
static void served_start(struct served *s)
{
	snprintf(s->path, sizeof(s->path), "/tmp/rnfsd-test-stats-%ld.sock", (long)getpid());
	s->loop = loop_new();
	assert_non_null(s->loop);
	assert_int_equal(stats_server_start(s->loop, s->path), 0);
	assert_int_equal(pthread_create(&s->thread, NULL, loop_thread, s), 0);
}

static void served_stop(struct served *s)
{
	loop_break(s->loop);
	pthread_join(s->thread, NULL);
	stats_server_stop();
	loop_free(s->loop);
}

/* Connect, send req (may be NULL: just shut down writing), read everything. */
static char *ask(const char *path, const char *req)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	strcpy(addr.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		close(fd);
		return NULL;
	}
	struct timeval tmo = {.tv_sec = 5};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	if (req) {
		/* May fail (EPIPE) when the server refused us: then the answer is empty. */
		if (write(fd, req, strlen(req)) < 0)
			shutdown(fd, SHUT_WR);
	} else
		shutdown(fd, SHUT_WR);
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	ssize_t r;
	while ((r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	close(fd); /* a reset (r < 0) after a refusal also means an empty answer */
	buf[n] = '\0';
	return buf;
}

static void test_socket(void **state)
{
	(void)state;
	struct served s;
	struct stats_conn t;
	struct rdma_stats_conn r;
	const struct stats_sources src = {.exports_count = fake_exports, .procs_foreach = fake_procs};

	stats_set_sources(&src);
	fill_conns(&t, &r);
	served_start(&s);

	struct stat st;
	assert_int_equal(stat(s.path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);

	char *doc = ask(s.path, "stats\n");
	assert_non_null(doc);
	assert_true(doc[0] == '{');
	assert_non_null(strstr(doc, "\"procedure\": \"GETATTR\""));
	assert_non_null(strstr(doc, "\"peer\": \"127.0.0.1:812\""));
	free(doc);

	doc = ask(s.path, NULL); /* an empty request means "stats" */
	assert_non_null(strstr(doc, "\"totals\""));
	free(doc);

	doc = ask(s.path, "bogus\n");
	assert_string_equal(doc, "{\"error\": \"unknown request\"}\n");
	free(doc);

	/* A second server on a live socket must refuse, not steal it. */
	struct loop *l2 = loop_new();
	assert_int_equal(stats_server_start(l2, s.path), -1);
	loop_free(l2);
	doc = ask(s.path, "stats\n");
	assert_non_null(strstr(doc, "\"totals\""));
	free(doc);

	served_stop(&s);
	assert_int_equal(stat(s.path, &st), -1); /* removed at stop */
	stats_conn_unregister(&t);
	stats_conn_unregister(&r.base);
}

/* A socket file left behind by a dead daemon is replaced. */
static void test_stale_socket(void **state)
{
	(void)state;
	struct served s;
	char path[108];
	snprintf(path, sizeof(path), "/tmp/rnfsd-test-stats-%ld.sock", (long)getpid());
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	strcpy(addr.sun_path, path);
	unlink(path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	close(fd); /* the file stays, nobody listens */

	served_start(&s);
	char *doc = ask(s.path, "stats\n");
	assert_non_null(strstr(doc, "\"totals\""));
	free(doc);
	served_stop(&s);

	/* A socket somebody still listens on (another rnfsd) is not taken over. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(fd, 1), 0);
	struct loop *other = loop_new();
	assert_int_equal(stats_server_start(other, path), -1);
	loop_free(other);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	close(fd);
	assert_int_equal(unlink(path), 0);

	/* A regular file in the way is not removed. */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	struct loop *l = loop_new();
	assert_int_equal(stats_server_start(l, path), -1);
	loop_free(l);
	assert_int_equal(unlink(path), 0);
}

/* SO_PEERCRED: a non-root peer that gets past the file mode gets only the one-line refusal. */
static void test_non_root_refused(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	struct served s;
	served_start(&s);
	assert_int_equal(chmod(s.path, 0666), 0); /* let the check behind the mode be reached */

	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(3);
		char *doc = ask(s.path, "stats\n");
		_exit(doc == NULL ? 4 : strstr(doc, "root-only") && !strstr(doc, "uptime") ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	served_stop(&s);
}

/* The real rnfsctl against the real socket: table and --json. */
static char *run_rnfsctl(const char *args)
{
	const char *bin = getenv("RNFSCTL");
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", bin, args);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t cap = 1 << 16, n = 0, r;
	char *buf = malloc(cap);
	while ((r = fread(buf + n, 1, cap - 1 - n, p)) > 0)
		n += r;
	buf[n] = '\0';
	int status = pclose(p);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("%s exited with %d: %s", cmd, status, buf);
	return buf;
}

static void test_rnfsctl(void **state)
{
	(void)state;
	if (!getenv("RNFSCTL"))
		skip();
	struct served s;
	struct stats_conn t;
	struct rdma_stats_conn r;
	const struct stats_sources src = {.exports_count = fake_exports, .procs_foreach = fake_procs};

	stats_set_sources(&src);
	fill_conns(&t, &r);
	served_start(&s);

	char args[256];
	snprintf(args, sizeof(args), "-s %s", s.path);
	char *out = run_rnfsctl(args);
	fprintf(stderr, "%s", out);
	assert_non_null(strstr(out, "2 exports, 2 connections (1 tcp, 1 rdma), 101 calls, 3 errors"));
	assert_non_null(strstr(out, "nfs         3 GETATTR             100        2       20.0"));
	assert_null(strstr(out, " NULL ")); /* procedures never called are left out */
	assert_non_null(strstr(out, "mount       3 MNT                   1        1       30.0          -\n"));
	assert_non_null(strstr(out, "127.0.0.1:812                tcp     -       -           -        42"));
	assert_non_null(strstr(out, "rdma    1     128   4096/4096         7        3      3.0        5      5.0      4     1     2"));
	free(out);

	snprintf(args, sizeof(args), "-s %s stats --json", s.path);
	out = run_rnfsctl(args);
	assert_non_null(strstr(out, "\"procedure\": \"GETATTR\""));
	assert_non_null(strstr(out, "\"credits\": 128"));
	free(out);

	served_stop(&s);
	stats_conn_unregister(&t);
	stats_conn_unregister(&r.base);

	/* No daemon: a clear error and a non-zero exit. */
	snprintf(args, sizeof(args), "%s -s %s 2>&1", getenv("RNFSCTL"), s.path);
	FILE *p = popen(args, "r");
	char line[256] = "";
	assert_non_null(fgets(line, sizeof(line), p));
	assert_non_null(strstr(line, "is rnfsd running?"));
	int status = pclose(p);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
}

static void test_rnfsctl_nfs4(void **state)
{
	(void)state;
	if (!getenv("RNFSCTL"))
		skip();
	struct served s;

	serve_nfs4();
	served_start(&s);
	char args[256];
	snprintf(args, sizeof(args), "-s %s", s.path);
	char *out = run_rnfsctl(args);
	fprintf(stderr, "%s", out);
	assert_non_null(strstr(out, "nfsv4: 3 clients, 2 sessions, 7 opens, 1 locks, 0 delegations (0 directories: 0 granted, "
				    "0 recalled, 0 CB_NOTIFY pending; 5 recalls, "
				    "4 returned, 1 revoked; 0 files leased, 0 refused for want of a lease; 0 CB_GETATTR, 0 unanswered); 4 clients recorded "
				    "for restart recovery; grace period: 12 s left (6 reclaims, 8 GRACE, 9 NO_GRACE)"));
	assert_non_null(strstr(out, "nfsv4 delegations: 2 read, 1 write, 1 attribute, 3 directory; recalls by cause: nfs4 3, "
				    "nfs3 1, nlm 1, local_open 0, local_lock 0, ceph 0, notify_failed 0 (of directories: nfs4 1, "
				    "nfs3 0, nlm 0, local_open 0, local_lock 0, ceph 0, notify_failed 0); revoked: 1 recalls "
				    "unanswered, 0 by an administrator; CB_NOTIFY sent 4\n"));
	assert_non_null(strstr(out, "PROGRAM  VERS OPERATION                 CALLS   ERRORS"));
	assert_non_null(strstr(out, "nfs         4 SECINFO_NO_NAME               5        1        4.0          -\n"));
	free(out);
	served_stop(&s);
	serve_none();
}

int main(void)
{
	log_init(true, 0);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_buckets),
		cmocka_unit_test(test_hist_quantile),
		cmocka_unit_test(test_json_writer),
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_json_nfs4),
		cmocka_unit_test(test_prom_sections),
		cmocka_unit_test(test_pnfs_ds),
		cmocka_unit_test(test_top_clients),
		cmocka_unit_test(test_top_clients_soak),
		cmocka_unit_test(test_rnfsctl_nfs4),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_socket),
		cmocka_unit_test(test_stale_socket),
		cmocka_unit_test(test_non_root_refused),
		cmocka_unit_test(test_rnfsctl),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
