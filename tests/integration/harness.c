/*
 * harness.c - the integration-test harness (see harness.h): checks and their
 * output, the temporary tree and daemon lifecycle, libnfs mount setup, and
 * a synchronous wrapper over libnfs's asynchronous raw RPC API.
 *
 * A raw reply is only valid inside libnfs's callback, so hx_call_cb()
 * deep-copies it: it re-encodes the decoded result with the same ZDR
 * routine into a scratch buffer and decodes that into the caller's struct
 * with a ZDR stream the harness keeps (its allocations back the pointers
 * in the copy) until hx_end().
 */
#include "tests/integration/harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

unsigned hx_passed, hx_failed, hx_known_failed;
static const char *hx_test_name = "?";
static char hx_exe[PATH_MAX];
static struct hx_env *hx_envs[8];

/* ---- checks ---------------------------------------------------------- */

static void hx_vprint(const char *tag, const char *file, int line, const char *fmt, va_list ap)
{
	if (file)
		printf("%s: %s:%d: ", tag, file, line);
	else
		printf("%s: ", tag);
	vprintf(fmt, ap);
}

void hx_begin(const char *test_name, int argc, char **argv)
{
	const char *exe = argc > 1 ? argv[1] : getenv("RNFSD_EXE");

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	hx_test_name = test_name;
	printf("# integration test %s\n", test_name);
	if (!exe || !*exe)
		hx_skip("no rnfsd binary given (argv[1] or RNFSD_EXE)");
	if (access(exe, X_OK) != 0)
		hx_skip("rnfsd binary not executable");
	snprintf(hx_exe, sizeof(hx_exe), "%s", exe);
}

void hx_skip(const char *why)
{
	unsigned i;

	for (i = 0; i < sizeof(hx_envs) / sizeof(hx_envs[0]); i++)
		if (hx_envs[i])
			hx_env_release(hx_envs[i]);
	printf("SKIP: %s: %s\n", hx_test_name, why);
	exit(HX_SKIP);
}

void hx_require_root(void)
{
	if (geteuid() != 0)
		hx_skip("needs root (file ownership, squashing, uid switching)");
}

