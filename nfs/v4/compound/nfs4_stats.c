/*
 * nfs4_stats.c - NFSv4 per-operation counters and state gauges
 * (nfs4_stats.h). One slot per operation number (RFC 8881 §16.2.1,
 * RFC 7862 §15.1, RFC 8276 §8.3: 3..75) plus one for OP_ILLEGAL; names are ours, so
 * operations without an execute step (NOTSUPP) are counted too.
 */
#include <stdatomic.h>
#include <string.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/cb/nfs4_cb.h"
#include "nfs/v4/ops/nfs4_copy_async.h"
#include "nfs/v4/state/nfs4_deleg.h"
#include "nfs/v4/ops/nfs4_lock_notify.h"
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
static _Atomic int64_t nfs4_gauges[NFS4_STAT_GAUGES];

void nfs4_stats_op(uint32_t op, uint32_t status, uint64_t ns)
{
	struct nfs4_op_stat *s = &nfs4_op_stats[op < NFS4_OP_COUNT && nfs4_op_names[op] ? op : NFS4_STAT_ILLEGAL];

	stats_add(&s->calls, 1);
	if (status != NFS4_OK)
		stats_add(&s->errors, 1);
	stats_add(&s->ns, ns);
	stats_hist_record(&s->latency, ns);
}

void nfs4_stats_state_add(enum nfs4_stat_gauge g, int64_t delta)
{
	if (g < NFS4_STAT_GAUGES)
		atomic_fetch_add_explicit(&nfs4_gauges[g], delta, memory_order_relaxed);
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

static uint64_t gauge(enum nfs4_stat_gauge g)
{
	int64_t v = atomic_load_explicit(&nfs4_gauges[g], memory_order_relaxed);

	return v > 0 ? (uint64_t)v : 0;
}

static void count_cb(const struct nfs4_cb_stat *s, void *arg)
{
	(void)s;
	++*(unsigned *)arg;
}

/* Asynchronous copies (nfs4_copy_async.c) and CB_NOTIFY_LOCK (nfs4_lock_notify.c), and the
 * fixed-bound tables' gauges (docs/architecture.md, "NFSv4 tables and their bounds"). */
static void nfs4_stats_async(struct stats_nfs4 *out)
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
	out->delegations_max = NFS4_DELEG_MAX;
	out->callback_paths_max = NFS4_CB_CLIENTS;
	nfs4_cb_foreach(count_cb, &out->callback_paths);
}

void nfs4_stats_state(struct stats_nfs4 *out)
{
	struct nfs4_recovery *r = nfs4_recovery_server();
	uint64_t now = grace_now_ms();

	memset(out, 0, sizeof(*out));
	nfs4_ctab_counts(nfs4_session_state(), &out->clients, &out->sessions);
	{
		struct nfs4_ctab_gauges g;

		nfs4_ctab_gauges(nfs4_session_state(), &g);
		out->reply_cache_bytes = g.cache_bytes;
		out->reply_cache_limit = g.cache_total;
		out->clients_refused = g.refused;
		out->sessions_reclaimed = g.reclaimed;
	}
	{
		struct nfs4_stab *t = nfs4_session_stab();
		struct nfs4_stab_counts c;

		nfs4_stab_counts(t, &c);
		out->opens = gauge(NFS4_STAT_OPENS) + c.opens;
		out->locks = gauge(NFS4_STAT_LOCKS) + c.lock_states;
		out->open_files = c.files, out->open_owners = c.open_owners, out->lock_owners = c.lock_owners;
		out->open_files_max = t->max_files, out->opens_per_client_max = t->max_opens_client;
		out->lock_owners_per_client_max = t->max_locks_client;
	}
	out->delegations = gauge(NFS4_STAT_DELEGATIONS);
	{
		uint64_t held;

		nfs4_deleg_stats(&held, &out->recalls, &out->returned, &out->revoked);
	}
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
	stats_nfs4_cb_cb cb;
	void *arg;
};

static void cb_fwd(const struct nfs4_cb_stat *s, void *arg)
{
	struct cb_fwd *fw = arg;
	struct stats_nfs4_cb c = { .clientid = s->clientid, .minor = s->minor, .state = nfs4_cb_state_name(s->state),
				   .transport = s->xprt, .sent = s->sent, .ok = s->ok, .failed = s->failed };

	fw->cb(&c, fw->arg);
}

void nfs4_stats_cb_foreach(stats_nfs4_cb_cb cb, void *arg)
{
	struct cb_fwd fw = { .cb = cb, .arg = arg };

	nfs4_cb_foreach(cb_fwd, &fw);
}

void nfs4_stats_reset(void)
{
	memset(nfs4_op_stats, 0, sizeof(nfs4_op_stats));
	for (unsigned g = 0; g < NFS4_STAT_GAUGES; g++)
		atomic_store(&nfs4_gauges[g], 0);
}
