/*
 * test_nfs4_attr.c - fattr4 encoding (nfs/v4/xdr/nfs4_attr.c): the supported
 * attribute bitmap per minor version, the byte layout of each attribute kind
 * (u32, u64, bool, fsid4, nfstime4, specdata4, numeric owner strings,
 * filehandle, nested bitmaps), ascending order, attributes the object lacks
 * or rnfsd does not support left out of the returned mask, the attrlist4
 * length, and an encoder that overflows without writing past its end; a
 * client's attrlist4 (VERIFY) decoded against its bitmap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nfs/v4/xdr/nfs4_attr.h"

static uint8_t buf[4096];

static struct be_attr sample(void)
{
	struct be_attr a = {
		.valid = BE_AT_BASIC, .type = BE_DIR, .mode = 040755, .nlink = 3, .uid = 1000, .gid = 100,
		.size = 4096, .space_used = 8192, .rdev_major = 0, .rdev_minor = 0,
		.fsid_major = 0x11, .fsid_minor = 0x22, .fileid = 0x1234, .change = 0xabcdef,
		.atime = { 1, 2 }, .mtime = { 3, 4 }, .ctime = { 5, 6 },
	};
	return a;
}

/* Encode req; return the decoder positioned at the attribute values and the mask. */
static size_t encode(const struct nfs4_bitmap *req, const struct nfs4_attr_src *s, struct nfs4_bitmap *mask,
		     struct xdr_dec *vals)
{
	struct xdr_enc e;
	struct xdr_dec d;
	const uint8_t *p = NULL;
	uint32_t len = 0;

	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_attr_encode(&e, req, s);
	assert_false(e.overflow);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_true(nfs4_dec_bitmap(&d, mask));
	assert_true(xdr_dec_opaque(&d, 4096, &p, &len));
	assert_int_equal(xdr_dec_remaining(&d), 0);
	xdr_dec_init(vals, p, len);
	return len;
}

static uint32_t u32(struct xdr_dec *d)
{
	uint32_t v = 0xdeadbeef;
	assert_true(xdr_dec_u32(d, &v));
	return v;
}

static uint64_t u64(struct xdr_dec *d)
{
	uint64_t v = 0;
	assert_true(xdr_dec_u64(d, &v));
	return v;
}

static void test_supported(void **state)
{
	struct nfs4_bitmap b0, b1;
	/* RFC 8881 §5.6: the REQUIRED attributes. */
	static const uint32_t required[] = {
		FATTR4_SUPPORTED_ATTRS, FATTR4_TYPE, FATTR4_FH_EXPIRE_TYPE, FATTR4_CHANGE, FATTR4_SIZE,
		FATTR4_LINK_SUPPORT, FATTR4_SYMLINK_SUPPORT, FATTR4_NAMED_ATTR, FATTR4_FSID,
		FATTR4_UNIQUE_HANDLES, FATTR4_LEASE_TIME, FATTR4_RDATTR_ERROR, FATTR4_FILEHANDLE,
	};
	/* RECOMMENDED ones the Linux client asks for (nfs4_fattr_bitmap and friends). */
	static const uint32_t linux_wants[] = {
		FATTR4_FILEID, FATTR4_MODE, FATTR4_NUMLINKS, FATTR4_OWNER, FATTR4_OWNER_GROUP,
		FATTR4_RAWDEV, FATTR4_SPACE_USED, FATTR4_TIME_ACCESS, FATTR4_TIME_METADATA,
		FATTR4_TIME_MODIFY, FATTR4_MOUNTED_ON_FILEID, FATTR4_MAXFILESIZE, FATTR4_MAXNAME,
		FATTR4_MAXREAD, FATTR4_MAXWRITE, FATTR4_TIME_DELTA,
	};

	(void)state;
	nfs4_attr_supported(0, &b0);
	nfs4_attr_supported(1, &b1);
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		assert_true(nfs4_bitmap_isset(&b0, required[i]));
	for (size_t i = 0; i < sizeof(linux_wants) / sizeof(linux_wants[0]); i++)
		assert_true(nfs4_bitmap_isset(&b0, linux_wants[i]));
	assert_false(nfs4_bitmap_isset(&b0, FATTR4_SUPPATTR_EXCLCREAT));
	assert_true(nfs4_bitmap_isset(&b1, FATTR4_SUPPATTR_EXCLCREAT));
	assert_false(nfs4_bitmap_isset(&b0, FATTR4_ACL)); /* not built */
	assert_int_equal(nfs4_ftype(BE_LNK), NF4LNK);
	assert_int_equal(nfs4_ftype(BE_TYPE_NONE), 0);
}

