/*
 * test_harness_start.c - a self-test of the harness's daemon start: when
 * the port picked for rnfsd is already held by someone else's listener
 * (another test's daemon, or here a plain listening socket), the port
 * accepts connects while our daemon fails with "Address already in use".
 * hx_daemon_start() must not take that for our daemon: it retries on
 * another port, and the export then mounts from our daemon there.
 */
#include "tests/integration/harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct hx_env env;

/*
 * A plain listening socket on 127.0.0.1:port (no accept: the kernel's
 * backlog answers connects); fd or -1. Close-on-exec, as another program's
 * socket would be: the daemon, forked from this process, must not hold it.
 */
static int occupy(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 || listen(fd, 16) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct nfs_context *nfs;
	uint16_t taken;
	char err[256];
	int fd;

	hx_begin("harness_start", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	taken = env.port;
	fd = occupy(taken);
	if (!CHECK(fd >= 0, "a plain socket listens on 127.0.0.1:%u, the port picked for rnfsd", taken))
		return hx_end();
	CHECK(hx_port_open(taken), "port %u accepts connects before rnfsd starts", taken);

	if (CHECK(hx_daemon_start(&env) == 0, "hx_daemon_start() succeeds although port %u is taken", taken)) {
		CHECK(env.port != taken, "rnfsd was retried on another port (%u, not %u)", env.port, taken);
		CHECK(hx_log_count(&env, "in use") >= 1, "the first start failed with \"Address already in use\"");
		nfs = hx_mount(&env, env.export_dir, -1, -1, err, sizeof(err));
		if (CHECK(nfs != NULL, "the export mounts from our rnfsd on port %u (%s)", env.port,
			  nfs ? "ok" : err))
			hx_umount(nfs);
	}
	close(fd);
	hx_env_release(&env);
	return hx_end();
}
