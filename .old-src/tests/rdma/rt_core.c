/*
 * rt_core.c - verdict printing, connection opening, the RPC exchange with
 * chunks and the "send something bad, then a NULL" probe that the test
 * requester's scenarios are built from. See rt.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tests/rdma/rt.h"

/* "@@ TAG name" then, if fmt, open + the formatted text + close. */
static void vline(const char *tag, const char *name, const char *open, const char *close,
		  const char *fmt, va_list ap)
{
	printf("@@ %s %s", tag, name);
	if (fmt) {
		fputs(open, stdout);
		vprintf(fmt, ap);
		fputs(close, stdout);
	}
	putchar('\n');
	fflush(stdout);
}

bool rt_in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while (list && (p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
			return true;
		p += n;
	}
	return false;
}

void rt_pass(struct rt_ctx *t, const char *name, const char *note, ...)
{
	bool x = rt_in_list(t->xfail, name);
	va_list ap;

	if (x)
		t->nfail++;
	else
		t->npass++;
	va_start(ap, note);
	vline(x ? "XPASS" : "PASS", name, " [saw: ", "]", note, ap);
	va_end(ap);
}

void rt_fail(struct rt_ctx *t, const char *name, const char *fmt, ...)
{
	bool x = rt_in_list(t->xfail, name);
	va_list ap;

	if (x)
		t->nxfail++;
	else
		t->nfail++;
	va_start(ap, fmt);
	vline(x ? "XFAIL" : "FAIL", name, ": ", "", fmt, ap);
	va_end(ap);
}

void rt_skip(struct rt_ctx *t, const char *name, const char *fmt, ...)
{
	va_list ap;

	t->nskip++;
	va_start(ap, fmt);
	vline("SKIP", name, ": ", "", fmt, ap);
	va_end(ap);
}

void rt_info(struct rt_ctx *t, const char *name, const char *fmt, ...)
{
	va_list ap;

	(void)t;
	va_start(ap, fmt);
	vline("INFO", name, ": ", "", fmt, ap);
	va_end(ap);
}

int rt_open(struct rt_ctx *t, struct rt_conn *c, const struct rt_conn_opts *o, const char *name)
{
	struct rt_conn_opts def;
	uint8_t priv[8];
	char why[200];

	if (!o) {
		rt_conn_opts_default(&def, priv);
		o = &def;
	}
	switch (rt_conn_open(c, (const struct sockaddr *)&t->dst, o, why, sizeof(why))) {
	case RT_OPEN_OK:
		return 0;
	case RT_OPEN_REJECTED:
		rt_fail(t, name, "expected an accepted connection got %s", why);
		return -1;
	default:
		rt_fail(t, name, "expected a connection got %s", why);
		return -1;
	}
}

void rt_hdr_call(struct rt_hdr *h, uint32_t xid, uint32_t proc)
{
	memset(h, 0, sizeof(*h));
	h->xid = xid;
	h->vers = 1;
	h->credits = RT_REQ_CREDITS;
	h->proc = proc;
}

size_t rt_build(const struct rt_hdr *h, const void *payload, size_t plen, uint8_t *buf, size_t cap)
{
	struct rt_enc e;

	uint8_t *p;

	rt_enc_init(&e, buf, cap);
	rt_hdr_encode(h, &e);
	if (plen) {
		p = rt_enc_reserve(&e, plen);
		if (p)
			memcpy(p, payload, plen);
	}
	return e.overflow ? 0 : e.len;
}

size_t rt_null_call(uint8_t *buf, size_t cap, uint32_t xid)
{
	struct rt_enc e;

	rt_enc_init(&e, buf, cap);
	rt_rpc_call_hdr(&e, xid, RT_NFS_PROG, 3, RT_NFS3_NULL, RT_AUTH_NONE);
	return e.len;
}

size_t rt_null_msg(struct rt_ctx *t, uint32_t vers, uint8_t *msg, size_t cap, uint32_t *xid)
{
	uint8_t rpc[128];
	struct rt_hdr h;

	*xid = rt_xid(t);
	rt_hdr_call(&h, *xid, RT_RDMA_MSG);
	h.vers = vers;
	h.direction = RT_DIR_CALL;
	return rt_build(&h, rpc, rt_null_call(rpc, sizeof(rpc), *xid), msg, cap);
}

