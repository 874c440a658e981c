/*
 * test_nfs4_layout_xdr.c - the pNFS flexible-files XDR (nfs/v4/xdr/nfs4_layout_xdr.c):
 * ff_layout4 and ff_device_addr4 round trips, universal addresses, the
 * layout operations' arguments (LAYOUTRETURN with an ff_layoutreturn4 body,
 * LAYOUTCOMMIT, LAYOUTERROR, LAYOUTSTATS with an ff_layoutupdate4) and
 * results; every cut of a valid message is refused, and counts beyond their
 * limits are refused before any loop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/xdr/nfs4_layout_xdr.h"

static uint8_t buf[8192];

static struct nfs4_ff_layout sample_layout(void)
{
	struct nfs4_ff_layout l;

	memset(&l, 0, sizeof(l));
	l.stripe_unit = 1048576;
	memset(l.deviceid, 0, sizeof(l.deviceid));
	l.deviceid[15] = 2;
	l.efficiency = 1;
	l.fh_len = 37;
	for (unsigned i = 0; i < l.fh_len; i++)
		l.fh[i] = (uint8_t)(i * 7 + 1);
	strcpy(l.user, "0");
	strcpy(l.group, "100");
	l.flags = FF_FLAGS_NO_LAYOUTCOMMIT;
	return l;
}

static void test_layout_roundtrip(void **state)
{
	struct nfs4_ff_layout l = sample_layout(), got;
	struct xdr_enc e;
	struct xdr_dec d;

	(void)state;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_ff_enc_layout(&e, &l);
	assert_false(e.overflow);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_true(nfs4_ff_dec_layout(&d, &got));
	assert_int_equal(xdr_dec_remaining(&d), 0);
	assert_int_equal(got.nmirrors, 1);
	assert_int_equal(got.nservers, 1);
	assert_int_equal(got.nfhs, 1);
	assert_int_equal(got.stripe_unit, l.stripe_unit);
	assert_memory_equal(got.deviceid, l.deviceid, NFS4_DEVICEID_SIZE);
	assert_int_equal(got.fh_len, l.fh_len);
	assert_memory_equal(got.fh, l.fh, l.fh_len);
	assert_string_equal(got.user, "0");
	assert_string_equal(got.group, "100");
	assert_int_equal(got.flags, FF_FLAGS_NO_LAYOUTCOMMIT);
	/* Every shorter message is refused. */
	for (size_t n = 0; n < xdr_enc_len(&e); n++) {
		xdr_dec_init(&d, buf, n);
		assert_false(nfs4_ff_dec_layout(&d, &got));
	}
	/* A count of mirrors beyond the limit, or beyond what the bytes can hold. */
	buf[8] = 0, buf[9] = 0, buf[10] = 0x10, buf[11] = 0;
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_false(nfs4_ff_dec_layout(&d, &got));
}

static void test_netaddr(void **state)
{
	struct nfs4_netaddr na;

	(void)state;
	assert_true(nfs4_netaddr_make(&na, "192.0.2.1", 2049, false));
	assert_string_equal(na.netid, "tcp");
	assert_string_equal(na.uaddr, "192.0.2.1.8.1");
	assert_true(nfs4_netaddr_make(&na, "192.0.2.1", 20049, true));
	assert_string_equal(na.netid, "rdma");
	assert_string_equal(na.uaddr, "192.0.2.1.78.81");
	assert_true(nfs4_netaddr_make(&na, "2001:db8:0::1", 2049, false));
	assert_string_equal(na.netid, "tcp6");
	assert_string_equal(na.uaddr, "2001:db8::1.8.1");
	assert_true(nfs4_netaddr_make(&na, "::1", 20049, true));
	assert_string_equal(na.netid, "rdma6");
	assert_false(nfs4_netaddr_make(&na, "host.example", 2049, false));
}

