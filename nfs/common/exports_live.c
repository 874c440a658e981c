/*
 * exports_live.c - the table of exports being served.
 *
 * The table is immutable once built and reference-counted: a call takes a
 * reference at its start (nfs_exports_get) and drops it at its end, so
 * nfs_exports_replace (SIGHUP) can swap in a new table at any time; calls
 * already running finish against the table they started with, the old table
 * is freed by whoever drops the last reference. A handle whose export id is
 * not in the current table is STALE; changed options apply to the next call.
 *
 * An export that leaves the table (rnfsctl export remove, a reload without
 * it) takes its clients' state with it: the hooks NLM and NFSv4 registered
 * with nfs_export_gone_hook() run on a worker for each export gone once the
 * old table's last reference drops, that is once every call that started
 * on it has finished (calls in flight finish first), with the old table
 * kept until they are done, so they can reach its backend instance to give
 * back locks. Every call after the swap with one of its handles is STALE,
 * so no new state can be made on it meanwhile.
 *
 * Each export is served by one backend instance, opened when the table is
 * built (backend/backend.h: the driver the export names with fs=, else
 * "local") and closed with the table, so nothing an old table opened (cached
 * files, a clone of a mount) outlives the last call that used it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "nfs/common/nfs_common.h"
#include "core/log.h"
#include "core/workers.h"

#define NFS_GONE_HOOKS 4

static pthread_mutex_t nfs_live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nfs_exports *nfs_live;
static struct log_limit nfs_admit_limit;
static void (*nfs_gone_hooks[NFS_GONE_HOOKS])(const struct nfs_export *e);
static unsigned nfs_gone_nhooks;
static void (*nfs_leave_hooks[NFS_GONE_HOOKS])(const struct nfs_export *e);
static unsigned nfs_leave_nhooks;

/* The hooks' run on a worker: the old table and the exports of it the new one lacks. */
struct nfs_gone_work {
	struct work w;
	struct nfs_exports *old; /* a reference (the last one, taken back in nfs_exports_put()), dropped in done */
	const char *why;         /* for the log line */
	unsigned n;
	const struct nfs_export *gone[]; /* inside old */
};

/* Opens e's backend instance. 0, or -1 (logged by the backend, and here). */
static int nfs_export_open(struct nfs_export *ne, const struct export *e)
{
	struct be_fs_config cfg = { .path = e->path, .export_id = export_id(e) };
	int err;

	ne->cfg = e;
	ne->id = cfg.export_id;
	ne->st = nfs_export_stats_new();
	if (!ne->st) {
		log_err("nfs: export %s not served: out of memory", e->path);
		return -1;
	}
	err = be_fs_open(e->fs[0] ? e->fs : NULL, &cfg, &ne->fs);
	if (err == ENOENT && e->fs[0] && !be_driver_find(e->fs))
		log_err("nfs: export %s not served: no backend fs=%s in this rnfsd", e->path, e->fs);
	else if (err)
		log_err("nfs: export %s not served: %s", e->path, strerror(err));
	if (err) {
		rpc_acct_put(&ne->st->acct);
		ne->st = NULL;
	}
	return err ? -1 : 0;
}

static void nfs_exports_free(struct nfs_exports *t)
{
	free(t->gone); /* never submitted: no hook ran (not reached in the daemon) */
	for (unsigned i = 0; i < t->n; i++) {
		be_fs_close(t->v[i].fs);
		rpc_acct_put(&t->v[i].st->acct);
	}
	free(t->v);
	exports_free(&t->table);
	free(t);
}

struct nfs_exports *nfs_exports_build(struct export_table *src)
{
	struct nfs_exports *t = calloc(1, sizeof(*t));