int rt_null_check(struct rt_ctx *t, struct rt_conn *c, uint32_t vers, uint32_t *credits,
		  char *why, size_t n)
{
	struct rt_rpc_reply rr;
	const char *bad = NULL;
	struct rt_hdr h;
	struct rt_msg *m;
	uint8_t msg[256];
	uint32_t xid;
	char st[96];
	int ret = -1;

	if (rt_send(c, msg, rt_null_msg(t, vers, msg, sizeof(msg), &xid))) {
		snprintf(why, n, "NULL call not sent (%s)", rt_conn_state(c, st, sizeof(st)));
		return -1;
	}
	m = rt_wait_xid(c, xid, t->timeout_ms);
	if (!m) {
		snprintf(why, n, "no answer to a NULL call within %d ms (%s)", t->timeout_ms,
			 rt_conn_state(c, st, sizeof(st)));
		return -1;
	}
	if (rt_hdr_decode(m->data, m->len, &h, &bad))
		snprintf(why, n, "NULL reply header malformed: %s", bad);
	else if (h.proc != RT_RDMA_MSG)
		snprintf(why, n, "NULL answered with %s (err %u)", rt_proc_name(h.proc), h.err);
	else if (h.vers != vers)
		snprintf(why, n, "NULL reply has rdma_vers %u, the call had %u", h.vers, vers);
	else if (vers == 2 && h.direction != RT_DIR_REPLY)
		snprintf(why, n, "v2 NULL reply has rdma_direction %u", h.direction);
	else if (h.credits < 1)
		snprintf(why, n, "NULL reply grants %u credits", h.credits);
	else if (h.nreads || h.nwrites || h.has_reply)
		snprintf(why, n, "NULL reply carries chunk lists");
	else if (rt_rpc_reply_decode(m->data + h.hdr_len, m->len - h.hdr_len, &rr, &bad))
		snprintf(why, n, "NULL reply RPC part malformed: %s", bad);
	else if (rr.xid != xid)
		snprintf(why, n, "NULL reply RPC XID %#x, call XID %#x", rr.xid, xid);
	else if (!rr.accepted || rr.stat != RT_RPC_SUCCESS)
		snprintf(why, n, "NULL reply %s %s", rr.accepted ? "accepted" : "denied",
			 rt_accept_stat_name(rr.stat));
	else
		ret = 0;
	if (!ret && credits)
		*credits = h.credits;
	rt_msg_free(m);
	return ret;
}

/* Our chunk against the server's echo of it (RFC 8166 §3.4.6: lengths may only shrink). */
static int check_echo(const struct rt_chunk *ours, const struct rt_chunk *theirs, const char *what,
		      char *why, size_t n)
{
	uint32_t i;

	if (theirs->nsegs > ours->nsegs) {
		snprintf(why, n, "%s echoed with %u segments, we gave %u", what, theirs->nsegs,
			 ours->nsegs);
		return -1;
	}
	for (i = 0; i < theirs->nsegs; i++) {
		if (theirs->segs[i].handle != ours->segs[i].handle ||
		    theirs->segs[i].offset != ours->segs[i].offset ||
		    theirs->segs[i].length > ours->segs[i].length) {
			snprintf(why, n, "%s segment %u echoed as %#x/%u@%#llx, we gave %#x/%u@%#llx",
				 what, i, theirs->segs[i].handle, theirs->segs[i].length,
				 (unsigned long long)theirs->segs[i].offset, ours->segs[i].handle,
				 ours->segs[i].length, (unsigned long long)ours->segs[i].offset);
			return -1;
		}
	}
	return 0;
}

/* Check the answer's transport header and find its RPC reply. */
static int xchg_check(struct rt_xchg *x, uint32_t xid, char *why, size_t n)
{
	const char *bad = NULL;
	struct rt_msg *m = x->msg;
	uint32_t i;

	if (rt_hdr_decode(m->data, m->len, &x->h, &bad)) {
		snprintf(why, n, "answer header malformed: %s", bad);
		return -1;
	}
	if (x->h.proc == RT_RDMA_ERROR)
		return 1;
	if (x->h.vers != 1) {
		snprintf(why, n, "answer has rdma_vers %u (RFC 8166 §4.2: same version as the call)",
			 x->h.vers);
		return -1;
	}
	if (x->h.credits < 1) {
		snprintf(why, n, "answer grants 0 credits");
		return -1;
	}
	if (x->h.nreads) {
		snprintf(why, n, "answer carries a Read list (RFC 8166: only calls carry Read chunks)");
		return -1;
	}
	if (x->h.nwrites > x->nwrites) {
		snprintf(why, n, "answer has %u Write chunks, we offered %u", x->h.nwrites, x->nwrites);
		return -1;
	}
	for (i = 0; i < x->h.nwrites; i++)
		if (check_echo(&x->writes[i], &x->h.writes[i], "Write chunk", why, n))
			return -1;
	if (x->h.has_reply && (!x->has_reply ||
			       check_echo(&x->reply, &x->h.reply, "Reply chunk", why, n))) {
		if (!x->has_reply)
			snprintf(why, n, "answer has a Reply chunk we never offered");
		return -1;
	}
	if (x->h.proc == RT_RDMA_NOMSG) {
		/* RFC 8166 §3.5.3: the whole reply went into our Reply chunk. */
		if (!x->h.has_reply || !x->reply_buf || m->len != x->h.hdr_len) {
			snprintf(why, n, "RDMA_NOMSG answer without a used Reply chunk");
			return -1;
		}
		x->body = x->reply_buf;
		x->body_len = (size_t)rt_chunk_bytes(&x->h.reply);
	} else {
		x->body = m->data + x->h.hdr_len;
		x->body_len = m->len - x->h.hdr_len;
	}
	if (rt_rpc_reply_decode(x->body, x->body_len, &x->rr, &bad)) {
		snprintf(why, n, "RPC reply malformed: %s", bad);
		return -1;
	}
	if (x->rr.xid != xid) {
		snprintf(why, n, "RPC reply XID %#x, call XID %#x", x->rr.xid, xid);
		return -1;
	}
	return 0;
}

