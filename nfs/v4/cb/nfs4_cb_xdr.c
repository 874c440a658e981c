/*
 * nfs4_cb_xdr.c - XDR of the NFSv4 callback program (nfs4_cb_xdr.h): the
 * CB_COMPOUND arguments rnfsd sends, the CB_COMPOUND / CB_SEQUENCE results a
 * client returns (bounds-checked: every read goes through xdr_dec, which
 * never reads past the reply), and RFC 5665 universal addresses. Pure.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "nfs/v4/cb/nfs4_cb_xdr.h"

#define NFS4_CB_TAG_MAX 1024u /* a client's tag in its reply: skipped */

/* RFC 8881 §20.9.1 CB_SEQUENCE4args. */
static void enc_seq(struct xdr_enc *e, const struct nfs4_cb_seq_args *seq)
{
	xdr_enc_u32(e, OP_CB_SEQUENCE);
	xdr_enc_fixed(e, seq->sessionid, NFS4_CB_SID_SIZE);
	xdr_enc_u32(e, seq->seqid);
	xdr_enc_u32(e, seq->slotid);
	xdr_enc_u32(e, seq->highest_slotid);
	xdr_enc_bool(e, seq->cachethis);
	xdr_enc_u32(e, 0); /* csa_referring_call_lists<>: none */
}

static void enc_head(struct xdr_enc *e, uint32_t minorversion, uint32_t ident, uint32_t nops)
{
	xdr_enc_opaque(e, "", 0); /* tag */
	xdr_enc_u32(e, minorversion);
	xdr_enc_u32(e, ident);
	xdr_enc_u32(e, nops); /* argarray<> */
}

void nfs4_cb_enc_compound(struct xdr_enc *e, uint32_t minorversion, uint32_t ident,
			  const struct nfs4_cb_seq_args *seq)
{
	enc_head(e, minorversion, ident, seq ? 1 : 0);
	if (seq)
		enc_seq(e, seq);
}

void nfs4_cb_enc_compound_op(struct xdr_enc *e, uint32_t minorversion, uint32_t ident,
			     const struct nfs4_cb_seq_args *seq, const struct nfs4_cb_op *op)
{
	/* RFC 8881 §20.9.3: on a 4.1 back channel CB_SEQUENCE comes first;
	 * RFC 7530 §16.2: a 4.0 CB_COMPOUND has no sequencing operation. */
	enc_head(e, minorversion, ident, seq ? 2 : 1);
	if (seq)
		enc_seq(e, seq);
	nfs4_cb_enc_op(e, op);
}

uint32_t nfs4_cb_opnum(enum nfs4_cb_opkind kind)
{
	switch (kind) {
	case NFS4_CB_OP_RECALL:
		return OP_CB_RECALL;
	case NFS4_CB_OP_RECALL_ANY:
		return OP_CB_RECALL_ANY;
	case NFS4_CB_OP_NOTIFY_LOCK:
		return OP_CB_NOTIFY_LOCK;
	case NFS4_CB_OP_GETATTR:
		return OP_CB_GETATTR;
	case NFS4_CB_OP_LAYOUTRECALL:
		return OP_CB_LAYOUTRECALL;
	case NFS4_CB_OP_NOTIFY:
		return OP_CB_NOTIFY;
	case NFS4_CB_OP_OFFLOAD:
		break;
	}
	return OP_CB_OFFLOAD;
}

/* nfs_fh4; a length over NFS4_FHSIZE is an encoding error. */
static void enc_fh(struct xdr_enc *e, const struct nfs4_cb_fh *fh)
{
	if (fh->len > NFS4_CB_FH_MAX) {
		e->overflow = true;
		return;
	}
	xdr_enc_opaque(e, fh->data, fh->len);
}

static void enc_stateid(struct xdr_enc *e, const struct nfs4_stateid *sid)
{
	xdr_enc_u32(e, sid->seqid);
	xdr_enc_fixed(e, sid->other, NFS4_OTHER_SIZE);
}

/* RFC 7862 §16.1.1 CB_OFFLOAD4args. */
static void enc_offload(struct xdr_enc *e, const struct nfs4_cb_offload_args *a)
{
	enc_fh(e, &a->fh);
	enc_stateid(e, &a->stateid);
	xdr_enc_u32(e, a->status); /* offload_info4's discriminant */
	if (a->status != 0) {
		xdr_enc_u64(e, a->count); /* coa_bytes_copied */
		return;
	}
	/* write_response4 (RFC 7862 §15.5.1). */
	xdr_enc_u32(e, 0); /* wr_callback_id<1>: empty */
	xdr_enc_u64(e, a->count);
	xdr_enc_u32(e, a->committed);
	xdr_enc_fixed(e, a->writeverf, sizeof(a->writeverf));
}

