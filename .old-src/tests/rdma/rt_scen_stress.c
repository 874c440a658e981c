/*
 * rt_scen_stress.c - flow control and teardown: calls exactly up to the
 * credit grant with exactly that many receives posted (RFC 8166 §3.3.1),
 * more calls than credits, and abrupt disconnects in the middle of RDMA
 * transfers followed by a reconnect.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/rdma/rt.h"

static long long rnr_naks(const struct rt_conn *c)
{
	long long a = rt_conn_hw_counter(c, "send_rnr_err");
	long long b = rt_conn_hw_counter(c, "rcvd_rnr_err");

	return a < 0 || b < 0 ? -1 : a + b;
}

/*
 * Send n NULL calls back to back and collect n answers. 0, or -1 with why.
 * *min_credits gets the smallest grant seen, *last the grant in the last
 * answer (RFC 8166 §3.3.1: the most recent grant is what may be in flight).
 */
static int burst(struct rt_ctx *t, struct rt_conn *c, uint32_t n, uint32_t *min_credits,
		 uint32_t *last, char *why, size_t wn)
{
	uint8_t msg[256];
	uint32_t i, xid, got = 0;
	struct rt_hdr h;
	struct rt_msg *m;
	const char *bad;
	char st[96];

	for (i = 0; i < n; i++) {
		if (rt_send(c, msg, rt_null_msg(t, 1, msg, sizeof(msg), &xid))) {
			snprintf(why, wn, "call %u of %u not sent (%s)", i + 1, n,
				 rt_conn_state(c, st, sizeof(st)));
			return -1;
		}
	}
	for (; got < n; got++) {
		m = rt_wait_any(c, t->timeout_ms);
		if (!m)
			break;
		if (rt_hdr_decode(m->data, m->len, &h, &bad) || h.proc != RT_RDMA_MSG) {
			snprintf(why, wn, "answer %u malformed or not RDMA_MSG", got + 1);
			rt_msg_free(m);
			return -1;
		}
		if (h.credits < *min_credits)
			*min_credits = h.credits;
		*last = h.credits;
		rt_msg_free(m);
	}
	if (got < n) {
		snprintf(why, wn, "%u answers got %u (%s)", n, got, rt_conn_state(c, st, sizeof(st)));
		return -1;
	}
	if (*min_credits < 1) {
		snprintf(why, wn, "grants >= 1 with nothing outstanding got 0 (RFC 5666 §3.3)");
		return -1;
	}
	return 0;
}

/*
 * Three rounds: post exactly as many receives as the latest grant allows
 * in flight (the NULL's grant first, then each round's last grant) and
 * send exactly that many calls back to back. The server must answer them
 * all without ever sending to a receive we have not posted (our rnr_retry
 * is 0, like the Linux client: one such Send ends the connection), and
 * with no RNR NAKs on the device (that would mean it granted credits for
 * receives it had not posted).
 */
