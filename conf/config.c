/*
 * config.c - parser for /etc/rnfsd/rnfsd.conf (see config.h, rnfsd.conf(5)).
 *
 * The file is INI in the style of nfs.conf(5):
 *   - "[section]" headers; sections are rnfsd, tcp, rdma, nfsv4, ceph, stats and pnfs; a section may
 *     be opened more than once (its keys accumulate);
 *   - "key = value" lines; section and key names are case-insensitive;
 *   - lines starting with '#' or ';' are comments; in an unquoted value a
 *     '#' or ';' that follows white space starts a comment;
 *   - a value may be written in double quotes (no escapes) to keep
 *     leading/trailing blanks, '#' or ';'.
 * Every key is described once, in config_keys[] below: its section, type,
 * field and range. Parsing works on a private copy of the configuration, so
 * the caller's struct is only changed when the whole file is valid.
 *
 * Ownership: nothing here allocates anything the caller must free; the
 * text buffers used while parsing are freed before returning.
 */
#include "conf/conf_file.h"
#include "conf/config.h"
#include "conf/config_internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "rnfsd_build.h"

/* A configuration file larger than this is certainly a mistake. */
#define CONFIG_MAX_FILE_SIZE (1024 * 1024)

#define KiB 1024ull
#define MiB (1024ull * 1024ull)

#define FIELD(f) offsetof(struct rnfsd_config, f)
#define SUN_PATH_SIZE sizeof(((struct sockaddr_un *)0)->sun_path)

const char *const config_section_names[CONFIG_SECTION_COUNT] = {
	[CONFIG_SECTION_RNFSD] = "rnfsd",
	[CONFIG_SECTION_TCP] = "tcp",
	[CONFIG_SECTION_RDMA] = "rdma",
	[CONFIG_SECTION_NFSV4] = "nfsv4",
	[CONFIG_SECTION_CEPH] = "ceph",
	[CONFIG_SECTION_STATS] = "stats",
	[CONFIG_SECTION_PNFS] = "pnfs",
	[CONFIG_SECTION_TLS] = "tls",
};

