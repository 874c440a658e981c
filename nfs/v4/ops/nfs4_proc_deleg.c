/*
 * nfs4_proc_deleg.c - delegations served (RFC 8881 §10.4, RFC 7530 §10.4):
 * the server's one delegation table (nfs4_deleg.h, pure) under a mutex,
 * OPEN's grant, the recall of another client's delegation when an
 * operation conflicts with it (CB_RECALL through nfs4_cb_send(); the
 * operation answers NFS4ERR_DELAY meanwhile, so no worker waits), its
 * revocation one lease after an unanswered recall, DELEGRETURN (§18.6),
 * DELEGPURGE (§18.5: NOTSUPP, as §18.5.3 allows a server without
 * CLAIM_DELEGATE_PREV), and delegation stateids in READ/WRITE,
 * TEST_STATEID and FREE_STATEID. NFSv3 and NLM reach the recall through
 * the hook of nfs/common (nfs_deleg_hook_set(), set when the table starts).
 *
 * The table is set up with the server's live state (nfs4_deleg_init() from
 * nfs4_setup.c: the boot time, the lease a recall waits); the stats read its
 * counts (nfs4_deleg_stats()).
 *
 * Lock order: nothing is called with dl_mu held but the pure table; the
 * client records' lock may be held when nfs4_deleg_client_gone() takes it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "core/log.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/cb/nfs4_cb.h"
#include "nfs/v4/state/nfs4_deleg.h"

#define DL_RECALLS_PER_CALL 4u
#define DL_RECALL_ANY_TARGETS 16u

static pthread_mutex_t dl_mu = PTHREAD_MUTEX_INITIALIZER;
static struct nfs4_dtab dl_tab;
static bool dl_ready;
static atomic_bool dl_enabled = true;    /* [nfsv4] delegations */
static atomic_bool dl_write = true;      /* ... = yes: write delegations too (read: not) */
static atomic_bool dl_dir_enabled;        /* [nfsv4] directory-delegations */
static atomic_uint dl_count;              /* dl_tab.count, read without the lock */
static atomic_uint dl_ndir;               /* dl_tab's directory delegations, read without the lock */
static uint64_t dl_revoked_seen;          /* dl_tab.revoked at the last dl_unlock() */
static atomic_ullong dl_lease_refused;     /* grants undone: the file's lease not to be had */
static atomic_ullong dl_notify_pending;    /* CB_NOTIFYs queued or in flight (a gauge) */
static uint64_t dl_recall_any_at;         /* the last CB_RECALL_ANY round (seconds) */
static uint32_t dl_lease = NFS4_LEASE_TIME; /* the server's lease (nfs4_deleg_init): a recall's wait */
static struct nfs4_stab *dl_stab; /* the open table (nfs4_deleg_init): a purged client's verdict */
static uint32_t dl_break_wait;            /* a lease-break recall's wait (0: dl_lease), dl_break_wait_of() */
static struct log_limit dl_limit;
static const struct nfs_deleg_hook dl_hook;
static const struct nfs4_deleg_watch_hooks dl_watch_hooks;

/* nfs4_dtab_break_wait(), said once at start-up when it shortens a recall. */
static uint32_t dl_break_wait_of(uint32_t lease, unsigned break_s, bool enabled)
{
	uint32_t wait = nfs4_dtab_break_wait(lease, break_s);

	if (wait && enabled)
		log_msg(LOG_NOTICE, "nfs4: fs.lease-break-time is %u s, under the %u s lease: a delegation recalled for "
			"a local process is revoked after %u s (sysctl -w fs.lease-break-time=%u gives it the whole lease)",
			break_s, lease, wait, lease + NFS4_DL_BREAK_MARGIN);
	return wait;
}

void nfs4_deleg_init(uint32_t boot, uint32_t lease, struct nfs4_stab *stab)
{
	uint32_t bw = dl_break_wait_of(lease, be_lease_break_time(), atomic_load(&dl_enabled));

	pthread_mutex_lock(&dl_mu);
	nfs4_dtab_init(&dl_tab, boot);
	dl_lease = lease;
	dl_break_wait = bw;
	dl_stab = stab;
	dl_ready = true;
	pthread_mutex_unlock(&dl_mu);
	atomic_store(&dl_count, 0);
	atomic_store(&dl_ndir, 0);
	(void)nfs_deleg_hook_set(&dl_hook); /* NFSv3's and NLM's conflicts come here from now on */
	nfs4_deleg_watch_hooks(&dl_watch_hooks); /* and local processes' changes of delegated files */
}

void nfs4_deleg_configure(bool enabled, bool write)
{
	atomic_store(&dl_enabled, enabled);
	atomic_store(&dl_write, write);
}

bool nfs4_deleg_enabled(void)
{
	return atomic_load(&dl_enabled);
}

void nfs4_deleg_dir_configure(bool enabled)
{
	atomic_store(&dl_dir_enabled, enabled);
}

static void dl_lock(void)
{
	pthread_mutex_lock(&dl_mu);
}

/* Unlock; the lock-free count follows the table (the stats read the table:
 * nfs4_deleg_stats()). A delegation gone or revoked since: the leases of
 * files left without one go (the local processes waiting on them proceed). */
static void dl_unlock(void)
{
	bool fewer = dl_tab.count < atomic_load(&dl_count) || dl_tab.revoked != dl_revoked_seen;

	dl_revoked_seen = dl_tab.revoked;
	atomic_store(&dl_count, dl_tab.count);
	atomic_store(&dl_ndir, dl_tab.nkind[NFS4_DL_KIND_DIR]);
	pthread_mutex_unlock(&dl_mu);
	if (fewer)
		nfs4_deleg_watch_sweep();
}

void nfs4_deleg_client_gone(uint64_t clientid)
{
	if (!dl_ready || !atomic_load(&dl_count))
		return;
	dl_lock();

	nfs4_dtab_purge_client(&dl_tab, clientid);
	dl_unlock();
}

