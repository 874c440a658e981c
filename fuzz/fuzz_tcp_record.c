/*
 * fuzz_tcp_record.c - libFuzzer target: RFC 5531 §11 record marking
 * (transport/tcp_record.c) over an arbitrary byte stream fed in pieces of
 * input-chosen sizes, mixing rm_consume() with and without a buffer and
 * rm_direct() as tcp_conn.c does. Built as a libFuzzer target with
 * -Dfuzz=true (clang), and in every build as a replay test over
 * fuzz/corpus/tcp_record (fuzz_replay.c).
 *
 * Input: byte 0..1 max_record (big-endian, 0..65535), byte 2 the seed of the
 * piece sizes and of the consume/direct choices, the rest the stream.
 * Every record the parser delivers is compared with the one a simple
 * reference parser (below) finds in the whole stream: same bytes, never
 * longer than max_record; RM_TOO_BIG exactly where the reference refuses;
 * *used and rm_direct_room() stay in bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/tcp_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) abort(); } while (0)

/* The reference: the next record of s[*pos..n), assembled in out. */
enum ref_result { REF_RECORD, REF_TOO_BIG, REF_END };

static enum ref_result ref_next(const uint8_t *s, size_t n, size_t *pos, size_t max,
				uint8_t *out, size_t *out_len)
{
	size_t len = 0;

	for (;;) {
		if (n - *pos < 4)
			return REF_END;
		const uint8_t *h = s + *pos;
		uint32_t v = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
		uint64_t flen = v & RM_LENGTH_MASK;
		*pos += 4;
		if (len + flen > max)
			return REF_TOO_BIG;
		if (n - *pos < flen)
			return REF_END;
		memcpy(out + len, s + *pos, flen);
		len += flen;
		*pos += flen;
		if (v & RM_LAST_FRAGMENT) {
			*out_len = len;
			return REF_RECORD;
		}
	}
}

/* xorshift: piece sizes and choices from the seed byte, reproducibly. */
static uint32_t rnd(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

struct run {
	struct rm_state st;
	uint8_t *rec;        /* max_record bytes, allocated exactly */
	uint8_t *want;       /* the reference's record */
	const uint8_t *s;    /* the stream */
	size_t n, ref_pos;
	uint32_t x;
};

/* A record was delivered: it must be the reference's next one. */
static void delivered(struct run *r)
{
	size_t want_len = 0;

	CHECK(ref_next(r->s, r->n, &r->ref_pos, r->st.max_record, r->want, &want_len) == REF_RECORD);
	CHECK(r->st.rec_len == want_len);
	CHECK(r->st.rec_len <= r->st.max_record);
	CHECK(want_len == 0 || memcmp(r->rec, r->want, want_len) == 0);
	rm_reset(&r->st);
}

/* Feed s[pos..pos+len) like tcp_conn.c: direct reads into the record where
 * the seed says so. Returns false once the stream is refused. */
static bool feed(struct run *r, const uint8_t *in, size_t len)
{
	while (len > 0) {
		size_t room = rm_direct_room(&r->st);
		CHECK(room <= r->st.max_record - r->st.rec_len);
		enum rm_status s;
		size_t used;
		bool direct = room > 0 && (rnd(&r->x) & 1);
		if (direct) {
			used = 1 + rnd(&r->x) % (room < len ? room : len);
			memcpy(r->rec + r->st.rec_len, in, used);
			s = rm_direct(&r->st, used);
		} else {
			bool nobuf = (rnd(&r->x) & 3) == 0;
			s = rm_consume(&r->st, in, len, nobuf ? NULL : r->rec, &used);
			CHECK(used <= len);
			CHECK(s != RM_NEED_BUF || nobuf);
		}
		in += used;
		len -= used;
		CHECK(r->st.rec_len <= r->st.max_record);
		if (s == RM_TOO_BIG) {
			size_t dummy;
			CHECK(r->st.refused_len > r->st.max_record);
			CHECK(ref_next(r->s, r->n, &r->ref_pos, r->st.max_record, r->want, &dummy) ==
			      REF_TOO_BIG);
			return false;
		}
		if (s == RM_RECORD)
			delivered(r);
		else if (s == RM_MORE && !direct)
			CHECK(len == 0); /* RM_MORE from rm_consume: all input taken */
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run r;

	if (size < 3)
		return 0;
	size_t max = (size_t)data[0] << 8 | data[1];
	rm_init(&r.st, max);
	r.x = 0x9e3779b9u ^ data[2];
	r.s = data + 3;
	r.n = size - 3;
	r.ref_pos = 0;
	r.rec = malloc(max ? max : 1);
	r.want = malloc(max ? max : 1);
	CHECK(r.rec && r.want);

	size_t pos = 0;
	bool alive = true;
	while (alive && pos < r.n) {
		size_t piece = 1 + rnd(&r.x) % (r.n - pos < 64 ? r.n - pos : 64);
		if ((rnd(&r.x) & 7) == 0)
			piece = r.n - pos;
		alive = feed(&r, r.s + pos, piece);
		pos += piece;
	}
	if (alive) {
		/* Whatever is left is an incomplete record in the reference too. */
		size_t dummy;
		CHECK(ref_next(r.s, r.n, &r.ref_pos, max, r.want, &dummy) == REF_END);
	}
	free(r.rec);
	free(r.want);
	return 0;
}
