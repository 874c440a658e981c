/*
 * test_nfs_harness.c - see test_nfs_harness.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <arpa/inet.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "conf/config.h"
#include "conf/exports.h"
#include "nfs/nfs.h"
#include "tests/unit/test_nfs_harness.h"

static int tc_payload_pipe(struct rpc_call *c, size_t *room)
{
	struct tcall *t = (struct tcall *)c;

	*room = TC_PAYLOAD_MAX;
	return t->pipe_on ? t->pipe[1] : -1;
}

static const struct xprt_ops tc_ops = { .name = "test", .payload_pipe = tc_payload_pipe };
static struct xprt tc_xprt = { .ops = &tc_ops };

struct tcall *tc_new(void)
{
	struct tcall *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	assert_int_equal(pipe2(t->pipe, O_CLOEXEC | O_NONBLOCK), 0);
	assert_true(fcntl(t->pipe[1], F_SETPIPE_SZ, (int)TC_PAYLOAD_MAX) >= (int)TC_PAYLOAD_MAX);
	t->reqbuf = malloc(TC_REQ_MAX);
	t->replybuf = malloc(TC_REPLY_MAX);
	t->payload = malloc(TC_PAYLOAD_MAX);
	t->flat = malloc(TC_REPLY_MAX + TC_PAYLOAD_MAX + 64);
	assert_true(t->reqbuf && t->replybuf && t->payload && t->flat);
	return t;
}

void tc_free(struct tcall *t)
{
	close(t->pipe[0]);
	close(t->pipe[1]);
	free(t->reqbuf);
	free(t->replybuf);
	free(t->payload);
	free(t->flat);
	free(t);
}

void tc_reset(struct tcall *t, const char *addr, unsigned port, uint32_t uid, uint32_t gid)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&t->conn.peer;

	memset(&t->c, 0, sizeof(t->c));
	memset(&t->conn, 0, sizeof(t->conn));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, addr, &sin->sin_addr), 1);
	t->conn.peer_len = sizeof(*sin);
	t->conn.xprt_name = "test";
	t->conn.xprt = &tc_xprt;
	snprintf(t->conn.peer_name, sizeof(t->conn.peer_name), "%s:%u", addr, port);
	t->c.conn = &t->conn;
	if (uid == UINT32_MAX) {
		t->c.cred.flavor = RPC_AUTH_NONE;
	} else {
		t->c.cred.flavor = RPC_AUTH_SYS;
		t->c.cred.uid = uid;
		t->c.cred.gid = gid;
	}
	t->reply_cap = TC_REPLY_MAX;
	t->payload_cap = TC_PAYLOAD_MAX;
	xdr_enc_init(&t->req, t->reqbuf, TC_REQ_MAX);
}

enum rpc_proc_status tc_run(struct tcall *t, enum rpc_proc_status (*handler)(struct rpc_call *))
{
	struct rpc_call *c = &t->c;
	enum rpc_proc_status st;
	size_t at = 0, from = 0;

	assert_false(t->req.overflow);
	c->msg = t->reqbuf;
	c->msg_len = xdr_enc_len(&t->req);
	xdr_dec_init(&c->args, t->reqbuf, c->msg_len);
	c->reply_buf = t->replybuf;
	c->reply_cap = t->reply_cap;
	xdr_enc_init(&c->res, t->replybuf, t->reply_cap);
	c->payload_area = t->payload_cap ? t->payload : NULL;
	c->payload_cap = t->payload_cap;
	c->payload_used = 0;
	c->payload_piped = 0;
	c->n_ddp_out = 0;
	t->piped = 0;
	st = handler(c);
	/* flatten: inline bytes with each ddp_out segment (plus XDR pad) at its offset */
	for (unsigned i = 0; i < c->n_ddp_out; i++) {
		const struct rpc_ddp_out *o = &c->ddp_out[i];

		assert_true(o->offset >= from && o->offset <= xdr_enc_len(&c->res));
		memcpy(t->flat + at, t->replybuf + from, o->offset - from);
		at += o->offset - from;
		from = o->offset;
		if (o->piped) {
			for (size_t got = 0; got < o->len;) {
				ssize_t n = read(t->pipe[0], t->flat + at + got, o->len - got);

				assert_true(n > 0); /* the pipe holds what the reply says */
				got += (size_t)n;
			}
			t->piped++;
		} else {
			memcpy(t->flat + at, o->data, o->len);
		}
		at += o->len;
		memset(t->flat + at, 0, XDR_PAD(o->len));
		at += XDR_PAD(o->len);
	}
	char extra;

	assert_true(read(t->pipe[0], &extra, 1) < 0 && errno == EAGAIN); /* nothing else was put in */
	memcpy(t->flat + at, t->replybuf + from, xdr_enc_len(&c->res) - from);
	at += xdr_enc_len(&c->res) - from;
	xdr_dec_init(&t->res, t->flat, at);
	return st;
}

enum rpc_proc_status tc_steps(struct rpc_call *c, const struct rpc_proc *p)
{
	enum rpc_proc_status st;