/* Every key, its field and its range; the man page documents the same. */
const struct config_key config_keys[] = {
	{ CONFIG_SECTION_RNFSD, "threads", CONFIG_TYPE_UINT, FIELD(threads), 0, 1, 256 },
	{ CONFIG_SECTION_RNFSD, "loops", CONFIG_TYPE_UINT, FIELD(loops), 0, 0, 64 },
	{ CONFIG_SECTION_RNFSD, "inline-calls", CONFIG_TYPE_BOOL, FIELD(inline_calls), 0, 0, 0 },
	{ CONFIG_SECTION_RNFSD, "uring-calls", CONFIG_TYPE_BOOL, FIELD(uring_calls), 0, 0, 0 },
	{ CONFIG_SECTION_RNFSD, "uring-personalities", CONFIG_TYPE_UINT, FIELD(uring_personalities), 0, 1, 65535 },
	{ CONFIG_SECTION_RNFSD, "exports", CONFIG_TYPE_PATH, FIELD(exports_file), 0, 0, PATH_MAX },
	{ CONFIG_SECTION_RNFSD, "state-dir", CONFIG_TYPE_PATH, FIELD(state_dir), 0, 0, PATH_MAX },
	{ CONFIG_SECTION_RNFSD, "stats-socket", CONFIG_TYPE_PATH, FIELD(stats_socket), 0, 0, SUN_PATH_SIZE },
	{ CONFIG_SECTION_RNFSD, "rpcbind", CONFIG_TYPE_BOOL, FIELD(rpcbind), 0, 0, 0 },
	{ CONFIG_SECTION_RNFSD, "rpcbind-replace", CONFIG_TYPE_BOOL, FIELD(rpcbind_replace), 0, 0, 0 },
	{ CONFIG_SECTION_RNFSD, "drc-entries", CONFIG_TYPE_UINT, FIELD(drc_entries), 0, 1, 1048576 },
	{ CONFIG_SECTION_RNFSD, "max-connections", CONFIG_TYPE_UINT, FIELD(max_connections), 0, 1, 65536 },
	{ CONFIG_SECTION_RNFSD, "nlm", CONFIG_TYPE_BOOL, FIELD(nlm), 0, 0, 0 },
	{ CONFIG_SECTION_RNFSD, "nlm-udp-port", CONFIG_TYPE_UINT, FIELD(nlm_udp_port), 0, 0, 65535 },
	{ CONFIG_SECTION_RNFSD, "grace-period", CONFIG_TYPE_UINT, FIELD(grace_period), 0, 0, 3600 },
	{ CONFIG_SECTION_RNFSD, "reboot-notify", CONFIG_TYPE_BOOL, FIELD(reboot_notify), 0, 0, 0 },
	{ CONFIG_SECTION_RNFSD, "keytab", CONFIG_TYPE_PATH, FIELD(keytab), 0, 0, PATH_MAX },
	{ CONFIG_SECTION_RNFSD, "gss-host-root", CONFIG_TYPE_BOOL, FIELD(gss_host_root), 0, 0, 0 },
	{ CONFIG_SECTION_RNFSD, "gss-contexts", CONFIG_TYPE_UINT, FIELD(gss_contexts), 0, 16, 1048576 },
	{ CONFIG_SECTION_RNFSD, "gss-contexts-per-client", CONFIG_TYPE_UINT, FIELD(gss_contexts_per_client), 0, 1, 1048576 },
	{ CONFIG_SECTION_RNFSD, "statd-dir", CONFIG_TYPE_PATH, FIELD(statd_dir), 0, 0, PATH_MAX },
	{ CONFIG_SECTION_RNFSD, "lock-descriptions", CONFIG_TYPE_UINT, FIELD(lock_descriptions), 0, 0, 1048576 },
	{ CONFIG_SECTION_RNFSD, "nlm-locks-per-host", CONFIG_TYPE_UINT, FIELD(nlm_locks_per_host), 0, 0, 1048576 },

	{ CONFIG_SECTION_TCP, "listen", CONFIG_TYPE_LISTEN, FIELD(tcp_listen), FIELD(n_tcp_listen), 2049, 0 },
	{ CONFIG_SECTION_TCP, "max-record", CONFIG_TYPE_SIZE, FIELD(max_record), 0, 8 * KiB, 64 * MiB },
	{ CONFIG_SECTION_TCP, "max-calls", CONFIG_TYPE_UINT, FIELD(tcp_max_calls), 0, 0, 65536 },
	{ CONFIG_SECTION_TCP, "conn-max-calls", CONFIG_TYPE_UINT, FIELD(tcp_conn_max_calls), 0, 0, 65536 },
	{ CONFIG_SECTION_TCP, "record-timeout", CONFIG_TYPE_UINT, FIELD(tcp_record_timeout), 0, 1, 3600 },
	{ CONFIG_SECTION_TCP, "send-timeout", CONFIG_TYPE_UINT, FIELD(tcp_send_timeout), 0, 1, 3600 },
	{ CONFIG_SECTION_TCP, "idle-timeout", CONFIG_TYPE_UINT, FIELD(tcp_idle_timeout), 0, 0, 86400 },

	{ CONFIG_SECTION_RDMA, "enable", CONFIG_TYPE_TRISTATE, FIELD(rdma), 0, 0, 0 },
	{ CONFIG_SECTION_RDMA, "listen", CONFIG_TYPE_LISTEN, FIELD(rdma_listen), FIELD(n_rdma_listen), 20049, 0 },
	{ CONFIG_SECTION_RDMA, "credits", CONFIG_TYPE_UINT, FIELD(rdma_credits), 0, 1, 1024 },
	{ CONFIG_SECTION_RDMA, "initial-credits", CONFIG_TYPE_UINT, FIELD(rdma_initial_credits), 0, 0, 1024 },
	{ CONFIG_SECTION_RDMA, "inline", CONFIG_TYPE_SIZE, FIELD(rdma_inline), 0, 1024, 65536 },
	{ CONFIG_SECTION_RDMA, "max-payload", CONFIG_TYPE_SIZE, FIELD(rdma_max_payload), 0, 4 * KiB, 16 * MiB },
	{ CONFIG_SECTION_RDMA, "send-invalidate", CONFIG_TYPE_BOOL, FIELD(rdma_send_invalidate), 0, 0, 0 },
	{ CONFIG_SECTION_RDMA, "buffer-pool", CONFIG_TYPE_SIZE, FIELD(rdma_buffer_pool), 0, 4 * MiB, 65536 * MiB },

	{ CONFIG_SECTION_NFSV4, "enable", CONFIG_TYPE_BOOL, FIELD(nfsv4), 0, 0, 0 },
	{ CONFIG_SECTION_NFSV4, "grace-time", CONFIG_TYPE_UINT, FIELD(nfsv4_grace_time), 0, 0, 3600 },
	{ CONFIG_SECTION_NFSV4, "lease-time", CONFIG_TYPE_UINT, FIELD(nfsv4_lease_time), 0, 10, 3600 },
	{ CONFIG_SECTION_NFSV4, "delegations", CONFIG_TYPE_DELEG, FIELD(nfsv4_delegations), 0, 0, 0 },
	{ CONFIG_SECTION_NFSV4, "directory-delegations", CONFIG_TYPE_BOOL, FIELD(nfsv4_dir_delegations), 0, 0, 0 },
	{ CONFIG_SECTION_NFSV4, "max-clients", CONFIG_TYPE_UINT, FIELD(nfsv4_max_clients), 0, 16, 4096 },
	{ CONFIG_SECTION_NFSV4, "max-clients-per-host", CONFIG_TYPE_UINT, FIELD(nfsv4_max_clients_per_host), 0, 0, 4096 },
	{ CONFIG_SECTION_NFSV4, "max-clients-per-principal", CONFIG_TYPE_UINT, FIELD(nfsv4_max_clients_per_principal), 0,
	  0, 4096 },
	{ CONFIG_SECTION_NFSV4, "reply-cache-size", CONFIG_TYPE_SIZE, FIELD(nfsv4_reply_cache_size), 0, 1 * MiB,
	  4096 * MiB },
	{ CONFIG_SECTION_NFSV4, "max-open-files", CONFIG_TYPE_UINT, FIELD(nfsv4_max_open_files), 0, 0, 1048576 },
	{ CONFIG_SECTION_NFSV4, "max-open-files-per-client", CONFIG_TYPE_UINT, FIELD(nfsv4_max_open_files_per_client),
	  0, 0, 1048576 },
	{ CONFIG_SECTION_NFSV4, "max-lock-owners-per-client", CONFIG_TYPE_UINT,
	  FIELD(nfsv4_max_lock_owners_per_client), 0, 0, 1048576 },
	{ CONFIG_SECTION_NFSV4, "copy-workers", CONFIG_TYPE_UINT, FIELD(nfsv4_copy_workers), 0, 0, 256 },
	{ CONFIG_SECTION_NFSV4, "copy-workers-per-client", CONFIG_TYPE_UINT, FIELD(nfsv4_copy_workers_per_client), 0, 1, 256 },
	{ CONFIG_SECTION_NFSV4, "idmap", CONFIG_TYPE_NAME, FIELD(nfsv4_idmap), 0, 0, 16 },
	{ CONFIG_SECTION_NFSV4, "domain", CONFIG_TYPE_NAME, FIELD(nfsv4_domain), 0, 0, 256 },

	{ CONFIG_SECTION_CEPH, "conf", CONFIG_TYPE_PATH, FIELD(ceph_conf), 0, 0, PATH_MAX },
	{ CONFIG_SECTION_CEPH, "keyring", CONFIG_TYPE_PATH, FIELD(ceph_keyring), 0, 0, PATH_MAX },
	{ CONFIG_SECTION_CEPH, "id", CONFIG_TYPE_NAME, FIELD(ceph_id), 0, 0, 64 },
	{ CONFIG_SECTION_CEPH, "fs-name", CONFIG_TYPE_NAME, FIELD(ceph_fs_name), 0, 0, 64 },
	{ CONFIG_SECTION_CEPH, "mount-timeout", CONFIG_TYPE_UINT, FIELD(ceph_mount_timeout), 0, 1, 600 },
	{ CONFIG_SECTION_CEPH, "op-timeout", CONFIG_TYPE_UINT, FIELD(ceph_op_timeout), 0, 0, 3600 },

	/* One address (main refuses more): the Prometheus page, default port 9587 (ganesha's exporter's). */
	{ CONFIG_SECTION_STATS, "prometheus", CONFIG_TYPE_LISTEN, FIELD(prometheus), FIELD(n_prometheus), 9587, 0 },
	/* The page's busiest-clients families (core/stats.h STATS_TOP_CLIENTS_MAX); 0: none. */
	{ CONFIG_SECTION_STATS, "prometheus-top-clients", CONFIG_TYPE_UINT, FIELD(prometheus_top_clients), 0, 0, 20 },
	{ CONFIG_SECTION_CEPH, "max-calls", CONFIG_TYPE_UINT, FIELD(ceph_max_calls), 0, 0, 256 },

	{ CONFIG_SECTION_PNFS, "data-servers", CONFIG_TYPE_DS, FIELD(pnfs_ds), FIELD(n_pnfs_ds), 0, 0 },
	{ CONFIG_SECTION_PNFS, "ds-unavailable-seconds", CONFIG_TYPE_UINT, FIELD(pnfs_ds_unavailable), 0, 0, 3600 },

	/* RPC-with-TLS over TCP (RFC 9289): no certificate, no TLS offered. */
	{ CONFIG_SECTION_TLS, "certificate", CONFIG_TYPE_PATH, FIELD(tls_cert), 0, 0, PATH_MAX },
	{ CONFIG_SECTION_TLS, "key", CONFIG_TYPE_PATH, FIELD(tls_key), 0, 0, PATH_MAX },
	{ CONFIG_SECTION_TLS, "ca", CONFIG_TYPE_PATH, FIELD(tls_ca), 0, 0, PATH_MAX },
};
const unsigned config_nkeys = sizeof(config_keys) / sizeof(config_keys[0]);

