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
	struct list_link by_sid[NFS4_LAYOUT_BUCKETS];    /* records, by other's counter */
	struct list_link by_file[NFS4_LAYOUT_BUCKETS];   /* records, by (clientid, file key) */
	struct list_link clients[NFS4_LAYOUT_BUCKETS];   /* client records, by clientid */
};

void nfs4_ltab_init(struct nfs4_ltab *t, uint32_t boot, unsigned max_total, unsigned max_per_client);
/* Frees every record. */
void nfs4_ltab_release(struct nfs4_ltab *t);
/* Is sid a layout stateid (ordinary, its counter carries NFS4_STAB_LAYOUT_BIT)? */
bool nfs4_ltab_is_layout(const struct nfs4_stateid *sid);

/* The file a layout is of: its key (the NFSv4 handle) and its export's id (for FSID returns). */
struct nfs4_lfile {
	const uint8_t *key;
	uint32_t len;
	uint32_t fsid;
};

/*
 * LAYOUTGET (RFC 8881 §18.43.3) of iomode (LAYOUTIOMODE4_READ or _RW) by
 * clientid on f, after the caller checked the stateid: in is the layout
 * stateid presented, or NULL when the client presented its open, lock or
 * delegation stateid of the file (then any layouts it held are forgotten
 * first: errata 3208). roc: return on close. *out gets the stateid to
 * answer. Returns NFS4_OK, NFS4ERR_BAD_STATEID (in unknown, another
 * client's or another file's, or newer than current), or
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

#endif
