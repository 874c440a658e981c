/*
 * test_two_servers.c - two rnfsd servers exporting the same CephFS directory
 * (the scale-out of docs/scale-out.md), and how one rnfsd behaves when the
 * cluster fails, over NFSv3 with libnfs. Runs inside tests/ceph/with-cluster.sh
 * --fuse (the harness's HX_CEPH mode); skips otherwise.
 *
 *   - one namespace: with the same file-handle key (state-dir/fh.key) and
 *     export path, both servers give the same root handle; a file created
 *     and written through one is read back through the other by the very
 *     same handle, a write through the second is seen through the first,
 *     and a remove through one makes the handle STALE at the other;
 *   - the OSD stops: a READ of data the server has not cached answers
 *     NFS3ERR_JUKEBOX or NFS3ERR_IO within a bounded time, while a local
 *     export of the same rnfsd keeps answering at once, and both servers
 *     still go within 30 s of SIGTERM (bounded unmount);
 *   - start-up against an unreachable cluster fails within mount-timeout.
 *
 * The client behaves like a real one: every call but the one whose JUKEBOX
 * is under test (the READ with the OSD down) is retried on NFS3ERR_JUKEBOX
 * with backoff, for at most JUKEBOX_RETRY_S (a freshly started cluster on a
 * busy machine may take longer than op-timeout over its first calls).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/stat.h>

#include "tests/integration/harness.h"

#define BIG (256 * 1024)
#define CHUNK (64 * 1024)
#define JUKEBOX_RETRY_S 60.0

static unsigned jukebox_retries;

/* RFC 1813 §2.6, NFS3ERR_JUKEBOX: "the client should wait and then try the request with a new RPC
 * transaction ID". Backoff from 0.1 s, doubling up to 2 s, for at most JUKEBOX_RETRY_S; returns the
 * last status. (libnfs gives each call a new xid.) */
#define RETRY_JUKEBOX(call) ({                                                        \
	double t0_ = hx_now(), d_ = 0.1;                                              \
	int st_;                                                                      \
	while ((st_ = (call)) == NFS3ERR_JUKEBOX && hx_now() - t0_ + d_ <= JUKEBOX_RETRY_S) { \
		jukebox_retries++;                                                    \
		usleep((useconds_t)(d_ * 1e6));                                       \
		d_ = d_ * 2 > 2.0 ? 2.0 : d_ * 2;                                     \
	}                                                                             \
	st_;                                                                          \
})

