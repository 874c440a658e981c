/*
 * exports.c - /etc/rnfsd/exports: the exports(5) parser (see exports.h and
 * rnfsd-exports(5)). Client matching is in exports_match.c, the name
 * resolver and reverse-DNS cache in exports_resolve.c.
 *
 * Parsing: a cursor walks the text once. Backslash-newline is white space
 * (the line counter still advances, so errors name the physical line);
 * '#' at the start of a word comments out the rest of the line. Each line
 * is: PATH { -DEFAULTS | CLIENT[(OPTIONS)] }. The table is built in
 * parser-owned arrays and handed to the caller only when the whole file is
 * valid; on any error everything is freed and the table left empty.
 *
 * Ownership: struct export_table and everything it points to belong to the
 * caller after a successful exports_parse()/exports_load(), released with
 * exports_free().
 */
#include "conf/conf_file.h"
#include "conf/exports.h"
#include "conf/exports_internal.h"
#include "conf/exports_priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An exports file larger than this is certainly a mistake. */
#define EXPORTS_MAX_FILE_SIZE (16 * 1024 * 1024)
/* Longest single option ("fsid=<uuid>" is the longest legitimate one). */
#define EXPORTS_MAX_OPTION 128
/* Longest "(...)" list: every option once with long values fits many times over. */
#define EXPORTS_MAX_OPTION_LIST 4096
#define EXPORTS_ANON_ID 65534u

/* ---- options ---- */

enum export_option_id {
	OPT_RW, OPT_RO,
	OPT_ROOT_SQUASH, OPT_NO_ROOT_SQUASH, OPT_ALL_SQUASH, OPT_NO_ALL_SQUASH,
	OPT_ANONUID, OPT_ANONGID,
	OPT_SECURE, OPT_INSECURE,
	OPT_SEC, OPT_XPRTSEC, OPT_FSID, OPT_FS, OPT_PNFS,
	OPT_SYNC, OPT_ASYNC,
	OPT_IGNORED, /* accepted for knfsd compatibility, no effect */
};

const struct exports_option exports_options[] = {
	{ "rw", OPT_RW, false },
	{ "ro", OPT_RO, false },
	{ "root_squash", OPT_ROOT_SQUASH, false },
	{ "no_root_squash", OPT_NO_ROOT_SQUASH, false },
	{ "all_squash", OPT_ALL_SQUASH, false },
	{ "no_all_squash", OPT_NO_ALL_SQUASH, false },
	{ "anonuid", OPT_ANONUID, true },
	{ "anongid", OPT_ANONGID, true },
	{ "secure", OPT_SECURE, false },
	{ "insecure", OPT_INSECURE, false },
	{ "sec", OPT_SEC, true },
	{ "xprtsec", OPT_XPRTSEC, true },
	{ "fsid", OPT_FSID, true },
	{ "fs", OPT_FS, true },
	{ "pnfs", OPT_PNFS, true },
	{ "sync", OPT_SYNC, false },
	{ "async", OPT_ASYNC, false },
	{ "subtree_check", OPT_IGNORED, false },
	{ "no_subtree_check", OPT_IGNORED, false },
	{ "wdelay", OPT_IGNORED, false },
	{ "no_wdelay", OPT_IGNORED, false },
	{ "hide", OPT_IGNORED, false },
	{ "nohide", OPT_IGNORED, false },
	{ "crossmnt", OPT_IGNORED, false },
};
const unsigned exports_noptions = sizeof(exports_options) / sizeof(exports_options[0]);

/*
 * Options while parsing. exports(5) keeps root_squash and all_squash as two
 * flags (all_squash,no_root_squash still squashes root); they are folded
 * into export_opts.squash when a client is added.
 */
struct parse_opts {
	struct export_opts o;
	bool root_squash;
	bool all_squash;
	bool fsid_set;
	uint32_t fsid;
	char fs[EXPORT_FS_NAME_MAX + 1]; /* fs=NAME, "" if not given */
	enum export_pnfs pnfs;           /* pnfs=flexfiles, NONE if not given */
};