void hx_section(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("## ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

void hx_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("   ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

bool hx_check(bool ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (ok) {
		hx_passed++;
		hx_vprint("PASS", NULL, 0, fmt, ap);
	} else {
		hx_failed++;
		hx_vprint("FAIL", file, line, fmt, ap);
	}
	va_end(ap);
	printf("\n");
	return ok;
}

bool hx_check_u64(uint64_t got, uint64_t exp, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	bool ok = got == exp;

	va_start(ap, fmt);
	if (ok) {
		hx_passed++;
		hx_vprint("PASS", NULL, 0, fmt, ap);
		printf(" (= %llu)\n", (unsigned long long)got);
	} else {
		hx_failed++;
		hx_vprint("FAIL", file, line, fmt, ap);
		printf(": expected %llu (0x%llx), got %llu (0x%llx)\n", (unsigned long long)exp,
		       (unsigned long long)exp, (unsigned long long)got, (unsigned long long)got);
	}
	va_end(ap);
	return ok;
}

const char *hx_nfsstat_name(int s)
{
	switch (s) {
	case -1: return "RPC-FAILURE";
	case NFS3_OK: return "NFS3_OK";
	case NFS3ERR_PERM: return "NFS3ERR_PERM";
	case NFS3ERR_NOENT: return "NFS3ERR_NOENT";
	case NFS3ERR_IO: return "NFS3ERR_IO";
	case NFS3ERR_NXIO: return "NFS3ERR_NXIO";
	case NFS3ERR_ACCES: return "NFS3ERR_ACCES";
	case NFS3ERR_EXIST: return "NFS3ERR_EXIST";
	case NFS3ERR_XDEV: return "NFS3ERR_XDEV";
	case NFS3ERR_NODEV: return "NFS3ERR_NODEV";
	case NFS3ERR_NOTDIR: return "NFS3ERR_NOTDIR";
	case NFS3ERR_ISDIR: return "NFS3ERR_ISDIR";
	case NFS3ERR_INVAL: return "NFS3ERR_INVAL";
	case NFS3ERR_FBIG: return "NFS3ERR_FBIG";
	case NFS3ERR_NOSPC: return "NFS3ERR_NOSPC";
	case NFS3ERR_ROFS: return "NFS3ERR_ROFS";
	case NFS3ERR_MLINK: return "NFS3ERR_MLINK";
	case NFS3ERR_NAMETOOLONG: return "NFS3ERR_NAMETOOLONG";
	case NFS3ERR_NOTEMPTY: return "NFS3ERR_NOTEMPTY";
	case NFS3ERR_DQUOT: return "NFS3ERR_DQUOT";
	case NFS3ERR_STALE: return "NFS3ERR_STALE";
	case NFS3ERR_REMOTE: return "NFS3ERR_REMOTE";
	case NFS3ERR_BADHANDLE: return "NFS3ERR_BADHANDLE";
	case NFS3ERR_NOT_SYNC: return "NFS3ERR_NOT_SYNC";
	case NFS3ERR_BAD_COOKIE: return "NFS3ERR_BAD_COOKIE";
	case NFS3ERR_NOTSUPP: return "NFS3ERR_NOTSUPP";
	case NFS3ERR_TOOSMALL: return "NFS3ERR_TOOSMALL";
	case NFS3ERR_SERVERFAULT: return "NFS3ERR_SERVERFAULT";
	case NFS3ERR_BADTYPE: return "NFS3ERR_BADTYPE";
	case NFS3ERR_JUKEBOX: return "NFS3ERR_JUKEBOX";
	default: return "NFS3ERR_(unknown)";
	}
}

const char *hx_mntstat_name(int s)
{
	switch (s) {
	case -1: return "RPC-FAILURE";
	case MNT3_OK: return "MNT3_OK";
	case MNT3ERR_PERM: return "MNT3ERR_PERM";
	case MNT3ERR_NOENT: return "MNT3ERR_NOENT";
	case MNT3ERR_IO: return "MNT3ERR_IO";
	case MNT3ERR_ACCES: return "MNT3ERR_ACCES";
	case MNT3ERR_NOTDIR: return "MNT3ERR_NOTDIR";
	case MNT3ERR_INVAL: return "MNT3ERR_INVAL";
	case MNT3ERR_NAMETOOLONG: return "MNT3ERR_NAMETOOLONG";
	case MNT3ERR_NOTSUPP: return "MNT3ERR_NOTSUPP";
	case MNT3ERR_SERVERFAULT: return "MNT3ERR_SERVERFAULT";
	default: return "MNT3ERR_(unknown)";
	}
}

static bool hx_check_nfs_common(int got, int e1, int e2, const char *file, int line,
				const char *fmt, va_list ap)
{
	bool ok = got == e1 || got == e2;

	if (ok) {
		hx_passed++;
		hx_vprint("PASS", NULL, 0, fmt, ap);
		printf(" (%s)\n", hx_nfsstat_name(got));
	} else {
		hx_failed++;
		hx_vprint("FAIL", file, line, fmt, ap);
		if (e1 == e2)
			printf(": expected %s, got %s (%d)", hx_nfsstat_name(e1), hx_nfsstat_name(got), got);
		else
			printf(": expected %s or %s, got %s (%d)", hx_nfsstat_name(e1),
			       hx_nfsstat_name(e2), hx_nfsstat_name(got), got);
		if (got == -1)
			printf(" [%s]", hx_call_error());
		printf("\n");
	}
	return ok;
}

bool hx_check_nfs(int got, int exp, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = hx_check_nfs_common(got, exp, exp, file, line, fmt, ap);
	va_end(ap);
	return ok;
}

bool hx_check_nfs2(int got, int exp1, int exp2, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = hx_check_nfs_common(got, exp1, exp2, file, line, fmt, ap);
	va_end(ap);
	return ok;
}

void hx_known_fail(bool ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (ok) {
		hx_passed++;
		hx_vprint("PASS (was KNOWN_FAIL: remove the marker)", file, line, fmt, ap);
	} else {
		hx_known_failed++;
		hx_vprint("KNOWN_FAIL", file, line, fmt, ap);
	}
	va_end(ap);
	printf("\n");
}

static void hx_calls_free(void);

int hx_end(void)
{
	unsigned i;

	for (i = 0; i < sizeof(hx_envs) / sizeof(hx_envs[0]); i++)
		if (hx_envs[i])
			hx_env_release(hx_envs[i]);
	hx_calls_free();
	printf("# %s: %u checks passed, %u failed, %u known failures\n", hx_test_name,
	       hx_passed, hx_failed, hx_known_failed);
	printf("%u passed, %u failed\n", hx_passed, hx_failed);
	if (hx_failed)
		return 1;
	if (hx_passed == 0) {
		printf("FAIL: no check ran\n");
		return 1;
	}
	return 0;
}

/* ---- environment and daemon ------------------------------------------ */

double hx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A port below the ephemeral range (32768-60999 on Linux), so no client
 * socket of a parallel test takes it between this check and the daemon's
 * bind; random, so parallel tests rarely pick the same one (and
 * hx_daemon_start() retries with another port if they do).
 */
uint16_t hx_free_port(void)
{
	static uint64_t seed;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	unsigned tries;
	uint16_t port;
	int fd, ok;

	if (!seed)
		seed = (uint64_t)getpid() << 32 ^ (uint64_t)(hx_now() * 1e9);
	for (tries = 0; tries < 200; tries++) {
		port = (uint16_t)(20000 + hx_rand(&seed) % 12000);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return 0;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin.sin_port = htons(port);
		ok = bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;
		close(fd);
		if (ok && !hx_port_open(port))
			return port;
	}
	return 0;
}

bool hx_port_open(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok;

	if (fd < 0)
		return false;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;
	close(fd);
	return ok;
}

const char *hx_path(const struct hx_env *e, const char *fmt, ...)
{
	static char bufs[8][PATH_MAX];
	static unsigned next;
	char *b = bufs[next++ % 8];
	char rel[PATH_MAX - 1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(b, PATH_MAX, "%s/%s", e->dir, rel);
	return b;
}

const char *hx_xpath(const struct hx_env *e, const char *fmt, ...)
{
	static char bufs[8][PATH_MAX];
	static unsigned next;
	char *b = bufs[next++ % 8];
	char rel[PATH_MAX - 1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(b, PATH_MAX, "%.1000s/%s", e->export_dir, rel);
	return b;
}

const char *hx_ceph_conf(void)
{
	const char *conf = getenv("HX_CEPH");

	return conf && *conf && getenv("RNFSD_CEPH_DIR") ? conf : NULL;
}

int hx_conf_swap(const struct hx_env *e, const char *from, const char *to)
{
	char conf[8192];
	FILE *f = fopen(e->conf_path, "r+");
	size_t n;
	char *at;

	if (!f)
		return -1;
	n = fread(conf, 1, sizeof(conf) - 1, f);
	conf[n] = '\0';
	at = strstr(conf, from);
	if (at) {
		memcpy(at, to, strlen(to));
		rewind(f);
		fwrite(conf, 1, n, f);
	}
	fclose(f);
	return at ? 0 : -1;
}

int hx_write_config(const struct hx_env *e)
{
	FILE *f = fopen(e->conf_path, "w");
	char sock_line[160] = "", loops_line[32] = "";
	const char *loops = getenv("HX_LOOPS");

	if (!f)
		return -1;
	/* HX_LOOPS=N: every daemon with [rnfsd] loops = N (a test may name its own in rnfsd_extra). */
	if (loops && *loops && strspn(loops, "0123456789") == strlen(loops) && strlen(loops) < 4 &&
	    (!e->rnfsd_extra || !strstr(e->rnfsd_extra, "loops")))
		snprintf(loops_line, sizeof(loops_line), "loops = %s\n", loops);
	/* Not the host's /run/rnfsd: tests run side by side (a test may name its own in rnfsd_extra). */
	if (!e->rnfsd_extra || !strstr(e->rnfsd_extra, "stats-socket"))
		snprintf(sock_line, sizeof(sock_line), "stats-socket = %s\n", e->stats_socket);
	fprintf(f, "# written by the integration test harness\n"
		"[rnfsd]\n"
		"threads = %u\n"
		"state-dir = %s\n"
		"exports = %s\n"
		"rpcbind = no\n"
		"statd-dir = %s/no-statd\n" /* not the host's: no sm-notify, no grace period from its records */
		"%s"
		"%s"
		"%s"
		"[tcp]\n"
		"listen = 127.0.0.1:%u\n"
		"[rdma]\n"
		"enable = no\n",
		e->threads, e->state_dir, e->exports_path, e->state_dir, sock_line, loops_line,
		e->rnfsd_extra ? e->rnfsd_extra : "", e->port);
	/* HX_CEPH (tests/ceph/with-cluster.sh --fuse): the export is served by the ceph backend */
	if (hx_ceph_conf())
		fprintf(f, "[ceph]\nconf = %s\nkeyring = %s/keyring\nmount-timeout = 8\nop-timeout = 10\n",
			hx_ceph_conf(), getenv("RNFSD_CEPH_DIR"));
	return fclose(f);
}

int hx_write_exports(const struct hx_env *e, const char *fmt, ...)
{
	char tmp[PATH_MAX + 8];
	va_list ap;
	FILE *f;

	/* Write and rename, so a SIGHUP never sees half a file. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", e->exports_path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, e->exports_path);
}

int hx_append_config(const struct hx_env *e, const char *fmt, ...)
{
	va_list ap;
	FILE *f = fopen(e->conf_path, "a");

	if (!f)
		return -1;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	return fclose(f) != 0 ? -1 : 0;
}

static void hx_fatal(const char *what)
{
	printf("FAIL: %s: %s (%s)\n", hx_test_name, what, strerror(errno));
	hx_failed++;
	exit(hx_end());
}

static void hx_env_external(struct hx_env *e)
{
	const char *ext = getenv("HX_EXTERNAL_SERVER");
	unsigned nfsport, mntport;
	int n = 0;

	if (!ext || !*ext)
		return;
	if (sscanf(ext, "%u:%u:%n", &nfsport, &mntport, &n) != 2 || !n || ext[n] != '/')
		hx_skip("HX_EXTERNAL_SERVER is not NFSPORT:MOUNTPORT:/EXPORTDIR");
	e->external = true;
	e->port = (uint16_t)nfsport;
	e->mount_port = (uint16_t)mntport;
	snprintf(e->export_dir, sizeof(e->export_dir), "%s", ext + n);
	/* Empty it, keeping the directory itself. */
	{
		char cmd[PATH_MAX + 64];

		snprintf(cmd, sizeof(cmd), "find '%s' -mindepth 1 -delete", e->export_dir);
		if (system(cmd) != 0)
			hx_fatal("cleaning the external export");
	}
	printf("# external server: NFS port %u, MOUNT port %u, export %s\n", e->port, e->mount_port,
	       e->export_dir);
}

void hx_require_own_daemon(const struct hx_env *e)
{
	if (e->external)
		hx_skip("needs its own rnfsd (HX_EXTERNAL_SERVER is set)");
}

void hx_env_init(struct hx_env *e)
{
	const char *tmp = getenv("TMPDIR");
	unsigned i;

	memset(e, 0, sizeof(*e));
	snprintf(e->exe, sizeof(e->exe), "%s", hx_exe);
	snprintf(e->dir, sizeof(e->dir), "%s/rnfsd-it-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(e->dir))
		hx_fatal("mkdtemp");
	chmod(e->dir, 0755); /* squashed users must reach the export below it */
	snprintf(e->export_dir, sizeof(e->export_dir), "%s/export", e->dir);
	snprintf(e->state_dir, sizeof(e->state_dir), "%s/state", e->dir);
	snprintf(e->conf_path, sizeof(e->conf_path), "%s/rnfsd.conf", e->dir);
	snprintf(e->exports_path, sizeof(e->exports_path), "%s/exports", e->dir);
	snprintf(e->log_path, sizeof(e->log_path), "%s/rnfsd.log", e->dir);
	if (mkdir(e->export_dir, 0755) != 0 || mkdir(e->state_dir, 0700) != 0)
		hx_fatal("mkdir export/state");
	/* A UNIX socket's path has at most 107 bytes, and CephFS through FUSE is no place for one. */
	if (!hx_ceph_conf() && strlen(e->dir) + sizeof("/rnfsd.sock") <= sizeof(e->stats_socket)) {
		snprintf(e->stats_socket, sizeof(e->stats_socket), "%s/rnfsd.sock", e->dir);
	} else {
		snprintf(e->sock_dir, sizeof(e->sock_dir), "/tmp/rnfsd-hx-XXXXXX");
		if (!mkdtemp(e->sock_dir))
			hx_fatal("mkdtemp for the stats socket");
		snprintf(e->stats_socket, sizeof(e->stats_socket), "%s/rnfsd.sock", e->sock_dir);
	}
	e->threads = 4;
	e->port = hx_free_port();
	if (!e->port)
		hx_fatal("no free port");
	e->mount_port = e->port;
	hx_env_external(e);
	if (hx_write_config(e) != 0 ||
	    hx_write_exports(e, "%s 127.0.0.1(rw,no_root_squash,insecure%s)\n", e->export_dir,
			     hx_ceph_conf() ? ",fs=ceph" : "") != 0)
		hx_fatal("write config");
	for (i = 0; i < sizeof(hx_envs) / sizeof(hx_envs[0]); i++)
		if (!hx_envs[i]) {
			hx_envs[i] = e;
			break;
		}
	printf("# tmp %s port %u\n", e->dir, e->port);
}

void hx_env_release(struct hx_env *e)
{
	const char *keep = getenv("HX_KEEP");
	unsigned i;

	for (i = 0; i < sizeof(hx_envs) / sizeof(hx_envs[0]); i++)
		if (hx_envs[i] == e)
			hx_envs[i] = NULL;
	if (e->pid > 0) {
		kill(e->pid, SIGKILL);
		waitpid(e->pid, NULL, 0);
		e->pid = 0;
	}
	if (hx_failed)
		hx_daemon_log_tail(e, 60);
	if (keep && *keep == '1')
		printf("# kept %s\n", e->dir);
	else if (e->dir[0])
		hx_rm_rf(e->dir);
	if (e->sock_dir[0])
		hx_rm_rf(e->sock_dir);
	e->dir[0] = 0;
	e->sock_dir[0] = 0;
}

bool hx_daemon_alive(struct hx_env *e)
{
	int st;

	if (e->external)
		return hx_port_open(e->port);
	if (e->pid <= 0)
		return false;
	if (waitpid(e->pid, &st, WNOHANG) == e->pid) {
		if (WIFSIGNALED(st))
			printf("# daemon pid %d died from signal %d\n", (int)e->pid, WTERMSIG(st));
		else
			printf("# daemon pid %d exited with status %d\n", (int)e->pid, WEXITSTATUS(st));
		e->pid = 0;
		return false;
	}
	return true;
}

static int hx_daemon_start_once(struct hx_env *e);

int hx_daemon_start(struct hx_env *e)
{
	unsigned attempt;
	int rc = -1;

	for (attempt = 0; attempt < 3; attempt++) {
		/* Retry only a first start that lost its port to someone else. */
		rc = hx_daemon_start_once(e);
		if (rc == 0 || e->started || hx_log_count(e, "in use") == 0)
			break;
		e->port = e->mount_port = hx_free_port();
		hx_write_config(e);
		printf("# port taken, retrying on %u\n", e->port);
	}
	if (rc == 0)
		e->started = true;
	else if (!CHECK(false, "rnfsd starts and accepts TCP connections on 127.0.0.1:%u within 20 s", e->port))
		hx_daemon_log_tail(e, 40);
	return rc;
}

/* fork + exec rnfsd -f -c conf, output to the log; the child's pid, or -1 (FAIL printed). */
static pid_t hx_daemon_spawn(struct hx_env *e)
{
	pid_t pid;
	int fd;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		CHECK(false, "fork rnfsd: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* Out of the bounding set: root's exec then starts without it (no open_tree). */
		if (e->drop_sys_admin && prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) < 0)
			_exit(126);
		fd = open(e->log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, 0);
			close(fd);
		}
		execl(e->exe, e->exe, "-f", "-c", e->conf_path, (char *)NULL);
		dprintf(2, "exec %s: %s\n", e->exe, strerror(errno));
		_exit(127);
	}
	return pid;
}

/* The inodes of the listening TCP sockets on port in a /proc/net/tcp{,6} file, appended to ino[*n]. */
static void hx_listen_inodes(const char *table, uint16_t port, unsigned long *ino, unsigned *n, unsigned max)
{
	unsigned lport, state;
	unsigned long inode;
	char line[512];
	FILE *f = fopen(table, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && *n < max)
		/* "sl: local:port remote:port st tx:rx tr:when retrnsmt uid timeout inode"; 0A is LISTEN */
		if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x %*x:%*x %*x:%*x %*x %*u %*u %lu",
			   &lport, &state, &inode) == 3 &&
		    lport == port && state == 0x0A)
			ino[(*n)++] = inode;
	fclose(f);
}

/*
 * Whether the TCP listener on 127.0.0.1:port is a socket of process pid:
 * a port that accepts connects (hx_port_open) may be another test's daemon
 * or any other program while ours is about to fail with "Address already
 * in use". True when /proc cannot tell (the old check alone then).
 */
static bool hx_listener_is(pid_t pid, uint16_t port)
{
	unsigned long ino[16], got;
	char path[64], link[64];
	unsigned n = 0, i;
	struct dirent *de;
	bool mine = false;
	DIR *d;
	ssize_t len;

	if (access("/proc/net/tcp", R_OK) != 0)
		return true;
	hx_listen_inodes("/proc/net/tcp", port, ino, &n, 16);
	hx_listen_inodes("/proc/net/tcp6", port, ino, &n, 16);
	if (!n)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return true;
	while (!mine && (de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%.16s", (int)pid, de->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		if (sscanf(link, "socket:[%lu]", &got) == 1)
			for (i = 0; i < n; i++)
				mine = mine || got == ino[i];
	}
	closedir(d);
	return mine;
}

/*
 * Whether pid runs e's program yet: between fork and exec the child still
 * holds copies of this process's descriptors (close-on-exec ones too), so a
 * listener this test holds would look like the daemon's (hx_listener_is).
 * True when /proc cannot tell.
 */
static bool hx_execed(const struct hx_env *e, pid_t pid)
{
	char path[64], exe[PATH_MAX], want[PATH_MAX];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	len = readlink(path, exe, sizeof(exe) - 1);
	if (len <= 0 || !realpath(e->exe, want))
		return true;
	exe[len] = 0;
	return strcmp(exe, want) == 0;
}

static int hx_daemon_start_once(struct hx_env *e)
{
	double deadline;
	pid_t pid;

	if (e->external)
		return CHECK(hx_port_open(e->port), "external server answers on port %u", e->port) ? 0 : -1;
	/* Ready: its start-up line, logged once the stats socket and the
	 * Prometheus page are up too (they start after the listeners). */
	unsigned ready0 = hx_log_count(e, "on tcp port");

	pid = hx_daemon_spawn(e);
	if (pid < 0)
		return -1;
	e->pid = pid;
	deadline = hx_now() + 20.0;
	while (hx_now() < deadline) {
		if (!hx_daemon_alive(e))
			break;
		/* Ours, not a port someone else holds while our bind fails (then it exits: retried). */
		if (hx_port_open(e->port) && hx_execed(e, pid) && hx_listener_is(pid, e->port) &&
		    hx_log_count(e, "on tcp port") > ready0) {
			printf("# rnfsd pid %d serving on 127.0.0.1:%u\n", (int)pid, e->port);
			return 0;
		}
		usleep(20000);
	}
	if (e->pid > 0) {
		kill(e->pid, SIGKILL);
		waitpid(e->pid, NULL, 0);
		e->pid = 0;
	}
	return -1;
}

int hx_daemon_run_to_exit(struct hx_env *e, double timeout_s)
{
	double deadline = hx_now() + timeout_s;
	pid_t pid = hx_daemon_spawn(e);
	int st;

	if (pid < 0)
		return -1;
	while (hx_now() < deadline) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			if (WIFSIGNALED(st)) {
				printf("# rnfsd pid %d died from signal %d\n", (int)pid, WTERMSIG(st));
				return -1;
			}
			printf("# rnfsd pid %d exited with status %d\n", (int)pid, WEXITSTATUS(st));
			return WEXITSTATUS(st);
		}
		usleep(20000);
	}
	printf("# rnfsd pid %d still running after %.0f s: killed\n", (int)pid, timeout_s);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

int hx_daemon_signal(struct hx_env *e, int sig)
{
	if (e->pid <= 0 || e->external)
		return -1;
	return kill(e->pid, sig);
}

int hx_daemon_stop(struct hx_env *e)
{
	double deadline = hx_now() + 10.0;
	unsigned n;
	int st = 0;
	pid_t r = 0;

	if (e->external)
		return 0;
	if (e->pid <= 0) {
		CHECK(false, "daemon still running at shutdown");
		return -1;
	}
	kill(e->pid, SIGTERM);
	while (hx_now() < deadline) {
		r = waitpid(e->pid, &st, WNOHANG);
		if (r == e->pid)
			break;
		usleep(10000);
	}
	if (r != e->pid) {
		CHECK(false, "rnfsd exits within 10 s of SIGTERM");
		kill(e->pid, SIGKILL);
		waitpid(e->pid, &st, 0);
		e->pid = 0;
		return -1;
	}
	e->pid = 0;
	/* A sanitizer build reports and goes on (UBSan) or aborts at exit (LSan): both fail here. */
	n = hx_log_count(e, "runtime error:") + hx_log_count(e, "Sanitizer");
	if (!CHECK(n == 0, "no sanitizer reports in the daemon log (%u lines)", n))
		hx_daemon_log_tail(e, 80);
	if (WIFSIGNALED(st)) {
		CHECK(false, "rnfsd exits cleanly on SIGTERM (killed by signal %d)", WTERMSIG(st));
		hx_daemon_log_tail(e, 40);
		return -1;
	}
	if (!CHECK(WEXITSTATUS(st) == 0, "rnfsd exits with status 0 on SIGTERM (status %d)",
		   WEXITSTATUS(st))) {
		hx_daemon_log_tail(e, 40);
		return -1;
	}
	return 0;
}

void hx_daemon_log_tail(const struct hx_env *e, unsigned lines)
{
	char *buf = NULL, *p;
	size_t len = 0;
	unsigned n = 0;
	FILE *f = fopen(e->log_path, "r");
	FILE *m;
	int c;

	if (!f)
		return;
	m = open_memstream(&buf, &len);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	p = buf + len;
	while (p > buf && n <= lines) {
		p--;
		if (*p == '\n')
			n++;
	}
	printf("# ---- rnfsd log (%s, last lines) ----\n%s%s# ---- end of log ----\n", e->log_path,
	       p, len && buf[len - 1] != '\n' ? "\n" : "");
	free(buf);
}

unsigned hx_log_count(const struct hx_env *e, const char *needle)
{
	char line[4096];
	unsigned n = 0;
	FILE *f = fopen(e->log_path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			n++;
	fclose(f);
	return n;
}

uint16_t hx_udp_port(const struct hx_env *e)
{
	FILE *f = fopen(e->log_path, "r");
	char line[512];
	unsigned port = 0;

	while (f && fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "udp: listening on ");

		if (p && (p = strstr(p, " port ")))
			sscanf(p + strlen(" port "), "%u", &port);
	}
	if (f)
		fclose(f);
	return (uint16_t)port;
}

int hx_write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, data, len);
	fchmod(fd, mode);
	close(fd);
	return w == (ssize_t)len ? 0 : -1;
}

