/*
 * fd_budget.c - the descriptor budget (fd_budget.h): reserve first, then
 * the file cache, then open files and lock descriptions half and half
 * unless set, each client a quarter of its table unless set.
 */
#include "conf/fd_budget.h"

static unsigned at_least(uint64_t v, unsigned floor)
{
	return v < floor ? floor : v > UINT32_MAX ? UINT32_MAX : (unsigned)v;
}

/* A client's share of a table: set (lowered to the table), or a quarter of it. */
static unsigned share(unsigned set, unsigned table, bool *lowered)
{
	if (set > table) {
		*lowered = true;
		return table;
	}
	return set ? set : at_least(table / 4, FD_BUDGET_MIN < table ? FD_BUDGET_MIN : table);
}

void fd_budget_derive(const struct fd_budget_in *in, struct fd_budget *out)
{
	uint64_t nofile = in->nofile < 4 * FD_BUDGET_MIN ? 4 * FD_BUDGET_MIN : in->nofile;
	uint64_t reserve = (uint64_t)in->max_connections + FD_BUDGET_PIPES + FD_BUDGET_MISC;
	uint64_t state, open_files, lock_descs;

	*out = (struct fd_budget){ 0 };
	if (reserve > nofile / 2)
		reserve = nofile / 2; /* fewer connections than max-connections fit anyway */
	out->reserve = (unsigned)reserve;
	out->file_cache = at_least((nofile - reserve) / 8 < FD_BUDGET_FCACHE_MAX ? (nofile - reserve) / 8
										 : FD_BUDGET_FCACHE_MAX, 8);
	state = nofile - reserve - out->file_cache;
	open_files = in->open_files ? in->open_files : state / 2;
	lock_descs = in->lock_descs ? in->lock_descs : state - state / 2;
	if (open_files + lock_descs > state) {
		/* both set (or one set too large): lowered in proportion */
		open_files = open_files * state / (open_files + lock_descs);
		lock_descs = state - open_files;
		out->lowered = true;
	}
	out->open_files = at_least(open_files, FD_BUDGET_MIN);
	out->lock_descs = at_least(lock_descs, FD_BUDGET_MIN);
	out->open_files_per_client = share(in->open_files_per_client, out->open_files, &out->lowered);
	out->lock_owners_per_client = share(in->lock_owners_per_client, out->lock_descs, &out->lowered);
	out->nlm_locks_per_host = share(in->nlm_locks_per_host, out->lock_descs, &out->lowered);
}
