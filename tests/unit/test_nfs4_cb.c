/*
 * test_nfs4_cb.c - the NFSv4 callback program's XDR (nfs/v4/cb/nfs4_cb_xdr.c)
 * and a callback path's state machine (nfs/v4/cb/nfs4_cb_state.c), pure:
 *  - CB_COMPOUND args with CB_SEQUENCE, byte for byte (RFC 8881 §20.2.1,
 *    §20.9.1); without it (4.0's ident); an encoder that overflows says so;
 *  - CB_COMPOUND / CB_SEQUENCE results: OK with resok, an error status
 *    without resok, every prefix of a valid reply refused (bounds), a
 *    result for another operation and an oversized array refused, a tag
 *    over its limit refused;
 *  - universal addresses (RFC 5665): tcp and tcp6, ports split in bytes,
 *    port 0, junk, other netids, oversized fields refused;
 *  - the state machine: NONE -> PROBING -> UP / DOWN, a lost connection,
 *    unbinding, the flags SEQUENCE reports in each state, the back
 *    channel's slot 0 (seqid 1 first, busy while out, advanced only by an
 *    answered OK that echoes seqid and slot), the counters;
 *  - callback operations (nfs4_cb_send()'s): CB_RECALL, CB_RECALL_ANY,
 *    CB_NOTIFY_LOCK, CB_OFFLOAD, CB_NOTIFY (RFC 8881 §20.4.1: ADD_ENTRY,
 *    REMOVE_ENTRY, RENAME_ENTRY) arguments byte for byte, lengths over their
 *    limits refused, CB_COMPOUND with and without CB_SEQUENCE; the replies:
 *    the op's status, an op not reached, another op's result and too many
 *    results refused, every prefix SHORT.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nfs/v4/cb/nfs4_cb_state.h"
#include "nfs/v4/cb/nfs4_cb_xdr.h"

static uint8_t buf[1024];
static struct xdr_enc e;

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void test_enc_compound_seq(void **state)
{
	struct nfs4_cb_seq_args sa = { .seqid = 7, .slotid = 0, .highest_slotid = 0, .cachethis = false };

	(void)state;
	memset(sa.sessionid, 0xab, sizeof(sa.sessionid));
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_compound(&e, 1, 99, &sa);
	assert_false(e.overflow);
	/* tag "" (4), minor (4), ident (4), count (4), op (4), sid (16), seq, slot, highest, cachethis, rcl<> */
	assert_int_equal(xdr_enc_len(&e), 4 + 4 + 4 + 4 + 4 + 16 + 4 * 5);
	assert_int_equal(be32(buf + 0), 0);
	assert_int_equal(be32(buf + 4), 1);
	assert_int_equal(be32(buf + 8), 99);
	assert_int_equal(be32(buf + 12), 1);
	assert_int_equal(be32(buf + 16), OP_CB_SEQUENCE);
	assert_memory_equal(buf + 20, sa.sessionid, 16);
	assert_int_equal(be32(buf + 36), 7);
	assert_int_equal(be32(buf + 40), 0);
	assert_int_equal(be32(buf + 44), 0);
	assert_int_equal(be32(buf + 48), 0);
	assert_int_equal(be32(buf + 52), 0);
}

static void test_enc_compound_empty_and_overflow(void **state)
{
	struct nfs4_cb_seq_args sa = { .seqid = 1 };
	uint8_t small[20];

	(void)state;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_compound(&e, 0, 0x1234, NULL);
	assert_false(e.overflow);
	assert_int_equal(xdr_enc_len(&e), 16);
	assert_int_equal(be32(buf + 8), 0x1234);
	assert_int_equal(be32(buf + 12), 0);
	xdr_enc_init(&e, small, sizeof(small));
	nfs4_cb_enc_compound(&e, 1, 0, &sa);
	assert_true(e.overflow);
}

/* A CB_COMPOUND4res with one CB_SEQUENCE4res (status st; resok when 0). */
static size_t reply(uint32_t cstatus, uint32_t op, uint32_t st, uint32_t seqid, uint32_t slot, uint32_t nres)
{
	uint8_t sid[16];

	memset(sid, 0xcd, sizeof(sid));
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_u32(&e, cstatus);
	xdr_enc_opaque(&e, "tg", 2);
	xdr_enc_u32(&e, nres);
	if (nres) {
		xdr_enc_u32(&e, op);
		xdr_enc_u32(&e, st);
		if (st == 0) {
			xdr_enc_fixed(&e, sid, 16);
			xdr_enc_u32(&e, seqid);
			xdr_enc_u32(&e, slot);
			xdr_enc_u32(&e, 0);
			xdr_enc_u32(&e, 0);
		}
	}
	return xdr_enc_len(&e);
}

static enum nfs4_cb_dec_result dec(size_t len, struct nfs4_cb_compound_res *r)
{
	struct xdr_dec d;

	xdr_dec_init(&d, buf, len);
	return nfs4_cb_dec_compound(&d, r);
}

