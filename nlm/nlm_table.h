/*
 * nlm_table.h - NLM's own bookkeeping beside the backend's byte-range locks
 * (which decide every conflict, so NLM, NFSv4 and local processes see each
 * other's locks): lock owners (caller_name + svid + oh, XNFS §10.2: "the
 * lock owner is the combination of caller_name, svid and oh"), the files
 * each owner holds locks on (to release them when the host goes away:
 * FREE_ALL, statd's reboot notification), blocked waiters (a blocking LOCK
 * answered NLM4_BLOCKED, to be granted by a GRANTED callback) and DOS share
 * reservations (SHARE/UNSHARE, kept here only: the backend has none).
 *
 * Pure and single-threaded: the caller serialises (nlm_svc.c's mutex). All
 * memory is allocated at nlm_table_init(); a full table answers ENOLCK
 * (NLM4_DENIED_NOLOCKS), and so does a host (caller_name) that has
 * max_per_host owners, or held records, already: one host cannot fill the
 * tables (nor the backend's lock descriptions behind the held records) for
 * the others.
 */
#ifndef RNFSD_NLM_TABLE_H
#define RNFSD_NLM_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define NLM_HOST_MAX 255u   /* caller_name bytes kept (a longer one: ENAMETOOLONG) */
#define NLM_OH_MAX 128u     /* oh bytes kept (Linux: "pid@nodename", at most 75) */
#define NLM_FH_MAX 64u      /* the NFSv3 file handle (RFC 1813 §2.3.3 NFS3_FHSIZE) */
#define NLM_COOKIE_MAX 32u  /* cookie bytes kept for a GRANTED callback (Linux: 4 or 8) */

struct nlm_fh {
	uint32_t len;
	uint8_t data[NLM_FH_MAX];
};

struct nlm_owner {
	bool used;
	uint32_t gen;   /* makes ids of reused slots distinct */
	unsigned refs;  /* held records + waiters + shares */
	int32_t svid;
	uint32_t host_len, oh_len;
	char host[NLM_HOST_MAX + 1];
	uint8_t oh[NLM_OH_MAX];
};

struct nlm_held {
	bool used;
	unsigned owner;
	struct nlm_fh fh;
};

enum nlm_waiter_state {
	NLM_W_FREE = 0,
	NLM_W_WAITING,  /* blocked: retried when the range may have freed */
	NLM_W_GRANTING, /* the lock is taken; the GRANTED callback is under way */
	NLM_W_REVOKE,   /* the client refused the grant: the lock is to be given back */
};

struct nlm_waiter {
	enum nlm_waiter_state state;
	uint64_t seq; /* the caller's unique number: a callback finds its waiter by index and seq */
	unsigned owner;
	struct nlm_fh fh;
	bool exclusive;
	uint64_t offset, length;
	uint32_t cookie_len;
	uint8_t cookie[NLM_COOKIE_MAX];
	struct sockaddr_storage peer; /* where the LOCK came from: the client's lockd host */
	socklen_t peer_len;
};

struct nlm_share {
	bool used;
	unsigned owner;
	struct nlm_fh fh;
	uint32_t mode, access; /* fsh4_mode (what others are denied), fsh4_access */
};

struct nlm_table {
	unsigned n_owners, n_held, n_waiters, n_shares;
	unsigned max_per_host; /* owners, and held records, of one host; 0: no bound but the tables' */
	struct nlm_owner *owners;
	struct nlm_held *held;
	struct nlm_waiter *waiters;
	struct nlm_share *shares;
};

/* 0, or ENOMEM. */
int nlm_table_init(struct nlm_table *t, unsigned owners, unsigned held, unsigned waiters, unsigned shares);
void nlm_table_free(struct nlm_table *t);

/* Pure: do [o1, o1+l1) and [o2, o2+l2) overlap? A length 0 reaches the end of the file. */
bool nlm_range_overlap(uint64_t o1, uint64_t l1, uint64_t o2, uint64_t l2);

bool nlm_fh_set(struct nlm_fh *fh, const uint8_t *p, uint32_t len);
bool nlm_fh_eq(const struct nlm_fh *a, const struct nlm_fh *b);

/*
 * The owner (host, svid, oh): its slot in *slot. create: make it if absent.
 * 0; ENOENT (absent, !create); ENOLCK (full, or the host has max_per_host
 * owners); ENAMETOOLONG (host or oh over
 * the limits above). A created owner without references is dropped by the
 * next nlm_owner_put().
 */
int nlm_owner_get(struct nlm_table *t, const char *host, uint32_t host_len, int32_t svid, const uint8_t *oh,
		  uint32_t oh_len, bool create, unsigned *slot);
/* The backend's owner id (non-zero, distinct per slot use; top bit set: NLM's). */
uint64_t nlm_owner_id(const struct nlm_table *t, unsigned slot);
/* The slot of a backend owner id, or -1. */
int nlm_owner_by_id(const struct nlm_table *t, uint64_t id);
/* Drop the owner if nothing refers to it any more. */
void nlm_owner_put(struct nlm_table *t, unsigned slot);
bool nlm_owner_of_host(const struct nlm_table *t, unsigned slot, const char *host, uint32_t host_len);

/* Used owners and held records (stats). */
void nlm_table_counts(const struct nlm_table *t, unsigned *owners, unsigned *held);

/* Record that owner holds locks on fh (idempotent). 0 or ENOLCK (full, or its host's max_per_host). */
int nlm_held_add(struct nlm_table *t, unsigned owner, const struct nlm_fh *fh);
/* Forget it; false if it was not recorded. */
bool nlm_held_del(struct nlm_table *t, unsigned owner, const struct nlm_fh *fh);

/* A waiter for (owner, fh, exclusive, range): the existing one (a client
 * repeats a blocked LOCK, Linux every 30 s) or a new one. Index in *idx.
 * 0 or ENOLCK. *is_new tells which. */
int nlm_waiter_add(struct nlm_table *t, const struct nlm_waiter *w, unsigned *idx, bool *is_new);
/* The waiter of (owner, fh, range) in any state, or -1 (CANCEL). */
int nlm_waiter_find(const struct nlm_table *t, unsigned owner, const struct nlm_fh *fh, uint64_t offset,
		    uint64_t length);
void nlm_waiter_del(struct nlm_table *t, unsigned idx);
/* Next waiter index >= from in state st (and on fh unless NULL), or -1. */
int nlm_waiter_next(const struct nlm_table *t, unsigned from, enum nlm_waiter_state st, const struct nlm_fh *fh);

/* XNFS §10.3 SHARE: 0, EAGAIN (another owner's reservation conflicts) or ENOLCK. */
int nlm_share_add(struct nlm_table *t, unsigned owner, const struct nlm_fh *fh, uint32_t mode, uint32_t access);
void nlm_share_del(struct nlm_table *t, unsigned owner, const struct nlm_fh *fh);

/*
 * A host is gone (FREE_ALL, reboot notification): its waiters and shares
 * are dropped here; each held record is handed to fn(fh, owner id, arg)
 * (which releases the backend's locks) and dropped. Returns how many held
 * records were released.
 */
unsigned nlm_host_release(struct nlm_table *t, const char *host, uint32_t host_len,
			  void (*fn)(const struct nlm_fh *fh, uint64_t owner_id, void *arg), void *arg);
/* The same for every record whose file handle match(fh, marg) selects (an export no longer served). */
unsigned nlm_fh_release(struct nlm_table *t, bool (*match)(const struct nlm_fh *fh, void *arg), void *marg,
			void (*fn)(const struct nlm_fh *fh, uint64_t owner_id, void *arg), void *arg);

#endif
