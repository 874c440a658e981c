/*
 * handle_cache.h - the local backend's file handles by inode identity, so
 * that a directory listing with handles (NFSv3 READDIRPLUS, NFSv4 READDIR
 * with FATTR4_FILEHANDLE) makes one statx(2) per entry instead of statx and
 * name_to_handle_at(2) (issue 22: READDIRPLUS cost about two path lookups
 * per entry).
 *
 * The key is (device, inode number, birth time in ns). A kernel handle
 * names an inode and its generation; a reused inode number has a new birth
 * time, so it is a new key: a cached handle always names the inode the key
 * names. A file system whose statx(2) gives no birth time (tmpfs and ext4
 * with 128-byte inodes on Linux 6.1) is not cached. The one way to change a
 * handle under a key is FS_IOC_SETVERSION (root, by hand); the old handle
 * then gets ESTALE (the kernel checks the generation), never another file.
 *
 * Pure bookkeeping: no system calls, unit-tested in
 * tests/unit/test_handle_cache.c. Bounded: a fixed table of sets of
 * HANDLE_CACHE_WAYS slots, allocated at init; a full set replaces its slots
 * in turn. Any thread: each set is guarded by one of HANDLE_CACHE_STRIPES
 * mutexes (held for a copy of at most HANDLE_CACHE_DATA bytes).
 */
#ifndef RNFSD_BACKEND_LOCAL_HANDLE_CACHE_H
#define RNFSD_BACKEND_LOCAL_HANDLE_CACHE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"

#define HANDLE_CACHE_DATA 44u    /* longest handle kept (4-byte type + ext4/xfs/btrfs kernel handles) */
#define HANDLE_CACHE_WAYS 4u
#define HANDLE_CACHE_STRIPES 64u

struct handle_cache_key {
	uint64_t dev, ino;
	int64_t btime_sec;
	uint32_t btime_nsec;
};

struct handle_cache_slot {
	struct handle_cache_key key;
	uint8_t len;             /* 0: empty */
	uint8_t data[HANDLE_CACHE_DATA];
};

struct handle_cache {
	struct handle_cache_slot *slot; /* nset * HANDLE_CACHE_WAYS */
	uint8_t *turn;                  /* per set: the slot a full set replaces next */
	uint32_t nset;                  /* a power of two */
	pthread_mutex_t stripe[HANDLE_CACHE_STRIPES];
	atomic_uint_fast64_t hits, misses, entries;
};

struct handle_cache_counts {
	uint64_t entries, max, hits, misses;
};

/* Room for at least `entries` handles (rounded up to a power of two sets);
 * 0 entries: a cache that keeps nothing. 0 or ENOMEM. */
int handle_cache_init(struct handle_cache *c, unsigned entries);
/* Frees the table (an initialised or zeroed cache). */
void handle_cache_release(struct handle_cache *c);
/* The handle cached for k into out: true, or false (a miss). */
bool handle_cache_get(struct handle_cache *c, const struct handle_cache_key *k, struct be_handle *out);
/* Remembers h for k (a handle longer than HANDLE_CACHE_DATA is not kept). */
void handle_cache_put(struct handle_cache *c, const struct handle_cache_key *k, const struct be_handle *h);
void handle_cache_counts(struct handle_cache *c, struct handle_cache_counts *out);

#endif