static void test_dec_compound(void **state)
{
	struct nfs4_cb_compound_res r;
	size_t len;

	(void)state;
	len = reply(0, OP_CB_SEQUENCE, 0, 5, 0, 1);
	assert_int_equal(dec(len, &r), NFS4_CB_DEC_OK);
	assert_true(r.has_seq);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.nres, 1);
	assert_int_equal(r.seq.status, 0);
	assert_int_equal(r.seq.seqid, 5);
	assert_int_equal(r.seq.sessionid[0], 0xcd);
	/* Every prefix ends inside an item. */
	for (size_t n = 0; n < len; n++)
		assert_int_equal(dec(n, &r), NFS4_CB_DEC_SHORT);
	/* An error: no resok follows. */
	len = reply(10052, OP_CB_SEQUENCE, 10052, 0, 0, 1);
	assert_int_equal(dec(len, &r), NFS4_CB_DEC_OK);
	assert_int_equal(r.seq.status, 10052);
	assert_int_equal(r.status, 10052);
	/* No results (e.g. MINOR_VERS_MISMATCH). */
	len = reply(10021, 0, 0, 0, 0, 0);
	assert_int_equal(dec(len, &r), NFS4_CB_DEC_OK);
	assert_false(r.has_seq);
	/* A result for an operation not sent; too many results. */
	len = reply(0, OP_CB_ILLEGAL, 10044, 0, 0, 1);
	assert_int_equal(dec(len, &r), NFS4_CB_DEC_BAD);
	len = reply(0, OP_CB_SEQUENCE, 0, 1, 0, NFS4_CB_MAX_RES + 1);
	assert_int_equal(dec(len, &r), NFS4_CB_DEC_BAD);
	len = reply(0, OP_CB_SEQUENCE, 0, 1, 0, 0xffffffffu);
	assert_int_equal(dec(len, &r), NFS4_CB_DEC_BAD);
}

static void test_dec_tag_limit(void **state)
{
	struct nfs4_cb_compound_res r;

	(void)state;
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_u32(&e, 0);
	xdr_enc_u32(&e, 0x7fffffffu); /* a tag longer than the reply */
	assert_int_equal(dec(xdr_enc_len(&e), &r), NFS4_CB_DEC_SHORT);
}

static bool parse(const char *netid, const char *addr, struct sockaddr_storage *sa)
{
	socklen_t len;

	return nfs4_cb_uaddr_parse(netid, (uint32_t)strlen(netid), addr, (uint32_t)strlen(addr), sa, &len);
}

static void test_uaddr(void **state)
{
	struct sockaddr_storage sa;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)&sa;
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&sa;

	(void)state;
	assert_true(parse("tcp", "127.0.0.1.3.232", &sa));
	assert_int_equal(s4->sin_family, AF_INET);
	assert_int_equal(ntohs(s4->sin_port), 3 * 256 + 232);
	assert_int_equal(ntohl(s4->sin_addr.s_addr), 0x7f000001);
	assert_true(parse("tcp6", "::1.0.111", &sa));
	assert_int_equal(s6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(s6->sin6_port), 111);
	assert_true(IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr));
	assert_true(parse("tcp6", "fe80::1:2.4.1", &sa));
	assert_int_equal(ntohs(s6->sin6_port), 1025);
	assert_false(parse("tcp", "127.0.0.1.0.0", &sa));    /* port 0 */
	assert_false(parse("tcp", "127.0.0.1.256.1", &sa));  /* a byte over 255 */
	assert_false(parse("tcp", "127.0.0.1.0001.1", &sa)); /* four digits */
	assert_false(parse("tcp", "127.0.0.1", &sa));        /* no port: 0.1 parsed as port, host "127.0" */
	assert_false(parse("tcp", ".1.1", &sa));             /* no host */
	assert_false(parse("tcp", "1.1", &sa));
	assert_false(parse("tcp", "", &sa));
	assert_false(parse("tcp", "::1.0.111", &sa));        /* IPv6 under tcp */
	assert_false(parse("udp", "127.0.0.1.3.232", &sa));  /* not a TCP netid */
	assert_false(parse("rdma", "127.0.0.1.3.232", &sa));
	assert_false(parse("tcp6", "x::1.0.1.", &sa));
	char big[200];
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big + sizeof(big) - 5, ".1.1", 4);
	assert_false(parse("tcp6", big, &sa));               /* a host part longer than any address */
}

