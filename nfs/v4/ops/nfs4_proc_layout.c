/*
 * nfs4_proc_layout.c - the pNFS metadata server's operations and state at
 * run time (see nfs4_pnfs.h): GETDEVICEINFO, LAYOUTGET, LAYOUTRETURN,
 * LAYOUTCOMMIT, LAYOUTERROR, LAYOUTSTATS over the layout table
 * (state/nfs4_layout.c) and the XDR of xdr/nfs4_layout_xdr.c.
 *
 * Decisions, each with its section:
 *  - One layout per LAYOUTGET: the whole file (offset 0, all ones), one
 *    mirror, one data server picked by the file handle's hash among those
 *    not marked unavailable (RFC 8435 §5.1; the Linux client stripes no
 *    further within a mirror), NFSv3 (ffdv_version 3), tightly coupled
 *    (§2.2: the handle is ours, the stateid anonymous, ffds_user/group the
 *    file's numeric owner, which a tightly coupled client does not use).
 *  - FF_FLAGS_NO_LAYOUTCOMMIT (§5.1): the data servers write the very file
 *    this server serves, so size and times are already ours; LAYOUTCOMMIT
 *    still answers (no size change) for clients that send it.
 *  - Return-on-close (RFC 8881 §18.43.3): set, so a client's last CLOSE of
 *    a file ends its layouts of it (nfs4_pnfs_closed()).
 *  - Device errors (LAYOUTERROR, an ff_ioerr4 in LAYOUTRETURN, RFC 8435
 *    §9.1-9.3) of a transport kind (NXIO, IO, SERVERFAULT, DELAY) mark the
 *    data server unavailable for [pnfs] ds-unavailable-seconds; with none
 *    left LAYOUTGET is LAYOUTUNAVAILABLE (RFC 8881 §18.43.3) and the
 *    client's I/O goes through this server.
 *  - No data server configured: not a metadata server, every layout
 *    operation is NFS4ERR_NOTSUPP as before pNFS (OPTIONAL, RFC 8881 §17).
 *    Exports without pnfs=flexfiles: LAYOUTGET answers
 *    NFS4ERR_LAYOUTUNAVAILABLE (RFC 8881 §18.43.3).
 *  - Recalls (RFC 8881 §12.5.5, CB_LAYOUTRECALL §20.3): a truncate
 *    (SETATTR of the size) or REMOVE through this server by another client,
 *    an NFSv3 WRITE or SETATTR of the size (the hook of nfs/common:
 *    nfs_layout_conflict) from another address than the holder's (the
 *    holder's own I/O to its data server is no conflict) recall the other
 *    clients' layouts of the file: type FILE, iomode ANY, clora_changed
 *    false (the layout is unchanged: the change goes to the same file).
 *    The conflicting operation does not wait (the data servers write this
 *    very file, RFC 8435 §2.2). LAYOUTGET of the file answers
 *    RECALLCONFLICT until the return (§18.43.3); a recall not returned
 *    within a lease is revoked (§12.5.5.1) and SEQUENCE says
 *    RECALLABLE_STATE_REVOKED for a lease or until the client starts over
 *    (nfs4_layout.h); NOMATCHING_LAYOUT (§20.3.3)
 *    counts as a return. An export gone: its layouts are revoked at once
 *    (its handles are stale, nothing could be returned) and each holder
 *    gets CB_LAYOUTRECALL FSID with clora_changed true.
 */
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grace.h"
#include "core/log.h"
#include "nfs/common/nfs_common.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/cb/nfs4_cb.h"
#include "nfs/v4/ops/nfs4_pnfs.h"
#include "nfs/v4/state/nfs4_layout.h"
#include "nfs/v4/xdr/nfs4_layout_xdr.h"

/* deviceid4: a tag, then the data server's index + 1 (big-endian) in the last 4 bytes. */
static const uint8_t pn_devid_tag[4] = { 'r', 'n', 'f', 'd' };