static int hx_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) == 0 ? 0 : 0;
	unlink(path);
	return 0;
}

int hx_rm_rf(const char *path)
{
	return nftw(path, hx_rm_one, 32, FTW_DEPTH | FTW_PHYS);
}

uint64_t hx_rand(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

void hx_fill(uint64_t *state, void *buf, size_t len)
{
	uint8_t *p = buf;
	uint64_t r;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		r = hx_rand(state);
		memcpy(p + i, &r, 8);
	}
	if (i < len) {
		r = hx_rand(state);
		memcpy(p + i, &r, len - i);
	}
}

/* ---- libnfs high-level ------------------------------------------------- */

int hx_mount_autoreconnect;
int hx_mount_version = NFS_V3;

struct nfs_context *hx_mount(const struct hx_env *e, const char *export_path, int uid, int gid,
			     char *err, size_t errlen)
{
	struct nfs_context *nfs = nfs_init_context();
	struct nfs_url *url;
	char u[PATH_MAX + 256];
	int n;

	if (!nfs) {
		snprintf(err, errlen, "nfs_init_context failed");
		return NULL;
	}
	n = snprintf(u, sizeof(u), "nfs://127.0.0.1%s?nfsport=%u&mountport=%u", export_path, e->port,
		     e->mount_port);
	if (uid >= 0)
		n += snprintf(u + n, sizeof(u) - n, "&uid=%d", uid);
	if (gid >= 0)
		snprintf(u + n, sizeof(u) - n, "&gid=%d", gid);
	url = nfs_parse_url_dir(nfs, u);
	if (!url) {
		snprintf(err, errlen, "nfs_parse_url_dir(%s): %s", u, nfs_get_error(nfs));
		nfs_destroy_context(nfs);
		return NULL;
	}
	nfs_set_timeout(nfs, 30000);
	nfs_set_autoreconnect(nfs, hx_mount_autoreconnect);
	if (nfs_set_version(nfs, hx_mount_version) != 0 || nfs_mount(nfs, url->server, url->path) != 0) {
		snprintf(err, errlen, "nfs_mount(%s): %s", u, nfs_get_error(nfs));
		nfs_destroy_url(url);
		nfs_destroy_context(nfs);
		return NULL;
	}
	nfs_destroy_url(url);
	if (err && errlen)
		err[0] = 0;
	return nfs;
}

