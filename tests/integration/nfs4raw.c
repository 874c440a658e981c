/*
 * nfs4raw.c - the integration tests' raw NFSv4 client (nfs4raw.h): COMPOUND
 * framing, client set-up for 4.0 and 4.1+, the state and I/O operations, a
 * probing neighbour thread, and /proc counts of the daemon's resources.
 * XDR by hand over rawrpc.c, argument layouts as in RFC 7531 / RFC 8881's
 * XDR description; replies are read with the bounds-checked struct xd.
 */
#include "tests/integration/nfs4raw.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define N4_FH_MAX 128u /* NFS4_FHSIZE */

double n4_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- framing ---------------------------------------------------------- */

void n4_hdr(struct xb *a, uint32_t minor, uint32_t numops)
{
	xb_string(a, "n4");
	xb_u32(a, minor);
	xb_u32(a, numops);
}

void n4_begin(struct n4_client *k, struct xb *a, uint32_t nops)
{
	xb_init(a);
	if (k->minor == 0) {
		n4_hdr(a, 0, nops);
		return;
	}
	n4_hdr(a, k->minor, nops + 1);
	xb_u32(a, N4_SEQUENCE);
	xb_raw(a, k->session, 16);
	xb_u32(a, ++k->slot_seq);
	xb_u32(a, 0); /* slot */
	xb_u32(a, 0); /* highest slot */
	xb_u32(a, k->cache_this);
	k->cache_this = 0;
}

void n4_begin_fh(struct n4_client *k, struct xb *a, uint32_t nops, const uint8_t *fh, uint32_t fh_len)
{
	n4_begin(k, a, nops);
	n4_xb_putfh(a, fh, fh_len);
}

void n4_begin_alone(struct n4_client *k, struct xb *a, uint32_t op)
{
	xb_init(a);
	n4_hdr(a, k->minor, 1);
	xb_u32(a, op);
}

enum raw_recv_result n4_recv_reply(struct n4_client *k, uint32_t xid, struct raw_reply *r, int timeout_ms)
{
	memset(r, 0, sizeof(*r));
	for (int calls = 0; calls < 20; calls++) {
		uint8_t *buf = NULL;
		size_t len = 0;
		enum raw_recv_result rr = raw_recv_record(&k->c, &buf, &len, timeout_ms);

		if (rr != RAW_RECV_OK)
			return rr;
		if (len >= 8 && buf[4] == 0 && buf[5] == 0 && buf[6] == 0 && buf[7] == 0) { /* CALL */
			if (k->on_cb)
				k->on_cb(k, buf, len);
			free(buf);
			continue;
		}
		rr = raw_decode_reply(r, buf, len);
		return rr == RAW_RECV_OK && r->xid != xid ? RAW_RECV_ERROR : rr;
	}
	return RAW_RECV_CLOSED;
}

/*
 * k has an on_cb hook: send a and wait for the reply to it, handing the
 * callback calls (msg_type CALL, RFC 5531 §9; RFC 8881 §2.10.3.1: a back
 * channel may share the fore connection) that come first to the hook.
 */
static enum raw_recv_result n4_call_cb(struct n4_client *k, const struct xb *a, struct raw_reply *r)
{
	uint32_t my = k->xid;
	struct xb m;
	int rc;

	xb_init(&m);
	xb_call_header(&m, my, RAW_NFS_PROG, 4, 1, k->uid, k->gid);
	xb_raw(&m, a->p, a->len);
	rc = raw_send_record(&k->c, m.p, m.len);
	xb_free(&m);
	if (rc != 0) {
		memset(r, 0, sizeof(*r));
		return RAW_RECV_CLOSED;
	}
	return n4_recv_reply(k, my, r, 10000);
}

bool n4_cb_parse(const uint8_t *buf, size_t len, struct n4_cb_call *cc)
{
	struct xd d;
	uint32_t l;

	memset(cc, 0, sizeof(*cc));
	xd_init(&d, buf, len);
	cc->xid = xd_u32(&d);
	if (xd_u32(&d) != 0 || xd_u32(&d) != 2) /* CALL, RPC version 2 */
		return false;
	cc->prog = xd_u32(&d);
	cc->vers = xd_u32(&d);
	cc->proc = xd_u32(&d);
	cc->cred_flavor = xd_u32(&d);
	xd_opaque(&d, &l, 400); /* credential body, verifier */
	xd_u32(&d);
	xd_opaque(&d, &l, 400);
	if (cc->proc != 1)
		return !d.bad;
	xd_opaque(&d, &l, 1024); /* tag */
	cc->minor = xd_u32(&d);
	xd_u32(&d); /* callback_ident */
	cc->nops = xd_u32(&d);
	cc->op = xd_u32(&d);
	if (d.pos + 16 <= d.len)
		memcpy(cc->sid, d.p + d.pos, 16);
	xd_skip(&d, 16);
	cc->seqid = xd_u32(&d);
	cc->slotid = xd_u32(&d);
	xd_u32(&d); /* highest slot, cachethis */
	xd_u32(&d);
	if (cc->nops >= 2 && xd_u32(&d) == 0 && !d.bad) { /* no referring call lists */
		cc->op2 = xd_u32(&d);
		cc->args_off = (uint32_t)d.pos;
		cc->args_len = d.pos < d.len ? (uint32_t)(d.len - d.pos) : 0;
		if (cc->args_len > sizeof(cc->args))
			cc->args_len = sizeof(cc->args);
		memcpy(cc->args, d.p + d.pos, cc->args_len);
		if (cc->op2 == 4) { /* CB_RECALL4args: stateid, truncate, fh */
			n4_xd_sid(&d, &cc->dsid);
			xd_u32(&d);
			const uint8_t *fh = xd_opaque(&d, &cc->fh_len, 128);
			if (fh)
				memcpy(cc->fh, fh, cc->fh_len);
		}
	}
	return !d.bad;
}

