/*
 * test_rpc_clnt.c - rpc/rpc_clnt.c without a network: reply header decoding
 * of every RFC 5531 §9 reply form and of every truncation, the call header,
 * the retransmission schedule, XID matching (late, duplicate, foreign
 * replies), timeouts and retransmission driven by rpc_clnt_tick(), resend
 * after a reconnection, failing every call, and the REPLY routing of
 * rpc_call_receive() to a connection's client.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/log.h"
#include "rpc/rpc_clnt.h"
#include "rpc/rpc_stats.h"
#include "tests/unit/rpc_test_msg.h"

/* ---- reply decoding ---- */

static size_t reply_accepted(struct tmsg *m, uint32_t xid, uint32_t verf_len, uint32_t stat)
{
	m->n = 0;
	tmsg_u32(m, xid);
	tmsg_u32(m, RPC_MSG_REPLY);
	tmsg_u32(m, RPC_MSG_ACCEPTED);
	tmsg_u32(m, 6); /* some verifier flavor */
	tmsg_u32(m, verf_len);
	for (uint32_t i = 0; i < (verf_len + 3) / 4; i++)
		tmsg_u32(m, 0xabababab);
	tmsg_u32(m, stat);
	return m->n;
}

static void test_decode_accepted(void **state)
{
	(void)state;
	struct tmsg m;
	struct rpc_reply_hdr h;

	size_t hdr = reply_accepted(&m, 7, 5, RPC_SUCCESS);
	tmsg_u32(&m, 42);
	assert_int_equal(rpc_reply_decode(m.b, m.n, &h), RPC_REPLY_OK);
	assert_int_equal(h.xid, 7);
	assert_int_equal(h.reply_stat, RPC_MSG_ACCEPTED);
	assert_int_equal(h.accept_stat, RPC_SUCCESS);
	assert_int_equal(h.verf_flavor, 6);
	assert_int_equal(h.verf_len, 5);
	assert_int_equal(h.verf_off, 20); /* xid, REPLY, ACCEPTED, flavor, length (RPCSEC_GSS reads it there) */
	assert_int_equal(m.b[h.verf_off], 0xab);
	assert_int_equal(h.res_off, hdr);

	reply_accepted(&m, 8, 0, RPC_PROG_MISMATCH);
	tmsg_u32(&m, 2);
	tmsg_u32(&m, 4);
	assert_int_equal(rpc_reply_decode(m.b, m.n, &h), RPC_REPLY_OK);
	assert_int_equal(h.accept_stat, RPC_PROG_MISMATCH);
	assert_int_equal(h.low, 2);
	assert_int_equal(h.high, 4);

	const uint32_t voids[] = {RPC_PROG_UNAVAIL, RPC_PROC_UNAVAIL, RPC_GARBAGE_ARGS, RPC_SYSTEM_ERR};
	for (unsigned i = 0; i < 4; i++) {
		reply_accepted(&m, 9, 0, voids[i]);
		assert_int_equal(rpc_reply_decode(m.b, m.n, &h), RPC_REPLY_OK);
		assert_int_equal(h.accept_stat, voids[i]);
	}
	reply_accepted(&m, 9, 0, 6); /* no such accept_stat */
	assert_int_equal(rpc_reply_decode(m.b, m.n, &h), RPC_REPLY_BAD);
	reply_accepted(&m, 9, 401, RPC_SUCCESS); /* RFC 5531 §8.2: at most 400 */
	assert_int_equal(rpc_reply_decode(m.b, m.n, &h), RPC_REPLY_BAD);
	reply_accepted(&m, 9, 400, RPC_SUCCESS);
	assert_int_equal(rpc_reply_decode(m.b, m.n, &h), RPC_REPLY_OK);
}

