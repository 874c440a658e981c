/*
 * rpc_test_harness.h - drive the RPC layer without a network:
 * a fake transport whose send_reply() flattens the reply (header bytes plus
 * ddp_out payloads, as TCP would send them) into a buffer, a real event loop
 * on its own thread and the real worker pool. Header-only, included once.
 */
#ifndef RNFSD_TEST_RPC_HARNESS_H
#define RNFSD_TEST_RPC_HARNESS_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/workers.h"
#include "rpc/rpc.h"
#include "tests/unit/rpc_test_msg.h"

struct tcall {
	struct rpc_call c;
	uint8_t msg[1 << 16];
	uint8_t reply[4096];
	uint8_t payload[1 << 16];
	/* filled by the fake send_reply */
	bool done;
	bool dropped;
	bool from_cache;
	uint8_t out[1 << 17];
	size_t out_len;
};

static pthread_mutex_t th_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t th_cond = PTHREAD_COND_INITIALIZER;
static struct loop *th_loop;
static pthread_t th_loop_thread;

static inline void th_send_reply(struct rpc_call *c)
{
	struct tcall *t = c->priv;
	size_t pos = 0, out = 0;

	if (!c->drop) {
		for (unsigned i = 0; i < c->n_ddp_out; i++) {
			const struct rpc_ddp_out *o = &c->ddp_out[i];
			memcpy(t->out + out, c->reply_buf + pos, o->offset - pos);
			out += o->offset - pos;
			pos = o->offset;
			memcpy(t->out + out, o->data, o->len);
			out += o->len;
			memset(t->out + out, 0, XDR_PAD(o->len));
			out += XDR_PAD(o->len);
		}
		memcpy(t->out + out, c->reply_buf + pos, xdr_enc_len(&c->res) - pos);
		out += xdr_enc_len(&c->res) - pos;
	}
	pthread_mutex_lock(&th_lock);
	t->out_len = out;
	t->dropped = c->drop;
	t->from_cache = c->from_cache;
	t->done = true;
	pthread_cond_broadcast(&th_cond);
	pthread_mutex_unlock(&th_lock);
}

static const struct rpc_xprt_ops th_ops = {.send_reply = th_send_reply};

static struct rpc_conn th_conn = {
	.ops = &th_ops,
	.xprt_name = "test",
	.peer_name = "test-peer:1",
};

static inline void th_set_peer(uint16_t port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&th_conn.peer;
	memset(&th_conn.peer, 0, sizeof(th_conn.peer));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	sin->sin_addr.s_addr = htonl(0x7f000001);
	th_conn.peer_len = sizeof(*sin);
}

/* Submit m as a call; does not wait. */
static inline void tcall_start(struct tcall *t, const void *msg, size_t len)
{
	memcpy(t->msg, msg, len);
	t->c.conn = &th_conn;
	t->c.msg = t->msg;
	t->c.msg_len = len;
	t->c.n_ddp_in = 0;
	t->c.reply_buf = t->reply;
	t->c.reply_cap = sizeof(t->reply);
	t->c.payload_area = t->payload;
	t->c.payload_cap = sizeof(t->payload);
	t->c.priv = t;
	t->done = false;
	t->out_len = 0;
	rpc_call_receive(&t->c);
}

/* Wait up to 5 s for t's reply (or drop). Returns false on timeout. */
static inline bool tcall_wait(struct tcall *t)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 5;
	pthread_mutex_lock(&th_lock);
	while (!t->done)
		if (pthread_cond_timedwait(&th_cond, &th_lock, &dl) == ETIMEDOUT)
			break;
	bool done = t->done;
	pthread_mutex_unlock(&th_lock);
	return done;
}

static inline bool tcall_run(struct tcall *t, const void *msg, size_t len)
{
	tcall_start(t, msg, len);
	return tcall_wait(t);
}

static inline void *th_loop_main(void *arg)
{
	loop_run(arg);
	return NULL;
}

static inline int th_setup(unsigned drc_entries)
{
	log_init(true, 0);
	th_set_peer(700);
	th_loop = loop_new();
	if (!th_loop || rpc_init(drc_entries) != 0)
		return -1;
	rpc_register_program(&tprog);
	if (workers_start(th_loop, 3) != 0)
		return -1;
	return pthread_create(&th_loop_thread, NULL, th_loop_main, th_loop) == 0 ? 0 : -1;
}

static inline void th_teardown(void)
{
	loop_break(th_loop);
	pthread_join(th_loop_thread, NULL);
	workers_stop();
	loop_free(th_loop);
	rpc_release();
}

/* Accepted reply header check: xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier, accept_stat. */
static inline bool treply_accepted(const struct tcall *t, uint32_t xid, uint32_t accept_stat)
{
	return t->out_len >= 24 && tget_u32(t->out, 0) == xid && tget_u32(t->out, 4) == 1 &&
	       tget_u32(t->out, 8) == 0 && tget_u32(t->out, 12) == 0 && tget_u32(t->out, 16) == 0 &&
	       tget_u32(t->out, 20) == accept_stat;
}

#endif
