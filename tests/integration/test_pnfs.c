/*
 * test_pnfs.c - the pNFS flexible-files metadata server (issue 28) through
 * the real daemon and raw COMPOUNDs (nfs4raw.h), the daemon being its own
 * data server ([pnfs] data-servers = 127.0.0.1:PORT/tcp) over a local
 * export with pnfs=flexfiles, beside a plain export:
 *  - EXCHANGE_ID answers USE_PNFS_MDS with USE_NON_PNFS (RFC 8881 §13.1);
 *    fs_layout_type is [LAYOUT4_FLEX_FILES] and layout_blksize 1 MiB on the
 *    pnfs export, an empty list (and no block size) on the plain one;
 *  - LAYOUTGET with the open stateid gives a decodable ff_layout4 (RFC 8435
 *    §5.1): one data server, the MDS's own handle (tight coupling, §2.2),
 *    return-on-close, seqid 1; the stats gauge counts it; again with the
 *    layout stateid: seqid 2, the same stateid; a seqid from the future is
 *    BAD_STATEID; iomode ANY is BADIOMODE; another layout type is
 *    UNKNOWN_LAYOUTTYPE; the plain export is LAYOUTUNAVAILABLE;
 *  - GETDEVICEINFO decodes to netid "tcp" and the daemon's own universal
 *    address, NFSv3, tightly coupled; a small gdia_maxcount is TOOSMALL with
 *    the size needed; an unknown device NOENT;
 *  - GETDEVICELIST lists the one data server (the layout's device), eof,
 *    cookie 1; from cookie 1 nothing more; another verifier NOT_SAME, a
 *    cookie past the list BAD_COOKIE, gdla_maxdevices 0 INVAL, the files
 *    layout type UNKNOWN_LAYOUTTYPE; the plain export lists none; without
 *    [pnfs] NOTSUPP;
 *  - the layout's handle works with NFSv3 WRITE and READ (libnfs) on the
 *    data server: data written through NFSv4 reads back through NFSv3 and
 *    the reverse, and the file on disk holds both; the data server's
 *    counters (stats pnfs_ds, rnfsctl stats) count that WRITE and READ and
 *    their bytes, not an NFSv3 READ on the plain export;
 *  - LAYOUTCOMMIT (RW held) answers; LAYOUTSTATS answers; LAYOUTERROR with
 *    NXIO takes the data server out: LAYOUTGET is LAYOUTUNAVAILABLE until
 *    ds-unavailable-seconds pass, then granted again; the error is counted
 *    (nfs4_bounds, the pnfs_data_servers section, rnfsctl stats, and the
 *    data servers' table under rnfsctl layouts);
 *  - an ff_ioerr4 (NXIO) in LAYOUTRETURN takes the data server out the
 *    same way, but not when the return's stateid is not the client's;
 *  - a soak of 3000 LAYOUTGET/LAYOUTRETURN cycles over 16 files leaves the
 *    table empty and the daemon's resident memory within 2 MiB;
 *  - LAYOUTRETURN of the file (iomode ANY) gives no stateid back and the
 *    table is empty; return-on-close: CLOSE ends the layout; LAYOUTRETURN
 *    ALL ends a client's layouts of two files; a client destroyed with a
 *    layout leaves none;
 *  - after a restart with a recorded client (grace-time = 5): LAYOUTGET is
 *    GRACE, LAYOUTCOMMIT with loca_reclaim is accepted; once grace is over
 *    LAYOUTGET is granted and a reclaiming LAYOUTCOMMIT is NO_GRACE;
 *  - recalls (RFC 8881 §12.5.5; lease-time 10), a 4.1 holder at 127.0.0.2
 *    playing its callback service: the holder's own NFSv3 I/O (its address)
 *    recalls nothing; rnfsctl client list and rnfsctl layouts show its
 *    layout; an NFSv3 WRITE from 127.0.0.1 sends CB_LAYOUTRECALL
 *    FILE (the stateid's next seqid), again after a DELAY answer; LAYOUTGET meanwhile RECALLCONFLICT;
 *    LAYOUTRETURN ends it; another client's truncate recalls, and a recall
 *    not returned is revoked after the lease (RECALLABLE_STATE_REVOKED,
 *    dropped at the holder's next LAYOUTGET with its open stateid);
 *    another client's REMOVE, or RENAME over the file, recalls
 *    (NOMATCHING_LAYOUT ends the recall);
 *    so do an NFSv3 REMOVE and an NFSv3 RENAME over the file; an NFSv3
 *    RENAME of the held file itself recalls nothing;
 *    rnfsctl export remove sends CB_LAYOUTRECALL FSID and revokes;
 *  - without [pnfs]: the pnfs=flexfiles export is logged as offering no
 *    layouts; EXCHANGE_ID has no USE_PNFS_MDS and LAYOUTGET is NOTSUPP, as
 *    before pNFS.
 */
#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"
#include "nfs/v4/xdr/nfs4_layout_xdr.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXID_USE_NON_PNFS 0x00010000u
#define EXID_USE_PNFS_MDS 0x00020000u

static struct hx_env env;
static char plain_dir[PATH_MAX];

static void to_n4(const struct nfs4_layout_sid *l, struct n4_sid *s)
{
	s->seqid = l->seqid;
	memcpy(s->other, l->other, sizeof(s->other));
}

/* LAYOUTGET on fh with sid (an open or layout stateid): its status; the result decoded into *r. */
static int layoutget(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t type, uint32_t iomode,
		     const struct n4_sid *sid, struct nfs4_layoutget_res *r)
{
	struct raw_reply rep;
	struct xb a;
	int st;
	struct xdr_dec d;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_LAYOUTGET);
	xb_u32(&a, 0);        /* loga_signal_layout_avail */
	xb_u32(&a, type);
	xb_u32(&a, iomode);
	xb_u64(&a, 0);        /* offset */
	xb_u64(&a, UINT64_MAX);
	xb_u64(&a, 4096);     /* minlength */
	n4_xb_sid(&a, sid);
	xb_u32(&a, 4096);     /* loga_maxcount */
	st = n4_call(k, &a, &rep);
	memset(r, 0, sizeof(*r));
	if (st >= 0 && n4_res(&rep, N4_PUTFH) == 0) {
		st = n4_res(&rep, N4_LAYOUTGET);
		xdr_dec_init(&d, rep.body.p + rep.body.pos, rep.body.len - rep.body.pos);
		if (st >= 0 && !nfs4_dec_layoutget_res(&d, (uint32_t)st, r))
			st = -2; /* does not decode */
	}
	raw_reply_free(&rep);
	return st;
}

/* LAYOUTRETURN of returntype (FILE: of fh with sid, iomode): its status; *has_sid whether a stateid came back. */
static uint8_t cur_devid[16];
static bool return_with_error; /* the next FILE return carries an ff_ioerr4: NXIO on cur_devid */

static int layoutreturn(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t returntype,
			uint32_t iomode, const struct n4_sid *sid, bool *has_sid)
{
	struct nfs4_layoutreturn_res res;
	struct raw_reply rep;
	struct xb a;
	struct xdr_dec d;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_LAYOUTRETURN);
	xb_u32(&a, 0); /* lora_reclaim */
	xb_u32(&a, LAYOUT4_FLEX_FILES);
	xb_u32(&a, iomode);
	xb_u32(&a, returntype);
	if (returntype == LAYOUTRETURN4_FILE) {
		xb_u64(&a, 0);
		xb_u64(&a, UINT64_MAX);
		n4_xb_sid(&a, sid);
		if (return_with_error) { /* ff_layoutreturn4 (RFC 8435 §9.3): one ff_ioerr4, no iostats */
			struct nfs4_device_error de = { .status = N4ERR_NXIO, .opnum = N4_READ };
			struct nfs4_layout_sid ls = { .seqid = sid->seqid };
			uint8_t body[256];
			struct xdr_enc e;

			memcpy(de.deviceid, cur_devid, 16);
			memcpy(ls.other, sid->other, 12);
			xdr_enc_init(&e, body, sizeof(body));
			xdr_enc_u32(&e, 1);
			nfs4_ff_enc_ioerr(&e, 0, 4096, &ls, &de, 1);
			xdr_enc_u32(&e, 0);
			xb_opaque(&a, body, (uint32_t)xdr_enc_len(&e));
		} else {
			xb_u32(&a, 0); /* lrf_body: empty */
		}
	}
	st = n4_call(k, &a, &rep);
	if (st >= 0 && n4_res(&rep, N4_PUTFH) == 0) {
		st = n4_res(&rep, N4_LAYOUTRETURN);
		xdr_dec_init(&d, rep.body.p + rep.body.pos, rep.body.len - rep.body.pos);
		if (st >= 0 && !nfs4_dec_layoutreturn_res(&d, (uint32_t)st, &res))
			st = -2;
		*has_sid = res.has_sid;
	}
	raw_reply_free(&rep);
	return st;
}