	if (!t) {
		log_err("nfs: out of memory building the export table");
		return NULL;
	}
	t->table = *src;
	src->exports = NULL;
	src->n = 0;
	atomic_init(&t->refs, 1);
	t->v = calloc(t->table.n ? t->table.n : 1, sizeof(*t->v));
	if (!t->v) {
		log_err("nfs: out of memory building the export table");
		goto fail;
	}
	/* All or nothing: an export dropped silently would leave its clients with
	 * STALE handles while the admin believes it is served. */
	for (unsigned i = 0; i < t->table.n; i++) {
		const struct export *e = &t->table.exports[i];
		const struct nfs_export *dup = nfs_exports_by_id(t, export_id(e));

		if (dup) {
			/* Handles carry the id: two exports with one id would be ambiguous. */
			log_err("nfs: exports %s and %s have the same id %#x; set fsid= on one",
				dup->cfg->path, e->path, dup->id);
			goto fail;
		}
		if (nfs_export_open(&t->v[t->n], e) < 0)
			goto fail;
		t->n++;
	}
	return t;
fail:
	nfs_exports_free(t);
	return NULL;
}

/* Does every export's backend answer metadata calls from memory (be_fs.meta_fast)? */
static bool nfs_exports_meta_fast(const struct nfs_exports *t)
{
	for (unsigned i = 0; t && i < t->n; i++)
		if (!t->v[i].fs->meta_fast)
			return false;
	return true;
}

int nfs_export_gone_hook(void (*gone)(const struct nfs_export *e))
{
	if (nfs_gone_nhooks == NFS_GONE_HOOKS)
		return -1;
	nfs_gone_hooks[nfs_gone_nhooks++] = gone;
	return 0;
}

int nfs_export_leave_hook(void (*leave)(const struct nfs_export *e))
{
	if (nfs_leave_nhooks == NFS_GONE_HOOKS)
		return -1;
	nfs_leave_hooks[nfs_leave_nhooks++] = leave;
	return 0;
}

/* The leave hooks, now, for e. */
static void nfs_leave_run(const struct nfs_export *e)
{
	for (unsigned k = 0; k < nfs_leave_nhooks; k++)
		nfs_leave_hooks[k](e);
}

unsigned nfs_exports_gone(const struct nfs_exports *old, const struct nfs_exports *cur,
			  const struct nfs_export **out, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; old && i < old->n; i++)
		if (!nfs_exports_by_id(cur, old->v[i].id) && n < max)
			out[n++] = &old->v[i];
	return n;
}

static void nfs_gone_run(struct work *w)
{
	struct nfs_gone_work *g = container_of(w, struct nfs_gone_work, w);

	for (unsigned i = 0; i < g->n; i++) {
		log_info("nfs: export %s (id %#x) %s: releasing its clients' state", g->gone[i]->cfg->path,
			 g->gone[i]->id, g->why);
		for (unsigned k = 0; k < nfs_gone_nhooks; k++)
			nfs_gone_hooks[k](g->gone[i]);
	}
}

static void nfs_gone_done(struct work *w)
{
	struct nfs_gone_work *g = container_of(w, struct nfs_gone_work, w);

	nfs_exports_put(g->old);
	free(g);
}

/* After a swap from old to cur (both live): queue the hooks for old's exports cur lacks. Takes the
 * caller's reference on old. */
static void nfs_exports_gone_queue(struct nfs_exports *old, const struct nfs_exports *cur)
{
	struct nfs_gone_work *g = NULL;

	if (old && cur && nfs_gone_nhooks)
		g = malloc(sizeof(*g) + old->n * sizeof(g->gone[0]));
	if (g)
		g->n = nfs_exports_gone(old, cur, g->gone, old->n);
	if (!g || g->n == 0) {
		if (old && cur && nfs_gone_nhooks && !g)
			log_err("nfs: out of memory: state on exports no longer served is kept until it expires");
		free(g);
		nfs_exports_put(old);
		return;
	}
	for (unsigned i = 0; i < g->n; i++)
		nfs_leave_run(g->gone[i]); /* before the old table's last call: what holds it lets go */
	g->old = old;
	g->why = "is no longer served";
	g->w = (struct work){ .run = nfs_gone_run, .done = nfs_gone_done };
	old->gone = g; /* submitted when its last call ends (nfs_exports_put) */
	nfs_exports_put(old);
}

