/*
 * nfs4_ga_wait.h - the table of workers waiting for a CB_GETATTR's answer
 * (RFC 8881 §10.4.3, §20.1; user: nfs/v4/ops/nfs4_deleg_getattr.c) as a pure
 * module: the caller locks, waits and signals; this only keeps the slots.
 *
 * A slot is the callback's argument and its answer's destination, so it
 * stays taken until the callback's done() has run, even when its worker
 * stopped waiting. Its life:
 *
 *   free --take--> waiting --done--> answered --finish--> free
 *                     |                  (the worker reads the answer)
 *                     +--finish (timed out)--> abandoned --done--> free
 *                     +--put (the call was never sent)--> free
 *
 * Bounds: NFS4_GA_WAITERS slots; take answers NULL when all are taken (the
 * caller treats it as an unanswered call: recall and NFS4ERR_DELAY).
 */
#ifndef RNFSD_NFS4_GA_WAIT_H
#define RNFSD_NFS4_GA_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "nfs/v4/cb/nfs4_cb_xdr.h"

#define NFS4_GA_WAITERS 64u

struct nfs4_ga_wait {
	bool used;
	bool answered;  /* done() ran: status is the holder's */
	bool abandoned; /* its worker gave up waiting: done() frees the slot */
	int32_t status; /* the holder's nfsstat4, or -1 (no answer: path down, call failed) */
	struct nfs4_cb_getattr_res res; /* written by the loop thread before done() */
};

struct nfs4_ga_tab {
	struct nfs4_ga_wait w[NFS4_GA_WAITERS];
	unsigned used; /* slots taken (waiting, answered or abandoned) */
};

/* A free slot, zeroed and taken; NULL when all NFS4_GA_WAITERS are taken. */
struct nfs4_ga_wait *nfs4_ga_take(struct nfs4_ga_tab *t);
/* The call was not sent (done() will not run): the slot is free again. */
void nfs4_ga_put(struct nfs4_ga_tab *t, struct nfs4_ga_wait *w);
/* done(status): true when its worker still waits (wake it), false when the
 * worker had abandoned the slot (now free). */
bool nfs4_ga_done(struct nfs4_ga_tab *t, struct nfs4_ga_wait *w, int32_t status);
/* The worker stops waiting. Answered: the slot is free, true, *ok (the holder
 * answered NFS4_OK) and *out (its answer). Not answered (timed out): the slot
 * is abandoned until done() runs, false. */
bool nfs4_ga_finish(struct nfs4_ga_tab *t, struct nfs4_ga_wait *w, bool *ok, struct nfs4_cb_getattr_res *out);
/* Slots taken. */
unsigned nfs4_ga_count(const struct nfs4_ga_tab *t);

#endif