/* GETDEVICEINFO of devid with maxcount: its status; the result into *r. */
static int getdeviceinfo(struct n4_client *k, const uint8_t devid[16], uint32_t maxcount,
			 struct nfs4_getdeviceinfo_res *r)
{
	struct raw_reply rep;
	struct xb a;
	struct xdr_dec d;
	int st;

	n4_begin(k, &a, 1);
	xb_u32(&a, N4_GETDEVICEINFO);
	xb_raw(&a, devid, 16);
	xb_u32(&a, LAYOUT4_FLEX_FILES);
	xb_u32(&a, maxcount);
	xb_u32(&a, 0); /* gdia_notify_types: empty bitmap4 */
	st = n4_call(k, &a, &rep);
	if (st >= 0) {
		st = n4_res(&rep, N4_GETDEVICEINFO);
		xdr_dec_init(&d, rep.body.p + rep.body.pos, rep.body.len - rep.body.pos);
		if (st >= 0 && !nfs4_dec_getdeviceinfo_res(&d, (uint32_t)st, r))
			st = -2;
	}
	raw_reply_free(&rep);
	return st;
}

/* GETDEVICELIST (RFC 8881 §18.41) on fh of type, maxdevices, cookie, verf (NULL: zeros): its status,
 * the result into *r. */
static int getdevicelist(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t type, uint32_t maxdevices,
			 uint64_t cookie, const uint8_t *verf, struct nfs4_getdevicelist_res *r)
{
	static const uint8_t zero[NFS4_DEVLIST_VERF];
	struct raw_reply rep;
	struct xb a;
	struct xdr_dec d;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_GETDEVICELIST);
	xb_u32(&a, type);
	xb_u32(&a, maxdevices);
	xb_u64(&a, cookie);
	xb_raw(&a, verf ? verf : zero, NFS4_DEVLIST_VERF);
	st = n4_call(k, &a, &rep);
	memset(r, 0, sizeof(*r));
	if (st >= 0 && n4_res(&rep, N4_PUTFH) == 0) {
		st = n4_res(&rep, N4_GETDEVICELIST);
		xdr_dec_init(&d, rep.body.p + rep.body.pos, rep.body.len - rep.body.pos);
		if (st >= 0 && !nfs4_dec_getdevicelist_res(&d, (uint32_t)st, r))
			st = -2;
	}
	raw_reply_free(&rep);
	return st;
}

/* An operation on fh whose arguments are a layout stateid's range and more (LAYOUTCOMMIT, LAYOUTERROR,
 * LAYOUTSTATS), written by add(): its status. */
static int layout_op(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t op,
		     void (*add)(struct xb *a, const struct n4_sid *sid), const struct n4_sid *sid)
{
	struct raw_reply rep;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, op);
	add(&a, sid);
	st = n4_call(k, &a, &rep);
	if (st >= 0 && n4_res(&rep, N4_PUTFH) == 0)
		st = n4_res(&rep, op);
	raw_reply_free(&rep);
	return st;
}

/* LAYOUTCOMMIT4args: the whole file, no reclaim, a last write offset, no mtime, an empty flexfiles body. */
static void add_commit(struct xb *a, const struct n4_sid *sid)
{
	xb_u64(a, 0);
	xb_u64(a, 8192);
	xb_u32(a, 0);
	n4_xb_sid(a, sid);
	xb_u32(a, 1);
	xb_u64(a, 8191);
	xb_u32(a, 0);
	xb_u32(a, LAYOUT4_FLEX_FILES);
	xb_u32(a, 0);
}

/* The same with loca_reclaim set (a commit after the server restarted). */
static void add_commit_reclaim(struct xb *a, const struct n4_sid *sid)
{
	xb_u64(a, 0);
	xb_u64(a, 8192);
	xb_u32(a, 1);
	n4_xb_sid(a, sid);
	xb_u32(a, 0);
	xb_u32(a, 0);
	xb_u32(a, LAYOUT4_FLEX_FILES);
	xb_u32(a, 0);
}

/* LAYOUTERROR4args: one device error, NXIO on WRITE (the data server did not answer). */
static void add_error(struct xb *a, const struct n4_sid *sid)
{
	xb_u64(a, 0);
	xb_u64(a, 4096);
	n4_xb_sid(a, sid);
	xb_u32(a, 1);
	xb_raw(a, cur_devid, 16);
	xb_u32(a, N4ERR_NXIO);
	xb_u32(a, N4_WRITE);
}

/* LAYOUTSTATS4args with an ff_layoutupdate4 body. */
static void add_stats(struct xb *a, const struct n4_sid *sid)
{
	struct nfs4_ff_layoutupdate u = { .read_ops = 1, .read_bytes = 4096, .write_ops = 1, .write_bytes = 4096 };
	uint8_t body[512];
	struct xdr_enc e;

	nfs4_netaddr_make(&u.addr, "127.0.0.1", env.port, false);
	xdr_enc_init(&e, body, sizeof(body));
	nfs4_ff_enc_layoutupdate(&e, &u);
	xb_u64(a, 0);
	xb_u64(a, UINT64_MAX);
	n4_xb_sid(a, sid);
	for (int i = 0; i < 4; i++)
		xb_u64(a, 4096);
	xb_raw(a, cur_devid, 16);
	xb_u32(a, LAYOUT4_FLEX_FILES);
	xb_opaque(a, body, (uint32_t)xdr_enc_len(&e));
}

/* GETATTR fs_layout_type (62) and layout_blksize (65) of fh: the list's first type (0: empty, -1: no answer)
 * and the block size (0: not returned). */
static long layout_attrs(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t *blksize)
{
	struct raw_reply rep;
	struct xb a;
	long type = -1;
	uint32_t nw, w[3] = { 0 }, len, n;

	*blksize = 0;
	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_GETATTR);
	xb_u32(&a, 3);
	xb_u32(&a, 0);
	xb_u32(&a, 1u << (62 - 32));
	xb_u32(&a, 1u << (65 - 64));
	if (n4_call(k, &a, &rep) == 0 && n4_res(&rep, N4_PUTFH) == 0 && n4_res(&rep, N4_GETATTR) == 0) {
		nw = xd_u32(&rep.body);
		for (uint32_t i = 0; i < nw; i++) {
			uint32_t v = xd_u32(&rep.body);

			if (i < 3)
				w[i] = v;
		}
		len = xd_u32(&rep.body);
		(void)len;
		if (w[1] & (1u << 30)) {
			n = xd_u32(&rep.body);
			type = n ? (long)xd_u32(&rep.body) : 0;
			for (uint32_t i = 1; i < n; i++)
				xd_u32(&rep.body);
		}
		if (w[2] & 2u)
			*blksize = xd_u32(&rep.body);
		if (rep.body.bad)
			type = -1;
	}
	raw_reply_free(&rep);
	return type;
}

static long long gauge(const char *key)
{
	char *doc = n4_stats_json(env.stats_socket);
	long long v = doc ? n4_stats_num(doc, "nfs4_bounds", key) : -1;

	free(doc);
	return v;
}

/* A number of the stats document's "pnfs_ds" (a data server's counters, nfs/common/pnfs_ds.c). */
static long long ds_counter(const char *key)
{
	char *doc = n4_stats_json(env.stats_socket);
	long long v = doc ? n4_stats_num(doc, "pnfs_ds", key) : -1;

	free(doc);
	return v;
}

