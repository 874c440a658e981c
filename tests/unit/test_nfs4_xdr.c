/*
 * test_nfs4_xdr.c - nfs/v4/xdr/nfs4_xdr.c: every decoder on a well-formed item,
 * on each of its truncations (every byte), and on hostile counts (bitmap4
 * words, opaque lengths beyond the message or the limit, enum values out of
 * range); component4 name rules (empty, too long, "/", NUL, ".", "..", bad
 * UTF-8); the encoders' byte layout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfs/v4/xdr/nfs4_xdr.h"

static uint8_t buf[4096];

/* A decoder under test: decode len bytes of buf into scratch. */
typedef bool (*dec_fn)(struct xdr_dec *d, void *out);

static bool dec_hdr(struct xdr_dec *d, void *o) { return nfs4_dec_compound_hdr(d, o); }
static bool dec_bitmap(struct xdr_dec *d, void *o) { return nfs4_dec_bitmap(d, o); }
static bool dec_putfh(struct xdr_dec *d, void *o) { return nfs4_dec_putfh(d, o); }
static bool dec_name(struct xdr_dec *d, void *o) { return nfs4_dec_name_args(d, o); }
static bool dec_getattr(struct xdr_dec *d, void *o) { return nfs4_dec_getattr(d, o); }
static bool dec_access(struct xdr_dec *d, void *o) { return nfs4_dec_access(d, o); }
static bool dec_readdir(struct xdr_dec *d, void *o) { return nfs4_dec_readdir(d, o); }
static bool dec_secinfo_nn(struct xdr_dec *d, void *o) { return nfs4_dec_secinfo_nn(d, o); }

/* Decode all n bytes exactly; then each shorter prefix must fail (each copied
 * into an exact-size allocation so ASan sees any overread). */
static void check_truncations(dec_fn fn, const uint8_t *msg, size_t n)
{
	union {
		struct nfs4_compound_hdr h;
		struct nfs4_readdir_args r;
		struct nfs4_putfh_args p;
	} out;
	struct xdr_dec d;

	xdr_dec_init(&d, msg, n);
	assert_true(fn(&d, &out));
	assert_int_equal(xdr_dec_remaining(&d), 0);
	for (size_t k = 0; k < n; k++) {
		uint8_t *copy = malloc(k ? k : 1);
		assert_non_null(copy);
		memcpy(copy, msg, k);
		xdr_dec_init(&d, copy, k);
		assert_false(fn(&d, &out));
		free(copy);
	}
}

static size_t build(void (*fill)(struct xdr_enc *e))
{
	struct xdr_enc e;

	xdr_enc_init(&e, buf, sizeof(buf));
	fill(&e);
	assert_false(e.overflow);
	return xdr_enc_len(&e);
}

static void fill_hdr(struct xdr_enc *e)
{
	xdr_enc_opaque(e, "mount", 5);
	xdr_enc_u32(e, 1);
	xdr_enc_u32(e, 3);
}

static void test_compound_hdr(void **state)
{
	struct nfs4_compound_hdr h;
	struct xdr_dec d;
	size_t n = build(fill_hdr);

	(void)state;
	check_truncations(dec_hdr, buf, n);
	xdr_dec_init(&d, buf, n);
	assert_true(nfs4_dec_compound_hdr(&d, &h));
	assert_int_equal(h.taglen, 5);
	assert_memory_equal(h.tag, "mount", 5);
	assert_int_equal(h.minorversion, 1);
	assert_int_equal(h.numops, 3);
	/* A tag longer than NFS4_TAG_MAX, even if present in full. */
	struct xdr_enc e;
	static uint8_t big[NFS4_TAG_MAX + 1];
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_opaque(&e, big, sizeof(big));
	xdr_enc_u32(&e, 0);
	xdr_enc_u32(&e, 0);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_false(nfs4_dec_compound_hdr(&d, &h));
	/* A tag length word of 2^32-1 with nothing behind it. */
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_u32(&e, UINT32_MAX);
	xdr_dec_init(&d, buf, 4);
	assert_false(nfs4_dec_compound_hdr(&d, &h));
}

static void fill_bitmap(struct xdr_enc *e)
{
	xdr_enc_u32(e, 5); /* more words than we keep: the extra ones are dropped */
	for (uint32_t i = 0; i < 5; i++)
		xdr_enc_u32(e, 0x11111111u * (i + 1));
}

