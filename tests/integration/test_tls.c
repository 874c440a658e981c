/*
 * test_tls.c - RPC-with-TLS (RFC 9289) on the TCP transport, end to end with
 * real parts: a throwaway CA, server and client certificates made with the
 * openssl command, rnfsd with [tls], and a real TLS 1.3 client over libssl
 * (tls_client.c; the VM's Linux 6.1 kernel client has no RPC-with-TLS, so
 * this client is the test's client). Asserts:
 *  - without [tls] an AUTH_TLS probe gets a plain NULL reply (no STARTTLS);
 *  - with [tls]: STARTTLS, then a TLS 1.3 handshake; NFSv3 NULL, MNT and
 *    GETATTR, 16 pipelined NULLs, and NFSv4.1 COMPOUNDs (nfs4raw over the
 *    same raw connection) with a 1 MiB WRITE and READ, inside TLS; 8 NFSv3
 *    READs of 1 MiB sent at once by a client that reads nothing for 0.5 s
 *    (the server's TLS writes wait for the socket and resume) arrive whole; a second probe inside TLS gets no STARTTLS; AUTH_TLS on a
 *    procedure other than NULL is AUTH_BADCRED (§4.1); TLS 1.2 is refused (§5.1);
 *  - a client certificate signed by the CA is verified (mutual TLS), one of
 *    another CA fails the handshake;
 *  - replies are replayed only where xprtsec= admits: a REMOVE in an
 *    xprtsec=tls export retransmitted from the same port inside TLS comes
 *    from the reply cache, on plain TCP it gets NFS3ERR_ACCES; a cached
 *    NFSv4.1 COMPOUND retried on a plain connection of the session gets
 *    RETRY_UNCACHED_REP, then WRONGSEC when sent anew;
 *  - garbage after STARTTLS closes that connection only: an established TLS
 *    client keeps working;
 *  - SIGHUP reads a renewed certificate (new handshakes get it, a TLS
 *    connection from before is still served); a broken file keeps the
 *    running one;
 *  - 1,000 connect/probe/handshake/NULL/close cycles leave the daemon's
 *    descriptor count where it was and its RSS within 2 MiB of it.
 */
#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"
#include "tests/integration/rawrpc.h"
#include "tests/integration/tls_client.h"

#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define SOAK_CYCLES 1000

static struct hx_env env;
static SSL_CTX *ctx_anon, *ctx_cert, *ctx_rogue;

/* A shell command in the test's directory; true if it exited 0. */
static bool sh(const char *fmt, ...)
{
	char cmd[2048], full[2600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "cd '%s' && (%s) >>openssl.log 2>&1", env.dir, cmd);
	return system(full) == 0;
}

/* CA, server certificate (localhost, 127.0.0.1), a client certificate of the
 * CA and one of a rogue CA. */
static bool make_certs(void)
{
	static const char *const key = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";

	return sh("printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' >srv.ext") &&
	       sh("openssl req -x509 %s -keyout ca.key -out ca.crt -days 2 -subj /CN=rnfsd-test-ca", key) &&
	       sh("openssl req -x509 %s -keyout rogue.key -out rogue.crt -days 2 -subj /CN=rogue-ca", key) &&
	       sh("openssl req %s -keyout srv.key -out srv.csr -subj /CN=localhost", key) &&
	       sh("openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 "
		  "-extfile srv.ext -out srv.crt") &&
	       sh("openssl req %s -keyout cli.key -out cli.csr -subj /CN=client", key) &&
	       sh("openssl x509 -req -in cli.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out cli.crt") &&
	       sh("openssl req %s -keyout bad.key -out bad.csr -subj /CN=client", key) &&
	       sh("openssl x509 -req -in bad.csr -CA rogue.crt -CAkey rogue.key -CAcreateserial -days 2 -out bad.crt");
}

/* NFSv3 NULL on c: true if answered SUCCESS. */
static bool null3(struct raw_conn *c, uint32_t xid)
{
	struct raw_reply r;

	if (raw_call(c, xid, RAW_NFS_PROG, 3, 0, NULL, 0, &r) != RAW_RECV_OK)
		return false;
	bool ok = r.reply_stat == 0 && r.accept_stat == 0;
	raw_reply_free(&r);
	return ok;
}

/* NFSv3 procedure proc with arguments a (freed here): the nfsstat3, or -1. */
static int call3(struct raw_conn *c, uint32_t xid, uint32_t proc, struct xb *a)
{
	struct raw_reply r;
	int st = -1;

	enum raw_recv_result rc = raw_call(c, xid, RAW_NFS_PROG, 3, proc, a->p, a->len, &r);
	xb_free(a);
	if (rc != RAW_RECV_OK)
		return -1;
	if (r.reply_stat == 0 && r.accept_stat == 0)
		st = (int)xd_u32(&r.body);
	raw_reply_free(&r);
	return st;
}

/* NFSv3 GETATTR of fh: nfsstat3, or -1. */
static int getattr3(struct raw_conn *c, uint32_t xid, const uint8_t *fh, uint32_t fh_len)
{
	struct xb a;

	xb_init(&a);
	xb_opaque(&a, fh, fh_len);
	return call3(c, xid, 1, &a);
}

