/*
 * nfs4_setup.c - setting up and releasing the NFSv4 server's live state
 * (nfs4_setup.h, struct nfs4_server): the client records and the open state
 * table with their settings, the hooks that tie a client record's end to the
 * modules keeping something for it (callback path, delegations, copies, lock
 * waiters, its stable record), what else runs out with leases, the server's
 * name, and the timer that expires leases every second on a worker (the
 * operations expire them on the way too: nfs4_server_tick(), nfs4_server.c).
 *
 * Lock order: the client records' lock, then the open state table's (the
 * pure tables' own rule); the hooks run under the client records' lock and
 * take only their own module's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/queue.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/nfs4_setup.h"
#include "nfs/v4/cb/nfs4_cb.h"
#include "nfs/v4/ops/nfs4_copy_async.h"
#include "nfs/v4/ops/nfs4_lock_notify.h"
#include "nfs/v4/ops/nfs4_pnfs.h"
#include "nfs/v4/recovery/nfs4_recovery.h"

/* The open state table's references on the backend's open files. */
static void srv_file_get(void *fs, void *file)
{
	be_file_get(fs, file);
}

static void srv_file_put(void *fs, void *file)
{
	be_file_put(fs, file);
}

/* A lock stateid went: its owner's locks on the file with it. */
static void srv_file_unlock(void *fs, void *file, uint64_t owner)
{
	be_lock_owner_release(fs, file, owner);
}

static bool srv_file_locked(void *fs, void *file, uint64_t owner)
{
	return nfs4_lock_owner_holds(fs, file, owner);
}

static const struct nfs4_stab_file_ops srv_file_ops = { .get = srv_file_get, .put = srv_file_put,
							.unlock = srv_file_unlock, .locked = srv_file_locked };

/*
 * RFC 8881 §2.10.4-2.10.5: a client treats servers that answer EXCHANGE_ID
 * with the same so_major_id and eir_server_scope as one server sharing
 * state (trunking). Two rnfsd hosts (say in front of one CephFS) share no
 * state, so each names itself by its host name, as knfsd does (nodename).
 */
static void srv_name_init(struct nfs4_server *srv)
{
	char host[NFS4_SERVER_NAME_MAX];

	snprintf(srv->name, sizeof(srv->name), "rnfsd");
	if (gethostname(host, sizeof(host)) == 0 && host[0]) {
		host[sizeof(host) - 1] = 0;
		snprintf(srv->name, sizeof(srv->name), "%s", host);
	}
}

/* ---- an export no longer served (nfs/common's nfs_export_gone_hook) ---- */

static struct nfs4_server *srv_gone_target; /* the server whose state the hook releases */

/* Is the file of key (its NFSv4 handle: the envelope, nfs/common/fh.c) on export arg? */
static bool srv_key_on(const uint8_t *key, uint32_t len, void *arg)
{
	const struct nfs_export *e = arg;
	struct be_handle bh;
	struct nfs_fh fh;
	uint32_t id;

	if (len > sizeof(fh.data))
		return false;
	fh.len = len;
	memcpy(fh.data, key, len);
	return nfs_fh_unwrap(&fh, &id, &bh) && id == e->id;
}

/* Worker: e left the served exports, so its handles are STALE and no client can CLOSE, LOCKU or
 * DELEGRETURN there (or rnfsctl unlock --export asked, the export staying): its opens and locks
 * go now, their files and the backend's locks with them, rather than at each client's lease
 * expiry, and its delegations are revoked (knfsd's unlock_filesystem: nfsd4_revoke_states). */
static void srv_export_gone(const struct nfs_export *e)
{
	struct nfs4_server *srv = srv_gone_target;
	unsigned n, d;

	if (!srv || !srv->ready)
		return;
	n = nfs4_stab_purge_files(&srv->stab, srv_key_on, (void *)e);
	/* RFC 8881 §18.46.3: its holders see SEQ4_STATUS_ADMIN_STATE_REVOKED, as for its opens */
	d = nfs4_deleg_revoke_files(srv_key_on, (void *)e);
	nfs4_pnfs_export_gone(e->id); /* its layouts: revoked, the holders told (CB_LAYOUTRECALL FSID) */
	if (n || d)
		log_info("nfs4: export %s: %u opens released with their locks, %u delegations revoked",
			 e->cfg->path, n, d);
}

/* At the swap that leaves e out (or its unlock): its asynchronous copies, which hold the old
 * table and so would hold back srv_export_gone until they end, stop now. */
static void srv_export_leave(const struct nfs_export *e)
{
	unsigned n = nfs4_copy_async_export_gone(e->id);

	if (n)
		log_info("nfs4: export %s: %u asynchronous copies stopped", e->cfg->path, n);
}

/* A client record went (nfs4_ctab's freed hook, under its lock): what other
 * modules keep for it goes too. */
static void srv_client_freed(uint64_t clientid)
{
	nfs4_cb_client_gone(clientid);
	nfs4_deleg_client_gone(clientid);
	nfs4_copy_async_client_gone(clientid); /* RFC 7862 §4.8: copy state goes with the client */
	nfs4_lock_notify_client_gone(clientid);
	nfs4_pnfs_client_gone(clientid); /* its layouts */
}

/* RFC 8881 §2.10.8.3: session ids and confirm verifiers from the kernel's
 * CSPRNG (GRND_NONBLOCK: never wait; before the pool is ready, false and
 * nfs4_ctab's own generator, seeded below). */
static bool srv_random(void *buf, size_t len)
{
	ssize_t n;

	do
		n = getrandom(buf, len, GRND_NONBLOCK);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len;
}