static struct {
	pthread_mutex_t mu;
	bool ready;                    /* between nfs4_pnfs_init() and _release() */
	struct nfs4_ltab t;            /* under mu */
	struct nfs4_pnfs_ds ds[NFS4_PNFS_DS_MAX];
	unsigned nds;
	unsigned unavailable_s;
	uint32_t lease;                /* the server's lease: a recall's wait (§12.5.5.1) */
	uint64_t down_until[NFS4_PNFS_DS_MAX]; /* nfs4_now() seconds; under mu */
	uint64_t ds_layouts[NFS4_PNFS_DS_MAX], ds_errors[NFS4_PNFS_DS_MAX]; /* under mu */
} pn = { .mu = PTHREAD_MUTEX_INITIALIZER };
static atomic_uint pn_count; /* records held: the purge hook's fast path */
static struct log_limit pn_log_limit;

void nfs4_pnfs_configure(const struct nfs4_pnfs_ds *ds, unsigned n, unsigned unavailable_s)
{
	pthread_mutex_lock(&pn.mu);
	pn.nds = n < NFS4_PNFS_DS_MAX ? n : NFS4_PNFS_DS_MAX;
	memcpy(pn.ds, ds, pn.nds * sizeof(*ds));
	pn.unavailable_s = unavailable_s;
	memset(pn.down_until, 0, sizeof(pn.down_until));
	pthread_mutex_unlock(&pn.mu);
}

static void pn_hook(const uint8_t *fkey, uint32_t fkey_len, const struct sockaddr *peer);

void nfs4_pnfs_init(uint32_t boot, uint32_t lease)
{
	pthread_mutex_lock(&pn.mu);
	if (pn.ready)
		nfs4_ltab_release(&pn.t);
	nfs4_ltab_init(&pn.t, boot, 0, 0);
	pn.lease = lease;
	pn.ready = true;
	atomic_store(&pn_count, 0);
	pthread_mutex_unlock(&pn.mu);
	if (nfs4_pnfs_mds())
		(void)nfs_layout_hook_set(pn_hook); /* NFSv3's conflicting changes come here from now on */
}

void nfs4_pnfs_release(void)
{
	pthread_mutex_lock(&pn.mu);
	if (pn.ready)
		nfs4_ltab_release(&pn.t);
	pn.ready = false;
	atomic_store(&pn_count, 0);
	pthread_mutex_unlock(&pn.mu);
}

static void pn_unlock(void)
{
	atomic_store(&pn_count, pn.t.count + pn.t.revoked_clients);
	pthread_mutex_unlock(&pn.mu);
}

bool nfs4_pnfs_mds(void)
{
	return pn.nds > 0;
}

void nfs4_pnfs_client_gone(uint64_t clientid)
{
	if (!atomic_load(&pn_count))
		return;
	pthread_mutex_lock(&pn.mu);
	if (pn.ready)
		nfs4_ltab_purge_client(&pn.t, clientid);
	pn_unlock();
}

void nfs4_pnfs_closed(uint64_t clientid, const uint8_t *fkey, uint32_t fkey_len)
{
	if (!atomic_load(&pn_count))
		return;
	pthread_mutex_lock(&pn.mu);
	if (pn.ready)
		nfs4_ltab_close(&pn.t, clientid, fkey, fkey_len);
	pn_unlock();
}

unsigned nfs4_pnfs_client_layouts(uint64_t clientid)
{
	unsigned n = 0;

	if (!atomic_load(&pn_count))
		return 0;
	pthread_mutex_lock(&pn.mu);
	if (pn.ready)
		n = nfs4_ltab_client_count(&pn.t, clientid);
	pthread_mutex_unlock(&pn.mu);
	return n;
}

