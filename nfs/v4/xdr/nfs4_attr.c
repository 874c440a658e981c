/*
 * nfs4_attr.c - fattr4 encoding (see nfs4_attr.h). Each attribute is one
 * case of a switch, in two groups: the server's constant facts and the
 * object's own attributes; an attribute that cannot be given for this object
 * (its BE_AT_* bit missing) is dropped from the returned bitmap, as RFC 8881
 * §18.7.3 asks of GETATTR. Owners are numeric strings by default (as Linux
 * with nfs4_disable_idmapping; RFC 8881 §5.9 allows a numeric form), or
 * name@domain (nfs4_owner.c).
 */
#include <stdio.h>

#include "nfs/v4/xdr/nfs4_attr.h"
#include "nfs/v4/xdr/nfs4_owner.h"

/* RFC 8881 §5.6 (REQUIRED) and §5.7 (RECOMMENDED) attributes rnfsd returns. */
static const uint8_t nfs4_attr_list[] = {
	FATTR4_SUPPORTED_ATTRS, FATTR4_TYPE, FATTR4_FH_EXPIRE_TYPE, FATTR4_CHANGE, FATTR4_SIZE,
	FATTR4_LINK_SUPPORT, FATTR4_SYMLINK_SUPPORT, FATTR4_NAMED_ATTR, FATTR4_FSID,
	FATTR4_UNIQUE_HANDLES, FATTR4_LEASE_TIME, FATTR4_RDATTR_ERROR, FATTR4_CANSETTIME,
	FATTR4_CASE_INSENSITIVE, FATTR4_CASE_PRESERVING, FATTR4_CHOWN_RESTRICTED,
	FATTR4_FILEHANDLE, FATTR4_FILEID, FATTR4_HOMOGENEOUS, FATTR4_MAXFILESIZE, FATTR4_MAXNAME,
	FATTR4_MAXREAD, FATTR4_MAXWRITE, FATTR4_MODE, FATTR4_NO_TRUNC, FATTR4_NUMLINKS,
	FATTR4_OWNER, FATTR4_OWNER_GROUP, FATTR4_RAWDEV, FATTR4_SPACE_USED, FATTR4_TIME_ACCESS,
	FATTR4_TIME_DELTA, FATTR4_TIME_METADATA, FATTR4_TIME_MODIFY, FATTR4_MOUNTED_ON_FILEID,
	FATTR4_FILES_AVAIL, FATTR4_FILES_FREE, FATTR4_FILES_TOTAL, FATTR4_SPACE_AVAIL, FATTR4_SPACE_FREE,
	FATTR4_SPACE_TOTAL,
};

void nfs4_attr_supported(uint32_t minorversion, struct nfs4_bitmap *out)
{
	*out = (struct nfs4_bitmap){ { 0 } };
	for (size_t i = 0; i < sizeof(nfs4_attr_list); i++)
		nfs4_bitmap_set(out, nfs4_attr_list[i]);
	/* RFC 8881 §5.8.1.14: a 4.1 attribute; its value is the set EXCLUSIVE4_1 may set. */
	if (minorversion >= 1) {
		nfs4_bitmap_set(out, FATTR4_SUPPATTR_EXCLCREAT);
		/* RFC 8881 §5.12.1, §5.12.4: pNFS, 4.1 attributes (an empty list on exports without layouts) */
		nfs4_bitmap_set(out, FATTR4_FS_LAYOUT_TYPES);
		nfs4_bitmap_set(out, FATTR4_LAYOUT_BLKSIZE);
	}
	/* RFC 7862 §12.2, RFC 8276 §8.1: 4.2 attributes (space_freed and sec_label are not answered). */
	if (minorversion >= 2) {
		nfs4_bitmap_set(out, FATTR4_CLONE_BLKSIZE);
		nfs4_bitmap_set(out, FATTR4_CHANGE_ATTR_TYPE);
		nfs4_bitmap_set(out, FATTR4_XATTR_SUPPORT);
		nfs4_bitmap_set(out, FATTR4_OPEN_ARGUMENTS);
		/* RFC 9754 §5.2: the delegated times, set by an *_ATTRS_DELEG
		 * delegation's holder (SETATTR) and asked of it (CB_GETATTR);
		 * GETATTR answers time_access / time_modify, not these. */
		nfs4_bitmap_set(out, FATTR4_TIME_DELEG_ACCESS);
		nfs4_bitmap_set(out, FATTR4_TIME_DELEG_MODIFY);
	}
}

