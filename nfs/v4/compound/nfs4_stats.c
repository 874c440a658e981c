/*
 * nfs4_stats.c - NFSv4 per-operation counters and state gauges
 * (nfs4_stats.h). One slot per operation number (RFC 8881 §16.2.1,
 * RFC 7862 §15.1, RFC 8276 §8.3: 3..75) plus one for OP_ILLEGAL; names are ours, so
 * operations without an execute step (NOTSUPP) are counted too. At the end,
 * the NFSv4 sections of the stats document: the snapshot's objects are
 * tables of (key, field), each written from a snapshot of its own.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/cb/nfs4_cb.h"
#include "nfs/v4/ops/nfs4_copy_async.h"
#include "nfs/v4/state/nfs4_deleg.h"
#include "nfs/v4/state/nfs4_ga_wait.h"
#include "nfs/v4/ops/nfs4_lock_notify.h"
#include "nfs/v4/ops/nfs4_pnfs.h"
#include "nfs/v4/state/nfs4_layout.h"
#include "nfs/v4/state/nfs4_lockwait.h"
#include "nfs/v4/state/nfs4_offload.h"
#include "nfs/v4/recovery/nfs4_recovery.h"
#include "nfs/v4/compound/nfs4_stats.h"

#define NFS4_STAT_ILLEGAL NFS4_OP_COUNT /* the slot of OP_ILLEGAL and unknown numbers */

static const char *const nfs4_op_names[NFS4_OP_COUNT] = {
	[3] = "ACCESS", "CLOSE", "COMMIT", "CREATE", "DELEGPURGE", "DELEGRETURN", "GETATTR", "GETFH", "LINK",
	"LOCK", "LOCKT", "LOCKU", "LOOKUP", "LOOKUPP", "NVERIFY", "OPEN", "OPENATTR", "OPEN_CONFIRM",
	"OPEN_DOWNGRADE", "PUTFH", "PUTPUBFH", "PUTROOTFH", "READ", "READDIR", "READLINK", "REMOVE", "RENAME",
	"RENEW", "RESTOREFH", "SAVEFH", "SECINFO", "SETATTR", "SETCLIENTID", "SETCLIENTID_CONFIRM", "VERIFY",
	"WRITE", "RELEASE_LOCKOWNER", "BACKCHANNEL_CTL", "BIND_CONN_TO_SESSION", "EXCHANGE_ID",
	"CREATE_SESSION", "DESTROY_SESSION", "FREE_STATEID", "GET_DIR_DELEGATION", "GETDEVICEINFO",
	"GETDEVICELIST", "LAYOUTCOMMIT", "LAYOUTGET", "LAYOUTRETURN", "SECINFO_NO_NAME", "SEQUENCE",
	"SET_SSV", "TEST_STATEID", "WANT_DELEGATION", "DESTROY_CLIENTID", "RECLAIM_COMPLETE", "ALLOCATE",
	"COPY", "COPY_NOTIFY", "DEALLOCATE", "IO_ADVISE", "LAYOUTERROR", "LAYOUTSTATS", "OFFLOAD_CANCEL",
	"OFFLOAD_STATUS", "READ_PLUS", "SEEK", "WRITE_SAME", "CLONE", "GETXATTR", "SETXATTR", "LISTXATTRS",
	"REMOVEXATTR",
};

struct nfs4_op_stat {
	_Atomic uint64_t calls, errors, ns;
	struct stats_hist latency;
};

static struct nfs4_op_stat nfs4_op_stats[NFS4_OP_COUNT + 1];
static struct nfs4_server *nfs4_stats_srv; /* whose tables nfs4_stats_state() reports */

void nfs4_stats_op(uint32_t op, uint32_t status, uint64_t ns)
{
	struct nfs4_op_stat *s = &nfs4_op_stats[op < NFS4_OP_COUNT && nfs4_op_names[op] ? op : NFS4_STAT_ILLEGAL];

	stats_add(&s->calls, 1);
	if (status != NFS4_OK)
		stats_add(&s->errors, 1);
	stats_add(&s->ns, ns);
	stats_hist_record(&s->latency, ns);
}

