/*
 * mount3.c - the MOUNT protocol version 3 (RFC 1813 appendix I): MNT hands
 * out the root handle of an export (or of a directory inside one) to an
 * admitted client, DUMP/UMNT/UMNTALL keep an advisory list of who mounted
 * what (in memory, bounded), EXPORT lists the exports with their client specs.
 *
 * The mount list is advisory (appendix I: "the server may not be accurate"):
 * nothing depends on it; NFS calls are admitted on every call (nfs3_call.c).
 * Directories below an export root are resolved by its backend
 * (be_lookup_path: no symlinks, never out of the export). Its errno ->
 * mountstat3 map is here too (nfs_errno_to_mountstat3()).
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <pthread.h>
#include <string.h>

#include "nfs/v3/nfs3.h"
#include "core/log.h"

#define MOUNT3_LIST_MAX 1024

struct mount3_entry {
	char host[64];
	char dir[MNT3_PATHLEN + 1];
};

static pthread_mutex_t mount3_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mount3_entry mount3_list[MOUNT3_LIST_MAX];
static unsigned mount3_n;
static struct log_limit mount3_limit, mount3_ok_limit;

enum rpc_proc_status mount3_null_exec(struct rpc_call *c, void *args, void *res)
{
	(void)c;
	(void)args;
	(void)res;
	return RPC_PROC_OK;
}

static void mount3_peer_host(const struct rpc_call *c, char host[64])
{
	if (getnameinfo((const struct sockaddr *)&c->conn->peer, c->conn->peer_len, host, 64, NULL, 0,
			NI_NUMERICHOST) != 0)
		snprintf(host, 64, "%s", c->conn->peer_name);
}

/* dirpath: string<MNTPATHLEN> (MNT, UMNT decode step). false: GARBAGE_ARGS. */
bool mount3_dec_dirpath(struct rpc_call *c, void *args)
{
	struct mount3_dirpath_args *a = args;

	return xdr_dec_opaque(&c->args, MNT3_PATHLEN, &a->p, &a->len) && !memchr(a->p, '\0', a->len);
}

static void mount3_dirpath_copy(const struct mount3_dirpath_args *a, char out[MNT3_PATHLEN + 1])
{
	memcpy(out, a->p, a->len);
	out[a->len] = '\0';
}

static void mount3_list_add(const char *host, const char *dir)
{
	pthread_mutex_lock(&mount3_lock);
	for (unsigned i = 0; i < mount3_n; i++)
		if (!strcmp(mount3_list[i].host, host) && !strcmp(mount3_list[i].dir, dir))
			goto out;
	if (mount3_n == MOUNT3_LIST_MAX) {
		char esc[LOG_ESCAPED_MAX];

		log_limited(&mount3_limit, LOG_NOTICE, "mount: mount list full (%u); %s:%s not recorded",
			    MOUNT3_LIST_MAX, host, log_escape_str(esc, sizeof(esc), dir));
		goto out;
	}
	snprintf(mount3_list[mount3_n].host, sizeof(mount3_list[0].host), "%s", host);
	snprintf(mount3_list[mount3_n].dir, sizeof(mount3_list[0].dir), "%s", dir);
	mount3_n++;
out:
	pthread_mutex_unlock(&mount3_lock);
}

/* Remove entries of host (and dir, unless NULL). */
static void mount3_list_remove(const char *host, const char *dir)
{
	pthread_mutex_lock(&mount3_lock);
	for (unsigned i = 0; i < mount3_n;) {
		if (!strcmp(mount3_list[i].host, host) && (!dir || !strcmp(mount3_list[i].dir, dir)))
			mount3_list[i] = mount3_list[--mount3_n];
		else
			i++;
	}
	pthread_mutex_unlock(&mount3_lock);
}

void mount3_list_release(void)
{
	pthread_mutex_lock(&mount3_lock);
	mount3_n = 0;
	pthread_mutex_unlock(&mount3_lock);
}

/* The export whose path is dir or the longest that contains it; *rest: what is below it. */
static const struct nfs_export *mount3_find(const struct nfs_exports *t, const char *dir, const char **rest)
{
	const struct nfs_export *best = nfs_exports_by_path(t, dir);
	size_t best_len = 0;

	*rest = "";
	if (best)
		return best;
	for (unsigned i = 0; t && i < t->n; i++) {
		const char *p = t->v[i].cfg->path;
		size_t n = strlen(p);

		if (n == 1 && p[0] == '/')
			n = 0; /* "/" contains everything */
		if (n >= best_len && !strncmp(dir, p, n) && dir[n] == '/' && (!best || n > best_len)) {
			best = &t->v[i];
			best_len = n;
		}
	}
	if (best) {
		*rest = dir + best_len;
		while (**rest == '/')
			(*rest)++;
	}
	return best;
}

