/*
 * test_tcp_record.c - the RFC 5531 §11 record-marking parser over buffers
 *: single and multi-fragment records, zero-length fragments and
 * records, headers and bodies split at every byte, back-to-back records,
 * the size limit, truncated streams, RM_NEED_BUF and direct reads, a record
 * outgrowing a small first buffer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>
#include <string.h>

#include "transport/tcp_record.h"

struct stream {
	uint8_t b[1 << 16];
	size_t n;
};

static void put_frag(struct stream *s, const void *data, uint32_t len, int last)
{
	uint32_t h = (last ? RM_LAST_FRAGMENT : 0) | len;
	s->b[s->n++] = h >> 24;
	s->b[s->n++] = h >> 16;
	s->b[s->n++] = h >> 8;
	s->b[s->n++] = h;
	memcpy(s->b + s->n, data, len);
	s->n += len;
}

/* Feed s in pieces of `step` bytes; collect records (lengths and bytes). */
struct result {
	unsigned nrec;
	size_t len[16];
	uint8_t rec[16][4096];
	enum rm_status last;
};

static void feed(const struct stream *s, size_t step, size_t max_record, struct result *r)
{
	struct rm_state st;
	uint8_t *buf = malloc(max_record ? max_record : 1);
	size_t pos = 0;

	memset(r, 0, sizeof(*r));
	rm_init(&st, max_record);
	while (pos < s->n) {
		size_t n = s->n - pos < step ? s->n - pos : step;
		size_t off = 0;
		while (off < n) {
			size_t used = 0;
			enum rm_status rs = rm_consume(&st, s->b + pos + off, n - off, buf, &used);
			off += used;
			r->last = rs;
			if (rs == RM_RECORD) {
				assert_true(r->nrec < 16);
				r->len[r->nrec] = st.rec_len;
				memcpy(r->rec[r->nrec], buf, st.rec_len);
				r->nrec++;
				rm_reset(&st);
			} else if (rs == RM_TOO_BIG) {
				free(buf);
				return;
			} else {
				assert_int_equal(rs, RM_MORE);
				assert_int_equal(off, n); /* MORE means everything was taken */
			}
		}
		pos += n;
	}
	free(buf);
}

static void test_single_fragment(void **state)
{
	(void)state;
	struct stream s = {.n = 0};
	struct result r;
	put_frag(&s, "hello, record", 13, 1);
	for (size_t step = 1; step <= s.n; step++) {
		feed(&s, step, 1024, &r);
		assert_int_equal(r.nrec, 1);
		assert_int_equal(r.len[0], 13);
		assert_memory_equal(r.rec[0], "hello, record", 13);
	}
}

static void test_multi_fragment(void **state)
{
	(void)state;
	struct stream s = {.n = 0};
	struct result r;
	put_frag(&s, "abc", 3, 0);
	put_frag(&s, "", 0, 0);          /* zero-length fragment in the middle */
	put_frag(&s, "defgh", 5, 0);
	put_frag(&s, "ijklmnopq", 9, 1);
	/* and a second record right behind it */
	put_frag(&s, "XY", 2, 0);
	put_frag(&s, "Z", 1, 1);
	for (size_t step = 1; step <= s.n; step++) {
		feed(&s, step, 1024, &r);
		assert_int_equal(r.nrec, 2);
		assert_int_equal(r.len[0], 17);
		assert_memory_equal(r.rec[0], "abcdefghijklmnopq", 17);
		assert_int_equal(r.len[1], 3);
		assert_memory_equal(r.rec[1], "XYZ", 3);
	}
}

static void test_zero_length(void **state)
{
	(void)state;
	struct stream s = {.n = 0};
	struct result r;
	put_frag(&s, "", 0, 1);           /* an empty record */
	put_frag(&s, "", 0, 0);
	put_frag(&s, "", 0, 1);           /* empty, in two fragments */
	put_frag(&s, "ok", 2, 1);
	for (size_t step = 1; step <= s.n; step++) {
		feed(&s, step, 1024, &r);
		assert_int_equal(r.nrec, 3);
		assert_int_equal(r.len[0], 0);
		assert_int_equal(r.len[1], 0);
		assert_int_equal(r.len[2], 2);
	}
}

