/*
 * test_nfs4_cb.c - NFSv4 callback paths through the real daemon, with
 * nfs4raw.h's client (its on_cb hook) and this file playing the client's
 * callback service (cb_parse, cb_answer, cb_wait):
 *  - 4.1, a client that answers: CREATE_SESSION with CONN_BACK_CHAN on its
 *    TCP connection gets the flag back; on that same connection the server
 *    sends CB_NULL (program = csa_cb_program, version 1 as knfsd), then CB_COMPOUND
 *    (the session's minor version: 1, and 2 for a 4.2 session) whose
 *    CB_SEQUENCE names the session, slot 0, seqid 1;
 *    once answered, SEQUENCE reports no CB_PATH_DOWN and the stats socket
 *    shows the back channel "up" with 2 calls sent and answered;
 *  - 4.1, a client that never answers: its fore channel keeps working (each
 *    SEQUENCE answered at once) and within a bounded time SEQUENCE carries
 *    SEQ4_STATUS_CB_PATH_DOWN and _SESSION; stats "down";
 *  - BIND_CONN_TO_SESSION of a second connection with CDFC4_BACK: answered
 *    CDFS4_BACK, the probe arrives on the new connection, answered, the flags
 *    clear; CDFC4_FORE on a third: CDFS4_FORE; an unknown session: BADSESSION;
 *  - a session without CONN_BACK_CHAN: no flag back, CB_PATH_DOWN reported;
 *  - BACKCHANNEL_CTL with a new program: the path is probed again with it;
 *  - 4.0: SETCLIENTID with a cb_location on a loopback listener, then
 *    SETCLIENTID_CONFIRM: a CB_NULL (program = cb_program, version 1)
 *    arrives on a connection the server opens; answered: stats "up";
 *  - delegations ([nfsv4] delegations = yes, lease-time = 10): client A's OPEN
 *    for reading gets a read delegation (the stats gauge shows it); B's
 *    OPEN for writing gets N4ERR_DELAY and A's back channel carries
 *    CB_COMPOUND{CB_SEQUENCE, CB_RECALL} naming A's delegation stateid
 *    and file; B stays DELAYed until A's DELEGRETURN, then opens; the
 *    stats count the recall and the return;
 *  - a holder that answers CB_RECALL but never returns: the other
 *    client's retried OPEN is always answered at once (DELAY) and
 *    succeeds within a few leases; the holder's SEQUENCE then carries
 *    SEQ4_STATUS_RECALLABLE_STATE_REVOKED, READ and TEST_STATEID with the
 *    delegation stateid answer N4ERR_DELEG_REVOKED, FREE_STATEID frees it
 *    and the flag clears; the stats count it revoked;
 *  - an NFSv3 WRITE, then REMOVE, of a delegated file: NFS3ERR_JUKEBOX and
 *    CB_RECALL until DELEGRETURN, then it is written (removed);
 *  - another client's LOCK (READ_LT, from its own read open) of a file with
 *    a read delegation: N4ERR_DELAY and CB_RECALL (the holder keeps its
 *    locks locally), granted after DELEGRETURN; no delegation is granted
 *    on a file with byte-range locks (OPEN_DELEGATE_NONE_EXT, CONTENTION);
 *  - an NLM TEST of a delegated file: NLM4_DENIED_GRACE_PERIOD and
 *    CB_RECALL, then NLM4_GRANTED after DELEGRETURN;
 *  - a local process (a thread of this test, on the exported directory)
 *    opening for writing or truncating a file with a read delegation, or
 *    opening, truncating or opening and fcntl-locking one with a write
 *    delegation: the call waits in the kernel (the file's lease), the holder
 *    gets CB_RECALL at once, the call completes just after DELEGRETURN;
 *    renaming or unlinking one: CB_RECALL after the fact (no fcntl lease
 *    breaks for those); a local open for reading keeps a read delegation,
 *    whose read-only open answers WRITE_LT with NFS4ERR_OPENMODE;
 *    a file open locally for writing gets none (WND4_CONTENTION); a holder
 *    that never returns is revoked after a lease and the local open then
 *    proceeds; the holder's own LOCK under its write delegation is granted
 *    (on the lease's own description) and recalls nothing, a local open
 *    still meets the lease (and recalls), and after DELEGRETURN a local
 *    conflicting lock is refused;
 *  - a write delegation (OPEN for writing, no other client): SETATTR of
 *    the size with its stateid is accepted (the Linux client truncates so);
 *  - CB_GETATTR (RFC 8881 §10.4.3): another client's or an NFSv3 GETATTR of
 *    a write-delegated file sends the holder CB_GETATTR(fh, change|size)
 *    and answers with the holder's size and a change past the server's when
 *    the holder reports a modification (the same change again while nothing
 *    more changed); the holder's own GETATTR sends none; a holder silent for
 *    the bounded wait: DELAY at once and a CB_RECALL;
 *  - restarted with [nfsv4] delegations = no: the same OPEN gets no
 *    delegation (OPEN_DELEGATE_NONE; with a want, NONE_EXT);
 *  - restarted with lease-time 50, over the kernel's lease-break-time (45
 *    s): the start-up log says so; a read delegation recalled for a local
 *    open and never returned is revoked by rnfsd's own timer 3 s before the
 *    kernel would let the open in: the open proceeds then, the holder sees
 *    RECALLABLE_STATE_REVOKED and DELEG_REVOKED;
 *  - 4.2 asynchronous COPY (RFC 7862 §15.2.3) of 24 MiB: a copy stateid at
 *    once, OFFLOAD_STATUS before the CB_OFFLOAD is answered, CB_OFFLOAD with
 *    the handle, stateid, NFS4_OK and the whole count, the destination equal
 *    to the source; OFFLOAD_CANCEL of a second one (then BAD_STATEID, and a
 *    CB_OFFLOAD still); ca_synchronous true stays synchronous; stats;
 *  - an asynchronous COPY of a 1 GiB file on an export added at run time
 *    (rnfsctl export add) stops when the export is removed (rnfsctl export
 *    remove): the destination stays shorter than the source and the daemon
 *    says so, rather than the copy holding the old table to its end (on
 *    main it copies the whole file);
 *  - 4.1 CB_NOTIFY_LOCK (RFC 8881 §20.11): OPEN says MAY_NOTIFY_LOCK; B's
 *    WRITEW_LT denied by A's lock; A's LOCKU brings B a CB_NOTIFY_LOCK
 *    naming the file and B's lock owner; B's LOCK then succeeds;
 *  - the stats' "nfs4_delegations" (issue 26 item 7), after each recall
 *    above: exactly its cause's counter moved, by one (recalls_moved): nfs4
 *    (OPEN, LOCK, an unanswered CB_GETATTR, an OPEN_XOR delegation), nfs3
 *    (WRITE, REMOVE, a GETATTR whose CB_GETATTR is unanswered), nlm (TEST), local_open (each local open, truncate,
 *    open + lock, rename, unlink), no directory recall, revoked_unanswered
 *    for the revocations; the kinds (read; attribute, not read, for
 *    READ_ATTRS_DELEG).
 */
#include <pthread.h>
#include <stdatomic.h>
#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hx_env env;
static uint32_t xid = 0x43420000;
static char stats_path[600];

#define CB_PROG 0x40000000u
#define CB_PROG2 0x40000123u
#define CB_PROG40 0x40000007u
#define SEQ4_STATUS_CB_PATH_DOWN 0x1u
#define SEQ4_STATUS_CB_PATH_DOWN_SESSION 0x200u
#define SEQ4_STATUS_RECALLABLE_STATE_REVOKED 0x40u
#define LEASE 10 /* [nfsv4] lease-time of the daemon */
#define NFS4_BREAK_MARGIN 3u /* nfs4_deleg.h NFS4_DL_BREAK_MARGIN */

/* What the server's last callback call said. */
struct cb_call {
	uint32_t xid, prog, vers, proc;
	uint32_t minor, nops, op, seqid, slotid;
	uint8_t sid[16];
	uint32_t op2;        /* the operation after CB_SEQUENCE (0: none) */
	uint32_t args_len;   /* its arguments' bytes (up to sizeof(args)) */
	uint8_t args[1400];
	struct n4_sid dsid;  /* CB_RECALL's stateid */
	uint32_t fh_len;
	uint8_t fh[128];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Decode a CALL message (RFC 5531 §9) and its CB_COMPOUND's CB_SEQUENCE (nfs4raw's n4_cb_parse),
 * keeping the bytes of the operation after it. */
static bool cb_parse(const uint8_t *buf, size_t len, struct cb_call *cc)
{
	struct n4_cb_call n;
	bool ok = n4_cb_parse(buf, len, &n);

	memset(cc, 0, sizeof(*cc));
	cc->xid = n.xid, cc->prog = n.prog, cc->vers = n.vers, cc->proc = n.proc;
	cc->minor = n.minor, cc->nops = n.nops, cc->op = n.op, cc->seqid = n.seqid, cc->slotid = n.slotid;
	memcpy(cc->sid, n.sid, sizeof(cc->sid));
	cc->op2 = n.op2, cc->dsid = n.dsid, cc->fh_len = n.fh_len;
	memcpy(cc->fh, n.fh, sizeof(cc->fh));
	if (n.op2 && n.args_off <= len) {
		cc->args_len = (uint32_t)(len - n.args_off) < sizeof(cc->args) ? (uint32_t)(len - n.args_off)
										  : (uint32_t)sizeof(cc->args);
		memcpy(cc->args, buf + n.args_off, cc->args_len);
	}
	return ok;
}

/* cc as nfs4raw's struct n4_cb_call, as far as a reply needs it. */
static struct n4_cb_call cb_n4(const struct cb_call *cc)
{
	struct n4_cb_call n = { .xid = cc->xid, .proc = cc->proc, .op2 = cc->op2, .seqid = cc->seqid,
				.slotid = cc->slotid };

	memcpy(n.sid, cc->sid, sizeof(n.sid));
	return n;
}

/* Answer cc: CB_NULL with nothing, CB_COMPOUND with CB_SEQUENCE4resok echoing
 * it and NFS4_OK for the operation after (nfs4raw's n4_cb_answer). */
static void cb_answer(struct raw_conn *c, const struct cb_call *cc)
{
	struct n4_cb_call n = cb_n4(cc);

	n4_cb_answer(c, &n);
}

/* As cb_answer, but a CB_GETATTR's fattr4 carries change and size (nfs4raw's n4_cb_answer_getattr). */
static void cb_answer_getattr(struct raw_conn *c, const struct cb_call *cc, uint64_t change, uint64_t size)
{
	struct n4_cb_call n = cb_n4(cc);

	n4_cb_answer_getattr(c, &n, change, size);
}

/* As cb_answer_getattr with ga (change, size), and ts: RFC 9754 time_deleg_access's and
 * time_deleg_modify's seconds and nanoseconds in the fattr4 too. */
static void cb_answer_ga_ts(struct raw_conn *c, const struct cb_call *cc, const uint64_t *ga, const uint64_t *ts)
{
	struct n4_cb_call n = cb_n4(cc);
	struct xb b;

	xb_init(&b);
	n4_xb_cb_reply(&b, &n); /* CB_GETATTR4res: NFS4_OK */
	if (cc->proc == 1 && cc->op2 == 3) { /* CB_GETATTR4resok: fattr4 {change, size, time_deleg_*} */
		xb_u32(&b, 3);
		xb_u32(&b, 1u << 3 | 1u << 4);
		xb_u32(&b, 0);
		xb_u32(&b, 1u << 20 | 1u << 21);
		xb_u32(&b, 40);
		xb_u64(&b, ga[0]);
		xb_u64(&b, ga[1]);
		for (int i = 0; i < 4; i += 2) {
			xb_u64(&b, ts[i]);
			xb_u32(&b, (uint32_t)ts[i + 1]);
		}
	}
	raw_send_record(c, b.p, b.len);
	xb_free(&b);
}

/* Callback calls that arrived while a COMPOUND waited for its reply (kept for cb_wait). */
static struct {
	int fd;
	struct cb_call cc;
} cb_q[16];
static unsigned cb_qn;

/* Wait up to timeout_ms for a callback call on c: true and *cc filled. */
static bool cb_wait(struct raw_conn *c, struct cb_call *cc, int timeout_ms)
{
	uint8_t *buf = NULL;
	size_t len;
	bool ok;

	for (unsigned i = 0; i < cb_qn; i++)
		if (cb_q[i].fd == c->fd) {
			*cc = cb_q[i].cc;
			memmove(&cb_q[i], &cb_q[i + 1], (cb_qn - i - 1) * sizeof(cb_q[0]));
			cb_qn--;
			return true;
		}
	if (raw_recv_record(c, &buf, &len, timeout_ms) != RAW_RECV_OK)
		return false;
	ok = cb_parse(buf, len, cc);
	free(buf);
	return ok;
}

/* Close c, forgetting the calls kept for it (its descriptor is reused). */
static void cb_close(struct raw_conn *c)
{
	unsigned n = 0;

	for (unsigned i = 0; i < cb_qn; i++)
		if (cb_q[i].fd != c->fd)
			cb_q[n++] = cb_q[i];
	cb_qn = n;
	raw_close(c);
}

/* Whether callback calls arriving before a reply are answered at once, or
 * kept for cb_wait() (the default). */
static bool cb_answer_now;

/* nfs4raw's hook for callback calls arriving on a client's connection. */
static void on_cb(struct n4_client *k, const uint8_t *msg, size_t len)
{
	struct cb_call cc;

	if (!cb_parse(msg, len, &cc))
		return;
	if (cb_answer_now)
		cb_answer(&k->c, &cc);
	else if (cb_qn < 16)
		cb_q[cb_qn].fd = k->c.fd, cb_q[cb_qn++].cc = cc;
}