unsigned nfs4_deleg_revoke_files(bool (*match)(const uint8_t *key, uint32_t len, void *arg), void *arg)
{
	unsigned n;

	if (!dl_ready || !atomic_load(&dl_count))
		return 0;
	dl_lock();
	n = nfs4_dtab_revoke_files(&dl_tab, match, arg);
	dl_unlock();
	return n;
}

uint64_t nfs4_deleg_caller(const struct nfs4_ctx *x)
{
	const struct nfs4_svc *s = x->priv;

	return x->minorversion >= 1 && s->seq_new ? s->clientid : 0;
}

/* CB_RECALL's outcome: an error or no answer changes nothing; the lease
 * running since the recall decides (RFC 8881 §10.4.6). */
static void recall_done(void *arg, int32_t status)
{
	(void)arg;
	if (status != NFS4_OK)
		log_limited(&dl_limit, LOG_INFO, "nfs4: CB_RECALL answered %d; revoked after a lease if not returned",
			    status);
}

/* RFC 8881 §20.2: CB_RECALL(stateid, truncate false, fh) to the holder. */
static void send_recalls(const struct nfs4_dl_recall *r, unsigned n)
{
	struct nfs4_cb_op op;

	for (unsigned i = 0; i < n; i++) {
		memset(&op, 0, sizeof(op.u.recall) + offsetof(struct nfs4_cb_op, u));
		op.kind = NFS4_CB_OP_RECALL;
		op.u.recall.stateid = r[i].sid;
		op.u.recall.truncate = false;
		op.u.recall.fh.len = r[i].fkey_len;
		memcpy(op.u.recall.fh.data, r[i].fkey, r[i].fkey_len);
		if (nfs4_cb_send(r[i].clientid, &op, recall_done, NULL))
			continue;
		pthread_mutex_lock(&dl_mu);
		nfs4_dtab_recall_unsent(&dl_tab, &r[i].sid); /* again at the next conflicting call */
		pthread_mutex_unlock(&dl_mu);
	}
}

bool nfs4_deleg_any(void)
{
	return dl_ready && atomic_load(&dl_count) != 0;
}

bool nfs4_deleg_held(const uint8_t *fkey, uint32_t fkey_len)
{
	bool held;

	if (!nfs4_deleg_any())
		return false;
	pthread_mutex_lock(&dl_mu);
	held = nfs4_dtab_file_held(&dl_tab, fkey, fkey_len);
	pthread_mutex_unlock(&dl_mu);
	return held;
}

uint32_t nfs4_deleg_break(const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid, unsigned acc)
{
	return nfs4_deleg_break_by(fkey, fkey_len, clientid, acc, NFS4_DL_BY_NFS4);
}

uint32_t nfs4_deleg_break_by(const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid, unsigned acc,
			     enum nfs4_dl_cause cause)
{
	struct nfs4_dl_recall r[DL_RECALLS_PER_CALL];
	uint64_t now;
	unsigned n;
	bool wait;

	if (!dl_ready || !atomic_load(&dl_count))
		return NFS4_OK; /* nothing delegated: no lock taken */
	now = nfs4_now();
	dl_lock();
	wait = nfs4_dtab_conflict(&dl_tab, fkey, fkey_len, clientid, (enum nfs4_dl_access)acc, cause, now, dl_lease,
				  r, DL_RECALLS_PER_CALL, &n);
	dl_unlock();
	send_recalls(r, n);
	/* RFC 8881 §10.4.1 (RFC 7530 §10.4.1): the conflicting request waits for the return. */
	return wait ? NFS4ERR_DELAY : NFS4_OK;
}

enum nfs4_dl_ga nfs4_deleg_ga_find(const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid, uint64_t *holder,
				   struct nfs4_stateid *sid)
{
	enum nfs4_dl_ga g;

	if (!dl_ready || !atomic_load(&dl_count))
		return NFS4_DL_GA_NONE;
	dl_lock();
	g = nfs4_dtab_getattr(&dl_tab, fkey, fkey_len, clientid, holder, sid);
	dl_unlock();
	return g;
}

bool nfs4_deleg_ga_merge(const struct nfs4_stateid *sid, const struct nfs4_dl_cbattr *cb, int64_t now_sec,
			 uint32_t now_nsec, struct nfs4_dl_attr *a)
{
	dl_lock();
	bool ok = nfs4_dtab_cb_merge(&dl_tab, sid, cb, now_sec, now_nsec, a);

	dl_unlock();
	return ok;
}

uint32_t nfs4_deleg_break_at(const struct nfs_export *exp, const struct be_cred *cr, const struct be_obj *dir,
			     const char *name, uint64_t clientid)
{
	return nfs4_name_recall(exp, cr, dir, name, clientid, false);
}

uint32_t nfs4_deleg_break_name(struct nfs4_ctx *x, const struct nfs4_obj *dir, const char *name)
{
	return dir->exp ? nfs4_deleg_break_at(dir->exp, &dir->cred, &dir->o, name, nfs4_deleg_caller(x)) : NFS4_OK;
}

bool nfs4_deleg_dir_any(void)
{
	return dl_ready && atomic_load(&dl_ndir) != 0;
}

/* The access a change of a directory's entries is to its delegations. */
static enum nfs4_dl_access dir_acc(enum nfs_dir_change ch)
{
	static const enum nfs4_dl_access acc[] = {
		[NFS_DIR_OTHER] = NFS4_DL_ACC_NS, [NFS_DIR_ADD] = NFS4_DL_ACC_DIR_ADD,
		[NFS_DIR_REMOVE] = NFS4_DL_ACC_DIR_REMOVE, [NFS_DIR_RENAME] = NFS4_DL_ACC_DIR_RENAME,
		[NFS_DIR_ATTRS] = NFS4_DL_ACC_DIR_ATTRS,
	};