void hx_umount(struct nfs_context *nfs)
{
	if (nfs)
		nfs_destroy_context(nfs);
}

/* ---- libnfs raw API, synchronous ------------------------------------- */

struct hx_call {
	struct hx_call *next;
	const char *what;
	zdrproc_t res_proc;
	void *res;
	size_t res_size;
	bool done;
	int status;
	ZDR copy; /* its allocations back the pointers in *res */
	char *copy_buf; /* and so may this buffer */
	bool have_copy;
	char err[256];
};

static struct hx_call *hx_calls;
static pthread_mutex_t hx_calls_lock = PTHREAD_MUTEX_INITIALIZER;
static char hx_last_error[320];

const char *hx_call_error(void)
{
	return hx_last_error;
}

struct hx_call *hx_call_new(zdrproc_t res_proc, void *res, size_t res_size, const char *what)
{
	struct hx_call *c = calloc(1, sizeof(*c));

	if (!c)
		abort();
	c->what = what;
	c->res_proc = res_proc;
	c->res = res;
	c->res_size = res_size;
	pthread_mutex_lock(&hx_calls_lock);
	c->next = hx_calls;
	hx_calls = c;
	pthread_mutex_unlock(&hx_calls_lock);
	if (res)
		memset(res, 0, res_size);
	return c;
}

