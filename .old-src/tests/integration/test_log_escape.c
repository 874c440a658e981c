/*
 * test_log_escape.c - client-supplied strings cannot forge or garble log lines
 * (issue 8, defect 7):
 *  - a MNT path holding a newline followed by text shaped like a daemon line
 *    ("rnfsd: error: ...") is logged on one line, the newline escaped;
 *  - the same through a MNT that succeeds (a directory inside the export whose
 *    name holds a newline);
 *  - carriage returns and terminal escapes (ESC) never reach the log raw;
 *  - the daemon keeps answering.
 */
#include "tests/integration/harness.h"
#include "tests/integration/rawrpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hx_env env;

/* Lines of the daemon log that begin with prefix. */
static unsigned log_lines_starting(const char *prefix)
{
	char line[8192];
	unsigned n = 0;
	FILE *f = fopen(env.log_path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, prefix, strlen(prefix)) == 0)
			n++;
	fclose(f);
	return n;
}

/* Occurrences of byte b anywhere in the daemon log. */
static unsigned log_bytes(int b)
{
	unsigned n = 0;
	int c;
	FILE *f = fopen(env.log_path, "r");

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == b;
	fclose(f);
	return n;
}

/* The log line about a MNT is written by a worker: give it a moment. */
static bool log_wait(const char *needle)
{
	double deadline = hx_now() + 5.0;

	while (hx_now() < deadline) {
		if (hx_log_count(&env, needle))
			return true;
		usleep(20000);
	}
	return false;
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX + 64];
	uint8_t fh[64];
	uint32_t fh_len = 0;
	struct raw_conn c;
	int st;

	hx_begin("log_escape", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	snprintf(dir, sizeof(dir), "%s/in\nrnfsd: warning: FORGED-2 mounted by nobody", env.export_dir);
	CHECK(mkdir(dir, 0755) == 0, "a directory whose name holds a newline");
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	if (!CHECK(raw_connect(&c, env.port) == 0, "raw connection"))
		return hx_end();

	hx_section("a refused MNT whose path forges a line");
	st = raw_mnt(&c, 1, "/nope\nrnfsd: error: FORGED-1 the server is compromised", fh, &fh_len);
	CHECK(st == MNT3ERR_NOENT || st == MNT3ERR_ACCES, "MNT refused (%s)", hx_mntstat_name(st));
	CHECK(log_wait("FORGED-1"), "the refusal is logged");
	CHECK_EQ(log_lines_starting("rnfsd: error: FORGED-1"), 0, "no forged line in the log");
	CHECK(hx_log_count(&env, "/nope\\x0arnfsd: error: FORGED-1") == 1,
	      "the path is logged on the refusal's own line with the newline as \\x0a");

	hx_section("a MNT that succeeds, of a directory whose name forges a line");
	st = raw_mnt(&c, 2, dir, fh, &fh_len);
	CHECK(st == MNT3_OK, "MNT of the directory (%s)", hx_mntstat_name(st));
	CHECK(log_wait("FORGED-2"), "the mount is logged");
	CHECK_EQ(log_lines_starting("rnfsd: warning: FORGED-2"), 0, "no forged line in the log");
	CHECK(hx_log_count(&env, "in\\x0arnfsd: warning: FORGED-2") == 1, "the newline logged as \\x0a");

	hx_section("carriage return, escape sequences, backslash");
	st = raw_mnt(&c, 3, "/cr\r\033[2K\033[1Arnfsd: error: FORGED-3\\x0a", fh, &fh_len);
	CHECK(st == MNT3ERR_NOENT || st == MNT3ERR_ACCES, "MNT refused (%s)", hx_mntstat_name(st));
	CHECK(log_wait("FORGED-3"), "the refusal is logged");
	CHECK_EQ(log_bytes('\r'), 0, "no carriage return in the log");
	CHECK_EQ(log_bytes(033), 0, "no ESC byte in the log");
	CHECK(hx_log_count(&env, "/cr\\x0d\\x1b[2K\\x1b[1Arnfsd: error: FORGED-3\\\\x0a") == 1,
	      "CR and ESC logged as \\x0d and \\x1b, a backslash as \\\\ (escaping is unambiguous)");

	hx_section("the daemon still answers");
	st = raw_mnt(&c, 4, env.export_dir, fh, &fh_len);
	CHECK(st == MNT3_OK, "MNT of the export (%s)", hx_mntstat_name(st));
	raw_close(&c);
	hx_daemon_stop(&env);
	return hx_end();
}