void nfs4_pnfs_stats(struct nfs4_pnfs_stats *out)
{
	uint64_t now = nfs4_now();

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&pn.mu);
	out->layouts = pn.t.count;
	out->clients = pn.t.nclients;
	out->granted = pn.t.granted;
	out->returned = pn.t.returned;
	out->closed = pn.t.closed;
	out->purged = pn.t.purged;
	out->recalling = pn.t.recalling;
	out->recalls = pn.t.recalls;
	out->recall_returned = pn.t.recall_returned;
	out->revoked = pn.t.revoked;
	out->nds = pn.nds;
	for (unsigned i = 0; i < pn.nds; i++) {
		out->ds[i].ds = pn.ds[i];
		out->ds[i].layouts = pn.ds_layouts[i];
		out->ds[i].errors = pn.ds_errors[i];
		out->ds[i].unavailable = pn.down_until[i] > now;
	}
	pthread_mutex_unlock(&pn.mu);
}

/* ---- recalls (RFC 8881 §12.5.5) ---- */

/* A client's address as the layout table keeps it (IPv4 as v4-mapped IPv6). false: not IP. */
static bool pn_host(const struct sockaddr *sa, uint8_t out[NFS4_LAYOUT_HOST_SIZE])
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
		pthread_mutex_lock(&pn.mu);
		if (pn.ready && status == NFS4ERR_DELAY)
			nfs4_ltab_recall_delay(&pn.t, rc->clientid, &rc->sid); /* §20.3.4: again at the next tick */
		else if (pn.ready)
			nfs4_ltab_recall_nomatch(&pn.t, rc->clientid, &rc->sid);
		pn_unlock();
	} else if (status != NFS4_OK) {
		log_limited(&pn_log_limit, LOG_INFO,
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
	bool by_host = peer && pn_host(peer, host);
	unsigned n = 0;

	if (!atomic_load(&pn_count))
		return; /* no layout held: no lock taken */
	pthread_mutex_lock(&pn.mu);
	if (pn.ready)
		n = nfs4_ltab_recall_file(&pn.t, fkey, fkey_len, except, by_host ? host : NULL, nfs4_now(), rc,
					  PN_RECALLS_PER_CALL);
	pn_unlock();
	for (unsigned i = 0; i < n; i++)
		pn_recall_send(rc[i].clientid, &rc[i], 0);
}

/* nfs/common's hook: an NFSv3 WRITE or SETATTR of the size, of no NFSv4 client. */
static void pn_hook(const uint8_t *fkey, uint32_t fkey_len, const struct sockaddr *peer)
{
	nfs4_pnfs_recall_file(fkey, fkey_len, 0, peer);
}

void nfs4_pnfs_recall_at(const struct nfs_export *exp, const struct be_cred *cr, const struct be_obj *dir,
			 const char *name, uint64_t except)
{
	struct nfs_fh fh;

	if (atomic_load(&pn_count) && nfs4_name_file_fh(exp, cr, dir, false, name, &fh))
		nfs4_pnfs_recall_file(fh.data, fh.len, except, NULL);
}

void nfs4_pnfs_export_gone(uint32_t fsid)
{
	uint64_t clients[NFS4_LAYOUT_BUCKETS];
	unsigned n = 0, nc = 0;

	if (!atomic_load(&pn_count))
		return;
	pthread_mutex_lock(&pn.mu);
	if (pn.ready)
		n = nfs4_ltab_revoke_fsid(&pn.t, fsid, nfs4_now(), clients, NFS4_LAYOUT_BUCKETS, &nc);
	pn_unlock();
	if (n)
		log_info("pnfs: export %" PRIu32 " gone: %u layouts of %u clients revoked, recalled", fsid, n, nc);
	for (unsigned i = 0; i < nc; i++)
		pn_recall_send(clients[i], NULL, fsid);
}

void nfs4_pnfs_tick(uint64_t now)
{
	struct nfs4_lrecall rc[PN_RECALLS_PER_CALL];
	unsigned n = 0;

	if (!atomic_load(&pn_count))
		return;
	pthread_mutex_lock(&pn.mu);
	/* §12.5.5.1: on time even when no client calls */
	if (pn.ready && nfs4_ltab_expire(&pn.t, now, pn.lease))
		log_limited(&pn_log_limit, LOG_INFO, "pnfs: layouts not returned within the %" PRIu32 " s lease revoked",
			    pn.lease);
	if (pn.ready)
		n = nfs4_ltab_resend(&pn.t, rc, PN_RECALLS_PER_CALL);
	pn_unlock();
	for (unsigned i = 0; i < n; i++)
		pn_recall_send(rc[i].clientid, &rc[i], 0);
}

uint32_t nfs4_pnfs_seq_flags(uint64_t clientid)
{
	bool revoked = false;

	if (!atomic_load(&pn_count))
		return 0;
	pthread_mutex_lock(&pn.mu);
	if (pn.ready) {
		(void)nfs4_ltab_expire(&pn.t, nfs4_now(), pn.lease);
		revoked = nfs4_ltab_client_revoked(&pn.t, clientid);
	}
	pn_unlock();
	/* RFC 8881 §18.46.3 */
	return revoked ? SEQ4_STATUS_RECALLABLE_STATE_REVOKED : 0;
}

unsigned nfs4_pnfs_list(struct nfs4_lo_info *out, unsigned max)
{
	unsigned n = 0;

	pthread_mutex_lock(&pn.mu);
	if (pn.ready)
		n = nfs4_ltab_list(&pn.t, out, max);
	pthread_mutex_unlock(&pn.mu);
	return n;
}

/* ---- data servers ---- */

static void pn_devid(unsigned idx, uint8_t out[NFS4_DEVICEID_SIZE])
{
	uint32_t v = idx + 1;

	memset(out, 0, NFS4_DEVICEID_SIZE);
	memcpy(out, pn_devid_tag, sizeof(pn_devid_tag));
	out[12] = (uint8_t)(v >> 24), out[13] = (uint8_t)(v >> 16), out[14] = (uint8_t)(v >> 8), out[15] = (uint8_t)v;
}

/* The index a deviceid4 names, or -1 (not ours, or no such data server). */
static int pn_devid_index(const uint8_t id[NFS4_DEVICEID_SIZE])
{
	uint8_t want[NFS4_DEVICEID_SIZE];
	uint32_t v = (uint32_t)id[12] << 24 | (uint32_t)id[13] << 16 | (uint32_t)id[14] << 8 | id[15];

	if (v == 0 || v > pn.nds)
		return -1;
	pn_devid(v - 1, want);
	return memcmp(want, id, NFS4_DEVICEID_SIZE) ? -1 : (int)(v - 1);
}

/* The data server for a file: its handle's hash picks the first, the next available one after it
 * if that one is marked unavailable. -1: none available. Under mu. */
static int pn_pick(const struct nfs_fh *fh, uint64_t now)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < fh->len; i++)
		h = (h ^ fh->data[i]) * 16777619u;
	for (unsigned k = 0; k < pn.nds; k++) {
		unsigned i = (h + k) % pn.nds;

		if (pn.down_until[i] <= now)
			return (int)i;
	}
	return -1;
}