/* The reply to cc: CB_SEQUENCE4resok echoing it, op_status for the operation after. */
static void cb_reply_into(struct xb *b, const struct n4_cb_call *cc, uint32_t op_status)
{
	xb_u32(b, cc->xid);
	xb_u32(b, 1); /* REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS */
	xb_u32(b, 0);
	xb_u32(b, 0);
	xb_u32(b, 0);
	xb_u32(b, 0);
	if (cc->proc != 1)
		return;
	xb_u32(b, 0); /* NFS4_OK, tag, the results */
	xb_string(b, "");
	xb_u32(b, cc->op2 ? 2 : 1);
	xb_u32(b, 11); /* OP_CB_SEQUENCE: CB_SEQUENCE4resok */
	xb_u32(b, 0);
	xb_raw(b, cc->sid, 16);
	xb_u32(b, cc->seqid);
	xb_u32(b, cc->slotid);
	xb_u32(b, 0);
	xb_u32(b, 0);
	if (cc->op2) {
		xb_u32(b, cc->op2);
		xb_u32(b, op_status);
	}
}

void n4_xb_cb_reply(struct xb *b, const struct n4_cb_call *cc)
{
	cb_reply_into(b, cc, 0);
}

int n4_cb_reply(struct raw_conn *c, const struct n4_cb_call *cc, uint32_t op_status)
{
	struct xb b;
	int rc;

	xb_init(&b);
	cb_reply_into(&b, cc, op_status);
	rc = raw_send_record(c, b.p, b.len);
	xb_free(&b);
	return rc;
}

int n4_cb_answer(struct raw_conn *c, const struct n4_cb_call *cc)
{
	return n4_cb_reply(c, cc, 0);
}

void n4_cb_count_recalls(struct n4_client *k, const uint8_t *msg, size_t len)
{
	struct n4_cb_call cc;

	if (!n4_cb_parse(msg, len, &cc))
		return;
	if (cc.proc == 1 && cc.op2 == 4) /* CB_RECALL (RFC 8881 §20.2) */
		k->cb_recalls++;
	(void)n4_cb_answer(&k->c, &cc);
}

bool n4_recall_wait(struct n4_client *k, unsigned before, double limit_s)
{
	double t0 = n4_now();

	while (k->cb_recalls == before && n4_now() - t0 < limit_s) {
		usleep(50 * 1000);
		(void)n4_sequence(k);
	}
	return k->cb_recalls > before;
}

int n4_cb_answer_getattr(struct raw_conn *c, const struct n4_cb_call *cc, uint64_t change, uint64_t size)
{
	struct xb b;
	int rc;

	xb_init(&b);
	cb_reply_into(&b, cc, 0);
	if (cc->proc == 1 && cc->op2 == 3) { /* CB_GETATTR4resok: fattr4 {change, size} */
		xb_u32(&b, 1);
		xb_u32(&b, 1u << 3 | 1u << 4);
		xb_u32(&b, 16);
		xb_u64(&b, change);
		xb_u64(&b, size);
	}
	rc = raw_send_record(c, b.p, b.len);
	xb_free(&b);
	return rc;
}

int n4_call_raw(struct n4_client *k, const struct xb *a, struct raw_reply *r)
{
	enum raw_recv_result rr;
	uint32_t len;
	int st;

	++k->xid;
	if (k->rpc) /* its own flavor; n4_recv_reply hands it the callbacks */
		rr = k->rpc(k, a, r);
	else if (k->on_cb)
		rr = n4_call_cb(k, a, r);
	else if (k->auth_none)
		rr = raw_call_none(&k->c, k->xid, RAW_NFS_PROG, 4, 1, a->p, a->len, r);
	else
		rr = raw_call_as(&k->c, k->xid, RAW_NFS_PROG, 4, 1, k->uid, k->gid, a->p, a->len, r);
	k->nres = 0;
	if (rr != RAW_RECV_OK)
		return -1;
	if (r->reply_stat != 0 || r->accept_stat != 0)
		return -1;
	st = (int)xd_u32(&r->body);
	xd_opaque(&r->body, &len, 1024); /* tag */
	k->nres = xd_u32(&r->body);       /* resarray's count */
	return r->body.bad ? -1 : st;
}

int n4_call(struct n4_client *k, struct xb *a, struct raw_reply *r)
{
	size_t pos;
	int st = n4_call_raw(k, a, r);

	xb_free(a);
	if (st < 0 || k->minor == 0)
		return st;
	pos = r->body.pos;
	if (n4_res(r, N4_SEQUENCE) == 0) {
		xd_skip(&r->body, 16 + 4 * 4); /* SEQUENCE4resok up to sr_status_flags */
		k->seq_flags = xd_u32(&r->body);
	} else {
		r->body.pos = pos;
	}
	return r->body.bad ? -1 : st;
}

/* k's COMPOUND a (freed), its reply not looked at: the COMPOUND status, or -1. */
static int n4_call_done(struct n4_client *k, struct xb *a)
{
	struct raw_reply r;
	int st = n4_call(k, a, &r);

	raw_reply_free(&r);
	return st;
}

