/*
 * uring_ident.c - microbenchmark (not a test): what it costs to run one
 * file-system call as an NFS caller, three ways, on this host's kernel.
 *
 *   worker  rnfsd's path today: the receiving (loop) thread hands the call to
 *           the real worker pool (core/workers.c: mutex, condition variable,
 *           loop_async completion), the worker applies the caller's identity
 *           with the real backend/local/identity.c (setgroups, setfsgid,
 *           setfsuid, CAP_SYS_RESOURCE off), runs the system call, returns to
 *           root (local_end_call) and the loop thread gets the completion.
 *   uring   io_uring with a registered personality: a short-lived helper
 *           thread applies the caller's identity once and registers it with
 *           the ring (IORING_REGISTER_PERSONALITY); the receiving thread then
 *           submits each call with sqe->personality and waits for it
 *           (io_uring_submit_and_wait), its own credentials never changing.
 *   handoff the worker path for a root caller (no identity switch): what the
 *           hand-off alone costs.
 *   root    the plain system call as root on the receiving thread (the bound).
 *
 * Operations: openat(O_CREAT)+close, statx, renameat, unlinkat, mkdirat,
 * pwrite 4 KiB (file opened as root, as fcache.c does), fsync (after an
 * untimed 4 KiB write). Each is timed one by one with CLOCK_MONOTONIC; the
 * table gives the median per operation of each round in microseconds, and
 * the process's CPU time (user + system, all threads, io_uring's io-wq
 * workers included) per operation. The order of the paths rotates from round
 * to round.
 * It also gives the cost of a personality cache miss (registering an identity
 * from a short-lived helper thread). Before timing, it checks that the
 * personality really decides permissions:
 * an O_CREAT in a root-owned 0755 directory must fail with EACCES, and a file
 * created through each path must belong to the caller.
 *
 *   uring_ident [-n calls] [-r rounds] [-d base-dir]     (as root)
 *
 * The host is usually loaded: run it under `nice -n 19` several times and
 * compare ratios, not absolute figures (bench/README.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "backend/local/local.h"
#include "core/loop.h"
#include "core/workers.h"

enum op { OP_CREATE, OP_STATX, OP_RENAME, OP_UNLINK, OP_MKDIR, OP_PWRITE, OP_FSYNC, OP_N };
enum path { P_WORKER, P_HANDOFF, P_URING, P_ROOT, P_N };

static const char *const op_name[OP_N] = { "openat(O_CREAT)+close", "statx", "renameat", "unlinkat",
					   "mkdirat", "pwrite 4 KiB", "fsync" };
static const char *const path_name[P_N] = { "worker", "handoff", "uring", "root" };

static const struct be_cred caller = { .uid = 1000, .gid = 1000, .ngroups = 2, .groups = { 1000, 100 } };

static struct {
	int dirfd;                 /* the work directory, owned by the caller, 0755 */
	int wfd;                   /* O_RDWR file for pwrite/fsync, opened as root */
	struct io_uring ring;
	int personality;
	struct loop *loop;
	char buf[4096];
} b;

struct bench_work {
	struct work w;
	enum op op;
	int i;
	bool as_root;              /* P_HANDOFF: no identity switch */
	int res;
};

struct result {
	uint64_t med_ns;           /* median wall time of one call */
	uint64_t cpu_ns;           /* process CPU time per call */
};

static void name_of(char *out, size_t len, char kind, int i)
{
	snprintf(out, len, "%c%d", kind, i);
}

