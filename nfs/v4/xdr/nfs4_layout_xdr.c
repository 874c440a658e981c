/*
 * nfs4_layout_xdr.c - XDR of pNFS flexible-files layouts and the layout
 * operations (see nfs4_layout_xdr.h). Pure: every count is compared with
 * its limit (NFS4_FF_LIST_MAX, NFS4_LAYOUT_BODY_MAX ...) before any loop or
 * copy; opaque bodies (loc_body, da_addr_body, lrf_body, lou_body) are
 * encoded in place with their length patched after, and decoded through a
 * decoder bounded to the body.
 */
#include "nfs/v4/xdr/nfs4_layout_xdr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "nfs/v4/xdr/nfs4_const.h"

/* ---- small items ---- */

static bool dec_sid(struct xdr_dec *d, struct nfs4_layout_sid *s)
{
	return xdr_dec_u32(d, &s->seqid) && xdr_dec_fixed(d, s->other, sizeof(s->other));
}

static void enc_sid(struct xdr_enc *e, const struct nfs4_layout_sid *s)
{
	xdr_enc_u32(e, s->seqid);
	xdr_enc_fixed(e, s->other, sizeof(s->other));
}

/* A string of at most cap - 1 bytes into out, NUL-terminated. */
static bool dec_cstr(struct xdr_dec *d, char *out, size_t cap)
{
	const uint8_t *p;
	uint32_t n;

	if (!xdr_dec_opaque(d, (uint32_t)cap - 1, &p, &n))
		return false;
	memcpy(out, p, n);
	out[n] = '\0';
	return true;
}

static void enc_cstr(struct xdr_enc *e, const char *s)
{
	xdr_enc_opaque(e, s, (uint32_t)strlen(s));
}

/* A list count: at most NFS4_FF_LIST_MAX, and no more entries than bytes left / min_size. */
static bool dec_count(struct xdr_dec *d, uint32_t min_size, uint32_t *n)
{
	return xdr_dec_u32(d, n) && *n <= NFS4_FF_LIST_MAX && *n <= xdr_dec_remaining(d) / min_size;
}

/* nfstime4 (RFC 8881 §3.3.1): seconds, nanoseconds (RFC 8881 §3.3.1: below 10^9). */
static bool dec_time(struct xdr_dec *d, int64_t *sec, uint32_t *nsec)
{
	uint64_t s;

	if (!xdr_dec_u64(d, &s) || !xdr_dec_u32(d, nsec) || *nsec >= 1000000000u)
		return false;
	*sec = (int64_t)s;
	return true;
}

static bool skip_time(struct xdr_dec *d)
{
	int64_t s;
	uint32_t ns;

	return dec_time(d, &s, &ns);
}

/* netaddr4 {na_r_netid, na_r_addr} (RFC 8881 §3.3.9). */
static bool dec_netaddr(struct xdr_dec *d, struct nfs4_netaddr *na)
{
	return dec_cstr(d, na->netid, sizeof(na->netid)) && dec_cstr(d, na->uaddr, sizeof(na->uaddr));
}

static void enc_netaddr(struct xdr_enc *e, const struct nfs4_netaddr *na)
{
	enc_cstr(e, na->netid);
	enc_cstr(e, na->uaddr);
}

/* An opaque body: its length word now, patched by body_end() once the body is written. */
static size_t body_begin(struct xdr_enc *e)
{
	size_t off = xdr_enc_len(e);

	xdr_enc_u32(e, 0);
	return off;
}

static void body_end(struct xdr_enc *e, size_t off)
{
	if (!e->overflow)
		xdr_enc_patch_u32(e, off, (uint32_t)(xdr_enc_len(e) - off - 4));
}

/* An opaque body of at most NFS4_LAYOUT_BODY_MAX bytes as a decoder of its own. */
static bool dec_body(struct xdr_dec *d, struct xdr_dec *body)
{
	const uint8_t *p;
	uint32_t n;

	if (!xdr_dec_opaque(d, NFS4_LAYOUT_BODY_MAX, &p, &n))
		return false;
	xdr_dec_init(body, p, n);
	return true;
}

