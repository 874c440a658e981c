/*
 * nfs4_attr.h - fattr4 encoding (RFC 8881 §5, §3.3.7; RFC 7530 §5): which
 * attributes rnfsd supports, and a bitmap4 plus an object's struct be_attr
 * (and the server's facts) -> fattr4 {attrmask, attr_vals}. Pure: the caller
 * gathers the inputs (the backend's attributes, the handle, the export's
 * limits); nothing here calls a backend or allocates.
 */
#ifndef RNFSD_NFS4_ATTR_H
#define RNFSD_NFS4_ATTR_H

#include <stdint.h>

#include "backend/backend.h"
#include "nfs/v4/xdr/nfs4_xdr.h"

/* What NFSv4.1 and 4.2 add about an object's file system (RFC 8881 §5.12, RFC 7862 §12.2, RFC 8276 §8.1). */
struct nfs4_fs_facts {
	uint32_t clone_blksize; /* clone_blksize (§12.2.1); 0: not given (no CLONE, or unknown) */
	uint32_t change_type;   /* change_attr_type4 (§12.2.3) */
	bool xattr_support;     /* RFC 8276 §8.1 */
	uint32_t layout_type;   /* fs_layout_type's one entry (RFC 8881 §5.12.1); 0: an empty list (no pNFS) */
	uint32_t layout_blksize; /* layout_blksize (§5.12.4); 0: not given */
};

/* What one object's fattr4 is made from. */
struct nfs4_attr_src {
	const struct be_attr *a;    /* the object's attributes (only the BE_AT_* valid bits are used) */
	const struct nfs_fh *fh;    /* its handle (FATTR4_FILEHANDLE), or NULL */
	uint64_t mounted_on_fileid; /* RFC 8881 §5.8.2.23: fileid of the mount point (its own if none) */
	uint32_t minorversion;      /* suppattr_exclcreat is 4.1+ (RFC 8881 §5.8.1.14) */
	uint32_t lease_time;        /* seconds (RFC 8881 §5.8.1.11) */
	uint32_t maxread, maxwrite; /* bytes (RFC 8881 §5.8.2.20, §5.8.2.21) */
	uint64_t maxfilesize;
	uint32_t rdattr_error;      /* nfsstat4 for FATTR4_RDATTR_ERROR (READDIR entries) */
	const struct be_statfs *sf; /* the file system's space and file counts (FATTR4_FILES_*,
	                               FATTR4_SPACE_AVAIL/FREE/TOTAL), or NULL: left out */
	const struct nfs4_fs_facts *facts; /* NFSv4.2 facts of the object's file system, or NULL: left out */
	bool settable;              /* supported_attrs also names the write-only attributes SETATTR
	                               takes (time_access_set, time_modify_set): the Linux client
	                               sends only attributes the server lists there */
};

/* The attributes rnfsd can return for minorversion (supported_attrs, RFC 8881 §5.8.1.1). */
void nfs4_attr_supported(uint32_t minorversion, struct nfs4_bitmap *out);

/*
 * Encode fattr4 for the attributes in req that are supported and available
 * in src (RFC 8881 §5: values in ascending attribute order, the bitmap naming
 * exactly those encoded). The rest of req is silently left out (§18.7.3).
 */
void nfs4_attr_encode(struct xdr_enc *e, const struct nfs4_bitmap *req, const struct nfs4_attr_src *src);

/*
 * A client's attrlist4 (VERIFY, NVERIFY) decoded against req: true when it
 * holds exactly one well-formed value of each attribute req names, in
 * ascending order (RFC 8881 §3.3.7); every attribute in req must be one
 * nfs4_attr_supported() lists (the caller answers ATTRNOTSUPP first).
 */
bool nfs4_attr_vals_dec(uint32_t minorversion, const struct nfs4_bitmap *req, const uint8_t *vals, uint32_t len);

/* nfs_ftype4 of a backend type (0 for BE_TYPE_NONE). */
uint32_t nfs4_ftype(enum be_type t);

#endif