static void test_decode_denied(void **state)
{
	(void)state;
	struct tmsg m = {.n = 0};
	struct rpc_reply_hdr h;

	tmsg_u32(&m, 3);
	tmsg_u32(&m, RPC_MSG_REPLY);
	tmsg_u32(&m, RPC_MSG_DENIED);
	tmsg_u32(&m, RPC_RPC_MISMATCH);
	tmsg_u32(&m, 2);
	tmsg_u32(&m, 2);
	assert_int_equal(rpc_reply_decode(m.b, m.n, &h), RPC_REPLY_OK);
	assert_int_equal(h.reply_stat, RPC_MSG_DENIED);
	assert_int_equal(h.reject_stat, RPC_RPC_MISMATCH);
	assert_int_equal(h.low, 2);
	assert_int_equal(h.high, 2);

	m.n = 12;
	tmsg_u32(&m, RPC_AUTH_ERROR);
	tmsg_u32(&m, RPC_AUTH_TOOWEAK);
	assert_int_equal(rpc_reply_decode(m.b, m.n, &h), RPC_REPLY_OK);
	assert_int_equal(h.reject_stat, RPC_AUTH_ERROR);
	assert_int_equal(h.auth_stat, RPC_AUTH_TOOWEAK);

	m.n = 12;
	tmsg_u32(&m, 2); /* no such reject_stat */
	tmsg_u32(&m, 0);
	assert_int_equal(rpc_reply_decode(m.b, m.n, &h), RPC_REPLY_BAD);
	m.n = 8;
	tmsg_u32(&m, 2); /* no such reply_stat */
	assert_int_equal(rpc_reply_decode(m.b, m.n, &h), RPC_REPLY_BAD);
}

/* Every proper prefix of every well-formed reply header is SHORT, never read past. */
static void test_decode_truncated(void **state)
{
	(void)state;
	struct tmsg forms[5];
	size_t n = 0;

	reply_accepted(&forms[n++], 1, 6, RPC_SUCCESS);
	reply_accepted(&forms[n], 1, 0, RPC_PROG_MISMATCH);
	tmsg_u32(&forms[n], 1);
	tmsg_u32(&forms[n++], 3);
	reply_accepted(&forms[n++], 1, 0, RPC_SYSTEM_ERR);
	forms[n].n = 0;
	tmsg_u32(&forms[n], 1);
	tmsg_u32(&forms[n], RPC_MSG_REPLY);
	tmsg_u32(&forms[n], RPC_MSG_DENIED);
	tmsg_u32(&forms[n], RPC_RPC_MISMATCH);
	tmsg_u32(&forms[n], 2);
	tmsg_u32(&forms[n++], 2);
	forms[n] = forms[n - 1];
	forms[n].n = 12;
	tmsg_u32(&forms[n], RPC_AUTH_ERROR);
	tmsg_u32(&forms[n++], RPC_AUTH_BADCRED);

	for (size_t f = 0; f < n; f++) {
		struct rpc_reply_hdr h;
		assert_int_equal(rpc_reply_decode(forms[f].b, forms[f].n, &h), RPC_REPLY_OK);
		for (size_t len = 0; len < forms[f].n; len++) {
			/* A copy of exactly len bytes: ASan catches any read past it. */
			uint8_t *cut = test_malloc(len ? len : 1);
			memcpy(cut, forms[f].b, len);
			assert_int_equal(rpc_reply_decode(cut, len, &h), RPC_REPLY_SHORT);
			test_free(cut);
		}
	}
	struct rpc_reply_hdr h;
	struct tmsg call;
	tmsg_call(&call, 5, 100003, 3, 0, NULL, 0);
	assert_int_equal(rpc_reply_decode(call.b, call.n, &h), RPC_REPLY_NOT_REPLY);
}

static void test_call_header(void **state)
{
	(void)state;
	uint8_t buf[256];
	struct rpc_clnt_call cc;
	struct rpc_cred cred = {.flavor = RPC_AUTH_SYS, .uid = 10, .gid = 20, .ngroups = 2,
				.groups = {100, 101}};

	rpc_clnt_call_init(&cc, buf, sizeof(buf), 100021, 4, 5, NULL);
	xdr_enc_u32(&cc.args, 99);
	struct tmsg want;
	tmsg_call(&want, 0, 100021, 4, 5, NULL, 0);
	tmsg_u32(&want, 99);
	assert_int_equal(xdr_enc_len(&cc.args), want.n);
	assert_memory_equal(buf, want.b, want.n);

	rpc_clnt_call_init(&cc, buf, sizeof(buf), 100021, 4, 5, &cred);
	uint8_t body[128];
	size_t blen = tmsg_authsys(body, "", 10, 20, 2);
	memset(body, 0, 4); /* our stamp is 0 */
	tmsg_call(&want, 0, 100021, 4, 5, body, (uint32_t)blen);
	assert_int_equal(xdr_enc_len(&cc.args), want.n);
	assert_memory_equal(buf, want.b, want.n);

	rpc_clnt_call_init(&cc, buf, 30, 1, 1, 1, NULL); /* too small for the header */
	assert_true(cc.args.overflow);
}

