/*
 * cred.c - the caller's identity for the backend: an RPC credential mapped
 * by the export's squashing rules (exports(5), knfsd's nfsd_setuser()).
 * How the backend applies it (per-thread fsuid, a Ceph UserPerm) is its
 * business; here only the numbers are decided.
 */
#include <string.h>

#include "nfs/common/nfs_common.h"

void nfs_cred_map(const struct rpc_cred *cred, const struct export_opts *o, struct be_cred *out)
{
	memset(out, 0, sizeof(*out));
	/* RPCSEC_GSS: the principal's mapped uid (rpc/rpc_gss_krb5.c), squashed like AUTH_SYS's. */
	if ((cred->flavor != RPC_AUTH_SYS && cred->flavor != RPC_AUTH_GSS) || o->squash == EXPORT_ALL_SQUASH) {
		out->uid = o->anonuid;
		out->gid = o->anongid;
		return;
	}
	out->uid = cred->uid;
	out->gid = cred->gid;
	out->ngroups = cred->ngroups <= BE_CRED_MAX_GROUPS ? cred->ngroups : BE_CRED_MAX_GROUPS;
	memcpy(out->groups, cred->groups, out->ngroups * sizeof(out->groups[0]));
	if (o->squash != EXPORT_ROOT_SQUASH)
		return;
	/* root_squash: uid 0 and gid 0 (also as a supplementary group) become anonymous */
	if (out->uid == 0)
		out->uid = o->anonuid;
	if (out->gid == 0)
		out->gid = o->anongid;
	for (uint32_t i = 0; i < out->ngroups; i++)
		if (out->groups[i] == 0)
			out->groups[i] = o->anongid;
}
