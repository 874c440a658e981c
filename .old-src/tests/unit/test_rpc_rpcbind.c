/*
 * test_rpc_rpcbind.c - rpcbind registration.
 * Without rpcbind: rpc_rpcbind_register() must return -1 at once, not hang.
 * With a running rpcbind and root: the registration is visible to
 * `rpcinfo -p` and gone after rpc_rpcbind_unregister(); skipped otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/log.h"
#include "rpc/rpc.h"
#include "rpc/rpcbind.h"
#include "tests/unit/rpc_test_msg.h"

static const struct rpc_proc procs[] = {{.name = "NULL"}};
static const struct rpc_version versions[] = {{2, 1, procs}, {3, 1, procs}};
static const struct rpc_program prog = {TPROG, "rnfsd-test", 2, versions};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void test_prog_versions(void **state)
{
	(void)state;
	struct rpc_prog_vers pv[4];
	assert_int_equal(rpc_prog_versions(pv, 4), 2);
	assert_int_equal(pv[0].prog, TPROG);
	assert_int_equal(pv[0].vers, 2);
	assert_int_equal(pv[1].vers, 3);
	assert_string_equal(pv[1].name, "rnfsd-test");
	assert_int_equal(rpc_prog_versions(pv, 1), 2); /* total even when truncated */
}

static void test_not_running(void **state)
{
	(void)state;
	rpc_rpcbind_set_probe_path("/nonexistent/rpcbind.sock");
	double t0 = now_s();
	assert_int_equal(rpc_rpcbind_register(2049, RPCBIND_TCP4 | RPCBIND_TCP6), -1);
	rpc_rpcbind_unregister(); /* nothing registered: no-op */
	assert_true(now_s() - t0 < 1.0);
	rpc_rpcbind_set_probe_path(NULL);
}

/* 1 if `rpcinfo -p` lists TPROG version vers on tcp at port. */
static int rpcinfo_has(unsigned vers, unsigned port)
{
	char line[256];
	int found = 0;
	FILE *f = popen("rpcinfo -p 127.0.0.1 2>/dev/null", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned p, v, po;
		char proto[16];
		if (sscanf(line, "%u %u %15s %u", &p, &v, proto, &po) == 4 && p == TPROG &&
		    v == vers && strcmp(proto, "tcp") == 0 && po == port)
			found = 1;
	}
	pclose(f);
	return found;
}

/* rpcbind answers on its UNIX socket (a stale socket file does not count). */
static bool rpcbind_answers(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static void test_real_rpcbind(void **state)
{
	(void)state;
	if (!rpcbind_answers("/run/rpcbind.sock") && !rpcbind_answers("/var/run/rpcbind.sock"))
		skip();
	if (geteuid() != 0)
		skip();
	assert_int_equal(rpc_rpcbind_register(12049, RPCBIND_TCP4 | RPCBIND_TCP6), 0);
	assert_int_equal(rpcinfo_has(2, 12049), 1);
	assert_int_equal(rpcinfo_has(3, 12049), 1);
	rpc_rpcbind_unregister();
	assert_int_equal(rpcinfo_has(2, 12049), 0);
	assert_int_equal(rpcinfo_has(3, 12049), 0);
}

int main(void)
{
	log_init(true, 0);
	rpc_register_program(&prog);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prog_versions),
		cmocka_unit_test(test_not_running),
		cmocka_unit_test(test_real_rpcbind),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	rpc_release();
	return r;
}