static void test_backoff(void **state)
{
	(void)state;
	struct rpc_clnt_params p = {.timeout_ms = 100, .max_timeout_ms = 500, .retries = 3};
	assert_int_equal(rpc_clnt_backoff(&p, 1), 100);
	assert_int_equal(rpc_clnt_backoff(&p, 2), 200);
	assert_int_equal(rpc_clnt_backoff(&p, 3), 400);
	assert_int_equal(rpc_clnt_backoff(&p, 4), 500);
	assert_int_equal(rpc_clnt_backoff(&p, 40), 500);
	p.max_timeout_ms = 0; /* no cap given: constant */
	assert_int_equal(rpc_clnt_backoff(&p, 5), 100);
}

/* ---- the engine, with a fake transport and a hand-driven clock ---- */

struct sent {
	uint8_t b[512];
	size_t n;
};
static struct sent sent_log[32];
static unsigned n_sent;
static bool link_down;

static int fake_send(struct rpc_clnt *cl, const uint8_t *msg, size_t len)
{
	(void)cl;
	if (link_down)
		return -1;
	assert_true(n_sent < 32 && len <= sizeof(sent_log[0].b));
	memcpy(sent_log[n_sent].b, msg, len);
	sent_log[n_sent++].n = len;
	return 0;
}

struct ucall {
	struct rpc_clnt_call cc;
	uint8_t buf[256];
	int calls;
	enum rpc_clnt_status st;
	uint32_t result;
	unsigned tries;
};

static void ucall_done(struct rpc_clnt_call *cc, enum rpc_clnt_status st)
{
	struct ucall *u = container_of(cc, struct ucall, cc);
	u->calls++;
	u->st = st;
	u->tries = cc->tries;
	if (st == RPC_CLNT_OK)
		assert_true(xdr_dec_u32(&cc->res, &u->result));
}

static void ucall_start(struct rpc_clnt *cl, struct ucall *u, uint32_t arg)
{
	memset(u, 0, sizeof(*u));
	rpc_clnt_call_init(&u->cc, u->buf, sizeof(u->buf), 0x20000098, 1, 1, NULL);
	xdr_enc_u32(&u->cc.args, arg);
	u->cc.done = ucall_done;
	assert_int_equal(rpc_clnt_start(cl, &u->cc), 0);
}

static size_t reply_to(struct tmsg *m, const struct sent *s, uint32_t result)
{
	reply_accepted(m, tget_u32(s->b, 0), 0, RPC_SUCCESS);
	tmsg_u32(m, result);
	return m->n;
}

static const struct rpc_clnt_params params = {.timeout_ms = 100, .max_timeout_ms = 400, .retries = 2};

/* A client without a loop (the test drives its clock), the fake link up or down. */
static void clnt_setup(struct rpc_clnt *cl, bool down)
{
	n_sent = 0;
	link_down = down;
	assert_int_equal(rpc_clnt_init(cl, NULL, &params, fake_send, "peer"), 0);
}

