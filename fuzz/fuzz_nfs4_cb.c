/*
 * fuzz_nfs4_cb.c - libFuzzer target: what an NFSv4 client returns to the
 * server's callbacks and gives as its callback address
 * (nfs/v4/cb/nfs4_cb_xdr.c: nfs4_cb_dec_compound(), nfs4_cb_dec_sequence(),
 * nfs4_cb_uaddr_parse()), fed on to the back channel's slot
 * (nfs4_cb_state.c) as nfs4_cb.c does.
 *
 * Byte 0 picks the decoder: 0 CB_COMPOUND4res, 1 CB_SEQUENCE4res, 2 a
 * universal address ("netid\0addr"), 3 CB_COMPOUND4res of a callback
 * operation (byte 1: with CB_SEQUENCE or not, and which operation), 4 an
 * operation's arguments built from the input and encoded. Invariants
 * beyond "no sanitizer report":
 *  - a decoder never leaves the input; an accepted reply cut where the
 *    decoder stopped decodes the same, cut one byte earlier is refused;
 *  - BAD only for a result array over its bound or a first result not
 *    CB_SEQUENCE's; has_seq only with at least one result;
 *  - the slot advances only to the seqid sent, only for an answered
 *    NFS4_OK, is never left busy, and the reply counts as expected only
 *    when it echoes the seqid on slot 0;
 *  - a parsed address is IPv4 for "tcp", IPv6 for "tcp6", port non-zero,
 *    and its printed form parses back to the same address;
 *  - an operation's reply: has_op only with every result asked for
 *    present, cut one byte short it is refused, never more results than
 *    asked for;
 *  - an encoded operation overflows exactly when a length is over its
 *    limit, and otherwise fits the callback message buffer's share.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfs/v4/cb/nfs4_cb_state.h"
#include "nfs/v4/cb/nfs4_cb_xdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) abort(); } while (0)

static enum nfs4_cb_dec_result dec(bool compound, const uint8_t *p, size_t n, struct nfs4_cb_compound_res *r,
				   size_t *used)
{
	struct xdr_dec d;
	enum nfs4_cb_dec_result res;

	xdr_dec_init(&d, p, n);
	memset(r, 0, sizeof(*r));
	if (compound) {
		res = nfs4_cb_dec_compound(&d, r);
	} else {
		res = nfs4_cb_dec_sequence(&d, &r->seq);
		r->has_seq = true;
	}
	*used = xdr_dec_pos(&d);
	CHECK(*used <= n);
	return res;
}

static void fuzz_reply(bool compound, const uint8_t *p, size_t n)
{
	struct nfs4_cb_compound_res r, r2;
	size_t used, used2;
	enum nfs4_cb_dec_result res = dec(compound, p, n, &r, &used);

	if (compound && res == NFS4_CB_DEC_BAD)
		return;
	CHECK(compound || res != NFS4_CB_DEC_BAD);
	if (res != NFS4_CB_DEC_OK)
		return;
	CHECK(!compound || !r.has_seq || r.nres >= 1);
	CHECK(!compound || r.nres <= NFS4_CB_MAX_RES);
	/* What was consumed is all the decoder needs. */
	CHECK(dec(compound, p, used, &r2, &used2) == NFS4_CB_DEC_OK && used2 == used);
	CHECK(!memcmp(&r.seq, &r2.seq, sizeof(r.seq)) && r.status == r2.status && r.nres == r2.nres);
	if (used > 0)
		CHECK(dec(compound, p, used - 1, &r2, &used2) == NFS4_CB_DEC_SHORT);
	if (!r.has_seq)
		return;
	/* The slot as nfs4_cb.c drives it with this reply. */
	struct nfs4_cb_chan c;
	uint32_t sent;

	nfs4_cb_chan_init(&c);
	c.slot_seqid = r.seq.seqid ^ 1u;
	uint32_t before = c.slot_seqid;
	CHECK(nfs4_cb_slot_take(&c, &sent));
	bool ok = nfs4_cb_slot_release(&c, sent, true, r.seq.status, r.seq.seqid, r.seq.slotid);
	CHECK(!c.slot_busy);
	CHECK(ok == (r.seq.status == 0 && r.seq.seqid == sent && r.seq.slotid == 0));
	CHECK(c.slot_seqid == (r.seq.status == 0 ? sent : before));
}

static void fuzz_uaddr(const uint8_t *p, size_t n)
{
	const uint8_t *nul = memchr(p, 0, n);
	struct sockaddr_storage sa, sa2;
	socklen_t len, len2;
	char host[INET6_ADDRSTRLEN], again[INET6_ADDRSTRLEN + 16];

	if (!nul)
		return;
	size_t nl = (size_t)(nul - p);
	const char *addr = (const char *)nul + 1;
	size_t al = n - nl - 1;
	if (!nfs4_cb_uaddr_parse((const char *)p, (uint32_t)nl, addr, (uint32_t)al, &sa, &len))
		return;
	bool v6 = nl == 4;
	CHECK(sa.ss_family == (v6 ? AF_INET6 : AF_INET));
	uint16_t port = ntohs(v6 ? ((struct sockaddr_in6 *)&sa)->sin6_port : ((struct sockaddr_in *)&sa)->sin_port);
	CHECK(port != 0);
	CHECK(inet_ntop(sa.ss_family, v6 ? (void *)&((struct sockaddr_in6 *)&sa)->sin6_addr
					 : (void *)&((struct sockaddr_in *)&sa)->sin_addr,
			host, sizeof(host)));
	int m = snprintf(again, sizeof(again), "%s.%u.%u", host, port >> 8, port & 255);
	CHECK(nfs4_cb_uaddr_parse((const char *)p, (uint32_t)nl, again, (uint32_t)m, &sa2, &len2));
	CHECK(len == len2 && !memcmp(&sa, &sa2, len));
}

