/*
 * rt_scen_basic.c - connection-level scenarios of the test requester:
 * a plain NULL call, RFC 8797 private data variants, version errors
 * (RFC 8166 §4.5.1) and the Version Two draft.
 */
#include <stdio.h>
#include <string.h>

#include "tests/rdma/rt.h"

/* RFC 8797 §4: identifier, version 1, reserved bits zero; sizes are any byte. */
static int check_server_priv(const struct rt_conn *c, struct rt_priv *p, char *why, size_t n)
{
	if (!rt_conn_peer_priv(c, p)) {
		snprintf(why, n, "RFC 8797 private data from the server, got %u bytes",
			 c->peer_priv_len);
		return -1;
	}
	if (p->ident != RT_PRIV_IDENT || p->version != RT_PRIV_VERSION || (p->flags & 0xfe)) {
		snprintf(why, n, "identifier 0xf6ab0e18, version 1, reserved bits 0 got "
			 "identifier %#x, version %u, flags %#x", p->ident, p->version, p->flags);
		return -1;
	}
	return 0;
}

void rt_scen_null(struct rt_ctx *t)
{
	struct rt_conn c;
	struct rt_priv p;
	char why[200];
	uint32_t cr;

	if (rt_open(t, &c, NULL, "null_msg"))
		return;
	if (rt_null_check(t, &c, 1, &cr, why, sizeof(why))) {
		rt_fail(t, "null_msg", "expected RDMA_MSG reply, same XID, credits >= 1 got %s", why);
	} else if (rt_conn_violation(&c, why, sizeof(why))) {
		rt_fail(t, "null_msg", "expected %s", why);
	} else {
		t->credits = cr;
		rt_pass(t, "null_msg", "credits %u", cr);
	}
	if (check_server_priv(&c, &p, why, sizeof(why)))
		rt_fail(t, "server_privdata", "expected %s", why);
	else
		rt_pass(t, "server_privdata", "send %u recv %u bytes, R=%u",
			rt_priv_bytes(p.send_size), rt_priv_bytes(p.recv_size), p.flags & 1);
	rt_conn_close(&c);
}

/*
 * A READ of `count` bytes with no chunks at all: the reply is larger than
 * `limit`, the receive size the server was told (or must assume). RFC 8797
 * §4.2/§5.1: the server may not send more than that; it must answer with
 * RDMA_ERROR/ERR_CHUNK (RFC 8166 §4.5.2... no Reply chunk) or a short READ
 * that fits. Returns 0, or -1 with why.
 */
static int big_reply_probe(struct rt_ctx *t, struct rt_conn *c, uint32_t count, uint32_t limit,
			   const char *limit_what, char *saw, size_t sn, char *why, size_t n)
{
	uint8_t rpc[256];
	struct rt_xchg x = { .proc = RT_RDMA_MSG, .rpc = rpc };
	uint32_t got = 0, dlen = 0, st, i;
	bool eof = false;
	struct rt_enc e;
	const uint8_t *d;
	int r;

	rt_enc_init(&e, rpc, sizeof(rpc));
	rt_rpc_call_hdr(&e, rt_xid(t), RT_NFS_PROG, 3, RT_NFS3_READ, RT_AUTH_SYS);
	rt_nfs3_read_args(&e, &t->file, 0, count);
	x.rpc_len = e.len;
	r = rt_xchg_run(t, c, &x, why, n);
	if (r < 0)
		return -1;
	if (x.msg->len > limit) {
		snprintf(why, n, "at most %u bytes per message (%s) got %u bytes", limit, limit_what,
			 x.msg->len);
		goto fail;
	}
	if (r == 1) {
		if (x.h.err != RT_ERR_CHUNK) {
			snprintf(why, n, "ERR_CHUNK or a fitting reply got RDMA_ERROR %u", x.h.err);
			goto fail;
		}
		snprintf(saw, sn, "READ of %u without chunks -> ERR_CHUNK", count);
		rt_xchg_release(&x);
		return 0;
	}
	st = rt_nfs3_read_res_hdr(&x.rr.res, &got, &eof, &dlen);
	d = rt_dec_bytes(&x.rr.res, dlen);
	if (!x.rr.accepted || x.rr.stat || st || !d || dlen != got || got > count) {
		snprintf(why, n, "a READ3resok with inline data got stat %u/%u count %u len %u%s",
			 x.rr.stat, st, got, dlen, d ? "" : " (data missing)");
		goto fail;
	}
	for (i = 0; i < got; i++) {
		if (d[i] != rt_pattern_byte(i)) {
			snprintf(why, n, "file data got a mismatch at byte %u", i);
			goto fail;
		}
	}
	snprintf(saw, sn, "READ of %u without chunks -> %u bytes inline in a %u-byte message",
		 count, got, x.msg->len);
	rt_xchg_release(&x);
	return 0;
fail:
	rt_xchg_release(&x);
	return -1;
}