/* n4_call (a freed) answering the callbacks that come first (answer), or keeping them. */
static int call(struct n4_client *k, struct xb *a, struct raw_reply *r, bool answer)
{
	int st;

	cb_answer_now = answer;
	st = n4_call(k, a, r);
	cb_answer_now = false;
	return st;
}

/* Connect k (minor version minor) as a client that plays its callback service. */
static bool cb_connect(struct n4_client *k, uint32_t minor, const char *what)
{
	if (!CHECK(n4_connect(k, env.port, minor) == 0, "%s", what))
		return false;
	k->on_cb = on_cb;
	k->cb_prog = CB_PROG;
	k->cb_sys = true;
	return true;
}

/* EXCHANGE_ID + CREATE_SESSION (flags; the callback program, AUTH_SYS then AUTH_NONE). */
static void session(struct n4_client *k, const char *id, uint32_t flags)
{
	uint32_t seq = 0;

	memcpy(k->verifier, "verifcb!", 8);
	k->cs_flags = flags;
	CHECK_EQ(n4_exchange_id(k, id, &seq), 0, "EXCHANGE_ID %s", id);
	CHECK_EQ(n4_create_session(k, seq), 0, "CREATE_SESSION %s", id);
}

/* SEQUENCE [+ PUTROOTFH, GETFH]: its status; *flags the sr_status_flags. */
static int sequence(struct n4_client *k, bool more, uint32_t *flags, bool answer)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin(k, &a, more ? 2 : 0);
	if (more) {
		xb_u32(&a, N4_PUTROOTFH);
		xb_u32(&a, N4_GETFH);
	}
	k->seq_flags = *flags;
	st = call(k, &a, &r, answer);
	*flags = k->seq_flags;
	raw_reply_free(&r);
	return st;
}

/* The stats socket's JSON document (malloc'ed), or NULL. */
static char *stats_json(void)
{
	return n4_stats_json(stats_path);
}

/* The "nfs4_callbacks" entry of clientid contains want (e.g. "\"state\": \"up\""). */
static bool stats_has(uint64_t cid, const char *want)
{
	char key[64];
	char *doc = stats_json();
	bool ok = false;

	snprintf(key, sizeof(key), "\"clientid\": \"%016llx\"", (unsigned long long)cid);
	char *p = doc ? strstr(doc, key) : NULL;
	char *end = p ? strchr(p, '}') : NULL;
	if (end) {
		*end = '\0';
		ok = strstr(p, want) != NULL;
	}
	if (!ok && doc)
		hx_note("stats: %s", p ? p : doc);
	free(doc);
	return ok;
}

/*
 * Poll SEQUENCE until its flags & mask == want, up to limit_s; its time, or -1.
 * One check for all the polls (how many there are depends on the host's
 * speed; a check per poll made the test's count vary between runs).
 */
static double wait_flags(struct n4_client *k, uint32_t mask, uint32_t want, double limit_s, bool answer)
{
	double t0 = now_s(), slowest = 0, t = -1;
	unsigned polls = 0;
	int st = 0;

	while (now_s() - t0 < limit_s) {
		uint32_t flags = 0xffffffffu;
		double t1 = now_s();

		st = sequence(k, true, &flags, answer);
		polls++;
		if (now_s() - t1 > slowest)
			slowest = now_s() - t1;
		if (st != 0 || slowest >= 1.0)
			break;
		if ((flags & mask) == want) {
			t = now_s() - t0;
			break;
		}
		usleep(200 * 1000);
	}
	/* The fore channel is never held up by the back channel. */
	if (!CHECK(st == 0 && slowest < 1.0,
		   "SEQUENCE+PUTROOTFH+GETFH answered at once, %u polls (status %d, slowest %.2f s)", polls, st,
		   slowest))
		return -1;
	return t;
}

static void test_answering(uint32_t minor)
{
	struct n4_client k;
	struct cb_call cc;
	char id[32];

	hx_section("4.%u: a back channel on the session's connection, answered", minor);
	if (!cb_connect(&k, minor, "connect"))
		return;
	snprintf(id, sizeof(id), "cb-answer-%u", minor);
	session(&k, id, N4_CS_BACK_CHAN);
	CHECK_EQ(k.csr_flags & 0x2, 0x2, "csr_flags: CONN_BACK_CHAN granted");
	if (CHECK(cb_wait(&k.c, &cc, 5000), "a callback arrives on the same connection")) {
		CHECK_EQ(cc.prog, CB_PROG, "program = csa_cb_program");
		CHECK_EQ(cc.vers, 1, "callback version 1 (RFC 8881 §20 XDR, as knfsd)");
		CHECK_EQ(cc.proc, 0, "CB_NULL first");
		cb_answer(&k.c, &cc);
	}
	if (CHECK(cb_wait(&k.c, &cc, 5000), "then a CB_COMPOUND")) {
		CHECK_EQ(cc.proc, 1, "CB_COMPOUND");
		CHECK_EQ(cc.minor, minor, "the session's minor version");
		CHECK_EQ(cc.op, 11, "CB_SEQUENCE first");
		CHECK(memcmp(cc.sid, k.session, 16) == 0, "CB_SEQUENCE names the session");
		CHECK_EQ(cc.slotid, 0, "slot 0");
		CHECK_EQ(cc.seqid, 1, "seqid 1 on a new slot");
		cb_answer(&k.c, &cc);
	}
	CHECK(wait_flags(&k, SEQ4_STATUS_CB_PATH_DOWN, 0, 5, true) >= 0, "SEQUENCE: no CB_PATH_DOWN");
	char want[128];
	snprintf(want, sizeof(want), "\"minor\": %u, \"state\": \"up\", \"transport\": \"tcp\", \"sent\": 2, \"ok\": 2, \"failed\": 0",
		 minor);
	CHECK(stats_has(k.cid, want), "stats: back channel up, 2 callbacks answered");
	cb_close(&k.c);
}

/* BIND_CONN_TO_SESSION (RFC 8881 §18.34) of k's connection to session sid, direction dir: the
 * COMPOUND's status; the session echoed into echo[16], the direction granted into *got. */
static int bind_conn(struct n4_client *k, const uint8_t *sid, uint32_t dir, uint8_t *echo, uint32_t *got)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_alone(k, &a, N4_BIND_CONN_TO_SESSION);
	xb_raw(&a, sid, 16);
	xb_u32(&a, dir);
	xb_u32(&a, 0); /* no RDMA mode */
	st = call(k, &a, &r, false);
	if (st == 0 && n4_res(&r, N4_BIND_CONN_TO_SESSION) == 0 && r.body.pos + 16 <= r.body.len) {
		memcpy(echo, r.body.p + r.body.pos, 16);
		xd_skip(&r.body, 16);
		*got = xd_u32(&r.body);
	}
	raw_reply_free(&r);
	return st;
}

/* BIND_CONN_TO_SESSION with CDFC4_FORE: the fore channel only; an unknown session: BADSESSION. */
static void test_bind_fore(const uint8_t sid[16])
{
	struct n4_client c3;
	uint8_t echo[16];
	uint32_t dir = 0;

	if (!cb_connect(&c3, 1, "third connection"))
		return;
	if (CHECK_EQ(bind_conn(&c3, sid, 0x1, echo, &dir), 0, "BIND_CONN_TO_SESSION CDFC4_FORE"))
		CHECK_EQ(dir, 0x1, "CDFS4_FORE");
	CHECK_EQ(bind_conn(&c3, (const uint8_t *)"no-such-session!", 0x3, echo, &dir), N4ERR_BADSESSION,
		 "unknown session: BADSESSION");
	cb_close(&c3.c);
}

/* BACKCHANNEL_CTL on k (fore): a new program, probed again on bc (the bound connection). */
static void test_backchannel_ctl(struct n4_client *k, struct raw_conn *bc)
{
	struct raw_reply r;
	struct cb_call cc;
	struct xb a;

	n4_begin(k, &a, 1);
	xb_u32(&a, N4_BACKCHANNEL_CTL);
	xb_u32(&a, CB_PROG2);
	xb_u32(&a, 1);
	xb_u32(&a, 0); /* AUTH_NONE */
	CHECK_EQ(call(k, &a, &r, false), 0, "SEQUENCE + BACKCHANNEL_CTL");
	raw_reply_free(&r);
	if (CHECK(cb_wait(bc, &cc, 5000), "probed again after BACKCHANNEL_CTL")) {
		CHECK_EQ(cc.prog, CB_PROG2, "with the new program");
		cb_answer(bc, &cc);
		if (CHECK(cb_wait(bc, &cc, 5000), "its CB_SEQUENCE"))
			CHECK_EQ(cc.seqid, 2, "the slot's seqid went on to 2");
		cb_answer(bc, &cc);
	}
}

static void test_mute_and_bind(void)
{
	struct n4_client k, c2;
	struct cb_call cc;
	uint8_t echo[16] = { 0 };
	uint32_t dir = 0;

	hx_section("4.1: a client that does not answer; BIND_CONN_TO_SESSION");
	if (!cb_connect(&k, 1, "connect"))
		return;
	session(&k, "cb-mute", N4_CS_BACK_CHAN);
	CHECK_EQ(k.csr_flags & 0x2, 0x2, "CONN_BACK_CHAN granted");
	double t = wait_flags(&k, SEQ4_STATUS_CB_PATH_DOWN | SEQ4_STATUS_CB_PATH_DOWN_SESSION,
			      SEQ4_STATUS_CB_PATH_DOWN | SEQ4_STATUS_CB_PATH_DOWN_SESSION, 15, false);
	CHECK(t >= 0, "SEQUENCE reports CB_PATH_DOWN and CB_PATH_DOWN_SESSION (after %.1f s)", t);
	CHECK(stats_has(k.cid, "\"state\": \"down\""), "stats: back channel down");

	if (!cb_connect(&c2, 1, "second connection"))
		goto out;
	if (CHECK_EQ(bind_conn(&c2, k.session, 0x2 /* CDFC4_BACK */, echo, &dir), 0,
		     "BIND_CONN_TO_SESSION CDFC4_BACK")) {
		CHECK(memcmp(echo, k.session, 16) == 0, "the session echoed");
		CHECK_EQ(dir, 0x2, "CDFS4_BACK");
	}
	if (CHECK(cb_wait(&c2.c, &cc, 5000), "the probe arrives on the bound connection") &&
	    CHECK_EQ(cc.proc, 0, "CB_NULL"))
		cb_answer(&c2.c, &cc);
	if (CHECK(cb_wait(&c2.c, &cc, 5000), "then CB_COMPOUND there")) {
		CHECK(memcmp(cc.sid, k.session, 16) == 0 && cc.op == 11 && cc.seqid == 1, "CB_SEQUENCE: session, seqid 1");
		cb_answer(&c2.c, &cc);
	}
	CHECK(wait_flags(&k, SEQ4_STATUS_CB_PATH_DOWN, 0, 5, false) >= 0,
	      "SEQUENCE on the first connection: CB_PATH_DOWN cleared");
	CHECK(stats_has(k.cid, "\"state\": \"up\""), "stats: back channel up again");

	test_bind_fore(k.session);
	test_backchannel_ctl(&k, &c2.c);
	cb_close(&c2.c);
out:
	cb_close(&k.c);
}

static void test_no_back_chan(void)
{
	struct n4_client k;

	hx_section("4.1: a session without CONN_BACK_CHAN");
	if (!cb_connect(&k, 1, "connect"))
		return;
	k.csr_flags = 0xff;
	session(&k, "cb-none", 0);
	CHECK_EQ(k.csr_flags & 0x2, 0, "no CONN_BACK_CHAN in csr_flags");
	CHECK(wait_flags(&k, SEQ4_STATUS_CB_PATH_DOWN, SEQ4_STATUS_CB_PATH_DOWN, 2, false) >= 0,
	      "SEQUENCE: CB_PATH_DOWN (no back channel)");
	cb_close(&k.c);
}

static void test_v40(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	struct n4_client k;
	struct raw_conn cb = { .fd = -1 }; /* the io hook NULL: the accepted socket itself */
	struct cb_call cc;
	uint8_t confirm[8] = { 0 };

	hx_section("4.0: CB_NULL to SETCLIENTID's cb_location after SETCLIENTID_CONFIRM");
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (!CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lfd, 4) == 0 &&
			   getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0,
		   "a loopback listener") ||
	    !cb_connect(&k, 0, "connect"))
		return;
	snprintf(k.cb_addr, sizeof(k.cb_addr), "127.0.0.1.%u.%u", ntohs(sa.sin_port) >> 8, ntohs(sa.sin_port) & 255);
	memcpy(k.verifier, "verif40!", 8);
	k.cb_prog = CB_PROG40;
	k.cb_ident = 77;
	CHECK_EQ(n4_setclientid(&k, "cb-40", confirm), 0, "SETCLIENTID (%s)", k.cb_addr);
	CHECK_EQ(n4_setclientid_confirm(&k, confirm), 0, "SETCLIENTID_CONFIRM");
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	if (CHECK(poll(&p, 1, 5000) == 1, "the server connects to the callback address")) {
		cb.fd = accept(lfd, NULL, NULL);
		if (CHECK(cb.fd >= 0 && cb_wait(&cb, &cc, 5000), "a call arrives")) {
			CHECK_EQ(cc.prog, CB_PROG40, "program = cb_program");
			CHECK_EQ(cc.vers, 1, "callback version 1 (RFC 7530 §17)");
			CHECK_EQ(cc.proc, 0, "CB_NULL");
			cb_answer(&cb, &cc);
			double t0 = now_s();
			bool up = false;
			while (!up && now_s() - t0 < 3) {
				usleep(100 * 1000);
				up = stats_has(k.cid, "\"minor\": 0, \"state\": \"up\"");
			}
			CHECK(up, "stats: 4.0 callback path up");
		}
		cb_close(&cb);
	}
	close(lfd);
	cb_close(&k.c);
}

/* ---- asynchronous COPY (RFC 7862) and CB_NOTIFY_LOCK (RFC 8881 §20.11) ---- */