static void test_state_machine(void **state)
{
	struct nfs4_cb_chan c;

	(void)state;
	nfs4_cb_chan_init(&c);
	assert_int_equal(c.state, NFS4_CB_NONE);
	assert_int_equal(nfs4_cb_seq_flags(c.state), SEQ4_STATUS_CB_PATH_DOWN | SEQ4_STATUS_CB_PATH_DOWN_SESSION);
	nfs4_cb_chan_bound(&c);
	assert_int_equal(c.state, NFS4_CB_PROBING);
	assert_int_equal(nfs4_cb_seq_flags(c.state), 0); /* the outcome is not known yet */
	nfs4_cb_chan_sent(&c);
	nfs4_cb_chan_answered(&c); /* CB_NULL: the probe goes on */
	assert_int_equal(c.state, NFS4_CB_PROBING);
	nfs4_cb_chan_sent(&c);
	nfs4_cb_chan_done(&c, true);
	assert_int_equal(c.state, NFS4_CB_UP);
	assert_int_equal(nfs4_cb_seq_flags(c.state), 0);
	nfs4_cb_chan_sent(&c);
	nfs4_cb_chan_done(&c, false);
	assert_int_equal(c.state, NFS4_CB_DOWN);
	assert_int_equal(nfs4_cb_seq_flags(c.state), SEQ4_STATUS_CB_PATH_DOWN | SEQ4_STATUS_CB_PATH_DOWN_SESSION);
	assert_int_equal(c.sent, 3);
	assert_int_equal(c.ok, 2);
	assert_int_equal(c.failed, 1);
	/* Bound again: probing; the connection goes: down. */
	nfs4_cb_chan_bound(&c);
	nfs4_cb_chan_done(&c, true);
	assert_int_equal(c.state, NFS4_CB_UP);
	nfs4_cb_chan_lost(&c);
	assert_int_equal(c.state, NFS4_CB_DOWN);
	/* Unbound (session destroyed): none; a late completion leaves it so. */
	nfs4_cb_chan_unbound(&c);
	nfs4_cb_chan_done(&c, false);
	assert_int_equal(c.state, NFS4_CB_NONE);
	nfs4_cb_chan_lost(&c);
	assert_int_equal(c.state, NFS4_CB_NONE);
	assert_string_equal(nfs4_cb_state_name(NFS4_CB_UP), "up");
	assert_string_equal(nfs4_cb_state_name(NFS4_CB_DOWN), "down");
	/* The callbacks' credential (stats nfs4_callbacks "flavor"); RFC 7530 §3.3.3: RPCSEC_GSS by service. */
	assert_string_equal(nfs4_cb_flavor_name(true, 1, 0), "sys");
	assert_string_equal(nfs4_cb_flavor_name(true, 0, 0), "none");
	assert_string_equal(nfs4_cb_flavor_name(true, 6, 1), "krb5");
	assert_string_equal(nfs4_cb_flavor_name(true, 6, 2), "krb5i");
	assert_string_equal(nfs4_cb_flavor_name(true, 6, 3), "krb5p");
	assert_string_equal(nfs4_cb_flavor_name(true, 6, 4), "-");
	assert_string_equal(nfs4_cb_flavor_name(false, 1, 1), "-");
}

static void test_slot(void **state)
{
	struct nfs4_cb_chan c;
	uint32_t seq, seq2;

	(void)state;
	nfs4_cb_chan_init(&c);
	assert_true(nfs4_cb_slot_take(&c, &seq));
	assert_int_equal(seq, 1); /* RFC 8881 §20.9.3: a new slot starts at 1 */
	assert_false(nfs4_cb_slot_take(&c, &seq2)); /* busy */
	assert_true(nfs4_cb_slot_release(&c, seq, true, 0, 1, 0));
	assert_true(nfs4_cb_slot_take(&c, &seq));
	assert_int_equal(seq, 2);
	/* Not answered: the same seqid next time. */
	assert_false(nfs4_cb_slot_release(&c, seq, false, 0, 0, 0));
	assert_true(nfs4_cb_slot_take(&c, &seq));
	assert_int_equal(seq, 2);
	/* Answered with an error: not advanced. */
	assert_false(nfs4_cb_slot_release(&c, seq, true, 10063, 0, 0));
	assert_true(nfs4_cb_slot_take(&c, &seq));
	assert_int_equal(seq, 2);
	/* Answered OK but echoing another seqid or slot: not the reply expected,
	 * yet the client's slot moved on (its CB_SEQUENCE succeeded). */
	assert_false(nfs4_cb_slot_release(&c, seq, true, 0, 3, 0));
	assert_true(nfs4_cb_slot_take(&c, &seq));
	assert_int_equal(seq, 3);
	assert_false(nfs4_cb_slot_release(&c, seq, true, 0, 3, 1));
	assert_true(nfs4_cb_slot_take(&c, &seq));
	assert_int_equal(seq, 4);
	assert_true(nfs4_cb_slot_release(&c, seq, true, 0, 4, 0));
	assert_true(nfs4_cb_slot_take(&c, &seq));
	assert_int_equal(seq, 5);
}

/* ---- callback operations (nfs4_cb_enc_op, nfs4_cb_dec_compound_op) ---- */

static struct nfs4_cb_op op;

static void fill_fh(struct nfs4_cb_fh *fh, uint32_t len)
{
	fh->len = len;
	memset(fh->data, 0x5a, sizeof(fh->data));
}

/* RFC 8881 §20.2.1: opnum, stateid (seqid, other), truncate, fh<>. */
static void test_enc_recall(void **state)
{
	(void)state;
	memset(&op, 0, sizeof(op));
	op.kind = NFS4_CB_OP_RECALL;
	op.u.recall.stateid.seqid = 3;
	memset(op.u.recall.stateid.other, 0x11, NFS4_OTHER_SIZE);
	op.u.recall.truncate = true;
	fill_fh(&op.u.recall.fh, 10);
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_false(e.overflow);
	assert_int_equal(xdr_enc_len(&e), 4 + 16 + 4 + 4 + 12);
	assert_int_equal(be32(buf), OP_CB_RECALL);
	assert_int_equal(be32(buf + 4), 3);
	assert_int_equal(buf[8], 0x11);
	assert_int_equal(be32(buf + 20), 1);
	assert_int_equal(be32(buf + 24), 10);
	assert_int_equal(buf[28], 0x5a);
	assert_int_equal(buf[38], 0); /* XDR padding */
	/* A handle over NFS4_FHSIZE is not sent. */
	op.u.recall.fh.len = NFS4_CB_FH_MAX + 1;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_true(e.overflow);
}

