/*
 * harness.h - shared code for the integration tests: each test binary starts
 * a real rnfsd on 127.0.0.1 with a private temporary directory (export tree,
 * state dir, rnfsd.conf, exports file, daemon log) and drives it with the
 * real libnfs client (high-level API for mounts and file I/O, the raw
 * rpc_nfs3_* / rpc_mount3_* API for exact status codes and wcc data) or
 * with the hand-written RPC client in rawrpc.h.
 *
 * Ownership: struct hx_env owns its temporary directory (removed by
 * hx_env_release() unless HX_KEEP=1 is set in the environment) and the
 * daemon process it started (killed on release; the child also gets
 * PR_SET_PDEATHSIG so a test killed by meson's timeout leaves no daemon).
 * Replies of hx_call() are deep copies owned by the harness and freed by
 * hx_end().
 *
 * Output: every check prints one line, "PASS: ...", "FAIL: file:line: ...",
 * or "KNOWN_FAIL: ..."; hx_end() prints "N passed, N failed" and returns the
 * exit status (0, 1, or 77 = skipped).
 */
#ifndef RNFSD_TESTS_HARNESS_H
#define RNFSD_TESTS_HARNESS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

#define HX_SKIP 77

/* ---- checks ---------------------------------------------------------- */

extern unsigned hx_passed, hx_failed, hx_known_failed;

void hx_begin(const char *test_name, int argc, char **argv);
int hx_end(void);
void hx_skip(const char *why) __attribute__((noreturn));
void hx_require_root(void);
void hx_section(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hx_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

bool hx_check(bool ok, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
bool hx_check_u64(uint64_t got, uint64_t exp, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
bool hx_check_nfs(int got, int exp, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
bool hx_check_nfs2(int got, int exp1, int exp2, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void hx_known_fail(bool ok, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* CHECK(cond, "what is checked", ...): a PASS or FAIL line; returns cond. */
/* (The condition is evaluated before the message's arguments, so these may show its side effects.) */
#define CHECK(cond, ...) ({ bool hx_ok_ = !!(cond); hx_check(hx_ok_, __FILE__, __LINE__, __VA_ARGS__); })
/* CHECK_EQ(got, expected, "what", ...): integers, both printed on failure. */
#define CHECK_EQ(got, exp, ...) ({                                                       \
	uint64_t hx_got_ = (uint64_t)(got), hx_exp_ = (uint64_t)(exp);                   \
	hx_check_u64(hx_got_, hx_exp_, __FILE__, __LINE__, __VA_ARGS__);                  \
})
/* CHECK_NFS(status, NFS3ERR_x, "what"): nfsstat3 values, printed by name. */
#define CHECK_NFS(got, exp, ...) ({                                                      \
	int hx_got_ = (int)(got);                                                          \
	hx_check_nfs(hx_got_, (int)(exp), __FILE__, __LINE__, __VA_ARGS__);               \
})
/* Either of two statuses RFC 1813 allows. */
#define CHECK_NFS2(got, e1, e2, ...) ({                                                  \
	int hx_got_ = (int)(got);                                                          \
	hx_check_nfs2(hx_got_, (int)(e1), (int)(e2), __FILE__, __LINE__, __VA_ARGS__);   \
})
/* A check known to fail because of a daemon bug: printed, not counted as a failure. */
#define KNOWN_FAIL(cond, ...) ({ bool hx_ok_ = !!(cond); hx_known_fail(hx_ok_, __FILE__, __LINE__, __VA_ARGS__); })

const char *hx_nfsstat_name(int status);
const char *hx_mntstat_name(int status);

/* ---- environment and daemon ------------------------------------------ */

struct hx_env {
	char exe[PATH_MAX];          /* the rnfsd binary under test */
	char dir[512];               /* private temporary root */
	char export_dir[PATH_MAX];   /* dir/export, the default export */
	char state_dir[PATH_MAX];    /* dir/state */
	char conf_path[PATH_MAX];    /* dir/rnfsd.conf */
	char exports_path[PATH_MAX]; /* dir/exports */
	char log_path[PATH_MAX];     /* dir/rnfsd.log: daemon stdout+stderr */
	char stats_socket[108];      /* dir/rnfsd.sock, or under sock_dir: one per daemon (rnfsd locks it) */
	char sock_dir[64];           /* /tmp/rnfsd-hx-XXXXXX when dir is too long or on CephFS, else "" */
	uint16_t port;               /* TCP port for NFS (and MOUNT) */
	uint16_t mount_port;         /* = port for rnfsd */
	bool external;               /* HX_EXTERNAL_SERVER: a server not started by us */
	unsigned threads;
	bool drop_sys_admin;         /* start rnfsd without CAP_SYS_ADMIN (as the systemd unit) */
	const char *rnfsd_extra;     /* more [rnfsd] lines for rnfsd.conf ("key = value\n"), or NULL */
	pid_t pid;                   /* running daemon, or 0 */
	bool started;                /* has served once: its port is kept from now on */
};