struct priv_case {
	const char *name;
	bool send;            /* send private data at all */
	struct rt_priv p;
	bool may_reject;      /* garbled: a clean reject is tolerated */
	uint32_t assume_recv; /* receive size the server must assume we have */
	uint32_t probe_count; /* READ size for the big-reply probe */
};

static void priv_case_run(struct rt_ctx *t, const struct priv_case *pc)
{
	struct rt_conn_opts o;
	struct rt_conn c;
	struct rt_priv sp;
	uint8_t def[8], buf[8];
	char why[240], saw[160] = "", why2[200];
	const char *limit_what;
	uint32_t limit;

	rt_conn_opts_default(&o, def);
	if (pc->send) {
		rt_priv_encode(&pc->p, buf);
		o.priv = buf;
		o.priv_len = 8;
	} else {
		o.priv = NULL;
		o.priv_len = 0;
	}
	o.adv_recv = pc->assume_recv;
	o.recv_size = pc->assume_recv > 65536 ? pc->assume_recv : 65536;
	o.ring = 16;
	o.nrecv = 16;
	switch (rt_conn_open(&c, (struct sockaddr *)&t->dst, &o, why, sizeof(why))) {
	case RT_OPEN_OK:
		break;
	case RT_OPEN_REJECTED:
		if (pc->may_reject)
			rt_pass(t, pc->name, "rejected cleanly: %s", why);
		else
			rt_fail(t, pc->name, "expected the connection accepted (RFC 8797 §5.1) got %s",
				why);
		return;
	default:
		rt_fail(t, pc->name, "expected the connection accepted or rejected got %s", why);
		return;
	}
	if (check_server_priv(&c, &sp, why2, sizeof(why2))) {
		rt_fail(t, pc->name, "expected %s", why2);
		goto out;
	}
	if (rt_null_check(t, &c, 1, NULL, why, sizeof(why))) {
		rt_fail(t, pc->name, "expected a NULL call answered got %s", why);
		goto out;
	}
	/* We may receive no more than we advertised, nor the server send more than it did. */
	limit = pc->assume_recv;
	limit_what = pc->send && !pc->may_reject ? "our advertised receive size" :
		"RFC 8797 §5 default without valid private data";
	if (rt_priv_bytes(sp.send_size) < limit) {
		limit = rt_priv_bytes(sp.send_size);
		limit_what = "the server's own advertised send size";
	}
	if (!t->have_fh) {
		snprintf(saw, sizeof(saw), "no big-reply probe: %.100s", t->fh_why);
	} else if (big_reply_probe(t, &c, pc->probe_count, limit, limit_what, saw, sizeof(saw),
				   why, sizeof(why))) {
		rt_fail(t, pc->name, "expected %s", why);
		goto out;
	}
	if (rt_conn_violation(&c, why, sizeof(why))) {
		rt_fail(t, pc->name, "expected %s", why);
		goto out;
	}
	rt_pass(t, pc->name, "accepted; server send %u recv %u; %s", rt_priv_bytes(sp.send_size),
		rt_priv_bytes(sp.recv_size), saw);
out:
	rt_conn_close(&c);
}

void rt_scen_privdata(struct rt_ctx *t)
{
	/* RFC 8797 §5.1/§5.2: absent or unrecognised private data means the
	 * RFC 8166 defaults, 1024 bytes each way. */
	static const struct priv_case cases[] = {
		{ "privdata_absent", false, { 0 }, false, 1024, 3000 },
		{ "privdata_bad_ident", true, { 0x12345678, 1, 0, 3, 3 }, true, 1024, 3000 },
		{ "privdata_bad_version", true, { RT_PRIV_IDENT, 0x7f, 0, 3, 3 }, true, 1024, 3000 },
		{ "privdata_tiny", true, { RT_PRIV_IDENT, 1, 0, 0, 0 }, false, 1024, 3000 },
		{ "privdata_huge", true, { RT_PRIV_IDENT, 1, 0, 255, 255 }, false, 262144, 8000 },
	};
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		priv_case_run(t, &cases[i]);
}