void nfs4_stats_ops_foreach(stats_proc_cb cb, void *arg)
{
	for (unsigned i = 0; i <= NFS4_OP_COUNT; i++) {
		const struct nfs4_op_stat *s = &nfs4_op_stats[i];
		struct stats_proc p = {
			.program = "nfs", .vers = 4,
			.proc = i == NFS4_STAT_ILLEGAL ? "ILLEGAL" : nfs4_op_names[i],
			.calls = atomic_load_explicit(&s->calls, memory_order_relaxed),
			.errors = atomic_load_explicit(&s->errors, memory_order_relaxed),
			.latency_ns_total = atomic_load_explicit(&s->ns, memory_order_relaxed),
			.latency = &s->latency,
		};
		if (p.calls && p.proc)
			cb(&p, arg);
	}
}

static void count_cb(const struct nfs4_cb_stat *s, void *arg)
{
	(void)s;
	++*(unsigned *)arg;
}

/* pNFS layouts (nfs4_proc_layout.c): held, their bound, errors clients reported of data servers. */
static void nfs4_stats_pnfs(struct nfs4_stats_snap *out)
{
	struct nfs4_pnfs_stats p;

	nfs4_pnfs_stats(&p);
	out->layouts = p.layouts;
	out->layouts_max = NFS4_LAYOUT_MAX;
	for (unsigned i = 0; i < p.nds; i++)
		out->layout_errors += p.ds[i].errors;
	out->layout_recalling = p.recalling;
	out->layout_recalls = p.recalls;
	out->layout_recalls_returned = p.recall_returned;
	out->layouts_revoked = p.revoked;
}

/* Asynchronous copies (nfs4_copy_async.c) and CB_NOTIFY_LOCK (nfs4_lock_notify.c), and the
 * fixed-bound tables' gauges (docs/architecture.md, "NFSv4 tables and their bounds"). */
static void nfs4_stats_async(struct nfs4_stats_snap *out)
{
	struct nfs4_copy_async_stat c;

	nfs4_copy_async_stats(&c);
	out->copies_async_started = c.started;
	out->copies_async_done = c.done;
	out->copies_async_cancelled = c.cancelled;
	out->cb_offload_sent = c.cb_offload_sent;
	out->cb_notify_lock_sent = nfs4_lock_notify_sent();
	out->offloads = c.offloads;
	out->offloads_max = NFS4_OFFLOAD_MAX;
	out->sync_copies = c.sync_copies;
	out->sync_copies_max = c.sync_max;
	out->sync_copies_refused = c.sync_refused;
	out->lock_waiters = nfs4_lock_notify_waiters();
	out->lock_waiters_max = NFS4_LOCKWAIT_MAX;
	out->cb_getattr_waiters = nfs4_deleg_getattr_waiters();
	out->cb_getattr_waiters_max = NFS4_GA_WAITERS;
	out->delegations_max = NFS4_DELEG_MAX;
	out->callback_paths_max = NFS4_CB_CLIENTS;
	nfs4_cb_foreach(count_cb, &out->callback_paths);
	out->callback_gss_contexts = nfs4_cb_gss_contexts();
	nfs4_stats_pnfs(out);
}

void nfs4_stats_serve(struct nfs4_server *srv)
{
	nfs4_stats_srv = srv;
}

/* The server's client records and open state. */
static void nfs4_stats_tables(struct nfs4_server *srv, struct nfs4_stats_snap *out)
{
	struct nfs4_ctab *st = &srv->ctab;
	struct nfs4_stab *t = &srv->stab;
	struct nfs4_ctab_gauges g;
	struct nfs4_stab_counts c;

	nfs4_ctab_counts(st, &out->clients, &out->sessions);
	nfs4_ctab_gauges(st, &g);
	out->reply_cache_bytes = g.cache_bytes;
	out->reply_cache_limit = g.cache_total;
	out->clients_refused = g.refused;
	out->sessions_reclaimed = g.reclaimed;
	nfs4_stab_counts(t, &c);
	out->opens = c.opens;
	out->locks = c.lock_states;
	out->open_files = c.files, out->open_owners = c.open_owners, out->lock_owners = c.lock_owners;
	out->revoked_stateids = c.revoked;
	out->revoked_stateids_max = NFS4_STAB_REVOKED_MAX;
	out->open_files_max = t->max_files, out->opens_per_client_max = t->max_opens_client;
	out->lock_owners_per_client_max = t->max_locks_client;
}

