/*
 * rt_main.c - command line, setup (root file handle over MOUNT/TCP, LOOKUPs
 * over RDMA) and the scenario table of the RPC-over-RDMA test requester.
 *
 *   rdma_requester [options] SERVER[:PORT]      run scenarios, exit 0 if none failed
 *   rdma_requester --make-pattern FILE SIZE     write a test file holding the pattern
 *   rdma_requester --list                       list scenario names
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/rdma/rt.h"
#include "tests/rdma/rt_mount.h"

static const struct {
	const char *name;
	void (*run)(struct rt_ctx *t);
	const char *what;
} scenarios[] = {
	{ "null", rt_scen_null, "NFSv3 NULL as RDMA_MSG; the server's private data" },
	{ "privdata", rt_scen_privdata, "absent, garbled, tiny and huge RFC 8797 private data" },
	{ "err_vers", rt_scen_err_vers, "rdma_vers 7 and 0 -> ERR_VERS with the range" },
	{ "v2", rt_scen_v2, "Version Two calls and an unknown RDMA2_OPTIONAL" },
	{ "bad_disc", rt_scen_bad_disc, "list discriminator 2 in each list" },
	{ "seg_overflow", rt_scen_seg_overflow, "segment count 0xffffffff" },
	{ "truncated", rt_scen_truncated, "a header cut at every 4-byte boundary" },
	{ "read_pos", rt_scen_read_pos, "Read chunk position unaligned / beyond the message" },
	{ "read_len", rt_scen_read_len, "Read chunk shorter than its XDR item" },
	{ "bad_msg", rt_scen_bad_msg, "RDMA_NOMSG without chunks; rdma_xid != RPC XID" },
	{ "procs", rt_scen_procs, "rdma_proc 9, RDMA_MSGP, RDMA_DONE, RDMA_ERROR from a client" },
	{ "long_call", rt_scen_long_call, "RDMA_NOMSG with a position-zero Read chunk" },
	{ "read_chunk", rt_scen_read_write_chunk, "READ into Write chunks (1 and 4 segments)" },
	{ "write_chunk", rt_scen_write_read_chunk, "WRITE from Read chunks (1 and 4 segments)" },
	{ "undersized", rt_scen_undersized, "Write / Reply chunk too small for the reply" },
	{ "drc", rt_scen_drc, "a WRITE retransmitted on a new connection with new chunks" },
	{ "credits", rt_scen_credits, "exactly the grant; the grant plus 16" },
	{ "disconnect", rt_scen_disconnect, "abrupt disconnects mid-transfer, then reconnect" },
};
#define NSCEN (sizeof(scenarios) / sizeof(scenarios[0]))

static void usage(void)
{
	fprintf(stderr,
		"usage: rdma_requester [options] SERVER[:PORT]   (port default 20049)\n"
		"  --export PATH        MOUNT path (default /export)\n"
		"  --mount-port N       MOUNT v3 TCP port (default: ask rpcbind)\n"
		"  --file NAME          pattern file in the export (default rdmatest.dat)\n"
		"  --wfile NAME         scratch file for writes (default rdmatest.wr)\n"
		"  --dir NAME           directory with many entries (default rdmatest.dir)\n"
		"  --only a,b           run only these scenarios (see --list)\n"
		"  --label NAME         server name shown in the report\n"
		"  --timeout MS         answer timeout (default 5000)\n"
		"  --xfail a,b          verdict names expected to FAIL with this server\n"
		"  --list               list scenarios\n"
		"  --make-pattern FILE SIZE   write a pattern file and exit\n");
	exit(2);
}

static int make_pattern(const char *path, const char *size_s)
{
	static uint8_t buf[65536];
	unsigned long long size = strtoull(size_s, NULL, 0), off = 0;
	FILE *f = fopen(path, "w");
	size_t n, i;

	if (!f) {
		perror(path);
		return 1;
	}
	while (off < size) {
		n = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		for (i = 0; i < n; i++)
			buf[i] = rt_pattern_byte(off + i);
		if (fwrite(buf, 1, n, f) != n) {
			perror(path);
			fclose(f);
			return 1;
		}
		off += n;
	}
	return fclose(f) ? 1 : 0;
}

/* LOOKUP name in dir over RDMA. 0 or -1 (why). */
static int lookup(struct rt_ctx *t, struct rt_conn *c, const struct rt_fh *dir, const char *name,
		  struct rt_fh *out, char *why, size_t n)
{
	uint8_t rpc[512];
	struct rt_xchg x = { .proc = RT_RDMA_MSG, .rpc = rpc };
	struct rt_enc e;
	uint32_t st;
	int r;

	rt_enc_init(&e, rpc, sizeof(rpc));
	rt_rpc_call_hdr(&e, rt_xid(t), RT_NFS_PROG, 3, RT_NFS3_LOOKUP, RT_AUTH_SYS);
	rt_nfs3_lookup_args(&e, dir, name);
	x.rpc_len = e.len;
	r = rt_xchg_run(t, c, &x, why, n);
	if (r == 1)
		snprintf(why, n, "LOOKUP %s answered with RDMA_ERROR %u", name, x.h.err);
	if (!r) {
		st = rt_nfs3_lookup_res(&x.rr.res, out);
		if (!x.rr.accepted || x.rr.stat || st || x.rr.res.bad) {
			snprintf(why, n, "LOOKUP %s: rpc %s nfs status %u", name,
				 rt_accept_stat_name(x.rr.stat), st);
			r = -1;
		}
	}
	rt_xchg_release(&x);
	return r ? -1 : 0;
}