/* A NULL call with a version the server cannot know. RFC 8166 §4.5.1. */
static void err_vers_case(struct rt_ctx *t, const char *name, uint32_t vers)
{
	uint8_t rpc[128], msg[256];
	uint32_t xid = rt_xid(t);
	struct rt_probe p;
	struct rt_conn c;
	struct rt_hdr h;

	if (rt_open(t, &c, NULL, name))
		return;
	rt_hdr_call(&h, xid, RT_RDMA_MSG);
	h.vers = vers;
	rt_probe_send(t, &c, msg, rt_build(&h, rpc, rt_null_call(rpc, sizeof(rpc), xid), msg,
					   sizeof(msg)), xid, true, &p);
	if (p.out == RT_OUT_ERR_VERS &&
	    (p.h.vers_low < 1 || p.h.vers_low > 1 || p.h.vers_high < 1 || p.h.vers_high > 2)) {
		rt_fail(t, name, "expected ERR_VERS range 1..1 or 1..2 got %u..%u", p.h.vers_low,
			p.h.vers_high);
	} else {
		rt_probe_verdict(t, name, &p, RT_OUT_ERR_VERS, "RFC 8166 §4.5.1");
		if (p.out == RT_OUT_ERR_VERS && !t->vers_known) {
			t->vers_known = true;
			t->vers_low = p.h.vers_low;
			t->vers_high = p.h.vers_high;
		}
	}
	rt_conn_close(&c);
}

void rt_scen_err_vers(struct rt_ctx *t)
{
	err_vers_case(t, "err_vers", 7);
	err_vers_case(t, "err_vers_0", 0);
}

/* RDMA2_OPTIONAL with an option nobody defined: draft §3.1 RDMA2_ERR_INVALID_OPTION. */
static void v2_unknown_option(struct rt_ctx *t)
{
	static const char info[] = "rdmatest";
	uint32_t xid = rt_xid(t);
	uint8_t msg[128];
	struct rt_probe p;
	struct rt_conn c;
	struct rt_hdr h;

	if (rt_open(t, &c, NULL, "v2_unknown_option"))
		return;
	rt_hdr_call(&h, xid, RT_RDMA2_OPTIONAL);
	h.vers = 2;
	h.optdir = RT_DIR_CALL;
	h.opttype = 0x7e57ab1e;
	h.optinfo = (const uint8_t *)info;
	h.optinfo_len = sizeof(info) - 1;
	rt_probe_send(t, &c, msg, rt_build(&h, NULL, 0, msg, sizeof(msg)), xid, true, &p);
	if (p.out == RT_OUT_ERR_OTHER && (p.h.vers != 2 || p.h.err != RT_RDMA2_ERR_INVALID_OPTION))
		rt_fail(t, "v2_unknown_option", "expected RDMA2_ERROR vers 2 err "
			"RDMA2_ERR_INVALID_OPTION (3) got vers %u err %u", p.h.vers, p.h.err);
	else
		rt_probe_verdict(t, "v2_unknown_option", &p, RT_OUT_ERR_OTHER,
				 "v2 draft §3.1 RDMA2_ERR_INVALID_OPTION");
	rt_conn_close(&c);
}

void rt_scen_v2(struct rt_ctx *t)
{
	struct rt_conn c;
	char why[200];

	if (!t->vers_known) {
		/* Learn the range quietly-ish: err_vers reports it. */
		err_vers_case(t, "err_vers", 7);
		if (!t->vers_known) {
			rt_fail(t, "v2_null", "expected the supported range from ERR_VERS got none");
			return;
		}
	}
	if (t->vers_high < 2) {
		/* Draft §5.2: a v1-only responder answers a v2 call with ERR_VERS. */
		err_vers_case(t, "v2_fallback", 2);
		rt_skip(t, "v2_null", "server advertises only version %u..%u", t->vers_low,
			t->vers_high);
		rt_skip(t, "v2_unknown_option", "server advertises only version %u..%u",
			t->vers_low, t->vers_high);
		return;
	}
	if (!rt_open(t, &c, NULL, "v2_null")) {
		if (rt_null_check(t, &c, 2, NULL, why, sizeof(why)))
			rt_fail(t, "v2_null", "expected an RDMA2_MSG reply got %s", why);
		else
			rt_pass(t, "v2_null", "RDMA2_MSG reply, direction REPLY");
		rt_conn_close(&c);
	}
	v2_unknown_option(t);
}