/* The data server's counters around ds_io's WRITE and READ; a plain export's NFSv3 I/O is not counted. */
static void ds_counted(long long writes, long long reads, long long wbytes, long long rbytes)
{
	struct rpc_context *rpc = NULL;
	struct hx_fh root, fh;
	READ3res rd;
	char out[16384];

	CHECK_EQ(ds_counter("writes"), writes + 1, "pnfs_ds.writes: the data server's WRITE counted");
	CHECK_EQ(ds_counter("reads"), reads + 1, "pnfs_ds.reads: its READ");
	CHECK_EQ(ds_counter("write_bytes"), wbytes + 23, "pnfs_ds.write_bytes");
	CHECK_EQ(ds_counter("read_bytes"), rbytes + 11, "pnfs_ds.read_bytes");
	CHECK(hx_rnfsctl(&env, -1, out, sizeof(out), (const char *const[]){ "stats", NULL }) == 0 &&
	      strstr(out, "pNFS data server: "), "rnfsctl stats: the data server's line");
	hx_write_file(hx_path(&env, "plain/p0"), "plain", 5, 0644);
	if (hx_open_export(&env, plain_dir, -1, -1, &rpc, &root) != 0)
		return;
	if (CHECK_NFS(hx3_lookup(rpc, &root, "p0", &fh, NULL), NFS3_OK, "LOOKUP p0 on the plain export"))
		CHECK_NFS(hx3_read(rpc, &fh, 0, 5, &rd), NFS3_OK, "NFSv3 READ on the plain export");
	CHECK_EQ(ds_counter("reads"), reads + 1, "a plain export's READ is no data server's");
	hx_rpc_close(rpc);
}

/* NFSv3 WRITE then READ through the layout's handle on the data server (the daemon itself). */
static void ds_io(const struct nfs4_ff_layout *l)
{
	struct rpc_context *rpc = hx_rpc_connect(&env, NFS_PROGRAM, NFS_V3, 0, 0);
	struct hx_fh fh = { .len = l->fh_len };
	long long w0 = ds_counter("writes"), r0 = ds_counter("reads");
	long long wb0 = ds_counter("write_bytes"), rb0 = ds_counter("read_bytes");
	WRITE3res wr;
	READ3res rd;
	char buf[64];
	int fd;

	hx_section("NFSv3 I/O on the data server with the layout's handle (tight coupling)");
	if (!CHECK(rpc != NULL, "NFSv3 connection to the data server") ||
	    !CHECK(l->fh_len <= sizeof(fh.data), "the handle (%u bytes) fits NFSv3's 64", l->fh_len)) {
		hx_rpc_close(rpc);
		return;
	}
	memcpy(fh.data, l->fh, l->fh_len);
	CHECK_NFS(hx3_write(rpc, &fh, 4096, "through the data server", 23, FILE_SYNC, &wr), NFS3_OK,
		  "NFSv3 WRITE with the MDS handle");
	CHECK_NFS(hx3_read(rpc, &fh, 0, 11, &rd), NFS3_OK, "NFSv3 READ with the MDS handle");
	CHECK(rd.status == NFS3_OK && rd.READ3res_u.resok.data.data_len == 11 &&
	      !memcmp(rd.READ3res_u.resok.data.data_val, "through MDS", 11),
	      "NFSv3 READ returns what NFSv4 wrote");
	fd = open(hx_xpath(&env, "f1"), O_RDONLY);
	CHECK(fd >= 0 && pread(fd, buf, 23, 4096) == 23 && !memcmp(buf, "through the data server", 23),
	      "the file on disk holds the data server's write");
	if (fd >= 0)
		close(fd);
	hx_rpc_close(rpc);
	ds_counted(w0, r0, wb0, rb0);
}

static void check_layout(const struct nfs4_layoutget_res *r, const uint8_t *fh, uint32_t fh_len)
{
	CHECK(r->return_on_close, "return-on-close set");
	CHECK(r->offset == 0 && r->length == UINT64_MAX, "a whole-file layout");
	CHECK_EQ(r->ff.nmirrors, 1, "one mirror");
	CHECK_EQ(r->ff.nservers, 1, "one data server");
	CHECK(r->ff.fh_len == fh_len && !memcmp(r->ff.fh, fh, fh_len), "the layout's handle is the MDS's own");
	CHECK(r->ff.user[0] >= '0' && r->ff.user[0] <= '9', "ffds_user numeric (%s)", r->ff.user);
	CHECK(r->ff.flags & FF_FLAGS_NO_LAYOUTCOMMIT, "FF_FLAGS_NO_LAYOUTCOMMIT");
}

static void part_getdeviceinfo(struct n4_client *k, const uint8_t devid[16])
{
	struct nfs4_getdeviceinfo_res g;
	char want[64];
	uint8_t bad[16] = { 0 };

	hx_section("GETDEVICEINFO");
	CHECK_NFS(getdeviceinfo(k, devid, 4096, &g), N4_OK, "GETDEVICEINFO of the layout's device");
	snprintf(want, sizeof(want), "127.0.0.1.%u.%u", env.port >> 8, env.port & 0xff);
	CHECK(!strcmp(g.addr.addr.netid, "tcp"), "netid tcp (%s)", g.addr.addr.netid);
	CHECK(!strcmp(g.addr.addr.uaddr, want), "the configured address (%s)", g.addr.addr.uaddr);
	CHECK(g.addr.version == 3 && g.addr.minorversion == 0, "NFSv3");
	CHECK(g.addr.tightly_coupled, "tightly coupled");
	CHECK(g.addr.rsize >= 65536 && g.addr.wsize >= 65536, "rsize/wsize %u/%u", g.addr.rsize, g.addr.wsize);
	CHECK_NFS(getdeviceinfo(k, devid, 16, &g), N4ERR_TOOSMALL, "gdia_maxcount 16: TOOSMALL");
	CHECK(g.mincount > 16 && g.mincount <= 4096, "gdir_mincount %u", g.mincount);
	CHECK_NFS(getdeviceinfo(k, bad, 4096, &g), N4ERR_NOENT, "an unknown device: NOENT");
}

#define N4ERR_BAD_COOKIE_ 10003

/* GETDEVICELIST of the pnfs export: its one data server, the layout's device, then the end. */
static void part_getdevicelist(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const uint8_t devid[16])
{
	struct nfs4_getdevicelist_res g, h;
	uint8_t bad[NFS4_DEVLIST_VERF];

	hx_section("GETDEVICELIST");
	if (!CHECK_NFS(getdevicelist(k, fh, fh_len, LAYOUT4_FLEX_FILES, 8, 0, NULL, &g), N4_OK, "GETDEVICELIST"))
		return;
	CHECK(g.n == 1 && !memcmp(g.ids[0], devid, 16), "one device, the layout's (%u)", g.n);
	CHECK(g.eof && g.cookie == 1, "eof, cookie 1 (%d %llu)", g.eof, (unsigned long long)g.cookie);
	CHECK(memcmp(g.cookieverf, (uint8_t[NFS4_DEVLIST_VERF]){ 0 }, NFS4_DEVLIST_VERF) != 0, "a cookie verifier");
	CHECK_NFS(getdevicelist(k, fh, fh_len, LAYOUT4_FLEX_FILES, 8, 1, g.cookieverf, &h), N4_OK,
		  "from cookie 1 with the verifier");
	CHECK(h.n == 0 && h.eof && h.cookie == 1, "no more devices, eof (%u)", h.n);
	memcpy(bad, g.cookieverf, sizeof(bad));
	bad[7] ^= 0xff;
	CHECK_NFS(getdevicelist(k, fh, fh_len, LAYOUT4_FLEX_FILES, 8, 1, bad, &h), N4ERR_NOT_SAME,
		  "another verifier: NOT_SAME");
	CHECK_NFS(getdevicelist(k, fh, fh_len, LAYOUT4_FLEX_FILES, 8, 2, g.cookieverf, &h), N4ERR_BAD_COOKIE_,
		  "a cookie past the list: BAD_COOKIE");
	CHECK_NFS(getdevicelist(k, fh, fh_len, LAYOUT4_FLEX_FILES, 0, 0, NULL, &h), N4ERR_INVAL,
		  "gdla_maxdevices 0: INVAL");
	CHECK_NFS(getdevicelist(k, fh, fh_len, LAYOUT4_NFSV4_1_FILES, 8, 0, NULL, &h), N4ERR_UNKNOWN_LAYOUTTYPE,
		  "the files layout type: UNKNOWN_LAYOUTTYPE");
}

