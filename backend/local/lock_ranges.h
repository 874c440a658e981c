/*
 * lock_ranges.h - what one lock owner holds on one file, as the byte ranges
 * its POSIX-style locks cover (merged and split as the kernel merges and
 * splits them; the lock type does not matter here). The local backend keeps
 * one per open file description (local_lock.c) to know when an owner holds
 * nothing on a file any more, so the description can be closed at once
 * rather than when the owner goes.
 *
 * Pure and bounded: at most LK_RANGES_MAX disjoint pieces. An owner whose
 * locks ever need more is marked lost: nothing is known of it until an
 * unlock of the whole file (which leaves nothing, whatever was held).
 */
#ifndef RNFSD_LOCK_RANGES_H
#define RNFSD_LOCK_RANGES_H

#include <stdbool.h>
#include <stdint.h>

#define LK_RANGES_MAX 8u
#define LK_RANGE_EOF UINT64_MAX /* an end that reaches the end of the file (and beyond) */

struct lk_range {
	uint64_t start, end; /* [start, end) */
};

struct lk_ranges {
	uint8_t n;    /* pieces in r[], sorted, disjoint, not touching */
	bool lost;    /* more pieces than r[] holds were needed: unknown */
	struct lk_range r[LK_RANGES_MAX];
};

/* The end of [offset, +length) as the kernel takes it: 0, or a length past INT64_MAX, reaches EOF. */
uint64_t lk_range_end(uint64_t offset, uint64_t length);
/* A lock of [start, end) was granted. */
void lk_ranges_add(struct lk_ranges *s, uint64_t start, uint64_t end);
/* [start, end) was unlocked. */
void lk_ranges_sub(struct lk_ranges *s, uint64_t start, uint64_t end);
/* Known to hold nothing. */
bool lk_ranges_empty(const struct lk_ranges *s);

#endif
