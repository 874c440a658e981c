/*
 * exports_edit.h - changing an export table in memory, as exportfs(8) does
 * for knfsd: add a client spec to an export (or a new export), remove one
 * client spec or a whole export, copy a table, and write a client's options
 * back as exports(5) text. Pure functions over struct export_table (no I/O,
 * no DNS: specs arrive already parsed by exports_parse()); the daemon's
 * control socket (daemon/ctl_exports.c) builds the next served table with
 * them. The caller owns every table.
 */
#ifndef RNFSD_EXPORTS_EDIT_H
#define RNFSD_EXPORTS_EDIT_H

#include <stddef.h>

#include "conf/exports.h"

/* A deep copy of src into *dst (clients included). 0, or -1 (out of memory; *dst empty). */
int exports_dup(const struct export_table *src, struct export_table *dst);

/*
 * Merge add (one export as exports_parse() made it from "PATH SPEC(OPTS)")
 * into t, as `exportfs -o OPTS SPEC:PATH`: for an exported PATH, each of
 * add's specs replaces the entries with the same spec text in place, or is
 * appended (first match wins, exports(5): an earlier "*" still answers
 * first); an unexported PATH is appended as a new export. fsid= and fs=
 * must not contradict the export's, and the export's id must stay unique.
 * 0, or -1 with the reason in err (t unchanged).
 */
int exports_edit_add(struct export_table *t, const struct export *add, char *err, size_t errlen);

/*
 * Remove PATH's entries whose spec text is client (NULL: the whole export),
 * as `exportfs -u`; an export left without clients goes too. Sets *gone when
 * the whole export went. 0, or -1 with the reason in err (t unchanged).
 */
int exports_edit_remove(struct export_table *t, const char *path, const char *client, bool *gone,
			char *err, size_t errlen);

/* o as an exports(5) option list ("rw,no_root_squash,insecure,sec=sys,..."), every option written. */
void export_opts_format(const struct export_opts *o, char *buf, size_t len);

#endif
