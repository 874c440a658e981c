/*
 * test_admin_errors.c - what a new admin's mistakes do (issue 8, defects 4, 8, 9):
 *  - exports file (defect 4): rnfsd.conf names an exports file that does not
 *    exist: start-up fails with exit status 1 naming it (the built-in default
 *    export is never served in its place, /srv/rnfsd is not created); the file
 *    is deleted while running: SIGHUP keeps the running exports and says why;
 *  - export roots (defect 8): an export whose root does not exist, or is not a
 *    directory: start-up fails with exit status 1 naming the path and the
 *    error; a reload whose new exports hold such a root keeps the running
 *    exports (all of them) and says why;
 *  - listeners (defect 9): a listen address that cannot be bound (port in use,
 *    address not on this host): start-up fails with exit status 1 naming it;
 *    one marked "optional" is skipped with a warning when the host does not
 *    have the address, but a port in use still fails start-up.
 */
#include "tests/integration/harness.h"
#include "rnfsd_build.h"

#include <stdlib.h>
#include "tests/integration/rawrpc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOT_HERE "203.0.113.77" /* TEST-NET-3 (RFC 5737): on no interface of this host */

static struct hx_env env;

/* rnfsd.conf with this [tcp] listen value. */
static void write_conf(const char *listen)
{
	FILE *f = fopen(env.conf_path, "w");

	if (!f)
		return;
	fprintf(f, "[rnfsd]\nthreads = 2\nstate-dir = %s\nexports = %s\nrpcbind = no\nstats-socket = %s\n"
		"[tcp]\nlisten = %s\n[rdma]\nenable = no\n", env.state_dir, env.exports_path, env.stats_socket,
		listen);
	fclose(f);
}

static void write_conf_default_listen(void)
{
	char l[64];

	snprintf(l, sizeof(l), "127.0.0.1:%u", env.port);
	write_conf(l);
}

static int mnt_status(const char *path)
{
	struct raw_conn c;
	uint8_t fh[64];
	uint32_t len;
	int st;

	if (raw_connect(&c, env.port) != 0)
		return -1;
	st = raw_mnt(&c, 7, path, fh, &len);
	raw_close(&c);
	return st;
}

/* SIGHUP and wait until the daemon logged the n-th line about a reload. */
static bool reload_and_wait(unsigned *reloads)
{
	double deadline = hx_now() + 5.0;

	if (hx_daemon_signal(&env, SIGHUP) != 0)
		return false;
	(*reloads)++;
	while (hx_now() < deadline) {
		if (hx_log_count(&env, "reload:") >= *reloads)
			return true;
		usleep(20000);
	}
	return false;
}

/* Start each section's log afresh (no daemon is running), so its checks see only its own lines. */
static void log_reset(void)
{
	if (truncate(env.log_path, 0) != 0)
		printf("# cannot truncate %s\n", env.log_path);
}

