/*
 * exports_internal.h - hooks into the exports module (exports*.c) for unit tests and fuzzers:
 * a replaceable name resolver (so tests and fuzz targets never wait on DNS),
 * a replaceable clock for the reverse-lookup cache, and the option table
 * (checked against the man page). Not for use by the daemon's other layers.
 */
#ifndef RNFSD_EXPORTS_INTERNAL_H
#define RNFSD_EXPORTS_INTERNAL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "conf/exports.h"

/* Most addresses a host name in the exports file may resolve to. */
#define EXPORTS_MAX_HOST_ADDRS 64

struct exports_resolver {
	/*
	 * Forward: host name -> addresses (IPv4 as v4-mapped). Returns the
	 * number stored (1..max), or -1 with a reason in why. Must be
	 * thread-safe: it also forward-confirms reverse names.
	 */
	int (*forward)(const char *host, struct in6_addr *addrs, unsigned max, char *why, size_t whylen);
	/* Reverse: address -> name (NUL-terminated, < namelen). 0, or -1 if none. Thread-safe. */
	int (*reverse)(const struct in6_addr *addr, char *name, size_t namelen);
};

/*
 * Replace the resolver (NULL restores getaddrinfo/getnameinfo) and empty
 * the reverse-lookup cache. Call it while no thread is in export_match().
 */
void exports_set_resolver(const struct exports_resolver *r);

/* Replace the cache's clock (seconds; NULL restores CLOCK_MONOTONIC). Same caveat. */
void exports_set_clock(time_t (*now)(void));

/* Empty the reverse-lookup cache. Thread-safe. */
void exports_rcache_flush(void);

/* Reverse cache geometry: EXPORTS_RCACHE_SETS x EXPORTS_RCACHE_WAYS entries. */
#define EXPORTS_RCACHE_SETS 64
#define EXPORTS_RCACHE_WAYS 4
#define EXPORTS_RCACHE_TTL 60 /* seconds, for names and for "no name" alike */

/* The options accepted in an option list (the unit tests check each is documented). */
struct exports_option {
	const char *name;
	int id;           /* private to exports.c */
	bool takes_value; /* written name=value */
};
extern const struct exports_option exports_options[];
extern const unsigned exports_noptions;

#endif