static long long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* nfs_cb_opnum4 (RFC 8881 §20, RFC 7862 §16) */
enum { OP_CB_NOTIFY_LOCK = 13, OP_CB_OFFLOAD = 15 };
#define COPY_SIZE (24u << 20) /* over the 16 MiB asynchronous threshold */

/* A 4.1/4.2 client k with a back channel on its one connection: session
 * with CONN_BACK_CHAN, its probe answered, RECLAIM_COMPLETE. Callbacks
 * arriving on its calls are kept for cb_wait(). */
static bool k_start(struct n4_client *k, const char *id, uint32_t minor)
{
	struct raw_reply r;
	struct cb_call cc;
	struct xb a;
	bool ok;

	char what[160];

	snprintf(what, sizeof(what), "connect %s", id);
	if (!cb_connect(k, minor, what))
		return false;
	session(k, id, N4_CS_BACK_CHAN);
	for (int i = 0; i < 2; i++) /* CB_NULL, CB_COMPOUND(CB_SEQUENCE) */
		if (CHECK(cb_wait(&k->c, &cc, 5000), "%s: probe %d", id, i))
			cb_answer(&k->c, &cc);
	n4_begin(k, &a, 1);
	xb_u32(&a, N4_RECLAIM_COMPLETE);
	xb_u32(&a, 0);
	ok = CHECK_EQ(call(k, &a, &r, false), 0, "%s: RECLAIM_COMPLETE", id);
	raw_reply_free(&r);
	return ok;
}

/* OPEN name in the export for both (create: UNCHECKED4), GETFH: its status; the rflags. */
static int k_open(struct n4_client *k, const char *name, bool create, const char *owner, struct n4_sid *sid,
		  uint8_t *fh, uint32_t *fh_len, uint32_t *rflags)
{
	int st = n4_open(k, env.export_dir, name, create, N4_ACCESS_BOTH, 0, owner, NULL, sid, fh, fh_len);

	*rflags = k->open_rflags;
	return st;
}

/* Write size bytes of a pattern to the export's file name. */
static bool make_file(const char *name, uint32_t size, uint8_t seed)
{
	char path[PATH_MAX + 64];
	static uint8_t buf[1u << 20];
	FILE *f;
	bool ok = true;

	snprintf(path, sizeof(path), "%s/%s", env.export_dir, name);
	f = fopen(path, "w");
	if (!f)
		return false;
	for (uint32_t off = 0; off < size && ok; off += sizeof(buf)) {
		for (uint32_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)((off + i) * 131u / 7u + seed);
		ok = fwrite(buf, 1, sizeof(buf), f) == sizeof(buf);
	}
	return fclose(f) == 0 && ok;
}

/* The two export files hold the same bytes. */
static bool same_files(const char *a, const char *b)
{
	char pa[PATH_MAX + 64], pb[PATH_MAX + 64];
	static uint8_t ba[1u << 16], bb[1u << 16];
	FILE *fa, *fb;
	bool same = true;

	snprintf(pa, sizeof(pa), "%s/%s", env.export_dir, a);
	snprintf(pb, sizeof(pb), "%s/%s", env.export_dir, b);
	fa = fopen(pa, "r"), fb = fopen(pb, "r");
	while (same && fa && fb) {
		size_t na = fread(ba, 1, sizeof(ba), fa), nb = fread(bb, 1, sizeof(bb), fb);
		same = na == nb && !memcmp(ba, bb, na);
		if (!na)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same && fa && fb;
}

struct copy_reply {
	int st;
	uint32_t ncb; /* wr_callback_id entries */
	struct n4_sid cb;
	uint64_t count;
	uint32_t synchronous;
};

/* PUTFH src, SAVEFH, PUTFH dst, COPY [0, count) to 0. */
static void k_copy(struct n4_client *k, const uint8_t *sfh, uint32_t sfl, const struct n4_sid *ss, const uint8_t *dfh,
		   uint32_t dfl, const struct n4_sid *ds, uint64_t count, bool synchronous, struct copy_reply *cr)
{
	struct raw_reply r;
	struct xb a;

	memset(cr, 0, sizeof(*cr));
	n4_begin(k, &a, 4);
	xb_u32(&a, N4_PUTFH);
	xb_opaque(&a, sfh, sfl);
	xb_u32(&a, N4_SAVEFH);
	xb_u32(&a, N4_PUTFH);
	xb_opaque(&a, dfh, dfl);
	xb_u32(&a, N4_COPY);
	n4_xb_sid(&a, ss);
	n4_xb_sid(&a, ds);
	xb_u64(&a, 0);
	xb_u64(&a, 0);
	xb_u64(&a, count);
	xb_u32(&a, 1);           /* ca_consecutive */
	xb_u32(&a, synchronous); /* ca_synchronous */
	xb_u32(&a, 0);           /* no source servers */
	cr->st = call(k, &a, &r, false);
	if (cr->st == 0) {
		n4_res(&r, N4_PUTFH), n4_res(&r, N4_SAVEFH), n4_res(&r, N4_PUTFH), n4_res(&r, N4_COPY);
		cr->ncb = xd_u32(&r.body);
		if (cr->ncb == 1)
			n4_xd_sid(&r.body, &cr->cb);
		cr->count = xd_u64(&r.body);
		xd_skip(&r.body, 4 + 8 + 4);
		cr->synchronous = xd_u32(&r.body);
		if (r.body.bad)
			cr->st = -1;
	}
	raw_reply_free(&r);
}

/* OFFLOAD_STATUS (op 67) or OFFLOAD_CANCEL (66) of sid: the status; STATUS: *count, *ncomplete, *cstatus. */
static int k_offload(struct n4_client *k, uint32_t op, const uint8_t *fh, uint32_t fl, const struct n4_sid *sid,
		     uint64_t *count, uint32_t *ncomplete, uint32_t *cstatus)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin(k, &a, 2);
	xb_u32(&a, N4_PUTFH);
	xb_opaque(&a, fh, fl);
	xb_u32(&a, op);
	n4_xb_sid(&a, sid);
	st = call(k, &a, &r, false);
	if (st == 0 && op == N4_OFFLOAD_STATUS) {
		n4_res(&r, N4_PUTFH), n4_res(&r, op);
		*count = xd_u64(&r.body);
		*ncomplete = xd_u32(&r.body);
		*cstatus = *ncomplete ? xd_u32(&r.body) : 0;
	}
	raw_reply_free(&r);
	return st;
}

/* The next CB_OFFLOAD on k's connection: its stateid, status and count (answered). */
static bool k_cb_offload(struct n4_client *k, const uint8_t *dfh, uint32_t dfl, struct n4_sid *sid, uint32_t *st,
			 uint64_t *count)
{
	struct cb_call cc;
	struct xd d;
	uint32_t len;

	if (!cb_wait(&k->c, &cc, 8000) || cc.op2 != OP_CB_OFFLOAD)
		return false;
	xd_init(&d, cc.args, cc.args_len);
	const uint8_t *p = xd_opaque(&d, &len, 128); /* coa_fh */
	bool fh_ok = p && len == dfl && !memcmp(p, dfh, len);
	n4_xd_sid(&d, sid);
	*st = xd_u32(&d);
	if (*st == 0) {
		uint32_t ncb = xd_u32(&d);
		xd_skip(&d, ncb ? 16 : 0);
		*count = xd_u64(&d);
	} else {
		*count = xd_u64(&d); /* coa_bytes_copied */
	}
	cb_answer(&k->c, &cc);
	return !d.bad && CHECK(fh_ok, "CB_OFFLOAD names the destination's handle");
}

/* The "nfs4_async" object of the stats document contains want. */
static bool async_stats_has(const char *want)
{
	char *doc = stats_json(), *p = doc ? strstr(doc, "\"nfs4_async\"") : NULL;
	char *end = p ? strchr(p, '}') : NULL;
	bool ok = false;

	if (end) {
		*end = '\0';
		ok = strstr(p, want) != NULL;
		if (!ok)
			hx_note("stats: %s", p);
	}
	free(doc);
	return ok;
}

#define GONE_COPY_SIZE (1ll << 30)

/* An export added at run time carries an asynchronous COPY when it is removed. */
static void test_async_copy_export_gone(void)
{
	char dir[PATH_MAX], src[PATH_MAX + 8], dst[PATH_MAX + 8], out[1024];
	uint8_t sfh[128], dfh[128];
	uint32_t sfl = 0, dfl = 0;
	struct n4_sid ss, ds;
	struct copy_reply cr;
	struct n4_client k;
	struct n4_sid cbsid;
	uint64_t count = 0;
	uint32_t st = 0;
	long long size;
	bool got = false;
	int fd;

	hx_section("4.2: an asynchronous COPY stops when its export is removed");
	if (!getenv("RNFSCTL")) {
		printf("# RNFSCTL not set: skipped\n");
		return;
	}
	if (strlen(stats_path) >= sizeof(env.stats_socket))
		return;
	memcpy(env.stats_socket, stats_path, strlen(stats_path) + 1);
	snprintf(dir, sizeof(dir), "%s", hx_path(&env, "exportC"));
	snprintf(src, sizeof(src), "%s/big", dir);
	snprintf(dst, sizeof(dst), "%s/bigdst", dir);
	mkdir(dir, 0755);
	fd = open(src, O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0 && ftruncate(fd, GONE_COPY_SIZE) == 0, "a 1 GiB (sparse) source");
	if (fd >= 0)
		close(fd);
	CHECK_EQ(hx_rnfsctl(&env, -1, out, sizeof(out),
			    (const char *const[]){ "export", "add", dir, "127.0.0.1(rw,no_root_squash,insecure)", NULL }),
		 0, "rnfsctl export add exportC: %s", out);
	if (!k_start(&k, "cb-copy-gone", 2))
		return;
	CHECK_EQ(n4_open(&k, dir, "big", false, N4_ACCESS_BOTH, 0, "o-big", NULL, &ss, sfh, &sfl), 0, "OPEN big");
	CHECK_EQ(n4_open(&k, dir, "bigdst", true, N4_ACCESS_BOTH, 0, "o-bigdst", NULL, &ds, dfh, &dfl), 0,
		 "OPEN bigdst (create)");
	k_copy(&k, sfh, sfl, &ss, dfh, dfl, &ds, 0, false, &cr);
	CHECK(cr.st == 0 && cr.ncb == 1, "COPY of the whole file is asynchronous");
	CHECK_EQ(hx_rnfsctl(&env, -1, out, sizeof(out), (const char *const[]){ "export", "remove", dir, NULL }), 0,
		 "rnfsctl export remove exportC at once: %s", out);
	/* The copy ends either way (on main, once the whole file is copied): its CB_OFFLOAD tells how far. */
	for (int i = 0; i < 15 && !got; i++)
		got = k_cb_offload(&k, dfh, dfl, &cbsid, &st, &count);
	CHECK(got, "CB_OFFLOAD arrives");
	CHECK(got && count < GONE_COPY_SIZE, "it reports a copy stopped short of the source (%llu of %lld bytes)",
	      (unsigned long long)count, GONE_COPY_SIZE);
	size = file_size(dst);
	CHECK(size >= 0 && size < GONE_COPY_SIZE, "the destination is shorter (%lld bytes)", size);
	CHECK_EQ(hx_log_count(&env, "asynchronous copies stopped"), 1, "the daemon says it stopped the copy");
	n4_client_close(&k);
	unlink(src);
	unlink(dst);
}

static void test_async_copy(void)
{
	uint8_t sfh[128], dfh[128], d2fh[128];
	uint32_t sfl = 0, dfl = 0, d2fl = 0, rf = 0, nc = 0, cst = 0, st = 0;
	struct n4_sid ss, ds, d2s, got, bogus = { 1, "nonesuchsid" };
	struct copy_reply cr;
	uint64_t count = 0;
	struct n4_client k;

	hx_section("4.2: asynchronous COPY, CB_OFFLOAD, OFFLOAD_STATUS, OFFLOAD_CANCEL");
	if (!CHECK(make_file("copysrc", COPY_SIZE, 7), "a %u-byte source file", COPY_SIZE) || !k_start(&k, "cb-copy", 2))
		return;
	CHECK_EQ(k_open(&k, "copysrc", false, "o-src", &ss, sfh, &sfl, &rf), 0, "OPEN copysrc");
	CHECK_EQ(k_open(&k, "copydst", true, "o-dst", &ds, dfh, &dfl, &rf), 0, "OPEN copydst (create)");
	CHECK_EQ(k_open(&k, "copydst2", true, "o-dst2", &d2s, d2fh, &d2fl, &rf), 0, "OPEN copydst2 (create)");

	/* RFC 7862 §15.2.3: a large copy the client lets be asynchronous answers at once with a copy stateid. */
	k_copy(&k, sfh, sfl, &ss, dfh, dfl, &ds, 0, false, &cr);
	CHECK_EQ(cr.st, 0, "COPY (ca_synchronous false, ca_count 0: to the end)");
	CHECK_EQ(cr.ncb, 1, "wr_callback_id names a copy stateid");
	CHECK_EQ(cr.synchronous, 0, "cr_synchronous false");
	/* The CB_OFFLOAD is not answered yet, so the copy's entry is still there: running or done. */
	CHECK_EQ(k_offload(&k, N4_OFFLOAD_STATUS, dfh, dfl, &cr.cb, &count, &nc, &cst), 0, "OFFLOAD_STATUS");
	CHECK(count <= COPY_SIZE && (nc == 0 || (nc == 1 && cst == 0 && count == COPY_SIZE)),
	      "osr_count %llu of %u, osr_complete<%u> %u", (unsigned long long)count, COPY_SIZE, nc, cst);
	if (CHECK(k_cb_offload(&k, dfh, dfl, &got, &st, &count), "CB_OFFLOAD arrives on the back channel")) {
		CHECK(memcmp(got.other, cr.cb.other, 12) == 0, "coa_stateid is the copy stateid");
		CHECK_EQ(st, 0, "coa_status NFS4_OK");
		CHECK_EQ(count, COPY_SIZE, "wr_count: the whole source");
	}
	CHECK(same_files("copysrc", "copydst"), "the destination holds the source's bytes");
	CHECK_EQ(k_offload(&k, N4_OFFLOAD_STATUS, dfh, dfl, &bogus, &count, &nc, &cst), N4ERR_BAD_STATEID,
		 "OFFLOAD_STATUS of an unknown stateid: BAD_STATEID");

	/* RFC 7862 §15.8.3: OFFLOAD_CANCEL stops it; the stateid names nothing afterwards. */
	k_copy(&k, sfh, sfl, &ss, d2fh, d2fl, &d2s, COPY_SIZE, false, &cr);
	CHECK(cr.st == 0 && cr.ncb == 1, "second asynchronous COPY");
	CHECK_EQ(k_offload(&k, N4_OFFLOAD_CANCEL, d2fh, d2fl, &cr.cb, NULL, NULL, NULL), 0, "OFFLOAD_CANCEL");
	CHECK_EQ(k_offload(&k, N4_OFFLOAD_STATUS, d2fh, d2fl, &cr.cb, &count, &nc, &cst), N4ERR_BAD_STATEID,
		 "OFFLOAD_STATUS after OFFLOAD_CANCEL: BAD_STATEID");
	if (CHECK(k_cb_offload(&k, d2fh, d2fl, &got, &st, &count), "CB_OFFLOAD after the cancel too"))
		CHECK(st == 0 && count <= COPY_SIZE, "status %u, %llu bytes (at most the range)", st,
		      (unsigned long long)count);

	/* ca_synchronous true: as before, no callback id, the bytes in the reply. */
	k_copy(&k, sfh, sfl, &ss, d2fh, d2fl, &d2s, COPY_SIZE, true, &cr);
	CHECK(cr.st == 0 && cr.ncb == 0 && cr.synchronous == 1 && cr.count == COPY_SIZE,
	      "synchronous COPY: no callback id, wr_count %llu", (unsigned long long)cr.count);
	CHECK(same_files("copysrc", "copydst2"), "the synchronous copy's destination matches");
	CHECK(async_stats_has("\"copies_started\": 2, \"copies_done\": 1, \"copies_cancelled\": 1, \"cb_offload_sent\": 2"),
	      "stats: 2 asynchronous copies, 1 done, 1 cancelled, 2 CB_OFFLOAD");
	cb_close(&k.c);
}

