/*
 * test_nfs4_sattr.c - nfs/v4/xdr/nfs4_sattr.c and nfs4_owner.c: the settable
 * fattr4 decoder on every attribute it takes, on each truncation (every
 * byte), on attrlist4 too long or too short, on read-only, unsupported and
 * unknown attributes (and where the decoder is left after them), on settime4
 * discriminants and nseconds; owner strings both ways (numeric, name@domain,
 * unknown names and ids, other domains).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfs/v4/xdr/nfs4_owner.h"
#include "nfs/v4/xdr/nfs4_sattr.h"

static uint8_t buf[4096];
static uint8_t vals[2048];

/* fattr4 with a bitmap of nw words and the given attrlist4 bytes; returns its length. */
static size_t fattr(const uint32_t *w, uint32_t nw, const uint8_t *v, size_t vlen, bool trailer)
{
	struct xdr_enc e;

	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_u32(&e, nw);
	for (uint32_t i = 0; i < nw; i++)
		xdr_enc_u32(&e, w[i]);
	xdr_enc_opaque(&e, v, (uint32_t)vlen);
	if (trailer)
		xdr_enc_u32(&e, 0xabcdef01u);
	assert_false(e.overflow);
	return xdr_enc_len(&e);
}

static uint32_t dec(size_t n, struct nfs4_sattr *out)
{
	struct xdr_dec d;

	xdr_dec_init(&d, buf, n);
	return nfs4_sattr_dec(&d, out);
}

static size_t all_values(struct xdr_enc *e)
{
	xdr_enc_init(e, vals, sizeof(vals));
	xdr_enc_u64(e, 123456789012ull);          /* size (4) */
	xdr_enc_u32(e, 0170755u);                 /* mode (33): type bits dropped */
	xdr_enc_opaque(e, "1000", 4);             /* owner (36) */
	xdr_enc_opaque(e, "root@example.test", 17); /* owner_group (37) */
	xdr_enc_u32(e, 1);                        /* time_access_set (48): client time */
	xdr_enc_u64(e, 1700000000u);
	xdr_enc_u32(e, 999999999u);
	xdr_enc_u32(e, 0);                        /* time_modify_set (54): server time */
	return xdr_enc_len(e);
}

static const uint32_t all_bits[2] = { 1u << 4, (1u << 1) | (1u << 4) | (1u << 5) | (1u << 16) | (1u << 22) };

static void test_all(void **state)
{
	struct nfs4_sattr s;
	struct xdr_enc e;
	size_t n;

	(void)state;
	nfs4_owner_config(NFS4_IDMAP_NUMERIC, "example.test");
	n = fattr(all_bits, 2, vals, all_values(&e), false);
	assert_int_equal(dec(n, &s), NFS4_OK);
	assert_int_equal(s.sa.mask, BE_SET_SIZE | BE_SET_MODE | BE_SET_UID | BE_SET_GID | BE_SET_ATIME |
					    BE_SET_MTIME_NOW);
	assert_true(s.sa.size == 123456789012ull);
	assert_int_equal(s.sa.mode, 0755);
	assert_int_equal(s.sa.uid, 1000);
	assert_int_equal(s.sa.gid, 0);
	assert_int_equal(s.sa.atime.sec, 1700000000);
	assert_int_equal(s.sa.atime.nsec, 999999999u);
	assert_int_equal(s.attrsset.w[0], all_bits[0]);
	assert_int_equal(s.attrsset.w[1], all_bits[1]);
	/* Every truncation is BADXDR (each in an exact-size copy for ASan). */
	for (size_t k = 0; k < n; k++) {
		uint8_t *copy = malloc(k ? k : 1);
		struct xdr_dec d;
		assert_non_null(copy);
		memcpy(copy, buf, k);
		xdr_dec_init(&d, copy, k);
		assert_int_equal(nfs4_sattr_dec(&d, &s), NFS4ERR_BADXDR);
		free(copy);
	}
}