static void set_listen(struct config_listen *l, const char *addr, uint16_t port)
{
	snprintf(l->addr, sizeof(l->addr), "%s", addr);
	l->port = port;
}

void config_defaults(struct rnfsd_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->threads = 8;
	cfg->loops = 1;
	cfg->inline_calls = true;
	cfg->uring_personalities = 256;
	snprintf(cfg->exports_file, sizeof(cfg->exports_file), "%s/exports", RNFSD_SYSCONFDIR);
	snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%s", RNFSD_LOCALSTATEDIR);
	snprintf(cfg->stats_socket, sizeof(cfg->stats_socket), "%s/rnfsd.sock", RNFSD_RUNSTATEDIR);
	cfg->rpcbind = true;
	cfg->nlm = true;
	cfg->grace_period = 90; /* knfsd's; only when clients may reclaim, unless set (grace_period_set) */
	cfg->reboot_notify = true;
	snprintf(cfg->statd_dir, sizeof(cfg->statd_dir), "/var/lib/nfs");
	snprintf(cfg->keytab, sizeof(cfg->keytab), "/etc/krb5.keytab");
	cfg->gss_contexts = 4096;
	cfg->gss_contexts_per_client = 256;
	cfg->drc_entries = 4096;
	cfg->max_connections = 1024;

	set_listen(&cfg->tcp_listen[0], "0.0.0.0", 2049);
	set_listen(&cfg->tcp_listen[1], "::", 2049);
	cfg->tcp_listen[1].optional = true; /* a host without IPv6 still starts */
	cfg->n_tcp_listen = 2;
	cfg->max_record = 1 * MiB + 64 * KiB;
	cfg->tcp_record_timeout = 30;
	cfg->tcp_send_timeout = 60;
	cfg->tcp_idle_timeout = 360; /* knfsd's: svc_age_temp_xprts every 6 minutes */

	cfg->rdma = CONFIG_AUTO;
	set_listen(&cfg->rdma_listen[0], "0.0.0.0", 20049);
	cfg->n_rdma_listen = 1;
	cfg->rdma_credits = 128;
	cfg->rdma_initial_credits = 8;
	cfg->rdma_inline = 4096;
	cfg->rdma_max_payload = 1 * MiB;
	cfg->rdma_send_invalidate = true;
	cfg->rdma_buffer_pool = 256 * MiB;

	cfg->nfsv4 = true; /* issue 10: NFSv4.0-4.2 offered, so a default Linux mount gets 4.2 */
	cfg->nfsv4_grace_time = 90; /* RFC 8881 §8.4.2: at least one lease */
	cfg->nfsv4_lease_time = 90;
	/* Read only: a write holder's locks are its own until the recall, and
	 * pushing them lets go of the write lease (rnfsd.conf(5)). */
	cfg->nfsv4_delegations = CONFIG_DELEG_READ;
	cfg->nfsv4_dir_delegations = false; /* local changes of a directory are seen after the fact (rnfsd.conf(5)) */
	cfg->nfsv4_max_clients = 4096; /* NFS4_STATE_MAX_CLIENTS */
	cfg->nfsv4_copy_workers = 0; /* a quarter of the threads, at least 1 */
	cfg->nfsv4_copy_workers_per_client = 1;
	cfg->nfsv4_reply_cache_size = 64 * MiB; /* NFS4_STATE_CACHE_TOTAL */
	snprintf(cfg->nfsv4_idmap, sizeof(cfg->nfsv4_idmap), "numeric");
	snprintf(cfg->nfsv4_domain, sizeof(cfg->nfsv4_domain), "-");

	snprintf(cfg->ceph_conf, sizeof(cfg->ceph_conf), "/etc/ceph/ceph.conf");
	snprintf(cfg->ceph_keyring, sizeof(cfg->ceph_keyring), "/etc/ceph/ceph.$name.keyring");
	snprintf(cfg->ceph_id, sizeof(cfg->ceph_id), "admin");
	snprintf(cfg->ceph_fs_name, sizeof(cfg->ceph_fs_name), "-");
	cfg->ceph_mount_timeout = 30;
	cfg->ceph_op_timeout = 30;

	cfg->pnfs_ds_unavailable = 60;
}

