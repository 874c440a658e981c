/*
 * exports_save.c - see exports_save.h. A logical line is scanned into a
 * struct save_line: where it starts and ends in the text, its path, and
 * each client word's byte range and SPEC; every edit is then one splice of
 * the text (replace a range by a string).
 */
#include "conf/exports_save.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SAVE_MAX_WORDS 256

struct save_word {
	size_t start, end;  /* the client word with its "(options)" */
	char spec[256];     /* the word before '(' */
};

struct save_line {
	size_t start, end;     /* the logical line, its newline included */
	size_t content_end;    /* after its last word (before blanks, a comment, the newline) */
	char path[PATH_MAX];   /* unescaped, slashes collapsed; "" for a blank or comment line */
	struct save_word w[SAVE_MAX_WORDS];
	unsigned nw;
};

static bool save_cont(const char *t, size_t i)
{
	return t[i] == '\\' && (t[i + 1] == '\n' || (t[i + 1] == '\r' && t[i + 2] == '\n'));
}

static size_t save_blank(const char *t, size_t i)
{
	for (;;) {
		if (t[i] == ' ' || t[i] == '\t' || t[i] == '\r')
			i++;
		else if (save_cont(t, i))
			i += t[i + 1] == '\n' ? 2 : 3;
		else
			return i;
	}
}

static bool save_word_end(const char *t, size_t i)
{
	return !t[i] || t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n' || save_cont(t, i);
}

/* Repeated and trailing slashes dropped (the parser's normal form for what an admin writes). */
static void save_norm(char *p)
{
	size_t o = 0;

	for (size_t i = 0; p[i]; i++)
		if (!(p[i] == '/' && o > 0 && p[o - 1] == '/'))
			p[o++] = p[i];
	while (o > 1 && p[o - 1] == '/')
		o--;
	p[o] = '\0';
}

/* The path word at i into out (quotes and \NNN / \c escapes undone); returns the index after it. */
static size_t save_path(const char *t, size_t i, char *out, size_t len)
{
	bool quoted = t[i] == '"';
	size_t o = 0;

	for (i += quoted; t[i] && t[i] != '\n' && (quoted ? t[i] != '"' : !save_word_end(t, i)); i++) {
		char c = t[i];

		if (c == '\\' && t[i + 1] >= '0' && t[i + 1] <= '7' && t[i + 2] && t[i + 3]) {
			c = (char)((t[i + 1] - '0') * 64 + (t[i + 2] - '0') * 8 + (t[i + 3] - '0'));
			i += 3;
		} else if (c == '\\' && t[i + 1] && t[i + 1] != '\n') {
			c = t[++i];
		}
		if (o + 1 < len)
			out[o++] = c;
	}
	out[o] = '\0';
	save_norm(out);
	return i + (quoted && t[i] == '"');
}

/* One client word at i (SPEC, then "(...)" if present). */
static size_t save_client(const char *t, size_t i, struct save_word *w)
{
	size_t o = 0;

	w->start = i;
	for (; !save_word_end(t, i) && t[i] != '('; i++)
		if (o + 1 < sizeof(w->spec))
			w->spec[o++] = t[i];
	w->spec[o] = '\0';
	if (t[i] == '(')
		while (t[i] && t[i] != '\n' && t[i++] != ')')
			;
	w->end = i;
	return i;
}

/* Scan the logical line starting at i. */
static void save_scan(const char *t, size_t i, struct save_line *l)
{
	l->start = i;
	l->nw = 0;
	l->path[0] = '\0';
	i = save_blank(t, i);
	l->content_end = i;
	if (t[i] && t[i] != '\n' && t[i] != '#') {
		i = save_path(t, i, l->path, sizeof(l->path));
		l->content_end = i;
		for (i = save_blank(t, i); t[i] && t[i] != '\n' && t[i] != '#'; i = save_blank(t, i)) {
			if (t[i] == '-') { /* defaults for the words after it */
				while (!save_word_end(t, i))
					i++;
			} else if (l->nw < SAVE_MAX_WORDS) {
				i = save_client(t, i, &l->w[l->nw++]);
			} else {
				i = save_client(t, i, &(struct save_word){0});
			}
			l->content_end = i;
		}
	}
	while (t[i] && t[i] != '\n')
		i++;
	l->end = i + (t[i] == '\n');
}

