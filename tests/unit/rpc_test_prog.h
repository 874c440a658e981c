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
#include "tests/unit/rpc_test_msg.h"

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

static enum rpc_proc_status tp_null(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	(void)c;
	return RPC_PROC_OK;
}

static enum rpc_proc_status tp_echo(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	const uint8_t *p;
	uint32_t len;
	if (!xdr_dec_opaque(&c->args, 1u << 20, &p, &len))
		return RPC_PROC_GARBAGE;
	xdr_enc_opaque(&c->res, p, len);
	return RPC_PROC_OK;
}

static enum rpc_proc_status tp_count(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	xdr_enc_u32(&c->res, __atomic_add_fetch(&tprog_count, 1, __ATOMIC_SEQ_CST));
	return RPC_PROC_OK;
}

static enum rpc_proc_status tp_garbage(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	xdr_enc_u32(&c->res, 0xdeadbeef); /* must not reach the wire */
	return RPC_PROC_GARBAGE;
}

static enum rpc_proc_status tp_syserr(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	xdr_enc_u32(&c->res, 0xdeadbeef);
	return RPC_PROC_SYSERR;
}

static enum rpc_proc_status tp_drop(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	(void)c;
	return RPC_PROC_DROP;
}

static enum rpc_proc_status tp_slow(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
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

static enum rpc_proc_status tp_bulk(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
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

static enum rpc_proc_status tp_big(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	uint32_t n;
	if (!xdr_dec_u32(&c->args, &n) || n > (1u << 24))
		return RPC_PROC_GARBAGE;
	uint8_t *p = xdr_enc_reserve(&c->res, n);
	if (p)
		memset(p, 0x5a, n);
	return RPC_PROC_OK;
}

static enum rpc_proc_status tp_block(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	pthread_mutex_lock(&tprog_gate_lock);
	tprog_blocked++;
	while (!tprog_gate_open)
		pthread_cond_wait(&tprog_gate_cond, &tprog_gate_lock);
	tprog_blocked--;
	pthread_mutex_unlock(&tprog_gate_lock);
	return tp_count(c, args, res);
}

static enum rpc_proc_status tp_count_big(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	tp_count(c, args, res);
	uint8_t *p = xdr_enc_reserve(&c->res, 2000);
	if (p)
		memset(p, 0x33, 2000);
	return RPC_PROC_OK;
}

static enum rpc_proc_status tp_count_drop(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	if (__atomic_exchange_n(&tprog_drop_once, 0, __ATOMIC_SEQ_CST))
		return RPC_PROC_DROP;
	return tp_count(c, args, res);
}

static enum rpc_proc_status tp_fails(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	c->proc_failed = true;
	xdr_enc_u32(&c->res, 70); /* e.g. NFS3ERR_STALE */
	return RPC_PROC_OK;
}

/* TPROC_STEPS: decode, execute and encode as three steps over the call's scratch. */
struct tp_steps_args {
	uint32_t a, b;
};
struct tp_steps_res {
	uint32_t sum;
	uint32_t args_were_zero; /* the scratch arrived zeroed */
};

static bool tp_steps_decode(struct rpc_call *c, void *args)
{
	struct tp_steps_args *a = args;
	return xdr_dec_u32(&c->args, &a->a) && xdr_dec_u32(&c->args, &a->b);
}

static enum rpc_proc_status tp_steps_execute(struct rpc_call *c, void *args, void *res)
{
	const struct tp_steps_args *a = args;
	struct tp_steps_res *r = res;
	(void)c;
	r->args_were_zero = r->sum == 0;
	r->sum = a->a + a->b;
	return RPC_PROC_OK;
}

static void tp_steps_encode(struct rpc_call *c, const void *res)
{
	const struct tp_steps_res *r = res;
	xdr_enc_u32(&c->res, r->sum);
	xdr_enc_u32(&c->res, r->args_were_zero);
}

/* TPROC_COUNT_IF: the first argument word decides (as NFSv4 COMPOUND's minor version does). */
static uint32_t tp_count_if_mode(const struct rpc_call *c)
{
	struct xdr_dec d = c->args;
	uint32_t mode = 0;

	return xdr_dec_u32(&d, &mode) ? mode : 0;
}

static bool tp_count_if_wanted(const struct rpc_call *c)
{
	return tp_count_if_mode(c) != 0;
}

static enum rpc_proc_status tp_count_if(struct rpc_call *c, void *args, void *res)
{
	c->drc_forget = tp_count_if_mode(c) == 2;
	return tp_count(c, args, res);
}

#define TP(nm, fn, cache_) {.name = nm, .execute = fn, .cache = cache_}

static const struct rpc_proc tprog_procs[TPROC_N] = {
	[TPROC_NULL] = TP("NULL", tp_null, RPC_CACHE_NONE),
	[TPROC_ECHO] = TP("ECHO", tp_echo, RPC_CACHE_NONE),
	[TPROC_COUNT] = TP("COUNT", tp_count, RPC_CACHE_DRC),
	[TPROC_GARBAGE] = TP("GARBAGE", tp_garbage, RPC_CACHE_NONE),
	[TPROC_SYSERR] = TP("SYSERR", tp_syserr, RPC_CACHE_NONE),
	[TPROC_DROP] = TP("DROP", tp_drop, RPC_CACHE_NONE),
	[TPROC_HOLE] = TP("HOLE", NULL, RPC_CACHE_NONE),
	[TPROC_SLOW] = TP("SLOW", tp_slow, RPC_CACHE_NONE),
	[TPROC_BULK] = TP("BULK", tp_bulk, RPC_CACHE_NONE),
	[TPROC_BIG] = TP("BIG", tp_big, RPC_CACHE_NONE),
	[TPROC_BLOCK] = TP("BLOCK", tp_block, RPC_CACHE_DRC),
	[TPROC_COUNT_BIG] = TP("COUNT_BIG", tp_count_big, RPC_CACHE_DRC),
	[TPROC_COUNT_DROP] = TP("COUNT_DROP", tp_count_drop, RPC_CACHE_DRC),
	[TPROC_FAILS] = TP("FAILS", tp_fails, RPC_CACHE_NONE),
	[TPROC_COUNT_IF] = {.name = "COUNT_IF", .execute = tp_count_if, .cache = RPC_CACHE_DRC,
			    .cache_wanted = tp_count_if_wanted},
	[TPROC_STEPS] = {.name = "STEPS", .decode = tp_steps_decode, .execute = tp_steps_execute,
			 .encode = tp_steps_encode, .args_size = RPC_SCRATCH_SIZE(struct tp_steps_args),
			 .res_size = RPC_SCRATCH_SIZE(struct tp_steps_res), .max_reply = RPC_REPLY_MAX(8)},
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