static void test_match_by_xid(void **state)
{
	(void)state;
	struct rpc_clnt cl;
	struct ucall a, b;
	struct tmsg m;

	clnt_setup(&cl, false);
	ucall_start(&cl, &a, 1);
	ucall_start(&cl, &b, 2);
	assert_int_equal(n_sent, 2);
	uint32_t xa = tget_u32(sent_log[0].b, 0), xb = tget_u32(sent_log[1].b, 0);
	assert_int_not_equal(xa, xb);
	assert_int_equal(cl.n_pending, 2);

	/* Answer in the other order. */
	reply_to(&m, &sent_log[1], 22);
	assert_true(rpc_clnt_reply(&cl, m.b, m.n));
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.st, RPC_CLNT_OK);
	assert_int_equal(b.result, 22);
	assert_int_equal(a.calls, 0);
	/* A duplicate of the same reply matches nothing now. */
	assert_false(rpc_clnt_reply(&cl, m.b, m.n));
	assert_int_equal(b.calls, 1);
	/* A reply with a foreign XID, a call, a runt: ignored. */
	m.n = 0;
	reply_accepted(&m, xa ^ 0x5a5a, 0, RPC_SUCCESS);
	assert_false(rpc_clnt_reply(&cl, m.b, m.n));
	assert_false(rpc_clnt_reply(&cl, sent_log[0].b, sent_log[0].n));
	assert_false(rpc_clnt_reply(&cl, m.b, 7));
	assert_int_equal(cl.replies_unmatched, 4);
	assert_int_equal(a.calls, 0);

	/* Denied and accepted-error replies complete the call with their status. */
	m.n = 0;
	tmsg_u32(&m, xa);
	tmsg_u32(&m, RPC_MSG_REPLY);
	tmsg_u32(&m, RPC_MSG_DENIED);
	tmsg_u32(&m, RPC_AUTH_ERROR);
	tmsg_u32(&m, RPC_AUTH_BADCRED);
	assert_true(rpc_clnt_reply(&cl, m.b, m.n));
	assert_int_equal(a.st, RPC_CLNT_DENIED);
	assert_int_equal(a.cc.reply.auth_stat, RPC_AUTH_BADCRED);

	ucall_start(&cl, &a, 3);
	reply_accepted(&m, tget_u32(sent_log[2].b, 0), 0, RPC_PROC_UNAVAIL);
	assert_true(rpc_clnt_reply(&cl, m.b, m.n));
	assert_int_equal(a.st, RPC_CLNT_ACCEPT_ERR);
	assert_int_equal(a.cc.reply.accept_stat, RPC_PROC_UNAVAIL);

	/* A reply with our XID but a broken header: BAD_REPLY. */
	ucall_start(&cl, &a, 4);
	reply_accepted(&m, tget_u32(sent_log[3].b, 0), 0, 77);
	assert_true(rpc_clnt_reply(&cl, m.b, m.n));
	assert_int_equal(a.st, RPC_CLNT_BAD_REPLY);
	assert_int_equal(cl.n_pending, 0);
	rpc_clnt_destroy(&cl);
}

static void test_timeout_retransmit(void **state)
{
	(void)state;
	struct rpc_clnt cl;
	struct ucall a, b;
	struct tmsg m;

	clnt_setup(&cl, false);
	uint64_t t0 = rpc_clnt_now_ms();
	ucall_start(&cl, &a, 1);
	rpc_clnt_tick(&cl, t0 + 50);
	assert_int_equal(n_sent, 1); /* not due yet */
	rpc_clnt_tick(&cl, t0 + 1000);
	assert_int_equal(n_sent, 2); /* retransmitted, same bytes, same XID */
	assert_int_equal(sent_log[1].n, sent_log[0].n);
	assert_memory_equal(sent_log[1].b, sent_log[0].b, sent_log[0].n);
	/* The second wait is twice the first: not due at +150 after the resend. */
	rpc_clnt_tick(&cl, t0 + 1150);
	assert_int_equal(n_sent, 2);
	reply_to(&m, &sent_log[1], 5);
	assert_true(rpc_clnt_reply(&cl, m.b, m.n));
	assert_int_equal(a.st, RPC_CLNT_OK);
	assert_int_equal(a.tries, 2);

	/* No reply at all: 1 + retries sends, then TIMEOUT, once. */
	t0 = rpc_clnt_now_ms();
	ucall_start(&cl, &b, 2);
	for (uint64_t t = t0; t < t0 + 5000; t += 50)
		rpc_clnt_tick(&cl, t);
	assert_int_equal(n_sent, 2 + 1 + params.retries);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.st, RPC_CLNT_TIMEOUT);
	/* Its late reply is ignored. */
	reply_to(&m, &sent_log[2], 5);
	assert_false(rpc_clnt_reply(&cl, m.b, m.n));
	assert_int_equal(b.calls, 1);
	rpc_clnt_destroy(&cl);
}

