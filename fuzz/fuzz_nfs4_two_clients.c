/*
 * fuzz_nfs4_two_clients.c - libFuzzer target: sequences of NFSv4 COMPOUNDs
 * from two clients against one state table (issue 24), run in-process
 * through the real COMPOUND procedure (nfs4_version) and the local backend
 * on a temporary export, with no sockets.
 *
 * Input: byte 0 picks the clients' minor versions (bits 0-1: 0 both 4.1,
 * 1 both 4.0, 2 client 0 is 4.0 and client 1 4.1, 3 both 4.2). The harness
 * sets each client up (EXCHANGE_ID + CREATE_SESSION, or SETCLIENTID +
 * SETCLIENTID_CONFIRM; different owners, ports and AUTH_SYS uids 0 and
 * 1001) and then runs the records that follow, each:
 *   byte 0   flags: bit 0 the client (0/1), bit 1 prepend PUTFH of the
 *            export's root, bit 2 PUTFH of the file "f" (after bit 1's), bit 3
 *            no SEQUENCE (4.1+: the harness adds SEQUENCE on slot 0 otherwise)
 *   byte 1-2 length n (big-endian, at most 4096), then n bytes: the
 *            COMPOUND's operations, starting with their count (a u32).
 * In the operations, a 4-aligned word 'S','I','D',k becomes the stateid
 * (seqid and other, 16 bytes) the harness saw k-th (mod 16) in a reply:
 * every 4-aligned word equal to the server's boot, as a stateid's other
 * begins (nfs4_stateid.h), is taken as one. So the fuzzer can use its own
 * stateids and the other client's.
 *
 * Invariants after each record, besides "no crash, no sanitizer report"
 * (abort() on failure):
 *   - the reply is a COMPOUND4res that parses, with no more results than
 *     operations sent;
 *   - table counts are consistent: client records and sessions within their
 *     bounds, each set-up client's owners + opens within the stab's total;
 *   - one client's state is never reachable through the other's session: a
 *     record sent by one client never lowers a 4.1+ client's count of
 *     owners and opens (only that client itself, or its client record going,
 *     can; a 4.0 client's stateids act for it in anyone's hands, as in
 *     knfsd), and TEST_STATEID from the other client never finds it
 *     (nfs4_stab_test());
 * and after the input, with every client gone (nfs4_server_release()):
 * the open and lock gauges are back to zero and no descriptor leaked (the
 * backend's file cache may keep one per file of the export, no more).
 *
 * The local backend needs root (open_by_handle_at): without it every input
 * is a no-op (the replay test then checks nothing). Built as a libFuzzer
 * target with -Dfuzz=true (clang), and in every build as a replay test over
 * fuzz/corpus/nfs4_two_clients.
 */
#include <dirent.h>
#include <ftw.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/config.h"
#include "conf/exports.h"
#include "nfs/nfs.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/nfs4_setup.h"
#include "nfs/v4/state/nfs4_clients.h"
#include "nfs/v4/state/nfs4_stateid.h"
#include "nfs/v4/compound/nfs4_stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, int line) __attribute__((noreturn));
#define CHECK(x) do { if (!(x)) fail(#x, __LINE__); } while (0)

#define BUF_MAX (1u << 20)
#define REC_MAX 4096u
#define SIDS 16u

struct fclient {
	uint32_t minor;
	uint64_t clientid;
	uint8_t session[16];
	uint32_t seq;  /* slot 0's next sequenceid */
	bool up;
	unsigned port;
	uint32_t uid;
};

static struct {
	bool ready, skip;
	char top[64];
	struct rpc_conn conn;
	struct rpc_call call;
	uint8_t *req, *reply, *payload;
	struct nfs_fh root_fh, file_fh;
	struct nfs4_server *srv;       /* the service's NFSv4 state (nfs_service_nfs4()) */
	struct nfs4_server_cfg srv_cfg; /* its settings, for the fresh one of each input */
	uint32_t boot;
	struct nfs4_stateid sids[SIDS];
	uint8_t sid_owner[SIDS]; /* which client's reply showed it */
	unsigned nsids;
	long fds;
	struct fclient cl[2];
} F;

