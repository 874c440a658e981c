/*
 * nfs4_layout_recall.c - the pNFS metadata server's recalls (RFC 8881
 * §12.5.5, CB_LAYOUTRECALL §20.3; see nfs4_pnfs.h): which changes conflict
 * with a layout, the CB_LAYOUTRECALL sent for them and its answer, the
 * revocation of what is not returned, and NFSv3's side (nfs/common's layout
 * hook). The layout table is nfs4_proc_layout.c's, taken through
 * nfs4_pnfs_internal.h; nothing here waits for a client.
 *
 * Decisions, each with its section:
 *  - A truncate (SETATTR of the size), REMOVE or RENAME over the file
 *    through this server by another client, an NFSv3 WRITE or SETATTR of the size (the hook of
 *    nfs/common: nfs_layout_conflict) from another address than the
 *    holder's (the holder's own I/O to its data server is no conflict)
 *    recall the other clients' layouts of the file, and so does an NFSv3
 *    REMOVE, or RENAME over the file, from any address (a name change is no
 *    data server's I/O; nfs4_name_recall() through the delegation hook's
 *    recall_at, one lookup for both): type FILE, iomode ANY,
 *    clora_changed false (the layout is unchanged: the change goes to the
 *    same file). The conflicting operation does not wait (the data servers
 *    write this very file, RFC 8435 §2.2).
 *  - LAYOUTGET of the file answers RECALLCONFLICT until the return
 *    (§18.43.3, nfs4_layout.h); a recall not returned within a lease is
 *    revoked (§12.5.5.1) and SEQUENCE says RECALLABLE_STATE_REVOKED for a
 *    lease or until the client starts over (§18.46.3); NOMATCHING_LAYOUT
 *    (§20.3.3) counts as a return, DELAY (§20.3.4) sends it again at the
 *    next tick.
 *  - An export gone: its layouts are revoked at once (its handles are
 *    stale, nothing could be returned) and each holder gets
 *    CB_LAYOUTRECALL FSID with clora_changed true.
 *
 * Memory: a FILE recall in flight holds one small context (struct
 * pn_recall) until its answer; recalls are sent at most
 * PN_RECALLS_PER_CALL per conflicting call or tick.
 */
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "nfs/common/nfs_common.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/cb/nfs4_cb.h"
#include "nfs/v4/ops/nfs4_pnfs.h"
#include "nfs/v4/ops/nfs4_pnfs_internal.h"
#include "nfs/v4/xdr/nfs4_layout_xdr.h"

static struct log_limit lr_log_limit;

bool nfs4_pn_host(const struct sockaddr *sa, uint8_t out[NFS4_LAYOUT_HOST_SIZE])
{
	memset(out, 0, NFS4_LAYOUT_HOST_SIZE);
	if (sa->sa_family == AF_INET) {
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, NFS4_LAYOUT_HOST_SIZE);
		return true;
	}
	return false;
}

/* A recall in flight: whose, which stateid (NOMATCHING_LAYOUT ends it). */
struct pn_recall {
	uint64_t clientid;
	struct nfs4_stateid sid;
};

/* CB_LAYOUTRECALL's answer (loop thread): NFS4_OK, the client returns with LAYOUTRETURN;
 * §20.3.3 NOMATCHING_LAYOUT, it holds none: as returned; DELAY (the Linux client's while a
 * LAYOUTGET reply is in flight), sent again at the next tick; any other, or none, the lease
 * decides. */
static void pn_recall_done(void *arg, int32_t status)
{
	struct pn_recall *rc = arg;

	if (status == NFS4ERR_NOMATCHING_LAYOUT || status == NFS4ERR_DELAY) {
		struct nfs4_ltab *t = nfs4_pn_lock();

		if (t && status == NFS4ERR_DELAY)
			nfs4_ltab_recall_delay(t, rc->clientid, &rc->sid); /* §20.3.4: again at the next tick */
		else if (t)
			nfs4_ltab_recall_nomatch(t, rc->clientid, &rc->sid);
		nfs4_pn_unlock();
	} else if (status != NFS4_OK) {
		log_limited(&lr_log_limit, LOG_INFO,
			    "pnfs: CB_LAYOUTRECALL answered %d; revoked after a lease if not returned", status);
	}
	free(rc);
}

/* CB_LAYOUTRECALL (§20.3.1) of one client, FILE (rc given) or FSID (fsid). A recall the callback
 * path does not take is revoked after the lease as any unanswered one. */
