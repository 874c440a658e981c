/*
 * rpc_gss.h - the pure protocol pieces of RPCSEC_GSS (RFC 2203): the
 * credential's decoder and encoder, the control-procedure state table, the
 * per-context sequence window and the bounded context table. No GSS-API call
 * here (rpc_gss_krb5.c is the shell around MIT libgssapi_krb5); everything is
 * plain functions over structs, unit-tested in tests/unit/test_rpc_gss.c and
 * fuzzed by fuzz/fuzz_rpc_gss_cred.c.
 *
 * Ownership: struct rpc_gss_cred is plain data (the handle is copied out of
 * the message). The context table owns its slot array (allocated once at
 * rpc_gss_table_init); a slot's mechanism context (mech) belongs to the
 * shell, which the table hands back through its release callback once the
 * last reference is dropped.
 *
 * Context lifecycle (one slot; handle = slot index + generation):
 *
 *   FREE --rpc_gss_ctx_new [INIT]--> ESTABLISHING --rpc_gss_ctx_established--> ESTABLISHED
 *   ESTABLISHING / ESTABLISHED --rpc_gss_ctx_kill [DESTROY, failure, eviction]--> DEAD
 *   DEAD --last rpc_gss_ctx_put--> FREE (release(mech) called, generation bumped)
 */
#ifndef RNFSD_RPC_GSS_H
#define RNFSD_RPC_GSS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "rpc/rpc.h"
#include "rpc/xdr.h"

#define RPC_AUTH_RPCSEC_GSS 6u     /* RFC 2203 §3: flavor number */
#define RPC_GSS_VERS_1 1u          /* RFC 2203 §5 */
#define RPC_GSS_MAXSEQ 0x80000000u /* RFC 2203 §5: const MAXSEQ */
#define RPC_GSS_WINDOW 128u        /* sequence window we offer (knfsd's GSS_SEQ_WIN) */
#define RPC_GSS_HANDLE_LEN 8u      /* handles we issue: slot index, generation */
#define RPC_GSS_HANDLE_MAX 32u     /* longest handle a credential may carry here */
/* Reply room wrapped results need beyond their own bytes: seq_num, the length
 * words, and the checksum (§5.3.2.2) or the wrap token's header, padding and
 * trailer (§5.3.2.3); under 100 bytes with the AES enctypes. */
#define RPC_GSS_REPLY_SLACK 256u

/* RFC 2203 §4: new auth_stat values. */
enum { RPCSEC_GSS_CREDPROBLEM = 13, RPCSEC_GSS_CTXPROBLEM = 14 };

/* RFC 2203 §5: rpc_gss_proc_t, rpc_gss_service_t. */
enum rpc_gss_proc { RPC_GSS_DATA = 0, RPC_GSS_INIT = 1, RPC_GSS_CONTINUE_INIT = 2, RPC_GSS_DESTROY = 3 };
enum rpc_gss_svc { RPC_GSS_SVC_NONE = 1, RPC_GSS_SVC_INTEGRITY = 2, RPC_GSS_SVC_PRIVACY = 3 };

/* RFC 2203 §5: rpc_gss_cred_t, version 1. */
struct rpc_gss_cred {
	uint32_t vers, proc, seq, svc;
	uint32_t handle_len;
	uint8_t handle[RPC_GSS_HANDLE_MAX];
};

/*
 * Decode the body of an RPCSEC_GSS credential (len bytes; RFC 5531 §8.2 bounds
 * it to 400). The body must hold exactly the structure. Returns RPC_AUTH_OK,
 * or RPC_AUTH_BADCRED (truncated, trailing bytes, a handle over
 * RPC_GSS_HANDLE_MAX); version, procedure and service are checked by
 * rpc_gss_next(), not here.
 */
int rpc_gss_cred_decode(const uint8_t *body, uint32_t len, struct rpc_gss_cred *gc);
/* Encode gc as a credential body (for clients and tests). */
void rpc_gss_cred_encode(struct xdr_enc *e, const struct rpc_gss_cred *gc);

/*
 * For an initiator (rpc_gss_clnt.c): e holds a call header that
 * rpc_clnt_call_init() began (xid .. proc, then an AUTH_NONE credential and
 * verifier): the credential becomes RPCSEC_GSS's gc (RFC 2203 §5.3.1, §5: the
 * body is rpc_gss_cred_t) and e is left just after it, where the verifier
 * goes. Returns the header's length, xid to the credential's end: what the
 * DATA verifier signs (§5.3.1); 0 when e is not such a header. Pure.
 */