static void parse_opts_default(struct parse_opts *po)
{
	memset(po, 0, sizeof(*po));
	po->o.rw = false;
	po->o.anonuid = EXPORTS_ANON_ID;
	po->o.anongid = EXPORTS_ANON_ID;
	po->o.secure = true;
	po->o.sec = EXPORT_SEC_SYS;
	po->o.sec_order[0] = 1; /* EXPORT_SEC_SYS */
	po->o.xprtsec = EXPORT_XPRTSEC_ALL;
	po->o.sync = true;
	po->root_squash = true;
}

static struct export_opts parse_opts_final(const struct parse_opts *po)
{
	struct export_opts o = po->o;

	o.squash = po->all_squash ? EXPORT_ALL_SQUASH :
		   po->root_squash ? EXPORT_ROOT_SQUASH : EXPORT_NO_ROOT_SQUASH;
	return o;
}

/* ---- the parser state and its errors ---- */

struct exp_parser {
	const char *name;           /* file name for messages */
	const char *p, *end;        /* cursor over the NUL-terminated text */
	unsigned line;              /* physical line of p, from 1 */
	char *err;
	size_t errlen;
	struct export *exports;     /* the table being built */
	unsigned n, cap;
	struct export_client *clients; /* clients of the current line */
	unsigned nclients, ccap;
};

