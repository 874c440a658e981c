/*
 * tls_client.c - RPC-with-TLS client side for the integration tests (see
 * tls_client.h): the probe, a TLS 1.3 handshake through libssl, and the
 * struct raw_io that makes rawrpc's records travel inside TLS.
 */
#include "tests/integration/tls_client.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <openssl/err.h>
#include <openssl/x509.h>

static ssize_t tlsc_io_send(void *arg, const void *p, size_t n)
{
	size_t done = 0;

	return SSL_write_ex(arg, p, n, &done) == 1 ? (ssize_t)done : -1;
}

static ssize_t tlsc_io_recv(void *arg, void *p, size_t n)
{
	size_t got = 0;
	int r = SSL_read_ex(arg, p, n, &got);

	if (r == 1)
		return (ssize_t)got;
	return SSL_get_error(arg, r) == SSL_ERROR_ZERO_RETURN ? 0 : -1;
}

static bool tlsc_io_pending(void *arg)
{
	return SSL_pending(arg) > 0;
}

static const struct raw_io tlsc_io = { tlsc_io_send, tlsc_io_recv, tlsc_io_pending };

int tlsc_probe(struct raw_conn *c, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc, uint32_t *auth_stat)
{
	struct raw_reply r;
	struct xb b;
	int ret = -1;

	/* RFC 5531 §9 call header; RFC 9289 §4.1: credential AUTH_TLS with an
	 * empty body, verifier AUTH_NONE. */
	xb_init(&b);
	xb_u32(&b, xid);
	xb_u32(&b, 0); /* CALL */
	xb_u32(&b, 2);
	xb_u32(&b, prog);
	xb_u32(&b, vers);
	xb_u32(&b, proc);
	xb_u32(&b, TLSC_AUTH_TLS);
	xb_u32(&b, 0);
	xb_u32(&b, 0); /* AUTH_NONE */
	xb_u32(&b, 0);
	int sent = raw_send_record(c, b.p, b.len);
	xb_free(&b);
	if (sent != 0 || raw_recv_reply(c, &r, 5000) != RAW_RECV_OK)
		return -1;
	if (r.reply_stat == 1 && r.reject_stat == 1) {
		if (auth_stat)
			*auth_stat = r.auth_stat;
		ret = -2;
	} else if (r.reply_stat == 0) {
		ret = r.verf_flavor == 0 && r.verf_len == 8 && memcmp(r.verf, "STARTTLS", 8) == 0;
	}
	raw_reply_free(&r);
	return ret;
}

SSL_CTX *tlsc_ctx_new(const char *ca, const char *cert, const char *key)
{
	static const unsigned char alpn[] = "\x06sunrpc";
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	if (!ctx)
		return NULL;
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn) - 1);
	SSL_CTX_set_verify(ctx, ca ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
	if ((ca && SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) ||
	    (cert && (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
		      SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1))) {
		ERR_print_errors_fp(stdout);
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

int tlsc_start(struct raw_conn *c, SSL_CTX *ctx)
{
	struct timeval tv = { 10, 0 };
	SSL *ssl = SSL_new(ctx);

	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (!ssl || SSL_set_fd(ssl, c->fd) != 1 || SSL_set1_host(ssl, "localhost") != 1) {
		SSL_free(ssl);
		return -1;
	}
	if (SSL_connect(ssl) != 1) {
		printf("# TLS handshake failed: ");
		ERR_print_errors_fp(stdout);
		printf("\n");
		SSL_free(ssl);
		return -1;
	}
	c->io = &tlsc_io;
	c->io_arg = ssl;
	return 0;
}

const char *tlsc_version(const struct raw_conn *c)
{
	return c->io == &tlsc_io ? SSL_get_version(c->io_arg) : "-";
}

void tlsc_peer_subject(const struct raw_conn *c, char *buf, size_t len)
{
	X509 *cert = c->io == &tlsc_io ? SSL_get0_peer_certificate(c->io_arg) : NULL;

	buf[0] = '\0';
	if (cert)
		X509_NAME_oneline(X509_get_subject_name(cert), buf, (int)len);
}

void tlsc_close(struct raw_conn *c)
{
	if (c->io == &tlsc_io) {
		SSL_shutdown(c->io_arg);
		SSL_free(c->io_arg);
		c->io = NULL;
		c->io_arg = NULL;
	}
	raw_close(c);
}