/* LAYOUTERROR takes the only data server out for ds-unavailable-seconds (2). */
static void part_error(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, struct n4_sid *lsid)
{
	struct nfs4_layoutget_res r;
	int st;

	hx_section("LAYOUTSTATS, LAYOUTERROR and the data server's time out");
	CHECK_NFS(layout_op(k, fh, fh_len, N4_LAYOUTSTATS, add_stats, lsid), N4_OK, "LAYOUTSTATS");
	CHECK_NFS(layout_op(k, fh, fh_len, N4_LAYOUTERROR, add_error, lsid), N4_OK, "LAYOUTERROR NXIO");
	CHECK_EQ(gauge("layout_errors"), 1, "the error counted (nfs4_bounds.layout_errors)");
	{
		char *doc = n4_stats_json(env.stats_socket);
		const char *ds = doc ? strstr(doc, "\"pnfs_data_servers\": [") : NULL;

		CHECK(ds && strstr(ds, "\"address\": \"127.0.0.1\"") && strstr(ds, "\"errors\": 1") &&
		      strstr(ds, "\"unavailable\": 1"), "pnfs_data_servers: the data server, its error, unavailable");
		free(doc);
	}
	{
		char out[8192];
		const char *args[] = { "stats", NULL };

		CHECK(hx_rnfsctl(&env, -1, out, sizeof(out), args) == 0 && strstr(out, "PNFS DATA SERVER") &&
		      strstr(out, "unavailable") && strstr(out, "pNFS layouts"),
		      "rnfsctl stats lists the data server and the layouts");
		CHECK(hx_rnfsctl(&env, -1, out, sizeof(out), (const char *const[]){ "layouts", NULL }) == 0 &&
		      strstr(out, "PNFS DATA SERVER") && strstr(out, " 1 unavailable"),
		      "rnfsctl layouts: the data servers' table, the error reported of it");
	}
	CHECK_NFS(layoutget(k, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_READ, lsid, &r), N4ERR_LAYOUTUNAVAILABLE,
		  "LAYOUTGET while the only data server is out: LAYOUTUNAVAILABLE (I/O through the MDS)");
	sleep(3);
	st = layoutget(k, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_READ, lsid, &r);
	CHECK_NFS(st, N4_OK, "LAYOUTGET after ds-unavailable-seconds: granted again");
	if (st == 0)
		to_n4(&r.sid, lsid);
}

static void part_layouts(struct n4_client *k)
{
	struct nfs4_layoutget_res r;
	struct n4_sid osid, lsid, future;
	uint8_t fh[128];
	uint32_t fh_len = 0;
	bool has = true;
	int st;

	hx_section("LAYOUTGET");
	CHECK_NFS(n4_open(k, env.export_dir, "f1", true, N4_ACCESS_BOTH, 0, "o1", NULL, &osid, fh, &fh_len), N4_OK,
		  "OPEN f1");
	CHECK_NFS(n4_write(k, fh, fh_len, &osid, 0, "through MDS", 11), N4_OK, "NFSv4 WRITE through the MDS");
	{
		uint32_t bs;

		CHECK_EQ(layout_attrs(k, fh, fh_len, &bs), LAYOUT4_FLEX_FILES, "fs_layout_type: LAYOUT4_FLEX_FILES");
		CHECK_EQ(bs, 1u << 20, "layout_blksize 1 MiB");
	}
	st = layoutget(k, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_RW, &osid, &r);
	if (!CHECK_NFS(st, N4_OK, "LAYOUTGET RW with the open stateid"))
		return;
	check_layout(&r, fh, fh_len);
	CHECK_EQ(r.sid.seqid, 1, "layout stateid seqid 1");
	to_n4(&r.sid, &lsid);
	memcpy(cur_devid, r.ff.deviceid, 16);
	CHECK_EQ(gauge("layouts"), 1, "nfs4_bounds.layouts counts it");
	CHECK(gauge("layouts_max") > 0, "and its bound");
	part_getdeviceinfo(k, r.ff.deviceid);
	part_getdevicelist(k, fh, fh_len, r.ff.deviceid);
	ds_io(&r.ff);
	CHECK_EQ(gauge("layout_recalls"), 0, "the holder's own NFSv3 I/O (its address) recalls nothing");

	hx_section("layout stateid seqids, errors");
	CHECK_NFS(layoutget(k, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_READ, &lsid, &r), N4_OK,
		  "LAYOUTGET READ with the layout stateid");
	CHECK(r.sid.seqid == 2 && !memcmp(r.sid.other, lsid.other, 12), "the same stateid, seqid 2");
	to_n4(&r.sid, &lsid);
	future = lsid;
	future.seqid = 7;
	CHECK_NFS(layoutget(k, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_READ, &future, &r), N4ERR_BAD_STATEID,
		  "a seqid from the future: BAD_STATEID");
	CHECK_NFS(layoutget(k, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_ANY, &lsid, &r), N4ERR_BADIOMODE,
		  "iomode ANY: BADIOMODE");
	CHECK_NFS(layoutget(k, fh, fh_len, LAYOUT4_NFSV4_1_FILES, LAYOUTIOMODE4_READ, &lsid, &r),
		  N4ERR_UNKNOWN_LAYOUTTYPE, "the files layout type: UNKNOWN_LAYOUTTYPE");
	CHECK_NFS(layout_op(k, fh, fh_len, N4_LAYOUTCOMMIT, add_commit, &lsid), N4_OK, "LAYOUTCOMMIT (RW held)");
	part_error(k, fh, fh_len, &lsid);

	hx_section("LAYOUTRETURN, return-on-close");
	CHECK_NFS(layoutreturn(k, fh, fh_len, LAYOUTRETURN4_FILE, LAYOUTIOMODE4_ANY, &lsid, &has), N4_OK,
		  "LAYOUTRETURN FILE, iomode ANY");
	CHECK(!has, "no stateid back: no layout left");
	CHECK_EQ(gauge("layouts"), 0, "the layout table is empty");
	CHECK_NFS(layoutreturn(k, fh, fh_len, LAYOUTRETURN4_FILE, LAYOUTIOMODE4_ANY, &lsid, &has), N4ERR_BAD_STATEID,
		  "the returned stateid is gone");
	CHECK_NFS(layoutget(k, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_RW, &osid, &r), N4_OK, "LAYOUTGET again");
	CHECK_EQ(gauge("layouts"), 1, "one layout");
	CHECK_NFS(n4_close(k, fh, fh_len, NULL, &osid), N4_OK, "CLOSE (the client's last open of f1)");
	CHECK_EQ(gauge("layouts"), 0, "return-on-close: the layout went with the CLOSE");
}

/* An ff_ioerr4 in LAYOUTRETURN (RFC 8435 §9.3): counted only with the client's own stateid. */
static void part_return_error(struct n4_client *k)
{
	struct nfs4_layoutget_res r;
	struct n4_sid osid, lsid, bad;
	uint8_t fh[128];
	uint32_t fh_len = 0;
	bool has;

	hx_section("LAYOUTRETURN with an ff_ioerr4");
	CHECK_NFS(n4_open(k, env.export_dir, "e1", true, N4_ACCESS_BOTH, 0, "o6", NULL, &osid, fh, &fh_len), N4_OK,
		  "OPEN e1");
	if (!CHECK_NFS(layoutget(k, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_READ, &osid, &r), N4_OK, "LAYOUTGET"))
		return;
	to_n4(&r.sid, &lsid);
	bad = lsid;
	bad.seqid += 5;
	return_with_error = true;
	CHECK_NFS(layoutreturn(k, fh, fh_len, LAYOUTRETURN4_FILE, LAYOUTIOMODE4_ANY, &bad, &has), N4ERR_BAD_STATEID,
		  "a return with an error report and a stateid not the client's: BAD_STATEID");
	CHECK_EQ(gauge("layout_errors"), 1, "its report not counted");
	CHECK_NFS(layoutreturn(k, fh, fh_len, LAYOUTRETURN4_FILE, LAYOUTIOMODE4_ANY, &lsid, &has), N4_OK,
		  "LAYOUTRETURN with an ff_ioerr4 (NXIO)");
	return_with_error = false;
	CHECK_EQ(gauge("layout_errors"), 2, "counted");
	CHECK_NFS(layoutget(k, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_READ, &osid, &r), N4ERR_LAYOUTUNAVAILABLE,
		  "the data server is out: LAYOUTUNAVAILABLE");
	sleep(3);
	CHECK_NFS(layoutget(k, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_READ, &osid, &r), N4_OK, "back after 2 s");
	CHECK_NFS(n4_close(k, fh, fh_len, NULL, &osid), N4_OK, "CLOSE");
}