size_t rpc_gss_call_cred(struct xdr_enc *e, const struct rpc_gss_cred *gc);
/* The seq_num of the credential rpc_gss_call_cred() wrote in e becomes seq (a retransmission,
 * RFC 2203 §5.3.3.1). Pure. */
void rpc_gss_call_set_seq(struct xdr_enc *e, uint32_t seq);
/*
 * RFC 2203 §5.3.3.1: the seq_num of an initiator's next call after *last
 * (0: none sent yet), into *last. false when the context has used up its
 * numbers (MAXSEQ): it must be destroyed and a new one made. Pure.
 */
bool rpc_gss_seq_next(uint32_t *last);

/*
 * RFC 2203 §5.2.3.1: rpc_gss_init_res, the results of INIT and CONTINUE_INIT
 * (the server encodes it, an initiator such as the NFSv4.0 callback client of
 * docs/kerberos.md decodes it). token points into the message decoded.
 */
struct rpc_gss_init_res {
	uint32_t handle_len;
	uint8_t handle[RPC_GSS_HANDLE_MAX];
	uint32_t major, minor;  /* gss_major, gss_minor (GSS-API status codes, RFC 2744) */
	uint32_t window;        /* seq_window */
	const uint8_t *token;   /* gss_token */
	uint32_t token_len;
};
#define RPC_GSS_S_COMPLETE 0u       /* RFC 2744: GSS_S_COMPLETE */
#define RPC_GSS_S_CONTINUE_NEEDED 1u /* RFC 2744: GSS_S_CONTINUE_NEEDED (a supplementary bit) */
/* Encode r (handle_len <= RPC_GSS_HANDLE_MAX) at e. Pure. */
void rpc_gss_init_res_encode(struct xdr_enc *e, const struct rpc_gss_init_res *r);
/*
 * Decode rpc_gss_init_res from d, which must hold exactly it, for an initiator.
 * Returns 0, or -1: truncated or trailing bytes, a handle over
 * RPC_GSS_HANDLE_MAX, a token over max_token; on success or continuation
 * (§5.2.3.1) no handle, or (complete) a zero window. Pure.
 */
int rpc_gss_init_res_decode(struct xdr_dec *d, uint32_t max_token, struct rpc_gss_init_res *r);

/* What the server holds for a credential's handle. */
enum rpc_gss_ctx_state {
	RPC_GSS_CTX_FREE = 0,     /* no such context (unknown, stale or destroyed handle) */
	RPC_GSS_CTX_ESTABLISHING, /* gss_accept_sec_context asked for another token */
	RPC_GSS_CTX_ESTABLISHED,
	RPC_GSS_CTX_DEAD,         /* destroyed or evicted, still referenced */
};

/* What to do with a call (rpc_gss_next). */
enum rpc_gss_action {
	RPC_GSS_ACT_REJECT,   /* MSG_DENIED AUTH_ERROR with *auth_stat */
	RPC_GSS_ACT_INIT,     /* new context from the call's token (NULL procedure) */
	RPC_GSS_ACT_CONTINUE, /* next token for the context being established */
	RPC_GSS_ACT_DATA,     /* verify the header MIC, the window, then run the procedure */
	RPC_GSS_ACT_DESTROY,  /* verify, window, reply, then kill the context */
};

/*
 * The control-flow table (RFC 2203 §5.2, §5.3.3.3, §5.4): from the decoded
 * credential, the state of the context its handle names (FREE when none) and
 * whether the RPC procedure is NULL (0). Pure.
 */
enum rpc_gss_action rpc_gss_next(const struct rpc_gss_cred *gc, enum rpc_gss_ctx_state st,
				 bool null_proc, int *auth_stat);

/* RFC 2203 §5.3.3.1: the sequence window of one context. */
struct rpc_gss_seqwin {
	uint32_t max;  /* highest seq_num accepted */
	bool started;  /* any accepted yet */
	uint64_t bits[RPC_GSS_WINDOW / 64]; /* bit (seq % WINDOW): seq seen, for max-WINDOW < seq <= max */
};
enum rpc_gss_seq_result { RPC_GSS_SEQ_OK, RPC_GSS_SEQ_REPLAY, RPC_GSS_SEQ_OLD };
/* Accept seq (marking it seen) or say why it is silently dropped. Pure. */
enum rpc_gss_seq_result rpc_gss_seq_check(struct rpc_gss_seqwin *w, uint32_t seq);

