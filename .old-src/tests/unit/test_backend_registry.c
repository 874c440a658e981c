/*
 * test_backend_registry.c - backend/registry.c and the call wrappers of
 * backend/backend.h: an unknown driver is ENOENT, init/shutdown pair up, a
 * NULL operation answers EOPNOTSUPP and a present one is called with the
 * instance first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>

#include <cmocka.h>

#include "backend/backend.h"

static int getattr_calls;

static int fake_getattr(struct be_fs *fs, const struct be_obj *o, struct be_attr *out)
{
	(void)o;
	getattr_calls++;
	out->valid = BE_AT_SIZE;
	out->size = fs->handle_max;
	return 0;
}

static void fake_close(struct be_fs *fs)
{
	(void)fs;
}

static const struct be_ops fake_ops = { .close = fake_close, .getattr = fake_getattr };

static void test_unknown_driver(void **state)
{
	static struct be_fs dummy;
	struct be_fs_config cfg = { .path = "/", .export_id = 1 };
	struct be_fs *fs = &dummy; /* must be reset */

	(void)state;
	assert_int_equal(be_init(), 0);
	assert_null(be_driver_find("no-such-backend"));
	assert_int_equal(be_fs_open("no-such-backend", &cfg, &fs), ENOENT);
	assert_null(fs);
	be_shutdown();
}

static void test_wrappers(void **state)
{
	struct be_fs fs = { .ops = &fake_ops, .driver = "fake", .handle_max = 42 };
	struct be_obj o = BE_OBJ_INIT;
	struct be_attr a = { 0 };
	size_t len;

	(void)state;
	assert_false(be_obj_valid(&o));
	assert_int_equal(be_getattr(&fs, &o, &a), 0);
	assert_int_equal(getattr_calls, 1);
	assert_int_equal(a.size, 42);
	assert_int_equal(be_readlink(&fs, NULL, &o, NULL, 0, &len), EOPNOTSUPP);
	assert_int_equal(be_clone(&fs, NULL, NULL, 0, NULL, 0, 0), EOPNOTSUPP);
	be_end_call(&fs); /* optional: absent is fine */
	be_obj_put(&fs, &o); /* empty: not passed on */
	be_fs_close(&fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_driver),
		cmocka_unit_test(test_wrappers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
