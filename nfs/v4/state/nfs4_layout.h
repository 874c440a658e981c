/*
 * nfs4_layout.h - pNFS layout state as a plain table (no locks, no sockets,
 * no backend calls: its owner, nfs4_pnfs.c, holds a mutex around it):
 * one layout stateid per client per file (RFC 8881 §12.5.2), the iomodes
 * the client holds layouts for, its seqid (§12.5.3), return-on-close
 * (§18.43.3), LAYOUTRETURN of FILE, FSID and ALL (§18.44.3), and the purge
 * with the client.
 *
 * A record's life:
 *
 *   (none) --LAYOUTGET with an open, lock or delegation stateid--> HELD, seqid 1
 *   HELD --LAYOUTGET (its own stateid, or again one of those: errata 3208,
 *          the client forgot its layouts)--> HELD, seqid + 1
 *   HELD --LAYOUTRETURN FILE of some iomodes--> HELD, seqid + 1 (iomodes left)
 *                                          or (none) (no iomode left)
 *   HELD --LAYOUTRETURN FSID / ALL, the client's last CLOSE of the file
 *          (return-on-close), the client purged--> (none)
 *   HELD --a conflicting change (nfs4_ltab_recall_file)--> RECALLED, seqid + 1
 *          (§12.5.3: the recall carries the next seqid)
 *   RECALLED --LAYOUTRETURN (of every iomode), FSID / ALL, CLOSE, the
 *          client answering NOMATCHING_LAYOUT--> (none), counted returned
 *   RECALLED --a lease without return (nfs4_ltab_expire), the export
 *          gone (nfs4_ltab_revoke_fsid)--> (none), counted revoked; the
 *          client sees SEQ4_STATUS_RECALLABLE_STATE_REVOKED (§12.5.5.1,
 *          §18.46.3) for a lease, or until it starts over (a LAYOUTGET
 *          with a non-layout stateid, LAYOUTRETURN ALL)
 * While any client's layout of a file is RECALLED, LAYOUTGET of that file
 * answers NFS4ERR_RECALLCONFLICT (§18.43.3, §12.5.5.2).
 *
 * Seqids (RFC 8881 §12.5.3, §8.2.2): a layout stateid presented with a seqid
 * newer than the current one is BAD_STATEID; an older one is accepted, as
 * LAYOUTGETs and LAYOUTRETURNs of one file may be in flight together
 * (§12.5.5.2); after 0xffffffff comes 1.
 *
 * Layouts are whole-file (offset 0, length all ones) per iomode: a FILE
 * return of any range returns the whole layout of its iomode (ANY: both).
 *
 * stateid4.other: the server's boot (4, big-endian), the low half of the
 * clientid (4), NFS4_STAB_LAYOUT_BIT | a counter (4): never an open's, a
 * lock's or a delegation's.
 *
 * Memory: one allocation per (client, file) record and per client holding
 * layouts, none per LAYOUTGET of a file already held. At most max_total
 * records, max_per_client per client: beyond, NFS4ERR_LAYOUTTRYLATER.
 */
#ifndef RNFSD_NFS4_LAYOUT_H
#define RNFSD_NFS4_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/list.h"
#include "nfs/v4/state/nfs4_stateid.h"

#define NFS4_LAYOUT_MAX 16384u        /* records in all (default bound) */
#define NFS4_LAYOUT_PER_CLIENT 4096u  /* of one client */
#define NFS4_LAYOUT_BUCKETS 1024u
#define NFS4_LAYOUT_FKEY_MAX NFS4_STAB_FKEY_MAX
#define NFS4_LAYOUT_HOST_SIZE 16u     /* a client's IP address, IPv4 as v4-mapped IPv6 */

/* The iomodes held, as bits (layoutiomode4 READ = 1, RW = 2). */
#define NFS4_LAYOUT_IO_READ 1u
#define NFS4_LAYOUT_IO_RW 2u