static void test_notify_lock(void)
{
	uint8_t fa[128], fb[128];
	uint32_t la = 0, lb = 0, rfa = 0, rfb = 0, len = 0;
	struct n4_sid oa, ob, lka, lkb;
	struct n4_client a, b;
	struct cb_call cc;

	hx_section("4.1: a blocked WRITEW_LT gets CB_NOTIFY_LOCK when the holder unlocks");
	if (!k_start(&a, "cb-lock-a", 1) || !k_start(&b, "cb-lock-b", 1))
		return;
	CHECK_EQ(k_open(&a, "lockf", true, "oo-a", &oa, fa, &la, &rfa), 0, "A: OPEN lockf");
	CHECK_EQ(k_open(&b, "lockf", true, "oo-b", &ob, fb, &lb, &rfb), 0, "B: OPEN lockf");
	CHECK_EQ(rfb & 0x20, 0x20, "OPEN4_RESULT_MAY_NOTIFY_LOCK (RFC 8881 §18.16.4)");
	CHECK_EQ(n4_lock_new(&a, fa, la, 2, 0, 100, &oa, NULL, "lo-a", &lka), 0, "A: LOCK WRITE_LT [0, 100)");
	CHECK_EQ(n4_lock_new(&b, fb, lb, 4, 0, 100, &ob, NULL, "lo-b", &lkb), N4ERR_DENIED, "B: LOCK WRITEW_LT denied");
	CHECK_EQ(n4_locku(&a, fa, la, &lka, NULL, 0, 100), 0, "A: LOCKU");
	if (CHECK(cb_wait(&b.c, &cc, 8000), "B: a callback arrives") &&
	    CHECK_EQ(cc.op2, OP_CB_NOTIFY_LOCK, "CB_NOTIFY_LOCK")) {
		struct xd d;
		xd_init(&d, cc.args, cc.args_len);
		const uint8_t *p = xd_opaque(&d, &len, 128);
		CHECK(p && len == lb && !memcmp(p, fb, len), "cna_fh is the file");
		CHECK_EQ(xd_u64(&d), b.cid, "cna_lock_owner.clientid is B's");
		p = xd_opaque(&d, &len, 1024);
		CHECK(p && len == 4 && !memcmp(p, "lo-b", 4), "cna_lock_owner.owner is B's lock owner");
		cb_answer(&b.c, &cc);
	}
	CHECK_EQ(n4_lock_new(&b, fb, lb, 4, 0, 100, &ob, NULL, "lo-b", &lkb), 0, "B: LOCK WRITEW_LT again: granted");
	CHECK(async_stats_has("\"cb_notify_lock_sent\": 1"), "stats: CB_NOTIFY_LOCK sent 1");
	cb_close(&a.c);
	cb_close(&b.c);
}

/* ---- delegations ---- */

/* Answer the probe (CB_NULL, CB_COMPOUND{CB_SEQUENCE}) of a new back channel on c. */
static bool answer_probe(struct raw_conn *c)
{
	struct cb_call cc;

	for (int i = 0; i < 2; i++) {
		if (!CHECK(cb_wait(c, &cc, 5000), "probe step %d arrives", i))
			return false;
		cb_answer(c, &cc);
	}
	return true;
}

struct dl_open {
	int status;          /* the COMPOUND's */
	uint32_t rflags;
	uint32_t deleg, why; /* open_delegation4's type; NONE_EXT's why */
	struct n4_sid osid;  /* the open stateid */
	struct n4_sid dsid;  /* the delegation stateid */
	uint32_t fh_len;
	uint8_t fh[128];
};

/* SEQUENCE, PUTROOTFH, LOOKUP to the export, OPEN (owner "o", UNCHECKED4
 * create when create) name for access (with want bits), GETFH. */
static void dl_open(struct n4_client *k, const char *name, uint32_t access, bool create, struct dl_open *o)
{
	struct raw_reply r;
	struct xb a;
	uint32_t n = n4_walk(NULL, env.export_dir);
	struct n4_openargs args = { .access = access, .cid = k->cid, .owner = "o", .no_attrs = true, .name = name,
				    .create = create ? N4_UNCHECKED : N4_NOCREATE };
	struct n4_openres res;

	memset(o, 0, sizeof(*o));
	n4_begin(k, &a, n + 2);
	n4_walk(&a, env.export_dir);
	n4_xb_openargs(&a, &args);
	xb_u32(&a, N4_GETFH);
	o->status = call(k, &a, &r, true);
	if (o->status != 0) {
		raw_reply_free(&r);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		n4_res(&r, i ? N4_LOOKUP : N4_PUTROOTFH);
	n4_res(&r, N4_OPEN);
	n4_xd_openres(&r.body, &res);
	o->osid = res.sid, o->dsid = res.dsid, o->deleg = res.deleg, o->why = res.why, o->rflags = res.rflags;
	if (n4_res(&r, N4_GETFH) == 0) {
		const uint8_t *fh = xd_opaque(&r.body, &o->fh_len, 128);
		if (fh)
			memcpy(o->fh, fh, o->fh_len);
	}
	/* Counted only when it fails: test_deleg_revoke calls this until the revocation, a number of
	 * times that depends on the host's speed. */
	if (r.body.bad)
		CHECK(false, "OPEN's reply decodes");
	raw_reply_free(&r);
}

/* SEQUENCE, PUTFH fh, then op with the stateid dsid (DELEGRETURN, READ,
 * TEST_STATEID, FREE_STATEID): the status of op. */
static int dl_sid_op(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t op, const struct n4_sid *dsid)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, op);
	if (op == N4_TEST_STATEID)
		xb_u32(&a, 1);
	n4_xb_sid(&a, dsid);
	if (op == N4_READ) {
		xb_u64(&a, 0);
		xb_u32(&a, 16);
	}
	st = call(k, &a, &r, true);
	if (op == N4_TEST_STATEID && st == 0) {
		n4_res(&r, N4_PUTFH);
		n4_res(&r, op);
		xd_u32(&r.body); /* count */
		st = (int)xd_u32(&r.body);
	}
	raw_reply_free(&r);
	return st;
}

/* The stats document's "nfs4" object contains want (e.g. "\"recalls\": 1"). */
static bool nfs4_stats_has(const char *want)
{
	char *doc = stats_json();
	char *p = doc ? strstr(doc, "\"nfs4\": {") : NULL;
	char *end = p ? strchr(p, '}') : NULL;
	bool ok = false;

	if (end) {
		*end = '\0';
		ok = strstr(p, want) != NULL;
	}
	if (!ok)
		hx_note("stats: %s", p ? p : "(none)");
	free(doc);
	return ok;
}

/*
 * After an access of cause's ("nfs4", "nfs3", "nlm", "local_open"): "nfs4_delegations"'s recalls_<cause>
 * grew by n and no other cause's, no directory recall was counted, revoked_unanswered grew by revoked
 * and revoked_admin not (issue 26 item 7). before: the document before the access (freed here).
 */
static void recalls_moved(char *before, const char *cause, long long n, long long revoked, const char *what)
{
	char *after = stats_json();
	char key[48], why[512] = "";
	const char *obj = "nfs4_delegations";

	snprintf(key, sizeof(key), "recalls_%s", cause);
	bool ok = n4_stats_moved(before, after, obj, "recalls_", n ? key : NULL, n, why, sizeof(why)) &&
		  n4_stats_moved(before, after, obj, "dir_recalls_", NULL, 0, why, sizeof(why)) &&
		  n4_stats_moved(before, after, obj, "revoked_", revoked ? "revoked_unanswered" : NULL, revoked, why,
				 sizeof(why));

	CHECK(ok, "stats: %s: recalls_%s +%lld and no other cause's, %lld revoked (%s)", what, cause, n, revoked, why);
	free(before);
	free(after);
}

/* A 4.1 (or minor) client with a back channel on its connection, probed and answered. */
static bool dl_client_minor(struct n4_client *k, const char *id, uint32_t minor)
{
	struct raw_reply r;
	struct xb a;
	char what[160];

	snprintf(what, sizeof(what), "connect %s", id);
	if (!cb_connect(k, minor, what))
		return false;
	session(k, id, N4_CS_BACK_CHAN);
	if (!CHECK_EQ(k->csr_flags & 0x2, 0x2, "%s: back channel granted", id) || !answer_probe(&k->c))
		return false;
	/* RFC 8881 §18.51.3: no new opens before RECLAIM_COMPLETE. */
	n4_begin(k, &a, 1);
	xb_u32(&a, N4_RECLAIM_COMPLETE);
	xb_u32(&a, 0); /* rca_one_fs: false */
	int st = call(k, &a, &r, true);
	raw_reply_free(&r);
	return CHECK_EQ(st, 0, "%s: RECLAIM_COMPLETE", id);
}

static bool dl_client(struct n4_client *k, const char *id)
{
	return dl_client_minor(k, id, 1);
}

static void test_deleg_recall(void)
{
	struct n4_client a, b;
	struct dl_open oa, ob;
	struct cb_call cc;

	hx_section("delegations: a read delegation, recalled by another client's OPEN for writing, returned");
	if (!dl_client(&a, "deleg-a") || !dl_client(&b, "deleg-b"))
		return;
	dl_open(&a, "dfile", 1 /* READ */, true, &oa);
	CHECK_EQ(oa.status, 0, "A: OPEN for reading");
	CHECK_EQ(oa.deleg, 1, "A: OPEN_DELEGATE_READ ([nfsv4] delegations = yes)");
	CHECK(nfs4_stats_has("\"delegations\": 1,"), "stats: 1 delegation held");
	char *s0 = stats_json();
	const char *dl = "nfs4_delegations";

	CHECK(n4_stats_num(s0, dl, "read") == 1 && n4_stats_num(s0, dl, "write") == 0 &&
		      n4_stats_num(s0, dl, "attribute") == 0 && n4_stats_num(s0, dl, "directory") == 0,
	      "stats: by kind, 1 read, no write, attribute or directory delegation");
	dl_open(&b, "dfile", 2 /* WRITE */, false, &ob);
	CHECK_EQ(ob.status, N4ERR_DELAY, "B: OPEN for writing waits (NFS4ERR_DELAY)");
	if (CHECK(cb_wait(&a.c, &cc, 5000), "A: a callback arrives")) {
		CHECK_EQ(cc.proc, 1, "CB_COMPOUND");
		CHECK_EQ(cc.op, 11, "CB_SEQUENCE first");
		CHECK_EQ(cc.op2, 4, "then CB_RECALL");
		CHECK(memcmp(&cc.dsid, &oa.dsid, sizeof(cc.dsid)) == 0, "CB_RECALL names A's delegation stateid");
		CHECK(cc.fh_len == oa.fh_len && memcmp(cc.fh, oa.fh, oa.fh_len) == 0, "and the file's handle");
		cb_answer(&a.c, &cc);
	}
	dl_open(&b, "dfile", 2, false, &ob);
	CHECK_EQ(ob.status, N4ERR_DELAY, "B: still DELAY while the recall is out");
	CHECK_EQ(dl_sid_op(&a, oa.fh, oa.fh_len, N4_DELEGRETURN, &oa.dsid), 0, "A: DELEGRETURN");
	dl_open(&b, "dfile", 2, false, &ob);
	CHECK_EQ(ob.status, 0, "B: OPEN for writing proceeds after the return");
	CHECK_EQ(ob.deleg, 0, "B: no delegation (A has the file open)");
	CHECK(nfs4_stats_has("\"recalls\": 1, \"delegreturns\": 1, \"revoked\": 0"),
	      "stats: 1 recall, 1 return, none revoked");
	recalls_moved(s0, "nfs4", 1, 0, "B's OPEN for writing (retried while recalled)");
	cb_close(&a.c);
	cb_close(&b.c);
}