static void test_devaddr_and_getdeviceinfo(void **state)
{
	struct nfs4_getdeviceinfo_res r, got;
	struct xdr_enc e;
	struct xdr_dec d;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_true(nfs4_netaddr_make(&r.addr.addr, "127.0.0.1", 2049, false));
	r.addr.version = 3;
	r.addr.rsize = r.addr.wsize = 1048576;
	r.addr.tightly_coupled = true;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_enc_getdeviceinfo_res(&e, NFS4_OK, &r);
	assert_false(e.overflow);
	/* device_addr4 is what gdia_maxcount bounds; then an empty bitmap4 */
	assert_int_equal(nfs4_getdeviceinfo_size(&r.addr) + 4, xdr_enc_len(&e));
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_true(nfs4_dec_getdeviceinfo_res(&d, NFS4_OK, &got));
	assert_int_equal(xdr_dec_remaining(&d), 0);
	assert_int_equal(got.addr.naddrs, 1);
	assert_string_equal(got.addr.addr.netid, "tcp");
	assert_string_equal(got.addr.addr.uaddr, "127.0.0.1.8.1");
	assert_int_equal(got.addr.nversions, 1);
	assert_int_equal(got.addr.version, 3);
	assert_int_equal(got.addr.minorversion, 0);
	assert_int_equal(got.addr.rsize, 1048576);
	assert_int_equal(got.addr.wsize, 1048576);
	assert_true(got.addr.tightly_coupled);
	for (size_t n = 0; n < xdr_enc_len(&e); n++) {
		xdr_dec_init(&d, buf, n);
		assert_false(nfs4_dec_getdeviceinfo_res(&d, NFS4_OK, &got));
	}
	/* NFS4ERR_TOOSMALL carries gdir_mincount. */
	r.mincount = 88;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_enc_getdeviceinfo_res(&e, NFS4ERR_TOOSMALL, &r);
	assert_int_equal(xdr_enc_len(&e), 4);
	xdr_dec_init(&d, buf, 4);
	assert_true(nfs4_dec_getdeviceinfo_res(&d, NFS4ERR_TOOSMALL, &got));
	assert_int_equal(got.mincount, 88);
}

static void test_layoutget(void **state)
{
	static const uint8_t args[] = {
		0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2,                          /* signal, FLEX_FILES, RW */
		0, 0, 0, 0, 0, 0, 0x10, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* offset, length */
		0, 0, 0, 0, 0, 0, 0, 0,                                      /* minlength */
		0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,           /* stateid */
		0, 0, 0x10, 0,                                               /* maxcount */
	};
	struct nfs4_layoutget_args a;
	struct nfs4_layoutget_res r, got;
	struct xdr_enc e;
	struct xdr_dec d;

	(void)state;
	xdr_dec_init(&d, args, sizeof(args));
	assert_true(nfs4_dec_layoutget(&d, &a));
	assert_int_equal(xdr_dec_remaining(&d), 0);
	assert_true(a.signal_avail);
	assert_int_equal(a.layout_type, LAYOUT4_FLEX_FILES);
	assert_int_equal(a.iomode, LAYOUTIOMODE4_RW);
	assert_int_equal(a.offset, 4096);
	assert_int_equal(a.length, UINT64_MAX);
	assert_int_equal(a.sid.seqid, 1);
	assert_int_equal(a.sid.other[11], 12);
	assert_int_equal(a.maxcount, 4096);
	for (size_t n = 0; n < sizeof(args); n++) {
		xdr_dec_init(&d, args, n);
		assert_false(nfs4_dec_layoutget(&d, &a));
	}
	memset(&r, 0, sizeof(r));
	r.return_on_close = true;
	r.sid.seqid = 3;
	r.sid.other[0] = 0xaa;
	r.length = UINT64_MAX;
	r.iomode = LAYOUTIOMODE4_READ;
	r.ff = sample_layout();
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_enc_layoutget_res(&e, NFS4_OK, &r);
	assert_int_equal(nfs4_layoutget_size(&r), xdr_enc_len(&e)); /* what loga_maxcount bounds */
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_true(nfs4_dec_layoutget_res(&d, NFS4_OK, &got));
	assert_int_equal(xdr_dec_remaining(&d), 0);
	assert_true(got.return_on_close);
	assert_int_equal(got.sid.seqid, 3);
	assert_int_equal(got.sid.other[0], 0xaa);
	assert_int_equal(got.length, UINT64_MAX);
	assert_int_equal(got.iomode, LAYOUTIOMODE4_READ);
	assert_memory_equal(got.ff.fh, r.ff.fh, r.ff.fh_len);
	for (size_t n = 0; n < xdr_enc_len(&e); n++) {
		xdr_dec_init(&d, buf, n);
		assert_false(nfs4_dec_layoutget_res(&d, NFS4_OK, &got));
	}
	/* LAYOUTTRYLATER: logr_will_signal_layout_avail only. */
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_enc_layoutget_res(&e, NFS4ERR_LAYOUTTRYLATER, &r);
	assert_int_equal(xdr_enc_len(&e), 4);
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_enc_layoutget_res(&e, NFS4ERR_LAYOUTUNAVAILABLE, &r);
	assert_int_equal(xdr_enc_len(&e), 0);
}

