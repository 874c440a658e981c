/*
 * nfs4_sattr.c - decoding the fattr4 a client sets (see nfs4_sattr.h). Two
 * passes, as for every count in nfs/v4: the bitmap is judged first (every
 * attribute named must be one we set, before any value is read, since the
 * values of an attribute we do not know cannot be skipped), then the values
 * are decoded from attrlist4 in ascending attribute order, which must hold
 * exactly them (RFC 8881 §3.3.7).
 */
#include <string.h>

#include "nfs/v4/xdr/nfs4_owner.h"
#include "nfs/v4/xdr/nfs4_sattr.h"

/* settime4's discriminant (RFC 8881 §3.3.2, time_how4). */
enum { SET_TO_SERVER_TIME4 = 0, SET_TO_CLIENT_TIME4 = 1 };

/* Attributes the protocol lets a client set that rnfsd does not (RFC 8881
 * §5.6-§5.7 "W"/"R/W": acl, archive, hidden, mimetype, system, time_backup,
 * time_create; 4.1: dacl, sacl, layout_hint, retention_set, retentevt_set,
 * retention_hold, mode_set_masked; RFC 7863: sec_label; RFC 8275:
 * mode_umask). Anything else we do not set is read-only, or unknown. */
static const uint8_t sattr_writable_unsupp[] = {
	12, 14, 25, 32, 46, 49, 50, 58, 59, 63, 70, 72, 73, 74, 80, 81,
};
/* The highest attribute number defined (RFC 8276 xattr_support, 82): past
 * it, an attribute is unknown (ATTRNOTSUPP), not read-only. */
#define SATTR_LAST_DEFINED 82u

static const uint8_t sattr_supported[] = {
	FATTR4_SIZE, FATTR4_MODE, FATTR4_OWNER, FATTR4_OWNER_GROUP,
	FATTR4_TIME_ACCESS_SET, FATTR4_TIME_MODIFY_SET,
};

void nfs4_sattr_supported(struct nfs4_bitmap *out)
{
	*out = (struct nfs4_bitmap){ { 0 } };
	for (size_t i = 0; i < sizeof(sattr_supported); i++)
		nfs4_bitmap_set(out, sattr_supported[i]);
}

bool nfs4_bitmap_has_extra(const struct xdr_dec *d)
{
	struct xdr_dec peek = *d;
	uint32_t n, w;
	bool extra = false;

	if (xdr_dec_u32(&peek, &n))
		for (uint32_t i = 0; i < n && i < NFS4_BITMAP_MAX && xdr_dec_u32(&peek, &w); i++)
			extra |= i >= NFS4_BITMAP_WORDS && w != 0;
	return extra;
}

/* Pass one: the status for the attributes named (before any value is read). */
static uint32_t sattr_judge(const struct nfs4_bitmap *req, const struct nfs4_bitmap *sup, bool extra_words)
{
	uint32_t st = NFS4_OK;

	/* RFC 8881 §18.30.3: unsupported settable -> ATTRNOTSUPP, read-only -> INVAL.
	 * Attributes past the words we keep are unknown ones. */
	if (extra_words)
		return NFS4ERR_ATTRNOTSUPP;
	for (uint32_t attr = 0; attr < 32u * NFS4_BITMAP_WORDS; attr++) {
		if (!nfs4_bitmap_isset(req, attr) || nfs4_bitmap_isset(sup, attr))
			continue;
		if (attr > SATTR_LAST_DEFINED || memchr(sattr_writable_unsupp, (int)attr, sizeof(sattr_writable_unsupp)))
			return NFS4ERR_ATTRNOTSUPP;
		/* A read-only attribute: INVAL, unless an unsupported one comes later
		 * (ATTRNOTSUPP says more: the client can drop it and retry). */
		st = NFS4ERR_INVAL;
	}
	return st;
}

/* settime4 (RFC 8881 §3.3.2) into *t / *now; false: BADXDR. *st: INVAL for
 * nseconds out of range (§3.3.1). */
static bool dec_settime(struct xdr_dec *d, struct be_time *t, bool *now, uint32_t *st)
{
	uint32_t how;
	uint64_t sec;

	if (!xdr_dec_u32(d, &how))
		return false;
	if (how == SET_TO_SERVER_TIME4) {
		*now = true;
		return true;
	}
	if (how != SET_TO_CLIENT_TIME4 || !xdr_dec_u64(d, &sec) || !xdr_dec_u32(d, &t->nsec))
		return false;
	t->sec = (int64_t)sec;
	*now = false;
	if (t->nsec > 999999999u && *st == NFS4_OK)
		*st = NFS4ERR_INVAL;
	return true;
}

/* owner / owner_group (utf8str_mixed) -> id; false: BADXDR, *st BADOWNER. */
static bool dec_owner(struct xdr_dec *d, bool group, uint32_t *id, uint32_t *st)
{
	const uint8_t *s;
	uint32_t len, r;

	if (!xdr_dec_opaque(d, UINT32_MAX, &s, &len))
		return false;
	r = nfs4_owner_to_id(s, len, group, id);
	if (r != NFS4_OK && *st == NFS4_OK)
		*st = r;
	return true;
}

