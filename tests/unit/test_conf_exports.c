/*
 * test_conf_exports.c - unit tests for conf/exports.c: exports(5) syntax,
 * every option and client kind, CIDR and netmask matching at the bit
 * boundaries (IPv4, IPv6, v4-mapped peers), first-match-wins, wildcard
 * matching through the forward-confirmed reverse-DNS cache (TTL, negative
 * entries, bounded size, threads), error messages with FILE:LINE, malformed
 * input, and that conf/exports.example and docs/rnfsd-exports.5 agree with
 * the code. Name resolution goes through a fake resolver (no DNS), except
 * in test_real_resolver, which only relies on "localhost".
 */
#include <arpa/inet.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "conf/exports.h"
#include "conf/exports_internal.h"

/* ---- a fake resolver: fixed tables, call counters ---- */

struct fake_host {
	const char *name;
	const char *addrs[3];
};

static const struct fake_host fake_hosts[] = {
	{ "host1", { "192.0.2.10" } },
	{ "multi", { "192.0.2.20", "2001:db8::20" } },
	{ "client1.example.com", { "198.51.100.1" } },
	{ "client12.example.com", { "198.51.100.12" } },
	{ "client2.example.com", { "198.51.100.2" } },
	{ "trailing.example.com", { "198.51.100.3" } },
	{ "liar.example.com", { "203.0.113.99" } },
	{ "v6.example.com", { "2001:db8::5" } },
	{ "example.com", { "198.51.100.4" } },
};

struct fake_ptr {
	const char *addr;
	const char *name;
};

static const struct fake_ptr fake_ptrs[] = {
	{ "198.51.100.1", "client1.example.com" },
	{ "198.51.100.12", "client12.example.com" },
	{ "198.51.100.2", "CLIENT2.Example.COM" },     /* case differs from the pattern */
	{ "198.51.100.3", "trailing.example.com." },   /* absolute name with a dot */
	{ "198.51.100.4", "example.com" },
	{ "203.0.113.5", "liar.example.com" },         /* forward lookup does not confirm */
	{ "2001:db8::5", "v6.example.com" },
};

static unsigned long forward_calls, reverse_calls;

static void to_v6(const char *text, struct in6_addr *a)
{
	struct in_addr v4;

	if (inet_pton(AF_INET, text, &v4) == 1) {
		memset(a, 0, sizeof(*a));
		a->s6_addr[10] = a->s6_addr[11] = 0xff;
		memcpy(&a->s6_addr[12], &v4, 4);
	} else if (inet_pton(AF_INET6, text, a) != 1) {
		fail_msg("bad address in test: %s", text);
	}
}

/* Names "hX-Y.dyn.example.com" <-> 10.0.X.Y, for the cache and thread tests. */
static int dyn_forward(const char *host, struct in6_addr *a)
{
	unsigned x, y;
	char tail[64], text[32];

	if (sscanf(host, "h%u-%u.%63s", &x, &y, tail) != 3 || strcmp(tail, "dyn.example.com") != 0 ||
	    x > 255 || y > 255)
		return -1;
	snprintf(text, sizeof(text), "10.0.%u.%u", x, y);
	to_v6(text, a);
	return 0;
}

static int fake_forward(const char *host, struct in6_addr *addrs, unsigned max, char *why, size_t whylen)
{
	__atomic_fetch_add(&forward_calls, 1, __ATOMIC_RELAXED);
	if (max >= 1 && dyn_forward(host, &addrs[0]) == 0)
		return 1;
	for (size_t i = 0; i < sizeof(fake_hosts) / sizeof(fake_hosts[0]); i++) {
		unsigned n = 0;

		if (strcasecmp(fake_hosts[i].name, host) != 0)
			continue;
		for (; n < 3 && n < max && fake_hosts[i].addrs[n]; n++)
			to_v6(fake_hosts[i].addrs[n], &addrs[n]);
		return (int)n;
	}
	snprintf(why, whylen, "Name or service not known");
	return -1;
}

static int fake_reverse(const struct in6_addr *a, char *name, size_t namelen)
{
	struct in6_addr x;

	__atomic_fetch_add(&reverse_calls, 1, __ATOMIC_RELAXED);
	/* 10.0.X.Y has the name hX-Y.dyn.example.com when Y is even. */
	if (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 10 && a->s6_addr[13] == 0) {
		if (a->s6_addr[15] % 2)
			return -1;
		snprintf(name, namelen, "h%u-%u.dyn.example.com", a->s6_addr[14], a->s6_addr[15]);
		return 0;
	}
	for (size_t i = 0; i < sizeof(fake_ptrs) / sizeof(fake_ptrs[0]); i++) {
		to_v6(fake_ptrs[i].addr, &x);
		if (memcmp(&x, a, sizeof(x)) == 0) {
			snprintf(name, namelen, "%s", fake_ptrs[i].name);
			return 0;
		}
	}
	return -1;
}

static const struct exports_resolver fake_resolver = { fake_forward, fake_reverse };

static time_t fake_now = 1000;

static time_t fake_clock(void)
{
	return __atomic_load_n(&fake_now, __ATOMIC_RELAXED);
}

static int setup(void **state)
{
	(void)state;
	exports_set_resolver(&fake_resolver);
	exports_set_clock(fake_clock);
	forward_calls = reverse_calls = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	exports_set_resolver(NULL);
	exports_set_clock(NULL);
	return 0;
}

/* ---- helpers ---- */

static struct export_table T;
static char err[1024];

static void parse_ok(const char *text)
{
	exports_free(&T);
	err[0] = '\0';
	if (exports_parse(text, "t", &T, err, sizeof(err)) != 0)
		fail_msg("unexpected error for \"%s\": %s", text, err);
}

/* Must fail with want in the message and leave the table empty. */
static void parse_bad(const char *text, const char *want)
{
	exports_free(&T);
	err[0] = '\0';
	if (exports_parse(text, "t", &T, err, sizeof(err)) != -1)
		fail_msg("accepted bad input \"%s\"", text);
	if (!strstr(err, want))
		fail_msg("input \"%s\": error \"%s\" does not contain \"%s\"", text, err, want);
	assert_null(T.exports);
	assert_int_equal(T.n, 0);
}

/* The options of the single client in "/x *(opts)". */
static struct export_opts opts_of(const char *opts)
{
	char text[512];

	snprintf(text, sizeof(text), "/x *(%s)\n", opts);
	parse_ok(text);
	assert_int_equal(T.n, 1);
	assert_int_equal(T.exports[0].nclients, 1);
	return T.exports[0].clients[0].opts;
}

static void bad_opts(const char *opts, const char *want)
{
	char text[512];

	snprintf(text, sizeof(text), "/x *(%s)\n", opts);
	parse_bad(text, want);
}

static const struct export_opts *match4(const struct export *e, const char *addr)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(700) };

	assert_int_equal(inet_pton(AF_INET, addr, &sin.sin_addr), 1);
	return export_match(e, (struct sockaddr *)&sin, sizeof(sin));
}

/* An IPv6 peer; an IPv4 address is sent as v4-mapped AF_INET6. */
static const struct export_opts *match6(const struct export *e, const char *addr)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(700) };

	to_v6(addr, &sin6.sin6_addr);
	return export_match(e, (struct sockaddr *)&sin6, sizeof(sin6));
}

/* An IPv4 address must give the same answer as AF_INET and as v4-mapped AF_INET6. */
static const struct export_opts *match_any(const struct export *e, const char *addr)
{
	struct in_addr v4;
	const struct export_opts *o = match6(e, addr);

	if (inet_pton(AF_INET, addr, &v4) == 1 && match4(e, addr) != o)
		fail_msg("%s: AF_INET and v4-mapped AF_INET6 peers matched differently", addr);
	return o;
}

/* ---- options ---- */