/* A LAYOUTRETURN4args of type FILE whose lrf_body is an ff_layoutreturn4 with nerr errors. */
static size_t enc_return(uint32_t nerr, bool bad_body)
{
	struct nfs4_device_error errs[40];
	struct nfs4_layout_sid sid = { 5, { 1 } };
	struct nfs4_ff_layoutupdate u;
	struct xdr_enc e;
	size_t off;

	memset(errs, 0, sizeof(errs));
	for (uint32_t i = 0; i < nerr; i++) {
		errs[i].deviceid[15] = (uint8_t)(i + 1);
		errs[i].status = NFS4ERR_NXIO;
		errs[i].opnum = OP_WRITE;
	}
	memset(&u, 0, sizeof(u));
	nfs4_netaddr_make(&u.addr, "192.0.2.7", 2049, false);
	u.read_bytes = 100;
	u.write_bytes = 200;
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_bool(&e, false);
	xdr_enc_u32(&e, LAYOUT4_FLEX_FILES);
	xdr_enc_u32(&e, LAYOUTIOMODE4_ANY);
	xdr_enc_u32(&e, LAYOUTRETURN4_FILE);
	xdr_enc_u64(&e, 0);
	xdr_enc_u64(&e, UINT64_MAX);
	xdr_enc_u32(&e, sid.seqid);
	xdr_enc_fixed(&e, sid.other, 12);
	off = xdr_enc_len(&e);
	xdr_enc_u32(&e, 0);
	xdr_enc_u32(&e, 1); /* fflr_ioerr_report<> */
	nfs4_ff_enc_ioerr(&e, 0, 4096, &sid, errs, nerr);
	xdr_enc_u32(&e, bad_body ? 1000 : 1); /* fflr_iostats_report<> */
	xdr_enc_u64(&e, 0);
	xdr_enc_u64(&e, 4096);
	xdr_enc_u32(&e, sid.seqid);
	xdr_enc_fixed(&e, sid.other, 12);
	for (int i = 0; i < 4; i++)
		xdr_enc_u64(&e, i == 1 ? 100 : i == 3 ? 200 : 1);
	xdr_enc_fixed(&e, errs[0].deviceid, 16);
	nfs4_ff_enc_layoutupdate(&e, &u);
	xdr_enc_patch_u32(&e, off, (uint32_t)(xdr_enc_len(&e) - off - 4));
	assert_false(e.overflow);
	return xdr_enc_len(&e);
}

