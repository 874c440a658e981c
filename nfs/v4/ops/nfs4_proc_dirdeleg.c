/*
 * nfs4_proc_dirdeleg.c - GET_DIR_DELEGATION (RFC 8881 §18.39): directory
 * delegations (§10.9), recall-only as knfsd grants them since Linux 6.19
 * except for added, removed and renamed entries and the directory's own
 * attributes, which a holder that asks is told of.
 *
 * A grant is a record of the server's one delegation table (nfs4_deleg.h:
 * nfs4_dtab_decide_dir, nfs4_dtab_grant_dir, under nfs4_proc_deleg.c's
 * lock) plus a change watch of the directory for local processes
 * (nfs4_deleg_watch_dir: inotify, after the fact; no lease, Linux has none
 * on directories). Of the notifications asked for, NOTIFY4_CHANGE_DIR_ATTRS
 * (for the attributes of gdda_dir_attributes it can tell, NFS4_DL_DIR_ATTRS_TOLD,
 * named back in gddr_dir_attributes; none of them: not granted), NOTIFY4_ADD_ENTRY,
 * NOTIFY4_REMOVE_ENTRY and NOTIFY4_RENAME_ENTRY are granted (§18.39.3 lets
 * the server grant fewer; not NOTIFY4_CHANGE_CHILD_ATTRS nor the cookie
 * verifier's). A SETATTR of the directory (NFSv4, NFSv3) then proceeds and
 * its holders granted CHANGE_DIR_ATTRS get CB_NOTIFY with the new values
 * (§20.4.1 notify_attr4, an empty ne_file: the directory itself), the setter
 * too, and so are a local process's changes of them (inotify's IN_ATTRIB,
 * after the fact, the values read when the event is seen: watch_dir_event);
 * an entry told to such a holder is followed by the directory's new
 * attributes, as knfsd sends them (nfs4_deleg_dir_note).
 * Entries: another NFSv4 client's
 * CREATE, OPEN creating or LINK in the directory (an NFSv3 client's CREATE,
 * MKDIR, SYMLINK, MKNOD or LINK too), its REMOVE (NFSv3 REMOVE, RMDIR) or
 * RENAME within the directory (across two: a removal from one, an addition to
 * the other, §18.26.4) is then told to the holder by CB_NOTIFY after the
 * change (nfs4_deleg_dir_note, §10.9.2, §20.4.3) instead of a recall; so is
 * the holder's own (§20.4.3). The removed entry's READDIR cookie
 * (nrm_old_entry_cookie, not optional) is not kept: 0 is sent, as knfsd's
 * CB_NOTIFY patches (2025) do. Every other change of the directory by another
 * client, an NFSv3 client or a local process (any) recalls the delegation
 * with CB_RECALL (nfs4_deleg_dir_changed), which the holder answers by
 * DELEGRETURN, or it is revoked one lease later, as a file's; so does a
 * notification the holder's callback queue cannot take, or one it does not
 * answer NFS4_OK (§10.9.1).
 *
 * §18.39.3 has a refused delegation answered NFS4ERR_DIRDELEG_UNAVAIL,
 * which would end the COMPOUND; the result's own non-fatal GDD4_UNAVAIL says
 * the same without that (as knfsd, and RFC 8881bis's correction), with
 * gddrnf_will_signal_deleg_avail false (no CB_RECALLABLE_OBJ_AVAIL). Off,
 * ([nfsv4] delegations or directory-delegations = no), every request is
 * answered GDD4_UNAVAIL, never NOTSUPP.
 */
#include <string.h>

#include "core/log.h"
#include "nfs/v4/nfs4.h"

static struct log_limit gdd_limit;

uint32_t nfs4_get_dir_delegation_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_gdd_args *a = args;
	struct nfs4_gdd_res *r = res;
	struct nfs4_svc *s = x->priv;
	struct nfs4_obj dir;
	uint32_t status;
	bool grace;
	int err;

	memset(r, 0, sizeof(*r));
	r->nf_status = GDD4_UNAVAIL;
	status = nfs4_obj_open(s, &x->cur.fh, &dir);
	if (status != NFS4_OK)
		return status;
	/* §18.39.3: the current filehandle is a directory. The pseudo file system's change only with the
	 * exports (no watch there): no delegation of them. */
	if (dir.kind == NFS4_OBJ_EXPORT && dir.attr.type != BE_DIR)
		status = NFS4ERR_NOTDIR;
	if (status != NFS4_OK || dir.kind != NFS4_OBJ_EXPORT)
		goto out;
	/* RFC 8881 §8.4.2: no new state while the grace period runs (as a non-reclaim OPEN). */
	grace = nfs4_grace_check(NFS4_GRACE_OPEN, NULL, 0, false) != NFS4_OK;
	/* gddr_cookieverf stays 0 (as knfsd's): READDIR's verifier is the backend's own. */
	/* RFC 8881 §18.39.3: of the notifications asked for, the entry ones (ADD, REMOVE, RENAME) and the
	 * directory's attributes (CHANGE_DIR_ATTRS, for those of gdda_dir_attributes it can tell) */
	r->dir_attrs.w[0] = a->dir_attrs.w[0];
	r->dir_attrs.w[1] = a->dir_attrs.w[1];
	if (!nfs4_deleg_grant_dir(s->clientid, x->minorversion, grace, x->cur.fh.data, x->cur.fh.len, a->notify.w[0],
				  r->dir_attrs.w, &r->notify.w[0], &r->sid))
		goto out;
	err = nfs4_deleg_watch_dir(dir.exp->fs, &dir.o, x->cur.fh.data, x->cur.fh.len);
	if (err == 0) {
		r->nf_status = GDD4_OK;
		goto out;
	}
	/* RFC 8881 §10.9: a local change would go unseen: no delegation without the watch. */
	nfs4_deleg_ungrant(&r->sid);
	memset(&r->sid, 0, sizeof(r->sid));
	memset(&r->notify, 0, sizeof(r->notify));
	memset(&r->dir_attrs, 0, sizeof(r->dir_attrs));
	log_limited(&gdd_limit, LOG_NOTICE, "nfs4: no directory delegation for client %llx: the directory cannot be "
		    "watched (%s)", (unsigned long long)s->clientid, strerror(err));
out:
	nfs4_obj_put(&dir);
	return status;
}

void nfs4_get_dir_delegation_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	(void)x, (void)status;
	nfs4_enc_get_dir_delegation(e, res);
}