/* The line exporting path, scanned into l: true if found. */
static bool save_find(const char *t, const char *path, struct save_line *l)
{
	char want[PATH_MAX];

	snprintf(want, sizeof(want), "%s", path);
	save_norm(want);
	for (size_t i = 0; t[i]; i = l->end) {
		save_scan(t, i, l);
		if (!strcmp(l->path, want))
			return true;
	}
	return false;
}

/* t with [start, end) replaced by with (malloc'ed), or NULL. */
static char *save_splice(const char *t, size_t start, size_t end, const char *with)
{
	size_t n = strlen(t), w = strlen(with);
	char *s = malloc(n - (end - start) + w + 1);

	if (!s)
		return NULL;
	memcpy(s, t, start);
	memcpy(s + start, with, w);
	memcpy(s + start + w, t + end, n - end + 1);
	return s;
}

static const struct save_word *save_word_of(const struct save_line *l, const char *spec)
{
	for (unsigned i = 0; i < l->nw; i++)
		if (!strcmp(l->w[i].spec, spec))
			return &l->w[i];
	return NULL;
}

char *exports_text_add(const char *text, const char *path, const char *client, char *err, size_t errlen)
{
	struct save_line *l = malloc(sizeof(*l));
	struct save_word nw;
	char *out, *word = malloc(PATH_MAX + 600);
	size_t n = strlen(text);

	if (!l || !word) {
		out = NULL;
	} else if (save_find(text, path, l)) {
		const struct save_word *w;

		save_client(client, 0, &nw);
		w = save_word_of(l, nw.spec);
		if (w) {
			out = save_splice(text, w->start, w->end, client);
		} else {
			snprintf(word, PATH_MAX + 600, "%s %s", l->nw ? "" : " *", client);
			out = save_splice(text, l->content_end, l->content_end, word);
		}
	} else {
		bool quote = strpbrk(path, " \t#") != NULL;

		snprintf(word, PATH_MAX + 600, "%s%s%s%s %s\n", n && text[n - 1] != '\n' ? "\n" : "",
			 quote ? "\"" : "", path, quote ? "\"" : "", client);
		out = save_splice(text, n, n, word);
	}
	if (!out)
		snprintf(err, errlen, "out of memory");
	free(word);
	free(l);
	return out;
}

char *exports_text_remove(const char *text, const char *path, const char *spec, char *err, size_t errlen)
{
	struct save_line *l = malloc(sizeof(*l));
	const struct save_word *w;
	char *out = NULL;

	err[0] = '\0';
	if (!l) {
		snprintf(err, errlen, "out of memory");
	} else if (!save_find(text, path, l)) {
		snprintf(err, errlen, "%s has no line in the exports file", path);
	} else if (!spec || (l->nw == 0 && !strcmp(spec, "*")) || (l->nw == 1 && save_word_of(l, spec))) {
		out = save_splice(text, l->start, l->end, "");
	} else if ((w = save_word_of(l, spec)) != NULL) {
		size_t start = w->start;

		while (start > l->start && (text[start - 1] == ' ' || text[start - 1] == '\t'))
			start--; /* the blank before the word goes with it */
		out = save_splice(text, start, w->end, "");
	} else {
		snprintf(err, errlen, "%s's line in the exports file has no client %s", path, spec);
	}
	if (l && !out && !err[0])
		snprintf(err, errlen, "out of memory");
	free(l);
	return out;
}

int exports_save_write(const char *file, const char *text, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 16];
	struct stat st;
	size_t n = strlen(text), off = 0;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.rnfsctl", file);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	if (stat(file, &st) == 0)
		(void)fchmod(fd, st.st_mode & 07777);
	while (off < n) {
		ssize_t w = write(fd, text + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto fail_fd;
		off += (size_t)w;
	}
	if (fsync(fd) != 0 || close(fd) != 0) {
		fd = -1;
		goto fail_unlink;
	}
	if (rename(tmp, file) != 0)
		goto fail_unlink;
	return 0;
fail_fd:
	close(fd);
fail_unlink:
	snprintf(err, errlen, "%s: %s", file, strerror(errno));
	unlink(tmp);
	return -1;
fail:
	snprintf(err, errlen, "%s: %s", file, strerror(errno));
	return -1;
}
