/*
 * test_stuck_mds.c - one rnfsd with a CephFS export and a local export, the
 * cluster's OSD stopped, and more CREATEs on the Ceph export than the
 * daemon has worker threads (the MDS cannot journal them, and libcephfs
 * neither bounds nor cancels such a request). The backend's gate
 * (backend/ceph/ceph_gate.c) must keep the local export served and answer
 * new calls of the Ceph export with NFS3ERR_JUKEBOX in bounded time:
 *
 *   - threads 8, max-calls derived (4): 12 CREATEs at once over 12
 *     connections; the local export still answers GETATTR and READ within
 *     2 s, a new CREATE on the Ceph export answers JUKEBOX within 2 s, and
 *     at least 6 of the CREATEs answer JUKEBOX (the gate holds max-calls; a
 *     CREATE whose create call got through may also block in its close,
 *     which is not gated: seen once, 3 workers held with max-calls 2, so
 *     the bound asserted leaves 2 workers' room and the count is reported);
 *   - past op-timeout (10 s): even a GETATTR of the Ceph export answers
 *     JUKEBOX at once and the log says once that the cluster is not
 *     answering;
 *   - the OSD started again (empty: memstore): what becomes of the calls
 *     still inside libcephfs is reported, not checked.
 *
 * Runs inside tests/ceph/with-cluster.sh --fuse (the harness's HX_CEPH mode).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/stat.h>

#include "tests/integration/harness.h"

#define NCREATE 12
#define OP_TIMEOUT 10.0 /* the harness's [ceph] op-timeout */

struct pending {
	struct rpc_context *rpc;
	struct hx_fh root;
	char name[32];
	bool done;
	int status; /* nfsstat3, or -1: the RPC failed */
	double sent, took;
};

static void create_cb(struct rpc_context *rpc, int status, void *data, void *private_data)
{
	struct pending *p = private_data;

	(void)rpc;
	p->done = true;
	p->took = hx_now() - p->sent;
	p->status = status == RPC_STATUS_SUCCESS && data ? (int)((CREATE3res *)data)->status : -1;
}

static bool create_send(struct pending *p)
{
	CREATE3args a;

	memset(&a, 0, sizeof(a));
	a.where.dir = hx_fh3(&p->root);
	a.where.name = p->name;
	a.how.mode = UNCHECKED;
	a.how.createhow3_u.obj_attributes.mode.set_it = 1;
	a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0644;
	p->sent = hx_now();
	return rpc_nfs3_create_async(p->rpc, create_cb, &a, p) == 0;
}

/* Drive the pending CREATEs' connections for secs seconds (or until all answered). */
static void pump(struct pending *p, unsigned n, double secs)
{
	double until = hx_now() + secs;
	struct pollfd pfd[NCREATE];
	unsigned open;

	while (hx_now() < until) {
		open = 0;
		for (unsigned i = 0; i < n; i++)
			if (!p[i].done) {
				pfd[open].fd = rpc_get_fd(p[i].rpc);
				pfd[open].events = rpc_which_events(p[i].rpc);
				pfd[open].revents = 0;
				open++;
			}
		if (!open)
			return;
		(void)poll(pfd, open, 100);
		for (unsigned i = 0, k = 0; i < n; i++)
			if (!p[i].done) {
				if (rpc_service(p[i].rpc, pfd[k].revents) < 0) {
					p[i].done = true;
					p[i].status = -1;
				}
				k++;
			}
	}
}

static unsigned count_status(const struct pending *p, unsigned n, int st)
{
	unsigned c = 0;

	for (unsigned i = 0; i < n; i++)
		c += p[i].done && p[i].status == st;
	return c;
}