/* Connect, probe NFS vers (NULL) and, on STARTTLS, handshake with ctx. 0, or -1. */
static int tls_open(struct raw_conn *c, SSL_CTX *ctx, uint32_t vers, uint32_t xid)
{
	if (raw_connect(c, env.port) != 0)
		return -1;
	if (tlsc_probe(c, xid, RAW_NFS_PROG, vers, 0, NULL) != 1 || tlsc_start(c, ctx) != 0) {
		raw_close(c);
		return -1;
	}
	return 0;
}

/* The exports of the xprtsec= section: the default one (any), and xt, xm, xn. */
static const char *const xdirs[] = { "xt", "xm", "xn" };
static const char *const xmodes[] = { "tls", "mtls", "none" };

static int start(bool tls)
{
	char x[3][PATH_MAX];

	if (hx_write_config(&env) != 0)
		return -1;
	for (int i = 0; i < 3; i++) {
		snprintf(x[i], sizeof(x[i]), "%s/%s", env.dir, xdirs[i]);
		mkdir(x[i], 0755);
	}
	if (hx_write_exports(&env, "%s 127.0.0.1(rw,no_root_squash,insecure)\n"
			     "%s 127.0.0.1(rw,no_root_squash,insecure,xprtsec=%s)\n"
			     "%s 127.0.0.1(rw,no_root_squash,insecure,xprtsec=%s)\n"
			     "%s 127.0.0.1(rw,no_root_squash,insecure,xprtsec=%s)\n",
			     env.export_dir, x[0], xmodes[0], x[1], xmodes[1], x[2], xmodes[2]) != 0)
		return -1;
	if (tls && hx_append_config(&env, "[tls]\ncertificate = %s/srv.crt\nkey = %s/srv.key\nca = %s/ca.crt\n"
				    "[tcp]\nrecord-timeout = 2\n", env.dir, env.dir, env.dir) != 0)
		return -1;
	return hx_daemon_start(&env);
}

/* 16 NULL calls sent back to back inside TLS, then their 16 replies: several
 * records decrypted per read (what OpenSSL holds is parsed without the socket). */
static void pipelined(struct raw_conn *c)
{
	struct xb b;
	struct raw_reply r;
	unsigned sent = 0, answered = 0;

	for (uint32_t i = 0; i < 16; i++) {
		xb_init(&b);
		xb_call_header(&b, 0x7250 + i, RAW_NFS_PROG, 3, 0, 0, 0);
		sent += raw_send_record(c, b.p, b.len) == 0;
		xb_free(&b);
	}
	for (unsigned i = 0; i < sent && raw_recv_reply(c, &r, 5000) == RAW_RECV_OK; i++) {
		answered += r.reply_stat == 0 && r.accept_stat == 0 && r.xid >= 0x7250 && r.xid < 0x7260;
		raw_reply_free(&r);
	}
	CHECK(sent == 16 && answered == 16, "16 pipelined NULLs inside TLS answered (%u of %u)", answered, sent);
}

/* 1 MiB WRITE and READ inside TLS: records larger than the connection's
 * buffer both ways (SSL_read straight into a call context's buffer). */
static void big_io(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct n4_sid *sid)
{
	enum { BIG = 1024 * 1024 };
	uint8_t *out = malloc(BIG), *in = malloc(BIG);
	uint64_t seed = 0x715;
	uint32_t got = 0;

	if (!CHECK(out && in, "buffers"))
		goto done;
	hx_fill(&seed, out, BIG);
	CHECK_NFS(n4_write(k, fh, fh_len, sid, 4096, out, BIG), 0, "a 1 MiB WRITE inside TLS");
	CHECK_NFS(n4_read(k, fh, fh_len, sid, 4096, BIG, in, &got), 0, "a 1 MiB READ inside TLS");
	CHECK(got == BIG && memcmp(in, out, BIG) == 0, "the READ returns the WRITE's bytes (%u)", got);
done:
	free(out);
	free(in);
}

/* NFSv3 READs of the 1 MiB file "big" (bytes want) inside TLS: 8 sent at once by a
 * client that then reads nothing for half a second, more than the socket buffers
 * hold, so the server's TLS writes wait for the socket (SSL_write wants the same
 * bytes again) and must still deliver every reply whole and in order of bytes. */
static void slow_read3_of(struct raw_conn *c, const uint8_t *dir, uint32_t dir_len, const uint8_t *want, uint32_t n)
{
	enum { READS = 8 };
	uint8_t fh[64];
	uint32_t fh_len = 0, len = 0;
	unsigned whole = 0;
	struct raw_reply r;
	struct xb a;

	if (!CHECK_NFS(raw_lookup3(c, 0x7230, dir, dir_len, "big", fh, &fh_len), 0, "LOOKUP big inside TLS"))
		return;
	for (uint32_t i = 0; i < READS; i++) {
		xb_init(&a);
		xb_call_header(&a, 0x7240 + i, RAW_NFS_PROG, 3, 6, 0, 0); /* READ */
		xb_opaque(&a, fh, fh_len);
		xb_u64(&a, 0);
		xb_u32(&a, n);
		raw_send_record(c, a.p, a.len);
		xb_free(&a);
	}
	usleep(500 * 1000); /* the replies fill the socket buffers meanwhile */
	for (unsigned i = 0; i < READS && raw_recv_reply(c, &r, 10000) == RAW_RECV_OK; i++) {
		uint32_t st = r.reply_stat == 0 && r.accept_stat == 0 ? xd_u32(&r.body) : 1;
		if (st == 0 && xd_u32(&r.body))
			xd_skip(&r.body, 84); /* post_op_attr: fattr3 */
		xd_u32(&r.body);          /* count */
		xd_u32(&r.body);          /* eof */
		const uint8_t *p = st == 0 ? xd_opaque(&r.body, &len, n) : NULL;
		whole += p && len == n && memcmp(p, want, n) == 0;
		raw_reply_free(&r);
	}
	CHECK_EQ(whole, READS, "8 READs of 1 MiB sent at once, read late: every reply whole");
}