void nfs4_stats_state(struct nfs4_stats_snap *out)
{
	struct nfs4_recovery *r = nfs4_recovery_server();
	uint64_t now = grace_now_ms();

	memset(out, 0, sizeof(*out));
	if (nfs4_stats_srv)
		nfs4_stats_tables(nfs4_stats_srv, out);
	nfs4_deleg_stats(&out->delegations, &out->recalls, &out->returned, &out->revoked);
	nfs4_deleg_lease_stats(&out->deleg_leases, &out->deleg_lease_refused);
	nfs4_deleg_getattr_stats(&out->cb_getattr_sent, &out->cb_getattr_unanswered);
	nfs4_deleg_dir_stats(&out->dir_delegations, &out->dir_granted, &out->dir_recalls);
	nfs4_deleg_counts(&out->dl);
	out->cb_notify_sent = nfs4_cb_notify_sent();
	out->cb_notify_pending = nfs4_deleg_notify_pending();
	out->grace_left_ms = grace_clock_left_ms(&grace_server, now);
	nfs4_stats_async(out);
	if (r) {
		pthread_mutex_lock(&r->lock);
		out->recorded_clients = r->n;
		out->recorded_clients_max = r->max;
		out->reclaims = r->counts[0];
		out->grace_refused = r->counts[1];
		out->no_grace = r->counts[2];
		pthread_mutex_unlock(&r->lock);
	}
}

struct cb_fwd {
	nfs4_stats_cb_fn cb;
	void *arg;
};

static void cb_fwd(const struct nfs4_cb_stat *s, void *arg)
{
	struct cb_fwd *fw = arg;
	struct nfs4_stats_cb c = { .clientid = s->clientid, .minor = s->minor, .state = nfs4_cb_state_name(s->state),
				   .transport = s->xprt, .sent = s->sent, .ok = s->ok, .failed = s->failed,
				   .flavor = s->flavor };

	fw->cb(&c, fw->arg);
}

void nfs4_stats_cb_foreach(nfs4_stats_cb_fn cb, void *arg)
{
	struct cb_fwd fw = { .cb = cb, .arg = arg };

	nfs4_cb_foreach(cb_fwd, &fw);
}

void nfs4_stats_reset(void)
{
	memset(nfs4_op_stats, 0, sizeof(nfs4_op_stats));
}

/* ---- the sections of the stats document ---- */

static struct nfs4_stats_sources nfs4_sec_src;

/* How a snapshot field is written: unsigned, uint64_t, or milliseconds as seconds ("%.1f"). */
enum nfs4_sec_kind { SEC_U, SEC_U64, SEC_MS_AS_S };

struct nfs4_sec_field {
	const char *key;
	size_t off;
	enum nfs4_sec_kind kind;
};

#define SEC_FIELD(k, f, kind) { k, offsetof(struct nfs4_stats_snap, f), kind }
/* A counter: its kind follows the field's type. */
#define U(k, f) SEC_FIELD(k, f, _Generic(((struct nfs4_stats_snap *)0)->f, unsigned : SEC_U, default : SEC_U64))

static const struct nfs4_sec_field nfs4_sec_state[] = {
	U("clients", clients), U("sessions", sessions), U("opens", opens), U("locks", locks),
	U("delegations", delegations), U("recalls", recalls), U("delegreturns", returned), U("revoked", revoked),
	U("recorded_clients", recorded_clients), SEC_FIELD("grace_left_s", grace_left_ms, SEC_MS_AS_S),
	U("reclaims", reclaims), U("grace_refused", grace_refused), U("no_grace", no_grace),
	U("open_files", open_files), U("open_owners", open_owners), U("lock_owners", lock_owners),
	U("open_files_max", open_files_max), U("opens_per_client_max", opens_per_client_max),
	U("lock_owners_per_client_max", lock_owners_per_client_max), U("deleg_leases", deleg_leases),
	U("deleg_lease_refused", deleg_lease_refused), U("cb_getattr_sent", cb_getattr_sent),
	U("cb_getattr_unanswered", cb_getattr_unanswered), U("dir_delegations", dir_delegations),
	U("dir_delegations_granted", dir_granted), U("dir_delegation_recalls", dir_recalls),
	U("cb_notify_pending", cb_notify_pending), { NULL, 0, SEC_U },
};