static void test_deleg_revoke(void)
{
	struct n4_client a, b;
	struct dl_open oa, ob;
	struct cb_call cc;
	uint32_t flags = 0;
	double t0 = now_s(), slowest = 0;
	int tries = 0;

	hx_section("delegations: a holder that never returns is revoked after a lease; the other client is not stuck");
	if (!dl_client(&a, "deleg-c") || !dl_client(&b, "deleg-d"))
		return;
	dl_open(&a, "rfile", 1, true, &oa);
	CHECK(oa.status == 0 && oa.deleg == 1, "C: a read delegation");
	char *s0 = stats_json();

	do {
		double t1 = now_s();

		dl_open(&b, "rfile", 2, false, &ob);
		if (now_s() - t1 > slowest)
			slowest = now_s() - t1;
		if (tries++ == 0 && CHECK(cb_wait(&a.c, &cc, 5000), "C: CB_RECALL arrives"))
			cb_answer(&a.c, &cc); /* answered, never returned */
		if (ob.status == N4ERR_DELAY) {
			(void)sequence(&a, false, &flags, true); /* C keeps its lease */
			usleep(500 * 1000);
		}
	} while (ob.status == N4ERR_DELAY && now_s() - t0 < 4 * LEASE);
	CHECK_EQ(ob.status, 0, "D: OPEN for writing proceeds once C's delegation is revoked (%d tries)", tries);
	CHECK(slowest < 2.0, "D: every OPEN answered at once (slowest %.2f s): no worker waits", slowest);
	CHECK_EQ(sequence(&a, false, &flags, true), 0, "C: SEQUENCE");
	CHECK(flags & SEQ4_STATUS_RECALLABLE_STATE_REVOKED, "C: SEQ4_STATUS_RECALLABLE_STATE_REVOKED (flags 0x%x)", flags);
	CHECK_EQ(dl_sid_op(&a, oa.fh, oa.fh_len, N4_READ, &oa.dsid), N4ERR_DELEG_REVOKED,
		 "C: READ with the revoked stateid");
	CHECK_EQ(dl_sid_op(&a, oa.fh, oa.fh_len, N4_TEST_STATEID, &oa.dsid), N4ERR_DELEG_REVOKED,
		 "C: TEST_STATEID says DELEG_REVOKED");
	CHECK_EQ(dl_sid_op(&a, oa.fh, oa.fh_len, N4_FREE_STATEID, &oa.dsid), 0, "C: FREE_STATEID");
	CHECK_EQ(sequence(&a, false, &flags, true), 0, "C: SEQUENCE");
	CHECK(!(flags & SEQ4_STATUS_RECALLABLE_STATE_REVOKED), "C: the flag cleared after FREE_STATEID (0x%x)", flags);
	CHECK(nfs4_stats_has("\"revoked\": 1"), "stats: 1 revoked");
	recalls_moved(s0, "nfs4", 1, 1, "D's OPENs, C never returning");
	cb_close(&a.c);
	cb_close(&b.c);
}

/* NFSv3 procedure proc with arguments a (freed): its nfsstat3, or -1. */
static int v3_call(struct raw_conn *c, uint32_t proc, struct xb *a)
{
	struct raw_reply r;
	int st = -1;

	if (raw_call(c, ++xid, RAW_NFS_PROG, 3, proc, a->p, a->len, &r) == RAW_RECV_OK && r.reply_stat == 0 &&
	    r.accept_stat == 0)
		st = (int)xd_u32(&r.body);
	raw_reply_free(&r);
	xb_free(a);
	return st;
}

/* NFSv3 WRITE3args of fh at 0 (FILE_SYNC): its status, or -1. */
static int v3_write(struct raw_conn *c, const uint8_t *fh, uint32_t fh_len, const char *data)
{
	struct xb a;

	xb_init(&a);
	xb_opaque(&a, fh, fh_len);
	xb_u64(&a, 0);
	xb_u32(&a, (uint32_t)strlen(data));
	xb_u32(&a, 2); /* FILE_SYNC */
	xb_opaque(&a, data, (uint32_t)strlen(data));
	return v3_call(c, 7, &a);
}

/* NFSv3 REMOVE3args (RFC 1813 §3.3.12) of name in directory dir: its status, or -1. */
static int v3_remove(struct raw_conn *c, const uint8_t *dir, uint32_t dir_len, const char *name)
{
	struct xb a;

	xb_init(&a);
	xb_opaque(&a, dir, dir_len);
	xb_string(&a, name);
	return v3_call(c, 12, &a);
}

/* A's CB_RECALL of d arrives (within 5 s); answered, then DELEGRETURN. */
static bool dl_recalled(struct n4_client *k, const struct dl_open *d, const char *why)
{
	struct cb_call cc;
	bool ok = false;

	if (CHECK(cb_wait(&k->c, &cc, 5000), "%s: CB_RECALL arrives", why)) {
		ok = CHECK_EQ(cc.op2, 4, "CB_RECALL") && CHECK(memcmp(&cc.dsid, &d->dsid, sizeof(cc.dsid)) == 0, "of the delegation");
		cb_answer(&k->c, &cc);
	}
	CHECK_EQ(dl_sid_op(k, d->fh, d->fh_len, N4_DELEGRETURN, &d->dsid), 0, "DELEGRETURN");
	return ok;
}

static void test_deleg_v3(void)
{
	struct n4_client a;
	struct raw_conn v3;
	struct dl_open oa, ob;
	uint8_t dir[64];
	uint32_t dir_len = 0;

	hx_section("delegations: an NFSv3 WRITE or REMOVE recalls one (NFS3ERR_JUKEBOX meanwhile)");
	if (!dl_client(&a, "deleg-v3") || !CHECK(raw_connect(&v3, env.port) == 0, "connect (NFSv3)"))
		return;
	dl_open(&a, "v3file", 1, true, &oa);
	CHECK(oa.status == 0 && oa.deleg == 1, "A: a read delegation");
	char *s0 = stats_json();

	CHECK_EQ(v3_write(&v3, oa.fh, oa.fh_len, "v3"), 10008, "NFSv3 WRITE: NFS3ERR_JUKEBOX while recalled");
	dl_recalled(&a, &oa, "A");
	CHECK_EQ(v3_write(&v3, oa.fh, oa.fh_len, "v3"), 0, "NFSv3 WRITE proceeds after the return");
	recalls_moved(s0, "nfs3", 1, 0, "NFSv3 WRITE");
	/* A name change recalls too (nfs_deleg_recall_at(): the file found by its name). */
	CHECK_EQ(raw_mnt(&v3, ++xid, env.export_dir, dir, &dir_len), 0, "MNT the export (NFSv3)");
	dl_open(&a, "v3gone", 1, true, &ob);
	CHECK(ob.status == 0 && ob.deleg == 1, "A: a read delegation of another file");
	s0 = stats_json();
	CHECK_EQ(v3_remove(&v3, dir, dir_len, "v3gone"), 10008, "NFSv3 REMOVE: NFS3ERR_JUKEBOX while recalled");
	dl_recalled(&a, &ob, "A");
	CHECK_EQ(v3_remove(&v3, dir, dir_len, "v3gone"), 0, "NFSv3 REMOVE proceeds after the return");
	recalls_moved(s0, "nfs3", 1, 0, "NFSv3 REMOVE");
	raw_close(&v3);
	cb_close(&a.c);
}

/* LOCK READ_LT [0, 100) as a new lock owner from o's open stateid, callbacks answered: the status. */
static int dl_lock(struct n4_client *k, const struct dl_open *o, const char *owner)
{
	struct n4_sid lock;
	int st;

	cb_answer_now = true;
	st = n4_lock_new(k, o->fh, o->fh_len, N4_READ_LT, 0, 100, &o->osid, NULL, owner, &lock);
	cb_answer_now = false;
	return st;
}

static void test_deleg_lock(void)
{
	struct n4_client a, b;
	struct dl_open oa, ob, oc;

	hx_section("delegations: another client's LOCK recalls one; none on a locked file");
	if (!dl_client(&a, "deleg-la") || !dl_client(&b, "deleg-lb"))
		return;
	dl_open(&a, "kfile", 1, true, &oa);
	CHECK(oa.status == 0 && oa.deleg == 1, "A: a read delegation");
	dl_open(&b, "kfile", 1 | 0x0400 /* WANT_NO_DELEG */, false, &ob);
	CHECK_EQ(ob.status, 0, "B: OPEN for reading (no recall: readers share)");
	char *s0 = stats_json();

	CHECK_EQ(dl_lock(&b, &ob, "lk-b"), N4ERR_DELAY, "B: LOCK waits (NFS4ERR_DELAY)");
	dl_recalled(&a, &oa, "A");
	CHECK_EQ(dl_lock(&b, &ob, "lk-b"), 0, "B: LOCK granted after the return");
	recalls_moved(s0, "nfs4", 1, 0, "B's LOCK");
	dl_open(&a, "kfile", 1 | 0x0100 /* WANT_READ_DELEG */, false, &oc);
	CHECK(oc.status == 0 && oc.deleg == 3 && oc.why == 1,
	      "A: no delegation while B holds a lock (NONE_EXT, WND4_CONTENTION): %u/%u", oc.deleg, oc.why);
	cb_close(&a.c);
	cb_close(&b.c);
}

/* NLM4_TEST (XNFS §10.5, program 100021 v4 procedure 1) of [0, 100) exclusive on fh: nlm4_stats, or -1. */
static int nlm_test(struct raw_conn *c, const uint8_t *fh, uint32_t fh_len)
{
	struct raw_reply r;
	struct xb a;
	int st = -1;
	uint32_t len;

	xb_init(&a);
	xb_opaque(&a, "ck", 2); /* cookie */
	xb_u32(&a, 1);          /* exclusive */
	xb_string(&a, "it-nfs4-cb");
	xb_opaque(&a, fh, fh_len);
	xb_opaque(&a, "oh", 2);
	xb_u32(&a, 7); /* svid */
	xb_u64(&a, 0);
	xb_u64(&a, 100);
	if (raw_call(c, ++xid, 100021, 4, 1, a.p, a.len, &r) == RAW_RECV_OK && r.reply_stat == 0 &&
	    r.accept_stat == 0 && xd_opaque(&r.body, &len, 1024) != NULL)
		st = (int)xd_u32(&r.body);
	raw_reply_free(&r);
	xb_free(&a);
	return st;
}

static void test_deleg_nlm(void)
{
	struct n4_client a;
	struct raw_conn nlm;
	struct dl_open oa;

	hx_section("delegations: an NLM TEST recalls one (NLM4_DENIED_GRACE_PERIOD meanwhile)");
	if (!dl_client(&a, "deleg-nlm") || !CHECK(raw_connect(&nlm, env.port) == 0, "connect (NLM)"))
		return;
	dl_open(&a, "nfile", 1, true, &oa);
	CHECK(oa.status == 0 && oa.deleg == 1, "A: a read delegation");
	char *s0 = stats_json();

	CHECK_EQ(nlm_test(&nlm, oa.fh, oa.fh_len), 4, "NLM TEST: NLM4_DENIED_GRACE_PERIOD while recalled");
	dl_recalled(&a, &oa, "A");
	CHECK_EQ(nlm_test(&nlm, oa.fh, oa.fh_len), 0, "NLM TEST after the return: NLM4_GRANTED (no lock held)");
	recalls_moved(s0, "nlm", 1, 0, "NLM TEST");
	raw_close(&nlm);
	cb_close(&a.c);
}

/* The test writes or opens the exported file itself: a local process. */
/* A local process's call on a delegated file, run on its own thread. */
enum local_kind { LOCAL_OPEN_WRITE, LOCAL_OPEN_READ, LOCAL_TRUNCATE, LOCAL_LOCK, LOCAL_RENAME, LOCAL_UNLINK };

struct local_op {
	enum local_kind kind;
	char path[PATH_MAX + 16], path2[PATH_MAX + 32];
	atomic_int done; /* 1: the call returned */
	int err;
	pthread_t t;
};

static void *local_main(void *arg)
{
	struct local_op *op = arg;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd = -1, r = 0;

	switch (op->kind) {
	case LOCAL_OPEN_WRITE:
	case LOCAL_OPEN_READ:
	case LOCAL_LOCK:
		fd = open(op->path, op->kind == LOCAL_OPEN_READ ? O_RDONLY : O_RDWR);
		r = fd < 0 ? -1 : op->kind == LOCAL_LOCK ? fcntl(fd, F_SETLK, &fl) : 0;
		break;
	case LOCAL_TRUNCATE:
		r = truncate(op->path, 0);
		break;
	case LOCAL_RENAME:
		r = rename(op->path, op->path2);
		break;
	case LOCAL_UNLINK:
		r = unlink(op->path);
		break;
	}
	op->err = r < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	atomic_store(&op->done, 1);
	return NULL;
}

static double local_wait(struct local_op *op, double limit_s)
{
	double t0 = now_s();

	while (!atomic_load(&op->done) && now_s() - t0 < limit_s)
		usleep(20000);
	return now_s() - t0;
}

/*
 * A delegation (access 1: read, 3: write) of name, then a local process's
 * call (kind) on it. With a lease (held): the call waits in the kernel, the
 * holder gets CB_RECALL at once, the call is still waiting when the recall
 * is answered and half a second later, and completes just after the
 * DELEGRETURN (well before lease-break-time, 45 s). Without (after the
 * fact): the call is done by the time the recall comes.
 */