/* ---- value parsers: 0, or -1 with a reason in why ---- */

/* Decimal digits only (no sign, no blanks); *end gets the first non-digit. */
static int parse_decimal(const char *s, unsigned long long *out, const char **end)
{
	unsigned long long v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (ULLONG_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	*end = p;
	return 0;
}

static int parse_number(const struct config_key *k, const char *s, unsigned long long *out,
			char *why, size_t whylen)
{
	unsigned long long v, mult = 1;
	const char *end;

	if (parse_decimal(s, &v, &end) < 0) {
		snprintf(why, whylen, "not a decimal number (or too large)");
		return -1;
	}
	if (k->type == CONFIG_TYPE_SIZE && *end != '\0') {
		if (*end == 'k' || *end == 'K')
			mult = KiB;
		else if (*end == 'm' || *end == 'M')
			mult = MiB;
		else
			mult = 0;
		if (mult)
			end++;
	}
	if (*end != '\0' || mult == 0) {
		snprintf(why, whylen, k->type == CONFIG_TYPE_SIZE ?
			 "expected a number with an optional k/K/m/M suffix" : "not a decimal number");
		return -1;
	}
	if (v > ULLONG_MAX / mult || v * mult < k->min || v * mult > k->max) {
		snprintf(why, whylen, "out of range %llu..%llu", k->min, k->max);
		return -1;
	}
	*out = v * mult;
	return 0;
}

static int parse_tristate(const char *s, enum config_tristate *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = CONFIG_YES;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = CONFIG_NO;
			return 0;
		}
	}
	if (strcasecmp(s, "auto") == 0) {
		*out = CONFIG_AUTO;
		return 0;
	}
	return -1;
}