static void test_default_options(void **state)
{
	struct export_opts o;

	(void)state;
	o = opts_of("ro");
	assert_false(o.rw);
	assert_int_equal(o.squash, EXPORT_ROOT_SQUASH);
	assert_int_equal(o.anonuid, 65534);
	assert_int_equal(o.anongid, 65534);
	assert_true(o.secure);
	assert_int_equal(o.sec, EXPORT_SEC_SYS);
	assert_true(o.sync);
	assert_false(T.exports[0].fsid_set);

	/* A path alone is exported to "*" with the defaults. */
	parse_ok("/srv/a\n");
	assert_int_equal(T.n, 1);
	assert_int_equal(T.exports[0].nclients, 1);
	assert_int_equal(T.exports[0].clients[0].kind, EXPORT_CLIENT_ANY);
	assert_string_equal(T.exports[0].clients[0].spec, "*");
	assert_memory_equal(&T.exports[0].clients[0].opts, &o, sizeof(o));
	assert_int_equal(T.exports[0].line, 1);

	/* A client without options gets the defaults. */
	parse_ok("/srv/a 192.0.2.1\n");
	assert_memory_equal(&T.exports[0].clients[0].opts, &o, sizeof(o));
}

static void test_each_option(void **state)
{
	static const char *const ignored[] = { "subtree_check", "no_subtree_check", "wdelay", "no_wdelay",
					       "hide", "nohide", "crossmnt" };
	struct export_opts def = opts_of("ro"), o;

	(void)state;
	assert_true(opts_of("rw").rw);
	assert_false(opts_of("ro").rw);
	assert_false(opts_of("rw,ro").rw);
	assert_true(opts_of("ro,rw").rw);

	assert_int_equal(opts_of("root_squash").squash, EXPORT_ROOT_SQUASH);
	assert_int_equal(opts_of("no_root_squash").squash, EXPORT_NO_ROOT_SQUASH);
	assert_int_equal(opts_of("no_root_squash,root_squash").squash, EXPORT_ROOT_SQUASH);
	assert_int_equal(opts_of("all_squash").squash, EXPORT_ALL_SQUASH);
	/* As knfsd: all_squash squashes root too, whatever root_squash says. */
	assert_int_equal(opts_of("all_squash,no_root_squash").squash, EXPORT_ALL_SQUASH);
	assert_int_equal(opts_of("no_root_squash,all_squash").squash, EXPORT_ALL_SQUASH);
	assert_int_equal(opts_of("all_squash,no_all_squash").squash, EXPORT_ROOT_SQUASH);
	assert_int_equal(opts_of("no_root_squash,all_squash,no_all_squash").squash, EXPORT_NO_ROOT_SQUASH);
	assert_int_equal(opts_of("no_all_squash").squash, EXPORT_ROOT_SQUASH);

	o = opts_of("anonuid=1000,anongid=2000");
	assert_int_equal(o.anonuid, 1000);
	assert_int_equal(o.anongid, 2000);
	o = opts_of("anonuid=0,anongid=0");
	assert_int_equal(o.anonuid, 0);
	assert_int_equal(o.anongid, 0);
	o = opts_of("anonuid=4294967294,anongid=4294967294");
	assert_int_equal(o.anonuid, 4294967294u);
	assert_int_equal(o.anongid, 4294967294u);
	assert_int_equal(opts_of("anonuid=5,anonuid=6").anonuid, 6);

	assert_true(opts_of("secure").secure);
	assert_false(opts_of("insecure").secure);
	assert_true(opts_of("insecure,secure").secure);

	assert_int_equal(opts_of("sec=sys").sec, EXPORT_SEC_SYS);
	assert_int_equal(opts_of("sec=none").sec, EXPORT_SEC_NONE);
	assert_int_equal(opts_of("sec=sys:none").sec, EXPORT_SEC_SYS | EXPORT_SEC_NONE);
	assert_int_equal(opts_of("sec=none:sys").sec, EXPORT_SEC_SYS | EXPORT_SEC_NONE);
	assert_int_equal(opts_of("sec=sys:none,sec=none").sec, EXPORT_SEC_NONE);
	assert_int_equal(opts_of("sec=krb5p:krb5i:krb5:sys").sec,
			 EXPORT_SEC_KRB5 | EXPORT_SEC_KRB5I | EXPORT_SEC_KRB5P | EXPORT_SEC_SYS);
	/* the admin's order is kept (SECINFO answers in it), a repeat once */
	struct export_opts so = opts_of("sec=krb5i:sys:krb5i:krb5");
	assert_int_equal(so.sec, EXPORT_SEC_KRB5I | EXPORT_SEC_SYS | EXPORT_SEC_KRB5);
	assert_int_equal(so.sec_order[0], 3);
	assert_int_equal(so.sec_order[1], 1);
	assert_int_equal(so.sec_order[2], 2);
	assert_int_equal(opts_of("ro").sec_order[0], 1);

	assert_true(opts_of("sync").sync);
	assert_false(opts_of("async").sync);
	assert_true(opts_of("async,sync").sync);

	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++) {
		o = opts_of(ignored[i]);
		assert_memory_equal(&o, &def, sizeof(o));
	}
	o = opts_of("rw,no_root_squash,insecure,async,no_subtree_check,sec=sys:none,anonuid=1,anongid=2");
	assert_true(o.rw);
	assert_int_equal(o.squash, EXPORT_NO_ROOT_SQUASH);
	assert_false(o.secure);
	assert_false(o.sync);
	assert_int_equal(o.sec, EXPORT_SEC_SYS | EXPORT_SEC_NONE);
	assert_int_equal(o.anonuid, 1);
	assert_int_equal(o.anongid, 2);
}

static void test_option_errors(void **state)
{
	char longopt[300];

	(void)state;
	bad_opts("", "t:1: empty option list");
	bad_opts("rw,", "t:1: empty option");
	bad_opts(",rw", "empty option");
	bad_opts("rw,,ro", "empty option");
	bad_opts("bogus", "t:1: unknown option 'bogus'");
	bad_opts("RW", "unknown option 'RW'");
	bad_opts("rw,no_such", "unknown option 'no_such'");
	bad_opts("rw=1", "option 'rw' takes no value");
	bad_opts("anonuid", "option 'anonuid' needs a value");
	bad_opts("anonuid=", "empty value for option 'anonuid'");
	bad_opts("anonuid=-1", "bad anonuid=-1");
	bad_opts("anonuid=4294967295", "bad anonuid=4294967295");
	bad_opts("anongid=4294967296", "bad anongid");
	bad_opts("anonuid=99999999999999999999999", "bad anonuid");
	bad_opts("anonuid=1x", "bad anonuid");
	bad_opts("anonuid=0x10", "bad anonuid");
	bad_opts("sec=krb5x", "unknown security flavor 'krb5x'");
	bad_opts("sec=", "empty value");
	bad_opts("sec=sys:", "empty flavor");
	bad_opts("sec=:sys", "empty flavor");
	bad_opts("sec=unix", "unknown security flavor 'unix'");
	bad_opts("fsid=", "empty value");
	bad_opts("fsid=abc", "bad fsid=abc");
	bad_opts("fsid=-1", "bad fsid");
	bad_opts("fsid=4294967296", "bad fsid");
	bad_opts("fsid=0123456789abcdef0123456789abcde", "bad fsid");   /* 31 digits */
	bad_opts("fsid=0123456789abcdef0123456789abcdef0", "bad fsid"); /* 33 digits */
	bad_opts("fsid=0123456789abcdef0123456789abcdeg", "bad fsid");
	bad_opts("rw, ro", "blank or quote inside an option list");
	memset(longopt, 'a', sizeof(longopt) - 1);
	longopt[sizeof(longopt) - 1] = '\0';
	bad_opts(longopt, "too long");
	memcpy(longopt, "anonuid=", 8);
	memset(longopt + 8, '1', 200);
	longopt[208] = '\0';
	bad_opts(longopt, "too long");
}

