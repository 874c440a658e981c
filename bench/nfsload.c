/*
 * nfsload.c - a small NFSv3-over-TCP load generator for the host-side
 * microbenchmark (bench/microbench.sh): N units of one kind (see nfsload.h),
 * pipelined to a fixed depth on one connection to 127.0.0.1, each reply
 * checked. Raw RPC with record marking from tests/integration/rawrpc.c.
 *
 *   nfsload -p PORT [-m MOUNT_PORT] -e EXPORT --setup
 *   nfsload -p PORT [-m MOUNT_PORT] -e EXPORT -o OP [-n UNITS] [-d DEPTH]
 *   nfsload -p PORT [-m MOUNT_PORT] -e EXPORT --check
 *
 * --setup lays out nfsload/{data,dir1000/e0000..e0999} under the export
 * (idempotent); a run looks them up first (one MNT and three LOOKUPs, the
 * same for every run, so a run of 0 units is the fixed cost to subtract).
 * --check runs every kind a few times and exits 0 only if every reply was
 * right. Prints one line per run:
 *   nfsload: op OP units N rpcs R depth D seconds S units/s U errors E
 * Exit status: 0, 1 on any error (with the reason on stderr), 2 on usage.
 */
#include "nfsload.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NL_MAX_DEPTH 256
#define NL_REPLY_TIMEOUT_MS 120000 /* a server under valgrind is slow */

struct nl_run {
	struct raw_conn conn;
	uint32_t next_xid;
	uint64_t rpcs;
};

static int nl_die(const char *what)
{
	fprintf(stderr, "nfsload: %s\n", what);
	return -1;
}

/* One synchronous call as root; 0 with the reply, else -1 (reply freed). */
static int nl_call(struct nl_run *r, enum nl_proc proc, const struct xb *args, struct raw_reply *rep)
{
	enum raw_recv_result rr;

	rr = raw_call(&r->conn, r->next_xid++, RAW_NFS_PROG, 3, proc, args->p, args->len, rep);
	r->rpcs++;
	if (rr == RAW_RECV_OK && rep->reply_stat == 0 && rep->accept_stat == 0)
		return 0;
	raw_reply_free(rep);
	return nl_die("a setup call was not accepted (is this an NFSv3 server?)");
}

/* LOOKUP; returns the nfsstat3, or -1. */
static int nl_lookup(struct nl_run *r, const struct nl_fh *dir, const char *name, struct nl_fh *out)
{
	struct raw_reply rep;
	struct xb a;
	int st;

	xb_init(&a);
	nl_put_diropargs(&a, dir, name);
	st = nl_call(r, NL_LOOKUP, &a, &rep);
	xb_free(&a);
	if (st != 0)
		return -1;
	st = (int)xd_u32(&rep.body);
	if (st == 0 && !nl_get_fh(&rep.body, out))
		st = -1;
	raw_reply_free(&rep);
	return st;
}

/* MKDIR or CREATE (UNCHECKED) of name unless it exists; the handle in out. */
static int nl_ensure(struct nl_run *r, const struct nl_fh *dir, const char *name, bool is_dir,
		     struct nl_fh *out)
{
	struct raw_reply rep;
	struct xb a;
	int st = nl_lookup(r, dir, name, out);

	if (st != 2) /* NFS3ERR_NOENT */
		return st;
	xb_init(&a);
	nl_put_diropargs(&a, dir, name);
	if (!is_dir)
		xb_u32(&a, 0); /* RFC 1813 §3.3.8: UNCHECKED */
	nl_put_sattr_mode(&a, is_dir ? 0755 : 0644);
	st = nl_call(r, is_dir ? NL_MKDIR : NL_CREATE, &a, &rep);
	xb_free(&a);
	if (st != 0)
		return -1;
	st = (int)xd_u32(&rep.body);
	raw_reply_free(&rep);
	if (st != 0)
		return st;
	return nl_lookup(r, dir, name, out);
}

/* Fills nfsload/data with NL_DATA_SIZE bytes (FILE_SYNC, 64 KiB calls). */
static int nl_fill_data(struct nl_run *r, const struct nl_fh *fh)
{
	static uint8_t chunk[65536];
	struct raw_reply rep;
	struct xb a;
	int st = 0;

	memset(chunk, 'd', sizeof(chunk));
	for (uint32_t off = 0; off < NL_DATA_SIZE && st == 0; off += sizeof(chunk)) {
		xb_init(&a);
		nl_put_fh(&a, fh);
		xb_u64(&a, off);
		xb_u32(&a, sizeof(chunk));
		xb_u32(&a, 2); /* FILE_SYNC */
		xb_opaque(&a, chunk, sizeof(chunk));
		st = nl_call(r, NL_WRITE, &a, &rep);
		xb_free(&a);
		if (st == 0) {
			st = (int)xd_u32(&rep.body);
			raw_reply_free(&rep);
		}
	}
	return st;
}