/* The system call of op number i, as whoever this thread is. 0 or -errno. */
static int op_syscall(enum op op, int i)
{
	char n1[32], n2[32];
	struct statx stx;
	int fd, r = 0;

	switch (op) {
	case OP_CREATE:
		name_of(n1, sizeof(n1), 'f', i);
		fd = openat(b.dirfd, n1, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0)
			return -errno;
		close(fd);
		return 0;
	case OP_STATX:
		name_of(n1, sizeof(n1), 'f', i);
		r = statx(b.dirfd, n1, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx);
		break;
	case OP_RENAME:
		name_of(n1, sizeof(n1), 'f', i);
		name_of(n2, sizeof(n2), 'g', i);
		r = renameat(b.dirfd, n1, b.dirfd, n2);
		break;
	case OP_UNLINK:
		name_of(n1, sizeof(n1), 'g', i);
		r = unlinkat(b.dirfd, n1, 0);
		break;
	case OP_MKDIR:
		name_of(n1, sizeof(n1), 'd', i);
		r = mkdirat(b.dirfd, n1, 0755);
		break;
	case OP_PWRITE:
		r = pwrite(b.wfd, b.buf, sizeof(b.buf), (off_t)(i % 256) * 4096) == (ssize_t)sizeof(b.buf) ? 0 : -1;
		break;
	case OP_FSYNC:
		r = fsync(b.wfd);
		break;
	default:
		return -EINVAL;
	}
	return r < 0 ? -errno : 0;
}

/* ---- worker: core/workers.c + backend/local/identity.c ---- */

static void bw_run(struct work *w)
{
	struct bench_work *bw = (struct bench_work *)w;

	bw->res = !bw->as_root && local_id_caller(&caller) ? -EPERM : op_syscall(bw->op, bw->i);
	local_end_call(NULL);
}

static void bw_done(struct work *w)
{
	(void)w;
	loop_break(b.loop);
}

static int via_worker(enum op op, int i, bool as_root)
{
	struct bench_work bw = { .w = { .run = bw_run, .done = bw_done }, .op = op, .i = i, .as_root = as_root };

	workers_submit(&bw.w);
	loop_run(b.loop); /* until bw_done */
	return bw.res;
}

/* ---- uring: the personality, registered by a helper thread ---- */

static void *register_main(void *arg)
{
	int *id = arg;

	*id = local_id_caller(&caller) ? -EPERM : io_uring_register_personality(&b.ring);
	local_end_call(NULL);
	return NULL;
}

static int register_caller(void)
{
	pthread_t t;
	int id = -1;

	if (pthread_create(&t, NULL, register_main, &id) != 0)
		return -1;
	pthread_join(t, NULL);
	return id;
}

/* Submit one prepared SQE as the caller and wait. cqe->res. */
static int uring_run(struct io_uring_sqe *sqe)
{
	struct io_uring_cqe *cqe;
	int res;

	sqe->personality = (uint16_t)b.personality;
	if (io_uring_submit_and_wait(&b.ring, 1) < 1 || io_uring_peek_cqe(&b.ring, &cqe) != 0)
		return -EIO;
	res = cqe->res;
	io_uring_cqe_seen(&b.ring, cqe);
	return res;
}

static int via_uring(enum op op, int i)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&b.ring);
	static struct statx stx;
	char n1[32], n2[32];
	int r;

	switch (op) {
	case OP_CREATE:
		name_of(n1, sizeof(n1), 'f', i);
		io_uring_prep_openat(sqe, b.dirfd, n1, O_CREAT | O_EXCL | O_WRONLY, 0644);
		r = uring_run(sqe);
		if (r >= 0)
			close(r); /* close needs no identity */
		return r < 0 ? r : 0;
	case OP_STATX:
		name_of(n1, sizeof(n1), 'f', i);
		io_uring_prep_statx(sqe, b.dirfd, n1, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx);
		break;
	case OP_RENAME:
		name_of(n1, sizeof(n1), 'f', i);
		name_of(n2, sizeof(n2), 'g', i);
		io_uring_prep_renameat(sqe, b.dirfd, n1, b.dirfd, n2, 0);
		break;
	case OP_UNLINK:
		name_of(n1, sizeof(n1), 'g', i);
		io_uring_prep_unlinkat(sqe, b.dirfd, n1, 0);
		break;
	case OP_MKDIR:
		name_of(n1, sizeof(n1), 'd', i);
		io_uring_prep_mkdirat(sqe, b.dirfd, n1, 0755);
		break;
	case OP_PWRITE:
		io_uring_prep_write(sqe, b.wfd, b.buf, sizeof(b.buf), (uint64_t)(i % 256) * 4096);
		r = uring_run(sqe);
		return r == (int)sizeof(b.buf) ? 0 : r < 0 ? r : -EIO;
	case OP_FSYNC:
		io_uring_prep_fsync(sqe, b.wfd, 0);
		break;
	default:
		return -EINVAL;
	}
	r = uring_run(sqe);
	return r < 0 ? r : 0;
}

