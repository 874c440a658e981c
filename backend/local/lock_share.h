/*
 * lock_share.h - the byte-range locks of several lock owners that share one
 * open file description: a write delegation's file on a local export, whose
 * holder's locks all go on the delegation lease's own description
 * (local_lock.c; opening another would break the lease, local_lease.c).
 * OFD locks of one description never exclude each other, so this table is
 * what tells the sharing owners apart: who holds which range, and of which
 * type. local_lock.c checks conflicts between them here (lks_conflict) and
 * keeps on the kernel's description the union of their locks: write where
 * any owner holds write, read where only reads are held, none elsewhere.
 *
 * How the union follows the table (so no lock is ever released and re-taken
 * on the description, which a local F_SETLKW waiter could catch):
 *  - owner O locks [s, e) as T, no other owner conflicting: every other
 *    owner holds at most reads in [s, e) (nothing there if T is write), so
 *    the union there becomes T: one F_OFD_SETLK of [s, e) as T, nothing
 *    else changes;
 *  - owner O unlocks [s, e): where another owner still holds a lock the
 *    union keeps it (O's was read, as theirs: no conflict was allowed), so
 *    only the gaps lks_gaps() names get F_UNLCK.
 *
 * Pure and bounded: at most LKS_MAX pieces per table (all owners); a lock or
 * unlock that would need more is refused (ENOLCK) with the table unchanged.
 * One owner's pieces are disjoint and never touch with the same type (merged
 * as the kernel merges one owner's POSIX locks).
 */
#ifndef RNFSD_LOCK_SHARE_H
#define RNFSD_LOCK_SHARE_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/local/lock_ranges.h"

#define LKS_MAX 256u

enum lks_type { LKS_NONE = 0, LKS_READ = 1, LKS_WRITE = 2 };

/* One owner's lock of [start, end) (end LK_RANGE_EOF: to the end of the file). */
struct lks_ent {
	uint64_t owner;
	uint64_t start, end;
	uint8_t type; /* LKS_READ, LKS_WRITE */
};

struct lks_table {
	unsigned n; /* pieces in e[], in no order */
	struct lks_ent e[LKS_MAX];
};

/* Another owner's piece that a lock of [start, end) as type by owner conflicts with, or NULL. */
const struct lks_ent *lks_conflict(const struct lks_table *t, uint64_t owner, uint8_t type, uint64_t start,
				   uint64_t end);
/* Owner's lock of [start, end) as type, replacing what it held there (the caller checked
 * lks_conflict). 0, or ENOLCK: more than LKS_MAX pieces (t unchanged). */
int lks_set(struct lks_table *t, uint64_t owner, uint8_t type, uint64_t start, uint64_t end);
/* Owner's unlock of [start, end). 0, or ENOLCK: a split past LKS_MAX pieces (t unchanged). */
int lks_unset(struct lks_table *t, uint64_t owner, uint64_t start, uint64_t end);
/* dst becomes a copy of src (its n pieces only). */
void lks_copy(struct lks_table *dst, const struct lks_table *src);
/* Does owner hold any lock here? */
bool lks_holds(const struct lks_table *t, uint64_t owner);
/* The parts of [start, end) no owner's lock covers, sorted, into out (at most LKS_MAX + 1):
 * what the description lets go of after an unlock of [start, end). Their number. */
unsigned lks_gaps(const struct lks_table *t, uint64_t start, uint64_t end, struct lk_range *out);
/* The union of all owners' locks (owner 0), sorted, disjoint, touching pieces of one type merged,
 * into out (at most 2 * LKS_MAX): what the description holds. Their number. */
unsigned lks_union(const struct lks_table *t, struct lks_ent *out);

#endif
