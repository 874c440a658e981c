/*
 * nfs_service.c - the NFS service's lifetime (nfs/nfs.h): the file-handle
 * key, the write verifier, the backends, the served export table
 * (install/replace), and the registration of each program version's
 * operation table with the RPC layer (NFSv3 and MOUNT v3: nfs/v3/; NFSv4
 * unless "[nfsv4] enable = no": nfs/v4/). It assembles the versions, so it
 * sits above them, at the top of nfs/; nfs/common/ is beneath them all.
 * It owns the NFSv4 server's live state (struct nfs4_server,
 * nfs/v4/nfs4_server.h): set up when NFSv4 is registered, bound to its
 * program and its statistics, released at shutdown.
 */
#include <errno.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "nfs/nfs.h"
#include "nfs/common/nfs_common.h"
#include "nfs/v3/nfs3.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/nfs4_setup.h"
#include "nfs/v4/compound/nfs4_stats.h"
#include "nfs/v4/ops/nfs4_copy_async.h"
#include "nfs/v4/ops/nfs4_pnfs.h"
#include "nfs/v4/state/nfs4_layout.h"
#include "nfs/v4/recovery/nfs4_recovery.h"
#include "core/log.h"
#include "conf/exports_edit.h"

/* A pnfs=flexfiles export without [pnfs] data-servers: a data server's export (nfs/common/pnfs_ds.c),
 * or a metadata server's configuration missing its data servers. */
#define PN_NO_DS_MSG "nfs: %s has pnfs=flexfiles but [pnfs] names no data-servers: no layouts from here " \
		     "(as a data server's export its NFSv3 I/O counts in pnfs_ds)"

static void nfs_log_exports(const struct nfs_exports *t)
{
	for (unsigned i = 0; i < t->n; i++) {
		log_info("nfs: exporting %s (id %#x, fs=%s%s)", t->v[i].cfg->path, t->v[i].id, t->v[i].fs->driver,
			 t->v[i].cfg->pnfs == EXPORT_PNFS_FLEXFILES ? ", pnfs=flexfiles" : "");
		/* after start-up the data servers are known (nfs4_pnfs_settings()) */
		if (t->v[i].cfg->pnfs == EXPORT_PNFS_FLEXFILES && nfs_service_nfs4() && !nfs4_pnfs_mds())
			log_warn(PN_NO_DS_MSG, t->v[i].cfg->path);
	}
}

/* Program 100003 with versions 3 and 4 (ascending, rpc.h), replacing the
 * version-3-only registration; built at start-up from the two tables. */
static struct rpc_version nfs34_versions[2];
static struct rpc_program nfs34_program;

/* The NFSv4 server's live state: client records, sessions, open state (nfs4_server.h). */
static struct nfs4_server nfs4_live;
static struct nfs4_server_cfg nfs4_srv_bounds; /* the daemon's descriptor budget (nfs_service_nfs4_bounds) */

void nfs_service_nfs4_bounds(unsigned max_files, unsigned opens_per_client, unsigned locks_per_client)
{
	nfs4_srv_bounds.max_files = max_files;
	nfs4_srv_bounds.opens_per_client = opens_per_client;
	nfs4_srv_bounds.locks_per_client = locks_per_client;
}

struct nfs4_server *nfs_service_nfs4(void)
{
	return nfs4_live.ready ? &nfs4_live : NULL;
}

/* [nfsv4] settings of the live state, with the descriptor bounds. */
static void nfs4_server_settings(const struct rnfsd_config *cfg, struct nfs4_server_cfg *sc)
{
	*sc = nfs4_srv_bounds;
	sc->lease_s = cfg->nfsv4_lease_time;
	sc->max_clients = cfg->nfsv4_max_clients;
	sc->per_host = cfg->nfsv4_max_clients_per_host;
	sc->per_principal = cfg->nfsv4_max_clients_per_principal;
	sc->reply_cache = cfg->nfsv4_reply_cache_size;
}

/* [pnfs]: the data servers of exports with pnfs=flexfiles (nfs/v4/ops/nfs4_pnfs.h). */
static void nfs4_pnfs_settings(const struct rnfsd_config *cfg)
{
	struct nfs4_pnfs_ds ds[NFS4_PNFS_DS_MAX] = { 0 };
	unsigned n = cfg->n_pnfs_ds < NFS4_PNFS_DS_MAX ? cfg->n_pnfs_ds : NFS4_PNFS_DS_MAX;

	for (unsigned i = 0; i < n; i++) {
		snprintf(ds[i].addr, sizeof(ds[i].addr), "%s", cfg->pnfs_ds[i].addr);
		ds[i].port = cfg->pnfs_ds[i].port;
		ds[i].rdma = cfg->pnfs_ds[i].rdma;
		log_info("nfs: pNFS data server %u: %s port %u over %s", i + 1, ds[i].addr, ds[i].port,
			 ds[i].rdma ? "RDMA" : "TCP");
	}
	nfs4_pnfs_configure(ds, n, cfg->pnfs_ds_unavailable);
	if (n == 0) { /* the exports were logged before the data servers were known */
		struct nfs_exports *t = nfs_exports_get();

		for (unsigned i = 0; t && i < t->n; i++)
			if (t->v[i].cfg->pnfs == EXPORT_PNFS_FLEXFILES)
				log_warn(PN_NO_DS_MSG, t->v[i].cfg->path);
		if (t)
			nfs_exports_put(t);
	}
}