struct nfs4_ltab {
	uint32_t boot;
	uint32_t counter;
	unsigned max_total, max_per_client;
	unsigned count;                                  /* records */
	unsigned nclients;                               /* clients holding any */
	uint64_t granted, returned, closed, purged;      /* counters since start */
	unsigned recalling;                              /* records RECALLED now (gauge) */
	unsigned revoked_clients;                        /* clients whose revoked flag is up */
	unsigned resends;                                /* recalls to send again (DELAY answered) */
	uint64_t recalls, recall_returned, revoked;      /* recalls sent, ended by a return, revoked */
	struct list_link recalled;                       /* RECALLED records, oldest first */
	struct list_link by_sid[NFS4_LAYOUT_BUCKETS];    /* records, by other's counter */
	struct list_link by_file[NFS4_LAYOUT_BUCKETS];   /* records, by (clientid, file key) */
	struct list_link clients[NFS4_LAYOUT_BUCKETS];   /* client records, by clientid */
};

void nfs4_ltab_init(struct nfs4_ltab *t, uint32_t boot, unsigned max_total, unsigned max_per_client);
/* Frees every record. */
void nfs4_ltab_release(struct nfs4_ltab *t);
/* Is sid a layout stateid (ordinary, its counter carries NFS4_STAB_LAYOUT_BIT)? */
bool nfs4_ltab_is_layout(const struct nfs4_stateid *sid);

/* The file a layout is of: its key (the NFSv4 handle) and its export's id (for FSID returns);
 * host: the LAYOUTGET's client address (NFS4_LAYOUT_HOST_SIZE bytes, or NULL). */
struct nfs4_lfile {
	const uint8_t *key;
	uint32_t len;
	uint32_t fsid;
	const uint8_t *host;
};

/*
 * LAYOUTGET (RFC 8881 §18.43.3) of iomode (LAYOUTIOMODE4_READ or _RW) by
 * clientid on f, after the caller checked the stateid: in is the layout
 * stateid presented, or NULL when the client presented its open, lock or
 * delegation stateid of the file (then any layouts it held are forgotten
 * first: errata 3208). roc: return on close. *out gets the stateid to
 * answer. Returns NFS4_OK, NFS4ERR_BAD_STATEID (in unknown, another
 * client's or another file's, or newer than current),
 * NFS4ERR_RECALLCONFLICT (a layout of the file is being recalled), or
 * NFS4ERR_LAYOUTTRYLATER (a bound is reached).
 */
uint32_t nfs4_ltab_get(struct nfs4_ltab *t, uint64_t clientid, const struct nfs4_lfile *f,
		       const struct nfs4_stateid *in, uint32_t iomode, bool roc, struct nfs4_stateid *out);
/*
 * LAYOUTRETURN of type FILE (§18.44.3): iomode READ, RW or ANY. *has_sid
 * and *out: the stateid while layouts of the file remain. Returns NFS4_OK
 * or NFS4ERR_BAD_STATEID (as above).
 */
uint32_t nfs4_ltab_return_file(struct nfs4_ltab *t, uint64_t clientid, const struct nfs4_lfile *f,
			       const struct nfs4_stateid *in, uint32_t iomode, bool *has_sid, struct nfs4_stateid *out);
/* LAYOUTRETURN of type FSID (the client's layouts of files of export fsid) or ALL: how many went. */
unsigned nfs4_ltab_return_fsid(struct nfs4_ltab *t, uint64_t clientid, uint32_t fsid);
unsigned nfs4_ltab_return_all(struct nfs4_ltab *t, uint64_t clientid);
/* The client closed its last open of the file: its return-on-close layouts of it go (§18.43.3). */
unsigned nfs4_ltab_close(struct nfs4_ltab *t, uint64_t clientid, const uint8_t *key, uint32_t len);
/* The client record went: all its layouts go. */
unsigned nfs4_ltab_purge_client(struct nfs4_ltab *t, uint64_t clientid);
/*
 * LAYOUTCOMMIT, LAYOUTERROR, LAYOUTSTATS: is in a layout stateid of clientid on f (seqid not
 * newer than current)? NFS4_OK or NFS4ERR_BAD_STATEID. *iomodes: the iomodes held.
 */
uint32_t nfs4_ltab_check(const struct nfs4_ltab *t, uint64_t clientid, const struct nfs4_lfile *f,
			 const struct nfs4_stateid *in, uint32_t *iomodes);
/* Layouts (records) a client holds (rnfsctl, tests). */
unsigned nfs4_ltab_client_count(const struct nfs4_ltab *t, uint64_t clientid);

