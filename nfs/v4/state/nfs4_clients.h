/*
 * nfs4_clients.h - NFSv4 client records and NFSv4.1 sessions (RFC 8881 §2.4,
 * §2.10, §18.35-§18.37, §18.46, §18.50, §18.51; NFSv4.0's SETCLIENTID,
 * SETCLIENTID_CONFIRM and RENEW, RFC 7530 §9.1.1, §16.29, §16.33, §16.34):
 * EXCHANGE_ID, CREATE_SESSION
 * (with its one-slot replay cache), SEQUENCE (slot table and reply cache,
 * exactly-once semantics), DESTROY_SESSION, DESTROY_CLIENTID,
 * RECLAIM_COMPLETE and lease expiry, as a pure module: no XDR, no sockets;
 * time and randomness come from the caller (st->random: session ids and
 * confirm verifiers must be unguessable, RFC 8881 §2.10.8.3). The server's one
 * table is nfs4_server.c's; nfs4_proc_session.c puts it behind the COMPOUND operations.
 *
 * Memory: bounded. At most max_clients client records ([nfsv4] max-clients,
 * default and ceiling NFS4_STATE_MAX_CLIENTS; a full table first drops an
 * unconfirmed record or a client whose lease ran out, oldest first, and only
 * then refuses: RFC 7530 §9.6.3, RFC 8881 §8.4.3's courtesy ends when the
 * resources are needed), at most max_per_host of them made from one host
 * address and max_per_principal by one principal (the same order of
 * eviction within the host's or principal's records first), each with
 * at most NFS4_STATE_MAX_SESSIONS sessions; a session's slot table and its
 * reply cache (slots x ca_maxresponsesize_cached, both clamped) are
 * allocated once by CREATE_SESSION and freed by DESTROY_SESSION or expiry;
 * all reply caches together stay within cache_total ([nfsv4]
 * reply-cache-size, default NFS4_STATE_CACHE_TOTAL). Each client is owed a
 * share of it (cache_share(): half the budget split over max-clients) and may
 * borrow beyond that from the other half, at most a sixteenth of the budget;
 * a grant that does not fit is shrunk (fewer slots, then a smaller cached
 * reply, down to none), never refused, after sessions idle for a lease were
 * reclaimed (RFC 8881 §18.36.3, §2.10.12).
 * Nothing is allocated per SEQUENCE.
 *
 * Open state (nfs4_stateid.h) belongs to client records: a record freed
 * (replaced, destroyed, expired) purges its clientid's state in the table
 * given to nfs4_ctab_set_stab(). Lock order: this mutex, then the table's,
 * and the stable records' (nfs4_recovery.h, through the stable, gone and
 * gone_flush hooks).
 *
 * Locking: one mutex per struct nfs4_ctab; a slot being used by a request
 * is marked in progress, so a retransmission meanwhile gets NFS4ERR_DELAY
 * and never its reply cache.
 *
 * Slot life (per slot, RFC 8881 §2.10.6.1):
 *   IDLE(seq s) --SEQUENCE s+1--> IN_PROGRESS --nfs4_slot_done()--> IDLE(seq s+1, reply cached or not)
 *   IDLE(seq s) --SEQUENCE s----> replay (cached reply) or RETRY_UNCACHED_REP
 *   IN_PROGRESS --SEQUENCE s+1--> DELAY (the same request again, still running)
 *   otherwise                  -> SEQ_MISORDERED
 */
#ifndef RNFSD_NFS4_CLIENTS_H
#define RNFSD_NFS4_CLIENTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NFS4_STATE_MAX_CLIENTS 4096u /* also the callback table's size (nfs4_cb.h) */
#define NFS4_STATE_MAX_SESSIONS 4u  /* per client */
#define NFS4_STATE_MAX_SLOTS 64u    /* per session (ca_maxrequests) */
#define NFS4_STATE_MAX_CACHED 8192u /* bytes of one cached reply (ca_maxresponsesize_cached) */
#define NFS4_STATE_MAX_MSG ((1u << 20) + 65536u) /* ca_maxrequestsize / ca_maxresponsesize */
#define NFS4_STATE_CACHE_TOTAL (64u << 20) /* all sessions' reply caches together: the default */
#define NFS4_STATE_CACHE_MIN (1u << 20)    /* the smallest budget [nfsv4] reply-cache-size takes */
#define NFS4_OWNER_MAX 1024u        /* co_ownerid, RFC 8881 §18.35.1: opaque<NFS4_OPAQUE_LIMIT> */
#define NFS4_SESSIONID_SIZE 16u
/* Clientids whose lease ran out, remembered for RENEW: a table's worth (pynfs CID5's 1024 clients
 * expiring together must not push out a RENEW3 client expired just before them). */
