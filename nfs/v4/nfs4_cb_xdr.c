/*
 * nfs4_cb_xdr.c - XDR of the NFSv4 callback program (nfs4_cb_xdr.h): the
 * CB_COMPOUND arguments rnfsd sends, the CB_COMPOUND / CB_SEQUENCE results a
 * client returns (bounds-checked: every read goes through xdr_dec, which
 * never reads past the reply), and RFC 5665 universal addresses. Pure.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "nfs/v4/nfs4_cb_xdr.h"

#define NFS4_CB_TAG_MAX 1024u /* a client's tag in its reply: skipped */

void nfs4_cb_enc_compound(struct xdr_enc *e, uint32_t minorversion, uint32_t ident,
			  const struct nfs4_cb_seq_args *seq)
{
	xdr_enc_opaque(e, "", 0); /* tag */
	xdr_enc_u32(e, minorversion);
	xdr_enc_u32(e, ident);
	xdr_enc_u32(e, seq ? 1 : 0); /* argarray<> */
	if (!seq)
		return;
	/* RFC 8881 §20.9.1 CB_SEQUENCE4args. */
	xdr_enc_u32(e, OP_CB_SEQUENCE);
	xdr_enc_fixed(e, seq->sessionid, NFS4_CB_SID_SIZE);
	xdr_enc_u32(e, seq->seqid);
	xdr_enc_u32(e, seq->slotid);
	xdr_enc_u32(e, seq->highest_slotid);
	xdr_enc_bool(e, seq->cachethis);
	xdr_enc_u32(e, 0); /* csa_referring_call_lists<>: none */
}

enum nfs4_cb_dec_result nfs4_cb_dec_sequence(struct xdr_dec *d, struct nfs4_cb_seq_res *r)
{
	memset(r, 0, sizeof(*r));
	if (!xdr_dec_u32(d, &r->status))
		return NFS4_CB_DEC_SHORT;
	if (r->status != 0)
		return NFS4_CB_DEC_OK; /* RFC 8881 §20.9.2: no resok on an error */
	if (!xdr_dec_fixed(d, r->sessionid, NFS4_CB_SID_SIZE) || !xdr_dec_u32(d, &r->seqid) ||
	    !xdr_dec_u32(d, &r->slotid) || !xdr_dec_u32(d, &r->highest_slotid) ||
	    !xdr_dec_u32(d, &r->target_highest_slotid))
		return NFS4_CB_DEC_SHORT;
	return NFS4_CB_DEC_OK;
}

/*
 * RFC 8881 §20.2.2 CB_COMPOUND4res: status, tag, resarray<>. Only the first
 * result is decoded, and only if it is CB_SEQUENCE's (the only operation
 * sent so far); a result for another operation is BAD. The array's count is
 * bounded before anything else is read.
 */
enum nfs4_cb_dec_result nfs4_cb_dec_compound(struct xdr_dec *d, struct nfs4_cb_compound_res *r)
{
	const uint8_t *tag;
	uint32_t tag_len, op;

	memset(r, 0, sizeof(*r));
	if (!xdr_dec_u32(d, &r->status) || !xdr_dec_opaque(d, NFS4_CB_TAG_MAX, &tag, &tag_len) ||
	    !xdr_dec_u32(d, &r->nres))
		return NFS4_CB_DEC_SHORT;
	if (r->nres > NFS4_CB_MAX_RES)
		return NFS4_CB_DEC_BAD;
	if (r->nres == 0)
		return NFS4_CB_DEC_OK;
	if (!xdr_dec_u32(d, &op))
		return NFS4_CB_DEC_SHORT;
	if (op != OP_CB_SEQUENCE)
		return NFS4_CB_DEC_BAD; /* OP_CB_ILLEGAL included: we sent CB_SEQUENCE first */
	r->has_seq = true;
	return nfs4_cb_dec_sequence(d, &r->seq);
}

/* The port from the last two dotted decimal fields of a universal address:
 * *cut is where the host part ends. */
static bool uaddr_port(const char *a, size_t len, size_t *cut, uint16_t *port)
{
	unsigned v[2] = { 0, 0 };
	size_t i = len;

	for (int f = 1; f >= 0; f--) { /* p2, then p1 */
		unsigned digits = 0, mul = 1;

		for (; i > 0 && a[i - 1] >= '0' && a[i - 1] <= '9'; i--, mul *= 10) {
			if (++digits > 3)
				return false;
			v[f] += (unsigned)(a[i - 1] - '0') * mul;
		}
		if (digits == 0 || v[f] > 255 || i == 0 || a[i - 1] != '.')
			return false;
		i--;
	}
	*cut = i;
	*port = (uint16_t)(v[0] << 8 | v[1]);
	return *port != 0;
}

bool nfs4_cb_uaddr_parse(const char *netid, uint32_t netid_len, const char *addr, uint32_t addr_len,
			 struct sockaddr_storage *sa, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 1];
	size_t cut;
	uint16_t port;
	bool v6;

	if (netid_len == 3 && !memcmp(netid, "tcp", 3))
		v6 = false;
	else if (netid_len == 4 && !memcmp(netid, "tcp6", 4))
		v6 = true;
	else
		return false; /* RFC 5665 §5.2.3: rdma, udp ... not used for callbacks here */
	if (!uaddr_port(addr, addr_len, &cut, &port) || cut == 0 || cut >= sizeof(host))
		return false;
	memcpy(host, addr, cut);
	host[cut] = '\0';
	memset(sa, 0, sizeof(*sa));
	if (!v6) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)sa;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		*len = sizeof(*s4);
		return inet_pton(AF_INET, host, &s4->sin_addr) == 1;
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	*len = sizeof(*s6);
	return inet_pton(AF_INET6, host, &s6->sin6_addr) == 1;
}