static int copy_file(const char *from, const char *to)
{
	char buf[256];
	FILE *in = fopen(from, "rb"), *out;
	size_t n;

	if (!in)
		return -1;
	out = fopen(to, "wb");
	if (!out) {
		fclose(in);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	return fclose(out);
}

static bool same_fh(const struct hx_fh *a, const struct hx_fh *b)
{
	return a->len == b->len && !memcmp(a->data, b->data, a->len);
}

static void write_big(struct rpc_context *nfs, struct hx_fh *fh, const char *data, const char *what)
{
	WRITE3res w;
	bool ok = true;

	for (uint32_t off = 0; off < BIG && ok; off += CHUNK)
		ok = RETRY_JUKEBOX(hx3_write(nfs, fh, off, data + off, CHUNK, FILE_SYNC, &w)) == NFS3_OK;
	CHECK(ok, "%s: %u bytes written FILE_SYNC", what, BIG);
}

static bool read_equals(struct rpc_context *nfs, struct hx_fh *fh, const char *data, uint32_t len)
{
	READ3res r;

	for (uint32_t off = 0; off < len; off += CHUNK) {
		uint32_t n = len - off < CHUNK ? len - off : CHUNK;
		int st = RETRY_JUKEBOX(hx3_read(nfs, fh, off, n, &r));

		if (st != NFS3_OK || r.READ3res_u.resok.data.data_len != n ||
		    memcmp(r.READ3res_u.resok.data.data_val, data + off, n) != 0) {
			hx_note("READ at %u: %s, %u bytes", off, hx_nfsstat_name(st),
				st == NFS3_OK ? r.READ3res_u.resok.data.data_len : 0);
			return false;
		}
	}
	return true;
}

static void one_namespace(struct hx_env *a, struct hx_env *b, struct rpc_context *na, struct rpc_context *nb,
			  struct hx_fh *ra, struct hx_fh *rb)
{
	static char data[BIG], data2[BIG];
	uint64_t seed = 42;
	struct hx_fh fh = {0}, fhb = {0};
	fattr3 attr;

	(void)a;
	(void)b;
	hx_section("one namespace through two servers");
	CHECK(same_fh(ra, rb), "both servers give the same root handle");
	hx_fill(&seed, data, sizeof(data));
	hx_fill(&seed, data2, sizeof(data2));
	if (!CHECK_NFS(RETRY_JUKEBOX(hx3_create(na, ra, "shared", 0644, &fh)), NFS3_OK,
		       "CREATE shared through server A"))
		return;
	write_big(na, &fh, data, "server A");
	CHECK(read_equals(nb, &fh, data, BIG), "server B reads A's bytes by A's handle");
	/* without B's handle the checks below would only repeat this failure */
	if (CHECK_NFS(RETRY_JUKEBOX(hx3_lookup(nb, rb, "shared", &fhb, &attr)), NFS3_OK,
		      "LOOKUP shared through server B")) {
		CHECK(same_fh(&fh, &fhb), "B's handle for it is A's");
		CHECK_EQ(attr.size, BIG, "B sees A's size");
		write_big(nb, &fhb, data2, "server B");
		CHECK(read_equals(na, &fh, data2, BIG), "server A reads B's bytes");
	}
	CHECK_NFS(RETRY_JUKEBOX(hx3_remove(nb, rb, "shared")), NFS3_OK, "REMOVE through server B");
	CHECK_NFS(RETRY_JUKEBOX(hx3_getattr(na, &fh, &attr)), NFS3ERR_STALE, "A's handle of the removed file is STALE");
	hx_note("JUKEBOX answers retried so far: %u", jukebox_retries);
}

/* The OSD stops: READs of uncached data fail in bounded time, the local export answers. */
static void osd_down(struct hx_env *b, struct rpc_context *na, struct rpc_context *nb, struct hx_fh *ra,
		     struct hx_fh *rb, const char *local_dir)
{
	static char data[BIG];
	uint64_t seed = 7;
	struct rpc_context *nl = NULL;
	struct hx_fh fh, fhb, lroot, lfh;
	READ3res r;
	char cmd[PATH_MAX + 64];
	double t0, took;
	int st;

	hx_section("the OSD stops: bounded errors, the local export still served");
	hx_fill(&seed, data, sizeof(data));
	if (!CHECK_NFS(RETRY_JUKEBOX(hx3_create(na, ra, "cold", 0644, &fh)), NFS3_OK, "CREATE cold through A"))
		return;
	write_big(na, &fh, data, "server A");
	if (!CHECK_NFS(RETRY_JUKEBOX(hx3_lookup(nb, rb, "cold", &fhb, NULL)), NFS3_OK,
		       "B knows the name (data not read)"))
		return;
	snprintf(cmd, sizeof(cmd), "%s/f", local_dir);
	hx_write_file(cmd, "local data", 10, 0644);
	if (hx_open_export(b, local_dir, -1, -1, &nl, &lroot) != 0)
		return;
	CHECK_NFS(hx3_lookup(nl, &lroot, "f", &lfh, NULL), NFS3_OK, "LOOKUP in B's local export");

	snprintf(cmd, sizeof(cmd), "%s osd-stop %s", getenv("RNFSD_CEPH_SCRIPT"), getenv("RNFSD_CEPH_DIR"));
	CHECK(system(cmd) == 0, "OSD stopped");
	t0 = hx_now();
	st = hx3_read(nb, &fhb, 0, CHUNK, &r);
	took = hx_now() - t0;
	hx_note("READ of uncached data with the OSD down: %s after %.1f s (op-timeout 10)", hx_nfsstat_name(st),
		took);
	CHECK_NFS2(st, NFS3ERR_JUKEBOX, NFS3ERR_IO, "READ with the OSD down");
	CHECK(took < 25.0, "answered in bounded time (%.1f s)", took);
	t0 = hx_now();
	CHECK_NFS(hx3_read(nl, &lfh, 0, 10, &r), NFS3_OK, "READ from the local export meanwhile");
	CHECK(hx_now() - t0 < 2.0, "at once (%.2f s)", hx_now() - t0);
	hx_rpc_close(nl);
	/* not started again: a memstore OSD comes back empty. The daemons must still stop in time. */
}

/* rnfsd with a Ceph export and nobody at the monitor's address: start-up fails in bounded time. */
static void unreachable_startup(void)
{
	static struct hx_env c; /* the harness keeps a pointer to it until the end */
	char dead[PATH_MAX + 16];
	FILE *f;
	double t0;
	int st;

	hx_section("start-up with an unreachable cluster");
	hx_env_init(&c);
	snprintf(dead, sizeof(dead), "%s/dead.conf", c.dir);
	f = fopen(dead, "w");
	if (!CHECK(f != NULL, "write %s", dead))
		return;
	fprintf(f, "[global]\nmon_host = v2:127.0.0.1:9\n");
	fclose(f);
	f = fopen(c.conf_path, "w");
	if (!CHECK(f != NULL, "write rnfsd.conf"))
		return;
	fprintf(f, "[rnfsd]\nstate-dir = %s\nexports = %s\nrpcbind = no\nstats-socket = %s\n"
		"[tcp]\nlisten = 127.0.0.1:%u\n[rdma]\nenable = no\n[ceph]\nconf = %s\nmount-timeout = 3\n",
		c.state_dir, c.exports_path, c.stats_socket, c.port, dead);
	fclose(f);
	t0 = hx_now();
	st = hx_daemon_run_to_exit(&c, 20.0);
	hx_note("start-up against a dead cluster: exit status %d after %.1f s (mount-timeout 3)", st,
		hx_now() - t0);
	CHECK(st > 0, "rnfsd refuses to start (status %d)", st);
	CHECK(hx_now() - t0 < 10.0, "within a bounded time (%.1f s)", hx_now() - t0);
	CHECK(hx_log_count(&c, "cannot mount") >= 1, "the log says why");
	hx_env_release(&c);
}

/*
 * SIGTERM with the cluster's OSD gone: the daemon must go within a bounded
 * time (its unmount gives up after mount-timeout, the driver then waits at
 * most 5 s for it). Its exit status is only reported: a libcephfs thread
 * still inside an abandoned unmount when the process exits may abort it.
 */
static void stop_bounded(struct hx_env *e, const char *name)
{
	double t0 = hx_now();

	if (e->pid <= 0)
		return;
	hx_daemon_signal(e, SIGTERM);
	while (hx_daemon_alive(e) && hx_now() - t0 < 30.0)
		usleep(50000);
	hx_note("server %s stopped %.1f s after SIGTERM with the OSD down", name, hx_now() - t0);
	CHECK(e->pid <= 0, "server %s gone within 30 s of SIGTERM", name);
}

int main(int argc, char **argv)
{
	struct hx_env a, b;
	struct rpc_context *na = NULL, *nb = NULL;
	struct hx_fh ra, rb;
	char key_a[PATH_MAX + 16], key_b[PATH_MAX + 16], local_dir[PATH_MAX];

	hx_begin("ceph_two_servers", argc, argv);
	if (!hx_ceph_conf())
		hx_skip("needs a CephFS cluster: run through tests/ceph/with-cluster.sh --fuse");
	unreachable_startup(); /* first: its tree is in CephFS, which the OSD test leaves unusable */
	hx_env_init(&a);
	hx_env_init(&b);
	hx_require_own_daemon(&a);
	/* B: the same CephFS directory under the same path (so the same export id), plus a
	 * local export on this host's disk (not below TMPDIR: that is CephFS, through FUSE) */
	snprintf(local_dir, sizeof(local_dir), "/var/tmp/rnfsd-local-XXXXXX");
	if (!mkdtemp(local_dir) || chmod(local_dir, 0755) != 0 ||
	    hx_write_exports(&b, "%s 127.0.0.1(rw,no_root_squash,insecure,fs=ceph)\n"
			     "%s 127.0.0.1(rw,no_root_squash,insecure)\n", a.export_dir, local_dir) != 0) {
		CHECK(false, "configure server B");
		return hx_end();
	}
	if (hx_daemon_start(&a) != 0)
		return hx_end();
	/* the file-handle key is what makes the handles of the two servers the same */
	snprintf(key_a, sizeof(key_a), "%s/fh.key", a.state_dir);
	snprintf(key_b, sizeof(key_b), "%s/fh.key", b.state_dir);
	if (!CHECK(copy_file(key_a, key_b) == 0, "B gets A's file-handle key") || hx_daemon_start(&b) != 0)
		return hx_end();
	if (hx_open_export(&a, a.export_dir, -1, -1, &na, &ra) == 0 &&
	    hx_open_export(&b, a.export_dir, -1, -1, &nb, &rb) == 0) {
		one_namespace(&a, &b, na, nb, &ra, &rb);
		osd_down(&b, na, nb, &ra, &rb, local_dir);
	}
	if (na)
		hx_rpc_close(na);
	if (nb)
		hx_rpc_close(nb);
	stop_bounded(&a, "A");
	stop_bounded(&b, "B");
	hx_rm_rf(local_dir);
	setenv("HX_KEEP", "1", 1); /* the trees are in CephFS, unwritable without the OSD: the cluster goes anyway */
	hx_env_release(&a);
	hx_env_release(&b);
	return hx_end();
}
