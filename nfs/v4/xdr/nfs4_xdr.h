/*
 * nfs4_xdr.h - NFSv4 XDR (RFC 7531; RFC 8881 §16-§18 for 4.1; RFC 7863 for
 * 4.2): the COMPOUND header, bitmap4, component names, and the arguments and
 * results of the operations built so far. Pure, bounds-checked functions over
 * rpc/xdr.h: a decoder returns false (NFS4ERR_BADXDR for the operation, or
 * GARBAGE_ARGS for the header) and never reads past what was received;
 * strings and handles are pointers into the call message (no copy) unless the
 * struct below says otherwise. Encoders rely on struct xdr_enc's sticky
 * overflow flag.
 */
#ifndef RNFSD_NFS4_XDR_H
#define RNFSD_NFS4_XDR_H

#include <stdbool.h>
#include <stdint.h>

#include "nfs/common/nfs_common.h"
#include "nfs/v4/xdr/nfs4_const.h"
#include "rpc/xdr.h"

/* COMPOUND4args without its argarray (RFC 7531; RFC 8881 §16.2.1). */
struct nfs4_compound_hdr {
	const uint8_t *tag; /* utf8str_cs, inside the message */
	uint32_t taglen;    /* <= NFS4_TAG_MAX */
	uint32_t minorversion;
	uint32_t numops; /* argarray's count as sent; ops are decoded one by one */
};

/* bitmap4 (RFC 8881 §3.3.7): the words rnfsd knows; words beyond them are
 * accepted (each must fit in the message) and dropped, as they name
 * attributes no server of ours supports. */
/* change_info4 (RFC 8881 §3.3.9): CREATE, REMOVE, RENAME, LINK, OPEN, the xattr operations. */
struct nfs4_cinfo {
	bool atomic;
	uint64_t before, after;
};
struct nfs4_bitmap {
	uint32_t w[NFS4_BITMAP_WORDS];
};

struct nfs4_name {
	const uint8_t *s; /* component4 bytes, inside the message, not NUL-terminated */
	uint32_t len;
};

struct nfs4_putfh_args {
	struct nfs_fh fh; /* copied: the current filehandle outlives the decoder */
};
struct nfs4_name_args { /* LOOKUP, SECINFO */
	struct nfs4_name name;
};
struct nfs4_getattr_args {
	struct nfs4_bitmap req;
};
struct nfs4_access_args {
	uint32_t access;
};
struct nfs4_readdir_args {
	uint64_t cookie;
	uint8_t verf[NFS4_VERIFIER_SIZE];
	uint32_t dircount, maxcount;
	struct nfs4_bitmap req;
};
struct nfs4_secinfo_nn_args {
	uint32_t style; /* SECINFO_STYLE4_* */
};

/* Decoders: true, or false when the bytes do not hold the item. */
bool nfs4_dec_compound_hdr(struct xdr_dec *d, struct nfs4_compound_hdr *h);
bool nfs4_dec_bitmap(struct xdr_dec *d, struct nfs4_bitmap *b);
bool nfs4_dec_name(struct xdr_dec *d, struct nfs4_name *n);
bool nfs4_dec_putfh(struct xdr_dec *d, struct nfs4_putfh_args *a);
bool nfs4_dec_name_args(struct xdr_dec *d, struct nfs4_name_args *a);
bool nfs4_dec_getattr(struct xdr_dec *d, struct nfs4_getattr_args *a);
bool nfs4_dec_access(struct xdr_dec *d, struct nfs4_access_args *a);
bool nfs4_dec_readdir(struct xdr_dec *d, struct nfs4_readdir_args *a);
bool nfs4_dec_secinfo_nn(struct xdr_dec *d, struct nfs4_secinfo_nn_args *a);

/*
 * RFC 8881 §18.13.3, §14.5: is this component4 acceptable as a name?
 * NFS4_OK, NFS4ERR_INVAL (empty, or not UTF-8), NFS4ERR_NAMETOOLONG
 * (> NFS4_NAME_MAX), NFS4ERR_BADCHAR (a '/' or NUL byte), NFS4ERR_BADNAME
 * ("." or "..").
 */
uint32_t nfs4_name_check(const struct nfs4_name *n);
/* Strict UTF-8 (RFC 3629: no overlongs, surrogates or values past U+10FFFF). */
bool nfs4_utf8_valid(const uint8_t *s, uint32_t len);

/* Encoders. The bitmap is written with its trailing zero words trimmed. */
void nfs4_enc_bitmap(struct xdr_enc *e, const struct nfs4_bitmap *b);
void nfs4_enc_fh(struct xdr_enc *e, const struct nfs_fh *fh);
/* ACCESS4resok (RFC 8881 §18.1.2). */
void nfs4_enc_access(struct xdr_enc *e, uint32_t supported, uint32_t access);
/* SECINFO4resok (RFC 8881 §18.29.2) of n sec= flavors (bit numbers of conf/exports.h's EXPORT_SEC_*:
 * AUTH_NONE, AUTH_SYS, or RPCSEC_GSS krb5 with service none, integrity, privacy), in their order. */
void nfs4_enc_secinfo(struct xdr_enc *e, const uint8_t *bits, uint32_t n);

static inline bool nfs4_bitmap_isset(const struct nfs4_bitmap *b, uint32_t attr)
{
	return attr < 32u * NFS4_BITMAP_WORDS && (b->w[attr / 32] >> (attr % 32)) & 1u;
}

static inline void nfs4_bitmap_set(struct nfs4_bitmap *b, uint32_t attr)
{
	if (attr < 32u * NFS4_BITMAP_WORDS)
		b->w[attr / 32] |= 1u << (attr % 32);
}

#endif