	return acc[ch];
}

uint32_t nfs4_deleg_dir_changed(const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid, enum nfs_dir_change ch,
				enum nfs4_dl_cause cause)
{
	/* RFC 8881 §10.9.1: a change by the holder itself recalls none of its own (the
	 * table skips clientid's); every other holder's is recalled, the change waiting,
	 * but for an entry added or removed those granted its notification (told after, §10.9.2). */
	if (!nfs4_deleg_dir_any())
		return NFS4_OK; /* no directory delegated: no lock taken */
	return nfs4_deleg_break_by(fkey, fkey_len, clientid, dir_acc(ch), cause);
}

uint32_t nfs4_deleg_dir_break(struct nfs4_ctx *x, const struct nfs_fh *dir, enum nfs_dir_change ch)
{
	return nfs4_deleg_dir_changed(dir->data, dir->len, nfs4_deleg_caller(x), ch, NFS4_DL_BY_NFS4);
}

/* RFC 8881 §10.9.1: to cannot be told: its delegation is recalled instead. */
static void notify_recall(const struct nfs4_stateid *sid)
{
	struct nfs4_dl_recall r;

	dl_lock();
	bool recall = nfs4_dtab_recall_now(&dl_tab, sid, nfs4_now(), &r);

	dl_unlock();
	if (recall)
		send_recalls(&r, 1);
}

/* CB_NOTIFY's outcome (arg: its delegation's stateid counter word, nfs4_dtab_sid_of_counter). Not
 * answered NFS4_OK (an error, no answer in time, the path gone): the holder may have missed the change
 * and its view of the directory may be wrong, so the delegation is recalled (RFC 8881 §10.9.1). */
static void notify_done(void *arg, int32_t status)
{
	struct nfs4_stateid sid;
	bool live;

	atomic_fetch_sub(&dl_notify_pending, 1);
	if (status == NFS4_OK)
		return;
	log_limited(&dl_limit, LOG_INFO, "nfs4: CB_NOTIFY answered %d: the directory delegation is recalled", status);
	dl_lock();
	live = nfs4_dtab_sid_of_counter(&dl_tab, (uint32_t)(uintptr_t)arg, &sid);
	dl_unlock();
	if (live)
		notify_recall(&sid);
}

/* RFC 8881 §20.4.1 notify_attr4's ne_attrs for to: the directory attributes it asked and was granted
 * (to->dir_attrs), of a (the directory's after the change), a fattr4 into a->attrs. false: none of
 * them to be had, or more than NFS4_CB_DIR_ATTRS_MAX bytes (owner strings): a recall instead. */
static bool notify_dir_attrs(const struct nfs4_dl_recall *to, const struct be_attr *a, struct nfs4_cb_notify_args *na)
{
	struct nfs4_bitmap req = { .w = { to->dir_attrs[0], to->dir_attrs[1] } };
	struct nfs_fh fh = { .len = to->fkey_len };
	struct nfs4_attr_src src = { .a = a, .fh = &fh, .minorversion = 1, .lease_time = dl_lease };
	struct xdr_enc e;

	if (!a || !a->valid || to->fkey_len > sizeof(fh.data))
		return false;
	src.mounted_on_fileid = a->fileid;
	memcpy(fh.data, to->fkey, to->fkey_len);
	xdr_enc_init(&e, na->attrs, NFS4_CB_DIR_ATTRS_MAX);
	nfs4_attr_encode(&e, &req, &src);
	na->attrs_len = (uint32_t)xdr_enc_len(&e);
	/* an empty attrmask: none of the attributes asked could be given */
	return !e.overflow && na->attrs_len > 4u + 4u * NFS4_BITMAP_WORDS;
}

/* RFC 8881 §20.4.1 CB_NOTIFY4args of n for the holder to (its stateid, the directory). false: a
 * name over component4's limit, or attributes that cannot be told (not to be told). */
static bool notify_args(const struct nfs4_dl_recall *to, const struct nfs_dir_note *n, struct nfs4_cb_op *op)
{
	static const uint32_t type[] = {
		[NFS_DIR_ADD] = NOTIFY4_ADD_ENTRY, [NFS_DIR_REMOVE] = NOTIFY4_REMOVE_ENTRY,
		[NFS_DIR_RENAME] = NOTIFY4_RENAME_ENTRY, [NFS_DIR_ATTRS] = NOTIFY4_CHANGE_DIR_ATTRS,
	};
	bool attrs = n->kind == NFS_DIR_ATTRS;
	size_t len = attrs ? 0 : strlen(n->name), new_len = n->kind == NFS_DIR_RENAME ? strlen(n->newname) : 0;

	if (len > NFS4_CB_NAME_MAX || new_len > NFS4_CB_NAME_MAX || n->kind == NFS_DIR_OTHER)
		return false;
	memset(op, 0, sizeof(op->u.notify) + offsetof(struct nfs4_cb_op, u));
	op->kind = NFS4_CB_OP_NOTIFY;
	op->u.notify.stateid = to->sid;
	op->u.notify.fh.len = to->fkey_len;
	memcpy(op->u.notify.fh.data, to->fkey, to->fkey_len);
	op->u.notify.type = type[n->kind];
	if (attrs) /* §20.4.1: NOTIFY4_CHANGE_DIR_ATTRS, the directory's new values */
		return notify_dir_attrs(to, n->attrs, &op->u.notify);
	/* §20.4.3: NOTIFY4_ADD_ENTRY (no cookie: optional), NOTIFY4_REMOVE_ENTRY (nrm_old_entry_cookie 0:
	 * the removed entry's READDIR cookie is not kept; knfsd's CB_NOTIFY series sends 0 too),
	 * NOTIFY4_RENAME_ENTRY (the old entry removed, the new added); §18.26.4: an entry the new name
	 * replaced is the add's nad_old_entry */
	op->u.notify.cookie = 0;
	op->u.notify.replaced = n->replaced && n->kind != NFS_DIR_REMOVE;
	op->u.notify.name_len = (uint32_t)len;
	memcpy(op->u.notify.name, n->name, len);
	op->u.notify.new_len = (uint32_t)new_len;
	if (new_len)
		memcpy(op->u.notify.new_name, n->newname, new_len);
	return true;
}

