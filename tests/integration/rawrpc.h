/*
 * rawrpc.h - a deliberately small ONC RPC client for the integration tests
 * that need control libnfs does not give: exact XIDs (retransmissions for
 * the duplicate request cache), malformed or oversized records, unknown
 * programs, versions and procedures, truncated arguments.
 *
 * RFC 5531 §9 call header with AUTH_SYS (§A) credentials, RFC 5531 §11
 * record marking; XDR by hand into a growable buffer. One TCP connection
 * per struct raw_conn; nothing is shared between connections.
 */
#ifndef RNFSD_TESTS_RAWRPC_H
#define RNFSD_TESTS_RAWRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* An XDR encode buffer. */
struct xb {
	uint8_t *p;
	size_t len, cap;
};

void xb_init(struct xb *b);
void xb_free(struct xb *b);
void xb_u32(struct xb *b, uint32_t v);
void xb_u64(struct xb *b, uint64_t v);
void xb_opaque(struct xb *b, const void *data, uint32_t len); /* length word + data + pad */
void xb_string(struct xb *b, const char *s);
void xb_raw(struct xb *b, const void *data, size_t len); /* no length word, no padding */

/* RFC 5531 §9 call header with AUTH_SYS credentials and an AUTH_NONE verifier. */
void xb_call_header(struct xb *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
		    uint32_t uid, uint32_t gid);

/* The same header with an AUTH_NONE credential (RFC 5531 §10.1, empty body). */
void xb_call_header_none(struct xb *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc);

/* An XDR decode cursor: every read checks the bounds; failures latch. */
struct xd {
	const uint8_t *p;
	size_t len, pos;
	bool bad;
};

void xd_init(struct xd *d, const void *p, size_t len);
uint32_t xd_u32(struct xd *d);
uint64_t xd_u64(struct xd *d);
/* Returns a pointer to len bytes (skipping padding), or NULL. */
const uint8_t *xd_opaque(struct xd *d, uint32_t *len, uint32_t max);
void xd_skip(struct xd *d, size_t n);

/* A byte layer beneath the record marking (RPC-with-TLS: tls_client.h): when a
 * connection has one, its bytes go through it instead of the socket. */
struct raw_io {
	ssize_t (*send)(void *arg, const void *p, size_t n); /* bytes sent, or -1 */
	ssize_t (*recv)(void *arg, void *p, size_t n);       /* bytes, 0 at EOF, -1 */
	bool (*pending)(void *arg);  /* bytes wait in the layer (the socket may have none) */
};

/* A connection to 127.0.0.1:port. */
struct raw_conn {
	int fd;
	bool udp; /* a connected UDP socket: a record is one datagram, no marking */
	const struct raw_io *io; /* NULL: the socket itself (set by the raw_connect* functions) */
	void *io_arg;
};

int raw_connect(struct raw_conn *c, uint16_t port);
/* From source address src (an IPv4 literal such as "127.0.0.2": another loopback "host"). */
int raw_connect_src(struct raw_conn *c, uint16_t port, const char *src);
/* From a privileged source port (512..1023; needs root). */
int raw_connect_reserved(struct raw_conn *c, uint16_t port);
/* To [::1]:port. */
int raw_connect6(struct raw_conn *c, uint16_t port);
/* A connected UDP socket to 127.0.0.1:port (reserved: from a port below 1024). */
int raw_udp_connect(struct raw_conn *c, uint16_t port, bool reserved);
void raw_close(struct raw_conn *c);
/* One record marking fragment (RFC 5531 §11). 0 or -1. */
int raw_send_fragment(struct raw_conn *c, const void *data, size_t len, bool last);
int raw_send_record(struct raw_conn *c, const void *data, size_t len);
/* Raw bytes on the socket, no framing. */
int raw_send_bytes(struct raw_conn *c, const void *data, size_t len);