/* A socket listening on 127.0.0.1:port (held by the test), or -1. */
static int hold_port(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static void exports_file_missing(bool srv_existed)
{
	unsigned reloads = 0;
	int st;

	hx_section("rnfsd.conf names an exports file that does not exist");
	log_reset();
	write_conf_default_listen();
	unlink(env.exports_path);
	st = hx_daemon_run_to_exit(&env, 5.0);
	CHECK_EQ(st, 1, "start-up fails with exit status 1");
	CHECK(hx_log_count(&env, env.exports_path) >= 1 && hx_log_count(&env, "No such file") >= 1,
	      "the log names the missing exports file and the error");
	CHECK(hx_log_count(&env, "/srv/rnfsd") == 0, "the built-in default export is not served instead");
	if (!srv_existed)
		CHECK(access("/srv/rnfsd", F_OK) != 0, "/srv/rnfsd was not created");

	hx_section("the exports file is deleted while running, SIGHUP");
	log_reset();
	hx_write_exports(&env, "%s 127.0.0.1(rw,no_root_squash,insecure)\n", env.export_dir);
	if (hx_daemon_start(&env) != 0)
		return;
	CHECK(mnt_status(env.export_dir) == MNT3_OK, "MNT before");
	unlink(env.exports_path);
	CHECK(reload_and_wait(&reloads), "the reload is logged");
	st = mnt_status(env.export_dir);
	CHECK(st == MNT3_OK, "the running export is kept (%s)", hx_mntstat_name(st));
	st = mnt_status("/srv/rnfsd");
	CHECK(st == MNT3ERR_NOENT, "the built-in default is not exported (%s)", hx_mntstat_name(st));
	CHECK(hx_log_count(&env, "keeping the running exports") >= 1, "the log says the exports are kept");
	if (!srv_existed)
		CHECK(access("/srv/rnfsd", F_OK) != 0, "/srv/rnfsd was not created");
	hx_daemon_stop(&env);
}

static void export_root_unopenable(void)
{
	char b[PATH_MAX], missing[PATH_MAX], file[PATH_MAX], needle[PATH_MAX + 64];
	unsigned reloads = 0;
	int st;

	snprintf(b, sizeof(b), "%s", hx_path(&env, "exportB"));
	snprintf(missing, sizeof(missing), "%s", hx_path(&env, "no-such-dir"));
	snprintf(file, sizeof(file), "%s", hx_path(&env, "a-file"));
	mkdir(b, 0755);
	hx_write_file(file, "x", 1, 0644);
	write_conf_default_listen();

	hx_section("an export root that does not exist, at start-up");
	log_reset();
	hx_write_exports(&env, "%s 127.0.0.1(rw,insecure)\n%s 127.0.0.1(rw,insecure)\n", env.export_dir, missing);
	st = hx_daemon_run_to_exit(&env, 5.0);
	CHECK_EQ(st, 1, "start-up fails with exit status 1");
	snprintf(needle, sizeof(needle), "%s: No such file or directory", missing);
	CHECK(hx_log_count(&env, needle) >= 1, "the log names the export root and the error");

	hx_section("an export root that is a file, at start-up");
	log_reset();
	hx_write_exports(&env, "%s 127.0.0.1(rw,insecure)\n", file);
	st = hx_daemon_run_to_exit(&env, 5.0);
	CHECK_EQ(st, 1, "start-up fails with exit status 1");
	snprintf(needle, sizeof(needle), "%s: Not a directory", file);
	CHECK(hx_log_count(&env, needle) >= 1, "the log names it and says it is not a directory");

	hx_section("a reload whose new exports hold a root that does not exist");
	log_reset();
	hx_write_exports(&env, "%s 127.0.0.1(rw,insecure)\n%s 127.0.0.1(rw,insecure)\n", env.export_dir, b);
	if (hx_daemon_start(&env) != 0)
		return;
	CHECK(mnt_status(b) == MNT3_OK, "MNT exportB before");
	hx_write_exports(&env, "%s 127.0.0.1(rw,insecure)\n%s 127.0.0.1(rw,insecure)\n", env.export_dir, missing);
	CHECK(reload_and_wait(&reloads), "the reload is logged");
	st = mnt_status(b);
	CHECK(st == MNT3_OK, "exportB (no longer in the file) is still served: the old table is kept (%s)",
	      hx_mntstat_name(st));
	st = mnt_status(env.export_dir);
	CHECK(st == MNT3_OK, "the export is still served (%s)", hx_mntstat_name(st));
	CHECK(hx_log_count(&env, "keeping the running exports") >= 1, "the log says the exports are kept");
	CHECK(hx_daemon_alive(&env), "daemon running");
	hx_daemon_stop(&env);
	hx_write_exports(&env, "%s 127.0.0.1(rw,no_root_squash,insecure)\n", env.export_dir);
}

static void listeners(void)
{
	char l[128], needle[96];
	uint16_t held = 0;
	int hfd = hold_port(&held);
	int st;

	if (!CHECK(hfd >= 0, "a port held by the test"))
		return;

	hx_section("a listen address whose port is in use");
	log_reset();
	snprintf(l, sizeof(l), "127.0.0.1:%u, 127.0.0.1:%u", env.port, held);
	write_conf(l);
	st = hx_daemon_run_to_exit(&env, 5.0);
	CHECK_EQ(st, 1, "start-up fails with exit status 1");
	snprintf(needle, sizeof(needle), "127.0.0.1 port %u: Address already in use", held);
	CHECK(hx_log_count(&env, needle) >= 1, "the log names the address and the error");

	hx_section("a listen address this host does not have");
	log_reset();
	snprintf(l, sizeof(l), "127.0.0.1:%u, " NOT_HERE ":%u", env.port, env.port);
	write_conf(l);
	st = hx_daemon_run_to_exit(&env, 5.0);
	CHECK_EQ(st, 1, "start-up fails with exit status 1");
	CHECK(hx_log_count(&env, NOT_HERE) >= 1, "the log names the address");

	hx_section("the same address marked optional");
	log_reset();
	snprintf(l, sizeof(l), "127.0.0.1:%u, " NOT_HERE ":%u optional", env.port, env.port);
	write_conf(l);
	if (hx_daemon_start(&env) == 0) {
		CHECK(mnt_status(env.export_dir) == MNT3_OK, "serves on the other address");
		snprintf(needle, sizeof(needle), NOT_HERE " port %u skipped", env.port);
		CHECK(hx_log_count(&env, needle) >= 1, "the log says the optional address was skipped");
		hx_daemon_stop(&env);
	}

	hx_section("an optional address whose port is in use still fails");
	log_reset();
	snprintf(l, sizeof(l), "127.0.0.1:%u, 127.0.0.1:%u optional", env.port, held);
	write_conf(l);
	st = hx_daemon_run_to_exit(&env, 5.0);
	CHECK_EQ(st, 1, "start-up fails with exit status 1");
	close(hfd);
	write_conf_default_listen();
}

/* An export naming a backend built as a module (fs=ceph) that cannot be found:
 * start-up fails and says where it looked. The binary is copied where no
 * backend/ directory is beside it. Only where rnfsd is built with Ceph. */
static void backend_module_missing(void)
{
	char copy[PATH_MAX], saved[PATH_MAX], cmd[3 * PATH_MAX];
	int st;

	if (!HAVE_CEPH)
		return;
	hx_section("fs=ceph with the module rnfsd_ceph.so missing, at start-up");
	snprintf(copy, sizeof(copy), "%s", hx_path(&env, "lonely-rnfsd"));
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", env.exe, copy);
	if (!CHECK(system(cmd) == 0, "rnfsd copied to a directory with no backend/ beside it"))
		return;
	snprintf(saved, sizeof(saved), "%s", env.exe);
	snprintf(env.exe, sizeof(env.exe), "%s", copy);
	write_conf_default_listen();
	log_reset();
	hx_write_exports(&env, "%s 127.0.0.1(rw,insecure,fs=ceph)\n", env.export_dir);
	st = hx_daemon_run_to_exit(&env, 5.0);
	CHECK_EQ(st, 1, "start-up fails with exit status 1");
	CHECK(hx_log_count(&env, "module rnfsd_ceph.so not found") >= 1, "the log says the module was not found");
	snprintf(env.exe, sizeof(env.exe), "%s", saved);
	hx_write_exports(&env, "%s 127.0.0.1(rw,no_root_squash,insecure)\n", env.export_dir);
}

int main(int argc, char **argv)
{
	bool srv_existed = access("/srv/rnfsd", F_OK) == 0;

	hx_begin("admin_errors", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	exports_file_missing(srv_existed);
	export_root_unopenable();
	listeners();
	backend_module_missing();
	return hx_end();
}