int n4_res(struct raw_reply *r, uint32_t op)
{
	uint32_t got = xd_u32(&r->body), st = xd_u32(&r->body);

	return r->body.bad || got != op ? -1 : (int)st;
}

void n4_xb_sid(struct xb *a, const struct n4_sid *s)
{
	xb_u32(a, s->seqid);
	xb_raw(a, s->other, 12);
}

void n4_xd_sid(struct xd *d, struct n4_sid *s)
{
	s->seqid = xd_u32(d);
	if (d->pos + 12 <= d->len)
		memcpy(s->other, d->p + d->pos, 12);
	xd_skip(d, 12);
}

uint32_t n4_walk(struct xb *a, const char *path)
{
	char buf[PATH_MAX], *save = NULL;
	uint32_t n = 1;

	if (a)
		xb_u32(a, N4_PUTROOTFH);
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save), n++) {
		if (a) {
			xb_u32(a, N4_LOOKUP);
			xb_string(a, c);
		}
	}
	return n;
}

void n4_xb_putfh(struct xb *a, const uint8_t *fh, uint32_t fh_len)
{
	xb_u32(a, N4_PUTFH);
	xb_opaque(a, fh, fh_len);
}

/* ---- clients ---------------------------------------------------------- */

/* A client's defaults, no connection yet. */
static void n4_init(struct n4_client *k, uint16_t port, uint32_t minor)
{
	memset(k, 0, sizeof(*k));
	k->port = port;
	k->minor = minor;
	k->xid = (uint32_t)rand() << 8;
	k->max_resp_cached = 4096;
	k->max_resp = (1u << 20) + 65536u;
	k->max_req = (1u << 20) + 65536u;
	k->cb_prog = 0x40000000u;
	k->cb_ident = 1;
}

bool n4_reserved_ports;

int n4_connect(struct n4_client *k, uint16_t port, uint32_t minor)
{
	n4_init(k, port, minor);
	k->own_conn = true;
	return n4_reserved_ports ? raw_connect_reserved(&k->c, port) : raw_connect(&k->c, port);
}

int n4_connect_from(struct n4_client *k, uint16_t port, uint32_t minor, const char *src)
{
	n4_init(k, port, minor);
	k->own_conn = true;
	return raw_connect_src(&k->c, port, src);
}

void n4_share(struct n4_client *k, const struct raw_conn *c, uint32_t minor)
{
	n4_init(k, 0, minor);
	k->c = *c;
}

static void n4_verifier(struct n4_client *k)
{
	uint64_t v = (uint64_t)getpid() << 32 ^ (uint64_t)(n4_now() * 1e6);

	memcpy(k->verifier, &v, 8);
}

/* A sessionless COMPOUND of op, whose arguments open with the client's
 * verifier and id (nfs_client_id4 of SETCLIENTID, client_owner4 of
 * EXCHANGE_ID): id whole on the wire (k->id keeps its first bytes), and a
 * verifier for k if it has none. */
static void n4_begin_owner(struct n4_client *k, struct xb *a, uint32_t op, const char *id)
{
	if (id != k->id)
		snprintf(k->id, sizeof(k->id), "%s", id);
	if (!k->verifier[0] && !k->verifier[7])
		n4_verifier(k);
	n4_begin_alone(k, a, op);
	xb_raw(a, k->verifier, 8);
	xb_string(a, id);
}

int n4_setclientid(struct n4_client *k, const char *id, uint8_t confirm[8])
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_owner(k, &a, N4_SETCLIENTID, id);
	xb_u32(&a, k->cb_prog);
	xb_string(&a, "tcp");
	xb_string(&a, k->cb_addr[0] ? k->cb_addr : "127.0.0.1.0.9"); /* port 9: no callback service */
	xb_u32(&a, k->cb_ident);
	st = n4_call(k, &a, &r);
	if (st == 0 && n4_res(&r, N4_SETCLIENTID) == 0) {
		k->cid = xd_u64(&r.body);
		if (r.body.pos + 8 <= r.body.len)
			memcpy(confirm, r.body.p + r.body.pos, 8);
		xd_skip(&r.body, 8);
	}
	raw_reply_free(&r);
	return st;
}

int n4_setclientid_confirm(struct n4_client *k, const uint8_t confirm[8])
{
	struct xb a;

	n4_begin_alone(k, &a, N4_SETCLIENTID_CONFIRM);
	xb_u64(&a, k->cid);
	xb_raw(&a, confirm, 8);
	return n4_call_done(k, &a);
}

/* 4.0: SETCLIENTID (callback to a port nobody listens on) + SETCLIENTID_CONFIRM. */
static int n4_setup40(struct n4_client *k, const char *id)
{
	uint8_t confirm[8] = { 0 };
	int st = n4_setclientid(k, id, confirm);

	return st != 0 ? st : n4_setclientid_confirm(k, confirm);
}

int n4_exchange_id(struct n4_client *k, const char *id, uint32_t *csr_seq)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_owner(k, &a, N4_EXCHANGE_ID, id);
	xb_u32(&a, 0); /* eia_flags */
	xb_u32(&a, 0); /* SP4_NONE */
	xb_u32(&a, 0); /* no implementation id */
	st = n4_call_raw(k, &a, &r);
	xb_free(&a);
	if (st == 0 && n4_res(&r, N4_EXCHANGE_ID) == 0) {
		k->cid = xd_u64(&r.body);
		*csr_seq = xd_u32(&r.body);
		k->exid_flags = xd_u32(&r.body);
	}
	raw_reply_free(&r);
	return st;
}

