/*
 * nfs4_cb_state.h - an NFSv4 client's callback path as plain functions
 * (pure: no locks, no sockets; nfs4_cb.c calls them under its lock): the
 * path's state, the probe that decides it, the back channel's one slot
 * (RFC 8881 §2.10.6.1 sequencing on the back channel: CB_SEQUENCE), what
 * SEQUENCE reports (RFC 8881 §18.46.3 sr_status_flags), and the counters.
 *
 *   NONE --bound (4.1: CONN_BACK_CHAN, BIND_CONN_TO_SESSION; 4.0:
 *          SETCLIENTID_CONFIRM with a usable cb_location)--> PROBING
 *   PROBING --probe answered--> UP      PROBING --probe failed--> DOWN
 *   UP --a callback failed, the connection closed--> DOWN
 *   UP/DOWN --bound again (a new connection)--> PROBING
 *   any --the session's back channel unbound (DESTROY_SESSION)--> NONE
 *
 * nfs4_cb_chan_*() make the transitions; a debug build asserts the state
 * each expects.
 */
#ifndef RNFSD_NFS4_CB_STATE_H
#define RNFSD_NFS4_CB_STATE_H

#include <stdbool.h>
#include <stdint.h>

enum nfs4_cb_state {
	NFS4_CB_NONE,    /* no callback path was given (or it was taken away) */
	NFS4_CB_PROBING, /* bound; the probe has not answered yet */
	NFS4_CB_UP,      /* the probe (and every callback since) was answered */
	NFS4_CB_DOWN,    /* a probe or callback failed, or the connection went */
};

/* RFC 8881 §18.46.2 sr_status_flags this module sets. */
#define SEQ4_STATUS_CB_PATH_DOWN 0x00000001u
#define SEQ4_STATUS_CB_PATH_DOWN_SESSION 0x00000200u

struct nfs4_cb_chan {
	enum nfs4_cb_state state;
	/* The back channel's slot 0 (4.1): the seqid of the last CB_SEQUENCE
	 * the client answered (0: none yet, the first one sends 1). */
	uint32_t slot_seqid;
	bool slot_busy;
	uint64_t sent, ok, failed; /* callbacks (probes included) */
};

void nfs4_cb_chan_init(struct nfs4_cb_chan *c);
/* A (new) path was bound: probe it. */
void nfs4_cb_chan_bound(struct nfs4_cb_chan *c);
/* The path was taken away (its session destroyed). */
void nfs4_cb_chan_unbound(struct nfs4_cb_chan *c);
/* A callback (or probe) goes out: counted. */
void nfs4_cb_chan_sent(struct nfs4_cb_chan *c);
/* It finished: ok (answered as expected) or not. A probe's outcome, or any
 * callback's failure, sets UP or DOWN. */
void nfs4_cb_chan_done(struct nfs4_cb_chan *c, bool ok);
/* A step of a probe that goes on (4.1: CB_NULL before CB_SEQUENCE) was
 * answered: counted, the state is decided by the last step. */
void nfs4_cb_chan_answered(struct nfs4_cb_chan *c);
/* The connection carrying the path closed. */
void nfs4_cb_chan_lost(struct nfs4_cb_chan *c);

/*
 * Slot 0 of the back channel (RFC 8881 §20.9.3, §2.10.6.1): take it for a
 * CB_SEQUENCE; *seqid is the one to send (the last answered one + 1).
 * false: the slot is busy (one callback at a time).
 */
bool nfs4_cb_slot_take(struct nfs4_cb_chan *c, uint32_t *seqid);
/*
 * The CB_SEQUENCE that took the slot finished. answered: the client's reply
 * decoded; status its csr_status; seqid/slotid what it echoed. The slot's
 * seqid moves on for an answered NFS4_OK (the client processed it,
 * §2.10.6.1); otherwise the next CB_SEQUENCE reuses it. true when the
 * reply is the one expected (NFS4_OK echoing seqid and slot 0).
 */
bool nfs4_cb_slot_release(struct nfs4_cb_chan *c, uint32_t sent_seqid, bool answered, uint32_t status,
			  uint32_t seqid, uint32_t slotid);

/* RFC 8881 §18.46.3: the flags SEQUENCE reports for a client in state st
 * (nothing while probing: the outcome is not known yet). */
uint32_t nfs4_cb_seq_flags(enum nfs4_cb_state st);

const char *nfs4_cb_state_name(enum nfs4_cb_state st);
/* The callbacks' credential for the stats: usable, the RPC flavor (RPC_AUTH_SYS,
 * RPC_AUTH_NONE) or, gss_svc not 0, RPCSEC_GSS with that service (RFC 2203 §5):
 * "sys", "none", "krb5", "krb5i", "krb5p", or "-". */
const char *nfs4_cb_flavor_name(bool usable, uint32_t flavor, uint32_t gss_svc);

#endif