static const struct nfs4_sec_field nfs4_sec_async[] = {
	U("copies_started", copies_async_started), U("copies_done", copies_async_done),
	U("copies_cancelled", copies_async_cancelled), U("cb_offload_sent", cb_offload_sent),
	U("cb_notify_lock_sent", cb_notify_lock_sent), { NULL, 0, SEC_U },
};

static const struct nfs4_sec_field nfs4_sec_bounds[] = {
	U("offloads", offloads), U("offloads_max", offloads_max), U("sync_copies", sync_copies),
	U("sync_copies_max", sync_copies_max), U("sync_copies_refused", sync_copies_refused),
	U("lock_waiters", lock_waiters), U("lock_waiters_max", lock_waiters_max),
	U("cb_getattr_waiters", cb_getattr_waiters), U("cb_getattr_waiters_max", cb_getattr_waiters_max),
	U("delegations_max", delegations_max), U("callback_paths", callback_paths),
	U("callback_paths_max", callback_paths_max), U("callback_gss_contexts", callback_gss_contexts),
	U("revoked_stateids", revoked_stateids),
	U("revoked_stateids_max", revoked_stateids_max), U("layouts", layouts), U("layouts_max", layouts_max),
	U("layout_errors", layout_errors), U("layout_recalling", layout_recalling), U("layout_recalls", layout_recalls),
	U("layout_recalls_returned", layout_recalls_returned), U("layouts_revoked", layouts_revoked),
	{ NULL, 0, SEC_U },
};

static const struct nfs4_sec_field nfs4_sec_limits[] = {
	U("reply_cache_bytes", reply_cache_bytes), U("reply_cache_limit", reply_cache_limit),
	U("clients_refused", clients_refused), U("sessions_reclaimed", sessions_reclaimed),
	U("recorded_clients_max", recorded_clients_max), { NULL, 0, SEC_U },
};

/* "nfs4", "nfs4_async", "nfs4_bounds", "nfs4_limits": arg is the field table. */
static void nfs4_sec_snap(struct json_out *j, const char *name, void *arg)
{
	struct nfs4_stats_snap n = { 0 };
	const char *base = (const char *)&n;

	nfs4_sec_src.state(&n);
	json_obj_open(j, name);
	for (const struct nfs4_sec_field *f = arg; f->key; f++) {
		if (f->kind == SEC_U)
			json_u64(j, f->key, *(const unsigned *)(base + f->off));
		else if (f->kind == SEC_U64)
			json_u64(j, f->key, *(const uint64_t *)(base + f->off));
		else
			json_fixed(j, f->key, (double)*(const uint64_t *)(base + f->off) / 1e3, 1);
	}
	json_obj_close(j);
}

/* "nfs4_delegations": by kind (enum nfs4_dl_kind, disjoint: their sum is "nfs4"."delegations"),
 * "recalls_<cause>" and "dir_recalls_<cause>" (enum nfs4_dl_cause: their sums are "nfs4"."recalls" and
 * "dir_delegation_recalls"), revocations by reason, CB_NOTIFYs sent. */
static void nfs4_sec_deleg(struct json_out *j, const char *name, void *arg)
{
	struct nfs4_stats_snap n = { 0 };
	char key[48];

	(void)arg;
	nfs4_sec_src.state(&n);
	json_obj_open(j, name);
	for (unsigned k = 0; k < NFS4_DL_KINDS; k++)
		json_u64(j, nfs4_dl_kind_name(k), n.dl.kind[k]);
	for (unsigned c = 0; c < NFS4_DL_CAUSES; c++) {
		snprintf(key, sizeof(key), "recalls_%s", nfs4_dl_cause_name(c));
		json_u64(j, key, n.dl.recalls_by[c]);
	}
	for (unsigned c = 0; c < NFS4_DL_CAUSES; c++) {
		snprintf(key, sizeof(key), "dir_recalls_%s", nfs4_dl_cause_name(c));
		json_u64(j, key, n.dl.dir_recalls_by[c]);
	}
	json_u64(j, "revoked_unanswered", n.dl.revoked_unanswered);
	json_u64(j, "revoked_admin", n.dl.revoked_admin);
	json_u64(j, "cb_notify_sent", n.cb_notify_sent);
	json_obj_close(j);
}