static void test_shape(void **state)
{
	struct nfs4_sattr s;
	uint32_t w[4] = { 0 };
	uint8_t v[12] = { 0 };

	(void)state;
	/* Nothing set. */
	assert_int_equal(dec(fattr(w, 0, v, 0, false), &s), NFS4_OK);
	assert_int_equal(s.sa.mask, 0);
	/* attrlist4 longer or shorter than the values named. */
	w[0] = 1u << FATTR4_SIZE;
	assert_int_equal(dec(fattr(w, 1, v, 12, false), &s), NFS4ERR_BADXDR);
	assert_int_equal(dec(fattr(w, 1, v, 4, false), &s), NFS4ERR_BADXDR);
	assert_int_equal(dec(fattr(w, 1, v, 8, false), &s), NFS4_OK);
	/* Values where the bitmap names none. */
	assert_int_equal(dec(fattr(w, 0, v, 4, false), &s), NFS4ERR_BADXDR);
	/* A bitmap of more words than anyone sends, or cut short. */
	buf[0] = 0, buf[1] = 0, buf[2] = 0, buf[3] = 9;
	assert_int_equal(dec(64, &s), NFS4ERR_BADXDR);
	buf[3] = 2;
	assert_int_equal(dec(8, &s), NFS4ERR_BADXDR);
	/* Zero extra words are fine. */
	w[0] = 0, w[3] = 0;
	assert_int_equal(dec(fattr(w, 4, v, 0, false), &s), NFS4_OK);
}

/* The status for one attribute named alone (with 8 value bytes), and that the
 * decoder is then past the fattr4. */
static uint32_t one_attr(uint32_t attr)
{
	struct nfs4_sattr s;
	struct xdr_dec d;
	uint32_t w[4] = { 0 }, trailer = 0, st;
	uint8_t v[8] = { 0 };
	size_t n;

	w[attr / 32] = 1u << (attr % 32);
	n = fattr(w, 4, v, 8, true);
	xdr_dec_init(&d, buf, n);
	st = nfs4_sattr_dec(&d, &s);
	if (st != NFS4ERR_BADXDR) {
		assert_true(xdr_dec_u32(&d, &trailer));
		assert_int_equal(trailer, 0xabcdef01u);
	}
	return st;
}

static void test_judge(void **state)
{
	(void)state;
	/* RFC 8881 §18.30.3: read-only -> INVAL. */
	assert_int_equal(one_attr(FATTR4_TYPE), NFS4ERR_INVAL);
	assert_int_equal(one_attr(FATTR4_CHANGE), NFS4ERR_INVAL);
	assert_int_equal(one_attr(FATTR4_TIME_MODIFY), NFS4ERR_INVAL);
	assert_int_equal(one_attr(FATTR4_SUPPORTED_ATTRS), NFS4ERR_INVAL);
	assert_int_equal(one_attr(FATTR4_SUPPATTR_EXCLCREAT), NFS4ERR_INVAL);
	/* Settable by the protocol, not by rnfsd; unknown numbers. */
	assert_int_equal(one_attr(FATTR4_ACL), NFS4ERR_ATTRNOTSUPP);
	assert_int_equal(one_attr(FATTR4_TIME_CREATE), NFS4ERR_ATTRNOTSUPP);
	assert_int_equal(one_attr(FATTR4_ARCHIVE), NFS4ERR_ATTRNOTSUPP);
	assert_int_equal(one_attr(80), NFS4ERR_ATTRNOTSUPP); /* sec_label */
	assert_int_equal(one_attr(81), NFS4ERR_ATTRNOTSUPP); /* mode_umask */
	assert_int_equal(one_attr(90), NFS4ERR_ATTRNOTSUPP);
	assert_int_equal(one_attr(100), NFS4ERR_ATTRNOTSUPP); /* a word we do not keep */
	/* The one settable value of 8 bytes decodes. */
	assert_int_equal(one_attr(FATTR4_SIZE), NFS4_OK);
	/* A read-only one and an unsupported one: ATTRNOTSUPP (decided on the bitmap). */
	{
		struct nfs4_sattr s;
		uint32_t w[2] = { (1u << FATTR4_TYPE) | (1u << FATTR4_ACL), 0 };
		assert_int_equal(dec(fattr(w, 2, NULL, 0, false), &s), NFS4ERR_ATTRNOTSUPP);
	}
}

