/*
 * fuzz_nfs4_layout.c - libFuzzer target: the pNFS flexible-files XDR
 * (nfs/v4/xdr/nfs4_layout_xdr.c). Byte 0 picks the decoder, the rest is its
 * input: the layout operations' arguments a client sends (GETDEVICEINFO, GETDEVICELIST,
 * LAYOUTGET, LAYOUTRETURN with its ff_layoutreturn4 body, LAYOUTCOMMIT,
 * LAYOUTERROR, LAYOUTSTATS with its ff_layoutupdate4), and the bodies and
 * results a client decodes (ff_layout4, ff_device_addr4, LAYOUTGET4res,
 * GETDEVICEINFO4res, GETDEVICELIST4res). Checks: no read outside the input; the decoder never
 * claims more than it was given; strings NUL-terminated inside their
 * fields; kept errors within NFS4_FF_ERRORS_MAX and never more than were
 * sent; an accepted one-mirror layout or one-address device re-encodes to
 * bytes that decode to the same fields; a decoder that accepts a message
 * refuses it cut one byte before where it stopped (for fixed-shape ones).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/xdr/nfs4_layout_xdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) abort(); } while (0)

static void check_str(const char *s, size_t cap)
{
	CHECK(memchr(s, '\0', cap) != NULL);
}

static void check_errors(const struct nfs4_layout_errors *e)
{
	CHECK(e->n <= NFS4_FF_ERRORS_MAX && e->n <= e->total);
	CHECK(e->total == e->n || e->n == NFS4_FF_ERRORS_MAX);
}

static void check_layout(const struct nfs4_ff_layout *l)
{
	CHECK(l->nmirrors <= NFS4_FF_LIST_MAX && l->nservers <= NFS4_FF_LIST_MAX && l->fh_len <= NFS4_LAYOUT_FH_MAX);
	check_str(l->user, sizeof(l->user));
	check_str(l->group, sizeof(l->group));
}

/* A one-mirror, one-server, one-handle layout encodes to bytes that decode the same. */
static void roundtrip_layout(const struct nfs4_ff_layout *l)
{
	static uint8_t out[4096];
	struct nfs4_ff_layout again;
	struct xdr_enc e;
	struct xdr_dec d;

	if (l->nmirrors != 1 || l->nservers != 1 || l->nfhs != 1)
		return;
	xdr_enc_init(&e, out, sizeof(out));
	nfs4_ff_enc_layout(&e, l);
	CHECK(!e.overflow);
	xdr_dec_init(&d, out, xdr_enc_len(&e));
	CHECK(nfs4_ff_dec_layout(&d, &again) && xdr_dec_remaining(&d) == 0);
	CHECK(again.fh_len == l->fh_len && !memcmp(again.fh, l->fh, l->fh_len));
	CHECK(!strcmp(again.user, l->user) && !strcmp(again.group, l->group) && again.flags == l->flags);
	CHECK(!memcmp(again.deviceid, l->deviceid, NFS4_DEVICEID_SIZE) && again.sid.seqid == l->sid.seqid);
}

static void roundtrip_devaddr(const struct nfs4_ff_devaddr *a)
{
	static uint8_t out[1024];
	struct nfs4_ff_devaddr again;
	struct xdr_enc e;
	struct xdr_dec d;

	check_str(a->addr.netid, sizeof(a->addr.netid));
	check_str(a->addr.uaddr, sizeof(a->addr.uaddr));
	if (a->naddrs != 1 || a->nversions != 1 || strlen(a->addr.netid) + strlen(a->addr.uaddr) == 0)
		return;
	xdr_enc_init(&e, out, sizeof(out));
	nfs4_ff_enc_devaddr(&e, a);
	CHECK(!e.overflow);
	xdr_dec_init(&d, out, xdr_enc_len(&e));
	CHECK(nfs4_ff_dec_devaddr(&d, &again) && xdr_dec_remaining(&d) == 0);
	CHECK(!strcmp(again.addr.netid, a->addr.netid) && !strcmp(again.addr.uaddr, a->addr.uaddr));
	CHECK(again.version == a->version && again.rsize == a->rsize && again.tightly_coupled == a->tightly_coupled);
}