/* callback_sec_parms4<> (RFC 8881 §18.36.1): AUTH_NONE, after AUTH_SYS (uid 0) when k->cb_sys. */
static void n4_xb_cb_sec(struct n4_client *k, struct xb *a)
{
	xb_u32(a, k->cb_sys ? 2 : 1);
	if (k->cb_sys) {
		xb_u32(a, 1); /* AUTH_SYS: stamp, machinename, uid, gid, gids */
		xb_u32(a, 1);
		xb_string(a, "cbhost");
		xb_u32(a, 0);
		xb_u32(a, 0);
		xb_u32(a, 0);
	}
	xb_u32(a, 0); /* AUTH_NONE */
}

int n4_create_session(struct n4_client *k, uint32_t csr_seq)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_alone(k, &a, N4_CREATE_SESSION);
	xb_u64(&a, k->cid);
	xb_u32(&a, csr_seq);
	xb_u32(&a, k->cs_flags); /* CONN_BACK_CHAN or not; no persistence */
	for (int ch = 0; ch < 2; ch++) {
		xb_u32(&a, 0);                             /* headerpadsize */
		xb_u32(&a, ch ? (1u << 20) + 65536u : k->max_req); /* maxrequestsize */
		xb_u32(&a, ch ? 4096u : k->max_resp);      /* maxresponsesize */
		xb_u32(&a, ch ? 0u : k->max_resp_cached);  /* maxresponsesize_cached */
		xb_u32(&a, 16);                            /* maxoperations */
		xb_u32(&a, ch ? 1u : k->max_reqs ? k->max_reqs : 8u); /* maxrequests */
		xb_u32(&a, 0);                             /* no rdma_ird */
	}
	xb_u32(&a, k->cb_prog);
	n4_xb_cb_sec(k, &a);
	st = n4_call_raw(k, &a, &r);
	xb_free(&a);
	if (st == 0 && n4_res(&r, N4_CREATE_SESSION) == 0 && r.body.pos + 16 <= r.body.len) {
		memcpy(k->session, r.body.p + r.body.pos, 16);
		k->slot_seq = 0;
		/* csr_sequence, csr_flags, then the fore channel_attrs4 (RFC 8881 §18.36.2) */
		xd_skip(&r.body, 16 + 4);
		k->csr_flags = xd_u32(&r.body);
		xd_skip(&r.body, 12);
		k->got_cached = xd_u32(&r.body);
		xd_skip(&r.body, 4);
		k->got_reqs = xd_u32(&r.body);
	}
	raw_reply_free(&r);
	return st;
}

int n4_sequence(struct n4_client *k)
{
	struct xb a;

	n4_begin(k, &a, 0);
	return n4_call_done(k, &a);
}

int n4_setup(struct n4_client *k, const char *id)
{
	uint32_t csr_seq = 0;
	int st;

	snprintf(k->id, sizeof(k->id), "%s", id);
	n4_verifier(k);
	if (k->minor == 0)
		return n4_setup40(k, id);
	st = n4_exchange_id(k, id, &csr_seq);
	if (st == 0)
		st = n4_create_session(k, csr_seq);
	return st != 0 ? st : n4_reclaim_complete(k);
}

int n4_start(struct n4_client *k, uint16_t port, uint32_t minor, const char *id)
{
	if (n4_connect(k, port, minor) != 0)
		return -1;
	return n4_setup(k, id);
}

/* CB_NULL gets an empty reply, a CB_COMPOUND NFS4_OK for its
 * CB_SEQUENCE (echoed, RFC 8881 §20.9.3) and for the one operation after it (a CB_RECALL is
 * acknowledged, the delegation kept). */
void n4_cb_reply_ok(struct raw_conn *c, const uint8_t *msg, size_t len)
{
	struct n4_cb_call cc;

	if (n4_cb_parse(msg, len, &cc))
		(void)n4_cb_answer(c, &cc);
}

static void n4_cb_answer_ok(struct n4_client *k, const uint8_t *msg, size_t len)
{
	n4_cb_reply_ok(&k->c, msg, len);
	k->cb_answered++;
}

int n4_start_cb(struct n4_client *k, uint16_t port, const char *id)
{
	int st;

	if (n4_connect(k, port, 1) != 0)
		return -1;
	k->cs_flags = N4_CS_BACK_CHAN;
	k->on_cb = n4_cb_answer_ok;
	k->cb_sys = true;
	st = n4_setup(k, id);
	/* the server probes the new back channel (CB_NULL, then CB_SEQUENCE), answered while we call */
	for (int i = 0; st == 0 && k->cb_answered < 2 && i < 100; i++) {
		usleep(20000);
		st = n4_sequence(k);
	}
	return st != 0 ? st : k->cb_answered >= 2 ? 0 : -1;
}

int n4_destroy_client(struct n4_client *k)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_alone(k, &a, N4_DESTROY_SESSION);
	xb_raw(&a, k->session, 16);
	st = n4_call_raw(k, &a, &r);
	xb_free(&a);
	raw_reply_free(&r);
	if (st != 0)
		return st;
	n4_begin_alone(k, &a, N4_DESTROY_CLIENTID);
	xb_u64(&a, k->cid);
	st = n4_call_raw(k, &a, &r);
	xb_free(&a);
	raw_reply_free(&r);
	return st;
}

void n4_client_close(struct n4_client *k)
{
	if (k->own_conn)
		raw_close(&k->c);
}