static void test_fsid_and_export_id(void **state)
{
	(void)state;
	parse_ok("/srv/a *(fsid=0)\n");
	assert_true(T.exports[0].fsid_set);
	assert_int_equal(T.exports[0].fsid, 0);
	assert_int_equal(export_id(&T.exports[0]), 0);
	parse_ok("/srv/a *(fsid=root)\n");
	assert_true(T.exports[0].fsid_set);
	assert_int_equal(T.exports[0].fsid, 0);
	parse_ok("/srv/a *(fsid=4294967295)\n");
	assert_int_equal(export_id(&T.exports[0]), 4294967295u);
	parse_ok("/srv/a *(fsid=11111111-2222-3333-4444-555555555555)\n");
	assert_int_equal(T.exports[0].fsid, 0x22222222);
	parse_ok("/srv/a *(fsid=11111111:22223333:44445555:55555555)\n");
	assert_int_equal(T.exports[0].fsid, 0x22222222);
	parse_ok("/srv/a *(fsid=1111111122223333444455555555555A)\n");
	assert_int_equal(T.exports[0].fsid, 0x2222222d);

	/* fsid from -defaults, from one client, or the same on several. */
	parse_ok("/srv/a -fsid=7 192.0.2.1\n");
	assert_int_equal(T.exports[0].fsid, 7);
	parse_ok("/srv/a -fsid=7\n");
	assert_int_equal(T.exports[0].fsid, 7);
	parse_ok("/srv/a 192.0.2.1 192.0.2.2(fsid=8)\n");
	assert_int_equal(T.exports[0].fsid, 8);
	parse_ok("/srv/a 192.0.2.1(fsid=8) 192.0.2.2(fsid=8)\n");
	parse_bad("/srv/a 192.0.2.1(fsid=8) 192.0.2.2(fsid=9)\n", "t:1: conflicting fsid values for /srv/a (8 and 9)");

	/* Without fsid: FNV-1a 32 of the normalised path (values computed independently). */
	parse_ok("/srv/a\n/\n/export/\n");
	assert_false(T.exports[0].fsid_set);
	assert_int_equal(export_id(&T.exports[0]), 0xd4de4497);
	assert_int_equal(export_id(&T.exports[1]), 0x2a0c975e);
	assert_int_equal(export_id(&T.exports[2]), 0xe4db8904);
	{
		struct export e = { .path = "" };

		assert_int_equal(export_id(&e), 0x811c9dc5);
		snprintf(e.path, sizeof(e.path), "foobar");
		assert_int_equal(export_id(&e), 0xbf9cf968);
	}

	/* Two exports must never share an id (file handles carry it). */
	parse_bad("/a *(fsid=1)\n/b *(fsid=1)\n",
		  "t:2: /b has the same export id (0x00000001) as /a at line 1; give one of them a distinct fsid=");
	parse_bad("/srv/a\n\n/other *(fsid=3571336343)\n", "t:3: /other has the same export id (0xd4de4497)");
	parse_ok("/srv/a\n/other *(fsid=3571336344)\n");
}

/* ---- -defaults ---- */

static void test_line_defaults(void **state)
{
	const struct export *e;

	(void)state;
	parse_ok("/a -rw,all_squash 192.0.2.1 192.0.2.2(ro) -sync,no_all_squash 192.0.2.3 192.0.2.4(async)\n");
	e = &T.exports[0];
	assert_int_equal(e->nclients, 4);
	assert_true(e->clients[0].opts.rw);
	assert_int_equal(e->clients[0].opts.squash, EXPORT_ALL_SQUASH);
	assert_false(e->clients[1].opts.rw);
	assert_int_equal(e->clients[1].opts.squash, EXPORT_ALL_SQUASH);
	/* Later defaults add to earlier ones. */
	assert_true(e->clients[2].opts.rw);
	assert_int_equal(e->clients[2].opts.squash, EXPORT_ROOT_SQUASH);
	assert_true(e->clients[3].opts.rw);
	assert_false(e->clients[3].opts.sync);

	/* Defaults are per line. */
	parse_ok("/a -rw\n/b\n");
	assert_true(T.exports[0].clients[0].opts.rw);
	assert_int_equal(T.exports[0].clients[0].kind, EXPORT_CLIENT_ANY);
	assert_false(T.exports[1].clients[0].opts.rw);

	parse_bad("/a -\n", "t:1: empty option list");
	parse_bad("/a -rw,\n", "empty option");
	parse_bad("/a -bogus 192.0.2.1\n", "unknown option 'bogus'");
	parse_bad("/a 192.0.2.1 -rw(ro)\n", "unknown option 'rw(ro)'");
}

/* ---- client kinds ---- */

static void assert_net(const struct export_client *c, const char *addr, unsigned prefix, const char *spec)
{
	struct in6_addr a;

	to_v6(addr, &a);
	assert_int_equal(c->kind, EXPORT_CLIENT_NET);
	assert_memory_equal(&c->addr, &a, sizeof(a));
	assert_int_equal(c->prefix, prefix);
	assert_string_equal(c->spec, spec);
}

static void test_client_kinds(void **state)
{
	const struct export *e;

	(void)state;
	parse_ok("/a * \"*\"(rw) 192.0.2.1 2001:DB8::1 192.0.2.0/24 2001:db8::/32 192.0.2.0/255.255.255.0 "
		 "192.0.2.77/24 ::ffff:192.0.2.9 host1(rw) multi *.example.com client?.example.com "
		 "client[0-9].example.com \"host1\"(ro) 0.0.0.0/0 ::/0\n");
	e = &T.exports[0];
	assert_int_equal(e->nclients, 18);
	assert_int_equal(e->clients[0].kind, EXPORT_CLIENT_ANY);
	assert_int_equal(e->clients[1].kind, EXPORT_CLIENT_ANY);
	assert_string_equal(e->clients[1].spec, "*");
	assert_true(e->clients[1].opts.rw);
	assert_net(&e->clients[2], "192.0.2.1", 128, "192.0.2.1");
	assert_net(&e->clients[3], "2001:db8::1", 128, "2001:DB8::1");
	assert_net(&e->clients[4], "192.0.2.0", 120, "192.0.2.0/24");
	assert_net(&e->clients[5], "2001:db8::", 32, "2001:db8::/32");
	assert_net(&e->clients[6], "192.0.2.0", 120, "192.0.2.0/255.255.255.0");
	assert_net(&e->clients[7], "192.0.2.0", 120, "192.0.2.77/24"); /* host bits cleared */
	assert_net(&e->clients[8], "192.0.2.9", 128, "::ffff:192.0.2.9");
	assert_net(&e->clients[9], "192.0.2.10", 128, "host1");
	assert_true(e->clients[9].opts.rw);
	assert_net(&e->clients[10], "192.0.2.20", 128, "multi"); /* one NET per address */
	assert_net(&e->clients[11], "2001:db8::20", 128, "multi");
	assert_int_equal(e->clients[12].kind, EXPORT_CLIENT_WILDCARD);
	assert_string_equal(e->clients[12].spec, "*.example.com");
	assert_int_equal(e->clients[13].kind, EXPORT_CLIENT_WILDCARD);
	assert_int_equal(e->clients[14].kind, EXPORT_CLIENT_WILDCARD);
	assert_string_equal(e->clients[14].spec, "client[0-9].example.com");
	assert_net(&e->clients[15], "192.0.2.10", 128, "host1"); /* quoted host name */
	assert_false(e->clients[15].opts.rw);
	assert_net(&e->clients[16], "0.0.0.0", 96, "0.0.0.0/0");
	assert_net(&e->clients[17], "::", 0, "::/0");
}