uint32_t nfs4_ftype(enum be_type t)
{
	/* enum be_type follows nfs_ftype4's numbering (backend.h). */
	return t >= BE_REG && t <= BE_FIFO ? (uint32_t)t : 0;
}

/* nfstime4 (RFC 8881 §3.3.1): int64 seconds, uint32 nseconds. */
static void enc_time(struct xdr_enc *e, const struct be_time *t)
{
	xdr_enc_u64(e, (uint64_t)t->sec);
	xdr_enc_u32(e, t->nsec);
}

/* utf8str_mixed owner/owner_group (RFC 8881 §5.9): a decimal id, or
 * name@domain with [nfsv4] idmap = names (nfs4_owner.c). */
static void enc_id(struct xdr_enc *e, uint32_t id, bool group)
{
	char buf[NFS4_OWNER_STR_MAX];
	uint32_t n = nfs4_owner_from_id(id, group, buf, sizeof(buf));

	xdr_enc_opaque(e, buf, n);
}

/* The server's constant facts. false: not one of them. */
static bool enc_fact(struct xdr_enc *e, uint32_t attr, const struct nfs4_attr_src *s)
{
	switch (attr) {
	case FATTR4_FH_EXPIRE_TYPE: xdr_enc_u32(e, FH4_PERSISTENT); break;
	case FATTR4_LINK_SUPPORT: /* fall through: hard links, symlinks, one case */
	case FATTR4_SYMLINK_SUPPORT:
	case FATTR4_UNIQUE_HANDLES:
	case FATTR4_CANSETTIME:
	case FATTR4_CASE_PRESERVING:
	case FATTR4_CHOWN_RESTRICTED:
	case FATTR4_HOMOGENEOUS:
	case FATTR4_NO_TRUNC: xdr_enc_bool(e, true); break;
	case FATTR4_NAMED_ATTR:
	case FATTR4_CASE_INSENSITIVE: xdr_enc_bool(e, false); break;
	case FATTR4_LEASE_TIME: xdr_enc_u32(e, s->lease_time); break;
	case FATTR4_RDATTR_ERROR: xdr_enc_u32(e, s->rdattr_error); break;
	case FATTR4_MAXFILESIZE: xdr_enc_u64(e, s->maxfilesize); break;
	case FATTR4_MAXNAME: xdr_enc_u32(e, NFS4_NAME_MAX); break;
	case FATTR4_MAXREAD: xdr_enc_u64(e, s->maxread); break;
	case FATTR4_MAXWRITE: xdr_enc_u64(e, s->maxwrite); break;
	case FATTR4_TIME_DELTA: { /* nanosecond timestamps */
		struct be_time t = { 0, 1 };
		enc_time(e, &t);
		break;
	}
	default: return false;
	}
	return true;
}