static void hx_calls_free(void)
{
	struct hx_call *c;

	while ((c = hx_calls)) {
		hx_calls = c->next;
		if (c->have_copy)
			zdr_destroy(&c->copy);
		free(c->copy_buf);
		free(c);
	}
}

/* Re-encode the library's decoded result, decode it into c->res. */
static bool hx_call_copy(struct hx_call *c, void *data)
{
	size_t cap = 64 * 1024;
	char *buf;
	ZDR z;
	int pos;

	for (;;) {
		buf = malloc(cap);
		if (!buf)
			return false;
		zdrmem_create(&z, buf, cap, ZDR_ENCODE);
		if (c->res_proc(&z, data)) {
			pos = z.pos;
			zdr_destroy(&z);
			break;
		}
		zdr_destroy(&z);
		free(buf);
		if (cap >= 64 * 1024 * 1024)
			return false;
		cap *= 4;
	}
	if (getenv("HX_DEBUG")) {
		int i;

		printf("# %s: reply re-encoded to %d bytes:", c->what, pos);
		for (i = 0; i < pos && i < 128; i++)
			printf("%s%02x", i % 4 ? "" : " ", (uint8_t)buf[i]);
		printf("\n");
	}
	zdrmem_create(&c->copy, buf, pos, ZDR_DECODE);
	c->have_copy = true;
	c->copy_buf = buf;
	memset(c->res, 0, c->res_size);
	return c->res_proc(&c->copy, c->res);
}