/* ---- state and I/O ------------------------------------------------------ */

/* open_delegation4 (RFC 8881 §18.16.2) into o. */
static void n4_xd_deleg(struct xd *d, struct n4_openres *o)
{
	uint32_t len;

	o->deleg = xd_u32(d);
	/* RFC 9754 §5.2: READ_ATTRS_DELEG (4) and WRITE_ATTRS_DELEG (5) carry READ's and WRITE's bodies */
	if (o->deleg == 1 || o->deleg == 2 || o->deleg == 4 || o->deleg == 5) {
		n4_xd_sid(d, &o->dsid);
		xd_u32(d);                     /* recall */
		if (o->deleg == 2 || o->deleg == 5)
			xd_skip(d, 12);        /* nfs_space_limit4 */
		xd_skip(d, 12);                /* nfsace4: type, flag, access_mask */
		xd_opaque(d, &len, 1024);      /* who */
	} else if (o->deleg == 3) {
		o->why = xd_u32(d);
		if (o->why == 1 || o->why == 2) /* WND4_CONTENTION, WND4_RESOURCE: a boolean follows */
			xd_u32(d);
	}
}

bool n4_xd_openres(struct xd *d, struct n4_openres *o)
{
	uint32_t words;

	memset(o, 0, sizeof(*o));
	n4_xd_sid(d, &o->sid);
	xd_skip(d, 4 + 16); /* change_info4 */
	o->rflags = xd_u32(d);
	words = xd_u32(d);  /* attrset */
	if (words > 8)
		return false;
	xd_skip(d, 4 * (size_t)words);
	n4_xd_deleg(d, o);
	return !d->bad;
}

void n4_xb_openargs(struct xb *a, const struct n4_openargs *o)
{
	xb_u32(a, N4_OPEN);
	xb_u32(a, o->seqid);
	xb_u32(a, o->access);
	xb_u32(a, o->deny);
	xb_u64(a, o->cid);
	xb_string(a, o->owner);
	xb_u32(a, o->create != N4_NOCREATE); /* openflag4 */
	if (o->create != N4_NOCREATE) {
		xb_u32(a, o->create == N4_GUARDED ? 1 : 0); /* createmode4 */
		if (o->no_attrs) {
			xb_u32(a, 0);
			xb_u32(a, 0);
		} else {
			xb_u32(a, 2);                          /* bitmap: size (4), mode (33) */
			xb_u32(a, o->with_size ? 1u << 4 : 0);
			xb_u32(a, 1u << 1);
			xb_u32(a, o->with_size ? 12 : 4);
			if (o->with_size)
				xb_u64(a, o->size);
			xb_u32(a, 0644);
		}
	}
	xb_u32(a, o->previous ? 1 : 0); /* CLAIM_PREVIOUS : CLAIM_NULL */
	if (o->previous)
		xb_u32(a, 0); /* delegate_type: OPEN_DELEGATE_NONE */
	else
		xb_string(a, o->name);
}

static void n4_xb_open(struct n4_client *k, struct xb *a, bool create, uint32_t access, uint32_t deny,
		       const char *owner, uint32_t seqid, const char *name)
{
	struct n4_openargs o = {
		.seqid = k->minor ? 0 : seqid, .access = access, .deny = deny, .cid = k->cid, .owner = owner,
		.create = create ? N4_UNCHECKED : N4_NOCREATE, .name = name,
	};

	n4_xb_openargs(a, &o);
	xb_u32(a, N4_GETFH);
}

int n4_open_confirm(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t *seqid, struct n4_sid *sid)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_OPEN_CONFIRM);
	n4_xb_sid(&a, sid);
	xb_u32(&a, (*seqid)++);
	st = n4_call(k, &a, &r);
	if (st == 0 && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, N4_OPEN_CONFIRM) == 0)
		n4_xd_sid(&r.body, sid);
	raw_reply_free(&r);
	return st;
}

/* n4_open and n4_open_deleg: access is sent as given (want bits included); a delegation in the
 * reply is an error unless res is given (then it is filled). */
static int n4_open_any(struct n4_client *k, const char *dir, const char *name, bool create, uint32_t access,
		       uint32_t deny, const char *owner, uint32_t *seqid, struct n4_sid *sid, uint8_t *fh,
		       uint32_t *fh_len, struct n4_openres *deleg)
{
	uint32_t n, rflags = 0, len = 0, sq = seqid ? *seqid : 0;
	struct n4_openres res = { 0 };
	struct raw_reply r;
	const uint8_t *p;
	struct xb a, w;
	int st;

	xb_init(&w);
	n = n4_walk(&w, dir);
	n4_begin(k, &a, n + 2);
	xb_raw(&a, w.p, w.len);
	xb_free(&w);
	n4_xb_open(k, &a, create, access, deny, owner, sq, name);
	st = n4_call(k, &a, &r);
	if (k->minor == 0 && seqid && st != -1)
		++*seqid; /* RFC 7530 §9.1.7: the seqid advances on every status but a few */
	if (st == 0) {
		for (uint32_t i = 0; i < n; i++)
			n4_res(&r, i ? N4_LOOKUP : N4_PUTROOTFH);
		/* a read or write delegation: only n4_open_deleg asks for one */
		if (n4_res(&r, N4_OPEN) != 0 || !n4_xd_openres(&r.body, &res) ||
		    (!deleg && (res.deleg == 1 || res.deleg == 2)) || n4_res(&r, N4_GETFH) != 0)
			st = -1;
		*sid = res.sid;
		if (deleg)
			*deleg = res;
		rflags = res.rflags;
		k->open_rflags = rflags;
		p = st ? NULL : xd_opaque(&r.body, &len, N4_FH_MAX);
		if (p) {
			memcpy(fh, p, len);
			*fh_len = len;
		} else {
			st = -1;
		}
	}
	raw_reply_free(&r);
	if (st == 0 && k->minor == 0 && (rflags & 0x2u)) /* OPEN4_RESULT_CONFIRM */
		st = n4_open_confirm(k, fh, *fh_len, seqid, sid);
	return st;
}