/* The attributes of the directory fkey names (of the served export its handle names), from any thread
 * (the watch thread too: the local backend's open by handle and fstat, no wait on a network; directory
 * delegations are only granted on its exports). false: none to be had. */
static bool dir_attrs_of(const uint8_t *fkey, uint32_t fkey_len, struct be_attr *attr)
{
	struct nfs_fh fh = { .len = fkey_len };
	struct be_obj o = BE_OBJ_INIT;
	const struct nfs_export *e;
	struct nfs_exports *tbl;
	struct be_handle bh;
	uint32_t id;
	bool ok;

	if (fkey_len > sizeof(fh.data))
		return false;
	memcpy(fh.data, fkey, fkey_len);
	if (!nfs_fh_unwrap(&fh, &id, &bh) || (tbl = nfs_exports_get()) == NULL)
		return false;
	e = nfs_exports_by_id(tbl, id);
	ok = e && be_open_handle(e->fs, &bh, &o, attr) == 0 && attr->valid && attr->type == BE_DIR;
	if (e)
		be_obj_put(e->fs, &o);
	nfs_exports_put(tbl);
	return ok;
}

/* RFC 8881 §20.4: CB_NOTIFY(stateid, the directory, n) to the holder to; the client's callback queue
 * (NFS4_CB_QUEUE, in order, §20.4.3) is the bound: past it, or not to be told, a recall (false). */
static bool notify_one(const struct nfs4_dl_recall *to, const struct nfs_dir_note *n)
{
	struct nfs4_cb_op op;
	uintptr_t counter = nfs4_dtab_counter_of(&to->sid); /* notify_done finds it again */

	atomic_fetch_add(&dl_notify_pending, 1);
	if (notify_args(to, n, &op) && nfs4_cb_send(to->clientid, &op, notify_done, (void *)counter))
		return true;
	atomic_fetch_sub(&dl_notify_pending, 1);
	notify_recall(&to->sid);
	return false;
}

void nfs4_deleg_dir_note(const struct nfs_fh *dir, const struct nfs_dir_note *n)
{
	struct nfs4_dl_recall to[NFS4_DL_NOTIFY_MAX];
	struct nfs_dir_note an = { .kind = NFS_DIR_ATTRS };
	struct be_attr attr = { .valid = 0 };
	bool told[NFS4_DL_NOTIFY_MAX], attrs = false;
	unsigned count;

	if (!nfs4_deleg_dir_any())
		return;
	dl_lock();
	count = nfs4_dtab_dir_notified(&dl_tab, dir->data, dir->len, nfs4_dl_notify_of(dir_acc(n->kind)), to);
	dl_unlock();
	for (unsigned i = 0; i < count; i++) {
		told[i] = notify_one(&to[i], n);
		attrs |= told[i] && n->kind != NFS_DIR_ATTRS && (to[i].dir_attrs[0] | to[i].dir_attrs[1]);
	}
	/* §20.4.1, as knfsd: an entry added, removed or renamed changed the directory's own attributes
	 * (change, times, size, links): the holders told of it and granted NOTIFY4_CHANGE_DIR_ATTRS are
	 * told their new values too, in a CB_NOTIFY of their own (none to be had: recalled) */
	if (!attrs)
		return;
	an.attrs = dir_attrs_of(dir->data, dir->len, &attr) ? &attr : NULL;
	for (unsigned i = 0; i < count; i++)
		if (told[i] && (to[i].dir_attrs[0] | to[i].dir_attrs[1]))
			(void)notify_one(&to[i], &an);
}

void nfs4_deleg_dir_added(const struct nfs_fh *dir, const char *name)
{
	const struct nfs_dir_note n = { .kind = NFS_DIR_ADD, .name = name };

	nfs4_deleg_dir_note(dir, &n);
}

uint64_t nfs4_deleg_notify_pending(void)
{
	return atomic_load(&dl_notify_pending);
}

/* RFC 8881 §20.6: CB_RECALL_ANY to the holders while the table is nearly full
 * (once a lease at most): each keeps half of what it has. */
static void recall_any(uint64_t now)
{
	uint64_t ids[DL_RECALL_ANY_TARGETS];
	unsigned keep[DL_RECALL_ANY_TARGETS];
	struct nfs4_cb_op op;
	unsigned n;
	bool dirs;

	pthread_mutex_lock(&dl_mu);
	if (dl_tab.count < NFS4_DELEG_PRESSURE || now < dl_recall_any_at + dl_lease) {
		pthread_mutex_unlock(&dl_mu);
		return;
	}
	dl_recall_any_at = now;
	n = nfs4_dtab_holders(&dl_tab, ids, DL_RECALL_ANY_TARGETS);
	for (unsigned i = 0; i < n; i++)
		keep[i] = nfs4_dtab_client_count(&dl_tab, ids[i]) / 2;
	dirs = dl_tab.nkind[NFS4_DL_KIND_DIR] != 0;
	pthread_mutex_unlock(&dl_mu);
	memset(&op, 0, sizeof(op.u.recall_any) + offsetof(struct nfs4_cb_op, u));
	op.kind = NFS4_CB_OP_RECALL_ANY;
	op.u.recall_any.mask_len = 1;
	op.u.recall_any.mask[0] = 1u << RCA4_TYPE_MASK_RDATA_DLG | 1u << RCA4_TYPE_MASK_WDATA_DLG |
				  (dirs ? 1u << RCA4_TYPE_MASK_DIR_DLG : 0); /* RFC 8881 §20.6.1 */
	for (unsigned i = 0; i < n; i++) {
		op.u.recall_any.objects_to_keep = keep[i];
		(void)nfs4_cb_send(ids[i], &op, NULL, NULL); /* a hint: its outcome changes nothing */
	}
}