/* MiB/s of 32 sequential NFSv3 READs of 1 MiB of "big" on c (a measure, not checked), or 0. */
static double read_rate(struct raw_conn *c, const uint8_t *fh, uint32_t fh_len)
{
	double t0 = hx_now();
	struct raw_reply r;
	struct xb a;

	for (uint32_t i = 0; i < 32; i++) {
		xb_init(&a);
		xb_opaque(&a, fh, fh_len);
		xb_u64(&a, 0);
		xb_u32(&a, 1 << 20);
		enum raw_recv_result rc = raw_call(c, 0x7280 + i, RAW_NFS_PROG, 3, 6, a.p, a.len, &r);
		xb_free(&a);
		if (rc != RAW_RECV_OK)
			return 0;
		raw_reply_free(&r);
	}
	return 32 / (hx_now() - t0);
}

/* The same READs inside TLS and over plain TCP: the two rates side by side. */
static void read_rates(struct raw_conn *tls, const uint8_t *dir, uint32_t dir_len)
{
	struct raw_conn plain;
	uint8_t fh[64];
	uint32_t fh_len = 0;

	if (raw_lookup3(tls, 0x7270, dir, dir_len, "big", fh, &fh_len) != 0 || raw_connect(&plain, env.port) != 0)
		return;
	double t = read_rate(tls, fh, fh_len), p = read_rate(&plain, fh, fh_len);
	hx_note("1 MiB READs: %.0f MiB/s inside TLS, %.0f MiB/s over plain TCP (a measure, not checked)", t, p);
	raw_close(&plain);
}

/* A 1 MiB file "big" in the export (dir: its handle), read by slow_read3_of. */
static void slow_read3(struct raw_conn *c, const uint8_t *dir, uint32_t dir_len)
{
	uint8_t *big = malloc(1 << 20);
	uint64_t seed = 0x3;
	char path[PATH_MAX + 8];

	if (!CHECK(big != NULL, "buffer"))
		return;
	hx_fill(&seed, big, 1 << 20);
	snprintf(path, sizeof(path), "%s/big", env.export_dir);
	if (CHECK(hx_write_file(path, big, 1 << 20, 0644) == 0, "a 1 MiB file")) {
		slow_read3_of(c, dir, dir_len, big, 1 << 20);
		read_rates(c, dir, dir_len);
	}
	free(big);
}

static void test_no_tls(void)
{
	struct raw_conn c;

	hx_section("without [tls]: the probe gets a plain NULL reply");
	if (!CHECK(start(false) == 0, "daemon starts without [tls]"))
		return;
	CHECK(hx_log_count(&env, "xprtsec=tls cannot be met without [tls] certificate") == 1,
	      "an xprtsec=tls export without TLS is warned about");
	if (CHECK(raw_connect(&c, env.port) == 0, "connect")) {
		CHECK_EQ(tlsc_probe(&c, 0x7100, RAW_NFS_PROG, 3, 0, NULL), 0, "probe answered, no STARTTLS");
		CHECK(null3(&c, 0x7101), "the connection stays plain RPC");
		raw_close(&c);
	}
	hx_daemon_stop(&env);
}

static void test_v3_over_tls(void)
{
	struct raw_conn c, p;
	uint8_t fh[64];
	uint32_t fh_len = 0, auth = 0;

	hx_section("NFSv3 and MOUNT inside TLS");
	if (!CHECK(raw_connect(&c, env.port) == 0, "connect"))
		return;
	CHECK_EQ(tlsc_probe(&c, 0x7200, RAW_NFS_PROG, 3, 0, NULL), 1, "probe answered STARTTLS (RFC 9289 §4.1)");
	if (CHECK(tlsc_start(&c, ctx_anon) == 0, "TLS handshake")) {
		CHECK(strcmp(tlsc_version(&c), "TLSv1.3") == 0, "TLS 1.3 (RFC 9289 §5.1): %s", tlsc_version(&c));
		CHECK(null3(&c, 0x7201), "NFSv3 NULL inside TLS");
		CHECK_EQ(raw_mnt(&c, 0x7202, env.export_dir, fh, &fh_len), 0, "MNT inside TLS");
		CHECK_NFS(getattr3(&c, 0x7203, fh, fh_len), 0, "GETATTR inside TLS");
		slow_read3(&c, fh, fh_len);
		pipelined(&c);
		CHECK_EQ(tlsc_probe(&c, 0x7204, RAW_NFS_PROG, 3, 0, NULL), 0, "a probe inside TLS: no second STARTTLS");
		CHECK(null3(&c, 0x7205), "still served after it");
	}
	tlsc_close(&c);
	if (CHECK(raw_connect(&p, env.port) == 0, "connect")) {
		CHECK_EQ(tlsc_probe(&p, 0x7210, RAW_NFS_PROG, 3, 1, &auth), -2, "AUTH_TLS on GETATTR is denied");
		CHECK_EQ(auth, 1, "with AUTH_BADCRED");
		raw_close(&p);
	}
	CHECK(hx_log_count(&env, "records: ") >= 1, "the handshake's record layer is logged");
	CHECK(hx_log_count(&env, "cannot be met") == 1, "with [tls] and a CA every xprtsec= can be met: no new warning");

	/* RFC 9289 §5.1: nothing older than TLS 1.3 is negotiated. */
	SSL_CTX *old = tlsc_ctx_new(NULL, NULL, NULL);
	if (CHECK(old != NULL, "a TLS 1.2 client context")) {
		SSL_CTX_set_min_proto_version(old, TLS1_2_VERSION);
		SSL_CTX_set_max_proto_version(old, TLS1_2_VERSION);
		CHECK(tls_open(&p, old, 3, 0x7220) != 0, "a TLS 1.2 client is refused");
		SSL_CTX_free(old);
	}
}