/* RFC 8881 §20.6.1: objects_to_keep, bitmap4. */
static void test_enc_recall_any(void **state)
{
	(void)state;
	memset(&op, 0, sizeof(op));
	op.kind = NFS4_CB_OP_RECALL_ANY;
	op.u.recall_any.objects_to_keep = 7;
	op.u.recall_any.mask_len = 1;
	op.u.recall_any.mask[0] = 1u << RCA4_TYPE_MASK_RDATA_DLG | 1u << RCA4_TYPE_MASK_WDATA_DLG;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_false(e.overflow);
	assert_int_equal(xdr_enc_len(&e), 16);
	assert_int_equal(be32(buf), OP_CB_RECALL_ANY);
	assert_int_equal(be32(buf + 4), 7);
	assert_int_equal(be32(buf + 8), 1);
	assert_int_equal(be32(buf + 12), 3);
	op.u.recall_any.mask_len = 3;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_true(e.overflow);
}

/* RFC 8881 §20.11.1: fh<>, lock_owner4 {clientid, owner<>}. */
static void test_enc_notify_lock(void **state)
{
	(void)state;
	memset(&op, 0, sizeof(op));
	op.kind = NFS4_CB_OP_NOTIFY_LOCK;
	fill_fh(&op.u.notify_lock.fh, 8);
	op.u.notify_lock.clientid = 0x0102030405060708ull;
	op.u.notify_lock.owner_len = 5;
	memcpy(op.u.notify_lock.owner, "owner", 5);
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_false(e.overflow);
	assert_int_equal(xdr_enc_len(&e), 4 + 4 + 8 + 8 + 4 + 8);
	assert_int_equal(be32(buf), OP_CB_NOTIFY_LOCK);
	assert_int_equal(be32(buf + 4), 8);
	assert_int_equal(be32(buf + 16), 0x01020304);
	assert_int_equal(be32(buf + 20), 0x05060708);
	assert_int_equal(be32(buf + 24), 5);
	assert_memory_equal(buf + 28, "owner", 5);
	op.u.notify_lock.owner_len = NFS4_CB_OWNER_MAX + 1;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_true(e.overflow);
}

/* RFC 8881 §20.4.1: stateid, fh, one notify4 {bitmap4, notifylist4 holding notify_<type>4}. */
static void test_enc_notify(void **state)
{
	const uint32_t head = 4 + 16 + 4 + 4 + 4 + 4 + 4 + 4; /* op, stateid, fh "ab" padded, count, mask, len */

	(void)state;
	memset(&op, 0, sizeof(op));
	op.kind = NFS4_CB_OP_NOTIFY;
	op.u.notify.stateid.seqid = 1;
	fill_fh(&op.u.notify.fh, 2);
	op.u.notify.type = NOTIFY4_ADD_ENTRY;
	op.u.notify.name_len = 3;
	memcpy(op.u.notify.name, "abc", 3);
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_false(e.overflow);
	/* notify_add4: nad_old_entry<0>, notify_entry4 ("abc", empty fattr4), no cookie, no prev, last false */
	assert_int_equal(xdr_enc_len(&e), head + 32);
	assert_int_equal(be32(buf), OP_CB_NOTIFY);
	assert_int_equal(be32(buf + 20), 2);               /* cna_fh's length */
	assert_int_equal(be32(buf + 28), 1);               /* one notify4 */
	assert_int_equal(be32(buf + 32), 1);               /* notify_mask: one word */
	assert_int_equal(be32(buf + 36), 1u << 3);         /* NOTIFY4_ADD_ENTRY */
	assert_int_equal(be32(buf + 40), 32);              /* notify_vals' length */
	assert_int_equal(be32(buf + 44), 0);               /* nad_old_entry<1>: none */
	assert_int_equal(be32(buf + 48), 3);               /* ne_file */
	assert_memory_equal(buf + 52, "abc", 3);
	assert_int_equal(be32(buf + 56), 0);               /* ne_attrs: no mask words */
	assert_int_equal(be32(buf + 60), 0);               /* ... no values */
	/* notify_remove4: the entry and its cookie. */
	op.u.notify.type = NOTIFY4_REMOVE_ENTRY;
	op.u.notify.cookie = 0x0102030405060708ull;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_int_equal(xdr_enc_len(&e), head + 24);
	assert_int_equal(be32(buf + 36), 1u << 2);
	assert_int_equal(be32(buf + 40), 24);
	assert_int_equal(be32(buf + 44), 3);
	assert_int_equal(be32(buf + 60), 0x01020304);
	/* notify_rename4: notify_remove4 of the old name, notify_add4 of the new. */
	op.u.notify.type = NOTIFY4_RENAME_ENTRY;
	op.u.notify.new_len = 2;
	memcpy(op.u.notify.new_name, "de", 2);
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_false(e.overflow);
	assert_int_equal(xdr_enc_len(&e), head + 24 + 32);
	assert_int_equal(be32(buf + 36), 1u << 4);
	assert_int_equal(be32(buf + 40), 56);
	assert_int_equal(be32(buf + 68), 0);  /* the add's nad_old_entry<1> */
	assert_int_equal(be32(buf + 72), 2);
	assert_memory_equal(buf + 76, "de", 2);
	/* RFC 8881 §18.26.4: over an existing entry, the add's nad_old_entry names it (cookie 0). */
	op.u.notify.replaced = true;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_false(e.overflow);
	assert_int_equal(xdr_enc_len(&e), head + 24 + 32 + 24);
	assert_int_equal(be32(buf + 40), 80);
	assert_int_equal(be32(buf + 68), 1);  /* nad_old_entry<1>: one */
	assert_int_equal(be32(buf + 72), 2);  /* ... "de", empty fattr4, cookie 0 */
	assert_memory_equal(buf + 76, "de", 2);
	assert_int_equal(be32(buf + 80), 0);
	assert_int_equal(be32(buf + 84), 0);
	assert_int_equal(be32(buf + 88), 0);
	assert_int_equal(be32(buf + 92), 0);
	assert_int_equal(be32(buf + 96), 2);  /* nad_new_entry "de" */
	assert_memory_equal(buf + 100, "de", 2);
	/* ... an ADD over one the same way. */
	op.u.notify.type = NOTIFY4_ADD_ENTRY;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_false(e.overflow);
	assert_int_equal(xdr_enc_len(&e), head + 32 + 24);
	assert_int_equal(be32(buf + 44), 1);
	assert_int_equal(be32(buf + 48), 3);
	assert_memory_equal(buf + 52, "abc", 3);
	assert_int_equal(be32(buf + 72), 3);
	op.u.notify.type = NOTIFY4_RENAME_ENTRY;
	op.u.notify.replaced = false;
	/* A name over component4's limit, or another notify_type4, is not sent. */
	op.u.notify.new_len = NFS4_CB_NAME_MAX + 1;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_true(e.overflow);
	op.u.notify.new_len = 2;
	op.u.notify.type = 0; /* NOTIFY4_CHANGE_CHILD_ATTRS: not built */
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_true(e.overflow);
}