static void test_bitmap(void **state)
{
	struct nfs4_bitmap b;
	struct xdr_dec d;
	struct xdr_enc e;
	size_t n = build(fill_bitmap);

	(void)state;
	check_truncations(dec_bitmap, buf, n);
	xdr_dec_init(&d, buf, n);
	assert_true(nfs4_dec_bitmap(&d, &b));
	assert_int_equal(b.w[0], 0x11111111u);
	assert_int_equal(b.w[2], 0x33333333u);
	/* Hostile counts: over NFS4_BITMAP_MAX, and a huge one. */
	uint32_t hostile[] = { NFS4_BITMAP_MAX + 1, UINT32_MAX, 0x40000000u };
	for (size_t i = 0; i < 3; i++) {
		xdr_enc_init(&e, buf, sizeof(buf));
		xdr_enc_u32(&e, hostile[i]);
		for (uint32_t k = 0; k < 16; k++)
			xdr_enc_u32(&e, 0);
		xdr_dec_init(&d, buf, xdr_enc_len(&e));
		assert_false(nfs4_dec_bitmap(&d, &b));
	}
	/* Empty bitmap. */
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_u32(&e, 0);
	xdr_dec_init(&d, buf, 4);
	assert_true(nfs4_dec_bitmap(&d, &b));
	assert_int_equal(b.w[0] | b.w[1] | b.w[2], 0);
	/* Encoding trims trailing zero words. */
	b = (struct nfs4_bitmap){ { 5, 0, 0 } };
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_enc_bitmap(&e, &b);
	assert_int_equal(xdr_enc_len(&e), 8);
	b.w[2] = 1;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_enc_bitmap(&e, &b);
	assert_int_equal(xdr_enc_len(&e), 16);
	nfs4_bitmap_set(&b, 200); /* out of range: ignored */
	assert_false(nfs4_bitmap_isset(&b, 200));
	nfs4_bitmap_set(&b, 33);
	assert_true(nfs4_bitmap_isset(&b, 33));
}

static void fill_putfh(struct xdr_enc *e)
{
	uint8_t fh[NFS4_FHSIZE];
	memset(fh, 0xab, sizeof(fh));
	xdr_enc_opaque(e, fh, 37);
}

/* An attribute far beyond those we know (pynfs GATT4: number 1000, word 31) decodes;
 * the words past those kept are dropped. */
static void test_bitmap_unknown_attr(void **state)
{
	struct nfs4_bitmap b;
	struct xdr_dec d;
	struct xdr_enc e;

	(void)state;
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_u32(&e, 32);
	for (uint32_t k = 0; k < 32; k++)
		xdr_enc_u32(&e, k == 0 ? 0x2u : k == 31 ? 1u << (1000 % 32) : 0);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_true(nfs4_dec_bitmap(&d, &b));
	assert_int_equal(b.w[0], 0x2u);
	assert_int_equal(b.w[1] | b.w[2], 0);
	assert_int_equal(xdr_dec_remaining(&d), 0);
}

static void test_putfh(void **state)
{
	struct nfs4_putfh_args a;
	struct xdr_dec d;
	struct xdr_enc e;
	size_t n = build(fill_putfh);

	(void)state;
	check_truncations(dec_putfh, buf, n);
	xdr_dec_init(&d, buf, n);
	assert_true(nfs4_dec_putfh(&d, &a));
	assert_int_equal(a.fh.len, 37);
	assert_int_equal(a.fh.data[36], 0xab);
	/* NFS4_FHSIZE + 1 bytes: over the protocol's limit. */
	static uint8_t big[NFS4_FHSIZE + 1];
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_opaque(&e, big, sizeof(big));
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_false(nfs4_dec_putfh(&d, &a));
	/* Exactly NFS4_FHSIZE: fine; and GETFH's encoder gives the same bytes back. */
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_opaque(&e, big, NFS4_FHSIZE);
	size_t len = xdr_enc_len(&e);
	xdr_dec_init(&d, buf, len);
	assert_true(nfs4_dec_putfh(&d, &a));
	uint8_t again[256];
	xdr_enc_init(&e, again, sizeof(again));
	nfs4_enc_fh(&e, &a.fh);
	assert_int_equal(xdr_enc_len(&e), len);
	assert_memory_equal(again, buf, len);
}

static void fill_name(struct xdr_enc *e)
{
	xdr_enc_opaque(e, "hello", 5);
}

static void fill_readdir(struct xdr_enc *e)
{
	xdr_enc_u64(e, 0x0102030405060708ull);
	xdr_enc_fixed(e, "verifier", 8);
	xdr_enc_u32(e, 4096);
	xdr_enc_u32(e, 32768);
	xdr_enc_u32(e, 2);
	xdr_enc_u32(e, 0x0010011a);
	xdr_enc_u32(e, 0x00b0a23a);
}

