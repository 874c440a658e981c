/*
 * test_conf_fd_budget.c - the descriptor budget (conf/fd_budget.c): with the
 * systemd unit's LimitNOFILE and with a shell's 1024 every table and the
 * reserve fit inside the limit; settings are kept when they fit and
 * lowered (and said so) when they do not; a client's share is a quarter of
 * its table unless set.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "conf/fd_budget.h"

static uint64_t total(const struct fd_budget *b)
{
	return (uint64_t)b->reserve + b->file_cache + b->open_files + b->lock_descs;
}

static void unit_limit(void **state)
{
	struct fd_budget_in in = { .nofile = 65536, .max_connections = 1024 };
	struct fd_budget b;

	(void)state;
	fd_budget_derive(&in, &b);
	assert_int_equal(b.reserve, 1024 + FD_BUDGET_PIPES + FD_BUDGET_MISC);
	assert_int_equal(b.file_cache, FD_BUDGET_FCACHE_MAX);
	assert_true(total(&b) <= 65536);
	assert_true(b.open_files > 30000 && b.lock_descs > 30000);
	assert_int_equal(b.open_files_per_client, b.open_files / 4);
	assert_int_equal(b.lock_owners_per_client, b.lock_descs / 4);
	assert_int_equal(b.nlm_locks_per_host, b.lock_descs / 4);
	assert_false(b.lowered);
}

static void shell_limit(void **state)
{
	struct fd_budget_in in = { .nofile = 1024, .max_connections = 1024 };
	struct fd_budget b;

	(void)state;
	fd_budget_derive(&in, &b);
	assert_int_equal(b.reserve, 512); /* half: the connections cannot all fit anyway */
	assert_int_equal(b.file_cache, 64);
	assert_true(total(&b) <= 1024);
	assert_int_equal(b.open_files, 224);
	assert_int_equal(b.open_files_per_client, 56);
}

static void settings_kept_or_lowered(void **state)
{
	struct fd_budget_in in = { .nofile = 65536, .max_connections = 100, .open_files = 1000,
				   .open_files_per_client = 10, .lock_owners_per_client = 20, .lock_descs = 500,
				   .nlm_locks_per_host = 30 };
	struct fd_budget b;

	(void)state;
	fd_budget_derive(&in, &b);
	assert_int_equal(b.open_files, 1000);
	assert_int_equal(b.lock_descs, 500);
	assert_int_equal(b.open_files_per_client, 10);
	assert_int_equal(b.lock_owners_per_client, 20);
	assert_int_equal(b.nlm_locks_per_host, 30);
	assert_false(b.lowered);

	in = (struct fd_budget_in){ .nofile = 1024, .max_connections = 100, .open_files = 100000,
				    .lock_descs = 100000, .open_files_per_client = 100000 };
	fd_budget_derive(&in, &b);
	assert_true(b.lowered);
	assert_true(total(&b) <= 1024);
	assert_int_equal(b.open_files_per_client, b.open_files);
	/* one set too large: the other keeps what is left */
	in = (struct fd_budget_in){ .nofile = 1024, .max_connections = 100, .open_files = 5000 };
	fd_budget_derive(&in, &b);
	assert_true(b.lowered);
	assert_true(total(&b) <= 1024);
}

static void tiny_limit(void **state)
{
	struct fd_budget_in in = { .nofile = 10, .max_connections = 1024 };
	struct fd_budget b;

	(void)state;
	fd_budget_derive(&in, &b);
	assert_true(b.open_files >= FD_BUDGET_MIN && b.lock_descs >= FD_BUDGET_MIN);
	assert_true(b.open_files_per_client >= 1 && b.open_files_per_client <= b.open_files);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unit_limit),
		cmocka_unit_test(shell_limit),
		cmocka_unit_test(settings_kept_or_lowered),
		cmocka_unit_test(tiny_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