/* An NFSv4.1 connection (no client yet), inside TLS with ctx unless NULL (probe xid). 0 or -1. */
static int n41_connect(struct n4_client *k, SSL_CTX *ctx, uint32_t xid)
{
	memset(k, 0, sizeof(*k));
	if (n4_connect(k, env.port, 1) != 0)
		return -1;
	if (ctx && (tlsc_probe(&k->c, xid, RAW_NFS_PROG, 4, 0, NULL) != 1 || tlsc_start(&k->c, ctx) != 0)) {
		raw_close(&k->c);
		return -1;
	}
	return 0;
}

/* Close a connection of an n4_client (TLS's close_notify first, if any). */
static void n41_close(struct n4_client *k)
{
	tlsc_close(&k->c);
	k->c.fd = -1;
	n4_client_close(k);
}

static void test_v41_over_tls(void)
{
	struct n4_client k;
	struct n4_sid sid;
	uint8_t fh[128], buf[64];
	uint32_t fh_len = 0, got = 0;

	hx_section("NFSv4.1 COMPOUNDs inside TLS (nfs4raw on the TLS connection)");
	memset(&k, 0, sizeof(k));
	if (!CHECK(n4_connect(&k, env.port, 1) == 0, "connect"))
		return;
	CHECK_EQ(tlsc_probe(&k.c, 0x7300, RAW_NFS_PROG, 4, 0, NULL), 1, "NFSv4 probe answered STARTTLS");
	if (CHECK(tlsc_start(&k.c, ctx_anon) == 0, "TLS handshake")) {
		CHECK_NFS(n4_setup(&k, "tls-client"), 0, "EXCHANGE_ID, CREATE_SESSION, RECLAIM_COMPLETE inside TLS");
		CHECK_NFS(n4_open(&k, env.export_dir, "tlsfile", true, N4_ACCESS_BOTH, 0, "o1", NULL, &sid, fh, &fh_len),
			  0, "OPEN inside TLS");
		CHECK_NFS(n4_write(&k, fh, fh_len, &sid, 0, "over tls", 8), 0, "WRITE inside TLS");
		CHECK_NFS(n4_read(&k, fh, fh_len, &sid, 0, sizeof(buf), buf, &got), 0, "READ inside TLS");
		CHECK(got == 8 && memcmp(buf, "over tls", 8) == 0, "READ returns what was written (%u bytes)", got);
		big_io(&k, fh, fh_len, &sid);
		CHECK_NFS(n4_close(&k, fh, fh_len, NULL, &sid), 0, "CLOSE inside TLS");
		n4_destroy_client(&k);
	}
	n41_close(&k);
}

static void test_mtls(void)
{
	struct raw_conn c;

	hx_section("client certificates (RFC 9289 §5.2.2)");
	if (CHECK(tls_open(&c, ctx_cert, 3, 0x7400) == 0, "handshake with a certificate of the CA")) {
		CHECK(null3(&c, 0x7401), "served");
		tlsc_close(&c);
	}
	CHECK(hx_log_count(&env, "client certificate verified") >= 1, "logged as verified");
	/* TLS 1.3: the server checks the client's certificate after the client's
	 * Finished, so the refusal may come as the handshake's or the first call's. */
	bool refused = tls_open(&c, ctx_rogue, 3, 0x7410) != 0;
	if (!refused) {
		refused = !null3(&c, 0x7411);
		tlsc_close(&c);
	}
	CHECK(refused, "a certificate of another CA is refused");
}

static void test_bad_handshake(void)
{
	static const char junk[] = "this is no ClientHello, just bytes after STARTTLS\r\n";
	struct raw_conn good, bad;
	uint8_t *buf = NULL;
	size_t len = 0;

	hx_section("garbage after STARTTLS closes only that connection");
	if (!CHECK(tls_open(&good, ctx_anon, 3, 0x7500) == 0, "a TLS client connects"))
		return;
	if (CHECK(raw_connect(&bad, env.port) == 0, "another connects")) {
		CHECK_EQ(tlsc_probe(&bad, 0x7501, RAW_NFS_PROG, 3, 0, NULL), 1, "its probe gets STARTTLS");
		CHECK(raw_send_bytes(&bad, junk, sizeof(junk)) == 0, "it sends garbage");
		CHECK_EQ(raw_recv_record(&bad, &buf, &len, 5000), RAW_RECV_CLOSED, "the server closes it");
		free(buf);
		raw_close(&bad);
	}
	CHECK(null3(&good, 0x7502), "the first TLS client is still served");
	CHECK(hx_log_count(&env, "handshake failed") >= 1, "the failure is logged");
	/* A client that got STARTTLS and says nothing more: closed by the sweep
	 * after record-timeout (2 s here), not kept for ever. */
	if (CHECK(raw_connect(&bad, env.port) == 0, "a third connects")) {
		CHECK_EQ(tlsc_probe(&bad, 0x7503, RAW_NFS_PROG, 3, 0, NULL), 1, "its probe gets STARTTLS");
		CHECK_EQ(raw_recv_record(&bad, &buf, &len, 8000), RAW_RECV_CLOSED,
			 "a handshake that never starts is closed after record-timeout");
		free(buf);
		raw_close(&bad);
	}
	CHECK(hx_log_count(&env, "TLS handshake not complete within record-timeout") >= 1, "and logged");
	CHECK(null3(&good, 0x7504), "the first TLS client is still served");
	tlsc_close(&good);
}

