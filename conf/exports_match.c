/*
 * exports_match.c - which export options apply to a peer: export_match()
 * runs on every NFS call from worker threads over a table that is
 * read-only after loading, plus the address arithmetic the parser shares.
 * Only wildcard specs need the network: the peer's forward-confirmed
 * reverse name comes from exports_resolve.c's cache.
 */
#include "conf/exports.h"
#include "conf/exports_priv.h"

#include <arpa/inet.h>
#include <fnmatch.h>
#include <string.h>

/* ---- addresses ---- */

void exports_addr_set_v4(struct in6_addr *a, const struct in_addr *v4)
{
	memset(a, 0, sizeof(*a));
	a->s6_addr[10] = 0xff;
	a->s6_addr[11] = 0xff;
	memcpy(&a->s6_addr[12], v4, 4);
}

bool exports_addr_is_v4(const struct in6_addr *a)
{
	return IN6_IS_ADDR_V4MAPPED(a);
}

/* Clear the bits after prefix. */
void exports_addr_mask(struct in6_addr *a, unsigned prefix)
{
	for (unsigned i = 0; i < 16; i++) {
		unsigned keep = prefix >= 8 * (i + 1) ? 8 : prefix > 8 * i ? prefix - 8 * i : 0;

		a->s6_addr[i] &= (uint8_t)(0xff00u >> keep);
	}
}

bool exports_addr_in_net(const struct in6_addr *a, const struct in6_addr *net, unsigned prefix)
{
	unsigned bytes = prefix / 8, bits = prefix % 8;

	if (memcmp(a->s6_addr, net->s6_addr, bytes) != 0)
		return false;
	if (bits == 0)
		return true;
	return ((a->s6_addr[bytes] ^ net->s6_addr[bytes]) & (uint8_t)(0xff00u >> bits)) == 0;
}

/* "A.B.C.D" or IPv6 text -> address (IPv4 v4-mapped); *v4 tells which. */
int exports_parse_addr(const char *s, struct in6_addr *a, bool *v4)
{
	struct in_addr in;

	if (inet_pton(AF_INET, s, &in) == 1) {
		exports_addr_set_v4(a, &in);
		*v4 = true;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a) == 1) {
		*v4 = false;
		return 0;
	}
	return -1;
}

/* ---- matching ---- */

/* Peer address as IPv6 (IPv4 v4-mapped); -1 for other families or short lengths. */
static int peer_addr(const struct sockaddr *sa, socklen_t salen, struct in6_addr *a)
{
	if (!sa || salen < (socklen_t)sizeof(sa_family_t))
		return -1;
	if (sa->sa_family == AF_INET && salen >= (socklen_t)sizeof(struct sockaddr_in)) {
		struct sockaddr_in sin;

		memcpy(&sin, sa, sizeof(sin));
		exports_addr_set_v4(a, &sin.sin_addr);
		return 0;
	}
	if (sa->sa_family == AF_INET6 && salen >= (socklen_t)sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 sin6;

		memcpy(&sin6, sa, sizeof(sin6));
		*a = sin6.sin6_addr;
		return 0;
	}
	return -1;
}

const struct export_opts *export_match(const struct export *e, const struct sockaddr *sa, socklen_t salen)
{
	char name[256];
	int have_name = 0; /* 0: not looked up yet, 1: in name, -1: none */
	struct in6_addr a;

	if (!e || peer_addr(sa, salen, &a) < 0)
		return NULL;
	for (unsigned i = 0; i < e->nclients; i++) {
		const struct export_client *c = &e->clients[i];

		switch (c->kind) {
		case EXPORT_CLIENT_ANY:
			return &c->opts;
		case EXPORT_CLIENT_NET:
			if (exports_addr_in_net(&a, &c->addr, c->prefix))
				return &c->opts;
			break;
		case EXPORT_CLIENT_WILDCARD:
			if (have_name == 0)
				have_name = exports_rcache_lookup(&a, name) == 0 ? 1 : -1;
			if (have_name > 0 && fnmatch(c->spec, name, FNM_CASEFOLD) == 0)
				return &c->opts;
			break;
		}
	}
	return NULL;
}
