/*
 * test_nfs_harness.h - drive NFSv3/MOUNT procedures directly, without a
 * transport: a struct rpc_call whose args decoder points at a request built
 * with the XDR encoder, whose res encoder points at a reply buffer; the
 * procedure's operation-table entry runs as the RPC layer runs it (zeroed
 * scratch, decode, execute, encode); after it, the reply (with its
 * out-of-band ddp segments put back in place) is decoded with the XDR
 * decoder. Shared by tests/unit/test_nfs_*.c.
 *
 * nfs3_proc_NAME() / mount3_proc_NAME(): one function per table entry, named
 * as the handlers were before the tables had steps, so a test reads as
 * "run GETATTR" (tc_run(t, nfs3_proc_getattr)).
 */
#ifndef TEST_NFS_HARNESS_H
#define TEST_NFS_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nfs/v3/nfs3.h"

#define TC_REQ_MAX (2u << 20)
#define TC_REPLY_MAX (1u << 20)
#define TC_PAYLOAD_MAX (1u << 20)

struct tcall {
	struct rpc_call c;     /* first: the transport ops find the tcall from it */
	struct rpc_conn conn;
	bool pipe_on;          /* offer a payload pipe (rpc_payload_pipe), as TCP does */
	int pipe[2];           /* made by tc_new; tc_run drains it into the flat reply */
	unsigned piped;        /* segments the last tc_run took from the pipe */
	struct xdr_enc req;    /* build the arguments here */
	struct xdr_dec res;    /* decode the result from here after tc_run */
	size_t reply_cap;      /* tests may shrink it */
	size_t payload_cap;    /* the same (0: no payload area at all) */
	uint8_t *reqbuf, *replybuf, *payload, *flat;
};

struct tcall *tc_new(void);
void tc_free(struct tcall *t);
/* Reset for a new call from peer addr:port with AUTH_SYS uid/gid (uid UINT32_MAX: AUTH_NONE). */
void tc_reset(struct tcall *t, const char *addr, unsigned port, uint32_t uid, uint32_t gid);
enum rpc_proc_status tc_run(struct tcall *t, enum rpc_proc_status (*handler)(struct rpc_call *));
/* What the RPC layer does with a table entry on a worker: zeroed scratch, decode, execute, encode;
 * SYSERR when the reply overflowed its buffer. */
enum rpc_proc_status tc_steps(struct rpc_call *c, const struct rpc_proc *p);

#define TC_PROCS(X)                                                                                    \
	X(nfs3, null, NFS3PROC_NULL) X(nfs3, getattr, NFS3PROC_GETATTR) X(nfs3, setattr, NFS3PROC_SETATTR) \
	X(nfs3, lookup, NFS3PROC_LOOKUP) X(nfs3, access, NFS3PROC_ACCESS) X(nfs3, readlink, NFS3PROC_READLINK) \
	X(nfs3, read, NFS3PROC_READ) X(nfs3, write, NFS3PROC_WRITE) X(nfs3, create, NFS3PROC_CREATE)          \
	X(nfs3, mkdir, NFS3PROC_MKDIR) X(nfs3, symlink, NFS3PROC_SYMLINK) X(nfs3, mknod, NFS3PROC_MKNOD)      \
	X(nfs3, remove, NFS3PROC_REMOVE) X(nfs3, rmdir, NFS3PROC_RMDIR) X(nfs3, rename, NFS3PROC_RENAME)      \
	X(nfs3, link, NFS3PROC_LINK) X(nfs3, readdir, NFS3PROC_READDIR)                                      \
	X(nfs3, readdirplus, NFS3PROC_READDIRPLUS) X(nfs3, fsstat, NFS3PROC_FSSTAT)                         \
	X(nfs3, fsinfo, NFS3PROC_FSINFO) X(nfs3, pathconf, NFS3PROC_PATHCONF) X(nfs3, commit, NFS3PROC_COMMIT) \
	X(mount3, null, MOUNTPROC3_NULL) X(mount3, mnt, MOUNTPROC3_MNT) X(mount3, dump, MOUNTPROC3_DUMP)      \
	X(mount3, umnt, MOUNTPROC3_UMNT) X(mount3, umntall, MOUNTPROC3_UMNTALL) X(mount3, export, MOUNTPROC3_EXPORT)
#define TC_PROC_DECL(prog, name, num) enum rpc_proc_status prog##_proc_##name(struct rpc_call *c);
TC_PROCS(TC_PROC_DECL)

/* request building blocks */
void tc_put_fh(struct tcall *t, const struct nfs_fh *fh);
void tc_put_name(struct tcall *t, const char *name);
void tc_put_sattr_mode(struct tcall *t, int mode); /* mode < 0: nothing set */

/* result decoding (assert on malformed replies) */
uint32_t tc_u32(struct tcall *t);
uint64_t tc_u64(struct tcall *t);
void tc_fh(struct tcall *t, struct nfs_fh *fh);
/* fattr3 into a few fields; returns false if attributes_follow was false */
struct tc_fattr {
	uint32_t type, mode, nlink, uid, gid;
	uint64_t size, fileid;
	uint32_t mtime_sec, atime_sec;
	uint32_t ctime_sec, ctime_nsec;
};
void tc_fattr(struct tcall *t, struct tc_fattr *a);
bool tc_post_op_attr(struct tcall *t, struct tc_fattr *a);
void tc_skip_wcc(struct tcall *t, bool *pre, bool *post);
const uint8_t *tc_opaque(struct tcall *t, uint32_t *len);
size_t tc_remaining(struct tcall *t);

/*
 * The fixture of the procedure tests (setup and teardown):
 * tc_fixture_dir: root or exit 77 (skip: open_by_handle_at, setfsuid); a
 *   fresh directory /var/tmp/NAME.XXXXXX, mode 0755, into top.
 * tc_fixture_start: parse exports_text, start the NFS service with NFSv4 on
 *   or off and its state directory under top; the test call in *t.
 * tc_fixture_stop: stop the service, free *t, remove top.
 * 0, or -1 with the reason on stderr.
 */
int tc_fixture_dir(const char *name, char *top, size_t cap);
int tc_fixture_start(const char *top, const char *exports_text, bool nfsv4, struct tcall **t);
void tc_fixture_stop(const char *top, struct tcall *t);

#endif