static void test_link_down_resend_fail(void **state)
{
	(void)state;
	struct rpc_clnt cl;
	struct ucall a, b, c;
	struct tmsg m;

	clnt_setup(&cl, true);
	ucall_start(&cl, &a, 1);
	ucall_start(&cl, &b, 2);
	assert_int_equal(n_sent, 0);
	link_down = false;
	rpc_clnt_resend(&cl); /* the connection is back */
	assert_int_equal(n_sent, 2);
	/* Resent in table order: answer a's, whichever went first. */
	reply_to(&m, &sent_log[tget_u32(sent_log[0].b, 0) == a.cc.xid ? 0 : 1], 9);
	assert_true(rpc_clnt_reply(&cl, m.b, m.n));
	assert_int_equal(a.st, RPC_CLNT_OK);
	assert_int_equal(a.result, 9);

	ucall_start(&cl, &c, 3);
	rpc_clnt_cancel(&cl, &c.cc);
	rpc_clnt_fail_all(&cl, RPC_CLNT_CLOSED);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.st, RPC_CLNT_CLOSED);
	assert_int_equal(c.calls, 0); /* cancelled: never completed */
	assert_int_equal(cl.n_pending, 0);

	/* An overflowed message is refused at start. */
	memset(&c, 0, sizeof(c));
	rpc_clnt_call_init(&c.cc, c.buf, 44, 1, 1, 1, NULL);
	xdr_enc_u32(&c.cc.args, 1);
	xdr_enc_u32(&c.cc.args, 2);
	c.cc.done = ucall_done;
	assert_int_equal(rpc_clnt_start(&cl, &c.cc), -1);
	rpc_clnt_destroy(&cl);
}

/* The seal hook sees the XID in place, before the first send; a refusing one fails the start. */
static uint32_t sealed_xid;
static unsigned seals;
static int seal_ok(struct rpc_clnt_call *cc)
{
	sealed_xid = tget_u32(cc->args.base, 0);
	if (seals++ == 0)
		xdr_enc_u32(&cc->args, 0x5ea1ed); /* what a verifier or a wrap would add */
	else
		xdr_enc_patch_u32(&cc->args, xdr_enc_len(&cc->args) - 4, 0x5ea1ed + seals); /* sealed afresh */
	return 0;
}
static int seal_refuse(struct rpc_clnt_call *cc)
{
	(void)cc;
	return -1;
}

static void test_seal_hook(void **state)
{
	(void)state;
	struct rpc_clnt cl;
	struct ucall u;

	clnt_setup(&cl, false);
	seals = 0;
	memset(&u, 0, sizeof(u));
	rpc_clnt_call_init(&u.cc, u.buf, sizeof(u.buf), 0x40000000, 1, 0, NULL);
	assert_null(u.cc.seal);
	u.cc.seal = seal_ok;
	u.cc.done = ucall_done;
	assert_int_equal(rpc_clnt_start(&cl, &u.cc), 0);
	assert_int_equal(n_sent, 1);
	assert_int_equal(sealed_xid, u.cc.xid);
	assert_int_equal(tget_u32(sent_log[0].b, sent_log[0].n - 4), 0x5ea1ed); /* sent sealed */
	/* RFC 2203 §5.3.3.1: each retransmission (the schedule's, a resend) is sealed afresh. */
	rpc_clnt_tick(&cl, rpc_clnt_now_ms() + 1000);
	assert_int_equal(n_sent, 2);
	assert_int_equal(seals, 2);
	assert_int_equal(tget_u32(sent_log[1].b, sent_log[1].n - 4), 0x5ea1ed + 2);
	rpc_clnt_resend(&cl);
	assert_int_equal(n_sent, 3);
	assert_int_equal(tget_u32(sent_log[2].b, sent_log[2].n - 4), 0x5ea1ed + 3);
	u.cc.seal = seal_refuse; /* one that cannot be sealed again is not sent */
	rpc_clnt_resend(&cl);
	assert_int_equal(n_sent, 3);
	rpc_clnt_fail_all(&cl, RPC_CLNT_CLOSED);

	rpc_clnt_call_init(&u.cc, u.buf, sizeof(u.buf), 0x40000000, 1, 0, NULL);
	u.cc.seal = seal_refuse;
	assert_int_equal(rpc_clnt_start(&cl, &u.cc), -1);
	assert_int_equal(n_sent, 3); /* nothing sent, nothing pending */
	assert_int_equal(cl.n_pending, 0);
	rpc_clnt_destroy(&cl);
}