/* RFC 8881 §20.4.1: NOTIFY4_CHANGE_DIR_ATTRS is a notify_attr4: na_changed_entry with an empty ne_file
 * (the directory itself) and ne_attrs the fattr4 given, as it is; an fattr4 too long, short or not in
 * XDR units is not sent. */
static void test_enc_notify_dir_attrs(void **state)
{
	const uint32_t head = 4 + 16 + 4 + 4 + 4 + 4 + 4 + 4; /* op, stateid, fh "ab" padded, count, mask, len */
	/* fattr4 {attrmask <0, 1<<1 (mode)>, attr_vals <4 bytes: 0755>} */
	static const uint8_t fattr[] = { 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 1, 0xed };

	(void)state;
	memset(&op, 0, sizeof(op));
	op.kind = NFS4_CB_OP_NOTIFY;
	fill_fh(&op.u.notify.fh, 2);
	op.u.notify.type = NOTIFY4_CHANGE_DIR_ATTRS;
	op.u.notify.attrs_len = sizeof(fattr);
	memcpy(op.u.notify.attrs, fattr, sizeof(fattr));
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_false(e.overflow);
	assert_int_equal(xdr_enc_len(&e), head + 4 + sizeof(fattr));
	assert_int_equal(be32(buf + 36), 1u << 1);      /* NOTIFY4_CHANGE_DIR_ATTRS */
	assert_int_equal(be32(buf + 40), 4 + sizeof(fattr)); /* notify_vals' length */
	assert_int_equal(be32(buf + 44), 0);            /* ne_file: empty */
	assert_memory_equal(buf + 48, fattr, sizeof(fattr));
	op.u.notify.attrs_len = NFS4_CB_DIR_ATTRS_MAX + 4;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_true(e.overflow);
	op.u.notify.attrs_len = 6;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_true(e.overflow);
	op.u.notify.attrs_len = 4; /* not even an attrmask and attr_vals' length */
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_true(e.overflow);
}

/* RFC 7862 §16.1.1: fh, stateid, offload_info4 (write_response4 on OK, else bytes copied). */
static void test_enc_offload(void **state)
{
	(void)state;
	memset(&op, 0, sizeof(op));
	op.kind = NFS4_CB_OP_OFFLOAD;
	fill_fh(&op.u.offload.fh, 4);
	op.u.offload.stateid.seqid = 1;
	op.u.offload.count = 4096;
	op.u.offload.committed = 2; /* FILE_SYNC4 */
	memset(op.u.offload.writeverf, 0x77, 8);
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_false(e.overflow);
	/* op, fh (4+4), stateid 16, status, callback_id<> 0, count 8, committed, verf 8 */
	assert_int_equal(xdr_enc_len(&e), 4 + 8 + 16 + 4 + 4 + 8 + 4 + 8);
	assert_int_equal(be32(buf), OP_CB_OFFLOAD);
	assert_int_equal(be32(buf + 28), 0);
	assert_int_equal(be32(buf + 32), 0);
	assert_int_equal(be32(buf + 40), 4096);
	assert_int_equal(be32(buf + 44), 2);
	assert_int_equal(buf[48], 0x77);
	op.u.offload.status = 28; /* NFS4ERR_NOSPC: the bytes copied */
	op.u.offload.count = 512;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_int_equal(xdr_enc_len(&e), 4 + 8 + 16 + 4 + 8);
	assert_int_equal(be32(buf + 28), 28);
	assert_int_equal(be32(buf + 36), 512);
}

