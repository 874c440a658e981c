/*
 * nfsload.h - the NFSv3 load generator of bench/ (nfsload.c drives it,
 * nfsload_ops.c encodes each call and checks each reply).
 *
 * A "unit" is one operation as the benchmark counts it: one NULL, one
 * GETATTR, one LOOKUP, one 4 KiB READ or WRITE, one CREATE followed by the
 * REMOVE of the same name, or one whole listing of a 1,000-entry directory
 * through as many READDIRPLUS calls as the server needs. A slot runs one
 * unit at a time; the driver keeps `depth` slots busy (pipelining on one TCP
 * connection, RFC 5531 §11 record marking through tests/integration/rawrpc.c).
 */
#ifndef RNFSD_BENCH_NFSLOAD_H
#define RNFSD_BENCH_NFSLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "tests/integration/rawrpc.h"

#define NL_FH_MAX 64              /* RFC 1813 §2.5: NFS3_FHSIZE */
#define NL_IO_SIZE 4096u          /* READ/WRITE payload of a unit */
#define NL_DATA_SIZE (1u << 20)   /* the data file the I/O units cycle over */
#define NL_DIR_ENTRIES 1000u      /* entries of the READDIRPLUS directory */
#define NL_RDP_DIRCOUNT 65536u    /* READDIRPLUS3args dircount, maxcount */
#define NL_RDP_MAXCOUNT 131072u

/* RFC 1813 §3: procedure numbers used here. */
enum nl_proc {
	NL_NULL = 0, NL_GETATTR = 1, NL_LOOKUP = 3, NL_READ = 6, NL_WRITE = 7,
	NL_CREATE = 8, NL_MKDIR = 9, NL_REMOVE = 12, NL_READDIRPLUS = 17,
};

struct nl_fh {
	uint32_t len;
	uint8_t data[NL_FH_MAX];
};

/* The tree nfsload --setup lays out under the export, and its handles. */
struct nl_tree {
	struct nl_fh root;   /* the export (MNT) */
	struct nl_fh top;    /* nfsload/ */
	struct nl_fh data;   /* nfsload/data: NL_DATA_SIZE bytes */
	struct nl_fh dir;    /* nfsload/dir1000/: NL_DIR_ENTRIES empty files e0000.. */
	uint32_t tag;        /* makes CREATE names unique per run */
};

/* One operation kind as the command line names it. */
enum nl_op {
	NL_OP_NULL, NL_OP_GETATTR, NL_OP_LOOKUP, NL_OP_READ4K, NL_OP_WRITE4K,
	NL_OP_CREATE_REMOVE, NL_OP_READDIRPLUS, NL_OP_COUNT
};

/* The state of one pipeline slot: which step of which unit it is at. */
struct nl_slot {
	bool busy;
	uint32_t xid;        /* of the call in flight */
	uint64_t unit;       /* unit number (names, offsets) */
	unsigned step;       /* CREATE (0) then REMOVE (1); READDIRPLUS calls */
	uint64_t cookie;     /* READDIRPLUS: where the next call starts */
	uint8_t verf[8];     /* READDIRPLUS cookie verifier */
	unsigned entries;    /* READDIRPLUS: e* names seen so far in this unit */
};

enum nl_step_result { NL_UNIT_DONE, NL_UNIT_MORE, NL_UNIT_FAILED };

const char *nl_op_name(enum nl_op op);
/* -1 if no such name. */
int nl_op_parse(const char *name);

/* Appends the arguments of the slot's next call to b; returns its procedure. */
enum nl_proc nl_encode_step(enum nl_op op, const struct nl_tree *t, const struct nl_slot *s,
			    struct xb *b);
/* Checks the results of the slot's call (body: after accept_stat) and advances
 * the slot. On failure writes why into err. */
enum nl_step_result nl_decode_step(enum nl_op op, struct nl_slot *s, struct xd *body, char *err,
				   size_t errlen);

/* XDR pieces shared with the setup code (RFC 1813 §2.6, §3.3). */
void nl_put_fh(struct xb *b, const struct nl_fh *fh);
void nl_put_diropargs(struct xb *b, const struct nl_fh *dir, const char *name);
/* sattr3 with only the mode set. */
void nl_put_sattr_mode(struct xb *b, uint32_t mode);
bool nl_get_fh(struct xd *d, struct nl_fh *fh);
void nl_skip_post_op_attr(struct xd *d);
void nl_skip_wcc_data(struct xd *d);
/* post_op_fh3: false if the handle is absent or malformed. */
bool nl_get_post_op_fh(struct xd *d, struct nl_fh *fh);

#endif