/* Bytes of a principal's display name a context keeps, its NUL included (longer: not kept). */
#define RPC_GSS_PRINC_MAX 256u

/* One context slot. */
struct rpc_gss_ctx {
	uint32_t gen;          /* the handle's second word; bumped when the slot is freed */
	uint8_t state;         /* enum rpc_gss_ctx_state */
	uint32_t refs;         /* rpc_gss_ctx_get/new references */
	uint64_t client;       /* the peer's key (address hash): the per-client share */
	uint64_t last_used;    /* the table's clock at the last lookup (LRU) */
	struct rpc_gss_seqwin win;
	void *mech;            /* the shell's context (gss_ctx_id_t and friends) */
	struct rpc_cred cred;  /* the principal's mapped identity, once known */
	bool cred_ok;
	char princ[RPC_GSS_PRINC_MAX]; /* with cred: its display name ("user@REALM"), "" if too long */
};

struct rpc_gss_table {
	pthread_mutex_t lock;
	struct rpc_gss_ctx *ctx;  /* cap slots, allocated once */
	uint32_t cap, per_client;
	uint32_t live;            /* slots not FREE */
	uint64_t clock;           /* LRU clock: one tick per new or looked-up context */
	uint64_t evictions;
	void (*release)(void *mech); /* the shell frees a mechanism context (may be NULL) */
};

/* Setup: cap slots (>= 1), at most per_client (>= 1) of them per client key. 0 or -1. */
int rpc_gss_table_init(struct rpc_gss_table *t, uint32_t cap, uint32_t per_client,
		       void (*release)(void *mech));
/* Shutdown (no reference held): releases every mechanism context. */
void rpc_gss_table_release(struct rpc_gss_table *t);

/*
 * A new ESTABLISHING context for client, referenced once, its handle in
 * handle[RPC_GSS_HANDLE_LEN]. When the client already holds its share, its
 * least recently used context is evicted; when the table is full, the least
 * recently used of all (one rate-limited log line naming peer). NULL when
 * every slot is still referenced.
 */
struct rpc_gss_ctx *rpc_gss_ctx_new(struct rpc_gss_table *t, uint64_t client, const char *peer,
				    uint8_t handle[RPC_GSS_HANDLE_LEN]);
/* The live context a handle names, referenced, or NULL (and *st = FREE). */
struct rpc_gss_ctx *rpc_gss_ctx_get(struct rpc_gss_table *t, const uint8_t *handle, uint32_t len,
				    enum rpc_gss_ctx_state *st);
void rpc_gss_ctx_put(struct rpc_gss_table *t, struct rpc_gss_ctx *x);
void rpc_gss_ctx_established(struct rpc_gss_table *t, struct rpc_gss_ctx *x);
/* No new lookup finds it; freed at its last put. */
void rpc_gss_ctx_kill(struct rpc_gss_table *t, struct rpc_gss_ctx *x);
/* rpc_gss_seq_check under the table's lock. */
enum rpc_gss_seq_result rpc_gss_ctx_seq(struct rpc_gss_table *t, struct rpc_gss_ctx *x, uint32_t seq);

/* One principal of the table and its established contexts (rpc_gss_table_principals). */
struct rpc_gss_princ_count {
	char princ[RPC_GSS_PRINC_MAX]; /* "" when the name was too long to keep */
	uint32_t contexts;
};
/*
 * The established contexts' principals, each once with its count, sorted by
 * name, into *out (malloc'ed, the caller frees; NULL when none or out of
 * memory). Copies the names under the lock, sorts after. The number of
 * entries. For the stats request only (verbose), never per call.
 */
size_t rpc_gss_table_principals(struct rpc_gss_table *t, struct rpc_gss_princ_count **out);

/* What a principal's display name is (rpc_gss_principal). */
enum rpc_gss_princ {
	RPC_GSS_PRINC_FOREIGN, /* another realm, or not a name we map: anonymous */
	RPC_GSS_PRINC_USER,    /* user@DEFAULT_REALM: local holds "user" */
	RPC_GSS_PRINC_HOST,    /* service/host@DEFAULT_REALM (nfs/, host/, root/): root or anonymous */
};
/*
 * Classify the principal name[0 .. len) (no NUL needed) against the
 * default realm, as nfs-utils maps them (a user through the name service
 * by its local part, a machine principal by policy). local receives the
 * user's local part, NUL-terminated. Pure.
 */
enum rpc_gss_princ rpc_gss_principal(const char *name, size_t len, const char *default_realm,
				     char *local, size_t local_cap);

#endif