static void test_layoutreturn(void **state)
{
	static const uint8_t all[] = { 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 3 };
	struct nfs4_layoutreturn_args a;
	struct nfs4_layoutreturn_res r, got;
	struct xdr_dec d;
	struct xdr_enc e;
	size_t len;

	(void)state;
	len = enc_return(2, false);
	memset(&a, 0, sizeof(a));
	xdr_dec_init(&d, buf, len);
	assert_true(nfs4_dec_layoutreturn(&d, &a));
	assert_int_equal(xdr_dec_remaining(&d), 0);
	assert_int_equal(a.returntype, LAYOUTRETURN4_FILE);
	assert_int_equal(a.sid.seqid, 5);
	assert_int_equal(a.length, UINT64_MAX);
	assert_int_equal(a.ff.errors.n, 2);
	assert_int_equal(a.ff.errors.e[1].deviceid[15], 2);
	assert_int_equal(a.ff.errors.e[1].status, NFS4ERR_NXIO);
	assert_int_equal(a.ff.errors.e[1].opnum, OP_WRITE);
	assert_int_equal(a.ff.niostats, 1);
	assert_int_equal(a.ff.read_bytes, 100);
	assert_int_equal(a.ff.write_bytes, 200);
	for (size_t n = 0; n < len; n++) {
		xdr_dec_init(&d, buf, n);
		assert_false(nfs4_dec_layoutreturn(&d, &a));
	}
	/* More errors than kept: the first NFS4_FF_ERRORS_MAX, all counted. */
	len = enc_return(40, false);
	xdr_dec_init(&d, buf, len);
	assert_true(nfs4_dec_layoutreturn(&d, &a));
	assert_int_equal(a.ff.errors.n, NFS4_FF_ERRORS_MAX);
	assert_int_equal(a.ff.errors.total, 40);
	/* A body that does not decode is dropped; the return stands. */
	len = enc_return(2, true);
	xdr_dec_init(&d, buf, len);
	assert_true(nfs4_dec_layoutreturn(&d, &a));
	assert_int_equal(a.ff.errors.n, 0);
	/* ALL (and FSID) carry nothing more; an unknown return type does not decode. */
	xdr_dec_init(&d, all, sizeof(all));
	assert_true(nfs4_dec_layoutreturn(&d, &a));
	assert_int_equal(a.returntype, LAYOUTRETURN4_ALL);
	assert_true(a.reclaim);
	memcpy(buf, all, sizeof(all));
	buf[15] = 9;
	xdr_dec_init(&d, buf, sizeof(all));
	assert_false(nfs4_dec_layoutreturn(&d, &a));
	/* The result: the stateid while layouts remain. */
	memset(&r, 0, sizeof(r));
	r.has_sid = true;
	r.sid.seqid = 9;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_enc_layoutreturn_res(&e, NFS4_OK, &r);
	assert_int_equal(xdr_enc_len(&e), 20);
	xdr_dec_init(&d, buf, 20);
	assert_true(nfs4_dec_layoutreturn_res(&d, NFS4_OK, &got));
	assert_true(got.has_sid);
	assert_int_equal(got.sid.seqid, 9);
	r.has_sid = false;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_enc_layoutreturn_res(&e, NFS4_OK, &r);
	assert_int_equal(xdr_enc_len(&e), 4);
}

static void test_layoutcommit(void **state)
{
	struct nfs4_layoutcommit_args a;
	struct nfs4_layoutcommit_res r = { true, 12345 };
	struct xdr_enc e;
	struct xdr_dec d;
	size_t len;

	(void)state;
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_u64(&e, 0);
	xdr_enc_u64(&e, 8192);
	xdr_enc_bool(&e, false);
	xdr_enc_u32(&e, 2);
	xdr_enc_fixed(&e, "abcdefghijkl", 12);
	xdr_enc_bool(&e, true);
	xdr_enc_u64(&e, 8191); /* last write offset */
	xdr_enc_bool(&e, true);
	xdr_enc_u64(&e, 1700000000);
	xdr_enc_u32(&e, 5);
	xdr_enc_u32(&e, LAYOUT4_FLEX_FILES);
	xdr_enc_opaque(&e, NULL, 0);
	len = xdr_enc_len(&e);
	xdr_dec_init(&d, buf, len);
	assert_true(nfs4_dec_layoutcommit(&d, &a));
	assert_int_equal(xdr_dec_remaining(&d), 0);
	assert_int_equal(a.length, 8192);
	assert_int_equal(a.sid.seqid, 2);
	assert_true(a.has_last_write);
	assert_int_equal(a.last_write, 8191);
	assert_true(a.has_mtime);
	assert_int_equal(a.mtime_sec, 1700000000);
	assert_int_equal(a.mtime_nsec, 5);
	for (size_t n = 0; n < len; n++) {
		xdr_dec_init(&d, buf, n);
		assert_false(nfs4_dec_layoutcommit(&d, &a));
	}
	/* nanoseconds of 10^9 or more are not an nfstime4 */
	buf[len - 12] = 0x40;
	xdr_dec_init(&d, buf, len);
	assert_false(nfs4_dec_layoutcommit(&d, &a));
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_enc_layoutcommit_res(&e, NFS4_OK, &r);
	assert_int_equal(xdr_enc_len(&e), 12);
}