void hx_call_cb(struct rpc_context *rpc, int status, void *data, void *private_data)
{
	struct hx_call *c = private_data;

	(void)rpc;
	c->status = status;
	if (status != RPC_STATUS_SUCCESS) {
		snprintf(c->err, sizeof(c->err), "%s", status == RPC_STATUS_ERROR && data ?
			 (const char *)data : status == RPC_STATUS_TIMEOUT ? "timeout" : "cancelled");
	} else if (c->res && c->res_proc != HX_ZPROC(libnfs_zdr_void) && !data) {
		/* libnfs 4.0.0 does this for PATHCONF: use rawrpc.h there. */
		c->status = RPC_STATUS_ERROR;
		snprintf(c->err, sizeof(c->err), "libnfs delivered no decoded result");
	} else if (c->res && data && !hx_call_copy(c, data)) {
		c->status = RPC_STATUS_ERROR;
		snprintf(c->err, sizeof(c->err), "harness could not copy the reply");
	}
	c->done = true;
}

/* How long hx_call_wait waits for a reply: 30 s, or HX_CALL_WAIT_S (a hang guard, not a speed check;
 * the ceph suite sets 120: a one-node cluster on a busy machine has held a first read for over 30 s,
 * where a Linux client, hard-mounted with timeo=600, would still be waiting for it). */
static double hx_call_wait_s(void)
{
	const char *v = getenv("HX_CALL_WAIT_S");
	double s = v ? strtod(v, NULL) : 0;

	return s > 0 ? s : 30.0;
}

int hx_call_wait(struct rpc_context *rpc, struct hx_call *c, int start_rc)
{
	double wait_s = hx_call_wait_s();
	double deadline = hx_now() + wait_s;
	struct pollfd pfd;

	if (start_rc != 0) {
		snprintf(hx_last_error, sizeof(hx_last_error), "%s: could not queue: %s", c->what,
			 rpc_get_error(rpc));
		return RPC_STATUS_ERROR;
	}
	while (!c->done) {
		if (hx_now() > deadline) {
			snprintf(hx_last_error, sizeof(hx_last_error), "%s: no reply within %.0f s", c->what, wait_s);
			return RPC_STATUS_TIMEOUT;
		}
		pfd.fd = rpc_get_fd(rpc);
		pfd.events = rpc_which_events(rpc);
		pfd.revents = 0;
		if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
			break;
		if (rpc_service(rpc, pfd.revents) < 0) {
			if (!c->done) {
				snprintf(hx_last_error, sizeof(hx_last_error), "%s: connection failed: %s",
					 c->what, rpc_get_error(rpc));
				return RPC_STATUS_ERROR;
			}
		}
	}
	if (c->status != RPC_STATUS_SUCCESS)
		snprintf(hx_last_error, sizeof(hx_last_error), "%s: %s", c->what, c->err);
	return c->status;
}

struct hx_connect {
	bool done;
	int status;
	char err[256];
};

static void hx_connect_cb(struct rpc_context *rpc, int status, void *data, void *private_data)
{
	struct hx_connect *hc = private_data;

	(void)rpc;
	hc->status = status;
	if (status != RPC_STATUS_SUCCESS && data)
		snprintf(hc->err, sizeof(hc->err), "%s", (const char *)data);
	hc->done = true;
}

struct rpc_context *hx_rpc_connect(const struct hx_env *e, int prog, int vers, int uid, int gid)
{
	struct rpc_context *rpc = rpc_init_context();
	struct hx_connect hc = { 0 };
	double deadline = hx_now() + 15.0;
	struct pollfd pfd;

