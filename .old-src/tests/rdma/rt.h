/*
 * rt.h - shared state, result reporting and call helpers of the RPC-over-RDMA
 * test requester (tests/rdma/). The requester connects to a server the way
 * the Linux client would, then sends what a kernel client never does and
 * checks each answer against the RFCs.
 *
 * Output, one line per verdict, for scripts to grep:
 *   @@ PASS name [saw: what the server did]
 *   @@ FAIL name: expected X got Y
 *   @@ SKIP name: why
 *   @@ INFO name: detail
 * With --xfail (a reference server's known deviations from the RFCs), a
 * listed FAIL prints as "@@ XFAIL" and a listed PASS as "@@ XPASS" (counted
 * as a failure, so the list stays exact).
 *
 * Files: rt_xdr.h (XDR), rt_rpcrdma.[ch] (transport header), rt_rpc.[ch]
 * (RPC, NFSv3, MOUNT), rt_conn.[ch] (verbs), rt_mount.[ch] (MOUNT over TCP),
 * rt_core.c (this header's helpers), rt_scen_*.c (scenarios), rt_main.c.
 */
#ifndef RT_H
#define RT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "tests/rdma/rt_conn.h"
#include "tests/rdma/rt_rpc.h"
#include "tests/rdma/rt_rpcrdma.h"

#define RT_REQ_CREDITS 128 /* rdma_credit we ask for, as the Linux client does */

struct rt_ctx {
	struct sockaddr_in dst;   /* the server's RPC-over-RDMA address */
	const char *label;        /* server name for the report ("knfsd", "rnfsd") */
	int timeout_ms;           /* how long an answer may take */
	int grace_ms;             /* extra wait for a late answer to a message it may drop */
	uint32_t xid;             /* next XID */
	const char *xfail;        /* comma list: verdicts expected to FAIL (known deviations) */

	/* File handles (MOUNT + LOOKUP); fh_why says why they are missing. */
	bool have_fh;
	char fh_why[320];
	struct rt_fh root, file, wfile, dir;
	uint64_t file_size;

	/* What the server told us. */
	uint32_t credits;         /* from the first NULL reply */
	bool vers_known;
	uint32_t vers_low, vers_high;

	unsigned npass, nfail, nskip, nxfail;
};

/* Verdicts. note/expect/got are printf formats. */
void rt_pass(struct rt_ctx *t, const char *name, const char *note, ...)
	__attribute__((format(printf, 3, 4)));