#define NFS4_STATE_EXPIRED_RING NFS4_STATE_MAX_CLIENTS

/* EXCHANGE_ID flags (RFC 8881 §18.35.1). */
#define EXCHGID4_FLAG_SUPP_MOVED_REFER 0x00000001u
#define EXCHGID4_FLAG_USE_NON_PNFS 0x00010000u
#define EXCHGID4_FLAG_USE_PNFS_MDS 0x00020000u
#define EXCHGID4_FLAG_UPD_CONFIRMED_REC_A 0x40000000u
#define EXCHGID4_FLAG_CONFIRMED_R 0x80000000u
/* RFC 8881 §15.1: errors this module answers that nfs4_const.h does not name. */
#define NFS4ERR_COMPLETE_ALREADY 10054u
#define NFS4ERR_CLIENTID_BUSY 10074u
#define NFS4ERR_DEADSESSION 10078u
#define NFS4ERR_WRONG_CRED 10082u

/* channel_attrs4 (RFC 8881 §18.36.1), rdma_ird left out (never offered). */
struct nfs4_chan_attrs {
	uint32_t headerpadsize, maxrequestsize, maxresponsesize, maxresponsesize_cached;
	uint32_t maxoperations, maxrequests;
};

struct nfs4_slot {
	uint32_t seqid;
	bool in_progress;
	bool cached;   /* the last reply was kept (cachethis) */
	uint32_t len;  /* its length */
	uint32_t xprtsec; /* the caller's mask kept with it (transport securities it may be replayed on) */
	uint8_t *reply; /* maxresponsesize_cached bytes, inside the session's cache */
};

struct nfs4_session {
	uint8_t id[NFS4_SESSIONID_SIZE];
	struct nfs4_client *client;
	struct nfs4_chan_attrs fore, back;
	uint32_t nslots;
	struct nfs4_slot *slots; /* [nslots] and their reply buffers, one allocation */
	uint64_t last_used;      /* seconds: CREATE_SESSION or the last SEQUENCE (idle sessions are reclaimed) */
};

/* NFSv4.0 callback information (RFC 7530 §16.33.1), kept for callbacks. */
#define NFS4_CB_NETID_MAX 16u
#define NFS4_CB_ADDR_MAX 64u
struct nfs4_cb_info {
	uint32_t program, ident;
	uint32_t netid_len, addr_len; /* 0: no usable callback path */
	char netid[NFS4_CB_NETID_MAX];
	char addr[NFS4_CB_ADDR_MAX];
};

struct nfs4_client {
	uint64_t clientid;
	bool v40;                    /* made by SETCLIENTID (else EXCHANGE_ID) */
	uint8_t confirm[8];          /* 4.0: setclientid_confirm of the record */
	bool upd_pending;            /* 4.0: a confirmed record's callback update awaits confirmation */
	uint8_t upd_confirm[8];
	struct nfs4_cb_info cb, upd_cb;
	uint8_t verifier[8];
	uint32_t owner_len;
	uint8_t owner[NFS4_OWNER_MAX];
	uint64_t principal;          /* who made it (nfs4_principal(): AUTH_SYS uid and gid, GSS name), RFC 8881 §18.35.5 */
	uint8_t host[16];            /* from which address (IPv4 mapped to IPv6; zero: unknown) */
	bool confirmed;
	bool reclaim_complete;
	uint32_t cs_seqid;           /* CREATE_SESSION's slot: the last csa_sequence done */
	bool cs_cached;              /* its reply is cached (cs_session) */
	uint8_t cs_session[NFS4_SESSIONID_SIZE];
	struct nfs4_chan_attrs cs_fore, cs_back;
	uint64_t last_renew;         /* seconds, the caller's clock */
	struct nfs4_session *sessions[NFS4_STATE_MAX_SESSIONS];
};

