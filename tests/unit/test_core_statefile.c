/*
 * test_core_statefile.c - core/statefile.c's files replaced whole and
 * appended to: a new version appears only at commit (never the temporary
 * file), a failed commit leaves the old version and no temporary file, the
 * log appends to the committed file, a load is bounded and refuses a
 * symbolic link, and the directory is made once. (The secret part is
 * driven through nfs/common/fh.c by test_nfs_fh.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/statefile.h"

static char dir[] = "/var/tmp/test_core_statefile.XXXXXX";

static int setup(void **state)
{
	(void)state;
	strcpy(dir + strlen(dir) - 6, "XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *in_dir(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", dir, name);
	return buf;
}

/* The file's bytes as a NUL-terminated string (they are text here), or NULL. */
static char *load_str(const char *path, size_t max)
{
	size_t len;
	char *buf = statefile_load(path, max, &len);
	char *s;

	if (!buf)
		return NULL;
	s = calloc(1, len + 1);
	memcpy(s, buf, len);
	free(buf);
	return s;
}

static void test_replace_and_append(void **state)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	struct statefile_new w;
	struct statefile_log l;
	size_t len;
	char *s;

	(void)state;
	in_dir(path, "f");
	errno = 0;
	assert_null(statefile_load(path, 64, &len));
	assert_int_equal(errno, ENOENT);

	assert_int_equal(statefile_begin(&w, path), 0);
	assert_int_equal(statefile_put(&w, "abc", 3), 0);
	assert_int_equal(statefile_put(&w, "def", 3), 0);
	assert_int_equal(access(path, F_OK), -1); /* not before the commit */
	assert_int_equal(statefile_commit(&w), 0);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(access(tmp, F_OK), -1);
	s = load_str(path, 64);
	assert_string_equal(s, "abcdef");
	free(s);
	s = load_str(path, 4); /* bounded: the rest is not read */
	assert_string_equal(s, "abcd");
	free(s);

	statefile_log_init(&l);
	assert_false(statefile_log_is_open(&l));
	assert_int_equal(statefile_log_append(&l, "x", 1), -1);
	assert_int_equal(statefile_log_open(&l, path), 0);
	assert_true(statefile_log_is_open(&l));
	assert_int_equal(statefile_log_append(&l, "gh", 2), 0);
	assert_int_equal(statefile_log_sync(&l), 0);
	statefile_log_close(&l);
	assert_false(statefile_log_is_open(&l));
	s = load_str(path, 64);
	assert_string_equal(s, "abcdefgh");
	free(s);

	/* A new version replaces it whole. */
	assert_int_equal(statefile_begin(&w, path), 0);
	assert_int_equal(statefile_put(&w, "new", 3), 0);
	assert_int_equal(statefile_commit(&w), 0);
	s = load_str(path, 64);
	assert_string_equal(s, "new");
	free(s);
}

static void test_failed_commit(void **state)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], link_path[PATH_MAX];
	struct statefile_new w;
	struct statefile_log l;
	size_t len;

	(void)state;
	/* A directory in the way: rename fails, the temporary file goes, the directory stays. */
	in_dir(path, "d");
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(statefile_begin(&w, path), 0);
	assert_int_equal(statefile_put(&w, "abc", 3), 0);
	assert_int_equal(statefile_commit(&w), -1);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(access(tmp, F_OK), -1);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));

	/* No directory at all: begin fails, and so do put and commit; abort is harmless. */
	in_dir(path, "missing/f");
	assert_int_equal(statefile_begin(&w, path), -1);
	assert_int_equal(statefile_put(&w, "abc", 3), -1);
	assert_int_equal(statefile_commit(&w), -1);
	statefile_abort(&w);
	statefile_log_init(&l);
	assert_int_equal(statefile_log_open(&l, path), -1);
	assert_false(statefile_log_is_open(&l));

	/* A symbolic link is not followed. */
	in_dir(link_path, "link");
	in_dir(path, "d");
	assert_int_equal(symlink(path, link_path), 0);
	assert_null(statefile_load(link_path, 64, &len));
	assert_int_equal(errno, ELOOP);
}

static void test_mkdir(void **state)
{
	char path[PATH_MAX];
	struct stat st;

	(void)state;
	in_dir(path, "state");
	assert_int_equal(statefile_mkdir(path), 0);
	assert_int_equal(statefile_mkdir(path), 0); /* exists: fine */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	in_dir(path, "no/such/parent");
	assert_int_equal(statefile_mkdir(path), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_replace_and_append, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdir, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