static void credits_exact(struct rt_ctx *t)
{
	struct rt_conn_opts o;
	struct rt_conn c;
	uint8_t priv[8];
	uint32_t grant = 0, min_cr = ~0u, round, sent[3];
	long long rnr0, rnr1;
	char why[240];

	rt_conn_opts_default(&o, priv);
	o.manual_repost = true;
	o.nrecv = 1;
	o.ring = 1100;
	if (rt_open(t, &c, &o, "credits_exact"))
		return;
	if (rt_null_check(t, &c, 1, &grant, why, sizeof(why))) {
		rt_fail(t, "credits_exact", "expected a NULL answered got %s", why);
		goto out;
	}
	rnr0 = rnr_naks(&c);
	for (round = 0; round < 3; round++) {
		if (grant > 1024) {
			rt_fail(t, "credits_exact", "expected a credit grant of at most 1024 got %u",
				grant);
			goto out;
		}
		sent[round] = grant;
		if (rt_recv_post(&c, grant)) {
			rt_fail(t, "credits_exact", "expected to post %u receives (local failure)",
				grant);
			goto out;
		}
		if (burst(t, &c, sent[round], &min_cr, &grant, why, sizeof(why))) {
			rt_fail(t, "credits_exact", "expected %u calls (the latest grant) answered with "
				"%u receives posted, round %u: %s", sent[round], sent[round], round + 1,
				why);
			goto out;
		}
	}
	rnr1 = rnr_naks(&c);
	if (rnr0 >= 0 && rnr1 > rnr0) {
		rt_fail(t, "credits_exact", "expected no RNR NAKs within the credit grant got %lld",
			rnr1 - rnr0);
		goto out;
	}
	if (rt_conn_violation(&c, why, sizeof(why))) {
		rt_fail(t, "credits_exact", "expected %s", why);
		goto out;
	}
	if (rt_conn_dead(&c)) {
		rt_fail(t, "credits_exact", "expected a healthy connection got %s",
			rt_conn_state(&c, why, sizeof(why)));
		goto out;
	}
	if (min_cr * 2 < sent[0])
		rt_info(t, "credits_exact", "the grant fell from %u to %u during a burst: a Linux "
			"client then keeps only %u calls in flight until a later reply raises it",
			sent[0], min_cr, min_cr);
	rt_pass(t, "credits_exact", "rounds of %u, %u, %u calls answered into exactly that many "
		"receives; smallest grant %u; RNR counter %s", sent[0], sent[1], sent[2], min_cr,
		rnr0 < 0 ? "unavailable" : "unchanged");
out:
	rt_conn_close(&c);
}

/* Reconnect and get a NULL answered, retrying for a few seconds. 0 or -1 (why). */
static int reconnect_null(struct rt_ctx *t, char *why, size_t n)
{
	struct rt_conn_opts o;
	struct rt_conn c;
	uint8_t priv[8];
	int tries;

	rt_conn_opts_default(&o, priv);
	for (tries = 0; tries < 10; tries++) {
		if (tries)
			usleep(500 * 1000);
		if (rt_conn_open(&c, (struct sockaddr *)&t->dst, &o, why, n) != RT_OPEN_OK)
			continue;
		if (!rt_null_check(t, &c, 1, NULL, why, n)) {
			rt_conn_close(&c);
			return 0;
		}
		rt_conn_close(&c);
	}
	return -1;
}

/*
 * Credits + 16 calls back to back, receives for all of them posted. RFC
 * 8166 §3.3.1 forbids the requester this; the server may answer, drop or
 * disconnect, but must not crash or wedge.
 */
static void credits_overrun(struct rt_ctx *t)
{
	struct rt_conn_opts o;
	struct rt_conn c;
	uint8_t priv[8], msg[256];
	uint32_t cr = 0, n, i, xid, got = 0;
	struct rt_msg *m;
	char why[240], st[96];

	rt_conn_opts_default(&o, priv);
	o.ring = 1100;
	o.nrecv = 1100;
	if (rt_open(t, &c, &o, "credits_overrun"))
		return;
	if (rt_null_check(t, &c, 1, &cr, why, sizeof(why)) || cr > 1024) {
		rt_fail(t, "credits_overrun", "expected a NULL answered with a grant <= 1024 got %s",
			why);
		rt_conn_close(&c);
		return;
	}
	n = cr + 16;
	for (i = 0; i < n; i++)
		if (rt_send(&c, msg, rt_null_msg(t, 1, msg, sizeof(msg), &xid)))
			break;
	while ((m = rt_wait_any(&c, t->timeout_ms))) {
		got++;
		rt_msg_free(m);
		if (got == n)
			break;
	}
	rt_conn_state(&c, st, sizeof(st));
	if (!rt_conn_dead(&c) && rt_null_check(t, &c, 1, NULL, why, sizeof(why))) {
		rt_fail(t, "credits_overrun", "expected the server to answer, drop or disconnect, "
			"got a connection that no longer answers a NULL: %s", why);
		rt_conn_close(&c);
		return;
	}
	rt_conn_close(&c);
	if (reconnect_null(t, why, sizeof(why)))
		rt_fail(t, "credits_overrun", "expected the server alive after %u calls on a grant "
			"of %u got no NULL answered on a new connection: %s", n, cr, why);
	else
		rt_pass(t, "credits_overrun", "%u of %u calls (grant %u) answered, connection %s; "
			"new connection fine", got, n, cr, st);
}