struct nfs4_ctab {
	pthread_mutex_t lock;
	uint32_t boot;             /* high half of every clientid: this server instance */
	uint32_t next_id;          /* low half */
	uint32_t lease;            /* seconds */
	uint64_t rnd;              /* xorshift state for session ids when random is NULL (tests) */
	/* The caller's CSPRNG (getrandom(2)): fills len bytes, true; false: use rnd. May be NULL. */
	bool (*random)(void *buf, size_t len);
	struct nfs4_client *clients[NFS4_STATE_MAX_CLIENTS];
	unsigned nclients;
	unsigned max_clients;      /* [nfsv4] max-clients, 1..NFS4_STATE_MAX_CLIENTS */
	uint64_t expired[NFS4_STATE_EXPIRED_RING]; /* the last clients forgotten for expiry */
	unsigned expired_next;
	size_t cache_bytes; /* reply caches allocated */
	size_t cache_total; /* their budget ([nfsv4] reply-cache-size) */
	unsigned max_per_host;      /* records made from one address (0: max_clients / 2) */
	unsigned max_per_principal; /* records made by one principal (0: no bound but max_clients) */
	uint64_t refused;           /* new records refused: table, host's or principal's share full */
	uint64_t reclaimed;         /* idle sessions destroyed to make room in the reply-cache budget */
	/* Called (under the lock) when a client is about to be confirmed: its stable record is
	 * written (nfs4_recovery.h). Non-zero: it could not be, and the client is not confirmed.
	 * May be NULL. */
	int (*stable)(const uint8_t *owner, uint32_t owner_len);
	/* Called (under the lock) for each confirmed client that expiry or
	 * DESTROY_CLIENTID forgets: its stable record goes (nfs4_recovery.h). May be NULL. */
	void (*gone)(const uint8_t *owner, uint32_t owner_len);
	/* Called (under the lock) once before the lock is let go after one or more gone calls: the
	 * forgotten records are made durable together. May be NULL. */
	void (*gone_flush)(void);
	bool gone_pending;
	struct nfs4_stab *stab; /* open state to purge with a client (NULL: none) */
	/* Called (under the lock) for every client record freed, whatever the
	 * reason: its callback path goes (nfs4_cb.h). May be NULL. */
	void (*freed)(uint64_t clientid);
	/* Called (under the lock) for a session the module destroys by itself (an idle one reclaimed
	 * for the reply-cache budget): its back channel goes (nfs4_cb.h). May be NULL. */
	void (*session_freed)(const uint8_t sessionid[NFS4_SESSIONID_SIZE]);
};

void nfs4_ctab_init(struct nfs4_ctab *st, uint32_t boot, uint64_t seed, uint32_t lease);
void nfs4_ctab_release(struct nfs4_ctab *st);
/* The table's bound (clamped to 1..NFS4_STATE_MAX_CLIENTS; init sets the ceiling). */
void nfs4_ctab_set_max_clients(struct nfs4_ctab *st, unsigned n);
struct nfs4_stab;
void nfs4_ctab_set_stab(struct nfs4_ctab *st, struct nfs4_stab *stab);
/* Records per host address and per principal (0: the defaults above). */
void nfs4_ctab_set_shares(struct nfs4_ctab *st, unsigned per_host, unsigned per_principal);
/* The reply caches' budget in bytes (0: NFS4_STATE_CACHE_TOTAL; at least NFS4_STATE_CACHE_MIN). */
void nfs4_ctab_set_cache_total(struct nfs4_ctab *st, size_t bytes);

/* Who asks for a new client record: the principal and the host address. */
struct nfs4_who {
	uint64_t principal;
	uint8_t host[16]; /* nfs4_host_key(); all zero: unknown (no per-host bound) */
};
/* The host key of a socket address (IPv4 as IPv4-mapped IPv6, so both forms count alike). */
struct sockaddr;
void nfs4_host_key(const struct sockaddr *sa, uint8_t host[16]);

/*
 * SETCLIENTID (RFC 7530 §16.33.5): a new unconfirmed record for (verifier,
 * id) or, for a confirmed record with the same verifier, a pending callback
 * update. *clientid and confirm[8] for SETCLIENTID_CONFIRM. NFS4_OK,
 * NFS4ERR_INVAL (id empty or too long), NFS4ERR_RESOURCE (table full of
 * confirmed clients within their leases).
 * Principals are not compared (AUTH_SYS: CLID_INUSE is never answered).
 */
uint32_t nfs4_setclientid(struct nfs4_ctab *st, const uint8_t verifier[8], const uint8_t *id, uint32_t id_len,
			  const struct nfs4_cb_info *cb, uint64_t principal, uint64_t now, uint64_t *clientid,
			  uint8_t confirm[8], struct nfs4_cb_info *inuse);
/* The same, for a known host: a host or principal over its share is NFS4ERR_RESOURCE too. */
uint32_t nfs4_setclientid_who(struct nfs4_ctab *st, const uint8_t verifier[8], const uint8_t *id,
			      uint32_t id_len, const struct nfs4_cb_info *cb, const struct nfs4_who *who,
			      uint64_t now, uint64_t *clientid, uint8_t confirm[8], struct nfs4_cb_info *inuse);