/* RFC 8881 §20.3.1: type, iomode, changed, then layoutrecall4 by its type. */
static void test_enc_layoutrecall(void **state)
{
	(void)state;
	memset(&op, 0, sizeof(op));
	op.kind = NFS4_CB_OP_LAYOUTRECALL;
	op.u.layoutrecall.layout_type = 4; /* LAYOUT4_FLEX_FILES */
	op.u.layoutrecall.iomode = 3;      /* LAYOUTIOMODE4_ANY */
	op.u.layoutrecall.recall_type = LAYOUTRECALL4_FILE;
	fill_fh(&op.u.layoutrecall.fh, 8);
	op.u.layoutrecall.length = UINT64_MAX;
	op.u.layoutrecall.stateid.seqid = 7;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_false(e.overflow);
	/* op, type, iomode, changed, recall type, fh (4+8), offset 8, length 8, stateid 16 */
	assert_int_equal(xdr_enc_len(&e), 5 * 4 + 12 + 16 + 16);
	assert_int_equal(be32(buf), OP_CB_LAYOUTRECALL);
	assert_int_equal(be32(buf + 4), 4);
	assert_int_equal(be32(buf + 8), 3);
	assert_int_equal(be32(buf + 12), 0);
	assert_int_equal(be32(buf + 16), LAYOUTRECALL4_FILE);
	assert_int_equal(be32(buf + 20), 8);
	assert_int_equal(be32(buf + 40), 0xffffffffu);
	assert_int_equal(be32(buf + 48), 7);
	op.u.layoutrecall.recall_type = LAYOUTRECALL4_FSID;
	op.u.layoutrecall.changed = true;
	op.u.layoutrecall.fsid_major = 9;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_int_equal(xdr_enc_len(&e), 5 * 4 + 16);
	assert_int_equal(be32(buf + 12), 1);
	assert_int_equal(be32(buf + 24), 9);
	op.u.layoutrecall.recall_type = LAYOUTRECALL4_ALL;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_int_equal(xdr_enc_len(&e), 5 * 4);
	op.u.layoutrecall.recall_type = 4; /* not a layoutrecall_type4 */
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_true(e.overflow);
	assert_int_equal(nfs4_cb_opnum(NFS4_CB_OP_LAYOUTRECALL), 5);
}

/* A whole CB_COMPOUND: 4.1 with CB_SEQUENCE first, 4.0 the op alone. */
static void test_enc_compound_op(void **state)
{
	struct nfs4_cb_seq_args sa = { .seqid = 2 };

	(void)state;
	memset(&op, 0, sizeof(op));
	op.kind = NFS4_CB_OP_RECALL;
	fill_fh(&op.u.recall.fh, 4);
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_compound_op(&e, 2, 0, &sa, &op);
	assert_false(e.overflow);
	assert_int_equal(be32(buf + 4), 2);
	assert_int_equal(be32(buf + 12), 2);
	assert_int_equal(be32(buf + 16), OP_CB_SEQUENCE);
	assert_int_equal(be32(buf + 56), OP_CB_RECALL);
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_compound_op(&e, 0, 42, NULL, &op);
	assert_int_equal(be32(buf + 8), 42);
	assert_int_equal(be32(buf + 12), 1);
	assert_int_equal(be32(buf + 16), OP_CB_RECALL);
}

/* A reply to CB_COMPOUND{[CB_SEQUENCE,] opnum}: seq status st, then the op's status. */
static size_t reply_op(bool seq, uint32_t st, uint32_t opnum, uint32_t opst, uint32_t nres)
{
	uint8_t sid[16];
	uint32_t n = 0;

	memset(sid, 0xcd, sizeof(sid));
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_u32(&e, opst ? opst : st);
	xdr_enc_opaque(&e, "", 0);
	xdr_enc_u32(&e, nres);
	if (seq && n++ < nres) {
		xdr_enc_u32(&e, OP_CB_SEQUENCE);
		xdr_enc_u32(&e, st);
		if (st == 0) {
			xdr_enc_fixed(&e, sid, 16);
			xdr_enc_u32(&e, 1);
			xdr_enc_u32(&e, 0);
			xdr_enc_u32(&e, 0);
			xdr_enc_u32(&e, 0);
		}
	}
	for (; n < nres; n++) {
		xdr_enc_u32(&e, opnum);
		xdr_enc_u32(&e, opst);
	}
	return xdr_enc_len(&e);
}