/* Appendix I mountstat3 is a subset of nfsstat3's numbering. */
uint32_t nfs_errno_to_mountstat3(int err)
{
	switch (err) {
	case 0:
		return MNT3_OK;
	case EPERM:
		return MNT3ERR_PERM;
	case ENOENT:
	case ESTALE:
	case BE_EBADHANDLE:
		return MNT3ERR_NOENT;
	case EIO:
		return MNT3ERR_IO;
	case EACCES:
		return MNT3ERR_ACCES;
	case ENOTDIR:
		return MNT3ERR_NOTDIR;
	case EINVAL:
	case ELOOP:
		return MNT3ERR_INVAL;
	case ENAMETOOLONG:
		return MNT3ERR_NAMETOOLONG;
	case EOPNOTSUPP:
		return MNT3ERR_NOTSUPP;
	default:
		return MNT3ERR_SERVERFAULT;
	}
}

/* Handle of a directory below an export root (rest: "" for the root itself). Returns mountstat3. */
static uint32_t mount3_subdir_fh(const struct nfs_export *e, const char *rest, struct nfs_fh *fh)
{
	struct be_obj o = BE_OBJ_INIT;
	struct be_handle bh;
	int err = be_lookup_path(e->fs, rest, &o, NULL);

	if (!err) {
		err = be_handle(e->fs, &o, &bh);
		be_obj_put(e->fs, &o);
		if (!err && !nfs_fh_wrap(fh, e->id, &bh, NFS3_FHSIZE))
			err = BE_ESERVERFAULT;
	}
	be_end_call(e->fs);
	return nfs_errno_to_mountstat3(err); /* EACCES: a symlink, ".." or a mount on the way */
}

/* Appendix I MOUNTPROC3_MNT */
enum rpc_proc_status mount3_mnt_exec(struct rpc_call *c, void *args, void *res)
{
	const struct mount3_dirpath_args *a = args;
	struct mount3_mnt_res *r = res;
	char dir[MNT3_PATHLEN + 1], host[64], esc[LOG_ESCAPED_MAX];
	const struct export_opts *opts = NULL;
	const struct nfs_export *e;
	struct nfs_exports *t;
	const char *rest;
	int admit;

	mount3_dirpath_copy(a, dir);
	mount3_peer_host(c, host);
	t = nfs_exports_get();
	e = mount3_find(t, dir, &rest);
	admit = e ? nfs_export_admit(e, c, &opts) : 0;
	/* A flavor outside sec= is refused, except AUTH_SYS: the Linux client sends
	 * every MNT with it, and the reply's list tells it what to use for NFS.
	 * xprtsec= is the NFS calls' business (knfsd's mountd does not check it:
	 * MNT may come over plain TCP while NFS goes over TLS). */
	if (admit == EPERM && c->cred.flavor != RPC_AUTH_SYS && !(opts->sec & nfs_call_sec(c))) {
		nfs_exports_put(t);
		return RPC_PROC_TOOWEAK; /* RFC 5531 §9: AUTH_ERROR, AUTH_TOOWEAK */
	}
	if (e)
		rpc_call_acct(c, &e->st->acct); /* the export's calls and errors (nfs/common/export_stats.c) */
	if (!e)
		r->status = MNT3ERR_NOENT;
	else if (admit == EACCES)
		r->status = MNT3ERR_ACCES;
	else
		r->status = mount3_subdir_fh(e, rest, &r->fh);
	if (r->status == MNT3_OK) {
		r->nsec = (uint32_t)__builtin_popcount(opts->sec & ((1u << EXPORT_SEC_COUNT) - 1));
		memcpy(r->sec_order, opts->sec_order, sizeof(r->sec_order));
		mount3_list_add(host, dir);
		log_limited(&mount3_ok_limit, LOG_INFO, "mount: %s mounted %s", host,
			    log_escape_str(esc, sizeof(esc), dir));
	} else {
		log_limited(&mount3_limit, LOG_NOTICE, "mount: %s refused %s (mountstat3 %u)", host,
			    log_escape_str(esc, sizeof(esc), dir), r->status);
	}
	nfs_exports_put(t);
	return RPC_PROC_OK;
}

uint32_t mount3_auth_flavor(unsigned bit)
{
	/* RFC 2623 §2.7: AUTH_NONE, AUTH_SYS, then the Kerberos services as pseudo-flavors
	 * 390003 (krb5), 390004 (krb5i), 390005 (krb5p), in EXPORT_SEC_* bit order. */
	static const uint32_t flavor[EXPORT_SEC_COUNT] = { RPC_AUTH_NONE, RPC_AUTH_SYS, 390003, 390004, 390005 };

	return bit < EXPORT_SEC_COUNT ? flavor[bit] : RPC_AUTH_NONE;
}

