/*
 * fuzz_nfs4_compound.c - libFuzzer target: NFSv4 COMPOUND decoding and the
 * engine (nfs/v4/compound/nfs4_compound.c, nfs4_xdr.c) on arbitrary bytes, as
 * COMPOUND4args, with the real operation table (no export is served, so the
 * namespace is an empty pseudo root: PUTROOTFH, GETATTR, READDIR, LOOKUP,
 * SECINFO... run for real; EXCHANGE_ID, CREATE_SESSION, DESTROY_* against the
 * real session state), with a SEQUENCE that does nothing so NFSv4.1
 * COMPOUNDs get past their first operation (a fuzzer cannot guess session ids). The first byte picks the reply
 * limit and the highest minor version served.
 *
 * Besides "no crash, no sanitizer report", it checks with abort(): the
 * reply stays within its limit, parses back as COMPOUND4res, never holds
 * more results than operations asked for, and its status is the last
 * result's. The same bytes are also decoded as the fattr4 a client sets
 * (nfs4_sattr_dec): on success only settable attributes are named, each with
 * its BE_SET_* bit, and a failure is one of the statuses it may return. Built as a libFuzzer target with -Dfuzz=true (clang), and in
 * every build as a replay test over fuzz/corpus/nfs4_compound.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/nfs4_setup.h"
#include "nfs/v4/xdr/nfs4_sattr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) abort(); } while (0)

static struct nfs4_op ops[NFS4_OP_COUNT];
static struct nfs4_arena arena;
static struct nfs4_svc svc;
static struct nfs4_server srv; /* the live state EXCHANGE_ID, CREATE_SESSION, DESTROY_* act on */
static uint8_t reply[16384];

static uint32_t exec_ok(struct nfs4_ctx *x, void *args, void *res)
{
	(void)x, (void)args, (void)res;
	return NFS4_OK;
}

static void init_once(void)
{
	static int done;
	static const uint8_t key[16] = "fuzz-nfs4-key-01";

	if (done)
		return;
	done = 1;
	nfs_fh_key_set(key);
	nfs4_server_init(&srv, NULL);
	memcpy(ops, nfs4_ops, sizeof(ops));
	ops[OP_SEQUENCE] = (struct nfs4_op){ .name = "SEQUENCE", .execute = exec_ok };
}

/* Parse the reply back; CHECK its shape. */
static void check_reply(size_t len, uint32_t numops, uint32_t status)
{
	struct xdr_dec d;
	uint32_t st, count, resop, rst = NFS4_OK;
	const uint8_t *tag;
	uint32_t taglen;

	xdr_dec_init(&d, reply, len);
	CHECK(xdr_dec_u32(&d, &st) && st == status);
	CHECK(xdr_dec_opaque(&d, NFS4_TAG_MAX, &tag, &taglen));
	CHECK(xdr_dec_u32(&d, &count));
	CHECK(count <= numops && count <= NFS4_MAX_OPS);
	if (count == 0)
		return;
	/* The first result: resop and status are always there. */
	CHECK(xdr_dec_u32(&d, &resop) && xdr_dec_u32(&d, &rst));
	/* A failed only result is its status alone, unless the operation's result
	 * has a body on failure too (NFS4_OPF_ENC_ERR: SETATTR4res's attrsset,
	 * RFC 8881 §18.30.2): then at most a bitmap4 follows here. */
	if (count == 1 && status != NFS4_OK) {
		CHECK(rst == status);
		if (resop < NFS4_OP_COUNT && (ops[resop].flags & NFS4_OPF_ENC_ERR))
			CHECK(xdr_dec_remaining(&d) <= 4u + 4u * NFS4_BITMAP_WORDS);
		else
			CHECK(xdr_dec_remaining(&d) == 0);
	}
}

/* The input as settable fattr4 (nfs4_sattr.c). */
static void check_sattr(const uint8_t *data, size_t size)
{
	struct nfs4_sattr s;
	struct nfs4_bitmap sup;
	struct xdr_dec d;
	uint32_t st;

	xdr_dec_init(&d, data, size);
	st = nfs4_sattr_dec(&d, &s);
	CHECK(st == NFS4_OK || st == NFS4ERR_BADXDR || st == NFS4ERR_ATTRNOTSUPP || st == NFS4ERR_INVAL ||
	      st == NFS4ERR_BADOWNER);
	CHECK(xdr_dec_remaining(&d) <= size);
	if (st != NFS4_OK)
		return;
	nfs4_sattr_supported(&sup);
	for (uint32_t i = 0; i < NFS4_BITMAP_WORDS; i++)
		CHECK((s.attrsset.w[i] & ~sup.w[i]) == 0);
	CHECK(nfs4_bitmap_isset(&s.attrsset, FATTR4_SIZE) == !!(s.sa.mask & BE_SET_SIZE));
	CHECK(nfs4_bitmap_isset(&s.attrsset, FATTR4_MODE) == !!(s.sa.mask & BE_SET_MODE));
	CHECK(s.sa.mode <= 07777u);
	CHECK(s.sa.atime.nsec < 1000000000u && s.sa.mtime.nsec < 1000000000u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t limits[] = { 0, 16, 24, 64, 100, 256, 1024, 4096 };
	struct xdr_dec d;
	struct xdr_enc e;
	uint32_t status = 0, reply_max;

	init_once();
	if (size < 1)
		return 0;
	check_sattr(data + 1, size - 1);
	reply_max = limits[data[0] & 7];
	arena.ctx.ops = ops;
	arena.ctx.minor_max = (data[0] >> 3) % (NFS4_MINOR_MAX + 1);
	arena.ctx.reply_max = reply_max;
	arena.ctx.call = NULL;
	arena.ctx.priv = &svc;
	xdr_dec_init(&d, data + 1, size - 1);
	xdr_enc_init(&e, reply, sizeof(reply));
	nfs4_svc_begin(&svc, &srv, NULL);
	enum nfs4_compound_outcome out = nfs4_compound_run(&arena, &d, &e, &status);
	nfs4_svc_end(&svc);
	if (out != NFS4_COMPOUND_DONE)
		return 0;
	CHECK(!e.overflow);
	CHECK(reply_max == 0 || xdr_enc_len(&e) <= reply_max);
	CHECK(arena.ctx.numops == 0 || arena.ctx.opidx <= arena.ctx.numops);
	check_reply(xdr_enc_len(&e), arena.ctx.numops, status);
	return 0;
}
