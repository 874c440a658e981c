/*
 * test_nfs4_xdr_v42.c - XDR of the NFSv4.2 operations and of the xattr
 * operations (nfs/v4/xdr/nfs4_xdr_v42.c): each decoder on a valid item, then
 * every prefix of it refused (truncated at every byte); hostile counts and
 * lengths (COPY's ca_source_server<> beyond its bound, a netloc4 of an
 * unknown type, lengths of 2^32-1, a setxattr_option4 past REPLACE); the
 * encoders' bytes (SEEK, READ_PLUS with hole and data segments inline,
 * COPY's synchronous write_response4, GETXATTR, LISTXATTRS's window).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/xdr/nfs4_v42.h"
#include "nfs/v4/xdr/nfs4_xdr_state.h"
#include "tests/unit/test_nfs4_xdr_util.h"

typedef bool (*dec_fn)(struct xdr_dec *d, void *a);

/* The whole item decodes (and is consumed); every shorter prefix does not. */
static void all_prefixes(dec_fn fn, void *a, size_t asize)
{
	size_t len = xdr_enc_len(&e);
	struct xdr_dec d;

	assert_false(e.overflow);
	memset(a, 0, asize);
	xdr_dec_init(&d, buf, len);
	assert_true(fn(&d, a));
	assert_int_equal(xdr_dec_remaining(&d), 0);
	for (size_t n = 0; n < len; n++) {
		uint8_t scratch[2048];

		xdr_dec_init(&d, buf, n);
		assert_false(fn(&d, scratch));
	}
	memset(a, 0, asize);
	xdr_dec_init(&d, buf, len);
	assert_true(fn(&d, a));
}

static bool dec_once(dec_fn fn, void *a)
{
	struct xdr_dec d;

	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	return fn(&d, a);
}

#define FN(f) ((dec_fn)(void (*)(void))(f))

static void test_alloc_seek(void **state)
{
	struct nfs4_range_args a;

	(void)state;
	start();
	sid(3, 0xaa);
	xdr_enc_u64(&e, 1u << 20);
	xdr_enc_u64(&e, 4096);
	all_prefixes(FN(nfs4_dec_alloc), &a, sizeof(a));
	assert_int_equal(a.sid.seqid, 3);
	assert_int_equal(a.sid.other[11], 0xaa);
	assert_true(a.offset == 1u << 20 && a.length == 4096);
	start();
	sid(0, 0);
	xdr_enc_u64(&e, UINT64_MAX);
	xdr_enc_u32(&e, 7); /* any data_content4 decodes: UNION_NOTSUPP is the execute step's */
	all_prefixes(FN(nfs4_dec_seek), &a, sizeof(a));
	assert_true(a.offset == UINT64_MAX && a.what == 7);
}

static void copy_head(uint32_t nsources)
{
	start();
	sid(1, 0x11);
	sid(2, 0x22);
	xdr_enc_u64(&e, 10);
	xdr_enc_u64(&e, 20);
	xdr_enc_u64(&e, 30);
	xdr_enc_u32(&e, 1);
	xdr_enc_u32(&e, 0);
	xdr_enc_u32(&e, nsources);
}

static void test_copy_clone(void **state)
{
	struct nfs4_copy_args a;

	(void)state;
	copy_head(0);
	all_prefixes(FN(nfs4_dec_copy), &a, sizeof(a));
	assert_true(a.src_sid.seqid == 1 && a.dst_sid.other[0] == 0x22);
	assert_true(a.src_offset == 10 && a.dst_offset == 20 && a.count == 30);
	assert_true(a.consecutive && !a.synchronous && a.nsources == 0);
	/* The three netloc4 arms. */
	copy_head(3);
	xdr_enc_u32(&e, 1), put_opaque("srv", 3);
	xdr_enc_u32(&e, 2), put_opaque("nfs://srv/", 10);
	xdr_enc_u32(&e, 3), put_opaque("tcp", 3), put_opaque("10.0.0.1.8.1", 12);
	all_prefixes(FN(nfs4_dec_copy), &a, sizeof(a));
	assert_int_equal(a.nsources, 3);
	/* Hostile: an unknown netloc type, a count beyond the bound, a string of 2^32-1 bytes, bools of 2. */
	copy_head(1);
	xdr_enc_u32(&e, 4), put_opaque("x", 1);
	assert_false(dec_once(FN(nfs4_dec_copy), &a));
	copy_head(NFS4_COPY_SOURCES_MAX + 1);
	for (uint32_t i = 0; i <= NFS4_COPY_SOURCES_MAX; i++)
		xdr_enc_u32(&e, 1), put_opaque("s", 1);
	assert_false(dec_once(FN(nfs4_dec_copy), &a));
	copy_head(UINT32_MAX);
	assert_false(dec_once(FN(nfs4_dec_copy), &a));
	copy_head(1);
	xdr_enc_u32(&e, 1), xdr_enc_u32(&e, UINT32_MAX);
	assert_false(dec_once(FN(nfs4_dec_copy), &a));
	copy_head(0);
	buf[2 * 16 + 3 * 8 + 3] = 2; /* ca_consecutive = 2 */
	assert_false(dec_once(FN(nfs4_dec_copy), &a));
	/* CLONE4args: the head alone. */
	start();
	sid(1, 1);
	sid(2, 2);
	xdr_enc_u64(&e, 4096);
	xdr_enc_u64(&e, 8192);
	xdr_enc_u64(&e, 0);
	all_prefixes(FN(nfs4_dec_clone), &a, sizeof(a));
	assert_true(a.src_offset == 4096 && a.dst_offset == 8192 && a.count == 0);
	start();
	sid(9, 9);
	{
		struct nfs4_stateid s;
		all_prefixes(FN(nfs4_dec_offload), &s, sizeof(s));
		assert_int_equal(s.seqid, 9);
	}
}