static void test_max_record(void **state)
{
	(void)state;
	struct stream s = {.n = 0};
	struct result r;
	uint8_t data[200] = {0};

	/* Exactly the limit, in one fragment or split: accepted. */
	put_frag(&s, data, 100, 1);
	put_frag(&s, data, 60, 0);
	put_frag(&s, data, 40, 1);
	feed(&s, 7, 100, &r);
	assert_int_equal(r.nrec, 2);
	assert_int_equal(r.len[0], 100);
	assert_int_equal(r.len[1], 100);

	/* One byte over, in one fragment: refused at the header. */
	s.n = 0;
	put_frag(&s, data, 101, 1);
	feed(&s, 3, 100, &r);
	assert_int_equal(r.nrec, 0);
	assert_int_equal(r.last, RM_TOO_BIG);

	/* Over across fragments: refused at the fragment that exceeds it. */
	s.n = 0;
	put_frag(&s, data, 60, 0);
	put_frag(&s, data, 41, 1);
	feed(&s, 1, 100, &r);
	assert_int_equal(r.nrec, 0);
	assert_int_equal(r.last, RM_TOO_BIG);

	/* The largest length a header can carry, and a zero limit. */
	struct rm_state st;
	size_t used;
	uint8_t hdr[4] = {0xff, 0xff, 0xff, 0xff};
	rm_init(&st, 1u << 20);
	assert_int_equal(rm_consume(&st, hdr, 4, NULL, &used), RM_TOO_BIG);
	assert_int_equal(used, 4);
	assert_int_equal(st.refused_len, 0x7fffffffu);
	rm_init(&st, 0);
	uint8_t one[5] = {0x80, 0, 0, 1, 'x'};
	assert_int_equal(rm_consume(&st, one, 5, NULL, &used), RM_TOO_BIG);
}

static void test_truncated(void **state)
{
	(void)state;
	struct stream s = {.n = 0};
	struct result r;
	put_frag(&s, "abcdefgh", 8, 0);
	put_frag(&s, "ijkl", 4, 1);
	/* Every proper prefix: no record, every byte consumed, no error. */
	for (size_t cut = 0; cut < s.n; cut++) {
		struct stream t = s;
		t.n = cut;
		feed(&t, 5, 1024, &r);
		assert_int_equal(r.nrec, 0);
	}
}

static void test_need_buf_and_direct(void **state)
{
	(void)state;
	struct stream s = {.n = 0};
	struct rm_state st;
	uint8_t rec[64];
	size_t used;

	put_frag(&s, "0123456789", 10, 1);
	rm_init(&st, 64);
	/* Without a buffer, the header is parsed and the parser stops before the body. */
	assert_int_equal(rm_consume(&st, s.b, s.n, NULL, &used), RM_NEED_BUF);
	assert_int_equal(used, 4);
	assert_int_equal(rm_direct_room(&st), 10);
	/* Three bytes through the parser, the rest "read" straight into rec. */
	assert_int_equal(rm_consume(&st, s.b + 4, 3, rec, &used), RM_MORE);
	assert_int_equal(used, 3);
	assert_int_equal(rm_direct_room(&st), 7);
	memcpy(rec + st.rec_len, s.b + 7, 5);
	assert_int_equal(rm_direct(&st, 5), RM_MORE);
	memcpy(rec + st.rec_len, s.b + 12, 2);
	assert_int_equal(rm_direct(&st, 2), RM_RECORD);
	assert_int_equal(st.rec_len, 10);
	assert_memory_equal(rec, "0123456789", 10);
	assert_int_equal(rm_direct_room(&st), 0);

	/* A zero-length record needs no buffer. */
	rm_reset(&st);
	uint8_t empty[4] = {0x80, 0, 0, 0};
	assert_int_equal(rm_consume(&st, empty, 4, NULL, &used), RM_RECORD);
	assert_int_equal(st.rec_len, 0);
}

