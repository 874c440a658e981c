/*
 * conf_file.h - reading a configuration file whole and reporting errors
 * as "FILE:LINE: problem", shared by the rnfsd.conf and exports parsers.
 */
#ifndef RNFSD_CONF_FILE_H
#define RNFSD_CONF_FILE_H

#include <stdarg.h>
#include <stddef.h>

/* Reads a whole text file (at most max bytes, no NUL bytes) into a malloc'ed,
 * NUL-terminated buffer the caller frees. NULL with "PATH: problem" in err. */
char *conf_read_file(const char *path, size_t max, char *err, size_t errlen);

/* Writes "NAME:LINE: message" into err (if any room) and returns -1. */
int conf_verror(char *err, size_t errlen, const char *name, unsigned line, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

#endif