int rt_xchg_run(struct rt_ctx *t, struct rt_conn *c, struct rt_xchg *x, char *why, size_t n)
{
	static uint8_t msg[RT_SEND_SIZE];
	uint32_t xid = rt_get32(x->rpc);
	struct rt_hdr h;
	char st[96];
	size_t len;

	rt_hdr_call(&h, xid, x->proc);
	h.nreads = x->nreads;
	memcpy(h.reads, x->reads, sizeof(x->reads));
	h.nwrites = x->nwrites;
	memcpy(h.writes, x->writes, sizeof(x->writes));
	h.has_reply = x->has_reply;
	h.reply = x->reply;
	len = rt_build(&h, x->proc == RT_RDMA_MSG ? x->rpc : NULL,
		       x->proc == RT_RDMA_MSG ? x->rpc_len : 0, msg, sizeof(msg));
	x->msg = NULL;
	if (!len || rt_send(c, msg, len)) {
		snprintf(why, n, "call not sent (%s)", rt_conn_state(c, st, sizeof(st)));
		return -1;
	}
	x->msg = rt_wait_xid(c, xid, t->timeout_ms);
	if (!x->msg) {
		snprintf(why, n, "no answer within %d ms (%s)", t->timeout_ms,
			 rt_conn_state(c, st, sizeof(st)));
		return -1;
	}
	return xchg_check(x, xid, why, n);
}

void rt_xchg_release(struct rt_xchg *x)
{
	rt_msg_free(x->msg);
	x->msg = NULL;
}

int rt_xchg_long_call(struct rt_conn *c, struct rt_xchg *x, const uint8_t *rpc, size_t len)
{
	uint8_t *buf = rt_data_alloc(c, len);

	if (!buf)
		return -1;
	memcpy(buf, rpc, len);
	x->proc = RT_RDMA_NOMSG;
	x->rpc = rpc;
	x->rpc_len = len;
	x->reads[x->nreads].position = 0;
	x->reads[x->nreads].seg = rt_seg_of(c, buf, (uint32_t)len);
	x->nreads++;
	return 0;
}

/* Classify one answer to a probe message. */
static void classify(struct rt_msg *m, uint32_t xid, bool xid_known, struct rt_probe *p)
{
	const char *bad = NULL;
	struct rt_rpc_reply rr;

	p->xid_ok = !xid_known || (m->len >= 4 && rt_get32(m->data) == xid);
	if (rt_hdr_decode(m->data, m->len, &p->h, &bad)) {
		p->out = RT_OUT_MALFORMED;
		snprintf(p->detail, sizeof(p->detail), "an answer of %u bytes that does not decode (%s)",
			 m->len, bad);
		return;
	}
	if (p->h.proc == RT_RDMA_ERROR) {
		p->out = p->h.err == RT_ERR_CHUNK ? RT_OUT_ERR_CHUNK :
			 p->h.err == RT_ERR_VERS ? RT_OUT_ERR_VERS : RT_OUT_ERR_OTHER;
		if (p->h.err == RT_ERR_VERS)
			snprintf(p->detail, sizeof(p->detail), "RDMA_ERROR/ERR_VERS %u..%u (rdma_vers %u)",
				 p->h.vers_low, p->h.vers_high, p->h.vers);
		else
			snprintf(p->detail, sizeof(p->detail), "%s (rdma_vers %u)",
				 rt_err_name(p->h.vers, p->h.err), p->h.vers);
		return;
	}
	if (p->h.proc == RT_RDMA_MSG &&
	    !rt_rpc_reply_decode(m->data + p->h.hdr_len, m->len - p->h.hdr_len, &rr, &bad)) {
		p->rpc_stat = rr.stat;
		p->out = rr.accepted && rr.stat == RT_RPC_GARBAGE_ARGS ? RT_OUT_GARBAGE : RT_OUT_RPC;
		snprintf(p->detail, sizeof(p->detail), "an RPC reply (%s %s)",
			 rr.accepted ? "accepted" : "denied", rt_accept_stat_name(rr.stat));
		return;
	}
	p->out = RT_OUT_MALFORMED;
	snprintf(p->detail, sizeof(p->detail), "%s without a decodable RPC reply",
		 rt_proc_name(p->h.proc));
}

