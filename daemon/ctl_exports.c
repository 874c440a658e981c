/*
 * ctl_exports.c - see ctl_exports.h. Loop thread only, so requests, SIGHUP
 * reloads and each other are serialised: no edit is lost between the copy
 * of the served table and the swap.
 */
#include "daemon/ctl_exports.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_file.h"
#include "conf/exports_edit.h"
#include "conf/exports_save.h"
#include "core/json.h"
#include "core/log.h"
#include "nfs/nfs.h"
#include "nlm/nlm.h"

#define CTL_FIELDS 5
#define CTL_CLIENTS_MAX 4096u /* NFS4_STATE_MAX_CLIENTS */
#define CTL_NLM_HOSTS_MAX 1024u
#define CTL_LAYOUTS_MAX 4096u /* rnfsctl layouts lists at most these */
#define CTL_FILE_MAX (16u << 20) /* as the parser reads (exports.c) */

static char ctl_file[PATH_MAX]; /* the exports file --save writes, "" when none */

void ctl_exports_set_file(const char *path)
{
	if (!path || !path[0])
		ctl_file[0] = '\0';
	else if (!realpath(path, ctl_file))
		snprintf(ctl_file, sizeof(ctl_file), "%s", path);
}

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

/* --save: the exports file's text, edited as the table is about to be (path, client: the request's;
 * adding: client is "SPEC(OPTIONS)", else a SPEC or NULL). NULL with err. */
static char *ctl_save_text(bool adding, const char *path, const char *client, char *err, size_t errlen)
{
	char *text, *edited;

	if (!ctl_file[0]) {
		snprintf(err, errlen, "--save: the exports do not come from a file (--export, or the built-in "
			 "default); nothing changed");
		return NULL;
	}
	text = conf_read_file(ctl_file, CTL_FILE_MAX, err, errlen);
	if (!text)
		return NULL;
	edited = adding ? exports_text_add(text, path, client, err, errlen) :
			  exports_text_remove(text, path, client, err, errlen);
	free(text);
	return edited;
}

/* The copy t, edited, becomes the served table (nfs_exports_replace() takes it) or is freed; then
 * save (if not NULL) replaces the exports file. */
static int ctl_swap(FILE *out, struct export_table *t, const char *done, const char *save)
{
	char err[PATH_MAX + 128], msg[PATH_MAX + 512];

	if (nfs_exports_replace(t) != 0) {
		exports_free(t);
		return ctl_answer(out, "error", "the new export table cannot be served (see the daemon's log); "
				  "the running exports stay");
	}
	log_info("control socket: %s", done);
	if (save && exports_save_write(ctl_file, save, err, sizeof(err)) != 0) {
		snprintf(msg, sizeof(msg), "%s at run time, but not saved: %s", done, err);
		log_err("control socket: %s", msg);
		return ctl_answer(out, "error", msg);
	}
	snprintf(msg, sizeof(msg), "%s%s%s", done, save ? ", saved to " : "", save ? ctl_file : "");
	return ctl_answer(out, "ok", msg);
}

/* "PATH" and "CLIENT(OPTIONS)" as one exports(5) line, parsed as the file would be. */
static int ctl_add(FILE *out, const char *path, const char *spec, bool save)
{
	struct export_table a = {0}, t;
	char line[PATH_MAX + 600], err[PATH_MAX + 128], done[PATH_MAX + 400], *text = NULL;
	int rc;

	if (strpbrk(path, "\"\\") || strpbrk(spec, " \t\"\\#"))
		return ctl_answer(out, "error", "quotes, backslashes, blanks and '#' are not allowed here");
	if (spec[0] == '-' || spec[0] == '(')
		return ctl_answer(out, "error", "give a client before the options: CLIENT(OPTIONS), e.g. '*(ro)'");
	snprintf(line, sizeof(line), "\"%s\" %s\n", path, spec);
	if (exports_parse(line, "export add", &a, err, sizeof(err)) != 0)
		return ctl_answer(out, "error", err);
	if (nfs_exports_copy(&t) != 0) {
		exports_free(&a);
		return ctl_answer(out, "error", "out of memory");
	}
	rc = exports_edit_add(&t, &a.exports[0], err, sizeof(err));
	if (rc == 0 && save && !(text = ctl_save_text(true, a.exports[0].path, spec, err, sizeof(err))))
		rc = -1;
	snprintf(done, sizeof(done), "exported %s to %s", a.exports[0].path, spec);
	exports_free(&a);
	if (rc != 0) {
		exports_free(&t);
		return ctl_answer(out, "error", err);
	}
	rc = ctl_swap(out, &t, done, text);
	free(text);
	return rc;
}