int n4_open(struct n4_client *k, const char *dir, const char *name, bool create, uint32_t access,
	    uint32_t deny, const char *owner, uint32_t *seqid, struct n4_sid *sid, uint8_t *fh, uint32_t *fh_len)
{
	return n4_open_any(k, dir, name, create, k->minor ? access | N4_WANT_NO_DELEG : access, deny, owner, seqid,
			   sid, fh, fh_len, NULL);
}

int n4_open_deleg(struct n4_client *k, const char *dir, const char *name, bool create, uint32_t access,
		  const char *owner, struct n4_openres *res, uint8_t *fh, uint32_t *fh_len)
{
	struct n4_sid sid;
	uint32_t seq = 0; /* 4.0: a new owner's first OPEN (and its OPEN_CONFIRM) */
	int st = n4_open_any(k, dir, name, create, access, 0, owner, &seq, &sid, fh, fh_len, res);

	res->sid = sid; /* 4.0: as confirmed */
	return st;
}

int n4_open_prev(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t access, uint32_t deny,
		 const char *owner, uint32_t *seqid, struct n4_sid *sid)
{
	struct n4_openargs o = {
		.seqid = k->minor || !seqid ? 0 : *seqid, .access = k->minor ? access | N4_WANT_NO_DELEG : access,
		.deny = deny, .cid = k->cid, .owner = owner, .previous = true,
	};
	struct n4_openres res = { 0 };
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	n4_xb_openargs(&a, &o);
	st = n4_call(k, &a, &r);
	if (k->minor == 0 && seqid && st != -1)
		++*seqid; /* RFC 7530 §9.1.7 */
	if (st == 0 && (n4_res(&r, N4_PUTFH) != 0 || n4_res(&r, N4_OPEN) != 0 || !n4_xd_openres(&r.body, &res)))
		st = -1;
	raw_reply_free(&r);
	*sid = res.sid;
	k->open_rflags = res.rflags;
	if (st == 0 && k->minor == 0 && seqid && (res.rflags & 0x2u)) /* RFC 7530 §16.16.5: a new owner confirms */
		st = n4_open_confirm(k, fh, fh_len, seqid, sid);
	return st;
}

int n4_reclaim_complete(struct n4_client *k)
{
	struct xb a;

	n4_begin(k, &a, 1);
	xb_u32(&a, N4_RECLAIM_COMPLETE);
	xb_u32(&a, 0); /* rca_one_fs: false */
	return n4_call_done(k, &a);
}

int n4_close(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t *seqid, struct n4_sid *sid)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_CLOSE);
	xb_u32(&a, seqid && k->minor == 0 ? (*seqid)++ : 0);
	n4_xb_sid(&a, sid);
	st = n4_call(k, &a, &r);
	if (st == 0 && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, N4_CLOSE) == 0)
		n4_xd_sid(&r.body, sid);
	raw_reply_free(&r);
	return st;
}

int n4_read(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct n4_sid *sid, uint64_t off,
	    uint32_t count, void *buf, uint32_t *got)
{
	struct raw_reply r;
	const uint8_t *p;
	uint32_t len = 0;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_READ);
	n4_xb_sid(&a, sid);
	xb_u64(&a, off);
	xb_u32(&a, count);
	st = n4_call(k, &a, &r);
	k->read_eof = 0;
	if (got)
		*got = 0;
	if (st == 0 && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, N4_READ) == 0) {
		k->read_eof = xd_u32(&r.body);
		p = xd_opaque(&r.body, &len, count);
		if (p && buf)
			memcpy(buf, p, len);
		if (got)
			*got = p ? len : 0;
	}
	raw_reply_free(&r);
	return st;
}

int n4_write(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct n4_sid *sid, uint64_t off,
	     const void *data, uint32_t len)
{
	return n4_write_how(k, fh, fh_len, sid, off, data, len, N4_FILE_SYNC, NULL);
}

int n4_write_how(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct n4_sid *sid,
		 uint64_t off, const void *data, uint32_t len, uint32_t stable, uint32_t *committed)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_WRITE);
	n4_xb_sid(&a, sid);
	xb_u64(&a, off);
	xb_u32(&a, stable);
	xb_opaque(&a, data, len);
	st = n4_call(k, &a, &r);
	if (st == 0 && committed && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, N4_WRITE) == 0) {
		xd_u32(&r.body); /* count */
		*committed = xd_u32(&r.body);
	}
	raw_reply_free(&r);
	return st;
}

int n4_commit(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint64_t off, uint32_t count)
{
	struct xb a;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_COMMIT);
	xb_u64(&a, off);
	xb_u32(&a, count);
	return n4_call_done(k, &a);
}

int n4_truncate(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct n4_sid *sid, uint64_t size)
{
	struct xb a;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_SETATTR);
	n4_xb_sid(&a, sid);
	xb_u32(&a, 1);      /* bitmap: size (4) */
	xb_u32(&a, 1u << 4);
	xb_u32(&a, 8);
	xb_u64(&a, size);
	return n4_call_done(k, &a);
}

