/*
 * rnfsctl.c - the admin's view of a running rnfsd: asks the daemon's stats
 * socket (see stats_server.h) for its JSON document and prints it as tables,
 * or as it came with --json; changes the served exports at run time
 * (daemon/ctl_exports.h: one tab-separated request line, a JSON answer).
 *
 *   rnfsctl [-s SOCKET] [--json] [-v] [stats]
 *   rnfsctl [-s SOCKET] [--json] export list
 *   rnfsctl [-s SOCKET] export add [--save] PATH CLIENT(OPTIONS)
 *   rnfsctl [-s SOCKET] export remove [--save] PATH [CLIENT]
 *   rnfsctl [-s SOCKET] [--json] client list
 *   rnfsctl [-s SOCKET] [--json] layouts
 *   rnfsctl [-s SOCKET] client revoke CLIENTID|ADDRESS|NLM-HOST
 *   rnfsctl [-s SOCKET] unlock --export PATH
 *
 * The socket is root-only: a non-root caller is told so (EACCES at
 * connect, or the daemon's one-line refusal when the mode was widened).
 *
 * The JSON is parsed by the small bounded parser below (depth and size
 * limited) into a tree that is freed before exit.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rnfsd_build.h"

#define RNFSCTL_DEFAULT_SOCKET RNFSD_RUNSTATEDIR "/rnfsd.sock"
#define RNFSCTL_MAX_DOC (64u << 20)
#define JSON_MAX_DEPTH 16

/* ---- a minimal JSON tree ---- */

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ };

struct json {
	enum json_type type;
	double num;         /* JSON_NUM, JSON_BOOL (0/1) */
	char *str;          /* JSON_STR */
	size_t n;           /* JSON_ARR, JSON_OBJ: number of items */
	struct json *items; /* JSON_ARR, JSON_OBJ */
	char **keys;        /* JSON_OBJ */
};

struct json_parser {
	const char *p, *end;
};

static void json_free(struct json *v)
{
	free(v->str);
	for (size_t i = 0; i < v->n; i++) {
		json_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
}

static void json_ws(struct json_parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
		ps->p++;
}

/* A string without \u escapes beyond Latin-1 (the daemon writes only \" \\ and \u00XX). */
static char *json_parse_str(struct json_parser *ps)
{
	if (ps->p >= ps->end || *ps->p != '"')
		return NULL;
	ps->p++;
	size_t cap = 16, len = 0;
	char *s = malloc(cap);
	while (s && ps->p < ps->end && *ps->p != '"') {
		char c = *ps->p++;
		if (c == '\\') {
			if (ps->p >= ps->end)
				break;
			c = *ps->p++;
			if (c == 'u') {
				if (ps->end - ps->p < 4)
					break;
				char hex[5] = {ps->p[0], ps->p[1], ps->p[2], ps->p[3], 0};
				c = (char)strtoul(hex, NULL, 16);
				ps->p += 4;
			} else if (c == 'n') {
				c = '\n';
			} else if (c == 't') {
				c = '\t';
			}
		}
		if (len + 2 > cap) {
			char *t = realloc(s, cap *= 2);
			if (!t)
				break;
			s = t;
		}
		s[len++] = c;
	}
	if (!s || ps->p >= ps->end || *ps->p != '"') {
		free(s);
		return NULL;
	}
	ps->p++;
	s[len] = '\0';
	return s;
}

static int json_parse_value(struct json_parser *ps, struct json *v, int depth);

/* An array or object; close is ']' or '}'. */
static int json_parse_list(struct json_parser *ps, struct json *v, int depth, char close)
{
	size_t cap = 0;
	ps->p++;
	json_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		if (v->n == cap) {
			cap = cap ? cap * 2 : 8;
			struct json *items = realloc(v->items, cap * sizeof(*items));
			if (!items)
				return -1;
			v->items = items;
			if (close == '}') {
				char **keys = realloc(v->keys, cap * sizeof(*keys));
				if (!keys)
					return -1;
				v->keys = keys;
			}
		}
		memset(&v->items[v->n], 0, sizeof(v->items[0]));
		if (close == '}') {
			json_ws(ps);
			v->keys[v->n] = json_parse_str(ps);
			if (!v->keys[v->n])
				return -1;
			json_ws(ps);
			if (ps->p >= ps->end || *ps->p++ != ':') {
				free(v->keys[v->n]);
				return -1;
			}
		}
		v->n++;
		if (json_parse_value(ps, &v->items[v->n - 1], depth + 1) != 0)
			return -1;
		json_ws(ps);
		if (ps->p >= ps->end)
			return -1;
		char c = *ps->p++;
		if (c == close)
			return 0;
		if (c != ',')
			return -1;
	}
}

static int json_parse_value(struct json_parser *ps, struct json *v, int depth)
{
	if (depth > JSON_MAX_DEPTH)
		return -1;
	json_ws(ps);
	if (ps->p >= ps->end)
		return -1;
	switch (*ps->p) {
	case '{':
		v->type = JSON_OBJ;
		return json_parse_list(ps, v, depth, '}');
	case '[':
		v->type = JSON_ARR;
		return json_parse_list(ps, v, depth, ']');
	case '"':
		v->type = JSON_STR;
		v->str = json_parse_str(ps);
		return v->str ? 0 : -1;
	}
	static const struct { const char *word; enum json_type type; double num; } words[] = {
		{"null", JSON_NULL, 0}, {"true", JSON_BOOL, 1}, {"false", JSON_BOOL, 0},
	};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t wl = strlen(words[i].word);
		if ((size_t)(ps->end - ps->p) >= wl && !memcmp(ps->p, words[i].word, wl)) {
			v->type = words[i].type;
			v->num = words[i].num;
			ps->p += wl;
			return 0;
		}
	}
	/* A number: the document is NUL-terminated, so strtod stays inside it. */
	char *e;
	v->num = strtod(ps->p, &e);
	if (e == ps->p || e > ps->end)
		return -1;
	v->type = JSON_NUM;
	ps->p = e;
	return 0;
}