static int exp_error(struct exp_parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Always returns -1, after writing "NAME:LINE: message" into err. */
static int exp_error(struct exp_parser *ps, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	conf_verror(ps->err, ps->errlen, ps->name, ps->line, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- the lexer ---- */

static bool at_continuation(const struct exp_parser *ps)
{
	const char *p = ps->p;

	if (p >= ps->end || *p != '\\')
		return false;
	if (p + 1 < ps->end && p[1] == '\n')
		return true;
	return p + 2 < ps->end && p[1] == '\r' && p[2] == '\n';
}

static void skip_continuation(struct exp_parser *ps)
{
	ps->p += ps->p[1] == '\n' ? 2 : 3;
	ps->line++;
}

/* Blanks and backslash-newlines. */
static void skip_blank(struct exp_parser *ps)
{
	while (ps->p < ps->end) {
		if (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r')
			ps->p++;
		else if (at_continuation(ps))
			skip_continuation(ps);
		else
			break;
	}
}

/* End of the logical line: end of text, newline, or a comment. */
static bool at_line_end(const struct exp_parser *ps)
{
	return ps->p >= ps->end || *ps->p == '\n' || *ps->p == '#';
}

/* The end of a word: blank, end of line, or a continuation. */
static bool at_word_end(const struct exp_parser *ps)
{
	char c;

	if (ps->p >= ps->end)
		return true;
	c = *ps->p;
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || at_continuation(ps);
}

/* Past the comment (if any) and the newline ending this line. */
static void skip_line_end(struct exp_parser *ps)
{
	while (ps->p < ps->end && *ps->p != '\n')
		ps->p++;
	if (ps->p < ps->end) {
		ps->p++;
		ps->line++;
	}
}

static int octal_digit(char c)
{
	return c >= '0' && c <= '7' ? c - '0' : -1;
}

/* "\ooo" at p (three octal digits, value 1..255) -> *byte; 0 or -1. */
static int read_escape(struct exp_parser *ps, char *byte)
{
	int v = 0;

	if (ps->end - ps->p < 4)
		return -1;
	for (int i = 1; i <= 3; i++) {
		int d = octal_digit(ps->p[i]);

		if (d < 0)
			return -1;
		v = v * 8 + d;
	}
	if (v == 0 || v > 255)
		return -1;
	*byte = (char)v;
	ps->p += 4;
	return 0;
}

/*
 * One word into buf (size bytes): unquoted and "quoted" parts, \ooo escapes.
 * Stops at a blank, the end of the line, a continuation, and, outside
 * quotes, at '(' when stop_paren. Returns its length, or -1 (error set).
 */
static int read_word(struct exp_parser *ps, char *buf, size_t size, bool stop_paren, const char *what)
{
	bool quoted = false;
	size_t n = 0;
	char c;

	while (ps->p < ps->end) {
		c = *ps->p;
		if (c == '"') {
			quoted = !quoted;
			ps->p++;
			continue;
		}
		if (c == '\n' && quoted)
			break;
		if (!quoted && (at_word_end(ps) || (stop_paren && c == '(')))
			break;
		if (c == '\\') {
			if (read_escape(ps, &c) < 0)
				return exp_error(ps, "bad escape in %s: write a byte as \\ooo "
						 "(three octal digits, e.g. \\040 for a space)", what);
		} else {
			ps->p++;
		}
		if (n + 1 >= size)
			return exp_error(ps, "%s too long (at most %zu bytes)", what, size - 1);
		buf[n++] = c;
	}
	if (quoted)
		return exp_error(ps, "unterminated quote in %s", what);
	buf[n] = '\0';
	return (int)n;
}

/* ---- paths ---- */

/*
 * Absolute path -> canonical form: no empty or "." components, no trailing
 * '/'. Relative paths, ".." components and overlong paths are refused.
 */
static int path_normalise(const char *in, char *out, size_t outlen, const char **why)
{
	size_t n = 0;
	const char *p = in;

	if (in[0] != '/') {
		*why = "not an absolute path";
		return -1;
	}
	while (*p) {
		const char *comp;
		size_t len;

		while (*p == '/')
			p++;
		comp = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - comp);
		if (len == 0 || (len == 1 && comp[0] == '.'))
			continue;
		if (len == 2 && comp[0] == '.' && comp[1] == '.') {
			*why = "'..' is not allowed in a path";
			return -1;
		}
		if (n + 1 + len + 1 > outlen) {
			*why = "path too long";
			return -1;
		}
		out[n++] = '/';
		memcpy(out + n, comp, len);
		n += len;
	}
	if (n == 0) {
		if (outlen < 2) {
			*why = "path too long";
			return -1;
		}
		out[n++] = '/';
	}
	out[n] = '\0';
	return 0;
}

/* ---- options ---- */

static int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v = 0;

	if (*s == '\0')
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* fsid=N | root | UUID (32 hex digits, '-' and ':' separators allowed; XOR of its four 32-bit words). */
static int parse_fsid(const char *s, uint32_t *out)
{
	uint32_t words[4] = { 0 };
	unsigned digits = 0;

	if (strcmp(s, "root") == 0) {
		*out = 0;
		return 0;
	}
	if (parse_u32(s, out) == 0)
		return 0;
	for (; *s; s++) {
		int d = hex_digit(*s);

		if (*s == '-' || *s == ':')
			continue;
		if (d < 0 || digits == 32)
			return -1;
		words[digits / 8] = (words[digits / 8] << 4) | (uint32_t)d;
		digits++;
	}
	if (digits != 32)
		return -1;
	*out = words[0] ^ words[1] ^ words[2] ^ words[3];
	return 0;
}

/* sec=FLAVOR[:FLAVOR...]: sys, none, krb5, krb5i, krb5p (exports(5)), kept in
 * the order written (SECINFO answers in it, RFC 8881 §2.6.2); a repeat counts once. */
const char *export_sec_name(unsigned b)
{
	static const char *const names[EXPORT_SEC_COUNT] = { "none", "sys", "krb5", "krb5i", "krb5p" };

	return b < EXPORT_SEC_COUNT ? names[b] : "?";
}

static int parse_sec(struct exp_parser *ps, char *s, struct export_opts *o)
{
	uint32_t sec = 0, n = 0, b;
	char *f, *next;

	for (f = s; f; f = next) {
		next = strchr(f, ':');
		if (next)
			*next++ = '\0';
		for (b = 0; b < EXPORT_SEC_COUNT && strcmp(f, export_sec_name(b)) != 0; b++)
			;
		if (*f == '\0')
			return exp_error(ps, "empty flavor in sec= (write sec=sys, sec=none or sec=sys:none)");
		if (b == EXPORT_SEC_COUNT)
			return exp_error(ps, "unknown security flavor '%.40s' (sys, none, krb5, krb5i, krb5p)", f);
		if (!(sec & (1u << b)))
			o->sec_order[n++] = (uint8_t)b;
		sec |= 1u << b;
	}
	o->sec = sec;
	return 0;
}

static const char *const xprtsec_names[] = { "none", "tls", "mtls" };

int export_xprtsec_parse(const char *s, uint32_t *mask)
{
	uint32_t m = 0;

	for (const char *f = s;;) {
		size_t n = strcspn(f, ":");
		unsigned b = 0;

		while (b < 3 && (strlen(xprtsec_names[b]) != n || strncmp(f, xprtsec_names[b], n) != 0))
			b++;
		if (b == 3)
			return -1; /* empty or unknown */
		m |= 1u << b;
		if (f[n] == '\0')
			break;
		f += n + 1;
	}
	*mask = m;
	return 0;
}

void export_xprtsec_format(uint32_t mask, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned b = 0; b < 3; b++)
		if (mask & (1u << b))
			at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%s", at ? ":" : "",
					       xprtsec_names[b]);
}

const struct export_client *exports_xprtsec_unmet(const struct export_table *t, bool tls, bool ca,
						  const struct export **e)
{
	uint32_t can = EXPORT_XPRTSEC_NONE | (tls ? EXPORT_XPRTSEC_TLS : 0) | (tls && ca ? EXPORT_XPRTSEC_MTLS : 0);

	for (unsigned i = 0; i < t->n; i++)
		for (unsigned j = 0; j < t->exports[i].nclients; j++)
			if (!(t->exports[i].clients[j].opts.xprtsec & can)) {
				*e = &t->exports[i];
				return &t->exports[i].clients[j];
			}
	return NULL;
}

static int apply_option(struct exp_parser *ps, const struct exports_option *opt, char *val,
			struct parse_opts *po)
{
	switch ((enum export_option_id)opt->id) {
	case OPT_RW: po->o.rw = true; break;
	case OPT_RO: po->o.rw = false; break;
	case OPT_ROOT_SQUASH: po->root_squash = true; break;
	case OPT_NO_ROOT_SQUASH: po->root_squash = false; break;
	case OPT_ALL_SQUASH: po->all_squash = true; break;
	case OPT_NO_ALL_SQUASH: po->all_squash = false; break;
	case OPT_SECURE: po->o.secure = true; break;
	case OPT_INSECURE: po->o.secure = false; break;
	case OPT_SYNC: po->o.sync = true; break;
	case OPT_ASYNC: po->o.sync = false; break;
	case OPT_IGNORED: break;
	case OPT_ANONUID:
	case OPT_ANONGID: {
		uint32_t id;

		/* (uid_t)-1 means "no change" to chown(2); it cannot be an identity. */
		if (parse_u32(val, &id) < 0 || id == UINT32_MAX)
			return exp_error(ps, "bad %s=%.40s: expected a number 0..4294967294", opt->name, val);
		if (opt->id == OPT_ANONUID)
			po->o.anonuid = id;
		else
			po->o.anongid = id;
		break;
	}
	case OPT_SEC:
		return parse_sec(ps, val, &po->o);
	case OPT_XPRTSEC:
		if (export_xprtsec_parse(val, &po->o.xprtsec) < 0)
			return exp_error(ps, "bad xprtsec=%.40s: expected none, tls, mtls, separated by ':'", val);
		break;
	case OPT_FSID:
		if (parse_fsid(val, &po->fsid) < 0)
			return exp_error(ps, "bad fsid=%.60s: expected a number 0..4294967295, root, "
					 "or a UUID of 32 hex digits", val);
		po->fsid_set = true;
		break;
	case OPT_FS:
		/* fs=NAME: the backend serving the export (backend/registry.c knows the names) */
		if (strlen(val) > EXPORT_FS_NAME_MAX || strspn(val, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(val))
			return exp_error(ps, "bad fs=%.40s: expected a backend name (lower-case letters, digits, "
					 "'_' or '-', at most %u)", val, EXPORT_FS_NAME_MAX);
		snprintf(po->fs, sizeof(po->fs), "%s", val);
		break;
	case OPT_PNFS:
		/* RFC 8435: the flexible-files layout is the only one offered. */
		if (strcmp(val, "flexfiles") != 0)
			return exp_error(ps, "bad pnfs=%.40s: expected flexfiles", val);
		po->pnfs = EXPORT_PNFS_FLEXFILES;
		break;
	}
	return 0;
}

/* One "name" or "name=value" item. */
static int parse_option(struct exp_parser *ps, const char *item, size_t len, struct parse_opts *po)
{
	char buf[EXPORTS_MAX_OPTION + 1];
	char *val;

	if (len == 0)
		return exp_error(ps, "empty option (two commas, or a comma at the start or end)");
	if (len > EXPORTS_MAX_OPTION)
		return exp_error(ps, "option '%.40s...' too long", item);
	memcpy(buf, item, len);
	buf[len] = '\0';
	val = strchr(buf, '=');
	if (val)
		*val++ = '\0';
	for (unsigned i = 0; i < exports_noptions; i++) {
		const struct exports_option *opt = &exports_options[i];

		if (strcmp(opt->name, buf) != 0)
			continue;
		if (opt->takes_value && !val)
			return exp_error(ps, "option '%s' needs a value (%s=...)", buf, buf);
		if (!opt->takes_value && val)
			return exp_error(ps, "option '%s' takes no value", buf);
		if (val && *val == '\0')
			return exp_error(ps, "empty value for option '%s'", buf);
		return apply_option(ps, opt, val, po);
	}
	return exp_error(ps, "unknown option '%s'", buf);
}

/* A comma-separated list of len bytes; later options override earlier ones. */
static int parse_option_list(struct exp_parser *ps, const char *s, size_t len, struct parse_opts *po)
{
	const char *item = s, *end = s + len;

	if (len == 0)
		return exp_error(ps, "empty option list");
	for (const char *p = s; p < end; p++) {
		if (*p == ' ' || *p == '\t' || *p == '"')
			return exp_error(ps, "blank or quote inside an option list");
	}
	for (;;) {
		const char *comma = memchr(item, ',', (size_t)(end - item));
		const char *stop = comma ? comma : end;

		if (parse_option(ps, item, (size_t)(stop - item), po) < 0)
			return -1;
		if (!comma)
			return 0;
		item = comma + 1;
	}
}

/*
 * "(options)" at the cursor; the ')' must end the word. The list may be
 * split by backslash-newlines (dropped with the next line's indentation),
 * and is copied into a bounded buffer for parsing.
 */
static int read_paren_options(struct exp_parser *ps, struct parse_opts *po)
{
	char list[EXPORTS_MAX_OPTION_LIST];
	size_t n = 0;

	ps->p++;
	for (;;) {
		if (ps->p >= ps->end || *ps->p == '\n')
			return exp_error(ps, "unterminated '(' (missing ')')");
		if (at_continuation(ps)) {
			skip_continuation(ps); /* and the next line's indentation */
			while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t'))
				ps->p++;
			continue;
		}
		if (*ps->p == ')')
			break;
		if (n + 1 >= sizeof(list))
			return exp_error(ps, "option list too long (at most %zu bytes)", sizeof(list) - 1);
		list[n++] = *ps->p++;
	}
	ps->p++;
	if (parse_option_list(ps, list, n, po) < 0)
		return -1;
	if (!at_word_end(ps))
		return exp_error(ps, "unexpected text after ')' (separate clients with blanks)");
	return 0;
}

/* "-options" at the cursor: new defaults for the rest of the line. */
static int read_default_options(struct exp_parser *ps, struct parse_opts *defaults)
{
	const char *start = ++ps->p;

	while (!at_word_end(ps))
		ps->p++;
	return parse_option_list(ps, start, (size_t)(ps->p - start), defaults);
}

/* ---- client specs ---- */
/* A contiguous IPv4 netmask -> prefix length 0..32, or -1. */
static int netmask_prefix(const char *s)
{
	struct in_addr in;
	uint32_t m, inv;

	if (inet_pton(AF_INET, s, &in) != 1)
		return -1;
	m = ntohl(in.s_addr);
	inv = ~m;
	if (inv & (inv + 1))
		return -1;
	return __builtin_popcount(m);
}

/* "ADDR/PREFIX" or "A.B.C.D/NETMASK" into c->addr and c->prefix (host bits cleared). */
static int parse_cidr(struct exp_parser *ps, const char *spec, struct export_client *c)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(spec, '/');
	size_t alen = (size_t)(slash - spec);
	uint32_t plen;
	bool v4;
	int mp;

	if (alen == 0 || alen >= sizeof(addr) || strchr(slash + 1, '/'))
		return exp_error(ps, "bad network '%s': expected ADDRESS/PREFIX or A.B.C.D/NETMASK", spec);
	memcpy(addr, spec, alen);
	addr[alen] = '\0';
	if (exports_parse_addr(addr, &c->addr, &v4) < 0)
		return exp_error(ps, "bad network '%s': '%s' is not an IPv4 or IPv6 address", spec, addr);
	if (v4 && strchr(slash + 1, '.')) {
		mp = netmask_prefix(slash + 1);
		if (mp < 0)
			return exp_error(ps, "bad network '%s': netmask is not a contiguous IPv4 mask", spec);
		plen = (uint32_t)mp;
	} else if (parse_u32(slash + 1, &plen) < 0 || plen > (v4 ? 32u : 128u)) {
		return exp_error(ps, "bad network '%s': prefix length must be 0..%u", spec, v4 ? 32 : 128);
	}
	c->prefix = v4 ? 96 + plen : plen;
	exports_addr_mask(&c->addr, c->prefix);
	return 0;
}

/* Characters of a host name, with the glob characters when wildcard. */
static bool host_chars_ok(const char *s, bool wildcard)
{
	for (; *s; s++) {
		char ch = *s;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || ch == '.' || ch == '_')
			continue;
		if (wildcard && strchr("*?[]!^", ch))
			continue;
		return false;
	}
	return true;
}