/* The object's attributes; false: not available for it. */
static bool enc_obj(struct xdr_enc *e, uint32_t attr, const struct nfs4_attr_src *s)
{
	const struct be_attr *a = s->a;
	uint32_t v = a->valid;

	switch (attr) {
	case FATTR4_TYPE: if (!(v & BE_AT_TYPE)) return false; xdr_enc_u32(e, nfs4_ftype(a->type)); break;
	case FATTR4_CHANGE: if (!(v & BE_AT_CHANGE)) return false; xdr_enc_u64(e, a->change); break;
	case FATTR4_SIZE: if (!(v & BE_AT_SIZE)) return false; xdr_enc_u64(e, a->size); break;
	case FATTR4_FSID: if (!(v & BE_AT_FSID)) return false;
		xdr_enc_u64(e, a->fsid_major); xdr_enc_u64(e, a->fsid_minor); break;
	case FATTR4_FILEHANDLE: if (!s->fh) return false; nfs4_enc_fh(e, s->fh); break;
	case FATTR4_FILEID: if (!(v & BE_AT_FILEID)) return false; xdr_enc_u64(e, a->fileid); break;
	case FATTR4_MODE: if (!(v & BE_AT_MODE)) return false; xdr_enc_u32(e, a->mode & 07777u); break;
	case FATTR4_NUMLINKS: if (!(v & BE_AT_NLINK)) return false; xdr_enc_u32(e, a->nlink); break;
	case FATTR4_OWNER: if (!(v & BE_AT_UID)) return false; enc_id(e, a->uid, false); break;
	case FATTR4_OWNER_GROUP: if (!(v & BE_AT_GID)) return false; enc_id(e, a->gid, true); break;
	case FATTR4_RAWDEV: if (!(v & BE_AT_RDEV)) return false;
		xdr_enc_u32(e, a->rdev_major); xdr_enc_u32(e, a->rdev_minor); break;
	case FATTR4_SPACE_USED: if (!(v & BE_AT_SPACE)) return false; xdr_enc_u64(e, a->space_used); break;
	case FATTR4_TIME_ACCESS: if (!(v & BE_AT_ATIME)) return false; enc_time(e, &a->atime); break;
	case FATTR4_TIME_METADATA: if (!(v & BE_AT_CTIME)) return false; enc_time(e, &a->ctime); break;
	case FATTR4_TIME_MODIFY: if (!(v & BE_AT_MTIME)) return false; enc_time(e, &a->mtime); break;
	case FATTR4_MOUNTED_ON_FILEID: xdr_enc_u64(e, s->mounted_on_fileid); break;
	default: return false;
	}
	return true;
}

/* RFC 8881 §5.8.2.3-§5.8.2.5, §5.8.2.31-§5.8.2.33 (RFC 7530 §5.8.2): the file
 * system's file counts and bytes, for the caller (avail) and in all (free, total). */
static bool enc_fs(struct xdr_enc *e, uint32_t attr, const struct nfs4_attr_src *s)
{
	const struct be_statfs *f = s->sf;

	if (!f)
		return false;
	switch (attr) {
	case FATTR4_FILES_AVAIL: xdr_enc_u64(e, f->avail_files); break;
	case FATTR4_FILES_FREE: xdr_enc_u64(e, f->free_files); break;
	case FATTR4_FILES_TOTAL: xdr_enc_u64(e, f->total_files); break;
	case FATTR4_SPACE_AVAIL: xdr_enc_u64(e, f->avail_bytes); break;
	case FATTR4_SPACE_FREE: xdr_enc_u64(e, f->free_bytes); break;
	case FATTR4_SPACE_TOTAL: xdr_enc_u64(e, f->total_bytes); break;
	default: return false;
	}
	return true;
}

/* The NFSv4.1 and 4.2 facts of the object's file system (nfs4_fs_facts_of()). */
static bool enc_v42(struct xdr_enc *e, uint32_t attr, const struct nfs4_attr_src *s)
{
	const struct nfs4_fs_facts *f = s->facts;

	if (!f)
		return false;
	switch (attr) {
	case FATTR4_CLONE_BLKSIZE: if (!f->clone_blksize) return false; xdr_enc_u32(e, f->clone_blksize); break;
	case FATTR4_CHANGE_ATTR_TYPE: xdr_enc_u32(e, f->change_type); break;
	case FATTR4_XATTR_SUPPORT: xdr_enc_bool(e, f->xattr_support); break;
	case FATTR4_FS_LAYOUT_TYPES: /* layouttype4<> */
		xdr_enc_u32(e, f->layout_type ? 1 : 0);
		if (f->layout_type)
			xdr_enc_u32(e, f->layout_type);
		break;
	case FATTR4_LAYOUT_BLKSIZE: if (!f->layout_blksize) return false; xdr_enc_u32(e, f->layout_blksize); break;
	default: return false;
	}
	return true;
}

/* RFC 9754 §3.1 open_arguments4: five one-word bitmaps of the values OPEN
 * takes (nfs4_proc_open.c): share_access READ, WRITE, BOTH; share_deny
 * NONE..BOTH; the delegation wants it honours (READ, WRITE, ANY, NO_DELEG,
 * CANCEL, DELEG_TIMESTAMPS (20, §5.2) and OPEN_XOR_DELEGATION (21, §4): not
 * the signals); the claims but CLAIM_DELEGATE_PREV and CLAIM_DELEG_PREV_FH
 * (DELEGPURGE is NOTSUPP); every create mode. */