/* A record assembled in a small buffer until it outgrows it, then moved to a
 * large one (the TCP transport's rbuf and call context). */
static void test_small_buffer(void **state)
{
	(void)state;
	struct stream s = {.n = 0};
	struct rm_state st;
	uint8_t small[8], big[64];
	size_t used, pos;

	put_frag(&s, "abcde", 5, 0);
	put_frag(&s, "fghijklmno", 10, 1);
	rm_init(&st, 64);
	assert_false(rm_mid_record(&st));
	/* First fragment fits; 3 bytes of the second fill the small buffer. */
	assert_int_equal(rm_consume_cap(&st, s.b, s.n, small, sizeof(small), &used), RM_NEED_BUF);
	assert_true(rm_mid_record(&st));
	assert_int_equal(st.rec_len, 8);
	assert_int_equal(rm_direct_room_cap(&st, sizeof(small)), 0);
	assert_int_equal(rm_direct_room_cap(&st, sizeof(big)), 7);
	assert_memory_equal(small, "abcdefgh", 8);
	pos = used;
	memcpy(big, small, st.rec_len);
	assert_int_equal(rm_consume_cap(&st, s.b + pos, s.n - pos, big, sizeof(big), &used), RM_RECORD);
	assert_int_equal(pos + used, s.n);
	assert_int_equal(st.rec_len, 15);
	assert_memory_equal(big, "abcdefghijklmno", 15);
	assert_true(rm_mid_record(&st)); /* until reset */
	rm_reset(&st);
	assert_false(rm_mid_record(&st));

	/* A record that exactly fills the small buffer completes in it. */
	s.n = 0;
	put_frag(&s, "12345678", 8, 1);
	assert_int_equal(rm_consume_cap(&st, s.b, s.n, small, sizeof(small), &used), RM_RECORD);
	assert_int_equal(used, s.n);
	assert_memory_equal(small, "12345678", 8);
	/* Half a header is already inside a record. */
	rm_reset(&st);
	assert_int_equal(rm_consume_cap(&st, s.b, 2, small, sizeof(small), &used), RM_MORE);
	assert_true(rm_mid_record(&st));
}

static void test_whole_record(void **state)
{
	(void)state;
	struct stream s = {.n = 0};
	struct rm_state st;
	size_t used;
	uint8_t rec[64];

	rm_init(&st, 16);
	put_frag(&s, "0123456789", 10, 1);
	assert_true(rm_whole_record(&st, s.b, s.n));
	assert_true(rm_whole_record(&st, s.b, s.n + 3)); /* more follows */
	assert_false(rm_whole_record(&st, s.b, s.n - 1)); /* body incomplete */
	assert_false(rm_whole_record(&st, s.b, 3));       /* header incomplete */
	/* Not while inside a record. */
	assert_int_equal(rm_consume(&st, s.b, 2, rec, &used), RM_MORE);
	assert_false(rm_whole_record(&st, s.b, s.n));
	rm_reset(&st);
	/* Not the last fragment, empty, or over max_record. */
	s.n = 0;
	put_frag(&s, "0123", 4, 0);
	assert_false(rm_whole_record(&st, s.b, s.n));
	s.n = 0;
	put_frag(&s, "", 0, 1);
	assert_false(rm_whole_record(&st, s.b, s.n));
	s.n = 0;
	put_frag(&s, "0123456789abcdefg", 17, 1);
	assert_false(rm_whole_record(&st, s.b, s.n));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_fragment),
		cmocka_unit_test(test_multi_fragment),
		cmocka_unit_test(test_zero_length),
		cmocka_unit_test(test_max_record),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_need_buf_and_direct),
		cmocka_unit_test(test_small_buffer),
		cmocka_unit_test(test_whole_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