/* GETATTR and READ on the local export, each answered within 2 s. */
static void local_served(struct rpc_context *nl, struct hx_fh *lfh, const char *when)
{
	READ3res r;
	double t0 = hx_now();

	CHECK_NFS(hx3_getattr(nl, lfh, NULL), NFS3_OK, "GETATTR on the local export %s", when);
	CHECK_NFS(hx3_read(nl, lfh, 0, 10, &r), NFS3_OK, "READ on the local export %s", when);
	hx_note("local export %s: GETATTR + READ in %.2f s", when, hx_now() - t0);
	CHECK(hx_now() - t0 < 2.0, "the local export answers %s within 2 s (%.2f s)", when, hx_now() - t0);
}

static void stuck_creates(struct hx_env *e, struct pending *p, struct rpc_context *nc, struct hx_fh *croot,
			  struct rpc_context *nl, struct hx_fh *lfh)
{
	char cmd[PATH_MAX + 64];
	double t0, t;
	int st;

	hx_section("the OSD stops, %d CREATEs on the Ceph export with 8 worker threads", NCREATE);
	snprintf(cmd, sizeof(cmd), "%s osd-stop %s", getenv("RNFSD_CEPH_SCRIPT"), getenv("RNFSD_CEPH_DIR"));
	if (!CHECK(system(cmd) == 0, "OSD stopped"))
		return;
	t0 = hx_now();
	for (unsigned i = 0; i < NCREATE; i++)
		CHECK(create_send(&p[i]), "CREATE %s sent", p[i].name);
	pump(p, NCREATE, 0.2); /* the creates are in: the gate is full, its waiters patient for 1 s */
	local_served(nl, lfh, "with the Ceph export's calls stuck");
	t = hx_now();
	st = hx3_create(nc, croot, "late", 0644, NULL);
	hx_note("a new CREATE on the Ceph export: %s after %.2f s", hx_nfsstat_name(st), hx_now() - t);
	CHECK_NFS(st, NFS3ERR_JUKEBOX, "a new CREATE on the Ceph export");
	CHECK(hx_now() - t < 2.0, "answered within 2 s (%.2f s)", hx_now() - t);
	pump(p, NCREATE, t0 + OP_TIMEOUT + 1.5 - hx_now());
	for (unsigned i = 0; i < NCREATE; i++)
		if (p[i].done)
			hx_note("CREATE %s: %s after %.2f s", p[i].name,
				p[i].status < 0 ? "RPC failure" : hx_nfsstat_name(p[i].status), p[i].took);
	hx_note("%u of %d CREATEs answered JUKEBOX, %u no answer after %.1f s", count_status(p, NCREATE,
		NFS3ERR_JUKEBOX), NCREATE, NCREATE - count_status(p, NCREATE, NFS3ERR_JUKEBOX), hx_now() - t0);
	CHECK(count_status(p, NCREATE, NFS3ERR_JUKEBOX) >= NCREATE - 6,
	      "at least %d of the CREATEs answered JUKEBOX (max-calls 4 gated, closes not)", NCREATE - 6);
	/* past op-timeout: stuck, every call of the export refused at once, even one libcephfs could answer */
	t = hx_now();
	st = hx3_getattr(nc, croot, NULL);
	hx_note("GETATTR on the Ceph export %.1f s after the stuck CREATEs: %s after %.2f s", t - t0,
		hx_nfsstat_name(st), hx_now() - t);
	CHECK_NFS(st, NFS3ERR_JUKEBOX, "GETATTR on the Ceph export past op-timeout");
	CHECK(hx_now() - t < 1.0, "at once (%.2f s)", hx_now() - t);
	CHECK(hx_log_count(e, "the cluster is not answering") == 1, "the log says once that the cluster is not answering");
	local_served(nl, lfh, "past op-timeout");
}

