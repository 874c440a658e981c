/*
 * tcp_tls.c - RPC-with-TLS (RFC 9289) on the TCP transport, over OpenSSL's
 * libssl: no TLS or cryptography of our own.
 *
 * Owns: the transport's SSL_CTX (x->tls_ctx: [tls] certificate, key and
 * client CA, loaded once at start), each connection's SSL object and its
 * one-record write buffer (tls_wbuf), both made when the connection turns
 * to TLS and freed with the connection (tcp_conn_release). No allocation
 * per call: reads decrypt into the connection's stage and record buffers,
 * writes go through tls_wbuf.
 *
 * The handshake runs on the loop thread as a non-blocking SSL_do_handshake()
 * driven by the connection's read and write events (see tcp_internal.h's
 * TLS states): one step costs one TLS flight's work, so no other connection
 * waits for a slow or silent peer, and no thread is held; a handshake not
 * done within record-timeout is closed by the sweep.
 *
 * Kernel TLS: SSL_OP_ENABLE_KTLS lets OpenSSL hand the session keys to the
 * kernel's "tls" ULP when it has one (and the cipher suits it); otherwise
 * OpenSSL's userspace records are used. Either way the calls below are the
 * same; which one a connection got is logged once and counted ("tls" in the
 * statistics).
 */
#include "transport/tcp_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "core/json.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/prom.h"

/* Counters over every connection (any thread reads them). */
static struct {
	_Atomic uint64_t starttls;   /* probes answered STARTTLS whose reply was written */
	_Atomic uint64_t handshakes; /* completed */
	_Atomic uint64_t failures;   /* handshakes failed (or timed out: counted by the sweep's close) */
	_Atomic uint64_t ktls;       /* completed with kernel TLS both ways */
	_Atomic uint64_t userspace;  /* completed with OpenSSL's records (at least one way) */
	_Atomic uint64_t mtls;       /* completed with a verified client certificate */
} tls_stats;

static struct log_limit lim_tls;

/* The first queued OpenSSL error as text (cleared). */
static const char *tcp_tls_err(char *buf, size_t len)
{
	unsigned long e = ERR_get_error();

	if (!e)
		return "no detail";
	ERR_error_string_n(e, buf, len);
	ERR_clear_error();
	return buf;
}

/* RFC 9289 §7 registers the ALPN identifier "sunrpc": chosen when the
 * client offers it; a client offering no ALPN at all is served too. */
static int tcp_tls_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
			unsigned inlen, void *arg)
{
	static const unsigned char want[] = "\x06sunrpc";
	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto((unsigned char **)out, outlen, want, sizeof(want) - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	return SSL_TLSEXT_ERR_OK;
}

/* Certificate, key and client CA into ctx. 0, or -1 (logged). */
static int tcp_tls_load(SSL_CTX *ctx, const struct tcp_params *p)
{
	char e[256];

	if (SSL_CTX_use_certificate_chain_file(ctx, p->tls_cert) != 1) {
		log_err("tls: certificate %s: %s", p->tls_cert, tcp_tls_err(e, sizeof(e)));
		return -1;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, p->tls_key, SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
		log_err("tls: private key %s: %s", p->tls_key, tcp_tls_err(e, sizeof(e)));
		return -1;
	}
	if (!p->tls_ca[0])
		return 0;
	STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(p->tls_ca);
	if (!names || SSL_CTX_load_verify_locations(ctx, p->tls_ca, NULL) != 1) {
		sk_X509_NAME_pop_free(names, X509_NAME_free);
		log_err("tls: CA %s: %s", p->tls_ca, tcp_tls_err(e, sizeof(e)));
		return -1;
	}
	SSL_CTX_set_client_CA_list(ctx, names);
	/* RFC 9289 §5.2.2: a client certificate is asked for and, when one is
	 * presented, must verify; a client without one is served as plain TLS
	 * (exports' xprtsec= tells the two apart). */
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	return 0;
}

/* A server context from p's files, or NULL (logged). */
static SSL_CTX *tcp_tls_ctx_new(const struct tcp_params *p)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (!ctx) {
		log_err("tls: out of memory");
		return NULL;
	}
	/* RFC 9289 §5.1: TLS 1.3 or later only. */
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS | SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_TICKET);
	/* No session tickets: nothing is written after the handshake but our records. */
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_alpn_select_cb(ctx, tcp_tls_alpn, NULL);
	if (tcp_tls_load(ctx, p) != 0) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