/* RFC 8435 §9.1: errors a client met at a data server; those of the transport's kind (not a
 * permission or a missing file, which are the caller's or the file's) take it out for a while. */
static void pn_errors(const struct nfs4_layout_errors *errs)
{
	uint64_t now = nfs4_now();

	if (!errs->n)
		return;
	pthread_mutex_lock(&pn.mu);
	for (uint32_t i = 0; i < errs->n; i++) {
		const struct nfs4_device_error *de = &errs->e[i];
		int idx = pn_devid_index(de->deviceid);

		if (idx < 0)
			continue;
		pn.ds_errors[idx]++;
		if (de->status != NFS4ERR_NXIO && de->status != NFS4ERR_IO && de->status != NFS4ERR_SERVERFAULT &&
		    de->status != NFS4ERR_DELAY)
			continue;
		if (pn.down_until[idx] <= now)
			log_limited(&pn_log_limit, LOG_WARNING,
				    "pnfs: a client reports data server %s:%u failing (nfsstat4 %" PRIu32
				    ", operation %" PRIu32 "): not handed out for %u s",
				    pn.ds[idx].addr, pn.ds[idx].port, de->status, de->opnum, pn.unavailable_s);
		pn.down_until[idx] = now + pn.unavailable_s;
	}
	pthread_mutex_unlock(&pn.mu);
}