bool nfs4_netaddr_make(struct nfs4_netaddr *na, const char *ip, uint16_t port, bool rdma)
{
	unsigned char buf[sizeof(struct in6_addr)];
	char host[INET6_ADDRSTRLEN];
	bool v6 = false;

	if (inet_pton(AF_INET, ip, buf) == 1)
		inet_ntop(AF_INET, buf, host, sizeof(host));
	else if (inet_pton(AF_INET6, ip, buf) == 1 && inet_ntop(AF_INET6, buf, host, sizeof(host)))
		v6 = true;
	else
		return false;
	/* RFC 5665 §5.2.3.3-5.2.3.5: the IPv6 netids end in 6; the port is two decimal octets. */
	snprintf(na->netid, sizeof(na->netid), "%s%s", rdma ? "rdma" : "tcp", v6 ? "6" : "");
	snprintf(na->uaddr, sizeof(na->uaddr), "%s.%u.%u", host, port >> 8, port & 0xffu);
	return true;
}

/* ---- ff_layout4 (RFC 8435 §5.1) ---- */

void nfs4_ff_enc_layout(struct xdr_enc *e, const struct nfs4_ff_layout *l)
{
	xdr_enc_u64(e, l->stripe_unit);
	xdr_enc_u32(e, 1); /* ffl_mirrors<>: one mirror */
	xdr_enc_u32(e, 1); /* ffm_data_servers<>: one data server */
	xdr_enc_fixed(e, l->deviceid, NFS4_DEVICEID_SIZE);
	xdr_enc_u32(e, l->efficiency);
	enc_sid(e, &l->sid);
	xdr_enc_u32(e, 1); /* ffds_fh_vers<>: one handle */
	xdr_enc_opaque(e, l->fh, l->fh_len);
	enc_cstr(e, l->user);
	enc_cstr(e, l->group);
	xdr_enc_u32(e, l->flags);
	xdr_enc_u32(e, l->stats_hint);
}

/* ff_data_server4; the first one's fields are kept. */
static bool dec_ff_ds(struct xdr_dec *d, struct nfs4_ff_layout *l, bool keep)
{
	struct nfs4_ff_layout t;
	const uint8_t *p;
	uint32_t n, nfh;

	if (!xdr_dec_fixed(d, t.deviceid, NFS4_DEVICEID_SIZE) || !xdr_dec_u32(d, &t.efficiency) ||
	    !dec_sid(d, &t.sid) || !dec_count(d, 4, &nfh))
		return false;
	for (uint32_t i = 0; i < nfh; i++) {
		if (!xdr_dec_opaque(d, NFS4_LAYOUT_FH_MAX, &p, &n))
			return false;
		if (i == 0) {
			memcpy(t.fh, p, n);
			t.fh_len = n;
		}
	}
	if (!dec_cstr(d, t.user, sizeof(t.user)) || !dec_cstr(d, t.group, sizeof(t.group)))
		return false;
	if (keep) {
		memcpy(l->deviceid, t.deviceid, NFS4_DEVICEID_SIZE);
		l->efficiency = t.efficiency;
		l->sid = t.sid;
		l->nfhs = nfh;
		l->fh_len = nfh ? t.fh_len : 0;
		memcpy(l->fh, t.fh, l->fh_len);
		memcpy(l->user, t.user, sizeof(l->user));
		memcpy(l->group, t.group, sizeof(l->group));
	}
	return true;
}

bool nfs4_ff_dec_layout(struct xdr_dec *d, struct nfs4_ff_layout *l)
{
	uint32_t nds;

	memset(l, 0, sizeof(*l));
	if (!xdr_dec_u64(d, &l->stripe_unit) || !dec_count(d, 4, &l->nmirrors))
		return false;
	for (uint32_t m = 0; m < l->nmirrors; m++) {
		if (!dec_count(d, NFS4_DEVICEID_SIZE + 32, &nds))
			return false;
		if (m == 0)
			l->nservers = nds;
		for (uint32_t i = 0; i < nds; i++)
			if (!dec_ff_ds(d, l, m == 0 && i == 0))
				return false;
	}
	return xdr_dec_u32(d, &l->flags) && xdr_dec_u32(d, &l->stats_hint);
}