int nfs_export_unlock(const char *path)
{
	struct nfs_exports *t = nfs_exports_get();
	const struct nfs_export *e = nfs_exports_by_path(t, path);
	struct nfs_gone_work *g = e ? malloc(sizeof(*g) + sizeof(g->gone[0])) : NULL;

	if (!g) {
		nfs_exports_put(t);
		return e ? ENOMEM : ENOENT;
	}
	nfs_leave_run(e);
	g->old = t;
	g->why = "is unlocked (rnfsctl unlock)";
	g->n = 1;
	g->gone[0] = e;
	g->w = (struct work){ .run = nfs_gone_run, .done = nfs_gone_done };
	workers_submit(&g->w);
	return 0;
}

/* t, about to replace old: its exports that old served too (same id and path) count on in old's
 * blocks (export_stats.c). */
static void nfs_exports_keep_stats(struct nfs_exports *t, const struct nfs_exports *old)
{
	for (unsigned i = 0; t && i < t->n; i++) {
		const struct nfs_export *o = nfs_exports_by_id(old, t->v[i].id);

		if (!o || strcmp(o->cfg->path, t->v[i].cfg->path) != 0)
			continue;
		atomic_fetch_add_explicit(&o->st->acct.refs, 1, memory_order_relaxed);
		rpc_acct_put(&t->v[i].st->acct);
		t->v[i].st = o->st;
	}
}

void nfs_exports_install(struct nfs_exports *t)
{
	struct nfs_exports *old;
	bool fast = nfs_exports_meta_fast(t);

	/* rpc_inline.h: metadata calls leave the receiving thread before a
	 * backend that may wait (a cluster) can be reached, and come back only
	 * once none can. */
	if (!fast)
		rpc_inline_meta_allow(false);
	pthread_mutex_lock(&nfs_live_lock);
	old = nfs_live;
	nfs_exports_keep_stats(t, old);
	nfs_live = t;
	pthread_mutex_unlock(&nfs_live_lock);
	if (fast)
		rpc_inline_meta_allow(true);
	nfs_exports_gone_queue(old, t); /* its instances close when its last call (or hook) ends */
}

struct nfs_exports *nfs_exports_get(void)
{
	struct nfs_exports *t;

	pthread_mutex_lock(&nfs_live_lock);
	t = nfs_live;
	if (t)
		atomic_fetch_add(&t->refs, 1);
	pthread_mutex_unlock(&nfs_live_lock);
	return t;
}

void nfs_exports_put(struct nfs_exports *t)
{
	struct nfs_gone_work *g;

	if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
		return;
	g = t->gone;
	if (!g) {
		nfs_exports_free(t);
		return;
	}
	/* The last call on a table some exports left has ended: their hooks run now, on a worker
	 * (any thread may be here), holding the table again until they are done. */
	t->gone = NULL;
	atomic_store(&t->refs, 1);
	workers_submit(&g->w);
}

const struct nfs_export *nfs_exports_by_id(const struct nfs_exports *t, uint32_t id)
{
	for (unsigned i = 0; t && i < t->n; i++)
		if (t->v[i].id == id)
			return &t->v[i];
	return NULL;
}

const struct nfs_export *nfs_exports_by_path(const struct nfs_exports *t, const char *path)
{
	const struct export *e = t ? exports_find(&t->table, path) : NULL;

	for (unsigned i = 0; e && i < t->n; i++)
		if (t->v[i].cfg == e)
			return &t->v[i];
	return NULL;
}

static unsigned nfs_peer_port(const struct rpc_conn *conn)
{
	const struct sockaddr *sa = (const struct sockaddr *)&conn->peer;

	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0; /* AF_UNIX or unknown: local, trusted as privileged */
}