/* The OSD back (empty: memstore): report what the stuck calls do, and how the daemon stops. */
static void osd_back(struct hx_env *e, struct pending *p)
{
	char cmd[PATH_MAX + 64];
	double t0;

	hx_section("the OSD starts again (reported only)");
	snprintf(cmd, sizeof(cmd), "%s osd-start %s >/dev/null 2>&1", getenv("RNFSD_CEPH_SCRIPT"),
		 getenv("RNFSD_CEPH_DIR"));
	t0 = hx_now();
	hx_note("osd-start: exit %d after %.1f s", system(cmd), hx_now() - t0);
	pump(p, NCREATE, 10.0);
	for (unsigned i = 0; i < NCREATE; i++)
		if (p[i].status != NFS3ERR_JUKEBOX)
			hx_note("CREATE %s: %s after %.1f s", p[i].name, !p[i].done ? "still no answer" :
				p[i].status < 0 ? "RPC failure" : hx_nfsstat_name(p[i].status), p[i].done ? p[i].took :
				hx_now() - p[i].sent);
	hx_note("'answers again' logged %u times", hx_log_count(e, "the cluster answers again"));
	t0 = hx_now();
	hx_daemon_signal(e, SIGTERM);
	while (hx_daemon_alive(e) && hx_now() - t0 < 10.0)
		usleep(50000);
	hx_note("rnfsd %s %.1f s after SIGTERM", e->pid <= 0 ? "gone" : "still running", hx_now() - t0);
}

int main(int argc, char **argv)
{
	static struct pending p[NCREATE];
	struct hx_env e;
	struct rpc_context *nc = NULL, *nl = NULL;
	struct hx_fh croot, lroot, lfh;
	char local_dir[PATH_MAX], path[PATH_MAX + 8];

	hx_begin("ceph_stuck_mds", argc, argv);
	if (!hx_ceph_conf())
		hx_skip("needs a CephFS cluster: run through tests/ceph/with-cluster.sh --fuse");
	hx_env_init(&e);
	hx_require_own_daemon(&e);
	e.threads = 8;
	/* a local export on this host's disk (not below TMPDIR: that is CephFS, through FUSE) */
	snprintf(local_dir, sizeof(local_dir), "/var/tmp/rnfsd-local-XXXXXX");
	if (!mkdtemp(local_dir) || chmod(local_dir, 0755) != 0 ||
	    hx_write_exports(&e, "%s 127.0.0.1(rw,no_root_squash,insecure,fs=ceph)\n"
			     "%s 127.0.0.1(rw,no_root_squash,insecure)\n", e.export_dir, local_dir) != 0) {
		CHECK(false, "configure the server");
		return hx_end();
	}
	snprintf(path, sizeof(path), "%s/f", local_dir);
	hx_write_file(path, "local data", 10, 0644);
	if (hx_daemon_start(&e) != 0 || hx_open_export(&e, e.export_dir, -1, -1, &nc, &croot) != 0 ||
	    hx_open_export(&e, local_dir, -1, -1, &nl, &lroot) != 0)
		return hx_end();
	CHECK_NFS(hx3_lookup(nl, &lroot, "f", &lfh, NULL), NFS3_OK, "LOOKUP in the local export");
	CHECK_NFS(hx3_create(nc, &croot, "warm", 0644, NULL), NFS3_OK, "CREATE on the Ceph export, OSD up");
	for (unsigned i = 0; i < NCREATE; i++) {
		snprintf(p[i].name, sizeof(p[i].name), "stuck%u", i);
		if (hx_open_export(&e, e.export_dir, -1, -1, &p[i].rpc, &p[i].root) != 0)
			return hx_end();
	}
	stuck_creates(&e, p, nc, &croot, nl, &lfh);
	osd_back(&e, p);
	hx_rpc_close(nc);
	hx_rpc_close(nl);
	for (unsigned i = 0; i < NCREATE; i++)
		hx_rpc_close(p[i].rpc);
	hx_rm_rf(local_dir);
	setenv("HX_KEEP", "1", 1); /* the tree is in CephFS, perhaps unwritable: the cluster goes anyway */
	hx_env_release(&e);
	return hx_end();
}