/* Every '[' in a glob has its ']'. */
static bool glob_brackets_ok(const char *s)
{
	for (; *s; s++) {
		if (*s != '[')
			continue;
		s++;
		if (*s == '!' || *s == '^')
			s++;
		if (*s == ']')
			s++;
		while (*s && *s != ']')
			s++;
		if (!*s)
			return false;
	}
	return true;
}

static int client_push(struct exp_parser *ps, const struct export_client *c)
{
	if (ps->nclients == ps->ccap) {
		unsigned ncap = ps->ccap ? ps->ccap * 2 : 8;
		struct export_client *nc;

		if (ps->ccap > 1u << 20)
			return exp_error(ps, "too many clients for one export");
		nc = realloc(ps->clients, ncap * sizeof(*nc));
		if (!nc)
			return exp_error(ps, "out of memory");
		ps->clients = nc;
		ps->ccap = ncap;
	}
	ps->clients[ps->nclients++] = *c;
	return 0;
}

/* A host name: one NET /128 client per address it resolves to now. */
static int client_host(struct exp_parser *ps, struct export_client *c)
{
	struct in6_addr addrs[EXPORTS_MAX_HOST_ADDRS];
	struct in_addr legacy;
	char why[160] = "";
	int n;

	if (!host_chars_ok(c->spec, false))
		return exp_error(ps, "bad client '%s': not a host name, address, network, "
				 "wildcard or '*'", c->spec);
	/* getaddrinfo would take "10.1" or "0x0a000001" as inet_aton(3) numbers. */
	if (strspn(c->spec, "0123456789.") == strlen(c->spec) || inet_aton(c->spec, &legacy))
		return exp_error(ps, "bad client '%s': not a valid IPv4 address (write all four "
				 "decimal parts, or a network as A.B.C.D/N)", c->spec);
	n = exports_resolver_get()->forward(c->spec, addrs, EXPORTS_MAX_HOST_ADDRS, why, sizeof(why));
	if (n <= 0)
		return exp_error(ps, "cannot resolve host '%s': %s", c->spec, why[0] ? why : "no address");
	for (int i = 0; i < n && i < EXPORTS_MAX_HOST_ADDRS; i++) {
		c->kind = EXPORT_CLIENT_NET;
		c->addr = addrs[i];
		c->prefix = 128;
		if (client_push(ps, c) < 0)
			return -1;
	}
	return 0;
}