static enum nfs4_cb_dec_result dec_op(bool seq, uint32_t opnum, size_t len, struct nfs4_cb_compound_res *r)
{
	struct xdr_dec d;

	xdr_dec_init(&d, buf, len);
	return nfs4_cb_dec_compound_op(&d, seq, opnum, r);
}

static void test_dec_compound_op(void **state)
{
	struct nfs4_cb_compound_res r;
	size_t len;

	(void)state;
	/* 4.1: CB_SEQUENCE OK, CB_RECALL OK. */
	len = reply_op(true, 0, OP_CB_RECALL, 0, 2);
	assert_int_equal(dec_op(true, OP_CB_RECALL, len, &r), NFS4_CB_DEC_OK);
	assert_true(r.has_seq);
	assert_true(r.has_op);
	assert_int_equal(r.op_status, 0);
	assert_int_equal(r.seq.seqid, 1);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(dec_op(true, OP_CB_RECALL, n, &r), NFS4_CB_DEC_SHORT);
	/* The op's own error (e.g. NFS4ERR_BADHANDLE 10001). */
	len = reply_op(true, 0, OP_CB_RECALL, 10001, 2);
	assert_int_equal(dec_op(true, OP_CB_RECALL, len, &r), NFS4_CB_DEC_OK);
	assert_true(r.has_op);
	assert_int_equal(r.op_status, 10001);
	/* CB_SEQUENCE failed: the op was not reached. */
	len = reply_op(true, 10052, OP_CB_RECALL, 0, 1);
	assert_int_equal(dec_op(true, OP_CB_RECALL, len, &r), NFS4_CB_DEC_OK);
	assert_true(r.has_seq);
	assert_false(r.has_op);
	/* 4.0: the op alone. */
	len = reply_op(false, 0, OP_CB_RECALL_ANY, 0, 1);
	assert_int_equal(dec_op(false, OP_CB_RECALL_ANY, len, &r), NFS4_CB_DEC_OK);
	assert_false(r.has_seq);
	assert_true(r.has_op);
	/* Another operation's result, more results than asked for. */
	len = reply_op(true, 0, OP_CB_OFFLOAD, 0, 2);
	assert_int_equal(dec_op(true, OP_CB_RECALL, len, &r), NFS4_CB_DEC_BAD);
	len = reply_op(false, 0, OP_CB_ILLEGAL, 10044, 1);
	assert_int_equal(dec_op(false, OP_CB_NOTIFY_LOCK, len, &r), NFS4_CB_DEC_BAD);
	len = reply_op(true, 0, OP_CB_RECALL, 0, 3);
	assert_int_equal(dec_op(true, OP_CB_RECALL, len, &r), NFS4_CB_DEC_BAD);
	/* Every kind maps to its opnum. */
	assert_int_equal(nfs4_cb_opnum(NFS4_CB_OP_RECALL), 4);
	assert_int_equal(nfs4_cb_opnum(NFS4_CB_OP_RECALL_ANY), 8);
	assert_int_equal(nfs4_cb_opnum(NFS4_CB_OP_NOTIFY_LOCK), 13);
	assert_int_equal(nfs4_cb_opnum(NFS4_CB_OP_OFFLOAD), 15);
}

/* CB_COMPOUND4res {CB_GETATTR NFS4_OK} into buf up to its attrmask's count nwords. */
static void reply_ga_head(uint32_t nwords)
{
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_u32(&e, 0);
	xdr_enc_u32(&e, 0); /* tag */
	xdr_enc_u32(&e, 1);
	xdr_enc_u32(&e, OP_CB_GETATTR);
	xdr_enc_u32(&e, 0);
	xdr_enc_u32(&e, nwords);
}

/* RFC 8881 §20.1: CB_GETATTR4args (fh, bitmap4), and CB_GETATTR4resok's fattr4 decoded for change and size. */
static size_t reply_getattr(uint32_t nwords, uint32_t w0, uint32_t vals_len, uint64_t change, uint64_t size)
{
	reply_ga_head(nwords);
	for (uint32_t i = 0; i < nwords; i++)
		xdr_enc_u32(&e, i == 0 ? w0 : 0x3u); /* words 1..: other attributes, not read */
	xdr_enc_u32(&e, vals_len);
	if (vals_len >= 8)
		xdr_enc_u64(&e, change);
	if (vals_len >= 16)
		xdr_enc_u64(&e, size);
	for (uint32_t i = 16; i < vals_len; i += 4)
		xdr_enc_u32(&e, 0x77);
	return xdr_enc_len(&e);
}

/* CB_GETATTR of an 8-byte handle asking change and size (and mask2's word 2), encoded into buf. */
static void enc_getattr(uint32_t mask2)
{
	memset(&op, 0, sizeof(op));
	op.kind = NFS4_CB_OP_GETATTR;
	fill_fh(&op.u.getattr.fh, 8);
	op.u.getattr.mask0 = 0x18;
	op.u.getattr.mask2 = mask2;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_cb_enc_op(&e, &op);
	assert_false(e.overflow);
}