static int via(enum path p, enum op op, int i)
{
	switch (p) {
	case P_WORKER:
	case P_HANDOFF:
		return via_worker(op, i, p == P_HANDOFF);
	case P_URING:
		return via_uring(op, i);
	default:
		return op_syscall(op, i);
	}
}

/* ---- timing ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b2)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b2;

	return x < y ? -1 : x > y;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* n calls of op through p into *res; -1 if a call failed. */
static int time_op(enum path p, enum op op, int n, uint64_t *t, struct result *res)
{
	uint64_t cpu = 0;

	for (int i = 0; i < n; i++) {
		if (op == OP_FSYNC && op_syscall(OP_PWRITE, i) != 0)
			return -1;
		uint64_t c0 = cpu_ns(), t0 = now_ns();
		int r = via(p, op, i);
		t[i] = now_ns() - t0;
		cpu += cpu_ns() - c0;
		if (r != 0) {
			fprintf(stderr, "%s %s #%d: %s\n", path_name[p], op_name[op], i, strerror(-r));
			return -1;
		}
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_u64);
	res->med_ns = t[n / 2];
	res->cpu_ns = cpu / (uint64_t)n;
	return 0;
}

/* Remove the directories mkdirat made (untimed, as root). */
static void clean_dirs(int n)
{
	char n1[32];

	for (int i = 0; i < n; i++) {
		name_of(n1, sizeof(n1), 'd', i);
		unlinkat(b.dirfd, n1, AT_REMOVEDIR);
	}
}

/* Round r: every operation through every path, the order of the paths rotated
 * by one each round (the host's load drifts). */
static int round_run(int r, int n, uint64_t *t, struct result res[P_N][OP_N])
{
	for (int k = 0; k < P_N; k++) {
		int p = (k + r) % P_N;
		for (int op = 0; op < OP_N; op++) {
			if (time_op((enum path)p, (enum op)op, n, t, &res[p][op]) != 0)
				return -1;
		}
		clean_dirs(n);
	}
	return 0;
}

static void round_print(int r, struct result res[P_N][OP_N])
{
	printf("round %d: median wall us per call | process CPU us per call\n", r);
	printf("  %-22s %7s %7s %7s %7s | %7s %7s %7s %7s | %11s\n", "operation", "worker", "handoff", "uring",
	       "root", "worker", "handoff", "uring", "root", "worker/uring");
	for (int op = 0; op < OP_N; op++) {
		printf("  %-22s", op_name[op]);
		for (int p = 0; p < P_N; p++)
			printf(" %7.2f", res[p][op].med_ns / 1e3);
		printf(" |");
		for (int p = 0; p < P_N; p++)
			printf(" %7.2f", res[p][op].cpu_ns / 1e3);
		printf(" | %11.2f\n", (double)res[P_WORKER][op].med_ns / (double)res[P_URING][op].med_ns);
	}
	fflush(stdout);
}

/* The personality decides permissions: EACCES in a root-owned 0755 directory,
 * and files made through either path belong to the caller. 0 or -1. */
static int self_check(const char *base)
{
	struct stat st;
	char dir[4200];
	int ok = 1;

	snprintf(dir, sizeof(dir), "%s/rootdir", base);
	if (mkdir(dir, 0755) != 0)
		return -1;
	int saved = b.dirfd;
	b.dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	ok &= via(P_URING, OP_CREATE, 0) == -EACCES && via(P_WORKER, OP_CREATE, 1) == -EACCES;
	close(b.dirfd);
	b.dirfd = saved;
	rmdir(dir);
	ok &= via(P_URING, OP_CREATE, 0) == 0 && fstatat(b.dirfd, "f0", &st, 0) == 0 && st.st_uid == caller.uid;
	ok &= via(P_WORKER, OP_CREATE, 1) == 0 && fstatat(b.dirfd, "f1", &st, 0) == 0 && st.st_uid == caller.uid;
	unlinkat(b.dirfd, "f0", 0);
	unlinkat(b.dirfd, "f1", 0);
	printf("self-check: personality refuses a root-owned 0755 directory, files belong to uid %u: %s\n",
	       caller.uid, ok ? "yes" : "NO");
	return ok ? 0 : -1;
}

