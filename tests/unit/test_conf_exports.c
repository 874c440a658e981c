/*
 * test_conf_exports.c - unit tests for conf/exports.c (first set; growing).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

#include <cmocka.h>

#include "conf/exports.h"

static void test_basic(void **state)
{
	struct export_table t;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char err[256];

	(void)state;
	assert_int_equal(exports_parse("/srv/a 192.0.2.0/24(rw,no_root_squash)\n", "t", &t, err, sizeof(err)), 0);
	assert_int_equal(t.n, 1);
	assert_string_equal(t.exports[0].path, "/srv/a");
	inet_pton(AF_INET, "192.0.2.9", &sin.sin_addr);
	assert_non_null(export_match(&t.exports[0], (struct sockaddr *)&sin, sizeof(sin)));
	inet_pton(AF_INET, "192.0.3.9", &sin.sin_addr);
	assert_null(export_match(&t.exports[0], (struct sockaddr *)&sin, sizeof(sin)));
	exports_free(&t);
	assert_int_equal(exports_parse("srv/a\n", "t", &t, err, sizeof(err)), -1);
	assert_string_equal(err, "t:1: bad export path 'srv/a': not an absolute path");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