static void lease_path(struct n4_client *a, const char *name, uint32_t access, enum local_kind kind, bool held,
		       const char *what)
{
	struct local_op op = { .kind = kind };
	struct dl_open oa;
	struct cb_call cc;
	bool recalled;

	dl_open(a, name, access, true, &oa);
	if (!CHECK(oa.status == 0 && oa.deleg == (access == 1 ? 1u : 2u), "%s: a %s delegation (%d, %u, why %u)",
		   what, access == 1 ? "read" : "write", oa.status, oa.deleg, oa.why))
		return;
	snprintf(op.path, sizeof(op.path), "%s/%s", env.export_dir, name);
	snprintf(op.path2, sizeof(op.path2), "%s/%s.moved", env.export_dir, name);
	char *s0 = stats_json();

	if (!CHECK_EQ(pthread_create(&op.t, NULL, local_main, &op), 0, "local thread")) {
		free(s0);
		return;
	}
	recalled = CHECK(cb_wait(&a->c, &cc, 5000), "%s: CB_RECALL arrives", what);
	if (recalled) {
		CHECK(cc.op2 == 4 && memcmp(&cc.dsid, &oa.dsid, sizeof(cc.dsid)) == 0, "%s: CB_RECALL of it", what);
		if (held) {
			CHECK(!atomic_load(&op.done), "%s: the local call waits for the recall", what);
			usleep(500000);
			CHECK(!atomic_load(&op.done), "%s: ... and still waits 0.5 s later", what);
		} else {
			CHECK(local_wait(&op, 2) < 2, "%s: the local call was not held back (no fcntl lease breaks)", what);
		}
		cb_answer(&a->c, &cc);
	}
	CHECK_EQ(dl_sid_op(a, oa.fh, oa.fh_len, N4_DELEGRETURN, &oa.dsid), 0, "%s: DELEGRETURN", what);
	double waited = local_wait(&op, 50);

	CHECK(atomic_load(&op.done) && waited < 5, "%s: the local call completes after the return (%.1f s)", what,
	      waited);
	CHECK_EQ(op.err, 0, "%s: the local call succeeds", what);
	pthread_join(op.t, NULL);
	/* a lock's open breaks the lease first: local_open, never local_lock (reserved) */
	recalls_moved(s0, "local_open", 1, 0, what);
}

/* A holder that answers the recall a local open caused but never returns:
 * revoked after a lease (the holder's own SEQUENCEs expire it), its lease
 * released, the local open proceeds (before lease-break-time, 45 s). */
static void lease_revoked(struct n4_client *a)
{
	struct local_op op = { .kind = LOCAL_OPEN_WRITE };
	struct dl_open oa;
	struct cb_call cc;
	uint32_t flags = 0;

	dl_open(a, "lrevoke", 1, true, &oa);
	if (!CHECK(oa.status == 0 && oa.deleg == 1, "revoke: a read delegation"))
		return;
	snprintf(op.path, sizeof(op.path), "%s/lrevoke", env.export_dir);
	char *s0 = stats_json();

	if (!CHECK_EQ(pthread_create(&op.t, NULL, local_main, &op), 0, "local thread")) {
		free(s0);
		return;
	}
	if (CHECK(cb_wait(&a->c, &cc, 5000), "revoke: CB_RECALL arrives"))
		cb_answer(&a->c, &cc); /* answered, never returned */
	double t0 = now_s();

	while (!atomic_load(&op.done) && now_s() - t0 < 4 * LEASE) {
		(void)sequence(a, false, &flags, true);
		usleep(500 * 1000);
	}
	double waited = now_s() - t0;

	CHECK(atomic_load(&op.done) && waited > LEASE / 2 && waited < 2 * LEASE + 2,
	      "revoke: the local open waits until the delegation is revoked (%.1f s, lease %d s)", waited, LEASE);
	pthread_join(op.t, NULL);
	CHECK_EQ(sequence(a, false, &flags, true), 0, "revoke: SEQUENCE");
	CHECK(flags & SEQ4_STATUS_RECALLABLE_STATE_REVOKED, "revoke: RECALLABLE_STATE_REVOKED (0x%x)", flags);
	CHECK_EQ(dl_sid_op(a, oa.fh, oa.fh_len, N4_FREE_STATEID, &oa.dsid), 0, "revoke: FREE_STATEID");
	recalls_moved(s0, "local_open", 1, 1, "revoke: a local open, the holder silent");
}

static void test_deleg_local(void)
{
	char path[PATH_MAX + 16];
	struct local_op op = { .kind = LOCAL_OPEN_READ };
	struct n4_client a;
	struct dl_open oa;
	struct cb_call cc;

	hx_section("delegations: a local process's open, truncate, lock, rename, unlink of a delegated file (leases)");
	if (!dl_client(&a, "deleg-local"))
		return;
	lease_path(&a, "lfile", 1, LOCAL_OPEN_WRITE, true, "read delegation, local open for writing");
	lease_path(&a, "ltrunc", 1, LOCAL_TRUNCATE, true, "read delegation, local truncate");
	lease_path(&a, "lwfile", 3, LOCAL_OPEN_READ, true, "write delegation, local open for reading");
	lease_path(&a, "lwtrunc", 3, LOCAL_TRUNCATE, true, "write delegation, local truncate");
	lease_path(&a, "lwlock", 3, LOCAL_LOCK, true, "write delegation, local open and fcntl lock");
	lease_path(&a, "lwren", 3, LOCAL_RENAME, false, "write delegation, local rename");
	lease_path(&a, "lwunl", 3, LOCAL_UNLINK, false, "write delegation, local unlink");
	CHECK(nfs4_stats_has("\"deleg_leases\": 0,"), "stats: no lease left after the returns");
	lease_revoked(&a);
	CHECK(nfs4_stats_has("\"deleg_leases\": 0,"), "stats: none left after the revocation");
	/* a read delegation stays through a local open for reading */
	dl_open(&a, "lrfile", 1, true, &oa);
	CHECK(oa.status == 0 && oa.deleg == 1, "A: a read delegation");
	CHECK(nfs4_stats_has("\"deleg_leases\": 1,"), "stats: its file leased");
	snprintf(op.path, sizeof(op.path), "%s/lrfile", env.export_dir);
	char *s0 = stats_json();

	local_main(&op);
	CHECK(atomic_load(&op.done) && op.err == 0, "a local open for reading proceeds at once");
	CHECK(!cb_wait(&a.c, &cc, 500), "and recalls nothing");
	recalls_moved(s0, "none", 0, 0, "a local open for reading");
	/* its open is read-only (for the read lease): a write lock is not allowed by it */
	struct n4_sid lsid;

	CHECK_EQ(n4_lock_new(&a, oa.fh, oa.fh_len, N4_WRITE_LT, 0, 10, &oa.osid, NULL, "w", &lsid), N4ERR_OPENMODE,
		 "WRITE_LT from the read open: NFS4ERR_OPENMODE");
	CHECK_EQ(n4_lock_new(&a, oa.fh, oa.fh_len, N4_READ_LT, 0, 10, &oa.osid, NULL, "r", &lsid), 0,
		 "READ_LT from it: granted");
	CHECK_EQ(dl_sid_op(&a, oa.fh, oa.fh_len, N4_DELEGRETURN, &oa.dsid), 0, "DELEGRETURN");
	/* a file a local process holds open for writing: no read delegation (no lease to be had) */
	snprintf(path, sizeof(path), "%s/lbusy", env.export_dir);
	int fd = open(path, O_RDWR | O_CREAT, 0644);

	dl_open(&a, "lbusy", 1, false, &oa);
	CHECK(oa.status == 0 && oa.deleg == 0, "open elsewhere for writing: no delegation (%d, %u)", oa.status,
	      oa.deleg);
	dl_open(&a, "lbusy", 1 | 0x100 /* WANT_READ_DELEG */, false, &oa);
	CHECK(oa.status == 0 && oa.deleg == 3 && oa.why == 1, "with a want: NONE_EXT, WND4_CONTENTION (%u, %u)",
	      oa.deleg, oa.why);
	CHECK(nfs4_stats_has("\"deleg_lease_refused\": 2"), "stats: 2 refused for want of a lease");
	if (fd >= 0)
		close(fd);
	/* The holder's own LOCK under its write delegation goes on the lease's
	 * own description (issue 26, local_lock.c): nothing recalled, the lease
	 * stays, so a local open meets it (O_NONBLOCK: EWOULDBLOCK, which starts
	 * the recall); after DELEGRETURN the holder's lock is the kernel's, so a
	 * local process's conflicting lock is refused. */
	dl_open(&a, "lwhold", 3, true, &oa);
	CHECK(oa.status == 0 && oa.deleg == 2, "A: a write delegation");
	CHECK_EQ(dl_lock(&a, &oa, "holder"), 0, "the holder's LOCK under its write delegation is granted");
	struct cb_call rc = { 0 };

	CHECK(!cb_wait(&a.c, &rc, 700), "its own lock recalls nothing (callback %u)", rc.op2);
	char hold[PATH_MAX + 16];
	struct flock wl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 100 };

	snprintf(hold, sizeof(hold), "%s/lwhold", env.export_dir);
	fd = open(hold, O_RDWR | O_NONBLOCK);
	CHECK(fd < 0 && errno == EWOULDBLOCK, "a local open meets the lease, still held after the LOCK");
	if (fd >= 0)
		close(fd);
	if (CHECK(cb_wait(&a.c, &rc, 5000) && rc.op2 == 4, "that open recalls the delegation (CB_RECALL)"))
		cb_answer(&a.c, &rc);
	CHECK_EQ(dl_sid_op(&a, oa.fh, oa.fh_len, N4_DELEGRETURN, &oa.dsid), 0, "DELEGRETURN");
	fd = open(hold, O_RDWR | O_NONBLOCK);
	CHECK(fd >= 0 && fcntl(fd, F_SETLK, &wl) < 0 && (errno == EAGAIN || errno == EACCES),
	      "then a local process's conflicting lock is refused (the holder's lock is the kernel's)");
	if (fd >= 0)
		close(fd);
	CHECK_EQ(dl_lock(&a, &oa, "holder2"), 0, "another owner's LOCK after the return");
	cb_close(&a.c);
}

/* SEQUENCE, PUTFH fh, SETATTR(stateid, size), callbacks answered: its status. */
static int dl_truncate(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct n4_sid *sid,
		       uint64_t size)
{
	int st;

	cb_answer_now = true;
	st = n4_truncate(k, fh, fh_len, sid, size);
	cb_answer_now = false;
	return st;
}

static void test_deleg_write(void)
{
	struct n4_client a;
	struct dl_open oa;

	hx_section("delegations: a write delegation; SETATTR of the size with its stateid (as Linux truncates)");
	if (!dl_client(&a, "deleg-w"))
		return;
	char *s0 = stats_json(), *s1, why[256] = "";

	dl_open(&a, "wfile", 3 /* BOTH */, true, &oa);
	CHECK(oa.status == 0 && oa.deleg == 2, "OPEN for writing: OPEN_DELEGATE_WRITE (%d, %u)", oa.status, oa.deleg);
	s1 = stats_json();
	CHECK(n4_stats_moved(s0, s1, "nfs4_delegations", "", "write", 1, why, sizeof(why)),
	      "stats: 1 write delegation more, nothing else moved (%s)", why);
	free(s0);
	free(s1);
	CHECK_EQ(dl_truncate(&a, oa.fh, oa.fh_len, &oa.dsid, 1000), 0, "SETATTR size with the delegation stateid");
	CHECK_EQ(dl_sid_op(&a, oa.fh, oa.fh_len, N4_DELEGRETURN, &oa.dsid), 0, "DELEGRETURN");
	cb_close(&a.c);
}

/* ---- CB_GETATTR (RFC 8881 §10.4.3, §20.1) ---- */

/* A GETATTR of change and size (NFSv4 by k, or NFSv3 on v3) run on its own
 * thread, while the test plays the holder's callback service. */
struct ga_call {
	struct n4_client *k;  /* NULL: NFSv3 on v3 */
	struct raw_conn *v3;
	const uint8_t *fh;
	uint32_t fh_len;
	int status;
	uint64_t change, size; /* NFSv3: size only */
	bool times;            /* also time_access, time_modify (RFC 9754 §5: the holder's when delegated) */
	struct timespec atime, mtime;
	pthread_t t;
};

/* nfstime4 at d. */
static struct timespec xd_time(struct xd *d)
{
	struct timespec t;

	t.tv_sec = (time_t)xd_u64(d);
	t.tv_nsec = xd_u32(d);
	return t;
}

static void *ga_main(void *arg)
{
	struct ga_call *g = arg;
	struct raw_reply r;
	struct xb a;

	g->status = -1;
	if (!g->k) {
		xb_init(&a);
		xb_opaque(&a, g->fh, g->fh_len);
		if (raw_call(g->v3, ++xid, RAW_NFS_PROG, 3, 1 /* GETATTR */, a.p, a.len, &r) == RAW_RECV_OK &&
		    r.reply_stat == 0 && r.accept_stat == 0 && (g->status = (int)xd_u32(&r.body)) == 0) {
			xd_skip(&r.body, 20); /* fattr3: type, mode, nlink, uid, gid */
			g->size = xd_u64(&r.body);
		}
		raw_reply_free(&r);
		xb_free(&a);
		return NULL;
	}
	if (!g->times) {
		g->status = n4_getattr_cs(g->k, g->fh, g->fh_len, &g->change, &g->size);
		return NULL;
	}
	n4_begin_fh(g->k, &a, 2, g->fh, g->fh_len);
	xb_u32(&a, N4_GETATTR);
	xb_u32(&a, 2);
	xb_u32(&a, 1u << 3 | 1u << 4); /* change, size */
	xb_u32(&a, 1u << (47 - 32) | 1u << (53 - 32)); /* time_access, time_modify */
	g->status = n4_call(g->k, &a, &r);
	if (g->status == 0 && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, N4_GETATTR) == 0) {
		uint32_t nw = xd_u32(&r.body);

		xd_skip(&r.body, 4 * (size_t)nw + 4); /* attrmask, attrlist's length */
		g->change = xd_u64(&r.body);
		g->size = xd_u64(&r.body);
		g->atime = xd_time(&r.body);
		g->mtime = xd_time(&r.body);
	}
	raw_reply_free(&r);
	return NULL;
}