/* [nfsv4] delegations: "read", or a bool (yes: read and write). */
static int parse_deleg(const char *s, enum config_deleg *out)
{
	enum config_tristate ts;

	if (strcasecmp(s, "read") == 0) {
		*out = CONFIG_DELEG_READ;
		return 0;
	}
	if (parse_tristate(s, &ts) < 0 || ts == CONFIG_AUTO)
		return -1;
	*out = ts == CONFIG_YES ? CONFIG_DELEG_YES : CONFIG_DELEG_NO;
	return 0;
}

static int parse_path(const struct config_key *k, const char *s, char *field, char *why, size_t whylen)
{
	if (s[0] != '/') {
		snprintf(why, whylen, "not an absolute path");
		return -1;
	}
	if (strlen(s) >= k->max) {
		snprintf(why, whylen, "longer than %llu bytes", k->max - 1);
		return -1;
	}
	memcpy(field, s, strlen(s) + 1);
	return 0;
}

/* A Ceph entity or file-system name: letters, digits, '.', '_', '-'. */
static int parse_name(const struct config_key *k, const char *s, char *field, char *why, size_t whylen)
{
	size_t n = strlen(s);

	if (n == 0 || n >= k->max) {
		snprintf(why, whylen, "expected 1..%llu characters", k->max - 1);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-') {
			snprintf(why, whylen, "only letters, digits, '.', '_' and '-'");
			return -1;
		}
	}
	memcpy(field, s, n + 1);
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* The next comma-separated item of *cursor, trimmed (maybe ""), or NULL after the last. */
static char *list_item(char **cursor)
{
	char *item = *cursor, *next;

	if (!item)
		return NULL;
	next = strchr(item, ',');
	if (next)
		*next++ = '\0';
	*cursor = next;
	return trim(item);
}

/* "a, b, c": each item through config_parse_listen; no empties, no duplicates. */
static int parse_listen_list(const struct config_key *k, char *s, struct config_listen *list,
			     unsigned *count, char *why, size_t whylen)
{
	struct config_listen tmp[CONFIG_MAX_LISTEN];
	unsigned n = 0;
	char *item;

	memset(tmp, 0, sizeof(tmp));
	while ((item = list_item(&s)) != NULL) {
		if (*item == '\0') {
			snprintf(why, whylen, "empty address in list");
			return -1;
		}
		if (n == CONFIG_MAX_LISTEN) {
			snprintf(why, whylen, "more than %d addresses", CONFIG_MAX_LISTEN);
			return -1;
		}
		if (config_parse_listen(item, (uint16_t)k->min, &tmp[n]) < 0) {
			snprintf(why, whylen, "'%.60s' is not ADDRESS[:PORT] or [IPV6-ADDRESS][:PORT] "
				 "(numeric address, port 1..65535) [optional]", item);
			return -1;
		}
		for (unsigned i = 0; i < n; i++) {
			if (tmp[i].port == tmp[n].port && strcmp(tmp[i].addr, tmp[n].addr) == 0) {
				snprintf(why, whylen, "'%.80s' is listed twice", item);
				return -1;
			}
		}
		n++;
	}
	memcpy(list, tmp, n * sizeof(tmp[0]));
	*count = n;
	return 0;
}

