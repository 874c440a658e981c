/*
 * nfs4_recovery.h - NFSv4 restart recovery (RFC 8881 §8.4.2-§8.4.3, RFC 7530
 * §9.6.2-§9.6.3): the stable client records and the NFSv4 term of the
 * shared grace clock (core/grace.h).
 *
 * A client is recorded (by its co_ownerid, or the 4.0 nfs_client_id4 id
 * string) when it is confirmed: NFSv4.1 at its first successful
 * CREATE_SESSION, NFSv4.0 at SETCLIENTID_CONFIRM (the client table's stable
 * hook, nfs4_client_stable()); its record goes when it is destroyed or its lease
 * expires. At start the previous boot's records are loaded; if there are
 * any, the NFSv4 grace term runs for [nfsv4] grace-time seconds, ended early
 * when every one of them sent RECLAIM_COMPLETE. No previous clients: no
 * NFSv4 grace at all (NLM's [rnfsd] grace-period may still hold the clock).
 * When the term ends, previous clients that never came back are dropped.
 *
 * The pure part (struct nfs4_recovery, time injected in milliseconds) is
 * what the unit tests drive; the persistence is a small append-only file,
 * state_dir/nfs4-clients:
 *   "RN4CLI01" then records: op ('A' add, 'D' delete), u16 length (big
 *   endian, 1..NFS4_REC_ID_MAX), the id bytes.
 * Each record is written with one write(2) and fdatasync'd before the call
 * returns (deletions: before the state module lets its lock go, one
 * fdatasync for all the clients it forgot meanwhile); a torn last record is ignored at load. At start, and whenever the
 * file passes NFS4_REC_FILE_MAX bytes, it is rewritten (temporary file,
 * fsync, rename, fsync of the directory) with one 'A' per live record, so
 * its size stays bounded by NFS4_REC_MAX records. Every file access goes
 * through core/statefile.h.
 *
 * Size: twice [nfsv4] max-clients (nfs4_rec_set_max()): every client of this
 * boot (at most max-clients are confirmed at once) and as many of the
 * previous boot's (more are dropped at load, logged). A client whose record
 * cannot be written (the table full, the file not writable) is not confirmed
 * (nfs4_rec_confirm() fails; the state module answers NOSPC / RESOURCE), so
 * every client that can hold state can reclaim it after a restart.
 *
 * Locking: one mutex per struct nfs4_recovery; file writes happen under it
 * (records change only at confirmation, destruction and expiry).
 */
#ifndef RNFSD_NFS4_RECOVERY_H
#define RNFSD_NFS4_RECOVERY_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/grace.h"
#include "core/statefile.h"

#define NFS4_REC_MAX 8192u        /* records: 2 x NFS4_STATE_MAX_CLIENTS (this boot's and the previous) */
#define NFS4_REC_ID_MAX 1024u     /* RFC 8881 §18.35.1, RFC 7530 §16.33.1: opaque<NFS4_OPAQUE_LIMIT> */
#define NFS4_REC_FILE "nfs4-clients"
#define NFS4_REC_FILE_MAX (4u << 20) /* rewritten beyond this */
#define NFS4_REC_MAGIC "RN4CLI01"
#define NFS4_REC_GRACE_DEFAULT 90u
#define NFS4_REC_LEASE_DEFAULT 90u

/* What a caller asks the grace period about (nfs4_grace_check()). */
enum nfs4_grace_op {
	NFS4_GRACE_OPEN,    /* OPEN: reclaim = CLAIM_PREVIOUS (or CLAIM_DELEG_PREV*) */
	NFS4_GRACE_LOCK,    /* LOCK: reclaim = locker's reclaim flag */
	NFS4_GRACE_LOCKT,   /* LOCKT (never a reclaim) */
	NFS4_GRACE_SETATTR, /* a SETATTR that conflicts with reclaimable state (size, mode bits for mandatory locks) */
	NFS4_GRACE_REMOVE,  /* REMOVE of an object (state could be reclaimed on it) */
	NFS4_GRACE_RENAME,  /* RENAME (either name) */
	NFS4_GRACE_OPS
};

struct nfs4_rec {
	bool prev;     /* recorded by the previous boot, not dropped yet */
	bool cur;      /* confirmed in this boot */
	bool complete; /* sent RECLAIM_COMPLETE (rca_one_fs false) in this boot */
	uint16_t len;
	uint8_t id[];
};

struct nfs4_recovery {
	pthread_mutex_t lock;
	struct grace_clock *clock;
	struct nfs4_rec *recs[NFS4_REC_MAX];
	unsigned n;
	unsigned max;       /* the table's bound (nfs4_rec_set_max(); NFS4_REC_MAX by default) */
	unsigned nprev;     /* records with prev */
	unsigned prev_done; /* ... of which complete */
	bool term_started;  /* the NFSv4 term was held at start */
	bool finished;      /* the term is over and unreclaimed previous records were dropped */
	struct statefile_log file; /* the file, appended to (closed: none, nothing persisted) */
	size_t file_bytes;
	bool unsynced;      /* 'D' records written since the last fdatasync */
	uint64_t now_ms;    /* the caller's clock at the last call */
	uint64_t retry_ms;  /* a file that failed is tried again (rewritten) from then on, once a second */
	char path[PATH_MAX];
	uint64_t counts[3]; /* reclaims granted, GRACE answers, NO_GRACE answers */
};

