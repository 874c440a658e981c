/*
 * nfs4_mod.h - the NFSv4 operations that change the namespace and
 * attributes, and the attribute comparisons: CREATE (RFC 8881 §18.4), LINK
 * (§18.9), REMOVE (§18.25), RENAME (§18.26), SETATTR (§18.30), VERIFY
 * (§18.31), NVERIFY (§18.15). Their XDR is in
 * nfs4_xdr_mod.c, their execute steps in nfs4_proc_mod.c.
 */
#ifndef RNFSD_NFS4_MOD_H
#define RNFSD_NFS4_MOD_H

#include "nfs/v4/compound/nfs4_compound.h"
#include "nfs/v4/xdr/nfs4_sattr.h"

/* CREATE4args (RFC 8881 §18.4.1): createtype4 objtype, component4 objname, fattr4 createattrs. */
struct nfs4_create_args {
	uint32_t type;            /* nfs_ftype4 */
	struct nfs4_name linkdata; /* NF4LNK: linktext4, inside the message */
	uint32_t major, minor;    /* NF4BLK, NF4CHR: specdata4 */
	struct nfs4_name name;
	struct nfs4_sattr attrs;
	uint32_t attrs_status;    /* nfs4_sattr_dec()'s status other than BADXDR */
};
/* REMOVE4args, LINK4args: one component4. RENAME4args: two. */
struct nfs4_rename_args {
	struct nfs4_name oldname, newname;
};
/* SETATTR4args (§18.30.1): stateid4, fattr4. */
struct nfs4_setattr_args {
	uint32_t sid_seqid;
	uint8_t sid_other[12];
	struct nfs4_sattr attrs;
	uint32_t attrs_status;
};
/* VERIFY4args / NVERIFY4args: fattr4 obj_attributes, its values as sent. */
struct nfs4_verify_args {
	struct nfs4_bitmap req;
	bool extra_words;          /* bits set past the words rnfsd keeps */
	const uint8_t *vals;
	uint32_t vals_len;
};

struct nfs4_create_res {
	struct nfs4_cinfo cinfo;
	struct nfs4_bitmap attrset;
};
struct nfs4_cinfo_res { /* REMOVE, LINK */
	struct nfs4_cinfo cinfo;
};
struct nfs4_rename_res {
	struct nfs4_cinfo source, target;
};
struct nfs4_setattr_res {
	struct nfs4_bitmap attrsset; /* sent on success and failure (§18.30.2) */
};

/* ---- nfs4_xdr_mod.c ---- */
bool nfs4_dec_create(struct xdr_dec *d, struct nfs4_create_args *a);
bool nfs4_dec_rename(struct xdr_dec *d, struct nfs4_rename_args *a);
bool nfs4_dec_setattr(struct xdr_dec *d, struct nfs4_setattr_args *a);
bool nfs4_dec_verify(struct xdr_dec *d, struct nfs4_verify_args *a);
void nfs4_enc_cinfo(struct xdr_enc *e, const struct nfs4_cinfo *c);
void nfs4_create_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
void nfs4_cinfo_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
void nfs4_rename_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
void nfs4_setattr_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);

/* ---- nfs4_dirlock.c ---- */
/* The stripes a change holds (nfs4_dirlock_take), so its change_info4 is atomic. */
struct nfs4_dirlock {
	bool held;
	unsigned first;
	int second; /* -1: one stripe */
};
unsigned nfs4_dirlock_stripe(uint64_t fileid);
/* Hold rnfsd's other changes to dir (and dir2, RENAME's other directory, or NULL) off. */
void nfs4_dirlock_take(struct nfs4_dirlock *h, uint64_t dir, const uint64_t *dir2);
void nfs4_dirlock_drop(struct nfs4_dirlock *h); /* a no-op when nothing is held */

/* ---- nfs4_proc_mod.c ---- */
struct nfs4_obj;
/* Before a change in dir (and dir2: RENAME's target, or NULL): rnfsd's other
 * changes there held off (h), and the attributes ("before") read again inside. */
void nfs4_mod_begin(struct nfs4_obj *dir, struct nfs4_obj *dir2, struct nfs4_dirlock *h);
/* After a change in dir (or an object's xattrs): its change_info4, atomic when
 * h was held and the file system has no other server (be_fs.one_server), and its
 * metadata on stable storage where the export is "sync" (as NFSv3, RFC 1813 §3.3.8). */
void nfs4_mod_done(const struct nfs4_obj *dir, struct nfs4_cinfo *c, const struct nfs4_dirlock *h);
uint32_t nfs4_create_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_link_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_remove_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_rename_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_setattr_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_verify_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_nverify_exec(struct nfs4_ctx *x, void *args, void *res);

#endif