/* The server's NFSv4 grace period runs (restart recovery, nfs4_recovery.h). */
static bool pn_in_grace(void)
{
	struct nfs4_recovery *r = nfs4_recovery_server();

	return r && nfs4_rec_in_grace(r, grace_now_ms());
}

/* ---- GETDEVICEINFO (RFC 8881 §18.40) ---- */

uint32_t nfs4_getdeviceinfo_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_getdeviceinfo_args *a = args;
	struct nfs4_getdeviceinfo_res *r = res;
	uint32_t need;
	int idx;

	(void)x;
	if (!nfs4_pnfs_mds())
		return NFS4ERR_NOTSUPP; /* not a metadata server: as without pNFS (OPTIONAL, RFC 8881 §17) */
	/* §18.40.3: a layout type we do not offer; a device id we never gave (NOENT) */
	if (a->layout_type != LAYOUT4_FLEX_FILES)
		return NFS4ERR_UNKNOWN_LAYOUTTYPE;
	idx = pn_devid_index(a->deviceid);
	if (idx < 0)
		return NFS4ERR_NOENT;
	/* RFC 8435 §4.1: NFSv3 (minor version 0), the largest I/O rnfsd takes, tightly coupled */
	if (!nfs4_netaddr_make(&r->addr.addr, pn.ds[idx].addr, pn.ds[idx].port, pn.ds[idx].rdma))
		return NFS4ERR_SERVERFAULT;
	r->addr.version = 3;
	r->addr.minorversion = 0;
	r->addr.rsize = r->addr.wsize = NFS4_MAX_IO;
	r->addr.tightly_coupled = true;
	/* §18.40.3: a device address larger than gdia_maxcount (0: no limit, as knfsd) is TOOSMALL */
	need = nfs4_getdeviceinfo_size(&r->addr);
	if (a->maxcount && need > a->maxcount) {
		r->mincount = need;
		return NFS4ERR_TOOSMALL;
	}
	return NFS4_OK;
}

void nfs4_getdeviceinfo_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	(void)x;
	nfs4_enc_getdeviceinfo_res(e, status, res);
}

/* ---- LAYOUTGET (RFC 8881 §18.43) ---- */

static void sid_to_layout(const struct nfs4_stateid *s, struct nfs4_layout_sid *l)
{
	l->seqid = s->seqid;
	memcpy(l->other, s->other, sizeof(l->other));
}

static void sid_from_layout(const struct nfs4_layout_sid *l, struct nfs4_stateid *s)
{
	s->seqid = l->seqid;
	memcpy(s->other, l->other, sizeof(s->other));
}

/*
 * The current file for a layout operation, with loga_stateid checked (§18.43.3: an open, lock,
 * delegation or layout stateid of this client for the file, an open's for the iomode's access;
 * special ones are BAD_STATEID).
 * *in_layout: the layout stateid (NULL for the others). ob is put by the caller.
 */
static uint32_t layout_file(struct nfs4_ctx *x, const struct nfs4_layout_sid *lsid, uint32_t iomode,
			    struct nfs4_obj *ob, struct nfs4_stateid *sid, bool *is_layout)
{
	struct nfs4_stateid in;
	struct be_file *f = NULL;
	unsigned flags = 0;
	uint32_t status;