/* The client records' settings and their hooks into the other modules. */
static void srv_ctab_init(struct nfs4_server *srv, uint32_t boot, uint64_t seed)
{
	struct nfs4_ctab *st = &srv->ctab;

	nfs4_ctab_init(st, boot, seed, srv->lease);
	st->random = srv_random;
	if (srv->cfg.max_clients)
		nfs4_ctab_set_max_clients(st, srv->cfg.max_clients);
	nfs4_ctab_set_shares(st, srv->cfg.per_host, srv->cfg.per_principal);
	nfs4_ctab_set_cache_total(st, srv->cfg.reply_cache);
	nfs4_ctab_set_stab(st, &srv->stab);
	st->gone = nfs4_client_gone;             /* RFC 8881 §8.4.3: its stable record goes too */
	st->gone_flush = nfs4_client_gone_flush; /* durable before the state lock is let go */
	st->freed = srv_client_freed;            /* and its callback path, delegations, copies, lock waiters */
	st->stable = nfs4_client_stable;         /* RFC 8881 §8.4.3: recorded before it is confirmed */
	st->session_freed = nfs4_cb_session_gone; /* a reclaimed idle session's back channel */
}

/* nfs4_server_tick(), after the client records: results of copies whose CB_OFFLOAD never completed
 * and blocking-lock waiters, older than a lease; unanswered recalls (revoked); the grace term, which ends on time even with no
 * NFSv4 call (nfs4_recovery_tick()). */
static void srv_expire_more(struct nfs4_server *srv, uint64_t now)
{
	nfs4_copy_async_tick((uint64_t)srv->lease * 1000u);
	nfs4_lock_notify_tick(now, srv->lease);
	nfs4_deleg_tick(now);
	nfs4_pnfs_tick(now); /* layout recalls unanswered for a lease */
	nfs4_recovery_tick();
}

void nfs4_server_init(struct nfs4_server *srv, const struct nfs4_server_cfg *cfg)
{
	static const struct nfs4_server_cfg defaults;
	uint64_t seed = 0;
	uint32_t boot = (uint32_t)time(NULL);

	srv->cfg = cfg ? *cfg : defaults;
	srv->lease = srv->cfg.lease_s ? srv->cfg.lease_s : NFS4_LEASE_TIME;
	atomic_store(&srv->last_tick, 0);
	srv_name_init(srv);
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (uint64_t)clock();
	if (!srv_random(srv->princ_key, sizeof(srv->princ_key))) /* pool not ready: the seed's bytes */
		for (size_t i = 0; i < sizeof(srv->princ_key); i++)
			srv->princ_key[i] = (uint8_t)((seed ^ (uint64_t)boot * 0x9e3779b97f4a7c15ull) >> (i % 8 * 8)) ^
					    (uint8_t)i;
	/* One boot value for both tables: a stateid names its clientid (nfs4_stateid_clientid()). */
	nfs4_stab_init(&srv->stab, boot, &srv_file_ops);
	nfs4_stab_limits(&srv->stab, srv->cfg.max_files, srv->cfg.opens_per_client, srv->cfg.locks_per_client);
	srv_ctab_init(srv, boot, seed);
	srv->expire_more = srv_expire_more;
	nfs4_deleg_init(boot, srv->lease, &srv->stab);
	nfs4_pnfs_init(boot, srv->lease); /* layout stateids name their clientid too */
	nfs4_lock_notify_start();
	srv->ready = true;
	static bool gone_hooked, leave_hooked;
	srv_gone_target = srv;
	if (!gone_hooked && nfs_export_gone_hook(srv_export_gone) == 0)
		gone_hooked = true;
	if (!leave_hooked && nfs_export_leave_hook(srv_export_leave) == 0)
		leave_hooked = true;
}

void nfs4_server_release(struct nfs4_server *srv)
{
	if (srv->ready) {
		nfs4_copy_async_stop(); /* copies stop, their files let go */
		nfs4_lock_notify_stop();
		nfs4_ctab_release(&srv->ctab); /* purges every client's open state */
		nfs4_stab_release(&srv->stab);
		nfs4_pnfs_release();
	}
	srv->ready = false;
	if (srv_gone_target == srv)
		srv_gone_target = NULL;
}

/* ---- lease expiry on a timer ---- */

/* Worker: what the lazy path does (the state mutex, then the open-state table's; backend calls). */
static void srv_expiry_run(struct work *w)
{
	nfs4_server_tick(container_of(w, struct nfs4_server, expiry_work));
}

static void srv_expiry_done(struct work *w)
{
	struct nfs4_server *srv = container_of(w, struct nfs4_server, expiry_work);

	atomic_store(&srv->expiry_queued, false);
}

/* Loop thread, every second: RFC 8881 §8.3, RFC 7530 §9.6: a lease not renewed ends after lease_time
 * even when nobody else calls; the expiry itself goes to a worker. */
static void srv_expiry_cb(int fd, short what, void *arg)
{
	struct nfs4_server *srv = arg;

	(void)fd, (void)what;
	if (!atomic_exchange(&srv->expiry_queued, true))
		workers_submit(&srv->expiry_work);
}

int nfs4_expiry_start(struct nfs4_server *srv, struct loop *loop)
{
	const struct timeval second = { 1, 0 };

	srv->expiry_work.run = srv_expiry_run;
	srv->expiry_work.done = srv_expiry_done;
	srv->expiry_ev = loop_timer(loop, true, srv_expiry_cb, srv);
	if (!srv->expiry_ev || loop_ev_add(srv->expiry_ev, &second) != 0) {
		log_err("nfs4: cannot create the lease expiry timer");
		nfs4_expiry_stop(srv);
		return -1;
	}
	return 0;
}

void nfs4_expiry_stop(struct nfs4_server *srv)
{
	if (srv && srv->expiry_ev)
		loop_ev_free(srv->expiry_ev);
	if (srv)
		srv->expiry_ev = NULL;
}