/* The tree of nfsload.h under t->root; creates what is missing when setup is set. */
static int nl_tree_open(struct nl_run *r, bool setup, struct nl_tree *t)
{
	char name[16];
	struct nl_fh fh;
	int st;

	if (!setup) {
		if (nl_lookup(r, &t->root, "nfsload", &t->top) || nl_lookup(r, &t->top, "data", &t->data) ||
		    nl_lookup(r, &t->top, "dir1000", &t->dir))
			return nl_die("nfsload/{data,dir1000} not found: run nfsload --setup first");
		return 0;
	}
	if (nl_ensure(r, &t->root, "nfsload", true, &t->top) || nl_ensure(r, &t->top, "data", false, &t->data) ||
	    nl_fill_data(r, &t->data))
		return nl_die("setup of nfsload/data failed");
	st = nl_lookup(r, &t->top, "dir1000", &t->dir);
	if (st == 0)
		return 0; /* laid out before */
	if (nl_ensure(r, &t->top, "dir1000", true, &t->dir))
		return nl_die("setup of nfsload/dir1000 failed");
	for (unsigned i = 0; i < NL_DIR_ENTRIES; i++) {
		snprintf(name, sizeof(name), "e%04u", i);
		if (nl_ensure(r, &t->dir, name, false, &fh))
			return nl_die("setup of nfsload/dir1000/e* failed");
	}
	return 0;
}

/* ---- the pipelined run ---------------------------------------------------- */

static int nl_send_step(struct nl_run *r, enum nl_op op, const struct nl_tree *t, struct nl_slot *s)
{
	struct xb b;
	enum nl_proc proc;
	struct xb args;
	int rc;

	xb_init(&args);
	proc = nl_encode_step(op, t, s, &args);
	xb_init(&b);
	s->xid = r->next_xid++;
	xb_call_header(&b, s->xid, RAW_NFS_PROG, 3, proc, 0, 0);
	xb_raw(&b, args.p, args.len);
	rc = raw_send_record(&r->conn, b.p, b.len);
	xb_free(&b);
	xb_free(&args);
	s->busy = rc == 0;
	r->rpcs++;
	return rc;
}

static struct nl_slot *nl_slot_of(struct nl_slot *slots, unsigned depth, uint32_t xid)
{
	for (unsigned i = 0; i < depth; i++)
		if (slots[i].busy && slots[i].xid == xid)
			return &slots[i];
	return NULL;
}

static void nl_slot_start(struct nl_slot *s, uint64_t unit)
{
	memset(s, 0, sizeof(*s));
	s->unit = unit;
}

/* Runs units [0, n) of op with depth calls in flight; 0 or -1. */
static int nl_run_units(struct nl_run *r, enum nl_op op, const struct nl_tree *t, uint64_t n,
			unsigned depth)
{
	struct nl_slot slots[NL_MAX_DEPTH];
	struct raw_reply rep;
	struct nl_slot *s;
	uint64_t started = 0, done = 0;
	enum nl_step_result res;
	char err[160];

	for (unsigned i = 0; i < depth && started < n; i++) {
		nl_slot_start(&slots[i], started++);
		if (nl_send_step(r, op, t, &slots[i]))
			return nl_die("send failed");
	}
	while (done < n) {
		if (raw_recv_reply(&r->conn, &rep, NL_REPLY_TIMEOUT_MS) != RAW_RECV_OK)
			return nl_die("no reply, or a reply that does not parse");
		s = nl_slot_of(slots, depth, rep.xid);
		if (!s || rep.reply_stat != 0 || rep.accept_stat != 0) {
			raw_reply_free(&rep);
			return nl_die("a reply with an unknown XID, or a call not accepted");
		}
		res = nl_decode_step(op, s, &rep.body, err, sizeof(err));
		raw_reply_free(&rep);
		if (res == NL_UNIT_FAILED)
			return nl_die(err);
		s->busy = false;
		if (res == NL_UNIT_DONE) {
			done++;
			if (started >= n)
				continue;
			nl_slot_start(s, started++);
		}
		if (nl_send_step(r, op, t, s))
			return nl_die("send failed");
	}
	return 0;
}

