/*
 * conf_file.c - see conf_file.h.
 */
#include "conf/conf_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *conf_read_file(const char *path, size_t max, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	buf = malloc(max + 1);
	if (!buf) {
		fclose(f);
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	n = fread(buf, 1, max + 1, f);
	if (ferror(f) || n > max || memchr(buf, '\0', n)) {
		snprintf(err, errlen, "%s: %s", path, ferror(f) ? strerror(errno) :
			 n > max ? "file too large" : "contains a NUL byte (not a text file)");
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	return buf;
}

int conf_verror(char *err, size_t errlen, const char *name, unsigned line, const char *fmt, va_list ap)
{
	int n;

	if (!err || errlen == 0)
		return -1;
	n = snprintf(err, errlen, "%s:%u: ", name, line);
	if (n < 0 || (size_t)n >= errlen)
		return -1;
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	return -1;
}
