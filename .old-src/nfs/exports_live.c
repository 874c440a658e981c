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
 * Each export root is opened once (O_RDONLY directory fd). When the kernel allows it
 * (open_tree(OPEN_TREE_CLONE), root), the fd is a private, non-recursive
 * clone of the export's mount: lookups through it cannot reach file systems
 * mounted below the export (no "crossmnt"), the mount point shows as the
 * plain directory underneath, and ".." at its root stays at the root.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <arpa/inet.h>

#include "nfs/nfs_priv.h"
#include "core/log.h"

static pthread_mutex_t nfs_live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nfs_exports *nfs_live;
static struct log_limit nfs_admit_limit;

/*
 * The root as an O_RDONLY directory fd: open_by_handle_at() refuses an O_PATH
 * mount fd (EBADF). With open_tree, *tree_fd keeps the private clone (an
 * O_PATH fd) and the root is reopened through it.
 */
static int nfs_export_open_root(const char *path, int *tree_fd)
{
	const int dflags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	int fd;

	*tree_fd = -1;
#ifdef SYS_open_tree
	*tree_fd = (int)syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (*tree_fd >= 0) {
		fd = openat(*tree_fd, ".", dflags);
		if (fd < 0) {
			close(*tree_fd);
			*tree_fd = -1;
		}
		return fd;
	}
	if (errno != EPERM && errno != ENOSYS && errno != EINVAL)
		return -1;
#endif
	return open(path, dflags);
}

/* Opens e's root and makes its handle. 0, or -1 (logged). */
static int nfs_export_open(struct nfs_export *ne, const struct export *e)
{
	struct stat st;
	uint32_t status;

	ne->cfg = e;
	ne->id = export_id(e);
	ne->root_fd = nfs_export_open_root(e->path, &ne->tree_fd);
	ne->cloned = ne->tree_fd >= 0;
	if (ne->root_fd < 0) {
		log_err("nfs: export %s: %s", e->path, strerror(errno));
		return -1;
	}
	if (fstat(ne->root_fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		log_err("nfs: export %s: not a directory", e->path);
		goto fail;
	}
	ne->dev = st.st_dev;
	ne->ino = st.st_ino;
	status = nfs_fh_build(&ne->root_fh, ne->id, ne->root_fd, "", AT_EMPTY_PATH);
	if (status != NFS3_OK) {
		log_err("nfs: export %s: cannot make file handles (nfsstat3 %u)", e->path, status);
		goto fail;
	}
	if (!ne->cloned)
		log_info("nfs: export %s: open_tree unavailable (no CAP_SYS_ADMIN); LOOKUP refuses to enter submounts", e->path);
	return 0;
fail:
	close(ne->root_fd);
	nfs_fd_close(ne->tree_fd);
	ne->root_fd = ne->tree_fd = -1;
	return -1;
}

static void nfs_exports_free(struct nfs_exports *t)
{
	for (unsigned i = 0; i < t->n; i++) {
		close(t->v[i].root_fd);
		nfs_fd_close(t->v[i].tree_fd);
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
		struct nfs_export *ne = &t->v[t->n];
		const struct nfs_export *dup;

		if (nfs_export_open(ne, &t->table.exports[i]) < 0)
			goto fail;
		dup = nfs_exports_by_id(t, ne->id);
		if (dup) {
			/* Handles carry the id: two exports with one id would be ambiguous. */
			log_err("nfs: exports %s and %s have the same id %#x; set fsid= on one",
				dup->cfg->path, ne->cfg->path, ne->id);
			close(ne->root_fd);
			nfs_fd_close(ne->tree_fd);
			goto fail;
		}
		t->n++;
	}
	return t;
fail:
	nfs_exports_free(t);
	return NULL;
}

void nfs_exports_install(struct nfs_exports *t)
{
	struct nfs_exports *old;

	pthread_mutex_lock(&nfs_live_lock);
	old = nfs_live;
	nfs_live = t;
	pthread_mutex_unlock(&nfs_live_lock);
	if (old) {
		nfs_fcache_purge(); /* cached fds must not pin file systems no longer exported */
		nfs_exports_put(old);
	}
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
	/* exports(5) "secure": requests must come from a port below 1024. */
	if (o->secure && nfs_peer_port(conn) >= 1024) {
		log_limited(&nfs_admit_limit, LOG_NOTICE, "nfs: %s: %s requires a privileged port (secure)",
			    conn->peer_name, e->cfg->path);
		return EACCES;
	}
	*opts = o;
	/* sec=: the call's flavor must be in the export's list (knfsd's
	 * check_nfsd_access(); NFSv3 calls then get NFS3ERR_ACCES). */
	if (!(o->sec & (c->cred.flavor == RPC_AUTH_SYS ? EXPORT_SEC_SYS : EXPORT_SEC_NONE))) {
		log_limited(&nfs_admit_limit, LOG_NOTICE, "nfs: %s: %s does not allow %s (sec=)",
			    conn->peer_name, e->cfg->path,
			    c->cred.flavor == RPC_AUTH_SYS ? "AUTH_SYS" : "AUTH_NONE");
		return EPERM;
	}
	return 0;
}