/* ---- pure part (tests) ---- */

void nfs4_rec_init(struct nfs4_recovery *r, struct grace_clock *clock);
void nfs4_rec_release(struct nfs4_recovery *r);
/* Room for max_clients clients of this boot and as many of the previous (before parsing). */
void nfs4_rec_set_max(struct nfs4_recovery *r, unsigned max_clients);
/* Parse a file's bytes into previous-boot records. Returns how many are live, -1 without the magic. */
int nfs4_rec_parse(struct nfs4_recovery *r, const uint8_t *buf, size_t len);
/* Start: hold the NFSv4 term for grace_s if previous clients exist. Returns the seconds held (0: no grace). */
unsigned nfs4_rec_start(struct nfs4_recovery *r, uint64_t now_ms, unsigned grace_s);
/* A client is to be confirmed / is gone. 0 (its record is stable), or -1 (the table is full or the
 * record could not be written: it must not be confirmed, RFC 8881 §8.4.3). */
int nfs4_rec_confirm(struct nfs4_recovery *r, const uint8_t *id, uint32_t len, uint64_t now_ms);
/* A forgotten record's 'D' is written at once but made durable by nfs4_rec_sync() (one fdatasync
 * for a whole expiry batch). */
void nfs4_rec_forget(struct nfs4_recovery *r, const uint8_t *id, uint32_t len, uint64_t now_ms);
void nfs4_rec_sync(struct nfs4_recovery *r);
/* RECLAIM_COMPLETE of that client (the whole-server form): may end the term. */
void nfs4_rec_reclaim_complete(struct nfs4_recovery *r, const uint8_t *id, uint32_t len, uint64_t now_ms);
/* RFC 8881 §8.4.2, §8.4.2.1: NFS4_OK, NFS4ERR_GRACE or NFS4ERR_NO_GRACE. */
uint32_t nfs4_rec_grace_check(struct nfs4_recovery *r, enum nfs4_grace_op op, const uint8_t *id, uint32_t len,
			      bool is_reclaim, uint64_t now_ms);
/* The NFSv4 term still runs (reclaims possible). */
bool nfs4_rec_in_grace(struct nfs4_recovery *r, uint64_t now_ms);

/* ---- the daemon's instance ---- */

/*
 * Load state_dir/nfs4-clients (the previous boot's clients), rewrite it,
 * start the NFSv4 term of grace_server. Logs what it found. A file that
 * cannot be read or written is logged and recovery runs without it (no
 * grace, nothing recorded). Returns the grace seconds held.
 */
unsigned nfs4_recovery_start(const char *state_dir, unsigned grace_s);
/* [nfsv4] max-clients, before nfs4_recovery_start() (0: NFS4_REC_MAX / 2). */
void nfs4_recovery_max_clients(unsigned n);
void nfs4_recovery_stop(void);
struct nfs4_recovery *nfs4_recovery_server(void);
/* The lease timer, every second: ends the term on time when no NFSv4 client calls (issue 23). */
void nfs4_recovery_tick(void);

/*
 * The grace period's verdict for an operation of a client (owner: its
 * co_ownerid or 4.0 id string), for OPEN, LOCK, LOCKT (through nfs4_grace_for())
 * and SETATTR, REMOVE, RENAME (nfs4_proc_mod.c):
 *   NFS4_OK           go ahead (reclaim in grace by a previous client, or a
 *                     non-reclaim outside grace)
 *   NFS4ERR_GRACE     a non-reclaim while the server is in grace (either
 *                     protocol's term, core/grace.h)
 *   NFS4ERR_NO_GRACE  a reclaim outside the NFSv4 term, by a client not in
 *                     the previous boot's records, or after the client's
 *                     RECLAIM_COMPLETE (RFC 8881 §8.4.2.1, §18.51.3)
 * Any thread.
 */
uint32_t nfs4_grace_check(enum nfs4_grace_op op, const uint8_t *owner, uint32_t owner_len, bool is_reclaim);
/* A 4.0 client to be confirmed by SETCLIENTID_CONFIRM (RFC 7530 §9.6.3.4), or a 4.1 one at
 * CREATE_SESSION (the state module's stable hook): 0, or -1 when it cannot be recorded (logged). */
int nfs4_client_stable(const uint8_t *owner, uint32_t owner_len);
/* RECLAIM_COMPLETE (the whole-server form) of a client: may end the NFSv4 term. */
void nfs4_client_reclaimed(const uint8_t *owner, uint32_t owner_len);
/* A client destroyed or expired: its record goes (durable at nfs4_client_gone_flush()). */
void nfs4_client_gone(const uint8_t *owner, uint32_t owner_len);
void nfs4_client_gone_flush(void);

#endif