static void nfs4_sec_op(const struct stats_proc *p, void *arg)
{
	stats_json_proc(arg, p);
}

/* "nfs4_operations": COMPOUND's operations (not in the totals: COMPOUND is). */
static void nfs4_sec_ops(struct json_out *j, const char *name, void *arg)
{
	(void)arg;
	json_arr_open(j, name);
	nfs4_sec_src.ops_foreach(nfs4_sec_op, j);
	json_arr_close(j);
}

static void nfs4_sec_cb(const struct nfs4_stats_cb *c, void *arg)
{
	struct json_out *j = arg;
	char id[17];

	snprintf(id, sizeof(id), "%016llx", (unsigned long long)c->clientid);
	json_obj_open(j, NULL);
	json_str(j, "clientid", id);
	json_u64(j, "minor", c->minor);
	json_str(j, "state", c->state);
	json_str(j, "transport", c->transport);
	json_u64(j, "sent", c->sent);
	json_u64(j, "ok", c->ok);
	json_u64(j, "failed", c->failed);
	json_str(j, "flavor", c->flavor ? c->flavor : "-");
	json_obj_close(j);
}

/* "nfs4_callbacks": each client's callback path (RFC 8881 §2.10.3.1, RFC 7530 §3.3.2). */
static void nfs4_sec_cbs(struct json_out *j, const char *name, void *arg)
{
	(void)arg;
	json_arr_open(j, name);
	nfs4_sec_src.cb_foreach(nfs4_sec_cb, j);
	json_arr_close(j);
}

void nfs4_stats_ds_foreach(nfs4_stats_ds_fn cb, void *arg)
{
	struct nfs4_pnfs_stats p;

	nfs4_pnfs_stats(&p);
	for (unsigned i = 0; i < p.nds; i++) {
		struct nfs4_stats_ds d = { .addr = p.ds[i].ds.addr, .port = p.ds[i].ds.port,
					   .transport = p.ds[i].ds.rdma ? "rdma" : "tcp", .layouts = p.ds[i].layouts,
					   .errors = p.ds[i].errors, .unavailable = p.ds[i].unavailable };
		cb(&d, arg);
	}
}

static void nfs4_sec_ds(const struct nfs4_stats_ds *d, void *arg)
{
	struct json_out *j = arg;

	json_obj_open(j, NULL);
	json_str(j, "address", d->addr);
	json_u64(j, "port", d->port);
	json_str(j, "transport", d->transport);
	json_u64(j, "layouts", d->layouts);
	json_u64(j, "errors", d->errors);
	json_u64(j, "unavailable", d->unavailable); /* 1: taken out of new layouts now */
	json_obj_close(j);
}

/* "pnfs_data_servers": each configured data server (issue 28): layouts handed out, errors reported. */
static void nfs4_sec_dss(struct json_out *j, const char *name, void *arg)
{
	(void)arg;
	json_arr_open(j, name);
	nfs4_sec_src.ds_foreach(nfs4_sec_ds, j);
	json_arr_close(j);
}

/* ---- the NFSv4 metrics of the Prometheus page (core/prom.h) ---- */

struct nfs4_prom_field {
	const char *name, *help;
	enum prom_type type;
	size_t off;
	bool wide; /* uint64_t, else unsigned */
};

#define PF(n, h, t, f) { n, h, t, offsetof(struct nfs4_stats_snap, f), \
			 _Generic(((struct nfs4_stats_snap *)0)->f, unsigned : false, default : true) }