/* May the client's callback path carry a recall? UP; or, for a 4.1 session,
 * still being probed (as knfsd: a back channel is assumed good until it fails). */
static bool cb_usable(uint64_t clientid)
{
	struct nfs4_cb_stat st;

	if (!nfs4_cb_stat_of(clientid, &st))
		return false;
	return st.state == NFS4_CB_UP || (st.minor >= 1 && st.state == NFS4_CB_PROBING);
}

/* Has the open file byte-range locks of anyone (NLM, NFSv4, local processes)? */
static bool file_locked(struct be_fs *fs, struct be_file *f)
{
	/* No owner's: every lock on the file counts. */
	struct be_lock whole = { .type = BE_LOCK_WRITE, .offset = 0, .length = 0 };
	bool conflict = false;

	if (!f)
		return false;
	if (be_lock_test(fs, f, BE_LOCK_OWNER_NONE, &whole, &conflict, NULL) != 0)
		return true; /* cannot tell: as if locked, no delegation */
	return conflict;
}

/* The grant stands only with a watch for local processes' changes and,
 * where the backend has them, a lease (nfs4_deleg_watch.c); without them it
 * is undone (RFC 8881 §10.4: a server need not grant a delegation). A lease
 * refused for the file's other descriptors (EAGAIN) is contention (§18.16.2
 * WND4_CONTENTION), said in no log. */
static enum nfs4_dl_grant grant_watched(const struct nfs4_deleg_file *df, uint64_t clientid, enum nfs4_dl_grant g,
					struct nfs4_open_op_res *r, uint32_t *why)
{
	int err;

	if (g == NFS4_DL_GRANT_NONE ||
	    (err = nfs4_deleg_watch(df->fs, df->o, df->f, df->fkey, df->fkey_len, g == NFS4_DL_GRANT_WRITE)) == 0)
		return g;
	dl_lock();

	nfs4_dtab_ungrant(&dl_tab, &r->dsid);
	dl_unlock();
	atomic_fetch_add(&dl_lease_refused, err == EAGAIN);
	if (err != EAGAIN)
		log_limited(&dl_limit, LOG_NOTICE, "nfs4: no delegation for client %llx: the file cannot be watched or leased",
			    (unsigned long long)clientid);
	*why = err == EAGAIN ? NFS4_DL_WHY_CONTENTION : NFS4_DL_WHY_RESOURCE;
	return NFS4_DL_GRANT_NONE;
}

/* RFC 8881 §10.4.3: a write delegation's baseline, the file's change and size
 * as the OPEN leaves them (what the holder's CB_GETATTR answers are weighed
 * against). RFC 9754 §5: ts, an *_ATTRS_DELEG delegation, keeps the file's
 * times too; false: no attributes, so no such delegation (knfsd grants an
 * ordinary one then). */
static bool grant_base(const struct nfs4_deleg_file *df, const struct nfs4_stateid *sid, bool write, bool ts)
{
	struct be_attr at;

	if ((df->f ? be_file_getattr(df->fs, df->f, &at) : be_getattr(df->fs, df->o, &at)) != 0)
		return false; /* no baseline: the holder's first answer will count as a change */
	struct nfs4_dl_time a = { at.atime.sec, at.atime.nsec }, m = { at.mtime.sec, at.mtime.nsec };

	dl_lock();
	if (write)
		nfs4_dtab_set_base(&dl_tab, sid, at.change, at.size);
	if (ts)
		nfs4_dtab_set_ts(&dl_tab, sid, &a, &m);
	dl_unlock();
	return true;
}

void nfs4_deleg_open(struct nfs4_ctx *x, uint64_t clientid, const struct nfs4_deleg_file *df,
		     const struct nfs4_open_args *a, struct nfs4_open_op_res *r)
{
	const uint8_t *fkey = df->fkey;
	uint32_t fkey_len = df->fkey_len;
	struct nfs4_dl_ask ask = {
		.clientid = clientid, .minor = x->minorversion, .access = a->share_access & NFS4_SHARE_ACCESS_BOTH,
		.deny = a->share_deny, .want = a->share_access & OPEN4_SHARE_ACCESS_WANT_DELEG_MASK,
		.enabled = dl_ready && atomic_load(&dl_enabled),
		.read_only = !atomic_load(&dl_write),
		/* RFC 8881 §18.16.3: CLAIM_PREVIOUS reclaims (in grace, where nothing
		 * else opens), CLAIM_DELEGATE_CUR uses the one being returned. */
		.claim_ok = a->claim == CLAIM_NULL || a->claim == CLAIM_FH,
	};
	enum nfs4_dl_grant g;
	uint32_t why;

	if (!ask.enabled || !ask.claim_ok || ask.want == OPEN4_SHARE_ACCESS_WANT_NO_DELEG ||
	    ask.want == OPEN4_SHARE_ACCESS_WANT_CANCEL)
		return; /* open_deleg() answered these */
	ask.cb_up = cb_usable(clientid);
	ask.file_locked = ask.cb_up && file_locked(df->fs, df->f); /* no cb path: no grant, no need to ask */
	nfs4_stab_file_others(&nfs4_srv(x)->stab, fkey, fkey_len, clientid, &ask.others_open, &ask.others_write);
	dl_lock();

	g = nfs4_dtab_decide(&dl_tab, fkey, fkey_len, &ask, &why);
	if (g != NFS4_DL_GRANT_NONE && !nfs4_dtab_grant(&dl_tab, clientid, fkey, fkey_len,
							  g == NFS4_DL_GRANT_WRITE, &r->dsid)) {
		g = NFS4_DL_GRANT_NONE;
		why = NFS4_DL_WHY_RESOURCE;
	}
	dl_unlock();
	g = grant_watched(df, clientid, g, r, &why);
	/* RFC 9754 §5.2: a 4.2 client wanting delegated timestamps gets the *_ATTRS_DELEG kind. */
	bool ts = x->minorversion >= 2 && (a->share_access & OPEN4_SHARE_ACCESS_WANT_DELEG_TIMESTAMPS);

	if (g != NFS4_DL_GRANT_NONE && (g == NFS4_DL_GRANT_WRITE || ts))
		ts = grant_base(df, &r->dsid, g == NFS4_DL_GRANT_WRITE, ts) && ts;
	if (g != NFS4_DL_GRANT_NONE) {
		r->deleg = g == NFS4_DL_GRANT_WRITE ? (ts ? OPEN_DELEGATE_WRITE_ATTRS_DELEG : OPEN_DELEGATE_WRITE)
						    : (ts ? OPEN_DELEGATE_READ_ATTRS_DELEG : OPEN_DELEGATE_READ);
		recall_any(nfs4_now());
	} else if (x->minorversion >= 1 && ask.want != OPEN4_SHARE_ACCESS_WANT_NO_PREFERENCE) {
		/* RFC 8881 §18.16.3: a want not met says why. */
		r->deleg = OPEN_DELEGATE_NONE_EXT;
		r->why = why;
	}
}