/* LOCK's result: the lock stateid on NFS4_OK. */
static int n4_lock_send(struct n4_client *k, struct xb *a, struct n4_sid *lock)
{
	struct raw_reply r;
	int st = n4_call(k, a, &r);

	if (st == 0 && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, N4_LOCK) == 0)
		n4_xd_sid(&r.body, lock);
	raw_reply_free(&r);
	return st;
}

void n4_xb_lockargs(struct xb *a, const struct n4_lockargs *l)
{
	xb_u32(a, N4_LOCK);
	xb_u32(a, l->type);
	xb_u32(a, l->reclaim);
	xb_u64(a, l->off);
	xb_u64(a, l->len);
	xb_u32(a, l->new_owner); /* locker4: open_to_lock_owner4 or exist_lock_owner4 */
	if (l->new_owner) {
		xb_u32(a, l->open_seqid);
		n4_xb_sid(a, l->sid);
		xb_u32(a, l->lock_seqid);
		xb_u64(a, l->cid);
		xb_string(a, l->owner);
	} else {
		n4_xb_sid(a, l->sid);
		xb_u32(a, l->lock_seqid);
	}
}

void n4_xb_locktargs(struct xb *a, uint32_t type, uint64_t off, uint64_t len, uint64_t cid, const char *owner)
{
	xb_u32(a, N4_LOCKT);
	xb_u32(a, type);
	xb_u64(a, off);
	xb_u64(a, len);
	xb_u64(a, cid); /* lock_owner4 */
	xb_string(a, owner);
}

int n4_lock_new(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t type, uint64_t off,
		uint64_t len, const struct n4_sid *open, uint32_t *open_seqid, const char *owner,
		struct n4_sid *lock)
{
	return n4_lock_reclaim(k, fh, fh_len, type, false, off, len, open, open_seqid, owner, lock);
}

int n4_lock_reclaim(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t type, bool reclaim,
		    uint64_t off, uint64_t len, const struct n4_sid *open, uint32_t *open_seqid, const char *owner,
		    struct n4_sid *lock)
{
	struct n4_lockargs l = {
		.type = type, .reclaim = reclaim, .off = off, .len = len, .new_owner = true, .sid = open,
		.cid = k->cid, .owner = owner,
		.open_seqid = open_seqid && k->minor == 0 ? (*open_seqid)++ : 0,
	};
	struct xb a;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	n4_xb_lockargs(&a, &l);
	return n4_lock_send(k, &a, lock);
}

int n4_lock_more(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t type, uint64_t off,
		 uint64_t len, struct n4_sid *lock, uint32_t *lock_seqid)
{
	struct n4_lockargs l = {
		.type = type, .off = off, .len = len, .sid = lock,
		.lock_seqid = lock_seqid && k->minor == 0 ? (*lock_seqid)++ : 0,
	};
	struct xb a;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	n4_xb_lockargs(&a, &l);
	return n4_lock_send(k, &a, lock);
}

int n4_test_stateid(struct n4_client *k, const struct n4_sid *sid)
{
	struct raw_reply r;
	struct xb a;
	int st, code = -1;

	n4_begin(k, &a, 1);
	xb_u32(&a, N4_TEST_STATEID);
	xb_u32(&a, 1);
	n4_xb_sid(&a, sid);
	st = n4_call(k, &a, &r);
	if (st == 0 && n4_res(&r, N4_TEST_STATEID) == 0 && xd_u32(&r.body) == 1)
		code = (int)xd_u32(&r.body);
	if (r.body.bad)
		code = -1;
	raw_reply_free(&r);
	return code;
}

int n4_free_stateid(struct n4_client *k, const struct n4_sid *sid)
{
	struct xb a;

	n4_begin(k, &a, 1);
	xb_u32(&a, N4_FREE_STATEID);
	n4_xb_sid(&a, sid);
	return n4_call_done(k, &a);
}

int n4_delegreturn(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct n4_sid *sid)
{
	struct xb a;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_DELEGRETURN);
	n4_xb_sid(&a, sid);
	return n4_call_done(k, &a);
}

int n4_locku(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, struct n4_sid *lock, uint32_t *lock_seqid,
	     uint64_t off, uint64_t len)
{
	return n4_locku_type(k, fh, fh_len, N4_WRITE_LT, lock, lock_seqid, off, len);
}

int n4_locku_type(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t type, struct n4_sid *lock,
		  uint32_t *lock_seqid, uint64_t off, uint64_t len)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_LOCKU);
	xb_u32(&a, type);
	xb_u32(&a, lock_seqid && k->minor == 0 ? (*lock_seqid)++ : 0);
	n4_xb_sid(&a, lock);
	xb_u64(&a, off);
	xb_u64(&a, len);
	st = n4_call(k, &a, &r);
	if (st == 0 && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, N4_LOCKU) == 0)
		n4_xd_sid(&r.body, lock);
	raw_reply_free(&r);
	return st;
}

int n4_lockt(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t type, uint64_t off, uint64_t len,
	     const char *owner)
{
	struct xb a;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	n4_xb_locktargs(&a, type, off, len, k->cid, owner);
	return n4_call_done(k, &a);
}

int n4_release_lockowner(struct n4_client *k, const char *owner)
{
	struct xb a;

	n4_begin(k, &a, 1);
	xb_u32(&a, N4_RELEASE_LOCKOWNER);
	xb_u64(&a, k->cid); /* lock_owner4 */
	xb_string(&a, owner);
	return n4_call_done(k, &a);
}

