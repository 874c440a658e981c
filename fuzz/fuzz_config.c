/*
 * fuzz_config.c - libFuzzer target: the rnfsd.conf parser (conf/config.c,
 * config_parse(): the text config_load() reads from the file) on arbitrary
 * text. Built as a libFuzzer target with -Dfuzz=true (clang), and in every
 * build as a replay test over fuzz/corpus/config (fuzz_replay.c).
 *
 * The input up to its first NUL is the file (conf_read_file() refuses NUL
 * bytes). Invariants checked with abort(): a refusal says "FILE:LINE: ..."
 * with a line that exists and leaves the caller's configuration untouched;
 * an accepted configuration has every key of config_keys[] inside its
 * range (numbers, booleans, absolute paths shorter than the limit, at most
 * CONFIG_MAX_LISTEN distinct numeric listen addresses with ports 1..65535);
 * and written back as a file (config_keys[] order, canonical values) it
 * parses to the same configuration.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "conf/config_internal.h"

#include "fuzz/fuzz_conf_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_listen(const struct config_listen *l, unsigned n)
{
	unsigned char buf[sizeof(struct in6_addr)];

	CHECK(n <= CONFIG_MAX_LISTEN);
	for (unsigned i = 0; i < n; i++) {
		CHECK(memchr(l[i].addr, '\0', sizeof(l[i].addr)) != NULL);
		CHECK(inet_pton(AF_INET, l[i].addr, buf) == 1 || inet_pton(AF_INET6, l[i].addr, buf) == 1);
		CHECK(l[i].port >= 1);
		for (unsigned j = 0; j < i; j++)
			CHECK(l[j].port != l[i].port || strcmp(l[j].addr, l[i].addr) != 0);
	}
}

/* One key's value, range-checked, appended to out as "key = value\n". */
static void check_key(const struct config_key *k, const struct rnfsd_config *cfg, FILE *out)
{
	const char *field = (const char *)cfg + k->offset;

	fprintf(out, "%s = ", k->name);
	switch (k->type) {
	case CONFIG_TYPE_UINT: {
		unsigned v = *(const unsigned *)field;
		CHECK(v >= k->min && v <= k->max);
		fprintf(out, "%u\n", v);
		break;
	}
	case CONFIG_TYPE_SIZE: {
		size_t v = *(const size_t *)field;
		CHECK(v >= k->min && v <= k->max);
		fprintf(out, "%zu\n", v);
		break;
	}
	case CONFIG_TYPE_BOOL:
		fprintf(out, "%s\n", *(const bool *)field ? "yes" : "no");
		break;
	case CONFIG_TYPE_TRISTATE: {
		enum config_tristate v = *(const enum config_tristate *)field;
		CHECK(v == CONFIG_NO || v == CONFIG_YES || v == CONFIG_AUTO);
		fprintf(out, "%s\n", v == CONFIG_AUTO ? "auto" : v == CONFIG_YES ? "yes" : "no");
		break;
	}
	case CONFIG_TYPE_DELEG: {
		static const char *const dl[] = { "no", "read", "yes" };
		enum config_deleg v = *(const enum config_deleg *)field;
		CHECK(v == CONFIG_DELEG_NO || v == CONFIG_DELEG_READ || v == CONFIG_DELEG_YES);
		fprintf(out, "%s\n", dl[v]);
		break;
	}
	case CONFIG_TYPE_PATH:
		CHECK(field[0] == '/' && strlen(field) < k->max);
		/* Quoted (no escapes): a path holding '"' cannot be written back. */
		fprintf(out, "\"%s\"\n", field);
		break;
	case CONFIG_TYPE_NAME:
		/* A Ceph entity or file-system name: 1..max-1 of [A-Za-z0-9._-]. */
		CHECK(field[0] != '\0' && strlen(field) < k->max);
		CHECK(strspn(field, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == strlen(field));
		fprintf(out, "%s\n", field);
		break;
	case CONFIG_TYPE_LISTEN: {
		const struct config_listen *l = (const struct config_listen *)field;
		unsigned n = *(const unsigned *)((const char *)cfg + k->count_offset);
		check_listen(l, n);
		for (unsigned i = 0; i < n; i++) {
			bool v6 = strchr(l[i].addr, ':') != NULL;
			fprintf(out, "%s%s%s%s:%u%s", i ? ", " : "", v6 ? "[" : "", l[i].addr, v6 ? "]" : "",
				l[i].port, l[i].optional ? " optional" : "");
		}
		fprintf(out, "\n");
		break;
	}
	case CONFIG_TYPE_DS: {
		const struct config_ds *ds = (const struct config_ds *)field;
		unsigned n = *(const unsigned *)((const char *)cfg + k->count_offset);
		CHECK(n <= CONFIG_MAX_DS);
		for (unsigned i = 0; i < n; i++) {
			bool v6 = strchr(ds[i].addr, ':') != NULL;
			CHECK(ds[i].port != 0 && strcmp(ds[i].addr, "0.0.0.0") && strcmp(ds[i].addr, "::"));
			fprintf(out, "%s%s%s%s:%u/%s", i ? ", " : "", v6 ? "[" : "", ds[i].addr, v6 ? "]" : "",
				ds[i].port, ds[i].rdma ? "rdma" : "tcp");
		}
		fprintf(out, "\n");
		break;
	}
	}
}

/* Range checks, then the round trip through the text form. */
static void check_config(const struct rnfsd_config *cfg)
{
	char *text = NULL, err[512];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	bool quotable = true;

	CHECK(out);
	for (int s = 0; s < CONFIG_SECTION_COUNT; s++) {
		fprintf(out, "[%s]\n", config_section_names[s]);
		for (unsigned i = 0; i < config_nkeys; i++) {
			if (config_keys[i].section != (enum config_section)s)
				continue;
			if (config_keys[i].type == CONFIG_TYPE_PATH)
				quotable &= !strchr((const char *)cfg + config_keys[i].offset, '"');
			/* An empty address list ([stats] prometheus's default) has no text form: left out. */
			if ((config_keys[i].type == CONFIG_TYPE_LISTEN || config_keys[i].type == CONFIG_TYPE_DS) &&
			    !*(const unsigned *)((const char *)cfg + config_keys[i].count_offset))
				continue;
			/* Nor has an empty path ([tls] files' default: none). */
			if (config_keys[i].type == CONFIG_TYPE_PATH && !*((const char *)cfg + config_keys[i].offset))
				continue;
			check_key(&config_keys[i], cfg, out);
		}
	}
	CHECK(fclose(out) == 0);
	if (quotable) {
		struct rnfsd_config again;
		config_defaults(&again);
		CHECK(config_parse(text, "again", &again, err, sizeof(err)) == 0);
		CHECK(memcmp(again.tcp_listen, cfg->tcp_listen, sizeof(cfg->tcp_listen)) == 0);
		CHECK(memcmp(again.rdma_listen, cfg->rdma_listen, sizeof(cfg->rdma_listen)) == 0);
		CHECK(again.n_pnfs_ds == cfg->n_pnfs_ds &&
		      memcmp(again.pnfs_ds, cfg->pnfs_ds, sizeof(cfg->pnfs_ds)) == 0);
		CHECK(again.n_prometheus == cfg->n_prometheus &&
		      memcmp(again.prometheus, cfg->prometheus, sizeof(cfg->prometheus)) == 0);
		CHECK(again.threads == cfg->threads && again.max_record == cfg->max_record &&
		      again.rdma_inline == cfg->rdma_inline && again.rpcbind == cfg->rpcbind &&
		      again.rdma == cfg->rdma && again.rdma_credits == cfg->rdma_credits &&
		      again.drc_entries == cfg->drc_entries && again.max_connections == cfg->max_connections &&
		      again.rdma_max_payload == cfg->rdma_max_payload &&
		      again.rdma_send_invalidate == cfg->rdma_send_invalidate);
		CHECK(strcmp(again.exports_file, cfg->exports_file) == 0 &&
		      strcmp(again.state_dir, cfg->state_dir) == 0 &&
		      strcmp(again.stats_socket, cfg->stats_socket) == 0);
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned lines;
	char *text = fuzz_text(data, size, &lines);
	char err[512];
	static struct rnfsd_config cfg, before;

	config_defaults(&cfg);
	before = cfg;

	if (config_parse(text, "fuzz", &cfg, err, sizeof(err)) < 0) {
		fuzz_check_error(err, lines);
		CHECK(memcmp(&cfg, &before, sizeof(cfg)) == 0);
	} else {
		CHECK(err[0] == '\0');
		check_config(&cfg);
	}
	free(text);
	return 0;
}