static const struct json *json_get(const struct json *obj, const char *key)
{
	if (!obj || obj->type != JSON_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return &obj->items[i];
	return NULL;
}

static double json_num(const struct json *obj, const char *key)
{
	const struct json *v = json_get(obj, key);
	return v && v->type == JSON_NUM ? v->num : 0.0;
}

static const char *json_text(const struct json *obj, const char *key)
{
	const struct json *v = json_get(obj, key);
	return v && v->type == JSON_STR ? v->str : "-";
}

/* ---- talking to the daemon ---- */

/* Sends req (one line) and returns the answer (NUL-terminated, caller frees) or NULL with a
 * message printed. */
static char *rnfsctl_fetch(const char *path, const char *req, size_t *len)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "rnfsctl: socket path too long: %s\n", path);
		return NULL;
	}
	strcpy(addr.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		fprintf(stderr, "rnfsctl: cannot connect to %s: %s%s\n", path, strerror(errno),
			errno == ENOENT || errno == ECONNREFUSED ? " (is rnfsd running?)" :
			errno == EACCES ? " (the control socket is root-only: run rnfsctl as root)" : "");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	/* A refused peer may find the socket closed already: its one-line reason is still read below. */
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0 && errno != EPIPE && errno != ECONNRESET) {
		fprintf(stderr, "rnfsctl: %s: %s\n", path, strerror(errno));
		close(fd);
		return NULL;
	}
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (n + 1 == cap) {
			char *t = cap < RNFSCTL_MAX_DOC ? realloc(buf, cap * 2) : NULL;
			if (!t) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = t;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* ECONNRESET after an answer: the daemon closed on our unread request (a refusal). */
			if (r < 0 && !(errno == ECONNRESET && n > 0)) {
				free(buf);
				buf = NULL;
			}
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	if (!buf) {
		fprintf(stderr, "rnfsctl: reading %s failed\n", path);
		return NULL;
	}
	if (n == 0) {
		fprintf(stderr, "rnfsctl: %s closed the connection without an answer (not root?)\n", path);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* ---- the human view ---- */

static void fmt_duration(char *buf, size_t len, double s)
{
	unsigned long t = s > 0 ? (unsigned long)s : 0;
	if (t >= 86400)
		snprintf(buf, len, "%lud%luh", t / 86400, t % 86400 / 3600);
	else if (t >= 3600)
		snprintf(buf, len, "%luh%lum", t / 3600, t % 3600 / 60);
	else if (t >= 60)
		snprintf(buf, len, "%lum%lus", t / 60, t % 60);
	else
		snprintf(buf, len, "%lus", t);
}

/* The entries of list key (procedures, or NFSv4 operations) that were called; col: the name's column. */
static void print_procedures(const struct json *doc, const char *key, const char *col, int w)
{
	const struct json *procs = json_get(doc, key);
	unsigned shown = 0;

	printf("%-8s %4s %-*s %10s %8s %10s %10s\n", "PROGRAM", "VERS", w, col, "CALLS", "ERRORS",
	       "MEAN(us)", "P99(us)");
	for (size_t i = 0; procs && procs->type == JSON_ARR && i < procs->n; i++) {
		const struct json *p = &procs->items[i];
		if (json_num(p, "calls") == 0)
			continue;
		const struct json *p99 = json_get(p, "latency_p99_us");
		char p99s[24] = "-";
		if (p99 && p99->type == JSON_NUM)
			snprintf(p99s, sizeof(p99s), "%.1f", p99->num);
		printf("%-8s %4.0f %-*s %10.0f %8.0f %10.1f %10s\n", json_text(p, "program"),
		       json_num(p, "version"), w, json_text(p, "procedure"), json_num(p, "calls"),
		       json_num(p, "errors"), json_num(p, "latency_mean_us"), p99s);
		shown++;
	}
	if (!shown)
		printf("(no calls yet)\n");
}

/* Each NFSv4 client's callback path (4.1 back channel or 4.0 callback service). */
static void print_nfs4_callbacks(const struct json *doc)
{
	const struct json *cbs = json_get(doc, "nfs4_callbacks");

	if (!cbs || cbs->type != JSON_ARR || cbs->n == 0)
		return;
	printf("%-18s %-5s %-8s %-5s %-6s %8s %8s %8s\n", "CLIENTID", "MINOR", "CALLBACK", "XPRT", "FLAVOR", "SENT", "OK",
	       "FAILED");
	for (size_t i = 0; i < cbs->n; i++) {
		const struct json *c = &cbs->items[i];

		printf("%-18s 4.%-3.0f %-8s %-5s %-6s %8.0f %8.0f %8.0f\n", json_text(c, "clientid"),
		       json_num(c, "minor"), json_text(c, "state"), json_text(c, "transport"), json_text(c, "flavor"),
		       json_num(c, "sent"), json_num(c, "ok"), json_num(c, "failed"));
	}
	printf("\n");
}

/* pNFS data servers ([pnfs] data-servers): layouts that sent clients there, errors clients reported. */
static void print_pnfs_data_servers(const struct json *doc)
{
	const struct json *dss = json_get(doc, "pnfs_data_servers");

	if (!dss || dss->type != JSON_ARR || dss->n == 0)
		return;
	printf("%-40s %-5s %10s %8s %s\n", "PNFS DATA SERVER", "XPRT", "LAYOUTS", "ERRORS", "STATE");
	for (size_t i = 0; i < dss->n; i++) {
		const struct json *d = &dss->items[i];
		char where[64];

		snprintf(where, sizeof(where), "%s port %.0f", json_text(d, "address"), json_num(d, "port"));
		printf("%-40s %-5s %10.0f %8.0f %s\n", where, json_text(d, "transport"), json_num(d, "layouts"),
		       json_num(d, "errors"), json_num(d, "unavailable") > 0 ? "unavailable" : "in use");
	}
	printf("\n");
}

/* NFSv4, when the daemon serves it: state counts, the grace period, then the operations. */
/* Asynchronous COPY (RFC 7862 §4.8) and the callbacks of CB_OFFLOAD / CB_NOTIFY_LOCK. */
static void print_nfs4_async(const struct json *doc)
{
	const struct json *a = json_get(doc, "nfs4_async");

	if (!a || a->type != JSON_OBJ)
		return;
	printf("nfsv4 async copies: %.0f started, %.0f done, %.0f cancelled; CB_OFFLOAD sent %.0f; "
	       "CB_NOTIFY_LOCK sent %.0f\n\n",
	       json_num(a, "copies_started"), json_num(a, "copies_done"), json_num(a, "copies_cancelled"),
	       json_num(a, "cb_offload_sent"), json_num(a, "cb_notify_lock_sent"));
}

/* The fixed-bound NFSv4 tables: in use / bound (docs/architecture.md). */
static void print_nfs4_bounds(const struct json *doc)
{
	const struct json *b = json_get(doc, "nfs4_bounds");

	if (!b || b->type != JSON_OBJ)
		return;
	printf("nfsv4 tables: offloads %.0f/%.0f, synchronous copies %.0f/%.0f (%.0f refused), lock waiters "
	       "%.0f/%.0f, CB_GETATTR waiters %.0f/%.0f, delegations max %.0f, callback paths %.0f/%.0f (%.0f RPCSEC_GSS contexts), revoked stateids %.0f/%.0f, "
	       "pNFS layouts %.0f/%.0f (%.0f data-server errors reported; %.0f recalling, %.0f recalled, %.0f "
	       "returned, %.0f revoked)\n\n",
	       json_num(b, "offloads"), json_num(b, "offloads_max"), json_num(b, "sync_copies"),
	       json_num(b, "sync_copies_max"), json_num(b, "sync_copies_refused"), json_num(b, "lock_waiters"),
	       json_num(b, "lock_waiters_max"), json_num(b, "cb_getattr_waiters"), json_num(b, "cb_getattr_waiters_max"),
	       json_num(b, "delegations_max"), json_num(b, "callback_paths"),
	       json_num(b, "callback_paths_max"), json_num(b, "callback_gss_contexts"), json_num(b, "revoked_stateids"), json_num(b, "revoked_stateids_max"),
	       json_num(b, "layouts"), json_num(b, "layouts_max"), json_num(b, "layout_errors"),
	       json_num(b, "layout_recalling"), json_num(b, "layout_recalls"), json_num(b, "layout_recalls_returned"),
	       json_num(b, "layouts_revoked"));
}

/* The shared NFSv4 tables against their bounds (issue 24). */
static void print_nfs4_limits(const struct json *doc)
{
	const struct json *l = json_get(doc, "nfs4_limits");

	if (!l || l->type != JSON_OBJ)
		return;
	printf("nfsv4 limits: reply caches %.0f of %.0f bytes; %.0f new clients refused (table or share full), "
	       "%.0f idle sessions reclaimed; %.0f stable records at most\n\n",
	       json_num(l, "reply_cache_bytes"), json_num(l, "reply_cache_limit"), json_num(l, "clients_refused"),
	       json_num(l, "sessions_reclaimed"), json_num(l, "recorded_clients_max"));
}

/* The numbers of o whose key begins with prefix, as "rest n, rest n" (rest: the key past prefix). */
static void print_keyed(const struct json *o, const char *prefix)
{
	size_t len = strlen(prefix);
	const char *sep = "";

	for (size_t i = 0; i < o->n; i++)
		if (!strncmp(o->keys[i], prefix, len) && o->items[i].type == JSON_NUM) {
			printf("%s%s %.0f", sep, o->keys[i] + len, o->items[i].num);
			sep = ", ";
		}
}

/* Delegations by kind, recalls by cause (of them, directories'), revocations (issue 26). */
static void print_nfs4_deleg(const struct json *doc)
{
	const struct json *d = json_get(doc, "nfs4_delegations");

	if (!d || d->type != JSON_OBJ)
		return;
	printf("nfsv4 delegations: %.0f read, %.0f write, %.0f attribute, %.0f directory; recalls by cause: ",
	       json_num(d, "read"), json_num(d, "write"), json_num(d, "attribute"), json_num(d, "directory"));
	print_keyed(d, "recalls_");
	printf(" (of directories: ");
	print_keyed(d, "dir_recalls_");
	printf("); revoked: %.0f recalls unanswered, %.0f by an administrator; CB_NOTIFY sent %.0f\n\n",
	       json_num(d, "revoked_unanswered"), json_num(d, "revoked_admin"), json_num(d, "cb_notify_sent"));
}

static void print_nfs4(const struct json *doc)
{
	const struct json *n = json_get(doc, "nfs4");

	if (!n || n->type != JSON_OBJ)
		return;
	printf("nfsv4: %.0f clients, %.0f sessions, %.0f opens, %.0f locks, %.0f delegations (%.0f directories: "
	       "%.0f granted, %.0f recalled, %.0f CB_NOTIFY pending; %.0f recalls, "
	       "%.0f returned, %.0f revoked; %.0f files leased, %.0f refused for want of a lease; %.0f CB_GETATTR, %.0f unanswered); %.0f clients recorded "
	       "for restart recovery; grace period: %.0f s left (%.0f reclaims, %.0f GRACE, %.0f NO_GRACE)\n\n",
	       json_num(n, "clients"), json_num(n, "sessions"), json_num(n, "opens"), json_num(n, "locks"),
	       json_num(n, "delegations"), json_num(n, "dir_delegations"), json_num(n, "dir_delegations_granted"),
	       json_num(n, "dir_delegation_recalls"), json_num(n, "cb_notify_pending"), json_num(n, "recalls"),
	       json_num(n, "delegreturns"),
	       json_num(n, "revoked"), json_num(n, "deleg_leases"), json_num(n, "deleg_lease_refused"),
	       json_num(n, "cb_getattr_sent"), json_num(n, "cb_getattr_unanswered"), json_num(n, "recorded_clients"),
	       json_num(n, "grace_left_s"), json_num(n, "reclaims"), json_num(n, "grace_refused"), json_num(n, "no_grace"));
	printf("nfsv4 state: %.0f open files (max %.0f), %.0f open owners, %.0f lock owners, %.0f lock states; per "
	       "client: %.0f opens, %.0f lock owners + states\n\n",
	       json_num(n, "open_files"), json_num(n, "open_files_max"), json_num(n, "open_owners"),
	       json_num(n, "lock_owners"), json_num(n, "locks"), json_num(n, "opens_per_client_max"),
	       json_num(n, "lock_owners_per_client_max"));
	print_nfs4_deleg(doc);
	print_nfs4_async(doc);
	print_nfs4_bounds(doc);
	print_nfs4_limits(doc);
	print_procedures(doc, "nfs4_operations", "OPERATION", 20);
	printf("\n");
	print_nfs4_callbacks(doc);
	print_pnfs_data_servers(doc);
}

/* Calls, errors and bytes per export served (nfs/common/export_stats.c). */
static void print_export_stats(const struct json *doc)
{
	const struct json *ex = json_get(doc, "export_stats");

	if (!ex || ex->type != JSON_ARR || ex->n == 0)
		return;
	printf("%-32s %10s %8s %12s %12s\n", "EXPORT", "CALLS", "ERRORS", "READ-MiB", "WRITTEN-MiB");
	for (size_t i = 0; i < ex->n; i++) {
		const struct json *e = &ex->items[i];

		printf("%-32s %10.0f %8.0f %12.1f %12.1f\n", json_text(e, "path"), json_num(e, "calls"),
		       json_num(e, "errors"), json_num(e, "read_bytes") / 1048576.0,
		       json_num(e, "write_bytes") / 1048576.0);
	}
	printf("\n");
}

/* As a pNFS data server (nfs/common/pnfs_ds.c): NFSv3 I/O on exports with pnfs=; shown once there is any. */
static void print_pnfs_ds(const struct json *doc)
{
	const struct json *d = json_get(doc, "pnfs_ds");

	if (!d || d->type != JSON_OBJ || json_num(d, "reads") + json_num(d, "writes") + json_num(d, "commits") <= 0)
		return;
	printf("pNFS data server: %.0f reads, %.0f writes, %.0f commits (%.0f errors); %.1f MiB read, %.1f MiB "
	       "written\n\n",
	       json_num(d, "reads"), json_num(d, "writes"), json_num(d, "commits"), json_num(d, "errors"),
	       json_num(d, "read_bytes") / 1048576.0, json_num(d, "write_bytes") / 1048576.0);
}

/* Descriptors against RLIMIT_NOFILE, and the tables that hold them. */
static void print_resources(const struct json *doc)
{
	const struct json *r = json_get(doc, "resources");

	if (!r || r->type != JSON_OBJ)
		return;
	printf("descriptors: %.0f in use of %.0f (%.0f kept for connections and the daemon); lock descriptions "
	       "%.0f of %.0f; NLM: %.0f lock owners, %.0f held files (%.0f per host)\n",
	       json_num(r, "fds"), json_num(r, "fd_limit"), json_num(r, "fd_reserve"), json_num(r, "lock_descriptions"),
	       json_num(r, "lock_descriptions_max"), json_num(r, "nlm_owners"), json_num(r, "nlm_held"),
	       json_num(r, "nlm_per_host_max"));
	if (json_num(r, "lock_shared_descriptions") > 0)
		printf("write delegations' shared lock descriptions: %.0f, holding %.0f locks\n",
		       json_num(r, "lock_shared_descriptions"), json_num(r, "lock_shared_pieces"));
	if (json_num(r, "uring_personalities_max") > 0)
		printf("io_uring: %.0f caller identities registered of %.0f\n", json_num(r, "uring_personalities"),
		       json_num(r, "uring_personalities_max"));
	if (json_num(r, "handle_cache_max") > 0)
		printf("handle cache: %.0f of %.0f; %.0f hits, %.0f misses\n", json_num(r, "handle_cache"),
		       json_num(r, "handle_cache_max"), json_num(r, "handle_cache_hits"),
		       json_num(r, "handle_cache_misses"));
	if (json_num(r, "gss_contexts_max") > 0)
		printf("RPCSEC_GSS: %.0f contexts of %.0f, %.0f evicted\n", json_num(r, "gss_contexts"),
		       json_num(r, "gss_contexts_max"), json_num(r, "gss_evictions"));
	printf("\n");
}

/* Calls by flavor, and with -v the RPCSEC_GSS contexts' principals (the "rpc_auth" section). */
static void print_rpc_auth(const struct json *doc)
{
	const struct json *a = json_get(doc, "rpc_auth");
	const struct json *c = a ? json_get(a, "calls") : NULL;
	const struct json *p = a ? json_get(a, "gss_principals") : NULL;
	const struct json *cb = a ? json_get(a, "callbacks") : NULL;

	if (!c || c->type != JSON_OBJ)
		return;
	printf("calls by flavor: none %.0f, sys %.0f, krb5 %.0f, krb5i %.0f, krb5p %.0f\n", json_num(c, "none"),
	       json_num(c, "sys"), json_num(c, "krb5"), json_num(c, "krb5i"), json_num(c, "krb5p"));
	if (cb && cb->type == JSON_OBJ)
		printf("callbacks by flavor: none %.0f, sys %.0f, krb5 %.0f, krb5i %.0f, krb5p %.0f\n",
		       json_num(cb, "none"), json_num(cb, "sys"), json_num(cb, "krb5"), json_num(cb, "krb5i"),
		       json_num(cb, "krb5p"));
	if (p && p->type == JSON_ARR) {
		printf("%-48s %8s\n", "RPCSEC_GSS PRINCIPAL", "CONTEXTS");
		for (size_t i = 0; i < p->n; i++) {
			const char *name = json_text(&p->items[i], "principal");
			printf("%-48s %8.0f\n", *name ? name : "(name too long)", json_num(&p->items[i], "contexts"));
		}
	}
	printf("\n");
}

static void print_connections(const struct json *doc)
{
	const struct json *conns = json_get(doc, "connections");

	printf("%-28s %-4s %4s %7s %11s %9s %8s %8s %8s %8s %6s %5s %5s %7s\n", "PEER", "XPRT", "RVER",
	       "CREDITS", "INLINE(R/S)", "CALLS", "RD", "RD-MiB", "WR", "WR-MiB", "SNDINV", "ECHNK",
	       "EVERS", "GARBAGE");
	if (!conns || conns->type != JSON_ARR || conns->n == 0) {
		printf("(no connections)\n");
		return;
	}
	for (size_t i = 0; i < conns->n; i++) {
		const struct json *c = &conns->items[i];
		bool rdma = !strcmp(json_text(c, "transport"), "rdma");
		char inl[24] = "-", ver[8] = "-", cred[12] = "-";
		if (rdma) {
			snprintf(inl, sizeof(inl), "%.0f/%.0f", json_num(c, "inline_recv"), json_num(c, "inline_send"));
			snprintf(ver, sizeof(ver), "%.0f", json_num(c, "rdma_version"));
			snprintf(cred, sizeof(cred), "%.0f", json_num(c, "credits"));
		}
		/* RFC 9289: a TCP connection in TLS shows as tls or mtls. */
		const char *xprt = json_get(c, "xprtsec") ? json_text(c, "xprtsec") : json_text(c, "transport");
		printf("%-28s %-4s %4s %7s %11s %9.0f %8.0f %8.1f %8.0f %8.1f %6.0f %5.0f %5.0f %7.0f\n",
		       json_text(c, "peer"), xprt, ver, cred, inl, json_num(c, "calls"),
		       json_num(c, "rdma_reads"), json_num(c, "rdma_read_bytes") / 1048576.0,
		       json_num(c, "rdma_writes"), json_num(c, "rdma_write_bytes") / 1048576.0,
		       json_num(c, "send_invalidate"), json_num(c, "err_chunk"), json_num(c, "err_vers"),
		       json_num(c, "garbage_args"));
	}
}

/* The RDMA registered memory, when RDMA has a device (rdma_memory.pool_max). */
static void print_rdma_memory(const struct json *doc)
{
	const struct json *m = json_get(doc, "rdma_memory");
	const double mib = 1024.0 * 1024.0;

	if (!m || json_num(m, "pool_max") <= 0)
		return;
	printf("rdma memory: bulk pool %.1f of %.0f MiB registered, %.0f of %.0f slots in use, %.0f calls "
	       "waiting (%.0f waited); connections %.1f MiB\n\n",
	       json_num(m, "pool_registered") / mib, json_num(m, "pool_max") / mib, json_num(m, "in_use"),
	       json_num(m, "slots"), json_num(m, "waiting"), json_num(m, "waits"),
	       json_num(m, "conn_registered") / mib);
}

/* RPC-with-TLS (the "tls" section), once a client asked for it. */
static void print_tls(const struct json *doc)
{
	const struct json *t = json_get(doc, "tls");

	if (!t || json_num(t, "starttls") <= 0)
		return;
	printf("tls: %.0f STARTTLS, %.0f handshakes (%.0f kernel TLS, %.0f userspace, %.0f with a client "
	       "certificate), %.0f failed\n\n",
	       json_num(t, "starttls"), json_num(t, "handshakes"), json_num(t, "kernel_tls"), json_num(t, "userspace_tls"),
	       json_num(t, "mutual"), json_num(t, "handshake_failures"));
}

/* [rnfsd] loops > 1: each loop's TCP connections and busy time (the "loops" section). */
static void print_loops(const struct json *loops)
{
	if (!loops || loops->type != JSON_ARR)
		return;
	printf("event loops:");
	for (size_t i = 0; i < loops->n; i++)
		printf("%s %zu: %.0f TCP connections, %.1f s busy", i ? ";" : "", i,
		       json_num(&loops->items[i], "tcp_connections"), json_num(&loops->items[i], "busy_s"));
	printf("\n");
}

/* The loop's and the workers' busy time, and the bytes each transport moved. */
static void print_usage(const struct json *doc)
{
	const struct json *u = json_get(doc, "usage"), *b = json_get(doc, "transport_bytes");
	const struct json *tcp = b ? json_get(b, "tcp") : NULL, *rdma = b ? json_get(b, "rdma") : NULL;
	const struct json *udp = b ? json_get(b, "udp") : NULL;
	const double mib = 1024.0 * 1024.0;

	if (!u || !tcp || !rdma)
		return;
	printf("event loop %.1f s busy (CPU); workers %.0f of %.0f busy, %.0f queued, %.1f s busy in all\n",
	       json_num(u, "loop_busy_s"), json_num(u, "workers_busy"), json_num(u, "workers"), json_num(u, "queued"),
	       json_num(u, "workers_busy_s"));
	print_loops(json_get(doc, "loops"));
	printf("bytes: tcp %.1f MiB received, %.1f MiB sent; rdma %.1f MiB received, %.1f MiB sent",
	       json_num(tcp, "received") / mib, json_num(tcp, "sent") / mib, json_num(rdma, "received") / mib,
	       json_num(rdma, "sent") / mib);
	if (udp)
		printf("; udp %.1f MiB received, %.1f MiB sent", json_num(udp, "received") / mib,
		       json_num(udp, "sent") / mib);
	printf("\n\n");
}

static int print_table(const char *doc_text, size_t len)
{
	struct json_parser ps = {.p = doc_text, .end = doc_text + len};
	struct json doc = {0};

	if (json_parse_value(&ps, &doc, 0) != 0 || doc.type != JSON_OBJ) {
		fprintf(stderr, "rnfsctl: the daemon's answer is not a JSON object\n");
		json_free(&doc);
		return -1;
	}
	if (json_get(&doc, "error")) {
		fprintf(stderr, "rnfsctl: daemon says: %s\n", json_text(&doc, "error"));
		json_free(&doc);
		return -1;
	}
	const struct json *tot = json_get(&doc, "totals");
	char up[32];
	fmt_duration(up, sizeof(up), json_num(&doc, "uptime_s"));
	double nexp = json_num(&doc, "exports"), nconn = json_num(tot, "connections");
	printf("rnfsd %s, pid %.0f, up %s: %.0f export%s, %.0f connection%s (%.0f tcp, %.0f rdma), "
	       "%.0f calls, %.0f errors\n\n",
	       json_text(&doc, "version"), json_num(&doc, "pid"), up, nexp, nexp == 1 ? "" : "s",
	       nconn, nconn == 1 ? "" : "s", json_num(tot, "tcp"), json_num(tot, "rdma"),
	       json_num(tot, "calls"), json_num(tot, "errors"));
	/* rnfsd.conf(5) inline-calls: how many never went to a worker. */
	printf("inline calls: %.0f answered on the receiving thread, %.0f pauses after a slow one\n\n",
	       json_num(tot, "inline_calls"), json_num(tot, "inline_paused"));
	print_usage(&doc);
	print_rdma_memory(&doc);
	print_tls(&doc);
	print_procedures(&doc, "procedures", "PROCEDURE", 12);
	printf("\n");
	print_nfs4(&doc);
	print_export_stats(&doc);
	print_pnfs_ds(&doc);
	print_resources(&doc);
	print_rpc_auth(&doc);
	print_connections(&doc);
	json_free(&doc);
	return 0;
}

/* ---- commands ---- */

/* The daemon's {"error": ...}, if the answer is one (printed): true. */
static bool answer_is_error(const char *text, size_t len)
{
	struct json_parser ps = {.p = text, .end = text + len};
	struct json doc = {0};
	bool err = false;

	if (json_parse_value(&ps, &doc, 0) == 0 && json_get(&doc, "error")) {
		fprintf(stderr, "rnfsctl: %s\n", json_text(&doc, "error"));
		err = true;
	}
	json_free(&doc);
	return err;
}

/* "export list": one row per client spec, the export's columns on its first. */
static int print_exports(const char *text, size_t len)
{
	struct json_parser ps = {.p = text, .end = text + len};
	struct json doc = {0};
	const struct json *ex;

	if (json_parse_value(&ps, &doc, 0) != 0 || !(ex = json_get(&doc, "exports")) || ex->type != JSON_ARR) {
		fprintf(stderr, "rnfsctl: the daemon's answer has no export list\n");
		json_free(&doc);
		return -1;
	}
	printf("%-32s %-10s %-6s %s\n", "PATH", "ID", "FS", "CLIENT(OPTIONS)");
	for (size_t i = 0; i < ex->n; i++) {
		const struct json *e = &ex->items[i], *cl = json_get(e, "clients");

		printf("%-32s %#-10lx %-6s", json_text(e, "path"), (unsigned long)json_num(e, "id"), json_text(e, "fs"));
		for (size_t k = 0; cl && cl->type == JSON_ARR && k < cl->n; k++)
			printf("%*s%s(%s)\n", k ? 51 : 1, "",
			       json_text(&cl->items[k], "client"), json_text(&cl->items[k], "options"));
		if (!cl || cl->type != JSON_ARR || cl->n == 0)
			printf("\n");
	}
	json_free(&doc);
	return 0;
}

/* The address part of a connection's peer ("127.0.0.1:812", "[::1]:812") into buf. */
static void peer_addr(const char *peer, char *buf, size_t len)
{
	const char *colon = strrchr(peer, ':');
	size_t n = colon ? (size_t)(colon - peer) : strlen(peer);

	if (peer[0] == '[' && n >= 2)
		peer++, n -= 2;
	snprintf(buf, len, "%.*s", (int)n, peer);
}

/* The transports of the connections (stats document conns) from addr, as "tcp,rdma", or "-". */
static void addr_transports(const struct json *conns, const char *addr, char *buf, size_t len)
{
	bool tcp = false, rdma = false;
	char a[64];

	for (size_t i = 0; conns && conns->type == JSON_ARR && i < conns->n; i++) {
		peer_addr(json_text(&conns->items[i], "peer"), a, sizeof(a));
		if (!strcmp(a, addr)) {
			tcp |= !strcmp(json_text(&conns->items[i], "transport"), "tcp");
			rdma |= !strcmp(json_text(&conns->items[i], "transport"), "rdma");
		}
	}
	snprintf(buf, len, "%s%s%s", tcp ? "tcp" : "", tcp && rdma ? "," : "", rdma ? "rdma" : tcp ? "" : "-");
}

/* The bytes received and sent by the connections (stats document conns) from addr now open. */
static void addr_bytes(const struct json *conns, const char *addr, double *rx, double *tx)
{
	char a[64];

	*rx = *tx = 0;
	for (size_t i = 0; conns && conns->type == JSON_ARR && i < conns->n; i++) {
		peer_addr(json_text(&conns->items[i], "peer"), a, sizeof(a));
		if (!strcmp(a, addr)) {
			*rx += json_num(&conns->items[i], "rx_bytes");
			*tx += json_num(&conns->items[i], "tx_bytes");
		}
	}
}

/* "client list": NFSv4 client records and NLM hosts (answer), with the transports of their
 * connections and the other connected addresses (the stats document). */
static int print_clients(const char *text, size_t len, const char *stats, size_t slen)
{
	struct json_parser ps = {.p = text, .end = text + len}, ss = {.p = stats, .end = stats + slen};
	struct json doc = {0}, st = {0};
	const struct json *c, *h, *conns;
	char tr[16];

	if (json_parse_value(&ps, &doc, 0) != 0 || !(c = json_get(&doc, "nfs4_clients")) || c->type != JSON_ARR ||
	    !(h = json_get(&doc, "nlm_hosts")) || h->type != JSON_ARR) {
		fprintf(stderr, "rnfsctl: the daemon's answer has no client list\n");
		json_free(&doc);
		return -1;
	}
	conns = stats && json_parse_value(&ss, &st, 0) == 0 ? json_get(&st, "connections") : NULL;
	printf("%-5s %-18s %-28s %-7s %-9s %6s %6s %8s %6s %7s %12s %12s\n", "KIND", "CLIENT", "ADDRESS", "VERSION",
	       "XPRT", "OPENS", "LOCKS", "IDLE(s)", "DELEGS", "LAYOUTS", "RX(bytes)", "TX(bytes)");
	for (size_t i = 0; i < c->n; i++) {
		const struct json *e = &c->items[i];
		double rx, tx;

		addr_transports(conns, json_text(e, "address"), tr, sizeof(tr));
		addr_bytes(conns, json_text(e, "address"), &rx, &tx);
		printf("%-5s %-18s %-28s %-7s %-9s %6.0f %6.0f %8.0f %6.0f %7.0f %12.0f %12.0f%s\n", "nfs4",
		       json_text(e, "clientid"), json_text(e, "address"), json_text(e, "version"), tr,
		       json_num(e, "opens"), json_num(e, "locks"), json_num(e, "idle_s"), json_num(e, "delegations"),
		       json_num(e, "layouts"), rx, tx, json_num(e, "confirmed") ? "" : " (unconfirmed)");
	}
	for (size_t i = 0; i < h->n; i++)
		printf("%-5s %-18s %-28s %-7s %-9s %6s %6.0f %7s %8s\n", "nlm", json_text(&h->items[i], "host"), "-",
		       "nlm4", "-", "-", json_num(&h->items[i], "locks"), "-", "-");
	for (size_t i = 0; conns && conns->type == JSON_ARR && i < conns->n; i++) {
		const struct json *e = &conns->items[i];

		printf("%-5s %-18s %-28s %-7s %-9s %6s %6s %8s %6s %7s %12.0f %12.0f  %.0f calls\n", "conn", "-",
		       json_text(e, "peer"), "-", json_text(e, "transport"), "-", "-", "-", "-", "-",
		       json_num(e, "rx_bytes"), json_num(e, "tx_bytes"), json_num(e, "calls"));
	}
	json_free(&st);
	json_free(&doc);
	return 0;
}

/* "layouts": one row per client and file it holds layouts of (the daemon's first 4096), then the data
 * servers' table of the statistics (stats: layouts sent there, errors reported of each). */
static int print_layouts(const char *text, size_t len, const char *stats, size_t slen)
{
	struct json_parser ps = {.p = text, .end = text + len}, sp = {.p = stats, .end = stats + slen};
	struct json doc = {0}, sdoc = {0};
	const struct json *l;

	if (json_parse_value(&ps, &doc, 0) != 0 || !(l = json_get(&doc, "layouts")) || l->type != JSON_ARR) {
		fprintf(stderr, "rnfsctl: the daemon's answer has no layout list\n");
		json_free(&doc);
		return -1;
	}
	printf("%-18s %-10s %-7s %6s %-12s %s\n", "CLIENT", "EXPORT", "IOMODES", "SEQID", "RECALLED(s)", "FILEHANDLE");
	for (size_t i = 0; i < l->n; i++) {
		const struct json *e = &l->items[i];
		char rec[24] = "-";

		if (json_num(e, "recalled"))
			snprintf(rec, sizeof(rec), "%.0f", json_num(e, "recalled_s"));
		printf("%-18s %-10.0f %-7s %6.0f %-12s %s\n", json_text(e, "clientid"), json_num(e, "export_id"),
		       json_text(e, "iomodes"), json_num(e, "seqid"), rec, json_text(e, "fh"));
	}
	json_free(&doc);
	if (stats && json_parse_value(&sp, &sdoc, 0) == 0) {
		printf("\n");
		print_pnfs_data_servers(&sdoc);
	}
	json_free(&sdoc);
	return 0;
}

/* A change's {"ok": "what was done"}. */
static void print_ok(const char *text, size_t len)
{
	struct json_parser ps = {.p = text, .end = text + len};
	struct json doc = {0};

	if (json_parse_value(&ps, &doc, 0) == 0)
		printf("rnfsd: %s\n", json_text(&doc, "ok"));
	json_free(&doc);
}

/* argv[0..argc) after "export" (--save anywhere, or save from before "export"): the request line in
 * req. 0, or 2 (usage). */
static int export_request(int argc, char **argv, bool save, char *req, size_t len)
{
	size_t n;
	int k = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--save"))
			save = true;
		else
			argv[k++] = argv[i];
	}
	argc = k;
	if (argc == 0)
		return 2;

	if (argc == 1 && !strcmp(argv[0], "list") && !save) {
		snprintf(req, len, "export\tlist\n");
		return 0;
	}
	if (!((argc == 3 && !strcmp(argv[0], "add")) || ((argc == 2 || argc == 3) && !strcmp(argv[0], "remove"))))
		return 2;
	n = (size_t)snprintf(req, len, "export\t%s%s", argv[0], save ? "-save" : "");
	for (int i = 1; i < argc && n < len; i++) {
		if (strpbrk(argv[i], "\t\n")) {
			fprintf(stderr, "rnfsctl: tabs and newlines are not allowed in '%s'\n", argv[i]);
			return 2;
		}
		n += (size_t)snprintf(req + n, len - n, "\t%s", argv[i]);
	}
	if (n + 2 > len) {
		fprintf(stderr, "rnfsctl: arguments too long\n");
		return 2;
	}
	snprintf(req + n, len - n, "\n");
	return 0;
}

/* Send req and show the answer: the stats tables, the export list, or the change done. */
static int run(const char *path, const char *req, bool json, int kind)
{
	size_t len;
	char *doc = rnfsctl_fetch(path, req, &len);
	int rc = 0;

	if (!doc)
		return 1;
	if (answer_is_error(doc, len))
		rc = 1;
	else if (json)
		fwrite(doc, 1, len, stdout);
	else if (kind == 0)
		rc = print_table(doc, len) ? 1 : 0;
	else if (kind == 1)
		rc = print_exports(doc, len) ? 1 : 0;
	else if (kind == 3) {
		size_t slen = 0;
		char *stats = rnfsctl_fetch(path, "stats\n", &slen);

		rc = print_clients(doc, len, stats, slen) ? 1 : 0;
		free(stats);
	} else if (kind == 4) {
		size_t slen = 0;
		char *stats = rnfsctl_fetch(path, "stats\n", &slen);

		rc = print_layouts(doc, len, stats, slen) ? 1 : 0;
		free(stats);
	}
	else
		print_ok(doc, len);
	free(doc);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rnfsctl [-s SOCKET] [--json] [-v] [stats]\n"
		   "       rnfsctl [-s SOCKET] [--json] export list\n"
		   "       rnfsctl [-s SOCKET] export add [--save] PATH CLIENT(OPTIONS)\n"
		   "       rnfsctl [-s SOCKET] export remove [--save] PATH [CLIENT]\n"
		   "       rnfsctl [-s SOCKET] [--json] client list\n"
		   "       rnfsctl [-s SOCKET] client revoke CLIENTID|ADDRESS|NLM-HOST\n"
		   "       rnfsctl [-s SOCKET] [--json] layouts\n"
		   "       rnfsctl [-s SOCKET] unlock --export PATH\n"
		   "  -s, --socket SOCKET  the daemon's control socket (default %s)\n"
		   "  -j, --json           print the daemon's JSON answer as it came\n"
		   "  -v, --verbose        stats: also the RPCSEC_GSS contexts' principals\n"
		   "      --save           also write the change into the exports file\n"
		   "  -h, --help, --version\n", RNFSCTL_DEFAULT_SOCKET);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{"verbose", no_argument, NULL, 'v'},
		{"save", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0},
	};
	const char *path = RNFSCTL_DEFAULT_SOCKET;
	char req[PATH_MAX + 512] = "stats\n";
	bool json = false, save = false;
	int o, kind = 0;

	/* --json, --save, -v may follow the command ("stats --json", "export add ... --save"); getopt
	 * stops at the command, so that an export's "-ro" style argument is never taken for options. */
	for (int i = 1, k = 1; i <= argc; i++) {
		if (i < argc && (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j")))
			json = true;
		else if (i < argc && !strcmp(argv[i], "--save"))
			save = true;
		else if (i < argc && (!strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v")))
			snprintf(req, sizeof(req), "stats verbose\n");
		else
			argv[k++] = argv[i]; /* argv[argc] (NULL) moves too */
		if (i == argc)
			argc = k - 1;
	}
	while ((o = getopt_long(argc, argv, "+s:jvh", opts, NULL)) != -1) {
		switch (o) {
		case 'v':
			snprintf(req, sizeof(req), "stats verbose\n");
			break;
		case 's':
			path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'S':
			save = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("rnfsctl %s\n", RNFSD_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc && !strcmp(argv[optind], "export")) {
		if (export_request(argc - optind - 1, argv + optind + 1, save, req, sizeof(req)) != 0) {
			usage(stderr);
			return 2;
		}
		kind = strncmp(req, "export\tlist", 11) ? 2 : 1;
	} else if (optind + 2 == argc && !strcmp(argv[optind], "client") && !strcmp(argv[optind + 1], "list")) {
		snprintf(req, sizeof(req), "client\tlist\n");
		kind = 3;
	} else if (optind + 1 == argc && !strcmp(argv[optind], "layouts")) {
		snprintf(req, sizeof(req), "layouts\tlist\n");
		kind = 4;
	} else if (optind + 3 == argc && !strcmp(argv[optind], "client") && !strcmp(argv[optind + 1], "revoke")) {
		if (strpbrk(argv[optind + 2], "\t\n") || strlen(argv[optind + 2]) > 255) {
			usage(stderr);
			return 2;
		}
		snprintf(req, sizeof(req), "client\trevoke\t%s\n", argv[optind + 2]);
		kind = 2;
	} else if (optind + 3 == argc && !strcmp(argv[optind], "unlock") && !strcmp(argv[optind + 1], "--export")) {
		if (strpbrk(argv[optind + 2], "\t\n") || strlen(argv[optind + 2]) >= PATH_MAX) {
			usage(stderr);
			return 2;
		}
		snprintf(req, sizeof(req), "unlock\t%s\n", argv[optind + 2]);
		kind = 2;
	} else if (optind < argc && (strcmp(argv[optind], "stats") || optind + 1 < argc)) {
		fprintf(stderr, "rnfsctl: unknown command '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	return run(path, req, json, kind);
}