static void test_ops(void **state)
{
	struct nfs4_readdir_args r;
	struct nfs4_secinfo_nn_args s;
	struct xdr_dec d;
	struct xdr_enc e;
	size_t n;

	(void)state;
	n = build(fill_name);
	check_truncations(dec_name, buf, n);
	n = build(fill_bitmap);
	check_truncations(dec_getattr, buf, n);
	n = build(fill_readdir);
	check_truncations(dec_readdir, buf, n);
	xdr_dec_init(&d, buf, n);
	assert_true(nfs4_dec_readdir(&d, &r));
	assert_true(r.cookie == 0x0102030405060708ull);
	assert_memory_equal(r.verf, "verifier", 8);
	assert_int_equal(r.dircount, 4096);
	assert_int_equal(r.maxcount, 32768);
	assert_true(nfs4_bitmap_isset(&r.req, 1));
	assert_true(nfs4_bitmap_isset(&r.req, 32 + 1));
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_u32(&e, 0x3f);
	check_truncations(dec_access, buf, 4);
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_u32(&e, SECINFO_STYLE4_PARENT);
	check_truncations(dec_secinfo_nn, buf, 4);
	for (uint32_t style = 0; style < 4; style++) {
		xdr_enc_init(&e, buf, sizeof(buf));
		xdr_enc_u32(&e, style == 3 ? UINT32_MAX : style);
		xdr_dec_init(&d, buf, 4);
		assert_int_equal(nfs4_dec_secinfo_nn(&d, &s), style <= SECINFO_STYLE4_PARENT);
	}
}

static uint32_t name_status(const char *s, uint32_t len)
{
	struct nfs4_name n = { (const uint8_t *)s, len };
	return nfs4_name_check(&n);
}

static void test_names(void **state)
{
	static char longname[NFS4_NAME_MAX + 2];

	(void)state;
	memset(longname, 'a', sizeof(longname) - 1);
	assert_int_equal(name_status("file", 4), NFS4_OK);
	assert_int_equal(name_status("", 0), NFS4ERR_INVAL);
	assert_int_equal(name_status(longname, NFS4_NAME_MAX), NFS4_OK);
	assert_int_equal(name_status(longname, NFS4_NAME_MAX + 1), NFS4ERR_NAMETOOLONG);
	assert_int_equal(name_status("a/b", 3), NFS4ERR_BADCHAR);
	assert_int_equal(name_status("a\0b", 3), NFS4ERR_BADCHAR);
	assert_int_equal(name_status(".", 1), NFS4ERR_BADNAME);
	assert_int_equal(name_status("..", 2), NFS4ERR_BADNAME);
	assert_int_equal(name_status("...", 3), NFS4_OK);
	assert_int_equal(name_status("\xc3\xa9t\xc3\xa9", 5), NFS4_OK);     /* été */
	assert_int_equal(name_status("\xf0\x9f\x98\x80", 4), NFS4_OK);      /* U+1F600 */
	assert_int_equal(name_status("\xc3", 1), NFS4ERR_INVAL);            /* truncated */
	assert_int_equal(name_status("\xc0\xaf", 2), NFS4ERR_INVAL);        /* overlong '/' */
	assert_int_equal(name_status("\xed\xa0\x80", 3), NFS4ERR_INVAL);    /* surrogate */
	assert_int_equal(name_status("\xf4\x90\x80\x80", 4), NFS4ERR_INVAL); /* > U+10FFFF */
	assert_int_equal(name_status("\xff", 1), NFS4ERR_INVAL);
	assert_int_equal(name_status("\x80", 1), NFS4ERR_INVAL);
	assert_int_equal(name_status("\xe2\x82", 2), NFS4ERR_INVAL);
}

static void test_encoders(void **state)
{
	static const uint8_t want_access[] = { 0, 0, 0, 0x3f, 0, 0, 0, 0x03 };
	/* sys, krb5i, none: AUTH_SYS; RPCSEC_GSS {krb5 OID, qop 0, integrity}; AUTH_NONE (RFC 8881 §18.29.2) */
	static const uint8_t want_secinfo[] = { 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 6, 0, 0, 0, 9,
						0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02, 0, 0, 0,
						0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0 };
	const uint8_t flavors[] = { 1, 3, 0 };
	struct xdr_enc e;

	(void)state;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_enc_access(&e, 0x3f, 0x03);
	assert_int_equal(xdr_enc_len(&e), sizeof(want_access));
	assert_memory_equal(buf, want_access, sizeof(want_access));
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_enc_secinfo(&e, flavors, 3);
	assert_int_equal(xdr_enc_len(&e), sizeof(want_secinfo));
	assert_memory_equal(buf, want_secinfo, sizeof(want_secinfo));
	/* Overflow is sticky, nothing written past the end. */
	xdr_enc_init(&e, buf, 6);
	nfs4_enc_access(&e, 1, 2);
	assert_true(e.overflow);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compound_hdr), cmocka_unit_test(test_bitmap), cmocka_unit_test(test_bitmap_unknown_attr), cmocka_unit_test(test_putfh),
		cmocka_unit_test(test_ops),          cmocka_unit_test(test_names),  cmocka_unit_test(test_encoders),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
