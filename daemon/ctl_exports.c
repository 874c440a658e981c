/*
 * ctl_exports.c - see ctl_exports.h. Loop thread only, so requests, SIGHUP
 * reloads and each other are serialised: no edit is lost between the copy
 * of the served table and the swap.
 */
#include "daemon/ctl_exports.h"

#include <stdio.h>
#include <string.h>

#include "conf/exports_edit.h"
#include "core/json.h"
#include "core/log.h"
#include "nfs/nfs.h"

#define CTL_FIELDS 5

static int ctl_answer(FILE *out, const char *key, const char *text)
{
	struct json_out j;

	json_begin(&j, out);
	json_str(&j, key, text);
	return json_end(&j);
}

static void ctl_list_client(struct json_out *j, const struct export_client *c)
{
	char opts[160];

	export_opts_format(&c->opts, opts, sizeof(opts));
	json_obj_open(j, NULL);
	json_str(j, "client", c->spec);
	json_str(j, "options", opts);
	json_obj_close(j);
}

/* {"exports": [{"path", "id", "fs", "clients": [{"client", "options"}]}]}; a host name that
 * resolved to several addresses is one entry (its spec). */
static int ctl_list(FILE *out)
{
	struct export_table t;
	struct json_out j;

	if (nfs_exports_copy(&t) != 0)
		return ctl_answer(out, "error", "no exports are served");
	json_begin(&j, out);
	json_arr_open(&j, "exports");
	for (unsigned i = 0; i < t.n; i++) {
		const struct export *e = &t.exports[i];

		json_obj_open(&j, NULL);
		json_str(&j, "path", e->path);
		json_u64(&j, "id", export_id(e));
		json_str(&j, "fs", e->fs[0] ? e->fs : "local");
		json_arr_open(&j, "clients");
		for (unsigned k = 0; k < e->nclients; k++)
			if (k == 0 || strcmp(e->clients[k].spec, e->clients[k - 1].spec) != 0)
				ctl_list_client(&j, &e->clients[k]);
		json_arr_close(&j);
		json_obj_close(&j);
	}
	json_arr_close(&j);
	exports_free(&t);
	return json_end(&j);
}

/* The copy t, edited, becomes the served table (nfs_exports_replace() takes it) or is freed. */
static int ctl_swap(FILE *out, struct export_table *t, const char *done)
{
	if (nfs_exports_replace(t) != 0) {
		exports_free(t);
		return ctl_answer(out, "error", "the new export table cannot be served (see the daemon's log); "
				  "the running exports stay");
	}
	log_info("control socket: %s", done);
	return ctl_answer(out, "ok", done);
}

/* "PATH" and "CLIENT(OPTIONS)" as one exports(5) line, parsed as the file would be. */
static int ctl_add(FILE *out, const char *path, const char *spec)
{
	struct export_table a = {0}, t;
	char line[PATH_MAX + 600], err[PATH_MAX + 128], done[PATH_MAX + 400];
	int rc;

	if (strpbrk(path, "\"\\") || strpbrk(spec, " \t\"\\#"))
		return ctl_answer(out, "error", "quotes, backslashes, blanks and '#' are not allowed here");
	snprintf(line, sizeof(line), "\"%s\" %s\n", path, spec);
	if (exports_parse(line, "export add", &a, err, sizeof(err)) != 0)
		return ctl_answer(out, "error", err);
	if (nfs_exports_copy(&t) != 0) {
		exports_free(&a);
		return ctl_answer(out, "error", "out of memory");
	}
	rc = exports_edit_add(&t, &a.exports[0], err, sizeof(err));
	snprintf(done, sizeof(done), "exported %s to %s", a.exports[0].path, spec);
	exports_free(&a);
	if (rc != 0) {
		exports_free(&t);
		return ctl_answer(out, "error", err);
	}
	return ctl_swap(out, &t, done);
}

static int ctl_remove(FILE *out, const char *path, const char *client)
{
	struct export_table t;
	char err[PATH_MAX + 128], done[PATH_MAX + 300];
	bool gone;

	if (nfs_exports_copy(&t) != 0)
		return ctl_answer(out, "error", "no exports are served");
	if (exports_edit_remove(&t, path, client, &gone, err, sizeof(err)) != 0) {
		exports_free(&t);
		return ctl_answer(out, "error", err);
	}
	if (gone)
		snprintf(done, sizeof(done), "unexported %s", path);
	else
		snprintf(done, sizeof(done), "unexported %s from %s", path, client);
	return ctl_swap(out, &t, done);
}

int ctl_exports_request(char *req, FILE *out)
{
	char *f[CTL_FIELDS] = {0}, *save = NULL;
	unsigned n = 0;

	for (char *w = strtok_r(req, "\t", &save); w && n < CTL_FIELDS; w = strtok_r(NULL, "\t", &save))
		f[n++] = w;
	if (n == 0 || strcmp(f[0], "export") != 0)
		return -1;
	if (n == 2 && !strcmp(f[1], "list"))
		return ctl_list(out), 0;
	if (n == 4 && !strcmp(f[1], "add"))
		return ctl_add(out, f[2], f[3]), 0;
	if ((n == 3 || n == 4) && !strcmp(f[1], "remove"))
		return ctl_remove(out, f[2], f[3]), 0;
	ctl_answer(out, "error", "usage: export list | export add PATH CLIENT(OPTIONS) | export remove PATH [CLIENT]");
	return 0;
}
