/*
 * test_conf_exports_edit.c - live export edits (conf/exports_edit.c), as
 * exportfs -o / -u: a spec added to an export replaces its namesake in place
 * or is appended; a new path becomes a new export; fsid= / fs= that
 * contradict the export and id clashes are refused with the table
 * unchanged; removing a spec keeps the order, removing the last spec or the
 * whole path drops the export; a copy is deep; options format back as text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "conf/exports_edit.h"

static void parse(const char *text, struct export_table *t)
{
	char err[256];

	assert_int_equal(exports_parse(text, "test", t, err, sizeof(err)), 0);
}

/* Merge "line" (one export, one spec) into t. */
static int add(struct export_table *t, const char *line, char *err)
{
	struct export_table a;
	int rc;

	parse(line, &a);
	assert_int_equal(a.n, 1);
	rc = exports_edit_add(t, &a.exports[0], err, 256);
	exports_free(&a);
	return rc;
}

static void add_replace_append_new(void **state)
{
	struct export_table t;
	char err[256];

	(void)state;
	parse("/a 10.0.0.0/8(rw) 10.1.2.3(ro) *(ro)\n", &t);
	assert_int_equal(add(&t, "/a 10.1.2.3(rw,no_root_squash)\n", err), 0);
	assert_int_equal(t.exports[0].nclients, 3);
	assert_string_equal(t.exports[0].clients[1].spec, "10.1.2.3"); /* in place */
	assert_true(t.exports[0].clients[1].opts.rw);
	assert_int_equal(t.exports[0].clients[1].opts.squash, EXPORT_NO_ROOT_SQUASH);
	assert_int_equal(add(&t, "/a 192.0.2.0/24(rw)\n", err), 0);
	assert_int_equal(t.exports[0].nclients, 4);
	assert_string_equal(t.exports[0].clients[3].spec, "192.0.2.0/24"); /* appended, after "*" */
	assert_int_equal(add(&t, "/b/ 127.0.0.1(rw,insecure)\n", err), 0); /* normalised */
	assert_int_equal(t.n, 2);
	assert_string_equal(t.exports[1].path, "/b");
	assert_non_null(exports_find(&t, "/b"));
	exports_free(&t);
}

static void add_refused_unchanged(void **state)
{
	struct export_table t;
	char err[256];

	(void)state;
	parse("/a *(rw,fsid=7)\n/c *(ro)\n", &t);
	assert_int_equal(add(&t, "/a 10.0.0.1(rw,fsid=8)\n", err), -1);
	assert_non_null(strstr(err, "fsid"));
	assert_int_equal(add(&t, "/a 10.0.0.1(rw,fs=ceph)\n", err), -1);
	assert_int_equal(add(&t, "/b *(rw,fsid=7)\n", err), -1); /* the id of /a */
	assert_non_null(strstr(err, "/a"));
	assert_int_equal(t.n, 2);
	assert_int_equal(t.exports[0].nclients, 1);
	assert_int_equal(add(&t, "/a 10.0.0.1(rw,fsid=7)\n", err), 0); /* the same fsid is no change */
	exports_free(&t);
}

static void remove_client_and_export(void **state)
{
	struct export_table t;
	char err[256];
	bool gone;

	(void)state;
	parse("/a 10.0.0.1(rw) 10.0.0.2(ro) 10.0.0.3(ro)\n/b *\n/c *\n", &t);
	assert_int_equal(exports_edit_remove(&t, "/a", "10.0.0.2", &gone, err, sizeof(err)), 0);
	assert_false(gone);
	assert_int_equal(t.exports[0].nclients, 2);
	assert_string_equal(t.exports[0].clients[1].spec, "10.0.0.3");
	assert_int_equal(exports_edit_remove(&t, "/a", "10.9.9.9", &gone, err, sizeof(err)), -1);
	assert_int_equal(t.exports[0].nclients, 2);
	assert_int_equal(exports_edit_remove(&t, "/nope", NULL, &gone, err, sizeof(err)), -1);
	assert_int_equal(exports_edit_remove(&t, "/b", NULL, &gone, err, sizeof(err)), 0);
	assert_true(gone);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.exports[1].path, "/c"); /* order kept */
	assert_int_equal(exports_edit_remove(&t, "/c", "*", &gone, err, sizeof(err)), 0);
	assert_true(gone); /* its last client */
	assert_int_equal(t.n, 1);
	exports_free(&t);
}

static void dup_is_deep(void **state)
{
	struct export_table t, c;
	char err[256];
	bool gone;

	(void)state;
	parse("/a 10.0.0.1(rw) 10.0.0.2(ro)\n/b *\n", &t);
	assert_int_equal(exports_dup(&t, &c), 0);
	assert_int_equal(exports_edit_remove(&c, "/a", "10.0.0.1", &gone, err, sizeof(err)), 0);
	assert_int_equal(add(&c, "/d *(ro)\n", err), 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.exports[0].nclients, 2);
	assert_string_equal(t.exports[0].clients[0].spec, "10.0.0.1");
	assert_int_equal(c.n, 3);
	exports_free(&c);
	exports_free(&t);
}

static void opts_format(void **state)
{
	struct export_table t;
	char buf[160];

	(void)state;
	parse("/a *(rw,no_root_squash,insecure,sec=sys:none,anonuid=5)\n", &t);
	export_opts_format(&t.exports[0].clients[0].opts, buf, sizeof(buf));
	assert_string_equal(buf, "rw,no_root_squash,insecure,sync,sec=sys:none,anonuid=5,anongid=65534");
	exports_free(&t);
	/* Kerberos flavors survive, in the admin's order. */
	parse("/a *(ro,sec=krb5p:sys:krb5)\n", &t);
	export_opts_format(&t.exports[0].clients[0].opts, buf, sizeof(buf));
	assert_string_equal(buf, "ro,root_squash,secure,sync,sec=krb5p:sys:krb5,anonuid=65534,anongid=65534");
	exports_free(&t);
	/* xprtsec= only when it restricts (the default, any, is left out). */
	parse("/a *(rw,xprtsec=mtls:tls)\n", &t);
	export_opts_format(&t.exports[0].clients[0].opts, buf, sizeof(buf));
	assert_string_equal(buf, "rw,root_squash,secure,sync,sec=sys,xprtsec=tls:mtls,anonuid=65534,anongid=65534");
	exports_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(add_replace_append_new),
		cmocka_unit_test(add_refused_unchanged),
		cmocka_unit_test(remove_client_and_export),
		cmocka_unit_test(dup_is_deep),
		cmocka_unit_test(opts_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