static void test_getattr(void **state)
{
	struct nfs4_cb_compound_res r;
	size_t len;

	(void)state;
	enc_getattr(0);
	assert_int_equal(xdr_enc_len(&e), 4 + 4 + 8 + 4 + 4);
	assert_int_equal(be32(buf), OP_CB_GETATTR);
	assert_int_equal(be32(buf + 16), 1);
	assert_int_equal(be32(buf + 20), 0x18);
	assert_int_equal(nfs4_cb_opnum(NFS4_CB_OP_GETATTR), 3);
	/* change and size, then RFC 9754's delegated times (words 2..) left unread */
	len = reply_getattr(3, 0x18, 40, 77, 5);
	assert_int_equal(dec_op(false, OP_CB_GETATTR, len, &r), NFS4_CB_DEC_OK);
	assert_true(r.has_op && r.ga.has_change && r.ga.has_size);
	assert_true(r.ga.change == 77 && r.ga.size == 5);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(dec_op(false, OP_CB_GETATTR, n, &r), NFS4_CB_DEC_SHORT);
	/* size alone */
	len = reply_getattr(1, 0x10, 8, 9, 0);
	assert_int_equal(dec_op(false, OP_CB_GETATTR, len, &r), NFS4_CB_DEC_OK);
	assert_true(!r.ga.has_change && r.ga.has_size && r.ga.size == 9);
	/* values shorter than their mask; an attribute before change; a huge mask */
	len = reply_getattr(1, 0x18, 8, 1, 0);
	assert_int_equal(dec_op(false, OP_CB_GETATTR, len, &r), NFS4_CB_DEC_BAD);
	len = reply_getattr(1, 0x1a, 16, 1, 2);
	assert_int_equal(dec_op(false, OP_CB_GETATTR, len, &r), NFS4_CB_DEC_BAD);
	len = reply_getattr(9, 0x18, 16, 1, 2);
	assert_int_equal(dec_op(false, OP_CB_GETATTR, len, &r), NFS4_CB_DEC_BAD);
	/* an error: no fattr4 */
	len = reply_op(false, 0, OP_CB_GETATTR, 10001, 1);
	assert_int_equal(dec_op(false, OP_CB_GETATTR, len, &r), NFS4_CB_DEC_OK);
	assert_true(r.has_op && r.op_status == 10001 && !r.ga.has_size);
}

/* RFC 9754 §5.2: CB_GETATTR asks an *_ATTRS_DELEG holder time_deleg_access
 * and time_deleg_modify (word 2) too, and reads them from its answer. */
static void test_getattr_times(void **state)
{
	struct nfs4_cb_compound_res r;
	size_t len;

	(void)state;
	enc_getattr(1u << 20 | 1u << 21);
	assert_int_equal(xdr_enc_len(&e), 4 + 4 + 8 + 4 + 12);
	assert_int_equal(be32(buf + 16), 3);
	assert_int_equal(be32(buf + 20), 0x18);
	assert_int_equal(be32(buf + 24), 0);
	assert_int_equal(be32(buf + 28), 1u << 20 | 1u << 21);
	/* change, size, time_deleg_access, time_deleg_modify */
	for (int cut = 0; cut < 2; cut++) {
		reply_ga_head(3);
		xdr_enc_u32(&e, 0x18);
		xdr_enc_u32(&e, 0);
		xdr_enc_u32(&e, 1u << 20 | 1u << 21);
		xdr_enc_u32(&e, cut ? 36 : 40);
		xdr_enc_u64(&e, 77);
		xdr_enc_u64(&e, 5);
		xdr_enc_u64(&e, 1700000001);
		xdr_enc_u32(&e, 11);
		xdr_enc_u64(&e, 1700000002);
		if (!cut)
			xdr_enc_u32(&e, 12);
		len = xdr_enc_len(&e);
		if (cut) { /* the modify time cut short: BAD */
			assert_int_equal(dec_op(false, OP_CB_GETATTR, len, &r), NFS4_CB_DEC_BAD);
			continue;
		}
		assert_int_equal(dec_op(false, OP_CB_GETATTR, len, &r), NFS4_CB_DEC_OK);
		assert_true(r.ga.has_change && r.ga.has_size && r.ga.has_atime && r.ga.has_mtime);
		assert_true(r.ga.atime_sec == 1700000001 && r.ga.atime_nsec == 11);
		assert_true(r.ga.mtime_sec == 1700000002 && r.ga.mtime_nsec == 12);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enc_compound_seq),
		cmocka_unit_test(test_enc_compound_empty_and_overflow),
		cmocka_unit_test(test_dec_compound),
		cmocka_unit_test(test_dec_tag_limit),
		cmocka_unit_test(test_uaddr),
		cmocka_unit_test(test_state_machine),
		cmocka_unit_test(test_slot),
		cmocka_unit_test(test_enc_recall),
		cmocka_unit_test(test_enc_recall_any),
		cmocka_unit_test(test_enc_notify_lock),
		cmocka_unit_test(test_enc_notify),
		cmocka_unit_test(test_enc_notify_dir_attrs),
		cmocka_unit_test(test_enc_offload),
		cmocka_unit_test(test_enc_layoutrecall),
		cmocka_unit_test(test_enc_compound_op),
		cmocka_unit_test(test_dec_compound_op),
		cmocka_unit_test(test_getattr_times),
		cmocka_unit_test(test_getattr),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