	if (!rpc)
		return NULL;
	if (uid >= 0)
		rpc_set_uid(rpc, uid);
	if (gid >= 0)
		rpc_set_gid(rpc, gid);
	if (rpc_connect_port_async(rpc, "127.0.0.1", prog == MOUNT_PROGRAM ? e->mount_port : e->port,
				   prog, vers, hx_connect_cb, &hc) != 0) {
		snprintf(hx_last_error, sizeof(hx_last_error), "connect: %s", rpc_get_error(rpc));
		rpc_destroy_context(rpc);
		return NULL;
	}
	while (!hc.done && hx_now() < deadline) {
		pfd.fd = rpc_get_fd(rpc);
		pfd.events = rpc_which_events(rpc);
		pfd.revents = 0;
		poll(&pfd, 1, 100);
		if (rpc_service(rpc, pfd.revents) < 0 && !hc.done)
			break;
	}
	if (!hc.done || hc.status != RPC_STATUS_SUCCESS) {
		snprintf(hx_last_error, sizeof(hx_last_error), "connect to %u prog %d vers %d: %s",
			 e->port, prog, vers, hc.done ? hc.err : "no answer");
		printf("# %s\n", hx_last_error);
		rpc_destroy_context(rpc);
		return NULL;
	}
	return rpc;
}

void hx_rpc_close(struct rpc_context *rpc)
{
	if (rpc) {
		rpc_disconnect(rpc, "test done");
		rpc_destroy_context(rpc);
	}
}

void hx_fh_set(struct hx_fh *fh, const nfs_fh3 *src)
{
	fh->len = src->data.data_len > NFS3_FHSIZE ? NFS3_FHSIZE : src->data.data_len;
	memcpy(fh->data, src->data.data_val, fh->len);
}

nfs_fh3 hx_fh3(struct hx_fh *fh)
{
	nfs_fh3 v;

	v.data.data_len = fh->len;
	v.data.data_val = fh->data;
	return v;
}

int hx_mnt(struct rpc_context *rpc, const char *path, struct hx_fh *fh)
{
	mountres3 res;
	int rc;

	rc = HX_CALL(rpc, rpc_mount3_mnt_async, (char *)path, zdr_mountres3, &res);
	if (rc != RPC_STATUS_SUCCESS)
		return -1;
	if (res.fhs_status == MNT3_OK && fh)
		hx_fh_set(fh, (nfs_fh3 *)&res.mountres3_u.mountinfo.fhandle);
	return res.fhs_status;
}

int hx_open_export(const struct hx_env *e, const char *path, int uid, int gid,
		   struct rpc_context **nfs, struct hx_fh *root)
{
	struct rpc_context *mnt;
	int st;

	*nfs = NULL;
	mnt = hx_rpc_connect(e, MOUNT_PROGRAM, MOUNT_V3, -1, -1);
	if (!CHECK(mnt != NULL, "connect to MOUNT v3 on 127.0.0.1:%u (no rpcbind)", e->mount_port))
		return -1;
	st = hx_mnt(mnt, path, root);
	hx_rpc_close(mnt);
	if (!CHECK(st == MNT3_OK, "MNT %s: %s", path, hx_mntstat_name(st)))
		return -1;
	*nfs = hx_rpc_connect(e, NFS_PROGRAM, NFS_V3, uid, gid);
	if (!CHECK(*nfs != NULL, "connect to NFS v3 on 127.0.0.1:%u as uid %d", e->port, uid))
		return -1;
	return 0;
}

int hx3_getattr(struct rpc_context *rpc, struct hx_fh *fh, fattr3 *attr)
{
	GETATTR3args a = { .object = hx_fh3(fh) };
	GETATTR3res r;

	if (HX_CALL(rpc, rpc_nfs3_getattr_async, &a, zdr_GETATTR3res, &r) != RPC_STATUS_SUCCESS)
		return -1;
	if (r.status == NFS3_OK && attr)
		*attr = r.GETATTR3res_u.resok.obj_attributes;
	return r.status;
}

int hx3_lookup(struct rpc_context *rpc, struct hx_fh *dir, const char *name, struct hx_fh *out,
	       fattr3 *attr)
{
	LOOKUP3args a = { .what = { .dir = hx_fh3(dir), .name = (char *)name } };
	LOOKUP3res r;

	if (HX_CALL(rpc, rpc_nfs3_lookup_async, &a, zdr_LOOKUP3res, &r) != RPC_STATUS_SUCCESS)
		return -1;
	if (r.status == NFS3_OK) {
		if (out)
			hx_fh_set(out, &r.LOOKUP3res_u.resok.object);
		if (attr) {
			memset(attr, 0, sizeof(*attr));
			if (r.LOOKUP3res_u.resok.obj_attributes.attributes_follow)
				*attr = r.LOOKUP3res_u.resok.obj_attributes.post_op_attr_u.attributes;
		}
	}
	return r.status;
}

int hx3_create(struct rpc_context *rpc, struct hx_fh *dir, const char *name, uint32_t mode,
	       struct hx_fh *out)
{
	CREATE3args a;
	CREATE3res r;

	memset(&a, 0, sizeof(a));
	a.where.dir = hx_fh3(dir);
	a.where.name = (char *)name;
	a.how.mode = GUARDED;
	a.how.createhow3_u.obj_attributes.mode.set_it = 1;
	a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = mode;
	if (HX_CALL(rpc, rpc_nfs3_create_async, &a, zdr_CREATE3res, &r) != RPC_STATUS_SUCCESS)
		return -1;
	if (r.status == NFS3_OK && out) {
		if (r.CREATE3res_u.resok.obj.handle_follows)
			hx_fh_set(out, &r.CREATE3res_u.resok.obj.post_op_fh3_u.handle);
		else if (hx3_lookup(rpc, dir, name, out, NULL) != NFS3_OK)
			return -1;
	}
	return r.status;
}

int hx3_mkdir(struct rpc_context *rpc, struct hx_fh *dir, const char *name, uint32_t mode,
	      struct hx_fh *out)
{
	MKDIR3args a;
	MKDIR3res r;

