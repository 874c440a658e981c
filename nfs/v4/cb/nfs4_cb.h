/*
 * nfs4_cb.h - NFSv4 callback paths at run time: the NFSv4.1 back channel
 * (RFC 8881 §2.10.3.1: calls on a connection the client bound to its
 * session, rpc_clnt_attach(); over TCP transport/tcp_bc.c, over RDMA
 * transport/rdma_backchannel.c, RFC 8167) and the NFSv4.0 callback service
 * (RFC 7530 §3.3.2, §16.33: a new TCP connection to SETCLIENTID's
 * cb_location, transport/tcp_clnt.c). Each path is probed once bound (4.1:
 * CB_NULL, then a CB_COMPOUND with CB_SEQUENCE on the back channel's slot 0;
 * 4.0: CB_NULL) and its state (nfs4_cb_state.h) decides what SEQUENCE
 * reports.
 *
 * Threads: the operations (workers) record what to do under the module's
 * lock and wake the loop thread, which makes every call; nothing here waits
 * on the network, so a dead callback path never holds a worker or the fore
 * channel. One entry per client id, in a fixed table.
 */
#ifndef RNFSD_NFS4_CB_H
#define RNFSD_NFS4_CB_H

#include <stdbool.h>
#include <stdint.h>

#include "nfs/v4/cb/nfs4_cb_state.h"
#include "nfs/v4/cb/nfs4_cb_xdr.h"
#include "nfs/v4/state/nfs4_clients.h"
#include "rpc/rpc.h"

struct loop;
struct rpc_conn;

#define NFS4_CB_CLIENTS NFS4_STATE_MAX_CLIENTS /* one callback path per client record */
#define NFS4_CB_QUEUE 8u /* operations queued per client (nfs4_cb_send()) */

/* Loop thread, at start (before the workers) and at shutdown. 0 or -1 (logged). */
int nfs4_cb_start(struct loop *loop);
void nfs4_cb_stop(void);

/* ---- any thread (the operations) ---- */

/* CREATE_SESSION (RFC 8881 §18.36): the client's callback program and
 * security for its back channel, and the minor version (1, 2) of the
 * COMPOUND that made the session. */
void nfs4_cb_session(uint64_t clientid, const uint8_t sid[NFS4_SESSIONID_SIZE], uint32_t minor, uint32_t prog,
		     const struct nfs4_cb_sec *sec);
/* BACKCHANNEL_CTL (RFC 8881 §18.33): new program and security; the path is probed again. */
void nfs4_cb_ctl(uint64_t clientid, uint32_t prog, const struct nfs4_cb_sec *sec);
/*
 * Make conn the back channel of the client's session sid (CREATE_SESSION
 * with CONN_BACK_CHAN, BIND_CONN_TO_SESSION). true: it is (a reference on
 * conn is held until the loop attaches it); false: it cannot be (callbacks
 * not running, a transport that sends no calls, no usable security, no
 * entry): the caller must not tell the client it has a back channel.
 */
bool nfs4_cb_bind41(uint64_t clientid, const uint8_t sid[NFS4_SESSIONID_SIZE], struct rpc_conn *conn);
/* DESTROY_SESSION: a back channel bound to sid goes (state NONE). */
void nfs4_cb_session_gone(const uint8_t sid[NFS4_SESSIONID_SIZE]);
/* DESTROY_CLIENTID, a 4.0 client record replaced: the entry goes. */
void nfs4_cb_client_gone(uint64_t clientid);
/*
 * RFC 7530 §3.3.3: a 4.0 client that did SETCLIENTID under RPCSEC_GSS gets
 * its callbacks under RPCSEC_GSS with the same service, from the server's
 * principal to the client's: the context is initiated as the name the
 * client's own context targeted (its acceptor: the Linux client checks the
 * callback's principal against it, fs/nfs/callback.c
 * check_gss_callback_principal()) with the key of [rnfsd] keytab.
 */
struct nfs4_cb_gss40 {
	uint32_t svc;                 /* enum rpc_gss_svc; 0: AUTH_SYS as root, as for AUTH_SYS clients */
	char target[256];             /* the SETCLIENTID caller's principal ("nfs/client@REALM"); "": unknown */
	char initiator[256];          /* its context's acceptor ("nfs/server@REALM"); "": unknown */
};
/* SETCLIENTID_CONFIRM (RFC 7530 §16.34): probe cb with CB_NULL, under gss (NULL: AUTH_SYS). */
void nfs4_cb_probe40(uint64_t clientid, const struct nfs4_cb_info *cb, const struct nfs4_cb_gss40 *gss);
/*
 * Queue op for the client's callback path: 4.1, CB_COMPOUND{CB_SEQUENCE,
 * op} on the back channel's slot 0 (one call at a time); 4.0,
 * CB_COMPOUND{op} with callback_ident. struct nfs4_cb_op (enum
 * nfs4_cb_opkind, the arguments per kind: RFC 8881 §20.2.1 CB_RECALL4args,
 * §20.6.1 CB_RECALL_ANY4args, §20.11.1 CB_NOTIFY_LOCK4args, §20.1.1
 * CB_GETATTR4args, RFC 7862 §16.1.1 CB_OFFLOAD4args) is in nfs4_cb_xdr.h;
 * it is copied. A CB_GETATTR's answer goes to its args' out before done.
 * done(arg, status) runs later on the loop thread, once: status is the
 * operation's nfsstat4 from the client, or -1 when the path is down or
 * goes, the call failed or timed out (a failed call marks the path DOWN:
 * SEQ4_STATUS_CB_PATH_DOWN follows). Operations queued while the path is
 * being probed go once it is up. false: no usable path (none, or DOWN), or
 * NFS4_CB_QUEUE operations already wait; done is not called.
 * Any thread; done may call nfs4_cb_send() again.
 */
bool nfs4_cb_send(uint64_t clientid, const struct nfs4_cb_op *op, void (*done)(void *arg, int32_t status), void *arg);
/* CB_NOTIFYs (RFC 8881 §20.4) nfs4_cb_send() took since start, whoever queued them (the stats). */
uint64_t nfs4_cb_notify_sent(void);
/* SEQUENCE's sr_status_flags for the client (RFC 8881 §18.46.3); 0 for a client without an entry. */
uint32_t nfs4_cb_seq_flags_for(uint64_t clientid);

/* Statistics: one client's callback path. */
struct nfs4_cb_stat {
	uint64_t clientid;
	uint32_t minor; /* 0: NFSv4.0 callback service; 1, 2: a 4.1 / 4.2 session's back channel */
	enum nfs4_cb_state state;
	const char *xprt; /* "tcp", "rdma", or "-" (none bound) */
	uint64_t sent, ok, failed;
	const char *flavor; /* the callbacks' credential: "sys", "none", "krb5", "krb5i", "krb5p", or "-" (none usable) */
};
/* Any thread: fn for each entry (under the module's lock: fn must not call back here). */
void nfs4_cb_foreach(void (*fn)(const struct nfs4_cb_stat *s, void *arg), void *arg);
/* Any thread: the entry of clientid (false if none). */
bool nfs4_cb_stat_of(uint64_t clientid, struct nfs4_cb_stat *out);
/* Any thread: 4.0 callback paths' RPCSEC_GSS contexts allocated (made, being made, or let go of while a
 * step is on a worker): the stats' nfs4_bounds.callback_gss_contexts. */
unsigned nfs4_cb_gss_contexts(void);

#endif
