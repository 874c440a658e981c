/*
 * nfs4_proc_xattr.c - extended attributes (RFC 8276): GETXATTR (§8.4.1),
 * SETXATTR (§8.4.2), LISTXATTRS (§8.4.3), REMOVEXATTR (§8.4.4).
 *
 * User namespace only (§4: NFSv4 xattrs are the file system's "user." ones).
 * The Linux client strips "user." before sending a name and adds it to each
 * name LISTXATTRS returns, so names travel without the prefix and the backend
 * adds and strips it (backend.h). Objects of the pseudo file system and of
 * backends without xattrs have none: xattr_support is false there (§8.1) and
 * the operations answer NFS4ERR_NOTSUPP. As every operation: the caller's
 * squashed identity (the backend checks permission as the caller), ROFS for a
 * read-only export, change_info4 as nfs4_proc_mod.c makes it (not atomic).
 * Values and lists are read into the call's payload area (nfs4_read_buf(), as
 * READ) and sent inline: RFC 8267 §4.1 makes no xattr item DDP-eligible.
 */
#include <errno.h>
#include <string.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/xdr/nfs4_v42.h"

/* What the backend's listxattr may give (XATTR_LIST_MAX). */
#define NFS4_XATTR_LIST_MAX 65536u

/* RFC 8276 §8.4: the object (CURRENT_FH); write: SETXATTR, REMOVEXATTR. ob is put by the caller. */
static uint32_t xattr_obj(struct nfs4_ctx *x, struct nfs4_obj *ob, bool write)
{
	struct nfs4_svc *s = x->priv;
	uint32_t status = nfs4_obj_open(s, &x->cur.fh, ob);

	if (status == NFS4_OK && (ob->kind != NFS4_OBJ_EXPORT || !ob->exp->fs->ops->getxattr))
		status = NFS4ERR_NOTSUPP; /* §8.1: xattr_support false here */
	if (status == NFS4_OK && write && s->call && !(ob->opts && ob->opts->rw))
		status = NFS4ERR_ROFS;
	return status;
}

/* xattrkey4 (§8.3: a component4, UTF-8) as the backend's name: no NUL, at most
 * NFS4_XATTR_NAME_MAX bytes so that "user." + name fits XATTR_NAME_MAX. */
static uint32_t xattr_name(const struct nfs4_name *n, char out[NFS4_XATTR_NAME_MAX + 1])
{
	if (n->len == 0 || memchr(n->s, 0, n->len) || !nfs4_utf8_valid(n->s, n->len))
		return NFS4ERR_INVAL;
	if (n->len > NFS4_XATTR_NAME_MAX)
		return NFS4ERR_NAMETOOLONG;
	memcpy(out, n->s, n->len);
	out[n->len] = '\0';
	return NFS4_OK;
}

/* §8.2: an absent xattr is NFS4ERR_NOXATTR, a value too large NFS4ERR_XATTR2BIG. */
static uint32_t xattr_err(int err)
{
	if (err == ENODATA)
		return NFS4ERR_NOXATTR;
	if (err == ERANGE || err == E2BIG)
		return NFS4ERR_XATTR2BIG;
	return nfs_errno_to_nfsstat4(err);
}

/* A buffer for a value or a list: the call's payload area. */
static uint32_t xattr_buf(struct nfs4_ctx *x, uint32_t want, uint8_t **buf, uint32_t *cap)
{
	*buf = nfs4_read_buf(x, want, cap);
	return *buf && *cap ? NFS4_OK : NFS4ERR_SERVERFAULT;
}

/* §8.4.1.3: the value of the named xattr. */
uint32_t nfs4_getxattr_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_xattr_args *a = args;
	struct nfs4_getxattr_res *r = res;
	char name[NFS4_XATTR_NAME_MAX + 1];
	struct nfs4_obj ob;
	uint8_t *buf = NULL;
	uint32_t cap = 0;
	size_t len = 0;
	uint32_t status = xattr_obj(x, &ob, false);

	if (status == NFS4_OK)
		status = xattr_name(&a->name, name);
	if (status == NFS4_OK)
		status = xattr_buf(x, NFS4_XATTR_SIZE_MAX, &buf, &cap);
	if (status == NFS4_OK)
		status = xattr_err(be_getxattr(ob.exp->fs, &ob.cred, &ob.o, name, buf, cap, &len));
	r->value = buf;
	r->len = (uint32_t)len;
	nfs4_obj_put(&ob);
	return status;
}