/* NFSv3 GETATTR of export path through c (MNT first, answered whatever xprtsec= says). */
static int getattr_export(struct raw_conn *c, const char *path, uint32_t xid)
{
	uint8_t fh[64];
	uint32_t fh_len = 0;
	int mnt = raw_mnt(c, xid, path, fh, &fh_len);

	if (!CHECK_EQ(mnt, 0, "MNT %s is answered (MOUNT does not check xprtsec=)", path))
		return -1;
	return getattr3(c, xid + 1, fh, fh_len);
}

/* Append GETATTR of the type to a, send it as k's COMPOUND: its status. */
static int getattr41_call(struct n4_client *k, struct xb *a)
{
	struct raw_reply r;

	xb_u32(a, N4_GETATTR);
	xb_u32(a, 1);
	xb_u32(a, 1u << 1); /* type */
	int st = n4_call(k, a, &r);
	if (st >= 0)
		raw_reply_free(&r);
	return st;
}

/* NFSv4.1: PUTROOTFH, LOOKUP to path, GETATTR type: the COMPOUND status. */
static int walk41(struct n4_client *k, const char *path)
{
	struct xb a;

	n4_begin(k, &a, n4_walk(NULL, path) + 1);
	n4_walk(&a, path);
	return getattr41_call(k, &a);
}

/* One connection of each kind against every export; mode: 0 plain, 1 TLS, 2 mutual TLS. */
static void xprtsec_as(int mode, uint32_t xid)
{
	static const char *const names[] = { "plain TCP", "TLS", "mutual TLS" };
	struct n4_client k;
	char path[PATH_MAX];

	if (!CHECK(n41_connect(&k, mode ? (mode == 2 ? ctx_cert : ctx_anon) : NULL, xid) == 0, "%s connection",
		   names[mode]))
		return;
	CHECK_NFS(getattr_export(&k.c, env.export_dir, xid + 2), 0, "%s: GETATTR on the default export (any)",
		  names[mode]);
	for (int i = 0; i < 3; i++) {
		/* The exports' modes: xt tls, xm mtls, xn none; admitted only by the connection's own. */
		static const int mode_of[] = { 1, 2, 0 };
		bool in = mode_of[i] == mode;
		snprintf(path, sizeof(path), "%s/%s", env.dir, xdirs[i]);
		CHECK_NFS(getattr_export(&k.c, path, xid + 4 + 2 * (uint32_t)i), in ? 0 : 13,
			  "%s: NFSv3 GETATTR on xprtsec=%s: %s", names[mode], xmodes[i], in ? "OK" : "NFS3ERR_ACCES");
	}
	if (CHECK_NFS(n4_setup(&k, names[mode]), 0, "%s: NFSv4.1 client set up", names[mode])) {
		CHECK_NFS(walk41(&k, env.export_dir), 0, "%s: NFSv4.1 LOOKUP into the default export", names[mode]);
		for (int i = 0; i < 3; i++) {
			static const int mode_of[] = { 1, 2, 0 };
			bool in = mode_of[i] == mode;
			snprintf(path, sizeof(path), "%s/%s", env.dir, xdirs[i]);
			CHECK_NFS(walk41(&k, path), in ? 0 : N4ERR_WRONGSEC, "%s: NFSv4.1 LOOKUP into xprtsec=%s: %s",
				  names[mode], xmodes[i], in ? "OK" : "NFS4ERR_WRONGSEC");
		}
		n4_destroy_client(&k);
	}
	n41_close(&k);
}

static void test_xprtsec(void)
{
	hx_section("exports' xprtsec= over plain TCP, TLS and mutual TLS");
	xprtsec_as(0, 0x7600);
	xprtsec_as(1, 0x7700);
	xprtsec_as(2, 0x7800);
	CHECK(hx_log_count(&env, "(xprtsec=)") >= 1, "refusals are logged");
}

/* A plain connection to the daemon from 127.0.0.1:src, as a client reconnecting from its port. 0 or -1. */
static int connect_from(struct raw_conn *c, uint16_t src)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(src) };
	int one = 1;

	memset(c, 0, sizeof(*c));
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (c->fd < 0)
		return -1;
	setsockopt(c->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(c->fd, (struct sockaddr *)&sin, sizeof(sin)) == 0) {
		sin.sin_port = htons(env.port);
		if (connect(c->fd, (struct sockaddr *)&sin, sizeof(sin)) == 0)
			return 0;
	}
	printf("# connect from port %u: %s\n", src, strerror(errno)); /* the check says it failed */
	raw_close(c);
	return -1;
}

