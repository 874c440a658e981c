/*
 * siphash.c - SipHash-2-4, written from the paper's description: four 64-bit
 * state words, two compression rounds per 8-byte message word, four
 * finalisation rounds; the last word carries the message length in its top
 * byte. Checked against the reference vectors in tests/unit/test_nfs_siphash.c.
 */
#include "nfs/common/siphash.h"

#include <string.h>
#include <endian.h>

#define ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

struct sip_state {
	uint64_t v0, v1, v2, v3;
};

static void sip_round(struct sip_state *s)
{
	s->v0 += s->v1;
	s->v1 = ROTL64(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = ROTL64(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = ROTL64(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = ROTL64(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = ROTL64(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = ROTL64(s->v2, 32);
}

static void sip_compress(struct sip_state *s, uint64_t m)
{
	s->v3 ^= m;
	sip_round(s);
	sip_round(s);
	s->v0 ^= m;
}

static uint64_t load_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

uint64_t siphash24(const uint8_t key[SIPHASH_KEY_BYTES], const void *in, size_t len)
{
	const uint8_t *p = in;
	uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
	struct sip_state s = {
		.v0 = k0 ^ 0x736f6d6570736575ULL,
		.v1 = k1 ^ 0x646f72616e646f6dULL,
		.v2 = k0 ^ 0x6c7967656e657261ULL,
		.v3 = k1 ^ 0x7465646279746573ULL,
	};
	size_t full = len & ~(size_t)7;
	uint64_t last = (uint64_t)(len & 0xff) << 56;

	for (size_t i = 0; i < full; i += 8)
		sip_compress(&s, load_le64(p + i));
	for (size_t i = 0; i < (len & 7); i++)
		last |= (uint64_t)p[full + i] << (8 * i);
	sip_compress(&s, last);

	s.v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
