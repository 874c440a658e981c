/*
 * test_nfs4.c - NFSv4 through the real daemon, with the raw RPC client
 * (libnfs 4.0.0 opens files with SETCLIENTID/OPEN, not built yet):
 *  - by default NFSv4 is not served: version 4 gets PROG_MISMATCH (3..3);
 *  - with "[nfsv4] enable = yes": NULL answers; a COMPOUND walks from
 *    PUTROOTFH through the pseudo file system to the export (LOOKUP per
 *    component), GETFH, GETATTR (type, fileid, fsid), READDIR lists a file
 *    made on the server, LOOKUP + READLINK of a symlink; the NFSv3 (MOUNT)
 *    handle of the export is accepted by PUTFH; an operation not built
 *    (OPENATTR) answers NFS4ERR_NOTSUPP; an unknown minor version
 *    MINOR_VERS_MISMATCH; NFSv3 is still served beside it; a truncated
 *    header is GARBAGE_ARGS, an operation that does not decode BADXDR,
 *    both logged.
 */
#include "tests/integration/harness.h"
#include "tests/integration/rawrpc.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct hx_env env;
static uint32_t xid = 0x4e460000;

enum { OP_ACCESS = 3, OP_GETATTR = 9, OP_GETFH = 10, OP_LOOKUP = 15, OP_OPEN = 18, OP_OPENATTR = 19, OP_PUTFH = 22,
       OP_PUTROOTFH = 24, OP_READDIR = 26, OP_READLINK = 27 };
#define NFS4ERR_NOTSUPP 10004
#define NFS4ERR_MINOR_VERS_MISMATCH 10021

static void hdr(struct xb *a, uint32_t minor, uint32_t numops)
{
	xb_string(a, "it");
	xb_u32(a, minor);
	xb_u32(a, numops);
}

/* LOOKUP each component of path; returns how many. */
static uint32_t walk(struct xb *a, const char *path)
{
	char buf[PATH_MAX], *save = NULL;
	uint32_t n = 0;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save), n++) {
		if (a) {
			xb_u32(a, OP_LOOKUP);
			xb_string(a, c);
		}
	}
	return n;
}

/* Send a COMPOUND; its status (or -1), r->body at the first result. */
static int compound(struct raw_conn *c, const struct xb *a, struct raw_reply *r, uint32_t *nres)
{
	uint32_t len;

	if (raw_call(c, ++xid, RAW_NFS_PROG, 4, 1, a->p, a->len, r) != RAW_RECV_OK)
		return -1;
	if (r->reply_stat != 0 || r->accept_stat != 0)
		return -1;
	int st = (int)xd_u32(&r->body);
	xd_opaque(&r->body, &len, 1024);
	*nres = xd_u32(&r->body);
	return r->body.bad ? -1 : st;
}

static bool res_ok(struct raw_reply *r, uint32_t op)
{
	uint32_t got = xd_u32(&r->body), st = xd_u32(&r->body);
	return !r->body.bad && got == op && st == 0;
}

static void test_off_by_default(void)
{
	struct raw_conn c;
	struct raw_reply r;

	hx_section("NFSv4 is off by default");
	if (hx_daemon_start(&env) != 0 || !CHECK(raw_connect(&c, env.port) == 0, "connect"))
		return;
	CHECK(raw_call(&c, ++xid, RAW_NFS_PROG, 4, 0, NULL, 0, &r) == RAW_RECV_OK && r.reply_stat == 0 &&
	      r.accept_stat == 2 && r.low == 3 && r.high == 3, "version 4 NULL: PROG_MISMATCH 3..3");
	raw_reply_free(&r);
	raw_close(&c);
	hx_daemon_stop(&env);
}

/* PUTROOTFH, LOOKUP..., GETFH, GETATTR, READDIR on the export. */
static void test_walk(struct raw_conn *c, uint8_t *fh, uint32_t *fh_len)
{
	uint32_t n, len, depth = walk(NULL, env.export_dir), names = 0;
	struct raw_reply r;
	const uint8_t *p;
	struct xb a;
	bool found = false;

	hx_section("PUTROOTFH, LOOKUP to the export, GETFH, GETATTR, READDIR");
	xb_init(&a);
	hdr(&a, 0, 1 + depth + 3);
	xb_u32(&a, OP_PUTROOTFH);
	walk(&a, env.export_dir);
	xb_u32(&a, OP_GETFH);
	xb_u32(&a, OP_GETATTR);
	xb_u32(&a, 1);
	xb_u32(&a, (1u << 1) | (1u << 20)); /* type, fileid */
	xb_u32(&a, OP_READDIR);
	xb_u64(&a, 0);
	xb_u64(&a, 0);
	xb_u32(&a, 8192);
	xb_u32(&a, 8192);
	xb_u32(&a, 0);
	CHECK_EQ(compound(c, &a, &r, &n), 0, "COMPOUND status");
	xb_free(&a);
	CHECK_EQ(n, 1 + depth + 3, "results");
	CHECK(res_ok(&r, OP_PUTROOTFH), "PUTROOTFH");
	for (uint32_t i = 0; i < depth; i++)
		CHECK(res_ok(&r, OP_LOOKUP), "LOOKUP %u", i);
	CHECK(res_ok(&r, OP_GETFH), "GETFH");
	p = xd_opaque(&r.body, fh_len, 128);
	if (p)
		memcpy(fh, p, *fh_len);
	CHECK(res_ok(&r, OP_GETATTR), "GETATTR");
	CHECK_EQ(xd_u32(&r.body), 3, "bitmap words");
	CHECK_EQ(xd_u32(&r.body), (1u << 1) | (1u << 20), "bitmap word 0");
	xd_u32(&r.body), xd_u32(&r.body);
	CHECK_EQ(xd_u32(&r.body), 12, "attrlist length");
	CHECK_EQ(xd_u32(&r.body), 2, "type NF4DIR");
	xd_u64(&r.body);
	CHECK(res_ok(&r, OP_READDIR), "READDIR");
	xd_skip(&r.body, 8);
	while (xd_u32(&r.body) == 1 && !r.body.bad) {
		xd_u64(&r.body);
		p = xd_opaque(&r.body, &len, 256);
		found |= p && len == 5 && memcmp(p, "hello", 5) == 0;
		names++;
		uint32_t words = xd_u32(&r.body);
		xd_skip(&r.body, 4 * words);
		xd_opaque(&r.body, &len, 4096);
	}
	CHECK_EQ(xd_u32(&r.body), 1, "eof");
	CHECK(found && names == 2, "READDIR lists hello and link (%u entries)", names);
	raw_reply_free(&r);
}