static const struct xprt_ops fz_ops = { .name = "fuzz" };
static struct xprt fz_xprt = { .ops = &fz_ops };

static long nfiles;

static int count_file(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)path, (void)ftw;
	nfiles += type == FTW_F && S_ISREG(sb->st_mode);
	return 0;
}

/* Regular files in the export now. */
static long export_files(void)
{
	char path[128];

	nfiles = 0;
	snprintf(path, sizeof(path), "%s/srv", F.top);
	if (nftw(path, count_file, 16, FTW_PHYS) != 0)
		abort();
	return nfiles;
}

/* What the process has open (before an abort on a descriptor leak). */
static void dump_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], target[256];

	while (d && (e = readdir(d))) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (e->d_name[0] != '.' && n > 0)
			fprintf(stderr, "fd %s -> %.*s\n", e->d_name, (int)n, target);
	}
	if (d)
		closedir(d);
}

static long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Run the COMPOUND in F.req[0..len) as client k; the reply is in F.call.res. */
static void run(const struct fclient *k, size_t len)
{
	struct rpc_call *c = &F.call;
	struct sockaddr_in *sin = (struct sockaddr_in *)&F.conn.peer;
	const struct rpc_proc *p = &nfs4_version.procs[NFS4PROC_COMPOUND];

	memset(c, 0, offsetof(struct rpc_call, args_scratch));
	memset(&F.conn, 0, sizeof(F.conn));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)k->port);
	sin->sin_addr.s_addr = htonl(0x7f000001);
	F.conn.peer_len = sizeof(*sin);
	F.conn.xprt_name = "fuzz";
	F.conn.xprt = &fz_xprt;
	snprintf(F.conn.peer_name, sizeof(F.conn.peer_name), "127.0.0.1:%u", k->port);
	c->conn = &F.conn;
	c->cred.flavor = RPC_AUTH_SYS;
	c->cred.uid = k->uid;
	c->cred.gid = k->uid;
	c->msg = F.req;
	c->msg_len = len;
	xdr_dec_init(&c->args, F.req, len);
	c->reply_buf = F.reply;
	c->reply_cap = BUF_MAX;
	xdr_enc_init(&c->res, F.reply, BUF_MAX);
	c->payload_area = F.payload;
	c->payload_cap = BUF_MAX;
	c->procinfo = p;
	memset(c->args_scratch, 0, p->args_size);
	memset(c->res_scratch, 0, p->res_size);
	/* As the RPC layer runs a table entry (tests/unit/test_nfs_harness.c, tc_steps()). */
	if ((!p->decode || p->decode(c, c->args_scratch)) &&
	    p->execute(c, c->args_scratch, c->res_scratch) == RPC_PROC_OK && p->encode)
		p->encode(c, c->res_scratch);
}

/* COMPOUND header (empty tag) and, 4.1+, SEQUENCE on slot 0. */
static void hdr(struct xdr_enc *e, struct fclient *k, uint32_t numops, bool sequence)
{
	xdr_enc_init(e, F.req, BUF_MAX);
	xdr_enc_u32(e, 0);
	xdr_enc_u32(e, k->minor);
	xdr_enc_u32(e, numops + (sequence ? 1 : 0));
	if (sequence) {
		xdr_enc_u32(e, OP_SEQUENCE);
		xdr_enc_fixed(e, k->session, 16);
		xdr_enc_u32(e, k->seq++);
		xdr_enc_u32(e, 0), xdr_enc_u32(e, 0), xdr_enc_u32(e, 0);
	}
}

/* The reply's status and a decoder at its first result's body (after resop, status). */
static uint32_t reply_first(struct xdr_dec *d)
{
	uint32_t st = 1, tag, n, op, rst;

	xdr_dec_init(d, F.reply, xdr_enc_len(&F.call.res));
	if (!xdr_dec_u32(d, &st) || !xdr_dec_u32(d, &tag) || !xdr_dec_inline(d, (tag + 3u) & ~3u) ||
	    !xdr_dec_u32(d, &n) || !n || !xdr_dec_u32(d, &op) || !xdr_dec_u32(d, &rst))
		return 1;
	return st;
}

