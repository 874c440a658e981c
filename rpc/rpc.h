/*
 * rpc.h - the transport-independent ONC RPC layer (RFC 5531): call header
 * decoding, authentication (AUTH_NONE, AUTH_SYS), program dispatch, the
 * duplicate request cache, and reply encoding.
 *
 * The contract with transports (TCP record marking, RPC-over-RDMA):
 *   a call arrives as bytes plus optional out-of-band payload (ddp_in[],
 *   RPC-over-RDMA Read chunks); a reply leaves as bytes plus optional
 *   out-of-band payload (ddp_out[], candidates for RPC-over-RDMA Write chunks).
 *
 * Lifecycle of a struct rpc_call (owned by the transport, embedded in its
 * per-call context, never malloc'ed per call):
 *
 *   transport fills conn/msg/msg_len/ddp_in/reply_buf/payload_area
 *     -> rpc_call_receive()          [loop thread]  header, auth, DRC lookup
 *     -> decode, execute, encode     [worker thread] the procedure's three steps
 *     -> rpc_call_complete()         [loop thread]  DRC insert, stats
 *     -> xprt->ops->send_reply()     [loop thread]  transport sends (or drops) and
 *                                                   then releases the call context
 *   (execute may park the call instead: rpc_call_defer(), RPC_PROC_DEFER; no
 *    worker is held until rpc_call_resume() runs the encode step, and the
 *    call keeps its transport context meanwhile, so a draining transport
 *    waits for it, or its stop closes the connection, which cancels it)
 *
 * Operation tables: each program version is an array of struct rpc_proc
 * (decode, execute, encode steps; scratch sizes; the largest inline reply;
 * cache policy; RFC 8267 DDP rule). The transport asks the same tables what a
 * chunk may carry (rpc_ddp_rule()), so procedure numbers live in one place.
 * A procedure's decode step reads c->args (a decoder whose base is the first
 * byte of the RPC message, so xdr_dec_pos() is an RFC 8166 XDR position) into
 * its argument struct; its encode step writes c->res, which already holds the
 * accepted-reply header.
 */
#ifndef RNFSD_RPC_H
#define RNFSD_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <time.h>

#include "core/workers.h"
#include "rpc/xdr.h"
#include "rpc/xprt.h"
#include "ulb/ulb.h"

/* RFC 5531 §9 */
enum { RPC_MSG_CALL = 0, RPC_MSG_REPLY = 1 };
enum { RPC_MSG_ACCEPTED = 0, RPC_MSG_DENIED = 1 };
enum {
	RPC_SUCCESS = 0,
	RPC_PROG_UNAVAIL = 1,
	RPC_PROG_MISMATCH = 2,
	RPC_PROC_UNAVAIL = 3,
	RPC_GARBAGE_ARGS = 4,
	RPC_SYSTEM_ERR = 5,
};
enum { RPC_RPC_MISMATCH = 0, RPC_AUTH_ERROR = 1 };
enum {
	RPC_AUTH_OK = 0,
	RPC_AUTH_BADCRED = 1,
	RPC_AUTH_REJECTEDCRED = 2,
	RPC_AUTH_BADVERF = 3,
	RPC_AUTH_REJECTEDVERF = 4,
	RPC_AUTH_TOOWEAK = 5,
};
enum { RPC_AUTH_NONE = 0, RPC_AUTH_SYS = 1, RPC_AUTH_GSS = 6 /* RPCSEC_GSS, RFC 2203 §3 */,
       RPC_AUTH_TLS = 7 /* RFC 9289 §4.1: the STARTTLS probe, NULL procedure only */ };

#define RPC_AUTH_MAX_BYTES 400  /* RFC 5531 §8.2: opaque_auth body <= 400 */
#define RPC_AUTH_SYS_MAX_GIDS 16 /* RFC 5531 appendix A */
#define RPC_MAX_DDP_IN 4
#define RPC_MAX_DDP_OUT 8
/* Bytes of per-call scratch for a procedure's decoded arguments, and again for its results. */
#define RPC_PROC_SCRATCH 1024
/* RFC 5531 §9: xid, REPLY, MSG_ACCEPTED, verifier (AUTH_NONE, empty), accept_stat. */
#define RPC_REPLY_ACCEPTED_LEN 24u