static void test_layouterror_and_stats(void **state)
{
	struct nfs4_device_error errs[2] = { { { 0 }, NFS4ERR_NXIO, OP_READ }, { { 0 }, NFS4ERR_IO, OP_WRITE } };
	struct nfs4_layout_sid sid = { 1, { 0 } };
	struct nfs4_layouterror_args a;
	struct nfs4_layoutstats_args s;
	struct nfs4_ff_layoutupdate u;
	struct xdr_enc e;
	struct xdr_dec d;
	size_t off, len;

	(void)state;
	errs[1].deviceid[15] = 1;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_ff_enc_ioerr(&e, 0, 100, &sid, errs, 2); /* LAYOUTERROR4args has ff_ioerr4's shape */
	len = xdr_enc_len(&e);
	memset(&a, 0, sizeof(a));
	xdr_dec_init(&d, buf, len);
	assert_true(nfs4_dec_layouterror(&d, &a));
	assert_int_equal(a.errors.n, 2);
	assert_int_equal(a.errors.e[0].opnum, OP_READ);
	assert_int_equal(a.errors.e[1].status, NFS4ERR_IO);
	assert_int_equal(a.errors.e[1].deviceid[15], 1);
	for (size_t n = 0; n < len; n++) {
		xdr_dec_init(&d, buf, n);
		memset(&a, 0, sizeof(a));
		assert_false(nfs4_dec_layouterror(&d, &a));
	}
	/* 65 errors: over NFS4_FF_LIST_MAX, refused before the loop. */
	buf[35] = 65;
	xdr_dec_init(&d, buf, sizeof(buf));
	assert_false(nfs4_dec_layouterror(&d, &a));

	memset(&u, 0, sizeof(u));
	nfs4_netaddr_make(&u.addr, "192.0.2.9", 2049, false);
	u.read_ops = 3;
	u.write_bytes = 65536;
	u.local = true;
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_u64(&e, 0);
	xdr_enc_u64(&e, UINT64_MAX);
	xdr_enc_u32(&e, 1);
	xdr_enc_fixed(&e, sid.other, 12);
	for (int i = 0; i < 4; i++)
		xdr_enc_u64(&e, (uint64_t)i + 10);
	xdr_enc_fixed(&e, errs[1].deviceid, 16);
	xdr_enc_u32(&e, LAYOUT4_FLEX_FILES);
	off = xdr_enc_len(&e);
	xdr_enc_u32(&e, 0);
	nfs4_ff_enc_layoutupdate(&e, &u);
	xdr_enc_patch_u32(&e, off, (uint32_t)(xdr_enc_len(&e) - off - 4));
	len = xdr_enc_len(&e);
	memset(&s, 0, sizeof(s));
	xdr_dec_init(&d, buf, len);
	assert_true(nfs4_dec_layoutstats(&d, &s));
	assert_int_equal(xdr_dec_remaining(&d), 0);
	assert_int_equal(s.read_count, 10);
	assert_int_equal(s.write_bytes, 13);
	assert_true(s.has_ff);
	assert_string_equal(s.ff.addr.uaddr, "192.0.2.9.8.1");
	assert_int_equal(s.ff.read_ops, 3);
	assert_int_equal(s.ff.write_bytes, 65536);
	assert_true(s.ff.local);
	for (size_t n = 0; n < len; n++) {
		xdr_dec_init(&d, buf, n);
		assert_false(nfs4_dec_layoutstats(&d, &s));
	}
}

