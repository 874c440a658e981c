/*
 * tls_client.h - the client side of RPC-with-TLS (RFC 9289) for the
 * integration tests, over OpenSSL's libssl: the AUTH_TLS probe (§4.1) on a
 * raw connection, then a real TLS 1.3 handshake, after which the
 * connection's bytes (rawrpc.h struct raw_io) go through TLS, so rawrpc and
 * nfs4raw calls run over it unchanged.
 *
 * Why a client of our own: the Linux 6.1 kernel client (the VM's) has no
 * RPC-with-TLS (it came with 6.5 and tlshd), and libnfs has none either.
 *
 * Ownership: tlsc_start() hangs an SSL object on the raw_conn (io_arg);
 * tlsc_close() frees it and closes the connection. Blocking sockets; every
 * receive is bounded by rawrpc's timeouts and SO_RCVTIMEO.
 */
#ifndef RNFSD_TESTS_TLS_CLIENT_H
#define RNFSD_TESTS_TLS_CLIENT_H

#include <stdint.h>

#include <openssl/ssl.h>

#include "tests/integration/rawrpc.h"

#define TLSC_AUTH_TLS 7u /* RFC 9289 §4.1 */

/*
 * The AUTH_TLS probe: procedure proc (NULL: 0) of prog/vers with an AUTH_TLS
 * credential and an AUTH_NONE verifier. 1: accepted, verifier AUTH_NONE
 * "STARTTLS"; 0: accepted without it; -2: denied (*auth_stat: the AUTH_ERROR
 * status); -1: no reply.
 */
int tlsc_probe(struct raw_conn *c, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc, uint32_t *auth_stat);

/* A TLS 1.3 client context trusting ca (NULL: verifying nothing), presenting
 * cert/key when not NULL (ALPN "sunrpc", RFC 9289). NULL on error (printed). */
SSL_CTX *tlsc_ctx_new(const char *ca, const char *cert, const char *key);

/* The handshake on c (after STARTTLS); from then on c's bytes are TLS's.
 * 0, or -1 (the reason printed). */
int tlsc_start(struct raw_conn *c, SSL_CTX *ctx);

/* The negotiated protocol ("TLSv1.3") of c, or "-". */
const char *tlsc_version(const struct raw_conn *c);

/* The server certificate's subject ("/CN=...") into buf; "" if none. */
void tlsc_peer_subject(const struct raw_conn *c, char *buf, size_t len);

/* close_notify (best effort), free the SSL object, close the socket. */
void tlsc_close(struct raw_conn *c);

#endif
