/*
 * test_conf_exports_save.c - writing live export changes back into the
 * exports file text (conf/exports_save.c): comments, blank lines, order,
 * quoting and continuations are kept byte for byte; a client word is
 * replaced in place, appended, or cut with its blank; a line left without
 * clients goes; a line with an implicit "*" keeps it explicitly; a new
 * export is a new last line; what the parser reads from the result is the
 * edit; the atomic write keeps the file's mode.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "conf/exports.h"
#include "conf/exports_save.h"
#include "conf/conf_file.h"

static const char file[] =
	"# exports for the lab\n"
	"\n"
	"/srv/a  10.0.0.0/8(rw) 10.1.2.3(ro)   # the lab\n"
	"\"/srv/with space\" -ro \\\n"
	"    192.0.2.1 192.0.2.2(rw)\n"
	"/srv/bare\n"
	"# end\n";

static void add_cases(void **state)
{
	char err[256];
	char *t;

	(void)state;
	t = exports_text_add(file, "/srv/a", "10.1.2.3(rw,no_root_squash)", err, sizeof(err));
	assert_non_null(strstr(t, "/srv/a  10.0.0.0/8(rw) 10.1.2.3(rw,no_root_squash)   # the lab\n"));
	assert_int_equal(strlen(t), strlen(file) + strlen("rw,no_root_squash") - 2);
	free(t);
	t = exports_text_add(file, "/srv/a/", "*(ro)", err, sizeof(err));
	assert_non_null(strstr(t, "/srv/a  10.0.0.0/8(rw) 10.1.2.3(ro) *(ro)   # the lab\n"));
	free(t);
	t = exports_text_add(file, "/srv/with space", "192.0.2.3", err, sizeof(err));
	assert_non_null(strstr(t, "    192.0.2.1 192.0.2.2(rw) 192.0.2.3\n/srv/bare\n"));
	free(t);
	t = exports_text_add(file, "/srv/bare", "10.0.0.1(rw)", err, sizeof(err));
	assert_non_null(strstr(t, "\n/srv/bare * 10.0.0.1(rw)\n# end\n")); /* the implicit "*" kept */
	free(t);
	t = exports_text_add(file, "/srv/new", "10.0.0.1(rw)", err, sizeof(err));
	assert_int_equal(strncmp(t, file, strlen(file)), 0);
	assert_string_equal(t + strlen(file), "/srv/new 10.0.0.1(rw)\n");
	free(t);
	t = exports_text_add("/x *", "/y path", "*", err, sizeof(err)); /* no final newline */
	assert_string_equal(t, "/x *\n\"/y path\" *\n");
	free(t);
}

static void remove_cases(void **state)
{
	char err[256];
	char *t;

	(void)state;
	t = exports_text_remove(file, "/srv/a", "10.0.0.0/8", err, sizeof(err));
	assert_non_null(strstr(t, "\n/srv/a 10.1.2.3(ro)   # the lab\n"));
	free(t);
	t = exports_text_remove(file, "/srv/with space", NULL, err, sizeof(err));
	assert_non_null(strstr(t, "# the lab\n/srv/bare\n")); /* both physical lines gone */
	free(t);
	t = exports_text_remove(file, "/srv/bare", "*", err, sizeof(err));
	assert_null(strstr(t, "bare"));
	free(t);
	t = exports_text_remove("/a x(rw)\n/b *\n", "/a", "x", err, sizeof(err));
	assert_string_equal(t, "/b *\n"); /* its last client */
	free(t);
	assert_null(exports_text_remove(file, "/srv/nope", NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "no line"));
	assert_null(exports_text_remove(file, "/srv/a", "10.9.9.9", err, sizeof(err)));
	assert_non_null(strstr(err, "no client"));
}

/* The parser reads the edited text as the edit says. */
static void reparse(void **state)
{
	struct export_table t;
	char err[256];
	char *s = exports_text_add(file, "/srv/a", "10.1.2.3(rw)", err, sizeof(err));
	char *s2 = exports_text_remove(s, "/srv/with space", "192.0.2.1", err, sizeof(err));

	(void)state;
	assert_int_equal(exports_parse(s2, "edited", &t, err, sizeof(err)), 0);
	assert_int_equal(t.n, 3);
	assert_true(t.exports[0].clients[1].opts.rw);
	assert_int_equal(t.exports[1].nclients, 1);
	assert_string_equal(t.exports[1].clients[0].spec, "192.0.2.2");
	exports_free(&t);
	free(s);
	free(s2);
}

static void write_keeps_mode(void **state)
{
	char path[] = "/tmp/test-exports-save-XXXXXX", err[256];
	struct stat st;
	char *back;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	chmod(path, 0640);
	assert_int_equal(exports_save_write(path, file, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	back = conf_read_file(path, 1 << 20, err, sizeof(err));
	assert_string_equal(back, file);
	free(back);
	unlink(path);
	assert_int_equal(exports_save_write("/nonexistent-dir/exports", file, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent-dir/exports"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(add_cases),
		cmocka_unit_test(remove_cases),
		cmocka_unit_test(reparse),
		cmocka_unit_test(write_keeps_mode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