int n4_getattr_root(struct n4_client *k)
{
	struct xb a;

	n4_begin(k, &a, 2);
	xb_u32(&a, N4_PUTROOTFH);
	xb_u32(&a, N4_GETATTR);
	xb_u32(&a, 1);
	xb_u32(&a, 1u << 1); /* type */
	return n4_call_done(k, &a);
}

int n4_getattr_cs(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint64_t *change, uint64_t *size)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_GETATTR);
	xb_u32(&a, 1);
	xb_u32(&a, 1u << 3 | 1u << 4); /* change, size */
	st = n4_call(k, &a, &r);
	if (st == 0 && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, N4_GETATTR) == 0) {
		uint32_t words = xd_u32(&r.body);

		xd_skip(&r.body, 4 * (words <= 4 ? words : 0));
		if (xd_u32(&r.body) == 16) { /* attrlist4: change, size */
			*change = xd_u64(&r.body);
			*size = xd_u64(&r.body);
		}
		st = r.body.bad ? -1 : 0;
	}
	raw_reply_free(&r);
	return st;
}

/* ---- a neighbour that must stay answered ---------------------------------- */

static void *n4_watch_run(void *arg)
{
	struct n4_watch *w = arg;

	/* At least one probe, however late this thread first runs (a loaded
	 * machine: stopped before it was scheduled, it would prove nothing). */
	do {
		double t0 = n4_now();
		int st = n4_getattr_root(&w->k);
		double dt = n4_now() - t0;

		w->calls++;
		if (dt > w->slowest_s)
			w->slowest_s = dt;
		if (st != 0) {
			w->failed++;
			w->last_bad_status = st;
			if (st < 0) /* the connection is gone: no point going on */
				break;
		}
		usleep(100 * 1000);
	} while (!w->stop);
	return NULL;
}

int n4_watch_start(struct n4_watch *w, uint16_t port, const char *id)
{
	memset(w, 0, sizeof(*w));
	if (n4_start(&w->k, port, 1, id) != 0)
		return -1;
	if (pthread_create(&w->thread, NULL, n4_watch_run, w) != 0) {
		n4_client_close(&w->k);
		return -1;
	}
	w->running = true;
	return 0;
}

double n4_watch_stop(struct n4_watch *w)
{
	if (w->running) {
		w->stop = true;
		pthread_join(w->thread, NULL);
		w->running = false;
		n4_client_close(&w->k);
	}
	return w->slowest_s;
}

/* ---- the daemon's resources --------------------------------------------- */

long n4_proc_fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	long n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

long n4_proc_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

long n4_proc_quarantine_kb(pid_t pid)
{
	char path[64], line[512];
	long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	while (!kb && fgets(line, sizeof(line), f))
		kb = strstr(line, "libasan") || strstr(line, "libtsan") ? 256 * 1024 : 0;
	fclose(f);
	return kb;
}

char *n4_stats_json(const char *socket_path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *doc = NULL;
	size_t len = 0;
	int fd;

	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return NULL;
	memcpy(sa.sun_path, socket_path, strlen(socket_path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	(void)!write(fd, "stats\n", 6);
	for (;;) {
		char chunk[4096], *more;
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n <= 0 || !(more = realloc(doc, len + (size_t)n + 1)))
			break;
		doc = more;
		memcpy(doc + len, chunk, (size_t)n);
		len += (size_t)n;
		doc[len] = '\0';
	}
	close(fd);
	return doc;
}

long long n4_stats_num(const char *doc, const char *obj, const char *key)
{
	char want[96];
	const char *p;

	snprintf(want, sizeof(want), "\"%s\": {", obj);
	p = doc ? strstr(doc, want) : NULL;
	snprintf(want, sizeof(want), "\"%s\": ", key);
	p = p ? strstr(p, want) : NULL;
	return p ? strtoll(p + strlen(want), NULL, 10) : -1;
}

bool n4_stats_moved(const char *before, const char *after, const char *obj, const char *prefix, const char *key,
		    long long n, char *why, size_t why_len)
{
	char want[96], name[96];
	const char *p;
	bool ok = before && after && (!key || n4_stats_num(after, obj, key) >= 0), seen = !key;

	snprintf(want, sizeof(want), "\"%s\": {", obj);
	p = after ? strstr(after, want) : NULL;
	if (!p)
		return false;
	/* A flat object: "name": number, ... } */
	for (p += strlen(want); (p = strchr(p, '"')) != NULL;) {
		const char *q = strchr(p + 1, '"');
		char *end;

		if (!q || q[1] != ':' || (size_t)(q - p - 1) >= sizeof(name))
			break;
		memcpy(name, p + 1, (size_t)(q - p - 1));
		name[q - p - 1] = '\0';
		long long b = n4_stats_num(before, obj, name), a = strtoll(q + 2, &end, 10);
		long long grow = key && !strcmp(name, key) ? n : 0;

		seen |= key && !strcmp(name, key);
		if (!strncmp(name, prefix, strlen(prefix)) && a - b != grow) {
			ok = false;
			if (why && strlen(why) + 1 < why_len)
				snprintf(why + strlen(why), why_len - strlen(why), "%s %lld->%lld; ", name, b, a);
		}
		p = end;
		while (*p == ' ' || *p == ',')
			p++;
		if (*p != '"')
			break; /* the object's end (or a value not a number) */
	}
	return ok && seen;
}

