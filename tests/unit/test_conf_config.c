/*
 * test_conf_config.c - unit tests for conf/config.c (rnfsd.conf parser):
 * defaults, every key at and beyond its range, every error with its
 * FILE:LINE, malformed input, and that conf/rnfsd.conf.example and
 * docs/rnfsd.conf.5 agree with the code (RNFSD_SOURCE_ROOT from meson).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "conf/config.h"
#include "conf/config_internal.h"
#include "rnfsd_build.h"

static char err[512];

static void parse_ok(const char *text, struct rnfsd_config *cfg)
{
	config_defaults(cfg);
	err[0] = '\0';
	if (config_parse(text, "t.conf", cfg, err, sizeof(err)) != 0)
		fail_msg("unexpected error for \"%s\": %s", text, err);
}

/* Parse must fail, leave cfg untouched, and err must contain want. */
static void parse_bad(const char *text, const char *want)
{
	struct rnfsd_config cfg, before;

	config_defaults(&cfg);
	before = cfg;
	err[0] = '\0';
	if (config_parse(text, "t.conf", &cfg, err, sizeof(err)) != -1)
		fail_msg("accepted bad input \"%s\"", text);
	if (!strstr(err, want))
		fail_msg("input \"%s\": error \"%s\" does not contain \"%s\"", text, err, want);
	if (memcmp(&cfg, &before, sizeof(cfg)) != 0)
		fail_msg("input \"%s\": failed parse modified the configuration", text);
}

/* One "[section]\nkey = value\n" document. */
static const char *kv(const char *section, const char *key, const char *value)
{
	static char buf[16384];

	snprintf(buf, sizeof(buf), "[%s]\n%s = %s\n", section, key, value);
	return buf;
}

static void test_defaults(void **state)
{
	struct rnfsd_config cfg;

	(void)state;
	config_defaults(&cfg);
	assert_int_equal(cfg.threads, 8);
	assert_string_equal(cfg.exports_file, RNFSD_SYSCONFDIR "/exports");
	assert_false(cfg.exports_named); /* the built-in default export applies if it is missing */
	assert_string_equal(cfg.state_dir, RNFSD_LOCALSTATEDIR);
	assert_string_equal(cfg.stats_socket, RNFSD_RUNSTATEDIR "/rnfsd.sock");
	assert_true(cfg.rpcbind);
	assert_int_equal(cfg.drc_entries, 4096);
	assert_int_equal(cfg.max_connections, 1024);
	assert_int_equal(cfg.n_tcp_listen, 2);
	assert_string_equal(cfg.tcp_listen[0].addr, "0.0.0.0");
	assert_int_equal(cfg.tcp_listen[0].port, 2049);
	assert_string_equal(cfg.tcp_listen[1].addr, "::");
	assert_int_equal(cfg.tcp_listen[1].port, 2049);
	assert_false(cfg.tcp_listen[0].optional); /* IPv4 must come up */
	assert_true(cfg.tcp_listen[1].optional);  /* a host without IPv6 still starts */
	assert_false(cfg.rdma_listen[0].optional);
	assert_int_equal(cfg.max_record, 1024 * 1024 + 64 * 1024);
	assert_int_equal(cfg.rdma, CONFIG_AUTO);
	assert_int_equal(cfg.n_rdma_listen, 1);
	assert_string_equal(cfg.rdma_listen[0].addr, "0.0.0.0");
	assert_int_equal(cfg.rdma_listen[0].port, 20049);
	assert_int_equal(cfg.rdma_credits, 128);
	assert_int_equal(cfg.rdma_inline, 4096);
	assert_int_equal(cfg.rdma_max_payload, 1024 * 1024);
	assert_true(cfg.rdma_send_invalidate);
	assert_int_equal(cfg.rdma_buffer_pool, 256 * 1024 * 1024);
	assert_true(cfg.nfsv4); /* issue 10: NFSv4 offered by default; [nfsv4] enable = no turns it off */
	assert_int_equal(cfg.nfsv4_grace_time, 90);
	assert_int_equal(cfg.nfsv4_lease_time, 90);
	assert_int_equal(cfg.nfsv4_max_clients, 4096); /* NFS4_STATE_MAX_CLIENTS: more than pynfs CID5 makes */
	/* issue 26: read delegations by default, write ones opt-in (rnfsd.conf(5)) */
	assert_int_equal(cfg.nfsv4_delegations, CONFIG_DELEG_READ);
	assert_false(cfg.nfsv4_dir_delegations);
}

static void test_empty_and_comments(void **state)
{
	struct rnfsd_config cfg, def;

	(void)state;
	config_defaults(&def);
	parse_ok("", &cfg);
	assert_memory_equal(&cfg, &def, sizeof(cfg));
	parse_ok("# only a comment\n; another\n\n   \t\n[rnfsd]\n# x = y\n[tcp]\n[rdma]\n", &cfg);
	assert_memory_equal(&cfg, &def, sizeof(cfg));
}