/* Thousands of LAYOUTGET / LAYOUTRETURN cycles over 16 files: the table back to empty, memory flat. */
static void part_soak(struct n4_client *k)
{
	enum { FILES = 16, CYCLES = 3000 };
	struct nfs4_layoutget_res r;
	struct n4_sid osid[FILES], lsid;
	uint8_t fh[FILES][128];
	uint32_t fh_len[FILES];
	unsigned ok = 0;
	long rss0, rss1;
	char name[16];
	bool has;

	hx_section("soak: %d LAYOUTGET/LAYOUTRETURN cycles", CYCLES);
	for (unsigned i = 0; i < FILES; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		fh_len[i] = 0;
		if (n4_open(k, env.export_dir, name, true, N4_ACCESS_BOTH, 0, "o7", NULL, &osid[i], fh[i], &fh_len[i]))
			return (void)CHECK(false, "OPEN %s", name);
	}
	rss0 = n4_proc_rss_kb(env.pid);
	for (unsigned c = 0; c < CYCLES; c++) {
		unsigned i = c % FILES;

		if (layoutget(k, fh[i], fh_len[i], LAYOUT4_FLEX_FILES, c & 1 ? LAYOUTIOMODE4_RW : LAYOUTIOMODE4_READ,
			      &osid[i], &r) != N4_OK)
			continue;
		to_n4(&r.sid, &lsid);
		if (layoutreturn(k, fh[i], fh_len[i], LAYOUTRETURN4_FILE, LAYOUTIOMODE4_ANY, &lsid, &has) == N4_OK && !has)
			ok++;
	}
	rss1 = n4_proc_rss_kb(env.pid);
	CHECK_EQ(ok, CYCLES, "every cycle granted and returned");
	CHECK_EQ(gauge("layouts"), 0, "the layout table is empty after the soak");
	/* plus what a sanitizer build keeps (ASan's quarantine, TSan's shadow and history) */
	CHECK(rss0 > 0 && rss1 - rss0 < 2048 + n4_proc_quarantine_kb(env.pid), "resident memory flat (%ld -> %ld KiB)",
	      rss0, rss1);
	for (unsigned i = 0; i < FILES; i++)
		n4_close(k, fh[i], fh_len[i], NULL, &osid[i]);
}

/* Two files' layouts, LAYOUTRETURN ALL; then a client destroyed with a layout. */
static void part_all(struct n4_client *k)
{
	struct nfs4_layoutget_res r;
	struct n4_sid s1, s2;
	uint8_t fh1[128], fh2[128];
	uint32_t l1 = 0, l2 = 0;
	bool has;

	hx_section("LAYOUTRETURN ALL, a destroyed client");
	CHECK_NFS(n4_open(k, env.export_dir, "g1", true, N4_ACCESS_BOTH, 0, "o2", NULL, &s1, fh1, &l1), N4_OK, "OPEN g1");
	CHECK_NFS(n4_open(k, env.export_dir, "g2", true, N4_ACCESS_BOTH, 0, "o2", NULL, &s2, fh2, &l2), N4_OK, "OPEN g2");
	CHECK_NFS(layoutget(k, fh1, l1, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_RW, &s1, &r), N4_OK, "LAYOUTGET g1");
	CHECK_NFS(layoutget(k, fh2, l2, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_READ, &s2, &r), N4_OK, "LAYOUTGET g2");
	CHECK_EQ(gauge("layouts"), 2, "two layouts");
	CHECK_NFS(layoutreturn(k, fh1, l1, LAYOUTRETURN4_ALL, LAYOUTIOMODE4_ANY, NULL, &has), N4_OK, "LAYOUTRETURN ALL");
	CHECK_EQ(gauge("layouts"), 0, "none left");
	CHECK_NFS(layoutget(k, fh1, l1, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_RW, &s1, &r), N4_OK, "LAYOUTGET g1 again");
	CHECK_EQ(gauge("layouts"), 1, "one layout");
	{
		struct n4_sid w;
		uint8_t fh3[128];
		uint32_t l3 = 0;

		CHECK_NFS(n4_open(k, env.export_dir, "g3", true, N4_ACCESS_WRITE, 0, "o5", NULL, &w, fh3, &l3), N4_OK,
			  "OPEN g3 write-only");
		CHECK_NFS(layoutget(k, fh3, l3, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_RW, &w, &r), N4_OK,
			  "LAYOUTGET RW with a write-only open");
		CHECK_EQ(gauge("layouts"), 2, "two layouts");
	}
	CHECK_EQ(n4_destroy_client(k), 0, "DESTROY_SESSION, DESTROY_CLIENTID");
	CHECK_EQ(gauge("layouts"), 0, "the client's layouts went with it");
}

/* ---- recalls (RFC 8881 §12.5.5, CB_LAYOUTRECALL §20.3) ---- */

#define N4ERR_RECALLCONFLICT_ 10061
#define SEQ4_RECALLABLE_STATE_REVOKED 0x40u
#define LEASE_S 10 /* [nfsv4] lease-time of this test's daemon */

/* A CB_LAYOUTRECALL4args as the holder received it. */
struct lr_args {
	uint32_t type, iomode, changed, rtype;
	uint32_t fh_len;
	uint8_t fh[128];
	uint64_t offset, length, fsid;
	struct n4_sid sid;
};

static struct n4_cb_call lr_q[8]; /* callbacks that came while the holder waited for a reply */
static unsigned lr_qn;

static void lr_on_cb(struct n4_client *k, const uint8_t *msg, size_t len)
{
	(void)k;
	if (lr_qn < 8 && n4_cb_parse(msg, len, &lr_q[lr_qn]))
		lr_qn++;
}

/* The next callback call on k's back channel, up to ms. */
static bool lr_wait(struct n4_client *k, struct n4_cb_call *cc, int ms)
{
	uint8_t *buf = NULL;
	size_t len;
	bool ok;

	if (lr_qn) {
		*cc = lr_q[0];
		memmove(lr_q, lr_q + 1, --lr_qn * sizeof(lr_q[0]));
		return true;
	}
	if (raw_recv_record(&k->c, &buf, &len, ms) != RAW_RECV_OK)
		return false;
	ok = n4_cb_parse(buf, len, cc);
	free(buf);
	return ok;
}

/* The next CB_LAYOUTRECALL (op 5) on k, decoded; NULLs and probes on the way answered. */
static bool lr_recall(struct n4_client *k, struct n4_cb_call *cc, struct lr_args *la, int ms)
{
	struct xd d;
	const uint8_t *fh;

	memset(la, 0, sizeof(*la));
	while (lr_wait(k, cc, ms)) {
		if (cc->op2 != 5) {
			n4_cb_reply(&k->c, cc, 0);
			continue;
		}
		xd_init(&d, cc->args, cc->args_len);
		la->type = xd_u32(&d);
		la->iomode = xd_u32(&d);
		la->changed = xd_u32(&d);
		la->rtype = xd_u32(&d);
		if (la->rtype == 1) {
			fh = xd_opaque(&d, &la->fh_len, 128);
			if (fh)
				memcpy(la->fh, fh, la->fh_len);
			la->offset = xd_u64(&d);
			la->length = xd_u64(&d);
			n4_xd_sid(&d, &la->sid);
		} else if (la->rtype == 2) {
			la->fsid = xd_u64(&d);
		}
		return !d.bad;
	}
	return false;
}

/* A 4.1 holder at 127.0.0.2 (another address than the NFSv3 writer's) with its back channel. */
static bool lr_client(struct n4_client *b, const char *id)
{
	struct n4_cb_call cc;
	uint32_t seq = 0;

	if (!CHECK_EQ(n4_connect_from(b, env.port, 1, "127.0.0.2"), 0, "4.1 holder from 127.0.0.2"))
		return false;
	b->on_cb = lr_on_cb;
	b->cb_sys = true;
	b->cs_flags = N4_CS_BACK_CHAN;
	if (!CHECK_NFS(n4_exchange_id(b, id, &seq), N4_OK, "EXCHANGE_ID") ||
	    !CHECK_NFS(n4_create_session(b, seq), N4_OK, "CREATE_SESSION with a back channel"))
		return false;
	for (int i = 0; i < 2; i++) /* the probe: CB_NULL, CB_COMPOUND{CB_SEQUENCE} */
		if (CHECK(lr_wait(b, &cc, 5000), "probe %d", i))
			n4_cb_reply(&b->c, &cc, 0);
	return CHECK_NFS(n4_reclaim_complete(b), N4_OK, "RECLAIM_COMPLETE");
}

