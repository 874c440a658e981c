/*
 * rpc_test_prog.h - a test RPC program (TPROG, versions 2 and 3) whose
 * handlers exercise every path of the RPC layer. Header-only:
 * each test executable includes it once.
 */
#ifndef RNFSD_TEST_RPC_PROG_H
#define RNFSD_TEST_RPC_PROG_H

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "rpc/rpc.h"
#include "rpc_test_msg.h"

static unsigned tprog_count;          /* TPROC_COUNT* executions (atomic) */
static unsigned tprog_drop_once = 1;  /* TPROC_COUNT_DROP drops while set */
static pthread_mutex_t tprog_gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tprog_gate_cond = PTHREAD_COND_INITIALIZER;
static bool tprog_gate_open;
static unsigned tprog_blocked;        /* TPROC_BLOCK calls waiting at the gate */

static inline void tprog_gate_set(bool open)
{
	pthread_mutex_lock(&tprog_gate_lock);
	tprog_gate_open = open;
	pthread_cond_broadcast(&tprog_gate_cond);
	pthread_mutex_unlock(&tprog_gate_lock);
}

static inline unsigned tprog_blocked_get(void)
{
	pthread_mutex_lock(&tprog_gate_lock);
	unsigned n = tprog_blocked;
	pthread_mutex_unlock(&tprog_gate_lock);
	return n;
}

static inline unsigned tprog_count_get(void)
{
	return __atomic_load_n(&tprog_count, __ATOMIC_SEQ_CST);
}

static enum rpc_proc_status tp_null(struct rpc_call *c)
{
	(void)c;
	return RPC_PROC_OK;
}

static enum rpc_proc_status tp_echo(struct rpc_call *c)
{
	const uint8_t *p;
	uint32_t len;
	if (!xdr_dec_opaque(&c->args, 1u << 20, &p, &len))
		return RPC_PROC_GARBAGE;
	xdr_enc_opaque(&c->res, p, len);
	return RPC_PROC_OK;
}

static enum rpc_proc_status tp_count(struct rpc_call *c)
{
	xdr_enc_u32(&c->res, __atomic_add_fetch(&tprog_count, 1, __ATOMIC_SEQ_CST));
	return RPC_PROC_OK;
}

static enum rpc_proc_status tp_garbage(struct rpc_call *c)
{
	xdr_enc_u32(&c->res, 0xdeadbeef); /* must not reach the wire */
	return RPC_PROC_GARBAGE;
}

static enum rpc_proc_status tp_syserr(struct rpc_call *c)
{
	xdr_enc_u32(&c->res, 0xdeadbeef);
	return RPC_PROC_SYSERR;
}

static enum rpc_proc_status tp_drop(struct rpc_call *c)
{
	(void)c;
	return RPC_PROC_DROP;
}

static enum rpc_proc_status tp_slow(struct rpc_call *c)
{
	uint32_t ms;
	if (!xdr_dec_u32(&c->args, &ms) || ms > 10000)
		return RPC_PROC_GARBAGE;
	usleep(ms * 1000);
	xdr_enc_u32(&c->res, ms);
	return RPC_PROC_OK;
}

static inline uint8_t tprog_pattern(uint32_t seed, uint32_t i)
{
	return (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

static enum rpc_proc_status tp_bulk(struct rpc_call *c)
{
	uint32_t n, seed;
	if (!xdr_dec_u32(&c->args, &n) || !xdr_dec_u32(&c->args, &seed))
		return RPC_PROC_GARBAGE;
	uint8_t *buf = rpc_payload_buf(c, n);
	if (!buf)
		return RPC_PROC_SYSERR;
	for (uint32_t i = 0; i < n; i++)
		buf[i] = tprog_pattern(seed, i);
	rpc_enc_ddp(c, buf, n);
	xdr_enc_u32(&c->res, 0xfeedface); /* an item after the payload */
	return RPC_PROC_OK;
}

static enum rpc_proc_status tp_big(struct rpc_call *c)
{
	uint32_t n;
	if (!xdr_dec_u32(&c->args, &n) || n > (1u << 24))
		return RPC_PROC_GARBAGE;
	uint8_t *p = xdr_enc_reserve(&c->res, n);
	if (p)
		memset(p, 0x5a, n);
	return RPC_PROC_OK;
}

static enum rpc_proc_status tp_block(struct rpc_call *c)
{
	pthread_mutex_lock(&tprog_gate_lock);
	tprog_blocked++;
	while (!tprog_gate_open)
		pthread_cond_wait(&tprog_gate_cond, &tprog_gate_lock);
	tprog_blocked--;
	pthread_mutex_unlock(&tprog_gate_lock);
	return tp_count(c);
}

static enum rpc_proc_status tp_count_big(struct rpc_call *c)
{
	tp_count(c);
	uint8_t *p = xdr_enc_reserve(&c->res, 2000);
	if (p)
		memset(p, 0x33, 2000);
	return RPC_PROC_OK;
}

static enum rpc_proc_status tp_count_drop(struct rpc_call *c)
{
	if (__atomic_exchange_n(&tprog_drop_once, 0, __ATOMIC_SEQ_CST))
		return RPC_PROC_DROP;
	return tp_count(c);
}

static enum rpc_proc_status tp_fails(struct rpc_call *c)
{
	c->proc_failed = true;
	xdr_enc_u32(&c->res, 70); /* e.g. NFS3ERR_STALE */
	return RPC_PROC_OK;
}

static const struct rpc_proc tprog_procs[TPROC_N] = {
	[TPROC_NULL] = {"NULL", tp_null, false},
	[TPROC_ECHO] = {"ECHO", tp_echo, false},
	[TPROC_COUNT] = {"COUNT", tp_count, true},
	[TPROC_GARBAGE] = {"GARBAGE", tp_garbage, false},
	[TPROC_SYSERR] = {"SYSERR", tp_syserr, false},
	[TPROC_DROP] = {"DROP", tp_drop, false},
	[TPROC_HOLE] = {"HOLE", NULL, false},
	[TPROC_SLOW] = {"SLOW", tp_slow, false},
	[TPROC_BULK] = {"BULK", tp_bulk, false},
	[TPROC_BIG] = {"BIG", tp_big, false},
	[TPROC_BLOCK] = {"BLOCK", tp_block, true},
	[TPROC_COUNT_BIG] = {"COUNT_BIG", tp_count_big, true},
	[TPROC_COUNT_DROP] = {"COUNT_DROP", tp_count_drop, true},
	[TPROC_FAILS] = {"FAILS", tp_fails, false},
};

static const struct rpc_version tprog_versions[] = {
	{2, TPROC_N, tprog_procs},
	{3, TPROC_N, tprog_procs},
};

static const struct rpc_program tprog = {
	.prog = TPROG,
	.name = "rnfsd-test",
	.nversions = 2,
	.versions = tprog_versions,
};

#endif