static void test_every_key(void **state)
{
	struct rnfsd_config cfg;

	(void)state;
	parse_ok("[rnfsd]\n"
		 "threads = 32\n"
		 "exports = /etc/x/exports\n"
		 "state-dir = /var/lib/x\n"
		 "stats-socket = /run/x.sock\n"
		 "rpcbind = no\n"
		 "drc-entries = 100\n"
		 "max-connections = 7\n"
		 "[tcp]\n"
		 "listen = 192.0.2.1:3049, [2001:db8::1]:3050, 198.51.100.7\n"
		 "max-record = 2M\n"
		 "[rdma]\n"
		 "enable = yes\n"
		 "listen = [::]\n"
		 "credits = 64\n"
		 "inline = 8k\n"
		 "max-payload = 4M\n"
		 "send-invalidate = no\n"
		 "[nfsv4]\n"
		 "enable = no\n"
		 "max-clients = 100\n", &cfg);
	assert_int_equal(cfg.nfsv4_max_clients, 100);
	assert_int_equal(cfg.threads, 32);
	assert_string_equal(cfg.exports_file, "/etc/x/exports");
	assert_true(cfg.exports_named); /* named: it must exist */
	assert_string_equal(cfg.state_dir, "/var/lib/x");
	assert_string_equal(cfg.stats_socket, "/run/x.sock");
	assert_false(cfg.rpcbind);
	assert_int_equal(cfg.drc_entries, 100);
	assert_int_equal(cfg.max_connections, 7);
	assert_int_equal(cfg.n_tcp_listen, 3);
	assert_string_equal(cfg.tcp_listen[0].addr, "192.0.2.1");
	assert_int_equal(cfg.tcp_listen[0].port, 3049);
	assert_string_equal(cfg.tcp_listen[1].addr, "2001:db8::1");
	assert_int_equal(cfg.tcp_listen[1].port, 3050);
	assert_string_equal(cfg.tcp_listen[2].addr, "198.51.100.7");
	assert_int_equal(cfg.tcp_listen[2].port, 2049);
	assert_int_equal(cfg.max_record, 2 * 1024 * 1024);
	assert_int_equal(cfg.rdma, CONFIG_YES);
	assert_int_equal(cfg.n_rdma_listen, 1);
	assert_string_equal(cfg.rdma_listen[0].addr, "::");
	assert_int_equal(cfg.rdma_listen[0].port, 20049);
	assert_int_equal(cfg.rdma_credits, 64);
	assert_int_equal(cfg.rdma_inline, 8192);
	assert_int_equal(cfg.rdma_max_payload, 4 * 1024 * 1024);
	assert_false(cfg.rdma_send_invalidate);
	assert_false(cfg.nfsv4);
}

/* Reads the numeric field of key k from cfg. */
static unsigned long long key_value(const struct config_key *k, const struct rnfsd_config *cfg)
{
	const char *f = (const char *)cfg + k->offset;

	return k->type == CONFIG_TYPE_SIZE ? *(const size_t *)f : *(const unsigned *)f;
}

/* Every numeric key: min and max accepted, min-1 and max+1 refused, junk refused. */
static void test_numeric_ranges(void **state)
{
	char v[64];

	(void)state;
	for (unsigned i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];
		const char *sec = config_section_names[k->section];
		struct rnfsd_config cfg;

		if (k->type != CONFIG_TYPE_UINT && k->type != CONFIG_TYPE_SIZE)
			continue;
		snprintf(v, sizeof(v), "%llu", k->min);
		parse_ok(kv(sec, k->name, v), &cfg);
		assert_int_equal(key_value(k, &cfg), k->min);
		snprintf(v, sizeof(v), "%llu", k->max);
		parse_ok(kv(sec, k->name, v), &cfg);
		assert_int_equal(key_value(k, &cfg), k->max);
		snprintf(v, sizeof(v), "%llu", k->min - 1);
		parse_bad(kv(sec, k->name, v), "out of range");
		snprintf(v, sizeof(v), "%llu", k->max + 1);
		parse_bad(kv(sec, k->name, v), "out of range");
		parse_bad(kv(sec, k->name, "-1"), "bad value '-1'");
		parse_bad(kv(sec, k->name, "+5"), "bad value");
		parse_bad(kv(sec, k->name, "0x10"), "bad value");
		parse_bad(kv(sec, k->name, "12 34"), "bad value");
		parse_bad(kv(sec, k->name, "1.5"), "bad value");
		parse_bad(kv(sec, k->name, "ten"), "bad value");
		parse_bad(kv(sec, k->name, "99999999999999999999999999"), "bad value");
		parse_bad(kv(sec, k->name, "18446744073709551615"), "out of range");
		parse_bad(kv(sec, k->name, "18446744073709551616"), "bad value");
		parse_bad(kv(sec, k->name, ""), "missing value");
		if (k->type == CONFIG_TYPE_UINT)
			parse_bad(kv(sec, k->name, "4k"), "not a decimal number");
	}
}

static void test_sizes(void **state)
{
	struct rnfsd_config cfg;

	(void)state;
	parse_ok(kv("tcp", "max-record", "8k"), &cfg);
	assert_int_equal(cfg.max_record, 8192);
	parse_ok(kv("tcp", "max-record", "8K"), &cfg);
	assert_int_equal(cfg.max_record, 8192);
	parse_ok(kv("tcp", "max-record", "64M"), &cfg);
	assert_int_equal(cfg.max_record, 64 * 1024 * 1024);
	parse_ok(kv("tcp", "max-record", "65536k"), &cfg);
	assert_int_equal(cfg.max_record, 64 * 1024 * 1024);
	parse_ok(kv("tcp", "max-record", "1m"), &cfg);
	assert_int_equal(cfg.max_record, 1024 * 1024);
	parse_bad(kv("tcp", "max-record", "65537k"), "out of range 8192..67108864");
	parse_bad(kv("tcp", "max-record", "7k"), "out of range");
	parse_bad(kv("tcp", "max-record", "0M"), "out of range");
	parse_bad(kv("tcp", "max-record", "1G"), "k/K/m/M");
	parse_bad(kv("tcp", "max-record", "1kb"), "k/K/m/M");
	parse_bad(kv("tcp", "max-record", "1 k"), "bad value");
	parse_bad(kv("tcp", "max-record", "k"), "bad value");
	parse_bad(kv("tcp", "max-record", "17592186044416M"), "out of range"); /* 2^64 bytes */
	parse_bad(kv("tcp", "max-record", "18446744073709551615k"), "out of range");
	parse_ok(kv("rdma", "inline", "1k"), &cfg);
	assert_int_equal(cfg.rdma_inline, 1024);
	parse_ok(kv("rdma", "inline", "64k"), &cfg);
	assert_int_equal(cfg.rdma_inline, 65536);
	parse_bad(kv("rdma", "inline", "1M"), "out of range 1024..65536");
	parse_ok(kv("rdma", "max-payload", "16M"), &cfg);
	assert_int_equal(cfg.rdma_max_payload, 16 * 1024 * 1024);
	parse_ok(kv("rdma", "max-payload", "4k"), &cfg);
	assert_int_equal(cfg.rdma_max_payload, 4096);
	parse_bad(kv("rdma", "max-payload", "3k"), "out of range 4096..16777216");
	parse_bad(kv("rdma", "max-payload", "17M"), "out of range");
	parse_ok(kv("rdma", "buffer-pool", "4M"), &cfg);
	assert_int_equal(cfg.rdma_buffer_pool, 4 * 1024 * 1024);
	parse_ok(kv("rdma", "buffer-pool", "65536M"), &cfg);
	assert_int_equal(cfg.rdma_buffer_pool, 65536ull * 1024 * 1024);
	parse_bad(kv("rdma", "buffer-pool", "3M"), "out of range 4194304..68719476736");
	parse_bad(kv("rdma", "buffer-pool", "65537M"), "out of range");
}

