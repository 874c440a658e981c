/*
 * fuzz_exports.c - libFuzzer target: the exports(5) parser
 * (conf/exports.c, exports_parse(): the text exports_load() reads from the
 * file) on arbitrary text, then export_match() and exports_find() on what
 * it accepted. Host names resolve through a stand-in resolver
 * (exports_internal.h), never DNS. Built as a libFuzzer target with
 * -Dfuzz=true (clang), and in every build as a replay test over
 * fuzz/corpus/exports (fuzz_replay.c).
 *
 * The input up to its first NUL is the file (conf_read_file() refuses NUL
 * bytes). Invariants checked with abort(): a refusal says "FILE:LINE: ..."
 * with a line that exists and leaves the table empty; an accepted table
 * has normalised absolute paths (no empty, ".", ".." components, no
 * trailing '/'), distinct paths and export ids, at least one client per
 * export, prefixes <= 128, known kinds, squash modes and security flavors,
 * a NUL-terminated fs name; exports_find() finds each export by its path;
 * export_match() answers NULL or one of the export's own option sets.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/exports.h"
#include "conf/exports_internal.h"

#include "fuzz/fuzz_conf_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* Names beginning "nx" do not resolve; the others get 1..3 addresses, IPv4 or IPv6. */
static int fake_forward(const char *host, struct in6_addr *addrs, unsigned max, char *why, size_t whylen)
{
	uint32_t h = hash(host);
	unsigned n = 1 + h % 3;

	if (strncmp(host, "nx", 2) == 0) {
		snprintf(why, whylen, "no such host");
		return -1;
	}
	for (unsigned i = 0; i < n && i < max; i++) {
		memset(&addrs[i], 0, sizeof(addrs[i]));
		if (h & 4) {
			addrs[i].s6_addr[10] = addrs[i].s6_addr[11] = 0xff;
			memcpy(&addrs[i].s6_addr[12], &h, 3);
			addrs[i].s6_addr[15] = (uint8_t)(i + 1);
		} else {
			addrs[i].s6_addr[0] = 0x20;
			addrs[i].s6_addr[1] = 0x01;
			memcpy(&addrs[i].s6_addr[8], &h, 4);
			addrs[i].s6_addr[15] = (uint8_t)(i + 1);
		}
	}
	return (int)(n < max ? n : max);
}

static int fake_reverse(const struct in6_addr *a, char *name, size_t namelen)
{
	if (a->s6_addr[15] & 1)
		return -1;
	snprintf(name, namelen, "host%u.example.com", a->s6_addr[15]);
	return 0;
}

static const struct exports_resolver fake = { fake_forward, fake_reverse };

static void check_path(const char *p)
{
	CHECK(p[0] == '/' && strlen(p) < PATH_MAX);
	CHECK(p[1] == '\0' || p[strlen(p) - 1] != '/');
	CHECK(!strstr(p, "//") && !strstr(p, "/./") && !strstr(p, "/../"));
	size_t n = strlen(p);
	CHECK(!(n >= 2 && strcmp(p + n - 2, "/.") == 0) && !(n >= 3 && strcmp(p + n - 3, "/..") == 0));
}

/* export_match() for an address: NULL or one of e's own option sets. */
static void check_match(const struct export *e, const struct in6_addr *a)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_addr = *a };
	const struct export_opts *o = export_match(e, (struct sockaddr *)&s6, sizeof(s6));
	if (!o)
		return;
	bool own = false;
	for (unsigned k = 0; k < e->nclients; k++)
		own |= o == &e->clients[k].opts;
	CHECK(own);
}

static void check_export(const struct export_table *t, unsigned i, unsigned lines)
{
	const struct export *e = &t->exports[i];

	check_path(e->path);
	CHECK(exports_find(t, e->path) == e);
	CHECK(e->line >= 1 && e->line <= lines);
	CHECK(memchr(e->fs, '\0', sizeof(e->fs)) != NULL);
	CHECK(e->nclients >= 1 && e->clients != NULL);
	for (unsigned j = 0; j < i; j++)
		CHECK(export_id(&t->exports[j]) != export_id(e));
	for (unsigned k = 0; k < e->nclients; k++) {
		const struct export_client *c = &e->clients[k];
		CHECK(c->kind == EXPORT_CLIENT_ANY || c->kind == EXPORT_CLIENT_NET ||
		      c->kind == EXPORT_CLIENT_WILDCARD);
		CHECK(c->prefix <= 128 && memchr(c->spec, '\0', sizeof(c->spec)) != NULL);
		CHECK(c->opts.squash <= EXPORT_ALL_SQUASH);
		CHECK(c->opts.sec != 0 && (c->opts.sec & ~(EXPORT_SEC_NONE | EXPORT_SEC_SYS | EXPORT_SEC_KRB5 | EXPORT_SEC_KRB5I | EXPORT_SEC_KRB5P)) == 0);
		CHECK(c->opts.xprtsec != 0 && (c->opts.xprtsec & ~EXPORT_XPRTSEC_ALL) == 0);
		/* sec='s order lists each flavor of the mask once (SECINFO answers in it) */
		uint32_t seen = 0;
		for (int f = 0; f < __builtin_popcount(c->opts.sec); f++) {
			CHECK(c->opts.sec_order[f] < EXPORT_SEC_COUNT && (c->opts.sec & (1u << c->opts.sec_order[f])));
			CHECK(!(seen & (1u << c->opts.sec_order[f])));
			seen |= 1u << c->opts.sec_order[f];
		}
		check_match(e, &c->addr);
	}
	struct in6_addr lo = IN6ADDR_LOOPBACK_INIT, v4 = { .s6_addr = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 2 } };
	check_match(e, &lo);
	check_match(e, &v4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned lines;
	char *text = fuzz_text(data, size, &lines);
	char err[512];
	struct export_table t;

	exports_set_resolver(&fake);

	if (exports_parse(text, "fuzz", &t, err, sizeof(err)) < 0) {
		CHECK(t.n == 0 && t.exports == NULL);
		fuzz_check_error(err, lines);
	} else {
		CHECK(err[0] == '\0');
		for (unsigned i = 0; i < t.n; i++)
			check_export(&t, i, lines);
		exports_free(&t);
		CHECK(t.n == 0 && t.exports == NULL);
	}
	free(text);
	return 0;
}
