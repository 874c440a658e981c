/*
 * ctl_exports.h - live export changes through the control socket
 * (stats_server.h): "export list", "export add", "export remove", as
 * rnfsctl(8) sends them. A change builds the next table from a copy of the
 * served one (conf/exports_edit.h) and swaps it in by the path SIGHUP uses
 * (nfs_exports_replace()): one table swap; calls in flight finish against
 * the table they started with; a removed export's handles are STALE from
 * the next call. Changes are runtime-only (a SIGHUP re-reads the file)
 * unless saved: add-save / remove-save also rewrite the exports file with
 * conf/exports_save.h's line-preserving editor (the file's edit is computed
 * before the swap, so an edit the file cannot take changes nothing; a failed
 * write after the swap is reported as such).
 *
 * Requests are one line of tab-separated fields:
 *   export \t list
 *   export \t add|add-save \t PATH \t CLIENT(OPTIONS)
 *   export \t remove|remove-save \t PATH [\t CLIENT]
 *   client \t list     (NFSv4 client records with their opens and locks, NLM hosts)
 *   client \t revoke \t WHO   (a client id "0x...", an address, or an NLM caller_name)
 *   unlock \t PATH      (knfsd's unlock_filesystem: every client's NLM locks and NFSv4
 *                        state on the export released, through the same hooks; it stays)
 * and the answer is a JSON object: {"exports": [...]} for list, else
 * {"ok": "what was done"} or {"error": "why not"}.
 */
#ifndef RNFSD_CTL_EXPORTS_H
#define RNFSD_CTL_EXPORTS_H

#include <stdio.h>

/* Loop thread. Answer req (NUL-terminated, no newline) on out if it is an "export" or "unlock" request: 0;
 * -1 if it is not one (out untouched). */
int ctl_exports_request(char *req, FILE *out);
/* Loop thread (start-up, reload): the exports file the served exports came from (made absolute),
 * or NULL when they did not come from a file (--save is then refused). */
void ctl_exports_set_file(const char *path);

#endif
