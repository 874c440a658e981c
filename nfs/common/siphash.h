/*
 * siphash.h - SipHash-2-4 (Aumasson & Bernstein, 2012), a keyed 64-bit PRF.
 * The MAC of file handles (nfs/common/fh.c).
 */
#ifndef RNFSD_SIPHASH_H
#define RNFSD_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define SIPHASH_KEY_BYTES 16

/* SipHash-2-4 of in[0..len) under a 128-bit key (bytes, little-endian words as the reference). */
uint64_t siphash24(const uint8_t key[SIPHASH_KEY_BYTES], const void *in, size_t len);

#endif
