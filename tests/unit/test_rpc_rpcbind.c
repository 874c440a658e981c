/*
 * test_rpc_rpcbind.c - rpcbind registration.
 * Without rpcbind: rpc_rpcbind_register() must return -1 at once, not hang.
 * With a running rpcbind and root: the registration is visible to
 * `rpcinfo -p` and gone after rpc_rpcbind_unregister(); skipped otherwise.
 * Whose is a registration (rpcbind_live.c): the start and exit rules, the
 * /proc/net line parser, and a listener of another process seen as such.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
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

/* RFC 1833 §2.2.1 / §3.2: a live server's mapping is kept; a stale one or ours replaced. */
static void test_start_rules(void **state)
{
	(void)state;
	assert_int_equal(rpcbind_start_action(0, false, false), RPCBIND_ADD);
	assert_int_equal(rpcbind_start_action(-1, false, false), RPCBIND_REPLACE);
	assert_int_equal(rpcbind_start_action(2049, true, false), RPCBIND_KEEP);   /* another instance */
	assert_int_equal(rpcbind_start_action(2049, true, true), RPCBIND_REPLACE); /* rpcbind-replace */
	assert_int_equal(rpcbind_start_action(2049, false, false), RPCBIND_REPLACE); /* stale, or ours */
}

static void test_exit_rules(void **state)
{
	(void)state;
	assert_true(rpcbind_exit_unset(2049, 2049, false));   /* still ours alone */
	assert_false(rpcbind_exit_unset(3049, 2049, false));  /* another's since */
	assert_false(rpcbind_exit_unset(3049, 2049, true));
	assert_false(rpcbind_exit_unset(2049, 2049, true));   /* a server on another address, same port */
	assert_false(rpcbind_exit_unset(0, 2049, false));     /* gone */
	assert_true(rpcbind_exit_unset(-1, 2049, false));     /* cannot tell: ours to remove */
}

static void test_net_line(void **state)
{
	uint16_t port;
	unsigned st;
	unsigned long ino;

	(void)state;
	assert_int_equal(rpcbind_net_line("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
					  "retrnsmt   uid  timeout inode", &port, &st, &ino), -1);
	assert_int_equal(rpcbind_net_line("   0: 0100007F:0801 00000000:0000 0A 00000000:00000000 00:00000000 "
					  "00000000     0        0 40631 1 00000000416b795d 100 0 0 10 0",
					  &port, &st, &ino), 0);
	assert_int_equal(port, 2049);
	assert_int_equal(st, 0x0A);
	assert_int_equal(ino, 40631);
	assert_int_equal(rpcbind_net_line("   1: 00000000000000000000000000000000:9CAF "
					  "00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 "
					  "00000000     0        0 56169 2 000000009cdd2ffa 0", &port, &st, &ino), 0);
	assert_int_equal(port, 0x9CAF);
	assert_int_equal(st, 7);
	assert_int_equal(ino, 56169);
	assert_int_equal(rpcbind_net_line("   1: 0100007F:XYZ 00000000:0000 0A 0:0 0:0 0 0 0 1", &port, &st, &ino), -1);
}

static void test_uaddr_port(void **state)
{
	(void)state;
	assert_int_equal(rpcbind_uaddr_port("0.0.0.0.8.1"), 2049);
	assert_int_equal(rpcbind_uaddr_port("127.0.0.1.0.111"), 111);
	assert_int_equal(rpcbind_uaddr_port("::.8.1"), 2049);
	assert_int_equal(rpcbind_uaddr_port("fe80::1.255.255"), 65535);
	assert_int_equal(rpcbind_uaddr_port("/run/rpcbind.sock"), -1); /* netid "local" */
	assert_int_equal(rpcbind_uaddr_port("1.2.3.4.256.1"), -1);
	assert_int_equal(rpcbind_uaddr_port("1.2.3.4.8."), -1);
	assert_int_equal(rpcbind_uaddr_port(".8"), -1);
	assert_int_equal(rpcbind_uaddr_port(""), -1);
}

/* Bind and listen on 127.0.0.1, port chosen by the kernel; returns fd, port in *port. */
static int listen_any(uint16_t *port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

/* Our own listener is not "another server"; a child process's is; a closed port is nobody's. */
static void test_port_served_by_other(void **state)
{
	uint16_t port;
	int pfd[2];

	(void)state;
	int fd = listen_any(&port);
	assert_false(rpcbind_port_served_by_other(port, true));
	assert_int_equal(pipe(pfd), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(fd);
		int cfd = listen_any(&port);
		(void)write(pfd[1], &port, sizeof(port));
		pause();
		close(cfd);
		_exit(0);
	}
	assert_int_equal(read(pfd[0], &port, sizeof(port)), (ssize_t)sizeof(port));
	assert_true(rpcbind_port_served_by_other(port, true));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_false(rpcbind_port_served_by_other(port, true));
	close(fd);
	close(pfd[0]);
	close(pfd[1]);
}

int main(void)
{
	log_init(true, 0);
	rpc_register_program(&prog);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prog_versions),
		cmocka_unit_test(test_not_running),
		cmocka_unit_test(test_real_rpcbind),
		cmocka_unit_test(test_start_rules),
		cmocka_unit_test(test_exit_rules),
		cmocka_unit_test(test_net_line),
		cmocka_unit_test(test_uaddr_port),
		cmocka_unit_test(test_port_served_by_other),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	rpc_release();
	return r;
}