static int getattr_size(struct rt_ctx *t, struct rt_conn *c, const struct rt_fh *fh,
			uint64_t *size, char *why, size_t n)
{
	uint8_t rpc[256];
	struct rt_xchg x = { .proc = RT_RDMA_MSG, .rpc = rpc };
	struct rt_fattr a;
	struct rt_enc e;
	int r;

	rt_enc_init(&e, rpc, sizeof(rpc));
	rt_rpc_call_hdr(&e, rt_xid(t), RT_NFS_PROG, 3, RT_NFS3_GETATTR, RT_AUTH_SYS);
	rt_nfs3_fh(&e, fh);
	x.rpc_len = e.len;
	r = rt_xchg_run(t, c, &x, why, n);
	if (!r && (rt_nfs3_getattr_res(&x.rr.res, &a) || x.rr.stat || x.rr.res.bad)) {
		snprintf(why, n, "GETATTR failed");
		r = -1;
	}
	if (!r)
		*size = a.size;
	rt_xchg_release(&x);
	return r ? -1 : 0;
}

static void setup_fh(struct rt_ctx *t, const char *export, uint16_t mport, const char *file,
		     const char *wfile, const char *dir)
{
	char why[200];
	struct rt_conn c;
	struct rt_conn_opts o;
	uint8_t priv[8];

	/* rpcbind first; a server without it may still serve MOUNT on 2049. */
	if (rt_mount_root(&t->dst, mport, export, &t->root, why, sizeof(why)) &&
	    (mport || rt_mount_root(&t->dst, 2049, export, &t->root, why, sizeof(why)))) {
		snprintf(t->fh_why, sizeof(t->fh_why), "MOUNT %.60s: %s", export, why);
		return;
	}
	rt_conn_opts_default(&o, priv);
	if (rt_conn_open(&c, (struct sockaddr *)&t->dst, &o, why, sizeof(why)) != RT_OPEN_OK) {
		snprintf(t->fh_why, sizeof(t->fh_why), "connect for LOOKUP: %s", why);
		return;
	}
	if (lookup(t, &c, &t->root, file, &t->file, why, sizeof(why)) ||
	    lookup(t, &c, &t->root, wfile, &t->wfile, why, sizeof(why)) ||
	    lookup(t, &c, &t->root, dir, &t->dir, why, sizeof(why)) ||
	    getattr_size(t, &c, &t->file, &t->file_size, why, sizeof(why)))
		snprintf(t->fh_why, sizeof(t->fh_why), "%s", why);
	else if (t->file_size < (2u << 20))
		snprintf(t->fh_why, sizeof(t->fh_why), "%s is %llu bytes, need 2 MiB", file,
			 (unsigned long long)t->file_size);
	else
		t->have_fh = true;
	rt_conn_close(&c);
}

static int parse_server(const char *s, struct sockaddr_in *a)
{
	char host[64];
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);

	if (n >= sizeof(host))
		return -1;
	memcpy(host, s, n);
	host[n] = 0;
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons(colon ? (uint16_t)atoi(colon + 1) : 20049);
	return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "export", 1, NULL, 'e' }, { "mount-port", 1, NULL, 'm' }, { "file", 1, NULL, 'f' },
		{ "wfile", 1, NULL, 'w' }, { "dir", 1, NULL, 'd' }, { "only", 1, NULL, 'o' },
		{ "label", 1, NULL, 'l' }, { "timeout", 1, NULL, 't' }, { "list", 0, NULL, 'L' },
		{ "xfail", 1, NULL, 'x' }, { "make-pattern", 1, NULL, 'p' }, { "verbose", 0, NULL, 'v' },
		{ 0 },
	};
	const char *export = "/export", *file = "rdmatest.dat", *wfile = "rdmatest.wr";
	const char *dir = "rdmatest.dir", *only = NULL, *xfail = NULL;
	struct rt_ctx t = { .label = "server", .timeout_ms = 5000, .grace_ms = 300 };
	uint16_t mport = 0;
	unsigned i;
	int ch;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((ch = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (ch) {
		case 'e': export = optarg; break;
		case 'm': mport = (uint16_t)atoi(optarg); break;
		case 'f': file = optarg; break;
		case 'w': wfile = optarg; break;
		case 'd': dir = optarg; break;
		case 'o': only = optarg; break;
		case 'l': t.label = optarg; break;
		case 't': t.timeout_ms = atoi(optarg); break;
		case 'x': xfail = optarg; break;
		case 'v': rt_debug++; break;
		case 'p':
			if (optind >= argc)
				usage();
			return make_pattern(optarg, argv[optind]);
		case 'L':
			for (i = 0; i < NSCEN; i++)
				printf("%-12s %s\n", scenarios[i].name, scenarios[i].what);
			return 0;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || parse_server(argv[optind], &t.dst))
		usage();
	t.xid = (uint32_t)time(NULL) * 2654435761u;
	t.xfail = xfail;

	printf("@@ INFO requester: server %s at %s port %u\n", t.label,
	       inet_ntoa(t.dst.sin_addr), ntohs(t.dst.sin_port));
	setup_fh(&t, export, mport, file, wfile, dir);
	if (!t.have_fh)
		printf("@@ INFO setup: no file handles (%s); scenarios that need files fail\n",
		       t.fh_why);
	for (i = 0; i < NSCEN; i++)
		if (!only || rt_in_list(only, scenarios[i].name))
			scenarios[i].run(&t);
	printf("@@ SUMMARY %s: %u passed, %u failed, %u skipped, %u known deviations\n", t.label,
	       t.npass, t.nfail, t.nskip, t.nxfail);
	return t.nfail ? 1 : 0;
}
