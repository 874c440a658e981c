/*
 * test_ctl_root.c - the control socket is root-only (issue 27):
 *  - it is a socket of mode 0600;
 *  - root's rnfsctl gets the statistics;
 *  - an unprivileged uid's rnfsctl (a forked child that setuid()s) fails
 *    with exit 1 and a message naming the socket as root-only (connect()
 *    refused by the mode);
 *  - with the mode widened to 0666 (a misconfiguration), the daemon's
 *    SO_PEERCRED check still refuses the same caller, tells it why in one
 *    line (rnfsctl prints it) and logs the refusal; root still gets answers.
 */
#include "tests/integration/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NOBODY 65534

static struct hx_env env;

int main(int argc, char **argv)
{
	static const char *const stats[] = {"stats", NULL};
	static const char *const list[] = {"export", "list", NULL};
	char out[8192], dir[sizeof(env.stats_socket)];
	struct stat st;
	int rc;

	hx_begin("ctl_root", argc, argv);
	hx_require_root();
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	if (!getenv("RNFSCTL"))
		hx_skip("RNFSCTL not set (meson sets it)");
	if (hx_daemon_start(&env) != 0)
		return hx_end();

	hx_section("mode, and root");
	rc = hx_rnfsctl(&env, -1, out, sizeof(out), stats);
	CHECK(rc == 0 && strstr(out, "rnfsd "), "root's rnfsctl stats works (rc %d)", rc);
	CHECK(stat(env.stats_socket, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0600,
	      "the socket is mode 0600 (%o)", (unsigned)(st.st_mode & 0777));

	hx_section("an unprivileged caller, mode 0600");
	/* Let it reach the socket's directory, so that the socket's own mode decides. */
	snprintf(dir, sizeof(dir), "%s", env.stats_socket);
	*strrchr(dir, '/') = '\0';
	chmod(dir, 0711);
	rc = hx_rnfsctl(&env, NOBODY, out, sizeof(out), stats);
	CHECK(rc == 1, "rnfsctl as uid %d exits 1 (rc %d)", NOBODY, rc);
	CHECK(strstr(out, "root-only") != NULL, "it says the socket is root-only: %s", out);

	hx_section("the mode widened: SO_PEERCRED refuses");
	CHECK(chmod(env.stats_socket, 0666) == 0, "chmod 0666 the socket");
	rc = hx_rnfsctl(&env, NOBODY, out, sizeof(out), list);
	CHECK(rc == 1, "rnfsctl export list as uid %d exits 1 (rc %d)", NOBODY, rc);
	CHECK(strstr(out, "root-only (caller uid 65534)") != NULL, "the daemon's refusal is printed: %s", out);
	CHECK(strstr(out, "PATH") == NULL, "no export list shown");
	CHECK(hx_log_count(&env, "refused pid") >= 1, "the refusal is logged");
	rc = hx_rnfsctl(&env, -1, out, sizeof(out), list);
	CHECK(rc == 0 && strstr(out, env.export_dir), "root still gets the export list (rc %d)", rc);

	hx_daemon_stop(&env);
	return hx_end();
}