struct rpc_cred {
	uint32_t flavor; /* RPC_AUTH_NONE, RPC_AUTH_SYS, RPC_AUTH_GSS, or RPC_AUTH_TLS (a probe: nobody) */
	uint32_t uid, gid;
	uint32_t ngroups;
	uint32_t groups[RPC_AUTH_SYS_MAX_GIDS];
};

struct rpc_call;
struct rpc_gss_ctx;

/* An RPCSEC_GSS call (rpc/rpc_gss_krb5.c): RPC layer private. Pointers are into the call's message. */
struct rpc_gss_call {
	struct rpc_gss_ctx *ctx;  /* referenced from the header to the reply, or NULL */
	uint32_t proc, seq, svc;  /* the credential's (RFC 2203 §5) */
	const uint8_t *handle;
	uint32_t handle_len;
	uint32_t hdr_len;         /* xid to the credential's end: what the call's verifier signs (§5.3.1) */
	uint32_t verf_flavor, verf_len;
	const uint8_t *verf;
	bool reply_verf;          /* the reply's verifier is a MIC of reply_word (§5.2.3.1, §5.3.3.2) */
	uint32_t reply_word;
	bool wrap;                /* the results are wrapped (krb5i §5.3.2.2, krb5p §5.3.2.3) */
};

/* A Read chunk's payload as the RPC-over-RDMA transport pulled it. */
struct rpc_ddp_in {
	uint32_t position; /* XDR offset within the RPC call message */
	uint32_t len;
	const uint8_t *data; /* pre-registered buffer owned by the transport */
};

/* A bulk result item the transport may move out of band (a Write chunk). */
struct rpc_ddp_out {
	size_t offset;       /* where the item's bytes belong in the reply stream, i.e.
	                        xdr_enc_len(&res) at the time; its length word precedes it */
	uint32_t len;        /* data bytes, without XDR padding */
	const uint8_t *data; /* inside payload_area, or any buffer that lives as long as c */
	bool piped;          /* the bytes wait in the call's payload pipe (rpc_payload_pipe), not at data */
};

/*
 * Counters a handler attaches to its call (rpc_call_acct()), beside the
 * procedure's own: the export the call acted on (nfs/common/nfs_common.h).
 * The RPC layer adds the call, and an error when the procedure's statistics
 * count one, as it records them (after the reply is encoded), then drops the
 * call's reference; the last reference frees the block (malloc'ed, with the
 * acct as its first member).
 */
struct rpc_acct {
	_Atomic uint64_t calls, errors;
	atomic_uint refs;
};

struct rpc_call {
	struct work work; /* worker-pool linkage */
	struct rpc_conn *conn;

	/* Request, filled by the transport. */
	const uint8_t *msg; /* the RPC call message, header first */
	size_t msg_len;
	struct rpc_ddp_in ddp_in[RPC_MAX_DDP_IN];
	unsigned n_ddp_in;

	/* Decoded by rpc_call_receive(). */
	uint32_t xid, prog, vers, proc;
	struct rpc_cred cred;
	struct rpc_gss_call gss; /* flavor RPCSEC_GSS only */
	struct xdr_dec args;
	const struct rpc_proc *procinfo;

