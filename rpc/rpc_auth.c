/*
 * rpc_auth.c - decoding of the call's credential and verifier.
 * Flavors served: AUTH_NONE and AUTH_SYS (RFC 5531 §8.2 and appendix A), and
 * AUTH_TLS, which only probes for RPC-with-TLS (RFC 9289 §4.1).
 * The decoded struct rpc_cred is plain data copied into the call; nothing
 * here points into the received message after return.
 */
#include "rpc/rpc_internal.h"

#define AUTH_SYS_MAX_MACHINENAME 255 /* RFC 5531 appendix A: string machinename<255> */
#define AUTH_NOBODY 65534u

/*
 * RFC 5531 appendix A:
 *   struct authsys_parms {
 *      unsigned int stamp;
 *      string machinename<255>;
 *      unsigned int uid;
 *      unsigned int gid;
 *      unsigned int gids<16>;
 *   };
 * The body must hold exactly this structure: trailing bytes are malformed.
 * Returns RPC_AUTH_OK or RPC_AUTH_BADCRED.
 */
static int auth_sys_decode(const uint8_t *body, uint32_t len, struct rpc_cred *cred)
{
	struct xdr_dec d;
	const uint8_t *name;
	uint32_t stamp, name_len, n;

	xdr_dec_init(&d, body, len);
	if (!xdr_dec_u32(&d, &stamp))
		return RPC_AUTH_BADCRED;
	if (!xdr_dec_opaque(&d, AUTH_SYS_MAX_MACHINENAME, &name, &name_len))
		return RPC_AUTH_BADCRED;
	if (!xdr_dec_u32(&d, &cred->uid) || !xdr_dec_u32(&d, &cred->gid))
		return RPC_AUTH_BADCRED;
	/* Check the count against its limit before reading the array. */
	if (!xdr_dec_u32(&d, &n) || n > RPC_AUTH_SYS_MAX_GIDS)
		return RPC_AUTH_BADCRED;
	if (xdr_dec_remaining(&d) != (size_t)n * XDR_UNIT)
		return RPC_AUTH_BADCRED;
	for (uint32_t i = 0; i < n; i++)
		if (!xdr_dec_u32(&d, &cred->groups[i]))
			return RPC_AUTH_BADCRED;
	cred->ngroups = n;
	cred->flavor = RPC_AUTH_SYS;
	return RPC_AUTH_OK;
}

int rpc_auth_decode(struct xdr_dec *d, struct rpc_cred *cred)
{
	uint32_t cred_flavor, verf_flavor, cred_len, verf_len;
	const uint8_t *cred_body, *verf_body;
	int stat;

	/* AUTH_NONE callers (and failed decodes) are nobody, never root. */
	cred->flavor = RPC_AUTH_NONE;
	cred->uid = cred->gid = AUTH_NOBODY;
	cred->ngroups = 0;

	/* RFC 5531 §8.2: opaque_auth is a flavor and opaque body<400>. */
	if (!xdr_dec_u32(d, &cred_flavor) ||
	    !xdr_dec_opaque(d, RPC_AUTH_MAX_BYTES, &cred_body, &cred_len))
		return RPC_AUTH_BADCRED;
	if (!xdr_dec_u32(d, &verf_flavor) ||
	    !xdr_dec_opaque(d, RPC_AUTH_MAX_BYTES, &verf_body, &verf_len))
		return RPC_AUTH_BADVERF;
	(void)verf_body;

	switch (cred_flavor) {
	case RPC_AUTH_NONE:
		/* RFC 5531 §10.1: the body of AUTH_NONE is undefined (recommended empty). */
		stat = RPC_AUTH_OK;
		break;
	case RPC_AUTH_SYS:
		stat = auth_sys_decode(cred_body, cred_len, cred);
		break;
	case RPC_AUTH_TLS:
		/* RFC 9289 §4.1: the probe's credential body is empty; its caller is nobody. */
		stat = cred_len == 0 ? RPC_AUTH_OK : RPC_AUTH_BADCRED;
		cred->flavor = RPC_AUTH_TLS;
		break;
	default:
		/* A flavor this server does not implement (e.g. RPCSEC_GSS): RFC 2203
		 * §5.1 (errata 4067) expects AUTH_REJECTEDCRED, as ONC's own servers reply. */
		return RPC_AUTH_REJECTEDCRED;
	}
	if (stat != RPC_AUTH_OK) {
		cred->flavor = RPC_AUTH_NONE;
		cred->uid = cred->gid = AUTH_NOBODY;
		cred->ngroups = 0;
		return stat;
	}
	/* RFC 5531 §10.1, appendix A: with AUTH_NONE and AUTH_SYS the call's
	 * verifier is AUTH_NONE; RFC 9289 §4.1: so is the AUTH_TLS probe's. */
	if (verf_flavor != RPC_AUTH_NONE)
		return RPC_AUTH_BADVERF;
	return RPC_AUTH_OK;
}

enum rpc_tls_probe rpc_tls_probe_decide(uint32_t proc, bool offer)
{
	/* RFC 9289 §4.1: AUTH_TLS is only ever sent with the NULL procedure. */
	if (proc != 0)
		return RPC_TLS_PROBE_BADCRED;
	/* No TLS here (none configured, or the connection is already TLS or
	 * switching): a plain NULL reply, whose verifier lacks "STARTTLS". */
	return offer ? RPC_TLS_PROBE_STARTTLS : RPC_TLS_PROBE_PLAIN;
}