static void test_client_errors(void **state)
{
	(void)state;
	parse_bad("/a @group(rw)\n", "t:1: bad client '@group': netgroups are not supported");
	parse_bad("/a bad!host\n", "bad client 'bad!host'");
	parse_bad("/a fe80::1%eth0\n", "bad client 'fe80::1%eth0'");
	parse_bad("/a 10.1\n", "bad client '10.1': not a valid IPv4 address");
	parse_bad("/a 127.1(rw)\n", "not a valid IPv4 address");
	parse_bad("/a 0x7f000001\n", "not a valid IPv4 address");
	parse_bad("/a 192.0.2.256\n", "not a valid IPv4 address");
	parse_bad("/a 192.0.2.0/33\n", "bad network '192.0.2.0/33': prefix length must be 0..32");
	parse_bad("/a 2001:db8::/129\n", "prefix length must be 0..128");
	parse_bad("/a 192.0.2.0/-1\n", "prefix length");
	parse_bad("/a 192.0.2.0/abc\n", "prefix length");
	parse_bad("/a 192.0.2.0/\n", "prefix length");
	parse_bad("/a 192.0.2.0/4294967320\n", "prefix length");
	parse_bad("/a /24\n", "bad network '/24'");
	parse_bad("/a host1/24\n", "'host1' is not an IPv4 or IPv6 address");
	parse_bad("/a 192.0.2.0/255.0.255.0\n", "netmask is not a contiguous IPv4 mask");
	parse_bad("/a 192.0.2.0/255.255.255.1\n", "netmask is not a contiguous");
	parse_bad("/a 192.0.2.0/256.0.0.0\n", "netmask is not a contiguous");
	parse_bad("/a 2001:db8::/ffff::\n", "prefix length must be 0..128");
	parse_bad("/a 192.0.2.0/24/8\n", "bad network");
	parse_bad("/a *.ex[ample.com\n", "bad wildcard '*.ex[ample.com'");
	parse_bad("/a *.example.com/24\n", "bad network");
	parse_bad("/a *.exa$mple.com\n", "bad wildcard");
	parse_bad("/a nosuchhost(rw)\n", "t:1: cannot resolve host 'nosuchhost': Name or service not known");
	parse_bad("/a \"\"(rw)\n", "empty client name");
}

/* ---- matching ---- */

struct match_case {
	const char *net;
	const char *addr;
	bool match;
};

static void run_match_cases(const struct match_case *cases, size_t n)
{
	char text[256];

	for (size_t i = 0; i < n; i++) {
		const struct export_opts *o;

		snprintf(text, sizeof(text), "/a %s(rw)\n", cases[i].net);
		parse_ok(text);
		o = match_any(&T.exports[0], cases[i].addr);
		if ((o != NULL) != cases[i].match)
			fail_msg("%s vs %s: expected %s", cases[i].net, cases[i].addr,
				 cases[i].match ? "a match" : "no match");
	}
}