bool nfs4_deleg_grant_dir(uint64_t clientid, uint32_t minor, bool grace, const uint8_t *fkey, uint32_t fkey_len,
			  uint32_t want, uint32_t attrs[2], uint32_t *granted, struct nfs4_stateid *sid)
{
	uint32_t asked[2] = { attrs[0], attrs[1] };
	struct nfs4_dl_ask ask = {
		.clientid = clientid, .minor = minor, .grace = grace,
		.enabled = dl_ready && atomic_load(&dl_enabled) && atomic_load(&dl_dir_enabled),
	};
	bool ok;

	if (!ask.enabled)
		return false;
	ask.cb_up = cb_usable(clientid);
	dl_lock();
	/* RFC 8881 §18.39.3: NOTIFY4_CHANGE_DIR_ATTRS only for attributes it can tell */
	want = nfs4_dl_dir_want(want, asked, attrs);
	ok = nfs4_dtab_decide_dir(&dl_tab, fkey, fkey_len, &ask) &&
	     nfs4_dtab_grant_dir(&dl_tab, clientid, fkey, fkey_len, want, granted, sid);
	if (ok && (*granted & NFS4_DL_NOTIFY_DIR_ATTRS))
		nfs4_dtab_set_dir_attrs(&dl_tab, sid, attrs);
	else
		attrs[0] = attrs[1] = 0;
	dl_unlock();
	return ok;
}

void nfs4_deleg_ungrant(const struct nfs4_stateid *sid)
{
	dl_lock();
	nfs4_dtab_ungrant(&dl_tab, sid);
	dl_unlock();
}

uint32_t nfs4_deleg_claim(uint64_t clientid, const struct nfs4_stateid *sid, const uint8_t *fkey, uint32_t fkey_len)
{
	if (!dl_ready || !nfs4_dtab_is_deleg(sid))
		return NFS4ERR_BAD_STATEID;
	dl_lock();
	uint32_t status = nfs4_dtab_check_claim(&dl_tab, clientid, sid, fkey, fkey_len);

	dl_unlock();
	return status;
}

uint32_t nfs4_deleg_set_times(uint64_t clientid, const struct nfs4_stateid *sid, uint32_t minor, const uint8_t *fkey,
			      uint32_t fkey_len, const struct nfs4_dl_time *now, struct nfs4_dl_times *tm)
{
	if (!dl_ready)
		return NFS4ERR_BAD_STATEID;
	dl_lock();
	uint32_t status = nfs4_dtab_set_times(&dl_tab, clientid, sid, minor, fkey, fkey_len, now, tm);

	dl_unlock();
	return status;
}

bool nfs4_deleg_ga_ts(const struct nfs4_stateid *sid)
{
	dl_lock();
	bool ts = nfs4_dtab_is_ts(&dl_tab, sid);

	dl_unlock();
	return ts;
}

/* An unknown delegation stateid of clientid's own (4.0: the stateid names its client) whose state
 * went with the client's purge: EXPIRED, or ADMIN_REVOKED after rnfsctl client revoke (RFC 7530
 * §13.1.5.1, as its open stateids answer), rather than BAD_STATEID. */
static uint32_t dl_gone(uint64_t clientid, const struct nfs4_stateid *sid, uint32_t status)
{
	uint32_t gone = status == NFS4ERR_BAD_STATEID && dl_stab ? nfs4_stab_gone(dl_stab, clientid, sid) : 0;

	return gone ? gone : status;
}

uint32_t nfs4_deleg_check_io(uint64_t clientid, const struct nfs4_stateid *sid, uint32_t minor, const uint8_t *fkey,
			     uint32_t fkey_len, uint32_t access)
{
	if (!dl_ready)
		return NFS4ERR_BAD_STATEID;
	dl_lock();
	uint32_t status = nfs4_dtab_check_io(&dl_tab, clientid, sid, minor, fkey, fkey_len, access);

	dl_unlock();
	return dl_gone(clientid, sid, status);
}

/* TEST_STATEID / FREE_STATEID of a delegation stateid: fn under the lock. */
static uint32_t dl_sid_call(uint32_t (*fn)(struct nfs4_dtab *t, uint64_t clientid, const struct nfs4_stateid *sid),
			    uint64_t clientid, const struct nfs4_stateid *sid)
{
	if (!dl_ready)
		return NFS4ERR_BAD_STATEID;
	dl_lock();
	uint32_t status = fn(&dl_tab, clientid, sid);

	dl_unlock();
	return status;
}