/* "a, b, c": each item through config_parse_ds; no empties, no duplicates. */
static int parse_ds_list(char *s, struct config_ds *list, unsigned *count, char *why, size_t whylen)
{
	struct config_ds tmp[CONFIG_MAX_DS];
	unsigned n = 0;
	char *item;

	memset(tmp, 0, sizeof(tmp));
	while ((item = list_item(&s)) != NULL) {
		if (*item == '\0' || n == CONFIG_MAX_DS) {
			snprintf(why, whylen, *item ? "more than %d data servers" : "empty data server in list",
				 CONFIG_MAX_DS);
			return -1;
		}
		if (config_parse_ds(item, &tmp[n]) < 0) {
			snprintf(why, whylen, "'%.60s' is not ADDRESS[:PORT][/tcp|/rdma] or "
				 "[IPV6-ADDRESS][:PORT][/tcp|/rdma] (numeric address, port 1..65535)", item);
			return -1;
		}
		for (unsigned i = 0; i < n; i++) {
			if (memcmp(&tmp[i], &tmp[n], sizeof(tmp[n])) == 0) {
				snprintf(why, whylen, "'%.80s' is listed twice", item);
				return -1;
			}
		}
		n++;
	}
	memcpy(list, tmp, n * sizeof(tmp[0]));
	*count = n;
	return 0;
}

static int config_apply(const struct config_key *k, char *value, struct rnfsd_config *cfg,
			char *why, size_t whylen)
{
	char *field = (char *)cfg + k->offset;
	unsigned long long v;
	enum config_tristate ts;

	switch (k->type) {
	case CONFIG_TYPE_UINT:
		if (parse_number(k, value, &v, why, whylen) < 0)
			return -1;
		*(unsigned *)field = (unsigned)v;
		return 0;
	case CONFIG_TYPE_SIZE:
		if (parse_number(k, value, &v, why, whylen) < 0)
			return -1;
		*(size_t *)field = (size_t)v;
		return 0;
	case CONFIG_TYPE_BOOL:
		if (parse_tristate(value, &ts) < 0 || ts == CONFIG_AUTO) {
			snprintf(why, whylen, "expected yes or no");
			return -1;
		}
		*(bool *)field = ts == CONFIG_YES;
		return 0;
	case CONFIG_TYPE_TRISTATE:
		if (parse_tristate(value, &ts) < 0) {
			snprintf(why, whylen, "expected yes, no or auto");
			return -1;
		}
		*(enum config_tristate *)field = ts;
		return 0;
	case CONFIG_TYPE_DELEG:
		if (parse_deleg(value, (enum config_deleg *)field) < 0) {
			snprintf(why, whylen, "expected no, read or yes");
			return -1;
		}
		return 0;
	case CONFIG_TYPE_PATH:
		return parse_path(k, value, field, why, whylen);
	case CONFIG_TYPE_NAME:
		return parse_name(k, value, field, why, whylen);
	case CONFIG_TYPE_LISTEN:
		return parse_listen_list(k, value, (struct config_listen *)field,
					 (unsigned *)((char *)cfg + k->count_offset), why, whylen);
	case CONFIG_TYPE_DS:
		return parse_ds_list(value, (struct config_ds *)field, (unsigned *)((char *)cfg + k->count_offset),
				     why, whylen);
	}
	snprintf(why, whylen, "internal error: unknown key type");
	return -1;
}

/* ---- the line parser ---- */

struct config_parser {
	const char *name;  /* file name for messages */
	unsigned line;     /* current line, from 1 */
	int section;       /* enum config_section, or -1 before the first header */
	unsigned seen[sizeof(config_keys) / sizeof(config_keys[0])]; /* line a key was set on, 0 = not yet */
	char *err;
	size_t errlen;
};