/* nfstime4 (RFC 8881 §3.3.1) of a delegated time (RFC 9754 §5.2) into *t;
 * false: BADXDR. *st: INVAL for nseconds out of range, or the same time set
 * twice (time_access_set beside time_deleg_access). */
static bool dec_deleg_time(struct xdr_dec *d, struct be_sattr *sa, bool atime, bool *flag, uint32_t *st)
{
	uint32_t both = atime ? BE_SET_ATIME | BE_SET_ATIME_NOW : BE_SET_MTIME | BE_SET_MTIME_NOW;
	struct be_time *t = atime ? &sa->atime : &sa->mtime;
	uint64_t sec;

	if ((sa->mask & both) && *st == NFS4_OK)
		*st = NFS4ERR_INVAL;
	if (!xdr_dec_u64(d, &sec) || !xdr_dec_u32(d, &t->nsec))
		return false;
	t->sec = (int64_t)sec;
	if (t->nsec > 999999999u && *st == NFS4_OK)
		*st = NFS4ERR_INVAL;
	sa->mask |= atime ? BE_SET_ATIME : BE_SET_MTIME;
	*flag = true;
	return true;
}

/* One value; false: BADXDR. */
static bool dec_value(struct xdr_dec *d, uint32_t attr, struct nfs4_sattr *out, uint32_t *st)
{
	struct be_sattr *sa = &out->sa;
	bool now = false;

	switch (attr) {
	case FATTR4_SIZE:
		sa->mask |= BE_SET_SIZE;
		return xdr_dec_u64(d, &sa->size);
	case FATTR4_MODE:
		sa->mask |= BE_SET_MODE;
		if (!xdr_dec_u32(d, &sa->mode))
			return false;
		/* mode4 (RFC 8881 §6.2.4): only the 07777 bits mean anything; the
		 * rest are ignored, as knfsd does. */
		sa->mode &= 07777u;
		return true;
	case FATTR4_OWNER:
		sa->mask |= BE_SET_UID;
		return dec_owner(d, false, &sa->uid, st);
	case FATTR4_OWNER_GROUP:
		sa->mask |= BE_SET_GID;
		return dec_owner(d, true, &sa->gid, st);
	case FATTR4_TIME_ACCESS_SET:
		if (!dec_settime(d, &sa->atime, &now, st))
			return false;
		sa->mask |= now ? BE_SET_ATIME_NOW : BE_SET_ATIME;
		return true;
	case FATTR4_TIME_MODIFY_SET:
		if (!dec_settime(d, &sa->mtime, &now, st))
			return false;
		sa->mask |= now ? BE_SET_MTIME_NOW : BE_SET_MTIME;
		return true;
	case FATTR4_TIME_DELEG_ACCESS:
		return dec_deleg_time(d, sa, true, &out->deleg_atime, st);
	case FATTR4_TIME_DELEG_MODIFY:
		return dec_deleg_time(d, sa, false, &out->deleg_mtime, st);
	default:
		return false;
	}
}

static uint32_t sattr_dec(struct xdr_dec *d, struct nfs4_sattr *out, bool deleg_times)
{
	struct nfs4_bitmap sup;
	struct xdr_dec vals;
	const uint8_t *p;
	uint32_t len, st;
	/* Words past those we keep are dropped by nfs4_dec_bitmap: look at them first. */
	bool extra = nfs4_bitmap_has_extra(d);

	memset(out, 0, sizeof(*out));
	if (!nfs4_dec_bitmap(d, &out->attrsset) || !xdr_dec_opaque(d, UINT32_MAX, &p, &len))
		return NFS4ERR_BADXDR;
	nfs4_sattr_supported(&sup);
	if (deleg_times) {
		nfs4_bitmap_set(&sup, FATTR4_TIME_DELEG_ACCESS);
		nfs4_bitmap_set(&sup, FATTR4_TIME_DELEG_MODIFY);
	}
	st = sattr_judge(&out->attrsset, &sup, extra);
	if (st != NFS4_OK)
		return st;
	xdr_dec_init(&vals, p, len);
	for (uint32_t attr = 0; attr < 32u * NFS4_BITMAP_WORDS; attr++) {
		if (nfs4_bitmap_isset(&out->attrsset, attr) && !dec_value(&vals, attr, out, &st))
			return NFS4ERR_BADXDR;
	}
	/* RFC 8881 §3.3.7: attrlist4 holds exactly the values the bitmap names. */
	if (xdr_dec_remaining(&vals) != 0)
		return NFS4ERR_BADXDR;
	return st;
}

uint32_t nfs4_sattr_dec(struct xdr_dec *d, struct nfs4_sattr *out)
{
	return sattr_dec(d, out, false);
}

uint32_t nfs4_sattr_dec_setattr(struct xdr_dec *d, struct nfs4_sattr *out)
{
	return sattr_dec(d, out, true);
}