static bool setup41(struct fclient *k, const char *owner)
{
	struct xdr_enc e;
	struct xdr_dec d;
	uint32_t seq;

	hdr(&e, k, 1, false);
	xdr_enc_u32(&e, OP_EXCHANGE_ID);
	xdr_enc_fixed(&e, "fuzzverf", 8);
	xdr_enc_opaque(&e, owner, (uint32_t)strlen(owner));
	xdr_enc_u32(&e, 0), xdr_enc_u32(&e, 0), xdr_enc_u32(&e, 0); /* flags, SP4_NONE, no impl id */
	run(k, xdr_enc_len(&e));
	if (reply_first(&d) != NFS4_OK || !xdr_dec_u64(&d, &k->clientid) || !xdr_dec_u32(&d, &seq))
		return false;
	hdr(&e, k, 1, false);
	xdr_enc_u32(&e, OP_CREATE_SESSION);
	xdr_enc_u64(&e, k->clientid);
	xdr_enc_u32(&e, seq);
	xdr_enc_u32(&e, 0);
	for (int ch = 0; ch < 2; ch++) {
		const uint32_t v[] = { 0, 1 << 20, 1 << 20, 4096, 32, 8, 0 };

		for (int i = 0; i < 7; i++)
			xdr_enc_u32(&e, v[i]);
	}
	xdr_enc_u32(&e, 0x40000000), xdr_enc_u32(&e, 1), xdr_enc_u32(&e, 0); /* cb_program, AUTH_NONE */
	run(k, xdr_enc_len(&e));
	const uint8_t *sid;

	if (reply_first(&d) != NFS4_OK || !(sid = xdr_dec_inline(&d, 16)))
		return false;
	memcpy(k->session, sid, 16);
	k->seq = 1;
	hdr(&e, k, 1, true);
	xdr_enc_u32(&e, OP_RECLAIM_COMPLETE);
	xdr_enc_u32(&e, 0);
	run(k, xdr_enc_len(&e));
	return true;
}

static bool setup40(struct fclient *k, const char *owner)
{
	struct xdr_enc e;
	struct xdr_dec d;
	const uint8_t *verf;

	hdr(&e, k, 1, false);
	xdr_enc_u32(&e, OP_SETCLIENTID);
	xdr_enc_fixed(&e, "fuzzverf", 8);
	xdr_enc_opaque(&e, owner, (uint32_t)strlen(owner));
	xdr_enc_u32(&e, 0x40000000);
	xdr_enc_opaque(&e, "tcp", 3);
	xdr_enc_opaque(&e, "127.0.0.1.0.1", 13); /* port 1: nobody answers callbacks */
	xdr_enc_u32(&e, 1);
	run(k, xdr_enc_len(&e));
	if (reply_first(&d) != NFS4_OK || !xdr_dec_u64(&d, &k->clientid) || !(verf = xdr_dec_inline(&d, 8)))
		return false;
	uint8_t v[8];

	memcpy(v, verf, 8);
	hdr(&e, k, 1, false);
	xdr_enc_u32(&e, OP_SETCLIENTID_CONFIRM);
	xdr_enc_u64(&e, k->clientid);
	xdr_enc_fixed(&e, v, 8);
	run(k, xdr_enc_len(&e));
	return reply_first(&d) == NFS4_OK;
}

/* Skip one result's body that the harness reads (GETFH: the handle); false at the end. */
static bool next_result(struct xdr_dec *d, uint32_t *op, uint32_t *st)
{
	return xdr_dec_u32(d, op) && xdr_dec_u32(d, st);
}