static uint32_t one_time(uint32_t attr, uint32_t how, uint32_t nsec, struct nfs4_sattr *s)
{
	struct xdr_enc e;
	uint32_t w[2] = { 0 };

	w[attr / 32] = 1u << (attr % 32);
	xdr_enc_init(&e, vals, sizeof(vals));
	xdr_enc_u32(&e, how);
	if (how != 0) {
		xdr_enc_u64(&e, (uint64_t)-5); /* before 1970 */
		xdr_enc_u32(&e, nsec);
	}
	return dec(fattr(w, 2, vals, xdr_enc_len(&e), false), s);
}

static void test_times(void **state)
{
	struct nfs4_sattr s;

	(void)state;
	assert_int_equal(one_time(FATTR4_TIME_ACCESS_SET, 0, 0, &s), NFS4_OK);
	assert_int_equal(s.sa.mask, BE_SET_ATIME_NOW);
	assert_int_equal(one_time(FATTR4_TIME_MODIFY_SET, 1, 5, &s), NFS4_OK);
	assert_int_equal(s.sa.mask, BE_SET_MTIME);
	assert_int_equal(s.sa.mtime.sec, -5);
	assert_int_equal(s.sa.mtime.nsec, 5);
	/* RFC 8881 §3.3.1: nseconds past 999999999 is INVAL. */
	assert_int_equal(one_time(FATTR4_TIME_MODIFY_SET, 1, 1000000000u, &s), NFS4ERR_INVAL);
	/* time_how4 has two values (RFC 4506 §4.3: others do not decode). */
	assert_int_equal(one_time(FATTR4_TIME_ACCESS_SET, 2, 0, &s), NFS4ERR_BADXDR);
}

/* RFC 9754 §5.2: time_deleg_access (84) / time_deleg_modify (85), nfstime4 values, SETATTR only. */
static void test_deleg_times(void **state)
{
	const uint32_t w[3] = { 0, 0, 1u << 20 | 1u << 21 }, both[3] = { 0, 1u << 16, 1u << 20 };
	struct nfs4_sattr s;
	struct xdr_enc e;
	struct xdr_dec d;
	size_t n;

	(void)state;
	xdr_enc_init(&e, vals, sizeof(vals));
	xdr_enc_u64(&e, 1700000001u); /* time_deleg_access */
	xdr_enc_u32(&e, 5);
	xdr_enc_u64(&e, 1700000002u); /* time_deleg_modify */
	xdr_enc_u32(&e, 6);
	n = fattr(w, 3, vals, xdr_enc_len(&e), false);
	xdr_dec_init(&d, buf, n);
	assert_int_equal(nfs4_sattr_dec_setattr(&d, &s), NFS4_OK);
	assert_true(s.deleg_atime && s.deleg_mtime);
	assert_int_equal(s.sa.mask, BE_SET_ATIME | BE_SET_MTIME);
	assert_true(s.sa.atime.sec == 1700000001 && s.sa.atime.nsec == 5);
	assert_true(s.sa.mtime.sec == 1700000002 && s.sa.mtime.nsec == 6);
	assert_true(nfs4_bitmap_isset(&s.attrsset, FATTR4_TIME_DELEG_ACCESS));
	/* CREATE's and OPEN's createattrs do not take them */
	assert_int_equal(dec(n, &s), NFS4ERR_ATTRNOTSUPP);
	/* a value cut short: BADXDR; nseconds out of range: INVAL */
	n = fattr(w, 3, vals, 20, false);
	xdr_dec_init(&d, buf, n);
	assert_int_equal(nfs4_sattr_dec_setattr(&d, &s), NFS4ERR_BADXDR);
	vals[8] = 0x3b, vals[9] = 0x9a, vals[10] = 0xca, vals[11] = 0x00; /* 1000000000 */
	n = fattr(w, 3, vals, 24, false);
	xdr_dec_init(&d, buf, n);
	assert_int_equal(nfs4_sattr_dec_setattr(&d, &s), NFS4ERR_INVAL);
	/* time_access_set (48) beside time_deleg_access: INVAL */
	xdr_enc_init(&e, vals, sizeof(vals));
	xdr_enc_u32(&e, 0); /* SET_TO_SERVER_TIME4 */
	xdr_enc_u64(&e, 1700000001u);
	xdr_enc_u32(&e, 5);
	n = fattr(both, 3, vals, xdr_enc_len(&e), false);
	xdr_dec_init(&d, buf, n);
	assert_int_equal(nfs4_sattr_dec_setattr(&d, &s), NFS4ERR_INVAL);
}