static void tcp_tls_log_offer(const struct tcp_params *p, const char *what)
{
	log_info("tls: RPC-with-TLS %s (certificate %s%s%s)", what, p->tls_cert, p->tls_ca[0] ? ", client CA " : "",
		 p->tls_ca);
}

int tcp_tls_xprt_init(struct tcp_xprt *x)
{
	if (!x->p.tls_cert[0])
		return 0;
	if (!(x->tls_ctx = tcp_tls_ctx_new(&x->p)))
		return -1;
	tcp_tls_log_offer(&x->p, "offered");
	return 0;
}

int tcp_tls_check_config(const struct rnfsd_config *cfg)
{
	struct tcp_params p;
	SSL_CTX *ctx;

	tcp_params_tls_from_config(&p, cfg);
	if (!p.tls_cert[0])
		return 0;
	if (!(ctx = tcp_tls_ctx_new(&p)))
		return -1;
	SSL_CTX_free(ctx);
	return 0;
}

int tcp_xprt_tls_reload(struct tcp_xprt *x, const struct rnfsd_config *cfg)
{
	struct tcp_params p;
	SSL_CTX *ctx = NULL;

	tcp_params_tls_from_config(&p, cfg);
	if (p.tls_cert[0] && !(ctx = tcp_tls_ctx_new(&p))) {
		log_err("tls: reload: keeping the running certificate");
		return -1;
	}
	/* Connections in TLS keep the old context (each SSL holds a reference);
	 * new handshakes take the new one. */
	bool had = x->tls_ctx != NULL;
	SSL_CTX_free(x->tls_ctx);
	x->tls_ctx = ctx;
	memcpy(x->p.tls_cert, p.tls_cert, sizeof(p.tls_cert));
	memcpy(x->p.tls_key, p.tls_key, sizeof(p.tls_key));
	memcpy(x->p.tls_ca, p.tls_ca, sizeof(p.tls_ca));
	tcp_loops_tls_reload(x); /* the other loops' shards ([rnfsd] loops) */
	if (ctx)
		tcp_tls_log_offer(&x->p, "reloaded");
	else if (had)
		log_info("tls: reload: RPC-with-TLS no longer offered to new connections");
	return 0;
}

void tcp_tls_xprt_free(struct tcp_xprt *x)
{
	SSL_CTX_free(x->tls_ctx);
	x->tls_ctx = NULL;
}

void tcp_tls_conn_free(struct tcp_conn *conn)
{
	SSL_free(conn->ssl); /* the socket BIO does not close the descriptor */
	conn->ssl = NULL;
	free(conn->tls_wbuf);
	conn->tls_wbuf = NULL;
}

void tcp_tls_start(struct tcp_conn *conn)
{
	const char *why = NULL;

	conn->rpc.tls_starting = false;
	conn->rpc.tls_offer = false;
	if (conn->state != TCP_CONN_OPEN)
		return;
	/* RFC 9289 §4.1: the client waits for the probe's reply before its
	 * ClientHello; bytes or calls already here would be read on the wrong
	 * side of the switch. */
	if (conn->stage_off < conn->stage_len || rm_mid_record(&conn->rm) || conn->rx || conn->rec_ready)
		why = "bytes after the AUTH_TLS probe";
	else if (conn->n_ctx || !queue_empty(&conn->sendq))
		why = "calls in flight at STARTTLS";
	else if (!conn->x->tls_ctx)
		why = "TLS no longer offered (reload)";
	else if (!(conn->ssl = SSL_new(conn->x->tls_ctx)) || !(conn->tls_wbuf = malloc(TCP_TLS_WBUF)) ||
		 SSL_set_fd(conn->ssl, conn->fd) != 1)
		why = "no memory for TLS";
	if (why) {
		log_limited(&lim_tls, LOG_NOTICE, "tls: %s: %s, closing", conn->rpc.peer_name, why);
		tcp_conn_close(conn, why);
		return;
	}
	stats_add(&tls_stats.starttls, 1);
	SSL_set_accept_state(conn->ssl);
	conn->tls = TCP_TLS_HANDSHAKE;
	clock_gettime(CLOCK_MONOTONIC, &conn->rec_start); /* the sweep's deadline for the handshake */
	tcp_conn_rearm(conn); /* the ClientHello drives the first step */
}