static const struct nfs4_prom_field nfs4_prom_fields[] = {
	PF("rnfsd_nfs4_clients", "NFSv4 client records (confirmed or not)", PROM_GAUGE, clients),
	PF("rnfsd_nfs4_sessions", "NFSv4.1+ sessions", PROM_GAUGE, sessions),
	PF("rnfsd_nfs4_opens", "NFSv4 open stateids", PROM_GAUGE, opens),
	PF("rnfsd_nfs4_locks", "NFSv4 lock stateids", PROM_GAUGE, locks),
	PF("rnfsd_nfs4_delegations_max", "Bound of the delegation table", PROM_GAUGE, delegations_max),
	PF("rnfsd_nfs4_delegation_returns_total", "Delegations returned (DELEGRETURN)", PROM_COUNTER, returned),
	PF("rnfsd_nfs4_delegation_leases", "Files leased (F_SETLEASE) for their delegations", PROM_GAUGE, deleg_leases),
	PF("rnfsd_nfs4_delegation_lease_refused_total", "Delegations not granted: the file's lease not to be had",
	   PROM_COUNTER, deleg_lease_refused),
	PF("rnfsd_nfs4_dir_delegations", "NFSv4.1 directory delegations held (of the delegations)", PROM_GAUGE,
	   dir_delegations),
	PF("rnfsd_nfs4_dir_delegations_granted_total", "Directory delegations granted (GET_DIR_DELEGATION)",
	   PROM_COUNTER, dir_granted),
	PF("rnfsd_nfs4_cb_notify_pending", "CB_NOTIFY queued or in flight, not yet answered", PROM_GAUGE,
	   cb_notify_pending),
	PF("rnfsd_nfs4_cb_getattr_total", "CB_GETATTR sent for write-delegated files", PROM_COUNTER, cb_getattr_sent),
	PF("rnfsd_nfs4_cb_notify_total", "CB_NOTIFY sent to directory delegations' holders", PROM_COUNTER,
	   cb_notify_sent),
	PF("rnfsd_nfs4_cb_getattr_unanswered_total", "CB_GETATTR not answered in time (recalled)", PROM_COUNTER,
	   cb_getattr_unanswered),
	PF("rnfsd_nfs4_open_files", "Files with NFSv4 opens (a descriptor each)", PROM_GAUGE, open_files),
	PF("rnfsd_nfs4_open_owners", "NFSv4 open owners", PROM_GAUGE, open_owners),
	PF("rnfsd_nfs4_lock_owners", "NFSv4 lock owners", PROM_GAUGE, lock_owners),
	PF("rnfsd_nfs4_lock_waiters", "Blocked NFSv4 locks waiting for CB_NOTIFY_LOCK", PROM_GAUGE, lock_waiters),
	PF("rnfsd_nfs4_cb_getattr_waiters", "Workers waiting for a CB_GETATTR answer (or slots its late answer holds)",
	   PROM_GAUGE, cb_getattr_waiters),
	PF("rnfsd_nfs4_revoked_stateids", "Stateids revoked by the administrator and not yet freed (remembered)",
	   PROM_GAUGE, revoked_stateids),
	PF("rnfsd_nfs4_recorded_clients", "Clients in the stable record (state-dir)", PROM_GAUGE, recorded_clients),
	PF("rnfsd_nfs4_reclaims_total", "Reclaims admitted in the grace period", PROM_COUNTER, reclaims),
	PF("rnfsd_nfs4_grace_refused_total", "Calls refused NFS4ERR_GRACE", PROM_COUNTER, grace_refused),
	PF("rnfsd_nfs4_clients_refused_total", "New client records refused (a table or share full)", PROM_COUNTER,
	   clients_refused),
	PF("rnfsd_nfs4_reply_cache_bytes", "NFSv4.1 session reply cache granted", PROM_GAUGE, reply_cache_bytes),
	PF("rnfsd_nfs4_reply_cache_limit_bytes", "NFSv4.1 session reply cache budget", PROM_GAUGE, reply_cache_limit),
	PF("rnfsd_nfs4_copies_started_total", "Asynchronous COPYs started", PROM_COUNTER, copies_async_started),
	PF("rnfsd_nfs4_callback_paths", "NFSv4 clients with a callback path", PROM_GAUGE, callback_paths),
	PF("rnfsd_nfs4_callback_gss_contexts", "NFSv4.0 callback paths' RPCSEC_GSS contexts", PROM_GAUGE,
	   callback_gss_contexts),
	PF("rnfsd_nfs4_pnfs_layouts", "pNFS layout stateids held (a client's layouts of one file)", PROM_GAUGE, layouts),
	PF("rnfsd_nfs4_pnfs_layout_errors_total", "pNFS data-server errors reported by clients", PROM_COUNTER,
	   layout_errors),
	PF("rnfsd_nfs4_pnfs_layout_recalling", "pNFS layouts being recalled (CB_LAYOUTRECALL not yet returned)",
	   PROM_GAUGE, layout_recalling),
	PF("rnfsd_nfs4_pnfs_layout_recalls_total", "pNFS layouts recalled (CB_LAYOUTRECALL FILE)", PROM_COUNTER,
	   layout_recalls),
	PF("rnfsd_nfs4_pnfs_layout_recalls_returned_total", "Recalled pNFS layouts the client returned", PROM_COUNTER,
	   layout_recalls_returned),
	PF("rnfsd_nfs4_pnfs_layouts_revoked_total", "pNFS layouts revoked (recall unanswered for a lease, export gone)",
	   PROM_COUNTER, layouts_revoked),
};