/* Classify spec and add its client(s) with options po. */
static int client_add(struct exp_parser *ps, const char *spec, const struct parse_opts *po)
{
	struct export_client c;
	bool v4;

	memset(&c, 0, sizeof(c));
	snprintf(c.spec, sizeof(c.spec), "%s", spec);
	c.opts = parse_opts_final(po);
	if (strcmp(spec, "*") == 0) {
		c.kind = EXPORT_CLIENT_ANY;
		return client_push(ps, &c);
	}
	if (spec[0] == '@')
		return exp_error(ps, "bad client '%s': netgroups are not supported", spec);
	if (strchr(spec, '/')) {
		c.kind = EXPORT_CLIENT_NET;
		if (parse_cidr(ps, spec, &c) < 0)
			return -1;
		return client_push(ps, &c);
	}
	if (exports_parse_addr(spec, &c.addr, &v4) == 0) {
		c.kind = EXPORT_CLIENT_NET;
		c.prefix = 128;
		return client_push(ps, &c);
	}
	if (strpbrk(spec, "*?[")) {
		if (!host_chars_ok(spec, true) || !glob_brackets_ok(spec))
			return exp_error(ps, "bad wildcard '%s': only host name characters and * ? [...]", spec);
		c.kind = EXPORT_CLIENT_WILDCARD;
		return client_push(ps, &c);
	}
	return client_host(ps, &c);
}

