/*
 * conf_file.h - reading a configuration file whole, shared by the
 * rnfsd.conf and exports parsers.
 */
#ifndef RNFSD_CONF_FILE_H
#define RNFSD_CONF_FILE_H

#include <stddef.h>

/* Reads a whole text file (at most max bytes, no NUL bytes) into a malloc'ed,
 * NUL-terminated buffer the caller frees. NULL with "PATH: problem" in err. */
char *conf_read_file(const char *path, size_t max, char *err, size_t errlen);

#endif