	memset(&a, 0, sizeof(a));
	a.where.dir = hx_fh3(dir);
	a.where.name = (char *)name;
	a.attributes.mode.set_it = 1;
	a.attributes.mode.set_mode3_u.mode = mode;
	if (HX_CALL(rpc, rpc_nfs3_mkdir_async, &a, zdr_MKDIR3res, &r) != RPC_STATUS_SUCCESS)
		return -1;
	if (r.status == NFS3_OK && out) {
		if (r.MKDIR3res_u.resok.obj.handle_follows)
			hx_fh_set(out, &r.MKDIR3res_u.resok.obj.post_op_fh3_u.handle);
		else if (hx3_lookup(rpc, dir, name, out, NULL) != NFS3_OK)
			return -1;
	}
	return r.status;
}

int hx3_remove(struct rpc_context *rpc, struct hx_fh *dir, const char *name)
{
	REMOVE3args a = { .object = { .dir = hx_fh3(dir), .name = (char *)name } };
	REMOVE3res r;

	if (HX_CALL(rpc, rpc_nfs3_remove_async, &a, zdr_REMOVE3res, &r) != RPC_STATUS_SUCCESS)
		return -1;
	return r.status;
}

int hx3_rmdir(struct rpc_context *rpc, struct hx_fh *dir, const char *name)
{
	RMDIR3args a = { .object = { .dir = hx_fh3(dir), .name = (char *)name } };
	RMDIR3res r;

	if (HX_CALL(rpc, rpc_nfs3_rmdir_async, &a, zdr_RMDIR3res, &r) != RPC_STATUS_SUCCESS)
		return -1;
	return r.status;
}

int hx3_rename(struct rpc_context *rpc, struct hx_fh *from_dir, const char *from, struct hx_fh *to_dir, const char *to)
{
	RENAME3args a = { .from = { .dir = hx_fh3(from_dir), .name = (char *)from },
			  .to = { .dir = hx_fh3(to_dir), .name = (char *)to } };
	RENAME3res r;

	if (HX_CALL(rpc, rpc_nfs3_rename_async, &a, zdr_RENAME3res, &r) != RPC_STATUS_SUCCESS)
		return -1;
	return r.status;
}

int hx3_write(struct rpc_context *rpc, struct hx_fh *fh, uint64_t off, const void *data, uint32_t len,
	      int stable, WRITE3res *res)
{
	WRITE3args a;
	WRITE3res local;

	memset(&a, 0, sizeof(a));
	a.file = hx_fh3(fh);
	a.offset = off;
	a.count = len;
	a.stable = stable;
	a.data.data_len = len;
	a.data.data_val = (char *)data;
	if (!res)
		res = &local;
	if (HX_CALL(rpc, rpc_nfs3_write_async, &a, zdr_WRITE3res, res) != RPC_STATUS_SUCCESS)
		return -1;
	return res->status;
}

int hx3_read(struct rpc_context *rpc, struct hx_fh *fh, uint64_t off, uint32_t count, READ3res *res)
{
	READ3args a = { .file = hx_fh3(fh), .offset = off, .count = count };

	if (HX_CALL(rpc, rpc_nfs3_read_async, &a, zdr_READ3res, res) != RPC_STATUS_SUCCESS)
		return -1;
	return res->status;
}

int hx3_access(struct rpc_context *rpc, struct hx_fh *fh, uint32_t want, uint32_t *granted)
{
	ACCESS3args a = { .object = hx_fh3(fh), .access = want };
	ACCESS3res r;

	if (HX_CALL(rpc, rpc_nfs3_access_async, &a, zdr_ACCESS3res, &r) != RPC_STATUS_SUCCESS)
		return -1;
	if (r.status == NFS3_OK && granted)
		*granted = r.ACCESS3res_u.resok.access;
	return r.status;
}

/* ---- rnfsctl ------------------------------------------------------------ */

/* The child: become as_uid (its group too), send both streams to fd, exec. */
static void hx_rnfsctl_child(const char *exe, const struct hx_env *e, int as_uid, int fd, const char *const *args)
{
	const char *argv[16] = {exe, "-s", e->stats_socket};
	unsigned n = 3;

	for (; *args && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	dup2(fd, 1);
	dup2(fd, 2);
	if (as_uid >= 0 && (setgroups(0, NULL) != 0 || setgid((gid_t)as_uid) != 0 || setuid((uid_t)as_uid) != 0))
		_exit(126);
	execv(exe, (char *const *)argv);
	_exit(127);
}

int hx_rnfsctl(const struct hx_env *e, int as_uid, char *out, size_t outlen, const char *const *args)
{
	const char *exe = getenv("RNFSCTL");
	int p[2], status;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	out[0] = '\0';
	/* The daemon opens its socket after its listeners: hx_daemon_start() may return before. */
	for (double end = hx_now() + 5; access(e->stats_socket, F_OK) != 0 && hx_now() < end;)
		usleep(20000);
	if (!exe || pipe2(p, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid == 0)
		hx_rnfsctl_child(exe, e, as_uid, p[1], args);
	close(p[1]);
	while (pid > 0 && n < outlen - 1 && (r = read(p[0], out + n, outlen - 1 - n)) > 0)
		n += (size_t)r;
	for (char rest[256]; pid > 0 && read(p[0], rest, sizeof(rest)) > 0;)
		; /* beyond outlen: read and dropped, so the child never blocks */
	close(p[0]);
	out[n] = '\0';
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

long hx_inline_calls(const struct hx_env *e, long *paused)
{
	static const char *const stats[] = { "stats", NULL };
	static char out[65536]; /* the whole stats page: the line comes after the tables */
	char *end;
	const char *p;
	long n;

	*paused = -1;
	if (hx_rnfsctl(e, -1, out, sizeof(out), stats) != 0 || !(p = strstr(out, "inline calls: ")))
		return -1;
	n = strtol(p + strlen("inline calls: "), &end, 10);
	p = strstr(end, "receiving thread, ");
	if (p)
		*paused = strtol(p + strlen("receiving thread, "), NULL, 10);
	return n;
}