static void test_getdeviceinfo_args(void **state)
{
	uint8_t a[32] = { 0 };
	struct nfs4_getdeviceinfo_args g;
	struct xdr_dec d;

	(void)state;
	a[15] = 1;
	a[19] = LAYOUT4_FLEX_FILES;
	a[22] = 0x10;  /* maxcount 4096 */
	a[27] = 1;     /* one bitmap word */
	a[31] = 0x6;   /* NOTIFY_DEVICEID4_CHANGE | DELETE */
	xdr_dec_init(&d, a, sizeof(a));
	assert_true(nfs4_dec_getdeviceinfo(&d, &g));
	assert_int_equal(g.deviceid[15], 1);
	assert_int_equal(g.layout_type, LAYOUT4_FLEX_FILES);
	assert_int_equal(g.maxcount, 4096);
	xdr_dec_init(&d, a, sizeof(a) - 1);
	assert_false(nfs4_dec_getdeviceinfo(&d, &g));
	a[27] = 65;
	xdr_dec_init(&d, a, sizeof(a));
	assert_false(nfs4_dec_getdeviceinfo(&d, &g));
}

/* GETDEVICELIST4args in, GETDEVICELIST4resok out and back (RFC 8881 §18.41.1, §18.41.2). */
static void test_getdevicelist(void **state)
{
	uint8_t a[24] = { 0 };
	struct nfs4_getdevicelist_args g;
	struct nfs4_getdevicelist_res r, got;
	struct xdr_enc e;
	struct xdr_dec d;

	(void)state;
	a[3] = LAYOUT4_FLEX_FILES;
	a[7] = 8;      /* gdla_maxdevices */
	a[15] = 2;     /* gdla_cookie */
	a[23] = 0x77;  /* the verifier's last byte */
	xdr_dec_init(&d, a, sizeof(a));
	assert_true(nfs4_dec_getdevicelist(&d, &g));
	assert_int_equal(xdr_dec_remaining(&d), 0);
	assert_int_equal(g.layout_type, LAYOUT4_FLEX_FILES);
	assert_int_equal(g.maxdevices, 8);
	assert_int_equal(g.cookie, 2);
	assert_int_equal(g.cookieverf[7], 0x77);
	xdr_dec_init(&d, a, sizeof(a) - 1);
	assert_false(nfs4_dec_getdevicelist(&d, &g));

	memset(&r, 0, sizeof(r));
	r.cookie = 3;
	memcpy(r.cookieverf, "verifier", 8);
	r.n = 2;
	r.ids[0][15] = 1;
	r.ids[1][15] = 2;
	r.eof = true;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_enc_getdevicelist_res(&e, NFS4_OK, &r);
	assert_int_equal(xdr_enc_len(&e), 8 + 8 + 4 + 2 * NFS4_DEVICEID_SIZE + 4);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_true(nfs4_dec_getdevicelist_res(&d, NFS4_OK, &got));
	assert_int_equal(xdr_dec_remaining(&d), 0);
	assert_memory_equal(&got, &r, sizeof(r));
	for (size_t n = 0; n < xdr_enc_len(&e); n++) {
		xdr_dec_init(&d, buf, n);
		assert_false(nfs4_dec_getdevicelist_res(&d, NFS4_OK, &got));
	}
	/* more ids than the decoder keeps: refused */
	buf[19] = NFS4_DEVLIST_MAX + 1;
	xdr_dec_init(&d, buf, sizeof(buf));
	assert_false(nfs4_dec_getdevicelist_res(&d, NFS4_OK, &got));
	/* an error: no body */
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_enc_getdevicelist_res(&e, NFS4ERR_NOT_SAME, &r);
	assert_int_equal(xdr_enc_len(&e), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_roundtrip),
		cmocka_unit_test(test_netaddr),
		cmocka_unit_test(test_devaddr_and_getdeviceinfo),
		cmocka_unit_test(test_layoutget),
		cmocka_unit_test(test_layoutreturn),
		cmocka_unit_test(test_layoutcommit),
		cmocka_unit_test(test_layouterror_and_stats),
		cmocka_unit_test(test_getdeviceinfo_args),
		cmocka_unit_test(test_getdevicelist),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