static int config_error(struct config_parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Always returns -1, after writing "NAME:LINE: message" into err. */
static int config_error(struct config_parser *ps, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	conf_verror(ps->err, ps->errlen, ps->name, ps->line, fmt, ap);
	va_end(ap);
	return -1;
}

/* After a section header or closing quote only blanks and a comment may follow. */
static bool only_comment_left(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == '\0' || *s == '#' || *s == ';';
}

static int config_section_line(struct config_parser *ps, char *s)
{
	char *close = strchr(s, ']');
	char *name;

	if (!close)
		return config_error(ps, "section header without ']'");
	if (!only_comment_left(close + 1))
		return config_error(ps, "text after section header");
	*close = '\0';
	name = trim(s + 1);
	for (int i = 0; i < CONFIG_SECTION_COUNT; i++) {
		if (strcasecmp(name, config_section_names[i]) == 0) {
			ps->section = i;
			return 0;
		}
	}
	return config_error(ps, "unknown section [%.80s] (known: [rnfsd], [tcp], [rdma], [nfsv4], [ceph], "
			    "[stats], [pnfs])", name);
}

/* The value after '=': unquoted (inline comment stripped) or "quoted". NULL on error. */
static char *config_value(struct config_parser *ps, char *s)
{
	char *p;

	s = trim(s);
	if (*s == '"') {
		p = strchr(s + 1, '"');
		if (!p) {
			config_error(ps, "unterminated quoted value");
			return NULL;
		}
		if (!only_comment_left(p + 1)) {
			config_error(ps, "text after quoted value");
			return NULL;
		}
		*p = '\0';
		return s + 1;
	}
	for (p = s; *p; p++) {
		if ((*p == '#' || *p == ';') && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			break;
		}
	}
	return trim(s);
}

static const struct config_key *config_key_find(int section, const char *name)
{
	for (unsigned i = 0; i < config_nkeys; i++) {
		if ((int)config_keys[i].section == section && strcasecmp(config_keys[i].name, name) == 0)
			return &config_keys[i];
	}
	return NULL;
}

static int config_unknown_key(struct config_parser *ps, const char *key)
{
	char alt[64];
	size_t len = strlen(key);

	/* Suggest "max-record" for "max_record". */
	if (len < sizeof(alt)) {
		for (size_t i = 0; i <= len; i++)
			alt[i] = key[i] == '_' ? '-' : key[i];
		if (strcmp(alt, key) != 0 && config_key_find(ps->section, alt))
			return config_error(ps, "unknown key '%s' in [%s] (did you mean '%s'?)",
					    key, config_section_names[ps->section], alt);
	}
	return config_error(ps, "unknown key '%.80s' in [%s]", key, config_section_names[ps->section]);
}

static int config_key_line(struct config_parser *ps, char *s, struct rnfsd_config *cfg)
{
	char *eq = strchr(s, '=');
	const struct config_key *k;
	char *key, *value;
	char why[192];
	unsigned idx;

	if (!eq)
		return config_error(ps, "expected 'key = value' or '[section]'");
	*eq = '\0';
	key = trim(s);
	if (*key == '\0')
		return config_error(ps, "missing key before '='");
	if (ps->section < 0)
		return config_error(ps, "key '%.80s' before the first [section]", key);
	k = config_key_find(ps->section, key);
	if (!k)
		return config_unknown_key(ps, key);
	idx = (unsigned)(k - config_keys);
	if (ps->seen[idx])
		return config_error(ps, "duplicate key '%s' in [%s] (first set at line %u)",
				    k->name, config_section_names[k->section], ps->seen[idx]);
	ps->seen[idx] = ps->line;
	value = config_value(ps, eq + 1);
	if (!value)
		return -1;
	if (*value == '\0')
		return config_error(ps, "missing value for '%s'", k->name);
	if (config_apply(k, value, cfg, why, sizeof(why)) < 0)
		return config_error(ps, "bad value '%.80s' for '%s': %s", value, k->name, why);
	if (k->offset == FIELD(exports_file))
		cfg->exports_named = true;
	if (k->offset == FIELD(grace_period))
		cfg->grace_period_set = true;
	return 0;
}

static int config_line(struct config_parser *ps, char *s, struct rnfsd_config *cfg)
{
	size_t len = strlen(s);

	if (len && s[len - 1] == '\r')
		s[len - 1] = '\0';
	s = trim(s);
	if (*s == '\0' || *s == '#' || *s == ';')
		return 0;
	if (*s == '[')
		return config_section_line(ps, s);
	return config_key_line(ps, s, cfg);
}

int config_parse(const char *text, const char *name, struct rnfsd_config *cfg, char *err, size_t errlen)
{
	struct config_parser ps = { .name = name ? name : "(config)", .section = -1,
				    .err = err, .errlen = errlen };
	struct rnfsd_config *work;
	char *copy, *line, *next;
	int rc = 0;

	if (err && errlen)
		err[0] = '\0';
	copy = strdup(text);
	work = malloc(sizeof(*work));
	if (!copy || !work) {
		free(copy);
		free(work);
		return config_error(&ps, "out of memory");
	}
	*work = *cfg;
	for (line = copy; line && rc == 0; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		ps.line++;
		rc = config_line(&ps, line, work);
	}
	if (rc == 0)
		*cfg = *work;
	free(work);
	free(copy);
	return rc;
}

int config_load(const char *path, struct rnfsd_config *cfg, char *err, size_t errlen)
{
	char tmp[1];
	char *text;
	int rc;

	if (!err || errlen == 0) {
		err = tmp;
		errlen = sizeof(tmp);
	}
	text = conf_read_file(path, CONFIG_MAX_FILE_SIZE, err, errlen);
	if (!text)
		return -1;
	rc = config_parse(text, path, cfg, err, errlen);
	free(text);
	return rc;
}

/* ---- listen addresses ---- */

static int parse_port(const char *s, uint16_t *port)
{
	unsigned long long v;
	const char *end;

	if (parse_decimal(s, &v, &end) < 0 || *end != '\0' || v < 1 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/* Numeric address into its canonical text form; af 0 tries IPv4 then IPv6. */
static int canonical_addr(const char *s, int af, char *out, size_t outlen)
{
	unsigned char buf[sizeof(struct in6_addr)];

	if ((af == 0 || af == AF_INET) && inet_pton(AF_INET, s, buf) == 1)
		return inet_ntop(AF_INET, buf, out, (socklen_t)outlen) ? 0 : -1;
	if ((af == 0 || af == AF_INET6) && inet_pton(AF_INET6, s, buf) == 1)
		return inet_ntop(AF_INET6, buf, out, (socklen_t)outlen) ? 0 : -1;
	return -1;
}

/*
 * Forms: "A.B.C.D", "A.B.C.D:PORT", "[V6]", "[V6]:PORT", and a bare "V6"
 * (more than one ':' and no brackets: the whole string is the address).
 */
static int parse_listen_addr(const char *s, uint16_t default_port, struct config_listen *out)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *close, *port = NULL;
	struct config_listen l;
	size_t hlen;
	int af = 0;

	if (!s || !out)
		return -1;
	memset(&l, 0, sizeof(l)); /* whole struct defined: configs compare with memcmp */
	if (s[0] == '[') {
		close = strchr(s, ']');
		if (!close || (close[1] != '\0' && close[1] != ':'))
			return -1;
		hlen = (size_t)(close - s - 1);
		s++;
		port = close[1] == ':' ? close + 2 : NULL;
		af = AF_INET6;
	} else {
		colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':')) {
			hlen = strlen(s); /* bare IPv6 */
			af = AF_INET6;
		} else {
			hlen = colon ? (size_t)(colon - s) : strlen(s);
			port = colon ? colon + 1 : NULL;
			af = AF_INET;
		}
	}
	if (hlen == 0 || hlen >= sizeof(host))
		return -1;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (canonical_addr(host, af, l.addr, sizeof(l.addr)) < 0)
		return -1;
	l.port = default_port;
	if (port && parse_port(port, &l.port) < 0)
		return -1;
	*out = l;
	return 0;
}