/* Close c with a reset (no TIME_WAIT: its port can connect again at once). */
static void abort_conn(struct raw_conn *c, bool tls)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	if (tls) {
		SSL_set_quiet_shutdown(c->io_arg, 1); /* no close_notify: the server must not close first */
		tlsc_close(c);
	}
	else
		raw_close(c);
}

/* NFSv3 REMOVE name in dir (xid): nfsstat3, or -1. */
static int remove3(struct raw_conn *c, uint32_t xid, const uint8_t *dir, uint32_t dir_len, const char *name)
{
	struct xb a;

	xb_init(&a);
	xb_opaque(&a, dir, dir_len);
	xb_string(&a, name);
	return call3(c, xid, 12, &a);
}

/*
 * The reply cache and xprtsec=: a REMOVE in the xprtsec=tls export made
 * inside TLS, retransmitted (same xid, address and port) on a TLS
 * connection, is answered from the cache (NFS3_OK although the file is
 * gone); retransmitted on a plain connection it is not: NFS3ERR_ACCES, as
 * any call there (on main: the cached NFS3_OK went out unprotected).
 */
static void replay_v3(void)
{
	struct raw_conn t, p;
	uint8_t fh[64];
	uint32_t fh_len = 0;
	uint16_t src;

	/* A port of our choosing, below the ephemeral range: no other socket takes it between the connections. */
	src = hx_free_port();
	if (!CHECK(connect_from(&t, src) == 0, "connect from port %u", src))
		return;
	if (!CHECK(tlsc_probe(&t, 0x7a00, RAW_NFS_PROG, 3, 0, NULL) == 1 && tlsc_start(&t, ctx_anon) == 0,
		   "TLS connection")) {
		raw_close(&t);
		return;
	}
	CHECK_EQ(raw_mnt(&t, 0x7a01, hx_path(&env, "xt"), fh, &fh_len), 0, "MNT xt inside TLS");
	hx_write_file(hx_path(&env, "xt/r1"), "x", 1, 0644);
	hx_write_file(hx_path(&env, "xt/r2"), "x", 1, 0644);
	CHECK_NFS(remove3(&t, 0x7a10, fh, fh_len, "r1"), 0, "REMOVE xt/r1 inside TLS");
	CHECK_NFS(remove3(&t, 0x7a11, fh, fh_len, "r2"), 0, "REMOVE xt/r2 inside TLS");
	abort_conn(&t, true);
	/* The same port again, inside TLS: the cache answers (the file is gone: only it says OK). */
	if (CHECK(connect_from(&t, src) == 0, "reconnect from port %u", src)) {
		if (CHECK(tlsc_probe(&t, 0x7a02, RAW_NFS_PROG, 3, 0, NULL) == 1 && tlsc_start(&t, ctx_anon) == 0,
			  "TLS again"))
			CHECK_NFS(remove3(&t, 0x7a10, fh, fh_len, "r1"), 0,
				  "the REMOVE retransmitted inside TLS: NFS3_OK from the reply cache");
		abort_conn(&t, true);
	}
	/* The same port, plain TCP: the cached reply is not for this connection. */
	if (CHECK(connect_from(&p, src) == 0, "reconnect from port %u without TLS", src)) {
		CHECK_NFS(remove3(&p, 0x7a11, fh, fh_len, "r2"), 13,
			  "the REMOVE retransmitted on plain TCP: NFS3ERR_ACCES (xprtsec=tls), not the cached NFS3_OK");
		raw_close(&p);
	}
}

/* NFSv4.1: SEQUENCE (cached) + PUTFH fh + GETATTR type on k: the COMPOUND status. */
static int getattr41_cached(struct n4_client *k, const uint8_t *fh, uint32_t fh_len)
{
	struct xb a;

	k->cache_this = 1;
	n4_begin_fh(k, &a, 2, fh, fh_len);
	return getattr41_call(k, &a);
}

/*
 * The session slot's reply and xprtsec=: a cached COMPOUND on a file of the
 * xprtsec=tls export, retried (same slot and sequence id) inside TLS, is
 * replayed; retried on a plain connection it gets RETRY_UNCACHED_REP (RFC
 * 8881 §2.10.6.1.3), and the request sent anew there WRONGSEC (on main:
 * the cached reply was replayed there).
 */
static void replay_v41(void)
{
	struct n4_client k;
	struct raw_conn tls;
	struct n4_sid sid;
	uint8_t fh[128];
	uint32_t fh_len = 0;

	if (!CHECK(n41_connect(&k, ctx_anon, 0x7b00) == 0, "TLS connection"))
		return;
	tls = k.c;
	if (CHECK_NFS(n4_setup(&k, "replay-tls"), 0, "NFSv4.1 client inside TLS") &&
	    CHECK_NFS(n4_open(&k, hx_path(&env, "xt"), "s1", true, N4_ACCESS_BOTH, 0, "o1", NULL, &sid, fh, &fh_len),
		      0, "OPEN xt/s1 inside TLS")) {
		CHECK_NFS(getattr41_cached(&k, fh, fh_len), 0, "SEQUENCE (cachethis), PUTFH, GETATTR inside TLS");
		k.slot_seq--;
		CHECK_NFS(getattr41_cached(&k, fh, fh_len), 0, "its retry inside TLS: the cached reply");
		if (CHECK(raw_connect(&k.c, env.port) == 0, "a plain connection for the session")) {
			k.slot_seq--;
			CHECK_NFS(getattr41_cached(&k, fh, fh_len), N4ERR_RETRY_UNCACHED_REP,
				  "its retry on plain TCP: RETRY_UNCACHED_REP, not the reply made for xprtsec=tls");
			CHECK_NFS(getattr41_cached(&k, fh, fh_len), N4ERR_WRONGSEC,
				  "sent anew there: NFS4ERR_WRONGSEC (xprtsec=tls)");
			raw_close(&k.c);
		}
		k.c = tls;
		CHECK_NFS(getattr41_cached(&k, fh, fh_len), 0, "the session still serves inside TLS");
		CHECK_NFS(n4_close(&k, fh, fh_len, NULL, &sid), 0, "CLOSE");
		n4_destroy_client(&k);
	}
	n41_close(&k);
}