/* ---- lines ---- */

static void export_release(struct export *e)
{
	free(e->clients);
	e->clients = NULL;
	e->nclients = 0;
}

static int export_push(struct exp_parser *ps, const struct export *e)
{
	if (ps->n == ps->cap) {
		unsigned ncap = ps->cap ? ps->cap * 2 : 16;
		struct export *ne;

		if (ps->cap > 1u << 24)
			return exp_error(ps, "too many exports");
		ne = realloc(ps->exports, ncap * sizeof(*ne));
		if (!ne)
			return exp_error(ps, "out of memory");
		ps->exports = ne;
		ps->cap = ncap;
	}
	ps->exports[ps->n++] = *e;
	return 0;
}

/* The export's fsid, fs and pnfs come from any client's options; two different ones conflict
 * (pnfs= given for one client is the export's). */
static int export_take_fsid(struct exp_parser *ps, struct export *e, const struct parse_opts *po)
{
	if (po->pnfs)
		e->pnfs = po->pnfs;
	if (po->fs[0] && e->fs[0] && strcmp(po->fs, e->fs))
		return exp_error(ps, "conflicting fs values for %s (%s and %s)", e->path, e->fs, po->fs);
	if (po->fs[0])
		snprintf(e->fs, sizeof(e->fs), "%s", po->fs);
	if (!po->fsid_set)
		return 0;
	if (e->fsid_set && e->fsid != po->fsid)
		return exp_error(ps, "conflicting fsid values for %s (%u and %u)", e->path, e->fsid, po->fsid);
	e->fsid_set = true;
	e->fsid = po->fsid;
	return 0;
}