static const uint32_t nfs4_open_args[5] = { 0xeu, 0xfu, 0x30003eu, 0x37u, 0xfu };

static bool enc_open_args(struct xdr_enc *e, uint32_t attr)
{
	if (attr != FATTR4_OPEN_ARGUMENTS)
		return false;
	for (unsigned i = 0; i < 5; i++) {
		xdr_enc_u32(e, 1);
		xdr_enc_u32(e, nfs4_open_args[i]);
	}
	return true;
}

/* supported_attrs and suppattr_exclcreat: bitmaps inside the values. */
static bool enc_bitmaps(struct xdr_enc *e, uint32_t attr, const struct nfs4_attr_src *s)
{
	struct nfs4_bitmap b;

	if (attr == FATTR4_SUPPORTED_ATTRS) {
		nfs4_attr_supported(s->minorversion, &b);
		/* RFC 8881 §5.8.1.1: supported_attrs lists settable write-only
		 * attributes too (§5.8.2.37, §5.8.2.38; knfsd lists them); they are
		 * never encoded here (GETATTR of one is INVAL, §18.7.3). */
		if (s->settable) {
			nfs4_bitmap_set(&b, FATTR4_TIME_ACCESS_SET);
			nfs4_bitmap_set(&b, FATTR4_TIME_MODIFY_SET);
		}
	} else if (attr == FATTR4_SUPPATTR_EXCLCREAT) {
		/* RFC 8881 §18.16.3: what EXCLUSIVE4_1 may set with the verifier. */
		b = (struct nfs4_bitmap){ { 0 } };
		nfs4_bitmap_set(&b, FATTR4_SIZE);
		nfs4_bitmap_set(&b, FATTR4_MODE);
		nfs4_bitmap_set(&b, FATTR4_OWNER);
		nfs4_bitmap_set(&b, FATTR4_OWNER_GROUP);
	} else {
		return false;
	}
	nfs4_enc_bitmap(e, &b);
	return true;
}

/* The XDR shape of a supported attribute's value (RFC 8881 §5.8, §3.3): its
 * bytes (0: variable, see dec_value); bools are checked to be 0 or 1. */
static uint32_t value_size(uint32_t attr, bool *is_bool)
{
	*is_bool = false;
	switch (attr) {
	case FATTR4_LINK_SUPPORT: case FATTR4_SYMLINK_SUPPORT: case FATTR4_NAMED_ATTR:
	case FATTR4_UNIQUE_HANDLES: case FATTR4_CANSETTIME: case FATTR4_CASE_INSENSITIVE:
	case FATTR4_CASE_PRESERVING: case FATTR4_CHOWN_RESTRICTED: case FATTR4_HOMOGENEOUS:
	case FATTR4_NO_TRUNC: case FATTR4_XATTR_SUPPORT: *is_bool = true; return 4;
	case FATTR4_TYPE: case FATTR4_FH_EXPIRE_TYPE: case FATTR4_LEASE_TIME: case FATTR4_RDATTR_ERROR:
	case FATTR4_MAXNAME: case FATTR4_MODE: case FATTR4_NUMLINKS: case FATTR4_CLONE_BLKSIZE:
	case FATTR4_CHANGE_ATTR_TYPE: case FATTR4_LAYOUT_BLKSIZE: return 4;
	case FATTR4_FSID: return 16; /* fsid4 */
	case FATTR4_RAWDEV: return 8; /* specdata4 */
	case FATTR4_TIME_ACCESS: case FATTR4_TIME_DELTA: case FATTR4_TIME_METADATA:
	case FATTR4_TIME_MODIFY: case FATTR4_TIME_DELEG_ACCESS: case FATTR4_TIME_DELEG_MODIFY:
		return 12; /* nfstime4 */
	case FATTR4_SUPPORTED_ATTRS: case FATTR4_SUPPATTR_EXCLCREAT: case FATTR4_FILEHANDLE:
	case FATTR4_OWNER: case FATTR4_OWNER_GROUP: case FATTR4_OPEN_ARGUMENTS: case FATTR4_FS_LAYOUT_TYPES: return 0;
	default: return 8; /* the rest of nfs4_attr_list: uint64_t */
	}
}