/* [ceph]: names are words of letters, digits, '.', '_' and '-'; timeouts range-checked. */
static void test_ceph_section(void **state)
{
	struct rnfsd_config cfg;

	(void)state;
	parse_ok("[ceph]\nconf = /var/tmp/c/ceph.conf\nkeyring = /etc/ceph/k\nid = rnfsd.1\n"
		 "fs-name = cephfs_a-b\nmount-timeout = 5\nop-timeout = 0\n", &cfg);
	assert_string_equal(cfg.ceph_conf, "/var/tmp/c/ceph.conf");
	assert_string_equal(cfg.ceph_keyring, "/etc/ceph/k");
	assert_string_equal(cfg.ceph_id, "rnfsd.1");
	assert_string_equal(cfg.ceph_fs_name, "cephfs_a-b");
	assert_int_equal(cfg.ceph_mount_timeout, 5);
	assert_int_equal(cfg.ceph_op_timeout, 0);
	parse_bad(kv("ceph", "id", "client admin"), "only letters");
	parse_bad(kv("ceph", "fs-name", "a/b"), "only letters");
	parse_bad(kv("ceph", "id", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), "1..63");
	parse_bad(kv("ceph", "conf", "ceph.conf"), "not an absolute path");
	parse_bad(kv("ceph", "mount-timeout", "0"), "out of range 1..600");
	config_defaults(&cfg);
	assert_int_equal(cfg.ceph_mount_timeout, 30);
	assert_string_equal(cfg.ceph_id, "admin");
	assert_string_equal(cfg.ceph_fs_name, "-");
}

static void test_booleans(void **state)
{
	static const char *const yes[] = { "yes", "YES", "Yes", "true", "on", "1" };
	static const char *const no[] = { "no", "NO", "false", "off", "0" };
	struct rnfsd_config cfg;

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		parse_ok(kv("rnfsd", "rpcbind", yes[i]), &cfg);
		assert_true(cfg.rpcbind);
		parse_ok(kv("rdma", "send-invalidate", yes[i]), &cfg);
		assert_true(cfg.rdma_send_invalidate);
		parse_ok(kv("rdma", "enable", yes[i]), &cfg);
		assert_int_equal(cfg.rdma, CONFIG_YES);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		parse_ok(kv("rnfsd", "rpcbind", no[i]), &cfg);
		assert_false(cfg.rpcbind);
		parse_ok(kv("rdma", "send-invalidate", no[i]), &cfg);
		assert_false(cfg.rdma_send_invalidate);
		parse_ok(kv("rdma", "enable", no[i]), &cfg);
		assert_int_equal(cfg.rdma, CONFIG_NO);
	}
	parse_ok("[rdma]\nenable = no\n", &cfg);
	parse_ok(kv("rdma", "enable", "Auto"), &cfg);
	assert_int_equal(cfg.rdma, CONFIG_AUTO);
	parse_bad(kv("rnfsd", "rpcbind", "auto"), "expected yes or no");
	parse_bad(kv("rnfsd", "rpcbind", "maybe"), "t.conf:2: bad value 'maybe' for 'rpcbind': expected yes or no");
	parse_bad(kv("rnfsd", "rpcbind", "2"), "expected yes or no");
	parse_bad(kv("rdma", "enable", "sometimes"), "expected yes, no or auto");
	parse_bad(kv("rdma", "send-invalidate", "y"), "expected yes or no");
}

/* [nfsv4] delegations: no, read or yes; yes and no keep every spelling a bool had. */
static void test_delegations(void **state)
{
	static const char *const yes[] = { "yes", "YES", "true", "on", "1" };
	static const char *const no[] = { "no", "NO", "false", "off", "0" };
	struct rnfsd_config cfg;

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		parse_ok(kv("nfsv4", "delegations", yes[i]), &cfg);
		assert_int_equal(cfg.nfsv4_delegations, CONFIG_DELEG_YES);
		parse_ok(kv("nfsv4", "delegations", no[i]), &cfg);
		assert_int_equal(cfg.nfsv4_delegations, CONFIG_DELEG_NO);
	}
	parse_ok(kv("nfsv4", "delegations", "read"), &cfg);
	assert_int_equal(cfg.nfsv4_delegations, CONFIG_DELEG_READ);
	parse_ok(kv("nfsv4", "delegations", "Read"), &cfg);
	assert_int_equal(cfg.nfsv4_delegations, CONFIG_DELEG_READ);
	parse_bad(kv("nfsv4", "delegations", "auto"), "expected no, read or yes");
	parse_bad(kv("nfsv4", "delegations", "write"), "t.conf:2: bad value 'write' for 'delegations': expected no, read or yes");
}

