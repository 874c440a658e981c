/*
 * tcp_record.c - RFC 5531 §11 record marking parser (see tcp_record.h).
 * Two passes per header: the length is checked against what the record may
 * still grow by before anything is copied.
 */
#include "transport/tcp_record.h"

#include <string.h>

void rm_init(struct rm_state *st, size_t max_record)
{
	memset(st, 0, sizeof(*st));
	st->max_record = max_record;
}

void rm_reset(struct rm_state *st)
{
	st->rec_len = 0;
	st->frag_left = 0;
	st->in_body = false;
	st->last = false;
	st->hdr_have = 0;
}

/* The current fragment's body is complete. */
static enum rm_status rm_fragment_done(struct rm_state *st)
{
	st->in_body = false;
	return st->last ? RM_RECORD : RM_MORE;
}

/* Parse a complete header in st->hdr. */
static enum rm_status rm_header(struct rm_state *st)
{
	uint32_t v = (uint32_t)st->hdr[0] << 24 | (uint32_t)st->hdr[1] << 16 |
		     (uint32_t)st->hdr[2] << 8 | st->hdr[3];
	uint32_t len = v & RM_LENGTH_MASK;

	st->hdr_have = 0;
	/* rec_len <= max_record always holds, so the subtraction cannot wrap. */
	if (len > st->max_record - st->rec_len) {
		st->refused_len = (uint64_t)st->rec_len + len;
		return RM_TOO_BIG;
	}
	st->last = (v & RM_LAST_FRAGMENT) != 0;
	st->frag_left = len;
	st->in_body = true;
	if (len == 0)
		return rm_fragment_done(st);
	return RM_MORE;
}

enum rm_status rm_consume(struct rm_state *st, const uint8_t *in, size_t len, uint8_t *rec, size_t *used)
{
	return rm_consume_cap(st, in, len, rec, rec ? st->max_record : 0, used);
}

enum rm_status rm_consume_cap(struct rm_state *st, const uint8_t *in, size_t len, uint8_t *rec, size_t cap,
			      size_t *used)
{
	size_t pos = 0;
	enum rm_status r;

	for (;;) {
		if (!st->in_body) {
			size_t take = 4 - st->hdr_have;
			if (take > len - pos)
				take = len - pos;
			memcpy(st->hdr + st->hdr_have, in + pos, take);
			st->hdr_have += take;
			pos += take;
			if (st->hdr_have < 4) {
				*used = pos;
				return RM_MORE;
			}
			r = rm_header(st);
			if (r != RM_MORE) {
				*used = pos;
				return r;
			}
			continue;
		}
		if (pos == len) {
			*used = pos;
			return RM_MORE;
		}
		size_t n = rm_direct_room_cap(st, cap);
		if (!rec || n == 0) {
			*used = pos;
			return RM_NEED_BUF;
		}
		if (n > len - pos)
			n = len - pos;
		memcpy(rec + st->rec_len, in + pos, n);
		pos += n;
		r = rm_direct(st, n);
		if (r != RM_MORE) {
			*used = pos;
			return r;
		}
	}
}

enum rm_status rm_direct(struct rm_state *st, size_t n)
{
	st->rec_len += n;
	st->frag_left -= (uint32_t)n;
	if (st->frag_left > 0)
		return RM_MORE;
	return rm_fragment_done(st);
}

bool rm_whole_record(const struct rm_state *st, const uint8_t *in, size_t len)
{
	if (rm_mid_record(st) || len < 4)
		return false;
	uint32_t v = (uint32_t)in[0] << 24 | (uint32_t)in[1] << 16 | (uint32_t)in[2] << 8 | in[3];
	uint32_t n = v & RM_LENGTH_MASK;

	return (v & RM_LAST_FRAGMENT) && n > 0 && n <= st->max_record && n <= len - 4;
}