/* rnfsctl args prints want. */
static void ctl_has(const char *const *args, const char *want, const char *what)
{
	static char out[65536];
	int rc = hx_rnfsctl(&env, -1, out, sizeof(out), args);

	CHECK(rc == 0 && strstr(out, want), "%s (%s)", what, want);
}

/* An NFSv3 WRITE (from 127.0.0.1) to fh. */
static int v3_write(const uint8_t *fh, uint32_t fh_len)
{
	struct rpc_context *rpc = hx_rpc_connect(&env, NFS_PROGRAM, NFS_V3, 0, 0);
	struct hx_fh h = { .len = fh_len };
	WRITE3res wr;
	int st = -1;

	if (rpc && fh_len <= sizeof(h.data)) {
		memcpy(h.data, fh, fh_len);
		st = hx3_write(rpc, &h, 0, "nfsv3", 5, FILE_SYNC, &wr);
	}
	hx_rpc_close(rpc);
	return st;
}

/* The recall of a file's layout the holder returns: RECALLCONFLICT meanwhile, the return ends it. */
static void part_recall_return(struct n4_client *b)
{
	struct nfs4_layoutget_res r;
	struct n4_cb_call cc;
	struct lr_args la;
	struct n4_sid osid, lsid, rsid;
	uint8_t fh[128];
	uint32_t fh_len = 0;
	bool has = true;

	hx_section("CB_LAYOUTRECALL on an NFSv3 WRITE, returned");
	CHECK_NFS(n4_open(b, env.export_dir, "r1", true, N4_ACCESS_BOTH, 0, "or", NULL, &osid, fh, &fh_len), N4_OK,
		  "OPEN r1");
	if (!CHECK_NFS(layoutget(b, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_RW, &osid, &r), N4_OK, "LAYOUTGET RW"))
		return;
	to_n4(&r.sid, &lsid);
	ctl_has((const char *const[]){ "--json", "client", "list", NULL }, "\"layouts\": 1",
		"rnfsctl client list: the holder's layouts");
	ctl_has((const char *const[]){ "layouts", NULL }, " rw ", "rnfsctl layouts: the holder's RW layout of r1");
	CHECK_NFS(v3_write(fh, fh_len), NFS3_OK, "an NFSv3 WRITE from another address goes on at once");
	if (!CHECK(lr_recall(b, &cc, &la, 5000), "the holder gets CB_LAYOUTRECALL"))
		return;
	CHECK(la.type == LAYOUT4_FLEX_FILES && la.iomode == LAYOUTIOMODE4_ANY && la.rtype == 1 && !la.changed,
	      "FLEX_FILES, iomode ANY, type FILE, clora_changed false (%u %u %u %u)", la.type, la.iomode, la.rtype,
	      la.changed);
	CHECK(la.fh_len == fh_len && !memcmp(la.fh, fh, fh_len) && la.offset == 0 && la.length == UINT64_MAX,
	      "the file, the whole range");
	CHECK(!memcmp(la.sid.other, lsid.other, 12) && la.sid.seqid == lsid.seqid + 1,
	      "the layout stateid with the next seqid (RFC 8881 §12.5.3; %u after %u)", la.sid.seqid, lsid.seqid);
	{ /* RFC 8881 §20.3.4: DELAY (the Linux client's while a LAYOUTGET reply is in flight): sent again */
		struct lr_args again;

		n4_cb_reply(&b->c, &cc, N4ERR_DELAY);
		if (CHECK(lr_recall(b, &cc, &again, 5000), "answered DELAY, CB_LAYOUTRECALL comes again"))
			CHECK(!memcmp(&again.sid, &la.sid, sizeof(la.sid)), "with the same stateid");
	}
	n4_cb_reply(&b->c, &cc, N4_OK);
	CHECK_EQ(gauge("layout_recalling"), 1, "nfs4_bounds.layout_recalling: 1");
	ctl_has((const char *const[]){ "--json", "layouts", NULL }, "\"recalled\": 1", "rnfsctl layouts: recalled");
	ctl_has((const char *const[]){ "stats", NULL }, "1 recalling, 1 recalled", "rnfsctl stats: the recall");
	CHECK_NFS(layoutget(b, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_RW, &lsid, &r), N4ERR_RECALLCONFLICT_,
		  "LAYOUTGET of the file meanwhile: RECALLCONFLICT (§18.43.3)");
	rsid = la.sid;
	CHECK_NFS(layoutreturn(b, fh, fh_len, LAYOUTRETURN4_FILE, LAYOUTIOMODE4_ANY, &rsid, &has), N4_OK,
		  "LAYOUTRETURN with the recall's stateid");
	CHECK(!has, "no stateid left");
	CHECK_EQ(gauge("layout_recalling"), 0, "no recall outstanding");
	CHECK_EQ(gauge("layout_recalls_returned"), 1, "counted returned");
	CHECK_NFS(layoutget(b, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_RW, &osid, &r), N4_OK,
		  "LAYOUTGET again after the return");
	CHECK_NFS(n4_close(b, fh, fh_len, NULL, &osid), N4_OK, "CLOSE");
}

/* A holder that answers the recall but never returns: revoked after the lease (§12.5.5.1). */
static void part_recall_revoke(struct n4_client *b)
{
	struct n4_client k;
	struct nfs4_layoutget_res r;
	struct n4_cb_call cc;
	struct lr_args la;
	struct n4_sid osid, ksid, rsid;
	uint8_t fh[128];
	uint32_t fh_len = 0;
	long long revoked = gauge("layouts_revoked");
	bool has, seen = false;

	hx_section("CB_LAYOUTRECALL on another client's truncate, not returned: revoked after the lease");
	CHECK_NFS(n4_open(b, env.export_dir, "r2", true, N4_ACCESS_BOTH, 0, "or2", NULL, &osid, fh, &fh_len), N4_OK,
		  "OPEN r2");
	if (!CHECK_NFS(layoutget(b, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_RW, &osid, &r), N4_OK, "LAYOUTGET RW"))
		return;
	if (!CHECK_EQ(n4_start(&k, env.port, 1, "pnfs-truncater"), 0, "another 4.1 client"))
		return;
	CHECK_NFS(n4_open(&k, env.export_dir, "r2", false, N4_ACCESS_BOTH, 0, "ok2", NULL, &ksid, fh, &fh_len), N4_OK,
		  "another client opens r2");
	CHECK_NFS(n4_truncate(&k, fh, fh_len, &ksid, 0), N4_OK, "and truncates it through the MDS");
	CHECK_NFS(n4_close(&k, fh, fh_len, NULL, &ksid), N4_OK, "CLOSE (other client)");
	n4_client_close(&k);
	if (!CHECK(lr_recall(b, &cc, &la, 5000), "the holder gets CB_LAYOUTRECALL"))
		return;
	n4_cb_reply(&b->c, &cc, N4_OK);
	rsid = la.sid;
	for (double end = hx_now() + 3 * LEASE_S; hx_now() < end && !seen; usleep(500000)) {
		b->seq_flags = 0;
		n4_sequence(b);
		seen = b->seq_flags & SEQ4_RECALLABLE_STATE_REVOKED;
	}
	CHECK(seen, "SEQUENCE: RECALLABLE_STATE_REVOKED after the lease");
	CHECK_EQ(gauge("layouts_revoked"), revoked + 1, "nfs4_bounds.layouts_revoked counts it");
	CHECK_EQ(gauge("layout_recalling"), 0, "no recall outstanding");
	CHECK_NFS(layoutreturn(b, fh, fh_len, LAYOUTRETURN4_FILE, LAYOUTIOMODE4_ANY, &rsid, &has), N4ERR_BAD_STATEID,
		  "the revoked layout's stateid: BAD_STATEID");
	CHECK_NFS(layoutget(b, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_RW, &osid, &r), N4_OK,
		  "LAYOUTGET with the open stateid: the holder starts over");
	b->seq_flags = 0;
	n4_sequence(b);
	CHECK(!(b->seq_flags & SEQ4_RECALLABLE_STATE_REVOKED), "which drops the flag (%#x)", b->seq_flags);
	CHECK_NFS(n4_close(b, fh, fh_len, NULL, &osid), N4_OK, "CLOSE (holder)");
}