static void test_paths(void **state)
{
	struct rnfsd_config cfg;
	char longpath[PATH_MAX + 16];

	(void)state;
	parse_ok(kv("rnfsd", "exports", "\"/etc/with space/exports\""), &cfg);
	assert_string_equal(cfg.exports_file, "/etc/with space/exports");
	parse_ok(kv("rnfsd", "exports", "/etc/a#b"), &cfg);
	assert_string_equal(cfg.exports_file, "/etc/a#b");
	parse_ok(kv("rnfsd", "exports", "/etc/a # comment"), &cfg);
	assert_string_equal(cfg.exports_file, "/etc/a");
	parse_ok(kv("rnfsd", "exports", "\"/etc/a ; b\" ; comment"), &cfg);
	assert_string_equal(cfg.exports_file, "/etc/a ; b");
	parse_bad(kv("rnfsd", "exports", "etc/exports"), "t.conf:2: bad value 'etc/exports' for 'exports': not an absolute path");
	parse_bad(kv("rnfsd", "state-dir", "relative"), "not an absolute path");
	parse_bad(kv("rnfsd", "exports", "\"\""), "missing value");

	/* Longest accepted path is PATH_MAX - 1. */
	memset(longpath, 'a', sizeof(longpath));
	longpath[0] = '/';
	longpath[PATH_MAX - 1] = '\0';
	parse_ok(kv("rnfsd", "state-dir", longpath), &cfg);
	assert_int_equal(strlen(cfg.state_dir), PATH_MAX - 1);
	longpath[PATH_MAX - 1] = 'a';
	longpath[PATH_MAX] = '\0';
	{
		char *doc = malloc(2 * PATH_MAX);

		assert_non_null(doc);
		snprintf(doc, 2 * PATH_MAX, "[rnfsd]\nstate-dir = %s\n", longpath);
		parse_bad(doc, "longer than 4095 bytes");
		free(doc);
	}

	/* A unix socket path must fit sun_path (108 bytes with the NUL). */
	memset(longpath, 'b', 107);
	longpath[0] = '/';
	longpath[107] = '\0';
	parse_ok(kv("rnfsd", "stats-socket", longpath), &cfg);
	longpath[107] = 'b';
	longpath[108] = '\0';
	parse_bad(kv("rnfsd", "stats-socket", longpath), "longer than 107 bytes");
}