static void test_xattr_args(void **state)
{
	struct nfs4_xattr_args a;
	struct nfs4_listxattrs_args l;

	(void)state;
	start();
	put_opaque("color", 5);
	all_prefixes(FN(nfs4_dec_getxattr), &a, sizeof(a));
	assert_true(a.name.len == 5 && !memcmp(a.name.s, "color", 5));
	start();
	xdr_enc_u32(&e, SETXATTR4_CREATE);
	put_opaque("k", 1);
	put_opaque("value", 5);
	all_prefixes(FN(nfs4_dec_setxattr), &a, sizeof(a));
	assert_true(a.option == SETXATTR4_CREATE && a.value_len == 5 && !memcmp(a.value, "value", 5));
	/* An empty value is a value. */
	start();
	xdr_enc_u32(&e, SETXATTR4_EITHER);
	put_opaque("k", 1);
	put_opaque("", 0);
	all_prefixes(FN(nfs4_dec_setxattr), &a, sizeof(a));
	assert_int_equal(a.value_len, 0);
	/* Hostile: option 3, a value length past what arrived, a key beyond NFS4_OPAQUE_LIMIT. */
	start();
	xdr_enc_u32(&e, 3);
	put_opaque("k", 1);
	put_opaque("v", 1);
	assert_false(dec_once(FN(nfs4_dec_setxattr), &a));
	start();
	xdr_enc_u32(&e, 0);
	put_opaque("k", 1);
	xdr_enc_u32(&e, UINT32_MAX);
	xdr_enc_u32(&e, 0);
	assert_false(dec_once(FN(nfs4_dec_setxattr), &a));
	start();
	xdr_enc_u32(&e, NFS4_OPAQUE_LIMIT + 1);
	for (uint32_t i = 0; i < (NFS4_OPAQUE_LIMIT + 4) / 4; i++)
		xdr_enc_u32(&e, 0x61616161u);
	assert_false(dec_once(FN(nfs4_dec_getxattr), &a));
	start();
	xdr_enc_u64(&e, 5);
	xdr_enc_u32(&e, 4096);
	all_prefixes(FN(nfs4_dec_listxattrs), &l, sizeof(l));
	assert_true(l.cookie == 5 && l.maxcount == 4096);
}

/* A reply decoder over buf. */
static struct xdr_dec rd;

static void reply(void)
{
	assert_false(e.overflow);
	xdr_dec_init(&rd, buf, xdr_enc_len(&e));
}

static uint32_t u32(void)
{
	uint32_t v = 0;

	assert_true(xdr_dec_u32(&rd, &v));
	return v;
}

static uint64_t u64(void)
{
	uint64_t v = 0;

	assert_true(xdr_dec_u64(&rd, &v));
	return v;
}

static void test_encoders(void **state)
{
	struct nfs4_ctx x = { 0 };
	struct nfs4_seek_res s = { .eof = true, .offset = 12345 };
	static const uint8_t data[5] = "abcde";
	struct nfs4_read_plus_res rp = {
		.eof = false, .nsegs = 3,
		.segs = { { NFS4_CONTENT_HOLE, 0, 4096, NULL }, { NFS4_CONTENT_DATA, 4096, 5, data },
			  { NFS4_CONTENT_HOLE, 4101, 100, NULL } },
	};
	struct nfs4_copy_res c = { .count = 1u << 20, .committed = FILE_SYNC4 };
	const uint8_t *p;
	uint32_t n;

	(void)state;
	start();
	nfs4_seek_enc(&x, &e, NFS4_OK, &s);
	reply();
	assert_int_equal(u32(), 1);
	assert_int_equal(u64(), 12345);
	start();
	nfs4_read_plus_enc(&x, &e, NFS4_OK, &rp);
	reply();
	assert_int_equal(u32(), 0);    /* rpr_eof */
	assert_int_equal(u32(), 3);    /* segments */
	assert_int_equal(u32(), NFS4_CONTENT_HOLE);
	assert_int_equal(u64(), 0);
	assert_int_equal(u64(), 4096);
	assert_int_equal(u32(), NFS4_CONTENT_DATA);
	assert_int_equal(u64(), 4096);
	assert_true(xdr_dec_opaque(&rd, 100, &p, &n) && n == 5 && !memcmp(p, "abcde", 5));
	assert_int_equal(u32(), NFS4_CONTENT_HOLE);
	assert_int_equal(u64(), 4101);
	assert_int_equal(u64(), 100);
	assert_int_equal(xdr_dec_remaining(&rd), 0);
	start();
	nfs4_copy_enc(&x, &e, NFS4_OK, &c);
	reply();
	assert_int_equal(u32(), 0); /* wr_callback_id<1>: empty (synchronous) */
	assert_int_equal(u64(), 1u << 20);
	assert_int_equal(u32(), FILE_SYNC4);
	assert_true((p = xdr_dec_inline(&rd, 8)) && !memcmp(p, nfs_write_verf, 8));
	assert_int_equal(u32(), 1); /* cr_consecutive */
	assert_int_equal(u32(), 1); /* cr_synchronous */
	assert_int_equal(xdr_dec_remaining(&rd), 0);
}

