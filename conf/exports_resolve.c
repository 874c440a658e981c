/*
 * exports_resolve.c - names for the exports module: the resolver host-name
 * client specs are expanded with at parse time (getaddrinfo, replaceable by
 * tests and fuzzers through exports_internal.h), and the reverse-DNS cache
 * behind wildcard specs. A peer's reverse name is forward-confirmed, so a
 * PTR record alone cannot claim a name; the cache is small and
 * set-associative under one mutex, the lookup itself runs outside the lock,
 * and entries (including "no name") live EXPORTS_RCACHE_TTL seconds. The
 * cache is process-global and owned by this file.
 */
#include "conf/exports_priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* ---- resolver ---- */

static int gai_forward(const char *host, struct in6_addr *addrs, unsigned max, char *why, size_t whylen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	unsigned n = 0;
	int rc;

	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0) {
		snprintf(why, whylen, "%s", rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai && n < max; ai = ai->ai_next) {
		struct in6_addr a;
		bool dup = false;

		if (ai->ai_family == AF_INET && ai->ai_addrlen >= sizeof(struct sockaddr_in))
			exports_addr_set_v4(&a, &((struct sockaddr_in *)ai->ai_addr)->sin_addr);
		else if (ai->ai_family == AF_INET6 && ai->ai_addrlen >= sizeof(struct sockaddr_in6))
			a = ((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
		else
			continue;
		for (unsigned i = 0; i < n && !dup; i++)
			dup = memcmp(&addrs[i], &a, sizeof(a)) == 0;
		if (!dup)
			addrs[n++] = a;
	}
	freeaddrinfo(res);
	if (n == 0) {
		snprintf(why, whylen, "no IPv4 or IPv6 address");
		return -1;
	}
	return (int)n;
}

static int gai_reverse(const struct in6_addr *a, char *name, size_t namelen)
{
	struct sockaddr_storage ss;
	socklen_t len;

	memset(&ss, 0, sizeof(ss));
	if (exports_addr_is_v4(a)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, &a->s6_addr[12], 4);
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = *a;
		len = sizeof(*sin6);
	}
	if (getnameinfo((struct sockaddr *)&ss, len, name, (socklen_t)namelen, NULL, 0, NI_NAMEREQD) != 0)
		return -1;
	return 0;
}

static const struct exports_resolver gai_resolver = { gai_forward, gai_reverse };
static const struct exports_resolver *resolver = &gai_resolver;

const struct exports_resolver *exports_resolver_get(void)
{
	return __atomic_load_n(&resolver, __ATOMIC_ACQUIRE);
}

/* ---- reverse-lookup cache ---- */

struct rcache_entry {
	struct in6_addr addr;
	time_t expires;   /* valid while now < expires */
	bool used;
	bool has_name;    /* false: cached "no (confirmed) name" */
	char name[256];
};

static struct rcache_entry rcache[EXPORTS_RCACHE_SETS][EXPORTS_RCACHE_WAYS];
static pthread_mutex_t rcache_lock = PTHREAD_MUTEX_INITIALIZER;

static time_t monotonic_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static time_t (*rcache_clock)(void) = monotonic_now;

void exports_rcache_flush(void)
{
	pthread_mutex_lock(&rcache_lock);
	memset(rcache, 0, sizeof(rcache));
	pthread_mutex_unlock(&rcache_lock);
}

void exports_set_resolver(const struct exports_resolver *r)
{
	__atomic_store_n(&resolver, r ? r : &gai_resolver, __ATOMIC_RELEASE);
	exports_rcache_flush();
}

void exports_set_clock(time_t (*now)(void))
{
	pthread_mutex_lock(&rcache_lock);
	rcache_clock = now ? now : monotonic_now;
	memset(rcache, 0, sizeof(rcache));
	pthread_mutex_unlock(&rcache_lock);
}

static unsigned rcache_set(const struct in6_addr *a)
{
	uint32_t h = 2166136261u;

	for (unsigned i = 0; i < 16; i++) {
		h ^= a->s6_addr[i];
		h *= 16777619u;
	}
	return h % EXPORTS_RCACHE_SETS;
}

/* The reverse name of a, if its forward lookup leads back to a; 0 or -1. */
static int reverse_confirmed(const struct in6_addr *a, char *name, size_t namelen)
{
	const struct exports_resolver *r = exports_resolver_get();
	struct in6_addr addrs[EXPORTS_MAX_HOST_ADDRS];
	char why[64];
	size_t len;
	int n;

	if (r->reverse(a, name, namelen) < 0)
		return -1;
	name[namelen - 1] = '\0';
	len = strlen(name);
	if (len && name[len - 1] == '.')
		name[--len] = '\0';
	if (len == 0)
		return -1;
	n = r->forward(name, addrs, EXPORTS_MAX_HOST_ADDRS, why, sizeof(why));
	for (int i = 0; i < n && i < EXPORTS_MAX_HOST_ADDRS; i++) {
		if (memcmp(&addrs[i], a, sizeof(*a)) == 0)
			return 0;
	}
	return -1;
}

/* Cached reverse_confirmed(); name must hold 256 bytes. Thread-safe. */
int exports_rcache_lookup(const struct in6_addr *a, char *name)
{
	struct rcache_entry *set = rcache[rcache_set(a)];
	struct rcache_entry fresh, *victim;
	time_t now;
	int rc = -1;

	pthread_mutex_lock(&rcache_lock);
	now = rcache_clock();
	for (unsigned w = 0; w < EXPORTS_RCACHE_WAYS; w++) {
		struct rcache_entry *en = &set[w];

		if (en->used && now < en->expires && memcmp(&en->addr, a, sizeof(*a)) == 0) {
			rc = en->has_name ? 0 : -1;
			if (en->has_name)
				memcpy(name, en->name, sizeof(en->name));
			pthread_mutex_unlock(&rcache_lock);
			return rc;
		}
	}
	pthread_mutex_unlock(&rcache_lock);

	/* Miss: look up without the lock (DNS may take seconds). */
	memset(&fresh, 0, sizeof(fresh));
	fresh.addr = *a;
	fresh.used = true;
	fresh.has_name = reverse_confirmed(a, fresh.name, sizeof(fresh.name)) == 0;
	if (fresh.has_name)
		memcpy(name, fresh.name, sizeof(fresh.name));

	pthread_mutex_lock(&rcache_lock);
	now = rcache_clock();
	fresh.expires = now + EXPORTS_RCACHE_TTL;
	victim = &set[0];
	for (unsigned w = 0; w < EXPORTS_RCACHE_WAYS; w++) {
		struct rcache_entry *en = &set[w];

		if (!en->used || memcmp(&en->addr, a, sizeof(*a)) == 0) {
			victim = en;
			break;
		}
		if (en->expires < victim->expires)
			victim = en;
	}
	*victim = fresh;
	pthread_mutex_unlock(&rcache_lock);
	return fresh.has_name ? 0 : -1;
}