/* ---- ff_device_addr4 (RFC 8435 §4.1) ---- */

void nfs4_ff_enc_devaddr(struct xdr_enc *e, const struct nfs4_ff_devaddr *a)
{
	xdr_enc_u32(e, 1); /* ffda_netaddrs: one */
	enc_netaddr(e, &a->addr);
	xdr_enc_u32(e, 1); /* ffda_versions: one */
	xdr_enc_u32(e, a->version);
	xdr_enc_u32(e, a->minorversion);
	xdr_enc_u32(e, a->rsize);
	xdr_enc_u32(e, a->wsize);
	xdr_enc_bool(e, a->tightly_coupled);
}

bool nfs4_ff_dec_devaddr(struct xdr_dec *d, struct nfs4_ff_devaddr *a)
{
	struct nfs4_netaddr na;
	struct nfs4_ff_devaddr v;

	memset(a, 0, sizeof(*a));
	if (!dec_count(d, 8, &a->naddrs))
		return false;
	for (uint32_t i = 0; i < a->naddrs; i++) {
		if (!dec_netaddr(d, &na))
			return false;
		if (i == 0)
			a->addr = na;
	}
	if (!dec_count(d, 20, &a->nversions))
		return false;
	for (uint32_t i = 0; i < a->nversions; i++) {
		if (!xdr_dec_u32(d, &v.version) || !xdr_dec_u32(d, &v.minorversion) || !xdr_dec_u32(d, &v.rsize) ||
		    !xdr_dec_u32(d, &v.wsize) || !xdr_dec_bool(d, &v.tightly_coupled))
			return false;
		if (i == 0) {
			a->version = v.version;
			a->minorversion = v.minorversion;
			a->rsize = v.rsize;
			a->wsize = v.wsize;
			a->tightly_coupled = v.tightly_coupled;
		}
	}
	return true;
}

/* ---- error and statistics reports (RFC 8435 §9, RFC 7862 §15.6-15.7) ---- */

/* device_error4<>, appended to errs (the first NFS4_FF_ERRORS_MAX kept). */
static bool dec_device_errors(struct xdr_dec *d, struct nfs4_layout_errors *errs)
{
	struct nfs4_device_error de;
	uint32_t n;

	if (!dec_count(d, NFS4_DEVICEID_SIZE + 8, &n))
		return false;
	for (uint32_t i = 0; i < n; i++) {
		if (!xdr_dec_fixed(d, de.deviceid, NFS4_DEVICEID_SIZE) || !xdr_dec_u32(d, &de.status) ||
		    !xdr_dec_u32(d, &de.opnum))
			return false;
		if (errs->n < NFS4_FF_ERRORS_MAX)
			errs->e[errs->n++] = de;
		errs->total++;
	}
	return true;
}

/* ff_io_latency4 (RFC 8435 §9.2.1): five counters, two nfstime4; completed ones kept. */
static bool dec_latency(struct xdr_dec *d, uint64_t *ops, uint64_t *bytes)
{
	uint64_t req_ops, req_bytes, not_delivered;

	return xdr_dec_u64(d, &req_ops) && xdr_dec_u64(d, &req_bytes) && xdr_dec_u64(d, ops) &&
	       xdr_dec_u64(d, bytes) && xdr_dec_u64(d, &not_delivered) && skip_time(d) && skip_time(d);
}

bool nfs4_ff_dec_layoutupdate(struct xdr_dec *d, struct nfs4_ff_layoutupdate *u)
{
	const uint8_t *p;
	uint32_t n;

	memset(u, 0, sizeof(*u));
	return dec_netaddr(d, &u->addr) && xdr_dec_opaque(d, NFS4_LAYOUT_FH_MAX, &p, &n) &&
	       dec_latency(d, &u->read_ops, &u->read_bytes) && dec_latency(d, &u->write_ops, &u->write_bytes) &&
	       skip_time(d) && xdr_dec_bool(d, &u->local);
}