	/* Reply, buffers provided by the transport. */
	uint8_t *reply_buf;
	size_t reply_cap;
	struct xdr_enc res;
	uint32_t reply_stat_off; /* accept_stat's offset in the reply (20 + a GSS verifier's body) */
	struct rpc_ddp_out ddp_out[RPC_MAX_DDP_OUT];
	unsigned n_ddp_out;
	uint8_t *payload_area; /* bulk data (READ) is produced here: rpc_payload_buf() */
	size_t payload_cap;
	size_t payload_used;
	size_t payload_piped;  /* bytes put in the transport's pipe (rpc_payload_pipe) */
	bool drop;        /* send nothing (in-progress duplicate, or reply message) */
	bool from_cache;  /* reply came from the duplicate request cache */
	bool proc_failed; /* handler: the procedure's own status is an error (e.g. an
	                     NFS3ERR_*), counted in the statistics; reset per call */
	bool drc_forget;  /* handler: nothing non-idempotent ran, the duplicate request
	                     cache need not keep the reply (NFSv4.0 COMPOUND); reset per call */
	bool starttls;    /* RFC 9289 §4.1: this reply's verifier says "STARTTLS"; the
	                     transport switches the connection to TLS once it is sent */

	struct timespec t_start;
	void *priv; /* transport private */

	/* The procedure's decoded arguments and its results (rpc_proc.args_size,
	 * res_size bytes zeroed before decode): per call, never malloc'ed. */
	_Alignas(max_align_t) uint8_t args_scratch[RPC_PROC_SCRATCH];
	_Alignas(max_align_t) uint8_t res_scratch[RPC_PROC_SCRATCH];

	/* RPC layer private, set by rpc_call_receive(); transports leave them alone. */
	struct rpc_drc_entry *drc_entry; /* in-progress duplicate request cache slot, or NULL */
	size_t ddp_in_reduced;           /* Read chunk bytes (with XDR pad) consumed by rpc_dec_ddp() */
	struct rpc_proc_stats *stats;    /* counters of this procedure, or NULL */
	struct rpc_acct *acct;           /* a handler's counters (rpc_call_acct), referenced, or NULL */
	int proc_status;                 /* enum rpc_proc_status the handler returned
	                                    (transports may read it in send_reply) */
	/* Deferral (rpc_call_defer, rpc_call_resume): RPC layer private. */
	atomic_int park_state;           /* enum rpc_park_state (rpc_call.c) */
	bool park_hooked;                /* park_hook is on conn's close hooks */
	int resume_status;               /* what rpc_call_resume() was given */
	void (*park_cancel)(struct rpc_call *c, void *arg);
	void *park_arg;
	struct rpc_conn_hook park_hook;
};

/* Result of a procedure's execute step. */
enum rpc_proc_status {
	RPC_PROC_OK,      /* results in *res for the encode step (or already in c->res) */
	RPC_PROC_GARBAGE, /* arguments could not be decoded: GARBAGE_ARGS */
	RPC_PROC_SYSERR,  /* SYSTEM_ERR */
	RPC_PROC_DROP,    /* send no reply (client will retransmit) */
	RPC_PROC_TOOWEAK, /* the credential's flavor is not accepted for what was asked:
	                     MSG_DENIED, AUTH_ERROR, AUTH_TOOWEAK (RFC 5531 §9) */
	RPC_PROC_DEFER,   /* the call is parked, to be answered later (blocking locks,
	                     delegation recalls) without holding a worker thread */
	RPC_PROC_WORKER,  /* RPC_RUN_INLINE_TRY declined on the receiving thread: run on a worker */
};

/* Where a procedure's replies are remembered against retransmissions. */
enum rpc_cache_policy {
	RPC_CACHE_NONE, /* idempotent: a retransmission simply runs again */
	RPC_CACHE_DRC,  /* non-idempotent: the duplicate request cache (rpc_drc.c) */
	RPC_CACHE_SLOT, /* NFSv4.1 session slot (RFC 8881 §2.10.6), kept by the session layer */
};