/* A miss of the personality cache: a helper thread applies the identity and registers it
 * (then it is unregistered again). The median of n, in microseconds, or -1. */
static double miss_us(int n, uint64_t *t)
{
	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();
		int id = register_caller();
		t[i] = now_ns() - t0;
		if (id < 0 || io_uring_unregister_personality(&b.ring, id) != 0)
			return -1;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_u64);
	return t[n / 2] / 1e3;
}

static void probe_print(void)
{
	static const struct { int op; const char *name; } ops[] = {
		{ IORING_OP_OPENAT, "openat" }, { IORING_OP_STATX, "statx" }, { IORING_OP_RENAMEAT, "renameat" },
		{ IORING_OP_UNLINKAT, "unlinkat" }, { IORING_OP_MKDIRAT, "mkdirat" },
		{ IORING_OP_SYMLINKAT, "symlinkat" }, { IORING_OP_LINKAT, "linkat" },
		{ IORING_OP_WRITE, "write" }, { IORING_OP_FSYNC, "fsync" }, { IORING_OP_FALLOCATE, "fallocate" },
		{ IORING_OP_SETXATTR, "setxattr" }, { IORING_OP_GETXATTR, "getxattr" },
		{ 55, "ftruncate (55, Linux 6.9)" },
	};
	struct io_uring_probe *pr = io_uring_get_probe_ring(&b.ring);

	if (!pr)
		return;
	printf("io_uring opcodes on this kernel:");
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		printf(" %s=%s", ops[i].name, io_uring_opcode_supported(pr, ops[i].op) ? "yes" : "no");
	printf("\n");
	io_uring_free_probe(pr);
}

static int setup(const char *base, char *dir, size_t len)
{
	snprintf(dir, len, "%s/uring-ident.XXXXXX", base);
	if (!mkdtemp(dir) || chmod(dir, 0755) != 0 || chown(dir, caller.uid, caller.gid) != 0)
		return -1;
	b.dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	b.wfd = openat(b.dirfd, "w", O_CREAT | O_RDWR, 0644);
	if (b.dirfd < 0 || b.wfd < 0 || fchown(b.wfd, caller.uid, caller.gid) != 0)
		return -1;
	memset(b.buf, 'x', sizeof(b.buf));
	if (io_uring_queue_init(64, &b.ring, 0) != 0)
		return -1;
	b.personality = register_caller();
	if (b.personality < 0) {
		fprintf(stderr, "IORING_REGISTER_PERSONALITY: %s\n", strerror(-b.personality));
		return -1;
	}
	b.loop = loop_new();
	return b.loop && workers_start(b.loop, 4) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	int n = 2000, rounds = 3, c;
	const char *base = "/var/tmp";
	char dir[4096];
	static struct result res[P_N][OP_N];

	while ((c = getopt(argc, argv, "n:r:d:")) != -1) {
		if (c == 'n')
			n = atoi(optarg);
		else if (c == 'r')
			rounds = atoi(optarg);
		else if (c == 'd')
			base = optarg;
		else
			return 2;
	}
	uint64_t *t = calloc((size_t)(n > 0 ? n : 1), sizeof(*t));
	if (n < 1 || rounds < 1 || !t || setup(base, dir, sizeof(dir)) != 0) {
		fprintf(stderr, "uring_ident: setup failed (root? -n >= 1?): %s\n", strerror(errno));
		return 1;
	}
	probe_print();
	int rc = self_check(dir) == 0 ? 0 : 1;
	printf("a personality cache miss (helper thread, identity, IORING_REGISTER_PERSONALITY): %.1f us median\n",
	       miss_us(n < 500 ? n : 500, t));
	for (int r = 1; r <= rounds && rc == 0; r++) {
		rc = round_run(r, n, t, res) == 0 ? 0 : 1;
		if (rc == 0)
			round_print(r, res);
	}
	workers_stop();
	loop_free(b.loop);
	io_uring_queue_exit(&b.ring);
	close(b.wfd);
	unlinkat(b.dirfd, "w", 0);
	close(b.dirfd);
	rmdir(dir);
	free(t);
	return rc;
}