/* Many calls at once: all XIDs distinct, every reply finds its own call. */
static void test_many_pending(void **state)
{
	(void)state;
	static struct ucall u[300];
	struct rpc_clnt cl;
	struct tmsg m;

	clnt_setup(&cl, false);
	cl.next_xid = 0xfffffff0u; /* wraps, and skips 0 */
	for (unsigned i = 0; i < 300; i++) {
		n_sent = 0;
		ucall_start(&cl, &u[i], i);
		assert_int_not_equal(u[i].cc.xid, 0);
	}
	assert_int_equal(cl.n_pending, 300);
	for (unsigned i = 300; i-- > 0;) {
		m.n = 0;
		reply_accepted(&m, u[i].cc.xid, 0, RPC_SUCCESS);
		tmsg_u32(&m, i * 7);
		assert_true(rpc_clnt_reply(&cl, m.b, m.n));
		assert_int_equal(u[i].result, i * 7);
	}
	assert_int_equal(cl.n_pending, 0);
	rpc_clnt_destroy(&cl);
}

/* ---- rpc_call_receive(): a REPLY on a connection with a client goes to it ---- */

static int replies_sent, replies_dropped;

static void route_send_reply(struct rpc_call *c)
{
	replies_sent++;
	replies_dropped += c->drop;
}

static void route_release(struct rpc_conn *conn);
static const struct xprt_ops route_ops = {.name = "test", .send_reply = route_send_reply,
					  .conn_release = route_release};
static struct xprt route_xprt = {.ops = &route_ops};

static void route_receive(struct rpc_conn *conn, const struct tmsg *m)
{
	static struct rpc_call c;
	static uint8_t reply[256];

	c.conn = conn;
	c.msg = m->b;
	c.msg_len = m->n;
	c.n_ddp_in = 0;
	c.reply_buf = reply;
	c.reply_cap = sizeof(reply);
	c.payload_area = NULL;
	c.payload_cap = 0;
	rpc_call_receive(&c);
}

static void test_reply_routing(void **state)
{
	(void)state;
	struct rpc_conn conn;
	struct rpc_clnt cl;
	struct ucall a;
	struct tmsg m;
	struct rpc_stats_global g0, g1;

	rpc_conn_init(&conn, &route_xprt);
	snprintf(conn.peer_name, sizeof(conn.peer_name), "route:1");
	clnt_setup(&cl, false);
	ucall_start(&cl, &a, 1);
	rpc_stats_global_get(&g0);

	/* No client on the connection: a reply is a bad header, dropped. */
	reply_to(&m, &sent_log[0], 77);
	route_receive(&conn, &m);
	assert_int_equal(replies_dropped, 1);
	assert_int_equal(a.calls, 0);
	rpc_stats_global_get(&g1);
	assert_int_equal(g1.bad_header - g0.bad_header, 1);

	/* With one: matched to the pending call, still nothing sent back. */
	conn.clnt = &cl;
	route_receive(&conn, &m);
	assert_int_equal(replies_sent, 2);
	assert_int_equal(replies_dropped, 2);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.result, 77);
	rpc_stats_global_get(&g0);
	assert_int_equal(g0.bad_header, g1.bad_header);
	/* A late copy: ignored by the client, not a bad header either. */
	route_receive(&conn, &m);
	assert_int_equal(a.calls, 1);
	assert_int_equal(cl.replies_unmatched, 1);
	rpc_stats_global_get(&g1);
	assert_int_equal(g0.bad_header, g1.bad_header);
	rpc_clnt_destroy(&cl);
	rpc_conn_put(&conn);
}