static void test_listen_values(void **state)
{
	struct rnfsd_config cfg;
	char many[512] = "";

	(void)state;
	parse_ok(kv("tcp", "listen", "127.0.0.1"), &cfg);
	assert_int_equal(cfg.n_tcp_listen, 1);
	assert_string_equal(cfg.tcp_listen[0].addr, "127.0.0.1");
	assert_int_equal(cfg.tcp_listen[0].port, 2049);
	parse_ok(kv("tcp", "listen", "::1"), &cfg);
	assert_string_equal(cfg.tcp_listen[0].addr, "::1");
	assert_int_equal(cfg.tcp_listen[0].port, 2049);
	parse_ok(kv("tcp", "listen", "[0:0::0:0]:1,[::FFFF:192.0.2.1]:65535"), &cfg);
	assert_int_equal(cfg.n_tcp_listen, 2);
	assert_string_equal(cfg.tcp_listen[0].addr, "::");
	assert_int_equal(cfg.tcp_listen[0].port, 1);
	assert_string_equal(cfg.tcp_listen[1].addr, "::ffff:192.0.2.1");
	assert_int_equal(cfg.tcp_listen[1].port, 65535);
	parse_ok(kv("rdma", "listen", "192.0.2.1 , 192.0.2.2:20050"), &cfg);
	assert_int_equal(cfg.n_rdma_listen, 2);
	assert_int_equal(cfg.rdma_listen[0].port, 20049);
	assert_int_equal(cfg.rdma_listen[1].port, 20050);

	for (int i = 0; i < CONFIG_MAX_LISTEN; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s192.0.2.%d", i ? "," : "", i + 1);
	parse_ok(kv("tcp", "listen", many), &cfg);
	assert_int_equal(cfg.n_tcp_listen, CONFIG_MAX_LISTEN);
	strcat(many, ",192.0.2.99");
	parse_bad(kv("tcp", "listen", many), "more than 8 addresses");

	parse_bad(kv("tcp", "listen", "192.0.2.1, 192.0.2.1:2049"), "listed twice");
	parse_bad(kv("tcp", "listen", "[::]:2049, [0::0]"), "listed twice");
	parse_bad(kv("tcp", "listen", "192.0.2.1,,192.0.2.2"), "empty address");
	parse_bad(kv("tcp", "listen", "192.0.2.1,"), "empty address");
	parse_bad(kv("tcp", "listen", "localhost"), "'localhost' is not ADDRESS[:PORT]");
	parse_bad(kv("tcp", "listen", "192.0.2.1:0"), "is not ADDRESS");
	parse_bad(kv("tcp", "listen", "192.0.2.1:65536"), "is not ADDRESS");
	parse_bad(kv("tcp", "listen", "192.0.2.1:"), "is not ADDRESS");
	parse_bad(kv("tcp", "listen", "192.0.2.1:x"), "is not ADDRESS");
	parse_bad(kv("tcp", "listen", "192.0.2.256"), "is not ADDRESS");
	parse_bad(kv("tcp", "listen", "[192.0.2.1]:1"), "is not ADDRESS");
	parse_bad(kv("tcp", "listen", "[::1"), "is not ADDRESS");
	parse_bad(kv("tcp", "listen", "[::1]x"), "is not ADDRESS");
	parse_bad(kv("tcp", "listen", "[]:1"), "is not ADDRESS");
	parse_bad(kv("tcp", "listen", ":2049"), "is not ADDRESS");
	parse_bad(kv("tcp", "listen", "fe80::1%eth0"), "is not ADDRESS");

	/* "optional": skipped where the host lacks the address (tcp_xprt.c decides) */
	parse_ok(kv("tcp", "listen", "192.0.2.1:3049, [::]:2049 optional,198.51.100.7\t optional"), &cfg);
	assert_int_equal(cfg.n_tcp_listen, 3);
	assert_false(cfg.tcp_listen[0].optional);
	assert_true(cfg.tcp_listen[1].optional);
	assert_string_equal(cfg.tcp_listen[1].addr, "::");
	assert_int_equal(cfg.tcp_listen[1].port, 2049);
	assert_true(cfg.tcp_listen[2].optional);
	assert_int_equal(cfg.tcp_listen[2].port, 2049);
	parse_ok(kv("rdma", "listen", "[::] optional"), &cfg);
	assert_true(cfg.rdma_listen[0].optional);
	assert_int_equal(cfg.rdma_listen[0].port, 20049);
	parse_bad(kv("tcp", "listen", "[::]:2049 optionally"), "is not ADDRESS");
	parse_bad(kv("tcp", "listen", "[::]:2049 optional x"), "is not ADDRESS");
	parse_bad(kv("tcp", "listen", "[::]:2049 required"), "is not ADDRESS");
	parse_bad(kv("tcp", "listen", "optional"), "is not ADDRESS");
	parse_bad(kv("tcp", "listen", "[::]:2049, [::]:2049 optional"), "listed twice");
}

static void test_parse_listen_direct(void **state)
{
	struct config_listen l;
	char big[256];

	(void)state;
	assert_int_equal(config_parse_listen("0.0.0.0:2049", 1, &l), 0);
	assert_string_equal(l.addr, "0.0.0.0");
	assert_int_equal(l.port, 2049);
	assert_int_equal(config_parse_listen("[::]:2049", 1, &l), 0);
	assert_string_equal(l.addr, "::");
	assert_int_equal(config_parse_listen("192.0.2.1", 77, &l), 0);
	assert_int_equal(l.port, 77);
	assert_int_equal(config_parse_listen("[2001:DB8:0:0:0:0:0:1]", 5, &l), 0);
	assert_string_equal(l.addr, "2001:db8::1");
	assert_int_equal(l.port, 5);
	assert_int_equal(config_parse_listen("", 1, &l), -1);
	assert_int_equal(config_parse_listen(NULL, 1, &l), -1);
	assert_int_equal(config_parse_listen(" 1.2.3.4", 1, &l), -1);
	assert_false(l.optional);
	assert_int_equal(config_parse_listen("[::1]:2049\toptional ", 1, &l), 0); /* --listen '...' */
	assert_true(l.optional);
	assert_string_equal(l.addr, "::1");
	assert_int_equal(config_parse_listen("1.2.3.4 optional", 9, &l), 0);
	assert_true(l.optional);
	assert_int_equal(l.port, 9);
	assert_int_equal(config_parse_listen("1.2.3.4", 9, &l), 0);
	assert_false(l.optional);
	assert_int_equal(config_parse_listen("1.2.3.4 OPTIONAL", 9, &l), -1);
	assert_int_equal(config_parse_listen("1.2.3.4 ", 9, &l), -1);
	assert_int_equal(config_parse_listen("1.2.3.4:99999999999999999999", 1, &l), -1);
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(config_parse_listen(big, 1, &l), -1);
	big[0] = '[';
	assert_int_equal(config_parse_listen(big, 1, &l), -1);
}

static void test_syntax_errors(void **state)
{
	(void)state;
	parse_bad("[nfsd]\n", "t.conf:1: unknown section [nfsd]");
	parse_bad("\n\n[rnfsd\n", "t.conf:3: section header without ']'");
	parse_bad("[rnfsd] x\n", "t.conf:1: text after section header");
	parse_bad("[]\n", "unknown section []");
	parse_bad("threads = 4\n", "t.conf:1: key 'threads' before the first [section]");
	parse_bad("[rnfsd]\nthreads 4\n", "t.conf:2: expected 'key = value' or '[section]'");
	parse_bad("[rnfsd]\n= 4\n", "t.conf:2: missing key before '='");
	parse_bad("[rnfsd]\nthreads =\n", "t.conf:2: missing value for 'threads'");
	parse_bad("[rnfsd]\nthreads = # nothing\n", "missing value for 'threads'");
	parse_bad("[rnfsd]\nbogus = 1\n", "t.conf:2: unknown key 'bogus' in [rnfsd]");
	parse_bad("[rnfsd]\nstate_dir = /x\n", "unknown key 'state_dir' in [rnfsd] (did you mean 'state-dir'?)");
	parse_bad("[tcp]\nthreads = 4\n", "unknown key 'threads' in [tcp]");
	parse_bad("[rdma]\nmax-record = 1M\n", "unknown key 'max-record' in [rdma]");
	parse_bad("[rnfsd]\nthreads = 4\n\nthreads = 5\n",
		  "t.conf:4: duplicate key 'threads' in [rnfsd] (first set at line 2)");
	parse_bad("[rnfsd]\nthreads = 4\n[tcp]\n[rnfsd]\nTHREADS = 5\n", "t.conf:5: duplicate key 'threads'");
	parse_bad("[rnfsd]\nexports = \"/a\n", "t.conf:2: unterminated quoted value");
	parse_bad("[rnfsd]\nexports = \"/a\" b\n", "t.conf:2: text after quoted value");
	parse_bad("[rnfsd]\nthreads = 4 5\n", "bad value '4 5'");
}

static void test_syntax_accepted(void **state)
{
	struct rnfsd_config cfg;

	(void)state;
	/* Same key name in different sections is not a duplicate. */
	parse_ok("[tcp]\nlisten = 192.0.2.1\n[rdma]\nlisten = 192.0.2.1\n", &cfg);
	/* Case-insensitive names, blanks, CRLF, inline comments, repeated sections. */
	parse_ok("  [ RNFSD ]  # c\r\n\tThreads\t=\t16\t; c\r\n[tcp]\r\n[rnfsd]\r\nrpcbind=off\r\n", &cfg);
	assert_int_equal(cfg.threads, 16);
	assert_false(cfg.rpcbind);
	/* Last line without newline. */
	parse_ok("[rdma]\ncredits = 1", &cfg);
	assert_int_equal(cfg.rdma_credits, 1);
	parse_ok("[rdma]\ncredits = \"1024\"", &cfg);
	assert_int_equal(cfg.rdma_credits, 1024);
}

static void test_failed_parse_keeps_config(void **state)
{
	struct rnfsd_config cfg, copy;

	(void)state;
	parse_ok("[rnfsd]\nthreads = 3\n", &cfg);
	copy = cfg;
	assert_int_equal(config_parse("[rnfsd]\nthreads = 5\nrpcbind = no\nbogus = 1\n", "x", &cfg, err,
				      sizeof(err)), -1);
	assert_memory_equal(&cfg, &copy, sizeof(cfg));
	/* Values given earlier stay when a second file (or string) is applied on top. */
	assert_int_equal(config_parse("[rdma]\ncredits = 9\n", "x", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.threads, 3);
	assert_int_equal(cfg.rdma_credits, 9);
}

static void test_small_error_buffers(void **state)
{
	struct rnfsd_config cfg;
	char tiny[8];

	(void)state;
	config_defaults(&cfg);
	memset(tiny, 'x', sizeof(tiny));
	assert_int_equal(config_parse("[bad]\n", "a-rather-long-file-name.conf", &cfg, tiny, sizeof(tiny)), -1);
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
	assert_int_equal(config_parse("[bad]\n", "f", &cfg, tiny, 1), -1);
	assert_int_equal(tiny[0], '\0');
	assert_int_equal(config_parse("[bad]\n", NULL, &cfg, NULL, 0), -1);
	assert_int_equal(config_load("/nonexistent/rnfsd.conf", &cfg, NULL, 0), -1);
}

static void test_long_and_garbage_lines(void **state)
{
	size_t n = 1 << 20;
	char *big = malloc(n + 64);
	struct rnfsd_config cfg;
	unsigned seed = 12345;

	(void)state;
	assert_non_null(big);
	/* A 1 MiB line without '='. */
	memset(big, 'x', n);
	big[n] = '\0';
	parse_bad(big, "t.conf:1: expected 'key = value'");
	/* A 1 MiB value. */
	memcpy(big, "[rnfsd]\nexports = /", 19);
	parse_bad(big, "longer than 4095 bytes");
	/* A 1 MiB number. */
	memset(big, '9', n);
	memcpy(big, "[rnfsd]\nthreads = ", 18);
	parse_bad(big, "bad value");
	/* A 1 MiB section name. */
	memset(big, 'a', n);
	big[0] = '[';
	big[n - 1] = ']';
	parse_bad(big, "unknown section");

	/* Random bytes from the config alphabet: any result, never a crash or overrun. */
	for (int round = 0; round < 20000; round++) {
		static const char alpha[] = "[]=#;\"\n\r\t ,:.0123456789kKmMabcdefghijklmnopqrstuvwxyz-_/";
		size_t len = (size_t)(rand_r(&seed) % 200);

		for (size_t i = 0; i < len; i++)
			big[i] = alpha[rand_r(&seed) % (sizeof(alpha) - 1)];
		big[len] = '\0';
		config_defaults(&cfg);
		(void)config_parse(big, "fuzz", &cfg, err, sizeof(err));
	}
	/* Mutations of a valid file. */
	for (int round = 0; round < 20000; round++) {
		static const char good[] = "[rnfsd]\nthreads = 8\nexports = /etc/e\n[tcp]\nlisten = [::]:2049, "
					   "0.0.0.0\nmax-record = 1M\n[rdma]\nenable = auto\ncredits = 128\n";
		static const char alpha[] = "[]=#;\"\n ,:.09kMa-/";

		memcpy(big, good, sizeof(good));
		for (int m = 0; m < 3; m++)
			big[rand_r(&seed) % (sizeof(good) - 1)] = alpha[rand_r(&seed) % (sizeof(alpha) - 1)];
		config_defaults(&cfg);
		(void)config_parse(big, "fuzz", &cfg, err, sizeof(err));
	}
	free(big);
}

/* Writes text to a fresh temporary file; returns its path (static buffer). */
static const char *write_temp(const void *data, size_t len)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/rnfsd-conf-test-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	return path;
}

static const char *write_temp_str(const char *text)
{
	return write_temp(text, strlen(text));
}

static void test_load_files(void **state)
{
	struct rnfsd_config cfg;
	const char *path;
	char want[128];
	char *big;

	(void)state;
	config_defaults(&cfg);
	assert_int_equal(config_load("/nonexistent/rnfsd.conf", &cfg, err, sizeof(err)), -1);
	assert_string_equal(err, "/nonexistent/rnfsd.conf: No such file or directory");

	path = write_temp_str("[rnfsd]\nthreads = 2\n[tcp]\nmax-record = 64k\n");
	assert_int_equal(config_load(path, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.threads, 2);
	assert_int_equal(cfg.max_record, 65536);
	unlink(path);

	path = write_temp_str("[rnfsd]\n\nthreads = 0\n");
	assert_int_equal(config_load(path, &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s:3: bad value '0' for 'threads': out of range 1..256", path);
	assert_string_equal(err, want);
	unlink(path);

	path = write_temp("[rnfsd]\n\0threads = 2\n", 21);
	assert_int_equal(config_load(path, &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "NUL byte"));
	unlink(path);

	big = calloc(1, 1024 * 1024 + 2);
	assert_non_null(big);
	memset(big, '#', 1024 * 1024 + 1);
	path = write_temp(big, 1024 * 1024 + 1);
	assert_int_equal(config_load(path, &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "file too large"));
	unlink(path);
	free(big);

	assert_int_equal(config_load("/", &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/: "));
}

/* [pnfs] data-servers: transports, default ports, IPv6, and what is refused. */
static void test_pnfs_data_servers(void **state)
{
	struct rnfsd_config cfg;
	struct config_ds ds;

	(void)state;
	config_defaults(&cfg);
	assert_int_equal(cfg.n_pnfs_ds, 0);
	assert_int_equal(cfg.pnfs_ds_unavailable, 60);
	parse_ok("[pnfs]\ndata-servers = 192.0.2.1, 192.0.2.2:3049/tcp, [2001:db8::1]/rdma, "
		 "2001:db8::2/tcp\nds-unavailable-seconds = 5\n", &cfg);
	assert_int_equal(cfg.n_pnfs_ds, 4);
	assert_string_equal(cfg.pnfs_ds[0].addr, "192.0.2.1");
	assert_int_equal(cfg.pnfs_ds[0].port, 2049);
	assert_false(cfg.pnfs_ds[0].rdma);
	assert_int_equal(cfg.pnfs_ds[1].port, 3049);
	assert_string_equal(cfg.pnfs_ds[2].addr, "2001:db8::1");
	assert_int_equal(cfg.pnfs_ds[2].port, 20049);
	assert_true(cfg.pnfs_ds[2].rdma);
	assert_string_equal(cfg.pnfs_ds[3].addr, "2001:db8::2");
	assert_false(cfg.pnfs_ds[3].rdma);
	assert_int_equal(cfg.pnfs_ds_unavailable, 5);
	/* The same address over both transports is two data servers. */
	parse_ok(kv("pnfs", "data-servers", "192.0.2.1/tcp, 192.0.2.1:2049/rdma"), &cfg);
	assert_int_equal(cfg.n_pnfs_ds, 2);
	parse_bad(kv("pnfs", "data-servers", "192.0.2.1, 192.0.2.1:2049/tcp"), "listed twice");
	parse_bad(kv("pnfs", "data-servers", "192.0.2.1/udp"), "not ADDRESS[:PORT][/tcp|/rdma]");
	parse_bad(kv("pnfs", "data-servers", "192.0.2.1/"), "bad value");
	parse_bad(kv("pnfs", "data-servers", "0.0.0.0"), "bad value");
	parse_bad(kv("pnfs", "data-servers", "[::]:2049/rdma"), "bad value");
	parse_bad(kv("pnfs", "data-servers", "host.example.com"), "bad value");
	parse_bad(kv("pnfs", "data-servers", "192.0.2.1,,192.0.2.2"), "empty data server");
	parse_bad(kv("pnfs", "data-servers", "1.1.1.1,1.1.1.2,1.1.1.3,1.1.1.4,1.1.1.5,1.1.1.6,1.1.1.7,1.1.1.8,1.1.1.9"),
		  "more than 8 data servers");
	parse_bad(kv("pnfs", "data-servers", "192.0.2.1:0"), "bad value");
	assert_int_equal(config_parse_ds("[2001:db8::1]:7/rdma", &ds), 0);
	assert_int_equal(ds.port, 7);
	assert_int_equal(config_parse_ds("192.0.2.1/rdma/tcp", &ds), -1);
	assert_int_equal(config_parse_ds(NULL, &ds), -1);
}

/* ---- the example file and the man page agree with the code ---- */

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

static void test_example_file_loads(void **state)
{
	const char *root = getenv("RNFSD_SOURCE_ROOT");
	char path[PATH_MAX];
	struct rnfsd_config cfg, def;

	(void)state;
	assert_non_null(root);
	snprintf(path, sizeof(path), "%s/conf/rnfsd.conf.example", root);
	config_defaults(&cfg);
	config_defaults(&def);
	if (config_load(path, &cfg, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_memory_equal(&cfg, &def, sizeof(cfg)); /* everything is commented out */
}

/*
 * Uncommenting every "# key = value" line of the example must give exactly
 * the defaults, and every key must appear once: the example documents the
 * real defaults and every key.
 */
static void test_example_file_is_complete(void **state)
{
	char *text = read_source_file("conf/rnfsd.conf.example");
	struct rnfsd_config cfg, def;
	char *out = malloc(strlen(text) + 1), *o = out;
	unsigned keys = 0;

	(void)state;
	assert_non_null(out);
	for (char *line = text, *next; line; line = next) {
		char *p = line;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		/* "#key = value" or "# key = value" where key is one word followed by '=' */
		if (p[0] == '#') {
			char *q = p + 1 + (p[1] == ' ');

			if (strspn(q, "abcdefghijklmnopqrstuvwxyz-") > 0 &&
			    strncmp(q + strspn(q, "abcdefghijklmnopqrstuvwxyz-"), " = ", 3) == 0) {
				p = q;
				keys++;
			}
		}
		o += sprintf(o, "%s\n", p);
	}
	*o = '\0';
	config_defaults(&cfg);
	config_defaults(&def);
	if (config_parse(out, "uncommented example", &cfg, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(keys, config_nkeys);
	/* Paths depend on the build prefix; the example shows the packaged /etc, /var and /run. */
	if (strcmp(RNFSD_SYSCONFDIR, "/etc/rnfsd") != 0 || strcmp(RNFSD_LOCALSTATEDIR, "/var/lib/rnfsd") != 0) {
		assert_string_equal(cfg.exports_file, "/etc/rnfsd/exports");
		assert_string_equal(cfg.state_dir, "/var/lib/rnfsd");
		memcpy(cfg.exports_file, def.exports_file, sizeof(cfg.exports_file));
		memcpy(cfg.state_dir, def.state_dir, sizeof(cfg.state_dir));
	}
	assert_true(cfg.exports_named); /* records that the key was written, not a value */
	cfg.exports_named = def.exports_named;
	assert_true(cfg.grace_period_set); /* the same for grace-period */
	cfg.grace_period_set = def.grace_period_set;
	/* [stats] prometheus is off by default; the example shows the usual address. */
	assert_int_equal(cfg.n_prometheus, 1);
	assert_string_equal(cfg.prometheus[0].addr, "127.0.0.1");
	assert_int_equal(cfg.prometheus[0].port, 9587);
	memcpy(cfg.prometheus, def.prometheus, sizeof(cfg.prometheus));
	cfg.n_prometheus = def.n_prometheus;
	/* [pnfs] has no data server by default; the example shows two. */
	assert_int_equal(cfg.n_pnfs_ds, 2);
	assert_string_equal(cfg.pnfs_ds[1].addr, "192.0.2.11");
	assert_int_equal(cfg.pnfs_ds[1].port, 20049);
	assert_true(cfg.pnfs_ds[1].rdma);
	memcpy(cfg.pnfs_ds, def.pnfs_ds, sizeof(cfg.pnfs_ds));
	cfg.n_pnfs_ds = def.n_pnfs_ds;
	/* [tls] offers nothing by default; the example shows where the files usually are. */
	assert_string_equal(cfg.tls_cert, "/etc/rnfsd/tls/server.crt");
	assert_string_equal(cfg.tls_key, "/etc/rnfsd/tls/server.key");
	assert_string_equal(cfg.tls_ca, "/etc/rnfsd/tls/ca.crt");
	memcpy(cfg.tls_cert, def.tls_cert, sizeof(cfg.tls_cert));
	memcpy(cfg.tls_key, def.tls_key, sizeof(cfg.tls_key));
	memcpy(cfg.tls_ca, def.tls_ca, sizeof(cfg.tls_ca));
	assert_memory_equal(&cfg, &def, sizeof(cfg));
	free(out);
	free(text);
}

/* A number as the man page writes it. */
static void man_number(char *buf, size_t len, unsigned long long v)
{
	snprintf(buf, len, "%llu", v);
}

/* The man page's paragraph for key k in its section (from ".B name" to the next ".TP"/".SH"). */
static char *man_entry(const char *man, const struct config_key *k)
{
	char sect[64], key[96];
	const char *s, *e;
	char *out;

	snprintf(sect, sizeof(sect), ".SS \"[%s]\"", config_section_names[k->section]);
	s = strstr(man, sect);
	if (!s)
		fail_msg("man page has no section heading %s", sect);
	/* troff writes '-' in a key as "\-" (a real minus, so copy-paste works) */
	{
		size_t n = (size_t)snprintf(key, sizeof(key), "\n.B ");

		for (const char *c = k->name; *c && n + 3 < sizeof(key); c++) {
			if (*c == '-')
				key[n++] = '\\';
			key[n++] = *c;
		}
		key[n++] = '\n';
		key[n] = '\0';
	}
	s = strstr(s, key);
	if (!s)
		fail_msg("man page has no entry \"%s\" under %s", k->name, sect);
	s += strlen(key);
	e = s;
	while (*e && strncmp(e, "\n.TP", 4) != 0 && strncmp(e, "\n.SH", 4) != 0 && strncmp(e, "\n.SS", 4) != 0)
		e++;
	out = strndup(s, (size_t)(e - s));
	assert_non_null(out);
	return out;
}

/* A default path as a package built with --prefix=/usr has it (what the man page shows). */
static const char *packaged_path(const char *path)
{
	static const char *const dirs[][2] = {
		{ RNFSD_SYSCONFDIR, "/etc/rnfsd" },
		{ RNFSD_LOCALSTATEDIR, "/var/lib/rnfsd" },
		{ RNFSD_RUNSTATEDIR, "/run/rnfsd" },
	};
	static char buf[PATH_MAX];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t n = strlen(dirs[i][0]);

		if (strncmp(path, dirs[i][0], n) == 0 && (path[n] == '/' || path[n] == '\0')) {
			snprintf(buf, sizeof(buf), "%s%s", dirs[i][1], path + n);
			return buf;
		}
	}
	return path;
}

static void test_man_page_matches_code(void **state)
{
	char *man = read_source_file("docs/rnfsd.conf.5");
	struct rnfsd_config def;
	char want[PATH_MAX + 64], a[32], b[32];

	(void)state;
	config_defaults(&def);
	for (unsigned i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];
		char *entry = man_entry(man, k);
		const char *f = (const char *)&def + k->offset;

		want[0] = '\0';
		switch (k->type) {
		case CONFIG_TYPE_UINT:
		case CONFIG_TYPE_SIZE:
			man_number(a, sizeof(a), k->min);
			man_number(b, sizeof(b), k->max);
			snprintf(want, sizeof(want), "Range: %s to %s", a, b);
			if (!strstr(entry, want))
				fail_msg("man entry for %s lacks \"%s\"", k->name, want);
			man_number(a, sizeof(a), key_value(k, &def));
			snprintf(want, sizeof(want), "Default: %s", a);
			break;
		case CONFIG_TYPE_BOOL:
			snprintf(want, sizeof(want), "Default: %s", *(const bool *)f ? "yes" : "no");
			break;
		case CONFIG_TYPE_TRISTATE: {
			static const char *const ts[] = { "no", "yes", "auto" };

			snprintf(want, sizeof(want), "Default: %s", ts[*(const enum config_tristate *)f]);
			break;
		}
		case CONFIG_TYPE_DELEG: {
			static const char *const dl[] = { "no", "read", "yes" };

			snprintf(want, sizeof(want), "Default: %s", dl[*(const enum config_deleg *)f]);
			break;
		}
		case CONFIG_TYPE_LISTEN: {
			const struct config_listen *l = (const struct config_listen *)f;
			unsigned n = *(const unsigned *)((const char *)&def + k->count_offset);
			size_t off = (size_t)snprintf(want, sizeof(want), "Default: ");

			for (unsigned j = 0; j < n; j++)
				off += (size_t)snprintf(want + off, sizeof(want) - off,
							strchr(l[j].addr, ':') ? "%s[%s]:%u" : "%s%s:%u",
							j ? ", " : "", l[j].addr, l[j].port);
			break;
		}
		case CONFIG_TYPE_DS: /* no data server by default */
			assert_int_equal(*(const unsigned *)((const char *)&def + k->count_offset), 0);
			snprintf(want, sizeof(want), "Default: none");
			break;
		case CONFIG_TYPE_PATH:
			if (!*f) /* no default of rnfsd's own: the library's */
				snprintf(want, sizeof(want), "Default: none");
			else
				snprintf(want, sizeof(want), "Default:\n.IR %s .", packaged_path(f));
			break;
		case CONFIG_TYPE_NAME:
			snprintf(want, sizeof(want), "Default: %s", *f ? f : "none");
			break;
		}
		if (!strstr(entry, want))
			fail_msg("man entry for %s lacks \"%s\"", k->name, want);
		free(entry);
	}
	free(man);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_empty_and_comments),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_numeric_ranges),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_booleans),
		cmocka_unit_test(test_delegations),
		cmocka_unit_test(test_ceph_section),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_listen_values),
		cmocka_unit_test(test_parse_listen_direct),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_syntax_accepted),
		cmocka_unit_test(test_failed_parse_keeps_config),
		cmocka_unit_test(test_small_error_buffers),
		cmocka_unit_test(test_long_and_garbage_lines),
		cmocka_unit_test(test_load_files),
		cmocka_unit_test(test_pnfs_data_servers),
		cmocka_unit_test(test_example_file_loads),
		cmocka_unit_test(test_example_file_is_complete),
		cmocka_unit_test(test_man_page_matches_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
