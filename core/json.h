/*
 * json.h - a small streaming JSON writer for the stats document (core/stats.h)
 * and the sections other layers add to it. It writes straight to a FILE,
 * allocates nothing and keeps only a stack of open containers.
 *
 * Layout (what rnfsctl and the tests read, unchanged since the document was
 * hand-written): the top object and every array put one member per line,
 * indented two spaces per level; objects inside them stay on one line:
 *   {
 *     "key": {"a": 1, "b": 2.5},
 *     "list": [
 *       {"x": "y"}
 *     ],
 *     "empty": []
 *   }
 *
 * Use: json_begin(), then members (a key, or NULL for an array element),
 * json_obj_open()/json_arr_open() ... _close() in pairs, json_end().
 */
#ifndef RNFSD_CORE_JSON_H
#define RNFSD_CORE_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_DEPTH_MAX 8

struct json_out {
	FILE *f;
	unsigned depth;                 /* containers open */
	bool first[JSON_DEPTH_MAX];     /* nothing written yet in the container at this depth */
	bool block[JSON_DEPTH_MAX];     /* one member per line (top object, arrays) */
};

/* Open the document's top object on f. */
void json_begin(struct json_out *j, FILE *f);
/* Close the top object (and anything left open). 0, or -1 on a write error of f. */
int json_end(struct json_out *j);

/* key: the member's name inside an object, NULL inside an array. */
void json_obj_open(struct json_out *j, const char *key);
void json_obj_close(struct json_out *j);
void json_arr_open(struct json_out *j, const char *key);
void json_arr_close(struct json_out *j);

void json_u64(struct json_out *j, const char *key, uint64_t v);
void json_i64(struct json_out *j, const char *key, int64_t v);
/* v with a fixed number of decimals ("%.*f"). */
void json_fixed(struct json_out *j, const char *key, double v, int decimals);
/* A string: quotes, backslashes and control bytes escaped; NULL is "". */
void json_str(struct json_out *j, const char *key, const char *s);
void json_null(struct json_out *j, const char *key);

#endif
