/*
 * exports_priv.h - what the three files of the exports module share and
 * nothing else uses: address helpers (exports_match.c), the current name
 * resolver and the reverse-lookup cache (exports_resolve.c). The parser
 * (exports.c) uses both; tests use exports_internal.h instead.
 */
#ifndef RNFSD_EXPORTS_PRIV_H
#define RNFSD_EXPORTS_PRIV_H

#include <netinet/in.h>
#include <stdbool.h>

#include "conf/exports_internal.h"

/* exports_match.c: addresses are IPv6, IPv4 as v4-mapped. */
void exports_addr_set_v4(struct in6_addr *a, const struct in_addr *v4);
bool exports_addr_is_v4(const struct in6_addr *a);
/* Clear the bits after prefix. */
void exports_addr_mask(struct in6_addr *a, unsigned prefix);
bool exports_addr_in_net(const struct in6_addr *a, const struct in6_addr *net, unsigned prefix);
/* "A.B.C.D" or IPv6 text -> address; *v4 tells which. 0, or -1. */
int exports_parse_addr(const char *s, struct in6_addr *a, bool *v4);

/* exports_resolve.c */
const struct exports_resolver *exports_resolver_get(void);
/* The peer's forward-confirmed reverse name, cached; name holds 256 bytes.
 * 0, or -1 when it has none. Thread-safe. */
int exports_rcache_lookup(const struct in6_addr *a, char *name);

#endif