/*
 * Make the temporary tree, pick a free port, write rnfsd.conf and an exports
 * file exporting export_dir rw,no_root_squash,insecure to 127.0.0.1.
 * Exits the test (FAIL) if the tree cannot be made.
 *
 * For checking the tests themselves against another server, set
 * HX_EXTERNAL_SERVER=NFSPORT:MOUNTPORT:EXPORTDIR: no daemon is started, the
 * export directory is that one (its content is deleted), and tests that
 * need their own exports configuration skip (hx_require_own_daemon()).
 */
void hx_env_init(struct hx_env *e);
void hx_env_release(struct hx_env *e);
void hx_require_own_daemon(const struct hx_env *e);

int hx_write_config(const struct hx_env *e);
/* Replace the first from in rnfsd.conf by to (the same length, or shorter: the rest of from stays):
 * 0, or -1 (no file, or from not in it). For a restart with one setting changed. */
int hx_conf_swap(const struct hx_env *e, const char *from, const char *to);
/*
 * HX_CEPH=CEPH.CONF (with RNFSD_CEPH_DIR; tests/ceph/with-cluster.sh --fuse
 * sets both, and TMPDIR to a ceph-fuse mount showing CephFS's directory of
 * the same path): rnfsd.conf gets a [ceph] section and the default export
 * fs=ceph, so the files a test makes locally are the ones rnfsd serves
 * from CephFS. The conf path, or NULL when not set.
 */
