/*
 * test_tcp_idle.c - the memory 1,000 idle TCP connections cost the real
 * daemon (issue 11: "1,000 idle TCP connections ... RSS under 64 MiB" with
 * 100 idle RDMA connections, whose share tests/unit/test_rdma_verbs.c's
 * t_idle_conns bounds in the VM).
 *
 * Each connection sends one NULL, reads the reply and then stays open and
 * silent. The daemon's VmRSS growth is printed at 1, 100 and 1,000
 * connections, and the growth at 1,000 must stay under TCP_IDLE_BOUND_KIB:
 * a memory bound, not a timing. Then every connection is busy once (a NULL
 * carrying BUSY_BYTES of arguments, which fill the connection's receive
 * buffers) and idle again: once the daemon's sweep has passed, the same
 * bound holds (a connection that was busy costs an idle one's memory).
 * The daemon is asked to keep the connections (max-connections above the
 * count, no idle timeout) and to sweep every second (record-timeout 4).
 */
#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"
#include "tests/integration/rawrpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#define IDLE_CONNS 1000
/* 16 KiB per idle connection: 1,000 of them within 16 MiB of the 64 MiB. */
#define TCP_IDLE_BOUND_KIB (16u * 1024)
#define BUSY_BYTES (48u * 1024)
/* The daemon gives an idle connection's buffer pages back after 2 s
 * (TCP_BUF_IDLE_S), checked every record-timeout / 4 = 1 s. */
#define SETTLE_US (5u * 1000 * 1000)

static struct hx_env env;

/* The daemon's VmRSS in KiB, 0 if unknown. */
static unsigned long daemon_rss_kib(void)
{
	char path[64], line[256];
	unsigned long kib = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)env.pid);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %lu kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* Enough descriptors for the connections, here and in the daemon (which
 * inherits them). False if the hard limit forbids it. */
static bool raise_nofile(rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return false;
	if (rl.rlim_cur >= want)
		return true;
	if (rl.rlim_max < want && geteuid() == 0)
		rl.rlim_max = want;
	rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
	return setrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur >= want;
}

static int start_daemon(void)
{
	FILE *f;

	if (hx_write_config(&env) != 0 || !(f = fopen(env.conf_path, "a")))
		return -1;
	fprintf(f, "[rnfsd]\nmax-connections = %u\n[tcp]\nidle-timeout = 0\nrecord-timeout = 4\n",
		IDLE_CONNS + 64);
	fclose(f);
	return hx_daemon_start(&env);
}

/* Open one connection, NULL through it; true if answered. */
static bool idle_open(struct raw_conn *c, uint32_t xid)
{
	struct raw_reply r;

	if (raw_connect(c, env.port) != 0)
		return false;
	bool ok = raw_call(c, xid, RAW_NFS_PROG, 3, 0, NULL, 0, &r) == RAW_RECV_OK;
	if (ok) {
		ok = r.reply_stat == 0 && r.accept_stat == 0;
		raw_reply_free(&r);
	}
	return ok;
}

/* One NULL call with BUSY_BYTES of arguments (a NULL ignores them or
 * answers GARBAGE_ARGS; either way a reply); true if answered. */
static bool busy_once(struct raw_conn *c, uint32_t xid)
{
	static uint8_t args[BUSY_BYTES];
	struct raw_reply r;

	if (raw_call(c, xid, RAW_NFS_PROG, 3, 0, args, sizeof(args), &r) != RAW_RECV_OK)
		return false;
	raw_reply_free(&r);
	return true;
}

int main(int argc, char **argv)
{
	static struct raw_conn conns[IDLE_CONNS];
	unsigned n = 0, answered = 0;

	hx_begin("tcp_idle", argc, argv);
	if (!raise_nofile(IDLE_CONNS + 256))
		hx_skip("RLIMIT_NOFILE cannot be raised to 1,256");
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	if (!CHECK(start_daemon() == 0, "daemon started"))
		return hx_end();

	/* The baseline: one connection's worth of first-use memory (libraries,
	 * the worker pool, the first call contexts) is not what idling costs. */
	struct raw_conn warm;
	CHECK(idle_open(&warm, 1), "warm-up NULL answered");
	raw_close(&warm);
	usleep(200000);
	unsigned long rss0 = daemon_rss_kib(), rss = rss0;
	/* plus what a sanitizer build keeps (ASan's quarantine, TSan's shadow and history) */
	unsigned long slack = (unsigned long)n4_proc_quarantine_kb(env.pid);

	for (; n < IDLE_CONNS; n++) {
		if (!idle_open(&conns[n], 100 + n)) {
			raw_close(&conns[n]);
			break;
		}
		answered++;
		if (n + 1 == 1 || n + 1 == 100 || n + 1 == IDLE_CONNS) {
			usleep(200000);
			rss = daemon_rss_kib();
			hx_note("idle TCP: %u connections: daemon RSS %lu -> %lu KiB (+%.1f MiB, %.1f KiB each)",
				n + 1, rss0, rss, (double)(rss - rss0) / 1024, (double)(rss - rss0) / (n + 1));
		}
	}
	CHECK_EQ(answered, IDLE_CONNS, "idle connections opened, NULL answered on each");
	CHECK(rss0 > 0 && rss - rss0 < TCP_IDLE_BOUND_KIB + slack,
	      "%u idle connections grow the daemon's RSS by %lu KiB, under %u KiB", answered, rss - rss0,
	      TCP_IDLE_BOUND_KIB);

	/* Busy once, then idle: the receive buffers were written. */
	unsigned busy = 0;
	for (unsigned i = 0; i < n; i++)
		busy += busy_once(&conns[i], 5000 + i);
	CHECK_EQ(busy, n, "a %u-byte call answered on each connection", BUSY_BYTES);
	unsigned long rss_busy = daemon_rss_kib();
	usleep(SETTLE_US);
	rss = daemon_rss_kib();
	hx_note("idle TCP: %u connections after one %u-byte call each: daemon RSS %lu KiB at once, %lu KiB "
		"%u s later (+%.1f MiB over the start, %.1f KiB each)", n, BUSY_BYTES, rss_busy, rss,
		SETTLE_US / 1000000, (double)(rss - rss0) / 1024, n ? (double)(rss - rss0) / n : 0.0);
	CHECK(rss0 > 0 && rss - rss0 < TCP_IDLE_BOUND_KIB + slack,
	      "%u connections idle again after a busy call grow the daemon's RSS by %lu KiB, under %u KiB", n,
	      rss - rss0, TCP_IDLE_BOUND_KIB);

	/* And a new client is still served. */
	struct raw_conn last;
	CHECK(idle_open(&last, 99), "a NULL on one more connection answered");
	raw_close(&last);
	for (unsigned i = 0; i < n; i++)
		raw_close(&conns[i]);
	hx_env_release(&env);
	return hx_end();
}
