/*
 * rpc_gss_mech.h - the per-message GSS-API calls of RPCSEC_GSS (RFC 2203
 * §5.3), shared by the acceptor (rpc_gss_krb5.c: calls rnfsd serves) and the
 * initiator (rpc_gss_clnt.c: calls rnfsd makes, the NFSv4.0 callbacks). Each
 * works on one established context (struct gss_mech: the library's context
 * and the lock that serialises its calls) and on the message's own memory:
 * MICs are written straight into the encoder's buffer, krb5p bodies are
 * sealed and unsealed in place, nothing is allocated per message. RPC layer
 * private.
 */
#ifndef RNFSD_RPC_GSS_MECH_H
#define RNFSD_RPC_GSS_MECH_H

#include <gssapi/gssapi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc/xdr.h"

/* One established (or being established) context. */
struct gss_mech {
	pthread_mutex_t lock; /* MIT's per-message calls update the context's sequence state */
	gss_ctx_id_t gctx;
};

/* Does mic[0 .. mic_len) sign data[0 .. len)? The major status (gss_verify_mic_iov: no copy). */
OM_uint32 rpc_gss_mic_check(struct gss_mech *m, const void *data, size_t len, const void *mic, size_t mic_len);
/*
 * Append opaque<> holding a MIC of data[0 .. len) to e, the token written by
 * the library straight into e's buffer. data must not overlap what is
 * appended. false: the library failed (*maj, *min) or e has no room.
 */
bool rpc_gss_enc_mic(struct gss_mech *m, const void *data, size_t len, struct xdr_enc *e, OM_uint32 *maj,
		     OM_uint32 *min);
/*
 * RFC 2203 §5.3.2.2: d is at rpc_gss_integ_data { opaque databody_integ<>;
 * opaque checksum<>; }: check the checksum (a MIC of the databody) and that
 * the databody opens with seq; d then holds the body after seq (its
 * positions stay relative to the message, RFC 8166 §3.4.5). false: it does
 * not check.
 */
bool rpc_gss_integ_open(struct gss_mech *m, struct xdr_dec *d, uint32_t seq);
/*
 * RFC 2203 §5.3.2.3: d is at rpc_gss_priv_data { opaque databody_priv<>; },
 * a gss_wrap of seq + body: unsealed in place (the message must be writable
 * memory: a transport's receive buffer); d then holds the body after seq.
 * false: it does not unwrap, was not sealed for confidentiality, or its
 * seq_num is not seq.
 */
bool rpc_gss_priv_open(struct gss_mech *m, struct xdr_dec *d, uint32_t seq);
/*
 * The n bytes at body (inside e's buffer, e->p just after them, e->end the
 * room there is) become, in place, RFC 2203 §5.3.2.2's opaque
 * databody_integ<> (seq + the bytes) and opaque checksum<>, or §5.3.2.3's
 * opaque databody_priv<> (the gss_wrap of seq + the bytes, laid out as
 * HEADER | DATA | PADDING | TRAILER, the token gss_wrap gives). n is a
 * multiple of 4. false: no room, or the library failed.
 */
bool rpc_gss_integ_seal(struct gss_mech *m, uint32_t seq, struct xdr_enc *e, uint8_t *body, size_t n);
bool rpc_gss_priv_seal(struct gss_mech *m, uint32_t seq, struct xdr_enc *e, uint8_t *body, size_t n);

#endif