static const char *tcp_tls_records_name(uint32_t rec)
{
	switch (rec) {
	case TCP_TLS_DESC_KTLS: return "kernel TLS";
	case TCP_TLS_DESC_KTLS_TX: return "kernel TLS send, OpenSSL receive";
	case TCP_TLS_DESC_KTLS_RX: return "OpenSSL send, kernel TLS receive";
	default: return "OpenSSL (userspace)";
	}
}

void tcp_tls_stats_conn(struct json_out *j, const struct stats_conn *sc)
{
	const struct tcp_conn *conn = container_of(sc, const struct tcp_conn, stats);
	uint32_t d = atomic_load_explicit(&conn->tls_desc, memory_order_relaxed);

	if (!d)
		return; /* plain: the document is as without TLS */
	json_str(j, "xprtsec", (d >> 4) == RPC_XPRTSEC_MTLS ? "mtls" : "tls");
	json_str(j, "tls_records", tcp_tls_records_name(d & 15));
}

/* The handshake is done: what protects the connection now, logged once. */
static void tcp_tls_done(struct tcp_conn *conn)
{
	bool ktx = BIO_get_ktls_send(SSL_get_wbio(conn->ssl)) > 0;
	bool krx = BIO_get_ktls_recv(SSL_get_rbio(conn->ssl)) > 0;
	X509 *peer = SSL_get0_peer_certificate(conn->ssl);
	bool mtls = peer && SSL_get_verify_result(conn->ssl) == X509_V_OK;

	conn->tls = TCP_TLS_ON;
	/* RFC 9289 §5.2.1, §5.2.2: mutual only with a verified client certificate. */
	conn->rpc.xprtsec = mtls ? RPC_XPRTSEC_MTLS : RPC_XPRTSEC_TLS;
	uint32_t rec = ktx && krx ? TCP_TLS_DESC_KTLS : ktx ? TCP_TLS_DESC_KTLS_TX : krx ? TCP_TLS_DESC_KTLS_RX
											 : TCP_TLS_DESC_USER;
	atomic_store_explicit(&conn->tls_desc, rec | (uint32_t)conn->rpc.xprtsec << 4, memory_order_relaxed);
	stats_add(&tls_stats.handshakes, 1);
	stats_add(ktx && krx ? &tls_stats.ktls : &tls_stats.userspace, 1);
	if (mtls)
		stats_add(&tls_stats.mtls, 1);
	log_limited(&lim_tls, LOG_INFO, "tls: %s: %s %s, %s, records: %s", conn->rpc.peer_name,
		    SSL_get_version(conn->ssl), SSL_get_cipher_name(conn->ssl),
		    mtls ? "client certificate verified" : "no client certificate", tcp_tls_records_name(rec));
}

void tcp_tls_handshake(struct tcp_conn *conn)
{
	char e[256];

	ERR_clear_error();
	int r = SSL_do_handshake(conn->ssl);
	if (r == 1) {
		tcp_tls_done(conn);
		tcp_write_arm(conn, false);
		tcp_conn_rearm(conn); /* a first call may be decrypted already */
		return;
	}
	switch (SSL_get_error(conn->ssl, r)) {
	case SSL_ERROR_WANT_READ:
		tcp_write_arm(conn, false);
		return;
	case SSL_ERROR_WANT_WRITE:
		tcp_write_arm(conn, true);
		return;
	default:
		stats_add(&tls_stats.failures, 1);
		log_limited(&lim_tls, LOG_NOTICE, "tls: %s: handshake failed: %s", conn->rpc.peer_name,
			    tcp_tls_err(e, sizeof(e)));
		tcp_conn_close(conn, "TLS handshake failed");
	}
}

/* After SSL_read/SSL_write returned r <= 0: -1 with errno, or 0 (the peer closed). */
static ssize_t tcp_tls_io_error(struct tcp_conn *conn, int r)
{
	char e[256];

	switch (SSL_get_error(conn->ssl, r)) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_ZERO_RETURN: /* close_notify, or EOF (SSL_OP_IGNORE_UNEXPECTED_EOF) */
		return 0;
	case SSL_ERROR_SYSCALL:
		if (errno == 0)
			errno = EPIPE;
		return -1;
	default:
		log_limited(&lim_tls, LOG_NOTICE, "tls: %s: %s", conn->rpc.peer_name, tcp_tls_err(e, sizeof(e)));
		errno = EPROTO;
		return -1;
	}
}