static void enc_latency(struct xdr_enc *e, uint64_t ops, uint64_t bytes)
{
	xdr_enc_u64(e, ops);   /* requested */
	xdr_enc_u64(e, bytes);
	xdr_enc_u64(e, ops);   /* completed */
	xdr_enc_u64(e, bytes);
	xdr_enc_u64(e, 0);     /* not delivered */
	for (int i = 0; i < 2; i++) { /* busy time, aggregate completion time */
		xdr_enc_u64(e, 0);
		xdr_enc_u32(e, 0);
	}
}

void nfs4_ff_enc_layoutupdate(struct xdr_enc *e, const struct nfs4_ff_layoutupdate *u)
{
	enc_netaddr(e, &u->addr);
	xdr_enc_opaque(e, NULL, 0); /* ffl_fhandle */
	enc_latency(e, u->read_ops, u->read_bytes);
	enc_latency(e, u->write_ops, u->write_bytes);
	xdr_enc_u64(e, 0); /* ffl_duration */
	xdr_enc_u32(e, 0);
	xdr_enc_bool(e, u->local);
}

void nfs4_ff_enc_ioerr(struct xdr_enc *e, uint64_t offset, uint64_t length, const struct nfs4_layout_sid *sid,
		       const struct nfs4_device_error *errs, uint32_t n)
{
	xdr_enc_u64(e, offset);
	xdr_enc_u64(e, length);
	enc_sid(e, sid);
	xdr_enc_u32(e, n);
	for (uint32_t i = 0; i < n; i++) {
		xdr_enc_fixed(e, errs[i].deviceid, NFS4_DEVICEID_SIZE);
		xdr_enc_u32(e, errs[i].status);
		xdr_enc_u32(e, errs[i].opnum);
	}
}

/* ff_iostats4 (RFC 8435 §9.2.2): offset, length, stateid, io_info4 x2, deviceid, ff_layoutupdate4. */
static bool dec_iostats(struct xdr_dec *d, struct nfs4_ff_layoutreturn *r)
{
	struct nfs4_layout_sid sid;
	struct nfs4_ff_layoutupdate u;
	uint64_t off, len, rc, rb, wc, wb;
	uint8_t devid[NFS4_DEVICEID_SIZE];

	if (!xdr_dec_u64(d, &off) || !xdr_dec_u64(d, &len) || !dec_sid(d, &sid) || !xdr_dec_u64(d, &rc) ||
	    !xdr_dec_u64(d, &rb) || !xdr_dec_u64(d, &wc) || !xdr_dec_u64(d, &wb) ||
	    !xdr_dec_fixed(d, devid, sizeof(devid)) || !nfs4_ff_dec_layoutupdate(d, &u))
		return false;
	r->read_bytes += rb;
	r->write_bytes += wb;
	return true;
}

bool nfs4_ff_dec_layoutreturn(struct xdr_dec *d, struct nfs4_ff_layoutreturn *r)
{
	struct nfs4_layout_sid sid;
	uint64_t off, len;
	uint32_t n;

	memset(r, 0, sizeof(*r));
	if (!dec_count(d, 36, &n)) /* ff_ioerr4: 8 + 8 + 16 + 4 at least */
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (!xdr_dec_u64(d, &off) || !xdr_dec_u64(d, &len) || !dec_sid(d, &sid) ||
		    !dec_device_errors(d, &r->errors))
			return false;
	if (!dec_count(d, 96, &r->niostats))
		return false;
	for (uint32_t i = 0; i < r->niostats; i++)
		if (!dec_iostats(d, r))
			return false;
	return true;
}

/* ---- the operations' arguments (RFC 8881 §18.40-18.44, RFC 7862 §15.6-15.7) ---- */

bool nfs4_dec_getdeviceinfo(struct xdr_dec *d, struct nfs4_getdeviceinfo_args *a)
{
	uint32_t nwords, w;

	/* gdia_notify_types: a bitmap4 we read and drop (no device notifications, §18.40.3). */
	if (!xdr_dec_fixed(d, a->deviceid, NFS4_DEVICEID_SIZE) || !xdr_dec_u32(d, &a->layout_type) ||
	    !xdr_dec_u32(d, &a->maxcount) || !xdr_dec_u32(d, &nwords) || nwords > 64)
		return false;
	for (uint32_t i = 0; i < nwords; i++)
		if (!xdr_dec_u32(d, &w))
			return false;
	return true;
}