/* §8.4.2.3: SETXATTR4_CREATE of an existing xattr is NFS4ERR_EXIST, SETXATTR4_REPLACE
 * of an absent one NFS4ERR_NOXATTR (the backend's EEXIST, ENODATA); a value larger
 * than the server keeps NFS4ERR_XATTR2BIG. */
uint32_t nfs4_setxattr_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_xattr_args *a = args;
	struct nfs4_cinfo_res *r = res;
	char name[NFS4_XATTR_NAME_MAX + 1];
	enum be_xattr_how how = a->option == SETXATTR4_CREATE    ? BE_XATTR_CREATE
				: a->option == SETXATTR4_REPLACE ? BE_XATTR_REPLACE
								 : BE_XATTR_EITHER;
	struct nfs4_obj ob;
	uint32_t status = xattr_obj(x, &ob, true);

	if (status == NFS4_OK)
		status = xattr_name(&a->name, name);
	if (status == NFS4_OK && a->value_len > NFS4_XATTR_SIZE_MAX)
		status = NFS4ERR_XATTR2BIG;
	if (status == NFS4_OK)
		status = xattr_err(be_setxattr(ob.exp->fs, &ob.cred, &ob.o, name, a->value, a->value_len, how));
	if (status == NFS4_OK)
		nfs4_mod_done(&ob, &r->cinfo, NULL); /* the file's own change attribute */
	nfs4_obj_put(&ob);
	return status;
}

/* §8.4.3.3: the names from the cookie on (our cookie: the index of the next name;
 * past the list: NFS4ERR_BAD_COOKIE), as many as lxa_maxcount lets
 * LISTXATTRS4resok hold (cookie, array count and eof included); not even one:
 * NFS4ERR_TOOSMALL. A list changed between two calls may skip or repeat a name. */
static uint32_t list_window(const struct nfs4_listxattrs_args *a, const char *buf, size_t len,
			    struct nfs4_listxattrs_res *r)
{
	uint64_t used = 8 + 4 + 4;
	size_t off = 0, n;
	uint64_t idx = 0;

	for (; idx < a->cookie && off < len; idx++)
		off += strnlen(buf + off, len - off) + 1;
	if (idx < a->cookie)
		return NFS4ERR_BAD_COOKIE;
	r->names = buf;
	r->first = (uint32_t)idx;
	r->skip = (uint32_t)off;
	for (; off < len; off += n + 1, r->count++) {
		n = strnlen(buf + off, len - off);
		if (n == len - off || used + nfs4_xattrkey_size((uint32_t)n) > a->maxcount)
			break; /* not NUL-terminated (never from a backend), or full */
		used += nfs4_xattrkey_size((uint32_t)n);
	}
	r->eof = off >= len;
	r->cookie = a->cookie + r->count;
	return r->eof || r->count ? NFS4_OK : NFS4ERR_TOOSMALL;
}

uint32_t nfs4_listxattrs_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_listxattrs_args *a = args;
	struct nfs4_listxattrs_res *r = res;
	struct nfs4_obj ob;
	uint8_t *buf = NULL;
	uint32_t cap = 0;
	size_t len = 0;
	uint32_t status = xattr_obj(x, &ob, false);

	if (status == NFS4_OK)
		status = xattr_buf(x, NFS4_XATTR_LIST_MAX, &buf, &cap);
	if (status == NFS4_OK)
		status = xattr_err(be_listxattr(ob.exp->fs, &ob.cred, &ob.o, (char *)buf, cap, &len));
	if (status == NFS4_OK)
		status = list_window(a, (const char *)buf, len, r);
	nfs4_obj_put(&ob);
	return status;
}

/* §8.4.4.3: an absent xattr is NFS4ERR_NOXATTR. */
uint32_t nfs4_removexattr_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_xattr_args *a = args;
	struct nfs4_cinfo_res *r = res;
	char name[NFS4_XATTR_NAME_MAX + 1];
	struct nfs4_obj ob;
	uint32_t status = xattr_obj(x, &ob, true);

	if (status == NFS4_OK)
		status = xattr_name(&a->name, name);
	if (status == NFS4_OK)
		status = xattr_err(be_removexattr(ob.exp->fs, &ob.cred, &ob.o, name));
	if (status == NFS4_OK)
		nfs4_mod_done(&ob, &r->cinfo, NULL); /* the file's own change attribute */
	nfs4_obj_put(&ob);
	return status;
}