static int nfs4_register(const struct rnfsd_config *cfg)
{
	struct nfs4_server_cfg sc;

	/* RFC 8881 §5.9: owner strings, numeric or name@domain (rnfsd.conf(5) [nfsv4] idmap). */
	if (strcmp(cfg->nfsv4_idmap, "numeric") != 0 && strcmp(cfg->nfsv4_idmap, "names") != 0) {
		log_err("nfs: [nfsv4] idmap = %s: expected numeric or names", cfg->nfsv4_idmap);
		return -1;
	}
	nfs4_owner_config(strcmp(cfg->nfsv4_idmap, "names") == 0 ? NFS4_IDMAP_NAMES : NFS4_IDMAP_NUMERIC,
			  strcmp(cfg->nfsv4_domain, "-") ? cfg->nfsv4_domain : NULL);
	log_info("nfs: NFSv4 owners %s (domain %s)", cfg->nfsv4_idmap, nfs4_owner_domain());
	nfs34_versions[0] = nfs3_program.versions[0];
	nfs34_versions[1] = nfs4_version;
	nfs34_program = nfs3_program;
	nfs34_program.nversions = 2;
	nfs34_program.versions = nfs34_versions;
	bool deleg = cfg->nfsv4_delegations != CONFIG_DELEG_NO;

	log_info("nfs: serving NFSv4.0, 4.1 and 4.2 (delegations %s, directory delegations %s; [nfsv4] enable = no "
		 "turns it off)", cfg->nfsv4_delegations == CONFIG_DELEG_YES ? "on" : deleg ? "on (read only)" : "off",
		 deleg && cfg->nfsv4_dir_delegations ? "on" : "off");
	nfs4_deleg_configure(deleg, cfg->nfsv4_delegations == CONFIG_DELEG_YES);
	nfs4_deleg_dir_configure(cfg->nfsv4_dir_delegations);
	nfs4_pnfs_settings(cfg);
	/* A quarter of the workers by default: copies never hold the rest (nfs4_proc_copy.c). */
	nfs4_copy_configure(cfg->nfsv4_copy_workers ? cfg->nfsv4_copy_workers
						    : (cfg->threads / 4 ? cfg->threads / 4 : 1),
			    cfg->nfsv4_copy_workers_per_client);
	nfs4_recovery_max_clients(cfg->nfsv4_max_clients); /* a record for every client that can be confirmed */
	nfs4_server_settings(cfg, &sc);
	nfs4_server_init(&nfs4_live, &sc);
	nfs4_program_serve(&nfs4_live);
	nfs4_stats_serve(&nfs4_live);
	nfs4_recovery_start(cfg->state_dir, cfg->nfsv4_grace_time);
	return rpc_register_program(&nfs34_program);
}

/* rnfsd.conf's [ceph] for the ceph driver (read when an export with fs=ceph is opened). */
static void nfs_ceph_settings(const struct rnfsd_config *cfg)
{
	struct be_ceph_settings s = {
		.mount_timeout = cfg->ceph_mount_timeout,
		.op_timeout = cfg->ceph_op_timeout,
		/* half the workers by default: an export whose cluster hangs leaves the rest to the others */
		.max_calls = cfg->ceph_max_calls ? cfg->ceph_max_calls : (cfg->threads / 2 ? cfg->threads / 2 : 1),
	};

	snprintf(s.conf, sizeof(s.conf), "%s", cfg->ceph_conf);
	snprintf(s.keyring, sizeof(s.keyring), "%s", cfg->ceph_keyring);
	snprintf(s.id, sizeof(s.id), "%s", cfg->ceph_id);
	snprintf(s.fs_name, sizeof(s.fs_name), "%s", strcmp(cfg->ceph_fs_name, "-") ? cfg->ceph_fs_name : "");
	be_ceph_configure(&s);
}

int nfs_service_init(const struct rnfsd_config *cfg, struct export_table *exports)
{
	struct nfs_exports *t;
	int err;

	/* Modes arrive already masked by the client's umask; ours must not mask them again. */
	umask(0);
	nfs_write_verf_init();
	if (nfs_fh_key_init(cfg->state_dir) < 0)
		return -1;
	nfs_ceph_settings(cfg);
	err = be_init();
	if (err) {
		log_err("nfs: backends: %s", strerror(err));
		return -1;
	}
	t = nfs_exports_build(exports);
	if (!t) {
		log_err("nfs: cannot serve the exports (see above)");
		be_shutdown();
		return -1;
	}
	nfs_log_exports(t);
	nfs_exports_install(t);
	if (nfs3_register() != 0 || (cfg->nfsv4 && nfs4_register(cfg) != 0)) {
		nfs_service_shutdown();
		return -1;
	}
	return 0;
}