static void test_replay_xprtsec(void)
{
	hx_section("replies from the reply cache and session slots honour xprtsec=");
	replay_v3();
	replay_v41();
	CHECK(hx_log_count(&env, "RETRY_UNCACHED_REP") >= 1, "the refused replay is logged");
}

static bool soak_once(uint32_t xid)
{
	struct raw_conn c;

	if (tls_open(&c, ctx_anon, 3, xid) != 0)
		return false;
	bool ok = null3(&c, xid + 1);
	tlsc_close(&c);
	return ok;
}

/* Descriptors back to base within a few seconds (closes are the loop's). */
static long fds_settle(long base)
{
	long n = n4_proc_fds(env.pid);

	for (int i = 0; i < 50 && n != base; i++) {
		usleep(100 * 1000);
		n = n4_proc_fds(env.pid);
	}
	return n;
}

static void test_soak(void)
{
	unsigned ok = 0;

	hx_section("%d TLS connect/handshake/close cycles", SOAK_CYCLES);
	for (uint32_t i = 0; i < 50; i++) /* warm-up: pools and caches reach their size */
		soak_once(0x8000000 + 2 * i);
	long fds0 = fds_settle(n4_proc_fds(env.pid)), rss0 = n4_proc_rss_kb(env.pid);
	CHECK(fds0 > 0 && rss0 > 0, "the daemon's descriptors and RSS are read");
	double t0 = hx_now();
	for (uint32_t i = 0; i < SOAK_CYCLES; i++)
		ok += soak_once(0x9000000 + 2 * i);
	hx_note("%.0f cycles per second (a measure, not checked)", SOAK_CYCLES / (hx_now() - t0));
	CHECK_EQ(ok, SOAK_CYCLES, "every cycle handshook and was answered");
	long fds1 = fds_settle(fds0), rss1 = n4_proc_rss_kb(env.pid);
	/* Not more: the file cache may close an earlier section's files meanwhile. */
	CHECK(fds1 <= fds0, "descriptors back where they started (%ld -> %ld)", fds0, fds1);
	/* An ASan build's quarantine holds freed memory: that much more. */
	CHECK(rss1 - rss0 < 2048 + n4_proc_quarantine_kb(env.pid), "RSS within 2 MiB of the start (%ld -> %ld KiB)",
	      rss0, rss1);
	hx_note("RSS %ld -> %ld KiB, descriptors %ld -> %ld", rss0, rss1, fds0, fds1);
}

/* SIGHUP the daemon; true once its log has one more line with needle (5 s at most). */
static bool sighup_logs(const char *needle)
{
	unsigned n = hx_log_count(&env, needle);

	hx_daemon_signal(&env, SIGHUP);
	for (int i = 0; i < 50 && hx_log_count(&env, needle) == n; i++)
		usleep(100 * 1000);
	return hx_log_count(&env, needle) > n;
}

/* A new server certificate (renewed) on SIGHUP; a broken one keeps the running one. */
static void test_reload(void)
{
	struct raw_conn before, c;
	char subj[256];

	hx_section("reload (SIGHUP) reads the certificate again");
	if (!CHECK(tls_open(&before, ctx_anon, 3, 0x7900) == 0, "a TLS client before the reload"))
		return;
	tlsc_peer_subject(&before, subj, sizeof(subj));
	CHECK(strcmp(subj, "/CN=localhost") == 0, "the first certificate: %s", subj);
	CHECK(sh("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv2.key -out srv2.csr "
		 "-subj /CN=localhost-renewed") &&
		      sh("openssl x509 -req -in srv2.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 "
			 "-extfile srv.ext -out srv2.crt") &&
		      sh("cp srv2.crt srv.crt && cp srv2.key srv.key"),
	      "a renewed certificate in place");
	CHECK(sighup_logs("RPC-with-TLS reloaded"), "reload logged");
	if (CHECK(tls_open(&c, ctx_anon, 3, 0x7910) == 0, "a TLS client after the reload")) {
		tlsc_peer_subject(&c, subj, sizeof(subj));
		CHECK(strcmp(subj, "/CN=localhost-renewed") == 0, "gets the renewed certificate: %s", subj);
		tlsc_close(&c);
	}
	CHECK(null3(&before, 0x7901), "the connection from before the reload is still served");
	tlsc_close(&before);

	CHECK(sh("echo broken >srv.crt"), "a broken certificate file");
	CHECK(sighup_logs("keeping the running certificate"), "the bad file is logged");
	if (CHECK(tls_open(&c, ctx_anon, 3, 0x7920) == 0, "TLS still offered")) {
		tlsc_peer_subject(&c, subj, sizeof(subj));
		CHECK(strcmp(subj, "/CN=localhost-renewed") == 0, "with the running certificate: %s", subj);
		tlsc_close(&c);
	}
	/* rnfsd --check-config loads the [tls] files too. */
	char cmd[PATH_MAX * 4], exe[PATH_MAX];
	if (!realpath(env.exe, exe)) /* sh() runs in the test's directory */
		snprintf(exe, sizeof(exe), "%s", env.exe);
	snprintf(cmd, sizeof(cmd), "'%s' --check-config -c '%s' -e '%s'", exe, env.conf_path, env.exports_path);
	CHECK(!sh("%s", cmd), "--check-config refuses a broken certificate file");
	CHECK(sh("grep -q 'tls: certificate' openssl.log"), "and says which");
	sh("cp srv2.crt srv.crt");
	CHECK(sh("%s", cmd), "--check-config accepts the good one");
}