bool nfs_conn_secure(const struct rpc_conn *conn)
{
	/* RPC-over-RDMA: the source port means nothing (xprt.h), as in knfsd,
	 * whose svc_rdma_recvfrom() sets RQ_SECURE on every request while
	 * svcsock.c's svc_sock_secure_port() tests svc_port_is_privileged(). */
	if (conn->no_port_privilege)
		return true;
	return nfs_peer_port(conn) < 1024;
}

/* The export's sec= bit a call's flavor needs (RPCSEC_GSS: by the credential's service, RFC 2203 §5). */
uint32_t nfs_call_sec(const struct rpc_call *c)
{
	switch (c->cred.flavor) {
	case RPC_AUTH_SYS:
		return EXPORT_SEC_SYS;
	case RPC_AUTH_GSS:
		return c->gss.svc == 3 ? EXPORT_SEC_KRB5P : c->gss.svc == 2 ? EXPORT_SEC_KRB5I : EXPORT_SEC_KRB5;
	default:
		return EXPORT_SEC_NONE;
	}
}

static const char *nfs_sec_name(uint32_t bit)
{
	switch (bit) {
	case EXPORT_SEC_SYS: return "AUTH_SYS";
	case EXPORT_SEC_KRB5: return "krb5";
	case EXPORT_SEC_KRB5I: return "krb5i";
	case EXPORT_SEC_KRB5P: return "krb5p";
	default: return "AUTH_NONE";
	}
}

int nfs_export_admit(const struct nfs_export *e, const struct rpc_call *c, const struct export_opts **opts)
{
	const struct rpc_conn *conn = c->conn;
	const struct export_opts *o;

	o = export_match(e->cfg, (const struct sockaddr *)&conn->peer, conn->peer_len);
	if (!o) {
		log_limited(&nfs_admit_limit, LOG_NOTICE, "nfs: %s is not a client of %s",
			    conn->peer_name, e->cfg->path);
		return EACCES;
	}
	/* exports(5) "secure": requests must come from a port below 1024, on a
	 * transport where ports mean privilege (not RDMA). */
	if (o->secure && !nfs_conn_secure(conn)) {
		log_limited(&nfs_admit_limit, LOG_NOTICE, "nfs: %s: %s requires a privileged port (secure)",
			    conn->peer_name, e->cfg->path);
		return EACCES;
	}
	*opts = o;
	/* sec=: the call's flavor must be in the export's list (knfsd's
	 * check_nfsd_access(); NFSv3 calls then get NFS3ERR_ACCES). */
	uint32_t bit = nfs_call_sec(c);
	if (!(o->sec & bit)) {
		log_limited(&nfs_admit_limit, LOG_NOTICE, "nfs: %s: %s does not allow %s (sec=)",
			    conn->peer_name, e->cfg->path, nfs_sec_name(bit));
		return EPERM;
	}
	/* xprtsec=: the connection's transport security (RFC 9289) must be listed;
	 * as knfsd's check_xprtsec_policy(), NFSv3 then gets NFS3ERR_ACCES and
	 * NFSv4 NFS4ERR_WRONGSEC (RFC 8881 §2.6.3.1). */
	if (!export_xprtsec_admits(o->xprtsec, conn->xprtsec)) {
		log_limited(&nfs_admit_limit, LOG_NOTICE, "nfs: %s: %s does not allow %s (xprtsec=)",
			    conn->peer_name, e->cfg->path,
			    conn->xprtsec == RPC_XPRTSEC_MTLS ? "mutual TLS"
			    : conn->xprtsec == RPC_XPRTSEC_TLS ? "TLS" : "a connection without TLS");
		return EPERM;
	}
	return 0;
}

_Static_assert(EXPORT_XPRTSEC_NONE == 1u << RPC_XPRTSEC_NONE && EXPORT_XPRTSEC_TLS == 1u << RPC_XPRTSEC_TLS &&
		       EXPORT_XPRTSEC_MTLS == 1u << RPC_XPRTSEC_MTLS,
	       "xprtsec= bits are 1 << enum rpc_xprtsec");