/* PATH at the cursor into e->path; refuses relative paths and duplicates. */
static int read_export_path(struct exp_parser *ps, struct export *e)
{
	char raw[PATH_MAX];
	const char *why;

	if (read_word(ps, raw, sizeof(raw), false, "path") < 0)
		return -1;
	if (raw[0] == '\0')
		return exp_error(ps, "empty path");
	if (path_normalise(raw, e->path, sizeof(e->path), &why) < 0)
		return exp_error(ps, "bad export path '%.200s': %s", raw, why);
	for (unsigned i = 0; i < ps->n; i++) {
		if (strcmp(ps->exports[i].path, e->path) == 0)
			return exp_error(ps, "%s is already exported at line %u", e->path, ps->exports[i].line);
	}
	return 0;
}

/* One client word with its optional "(options)". */
static int read_client(struct exp_parser *ps, struct export *e, const struct parse_opts *defaults)
{
	struct parse_opts po = *defaults;
	char spec[sizeof(((struct export_client *)0)->spec)];

	if (read_word(ps, spec, sizeof(spec), true, "client") < 0)
		return -1;
	if (spec[0] == '\0')
		return exp_error(ps, "empty client name");
	if (ps->p < ps->end && *ps->p == '(' && read_paren_options(ps, &po) < 0)
		return -1;
	if (export_take_fsid(ps, e, &po) < 0)
		return -1;
	return client_add(ps, spec, &po);
}

static int exports_line(struct exp_parser *ps)
{
	struct parse_opts defaults;
	struct export e;

	skip_blank(ps);
	if (at_line_end(ps)) {
		skip_line_end(ps);
		return 0;
	}
	memset(&e, 0, sizeof(e));
	e.line = ps->line;
	if (read_export_path(ps, &e) < 0)
		return -1;
	parse_opts_default(&defaults);
	ps->nclients = 0;
	for (skip_blank(ps); !at_line_end(ps); skip_blank(ps)) {
		if (*ps->p == '-') {
			if (read_default_options(ps, &defaults) < 0)
				return -1;
		} else if (*ps->p == '(') {
			return exp_error(ps, "options without a client: write '*(...)' for every host "
					 "(no blank between a client and its options)");
		} else if (read_client(ps, &e, &defaults) < 0) {
			return -1;
		}
	}
	if (ps->nclients == 0) {
		if (export_take_fsid(ps, &e, &defaults) < 0 || client_add(ps, "*", &defaults) < 0)
			return -1;
	}
	e.clients = malloc(ps->nclients * sizeof(*e.clients));
	if (!e.clients)
		return exp_error(ps, "out of memory");
	memcpy(e.clients, ps->clients, ps->nclients * sizeof(*e.clients));
	e.nclients = ps->nclients;
	if (export_push(ps, &e) < 0) {
		export_release(&e);
		return -1;
	}
	skip_line_end(ps);
	return 0;
}