/* The "tls" statistics: every handshake counted once, by its record layer. */
#define MTLS_ENTRY "\"xprtsec\": \"mtls\", \"tls_records\": \""
static void test_stats(void)
{
	struct raw_conn m;
	bool open = tls_open(&m, ctx_cert, 3, 0x7a00) == 0;
	char *doc = n4_stats_json(env.stats_socket);

	/* The client is done at its Finished; the server's loop marks the connection mtls when it
	 * reads it, a moment later (seen in the TSan lane): up to 5 s for that. */
	for (double end = hx_now() + 5; doc && !strstr(doc, MTLS_ENTRY) && hx_now() < end; usleep(50000)) {
		free(doc);
		doc = n4_stats_json(env.stats_socket);
	}
	hx_section("the tls statistics");
	CHECK(open, "a mutual TLS connection stays open meanwhile");
	if (!CHECK(doc != NULL, "stats document"))
		return;
	CHECK(strstr(doc, MTLS_ENTRY) != NULL,
	      "its entry in connections says mtls and who makes its records");
	long long hs = n4_stats_num(doc, "tls", "handshakes"), k = n4_stats_num(doc, "tls", "kernel_tls");
	long long u = n4_stats_num(doc, "tls", "userspace_tls");
	CHECK(hs >= SOAK_CYCLES, "handshakes counted (%lld)", hs);
	CHECK(k >= 0 && u >= 0 && k + u == hs, "each by its record layer: kernel %lld + userspace %lld", k, u);
	CHECK(n4_stats_num(doc, "tls", "starttls") > hs, "STARTTLS answers counted, the failed ones too");
	CHECK(n4_stats_num(doc, "tls", "handshake_failures") >= 2, "failures counted (rogue certificate, garbage)");
	CHECK(n4_stats_num(doc, "tls", "mutual") >= 2, "mutual TLS counted");
	free(doc);
	if (getenv("RNFSCTL")) { /* meson sets it */
		static const char *const args[] = { NULL };
		char out[16384] = "";
		CHECK(hx_rnfsctl(&env, -1, out, sizeof(out), args) == 0 && strstr(out, "tls: ") &&
			      strstr(out, " handshakes ("),
		      "rnfsctl prints the tls line");
		CHECK(strstr(out, " mtls ") != NULL, "and the connection as mtls");
	}
	if (open)
		tlsc_close(&m);
}

int main(int argc, char **argv)
{
	hx_begin("tls", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	if (system("openssl version >/dev/null 2>&1") != 0)
		hx_skip("no openssl command");
	if (!make_certs())
		hx_skip("openssl could not make the test certificates (see openssl.log)");
	char ca[PATH_MAX + 16], crt[PATH_MAX + 16], key[PATH_MAX + 16], bad[PATH_MAX + 16], badk[PATH_MAX + 16];
	snprintf(ca, sizeof(ca), "%s/ca.crt", env.dir);
	snprintf(crt, sizeof(crt), "%s/cli.crt", env.dir);
	snprintf(key, sizeof(key), "%s/cli.key", env.dir);
	snprintf(bad, sizeof(bad), "%s/bad.crt", env.dir);
	snprintf(badk, sizeof(badk), "%s/bad.key", env.dir);
	ctx_anon = tlsc_ctx_new(ca, NULL, NULL);
	ctx_cert = tlsc_ctx_new(ca, crt, key);
	ctx_rogue = tlsc_ctx_new(ca, bad, badk);
	if (!ctx_anon || !ctx_cert || !ctx_rogue)
		hx_skip("no TLS client context");

	test_no_tls();
	if (CHECK(start(true) == 0, "daemon starts with [tls]")) {
		test_v3_over_tls();
		test_v41_over_tls();
		test_mtls();
		test_bad_handshake();
		test_xprtsec();
		test_replay_xprtsec();
		test_soak();
		test_stats();
		test_reload();
		CHECK(hx_daemon_alive(&env), "daemon still running");
		/* A clean stop: a sanitizer build's reports (LeakSanitizer at exit) fail here. */
		CHECK_EQ(hx_daemon_stop(&env), 0, "daemon stops cleanly");
	}
	SSL_CTX_free(ctx_anon);
	SSL_CTX_free(ctx_cert);
	SSL_CTX_free(ctx_rogue);
	hx_env_release(&env);
	return hx_end();
}