static int ctl_remove(FILE *out, const char *path, const char *client, bool save)
{
	struct export_table t;
	char err[PATH_MAX + 128], done[PATH_MAX + 300], *text = NULL;
	bool gone;
	int rc;

	if (nfs_exports_copy(&t) != 0)
		return ctl_answer(out, "error", "no exports are served");
	if (exports_edit_remove(&t, path, client, &gone, err, sizeof(err)) != 0 ||
	    (save && !(text = ctl_save_text(false, path, client, err, sizeof(err))))) {
		exports_free(&t);
		return ctl_answer(out, "error", err);
	}
	if (gone)
		snprintf(done, sizeof(done), "unexported %s", path);
	else
		snprintf(done, sizeof(done), "unexported %s from %s", path, client);
	rc = ctl_swap(out, &t, done, text);
	free(text);
	return rc;
}

/* client \t list: {"nfs4_clients": [...], "nlm_hosts": [...]} (rnfsctl joins the connections). */
static int ctl_clients(FILE *out)
{
	struct nfs_client_info *c = calloc(CTL_CLIENTS_MAX, sizeof(*c));
	struct nlm_host_info *h = calloc(CTL_NLM_HOSTS_MAX, sizeof(*h));
	unsigned nc = c ? nfs_service_clients(c, CTL_CLIENTS_MAX) : 0;
	unsigned nh = h ? nlm_hosts(h, CTL_NLM_HOSTS_MAX) : 0;
	struct json_out j;
	char id[24];

	json_begin(&j, out);
	json_arr_open(&j, "nfs4_clients");
	for (unsigned i = 0; i < nc; i++) {
		snprintf(id, sizeof(id), "%#018llx", (unsigned long long)c[i].clientid);
		json_obj_open(&j, NULL);
		json_str(&j, "clientid", id);
		json_str(&j, "address", c[i].addr);
		json_str(&j, "version", c[i].version);
		json_u64(&j, "confirmed", c[i].confirmed);
		json_u64(&j, "sessions", c[i].sessions);
		json_u64(&j, "opens", c[i].opens);
		json_u64(&j, "locks", c[i].locks);
		json_u64(&j, "delegations", c[i].delegations);
		json_u64(&j, "layouts", c[i].layouts);
		json_u64(&j, "idle_s", c[i].idle_s);
		json_obj_close(&j);
	}
	json_arr_close(&j);
	json_arr_open(&j, "nlm_hosts");
	for (unsigned i = 0; i < nh; i++) {
		json_obj_open(&j, NULL);
		json_str(&j, "host", h[i].host);
		json_u64(&j, "owners", h[i].owners);
		json_u64(&j, "locks", h[i].held);
		json_obj_close(&j);
	}
	json_arr_close(&j);
	free(c);
	free(h);
	return json_end(&j);
}

/* layouts \t list: {"layouts": [{"clientid", "export_id", "fh", "iomodes", "seqid", "recalled",
 * "recalled_s"}]}, the first CTL_LAYOUTS_MAX. */
