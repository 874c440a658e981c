/*
 * exports_edit.c - see exports_edit.h. Every edit works on fresh copies of
 * the arrays it changes and swaps them in only when it succeeds, so a
 * refused edit leaves the table as it was.
 */
#include "conf/exports_edit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int edit_error(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int edit_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int export_dup_one(const struct export *src, struct export *dst)
{
	*dst = *src;
	dst->clients = malloc((src->nclients ? src->nclients : 1) * sizeof(*dst->clients));
	if (!dst->clients)
		return -1;
	memcpy(dst->clients, src->clients, src->nclients * sizeof(*dst->clients));
	return 0;
}

int exports_dup(const struct export_table *src, struct export_table *dst)
{
	dst->n = 0;
	dst->exports = calloc(src->n + 1, sizeof(*dst->exports)); /* + 1: room for an add */
	if (!dst->exports)
		return -1;
	for (unsigned i = 0; i < src->n; i++) {
		if (export_dup_one(&src->exports[i], &dst->exports[i]) < 0) {
			exports_free(dst);
			return -1;
		}
		dst->n++;
	}
	return 0;
}

static struct export *edit_find(struct export_table *t, const char *path)
{
	const struct export *e = exports_find(t, path);

	return (struct export *)e;
}

/* The entries of e with add's specs replaced in place or appended, into a new array. */
static struct export_client *edit_merge_clients(const struct export *e, const struct export *add, unsigned *n)
{
	struct export_client *v = malloc((e->nclients + add->nclients) * sizeof(*v));
	bool placed = false;

	*n = 0;
	for (unsigned i = 0; v && i < e->nclients; i++) {
		if (strcmp(e->clients[i].spec, add->clients[0].spec) != 0) {
			v[(*n)++] = e->clients[i];
		} else if (!placed) {
			memcpy(v + *n, add->clients, add->nclients * sizeof(*v));
			*n += add->nclients;
			placed = true;
		}
	}
	if (v && !placed) {
		memcpy(v + *n, add->clients, add->nclients * sizeof(*v));
		*n += add->nclients;
	}
	return v;
}

/* Would export e (now with id) share its id with another export of t? */
static const struct export *edit_id_clash(const struct export_table *t, const struct export *e, uint32_t id)
{
	for (unsigned i = 0; i < t->n; i++)
		if (strcmp(t->exports[i].path, e->path) != 0 && export_id(&t->exports[i]) == id)
			return &t->exports[i];
	return NULL;
}

int exports_edit_add(struct export_table *t, const struct export *add, char *err, size_t errlen)
{
	struct export *e = edit_find(t, add->path), *grown;
	const struct export *clash;
	struct export_client *v;
	unsigned n;

	if (add->nclients == 0)
		return edit_error(err, errlen, "no client given");
	for (unsigned i = 1; i < add->nclients; i++)
		if (strcmp(add->clients[i].spec, add->clients[0].spec) != 0)
			return edit_error(err, errlen, "one client at a time");
	if (e && add->fs[0] && strcmp(add->fs, e->fs) != 0)
		return edit_error(err, errlen, "%s is served with fs=%s: remove it first to change fs=", e->path,
				  e->fs[0] ? e->fs : "local");
	if (e && add->pnfs && add->pnfs != e->pnfs)
		return edit_error(err, errlen, "%s is served without pnfs=: remove it first to add pnfs=", e->path);
	if (e && add->fsid_set && export_id(e) != add->fsid)
		return edit_error(err, errlen, "%s has the id %#x: remove it first to change fsid=", e->path,
				  export_id(e));
	clash = edit_id_clash(t, add, e ? export_id(e) : export_id(add));
	if (clash)
		return edit_error(err, errlen, "%s would have the id %#x of %s; give it a distinct fsid=", add->path,
				  export_id(add), clash->path);
	if (e) {
		v = edit_merge_clients(e, add, &n);
		if (!v)
			return edit_error(err, errlen, "out of memory");
		free(e->clients);
		e->clients = v;
		e->nclients = n;
		return 0;
	}
	grown = realloc(t->exports, (t->n + 1) * sizeof(*grown));
	if (!grown)
		return edit_error(err, errlen, "out of memory");
	t->exports = grown;
	if (export_dup_one(add, &t->exports[t->n]) < 0)
		return edit_error(err, errlen, "out of memory");
	t->exports[t->n].line = 0;
	t->n++;
	return 0;
}

int exports_edit_remove(struct export_table *t, const char *path, const char *client, bool *gone,
			char *err, size_t errlen)
{
	struct export *e = edit_find(t, path);
	unsigned n = 0, idx;

	*gone = false;
	if (!e)
		return edit_error(err, errlen, "%s is not exported", path);
	for (unsigned i = 0; client && i < e->nclients; i++)
		if (strcmp(e->clients[i].spec, client) != 0)
			e->clients[n++] = e->clients[i]; /* in place: order kept, nothing allocated */
	if (client && n == e->nclients)
		return edit_error(err, errlen, "%s is not exported to %s", e->path, client);
	e->nclients = n;
	if (n > 0)
		return 0;
	/* exportfs -u of the last client: the export goes. */
	idx = (unsigned)(e - t->exports);
	free(e->clients);
	memmove(e, e + 1, (t->n - idx - 1) * sizeof(*e));
	t->n--;
	*gone = true;
	return 0;
}

void export_opts_format(const struct export_opts *o, char *buf, size_t len)
{
	static const char *const squash[] = {
		[EXPORT_ROOT_SQUASH] = "root_squash", [EXPORT_NO_ROOT_SQUASH] = "no_root_squash",
		[EXPORT_ALL_SQUASH] = "all_squash",
	};
	char sec[40] = "";
	size_t at = 0;

	/* sec= in the admin's order, every flavor kept (krb5 ones too). */
	for (unsigned i = 0; i < (unsigned)__builtin_popcount(o->sec) && i < EXPORT_SEC_COUNT; i++)
		at += (size_t)snprintf(sec + at, sizeof(sec) - at, "%s%s", i ? ":" : "",
				       export_sec_name(o->sec_order[i]));

	char xs[24] = "";
	if (o->xprtsec != EXPORT_XPRTSEC_ALL) { /* written only when it restricts */
		memcpy(xs, ",xprtsec=", 10);
		export_xprtsec_format(o->xprtsec, xs + 9, sizeof(xs) - 9);
	}
	snprintf(buf, len, "%s,%s,%s,%s,sec=%s%s,anonuid=%u,anongid=%u", o->rw ? "rw" : "ro", squash[o->squash],
		 o->secure ? "secure" : "insecure", o->sync ? "sync" : "async", sec, xs, o->anonuid, o->anongid);
}