	memset(ob, 0, sizeof(*ob));
	sid_from_layout(lsid, &in);
	status = nfs4_stateid_resolve(x, &in, sid);
	if (status != NFS4_OK)
		return status;
	if (nfs4_stateid_kind(sid, x->minorversion) != NFS4_SID_ORDINARY)
		return NFS4ERR_BAD_STATEID;
	*is_layout = nfs4_ltab_is_layout(sid);
	if (*is_layout) {
		status = nfs4_obj_open(x->priv, &x->cur.fh, ob);
		return status == NFS4_OK ? nfs4_regular_check(x, ob) : status;
	}
	/* the open's access as for the I/O the layout is for (an O_WRONLY open gets RW layouts) */
	status = nfs4_io_file(x, &x->cur.fh, sid, ob,
			      iomode == LAYOUTIOMODE4_RW ? NFS4_SHARE_ACCESS_WRITE : NFS4_SHARE_ACCESS_READ, &f, &flags);
	if (f)
		be_file_put(ob->exp->fs, f);
	return status;
}

/* The layout for the file on data server idx (RFC 8435 §5.1). */
static void layout_fill(struct nfs4_ctx *x, const struct nfs4_obj *ob, unsigned idx, struct nfs4_ff_layout *l)
{
	memset(l, 0, sizeof(*l));
	pn_devid(idx, l->deviceid);
	l->efficiency = 1;
	/* §2.2 tight coupling: our own handle; §5.1: the anonymous stateid for an NFSv3 data server */
	l->fh_len = x->cur.fh.len;
	memcpy(l->fh, x->cur.fh.data, x->cur.fh.len);
	snprintf(l->user, sizeof(l->user), "%" PRIu32, (ob->attr.valid & BE_AT_UID) ? ob->attr.uid : 0);
	snprintf(l->group, sizeof(l->group), "%" PRIu32, (ob->attr.valid & BE_AT_GID) ? ob->attr.gid : 0);
	l->flags = FF_FLAGS_NO_LAYOUTCOMMIT;
}

/* §18.43.3: what is wrong with the arguments alone. */
static uint32_t layoutget_args_check(const struct nfs4_layoutget_args *a)
{
	if (!nfs4_pnfs_mds())
		return NFS4ERR_NOTSUPP;
	if (a->layout_type != LAYOUT4_FLEX_FILES)
		return NFS4ERR_UNKNOWN_LAYOUTTYPE;
	if (a->iomode != LAYOUTIOMODE4_READ && a->iomode != LAYOUTIOMODE4_RW)
		return NFS4ERR_BADIOMODE;
	/* "loga_length less than loga_minlength", or a minimum range past the largest offset */
	if (a->length < a->minlength || (a->length != UINT64_MAX && a->offset > UINT64_MAX - a->length) ||
	    (a->minlength && a->offset > UINT64_MAX - a->minlength))
		return NFS4ERR_INVAL;
	return NFS4_OK;
}