static double nl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int nl_run_report(struct nl_run *r, enum nl_op op, const struct nl_tree *t, uint64_t n,
			 unsigned depth)
{
	uint64_t rpcs0 = r->rpcs;
	double t0 = nl_now(), dt;
	int rc = nl_run_units(r, op, t, n, depth);

	dt = nl_now() - t0;
	printf("nfsload: op %s units %llu rpcs %llu depth %u seconds %.3f units/s %.0f errors %d\n",
	       nl_op_name(op), (unsigned long long)n, (unsigned long long)(r->rpcs - rpcs0), depth, dt,
	       dt > 0 ? (double)n / dt : 0.0, rc ? 1 : 0);
	fflush(stdout);
	return rc;
}

/* ---- command line ---------------------------------------------------------- */

struct nl_args {
	unsigned port, mount_port, depth;
	unsigned long long units;
	const char *export;
	int op;
	bool setup, check;
};

static int nl_usage(void)
{
	fprintf(stderr, "usage: nfsload -p PORT [-m MOUNT_PORT] -e EXPORT (--setup | --check |"
			" -o OP [-n UNITS] [-d DEPTH])\nOP:");
	for (int i = 0; i < NL_OP_COUNT; i++)
		fprintf(stderr, " %s", nl_op_name((enum nl_op)i));
	fprintf(stderr, "\n");
	return 2;
}

static int nl_parse_args(int argc, char **argv, struct nl_args *a)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' }, { "mount-port", required_argument, NULL, 'm' },
		{ "export", required_argument, NULL, 'e' }, { "op", required_argument, NULL, 'o' },
		{ "units", required_argument, NULL, 'n' }, { "depth", required_argument, NULL, 'd' },
		{ "setup", no_argument, NULL, 'S' }, { "check", no_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*a = (struct nl_args){ .depth = 16, .units = 1000, .op = -1 };
	while ((c = getopt_long(argc, argv, "p:m:e:o:n:d:", opts, NULL)) != -1) {
		switch (c) {
		case 'p': a->port = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'm': a->mount_port = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'e': a->export = optarg; break;
		case 'o': a->op = nl_op_parse(optarg); if (a->op < 0) return -1; break;
		case 'n': a->units = strtoull(optarg, NULL, 10); break;
		case 'd': a->depth = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'S': a->setup = true; break;
		case 'C': a->check = true; break;
		default: return -1;
		}
	}
	if (!a->port || a->port > 65535 || a->mount_port > 65535 || !a->export || optind != argc ||
	    !a->depth || a->depth > NL_MAX_DEPTH || (a->op < 0 && !a->setup && !a->check))
		return -1;
	if (!a->mount_port)
		a->mount_port = a->port;
	return 0;
}

/* Connects (from a reserved port when root, as the `secure` default wants). */
static int nl_connect(struct raw_conn *c, unsigned port)
{
	if (geteuid() == 0 && raw_connect_reserved(c, (uint16_t)port) == 0)
		return 0;
	return raw_connect(c, (uint16_t)port);
}

/* MNT on the MOUNT port (the NFS connection itself when they are the same),
 * then the tree over the NFS connection. */
static int nl_open(struct nl_run *r, const struct nl_args *a, struct nl_tree *t)
{
	struct raw_conn m = { .fd = -1 };
	struct raw_conn *mc = &r->conn;
	int st;

	memset(t, 0, sizeof(*t));
	t->tag = (uint32_t)getpid() ^ (uint32_t)time(NULL);
	if (nl_connect(&r->conn, a->port) != 0)
		return nl_die("cannot connect to the NFS port");
	if (a->mount_port != a->port) {
		if (nl_connect(&m, a->mount_port) != 0)
			return nl_die("cannot connect to the MOUNT port");
		mc = &m;
	}
	st = raw_mnt(mc, r->next_xid++, a->export, t->root.data, &t->root.len);
	raw_close(&m);
	if (st != 0)
		return nl_die("MNT of the export failed");
	return nl_tree_open(r, a->setup, t);
}

int main(int argc, char **argv)
{
	struct nl_args a;
	struct nl_run r = { .conn = { .fd = -1 } };
	struct nl_tree t;
	int rc = 0;

	if (nl_parse_args(argc, argv, &a) != 0)
		return nl_usage();
	r.next_xid = (uint32_t)getpid() << 12;
	if (nl_open(&r, &a, &t) != 0) {
		raw_close(&r.conn);
		return 1;
	}
	if (a.check) {
		for (int op = 0; op < NL_OP_COUNT && rc == 0; op++)
			rc = nl_run_report(&r, (enum nl_op)op, &t, op == NL_OP_READDIRPLUS ? 3 : 40, 4);
	} else if (a.op >= 0) {
		rc = nl_run_report(&r, (enum nl_op)a.op, &t, a.units, a.depth);
	}
	raw_close(&r.conn);
	return rc ? 1 : 0;
}