static uint32_t dtab_test(struct nfs4_dtab *t, uint64_t clientid, const struct nfs4_stateid *sid)
{
	return nfs4_dtab_test(t, clientid, sid);
}

uint32_t nfs4_deleg_test(uint64_t clientid, const struct nfs4_stateid *sid)
{
	return dl_sid_call(dtab_test, clientid, sid);
}

uint32_t nfs4_deleg_free(uint64_t clientid, const struct nfs4_stateid *sid)
{
	return dl_sid_call(nfs4_dtab_free, clientid, sid);
}

void nfs4_deleg_tick(uint64_t now)
{
	if (!dl_ready || !atomic_load(&dl_count))
		return;
	dl_lock();
	/* RFC 8881 §10.4.6: on time even when no client calls (a local process waits on the lease). */
	(void)nfs4_dtab_expire(&dl_tab, now, dl_lease);
	dl_unlock();
}

uint32_t nfs4_deleg_seq_flags(uint64_t clientid)
{
	uint32_t flags = 0;

	if (!dl_ready || !atomic_load(&dl_count))
		return 0;
	uint64_t now = nfs4_now();
	dl_lock();

	/* RFC 8881 §10.4.6: recalls not answered within a lease are revoked now
	 * (not only when the conflicting client retries), and §18.46.3 tells
	 * the holder until it frees them (ADMIN_STATE_REVOKED for those an administrator revoked). */
	(void)nfs4_dtab_expire(&dl_tab, now, dl_lease);
	flags = nfs4_dtab_client_revoked(&dl_tab, clientid);
	dl_unlock();
	return flags;
}

/* RFC 8881 §18.6.3 (RFC 7530 §16.8): the current filehandle is the file. */
uint32_t nfs4_delegreturn_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_stateid_args *a = args;
	struct nfs4_stateid sid;
	uint64_t clientid;
	uint32_t status = nfs4_stateid_resolve(x, &a->sid, &sid);

	(void)res;
	if (status != NFS4_OK)
		return status;
	if (!nfs4_dtab_is_deleg(&sid))
		return NFS4ERR_BAD_STATEID;
	/* 4.0: the stateid names the client, whose lease this renews. */
	clientid = nfs4_sid_client(x, &sid);
	if (x->minorversion == 0)
		nfs4_stateid_renew(x, &sid);
	if (!dl_ready)
		return NFS4ERR_BAD_STATEID;
	dl_lock();

	status = nfs4_dtab_return(&dl_tab, clientid, x->minorversion, &sid, x->cur.fh.data, x->cur.fh.len);
	dl_unlock();
	return dl_gone(clientid, &sid, status);
}

/* RFC 8881 §18.5.3: NOTSUPP from a server that does not support CLAIM_DELEGATE_PREV. */
uint32_t nfs4_delegpurge_exec(struct nfs4_ctx *x, void *args, void *res)
{
	(void)x, (void)args, (void)res;
	return NFS4ERR_NOTSUPP;
}

unsigned nfs4_deleg_client_count(uint64_t clientid)
{
	unsigned n;

	if (!dl_ready || !atomic_load(&dl_count))
		return 0;
	pthread_mutex_lock(&dl_mu);
	n = nfs4_dtab_client_count(&dl_tab, clientid);
	pthread_mutex_unlock(&dl_mu);
	return n;
}

void nfs4_deleg_stats(uint64_t *held, uint64_t *recalls, uint64_t *returned, uint64_t *revoked)
{
	pthread_mutex_lock(&dl_mu);
	*held = dl_tab.count;
	*recalls = dl_tab.recalls;
	*returned = dl_tab.returned;
	*revoked = dl_tab.revoked;
	pthread_mutex_unlock(&dl_mu);
}

void nfs4_deleg_counts(struct nfs4_dl_counts *out)
{
	pthread_mutex_lock(&dl_mu);
	nfs4_dtab_counts(&dl_tab, out);
	pthread_mutex_unlock(&dl_mu);
}

void nfs4_deleg_dir_stats(uint64_t *held, uint64_t *granted, uint64_t *recalls)
{
	pthread_mutex_lock(&dl_mu);
	*held = dl_tab.nkind[NFS4_DL_KIND_DIR];
	*granted = dl_tab.dir_granted;
	*recalls = dl_tab.dir_recalls;
	pthread_mutex_unlock(&dl_mu);
}

void nfs4_deleg_lease_stats(uint64_t *leases, uint64_t *refused)
{
	*leases = nfs4_deleg_watch_leases();
	*refused = atomic_load(&dl_lease_refused);
}

/* ---- the hook NFSv3 and NLM call (nfs/common/nfs_common.h): of no NFSv4 client (clientid 0) ---- */

static enum nfs_deleg_verdict hook_recall(const uint8_t *fkey, uint32_t fkey_len, enum nfs_deleg_access acc)
{
	/* What each access does to the file, and who asks it: NFS_DELEG_LOCK is NLM's (nlm_svc.c), the rest NFSv3's. */
	static const struct {
		enum nfs4_dl_access acc;
		enum nfs4_dl_cause by;
	} dl_acc[] = {
		[NFS_DELEG_READ] = { NFS4_DL_ACC_READ, NFS4_DL_BY_NFS3 },
		[NFS_DELEG_WRITE] = { NFS4_DL_ACC_WRITE, NFS4_DL_BY_NFS3 },
		[NFS_DELEG_NS] = { NFS4_DL_ACC_NS, NFS4_DL_BY_NFS3 },
		[NFS_DELEG_LOCK] = { NFS4_DL_ACC_LOCK, NFS4_DL_BY_NLM },
	};