static void test_values(void **state)
{
	struct be_attr a = sample();
	struct nfs_fh fh = { .len = 5, .data = { 1, 2, 3, 4, 5 } };
	struct nfs4_attr_src s = { .a = &a, .fh = &fh, .mounted_on_fileid = 0x99, .lease_time = 90,
				   .maxread = 1u << 20, .maxwrite = 1u << 20, .maxfilesize = UINT64_MAX };
	struct nfs4_bitmap req = { { 0 } }, mask;
	struct xdr_dec d;
	const uint8_t *p;
	uint32_t len;

	(void)state;
	/* Asked out of any order: values come in attribute order. */
	uint32_t asked[] = { FATTR4_TIME_MODIFY, FATTR4_OWNER, FATTR4_TYPE, FATTR4_FSID, FATTR4_FILEHANDLE,
			     FATTR4_CHANGE, FATTR4_MODE, FATTR4_LEASE_TIME, FATTR4_MOUNTED_ON_FILEID,
			     FATTR4_NAMED_ATTR, FATTR4_MAXREAD };
	for (size_t i = 0; i < sizeof(asked) / sizeof(asked[0]); i++)
		nfs4_bitmap_set(&req, asked[i]);
	encode(&req, &s, &mask, &d);
	assert_memory_equal(&mask, &req, sizeof(mask));
	assert_int_equal(u32(&d), NF4DIR);                 /* 1 type */
	assert_true(u64(&d) == 0xabcdef);                  /* 3 change */
	assert_int_equal(u32(&d), 0);                      /* 7 named_attr: false */
	assert_true(u64(&d) == 0x11);                      /* 8 fsid */
	assert_true(u64(&d) == 0x22);
	assert_int_equal(u32(&d), 90);                     /* 10 lease_time */
	assert_true(xdr_dec_opaque(&d, 128, &p, &len));    /* 19 filehandle */
	assert_int_equal(len, 5);
	assert_memory_equal(p, fh.data, 5);
	assert_true(u64(&d) == 1u << 20);                  /* 30 maxread */
	assert_int_equal(u32(&d), 0755);                   /* 33 mode: no type bits */
	assert_true(xdr_dec_opaque(&d, 128, &p, &len));    /* 36 owner */
	assert_int_equal(len, 4);
	assert_memory_equal(p, "1000", 4);
	assert_true(u64(&d) == 3);                         /* 53 time_modify */
	assert_int_equal(u32(&d), 4);
	assert_true(u64(&d) == 0x99);                      /* 55 mounted_on_fileid */
	assert_int_equal(xdr_dec_remaining(&d), 0);
}

static void test_left_out(void **state)
{
	struct be_attr a = sample();
	struct be_statfs sf = { .total_bytes = 1u << 30, .free_bytes = 1u << 29, .avail_bytes = 1u << 28,
				.total_files = 1000, .free_files = 900, .avail_files = 800 };
	struct nfs4_attr_src s = { .a = &a, .minorversion = 1, .sf = &sf };
	struct nfs4_bitmap req = { { 0xffffffffu, 0xffffffffu, 0xffffffffu } }, sup, mask;
	struct xdr_dec d;

	(void)state;
	/* Everything asked: exactly the supported ones come back, less the
	 * filehandle (none given), what the object lacks (here: size) and the
	 * file system's pNFS facts (none given). */
	a.valid &= ~BE_AT_SIZE;
	encode(&req, &s, &mask, &d);
	nfs4_attr_supported(1, &sup);
	assert_false(nfs4_bitmap_isset(&mask, FATTR4_SIZE));
	assert_false(nfs4_bitmap_isset(&mask, FATTR4_FILEHANDLE));
	assert_false(nfs4_bitmap_isset(&mask, FATTR4_ACL));
	for (uint32_t i = 0; i < 96; i++)
		if (i != FATTR4_SIZE && i != FATTR4_FILEHANDLE && i != FATTR4_FS_LAYOUT_TYPES && i != FATTR4_LAYOUT_BLKSIZE)
			assert_int_equal(nfs4_bitmap_isset(&mask, i), nfs4_bitmap_isset(&sup, i));
	/* supported_attrs first: a bitmap value equal to sup. */
	struct nfs4_bitmap inner;
	assert_true(nfs4_dec_bitmap(&d, &inner));
	assert_memory_equal(&inner, &sup, sizeof(sup));
	/* Nothing asked: empty mask, empty attrlist. */
	req = (struct nfs4_bitmap){ { 0 } };
	assert_int_equal(encode(&req, &s, &mask, &d), 0);
	assert_int_equal(mask.w[0] | mask.w[1] | mask.w[2], 0);
}

