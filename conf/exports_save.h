/*
 * exports_save.h - writing a live export change back into the exports file
 * (rnfsctl export add/remove --save) without disturbing it: a line-preserving
 * editor over the file's text. Only the export line concerned changes (one
 * client word replaced, appended or cut out, or the line removed); comments,
 * blank lines, order, quoting and continuation lines elsewhere stay byte for
 * byte. A new export is appended as a line at the end.
 *
 * The scanner follows the parser's lexical rules (exports.c: blanks, '#'
 * comments at a word's start, backslash-newline continuations, quoted paths
 * with backslash escapes) but does no DNS and keeps no table. Paths compare
 * after unescaping, with repeated and trailing slashes dropped.
 *
 * Pure text in, malloc'ed text out (the caller frees); exports_save_write()
 * is the one function with I/O.
 */
#ifndef RNFSD_EXPORTS_SAVE_H
#define RNFSD_EXPORTS_SAVE_H

#include <stddef.h>

/*
 * text with client word (as given: "SPEC" or "SPEC(OPTIONS)") set for path:
 * replacing the word with the same SPEC on path's line, else appended to the
 * line (a line with no client word, an implicit "*", gets an explicit "*"
 * first, so it keeps meaning what it meant), else a new line "PATH CLIENT".
 * NULL (out of memory) with err.
 */
char *exports_text_add(const char *text, const char *path, const char *client, char *err, size_t errlen);

/*
 * text without path's client word SPEC (spec NULL: without path's line); a
 * line left with no client word goes. NULL with err when path (or its SPEC)
 * is not in the text.
 */
char *exports_text_remove(const char *text, const char *path, const char *spec, char *err, size_t errlen);

/* Replace file by text atomically (a temporary file beside it, fsync, rename; the file's mode
 * kept). 0, or -1 with "FILE: problem" in err. */
int exports_save_write(const char *file, const char *text, char *err, size_t errlen);

#endif