/* One family of the data servers' series ([pnfs] data-servers: a fixed table, no client address). */
struct nfs4_prom_ds {
	struct prom_out *p;
	unsigned which; /* 0 layouts, 1 errors, 2 unavailable */
};

static void nfs4_prom_ds_count(const struct nfs4_stats_ds *d, void *arg)
{
	(void)d;
	++*(unsigned *)arg;
}

static void nfs4_prom_ds_one(const struct nfs4_stats_ds *d, void *arg)
{
	const struct nfs4_prom_ds *c = arg;
	char where[80];
	struct prom_label l = { "data_server", where };
	uint64_t v = c->which == 0 ? d->layouts : c->which == 1 ? d->errors : d->unavailable;

	snprintf(where, sizeof(where), "%s:%u", d->addr, d->port);
	prom_sample_u64(c->p, NULL, &l, 1, v);
}

/* Per data server (issue 28): layouts that sent clients there, errors clients reported of it (RFC 8435
 * §9.1: LAYOUTERROR, ff_ioerr4 in LAYOUTRETURN), whether it is out of new layouts now. */
static void nfs4_prom_dss(struct prom_out *p)
{
	static const struct {
		const char *name, *help;
		enum prom_type type;
	} fam[] = {
		{ "rnfsd_nfs4_pnfs_ds_layouts_total", "pNFS layouts that sent clients to the data server", PROM_COUNTER },
		{ "rnfsd_nfs4_pnfs_ds_errors_total", "Errors clients reported of the data server (LAYOUTERROR, "
						     "LAYOUTRETURN)", PROM_COUNTER },
		{ "rnfsd_nfs4_pnfs_ds_unavailable", "1 while the data server is taken out of new layouts", PROM_GAUGE },
	};
	unsigned n = 0;

	nfs4_sec_src.ds_foreach(nfs4_prom_ds_count, &n);
	for (unsigned i = 0; n && i < sizeof(fam) / sizeof(fam[0]); i++) { /* no data server: no family */
		struct nfs4_prom_ds c = { p, i };

		if (prom_family(p, fam[i].name, fam[i].type, fam[i].help))
			nfs4_sec_src.ds_foreach(nfs4_prom_ds_one, &c);
	}
}

static const char *nfs4_prom_revoke_reason(unsigned i)
{
	return i == 0 ? "unanswered" : "admin";
}

/* One family of a bounded label set: label = name_of(i), value v[i], for i < n (0s too). */
static void nfs4_prom_labelled(struct prom_out *p, const char *name, enum prom_type type, const char *help,
			       const char *label, const char *(*name_of)(unsigned), const uint64_t *v, unsigned n)
{
	if (!prom_family(p, name, type, help))
		return;
	for (unsigned i = 0; i < n; i++) {
		struct prom_label l = { label, name_of(i) };

		prom_sample_u64(p, NULL, &l, 1, v[i]);
	}
}