bool nfs4_dec_getdevicelist(struct xdr_dec *d, struct nfs4_getdevicelist_args *a)
{
	return xdr_dec_u32(d, &a->layout_type) && xdr_dec_u32(d, &a->maxdevices) && xdr_dec_u64(d, &a->cookie) &&
	       xdr_dec_fixed(d, a->cookieverf, NFS4_DEVLIST_VERF);
}

bool nfs4_dec_layoutget(struct xdr_dec *d, struct nfs4_layoutget_args *a)
{
	return xdr_dec_bool(d, &a->signal_avail) && xdr_dec_u32(d, &a->layout_type) && xdr_dec_u32(d, &a->iomode) &&
	       xdr_dec_u64(d, &a->offset) && xdr_dec_u64(d, &a->length) && xdr_dec_u64(d, &a->minlength) &&
	       dec_sid(d, &a->sid) && xdr_dec_u32(d, &a->maxcount);
}

/* layoutreturn4 (§18.44.1): FILE carries a range, a stateid and lrf_body. A flexfiles body
 * that does not decode is dropped, not refused: the return itself stands (RFC 8435 §9.3 makes
 * the reports advisory). */
bool nfs4_dec_layoutreturn(struct xdr_dec *d, struct nfs4_layoutreturn_args *a)
{
	struct xdr_dec body;

	if (!xdr_dec_bool(d, &a->reclaim) || !xdr_dec_u32(d, &a->layout_type) || !xdr_dec_u32(d, &a->iomode) ||
	    !xdr_dec_u32(d, &a->returntype))
		return false;
	if (a->returntype == LAYOUTRETURN4_FSID || a->returntype == LAYOUTRETURN4_ALL)
		return true;
	if (a->returntype != LAYOUTRETURN4_FILE || !xdr_dec_u64(d, &a->offset) || !xdr_dec_u64(d, &a->length) ||
	    !dec_sid(d, &a->sid) || !dec_body(d, &body))
		return false;
	if (a->layout_type == LAYOUT4_FLEX_FILES && xdr_dec_remaining(&body) &&
	    !nfs4_ff_dec_layoutreturn(&body, &a->ff))
		memset(&a->ff, 0, sizeof(a->ff));
	return true;
}

bool nfs4_dec_layoutcommit(struct xdr_dec *d, struct nfs4_layoutcommit_args *a)
{
	struct xdr_dec body;

	if (!xdr_dec_u64(d, &a->offset) || !xdr_dec_u64(d, &a->length) || !xdr_dec_bool(d, &a->reclaim) ||
	    !dec_sid(d, &a->sid) || !xdr_dec_bool(d, &a->has_last_write) ||
	    (a->has_last_write && !xdr_dec_u64(d, &a->last_write)) || !xdr_dec_bool(d, &a->has_mtime) ||
	    (a->has_mtime && !dec_time(d, &a->mtime_sec, &a->mtime_nsec)))
		return false;
	/* layoutupdate4: flexfiles defines no body (RFC 8435 §6); any is read and dropped. */
	return xdr_dec_u32(d, &a->layout_type) && dec_body(d, &body);
}

bool nfs4_dec_layouterror(struct xdr_dec *d, struct nfs4_layouterror_args *a)
{
	return xdr_dec_u64(d, &a->offset) && xdr_dec_u64(d, &a->length) && dec_sid(d, &a->sid) &&
	       dec_device_errors(d, &a->errors);
}

