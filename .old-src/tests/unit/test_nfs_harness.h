/*
 * test_nfs_harness.h - drive NFSv3/MOUNT handlers directly, without a
 * transport: a struct rpc_call whose args decoder points at a request built
 * with the XDR encoder, whose res encoder points at a reply buffer; after the
 * handler ran, the reply (with its out-of-band ddp segments put back in
 * place) is decoded with the XDR decoder. Shared by tests/unit/test_nfs_*.c.
 */
#ifndef TEST_NFS_HARNESS_H
#define TEST_NFS_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nfs/nfs_priv.h"

#define TC_REQ_MAX (2u << 20)
#define TC_REPLY_MAX (1u << 20)
#define TC_PAYLOAD_MAX (1u << 20)

struct tcall {
	struct rpc_call c;
	struct rpc_conn conn;
	struct xdr_enc req;    /* build the arguments here */
	struct xdr_dec res;    /* decode the result from here after tc_run */
	size_t reply_cap;      /* tests may shrink it */
	uint8_t *reqbuf, *replybuf, *payload, *flat;
};

struct tcall *tc_new(void);
void tc_free(struct tcall *t);
/* Reset for a new call from peer addr:port with AUTH_SYS uid/gid (uid UINT32_MAX: AUTH_NONE). */
void tc_reset(struct tcall *t, const char *addr, unsigned port, uint32_t uid, uint32_t gid);
enum rpc_proc_status tc_run(struct tcall *t, enum rpc_proc_status (*handler)(struct rpc_call *));

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

#endif