/* SETCLIENTID_CONFIRM (RFC 7530 §16.34.5) by principal (nfs4_principal()): NFS4_OK or
 * NFS4ERR_STALE_CLIENTID; NFS4ERR_CLID_INUSE when principal is not the record's (nothing changes),
 * or when the id's confirmed record of another principal has taken state since the SETCLIENTID
 * (§16.33.5); NFS4ERR_RESOURCE when the client's stable record cannot be written (the stable hook). */
uint32_t nfs4_setclientid_confirm_by(struct nfs4_ctab *st, uint64_t clientid, const uint8_t confirm[8],
				     uint64_t principal, uint64_t now);
/* The same by principal 0 (the unit tests' nfs4_setclientid). */
uint32_t nfs4_setclientid_confirm(struct nfs4_ctab *st, uint64_t clientid, const uint8_t confirm[8],
				  uint64_t now);
/* RENEW, and the implicit renewal by any 4.0 stateful operation (RFC 7530
 * §9.6): NFS4_OK, NFS4ERR_EXPIRED (a client forgotten for expiry, among the
 * last NFS4_STATE_EXPIRED_RING), NFS4ERR_STALE_CLIENTID (another boot,
 * unknown or unconfirmed). */
uint32_t nfs4_renew(struct nfs4_ctab *st, uint64_t clientid, uint64_t now);

/* EXCHANGE_ID's result (RFC 8881 §18.35.2, less server_owner/scope/impl). */
struct nfs4_exid_res {
	uint64_t clientid;
	uint32_t sequenceid;
	uint32_t flags;
};
uint32_t nfs4_exchange_id(struct nfs4_ctab *st, const uint8_t verifier[8], const uint8_t *owner,
			  uint32_t owner_len, uint32_t flags, uint64_t principal, uint64_t now, struct nfs4_exid_res *res);
/* The same, for a known host: a host or principal over its share is NFS4ERR_DELAY too. */
uint32_t nfs4_exchange_id_who(struct nfs4_ctab *st, const uint8_t verifier[8], const uint8_t *owner,
			      uint32_t owner_len, uint32_t flags, const struct nfs4_who *who, uint64_t now,
			      struct nfs4_exid_res *res);

/* CREATE_SESSION (RFC 8881 §18.36): attributes negotiated in place; *sessionid set. NFS4ERR_NOSPC
 * when the client's stable record cannot be written (the stable hook; it stays unconfirmed). */
uint32_t nfs4_create_session(struct nfs4_ctab *st, uint64_t clientid, uint32_t sequence,
			     struct nfs4_chan_attrs *fore, struct nfs4_chan_attrs *back, uint64_t principal, uint64_t now,
			     uint8_t sessionid[NFS4_SESSIONID_SIZE]);

/* SEQUENCE (RFC 8881 §18.46): what the COMPOUND does next. */
enum nfs4_seq_action {
	NFS4_SEQ_ERROR,  /* answer *status, run nothing */
	NFS4_SEQ_NEW,    /* run the COMPOUND; then nfs4_slot_done() */
	NFS4_SEQ_REPLAY, /* send *replay (len bytes): the cached reply */
};
struct nfs4_seq_res {
	uint32_t status;
	uint32_t highest_slotid, target_highest_slotid;
	uint32_t replay_len;      /* NFS4_SEQ_REPLAY: bytes copied into the caller's buffer */
	uint32_t replay_xprtsec;  /* NFS4_SEQ_REPLAY: the mask nfs4_slot_done() kept with it */
	uint32_t maxresponsesize; /* NFS4_SEQ_NEW: the COMPOUND's reply limit */
	uint32_t maxresponsesize_cached; /* ... when the client asked for it to be cached */
	uint64_t clientid;        /* the session's client (RECLAIM_COMPLETE) */
};
/* The cached reply is copied (under the lock) into replay_buf (replay_cap bytes). */
/* numops: the COMPOUND's operations (RFC 8881 §2.10.6.4: more than
 * ca_maxoperations is NFS4ERR_TOO_MANY_OPS, the slot untouched). */
enum nfs4_seq_action nfs4_sequence(struct nfs4_ctab *st, const uint8_t sessionid[NFS4_SESSIONID_SIZE],
				   uint32_t sequenceid, uint32_t slotid, uint32_t numops, size_t reqlen, uint64_t now,
				   uint8_t *replay_buf, uint32_t replay_cap, struct nfs4_seq_res *res);