static void test_cidr_v4(void **state)
{
	static const struct match_case cases[] = {
		{ "192.0.2.0/24", "192.0.2.0", true },
		{ "192.0.2.0/24", "192.0.2.255", true },
		{ "192.0.2.0/24", "192.0.1.255", false },
		{ "192.0.2.0/24", "192.0.3.0", false },
		{ "10.0.0.0/8", "10.255.255.255", true },
		{ "10.0.0.0/8", "11.0.0.0", false },
		{ "10.0.0.0/8", "9.255.255.255", false },
		{ "172.16.0.0/12", "172.31.255.255", true },
		{ "172.16.0.0/12", "172.16.0.0", true },
		{ "172.16.0.0/12", "172.32.0.0", false },
		{ "172.16.0.0/12", "172.15.255.255", false },
		{ "192.0.2.128/25", "192.0.2.127", false },
		{ "192.0.2.128/25", "192.0.2.128", true },
		{ "192.0.2.128/25", "192.0.2.255", true },
		{ "192.0.2.0/23", "192.0.3.255", true },
		{ "192.0.2.0/23", "192.0.4.0", false },
		{ "192.0.2.0/23", "192.0.1.255", false },
		{ "192.0.2.76/31", "192.0.2.76", true },
		{ "192.0.2.76/31", "192.0.2.77", true },
		{ "192.0.2.76/31", "192.0.2.75", false },
		{ "192.0.2.76/31", "192.0.2.78", false },
		{ "192.0.2.77/32", "192.0.2.77", true },
		{ "192.0.2.77/32", "192.0.2.76", false },
		{ "192.0.2.77/32", "192.0.2.78", false },
		{ "192.0.2.77", "192.0.2.77", true },
		{ "192.0.2.77", "192.0.2.78", false },
		{ "128.0.0.0/1", "127.255.255.255", false },
		{ "128.0.0.0/1", "128.0.0.0", true },
		{ "128.0.0.0/1", "255.255.255.255", true },
		{ "0.0.0.0/0", "0.0.0.0", true },
		{ "0.0.0.0/0", "255.255.255.255", true },
		{ "0.0.0.0/0", "2001:db8::1", false },
		{ "192.0.2.77/24", "192.0.2.1", true },
		{ "192.0.2.0/255.255.254.0", "192.0.3.255", true },
		{ "192.0.2.0/255.255.254.0", "192.0.4.0", false },
		{ "192.0.2.0/255.255.255.255", "192.0.2.0", true },
		{ "192.0.2.0/255.255.255.255", "192.0.2.1", false },
		{ "0.0.0.0/0.0.0.0", "203.0.113.1", true },
		{ "192.0.2.0/255.255.255.128", "192.0.2.127", true },
		{ "192.0.2.0/255.255.255.128", "192.0.2.128", false },
		{ "192.0.2.0/24", "2001:db8::c000:200", false },
		{ "::ffff:192.0.2.0/120", "192.0.2.5", true },
		{ "::ffff:192.0.2.0/120", "192.0.3.5", false },
	};

	(void)state;
	run_match_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_cidr_v6(void **state)
{
	static const struct match_case cases[] = {
		{ "2001:db8::/32", "2001:db8::", true },
		{ "2001:db8::/32", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", true },
		{ "2001:db8::/32", "2001:db9::", false },
		{ "2001:db8::/32", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", false },
		{ "2001:db8::/33", "2001:db8:7fff::", true },
		{ "2001:db8::/33", "2001:db8:8000::", false },
		{ "2001:db8::/128", "2001:db8::", true },
		{ "2001:db8::/128", "2001:db8::1", false },
		{ "2001:db8::1", "2001:db8::1", true },
		{ "2001:db8::1", "2001:db8::2", false },
		{ "2001:db8::/127", "2001:db8::1", true },
		{ "2001:db8::/127", "2001:db8::2", false },
		{ "2001:db8:0:0:8000::/65", "2001:db8::7fff:ffff:ffff:ffff", false },
		{ "2001:db8:0:0:8000::/65", "2001:db8::8000:0:0:0", true },
		{ "2001:db8:0:0:8000::/65", "2001:db8::ffff:ffff:ffff:ffff", true },
		{ "2001:db8:0:0:8000::/65", "2001:db8:0:1::", false },
		{ "2001:db8::/64", "2001:db8::ffff:ffff:ffff:ffff", true },
		{ "2001:db8::/64", "2001:db8:0:1::", false },
		{ "2001:db8::ff/120", "2001:db8::1", true },       /* host bits cleared */
		{ "8000::/1", "7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false },
		{ "8000::/1", "8000::", true },
		{ "::/0", "2001:db8::1", true },
		{ "::/0", "192.0.2.1", true }, /* v4-mapped lies inside ::/0 */
		{ "2001:db8::/32", "192.0.2.1", false },
	};

	(void)state;
	run_match_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_peer_forms(void **state)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const struct export *e;

	(void)state;
	parse_ok("/a 192.0.2.0/24(rw)\n/b *\n");
	e = &T.exports[0];
	assert_non_null(match4(e, "192.0.2.1"));
	assert_non_null(match6(e, "192.0.2.1")); /* as ::ffff:192.0.2.1 */
	assert_null(match6(e, "2001:db8::1"));
	inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr);
	assert_null(export_match(e, (struct sockaddr *)&sin, sizeof(sin) - 1));
	assert_null(export_match(e, (struct sockaddr *)&sin, 0));
	assert_null(export_match(e, NULL, sizeof(sin)));
	assert_null(export_match(NULL, (struct sockaddr *)&sin, sizeof(sin)));
	{
		struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };

		assert_null(export_match(e, (struct sockaddr *)&sin6, sizeof(sin6) - 1));
	}
	/* Even "*" needs an IP peer. */
	assert_null(export_match(&T.exports[1], (struct sockaddr *)&sun, sizeof(sun)));
	assert_non_null(match4(&T.exports[1], "203.0.113.1"));
	assert_non_null(match6(&T.exports[1], "2001:db8::1"));
}

static void test_first_match_wins(void **state)
{
	const struct export *e;

	(void)state;
	parse_ok("/a 192.0.2.1(rw) 192.0.2.0/24(ro) *(rw,all_squash)\n"
		 "/b 192.0.2.0/24(ro) 192.0.2.1(rw)\n"
		 "/c *(ro) 192.0.2.1(rw)\n");
	e = &T.exports[0];
	assert_true(match_any(e, "192.0.2.1")->rw);
	assert_ptr_equal(match_any(e, "192.0.2.1"), &e->clients[0].opts);
	assert_false(match_any(e, "192.0.2.2")->rw);
	assert_ptr_equal(match_any(e, "192.0.2.2"), &e->clients[1].opts);
	assert_int_equal(match_any(e, "203.0.113.1")->squash, EXPORT_ALL_SQUASH);
	assert_false(match_any(&T.exports[1], "192.0.2.1")->rw);
	assert_false(match_any(&T.exports[2], "192.0.2.1")->rw);

	/* A NET entry before a wildcard decides without any DNS. */
	parse_ok("/a 192.0.2.0/24(rw) *.example.com(ro)\n");
	reverse_calls = 0;
	assert_true(match_any(&T.exports[0], "192.0.2.1")->rw);
	assert_int_equal(reverse_calls, 0);
}

static void test_hostnames(void **state)
{
	const struct export *e;

	(void)state;
	parse_ok("/a host1(rw) multi(ro)\n");
	e = &T.exports[0];
	assert_int_equal(e->nclients, 3);
	assert_true(match_any(e, "192.0.2.10")->rw);
	assert_null(match_any(e, "192.0.2.11"));
	assert_false(match_any(e, "192.0.2.20")->rw);
	assert_false(match6(e, "2001:db8::20")->rw);
	assert_null(match6(e, "2001:db8::21"));
	/* The error names the line of the host (here after a continuation). */
	parse_bad("/a host1 \\\n  nosuch.example.net(rw)\n", "t:2: cannot resolve host 'nosuch.example.net'");
}

static void test_wildcards(void **state)
{
	const struct export *e;

	(void)state;
	parse_ok("/a *.example.com(rw) 192.0.2.0/24(ro)\n"
		 "/b client?.example.com(rw)\n"
		 "/c client[0-1].example.com(rw) \"*.example.COM\"(ro)\n"
		 "/d *.com(rw)\n");
	e = &T.exports[0];
	assert_true(match_any(e, "198.51.100.1")->rw);
	assert_true(match_any(e, "198.51.100.2")->rw);   /* CLIENT2.Example.COM: case-insensitive */
	assert_true(match_any(e, "198.51.100.3")->rw);   /* trailing dot ignored */
	assert_null(match_any(e, "198.51.100.4"));       /* example.com itself is not *.example.com */
	assert_null(match_any(e, "203.0.113.5"));        /* PTR not confirmed by forward lookup */
	assert_null(match_any(e, "203.0.113.6"));        /* no PTR */
	assert_true(match6(e, "2001:db8::5")->rw);
	assert_null(match6(e, "2001:db8::6"));
	assert_false(match_any(e, "192.0.2.1")->rw);
	assert_true(match_any(&T.exports[1], "198.51.100.1")->rw);
	assert_null(match_any(&T.exports[1], "198.51.100.12"));
	assert_true(match_any(&T.exports[2], "198.51.100.1")->rw);
	assert_false(match_any(&T.exports[2], "198.51.100.2")->rw); /* [0-1] misses 2; *.example.COM */
	assert_false(match_any(&T.exports[2], "198.51.100.12")->rw);
	assert_true(match_any(&T.exports[3], "198.51.100.1")->rw); /* '*' crosses dots */
}

static void test_reverse_cache(void **state)
{
	const struct export *e;
	char addr[32];

	(void)state;
	parse_ok("/a *.example.com(rw)\n");
	e = &T.exports[0];
	exports_rcache_flush(); /* test_wildcards looked these up */
	reverse_calls = forward_calls = 0;
	assert_non_null(match_any(e, "198.51.100.1"));
	assert_int_equal(reverse_calls, 1);
	assert_int_equal(forward_calls, 1); /* the confirmation */
	for (int i = 0; i < 10; i++)
		assert_non_null(match_any(e, "198.51.100.1"));
	assert_int_equal(reverse_calls, 1);
	fake_now += EXPORTS_RCACHE_TTL - 1;
	assert_non_null(match_any(e, "198.51.100.1"));
	assert_int_equal(reverse_calls, 1);
	fake_now += 1;
	assert_non_null(match_any(e, "198.51.100.1"));
	assert_int_equal(reverse_calls, 2);

	/* "No name" is cached too. */
	reverse_calls = 0;
	assert_null(match_any(e, "203.0.113.6"));
	assert_null(match_any(e, "203.0.113.6"));
	assert_int_equal(reverse_calls, 1);
	assert_null(match_any(e, "203.0.113.5"));
	assert_null(match_any(e, "203.0.113.5"));
	assert_int_equal(reverse_calls, 2);

	/* Flushing forgets. */
	exports_rcache_flush();
	assert_non_null(match_any(e, "198.51.100.1"));
	assert_int_equal(reverse_calls, 3);

	/* Far more addresses than entries: answers stay right, lookups stay bounded by misses. */
	reverse_calls = 0;
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 1024; i++) {
			const struct export_opts *o;

			snprintf(addr, sizeof(addr), "10.0.%d.%d", i / 256, i % 256);
			o = match_any(e, addr);
			if ((o != NULL) != (i % 2 == 0))
				fail_msg("%s: wrong answer from the cache", addr);
		}
	}
	/* match_any looks each up twice (AF_INET and v4-mapped): the second is a hit. */
	assert_true(reverse_calls >= 1024);
	assert_true(reverse_calls <= 2 * 1024);
}

/* ---- concurrency ---- */

struct thread_arg {
	const struct export *e;
	unsigned seed;
	unsigned wrong;
};

static void *match_thread(void *p)
{
	struct thread_arg *arg = p;

	for (int i = 0; i < 20000; i++) {
		unsigned x = (unsigned)rand_r(&arg->seed) % 3, y = (unsigned)rand_r(&arg->seed) % 200;
		struct sockaddr_in sin = { .sin_family = AF_INET };
		const struct export_opts *o;
		char addr[32];

		snprintf(addr, sizeof(addr), "10.0.%u.%u", x, y);
		inet_pton(AF_INET, addr, &sin.sin_addr);
		o = export_match(arg->e, (struct sockaddr *)&sin, sizeof(sin));
		if ((o != NULL) != (y % 2 == 0))
			arg->wrong++;
		if ((i & 1023) == 0)
			__atomic_fetch_add(&fake_now, 7, __ATOMIC_RELAXED); /* expire entries meanwhile */
	}
	return NULL;
}