/* RFC 7862 §15.2.2: an asynchronous COPY names its copy stateid in
 * wr_callback_id<1> and says cr_synchronous false; §15.9.2: OFFLOAD_STATUS's
 * osr_complete<1> is empty while the copy runs, its status once over. */
static void test_async_encoders(void **state)
{
	struct nfs4_ctx x = { 0 };
	struct nfs4_copy_res c = { .count = 99, .committed = FILE_SYNC4, .async = true,
				   .cb_sid = { .seqid = 1, .other = "0123456789ab" } };
	struct nfs4_offload_status_res run = { .count = 4096 }, over = { .count = 8192, .complete = true,
									 .status = NFS4ERR_NOSPC };
	const uint8_t *p;

	(void)state;
	start();
	nfs4_copy_enc(&x, &e, NFS4_OK, &c);
	reply();
	assert_int_equal(u32(), 1); /* one callback id */
	assert_int_equal(u32(), 1); /* its seqid */
	assert_true((p = xdr_dec_inline(&rd, 12)) && !memcmp(p, "0123456789ab", 12));
	assert_int_equal(u64(), 0);         /* nothing copied yet */
	assert_int_equal(u32(), UNSTABLE4);
	assert_true((p = xdr_dec_inline(&rd, 8)) && !memcmp(p, nfs_write_verf, 8));
	assert_int_equal(u32(), 1); /* cr_consecutive */
	assert_int_equal(u32(), 0); /* cr_synchronous */
	assert_int_equal(xdr_dec_remaining(&rd), 0);
	start();
	nfs4_offload_status_enc(&x, &e, NFS4_OK, &run);
	reply();
	assert_int_equal(u64(), 4096);
	assert_int_equal(u32(), 0);
	assert_int_equal(xdr_dec_remaining(&rd), 0);
	start();
	nfs4_offload_status_enc(&x, &e, NFS4_OK, &over);
	reply();
	assert_int_equal(u64(), 8192);
	assert_int_equal(u32(), 1);
	assert_int_equal(u32(), NFS4ERR_NOSPC);
	assert_int_equal(xdr_dec_remaining(&rd), 0);
}

static void test_listxattrs_enc(void **state)
{
	static const char names[] = "a\0bcd\0efgh";
	struct nfs4_listxattrs_res r = { .names = names, .first = 1, .count = 2, .skip = 2, .cookie = 3, .eof = true };
	struct nfs4_getxattr_res g = { .value = (const uint8_t *)"xyz", .len = 3 };
	struct nfs4_ctx x = { 0 };
	const uint8_t *p;
	uint32_t n;

	(void)state;
	start();
	nfs4_listxattrs_enc(&x, &e, NFS4_OK, &r);
	reply();
	assert_int_equal(u64(), 3);
	assert_int_equal(u32(), 2);
	assert_true(xdr_dec_opaque(&rd, 255, &p, &n) && n == 3 && !memcmp(p, "bcd", 3));
	assert_true(xdr_dec_opaque(&rd, 255, &p, &n) && n == 4 && !memcmp(p, "efgh", 4));
	assert_int_equal(u32(), 1);
	assert_int_equal(xdr_dec_remaining(&rd), 0);
	/* The encoded size is what the window counted: cookie, count, eof, keys. */
	assert_int_equal(xdr_enc_len(&e), 16 + nfs4_xattrkey_size(3) + nfs4_xattrkey_size(4));
	start();
	nfs4_getxattr_enc(&x, &e, NFS4_OK, &g);
	reply();
	assert_true(xdr_dec_opaque(&rd, 100, &p, &n) && n == 3 && !memcmp(p, "xyz", 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_seek), cmocka_unit_test(test_copy_clone), cmocka_unit_test(test_xattr_args),
		cmocka_unit_test(test_encoders),   cmocka_unit_test(test_async_encoders),
		cmocka_unit_test(test_listxattrs_enc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
