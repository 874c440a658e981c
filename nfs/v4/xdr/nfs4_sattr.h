/*
 * nfs4_sattr.h - the fattr4 a client sets (SETATTR, CREATE's createattrs,
 * OPEN's createattrs; RFC 8881 §18.30, §18.4, §18.16): bitmap4 + attrlist4
 * -> a backend-neutral struct be_sattr plus the bitmap of what is set. Pure
 * and bounds-checked; owners go through nfs4_owner.h.
 *
 * Settable here: size, mode, owner, owner_group, time_access_set,
 * time_modify_set. Other attributes the protocol lets a client set (acl,
 * archive, hidden, mimetype, system, time_backup, time_create, the 4.1/4.2
 * ones) are NFS4ERR_ATTRNOTSUPP; read-only ones NFS4ERR_INVAL (RFC 8881
 * §18.30.3).
 */
#ifndef RNFSD_NFS4_SATTR_H
#define RNFSD_NFS4_SATTR_H

#include <stdint.h>

#include "backend/backend.h"
#include "nfs/v4/xdr/nfs4_xdr.h"

struct nfs4_sattr {
	struct be_sattr sa;          /* what to apply (BE_SET_* in sa.mask) */
	struct nfs4_bitmap attrsset; /* the attributes named (SETATTR4res attrsset, CREATE4resok attrset) */
	/* SETATTR only (nfs4_sattr_dec_setattr): sa.atime / sa.mtime came from
	 * time_deleg_access / time_deleg_modify (RFC 9754 §5.2), whose rules the
	 * operation applies (nfs4_dtab_set_times). */
	bool deleg_atime, deleg_mtime;
};

/*
 * Decode fattr4 obj_attributes at d into *out. Returns an nfsstat4:
 *   NFS4_OK;
 *   NFS4ERR_BADXDR      the fattr4 does not decode (bitmap4 or attrlist4 cut
 *                       short, a settime4 discriminant unknown, values not
 *                       filling attrlist4 exactly); d's position is then
 *                       undefined and the operation's decode fails;
 *   NFS4ERR_ATTRNOTSUPP an attribute rnfsd does not set (or does not know);
 *   NFS4ERR_INVAL       a read-only attribute, or nseconds > 999999999;
 *   NFS4ERR_BADOWNER    an owner/owner_group string that maps to no id.
 * For every status but BADXDR, d is past the whole fattr4 (the caller's
 * further arguments decode normally; OPEN's claim follows its createattrs).
 * out is fully written on NFS4_OK, unspecified otherwise.
 */
uint32_t nfs4_sattr_dec(struct xdr_dec *d, struct nfs4_sattr *out);
/* The same for SETATTR, which also takes RFC 9754's time_deleg_access and
 * time_deleg_modify (nfstime4; INVAL beside time_access_set /
 * time_modify_set of the same time). */
uint32_t nfs4_sattr_dec_setattr(struct xdr_dec *d, struct nfs4_sattr *out);

/* Does the bitmap4 at d set bits past the words nfs4_dec_bitmap() keeps
 * (attributes no rnfsd supports)? d is not moved; a short bitmap says no. */
bool nfs4_bitmap_has_extra(const struct xdr_dec *d);

/* The attributes nfs4_sattr_dec() accepts (suppattr_exclcreat's superset). */
void nfs4_sattr_supported(struct nfs4_bitmap *out);

#endif