/*
 * Where a procedure runs (rpc_inline.c decides, per call).
 *   RPC_RUN_WORKER       on a worker thread (anything that may wait: data I/O,
 *                        state, a cluster)
 *   RPC_RUN_INLINE       on the thread that received the call, always: no
 *                        backend call at all (NULL)
 *   RPC_RUN_INLINE_META  on the receiving thread when every export's backend
 *                        answers metadata calls from memory (be_fs.meta_fast)
 *                        and no such call was slow lately; else on a worker
 *   RPC_RUN_INLINE_TRY   as RPC_RUN_INLINE_META, and execute may decline
 *                        there (RPC_PROC_WORKER: it would wait, for the
 *                        device or the caller's identity); the call then
 *                        runs again from the start on a worker, so execute
 *                        must decline before it changes anything (READ)
 *   RPC_RUN_INLINE_CALLER as RPC_RUN_INLINE_TRY, and only while calls acting as
 *                        their caller may be tried there (rpc_inline_callers():
 *                        a backend acts as the caller without an identity
 *                        switch, [rnfsd] uring-calls); else straight to a worker,
 *                        never decoded twice (CREATE, WRITE, ...)
 */
enum rpc_run { RPC_RUN_WORKER = 0, RPC_RUN_INLINE, RPC_RUN_INLINE_META, RPC_RUN_INLINE_TRY, RPC_RUN_INLINE_CALLER };

/*
 * One entry of an operation table (a program version's procedures, and later
 * NFSv4 COMPOUND's operations). All three steps run on a worker thread (or,
 * per .run, on the receiving thread), in order, with per-call scratch for the
 * arguments and results.
 */
struct rpc_proc {
	const char *name;
	/* Decode the arguments from c->args into *args (args_size bytes of
	 * zeroed scratch). false: GARBAGE_ARGS. NULL: no arguments to decode. */
	bool (*decode)(struct rpc_call *c, void *args);
	/* Do the work and fill *res (res_size bytes of zeroed scratch). May
	 * encode results that are streamed (READDIR entries) straight into
	 * c->res. Returns enum rpc_proc_status; NULL: PROC_UNAVAIL. */
	enum rpc_proc_status (*execute)(struct rpc_call *c, void *args, void *res);
	/* Encode *res into c->res after RPC_PROC_OK. NULL: execute encoded everything. */
	void (*encode)(struct rpc_call *c, const void *res);
	uint16_t args_size, res_size; /* each <= RPC_PROC_SCRATCH: use RPC_SCRATCH_SIZE(type) */
	/* The largest reply this procedure encodes inline, from the XID to its
	 * last result byte (RPC_REPLY_ACCEPTED_LEN + results), DDP item data
	 * excluded (its length word included); 0: unbounded (READDIR, DUMP). */
	uint32_t max_reply;
	enum rpc_cache_policy cache;
	/* RPC_CACHE_DRC only: does this call go through the cache (a look at the
	 * arguments on the loop thread: NFSv4 COMPOUND's minor version)? NULL: yes. */
	bool (*cache_wanted)(const struct rpc_call *c);
	/* RFC 8267: which Read chunks the call may use, which Write chunks its
	 * reply fills, for which XDR items (ulb/ulb.h: ULB_RULE_ARG, ULB_RULE_RES). */
	struct ulb_rule ddp;
	uint8_t run; /* enum rpc_run; 0: a worker */
	/* Receiving thread, when rpc_inline.h would run metadata calls there: this
	 * call's enum rpc_run from a look at its arguments, in place of .run
	 * (NFSv4 COMPOUND: its operations). NULL: .run. */
	uint8_t (*run_of)(const struct rpc_call *c);
};

/* sizeof(type) for rpc_proc.args_size/res_size, refused at compile time when
 * it exceeds the per-call scratch (C11 allows _Static_assert in a struct). */
