/*
 * json.c - the streaming JSON writer (json.h). Each member starts with
 * json_member(): the separator and indentation its container wants, then its
 * key; containers deeper than JSON_DEPTH_MAX are written flat (never past the
 * stack) and asserted in debug builds.
 */
#include "core/json.h"

#include <assert.h>

static void json_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* The separator before a member of the innermost container, and its key. */
static void json_member(struct json_out *j, const char *key)
{
	unsigned d = j->depth ? j->depth - 1 : 0;

	if (d >= JSON_DEPTH_MAX)
		d = JSON_DEPTH_MAX - 1;

	if (j->depth) {
		if (j->block[d])
			fprintf(j->f, "%s\n%*s", j->first[d] ? "" : ",", (int)(2 * j->depth), "");
		else if (!j->first[d])
			fputs(", ", j->f);
		j->first[d] = false;
	}
	if (key) {
		json_quoted(j->f, key);
		fputs(": ", j->f);
	}
}

static void json_open(struct json_out *j, const char *key, char bracket, bool block)
{
	json_member(j, key);
	fputc(bracket, j->f);
	assert(j->depth < JSON_DEPTH_MAX);
	if (j->depth < JSON_DEPTH_MAX) {
		j->first[j->depth] = true;
		j->block[j->depth] = block;
	}
	j->depth++;
}

static void json_close(struct json_out *j, char bracket)
{
	if (!j->depth)
		return;
	j->depth--;
	if (j->depth < JSON_DEPTH_MAX && j->block[j->depth] && !j->first[j->depth])
		fprintf(j->f, "\n%*s", (int)(2 * j->depth), "");
	fputc(bracket, j->f);
}

void json_begin(struct json_out *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	json_open(j, NULL, '{', true);
}

int json_end(struct json_out *j)
{
	while (j->depth > 1)
		json_close(j, j->block[j->depth - 1] ? ']' : '}');
	json_close(j, '}');
	fputc('\n', j->f);
	return ferror(j->f) ? -1 : 0;
}

void json_obj_open(struct json_out *j, const char *key)
{
	json_open(j, key, '{', false);
}

void json_obj_close(struct json_out *j)
{
	json_close(j, '}');
}

void json_arr_open(struct json_out *j, const char *key)
{
	json_open(j, key, '[', true);
}

void json_arr_close(struct json_out *j)
{
	json_close(j, ']');
}

void json_u64(struct json_out *j, const char *key, uint64_t v)
{
	json_member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_i64(struct json_out *j, const char *key, int64_t v)
{
	json_member(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void json_fixed(struct json_out *j, const char *key, double v, int decimals)
{
	json_member(j, key);
	fprintf(j->f, "%.*f", decimals, v);
}

void json_str(struct json_out *j, const char *key, const char *s)
{
	json_member(j, key);
	json_quoted(j->f, s);
}

void json_null(struct json_out *j, const char *key)
{
	json_member(j, key);
	fputs("null", j->f);
}