/* One CB_LAYOUTRECALL to send (RFC 8881 §20.3): the holder, its layout stateid with the seqid
 * the recall carries, the file. */
struct nfs4_lrecall {
	uint64_t clientid;
	struct nfs4_stateid sid;
	uint32_t fsid;
	uint32_t klen;
	uint8_t key[NFS4_LAYOUT_FKEY_MAX];
};
/*
 * A change to the file (key, len) conflicts with its layouts (RFC 8881
 * §12.5.5): the HELD records of other clients than except (0: none) and,
 * when host is given, not got from that address (the holder's own I/O to
 * its data server), become RECALLED at now, at most max of them (the rest
 * at the next conflict); out gets each. Returns how many.
 */
unsigned nfs4_ltab_recall_file(struct nfs4_ltab *t, const uint8_t *key, uint32_t len, uint64_t except,
			       const uint8_t *host, uint64_t now, struct nfs4_lrecall *out, unsigned max);
/* Is a layout of the file RECALLED? */
bool nfs4_ltab_recalling_file(const struct nfs4_ltab *t, const uint8_t *key, uint32_t len);
/* The holder answered the recall of sid NFS4ERR_NOMATCHING_LAYOUT (§20.3.3): it holds none; the
 * record goes as returned. */
void nfs4_ltab_recall_nomatch(struct nfs4_ltab *t, uint64_t clientid, const struct nfs4_stateid *sid);
/* The holder answered the recall of sid NFS4ERR_DELAY (§20.3.4: try again later): it is marked to
 * be sent again; nfs4_ltab_resend gives at most max recalls so marked (the same stateid). */
void nfs4_ltab_recall_delay(struct nfs4_ltab *t, uint64_t clientid, const struct nfs4_stateid *sid);
unsigned nfs4_ltab_resend(struct nfs4_ltab *t, struct nfs4_lrecall *out, unsigned max);
/* §12.5.5.1: RECALLED records older than lease are revoked; a revoked client's flag drops a lease
 * after its last revocation (or at its next LAYOUTGET with a non-layout stateid, LAYOUTRETURN ALL).
 * How many were revoked. */
unsigned nfs4_ltab_expire(struct nfs4_ltab *t, uint64_t now, uint32_t lease);
/* The export fsid went: every layout of it is revoked at now (its handles are stale: nothing can be
 * returned); clients[] (at most max) gets the holders, *nclients how many. How many were revoked. */
unsigned nfs4_ltab_revoke_fsid(struct nfs4_ltab *t, uint32_t fsid, uint64_t now, uint64_t *clients, unsigned max,
			       unsigned *nclients);
/* One layout record as rnfsctl layouts lists it. */
struct nfs4_lo_info {
	uint64_t clientid;
	uint32_t fsid, iomodes, seqid; /* iomodes: NFS4_LAYOUT_IO_* */
	uint64_t recall_at;            /* RECALLED since (0: HELD) */
	uint32_t klen;
	uint8_t key[NFS4_LAYOUT_FKEY_MAX];
};
/* At most max records into out, by client: how many. */
unsigned nfs4_ltab_list(const struct nfs4_ltab *t, struct nfs4_lo_info *out, unsigned max);
/* SEQ4_STATUS_RECALLABLE_STATE_REVOKED for clientid: a layout of it was revoked within a lease. */
bool nfs4_ltab_client_revoked(const struct nfs4_ltab *t, uint64_t clientid);

/* GETDEVICELIST (RFC 8881 §18.41.3) over a file system's ndev devices, numbered 0..ndev-1: the page
 * from cookie (0: the start, else the number of devices already given), at most max devices:
 * *first, *count and *eof. verf_ok: gdla_cookieverf is the list's (not looked at for cookie 0).
 * NFS4_OK; NFS4ERR_INVAL (max 0); NFS4ERR_NOT_SAME (another list's verifier); NFS4ERR_BAD_COOKIE
 * (past the list). */
uint32_t nfs4_devlist_page(unsigned ndev, uint64_t cookie, bool verf_ok, uint32_t max, unsigned *first,
			   unsigned *count, bool *eof);

#endif