#define RPC_SCRATCH_SIZE(type) \
	((uint16_t)(sizeof(type) + 0 * sizeof(struct { \
		_Static_assert(sizeof(type) <= RPC_PROC_SCRATCH, #type " exceeds RPC_PROC_SCRATCH"); \
		char rpc_scratch_check_; \
	})))

/* rpc_proc.max_reply for a procedure whose results take at most n bytes. */
#define RPC_REPLY_MAX(n) (RPC_REPLY_ACCEPTED_LEN + (uint32_t)(n))

struct rpc_version {
	uint32_t vers;
	uint32_t nprocs;
	const struct rpc_proc *procs;
};

struct rpc_program {
	uint32_t prog;
	const char *name;
	uint32_t nversions;
	const struct rpc_version *versions; /* ascending by vers */
};

/* Setup (main thread, before serving). 0, or -1 (logged) if a procedure's
 * scratch sizes exceed RPC_PROC_SCRATCH or the table is full. */
int rpc_register_program(const struct rpc_program *p);

/*
 * Transport side, any thread once serving: the operation table's entry for
 * prog/vers/proc (NULL if not served) and, in *rule, its RFC 8267 DDP rule
 * (all zero for unknown procedures: every data chunk is then ignored,
 * RFC 8267 §3, §4.4). The entry's max_reply helps plan reply buffers.
 */
const struct rpc_proc *rpc_ddp_rule(uint32_t prog, uint32_t vers, uint32_t proc,
				    struct ulb_rule *rule);
/* Allocates the duplicate request cache (0 entries: no cache). 0 or -1 (logged). */
int rpc_init(unsigned drc_entries);
/* Main thread, after serving stopped (no call in flight): forget programs, free the cache. */
void rpc_release(void);

/* rpc_inline.c. Main thread: the [rnfsd] inline-calls setting (default on). */
void rpc_inline_configure(bool enable);
/* Any thread (export table loads): may RPC_RUN_INLINE_META procedures run on
 * the receiving thread (true when every export's backend is meta_fast)? */
void rpc_inline_meta_allow(bool allowed);
/* Main thread: may RPC_RUN_INLINE_CALLER procedures be tried on the receiving thread (default no)? */
void rpc_inline_callers(bool allowed);
/* Counters: calls answered on the receiving thread; times inline metadata
 * calls were suspended because one was slow. */
void rpc_inline_counts(uint64_t *calls, uint64_t *suspended);

/*
 * Loop thread: a complete call message has arrived on c->conn.
 * The transport sets conn, msg, msg_len, ddp_in/n_ddp_in, reply_buf,
 * reply_cap, payload_area, payload_cap (and priv); everything else is reset
 * here. Exactly one xprt->ops->send_reply(c) follows: at once (from inside
 * this call) for rejections, cache replays and dropped messages, or later
 * from the loop thread after a worker ran the procedure.
 */
void rpc_call_receive(struct rpc_call *c);

/* Worker thread, inside a handler. */

/* Count the call in a too (see struct rpc_acct), taking a reference; a second
 * call replaces the first (a call run again on a worker). */
void rpc_call_acct(struct rpc_call *c, struct rpc_acct *a);
/* Drop a reference on a (NULL: nothing); the last frees it. */
void rpc_acct_put(struct rpc_acct *a);

/* A buffer of len bytes for bulk reply data, from the call's payload area; NULL if too big. */
void *rpc_payload_buf(struct rpc_call *c, size_t len);

/* How much of the reply buffer the header and results may fill: all of it,
 * less RPC_GSS_REPLY_SLACK when the results will be wrapped (c->gss.wrap),
 * which rpc_gss_wrap_reply() takes back for the checksum or wrap token. */
size_t rpc_res_cap(const struct rpc_call *c);

/* The most READ data a reply on this call's connection can carry when its
 * results are wrapped (krb5i, krb5p: inline, RFC 2203 §5.3.2.2, §5.3.2.3),
 * in whole 4 KiB pages; max when they are not wrapped or the transport did
 * not say. For FSINFO's rtmax and NFSv4's maxread under krb5i and krb5p. */
uint32_t rpc_wrapped_read_max(const struct rpc_call *c, uint32_t max);

/*
 * Bulk reply data by reference (TCP): for want bytes, the write end of an
 * empty pipe with room for *room bytes, which the transport drains into its
 * socket with splice (page references: the file's bytes are never copied by
 * the server), or -1 where the transport has none (RPC-over-RDMA writes from
 * registered memory: rpc_payload_buf) or want is under RPC_PAYLOAD_PIPE_MIN
 * (a copy costs fewer system calls than two splices). The handler splices its data in,
 * says how much with rpc_payload_piped(), and encodes the item with
 * rpc_enc_ddp_piped(). One pipe per call; bytes left in it when the call
 * ends unsent are the transport's to throw away.
 */
#define RPC_PAYLOAD_PIPE_MIN (64u * 1024)
int rpc_payload_pipe(struct rpc_call *c, size_t want, size_t *room);
void rpc_payload_piped(struct rpc_call *c, size_t len);

/*
 * Decode an opaque<> item that RFC 8267 lets travel in a Read chunk (WRITE
 * data, SYMLINK path): the length word is decoded by the caller and passed in
 * as len. If a Read chunk sits at this XDR position it supplies the bytes
 * (its length must equal len), else they are taken inline.
 * Returns false if neither is possible (GARBAGE_ARGS).
 */
bool rpc_dec_ddp(struct rpc_call *c, uint32_t len, const uint8_t **data);

/*
 * Encode an opaque<> result item that RFC 8267 lets travel in a Write chunk
 * (READ data, READLINK path): writes the length word, then records the data
 * as a ddp_out segment instead of copying it. TCP sends it with writev from
 * where it lies; RPC-over-RDMA moves it by RDMA Write or copies it inline.
 */
void rpc_enc_ddp(struct rpc_call *c, const void *data, uint32_t len);
/* The same for len bytes the handler put in the call's payload pipe. */
void rpc_enc_ddp_piped(struct rpc_call *c, uint32_t len);

/*
 * Deferral: answer a call later without holding a worker thread (blocking
 * locks, delegation recalls).
 *
 * Worker thread, inside a procedure's execute step: rpc_call_defer(c, cancel,
 * arg), then return RPC_PROC_DEFER. The worker is released; the call keeps
 * its transport context (and its duplicate request cache slot, so a
 * retransmission meanwhile is dropped as in progress).
 *
 * Any thread, later: rpc_call_resume(c, st) with what execute would have
 * returned, the results in c->res_scratch as execute would have left them.
 * The encode step then runs on a worker, and the reply goes out through
 * send_reply on the loop thread, counted in the statistics and kept in the
 * duplicate request cache as for any call. Returns false (and does nothing)
 * if the call was cancelled.
 *
 * If the connection closes while the call is parked, cancel(c, arg) is called
 * once (on a worker thread) and the call is then dropped: no reply, its
 * cache slot forgotten. cancel must forget c; after it returned c must not be
 * touched. rpc_call_resume() and cancel must be serialised by the caller's
 * own lock (resume called with it held, cancel taking it), so a resume either
 * happens before the cancel (which then does not run) or sees it.
 * cancel may be NULL when the caller needs no notification (then the call
 * must not be resumed once its connection may have closed).
 */
void rpc_call_defer(struct rpc_call *c, void (*cancel)(struct rpc_call *c, void *arg), void *arg);
bool rpc_call_resume(struct rpc_call *c, enum rpc_proc_status st);

/*
 * RFC 9289 §4.1: what an AUTH_TLS probe gets (pure; rpc_auth.c). proc: the
 * call's procedure; offer: the connection can switch to TLS now (the
 * transport has TLS configured, the connection is still plain and no probe
 * was accepted on it yet).
 *   RPC_TLS_PROBE_STARTTLS  NULL's reply with verifier AUTH_NONE "STARTTLS"
 *   RPC_TLS_PROBE_PLAIN     NULL's reply with an empty verifier: no TLS here
 *                           (what knfsd answers without TLS)
 *   RPC_TLS_PROBE_BADCRED   AUTH_ERROR, AUTH_BADCRED: AUTH_TLS on anything but NULL
 */
enum rpc_tls_probe { RPC_TLS_PROBE_STARTTLS, RPC_TLS_PROBE_PLAIN, RPC_TLS_PROBE_BADCRED };
enum rpc_tls_probe rpc_tls_probe_decide(uint32_t proc, bool offer);

/* Total reply stream length including ddp_out data and its XDR padding. */
size_t rpc_reply_len(const struct rpc_call *c);

#endif