	c->procinfo = p;
	memset(c->args_scratch, 0, p->args_size);
	memset(c->res_scratch, 0, p->res_size);
	if (p->decode && !p->decode(c, c->args_scratch))
		return RPC_PROC_GARBAGE;
	st = p->execute(c, c->args_scratch, c->res_scratch);
	if (st == RPC_PROC_OK && p->encode)
		p->encode(c, c->res_scratch);
	/* What the RPC layer does as it records the call: the export's counters let go (rpc.h). */
	rpc_acct_put(c->acct);
	c->acct = NULL;
	return st == RPC_PROC_OK && c->res.overflow ? RPC_PROC_SYSERR : st;
}

#define TC_PROC_DEF(prog, name, num)                                                   \
	enum rpc_proc_status prog##_proc_##name(struct rpc_call *c)                    \
	{                                                                              \
		return tc_steps(c, &prog##_program.versions[0].procs[num]);            \
	}
TC_PROCS(TC_PROC_DEF)

void tc_put_fh(struct tcall *t, const struct nfs_fh *fh)
{
	xdr_enc_opaque(&t->req, fh->data, fh->len);
}

void tc_put_name(struct tcall *t, const char *name)
{
	xdr_enc_opaque(&t->req, name, (uint32_t)strlen(name));
}

void tc_put_sattr_mode(struct tcall *t, int mode)
{
	xdr_enc_bool(&t->req, mode >= 0);
	if (mode >= 0)
		xdr_enc_u32(&t->req, (uint32_t)mode);
	xdr_enc_bool(&t->req, false); /* uid */
	xdr_enc_bool(&t->req, false); /* gid */
	xdr_enc_bool(&t->req, false); /* size */
	xdr_enc_u32(&t->req, 0);      /* atime DONT_CHANGE */
	xdr_enc_u32(&t->req, 0);      /* mtime DONT_CHANGE */
}

uint32_t tc_u32(struct tcall *t)
{
	uint32_t v = 0;

	assert_true(xdr_dec_u32(&t->res, &v));
	return v;
}

uint64_t tc_u64(struct tcall *t)
{
	uint64_t v = 0;

	assert_true(xdr_dec_u64(&t->res, &v));
	return v;
}

const uint8_t *tc_opaque(struct tcall *t, uint32_t *len)
{
	const uint8_t *p = NULL;

	assert_true(xdr_dec_opaque(&t->res, TC_REPLY_MAX, &p, len));
	return p;
}

void tc_fh(struct tcall *t, struct nfs_fh *fh)
{
	const uint8_t *p;
	uint32_t len;

	p = tc_opaque(t, &len);
	assert_true(len <= NFS3_FHSIZE);
	fh->len = len;
	memcpy(fh->data, p, len);
}

void tc_fattr(struct tcall *t, struct tc_fattr *a)
{
	a->type = tc_u32(t);
	a->mode = tc_u32(t);
	a->nlink = tc_u32(t);
	a->uid = tc_u32(t);
	a->gid = tc_u32(t);
	a->size = tc_u64(t);
	tc_u64(t); /* used */
	tc_u64(t); /* rdev */
	tc_u64(t); /* fsid */
	a->fileid = tc_u64(t);
	a->atime_sec = tc_u32(t);
	tc_u32(t);
	a->mtime_sec = tc_u32(t);
	tc_u32(t);
	a->ctime_sec = tc_u32(t);
	a->ctime_nsec = tc_u32(t);
}

bool tc_post_op_attr(struct tcall *t, struct tc_fattr *a)
{
	struct tc_fattr dummy;

	if (!tc_u32(t))
		return false;
	tc_fattr(t, a ? a : &dummy);
	return true;
}

void tc_skip_wcc(struct tcall *t, bool *pre, bool *post)
{
	bool p = tc_u32(t);

	if (p) {
		tc_u64(t);
		tc_u64(t);
		tc_u64(t);
	}
	if (pre)
		*pre = p;
	p = tc_post_op_attr(t, NULL);
	if (post)
		*post = p;
}

size_t tc_remaining(struct tcall *t)
{
	return xdr_dec_remaining(&t->res);
}

/* ---- fixture ---- */

int tc_fixture_dir(const char *name, char *top, size_t cap)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test_%s: needs root (open_by_handle_at, setfsuid); skipped\n", name);
		exit(77);
	}
	snprintf(top, cap, "/var/tmp/test_%s.XXXXXX", name);
	if (!mkdtemp(top) || chmod(top, 0755) < 0) {
		perror(top);
		return -1;
	}
	return 0;
}

int tc_fixture_start(const char *top, const char *exports_text, bool nfsv4, struct tcall **t)
{
	struct rnfsd_config cfg;
	struct export_table tbl;
	char err[256];

	if (exports_parse(exports_text, "test", &tbl, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	config_defaults(&cfg);
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s/state", top);
	cfg.nfsv4 = nfsv4;
	if (nfs_service_init(&cfg, &tbl) < 0)
		return -1;
	*t = tc_new();
	return 0;
}

void tc_fixture_stop(const char *top, struct tcall *t)
{
	char cmd[PATH_MAX + 16];

	nfs_service_shutdown();
	tc_free(t);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", top);
}