ssize_t tcp_tls_readv(struct tcp_conn *conn, const struct iovec *iov, int n)
{
	size_t total = 0;

	ERR_clear_error();
	for (int i = 0; i < n; i++) {
		size_t off = 0;
		while (off < iov[i].iov_len) {
			size_t got = 0;
			int r = SSL_read_ex(conn->ssl, (uint8_t *)iov[i].iov_base + off, iov[i].iov_len - off, &got);
			if (r <= 0) {
				ssize_t st = tcp_tls_io_error(conn, r);
				return total ? (ssize_t)total : st;
			}
			off += got;
			total += got;
		}
	}
	return (ssize_t)total;
}

ssize_t tcp_tls_writev(struct tcp_conn *conn, const struct iovec *v, int n)
{
	size_t written = 0;

	/* A write that wanted the socket is repeated with the same bytes (SSL_write's
	 * rule); the send queue's head still holds them, consumed only once written. */
	if (!conn->tls_wlen) {
		for (int i = 0; i < n && conn->tls_wlen < TCP_TLS_WBUF; i++) {
			size_t take = v[i].iov_len;
			if (take > TCP_TLS_WBUF - conn->tls_wlen)
				take = TCP_TLS_WBUF - conn->tls_wlen;
			memcpy(conn->tls_wbuf + conn->tls_wlen, v[i].iov_base, take);
			conn->tls_wlen += take;
		}
	}
	if (!conn->tls_wlen) { /* nothing in memory to write (a piped segment: never on TLS) */
		errno = EPIPE;
		return -1;
	}
	ERR_clear_error();
	int r = SSL_write_ex(conn->ssl, conn->tls_wbuf, conn->tls_wlen, &written);
	if (r <= 0) {
		ssize_t st = tcp_tls_io_error(conn, r);
		if (st == 0)
			errno = EPIPE;
		return -1;
	}
	conn->tls_wlen = 0;
	return (ssize_t)written;
}

bool tcp_tls_pending(const struct tcp_conn *conn)
{
	return conn->tls == TCP_TLS_ON && SSL_has_pending(conn->ssl);
}

void tcp_tls_shutdown(struct tcp_conn *conn)
{
	if (conn->tls != TCP_TLS_ON)
		return;
	ERR_clear_error();
	(void)SSL_shutdown(conn->ssl); /* close_notify; its answer is not waited for */
	ERR_clear_error();
}

static uint64_t ld(_Atomic uint64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

static void tcp_tls_stats_write(struct json_out *j, const char *name, void *arg)
{
	(void)arg;
	json_obj_open(j, name);
	json_u64(j, "starttls", ld(&tls_stats.starttls));
	json_u64(j, "handshakes", ld(&tls_stats.handshakes));
	json_u64(j, "handshake_failures", ld(&tls_stats.failures));
	json_u64(j, "kernel_tls", ld(&tls_stats.ktls));
	json_u64(j, "userspace_tls", ld(&tls_stats.userspace));
	json_u64(j, "mutual", ld(&tls_stats.mtls));
	json_obj_close(j);
}

/* The same counters on the Prometheus page (core/prom.h). */
static void tcp_tls_stats_prom(struct prom_out *p, void *arg)
{
	(void)arg;
	prom_counter1(p, "rnfsd_tls_starttls_total", "AUTH_TLS probes answered STARTTLS (RFC 9289)",
		      ld(&tls_stats.starttls));
	prom_counter1(p, "rnfsd_tls_handshake_failures_total", "TLS handshakes failed", ld(&tls_stats.failures));
	prom_counter1(p, "rnfsd_tls_mutual_total", "TLS handshakes with a verified client certificate",
		      ld(&tls_stats.mtls));
	if (prom_family(p, "rnfsd_tls_handshakes_total", PROM_COUNTER, "TLS handshakes completed, per record layer")) {
		prom_sample_u64(p, NULL, &(struct prom_label){ "records", "kernel" }, 1, ld(&tls_stats.ktls));
		prom_sample_u64(p, NULL, &(struct prom_label){ "records", "userspace" }, 1, ld(&tls_stats.userspace));
	}
}

int tcp_tls_stats_section_add(void)
{
	return stats_section_add_prom(STATS_PLACE_TRANSPORT, "tls", tcp_tls_stats_write, NULL, tcp_tls_stats_prom);
}