uint32_t nfs4_layoutget_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_layoutget_args *a = args;
	struct nfs4_layoutget_res *r = res;
	struct nfs4_svc *s = x->priv;
	struct nfs4_stateid sid, out;
	struct nfs4_obj ob;
	struct nfs4_lfile lf;
	uint8_t host[NFS4_LAYOUT_HOST_SIZE];
	bool is_layout = false;
	uint32_t status = layoutget_args_check(a);
	int idx;

	if (status != NFS4_OK)
		return status;
	/* RFC 8881 §12.7.4, §18.43.3: no new layouts while clients may still reclaim (as knfsd) */
	if (pn_in_grace())
		return NFS4ERR_GRACE;
	status = layout_file(x, &a->sid, a->iomode, &ob, &sid, &is_layout);
	if (status == NFS4_OK && (ob.kind != NFS4_OBJ_EXPORT || ob.exp->cfg->pnfs != EXPORT_PNFS_FLEXFILES))
		status = NFS4ERR_LAYOUTUNAVAILABLE; /* §18.43.3: not for this file system */
	if (status == NFS4_OK && a->iomode == LAYOUTIOMODE4_RW && ob.opts && !ob.opts->rw)
		status = NFS4ERR_ROFS;
	if (status != NFS4_OK) {
		nfs4_obj_put(&ob);
		return status;
	}
	lf = (struct nfs4_lfile){ .key = x->cur.fh.data, .len = x->cur.fh.len, .fsid = ob.exp->id };
	if (x->call && x->call->conn && pn_host((const struct sockaddr *)&x->call->conn->peer, host))
		lf.host = host; /* its I/O to a data server here is no conflict (pn_hook) */
	pthread_mutex_lock(&pn.mu);
	idx = pn.ready ? pn_pick(&x->cur.fh, nfs4_now()) : -1;
	if (idx < 0) {
		status = NFS4ERR_LAYOUTUNAVAILABLE; /* no data server, or none available now */
	} else {
		layout_fill(x, &ob, (unsigned)idx, &r->ff);
		r->return_on_close = true;
		r->offset = 0;
		r->length = UINT64_MAX;
		r->iomode = a->iomode;
		/* §18.43.3: a result larger than loga_maxcount is TOOSMALL */
		if (nfs4_layoutget_size(r) > a->maxcount)
			status = NFS4ERR_TOOSMALL;
		else
			status = nfs4_ltab_get(&pn.t, s->clientid, &lf, is_layout ? &sid : NULL, a->iomode, true, &out);
		if (status == NFS4_OK) {
			pn.ds_layouts[idx]++;
			sid_to_layout(&out, &r->sid);
		}
	}
	pn_unlock();
	nfs4_obj_put(&ob);
	return status;
}

void nfs4_layoutget_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	(void)x;
	nfs4_enc_layoutget_res(e, status, res);
}

/* ---- LAYOUTRETURN (RFC 8881 §18.44) ---- */

/* The export id a handle names (0: a pseudo directory's, or not ours: no layouts there). */
static uint32_t fh_export_id(const struct nfs_fh *fh)
{
	struct be_handle bh;
	uint32_t id = 0;

	return nfs_fh_unwrap(fh, &id, &bh) ? id : 0;
}

uint32_t nfs4_layoutreturn_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_layoutreturn_args *a = args;
	struct nfs4_layoutreturn_res *r = res;
	struct nfs4_svc *s = x->priv;
	struct nfs4_stateid in, out;
	struct nfs4_lfile lf;
	uint32_t status = NFS4_OK;

	if (!nfs4_pnfs_mds())
		return NFS4ERR_NOTSUPP;
	if (a->layout_type != LAYOUT4_FLEX_FILES)
		return NFS4ERR_UNKNOWN_LAYOUTTYPE;
	if (a->iomode < LAYOUTIOMODE4_READ || a->iomode > LAYOUTIOMODE4_ANY)
		return NFS4ERR_BADIOMODE;
	/* FILE and FSID name the current filehandle's file or file system; ALL does not */
	if (a->returntype != LAYOUTRETURN4_ALL && !x->cur.set)
		return NFS4ERR_NOFILEHANDLE;
	pthread_mutex_lock(&pn.mu);
	if (!pn.ready) {
		status = a->returntype == LAYOUTRETURN4_FILE ? NFS4ERR_BAD_STATEID : NFS4_OK;
	} else if (a->returntype == LAYOUTRETURN4_FILE) {
		sid_from_layout(&a->sid, &in);
		lf = (struct nfs4_lfile){ .key = x->cur.fh.data, .len = x->cur.fh.len };
		status = nfs4_ltab_return_file(&pn.t, s->clientid, &lf, &in, a->iomode, &r->has_sid, &out);
		if (r->has_sid)
			sid_to_layout(&out, &r->sid);
	} else if (a->returntype == LAYOUTRETURN4_FSID) {
		nfs4_ltab_return_fsid(&pn.t, s->clientid, fh_export_id(&x->cur.fh));
	} else {
		nfs4_ltab_return_all(&pn.t, s->clientid);
	}
	pn_unlock();
	/* RFC 8435 §9.3: the errors of a FILE return count once the return is the client's own */
	if (status == NFS4_OK && a->returntype == LAYOUTRETURN4_FILE)
		pn_errors(&a->ff.errors);
	return status;
}