static uint32_t one_owner(uint32_t attr, const char *str, struct nfs4_sattr *s)
{
	struct xdr_enc e;
	uint32_t w[2] = { 0 };

	w[attr / 32] = 1u << (attr % 32);
	xdr_enc_init(&e, vals, sizeof(vals));
	xdr_enc_opaque(&e, str, (uint32_t)strlen(str));
	return dec(fattr(w, 2, vals, xdr_enc_len(&e), false), s);
}

static void test_owner_dec(void **state)
{
	struct nfs4_sattr s;

	(void)state;
	nfs4_owner_config(NFS4_IDMAP_NUMERIC, "example.test");
	assert_int_equal(one_owner(FATTR4_OWNER, "0", &s), NFS4_OK);
	assert_int_equal(s.sa.uid, 0);
	assert_int_equal(one_owner(FATTR4_OWNER, "4294967294", &s), NFS4_OK);
	assert_int_equal(s.sa.uid, 4294967294u);
	assert_int_equal(one_owner(FATTR4_OWNER_GROUP, "65534", &s), NFS4_OK);
	assert_int_equal(s.sa.gid, 65534);
	assert_int_equal(s.sa.mask, BE_SET_GID);
	/* Names of our domain (any case), in either mode. */
	assert_int_equal(one_owner(FATTR4_OWNER, "root@EXAMPLE.test", &s), NFS4_OK);
	assert_int_equal(s.sa.uid, 0);
	assert_int_equal(one_owner(FATTR4_OWNER_GROUP, "root@example.test", &s), NFS4_OK);
	assert_int_equal(s.sa.gid, 0);
	/* RFC 8881 §5.9: what maps to no id is BADOWNER. */
	/* RFC 7530 §12.7: an empty one is INVAL. */
	assert_int_equal(one_owner(FATTR4_OWNER, "", &s), NFS4ERR_INVAL);
	assert_int_equal(one_owner(FATTR4_OWNER_GROUP, "", &s), NFS4ERR_INVAL);
	static const char *bad[] = { "4294967295", "99999999999", "12a", "-1", "root", "@example.test",
				     "root@other.test", "root@example.test.", "no-such-user-rnfsd@example.test" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(one_owner(FATTR4_OWNER, bad[i], &s), NFS4ERR_BADOWNER);
	/* A NUL inside the name. */
	{
		struct xdr_enc e;
		uint32_t w[2] = { 0, 1u << (FATTR4_OWNER - 32) };
		xdr_enc_init(&e, vals, sizeof(vals));
		xdr_enc_opaque(&e, "root\0x@example.test", 19);
		assert_int_equal(dec(fattr(w, 2, vals, xdr_enc_len(&e), false), &s), NFS4ERR_BADOWNER);
	}
}

static void test_owner_enc(void **state)
{
	char out[NFS4_OWNER_STR_MAX];
	uint32_t n;

	(void)state;
	nfs4_owner_config(NFS4_IDMAP_NUMERIC, "example.test");
	n = nfs4_owner_from_id(1000, false, out, sizeof(out));
	assert_int_equal(n, 4);
	assert_string_equal(out, "1000");
	nfs4_owner_config(NFS4_IDMAP_NAMES, "example.test");
	n = nfs4_owner_from_id(0, false, out, sizeof(out));
	assert_string_equal(out, "root@example.test");
	assert_int_equal(n, strlen(out));
	nfs4_owner_from_id(0, true, out, sizeof(out));
	assert_string_equal(out, "root@example.test");
	/* An id without a name. */
	nfs4_owner_from_id(3999999999u, false, out, sizeof(out));
	assert_string_equal(out, "nobody@example.test");
	/* The default domain: the host's, or localdomain. */
	nfs4_owner_config(NFS4_IDMAP_NUMERIC, NULL);
	assert_true(strlen(nfs4_owner_domain()) > 0);
	nfs4_owner_config(NFS4_IDMAP_NUMERIC, "example.test");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all),   cmocka_unit_test(test_shape),     cmocka_unit_test(test_judge),
		cmocka_unit_test(test_times), cmocka_unit_test(test_owner_dec), cmocka_unit_test(test_owner_enc),
		cmocka_unit_test(test_deleg_times),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