/* df's attributes: files_free (22) and space_total (44), in attribute
 * order, from the statfs given; without one they are left out. */
static void test_fs_space(void **state)
{
	struct be_attr a = sample();
	struct be_statfs sf = { .total_bytes = 1ull << 30, .free_bytes = 5, .avail_bytes = 4,
				.total_files = 1000, .free_files = 900, .avail_files = 800 };
	struct nfs4_attr_src s = { .a = &a, .minorversion = 0, .sf = &sf };
	struct nfs4_bitmap req = { { 0 } }, mask;
	struct xdr_dec d;
	uint64_t v;

	(void)state;
	nfs4_bitmap_set(&req, FATTR4_SPACE_TOTAL);
	nfs4_bitmap_set(&req, FATTR4_FILES_FREE);
	assert_int_equal(encode(&req, &s, &mask, &d), 16);
	assert_memory_equal(&mask, &req, sizeof(req));
	assert_true(xdr_dec_u64(&d, &v));
	assert_int_equal(v, 900);
	assert_true(xdr_dec_u64(&d, &v));
	assert_int_equal(v, 1ull << 30);
	s.sf = NULL;
	assert_int_equal(encode(&req, &s, &mask, &d), 0);
	assert_int_equal(mask.w[0] | mask.w[1], 0);
}

static void test_overflow(void **state)
{
	struct be_attr a = sample();
	struct nfs4_attr_src s = { .a = &a };
	struct nfs4_bitmap req = { { 0xffffffffu, 0xffffffffu, 0 } };
	struct xdr_enc e;

	(void)state;
	for (size_t cap = 0; cap < 64; cap += 4) {
		memset(buf, 0xee, sizeof(buf));
		xdr_enc_init(&e, buf, cap);
		nfs4_attr_encode(&e, &req, &s);
		assert_true(e.overflow);
		assert_int_equal(buf[cap], 0xee);
	}
}

/* RFC 8881 §5.12.1, §5.12.4: fs_layout_type and layout_blksize, 4.1 attributes; an empty list and no
 * block size where the file system offers no layouts. */
static void test_pnfs_attrs(void **state)
{
	struct be_attr a = sample();
	struct nfs4_fs_facts ff = { .layout_type = 4, .layout_blksize = 1u << 20 }, none = { 0 };
	struct nfs4_bitmap req = { { 0 } }, mask, want = { { 0 } };
	struct xdr_dec d;

	(void)state;
	nfs4_bitmap_set(&req, FATTR4_FS_LAYOUT_TYPES);
	nfs4_bitmap_set(&req, FATTR4_LAYOUT_BLKSIZE);
	struct nfs4_attr_src s = { .a = &a, .minorversion = 1, .facts = &ff };
	encode(&req, &s, &mask, &d);
	assert_memory_equal(&mask, &req, sizeof(mask));
	assert_int_equal(u32(&d), 1); /* layouttype4<>: LAYOUT4_FLEX_FILES */
	assert_int_equal(u32(&d), 4);
	assert_int_equal(u32(&d), 1u << 20);
	assert_int_equal(xdr_dec_remaining(&d), 0);
	s.facts = &none;
	encode(&req, &s, &mask, &d);
	nfs4_bitmap_set(&want, FATTR4_FS_LAYOUT_TYPES);
	assert_memory_equal(&mask, &want, sizeof(mask));
	assert_int_equal(u32(&d), 0);
	assert_int_equal(xdr_dec_remaining(&d), 0);
	s.minorversion = 0; /* not NFSv4.0's */
	encode(&req, &s, &mask, &d);
	assert_int_equal(mask.w[1], 0);
}

/* VERIFY's attrlist4 decoded against its bitmap (issue 24 defect 9): what the
 * encoder writes decodes, for every supported attribute of every minor
 * version; any shorter list, trailing bytes, a bool other than 0/1, an
 * over-long handle do not. */
