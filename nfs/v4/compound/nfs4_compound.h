/*
 * nfs4_compound.h - the NFSv4 COMPOUND engine (RFC 7530 §15.2, §16.2;
 * RFC 8881 §2.10.6.4, §16.2.3): the operation table, the per-COMPOUND
 * context (current and saved filehandle), and nfs4_compound_run(), a pure
 * function from the call's bytes to the reply's bytes.
 *
 * Working memory: a COMPOUND carries any number of operations, each with its
 * own arguments and results, and the RPC layer's per-call scratch
 * (RPC_PROC_SCRATCH, 1 KiB, sized for NFSv3's single procedures) would not
 * hold the context plus the largest operation. The engine instead runs in a
 * struct nfs4_arena that the caller owns: in the daemon, one per worker
 * thread (nfs4_arena_get(), thread-local, allocated with the thread and never
 * freed per call), because a COMPOUND runs from its first operation to its
 * reply inside one execute step on one worker, so an arena is never shared,
 * and the memory is bounded by the thread count, not by connections times
 * credits (as per-connection or per-call-context arenas would be). Operations
 * are decoded, executed and encoded one at a time, so one argument and one
 * result area serve the whole COMPOUND; both are zeroed before each
 * operation. A COMPOUND that will one day be parked (RPC_PROC_DEFER, blocking
 * locks) must copy what it needs out of the arena first.
 */
#ifndef RNFSD_NFS4_COMPOUND_H
#define RNFSD_NFS4_COMPOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfs/v4/xdr/nfs4_xdr.h"

/* Largest argument and result struct of any operation (checked per table
 * entry at compile time by NFS4_OP_SCRATCH_SIZE()). */
#define NFS4_OP_SCRATCH 2048u
/* Most operations in one COMPOUND; more gets NFS4ERR_RESOURCE (4.0, RFC 7530
 * §16.2.3) or NFS4ERR_TOO_MANY_OPS (4.1+, RFC 8881 §2.10.6.4)
 * and no results. The Linux client sends fewer than 20. */
#define NFS4_MAX_OPS 128u
/* Bytes kept back while encoding an operation's result, so that the result
 * replacing one that did not fit ({resop, status}) always can be written. */
#define NFS4_REPLY_RESERVE 8u

struct nfs4_ctx;

/* A filehandle as the COMPOUND holds it (current or saved, RFC 8881 §16.2.3). */
struct nfs4_cfh {
	bool set;
	struct nfs_fh fh; /* as the client sees it (an envelope, nfs/common/fh.c) */
};

enum nfs4_op_flags {
	NFS4_OPF_CURFH = 1u << 0,   /* needs a current filehandle: else NFS4ERR_NOFILEHANDLE */
	NFS4_OPF_ENC_ERR = 1u << 1, /* encode runs on errors too (e.g. LOCK's DENIED) */
	NFS4_OPF_STREAM = 1u << 2,  /* execute writes its result body to ctx->enc (READDIR's
	                               entries); dropped if it fails, RESOURCE/REP_TOO_BIG if
	                               it overflows; no encode step */
	NFS4_OPF_NO_SEQ = 1u << 3,  /* session-less: may open a 4.1+ COMPOUND in place of SEQUENCE
	                               (RFC 8881 §18.46.3, §2.6.3.1.1) */
	NFS4_OPF_V40 = 1u << 4,     /* NFSv4.0 only: NOTSUPP in 4.1 and later (RFC 8881 §17, MNI) */
	NFS4_OPF_DRC = 1u << 5,     /* 4.0: not idempotent and no seqid protects it, so the DRC keeps
	                               the COMPOUND's reply (RFC 7530 §3.1.1, §9.1.7; knfsd's OP_CACHEME) */
	NFS4_OPF_PUTFH = 1u << 6,   /* a put filehandle operation (RFC 8881 §2.6.3.1.1): PUTFH, PUTPUBFH,
	                               PUTROOTFH, RESTOREFH; the operations after it decide whether it
	                               checks the filehandle's security flavor (ctx->sec_check) */
	NFS4_OPF_INLINE = 1u << 7,  /* runs on the receiving thread without waiting and without the
	                               caller's identity, and never needs to decline there
	                               (nfs4_compound_inline_ok, rpc_inline.h) */
};