static const uint32_t opnums[6] = { OP_CB_RECALL,  OP_CB_RECALL_ANY, OP_CB_NOTIFY_LOCK,
				    OP_CB_OFFLOAD, OP_CB_GETATTR,    OP_CB_LAYOUTRECALL };

static void fuzz_op_reply(const uint8_t *p, size_t n)
{
	struct nfs4_cb_compound_res r, r2;
	struct xdr_dec d;

	if (n < 1)
		return;
	bool seq = p[0] & 1;
	uint32_t opnum = opnums[(p[0] >> 1) % 6];

	xdr_dec_init(&d, p + 1, n - 1);
	enum nfs4_cb_dec_result res = nfs4_cb_dec_compound_op(&d, seq, opnum, &r);
	size_t used = xdr_dec_pos(&d);

	CHECK(used <= n - 1);
	if (res != NFS4_CB_DEC_OK)
		return;
	CHECK(r.nres <= (seq ? 2u : 1u));
	CHECK(!r.has_op || r.nres == (seq ? 2u : 1u));
	CHECK(!r.has_seq || seq);
	if (used > 0) {
		xdr_dec_init(&d, p + 1, used - 1);
		CHECK(nfs4_cb_dec_compound_op(&d, seq, opnum, &r2) == NFS4_CB_DEC_SHORT);
	}
}

/* Arguments from the input: kind, then lengths (possibly over their limits). */
static void fuzz_op_enc(const uint8_t *p, size_t n)
{
	static struct nfs4_cb_op op;
	static uint8_t out[4096];
	struct xdr_enc e;

	if (n < 5)
		return;
	memset(&op, 0, sizeof(op));
	op.kind = (enum nfs4_cb_opkind)(p[0] % 7);
	uint32_t len = (uint32_t)p[1] << 8 | p[2];
	bool over = false;

	switch (op.kind) {
	case NFS4_CB_OP_RECALL:
		op.u.recall.fh.len = len;
		over = len > NFS4_CB_FH_MAX;
		break;
	case NFS4_CB_OP_RECALL_ANY:
		op.u.recall_any.mask_len = p[3];
		over = p[3] > 2;
		break;
	case NFS4_CB_OP_NOTIFY_LOCK:
		op.u.notify_lock.owner_len = len;
		op.u.notify_lock.fh.len = p[3];
		over = len > NFS4_CB_OWNER_MAX || p[3] > NFS4_CB_FH_MAX;
		break;
	case NFS4_CB_OP_OFFLOAD:
		op.u.offload.fh.len = p[3];
		op.u.offload.status = p[4];
		over = p[3] > NFS4_CB_FH_MAX;
		break;
	case NFS4_CB_OP_GETATTR:
		op.u.getattr.fh.len = len;
		op.u.getattr.mask0 = p[3];
		over = len > NFS4_CB_FH_MAX;
		break;
	case NFS4_CB_OP_LAYOUTRECALL:
		op.u.layoutrecall.fh.len = len;
		op.u.layoutrecall.recall_type = p[3] % 5;
		over = op.u.layoutrecall.recall_type < LAYOUTRECALL4_FILE ||
		       op.u.layoutrecall.recall_type > LAYOUTRECALL4_ALL ||
		       (op.u.layoutrecall.recall_type == LAYOUTRECALL4_FILE && len > NFS4_CB_FH_MAX);
		break;
	case NFS4_CB_OP_NOTIFY: /* RFC 8881 §20.4.1; notify_type4 5 (CHANGE_COOKIE_VERIFIER) is not built */
		op.u.notify.fh.len = p[3];
		op.u.notify.type = p[4] & 0x40 ? NOTIFY4_CHANGE_DIR_ATTRS : NOTIFY4_REMOVE_ENTRY + p[4] % 4;
		op.u.notify.replaced = p[4] & 0x80; /* nad_old_entry<1> of ADD and RENAME (RFC 8881 §18.26.4) */
		if (op.u.notify.type == NOTIFY4_CHANGE_DIR_ATTRS) { /* a fattr4 as it is: XDR units, in its room */
			op.u.notify.attrs_len = len;
			over = len > NFS4_CB_DIR_ATTRS_MAX || len % 4 || len < 8;
		} else {
			op.u.notify.name_len = op.u.notify.new_len = len;
			over = len > NFS4_CB_NAME_MAX || op.u.notify.type > NOTIFY4_RENAME_ENTRY;
		}
		over = over || p[3] > NFS4_CB_FH_MAX;
		break;
	}
	xdr_enc_init(&e, out, sizeof(out));
	nfs4_cb_enc_op(&e, &op);
	CHECK(e.overflow == over);
	/* CB_MSG_MAX (2048) holds a header (<= 432) and CB_SEQUENCE (44) besides. */
	CHECK(over || xdr_enc_len(&e) <= 2048 - 432 - 44 - 16);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 5) {
	case 3:
		fuzz_op_reply(data + 1, size - 1);
		break;
	case 4:
		fuzz_op_enc(data + 1, size - 1);
		break;
	case 0:
		fuzz_reply(true, data + 1, size - 1);
		break;
	case 1:
		fuzz_reply(false, data + 1, size - 1);
		break;
	default:
		fuzz_uaddr(data + 1, size - 1);
		break;
	}
	return 0;
}