/* The arguments' decoders; true when one accepted the input. */
static bool fuzz_args(unsigned which, struct xdr_dec *d)
{
	union {
		struct nfs4_getdeviceinfo_args g;
		struct nfs4_layoutget_args lg;
		struct nfs4_layoutreturn_args lr;
		struct nfs4_layoutcommit_args lc;
		struct nfs4_layouterror_args le;
		struct nfs4_layoutstats_args ls;
		struct nfs4_getdevicelist_args gl;
	} u;
	bool ok = false;

	memset(&u, 0, sizeof(u));
	switch (which) {
	case 0: ok = nfs4_dec_getdeviceinfo(d, &u.g); break;
	case 1: ok = nfs4_dec_layoutget(d, &u.lg); break;
	case 2:
		ok = nfs4_dec_layoutreturn(d, &u.lr);
		if (ok) {
			CHECK(u.lr.returntype >= LAYOUTRETURN4_FILE && u.lr.returntype <= LAYOUTRETURN4_ALL);
			check_errors(&u.lr.ff.errors);
			CHECK(u.lr.ff.niostats <= NFS4_FF_LIST_MAX);
		}
		break;
	case 3: ok = nfs4_dec_layoutcommit(d, &u.lc); if (ok && u.lc.has_mtime) CHECK(u.lc.mtime_nsec < 1000000000u); break;
	case 4: ok = nfs4_dec_layouterror(d, &u.le); if (ok) check_errors(&u.le.errors); break;
	case 6: ok = nfs4_dec_getdevicelist(d, &u.gl); break;
	default:
		ok = nfs4_dec_layoutstats(d, &u.ls);
		if (ok && u.ls.has_ff) {
			check_str(u.ls.ff.addr.netid, sizeof(u.ls.ff.addr.netid));
			check_str(u.ls.ff.addr.uaddr, sizeof(u.ls.ff.addr.uaddr));
		}
		break;
	}
	return ok;
}

/* What a client decodes; true when accepted. */
static bool fuzz_client(unsigned which, struct xdr_dec *d)
{
	struct nfs4_ff_layout l;
	struct nfs4_ff_devaddr a;
	struct nfs4_layoutget_res lg;
	struct nfs4_getdeviceinfo_res gd;
	struct nfs4_getdevicelist_res gl;

	switch (which) {
	case 0:
		if (!nfs4_ff_dec_layout(d, &l))
			return false;
		check_layout(&l);
		roundtrip_layout(&l);
		return true;
	case 1:
		if (!nfs4_ff_dec_devaddr(d, &a))
			return false;
		roundtrip_devaddr(&a);
		return true;
	case 2:
		if (!nfs4_dec_layoutget_res(d, NFS4_OK, &lg))
			return false;
		check_layout(&lg.ff);
		roundtrip_layout(&lg.ff);
		return true;
	case 3:
		if (!nfs4_dec_getdeviceinfo_res(d, NFS4_OK, &gd))
			return false;
		roundtrip_devaddr(&gd.addr);
		return true;
	default:
		if (!nfs4_dec_getdevicelist_res(d, NFS4_OK, &gl))
			return false;
		CHECK(gl.n <= NFS4_DEVLIST_MAX);
		return true;
	}
}

static bool run(unsigned sel, const uint8_t *p, size_t n, size_t *used)
{
	struct xdr_dec d;
	bool ok;

	xdr_dec_init(&d, p, n);
	/* 0-5: arguments, 6-9: a client's side; 10, 11: GETDEVICELIST's (added after the seeds, which
	 * keep their selectors) */
	if (sel < 10)
		ok = sel < 6 ? fuzz_args(sel, &d) : fuzz_client(sel - 6, &d);
	else
		ok = sel == 10 ? fuzz_args(6, &d) : fuzz_client(4, &d);
	*used = xdr_dec_pos(&d);
	CHECK(*used <= n);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned sel;
	size_t used, again;

	if (size < 1)
		return 0;
	sel = data[0] % 12;
	/* A message accepted is refused when cut one byte before where decoding stopped:
	 * every decoder reads what it consumed (none stops early on an optional tail). */
	if (run(sel, data + 1, size - 1, &used) && used > 0)
		CHECK(!run(sel, data + 1, used - 1, &again));
	return 0;
}