/* The CB_GETATTR a GETATTR started arrives on the holder's connection: of fh, asking change and size. */
static bool ga_arrives(struct n4_client *a, const struct dl_open *o, struct cb_call *cc, const char *what)
{
	struct xd d;
	uint32_t fl;
	const uint8_t *fh;

	if (!CHECK(cb_wait(&a->c, cc, 5000), "%s: a callback arrives", what) ||
	    !CHECK_EQ(cc->op2, 3, "%s: CB_GETATTR", what))
		return false;
	xd_init(&d, cc->args, cc->args_len);
	fh = xd_opaque(&d, &fl, 128);
	CHECK(fh && fl == o->fh_len && !memcmp(fh, o->fh, fl), "%s: of the delegated file", what);
	CHECK(xd_u32(&d) == 1 && xd_u32(&d) == (1u << 3 | 1u << 4), "%s: asking change and size", what);
	return true;
}

/* g, a GETATTR (another client's or NFSv3's) the holder a does not answer: delay (N4ERR_DELAY, NFS3ERR_JUKEBOX)
 * after a bounded wait, and a's delegation oa recalled, then returned. */
static void ga_silent(struct n4_client *a, const struct dl_open *oa, struct ga_call g, int delay, uint64_t change,
		      const char *who)
{
	struct cb_call cc;
	char what[80];
	double t0 = now_s();

	snprintf(what, sizeof(what), "%s GETATTR, holder silent", who);
	pthread_create(&g.t, NULL, ga_main, &g);
	bool late = ga_arrives(a, oa, &cc, what);
	pthread_join(g.t, NULL);
	CHECK(g.status == delay && now_s() - t0 < 3.0, "%s: DELAY after a bounded wait (%d, %.2f s)", who, g.status,
	      now_s() - t0);
	if (late)
		cb_answer_getattr(&a->c, &cc, change, 5); /* too late */
	dl_recalled(a, oa, "unanswered CB_GETATTR");
}

static void test_deleg_getattr(void)
{
	struct n4_client a, b;
	struct raw_conn v3;
	struct dl_open oa;
	struct cb_call cc;
	struct ga_call g;

	hx_section("delegations: GETATTR of a write-delegated file by another client or NFSv3: CB_GETATTR");
	if (!dl_client(&a, "deleg-ga-a") || !dl_client(&b, "deleg-ga-b") ||
	    !CHECK(raw_connect(&v3, env.port) == 0, "connect (NFSv3)"))
		return;
	dl_open(&a, "gafile", 3, true, &oa);
	if (!CHECK(oa.status == 0 && oa.deleg == 2, "A: a write delegation (%d, %u)", oa.status, oa.deleg))
		return;
	char *s0 = stats_json();

	/* The holder's own GETATTR: the server's attributes, no callback. */
	g = (struct ga_call){ .k = &a, .fh = oa.fh, .fh_len = oa.fh_len };
	ga_main(&g);
	uint64_t c0 = g.change;
	CHECK(g.status == 0 && g.size == 0, "A: its own GETATTR (%d, size %llu)", g.status, (unsigned long long)g.size);
	/* B asks: A answers "modified, 5 bytes" (its change moved on). */
	g = (struct ga_call){ .k = &b, .fh = oa.fh, .fh_len = oa.fh_len };
	pthread_create(&g.t, NULL, ga_main, &g);
	if (ga_arrives(&a, &oa, &cc, "B's GETATTR"))
		cb_answer_getattr(&a.c, &cc, c0 + 1, 5);
	pthread_join(g.t, NULL);
	CHECK(g.status == 0 && g.size == 5, "B: the holder's size (%d, %llu)", g.status, (unsigned long long)g.size);
	CHECK(g.change > c0, "B: a change past the server's (RFC 8881 §10.4.3: %llu > %llu)",
	      (unsigned long long)g.change, (unsigned long long)c0);
	uint64_t c1 = g.change;
	/* NFSv3 asks: the same answer, the same size. */
	g = (struct ga_call){ .v3 = &v3, .fh = oa.fh, .fh_len = oa.fh_len };
	pthread_create(&g.t, NULL, ga_main, &g);
	if (ga_arrives(&a, &oa, &cc, "NFSv3 GETATTR"))
		cb_answer_getattr(&a.c, &cc, c0 + 1, 5);
	pthread_join(g.t, NULL);
	CHECK(g.status == 0 && g.size == 5, "NFSv3: the holder's size (%d, %llu)", g.status, (unsigned long long)g.size);
	/* B again, nothing changed since: the change B saw before. */
	g = (struct ga_call){ .k = &b, .fh = oa.fh, .fh_len = oa.fh_len };
	pthread_create(&g.t, NULL, ga_main, &g);
	if (ga_arrives(&a, &oa, &cc, "B's second GETATTR"))
		cb_answer_getattr(&a.c, &cc, c0 + 1, 5);
	pthread_join(g.t, NULL);
	CHECK(g.status == 0 && g.change == c1, "B: the same change without a change (%llu, %llu)",
	      (unsigned long long)g.change, (unsigned long long)c1);
	/* A holder that does not answer in time: DELAY, and its delegation is recalled. */
	ga_silent(&a, &oa, (struct ga_call){ .k = &b, .fh = oa.fh, .fh_len = oa.fh_len }, N4ERR_DELAY, c0 + 1, "B's");
	CHECK(nfs4_stats_has("\"cb_getattr_sent\": 4, \"cb_getattr_unanswered\": 1"), "stats: 4 CB_GETATTR, 1 unanswered");
	recalls_moved(s0, "nfs4", 1, 0, "B's GETATTR, CB_GETATTR unanswered (the answered ones recall nothing)");
	/* The same through NFSv3: JUKEBOX, the recall counted as NFSv3's. */
	dl_open(&a, "gafile3", 3, true, &oa);
	if (CHECK(oa.status == 0 && oa.deleg == 2, "A: a write delegation of another file (%d, %u)", oa.status,
		  oa.deleg)) {
		s0 = stats_json();
		ga_silent(&a, &oa, (struct ga_call){ .v3 = &v3, .fh = oa.fh, .fh_len = oa.fh_len }, 10008, c0 + 1,
			  "NFSv3's");
		recalls_moved(s0, "nfs3", 1, 0, "NFSv3 GETATTR, CB_GETATTR unanswered");
	}
	raw_close(&v3);
	cb_close(&a.c);
	cb_close(&b.c);
}

/* ---- attribute delegations (RFC 9754 §5: delegated timestamps) ---- */

#define WANT_DELEG_TIMESTAMPS 0x100000u
#define WANT_OPEN_XOR 0x200000u
#define ATTR_DELEG_ACCESS 84u
#define ATTR_DELEG_MODIFY 85u

/* supported_attrs' third word (attributes 64..95) as k's minor version sees it. */
static uint32_t supp_word2(struct n4_client *k)
{
	struct raw_reply r;
	struct xb a;
	uint32_t w2 = 0;

	n4_begin(k, &a, 2);
	xb_u32(&a, N4_PUTROOTFH);
	xb_u32(&a, N4_GETATTR);
	xb_u32(&a, 1);
	xb_u32(&a, 1u); /* supported_attrs */
	if (call(k, &a, &r, true) == 0 && n4_res(&r, N4_PUTROOTFH) == 0 && n4_res(&r, N4_GETATTR) == 0) {
		uint32_t nw = xd_u32(&r.body);

		xd_skip(&r.body, 4 * (size_t)nw + 4);
		nw = xd_u32(&r.body); /* the value, a bitmap4 */
		for (uint32_t i = 0; i < nw && i < 8; i++) {
			uint32_t w = xd_u32(&r.body);
			if (i == 2)
				w2 = w;
		}
	}
	raw_reply_free(&r);
	return w2;
}

/* SEQUENCE, PUTFH fh, SETATTR(sid, time_deleg_access at / time_deleg_modify mt
 * where not NULL) [, DELEGRETURN sid]: the COMPOUND's status. */
static int ts_setattr(struct n4_client *k, const struct dl_open *o, const struct n4_sid *sid,
		      const struct timespec *at, const struct timespec *mt, bool ret)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, ret ? 3 : 2, o->fh, o->fh_len);
	xb_u32(&a, N4_SETATTR);
	n4_xb_sid(&a, sid);
	xb_u32(&a, 3);
	xb_u32(&a, 0);
	xb_u32(&a, 0);
	xb_u32(&a, (at ? 1u << (ATTR_DELEG_ACCESS - 64) : 0) | (mt ? 1u << (ATTR_DELEG_MODIFY - 64) : 0));
	xb_u32(&a, (at ? 12 : 0) + (mt ? 12 : 0));
	for (int i = 0; i < 2; i++) {
		const struct timespec *t = i ? mt : at;
		if (t) {
			xb_u64(&a, (uint64_t)t->tv_sec);
			xb_u32(&a, (uint32_t)t->tv_nsec);
		}
	}
	if (ret) {
		xb_u32(&a, N4_DELEGRETURN);
		n4_xb_sid(&a, sid);
	}
	st = call(k, &a, &r, true);
	raw_reply_free(&r);
	return st;
}

static struct timespec ts_add(struct timespec t, long ms)
{
	t.tv_nsec += ms * 1000000L;
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	return t;
}

