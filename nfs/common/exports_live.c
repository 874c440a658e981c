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

static pthread_mutex_t nfs_live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nfs_exports *nfs_live;
static struct log_limit nfs_admit_limit;

/* Opens e's backend instance. 0, or -1 (logged by the backend, and here). */
static int nfs_export_open(struct nfs_export *ne, const struct export *e)
{
	struct be_fs_config cfg = { .path = e->path, .export_id = export_id(e) };
	int err;

	ne->cfg = e;
	ne->id = cfg.export_id;
	err = be_fs_open(e->fs[0] ? e->fs : NULL, &cfg, &ne->fs);
	if (err == ENOENT && e->fs[0] && !be_driver_find(e->fs))
		log_err("nfs: export %s not served: no backend fs=%s in this rnfsd", e->path, e->fs);
	else if (err)
		log_err("nfs: export %s not served: %s", e->path, strerror(err));
	return err ? -1 : 0;
}

static void nfs_exports_free(struct nfs_exports *t)
{
	for (unsigned i = 0; i < t->n; i++)
		be_fs_close(t->v[i].fs);
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
	nfs_live = t;
	pthread_mutex_unlock(&nfs_live_lock);
	if (fast)
		rpc_inline_meta_allow(true);
	nfs_exports_put(old); /* its instances close when its last call ends */
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
	if (t && atomic_fetch_sub(&t->refs, 1) == 1)
		nfs_exports_free(t);
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
static uint32_t nfs_sec_bit(const struct rpc_call *c)
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
	uint32_t bit = nfs_sec_bit(c);
	if (!(o->sec & bit)) {
		log_limited(&nfs_admit_limit, LOG_NOTICE, "nfs: %s: %s does not allow %s (sec=)",
			    conn->peer_name, e->cfg->path, nfs_sec_name(bit));
		return EPERM;
	}
	return 0;
}