const char *hx_ceph_conf(void);
/* Append to rnfsd.conf (a later section's keys win), e.g. "[nfsv4]\nenable = no\n". 0 or -1. */
int hx_append_config(const struct hx_env *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Replace the exports file (text as exports(5)). */
int hx_write_exports(const struct hx_env *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A path below e->dir (fmt relative to it), in a static rotating buffer. */
const char *hx_path(const struct hx_env *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A path below e->export_dir, same buffers. */
const char *hx_xpath(const struct hx_env *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Start rnfsd -f -c conf, wait until the port accepts and its listener is the
 * daemon's own socket (/proc; 10 s). A first start whose port someone else
 * holds is retried on another port. 0 or -1 (FAIL printed, log shown).
 */
int hx_daemon_start(struct hx_env *e);
/*
 * Start rnfsd -f -c conf where start-up should fail: its exit status, or -1 if
 * it died from a signal or was still running after timeout_s (then killed).
 */
int hx_daemon_run_to_exit(struct hx_env *e, double timeout_s);
/* SIGTERM, wait up to 10 s (then SIGKILL). Checks a clean exit (status 0). */
int hx_daemon_stop(struct hx_env *e);
bool hx_daemon_alive(struct hx_env *e);
int hx_daemon_signal(struct hx_env *e, int sig);
void hx_daemon_log_tail(const struct hx_env *e, unsigned lines);
/* Count occurrences of a substring in the daemon log. */
unsigned hx_log_count(const struct hx_env *e, const char *needle);
/* The UDP port the daemon's log says it listens on (NLM, MOUNT, rpcbind), or 0. */
uint16_t hx_udp_port(const struct hx_env *e);

/* Free TCP port on 127.0.0.1 (bind to port 0 and read it back). */
uint16_t hx_free_port(void);
/* Try to connect to 127.0.0.1:port once. */
bool hx_port_open(uint16_t port);

/* Local file helpers on the exported tree. */
int hx_write_file(const char *path, const void *data, size_t len, mode_t mode);
int hx_rm_rf(const char *path);

/* Deterministic PRNG (xorshift64*) for sizes and data. */
uint64_t hx_rand(uint64_t *state);
void hx_fill(uint64_t *state, void *buf, size_t len);

/* ---- libnfs high-level ------------------------------------------------- */

/*
 * nfs://127.0.0.1<export>?nfsport=P&mountport=P[&uid=U&gid=G]: no rpcbind.
 * uid/gid < 0 keep libnfs's default (the caller's ids). NULL on failure
 * (error printed, not counted: the caller checks).
 */
extern int hx_mount_autoreconnect; /* for hx_mount(); default 0. libnfs 4.0 ignores changes after mount */
extern int hx_mount_version;       /* for hx_mount(): NFS_V3 (default) or NFS_V4 (nfs_set_version) */
struct nfs_context *hx_mount(const struct hx_env *e, const char *export_path, int uid, int gid,
			     char *err, size_t errlen);
void hx_umount(struct nfs_context *nfs);

/* ---- libnfs raw API, synchronous ------------------------------------- */

/* A raw rpc_context connected straight to e->port for prog/vers (libnfs pings NULL). */
struct rpc_context *hx_rpc_connect(const struct hx_env *e, int prog, int vers, int uid, int gid);
void hx_rpc_close(struct rpc_context *rpc);

struct hx_call;
struct hx_call *hx_call_new(zdrproc_t res_proc, void *res, size_t res_size, const char *what);
void hx_call_cb(struct rpc_context *rpc, int status, void *data, void *private_data);
/* Drive the rpc until the reply arrives (within 30 s, or HX_CALL_WAIT_S seconds). Returns RPC_STATUS_*;
 * res holds a deep copy. */
int hx_call_wait(struct rpc_context *rpc, struct hx_call *c, int start_rc);
const char *hx_call_error(void); /* text of the last failed hx_call */

/*
 * HX_CALL(rpc, rpc_nfs3_getattr_async, &args, zdr_GETATTR3res, &res)
 * Returns RPC_STATUS_SUCCESS (0) when a reply was decoded into res.
 */
#define HX_ZPROC(z) ((zdrproc_t)(void (*)(void))(z))
#define HX_CALL(rpc, fn, argp, zproc, resp) ({                                        \
	struct hx_call *hx_c_ = hx_call_new(HX_ZPROC(zproc), (resp), sizeof(*(resp)), #fn); \
	hx_call_wait((rpc), hx_c_, fn((rpc), hx_call_cb, (argp), hx_c_));             \
})
/* For calls without arguments (NULL, DUMP, UMNTALL, EXPORT); resp may be a dummy int. */
#define HX_CALL0(rpc, fn, zproc, resp) ({                                             \
	struct hx_call *hx_c_ = hx_call_new(HX_ZPROC(zproc), (resp), sizeof(*(resp)), #fn); \
	hx_call_wait((rpc), hx_c_, fn((rpc), hx_call_cb, hx_c_));                     \
})

/* A file handle as a value. */
struct hx_fh {
	uint32_t len;
	char data[NFS3_FHSIZE];
};

void hx_fh_set(struct hx_fh *fh, const nfs_fh3 *src);
nfs_fh3 hx_fh3(struct hx_fh *fh); /* view for arguments; valid while fh lives */

/* MOUNT MNT over rpc (a MOUNT v3 context); returns mountstat3 or -1 on RPC failure. */
int hx_mnt(struct rpc_context *mnt_rpc, const char *path, struct hx_fh *fh);

/*
 * MNT path (uid/gid for the NFS connection, < 0: libnfs default) and connect
 * an NFS v3 context. Prints FAIL and returns -1 when either step fails.
 */
int hx_open_export(const struct hx_env *e, const char *path, int uid, int gid,
		   struct rpc_context **nfs, struct hx_fh *root);

/* Small NFSv3 wrappers (rpc is an NFS v3 context). Return nfsstat3, or -1 on RPC failure. */
int hx3_getattr(struct rpc_context *rpc, struct hx_fh *fh, fattr3 *attr);
int hx3_lookup(struct rpc_context *rpc, struct hx_fh *dir, const char *name, struct hx_fh *out, fattr3 *attr);
int hx3_create(struct rpc_context *rpc, struct hx_fh *dir, const char *name, uint32_t mode, struct hx_fh *out);
int hx3_mkdir(struct rpc_context *rpc, struct hx_fh *dir, const char *name, uint32_t mode, struct hx_fh *out);
int hx3_remove(struct rpc_context *rpc, struct hx_fh *dir, const char *name);
int hx3_rmdir(struct rpc_context *rpc, struct hx_fh *dir, const char *name);
int hx3_rename(struct rpc_context *rpc, struct hx_fh *from_dir, const char *from, struct hx_fh *to_dir, const char *to);
int hx3_write(struct rpc_context *rpc, struct hx_fh *fh, uint64_t off, const void *data, uint32_t len,
	      int stable, WRITE3res *res);
int hx3_read(struct rpc_context *rpc, struct hx_fh *fh, uint64_t off, uint32_t count, READ3res *res);
int hx3_access(struct rpc_context *rpc, struct hx_fh *fh, uint32_t want, uint32_t *granted);

/* ---- rnfsctl ----------------------------------------------------------- */

/*
 * Run $RNFSCTL (meson sets it) -s e->stats_socket ARGS... (args ends with
 * NULL; the socket waited for, at most 5 s), as uid as_uid (< 0: as we are; else a forked child drops to it with
 * setgid/setuid before exec). Its stdout and stderr go to out (NUL-terminated,
 * truncated to outlen). Its exit status, or -1 (no $RNFSCTL, fork failed, killed).
 */
int hx_rnfsctl(const struct hx_env *e, int as_uid, char *out, size_t outlen, const char *const *args);
/* Calls answered on the receiving thread so far (rnfsctl stats), or -1; *paused: the slow-call
 * guard's pauses so far (a loaded host may pause it, which sends calls to the workers). */
long hx_inline_calls(const struct hx_env *e, long *paused);

/* ---- misc ------------------------------------------------------------- */

double hx_now(void); /* monotonic seconds */

#endif