static void test_threads(void **state)
{
	pthread_t th[4];
	struct thread_arg args[4];

	(void)state;
	parse_ok("/a *.dyn.example.com(rw)\n");
	for (int i = 0; i < 4; i++) {
		args[i] = (struct thread_arg){ .e = &T.exports[0], .seed = (unsigned)i + 1 };
		assert_int_equal(pthread_create(&th[i], NULL, match_thread, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(args[i].wrong, 0);
	}
}

/* ---- syntax ---- */

static void test_syntax(void **state)
{
	char path[PATH_MAX + 64];

	(void)state;
	/* Comments, blank lines, tabs, CRLF, last line without newline. */
	parse_ok("# comment\n\n   \t\n/a\t192.0.2.1(rw)\t# trailing comment\r\n  /b 192.0.2.2 # c\n/c");
	assert_int_equal(T.n, 3);
	assert_int_equal(T.exports[0].line, 4);
	assert_int_equal(T.exports[1].line, 5);
	assert_int_equal(T.exports[2].line, 6);
	assert_string_equal(T.exports[1].path, "/b");
	assert_int_equal(T.exports[1].nclients, 1);

	/* Continuations, with correct line numbers afterwards. */
	parse_ok("/a \\\n  192.0.2.1(rw) \\\n  192.0.2.2\n/b\n");
	assert_int_equal(T.exports[0].nclients, 2);
	assert_int_equal(T.exports[1].line, 4);
	parse_ok("/a\\\n192.0.2.1\\\r\n192.0.2.2\\\n");
	assert_string_equal(T.exports[0].path, "/a");
	assert_int_equal(T.exports[0].nclients, 2);
	parse_bad("/a \\\n  \\\n 192.0.2.1(bogus)\n", "t:3: unknown option 'bogus'");
	/* A continuation inside an option list is dropped, as if the lines were joined. */
	parse_ok("/a 192.0.2.1(rw,\\\n   all_squash,\\\r\nanonuid=5)\n/b\n");
	assert_true(T.exports[0].clients[0].opts.rw);
	assert_int_equal(T.exports[0].clients[0].opts.squash, EXPORT_ALL_SQUASH);
	assert_int_equal(T.exports[0].clients[0].opts.anonuid, 5);
	assert_int_equal(T.exports[1].line, 4);
	parse_bad("/a 192.0.2.1(rw,\\\nbogus)\n", "t:2: unknown option 'bogus'");
	parse_bad("/a 192.0.2.1(rw,\\\n\n", "t:2: unterminated '('");
	parse_bad("/a\n/b \\\n\n c(rw)\n", "t:4: bad export path 'c(rw)'");

	/* Quoted paths and \ooo escapes; '#' inside a word is not a comment. */
	parse_ok("\"/srv/with space\" 192.0.2.1\n/srv/oct\\040al\n\"/srv/q\"x/more\n/a#b\n");
	assert_string_equal(T.exports[0].path, "/srv/with space");
	assert_string_equal(T.exports[1].path, "/srv/oct al");
	assert_int_equal(T.exports[1].nclients, 1);
	assert_string_equal(T.exports[2].path, "/srv/qx/more");
	assert_string_equal(T.exports[3].path, "/a#b");
	parse_ok("\"/srv/a\"\"/b\"\n/c\\101\\377\n");
	assert_string_equal(T.exports[0].path, "/srv/a/b");
	assert_string_equal(T.exports[1].path, "/cA\377");

	/* Normalisation. */
	parse_ok("/srv//a/./b/\n/\n");
	assert_string_equal(T.exports[0].path, "/srv/a/b");
	assert_string_equal(T.exports[1].path, "/");
	parse_bad("/srv/a\n/srv//a/\n", "t:2: /srv/a is already exported at line 1");
	parse_bad("/\n/./\n", "t:2: / is already exported at line 1");

	/* Errors. */
	parse_bad("srv/a\n", "t:1: bad export path 'srv/a': not an absolute path");
	parse_bad("\n-rw /a\n", "t:2: bad export path '-rw': not an absolute path");
	parse_bad("*(rw)\n", "not an absolute path");
	parse_bad("/srv/../etc\n", "'..' is not allowed");
	parse_bad("\"\"\n", "t:1: empty path");
	parse_bad("\"/srv/a\n", "t:1: unterminated quote in path");
	parse_bad("/a \"192.0.2.1\n", "unterminated quote in client");
	parse_bad("/srv\\x\n", "bad escape in path");
	parse_bad("/srv\\000\n", "bad escape");
	parse_bad("/srv\\400\n", "bad escape");
	parse_bad("/srv\\04", "bad escape");
	parse_bad("/srv\\", "bad escape");
	parse_bad("/a 192.0.2.1(rw\n", "t:1: unterminated '(' (missing ')')");
	parse_bad("/a 192.0.2.1(rw", "unterminated '('");
	parse_bad("/a 192.0.2.1(rw)x\n", "unexpected text after ')'");
	parse_bad("/a 192.0.2.1(rw)(ro)\n", "unexpected text after ')'");
	parse_bad("/a 192.0.2.1()\n", "empty option list");
	parse_bad("/a 192.0.2.1 (rw)\n", "t:1: options without a client: write '*(...)'");
	parse_bad("/a (rw)\n", "options without a client");
	parse_bad("/a 192.0.2.1(rw)\n/b\n/c 192.0.2.1(x)\n", "t:3: unknown option 'x'");

	/* Path length: PATH_MAX - 1 bytes is the longest. */
	memset(path, 'p', sizeof(path));
	path[0] = '/';
	path[PATH_MAX - 1] = '\n';
	path[PATH_MAX] = '\0';
	parse_ok(path);
	assert_int_equal(strlen(T.exports[0].path), PATH_MAX - 1);
	path[PATH_MAX - 1] = 'p';
	path[PATH_MAX] = '\n';
	path[PATH_MAX + 1] = '\0';
	parse_bad(path, "path too long");
}

static void test_long_inputs(void **state)
{
	size_t n = 4 << 20;
	char *big = malloc(n + 64);
	size_t off = 0;

	(void)state;
	assert_non_null(big);
	/* One line with 20000 clients. */
	off = (size_t)sprintf(big, "/a");
	for (int i = 0; i < 20000; i++)
		off += (size_t)sprintf(big + off, " 10.%d.%d.0/24(rw)", i / 256, i % 256);
	big[off++] = '\n';
	big[off] = '\0';
	parse_ok(big);
	assert_int_equal(T.exports[0].nclients, 20000);
	assert_non_null(match_any(&T.exports[0], "10.78.31.5"));
	assert_ptr_equal(match_any(&T.exports[0], "10.78.31.5"), &T.exports[0].clients[78 * 256 + 31].opts);
	assert_null(match_any(&T.exports[0], "10.78.32.5"));

	/* 5000 exports. */
	off = 0;
	for (int i = 0; i < 5000; i++)
		off += (size_t)sprintf(big + off, "/srv/e%d 192.0.2.%d(rw)\n", i, i % 256);
	parse_ok(big);
	assert_int_equal(T.n, 5000);
	assert_non_null(exports_find(&T, "/srv/e4999"));

	/* Megabyte-long words of every kind. */
	memset(big, 'a', n);
	big[n] = '\0';
	big[0] = '/';
	parse_bad(big, "path too long");
	memcpy(big, "/a ", 3);
	parse_bad(big, "client too long");
	memcpy(big, "/a b(", 5);
	parse_bad(big, "option list too long");
	big[n - 1] = ')';
	parse_bad(big, "option list too long");
	big[4000] = ')';
	big[4001] = '\n';
	parse_bad(big, "option 'aaaa");
	memcpy(big, "/a -", 4);
	parse_bad(big, "too long");
	memset(big, '\\', n);
	big[0] = '/';
	parse_bad(big, "bad escape");
	memset(big, ' ', n);
	parse_ok(big);
	assert_int_equal(T.n, 0);
	for (size_t i = 0; i + 1 < n; i += 2)
		memcpy(big + i, "\\\n", 2);
	parse_ok(big);
	assert_int_equal(T.n, 0);
	free(big);
}

/* Parse random and mutated inputs; whatever the result, it must be consistent and never crash. */
static void check_table_sane(const struct export_table *t)
{
	for (unsigned i = 0; i < t->n; i++) {
		const struct export *e = &t->exports[i];

		assert_true(e->path[0] == '/');
		assert_true(e->nclients >= 1);
		assert_ptr_equal(exports_find(t, e->path), e);
		for (unsigned j = 0; j < e->nclients; j++)
			assert_true(e->clients[j].prefix <= 128);
		(void)match_any(e, "192.0.2.1");
		(void)match6(e, "2001:db8::1");
		(void)match_any(e, "198.51.100.1");
	}
}

static void test_fuzz(void **state)
{
	static const char alpha[] = "/ab*?[]!().,=-#\"\\\n\t 0123456789:rwosqucyfinde@x";
	static const char good[] = "/srv/a -rw,sync 192.0.2.0/24(rw,no_root_squash) *.example.com(ro)\n"
				   "\"/srv/b c\" 2001:db8::/32(sec=sys:none,fsid=5) host1 \\\n  multi(anonuid=7)\n"
				   "/srv/d 192.0.2.0/255.255.255.0(insecure,all_squash,async) *\n";
	char buf[512];
	unsigned seed = 4242;
	unsigned ok = 0;

	(void)state;
	for (int round = 0; round < 30000; round++) {
		size_t len = (size_t)rand_r(&seed) % 120;

		for (size_t i = 0; i < len; i++)
			buf[i] = alpha[(size_t)rand_r(&seed) % (sizeof(alpha) - 1)];
		buf[len] = '\0';
		exports_free(&T);
		if (exports_parse(buf, "fuzz", &T, err, sizeof(err)) == 0) {
			ok++;
			check_table_sane(&T);
		} else {
			assert_true(strncmp(err, "fuzz:", 5) == 0);
		}
	}
	for (int round = 0; round < 30000; round++) {
		memcpy(buf, good, sizeof(good));
		for (int m = 0; m < 1 + round % 3; m++)
			buf[(size_t)rand_r(&seed) % (sizeof(good) - 1)] = alpha[(size_t)rand_r(&seed) % (sizeof(alpha) - 1)];
		exports_free(&T);
		if (exports_parse(buf, "fuzz", &T, err, sizeof(err)) == 0) {
			ok++;
			check_table_sane(&T);
		} else {
			assert_true(strncmp(err, "fuzz:", 5) == 0);
		}
	}
	assert_true(ok > 100); /* the mutations must also exercise successful parses */
	exports_free(&T);
}

/* ---- lookups, files ---- */

static void test_find(void **state)
{
	(void)state;
	parse_ok("/srv/a\n/\n/srv/a/b\n");
	assert_ptr_equal(exports_find(&T, "/srv/a"), &T.exports[0]);
	assert_ptr_equal(exports_find(&T, "/srv/a/"), &T.exports[0]);
	assert_ptr_equal(exports_find(&T, "//srv//a"), &T.exports[0]);
	assert_ptr_equal(exports_find(&T, "/srv/./a/."), &T.exports[0]);
	assert_ptr_equal(exports_find(&T, "/"), &T.exports[1]);
	assert_ptr_equal(exports_find(&T, "///"), &T.exports[1]);
	assert_ptr_equal(exports_find(&T, "/srv/a/b"), &T.exports[2]);
	assert_null(exports_find(&T, "/srv"));
	assert_null(exports_find(&T, "/srv/a/b/c"));
	assert_null(exports_find(&T, "/srv/ab"));
	assert_null(exports_find(&T, "srv/a"));
	assert_null(exports_find(&T, ""));
	assert_null(exports_find(&T, "/srv/b/../a"));
	assert_null(exports_find(&T, NULL));
	assert_null(exports_find(NULL, "/srv/a"));
	{
		char *longp = malloc(PATH_MAX + 10);

		assert_non_null(longp);
		memset(longp, 'x', PATH_MAX + 9);
		longp[0] = '/';
		longp[PATH_MAX + 9] = '\0';
		assert_null(exports_find(&T, longp));
		free(longp);
	}
	exports_free(&T);
	exports_free(&T); /* twice is harmless */
	exports_free(NULL);
	assert_null(exports_find(&T, "/srv/a"));
}

static const char *write_temp(const void *data, size_t len)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/rnfsd-exports-test-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	return path;
}

static void test_load(void **state)
{
	const char *path;
	char want[128];
	char small[16];

	(void)state;
	exports_free(&T);
	assert_int_equal(exports_load("/nonexistent/exports", &T, err, sizeof(err)), -1);
	assert_string_equal(err, "/nonexistent/exports: No such file or directory");
	assert_int_equal(T.n, 0);
	assert_int_equal(exports_load("/nonexistent/exports", &T, NULL, 0), -1);

	path = write_temp("/srv/a 192.0.2.0/24(rw)\n", 24);
	assert_int_equal(exports_load(path, &T, err, sizeof(err)), 0);
	assert_int_equal(T.n, 1);
	exports_free(&T);
	unlink(path);

	path = write_temp("/srv/a\n/srv/b *(bogus)\n", 23);
	assert_int_equal(exports_load(path, &T, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s:2: unknown option 'bogus'", path);
	assert_string_equal(err, want);
	assert_int_equal(exports_load(path, &T, small, sizeof(small)), -1);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	unlink(path);

	path = write_temp("/srv/a\n\0/srv/b\n", 15);
	assert_int_equal(exports_load(path, &T, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "NUL byte"));
	unlink(path);
}

static char *read_source_file(const char *rel)
{
	const char *root = getenv("RNFSD_SOURCE_ROOT");
	char path[PATH_MAX];
	FILE *f;
	char *buf;
	long len;

	if (!root)
		fail_msg("RNFSD_SOURCE_ROOT is not set (run through meson test)");
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

static void test_example_file(void **state)
{
	const char *root = getenv("RNFSD_SOURCE_ROOT");
	char path[PATH_MAX];

	(void)state;
	assert_non_null(root);
	snprintf(path, sizeof(path), "%s/conf/exports.example", root);
	exports_set_resolver(NULL); /* the example must not depend on test names */
	exports_free(&T);
	if (exports_load(path, &T, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_true(T.n >= 3);
	check_table_sane(&T);
	exports_free(&T);
	exports_set_resolver(&fake_resolver);
}

/* fs=NAME: the export's backend, one per export like fsid. */
static void test_backend_option(void **state)
{
	(void)state;
	parse_ok("/srv/a 192.0.2.1(rw,fs=local) 192.0.2.2(ro)\n/srv/b *(rw)\n/srv/c -fs=ceph_1 *(rw)\n");
	assert_string_equal(T.exports[0].fs, "local");
	assert_string_equal(T.exports[1].fs, ""); /* the default: "local" */
	assert_string_equal(T.exports[2].fs, "ceph_1");
	parse_ok("/srv/a 192.0.2.1(fs=local) 192.0.2.2(fs=local)\n");
	parse_bad("/srv/a 192.0.2.1(fs=local) 192.0.2.2(fs=ceph)\n",
		  "t:1: conflicting fs values for /srv/a (local and ceph)");
	bad_opts("fs=", "empty value");
	bad_opts("fs=Local", "bad fs=Local");
	bad_opts("fs=a/b", "bad fs=a/b");
	bad_opts("fs=sixteen_chars_xy", "bad fs=sixteen_chars_xy");
	exports_free(&T);
}

/* pnfs=flexfiles: the export's layout type, from any client's options. */
static void test_pnfs_option(void **state)
{
	(void)state;
	parse_ok("/srv/a 192.0.2.1(rw) 192.0.2.2(rw,pnfs=flexfiles)\n/srv/b *(rw)\n/srv/c -pnfs=flexfiles\n");
	assert_int_equal(T.exports[0].pnfs, EXPORT_PNFS_FLEXFILES);
	assert_int_equal(T.exports[1].pnfs, EXPORT_PNFS_NONE);
	assert_int_equal(T.exports[2].pnfs, EXPORT_PNFS_FLEXFILES);
	bad_opts("pnfs=", "empty value");
	bad_opts("pnfs=files", "bad pnfs=files: expected flexfiles");
	bad_opts("pnfs=FLEXFILES", "bad pnfs=FLEXFILES");
	bad_opts("pnfs", "");
	exports_free(&T);
}

/* xprtsec= (RFC 9289 transport security): parsing, errors, the default. */
static void test_xprtsec_option(void **state)
{
	static const struct { const char *text; uint32_t mask; } ok[] = {
		{ "none", EXPORT_XPRTSEC_NONE },
		{ "tls", EXPORT_XPRTSEC_TLS },
		{ "mtls", EXPORT_XPRTSEC_MTLS },
		{ "tls:mtls", EXPORT_XPRTSEC_TLS | EXPORT_XPRTSEC_MTLS },
		{ "mtls:none", EXPORT_XPRTSEC_MTLS | EXPORT_XPRTSEC_NONE }, /* any order */
		{ "mtls:tls:none", EXPORT_XPRTSEC_ALL },
		{ "tls:tls", EXPORT_XPRTSEC_TLS }, /* a repeat counts once */
	};
	static const char *const bad[] = { "", ":", "tls:", ":tls", "tls::mtls", "TLS", "ssl", "mtlsx", "tl",
					   "none:tls:mtls:x" };
	uint32_t m;
	char buf[32];

	(void)state;
	assert_int_equal(opts_of("rw").xprtsec, EXPORT_XPRTSEC_ALL); /* default: any */
	exports_free(&T);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(export_xprtsec_parse(ok[i].text, &m), 0);
		assert_int_equal(m, ok[i].mask);
		snprintf(buf, sizeof(buf), "xprtsec=%s", ok[i].text);
		assert_int_equal(opts_of(buf).xprtsec, ok[i].mask);
		exports_free(&T);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(export_xprtsec_parse(bad[i], &m), -1);
	bad_opts("xprtsec=", "empty value");
	bad_opts("xprtsec=tls:ssl", "bad xprtsec=tls:ssl: expected none, tls, mtls");
	export_xprtsec_format(EXPORT_XPRTSEC_MTLS | EXPORT_XPRTSEC_NONE, buf, sizeof(buf));
	assert_string_equal(buf, "none:mtls");
}

/* The admission rule: a connection is admitted only by its own mode (knfsd's
 * check_xprtsec_policy), modes 0 none, 1 TLS, 2 mutual TLS (rpc/xprt.h). */
static void test_xprtsec_admission_table(void **state)
{
	static const struct { uint32_t mask; bool none, tls, mtls; } t[] = {
		{ EXPORT_XPRTSEC_ALL, true, true, true },
		{ EXPORT_XPRTSEC_NONE, true, false, false },
		{ EXPORT_XPRTSEC_TLS, false, true, false },  /* a client certificate does not make it TLS */
		{ EXPORT_XPRTSEC_MTLS, false, false, true },
		{ EXPORT_XPRTSEC_TLS | EXPORT_XPRTSEC_MTLS, false, true, true },
		{ EXPORT_XPRTSEC_NONE | EXPORT_XPRTSEC_MTLS, true, false, true },
		{ 0, false, false, false },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(export_xprtsec_admits(t[i].mask, 0), t[i].none);
		assert_int_equal(export_xprtsec_admits(t[i].mask, 1), t[i].tls);
		assert_int_equal(export_xprtsec_admits(t[i].mask, 2), t[i].mtls);
		assert_false(export_xprtsec_admits(t[i].mask, 3)); /* no such mode */
	}
}

/* Which exports' xprtsec= this server cannot meet, by its [tls] settings. */
static void test_xprtsec_unmet(void **state)
{
	const struct export *e = NULL;

	(void)state;
	parse_ok("/a *(rw)\n/b *(rw,xprtsec=none:tls) 192.0.2.1(rw,xprtsec=tls)\n/c *(rw,xprtsec=mtls)\n");
	/* No TLS: b's 192.0.2.1 (tls only) is the first that cannot be met. */
	const struct export_client *c = exports_xprtsec_unmet(&T, false, false, &e);
	assert_non_null(c);
	assert_string_equal(e->path, "/b");
	assert_string_equal(c->spec, "192.0.2.1");
	/* TLS without a CA: only c (mtls). */
	c = exports_xprtsec_unmet(&T, true, false, &e);
	assert_non_null(c);
	assert_string_equal(e->path, "/c");
	/* Both: everything can be met. */
	assert_null(exports_xprtsec_unmet(&T, true, true, &e));
	exports_free(&T);
}

static void test_man_page_documents_options(void **state)
{
	char *man = read_source_file("docs/rnfsd-exports.5");
	char want[96];

	(void)state;
	for (unsigned i = 0; i < exports_noptions; i++) {
		const struct exports_option *o = &exports_options[i];

		if (o->takes_value)
			snprintf(want, sizeof(want), "\n.BI %s= ", o->name);
		else
			snprintf(want, sizeof(want), "\n.B %s\n", o->name);
		if (!strstr(man, want))
			fail_msg("docs/rnfsd-exports.5 has no entry for option %s", o->name);
	}
	free(man);
}

/* Real getaddrinfo/getnameinfo: only "localhost" is relied on. */
static void test_real_resolver(void **state)
{
	(void)state;
	exports_set_resolver(NULL);
	exports_set_clock(NULL);
	parse_ok("/a localhost(rw)\n/b local*(rw)\n");
	assert_true(T.exports[0].nclients >= 1);
	assert_true(match_any(&T.exports[0], "127.0.0.1")->rw);
	assert_null(match_any(&T.exports[0], "192.0.2.1"));
	/* 127.0.0.1 -> "localhost" -> 127.0.0.1: confirmed, matches local* */
	assert_true(match_any(&T.exports[1], "127.0.0.1")->rw);
	/* RFC 6761: .invalid never resolves. */
	parse_bad("/a\n/b no-such-host.invalid(rw)\n", "t:2: cannot resolve host 'no-such-host.invalid'");
	exports_free(&T);
	exports_set_resolver(&fake_resolver);
	exports_set_clock(fake_clock);
}

static int teardown_table(void **state)
{
	(void)state;
	exports_free(&T);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_options),
		cmocka_unit_test(test_each_option),
		cmocka_unit_test(test_option_errors),
		cmocka_unit_test(test_fsid_and_export_id),
		cmocka_unit_test(test_pnfs_option),
		cmocka_unit_test(test_xprtsec_option),
		cmocka_unit_test(test_xprtsec_admission_table),
		cmocka_unit_test(test_xprtsec_unmet),
		cmocka_unit_test(test_line_defaults),
		cmocka_unit_test(test_client_kinds),
		cmocka_unit_test(test_client_errors),
		cmocka_unit_test(test_cidr_v4),
		cmocka_unit_test(test_cidr_v6),
		cmocka_unit_test(test_peer_forms),
		cmocka_unit_test(test_first_match_wins),
		cmocka_unit_test(test_hostnames),
		cmocka_unit_test(test_wildcards),
		cmocka_unit_test(test_reverse_cache),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_long_inputs),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_example_file),
		cmocka_unit_test(test_backend_option),
		cmocka_unit_test(test_man_page_documents_options),
		cmocka_unit_test(test_real_resolver),
	};

	return cmocka_run_group_tests(tests, setup, teardown) | teardown_table(NULL);
}