/* One entry of the operation table, indexed by nfs_opnum4. */
struct nfs4_op {
	const char *name;
	/* Decode the arguments into *args (args_size zeroed bytes); false:
	 * NFS4ERR_BADXDR. NULL: no arguments. d is the call's own decoder, so
	 * xdr_dec_pos() is an RFC 8166 position (rpc_dec_ddp() for WRITE). */
	bool (*decode)(struct nfs4_ctx *x, struct xdr_dec *d, void *args);
	/* Do the work, fill *res (res_size zeroed bytes); returns an nfsstat4.
	 * NULL: the operation is not built yet (NFS4ERR_NOTSUPP). */
	uint32_t (*execute)(struct nfs4_ctx *x, void *args, void *res);
	/* Encode the result after its status (status NFS4_OK, or any with
	 * NFS4_OPF_ENC_ERR). NULL: the result is the status alone. */
	void (*encode)(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
	uint16_t args_size, res_size;
	uint8_t flags; /* enum nfs4_op_flags */
};

#define NFS4_OP_SCRATCH_SIZE(type) \
	((uint16_t)(sizeof(type) + 0 * sizeof(struct { \
		_Static_assert(sizeof(type) <= NFS4_OP_SCRATCH, #type " exceeds NFS4_OP_SCRATCH"); \
		char nfs4_scratch_check_; \
	})))

/* Per-COMPOUND state, in the arena. */
struct nfs4_ctx {
	const struct nfs4_op *ops; /* [NFS4_OP_COUNT] */
	uint32_t minor_max;        /* highest minor version served (<= NFS4_MINOR_MAX) */
	uint32_t reply_max;        /* most bytes of COMPOUND4res (4.1: the session's
	                              ca_maxresponsesize); 0: the buffer's size */
	struct rpc_call *call;     /* the RPC call (NULL in unit tests) */
	void *priv;                /* the service's (exports, credential, the server's state) */
	/* Called after each operation: the context, its number (as sent; OP_ILLEGAL when none
	 * decoded), its status and the nanoseconds it took. The caller's counters (the program's:
	 * nfs4_stats_op, and the export's); NULL: none. */
	void (*op_done)(const struct nfs4_ctx *x, uint32_t op, uint32_t status, uint64_t ns);
	/* Does the current filehandle take the call's security flavor? NFS4_OK or NFS4ERR_WRONGSEC; run
	 * after a put filehandle operation when nfs4_putfh_checks_sec() says so. NULL: no check. */
	uint32_t (*sec_check)(struct nfs4_ctx *x);

	/* Set by nfs4_compound_run() for the operations. */
	uint32_t minorversion;
	uint32_t numops, opidx; /* operations in the COMPOUND, index of the running one */
	struct xdr_enc *enc;    /* the reply (NFS4_OPF_STREAM operations write here) */
	size_t res_start;       /* offset in *enc of COMPOUND4res (what a session slot caches) */
	/* Set by SEQUENCE for a retransmission (RFC 8881 §2.10.6.1.2): the whole
	 * COMPOUND4res is then these cached bytes, nothing else runs. */
	const uint8_t *replay;
	uint32_t replay_len;
	uint32_t too_big; /* status for a result that does not fit (0: RESOURCE / REP_TOO_BIG) */
	size_t sess_lim;  /* 4.1+: offset in *enc where the session's reply limit ends, counting
	                     the data sent out of band (call->ddp_out); SIZE_MAX: none */
	struct nfs4_cfh cur, saved;
};

struct nfs4_arena {
	struct nfs4_ctx ctx;
	_Alignas(max_align_t) uint8_t args[NFS4_OP_SCRATCH];
	_Alignas(max_align_t) uint8_t res[NFS4_OP_SCRATCH];
};

/* Operation numbers nfs4_putfh_checks_sec() is given at most (SAVEFHs, then one more). */
#define NFS4_SEC_PEEK 4u

/*
 * RFC 8881 §2.6.3.1.1 (RFC 7530 §16.31.4 for 4.0): whether a put filehandle
 * operation returns NFS4ERR_WRONGSEC for a flavor its filehandle does not
 * take, given the numbers of the n operations that follow it (n 0: none).
 * SAVEFH is looked through (§2.6.3.1.1.1); nothing (§.6), another put
 * filehandle operation (§.2), LOOKUP, LOOKUPP, OPEN (§.3-4: they check what
 * they reach; OPEN by filehandle checks its file when it opens it, as
 * knfsd's OP_HANDLES_WRONGSEC), SECINFO and SECINFO_NO_NAME (§.5), or a
 * number that is no operation (ILLEGAL follows) make it not check; anything
 * else does (§.7). Pure.
 */
bool nfs4_putfh_checks_sec(const uint32_t *next, unsigned n);

/* Outcome of nfs4_compound_run() for the RPC layer. */
enum nfs4_compound_outcome {
	NFS4_COMPOUND_DONE,    /* COMPOUND4res encoded (whatever its status) */
	NFS4_COMPOUND_GARBAGE, /* the header did not decode: GARBAGE_ARGS */
	NFS4_COMPOUND_NOROOM,  /* not even the header fits the reply: SYSTEM_ERR */
};

/*
 * Run the COMPOUND whose arguments start at d's position, encoding
 * COMPOUND4res at e's position. a->ctx's ops, minor_max, reply_max, call,
 * priv and op_done are the caller's; everything else is reset here. The status of the
 * COMPOUND is that of its last operation (RFC 8881 §16.2.3), also returned
 * in *status when status is not NULL.
 */
enum nfs4_compound_outcome nfs4_compound_run(struct nfs4_arena *a, struct xdr_dec *d, struct xdr_enc *e,
					     uint32_t *status);

/*
 * An operation (SEQUENCE) lowers the reply limit to max bytes of
 * COMPOUND4res; a result that does not fit then gets too_big (RFC 8881
 * §2.10.6.4: REP_TOO_BIG, or REP_TOO_BIG_TO_CACHE when the client asked for a
 * cached reply larger than the slot keeps).
 */
void nfs4_compound_limit(struct nfs4_ctx *x, uint32_t max, uint32_t too_big);
/*
 * Before an operation produces bulk data (READ): would a result of `more`
 * bytes (its resop and status included, out-of-band data counted) still fit
 * the session's limit? NFS4_OK, or the status the result would get
 * (REP_TOO_BIG / REP_TOO_BIG_TO_CACHE), so the data need not be read first.
 */
uint32_t nfs4_compound_room(const struct nfs4_ctx *x, size_t more);

/*
 * Pure: may a COMPOUND whose operation numbers are nums[0..n) (numops in its
 * header) run whole on the thread that received it? Only when all numops
 * operations were seen (n == numops, 1..NFS4_MAX_OPS) and each is a known
 * number flagged NFS4_OPF_INLINE in ops: decided before SEQUENCE takes its
 * slot (RFC 8881 §2.10.6.1), so nothing ever declines after it. delegs_out:
 * some delegation is held, so a GETATTR may have to ask its holder
 * (CB_GETATTR, RFC 8881 §10.4.3), which only a worker waits for.
 */
bool nfs4_compound_inline_ok(const struct nfs4_op *ops, const uint32_t *nums, unsigned n, uint32_t numops,
			     bool delegs_out);
/*
 * Receiving thread, before anything runs: walks a copy of the COMPOUND's
 * arguments, decoding each NFS4_OPF_INLINE operation's arguments into a's
 * scratch only to find the next number, and stops at the first other one.
 * Returns nfs4_compound_inline_ok() over what it saw. Decoders of inline
 * operations are pure, so the walk changes nothing.
 */
bool nfs4_compound_inline_peek(struct nfs4_arena *a, const struct nfs4_op *ops, const struct xdr_dec *args,
			       bool delegs_out);

/* The calling worker thread's arena (thread-local storage, never freed per call). */
struct nfs4_arena *nfs4_arena_get(void);

#endif