bool nfs4_dec_layoutstats(struct xdr_dec *d, struct nfs4_layoutstats_args *a)
{
	struct xdr_dec body;

	if (!xdr_dec_u64(d, &a->offset) || !xdr_dec_u64(d, &a->length) || !dec_sid(d, &a->sid) ||
	    !xdr_dec_u64(d, &a->read_count) || !xdr_dec_u64(d, &a->read_bytes) || !xdr_dec_u64(d, &a->write_count) ||
	    !xdr_dec_u64(d, &a->write_bytes) || !xdr_dec_fixed(d, a->deviceid, NFS4_DEVICEID_SIZE) ||
	    !xdr_dec_u32(d, &a->layout_type) || !dec_body(d, &body))
		return false;
	/* RFC 8435 §9.2.2: a flexfiles lou_body is an ff_layoutupdate4; advisory, as above. */
	if (a->layout_type == LAYOUT4_FLEX_FILES && xdr_dec_remaining(&body))
		a->has_ff = nfs4_ff_dec_layoutupdate(&body, &a->ff);
	return true;
}

/* ---- the operations' results ---- */

uint32_t nfs4_getdeviceinfo_size(const struct nfs4_ff_devaddr *a)
{
	uint32_t nl = (uint32_t)strlen(a->addr.netid), ul = (uint32_t)strlen(a->addr.uaddr);

	/* da_layout_type, the body's length, then the body: a count, two strings, a count, 5 words */
	return 4 + 4 + 4 + 4 + nl + XDR_PAD(nl) + 4 + ul + XDR_PAD(ul) + 4 + 20;
}

/* An opaque or string of n bytes: its length word and its padded bytes. */
static uint32_t opaque_size(uint32_t n)
{
	return 4 + n + XDR_PAD(n);
}

uint32_t nfs4_layoutget_size(const struct nfs4_layoutget_res *r)
{
	const struct nfs4_ff_layout *l = &r->ff;
	/* ff_layout4 with one mirror of one server: stripe unit, two counts, deviceid, efficiency,
	 * stateid, the handles' count and one handle, user, group, flags, stats hint */
	uint32_t body = 8 + 4 + 4 + NFS4_DEVICEID_SIZE + 4 + 16 + 4 + opaque_size(l->fh_len) +
			opaque_size((uint32_t)strlen(l->user)) + opaque_size((uint32_t)strlen(l->group)) + 4 + 4;

	/* return_on_close, stateid, one layout4: offset, length, iomode, type, the body */
	return 4 + 16 + 4 + 8 + 8 + 4 + 4 + 4 + body;
}

void nfs4_enc_getdeviceinfo_res(struct xdr_enc *e, uint32_t status, const struct nfs4_getdeviceinfo_res *r)
{
	size_t off;

	if (status == NFS4ERR_TOOSMALL) {
		xdr_enc_u32(e, r->mincount);
		return;
	}
	if (status != NFS4_OK)
		return;
	xdr_enc_u32(e, LAYOUT4_FLEX_FILES);
	off = body_begin(e);
	nfs4_ff_enc_devaddr(e, &r->addr);
	body_end(e, off);
	xdr_enc_u32(e, 0); /* gdir_notification: an empty bitmap4, no notifications */
}

void nfs4_enc_getdevicelist_res(struct xdr_enc *e, uint32_t status, const struct nfs4_getdevicelist_res *r)
{
	uint32_t n = r->n < NFS4_DEVLIST_MAX ? r->n : NFS4_DEVLIST_MAX;

	if (status != NFS4_OK)
		return;
	xdr_enc_u64(e, r->cookie);
	xdr_enc_fixed(e, r->cookieverf, NFS4_DEVLIST_VERF);
	xdr_enc_u32(e, n);
	for (uint32_t i = 0; i < n; i++)
		xdr_enc_fixed(e, r->ids[i], NFS4_DEVICEID_SIZE);
	xdr_enc_bool(e, r->eof);
}

void nfs4_enc_layoutget_res(struct xdr_enc *e, uint32_t status, const struct nfs4_layoutget_res *r)
{
	size_t off;

	if (status == NFS4ERR_LAYOUTTRYLATER) {
		xdr_enc_bool(e, false); /* logr_will_signal_layout_avail */
		return;
	}
	if (status != NFS4_OK)
		return;
	xdr_enc_bool(e, r->return_on_close);
	enc_sid(e, &r->sid);
	xdr_enc_u32(e, 1); /* logr_layout<>: one layout4 */
	xdr_enc_u64(e, r->offset);
	xdr_enc_u64(e, r->length);
	xdr_enc_u32(e, r->iomode);
	xdr_enc_u32(e, LAYOUT4_FLEX_FILES);
	off = body_begin(e);
	nfs4_ff_enc_layout(e, &r->ff);
	body_end(e, off);
}