/* RFC 8881 §20.3.1 CB_LAYOUTRECALL4args; a recall_type outside layoutrecall_type4 is an encoding error. */
static void enc_layoutrecall(struct xdr_enc *e, const struct nfs4_cb_layoutrecall_args *a)
{
	xdr_enc_u32(e, a->layout_type);
	xdr_enc_u32(e, a->iomode);
	xdr_enc_bool(e, a->changed);
	xdr_enc_u32(e, a->recall_type);
	if (a->recall_type == LAYOUTRECALL4_FILE) {
		enc_fh(e, &a->fh);
		xdr_enc_u64(e, a->offset);
		xdr_enc_u64(e, a->length);
		enc_stateid(e, &a->stateid);
	} else if (a->recall_type == LAYOUTRECALL4_FSID) {
		xdr_enc_u64(e, a->fsid_major);
		xdr_enc_u64(e, a->fsid_minor);
	} else if (a->recall_type != LAYOUTRECALL4_ALL) {
		e->overflow = true;
	}
}

/* notify_entry4 (RFC 8881 §20.4.1): the name, and an empty fattr4 (no child attributes granted). */
static void enc_notify_entry(struct xdr_enc *e, const uint8_t *name, uint32_t len)
{
	xdr_enc_opaque(e, name, len);
	xdr_enc_u32(e, 0); /* attrmask: no words */
	xdr_enc_u32(e, 0); /* attr_vals: empty */
}

/* notify_add4: the entry of that name it replaced (RFC 8881 §18.26.4: a RENAME over an existing
 * one; its cookie 0, not kept) or none, the new one, no cookie, no previous entry, not known to be
 * the last. */
static void enc_notify_add(struct xdr_enc *e, const uint8_t *name, uint32_t len, bool replaced)
{
	xdr_enc_u32(e, replaced ? 1 : 0); /* nad_old_entry<1> */
	if (replaced) {
		enc_notify_entry(e, name, len);
		xdr_enc_u64(e, 0);
	}
	enc_notify_entry(e, name, len);
	xdr_enc_u32(e, 0); /* nad_new_entry_cookie<1> */
	xdr_enc_u32(e, 0); /* nad_prev_entry<1> */
	xdr_enc_bool(e, false);
}

/* RFC 8881 §20.4.1 CB_NOTIFY4args of one notify4: its notifylist4 holds the one notify_<type>4,
 * its length patched once written. */
static void enc_notify(struct xdr_enc *e, const struct nfs4_cb_notify_args *a)
{
	size_t at;

	bool attrs = a->type == NOTIFY4_CHANGE_DIR_ATTRS;

	if (a->name_len > NFS4_CB_NAME_MAX || a->new_len > NFS4_CB_NAME_MAX ||
	    (attrs && (a->attrs_len > NFS4_CB_DIR_ATTRS_MAX || a->attrs_len % 4 || a->attrs_len < 8)) ||
	    (!attrs && a->type != NOTIFY4_REMOVE_ENTRY && a->type != NOTIFY4_ADD_ENTRY &&
	     a->type != NOTIFY4_RENAME_ENTRY)) {
		e->overflow = true;
		return;
	}
	enc_stateid(e, &a->stateid);
	enc_fh(e, &a->fh);
	xdr_enc_u32(e, 1); /* cna_changes<> */
	xdr_enc_u32(e, 1); /* notify_mask: one word */
	xdr_enc_u32(e, 1u << a->type);
	at = xdr_enc_len(e);
	xdr_enc_u32(e, 0); /* notify_vals' length, below */
	if (attrs) { /* notify_attr4: na_changed_entry {ne_file "" (the directory itself), ne_attrs} */
		xdr_enc_u32(e, 0);
		xdr_enc_fixed(e, a->attrs, a->attrs_len);
	} else if (a->type == NOTIFY4_ADD_ENTRY) {
		enc_notify_add(e, a->name, a->name_len, a->replaced);
	} else { /* notify_remove4, and for RENAME the notify_add4 of the new name */
		enc_notify_entry(e, a->name, a->name_len);
		xdr_enc_u64(e, a->cookie);
		if (a->type == NOTIFY4_RENAME_ENTRY)
			enc_notify_add(e, a->new_name, a->new_len, a->replaced);
	}
	if (!e->overflow)
		xdr_enc_patch_u32(e, at, (uint32_t)(xdr_enc_len(e) - at - 4));
}

