/*
 * tcp_record.h - RFC 5531 §11 record marking, as a pure parser over buffers
 *. No I/O, no allocation: the caller feeds stream bytes and
 * provides the buffer the record is assembled in, so it is unit-tested
 * without sockets (tests/unit/test_tcp_record.c).
 *
 * RFC 5531 §11: a record is one or more fragments; each fragment is a 4-byte
 * big-endian header - bit 31 set on the record's last fragment, bits 0..30
 * the fragment's length - followed by that many bytes. Fragment bodies are
 * concatenated into one contiguous record; headers never reach the record
 * buffer. Zero-length fragments are legal.
 */
#ifndef RNFSD_TCP_RECORD_H
#define RNFSD_TCP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RM_LAST_FRAGMENT 0x80000000u
#define RM_LENGTH_MASK 0x7fffffffu

struct rm_state {
	size_t max_record;    /* a record longer than this is refused */
	size_t rec_len;       /* record bytes assembled so far */
	uint32_t frag_left;   /* body bytes of the current fragment still to come */
	bool in_body;         /* a header was parsed; frag_left bytes of body follow */
	bool last;            /* the current fragment is the last of its record */
	uint8_t hdr[4];       /* a header split across reads */
	unsigned hdr_have;
	uint64_t refused_len; /* RM_TOO_BIG: rec_len + the offending fragment's length */
};

enum rm_status {
	RM_MORE,      /* all input consumed; the record is not complete yet */
	RM_RECORD,    /* a record is complete: rec[0 .. rec_len) (rm_reset() before the next) */
	RM_NEED_BUF,  /* body bytes are next but rec is NULL: call again with a buffer */
	RM_TOO_BIG,   /* the record would exceed max_record: the stream cannot continue */
};

void rm_init(struct rm_state *st, size_t max_record);
/* Forget the delivered record; the stream continues with the next header. */
void rm_reset(struct rm_state *st);

/*
 * Consume stream bytes in[0 .. len). Fragment bodies are copied to
 * rec + rec_len (rec holds max_record bytes, or is NULL if the caller has no
 * buffer yet). Stops right after a complete record. *used = bytes consumed.
 */
enum rm_status rm_consume(struct rm_state *st, const uint8_t *in, size_t len, uint8_t *rec, size_t *used);

/*
 * The same into a buffer of cap bytes (cap <= max_record; rec may be NULL
 * when cap is 0): RM_NEED_BUF when body bytes are next and the record
 * already fills rec[0 .. cap). The caller then moves rec[0 .. rec_len) to a
 * larger buffer and goes on with it (the record so far is kept in rm_state).
 */
enum rm_status rm_consume_cap(struct rm_state *st, const uint8_t *in, size_t len, uint8_t *rec, size_t cap,
			      size_t *used);

/* Body bytes the caller may read straight into rec + rec_len (0 if none). */
static inline size_t rm_direct_room(const struct rm_state *st)
{
	return st->in_body ? st->frag_left : 0;
}

/* The same for a buffer of cap bytes. */
static inline size_t rm_direct_room_cap(const struct rm_state *st, size_t cap)
{
	size_t room = cap > st->rec_len ? cap - st->rec_len : 0;
	size_t left = rm_direct_room(st);

	return left < room ? left : room;
}

/* At a record boundary, in[0 .. len) starts with a whole record of one
 * fragment (RFC 5531 §11: last-fragment bit set) of 1 .. max_record bytes. */
bool rm_whole_record(const struct rm_state *st, const uint8_t *in, size_t len);

/* Somewhere inside a record: a header, a body or a complete record not yet reset. */
static inline bool rm_mid_record(const struct rm_state *st)
{
	return st->in_body || st->hdr_have || st->rec_len || st->last;
}

/* n (<= rm_direct_room()) body bytes were placed at rec + rec_len by the caller. */
enum rm_status rm_direct(struct rm_state *st, size_t n);

#endif