/*
 * The COMPOUND that took slotid of the session finished with reply (len
 * bytes): keep it if cachethis and it fits (else the slot remembers it is not
 * cached: RETRY_UNCACHED_REP for a retry, RFC 8881 §2.10.6.1.3). The session
 * is found again by id: it may have been destroyed meanwhile (then nothing).
 * xprtsec is kept with the reply and handed back with a replay (the caller's
 * EXPORT_XPRTSEC_* mask: which connections the reply may be replayed on).
 */
void nfs4_slot_done(struct nfs4_ctab *st, const uint8_t sessionid[NFS4_SESSIONID_SIZE], uint32_t slotid,
		    bool cachethis, const uint8_t *reply, uint32_t len, uint32_t xprtsec);

/* DESTROY_SESSION, DESTROY_CLIENTID by principal: NFS4ERR_WRONG_CRED unless it is the one
 * that made the client ID (RFC 8881 §2.10.8.3, §15.1.6.4; see principal_ok()). */
uint32_t nfs4_destroy_session(struct nfs4_ctab *st, const uint8_t sessionid[NFS4_SESSIONID_SIZE],
			      uint64_t principal);
uint32_t nfs4_destroy_clientid(struct nfs4_ctab *st, uint64_t clientid, uint64_t principal);
uint32_t nfs4_reclaim_complete(struct nfs4_ctab *st, uint64_t clientid);
/* RFC 8881 §18.51.3: a 4.1 client takes no new lock or open before its
 * RECLAIM_COMPLETE (NFS4ERR_GRACE); true for 4.0 clients and unknown ids. */
bool nfs4_client_may_lock(struct nfs4_ctab *st, uint64_t clientid);
/* A client record of NFSv4.1+ (made by EXCHANGE_ID): its stateids are not for 4.0 COMPOUNDs. */
bool nfs4_client_has_sessions(struct nfs4_ctab *st, uint64_t clientid);
/* The owner (co_ownerid) of a client: true and *len set (owner holds NFS4_OWNER_MAX bytes), or false. */
bool nfs4_client_owner(struct nfs4_ctab *st, uint64_t clientid, uint8_t *owner, uint32_t *len);
/* The client of a session (BIND_CONN_TO_SESSION) for principal: NFS4_OK, NFS4ERR_BADSESSION (no
 * such session), NFS4ERR_WRONG_CRED (another principal's client, as DESTROY_SESSION). */
uint32_t nfs4_session_client(struct nfs4_ctab *st, const uint8_t sessionid[NFS4_SESSIONID_SIZE], uint64_t principal,
			     uint64_t *clientid);
/* A confirmed 4.0 client's callback information (SETCLIENTID's, as confirmed). */
bool nfs4_client_cb40(struct nfs4_ctab *st, uint64_t clientid, struct nfs4_cb_info *cb);
/* Client records and sessions now (statistics). */
void nfs4_ctab_counts(struct nfs4_ctab *st, unsigned *clients, unsigned *sessions);
/* One client record as rnfsctl client list shows it. */
struct nfs4_client_brief {
	uint64_t clientid;
	uint8_t host[16];     /* IPv4 mapped to IPv6; zero: unknown */
	bool v40, confirmed;
	unsigned sessions;
	uint64_t last_renew;  /* seconds, the table's clock */
};
/* At most max records into out (in table order): how many. */
unsigned nfs4_ctab_brief(struct nfs4_ctab *st, struct nfs4_client_brief *out, unsigned max);
/* rnfsctl client revoke: the record clientid (0: every record made from host) goes as if its lease
 * had ended. Returns how many went; *busy: matching records with a call running, left. */
unsigned nfs4_ctab_revoke(struct nfs4_ctab *st, uint64_t clientid, const uint8_t host[16], unsigned *busy);
/* The reply caches: bytes granted, the budget; records refused, idle sessions reclaimed (statistics). */
struct nfs4_ctab_gauges {
	size_t cache_bytes, cache_total;
	uint64_t refused, reclaimed;
};
void nfs4_ctab_gauges(struct nfs4_ctab *st, struct nfs4_ctab_gauges *g);
/* Forget every client whose lease ran out before now (RFC 8881 §8.3), NFS4_STATE_EXPIRE_BATCH at a
 * time under the lock. Returns how many. */
#define NFS4_STATE_EXPIRE_BATCH 64u
unsigned nfs4_ctab_expire(struct nfs4_ctab *st, uint64_t now);

#endif