void rt_scen_credits(struct rt_ctx *t)
{
	credits_exact(t);
	credits_overrun(t);
}

enum cut { CUT_ABORT, CUT_DISCONNECT, CUT_ABORT_LATE };

/* Start a 1 MiB WRITE (Read chunk) or READ (Write chunk), cut the connection, reconnect. */
static int disconnect_case(struct rt_ctx *t, bool write, enum cut how, char *why, size_t n)
{
	enum { LEN = 1u << 20 };
	uint8_t rpc[256], msg[512], *data;
	struct rt_conn_opts o;
	struct rt_conn c;
	struct rt_hdr h;
	struct rt_enc e;
	uint8_t priv[8];
	uint32_t xid;
	size_t pos;

	rt_conn_opts_default(&o, priv);
	if (rt_conn_open(&c, (struct sockaddr *)&t->dst, &o, why, n) != RT_OPEN_OK)
		return -1;
	data = rt_data_alloc(&c, LEN);
	memset(data, 0x5c, LEN);
	xid = rt_xid(t);
	rt_enc_init(&e, rpc, sizeof(rpc));
	rt_rpc_call_hdr(&e, xid, RT_NFS_PROG, 3, write ? RT_NFS3_WRITE : RT_NFS3_READ, RT_AUTH_SYS);
	rt_hdr_call(&h, xid, RT_RDMA_MSG);
	if (write) {
		pos = rt_nfs3_write_args_hdr(&e, &t->wfile, 8u << 20, LEN, RT_NFS3_UNSTABLE);
		h.nreads = 1;
		h.reads[0] = (struct rt_read_seg){ (uint32_t)pos, rt_seg_of(&c, data, LEN) };
	} else {
		rt_nfs3_read_args(&e, &t->file, 0, LEN);
		h.nwrites = 1;
		h.writes[0].nsegs = 1;
		h.writes[0].segs[0] = rt_seg_of(&c, data, LEN);
	}
	rt_send(&c, msg, rt_build(&h, rpc, e.len, msg, sizeof(msg)));
	switch (how) {
	case CUT_ABORT:       /* QP and memory gone while the server may be mid-transfer */
		rt_conn_abort(&c);
		break;
	case CUT_ABORT_LATE:  /* let the server start its RDMA first */
		usleep(3000);
		rt_conn_abort(&c);
		break;
	case CUT_DISCONNECT:  /* an orderly DREQ, right behind the call */
		rt_conn_close(&c);
		break;
	}
	usleep(200 * 1000);
	return reconnect_null(t, why, n);
}

void rt_scen_disconnect(struct rt_ctx *t)
{
	static const struct { const char *name; bool write; enum cut how; } cases[] = {
		{ "disconnect_midwrite", true, CUT_ABORT },
		{ "disconnect_midwrite_late", true, CUT_ABORT_LATE },
		{ "disconnect_midwrite_dreq", true, CUT_DISCONNECT },
		{ "disconnect_midread", false, CUT_ABORT },
		{ "disconnect_midread_late", false, CUT_ABORT_LATE },
	};
	char why[240];
	unsigned i;

	if (!t->have_fh) {
		rt_fail(t, "disconnect", "expected file handles got none: %s", t->fh_why);
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (disconnect_case(t, cases[i].write, cases[i].how, why, sizeof(why)))
			rt_fail(t, cases[i].name, "expected a NULL answered on a new connection "
				"after the cut got %s", why);
		else
			rt_pass(t, cases[i].name, "reconnected, NULL answered");
	}
	/* Eight more in a row, alternating: resources must come back each time. */
	for (i = 0; i < 8; i++) {
		if (disconnect_case(t, i & 1, CUT_ABORT, why, sizeof(why))) {
			rt_fail(t, "disconnect_repeat", "expected 8 cut transfers each followed by a "
				"good reconnect got a failure at %u: %s", i + 1, why);
			return;
		}
	}
	rt_pass(t, "disconnect_repeat", "8 cut transfers, each followed by a good reconnect");
}