/* An address as above, then optionally blanks and the word "optional". */
int config_parse_listen(const char *s, uint16_t default_port, struct config_listen *out)
{
	char addr[INET6_ADDRSTRLEN + 16];
	const char *blank, *word;
	size_t alen;
	bool optional = false;

	if (!s || !out)
		return -1;
	blank = strpbrk(s, " \t");
	alen = blank ? (size_t)(blank - s) : strlen(s);
	if (blank) {
		word = blank + strspn(blank, " \t");
		if (strncmp(word, "optional", 8) != 0 || word[8 + strspn(word + 8, " \t")] != '\0')
			return -1;
		optional = true;
	}
	if (alen >= sizeof(addr))
		return -1;
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	if (parse_listen_addr(addr, default_port, out) < 0)
		return -1;
	out->optional = optional;
	return 0;
}

/* RFC 8435 §5.1: a data server is reached by netid "tcp" or "rdma" (RFC 5665 §5.2.3.5)
 * at a universal address; the port defaults to NFS's (2049) or NFS/RDMA's (20049). */
int config_parse_ds(const char *s, struct config_ds *out)
{
	char addr[INET6_ADDRSTRLEN + 16];
	const char *slash;
	struct config_listen l;
	struct config_ds ds;
	size_t alen;

	if (!s || !out)
		return -1;
	memset(&ds, 0, sizeof(ds));
	slash = strrchr(s, '/');
	alen = slash ? (size_t)(slash - s) : strlen(s);
	if (slash && strcmp(slash + 1, "rdma") == 0)
		ds.rdma = true;
	else if (slash && strcmp(slash + 1, "tcp") != 0)
		return -1;
	if (alen >= sizeof(addr))
		return -1;
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	/* A client must reach it: no wildcard address. */
	if (parse_listen_addr(addr, ds.rdma ? 20049 : 2049, &l) < 0 || !strcmp(l.addr, "0.0.0.0") ||
	    !strcmp(l.addr, "::"))
		return -1;
	memcpy(ds.addr, l.addr, sizeof(ds.addr));
	ds.port = l.port;
	*out = ds;
	return 0;
}