#define N4ERR_NOMATCHING_LAYOUT_ 10060

/* b opens name and gets an RW layout of it: the file's handle in fh (128 bytes), true if all went. */
static bool lr_hold(struct n4_client *b, const char *name, struct n4_sid *osid, uint8_t *fh, uint32_t *fh_len)
{
	struct nfs4_layoutget_res r;

	*fh_len = 0;
	return CHECK_NFS(n4_open(b, env.export_dir, name, true, N4_ACCESS_BOTH, 0, "on", NULL, osid, fh, fh_len), N4_OK,
			 "OPEN %s (holder)", name) &&
	       CHECK_NFS(layoutget(b, fh, *fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_RW, osid, &r), N4_OK,
			 "LAYOUTGET RW of %s", name);
}

/* After a name change by another: the holder gets CB_LAYOUTRECALL FILE of fh (answered NOMATCHING_LAYOUT,
 * §20.3.3: as returned), and no recall is left outstanding. */
static void lr_recalled(struct n4_client *b, const uint8_t *fh, uint32_t fh_len, const char *what)
{
	struct n4_cb_call cc;
	struct lr_args la;
	long long n = -1;

	if (!CHECK(lr_recall(b, &cc, &la, 5000), "%s: the holder gets CB_LAYOUTRECALL", what))
		return;
	CHECK(la.rtype == 1 && la.fh_len == fh_len && !memcmp(la.fh, fh, fh_len), "%s: FILE, the file's handle", what);
	n4_cb_reply(&b->c, &cc, N4ERR_NOMATCHING_LAYOUT_);
	for (double end = hx_now() + 5; hx_now() < end && (n = gauge("layout_recalling")) != 0; usleep(50000))
		;
	CHECK_EQ(n, 0, "%s: NOMATCHING_LAYOUT ends the recall", what);
}

/* REMOVE name in the export's root by another 4.1 client k. */
static int v4_remove(struct n4_client *k, const char *name)
{
	struct raw_reply rep;
	struct xb a;
	int st;

	n4_begin(k, &a, n4_walk(NULL, env.export_dir) + 1);
	n4_walk(&a, env.export_dir);
	xb_u32(&a, N4_REMOVE);
	xb_string(&a, name);
	st = n4_call(k, &a, &rep);
	raw_reply_free(&rep);
	return st;
}

/* RENAME from over to in the export's root by another 4.1 client k. */
static int v4_rename(struct n4_client *k, const char *from, const char *to)
{
	uint32_t walk = n4_walk(NULL, env.export_dir);
	struct raw_reply rep;
	struct xb a;
	int st;

	n4_begin(k, &a, 2 * walk + 2);
	n4_walk(&a, env.export_dir);
	xb_u32(&a, N4_SAVEFH);
	n4_walk(&a, env.export_dir);
	xb_u32(&a, N4_RENAME);
	xb_string(&a, from);
	xb_string(&a, to);
	st = n4_call(k, &a, &rep);
	raw_reply_free(&rep);
	return st;
}

/* RFC 8881 §12.5.5: another client's REMOVE of a file, or RENAME over it, recalls the holder's layout. */
static void part_recall_remove(struct n4_client *b)
{
	struct n4_client k;
	struct n4_sid osid;
	uint8_t fh[128];
	uint32_t fh_len;

	hx_section("CB_LAYOUTRECALL on another NFSv4 client's REMOVE");
	if (!lr_hold(b, "r3", &osid, fh, &fh_len) || !CHECK_EQ(n4_start(&k, env.port, 1, "pnfs-remover"), 0,
								  "another 4.1 client"))
		return;
	CHECK_NFS(v4_remove(&k, "r3"), N4_OK, "it removes r3 through the MDS (no wait)");
	lr_recalled(b, fh, fh_len, "REMOVE");
	CHECK_NFS(n4_close(b, fh, fh_len, NULL, &osid), N4_OK, "CLOSE (holder)");
	if (lr_hold(b, "r7", &osid, fh, &fh_len)) {
		hx_write_file(hx_xpath(&env, "r7new"), "new", 3, 0644);
		CHECK_NFS(v4_rename(&k, "r7new", "r7"), N4_OK, "it renames r7new over r7 through the MDS (no wait)");
		lr_recalled(b, fh, fh_len, "NFSv4 RENAME over the file");
		CHECK_NFS(n4_close(b, fh, fh_len, NULL, &osid), N4_OK, "CLOSE r7 (holder)");
	}
	n4_client_close(&k);
}

/* RFC 8881 §12.5.5 through the NFSv3 hook: an NFSv3 REMOVE of a file, and an NFSv3 RENAME over it,
 * recall its layouts; a RENAME of the held file itself (the same file, the same handle) does not. */
static void part_recall_v3names(struct n4_client *b)
{
	struct rpc_context *rpc = NULL;
	struct hx_fh root;
	struct n4_cb_call cc;
	struct n4_sid osid;
	uint8_t fh[128];
	uint32_t fh_len;

	hx_section("CB_LAYOUTRECALL on NFSv3 REMOVE and RENAME over the file");
	if (hx_open_export(&env, env.export_dir, -1, -1, &rpc, &root) != 0)
		return;
	if (lr_hold(b, "r4", &osid, fh, &fh_len)) {
		CHECK_NFS(hx3_remove(rpc, &root, "r4"), NFS3_OK, "NFSv3 REMOVE r4 (no wait)");
		lr_recalled(b, fh, fh_len, "NFSv3 REMOVE");
		CHECK_NFS(n4_close(b, fh, fh_len, NULL, &osid), N4_OK, "CLOSE r4 (holder)");
	}
	if (lr_hold(b, "r5", &osid, fh, &fh_len)) {
		hx_write_file(hx_xpath(&env, "r5new"), "new", 3, 0644);
		CHECK_NFS(hx3_rename(rpc, &root, "r5new", &root, "r5"), NFS3_OK, "NFSv3 RENAME r5new over r5 (no wait)");
		lr_recalled(b, fh, fh_len, "NFSv3 RENAME over the file");
		CHECK_NFS(n4_close(b, fh, fh_len, NULL, &osid), N4_OK, "CLOSE r5 (holder)");
	}
	if (lr_hold(b, "r6", &osid, fh, &fh_len)) {
		CHECK_NFS(hx3_rename(rpc, &root, "r6", &root, "r6b"), NFS3_OK, "NFSv3 RENAME of the held file r6");
		CHECK(!lr_wait(b, &cc, 1500), "its own rename recalls nothing (the same file, the same handle)");
		CHECK_EQ(gauge("layout_recalling"), 0, "no recall outstanding");
		CHECK_NFS(n4_close(b, fh, fh_len, NULL, &osid), N4_OK, "CLOSE r6 (holder)");
	}
	hx_rpc_close(rpc);
}

/* An export removed at run time (rnfsctl export remove): its layouts revoked, the holder told. */
static void part_recall_export(struct n4_client *b)
{
	char dir[PATH_MAX], spec[256], out[512];
	struct nfs4_layoutget_res r;
	struct n4_cb_call cc;
	struct lr_args la;
	struct n4_sid osid;
	uint8_t fh[128];
	uint32_t fh_len = 0;
	long long revoked = gauge("layouts_revoked");

	hx_section("rnfsctl export remove: CB_LAYOUTRECALL FSID");
	snprintf(dir, sizeof(dir), "%s", hx_path(&env, "pnfs-extra"));
	mkdir(dir, 0755);
	snprintf(spec, sizeof(spec), "127.0.0.0/8(rw,no_root_squash,insecure,pnfs=flexfiles)");
	if (!CHECK_EQ(hx_rnfsctl(&env, -1, out, sizeof(out), (const char *const[]){ "export", "add", dir, spec, NULL }),
		      0, "rnfsctl export add: %s", out))
		return;
	CHECK_NFS(n4_open(b, dir, "e1", true, N4_ACCESS_BOTH, 0, "oe", NULL, &osid, fh, &fh_len), N4_OK, "OPEN there");
	if (!CHECK_NFS(layoutget(b, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_RW, &osid, &r), N4_OK, "LAYOUTGET"))
		return;
	CHECK_EQ(hx_rnfsctl(&env, -1, out, sizeof(out), (const char *const[]){ "export", "remove", dir, NULL }), 0,
		 "rnfsctl export remove: %s", out);
	if (CHECK(lr_recall(b, &cc, &la, 8000), "the holder gets CB_LAYOUTRECALL")) {
		CHECK(la.rtype == 2 && la.changed, "type FSID, clora_changed (%u %u)", la.rtype, la.changed);
		n4_cb_reply(&b->c, &cc, N4_OK);
	}
	CHECK_EQ(gauge("layouts_revoked"), revoked + 1, "its layout revoked at once");
}