int nfs_exports_replace(struct export_table *exports)
{
	struct nfs_exports *t = nfs_exports_build(exports);

	if (!t)
		return -1; /* logged; the caller keeps the running table */
	nfs_log_exports(t);
	nfs_exports_install(t);
	return 0;
}

int nfs_exports_copy(struct export_table *out)
{
	struct nfs_exports *t = nfs_exports_get();
	int rc = t ? exports_dup(&t->table, out) : -1;

	nfs_exports_put(t);
	return rc;
}

/* The record's address as text: IPv4 mapped addresses as dotted quads. */
static void nfs_client_addr(const uint8_t host[16], char *buf, size_t len)
{
	static const uint8_t zero[16];

	buf[0] = '\0';
	if (!memcmp(host, zero, 16))
		return;
	if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)host))
		inet_ntop(AF_INET, host + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, host, buf, (socklen_t)len);
}

unsigned nfs_service_clients(struct nfs_client_info *out, unsigned max)
{
	struct nfs4_server *srv = nfs_service_nfs4();
	struct nfs4_client_brief *b = srv && max ? calloc(max, sizeof(*b)) : NULL;
	uint64_t now = nfs4_now();
	unsigned n = b ? nfs4_ctab_brief(&srv->ctab, b, max) : 0;

	for (unsigned i = 0; i < n; i++) {
		out[i] = (struct nfs_client_info){ .clientid = b[i].clientid, .version = b[i].v40 ? "4.0" : "4.1+",
						   .confirmed = b[i].confirmed, .sessions = b[i].sessions,
						   .idle_s = now > b[i].last_renew ? now - b[i].last_renew : 0 };
		nfs_client_addr(b[i].host, out[i].addr, sizeof(out[i].addr));
		nfs4_stab_client_state(&srv->stab, b[i].clientid, &out[i].opens, &out[i].locks);
		out[i].delegations = nfs4_deleg_client_count(b[i].clientid);
		out[i].layouts = nfs4_pnfs_client_layouts(b[i].clientid);
	}
	free(b);
	return n;
}

unsigned nfs_service_layouts(struct nfs_layout_info *out, unsigned max)
{
	static const char *const modes[] = { "-", "read", "rw", "read+rw" };
	struct nfs4_lo_info *l = nfs_service_nfs4() && max ? calloc(max, sizeof(*l)) : NULL;
	unsigned n = l ? nfs4_pnfs_list(l, max) : 0;
	uint64_t now = nfs4_now();

	for (unsigned i = 0; i < n; i++) {
		out[i] = (struct nfs_layout_info){ .clientid = l[i].clientid, .export_id = l[i].fsid,
						   .iomodes = modes[l[i].iomodes & 3], .seqid = l[i].seqid,
						   .recalled = l[i].recall_at != 0,
						   .recalled_s = l[i].recall_at && now > l[i].recall_at ?
									 now - l[i].recall_at : 0 };
		for (uint32_t k = 0; k < l[i].klen && k < 128; k++)
			snprintf(out[i].fh + 2 * k, 3, "%02x", l[i].key[k]);
	}
	free(l);
	return n;
}

unsigned nfs_service_client_revoke(const char *who, unsigned *busy)
{
	struct nfs4_server *srv = nfs_service_nfs4();
	uint8_t host[16] = { 0 };
	struct in_addr v4;
	char *end;

	*busy = 0;
	if (!srv)
		return 0;
	if (!strncmp(who, "0x", 2) || !strncmp(who, "0X", 2)) {
		uint64_t id = strtoull(who, &end, 16);

		return id && !*end ? nfs4_ctab_revoke(&srv->ctab, id, NULL, busy) : 0;
	}
	if (inet_pton(AF_INET, who, &v4) == 1) {
		host[10] = host[11] = 0xff; /* IPv4 mapped, as the records keep it */
		memcpy(host + 12, &v4, 4);
	} else if (inet_pton(AF_INET6, who, host) != 1) {
		return 0;
	}
	return nfs4_ctab_revoke(&srv->ctab, 0, host, busy);
}

int nfs_exports_unlock(const char *path)
{
	return nfs_export_unlock(path);
}

unsigned nfs_exports_count(void)
{
	struct nfs_exports *t = nfs_exports_get();
	unsigned n = t ? t->n : 0;

	nfs_exports_put(t);
	return n;
}

int nfs_stats_sections_add(void)
{
	return nfs_export_stats_section_add() == 0 ? nfs_pnfs_ds_section_add() : -1;
}

void nfs_service_shutdown(void)
{
	nfs4_copy_async_stop(); /* asynchronous copies end before their exports go */
	nfs_exports_install(NULL);
	mount3_list_release();
	nfs4_stats_serve(NULL);
	nfs4_program_serve(NULL);
	nfs4_server_release(&nfs4_live);
	nfs4_recovery_stop();
	be_shutdown();
}