/* The export root's and "f"'s handles: PUTROOTFH, LOOKUP down the export's path, GETFH, LOOKUP f, GETFH. */
static bool find_handles(const char *export_path)
{
	struct fclient k = { .minor = 0, .port = 700 };
	char path[256], *save = NULL;
	struct xdr_enc e;
	struct xdr_dec d;
	uint32_t n = 0, tag, cnt, op, st, len;
	const uint8_t *fh;

	snprintf(path, sizeof(path), "%s", export_path);
	for (char *c = strtok_r(path, "/", &save); c; c = strtok_r(NULL, "/", &save))
		n++;
	hdr(&e, &k, n + 4, false);
	xdr_enc_u32(&e, OP_PUTROOTFH);
	snprintf(path, sizeof(path), "%s", export_path);
	for (char *c = strtok_r(path, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		xdr_enc_u32(&e, OP_LOOKUP);
		xdr_enc_opaque(&e, c, (uint32_t)strlen(c));
	}
	xdr_enc_u32(&e, OP_GETFH);
	xdr_enc_u32(&e, OP_LOOKUP);
	xdr_enc_opaque(&e, "f", 1);
	xdr_enc_u32(&e, OP_GETFH);
	run(&k, xdr_enc_len(&e));
	xdr_dec_init(&d, F.reply, xdr_enc_len(&F.call.res));
	if (!xdr_dec_u32(&d, &st) || st != NFS4_OK || !xdr_dec_u32(&d, &tag) || !xdr_dec_u32(&d, &cnt))
		return false;
	for (uint32_t i = 0; i < cnt && next_result(&d, &op, &st); i++) {
		struct nfs_fh *to = F.root_fh.len ? &F.file_fh : &F.root_fh;

		if (op != OP_GETFH)
			continue;
		if (!xdr_dec_opaque(&d, sizeof(to->data), &fh, &len))
			return false;
		memcpy(to->data, fh, len);
		to->len = len;
	}
	return F.root_fh.len && F.file_fh.len;
}

/* An invariant failed: say which, remove the temporary export (abort() runs no atexit), abort. */
static void fail(const char *what, int line)
{
	char cmd[128];

	fprintf(stderr, "invariant failed: %s (line %d)\n", what, line);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", F.top);
	if (F.top[0] && system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", F.top);
	abort();
}

static void cleanup(void)
{
	char cmd[128];

	nfs_service_shutdown();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", F.top);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", F.top);
}

/* Once: an export on a temporary directory (a file "f", a directory "d"), the NFS service on it. */
static void init_once(void)
{
	char text[256], path[128];
	struct rnfsd_config cfg;
	struct export_table tbl;
	char err[256];
	FILE *f;

	F.ready = true;
	F.skip = geteuid() != 0;
	if (F.skip) {
		fprintf(stderr, "fuzz_nfs4_two_clients: needs root (the local backend's open_by_handle_at): no-op\n");
		return;
	}
	snprintf(F.top, sizeof(F.top), "/dev/shm/fuzz_nfs4_two.XXXXXX");
	if (!mkdtemp(F.top) || chmod(F.top, 0755) < 0)
		abort();
	snprintf(path, sizeof(path), "%s/srv", F.top);
	if (mkdir(path, 0777) < 0 || chmod(path, 0777) < 0)
		abort();
	snprintf(path, sizeof(path), "%s/srv/d", F.top);
	if (mkdir(path, 0777) < 0)
		abort();
	snprintf(path, sizeof(path), "%s/srv/f", F.top);
	f = fopen(path, "w");
	if (!f || fputs("hello, two clients\n", f) < 0 || fclose(f) != 0 || chmod(path, 0666) < 0)
		abort();
	snprintf(text, sizeof(text), "%s/srv 127.0.0.1(rw,no_root_squash,insecure,sec=sys:none)\n", F.top);
	if (exports_parse(text, "fuzz", &tbl, err, sizeof(err)) < 0)
		abort();
	config_defaults(&cfg);
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s/state", F.top);
	cfg.nfsv4_grace_time = 0;
	if (nfs_service_init(&cfg, &tbl) < 0)
		abort();
	F.srv = nfs_service_nfs4(); /* the service's NFSv4 state, set up afresh per input */
	if (!F.srv)
		abort();
	F.srv_cfg = F.srv->cfg;
	atexit(cleanup);
	F.req = malloc(BUF_MAX);
	F.reply = malloc(BUF_MAX);
	F.payload = malloc(BUF_MAX);
	if (!F.req || !F.reply || !F.payload)
		abort();
	snprintf(path, sizeof(path), "%s/srv", F.top);
	if (!find_handles(path))
		abort();
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Remember every stateid-looking 16 bytes of the reply (other begins with the boot) as owner's. */
static void scan_sids(unsigned owner, bool seq)
{
	size_t len = xdr_enc_len(&F.call.res);

	/* Not SEQUENCE's result: its sessionid begins with the clientid, and so with the boot. */
	for (size_t off = seq ? 12 + 44 + 4 : 4; off + 16 <= len; off += 4) {
		struct nfs4_stateid *s = &F.sids[F.nsids % SIDS];

		if (be32(F.reply + off) != F.boot)
			continue;
		s->seqid = be32(F.reply + off - 4);
		memcpy(s->other, F.reply + off, NFS4_OTHER_SIZE);
		F.sid_owner[F.nsids % SIDS] = (uint8_t)owner;
		F.nsids++;
		off += 8;
	}
}

/* The record's operations into e, with 'S','I','D',k words replaced by remembered stateids and
 * 'C','L','I',k words by client k's clientid (8 bytes: 4.0 owners name it). */
static void put_ops(struct xdr_enc *e, const uint8_t *p, size_t n)
{
	size_t i = 0;

	for (; i + 4 <= n; i += 4) {
		if (p[i] == 'S' && p[i + 1] == 'I' && p[i + 2] == 'D' && F.nsids) {
			const struct nfs4_stateid *s = &F.sids[p[i + 3] % (F.nsids < SIDS ? F.nsids : SIDS)];

			xdr_enc_u32(e, s->seqid);
			xdr_enc_fixed(e, s->other, NFS4_OTHER_SIZE);
		} else if (p[i] == 'C' && p[i + 1] == 'L' && p[i + 2] == 'I') {
			xdr_enc_u64(e, F.cl[p[i + 3] & 1].clientid);
		} else {
			xdr_enc_fixed(e, p + i, 4);
		}
	}
	if (i < n)
		xdr_enc_fixed(e, p + i, n - i);
}

/* The reply parses as COMPOUND4res with at most numops results. */
static void check_reply(uint32_t numops)
{
	struct xdr_dec d;
	uint32_t st, tag, cnt;

	if (xdr_enc_len(&F.call.res) == 0)
		return; /* not decoded (GARBAGE_ARGS): no reply body */
	xdr_dec_init(&d, F.reply, xdr_enc_len(&F.call.res));
	CHECK(xdr_dec_u32(&d, &st) && xdr_dec_u32(&d, &tag) && tag <= NFS4_TAG_MAX);
	CHECK(xdr_dec_inline(&d, (tag + 3u) & ~3u) != NULL);
	CHECK(xdr_dec_u32(&d, &cnt));
	CHECK(cnt <= numops && cnt <= NFS4_MAX_OPS);
}

/* Owners + opens of each set-up client (0 for one that is not up). */
static void counts(unsigned out[2])
{
	for (int i = 0; i < 2; i++)
		out[i] = F.cl[i].up ? nfs4_stab_client_count(&F.srv->stab, F.cl[i].clientid) : 0;
}

/* Is client i's record still there (not destroyed or replaced)? */
static bool client_alive(int i)
{
	uint8_t owner[NFS4_OWNER_MAX];
	uint32_t len = sizeof(owner);

	return nfs4_client_owner(&F.srv->ctab, F.cl[i].clientid, owner, &len);
}

/* After a record from client `from`: the tables agree, the other client's state untouched. */
static void check_tables(unsigned from, const unsigned before[2])
{
	unsigned now[2], clients, sessions, other = from ^ 1u;
	struct nfs4_stab *stab = &F.srv->stab;

	nfs4_ctab_counts(&F.srv->ctab, &clients, &sessions);
	CHECK(clients <= NFS4_STATE_MAX_CLIENTS);
	CHECK(sessions <= clients * NFS4_STATE_MAX_SESSIONS);
	counts(now);
	pthread_mutex_lock(&stab->lock);
	CHECK(now[0] + now[1] <= stab->nstates);
	pthread_mutex_unlock(&stab->lock);
	/* RFC 8881 §8.2.2: a stateid is meaningful to its client only; nothing the other client
	 * sends removes this one's owners or opens while its client record stays. A 4.0 client's
	 * stateids are the exception: 4.0 has no session to check them against, so an operation
	 * that names no owner acts for the stateid's client, as in knfsd (nfs4_sid_client()); a
	 * 4.1+ client's never serve a 4.0 COMPOUND. */
	if (F.cl[other].up && F.cl[other].minor && client_alive((int)other))
		CHECK(now[other] >= before[other]);
	for (unsigned i = 0; i < (F.nsids < SIDS ? F.nsids : SIDS); i++) {
		unsigned owner = F.sid_owner[i];

		if (F.cl[owner ^ 1u].up && nfs4_stateid_clientid(&F.sids[i]) == F.cl[owner].clientid)
			CHECK(nfs4_stab_test(stab, F.cl[owner ^ 1u].clientid, &F.sids[i]) != NFS4_OK);
	}
}

/* One record: its length in bytes consumed, or 0 at the end of the input. */
static size_t one_record(const uint8_t *p, size_t size)
{
	uint8_t flags;
	size_t n;
	struct fclient *k;
	struct xdr_enc e;
	uint32_t numops, pre;
	unsigned before[2];
	bool seq;

	if (size < 3)
		return 0;
	flags = p[0];
	n = (size_t)p[1] << 8 | p[2];
	if (n > REC_MAX || n > size - 3 || n < 4)
		return n < 4 && n <= size - 3 ? 3 + n : 0;
	k = &F.cl[flags & 1];
	if (!k->up)
		return 3 + n;
	pre = !!(flags & 2) + !!(flags & 4);
	seq = k->minor && !(flags & 8);
	numops = be32(p + 3);
	hdr(&e, k, numops + pre, seq);
	if (flags & 2) {
		xdr_enc_u32(&e, OP_PUTFH);
		xdr_enc_opaque(&e, F.root_fh.data, F.root_fh.len);
	}
	if (flags & 4) {
		xdr_enc_u32(&e, OP_PUTFH);
		xdr_enc_opaque(&e, F.file_fh.data, F.file_fh.len);
	}
	put_ops(&e, p + 7, n - 4);
	if (e.overflow)
		return 3 + n;
	counts(before);
	run(k, xdr_enc_len(&e));
	check_reply(numops + pre + seq);
	if (getenv("FUZZ_TRACE")) {
		struct xdr_dec d;

		fprintf(stderr, "record: client %u flags %#x ops %u: status %u, counts %u %u\n", flags & 1u, flags,
			numops, reply_first(&d), before[0], before[1]);
	}
	scan_sids(flags & 1, seq);
	check_tables(flags & 1, before);
	return 3 + n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t minors[4][2] = { { 1, 1 }, { 0, 0 }, { 0, 1 }, { 2, 2 } };
	struct nfs4_stats_snap st;

	if (!F.ready)
		init_once();
	if (F.skip || size < 1)
		return 0;
	nfs4_server_release(F.srv); /* a fresh state table per input (the service's first one too) */
	if (!F.fds)
		F.fds = count_fds();
	nfs4_server_init(F.srv, &F.srv_cfg);
	F.boot = F.srv->stab.boot;
	F.nsids = 0;
	for (int i = 0; i < 2; i++) {
		char owner[32];
		struct fclient *k = &F.cl[i];

		memset(k, 0, sizeof(*k));
		k->minor = minors[data[0] & 3][i];
		k->port = 800u + (unsigned)i;
		k->uid = i ? 1001 : 0;
		snprintf(owner, sizeof(owner), "fuzz-client-%d", i);
		k->up = k->minor ? setup41(k, owner) : setup40(k, owner);
	}
	for (size_t off = 1, used; off < size && (used = one_record(data + off, size - off)); off += used)
		;
	nfs4_server_release(F.srv);
	/* Every client gone: no open or lock left counted, no descriptor left open. The stats read
	 * the service's tables under their locks: a released table's locks are destroyed, so the
	 * tables are set up again first (the next input releases them; ThreadSanitizer). */
	nfs4_server_init(F.srv, &F.srv_cfg);
	nfs4_stats_state(&st);
	CHECK(st.opens == 0 && st.locks == 0);
	/* The backend's file cache may keep one descriptor per file (fcache.c): no more. */
	if (count_fds() > F.fds + export_files())
		dump_fds();
	CHECK(count_fds() <= F.fds + export_files());
	return 0;
}