void nfs4_layoutreturn_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	(void)x;
	nfs4_enc_layoutreturn_res(e, status, res);
}

/* ---- LAYOUTCOMMIT (RFC 8881 §18.42), LAYOUTERROR, LAYOUTSTATS (RFC 7862 §15.6, §15.7) ---- */

/* The layout stateid is the session's client's for the current file: NFS4_OK, BAD_STATEID. */
static uint32_t layout_sid_check(struct nfs4_ctx *x, const struct nfs4_layout_sid *lsid, uint32_t *iomodes)
{
	struct nfs4_svc *s = x->priv;
	struct nfs4_stateid in;
	struct nfs4_lfile lf = { .key = x->cur.fh.data, .len = x->cur.fh.len };
	uint32_t status;

	sid_from_layout(lsid, &in);
	pthread_mutex_lock(&pn.mu);
	status = pn.ready ? nfs4_ltab_check(&pn.t, s->clientid, &lf, &in, iomodes) : NFS4ERR_BAD_STATEID;
	pthread_mutex_unlock(&pn.mu);
	return status;
}

uint32_t nfs4_layoutcommit_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_layoutcommit_args *a = args;
	struct nfs4_layoutcommit_res *r = res;
	uint32_t iomodes = 0, status;

	if (!nfs4_pnfs_mds())
		return NFS4ERR_NOTSUPP;
	if (a->layout_type != LAYOUT4_FLEX_FILES)
		return NFS4ERR_UNKNOWN_LAYOUTTYPE;
	/* §18.42.3: loca_reclaim commits what was written before a restart, only in the grace period;
	 * the layout state is gone with the restart (not checked), and nothing is left to commit */
	if (a->reclaim) {
		r->size_changed = false;
		return pn_in_grace() ? NFS4_OK : NFS4ERR_NO_GRACE;
	}
	status = layout_sid_check(x, &a->sid, &iomodes);
	/* §18.42.3: only what was written under an RW layout is committed */
	if (status == NFS4_OK && !(iomodes & NFS4_LAYOUT_IO_RW))
		status = NFS4ERR_BADIOMODE;
	/* RFC 8435 §2.2 tight coupling: the data servers wrote this server's own file, whose size and
	 * times are already current: nothing to change (locr_newsize: no change) */
	r->size_changed = false;
	return status;
}

void nfs4_layoutcommit_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	(void)x;
	nfs4_enc_layoutcommit_res(e, status, res);
}

uint32_t nfs4_layouterror_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_layouterror_args *a = args;
	uint32_t iomodes, status;

	(void)res;
	if (!nfs4_pnfs_mds())
		return NFS4ERR_NOTSUPP;
	status = layout_sid_check(x, &a->sid, &iomodes);
	if (status == NFS4_OK)
		pn_errors(&a->errors); /* RFC 7862 §15.6.3: the server may stop handing the device out */
	return status;
}

uint32_t nfs4_layoutstats_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_layoutstats_args *a = args;
	uint32_t iomodes;

	(void)res;
	/* RFC 7862 §15.7.3: informational; checked, then dropped (no per-file statistics yet) */
	if (!nfs4_pnfs_mds())
		return NFS4ERR_NOTSUPP;
	if (a->layout_type != LAYOUT4_FLEX_FILES)
		return NFS4ERR_UNKNOWN_LAYOUTTYPE;
	return layout_sid_check(x, &a->sid, &iomodes);
}