void rt_fail(struct rt_ctx *t, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void rt_skip(struct rt_ctx *t, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void rt_info(struct rt_ctx *t, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Is name an element of the comma-separated list? */
bool rt_in_list(const char *list, const char *name);

static inline uint32_t rt_xid(struct rt_ctx *t)
{
	return t->xid++;
}

/* Open a connection (o NULL: defaults). On failure reports FAIL name and returns -1. */
int rt_open(struct rt_ctx *t, struct rt_conn *c, const struct rt_conn_opts *o, const char *name);

/* A transport header with the usual fields for a v1 call. */
void rt_hdr_call(struct rt_hdr *h, uint32_t xid, uint32_t proc);

/* Encode header h followed by payload (may be NULL/0) into buf; returns length. */
size_t rt_build(const struct rt_hdr *h, const void *payload, size_t plen, uint8_t *buf, size_t cap);

/* The RPC bytes of an NFSv3 NULL call. */
size_t rt_null_call(uint8_t *buf, size_t cap, uint32_t xid);

/* A whole RDMA_MSG (rdma_vers vers) carrying an NFSv3 NULL with a new XID; returns its length. */
size_t rt_null_msg(struct rt_ctx *t, uint32_t vers, uint8_t *msg, size_t cap, uint32_t *xid);

/*
 * Send an NFSv3 NULL as RDMA_MSG (rdma_vers vers) and check the answer:
 * RDMA_MSG, same XID, credits >= 1, RPC SUCCESS. Returns 0, or -1 with why.
 * *credits (if not NULL) receives the grant.
 */
int rt_null_check(struct rt_ctx *t, struct rt_conn *c, uint32_t vers, uint32_t *credits,
		  char *why, size_t n);

/* One RPC exchange with chunks. */
struct rt_xchg {
	/* in */
	uint32_t proc;              /* RT_RDMA_MSG or RT_RDMA_NOMSG */
	const uint8_t *rpc;         /* the RPC call (sent inline for RDMA_MSG) */
	size_t rpc_len;
	uint32_t nreads;
	struct rt_read_seg reads[RT_MAX_SEGS];
	uint32_t nwrites;
	struct rt_chunk writes[2];
	bool has_reply;
	struct rt_chunk reply;
	const uint8_t *reply_buf;   /* where our Reply chunk points (one contiguous buffer) */
	/* out */
	struct rt_msg *msg;         /* the raw answer; rt_xchg_release() frees it */
	struct rt_hdr h;            /* its transport header */
	const uint8_t *body;        /* the RPC reply: inline or in the Reply chunk */
	size_t body_len;
	struct rt_rpc_reply rr;
};

/*
 * Send x and wait for its answer. Returns 0 when an RPC reply arrived (x->rr
 * decoded, its results in x->rr.res), 1 when an RDMA_ERROR arrived (x->h),
 * -1 on timeout, connection loss or an answer that breaks RFC 8166 (why).
 */
int rt_xchg_run(struct rt_ctx *t, struct rt_conn *c, struct rt_xchg *x, char *why, size_t n);
void rt_xchg_release(struct rt_xchg *x);
/* RDMA_NOMSG long call (RFC 8166 §3.5.3): copy rpc into the data area, one position-zero Read chunk. */
int rt_xchg_long_call(struct rt_conn *c, struct rt_xchg *x, const uint8_t *rpc, size_t len);

/* What came back for a message the server should refuse or drop. */
enum rt_outcome {
	RT_OUT_NONE = 1 << 0,      /* nothing: dropped */
	RT_OUT_ERR_CHUNK = 1 << 1,
	RT_OUT_ERR_VERS = 1 << 2,
	RT_OUT_ERR_OTHER = 1 << 3, /* RDMA_ERROR with another code */
	RT_OUT_GARBAGE = 1 << 4,   /* RPC reply GARBAGE_ARGS */
	RT_OUT_RPC = 1 << 5,       /* some other RPC reply */
	RT_OUT_MALFORMED = 1 << 6, /* an answer that does not decode */
	RT_OUT_LOST = 1 << 7,      /* the connection went away */
};

struct rt_probe {
	enum rt_outcome out;
	struct rt_hdr h;           /* header of the answer, if any */
	uint32_t rpc_stat;         /* RT_OUT_RPC / GARBAGE: accept_stat */
	bool xid_ok;               /* answer carried the probe's XID */
	bool alive;                /* a NULL sent afterwards was answered */
	char detail[200];          /* what exactly came back */
	char alive_why[100];       /* connection state when the NULL went unanswered */
	char violation[160];       /* rt_conn_violation() at the end, "" if none */
};

/*
 * Send msg (len bytes; its XID is xid unless xid_known is false), then an
 * NFSv3 NULL. Classify any answer to msg and whether the NULL was answered.
 */
void rt_probe_send(struct rt_ctx *t, struct rt_conn *c, const void *msg, size_t len,
		   uint32_t xid, bool xid_known, struct rt_probe *p);

/*
 * Report a probe: PASS when p->out is in allowed, any answer carried the
 * right XID and the connection still answered a NULL; FAIL otherwise.
 * rfc names the rule ("RFC 8166 §4.5.2").
 */
void rt_probe_verdict(struct rt_ctx *t, const char *name, const struct rt_probe *p,
		      unsigned allowed, const char *rfc);
const char *rt_outcome_names(unsigned mask, char *buf, size_t n);

/* Scenarios (rt_scen_*.c). */
void rt_scen_null(struct rt_ctx *t);
void rt_scen_privdata(struct rt_ctx *t);
void rt_scen_err_vers(struct rt_ctx *t);
void rt_scen_v2(struct rt_ctx *t);
void rt_scen_bad_disc(struct rt_ctx *t);
void rt_scen_seg_overflow(struct rt_ctx *t);
void rt_scen_truncated(struct rt_ctx *t);
void rt_scen_read_pos(struct rt_ctx *t);
void rt_scen_read_len(struct rt_ctx *t);
void rt_scen_bad_msg(struct rt_ctx *t);
void rt_scen_procs(struct rt_ctx *t);
void rt_scen_long_call(struct rt_ctx *t);
void rt_scen_read_write_chunk(struct rt_ctx *t);
void rt_scen_write_read_chunk(struct rt_ctx *t);
void rt_scen_undersized(struct rt_ctx *t);
void rt_scen_drc(struct rt_ctx *t);
void rt_scen_credits(struct rt_ctx *t);
void rt_scen_disconnect(struct rt_ctx *t);

#endif