/* Delegations by kind, recalls by cause (all, and directory delegations'), revocations by reason. */
static void nfs4_prom_deleg(struct prom_out *p, const struct nfs4_dl_counts *c)
{
	const uint64_t revoked[2] = { c->revoked_unanswered, c->revoked_admin };

	nfs4_prom_labelled(p, "rnfsd_nfs4_delegations", PROM_GAUGE,
			   "NFSv4 delegations (held, recalled, revoked not freed) by kind: read, write, attribute "
			   "(RFC 9754 delegated timestamps, read or write), directory",
			   "kind", nfs4_dl_kind_name, c->kind, NFS4_DL_KINDS);
	nfs4_prom_labelled(p, "rnfsd_nfs4_delegation_recalls_total", PROM_COUNTER,
			   "Delegations recalled (CB_RECALL), by who wanted the conflicting access", "cause",
			   nfs4_dl_cause_name, c->recalls_by, NFS4_DL_CAUSES);
	nfs4_prom_labelled(p, "rnfsd_nfs4_dir_delegation_recalls_total", PROM_COUNTER,
			   "Directory delegations recalled (CB_RECALL), by cause (of the delegation recalls)", "cause",
			   nfs4_dl_cause_name, c->dir_recalls_by, NFS4_DL_CAUSES);
	nfs4_prom_labelled(p, "rnfsd_nfs4_delegation_revocations_total", PROM_COUNTER,
			   "Delegations revoked: recall unanswered for a lease, or by an administrator", "reason",
			   nfs4_prom_revoke_reason, revoked, 2);
}

static void nfs4_prom(struct prom_out *p, void *arg)
{
	static const struct stats_prom_procs ops = {
		"rnfsd_nfs4_operations_total", "NFSv4 COMPOUND operations, per operation",
		"rnfsd_nfs4_operation_errors_total", "NFSv4 operations answered with an error status",
		"rnfsd_nfs4_operation_duration_seconds", "Time an NFSv4 operation took", "operation", false,
	};
	struct nfs4_stats_snap n = { 0 };
	const char *base = (const char *)&n;

	(void)arg;
	if (nfs4_sec_src.ops_foreach)
		stats_prom_procs(p, &ops, nfs4_sec_src.ops_foreach);
	if (!nfs4_sec_src.state)
		return;
	nfs4_sec_src.state(&n);
	for (size_t i = 0; i < sizeof(nfs4_prom_fields) / sizeof(nfs4_prom_fields[0]); i++) {
		const struct nfs4_prom_field *f = &nfs4_prom_fields[i];
		uint64_t v = f->wide ? *(const uint64_t *)(base + f->off) : *(const unsigned *)(base + f->off);

		if (prom_family(p, f->name, f->type, f->help))
			prom_sample_u64(p, NULL, NULL, 0, v);
	}
	nfs4_prom_deleg(p, &n.dl);
	if (nfs4_sec_src.ds_foreach)
		nfs4_prom_dss(p);
}

int nfs4_stats_sections_add(const struct nfs4_stats_sources *src)
{
	static const struct {
		const char *name;
		stats_section_fn write;
		const void *arg;
	} secs[] = {
		{ "nfs4_operations", nfs4_sec_ops, NULL }, { "nfs4", nfs4_sec_snap, nfs4_sec_state },
		{ "nfs4_async", nfs4_sec_snap, nfs4_sec_async }, { "nfs4_bounds", nfs4_sec_snap, nfs4_sec_bounds },
		{ "nfs4_limits", nfs4_sec_snap, nfs4_sec_limits }, { "nfs4_delegations", nfs4_sec_deleg, NULL },
		{ "nfs4_callbacks", nfs4_sec_cbs, NULL },
		{ "pnfs_data_servers", nfs4_sec_dss, NULL },
	};
	const struct nfs4_stats_sources mine = { nfs4_stats_ops_foreach, nfs4_stats_state, nfs4_stats_cb_foreach,
						 nfs4_stats_ds_foreach };
	const struct nfs4_stats_sources *s = &nfs4_sec_src;

	nfs4_sec_src = src ? *src : mine;
	for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
		/* A section whose source is missing (a test's) is left out. */
		bool have = secs[i].write == nfs4_sec_ops ? s->ops_foreach != NULL
			    : secs[i].write == nfs4_sec_cbs ? s->cb_foreach != NULL
			    : secs[i].write == nfs4_sec_dss ? s->ds_foreach != NULL : s->state != NULL;
		if (have && stats_section_add(STATS_PLACE_STATE, secs[i].name, secs[i].write, (void *)secs[i].arg) != 0)
			return -1;
	}
	/* One writer for all of NFSv4's metrics, on its first section. */
	(void)stats_section_set_prom(s->ops_foreach ? "nfs4_operations" : "nfs4", nfs4_prom);
	return 0;
}
