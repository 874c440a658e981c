/*
 * lock_ranges.c - the ranges one lock owner holds on one file
 * (lock_ranges.h): a small sorted array, merged on lock, trimmed and split
 * on unlock, as POSIX record locks of one owner merge and split (fcntl(2)).
 */
#include <string.h>

#include "backend/local/lock_ranges.h"

uint64_t lk_range_end(uint64_t offset, uint64_t length)
{
	/* To the end (local_lock.c's struct flock then has l_len 0) when it would pass INT64_MAX. */
	if (length == 0 || offset > (uint64_t)INT64_MAX || length > (uint64_t)INT64_MAX - offset)
		return LK_RANGE_EOF;
	return offset + length;
}

static void put_at(struct lk_ranges *s, unsigned i, uint64_t start, uint64_t end)
{
	memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(s->r[0]));
	s->r[i] = (struct lk_range){ start, end };
	s->n++;
}

static void drop(struct lk_ranges *s, unsigned i, unsigned count)
{
	memmove(&s->r[i], &s->r[i + count], (s->n - i - count) * sizeof(s->r[0]));
	s->n = (uint8_t)(s->n - count);
}

void lk_ranges_add(struct lk_ranges *s, uint64_t start, uint64_t end)
{
	unsigned i = 0, j;

	if (s->lost || start >= end)
		return;
	while (i < s->n && s->r[i].end < start) /* pieces wholly before, not touching */
		i++;
	/* r[i..j) overlap or touch [start, end): one piece with it */
	for (j = i; j < s->n && s->r[j].start <= end; j++) {
		if (s->r[j].start < start)
			start = s->r[j].start;
		if (s->r[j].end > end)
			end = s->r[j].end;
	}
	if (j > i) {
		s->r[i] = (struct lk_range){ start, end };
		drop(s, i + 1, j - i - 1);
		return;
	}
	if (s->n == LK_RANGES_MAX) {
		s->lost = true;
		return;
	}
	put_at(s, i, start, end);
}

void lk_ranges_sub(struct lk_ranges *s, uint64_t start, uint64_t end)
{
	if (start == 0 && end == LK_RANGE_EOF) {
		s->n = 0; /* the whole file: nothing is left, known again */
		s->lost = false;
		return;
	}
	if (s->lost || start >= end)
		return;
	for (unsigned i = 0; i < s->n; i++) {
		struct lk_range *p = &s->r[i];

		if (p->end <= start || p->start >= end)
			continue;
		if (p->start < start && p->end > end) { /* split in two */
			if (s->n == LK_RANGES_MAX) {
				s->lost = true;
				return;
			}
			put_at(s, i + 1, end, p->end);
			s->r[i].end = start;
			return;
		}
		if (p->start < start) {
			p->end = start;
		} else if (p->end > end) {
			p->start = end;
		} else {
			drop(s, i, 1);
			i--;
		}
	}
}

bool lk_ranges_empty(const struct lk_ranges *s)
{
	return !s->lost && s->n == 0;
}