void mount3_mnt_enc(struct rpc_call *c, const void *res)
{
	const struct mount3_mnt_res *r = res;

	nfs3_enc_status(c, r->status);
	if (r->status != MNT3_OK)
		return;
	/* mountres3_ok: fhandle3, auth_flavors<>. RFC 2623 §2.7: the server lists
	 * the flavors in its order of preference, the admin's sec= order (as
	 * mountd does, and as SECINFO lists them, RFC 8881 §2.6.3.1). */
	nfs3_enc_fh(&c->res, &r->fh);
	xdr_enc_u32(&c->res, r->nsec);
	for (uint32_t i = 0; i < r->nsec && i < EXPORT_SEC_COUNT; i++)
		xdr_enc_u32(&c->res, mount3_auth_flavor(r->sec_order[i]));
}

/* Appendix I MOUNTPROC3_DUMP: mountlist, cut short if the reply buffer is full (encoded here). */
enum rpc_proc_status mount3_dump_exec(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	pthread_mutex_lock(&mount3_lock);
	for (unsigned i = 0; i < mount3_n; i++) {
		size_t hl = strlen(mount3_list[i].host), dl = strlen(mount3_list[i].dir);
		size_t need = 4 + 4 + XDR_ALIGN(hl) + 4 + XDR_ALIGN(dl) + 4; /* + the final "false" */

		if ((size_t)(c->res.end - c->res.p) < need)
			break;
		xdr_enc_bool(&c->res, true);
		xdr_enc_opaque(&c->res, mount3_list[i].host, (uint32_t)hl);
		xdr_enc_opaque(&c->res, mount3_list[i].dir, (uint32_t)dl);
	}
	pthread_mutex_unlock(&mount3_lock);
	xdr_enc_bool(&c->res, false);
	return RPC_PROC_OK;
}

/* A call naming export dir counts among the export's calls (nfs/common/export_stats.c). */
static void mount3_acct(struct rpc_call *c, const char *dir)
{
	struct nfs_exports *t = nfs_exports_get();
	const char *rest;
	const struct nfs_export *e = mount3_find(t, dir, &rest);

	if (e)
		rpc_call_acct(c, &e->st->acct);
	nfs_exports_put(t);
}

/* Appendix I MOUNTPROC3_UMNT */
enum rpc_proc_status mount3_umnt_exec(struct rpc_call *c, void *args, void *res)
{
	char dir[MNT3_PATHLEN + 1], host[64];

	(void)res;
	mount3_dirpath_copy(args, dir);
	mount3_peer_host(c, host);
	mount3_list_remove(host, dir);
	mount3_acct(c, dir);
	return RPC_PROC_OK;
}

/* Appendix I MOUNTPROC3_UMNTALL */
enum rpc_proc_status mount3_umntall_exec(struct rpc_call *c, void *args, void *res)
{
	char host[64];

	(void)args;
	(void)res;
	mount3_peer_host(c, host);
	mount3_list_remove(host, NULL);
	return RPC_PROC_OK;
}

/* Appendix I MOUNTPROC3_EXPORT: exports, each with its groups (client specs as written; encoded here). */
enum rpc_proc_status mount3_export_exec(struct rpc_call *c, void *args, void *res)
{
	struct nfs_exports *t = nfs_exports_get();

	(void)args;
	(void)res;
	for (unsigned i = 0; t && i < t->n; i++) {
		const struct export *e = t->v[i].cfg;
		size_t pl = strlen(e->path), need = 4 + 4 + XDR_ALIGN(pl) + 4 + 4;
		struct xdr_enc mark = c->res;

		for (unsigned j = 0; j < e->nclients; j++)
			need += 4 + 4 + XDR_ALIGN(strnlen(e->clients[j].spec, sizeof(e->clients[j].spec)));
		if ((size_t)(c->res.end - c->res.p) < need)
			break; /* cut short rather than fail */
		xdr_enc_bool(&c->res, true);
		xdr_enc_opaque(&c->res, e->path, (uint32_t)pl);
		for (unsigned j = 0; j < e->nclients; j++) {
			const char *spec = e->clients[j].spec;

			xdr_enc_bool(&c->res, true);
			xdr_enc_opaque(&c->res, spec, (uint32_t)strnlen(spec, sizeof(e->clients[j].spec)));
		}
		xdr_enc_bool(&c->res, false);
		if (c->res.overflow)
			c->res = mark;
	}
	xdr_enc_bool(&c->res, false);
	nfs_exports_put(t);
	return RPC_PROC_OK;
}