static bool ts_eq(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* The CB_GETATTR of o's file asks change, size and the delegated times (three words). */
static bool ga_arrives_ts(struct n4_client *a, const struct dl_open *o, struct cb_call *cc)
{
	struct xd d;
	uint32_t fl;

	if (!CHECK(cb_wait(&a->c, cc, 5000), "a CB_GETATTR arrives") || !CHECK_EQ(cc->op2, 3, "CB_GETATTR"))
		return false;
	xd_init(&d, cc->args, cc->args_len);
	xd_opaque(&d, &fl, 128);
	CHECK(fl == o->fh_len && xd_u32(&d) == 3 && xd_u32(&d) == (1u << 3 | 1u << 4) && xd_u32(&d) == 0 &&
	      xd_u32(&d) == (1u << 20 | 1u << 21), "CB_GETATTR asks change, size, time_deleg_access/modify");
	return true;
}

static void test_deleg_ts(void)
{
	struct n4_client a, b, c;
	struct dl_open oa, ob, oc;
	struct cb_call cc;
	struct ga_call g;
	struct stat st0, st1;
	char path[PATH_MAX + 32];

	hx_section("attribute delegations (RFC 9754 §5): delegated timestamps");
	if (!dl_client_minor(&a, "deleg-ts-a", 2) || !dl_client_minor(&b, "deleg-ts-b", 2) ||
	    !dl_client(&c, "deleg-ts-c41"))
		return;
	/* supported_attrs: time_deleg_access (84) and time_deleg_modify (85) in 4.2 only */
	CHECK_EQ(supp_word2(&a) & (3u << 20), 3u << 20, "4.2 supported_attrs: time_deleg_access, time_deleg_modify");
	CHECK_EQ(supp_word2(&c) & (3u << 20), 0, "4.1 supported_attrs: neither");
	/* RFC 8881 §18.16.3: before 4.2 the timestamps bit is no share_access value: INVAL (as knfsd) */
	dl_open(&c, "ts41", 3 | 0x0300 | WANT_DELEG_TIMESTAMPS, true, &oc);
	CHECK_EQ(oc.status, N4ERR_INVAL, "4.1 OPEN wanting delegated timestamps");
	/* a 4.2 reader wanting them: READ_ATTRS_DELEG */
	snprintf(path, sizeof(path), "%s/tsread", env.export_dir);
	int fd = open(path, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	char *s0 = stats_json();

	dl_open(&a, "tsread", 1 | WANT_DELEG_TIMESTAMPS, false, &oa);
	CHECK(oa.status == 0 && oa.deleg == 4, "4.2 read OPEN: READ_ATTRS_DELEG (%d, %u)", oa.status, oa.deleg);
	if (oa.deleg == 4 && CHECK(stat(path, &st0) == 0, "stat tsread")) {
		/* B reads too (a read delegation of its own); A sets its delegated atime: no recall of either */
		dl_open(&b, "tsread", 1 | WANT_DELEG_TIMESTAMPS, false, &ob);
		CHECK(ob.status == 0 && ob.deleg == 4, "B: READ_ATTRS_DELEG too (%d, %u)", ob.status, ob.deleg);
		char *s1 = stats_json(), why[256] = "";

		CHECK(n4_stats_moved(s0, s1, "nfs4_delegations", "", "attribute", 2, why, sizeof(why)),
		      "stats: 2 attribute delegations more, no read one (they are disjoint kinds) (%s)", why);
		free(s1);
		struct timespec at0 = ts_add(st0.st_atim, 10);
		usleep(50 * 1000);
		CHECK_EQ(ts_setattr(&a, &oa, &oa.dsid, &at0, NULL, false), 0, "A's SETATTR of time_deleg_access");
		CHECK(stat(path, &st1) == 0 && ts_eq(&st1.st_atim, &at0), "A's atime on disk");
		CHECK(!cb_wait(&a.c, &cc, 300) && !cb_wait(&b.c, &cc, 300), "no recall (rnfsd's own change, its holder's)");
		if (ob.deleg)
			dl_sid_op(&b, ob.fh, ob.fh_len, N4_DELEGRETURN, &ob.dsid);
	}
	free(s0);
	if (oa.deleg)
		CHECK_EQ(dl_sid_op(&a, oa.fh, oa.fh_len, N4_DELEGRETURN, &oa.dsid), 0, "DELEGRETURN (read)");
	/* a 4.2 writer: WRITE_ATTRS_DELEG */
	dl_open(&a, "tsfile", 3 | WANT_DELEG_TIMESTAMPS, true, &oa);
	if (!CHECK(oa.status == 0 && oa.deleg == 5, "4.2 write OPEN: WRITE_ATTRS_DELEG (%d, %u)", oa.status, oa.deleg))
		goto out;
	snprintf(path, sizeof(path), "%s/tsfile", env.export_dir);
	if (!CHECK(stat(path, &st0) == 0, "stat tsfile"))
		goto out;
	usleep(300 * 1000);
	struct timespec at = ts_add(st0.st_atim, 100), mt = ts_add(st0.st_mtim, 50);
	/* another client may not set them (its own open stateid, nor the holder's delegation stateid) */
	CHECK_EQ(ts_setattr(&b, &oa, &oa.osid, &at, &mt, false), N4ERR_BAD_STATEID, "B's SETATTR of the delegated times");
	CHECK_EQ(ts_setattr(&b, &oa, &oa.dsid, &at, &mt, false), N4ERR_BAD_STATEID,
		 "B's SETATTR with A's delegation stateid");
	/* nor the holder with its open stateid */
	CHECK_EQ(ts_setattr(&a, &oa, &oa.osid, &at, &mt, false), N4ERR_BAD_STATEID, "A's SETATTR with its open stateid");
	/* the holder with its delegation stateid: applied to the file */
	CHECK_EQ(ts_setattr(&a, &oa, &oa.dsid, &at, &mt, false), 0, "A's SETATTR of the delegated times");
	CHECK(stat(path, &st1) == 0 && ts_eq(&st1.st_atim, &at) && ts_eq(&st1.st_mtim, &mt),
	      "the holder's times on disk (%ld.%09ld)", (long)st1.st_mtim.tv_sec, st1.st_mtim.tv_nsec);
	/* B's GETATTR: CB_GETATTR asks the delegated times; the holder's stand */
	struct timespec at2 = ts_add(at, 100), mt2 = ts_add(mt, 150);
	g = (struct ga_call){ .k = &b, .fh = oa.fh, .fh_len = oa.fh_len, .times = true };
	pthread_create(&g.t, NULL, ga_main, &g);
	if (ga_arrives_ts(&a, &oa, &cc)) {
		const uint64_t ga[2] = { 0, 0 };
		const uint64_t tsv[4] = { (uint64_t)at2.tv_sec, (uint64_t)at2.tv_nsec, (uint64_t)mt2.tv_sec,
					  (uint64_t)mt2.tv_nsec };
		cb_answer_ga_ts(&a.c, &cc, ga, tsv);
	}
	pthread_join(g.t, NULL);
	CHECK(g.status == 0 && ts_eq(&g.mtime, &mt2) && ts_eq(&g.atime, &at2),
	      "B: the holder's time_modify and time_access (%d, %ld.%09ld)", g.status, (long)g.mtime.tv_sec,
	      g.mtime.tv_nsec);
	/* DELEGRETURN carrying the last times first */
	struct timespec mt3 = ts_add(mt, 200);
	CHECK_EQ(ts_setattr(&a, &oa, &oa.dsid, NULL, &mt3, true), 0, "SETATTR + DELEGRETURN");
	CHECK(stat(path, &st1) == 0 && ts_eq(&st1.st_mtim, &mt3), "the returned mtime on disk (%ld.%09ld)",
	      (long)st1.st_mtim.tv_sec, st1.st_mtim.tv_nsec);
	/* returned: the stateid sets nothing any more */
	CHECK(ts_setattr(&a, &oa, &oa.dsid, NULL, &mt3, false) != 0, "SETATTR after DELEGRETURN refused");
out:
	cb_close(&a.c);
	cb_close(&b.c);
	cb_close(&c.c);
}

/* The server's NFSv4 open states (stats "opens"), -1 if unknown. */
static long long opens_now(void)
{
	char *doc = stats_json();
	long long n = doc ? n4_stats_num(doc, "nfs4", "opens") : -1;

	free(doc);
	return n;
}

/* RFC 9754 §4: OPEN4_SHARE_ACCESS_WANT_OPEN_XOR_DELEGATION. */
static void test_deleg_xor(void)
{
	struct n4_client a, b, c;
	struct dl_open oa, ob, oc;
	static const struct n4_sid zero;
	char buf[16];
	uint32_t got = 0;

	hx_section("OPEN_XOR_DELEGATION (RFC 9754 §4): a delegation stateid and no open stateid");
	if (!dl_client_minor(&a, "deleg-xor-a", 2) || !dl_client_minor(&b, "deleg-xor-b", 2) ||
	    !dl_client(&c, "deleg-xor-c41"))
		return;
	dl_open(&c, "xor41", 3 | WANT_OPEN_XOR, true, &oc);
	CHECK_EQ(oc.status, N4ERR_INVAL, "4.1 OPEN wanting OPEN_XOR_DELEGATION");
	long long opens0 = opens_now();
	dl_open(&a, "xorfile", 3 | WANT_OPEN_XOR, true, &oa);
	if (!CHECK(oa.status == 0 && oa.deleg == 2, "4.2 OPEN: a write delegation (%d, %u)", oa.status, oa.deleg))
		goto out;
	CHECK(oa.rflags & 0x10, "OPEN4_RESULT_NO_OPEN_STATEID (rflags 0x%x)", oa.rflags);
	CHECK(memcmp(&oa.osid, &zero, sizeof(zero)) == 0, "the open stateid is the anonymous one");
	CHECK(opens0 >= 0 && opens_now() == opens0, "no open state kept (%lld, %lld)", opens_now(), opens0);
	/* I/O with the delegation stateid */
	CHECK_EQ(n4_write(&a, oa.fh, oa.fh_len, &oa.dsid, 0, "xor-data", 8), 0,
		 "WRITE with the delegation stateid");
	CHECK(n4_read(&a, oa.fh, oa.fh_len, &oa.dsid, 0, sizeof(buf), buf, &got) == 0 && got == 8 &&
	      !memcmp(buf, "xor-data", 8), "READ with the delegation stateid (%u bytes)", got);
	/* another client's OPEN recalls it; DELEGRETURN ends it, nothing to CLOSE */
	char *s0 = stats_json();

	dl_open(&b, "xorfile", 3, false, &ob);
	CHECK_EQ(ob.status, N4ERR_DELAY, "B's OPEN for writing: DELAY while recalled");
	dl_recalled(&a, &oa, "OPEN_XOR delegation");
	dl_open(&b, "xorfile", 3, false, &ob);
	CHECK_EQ(ob.status, 0, "B's OPEN after the DELEGRETURN (no open of A's in the way)");
	recalls_moved(s0, "nfs4", 1, 0, "B's OPEN of an OPEN_XOR delegated file");
	/* a 4.2 OPEN of a file the owner has open already: the open stays (RFC 9754 §4, as knfsd) */
	dl_open(&a, "xorfile2", 1, true, &oa);
	if (oa.deleg)
		dl_sid_op(&a, oa.fh, oa.fh_len, N4_DELEGRETURN, &oa.dsid);
	dl_open(&a, "xorfile2", 1 | WANT_OPEN_XOR, false, &oa);
	CHECK(oa.status == 0 && !(oa.rflags & 0x10) && memcmp(&oa.osid, &zero, sizeof(zero)) != 0,
	      "an upgrade keeps its open stateid (%d, rflags 0x%x, deleg %u)", oa.status, oa.rflags, oa.deleg);
out:
	cb_close(&a.c);
	cb_close(&b.c);
	cb_close(&c.c);
}

static void test_deleg_off(void)
{
	struct n4_client a;
	struct dl_open oa;
	FILE *f;
	char conf[8192];
	size_t n;

	hx_section("[nfsv4] delegations = no: none granted");
	hx_daemon_stop(&env);
	/* The [nfsv4] section is the file's last: "delegations = yes" becomes
	 * "no " (a key may not be given twice), and no grace period after the restart. */
	f = fopen(env.conf_path, "r+");
	if (!CHECK(f != NULL, "config"))
		return;
	n = fread(conf, 1, sizeof(conf) - 1, f);
	conf[n] = '\0';
	char *on = strstr(conf, "delegations = yes");
	if (!CHECK(on != NULL, "config names delegations = yes")) {
		fclose(f);
		return;
	}
	memcpy(on, "delegations = no ", 17);
	rewind(f);
	fwrite(conf, 1, n, f);
	fprintf(f, "grace-time = 0\n");
	fclose(f);
	if (!CHECK_EQ(hx_daemon_start(&env), 0, "restarted"))
		return;
	if (!dl_client(&a, "deleg-off"))
		return;
	dl_open(&a, "ofile", 1, true, &oa);
	CHECK(oa.status == 0 && oa.deleg == 0, "OPEN: OPEN_DELEGATE_NONE (%d, %u)", oa.status, oa.deleg);
	dl_open(&a, "ofile", 1 | 0x100 /* WANT_READ_DELEG */, false, &oa);
	CHECK(oa.status == 0 && oa.deleg == 3, "OPEN with a want: OPEN_DELEGATE_NONE_EXT (%d, %u)", oa.status,
	      oa.deleg);
	CHECK(nfs4_stats_has("\"delegations\": 0,"), "stats: none held");
	cb_close(&a.c);
}

/* Restart with the config's text from replaced by to (the same length). */
static bool conf_swap(const char *from, const char *to)
{
	return CHECK_EQ(hx_conf_swap(&env, from, to), 0, "config names %s", from);
}

/*
 * The kernel lets a local process in after /proc/sys/fs/lease-break-time
 * (45 s) whatever rnfsd does; under a longer NFSv4 lease (50 s here) rnfsd
 * says so at start-up and revokes the recalled delegation 3 s before that
 * (RFC 8881 §10.4.6), on its own timer, so the holder is told (RECALLABLE_
 * STATE_REVOKED) rather than left believing in a delegation the local
 * process went past.
 */
static void test_deleg_break_time(void)
{
	struct local_op op = { .kind = LOCAL_OPEN_WRITE };
	unsigned bt = 0;
	FILE *p = fopen("/proc/sys/fs/lease-break-time", "r");
	struct n4_client a;
	struct dl_open oa;
	struct cb_call cc;
	uint32_t flags = 0;
	char hint[120];

	hx_section("delegations: a lease-break-time under the lease: the recall is revoked before the kernel breaks");
	if (p) {
		if (fscanf(p, "%u", &bt) != 1)
			bt = 0;
		fclose(p);
	}
	if (bt < 10 || bt + NFS4_BREAK_MARGIN >= 50) {
		hx_note("skipped: lease-break-time %u s (this test wants 10..46)", bt);
		return;
	}
	hx_daemon_stop(&env);
	if (!conf_swap("delegations = no ", "delegations = yes") || !conf_swap("lease-time = 10", "lease-time = 50") ||
	    !CHECK_EQ(hx_daemon_start(&env), 0, "restarted (lease-time = 50)"))
		return;
	snprintf(hint, sizeof(hint), "fs.lease-break-time is %u s, under the 50 s lease", bt);
	CHECK_EQ(hx_log_count(&env, hint), 1, "start-up says: %s", hint);
	if (!dl_client(&a, "deleg-bt"))
		return;
	dl_open(&a, "btfile", 1, true, &oa);
	if (!CHECK(oa.status == 0 && oa.deleg == 1, "a read delegation"))
		return;
	snprintf(op.path, sizeof(op.path), "%s/btfile", env.export_dir);
	char *s0 = stats_json();

	if (!CHECK_EQ(pthread_create(&op.t, NULL, local_main, &op), 0, "local thread")) {
		free(s0);
		return;
	}
	if (CHECK(cb_wait(&a.c, &cc, 5000), "CB_RECALL arrives"))
		cb_answer(&a.c, &cc); /* answered, never returned; no call renews anything meanwhile */
	double waited = local_wait(&op, bt + 10);

	pthread_join(op.t, NULL);
	CHECK(waited > bt - NFS4_BREAK_MARGIN - 2 && waited < bt - 1,
	      "the local open proceeds when rnfsd revokes, before the kernel would (%.1f s, lease-break-time %u s)",
	      waited, bt);
	CHECK_EQ(sequence(&a, false, &flags, true), 0, "SEQUENCE");
	CHECK(flags & SEQ4_STATUS_RECALLABLE_STATE_REVOKED, "the holder is told its delegation is revoked (0x%x)", flags);
	CHECK_EQ(dl_sid_op(&a, oa.fh, oa.fh_len, N4_TEST_STATEID, &oa.dsid), N4ERR_DELEG_REVOKED, "TEST_STATEID");
	recalls_moved(s0, "local_open", 1, 1, "a local open, revoked at rnfsd's deadline");
	cb_close(&a.c);
}

int main(int argc, char **argv)
{
	FILE *f;

	hx_begin("nfs4_cb", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	snprintf(stats_path, sizeof(stats_path), "%s/stats.sock", env.dir);
	static char extra[700];
	snprintf(extra, sizeof(extra), "stats-socket = %s\n", stats_path);
	env.rnfsd_extra = extra;
	if (hx_write_config(&env) != 0)
		return hx_end();
	f = fopen(env.conf_path, "a");
	if (!CHECK(f != NULL, "config"))
		return hx_end();
	fprintf(f, "[nfsv4]\nenable = yes\ndelegations = yes\nlease-time = %d\n", LEASE);
	fclose(f);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	test_answering(1);
	test_answering(2);
	test_mute_and_bind();
	test_no_back_chan();
	test_v40();
	test_async_copy();
	test_async_copy_export_gone();
	test_notify_lock();
	test_deleg_recall();
	test_deleg_revoke();
	test_deleg_v3();
	test_deleg_lock();
	test_deleg_nlm();
	test_deleg_local();
	test_deleg_write();
	test_deleg_getattr();
	test_deleg_ts();
	test_deleg_xor();
	test_deleg_off();
	test_deleg_break_time();
	hx_daemon_stop(&env);
	hx_env_release(&env);
	return hx_end();
}
