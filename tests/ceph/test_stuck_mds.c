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
 *     at most max-calls CREATEs are held: every other one answers (JUKEBOX,
 *     or NFS3_OK had its create got through): releases (closes, puts) run on
 *     the mount's release thread (ceph_release.c), not on workers, so they
 *     cannot hold a worker past the gate's bound;
 *   - past op-timeout (10 s): even a GETATTR of the Ceph export answers
 *     JUKEBOX at once and the log says once that the cluster is not
 *     answering;
 *   - SIGTERM with the OSD still stopped and max-calls CREATEs still inside
 *     libcephfs: rnfsd exits with status 0 within 20 s (the drain's 10 s,
 *     then at most 5 s for the workers: core/workers.c
 *     workers_stop_within) and logs once which calls it left running.
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
#include <sys/wait.h>

#include "tests/integration/harness.h"

#define NCREATE 12
#define OP_TIMEOUT 10.0 /* the harness's [ceph] op-timeout */
#define MAX_CALLS 4     /* derived from threads 8 (nfs/nfs_service.c) */
#define EXIT_BOUND 20.0 /* daemon/main.c: RNFSD_DRAIN_TIMEOUT_S 10 + RNFSD_WORKERS_STOP_S 5, and room */

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

/* At most max-calls CREATEs without an answer; every other one JUKEBOX (or OK: its create got
 * through before the MDS stalled). */
static void held_check(const struct pending *p, double after)
{
	unsigned answered = 0, jb = count_status(p, NCREATE, NFS3ERR_JUKEBOX), ok = count_status(p, NCREATE, NFS3_OK);

	for (unsigned i = 0; i < NCREATE; i++)
		answered += p[i].done;
	hx_note("%u of %d CREATEs answered JUKEBOX, %u OK, %u no answer after %.1f s", jb, NCREATE, ok,
		NCREATE - answered, after);
	CHECK(NCREATE - answered <= MAX_CALLS, "at most max-calls (%d) CREATEs held (%u)", MAX_CALLS,
	      NCREATE - answered);
	CHECK(jb + ok == answered, "every answered CREATE is JUKEBOX or OK (%u of %u)", jb + ok, answered);
	CHECK(jb >= NCREATE - MAX_CALLS - ok, "all %d CREATEs beyond max-calls (less %u OK) answered JUKEBOX (%u)",
	      NCREATE - MAX_CALLS, ok, jb);
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
	held_check(p, hx_now() - t0);
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

/* SIGTERM while calls are still inside libcephfs (the OSD still stopped): exit 0 in bounded time. */
static void sigterm_stuck(struct hx_env *e, const struct pending *p)
{
	double t0 = hx_now(), took;
	pid_t r = 0;
	int st = 0;

	hx_section("SIGTERM with the OSD stopped and CREATEs inside libcephfs");
	for (unsigned i = 0; i < NCREATE; i++)
		if (!p[i].done)
			hx_note("CREATE %s: still no answer after %.1f s", p[i].name, hx_now() - p[i].sent);
	if (!CHECK(e->pid > 0 && hx_daemon_signal(e, SIGTERM) == 0, "SIGTERM sent"))
		return;
	while (hx_now() - t0 < EXIT_BOUND + 10.0 && (r = waitpid(e->pid, &st, WNOHANG)) == 0)
		usleep(50000);
	took = hx_now() - t0;
	hx_note("rnfsd %s %.1f s after SIGTERM", r == e->pid ? "gone" : "still running", took);
	if (!CHECK(r == e->pid && took < EXIT_BOUND, "rnfsd exits within %.0f s of SIGTERM (%.1f s)", EXIT_BOUND,
		   took))
		return; /* hx_env_release kills it */
	e->pid = 0;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit status 0 (%s %d)", WIFEXITED(st) ? "status" : "signal",
	      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	CHECK(hx_log_count(e, "left running (not joined)") == 1, "the log names the abandoned calls once");
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
	sigterm_stuck(&e, p);
	hx_rpc_close(nc);
	hx_rpc_close(nl);
	for (unsigned i = 0; i < NCREATE; i++)
		hx_rpc_close(p[i].rpc);
	hx_rm_rf(local_dir);
	setenv("HX_KEEP", "1", 1); /* the tree is in CephFS, perhaps unwritable: the cluster goes anyway */
	hx_env_release(&e);
	return hx_end();
}