static void test_vals_dec(void **state)
{
	struct be_attr a = sample();
	struct nfs_fh fh = { .len = 5, .data = { 1, 2, 3, 4, 5 } };
	struct be_statfs sf = { .total_bytes = 1 };
	struct nfs4_fs_facts facts = { .clone_blksize = 4096, .xattr_support = true, .layout_type = 4,
				       .layout_blksize = 4096 };
	struct nfs4_bitmap all = { { 0xffffffffu, 0xffffffffu, 0xffffffffu } }, mask, one = { { 0 } };
	uint8_t v[16];
	struct xdr_dec d;

	(void)state;
	for (uint32_t minor = 0; minor <= 2; minor++) {
		struct nfs4_attr_src s = { .a = &a, .fh = &fh, .minorversion = minor, .sf = &sf, .facts = &facts };
		size_t len = encode(&all, &s, &mask, &d);
		const uint8_t *vals = d.p;

		assert_true(nfs4_attr_vals_dec(minor, &mask, vals, (uint32_t)len));
		for (size_t l = 0; l < len; l++)
			assert_false(nfs4_attr_vals_dec(minor, &mask, vals, (uint32_t)l));
		memcpy(buf + 2048, vals, len);
		memset(buf + 2048 + len, 0, 4);
		assert_false(nfs4_attr_vals_dec(minor, &mask, buf + 2048, (uint32_t)len + 4));
	}
	/* A 1-3 byte mode; a bool of 2; a handle over NFS4_FHSIZE; an unsupported attribute. */
	nfs4_bitmap_set(&one, FATTR4_MODE);
	memset(v, 0, sizeof(v));
	for (uint32_t l = 1; l < 4; l++)
		assert_false(nfs4_attr_vals_dec(0, &one, v, l));
	assert_true(nfs4_attr_vals_dec(0, &one, v, 4));
	one = (struct nfs4_bitmap){ { 0 } };
	nfs4_bitmap_set(&one, FATTR4_NO_TRUNC);
	v[3] = 2;
	assert_false(nfs4_attr_vals_dec(0, &one, v, 4));
	v[3] = 1;
	assert_true(nfs4_attr_vals_dec(0, &one, v, 4));
	one = (struct nfs4_bitmap){ { 0 } };
	nfs4_bitmap_set(&one, FATTR4_FILEHANDLE);
	memset(buf, 0, 4 + NFS4_FHSIZE + 4);
	buf[2] = (NFS4_FHSIZE + 4) >> 8, buf[3] = (uint8_t)(NFS4_FHSIZE + 4);
	assert_false(nfs4_attr_vals_dec(0, &one, buf, 4 + NFS4_FHSIZE + 4));
	one = (struct nfs4_bitmap){ { 0 } };
	nfs4_bitmap_set(&one, FATTR4_ACL);
	assert_false(nfs4_attr_vals_dec(0, &one, v, 4));
}

/* RFC 9754 open_arguments (4.2): five one-word bitmaps of what OPEN takes. */
static void test_open_arguments(void **state)
{
	static const uint32_t want[5] = {
		0xe,  /* share_access READ, WRITE, BOTH */
		0xf,  /* share_deny NONE..BOTH */
		0x30003e, /* wants READ, WRITE, ANY, NO_DELEG, CANCEL, DELEG_TIMESTAMPS (20), OPEN_XOR (21): no signals */
		0x37, /* claims but DELEGATE_PREV (3) and DELEG_PREV_FH (6) */
		0xf,  /* UNCHECKED4, GUARDED4, EXCLUSIVE4, EXCLUSIVE4_1 */
	};
	struct be_attr a = sample();
	struct nfs4_fs_facts facts = { 0 };
	struct nfs4_attr_src s = { .a = &a, .minorversion = 2, .facts = &facts };
	struct nfs4_bitmap b, req = { { 0 } }, mask;
	struct xdr_dec d;

	(void)state;
	nfs4_attr_supported(1, &b);
	assert_false(nfs4_bitmap_isset(&b, FATTR4_OPEN_ARGUMENTS));
	/* RFC 9754 §5.2: the delegated times are 4.2 attributes. */
	assert_false(nfs4_bitmap_isset(&b, FATTR4_TIME_DELEG_ACCESS));
	assert_false(nfs4_bitmap_isset(&b, FATTR4_TIME_DELEG_MODIFY));
	nfs4_attr_supported(2, &b);
	assert_true(nfs4_bitmap_isset(&b, FATTR4_OPEN_ARGUMENTS));
	assert_true(nfs4_bitmap_isset(&b, FATTR4_TIME_DELEG_ACCESS));
	assert_true(nfs4_bitmap_isset(&b, FATTR4_TIME_DELEG_MODIFY));
	nfs4_bitmap_set(&req, FATTR4_OPEN_ARGUMENTS);
	assert_int_equal(encode(&req, &s, &mask, &d), 40);
	assert_true(nfs4_bitmap_isset(&mask, FATTR4_OPEN_ARGUMENTS));
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(u32(&d), 1);
		assert_int_equal(u32(&d), want[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_supported),
		cmocka_unit_test(test_pnfs_attrs),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_left_out),
		cmocka_unit_test(test_fs_space),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_vals_dec),
		cmocka_unit_test(test_open_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
