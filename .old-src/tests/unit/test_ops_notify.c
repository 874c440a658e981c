/*
 * test_ops_notify.c - core/notify.c against a real datagram socket standing
 * in for systemd's $NOTIFY_SOCKET: the built-in sender (path and abstract
 * names), and the notify_*() helpers through whichever sender the build uses
 * (libsystemd's sd_notify or the built-in one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/notify.h"

struct listener {
	int fd;
	char name[108]; /* as it goes into $NOTIFY_SOCKET */
};

/* Bind a datagram socket: a file under /tmp, or an abstract one if abstract. */
static void listener_open(struct listener *ln, bool abstract)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	socklen_t len;

	ln->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(ln->fd >= 0);
	if (abstract) {
		snprintf(ln->name, sizeof(ln->name), "@rnfsd-test-notify-%ld", (long)getpid());
		memcpy(addr.sun_path, ln->name, strlen(ln->name));
		addr.sun_path[0] = '\0';
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(ln->name));
	} else {
		snprintf(ln->name, sizeof(ln->name), "/tmp/rnfsd-test-notify-%ld", (long)getpid());
		unlink(ln->name);
		strcpy(addr.sun_path, ln->name);
		len = sizeof(addr);
	}
	assert_int_equal(bind(ln->fd, (struct sockaddr *)&addr, len), 0);
	struct timeval tmo = {.tv_sec = 2};
	assert_int_equal(setsockopt(ln->fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)), 0);
}

static void listener_close(struct listener *ln)
{
	close(ln->fd);
	if (ln->name[0] == '/')
		unlink(ln->name);
}

/* Receive one datagram as a string (fails the test on timeout). */
static void listener_recv(struct listener *ln, char *buf, size_t cap)
{
	ssize_t n = recv(ln->fd, buf, cap - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
}

static void test_builtin_path(void **state)
{
	(void)state;
	struct listener ln;
	char buf[256];

	listener_open(&ln, false);
	assert_int_equal(notify_send_to(ln.name, "READY=1"), 1);
	listener_recv(&ln, buf, sizeof(buf));
	assert_string_equal(buf, "READY=1");
	listener_close(&ln);
}

static void test_builtin_abstract(void **state)
{
	(void)state;
	struct listener ln;
	char buf[256];

	listener_open(&ln, true);
	assert_int_equal(notify_send_to(ln.name, "STATUS=abstract works"), 1);
	listener_recv(&ln, buf, sizeof(buf));
	assert_string_equal(buf, "STATUS=abstract works");
	listener_close(&ln);
}

static void test_builtin_bad_names(void **state)
{
	(void)state;
	errno = 0;
	assert_int_equal(notify_send_to("relative/path", "READY=1"), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(notify_send_to("@", "READY=1"), -1);
	assert_int_equal(notify_send_to("", "READY=1"), -1);
	char longname[200];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[0] = '/';
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(notify_send_to(longname, "READY=1"), -1);
	/* Nobody listening there: an error, not a crash or a hang. */
	assert_int_equal(notify_send_to("/tmp/rnfsd-test-notify-nobody-listens", "READY=1"), -1);
}

static void test_disabled_without_env(void **state)
{
	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_false(notify_enabled());
	assert_int_equal(notify_send("READY=1"), 0);
	notify_ready("no manager"); /* must simply do nothing */
	notify_stopping();
}

static unsigned long long monotonic_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL;
}

/* The helpers, through the sender this build uses, for both kinds of name. */
static void check_helpers(bool abstract)
{
	struct listener ln;
	char buf[512];

	listener_open(&ln, abstract);
	setenv("NOTIFY_SOCKET", ln.name, 1);
	assert_true(notify_enabled());

	notify_ready(NULL);
	listener_recv(&ln, buf, sizeof(buf));
	assert_string_equal(buf, "READY=1");

	notify_ready("2 exports\nand a newline");
	listener_recv(&ln, buf, sizeof(buf));
	assert_string_equal(buf, "READY=1\nSTATUS=2 exports and a newline");

	unsigned long long before = monotonic_usec();
	notify_reloading();
	unsigned long long after = monotonic_usec();
	listener_recv(&ln, buf, sizeof(buf));
	assert_true(strncmp(buf, "RELOADING=1\nMONOTONIC_USEC=", 27) == 0);
	unsigned long long usec = strtoull(buf + 27, NULL, 10);
	assert_true(usec >= before && usec <= after);

	notify_status("%u exports, %u connections", 3u, 7u);
	listener_recv(&ln, buf, sizeof(buf));
	assert_string_equal(buf, "STATUS=3 exports, 7 connections");

	notify_stopping();
	listener_recv(&ln, buf, sizeof(buf));
	assert_string_equal(buf, "STOPPING=1");

	unsetenv("NOTIFY_SOCKET");
	listener_close(&ln);
}

static void test_helpers_path(void **state)
{
	(void)state;
	check_helpers(false);
}

static void test_helpers_abstract(void **state)
{
	(void)state;
	check_helpers(true);
}

int main(void)
{
	log_init(true, 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_path),
		cmocka_unit_test(test_builtin_abstract),
		cmocka_unit_test(test_builtin_bad_names),
		cmocka_unit_test(test_disabled_without_env),
		cmocka_unit_test(test_helpers_path),
		cmocka_unit_test(test_helpers_abstract),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