void nfs4_enc_layoutreturn_res(struct xdr_enc *e, uint32_t status, const struct nfs4_layoutreturn_res *r)
{
	if (status != NFS4_OK)
		return;
	xdr_enc_bool(e, r->has_sid);
	if (r->has_sid)
		enc_sid(e, &r->sid);
}

void nfs4_enc_layoutcommit_res(struct xdr_enc *e, uint32_t status, const struct nfs4_layoutcommit_res *r)
{
	if (status != NFS4_OK)
		return;
	xdr_enc_bool(e, r->size_changed);
	if (r->size_changed)
		xdr_enc_u64(e, r->new_size);
}

bool nfs4_dec_getdeviceinfo_res(struct xdr_dec *d, uint32_t status, struct nfs4_getdeviceinfo_res *r)
{
	struct xdr_dec body;
	uint32_t type, nwords, w;

	memset(r, 0, sizeof(*r));
	if (status == NFS4ERR_TOOSMALL)
		return xdr_dec_u32(d, &r->mincount);
	if (status != NFS4_OK)
		return true;
	if (!xdr_dec_u32(d, &type) || type != LAYOUT4_FLEX_FILES || !dec_body(d, &body) ||
	    !nfs4_ff_dec_devaddr(&body, &r->addr) || xdr_dec_remaining(&body) || !xdr_dec_u32(d, &nwords) ||
	    nwords > 64)
		return false;
	for (uint32_t i = 0; i < nwords; i++)
		if (!xdr_dec_u32(d, &w))
			return false;
	return true;
}

bool nfs4_dec_getdevicelist_res(struct xdr_dec *d, uint32_t status, struct nfs4_getdevicelist_res *r)
{
	memset(r, 0, sizeof(*r));
	if (status != NFS4_OK)
		return true;
	if (!xdr_dec_u64(d, &r->cookie) || !xdr_dec_fixed(d, r->cookieverf, NFS4_DEVLIST_VERF) ||
	    !xdr_dec_u32(d, &r->n) || r->n > NFS4_DEVLIST_MAX)
		return false;
	for (uint32_t i = 0; i < r->n; i++)
		if (!xdr_dec_fixed(d, r->ids[i], NFS4_DEVICEID_SIZE))
			return false;
	return xdr_dec_bool(d, &r->eof);
}

bool nfs4_dec_layoutget_res(struct xdr_dec *d, uint32_t status, struct nfs4_layoutget_res *r)
{
	struct xdr_dec body;
	uint32_t n, type;
	bool will_signal;

	memset(r, 0, sizeof(*r));
	if (status == NFS4ERR_LAYOUTTRYLATER)
		return xdr_dec_bool(d, &will_signal);
	if (status != NFS4_OK)
		return true;
	/* one layout4 is all rnfsd sends (and all this decoder takes) */
	return xdr_dec_bool(d, &r->return_on_close) && dec_sid(d, &r->sid) && xdr_dec_u32(d, &n) && n == 1 &&
	       xdr_dec_u64(d, &r->offset) && xdr_dec_u64(d, &r->length) && xdr_dec_u32(d, &r->iomode) &&
	       xdr_dec_u32(d, &type) && type == LAYOUT4_FLEX_FILES && dec_body(d, &body) &&
	       nfs4_ff_dec_layout(&body, &r->ff) && !xdr_dec_remaining(&body);
}

bool nfs4_dec_layoutreturn_res(struct xdr_dec *d, uint32_t status, struct nfs4_layoutreturn_res *r)
{
	memset(r, 0, sizeof(*r));
	if (status != NFS4_OK)
		return true;
	return xdr_dec_bool(d, &r->has_sid) && (!r->has_sid || dec_sid(d, &r->sid));
}