enum raw_recv_result {
	RAW_RECV_OK = 0,
	RAW_RECV_CLOSED = -1,  /* EOF or reset */
	RAW_RECV_TIMEOUT = -2,
	RAW_RECV_ERROR = -3,   /* bad framing from the server */
};

/* One complete record (all fragments) into *buf (malloc'ed, caller frees). timeout_ms bounds
 * the wait for the record to begin; one begun is read whole (RAW_RECORD_FINISH_MS more at
 * least), so a timeout never leaves the stream inside a record. */
#define RAW_RECORD_FINISH_MS 10000
enum raw_recv_result raw_recv_record(struct raw_conn *c, uint8_t **buf, size_t *len, int timeout_ms);

/* A decoded reply header (RFC 5531 §9). */
struct raw_reply {
	uint32_t xid;
	uint32_t msg_type;     /* 1 = REPLY */
	uint32_t reply_stat;   /* 0 accepted, 1 denied */
	uint32_t accept_stat;  /* if accepted */
	uint32_t reject_stat;  /* if denied: 0 RPC_MISMATCH, 1 AUTH_ERROR */
	uint32_t auth_stat;    /* if AUTH_ERROR */
	uint32_t low, high;    /* PROG_MISMATCH or RPC_MISMATCH */
	uint32_t verf_flavor;  /* if accepted: the reply verifier (RPCSEC_GSS: a MIC) */
	const uint8_t *verf;   /* inside buf */
	uint32_t verf_len;
	struct xd body;        /* results, after the accept_stat */
	uint8_t *buf;          /* owned: free with raw_reply_free */
};

/* Receive one record and decode its header. RAW_RECV_ERROR if it does not parse. */
enum raw_recv_result raw_recv_reply(struct raw_conn *c, struct raw_reply *r, int timeout_ms);
/* Decode a received record buf (taken: freed by raw_reply_free) as a reply into r. */
enum raw_recv_result raw_decode_reply(struct raw_reply *r, uint8_t *buf, size_t len);
void raw_reply_free(struct raw_reply *r);

/* Send a call (header + args, AUTH_SYS uid/gid 0) as one record and receive the reply. */
enum raw_recv_result raw_call(struct raw_conn *c, uint32_t xid, uint32_t prog, uint32_t vers,
			      uint32_t proc, const void *args, size_t args_len, struct raw_reply *r);

#define RAW_NFS_PROG 100003u
#define RAW_MOUNT_PROG 100005u

/* Same with the caller's AUTH_SYS uid and gid. */
enum raw_recv_result raw_call_as(struct raw_conn *c, uint32_t xid, uint32_t prog, uint32_t vers,
				 uint32_t proc, uint32_t uid, uint32_t gid, const void *args,
				 size_t args_len, struct raw_reply *r);

/* Same with an AUTH_NONE credential. */
enum raw_recv_result raw_call_none(struct raw_conn *c, uint32_t xid, uint32_t prog, uint32_t vers,
				   uint32_t proc, const void *args, size_t args_len, struct raw_reply *r);

/* NLM4 TEST (proc 1) or LOCK (proc 2: non-blocking, no reclaim, state 1), exclusive, of
 * [off, off + len) of the file fh by caller_name host (owner "oh@host", svid): the nlm4_stats, or -1. */
int raw_nlm4_lock(struct raw_conn *c, uint32_t xid, uint32_t proc, const uint8_t *fh, uint32_t fh_len,
		  const char *host, int32_t svid, uint64_t off, uint64_t len);
/* MOUNT v3 MNT over a raw connection: returns mountstat3 (or -1), handle into fh/fh_len. */
int raw_mnt(struct raw_conn *c, uint32_t xid, const char *path, uint8_t *fh, uint32_t *fh_len);
/* NFSv3 LOOKUP of name in directory dir (a 64-byte handle at most): nfsstat3 (or -1), handle into fh/fh_len. */
int raw_lookup3(struct raw_conn *c, uint32_t xid, const uint8_t *dir, uint32_t dir_len, const char *name,
		uint8_t *fh, uint32_t *fh_len);

#endif