static int ctl_layouts(FILE *out)
{
	struct nfs_layout_info *l = calloc(CTL_LAYOUTS_MAX, sizeof(*l));
	unsigned n = l ? nfs_service_layouts(l, CTL_LAYOUTS_MAX) : 0;
	struct json_out j;
	char id[24];

	json_begin(&j, out);
	json_arr_open(&j, "layouts");
	for (unsigned i = 0; i < n; i++) {
		json_obj_open(&j, NULL);
		snprintf(id, sizeof(id), "%#018llx", (unsigned long long)l[i].clientid);
		json_str(&j, "clientid", id);
		json_u64(&j, "export_id", l[i].export_id);
		json_str(&j, "fh", l[i].fh);
		json_str(&j, "iomodes", l[i].iomodes);
		json_u64(&j, "seqid", l[i].seqid);
		json_u64(&j, "recalled", l[i].recalled);
		json_u64(&j, "recalled_s", l[i].recalled_s);
		json_obj_close(&j);
	}
	json_arr_close(&j);
	free(l);
	return json_end(&j);
}

/* client \t revoke \t WHO: NFSv4 records (a client id, or an address) as if their lease ended, and
 * the NLM host of that caller_name as on its FREE_ALL. */
static int ctl_revoke(FILE *out, const char *who)
{
	unsigned busy, n4 = nfs_service_client_revoke(who, &busy), nlm = nlm_host_revoke(who);
	char msg[400];

	snprintf(msg, sizeof(msg), "%s: %u NFSv4 client records revoked%s, NLM locks on %u files released", who,
		 n4, busy ? " (some with a call running were left: try again)" : "", nlm);
	if (!n4 && !nlm && !busy)
		return ctl_answer(out, "error", "no NFSv4 client record or NLM host by that name");
	log_info("control socket: client revoke %s", msg);
	return ctl_answer(out, "ok", msg);
}

/* unlock \t PATH: every client's locks and NFSv4 state on the export go; it stays exported. */
static int ctl_unlock(FILE *out, const char *path)
{
	char msg[PATH_MAX + 100];
	int err = nfs_exports_unlock(path);

	if (err) {
		snprintf(msg, sizeof(msg), "%s: %s", path, err == ENOENT ? "not exported" : strerror(err));
		return ctl_answer(out, "error", msg);
	}
	snprintf(msg, sizeof(msg), "releasing every client's locks and NFSv4 state on %s", path);
	log_info("control socket: %s", msg);
	return ctl_answer(out, "ok", msg);
}

int ctl_exports_request(char *req, FILE *out)
{
	char *f[CTL_FIELDS] = {0}, *save = NULL;
	unsigned n = 0;

	for (char *w = strtok_r(req, "\t", &save); w && n < CTL_FIELDS; w = strtok_r(NULL, "\t", &save))
		f[n++] = w;
	if (n == 2 && !strcmp(f[0], "unlock"))
		return ctl_unlock(out, f[1]), 0;
	if (n == 2 && !strcmp(f[0], "client") && !strcmp(f[1], "list"))
		return ctl_clients(out), 0;
	if (n == 2 && !strcmp(f[0], "layouts") && !strcmp(f[1], "list"))
		return ctl_layouts(out), 0;
	if (n == 3 && !strcmp(f[0], "client") && !strcmp(f[1], "revoke"))
		return ctl_revoke(out, f[2]), 0;
	if (n == 0 || strcmp(f[0], "export") != 0)
		return -1;
	if (n == 2 && !strcmp(f[1], "list"))
		return ctl_list(out), 0;
	if (n == 4 && (!strcmp(f[1], "add") || !strcmp(f[1], "add-save")))
		return ctl_add(out, f[2], f[3], f[1][3] == '-'), 0;
	if ((n == 3 || n == 4) && (!strcmp(f[1], "remove") || !strcmp(f[1], "remove-save")))
		return ctl_remove(out, f[2], f[3], f[1][6] == '-'), 0;
	ctl_answer(out, "error", "usage: export list | export add[-save] PATH CLIENT(OPTIONS) | "
		   "export remove[-save] PATH [CLIENT]");
	return 0;
}