static void route_release(struct rpc_conn *conn)
{
	(void)conn;
}

/* RFC 8167 §4 credits as a window: calls beyond it wait unsent, then go in order. */
static void test_window(void **state)
{
	(void)state;
	struct rpc_clnt cl;
	struct ucall u[4];
	struct tmsg m;

	clnt_setup(&cl, false);
	rpc_clnt_set_window(&cl, 1);
	for (unsigned i = 0; i < 4; i++)
		ucall_start(&cl, &u[i], i);
	assert_int_equal(n_sent, 1);
	assert_int_equal(tget_u32(sent_log[0].b, 0), u[0].cc.xid);
	/* Waiting calls neither time out nor go out on a tick. */
	rpc_clnt_tick(&cl, rpc_clnt_now_ms() + 50);
	assert_int_equal(n_sent, 1);
	reply_to(&m, &sent_log[0], 1);
	assert_true(rpc_clnt_reply(&cl, m.b, m.n));
	assert_int_equal(n_sent, 2); /* the answer freed the window: u[1] went */
	assert_int_equal(tget_u32(sent_log[1].b, 0), u[1].cc.xid);
	rpc_clnt_cancel(&cl, &u[2].cc); /* a waiting call cancelled: never sent */
	rpc_clnt_set_window(&cl, 4);    /* a bigger grant: u[3] goes at once */
	assert_int_equal(n_sent, 3);
	assert_int_equal(tget_u32(sent_log[2].b, 0), u[3].cc.xid);
	assert_int_equal(cl.in_flight, 2);
	rpc_clnt_destroy(&cl);
	assert_int_equal(u[1].st, RPC_CLNT_CLOSED);
	assert_int_equal(u[3].st, RPC_CLNT_CLOSED);
	assert_int_equal(u[2].calls, 0);
}

/* A client attached to a connection: sends through send_call, fails on close. */
static int conn_sends;
static int route_send_call(struct rpc_conn *conn, const uint8_t *msg, size_t len)
{
	(void)conn;
	(void)msg;
	(void)len;
	conn_sends++;
	return 0;
}

static void test_attach(void **state)
{
	(void)state;
	static const struct xprt_ops ops = {.name = "test", .send_reply = route_send_reply,
					    .send_call = route_send_call, .conn_release = route_release};
	struct xprt x = {.ops = &ops};
	struct rpc_conn conn, plain;
	struct rpc_clnt cl, other;
	struct ucall a;

	rpc_conn_init(&plain, &route_xprt);
	clnt_setup(&cl, false);
	assert_int_equal(rpc_clnt_attach(&cl, &plain), -1); /* no send_call */
	rpc_conn_init(&conn, &x);
	assert_int_equal(rpc_clnt_attach(&cl, &conn), 0);
	assert_ptr_equal(conn.clnt, &cl);
	clnt_setup(&other, false);
	assert_int_equal(rpc_clnt_attach(&other, &conn), -1); /* one client per connection */
	ucall_start(&cl, &a, 1);
	assert_int_equal(conn_sends, 1);
	assert_int_equal(n_sent, 0);
	rpc_conn_closed(&conn);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.st, RPC_CLNT_CLOSED);
	assert_null(conn.clnt);
	rpc_clnt_detach(&cl);
	rpc_clnt_destroy(&cl);
	rpc_clnt_destroy(&other);
	rpc_conn_put(&conn);
	rpc_conn_put(&plain);
}

int main(void)
{
	log_init(true, 0);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_accepted),
		cmocka_unit_test(test_decode_denied),
		cmocka_unit_test(test_decode_truncated),
		cmocka_unit_test(test_call_header),
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_match_by_xid),
		cmocka_unit_test(test_timeout_retransmit),
		cmocka_unit_test(test_link_down_resend_fail),
		cmocka_unit_test(test_seal_hook),
		cmocka_unit_test(test_many_pending),
		cmocka_unit_test(test_reply_routing),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_attach),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