static void pn_recall_send(uint64_t clientid, const struct nfs4_lrecall *rc, uint32_t fsid)
{
	struct nfs4_cb_op op;
	struct nfs4_cb_layoutrecall_args *la = &op.u.layoutrecall;
	struct pn_recall *ctx = NULL;

	memset(&op, 0, offsetof(struct nfs4_cb_op, u) + sizeof(*la));
	op.kind = NFS4_CB_OP_LAYOUTRECALL;
	la->layout_type = LAYOUT4_FLEX_FILES;
	la->iomode = LAYOUTIOMODE4_ANY;
	if (rc) {
		la->recall_type = LAYOUTRECALL4_FILE;
		la->fh.len = rc->klen <= NFS4_CB_FH_MAX ? rc->klen : 0;
		memcpy(la->fh.data, rc->key, la->fh.len);
		la->length = UINT64_MAX; /* the whole file, as granted */
		la->stateid = rc->sid;
		ctx = malloc(sizeof(*ctx));
		if (ctx)
			*ctx = (struct pn_recall){ .clientid = clientid, .sid = rc->sid };
	} else {
		/* the export is gone: clora_changed, its fsid4 (nfs4_attr_export_fsid: id, 0) */
		la->recall_type = LAYOUTRECALL4_FSID;
		la->changed = true;
		la->fsid_major = fsid;
	}
	if (!nfs4_cb_send(clientid, &op, ctx ? pn_recall_done : NULL, ctx))
		free(ctx);
}

#define PN_RECALLS_PER_CALL 8u

void nfs4_pnfs_recall_file(const uint8_t *fkey, uint32_t fkey_len, uint64_t except, const struct sockaddr *peer)
{
	struct nfs4_lrecall rc[PN_RECALLS_PER_CALL];
	uint8_t host[NFS4_LAYOUT_HOST_SIZE];
	bool by_host = peer && nfs4_pn_host(peer, host);
	struct nfs4_ltab *t;
	unsigned n = 0;

	if (!nfs4_pnfs_held())
		return; /* no layout held: no lock taken */
	t = nfs4_pn_lock();
	if (t)
		n = nfs4_ltab_recall_file(t, fkey, fkey_len, except, by_host ? host : NULL, nfs4_now(), rc,
					  PN_RECALLS_PER_CALL);
	nfs4_pn_unlock();
	for (unsigned i = 0; i < n; i++)
		pn_recall_send(rc[i].clientid, &rc[i], 0);
}

/* nfs/common's hook: an NFSv3 WRITE or SETATTR of the size, of no NFSv4 client. */
void nfs4_pn_hook(const uint8_t *fkey, uint32_t fkey_len, const struct sockaddr *peer)
{
	nfs4_pnfs_recall_file(fkey, fkey_len, 0, peer);
}

void nfs4_pnfs_export_gone(uint32_t fsid)
{
	uint64_t clients[NFS4_LAYOUT_BUCKETS];
	struct nfs4_ltab *t;
	unsigned n = 0, nc = 0;

	if (!nfs4_pnfs_held())
		return;
	t = nfs4_pn_lock();
	if (t)
		n = nfs4_ltab_revoke_fsid(t, fsid, nfs4_now(), clients, NFS4_LAYOUT_BUCKETS, &nc);
	nfs4_pn_unlock();
	if (n)
		log_info("pnfs: export %" PRIu32 " gone: %u layouts of %u clients revoked, recalled", fsid, n, nc);
	for (unsigned i = 0; i < nc; i++)
		pn_recall_send(clients[i], NULL, fsid);
}

void nfs4_pnfs_tick(uint64_t now)
{
	struct nfs4_lrecall rc[PN_RECALLS_PER_CALL];
	uint32_t lease = nfs4_pn_lease();
	struct nfs4_ltab *t;
	unsigned n = 0;

	if (!nfs4_pnfs_held())
		return;
	t = nfs4_pn_lock();
	/* §12.5.5.1: on time even when no client calls */
	if (t && nfs4_ltab_expire(t, now, lease))
		log_limited(&lr_log_limit, LOG_INFO, "pnfs: layouts not returned within the %" PRIu32 " s lease revoked",
			    lease);
	if (t)
		n = nfs4_ltab_resend(t, rc, PN_RECALLS_PER_CALL);
	nfs4_pn_unlock();
	for (unsigned i = 0; i < n; i++)
		pn_recall_send(rc[i].clientid, &rc[i], 0);
}

uint32_t nfs4_pnfs_seq_flags(uint64_t clientid)
{
	uint32_t lease = nfs4_pn_lease();
	struct nfs4_ltab *t;
	bool revoked = false;

	if (!nfs4_pnfs_held())
		return 0;
	t = nfs4_pn_lock();
	if (t) {
		(void)nfs4_ltab_expire(t, nfs4_now(), lease);
		revoked = nfs4_ltab_client_revoked(t, clientid);
	}
	nfs4_pn_unlock();
	/* RFC 8881 §18.46.3 */
	return revoked ? SEQ4_STATUS_RECALLABLE_STATE_REVOKED : 0;
}