void nfs4_cb_enc_op(struct xdr_enc *e, const struct nfs4_cb_op *op)
{
	xdr_enc_u32(e, nfs4_cb_opnum(op->kind));
	switch (op->kind) {
	case NFS4_CB_OP_RECALL: /* RFC 8881 §20.2.1 */
		enc_stateid(e, &op->u.recall.stateid);
		xdr_enc_bool(e, op->u.recall.truncate);
		enc_fh(e, &op->u.recall.fh);
		return;
	case NFS4_CB_OP_RECALL_ANY: /* RFC 8881 §20.6.1 */
		if (op->u.recall_any.mask_len > 2) {
			e->overflow = true;
			return;
		}
		xdr_enc_u32(e, op->u.recall_any.objects_to_keep);
		xdr_enc_u32(e, op->u.recall_any.mask_len);
		for (uint32_t i = 0; i < op->u.recall_any.mask_len; i++)
			xdr_enc_u32(e, op->u.recall_any.mask[i]);
		return;
	case NFS4_CB_OP_NOTIFY_LOCK: /* RFC 8881 §20.11.1 */
		if (op->u.notify_lock.owner_len > NFS4_CB_OWNER_MAX) {
			e->overflow = true;
			return;
		}
		enc_fh(e, &op->u.notify_lock.fh);
		xdr_enc_u64(e, op->u.notify_lock.clientid);
		xdr_enc_opaque(e, op->u.notify_lock.owner, op->u.notify_lock.owner_len);
		return;
	case NFS4_CB_OP_LAYOUTRECALL:
		enc_layoutrecall(e, &op->u.layoutrecall);
		return;
	case NFS4_CB_OP_OFFLOAD:
		enc_offload(e, &op->u.offload);
		return;
	case NFS4_CB_OP_NOTIFY:
		enc_notify(e, &op->u.notify);
		return;
	case NFS4_CB_OP_GETATTR: /* RFC 8881 §20.1.1 */
		enc_fh(e, &op->u.getattr.fh);
		xdr_enc_u32(e, op->u.getattr.mask2 ? 3 : 1); /* attr_request: one word, or three */
		xdr_enc_u32(e, op->u.getattr.mask0);
		if (op->u.getattr.mask2) {
			xdr_enc_u32(e, 0);
			xdr_enc_u32(e, op->u.getattr.mask2);
		}
		return;
	}
	e->overflow = true; /* not a kind: nothing sensible to send */
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

#define FATTR4_BIT_CHANGE 3u
#define FATTR4_BIT_SIZE 4u
#define CB_GA_MASK_WORDS 8u /* a longer attrmask is refused */
#define CB_GA_BIT_DELEG_ATIME (84u - 64u) /* RFC 9754 time_deleg_access, word 2 */
#define CB_GA_BIT_DELEG_MTIME (85u - 64u)

/* RFC 8881 §20.1.2 CB_GETATTR4resok's fattr4: attrmask, then attr_vals as an
 * opaque whose values are in attribute order. Attributes 0..2 would come
 * before change (and rnfsd never asks for them): such a reply is BAD. */
/* RFC 9754 §5.2: time_deleg_access and time_deleg_modify (word 2), read when
 * no attribute rnfsd did not ask for comes before them. false: too short. */
static bool dec_ga_times(struct xdr_dec *v, const uint32_t w[3], struct nfs4_cb_getattr_res *r)
{
	uint64_t sec;

	if ((w[0] & ~(1u << FATTR4_BIT_CHANGE | 1u << FATTR4_BIT_SIZE)) || w[1] ||
	    (w[2] & ((1u << CB_GA_BIT_DELEG_ATIME) - 1)))
		return true; /* values of others first: not read */
	if (w[2] & 1u << CB_GA_BIT_DELEG_ATIME) {
		if (!xdr_dec_u64(v, &sec) || !xdr_dec_u32(v, &r->atime_nsec))
			return false;
		r->atime_sec = (int64_t)sec;
		r->has_atime = true;
	}
	if (w[2] & 1u << CB_GA_BIT_DELEG_MTIME) {
		if (!xdr_dec_u64(v, &sec) || !xdr_dec_u32(v, &r->mtime_nsec))
			return false;
		r->mtime_sec = (int64_t)sec;
		r->has_mtime = true;
	}
	return true;
}

static enum nfs4_cb_dec_result dec_getattr(struct xdr_dec *d, struct nfs4_cb_getattr_res *r)
{
	uint32_t nw, w0 = 0, w, len, ws[3] = { 0 };
	const uint8_t *vals;
	struct xdr_dec v;

	if (!xdr_dec_u32(d, &nw))
		return NFS4_CB_DEC_SHORT;
	if (nw > CB_GA_MASK_WORDS)
		return NFS4_CB_DEC_BAD;
	for (uint32_t i = 0; i < nw; i++) {
		if (!xdr_dec_u32(d, &w))
			return NFS4_CB_DEC_SHORT;
		if (i == 0)
			w0 = w;
		if (i < 3)
			ws[i] = w;
	}
	if (!xdr_dec_opaque(d, UINT32_MAX, &vals, &len))
		return NFS4_CB_DEC_SHORT;
	if (w0 & ((1u << FATTR4_BIT_CHANGE) - 1))
		return NFS4_CB_DEC_BAD;
	xdr_dec_init(&v, vals, len);
	r->has_change = w0 & 1u << FATTR4_BIT_CHANGE;
	r->has_size = w0 & 1u << FATTR4_BIT_SIZE;
	if ((r->has_change && !xdr_dec_u64(&v, &r->change)) || (r->has_size && !xdr_dec_u64(&v, &r->size)) ||
	    !dec_ga_times(&v, ws, r))
		return NFS4_CB_DEC_BAD; /* attr_vals too short for its own attrmask */
	return NFS4_CB_DEC_OK;
}

/*
 * RFC 8881 §20.2.2 CB_COMPOUND4res: status, tag, resarray<>. The array's
 * count is bounded before anything else is read; then, in order, the
 * CB_SEQUENCE result (when seq) and opnum's (when opnum is not 0), each
 * only if the array holds it. A result for an operation not asked for at
 * its place is BAD (OP_CB_ILLEGAL included).
 */
enum nfs4_cb_dec_result nfs4_cb_dec_compound_op(struct xdr_dec *d, bool seq, uint32_t opnum,
						struct nfs4_cb_compound_res *r)
{
	const uint8_t *tag;
	uint32_t tag_len, op, want = (seq ? 1 : 0) + (opnum ? 1 : 0);

	memset(r, 0, sizeof(*r));
	if (!xdr_dec_u32(d, &r->status) || !xdr_dec_opaque(d, NFS4_CB_TAG_MAX, &tag, &tag_len) ||
	    !xdr_dec_u32(d, &r->nres))
		return NFS4_CB_DEC_SHORT;
	if (r->nres > NFS4_CB_MAX_RES || r->nres > want)
		return NFS4_CB_DEC_BAD;
	for (uint32_t i = 0; i < r->nres; i++) {
		bool is_seq = seq && i == 0;

		if (!xdr_dec_u32(d, &op))
			return NFS4_CB_DEC_SHORT;
		if (op != (is_seq ? OP_CB_SEQUENCE : opnum))
			return NFS4_CB_DEC_BAD;
		if (is_seq) {
			r->has_seq = true;
			enum nfs4_cb_dec_result res = nfs4_cb_dec_sequence(d, &r->seq);

			if (res != NFS4_CB_DEC_OK)
				return res;
			continue;
		}
		/* CB_RECALL4res, CB_RECALL_ANY4res, CB_NOTIFY_LOCK4res, CB_OFFLOAD4res: a status. */
		if (!xdr_dec_u32(d, &r->op_status))
			return NFS4_CB_DEC_SHORT;
		if (op == OP_CB_GETATTR && r->op_status == 0) {
			enum nfs4_cb_dec_result res = dec_getattr(d, &r->ga);

			if (res != NFS4_CB_DEC_OK)
				return res;
		}
		r->has_op = true;
	}
	return NFS4_CB_DEC_OK;
}

enum nfs4_cb_dec_result nfs4_cb_dec_compound(struct xdr_dec *d, struct nfs4_cb_compound_res *r)
{
	return nfs4_cb_dec_compound_op(d, true, 0, r);
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