	return nfs4_deleg_break_by(fkey, fkey_len, 0, dl_acc[acc].acc, dl_acc[acc].by) == NFS4_OK ? NFS_DELEG_CLEAR
												  : NFS_DELEG_WAIT;
}

/* NFSv3 REMOVE, RENAME: removed, the layouts too (RFC 8881 §12.5.5), from any address: a name change is
 * never a pNFS client's I/O to its data server. */
static enum nfs_deleg_verdict hook_recall_at(const struct nfs_export *exp, const struct be_cred *cr,
					     const struct be_obj *dir, const char *name, bool removed)
{
	return nfs4_name_recall_by(exp, cr, dir, name, 0, removed, NFS4_DL_BY_NFS3) == NFS4_OK ? NFS_DELEG_CLEAR
											       : NFS_DELEG_WAIT;
}

static enum nfs_deleg_verdict hook_getattr(const uint8_t *fkey, uint32_t fkey_len, bool may_wait, struct be_attr *attr)
{
	uint64_t holder;
	struct nfs4_stateid sid;

	if (!may_wait) /* the receiving thread asks first: a CB_GETATTR to wait for goes to a worker */
		return nfs4_deleg_ga_find(fkey, fkey_len, 0, &holder, &sid) == NFS4_DL_GA_NONE ? NFS_DELEG_CLEAR
											: NFS_DELEG_WORKER;
	return nfs4_deleg_getattr(fkey, fkey_len, 0, NFS4_DL_BY_NFS3, attr) == NFS4_OK ? NFS_DELEG_CLEAR
										      : NFS_DELEG_WAIT;
}

/* An NFSv3 change of the directory's entries: the directory delegations of every NFSv4 client
 * (for an entry added or removed, those not granted its notification). */
static enum nfs_deleg_verdict hook_dir_changed(const uint8_t *fkey, uint32_t fkey_len, enum nfs_dir_change ch)
{
	return nfs4_deleg_dir_changed(fkey, fkey_len, 0, ch, NFS4_DL_BY_NFS3) == NFS4_OK ? NFS_DELEG_CLEAR
											: NFS_DELEG_WAIT;
}

/* ... the change made: CB_NOTIFY to the holders granted its notification. */
static void hook_dir_note(const uint8_t *fkey, uint32_t fkey_len, const struct nfs_dir_note *n)
{
	struct nfs_fh fh = { .len = fkey_len };

	if (fkey_len <= sizeof(fh.data)) {
		memcpy(fh.data, fkey, fkey_len);
		nfs4_deleg_dir_note(&fh, n);
	}
}

static const struct nfs_deleg_hook dl_hook = {
	.any = nfs4_deleg_any,
	.recall = hook_recall,
	.recall_at = hook_recall_at,
	.getattr = hook_getattr,
	.dir_any = nfs4_deleg_dir_any,
	.dir_changed = hook_dir_changed,
	.dir_note = hook_dir_note,
};

/* nfs4_deleg_watch.c's event: a local process changed (or, for a write delegation, opened) the file,
 * as a conflicting call from no client would (RFC 8881 §10.4.1). */
static void watch_changed(const uint8_t *fkey, uint32_t fkey_len)
{
	(void)nfs4_deleg_break_by(fkey, fkey_len, 0, NFS4_DL_ACC_WRITE, NFS4_DL_BY_LOCAL_OPEN);
}

/* ... its lease broken: a local process waits in the kernel, which lets it in
 * after lease-break-time: the recall is revoked before that (dl_break_wait). */
static void watch_broken(const uint8_t *fkey, uint32_t fkey_len)
{
	(void)nfs4_deleg_break_by(fkey, fkey_len, 0, NFS4_DL_ACC_WRITE, NFS4_DL_BY_LOCAL_OPEN);
	if (!dl_break_wait)
		return;
	uint64_t at = nfs4_now() + dl_break_wait;
	dl_lock();

	nfs4_dtab_deadline(&dl_tab, fkey, fkey_len, at);
	dl_unlock();
}

/* ... a local process added, removed or renamed an entry of a delegated directory, or changed its
 * attributes (after the fact, RFC 8881 §10.9.1): as an NFSv3 client's change, its holders granted the
 * notification told by CB_NOTIFY (§20.4.3; a rename over an entry is not seen as such: inotify says
 * nothing of the replaced one; §20.4.1: the attributes read now, those of the last change when several
 * came together), the others recalled. */
static void watch_dir_event(const uint8_t *fkey, uint32_t fkey_len, const struct be_change *c)
{
	static const enum nfs_dir_change ch[] = {
		[BE_CHANGE_OTHER] = NFS_DIR_OTHER, [BE_CHANGE_ADD] = NFS_DIR_ADD,
		[BE_CHANGE_REMOVE] = NFS_DIR_REMOVE, [BE_CHANGE_RENAME] = NFS_DIR_RENAME,
		[BE_CHANGE_ATTRS] = NFS_DIR_ATTRS,
	};
	struct be_attr attr = { .valid = 0 };
	struct nfs_dir_note n = { .kind = ch[c->kind], .name = c->name, .newname = c->newname };

	(void)nfs4_deleg_dir_changed(fkey, fkey_len, 0, n.kind, NFS4_DL_BY_LOCAL_OPEN);
	if (n.kind == NFS_DIR_ATTRS) /* none to be had: its holders are recalled (notify_args) */
		n.attrs = nfs4_deleg_dir_any() && dir_attrs_of(fkey, fkey_len, &attr) ? &attr : NULL;
	hook_dir_note(fkey, fkey_len, &n);
}

static const struct nfs4_deleg_watch_hooks dl_watch_hooks = {
	.held = nfs4_deleg_held, .changed = watch_changed, .broken = watch_broken, .dir_event = watch_dir_event,
};
