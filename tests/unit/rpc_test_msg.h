/*
 * rpc_test_msg.h - helpers shared by the rpc and tcp unit tests:
 * build RPC call messages byte by byte (independently of the code under
 * test, with plain big-endian stores), a test program with known procedures,
 * and reply parsing helpers.
 */
#ifndef RNFSD_TEST_RPC_MSG_H
#define RNFSD_TEST_RPC_MSG_H

#include <stdint.h>
#include <string.h>
#include <endian.h>

#define TPROG 0x20000099u /* test program: versions 2 and 3 */
enum {
	TPROC_NULL = 0,
	TPROC_ECHO = 1,    /* opaque<> in, the same opaque<> out */
	TPROC_COUNT = 2,   /* non-idempotent: increments a counter, returns its new value */
	TPROC_GARBAGE = 3, /* always RPC_PROC_GARBAGE */
	TPROC_SYSERR = 4,  /* always RPC_PROC_SYSERR */
	TPROC_DROP = 5,    /* always RPC_PROC_DROP */
	TPROC_HOLE = 6,    /* in the table, no handler: PROC_UNAVAIL */
	TPROC_SLOW = 7,    /* u32 milliseconds in: sleeps, returns them */
	TPROC_BULK = 8,    /* u32 n, u32 seed in: n pattern bytes via rpc_enc_ddp */
	TPROC_BIG = 9,     /* u32 n in: n bytes inline (overflows a small reply buffer) */
	TPROC_BLOCK = 10,  /* non-idempotent: waits until the test opens a gate */
	TPROC_COUNT_BIG = 11, /* non-idempotent, 2000-byte reply: not cacheable */
	TPROC_COUNT_DROP = 12, /* non-idempotent, first call drops, later ones count */
	TPROC_FAILS = 13,  /* success at the RPC level, proc_failed set (like an NFS3ERR) */
	TPROC_STEPS = 14,  /* u32 a, u32 b in: decode/execute/encode steps; a+b, 1 out */
	TPROC_COUNT_IF = 15, /* u32 mode in: counts; 0: not through the DRC (cache_wanted),
	                        1: cached, 2: the handler says forget (drc_forget) */
	TPROC_N = 16,
};

struct tmsg {
	uint8_t b[1 << 16];
	size_t n;
};

static inline void tmsg_u32(struct tmsg *m, uint32_t v)
{
	uint32_t be = htobe32(v);
	memcpy(m->b + m->n, &be, 4);
	m->n += 4;
}

static inline void tmsg_bytes(struct tmsg *m, const void *p, size_t len)
{
	if (len)
		memcpy(m->b + m->n, p, len);
	m->n += len;
	while (m->n & 3)
		m->b[m->n++] = 0;
}

static inline void tmsg_opaque(struct tmsg *m, const void *p, uint32_t len)
{
	tmsg_u32(m, len);
	tmsg_bytes(m, p, len);
}

/* AUTH_SYS credential body (RFC 5531 appendix A). */
static inline size_t tmsg_authsys(uint8_t *out, const char *machine, uint32_t uid, uint32_t gid,
				  unsigned ngids)
{
	struct tmsg m;
	m.n = 0;
	tmsg_u32(&m, 0x12345678); /* stamp */
	tmsg_opaque(&m, machine, (uint32_t)strlen(machine));
	tmsg_u32(&m, uid);
	tmsg_u32(&m, gid);
	tmsg_u32(&m, ngids);
	for (unsigned i = 0; i < ngids; i++)
		tmsg_u32(&m, 100 + i);
	memcpy(out, m.b, m.n);
	return m.n;
}

/* Call header with AUTH_NONE (or the given AUTH_SYS body), AUTH_NONE verifier. */
static inline void tmsg_call(struct tmsg *m, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
			     const uint8_t *sys_body, uint32_t sys_len)
{
	m->n = 0;
	tmsg_u32(m, xid);
	tmsg_u32(m, 0); /* CALL */
	tmsg_u32(m, 2); /* rpcvers */
	tmsg_u32(m, prog);
	tmsg_u32(m, vers);
	tmsg_u32(m, proc);
	if (sys_body) {
		tmsg_u32(m, 1);
		tmsg_opaque(m, sys_body, sys_len);
	} else {
		tmsg_u32(m, 0);
		tmsg_u32(m, 0);
	}
	tmsg_u32(m, 0); /* verf AUTH_NONE */
	tmsg_u32(m, 0);
}

static inline uint32_t tget_u32(const uint8_t *p, size_t off)
{
	uint32_t be;
	memcpy(&be, p + off, 4);
	return be32toh(be);
}

#endif
