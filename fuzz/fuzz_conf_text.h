/*
 * fuzz_conf_text.h - what the two configuration-file targets
 * (fuzz_exports.c, fuzz_config.c) share: the input as the text a file
 * loader would hand the parser, and the check of a "FILE:LINE: problem"
 * message.
 */
#ifndef RNFSD_FUZZ_CONF_TEXT_H
#define RNFSD_FUZZ_CONF_TEXT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { if (!(x)) abort(); } while (0)

/*
 * data up to its first NUL (conf_read_file() refuses NUL bytes), in an
 * exact-size NUL-terminated allocation the caller frees; *lines = its
 * number of lines (newlines + 1).
 */
static inline char *fuzz_text(const uint8_t *data, size_t size, unsigned *lines)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t n = nul ? (size_t)(nul - data) : size;
	char *text = malloc(n + 1);

	CHECK(text);
	memcpy(text, data, n);
	text[n] = '\0';
	*lines = 1;
	for (size_t i = 0; i < n; i++)
		*lines += text[i] == '\n';
	return text;
}

/* err is "fuzz:LINE: problem" with 1 <= LINE <= lines. */
static inline void fuzz_check_error(const char *err, unsigned lines)
{
	char *end;

	CHECK(strncmp(err, "fuzz:", 5) == 0);
	unsigned long line = strtoul(err + 5, &end, 10);
	CHECK(end != err + 5 && line >= 1 && line <= lines);
	CHECK(end[0] == ':' && end[1] == ' ' && end[2] != '\0');
}

#endif