static void test_handles_and_errors(struct raw_conn *c, const uint8_t *fh, uint32_t fh_len)
{
	uint8_t v3fh[64];
	uint32_t v3len = 0, n, len;
	struct raw_reply r;
	const uint8_t *p;
	struct xb a;

	hx_section("READLINK, the NFSv3 handle, NOTSUPP, MINOR_VERS_MISMATCH, NFSv3 beside");
	xb_init(&a);
	hdr(&a, 0, 3);
	xb_u32(&a, OP_PUTFH);
	xb_opaque(&a, fh, fh_len);
	xb_u32(&a, OP_LOOKUP);
	xb_string(&a, "link");
	xb_u32(&a, OP_READLINK);
	CHECK_EQ(compound(c, &a, &r, &n), 0, "PUTFH LOOKUP READLINK");
	xb_free(&a);
	res_ok(&r, OP_PUTFH), res_ok(&r, OP_LOOKUP);
	CHECK(res_ok(&r, OP_READLINK), "READLINK");
	p = xd_opaque(&r.body, &len, 4096);
	CHECK(p && len == 5 && memcmp(p, "hello", 5) == 0, "the link's target");
	raw_reply_free(&r);

	CHECK_EQ(raw_mnt(c, ++xid, env.export_dir, v3fh, &v3len), 0, "MNT");
	CHECK(v3len == fh_len && memcmp(v3fh, fh, fh_len) == 0, "NFSv3 and NFSv4 name the export's root alike");

	xb_init(&a);
	hdr(&a, 0, 2);
	xb_u32(&a, OP_PUTFH);
	xb_opaque(&a, fh, fh_len);
	xb_u32(&a, OP_OPENATTR); /* OPEN is built now; named attributes never are */
	CHECK_EQ(compound(c, &a, &r, &n), NFS4ERR_NOTSUPP, "OPENATTR: NOTSUPP");
	CHECK_EQ(n, 2, "two results");
	raw_reply_free(&r);
	xb_free(&a);

	xb_init(&a);
	hdr(&a, 9, 1);
	xb_u32(&a, OP_PUTROOTFH);
	CHECK_EQ(compound(c, &a, &r, &n), NFS4ERR_MINOR_VERS_MISMATCH, "minor version 9");
	CHECK_EQ(n, 0, "no results");
	raw_reply_free(&r);
	xb_free(&a);

	CHECK(raw_call(c, ++xid, RAW_NFS_PROG, 3, 0, NULL, 0, &r) == RAW_RECV_OK && r.accept_stat == 0,
	      "NFSv3 NULL still served");
	raw_reply_free(&r);

	/* A truncated header: GARBAGE_ARGS; a truncated operation: BADXDR; one log line each. */
	static const uint8_t cut[6] = { 0, 0, 0, 8, 'a', 'b' };
	CHECK(raw_call(c, ++xid, RAW_NFS_PROG, 4, 1, cut, sizeof(cut), &r) == RAW_RECV_OK && r.reply_stat == 0 &&
	      r.accept_stat == 4, "truncated COMPOUND header: GARBAGE_ARGS");
	raw_reply_free(&r);
	xb_init(&a);
	hdr(&a, 0, 1);
	xb_u32(&a, OP_PUTFH);
	xb_u32(&a, 200); /* a handle longer than NFS4_FHSIZE */
	CHECK_EQ(compound(c, &a, &r, &n), 10036, "PUTFH with a 200-byte handle: NFS4ERR_BADXDR");
	raw_reply_free(&r);
	xb_free(&a);
	CHECK(hx_log_count(&env, "does not decode") >= 2, "logged");
}

int main(int argc, char **argv)
{
	struct raw_conn c;
	struct raw_reply r;
	uint8_t fh[128];
	uint32_t fh_len = 0;
	FILE *f;

	hx_begin("nfs4", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	hx_write_file(hx_xpath(&env, "hello"), "hi\n", 3, 0644);
	if (symlink("hello", hx_xpath(&env, "link")) != 0)
		CHECK(false, "symlink");
	test_off_by_default();

	f = fopen(env.conf_path, "a");
	if (!CHECK(f != NULL, "config"))
		return hx_end();
	fprintf(f, "[nfsv4]\nenable = yes\n");
	fclose(f);
	if (hx_daemon_start(&env) != 0 || !CHECK(raw_connect(&c, env.port) == 0, "connect"))
		return hx_end();
	CHECK(raw_call(&c, ++xid, RAW_NFS_PROG, 4, 0, NULL, 0, &r) == RAW_RECV_OK && r.accept_stat == 0,
	      "version 4 NULL answered");
	raw_reply_free(&r);
	test_walk(&c, fh, &fh_len);
	test_handles_and_errors(&c, fh, fh_len);
	raw_close(&c);
	hx_daemon_stop(&env);
	hx_env_release(&env);
	return hx_end();
}