static int cmp_id_index(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* File handles carry export_id(): two exports must never share one. */
static int exports_check_ids(struct exp_parser *ps)
{
	uint64_t *keys;
	int rc = 0;

	if (ps->n < 2)
		return 0;
	keys = malloc(ps->n * sizeof(*keys));
	if (!keys)
		return exp_error(ps, "out of memory");
	for (unsigned i = 0; i < ps->n; i++)
		keys[i] = (uint64_t)export_id(&ps->exports[i]) << 32 | i;
	qsort(keys, ps->n, sizeof(*keys), cmp_id_index);
	for (unsigned i = 1; i < ps->n && rc == 0; i++) {
		const struct export *a, *b;

		if (keys[i] >> 32 != keys[i - 1] >> 32)
			continue;
		a = &ps->exports[(uint32_t)keys[i - 1]];
		b = &ps->exports[(uint32_t)keys[i]];
		ps->line = b->line;
		rc = exp_error(ps, "%s has the same export id (0x%08x) as %s at line %u; "
			       "give one of them a distinct fsid=", b->path, export_id(b), a->path, a->line);
	}
	free(keys);
	return rc;
}

int exports_parse(const char *text, const char *name, struct export_table *t, char *err, size_t errlen)
{
	struct exp_parser ps = {
		.name = name ? name : "(exports)", .p = text, .end = text ? text + strlen(text) : NULL,
		.line = 1, .err = err, .errlen = errlen,
	};
	int rc = 0;

	if (err && errlen)
		err[0] = '\0';
	t->exports = NULL;
	t->n = 0;
	if (!text)
		return exp_error(&ps, "no text");
	while (rc == 0 && ps.p < ps.end)
		rc = exports_line(&ps);
	if (rc == 0)
		rc = exports_check_ids(&ps);
	free(ps.clients);
	if (rc < 0) {
		for (unsigned i = 0; i < ps.n; i++)
			export_release(&ps.exports[i]);
		free(ps.exports);
		return -1;
	}
	t->exports = ps.exports;
	t->n = ps.n;
	return 0;
}

int exports_load(const char *path, struct export_table *t, char *err, size_t errlen)
{
	char tmp[1];
	char *text;
	int rc;

	t->exports = NULL;
	t->n = 0;
	if (!err || errlen == 0) {
		err = tmp;
		errlen = sizeof(tmp);
	}
	text = conf_read_file(path, EXPORTS_MAX_FILE_SIZE, err, errlen);
	if (!text)
		return -1;
	rc = exports_parse(text, path, t, err, errlen);
	free(text);
	return rc;
}

void exports_free(struct export_table *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < t->n; i++)
		export_release(&t->exports[i]);
	free(t->exports);
	t->exports = NULL;
	t->n = 0;
}

const struct export *exports_find(const struct export_table *t, const char *path)
{
	char norm[PATH_MAX];
	const char *why;

	if (!t || !path || path_normalise(path, norm, sizeof(norm), &why) < 0)
		return NULL;
	for (unsigned i = 0; i < t->n; i++) {
		if (strcmp(t->exports[i].path, norm) == 0)
			return &t->exports[i];
	}
	return NULL;
}

/*
 * FNV-1a, 32 bits (offset basis 2166136261, prime 16777619) over the bytes
 * of the normalised path, without its NUL. File handles depend on this
 * value: it must never change.
 */
static uint32_t fnv1a32(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 16777619u;
	}
	return h;
}

uint32_t export_id(const struct export *e)
{
	return e->fsid_set ? e->fsid : fnv1a32(e->path);
}