/* One message during a probe: the NULL's answer, or an answer to the probe. */
static void probe_take(struct rt_msg *m, uint32_t nxid, uint32_t xid, bool xid_known,
		       struct rt_probe *p)
{
	if (m->len >= 4 && rt_get32(m->data) == nxid)
		p->alive = true;
	else if (p->out == RT_OUT_NONE)
		classify(m, xid, xid_known, p);
	else
		/* A second answer to one message: note it, judge the first. */
		strncat(p->detail, "; then another unexpected message",
			sizeof(p->detail) - strlen(p->detail) - 1);
	rt_msg_free(m);
}

/* Post an NFSv3 NULL as RDMA_MSG; returns its XID (the send may fail: then no answer comes). */
static uint32_t send_null(struct rt_ctx *t, struct rt_conn *c)
{
	uint8_t msg[256];
	uint32_t xid;

	rt_send(c, msg, rt_null_msg(t, 1, msg, sizeof(msg), &xid));
	return xid;
}

void rt_probe_send(struct rt_ctx *t, struct rt_conn *c, const void *msg, size_t len,
		   uint32_t xid, bool xid_known, struct rt_probe *p)
{
	struct rt_msg *m;
	uint32_t nxid;
	char st[96];

	memset(p, 0, sizeof(*p));
	p->out = RT_OUT_NONE;
	p->xid_ok = true;
	snprintf(p->detail, sizeof(p->detail), "no answer (dropped)");
	if (rt_send(c, msg, len)) {
		p->out = RT_OUT_LOST;
		snprintf(p->detail, sizeof(p->detail), "could not send (%s)",
			 rt_conn_state(c, st, sizeof(st)));
		return;
	}
	/* A NULL right behind it: its answer tells us the connection still works. */
	nxid = send_null(t, c);
	while (!p->alive && (m = rt_wait_any(c, t->timeout_ms)))
		probe_take(m, nxid, xid, xid_known, p);
	if (p->alive) {
		/* Give a late answer (or a late disconnect) a moment, then ask again:
		 * a server that closes the connection after answering is caught too. */
		while ((m = rt_wait_any(c, t->grace_ms)))
			probe_take(m, nxid, xid, xid_known, p);
		p->alive = false;
		nxid = send_null(t, c);
		while (!p->alive && (m = rt_wait_any(c, t->timeout_ms)))
			probe_take(m, nxid, xid, xid_known, p);
	}
	rt_conn_violation(c, p->violation, sizeof(p->violation));
	if (!p->alive && rt_conn_dead(c) && p->out == RT_OUT_NONE) {
		p->out = RT_OUT_LOST;
		snprintf(p->detail, sizeof(p->detail), "the connection was lost (%s)",
			 rt_conn_state(c, st, sizeof(st)));
	} else if (!p->alive) {
		snprintf(p->alive_why, sizeof(p->alive_why), "%s",
			 rt_conn_dead(c) ? rt_conn_state(c, st, sizeof(st)) : "connection still up");
	}
}

const char *rt_outcome_names(unsigned mask, char *buf, size_t n)
{
	static const char *const names[] = {
		"no answer", "RDMA_ERROR/ERR_CHUNK", "RDMA_ERROR/ERR_VERS", "another RDMA_ERROR",
		"RPC GARBAGE_ARGS", "an RPC reply", "a malformed answer", "connection loss",
	};
	unsigned i;

	buf[0] = 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(mask & (1u << i)))
			continue;
		if (buf[0])
			strncat(buf, " or ", n - strlen(buf) - 1);
		strncat(buf, names[i], n - strlen(buf) - 1);
	}
	return buf;
}

void rt_probe_verdict(struct rt_ctx *t, const char *name, const struct rt_probe *p,
		      unsigned allowed, const char *rfc)
{
	char exp[160];

	rt_outcome_names(allowed, exp, sizeof(exp));
	if (!(p->out & allowed))
		rt_fail(t, name, "expected %s (%s) got %s", exp, rfc, p->detail);
	else if (!p->xid_ok)
		rt_fail(t, name, "expected the answer to carry the call's XID got XID %#x in %s",
			p->h.xid, p->detail);
	else if (p->violation[0])
		rt_fail(t, name, "expected %s", p->violation);
	else if (!p->alive)
		rt_fail(t, name, "expected NULL calls afterwards to be answered got no answer, %s "
			"(after %s)", p->alive_why, p->detail);
	else
		rt_pass(t, name, "%s; NULLs afterwards answered", p->detail);
}
