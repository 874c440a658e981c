/*
 * export_stats.c - per-export counters: NFSv3 calls and NFSv4 operations
 * that acted on an export, their errors, and the bytes READ and WRITTEN, in
 * the statistics' "export_stats" section (JSON, rnfsctl) and on the
 * Prometheus page (rnfsd_export_*_total{export="PATH"}).
 *
 * Each export of a table has one struct nfs_export_stats (nfs_common.h),
 * counted with relaxed atomics from any thread (no lock, no allocation on
 * the call path). A table built to replace the served one takes over the
 * blocks of the exports it keeps (exports_live.c), so a reload or a live
 * change of one export leaves the others' counters alone. The section
 * renders the table served now: an export removed drops out of it (its
 * series end), and the label set is bounded by the export table.
 */
#include <stddef.h>
#include <stdlib.h>

#include "nfs/common/nfs_common.h"
#include "core/stats.h"

struct nfs_export_stats *nfs_export_stats_new(void)
{
	struct nfs_export_stats *st = calloc(1, sizeof(*st));

	if (st)
		atomic_init(&st->acct.refs, 1);
	return st;
}

void nfs_export_count_op(const struct nfs_export *e, bool error)
{
	atomic_fetch_add_explicit(&e->st->acct.calls, 1, memory_order_relaxed);
	if (error)
		atomic_fetch_add_explicit(&e->st->acct.errors, 1, memory_order_relaxed);
}

void nfs_export_count_io(const struct nfs_export *e, uint64_t read, uint64_t written)
{
	if (read)
		atomic_fetch_add_explicit(&e->st->read_bytes, read, memory_order_relaxed);
	if (written)
		atomic_fetch_add_explicit(&e->st->write_bytes, written, memory_order_relaxed);
}

/* One export's numbers, loaded once. */
struct export_stats_snap {
	uint64_t calls, errors, read_bytes, write_bytes;
};

static struct export_stats_snap export_stats_load(const struct nfs_export *e)
{
	return (struct export_stats_snap){
		atomic_load_explicit(&e->st->acct.calls, memory_order_relaxed),
		atomic_load_explicit(&e->st->acct.errors, memory_order_relaxed),
		atomic_load_explicit(&e->st->read_bytes, memory_order_relaxed),
		atomic_load_explicit(&e->st->write_bytes, memory_order_relaxed),
	};
}

static void export_stats_write(struct json_out *j, const char *name, void *arg)
{
	struct nfs_exports *t = nfs_exports_get();

	(void)arg;
	json_arr_open(j, name);
	for (unsigned i = 0; t && i < t->n; i++) {
		struct export_stats_snap s = export_stats_load(&t->v[i]);

		json_obj_open(j, NULL);
		json_str(j, "path", t->v[i].cfg->path);
		json_u64(j, "calls", s.calls);
		json_u64(j, "errors", s.errors);
		json_u64(j, "read_bytes", s.read_bytes);
		json_u64(j, "write_bytes", s.write_bytes);
		json_obj_close(j);
	}
	json_arr_close(j);
	nfs_exports_put(t);
}

/* One family: each served export's value of field (an offset into the snapshot). */
static void export_stats_family(struct prom_out *p, const struct nfs_exports *t, const char *name,
				const char *help, size_t field)
{
	if (!prom_family(p, name, PROM_COUNTER, help))
		return;
	for (unsigned i = 0; t && i < t->n; i++) {
		struct export_stats_snap s = export_stats_load(&t->v[i]);
		struct prom_label l = { "export", t->v[i].cfg->path };

		prom_sample_u64(p, NULL, &l, 1, *(const uint64_t *)((const char *)&s + field));
	}
}

static void export_stats_prom(struct prom_out *p, void *arg)
{
	struct nfs_exports *t = nfs_exports_get();

	(void)arg;
	export_stats_family(p, t, "rnfsd_export_calls_total",
			    "NFSv3 calls and NFSv4 operations that acted on the export",
			    offsetof(struct export_stats_snap, calls));
	export_stats_family(p, t, "rnfsd_export_errors_total",
			    "Calls and operations on the export not answered with success",
			    offsetof(struct export_stats_snap, errors));
	export_stats_family(p, t, "rnfsd_export_read_bytes_total", "Bytes READ from the export",
			    offsetof(struct export_stats_snap, read_bytes));
	export_stats_family(p, t, "rnfsd_export_write_bytes_total", "Bytes WRITTEN to the export",
			    offsetof(struct export_stats_snap, write_bytes));
	nfs_exports_put(t);
}

int nfs_export_stats_section_add(void)
{
	return stats_section_add_prom(STATS_PLACE_STATE, "export_stats", export_stats_write, NULL, export_stats_prom);
}