/* One value of attr at d, consumed whole; false if it is not there as XDR has it. */
static bool dec_value(struct xdr_dec *d, uint32_t attr)
{
	struct nfs4_bitmap b;
	const uint8_t *p;
	uint32_t len, n;
	bool is_bool, v;

	if ((n = value_size(attr, &is_bool)) != 0)
		return is_bool ? xdr_dec_bool(d, &v) : xdr_dec_inline(d, n) != NULL;
	if (attr == FATTR4_SUPPORTED_ATTRS || attr == FATTR4_SUPPATTR_EXCLCREAT)
		return nfs4_dec_bitmap(d, &b); /* bitmap4 */
	if (attr == FATTR4_OPEN_ARGUMENTS) { /* open_arguments4: five bitmap4 */
		for (unsigned i = 0; i < 5; i++)
			if (!nfs4_dec_bitmap(d, &b))
				return false;
		return true;
	}
	if (attr == FATTR4_FS_LAYOUT_TYPES) /* layouttype4<>: a count, then that many words */
		return xdr_dec_u32(d, &n) && n <= xdr_dec_remaining(d) / 4 && xdr_dec_inline(d, (size_t)n * 4) != NULL;
	/* nfs_fh4 is opaque<NFS4_FHSIZE>; owner and owner_group utf8str_mixed */
	return xdr_dec_opaque(d, attr == FATTR4_FILEHANDLE ? NFS4_FHSIZE : UINT32_MAX, &p, &len);
}

bool nfs4_attr_vals_dec(uint32_t minorversion, const struct nfs4_bitmap *req, const uint8_t *vals, uint32_t len)
{
	struct nfs4_bitmap sup;
	struct xdr_dec d;

	nfs4_attr_supported(minorversion, &sup);
	xdr_dec_init(&d, vals, len);
	for (uint32_t attr = 0; attr < 32u * NFS4_BITMAP_WORDS; attr++) {
		if (!nfs4_bitmap_isset(req, attr))
			continue;
		if (!nfs4_bitmap_isset(&sup, attr) || !dec_value(&d, attr))
			return false;
	}
	return xdr_dec_remaining(&d) == 0; /* RFC 8881 §3.3.7: attrlist4 holds exactly the values */
}

void nfs4_attr_encode(struct xdr_enc *e, const struct nfs4_bitmap *req, const struct nfs4_attr_src *s)
{
	struct nfs4_bitmap sup, done = { { 0 } };
	size_t off_mask = xdr_enc_len(e), off_len, start;

	nfs4_attr_supported(s->minorversion, &sup);
	/* The mask is patched once the values are known: reserve its largest size. */
	for (uint32_t i = 0; i <= NFS4_BITMAP_WORDS; i++)
		xdr_enc_u32(e, 0);
	off_len = xdr_enc_len(e);
	xdr_enc_u32(e, 0);
	start = xdr_enc_len(e);
	for (uint32_t attr = 0; attr < 32u * NFS4_BITMAP_WORDS && !e->overflow; attr++) {
		if (!nfs4_bitmap_isset(req, attr) || !nfs4_bitmap_isset(&sup, attr))
			continue;
		if (enc_bitmaps(e, attr, s) || enc_fact(e, attr, s) || enc_obj(e, attr, s) || enc_fs(e, attr, s) ||
		    enc_v42(e, attr, s) || enc_open_args(e, attr))
			nfs4_bitmap_set(&done, attr);
	}
	xdr_enc_patch_u32(e, off_len, (uint32_t)(xdr_enc_len(e) - start));
	xdr_enc_patch_u32(e, off_mask, NFS4_BITMAP_WORDS);
	for (uint32_t i = 0; i < NFS4_BITMAP_WORDS; i++)
		xdr_enc_patch_u32(e, off_mask + 4 + 4 * i, done.w[i]);
}
