/*
 * pnfs_ds.c - the pNFS data server's side (issue 28): counters of the
 * NFSv3 calls this server served for pNFS flexible-files clients, in the
 * statistics' "pnfs_ds" section (JSON, rnfsctl stats) and on the
 * Prometheus page (rnfsd_pnfs_ds_*).
 *
 * How a data server tells such a call (RFC 8435 §2.2, tight coupling): the
 * handle a client sends is the metadata server's own, which is also this
 * server's handle of the same file (same CephFS path, fsid= and handle
 * key), so nothing in the call sets it apart from a plain NFSv3 client's.
 * The export does: a data server exports the file system with the metadata
 * server's exports line, pnfs=flexfiles included (without [pnfs]
 * data-servers it hands out no layouts itself). Counted here: NFSv3 READ,
 * WRITE and COMMIT, the procedures a flexfiles client sends a data server,
 * on an export with pnfs=; a plain NFSv3 client of such an export counts
 * too, so serve those from another export (another fsid=) to keep the
 * counters to pNFS traffic.
 *
 * Relaxed atomics in static storage: no lock, no allocation on the call path.
 */
#include "nfs/common/nfs_common.h"
#include "core/stats.h"

static struct {
	_Atomic uint64_t calls[NFS_DS_OPS], errors, read_bytes, write_bytes;
} ds;

static const char *const ds_op_name[NFS_DS_OPS] = { "read", "write", "commit" };

void nfs_pnfs_ds_count(const struct nfs_export *e, enum nfs_ds_op op, bool error, uint64_t bytes)
{
	if (!e || e->cfg->pnfs == EXPORT_PNFS_NONE || (unsigned)op >= NFS_DS_OPS)
		return;
	atomic_fetch_add_explicit(&ds.calls[op], 1, memory_order_relaxed);
	if (error)
		atomic_fetch_add_explicit(&ds.errors, 1, memory_order_relaxed);
	if (bytes && op == NFS_DS_READ)
		atomic_fetch_add_explicit(&ds.read_bytes, bytes, memory_order_relaxed);
	else if (bytes && op == NFS_DS_WRITE)
		atomic_fetch_add_explicit(&ds.write_bytes, bytes, memory_order_relaxed);
}

void nfs_pnfs_ds_stats(struct nfs_pnfs_ds_stats *out)
{
	for (unsigned i = 0; i < NFS_DS_OPS; i++)
		out->calls[i] = atomic_load_explicit(&ds.calls[i], memory_order_relaxed);
	out->errors = atomic_load_explicit(&ds.errors, memory_order_relaxed);
	out->read_bytes = atomic_load_explicit(&ds.read_bytes, memory_order_relaxed);
	out->write_bytes = atomic_load_explicit(&ds.write_bytes, memory_order_relaxed);
}

static void ds_write(struct json_out *j, const char *name, void *arg)
{
	struct nfs_pnfs_ds_stats s;

	(void)arg;
	nfs_pnfs_ds_stats(&s);
	json_obj_open(j, name);
	json_u64(j, "reads", s.calls[NFS_DS_READ]);
	json_u64(j, "writes", s.calls[NFS_DS_WRITE]);
	json_u64(j, "commits", s.calls[NFS_DS_COMMIT]);
	json_u64(j, "errors", s.errors);
	json_u64(j, "read_bytes", s.read_bytes);
	json_u64(j, "write_bytes", s.write_bytes);
	json_obj_close(j);
}

static void ds_prom(struct prom_out *p, void *arg)
{
	struct nfs_pnfs_ds_stats s;

	(void)arg;
	nfs_pnfs_ds_stats(&s);
	if (prom_family(p, "rnfsd_pnfs_ds_calls_total", PROM_COUNTER,
			"NFSv3 READ, WRITE, COMMIT served as a pNFS data server (on exports with pnfs=)"))
		for (unsigned i = 0; i < NFS_DS_OPS; i++) {
			struct prom_label l = { "op", ds_op_name[i] };

			prom_sample_u64(p, NULL, &l, 1, s.calls[i]);
		}
	prom_counter1(p, "rnfsd_pnfs_ds_errors_total", "Those calls answered with an error", s.errors);
	prom_counter1(p, "rnfsd_pnfs_ds_read_bytes_total", "Bytes READ as a pNFS data server", s.read_bytes);
	prom_counter1(p, "rnfsd_pnfs_ds_write_bytes_total", "Bytes WRITTEN as a pNFS data server", s.write_bytes);
}

int nfs_pnfs_ds_section_add(void)
{
	return stats_section_add_prom(STATS_PLACE_STATE, "pnfs_ds", ds_write, NULL, ds_prom);
}