static void part_recalls(void)
{
	struct n4_client b;

	if (!lr_client(&b, "pnfs-holder")) {
		n4_client_close(&b);
		return;
	}
	part_recall_return(&b);
	part_recall_revoke(&b);
	part_recall_remove(&b);
	part_recall_v3names(&b);
	part_recall_export(&b);
	n4_client_close(&b);
}

static void part_plain(struct n4_client *k)
{
	struct nfs4_layoutget_res r;
	struct n4_sid sid;
	uint8_t fh[128];
	uint32_t fh_len = 0;

	hx_section("an export without pnfs=");
	CHECK_NFS(n4_open(k, plain_dir, "p1", true, N4_ACCESS_BOTH, 0, "o3", NULL, &sid, fh, &fh_len), N4_OK,
		  "OPEN on the plain export");
	CHECK_NFS(layoutget(k, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_READ, &sid, &r), N4ERR_LAYOUTUNAVAILABLE,
		  "LAYOUTGET there: LAYOUTUNAVAILABLE");
	{
		uint32_t bs;

		CHECK_EQ(layout_attrs(k, fh, fh_len, &bs), 0, "fs_layout_type: an empty list");
		CHECK_EQ(bs, 0, "no layout_blksize");
	}
	{
		struct nfs4_getdevicelist_res g;

		CHECK_NFS(getdevicelist(k, fh, fh_len, LAYOUT4_FLEX_FILES, 8, 0, NULL, &g), N4_OK, "GETDEVICELIST there");
		CHECK(g.n == 0 && g.eof, "no device, eof (%u)", g.n);
	}
	CHECK_NFS(n4_close(k, fh, fh_len, NULL, &sid), N4_OK, "CLOSE");
}

/* A restart with a recorded client: no LAYOUTGET in grace, a reclaiming LAYOUTCOMMIT is accepted; after. */
static void part_grace(void)
{
	struct nfs4_layoutget_res r;
	struct n4_client k;
	struct n4_sid sid;
	uint8_t fh[128];
	uint32_t fh_len = 0, seq = 0;
	int st = -1;

	hx_section("the grace period after a restart");
	if (!CHECK_EQ(n4_start(&k, env.port, 2, "pnfs-grace"), 0, "4.2 client before the restart"))
		return;
	CHECK_NFS(n4_open(&k, env.export_dir, "h1", true, N4_ACCESS_BOTH, 0, "og", NULL, &sid, fh, &fh_len), N4_OK,
		  "OPEN h1");
	n4_client_close(&k);
	hx_daemon_stop(&env);
	hx_append_config(&env, "[nfsv4]\ngrace-time = 5\n");
	if (hx_daemon_start(&env) != 0)
		return;
	/* no RECLAIM_COMPLETE yet (n4_setup sends one): the client is still reclaiming */
	if (!CHECK_EQ(n4_connect(&k, env.port, 2), 0, "connect again") ||
	    !CHECK_NFS(n4_exchange_id(&k, "pnfs-grace", &seq), N4_OK, "EXCHANGE_ID again") ||
	    !CHECK_NFS(n4_create_session(&k, seq), N4_OK, "CREATE_SESSION"))
		return;
	CHECK_NFS(n4_open_prev(&k, fh, fh_len, N4_ACCESS_BOTH, 0, "og", NULL, &sid), N4_OK, "OPEN CLAIM_PREVIOUS");
	CHECK_NFS(layoutget(&k, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_RW, &sid, &r), N4ERR_GRACE,
		  "LAYOUTGET in grace: GRACE");
	CHECK_NFS(layout_op(&k, fh, fh_len, N4_LAYOUTCOMMIT, add_commit_reclaim, &sid), N4_OK,
		  "LAYOUTCOMMIT loca_reclaim in grace");
	n4_reclaim_complete(&k);
	for (double end = hx_now() + 10; hx_now() < end; usleep(250000))
		if ((st = layoutget(&k, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_RW, &sid, &r)) != N4ERR_GRACE)
			break;
	CHECK_NFS(st, N4_OK, "LAYOUTGET once grace is over");
	CHECK_NFS(layout_op(&k, fh, fh_len, N4_LAYOUTCOMMIT, add_commit_reclaim, &sid), N4ERR_NO_GRACE,
		  "LAYOUTCOMMIT loca_reclaim after grace: NO_GRACE");
	CHECK_NFS(n4_close(&k, fh, fh_len, NULL, &sid), N4_OK, "CLOSE");
	CHECK_EQ(n4_destroy_client(&k), 0, "destroyed (no reclaim at the next start)");
	n4_client_close(&k);
}

/* The daemon without [pnfs]: not a metadata server, as before issue 28. */
static void part_no_pnfs(void)
{
	struct nfs4_layoutget_res r;
	struct n4_client k;
	struct n4_sid sid;
	uint8_t fh[128];
	uint32_t fh_len = 0;

	hx_section("without [pnfs] data-servers");
	CHECK_EQ(hx_log_count(&env, "names no data-servers"), 0, "no warning while data servers are configured");
	hx_daemon_stop(&env);
	hx_write_config(&env);
	if (hx_daemon_start(&env) != 0)
		return;
	CHECK(hx_log_count(&env, "has pnfs=flexfiles but [pnfs] names no data-servers") >= 1,
	      "the pnfs=flexfiles export without data servers is logged");
	if (!CHECK_EQ(n4_start(&k, env.port, 2, "nopnfs"), 0, "4.2 client"))
		return;
	CHECK(!(k.exid_flags & EXID_USE_PNFS_MDS) && (k.exid_flags & EXID_USE_NON_PNFS),
	      "EXCHANGE_ID: USE_NON_PNFS only (%#x)", k.exid_flags);
	CHECK_NFS(n4_open(&k, env.export_dir, "n1", true, N4_ACCESS_BOTH, 0, "o4", NULL, &sid, fh, &fh_len), N4_OK,
		  "OPEN");
	CHECK_NFS(layoutget(&k, fh, fh_len, LAYOUT4_FLEX_FILES, LAYOUTIOMODE4_READ, &sid, &r), N4ERR_NOTSUPP,
		  "LAYOUTGET: NOTSUPP");
	{
		struct nfs4_getdevicelist_res g;

		CHECK_NFS(getdevicelist(&k, fh, fh_len, LAYOUT4_FLEX_FILES, 8, 0, NULL, &g), N4ERR_NOTSUPP,
			  "GETDEVICELIST: NOTSUPP");
	}
	n4_client_close(&k);
}

int main(int argc, char **argv)
{
	struct n4_client k;

	hx_begin("pnfs", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	snprintf(plain_dir, sizeof(plain_dir), "%s", hx_path(&env, "plain"));
	mkdir(plain_dir, 0755);
	hx_append_config(&env, "[pnfs]\ndata-servers = 127.0.0.1:%u/tcp\nds-unavailable-seconds = 2\n"
			       "[nfsv4]\nlease-time = %u\n", env.port, LEASE_S);
	hx_write_exports(&env, "%s 127.0.0.0/8(rw,no_root_squash,insecure,pnfs=flexfiles)\n"
			       "%s 127.0.0.1(rw,no_root_squash,insecure)\n", env.export_dir, plain_dir);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	if (CHECK_EQ(n4_start(&k, env.port, 2, "pnfs1"), 0, "4.2 client")) {
		hx_section("EXCHANGE_ID");
		CHECK(k.exid_flags & EXID_USE_PNFS_MDS, "USE_PNFS_MDS (%#x)", k.exid_flags);
		CHECK(k.exid_flags & EXID_USE_NON_PNFS, "with USE_NON_PNFS");
		part_layouts(&k);
		part_plain(&k);
		part_return_error(&k);
		part_soak(&k);
		part_all(&k);
		n4_client_close(&k);
		part_recalls();
	}
	part_grace();
	part_no_pnfs();
	hx_daemon_stop(&env);
	hx_env_release(&env);
	return hx_end();
}
